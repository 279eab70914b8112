"""Compiled (Cython) range-vectorised CFR+ / DCFR for public trees without leaves: river, turn and flop subgames.

The fast path for hold'em river subgames: :class:`FlatRangeSolver` flattens a :class:`PublicTree`
(breadth-first, contiguous children), keeps only the hands that do not touch the board, sorted by
showdown strength, and runs whole solves inside :mod:`cfrkit._kernels.range_cfr` without Python in
the loop.

Turn subgames (one chance level: the river card, e.g. :class:`HoldemPublicGame` trees from a turn state)
run in the same kernel: chance nodes weigh their children by the card probability, each child's hand
mask (hands holding the dealt card) multiplies reach down and values up, and every river board has its
own strength order for showdowns (the kernel gathers the opponent's reach into it and scatters the
values back).  Flop subgames (two chance levels: turn and river cards) run the same way: chance children
may be chance nodes again, and run-outs dealt in either order share one showdown order.  Depth-limited
trees (leaves) raise a GameError.  Iterates equal :class:`~cfrkit.solvers.public.tree.RangeSolver`'s (same algorithms,
parameters and averaging) up to rounding; exploitability is computed in the kernel too (float64).

Memory and threads (docs/range_solver.md): per-action arrays are the regrets and strategy sums only
(the current strategy is regret-matched on the fly), terminal nodes keep no rows, ``dtype="float32"``
halves everything; ``threads=2`` runs the nodes of each tree level on OpenMP threads (same iterates);
:meth:`FlatRangeSolver.lock` fixes chosen nodes' strategies (node locking).

Stopping: :meth:`FlatRangeSolver.solve` and :func:`solve_many` stop each spot at the first
exploitability check (every ``check_every`` iterations, inside the kernel) that is at most
``target_fraction`` of the pot at the subgame root.

DCFR defaults (``alpha=1.5, beta=0, gamma=2``, the same as ``RangeSolver``'s): after iteration
``t`` positive regrets are multiplied by ``t^1.5 / (t^1.5 + 1)``, negative ones by ``1/2``, and
iteration ``t`` weighs ``t^2`` in the average strategy.  On the benchmark river spot ``gamma=3``
needs about 3% fewer iterations to 0.1% of the pot and ``beta=0.5`` about 15% more
(``benchmarks/RESULTS.md``).
"""
from __future__ import annotations

import time
import weakref
from dataclasses import dataclass
from typing import ClassVar, Dict, List, Optional

import numpy as np

from cfrkit._kernels import default_threads
from cfrkit.games.base import GameError
from cfrkit.solvers.public.public_tree import CHANCE_NODE, DECISION, FOLD_NODE, LEAF, SHOWDOWN_NODE, PublicTree

DEFAULT_DCFR = {"alpha": 1.5, "beta": 0.0, "gamma": 2.0}
# kernel modes: CFR+, DCFR (alpha, beta, gamma), postflop-solver's DCFR (fixed weights, see FlatRangeSolver)
ALGORITHMS = {"cfr+": 0, "dcfr": 1, "dcfr-postflop": 2}


def kernel_module(dtype=np.float64):
    """The kernel build for the storage type: float64 (``range_cfr``) or float32 (``range_cfr32``)."""
    if np.dtype(dtype) == np.float32:
        from cfrkit._kernels import range_cfr32

        return range_cfr32
    from cfrkit._kernels import range_cfr

    return range_cfr


def spread_cards(hands: np.ndarray, strengths: np.ndarray, hand_cards: np.ndarray) -> np.ndarray:
    """Reorder hands within each run of equal strength so that neighbours rarely share a card.

    The showdown sweep adds every hand's mass to per-card sums in this order; consecutive updates
    of the same card form a serial dependency chain, spread-out cards let them overlap.  Only the
    order inside a run of equal strength changes, which the showdown values do not depend on.
    """
    out: List[int] = []
    last_use = np.full(52, -10**9)
    i = 0
    while i < len(hands):
        j = i
        while j < len(hands) and strengths[hands[j]] == strengths[hands[i]]:
            j += 1
        todo = np.asarray(hands[i:j])
        cards = hand_cards[todo]
        left = np.ones(len(todo), bool)
        for _ in range(len(todo)):
            # least recently used cards first; ties keep the original order (argmax takes the first)
            gap = np.where(left, len(out) - last_use[cards].max(1), -1)
            m = int(np.argmax(gap))
            left[m] = False
            last_use[cards[m]] = len(out)
            out.append(int(todo[m]))
        i = j
    return np.asarray(out, dtype=hands.dtype)


