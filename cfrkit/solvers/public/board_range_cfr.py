"""Compiled range CFR with one hand space per board: river, turn and flop subgames, depth first, suit isomorphism.

:class:`BoardRangeSolver` runs the same algorithms as :class:`~cfrkit.solvers.public.flat_range_cfr.FlatRangeSolver`
(CFR+, DCFR, postflop-solver's DCFR; iterates equal up to rounding) in a layout after postflop-solver's:

* every node works on the hands of its board only: after a dealt card the hands that card blocks are
  gone, and a 5-card board's hands are sorted by showdown strength, so a showdown sweeps them in place
  (no gathers through the root's order, no masks).  A chance child's map sends its hands to the parent's:
  reach is gathered down once per dealt card and values are added back up;
* one depth-first pass per player and iteration: the opponent's reach is formed on the way down and
  values come back up, so no reach or value rows are stored (scratch per depth only): the memory is the
  regrets and strategy sums, 2 x actions x hands of the node's board, plus the maps;
* threads: the children of chance nodes (dealt cards) run on OpenMP threads, their values added in card
  order afterwards (same iterates for any thread count), the count chosen while the solve runs by default
  (:class:`~cfrkit.solvers.public.thread_chooser.ThreadChooser`);
* suit isomorphism (``isomorphism=True``, default when the ranges allow it): when two suits are
  interchangeable (same ranks on the root board, no card of either dealt since, ranges symmetric), a
  card's subtree is solved once and its isomorphic card reuses it with the two suits swapped in the hands
  (postflop-solver's isomorphism): the flop spot of the benchmark keeps 36 of its 49 turn subtrees.

Units: chips; exploitability = (BR_0 + BR_1) / 2 against the average strategy, ranges as the deal.
"""
from __future__ import annotations

import operator
import time
import weakref
from array import array
from collections.abc import Mapping
from typing import ClassVar, Dict, List, Optional, Tuple

import numpy as np

from cfrkit._kernels import default_threads
from cfrkit.games.base import GameError
from cfrkit.solvers.public.allin import allin_equity_matrix, allin_runouts
from cfrkit.solvers.public.flat_range_cfr import ALGORITHMS, DEFAULT_DCFR

# the board kernel's update rules: FlatRangeSolver's, and DCFR+ / PDCFR+ (Xu et al. 2024, "Minimizing weighted
# counterfactual regret with optimistic online mirror descent")
BOARD_ALGORITHMS = dict(ALGORITHMS, **{"dcfr+": 3, "pdcfr+": 4})
# alpha, beta, gamma of each rule when not given (DCFR+ / PDCFR+: the paper's; beta unused by them)
ALGORITHM_DEFAULTS = {"cfr+": DEFAULT_DCFR, "dcfr": DEFAULT_DCFR, "dcfr-postflop": DEFAULT_DCFR,
                      "dcfr+": {"alpha": 1.5, "beta": 0.0, "gamma": 4.0},
                      "pdcfr+": {"alpha": 2.3, "beta": 0.0, "gamma": 5.0}}
from cfrkit.solvers.public.public_tree import (CHANCE_NODE, DECISION, FOLD_NODE, KIND_CODE, LEAF, SHOWDOWN_NODE,
                                               PublicTree, root_ranges)
from cfrkit.solvers.public.thread_chooser import ThreadChooser

# the default storage turns 16-bit when the float32 regrets and strategy sums would take more than this many bytes
# (half the 32 MiB last-level cache of the benchmark machine): every full-range flop (the benchmark's: 5.3 GB) and
# turn (the benchmark's: 81 MB); not a river (the benchmark's: 0.4 MB).  Issue 30 part 11
# (benchmarks/range_solver_storage_ab.py): on turn trees of 17 to 81 MB of float32 tables 16-bit takes 0.95-1.004x
# float32's time per iteration (1.00-1.02x at 3.4 MB), on the river (tables in cache) 1.13-1.15x; the benchmark turn
# reaches 1% / 0.3% / 0.1% of the pot in 80 / 145 / 275 iterations (float32: 80 / 145 / 345).
STORAGE_16BIT_BYTES = 16_000_000


def default_storage(num_entries: int) -> str:
    """The board solver's storage when none is asked for: ``"16bit"`` when the float32 tables of ``num_entries``
    regret entries (actions x hands; 2 tables x 4 bytes each) exceed :data:`STORAGE_16BIT_BYTES` (16 MB), else
    ``"float32"``.  16-bit halves the memory at about float32's time per iteration once the tables outgrow the
    cache (benchmarks/RESULTS.md, issue 30 parts 9 and 11); on small trees whose tables sit in cache its coding is
    pure cost."""
    return "16bit" if 8 * int(num_entries) > STORAGE_16BIT_BYTES else "float32"


def kernel_module(dtype=np.float64):
    """The kernel build for the storage type: float64 (``range_cfr_board``) or float32 (``range_cfr_board32``)."""
    if np.dtype(dtype) == np.float32:
        from cfrkit._kernels import range_cfr_board32

        return range_cfr_board32
    from cfrkit._kernels import range_cfr_board

    return range_cfr_board


_kernel = kernel_module  # old private name (benchmarks)


def _swap_suits(card: int, a: int, b: int) -> int:
    """``card`` (4 * rank + suit) with suits ``a`` and ``b`` exchanged."""
    s = card % 4
    return card - s + (b if s == a else a if s == b else s)


def _typed(code: str, n: int, fill) -> array:
    """``array(code)`` of ``n`` times ``fill``: per-node values of a layout in C types (a flop layout has 661K
    nodes; Python lists of their ints leave ~100 MB of freed heap behind)."""
    return array(code, [fill]) * n


def _typed_of(values: np.ndarray, code: str) -> array:
    """``values`` as an ``array(code)`` (item access gives Python numbers without numpy's per-item cost)."""
    out = array(code)
    out.frombytes(np.ascontiguousarray(values, dtype={"b": np.int8, "i": np.int32, "q": np.int64}[code]).tobytes())
    return out


# BoardRangeSolver gives the heap its layout's construction freed back to the system from this many kernel nodes
TRIM_LAYOUT = 4096

# TreeArrays.kind codes
_DECISION, _CHANCE, _FOLD = KIND_CODE[DECISION], KIND_CODE[CHANCE_NODE], KIND_CODE[FOLD_NODE]
_SHOWDOWN, _LEAF = KIND_CODE[SHOWDOWN_NODE], KIND_CODE[LEAF]


