"""A blueprint's own expected values as an AIVAT value function (issue 27, A^C).

:func:`blueprint_values` makes one backward pass over the abstract betting tree with the blueprint's
average strategy for both seats (self-play values) and stores, for every decision node ``n`` of round
``r`` and every pair of buckets of that round, two tables (float32[B_r, B_r], seat 0's chips):

    D[n][b0, b1] = E[ seat 0's winnings, with every showdown counted as a loss of its stake ]
    S[n][b0, b1] = E[ the pot at the showdown, zero when the hand ends in a fold ]

so that the value of a real state at ``n`` with hands ``h0``, ``h1`` on the real board is

    v = D[n][b(h0), b(h1)] + S[n][b(h0), b(h1)] * eq(h0, h1 | board)

with ``eq`` the exact showdown equity of the two actual hands over the cards to come (preflop: the exact
hand-against-hand table, :func:`cfrkit.cards.preflop.preflop_equity_table`).  On the river this is the
blueprint's exact self-play value given the buckets (a showdown pays ``eq * pot - spent0`` and ``eq`` is 0, 1/2
or 1); earlier it assumes that reaching the showdown is independent of who wins it.  No bucket win-rate model
enters: the buckets only select the strategy.

* a fold terminal: ``D = +spent[1]`` or ``-spent[0]``, ``S = 0``; a showdown: ``D = -spent[0]``, ``S = pot``;
* a decision of seat ``p``: ``sum_a sigma(a | n, b_p) X[child_a]`` for ``X`` = ``D``, ``S`` (numpy over buckets);
* a call that closes a round: ``T_r X[next] T_r^T``, ``T_r[b, b']`` the abstraction's transition statistics
  ``P(bucket b' next round | bucket b this round)``, estimated at load from ``boards`` sampled boards (each
  player's transition taken independently of the other's).

Only decision nodes are stored (terminals are computed), one float32 block per round: for the CLI-default cap-2
tree (30,576 decisions, 169/50/50/50 buckets) 2 x 77 million entries, 0.6 GB.

Chance is approximated only inside the table: :class:`BlueprintValueFunction` maps a real state to the
abstract node (pseudo-harmonic bet translation, the most likely abstract size) and the two real hands to
their buckets, and its ``chance_expectation`` uses the TRUE chance distribution given both hands: the river
exactly (every card; ``flops`` of them when the street is played out, below), the flop and the turn by ``flops`` boards drawn uniformly without replacement from the
cards left by its own generator (an unbiased estimate; every card when there are fewer), the hole cards
exactly (the joint distribution of the preflop buckets and of the exact equity over all disjoint pairs of
hands).  So AIVAT stays unbiased; the approximations cost variance only.  A state the tree cannot follow
(off-tree betting) and all-in run-outs use the check-down equity value ``eq * pot - c0``, except a chance node off
the tree while a known strategy still plays after its cards (the street lookahead, one step of a known seat): its
value and expectation are the mean of ``v`` over its cards (at a leaf of the lookahead only at the turn's end).
The deal's expectation averages what ``v`` is after the hole cards: one step of the first seat's strategy when it is
known (:meth:`BlueprintValueFunction._deal`).

**The agents' own strategies** (:meth:`BlueprintValueFunction.hand_start`, called by the AIVAT observer).  The
tables model both seats by this blueprint.  When the other seat's agent is known (A^R, a simple agent, another
blueprint), from round ``street_from`` on (default the flop) the value of a state is the rest of the street's
betting played out with both agents' strategies for their actual hands, the tables after the round-closing
call (on the river exact given the two strategies); elsewhere a known non-owner seat gets one step,
``v(h) = sum_a sigma(a | h) v_table(h a)``.  Both are functions of the history, and the chance expectations
average the same ``v``, so AIVAT stays unbiased.

**The river at the turn's end, and the owner's translations.**  With both strategies known, a turn-closing call is
valued by the mean of the river's played-out values over ``river_cards`` cards (drawn once per state and abstract
node; the river's chance expectation returns the same number), and the tables and the owner's lookahead follow the
abstract sizes the owner agent drew for the other seat's raises (its remembered choices); the draw is corrected as
a chance event of known probabilities (:meth:`BlueprintValueFunction.translation_expectation`).
"""
from __future__ import annotations

import copy
from types import SimpleNamespace
import weakref
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.cards.equity import hand_vs_hand_counts
try:  # a chance node's sampled boards' equities in one call (pyx/equity.pyx)
    from cfrkit._kernels.equity import hand_vs_hand_boards as _hvh_boards
except ImportError:  # pragma: no cover - a checkout whose kernels were not rebuilt
    _hvh_boards = None
try:  # the street lookahead over a chance node's boards walked in C (pyx/street_lookahead.pyx)
    from cfrkit._kernels import street_lookahead as _street_kernel
except ImportError:  # pragma: no cover - a checkout whose kernels were not rebuilt
    _street_kernel = None
from cfrkit.cards.hands import HOLE_PAIRS, pair_index
from cfrkit.cards.preflop import preflop_equity_table
from cfrkit.games.base import GameError
from cfrkit.games.holdem.actions import RAISE_OFFSET
from cfrkit.games.holdem.game import CALL, FOLD, RAISE, HoldemState, raise_action, raise_amount  # noqa: F401
# the rule CheckedAgent follows for when own_strategy stands for hand_strategy (one rule for both)
from cfrkit.poker.agent import own_strategy_is_current
from cfrkit.solvers.blueprint.betting_tree import (ACTION_CALL, ACTION_FOLD, DECISION,
                                                   FOLD_TERMINAL, SHOWDOWN)

__all__ = ["blueprint_values", "bucket_transitions", "cache_scale", "deal_expectation", "set_cache_budget",
           "BlueprintValueTable", "BlueprintValueFunction"]

# float32 entries of the two tables together (1.2 GB): larger abstractions are refused
_MAX_ENTRIES = 300_000_000
_BOARD = (0, 3, 4, 5)
# remembered-translations memos whose betting lines a walker keeps (``owner_draws`` tries every size of every drawn
# raise in the lookahead, so a hand has dozens): emptied beyond this many
_FOLLOW_MEMOS = 256
_ROUND = {0: 0, 3: 1, 4: 2, 5: 3}  # board cards -> round


def _runs_out(state) -> bool:
    """Whether the chance run at ``state`` deals to the end of the hand (a real all-in)."""
    s = state.clone()
    while s.is_chance_node():
        s.apply_action(int(s.chance_outcomes()[0][0]))
    return s.is_terminal()


_DDOT: list = []  # [address or 0]: numpy's BLAS ddot, found once (_numpy_ddot)
_DDOT_SYMBOLS = ("scipy_cblas_ddot64_", "cblas_ddot64_", "scipy_cblas_ddot", "cblas_ddot")


def _numpy_ddot() -> int:
    """The address of the BLAS ``cblas_ddot`` numpy's ``ndarray.dot`` of two float64 vectors calls (its bundled
    OpenBLAS, already loaded), or 0 where none is found or it does not give ``ndarray.dot``'s doubles on a check of
    300 vector pairs (lengths 2..80, signs and magnitudes mixed): then the entries are computed by ``ndarray.dot``
    one by one.  Found once per process."""
    if _DDOT:
        return _DDOT[0]
    addr = 0
    if _street_kernel is not None and hasattr(_street_kernel, "dot_rows"):
        import ctypes

        libs = []
        try:
            with open("/proc/self/maps") as fh:  # the BLAS libraries this process has loaded (numpy's among them)
                libs = sorted({ln.split()[-1] for ln in fh
                               if "blas" in ln.split()[-1].lower() and ".so" in ln.split()[-1]})
        except OSError:
            libs = []
        rng = np.random.default_rng(2727)
        checks = []
        for _ in range(300):
            n = int(rng.integers(2, 81))
            x = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4)
            y = rng.random(n)
            checks.append((x, y, x.dot(y)))
        for path in libs:
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for name in _DDOT_SYMBOLS:
                fn = getattr(lib, name, None)
                if fn is None:
                    continue
                cand = int(ctypes.cast(fn, ctypes.c_void_p).value or 0)
                if cand and all(
                        _street_kernel.dot_rows(cand, x[None, :], np.zeros(1, dtype=np.int64), y[None, :],
                                                np.zeros(1, dtype=np.int64))[0].tobytes() == np.float64(want).tobytes()
                        for x, y, want in checks):
                    addr = cand
                    break
            if addr:
                break
    _DDOT.append(addr)
    return addr


def bucket_transitions(abstraction, boards: int = 24, seed: int = 0) -> List[np.ndarray]:
    """``[T_0, T_1, T_2]``: ``T_r`` float64[B_r, B_{r+1}], row-stochastic, the fraction of hands in bucket
    ``b`` of round ``r`` that are in bucket ``b'`` after the next card(s), over ``boards`` sampled
    run-outs (every live hole pair of each; rows never seen are uniform)."""
    rng = np.random.default_rng(seed)
    nb = [int(abstraction.num_buckets(r)) for r in range(4)]
    counts = [np.zeros((nb[r], nb[r + 1])) for r in range(3)]
    for _ in range(int(boards)):
        board = [int(c) for c in rng.permutation(52)[:5]]
        prev = np.asarray(abstraction.buckets_for_board(0, []))
        for r, n in ((1, 3), (2, 4), (3, 5)):
            cur = np.asarray(abstraction.buckets_for_board(r, board[:n]))
            ok = (prev >= 0) & (cur >= 0)
            np.add.at(counts[r - 1], (prev[ok], cur[ok]), 1.0)
            prev = cur
    out = []
    for c in counts:
        rows = c.sum(axis=1, keepdims=True)
        out.append(np.where(rows > 0, c / np.maximum(rows, 1.0), 1.0 / c.shape[1]))
    return out


class BlueprintValueTable:
    """The tables ``D``, ``S`` of :func:`blueprint_values` (module doc), decision nodes only.

    ``d(n)``, ``s(n)``: float64[B_r, B_r] for any node ``n`` (terminals computed from the tree); ``nbytes``:
    the memory of the stored blocks.  ``blocks`` (optional): ``(D, S)``, one float32[decisions of round r, B_r, B_r]
    block per round, tables built before (e.g. read-only memory maps of stored ones,
    :func:`cfrkit.agents.opponent_values.load_fitted_tables`); default: zeros to be filled by :func:`blueprint_values`.
    Raises ``GameError`` for a block of the wrong shape or dtype.
    """

    def __init__(self, tree, num_buckets, blocks: Optional[Tuple[List[np.ndarray], List[np.ndarray]]] = None):
        self.tree = tree
        self.num_buckets = tuple(int(b) for b in num_buckets)
        rounds = tree.round.astype(np.int64)
        dec = tree.kind == DECISION
        self.row = np.full(tree.num_nodes, -1, dtype=np.int64)
        self.D: List[np.ndarray] = []
        self.S: List[np.ndarray] = []
        for r in range(len(self.num_buckets)):
            ids = np.flatnonzero(dec & (rounds == r))
            self.row[ids] = np.arange(ids.size)
            b = self.num_buckets[r]
            if blocks is None:
                self.D.append(np.zeros((ids.size, b, b), dtype=np.float32))
                self.S.append(np.zeros((ids.size, b, b), dtype=np.float32))
                continue
            for name, have, out in (("D", blocks[0], self.D), ("S", blocks[1], self.S)):
                x = have[r] if r < len(have) else None
                if x is None or x.shape != (ids.size, b, b) or x.dtype != np.float32:
                    raise GameError(f"value table block {name}[{r}] is "
                                    f"{None if x is None else (x.shape, str(x.dtype))}, not float32 {(ids.size, b, b)}")
                out.append(x)
        # (node, bucket 0, bucket 1) -> the transition-averaged (D, S) of a round-closing call: kept with the
        # table it was read from (a value function may switch tables per seat, e.g. fitted opponent tables)
        self.closing: dict = {}
        # (node, bucket 0) -> (tr[b0] @ D[node], tr[b0] @ S[node]): the first product of a closing call's value,
        # shared by its 50 (or so) second buckets
        self._closing_rows: dict = {}

    def closing_ds(self, n: int, b0: int, b1: int, tr: np.ndarray) -> Tuple[float, float]:
        """The transition-averaged ``(tr[b0] @ D[n] @ tr[b1], tr[b0] @ S[n] @ tr[b1])`` of a round-closing call in
        chips (``tr`` float64[B_r, B_{r+1}] the transitions of the round that ends, ``n`` a decision of the next
        round), remembered per ``(n, b0, b1)``; the vector ``tr[b0] @ D[n]`` (and ``S``'s) per ``(n, b0)``.  The
        expression's float64 operations in its order (left to right), so the same numbers."""
        hit = self.closing.get((n, b0, b1))
        if hit is None:
            rows = self._closing_rows.get((n, b0))
            if rows is None:
                d, s = self.ds(n)
                rows = (tr[b0] @ d, tr[b0] @ s)
                _Shared.remember(self._closing_rows, (n, b0), rows, limit=20_000)  # 800 bytes each
            hit = (float(rows[0] @ tr[b1]), float(rows[1] @ tr[b1]))
            _Shared.remember(self.closing, (n, b0, b1), hit)
        return hit

    def closing_many(self, n: int, b0s: Sequence[int], b1s: Sequence[int], tr: np.ndarray) -> List[Tuple[float, float]]:
        """``[closing_ds(n, b0, b1, tr) for b0, b1 in zip(b0s, b1s)]`` (chips; ``b0s``, ``b1s`` Python ints): the same
        operations per entry, in one call (the entries a street lookahead's closing leaf found unread: its dense table
        keeps them, so they are not added to :attr:`closing`; entries there are read, the rows ``tr[b0] @ D[n]``
        remembered as :meth:`closing_ds` remembers them).  As :meth:`closing_array`'s rows."""
        return [(d, s) for d, s in self.closing_array(n, b0s, b1s, tr).tolist()]

    def closing_array(self, n: int, b0s: Sequence[int], b1s: Sequence[int], tr: np.ndarray) -> np.ndarray:
        """float64[m, 2]: :meth:`closing_many`'s entries as an array (the compiled walk's dense tables take them).
        The second products ``rows . tr[b1]`` are ``ndarray.dot``'s: by the BLAS ``ddot`` numpy calls, from C in one
        call (``street_lookahead.dot_rows``) where it was found (:func:`_numpy_ddot`), else ``ndarray.dot`` per entry."""
        closing, memo = self.closing, self._closing_rows
        m = len(b0s)
        out = np.empty((m, 2))
        ddot = _numpy_ddot() if m > 1 else 0
        trc = (tr if ddot and tr.dtype == np.float64 and tr.flags.c_contiguous and tr.ndim == 2 and tr.shape[1] >= 2
               else None)  # one-element rows: numpy multiplies them as scalars, not by ddot
        slot: dict = {}  # b0 -> its row pair's index in ``rows``
        rows: list = []
        ri, ci, at = [], [], []
        for j, (b0, b1) in enumerate(zip(b0s, b1s)):
            hit = closing.get((n, b0, b1))
            if hit is not None:
                out[j] = hit
                continue
            got = memo.get((n, b0))
            if got is None:
                d, s = self.ds(n)
                got = (tr[b0] @ d, tr[b0] @ s)
                _Shared.remember(memo, (n, b0), got, limit=20_000)
            if trc is None:
                col = tr[b1]
                # ndarray.dot of two vectors is ``@``'s vector-vector product (numpy's DOUBLE_dot, one BLAS ddot) at
                # half its call overhead: the same doubles (tests/test_street_lookahead_kernel.py)
                out[j] = (float(got[0].dot(col)), float(got[1].dot(col)))
                continue
            k = slot.get(b0)
            if k is None:
                k = slot[b0] = len(rows)
                rows.append(got)
            ri.append(k)
            ci.append(b1)
            at.append(j)
        if at:
            stacked = np.ascontiguousarray([x for pair in rows for x in pair], dtype=np.float64)  # D row, S row per b0
            ri2 = np.array(ri, dtype=np.int64) * 2
            cidx = np.array(ci, dtype=np.int64)
            pos = np.array(at, dtype=np.int64)
            out[pos, 0] = _street_kernel.dot_rows(ddot, stacked, ri2, trc, cidx)
            out[pos, 1] = _street_kernel.dot_rows(ddot, stacked, ri2 + 1, trc, cidx)
        return out

    @property
    def nbytes(self) -> int:
        return int(sum(x.nbytes for x in self.D) + sum(x.nbytes for x in self.S))

    def _terminal(self, n: int, shape: Tuple[int, int]) -> Tuple[np.ndarray, np.ndarray]:
        t = self.tree
        s0, s1 = float(t.spent[n, 0]), float(t.spent[n, 1])
        if int(t.kind[n]) == FOLD_TERMINAL:
            return np.full(shape, -s0 if int(t.player[n]) == 0 else s1), np.zeros(shape)
        return np.full(shape, -s0), np.full(shape, s0 + s1)  # a showdown

    def ds(self, n: int, shape: Optional[Tuple[int, int]] = None) -> Tuple[np.ndarray, np.ndarray]:
        """``(D[n], S[n])`` float64; a terminal's as constant arrays of ``shape`` (default its round's)."""
        r = int(self.tree.round[n])
        if int(self.tree.kind[n]) != DECISION:
            b = self.num_buckets[r]
            return self._terminal(n, shape or (b, b))
        i = int(self.row[n])
        return self.D[r][i].astype(np.float64), self.S[r][i].astype(np.float64)

    def value(self, n: int, b0: int, b1: int, eq: float) -> float:
        """``D[n][b0, b1] + S[n][b0, b1] * eq`` in chips (``n`` a decision node)."""
        r = int(self.tree.round[n])
        i = int(self.row[n])
        return float(self.D[r][i, b0, b1]) + float(self.S[r][i, b0, b1]) * eq


