"""``cfrkit deepstack data|train|nets``: DeepStack's hold'em value-net pipeline (what ``--net``/``nets=`` of the
hold'em A^D agent loads).  The work is :mod:`cfrkit.value_nets.holdem.pipeline`; this module parses and prints.

    cfrkit deepstack nets runs/ds --preset small                      # river, turn, flop: data + nets, resumable
    cfrkit deepstack nets runs/ds --preset small --streets river,turn,flop,preflop   # + the auxiliary preflop net
    cfrkit deepstack data river runs/ds --preset small                # one street's data only
    cfrkit deepstack train river runs/ds --preset small               # one street's net only (into runs/ds/nets)

(The Leduc pipeline is ``cfrkit datagen`` / ``cfrkit train-valuenet``.)  Rerunning a command on the same
directory resumes (finished shards, training checkpoints and finished streets are kept); Ctrl-C keeps what is
done and exits with code 130.
"""
from __future__ import annotations

import sys

from cfrkit.cli import CliError

# names of the library's streets and presets, spelled out so that building the parser does not import torch
# (tests/test_deepstack_pipeline.py checks they equal cfrkit.value_nets.holdem.pipeline's)
STREETS = ("river", "turn", "flop", "preflop")
PRESET_NAMES = ("smoke", "tiny", "small", "large")
_INT_OPTIONS = ("river_samples", "turn_samples", "flop_samples", "preflop_samples", "iterations", "turn_iterations",
                "flop_iterations", "epochs", "shard_size", "group", "check_samples", "river_buckets",
                "num_buckets", "preflop_flops")
_HELP = {"iterations": "override the preset's river solver iterations per situation",
         "num_buckets": "flop/turn buckets with --buckets ehs",
         "group": "override the preset's situations per board and pot"}


def add_parser(sub) -> None:
    p = sub.add_parser("deepstack", help="DeepStack hold'em value nets: data generation and training per street, "
                                         "or the whole chain (the nets directory of the deepstack-holdem agent)")
    acts = p.add_subparsers(dest="deepstack_command", metavar="ACTION")
    acts.required = True

    n = acts.add_parser("nets", help="the whole chain river -> turn -> flop (-> preflop): data and nets, resumable")
    n.add_argument("out", help="run directory (data_<street>/, <street>.pt, nets/, report.json); rerun to resume")
    n.add_argument("--streets", default="river,turn,flop",
                   help=f"streets in order (default river,turn,flop; add preflop for the auxiliary net); "
                        f"from {', '.join(STREETS)}")
    _preset_options(n)
    _data_options(n)
    _train_options(n)
    n.set_defaults(func=run_nets)

    _street_action(acts, "data", "generate one street's data (turn/flop/preflop need the previous street's net)",
                   "run directory (shards go to OUT/data_<street>; resumable)", _data_options,
                   ("--leaf-nets", "nets directory with the previous street's net (default OUT/nets)"), run_data)
    _street_action(acts, "train", "train one street's net on OUT/data_<street> and put it into OUT/nets",
                   "run directory (OUT/<street>.pt, OUT/<street>.pt.last, OUT/nets); rerun to resume", _train_options,
                   ("--device", "torch device of the training: auto (cuda when present), cpu, cuda, cuda:N "
                                "(default cpu)"), run_train)


def _street_action(acts, name: str, help: str, out_help: str, add_options, extra, func) -> None:
    """One per-street action: ``street out`` positionals, the preset options, ``add_options``' group, one ``extra``
    ``(flag, help)`` option (default None) and ``func`` as its handler."""
    p = acts.add_parser(name, help=help)
    p.add_argument("street", choices=STREETS)
    p.add_argument("out", help=out_help)
    _preset_options(p)
    add_options(p)
    p.add_argument(extra[0], default=None, help=extra[1])
    p.set_defaults(func=func)


