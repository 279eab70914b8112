"""Public trees of poker subgames and range-vectorised CFR+ / DCFR over them (numpy or torch).

A *public tree* has one node per public state of a subgame: betting decisions, board chance and
fold/showdown terminals, plus *leaves* where a depth-limited tree stops (the start of the next
betting round, after the board card).  Private information lives in vectors: every node carries,
per player, a reach vector over the ``H`` private hands (6 in Leduc, 1326 in hold'em) with a leading
batch dimension ``B``, so one solve handles ``B`` subgames that share the tree but differ in ranges.

Counterfactual values (cfvs) of player ``i`` at node ``n`` for hand ``h``:
``v_i(n)[h] = sum over opponent hands h' compatible with h (and the board) of
opponent_reach(n)[h'] * (expected chips of i from n)``, board cards weighted by their probability
given both hands.  Units: chips, net of the player's own contribution.

>>> from cfrkit.games import load
>>> from cfrkit.solvers.public.tree import build_public_tree, RangeSolver
>>> tree = build_public_tree(load("leduc"))
>>> solver = RangeSolver(tree, algorithm="cfr+")
>>> solver.run(1000)                                  # doctest: +SKIP
>>> solver.exploitability()                           # doctest: +SKIP

Algorithms match :class:`cfrkit.solvers.CFRSolver` exactly (same iterates up to rounding):
``cfr+`` (regret matching+, alternating updates, average weighted by the iteration number ``t``)
and ``dcfr`` (positive regrets times ``t^a/(t^a+1)``, negative times ``t^b/(t^b+1)``, average weight
``t^g``).  ``skip=k`` leaves the first ``k`` iterations out of the average (DeepStack);
``average="uniform"`` weights the remaining iterations equally.

Hold'em all-in run-outs (a called all-in, then only board cards to a showdown) are valued by default as one
terminal per all-in node, ``contrib x M @ opponent_reach`` with ``M`` the board's all-in equity matrix, one
matrix product per board and pass instead of one showdown per run-out board (``RangeSolver(allin_equity=...)``;
exact up to float summation order).
"""
from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.games.base import GameError
from cfrkit.policy import TabularPolicy
from cfrkit.solvers.public.allin import allin_equity_matrix, allin_runouts
from cfrkit.solvers.public.array_backend import make_backend
from cfrkit.solvers.public.public_tree import (  # noqa: F401  (re-exported: the tree types' old home)
    ALLIN_NODE, CHANCE_NODE, DECISION, FOLD_NODE, LEAF, SHOWDOWN_NODE, PublicNode, PublicTree, build_public_tree,
    root_ranges,
)
from cfrkit.solvers.public.terminal_values import make_terminal


# ====================================================================================== all-in run-outs
_ALLIN_DEVICE_CACHE: "OrderedDict[Any, Any]" = OrderedDict()
_ALLIN_DEVICE_CACHE_SIZE = 4


def allin_equity_supported(pgame) -> bool:
    """Whether :class:`RangeSolver`'s ``allin_equity`` can value ``pgame``'s all-in run-outs: 52-card hold'em
    (``hand_cards`` of shape ``(1326, 2)``, the equity kernel of
    :func:`~cfrkit.solvers.public.allin.allin_equity_matrix`)."""
    cards = getattr(pgame, "hand_cards", None)
    return cards is not None and np.asarray(cards).shape == (1326, 2) and hasattr(pgame, "strengths")


