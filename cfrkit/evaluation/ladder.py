"""A ladder's arithmetic: blocks of duplicate deals between two agents, the crosstable and a rating.

::

    from cfrkit.evaluation.ladder import play_block, pair_result, Crosstable
    block = play_block("holdem", agent_a, agent_b, first_deal=0, deals=100, seed=7, aivat=True)
    block.duplicate, block.aivat        # float64[deals]: mbb/h of A per deal (mean of its two seatings)
    table = Crosstable(["a", "b"], {(0, 1): pair_result("a", "b", block.duplicate, block.aivat)})
    print(table.text())                 # crosstable (mbb/h +- 95%) and each agent's rating

A *block* is ``deals`` consecutive seeded deals (``first_deal ..``) played by the match runner
(:func:`cfrkit.evaluation.headtohead.head_to_head`) in duplicate: each deal twice, the seats
swapped and the cards staying with the seat, so blocks of one pair split over processes and put back
together are the same match.  Per deal the block keeps A's winnings averaged over the two seatings
(duplicate) and, with ``aivat``, the AIVAT values of the same hands
(:class:`cfrkit.evaluation.aivat.AivatObserver`), both in mbb/h.

**Which estimator a pair reports.**  AIVAT is run when both agents answer ``hand_strategy`` with an
exact support (A^R, blueprints, always-call, fixed-range-raiser) or give the ``taken_weights`` of the
actions outside it (random: its uniform raise sizes split between representative sizes): then every
decision gets its control variate.  Otherwise only duplicate is run (AIVAT costs a pair 1.1-2.2x the
CPU of duplicate alone, here for the chance terms alone).  Where both were run the pair reports the one with the smaller per-deal variance on its deals: both are
unbiased, and with the check-down equity value function AIVAT's terms at big bets can add more
variance than they remove (measured: two blueprints against each other, benchmarks/RESULTS.md).  Choosing by
the sample variances of the same deals leaves the mean unbiased; it can only narrow the interval's
coverage by the chance that the lower sample variance is the unluckier of two, which vanishes as
the deals grow (hundreds per pair and up in a ladder).

**The rating.**  Each agent's rating is its mean winnings against the field, ``r_i = mean_{j != i}
m_ij`` (mbb/h), with ``Var r_i = sum_j se_ij^2 / (n - 1)^2``: the pairs are independent matches
(each pair has its own deal seed), so their variances add.  This is what a least-squares fit of the
additive model ``m_ij ~ r_i - r_j`` gives in a complete round robin (``r_i = (1/n) sum_j m_ij`` up
to the factor ``n / (n - 1)``, with sum-zero ratings), but it keeps its meaning in mbb/h against the
agents present and its interval is exact under the normal approximation of the pair means, with no
bootstrap; a Bradley-Terry fit would be for win/loss outcomes, which throws away the chip amounts.

:func:`training_evaluator` is the blueprint trainer's periodic evaluation on the same blocks: the
current average strategy against fixed references (duplicate + AIVAT, the same deals at every
evaluation, so the points of the curve share their luck) and optionally LBR
(:func:`cfrkit.evaluation.lbr.run_lbr`).

The resumable, stored and parallel ladder over many agents is :mod:`cfrkit.platform.ladder`.
"""
from __future__ import annotations

import hashlib
import gc
import math
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.evaluation.headtohead import head_to_head
from cfrkit.evaluation.lbr import run_lbr, settings_from
from cfrkit.games.base import GameError
from cfrkit.games.registry import load
from cfrkit.poker.agent import PokerAgent
from cfrkit.poker.match import Estimate, estimate
from cfrkit.poker.registry import agent_entry, make_agent, parse_spec
from cfrkit.poker.view import poker_view
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy

__all__ = ["Block", "Crosstable", "PairResult", "Rating", "deals_for_interval", "derived_seed", "field_ratings",
           "pair_result", "pilot_factor", "play_block", "supports_aivat", "training_evaluator"]

Z95 = 1.959964


def derived_seed(*parts: Any) -> int:
    """A seed in ``[0, 2**31)`` from ``parts`` (a stable hash: the same on every machine and run)."""
    text = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little") % (2 ** 31)


