"""Head-to-head matches between two poker agents, in process: plain, duplicate and AIVAT estimates.

API (used by the blueprint and platform code)::

    from cfrkit.evaluation.headtohead import play_match
    result = play_match([agent_a, agent_b], "holdem", hands=1000, seed=0, duplicate=True, aivat=True)
    result.estimate            # Estimate(mean, ci95, std, n) of agent_a's winnings in mbb/hand
    result.plain, result.duplicate_estimate, result.aivat    # each estimator (None when not run)
    result.hand_values         # chips agent_a won in each hand played, in play order
    print(result.summary())

Deals: hand ``i`` of a match seeded ``s`` is dealt with :func:`cfrkit.games.holdem.deals.deal_for_hand`
(Leduc: the same scheme over its deck), so a match can be replayed.  Seats: without ``duplicate``
agent A sits in seat ``i % 2`` for deal ``i``; with ``duplicate`` each deal is played twice, A in
seat 0 then in seat 1, the cards staying with the seat.

Estimators, all in milli-big-blinds per hand (mbb/h) of agent A, with 95% intervals
(1.96 standard errors):

* plain: the mean of the hands' winnings;
* duplicate: the mean over deals of the two seatings' average;
* AIVAT (``aivat=True``, :mod:`cfrkit.evaluation.aivat`): each hand's winnings minus control
  variates for chance and for decisions of agents with known strategies (``hand_strategy``),
  averaged over seatings when duplicate.

``std`` is per hand played (a duplicate pair counts as two hands), so ``plain.std ** 2 / other.std
** 2`` is the variance reduction factor (how many times fewer hands the other estimator needs).

Hands can be written as an ACPC log (``acpc_log=path``) and as PHH (``phh_log=path``, one
``[n]``-headed section per hand, pokerkit's ``.phhs`` layout); hold'em games only.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.evaluation.agent_checks import DEFAULT_TIME_LIMIT, CheckedAgent, agent_name
from cfrkit.evaluation.aivat import AivatTracker, EquityValueFunction
from cfrkit.evaluation.poker_view import PokerView, poker_view
from cfrkit.games.base import GameError


@dataclass
class Estimate:
    """A mean with its 95% interval: ``mean`` and ``ci95`` (half-width) in mbb/hand of agent A,
    ``std`` per hand played (mbb), ``n`` independent samples (hands, or deals when duplicate)."""

    mean: float
    ci95: float
    std: float
    n: int

    def __str__(self) -> str:
        return f"{self.mean:+.1f} +- {self.ci95:.1f} mbb/h (std {self.std:.0f} per hand, n={self.n})"


def estimate(samples: np.ndarray, hands_per_sample: int = 1) -> Estimate:
    """:class:`Estimate` from independent samples (mbb/h), each the mean of ``hands_per_sample`` hands."""
    x = np.asarray(samples, dtype=np.float64)
    n = x.size
    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    sd = float(x.std(ddof=1)) if n > 1 else float("nan")
    return Estimate(float(x.mean()), 1.96 * sd / math.sqrt(n) if n > 1 else float("inf"),
                    sd * math.sqrt(hands_per_sample), n)


@dataclass
class MatchResult:
    """Outcome of :func:`play_match` (see the module docstring for the estimators)."""

    game: str
    agents: Tuple[str, str]
    deals: int
    seed: int
    duplicate: bool
    big_blind: float
    #: chips agent A won in each hand played (play order), its deal index and A's seat
    hand_values: np.ndarray
    hand_deal: np.ndarray
    hand_seat: np.ndarray
    #: AIVAT values (chips, agent A) per hand played, or None
    aivat_values: Optional[np.ndarray] = None
    plain: Estimate = field(default=None)
    duplicate_estimate: Optional[Estimate] = None
    aivat: Optional[Estimate] = None

    @property
    def hands_played(self) -> int:
        return int(self.hand_values.size)

    @property
    def estimate(self) -> Estimate:
        """The lowest-variance estimator run: AIVAT, else duplicate, else plain."""
        return self.aivat or self.duplicate_estimate or self.plain

    def variance_reduction(self) -> dict:
        """Variance of plain winnings over each estimator's, per hand played (x times fewer hands)."""
        out = {}
        base = self.plain.std ** 2
        for key, est in (("duplicate", self.duplicate_estimate), ("aivat", self.aivat)):
            if est is not None and est.std > 0:
                out[key] = base / est.std ** 2
        return out

    def summary(self) -> str:
        lines = [f"{self.agents[0]} vs {self.agents[1]} in {self.game}: {self.hands_played} hands "
                 f"({self.deals} deals{', duplicate' if self.duplicate else ''}, seed {self.seed})",
                 f"  plain     {self.plain}"]
        if self.duplicate_estimate is not None:
            lines.append(f"  duplicate {self.duplicate_estimate}")
        if self.aivat is not None:
            lines.append(f"  aivat     {self.aivat}")
        vr = self.variance_reduction()
        if vr:
            lines.append("  variance reduction vs plain: " + ", ".join(f"{k} x{v:.1f}" for k, v in vr.items()))
        return "\n".join(lines)

    def to_dict(self) -> dict:
        out = {"game": self.game, "agents": list(self.agents), "deals": self.deals, "seed": self.seed,
               "duplicate": self.duplicate, "hands_played": self.hands_played, "big_blind": self.big_blind,
               "plain": asdict(self.plain), "variance_reduction": self.variance_reduction()}
        if self.duplicate_estimate is not None:
            out["duplicate_estimate"] = asdict(self.duplicate_estimate)
        if self.aivat is not None:
            out["aivat"] = asdict(self.aivat)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)