_kernel = kernel_module  # old private name (benchmarks)


class FlatTree:
    """Flat layout of a river or turn public tree for the kernel, shared by every spot on that tree.

    Nodes are renumbered breadth-first (children contiguous, after their parent): ``node_type``
    (0 decision, 1 fold, 2 showdown), ``node_player``, ``child_start``, ``num_children``,
    ``node_slot`` (first row of the node's actions), ``amount[n, p]`` (terminal payoff multiplier).
    ``hands[k]``: pair index of kernel hand ``k`` (live hands sorted by strength), with ``strength``
    and ``hand_cards``.  Chance nodes (type 3, turn trees): ``amount[n, 0]`` = card probability,
    ``node_mask``/``masks`` the children's hand masks; ``node_board`` numbers the showdown boards other
    than the root's, whose live hands in strength order are ``board_perm`` (kernel hand indices) with
    runs ``board_groups`` (see the kernel docstring).  Build it once per tree with :meth:`of` (cached).
    """

    _cache: ClassVar[weakref.WeakKeyDictionary] = weakref.WeakKeyDictionary()  # PublicTree -> FlatTree

    @classmethod
    def of(cls, tree: PublicTree) -> "FlatTree":
        """The (cached) layout of ``tree``."""
        flat = cls._cache.get(tree)
        if flat is None:
            flat = cls._cache[tree] = cls(tree)
        return flat

    def __init__(self, tree: PublicTree):
        kinds = {n.kind for n in tree.nodes}
        if LEAF in kinds:
            raise GameError("FlatRangeSolver cannot solve depth-limited trees (leaf nodes need a value function); "
                            "build the tree without depth_limit or use RangeSolver with leaf_values")
        if not kinds <= {DECISION, FOLD_NODE, SHOWDOWN_NODE, CHANCE_NODE}:
            raise GameError(f"FlatRangeSolver cannot solve trees with {sorted(kinds - {DECISION, FOLD_NODE, SHOWDOWN_NODE, CHANCE_NODE})} nodes")
        for n in tree.nodes:
            if n.kind == SHOWDOWN_NODE and len(n.board) != 5:
                raise GameError(f"FlatRangeSolver: showdown node {n.index} on an incomplete board {n.board}")
        if tree.root.kind != DECISION:
            raise GameError("FlatRangeSolver needs a decision at the root of the tree")
        pg = tree.pgame
        if pg.hand_cards.shape[1] != 2 or pg.hand_cards.max() >= 52:
            raise GameError("FlatRangeSolver needs two-card hands of a 52-card deck")
        self.tree = tree
        self.pot = float(tree.root.pot)
        self.num_hands = tree.num_hands
        board = tree.root.board
        self.mask = pg.hand_mask(board)
        order: List[int] = [0]
        k = 0
        while k < len(order):
            order.extend(tree.nodes[order[k]].children)
            k += 1
        new_of = {old: new for new, old in enumerate(order)}
        N = len(order)
        self.node_type = np.zeros(N, dtype=np.int32)
        self.node_player = np.full(N, -1, dtype=np.int32)
        self.child_start = np.zeros(N, dtype=np.int32)
        self.num_children = np.zeros(N, dtype=np.int32)
        self.node_slot = np.full(N, -1, dtype=np.int32)
        self.amount = np.zeros((N, 2))
        slots = 0
        self.slot_of: Dict[int, int] = {}  # original decision index -> first slot
        self.actions_of: Dict[int, int] = {}
        chance_cards: Dict[int, int] = {}  # dealt card -> mask row
        chance_child_card: Dict[int, int] = {}  # new index of a chance child -> dealt card
        for new, old in enumerate(order):
            n = tree.nodes[old]
            fill_kernel_node(self, new, n, new_of, pg)
            if n.kind == CHANCE_NODE:
                for card, ch in zip(n.actions, n.children):
                    chance_cards.setdefault(int(card), len(chance_cards))
                    chance_child_card[new_of[ch]] = int(card)
            elif n.kind == DECISION:
                self.node_slot[new] = slots
                self.slot_of[old] = slots
                self.actions_of[old] = len(n.children)
                slots += len(n.children)
        self.slots = slots
        # the kernel works on the live hands (no card on the board) sorted by showdown strength
        strengths = np.asarray(pg.strengths(board), dtype=np.int64)
        live = np.nonzero(self.mask > 0)[0]
        self.hands = spread_cards(live[np.argsort(strengths[live], kind="stable")], strengths, pg.hand_cards)
        self.strength = np.ascontiguousarray(strengths[self.hands], dtype=np.int32)
        self.hand_cards = np.ascontiguousarray(pg.hand_cards[self.hands], dtype=np.int32)
        # chance children: hand masks (kernel hand order) of the dealt cards
        self.node_mask = np.full(N, -1, dtype=np.int32)
        for c, card in chance_child_card.items():
            self.node_mask[c] = chance_cards[card]
        self.masks = np.ones((max(len(chance_cards), 1), len(self.hands)))
        for card, row in chance_cards.items():
            self.masks[row] = 1.0 - pg.hands_blocked_by(card)[self.hands]
        # showdowns on boards other than the root's: per board, its live hands in its strength order
        self.node_board = np.zeros(N, dtype=np.int32)
        position = np.full(pg.num_hands, -1)
        position[self.hands] = np.arange(len(self.hands))
        board_ids: Dict[tuple, int] = {}
        perms, groups, hand_start, group_start = [], [], [0, 0], [0, 0]
        for new, old in enumerate(order):
            n = tree.nodes[old]
            if n.kind != SHOWDOWN_NODE or n.board == board:
                continue
            key = tuple(sorted(n.board))  # run-outs dealt in either order share one strength order
            b = board_ids.get(key)
            if b is None:
                b = board_ids[key] = len(board_ids) + 1
                st = np.asarray(pg.strengths(n.board), dtype=np.int64)
                live_b = self.hands[pg.hand_mask(n.board)[self.hands] > 0]
                pairs = spread_cards(live_b[np.argsort(st[live_b], kind="stable")], st, pg.hand_cards)
                perms.append(position[pairs])
                s_sorted = st[pairs]
                runs = np.flatnonzero(np.r_[True, np.diff(s_sorted) != 0])
                groups.append(np.r_[runs, len(pairs)])
                hand_start.append(hand_start[-1] + len(pairs))
                group_start.append(group_start[-1] + len(runs) + 1)
            self.node_board[new] = b
        self.num_boards = len(board_ids)
        self.board_perm = np.ascontiguousarray(np.concatenate(perms) if perms else np.zeros(0), dtype=np.int32)
        self.board_cards = np.ascontiguousarray(self.hand_cards[self.board_perm].reshape(-1, 2), dtype=np.int32)
        self.board_hand_start = np.asarray(hand_start, dtype=np.int32)
        self.board_groups = np.ascontiguousarray(np.concatenate(groups) if groups else np.zeros(0), dtype=np.int32)
        self.board_group_start = np.asarray(group_start, dtype=np.int32)
        self.chance = (self.node_board, self.node_mask, self.masks, self.board_perm, self.board_cards,
                       self.board_hand_start, self.board_groups, self.board_group_start)
        self._chance32 = None
        for arr in (self.node_type, self.node_player, self.child_start, self.num_children, self.node_slot,
                    self.amount, self.hands, self.strength, self.hand_cards) + self.chance:
            arr.setflags(write=False)

    def kernel_args(self, dtype=np.float64):
        chance = self.chance
        if np.dtype(dtype) != np.float64:
            if self._chance32 is None:
                masks = np.ascontiguousarray(self.masks, dtype=np.float32)
                masks.setflags(write=False)
                self._chance32 = chance[:2] + (masks,) + chance[3:]
            chance = self._chance32
        return (self.node_type, self.node_player, self.child_start, self.num_children, self.node_slot, self.amount,
                self.strength, self.hand_cards, chance)


