"""Times DeepStack's hold'em value-net pipeline (:func:`cfrkit.value_nets.holdem.pipeline.build_nets`) end to end.

    python benchmarks/deepstack_holdem.py --preset tiny  --out runs/ds_holdem_tiny    # minutes (smoke)
    python benchmarks/deepstack_holdem.py --preset small --out runs/ds_holdem_small   # this machine's budget
    python benchmarks/deepstack_holdem.py --preset large --out runs/ds_holdem_large   # DeepStack's scale (GPUs/Ray)

The pipeline itself is the library's (``cfrkit deepstack nets OUT --preset P`` runs the same calls): river data
-> river net -> river check -> turn data -> turn net -> flop data -> flop net (-> preflop data -> auxiliary net
with ``--streets river,turn,flop,preflop``), resumable, into ``OUT`` (``OUT/nets``, ``OUT/report.json``).
This script prints per round the situations made, the generation rate (situations per wall second and CPU
seconds per situation, measured by the datagen), the best validation Huber loss beside DeepHoldem's (river
0.0415, turn 0.045, flop 0.013 with about 1M samples each) and the river check (held-out situations re-solved
exactly against the river net), then the wall and CPU seconds of each library call it made.  Any option
overrides the preset (``--river-samples``, ...).  ``--ray ADDRESS`` generates shards on a Ray cluster.
``--study``: only the river target study (:func:`~cfrkit.value_nets.holdem.studies.river_target_study`).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from cfrkit.value_nets.holdem.pipeline import PRESETS, build_nets, get_preset, parse_streets, step_line  # noqa: E402
from cfrkit.value_nets.holdem.studies import river_target_study  # noqa: E402

INT_OPTIONS = ("river_samples", "turn_samples", "flop_samples", "iterations", "turn_iterations", "flop_iterations",
               "epochs", "shard_size", "group", "check_samples", "river_buckets", "preflop_samples", "preflop_flops",
               "num_buckets")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=list(PRESETS), default="tiny")
    ap.add_argument("--out", default=None, help="output directory (default runs/deepstack_holdem_<preset>)")
    for name in INT_OPTIONS:
        ap.add_argument("--" + name.replace("_", "-"), type=int, default=None)
    ap.add_argument("--hidden", default=None, help="hidden layer widths, e.g. 500,500,500")
    ap.add_argument("--buckets", default=None, help="flop/turn buckets: default (EMD abstraction), ehs, or a directory")
    ap.add_argument("--streets", default="river,turn,flop", help="rounds to run (in this order; add preflop after "
                                                                  "flop for the auxiliary net)")
    ap.add_argument("--workers", type=int, default=None, help="processes for data generation (default: all cores)")
    ap.add_argument("--ray", default=None, help="Ray address for data generation (e.g. auto, local)")
    ap.add_argument("--backend", default=None, help="solver of the data: board (compiled CPU solvers), board64, numpy "
                                                     "or torch (RangeSolver on every round; torch on CUDA when "
                                                     "present). Default: torch on CUDA, else board; rate of the torch "
                                                     "path: benchmarks/deepstack_datagen_rate.py")
    ap.add_argument("--max-train-minutes", type=float, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--study", action="store_true", help="only the river target study (iterations, target kind)")
    args = ap.parse_args(argv)
    args.out = args.out or os.path.join("runs", f"deepstack_holdem_{args.preset}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.study:
        print(json.dumps(river_target_study(seed=args.seed), indent=1))
        return 0
    try:
        streets = parse_streets(args.streets)
        preset = get_preset(args.preset, hidden=args.hidden, buckets=args.buckets,
                            **{k: getattr(args, k) for k in INT_OPTIONS})
    except ValueError as exc:
        print(f"deepstack_holdem: error: {exc}", file=sys.stderr)
        return 2
    print(f"DeepStack hold'em pipeline, preset {args.preset}, output {args.out}; load average "
          f"{os.getloadavg()[0]:.1f}")
    calls = []   # (step, street, wall s, CPU s of this process) between consecutive steps = one library call each
    clock = [time.perf_counter(), time.process_time()]

    def show(kind, street, info):
        now = (time.perf_counter(), time.process_time())
        calls.append((kind, street, now[0] - clock[0], now[1] - clock[1]))
        clock[:] = now
        print(step_line(kind, street, info, preset, args.out), flush=True)

    t0, c0 = time.perf_counter(), time.process_time()
    report = build_nets(args.out, preset, streets, seed=args.seed, ray=args.ray, backend=args.backend,
                        workers=args.workers, progress=not args.no_progress, on_step=show,
                        max_train_seconds=None if args.max_train_minutes is None else 60 * args.max_train_minutes)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print("library calls (wall s / CPU s of this process; shard workers' CPU is in the data lines): " +
          ", ".join(f"{street} {kind} {w:.1f}/{c:.1f}" for kind, street, w, c in calls))
    if report.get("stopped_at"):
        print(f"the {report['stopped_at']} net's training stopped at --max-train-minutes; run again to continue it")
    print(f"build_nets: {wall:.1f} s wall, {cpu:.1f} CPU s in this process")
    print(f"nets: {report['nets']} ({', '.join(report['net_streets'])}); report: {os.path.join(args.out, 'report.json')}")
    return 0


if __name__ == "__main__":
    from cfrkit.games.base import GameError

    try:
        sys.exit(main())
    except (GameError, ValueError, OSError) as exc:  # bad input or a missing / foreign net: one line, no traceback
        sys.exit(f"deepstack_holdem: error: {exc}")