def blueprint_values(strategy, transitions: List[np.ndarray],
                     sigma: Optional[Callable[[int], Optional[np.ndarray]]] = None) -> BlueprintValueTable:
    """The backward pass (module doc) over ``strategy.tree``; ``transitions`` from :func:`bucket_transitions`.

    ``sigma`` (optional): ``sigma(node) -> float64[B_r, children]`` or None, a strategy per bucket that replaces
    the blueprint's average strategy at that node (a model of another agent in that seat,
    :mod:`cfrkit.agents.opponent_values`); None keeps the blueprint's.
    Raises :class:`GameError` when the two float32 tables would exceed 300 million entries.
    """
    t = strategy.tree
    nb = strategy.num_buckets
    rounds = t.round.astype(np.int64)
    dec = np.flatnonzero(t.kind == DECISION)
    entries = 2 * int(sum(int(nb[int(r)]) ** 2 for r in rounds[dec]))
    if entries > _MAX_ENTRIES:
        raise GameError(f"the blueprint's value tables would have {entries} entries, more than {_MAX_ENTRIES} "
                        f"(buckets {tuple(nb)}); use the equity value function")
    table = BlueprintValueTable(t, nb)
    for n in dec[::-1]:  # children come after their parent
        n = int(n)
        r = int(rounds[n])
        first, m = int(t.child_start[n]), int(t.num_children[n])
        row = sigma(n) if sigma is not None else None
        row = strategy.probabilities(n, np.arange(nb[r])) if row is None else row  # [B_r, m]
        dacc = np.zeros((nb[r], nb[r]))
        sacc = np.zeros((nb[r], nb[r]))
        p0 = int(t.player[n]) == 0
        for i in range(m):
            c = first + i
            if int(t.kind[c]) != DECISION:
                dc, sc = table.ds(c, (nb[r], nb[r]))
            else:
                dc, sc = table.ds(c)
                if int(rounds[c]) != r:  # a call closing the round: expectation over the next buckets
                    tr = transitions[r]
                    dc, sc = tr @ dc @ tr.T, tr @ sc @ tr.T
            w = row[:, i][:, None] if p0 else row[:, i][None, :]
            dacc += dc * w
            sacc += sc * w
        i = int(table.row[n])
        table.D[r][i] = dacc
        table.S[r][i] = sacc
    return table


def deal_expectation(table: BlueprintValueTable, abstraction) -> float:
    """Seat 0's expected chips at the root of ``table`` over the deal: ``E[D0[b(h0), b(h1)] + S0[b(h0), b(h1)] *
    eq(h0, h1)]`` over all ordered pairs of disjoint hands (exact; ``eq`` the preflop hand-against-hand table)."""
    nb = table.num_buckets[0]
    cls = np.asarray(abstraction.buckets_for_board(0, []), dtype=np.int64)
    cards = np.zeros((1326, 52))
    pairs = np.asarray(HOLE_PAIRS)
    cards[np.arange(1326), pairs[:, 0]] = 1.0
    cards[np.arange(1326), pairs[:, 1]] = 1.0
    disjoint = ((cards @ cards.T) == 0).astype(np.float64)
    onehot = np.zeros((1326, nb))
    onehot[np.arange(1326), cls] = 1.0
    joint = onehot.T @ disjoint @ onehot
    eqw = onehot.T @ (disjoint * preflop_equity_table(progress=False)) @ onehot
    d, s = table.ds(0)
    return float((np.sum(joint * d) + np.sum(eqw * s)) / joint.sum())


def _two_buckets(ab, cache: dict, r: int, board, hole) -> Tuple[int, int]:
    """The buckets of both seats' hands on ``board`` in round ``r`` (``ab.buckets_for_board``'s, bit for bit),
    remembered in ``cache``; an abstraction with ``pair_buckets`` computes the two hands only."""
    key = (r, tuple(board), tuple(hole[0]), tuple(hole[1]))
    hit = cache.get(key)
    if hit is None:
        pairs = [pair_index(*hole[0]), pair_index(*hole[1])]
        pair_buckets = getattr(ab, "pair_buckets", None)
        if pair_buckets is not None:
            b = pair_buckets(r, list(board), pairs)
            hit = (int(b[0]), int(b[1]))
        else:
            b = ab.buckets_for_board(r, list(board))
            hit = (int(b[pairs[0]]), int(b[pairs[1]]))
        _Shared.remember(cache, key, hit)
    return hit


def _two_buckets_boards(ab, cache: dict, r: int, boards, hole) -> List[Tuple[int, int]]:
    """``[_two_buckets(ab, cache, r, board, hole) for board in boards]``, the boards not remembered bucketed in one
    call of the abstraction's ``pair_buckets_boards`` where it has one (a chance node's sampled boards)."""
    h0, h1 = tuple(hole[0]), tuple(hole[1])
    keys = [(r, tuple(b), h0, h1) for b in boards]
    out = [cache.get(k) for k in keys]
    miss = [i for i, hit in enumerate(out) if hit is None]
    many = getattr(ab, "pair_buckets_boards", None)
    if len(miss) > 1 and many is not None:
        got = many(r, [list(boards[i]) for i in miss], [pair_index(*hole[0]), pair_index(*hole[1])]).tolist()
        for i, (b0, b1) in zip(miss, got):
            out[i] = (b0, b1)
            _Shared.remember(cache, keys[i], out[i])
    else:
        for i in miss:
            out[i] = _two_buckets(ab, cache, r, boards[i], hole)
    return out


def _chance_buckets(ab, cache, r: int, boards, real, hole) -> List[Tuple[int, int]]:
    """The two hands' buckets of round ``r`` on a chance node's sampled ``boards`` and the dealt board ``real`` (or
    None), last: :func:`_two_buckets_boards`'s, the samples bucketed in one call without the memories (each is seen
    once: ``pair_buckets_boards``' ``sampled``), the dealt board remembered (the street's decisions read it).  The
    turn cards of a turn's chance node (round 2) are remembered too: the other seating of a duplicate deal has the
    same flop and hands and draws its 16 turn cards from the same 45, so about a third of them come again there (the
    abstraction's pair memory: the same rows)."""
    many = getattr(ab, "pair_buckets_boards", None)
    if many is None or not getattr(ab, "pair_buckets_sampled", False):
        return _two_buckets_boards(ab, cache, r, boards if real is None else boards + [real], hole)
    pairs = [pair_index(*hole[0]), pair_index(*hole[1])]
    out = [(b0, b1) for b0, b1 in many(r, boards if real is None else boards + [real], pairs,
                                       sampled=len(boards) if r != 2 else 0).tolist()]
    if real is not None:
        _Shared.remember(cache, (r, tuple(real), tuple(hole[0]), tuple(hole[1])), out[-1])
    return out


def _equity(h0, h1, board) -> float:
    """Exact showdown equity (win + tie / 2) of hand ``h0`` against ``h1`` over the cards to come."""
    if not board:
        return float(preflop_equity_table(progress=False)[pair_index(*h0), pair_index(*h1)])
    w, t, l = hand_vs_hand_counts(h0, h1, board)
    return (w + 0.5 * t) / (w + t + l)


