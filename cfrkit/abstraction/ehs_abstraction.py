"""A simple card abstraction: 169 lossless preflop classes and E[HS] percentile buckets after the flop.

The blueprint solver and agent need only this interface (shared with the EMD k-means abstraction of
:mod:`cfrkit.abstraction`): ``num_buckets(round)``, ``bucket(round, hole, board) -> int`` and
``buckets_for_board(round, board) -> int32[1326]`` (pair order of :mod:`cfrkit.cards.hands`, -1 for
pairs that share a card with the board), plus ``fingerprint()`` naming the exact table.

Postflop a pair's E[HS] is its hand strength (win + tie / 2 against a uniform opponent) averaged over
river boards: ``runouts`` boards drawn with a seed derived from the board itself (so the bucket of a
hand on a board never changes), or exactly the one river.  Buckets are percentiles: the bucket
boundaries are E[HS] quantiles over a sample of boards, so buckets hold about equally many hands.
E[HS] ignores a hand's potential (draws share buckets with made hands of equal E[HS]); it is the
stand-in until the potential-aware EMD abstraction is there, and the solver does not care which.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Sequence, Tuple

import numpy as np

from cfrkit.cards.encoding import as_card_ids
from cfrkit._kernels import pair_ehs as _pair_ehs_kernel
from cfrkit._kernels import range_equity as _range_kernel
from cfrkit.cards.hands import HOLE_PAIRS, blocked_pairs, pair_index

BOARD_CARDS = (0, 3, 4, 5)
_CARDS = np.arange(52, dtype=np.int64)


def preflop_classes() -> np.ndarray:
    """int32[1326]: the 169 lossless preflop classes (pairs 0..12, suited 13..90, offsuit 91..168)."""
    ranks = HOLE_PAIRS // 4
    suits = HOLE_PAIRS % 4
    hi = ranks.max(axis=1).astype(np.int64)
    lo = ranks.min(axis=1).astype(np.int64)
    tri = hi * (hi - 1) // 2 + lo  # 0..77 over hi > lo
    out = np.where(hi == lo, hi, np.where(suits[:, 0] == suits[:, 1], 13 + tri, 91 + tri))
    return out.astype(np.int32)


class EHSAbstraction:
    """Preflop 169 classes; flop, turn, river ``buckets[r]`` E[HS] percentile buckets (see module docstring).

    Args:
        buckets: buckets per round, e.g. ``(169, 50, 50, 50)`` (preflop must be 169).
        runouts: river boards sampled per flop / turn board for E[HS] (the turn has only 48).
        calibration_boards: boards per round whose E[HS] values set the percentiles.
        seed: seed of the calibration and of the runout sampling.
    """

    kind = "ehs"
    #: ``pair_buckets_boards`` takes ``sampled`` (boards bucketed without the per-board memory)
    pair_buckets_sampled = True

    def __init__(self, buckets: Sequence[int] = (169, 50, 50, 50), runouts: int = 24,
                 calibration_boards: int = 40, seed: int = 0, cache_size: int = 4096):
        buckets = tuple(int(b) for b in buckets)
        if len(buckets) != 4 or buckets[0] != 169 or min(buckets[1:]) < 1 or max(buckets[1:]) > 1326:
            raise ValueError(f"E[HS] abstraction buckets must be 169 and three counts in 1..1326, got {buckets}")
        if runouts < 1 or calibration_boards < 1:
            raise ValueError("runouts and calibration_boards must be positive")
        self.buckets = buckets
        self.runouts = int(runouts)
        self.calibration_boards = int(calibration_boards)
        self.seed = int(seed)
        self._preflop = preflop_classes()
        self._cache: "OrderedDict[Tuple[int, Tuple[int, ...]], np.ndarray]" = OrderedDict()
        self._cache_size = int(cache_size)
        # (round, sorted board) -> (pairs, their buckets) of the last pairs bucketed alone on it (pair_buckets_boards,
        # both hands of a deal): a hand's bucket on the dealt board is asked by the agent and by AIVAT's value
        # function.  A plain dict emptied when full (one entry per board of a chance node: an LRU's bookkeeping
        # cost as much as the kernel on the river)
        self._pairs: dict = {}
        # sorted flop or turn -> its run-out seed (_seed_of: a SHA-256 per board), emptied when full
        self._seeds: dict = {}
        self.edges = [np.zeros(0)] + [self._calibrate(r) for r in (1, 2, 3)]

    # ------------------------------------------------------------------ interface
    def num_buckets(self, round_index: int) -> int:
        return self.buckets[self._check_round(round_index)]

    def fingerprint(self) -> str:
        """Digest of the parameters and the percentile edges (checkpoints compare it)."""
        h = hashlib.sha256(repr((self.kind, self.buckets, self.runouts, self.calibration_boards, self.seed)).encode())
        for e in self.edges:
            h.update(np.ascontiguousarray(e, dtype=np.float64).tobytes())
        return h.hexdigest()[:16]

    def describe(self) -> dict:
        return {"kind": self.kind, "buckets": list(self.buckets), "runouts": self.runouts,
                "calibration_boards": self.calibration_boards, "seed": self.seed}

    def bucket(self, round_index: int, hole, board) -> int:
        """Bucket of one hole pair on ``board`` (0, 3, 4 or 5 cards for rounds 0..3)."""
        hole_ids = as_card_ids(hole)
        board_ids = as_card_ids(board)
        if len(hole_ids) != 2:
            raise ValueError(f"a hole pair has 2 cards, got {len(hole_ids)}")
        as_card_ids(list(hole_ids) + list(board_ids))  # no shared card
        return int(self.buckets_for_board(round_index, board_ids)[pair_index(*hole_ids)])

    def buckets_for_board(self, round_index: int, board) -> np.ndarray:
        """int32[1326]: bucket of every pair on ``board``; -1 for pairs sharing a card with it."""
        r = self._check_round(round_index)
        ids = tuple(sorted(as_card_ids(board)))
        if len(ids) != BOARD_CARDS[r]:
            raise ValueError(f"round {r} needs a board of {BOARD_CARDS[r]} cards, got {len(ids)}")
        if r == 0:
            return self._preflop.copy()
        key = (r, ids)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit.copy()
        values = self.ehs(ids)
        out = np.searchsorted(self.edges[r], values, side="right").astype(np.int32)
        out[blocked_pairs(ids)] = -1
        self._cache[key] = out
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return out.copy()

    def pair_buckets(self, round_index: int, board, pairs) -> np.ndarray:
        """int32[K]: the buckets of the pairs ``pairs`` (int[K] pair indices) on ``board``, equal bit for bit
        to ``buckets_for_board(round_index, board)[pairs]`` but computing the E[HS] of those K pairs only
        (:meth:`ehs_of_pairs`) when the board is not cached: for callers that need two hands on many boards
        (AIVAT's sampled flops, turns and rivers).  Many boards at once: :meth:`pair_buckets_boards`."""
        r = self._check_round(round_index)
        if r > 0 and type(pairs) is list and len(pairs) == 1 and type(pairs[0]) is int and type(board) in (
                list, tuple) and all(type(c) is int for c in board):
            # one hand on a board of Python ints (a blueprint agent's own hand at each decision): its remembered
            # bucket without the checks and arrays below (a remembered board is a checked one; the same bucket)
            hit = self._pairs.get((r, tuple(sorted(board))))
            if hit is not None and pairs[0] in hit[0]:
                return np.array([hit[1][hit[0].index(pairs[0])]], dtype=np.int32)
        if r > 0:  # pairs bucketed on this board before (a remembered board was checked then)
            hit = self._pairs.get((r, tuple(sorted(as_card_ids(board)))))
            if hit is not None:
                wanted = np.asarray(pairs, dtype=np.int64).reshape(-1).tolist()
                if all(q in hit[0] for q in wanted):
                    return np.array([hit[1][hit[0].index(q)] for q in wanted], dtype=np.int32)
        return self.pair_buckets_boards(r, [board], pairs)[0]

    def pair_buckets_boards(self, round_index: int, boards, pairs, sampled: int = 0) -> np.ndarray:
        """int32[B, K]: row ``k`` is ``pair_buckets(round_index, boards[k], pairs)`` (bucket -1 for a pair touching
        the board), for B boards of round ``round_index`` (0, 3, 4 or 5 cards each) and K pair indices, bit for
        bit; the boards not in the cache are bucketed together (their run-outs sampled, their rivers' strengths
        and the pairs' E[HS] in one kernel call each: a chance node's 16 sampled boards at once).  ``sampled``: the
        first ``sampled`` boards are seen once (a chance node's sample): bucketed without looking them up in the
        per-board memory or keeping them there (the same rows: a board's buckets do not depend on the memory)."""
        r = self._check_round(round_index)
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1)
        listed = pairs.tolist()  # a few pairs (a deal's two hands): checked on Python ints, not numpy reductions
        if listed and (min(listed) < 0 or max(listed) >= self._preflop.size):
            raise ValueError(f"pair indices must be in 0..1325, got {listed}")
        ids = self._sorted_boards(r, boards)
        if r == 0:
            return np.tile(self._preflop[pairs], (ids.shape[0], 1))
        sampled = min(max(int(sampled), 0), ids.shape[0])
        if sampled:
            if sampled == ids.shape[0]:
                return self._buckets_of_pairs_sorted(r, ids, ids.tolist(), pairs, sampled)
            out = self._buckets_of_pairs_sorted(r, ids, ids.tolist(), pairs, sampled) if not self._remembered(
                r, ids[sampled:], pairs) else None
            if out is not None:  # the rest new too: one call for all, the rest remembered
                self._remember_rows(r, ids[sampled:].tolist(), pairs, out[sampled:].tolist())
                return out
            return np.concatenate([self._buckets_of_pairs_sorted(r, ids[:sampled], ids[:sampled].tolist(), pairs,
                                                                 sampled),
                                   self.pair_buckets_boards(r, ids[sampled:], pairs)])
        wanted = tuple(pairs.tolist())
        rows = ids.tolist()
        keys = [(r, tuple(row)) for row in rows]
        known = self._pairs
        full = self._cache
        miss = []
        found = []
        for k, key in enumerate(keys):
            hit = full.get(key) if full else None
            if hit is not None:
                found.append((k, hit[pairs]))
                continue
            hit = known.get(key)
            if hit is None:
                miss.append(k)
            elif hit[0] == wanted:
                found.append((k, hit[1]))
            elif all(q in hit[0] for q in wanted):
                found.append((k, [hit[1][hit[0].index(q)] for q in wanted]))
            else:
                miss.append(k)
        if not found:  # every board new (a chance node's sample): the kernel's rows are the answer
            out = self._buckets_of_pairs_sorted(r, ids, rows, pairs)
            got_rows = out.tolist()
        else:
            out = np.empty((ids.shape[0], pairs.size), dtype=np.int32)
            for k, row in found:
                out[k] = row
            got_rows = []
            if miss:
                got = self._buckets_of_pairs_sorted(r, ids[miss], [rows[k] for k in miss], pairs)
                out[miss] = got
                got_rows = got.tolist()
        if miss:
            self._remember_rows(r, [rows[k] for k in miss], pairs, got_rows)
        return out

    def _remembered(self, r: int, ids: np.ndarray, pairs: np.ndarray) -> bool:
        """Whether any of the sorted boards ``ids`` has a remembered row (``pair_buckets_boards`` would read it)."""
        full, known = self._cache, self._pairs
        return any((r, tuple(row)) in full or (r, tuple(row)) in known for row in ids.tolist())

    def _remember_rows(self, r: int, rows: list, pairs: np.ndarray, got_rows: list) -> None:
        """Remember the buckets ``got_rows[k]`` of ``pairs`` on the sorted board ``rows[k]`` (one entry per board)."""
        known = self._pairs
        if len(known) > 8 * self._cache_size:
            known.clear()
        wanted = tuple(pairs.tolist())
        # tuples of ints, not lists: the gc untracks them, so its full collections do not walk every entry
        for row, got in zip(rows, got_rows):
            known[(r, tuple(row))] = (wanted, tuple(got))

    def _buckets_of_pairs_sorted(self, r: int, ids: np.ndarray, rows: list, pairs: np.ndarray,
                                 sampled: int = 0) -> np.ndarray:
        """int32[B, K]: ``searchsorted(edges[r], _ehs_of_pairs_sorted(ids, pairs), side="right")`` with -1 where the
        E[HS] is NaN (a pair touching the board), bit for bit, the buckets found in the E[HS] kernel's call
        (``range_equity.river_ehs_buckets``); ``rows`` is ``ids.tolist()``; ``sampled``: as
        :meth:`_rivers_of_sorted`'s."""
        rivers, block = self._rivers_of_sorted(ids, rows, sampled)
        return _range_kernel.river_ehs_buckets(rivers, block, pairs,
                                               np.ascontiguousarray(self.edges[r], dtype=np.float64))

    @staticmethod
    def _sorted_boards(r: int, boards) -> np.ndarray:
        """int64[B, n]: each board's card ids sorted (``n`` the round's board size), checked: valid distinct ids."""
        n = BOARD_CARDS[r]
        arr = np.asarray(boards) if not isinstance(boards, str) else None
        if arr is None or arr.dtype.kind not in "iu" or arr.ndim != 2:
            if isinstance(boards, str):
                raise ValueError("boards must be a sequence of boards, got a string")
            arr = [as_card_ids(b) for b in boards]  # card strings or ragged boards: checked one by one
            for b in arr:
                if len(b) != n:
                    raise ValueError(f"round {r} needs boards of {n} cards, got {len(b)}")
            return np.array([sorted(b) for b in arr], dtype=np.int64).reshape(len(arr), n)
        if arr.shape[1] != n:
            raise ValueError(f"round {r} needs boards of {n} cards, got {arr.shape[1]}")
        # sorted and checked (ids 0..51, distinct per row) in one kernel pass
        return _pair_ehs_kernel.sorted_boards(np.ascontiguousarray(arr, dtype=np.int64))

    # ------------------------------------------------------------------ E[HS]
    def _seed_of(self, ids: Sequence[int]) -> int:
        """The run-out sampling seed of the sorted board ``ids``: the first 8 bytes (little-endian) of the SHA-256
        of the card ids and the abstraction's seed."""
        digest = hashlib.sha256(bytes(ids) + self.seed.to_bytes(8, "little")).digest()
        return int.from_bytes(digest[:8], "little")

    def _rivers(self, ids: np.ndarray) -> np.ndarray:
        """uint8[B, 5]: the river boards :meth:`ehs` averages over for the sorted board ``ids``: the board itself
        on the river; on a flop or turn ``runouts`` run-outs, each the ``5 - len(ids)`` live cards of smallest
        keys (in increasing key order) in a row of uniform keys drawn by ``Generator(PCG64(seed))`` with the
        board's own seed (:meth:`_seed_of`), the rows one after another (``pair_ehs.sampled_runouts``, the same
        draws in C); a turn with ``runouts`` >= its 48 rivers takes every river."""
        ids = np.asarray(ids, dtype=np.int64)
        need = 5 - len(ids)
        if need == 0:
            return np.ascontiguousarray(ids[None, :], dtype=np.uint8)
        if need == 1 and self.runouts >= 52 - len(ids):
            live = np.ones(52, dtype=bool)
            live[ids] = False
            rivers = np.empty((52 - len(ids), 5), dtype=np.uint8)
            rivers[:, :4] = ids
            rivers[:, 4] = _CARDS[live]
            return rivers
        return _pair_ehs_kernel.sampled_runouts(ids[None, :], np.array([self._seed_of(ids.tolist())], dtype=np.uint64),
                                                self.runouts)

    def ehs(self, board: Tuple[int, ...]) -> np.ndarray:
        """float64[1326]: E[HS] of every pair over river boards extending ``board`` (NaN if blocked)."""
        ids = np.array(sorted(board), dtype=np.int64)
        # exact win / tie counts against the uniform opponent on each river, averaged over the rivers in
        # one kernel pass (bit for bit the numpy formula it replaced: tests/test_lbr_speed.py)
        out = _range_kernel.uniform_river_ehs(_range_kernel.river_strengths(self._rivers(ids)))
        out[blocked_pairs(ids.tolist())] = np.nan
        return out

    def ehs_of_pairs(self, board: Tuple[int, ...], pairs) -> np.ndarray:
        """float64[K]: :meth:`ehs` of the pairs ``pairs`` only, bit for bit (NaN for a pair touching the board).

        Only the K pairs' wins and ties are counted (``range_equity.river_ehs_of_pairs``: the integer counts of
        ``uniform_river_ehs`` and its floating-point operations, in its order)."""
        ids = np.array(sorted(as_card_ids(board)), dtype=np.int64)
        return self._ehs_of_pairs_sorted(ids[None, :], np.asarray(pairs, dtype=np.int64).reshape(-1))[0]

    def _ehs_of_pairs_sorted(self, ids: np.ndarray, pairs: np.ndarray) -> np.ndarray:
        """float64[B, K]: :meth:`ehs_of_pairs` of the B sorted boards ``ids`` (int64[B, n], one round): every
        board's run-outs sampled in one kernel call, the pairs' win and tie counts on all their rivers in another
        (``range_equity.river_ehs_of_pairs``: from the rivers' rank classes, not all 1326 pairs' classes)."""
        rivers, block = self._rivers_of_sorted(ids, ids.tolist())
        return _range_kernel.river_ehs_of_pairs(rivers, block, pairs)

    def _rivers_of_sorted(self, ids: np.ndarray, rows: list, sampled: int = 0) -> Tuple[np.ndarray, int]:
        """``(uint8[B * block, 5] C-contiguous, block)``: the river boards of the B sorted boards ``ids`` (int64[B, n],
        one round; ``rows`` its ``tolist()``), ``block`` per board, in :meth:`_rivers`'s order: every board's
        run-outs sampled in one kernel call (its seed :meth:`_seed_of`, remembered per board except for the first
        ``sampled`` boards, a chance node's sample seen once: the same seeds)."""
        n = ids.shape[1]
        if n == 5:
            return np.ascontiguousarray(ids, dtype=np.uint8), 1
        if n == 4 and self.runouts >= 48:
            return np.ascontiguousarray(np.concatenate([self._rivers(row) for row in ids])), 48
        seeds = self._seeds
        if len(seeds) > 16 * self._cache_size:
            seeds.clear()
        # _seed_of inline (its bytes, digest and integer; the seed's bytes once)
        tail, sha = self.seed.to_bytes(8, "little"), hashlib.sha256
        if sampled >= len(rows):  # a chance node's sample alone: the digests' first 8 bytes read as uint64 at once
            seeds = np.frombuffer(b"".join([sha(bytes(row) + tail).digest()[:8] for row in rows]), dtype="<u8")
            return (_pair_ehs_kernel.sampled_runouts(np.ascontiguousarray(ids), seeds.astype(np.uint64, copy=False),
                                                     self.runouts), self.runouts)
        got = [int.from_bytes(sha(bytes(row) + tail).digest()[:8], "little") for row in rows[:sampled]]
        for row in rows[sampled:]:
            key = tuple(row)
            hit = seeds.get(key)
            if hit is None:
                hit = seeds[key] = int.from_bytes(sha(bytes(row) + tail).digest()[:8], "little")
            got.append(hit)
        seeds = np.array(got, dtype=np.uint64)
        return _pair_ehs_kernel.sampled_runouts(np.ascontiguousarray(ids), seeds, self.runouts), self.runouts

    def _calibrate(self, r: int) -> np.ndarray:
        gen = np.random.default_rng([self.seed, r])
        values = []
        for _ in range(self.calibration_boards):
            board = tuple(int(c) for c in gen.choice(52, BOARD_CARDS[r], replace=False))
            v = self.ehs(board)
            values.append(v[np.isfinite(v)])
        allv = np.concatenate(values)
        n = self.buckets[r]
        edges = np.quantile(allv, np.arange(1, n) / n)
        return np.asarray(edges, dtype=np.float64)

    @staticmethod
    def _check_round(round_index: int) -> int:
        r = int(round_index)
        if not 0 <= r <= 3:
            raise ValueError(f"round must be 0..3 (preflop, flop, turn, river), got {round_index}")
        return r


def default_ehs_abstraction(buckets: Sequence[int] = (169, 50, 50, 50)) -> EHSAbstraction:
    """The stand-in abstraction the blueprint uses by default (built in about a second)."""
    return EHSAbstraction(buckets)

