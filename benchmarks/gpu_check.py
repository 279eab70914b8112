"""Every CUDA path of cfrkit measured against the CPU path on the same work, in one run, within a time budget.

    python benchmarks/gpu_check.py --out $OUT/gpu_check.json            # on a GPU machine (about 8 minutes)
    python benchmarks/gpu_check.py --device cpu --tiny --out check.json  # the form the test suite runs (seconds)
    bash benchmarks/gpu_check.sh                                         # a fresh GPU machine: install, then the check

Sections (each a child process with its own time budget, so a slow or hung section is cut off and reported while
the others still run; each writes its rows as it measures them, so a cut-off section keeps what it measured;
``--tiny`` runs them in this process, budgets then cooperative, unless ``--isolate yes``):

* ``range_solver``: ``RangeSolver(backend="torch")`` (DCFR, float32) on the postflop-solver spots of
  ``benchmarks/range_solver.py`` -- the river spot as a batch of copies (iterations/s per batch size) and alone (time
  to 0.3% of the pot), the turn spot alone (iterations/s, time to 0.3% within the section's budget) -- beside the
  compiled ``BoardRangeSolver`` (DCFR, float32, all CPU threads) on the same spot;
* ``datagen``: the hold'em datagen's torch path (``solve_situations(backend="torch")``) on river / turn / flop
  situations at 1000 / 300 / 200 iterations in groups of 10 (one board and pot each), batch sizes swept up to what
  the card's free memory holds, all groups of a batch in one batched solve per tree shape
  (:mod:`cfrkit.solvers.public.torch_batch`: ``MultiBoardRiverSolver`` on the river, ``MultiBoardLeafSolver`` on the
  turn / flop; batch 10 is one group, the rate of the per-group solve the batching replaced), situations/s; the
  compiled CPU path (``backend="board"``) on a subset of the same situations, its
  rate, and the range-weighted mean |difference| of the two paths' targets (fraction of the pot) on that subset;
* ``train``: value-net training (``train_on_arrays``, DeepStack's 3 x 500 net with BatchNorm, batch 1000) on
  random data of the river (500 buckets) / turn / flop (1000 buckets) nets' shapes: samples/s and time per epoch
  on the device (on CUDA also with TF32 matrix products) and on the CPU (fewer samples there; per-epoch time
  scaled to the device's sample count, marked);
* ``learners``: Hanabi Rainbow and IPPO (environment steps/s, gradient updates/s) and SymmToM MADDPG
  (updates/s), the rollouts and the updates timed apart, on the device and on the CPU;
* ``drl_br``: DRL-BR (``DQNBestResponse`` against always-call on Leduc): learner decisions (steps) per second.

A rate that could not be measured in full within its budget is extrapolated from a shorter timed run and marked
``"extrapolated": true`` (the table shows ``~``); the datagen rows time the set-up and the iterations apart and
extrapolate the iterations only (the set-up counts once, as in a real datagen run).  A section that cannot run at
all (no CUDA for a CUDA run, a missing package, the global budget spent) is recorded with its reason, in the JSON
and the table.  Timing: CUDA
work is synchronised (``torch.cuda.synchronize``) before every clock read; ``perf_counter`` wall seconds.
Exit status 0 when every asked-for section ran, 1 when one failed, was cut off or was skipped (the JSON and the
table are written either way), 2 for bad arguments.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

SECTIONS = ("range_solver", "datagen", "train", "learners", "drl_br")
# seconds per section on a GPU (sum 440 of the default 480 global budget); --tiny uses TINY_BUDGETS
BUDGETS = {"range_solver": 90, "datagen": 170, "train": 60, "learners": 75, "drl_br": 45}
TINY_BUDGETS = {"range_solver": 20, "datagen": 40, "train": 15, "learners": 15, "drl_br": 10}
DATAGEN_ITERATIONS = {"river": 1000, "turn": 300, "flop": 200}
TINY_ITERATIONS = {"river": 3, "turn": 2, "flop": 2}
TARGET_FRACTION = 0.003  # time to 0.3% of the pot


class CheckError(ValueError):
    """Bad command-line input (one line)."""


# ============================================================================== helpers for the sections
class Ctx:
    """What a section gets: the device, tiny mode, its deadline and ``emit(row)``."""

    def __init__(self, device: str, tiny: bool, budget: float, lines: str, threads: int):
        import torch

        self.torch = torch
        self.device = device
        self.dev = torch.device(device)
        self.tiny = tiny
        self.t0 = time.perf_counter()
        self.deadline = self.t0 + budget
        self.lines = lines
        self.threads = threads
        self.cuda = self.dev.type == "cuda"
        self.clock = time.perf_counter  # timed()'s clock (wall); a CPU-seconds study may put time.process_time here

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def sync(self, dev=None) -> None:
        d = self.dev if dev is None else self.torch.device(dev)
        if d.type == "cuda":
            self.torch.cuda.synchronize(d)

    def emit(self, row: dict) -> None:
        with open(self.lines, "a") as f:
            f.write(json.dumps({"row": row}, default=float) + "\n")

    def fail(self, item: str, exc: BaseException) -> None:
        """Report ``item`` as failed (one line: the exception) and go on with the section."""
        msg = str(exc).splitlines()[0] if str(exc) else ""
        self.emit({"item": item, "status": "failed", "reason": f"{type(exc).__name__}: {msg}",
                   "traceback": traceback.format_exc()})

    def devices(self):
        """The device under test, then the CPU as the reference (once when they are the same)."""
        return [self.device] if self.dev.type == "cpu" else [self.device, "cpu"]


def timed(ctx: Ctx, fn, device=None):
    """``(result, seconds by ctx.clock: wall unless set)`` of ``fn()``, CUDA synchronised before and after."""
    ctx.sync(device)
    t0 = ctx.clock()
    out = fn()
    ctx.sync(device)
    return out, ctx.clock() - t0


def free_bytes(ctx: Ctx) -> float:
    if ctx.cuda:
        return float(ctx.torch.cuda.mem_get_info(ctx.dev)[0])
    return float(2 << 30)  # CPU runs: the shared machines' per-process share


# ============================================================================== range solver
def section_range_solver(ctx: Ctx) -> None:
    import torch

    from cfrkit.solvers.public.board_range_cfr import BoardRangeSolver
    from cfrkit.solvers.public.postflop_game import PostflopPublicGame
    from cfrkit.solvers.public.tree import RangeSolver, build_public_tree
    from range_solver import SPOTS

    spots = ["river"] if ctx.tiny else ["river", "turn"]
    if ctx.tiny:
        ctx.emit({"item": "turn spot", "status": "skipped", "reason": "--tiny: the turn tree (11,337 nodes) takes "
                  "minutes to set up on a shared CPU"})
    for spot in spots:
        try:
            game = PostflopPublicGame(**SPOTS[spot])
            tree = build_public_tree(game)
            pot = tree.root.pot
            share = ctx.left() / (len(spots) - spots.index(spot))
            # compiled path: iterations/s and time to 0.3% of the pot
            comp = BoardRangeSolver(tree, algorithm="dcfr", dtype="float32", threads=ctx.threads)
            hit, it_limit = None, (4 if ctx.tiny else 400)
            seconds = 0.0
            while comp.iterations < it_limit and seconds < 0.25 * share:
                _, dt = timed(ctx, lambda: comp.run(10 if not ctx.tiny else 2), "cpu")
                seconds += dt
                if hit is None and comp.exploitability() <= TARGET_FRACTION * pot:
                    hit = (comp.iterations, seconds)
                    break
            compiled = {"path": f"compiled BoardRangeSolver DCFR float32, {ctx.threads} threads",
                        "iterations_per_second": comp.iterations / seconds,
                        "iterations_to_target": hit[0] if hit else None, "seconds_to_target": hit[1] if hit else None,
                        "exploitability_fraction": comp.exploitability() / pot, "iterations": comp.iterations}
            # torch path, batch sweep (river) and alone (time to target)
            batches = [1] if spot == "turn" else ([1, 2] if ctx.tiny else [1, 16, 128, 512])
            sweep = []
            for B in batches:
                if ctx.left() < 0.3 * share and sweep:
                    sweep.append({"batch": B, "status": "skipped", "reason": "section budget"})
                    continue
                ranges = np.broadcast_to(game.hand_mask(tree.root.board) / 1.0, (B, 2, tree.num_hands)).copy()
                try:
                    s = RangeSolver(tree, ranges=ranges, algorithm="dcfr", backend="torch", device=ctx.device,
                                    dtype=torch.float32)
                    timed(ctx, lambda: s.run(1))  # warm-up (kernels, allocator)
                    n = 2 if ctx.tiny else 5
                    _, dt = timed(ctx, lambda: s.run(1 + n))
                    per = dt / n
                    sweep.append({"batch": B, "iterations_per_second": 1.0 / per,
                                  "spot_iterations_per_second": B / per})
                except torch.cuda.OutOfMemoryError as exc:  # noqa: PERF203 (a size too large is a result, not an error)
                    sweep.append({"batch": B, "status": "out of memory", "reason": str(exc).splitlines()[0]})
                    break
                del s
            s = RangeSolver(tree, algorithm="dcfr", backend="torch", device=ctx.device, dtype=torch.float32)
            hit_t, seconds, check = None, 0.0, (2 if ctx.tiny else 10)
            expl = float("nan")
            while s.iterations < it_limit and ctx.left() > 0.1 * share:
                _, dt = timed(ctx, lambda: s.run(s.iterations + check))
                seconds += dt
                expl = float(s.exploitability()[0])
                if expl <= TARGET_FRACTION * pot:
                    hit_t = (s.iterations, seconds)
                    break
            torch_row = {"path": f"RangeSolver torch DCFR float32 on {ctx.device}", "batch_sweep": sweep,
                         "iterations_per_second": s.iterations / seconds if seconds else None,
                         "iterations_to_target": hit_t[0] if hit_t else None,
                         "seconds_to_target": hit_t[1] if hit_t else None, "iterations": s.iterations,
                         "exploitability_fraction": expl / pot,
                         "note": None if hit_t else f"0.3% not reached within the budget ({s.iterations} iterations)"}
            ctx.emit({"item": f"{spot} spot", "nodes": len(tree), "pot": pot, "torch": torch_row, "compiled": compiled})
        except Exception as exc:  # noqa: BLE001 (reported as this item's row; the next item runs)
            ctx.fail(f"{spot} spot", exc)


# ============================================================================== datagen
def _weighted(a, b, w) -> float:
    return float((np.abs(a - b) * w).sum() / w.sum())


PROBE_ITERATIONS = 2     # first iterations of a datagen solve, timed apart (cold kernels, the allocator's first blocks)
STEADY_ITERATIONS = 4    # then these, timed: the per-iteration cost the rest of the iterations is extrapolated from


def _datagen_point(ctx: Ctx, game, sizing, sit, it: int, skip: int, leaf_fn, end: float) -> dict:
    """One batch size of the torch datagen path: the work of ``solve_situations(backend="torch")`` (the same trees,
    batches and solvers) in stages timed apart -- the trees (CPU), then per batch of
    :func:`~cfrkit.solvers.public.torch_batch.plan_batches` (one per tree shape that fits memory) the solver's set-up
    (host work: showdown indices, chance masks, all-in equity matrices, leaf bucket ids; the copies to the device),
    the first ``PROBE_ITERATIONS`` iterations, ``STEADY_ITERATIONS`` more (the per-iteration cost), the rest of the
    iterations and the averaged root values back on the host.  When the rest does not fit before ``end`` it is
    extrapolated from the per-iteration cost (marked ``extrapolated``): the set-up counts once, as in a real datagen
    run.  ``naive_extrapolation_seconds``: what the first form of this check reported, (trees + set-up + probe)
    x ``it / PROBE_ITERATIONS``, which multiplies the set-up by the iteration count (150 on the turn)."""
    from cfrkit.solvers.public.torch_batch import MultiBoardLeafSolver, MultiBoardRiverSolver, plan_batches
    from cfrkit.value_nets.holdem.datagen import street_tree
    from cfrkit.value_nets.holdem.situations import group_slices

    size = len(sit.contribs)
    river = sit.street == "river"
    slices = list(group_slices(sit.groups))
    trees, build = timed(ctx, lambda: [street_tree(game, sizing, sit.boards[i[0]], float(sit.contribs[i[0]]), not river)
                                       for i in slices], "cpu")
    ranges = [sit.ranges[i] for i in slices]
    batches = plan_batches(trees, ranges, ctx.device)
    setup = first = iterating = readback = per_iteration = 0.0
    steady = False       # whether a batch ran iterations past the probe (else no per-iteration cost is known)
    rest = 0.0           # extrapolated seconds of the iterations not run
    extrapolated = False
    for j, batch in enumerate(batches):
        def make():
            tr, rg = [trees[k] for k in batch], [ranges[k] for k in batch]
            if river:
                return MultiBoardRiverSolver(tr, rg, "cfr+", skip, device=ctx.device)
            return MultiBoardLeafSolver(tr, rg, leaf_fn, "cfr+", skip, device=ctx.device)

        solver, dt = timed(ctx, make)
        setup += dt
        _, dt = timed(ctx, lambda: solver.run(min(PROBE_ITERATIONS, it)))
        first += dt
        n0 = solver.iterations
        _, dt = timed(ctx, lambda: solver.run(min(n0 + STEADY_ITERATIONS, it)))
        iterating += dt
        per = dt / (solver.iterations - n0) if solver.iterations > n0 else 0.0
        steady = steady or solver.iterations > n0
        per_iteration += per
        left = it - solver.iterations
        # this batch's share of the time left (later batches need theirs)
        if ctx.tiny or left * per < 0.8 * (end - time.perf_counter()) / (len(batches) - j):
            _, dt = timed(ctx, lambda: solver.run(it))
            iterating += dt
            _, dt = timed(ctx, lambda: solver.average_root_values().double().cpu().numpy())
            readback += dt
        else:
            rest += left * per
            extrapolated = True
        del solver
    solve = setup + first + iterating + rest + readback
    naive = (build + setup + first) * it / PROBE_ITERATIONS
    # the stage estimate of the whole solve, kept when it ran in full too (its error is the extrapolation's)
    estimate = build + setup + first + max(0, it - PROBE_ITERATIONS) * per_iteration
    return {"batch": size, "groups": len(slices), "solves": len(batches), "extrapolated": extrapolated,
            "seconds": build + solve, "solve_seconds": solve, "situations_per_second": size / (build + solve),
            "solve_situations_per_second": size / solve, "tree_build_seconds": build, "setup_seconds": setup,
            "first_iterations_seconds": first, "per_iteration_seconds": per_iteration if steady else None,
            "stage_estimate_seconds": estimate if steady else None,
            "extrapolated_seconds": rest, "readback_seconds": readback,
            "naive_extrapolation_seconds": naive, "naive_situations_per_second": size / naive}


def section_datagen(ctx: Ctx) -> None:
    from cfrkit.games import load
    from cfrkit.solvers.public.torch_batch import bytes_per_row, bytes_per_tree
    from cfrkit.value_nets.holdem.datagen import LEAF_STREET, sizing_levels, solve_situations, street_tree
    from cfrkit.value_nets.holdem.situations import sample_situations
    from deepstack_datagen_rate import random_nets

    game = load("holdem")
    stack = float(min(game.definition.stack))
    sizing = sizing_levels(None)
    iters = TINY_ITERATIONS if ctx.tiny else DATAGEN_ITERATIONS
    nets = {d: random_nets(d, 0) for d in dict.fromkeys([ctx.device, "cpu"])}
    streets = ("river", "turn") if ctx.tiny else ("river", "turn", "flop")
    if ctx.tiny:
        ctx.emit({"item": "datagen flop", "status": "skipped", "reason": "--tiny: a flop group's all-in equity "
                  "matrices take tens of CPU seconds (tests/test_holdem_datagen_torch.py and the flop tests cover it)"})
    for k, street in enumerate(streets):
        try:
            share = ctx.left() / (len(streets) - k)
            end = time.perf_counter() + share
            it = iters[street]
            skip = it // 2
            leaf = LEAF_STREET[street]
            fn = {d: (nets[d].leaf_values(leaf) if leaf else None) for d in nets}
            rng = np.random.default_rng([11, k])
            row = {"item": f"datagen {street}", "iterations": it, "skip": skip, "sweep": [],
                   "nets": "random weights (small preset's shape); rates only"}
            # torch path: a warm-up solve, then batch sizes up to what the card's memory holds
            warm = sample_situations(street, 2, rng, group=2, stack=stack)
            solve_situations(game, warm, 2, 1, leaf_values=fn[ctx.device], backend="torch", device=ctx.device)
            # rows that fit: the largest tree shape (a mid pot), its all-in matrices spread over a group of 10
            item = 4 if ctx.cuda else 8
            probe_tree = street_tree(game, sizing, warm.boards[0], 1000.0, street != "river")
            per_row = bytes_per_row(probe_tree, item) + bytes_per_tree(probe_tree, item) / 10
            cap = int(0.6 * free_bytes(ctx) // per_row)
            row["rows_that_fit"] = cap
            if street == "river":
                sizes = [10, 20] if ctx.tiny else [s for s in (1000, 4000, 16000, 64000) if s <= cap] or [max(10, cap)]
            elif ctx.tiny:
                sizes = [2, 4]      # one group of 2, then two groups batched
            else:   # flop: each board's all-in matrices cost CPU seconds (the same per board on either path)
                grid = (10, 50, 200, 800, 3200) if street == "turn" else (10, 30, 100)
                sizes = [s for s in grid if s <= cap] or [10]
            best = None
            for size in sizes:
                if not ctx.tiny and end - time.perf_counter() < 0.35 * share and row["sweep"]:
                    row["sweep"].append({"batch": size, "status": "skipped", "reason": "section budget"})
                    continue
                sit, sample_secs = timed(ctx, lambda: sample_situations(
                    street, size, rng, group=2 if ctx.tiny and street != "river" else 10, stack=stack), "cpu")
                try:
                    entry = _datagen_point(ctx, game, sizing, sit, it, skip, fn[ctx.device], end)
                    entry["sampling_seconds"] = sample_secs  # the situations themselves (CPU; not in the rate)
                except ctx.torch.cuda.OutOfMemoryError as exc:  # noqa: PERF203 (a size too large is a result)
                    row["sweep"].append({"batch": size, "status": "out of memory", "reason": str(exc).splitlines()[0]})
                    break
                row["sweep"].append(entry)
                if best is None or entry["situations_per_second"] > best["situations_per_second"]:
                    best = entry
            row["torch_best"] = best
            # compiled CPU path on a subset of situations (one group), its rate and the targets' difference
            sub = sample_situations(street, 2 if ctx.tiny else 10, rng, group=10, stack=stack)
            cmp_it = it if (street == "river" or ctx.tiny) else min(it, 50)
            comp_kw = dict(leaf_values=fn["cpu"], backend="board", threads=ctx.threads)
            cold = None
            if cmp_it != it:   # the set-up apart: a cold short solve (all-in matrices into their cache), a warm one
                _, cold = timed(ctx, lambda: solve_situations(game, sub, PROBE_ITERATIONS, 1, **comp_kw), "cpu")
                _, warm = timed(ctx, lambda: solve_situations(game, sub, PROBE_ITERATIONS, 1, **comp_kw), "cpu")
            cvals, csecs = timed(ctx, lambda: solve_situations(game, sub, cmp_it, cmp_it // 2, **comp_kw), "cpu")
            tvals = solve_situations(game, sub, cmp_it, cmp_it // 2, leaf_values=fn[ctx.device], backend="torch",
                                     device=ctx.device)
            # at ``it`` iterations from a cold start: the cold short solve, then the per-iteration cost of the warm
            # solves for the rest (the set-up counted once, as in the torch sweep)
            full = csecs if cold is None else cold + (it - PROBE_ITERATIONS) * max(0.0, csecs - warm) / (
                cmp_it - PROBE_ITERATIONS)
            row["compiled"] = {"path": "compiled DCFR solve_many" if street == "river" else "BoardLeafSolver float32",
                               "situations": len(sub.contribs), "iterations": cmp_it, "seconds": csecs,
                               "situations_per_second_at_iterations": len(sub.contribs) / csecs,
                               "seconds_at_full_iterations": full,
                               "situations_per_second": len(sub.contribs) / full,
                               "cold_probe_seconds": cold, "extrapolated": cmp_it != it}
            row["targets_weighted_mean_abs_diff"] = _weighted(tvals, cvals, sub.ranges)
            row["targets_note"] = ("river: CFR+ averaged cfvs (torch) against DCFR average-strategy cfvs (compiled), "
                                   "two definitions of the target" if street == "river" else
                                   "same CFR+ iterates (compiled float32 against torch)") + f", {cmp_it} iterations"
            ctx.emit(row)
        except Exception as exc:  # noqa: BLE001 (reported as this item's row; the next item runs)
            ctx.fail(f"datagen {street}", exc)


# ============================================================================== value-net training
def section_train(ctx: Ctx) -> None:
    """Value-net training on random data of each net's shape: the device (on CUDA also with TF32 matrix products,
    ``torch.backends.cuda.matmul.allow_tf32``), then the CPU on fewer samples."""
    import tempfile

    import torch

    from cfrkit.value_nets.train import train_on_arrays

    shapes = {"river": 500, "turn": 1000, "flop": 1000}
    hidden = (32, 32) if ctx.tiny else (500, 500, 500)
    n_dev = 100 if ctx.tiny else 200_000
    n_cpu = 50 if ctx.tiny else 10_000
    rng = np.random.default_rng(0)
    runs = [(ctx.device, False)] + ([(ctx.device, True)] if ctx.cuda else []) + \
        ([("cpu", False)] if ctx.cuda else [])

    def train(x, y, mask, d, epochs):
        with tempfile.TemporaryDirectory() as tmp:
            return train_on_arrays(x, y, mask, os.path.join(tmp, "net.pt"), {"game": "holdem"}, hidden=hidden,
                                   epochs=epochs, batch_size=1000, batchnorm=True, progress=False,
                                   threads=ctx.threads, device=d)

    for k, (street, M) in enumerate(shapes.items()):
        try:
            if ctx.tiny:
                M = 20
            row = {"item": f"train {street} net", "buckets": M, "hidden": list(hidden), "batch": 1000}
            for d, tf32 in runs:
                label = d + ("+tf32" if tf32 else "")
                n = n_dev if d == ctx.device else n_cpu
                if ctx.left() < 5:
                    row[label] = {"status": "skipped", "reason": "section budget"}
                    continue
                x = rng.random((n, 2 * M + 1), dtype=np.float32)
                y = rng.standard_normal((n, 2 * M), dtype=np.float32) * 0.1
                mask = np.ones((n, 2 * M), dtype=np.float32)
                previous = torch.backends.cuda.matmul.allow_tf32
                torch.backends.cuda.matmul.allow_tf32 = tf32
                try:
                    if k == 0 and ctx.cuda and d == ctx.device and not tf32:
                        train(x[:2000], y[:2000], mask[:2000], d, 1)  # warm-up: CUDA context, cuBLAS handles
                    out, secs = timed(ctx, lambda: train(x, y, mask, d, 1 if ctx.tiny else 2), d)
                finally:
                    torch.backends.cuda.matmul.allow_tf32 = previous
                per_epoch = secs / out["epochs_run"]
                row[label] = {"samples": n, "epochs": out["epochs_run"], "seconds_per_epoch": per_epoch,
                              "samples_per_second": n * 0.9 / per_epoch, "tf32": tf32,
                              "seconds_per_epoch_at_device_samples": per_epoch * n_dev / n, "extrapolated": n != n_dev}
            ctx.emit(row)
        except Exception as exc:  # noqa: BLE001 (reported as this item's row; the next item runs)
            ctx.fail(f"train {street} net", exc)


# ============================================================================== learners
def _wrap_timer(ctx: Ctx, obj, name: str, acc: dict, device: str):
    orig = getattr(obj, name)

    def wrapped(*a, **k):
        ctx.sync(device)
        t0 = time.perf_counter()
        out = orig(*a, **k)
        ctx.sync(device)
        acc[name] = acc.get(name, 0.0) + time.perf_counter() - t0
        acc[name + "_calls"] = acc.get(name + "_calls", 0) + 1
        return out

    setattr(obj, name, wrapped)


def _learner_configs(tiny: bool):
    from cfrkit.games.hanabi.config import HanabiConfig
    from cfrkit.games.symmtom.core import SymmToMConfig

    hanabi = HanabiConfig(players=2, colors=1, ranks=2, hand_size=1, max_information_tokens=1,
                          max_life_tokens=1) if tiny else HanabiConfig()
    symm = SymmToMConfig(agents=2, width=4, pieces=2, steps=8) if tiny else SymmToMConfig()
    return hanabi, symm


def _rainbow(ctx: Ctx, per: float) -> dict:
    from cfrkit.agents.hanabi.learning.rainbow import RainbowSettings, RainbowTrainer

    tiny = ctx.tiny
    hanabi, _ = _learner_configs(tiny)
    row = {"item": "Rainbow (Hanabi)", "config": "tiny" if tiny else "full 2-player Hanabi, default settings"}
    for d in ctx.devices():
        s = RainbowSettings(num_envs=4, hidden=(32, 32), batch=32, updates=4, buffer=2000, warmup=64) if tiny else \
            RainbowSettings(warmup=2000)
        t = RainbowTrainer(hanabi, s, device=d)
        acc: dict = {}
        _wrap_timer(ctx, t, "_rollout", acc, d)
        _wrap_timer(ctx, t, "_update", acc, d)
        end = time.perf_counter() + per
        steps0 = 0
        while time.perf_counter() < end and (acc.get("_update_calls", 0) < (8 if tiny else 10 ** 9)):
            before = t.env_steps
            t.iterate()
            steps0 += t.env_steps - before
        row[d] = {"env_steps_per_second": steps0 / acc["_rollout"] if acc.get("_rollout") else None,
                  "updates_per_second": acc["_update_calls"] / acc["_update"] if acc.get("_update") else None,
                  "env_steps": steps0, "updates": acc.get("_update_calls", 0)}
    return row


def _ippo(ctx: Ctx, per: float) -> dict:
    from cfrkit.agents.hanabi.learning.ippo import IPPOSettings, IPPOTrainer

    tiny = ctx.tiny
    hanabi, _ = _learner_configs(tiny)
    row = {"item": "IPPO (Hanabi)", "config": "tiny" if tiny else "full 2-player Hanabi, default settings"}
    for d in ctx.devices():
        s = IPPOSettings(num_envs=8, hidden=(32,), minibatch=32, epochs=1) if tiny else IPPOSettings()
        t = IPPOTrainer(hanabi, s, device=d)
        acc: dict = {}
        _wrap_timer(ctx, t, "_rollout", acc, d)
        end = time.perf_counter() + per
        steps = updates = 0
        total = 0.0
        while time.perf_counter() < end and (not tiny or acc.get("_rollout_calls", 0) < 2):
            before = t.env_steps
            _, dt = timed(ctx, t.iterate, d)
            total += dt
            n = t.env_steps - before
            steps += n
            updates += s.epochs * -(-n // s.minibatch)  # minibatch steps of this iteration's decisions
        upd_time = total - acc.get("_rollout", 0.0)
        row[d] = {"env_steps_per_second": steps / acc["_rollout"] if acc.get("_rollout") else None,
                  "updates_per_second": updates / upd_time if upd_time > 0 else None,
                  "env_steps": steps, "updates": updates}
    return row


def _maddpg(ctx: Ctx, per: float) -> dict:
    from cfrkit.agents.symmtom.learning.maddpg import MADDPGSettings, MADDPGTrainer

    tiny = ctx.tiny
    _, symm = _learner_configs(tiny)
    row = {"item": "MADDPG (SymmToM)", "config": "tiny" if tiny else "default SymmToM (3 agents, width 6)"}
    for d in ctx.devices():
        s = MADDPGSettings(num_envs=4, hidden=16, batch=32, updates=2, buffer=500, warmup=32) if tiny else \
            MADDPGSettings(warmup=1000)
        t = MADDPGTrainer(symm, s, device=d)
        acc: dict = {}
        _wrap_timer(ctx, t, "play", acc, d)
        _wrap_timer(ctx, t, "update", acc, d)
        end = time.perf_counter() + per
        while time.perf_counter() < end and (not tiny or acc.get("update_calls", 0) < 4):
            t.iterate()
        row[d] = {"env_steps_per_second": t.env_steps / acc["play"] if acc.get("play") else None,
                  "updates_per_second": acc["update_calls"] / acc["update"] if acc.get("update") else None,
                  "updates": acc.get("update_calls", 0)}
    return row


def section_learners(ctx: Ctx) -> None:
    """Rainbow, IPPO, MADDPG: each on the device and on the CPU; a learner that fails (e.g. gymnasium missing for
    the Hanabi ones) is reported as such and the next one runs."""
    parts = [("Rainbow (Hanabi)", _rainbow), ("IPPO (Hanabi)", _ippo), ("MADDPG (SymmToM)", _maddpg)]
    for k, (item, fn) in enumerate(parts):
        per = ctx.left() / (len(parts) - k) / len(ctx.devices())
        try:
            ctx.emit(fn(ctx, per))
        except Exception as exc:  # noqa: BLE001 (reported as this item's row)
            ctx.fail(item, exc)


# ============================================================================== DRL-BR
def section_drl_br(ctx: Ctx) -> None:
    from cfrkit.poker import make_agent
    from cfrkit.evaluation.drl_br import DQNBestResponse, DQNConfig

    row = {"item": "DRL-BR (Leduc, vs always-call)"}
    steps = 120 if ctx.tiny else 20_000
    per = ctx.left() / len(ctx.devices())
    for d in ctx.devices():
        cfg = DQNConfig(learn_start=40, hidden=(16, 16)) if ctx.tiny else DQNConfig()
        learner = DQNBestResponse(make_agent("always-call"), "leduc", cfg, seed=0, device=d)
        done, secs = 0, 0.0
        chunk = steps if ctx.tiny else 2000
        while learner.steps < steps and secs < 0.8 * per:
            _, dt = timed(ctx, lambda: learner.train(learner.steps + chunk), d)
            secs += dt
            done = learner.steps
        row[d] = {"steps": done, "seconds": secs, "steps_per_second": done / secs if secs else None}
    ctx.emit(row)


SECTION_FNS = {"range_solver": section_range_solver, "datagen": section_datagen, "train": section_train,
               "learners": section_learners, "drl_br": section_drl_br}


# ============================================================================== orchestration
def preflight(device: str) -> dict:
    """What the check needs, checked first: torch and its version, CUDA, the card, its memory, cfrkit's kernels."""
    out = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "device": device, "problems": []}
    try:
        import torch
    except ImportError as exc:
        out["problems"].append(f"torch not importable: {exc}")
        return out
    out["torch"] = torch.__version__
    out["torch_cuda"] = torch.version.cuda
    out["cuda_available"] = bool(torch.cuda.is_available())
    out["tf32_matmul"] = bool(torch.backends.cuda.matmul.allow_tf32)
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            out["problems"].append("CUDA requested but torch.cuda.is_available() is False")
        else:
            p = torch.cuda.get_device_properties(torch.device(device))
            free, total = torch.cuda.mem_get_info(torch.device(device))
            out.update(gpu=p.name, gpu_memory_gib=total / 2 ** 30, gpu_free_gib=free / 2 ** 30,
                       multiprocessors=p.multi_processor_count, capability=f"{p.major}.{p.minor}")
    try:
        from cfrkit.solvers.public import flat_range_cfr  # noqa: F401 (the compiled kernels load here)
        from cfrkit.solvers.public.board_range_cfr import BoardRangeSolver  # noqa: F401
        out["compiled_kernels"] = True
    except ImportError as exc:
        out["compiled_kernels"] = False
        out["problems"].append(f"compiled kernels not importable ({exc}): pip install -e . builds them")
    return out


