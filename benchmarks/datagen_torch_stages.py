"""The torch datagen path's stages on the CPU, in CPU seconds: trees, set-up, first iterations, per-iteration cost.

    python benchmarks/datagen_torch_stages.py turn 10,30 20        # street, batch sizes (groups of 10), iterations

Runs ``gpu_check``'s datagen measurement (:func:`gpu_check._datagen_point`: the batches and solvers of
``solve_situations(backend="torch")``, stages timed apart) on ``device="cpu"`` (float64, one torch thread) with no
deadline, so every solve runs in full, and prints per batch size one JSON line: the measured seconds, the stage
estimate (trees + set-up + first iterations + per-iteration cost x the rest; what ``gpu_check`` extrapolates with)
and the first ``gpu_check``'s estimate ((trees + set-up + 2 iterations) x iterations / 2).  Clock:
``time.process_time`` (CPU seconds of this process; the shared machines are loaded).  Nets: random weights of the
small preset's shape (rates only).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("street", choices=("river", "turn", "flop"))
    ap.add_argument("sizes", help="batch sizes (situations, groups of 10), comma-separated, e.g. 10,30")
    ap.add_argument("iterations", type=int)
    args = ap.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        print(f"error: sizes must be comma-separated integers, got {args.sizes!r}", file=sys.stderr)
        return 2
    if min(sizes) < 1 or args.iterations < 8:
        print("error: sizes must be positive and iterations >= 8 (2 probe + 4 steady + the rest)", file=sys.stderr)
        return 2
    import torch

    import gpu_check
    from cfrkit.games import load
    from cfrkit.value_nets.holdem.datagen import LEAF_STREET, sizing_levels
    from cfrkit.value_nets.holdem.situations import sample_situations
    from deepstack_datagen_rate import random_nets

    torch.set_num_threads(1)   # a loaded 2-core machine: torch's pool spins
    ctx = gpu_check.Ctx("cpu", tiny=False, budget=math.inf, lines=os.devnull, threads=1)
    ctx.clock = time.process_time
    game = load("holdem")
    stack = float(min(game.definition.stack))
    leaf = LEAF_STREET[args.street]
    fn = random_nets("cpu", 0).leaf_values(leaf) if leaf else None
    for size in sizes:
        sit = sample_situations(args.street, size, np.random.default_rng([11, size]), group=10, stack=stack)
        e = gpu_check._datagen_point(ctx, game, sizing_levels(None), sit, args.iterations, args.iterations // 2, fn,
                                     math.inf)
        keys = ("batch", "groups", "solves", "seconds", "stage_estimate_seconds", "naive_extrapolation_seconds",
                "tree_build_seconds", "setup_seconds", "first_iterations_seconds", "per_iteration_seconds",
                "readback_seconds", "situations_per_second", "naive_situations_per_second")
        print(json.dumps({"street": args.street, "iterations": args.iterations, "clock": "process_time",
                          **{k: round(e[k], 4) if isinstance(e[k], float) else e[k] for k in keys}}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