def play_hand(view: PokerView, seat_agents: Sequence[CheckedAgent], cards: Sequence[int],
              tracker: Optional[AivatTracker] = None):
    """Play one hand with ``seat_agents[p]`` in seat ``p`` and the chance outcomes ``cards``.

    Returns the terminal state.  With a ``tracker`` the AIVAT corrections are accumulated (known
    decisions: agents with ``exact_support`` whose ``hand_strategy`` is asked at each decision).
    """
    state = view.game.new_initial_state()
    seen = []
    for ag in seat_agents:
        if all(ag is not s for s in seen):
            ag.new_hand()
            seen.append(ag)
    k = 0
    while not state.is_terminal():
        if state.is_chance_node():
            if tracker is not None:
                tracker.before_chance(state)
            while state.is_chance_node():
                if k >= len(cards):
                    raise GameError(f"the deal ran out of cards after {k}")
                state.apply_action(int(cards[k]))
                k += 1
            if tracker is not None:
                tracker.after_chance(state)
            continue
        p = state.current_player()
        agent = seat_agents[p]
        if tracker is not None and agent.exact_support and hasattr(agent.agent, "hand_strategy"):
            try:
                hs = agent.hand_strategy(state)
            except Exception as exc:  # an agent without the interface: no correction at its decisions
                from cfrkit.agents.poker import AgentInterfaceError

                if not isinstance(exc, AgentInterfaceError) or "does not provide" not in str(exc):
                    raise
                hs = None
            action = agent.act(state)
            if hs is not None:
                row = hs.probs[view.hand_of(state, p)]
                if not np.any((hs.actions == action) & (row > 0)):
                    raise agent._fail(state, f"act played {action}, which its hand_strategy gives probability 0")
                tracker.decision(state, hs.actions, row, action)
        else:
            action = agent.act(state)
        state.apply_action(action)
    return state