def find_allin_nodes(tree: PublicTree, allin_equity: Optional[bool]) -> Tuple[List[int], List[bool]]:
    """``(all-in nodes, skipped)``: the topmost chance nodes with no decision and no leaf below (an all-in call's
    run-out to showdown) when ``allin_equity`` applies (see ``RangeSolver``), as node indices of ``tree`` in
    pre-order, and ``skipped[n]`` (one bool per node of ``tree``) whether node ``n`` lies strictly below one of
    them.  Raises ``ValueError`` for an ``allin_equity`` other than True, False or None, or True on a game without
    52-card all-in equity."""
    nodes = tree.nodes
    skipped = [False] * len(nodes)
    if allin_equity is not None and not isinstance(allin_equity, (bool, np.bool_)):
        raise ValueError(f"allin_equity must be True, False or None, got {allin_equity!r}")
    supported = allin_equity_supported(tree.pgame)
    if allin_equity and not supported:
        raise ValueError(f"allin_equity needs a 52-card hold'em public game, not {type(tree.pgame).__name__}")
    if allin_equity is False or not supported:
        return [], skipped
    open_below = [False] * len(nodes)
    for n in reversed(nodes):  # children after parents in pre-order
        open_below[n.index] = n.kind in (DECISION, LEAF) or any(open_below[c] for c in n.children)
    is_allin = [False] * len(nodes)
    for n in nodes:
        if n.parent >= 0 and (skipped[n.parent] or is_allin[n.parent]):
            skipped[n.index] = True
        elif n.kind == CHANCE_NODE and not open_below[n.index]:
            if abs(n.contrib[0] - n.contrib[1]) > 1e-9:
                raise GameError(f"all-in run-out at node {n.index} with unequal contributions {n.contrib}")
            is_allin[n.index] = True
    return [i for i, a in enumerate(is_allin) if a], skipped


def _allin_groups(tree: PublicTree, allin: List[int], be) -> List[Tuple[Any, List[int]]]:
    """``[(M^T, nodes)]``: the all-in nodes grouped by their board and run-outs, with the transposed all-in equity
    matrix ``(1326, 1326)`` of each group (0 for hands touching the node's board) in the backend's dtype on its
    device.  The matrices come from :func:`~cfrkit.solvers.public.allin.allin_equity_matrix` (exact
    enumeration of the node's run-outs, with the tree's chance probabilities) and stay cached on the device for the
    last few boards, so a datagen solving many groups of one board builds and moves each matrix once."""
    if not allin:
        return []
    groups: Dict[Any, List[int]] = {}
    for i in allin:
        n = tree.nodes[i]
        groups.setdefault((tuple(int(c) for c in n.board), tuple(allin_runouts(tree, i))), []).append(i)
    out = []
    H = tree.num_hands
    hands = hash(np.ascontiguousarray(tree.pgame.hand_cards, dtype=np.int64).tobytes())  # the pairs' order
    for key, idx in groups.items():
        ckey = (key, hands, be.name, str(be.device), str(be.dtype))
        mt = _ALLIN_DEVICE_CACHE.get(ckey)
        if mt is None:
            pairs = np.flatnonzero(tree.pgame.hand_mask(key[0]))
            m = allin_equity_matrix(tree, idx[0], pairs)
            full = np.zeros((H, H))
            full[np.ix_(pairs, pairs)] = m
            mt = be.asarray(np.ascontiguousarray(full.T))
            _ALLIN_DEVICE_CACHE[ckey] = mt
            while len(_ALLIN_DEVICE_CACHE) > _ALLIN_DEVICE_CACHE_SIZE:
                _ALLIN_DEVICE_CACHE.popitem(last=False)
        else:
            _ALLIN_DEVICE_CACHE.move_to_end(ckey)
        out.append((mt, idx))
    return out


# ============================================================================================ solver
LeafValueFn = Callable[[List[PublicNode], Any, Any, Any], Tuple[Any, Any]]


