"""Head-to-head matches between two poker agents: plain, duplicate and AIVAT estimates.

The hands are played by the one match runner, :func:`cfrkit.poker.match.play_match`; this module
chooses the evaluators that attach to it::

    from cfrkit.evaluation.headtohead import head_to_head
    result = head_to_head("holdem", [agent_a, agent_b], 1000, seed=0, duplicate=True, aivat=True)
    result.estimate            # Estimate(mean, ci95, std, n) of agent_a's winnings in mbb/hand
    result.plain, result.duplicate_estimate, result.aivat    # each estimator (None when not run)
    result.hand_values         # chips agent_a won in each hand played, in play order
    print(result.summary())

Deals: hand ``i`` of a match seeded ``s`` is dealt with :func:`cfrkit.games.holdem.deals.deal_for_hand`
(Leduc: the same scheme over its deck), so a match can be replayed.  Seats: without ``duplicate``
agent A sits in seat ``i % 2`` for deal ``i``; with ``duplicate`` each deal is played twice, A in
seat 0 then in seat 1, the cards staying with the seat (:mod:`cfrkit.poker.schedule`).

Estimators, all in milli-big-blinds per hand (mbb/h) of agent A, with 95% intervals
(1.96 standard errors): plain, duplicate, and AIVAT (``aivat=True``,
:class:`cfrkit.evaluation.aivat.AivatObserver`: each hand's winnings minus control variates for
chance and for decisions of agents with known strategies).

Hands can be written as an ACPC log (``acpc_log=path``) and as PHH (``phh_log=path``), hold'em
games only (:mod:`cfrkit.poker.logs`).

:func:`play_match` (agents first) is the deprecated name of :func:`head_to_head`;
:func:`exact_match_value` is the exact value of a small-game match-up.
"""
from __future__ import annotations

from typing import Optional, Sequence

from cfrkit._deprecated import deprecated_alias
from cfrkit.evaluation.aivat import AivatObserver
from cfrkit.games.base import GameError
from cfrkit.poker.agent import DEFAULT_TIME_LIMIT, CheckedAgent
from cfrkit.poker.logs import AcpcLogWriter, PhhLogWriter
from cfrkit.poker.match import Estimate, MatchResult, estimate
from cfrkit.poker.match import play_match as run_match
from cfrkit.poker.view import PokerView, poker_view

__all__ = ["Estimate", "MatchResult", "estimate", "exact_match_value", "head_to_head", "match_observers",
           "play_match"]


def match_observers(agents: Sequence, aivat: bool = False, value_function=None, acpc_log: Optional[str] = None,
                    phh_log: Optional[str] = None, observers: Sequence = (), fit_opponent_deals: int = 0) -> list:
    """The observers a head-to-head match attaches: AIVAT (``value_function``, else a blueprint's tables against
    the other agent fitted on ``fit_opponent_deals`` deals where that applies and is asked for, else the first
    agent's ``aivat_value_function`` that gives one, else check-down equity;
    :class:`~cfrkit.evaluation.aivat.AivatObserver`), ACPC and PHH logs, then ``observers``."""
    out = []
    if aivat:
        out.append(AivatObserver(value_function, agent=list(agents), fit_opponent_deals=fit_opponent_deals))
    if acpc_log:
        out.append(AcpcLogWriter(acpc_log))
    if phh_log:
        out.append(PhhLogWriter(phh_log))
    return out + list(observers)