def isolated(args) -> bool:
    """Sections in child processes (hard time limits): always, except ``--tiny`` without ``--isolate yes``."""
    return args.isolate == "yes" or (args.isolate == "auto" and not args.tiny)


def run_section(name: str, args, budget: float, lines: str) -> dict:
    """Run one section with ``budget`` seconds: in a child process killed after the budget plus a grace period
    (:func:`isolated`), else in this process; collect its rows."""
    open(lines, "w").close()
    cmd = [sys.executable, os.path.abspath(__file__), "--section", name, "--device", args.device, "--budget",
           f"{budget:.1f}", "--lines", lines, "--threads", str(args.threads)] + (["--tiny"] if args.tiny else [])
    t0 = time.perf_counter()
    status, reason = "ok", None
    grace = args.grace if args.grace is not None else (15 if args.tiny else 30)
    if not isolated(args):  # --tiny: in this process (no second torch import per section), budgets cooperative
        sub = argparse.Namespace(**{**vars(args), "section": name, "budget": budget, "lines": lines})
        if child(sub) != 0:
            status = "failed"
    else:
        try:
            proc = subprocess.run(cmd, timeout=budget + grace, capture_output=True, text=True)
            if proc.returncode != 0:
                status = "failed"
                tail = (proc.stderr or proc.stdout or "").strip().splitlines()
                reason = tail[-1] if tail else f"exit status {proc.returncode}"
        except subprocess.TimeoutExpired:
            status, reason = "timed out", f"cut off after {budget + grace:.0f} s; the rows it measured are kept"
    rows, error = [], None
    with open(lines) as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if "row" in rec:
                rows.append(rec["row"])
            if "error" in rec:
                error = rec["error"]
    if error and status == "ok":
        status = "failed"
    if error:
        reason = error
    return {"status": status, "reason": reason, "seconds": time.perf_counter() - t0, "budget_seconds": budget,
            "rows": rows}


