"""DeepStack hold'em data generation on the torch path: situations per second per round, timed by torch.

For each round of ``--streets`` (river, turn, flop) one batch of ``--batch`` situations from the datagen's own
sampler (:func:`~cfrkit.value_nets.holdem.situations.sample_situations`: one random board and DeepStack pot,
DeepStack's recursive ranges; one group by default, ``--group`` for several) is solved as the datagen does with
``backend="torch"`` (:func:`~cfrkit.value_nets.holdem.datagen.solve_situations`: ``RangeSolver`` on the river
tree to showdown, or on the depth-limited turn / flop tree with the next street's net at the leaves; CFR+, the
root cfvs averaged over the iterations after ``skip``) on ``--device`` (auto: cuda when available, else cpu).

Timing: on CUDA ``torch.cuda.Event(enable_timing=True)`` around the solve, with ``torch.cuda.synchronize``
before and after; on the CPU ``time.perf_counter`` (wall) and ``time.process_time`` (this process's CPU
seconds, which a loaded machine does not inflate).  The timed solve is the datagen's unit of work: tree
building, solver set-up, the iterations and the targets (the net's bucket ids of the new board included);
a warm-up solve of another board (1 iteration, 1 situation) comes first (CUDA context, kernels).

Beside it, in the same run, the compiled CPU path on the same batch (the datagen's default ``"board"``: the
compiled DCFR ``solve_many`` on the river, :class:`~cfrkit.solvers.public.board_leaf_cfr.BoardLeafSolver`
float32 on the turn / flop, ``--threads`` threads) at the same iterations, its rate, the ratio, and the
range-weighted mean |difference| of the two paths' targets (fractions of the pot: on the turn / flop the
same iterates up to float32; on the river DCFR's average-strategy cfvs against CFR+'s averaged cfvs).
DeepHoldem's published rates (river about 7/s, turn about 1/s on one GPU; RESULTS.md) are context only.
With ``--group G < --batch`` the batch holds several boards and pots (groups of ``G``), which the torch path
solves together (:mod:`cfrkit.solvers.public.torch_batch`, one solve per tree shape); the per-group torch loop
(one ``RangeSolver`` per group, the path before the batching) is then timed too, and the ratio reported.

Leaf nets: ``--nets DIR`` (a :class:`~cfrkit.value_nets.holdem.nets.HoldemValueNets` directory); without it
random-weight nets of the ``small`` preset's shape (3 x 256 with BatchNorm; river 500 hand-strength
buckets, turn / flop 50 E[HS] buckets) -- the time does not depend on the weights, and the output says so.

    python benchmarks/deepstack_datagen_rate.py --streets river --batch 100 --iterations 1000
    python benchmarks/deepstack_datagen_rate.py --streets river,turn --batch 10 --iterations 300 \\
        --nets runs/ds_small/nets --device cuda --out rate_gpu.json          # on a GPU machine
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

STREETS = ("river", "turn", "flop")
DEEPHOLDEM_RATE = {"river": 7.0, "turn": 1.0, "flop": None}  # situations/s on one GPU (RESULTS.md); context only
RANDOM_NET_HIDDEN = (256, 256, 256)


class InputError(ValueError):
    """Bad command-line input (reported in one line)."""


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--streets", default="river,turn", help="rounds, comma separated: river, turn, flop")
    ap.add_argument("--batch", type=int, default=10, help="situations per batch")
    ap.add_argument("--group", type=int, default=None,
                    help="situations per group (one board and pot; default: the whole batch, one board); with "
                         "several groups the per-group torch loop is timed beside the batched solve")
    ap.add_argument("--iterations", type=int, default=1000, help="CFR iterations per solve (both paths)")
    ap.add_argument("--skip", type=int, default=None, help="iterations left out of the targets (default half)")
    ap.add_argument("--device", default="auto", help="auto (cuda when available, else cpu), cpu, cuda, cuda:N")
    ap.add_argument("--nets", default=None, help="HoldemValueNets directory for the turn / flop leaves "
                                                 "(default: random-weight nets of the small preset's shape)")
    ap.add_argument("--threads", type=int, default=1, help="CPU threads of both paths (torch intra-op, compiled)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-compiled", action="store_true", help="skip the compiled CPU path")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    return ap.parse_args(argv)


def check_args(args):
    """Validate the arguments; returns ``(streets, torch.device)``; :class:`InputError` (one line) if bad."""
    import torch

    streets = [s.strip() for s in str(args.streets).split(",") if s.strip()]
    bad = [s for s in streets if s not in STREETS]
    if bad or not streets:
        raise InputError(f"unknown street(s) {', '.join(bad) or repr(args.streets)}; choose from {', '.join(STREETS)}")
    if args.batch <= 0:
        raise InputError(f"--batch must be positive, got {args.batch}")
    if args.iterations <= 0:
        raise InputError(f"--iterations must be positive, got {args.iterations}")
    args.group = args.batch if args.group is None else args.group
    if args.group <= 0:
        raise InputError(f"--group must be positive, got {args.group}")
    skip = args.iterations // 2 if args.skip is None else args.skip
    if not 0 <= skip < args.iterations:
        raise InputError(f"need 0 <= --skip < --iterations, got skip={skip}")
    args.skip = skip
    if args.threads <= 0:
        raise InputError(f"--threads must be positive, got {args.threads}")
    if args.nets is not None and not os.path.isdir(args.nets):
        raise InputError(f"--nets {args.nets}: no such directory")
    dev = str(args.device)
    if dev == "auto":
        dev = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        device = torch.device(dev)
    except RuntimeError:
        raise InputError(f"unknown --device {args.device!r}; use auto, cpu, cuda or cuda:N") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"--device {args.device}: CUDA is not available on this machine (use --device cpu)")
    if device.type not in ("cpu", "cuda"):
        raise InputError(f"--device {args.device}: only cpu and cuda are supported")
    return streets, device


def random_nets(device: str, seed: int = 0):
    """Random-weight nets (river, turn, flop) of the small preset's shape on ``device``
    (:func:`cfrkit.value_nets.holdem.studies.random_holdem_nets`)."""
    from cfrkit.value_nets.holdem.studies import random_holdem_nets

    return random_holdem_nets(device, seed, hidden=RANDOM_NET_HIDDEN, river_buckets=500, buckets=50)


def timed(fn, device):
    """``(result, seconds, cpu_seconds, clock)``: ``fn()`` timed by CUDA events on a CUDA device, else perf_counter."""
    import torch

    c0 = time.process_time()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        out = fn()
        end.record()
        torch.cuda.synchronize(device)
        seconds, clock = start.elapsed_time(end) / 1000.0, "torch.cuda.Event (synchronized)"
    else:
        t0 = time.perf_counter()
        out = fn()
        seconds, clock = time.perf_counter() - t0, "time.perf_counter (CPU, wall)"
    return out, seconds, time.process_time() - c0, clock


def weighted_diff(a: np.ndarray, b: np.ndarray, ranges: np.ndarray) -> float:
    """Range-weighted mean |a - b| over hands (fractions of the pot)."""
    return float((np.abs(a - b) * ranges).sum() / ranges.sum())


def per_group_torch(game, sit, args, leaf_fn, device: str) -> np.ndarray:
    """The torch path one group at a time (``RangeSolver`` per board and pot: what the datagen ran before the
    batched solvers of :mod:`cfrkit.solvers.public.torch_batch`), pot-fraction targets ``(N, 2, 1326)``."""
    from cfrkit.value_nets.holdem.datagen import sizing_levels, solve_group_with_leaves, solve_river_group_range
    from cfrkit.value_nets.holdem.situations import group_slices

    sizing = sizing_levels(None)
    out = np.zeros_like(sit.ranges)
    for idx in group_slices(sit.groups):
        board, contrib, r = sit.boards[idx[0]], float(sit.contribs[idx[0]]), sit.ranges[idx]
        if sit.street == "river":
            out[idx] = solve_river_group_range(game, sizing, board, contrib, r, args.iterations, args.skip, "torch",
                                               device)
        else:
            out[idx] = solve_group_with_leaves(game, sizing, board, contrib, r, args.iterations, args.skip, leaf_fn,
                                               "torch", device)
    return out


def run(args) -> dict:
    """Measure every round of ``args`` (see module docstring); returns the report (also printed)."""
    import torch

    from cfrkit.games import load
    from cfrkit.value_nets.holdem.datagen import LEAF_STREET, solve_situations
    from cfrkit.value_nets.holdem.nets import HoldemValueNets
    from cfrkit.value_nets.holdem.situations import group_slices, sample_situations

    streets, device = check_args(args)
    torch.set_num_threads(args.threads)
    game = load("holdem")
    stack = float(min(game.definition.stack))
    need = sorted({LEAF_STREET[s] for s in streets if LEAF_STREET[s] is not None})
    nets_dev = nets_cpu = None
    if need:
        if args.nets is not None:
            nets_dev = HoldemValueNets.load(args.nets, device=str(device))
            nets_cpu = nets_dev if device.type == "cpu" else HoldemValueNets.load(args.nets, device="cpu")
            for s in need:
                nets_dev.leaf_values(s)  # one-line ValueNetFileError now if the net is missing
        else:
            nets_dev = random_nets(str(device), args.seed)
            nets_cpu = nets_dev if device.type == "cpu" else random_nets("cpu", args.seed)
    nets_label = args.nets if args.nets is not None else (
        f"RANDOM-WEIGHT nets ({'x'.join(map(str, RANDOM_NET_HIDDEN))}, river 500 hs / turn, flop 50 ehs buckets; "
        f"rates only, the values mean nothing)" if need else "none needed")
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    report = {"device": str(device), "gpu": gpu, "threads": args.threads, "batch": args.batch, "group": args.group,
              "iterations": args.iterations, "skip": args.skip, "nets": nets_label, "seed": args.seed,
              "load_average": os.getloadavg()[0], "rounds": {}}
    print(f"DeepStack datagen rate: torch path on {device}{f' ({gpu})' if gpu else ''}, {args.threads} thread(s), "
          f"batch {args.batch}, {args.iterations} iterations (skip {args.skip}); leaf nets: {nets_label}; "
          f"load average {report['load_average']:.1f}")
    for street in streets:
        rng = np.random.default_rng([args.seed, STREETS.index(street)])
        sit = sample_situations(street, args.batch, rng, group=args.group, stack=stack)
        groups = len(list(group_slices(sit.groups)))
        warm = sample_situations(street, 1, np.random.default_rng([args.seed, 100 + STREETS.index(street)]), group=1,
                                 stack=stack)
        leaf = LEAF_STREET[street]
        fn_dev = nets_dev.leaf_values(leaf) if leaf else None
        fn_cpu = nets_cpu.leaf_values(leaf) if leaf else None
        solve_situations(game, warm, 1, 0, leaf_values=fn_dev, backend="torch", device=str(device))  # warm-up
        vals, secs, cpu, clock = timed(lambda: solve_situations(game, sit, args.iterations, args.skip, leaf_values=fn_dev,
                                                                backend="torch", device=str(device)), device)
        row = {"board": [int(c) for c in sit.boards[0]], "pot_per_player": float(sit.contribs[0]), "clock": clock,
               "torch": {"seconds_per_batch": secs, "cpu_seconds_per_batch": cpu,
                         "situations_per_second": args.batch / secs,
                         "situations_per_cpu_second": args.batch / cpu if cpu > 0 else float("nan")},
               "deepholdem_situations_per_second": DEEPHOLDEM_RATE[street]}
        row["groups"] = groups
        line = (f"{street}: device {device}, batch {args.batch}, {args.iterations} iterations, "
                + (f"pot {sit.contribs[0]:.0f} per player" if groups == 1 else f"{groups} groups (boards and pots)")
                + f": torch {secs:.3g} s per batch ({clock}; {cpu:.3g} CPU s) = {args.batch / secs:.3g} situations/s")
        if groups > 1:   # the loop the batched solve replaces: one torch RangeSolver per group
            _, lsecs, lcpu, _ = timed(lambda: per_group_torch(game, sit, args, fn_dev, str(device)), device)
            row["torch_per_group"] = {"seconds_per_batch": lsecs, "cpu_seconds_per_batch": lcpu,
                                      "situations_per_second": args.batch / lsecs}
            row["batching_speedup"] = lsecs / secs
            row["batching_speedup_cpu_seconds"] = lcpu / cpu if cpu > 0 else float("nan")
            line += (f"; per-group torch loop {lsecs:.3g} s ({lcpu:.3g} CPU s): batching x{lsecs / secs:.3g} "
                     f"(x{row['batching_speedup_cpu_seconds']:.3g} in CPU s)")
        if not args.no_compiled:
            cvals, csecs, ccpu, _ = timed(lambda: solve_situations(game, sit, args.iterations, args.skip,
                                                                   leaf_values=fn_cpu, backend="board",
                                                                   threads=args.threads), torch.device("cpu"))
            diff = weighted_diff(vals, cvals, sit.ranges)
            row["compiled"] = {"solver": "compiled DCFR solve_many" if street == "river" else "BoardLeafSolver float32",
                               "seconds_per_batch": csecs, "cpu_seconds_per_batch": ccpu,
                               "situations_per_second": args.batch / csecs,
                               "situations_per_cpu_second": args.batch / ccpu if ccpu > 0 else float("nan")}
            row["torch_over_compiled"] = csecs / secs
            row["targets_weighted_mean_abs_diff"] = diff
            line += (f"; compiled CPU ({row['compiled']['solver']}, {args.threads} thread(s)) {csecs:.3g} s = "
                     f"{args.batch / csecs:.3g} situations/s ({ccpu:.3g} CPU s): rate ratio torch/compiled "
                     f"{csecs / secs:.3g}; targets differ by {diff:.3g} of the pot (range-weighted)")
        dh = DEEPHOLDEM_RATE[street]
        line += f"; DeepHoldem about {dh:g}/s on one GPU (context)" if dh else "; DeepHoldem: no published rate"
        print(line)
        report["rounds"][street] = row
    if device.type == "cpu":
        print("no GPU used: the CUDA figure is the same command with --device cuda on a GPU machine")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
        print(f"results: {args.out}")
    return report


def main(argv=None) -> int:
    """Command line: 0 on success, 2 with a one-line error for bad input or a missing / foreign net."""
    from cfrkit.games.base import GameError

    args = parse_args(argv)
    try:
        run(args)
    except (InputError, GameError, ValueError, OSError) as exc:
        print(f"deepstack_datagen_rate: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
