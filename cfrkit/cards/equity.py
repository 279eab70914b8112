"""Range-vectorised equity kernels for hold'em (numpy in, numpy out).

Every range or per-hand array has 1326 entries in the pair order of :mod:`cfrkit.cards.hands`
(pair {a < b} at index ``b * (b - 1) // 2 + a``); batched arrays have shape ``[B, 1326]``.

- :func:`board_strengths`: hand class (1..7462, higher wins) of every pair on a board; 0 = blocked.
- :func:`showdown_values`: for each of our pairs, opponent mass it beats minus mass it loses to,
  with card removal, in O(n) per range after one sort of the strengths. Multiply by the chips each
  player has put in the pot to get counterfactual showdown values (a tie is worth 0).
- :func:`fold_values`: opponent mass compatible with each pair (card removal); multiply by +-the
  folder's contribution for fold terminal values.
- :func:`hand_strength_stats`: E[HS], E[HS^2] and histograms of future river hand strength over
  exact enumeration of the cards to come (flop, turn, river boards; sampled boards preflop).
- :func:`runout_masses`: win, tie and compatible opponent mass of every pair summed over given boards.
- :func:`range_vs_range_equity`, :func:`hand_vs_range_equity`, :func:`hand_vs_hand_equity`,
  :func:`hand_vs_hand_counts` (the unparsed fast path on card ids).
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Optional, Tuple

import numpy as np

from cfrkit.cards.encoding import CardError, as_card_ids
from cfrkit.cards.hands import NUM_PAIRS, blocked_pairs, pair_index_of

try:
    from cfrkit._kernels import equity as _kernel
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError(
        "cfrkit's equity kernel is not built; run `python setup.py build_ext --inplace`"
    ) from exc


def _board_ids(board, allowed=(0, 3, 4, 5)):
    ids = as_card_ids(board)
    if len(ids) not in allowed:
        raise CardError(f"a board of {', '.join(map(str, allowed))} cards is expected, got {len(ids)}")
    return ids


def _check_range(rng, name="range") -> np.ndarray:
    arr = np.asarray(rng, dtype=np.float64)
    if arr.shape[-1:] != (NUM_PAIRS,) or arr.ndim not in (1, 2):
        raise ValueError(f"{name} must have shape (1326,) or (B, 1326), got {arr.shape}")
    if not np.isfinite(arr).all() or (arr < 0).any():
        raise ValueError(f"{name} weights must be finite and non-negative")
    return np.ascontiguousarray(arr)


def board_strengths(board) -> np.ndarray:
    """int32[1326]: class (1..7462) of each hole pair with the board (3, 4 or 5 cards); 0 if blocked."""
    ids = _board_ids(board, (3, 4, 5))
    return _kernel.board_strengths(np.array([ids], dtype=np.uint8))[0]


def _check_boards(boards, min_cards: int = 3) -> np.ndarray:
    """uint8[B, k] contiguous copy of ``boards`` (k = min_cards..5, ids 0..51, distinct in each row)."""
    arr = np.asarray(boards)
    if arr.ndim != 2 or not min_cards <= arr.shape[1] <= 5:
        raise CardError(f"boards must have shape (B, {min_cards}..5), got {arr.shape}")
    if arr.size and (arr.min() < 0 or arr.max() > 51):
        raise CardError("board card ids must be in 0..51")
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    srt = np.sort(arr, axis=1)
    if (np.diff(srt.astype(np.int16), axis=1) == 0).any():
        raise CardError("a board holds the same card twice")
    return arr


def board_strengths_batch(boards: np.ndarray) -> np.ndarray:
    """int32[B, 1326] strengths for a batch of boards ``uint8[B, k]`` (k = 3..5, distinct cards)."""
    return _kernel.board_strengths(_check_boards(boards))


def _prepare_showdown(strengths, opp_range):
    s = np.ascontiguousarray(np.asarray(strengths, dtype=np.int32))
    if s.shape[-1:] != (NUM_PAIRS,) or s.ndim not in (1, 2):
        raise ValueError(f"strengths must have shape (1326,) or (B, 1326), got {s.shape}")
    if (s < 0).any() or (s > 7462).any():
        raise ValueError("strengths must be hand classes 1..7462 or 0 for blocked pairs")
    r = _check_range(opp_range, "opp_range")
    squeeze = s.ndim == 1 and r.ndim == 1
    s2 = s.reshape(-1, NUM_PAIRS)
    r2 = r.reshape(-1, NUM_PAIRS)
    if s2.shape[0] > 1 and r2.shape[0] == 1:
        r2 = np.ascontiguousarray(np.broadcast_to(r2, (s2.shape[0], NUM_PAIRS)))
    if s2.shape[0] not in (1, r2.shape[0]):
        raise ValueError(f"{s2.shape[0]} strength rows do not match {r2.shape[0]} ranges")
    return s2, r2, squeeze


def showdown_masses(strengths, opp_range) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(win, lose, compatible) opponent mass for each pair, with card removal.

    ``strengths``: int32[1326] or [B, 1326] (from :func:`board_strengths`); ``opp_range``:
    float[1326] or [B, 1326]. Opponent pairs sharing a card with our pair or the board are excluded.
    Tie mass = compatible - win - lose. Blocked pairs get 0.
    """
    s2, r2, squeeze = _prepare_showdown(strengths, opp_range)
    win, lose, compat = _kernel.showdown_masses(s2, r2)
    if squeeze:
        return win[0], lose[0], compat[0]
    return win, lose, compat


