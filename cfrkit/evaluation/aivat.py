"""AIVAT (Burch, Schmid, Moravcik, Morrill and Bowling 2018): unbiased low-variance match values.

The AIVAT value of a hand is the winnings minus a control variate per chance event and per decision
of a player whose strategy is known (here: every agent that answers ``hand_strategy`` with an exact
support or with ``taken_weights`` for the actions outside it, see :class:`~cfrkit.poker.agent.PokerAgent`):

    u~(z) = u(z) - sum_{chance events}  [ v(h c) - E_c v(h c) ]
                 - sum_{known decisions} [ v(h a) - sum_a' sigma(a' | h) v(h a') ]

Each bracket has zero mean given the history before it, whatever ``v`` is, so ``u~`` is unbiased;
the closer ``v`` is to the true expected value, the smaller its variance.  The match runner sees
both players' cards (in-process matches), so ``v`` may use them: ``v(h)`` is player 0's value.

:class:`EquityValueFunction` is the fallback every game gets: player 0's exact showdown equity
against player 1's actual hand over the board cards to come, times the chips in the pot, minus
player 0's contribution (the value of checking the hand down).  Because that equity is itself an
expectation over the cards to come and chance moves no chips, ``E_c v(h c) = v(h)``; so the chance
term needs no enumeration.  Before the hole cards are dealt the equity is 1/2 by symmetry.
A value function an agent provides (``agent.aivat_value_function(view)``) must have the same
property or offer ``chance_expectation(state)``.

With ``fit_opponent_deals`` > 0, a blueprint playing an agent that has ``hand_strategy`` but no value function
of its own (A^R, ...) gives its tables against that agent's abstract policy fitted on that many deals of a
separate match (``BlueprintAgent.opponent_value_function``, seed :func:`fit_seed` of the match's: the fit never
sees the evaluated hands, so AIVAT stays unbiased); off by default.

:class:`AivatObserver` attaches AIVAT to the match runner (:func:`cfrkit.poker.match.play_match`):
it follows every hand and adds the ``"aivat"`` estimator to the result.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np

from cfrkit.evaluation.board_blind_values import BoardBlindValueFunction, board_blind
from cfrkit.games.base import GameError
from cfrkit.poker.agent import AgentInterfaceError, CheckedAgent, PokerAgent
from cfrkit.poker.match import Hand, MatchInfo, MatchObserver
from cfrkit.poker.view import PokerView


class EquityValueFunction:
    """Player 0's check-down value (chips): ``equity * pot - contribution``; exact returns at the end."""

    def __init__(self, view: PokerView):
        self.view = view

    def value(self, state) -> float:
        if state.is_terminal():
            return float(state.returns()[0])
        c = self.view.contributions(state)
        eq = self.view.equity_hands(state) if self.view.hands_dealt(state) else 0.5
        return eq * (c[0] + c[1]) - c[0]

    def chance_expectation(self, state) -> float:
        """``E_c v(state c)`` over the chance events up to the next decision (= ``value(state)``)."""
        return self.value(state)

    def _cards_missing(self, state) -> bool:
        return not self.view.hands_dealt(state)


def fit_seed(seed: int) -> int:
    """The deal seed of the fitting match for a match dealt with ``seed``: never ``seed`` itself."""
    return (int(seed) + 1_000_003) % (2 ** 31)


def fit_opponent_pair(agents) -> Optional[tuple]:
    """``(blueprint, other)`` when one of the two ``agents`` offers ``opponent_value_function`` (a blueprint) and
    the other answers ``hand_strategy`` (with an exact support) but has no ``aivat_value_function`` of its own;
    else None."""
    agents = [getattr(a, "agent", a) for a in agents]
    if len(agents) != 2:
        return None
    for owner, other in (agents, agents[::-1]):
        own = getattr(type(other), "hand_strategy", None)
        if (hasattr(owner, "opponent_value_function") and not hasattr(other, "aivat_value_function")
                and own is not None and own is not PokerAgent.hand_strategy
                and getattr(other, "exact_support", True)):
            return owner, other
    return None