def play_match(agents: Sequence, game, hands: int, seed: int = 0, duplicate: bool = True, aivat: bool = False,
               value_function=None, acpc_log: Optional[str] = None, phh_log: Optional[str] = None,
               progress: bool = False, time_limit: float = DEFAULT_TIME_LIMIT, first_deal: int = 0) -> MatchResult:
    """Play ``hands`` deals between ``agents[0]`` (A) and ``agents[1]`` (B) in ``game``.

    Args:
        agents: two poker agents (``act``, ``new_hand``; ``hand_strategy`` for AIVAT's known-strategy
            terms).  The same object may play both seats.
        game: a heads-up hold'em or Leduc-family game (string or Game).
        hands: number of deals; with ``duplicate`` each is played twice.
        seed: match seed (deal ``i`` = ``deal_for_hand(game, seed, i)``).
        first_deal: index of the first deal, so a long match can be split over processes
            (deals ``first_deal .. first_deal + hands - 1``) and the parts combined.
        duplicate: replay each deal with the seats swapped.
        aivat: compute AIVAT values (``value_function``, else ``agents[0].aivat_value_function(view)``
            when it exists, else :class:`~cfrkit.evaluation.aivat.EquityValueFunction`).
        acpc_log, phh_log: paths to write the hands to (hold'em only).
        progress: tqdm bar.  time_limit: seconds per agent answer.

    Returns a :class:`MatchResult` (estimates in mbb/hand of A).  Raises ``GameError`` for bad
    input and ``AgentInterfaceError`` for a wrong agent answer.
    """
    if len(agents) != 2:
        raise GameError(f"a match needs two agents, got {len(agents)}")
    hands = int(hands)
    if hands <= 0:
        raise GameError(f"hands must be positive, got {hands}")
    first_deal = int(first_deal)
    if first_deal < 0:
        raise GameError(f"first_deal must be >= 0, got {first_deal}")
    view = poker_view(game)
    from cfrkit.games.holdem.game import HoldemGame

    if (acpc_log or phh_log) and not isinstance(view.game, HoldemGame):
        raise GameError("ACPC and PHH hand logs are written for hold'em games only")
    checked = [CheckedAgent(a, view, time_limit) for a in agents]
    if agents[0] is agents[1]:
        checked[1] = checked[0]
    names = (agent_name(agents[0]), agent_name(agents[1]))
    if names[0] == names[1]:
        names = (names[0] + "-A", names[1] + "-B")
    vf = None
    if aivat:
        vf = value_function
        if vf is None and hasattr(agents[0], "aivat_value_function"):
            vf = agents[0].aivat_value_function(view)
        if vf is None:
            vf = EquityValueFunction(view)
    values: List[float] = []
    aivat_values: List[float] = []
    deal_idx: List[int] = []
    seats: List[int] = []
    logged = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=hands * (2 if duplicate else 1), desc=f"{names[0]} vs {names[1]}", unit="hand")
    try:
        for i in range(hands):
            cards = view.deal(seed, first_deal + i)
            for a_seat in ((0, 1) if duplicate else (i % 2,)):
                by_seat = [checked[0], checked[1]] if a_seat == 0 else [checked[1], checked[0]]
                tracker = AivatTracker(vf) if vf is not None else None
                state = play_hand(view, by_seat, cards, tracker)
                u0 = float(state.returns()[0])
                sign = 1.0 if a_seat == 0 else -1.0
                values.append(sign * u0)
                if tracker is not None:
                    aivat_values.append(sign * (u0 - tracker.correction))
                deal_idx.append(first_deal + i)
                seats.append(a_seat)
                if acpc_log or phh_log:
                    logged.append((state, len(logged), [names[0], names[1]] if a_seat == 0 else [names[1], names[0]]))
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        if logged:
            _write_logs(view, logged, acpc_log, phh_log)
    scale = 1000.0 / view.big_blind
    v = np.array(values)
    result = MatchResult(game=view.game.game_string(), agents=names, deals=hands, seed=int(seed),
                         duplicate=bool(duplicate), big_blind=view.big_blind, hand_values=v,
                         hand_deal=np.array(deal_idx, dtype=np.int64), hand_seat=np.array(seats, dtype=np.int64),
                         aivat_values=np.array(aivat_values) if aivat else None)
    result.plain = estimate(v * scale)
    if duplicate:
        result.duplicate_estimate = estimate(v.reshape(-1, 2).mean(axis=1) * scale, 2)
    if aivat:
        av = np.array(aivat_values)
        result.aivat = estimate(av.reshape(-1, 2).mean(axis=1) * scale, 2) if duplicate else estimate(av * scale)
    return result


def _write_logs(view: PokerView, logged, acpc_log: Optional[str], phh_log: Optional[str]) -> None:
    from cfrkit._io import atomic_open
    from cfrkit.games.holdem.history import to_phh, write_acpc_log

    if acpc_log:
        with atomic_open(acpc_log, "w") as f:
            write_acpc_log(logged, f, view.game)
    if phh_log:
        with atomic_open(phh_log, "w") as f:
            for state, number, names in logged:
                f.write(f"[{number + 1}]\n")
                f.write(to_phh(state, names=names, hand=number))
                f.write("\n")


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