def _fmt(x, ext=False) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        s = f"{x:.3g}"
    else:
        s = str(x)
    return ("~" + s) if ext else s


def table(report: dict) -> str:
    """The printed table: one line per measurement, device against CPU."""
    dev = report["device"]
    lines = [f"{'section':<13} {'item':<34} {'measure':<28} {dev:>14} {'cpu':>14} {'ratio':>8}"]

    def add(sec, item, measure, a, b, ea=False, eb=False):
        ratio = a / b if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else None
        lines.append(f"{sec:<13} {item[:34]:<34} {measure[:28]:<28} {_fmt(a, ea):>14} {_fmt(b, eb):>14} "
                     f"{_fmt(ratio):>8}")

    for name in SECTIONS:
        sec = report["sections"].get(name)
        if sec is None:
            continue
        if sec["status"] != "ok":
            lines.append(f"{name:<13} {sec['status'].upper()}: {sec['reason']}")
        for r in sec["rows"]:
            item = r.get("item", "?")
            if r.get("status") in ("skipped", "failed"):
                lines.append(f"{name:<13} {item:<34} {r['status'].upper()}: {r.get('reason')}")
            elif name == "range_solver":
                t, c = r["torch"], r["compiled"]
                add(name, item, "iterations/s (one spot)", t["iterations_per_second"], c["iterations_per_second"])
                add(name, item, "seconds to 0.3% pot", t["seconds_to_target"], c["seconds_to_target"])
                for sw in t["batch_sweep"]:
                    if "spot_iterations_per_second" in sw:
                        add(name, item, f"spot-iterations/s, batch {sw['batch']}", sw["spot_iterations_per_second"],
                            None)
                    else:
                        lines.append(f"{name:<13} {item:<34} batch {sw['batch']}: {sw.get('status')} "
                                     f"({sw.get('reason')})")
            elif name == "datagen":
                for sw in r["sweep"]:
                    if "situations_per_second" in sw:
                        add(name, item, f"situations/s, batch {sw['batch']}", sw["situations_per_second"], None,
                            sw.get("extrapolated"))
                        # the stages: set-up (host work, once per solve) against the per-iteration cost
                        add(name, item, f"  set-up s, batch {sw['batch']}", sw.get("setup_seconds"), None)
                        add(name, item, f"  ms/iteration, batch {sw['batch']}",
                            1e3 * sw["per_iteration_seconds"] if sw.get("per_iteration_seconds") else None, None)
                    else:
                        lines.append(f"{name:<13} {item:<34} batch {sw['batch']}: {sw.get('status')} "
                                     f"({sw.get('reason')})")
                best, comp = r.get("torch_best") or {}, r["compiled"]
                add(name, item, f"situations/s at {r['iterations']} it.", best.get("situations_per_second"),
                    comp["situations_per_second"], best.get("extrapolated"), comp["extrapolated"])
                add(name, item, "targets |torch-compiled| /pot", r["targets_weighted_mean_abs_diff"], None)
            elif name == "train":
                a, b = r.get(dev, {}), r.get("cpu", {}) if dev != "cpu" else {}
                add(name, item, "samples/s", a.get("samples_per_second"), b.get("samples_per_second"))
                if dev + "+tf32" in r:
                    add(name, item, "samples/s with TF32", r[dev + "+tf32"].get("samples_per_second"),
                        b.get("samples_per_second"))
                add(name, item, f"s/epoch at {a.get('samples')} samples", a.get("seconds_per_epoch"),
                    b.get("seconds_per_epoch_at_device_samples"), False, b.get("extrapolated", False))
            elif name == "learners":
                a, b = r.get(dev, {}), r.get("cpu", {}) if dev != "cpu" else {}
                if "MADDPG" not in item:
                    add(name, item, "env steps/s", a.get("env_steps_per_second"), b.get("env_steps_per_second"))
                add(name, item, "updates/s", a.get("updates_per_second"), b.get("updates_per_second"))
            elif name == "drl_br":
                a, b = r.get(dev, {}), r.get("cpu", {}) if dev != "cpu" else {}
                add(name, item, "steps/s", a.get("steps_per_second"), b.get("steps_per_second"))
    return "\n".join(lines)


