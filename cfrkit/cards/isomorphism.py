"""Suit isomorphism: a lossless index of hold'em hands up to suit relabelling, round by round.

Two hands are isomorphic when a permutation of the four suits maps one onto the other, with the
cards of each round kept apart (hole cards are not board cards). :class:`HandIndexer` numbers the
isomorphism classes of round ``r`` (cards of rounds 0..r) densely as 0..size(r)-1, and maps an
index back to a canonical representative. For hold'em (rounds of 2, 3, 1, 1 cards) the sizes are
169; 1,286,792; 55,190,538; 2,428,287,420.

Cards are given in deal order: hole cards first, then flop, turn, river. The returned
representative lists each round's cards in increasing id order.
"""
from __future__ import annotations

from functools import lru_cache
from itertools import product
from typing import List, Sequence, Tuple

import numpy as np

from cfrkit.cards.encoding import RANK_CHARS, CardError, as_card_ids

try:
    from cfrkit._kernels import isomorph as _kernel
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError(
        "cfrkit's isomorphism kernel is not built; run `python setup.py build_ext --inplace`"
    ) from exc

HOLDEM_ROUNDS = (2, 3, 1, 1)


def _configurations(sizes: Tuple[int, ...]) -> np.ndarray:
    """Sorted int64 keys of all ways to split each round's card count over four suits."""
    nr = len(sizes)
    vectors = [v for v in product(*[range(s + 1) for s in sizes]) if sum(v) <= 13]
    codes = sorted({sum(x << (3 * j) for j, x in enumerate(v)) for v in vectors}, reverse=True)
    vec_of = {sum(x << (3 * j) for j, x in enumerate(v)): v for v in vectors}
    keys = []

    def rec(start, chosen, remaining):
        if len(chosen) == 4:
            if all(r == 0 for r in remaining):
                k = 0
                for c in chosen:
                    k = (k << 12) | c
                keys.append(k)
            return
        for i in range(start, len(codes)):
            v = vec_of[codes[i]]
            if all(v[j] <= remaining[j] for j in range(nr)):
                rec(i, chosen + [codes[i]], [remaining[j] - v[j] for j in range(nr)])

    rec(0, [], list(sizes))
    return np.array(sorted(keys), dtype=np.int64)


class HandIndexer:
    """Index hands of successive rounds up to suit isomorphism (default: hold'em, 2/3/1/1 cards)."""

    def __init__(self, rounds: Sequence[int] = HOLDEM_ROUNDS):
        rounds = tuple(int(r) for r in rounds)
        if not rounds or len(rounds) > 4 or any(r < 1 or r > 5 for r in rounds) or sum(rounds) > 13:
            raise ValueError(f"rounds must be 1..4 rounds of 1..5 cards (13 at most), got {rounds}")
        self.rounds = rounds
        self._tables = []
        for r in range(len(rounds)):
            sizes = np.array(rounds[: r + 1], dtype=np.int32)
            keys = _configurations(rounds[: r + 1])
            counts = _kernel.count_for(sizes, keys)
            offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
            self._tables.append((sizes, keys, offsets, int(counts.sum())))

    @property
    def num_rounds(self) -> int:
        return len(self.rounds)

    def size(self, round_: int) -> int:
        """Number of isomorphism classes of hands dealt through round ``round_`` (0-based)."""
        return self._table(round_)[3]

    def index_tables(self, round_: int):
        """``(sizes int32[r + 1], keys int64[c], offsets int64[c])`` of round ``round_``: what the compiled
        index function reads (cards per round, sorted configuration keys, their first indices); for kernels
        that index hands themselves (the blueprint trainer's bucket-table lookups)."""
        sizes, keys, offsets, _ = self._table(round_)
        return sizes, keys, offsets

    def cards_in_round(self, round_: int) -> int:
        """Total cards dealt through round ``round_``."""
        return sum(self.rounds[: self._check_round(round_) + 1])

    def _check_round(self, round_: int) -> int:
        if not 0 <= int(round_) < len(self.rounds):
            raise ValueError(f"round must be 0..{len(self.rounds) - 1}, got {round_!r}")
        return int(round_)

    def _table(self, round_):
        return self._tables[self._check_round(round_)]

    def _round_of(self, ncards: int) -> int:
        total = 0
        for r, s in enumerate(self.rounds):
            total += s
            if total == ncards:
                return r
        raise CardError(
            f"{ncards} cards do not end a round; rounds deal {', '.join(map(str, self.rounds))} cards"
        )

    def index(self, cards) -> int:
        """Index of one hand (card string or ids in deal order); the round follows from its length."""
        ids = as_card_ids(cards)
        return int(self.index_batch(np.array([ids], dtype=np.uint8))[0])

    def index_batch(self, cards: np.ndarray) -> np.ndarray:
        """Indices of many hands: ``uint8[n, k]`` (k cards through some round) -> ``int64[n]``."""
        arr = np.asarray(cards)
        if arr.ndim != 2:
            raise CardError(f"index_batch needs a 2-D array of card ids, got shape {arr.shape}")
        r = self._round_of(arr.shape[1])
        if arr.size and (arr.min() < 0 or arr.max() > 51):
            raise CardError("card ids must be in 0..51")
        arr = np.ascontiguousarray(arr, dtype=np.uint8)
        sizes, keys, offsets, _ = self._tables[r]
        out, bad = _kernel.index_batch(arr, sizes, keys, offsets)
        if bad >= 0:
            raise CardError(f"row {bad} holds a duplicate card: {arr[bad].tolist()}")
        return out

    def unindex(self, index: int, round_: int) -> List[int]:
        """Canonical representative (card ids in deal order) of ``index`` in round ``round_``."""
        return self.unindex_batch(np.array([index], dtype=np.int64), round_)[0].tolist()

    def unindex_batch(self, indices, round_: int) -> np.ndarray:
        """Canonical representatives of many indices: int64[n] -> uint8[n, cards_in_round]."""
        sizes, keys, offsets, total = self._table(round_)
        idx = np.ascontiguousarray(np.asarray(indices, dtype=np.int64).reshape(-1))
        if idx.size and (idx.min() < 0 or idx.max() >= total):
            raise ValueError(f"indices of round {round_} must be in 0..{total - 1}")
        return _kernel.unindex_batch(idx, sizes, keys, offsets)

    def canonicalize(self, cards) -> List[int]:
        """The canonical representative isomorphic to a hand (card string or ids in deal order)."""
        ids = as_card_ids(cards)
        return self.unindex(self.index(ids), self._round_of(len(ids)))


