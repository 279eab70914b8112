"""The blueprint trainer at Pluribus' recipe (Brown & Sandholm 2019, supplementary): external-sampling MCCFR
with Linear-CFR discounting in a first phase, negative-regret pruning after a warm-up, int32 regrets,
average strategy kept for the first betting round only, several threads on one table, Ray workers.

Same abstract game, betting tree, card abstraction, file format family (``.npz`` with a JSON header, written
atomically; ``algorithm: "pluribus"``), checkpoints on Ctrl-C / SIGTERM and bit-exact resume (one thread) as
:class:`~cfrkit.solvers.blueprint.trainer.BlueprintTrainer`, whose :func:`train` loop runs it.

An iteration samples ``boards_per_iteration`` boards (default: one per thread), each a function of
``(seed, iteration, board index)``, and on each runs ``deals_per_board`` external-sampling traversals per
seat (``pyx/blueprint_pluribus.pyx``).  Schedule, in iterations (not minutes, so that a resumed run repeats
an uninterrupted one exactly):

* **discounting** (Linear CFR): after every ``discount_every`` iterations while the iteration count is at most
  ``discount_until``, regrets and strategy sums are multiplied by ``T / (T + 1)`` with ``T`` the number of
  discount intervals so far -- the increments of interval ``T`` end up weighted ``T``;
* **pruning**: after ``prune_warmup`` iterations, a traversal prunes with probability ``prune_probability``
  (0.95): the traverser's actions with regret below ``prune_threshold`` chips are skipped, except on the river
  and before terminals; regrets are floored at ``regret_floor`` so a pruned action can come back.

**Board preparation without the GIL** (``sampler="kernel"``, every new run): the board of ``(seed, iteration,
board index)``, the hole-card deals and -- for card abstractions with bucket tables (``bucket_tables()``: the
EMD / potential-aware builds of :mod:`cfrkit.abstraction`, memory-mapped) -- each dealt hand's bucket on every
street and its river strength are computed in the kernel (:func:`run_boards`), so a thread holds the GIL only
to start a run of iterations; abstractions without tables (the E[HS] stand-in) compute the board's buckets in
Python and pass them in, drawing the same boards and deals.  One thread runs the iterations between two
discounts in one kernel call.  Files written before this sampler (no ``sampler`` in their settings) keep the
numpy sampler they were trained with (``sampler="numpy"``), so they resume exactly.

**Compact regrets** (``regret_storage="int32"``, the default): int32 chips, rounded to the nearest chip and
clamped to ``[regret_floor, regret_ceiling]`` -- Pluribus' choice.  Why int32 and not 16 bits with a
per-information-set scale (postflop-solver): external sampling adds one sampled counterfactual value at a
time to one information set, and a 16-bit entry with a shared scale would need a rescan of the set's
actions whenever one of them outgrows the scale (postflop-solver writes whole vectors per update, where
that is cheap); int32 chips have a fixed resolution of one chip (regret increments are tens to thousands of
chips at 20000-chip stacks) and exact, associative addition.  ``regret_storage="float32"`` is the reference.

**Averaging** (``average="preflop"``, the default): strategy sums exist for the first betting round only
(Pluribus); later rounds are played from the current strategy, regret matching of the final regrets, which
the file stores in place of their strategy sums (so that :class:`BlueprintStrategy` and the agent read every
file the same way).  ``average="all"`` keeps sums everywhere (for small games and exploitability tests).
Bytes: 4 per (information set, action) for regrets plus 4 per averaged entry.

**Threads** (``threads > 1``): each thread runs its own boards against the same arrays without locks (the
kernel releases the GIL); concurrent read-modify-writes of one entry can lose an update, as in Pluribus'
shared-memory training, so a threaded run is not deterministic (the tests check convergence and the
benchmark reports the spread over seeds).  **Ray** (``ray_address``): the existing trainer's broadcast
scheme -- each actor gets the tables by ``ray.put``, runs its boards in place on a private copy and returns
exact (int64 / float64) deltas that the driver adds in actor order; deterministic for a given actor count,
identical to one thread with one actor.  Traffic is (actors + 1) x the tables per iteration: suited to
abstractions of up to a few hundred MB.
"""
from __future__ import annotations

