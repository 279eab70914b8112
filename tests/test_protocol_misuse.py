"""Protocol misuse gives the documented errors in every game and environment (issue 17, items 12, 14, 16).

Before the central checks in ``cfrkit.games.base`` these raised IndexError / OverflowError, answered
with nonsense (``chance_outcomes()`` at decision nodes), truncated float actions, or crashed the
process (Hanabi's batched kernel before ``reset()``).
"""
import numpy as np
import pytest

from cfrkit.games import GameError, IllegalActionError, list_games, load
from cfrkit.games.consistency import ConsistencyError, check_game, check_protocol_misuse
from cfrkit.games.kuhn import KuhnPoker


def first_decision(game):
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    return state


@pytest.mark.parametrize("name", sorted(list_games()))
def test_out_of_range_players_and_bad_actions(name):
    game = load(name)
    state = first_decision(game)
    for call in (lambda: state.legal_actions(99), lambda: state.information_state_string(99),
                 lambda: state.observation_string(99), lambda: state.legal_actions(-5)):
        with pytest.raises(GameError):
            call()
    if not state.is_simultaneous_node():
        legal = state.legal_actions()
        with pytest.raises(IllegalActionError):
            state.clone().apply_action(2 ** 40)
        with pytest.raises(IllegalActionError):
            state.clone().apply_action(float(legal[0]))  # not truncated to a legal id
        with pytest.raises(IllegalActionError):
            state.clone().apply_action(True)
        with pytest.raises(GameError, match="not at a chance node"):
            state.chance_outcomes()
        state.clone().apply_action(np.int64(legal[0]))  # numpy integers are integers


@pytest.mark.parametrize("name", ["kuhn", "leduc", "leduc_nolimit", "kuhn(players=3)"])
def test_chance_outcomes_only_at_chance_nodes(name):
    state = first_decision(load(name))
    with pytest.raises(GameError, match="decision node of player"):
        state.chance_outcomes()
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    with pytest.raises(GameError, match="terminal"):
        state.chance_outcomes()


def test_tensors_check_the_player():
    state = first_decision(load("leduc"))
    with pytest.raises(GameError, match="out of range"):
        state.information_state_tensor(99)  # was an IndexError from numpy
    assert state.information_state_tensor(np.int32(0)).shape == state.information_state_tensor(0).shape


def test_consistency_suite_catches_unchecked_overrides():
    class LaxKuhn(KuhnPoker):
        def new_initial_state(self):
            state = super().new_initial_state()
            state.legal_actions = lambda player=None: [0, 1]  # answers for any player
            return state

    with pytest.raises(ConsistencyError, match=r"legal_actions\(2\) was accepted"):
        check_game(LaxKuhn(), num_playthroughs=2)
    check_protocol_misuse(load("kuhn"), load("kuhn").new_initial_state())


# ------------------------------------------------------------------ Hanabi environments
def test_hanabi_env_rejects_huge_float_and_out_of_range_inputs():
    from cfrkit.games.hanabi import HanabiAECEnv, HanabiEnv

    env = HanabiEnv(seed=1)
    with pytest.raises(GameError, match="reset"):
        env.step(0)
    obs = env.reset()
    legal = obs["player_observations"][0]["legal_moves_as_int"]
    for bad in (2 ** 40, -1, float(legal[0]), True, "0"):
        with pytest.raises(IllegalActionError):
            env.step(bad)
    with pytest.raises(GameError):
        env.observation(99)
    env.step(np.int64(legal[0]))
    aec = HanabiAECEnv(seed=1)
    with pytest.raises(GameError, match="reset"):
        aec.observe("player_0")
    aec.reset()
    with pytest.raises(IllegalActionError):
        aec.step(2 ** 40)
    with pytest.raises(IllegalActionError):
        aec.step(float(aec.state.legal_moves()[0]))