def supports_aivat(agent: Any) -> bool:
    """Whether AIVAT gets a control variate at every decision of ``agent``: it has ``hand_strategy``
    and its support holds every action it plays (``exact_support``, default True) or it gives the
    ``taken_weights`` of those outside it (random)."""
    own = getattr(type(agent), "hand_strategy", None)
    if own is None or own is PokerAgent.hand_strategy:  # the base class's answer is a refusal
        return False
    return bool(getattr(agent, "exact_support", True)) or hasattr(agent, "taken_weights")


@dataclass
class Block:
    """One block of a pair: deals ``first_deal .. first_deal + deals - 1``, each played in both seatings.

    ``duplicate``: float64[deals], A's winnings per deal (mean of its two hands) in mbb/h;
    ``aivat``: float64[deals] AIVAT values of the same hands (mbb/h) or None; ``hands``: hands
    played (2 per deal); ``cpu_seconds``: process CPU time of the block."""

    first_deal: int
    deals: int
    duplicate: np.ndarray
    aivat: Optional[np.ndarray]
    hands: int
    cpu_seconds: float


def play_block(game, agent_a, agent_b, first_deal: int, deals: int, seed: int, aivat: bool = True,
               observers: Sequence = (), time_limit: float = float("inf"), fit_opponent_deals: int = 0) -> Block:
    """Play deals ``first_deal .. first_deal + deals - 1`` (deal seed ``seed``) between two agents,
    duplicate, with AIVAT when ``aivat`` (value function: ``agent_a``'s ``aivat_value_function`` if it
    has one, else ``agent_b``'s, else check-down equity) and ``observers`` attached (e.g. the platform's
    :class:`~cfrkit.platform.storage.StoreObserver`).  ``fit_opponent_deals`` > 0: a blueprint against an agent
    with ``hand_strategy`` but no value function uses its tables against that agent's policy fitted on that many
    deals of a separate match (:class:`~cfrkit.evaluation.aivat.AivatObserver`; fitted once per agent pair and
    deal seed, ~2 CPU s per 1,000 deals plus ~10 CPU s of tables, and reused by the pair's later blocks).
    Returns a :class:`Block` (mbb/h of A per deal).

    The objects alive when the block starts (the agents, their tables and caches) are kept out of the garbage
    collector's passes during the block (``gc.freeze``, undone after it) unless the process has frozen objects
    itself: the block's full collections then walk only what the block made (A^R vs A^C: 0.14 of 0.19 gc CPU s of
    an 800-deal block were two full collections over the agents' kept objects)."""
    view = poker_view(game)
    t0 = time.process_time()
    freeze = gc.isenabled() and gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    try:
        res = head_to_head(view.game, [agent_a, agent_b], deals, seed=seed, duplicate=True, aivat=aivat,
                           observers=observers, first_deal=first_deal, time_limit=time_limit,
                           fit_opponent_deals=fit_opponent_deals)
    finally:
        if freeze:
            gc.unfreeze()
    scale = 1000.0 / view.big_blind
    dup = res.hand_values.reshape(-1, 2).mean(axis=1) * scale
    av = None if res.aivat_values is None else res.aivat_values.reshape(-1, 2).mean(axis=1) * scale
    return Block(int(first_deal), int(deals), dup, av, res.hands_played, time.process_time() - t0)


def _negated(e: Optional[Estimate]) -> Optional[Estimate]:
    return None if e is None else Estimate(-e.mean, e.ci95, e.std, e.n)


