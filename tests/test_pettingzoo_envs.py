"""The multi-agent environments are real PettingZoo environments (the official API tests)."""
import warnings

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test, seed_test
from pettingzoo.utils.conversions import parallel_to_aec

from cfrkit.games.base import GameError

from cfrkit.games.hanabi import HanabiAECEnv, preset
from cfrkit.games.symmtom.parallel import parallel_env


@pytest.mark.parametrize("players", [2, 5])
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