class BlueprintValueFunction:
    """Seat 0's value in chips of a real heads-up hold'em state from a blueprint's self-play values.

    ``strategy``: a :class:`~cfrkit.solvers.blueprint.strategy.BlueprintStrategy`; ``view``: the match's
    :class:`~cfrkit.poker.view.HoldemView`; ``boards``: run-outs sampled for the transition statistics;
    ``flops``: boards sampled per flop or turn expectation (every card when fewer are left); ``seed``: both
    samplers' seed.  ``translate_raise``: the agent's translation (``BlueprintAgent.translate_raise``), so the
    tree follows the hand as the agent does (the most likely abstract size of a translated raise).

    ``lookahead`` (default True): the tables model both seats by this blueprint; in a match the AIVAT observer
    calls :meth:`hand_start`, and at a decision of a seat whose agent is known but is *not* this blueprint
    (A^R, a simple agent, another blueprint) the value is one step of that agent's own strategy for its
    actual hand, ``v(h) = sum_a sigma(a | h) v_table(h a)`` (see :meth:`policy_of`).  That is still a
    function of the history only, and ``chance_expectation`` averages the same ``v``, so AIVAT stays unbiased.
    ``blueprint_lookahead`` (default False): whether the lookahead also follows another blueprint.
    ``river_exact`` (default True): with both strategies known, a turn-closing call is valued by the mean of the
    river's played-out values over ``river_cards`` river cards (default 12, a uniform sample without replacement
    drawn once per state and node; every card when it covers them) instead of the transition-averaged tables;
    ``river_leaves`` (default True): also at the leaves of the turn's street lookahead (off: only where the value
    of a turn-closing call is asked directly, far cheaper; still one function of the state, so still unbiased).
    ``follow_owner`` (default True): the tables and the owner's lookahead follow the abstract sizes the owner agent
    (the one seat playing this blueprint) drew for raises, and the observer corrects each draw
    (:meth:`translation_expectation`).
    ``chance_cv`` (default False): a sampled chance expectation (flops, turn or river cards drawn) gets the equity
    control variate of :meth:`_equity_cv`, exact in expectation, so still unbiased; every-card means are unchanged.
    ``owner_fallback`` (default False): where the owner's tree cannot follow the hand, its lookahead plays what
    ``own_strategy`` plays there (call after an abstract all-in, else the nearest node's strategy) instead of ending
    the lookahead (``follow_owner`` implies it); raises still walk to their most likely size without ``follow_owner``.
    ``owner_draws`` (default False; with ``follow_owner``): a raise whose translation the owner has still to draw
    (:meth:`translation_expectation`'s) is valued by the mean over the sizes it may draw, in :meth:`value` and in
    the lookahead after the other seat's raises and in the one step of a known seat (preflop), instead of its most
    likely size: the draw's term vanishes instead of moving to the owner's next decision.  A function of the history,
    and the deal's expectation averages the same one step (:meth:`_deal_one_step`), so still unbiased.
    ``turn_exact`` (default False; with both strategies known): a flop-closing call (the turn card to come) is valued
    by the mean of :meth:`value` over every turn card (the turn's street lookahead played on each; ``flops`` of them
    with the equity control variate when fewer), drawn once per hand and state (:meth:`_offtree_mean`), both where
    it is asked directly and at the leaves of the flop's street lookahead, instead of the transition-averaged
    tables; its chance expectation returns the same number, so the turn card's term has no residual.  The flop's
    chance expectation averages the flop lookahead with these leaves: over ``flops`` flops with the tables at the
    leaves, plus the mean of the difference the played-out turn makes over the first ``turn_flops`` of them (two
    unbiased means, so unbiased; ``turn_flops`` None: all of them, the plain mean).  ``turn_cards`` (default None:
    every card when ``flops`` covers them): the turn cards of that mean, a uniform sample without replacement with
    the equity control variate on the pot (for the river played out inside: fewer turn lookaheads per leaf).
    ``self_play_table`` (default True): build the self-play tables; False leaves ``table`` None for a subclass that
    brings its own (:class:`~cfrkit.agents.opponent_values.OpponentTablesValueFunction` with both seats fitted); a
    :class:`BlueprintValueTable`: those tables, built before by :func:`blueprint_values` on ``strategy`` with
    :func:`bucket_transitions` of ``boards`` and ``seed`` (e.g. stored ones read back memory-mapped).
    ``compiled_lookahead`` (default True): the street lookahead over a chance node's boards
    (:meth:`_values_on_boards`) is walked in C (``pyx/street_lookahead.pyx``) over betting lines kept per hand; off,
    the Python walk (:meth:`_street_boards`, the reference).  The same numbers bit for bit either way.
    """

    def __init__(self, strategy, view, translate_raise, boards: int = 24, flops: int = 16, seed: int = 0,
                 lookahead: bool = True, street_from: int = 1, blueprint_lookahead: bool = False,
                 follow_owner: bool = True, river_exact: bool = True,
                 river_cards: int = 12, river_leaves: bool = True, chance_cv: bool = False,
                 owner_fallback: bool = False, owner_draws: bool = False, compiled_lookahead: bool = True,
                 turn_exact: bool = False, turn_flops: Optional[int] = None, turn_cards: Optional[int] = None,
                 self_play_table=True):
        if flops < 1:
            raise GameError(f"flops must be >= 1, got {flops}")
        if turn_flops is not None and int(turn_flops) < 1:
            raise GameError(f"turn_flops must be >= 1 (or None: every sampled flop), got {turn_flops}")
        if turn_cards is not None and int(turn_cards) < 1:
            raise GameError(f"turn_cards must be >= 1 (or None: as flops decides), got {turn_cards}")
        self.strategy = strategy
        self.tree = strategy.tree
        self.ab = strategy.abstraction
        self.view = view
        self.translate_raise = translate_raise
        self.flops = int(flops)
        self.boards = int(boards)
        self.seed = int(seed)
        # what is built once and only read afterwards (transitions, tables, the deal's value, the walks'
        # memos): :meth:`fresh` shares it with the value functions of later matches
        self._shared = _Shared(bucket_transitions(self.ab, boards, seed), NodeWalker(self.tree, translate_raise),
                               self.ab)
        self.trans = self._shared.trans
        # a subclass whose every hand uses other tables (both seats of fitted opponent tables) skips the self-play
        # ones: 0.6 GB and seconds for the CLI-default tree
        if isinstance(self_play_table, BlueprintValueTable):  # built before (e.g. a stored one, memory-mapped)
            self._shared.table = self_play_table
        else:
            self._shared.table = blueprint_values(strategy, self.trans) if self_play_table else None
        self.table = self._shared.table
        self.rng = np.random.default_rng(np.random.SeedSequence([int(seed), 2727]))
        self.lookahead = bool(lookahead)
        self.blueprint_lookahead = bool(blueprint_lookahead)
        self._policy: List[Optional[Callable]] = [None, None]
        self._agents: list = [None, None]
        # (table, first seat, its agent, the owner's translations) -> the deal's expectation (see _deal)
        self._deals_one_step: dict = {}
        if int(street_from) not in (1, 2, 3, 4):
            raise GameError(f"street_from must be 1 (flop), 2, 3 (river) or 4 (never), got {street_from}")
        self.street_from = int(street_from)
        self._own: List[Optional[Callable]] = [None, None]
        self._street = False
        self.follow_owner = bool(follow_owner)
        self.river_exact = bool(river_exact)
        if int(river_cards) < 1:
            raise GameError(f"river_cards must be >= 1, got {river_cards}")
        self.river_cards = int(river_cards)
        self.river_leaves = bool(river_leaves)
        self.chance_cv = bool(chance_cv)
        self.owner_fallback = bool(owner_fallback)
        self.owner_draws = bool(owner_draws)
        self.compiled_lookahead = bool(compiled_lookahead)
        self.turn_exact = bool(turn_exact)
        self.turn_flops = None if turn_flops is None else int(turn_flops)
        self.turn_cards = None if turn_cards is None else int(turn_cards)
        # set while the flop's chance expectation values its flops with the tables at the flop-closing leaves
        # (the cheap part of the split mean, see _flop_mean): part of every cache key a flop's value enters
        self._turn_suspended = False
        self._plans: Optional[_StreetPlans] = None  # the compiled lookahead's betting lines, kept across hands
        self._no_draw = False  # set while the dealt board is walked with the sampled ones (_values_with_real)
        self._first: Optional[tuple] = None  # (game, the seat acting first after the hole cards): _first_seat
        self._hand_reset()
        self._args = dict(flops=self.flops, lookahead=self.lookahead, blueprint_lookahead=self.blueprint_lookahead,
                          street_from=self.street_from, follow_owner=self.follow_owner, river_exact=self.river_exact,
                          river_cards=self.river_cards, river_leaves=self.river_leaves, chance_cv=self.chance_cv,
                          owner_fallback=self.owner_fallback, owner_draws=self.owner_draws,
                          compiled_lookahead=self.compiled_lookahead, turn_exact=self.turn_exact,
                          turn_flops=self.turn_flops, turn_cards=self.turn_cards)

    def _hand_reset(self) -> None:
        """Forget the hand's owner, its remembered translations and the river cache (no hand started)."""
        self._memo = None
        self._owner_seat: Optional[int] = None
        self._translation_index = -1
        self._river: dict = {}
        self._offtree: dict = {}
        self._lines: dict = {}
        self._cutoffs = 0

    def fresh(self, view) -> "BlueprintValueFunction":
        """The value function a new one with the same arguments and ``view`` would be (a fresh generator
        seeded as in ``__init__``, no seats known), sharing this one's tables, transition statistics and
        memos instead of rebuilding them (seconds per build: a ladder asks for one per block)."""
        if getattr(view.game, "definition", None) != getattr(self.view.game, "definition", None):
            raise GameError(f"fresh: {view.game.game_string()!r} is not this value function's game "
                            f"{self.view.game.game_string()!r}")
        new = copy.copy(self)
        new.__dict__.update(self._args)  # the arguments' settings, whatever was changed on this one since
        new.view = view
        new.rng = np.random.default_rng(np.random.SeedSequence([self.seed, 2727]))
        new._policy = [None, None]
        new._own = [None, None]
        new._street = False
        new._plans = None
        new._hand_reset()
        return new

    @property
    def _deal_value(self) -> Optional[float]:
        return self._shared.deal_value

    # ------------------------------------------------------------------ mapping
    def node_of(self, state) -> Optional[int]:
        """The abstract node the real betting history leads to (a decision or, after a round-closing
        call, the next round's first decision), or None when the tree cannot follow it.  With ``follow_owner``
        raises are translated as the owner agent translated them (its remembered choices,
        :meth:`hand_start`), others to their most likely abstract size."""
        return self._shared.walker.node_of(state, None, self._memo)

    def _node_of_history(self, state, memo=None) -> Optional[int]:
        """:meth:`node_of` by walking the whole history (the reference of the memoised walk)."""
        return _walk_history(self.tree, self.translate_raise, state, memo)[0]

    def _buckets(self, r: int, board, hole) -> Tuple[int, int]:
        return _two_buckets(self.ab, self._shared.buckets, r, board, hole)

    def _equity(self, hole, board) -> float:
        key = (tuple(hole[0]), tuple(hole[1]), tuple(board))
        hit = self._shared.equities.get(key)
        if hit is None:
            hit = _equity(hole[0], hole[1], board)
            self._shared.remember(self._shared.equities, key, hit)
        return hit

    def _runs_out(self, state, key=None) -> bool:
        if key is None:
            key = _betting_key(state)
        if key is None:
            return _runs_out(state)
        hit = self._shared.runs_out.get(key)
        if hit is None:  # a function of the betting alone (who is all-in), not of the cards
            hit = _runs_out(state)
            self._shared.remember(self._shared.runs_out, key, hit)
        return hit

    def _equity_value(self, state) -> float:
        c = self.view.contributions(state)
        return self.view.equity_hands(state) * (c[0] + c[1]) - c[0]

    def _on_board(self, node: int, board, hole) -> float:
        r = int(self.tree.round[node])
        b0, b1 = self._buckets(r, board, hole)
        return self.table.value(node, b0, b1, self._equity(hole, board))

    # ------------------------------------------------------------------ the value function
    def hand_start(self, hand) -> None:
        """Called by the AIVAT observer at every hand: which seats get the lookahead, and whose translations
        the tables follow (the one seat whose agent plays this blueprint; its remembered choices)."""
        self._policy = [self.policy_of(a) if self.lookahead else None for a in hand.seat_agents]
        self._agents = [getattr(a, "agent", a) for a in hand.seat_agents]
        self._own = [None, None]
        owners = [getattr(a, "agent", a) for a in hand.seat_agents
                  if getattr(getattr(a, "agent", a), "blueprint", None) is self.strategy]
        # two agents of this blueprint remember different translations: then the most likely one for both
        self._memo = owners[0].translations if len(owners) == 1 and self.follow_owner else None
        self._owner_seat = next((i for i, a in enumerate(hand.seat_agents) if getattr(a, "agent", a) is owners[0]),
                                None) if self._memo is not None else None
        self._river = {}
        self._offtree = {}
        self._lines = {}
        if self.street_from < 4 and any(p is not None for p in self._policy):
            for seat, a in enumerate(hand.seat_agents):
                if self._policy[seat] is None and getattr(getattr(a, "agent", a), "blueprint", None) is self.strategy:
                    self._own[seat] = self._shared.policy(getattr(a, "agent", a),
                                                          follow=self._memo is not None or self.owner_fallback)
        self._street = all(self._policy[i] is not None or self._own[i] is not None for i in (0, 1))

    def translation_expectation(self, state, seat: int) -> Optional[float]:
        """Before the owner agent (the one seat playing this blueprint, whose translations the tables follow) is
        asked at ``state``: the expectation of :meth:`value` over the abstract size it is about to draw for the
        other seat's last raise (``translate_raise``'s probabilities), or None when it draws none (or several).

        The AIVAT observer then adds the control variate ``value(state) - expectation`` once the draw is made:
        the draw is a chance event of known distribution, independent of the cards and actions to come."""
        if self._memo is None or self._owner_seat != seat or state.is_terminal() or state.is_chance_node():
            return None
        pending = _pending(self.tree, self.translate_raise, state, self._memo)
        if len(pending) != 1:
            return None
        index, choices = pending[0]
        self._translation_index = index
        action = int(state.history()[index])
        real = self._memo
        total = 0.0
        try:
            for child, q in choices:
                memo = dict(real)
                memo[index] = (action, child)
                self._memo = memo  # the walks key their memos by the memo's contents: nothing to reset
                total += q * self.value(state)
        finally:
            self._memo = real
        return total

    def translation_drawn(self) -> bool:
        """Whether the owner has drawn the translation of the last :meth:`translation_expectation`."""
        return self._memo is not None and self._translation_index in self._memo

    def policy_of(self, agent) -> Optional[Callable]:
        """``f(state) -> (actions, probs)`` for the actual hand of ``agent``'s seat, or None when ``agent`` is
        this blueprint (the tables already model it) or its strategy is unknown or costly to ask.

        Any such ``f`` keeps AIVAT unbiased (it only shapes ``v``), so it must merely be cheap and free of side
        effects: another blueprint by its tree, strategy and translation (the most likely abstract size, never
        the agent's own sampler or off-tree flags); an agent with ``pure_strategy`` by ``act`` (one hand);
        others by ``own_strategy`` (the hand held) or the actual hand's row of ``hand_strategy``.  Agents with ``costly_strategy`` (A^D: a re-solve
        per state) get none.
        """
        inner = getattr(agent, "agent", agent)
        if getattr(inner, "blueprint", None) is self.strategy:
            return None
        if (not getattr(agent, "exact_support", True) or not hasattr(inner, "hand_strategy")
                or getattr(inner, "costly_strategy", False)):
            return None
        if all(hasattr(inner, x) for x in ("blueprint", "translate_raise", "real_action")):
            # off by default: against another blueprint the tables alone reduced the deviation as much (1,615
            # against 1,664 mbb per deal over 5,000 deals, bp_s0 vs bp_s1) at 2.3x (one step) to 13x (street)
            # less CPU (benchmarks/RESULTS.md, "AIVAT lookahead per pair")
            return self._shared.policy(inner) if self.blueprint_lookahead else None
        if getattr(inner, "pure_strategy", False):
            return _ActPolicy(inner)

        if own_strategy_is_current(type(inner)):  # the held hand's row without the other 1325 (the same row)
            return inner.own_strategy

        def row(state):
            hs = inner.hand_strategy(state)
            return hs.actions, hs.probs[pair_index(*state.hole[state.current_player()])]
        return row

    def _street_value(self, state, depth: int = 0, key=None) -> Optional[float]:
        """The rest of the street's betting played out with both seats' known strategies, the tables at its end
        (a round-closing call); None where a strategy is unknown (off its tree).  ``key``: the state's betting
        line (:func:`_betting_key`), passed down so that each child's is one action longer."""
        if state.is_terminal():
            return float(state.returns()[0])
        if state.is_chance_node() or depth > 12:
            self._cutoffs += depth > 12
            return None
        if key is None:
            key = _betting_key(state)
        # the hand's street values by betting line, board and owner's translations (the policies are the hand's,
        # the hands fixed): a decision's children were valued within the street's value after its cards.  A value
        # is kept only if no line below was cut at the depth limit, and reused only as deep or shallower.
        line = None if key is None else (key, tuple(state.board),
                                         tuple(sorted(self._memo.items())) if self._memo else None,
                                         self._turn_suspended)
        hit = None if line is None else self._lines.get(line)
        if hit is not None and depth <= hit[1]:
            return hit[0]
        cutoffs = self._cutoffs
        p = state.current_player()
        pol = self._policy[p] or self._own[p]
        if pol is None:
            return self._keep(line, None, depth, cutoffs)
        if isinstance(pol, _BlueprintPolicy):
            got = pol(state, key, self._memo)
        elif isinstance(pol, _ActPolicy) and key is not None:
            got = self._rules_step(pol, state, key)
        else:
            got = pol(state)
        if got is None:
            return self._keep(line, None, depth, cutoffs)
        total = 0.0
        legal = self._shared.legal
        for a, q in zip(*got):
            if q > 0:
                a = int(a)
                child = state.clone()
                ckey = None if key is None else key + (a,)
                if ckey is not None and ckey in legal:  # legality is a matter of the betting line: checked once
                    child.apply_trusted(a)
                else:
                    child.apply_action(a)
                    if ckey is not None:
                        _Shared.remember(legal, ckey, True)
                draws = self._draws_at(state, key, a)
                if draws:  # the owner draws this raise's size: the mean over the sizes
                    def sub(c, d=depth + 1, k=ckey):
                        got = self._street_value(c, d, k)
                        return self.table_value(c, k, leaf=True) if got is None else got
                    total += float(q) * self._over_draws(child, draws, sub)
                    continue
                v = self._street_value(child, depth + 1, ckey)
                total += float(q) * (self.table_value(child, ckey, leaf=True) if v is None else v)
        return self._keep(line, total, depth, cutoffs)

    def _rules_step(self, pol: "_ActPolicy", state, key):
        """``pol(state)`` (a pure agent's ``(actions [a], probs [1.0])``) where the agent plays its postflop rules
        heads-up (A^R): the action by the compiled walk's rules (``street_lookahead.rules_action``) on the hand's
        features on this board, the rules' arrays kept per betting line and street (the context is the betting's:
        :func:`_rules_arrays`), instead of ``act``'s numpy masks of one row; the same action (the walk's rules are
        ``act_on_boards``'s, tests/test_street_lookahead_kernel.py).  Other agents and states: ``pol(state)``."""
        agent = pol.agent
        if _street_kernel is None:
            return pol(state)
        memo = self._shared.rules_lines
        mk = (key, len(state.board))
        hit = memo.get(mk)
        if hit is None or hit[0] is not agent:
            hit = (agent, _rules_arrays(agent, state))
            _Shared.remember(memo, mk, hit)
        if hit[1] is None:
            return pol(state)
        par, acts = hit[1]
        board = [state.board]
        # the hand's features on this board, read at every line of the street: kept (a function of the cards)
        fk = (agent, tuple(state.hole[state.current_player()]), tuple(state.board))
        feats = self._shared.rules_feats.get(fk)
        if feats is None:
            hs, ehs, outs, wet = agent.features_on_boards(state, board)
            feats = (float(hs[0]), float(ehs[0]), int(outs[0]), bool(wet[0]))
            _Shared.remember(self._shared.rules_feats, fk, feats, limit=20_000)
        a = _street_kernel.rules_action(par, acts, *feats)
        if a == -2:  # the c-bet rule reached: the hand's share on this board decides
            a = _street_kernel.rules_action(par, acts, *feats, int(bool(agent.cbet_share_on_boards(state, board)[0])))
        return np.array([a]), np.ones(1)

    def _keep(self, line, value: Optional[float], depth: int, cutoffs: int) -> Optional[float]:
        """``value`` (a :meth:`_street_value`), remembered for ``line`` when nothing below was cut since ``cutoffs``."""
        if line is not None and self._cutoffs == cutoffs:
            self._lines[line] = (value, depth)
        return value

    def value(self, state) -> float:
        """Seat 0's value of ``state`` in chips (exact winnings at a terminal)."""
        if self.owner_draws and self._memo is not None and not state.is_terminal():
            pending = _pending(self.tree, self.translate_raise, state, self._memo)
            if pending:
                return self._over_draws(state, pending, self._value)
        return self._value(state)

    def _over_draws(self, state, pending, f) -> float:
        """``sum over the sizes of each raise in pending (history index, [(child, q)]) of q * f(state)`` with the
        owner's remembered translations set to that size (``owner_draws``)."""
        real = self._memo
        history = state.history()
        combos = [([], 1.0)]
        for index, choices in pending:
            combos = [(got + [(index, (int(history[index]), int(c)))], w * float(q))
                      for got, w in combos for c, q in choices]
        total = 0.0
        try:
            for got, w in combos:
                memo = dict(real)
                memo.update(got)
                self._memo = memo
                total += w * f(state)
        finally:
            self._memo = real
        return total

    def _draws_at(self, state, key, action: int):
        """``[(history index, [(child, q)])]`` when ``action`` (a raise by the seat that is not the owner's, at
        ``state``) has a translation the owner would draw among several sizes (``owner_draws``), else ``[]``."""
        if (not self.owner_draws or self._memo is None or action in (FOLD, CALL)
                or state.current_player() == self._owner_seat):
            return []
        node = self._shared.walker.node_of(state, key, self._memo)
        t = self.tree
        if node is None or t.kind[node] != DECISION or int(t.player[node]) != state.current_player():
            return []
        choices = self.translate_raise(node, state, raise_amount(action))
        if len(choices) < 2:
            return []
        return [(len(state.history()), [(int(c), float(q)) for c, q in choices])]

    def _value(self, state) -> float:
        """:meth:`value` with the owner's remembered translations as they are (no pending draw averaged)."""
        if (self._street and not state.is_terminal() and not state.is_chance_node()
                and int(state.round) >= self.street_from):
            v = self._street_value(state)
            if v is not None:
                return v
        if not state.is_terminal() and not state.is_chance_node():
            policy = self._policy[state.current_player()]
            if policy is not None and len(state.hole[1]) == 2:
                got = policy(state)
                if got is not None:
                    total = 0.0
                    for a, q in zip(*got):
                        if q > 0:
                            child = state.clone()
                            child.apply_action(int(a))
                            draws = self._draws_at(state, None, int(a))
                            # a raise whose size the owner draws: the mean over the sizes, as value() is after it
                            # (the most likely size alone left a residual at this step, aivat-80d)
                            v = self._over_draws(child, draws, self.table_value) if draws else self.table_value(child)
                            total += float(q) * v
                    return total
        return self.table_value(state)

    def table_value(self, state, key=None, leaf: bool = False) -> float:
        """Seat 0's value of ``state`` in chips from the tables alone (no lookahead), except a turn-closing call
        (:meth:`_river_mean`) unless ``leaf`` (a leaf of the street lookahead) and ``river_leaves`` is off, and a
        flop-closing call with ``turn_exact`` (:meth:`_turn_leaf`); ``key``: the state's betting line when the caller
        knows it."""
        if state.is_terminal():
            return float(state.returns()[0])
        hole = state.hole
        if len(hole[0]) < 2 or len(hole[1]) < 2:
            return self.chance_expectation(state)
        if self._turn_leaf(state, key):
            return self._offtree_mean(state)
        node = self._shared.walker.node_of(state, key, self._memo)
        if (state.is_chance_node() and not (leaf and len(state.board) < 4) and not self._runs_out(state, key)
                and self._off_chance(state, node)):
            # off the tree: the mean over the cards; at a leaf of the lookahead only at the turn's end (the river's
            # lookahead over its 44 cards), before it the check-down equity value (a mean there plays streets within
            # streets within the chance expectations: minutes per hand)
            return self._offtree_mean(state)
        if node is None or self.tree.kind[node] != DECISION or (state.is_chance_node() and self._runs_out(state, key)):
            return self._equity_value(state)
        r = int(self.tree.round[node])
        board = [int(c) for c in state.board]
        if (state.is_chance_node() and r == 3 and len(board) == 4 and self._river_on()
                and (self.river_leaves or not leaf)):
            return self._river_mean(state)
        if state.is_chance_node() and r > 0 and len(board) < _BOARD[r]:
            # a round-closing call: the transition-averaged tables at the previous round's buckets, and the
            # equity on the current board (its expectation over the cards to come)
            b0, b1 = self._buckets(r - 1, board, hole)
            # the compiled walk's dense table of this node, where it has read the entry (closing_array: closing_ds's
            # doubles), else the tables
            dense = self._shared.plan_closing.get((self.table, node)) if self._shared.plan_closing else None
            got = None if dense is None else dense[b0, b1]
            if got is not None and got[0] == got[0]:
                d, s = float(got[0]), float(got[1])
            else:
                d, s = self.table.closing_ds(node, b0, b1, self.trans[r - 1])
            return d + s * self._equity(hole, board)
        if len(board) != _BOARD[r]:
            return self._equity_value(state)
        return self._on_board(node, board, hole)

    def chance_expectation(self, state) -> float:
        """``E_c v(state c)`` over the run of chance nodes at ``state`` under the true chance
        distribution (exact, or the flop and turn by an unbiased sample; see the module doc)."""
        return self._chance_expectation(state, None)[0]

    def chance_and_value(self, before, after) -> Tuple[float, float]:
        """``(chance_expectation(before), value(after))`` bit for bit, ``after`` the state the run of chance nodes at
        ``before`` reached (the AIVAT observer's two calls around a run of cards, chips).  Where the street lookahead
        over the chance node's sampled boards applies, ``after``'s board is walked with them in the same compiled walk
        (its buckets and equity in the same kernel calls: per board the same operations as :meth:`value`'s), instead
        of a walk of its own; its lines' values are kept for the street's later decisions as :meth:`value` keeps
        them.  Elsewhere the two calls as they are, in that order."""
        cls, own = type(self), self.__dict__
        if (cls.value is not _OWN_CALLS[0] or cls.chance_expectation is not _OWN_CALLS[1] or "value" in own
                or "chance_expectation" in own):  # either replaced (a subclass, a test's patch): the two calls
            return self.chance_expectation(before), self.value(after)
        mean, v = self._chance_expectation(before, after)
        return mean, (self.value(after) if v is None else v)

    def _fusable(self, before, after) -> bool:
        """Whether :meth:`value` of ``after`` (``before`` with the next round's cards dealt, a decision) may come
        from the compiled walk over ``before``'s sampled boards: the street lookahead's root, no draw of the owner
        pending (``owner_draws``)."""
        if (after is None or not self._street or not self.compiled_lookahead or _street_kernel is None
                or type(after) is not HoldemState or after.is_terminal() or after.is_chance_node()
                or int(after.round) < self.street_from
                or (self.owner_draws and self._memo is not None)):
            return False
        nb = len(before.board)
        return (len(after.board) == _BOARD[_ROUND[nb] + 1] and list(after.board[:nb]) == list(before.board)
                and after.hole == before.hole and _betting_key(after) == _betting_key(before))

    def _chance_expectation(self, state, after) -> Tuple[float, Optional[float]]:
        """``(chance_expectation(state), value(after) or None)``: the second where the walk over the sampled boards
        gave it too (:meth:`chance_and_value`; ``after`` None: never)."""
        hole = state.hole
        if len(hole[0]) == 0 and len(hole[1]) == 0:
            return self._deal(), None
        if len(hole[0]) < 2 or len(hole[1]) < 2:
            raise GameError("chance_expectation between the two players' hole cards is not supported")
        node = self.node_of(state)
        board = [int(c) for c in state.board]
        if self._runs_out(state):
            # an all-in run-out: E_c of the check-down equity value is itself
            return self._equity_value(state), None
        if self._turn_leaf(state):
            return self._offtree_mean(state), None  # what value() is here: the mean of value() over the turn cards
        r = {0: 1, 3: 2, 4: 3}[len(board)]
        if node is None or self.tree.kind[node] != DECISION or int(self.tree.round[node]) != r:
            # off the tree: with a known strategy after the cards v(h) is already the mean over them; else v after
            # the cards is the check-down equity value too, whose mean is itself (the equity is a martingale)
            return (self._offtree_mean(state) if self._looks_ahead() else self._equity_value(state)), None
        need = _BOARD[r] - len(board)
        if need == 1 and r == 3 and self._river_on():
            return self._river_mean(state), None
        dead = set(board) | set(hole[0]) | set(hole[1])
        rest = np.array([c for c in range(52) if c not in dead], dtype=np.int64)
        every = need == 1 and ((r == 3 and not (self._street and self.street_from <= 3)) or rest.size <= self.flops)
        boards = self._chance_boards(board, rest, need, every)
        real = [int(c) for c in after.board] if self._fusable(state, after) else None
        # every board's, read below: in one batch (the dealt board's too when it is walked with them, last)
        both = _chance_buckets(self.ab, self._shared.buckets, r, boards, real, hole)
        nxt = int(self.tree.player[node])  # who acts first after the cards
        if self._policy[nxt] is None and not (self._street and r >= self.street_from):
            # _on_board on each board, the buckets from the batch above
            mean = float(np.mean([self.table.value(node, b0, b1, self._equity(hole, bd))
                                  for bd, (b0, b1) in zip(boards, both)]))
            return (mean if every else mean + self._equity_cv(state, node, r, boards)), None
        v = None
        if r == 1 and self._turn_on() and self.turn_flops is not None and self.turn_flops < len(boards):
            mean = self._flop_mean(state, boards)
        else:
            # the lookahead seat acts first: value() on each board
            if real is None:
                mean = self._mean_value_on_boards(state, boards, buckets=both)
            else:
                mean, v = self._mean_value_on_boards(state, boards, real, both)
        return (mean if every else mean + self._equity_cv(state, node, r, boards)), v

    def _turn_on(self) -> bool:
        """Whether a flop-closing call is valued by the mean over the turn cards (``turn_exact``, both strategies
        known, not suspended by :meth:`_flop_mean`'s cheap part)."""
        return self.turn_exact and self._street and self.street_from <= 2 and not self._turn_suspended

    def _turn_leaf(self, state, key=None) -> bool:
        """Whether ``state`` is a flop-closing call (a chance node before the turn card, both hands dealt, not an
        all-in run-out) that :meth:`_turn_on` values by the mean of :meth:`value` over the turn cards."""
        return (self._turn_on() and state.is_chance_node() and len(state.board) == 3
                and len(state.hole[0]) == 2 and len(state.hole[1]) == 2 and not self._runs_out(state, key))

    def _values_list(self, state, boards) -> List[float]:
        """``[value(state dealt boards[k]) for k]``: the street lookahead over all the boards at once where it
        applies (:meth:`_values_on_boards`), else board by board."""
        shared = self._values_on_boards(state, boards)
        if shared is not None:
            return list(shared)
        dealt = len(state.board)
        out = []
        for bd in boards:
            child = state.clone()
            for c in bd[dealt:]:
                child.apply_action(int(c))
            out.append(self.value(child))
        return out

    def _flop_mean(self, state, boards) -> float:
        """An unbiased estimate of the mean of :meth:`value` (``turn_exact``: the flop lookahead with the turn played
        out at its flop-closing leaves) over the flops of ``state`` (a preflop-closing call), ``boards`` uniform iid
        flops: the mean over all of them of the value with the tables at those leaves (cheap), plus the mean over
        the first ``turn_flops`` of the difference the played-out turn makes (the costly part: a turn lookahead per
        flop-closing leaf reached).  Each mean is unbiased for its own expectation, so the sum is for the mean of
        :meth:`value`; the first ``turn_flops`` of iid draws are themselves a uniform sample."""
        self._turn_suspended = True
        try:
            cheap = self._values_list(state, boards)
        finally:
            self._turn_suspended = False
        m = int(self.turn_flops)
        full = self._values_list(state, boards[:m])
        return float(np.mean(cheap)) + float(np.mean(np.array(full) - np.array(cheap[:m])))

    def _mean_value_on_boards(self, state, boards, real=None, buckets=None):
        """The mean of :meth:`value` over ``state`` (a chance node) dealt each of ``boards`` (chips): the street
        lookahead over all the boards at once where it applies, else board by board; summed in the boards' order
        either way, so both paths give the same number bit for bit.  With ``real`` (a board, see
        :meth:`chance_and_value`): ``(mean, value on real or None)``, ``real`` walked with the boards where the
        shared walk applies and draws nothing from the generator (a draw inside it would come in another order than
        the separate calls': then the boards are walked alone).  ``buckets``: the two hands' buckets of the next
        round on ``boards`` (and ``real``, last) when the caller has them (:func:`_chance_buckets`)."""
        if real is not None:
            got = self._values_with_real(state, boards, real, buckets)
            if got is not None:
                total = 0.0
                for v in got[:-1]:
                    total += v
                return total / len(boards), got[-1]
            return self._mean_value_on_boards(state, boards, buckets=buckets), None
        total = 0.0
        # the chance node's boards, each seen once: their equities counted without the per-board memory
        shared = self._values_on_boards(state, boards, buckets, len(boards) if buckets is not None else 0)
        if shared is not None:
            for v in shared:
                total += v
        else:
            dealt = len(state.board)
            for bd in boards:
                child = state.clone()
                for c in bd[dealt:]:
                    child.apply_action(int(c))
                total += self.value(child)
        return total / len(boards)

    def _values_with_real(self, state, boards, real, buckets=None) -> Optional[List[float]]:
        """:meth:`_values_on_boards` of ``boards + [real]`` with the lines of ``real``'s walk kept for the hand
        (:meth:`_street_value`'s memory), or None where the shared walk does not apply or would draw from the
        generator (stopped before the draw: the separate calls draw in another order)."""
        if self._plans is None:
            self._plans = _StreetPlans(self)
        plans = self._plans
        plans.record, plans.recorded = len(boards), []
        self._no_draw = True
        try:
            got = self._values_on_boards(state, boards + [real], buckets, len(boards) if buckets is not None else 0)
        except _DrawInWalk:
            return None
        finally:
            self._no_draw = False
            plans.record = -1
        if got is not None:
            self._keep_walked(plans.recorded, real)
        plans.recorded = []
        return got

    def _keep_walked(self, recorded, real) -> None:
        """Keep the street values of the lines the walk valued on the dealt board ``real`` (``recorded``: (plan, value))
        for :meth:`_street_value`, as its walk of that board from its root would have kept them (the same values, the
        same depths below the root); nothing where a line is deep enough for the depth limit to have cut below it."""
        if any(plan.depth >= 12 for plan, _ in recorded):
            return
        board = tuple(real)
        memo = tuple(sorted(self._memo.items())) if self._memo else None
        lines = self._lines
        for plan, v in recorded:
            lines[(plan.key, board, memo, self._turn_suspended)] = (v, plan.depth)

    def _random(self, size):
        """``rng.random(size)``: every draw of this value function; refused inside :meth:`_values_with_real`."""
        if self._no_draw:
            raise _DrawInWalk()
        return self.rng.random(size)

    def _equity_cv(self, state, node: int, r: int, boards) -> float:
        """The equity control variate of a sampled chance expectation (``chance_cv``; 0.0 when off), in chips:
        ``c * (eq(board now) - mean_k eq(boards[k]))``.  The showdown equity of the two hands is a martingale (its
        mean over the cards to come is today's equity, exactly), so the term has zero mean over the sample and
        the expectation stays unbiased; it cancels the part of the sample's luck that moves the equity.  ``c``
        (chips, fixed before the sample) is the tables' expected showdown pot at the round-closing call, the
        transition average ``T S T^T`` at the two hands' buckets of the round that ends (``r`` the next round,
        ``node`` its first decision); the pot at the chance node instead did worse against A^R (benchmarks/RESULTS.md,
        branch aivat-80b)."""
        if not self.chance_cv:
            return 0.0
        eqs = [self._equity(state.hole, bd) for bd in boards]
        now = self._equity(state.hole, [int(c) for c in state.board])
        return self._cv_pot(state, node, r) * (now - float(np.mean(eqs)))

    def _cv_pot(self, state, node: int, r: int) -> float:
        """The control variate's coefficient (chips): ``T S T^T`` of the tables at ``node`` (the first decision of
        round ``r``) at the two hands' buckets of round ``r - 1`` on ``state``'s board; off the tree (``node`` None
        or not a decision) the pot at ``state``."""
        if node is None or self.tree.kind[node] != DECISION or int(self.tree.round[node]) != r:  # off the tree
            c = self.view.contributions(state)
            return float(c[0] + c[1])
        b0, b1 = self._buckets(r - 1, [int(c) for c in state.board], state.hole)
        tr = self.trans[r - 1]
        return float(tr[b0] @ self.table.ds(node)[1] @ tr[b1])

    def _looks_ahead(self) -> bool:
        """Whether :meth:`value` after a chance node may play a known strategy (the street lookahead or one step
        of a known seat) instead of reading the tables or the check-down equity value."""
        return self._street or any(p is not None for p in self._policy)

    def _off_chance(self, state, node) -> bool:
        """Whether the chance node ``state`` (both hands dealt, not an all-in run-out) is off the tree (no node, an
        abstract all-in, or a node of another round than the cards start) while :meth:`value` after its cards may
        still play known strategies: then the check-down equity value is not the mean of ``v`` over the cards."""
        r = {0: 1, 3: 2, 4: 3}[len(state.board)]
        off = node is None or self.tree.kind[node] != DECISION or int(self.tree.round[node]) != r
        return off and self._looks_ahead()

    def _chance_boards(self, board, rest, need: int, every: bool, count: Optional[int] = None):
        """The boards of a chance expectation: ``board`` plus every card of ``rest`` (``every``), else ``count``
        (default ``flops``) turn or river cards drawn uniformly without replacement (``need`` 1), else ``flops``
        flops each a uniform draw of three cards; unbiased for the mean either way (draws from this value
        function's generator)."""
        if every:
            return [board + [c] for c in rest.tolist()]
        if need == 1:
            count = self.flops if count is None else int(count)
            return [board + [c] for c in rest[np.argsort(self._random(rest.size))[:count]].tolist()]
        picks = np.argsort(self._random((self.flops, rest.size)), axis=1)[:, :need]
        return [board + row for row in rest[picks].tolist()]  # Python ints, the same cards

    def _offtree_mean(self, state) -> float:
        """``v`` of an off-tree chance node (:meth:`_off_chance`), and its chance expectation: the mean of
        :meth:`value` over every turn or river card (over ``flops`` sampled flops, or turn cards when more are
        left, plus the equity control variate on the pot), drawn once per hand and state.  The lookahead after the
        cards plays the known strategies (A^R's rules, the owner's off-tree play) where the check-down equity value
        assumed none: taking the equity value as the expectation was biased, and as ``v`` alone it left the
        lookahead's chips in the chance term (benchmarks/RESULTS.md, branch aivat-80c)."""
        key = (tuple(state.history()), tuple(sorted(self._memo.items())) if self._memo else (),
               self._turn_suspended)  # a flop's values depend on it (its flop-closing leaves)
        hit = self._offtree.get(key)
        if hit is None:
            board = [int(c) for c in state.board]
            need = 3 if not board else 1
            dead = set(board) | set(state.hole[0]) | set(state.hole[1])
            rest = np.array([c for c in range(52) if c not in dead], dtype=np.int64)
            # the turn cards of a flop-closing call under turn_exact: ``turn_cards`` of them when set
            count = self.turn_cards if len(board) == 3 and self.turn_cards is not None and self._turn_on() else None
            every = need == 1 and (len(board) == 4 or rest.size <= (self.flops if count is None else count))
            boards = self._chance_boards(board, rest, need, every, count)
            hit = self._mean_value_on_boards(state, boards)
            if not every:
                # the tables' showdown pot on the tree (a flop-closing call under turn_exact), else the pot
                hit += self._equity_cv(state, self.node_of(state), {0: 1, 3: 2}[len(board)], boards)
            self._offtree[key] = hit
        return hit

    # ------------------------------------------------------------------ the lookahead over a chance node's boards
    def _values_on_boards(self, state, boards, buckets=None, sampled: int = 0) -> Optional[List[float]]:
        """``[value(state dealt boards[k]) for k]`` (``state`` a chance node, both hands dealt), playing the street
        lookahead once over all the boards: its betting tree is the same on every board (the betting decides
        legality, pots, the tree's node and real actions), only the policies' buckets and choices, the leaves'
        buckets and equities and the showdowns differ.  Per board the same floating-point operations in the same
        order as :meth:`value`, so the same numbers bit for bit; None where that path is not taken (no street
        lookahead here, a flop or turn whose lookahead plays the river out, a state without betting lines, a policy
        that answers differently on different boards with mixed supports): the caller then loops over the boards.
        With ``compiled_lookahead`` the walk runs in C over the kept betting lines (:meth:`_values_on_boards_compiled`),
        else in Python (:meth:`_street_boards`, the reference); the same numbers either way.  ``sampled``: the first
        ``sampled`` boards are a chance node's sample, each seen once: their equities are counted without looking them
        up in, or adding them to, the value function's memory (:class:`_Boards`; the same numbers)."""
        if not self._street or type(state) is not HoldemState:  # _Boards.state: with_board_cards
            return None
        if self._river_on() and len(state.board) != 4:
            return None  # the river played out inside the lookahead draws its sample: board by board
        key = _betting_key(state)
        if key is None:
            return None
        rep = state.clone()
        for c in boards[0][len(state.board):]:
            rep.apply_action(int(c))
        if rep.is_terminal() or rep.is_chance_node() or int(rep.round) < self.street_from:
            return None
        ctx = _Boards(self, state, [list(b) for b in boards], sampled)
        if buckets is not None:  # the next round's buckets of every board, from the chance node's batch
            r = _ROUND[len(rep.board)]
            ctx._buckets.update(((r, k), hit) for k, hit in enumerate(buckets[:len(boards)]))
        if self.compiled_lookahead and _street_kernel is not None:
            return self._values_on_boards_compiled(rep, key, ctx)
        try:
            vals = self._street_boards(rep, 0, key, ctx, np.arange(len(boards)))
        except _NotOnBoards:
            return None
        return None if vals is None else vals.tolist()

    def _values_on_boards_compiled(self, rep, key, ctx: _Boards) -> Optional[List[float]]:
        """:meth:`_values_on_boards` by the compiled walk (``street_lookahead.street_values``) from ``rep`` (the chance
        node dealt the first board) over the kept betting lines (:class:`_StreetPlans`)."""
        if self._plans is None:
            self._plans = _StreetPlans(self)
        try:
            vals = self._plans.walk(rep, key, ctx)
        except _NotOnBoards:
            return None
        return None if vals is None else vals.tolist()

    def _street_boards(self, state, depth: int, key, ctx: _Boards, idx: np.ndarray) -> Optional[np.ndarray]:
        """:meth:`_street_value` on the boards ``ctx.boards[idx]`` at once (float64[len(idx)]); None where it is
        None (on every board alike: the policies' answers to a betting line do not depend on the cards)."""
        if state.is_terminal():
            return self._terminal_boards(state, key, ctx, idx)
        if state.is_chance_node() or depth > 12:
            return None
        p = state.current_player()
        pol = self._policy[p] or self._own[p]
        if pol is None:
            return None
        got = self._policy_boards(pol, state, key, ctx, idx)
        if got is None:
            return None
        acts, probs = got
        total = np.zeros(len(idx))
        legal = self._shared.legal
        for u, a in enumerate(acts):
            q = probs[:, u]
            sel = np.flatnonzero(q > 0)
            if sel.size == 0:
                continue
            a = int(a)
            child = state.clone()
            ckey = key + (a,)
            if ckey in legal:
                child.apply_trusted(a)
            else:
                child.apply_action(a)
                _Shared.remember(legal, ckey, True)
            sub = idx[sel]
            draws = self._draws_at(state, key, a)
            if draws:  # the owner draws this raise's size: the mean over the sizes (the same on every board)
                real = self._memo
                v = np.zeros(len(sub))
                try:
                    for index, choices in draws:
                        for c, w in choices:
                            self._memo = dict(real)
                            self._memo[index] = (a, c)
                            got = self._street_boards(child, depth + 1, ckey, ctx, sub)
                            v += w * (self._leaf_boards(child, ckey, ctx, sub) if got is None else got)
                finally:
                    self._memo = real
            else:
                v = self._street_boards(child, depth + 1, ckey, ctx, sub)
                if v is None:
                    v = self._leaf_boards(child, ckey, ctx, sub)
            total[sel] += q[sel] * v
        return total

    def _policy_boards(self, pol, state, key, ctx: _Boards, idx):
        """``(actions int64[A], probs float64[len(idx), A])``: ``pol``'s strategy on each board, the actions in
        each board's own order (a board's positive actions are a subsequence of ``actions``), or None."""
        if isinstance(pol, _BlueprintPolicy):
            return pol.on_boards(state, key, self._memo, ctx.boards, idx)
        if _ignores_board(pol):
            got = pol(state)
            if got is None:
                return None
            return np.asarray(got[0]), np.broadcast_to(np.asarray(got[1], dtype=np.float64), (len(idx), len(got[1])))
        on_boards = getattr(pol.agent, "act_on_boards", None) if isinstance(pol, _ActPolicy) else None
        played = on_boards(state, [ctx.boards[k] for k in idx]) if on_boards is not None else None
        if played is not None:  # a pure agent's rules over the boards at once (A^R)
            # np.unique's actions (sorted) and inverse, for a dozen boards without its sort machinery
            vals = np.asarray(played, dtype=np.int64).tolist()
            acts = sorted(set(vals))
            at = {a: i for i, a in enumerate(acts)}
            probs = np.zeros((len(idx), len(acts)))
            probs[np.arange(len(idx)), [at[v] for v in vals]] = 1.0
            return np.array(acts, dtype=np.int64), probs
        answers = [pol(ctx.state(state, int(k))) for k in idx]
        if any(g is None for g in answers):
            if all(g is None for g in answers):
                return None
            raise _NotOnBoards()
        first = np.asarray(answers[0][0])
        if all(np.array_equal(np.asarray(g[0]), first) for g in answers):
            return first, np.array([np.asarray(g[1], dtype=np.float64) for g in answers])
        acts: List[int] = []
        picks = []
        for g in answers:  # pure answers of different actions: one column per action
            live = [int(a) for a, q in zip(*g) if q > 0]
            if len(live) != 1 or [float(q) for q in g[1] if q > 0] != [1.0]:
                raise _NotOnBoards()
            if live[0] not in acts:
                acts.append(live[0])
            picks.append(acts.index(live[0]))
        probs = np.zeros((len(idx), len(acts)))
        probs[np.arange(len(idx)), picks] = 1.0
        return np.array(acts, dtype=np.int64), probs

    def _terminal_boards(self, state, key, ctx: _Boards, idx) -> np.ndarray:
        """Seat 0's returns at a terminal on each board: a fold's are the same on every board; a heads-up
        showdown's depend only on who wins (the river equity 1, 1/2 or 0), one board of each outcome asked."""
        memo = self._shared.terminals  # (betting line, river equity or None) -> seat 0's return: the chips follow
        if state.num_active() <= 1:
            hit = memo.get((key, None))
            if hit is None:
                hit = float(state.returns()[0])
                _Shared.remember(memo, (key, None), hit)
            return np.full(len(idx), hit)
        if len(state.board) != 5 or state.game.num_players != 2:
            raise _NotOnBoards()
        eqs = ctx.equity(idx)
        out = np.empty(len(idx))
        for e in np.unique(eqs):
            at = np.flatnonzero(eqs == e)
            hit = memo.get((key, float(e)))
            if hit is None:
                hit = float(ctx.state(state, int(idx[at[0]])).returns()[0])
                _Shared.remember(memo, (key, float(e)), hit)
            out[at] = hit
        return out

    def _leaf_boards(self, state, key, ctx: _Boards, idx) -> np.ndarray:
        """:meth:`table_value` (``leaf=True``, the river not played out) of ``state`` on each board ``idx``."""
        if state.is_terminal():
            return self._terminal_boards(state, key, ctx, idx)
        if self._turn_leaf(state, key):  # a flop-closing call: the mean over the turn cards, as table_value's
            return np.array([self._offtree_mean(ctx.state(state, int(k))) for k in idx])
        node = self._shared.walker.node_of(state, key, self._memo)
        chance = state.is_chance_node()
        if chance and len(state.board) == 4 and not self._runs_out(state, key) and self._off_chance(state, node):
            return np.array([self._offtree_mean(ctx.state(state, int(k))) for k in idx])  # as table_value's leaf
        if node is None or self.tree.kind[node] != DECISION or (chance and self._runs_out(state, key)):
            return self._equity_boards(state, ctx, idx)
        r = int(self.tree.round[node])
        nb = len(state.board)
        if chance and r > 0 and nb < _BOARD[r]:
            # a round-closing call: the transition-averaged tables, as table_value computes them per board
            memo = self.table.closing
            tr = self.trans[r - 1]
            closing = self.table.closing_ds
            got = [memo.get((node, b0, b1)) or closing(node, b0, b1, tr) for b0, b1 in ctx.buckets_many(r - 1, idx)]
            dv, sv = np.array(got, dtype=np.float64).reshape(len(idx), 2).T
            return dv + sv * ctx.equity(idx)
        if nb != _BOARD[r]:
            return self._equity_boards(state, ctx, idx)
        b = np.array(ctx.buckets_many(r, idx), dtype=np.int64).reshape(len(idx), 2)
        i = int(self.table.row[node])
        d = self.table.D[r][i][b[:, 0], b[:, 1]].astype(np.float64)
        s = self.table.S[r][i][b[:, 0], b[:, 1]].astype(np.float64)
        return d + s * ctx.equity(idx)

    def _equity_boards(self, state, ctx: _Boards, idx) -> np.ndarray:
        """:meth:`_equity_value` on each board (the check-down value; the equity as ``view.equity_hands``'s after
        the flop: the same kernel counts and formula)."""
        c = self.view.contributions(state)
        return ctx.equity(idx) * (c[0] + c[1]) - c[0]

    def _river_on(self) -> bool:
        """Whether a turn-closing call is valued by its exact river expectation (both strategies known)."""
        return self.river_exact and self._street and self.street_from <= 3

    def _river_mean(self, state) -> float:
        """The mean of :meth:`value` over every river card at a turn-closing chance node, so the river's chance
        term has no residual: the river is played out with both agents' strategies for their actual hands.
        Cached per hand by history and abstract node (all that the owner's remembered translations change in
        the river's values), so the sample is drawn once per state and node."""
        key = (tuple(state.history()), self.node_of(state))
        hit = self._river.get(key)
        if hit is None:
            dead = set(state.board) | set(state.hole[0]) | set(state.hole[1])
            rest = np.array([c for c in range(52) if c not in dead], dtype=np.int64)
            every = self.river_cards >= rest.size
            if not every:  # a uniform sample without replacement: unbiased for the mean
                rest = rest[np.argsort(self._random(rest.size))[:self.river_cards]]
            board = [int(c) for c in state.board]
            boards = [board + [int(c)] for c in rest]
            hit = self._mean_value_on_boards(state, boards)  # no sample is drawn inside the river's lookahead
            if not every:
                hit += self._equity_cv(state, key[1], 3, boards)
            self._river[key] = hit
        return hit

    def _deal(self) -> float:
        """The exact expectation of :meth:`value` after the hole cards over all ordered pairs of disjoint hands
        (chips): the tables' (:meth:`_table_deal`) when the first to act preflop is modelled by them, else one step
        of that seat's known strategy (:meth:`_deal_one_step`), as :meth:`value` plays it there."""
        first = self._first_seat()
        pol = self._policy[first]
        if pol is None:
            return self._table_deal()
        agent = self._agents[first]
        key = (id(self.table), first, id(agent), tuple(sorted(self._memo.items())) if self._memo else (),
               self.owner_draws)
        hit = self._deals_one_step.get(key)
        if hit is None or hit[0] is not agent or hit[1] is not self.table:  # ids of objects since freed
            hit = self._deals_one_step[key] = (agent, self.table, self._deal_one_step(first, pol))
        return hit[2]

    def _table_deal(self) -> float:
        """The tables' exact expectation over the deal: ``E[D0[b(h0), b(h1)] + S0[b(h0), b(h1)] * eq(h0, h1)]``
        over all ordered pairs of disjoint hands."""
        if self._shared.deal_value is None:
            self._shared.deal_value = deal_expectation(self.table, self.ab)
        return self._shared.deal_value

    def _first_seat(self) -> int:
        """The seat that acts first after the hole cards (found once per game: a function of its rules)."""
        game = self.view.game
        hit = self._first
        if hit is None or hit[0] is not game:
            s = game.new_initial_state()
            for c in (0, 1, 2, 3):  # any four cards: the order of play does not depend on them
                s.apply_action(c)
            hit = self._first = (game, int(s.current_player()))
        return hit[1]

    def _deal_one_step(self, first: int, pol) -> float:
        """``E[sum_a pol(a | h_first) table_value(root a)]`` over all ordered pairs of disjoint hands (chips), what
        :meth:`value` is after the deal when seat ``first``'s strategy ``pol`` is known.  Per child ``a`` the value is
        ``A_a[b0, b1] + B_a[b0, b1] * eq(h0, h1)`` (a fold: its chips; a decision on the tree: the tables; off the
        tree: the check-down equity value), so the expectation is exact with the deal's pair matrices, ``pol``
        asked once per hand of seat ``first`` (1,326 calls).  Taking the tables' expectation instead (the blueprint
        in that seat) was biased against A^R (benchmarks/RESULTS.md, branch aivat-80c).  With ``owner_draws`` a
        raise whose size the owner will draw is the mean over its sizes' children (the draw's probabilities depend
        on the betting alone, not the cards), as :meth:`_value`'s one step takes it."""
        nb = self.table.num_buckets[0]
        cls = np.asarray(self.ab.buckets_for_board(0, []), dtype=np.int64)
        pairs = np.asarray(HOLE_PAIRS, dtype=np.int64)
        cards = np.zeros((1326, 52))
        cards[np.arange(1326), pairs[:, 0]] = 1.0
        cards[np.arange(1326), pairs[:, 1]] = 1.0
        disjoint = ((cards @ cards.T) == 0).astype(np.float64)
        onehot = np.zeros((1326, nb))
        onehot[np.arange(1326), cls] = 1.0
        eqd = disjoint * preflop_equity_table(progress=False)  # seat 0's equity [h0, h1]
        weights: dict = {}  # action -> (float64[1326] probability per hand of ``first``, a child state, its parent)
        for h in range(1326):
            mine = [int(c) for c in pairs[h]]
            theirs = next([int(c) for c in pairs[g]] for g in range(1326) if disjoint[h, g])
            hole = (mine, theirs) if first == 0 else (theirs, mine)
            state = self.view.game.new_initial_state()
            for c in (*hole[0], *hole[1]):  # the engine deals seat 0's two cards, then seat 1's
                state.apply_action(c)
            if sorted(state.hole[first]) != mine:
                raise GameError("_deal_one_step: the hole cards were dealt in another order than expected")
            got = pol(state)
            if got is None:
                raise GameError("_deal_one_step: the known strategy gives none at the root")
            for a, q in zip(*got):
                if q > 0:
                    w = weights.get(int(a))
                    if w is None:
                        child = state.clone()
                        child.apply_action(int(a))
                        w = weights[int(a)] = (np.zeros(1326), child, state)
                    w[0][h] += float(q)
        total = 0.0
        for a, (w, child, parent) in weights.items():
            wm = onehot * w[:, None]
            if first == 0:
                joint, eqw = wm.T @ disjoint @ onehot, wm.T @ eqd @ onehot
            else:
                joint, eqw = onehot.T @ disjoint @ wm, onehot.T @ eqd @ wm
            if child.is_terminal():
                total += float(child.returns()[0]) * joint.sum()
                continue
            if child.is_chance_node():
                raise GameError("_deal_one_step: a first action that closes the preflop round is not supported")
            # a raise whose size the owner draws (``owner_draws``): the mean over the sizes, as value() takes it
            draws = self._draws_at(parent, None, a)
            sizes = [(None, 1.0)] if not draws else [(c, q) for c, q in draws[0][1]]
            for c, q in sizes:
                memo = self._memo
                if c is not None:
                    memo = dict(self._memo)
                    memo[draws[0][0]] = (a, c)
                node = self._shared.walker.node_of(child, None, memo)
                if node is None or self.tree.kind[node] != DECISION or int(self.tree.round[node]) != 0:
                    c0 = self.view.contributions(child)  # the check-down equity value eq * pot - c0
                    total += q * (float(c0[0] + c0[1]) * eqw.sum() - float(c0[0]) * joint.sum())
                    continue
                d, s_ = self.table.ds(node)
                total += q * float(np.sum(joint * d) + np.sum(eqw * s_))
        return total / disjoint.sum()