import json
import os
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, Optional, Sequence, Tuple

import numpy as np

from cfrkit._io import atomic_open
from cfrkit._ray import import_ray, join_ray
from cfrkit.cards.isomorphism import holdem_indexer
from cfrkit.solvers.blueprint.abstraction_spec import DEFAULT_ABSTRACTION, abstraction_from_spec
from cfrkit.solvers.blueprint.betting_tree import (DEFAULT_BETS, DEFAULT_GAME, DEFAULT_RAISE_CAP, BettingTree,
                                                   BlueprintError)
from cfrkit.solvers.blueprint.boards import sample_boards
from cfrkit.solvers.blueprint.mccfr import (ESMCCFRTrainer, sample_deals, sampled_trainer_keywords,
                                           sampling_settings)
from cfrkit.solvers.blueprint.trainer import TREE_FIELDS, check_abstraction, stats_from_header

REGRET_STORAGES = ("int32", "float32")
#: ``kernel``: boards, deals and table lookups in the kernel (new runs); ``numpy``: numpy boards and deals,
#: buckets in Python (files written before the kernel sampler, resumed exactly)
SAMPLERS = ("kernel", "numpy")
AVERAGES = ("preflop", "all")
#: int32 regrets saturate here (chips): far above any regret a 20000-chip game reaches in the discount phase
INT32_CEILING = 2_000_000_000.0


def _kernel():
    from cfrkit._kernels import blueprint_pluribus

    return blueprint_pluribus


def table_layout(tree: BettingTree, num_buckets: Sequence[int], average: str) -> Tuple[np.ndarray, int,
                                                                                         np.ndarray, int]:
    """``(slot, total, avg_slot, avg_total)``: the regret layout (:meth:`BettingTree.slots`) and the compact
    strategy-sum layout (``avg_slot[n] = -1`` where no sums are kept: rounds after the first when
    ``average == "preflop"``)."""
    if average not in AVERAGES:
        raise BlueprintError(f"average must be one of {', '.join(AVERAGES)}, got {average!r}")
    slot, total = tree.slots(num_buckets)
    keep = tree.kind == 0
    if average == "preflop":
        keep &= tree.round == 0
    sizes = np.where(keep, np.asarray(num_buckets, dtype=np.int64)[tree.round] * tree.num_children, 0)
    avg_slot = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    avg_slot[~keep] = -1
    return slot, total, avg_slot, int(sizes.sum())


def estimate_bytes(tree: BettingTree, num_buckets: Sequence[int], regret_storage: str = "int32",
                   average: str = "preflop") -> Dict[str, int]:
    """Sizes of the tables before allocating them: ``information_sets``, ``entries`` (information set x action),
    ``averaged_entries``, ``table_bytes`` (regrets + strategy sums, exactly what the trainer allocates) and
    ``bytes_per_information_set``-ready counts."""
    if regret_storage not in REGRET_STORAGES:
        raise BlueprintError(f"regret storage must be one of {', '.join(REGRET_STORAGES)}, got {regret_storage!r}")
    _, total, _, avg_total = table_layout(tree, num_buckets, average)
    dec = tree.kind == 0
    infosets = int(np.asarray(num_buckets, dtype=np.int64)[tree.round[dec]].sum())
    table = 4 * total + 4 * max(avg_total, 1)  # int32 or float32 regrets, float32 sums (at least one entry)
    return {"information_sets": infosets, "entries": int(total), "averaged_entries": int(avg_total),
            "table_bytes": int(table)}


