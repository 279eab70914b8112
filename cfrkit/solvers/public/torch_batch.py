"""Many subgames in one torch solve: CFR+ / DCFR over range vectors, batched over boards and pots.

``RangeSolver(backend="torch")`` solves one tree: situations of one board and one pot side by side.  A
datagen group is about ten situations, far too few rows to fill a GPU, and one Python loop per group over
the tree's nodes keeps the device waiting on launches.  :class:`MultiBoardRiverSolver` takes *many* river
trees that have the same shape (the same decisions, actions and terminals in pre-order; they differ in
board and chips, see :func:`tree_signature`) and stacks all their situations into one batch of rows:

* per-node chips (fold and showdown amounts) are per-row columns ``(B, 1)``;
* terminal values use per-row index tensors: each row's board has its own showdown strength order, and the
  card-removal sums run over per-card blocks (the 51 pairs holding a card, sorted by strength on the row's
  board), the prefix-sum scheme of :class:`~cfrkit.solvers.public.terminal_values.SortedTerminal` with
  ``torch.gather`` along the hand axis instead of one index array per board;
* one Python pass over the nodes per player and iteration, whatever the number of boards.

The iterates are ``RangeSolver``'s (alternating updates, CFR+ floor or DCFR discounts, regret matching after
each player's pass), so in float64 the averaged root values equal ``RangeSolver``'s with the sorted
prefix-sum kernel up to float rounding (tested); the average strategy is not accumulated (the datagen's
targets are the root cfvs averaged over the iterations after ``skip``).  :class:`MultiBoardRiverSolver` takes
river trees (no chance nodes, no leaves); :class:`MultiBoardLeafSolver` the depth-limited turn / flop trees of the
datagen (chance nodes with leaf children, value-net leaves, all-in run-outs by equity matrices), with per-row
chance masks, leaf boards and all-in matrices.  Rows take about ``bytes_per_row(tree)`` bytes and each tree
``bytes_per_tree(tree)`` (:func:`rows_for_memory` sizes a batch from a memory budget, e.g. the free memory of a
GPU); :func:`solve_river_trees` / :func:`solve_leaf_trees` group trees by shape and batch them
(:func:`plan_batches`: the batches they solve, for a caller that times set-up and iterations apart).

Torch is imported lazily (an optional heavy dependency); this module holds no numpy-backend code.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.solvers.public.allin import allin_equity_matrix, allin_runouts
from cfrkit.solvers.public.array_backend import make_backend
from cfrkit.solvers.public.tree import (CHANCE_NODE, DECISION, FOLD_NODE, LEAF, SHOWDOWN_NODE, PublicTree,
                                        find_allin_nodes)

_CARDS = 52
_PER_CARD = 51  # pairs holding a given card


def tree_signature(tree: PublicTree) -> Tuple:
    """Shape of a public tree: per node in pre-order ``(kind, player, children, folder)``.  Trees with equal
    signatures can share one :class:`MultiBoardRiverSolver` batch (their boards and chips may differ)."""
    return tuple((n.kind, n.player, len(n.children), n.folder) for n in tree.nodes)


def _resolve_device_dtype(device: Optional[str], dtype):
    import torch

    dev = torch.device(device if device is not None else ("cuda" if torch.cuda.is_available() else "cpu"))
    if dtype is None or dtype == "auto":
        dt = torch.float32 if dev.type == "cuda" else torch.float64
    elif isinstance(dtype, torch.dtype):
        dt = dtype
    else:
        dt = {"float32": torch.float32, "float64": torch.float64}.get(str(dtype))
        if dt is None:
            raise ValueError(f"dtype must be 'auto', 'float32' or 'float64', got {dtype!r}")
    return dev, dt


def showdown_indices(hand_cards: np.ndarray, valid: np.ndarray, strengths: np.ndarray) -> Dict[str, np.ndarray]:
    """Index arrays of the batched showdown for one board (``H = 1326`` two-card hands, ``valid`` the pairs that
    miss the board): ``order (H,)`` valid pairs by strength, then the pad index ``H``; ``lt, le (H,)`` the number
    of valid pairs strictly weaker / weaker or equal; ``card_lists (52 * 51,)`` per card the valid pairs holding
    it by strength (pad ``H``); ``lt_card, le_card (2, H)`` the same counts inside each of a pair's two card
    blocks, offset by ``card * 52`` (the block's position in the per-card prefix sums, which have a leading 0)."""
    hand_cards = np.asarray(hand_cards, dtype=np.int64)
    H = len(hand_cards)
    s = np.asarray(strengths, dtype=np.int64)
    vidx = np.flatnonzero(valid)
    order_v = vidx[np.argsort(s[vidx], kind="stable")]
    sorted_s = s[order_v]
    order = np.full(H, H, dtype=np.int64)
    order[:len(order_v)] = order_v
    lt = np.searchsorted(sorted_s, s, side="left")
    le = np.searchsorted(sorted_s, s, side="right")
    # per card, the valid pairs holding it by strength (ties in the global order): one lexicographic sort of the
    # (card, strength, global rank) entries of the valid pairs' two cards instead of a loop over the 52 cards
    rank = np.empty(H, dtype=np.int64)
    rank[order_v] = np.arange(len(order_v))
    ent_h = np.concatenate([order_v, order_v])
    ent_c = np.concatenate([hand_cards[order_v, 0], hand_cards[order_v, 1]])
    srt = np.lexsort((rank[ent_h], s[ent_h], ent_c))
    ent_h, ent_c = ent_h[srt], ent_c[srt]
    starts = np.searchsorted(ent_c, np.arange(_CARDS + 1))
    pos = np.arange(len(ent_c)) - starts[ent_c]
    card_lists = np.full((_CARDS, _PER_CARD), H, dtype=np.int64)
    card_lists[ent_c, pos] = ent_h
    # counts inside a card's block: searchsorted on the (card, strength) key of the sorted entries
    span = int(s.max(initial=0)) - int(s.min(initial=0)) + 2
    key = ent_c * span + (s[ent_h] - s.min(initial=0))
    lt_card = np.zeros((2, H), dtype=np.int64)
    le_card = np.zeros((2, H), dtype=np.int64)
    for j in (0, 1):
        c = hand_cards[:, j]
        q = c * span + (s - s.min(initial=0))
        base = c * (_PER_CARD + 1) - starts[c]
        lt_card[j] = base + np.searchsorted(key, q, side="left")
        le_card[j] = base + np.searchsorted(key, q, side="right")
    return {"order": order, "lt": lt, "le": le, "card_lists": card_lists.reshape(-1),
            "lt_card": lt_card, "le_card": le_card}


def bytes_per_row(tree: PublicTree, itemsize: int = 4) -> int:
    """Peak device bytes one row (situation) of ``tree`` takes in :class:`MultiBoardRiverSolver` (river trees) or
    :class:`MultiBoardLeafSolver` (depth-limited turn/flop trees), 1326 hands: regrets and current strategy per
    action, the forward pass's reach per action, values per node, the temporaries of one kind of terminal (about
    25 hand vectors per fold or showdown node: stacked reaches, prefix sums, the gathered card blocks), the backward
    pass's stacked children, the int64 showdown index rows; with leaves about 9 hand vectors per leaf (both
    players' masked reaches, the chance masks, the leaf values and the net's dtype copies) plus the leaf's int64
    bucket ids, and 4 per all-in node (padded reaches and products).  The all-in matrices are per tree
    (:func:`bytes_per_tree`).  Calibrated on the CPU (peak RSS, float32): 33-node river tree, 1.9-2.4 MB per row
    measured against 2.3 MB from this count; 240-leaf turn tree, 794 MB for 40 rows of 4 boards against 731 MB
    (17.6 MB per row and 7 MB per board)."""
    H = 1326
    allin, skipped = find_allin_nodes(tree, None)
    active = [n for n in tree.nodes if not skipped[n.index]]
    slots = sum(len(n.children) for n in active if n.kind == DECISION)
    folds = sum(n.kind == FOLD_NODE for n in active)
    showdowns = sum(n.kind == SHOWDOWN_NODE for n in active)
    leaves = len(tree.leaf_nodes)
    widest = max((len(n.children) for n in active if n.kind == DECISION), default=1)
    vectors = 3 * slots + len(active) + 25 * max(folds, showdowns) + 3 * widest + 9 * leaves + 4 * len(allin)
    return int((vectors * itemsize + 7 * 8 + 8 * leaves) * H + _CARDS * _PER_CARD * 8)


def bytes_per_tree(tree: PublicTree, itemsize: int = 4) -> int:
    """Device bytes of one tree in a batch, whatever its rows: the all-in equity matrices, ``1326 x 1326`` per
    group of all-in nodes (one per board and run-outs; 0 for river trees)."""
    allin, _ = find_allin_nodes(tree, None)
    groups = {(tuple(tree.nodes[i].board), tuple(allin_runouts(tree, i))) for i in allin}
    return len(groups) * 1326 * 1326 * itemsize


def rows_for_memory(tree: PublicTree, budget_bytes: float, itemsize: int = 4, rows_per_tree: float = 1.0) -> int:
    """Rows of ``tree`` that fit ``budget_bytes`` (at least 1), the per-tree bytes spread over ``rows_per_tree``."""
    per = bytes_per_row(tree, itemsize) + bytes_per_tree(tree, itemsize) / max(1.0, float(rows_per_tree))
    return max(1, int(budget_bytes // per))


class MultiBoardRiverSolver:
    """CFR+ / DCFR on many river trees of one shape at once (see module docstring).

    Args:
        trees: river :class:`PublicTree` s (``HoldemPublicGame`` or ``RiverPublicGame``: 1326 pairs, no chance
            nodes, no leaves) with equal :func:`tree_signature`.
        ranges: per tree the initial reach ``(2, 1326)`` or ``(g, 2, 1326)`` of its ``g`` situations.
        algorithm, skip, alpha, beta, gamma: as ``RangeSolver`` (``cfr+`` default; ``skip`` iterations are left
            out of the averaged root values).
        device: torch device (default cuda when available); dtype: ``"auto"`` (float32 on CUDA, float64 on the
            CPU), ``"float32"`` or ``"float64"``.
    """

    _KINDS = frozenset({DECISION, FOLD_NODE, SHOWDOWN_NODE})
    _TAKES = "river trees (decisions and terminals only)"

    def __init__(self, trees: Sequence[PublicTree], ranges: Sequence[Any], algorithm: str = "cfr+", skip: int = 0,
                 alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0, device: Optional[str] = None,
                 dtype="auto"):
        import torch

        self.torch = torch
        if algorithm not in ("cfr+", "dcfr"):
            raise ValueError(f"unknown algorithm {algorithm!r}; choose 'cfr+' or 'dcfr'")
        if skip < 0:
            raise ValueError(f"skip must be >= 0, got {skip}")
        trees = list(trees)
        if not trees or len(trees) != len(ranges):
            raise ValueError(f"need one ranges array per tree, got {len(trees)} trees and {len(ranges)} ranges")
        sig = tree_signature(trees[0])
        for t in trees:
            kinds = {n.kind for n in t.nodes}
            if not kinds <= self._KINDS:
                raise ValueError(f"{type(self).__name__} takes {self._TAKES}, "
                                 f"got nodes of kind {sorted(kinds - self._KINDS)}")
            if t.num_hands != 1326 or np.asarray(t.pgame.hand_cards).shape != (1326, 2):
                raise ValueError("MultiBoardRiverSolver needs hold'em trees over the 1326 pairs")
            if tree_signature(t) != sig:
                raise ValueError("trees of different shapes; group them by tree_signature() first")
        self.device, self.dtype = _resolve_device_dtype(device, dtype)
        self.algorithm, self.skip = algorithm, int(skip)
        self.alpha, self.beta, self.gamma = float(alpha), float(beta), float(gamma)
        self.template = trees[0]
        H = 1326
        dev, dt = self.device, self.dtype
        rows, row_tree = [], []
        for k, (t, r) in enumerate(zip(trees, ranges)):
            r = np.asarray(r, dtype=np.float64)
            if r.ndim == 2:
                r = r[None]
            if r.ndim != 3 or r.shape[1:] != (2, H):
                raise ValueError(f"ranges of tree {k} must have shape (2, {H}) or (g, 2, {H}), got {r.shape}")
            if (r < 0).any() or not np.isfinite(r).all():
                raise ValueError("ranges must be finite and non-negative")
            rows.append(r * t.pgame.hand_mask(t.root.board))
            row_tree += [k] * len(r)
        self.group_sizes = [len(r) for r in rows]
        self.B = B = len(row_tree)
        rt = np.asarray(row_tree)
        self.ranges = torch.as_tensor(np.concatenate(rows), dtype=dt, device=dev)          # (B, 2, H)
        # per node chips per row: fold (winner's gain from the folder's contribution) and showdown amounts
        contrib = np.asarray([[n.contrib for n in t.nodes] for t in trees], dtype=np.float64)  # (T, N, 2)
        self._contrib = torch.as_tensor(contrib[rt], dtype=dt, device=dev)                  # (B, N, 2)
        # showdown index rows, one set per distinct board
        boards = [tuple(int(c) for c in t.root.board) for t in trees]
        uniq = {b: i for i, b in enumerate(dict.fromkeys(boards))}
        per_board = []
        for b in uniq:
            t = trees[boards.index(b)]
            valid = t.pgame.hand_mask(b) > 0
            per_board.append((valid, showdown_indices(t.pgame.hand_cards, valid, t.pgame.strengths(b))))
        row_board = torch.as_tensor(np.asarray([uniq[boards[k]] for k in rt]), device=dev)

        def rows_of(name):  # per board on the device, then one row per situation (the copy runs there)
            return torch.as_tensor(np.stack([ix[name] for _, ix in per_board]), device=dev)[row_board]

        self._order, self._lt, self._le = rows_of("order"), rows_of("lt"), rows_of("le")
        self._card_lists = rows_of("card_lists")
        self._lt_card = rows_of("lt_card").reshape(B, 2 * H)
        self._le_card = rows_of("le_card").reshape(B, 2 * H)
        # each pair's two card blocks' totals (the last prefix entry of the block)
        self._tot_card = self._le_card - self._le_card % (_PER_CARD + 1) + _PER_CARD
        self._valid = torch.as_tensor(np.stack([v for v, _ in per_board]), dtype=dt, device=dev)[row_board]
        # tree layout (shared): decisions and terminals in pre-order
        self.nodes = self.template.nodes
        self.decisions = [n.index for n in self.nodes if n.kind == DECISION]
        self.folds = [n.index for n in self.nodes if n.kind == FOLD_NODE]
        self.showdowns = [n.index for n in self.nodes if n.kind == SHOWDOWN_NODE]
        self.regrets: Dict[int, Any] = {}
        self.sigma: Dict[int, Any] = {}
        for i in self.decisions:
            A = len(self.nodes[i].children)
            self.regrets[i] = torch.zeros((A, B, H), dtype=dt, device=dev)
            self.sigma[i] = torch.full((A, B, H), 1.0 / A, dtype=dt, device=dev)
        self.iterations = 0
        self._root_value_sum = [torch.zeros((B, H), dtype=dt, device=dev) for _ in (0, 1)]
        self._root_value_count = [0, 0]

    # ------------------------------------------------------------------ terminals
    def _gather(self, x, idx):
        """``x[k, b, idx[b]]`` for ``x (K, B, n)`` and per-row indices ``idx (B, m)`` (expanded, not copied)."""
        return self.torch.gather(x, 2, idx[None].expand(x.shape[0], -1, -1))

    def _terminal_values(self, reach, player: int) -> Dict[int, Any]:
        """``player``'s values (chips, ``(B, H)``) at every fold and showdown node: one prefix pass for all folds and
        one for all showdowns (their opponent reaches stacked ``(K, B, H)``); the sums of SortedTerminal."""
        torch = self.torch
        opp = 1 - player
        B, H = self.B, 1326
        out: Dict[int, Any] = {}
        for idx, kind in ((self.folds, FOLD_NODE), (self.showdowns, SHOWDOWN_NODE)):
            if not idx:
                continue
            K = len(idx)
            pi = torch.stack([reach[i][opp] for i in idx], 0)                            # (K, B, H)
            zero = pi.new_zeros((K, B, 1))
            padded = torch.cat([pi, zero], 2)
            glob = torch.cat([zero, torch.cumsum(self._gather(padded, self._order), 2)], 2)  # (K, B, H + 1)
            per = self._gather(padded, self._card_lists).reshape(K, B, _CARDS, _PER_CARD)
            per = torch.cat([pi.new_zeros((K, B, _CARDS, 1)), torch.cumsum(per, 3)], 3).reshape(K, B, -1)
            # mass of the pairs compatible with each pair: all, minus the two card blocks, plus the pair itself
            total = glob[:, :, -1:] - self._gather(per, self._tot_card).reshape(K, B, 2, H).sum(2) + pi
            if kind == FOLD_NODE:
                mass = total
            else:
                weaker = self._gather(glob, self._lt) - self._gather(per, self._lt_card).reshape(K, B, 2, H).sum(2)
                weaker_eq = self._gather(glob, self._le) - self._gather(per, self._le_card).reshape(K, B, 2, H).sum(2) \
                    + pi
                mass = weaker - (total - weaker_eq)
            mass = mass * self._valid
            for k, i in enumerate(idx):
                n = self.nodes[i]
                c = self._contrib[:, i]                                   # (B, 2) chips per row
                if kind == FOLD_NODE:
                    amount = -c[:, player] if n.folder == player else c[:, opp]
                else:
                    amount = c[:, player]
                out[i] = mass[k] * amount[:, None]
        return out

    # ------------------------------------------------------------------ passes
    def _forward(self):
        reach: List[Any] = [None] * len(self.nodes)
        reach[0] = (self.ranges[:, 0], self.ranges[:, 1])
        for i in self.decisions:
            n = self.nodes[i]
            r, s = reach[i], self.sigma[i]
            for a, ch in enumerate(n.children):
                reach[ch] = (r[0] * s[a], r[1]) if n.player == 0 else (r[0], r[1] * s[a])
        return reach

    def _backward(self, reach, player: int, t: int):
        values: List[Any] = [None] * len(self.nodes)
        term = self._terminal_values(reach, player)
        for i, v in term.items():
            values[i] = v
        return self._decision_pass(values, player, t)

    def _decision_pass(self, values: List[Any], player: int, t: int) -> List[Any]:
        """Values of the decision nodes from their children's (bottom up, in place in ``values``) and ``player``'s
        regret update (CFR+ floor or DCFR discounting at iteration ``t``); the terminal and chance values are set."""
        torch = self.torch
        if self.algorithm == "dcfr":
            pos = t ** self.alpha / (t ** self.alpha + 1.0)
            neg = t ** self.beta / (t ** self.beta + 1.0)
        for i in reversed(self.decisions):
            n = self.nodes[i]
            child = torch.stack([values[c] for c in n.children], 0)           # (A, B, H)
            if n.player != player:
                values[i] = child.sum(0)
                continue
            v = (self.sigma[i] * child).sum(0)
            values[i] = v
            r = self.regrets[i]
            r += child
            r -= v[None]
            if self.algorithm == "cfr+":
                r.clamp_(min=0.0)
            else:
                r.mul_(torch.where(r > 0, pos, neg))
        return values

    def _regret_matching(self, player: int) -> None:
        torch = self.torch
        for i in self.decisions:
            if self.nodes[i].player != player:
                continue
            pos = self.regrets[i].clamp(min=0.0)
            tot = pos.sum(0, keepdim=True)
            A = pos.shape[0]
            self.sigma[i] = torch.where(tot > 0, pos / torch.where(tot > 0, tot, torch.ones_like(tot)), 1.0 / A)

    def iterate(self, count: int = 1) -> None:
        """Run ``count`` iterations (alternating: player 0's pass, then player 1's)."""
        for _ in range(count):
            self.iterations += 1
            t = self.iterations
            for p in (0, 1):
                values = self._backward(self._forward(), p, t)
                if t > self.skip:
                    self._root_value_sum[p] += values[0]
                    self._root_value_count[p] += 1
                self._regret_matching(p)

    def run(self, iterations: int) -> "MultiBoardRiverSolver":
        """Run until ``self.iterations == iterations``."""
        if iterations > self.iterations:
            self.iterate(iterations - self.iterations)
        return self

    def average_root_values(self):
        """Root cfvs ``(B, 2, 1326)`` (chips, torch on the device) averaged over the iterations after ``skip``; rows
        in the order of the trees, each tree's situations in their order."""
        if min(self._root_value_count) == 0:
            raise ValueError("no iterations after skip yet")
        return self.torch.stack([self._root_value_sum[p] / self._root_value_count[p] for p in (0, 1)], 1)



class MultiBoardLeafSolver(MultiBoardRiverSolver):
    """CFR+ / DCFR on many depth-limited turn or flop trees of one shape at once: the batched form of
    ``RangeSolver(tree, leaf_values=..., backend="torch")`` for the datagen's turn and flop situations.

    The trees are those of ``build_public_tree(..., depth_limit=True)`` from a turn or flop state: betting
    decisions and folds on the root board, chance nodes (the next card) whose children are all leaves, and
    all-in run-outs.  Per row (situation) the batch carries its tree's chips, its board's fold masses (the
    prefix sums of :class:`MultiBoardRiverSolver`), the card-removal masks of the chance children (the next card
    differs per board), the chance weight, and the all-in equity matrix of its board
    (:func:`~cfrkit.solvers.public.allin.allin_equity_matrix`, as ``RangeSolver``'s ``allin_equity`` default):
    the all-in nodes' values are ONE batched matrix product per pass (``torch.bmm`` over the trees, rows padded to
    the largest group).  The leaves of all chance nodes are evaluated together, ``(L, B, 1326)`` per pass:

    * ``leaf_values.row_evaluator(leaves, row_tree)`` when the leaf function has it
      (:class:`~cfrkit.value_nets.holdem.leaf_values.HoldemNetLeafValues`): ``leaves`` per tree its ``L`` leaf
      nodes (pre-order), ``row_tree (B,)`` each row's tree; it returns ``fn(r0, r1) -> (v0, v1)`` on the
      ``(L, B, 1326)`` reaches, chips (one net forward pass over every leaf and row);
    * otherwise the ``RangeSolver`` leaf interface ``leaf_values(leaves, r0, r1, backend)`` once per tree.

    In float64 the averaged root values equal ``RangeSolver``'s (torch backend, same leaf function) up to float
    rounding (tested).  Args as :class:`MultiBoardRiverSolver` plus ``leaf_values``.
    """

    _KINDS = frozenset({DECISION, FOLD_NODE, SHOWDOWN_NODE, CHANCE_NODE, LEAF})
    _TAKES = "hold'em trees"

    def __init__(self, trees: Sequence[PublicTree], ranges: Sequence[Any], leaf_values, algorithm: str = "cfr+",
                 skip: int = 0, alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0,
                 device: Optional[str] = None, dtype="auto"):
        super().__init__(trees, ranges, algorithm, skip, alpha, beta, gamma, device, dtype)
        torch = self.torch
        trees = list(trees)
        dev, dt = self.device, self.dtype
        H = 1326
        allin, skipped = find_allin_nodes(self.template, None)
        for t in trees[1:]:
            find_allin_nodes(t, None)   # the contribution check of every tree's all-in nodes (same layout)
        self._skipped = skipped
        self.folds = [i for i in self.folds if not skipped[i]]
        self.showdowns = [i for i in self.showdowns if not skipped[i]]
        self.chances = [n.index for n in self.nodes if n.kind == CHANCE_NODE and not skipped[n.index]
                        and n.index not in allin]
        root_board = tuple(self.template.root.board)
        for i in self.folds + self.showdowns:
            if len(self.nodes[i].board) != len(root_board):
                raise ValueError(f"{type(self).__name__} needs depth-limited turn/flop trees: terminal node {i} is not "
                             f"on the root board")
        for i in self.chances:
            if any(self.nodes[c].kind != LEAF for c in self.nodes[i].children):
                raise ValueError(f"{type(self).__name__} needs depth-limited trees (chance nodes with leaf children "
                                 f"only); node {i} has other children")
        rt = np.repeat(np.arange(len(trees)), self.group_sizes)
        self._row_tree = torch.as_tensor(rt, device=dev)
        # chance children: per row the card-removal mask of each child's card, and the chance weight
        self._chance_mask: Dict[int, Any] = {}
        cache: Dict[Tuple, Any] = {}
        for i in self.chances:
            cards = tuple(tuple(int(a) for a in t.nodes[i].actions) for t in trees)
            if cards not in cache:
                m = np.stack([np.stack([1.0 - t.pgame.hands_blocked_by(a) for a in t.nodes[i].actions])
                              for t in trees])                                               # (T, C, H)
                cache[cards] = torch.as_tensor(m, dtype=dt, device=dev)[self._row_tree].transpose(0, 1)  # (C, B, H)
            self._chance_mask[i] = cache[cards]
        self._chance_w = {i: torch.as_tensor(np.asarray([t.pgame.chance_weight(t.nodes[i].board) for t in trees])[rt],
                                             dtype=dt, device=dev)[:, None] for i in self.chances}
        # leaves: the chance nodes' children in pre-order (RangeSolver's leaf order)
        self.leaf_index = [c for i in self.chances for c in self.nodes[i].children]
        if sorted(self.leaf_index) != sorted(self.template.leaf_nodes):
            raise ValueError(f"{type(self).__name__}: leaves outside the chance nodes' children")
        self._leaf_rows = self._make_leaf_fn(trees, leaf_values, rt)
        # all-in run-outs: nodes grouped by board and run-outs as RangeSolver does, the same groups on every tree
        self._allin = []
        groups = []
        for t in trees:
            g: Dict[Any, List[int]] = {}
            for i in allin:
                g.setdefault((tuple(int(c) for c in t.nodes[i].board), tuple(allin_runouts(t, i))), []).append(i)
            groups.append(list(g.values()))
        if any(gr != groups[0] for gr in groups):
            raise ValueError(f"{type(self).__name__}: the trees' all-in run-outs group differently")
        sizes = self.group_sizes
        gmax = max(sizes)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        pad = np.full((len(trees), gmax), self.B, dtype=np.int64)     # row index per (tree, slot); B = a zero row
        for k, (s0, g) in enumerate(zip(starts, sizes)):
            pad[k, :g] = np.arange(s0, s0 + g)
        self._pad = torch.as_tensor(pad.reshape(-1), device=dev)
        flat = np.flatnonzero(pad.reshape(-1) < self.B)
        self._unpad = torch.as_tensor(flat[np.argsort(pad.reshape(-1)[flat])], device=dev)
        self._gmax = gmax
        for idx in groups[0]:
            mats = []
            for t in trees:
                pairs = np.flatnonzero(t.pgame.hand_mask(t.nodes[idx[0]].board))
                full = np.zeros((H, H))
                full[np.ix_(pairs, pairs)] = allin_equity_matrix(t, idx[0], pairs)
                mats.append(torch.as_tensor(full.T, dtype=dt, device=dev))
            self._allin.append((torch.stack(mats), idx))                   # (T, H, H) transposed matrices

    def _make_leaf_fn(self, trees, leaf_values, rt):
        leaves = [[t.nodes[i] for i in self.leaf_index] for t in trees]
        if not leaves[0]:
            return None
        if hasattr(leaf_values, "row_evaluator"):
            fn = leaf_values.row_evaluator(leaves, rt)
            return lambda r0, r1: tuple(v.to(device=self.device, dtype=self.dtype) for v in fn(r0, r1))
        if leaf_values is None:
            raise ValueError("the trees are depth-limited (have leaves): pass leaf_values")
        be = make_backend("torch", str(self.device), self.dtype)
        bounds = np.concatenate([[0], np.cumsum(self.group_sizes)])

        def per_tree(r0, r1):   # the RangeSolver interface, one call per tree
            out0, out1 = [], []
            for k, lv in enumerate(leaves):
                a, b = leaf_values(lv, r0[:, bounds[k]:bounds[k + 1]], r1[:, bounds[k]:bounds[k + 1]], be)
                out0.append(be.asarray(a))
                out1.append(be.asarray(b))
            return self.torch.cat(out0, 1), self.torch.cat(out1, 1)

        return per_tree

    def _allin_values(self, reach, player: int, out: List[Any]) -> None:
        """Values at the all-in nodes: contrib_p x M_board @ opponent reach, one ``bmm`` over the trees per group."""
        torch = self.torch
        opp = 1 - player
        T, g = len(self.group_sizes), self._gmax
        for mats, idx in self._allin:
            K = len(idx)
            pi = torch.stack([reach[i][opp] for i in idx], 0)                            # (K, B, H)
            pi = torch.cat([pi, pi.new_zeros((K, 1, pi.shape[2]))], 1)[:, self._pad]       # (K, T g, H)
            pi = pi.reshape(K, T, g, -1).transpose(0, 1).reshape(T, K * g, -1)
            eq = torch.bmm(pi, mats).reshape(T, K, g, -1).transpose(0, 1).reshape(K, T * g, -1)[:, self._unpad]
            for k, i in enumerate(idx):
                out[i] = eq[k] * self._contrib[:, i, player][:, None]

    def _forward(self):
        reach: List[Any] = [None] * len(self.nodes)
        reach[0] = (self.ranges[:, 0], self.ranges[:, 1])
        for n in self.nodes:
            i = n.index
            if self._skipped[i]:
                continue
            if n.kind == DECISION:
                r, s = reach[i], self.sigma[i]
                for a, ch in enumerate(n.children):
                    reach[ch] = (r[0] * s[a], r[1]) if n.player == 0 else (r[0], r[1] * s[a])
        return reach

    def _leaf_reach(self, reach):
        """Stacked reaches ``(L, B, H)`` of both players at the leaves (chance children, card removal applied)."""
        r0 = self.torch.cat([reach[i][0][None] * self._chance_mask[i] for i in self.chances], 0)
        r1 = self.torch.cat([reach[i][1][None] * self._chance_mask[i] for i in self.chances], 0)
        return r0, r1

    def _backward(self, reach, player: int, t: int, leaf=None):
        values: List[Any] = [None] * len(self.nodes)
        for i, v in self._terminal_values(reach, player).items():
            values[i] = v
        self._allin_values(reach, player, values)
        start = 0
        for i in self.chances:
            C = len(self.nodes[i].children)
            v = leaf[player][start:start + C]
            values[i] = (v * self._chance_mask[i]).sum(0) * self._chance_w[i]
            start += C
        return self._decision_pass(values, player, t)

    def iterate(self, count: int = 1) -> None:
        """Run ``count`` iterations (alternating: player 0's pass, then player 1's; leaf values once per pass)."""
        for _ in range(count):
            self.iterations += 1
            t = self.iterations
            for p in (0, 1):
                reach = self._forward()
                leaf = None
                if self._leaf_rows is not None:
                    leaf = self._leaf_rows(*self._leaf_reach(reach))
                values = self._backward(reach, p, t, leaf)
                if t > self.skip:
                    self._root_value_sum[p] += values[0]
                    self._root_value_count[p] += 1
                self._regret_matching(p)


def default_memory_budget(device) -> float:
    """Bytes a batch may take: 60% of the free memory of a CUDA device (``torch.cuda.mem_get_info``), 1 GiB on the
    CPU (the shared machines' per-process share)."""
    import torch

    dev = torch.device(device) if device is not None else torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if dev.type == "cuda":
        free, _ = torch.cuda.mem_get_info(dev)
        return 0.6 * free
    return float(1 << 30)


def _solve_batch(make, batch: List[int], out: list, iterations: int) -> None:
    """Solve the trees ``batch`` together (``make(batch)`` builds the solver) into ``out``; on a CUDA out-of-memory
    error, the two halves one after the other (the memory estimate is an estimate; a single tree that does not fit
    raises)."""
    import torch

    try:
        solver = make(batch).run(iterations)
        vals = solver.average_root_values().double().cpu().numpy()
    except torch.cuda.OutOfMemoryError:
        if len(batch) == 1:
            raise
        solver = None
        torch.cuda.empty_cache()
        half = len(batch) // 2
        _solve_batch(make, batch[:half], out, iterations)
        _solve_batch(make, batch[half:], out, iterations)
        return
    start = 0
    for j, size in zip(batch, solver.group_sizes):
        out[j] = vals[start:start + size]
        start += size


def plan_batches(trees: Sequence[PublicTree], ranges: Sequence[Any], device=None, dtype="auto",
                 max_rows: Optional[int] = None) -> List[List[int]]:
    """The batches :func:`solve_river_trees` / :func:`solve_leaf_trees` solve, in their order: lists of tree indices,
    the trees of one batch of equal :func:`tree_signature` (in input order) and together at most ``max_rows`` rows
    (situations; default: what :func:`default_memory_budget` of ``device`` holds, by :func:`rows_for_memory`; a tree
    with more rows than that is a batch alone).  A benchmark times each batch's set-up and iterations apart with it."""
    if len(trees) != len(ranges):
        raise ValueError(f"need one ranges array per tree, got {len(trees)} trees and {len(ranges)} ranges")
    by_sig: Dict[Tuple, List[int]] = {}
    for k, t in enumerate(trees):
        by_sig.setdefault(tree_signature(t), []).append(k)
    sizes = [1 if np.asarray(r).ndim == 2 else len(r) for r in ranges]
    batches: List[List[int]] = []
    for ks in by_sig.values():
        limit = max_rows
        if limit is None:
            dev, dt = _resolve_device_dtype(device, dtype)
            limit = rows_for_memory(trees[ks[0]], default_memory_budget(dev), dt.itemsize,
                                    rows_per_tree=float(np.mean([sizes[k] for k in ks])))
        batch: List[int] = []
        rows = 0
        for k in ks:
            if batch and rows + sizes[k] > limit:
                batches.append(batch)
                batch, rows = [], 0
            batch.append(k)
            rows += sizes[k]
        batches.append(batch)
    return batches


def _solve_trees(make, trees, ranges, iterations: int, skip: int, device, dtype, max_rows) -> List[np.ndarray]:
    if iterations <= skip:
        raise ValueError(f"need iterations > skip, got iterations={iterations}, skip={skip}")
    out: List[Optional[np.ndarray]] = [None] * len(trees)
    for batch in plan_batches(trees, ranges, device, dtype, max_rows):
        _solve_batch(make, batch, out, iterations)
    return out  # type: ignore[return-value]


def solve_river_trees(trees: Sequence[PublicTree], ranges: Sequence[Any], iterations: int, skip: int,
                      algorithm: str = "cfr+", device: Optional[str] = None, dtype="auto",
                      max_rows: Optional[int] = None) -> List[np.ndarray]:
    """Averaged root cfvs (chips, numpy ``(g, 2, 1326)`` per tree) of river trees of any shapes: trees grouped by
    :func:`tree_signature`, each group solved by :class:`MultiBoardRiverSolver` in batches of at most ``max_rows``
    rows (default: what :func:`default_memory_budget` holds, by :func:`rows_for_memory`; a batch that still runs out
    of CUDA memory is split in halves)."""
    def make(batch):
        return MultiBoardRiverSolver([trees[j] for j in batch], [ranges[j] for j in batch], algorithm, skip,
                                     device=device, dtype=dtype)

    return _solve_trees(make, trees, ranges, iterations, skip, device, dtype, max_rows)


def solve_leaf_trees(trees: Sequence[PublicTree], ranges: Sequence[Any], leaf_values, iterations: int, skip: int,
                     algorithm: str = "cfr+", device: Optional[str] = None, dtype="auto",
                     max_rows: Optional[int] = None) -> List[np.ndarray]:
    """:func:`solve_river_trees` for depth-limited turn / flop trees (:class:`MultiBoardLeafSolver`, ``leaf_values``
    at the leaves): averaged root cfvs, chips, numpy ``(g, 2, 1326)`` per tree, batches sized from the device's free
    memory (rows and all-in matrices, :func:`rows_for_memory`) or ``max_rows``."""
    def make(batch):
        return MultiBoardLeafSolver([trees[j] for j in batch], [ranges[j] for j in batch], leaf_values, algorithm,
                                    skip, device=device, dtype=dtype)

    return _solve_trees(make, trees, ranges, iterations, skip, device, dtype, max_rows)