def write_json(report: dict, path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(report, f, indent=1, default=float)
    os.replace(tmp, path)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu (the test suite's form)")
    ap.add_argument("--tiny", action="store_true", help="tiny sizes (the test suite: well under a minute)")
    ap.add_argument("--out", default="gpu_check.json", help="the JSON report")
    ap.add_argument("--budget", type=float, default=None, help="global seconds (default 480; --tiny 100, an upper "
                                                              "bound: its fixed tiny work ends well before)")
    ap.add_argument("--sections", default=",".join(SECTIONS), help="comma separated: " + ", ".join(SECTIONS))
    ap.add_argument("--threads", type=int, default=None, help="CPU threads of the CPU paths (default: all cores; "
                                                             "--tiny: 1)")
    ap.add_argument("--isolate", choices=("auto", "yes", "no"), default="auto",
                    help="sections in child processes with hard time limits (auto: yes, except with --tiny)")
    ap.add_argument("--grace", type=float, default=None, help=argparse.SUPPRESS)  # seconds past a section's budget
    ap.add_argument("--section", help=argparse.SUPPRESS)   # internal: run one section (child process)
    ap.add_argument("--lines", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def child(args) -> int:
    """One section in this process; rows and errors go to ``args.lines`` as JSON lines."""
    try:
        import torch

        torch.set_num_threads(args.threads)
        ctx = Ctx(args.device, args.tiny, float(args.budget), args.lines, args.threads)
        SECTION_FNS[args.section](ctx)
    except Exception as exc:  # noqa: BLE001 (any failure of a section is reported in the JSON, then exit 1)
        with open(args.lines, "a") as f:
            f.write(json.dumps({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
                                "traceback": traceback.format_exc()}) + "\n")
        return 1
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.threads is None:  # tiny: one thread (on a loaded shared CPU torch's thread pool spins, 30x slower)
        args.threads = 1 if args.tiny else (os.cpu_count() or 1)
    if args.section:
        return child(args)
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    bad = [s for s in sections if s not in SECTIONS]
    if bad or not sections:
        print(f"gpu_check: error: unknown section(s) {', '.join(bad) or repr(args.sections)}; choose from "
              f"{', '.join(SECTIONS)}", file=sys.stderr)
        return 2
    if args.device != "cpu" and not args.device.startswith("cuda"):
        print(f"gpu_check: error: --device must be cuda, cuda:N or cpu, got {args.device!r}", file=sys.stderr)
        return 2
    budget = args.budget if args.budget is not None else (100.0 if args.tiny else 480.0)
    t0 = time.perf_counter()
    pre = preflight(args.device)
    report = {"command": " ".join([os.path.basename(sys.executable)] + sys.argv), "device": args.device,
              "tiny": args.tiny, "budget_seconds": budget, "preflight": pre, "sections": {},
              "load_average": os.getloadavg()[0]}
    print("gpu_check preflight: " + ", ".join(f"{k}={v}" for k, v in pre.items() if k != "problems"), flush=True)
    base = TINY_BUDGETS if args.tiny else BUDGETS
    scale = budget / sum(base[s] for s in sections)
    lines_dir = tempfile.mkdtemp(prefix="gpu_check_")  # the sections' JSON lines (not next to the report)
    for name in SECTIONS:
        if name not in sections:
            report["sections"][name] = {"status": "skipped", "reason": "not in --sections", "rows": []}
            continue
        left = budget - (time.perf_counter() - t0)
        want = base[name] * scale
        if pre["problems"]:
            report["sections"][name] = {"status": "skipped", "reason": "preflight: " + "; ".join(pre["problems"]),
                                        "rows": []}
        elif left < 0.25 * want:
            report["sections"][name] = {"status": "skipped", "reason": f"global budget spent ({left:.0f} s left)",
                                        "rows": []}
        else:
            print(f"gpu_check: {name} (budget {min(want, left):.0f} s) ...", flush=True)
            report["sections"][name] = run_section(name, args, min(want, left),
                                                   os.path.join(lines_dir, f".gpu_check_{name}.jsonl"))
        report["seconds"] = time.perf_counter() - t0
        write_json(report, args.out)  # after every section: a killed run still leaves its JSON
    shutil.rmtree(lines_dir, ignore_errors=True)
    text = table(report)
    report["table"] = text
    write_json(report, args.out)
    print(text)
    bad = [n for n, sec in report["sections"].items() if sec["status"] in ("failed", "timed out")
           or (sec["status"] == "skipped" and sec["reason"] != "not in --sections")]
    print(f"gpu_check: {report['seconds']:.0f} s; JSON: {args.out}"
          + (f"; NOT COMPLETE: {', '.join(bad)} (reasons above)" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