def available_memory_bytes() -> int:
    """Memory this machine can still give (``MemAvailable`` of /proc/meminfo; total RAM where unreadable)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


class PluribusTrainer(ESMCCFRTrainer):
    """External-sampling MCCFR at Pluribus' recipe (module docstring).

    Args (others as :class:`ESMCCFRTrainer`):
        threads: threads running boards on the shared tables (lock-free; not deterministic above one).
        boards_per_iteration: boards per iteration (default ``threads``, or the number of Ray actors).
        regret_storage: ``"int32"`` (chips, Pluribus) or ``"float32"``.
        average: ``"preflop"`` (strategy sums for the first round only) or ``"all"``.
        discount_every, discount_until: Linear-CFR discount interval and end of the discount phase (iterations;
            ``discount_until=0`` disables discounting).
        prune: pruning after ``prune_warmup`` iterations (on by default, as Pluribus).
        regret_ceiling: int32 saturation (chips).
        ray_address: run boards on Ray actors (``threads`` of them; ``"local"`` starts a local Ray).
        sampler: ``"kernel"`` (boards, deals and bucket-table lookups in the kernel, without the GIL) or
            ``"numpy"`` (the sampler of files written before it; resumed files keep theirs).
        table_lookups: read the abstraction's bucket tables in the kernel when it has them (``False`` computes
            the buckets in Python: the same numbers, slower; for tests and measurements).
    """

    algorithm = "pluribus"

    def __init__(self, game: str = DEFAULT_GAME, bets: str = DEFAULT_BETS, raise_cap: int = DEFAULT_RAISE_CAP,
                 abstraction=DEFAULT_ABSTRACTION, seed: int = 0, deals_per_board: int = 64, prune: bool = True,
                 prune_warmup: int = 200, prune_probability: float = 0.95, prune_threshold: Optional[float] = None,
                 regret_floor: Optional[float] = None, board=None, hand_weights=None,
                 tree: Optional[BettingTree] = None, threads: int = 1, ray_address: Optional[str] = None,
                 boards_per_iteration: Optional[int] = None, regret_storage: str = "int32", average: str = "preflop",
                 discount_every: int = 100, discount_until: int = 10_000, regret_ceiling: float = INT32_CEILING,
                 allocate: bool = True, sampler: str = "kernel", table_lookups: bool = True):
        super().__init__(game, bets, raise_cap, abstraction, seed, deals_per_board, prune, prune_warmup,
                         prune_probability, prune_threshold, regret_floor, board, hand_weights, tree, _allocate=False)
        if int(threads) < 1:
            raise BlueprintError(f"threads must be at least 1, got {threads}")
        if regret_storage not in REGRET_STORAGES:
            raise BlueprintError(f"regret storage must be one of {', '.join(REGRET_STORAGES)}, got {regret_storage!r}")
        if int(discount_every) < 1 or int(discount_until) < 0:
            raise BlueprintError(f"discount_every must be >= 1 and discount_until >= 0 iterations, got "
                                 f"{discount_every} and {discount_until}")
        if not regret_ceiling > 0 or (regret_storage == "int32" and regret_ceiling > 2**31 - 1):
            raise BlueprintError(f"regret_ceiling must be positive (and below 2^31 for int32), got {regret_ceiling}")
        if regret_storage == "int32" and self.regret_floor < -(2**31 - 1):
            raise BlueprintError(f"regret_floor {self.regret_floor} does not fit int32 regrets")
        if sampler not in SAMPLERS:
            raise BlueprintError(f"sampler must be one of {', '.join(SAMPLERS)}, got {sampler!r}")
        if int(self.worker.max_actions) > 256:
            raise BlueprintError("more than 256 actions at a node; use fewer bet sizes")
        self.threads = int(threads)
        self.workers = self.threads
        self.ray_address = ray_address
        self.boards_per_iteration = int(boards_per_iteration or self.threads)
        if self.boards_per_iteration < 1:
            raise BlueprintError("boards_per_iteration must be at least 1")
        self.regret_storage = regret_storage
        self.average = average
        self.discount_every = int(discount_every)
        self.discount_until = int(discount_until)
        self.regret_ceiling = float(regret_ceiling)
        self.sampler = sampler
        self.tables = self._bucket_tables() if sampler == "kernel" and table_lookups else None
        self.slot, self.total, self.avg_slot, self.avg_total = table_layout(self.tree, self.num_buckets, average)
        self.regrets = np.zeros(0, dtype=np.int32)
        self.strategy_sum = np.zeros(0, dtype=np.float32)
        if allocate:
            self.allocate()
        self._pool = ThreadPoolExecutor(self.threads) if self.threads > 1 and ray_address is None else None
        self._ray_actors = None

    # ------------------------------------------------------------------ sizes
    def estimate(self) -> Dict[str, int]:
        """:func:`estimate_bytes` of this trainer's tables (before or after :meth:`allocate`)."""
        return estimate_bytes(self.tree, self.num_buckets, self.regret_storage, self.average)

    def allocate(self) -> None:
        """Allocate the zeroed tables (the CLI calls it after checking :meth:`estimate` against memory)."""
        dtype = np.int32 if self.regret_storage == "int32" else np.float32
        self.regrets = np.zeros(self.total, dtype=dtype)
        self.strategy_sum = np.zeros(max(self.avg_total, 1), dtype=np.float32)

    def memory_bytes(self) -> int:
        """Bytes of the allocated regret and strategy-sum arrays."""
        return int(self.regrets.nbytes + self.strategy_sum.nbytes)

    # ------------------------------------------------------------------ iterations
    def _bucket_tables(self):
        """The kernel's view of the abstraction's bucket tables, or ``None`` when it has none."""
        get = getattr(self.abstraction, "bucket_tables", None)
        tables = get() if callable(get) else None
        if tables is None:
            return None
        indexer = holdem_indexer()
        return _kernel().BucketTables(tables, [indexer.index_tables(r) for r in range(4)], self.num_buckets)

    @property
    def kernel_lookups(self) -> bool:
        """True when boards, deals and bucket lookups all run in the kernel (threads scale)."""
        return self.tables is not None

    def _kernel_args(self):
        t = self.tree
        return (t.kind, t.player, t.round, t.child_start, t.num_children, t.spent, self.slot, self.avg_slot,
                self.worker.max_actions, self.worker.max_depth)

    def _run(self, regrets, sums, it_start: int, it_end: int, first: int, step: int, roots, boards=None,
             **given) -> int:
        """:func:`run_boards` over iterations ``[it_start, it_end)`` and boards ``first, first + step, ... <
        boards`` (default ``boards_per_iteration``)."""
        return int(_kernel().run_boards(
            *self._kernel_args(), regrets, sums, self.seed, it_start, it_end,
            self.boards_per_iteration if boards is None else boards, first, step,
            self.deals_per_board, self.prune_warmup, self.prune_probability if self.prune else 0.0,
            self.prune_threshold, self.regret_floor, self.regret_ceiling, fixed_board=self.board,
            hand_weights=self.hand_weights, root_values=roots, **given))

    def run_board(self, it: int, b: int, regrets: np.ndarray, sums: np.ndarray, root_values: np.ndarray,
                  board: Optional[np.ndarray] = None) -> int:
        """Run board ``b`` of iteration ``it`` into the given tables, in place, and return the nodes visited.

        Args:
            it: iteration number (1-based; it seeds the board's deals and decides pruning).
            b: the board's index within the iteration, ``0 <= b < boards_per_iteration``.
            regrets: the regret table, shape ``(total,)``, int32 or float32 (chips) as ``regret_storage``
                (this trainer's :attr:`regrets` or a private copy, e.g. a Ray actor's).
            sums: the strategy-sum table, float32 of shape ``(max(avg_total, 1),)``.
            root_values: float64[2], the root values (chips, per seat) are added to it.
            board: uint8[5], board ``b`` of :meth:`boards_of` ``(it)``: required by the ``"numpy"`` sampler,
                ignored by the ``"kernel"`` sampler (it draws the board itself, or plays the fixed ``board``).

        Raises:
            BlueprintError: the ``"numpy"`` sampler without ``board``.
        """
        if self.sampler == "numpy":
            if board is None:
                raise BlueprintError("run_board: the numpy sampler needs the board (boards_of(it)[b])")
            prune_p = self.prune_probability if self.prune and it > self.prune_warmup else 0.0
            return self._numpy_board(it, b, board, prune_p, regrets, sums, root_values)
        if self.tables is not None:
            return self._run(regrets, sums, it, it + 1, b, 1, root_values, boards=b + 1, tables=self.tables)
        board = self.board if self.board is not None else _kernel().sample_board(self.seed, it, b)
        bucket, strength = self.board_arrays(board)
        return self._run(regrets, sums, it, it + 1, b, 1, root_values, boards=b + 1, bucket=bucket,
                         strength=strength)

    def _numpy_board(self, it: int, b: int, board: np.ndarray, prune_p: float, regrets, sums, root_values) -> int:
        """:meth:`run_board` with the numpy sampler of earlier files."""
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, it, b, 0x5EED]))
        deals = sample_deals(rng, board, self.deals_per_board, self.hand_weights)
        kernel_seed = int(rng.integers(0, 2**63))
        bucket, strength = self.board_arrays(board)
        t = self.tree
        return int(_kernel().iterate_board(
            t.kind, t.player, t.round, t.child_start, t.num_children, t.spent, self.slot, self.avg_slot,
            self.worker.max_actions, self.worker.max_depth, bucket, strength, deals, regrets, sums, kernel_seed,
            prune_p, self.prune_threshold, self.regret_floor, self.regret_ceiling, root_values))

    def boards_of(self, it: int) -> np.ndarray:
        """uint8[boards_per_iteration, 5]: the boards of iteration ``it``."""
        if self.board is not None:
            return np.repeat(self.board[None, :], self.boards_per_iteration, axis=0)
        if self.sampler == "numpy":
            return sample_boards(self.seed, it, self.boards_per_iteration)
        return np.stack([_kernel().sample_board(self.seed, it, b) for b in range(self.boards_per_iteration)])

    def _segment_end(self, it: int, end: int) -> int:
        """Last iteration of the run that starts at ``it``: ``end``, or the next discount before it."""
        if self.discount_until > 0 and it <= self.discount_until:
            due = -(-it // self.discount_every) * self.discount_every
            return min(end, due)
        return end

    def iterate(self, count: int = 1) -> None:
        """Run ``count`` more iterations (each followed by its discount, when one is due).

        With bucket tables in the kernel the iterations between two discounts run in one kernel call per
        thread (each thread takes every ``threads``-th board of each iteration); otherwise one iteration at a
        time.  One thread gives the same tables either way."""
        if self.regrets.size != self.total:
            raise BlueprintError("the tables are not allocated (call allocate())")
        end = self.stats.iterations + int(count)
        while self.stats.iterations < end:
            it = self.stats.iterations + 1
            start = time.perf_counter()
            if self.tables is not None and self.ray_address is None:
                stop = self._segment_end(it, end)
                nodes = self._table_segment(it, stop)
            else:
                stop = it
                nodes = self._iteration(it)
            self.stats.nodes += nodes
            self._maybe_discount(stop)
            self.stats.seconds += time.perf_counter() - start
            self.stats.iterations = stop

    def _table_segment(self, it: int, stop: int) -> int:
        """Iterations ``it .. stop`` with every lookup in the kernel (one call per thread, no GIL held)."""
        workers = min(self.threads, self.boards_per_iteration)
        if self._pool is None or workers == 1:
            return self._run(self.regrets, self.strategy_sum, it, stop + 1, 0, 1, self.root_value_sum,
                             tables=self.tables)
        roots = [np.zeros(2) for _ in range(workers)]
        jobs = [self._pool.submit(self._run, self.regrets, self.strategy_sum, it, stop + 1, j, workers, roots[j],
                                  tables=self.tables) for j in range(workers)]
        nodes = sum(j.result() for j in jobs)
        for r in roots:
            self.root_value_sum += r
        return nodes

    def _iteration(self, it: int) -> int:
        """One iteration board by board (Ray, abstractions without tables, or the numpy sampler)."""
        if self.ray_address is not None:
            return self._ray_iteration(it)
        boards = self.boards_of(it) if self.sampler == "numpy" else None

        def job(b: int, roots) -> int:
            return self.run_board(it, b, self.regrets, self.strategy_sum, roots,
                                  None if boards is None else boards[b])
        B = self.boards_per_iteration
        if self._pool is not None and B > 1:
            # the root-value sums are not shared between threads (they would race); each board keeps its own
            roots = [np.zeros(2) for _ in range(B)]
            jobs = [self._pool.submit(job, b, roots[b]) for b in range(B)]
            nodes = sum(j.result() for j in jobs)
            for r in roots:
                self.root_value_sum += r
            return nodes
        return sum(job(b, self.root_value_sum) for b in range(B))

    def discount_factor(self, it: int) -> Optional[float]:
        """The Linear-CFR factor applied after iteration ``it`` (``None`` when no discount is due)."""
        if self.discount_until <= 0 or it > self.discount_until or it % self.discount_every:
            return None
        k = it // self.discount_every
        return k / (k + 1.0)

    def _maybe_discount(self, it: int) -> None:
        f = self.discount_factor(it)
        if f is None:
            return
        k = _kernel()
        jobs = [(k.discount_int32 if self.regrets.dtype == np.int32 else k.discount_float32, self.regrets),
                (k.discount_float32, self.strategy_sum)]
        if self._pool is None:
            for fn, values in jobs:
                fn(values, f)
            return
        # a pass over the whole table (1.5 GiB at 169/1000/1000/1000 with rich bets) that every thread waits
        # for: split over the threads (the kernel releases the GIL; the result is elementwise, the same)
        parts = [self._pool.submit(fn, chunk, f) for fn, values in jobs
                 for chunk in np.array_split(values, self.threads)]
        for part in parts:
            part.result()

    # ------------------------------------------------------------------ Ray
    def _ray_iteration(self, it: int) -> int:
        ray = import_ray(BlueprintError)
        if self._ray_actors is None:
            join_ray(self.ray_address, self.threads, BlueprintError)   # the session stays for the trainer's life
            actor_cls = ray.remote(num_cpus=1)(_RayPluribusWorker)
            spec = None if self.abstraction_spec.startswith("object:") else self.abstraction_spec
            payload = None if spec is not None else self.abstraction
            settings = self._settings()
            self._ray_actors = [actor_cls.remote(self.tree, spec, payload, self.seed, settings)
                                for _ in range(self.threads)]
        reg_ref, sum_ref = ray.put(self.regrets), ray.put(self.strategy_sum)
        boards = self.boards_of(it)
        index = np.arange(len(boards))
        parts = [p for p in np.array_split(index, min(len(self._ray_actors), len(boards))) if p.size]
        futures = [actor.run.remote(it, boards[p], p, reg_ref, sum_ref)
                   for actor, p in zip(self._ray_actors, parts)]
        results = ray.get(futures)
        wide = self.regrets.astype(np.int64 if self.regrets.dtype == np.int32 else np.float64)
        sums = self.strategy_sum.astype(np.float64)
        nodes = 0
        for d_reg, d_sum, n, roots in results:  # actor order: independent of timing
            wide += d_reg
            sums += d_sum
            nodes += n
            self.root_value_sum += roots
        if wide.dtype == np.int64:
            np.clip(wide, int(np.ceil(self.regret_floor)), int(self.regret_ceiling), out=wide)
        else:
            np.clip(wide, self.regret_floor, self.regret_ceiling, out=wide)
        self.regrets[:] = wide
        self.strategy_sum[:] = sums
        return nodes

    # ------------------------------------------------------------------ strategy and files
    def _settings(self) -> Dict:
        return {"deals_per_board": self.deals_per_board, "prune": self.prune, "prune_warmup": self.prune_warmup,
                "prune_probability": self.prune_probability, "prune_threshold": self.prune_threshold,
                "regret_floor": self.regret_floor, "regret_ceiling": self.regret_ceiling,
                "regret_storage": self.regret_storage, "average": self.average,
                "discount_every": self.discount_every, "discount_until": self.discount_until,
                "sampler": self.sampler, "board": None if self.board is None else [int(c) for c in self.board],
                "hand_weights": None if self.hand_weights is None else self.hand_weights.tolist()}

    def header(self) -> Dict:
        h = super().header()
        h.pop("mccfr", None)
        h["pluribus"] = self._settings()
        h["boards_per_iteration"] = self.boards_per_iteration
        return h

    def strategy_chunk(self, start: int, stop: int) -> np.ndarray:
        """float32 entries ``[start, stop)`` of the full-layout strategy array a file stores: strategy sums at the
        averaged nodes, the current strategy (regret matching) elsewhere."""
        out = np.zeros(stop - start, dtype=np.float32)
        t = self.tree
        _kernel().current_strategy_into(self.regrets, t.kind, t.num_children, self.slot, self.avg_slot, t.round,
                                        np.asarray(self.num_buckets, dtype=np.int32), out, start, stop)
        for n in np.flatnonzero(self.avg_slot >= 0):
            s0 = int(self.slot[n])
            size = int(self.num_buckets[t.round[n]] * t.num_children[n])
            lo, hi = max(s0, start), min(s0 + size, stop)
            if lo < hi:
                a0 = int(self.avg_slot[n])
                out[lo - start:hi - start] = self.strategy_sum[a0 + lo - s0:a0 + hi - s0]
        return out

    def average_strategy(self, node: int, buckets: np.ndarray) -> np.ndarray:
        """float64[len(buckets), actions]: the strategy a file of this trainer plays at ``node`` (normalised sums
        where averaged, the current strategy elsewhere; uniform where never reached)."""
        n = int(node)
        A, B = int(self.tree.num_children[n]), int(self.num_buckets[self.tree.round[n]])
        s0 = int(self.slot[n])
        rows = self.strategy_chunk(s0, s0 + A * B).reshape(B, A).astype(np.float64)[np.asarray(buckets, dtype=np.int64)]
        total = rows.sum(axis=1, keepdims=True)
        return np.where(total > 0, rows / np.where(total > 0, total, 1.0), 1.0 / A)

    def full_strategy(self) -> np.ndarray:
        """float32[total]: the strategy array of a file (:meth:`strategy_chunk` of everything)."""
        return self.strategy_chunk(0, self.total)

    def save(self, path: str, strategy_only: bool = False) -> None:
        """Write a checkpoint atomically: tree, ``regrets`` (int32 or float32), ``strategy_sum`` (float32, full
        layout: sums of averaged nodes, current strategy elsewhere), counters.  The strategy array is written in
        chunks, so saving needs no second full-size array."""
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        header = self.header()
        header["strategy_only"] = bool(strategy_only)
        chunk = 1 << 22
        with atomic_open(path, "wb") as f:
            with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
                _write_member(zf, "__header__", np.frombuffer(json.dumps(header).encode(), dtype=np.uint8))
                for name in TREE_FIELDS:
                    _write_member(zf, f"tree_{name}", getattr(self.tree, name))
                with zf.open("strategy_sum.npy", "w", force_zip64=True) as out:
                    np.lib.format.write_array_header_2_0(
                        out, {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)), "fortran_order": False,
                              "shape": (self.total,)})
                    for s in range(0, self.total, chunk):
                        out.write(self.strategy_chunk(s, min(s + chunk, self.total)).tobytes())
                if not strategy_only:
                    _write_member(zf, "regrets", self.regrets)
                    _write_member(zf, "averaged_sums", self.strategy_sum)

    @classmethod
    def load(cls, path: str, abstraction=None, threads: int = 1, ray_address: Optional[str] = None,
             boards_per_iteration: Optional[int] = None, workers: Optional[int] = None) -> "PluribusTrainer":
        """Resume a pluribus checkpoint (same refusals as :meth:`BlueprintTrainer.load`; other algorithms'
        files are refused)."""
        header, data, tree, spec = cls._open_for_resume(path, abstraction, arrays=("regrets", "averaged_sums"))
        m = sampling_settings(path, header, "pluribus", "pluribus")
        try:
            trainer = cls(abstraction=spec, tree=tree, threads=workers or threads,
                          **sampled_trainer_keywords(header, m),
                          ray_address=ray_address,
                          boards_per_iteration=boards_per_iteration or (
                              (workers or threads) if (workers or threads) > 1 else header["boards_per_iteration"]),
                          regret_storage=m["regret_storage"], average=m["average"],
                          discount_every=m["discount_every"], discount_until=m["discount_until"],
                          regret_ceiling=m["regret_ceiling"], allocate=False,
                          sampler=m.get("sampler", "numpy"))  # files from before the kernel sampler: numpy
        except (KeyError, TypeError) as exc:
            raise BlueprintError(f"{path}: damaged pluribus settings in the header ({exc})") from None
        check_abstraction(path, header, trainer.abstraction_id, trainer.num_buckets)
        regrets, sums = data.get("regrets"), data.get("averaged_sums")
        dtype = np.int32 if trainer.regret_storage == "int32" else np.float32
        if (regrets is None or sums is None or regrets.dtype != dtype or regrets.shape != (trainer.total,)
                or sums.dtype != np.float32 or sums.shape != (max(trainer.avg_total, 1),)):
            raise BlueprintError(f"{path}: regret / strategy-sum arrays do not fit the tree and abstraction "
                                 f"({trainer.total} {trainer.regret_storage} regrets; corrupt file)")
        trainer.regrets = np.ascontiguousarray(regrets)
        trainer.strategy_sum = np.ascontiguousarray(sums)
        trainer.stats = stats_from_header(header)
        return trainer