class AivatTracker:
    """Accumulates the control variates of one hand (player 0's chips).

    Call :meth:`before_chance` at the first chance node of a run of chance nodes and
    :meth:`after_chance` at the state after the run; :meth:`decision` at a known decision with the
    acting hand's action distribution (``actions``, ``probs``) and the action taken.
    """

    def __init__(self, value_function):
        self.vf = value_function
        self.correction = 0.0
        self._pending: Optional[float] = None
        # a value function with ``chance_and_value(before, after)`` (both numbers in one pass, bit for bit those of
        # ``chance_expectation(before)`` and ``value(after)``) is asked at the end of the run: a copy of the state
        self._before = None

    def before_chance(self, state) -> None:
        if getattr(self.vf, "chance_and_value", None) is not None:
            self._before = state.clone()
            self._pending = None
            return
        f = getattr(self.vf, "chance_expectation", None)
        self._pending = float(f(state)) if f is not None else float(self.vf.value(state))

    def after_chance(self, state) -> None:
        if self._before is not None:
            before, self._before = self._before, None
            expect, value = self.vf.chance_and_value(before, state)
            self.correction += float(value) - float(expect)
            return
        if self._pending is None:
            return
        self.correction += float(self.vf.value(state)) - self._pending
        self._pending = None

    def decision(self, state, actions: np.ndarray, probs: np.ndarray, taken: int,
                 taken_weights: Optional[np.ndarray] = None, legal: bool = False) -> None:
        """Add the term ``v(h taken) - sum_a probs[a] v(h a)`` (``actions`` int[A], ``probs`` float[A]: the
        acting hand's strategy; only actions of positive probability are valued).

        ``taken_weights`` (float[A], for an action played outside the support: the agent's
        ``taken_weights``, whose mean over its play is ``probs``): the term is
        ``sum_a (taken_weights[a] - probs[a]) v(h a)`` instead, still of zero mean.

        ``legal`` (default False): the actions of positive probability are known to be legal at ``state`` (a
        :class:`~cfrkit.poker.agent.CheckedAgent`'s checked answer): each child is reached by the state's
        ``apply_trusted`` (the same state) instead of a second check; an action of probability 0 with a weight is
        still applied with the check."""
        acts, qs = np.asarray(actions).tolist(), np.asarray(probs, dtype=np.float64).tolist()  # Python numbers
        support = [(int(a), q) for a, q in zip(acts, qs) if q > 0]
        if (taken_weights is None and len(support) == 1 and support[0][1] == 1.0
                and support[0][0] == int(taken)):
            # a pure decision: its term is v - 1.0 * v = 0.0 exactly, so the child's value is not needed
            return
        values = {}
        expected = 0.0
        stands_for = 0.0
        trusted = getattr(state, "apply_trusted", None) is not None if legal else False
        for j, (a, q) in enumerate(zip(acts, qs)):
            w = 0.0 if taken_weights is None else float(taken_weights[j])
            if q <= 0 and w == 0.0:
                continue
            a = int(a)
            child = state.clone()
            if trusted and q > 0:
                child.apply_trusted(a)
            else:
                child.apply_action(a)
            values[a] = float(self.vf.value(child))
            expected += q * values[a]
            stands_for += w * values[a]
        if taken_weights is not None:
            self.correction += stands_for - expected
            return
        if int(taken) not in values:
            raise ValueError(f"action {taken} taken outside the known strategy's support")
        self.correction += values[int(taken)] - expected