class RangeSolver:
    """CFR+ / DCFR over a public tree with range vectors (numpy or torch backend).

    Args:
        tree: a :class:`PublicTree`.
        ranges: initial reach of each player: ``(2, H)`` or ``(B, 2, H)`` (default: uniform ``1/H``
            over hands not blocked by the board).  Reach includes chance's deal probability and the
            player's own earlier actions; it need not sum to 1.
        algorithm: ``cfr+`` or ``dcfr`` (``alpha``, ``beta``, ``gamma``).
        skip: the first ``skip`` iterations are left out of the average strategy.
        average: ``"linear"`` (CFR+'s weight ``t``; DCFR uses ``t^gamma``) or ``"uniform"``.
        alternating: alternate the players' updates (default) or update both at once.
        leaf_values: ``fn(leaf_nodes, reach0, reach1, backend) -> (values0, values1)`` with arrays of shape
            ``(L, B, H)``; required when the tree has leaves.
        gadget: ``(player, terminate_cfvs)`` re-solves with the CFR-D gadget: ``player``'s root range is
            chosen by the gadget (per hand: follow into the subgame or take ``terminate_cfvs``, shape
            ``(B, H)`` or ``(H,)``) and ``ranges[player]`` is ignored.
        backend: ``"numpy"`` or ``"torch"`` (``device`` defaults to cuda when available).
        terminal_kernel: ``"auto"`` (dense matrices for small games, sorted prefix sums beyond) or
            ``"cards"`` (the hold'em Cython kernels of :mod:`cfrkit.cards`, numpy backend).
        track_node_values: also accumulate both players' cfvs at every node, weighted like the average
            strategy (:meth:`average_node_values`; what continual re-solving carries between decisions).
        allin_equity: value every *all-in run-out* (a chance node below which no decision and no leaf is
            left: a player is all in and the rest of the board is dealt to a showdown) as ONE terminal:
            player ``p``'s cfv of hand ``h`` there is ``contrib_p x sum_o M[h, o] x opponent_reach(o)`` (chips)
            with ``M`` the all-in equity matrix of the node's board
            (:func:`~cfrkit.solvers.public.allin.allin_equity_matrix`: P(h wins) - P(o wins) over
            every run-out, with card removal), one dense ``(B K, 1326) x (1326, 1326)`` product per pass for
            the ``K`` all-in nodes of a board (a matmul on the device with torch).  The run-out subtrees are
            then never visited (no terminal kernels per run-out board, no set-up for them).  Exact: the same
            values, regrets, strategies and averaged root values as walking the run-outs, up to the order of
            float summation.  ``None`` (default): on for 52-card hold'em trees (``hand_cards`` of shape
            ``(1326, 2)``) that have all-in run-outs, off otherwise; ``True`` on another game is an error.
            With it on, the per-node outputs (:meth:`node_values`, :meth:`average_node_values`, the reach of
            :meth:`_forward`) hold ``None`` at the nodes strictly below an all-in node (run-out chance nodes
            and their showdowns: nothing is decided there); ``False`` walks the run-outs and fills them.
    """

    def __init__(self, tree: PublicTree, ranges=None, algorithm: str = "cfr+", skip: int = 0,
                 average: str = "linear", alternating: bool = True, leaf_values: Optional[LeafValueFn] = None,
                 gadget: Optional[Tuple[int, Any]] = None, alpha: float = 1.5, beta: float = 0.0,
                 gamma: float = 2.0, backend: str = "numpy", device: Optional[str] = None, dtype=None,
                 terminal_kernel: str = "auto", track_node_values: bool = False,
                 allin_equity: Optional[bool] = None):
        if algorithm not in ("cfr+", "dcfr"):
            raise ValueError(f"unknown algorithm {algorithm!r}; choose 'cfr+' or 'dcfr'")
        if average not in ("linear", "uniform"):
            raise ValueError(f"average must be 'linear' or 'uniform', got {average!r}")
        if skip < 0:
            raise ValueError(f"skip must be >= 0, got {skip}")
        if tree.leaf_nodes and leaf_values is None:
            raise ValueError("the tree is depth-limited (has leaves): pass leaf_values")
        self.tree = tree
        self.pgame = tree.pgame
        self.be = be = make_backend(backend, device, dtype)
        self.algorithm, self.skip, self.average, self.alternating = algorithm, int(skip), average, bool(alternating)
        self.alpha, self.beta, self.gamma = float(alpha), float(beta), float(gamma)
        self.leaf_values = leaf_values
        H = tree.num_hands
        root_mask = self.pgame.hand_mask(tree.root.board)
        if ranges is None or isinstance(ranges, np.ndarray) or not hasattr(ranges, "shape"):
            ranges = root_ranges(tree, ranges, batched=True)
            ranges = (ranges[None] if ranges.ndim == 2 else ranges) * root_mask
        self.ranges = be.asarray(ranges)
        self.B = int(self.ranges.shape[0])
        self.gadget_player = -1
        if gadget is not None:
            gp, cfvs = gadget
            cfvs = be.asarray(cfvs)
            if cfvs.ndim == 1:
                cfvs = cfvs[None].repeat(self.B, 1) if be.name == "numpy" else cfvs[None].expand(self.B, H).clone()
            if tuple(cfvs.shape) != (self.B, H):
                raise ValueError(f"gadget cfvs must have shape ({H},) or ({self.B}, {H}), got {tuple(cfvs.shape)}")
            self.gadget_player = int(gp)
            self.gadget_values = cfvs
            self.gadget_regrets = be.zeros((self.B, 2, H))
            self._root_mask = be.asarray(root_mask)
        # all-in run-outs valued by equity matrices (see allin_equity): their subtrees are skipped
        self.allin_nodes, skipped = find_allin_nodes(tree, allin_equity)
        self.allin_equity = bool(self.allin_nodes)
        self._active = [n for n in tree.nodes if not skipped[n.index]]  # pre-order, run-out subtrees left out
        allin_set = set(self.allin_nodes)
        self._role = [ALLIN_NODE if n.index in allin_set else n.kind for n in tree.nodes]
        self._allin_groups: List[Tuple[Any, List[int]]] = _allin_groups(tree, self.allin_nodes, be)
        # static per-node data
        self._masks: Dict[int, Any] = {}
        self._weights: Dict[int, float] = {}
        self._terminals: Dict[Tuple[int, ...], Any] = {}
        for n in self._active:
            if self._role[n.index] == CHANCE_NODE:
                self._weights[n.index] = self.pgame.chance_weight(n.board)
                for c, ch in zip(n.actions, n.children):
                    self._masks[ch] = be.asarray(1.0 - self.pgame.hands_blocked_by(c))
            elif n.kind in (FOLD_NODE, SHOWDOWN_NODE) and n.board not in self._terminals:
                self._terminals[n.board] = make_terminal(self.pgame.hand_cards, n.board, self.pgame.strengths(n.board), be,
                                                        kernel=terminal_kernel)
        self._terminal_groups: Dict[Tuple[Tuple[int, ...], str], List[int]] = {}
        for n in self._active:
            if n.kind in (FOLD_NODE, SHOWDOWN_NODE):
                self._terminal_groups.setdefault((n.board, n.kind), []).append(n.index)
        self.regrets: Dict[int, Any] = {}
        self.strategy_sum: Dict[int, Any] = {}
        self.sigma: Dict[int, Any] = {}
        for i in tree.decision_nodes:
            A = len(tree.nodes[i].actions)
            self.regrets[i] = be.zeros((A, self.B, H))
            self.strategy_sum[i] = be.zeros((A, self.B, H))
            self.sigma[i] = be.full((A, self.B, H), 1.0 / A)
        self.iterations = 0
        self.seconds = 0.0
        self._root_value_sum = [be.zeros((self.B, H)), be.zeros((self.B, H))]
        self._root_value_count = [0, 0]
        self.track_node_values = bool(track_node_values)
        self._node_value_sum: List[List[Any]] = [[None] * len(tree.nodes), [None] * len(tree.nodes)]
        self._node_value_weight = [0.0, 0.0]

    # ------------------------------------------------------------------ passes
    def _root_reach(self):
        r0, r1 = self.ranges[:, 0], self.ranges[:, 1]
        if self.gadget_player >= 0:
            follow = self._gadget_follow()
            if self.gadget_player == 0:
                r0 = follow
            else:
                r1 = follow
        return r0, r1

    def _gadget_follow(self):
        be = self.be
        pos = be.relu(self.gadget_regrets)
        tot = pos[:, 0] + pos[:, 1]
        follow = be.where(tot > 0, pos[:, 0] / be.where(tot > 0, tot, 1.0), 0.5)
        return follow * self._root_mask

    def _forward(self, strategies: Dict[int, Any]):
        """Reach of both players at every node under ``strategies``: list of (reach0, reach1) (None below all-in nodes)."""
        nodes = self.tree.nodes
        reach: List[Any] = [None] * len(nodes)
        reach[0] = self._root_reach()
        role = self._role
        for n in self._active:
            kind = role[n.index]
            if kind == DECISION:
                r = reach[n.index]
                s = strategies[n.index]
                p = n.player
                for a, ch in enumerate(n.children):
                    if p == 0:
                        reach[ch] = (r[0] * s[a], r[1])
                    else:
                        reach[ch] = (r[0], r[1] * s[a])
            elif kind == CHANCE_NODE:
                r = reach[n.index]
                for ch in n.children:
                    m = self._masks[ch]
                    reach[ch] = (r[0] * m, r[1] * m)
        return reach

    def _leaf_values(self, reach):
        if not self.tree.leaf_nodes:
            return {}
        be = self.be
        leaves = [self.tree.nodes[i] for i in self.tree.leaf_nodes]
        r0 = be.stack([reach[i][0] for i in self.tree.leaf_nodes], 0)
        r1 = be.stack([reach[i][1] for i in self.tree.leaf_nodes], 0)
        v0, v1 = self.leaf_values(leaves, r0, r1, be)
        return {i: (v0[k], v1[k]) for k, i in enumerate(self.tree.leaf_nodes)}

    def _terminal_values(self, reach, player: int) -> Dict[int, Any]:
        """Values of ``player`` at every fold/showdown node (one kernel call per board and kind) and every all-in
        node (one equity-matrix product per board)."""
        be = self.be
        opp = 1 - player
        out: Dict[int, Any] = {}
        for (board, kind), idx in self._terminal_groups.items():
            term = self._terminals[board]
            stacked = be.concat([reach[i][opp] for i in idx], 0) if len(idx) > 1 else reach[idx[0]][opp]
            mass = term.compatible_mass(stacked) if kind == FOLD_NODE else term.showdown(stacked)
            for k, i in enumerate(idx):
                n = self.tree.nodes[i]
                if kind == FOLD_NODE:
                    amount = -n.contrib[player] if n.folder == player else n.contrib[1 - player]
                else:
                    amount = n.contrib[player]
                out[i] = mass[k * self.B:(k + 1) * self.B] * amount
        # all-in run-outs: contrib_p x M @ opponent reach, every all-in node of a board in one matrix product
        for matrix_t, idx in self._allin_groups:
            stacked = be.concat([reach[i][opp] for i in idx], 0) if len(idx) > 1 else reach[idx[0]][opp]
            eq = be.matmul(stacked, matrix_t)
            for k, i in enumerate(idx):
                out[i] = eq[k * self.B:(k + 1) * self.B] * self.tree.nodes[i].contrib[player]
        return out

    def _backward(self, reach, player: int, strategies: Dict[int, Any], leaf_vals, update: Optional[Callable] = None,
                  best_response: bool = False):
        """Cfvs of ``player`` at every node (list; None below all-in nodes); ``update(node, values_per_action,
        value)`` at own nodes."""
        be = self.be
        nodes = self.tree.nodes
        values: List[Any] = [None] * len(nodes)
        terminal_values = self._terminal_values(reach, player)
        role = self._role
        for n in reversed(self._active):
            i = n.index
            kind = role[i]
            if kind == DECISION:
                child_vals = be.stack([values[c] for c in n.children], 0)  # (A, B, H)
                if n.player == player:
                    if best_response:
                        values[i] = be.amax(child_vals, 0)
                    else:
                        v = be.sum(strategies[i] * child_vals, 0)
                        values[i] = v
                        if update is not None:
                            update(n, child_vals, v, reach[i][player])
                else:
                    values[i] = be.sum(child_vals, 0)
            elif kind == CHANCE_NODE:
                acc = None
                for ch in n.children:
                    term = values[ch] * self._masks[ch]
                    acc = term if acc is None else acc + term
                values[i] = acc * self._weights[i]
            elif kind == LEAF:
                values[i] = leaf_vals[i][player]
            else:
                values[i] = terminal_values[i]
        return values

    # ------------------------------------------------------------------ CFR
    def _avg_weight(self, t: int) -> float:
        if t <= self.skip:
            return 0.0
        if self.average == "uniform":
            return 1.0
        if self.algorithm == "dcfr":
            return float(t) ** self.gamma
        return float(t)

    def _update_fn(self, t: int):
        be = self.be
        w = self._avg_weight(t)
        if self.algorithm == "dcfr":
            pos_scale = t ** self.alpha / (t ** self.alpha + 1.0)
            neg_scale = t ** self.beta / (t ** self.beta + 1.0)

        def update(n: PublicNode, child_vals, v, own_reach):
            i = n.index
            sigma = self.sigma[i]
            if w > 0:
                self.strategy_sum[i] += (own_reach * w)[None] * sigma
            r = self.regrets[i]
            r += child_vals
            r -= v[None]
            if self.algorithm == "cfr+":
                self.regrets[i] = be.relu(r)
            else:
                self.regrets[i] = r * be.where(r > 0, pos_scale, neg_scale)

        return update

    def _regret_matching(self, player: int) -> None:
        be = self.be
        for i in self.tree.decision_nodes:
            if self.tree.nodes[i].player != player:
                continue
            pos = be.relu(self.regrets[i])
            tot = be.sum(pos, 0, keepdims=True)
            A = pos.shape[0]
            self.sigma[i] = be.where(tot > 0, pos / be.where(tot > 0, tot, 1.0), 1.0 / A)

    def _update_gadget(self, root_values) -> None:
        be = self.be
        follow = self._gadget_follow()
        vf, vt = root_values, self.gadget_values
        g = follow * vf + (1 - follow) * vt
        regrets = self.gadget_regrets + be.stack([vf - g, vt - g], 1)
        self.gadget_regrets = be.relu(regrets)

    def iterate(self, count: int = 1) -> None:
        """Run ``count`` iterations."""
        start = time.perf_counter()
        for _ in range(count):
            self.iterations += 1
            t = self.iterations
            update = self._update_fn(t)
            players = (0, 1) if self.alternating else (None,)
            for p in players:
                reach = self._forward(self.sigma)
                leaf_vals = self._leaf_values(reach)
                who = (0, 1) if p is None else (p,)
                for q in who:
                    values = self._backward(reach, q, self.sigma, leaf_vals, update)
                    if q == self.gadget_player:
                        self._update_gadget(values[0])
                    if t > self.skip:
                        self._root_value_sum[q] = self._root_value_sum[q] + values[0]
                        self._root_value_count[q] += 1
                    w = self._avg_weight(t)
                    if self.track_node_values and w > 0:
                        acc = self._node_value_sum[q]
                        for i, v in enumerate(values):
                            if v is not None:
                                acc[i] = v * w if acc[i] is None else acc[i] + v * w
                        self._node_value_weight[q] += w
                for q in who:
                    self._regret_matching(q)
        self.seconds += time.perf_counter() - start

    def run(self, iterations: int, progress: bool = False, callback: Optional[Callable[["RangeSolver"], None]] = None,
            callback_every: int = 0) -> "RangeSolver":
        """Run until ``self.iterations == iterations``; optional tqdm bar and periodic callback."""
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=iterations, initial=self.iterations, desc=f"public-tree {self.algorithm}", unit="it")
        while self.iterations < iterations:
            self.iterate(1)
            if bar is not None:
                bar.update(1)
            if callback is not None and callback_every > 0 and self.iterations % callback_every == 0:
                callback(self)
        if bar is not None:
            bar.close()
        return self

    # ------------------------------------------------------------------ results
    def average_strategy(self) -> Dict[int, Any]:
        """Average strategy per decision node in the solver's layout ``(A, B, H)`` (uniform where never reached)."""
        be = self.be
        out = {}
        for i in self.tree.decision_nodes:
            s = self.strategy_sum[i]
            tot = be.sum(s, 0, keepdims=True)
            A = s.shape[0]
            if self.iterations <= self.skip:
                out[i] = self.sigma[i]
            else:
                out[i] = be.where(tot > 0, s / be.where(tot > 0, tot, 1.0), 1.0 / A)
        return out

    def average_root_values(self):
        """Root cfvs of both players ``(B, 2, H)`` averaged over the iterations after ``skip`` (DeepStack's targets).

        Each iteration contributes the cfvs of the current strategies.  Unlike the cfvs of the average
        strategy, these are well defined for hands with (nearly) zero reach, whose average strategy is
        barely trained: by the regret bound their average approaches the best-response value against
        the opponent's iterates.
        """
        if min(self._root_value_count) == 0:
            raise ValueError("no iterations after skip yet")
        be = self.be
        return be.stack([self._root_value_sum[p] / self._root_value_count[p] for p in (0, 1)], 1)

    def average_node_values(self, player: int) -> List[Any]:
        """Cfvs ``(B, H)`` of ``player`` at every node, averaged over the iterations with the average strategy's weights.

        Needs ``track_node_values=True``.  Each iteration contributes the cfvs of the current strategies
        (computed with the opponent's reach of that iteration), so the average goes with the players'
        average reach: at a node after the re-solver's own actions it is the opponent's value for the
        re-solver's average-strategy reach there.  DeepStack carries these values between decisions.
        """
        if not self.track_node_values:
            raise ValueError("average_node_values needs RangeSolver(..., track_node_values=True)")
        if self._node_value_weight[player] <= 0:
            raise ValueError("no iterations after skip yet")
        w = self._node_value_weight[player]
        return [None if v is None else v / w for v in self._node_value_sum[player]]

    def current_strategy(self) -> Dict[int, Any]:
        return dict(self.sigma)

    def gadget_range(self):
        """The gadget player's root range (current follow probabilities), or None."""
        return self._gadget_follow() if self.gadget_player >= 0 else None

    def node_values(self, strategies: Optional[Dict[int, Any]] = None, root_ranges=None):
        """Cfvs of both players at every node under ``strategies`` (default: the average strategy).

        Returns a list (per node) of ``(values0, values1)`` and the reach list.  With a gadget the root
        reach of the gadget player is its current follow range unless ``root_ranges`` is given.
        """
        strategies = self.average_strategy() if strategies is None else strategies
        reach = self._forward_with_root(strategies, root_ranges)
        leaf_vals = self._leaf_values(reach)
        v0 = self._backward(reach, 0, strategies, leaf_vals)
        v1 = self._backward(reach, 1, strategies, leaf_vals)
        return [(a, b) for a, b in zip(v0, v1)], reach

    def _forward_with_root(self, strategies, root_ranges):
        if root_ranges is None:
            return self._forward(strategies)
        saved = self.ranges, self.gadget_player
        self.ranges, self.gadget_player = self.be.asarray(root_ranges), -1
        try:
            return self._forward(strategies)
        finally:
            self.ranges, self.gadget_player = saved

    def best_response_values(self, player: int, strategies: Optional[Dict[int, Any]] = None, root_ranges=None):
        """Root cfvs ``(B, H)`` of ``player``'s best response to the opponent's ``strategies`` (default: average)."""
        return self.best_response_node_values(player, strategies, root_ranges)[0]

    def best_response_node_values(self, player: int, strategies: Optional[Dict[int, Any]] = None,
                                  root_ranges=None) -> List[Any]:
        """Cfvs ``(B, H)`` (chips) of ``player``'s best response to the opponent's ``strategies`` (default: the
        average strategy; the solver's layout ``(A, B, H)``) at every node (None below all-in nodes): what an
        opponent can get at each node, the CFR-D gadget's carry between re-solves.  With a gadget the root reach
        of the gadget player is its current follow range unless ``root_ranges`` is given."""
        strategies = self.average_strategy() if strategies is None else strategies
        reach = self._forward_with_root(strategies, root_ranges)
        leaf_vals = self._leaf_values(reach)
        return self._backward(reach, player, strategies, leaf_vals, best_response=True)

    def root_ranges(self):
        r0, r1 = self._root_reach()
        return self.be.stack([r0, r1], 1)

    def exploitability(self, strategies: Optional[Dict[int, Any]] = None) -> np.ndarray:
        """Per batch element: ``(BR_0 + BR_1) / 2`` in chips, with the root ranges as the deal distribution.

        Each player's best-response value is ``sum_h range_i(h) * brcfv_i(h) / Z`` with ``Z`` the mass
        of compatible hand pairs, so for the full game from the root this is the exploitability of the
        strategy profile (chips).  With the root ranges fixed, it measures the subgame profile.
        """
        be = self.be
        strategies = self.average_strategy() if strategies is None else strategies
        ranges = self.ranges if self.gadget_player < 0 else self.root_ranges()
        total = 0.0
        z = self.pair_mass(ranges)
        for p in (0, 1):
            br = self.best_response_values(p, strategies, root_ranges=ranges)
            total = total + be.to_numpy(be.sum(ranges[:, p] * br, 1))
        return total / 2.0 / z

    def pair_mass(self, ranges) -> np.ndarray:
        """``Z``: total reach mass of compatible (non-overlapping, board-free) hand pairs, per batch element."""
        term = self._terminals.get(self.tree.root.board)
        if term is None:
            term = make_terminal(self.pgame.hand_cards, self.tree.root.board,
                                 self.pgame.strengths(self.tree.root.board), self.be)
            self._terminals[self.tree.root.board] = term
        m = term.compatible_mass(ranges[:, 1])
        return self.be.to_numpy(self.be.sum(ranges[:, 0] * m, 1))

    def root_values(self, strategies=None) -> np.ndarray:
        """Expected chips of each player at the root, ``(B, 2)``, under ``strategies`` (default: average)."""
        vals, reach = self.node_values(strategies)
        ranges = self.root_ranges()
        z = self.pair_mass(ranges)
        be = self.be
        return np.stack([be.to_numpy(be.sum(ranges[:, p] * vals[0][p], 1)) / z for p in (0, 1)], 1)

    def to_numpy_strategy(self, strategies: Optional[Dict[int, Any]] = None) -> Dict[int, np.ndarray]:
        """Strategies (default: average) as numpy arrays ``(B, A, H)`` per decision node."""
        strategies = self.average_strategy() if strategies is None else strategies
        return {i: np.ascontiguousarray(self.be.to_numpy(s).transpose(1, 0, 2)) for i, s in strategies.items()}

    def from_numpy_strategy(self, strategies: Dict[int, np.ndarray]) -> Dict[int, Any]:
        """Inverse of :meth:`to_numpy_strategy`: ``(B, A, H)`` arrays -> the solver's layout."""
        return {i: self.be.asarray(np.asarray(s).transpose(1, 0, 2)) for i, s in strategies.items()}


def strategy_to_policy(tree: PublicTree, strategies: Dict[int, np.ndarray], batch_index: int = 0,
                       players: Sequence[int] = (0, 1), policy=None):
    """Write a public-tree strategy (for games with information-state keys) into a TabularPolicy."""
    pgame = tree.pgame
    if not hasattr(pgame, "infoset_key"):
        raise GameError(f"{type(pgame).__name__} has no information-state keys")
    if policy is None:
        policy = TabularPolicy(pgame.game)
    for i, s in strategies.items():
        n = tree.nodes[i]
        if n.player not in players:
            continue
        s = np.asarray(s)[batch_index]
        mask = pgame.hand_mask(n.board)
        for h in range(tree.num_hands):
            if mask[h] == 0:
                continue
            key = pgame.infoset_key(n.state, n.player, h)
            policy.table[key] = {int(a): float(s[k, h]) for k, a in enumerate(n.actions)}
    return policy
