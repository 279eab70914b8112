"""SymmToM rules on hand-built situations, observation layout, batched/single agreement, errors."""
import collections

import numpy as np
import pytest

from cfrkit.games.base import GameError
from cfrkit.games.symmtom import (
    DOWN, LEFT, RIGHT, STAY, UP, BatchedSymmToM, Script, Start, SymmToMConfig, SymmToMEnv, resolve_moves,
    sample_start,
)
from cfrkit.games.symmtom.core import observation_vector


def make_env(positions, bases, first, n=None, w=6, c=None, **kw):
    n = n or len(positions)
    c = c or max(m.bit_length() for m in first)
    env = SymmToMEnv(SymmToMConfig(agents=n, width=w, pieces=c, tiebreak="first", **kw), seed=0)
    env.reset(start=Start(positions, bases, first))
    return env


FAR_BASES = [(5, 5), (5, 4), (5, 3)]


def test_hearing_range_is_chebyshev_one():
    # agent 1 diagonal to agent 0 (hears), agent 2 two cells away (does not)
    env = make_env([(2, 2), (3, 3), (2, 4)], FAR_BASES, [0b001, 0b010, 0b100])
    _, rewards, _, info = env.step([(STAY, 0), (STAY, 1), (STAY, 2)])
    # 0 <-> 1 exchange pieces: each hears one new piece (+1) and tells one (+1); 1 <-> 2 also adjacent
    # (3,3)-(2,4) distance 1: 1 hears 2's piece and tells 2 its piece; 0 and 2 are 2 apart.
    assert rewards == [2, 4, 2]
    assert env.knowledge == [0b011, 0b111, 0b110]
    assert info["outcome"].hearing_reward == [1, 2, 1]


def test_unknown_piece_is_silence():
    env = make_env([(2, 2), (2, 3)], FAR_BASES[:2], [0b01, 0b10])
    _, rewards, _, info = env.step([(STAY, 1), (STAY, 1)])   # agent 0 does not know piece 1
    assert info["outcome"].spoken == [-1, 1]
    assert rewards == [1, 1]
    assert env.knowledge == [0b11, 0b10]


def test_listener_gets_one_per_speaker_of_same_piece():
    env = make_env([(2, 2), (2, 3), (2, 1)], FAR_BASES, [0b001, 0b010, 0b100], c=3)
    # 1 and 2 are out of each other's range; agent 2 learned piece 1 earlier
    env.knowledge = [0b001, 0b010, 0b110]
    _, rewards, _, _ = env.step([(STAY, 0), (STAY, 1), (STAY, 1)])
    # 0 hears piece 1 from both 1 and 2: +2; 1 and 2 each +1 for telling 0; both hear 0's piece 0: +1 each,
    # and 0 gets +1 per listener who learned piece 0 (1 and 2): +2
    assert rewards == [4, 2, 2]
    assert env.knowledge == [0b011, 0b011, 0b111]


def test_wall_cancels_move():
    env = make_env([(0, 0), (5, 5)], [(3, 3), (3, 4)], [0b1, 0b10])
    env.step([(UP, 0), (RIGHT, 1)])
    assert env.positions == [(0, 0), (5, 5)]
    assert env.last_moves == [STAY, STAY]


