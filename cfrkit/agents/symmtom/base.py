"""The SymmToM agent interface, episode runner and the torch-policy adapter.

An agent is reset with its first :class:`~cfrkit.games.symmtom.env.AgentView` and then called once
per step with the latest view (which reports what happened in the previous step); it returns
``(move, piece)``.  Agents see only their view: the oracle view (with every agent's knowledge) is
filled in only when the environment is built with ``oracle=True``.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.agents.symmtom.knowledge import KnowledgeTracker
from cfrkit.games.symmtom.core import NUM_MOVES, SymmToMConfig
from cfrkit.games.symmtom.env import AgentView, SymmToMEnv


class SymmToMAgent:
    """Base class: override :meth:`act` (and :meth:`reset` when the agent keeps state)."""

    name = "agent"
    #: Whether :meth:`act` reads ``view.observation`` (the runner builds it only then).
    needs_observation = False

    def reset(self, view: AgentView) -> None:
        """Called at the start of an episode with the agent's first view."""

    def act(self, view: AgentView) -> Tuple[int, int]:
        """Return ``(move, piece)`` for the coming step."""
        raise NotImplementedError


class RandomAgent(SymmToMAgent):
    """Uniformly random move and piece (a seeded baseline)."""

    name = "random"

    def __init__(self, seed: Optional[int] = None):
        self.rng = np.random.default_rng(seed)

    def act(self, view: AgentView) -> Tuple[int, int]:
        return int(self.rng.integers(NUM_MOVES)), int(self.rng.integers(view.config.pieces))


class TorchPolicyAgent(SymmToMAgent):
    """Plugs a torch module into SymmToM.

    ``module`` maps a float tensor of shape (batch, features) to logits of shape (batch, 5 c) over
    joint ids ``move * c + piece``.  Features are the authors' observation vector, followed by the
    belief matrix K (c x n, flattened piece-major) of a :class:`~cfrkit.agents.symmtom.belief.KnowledgeTracker`
    when ``tracker_mode`` is given ("ce", "ge" or "oracle") -- the input of the paper's MADDPG-CE/GE.
    ``greedy`` picks the arg-max, otherwise samples from the softmax (seeded).
    """

    name = "torch"
    needs_observation = True

    def __init__(self, module, tracker_mode: Optional[str] = None, greedy: bool = True, seed: Optional[int] = None):
        import torch  # lazy: torch is an optional dependency

        self.torch = torch
        self.module = module
        self.tracker_mode = tracker_mode
        self.greedy = greedy
        self.generator = torch.Generator().manual_seed(0 if seed is None else int(seed))
        self.tracker = None

    @staticmethod
    def feature_size(config: SymmToMConfig, tracker_mode: Optional[str] = None) -> int:
        """Input width the module must accept."""
        return config.observation_size + (config.pieces * config.agents if tracker_mode else 0)

    def reset(self, view: AgentView) -> None:
        if self.tracker_mode:
            self.tracker = KnowledgeTracker(view, self.tracker_mode)

    def features(self, view: AgentView) -> np.ndarray:
        if self.tracker is not None:
            if view.t > 0:
                self.tracker.update(view)
            k = self.tracker.matrix().astype(np.float32).reshape(-1)
            return np.concatenate([view.observation, k])
        return view.observation

    def act(self, view: AgentView) -> Tuple[int, int]:
        torch = self.torch
        x = torch.as_tensor(self.features(view), dtype=torch.float32)[None]
        with torch.no_grad():
            logits = self.module(x)[0]
        if logits.shape[-1] != NUM_MOVES * view.config.pieces:
            raise ValueError(f"policy returned {logits.shape[-1]} logits, expected {NUM_MOVES * view.config.pieces}")
        if self.greedy:
            a = int(torch.argmax(logits))
        else:
            a = int(torch.multinomial(torch.softmax(logits, -1), 1, generator=self.generator))
        return divmod(a, view.config.pieces)


def play_episode(env: SymmToMEnv, agents: Sequence[SymmToMAgent], seed: Optional[int] = None, start=None,
                 on_step: Optional[Callable] = None) -> List[float]:
    """Play one episode; returns each agent's total reward.

    ``on_step(env, actions, info)`` is called after every step (metrics hook).
    """
    n = env.config.agents
    if len(agents) != n:
        raise ValueError(f"need {n} agents, got {len(agents)}")
    env.reset(seed=seed, start=start)
    for i, agent in enumerate(agents):
        agent.reset(env.view(i, agent.needs_observation))
    while not env.done:
        actions = [agents[i].act(env.view(i, agents[i].needs_observation)) for i in range(n)]
        _, _, _, info = env.step(actions, observe=False)
        if on_step is not None:
            on_step(env, actions, info)
    return [float(r) for r in env.returns]
