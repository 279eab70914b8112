"""DeepStack's data + value-net pipeline for heads-up no-limit hold'em, end to end, in one command.

    python benchmarks/deepstack_holdem.py --preset tiny  --out runs/ds_holdem_tiny    # minutes (tests, smoke)
    python benchmarks/deepstack_holdem.py --preset small --out runs/ds_holdem_small   # this machine's budget
    python benchmarks/deepstack_holdem.py --preset large --out runs/ds_holdem_large   # DeepStack's scale (GPUs/Ray)

Rounds: river data (compiled solver, no net; ``--backend numpy/torch``: RangeSolver, on the GPU with torch)
-> river net -> turn data (river net at the leaves) -> turn net -> flop data (turn net at the leaves) -> flop net, and with ``--streets
river,turn,flop,preflop`` -> preflop data (no solve: the flop net averaged over ``--preflop-flops`` sampled
flops per situation) -> DeepStack's auxiliary preflop net (169 classes; the agent uses it when present).
Prints per round the
situations made, the generation rate (situations per wall second and CPU seconds per situation) and
the best validation Huber loss beside DeepHoldem's (river 0.0415, turn 0.045, flop 0.013 with about 1M
samples each), then the river correctness check: on held-out situations (another seed) the river
net's values against exact re-solves, error measured by the same Huber loss as validation.
Every step is resumable (shards, ``.last`` training checkpoints, the nets directory): re-running the
command continues where it stopped.  Any option overrides the preset (``--river-samples``, ...).
``--ray ADDRESS`` generates shards on a Ray cluster (``local`` starts one here).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

DEEPHOLDEM_VAL = {"river": 0.0415, "turn": 0.045, "flop": 0.013, "preflop": None}   # DeepHoldem reports no preflop loss
PRESETS = {
    # samples, iterations, hidden layers, shard size, group
    "tiny": dict(river_samples=300, turn_samples=20, flop_samples=10, iterations=1000, turn_iterations=50,
                 flop_iterations=10, hidden="64,64,64", epochs=40, shard_size=100, group=10, check_samples=40,
                 river_buckets=100, buckets="ehs", num_buckets=30, preflop_samples=20, preflop_flops=20),
    "small": dict(river_samples=20000, turn_samples=1200, flop_samples=400, iterations=250, turn_iterations=300,
                  flop_iterations=200, hidden="256,256,256", epochs=200, shard_size=200, group=10, check_samples=200,
                  river_buckets=500, buckets="default", num_buckets=None, preflop_samples=5000, preflop_flops=200),
    "large": dict(river_samples=1_000_000, turn_samples=1_000_000, flop_samples=1_000_000, iterations=1000,
                  turn_iterations=1000, flop_iterations=1000, hidden="500,500,500", epochs=200, shard_size=1000,
                  group=10, check_samples=1000, river_buckets=500, buckets="default", num_buckets=None,
                  preflop_samples=1_000_000, preflop_flops=1000),
}


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    ap.add_argument("--out", default=None, help="output directory (default runs/deepstack_holdem_<preset>)")
    for name in ("river_samples", "turn_samples", "flop_samples", "iterations", "turn_iterations",
                 "flop_iterations", "epochs", "shard_size", "group", "check_samples", "river_buckets",
                 "preflop_samples", "preflop_flops"):
        ap.add_argument("--" + name.replace("_", "-"), type=int, default=None)
    ap.add_argument("--hidden", default=None, help="hidden layer widths, e.g. 500,500,500")
    ap.add_argument("--buckets", default=None, help="flop/turn buckets: default (EMD abstraction), ehs, or a directory")
    ap.add_argument("--num-buckets", type=int, default=None, help="flop/turn buckets with --buckets ehs")
    ap.add_argument("--streets", default="river,turn,flop", help="rounds to run (in this order; add preflop after "
                                                                  "flop for the auxiliary net)")
    ap.add_argument("--workers", type=int, default=None, help="processes for data generation (default: all cores)")
    ap.add_argument("--ray", default=None, help="Ray address for data generation (e.g. auto, local)")
    ap.add_argument("--backend", default=None, help="solver of the data: board (compiled CPU solvers: DCFR on the "
                                                     "river, BoardLeafSolver float32 on turn/flop), board64 (float64), "
                                                     "numpy or torch (RangeSolver on every round, river included, as "
                                                     "one batch per group; torch on CUDA when present: every round on "
                                                     "the GPU). Default: torch on CUDA, else board; rate of the torch "
                                                     "path: benchmarks/deepstack_datagen_rate.py")
    ap.add_argument("--max-train-minutes", type=float, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--study", action="store_true", help="only the river target study (iterations, target kind)")
    args = ap.parse_args(argv)
    for k, v in PRESETS[args.preset].items():
        if getattr(args, k, None) is None:
            setattr(args, k, v)
    args.out = args.out or os.path.join("runs", f"deepstack_holdem_{args.preset}")
    return args


def river_check(nets, args, game):
    """Held-out river situations: the net's values against exact re-solves (pot fractions)."""
    import torch

    from cfrkit.value_nets.holdem.datagen import bucket_arrays, solve_situations
    from cfrkit.value_nets.holdem.situations import sample_situations
    from cfrkit.value_nets.train import masked_huber

    rng = np.random.default_rng([args.seed, 777])  # not a training seed (shards use seed * 1_000_003 + i)
    stack = float(min(game.definition.stack))
    # one situation per board and pot: the check's error is averaged over as many boards/pots as possible
    sit = sample_situations("river", args.check_samples, rng, group=1, stack=stack)
    t0 = time.process_time()
    exact = solve_situations(game, sit, args.iterations)
    solve_cpu = time.process_time() - t0
    bucketer = nets.bucketer("river")
    inputs, targets, mask = bucket_arrays(bucketer, sit.boards, sit.contribs, sit.ranges, exact, stack)
    with torch.no_grad():
        pred = nets.models["river"](torch.as_tensor(inputs))
    huber = float(masked_huber(pred, torch.as_tensor(targets), torch.as_tensor(mask)))
    hand_pred = nets.predict("river", sit.boards, sit.contribs, sit.ranges)
    live = sit.ranges > 0
    mae_hand = float(np.abs(hand_pred - exact)[live].mean())
    # range-weighted: the error that matters for a re-solve (values of hands the player holds)
    w_err = float((np.abs(hand_pred - exact) * sit.ranges).sum() / sit.ranges.sum())
    return {"samples": len(sit), "huber": huber, "mae_per_hand": mae_hand, "range_weighted_mae": w_err,
            "val_loss": float(nets.extras["river"].get("val_loss", float("nan"))), "solve_cpu_s": solve_cpu}