@lru_cache(maxsize=1)
def holdem_indexer() -> HandIndexer:
    """Shared hold'em indexer (2, 3, 1, 1 cards)."""
    return HandIndexer(HOLDEM_ROUNDS)


_PREFLOP_NAMES = None


def preflop_class_name(index: int) -> str:
    """Conventional name of a preflop class index 0..168 ("AA", "AKs", "72o")."""
    global _PREFLOP_NAMES
    if _PREFLOP_NAMES is None:
        ix = holdem_indexer()
        reps = ix.unindex_batch(np.arange(169), 0)
        names = []
        for a, b in reps.tolist():
            hi, lo = max(a >> 2, b >> 2), min(a >> 2, b >> 2)
            name = RANK_CHARS[hi] + RANK_CHARS[lo]
            if hi != lo:
                name += "s" if (a & 3) == (b & 3) else "o"
            names.append(name)
        _PREFLOP_NAMES = names
    if not 0 <= int(index) < 169:
        raise ValueError(f"preflop class index must be 0..168, got {index!r}")
    return _PREFLOP_NAMES[int(index)]


def canonical_boards(num_cards: int) -> Tuple[np.ndarray, np.ndarray]:
    """Boards of ``num_cards`` (1..5) cards up to suit isomorphism (board as one unordered set).

    Returns (representatives uint8[m, num_cards] in index order, number of raw boards in each
    class int64[m]); m = 1,755 flops, 16,432 four-card and 134,459 five-card boards, and the
    counts sum to C(52, num_cards).
    """
    from itertools import combinations

    if not 1 <= int(num_cards) <= 5:
        raise ValueError(f"num_cards must be 1..5, got {num_cards!r}")
    ix = HandIndexer((int(num_cards),))
    raw = np.array(list(combinations(range(52), int(num_cards))), dtype=np.uint8)
    counts = np.bincount(ix.index_batch(raw), minlength=ix.size(0)).astype(np.int64)
    return ix.unindex_batch(np.arange(ix.size(0)), 0), counts


def pair_preflop_classes() -> np.ndarray:
    """Preflop class (0..168, see :func:`preflop_class_name`) of each of the 1326 hole pairs,
    in the pair order of :mod:`cfrkit.cards.hands`: int16[1326]."""
    from cfrkit.cards.hands import HOLE_PAIRS

    return holdem_indexer().index_batch(HOLE_PAIRS).astype(np.int16)
