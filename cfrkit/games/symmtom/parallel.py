"""PettingZoo-style parallel API for SymmToM (no pettingzoo dependency).

>>> env = parallel_env(agents=3, width=6, pieces=3)
>>> observations, infos = env.reset(seed=0)
>>> actions = {a: env.action_space(a).sample() for a in env.agents}
>>> observations, rewards, terminations, truncations, infos = env.step(actions)

Agent names are ``"agent_0"`` ... ; actions are joint ids ``move * c + piece``.  Episodes end by
time limit, so ``truncations`` become True at the last step and ``agents`` is emptied, as in
PettingZoo.  ``action_space``/``observation_space`` return small space objects with ``n``/``shape``
and ``sample()``; ``infos[a]["action_mask"]`` marks the ids whose piece the agent knows.
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from cfrkit.games.base import GameError
from cfrkit.games.symmtom.core import NUM_MOVES, SymmToMConfig
from cfrkit.games.symmtom.env import SymmToMEnv


class Discrete:
    """A discrete space {0, ..., n-1}."""

    def __init__(self, n: int, rng: np.random.Generator):
        self.n = n
        self.shape = ()
        self._rng = rng

    def sample(self) -> int:
        return int(self._rng.integers(self.n))

    def contains(self, x) -> bool:
        return isinstance(x, (int, np.integer)) and 0 <= int(x) < self.n


class Box:
    """A float32 box of the given shape and bounds."""

    def __init__(self, low: float, high: float, shape, rng: np.random.Generator):
        self.low, self.high, self.shape, self.dtype = low, high, tuple(shape), np.float32
        self._rng = rng

    def sample(self) -> np.ndarray:
        return self._rng.uniform(self.low, self.high, size=self.shape).astype(np.float32)


class SymmToMParallelEnv:
    """PettingZoo ``ParallelEnv``-like wrapper around :class:`SymmToMEnv`."""

    metadata = {"name": "symmtom_v0", "render_modes": ["ansi"]}

    def __init__(self, config: Optional[SymmToMConfig] = None, seed: Optional[int] = None, **params):
        self.env = SymmToMEnv(config, seed=seed, **params)
        self.config = self.env.config
        self.possible_agents = [f"agent_{i}" for i in range(self.config.agents)]
        self.agents = []
        self._space_rng = np.random.default_rng(seed)

    def action_space(self, agent: str) -> Discrete:
        self._index(agent)
        return Discrete(NUM_MOVES * self.config.pieces, self._space_rng)

    def observation_space(self, agent: str) -> Box:
        self._index(agent)
        return Box(-1.0, 1.0, (self.config.observation_size,), self._space_rng)

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
        return {a: o for a, o in zip(self.possible_agents, obs)}, self._infos()

    def step(self, actions: Dict[str, int]):
        if not self.agents:
            raise GameError("the episode is over; call reset()")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise GameError(f"missing actions for {missing}")
        joint = [int(actions[a]) for a in self.possible_agents]
        obs, rewards, done, _ = self.env.step(joint)
        names = self.possible_agents
        observations = {a: o for a, o in zip(names, obs)}
        reward_map = {a: float(r) for a, r in zip(names, rewards)}
        terminations = {a: False for a in names}
        truncations = {a: bool(done) for a in names}
        infos = self._infos()
        if done:
            self.agents = []
        return observations, reward_map, terminations, truncations, infos

    def render(self) -> str:
        return self.env.render()

    def close(self) -> None:
        pass


def parallel_env(**params) -> SymmToMParallelEnv:
    """Build a :class:`SymmToMParallelEnv` from SymmToM parameters (and ``seed``)."""
    seed = params.pop("seed", None)
    return SymmToMParallelEnv(SymmToMConfig(**params), seed=seed)
