"""Checked calls into agents: every answer an evaluator uses is validated, with a time limit.

:class:`CheckedAgent` wraps a poker agent (hold'em or Leduc family) for the evaluators.  A wrong
answer raises :class:`~cfrkit.agents.poker.AgentInterfaceError` naming the agent and the state:

* ``act``: not a legal action, or slower than ``time_limit`` seconds;
* ``hand_strategy``: wrong shape, negative or non-finite probabilities, a hand disjoint from the
  board whose row does not sum to one, positive probability on an illegal action, too slow;
* ``hand_action_probability``: wrong shape, values outside [0, 1], too slow;
* an agent without the per-hand interface gets one line saying which method is missing.

The time limit is checked after the call returns (calls are in-process; a hung agent is the
caller's to interrupt with Ctrl-C).
"""
from __future__ import annotations

import time

import numpy as np

from cfrkit.agents.poker import AgentInterfaceError, HandStrategy
from cfrkit.evaluation.poker_view import PokerView

#: default seconds an agent may take for one answer
DEFAULT_TIME_LIMIT = 60.0


def agent_name(agent) -> str:
    return str(getattr(agent, "name", type(agent).__name__))


class CheckedAgent:
    """``agent`` with validated answers (see the module docstring); ``time_limit`` in seconds."""

    def __init__(self, agent, view: PokerView, time_limit: float = DEFAULT_TIME_LIMIT, tolerance: float = 1e-6):
        if isinstance(agent, CheckedAgent):
            agent = agent.agent
        self.agent = agent
        self.view = view
        self.name = agent_name(agent)
        self.time_limit = float(time_limit)
        self.tolerance = float(tolerance)
        self.exact_support = bool(getattr(agent, "exact_support", True))

    def _fail(self, state, problem: str) -> AgentInterfaceError:
        return AgentInterfaceError(f"agent {self.name!r} at {self.view.describe(state)}: {problem}")

    def _timed(self, state, what: str, fn, *args):
        start = time.perf_counter()
        out = fn(*args)
        took = time.perf_counter() - start
        if took > self.time_limit:
            raise self._fail(state, f"{what} took {took:.1f} s, over the limit of {self.time_limit:g} s")
        return out

    def new_hand(self) -> None:
        hook = getattr(self.agent, "new_hand", None)
        if hook is not None:
            hook()

    def act(self, state) -> int:
        if not hasattr(self.agent, "act"):
            raise AgentInterfaceError(f"agent {self.name!r} has no act(state) method")
        action = self._timed(state, "act", self.agent.act, state)
        try:
            action = int(action)
        except (TypeError, ValueError):
            raise self._fail(state, f"act returned {action!r}, not an action id") from None
        if not self.view.legal(state, action):
            raise self._fail(state, f"act returned illegal action {action}")
        return action

    def hand_strategy(self, state) -> HandStrategy:
        fn = getattr(self.agent, "hand_strategy", None)
        if fn is None:
            raise AgentInterfaceError(f"agent {self.name!r} does not provide hand_strategy(state), which this "
                                      f"evaluator needs")
        hs = self._timed(state, "hand_strategy", fn, state)
        if not isinstance(hs, HandStrategy):
            raise self._fail(state, f"hand_strategy returned {type(hs).__name__}, not a HandStrategy")
        actions = np.asarray(hs.actions)
        probs = np.asarray(hs.probs, dtype=np.float64)
        n = self.view.num_hands
        if actions.ndim != 1 or probs.shape != (n, actions.size):
            raise self._fail(state, f"hand_strategy gave actions {actions.shape} and probs {probs.shape}; "
                                    f"expected probs of shape ({n}, {actions.size})")
        if not np.isfinite(probs).all() or (probs < -self.tolerance).any():
            raise self._fail(state, "hand_strategy has negative or non-finite probabilities")
        live = ~self.view.blocked(self.view.public_cards(state))
        sums = probs.sum(axis=1)
        bad = np.flatnonzero(live & (np.abs(sums - 1.0) > 1e-4))
        if bad.size:
            raise self._fail(state, f"hand_strategy probabilities of hand {int(bad[0])} sum to "
                                    f"{sums[bad[0]]:.6g}, not 1 ({bad.size} hands wrong)")
        used = probs[live].max(axis=0) > 0 if live.any() else np.zeros(actions.size, dtype=bool)
        for a, u in zip(actions, used):
            if u and not self.view.legal(state, int(a)):
                raise self._fail(state, f"hand_strategy puts probability on illegal action {int(a)}")
        return HandStrategy(actions.astype(np.int64), probs)

    def hand_action_probability(self, state, action: int) -> np.ndarray:
        fn = getattr(self.agent, "hand_action_probability", None)
        if fn is None:
            if getattr(self.agent, "hand_strategy", None) is None:
                raise AgentInterfaceError(f"agent {self.name!r} does not provide hand_action_probability(state, "
                                          f"action) or hand_strategy(state), which this evaluator needs")
            return self.hand_strategy(state).probability_of(action)
        out = np.asarray(self._timed(state, "hand_action_probability", fn, state, int(action)), dtype=np.float64)
        if out.shape != (self.view.num_hands,):
            raise self._fail(state, f"hand_action_probability gave shape {out.shape}, expected ({self.view.num_hands},)")
        if not np.isfinite(out).all() or (out < -self.tolerance).any() or (out > 1 + 1e-6).any():
            raise self._fail(state, f"hand_action_probability of action {int(action)} has values outside [0, 1]")
        return np.clip(out, 0.0, 1.0)