def _write_member(zf: zipfile.ZipFile, name: str, array: np.ndarray) -> None:
    with zf.open(f"{name}.npy", "w", force_zip64=True) as out:
        np.lib.format.write_array(out, np.ascontiguousarray(array), allow_pickle=False)


class _RayPluribusWorker:
    """A Ray actor: builds the abstraction once, runs boards on private copies of the tables, returns deltas."""

    def __init__(self, tree, spec, abstraction, seed, settings):
        ab = abstraction if abstraction is not None else abstraction_from_spec(spec)
        s = dict(settings)
        self.trainer = PluribusTrainer(
            game=tree.game_string, bets=tree.bets, raise_cap=tree.raise_cap, abstraction=ab, seed=seed, tree=tree,
            deals_per_board=s["deals_per_board"], prune=s["prune"], prune_warmup=s["prune_warmup"],
            prune_probability=s["prune_probability"], prune_threshold=s["prune_threshold"],
            regret_floor=s["regret_floor"], board=s["board"], hand_weights=s["hand_weights"],
            regret_storage=s["regret_storage"], average=s["average"], discount_every=s["discount_every"],
            discount_until=s["discount_until"], regret_ceiling=s["regret_ceiling"], allocate=False,
            sampler=s.get("sampler", "numpy"))

    def run(self, it, boards, indices, regrets, sums):
        reg, sm = regrets.copy(), sums.copy()
        roots = np.zeros(2)
        nodes = 0
        for b, board in zip(indices, boards):
            nodes += self.trainer.run_board(it, int(b), reg, sm, roots, board)
        wide = np.int64 if reg.dtype == np.int32 else np.float64
        return (np.subtract(reg, regrets, dtype=wide), np.subtract(sm, sums, dtype=np.float64), nodes, roots)