def head_to_head(game, agents: Sequence, hands: int, *, seed: int = 0, duplicate: bool = True, aivat: bool = False,
                 value_function=None, acpc_log: Optional[str] = None, phh_log: Optional[str] = None,
                 observers: Sequence = (), progress: bool = False, time_limit: float = DEFAULT_TIME_LIMIT,
                 first_deal: int = 0, fit_opponent_deals: int = 0) -> MatchResult:
    """Play ``hands`` deals between ``agents[0]`` (A) and ``agents[1]`` (B) in ``game`` with the chosen
    estimators and logs attached (see the module docstring).

    Args:
        game: a heads-up hold'em or Leduc-family game (string or Game).
        agents: two poker agents (``act``, ``new_hand``; ``hand_strategy`` for AIVAT's known-strategy
            terms).  The same object may play both seats.
        hands: number of deals; with ``duplicate`` each is played twice.
        seed, duplicate, first_deal, progress, time_limit: as :func:`cfrkit.poker.match.play_match`.
        aivat: add the AIVAT estimator (``value_function``: ``value(state)`` of player 0 in chips).
        fit_opponent_deals: with ``aivat`` and no ``value_function``, a blueprint against an agent with
            ``hand_strategy`` but no value function uses its tables against that agent's policy fitted on this
            many deals of a separate match (another seed; ~2 CPU s per 1,000 deals plus ~10 CPU s of tables);
            0 (default): off.
        acpc_log, phh_log: paths to write the hands to (hold'em only).
        observers: more :class:`~cfrkit.poker.match.MatchObserver` objects.

    Returns a :class:`~cfrkit.poker.match.MatchResult` (estimates in mbb/hand of A).  Raises
    ``GameError`` for bad input and ``AgentInterfaceError`` for a wrong agent answer.
    """
    if len(agents) != 2:
        raise GameError(f"a match needs two agents, got {len(agents)}")
    view = poker_view(game)  # heads-up hold'em or the Leduc family (one line otherwise)
    return run_match(view.game, agents, hands, seed=seed, duplicate=duplicate,
                     observers=match_observers(agents, aivat, value_function, acpc_log, phh_log, observers,
                                               fit_opponent_deals),
                     progress=progress, first_deal=first_deal, time_limit=time_limit)


def _legacy_play_match(agents: Sequence, game, hands: int, seed: int = 0, duplicate: bool = True, aivat: bool = False,
                       value_function=None, acpc_log: Optional[str] = None, phh_log: Optional[str] = None,
                       progress: bool = False, time_limit: float = DEFAULT_TIME_LIMIT,
                       first_deal: int = 0) -> MatchResult:
    return head_to_head(game, agents, hands, seed=seed, duplicate=duplicate, aivat=aivat,
                        value_function=value_function, acpc_log=acpc_log, phh_log=phh_log, progress=progress,
                        time_limit=time_limit, first_deal=first_deal)


play_match = deprecated_alias(_legacy_play_match, "cfrkit.evaluation.headtohead.play_match(agents, game, ...)",
                              "cfrkit.evaluation.headtohead.head_to_head(game, agents, ...) or "
                              "cfrkit.poker.play_match")


class _SeatPolicy:
    """Agents' per-hand strategies as one policy (``agents[p]`` in seat ``p``), for exact evaluation."""

    def __init__(self, view: PokerView, agents):
        self.view = view
        self.agents = [CheckedAgent(a, view) for a in agents]

    def action_probabilities(self, state, player=None):
        if player is None:
            player = state.current_player()
        hs = self.agents[player].hand_strategy(state)
        row = hs.probs[self.view.hand_of(state, player)]
        return {int(a): float(q) for a, q in zip(hs.actions, row) if q > 0}


def exact_match_value(agents: Sequence, game) -> float:
    """Exact expected chips per hand of ``agents[0]`` against ``agents[1]``, averaged over the two
    seatings (what a duplicate match estimates), by a walk of the compiled tree.  Small games
    (Leduc family) and agents with ``hand_strategy`` only."""
    from cfrkit.evaluation.exploitability import expected_values

    view = poker_view(game)
    a_first = expected_values(view.game, _SeatPolicy(view, [agents[0], agents[1]]))[0]
    a_second = expected_values(view.game, _SeatPolicy(view, [agents[1], agents[0]]))[1]
    return float(0.5 * (a_first + a_second))