#: the two calls :meth:`BlueprintValueFunction.chance_and_value` stands for (where either is replaced, it makes them)
_OWN_CALLS = (BlueprintValueFunction.value, BlueprintValueFunction.chance_expectation)


def _rules_arrays(agent, state) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """``(rules float64[12], rule_acts int64[6])`` of ``agent``'s postflop rules at ``state`` for the compiled walk
    (``street_lookahead``'s ``Plan.rules`` / ``Plan.rule_acts``, from its ``board_rules_context``), or None where
    it does not play them there heads-up (A^R preflop, another game, more than one opponent).  A function of the
    betting line and the street (the context is the betting's part of the rules)."""
    rules_at = getattr(agent, "board_rules_context", None)
    c = rules_at(state) if rules_at is not None and state.game.num_players == 2 else None
    if c is None or c.k != 1:
        return None
    k = _street_kernel
    par = np.zeros(12)
    par[[k.R_FREE, k.R_RIVER, k.R_VALUE, k.R_NUT, k.R_RAISE_STRENGTH, k.R_MADE, k.R_DRAW_OUTS, k.R_NEED, k.R_ODDS,
         k.R_MULT, k.R_FOLD, k.R_CBET]] = (
        c.free, c.river, c.value_bet, c.nut_strength, c.raise_strength, c.made_min, c.draw_outs, c.need, c.odds,
        c.outs_mult, c.fold_legal, c.cbet_rule)
    acts = np.full(6, -1, dtype=np.int64)
    for i, a in ((k.A_NUT, c.nut), (k.A_WET, c.wet), (k.A_DRY, c.dry), (k.A_DRAW, c.draw), (k.A_CBET, c.cbet),
                 (k.A_RAISE, c.raise_)):
        if a is not None:
            acts[i] = int(a)
    if not c.draw_rule:
        acts[k.A_DRAW] = -1
    if not c.cbet_rule:
        acts[k.A_CBET] = -1
    return par, acts


