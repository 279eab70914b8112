"""Results of stored matches: per-agent mbb/hand with 95% intervals, a leaderboard, a PNG.

Winnings are chips won per hand divided by the big blind, times 1000 (mbb/h).  Samples are
rotation groups: in duplicate mode the hands that share one deal (so the luck of the cards
cancels in the variance), otherwise each block of ``n`` consecutive hands (one full seat
rotation).  The interval is mean +- 1.96 x standard error over groups.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from cfrkit.games.base import GameError
from cfrkit.platform.storage import Store


@dataclass
class AgentResult:
    """One agent's record: hands played, chips won, mbb/h and the 95% half-width."""

    name: str
    hands: int
    chips: float
    mbb_per_hand: float
    ci95: float
    matches: int

    def line(self) -> str:
        ci = "   n/a" if not math.isfinite(self.ci95) else f"{self.ci95:8.1f}"
        return (f"{self.name:24s} {self.hands:9d} {self.mbb_per_hand:+10.1f} +- {ci}  "
                f"{'(> 0)' if self.mbb_per_hand - self.ci95 > 0 else '(< 0)' if self.mbb_per_hand + self.ci95 < 0 else ''}")


def _match_samples(store: Store, match_id: str):
    m = store.match(match_id)
    if m is None:
        raise GameError(f"no match {match_id!r} in {store.path}")
    from cfrkit.games.registry import load

    game = load(m["spec"]["game"])
    bb = float(game.definition.big_blind or 1)
    names = [p["name"] for p in store.players(match_id)]
    hands = store.hands(match_id)
    n = len(names)
    dup = bool(m["spec"]["duplicate"])
    returns = np.array([h["returns"] for h in hands], dtype=np.float64).reshape(-1, n)
    groups = np.array([h["deal"] if dup else h["hand"] // n for h in hands], dtype=np.int64)
    return names, returns, groups, bb


def agent_results(store: Store, match_ids: Optional[List[str]] = None) -> List[AgentResult]:
    """Per-agent results over ``match_ids`` (all stored matches if None), best first.

    An agent's samples are its group sums over every match it played (mbb per hand)."""
    ids = match_ids if match_ids is not None else store.match_ids()
    samples: Dict[str, List[Tuple[float, int]]] = {}
    count: Dict[str, int] = {}
    chips: Dict[str, float] = {}
    for mid in ids:
        names, returns, groups, bb = _match_samples(store, mid)
        if not len(returns):
            continue
        for j, name in enumerate(names):
            sums = np.bincount(groups, weights=returns[:, j])
            sizes = np.bincount(groups)
            keep = sizes > 0
            samples.setdefault(name, []).extend(zip((sums[keep] * 1000.0 / bb).tolist(), sizes[keep].tolist()))
            chips[name] = chips.get(name, 0.0) + float(returns[:, j].sum())
            count[name] = count.get(name, 0) + 1
    out = []
    for name, pairs in samples.items():
        s = np.array([p[0] for p in pairs])
        k = np.array([p[1] for p in pairs], dtype=np.float64)
        hands = int(k.sum())
        mean = float(s.sum() / hands)
        if len(s) > 1:
            # ratio estimator: per-hand mean over groups of (possibly) unequal size
            resid = s - mean * k
            se = math.sqrt(float(np.sum(resid ** 2)) / (len(s) - 1) / len(s)) / float(k.mean())
            half = 1.959964 * se
        else:
            half = float("inf")
        out.append(AgentResult(name, hands, chips[name], mean, half, count[name]))
    out.sort(key=lambda r: -r.mbb_per_hand)
    return out


def leaderboard_text(results: List[AgentResult], title: str) -> str:
    lines = [title, f"{'agent':24s} {'hands':>9s} {'mbb/h':>10s}    95% +-"]
    lines += [r.line() for r in results]
    return "\n".join(lines)


def plot_cumulative(store: Store, match_id: str, path: str) -> str:
    """PNG of each player's cumulative winnings (big blinds) over the hands of a match."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names, returns, _, bb = _match_samples(store, match_id)
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    for j, name in enumerate(names):
        ax.plot(np.cumsum(returns[:, j]) / bb, label=name)
    ax.set_xlabel("hand")
    ax.set_ylabel("cumulative winnings (big blinds)")
    ax.set_title(f"match {match_id}: {len(returns)} hands")
    ax.axhline(0, color="grey", lw=0.5)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
