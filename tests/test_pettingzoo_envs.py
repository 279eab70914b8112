"""The multi-agent environments are real PettingZoo environments (the official API tests)."""
import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, parallel_api_test

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