@dataclass
class PairResult:
    """A against B: ``estimate`` (the reported one, ``estimator`` ``"aivat"`` or ``"duplicate"``),
    ``duplicate`` and ``aivat`` (None when not run), all mbb/h of A with 95% intervals over deals
    (``std`` per hand, as :class:`~cfrkit.poker.match.Estimate`); ``deals`` and ``hands`` played."""

    a: str
    b: str
    estimator: str
    estimate: Estimate
    duplicate: Estimate
    aivat: Optional[Estimate]
    deals: int

    @property
    def hands(self) -> int:
        return 2 * self.deals

    @property
    def se(self) -> float:
        """Standard error of :attr:`estimate`'s mean (mbb/h)."""
        return self.estimate.ci95 / Z95

    def flipped(self) -> "PairResult":
        """The same match seen from B (every mean negated, intervals unchanged)."""
        return PairResult(self.b, self.a, self.estimator, _negated(self.estimate), _negated(self.duplicate),
                          _negated(self.aivat), self.deals)

    def variance_reduction(self) -> Optional[float]:
        """Variance of duplicate over AIVAT per deal (x times fewer deals), or None without AIVAT."""
        if self.aivat is None or not self.aivat.std > 0:
            return None
        return float(self.duplicate.std ** 2 / self.aivat.std ** 2)

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "estimator": self.estimator, "deals": self.deals, "hands": self.hands,
                "estimate": asdict(self.estimate), "duplicate": asdict(self.duplicate),
                "aivat": None if self.aivat is None else asdict(self.aivat),
                "variance_reduction": self.variance_reduction()}


def pilot_factor(pilot_blocks: Optional[int]) -> float:
    """``(t_{k-1, 0.975} / z_{0.975})^2`` for a pilot of ``k = pilot_blocks`` blocks (>= 2): how many times the deals
    of the normal rule a pair plays when the uncertainty of its pilot's variance is counted (Stein's two-stage rule
    with the blocks as its units: 2.00 for 5 blocks, 1.33 for 10, 1.14 for 20, 1.07 for 40); None: 1 (the normal
    quantile, the rule before).  Raises ``ValueError`` for fewer than 2 blocks."""
    if pilot_blocks is None:
        return 1.0
    if int(pilot_blocks) < 2:
        raise ValueError(f"the t rule needs a pilot of at least 2 blocks, got {pilot_blocks}")
    from scipy.stats import t as student_t  # scipy: already needed by the fitted value tables

    return float((student_t.ppf(0.975, int(pilot_blocks) - 1) / Z95) ** 2)


def deals_for_interval(result: PairResult, target_ci: float, pilot_blocks: Optional[int] = None) -> int:
    """Deals a pair needs for a 95% half-width of ``target_ci`` mbb/h, from ``result`` (a pilot: its reported
    estimator's half-width over its deals), as ``ceil(deals x f x (ci95 / target_ci)^2)``, at least 1, with
    ``f`` = :func:`pilot_factor` of ``pilot_blocks`` (the pilot's blocks, for the t rule; None: ``f = 1``).

    The interval narrows with the square root of the deals, so this is the pilot's per-deal variance carried
    to the target (Stein's two-stage rule: fixed once from the pilot, the later deals do not move it, so the
    mean of all the deals keeps no stopping bias).  Stein's rule proper uses the t quantile of the pilot's
    degrees of freedom: a pilot's variance is itself uncertain, and with ``f = 1`` a pair ends above the target
    as often as its pilot's variance comes out low (heavy-tailed poker winnings: the pairs of a blueprint or A^R
    against a raising agent, 5-block pilots, ended above 1.05 x the target in 43-57% of replays,
    :mod:`cfrkit.platform.ladder`).  The blocks, not the deals, are counted as its units:
    block means are near normal, single deals are not."""
    if not (isinstance(target_ci, (int, float)) and math.isfinite(target_ci) and target_ci > 0):
        raise ValueError(f"target_ci must be a positive number of mbb/h, got {target_ci!r}")
    ci = float(result.estimate.ci95)
    if not math.isfinite(ci):
        return int(result.deals)
    return max(1, int(math.ceil(result.deals * pilot_factor(pilot_blocks) * (ci / float(target_ci)) ** 2)))


