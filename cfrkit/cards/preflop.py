"""Exact preflop all-in equity of every hole pair against every hole pair (1326 x 1326).

``preflop_equity_table()[h, j]`` is P(win) + P(tie) / 2 of pair ``h`` against pair ``j`` over all
1,712,304 boards of the 48 remaining cards (pair order of :mod:`cfrkit.cards.hands`); entries of pairs
that share a card are 0 (see :func:`preflop_compatible`).  Equity depends on the matchup only up to a
permutation of the suits and ``E[j, h] = 1 - E[h, j]``, so the table is built from the 47,008
canonical matchups (:func:`canonical_matchups`), each enumerated exactly by the equity kernel's
``hand_vs_hand_counts`` (about 5 ms on an idle core, threads release the GIL): minutes on two cores.
So that no user waits for that, the package ships the result per canonical matchup as exact integers
(``cards/data/preflop_matchups_v1.npy``: ``2 * wins + ties`` over the 1,712,304 boards, 188 KiB, written by
:func:`write_matchup_counts`); the table is expanded from it in about a second at first use and cached as
``$CFRKIT_TABLES/preflop_equity_v1.npy`` (default ``~/.cache/cfrkit``), 7 MiB of float32.  Without the
shipped file it is enumerated (with a progress bar).

:func:`preflop_equity_vs_range` turns it into the equity of one pair (or all pairs) against a range,
which is what LBR needs preflop instead of sampled boards.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from itertools import permutations
from typing import Optional, Tuple

import numpy as np

from cfrkit.cards.hands import HOLE_PAIRS, NUM_PAIRS, PAIR_INDEX_TABLE

try:
    from cfrkit._kernels import equity as _kernel
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError("cfrkit's equity kernel is not built; run `python setup.py build_ext --inplace`") from exc

TABLE_FILE = "preflop_equity_v1.npy"
#: the shipped exact counts per canonical matchup (order of :func:`canonical_matchups`)
MATCHUP_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "preflop_matchups_v1.npy")
#: boards of the 48 cards left after two hole pairs: C(48, 5)
BOARDS = 1_712_304
_TABLE: Optional[np.ndarray] = None


def cache_dir() -> str:
    """Directory of the table: ``$CFRKIT_TABLES`` or ``~/.cache/cfrkit``.  Not ``$CFRKIT_CACHE`` (the
    compiled-tree cache, which test sessions point at a fresh directory): the table is the same data
    on every run, so every session of a machine shares one copy."""
    return os.environ.get("CFRKIT_TABLES", os.path.join(os.path.expanduser("~"), ".cache", "cfrkit"))


def preflop_compatible() -> np.ndarray:
    """bool[1326, 1326]: True where the two pairs share no card."""
    a = HOLE_PAIRS.astype(np.int64)
    mask = (np.int64(1) << a[:, 0]) | (np.int64(1) << a[:, 1])
    return (mask[:, None] & mask[None, :]) == 0


def _matchup_keys(rows: Optional[np.ndarray] = None) -> Tuple[np.ndarray, np.ndarray]:
    """(key int64[R, 1326], flipped bool[R, 1326]) for every ordered matchup ``(h, j)``, ``h`` in ``rows``
    (pair indices; default all 1326).

    ``key`` encodes the canonical unordered matchup ``((a, b), (c, d))`` (low card first in each pair)
    as ``((a * 52 + b) * 52 + c) * 52 + d``: the smallest encoding over the 24 suit permutations and
    both orders.  ``flipped`` is True where the canonical form lists ``j`` first (then
    ``E[h, j] = 1 - E(canonical)``).  Incompatible matchups get key -1.
    """
    rows = np.arange(NUM_PAIRS) if rows is None else np.asarray(rows, dtype=np.int64)
    cards = HOLE_PAIRS.astype(np.int64)
    rank, suit = cards >> 2, cards & 3
    best = np.full((len(rows), NUM_PAIRS), np.iinfo(np.int64).max, dtype=np.int64)
    flipped = np.zeros((len(rows), NUM_PAIRS), dtype=bool)
    for perm in permutations(range(4)):
        mapped = 4 * rank + np.asarray(perm, dtype=np.int64)[suit]
        lo, hi = mapped.min(axis=1), mapped.max(axis=1)
        code = lo * 52 + hi  # pair code 0..2703
        fwd = code[rows, None] * 2704 + code[None, :]
        rev = code[None, :] * 2704 + code[rows, None]
        take_rev = rev < fwd
        k = np.where(take_rev, rev, fwd)
        better = k < best
        best[better] = k[better]
        flipped[better] = take_rev[better]
    compat = preflop_compatible()[rows]
    best[~compat] = -1
    flipped[~compat] = False
    return best, flipped


def canonical_matchups() -> np.ndarray:
    """int64[M, 4]: the canonical preflop matchups ``(a, b, c, d)`` (pair ``a b`` against ``c d``, card ids),
    one per class of matchups equal up to suit permutation and order (M = 47,008)."""
    # a suit permutation maps any matchup onto one whose first pair is its class's representative (one pair
    # per rank pair and suitedness) with the same canonical key: those 169 rows hold every key
    cards = HOLE_PAIRS.astype(np.int64)
    ranks, suits = cards // 4, cards % 4
    cls = (ranks.max(axis=1) * 13 + ranks.min(axis=1)) * 2 + (suits[:, 0] == suits[:, 1])
    key, _ = _matchup_keys(np.unique(cls, return_index=True)[1])
    uniq = np.unique(key[key >= 0])
    b = uniq // 2704
    j = uniq % 2704
    return np.stack([b // 52, b % 52, j // 52, j % 52], axis=1)


def _equities(matchups: np.ndarray) -> np.ndarray:
    out = np.empty(len(matchups))
    empty = np.zeros(0, dtype=np.uint8)
    for i, (a, b, c, d) in enumerate(matchups):
        w, t, l = _kernel.hand_vs_hand_counts(int(a), int(b), int(c), int(d), empty)
        out[i] = (w + 0.5 * t) / (w + t + l)
    return out


def build_preflop_equity_table(threads: Optional[int] = None, progress: bool = True) -> np.ndarray:
    """float32[1326, 1326]: exact preflop equity of pair ``h`` (row) against pair ``j`` (column), 0 where
    they share a card.  Enumerates the canonical matchups on ``threads`` threads (default: the CPUs)."""
    key, flipped = _matchup_keys()
    uniq, inverse = np.unique(key, return_inverse=True)
    inverse = inverse.reshape(key.shape)
    live = uniq >= 0
    reps = np.stack([uniq // 2704 // 52, uniq // 2704 % 52, uniq % 2704 // 52, uniq % 2704 % 52], axis=1)[live]
    threads = max(1, int(threads or os.cpu_count() or 1))
    chunks = np.array_split(np.arange(len(reps)), max(1, len(reps) // 250))
    values = np.empty(len(reps))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(reps), desc="preflop equity table", unit="matchup")
    try:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            for idx, vals in zip(chunks, pool.map(lambda ix: _equities(reps[ix]), chunks)):
                values[idx] = vals
                if bar is not None:
                    bar.update(len(idx))
    finally:
        if bar is not None:
            bar.close()
    return _expand(key, flipped, uniq, inverse, values)


def _expand(key, flipped, uniq, inverse, values, dtype=np.float32) -> np.ndarray:
    """The 1326 x 1326 table (``dtype``) from the equities ``values`` of the live canonical keys (``uniq >= 0``)."""
    per_key = np.zeros(len(uniq))
    per_key[uniq >= 0] = values
    eq = per_key[inverse]
    eq = np.where(flipped, 1.0 - eq, eq)
    eq[key < 0] = 0.0
    return eq.astype(dtype, copy=False)


def table_from_matchup_counts(counts: np.ndarray, dtype=np.float32) -> np.ndarray:
    """The table from ``counts`` (int[47,008]: ``2 * wins + ties`` of each canonical matchup of
    :func:`canonical_matchups`, in its order, over all :data:`BOARDS` boards); ``ValueError`` for a wrong
    shape or a count outside ``0 .. 2 * BOARDS``."""
    key, flipped = _matchup_keys()
    uniq, inverse = np.unique(key, return_inverse=True)
    live = int((uniq >= 0).sum())
    counts = np.asarray(counts)
    if counts.shape != (live,) or counts.dtype.kind not in "iu" or counts.min() < 0 or counts.max() > 2 * BOARDS:
        raise ValueError(f"expected {live} integer counts in 0..{2 * BOARDS}, got shape {counts.shape}")
    return _expand(key, flipped, uniq, inverse.reshape(key.shape), counts.astype(np.float64) / (2 * BOARDS), dtype)


def preflop_equity_vs_random() -> np.ndarray:
    """float64[1326]: each pair's exact preflop equity (win + tie / 2) against a uniformly random hand (every
    compatible pair, every board: each compatible pair has the same :data:`BOARDS` boards, so this is the row
    mean of the table), computed in float64 from the shipped counts (about a second; AA: 0.8520)."""
    if os.path.exists(MATCHUP_FILE):
        table = table_from_matchup_counts(np.load(MATCHUP_FILE), dtype=np.float64)
    else:
        table = preflop_equity_table().astype(np.float64)
    compat = preflop_compatible()
    return (table * compat).sum(axis=1) / compat.sum(axis=1)


def write_matchup_counts(table: np.ndarray, path: str = MATCHUP_FILE) -> np.ndarray:
    """Write the shipped counts file from an exact ``table`` (as :func:`build_preflop_equity_table` gives):
    each canonical matchup's ``2 * wins + ties``, recovered exactly by rounding (float32 keeps ~1e-7 of
    the equity, the counts' step is 1 / 3,424,608).  Returns the counts."""
    m = canonical_matchups()
    rows = PAIR_INDEX_TABLE[m[:, 0], m[:, 1]]
    cols = PAIR_INDEX_TABLE[m[:, 2], m[:, 3]]
    counts = np.rint(table[rows, cols].astype(np.float64) * 2 * BOARDS).astype(np.uint32)
    np.save(path, counts)
    return counts


