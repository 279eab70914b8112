"""The range-solver front: :class:`SubgameSolver`, the one solver to construct for a public tree.

Give it a public tree (``build_public_tree``), ranges, a backend, a storage type, threads and, for a
depth-limited tree, :class:`~cfrkit.solvers.public.leaf_values.LeafValues`; it picks the solver that runs it
(the *engine*) and answers in one layout whatever the engine:

====================  =====================================  ==========================================
backend               tree / options                          engine (implementation detail)
====================  =====================================  ==========================================
``"numpy"/"torch"``   any public tree (Leduc, hold'em, with   :class:`~.tree.RangeSolver` (float64 or
                      leaves, gadget, batched ranges)         float32; no 16-bit, no threads)
``"compiled"``        52-card hold'em tree on a board, with   :class:`~.board_leaf_cfr.BoardLeafSolver`
                      leaves, a gadget, batched ranges,       (cfr+/dcfr, float64/float32, 1 thread)
                      ``skip > 0`` or ``kernel="leaf"``
``"compiled"``        full tree (no leaves), one spot,        :class:`~.board_range_cfr.BoardRangeSolver`
                      ``kernel="board"`` (default)            (all storages incl. 16-bit, threads, suit
                                                              isomorphism, ``dcfr-postflop``)
``"compiled"``        full tree, one spot, ``kernel="flat"``  :class:`~.flat_range_cfr.FlatRangeSolver`
                                                              (float64/float32, threads, node locking)
``"auto"`` (default)  ``"compiled"`` for 52-card hold'em
                      trees rooted on a board, else
                      ``"numpy"``
====================  =====================================  ==========================================

Layout and units (every engine):

* ranges: ``(2, H)`` one spot, or ``(B, 2, H)`` B spots side by side (numpy/torch and the compiled
  depth-limited engine); ``H`` = all private hands of the game (1326 in hold'em: pairs touching the board get 0);
* strategies (:meth:`SubgameSolver.average_strategy`, :meth:`~SubgameSolver.current_strategy`): ``{decision node
  index: (B, A, H) float64 numpy}`` with ``B = 1`` for one spot (uniform on hands that cannot be there);
* counterfactual values (cfvs) in **chips**, net of the player's own contribution: root cfvs ``(2, H)``
  (``(B, 2, H)`` batched); per-node lists of ``(B, 2, H)`` (None below an all-in run-out valued as one terminal);
* exploitability ``(BR_0 + BR_1) / 2`` in chips (:meth:`~SubgameSolver.exploitability`) or in % of the root pot
  (:meth:`~SubgameSolver.exploitability_percent`, the unit of :meth:`~SubgameSolver.solve`'s target).

>>> from cfrkit.solvers.public import SubgameSolver, build_public_tree          # doctest: +SKIP
>>> solver = SubgameSolver(build_public_tree(game), storage="float32", threads=2)   # doctest: +SKIP
>>> solver.solve(0.3)        # to 0.3% of the pot; returns the exploitability in % of the pot  # doctest: +SKIP
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from typing import TYPE_CHECKING

from cfrkit.solvers.public.board_range_cfr import BOARD_ALGORITHMS, BoardRangeSolver
from cfrkit.solvers.public.flat_range_cfr import ALGORITHMS, FlatRangeSolver
from cfrkit.solvers.public.leaf_values import LeafValues, check_leaf_values
from cfrkit.solvers.public.public_tree import DECISION, PublicTree

if TYPE_CHECKING:
    from cfrkit.solvers.public.tree import RangeSolver

# The numpy/torch engine (RangeSolver, with cfrkit.policy and the array backends) and the depth-limited engine
# (BoardLeafSolver) are imported when a solve needs them, so that a full-tree compiled solve (a river or turn
# spot) imports only the board engine: the Python process of a river solve is mostly the interpreter, numpy and
# these modules (benchmarks/RESULTS.md, issue 30 part 11).

BACKENDS = ("auto", "numpy", "torch", "compiled")
STORAGES = ("float64", "float32", "16bit")
KERNELS = ("board", "flat", "leaf")


def compiled_supported(tree: PublicTree) -> bool:
    """Whether the compiled engines can take ``tree``: a 52-card hold'em public game (``hand_cards`` of shape
    ``(1326, 2)``) whose root is a decision on a flop, turn or river board."""
    cards = getattr(tree.pgame, "hand_cards", None)
    return (cards is not None and np.asarray(cards).shape == (1326, 2) and len(tree.root.board) >= 3
            and tree.root.kind == DECISION)


def choose_engine(tree: PublicTree, backend: str = "auto", batched: bool = False, gadget: bool = False,
                  skip: int = 0, kernel: str = "board") -> str:
    """Name of the engine class :class:`SubgameSolver` runs for these options (the table of the module
    docstring): ``"RangeSolver"``, ``"BoardLeafSolver"``, ``"BoardRangeSolver"`` or ``"FlatRangeSolver"``."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; choose one of {', '.join(KERNELS)}")
    if backend == "auto":
        backend = "compiled" if compiled_supported(tree) else "numpy"
    if backend in ("numpy", "torch"):
        return "RangeSolver"
    if not compiled_supported(tree):
        raise ValueError("the compiled backend needs a 52-card hold'em tree rooted at a decision on the flop, turn "
                         "or river; use backend='numpy' or 'torch'")
    if tree.leaf_nodes or gadget or batched or skip > 0 or kernel == "leaf":
        return "BoardLeafSolver"
    return "BoardRangeSolver" if kernel == "board" else "FlatRangeSolver"