def test_hanabi_vector_env_before_reset_is_an_error_not_a_crash():
    from cfrkit.games.hanabi import HanabiVectorEnv

    venv = HanabiVectorEnv(num_envs=4)
    with pytest.raises(GameError, match="reset"):
        venv.random_steps(10)  # was a segfault
    with pytest.raises(GameError, match="reset"):
        venv.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(GameError, match="reset"):
        venv.state(0)
    venv.reset()
    steps, finished, _ = venv.random_steps(10)
    assert steps >= 10
    with pytest.raises(GameError):
        venv.state(99)
    with pytest.raises(GameError):
        venv.random_steps(-1)


def test_hanabi_vector_env_masks_and_dones_are_bool():
    from cfrkit.games.hanabi import HanabiVectorEnv

    venv = HanabiVectorEnv(num_envs=8, seed=3)
    obs, mask, cur = venv.reset()
    assert mask.dtype == np.bool_ and mask.shape == (8, venv.engine_config.num_moves)
    rng = np.random.default_rng(0)
    seen_done = False
    for _ in range(400):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, mask, cur, rewards, dones, finals = venv.step(acts)
        assert dones.dtype == np.bool_ and mask.dtype == np.bool_
        # x[dones] selects the finished games (a uint8 array would index rows 0 and 1)
        assert np.array_equal(finals[dones], finals[finals >= 0])
        seen_done |= bool(dones.any())
    assert seen_done


def test_hanabi_vector_env_actions_are_checked_before_the_kernel():
    from cfrkit.games.hanabi import HanabiVectorEnv

    venv = HanabiVectorEnv(num_envs=4, seed=2)
    _, mask, _ = venv.reset()
    legal = np.array([np.flatnonzero(m)[0] for m in mask])
    for bad in (legal + 2 ** 32,  # would wrap onto the legal ids in a C int
                legal.astype(np.float64), legal[:3], legal.reshape(1, 4), np.array(["a"] * 4), -legal - 1):
        with pytest.raises(IllegalActionError):
            venv.step(bad)
    venv.step(legal)  # the batch was not disturbed by the rejected calls
    for bad_args in (dict(num_envs=0), dict(num_envs=2.5), dict(seed=-1)):
        with pytest.raises(GameError):
            HanabiVectorEnv(**bad_args)


def test_hanabi_kernel_inputs_are_validated():
    from cfrkit._kernels import hanabi_engine as eng

    config = eng.EngineConfig()
    with pytest.raises(TypeError):
        eng.EngineState(None)
    with pytest.raises(TypeError):
        eng.BatchEngine(None, 4)
    state = eng.EngineState(config, 1)
    state.deal_random()
    for call in (lambda: state.hand(99), lambda: state.knowledge(-1), lambda: eng.playable_probabilities(state, 7),
                 lambda: state.encode_into(9, np.zeros(config.encoding_length, np.uint8)),
                 lambda: state.encode_into(0, np.zeros(3, np.uint8)),
                 lambda: state.set_state([[0], [1]], current_player=7),
                 lambda: state.set_state([[0], [1]], lives=99),
                 lambda: state.set_state([[0], [1]], deck=[100] * config.num_cards),
                 lambda: state.set_state([[0], [1]], fireworks=[0]),
                 lambda: eng.RuleTable([0, 1], [0], [0.0])):
        with pytest.raises(ValueError):
            call()
    assert not state.is_legal(2 ** 20)
    with pytest.raises(OverflowError):
        state.is_legal(2 ** 40)  # a C int argument: Cython refuses, no wrap-around
    with pytest.raises(ValueError):
        eng.actions_on_states([None], eng.RuleTable([0], [0], [0.0]), [0])


def test_histories_do_not_truncate_float_actions():
    game = load("kuhn")
    with pytest.raises(IllegalActionError, match="integer"):
        game.state_from_history([0, 1.7])
    assert game.state_from_history([0, np.int64(1)]).history() == [0, 1]