def showdown_values(strengths, opp_range) -> np.ndarray:
    """Per-pair showdown value against an opponent range: beaten mass - losing mass (float64).

    Shape follows the inputs ([1326] or [B, 1326]). For a pot where each player has put in ``x``
    chips, the counterfactual showdown value of pair h is ``x * showdown_values(...)[h]``.
    O(1326) per range plus one O(n log n) sort per strength row.
    """
    win, lose, _ = showdown_masses(strengths, opp_range)
    return win - lose


def fold_values(board, opp_range) -> np.ndarray:
    """Opponent mass compatible with each pair (no card shared with the pair or the board).

    ``board``: 0..5 cards; ``opp_range``: float[1326] or [B, 1326]; O(1326) per range. Pairs touching
    the board get 0. Terminal fold value for pair h = +-(folder's contribution) * result[h].
    """
    ids = _board_ids(board, (0, 1, 2, 3, 4, 5))
    r = _check_range(opp_range, "opp_range")
    out = _kernel.fold_masses(np.array(ids, dtype=np.uint8), r.reshape(-1, NUM_PAIRS))
    return out[0] if r.ndim == 1 else out


def runout_boards(board, num_samples: Optional[int] = None, seed: int = 0) -> np.ndarray:
    """Complete 5-card boards extending ``board``: uint8[n, 5].

    With ``num_samples=None`` every completion (exact enumeration: 1 river, 48 from a turn,
    1176 from a flop); otherwise ``num_samples`` completions drawn uniformly with ``seed``.
    """
    ids = _board_ids(board, (0, 1, 2, 3, 4, 5))
    rest = np.array([c for c in range(52) if c not in set(ids)], dtype=np.uint8)
    need = 5 - len(ids)
    if num_samples is None:
        if need > 2:
            raise ValueError(
                f"exact enumeration from a {len(ids)}-card board is too large; pass num_samples"
            )
        if need == 0:
            combos = np.zeros((1, 0), dtype=np.uint8)
        else:
            combos = np.array(list(combinations(rest.tolist(), need)), dtype=np.uint8)
    else:
        if num_samples <= 0:
            raise ValueError("num_samples must be positive")
        gen = np.random.default_rng(seed)
        keys = gen.random((int(num_samples), rest.size))
        combos = rest[np.argpartition(keys, need, axis=1)[:, :need]] if need else np.zeros((num_samples, 0), np.uint8)
    prefix = np.broadcast_to(np.array(ids, dtype=np.uint8), (combos.shape[0], len(ids)))
    return np.ascontiguousarray(np.concatenate([prefix, combos], axis=1), dtype=np.uint8)


@dataclass
class HandStrengthStats:
    """Per-pair river hand-strength statistics over the runouts of a board (arrays of 1326).

    ehs, ehs2: E[HS] and E[HS^2] (float64); histogram: float64[1326, num_bins] distribution of HS
    over runouts (rows sum to 1); runouts: boards used per pair (0 for pairs touching the board,
    whose stats are 0).
    """

    ehs: np.ndarray
    ehs2: np.ndarray
    histogram: np.ndarray
    runouts: np.ndarray


def hand_strength_stats(board, opp_range=None, num_bins: int = 0,
                        num_samples: Optional[int] = None, seed: int = 0) -> HandStrengthStats:
    """E[HS], E[HS^2] and future hand-strength histograms of all 1326 pairs.

    HS on a complete board = P(win) + P(tie) / 2 against ``opp_range`` (uniform if None), with card
    removal. On a flop (turn) board the stats average over all 1176 (48) runouts disjoint from each
    pair (exact enumeration); preflop pass ``num_samples`` (sampled boards, ``seed``).
    """
    ids = _board_ids(board)
    if len(ids) == 0 and num_samples is None:
        raise ValueError("preflop hand strength needs num_samples (boards are sampled)")
    opp = np.ones(NUM_PAIRS) if opp_range is None else _check_range(opp_range, "opp_range")
    if opp.ndim != 1:
        raise ValueError("hand_strength_stats takes one opponent range of shape (1326,)")
    if num_bins < 0:
        raise ValueError("num_bins must be >= 0")
    boards = runout_boards(ids, None if len(ids) >= 3 else num_samples, seed)
    hs, hs2, cnt, hist, _, _, _ = _kernel.accumulate_runouts(boards, opp, int(num_bins))
    denom = np.maximum(cnt, 1)
    return HandStrengthStats(hs / denom, hs2 / denom, hist / denom[:, None], cnt)


def ehs(board, opp_range=None, num_samples=None, seed=0) -> np.ndarray:
    """E[HS] of every pair (float64[1326]); see :func:`hand_strength_stats`."""
    return hand_strength_stats(board, opp_range, 0, num_samples, seed).ehs