def pair_result(a: str, b: str, duplicate: np.ndarray, aivat: Optional[np.ndarray] = None) -> PairResult:
    """:class:`PairResult` of A against B from per-deal values (float64[deals], mbb/h of A, the same
    deals): AIVAT is reported when given and no more variable than duplicate, else duplicate (see the
    module docstring).  Raises ``GameError`` for no deals or mismatched lengths."""
    d = np.asarray(duplicate, dtype=np.float64)
    if d.ndim != 1 or d.size == 0:
        raise GameError(f"pair {a} vs {b}: no deals played")
    dup = estimate(d, 2)
    av = None
    if aivat is not None:
        v = np.asarray(aivat, dtype=np.float64)
        if v.shape != d.shape:
            raise GameError(f"pair {a} vs {b}: {v.size} AIVAT values for {d.size} deals")
        av = estimate(v, 2)
    use_aivat = av is not None and av.std <= dup.std
    return PairResult(a, b, "aivat" if use_aivat else "duplicate", av if use_aivat else dup, dup, av, int(d.size))


@dataclass
class Rating:
    """An agent's mean winnings against the field (mbb/h) and its 95% half-width; ``pairs``: the
    opponents it has results against."""

    name: str
    mean: float
    ci95: float
    pairs: int


def field_ratings(names: Sequence[str], pairs: Dict[Tuple[int, int], PairResult]) -> List[Rating]:
    """Each agent's mean result against the opponents it has played, with ``ci95 = 1.96 sqrt(sum_j
    se_ij^2) / k`` (``k`` opponents; independent pairs), in ``names`` order (see the module docstring).

    ``pairs[(i, j)]`` is agent ``i`` against agent ``j`` (either orientation may be given)."""
    n = len(names)
    means: List[List[float]] = [[] for _ in range(n)]
    variances: List[List[float]] = [[] for _ in range(n)]
    for (i, j), pr in pairs.items():
        for me, other_mean in ((i, pr.estimate.mean), (j, -pr.estimate.mean)):
            means[me].append(other_mean)
            variances[me].append(pr.se ** 2)
    out = []
    for i, name in enumerate(names):
        k = len(means[i])
        if k == 0:
            out.append(Rating(name, float("nan"), float("nan"), 0))
            continue
        out.append(Rating(name, float(np.mean(means[i])), Z95 * math.sqrt(float(np.sum(variances[i]))) / k, k))
    return out


class Crosstable:
    """Results of every pair of ``names``: ``pairs[(i, j)]`` (``i < j`` or either orientation) is
    agent ``i`` against agent ``j``.  :meth:`cell` reads any orientation (``cell(j, i)`` is the
    negation of ``cell(i, j)``); :meth:`matrix` gives the means and half-widths (mbb/h of the row
    agent); :attr:`ratings` the field ratings (:func:`field_ratings`)."""

    def __init__(self, names: Sequence[str], pairs: Dict[Tuple[int, int], PairResult]):
        self.names = list(names)
        self.pairs = dict(pairs)
        self.ratings = field_ratings(self.names, self.pairs)

    def cell(self, i: int, j: int) -> Optional[PairResult]:
        """Agent ``i`` against agent ``j`` (None when not played or ``i == j``)."""
        if (i, j) in self.pairs:
            return self.pairs[(i, j)]
        if (j, i) in self.pairs:
            return self.pairs[(j, i)].flipped()
        return None

    def matrix(self) -> Tuple[np.ndarray, np.ndarray]:
        """``(mean, ci95)``: float64[n, n] mbb/h of the row agent against the column agent (NaN where
        not played); ``mean`` is antisymmetric."""
        n = len(self.names)
        mean = np.full((n, n), np.nan)
        ci = np.full((n, n), np.nan)
        for i in range(n):
            for j in range(n):
                c = self.cell(i, j)
                if c is not None:
                    mean[i, j], ci[i, j] = c.estimate.mean, c.estimate.ci95
        return mean, ci

    def order(self) -> List[int]:
        """Agent indices by rating, best first (unrated last)."""
        return sorted(range(len(self.names)), key=lambda i: (-np.nan_to_num(self.ratings[i].mean, nan=-np.inf)))

    def text(self) -> str:
        """The crosstable (row agent's mbb/h +- 95%; ``*``: AIVAT, else duplicate) and the ratings."""
        order = self.order()
        width = max(12, max(len(n) for n in self.names) + 1)
        cellw = 18
        lines = ["crosstable: mbb/h of the row agent against the column agent, 95% intervals "
                 "(* AIVAT, else duplicate)"]
        lines.append(" " * width + "".join(f"{self.names[j][:cellw - 1]:>{cellw}}" for j in order))
        for i in order:
            row = f"{self.names[i]:<{width}}"
            for j in order:
                c = self.cell(i, j)
                if c is None:
                    row += f"{'.':>{cellw}}"
                else:
                    mark = "*" if c.estimator == "aivat" else " "
                    row += f"{c.estimate.mean:+8.0f} +-{c.estimate.ci95:5.0f}{mark}".rjust(cellw)
            lines.append(row)
        lines.append("")
        lines.append("rating: mean mbb/h against the field, 95% interval from the pairs' variances")
        for rank, i in enumerate(order, 1):
            r = self.ratings[i]
            lines.append(f"{rank:2d}. {r.name:<{width}} {r.mean:+9.1f} +- {r.ci95:7.1f}   ({r.pairs} opponents)")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"agents": self.names,
                "pairs": [self.pairs[k].to_dict() for k in sorted(self.pairs)],
                "ratings": [asdict(r) for r in self.ratings]}


