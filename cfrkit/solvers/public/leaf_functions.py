"""Leaf value functions (:class:`~cfrkit.solvers.public.leaf_values.LeafValues`) that need no value net.

* :class:`ExactContinuationValues` (old name ``SolvedLeafValues``): solve every leaf's subgame to the end of the
  game for the leaf's ranges, what a perfect value net returns;
* :class:`CheckdownValues`: the pot checked down from the leaf's board (float32 sign matrices; the DeepStack
  agent's values of run-outs and its fallback without a net);
* :class:`AllinEquityValues`: the same check-down values by exact enumeration in the compiled all-in equity
  kernel (:func:`~cfrkit.solvers.public.allin.runout_equity_matrix`, float64), for flop, turn and river
  leaves.

All return counterfactual values in chips, ``(L, B, H)`` per player (the protocol's conventions).
"""
from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from cfrkit.cards.equity import board_strengths, board_strengths_batch, showdown_values
from cfrkit.cards.hands import HOLE_PAIRS
from cfrkit.games.base import GameError
from cfrkit.solvers.public.allin import runout_equity_matrix
from cfrkit.solvers.public.public_tree import PublicNode, PublicTree, build_public_tree
from cfrkit.solvers.public.tree import RangeSolver


class ExactContinuationValues:
    """:class:`~cfrkit.solvers.public.leaf_values.LeafValues` of the exact continuation: solve each leaf's subgame
    (to the end of the game) for the leaf's ranges (CFR+, ``iterations``, numpy :class:`RangeSolver`); what a
    perfect value net would return.  Chips.

    ``targets="average_values"`` (default, DeepStack's) returns the leaf cfvs averaged over the
    iterations after ``skip``; ``"average_strategy"`` the cfvs of the average strategy, which gives a
    hand with zero reach at the leaf the value of the uniform default strategy (far too low), so the
    outer solve never learns to bring that hand there.
    """

    def __init__(self, pgame, iterations: int = 300, skip: int = 0, algorithm: str = "cfr+",
                 targets: str = "average_values"):
        if targets not in ("average_values", "average_strategy"):
            raise ValueError(f"targets must be 'average_values' or 'average_strategy', got {targets!r}")
        self.targets = targets
        self.pgame = pgame
        self.iterations, self.skip, self.algorithm = int(iterations), int(skip), algorithm
        self._trees: Dict[Any, PublicTree] = {}

    def _tree(self, node: PublicNode) -> PublicTree:
        key = (node.board, node.contrib, self.pgame.public_key(node.state))
        tree = self._trees.get(key)
        if tree is None:
            tree = build_public_tree(self.pgame, node.state)
            self._trees[key] = tree
        return tree

    def __call__(self, leaves: List[PublicNode], reach0, reach1, backend):
        be = backend
        out0, out1 = [], []
        for k, leaf in enumerate(leaves):
            tree = self._tree(leaf)
            ranges = np.stack([be.to_numpy(reach0[k]), be.to_numpy(reach1[k])], 1)  # (B, 2, H)
            solver = RangeSolver(tree, ranges=ranges, algorithm=self.algorithm, skip=self.skip)
            solver.run(self.iterations)
            if self.targets == "average_values":
                avg = solver.average_root_values()
                out0.append(avg[:, 0])
                out1.append(avg[:, 1])
            else:
                vals, _ = solver.node_values()
                out0.append(vals[0][0])
                out1.append(vals[0][1])
        return be.asarray(np.stack(out0)), be.asarray(np.stack(out1))


def _pair_compat() -> np.ndarray:
    hp = np.asarray(HOLE_PAIRS)
    share = np.zeros((1326, 1326), dtype=bool)
    for a in range(2):
        for b in range(2):
            share |= hp[:, a][:, None] == hp[:, b][None, :]
    return ~share


_COMPAT: Optional[np.ndarray] = None
_PREFLOP_CACHE: Dict[Tuple[int, int], np.ndarray] = {}


def _compat() -> np.ndarray:
    global _COMPAT
    if _COMPAT is None:
        _COMPAT = _pair_compat()
    return _COMPAT


def _accumulate_signs(strengths: np.ndarray, out: np.ndarray, counts: Optional[np.ndarray] = None) -> None:
    """Add ``sign(s[h] - s[h'])`` over both-unblocked pairs for every strength row (int32[R, 1326])."""
    for s in strengths:
        s16 = s.astype(np.int16)
        d = np.sign(np.subtract.outer(s16, s16)).astype(np.int8)
        blocked = s16 == 0
        d[blocked] = 0
        d[:, blocked] = 0
        out += d
        if counts is not None:
            valid = (~blocked).astype(np.int16)
            counts += np.multiply.outer(valid, valid)