def preflop_equity_table(build: bool = True, progress: bool = True) -> np.ndarray:
    """The exact table (float32[1326, 1326], read-only): from the cache, else expanded from the shipped
    matchup counts, else enumerated (minutes); saved to the cache at first use.

    With ``build=False`` and neither file, ``FileNotFoundError`` instead of enumerating.
    """
    global _TABLE
    if _TABLE is not None:
        return _TABLE
    path = os.path.join(cache_dir(), TABLE_FILE)
    table = None
    if os.path.exists(path):
        table = np.load(path)
        if table.shape != (NUM_PAIRS, NUM_PAIRS) or table.dtype != np.float32:
            table = None  # a damaged or foreign file: rebuild
    cached = table is not None
    if table is None and os.path.exists(MATCHUP_FILE):
        table = table_from_matchup_counts(np.load(MATCHUP_FILE))   # the shipped exact counts: about a second
    if table is None:
        if not build:
            raise FileNotFoundError(f"no preflop equity table at {path}; build it with "
                                    f"cfrkit.cards.preflop.preflop_equity_table()")
        table = build_preflop_equity_table(progress=progress)
    if not cached:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp.npy"
        np.save(tmp, table)
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old file or the whole new one
    table.setflags(write=False)
    _TABLE = table
    return table


