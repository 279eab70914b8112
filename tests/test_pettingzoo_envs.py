"""The multi-agent environments are real PettingZoo environments (the official API tests)."""
import warnings

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test, seed_test
from pettingzoo.utils.conversions import parallel_to_aec

from cfrkit.games.base import GameError

from cfrkit.games.hanabi import HanabiAECEnv, HanabiGymVectorEnv, preset
from cfrkit.games.symmtom.parallel import parallel_env

# api_test warns about every Dict observation space with an action mask (PettingZoo's own classic
# environments, Hanabi included, get the same two warnings); they are expected here
DICT_OBS = [pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be"),
            pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")]


@pytest.mark.parametrize("players", [2, 5])
@DICT_OBS[0]
@DICT_OBS[1]
def test_hanabi_aec_env_passes_pettingzoo_api_test(players):
    env = HanabiAECEnv(preset("full", players), seed=players)
    api_test(env, num_cycles=400)
    assert isinstance(env.action_space("player_0"), spaces.Discrete)


def test_hanabi_aec_rewards_sum_to_the_score():
    env = HanabiAECEnv(preset("full", 2), seed=1)
    env.reset(seed=1)
    total, rng = 0.0, np.random.default_rng(0)
    for agent in env.agent_iter(max_iter=500):
        obs, reward, term, trunc, info = env.last()
        if agent == "player_0":
            total += reward
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.state.is_terminal() and total == env.state.score()


def test_symmtom_parallel_env_passes_pettingzoo_api_test():
    env = parallel_env(agents=3, width=6, pieces=3, seed=0)
    parallel_api_test(env, num_cycles=300)
    assert isinstance(env.observation_space("agent_0"), spaces.Box)


@DICT_OBS[0]
@DICT_OBS[1]
def test_hanabi_aec_env_seeding_rendering_and_random_start():
    """PettingZoo's seed and render tests; with HLE's random_start_player the AEC env still passes
    api_test and seed_test (the first agent to act is drawn, then fixed by the seed)."""
    seed_test(lambda render_mode=None: HanabiAECEnv(preset("full", 3)), num_cycles=100)
    seed_test(lambda render_mode=None: HanabiAECEnv({"players": 3, "random_start_player": True}), num_cycles=100)
    render_test(lambda render_mode=None: HanabiAECEnv(preset("full", 2), render_mode=render_mode))
    env = HanabiAECEnv({"players": 4, "random_start_player": True}, seed=3)
    api_test(env, num_cycles=150)
    assert HanabiAECEnv(preset("full", 2), render_mode=None).render_mode is None
    with pytest.raises(GameError, match="render_mode"):
        HanabiAECEnv(preset("full", 2), render_mode="rgb_array")


def test_symmtom_parallel_env_seeding_render_mode_and_aec_conversion():
    parallel_seed_test(lambda render_mode=None: parallel_env(agents=3, width=6, pieces=3), num_cycles=60)
    render_test(lambda render_mode=None: parallel_to_aec(parallel_env(agents=3, width=6, pieces=3,
                                                                      render_mode=render_mode)))
    env = parallel_env(agents=3, width=6, pieces=3, seed=1, render_mode="ansi")
    assert env.render_mode == "ansi"
    env.reset(seed=1)
    assert len(env.render().splitlines()) >= 6
    # PettingZoo's own parallel -> AEC conversion works on it (and finds a render_mode)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(parallel_to_aec(parallel_env(agents=4, width=6, pieces=8, seed=2)), num_cycles=60)
    assert not [w for w in caught if "render_mode" in str(w.message)]
    # the oracle observation (others' knowledge added) still fits its Box
    parallel_api_test(parallel_env(agents=4, width=6, pieces=8, oracle=True, seed=1), num_cycles=60)
    with pytest.raises(GameError, match="render_mode"):
        parallel_env(agents=3, width=6, pieces=3, render_mode="rgb_array")



def test_hanabi_gym_vector_env_works_with_gymnasium_wrappers():
    """A real gymnasium VectorEnv: spaces, seeded resets, SAME_STEP autoreset, and Gymnasium's own
    episode-statistics wrapper sees returns equal to the final scores."""
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    from cfrkit.games.base import IllegalActionError

    n = 16
    env = HanabiGymVectorEnv(preset("full", 2), num_envs=n, seed=0)
    assert isinstance(env, VectorEnv) and env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.single_observation_space == spaces.MultiBinary(658) and env.single_action_space == spaces.Discrete(20)
    assert env.action_space == spaces.MultiDiscrete([20] * n) and env.observation_space.shape == (n, 658)
    a, _ = env.reset(seed=5)
    b, info = env.reset(seed=5)
    c, _ = env.reset(seed=6)
    assert np.array_equal(a, b) and not np.array_equal(a, c) and env.observation_space.contains(b)
    wrapped = RecordEpisodeStatistics(HanabiGymVectorEnv(preset("full", 2), num_envs=n, seed=1))
    obs, info = wrapped.reset(seed=1)
    rng = np.random.default_rng(0)
    returns, scores, totals = [], [], np.zeros(n)
    for _ in range(400):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        obs, rew, term, trunc, info = wrapped.step(acts)
        assert rew.dtype == np.float64 and term.dtype == np.bool_ and not trunc.any()
        assert obs.dtype == np.int8 and obs.shape == (n, 658)
        totals += rew
        if term.any():
            returns += info["episode"]["r"][term].tolist()
            scores += info["final_info"]["score"][term].tolist()
            assert np.array_equal(totals[term], info["final_info"]["score"][term])
            totals[term] = 0
    assert len(scores) >= n and returns == scores
    legal = np.array([np.flatnonzero(m)[0] for m in info["action_mask"]])
    for k in (int(np.flatnonzero(~info["action_mask"][0])[0]), 20):   # an illegal move id, one out of range
        bad = legal.copy()
        bad[0] = k
        with pytest.raises(IllegalActionError):
            wrapped.step(bad)