class KernelNodeMap(Mapping):
    """Read-only mapping original decision index -> kernel node of a :class:`BoardLayout`, held as one int32 per
    original node (``array``, -1 where the node is not a laid-out decision): a dict of a flop's 254K decisions
    held ~25 MB of Python ints."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    def __getitem__(self, node) -> int:
        k = operator.index(node)
        v = int(self.array[k]) if 0 <= k < len(self.array) else -1
        if v < 0:
            raise KeyError(node)
        return v

    def __iter__(self):
        return iter(np.flatnonzero(self.array >= 0).tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(self.array >= 0))


def code_matrix(m: np.ndarray, width: int) -> Tuple[np.ndarray, np.ndarray]:
    """An all-in equity matrix ``m`` (``(H, H)``, float32 or float64) as codes into a table of its distinct
    values: ``(codes (H, width) uint8 or uint16, lut)`` with ``lut[codes[i, j]]`` bitwise ``m[i, j]`` for
    ``j < H`` and ``+0.0`` in the padding columns ``H <= j < width``.

    An entry is a sum of +-w over the run-outs that miss both hands, so a matrix holds few distinct values (85
    on the turn spot of the benchmark: k/44 for |k| <= 44 and the rounding residues +-7e-18 of k = 0; 76-85 on
    the flop spot's turn boards, 1,869 on its flop board): one byte per entry when at most 255, else two.
    Distinct values by their bits, 64 rows at a time (a whole-matrix ``np.unique`` peaks at 8x the matrix in
    int64 temporaries).
    Raises when more than 65,535 distinct values need codes."""
    H = m.shape[0]
    if m.ndim != 2 or m.shape[1] != H or width < H:
        raise GameError(f"internal: an all-in matrix must be square and fit its padded width, got {m.shape}")
    mb = m.view({4: np.uint32, 8: np.uint64}[m.itemsize])
    step = 64
    vals = np.unique(np.concatenate([np.unique(mb[i:i + step]) for i in range(0, H, step)] or [mb[:0, 0]]))
    if len(vals) > 65535:
        raise GameError(f"internal: an all-in matrix with {len(vals)} distinct values cannot be coded in 16 bits")
    lut = np.append(vals, vals.dtype.type(0)).view(m.dtype)  # the last value: the padding's +0.0
    out = np.full((H, width), len(vals), dtype=np.uint8 if len(lut) <= 256 else np.uint16)
    for i in range(0, H, step):
        out[i:i + step, :H] = np.searchsorted(vals, mb[i:i + step])
    return out, lut


class BoardLayout:
    """Per-board hand spaces, maps and offsets of a public tree for the board kernel (see module docstring).

    ``swaps``: the suit pairs treated as interchangeable (empty without isomorphism).  Build with :meth:`of`
    (cached per tree and isomorphism setting).  Attributes after construction: ``num_nodes`` (kernel
    nodes: copies' subtrees are not laid out), ``num_entries`` (regret entries = sum of actions x hands),
    ``space_pairs[s]`` (pair indices of space ``s``), ``node_of`` (original decision -> kernel node, a
    :class:`KernelNodeMap`),
    ``layout`` (the tuple the kernel takes).
    """

    _cache: ClassVar[weakref.WeakKeyDictionary] = weakref.WeakKeyDictionary()

    @classmethod
    def of(cls, tree: PublicTree, isomorphism: bool = True, leaves: bool = False,
           allin: bool = False) -> "BoardLayout":
        per_tree = cls._cache.setdefault(tree, {})
        key = (bool(isomorphism) and not leaves, bool(leaves), bool(allin) or bool(leaves))
        if key not in per_tree:
            per_tree[key] = cls(tree, *key)
        return per_tree[key]

    def __init__(self, tree: PublicTree, isomorphism: bool = True, leaves: bool = False, allin: bool = False):
        # the tree's structure as arrays (a flop tree's 1.2M nodes are not read one object at a time)
        T = tree.arrays()
        kind = T.kind
        if np.any(kind == _LEAF) and not leaves:
            raise GameError("BoardRangeSolver cannot solve depth-limited trees (leaf nodes need a value function); "
                            "use BoardLeafSolver (cfrkit.solvers.public.board_leaf_cfr) or RangeSolver with "
                            "leaf_values, or build the tree without depth_limit")
        if leaves and isomorphism:
            raise GameError("internal: the leaf layout has no suit isomorphism (leaf values need not be symmetric)")
        self.leaves = bool(leaves)
        self.allin = bool(allin) or self.leaves
        if kind[0] != _DECISION:
            raise GameError("BoardRangeSolver needs a decision at the root of the tree")
        pg = tree.pgame
        if pg.hand_cards.shape[1] != 2 or pg.hand_cards.max() >= 52 or pg.num_hands != 1326:
            raise GameError("BoardRangeSolver needs the 1326 two-card hands of a 52-card deck")
        boards = T.boards
        board_len = np.array([len(b) for b in boards], dtype=np.int64)
        showdowns = np.flatnonzero(kind == _SHOWDOWN)
        bad = showdowns[board_len[T.board[showdowns]] != 5]
        if len(bad):
            i = int(bad[0])
            raise GameError(f"BoardRangeSolver: showdown node {i} on an incomplete board {boards[T.board[i]]}")
        self.tree = tree
        self.pot = float(tree.root.pot)
        hc = pg.hand_cards
        hc64 = np.ascontiguousarray(hc, dtype=np.int64)
        pair_of = np.full((52, 52), -1, dtype=np.int64)
        pair_of[hc[:, 0], hc[:, 1]] = np.arange(len(hc))
        pair_of[hc[:, 1], hc[:, 0]] = np.arange(len(hc))
        self._pair_of = pair_of
        root_board = tuple(boards[T.board[0]])
        self.swaps: List[Tuple[int, int]] = []
        if isomorphism:
            live = pg.hand_mask(())
            for a in range(4):
                for b in range(a + 1, 4):
                    if set(_swap_suits(c, a, b) for c in root_board) != set(root_board):
                        continue
                    if np.array_equal(live, live[self.pair_perm((a, b))]):  # a reduced deck must be symmetric too
                        self.swaps.append((a, b))
        # hand spaces (one per set of board cards) and maps (child space -> parent space, per suit swap)
        self._space_id: Dict[Tuple[int, ...], int] = {}
        self.space_pairs: List[np.ndarray] = []
        self._position: List[np.ndarray] = []
        space_groups: List[np.ndarray] = []
        map_id: Dict[Tuple[int, int, Tuple[int, int]], int] = {}
        maps: List[np.ndarray] = []
        map_start = [0]

        def space(board) -> int:
            key = tuple(sorted(int(c) for c in board))
            s = self._space_id.get(key)
            if s is None:
                s = self._space_id[key] = len(self.space_pairs)
                live = np.nonzero(pg.hand_mask(key) > 0)[0]
                if len(key) == 5:
                    st = np.asarray(pg.strengths(key), dtype=np.int64)
                    # integer work, the same in either build: the float32 one, which a default solve loads anyway
                    pairs = kernel_module(np.float32).spread_cards(
                        np.ascontiguousarray(live[np.argsort(st[live], kind="stable")], dtype=np.int64), st, hc64)
                    runs = np.flatnonzero(np.r_[True, np.diff(st[pairs]) != 0])
                    space_groups.append(np.r_[runs, len(pairs)])
                else:
                    pairs = live
                    space_groups.append(np.array([0, len(pairs)]))
                self.space_pairs.append(np.asarray(pairs, dtype=np.int64))
                pos = np.full(1326, -1, dtype=np.int32)
                pos[pairs] = np.arange(len(pairs))
                self._position.append(pos)
            return s

        def child_map(parent_space: int, child_space: int, swap: Tuple[int, int]) -> int:
            key = (parent_space, child_space, swap)
            m = map_id.get(key)
            if m is None:
                pairs = self.space_pairs[child_space]
                if swap != (0, 0):
                    pairs = self.pair_perm(swap)[pairs]
                rows = self._position[parent_space][pairs]
                if rows.min() < 0:
                    raise GameError("internal: a chance child's hand is not in its parent's hand space")
                maps.append(rows)
                m = map_id[key] = map_start[-1]
                map_start.append(map_start[-1] + len(rows))
            return m

        # leaf mode (and allin=True): a chance node right after a betting action whose subtree has no decision and
        # no leaf is an all-in run-out, laid out as one ALLIN node (equity matrix) instead of its run-out boards
        allin = set()
        if self.allin:
            # open_below: a decision or a leaf in the node's subtree (itself included), marked up from them
            open_below = (kind == _DECISION) | (kind == _LEAF)
            cur = np.flatnonzero(open_below)
            while len(cur):
                up = T.parent[cur]
                fresh = np.zeros(len(kind), dtype=bool)
                fresh[up[up >= 0]] = True
                fresh &= ~open_below
                open_below |= fresh
                cur = np.flatnonzero(fresh)
            cand = np.flatnonzero((kind == _CHANCE) & ~open_below)
            cand = cand[(cand > 0) & (kind[T.parent[cand]] == _DECISION)]
            c = T.contrib_values[T.contrib[cand]]
            unequal = np.abs(c[:, 0] - c[:, 1]) > 1e-9
            if leaves and np.any(unequal):  # the full-tree solver walks such a run-out instead
                i = int(cand[unequal][0])
                raise GameError(f"all-in run-out at node {i} with unequal contributions {T.contribs[T.contrib[i]]}")
            allin = set(cand[~unequal].tolist())
        self.allin_nodes = sorted(allin)
        # original indices in kernel order (breadth first, children contiguous), each one's hand space and child
        # map: typed arrays, not lists (a flop layout has 661K nodes: 4-8 bytes each instead of ~36)
        kinds, board_of = _typed_of(kind, "b"), _typed_of(T.board, "i")
        cstart_of, children_of = _typed_of(T.child_start, "i"), _typed_of(T.children, "i")
        edge_of = _typed_of(T.edge_action, "q")
        order = array("i", [0])
        spaces = array("i", [space(root_board)])
        copy_of: Dict[int, Tuple[int, Tuple[int, int]]] = {}  # copy chance child -> (canonical sibling, swap)
        kmap = array("q", [-1])
        root_cards = set(root_board)
        k = 0
        while k < len(order):
            old = order[k]
            kd = kinds[old]
            sp = spaces[k]
            if kd == _CHANCE and old not in copy_of and old not in allin:
                c0, c1 = cstart_of[old], cstart_of[old + 1]
                kids, cards = children_of[c0:c1], edge_of[c0:c1]
                dealt = set(boards[board_of[old]]) - root_cards
                valid = [(a, b) for (a, b) in self.swaps if all(c % 4 not in (a, b) for c in dealt)]
                card_child = dict(zip(cards, kids))
                for card, ch in zip(cards, kids):
                    canon, swap = card, (0, 0)
                    for a, b in valid:
                        img = _swap_suits(card, a, b)
                        if img < canon and img in card_child:
                            canon, swap = img, (a, b)
                    order.append(ch)
                    if swap != (0, 0):
                        copy_of[ch] = (card_child[canon], swap)
                        cs = space(boards[board_of[card_child[canon]]])
                        kmap.append(child_map(sp, cs, swap))
                    else:
                        cs = space(boards[board_of[ch]])
                        kmap.append(child_map(sp, cs, (0, 0)))
                    spaces.append(cs)
            elif kd == _DECISION and old not in copy_of:
                c0, c1 = cstart_of[old], cstart_of[old + 1]
                order.extend(children_of[c0:c1])
                spaces.extend(array("i", [sp]) * (c1 - c0))
                kmap.extend(array("q", [-1]) * (c1 - c0))
            k += 1
        del kinds, board_of, cstart_of, children_of, edge_of
        N = len(order)
        old_of = np.frombuffer(order, dtype=np.int32)
        new_of = np.full(len(kind), -1, dtype=np.int32)  # public-tree index -> kernel index
        new_of[old_of] = np.arange(N, dtype=np.int32)
        self.order = order  # kernel node -> public-tree index (array of int32; indexing gives ints)
        self.copy_of = copy_of
        self.node_space = np.frombuffer(spaces, dtype=np.int32).copy()
        self.child_map = np.frombuffer(kmap, dtype=np.int64).copy()
        self.iso_next = np.full(N, -1, dtype=np.int32)
        sizes = np.array([len(p) for p in self.space_pairs], dtype=np.int64)
        # the kernel's node arrays, whole arrays at a time; each node as flat_range_cfr.fill_kernel_node writes it:
        # copies (type of their kind, nothing else), all-in run-outs (5, contributions), leaves (4), decisions (0:
        # player, children, offset of their regret block), chance nodes (3: children, weight of a card),
        # folds (1) and showdowns (2) with their amounts (PublicNode.terminal_code)
        kn = kind[old_of]
        is_copy = np.zeros(N, dtype=bool)
        if copy_of:
            is_copy[new_of[np.fromiter(copy_of, dtype=np.int64, count=len(copy_of))]] = True
        is_allin = np.zeros(N, dtype=bool)
        if allin:
            at = new_of[np.fromiter(allin, dtype=np.int64, count=len(allin))]
            is_allin[at[at >= 0]] = True
        own = ~is_copy & ~is_allin
        ntype = np.array([0, 3, 1, 2, 4], dtype=np.int32)[kn]  # by kind: decision, chance, fold, showdown, leaf
        ntype[is_allin] = 5
        ntype[is_copy] = np.array([0, 3, 1, 2, 2], dtype=np.int32)[kn[is_copy]]
        player = np.full(N, -1, dtype=np.int32)
        cstart = np.zeros(N, dtype=np.int32)
        nchild = np.zeros(N, dtype=np.int32)
        noffset = np.full(N, -1, dtype=np.int64)
        amount = np.zeros((N, 2), dtype=np.float64)
        inner = np.flatnonzero(own & ((kn == _DECISION) | (kn == _CHANCE)))
        first = T.child_start[old_of[inner]]
        nchild[inner] = T.child_start[old_of[inner] + 1] - first
        cstart[inner] = new_of[T.children[first]]
        dec = inner[kn[inner] == _DECISION]
        player[dec] = T.player[old_of[dec]]
        block = nchild[dec] * sizes[self.node_space[dec]]
        noffset[dec] = np.cumsum(block) - block
        offset = int(block.sum())
        for new in inner[kn[inner] == _CHANCE].tolist():
            amount[new, 0] = pg.chance_weight(boards[T.board[old_of[new]]])
        last: Dict[int, int] = {}  # canonical child -> last copy in its chain (copy_of: by chance node, card order)
        for ch, (canon_old, _) in copy_of.items():
            canon, cn = int(new_of[canon_old]), int(new_of[ch])
            self.iso_next[last.get(canon, canon)] = cn
            last[canon] = cn
        contrib = T.contrib_values[T.contrib[old_of]]
        valued = np.flatnonzero(is_allin | (own & (kn == _SHOWDOWN)))
        amount[valued] = contrib[valued]
        folds = np.flatnonzero(own & (kn == _FOLD))
        folder = T.folder[old_of[folds]]
        c = contrib[folds]
        amount[folds, 0] = np.where(folder == 0, -c[:, 0], c[:, 1])
        amount[folds, 1] = np.where(folder == 1, -c[:, 1], c[:, 0])
        del contrib, c, kn, own, inner, first, dec, block, valued, folds, folder
        self.node_type = ntype
        self.node_player = player
        self.child_start = cstart
        self.num_children = nchild
        self.amount = amount
        self.node_offset = noffset
        self.is_copy = is_copy.astype(np.int32)
        del ntype, player, cstart, nchild, amount, noffset, is_copy, is_allin
        # original -> kernel node of the laid-out decisions: an array (a dict of a flop's 254K decisions held
        # ~25 MB of Python ints)
        decisions = np.flatnonzero((self.node_type == 0) & (self.is_copy == 0)).astype(np.int32)
        node_of = np.full(len(kind), -1, dtype=np.int32)
        node_of[np.frombuffer(order, dtype=np.int32)[decisions]] = decisions
        self.node_of = KernelNodeMap(node_of)
        del new_of, decisions
        self.num_nodes = N
        self.num_entries = offset
        # leaf mode: hands of the all-in nodes (root space, first) and of the leaves in ext_vals
        self.ext_off = np.full(N, -1, dtype=np.int64)
        self.ext_nodes: List[int] = []  # kernel nodes in ext order
        ext = 0
        for kind in (5, 4):
            for new in np.flatnonzero(self.node_type == kind):
                self.ext_off[new] = ext
                self.ext_nodes.append(int(new))
                ext += int(sizes[spaces[new]])
        self.num_ext = ext
        # scratch per depth (see _walk): decision (4A + 4) H, chance 3 H_child, showdown H
        # (Python lists: per-node numpy slices cost ~0.3 CPU s on a flop layout)
        H = _typed_of(sizes[self.node_space], "q")
        types, copies = _typed_of(self.node_type, "i"), _typed_of(self.is_copy, "i")
        starts, counts = _typed_of(self.child_start, "i"), _typed_of(self.num_children, "i")
        need = _typed("q", N, 0)
        for new in range(N - 1, -1, -1):
            t = types[new]
            if copies[new]:
                continue
            c0, nc = starts[new], counts[new]
            if t == 0:  # strategy, child values, reach, 3 rows of matching scratch, 2 decoded blocks (16-bit)
                below = max(need[c0:c0 + nc]) if nc else 0
                need[new] = (4 * nc + 4) * H[new] + max(below, H[new])
            elif t == 3:
                need[new] = max(3 * H[c] + need[c] for c in range(c0, c0 + nc))
            elif t == 2:
                need[new] = H[new]
        self.stack_len = int(need[0]) + 64
        self.max_children = int(self.num_children[self.node_type == 3].max()) if np.any(self.node_type == 3) else 1
        cards = np.concatenate([hc[p] for p in self.space_pairs]).astype(np.int32)
        self.space_start = np.r_[0, np.cumsum(sizes)].astype(np.int32)
        self.space_cards = np.ascontiguousarray(cards.reshape(-1, 2), dtype=np.int32)
        gstart = np.r_[0, np.cumsum([len(g) for g in space_groups])].astype(np.int32)
        self.space_group_start = gstart
        self.space_groups = np.ascontiguousarray(np.concatenate(space_groups), dtype=np.int32)
        self.maps = np.ascontiguousarray(np.concatenate(maps) if maps else np.zeros(0), dtype=np.int32)
        self.root_pairs = self.space_pairs[0]
        self.sd_slot, self.sd_count, self.dec_slot = self._showdown_batches()
        self.layout = (self.node_type, self.node_player, self.child_start, self.num_children, self.amount,
                       self.node_space, self.node_offset, self.space_start, self.space_cards, self.space_group_start,
                       self.space_groups, self.child_map, self.maps, self.iso_next, self.is_copy, self.stack_len,
                       self.max_children, self.sd_slot, self.sd_count, self.dec_slot)
        del self._position  # build-time only (a flop's 836 spaces: 4 MB)

    def _showdown_batches(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Showdown batches of the river subtrees: a river root is a decision whose subtree has only decisions,
        folds and showdowns (no chance, leaf, all-in or copy node) on one 5-card board, entered from a chance node
        (or the root).  ``sd_count[root]`` = its showdown nodes, ``sd_slot[n]`` = a showdown's index among them
        (-1 elsewhere): the kernel sweeps up to four of them at once (one lane each), see rcb_showdown4.
        ``dec_slot[n]``: a decision's index among those of its river subtree (where the root batches; -1
        elsewhere): the opponent's strategies formed for the batches are kept there for the pass."""
        N = self.num_nodes
        nt, cs, nc, cp = self.node_type, self.child_start, self.num_children, self.is_copy
        has = np.flatnonzero((nc > 0) & (cp == 0))
        parent = np.full(N, -1, dtype=np.int64)
        for n, c0, k in zip(has.tolist(), cs[has].tolist(), nc[has].tolist()):
            parent[c0:c0 + k] = n
        ntl, csl, ncl, par = _typed_of(nt, "i"), _typed_of(cs, "i"), _typed_of(nc, "i"), _typed_of(parent, "q")
        pure_l = (np.isin(nt, (0, 1, 2)) & (cp == 0)).tolist()
        for n in has[::-1].tolist():  # children come after their parent (breadth first); lists: per-node numpy
            if pure_l[n]:             # slices cost ~0.3 CPU s on a flop layout
                c0 = csl[n]
                if not all(pure_l[c0:c0 + ncl[n]]):
                    pure_l[n] = False
        pure = np.asarray(pure_l, dtype=bool)
        root_of = _typed("q", N, -1)
        slot, count, dslot, dcount = _typed("i", N, -1), _typed("i", N, 0), _typed("i", N, -1), _typed("i", N, 0)
        for n in np.flatnonzero(pure).tolist():
            if root_of[n] < 0 and ntl[n] == 0 and (par[n] < 0 or ntl[par[n]] == 3):
                root_of[n] = n
            r = root_of[n]
            if r < 0:
                continue
            if ntl[n] == 2:
                slot[n] = count[r]
                count[r] += 1
            elif ntl[n] == 0:
                dslot[n] = dcount[r]
                dcount[r] += 1
                for c in range(csl[n], csl[n] + ncl[n]):
                    root_of[c] = r
        root_of = np.frombuffer(root_of, dtype=np.int64).copy()
        sd_slot = np.frombuffer(slot, dtype=np.int32).copy()
        sd_count = np.frombuffer(count, dtype=np.int32).copy()
        dec_slot = np.frombuffer(dslot, dtype=np.int32).copy()
        single = (sd_slot >= 0) & (sd_count[np.maximum(root_of, 0)] < 2)  # one showdown: swept where it is
        sd_slot[single] = -1
        dec_slot[(dec_slot >= 0) & (sd_count[np.maximum(root_of, 0)] < 2)] = -1
        sd_count[sd_count < 2] = 0
        return sd_slot, sd_count, dec_slot

    def pair_perm(self, swap: Tuple[int, int]) -> np.ndarray:
        """``perm[h]`` = pair index of hand ``h`` with the suits of ``swap`` exchanged."""
        hc = self.tree.pgame.hand_cards
        a, b = swap
        c0 = np.array([_swap_suits(int(c), a, b) for c in hc[:, 0]])
        c1 = np.array([_swap_suits(int(c), a, b) for c in hc[:, 1]])
        return self._pair_of[c0, c1]

    def symmetric(self, ranges: np.ndarray) -> bool:
        """Whether ``ranges`` (``(2, 1326)``) are unchanged by every suit swap of the layout."""
        return all(np.allclose(ranges, ranges[:, self.pair_perm(s)], rtol=0, atol=1e-12) for s in self.swaps)

    def kernel_bytes(self, itemsize: int) -> Dict[str, int]:
        """Bytes the kernel holds for one spot: regrets and strategy sums (``itemsize`` 4 or 8 each), the maps
        and hand spaces (int32), the scratch stack."""
        per_action = 2 * self.num_entries * itemsize
        maps = 4 * (len(self.maps) + self.space_cards.size + len(self.space_groups))
        return {"per_action": per_action, "maps": maps, "scratch": self.stack_len * itemsize,
                "total": per_action + maps + self.stack_len * itemsize}


class BoardRangeSolver:
    """Single-spot CFR+/DCFR in C with per-board hand spaces (see module docstring).

    Args:
        tree: public tree without leaves (river, turn or flop subgame of a 52-card hold'em game).
        ranges: ``(2, 1326)`` reach of every pair at the root (pairs touching the board are dropped);
            default uniform over the live pairs.
        algorithm: ``"dcfr"``, ``"cfr+"`` or ``"dcfr-postflop"`` (as :class:`FlatRangeSolver`), or the board
            kernel's own: ``"dcfr+"`` (DCFR+: each iteration the old regret is discounted by ``d(t - 1)``,
            ``d(t) = t^alpha / (t^alpha + 1)``, the new instantaneous regret added and the sum floored at 0, as
            CFR+; the average weights iteration ``t`` by ``t^gamma``) or ``"pdcfr+"`` (PDCFR+: DCFR+'s regrets
            plus a prediction, the strategy matched from ``max(d(t) x regret + last instantaneous regret, 0)``;
            one more table the size of the regrets: ``cumulative_regrets`` holds DCFR+'s regrets and
            ``regrets`` the predicted ones; no 16-bit storage).  Xu et al. 2024.  On the benchmark spots
            (benchmarks/RESULTS.md, issue 30) DCFR+ reaches 0.1% of the pot in fewer iterations than DCFR;
            PDCFR+ needs more.
        alpha, beta, gamma: the discount exponents; ``None`` (default): :data:`ALGORITHM_DEFAULTS` of the
            algorithm (DCFR 1.5, 0, 2; DCFR+ 1.5, -, 4; PDCFR+ 2.3, -, 5; beta is unused by the last two).
        dtype: ``"float32"`` or ``"float64"`` storage; sweeps accumulate in double.  ``None`` (default, with
            ``compression=None``): by size (:func:`default_storage`): 16-bit when the float32 tables would
            exceed :data:`STORAGE_16BIT_BYTES` (16 MB: every full-range flop and turn), float32 otherwise (a
            river).
        threads: OpenMP threads over the dealt cards of chance nodes (same iterates for any count), fixed for the
            whole solve.  ``None`` (default): chosen while the solve runs (:attr:`chooser`, a
            :class:`~cfrkit.solvers.public.thread_chooser.ThreadChooser`) between 1 and the cores this process
            may use (:func:`cfrkit._kernels.default_threads`, also :attr:`threads`) by timing chunks of
            iterations at each: on a machine busy with other sessions' work a second thread can make the solve
            slower (benchmarks/RESULTS.md, issue 30); :attr:`thread_stats` tells which count ran how many
            iterations.  A tree with no chance node and no all-in run-out (a river) runs on 1.  Waiting threads
            sleep instead of spinning (``OMP_WAIT_POLICY=passive``, see :mod:`cfrkit._kernels`).
        isomorphism: share the subtrees of isomorphic dealt cards (``None``: when the ranges are
            suit-symmetric; ``True`` raises if they are not).
        compression: 16-bit storage (postflop-solver's): regrets as int16 and strategy sums as uint16, each
            node's block with one float32 scale (its largest magnitude); half the memory of float32, iterates
            equal up to that rounding.  The kernels read and write the codes inside regret matching and the
            update (no decoding pass), so an iteration costs about what a float32 one does (turn spot: 0.95x,
            benchmarks/RESULTS.md, issue 30 part 7).  Needs ``dtype="float32"``.  ``None`` (default): by size
            when ``dtype`` is None too (see ``dtype``), else off.
        rounding: how 16-bit storage rounds: ``"stochastic"`` (default; unbiased, keyed by iteration, player
            and node, so runs are reproducible whatever the threads) or ``"nearest"`` (postflop-solver's).  To
            nearest drops every update smaller than half a step of its node's scale, and the solve stalls
            near 0.1% of the pot on the turn and above it on the flop; stochastic rounding keeps converging.
        allin_equity: value each called all-in's run-out (a chance node after a betting action with no decision
            below) as one terminal, ``contribution_p x M @ opponent reach`` with ``M`` its board's all-in
            equity matrix (:func:`~cfrkit.solvers.public.allin.allin_equity_matrix`, exact enumeration), all
            all-in nodes of a board in one product per pass, instead of walking its run-out boards one showdown
            sweep each.  The same values up to float rounding (the sums run in another order); ``None``
            (default) = on when the tree has all-in run-outs.  Each board holding all-in nodes keeps its
            ``(H, H)`` matrix in the storage type (5 MB on a turn spot in float32).
    """

    def __init__(self, tree: PublicTree, ranges=None, algorithm: str = "dcfr", alpha: Optional[float] = None,
                 beta: Optional[float] = None, gamma: Optional[float] = None, dtype: Optional[str] = None,
                 threads: Optional[int] = None, isomorphism: Optional[bool] = None,
                 compression: Optional[bool] = None, rounding: str = "stochastic",
                 allin_equity: Optional[bool] = None):
        if threads is not None and int(threads) < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        if dtype is not None and np.dtype(dtype) not in (np.float64, np.float32):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
        if algorithm not in BOARD_ALGORITHMS:
            raise ValueError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(BOARD_ALGORITHMS)}")
        if rounding not in ("stochastic", "nearest"):
            raise ValueError(f"rounding must be 'stochastic' or 'nearest', got {rounding!r}")
        self.algorithm = algorithm
        self.rounding = rounding
        given = dict(alpha=alpha, beta=beta, gamma=gamma)
        params = {k: float(ALGORITHM_DEFAULTS[algorithm][k] if v is None else v) for k, v in given.items()}
        if algorithm in ("dcfr+", "pdcfr+") and not (params["alpha"] >= 0 and params["gamma"] >= 0):
            raise ValueError(f"{algorithm} needs alpha >= 0 and gamma >= 0, got {params['alpha']}, {params['gamma']}")
        if algorithm == "pdcfr+" and compression:
            raise ValueError("algorithm 'pdcfr+' keeps a third table in the storage type: no 16-bit storage")
        self.alpha, self.beta, self.gamma = params["alpha"], params["beta"], params["gamma"]
        self.tree = tree
        mask = tree.pgame.hand_mask(tree.root.board)
        ranges = root_ranges(tree, ranges)
        use_allin = allin_equity is not False
        layout = BoardLayout.of(tree, isomorphism is not False, allin=use_allin)
        if layout.swaps and not layout.symmetric(ranges * mask):
            if isomorphism:
                raise ValueError("isomorphism=True needs suit-symmetric ranges")
            layout = BoardLayout.of(tree, False, allin=use_allin)
        if allin_equity and not np.any(layout.node_type == 5):
            raise ValueError("allin_equity=True: the tree has no all-in run-out (a chance node after a betting "
                             "action with no decision below)")
        self.layout = layout
        # storage: what the caller asked for, else by size (default_storage: 16-bit when float32 tables would pass
        # STORAGE_16BIT_BYTES, float32 otherwise)
        if compression is None:
            compression = dtype is None and algorithm != "pdcfr+" and default_storage(layout.num_entries) == "16bit"
        self.dtype = np.dtype("float32" if dtype is None else dtype)
        # threads: a fixed count when given, else chosen while the solve runs (ThreadChooser) between 1 and the
        # cores this process may use; a layout with nothing to share out (no chance node, no all-in run-out: a
        # river) runs on 1
        parallel = bool(np.any((layout.node_type == 3) | (layout.node_type == 5)))
        self.adaptive = threads is None
        self.threads = int(threads) if threads is not None else (default_threads() if parallel else 1)
        self.chooser: Optional[ThreadChooser] = ThreadChooser(1, self.threads) if self.adaptive and self.threads > 1 \
            else None
        self._fixed_stats = {"iterations": 0, "seconds": 0.0}
        self._allin = self._allin_tables()
        # the layout's and the matrices' temporaries (~75 MB on the flop, ~1 MB on a turn) back to the system before
        # the tables become resident (glibc keeps freed heap); a river's layout frees little, and a trim costs up to
        # ms (0.2 ms after a turn's layout)
        if layout.num_nodes >= TRIM_LAYOUT:
            kernel_module(np.float32).release_freed_heap()
        self.pot = layout.pot
        self.hands = layout.root_pairs
        self.ranges = np.ascontiguousarray(ranges[:, self.hands], dtype=self.dtype)
        self.compression = bool(compression)
        if self.compression:
            if self.dtype != np.float32:
                raise ValueError("compression=True stores 16-bit blocks decoded to float32: use dtype='float32'")
            self.regrets = np.zeros(layout.num_entries, dtype=np.int16)
            self.strategy_sum = np.zeros(layout.num_entries, dtype=np.uint16)
            self.scales = np.zeros((2, layout.num_nodes), dtype=np.float32)  # regret and strategy-sum scales
            self._compressed = (self.regrets, self.strategy_sum, self.scales[0], self.scales[1])
            self._dummy = np.zeros(1, dtype=np.float32)
        else:
            self.regrets = np.zeros(layout.num_entries, dtype=self.dtype)
            self.strategy_sum = np.zeros(layout.num_entries, dtype=self.dtype)
            self._compressed = None
        # PDCFR+: the cumulative (DCFR+) regrets; ``regrets`` then holds the predicted regrets matching reads
        self.cumulative_regrets = (np.zeros(layout.num_entries, dtype=self.dtype) if algorithm == "pdcfr+"
                                   else None)
        self.iterations = 0
        # the kernel's set-up for the first run's thread count (the fixed count; the chooser's warm-up count),
        # built with the tables rather than inside the first ``run`` (~0.5-1 ms: a river's first 5 iterations
        # cost ~0.6 ms; the set-up, like the layout, is per spot, not per iteration).  A layout the kernel
        # refuses (a river subtree with more than 64 showdowns) raises at ``run``, as before.
        try:
            self._workspace(kernel_module(self.dtype), self.threads if self.chooser is None else self.chooser.current)
        except ValueError:
            pass

    def _allin_tables(self):
        """The kernel's all-in tables (see ``set_allin`` in the kernel), or None without ALLIN nodes: the ALLIN
        nodes grouped by board, one equity matrix per board coded by :func:`code_matrix` (rows padded to a
        multiple of 8 hands), rows in chunks of 64 (the tasks of the threads)."""
        lay, tree = self.layout, self.tree
        nodes = np.flatnonzero(lay.node_type == 5)
        if not len(nodes):
            return None
        spaces = lay.node_space[nodes]
        nodes = nodes[np.argsort(spaces, kind="stable")]
        spaces = lay.node_space[nodes]
        Hp = -(-max(len(p) for p in lay.space_pairs) // 8) * 8
        arrays = tree.arrays()  # the run-outs read from arrays (a flop's 1,160 all-in nodes walk ~60K nodes)
        codes, mat_off, widths, luts, lut_off = [], [], [], [], []
        group_start, chunks, off, loff = [0], [], 0, 0
        for g, s in enumerate(np.unique(spaces)):
            sel = nodes[spaces == s]
            runouts = allin_runouts(tree, lay.order[sel[0]], arrays)
            if any(allin_runouts(tree, lay.order[k], arrays) != runouts for k in sel[1:]):
                raise GameError(f"internal: all-in nodes on board space {s} with different run-outs")
            pairs = lay.space_pairs[s]
            H = len(pairs)
            m = allin_equity_matrix(tree, lay.order[sel[0]], pairs, cache=False, arrays=arrays).astype(self.dtype)
            block, lut = code_matrix(m, Hp)
            del m
            codes.append(block.view(np.uint8).ravel())
            mat_off.append(off)
            widths.append(block.itemsize)
            off += block.nbytes
            luts.append(lut)
            lut_off.append(loff)
            loff += len(lut)
            group_start.append(group_start[-1] + len(sel))
            chunks.extend((g, i, min(i + 64, H)) for i in range(0, H, 64))
        return (lay.ext_off, np.ascontiguousarray(nodes, dtype=np.int32), np.asarray(group_start, dtype=np.int32),
                np.concatenate(codes), np.asarray(mat_off, dtype=np.int64), np.asarray(widths, dtype=np.int32),
                np.ascontiguousarray(np.concatenate(luts), dtype=self.dtype), np.asarray(lut_off, dtype=np.int64),
                int(Hp), np.ascontiguousarray(chunks, dtype=np.int32))

    @property
    def storage_bytes(self) -> int:
        """Bytes of the regrets and strategy sums (and their scales with 16-bit storage, PDCFR+'s cumulative
        regrets)."""
        return (self.regrets.nbytes + self.strategy_sum.nbytes + (self.scales.nbytes if self.compression else 0)
                + (self.cumulative_regrets.nbytes if self.cumulative_regrets is not None else 0))

    @property
    def allin_bytes(self) -> int:
        """Bytes of the all-in equity matrices, coded (:func:`code_matrix`: 1 or 2 bytes per entry) with their
        value tables (0 without all-in run-outs or with ``allin_equity=False``)."""
        return 0 if self._allin is None else int(self._allin[3].nbytes + self._allin[6].nbytes)

    def _stored(self):
        return (self._dummy, self._dummy) if self.compression else (self.regrets, self.strategy_sum)

    def run(self, iterations: int, check_every: int = 0, target: Optional[float] = None) -> np.ndarray:
        """Run up to ``iterations`` more iterations; returns the exploitability (chips) every ``check_every``
        (stopping after the first check at or below ``target`` chips, if given).

        With adaptive threads (``threads=None``) the iterations run in chunks whose thread count
        :attr:`chooser` picks by timing them (:class:`~cfrkit.solvers.public.thread_chooser.ThreadChooser`); the
        iterates and checks are those of any fixed count, bit for bit.  :attr:`thread_stats` tells which count
        ran how many iterations."""
        iterations, check_every = int(iterations), int(check_every)
        if iterations < 0 or check_every < 0:
            raise ValueError("iterations and check_every must be non-negative")
        if target is not None and check_every == 0:
            raise ValueError("a target needs check_every > 0")
        out = np.zeros(max(iterations // check_every if check_every > 0 else 0, 1))
        module = kernel_module(self.dtype)
        limit = -1.0 if target is None else float(target)
        if self.chooser is None:
            ws = self._workspace(module, self.threads)
            t0 = time.perf_counter()
            done, written = self._solve(module, ws, self.threads, iterations, check_every, limit, out)
            self._fixed_stats["iterations"] += done
            self._fixed_stats["seconds"] += time.perf_counter() - t0
            return out[:written]
        # adaptive: chunks that end at the checks; the checks run between chunks (untimed), as the kernel runs them
        chooser, dummy = self.chooser, np.zeros(1)
        done = written = 0
        while done < iterations:
            count, n = chooser.plan()
            n = min(n, iterations - done)
            if check_every:
                n = min(n, check_every - done % check_every)
            ws = self._workspace(module, count)  # built (once per count) before the clock starts
            t0 = chooser.clock()
            d, _ = self._solve(module, ws, count, n, 0, -1.0, dummy)
            chooser.record(count, d, chooser.clock() - t0)
            done += d
            if check_every and done % check_every == 0 and written < len(out):
                out[written] = e = self._exploitability(module, ws, count)
                written += 1
                if limit >= 0 and e <= limit:
                    break
        return out[:written]

    def _solve(self, module, ws, threads: int, iterations: int, check_every: int, target: float, out: np.ndarray):
        """``iterations`` iterations of the kernel on ``threads`` threads from the next one; ``(done, written)``."""
        done, written = module.solve(
            self.layout.layout, self.ranges, *self._stored(), self.iterations + 1, iterations,
            BOARD_ALGORITHMS[self.algorithm], self.alpha, self.beta, self.gamma, check_every, target, out, threads,
            self._compressed, self.rounding == "stochastic", self._allin, self.cumulative_regrets, **ws)
        self.iterations += done
        return done, written

    @property
    def thread_stats(self) -> dict:
        """Which thread count ran how many iterations: ``{"adaptive": bool, "iterations": {threads: n},
        "seconds": {threads: wall s of those iterations}, "probes": n, "switches": n}`` (probes and switches of
        the adaptive choice, 0 with a fixed count; adaptive: also ``"history"``, per probe the seconds per
        iteration measured at the low and high count and the count chosen).  Checks are not counted in the seconds."""
        if self.chooser is None:
            return {"adaptive": self.adaptive, "iterations": {self.threads: self._fixed_stats["iterations"]},
                    "seconds": {self.threads: self._fixed_stats["seconds"]}, "probes": 0, "switches": 0}
        st = self.chooser.stats()
        return {"adaptive": True, "iterations": st["iterations"], "seconds": st["seconds"], "probes": st["probes"],
                "switches": st["switches"], "history": st["history"]}

    def solve(self, target_fraction: float = 0.003, check_every: int = 10, max_iterations: int = 1000) -> float:
        """Iterate until the exploitability is at most ``target_fraction`` of the root pot (checked every
        ``check_every`` iterations, at most ``max_iterations`` more); returns the final exploitability (chips)."""
        if not target_fraction > 0 or check_every < 1 or max_iterations < 0:
            raise ValueError("need target_fraction > 0, check_every >= 1 and max_iterations >= 0")
        start = self.iterations
        curve = self.run(max_iterations, check_every=check_every, target=target_fraction * self.pot)
        if len(curve) and start + len(curve) * check_every == self.iterations:
            return float(curve[-1])
        return self.exploitability()

    def exploitability(self) -> float:
        """Exploitability (chips) of the average strategy: (BR_0 + BR_1) / 2, the ranges as the deal."""
        module = kernel_module(self.dtype)
        count = self.threads if self.chooser is None else self.chooser.current
        return self._exploitability(module, self._workspace(module, count), count)

    def _exploitability(self, module, ws, threads: int) -> float:
        return float(module.exploitability(self.layout.layout, self.ranges, self._stored()[1], threads,
                                           self._compressed, self._allin, **ws))

    def _kernel_workspace(self):
        """The kernel module and its workspace keywords for the fixed (or largest) thread count (benchmarks)."""
        module = kernel_module(self.dtype)
        return module, self._workspace(module, self.threads)

    def _workspace(self, module, threads: int) -> dict:
        """The kernel's workspace for this spot on ``threads`` threads, as keyword arguments (``make_workspace``:
        the kernel's set-up, built on the first call and kept, one per thread count, so that ``run`` and
        ``exploitability`` do not build it again per call: ~0.3 ms, more than a river iteration).  Rebuilt when
        the module, the layout tuple or the all-in tables change; a module without ``make_workspace`` (a
        benchmark's stand-in) gets none."""
        make = getattr(module, "make_workspace", None)
        if make is None:
            return {}
        spot = (id(module), id(self.layout.layout), id(self._allin))  # the workspaces keep them alive
        cache = getattr(self, "_ws_cache", None)
        if cache is None or cache[0] != spot:
            cache = self._ws_cache = (spot, {})
        ws = cache[1].get(threads)
        if ws is None:
            ws = cache[1][threads] = make(self.layout.layout, threads, self._allin)
        return {"workspace": ws}

    def _block(self, kernel_node: int, source: np.ndarray) -> np.ndarray:
        """``(A, H)`` block of a kernel decision in ``source`` (regrets or strategy sums), decoded if 16-bit."""
        lay = self.layout
        A = int(lay.num_children[kernel_node])
        H = len(lay.space_pairs[lay.node_space[kernel_node]])
        off = int(lay.node_offset[kernel_node])
        out = source[off:off + A * H].reshape(A, H).astype(np.float64)
        if self.compression:
            regret = source is self.regrets
            out *= float(self.scales[0 if regret else 1, kernel_node]) / (32767.0 if regret else 65535.0)
        return out

    def _strategy_of(self, kernel_node: int, source: np.ndarray, average: bool) -> np.ndarray:
        """``(A, 1326)`` strategy of a kernel decision (uniform on pairs outside its board's space)."""
        lay = self.layout
        rows = self._block(kernel_node, source)
        A = rows.shape[0]
        if not average:
            rows = np.maximum(rows, 0)
        tot = rows.sum(0, keepdims=True)
        rows = np.where(tot > 0, rows / np.where(tot > 0, tot, 1), 1.0 / A)
        full = np.full((A, 1326), 1.0 / A)
        full[:, lay.space_pairs[lay.node_space[kernel_node]]] = rows
        return full

    def _strategies(self, source: np.ndarray, average: bool, nodes=None) -> Dict[int, np.ndarray]:
        """``(1, A, 1326)`` strategy per decision (original indices); copies' nodes read their canonical
        node with the suits swapped back."""
        lay, T = self.layout, self.tree.arrays()
        kind, start = _typed_of(T.kind, "b"), _typed_of(T.child_start, "i")
        children, edge = _typed_of(T.children, "i"), _typed_of(T.edge_action, "q")
        out: Dict[int, np.ndarray] = {}
        want = None if nodes is None else set(nodes)
        ident_pairs, ident_cards = np.arange(1326), np.arange(52)
        # (original node, node laid out in the kernel with the same public structure, pair map, card map)
        stack = [(0, 0, ident_pairs, ident_cards)]
        while stack:
            u, v, q, qc = stack.pop()
            k = kind[u]
            if k == _DECISION:
                if want is None or u in want:
                    out[u] = self._strategy_of(lay.node_of[v], source, average)[:, q][None]
                stack.extend((cu, cv, q, qc) for cu, cv in zip(children[start[u]:start[u + 1]],
                                                                children[start[v]:start[v + 1]]))
            elif k == _CHANCE:
                vchild = dict(zip(edge[start[v]:start[v + 1]], children[start[v]:start[v + 1]]))
                for card, cu in zip(edge[start[u]:start[u + 1]], children[start[u]:start[u + 1]]):
                    cv = vchild[int(qc[card])]
                    if cv in lay.copy_of:
                        canon, swap = lay.copy_of[cv]
                        perm = lay.pair_perm(swap)
                        cperm = np.array([_swap_suits(c, *swap) for c in range(52)])
                        stack.append((cu, canon, perm[q], cperm[qc]))
                    else:
                        stack.append((cu, cv, q, qc))
        return out

    def average_strategy(self, nodes=None) -> Dict[int, np.ndarray]:
        """``(1, A, 1326)`` average strategy per decision node (original tree indices; ``nodes`` to restrict)."""
        return self._strategies(self.strategy_sum, True, nodes)

    def current_strategy(self, nodes=None) -> Dict[int, np.ndarray]:
        """``(1, A, 1326)`` current (regret-matched) strategy per decision node."""
        return self._strategies(self.regrets, False, nodes)