def _preset_options(p) -> None:
    p.add_argument("--preset", choices=PRESET_NAMES, default="tiny",
                   help="sizes of the run (default tiny: minutes; smoke: seconds; small: hours here; large: "
                        "DeepStack's scale); the options below override single settings")
    for name in _INT_OPTIONS:
        p.add_argument("--" + name.replace("_", "-"), type=int, default=None, metavar="N",
                       help=_HELP.get(name, f"override the preset's {name}"))
    p.add_argument("--hidden", default=None, help="hidden layer widths, e.g. 500,500,500")
    p.add_argument("--buckets", default=None, help="flop/turn buckets: default (EMD abstraction), ehs, or a directory")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def _data_options(p) -> None:
    p.add_argument("--backend", choices=("board", "board64", "numpy", "torch"), default=None,
                   help="solver of the data: board (compiled CPU solvers), board64, numpy or torch (RangeSolver; "
                        "torch on CUDA when present). Default: torch with CUDA, else board")
    p.add_argument("--device", default=None,
                   help="torch device (auto, cpu, cuda, cuda:N) of the numpy/torch backends and, for 'nets', of the "
                        "training (default: the data's torch backend on cuda if present, the training on the cpu)")
    p.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    p.add_argument("--ray", metavar="ADDRESS", default=None, help="generate shards on a Ray cluster (auto, local, ...)")


def _train_options(p) -> None:
    p.add_argument("--max-train-minutes", type=float, default=None, help="wall-clock limit of each street's training")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads of training (default 1)")


def _preset(args):
    from cfrkit.value_nets.holdem.pipeline import get_preset

    changes = {name: getattr(args, name, None) for name in _INT_OPTIONS}
    for name, value in changes.items():
        if value is not None and value < 1:
            raise CliError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    return get_preset(args.preset, hidden=args.hidden, buckets=args.buckets, **changes)


def _check_run_options(args) -> None:
    if getattr(args, "workers", None) is not None and args.workers < 1:
        raise CliError(f"--workers must be >= 1, got {args.workers}")
    if getattr(args, "threads", 1) < 1:
        raise CliError(f"--threads must be >= 1, got {args.threads}")
    minutes = getattr(args, "max_train_minutes", None)
    if minutes is not None and minutes <= 0:
        raise CliError(f"--max-train-minutes must be positive, got {minutes}")


def _run(args, call):
    """``(0, call())``; on Ctrl-C / SIGTERM say what is kept and return ``(128 + signal, None)``."""
    from cfrkit.cli._runtime import InterruptOnSignal

    with InterruptOnSignal() as signals:
        try:
            return 0, call()
        except KeyboardInterrupt:
            print(f"cfrkit deepstack {args.deepstack_command}: interrupted; finished shards and training "
                  f"checkpoints are kept in {args.out} (run the same command to resume)", file=sys.stderr)
            return signals.exit_code(), None


def _train_seconds(args):
    return None if args.max_train_minutes is None else 60.0 * args.max_train_minutes


def run_nets(args) -> int:
    from cfrkit.value_nets.holdem.pipeline import build_nets, parse_streets, step_line

    preset = _preset(args)
    streets = parse_streets(args.streets)
    _check_run_options(args)

    def show(kind, street, info):
        print(step_line(kind, street, info, preset, args.out), flush=True)

    code, report = _run(args, lambda: build_nets(
        args.out, preset, streets, seed=args.seed, ray=args.ray, backend=args.backend, workers=args.workers,
        device=args.device, progress=not args.no_progress, threads=args.threads, on_step=show,
        max_train_seconds=_train_seconds(args)))
    if report is not None:
        if report.get("stopped_at"):
            print(f"the {report['stopped_at']} net's training stopped at --max-train-minutes; run the same command "
                  f"to continue it (the later streets wait for the finished net)")
        print(f"nets: {report['nets']} ({', '.join(report['net_streets'])}); report: {args.out}/report.json")
    return code


def run_data(args) -> int:
    from cfrkit.value_nets.holdem.pipeline import generate_data, step_line

    preset = _preset(args)
    _check_run_options(args)
    code, gen = _run(args, lambda: generate_data(
        args.street, args.out, preset, seed=args.seed, backend=args.backend, workers=args.workers, ray=args.ray,
        device=args.device, leaf_nets=args.leaf_nets, progress=not args.no_progress))
    if gen is not None:
        print(step_line("data", args.street, gen, preset, args.out))
    return code


def run_train(args) -> int:
    from cfrkit.value_nets.holdem.pipeline import nets_dir, step_line, train_net

    preset = _preset(args)
    _check_run_options(args)
    code, summary = _run(args, lambda: train_net(
        args.street, args.out, preset, seed=args.seed, progress=not args.no_progress, threads=args.threads,
        max_seconds=_train_seconds(args), device=args.device))
    if summary is not None:
        print(step_line("train", args.street, summary, preset, args.out) + f"; nets: {nets_dir(args.out)}")
    return code