class _StreetPlans:
    """The betting lines of the compiled street lookahead (``pyx/street_lookahead.pyx``'s ``Plan``) of one value
    function, and the builder its walk calls back.  Each method is the Python walk's step at one line
    (:meth:`BlueprintValueFunction._street_boards`, ``_policy_boards``, ``_leaf_boards``, ``_terminal_boards``), so
    the compiled walk asks the same policies and reads the same caches.  What a line is (a fold's chips, whose policy
    acts and how, which table entry or check-down value is its leaf) depends only on the betting, the owner's
    remembered translations, the policies and the tables, which key the kept roots, so lines are shared by every
    hand: a policy that reads the hand is asked on the walk's own state (:meth:`state_of`, the line's state with
    this walk's cards).  ``ctx`` (the boards), ``rep`` and ``round`` are set per walk."""

    _CLOSING_BYTES = 64 << 20  # the round-closing calls' dense tables kept, at most

    def __init__(self, vf: BlueprintValueFunction):
        self.vf = vf
        # the lines and the closing tables are kept with what the value functions of later matches share
        # (BlueprintValueFunction.fresh); the settings that shape a line key its root
        shared = vf._shared
        if shared.plan_roots is None:
            shared.plan_roots, shared.plan_closing = {}, {}
        self.roots: dict = shared.plan_roots
        self.ctx: Optional[_Boards] = None
        self.rep = None
        self.round = -1
        self.states: dict = {}
        self._closing: dict = shared.plan_closing  # (table, node) -> float64[B, B, 2], NaN where not read yet
        # _values_with_real: the board (the last) whose decision lines' values the next walk appends to ``recorded``
        self.record = -1
        self.recorded: list = []

    def walk(self, rep, key, ctx: _Boards) -> Optional[np.ndarray]:
        """The lookahead's values on ``ctx``'s boards from ``rep`` (a state after the chance node's cards, dealt the
        first board), or None where it has none (:meth:`BlueprintValueFunction._street_boards`)."""
        vf = self.vf
        sig = tuple(_policy_sig(vf._policy[p] or vf._own[p]) for p in (0, 1))
        settings = tuple(getattr(vf, k) for k in _PLAN_SETTINGS)
        mk = (key, tuple(sorted(vf._memo.items())) if vf._memo else None, sig, vf.table, len(rep.board), settings)
        root = self.roots.get(mk)
        if root is None:
            root = self._plan(rep, key, 0, None)
            # about 25 lines per root (a plan and its state ~1.5 KB): at most ~75 MB kept, then built anew
            _Shared.remember(self.roots, mk, root, limit=2_000)
        if root.street == _street_kernel.ST_NONE:
            return None
        idx = np.arange(len(ctx.boards))
        r = _ROUND[len(rep.board)]
        b = np.array(ctx.buckets_many(r, idx), dtype=np.int64).reshape(len(idx), 2)
        eq = ctx.equity(idx)
        outer = self.ctx, self.rep, self.round, self.states  # a leaf's mean over river cards walks inside this walk
        self.ctx, self.rep, self.round, self.states = ctx, rep, r, {}
        record, self.record = self.record, -1  # the walk of _values_with_real only, not the walks inside it
        ddot = _numpy_ddot()
        tr = self.vf.trans[r] if ddot and r < len(self.vf.trans) else None
        try:
            return _street_kernel.street_values(root, self, b[:, 0], b[:, 1], eq, record, self.recorded,
                                                ddot if tr is not None else 0, tr)
        finally:
            self.ctx, self.rep, self.round, self.states = outer

    def _plan(self, state, key, depth: int, parent):
        """The plan of ``state`` (betting line ``key``, ``depth`` below the root): its street kind as
        :meth:`BlueprintValueFunction._street_boards` decides it, children built when first reached."""
        k = _street_kernel
        vf = self.vf
        plan = k.Plan(state, key, depth)
        if state.is_terminal():
            if state.num_active() <= 1:
                memo = vf._shared.terminals
                hit = memo.get((key, None))
                if hit is None:
                    hit = float(state.returns()[0])
                    _Shared.remember(memo, (key, None), hit)
                plan.street, plan.value = k.ST_FOLD, hit
            elif len(state.board) != 5 or state.game.num_players != 2:
                plan.street = k.ST_RAISE
            else:
                plan.street, plan.sd = k.ST_SHOWDOWN, np.full(3, np.nan)
            return plan
        if state.is_chance_node() or depth > 12:
            return plan
        p = state.current_player()
        pol = vf._policy[p] or vf._own[p]
        if pol is None:
            return plan
        plan.policy = pol
        if isinstance(pol, _BlueprintPolicy) and pol._buckets is vf._shared.buckets:
            # the value function's abstraction: the rows by the buckets the walk already has
            got = pol._node_acts(state, key, vf._memo)
            if got is None:
                return plan
            node, acts = got
            if node < 0:
                plan.street, plan.acts, plan.probs = k.ST_CONST, acts, np.ones(1)
            elif int(pol.agent.tree.round[node]) == _ROUND[len(state.board)]:
                plan.street, plan.acts, plan.probs, plan.player = k.ST_TABLE, acts, pol.table(node), p
            else:
                plan.street = k.ST_PY
        elif isinstance(pol, _ActPolicy) and self._rules_plan(plan, pol.agent, state, p):
            pass  # A^R's postflop rules on each board's features, in the walk
        elif _ignores_board(pol) and _ignores_hand(pol):
            got = pol(state)  # the betting alone decides: one answer for every hand and board
            if got is None:
                return plan
            plan.street, plan.acts = k.ST_CONST, np.asarray(got[0], dtype=np.int64)
            plan.probs = np.ascontiguousarray(got[1], dtype=np.float64)
        else:
            plan.street = k.ST_PY
            plan.cache = {}
        if plan.street in (k.ST_TABLE, k.ST_CONST):
            plan.children = [None] * len(plan.acts)
        return plan

    @staticmethod
    def _rules_plan(plan, agent, state, p: int) -> bool:
        """Make ``plan`` an ``ST_RULES`` line where ``agent`` plays its postflop rules on the boards (A^R heads-up:
        its ``board_rules_context``); False where it does not (the Python walk asks it)."""
        got = _rules_arrays(agent, state)
        if got is None:
            return False
        k = _street_kernel
        plan.street, plan.player, plan.policy = k.ST_RULES, p, agent
        plan.rules, plan.rule_acts = got
        return True

    def plan_features(self, plan):
        """``(hs, ehs, outs, wet)`` of the hand of ``plan``'s player on every board of the walk (A^R's features)."""
        hs, ehs, outs, wet = plan.policy.features_on_boards(self.state_of(plan), self.ctx.boards)
        return (np.ascontiguousarray(hs, dtype=np.float64), np.ascontiguousarray(ehs, dtype=np.float64),
                np.ascontiguousarray(outs, dtype=np.int64), np.ascontiguousarray(wet, dtype=np.uint8))

    def plan_shares(self, plan) -> np.ndarray:
        """Whether the hand of ``plan``'s player is in A^R's c-bet share on every board of the walk."""
        return plan.policy.cbet_share_on_boards(self.state_of(plan), self.ctx.boards)

    def state_of(self, plan):
        """``plan``'s state with this walk's hands and board (the line's betting, the cards of ``rep``)."""
        hit = self.states.get(plan)
        if hit is None:
            s, rep = plan.state, self.rep
            hit = s if s.hole == rep.hole and s.board == rep.board else s.with_cards(rep.hole, rep.board)
            self.states[plan] = hit
        return hit

    def plan_child(self, plan, action: int):
        """The plan after ``action`` at ``plan``'s line (legality checked once per line, as the Python walk does).
        A raise whose size the owner draws (``owner_draws``) is a leaf valued in Python (:meth:`plan_leaf_values`:
        the mean over the sizes of the Python walk below it, as ``_street_boards`` takes it)."""
        a = int(action)
        child = plan.state.clone()
        ckey = plan.key + (a,)
        legal = self.vf._shared.legal
        if ckey in legal:
            child.apply_trusted(a)
        else:
            child.apply_action(a)
            _Shared.remember(legal, ckey, True)
        draws = self.vf._draws_at(plan.state, plan.key, a)  # a function of the betting and the memo (the root's)
        if draws:
            k = _street_kernel
            out = k.Plan(child, ckey, plan.depth + 1)
            out.street, out.leaf, out.cache = k.ST_NONE, k.LF_PY, (a, draws)
            return out
        return self._plan(child, ckey, plan.depth + 1, plan)

    def plan_policy(self, plan, idx):
        """A policy that reads the hand or the boards (A^R's rules, another abstraction's rows): the Python walk's
        answer on this walk's state; a board-blind one's answer (one row for every board) kept per hand."""
        pol = plan.policy
        if _ignores_board(pol):
            hand = tuple(self.rep.hole[plan.state.current_player()])
            hit = plan.cache.get(hand)
            if hit is None:
                got = pol(self.state_of(plan))
                hit = None if got is None else (np.asarray(got[0], dtype=np.int64),
                                                np.ascontiguousarray(got[1], dtype=np.float64))
                if len(plan.cache) >= 64:
                    plan.cache.clear()
                plan.cache[hand] = hit
            return hit
        return self.vf._policy_boards(pol, self.state_of(plan), plan.key, self.ctx, idx)

    def plan_leaf(self, plan) -> None:
        """Set ``plan``'s leaf kind as :meth:`BlueprintValueFunction._leaf_boards` decides it."""
        k = _street_kernel
        vf = self.vf
        state, key = plan.state, plan.key
        plan.leaf = k.LF_PY
        if state.is_terminal() or vf._turn_leaf(state, key):  # the mean over the turn cards (Python)
            return
        node = vf._shared.walker.node_of(state, key, vf._memo)
        chance = state.is_chance_node()
        if chance and len(state.board) == 4 and not vf._runs_out(state, key) and vf._off_chance(state, node):
            return  # the mean over the river cards (Python)
        if node is None or vf.tree.kind[node] != DECISION or (chance and vf._runs_out(state, key)):
            self._equity_leaf(plan)
            return
        r = int(vf.tree.round[node])
        nb = len(state.board)
        if chance and r > 0 and nb < _BOARD[r]:
            if r - 1 == self.round:  # a round-closing call: the transition-averaged tables at this round's buckets
                plan.leaf, plan.closing, plan.node = k.LF_CLOSING, self._closing_table(node), node
                plan.rows = self._closing_rows(node)  # the entries computed in the walk (None: plan_closing)
            return
        if nb != _BOARD[r]:
            self._equity_leaf(plan)
            return
        if r != self.round:
            return
        i = int(vf.table.row[node])
        plan.leaf, plan.d, plan.s = k.LF_ONBOARD, vf.table.D[r][i], vf.table.S[r][i]

    def _closing_table(self, node: int) -> np.ndarray:
        """float64[B, B, 2] of ``node`` (the next round's first decision): ``table.closing_ds`` per bucket pair of
        the round that ends, NaN until read."""
        table = self.vf.table
        hit = self._closing.get((table, node))
        if hit is None:
            b = table.num_buckets[int(self.vf.tree.round[node]) - 1]
            hit = np.full((b, b, 2), np.nan)
            # with each closing table its rows (plan_closing): twice its bytes per node
            if len(self._closing) * hit.nbytes >= 2 * self._CLOSING_BYTES * _SCALE[0]:
                self._closing.clear()
            self._closing[(table, node)] = hit
        return hit

    def _closing_rows(self, node: int) -> Optional[np.ndarray]:
        """float64[B, 2, L] of ``node`` (NaN until :meth:`plan_rows` computes a row): the rows ``tr[b0] @ D[node]`` and
        ``tr[b0] @ S[node]`` of its closing entries, from which the compiled walk computes the entries itself with
        numpy's ddot (:func:`_numpy_ddot`); None where that is not found or the transitions are not a C-contiguous
        float64 matrix of 2+ columns (the walk then asks :meth:`plan_closing`)."""
        vf = self.vf
        tr = vf.trans[int(vf.tree.round[node]) - 1]
        if (not _numpy_ddot() or tr.dtype != np.float64 or not tr.flags.c_contiguous or tr.ndim != 2
                or tr.shape[1] < 2):
            return None
        key = (vf.table, node, "rows")
        hit = self._closing.get(key)
        if hit is None:
            hit = self._closing[key] = np.full((tr.shape[0], 2, tr.shape[1]), np.nan)
        return hit

    def plan_rows(self, plan, b0s) -> None:
        """Fill ``plan.rows[b0]`` for every ``b0`` of ``b0s`` (int64): ``(tr[b0] @ D[node], tr[b0] @ S[node])`` as
        ``table.closing_ds`` computes them (its remembered ones where it has them)."""
        vf = self.vf
        node = int(plan.node)
        table = vf.table
        tr = vf.trans[int(vf.tree.round[node]) - 1]
        memo = table._closing_rows
        ds = None
        rows = plan.rows
        for b0 in b0s.tolist():
            got = memo.get((node, b0))
            if got is None:
                if ds is None:
                    ds = table.ds(node)
                got = (tr[b0] @ ds[0], tr[b0] @ ds[1])
                _Shared.remember(memo, (node, b0), got, limit=20_000)
            rows[b0, 0] = got[0]
            rows[b0, 1] = got[1]

    def plan_closing(self, plan, b0s, b1s) -> None:
        """Fill ``plan.closing[b0s[j], b1s[j]]`` for every ``j`` (int64 arrays, the entries the walk found unread) from
        the tables: the value function's remembered closing values (``table.closing_many``: ``closing_ds`` of each)."""
        vf = self.vf
        node = int(plan.node)
        table = vf.table
        tr = vf.trans[int(vf.tree.round[node]) - 1]
        ddot = _numpy_ddot()
        cl = plan.closing
        if (not ddot or tr.dtype != np.float64 or not tr.flags.c_contiguous or tr.ndim != 2 or tr.shape[1] < 2
                or cl.shape[:2] != (tr.shape[0], tr.shape[0])):
            got = table.closing_array(node, b0s.tolist(), b1s.tolist(), tr)
            cl[b0s, b1s] = got  # the same doubles (an entry asked twice: the same value twice)
            return
        # the rows tr[b0] @ D[node] and tr[b0] @ S[node] of this node, computed once per b0 as closing_ds computes
        # them (its remembered ones where it has them), kept densely beside the closing table; then the second
        # products in one kernel call (closing_ds's doubles: ndarray.dot by numpy's own ddot)
        rows = plan.rows if getattr(plan, "rows", None) is not None else self._closing_rows(node)
        need = sorted({b0 for b0 in b0s.tolist() if rows[b0, 0, 0] != rows[b0, 0, 0]})
        if need:
            self.plan_rows(SimpleNamespace(node=node, rows=rows), np.array(need, dtype=np.int64))
        _street_kernel.fill_closing(ddot, cl, rows, tr, b0s, b1s)

    def _equity_leaf(self, plan) -> None:
        c = self.vf.view.contributions(plan.state)  # the check-down value eq * (c0 + c1) - c0
        plan.leaf, plan.pot, plan.c0 = _street_kernel.LF_EQUITY, c[0] + c[1], c[0]

    def plan_leaf_values(self, plan, idx) -> np.ndarray:
        vf = self.vf
        if plan.street == _street_kernel.ST_NONE and isinstance(plan.cache, tuple):  # after a drawn raise
            a, draws = plan.cache
            state, real = self.state_of(plan), vf._memo
            idx = np.asarray(idx)
            v = np.zeros(len(idx))
            try:  # _street_boards' draw branch, its operations in its order
                for index, choices in draws:
                    for c, w in choices:
                        vf._memo = dict(real)
                        vf._memo[index] = (a, c)
                        got = vf._street_boards(state, plan.depth, plan.key, self.ctx, idx)
                        v += w * (vf._leaf_boards(state, plan.key, self.ctx, idx) if got is None else got)
            finally:
                vf._memo = real
            return v
        return vf._leaf_boards(self.state_of(plan), plan.key, self.ctx, idx)

    def plan_showdown(self, plan, k: int) -> float:
        """Seat 0's chips at ``plan``'s showdown on board ``k`` (one per river equity, remembered as the Python walk
        remembers them)."""
        e = float(self.ctx.equity([int(k)])[0])
        memo = self.vf._shared.terminals
        hit = memo.get((plan.key, e))
        if hit is None:
            hit = float(self.ctx.state(self.state_of(plan), int(k)).returns()[0])
            _Shared.remember(memo, (plan.key, e), hit)
        return hit

    @staticmethod
    def plan_not_on_boards() -> None:
        raise _NotOnBoards()