def study(args, game, count: int = 10):
    """River targets: iterations and target kind (range-weighted mean |difference|, fractions of the pot).

    (a) compiled DCFR average-strategy cfvs after 100/250/500 iterations against 1000 (the datagen's
    default); (b) at 1000 iterations against DeepStack's targets from ``RangeSolver`` (CFR+, root
    cfvs averaged over the iterations after 500).
    """
    from cfrkit.solvers.public.tree import RangeSolver
    from cfrkit.value_nets.holdem.datagen import _sizing_list, _tree, solve_situations
    from cfrkit.value_nets.holdem.situations import sample_situations

    sit = sample_situations("river", count, np.random.default_rng([args.seed, 999]), group=count)
    ref = solve_situations(game, sit, 1000)
    w = sit.ranges

    def err(v):
        return float((np.abs(v - ref) * w).sum() / w.sum())

    out = {f"dcfr_{n}_vs_1000": err(solve_situations(game, sit, n)) for n in (100, 250, 500)}
    tree = _tree(game, _sizing_list(None), sit.boards[0], sit.contribs[0], False)
    rs = RangeSolver(tree, ranges=sit.ranges, algorithm="cfr+", skip=500).run(1000)
    ds = rs.be.to_numpy(rs.average_root_values()) / (2 * sit.contribs[0])
    out["deepstack_cfr+_averaged_vs_dcfr_average_strategy"] = err(ds)
    out["situations"] = count
    return out


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    from cfrkit.games import load
    from cfrkit.value_nets.holdem.datagen import generate_holdem_dataset, load_holdem_dataset
    from cfrkit.value_nets.holdem.nets import HoldemValueNets, train_street_net

    os.makedirs(args.out, exist_ok=True)
    game = load("holdem")
    if args.study:
        res = study(args, game)
        print(json.dumps(res, indent=1))
        return 0
    nets_dir = os.path.join(args.out, "nets")
    backend = args.backend or ("torch" if torch.cuda.is_available() else "board")
    hidden = tuple(int(h) for h in args.hidden.split(","))
    try:
        nets = HoldemValueNets.load(nets_dir)
    except Exception:
        nets = HoldemValueNets(game=game.game_string(), stack=float(min(game.definition.stack)))
    report = {"preset": args.preset, "out": args.out, "backend": backend, "hidden": list(hidden), "rounds": {}}
    # a resumed run makes no new situations of a finished round: keep the rate measured when they were made
    previous = {}
    if os.path.exists(os.path.join(args.out, "report.json")):
        try:
            with open(os.path.join(args.out, "report.json")) as f:
                previous = json.load(f).get("rounds", {})
        except (OSError, ValueError):
            previous = {}
    samples = {"river": args.river_samples, "turn": args.turn_samples, "flop": args.flop_samples,
               "preflop": args.preflop_samples}
    iters = {"river": args.iterations, "turn": args.turn_iterations, "flop": args.flop_iterations, "preflop": 1}
    print(f"DeepStack hold'em pipeline, preset {args.preset}, output {args.out}; load average "
          f"{os.getloadavg()[0]:.1f}")
    streets = [s.strip() for s in args.streets.split(",") if s.strip()]
    bad = [s for s in streets if s not in samples]
    if bad:
        print(f"unknown street(s) {', '.join(bad)}; choose from river, turn, flop, preflop", file=sys.stderr)
        return 2
    for street in streets:
        data_dir = os.path.join(args.out, f"data_{street}")
        buckets = "auto" if street == "river" else args.buckets
        nb = args.river_buckets if street == "river" else args.num_buckets
        gen = generate_holdem_dataset(data_dir, street, samples[street], shard_size=min(args.shard_size, samples[street]),
                                      iterations=iters[street], seed=args.seed, group=min(args.group, samples[street]), buckets=buckets,
                                      num_buckets=nb, leaf_nets=None if street == "river" else nets_dir,
                                      workers=args.workers, ray_address=args.ray, backend=backend,
                                      progress=not args.no_progress, flops=args.preflop_flops)
        data = load_holdem_dataset(data_dir)
        if gen["generated"] == 0 and previous.get(street, {}).get("generation", {}).get("generated", 0) > 0:
            gen = previous[street]["generation"]
        rate = (f"{gen['situations_per_second']:.3g} situations/s wall" if gen["generated"] > 0
                else "wall rate not measured in this run")
        how = f"{args.preflop_flops} flops averaged" if street == "preflop" else f"{iters[street]} iterations"
        print(f"{street}: {len(data['contribs'])} situations in {data_dir} ({gen['generated']} made now or in the "
              f"run that made them, {how} each): {rate}, "
              f"{gen['cpu_seconds_per_situation']:.3g} CPU s per situation (all shards; workers' process time)")
        ck = os.path.join(args.out, f"{street}.pt")
        summary = train_street_net(data, ck, hidden=hidden, epochs=args.epochs, batch_size=1000, seed=args.seed,
                                   max_seconds=None if args.max_train_minutes is None else 60 * args.max_train_minutes,
                                   resume=True, progress=not args.no_progress)
        nets.set_net(street, ck)
        nets.save(nets_dir)
        print(f"{street}: net {list(hidden)} x {data['targets'].shape[1] // 2} buckets, best validation Huber loss "
              f"{summary['best_val_loss']:.4g} (epoch {summary['best_epoch']}, {summary['epochs_run']} epochs, "
              f"{summary['samples']} samples, validation split by {summary['split']}; " +
              (f"DeepHoldem {DEEPHOLDEM_VAL[street]} with ~1M samples)" if DEEPHOLDEM_VAL[street] is not None
               else "DeepHoldem reports no preflop loss)"))
        if street == "preflop":
            report.setdefault("preflop_flops", args.preflop_flops)
        report["rounds"][street] = {"situations": int(len(data["contribs"])), "iterations": iters[street],
                                    "generation": {k: v for k, v in gen.items() if k != "directory"},
                                    "best_val_loss": summary["best_val_loss"], "best_epoch": summary["best_epoch"],
                                    "epochs_run": summary["epochs_run"],
                                    "buckets": int(data["targets"].shape[1] // 2),
                                    "val_curve": [h[2] for h in summary["history"]]}
        if street == "river":
            chk = river_check(nets, args, game)
            report["river_check"] = chk
            verdict = "within" if chk["huber"] <= 1.5 * chk["val_loss"] else "NOT within"
            print(f"river check: {chk['samples']} held-out situations re-solved exactly: Huber {chk['huber']:.4g} "
                  f"vs validation {chk['val_loss']:.4g} ({verdict} 1.5x); mean |error| per hand "
                  f"{chk['mae_per_hand']:.4g} of the pot, range-weighted {chk['range_weighted_mae']:.4g}")
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1, default=float)
    print(f"nets: {nets_dir} ({', '.join(nets.streets)}); report: {os.path.join(args.out, 'report.json')}")
    return 0


if __name__ == "__main__":
    from cfrkit.games.base import GameError

    try:
        sys.exit(main())
    except (GameError, ValueError, OSError) as exc:  # bad input or a missing / foreign net: one line, no traceback
        sys.exit(f"deepstack_holdem: error: {exc}")