class AivatObserver(MatchObserver):
    """AIVAT on the match runner: a :class:`AivatTracker` per hand, ``"aivat"`` added to the result.

    ``value_function``: ``value(state)`` of player 0 in chips; default: the first of ``agent`` (one agent
    or a sequence, e.g. the match's agents) whose ``aivat_value_function(view)`` gives one (e.g. a
    blueprint's self-play values, :mod:`cfrkit.agents.blueprint_values`; a re-solving agent's own solves,
    :mod:`cfrkit.agents.resolve_values`), else, when both agents play
    without reading the board (random, always-call, fixed-range-raiser), the betting's exact expectation
    (:class:`~cfrkit.evaluation.board_blind_values.BoardBlindValueFunction`), else :class:`EquityValueFunction`.
    Known decisions are those of agents with ``hand_strategy`` (or ``own_strategy``) and either
    ``exact_support`` or ``taken_weights`` (random: its uniform raise sizes stand as the linear split between
    representative sizes, :class:`~cfrkit.poker.agent.PokerAgent`); before the agent acts its strategy for the
    hand it holds is asked (:meth:`~cfrkit.poker.agent.CheckedAgent.own_strategy`: one row, not all 1326), and
    an action outside its support is an error unless the agent has ``taken_weights``.  A pure decision (one
    action of probability 1) adds exactly 0.

    ``fit_opponent_deals`` (default 0: off): without ``value_function``, a blueprint against an agent with
    ``hand_strategy`` and no value function (:func:`fit_opponent_pair`) gives its tables against that agent's
    policy fitted on this many deals dealt with :func:`fit_seed` of the match's seed (module doc; ~2 CPU s per
    1,000 deals plus ~10 CPU s of tables, built once per blueprint and opponent and reused by later matches).
    """

    def __init__(self, value_function=None, agent=None, fit_opponent_deals: int = 0):
        if int(fit_opponent_deals) < 0:
            raise GameError(f"fit_opponent_deals must be >= 0, got {fit_opponent_deals}")
        self.value_function = value_function
        self.agent = agent
        self.fit_opponent_deals = int(fit_opponent_deals)
        self.vf = None
        self.values: List[float] = []
        self._tracker: Optional[AivatTracker] = None
        self._pending = None
        self._wrapped: Dict[int, CheckedAgent] = {}

    def match_start(self, match: MatchInfo) -> None:
        if match.game.num_players != 2:
            raise GameError(f"AIVAT here is for two-player games, not {match.game.game_string()!r}")
        self.view = match.view
        vf = self.value_function
        # the first agent (``agent`` may be a sequence, agents[0] first) that offers a value function
        candidates = self.agent if isinstance(self.agent, (list, tuple)) else [self.agent]
        pair = fit_opponent_pair(candidates) if vf is None and self.fit_opponent_deals else None
        if pair is not None:
            vf = pair[0].opponent_value_function(match.view, pair[1], self.fit_opponent_deals, fit_seed(match.seed))
        for agent in candidates:
            if vf is None and agent is not None and hasattr(agent, "aivat_value_function"):
                vf = agent.aivat_value_function(match.view)
        if (vf is None and len(candidates) == 2 and all(a is not None and board_blind(a) for a in candidates)
                and BoardBlindValueFunction.applies(match.view)):
            vf = BoardBlindValueFunction(match.view, candidates)
        self.vf = vf if vf is not None else EquityValueFunction(match.view)
        self.values = []

    def hand_start(self, hand: Hand) -> None:
        start = getattr(self.vf, "hand_start", None)
        if start is not None:  # value functions that depend on the seating (fitted tables)
            start(hand)
        self._tracker = AivatTracker(self.vf)

    def before_chance(self, hand: Hand, state) -> None:
        self._tracker.before_chance(state)

    def after_chance(self, hand: Hand, state) -> None:
        self._tracker.after_chance(state)

    def _checked(self, agent) -> CheckedAgent:
        """``agent`` as a :class:`CheckedAgent` (the match runner passes checked agents; ``play_hand`` may not)."""
        if isinstance(agent, CheckedAgent):
            return agent
        key = id(agent)
        hit = self._wrapped.get(key)
        if hit is None or hit.agent is not agent:
            hit = self._wrapped[key] = CheckedAgent(agent, self.view)
        return hit

    def decision(self, hand: Hand, state, seat: int) -> None:
        agent = hand.seat_agents[seat]
        self._pending = None
        inner = getattr(agent, "agent", agent)
        if not (getattr(agent, "exact_support", True) or hasattr(inner, "taken_weights")) or not (
                hasattr(inner, "hand_strategy") or hasattr(inner, "own_strategy")):
            return
        translation = getattr(self.vf, "translation_expectation", None)
        expect = translation(state, seat) if translation is not None else None
        try:
            # only the row of the hand the agent holds enters AIVAT's term: not all 1326 rows
            self._pending = self._checked(agent).own_strategy(state)
        except AgentInterfaceError as exc:  # an agent without the interface: no correction at its decisions
            if "does not provide" not in str(exc):
                raise
        if expect is not None and self.vf.translation_drawn():
            # the agent has drawn its translation of the last raise: a chance event of known distribution
            self._translation(state, expect)

    def _translation(self, state, expect: float) -> None:
        """Add the control variate of the agent's draw of a translation (``vf.translation_expectation``)."""
        self._tracker.correction += float(self.vf.value(state)) - expect

    def action(self, hand: Hand, state, seat: int, action: int) -> None:
        pending = self._pending
        if pending is None:
            return
        self._pending = None
        actions, row = pending
        # ``np.any((actions == action) & (row > 0))`` on a few Python numbers (2-3 actions)
        if any(a == action and q > 0 for a, q in zip(actions.tolist(), row.tolist())):
            # the row is CheckedAgent.own_strategy's: its actions of positive probability were checked legal
            self._tracker.decision(state, actions, row, action, legal=True)
            return
        agent = hand.seat_agents[seat]
        inner = getattr(agent, "agent", agent)
        where = f"agent {getattr(agent, 'name', agent)!r} at {self.view.describe(state)}"
        if not hasattr(inner, "taken_weights"):
            raise AgentInterfaceError(f"{where}: act played {action}, which its hand_strategy gives probability 0")
        w = np.asarray(inner.taken_weights(state, action, actions), dtype=np.float64)
        if w.shape != actions.shape or not np.isfinite(w).all() or (w < 0).any() or abs(float(w.sum()) - 1.0) > 1e-9:
            raise AgentInterfaceError(f"{where}: taken_weights of action {action} are not {actions.size} "
                                      f"non-negative weights summing to one: {w.tolist()}")
        if np.any((w > 0) & (row <= 0)):
            raise AgentInterfaceError(f"{where}: taken_weights of action {action} put weight on actions its "
                                      f"strategy gives probability 0")
        self._tracker.decision(state, actions, row, action, taken_weights=w, legal=True)

    def hand_end(self, hand: Hand) -> None:
        # the tracker's correction is player 0's; agents[0]'s value is its seat's sign of it
        u0 = hand.returns[0]
        sign = 1.0 if hand.seat_of_player[0] == 0 else -1.0
        self.values.append(sign * (u0 - self._tracker.correction))

    def match_end(self, result) -> None:
        if result is not None:
            result.add_estimator("aivat", np.array(self.values))