#: the value function's settings that shape a kept line of the compiled lookahead (its leaves, its policies)
_PLAN_SETTINGS = ("lookahead", "blueprint_lookahead", "street_from", "follow_owner", "river_exact", "river_leaves",
                  "owner_fallback", "flops", "river_cards", "chance_cv", "turn_exact", "_turn_suspended")


def _policy_sig(pol):
    """What a lookahead policy is, for the kept betting lines: equal for the policies of one agent across hands (a
    bound ``own_strategy``, an ``_ActPolicy``), the object itself otherwise (kept per hand only)."""
    if pol is None or isinstance(pol, _BlueprintPolicy):
        return pol
    if isinstance(pol, _ActPolicy):
        return _ActPolicy, pol.agent
    owner, func = getattr(pol, "__self__", None), getattr(pol, "__func__", None)
    if owner is not None and func is not None:
        return owner, func
    return pol


class _BlueprintPolicy:
    """A blueprint agent's strategy for the actual hand at a state, without touching the agent (its translation
    sampler, memo and off-tree flags): the walk of :meth:`BlueprintValueFunction.node_of` with that agent's tree
    and translation; None (no lookahead) where its tree cannot follow the hand.

    ``follow`` (the owner of the value function's tables): the walk follows the ``memo`` passed at each call (the
    agent's own remembered translations), and where its tree cannot follow the hand the policy is what
    :meth:`~cfrkit.agents.blueprint.BlueprintAgent.own_strategy` does there (call after an abstract all-in, else
    the nearest node's strategy)."""

    def __init__(self, agent, buckets: Optional[dict] = None, follow: bool = False):
        self.agent = agent
        self.follow = bool(follow)
        self.walker = NodeWalker(agent.tree, agent.translate_raise)
        self.nodes = self.walker.node_of
        self._buckets = {} if buckets is None else buckets  # see _two_buckets
        # betting line -> (node, real actions of its children), or (None, abstract all-in) off the tree: the cards
        # do not matter; one such dict per remembered-translations memo (``follow``) in ``_follow``
        self._lines = {}
        self._follow = {}
        self._rows = {}    # (node, bucket) -> the average strategy's row
        self._tables = {}  # node -> every bucket's row (see table)

    def _actions(self, node: int, state) -> np.ndarray:
        a = self.agent
        first = int(a.tree.child_start[node])
        acts = np.array([a.real_action(first + i, state) for i in range(int(a.tree.num_children[node]))],
                        dtype=np.int64)
        acts.setflags(write=False)
        return acts

    def _node_acts(self, state, key, memo) -> Optional[Tuple[int, np.ndarray]]:
        """``(node, real actions of its children)`` at ``state`` (a function of the betting line and ``memo``
        only), or None where the policy gives none; the pure call after an abstract all-in is ``(-1, [CALL])``."""
        a = self.agent
        if key is None:
            key = _betting_key(state)
        memo = memo if self.follow and memo else None
        if memo is None:
            lines = self._lines
        else:
            mk = tuple(sorted(memo.items()))
            lines = self._follow.get(mk)
            if lines is None:
                if len(self._follow) >= _FOLLOW_MEMOS:  # a hand's memos (it grows; each draw's expectation tries sizes)
                    self._follow.clear()
                lines = self._follow[mk] = {}
        hit = lines.get(key) if key is not None else None
        if hit is None:
            node, all_in = self.walker.walk(state, key, memo)
            if node is not None and (a.tree.kind[node] != DECISION or a.tree.round[node] != state.round
                                     or (self.follow and a.tree.player[node] != state.current_player())):
                node, all_in = None, bool(a.tree.kind[node] == SHOWDOWN)
            hit = (None, all_in) if node is None else (node, self._actions(node, state))
            if key is not None:
                _Shared.remember(lines, key, hit)
        node, acts = hit
        if node is None:
            if not self.follow:
                return None
            node = None if acts else a.nearest_node(state)  # acts: whether an abstract all-in left the tree
            if node is None:
                return -1, _CALL_ONLY[0]
            acts = self._actions(node, state)
        return node, acts

    def table(self, node: int) -> np.ndarray:
        """float64[B_r, children]: :meth:`_row` of every bucket of ``node``'s round (the compiled lookahead's rows)."""
        hit = self._tables.get(node)
        if hit is None:
            nb = int(self.agent.blueprint.num_buckets[int(self.agent.tree.round[node])])
            # one kernel call for every bucket: its rows are :meth:`_row`'s bit for bit (each row on its own; tested)
            hit = np.ascontiguousarray(self.agent.blueprint.probabilities(node, np.arange(nb)), dtype=np.float64)
            hit.setflags(write=False)
            _Shared.remember(self._tables, node, hit, limit=20_000)
        return hit

    def _row(self, node: int, b: int) -> np.ndarray:
        row = self._rows.get((node, b))
        if row is None:
            row = self.agent.blueprint.probabilities(node, [b])[0]
            row.setflags(write=False)
            _Shared.remember(self._rows, (node, b), row)
        return row

    def __call__(self, state, key=None, memo=None):
        got = self._node_acts(state, key, memo)
        if got is None:
            return None
        node, acts = got
        if node < 0:
            return _CALL_ONLY
        a = self.agent
        p = state.current_player()
        if len(state.hole[1 - p]) == 2:
            b = _two_buckets(a.blueprint.abstraction, self._buckets, int(a.tree.round[node]), state.board,
                             state.hole)[p]
        else:
            b = int(a.blueprint.abstraction.buckets_for_board(int(a.tree.round[node]),
                                                               list(state.board))[pair_index(*state.hole[p])])
        return acts, self._row(node, b)

    def on_boards(self, state, key, memo, boards, idx) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """What :meth:`__call__` gives at ``state`` with its board replaced by ``boards[k]`` for each ``k`` in
        ``idx`` (the same betting line, so the same node and actions): ``(actions int64[A], probs float64[len(idx),
        A])``, or None where :meth:`__call__` gives None.  Both hands are dealt."""
        got = self._node_acts(state, key, memo)
        if got is None:
            return None
        node, acts = got
        if node < 0:
            return _CALL_ONLY[0], np.ones((len(idx), 1))
        p = state.current_player()
        ab, r = self.agent.blueprint.abstraction, int(self.agent.tree.round[node])
        both = _two_buckets_boards(ab, self._buckets, r, [boards[k] for k in idx], state.hole)
        return acts, np.array([self._row(node, b[p]) for b in both])