def runout_masses(boards, opp_range) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(win, tie, compatible) opponent mass of every pair, summed over complete boards.

    ``boards``: uint8[N, 5] complete boards (e.g. rows of :func:`runout_boards`); ``opp_range``:
    float[1326] opponent weights. On each board, pairs touching the board are skipped and opponent
    pairs sharing a card with our pair or the board are excluded (card removal). Returns three
    float64[1326] arrays; the equity of pair h over the boards is the ratio of sums
    ``(win[h] + tie[h] / 2) / compatible[h]`` (undefined where ``compatible[h] == 0``).
    """
    arr = _check_boards(boards, min_cards=5)
    opp = _check_range(opp_range, "opp_range")
    if opp.ndim != 1:
        raise ValueError("runout_masses takes one opponent range of shape (1326,)")
    _, _, _, _, win, tie, compat = _kernel.accumulate_runouts(arr, opp, 0)
    return win, tie, compat


def range_vs_range_equity(range1, range2, board=(), num_samples: Optional[int] = None,
                          seed: int = 0) -> Tuple[float, np.ndarray]:
    """Equity (win + tie / 2 probability) of ``range1`` against ``range2`` on ``board``.

    Returns (overall equity of range1, float64[1326] equity of each pair of range1 against range2;
    NaN where the pair touches the board or meets no compatible opponent hand). Exact on flop, turn
    and river boards; with fewer board cards ``num_samples`` boards are drawn (default 20000).
    """
    ids = _board_ids(board)
    r1 = _check_range(range1, "range1")
    r2 = _check_range(range2, "range2")
    if r1.ndim != 1 or r2.ndim != 1:
        raise ValueError("ranges must have shape (1326,)")
    if len(ids) < 3 and num_samples is None:
        num_samples = 20000
    boards = runout_boards(ids, None if len(ids) >= 3 else num_samples, seed)
    winm, tiem, compm = runout_masses(boards, r2)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_hand = np.where(compm > 0, (winm + 0.5 * tiem) / np.where(compm > 0, compm, 1), np.nan)
    live = r1 * ~blocked_pairs(ids)
    total = float(np.sum(live * compm))
    if total <= 0:
        raise ValueError("the two ranges have no compatible pair of hands on this board")
    return float(np.sum(live * (winm + 0.5 * tiem)) / total), per_hand


def hand_vs_range_equity(hand, opp_range, board=(), num_samples: Optional[int] = None,
                         seed: int = 0) -> float:
    """Equity of one hole pair ("AhKs") against a range on a board (see range_vs_range_equity)."""
    ids = _board_ids(board)
    h = pair_index_of(hand)
    r1 = np.zeros(NUM_PAIRS)
    r1[h] = 1.0
    as_card_ids(list(as_card_ids(hand)) + ids)  # duplicate check between hand and board
    eq, _ = range_vs_range_equity(r1, opp_range, ids, num_samples, seed)
    return eq


def hand_vs_hand_equity(hand1, hand2, board=()) -> Tuple[float, int, int, int]:
    """Exact equity of ``hand1`` against ``hand2`` over every completion of ``board`` (0..5 cards).

    Returns (equity = P(win) + P(tie) / 2, wins, ties, losses) counted over completions;
    preflop enumerates all 1,712,304 boards.
    """
    h1 = as_card_ids(hand1)
    h2 = as_card_ids(hand2)
    ids = _board_ids(board, (0, 1, 2, 3, 4, 5))
    if len(h1) != 2 or len(h2) != 2:
        raise CardError("hole pairs have 2 cards each")
    as_card_ids(h1 + h2 + ids)  # raises on any shared card
    w, t, l = _kernel.hand_vs_hand_counts(h1[0], h1[1], h2[0], h2[1], np.array(ids, dtype=np.uint8))
    n = w + t + l
    return (w + 0.5 * t) / n, int(w), int(t), int(l)


def hand_vs_hand_counts(hand1, hand2, board=()) -> Tuple[int, int, int]:
    """Exact (wins, ties, losses) of ``hand1`` against ``hand2``, counted over every completion of ``board``.

    ``hand1``, ``hand2``: 2 card ids (ints 0..51) each; ``board``: 0..5 card ids; the counts are numbers
    of boards. The fast path for callers that hold dealt card ids (a match's hole cards and board),
    with a cheap check (ids in range, all distinct); :func:`hand_vs_hand_equity` also parses card strings.
    """
    cards = (*hand1, *hand2, *board)
    if len(hand1) != 2 or len(hand2) != 2 or len(cards) > 9:
        raise CardError(f"two hole pairs of 2 card ids and a board of 0..5 card ids are expected, "
                        f"got {len(hand1)}, {len(hand2)} and {len(cards) - len(hand1) - len(hand2)}")
    if len(set(cards)) != len(cards) or min(cards) < 0 or max(cards) > 51:
        raise CardError(f"card ids must be distinct and in 0..51, got {cards}")
    w, t, l = _kernel.hand_vs_hand_counts(hand1[0], hand1[1], hand2[0], hand2[1],
                                          np.asarray(board, dtype=np.uint8))
    return int(w), int(t), int(l)
