"""Agreement with hanabi-learning-environment on identical games (its deals replayed in cfrkit).

Skipped only when hanabi-learning-environment is not installed
(``CMAKE_POLICY_VERSION_MINIMUM=3.5 pip install hanabi-learning-environment``).
"""
import os
import sys

import numpy as np
import pytest

pyhanabi = pytest.importorskip("hanabi_learning_environment.pyhanabi")
rl_env = pytest.importorskip("hanabi_learning_environment.rl_env")

from cfrkit._kernels import hanabi_engine as E  # noqa: E402
from cfrkit.games.hanabi import HanabiEnv, preset  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from hle_mirror import PRESET_HLE, mirror_random_game  # noqa: E402

CASES = [(name, players) for name in ["full", "full-minimal", "small", "very-small"] for players in (2, 3, 4, 5)]


@pytest.mark.parametrize("name,players", CASES)
def test_legal_moves_encodings_and_scores_agree(name, players):
    params = dict(PRESET_HLE[name], players=players)
    steps = 0
    for seed in range(6):
        for careful in (False, True):
            for game, hs, es in mirror_random_game(pyhanabi, E, params, 100 * seed + players, careful):
                if hs.is_terminal():
                    assert es.is_terminal() and hs.score() == es.score()
                    break
                assert not es.is_terminal()
                assert es.current_player() == hs.cur_player()
                assert sorted(game.get_move_uid(m) for m in hs.legal_moves()) == es.legal_moves()
                assert es.information_tokens == hs.information_tokens()
                assert es.life_tokens == hs.life_tokens() and es.deck_size == hs.deck_size()
                enc = pyhanabi.ObservationEncoder(game)
                for obs in range(players):
                    ref = np.array(enc.encode(hs.observation(obs)), dtype=np.uint8)
                    assert np.array_equal(ref, es.encode(obs)), (seed, obs, np.flatnonzero(ref != es.encode(obs)))
                steps += 1
    assert steps > 50


@pytest.mark.parametrize("players", [2, 4])
def test_seer_observations_agree(players):
    params = dict(PRESET_HLE["full"], players=players, observation_type=2)
    for seed in range(3):
        for game, hs, es in mirror_random_game(pyhanabi, E, params, seed, careful=True):
            if hs.is_terminal():
                break
            enc = pyhanabi.ObservationEncoder(game)
            for obs in range(players):
                assert np.array_equal(np.array(enc.encode(hs.observation(obs)), dtype=np.uint8), es.encode(obs))


@pytest.mark.parametrize("name", ["Hanabi-Full", "Hanabi-Full-Minimal", "Hanabi-Small", "Hanabi-Very-Small"])
def test_presets_have_hle_shapes(name):
    for players in (2, 3, 4, 5):
        ref = rl_env.make(name, num_players=players)
        ours = HanabiEnv(preset(name, players))
        assert ours.vectorized_observation_shape() == list(ref.vectorized_observation_shape())
        assert ours.num_moves() == ref.num_moves()


@pytest.mark.parametrize("name,players", [("full", 2), ("full", 4), ("small", 3)])
def test_rl_env_observation_dicts_agree(name, players):
    """HanabiEnv.observation() gives the same dict as HLE's rl_env on identical states."""
    params = dict(PRESET_HLE[name], players=players)
    ref_env = rl_env.HanabiEnv(config=params)
    ours = HanabiEnv(preset(name, players))
    checked = 0
    for game, hs, es in mirror_random_game(pyhanabi, E, params, 3, careful=True):
        if hs.is_terminal():
            break
        ref_env.state = hs
        ours.state = es
        for p in range(players):
            ref = ref_env._extract_dict_from_backend(p, hs.observation(p))
            mine = ours.observation(p)
            for key in ("current_player", "current_player_offset", "life_tokens", "information_tokens", "num_players",
                        "deck_size", "fireworks", "legal_moves", "legal_moves_as_int", "observed_hands",
                        "discard_pile", "card_knowledge"):
                assert mine[key] == ref[key], (key, mine[key], ref[key])
            assert np.array_equal(np.asarray(ref["vectorized"], dtype=np.uint8), mine["vectorized"])
            checked += 1
    assert checked > 50


@pytest.mark.parametrize("players", [2, 3, 5])
def test_random_start_player_agrees_with_hle(players):
    """HLE's random_start_player: hands dealt in seat order, then a uniformly drawn first player."""
    params = dict(PRESET_HLE["full"], players=players, random_start_player=True)
    starts = set()
    for seed in range(8):
        first = True
        for game, hs, es in mirror_random_game(pyhanabi, E, params, seed, careful=True):
            if hs.is_terminal():
                assert es.is_terminal() and hs.score() == es.score()
                break
            if first:
                starts.add(hs.cur_player())
                assert [len(h) for h in hs.player_hands()] == [game.hand_size()] * players
                first = False
            assert es.current_player() == hs.cur_player()
            assert sorted(game.get_move_uid(m) for m in hs.legal_moves()) == es.legal_moves()
            enc = pyhanabi.ObservationEncoder(game)
            obs = hs.cur_player()
            assert np.array_equal(np.array(enc.encode(hs.observation(obs)), dtype=np.uint8), es.encode(obs))
    assert len(starts) > 1   # HLE did start with different players


def test_random_start_player_in_the_environments():
    from cfrkit.games.base import GameError
    from cfrkit.games.hanabi import HanabiVectorEnv
    from cfrkit.games import load

    env = HanabiEnv({"players": 3, "random_start_player": True}, seed=4)
    counts = np.zeros(3)
    for _ in range(600):
        obs = env.reset()
        counts[obs["current_player"]] += 1
        assert all(len(env.state.hand(p)) == 5 for p in range(3))
    # uniform: each count within 5 standard deviations of 200
    assert np.all(np.abs(counts - 200) < 5 * np.sqrt(600 * (1 / 3) * (2 / 3))) and counts.min() > 0
    assert {HanabiEnv({"players": 3}, seed=s).reset()["current_player"] for s in range(20)} == {0}
    from cfrkit.games.hanabi import HanabiAECEnv

    aec = HanabiAECEnv({"players": 3, "random_start_player": True}, seed=2)
    firsts = set()
    for s in range(15):
        aec.reset(seed=s)
        firsts.add(aec.agent_selection)
    assert firsts == {"player_0", "player_1", "player_2"}
    venv = HanabiVectorEnv({"players": 4, "random_start_player": True}, num_envs=256, seed=1)
    _, _, cur = venv.reset()
    assert set(np.asarray(cur).tolist()) == {0, 1, 2, 3}
    with pytest.raises(GameError, match="random_start_player"):
        load("hanabi(random_start_player=True)")
    with pytest.raises(GameError, match="True or False"):
        preset("full", 2, random_start_player="yes")
    # self-play with a random start: scores stay in range and the run is reproducible
    from cfrkit.agents.hanabi import named_agent, rule_table
    cfg = preset("full", 3, random_start_player=True, scoring="played_cards").engine_config()
    rules = np.tile(named_agent("Piers").rules, (3, 1))
    a = E.play_games(cfg, rule_table(), rules, 200, seed=3)
    b = E.play_games(cfg, rule_table(), rules, 200, seed=3)
    assert np.array_equal(a[0], b[0]) and 14 < a[0].mean() < 21
    turns = a[2][:, 0]
    assert turns.max() - turns.min() < 0.05 * turns.mean()   # every seat starts about as often