class FlatRangeSolver:
    """Single-spot CFR+/DCFR in C over a river or turn public tree with two-card hands (see module docstring).

    Args:
        tree: public tree without leaves: a river, turn or flop subgame.
        ranges: ``(2, H)`` reach probabilities of every hand (pair index of the tree's game) at the
            root; hands touching the board are dropped.  Default: uniform over the live hands.
        threads: OpenMP threads for one spot (the nodes of each tree level in parallel; same iterates).
        dtype: storage of every hand vector: ``"float64"`` (default) or ``"float32"`` (half the memory; the
            sweeps still accumulate in double).
        algorithm: ``"dcfr"`` (discounted CFR with ``alpha``, ``beta``, ``gamma``), ``"cfr+"``, or
            ``"dcfr-postflop"``: postflop-solver's weighting (iteration ``t`` counted from 0: the old regret
            is discounted by ``s^1.5 / (s^1.5 + 1)``, ``s = t - 1``, if positive and by 1/2 if negative, then
            the new regret is added; the strategy sum is discounted by ``(u / (u + 1))^3``, ``u = t`` minus
            the largest power of 4 not above ``t``, and adds the current strategy unweighted by own reach).
    """

    def __init__(self, tree: PublicTree, ranges=None, algorithm: str = "dcfr", alpha: float = DEFAULT_DCFR["alpha"],
                 beta: float = DEFAULT_DCFR["beta"], gamma: float = DEFAULT_DCFR["gamma"], dtype: str = "float64",
                 threads: int = 1):
        if int(threads) < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.threads = int(threads)
        if np.dtype(dtype) not in (np.float64, np.float32):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
        self.dtype = np.dtype(dtype)
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
        self.flat = flat = FlatTree.of(tree)
        self.tree = tree
        self.algorithm = algorithm
        self.alpha, self.beta, self.gamma = float(alpha), float(beta), float(gamma)
        self.pot = flat.pot
        self.num_hands = H = flat.num_hands
        self.hands = flat.hands
        self.strength = flat.strength
        self.hand_cards = flat.hand_cards
        if ranges is None:
            ranges = np.broadcast_to(flat.mask / flat.mask.sum(), (2, H))
        ranges = np.asarray(ranges, dtype=np.float64)
        if ranges.shape != (2, H):
            raise ValueError(f"ranges must have shape (2, {H}), got {ranges.shape}")
        if not np.all(np.isfinite(ranges)) or ranges.min() < 0:
            raise ValueError("ranges must be finite and non-negative")
        self.ranges = np.ascontiguousarray(ranges[:, self.hands], dtype=self.dtype)
        V = len(self.hands)
        self.regrets = np.zeros((flat.slots, V), dtype=self.dtype)
        self.strategy_sum = np.zeros((flat.slots, V), dtype=self.dtype)
        self.locked = np.zeros((0, V), dtype=self.dtype)  # node locking: (slots, V), -1 = free
        self.iterations = 0

    def lock(self, node: int, strategy, hands=None) -> None:
        """Fix the strategy of decision ``node`` (original tree index) for ``hands`` (pair indices; default
        every hand): ``strategy`` is ``(A, H)`` or ``(1, A, H)`` over all pairs of the game, each locked
        column summing to 1.  Locked hands play it in every later iteration; the rest of the tree adapts."""
        if node not in self.flat.slot_of:
            raise ValueError(f"node {node} is not a decision node of this tree")
        s, A = self.flat.slot_of[node], self.flat.actions_of[node]
        st = np.asarray(strategy, dtype=np.float64)
        st = st[0] if st.ndim == 3 and st.shape[0] == 1 else st
        if st.shape != (A, self.num_hands):
            raise ValueError(f"strategy of node {node} must have shape ({A}, {self.num_hands}), got {st.shape}")
        sub = st[:, self.hands]
        pick = np.ones(len(self.hands), bool) if hands is None else np.isin(self.hands, np.asarray(hands))
        if np.any(sub[:, pick] < 0) or not np.allclose(sub[:, pick].sum(0), 1.0, atol=1e-6):
            raise ValueError("a locked strategy must be non-negative and sum to 1 over the actions of each hand")
        if self.locked.shape[0] == 0:
            self.locked = np.full((self.flat.slots, len(self.hands)), -1.0, dtype=self.dtype)
        self.locked[s:s + A, pick] = sub[:, pick]

    def _args(self):
        return self.flat.kernel_args(self.dtype)

    def run(self, iterations: int, check_every: int = 0, target: Optional[float] = None) -> np.ndarray:
        """Run up to ``iterations`` more iterations; returns the exploitability (chips) every ``check_every``.

        With ``target`` (chips) the run stops after the first check at or below it; ``self.iterations``
        counts the iterations actually run.
        """
        iterations, check_every = int(iterations), int(check_every)
        if iterations < 0 or check_every < 0:
            raise ValueError("iterations and check_every must be non-negative")
        if target is not None and check_every == 0:
            raise ValueError("a target needs check_every > 0")
        n_checks = iterations // check_every if check_every > 0 else 0
        out = np.zeros(max(n_checks, 1))
        done, written = kernel_module(self.dtype).solve(*self._args(), self.ranges, self.regrets, self.strategy_sum, self.locked,
                                        self.iterations + 1, iterations, ALGORITHMS[self.algorithm], self.alpha,
                                        self.beta, self.gamma, check_every,
                                        -1.0 if target is None else float(target), out, self.threads)
        self.iterations += done
        return out[:written]

    def solve(self, target_fraction: float = 0.001, check_every: int = 10, max_iterations: int = 1000) -> float:
        """Iterate until the exploitability is at most ``target_fraction`` of the root pot.

        Checks run every ``check_every`` iterations inside the kernel; at most ``max_iterations``
        more iterations.  Returns the exploitability (chips) of the final average strategy.
        """
        if not target_fraction > 0 or check_every < 1 or max_iterations < 0:
            raise ValueError("need target_fraction > 0, check_every >= 1 and max_iterations >= 0")
        start = self.iterations
        curve = self.run(max_iterations, check_every=check_every, target=target_fraction * self.pot)
        last_checked = start + len(curve) * check_every
        return float(curve[-1]) if len(curve) and last_checked == self.iterations else self.exploitability()

    @property
    def sigma(self) -> np.ndarray:
        """Current strategy per slot (regret matching of the regrets, locked hands' locked strategy; the kernel
        never stores it)."""
        out = np.empty_like(self.regrets)
        for old, s in self.flat.slot_of.items():
            A = self.flat.actions_of[old]
            pos = np.maximum(self.regrets[s:s + A], 0)
            tot = pos.sum(0, keepdims=True)
            out[s:s + A] = np.where(tot > 0, pos / np.where(tot > 0, tot, 1), 1.0 / A)
            if self.locked.shape[0]:
                lk = self.locked[s] >= 0
                out[s:s + A, lk] = self.locked[s:s + A, lk]
        return out

    def _average_slots(self) -> np.ndarray:
        out = np.empty_like(self.strategy_sum)
        for old, s in self.flat.slot_of.items():
            A = self.flat.actions_of[old]
            tot = self.strategy_sum[s:s + A].sum(0, keepdims=True)
            out[s:s + A] = np.where(tot > 0, self.strategy_sum[s:s + A] / np.where(tot > 0, tot, 1), 1.0 / A)
        return out

    def _slots_of(self, strategies: Optional[Dict[int, np.ndarray]]) -> np.ndarray:
        """Per-slot layout of ``strategies`` (``{decision: (A, H) or (1, A, H)}`` over all pairs; default: average)."""
        if strategies is None:
            return self._average_slots()
        out = np.empty_like(self.strategy_sum)
        for old, s in self.flat.slot_of.items():
            A = self.flat.actions_of[old]
            if old not in strategies:
                raise ValueError(f"strategies has no entry for decision node {old}")
            st = np.asarray(strategies[old], dtype=np.float64)
            st = st[0] if st.ndim == 3 and st.shape[0] == 1 else st
            if st.shape != (A, self.num_hands):
                raise ValueError(f"strategy of node {old} must have shape ({A}, {self.num_hands}), got {st.shape}")
            out[s:s + A] = st[:, self.hands]
        return out

    def exploitability(self, strategies: Optional[Dict[int, np.ndarray]] = None) -> float:
        """Exploitability (chips) of ``strategies`` (default: the average strategy), the ranges as the deal distribution.

        ``strategies``: ``{decision node: (A, H) or (1, A, H)}`` over all pairs of the game, as returned by
        :meth:`average_strategy` or :meth:`RangeSolver.to_numpy_strategy`.
        """
        return float(kernel_module(self.dtype).exploitability(*self._args(), self.ranges,
                                                       self._slots_of(strategies).astype(self.dtype)))

    def root_values(self, strategies: Optional[Dict[int, np.ndarray]] = None) -> np.ndarray:
        """Expected chips ``(2,)`` of each player at the root under ``strategies`` (default: average), ranges as the deal.

        Same normalisation as :meth:`RangeSolver.root_values`: ``sum_h range_p(h) * cfv_p(h) / Z``.
        """
        cfv = kernel_module(self.dtype).root_values(*self._args(), self.ranges, self._slots_of(strategies).astype(self.dtype))
        # Z: mass of card-compatible hand pairs (opponent mass compatible with each hand, card-removal sums)
        opp = self.ranges[1]
        per_card = np.zeros(52)
        np.add.at(per_card, self.hand_cards[:, 0], opp)
        np.add.at(per_card, self.hand_cards[:, 1], opp)
        compatible = opp.sum() - per_card[self.hand_cards[:, 0]] - per_card[self.hand_cards[:, 1]] + opp
        z = float(self.ranges[0] @ compatible)
        return (self.ranges * cfv).sum(1) / z if z > 0 else np.zeros(2)

    def root_cfvs(self, strategies: Optional[Dict[int, np.ndarray]] = None) -> np.ndarray:
        """Both players' root cfvs ``(2, H)`` (chips, over all pairs of the game; 0 on pairs touching the board)
        under ``strategies`` (``{decision: (A, H) or (1, A, H)}``; default: the average strategy)."""
        cfv = kernel_module(self.dtype).root_values(*self._args(), self.ranges,
                                                    self._slots_of(strategies).astype(self.dtype))
        out = np.zeros((2, self.num_hands))
        out[:, self.hands] = cfv
        return out

    def set_average_strategy(self, strategies: Dict[int, np.ndarray]) -> None:
        """Make ``strategies`` (``{decision: (A, H) or (1, A, H)}`` over all pairs, every decision) the average
        strategy: the strategy sums become the strategies themselves (a saved spot reloaded)."""
        self.strategy_sum[:] = self._slots_of(strategies)

    def _strategy_dict(self, slots: np.ndarray) -> Dict[int, np.ndarray]:
        out = {}
        for old, s in self.flat.slot_of.items():
            A = self.flat.actions_of[old]
            full = np.full((1, A, self.num_hands), 1.0 / A)
            full[0][:, self.hands] = slots[s:s + A]
            out[old] = full
        return out

    def average_strategy(self) -> Dict[int, np.ndarray]:
        """``(1, A, H)`` average strategy per decision node (original tree indices)."""
        return self._strategy_dict(self._average_slots())

    def current_strategy(self) -> Dict[int, np.ndarray]:
        """``(1, A, H)`` current (regret-matched, locks applied) strategy per decision node."""
        return self._strategy_dict(self.sigma)