def test_collisions_and_swaps():
    coin_first = lambda a, b: True
    # two movers aiming at one cell: the coin cancels the lower index
    pos, moves = resolve_moves(6, [(2, 1), (2, 3)], [RIGHT, LEFT], coin_first)
    assert pos == [(2, 1), (2, 2)] and moves == [STAY, LEFT]
    pos, moves = resolve_moves(6, [(2, 1), (2, 3)], [RIGHT, LEFT], lambda a, b: False)
    assert pos == [(2, 2), (2, 3)] and moves == [RIGHT, STAY]
    # moving into a staying agent is cancelled
    pos, moves = resolve_moves(6, [(2, 1), (2, 2)], [RIGHT, STAY], coin_first)
    assert pos == [(2, 1), (2, 2)]
    # swaps are allowed
    pos, moves = resolve_moves(6, [(2, 1), (2, 2)], [RIGHT, LEFT], coin_first)
    assert pos == [(2, 2), (2, 1)] and moves == [RIGHT, LEFT]
    # cascade: 0 follows 1, 1 runs into staying 2 -> 1 cancelled, then 0 cancelled
    pos, moves = resolve_moves(6, [(2, 0), (2, 1), (2, 2)], [RIGHT, RIGHT, STAY], coin_first)
    assert pos == [(2, 0), (2, 1), (2, 2)] and moves == [STAY, STAY, STAY]
    # a following agent may enter a cell being vacated
    pos, moves = resolve_moves(6, [(2, 0), (2, 1)], [RIGHT, RIGHT], coin_first)
    assert pos == [(2, 1), (2, 2)]


def test_random_tiebreak_is_fair():
    env = SymmToMEnv(SymmToMConfig(agents=2, width=6, pieces=2), seed=3)
    cancelled = collections.Counter()
    for _ in range(2000):
        env.reset(start=Start([(2, 1), (2, 3)], [(5, 5), (5, 4)], [1, 2]))
        env.step([(RIGHT, 0), (LEFT, 1)])
        cancelled[env.positions[1] == (2, 3)] += 1
    assert abs(cancelled[True] - 1000) < 4 * np.sqrt(500)


def test_recharge_and_forgetting():
    # agent 0 knows everything and steps on its base
    env = make_env([(2, 2), (4, 4)], [(2, 3), (0, 0)], [0b01, 0b10])
    env.knowledge = [0b11, 0b10]
    _, rewards, _, info = env.step([(RIGHT, 1), (STAY, 1)])
    assert rewards[0] == 2 * 1 and info["outcome"].recharged == [True, False]
    assert env.knowledge[0] == 0b01                 # back to first-hand only
    # staying on the base without knowing everything: no reward, counted as unsuccessful
    _, rewards, _, info = env.step([(STAY, 0), (STAY, 1)])
    assert rewards == [0, 0] and info["outcome"].failed_base == [True, False]


def test_knowledge_updates_apply_at_end_of_step():
    # agent 0 hears its last missing piece while stepping on its base: no recharge this step
    env = make_env([(2, 2), (2, 4)], [(2, 3), (0, 0)], [0b01, 0b10])
    _, rewards, _, info = env.step([(RIGHT, 0), (STAY, 1)])
    assert info["outcome"].recharged == [False, False]
    assert rewards == [2, 2]
    assert env.knowledge[0] == 0b11
    _, rewards, _, info = env.step([(STAY, 0), (STAY, 1)])
    assert info["outcome"].recharged[0] and rewards[0] == 2
    # the piece heard this step cannot be said in the same step (speech uses start-of-step knowledge)
    env = make_env([(2, 2), (2, 3), (2, 4)], FAR_BASES, [0b001, 0b010, 0b100])
    _, _, _, info = env.step([(STAY, 2), (STAY, 2), (STAY, 2)])
    assert info["outcome"].spoken == [-1, -1, 2]


def test_recharge_reward_is_c_times_n_minus_one():
    env = make_env([(2, 2), (4, 4), (0, 5)], [(2, 3), (0, 0), (5, 0)], [0b000011, 0b001100, 0b110000])
    env.knowledge[0] = 0b111111
    _, rewards, _, _ = env.step([(RIGHT, 0), (STAY, 2), (STAY, 4)])
    assert rewards[0] == 6 * 2