def preflop_equity_vs_range(opp_range: np.ndarray, hand: Optional[int] = None) -> np.ndarray | float:
    """Exact preflop equity against a range (weights float[1326], any scale, card removal applied).

    With ``hand`` (pair index): that pair's equity (float; NaN when no compatible weight is left);
    else float64[1326] for every pair (NaN where no compatible weight).
    """
    w = np.asarray(opp_range, dtype=np.float64)
    if w.shape != (NUM_PAIRS,) or not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"opp_range must be 1326 finite non-negative weights, got shape {w.shape}")
    table = preflop_equity_table()
    if hand is not None:
        h = int(hand)
        if not 0 <= h < NUM_PAIRS:
            raise ValueError(f"hand must be a pair index 0..1325, got {hand!r}")
        a, b = HOLE_PAIRS[h]
        live = w.copy()
        live[PAIR_INDEX_TABLE[a][PAIR_INDEX_TABLE[a] >= 0]] = 0.0
        live[PAIR_INDEX_TABLE[b][PAIR_INDEX_TABLE[b] >= 0]] = 0.0
        total = live.sum()
        return float(table[h].astype(np.float64) @ live / total) if total > 0 else float("nan")
    compat = preflop_compatible()
    mass = compat.astype(np.float64) @ w
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(mass > 0, (table.astype(np.float64) @ w) / np.where(mass > 0, mass, 1.0), np.nan)