def fill_kernel_node(layout, new: int, n, new_of: Dict[int, int], pgame) -> None:
    """Write public node ``n`` (a decision, chance, fold or showdown node) as kernel node ``new`` of
    ``layout``, whose arrays ``node_type``, ``node_player``, ``child_start``, ``num_children`` and
    ``amount`` (``(N, 2)``: chips of a terminal, the deal probability of a chance node in column 0) the
    compiled range-CFR kernels read; ``new_of`` maps public-tree indices to kernel indices."""
    if n.kind in (CHANCE_NODE, DECISION):
        layout.child_start[new] = new_of[n.children[0]]
        layout.num_children[new] = len(n.children)
        if n.kind == CHANCE_NODE:
            layout.node_type[new] = 3
            layout.amount[new, 0] = pgame.chance_weight(n.board)
        else:
            layout.node_type[new] = 0
            layout.node_player[new] = n.player
    else:
        layout.node_type[new], layout.amount[new] = n.terminal_code()


@dataclass
class BatchSolve:
    """Result of :func:`solve_many`: one solver per spot and per-spot statistics.

    ``iterations[b]``: iterations run on spot ``b``; ``exploitability[b]``: exploitability (chips) of
    its final average strategy; ``reached[b]``: whether it is at most the target (all True without a
    target); ``pot``: root pot (chips); ``wall_seconds``/``cpu_seconds``: time of the whole batch.
    """

    solvers: List[FlatRangeSolver]
    iterations: np.ndarray
    exploitability: np.ndarray
    reached: np.ndarray
    pot: float
    wall_seconds: float
    cpu_seconds: float

    @property
    def exploitability_fraction(self) -> np.ndarray:
        """Per-spot exploitability as a fraction of the root pot."""
        return self.exploitability / self.pot