def test_start_distribution_is_balanced():
    cfg = SymmToMConfig(agents=3, width=6, pieces=7)
    rng = np.random.default_rng(0)
    extra = collections.Counter()
    for _ in range(600):
        s = sample_start(cfg, rng)
        s.validate(cfg)
        counts = [bin(m).count("1") for m in s.first_hand]
        assert sorted(counts) == [2, 2, 3]
        extra[counts.index(3)] += 1
    assert all(abs(extra[a] - 200) < 60 for a in range(3))


def test_scripts_fixed_immobile_path():
    env = make_env([(2, 2), (4, 4), (0, 0)], FAR_BASES, [0b001, 0b010, 0b100])
    env.set_script(0, Script.path([RIGHT, RIGHT, DOWN], [0, 0, 0]))
    env.set_script(1, Script.immobile(1))
    env.set_script(2, Script.fixed(DOWN, None))
    for _ in range(4):
        env.step([(UP, 0)] * 3)                      # ignored for scripted agents
    assert env.positions == [(3, 4), (4, 4), (4, 0)]
    assert env.last_spoken == [-1, 1, -1]
    env.set_script(0, None)
    env.step([(UP, 0), (STAY, 0), (STAY, 0)])
    assert env.positions[0] == (2, 4)


def test_observation_layout():
    cfg = SymmToMConfig(agents=3, width=6, pieces=2)
    assert cfg.observation_size == (2 * 3 - 1) * 2 + 6 * 3 + 2
    env = SymmToMEnv(cfg, seed=0)
    env.reset(start=Start([(0, 0), (1, 1), (5, 3)], [(2, 0), (0, 5), (5, 5)], [0b01, 0b10, 0b00]))
    env.set_script(1, Script.immobile(1))
    obs, _, _, _ = env.step([(RIGHT, 0), (STAY, 1), (UP, 0)])
    o = obs[0]
    s = 1 / 5
    expected = np.concatenate([
        [1, 0],                                   # own first-hand
        [0, 1], [0, 0], [-1, 0],                  # realized moves: self, agent 1, agent 2
        [1 * s, 0 * s], [4 * s, 2 * s],           # others relative to self (self now at (0,1))
        [0, 1], [0, 0],                           # others' first-hand
        [2 * s, -1 * s], [-1 * s, 4 * s], [1 * s, 2 * s],   # bases relative to owners
        [0, 1], [0, 0],                           # heard: agent 1 said piece 1 (in range), agent 2 silent
        [0, 0, 0, 1],                             # walls: right, left, down, up
    ]).astype(np.float32)
    np.testing.assert_allclose(o, expected, atol=1e-6)
    hidden = SymmToMConfig(agents=3, width=6, pieces=2, hide_first_hand=True)
    oh = observation_vector(hidden, 0, env.positions, env.bases, env.first_hand, env.knowledge, env.last_moves, env.last_spoken)
    assert oh.shape == o.shape and not oh[12:16].any() and np.array_equal(np.delete(oh, range(12, 16)), np.delete(o, range(12, 16)))
    oracle = SymmToMConfig(agents=3, width=6, pieces=2, oracle=True)
    oo = observation_vector(oracle, 0, env.positions, env.bases, env.first_hand, env.knowledge, env.last_moves, env.last_spoken)
    assert oo.shape[0] == cfg.observation_size + 3 * 2
    np.testing.assert_array_equal(oo[:2], [1, 1])           # own knowledge: heard piece 1


@pytest.mark.parametrize("n,w,c,oracle,hide", [(3, 6, 3, True, False), (4, 6, 7, False, True), (2, 4, 1, True, True)])
def test_batched_matches_single(n, w, c, oracle, hide):
    cfg = SymmToMConfig(agents=n, width=w, pieces=c, tiebreak="first", oracle=oracle, hide_first_hand=hide)
    B = 24
    rng = np.random.default_rng(5)
    bat = BatchedSymmToM(cfg, B, seed=1)
    bat.reset()
    envs = []
    for e in range(B):
        start = bat.start(e)
        env = SymmToMEnv(cfg)
        env.reset(start=start)
        envs.append(env)
    for _ in range(cfg.episode_length):
        moves = rng.integers(0, 5, (B, n))
        pieces = rng.integers(0, c, (B, n))
        rewards = bat.step(moves, pieces)
        obs = bat.observations()
        for e in range(B):
            o, r, _, _ = envs[e].step(list(zip(moves[e], pieces[e])))
            assert list(rewards[e]) == r
            np.testing.assert_allclose(np.stack(o), obs[e], atol=1e-6)
    assert bat.done