#: the pure check / call (actions int64[1], probs float64[1]), shared read-only
_CALL_ONLY = (np.array([CALL], dtype=np.int64), np.ones(1))
for _x in _CALL_ONLY:
    _x.setflags(write=False)


class _ActPolicy:
    """The pure strategy of an agent with ``pure_strategy``: ``(actions [act(state)], probs [1.0])``."""

    def __init__(self, agent):
        self.agent = agent

    def __call__(self, state):
        return np.array([int(self.agent.act(state))]), np.ones(1)


def _ignores_board(policy) -> bool:
    """Whether a lookahead policy's answer is the same on every board (its agent's ``ignores_board``)."""
    owner = getattr(policy, "agent", None) or getattr(policy, "__self__", None)
    return bool(getattr(owner, "ignores_board", False))


def _ignores_hand(policy) -> bool:
    """Whether a lookahead policy's answer is the same for every hand too (its agent's ``ignores_hand``)."""
    owner = getattr(policy, "agent", None) or getattr(policy, "__self__", None)
    return bool(getattr(owner, "ignores_hand", False))


class _NotOnBoards(Exception):
    """The lookahead over a chance node's boards cannot be shared (the per-board path takes over)."""


class _DrawInWalk(Exception):
    """A draw from the value function's generator inside the walk that values the dealt board with the sampled ones
    (:meth:`BlueprintValueFunction._values_with_real`): the separate calls take over."""


