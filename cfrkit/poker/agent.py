"""The poker agent interface: what the match runner and the evaluators ask of an agent.

An agent answers ``act(state) -> action id`` for a state where it is to act (hold'em:
:class:`~cfrkit.games.holdem.game.HoldemState`; Leduc family: its states) and may reset per-hand
memory in ``new_hand()``.  Agents may look only at their own private cards and the public
information.  Evaluators that track an agent's range (LBR, AIVAT, DRL-BR's opponent model) also ask
:meth:`PokerAgent.hand_strategy` / :meth:`PokerAgent.hand_action_probability`: what the agent would
do with each private hand at the same decision.

:class:`CheckedAgent` validates every answer (legal action, shapes, probabilities, time limit);
the match runner (:mod:`cfrkit.poker.match`) and the evaluators call agents through it.

The concrete agents live above this layer in :mod:`cfrkit.agents` and are built by name with
:func:`cfrkit.poker.registry.make_agent`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Tuple

import numpy as np

from cfrkit.cards.hands import blocked_pairs
from cfrkit.games.base import GameError
from cfrkit.games.holdem.game import HoldemState
from cfrkit.poker.view import PokerView

__all__ = ["AgentInterfaceError", "CheckedAgent", "DEFAULT_TIME_LIMIT", "HandStrategy", "PokerAgent", "agent_name",
           "board_live", "own_strategy_is_current", "size_interpolation", "size_node_weights", "uniform_strategy"]


class AgentInterfaceError(GameError):
    """An agent lacks a method an evaluator needs, or answered it wrongly (names agent and state)."""


@dataclass
class HandStrategy:
    """An agent's mixed strategy at one decision, for every private hand it could hold.

    Hold'em agents: the 1326 hole-card pairs; Leduc-family agents (:mod:`cfrkit.agents.leduc_agents`):
    the card ids ``0 .. num_cards-1``.

    ``actions``: int64[A] protocol action ids (fold ``0``, check/call ``1``, raise-to ``N`` as
    ``raise_action(N)``; Leduc: the game's action ids), the finite support shared by all hands;
    ``probs``: float64[hands, A] (hold'em: the pair order of :mod:`cfrkit.cards.hands`).  Rows of hands that share a card with the board are all
    zero; every other row sums to one.
    """

    actions: np.ndarray
    probs: np.ndarray

    def probability_of(self, action: int) -> np.ndarray:
        """float64[1326]: probability that each hand takes ``action`` (0 outside the support)."""
        hits = np.flatnonzero(self.actions == int(action))
        if hits.size == 0:
            return np.zeros(self.probs.shape[0])
        return self.probs[:, hits[0]].copy()


class PokerAgent:
    """Base class of hold'em agents.

    ``act(state)`` returns a legal action id for the player to act.  Evaluators that track the
    agent's range (LBR, AIVAT, DRL-BR's opponent model) also need what the agent would do with each
    of the 1326 hands at the same decision, given the public state and the agent's own earlier
    decisions: :meth:`hand_strategy` (a full mixed strategy over a finite support) and
    :meth:`hand_action_probability` (the probability of one given action, which suffices for Bayes
    updates and works for agents whose raise sizes have a large support).  Agents that cannot
    answer keep the defaults, which raise :class:`AgentInterfaceError`.
    """

    name = "agent"
    #: True when :meth:`hand_strategy`'s support holds every action :meth:`act` can take, with the
    #: probabilities it takes them (AIVAT's known-strategy corrections need this); False for agents
    #: whose raise sizes have a support too large to list (their ``hand_strategy`` is representative).
    exact_support = True
    #: True when the strategy of the hand held (``act``, ``own_strategy``) never reads the board cards, only
    #: the hole cards and the betting (always-call, fixed-range-raiser): AIVAT's street lookahead then asks it
    #: once for all the boards it samples at a chance node instead of once per board.
    ignores_board = False
    #: True when, besides the board, the strategy of the hand held never reads the hole cards either (the betting
    #: alone decides: always-call, always-fold): AIVAT's compiled street lookahead keeps its answer per betting line
    #: for every hand instead of asking it once per hand.
    ignores_hand = False

    def act(self, state: HoldemState) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def new_hand(self) -> None:
        """Called before each hand (agents with per-hand memory reset it here)."""

    def hand_strategy(self, state: HoldemState) -> HandStrategy:
        """The agent's strategy at ``state`` (it is to act) for every hole-card pair it could hold.

        The agent's own hole cards in ``state`` are ignored: rows are indexed by hypothetical hands.
        """
        raise AgentInterfaceError(f"agent {self.name!r} does not provide its strategy for all 1326 hands "
                                  f"(hand_strategy), which this evaluator needs")

    def hand_action_probability(self, state: HoldemState, action: int) -> np.ndarray:
        """float64[1326]: probability that the agent, holding each pair, takes ``action`` at ``state``."""
        return self.hand_strategy(state).probability_of(action)

    # Optional, for agents that can answer it faster than ``hand_strategy``:
    #     own_strategy(state) -> (actions int64[A], probs float64[A])
    # the strategy of the hand the agent holds in ``state`` (the row of ``hand_strategy`` for that
    # hand, zero-probability actions may be left out).  AIVAT needs no more at a known decision;
    # :meth:`CheckedAgent.own_strategy` answers it from ``hand_strategy`` for agents without it.
    #
    # Optional, for agents whose ``act`` plays actions outside that support (``exact_support`` False, e.g.
    # random's uniform raise-to amounts):
    #     taken_weights(state, action, actions) -> float64[A]
    # non-negative weights summing to one over ``actions`` (the support ``own_strategy`` gives) that stand for
    # the played ``action``, such that their expectation over the agent's own play equals ``own_strategy``'s
    # probabilities (:func:`size_node_weights` and :func:`size_interpolation` give them for a uniform raise
    # size).  AIVAT's term at such a decision, ``sum_a (w_a - p_a) v(h a)``, then keeps zero mean for any ``v``.


def size_node_weights(nodes) -> np.ndarray:
    """float64[m]: the share of each raise-to node (chips, sorted, distinct integers; ``nodes[0]`` and
    ``nodes[-1]`` the smallest and largest legal totals) when a size drawn uniformly from the integers between
    them is split between its two neighbouring nodes by linear interpolation (:func:`size_interpolation`).

    The shares sum to one and are the exact expectations of that split, so a decision valued by interpolating
    between the nodes has a zero-mean AIVAT term.  Closed form: an end node gets half of its one segment plus
    the size it sits on, an inner node half of each neighbouring segment (a segment of ``L`` chips holds
    ``L + 1`` integers; the shared endpoint is counted once).
    """
    s = np.asarray(nodes, dtype=np.int64)
    if s.ndim != 1 or s.size == 0 or np.any(np.diff(s) <= 0):
        raise ValueError(f"raise-to nodes must be distinct increasing chip totals, got {s.tolist()}")
    n = float(s[-1] - s[0] + 1)
    if s.size == 1:
        return np.ones(1)
    seg = np.diff(s).astype(np.float64)
    w = np.zeros(s.size)
    w[:-1] += seg / 2.0
    w[1:] += seg / 2.0
    w[0] += 0.5   # the integers at the two ends are only half covered by the segments' halves
    w[-1] += 0.5
    return w / n


def size_interpolation(nodes, amount: int) -> np.ndarray:
    """float64[m]: the linear-interpolation weights of the raise-to total ``amount`` (chips) between its two
    neighbouring ``nodes`` (one-hot on a node); see :func:`size_node_weights`."""
    s = np.asarray(nodes, dtype=np.int64)
    t = int(amount)
    if not s[0] <= t <= s[-1]:
        raise ValueError(f"raise-to {t} outside the nodes' range {int(s[0])}..{int(s[-1])}")
    w = np.zeros(s.size)
    j = int(np.searchsorted(s, t, side="left"))
    if s[j] == t:
        w[j] = 1.0
        return w
    lam = (t - s[j - 1]) / float(s[j] - s[j - 1])
    w[j - 1], w[j] = 1.0 - lam, lam
    return w


def board_live(state: HoldemState) -> np.ndarray:
    """float64[1326]: 1 for pairs disjoint from the board, 0 for pairs sharing a card with it."""
    if not state.board:
        return np.ones(1326)
    return (~blocked_pairs(list(state.board))).astype(np.float64)


def uniform_strategy(state: HoldemState, actions, probs) -> HandStrategy:
    """The same action distribution for every hand disjoint from the board."""
    live = board_live(state)
    return HandStrategy(np.asarray(actions, dtype=np.int64), live[:, None] * np.asarray(probs, dtype=np.float64)[None, :])


#: default seconds an agent may take for one answer
DEFAULT_TIME_LIMIT = 60.0


def agent_name(agent) -> str:
    """The display name of ``agent``: its ``name`` attribute, else its class name."""
    return str(getattr(agent, "name", type(agent).__name__))


_OWN_STRATEGY_CURRENT: dict = {}


def _defined_in(cls: type, name: str):
    """The class of ``cls``'s method resolution order that defines ``name`` (None if none does)."""
    return next((k for k in cls.__mro__ if name in vars(k)), None)


def own_strategy_is_current(cls: type) -> bool:
    """Whether ``cls``'s ``own_strategy`` may stand for its ``hand_strategy``: it is defined in the class
    that defines ``hand_strategy`` or below it, so a subclass that overrides ``hand_strategy`` alone
    (another strategy) is not answered by an inherited ``own_strategy`` of the old one."""
    hit = _OWN_STRATEGY_CURRENT.get(cls)
    if hit is None:
        own, full = _defined_in(cls, "own_strategy"), _defined_in(cls, "hand_strategy")
        hit = own is not None and (full is None or issubclass(own, full))
        _OWN_STRATEGY_CURRENT[cls] = hit
    return hit


class CheckedAgent:
    """``agent`` with validated answers; ``time_limit`` in seconds per answer.

    A wrong answer raises :class:`AgentInterfaceError` naming the agent and the state:

    * ``act``: not a legal action, or slower than ``time_limit`` seconds;
    * ``hand_strategy``: wrong shape, negative or non-finite probabilities, a hand disjoint from the
      board whose row does not sum to one, positive probability on an illegal action, too slow;
    * ``hand_action_probability``: wrong shape, values outside [0, 1], too slow;
    * an agent without the per-hand interface gets one line saying which method is missing.

    The time limit is checked after the call returns (calls are in-process; a hung agent is the
    caller's to interrupt with Ctrl-C).
    """

    def __init__(self, agent, view: PokerView, time_limit: float = DEFAULT_TIME_LIMIT, tolerance: float = 1e-6,
                 check_legal: bool = True):
        if isinstance(agent, CheckedAgent):
            agent = agent.agent
        # the match runner turns off act's legality test when the engine's apply_action makes it anyway
        self.check_legal = bool(check_legal)
        self.agent = agent
        self.view = view
        self.name = agent_name(agent)
        self.time_limit = float(time_limit)
        if not self.time_limit > 0:  # NaN fails this too; inf means no limit
            raise GameError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
        self._untimed = self.time_limit == float("inf")
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
        act = getattr(self.agent, "act", None)
        if act is None:
            raise AgentInterfaceError(f"agent {self.name!r} has no act(state) method")
        # timed inline: act is called at every decision of every hand the runner plays
        if self._untimed:
            action = act(state)
        else:
            start = time.perf_counter()
            action = act(state)
            took = time.perf_counter() - start
            if took > self.time_limit:
                raise self._fail(state, f"act took {took:.1f} s, over the limit of {self.time_limit:g} s")
        try:
            action = int(action)
        except (TypeError, ValueError):
            raise self._fail(state, f"act returned {action!r}, not an action id") from None
        if self.check_legal and not self.view.legal(state, action):
            raise self.illegal(state, action)
        return action

    def illegal(self, state, action: int) -> AgentInterfaceError:
        """The error for ``act`` returning the illegal ``action`` at ``state``."""
        return self._fail(state, f"act returned illegal action {action}")

    def _shaped_hand_strategy(self, state) -> Tuple[np.ndarray, np.ndarray]:
        """The agent's ``hand_strategy`` as ``(actions[A], probs[num_hands, A])``, timed and shape-checked."""
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
        return actions, probs

    def hand_strategy(self, state) -> HandStrategy:
        actions, probs = self._shaped_hand_strategy(state)
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

    def own_strategy(self, state) -> Tuple[np.ndarray, np.ndarray]:
        """``(actions int64[A], probs float64[A])``: the strategy of the hand the player to act holds in
        ``state`` -- the agent's ``own_strategy`` when it has one, else its ``hand_strategy`` row of that
        hand.  Checked as that row would be (shapes, finite non-negative probabilities summing to one,
        probability only on legal actions, the time limit); the other hands' rows are not asked for or
        checked (AIVAT uses this one row per decision)."""
        fn = getattr(self.agent, "own_strategy", None) if own_strategy_is_current(type(self.agent)) else None
        if fn is None:
            actions, all_probs = self._shaped_hand_strategy(state)
            probs = all_probs[self.view.hand_of(state, state.current_player())]
            what = "hand_strategy"
        else:
            out = self._timed(state, "own_strategy", fn, state)
            try:
                actions, probs = out
            except (TypeError, ValueError):
                raise self._fail(state, f"own_strategy returned {type(out).__name__}, not (actions, probs)") from None
            actions = np.asarray(actions)
            probs = np.asarray(probs, dtype=np.float64)
            what = "own_strategy"
            if actions.ndim != 1 or probs.shape != actions.shape:
                raise self._fail(state, f"own_strategy gave actions {actions.shape} and probs {probs.shape}")
        # a handful of actions, asked at every decision of every AIVAT hand: checked on Python floats (numpy's
        # per-call cost is most of the check on arrays this small)
        qs = probs.tolist()
        tol = -self.tolerance
        if not all(math.isfinite(q) and q >= tol for q in qs):
            raise self._fail(state, f"{what} has negative or non-finite probabilities for the hand held")
        total = math.fsum(qs)
        if abs(total - 1.0) > 1e-4:
            raise self._fail(state, f"{what} probabilities of the hand held sum to {total:.6g}, not 1")
        for a, q in zip(actions.tolist(), qs):
            if q > 0 and not self.view.legal(state, int(a)):
                raise self._fail(state, f"{what} puts probability on illegal action {int(a)}")
        return actions.astype(np.int64, copy=False), probs

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
