"""SymmToM as a PettingZoo ``ParallelEnv`` with Gymnasium spaces.

>>> env = parallel_env(agents=3, width=6, pieces=3)
>>> observations, infos = env.reset(seed=0)
>>> actions = {a: env.action_space(a).sample() for a in env.agents}
>>> observations, rewards, terminations, truncations, infos = env.step(actions)

Agent names are ``"agent_0"`` ... ; actions are joint ids ``move * c + piece``.  Episodes end by
time limit, so ``truncations`` become True at the last step and ``agents`` is emptied, as in
PettingZoo.  ``action_space`` is ``gymnasium.spaces.Discrete(5 * c)``, ``observation_space`` a
float32 ``Box``; ``infos[a]["action_mask"]`` marks the ids whose piece the agent knows.  Passes
``pettingzoo.test.parallel_api_test``.
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from cfrkit.games.base import GameError
from cfrkit.games.symmtom.core import NUM_MOVES, SymmToMConfig
from cfrkit.games.symmtom.env import SymmToMEnv


class SymmToMParallelEnv(ParallelEnv):
    """PettingZoo ``ParallelEnv`` around :class:`SymmToMEnv`."""

    metadata = {"name": "symmtom_v0", "render_modes": ["ansi", "human"]}

    def __init__(self, config: Optional[SymmToMConfig] = None, seed: Optional[int] = None,
                 render_mode: Optional[str] = None, **params):
        if render_mode not in (None, "ansi", "human"):
            raise GameError(f"render_mode must be None, 'ansi' or 'human', got {render_mode!r}")
        self.render_mode = render_mode
        self.env = SymmToMEnv(config, seed=seed, **params)
        self.config = self.env.config
        self.possible_agents = [f"agent_{i}" for i in range(self.config.agents)]
        self.agents = []
        # one space object per agent, as PettingZoo expects (same object on every call)
        self._action_spaces = {a: spaces.Discrete(NUM_MOVES * self.config.pieces) for a in self.possible_agents}
        self._observation_spaces = {a: spaces.Box(-1.0, 1.0, (self.config.observation_size,), dtype=np.float32)
                                    for a in self.possible_agents}
        if seed is not None:
            for i, a in enumerate(self.possible_agents):
                self._action_spaces[a].seed(int(seed) + i)

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._action_spaces[self.possible_agents[self._index(agent)]]

    def observation_space(self, agent: str) -> spaces.Box:
        return self._observation_spaces[self.possible_agents[self._index(agent)]]

    def _index(self, agent: str) -> int:
        try:
            return self.possible_agents.index(agent)
        except ValueError:
            raise GameError(f"unknown agent {agent!r}; agents are {self.possible_agents}") from None

    def _infos(self) -> Dict[str, dict]:
        c = self.config.pieces
        infos = {}
        for i, name in enumerate(self.possible_agents):
            known = np.array([(self.env.knowledge[i] >> p) & 1 for p in range(c)], dtype=np.int8)
            infos[name] = {"action_mask": np.tile(known, NUM_MOVES)}
        return infos

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
        start = (options or {}).get("start")
        obs = self.env.reset(seed=seed, start=start)
        self.agents = list(self.possible_agents)
        return {a: np.asarray(o, dtype=np.float32) for a, o in zip(self.possible_agents, obs)}, self._infos()

    def step(self, actions: Dict[str, int]):
        if not self.agents:
            raise GameError("the episode is over; call reset()")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise GameError(f"missing actions for {missing}")
        joint = [int(actions[a]) for a in self.possible_agents]
        obs, rewards, done, _ = self.env.step(joint)
        names = self.possible_agents
        observations = {a: np.asarray(o, dtype=np.float32) for a, o in zip(names, obs)}
        reward_map = {a: float(r) for a, r in zip(names, rewards)}
        terminations = {a: False for a in names}
        truncations = {a: bool(done) for a in names}
        infos = self._infos()
        if done:
            self.agents = []
        return observations, reward_map, terminations, truncations, infos

    def render(self) -> Optional[str]:
        """The grid as text (agents as digits, bases as letters); printed (and None returned) with
        ``render_mode="human"``."""
        text = self.env.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def parallel_env(**params) -> SymmToMParallelEnv:
    """Build a :class:`SymmToMParallelEnv` from SymmToM parameters (and ``seed``, ``render_mode``)."""
    seed = params.pop("seed", None)
    render_mode = params.pop("render_mode", None)
    return SymmToMParallelEnv(SymmToMConfig(**params), seed=seed, render_mode=render_mode)