class _Boards:
    """The boards of one chance expectation for :meth:`BlueprintValueFunction._values_on_boards`: ``boards[k]``
    (full board lists), the hands, and per board the two buckets of a round and the equity, computed when first
    asked (the value function's caches, so the numbers are the per-board path's).  ``sampled``: the first ``sampled``
    boards are a chance node's sample, each seen once: their equities are counted without the value function's memory
    (neither looked up nor added: a function of the board and the hands, so the same numbers)."""

    def __init__(self, vf, state, boards, sampled: int = 0):
        self.vf = vf
        self.boards = boards
        self.sampled = int(sampled)
        self.hole = state.hole
        self.first = len(state.board)            # where the new cards start on the board
        self._eq = {}
        self._buckets = {}

    def equity(self, idx) -> np.ndarray:
        eq = self._eq
        ks = idx.tolist() if isinstance(idx, np.ndarray) else [int(k) for k in idx]  # Python ints: fast dict keys
        miss = [k for k in ks if k not in eq]
        if miss:
            self._fill_equity(miss)
        return np.array([eq[k] for k in ks], dtype=np.float64)

    def _fill_equity(self, miss) -> None:
        """The equities of boards ``miss``: the value function's remembered ones, the others counted in one kernel
        call (``equity.hand_vs_hand_boards``: :func:`_equity`'s integer counts and formula, so the same numbers)."""
        vf = self.vf
        h0, h1 = tuple(self.hole[0]), tuple(self.hole[1])
        known = vf._shared.equities
        todo = []
        sampled = self.sampled
        for k in miss:
            e = None if k < sampled else known.get((h0, h1, tuple(self.boards[k])))
            if e is None:
                todo.append(k)
            else:
                self._eq[k] = e
        if len(todo) < 2 or _hvh_boards is None or not self.boards[todo[0]]:
            for k in todo:
                self._eq[k] = vf._equity(self.hole, self.boards[k])
            return
        wtl = _hvh_boards(int(h0[0]), int(h0[1]), int(h1[0]), int(h1[1]),
                          np.array([self.boards[k] for k in todo], dtype=np.uint8))
        eq = self._eq
        # (w + 0.5 t) / (w + t + l) on Python numbers: numpy's float64 operations on the int64 counts, the same doubles
        for k, (w, t, l) in zip(todo, wtl.tolist()):
            e = (w + 0.5 * t) / (w + t + l)
            eq[k] = e
            if k >= sampled:
                _Shared.remember(known, (h0, h1, tuple(self.boards[k])), e)

    def buckets(self, r: int, k: int) -> Tuple[int, int]:
        hit = self._buckets.get((r, k))
        if hit is None:
            hit = self._buckets[(r, k)] = self.vf._buckets(r, self.boards[k], self.hole)
        return hit

    def buckets_many(self, r: int, idx) -> List[Tuple[int, int]]:
        """``[buckets(r, k) for k in idx]``, the boards not yet asked bucketed together."""
        miss = [int(k) for k in idx if (r, int(k)) not in self._buckets]
        if len(miss) > 1:
            got = _two_buckets_boards(self.vf.ab, self.vf._shared.buckets, r, [self.boards[k] for k in miss],
                                      self.hole)
            for k, hit in zip(miss, got):
                self._buckets[(r, k)] = hit
        return [self.buckets(r, int(k)) for k in idx]

    def state(self, state, k: int):
        """``state`` (on this chance node's street, any board) with board ``k``'s cards: the state the per-board
        path reaches by the same betting (the cards enter only the board and the history)."""
        return state.with_board_cards(self.first, self.boards[k][self.first:])


def _betting_key(state) -> Optional[Tuple[int, ...]]:
    """The betting actions of a hold'em state's history (action ids, chance cards left out), or None for a
    state that does not keep its per-round action list."""
    rounds = getattr(state, "actions", None)
    if rounds is None:
        return None
    # a list comprehension and raise_action inline (asked several times per state of the AIVAT walk: ~1 us less)
    if state.d.is_limit:
        return tuple([FOLD if code == "f" else CALL if code == "c" else RAISE for rnd in rounds for _, code, _t in rnd])
    return tuple([FOLD if code == "f" else CALL if code == "c" else RAISE_OFFSET + int(total)
                  for rnd in rounds for _, code, total in rnd])


def walk_step(t, translate_raise, node: int, real, action: int, got) -> Optional[int]:
    """The abstract child of ``node`` that betting ``action`` at the real state ``real`` leads to: a raise takes
    ``got`` (an agent's remembered ``(real action, abstract child)`` for this history index) when it matches, else
    its most likely translation; None where the tree cannot follow, -1 where that is an abstract all-in."""
    if t.kind[node] != DECISION or t.player[node] != real.current_player():
        return -1 if t.kind[node] == SHOWDOWN else None
    if action in (FOLD, CALL):
        return t.child_of_kind(node, ACTION_FOLD if action == FOLD else ACTION_CALL)
    first = int(t.child_start[node])
    if got is not None and got[0] == action and first <= got[1] < first + int(t.num_children[node]):
        return int(got[1])
    choices = translate_raise(node, real, raise_amount(action))
    if not choices:
        return None
    return max(choices, key=lambda cp: cp[1])[0]


def _walk_history(tree, translate_raise, state, memo=None) -> Tuple[Optional[int], bool]:
    """``(node, all_in)`` of ``state`` by walking its whole history from the root (the reference of
    :class:`NodeWalker`): the node (None when the tree cannot follow the history) and whether the failure is an
    abstract all-in.  ``memo`` (an agent's :attr:`~cfrkit.agents.blueprint.BlueprintAgent.translations`: history
    index -> (real action, abstract child)): the raises it holds take its child, as the agent's own walk does;
    never the agent's sampler.  Reading an agent's past translations keeps AIVAT unbiased: they are drawn before
    any term that uses them and independently of the cards and actions to come."""
    real = state.game.new_initial_state()
    node = 0
    for index, action in enumerate(state.history()):
        if real.is_chance_node():
            real.apply_action(action)
            continue
        child = walk_step(tree, translate_raise, node, real, action, memo.get(index) if memo else None)
        if child is None or child < 0:
            return None, child is not None
        real.apply_action(action)
        node = int(child)
    return node, False


def _pending(tree, translate_raise, state, memo) -> List[Tuple[int, list]]:
    """``[(history index, [(abstract child, probability)])]``: the raises along ``state``'s walk that ``memo``
    does not hold and that map to more than one abstract size (an agent draws those when it next walks the
    history); the walk follows their most likely size."""
    real = state.game.new_initial_state()
    node = 0
    out = []
    for index, action in enumerate(state.history()):
        if real.is_chance_node():
            real.apply_action(action)
            continue
        got = memo.get(index) if memo is not None else None
        child = walk_step(tree, translate_raise, node, real, action, got)
        if child is None or child < 0:
            return out
        first = int(tree.child_start[node])
        if action not in (FOLD, CALL) and not (got is not None and got[0] == action
                                                and first <= got[1] < first + int(tree.num_children[node])):
            choices = translate_raise(node, real, raise_amount(action))
            if len(choices) > 1:
                out.append((index, [(int(c), float(q)) for c, q in choices]))
        real.apply_action(action)
        node = int(child)
    return out


class NodeWalker:
    """:meth:`BlueprintValueFunction.node_of` for one tree and translation, memoised by the betting actions.

    The walk reads only the betting (translation looks at the pot, the stacks and the raise range, never at
    the cards, and the most likely abstract size is deterministic), so the node of a history is a function of
    its betting actions alone: one entry per betting line, extended by one action from the line before it,
    shared by every hand and every sampled board."""

    _LIMIT = 50_000  # entries before the memo is emptied (each holds a small state: about 1 KB)

    def __init__(self, tree, translate_raise):
        self.tree = tree
        self.translate_raise = translate_raise
        self._game = None
        self._memo = {}
        self._follow = {}  # remembered translations (sorted items) -> their own line memo (see walk)

    def node_of(self, state, key=None, memo=None) -> Optional[int]:
        """The node of ``state``'s betting line (``key`` when known); ``memo`` (an agent's remembered
        translations, see :func:`_walk_history`): its raises follow those."""
        if memo:
            return self.walk(state, key, memo)[0]
        if key is None:
            key = _betting_key(state)
        if key is None:
            return _walk_history(self.tree, self.translate_raise, state)[0]
        self._same_game(state)
        hit = self._memo.get(key)
        if hit is None:
            if len(self._memo) > self._LIMIT:
                self._memo = {}
            hit = self._line(key)
        return hit[0]

    def _same_game(self, state) -> None:
        if self._game is not state.game:
            if self._game is None or self._game.definition != state.game.definition:
                self._memo = {}
                self._follow = {}
            self._game = state.game

    def walk(self, state, key=None, memo=None) -> Tuple[Optional[int], bool]:
        """``(node, all_in)``: :meth:`node_of` and, where it is None, whether the walk left the tree at an
        abstract all-in (a showdown node, where the blueprint agent only calls)."""
        if key is None:
            key = _betting_key(state)
        if key is None:
            return _walk_history(self.tree, self.translate_raise, state, memo)
        self._same_game(state)
        if not memo:
            node, real = self._line(key) if key not in self._memo else self._memo[key]
            if node is not None or not key:
                return node, False
            return _walk_history(self.tree, self.translate_raise, state, None)  # off the tree: how (rare)
        mk = tuple(sorted(memo.items()))
        lines = self._follow.get(mk)
        if lines is None:
            if len(self._follow) >= _FOLLOW_MEMOS:  # a hand's memos (it grows; each draw's expectation tries sizes)
                self._follow.clear()
            lines = self._follow[mk] = {}
        elif len(lines) > self._LIMIT:
            lines.clear()
        node, _, all_in = self._follow_line(key, memo, lines)
        return node, all_in

    def _follow_line(self, key: Tuple[int, ...], memo: dict, lines: dict):
        """``(node or None, the betting state after the line, abstract all-in)`` of a betting line whose raises
        follow ``memo`` (history index -> (real action, abstract child)), memoised in ``lines``."""
        hit = lines.get(key)
        if hit is not None:
            return hit
        if not key:
            hit = lines[key] = (0, self._game.new_initial_state(), False)
            return hit
        node, real, all_in = self._follow_line(key[:-1], memo, lines)
        if node is None:
            hit = lines[key] = (None, None, all_in)
            return hit
        t = self.tree
        real = real.clone()
        while real.is_chance_node():  # the cards do not matter to the walk (nor their number to the index)
            real.apply_trusted(int(real.chance_outcomes()[0][0]))
        action = key[-1]
        child = walk_step(t, self.translate_raise, node, real, action, memo.get(len(real.history())))
        if child is None or child < 0:
            hit = lines[key] = (None, None, child is not None)
            return hit
        real.apply_action(action)
        hit = lines[key] = (int(child), real, False)
        return hit

    def _line(self, key: Tuple[int, ...]):
        """``(node or None, the betting state after the line)`` of a betting line (memoised)."""
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        if not key:
            hit = self._memo[key] = (0, self._game.new_initial_state())
            return hit
        node, real = self._line(key[:-1])
        if node is None:
            hit = self._memo[key] = (None, None)
            return hit
        t = self.tree
        real = real.clone()
        while real.is_chance_node():  # the cards do not matter to the walk: deal any
            real.apply_trusted(int(real.chance_outcomes()[0][0]))
        action = key[-1]
        child = None
        if t.kind[node] == DECISION and t.player[node] == real.current_player():
            if action in (FOLD, CALL):
                child = t.child_of_kind(node, ACTION_FOLD if action == FOLD else ACTION_CALL)
            else:
                choices = self.translate_raise(node, real, raise_amount(action))
                if choices:
                    child = max(choices, key=lambda cp: cp[1])[0]
        if child is None:
            hit = self._memo[key] = (None, None)
            return hit
        real.apply_action(action)
        hit = self._memo[key] = (int(child), real)
        return hit


# ---------------------------------------------------------------------- one memory budget for the caches
# Every cache below is bounded (entries, or bytes for the closing tables): about 450 MB per value function when all
# are full (measured per entry, benchmarks/ladder_memory.py).  A process holding many value functions (a ladder
# worker: a blueprint's self-play values and its fitted tables against each opponent) scales every bound by one
# factor so that their sum stays near a budget (set_cache_budget); the caches only memoize functions of their keys,
# so the values are the same bit for bit whatever the bounds (tested), only the time to recompute them changes.
_CEILING_BYTES = 450e6
_BUDGET: List[Optional[float]] = [None]  # bytes for all value functions of this process; None: every bound as is
_SCALE: List[float] = [1.0]
_LIVE: "weakref.WeakSet" = weakref.WeakSet()


def _rescale() -> None:
    n = sum(1 for _ in _LIVE)  # the live ones only (len() may still count one being freed)
    budget = _BUDGET[0]
    _SCALE[0] = 1.0 if budget is None or n == 0 else min(1.0, budget / (n * _CEILING_BYTES))


def set_cache_budget(megabytes: Optional[float]) -> Optional[float]:
    """Bound the caches of all :class:`BlueprintValueFunction` tables of this process together to about
    ``megabytes`` MB (split evenly: each value function built and alive gets ``megabytes / n``, at most its ~450 MB
    of default bounds; the split follows as value functions are built and freed).  None: the default bounds of each.
    The tables themselves are not counted (``BlueprintValueTable.nbytes``; stored fitted tables are memory-mapped
    files).  Returns the previous budget (MB or None).  Raises ``GameError`` for a budget that is not positive."""
    if megabytes is not None and not (float(megabytes) > 0 and np.isfinite(float(megabytes))):
        raise GameError(f"the caches' budget must be a positive number of MB, got {megabytes!r}")
    old = _BUDGET[0]
    _BUDGET[0] = None if megabytes is None else float(megabytes) * 1e6
    _rescale()
    return None if old is None else old / 1e6


def cache_scale() -> float:
    """The factor (0, 1] by which every cache bound of the value functions is scaled now (:func:`set_cache_budget`)."""
    return _SCALE[0]


class _Shared:
    """What the value functions of one blueprint share across matches (read only once built)."""

    def __init__(self, trans, walker, abstraction):
        _LIVE.add(self)
        weakref.finalize(self, _rescale)  # the split follows when this one is freed
        _rescale()
        self.abstraction = abstraction
        self.trans = trans
        self.walker = walker
        self.table = None
        self.deal_value: Optional[float] = None
        self._policies = {}
        # (round, board, hole 0, hole 1) -> the two buckets; (hole 0, hole 1, board) -> equity; betting line ->
        # whether the cards run out: the duplicate seating and every leaf of a sampled board's street read them
        self.buckets = {}
        self.equities = {}
        self.runs_out = {}
        self.legal = {}  # betting lines reached by a checked action: the same action is legal on any cards
        self.terminals = {}  # (betting line, river equity) -> seat 0's return at a terminal of the street lookahead
        # (betting line, board size) -> (agent, its rules' arrays or None): A^R's rules at a line of the one-board walk
        self.rules_lines = {}
        self.rules_feats = {}  # (agent, hole, board) -> A^R's features of the hand there (hs, ehs, outs, wet)
        self.plan_roots: Optional[dict] = None  # the compiled lookahead's kept lines (_StreetPlans)
        self.plan_closing: Optional[dict] = None

    @staticmethod
    def remember(cache: dict, key, value, limit: int = 100_000) -> None:
        """``cache[key] = value``, emptying ``cache`` first when it holds ``limit`` entries (times the budget's
        :func:`cache_scale`, at least 16)."""
        if len(cache) >= max(16, int(limit * _SCALE[0])):
            cache.clear()
        cache[key] = value

    def policy(self, agent, follow: bool = False) -> "_BlueprintPolicy":
        """The :class:`_BlueprintPolicy` of ``agent`` (``follow``: its remembered translations), kept (with its
        walk memo) for the next hands."""
        hit = self._policies.get((id(agent), bool(follow)))
        if hit is None or hit.agent is not agent:
            # the owner's abstraction is the tables' one: its hands' buckets are shared with the value function
            same = getattr(agent.blueprint, "abstraction", None) is self.abstraction
            hit = self._policies[(id(agent), bool(follow))] = _BlueprintPolicy(agent, self.buckets if same else None,
                                                                                follow=follow)
        return hit