# ---------------------------------------------------------------------- the blueprint trainer's evaluation
def training_evaluator(references: Sequence[str], deals: int, seed: int = 12345, aivat: bool = True,
                       lbr: Optional[str] = None, lbr_deals: int = 200, processes: int = 1
                       ) -> Callable[[Any], Dict[str, dict]]:
    """``evaluate(trainer) -> {name: result}`` for ``cfrkit blueprint train --eval-minutes``.

    The trainer's current average strategy plays one :func:`play_block` of ``deals`` duplicate deals
    against each reference (registry specs, built once with fixed seeds; the same deals at every
    evaluation, so the curve's points share the cards' luck and their differences are sharper),
    with AIVAT where both sides support it.  With ``lbr`` (``"FCPA/1-4"``, ``"FC/3-4"``, ...) LBR runs
    against the blueprint over ``lbr_deals`` deals (``processes`` workers).  Results: ``mbb_per_hand``
    and ``ci95`` (mbb/h of the blueprint; LBR: mbb/g LBR wins), ``estimator``, ``deals``, ``hands``.
    Unknown references or a bad LBR setting raise ``GameError`` now, before training starts."""
    for spec in references:
        agent_entry(parse_spec(spec)[0])
    if deals <= 0 or lbr_deals <= 0:
        raise GameError(f"evaluation deals must be positive, got {deals} and {lbr_deals}")
    lbr_settings = None
    if lbr:
        bets, _, rounds = lbr.partition("/")
        lbr_settings = settings_from(bets, rounds or "1-4")

    def evaluate(trainer) -> Dict[str, dict]:
        game = load(trainer.tree.game_string)
        out: Dict[str, dict] = {}
        for spec in references:
            # built afresh with the same seed each time: every evaluation is the same match but for the strategy
            ref = make_agent(spec, game=game, seed=derived_seed(seed, spec))
            agent = BlueprintAgent(BlueprintStrategy.from_trainer(trainer), seed=seed)
            use_aivat = aivat and supports_aivat(agent) and supports_aivat(ref)
            block = play_block(game, agent, ref, 0, deals, seed, aivat=use_aivat)
            pr = pair_result("blueprint", spec, block.duplicate, block.aivat)
            out[spec] = {"mbb_per_hand": round(pr.estimate.mean, 1), "ci95": round(pr.estimate.ci95, 1),
                         "estimator": pr.estimator, "deals": pr.deals, "hands": pr.hands,
                         "duplicate": round(pr.duplicate.mean, 1), "duplicate_ci95": round(pr.duplicate.ci95, 1)}
        if lbr_settings is not None:
            agent = BlueprintAgent(BlueprintStrategy.from_trainer(trainer), seed=seed)
            res = run_lbr(agent, game, lbr_deals, lbr_settings, seed=seed, processes=processes)
            out[f"lbr {lbr}"] = {"mbb_per_hand": round(res.mbb_per_game, 1), "ci95": round(res.ci95, 1),
                                 "estimator": "lbr", "deals": lbr_deals, "hands": 2 * lbr_deals}
        return out

    return evaluate