def test_seeded_determinism():
    def rollout(seed):
        env = SymmToMEnv(agents=3, width=6, pieces=3, seed=seed)
        env.reset()
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(30):
            _, r, _, _ = env.step([(int(rng.integers(5)), int(rng.integers(3))) for _ in range(3)])
            out.append((tuple(env.positions), tuple(r)))
        return out
    assert rollout(4) == rollout(4) and rollout(4) != rollout(5)
    a = BatchedSymmToM(SymmToMConfig(), 16, seed=2)
    b = BatchedSymmToM(SymmToMConfig(), 16, seed=2)
    a.reset(), b.reset()
    m = np.ones((16, 3), int)
    np.testing.assert_array_equal(a.step(m, m), b.step(m, m))
    np.testing.assert_array_equal(a.rows, b.rows)


@pytest.mark.parametrize("params,match", [
    (dict(agents=1), "at least 2 agents"),
    (dict(width=3), "2h\\+1 < w"),
    (dict(pieces=0), "at least 1 information piece"),
    (dict(hearing=-1), "hearing range"),
    (dict(steps=-2), "steps must be"),
    (dict(tiebreak="coin"), "tiebreak"),
    (dict(agents=2.5), "must be an integer"),
    (dict(agents=5, width=2, hearing=0), "do not fit"),
])
def test_bad_parameters(params, match):
    with pytest.raises(GameError, match=match):
        SymmToMConfig(**params)


def test_bad_actions_and_starts():
    env = SymmToMEnv(agents=2, width=4, pieces=2, seed=0)
    with pytest.raises(GameError, match="reset"):
        env.step([0, 0])
    env.reset()
    with pytest.raises(GameError, match="outside"):
        env.step([10, 0])
    with pytest.raises(GameError, match="need 2 actions"):
        env.step([0])
    with pytest.raises(GameError, match="distinct"):
        env.reset(start=Start([(0, 0), (0, 0)], [(1, 1), (2, 2)], [1, 2]))
    with pytest.raises(GameError, match="first-hand to two agents"):
        env.reset(start=Start([(0, 0), (0, 1)], [(1, 1), (2, 2)], [1, 1]))
    with pytest.raises(GameError, match="exactly one agent"):
        env.reset(start=Start([(0, 0), (0, 1)], [(1, 1), (2, 2)], [1, 0]))
    with pytest.raises(GameError, match="shape"):
        bat = BatchedSymmToM(SymmToMConfig(), 4)
        bat.reset()
        bat.step(np.zeros((3, 3), int), np.zeros((3, 3), int))


def test_batched_start_round_trips_the_layouts():
    """``BatchedSymmToM.start(b)`` gives back episode b's layout: a batch reset from those starts holds the
    same cells, bases and first hands; bad calls are one-line errors."""
    cfg = SymmToMConfig(agents=3, width=5, pieces=7)
    bat = BatchedSymmToM(cfg, 9, seed=3)
    with pytest.raises(GameError, match="reset"):
        bat.start(0)
    bat.reset()
    copy = BatchedSymmToM(cfg, 9, seed=99)
    copy.reset(starts=[bat.start(b) for b in range(9)])
    for name in ("rows", "cols", "base_rows", "base_cols", "first_hand"):
        assert np.array_equal(getattr(copy, name), getattr(bat, name)), name
    with pytest.raises(GameError, match="out of range"):
        bat.start(9)
