"""All-in equity of hold'em run-outs: what a called all-in (or a pot checked down) is worth, exactly.

:func:`allin_equity_matrix` enumerates the run-outs below an all-in chance node of a public tree (its own
chance probabilities) in the compiled ``allin_matrix`` kernel: ``M[i, j] = P(i beats j) - P(j beats i)``, so
player p's value there is ``contribution_p x M @ opponent_reach`` (chips).  :func:`runout_equity_matrix` does
the same for a bare board (every run-out to the river), which the all-in-equity leaf values use.  Both the
numpy/torch :class:`~cfrkit.solvers.public.tree.RangeSolver` and the compiled
:class:`~cfrkit.solvers.public.board_leaf_cfr.BoardLeafSolver` value all-in nodes with it; it sits below both
(it imports only the public-tree types and the kernel).
"""
from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.games.base import GameError
from cfrkit.solvers.public.public_tree import CHANCE_NODE, KINDS, SHOWDOWN_NODE, PublicTree, TreeArrays

_MATRIX_CACHE: "OrderedDict[Tuple[int, ...], np.ndarray]" = OrderedDict()
_MATRIX_CACHE_SIZE = 4


def allin_runouts(tree: PublicTree, node: int,
                  arrays: Optional[TreeArrays] = None) -> List[Tuple[Tuple[int, ...], float]]:
    """Run-outs of the all-in chance node ``node``: ``(river board, probability given both hands)``, boards
    that differ only in the order of the dealt cards merged (their probabilities added).  ``arrays``: the tree's
    :meth:`~cfrkit.solvers.public.public_tree.PublicTree.arrays`, read instead of its nodes (a caller walking
    many run-outs of a large tree makes them once)."""
    pg = tree.pgame
    nodes = tree.nodes

    def kind_of(i: int) -> str:
        return nodes[i].kind if arrays is None else KINDS[arrays.kind[i]]

    def board_of(i: int) -> Tuple[int, ...]:
        return nodes[i].board if arrays is None else arrays.boards[arrays.board[i]]

    def children_of(i: int) -> List[int]:
        if arrays is None:
            return nodes[i].children
        return arrays.children[arrays.child_start[i]:arrays.child_start[i + 1]].tolist()

    out: Dict[Tuple[int, ...], float] = {}
    stack = [(node, 1.0)]
    while stack:
        i, w = stack.pop()
        kind = kind_of(i)
        if kind == CHANCE_NODE:
            cw = pg.chance_weight(board_of(i))
            stack.extend((c, w * cw) for c in children_of(i))
        elif kind == SHOWDOWN_NODE:
            key = tuple(sorted(int(c) for c in board_of(i)))
            out[key] = out.get(key, 0.0) + w
        else:
            raise GameError(f"node {i} ({kind}) below an all-in run-out")
    return sorted(out.items())


def allin_equity_matrix(tree: PublicTree, node: int, pairs: np.ndarray, cache: bool = True,
                        arrays: Optional[TreeArrays] = None) -> np.ndarray:
    """All-in equity matrix ``(H, H)`` float64 of the hands ``pairs`` (pair indices, none touching the root
    board) for the all-in chance node ``node`` of ``tree``: ``M[i, j]`` = P(i beats j) - P(j beats i) over the
    node's run-outs to the river given both hands (exact enumeration of the tree's own run-outs, with its
    chance probabilities: 1/44 per river card on a full-deck turn), 0 for hands sharing a card.  Player p's
    value of the all-in terminal is ``contribution_p x M @ opponent_reach`` (chips).  Cached for the last
    few boards (``cache=False``: neither read nor kept, for a caller that keeps its own copy).  ``arrays``: as in
    :func:`allin_runouts`.
    """
    pg = tree.pgame
    root = tuple(int(c) for c in (tree.nodes[node].board if arrays is None else arrays.boards[arrays.board[node]]))
    runouts = allin_runouts(tree, node, arrays)
    if not cache:
        return _matrix_of_runouts(pg, root, pairs, runouts)
    key = (root, tuple(int(p) for p in pairs), tuple(runouts))
    hit = _MATRIX_CACHE.get(key)
    if hit is not None:
        _MATRIX_CACHE.move_to_end(key)
        return hit
    # run-outs of equal probability (all of them on a full deck) in one kernel call each
    out = _matrix_of_runouts(pg, root, pairs, runouts)
    _MATRIX_CACHE[key] = out
    while len(_MATRIX_CACHE) > _MATRIX_CACHE_SIZE:
        _MATRIX_CACHE.popitem(last=False)
    return out


def _matrix_of_runouts(pgame, root: Tuple[int, ...], pairs: np.ndarray, runouts) -> np.ndarray:
    """``(H, H)`` float64 equity matrix of ``pairs`` over ``runouts`` (``[(5-card board, probability)]``)."""
    cards = np.ascontiguousarray(pgame.hand_cards[pairs], dtype=np.int64)
    R, H = len(runouts), len(pairs)
    strengths = np.zeros((R, H), dtype=np.int32)
    live = np.ones((R, H), dtype=np.uint8)
    out = None
    weights = np.array([w for _, w in runouts])
    for r, (board, _) in enumerate(runouts):
        strengths[r] = np.asarray(pgame.strengths(board))[pairs]
        for c in set(board) - set(root):
            live[r] &= (cards[:, 0] != c) & (cards[:, 1] != c)
    # the matrix is float64 in either kernel build (the same code and bits); the float32 build is the one a default
    # solve has loaded, so a float32 solve does not load the float64 module too (~0.9 MiB, issue 30 part 11)
    from cfrkit._kernels import range_cfr_board32

    for w in np.unique(weights):   # run-outs of equal probability in one kernel call each
        sel = np.flatnonzero(weights == w)
        part = range_cfr_board32.allin_matrix(cards, np.ascontiguousarray(strengths[sel]),
                                            np.ascontiguousarray(live[sel]), float(w))
        if out is None:
            out = part
        else:
            out += part
    return out if out is not None else np.zeros((H, H))


def runout_equity_matrix(pgame, board: Sequence[int]) -> np.ndarray:
    """``(1326, 1326)`` float64 all-in equity matrix of a 3-, 4- or 5-card ``board`` of a 52-card hold'em public
    game: ``M[i, j]`` = P(i beats j) - P(j beats i) over every run-out to the river given both hands (each of
    the run-outs disjoint from both hands equally likely; exact enumeration),
    0 for pairs sharing a card or touching the board.  Cached for the last few boards."""
    root = tuple(sorted(int(c) for c in board))
    if len(root) not in (3, 4, 5):
        raise GameError(f"an all-in equity matrix needs a board of 3, 4 or 5 cards, got {len(root)}")
    key = ("board", root)
    hit = _MATRIX_CACHE.get(key)
    if hit is not None:
        _MATRIX_CACHE.move_to_end(key)
        return hit
    pairs = np.flatnonzero(pgame.hand_mask(root))
    rest = [c for c in range(52) if c not in root]
    k = 5 - len(root)
    # probability of a run-out given both hands: 1 / C(52 - |board| - 4, k), the same for every run-out
    n = 1
    for j in range(k):
        n = n * (52 - len(root) - 4 - j) // (j + 1)
    runouts = [(root + tuple(r), 1.0 / n) for r in itertools.combinations(rest, k)]
    full = np.zeros((1326, 1326))
    full[np.ix_(pairs, pairs)] = _matrix_of_runouts(pgame, root, pairs, runouts)
    _MATRIX_CACHE[key] = full
    while len(_MATRIX_CACHE) > _MATRIX_CACHE_SIZE:
        _MATRIX_CACHE.popitem(last=False)
    return full