class SubgameSolver:
    """CFR+ / DCFR with range vectors over a public tree: the range solvers' one front (module docstring).

    Args:
        tree: a public tree (:func:`~cfrkit.solvers.public.public_tree.build_public_tree`).
        ranges: root reach ``(2, H)`` or ``(B, 2, H)`` (default: uniform over the hands the board leaves).
        backend: ``"auto"`` (default), ``"numpy"``, ``"torch"`` (``device``: cuda when available) or
            ``"compiled"`` (the Cython kernels).
        storage: ``"float64"``, ``"float32"`` (half the memory; sums still in double in the kernels) or ``"16bit"``
            (compiled full trees: int16 regrets / uint16 strategy sums with a float32 scale per node).  ``None``
            (default): by size on the board engine (``"16bit"`` when its float32 tables would exceed
            ``board_range_cfr.STORAGE_16BIT_BYTES``, 16 MB: every full-range flop and turn; ``"float32"``
            otherwise, e.g. a river),
            ``"float64"`` on the others.  :attr:`storage` holds the storage chosen.
        threads: OpenMP threads of the compiled full-tree engines (same iterates for any count); 1 elsewhere.
            ``None`` (default): on the board engine chosen while the solve runs, between 1 and the cores the
            process may use, by timing chunks of iterations at each (``thread_chooser.ThreadChooser``: on a machine
            busy with other sessions' work a second thread can slow a solve); 1 on the others.
        leaf_values: :class:`~cfrkit.solvers.public.leaf_values.LeafValues` for the leaves of a depth-limited tree.
        algorithm: ``"dcfr"`` (default; ``alpha``, ``beta``, ``gamma``), ``"cfr+"``, ``"dcfr-postflop"``
            (compiled full trees only), ``"dcfr+"`` or ``"pdcfr+"`` (the board kernel only: see
            :class:`~cfrkit.solvers.public.board_range_cfr.BoardRangeSolver`).
        alpha, beta, gamma: the discount exponents; ``None`` (default): the algorithm's (DCFR 1.5, 0, 2; DCFR+
            1.5, 4; PDCFR+ 2.3, 5: ``board_range_cfr.ALGORITHM_DEFAULTS``).
        skip: the first ``skip`` iterations stay out of the average strategy and averaged root cfvs.
        gadget: ``(player, terminate_cfvs)``: re-solve with the CFR-D gadget for ``player`` (``ranges[player]``
            ignored; ``terminate_cfvs`` chips, ``(H,)`` or ``(B, H)``).
        kernel: compiled full trees: ``"board"`` (per-board hand spaces, default), ``"flat"`` (node locking) or
            ``"leaf"`` (the depth-limited engine, as on trees with leaves: averaged root cfvs, gadget).
        fast_nets: the compiled depth-limited engine sends a
            :class:`~cfrkit.solvers.public.leaf_values.BucketedLeafValues` through its direct bucket path.
        average: ``"linear"`` (default) or ``"uniform"`` (numpy/torch only).
        track_node_values: numpy/torch: also average both players' cfvs at every node
            (:meth:`average_node_values`).
        device: torch device.  ``isomorphism``, ``rounding``: the board kernel's options.
    """

    def __init__(self, tree: PublicTree, ranges=None, *, backend: str = "auto", storage: Optional[str] = None,
                 threads: Optional[int] = None, leaf_values: Optional[LeafValues] = None, algorithm: str = "dcfr",
                 skip: int = 0,
                 gadget: Optional[Tuple[int, Any]] = None, alpha: Optional[float] = None,
                 beta: Optional[float] = None, gamma: Optional[float] = None, kernel: str = "board",
                 average: str = "linear", track_node_values: bool = False, device: Optional[str] = None,
                 isomorphism: Optional[bool] = None, rounding: str = "stochastic", fast_nets: bool = True):
        if not isinstance(tree, PublicTree):
            raise ValueError(f"tree must be a PublicTree (build_public_tree), got {type(tree).__name__}")
        if storage is not None and storage not in STORAGES:
            raise ValueError(f"unknown storage {storage!r}; choose one of {', '.join(STORAGES)}")
        if algorithm not in BOARD_ALGORITHMS:
            raise ValueError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(BOARD_ALGORITHMS)}")
        if threads is not None and int(threads) < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        if int(skip) < 0:
            raise ValueError(f"skip must be >= 0, got {skip}")
        check_leaf_values(leaf_values)
        if tree.leaf_nodes and leaf_values is None:
            raise ValueError("the tree is depth-limited (has leaves): pass leaf_values (a LeafValues)")
        self.tree = tree
        H = tree.num_hands
        if ranges is not None and not hasattr(ranges, "device"):
            ranges = np.asarray(ranges, dtype=np.float64)
        self.batched = ranges is not None and len(ranges.shape) == 3
        self.engine_name = name = choose_engine(tree, backend, self.batched, gadget is not None, int(skip), kernel)
        self.algorithm, self.skip, self.leaf_values = algorithm, int(skip), leaf_values
        self._gadget = gadget
        # the exponents given (the engines default the others: DEFAULT_DCFR, or the board kernel's per algorithm)
        dcfr = {k: v for k, v in dict(alpha=alpha, beta=beta, gamma=gamma).items() if v is not None}
        if algorithm not in ALGORITHMS and name != "BoardRangeSolver":
            raise ValueError(f"algorithm {algorithm!r} runs on the compiled board kernel (kernel='board', a full tree "
                             f"without gadget, skip or batched ranges), not {name}")
        if name != "RangeSolver" and average != "linear":
            raise ValueError(f"average={average!r} needs backend 'numpy' or 'torch'")
        if name != "RangeSolver" and track_node_values:
            raise ValueError("track_node_values needs backend 'numpy' or 'torch'")
        if storage is None and name != "BoardRangeSolver":
            storage = "float64"
        if threads is None and name != "BoardRangeSolver":
            threads = 1
        if name in ("RangeSolver", "BoardLeafSolver"):
            if storage == "16bit":
                raise ValueError(f"16-bit storage runs on the compiled full-tree engine, not {name} "
                                 f"(a tree with leaves, a gadget, batched ranges or skip > 0, or backend numpy/torch)")
            if int(threads) != 1:
                raise ValueError(f"threads > 1 run on the compiled full-tree engines, not {name}")
            if algorithm == "dcfr-postflop":
                raise ValueError(f"algorithm 'dcfr-postflop' runs on the compiled full-tree engines, not {name}")
        if name == "RangeSolver":
            from cfrkit.solvers.public.tree import RangeSolver
            be = "numpy" if backend == "auto" else backend
            self.engine = RangeSolver(tree, ranges=ranges, algorithm=algorithm, skip=skip, average=average,
                                      leaf_values=leaf_values, gadget=gadget, backend=be, device=device,
                                      dtype=np.dtype(storage), track_node_values=track_node_values, **dcfr)
        elif name == "BoardLeafSolver":
            from cfrkit.solvers.public.board_leaf_cfr import BoardLeafSolver
            self.engine = BoardLeafSolver(tree, ranges=ranges, leaf_values=leaf_values, algorithm=algorithm,
                                          skip=skip, dtype=storage, gadget=gadget, allow_no_ext=True,
                                          fast_nets=fast_nets, **dcfr)
        elif name == "BoardRangeSolver":
            self.engine = BoardRangeSolver(tree, ranges=ranges, algorithm=algorithm,
                                           dtype=None if storage is None else "float32" if storage == "16bit"
                                           else storage, threads=threads, isomorphism=isomorphism,
                                           compression=None if storage is None else storage == "16bit",
                                           rounding=rounding, **dcfr)
            storage = "16bit" if self.engine.compression else self.engine.dtype.name
        else:
            if storage == "16bit":
                raise ValueError("16-bit storage runs on kernel='board', not 'flat'")
            self.engine = FlatRangeSolver(tree, ranges=ranges, algorithm=algorithm, dtype=storage, threads=threads,
                                          **dcfr)
        # threads: None when the board engine chooses them as it runs (engine.thread_stats)
        self.storage, self.threads, self.backend = storage, None if threads is None else int(threads), backend
        self._ranges = ranges
        self._reference: Optional[RangeSolver] = None

    # ------------------------------------------------------------------ basics
    @property
    def iterations(self) -> int:
        """Iterations run so far."""
        return int(self.engine.iterations)

    @property
    def pot(self) -> float:
        """Chips in the pot at the root (both contributions)."""
        return float(self.tree.root.pot)

    @property
    def num_spots(self) -> int:
        """``B``: spots solved side by side (1 for ``(2, H)`` ranges)."""
        e = self.engine
        return int(e.B) if hasattr(e, "B") else 1

    def _one(self, x):
        """Drop the spot axis of an output when the ranges were one spot."""
        return x if self.batched else x[0]

    def run(self, iterations: int) -> "SubgameSolver":
        """Run ``iterations`` more iterations (alternating updates, player 0 first)."""
        iterations = int(iterations)
        if iterations < 0:
            raise ValueError(f"iterations must be >= 0, got {iterations}")
        if self.engine_name == "RangeSolver":
            self.engine.iterate(iterations)
        else:
            self.engine.run(iterations)
        self._reference = None
        return self

    def solve(self, target_percent: float = 0.3, max_iterations: int = 1000, check_every: int = 10) -> float:
        """Iterate until the exploitability is at most ``target_percent`` % of the root pot (checked every
        ``check_every`` iterations; at most ``max_iterations`` more).  Returns the final exploitability in % of
        the pot (the largest over the spots when batched).  Needs a tree without leaves and no gadget."""
        if not target_percent > 0 or int(check_every) < 1 or int(max_iterations) < 0:
            raise ValueError("need target_percent > 0, check_every >= 1 and max_iterations >= 0")
        self._check_exploitability()
        if self.engine_name in ("BoardRangeSolver", "FlatRangeSolver"):
            chips = self.engine.solve(target_percent / 100.0, check_every=int(check_every),
                                      max_iterations=int(max_iterations))
            self._reference = None
            return 100.0 * chips / self.pot
        done, pct = 0, None
        while done < max_iterations:
            step = min(int(check_every), int(max_iterations) - done)
            self.run(step)
            done += step
            pct = float(np.max(self.exploitability_percent()))
            if pct <= target_percent:
                return pct
        return pct if pct is not None else float(np.max(self.exploitability_percent()))

    # ------------------------------------------------------------------ strategies
    def average_strategy(self) -> Dict[int, np.ndarray]:
        """Average strategy ``{decision node: (B, A, H)}`` (float64; uniform where a hand cannot be)."""
        return self._strategy(average=True)

    def current_strategy(self) -> Dict[int, np.ndarray]:
        """Current (regret-matched) strategy ``{decision node: (B, A, H)}``."""
        return self._strategy(average=False)

    def _strategy(self, average: bool) -> Dict[int, np.ndarray]:
        e = self.engine
        if self.engine_name == "RangeSolver":
            return e.to_numpy_strategy(e.average_strategy() if average else e.current_strategy())
        if self.engine_name == "BoardLeafSolver":
            per = [e.average_strategy(spot=b) if average else e.current_strategy(spot=b) for b in range(e.B)]
            return {i: np.concatenate([p[i] for p in per], 0) for i in per[0]}
        return e.average_strategy() if average else e.current_strategy()

    def lock(self, node: int, strategy, hands=None) -> None:
        """Node locking (``kernel="flat"``): fix decision ``node``'s strategy ``(A, H)`` for ``hands`` (default
        all); see :meth:`FlatRangeSolver.lock`."""
        if self.engine_name != "FlatRangeSolver":
            raise ValueError("node locking runs on backend='compiled', kernel='flat' (a full tree, one spot)")
        self.engine.lock(node, strategy, hands)

    def set_average_strategy(self, strategies: Dict[int, np.ndarray]) -> None:
        """Load a saved average strategy (``{decision: (1, A, H)}``, every decision; ``kernel="flat"``)."""
        if self.engine_name != "FlatRangeSolver":
            raise ValueError("set_average_strategy runs on backend='compiled', kernel='flat'")
        self.engine.set_average_strategy(strategies)

    # ------------------------------------------------------------------ values
    def _check_exploitability(self) -> None:
        if self.tree.leaf_nodes:
            raise ValueError("a depth-limited tree has no exploitability (it would depend on the leaf values)")
        if self.engine_name == "BoardLeafSolver":
            raise ValueError("exploitability runs on the compiled full-tree engines (one spot, no gadget, skip 0) "
                             "or on backend 'numpy' / 'torch'")

    def exploitability(self):
        """``(BR_0 + BR_1) / 2`` of the average strategy in chips, the root ranges as the deal: a float (``(B,)``
        batched).  Not for depth-limited trees."""
        self._check_exploitability()
        e = self.engine
        if self.engine_name == "RangeSolver":
            return self._one(np.asarray(e.exploitability(), dtype=np.float64))
        return float(e.exploitability())

    def exploitability_percent(self):
        """:meth:`exploitability` in % of the root pot."""
        return 100.0 * self.exploitability() / self.pot

    def gadget_range(self):
        """The gadget player's root range (follow probabilities) ``(H,)`` (``(B, H)`` batched), or None."""
        if self._gadget is None:
            return None
        if self.engine_name == "RangeSolver":
            return self._one(self.engine.be.to_numpy(self.engine.gadget_range()))
        return self.engine.gadget_range()

    def _root_ranges(self) -> np.ndarray:
        """``(B, 2, H)`` root reach (the gadget player's current follow range) as numpy."""
        e = self.engine
        if self.engine_name == "RangeSolver":
            return e.be.to_numpy(e.root_ranges())
        H = self.tree.num_hands
        mask = self.tree.pgame.hand_mask(self.tree.root.board)
        if self._ranges is None:
            r = np.broadcast_to(mask / mask.sum(), (1, 2, H)).copy()
        else:
            r = np.array(self._ranges, dtype=np.float64).reshape(-1, 2, H) * mask
        if self._gadget is not None:
            r[:, self._gadget[0]] = np.reshape(self.gadget_range(), (-1, H)) * mask
        return r

    def _ref(self) -> RangeSolver:
        """The numpy engine on the same tree, ranges and leaf values: per-node values of the compiled engines'
        strategies (one pass; cached until the next run)."""
        if self.engine_name == "RangeSolver":
            return self.engine
        if self._reference is None:
            from cfrkit.solvers.public.tree import RangeSolver
            self._reference = RangeSolver(self.tree, ranges=self._root_ranges(),
                                          # values of given strategies: the update rule does not matter
                                          algorithm=self.algorithm if self.algorithm in ("dcfr", "cfr+") else "dcfr",
                                          leaf_values=self.leaf_values)
        return self._reference

    def _engine_strategy(self, strategies: Optional[Dict[int, np.ndarray]]):
        """``strategies`` (front layout; default average) in the numpy engine's layout."""
        if strategies is None and self.engine_name == "RangeSolver":
            return self.engine.average_strategy()
        strategies = self.average_strategy() if strategies is None else strategies
        return self._ref().from_numpy_strategy(strategies)

    def node_values(self, strategies: Optional[Dict[int, np.ndarray]] = None) -> Tuple[List, List]:
        """``(values, reach)``: per node, both players' cfvs ``(B, 2, H)`` (chips) and reach ``(B, 2, H)`` under
        ``strategies`` (front layout; default: the average strategy), the gadget player's root reach its current
        follow range; None below an all-in run-out valued as one terminal.  The compiled engines' strategies go
        through one numpy pass."""
        ref = self._ref()
        vals, reach = ref.node_values(self._engine_strategy(strategies))
        be = ref.be
        pair = lambda p: None if p is None or p[0] is None else np.stack([be.to_numpy(p[0]), be.to_numpy(p[1])], 1)  # noqa: E731
        return [pair(v) for v in vals], [pair(r) for r in reach]

    def best_response_node_values(self, player: int,
                                  strategies: Optional[Dict[int, np.ndarray]] = None) -> List[Optional[np.ndarray]]:
        """Cfvs ``(B, H)`` (chips) of ``player``'s best response to the opponent's ``strategies`` (default:
        average) at every node (None below all-in run-outs)."""
        if player not in (0, 1):
            raise ValueError(f"player must be 0 or 1, got {player!r}")
        ref = self._ref()
        out = ref.best_response_node_values(player, self._engine_strategy(strategies))
        return [None if v is None else ref.be.to_numpy(v) for v in out]

    def root_cfvs(self, strategies: Optional[Dict[int, np.ndarray]] = None) -> np.ndarray:
        """Both players' root cfvs ``(2, H)`` (``(B, 2, H)`` batched; chips) under ``strategies`` (default: the
        average strategy)."""
        if self.engine_name == "FlatRangeSolver":
            return self._one(self.engine.root_cfvs(strategies)[None])
        if self.engine_name == "BoardRangeSolver":
            # the board kernel has no root-value pass: the flat kernel's, on the board engine's strategy
            flat = FlatRangeSolver(self.tree, ranges=self._root_ranges()[0], algorithm="dcfr", dtype="float64")
            return self._one(flat.root_cfvs(self.average_strategy() if strategies is None else strategies)[None])
        return self._one(self.node_values(strategies)[0][0])

    def expected_values(self, strategies: Optional[Dict[int, np.ndarray]] = None) -> np.ndarray:
        """Expected chips of each player at the root ``(2,)`` (``(B, 2)`` batched) under ``strategies`` (default:
        the average strategy), the root ranges as the deal: ``sum_h range_p(h) cfv_p(h) / Z`` with ``Z`` the mass
        of card-compatible hand pairs (net of the player's own contribution)."""
        if self.engine_name == "FlatRangeSolver":
            return self._one(self.engine.root_values(strategies)[None])
        return self._one(np.asarray(self._ref().root_values(self._engine_strategy(strategies))))

    def average_root_cfvs(self) -> np.ndarray:
        """Both players' root cfvs ``(2, H)`` (``(B, 2, H)`` batched; chips) averaged over the iterations after
        ``skip`` (each iteration's cfvs of the current strategies: DeepStack's training targets).  numpy/torch
        and the compiled depth-limited engine (``skip > 0``, leaves, gadget or batched ranges)."""
        e = self.engine
        if self.engine_name == "RangeSolver":
            return self._one(e.be.to_numpy(e.average_root_values()))
        if self.engine_name == "BoardLeafSolver":
            return e.average_root_values()
        raise ValueError("averaged root cfvs are tracked by backend 'numpy'/'torch' and the compiled depth-limited "
                         "engine; the full-tree kernels keep none (use root_cfvs)")

    def average_node_values(self, player: int) -> List[Optional[np.ndarray]]:
        """``player``'s cfvs ``(B, H)`` at every node averaged over the iterations (``track_node_values=True``,
        numpy/torch; see :meth:`RangeSolver.average_node_values`)."""
        if self.engine_name != "RangeSolver":
            raise ValueError("average_node_values needs backend 'numpy' or 'torch' with track_node_values=True")
        be = self.engine.be
        return [None if v is None else be.to_numpy(v) for v in self.engine.average_node_values(player)]