def showdown_sign_matrix(board, num_samples: int = 500, seed: int = 0, flop_samples: Optional[int] = None) -> np.ndarray:
    """float32[1326, 1326]: expected ``sign(strength(h) - strength(h'))`` over the board's run-outs.

    Exact (every run-out) for 3- to 5-card boards unless ``flop_samples`` is set (a 3-card board then
    uses that many sampled turn-river run-outs); for an empty board (preflop) the mean over
    ``num_samples`` random 5-card boards.  Sampled run-outs are averaged per pair over the run-outs
    disjoint from both hands.  Pairs that share a card (with each other or the board) get 0.  A
    player who has ``x`` chips in a pot that is checked down has cfvs ``x * (opp_reach @ M.T)``.
    """
    board = [int(c) for c in board]
    compat = _compat()
    if len(board) not in (0, 3, 4, 5):
        raise GameError(f"check-down values need a board of 0, 3, 4 or 5 cards, got {len(board)}")
    rng = np.random.default_rng(seed)
    sampled = not board or (len(board) == 3 and flop_samples is not None)
    if not board:
        key = (int(num_samples), int(seed))
        if key in _PREFLOP_CACHE:
            return _PREFLOP_CACHE[key]
        runouts = np.array([rng.choice(52, 5, replace=False) for _ in range(int(num_samples))], dtype=np.uint8)
    else:
        rest = [c for c in range(52) if c not in board]
        k = 5 - len(board)
        runouts = np.array([board + list(r) for r in itertools.combinations(rest, k)], dtype=np.uint8).reshape(-1, 5)
        if sampled and int(flop_samples) < len(runouts):
            runouts = runouts[rng.choice(len(runouts), int(flop_samples), replace=False)]
    total = np.zeros((1326, 1326), dtype=np.int32)
    counts = np.zeros((1326, 1326), dtype=np.int32) if sampled else None
    for chunk in range(0, len(runouts), 64):
        _accumulate_signs(board_strengths_batch(runouts[chunk:chunk + 64]), total, counts)
    if sampled:
        m = np.where(counts > 0, total / np.maximum(counts, 1), 0.0).astype(np.float32) * compat
        if not board:
            _PREFLOP_CACHE[(int(num_samples), int(seed))] = m
        return m
    # every pair disjoint from the board and from each other meets the same number of run-outs
    n = 1
    for j in range(k):
        n = n * (52 - len(board) - 4 - j) // (j + 1)
    return (total / float(n)).astype(np.float32) * compat


def _recent(cache: "OrderedDict[tuple, np.ndarray]", size: int, board, compute) -> np.ndarray:
    """``compute(key)`` for the sorted ``board`` key, kept in ``cache`` for the ``size`` most recently used
    boards (an OrderedDict rather than functools.lru_cache so that the leaf functions stay picklable)."""
    key = tuple(sorted(int(c) for c in board))
    m = cache.get(key)
    if m is None:
        m = cache[key] = compute(key)
        while len(cache) > size:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return m