def solve_many(tree: PublicTree, ranges: np.ndarray, max_iterations: int, threads: Optional[int] = None,
               target_fraction: Optional[float] = None, check_every: int = 10, **solver_kwargs) -> BatchSolve:
    """Solve one spot per ``ranges[b]`` (shape ``(B, 2, H)``) on a thread pool.

    Without ``target_fraction`` every spot runs exactly ``max_iterations`` iterations.  With it,
    each spot stops on its own at the first check (every ``check_every`` iterations, in the kernel)
    where its exploitability is at most ``target_fraction`` of the root pot, or after
    ``max_iterations``.  The kernel releases the GIL, so spots run in parallel on ``threads``
    threads (default: the cores this process may use).  ``solver_kwargs`` go to :class:`FlatRangeSolver`.  River and turn
    trees alike; every spot holds its own ``(slots, hands)`` arrays (about 0.4 GB per spot on a deep
    turn tree of 11k nodes), so batch turn spots accordingly.
    """
    ranges = np.asarray(ranges, dtype=np.float64)
    if ranges.ndim != 3 or ranges.shape[1] != 2:
        raise ValueError(f"ranges must have shape (B, 2, H), got {ranges.shape}")
    if max_iterations < 0:
        raise ValueError("max_iterations must be non-negative")
    if target_fraction is not None and not (target_fraction > 0 and check_every >= 1):
        raise ValueError("need target_fraction > 0 and check_every >= 1")
    wall, cpu = time.perf_counter(), time.process_time()
    solvers = [FlatRangeSolver(tree, ranges=r, **solver_kwargs) for r in ranges]

    def work(s: FlatRangeSolver) -> float:
        if target_fraction is None:
            s.run(max_iterations)
            return s.exploitability()
        return s.solve(target_fraction, check_every=check_every, max_iterations=max_iterations)

    from concurrent.futures import ThreadPoolExecutor  # here: with logging, ~0.6 MiB that a single solve does not need

    with ThreadPoolExecutor(max_workers=threads or default_threads()) as pool:
        expl = np.array(list(pool.map(work, solvers)))
    pot = solvers[0].pot if solvers else float(tree.root.pot)
    reached = expl <= target_fraction * pot if target_fraction is not None else np.ones(len(solvers), bool)
    return BatchSolve(solvers, np.array([s.iterations for s in solvers]), expl, reached, pot,
                      time.perf_counter() - wall, time.process_time() - cpu)
