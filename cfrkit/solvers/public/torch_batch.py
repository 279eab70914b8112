"""Many river subgames in one torch solve: CFR+ / DCFR over range vectors, batched over boards and pots.

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
targets are the root cfvs averaged over the iterations after ``skip``).  River trees only: no chance nodes,
no leaves.  Rows take about ``bytes_per_row(tree)`` bytes (:func:`rows_for_memory` sizes a batch from a
memory budget, e.g. the free memory of a GPU).

Torch is imported lazily (an optional heavy dependency); this module holds no numpy-backend code.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.solvers.public.tree import DECISION, FOLD_NODE, SHOWDOWN_NODE, PublicTree

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
    """Peak device bytes one row (situation) of ``tree`` takes in :class:`MultiBoardRiverSolver`, 1326 hands:
    regrets and current strategy per action, the forward pass's reach per action, values per node, the temporaries
    of one kind of terminal (about 25 hand vectors per fold or showdown node: stacked reaches, prefix sums, the
    gathered card blocks), the backward pass's stacked children, and the int64 showdown index rows.  Calibrated
    on the CPU (peak RSS, 33-node tree, float32): 1.9-2.4 MB per row measured against 2.3 MB from this count."""
    H = 1326
    slots = sum(len(n.children) for n in tree.nodes if n.kind == DECISION)
    folds = sum(n.kind == FOLD_NODE for n in tree.nodes)
    showdowns = sum(n.kind == SHOWDOWN_NODE for n in tree.nodes)
    widest = max((len(n.children) for n in tree.nodes if n.kind == DECISION), default=1)
    vectors = 3 * slots + len(tree.nodes) + 25 * max(folds, showdowns) + 3 * widest
    return int((vectors * itemsize + 7 * 8) * H + _CARDS * _PER_CARD * 8)


def rows_for_memory(tree: PublicTree, budget_bytes: float, itemsize: int = 4) -> int:
    """Rows of ``tree`` that fit ``budget_bytes`` (at least 1)."""
    return max(1, int(budget_bytes // bytes_per_row(tree, itemsize)))


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
            if not kinds <= {DECISION, FOLD_NODE, SHOWDOWN_NODE}:
                raise ValueError(f"MultiBoardRiverSolver takes river trees (decisions and terminals only), "
                                 f"got nodes of kind {sorted(kinds - {DECISION, FOLD_NODE, SHOWDOWN_NODE})}")
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
        torch = self.torch
        values: List[Any] = [None] * len(self.nodes)
        term = self._terminal_values(reach, player)
        for i, v in term.items():
            values[i] = v
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


def default_memory_budget(device) -> float:
    """Bytes a batch may take: 60% of the free memory of a CUDA device (``torch.cuda.mem_get_info``), 1 GiB on the
    CPU (the shared machines' per-process share)."""
    import torch

    dev = torch.device(device) if device is not None else torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if dev.type == "cuda":
        free, _ = torch.cuda.mem_get_info(dev)
        return 0.6 * free
    return float(1 << 30)


def _solve_batch(trees, ranges, batch: List[int], out: list, iterations: int, skip: int, algorithm: str, device,
                 dtype) -> None:
    """Solve the trees ``batch`` together into ``out``; on a CUDA out-of-memory error, the two halves one after the
    other (the memory estimate is an estimate; a single tree that does not fit raises)."""
    import torch

    try:
        solver = MultiBoardRiverSolver([trees[j] for j in batch], [ranges[j] for j in batch], algorithm, skip,
                                       device=device, dtype=dtype).run(iterations)
        vals = solver.average_root_values().double().cpu().numpy()
    except torch.cuda.OutOfMemoryError:
        if len(batch) == 1:
            raise
        solver = None
        torch.cuda.empty_cache()
        half = len(batch) // 2
        _solve_batch(trees, ranges, batch[:half], out, iterations, skip, algorithm, device, dtype)
        _solve_batch(trees, ranges, batch[half:], out, iterations, skip, algorithm, device, dtype)
        return
    start = 0
    for j, size in zip(batch, solver.group_sizes):
        out[j] = vals[start:start + size]
        start += size


def solve_river_trees(trees: Sequence[PublicTree], ranges: Sequence[Any], iterations: int, skip: int,
                      algorithm: str = "cfr+", device: Optional[str] = None, dtype="auto",
                      max_rows: Optional[int] = None) -> List[np.ndarray]:
    """Averaged root cfvs (chips, numpy ``(g, 2, 1326)`` per tree) of river trees of any shapes: trees grouped by
    :func:`tree_signature`, each group solved by :class:`MultiBoardRiverSolver` in batches of at most ``max_rows``
    rows (default: what :func:`default_memory_budget` holds, by :func:`rows_for_memory`; a batch that still runs out
    of CUDA memory is split in halves)."""
    if iterations <= skip:
        raise ValueError(f"need iterations > skip, got iterations={iterations}, skip={skip}")
    if len(trees) != len(ranges):
        raise ValueError(f"need one ranges array per tree, got {len(trees)} trees and {len(ranges)} ranges")
    out: List[Optional[np.ndarray]] = [None] * len(trees)
    by_sig: Dict[Tuple, List[int]] = {}
    for k, t in enumerate(trees):
        by_sig.setdefault(tree_signature(t), []).append(k)
    for ks in by_sig.values():
        limit = max_rows
        if limit is None:
            dev, dt = _resolve_device_dtype(device, dtype)
            limit = rows_for_memory(trees[ks[0]], default_memory_budget(dev), dt.itemsize)
        batch: List[int] = []
        rows = 0
        for k in ks + [None]:
            g = 0 if k is None else (1 if np.asarray(ranges[k]).ndim == 2 else len(ranges[k]))
            if batch and (k is None or rows + g > limit):
                _solve_batch(trees, ranges, batch, out, iterations, skip, algorithm, device, dtype)
                batch, rows = [], 0
            if k is not None:
                batch.append(k)
                rows += g
    return out  # type: ignore[return-value]