class CheckdownValues:
    """:class:`~cfrkit.solvers.public.leaf_values.LeafValues` of a pot checked down from the leaf's board (exact
    when both players are all in).

    For leaves that are chance states (cards still to come) or decisions: each player's cfvs (chips) are its
    chips in times the expected showdown sign against the opponent's reach (:func:`showdown_sign_matrix`, a
    float32 matrix cached per board; 5-card boards through the cards package's O(H) showdown kernel).
    """

    def __init__(self, preflop_boards: int = 500, seed: int = 0, cache_boards: int = 8,
                 flop_samples: Optional[int] = None):
        self.preflop_boards, self.seed = int(preflop_boards), int(seed)
        self.flop_samples = flop_samples
        self._last = None
        self.cache_boards = int(cache_boards)
        self._cache: "OrderedDict[tuple, np.ndarray]" = OrderedDict()

    def reset(self) -> None:
        """Forget the last call's reach and values (kept to reuse the unchanged side between CFR passes)."""
        self._last = None

    def matrix(self, board) -> np.ndarray:
        """float32[1326, 1326] sign matrix of ``board`` (cached, most recent boards kept)."""
        return _recent(self._cache, self.cache_boards, board,
                       lambda key: showdown_sign_matrix(key, self.preflop_boards, self.seed, self.flop_samples))

    def __call__(self, leaves, reach0, reach1, backend):
        be = backend
        r0, r1 = be.to_numpy(reach0), be.to_numpy(reach1)
        # CFR with alternating updates changes one player's reach between calls: each side's values
        # depend only on the other side's reach, so the unchanged side is reused (half the products)
        key = tuple((tuple(n.board), tuple(n.contrib)) for n in leaves)   # what the values depend on, with the reach
        last = self._last
        if last is not None and last[0] == key and last[1].shape == r0.shape:
            same0, same1 = np.array_equal(last[1], r0), np.array_equal(last[2], r1)
        else:
            same0 = same1 = False
        v0, v1 = self._compute(leaves, r0, r1, need0=not same1, need1=not same0)
        if same1:
            v0 = last[3]
        if same0:
            v1 = last[4]
        self._last = (key, r0.copy(), r1.copy(), v0, v1)
        return be.asarray(v0.copy()), be.asarray(v1.copy())

    def _compute(self, leaves, r0, r1, need0: bool = True, need1: bool = True):
        v0, v1 = np.zeros_like(r0), np.zeros_like(r1)
        groups: Dict[tuple, list] = {}
        for k, leaf in enumerate(leaves):
            groups.setdefault(tuple(sorted(leaf.board)), []).append(k)
        H = r0.shape[-1]
        for board, idx in groups.items():
            if len(board) == 5:   # complete board: the cards package's O(H) showdown kernel
                st = board_strengths(board)
                for k in idx:
                    c0, c1 = leaves[k].contrib
                    if need0:
                        v0[k] = c0 * showdown_values(st, r1[k])
                    if need1:
                        v1[k] = c1 * showdown_values(st, r0[k])
                continue
            mt = self.matrix(board).T
            c0 = np.array([leaves[k].contrib[0] for k in idx])[:, None, None]
            c1 = np.array([leaves[k].contrib[1] for k in idx])[:, None, None]
            # float32 products (the matrix is a mean of signs): one per board for every leaf and batch element
            if need0:
                v0[idx] = c0 * (r1[idx].reshape(-1, H).astype(np.float32) @ mt).reshape(r1[idx].shape)
            if need1:
                v1[idx] = c1 * (r0[idx].reshape(-1, H).astype(np.float32) @ mt).reshape(r0[idx].shape)
        return v0, v1


class AllinEquityValues:
    """:class:`~cfrkit.solvers.public.leaf_values.LeafValues` of a pot checked down (or a called all-in) from each
    leaf's board, by exact enumeration: player ``p``'s cfvs are ``contrib_p x M @ opponent_reach`` (chips) with
    ``M`` the board's all-in equity matrix over every run-out to the river
    (:func:`~cfrkit.solvers.public.allin.runout_equity_matrix`, float64; about a second for a flop board, 0.1 s
    for a river board), kept for the last ``cache_boards`` boards (14 MB each: a turn tree's leaves have one
    river board per dealt card).  The float64 twin of :class:`CheckdownValues` on 3- to 5-card boards of
    52-card hold'em.
    """

    def __init__(self, pgame, cache_boards: int = 64):
        if np.asarray(getattr(pgame, "hand_cards", np.zeros((0, 0)))).shape != (1326, 2):
            raise GameError(f"AllinEquityValues needs a 52-card hold'em public game, not {type(pgame).__name__}")
        self.pgame = pgame
        self.cache_boards = int(cache_boards)
        self._cache: "OrderedDict[tuple, np.ndarray]" = OrderedDict()

    def matrix_t(self, board) -> np.ndarray:
        """The transposed equity matrix ``(1326, 1326)`` of ``board`` (cached)."""
        return _recent(self._cache, self.cache_boards, board,
                       lambda key: np.ascontiguousarray(runout_equity_matrix(self.pgame, key).T))

    def __call__(self, leaves, reach0, reach1, backend):
        be = backend
        r0 = np.asarray(be.to_numpy(reach0), dtype=np.float64)
        r1 = np.asarray(be.to_numpy(reach1), dtype=np.float64)
        v0, v1 = np.zeros_like(r0), np.zeros_like(r1)
        H = r0.shape[-1]
        for k, leaf in enumerate(leaves):
            mt = self.matrix_t(leaf.board)
            c0, c1 = leaf.contrib
            v0[k] = c0 * (r1[k].reshape(-1, H) @ mt)
            v1[k] = c1 * (r0[k].reshape(-1, H) @ mt)
        return be.asarray(v0), be.asarray(v1)
