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

    d = acts.add_parser("data", help="generate one street's data (turn/flop/preflop need the previous street's net)")
    d.add_argument("street", choices=STREETS)
    d.add_argument("out", help="run directory (shards go to OUT/data_<street>; resumable)")
    _preset_options(d)
    _data_options(d)
    d.add_argument("--leaf-nets", default=None, help="nets directory with the previous street's net "
                                                     "(default OUT/nets)")
    d.set_defaults(func=run_data)

    t = acts.add_parser("train", help="train one street's net on OUT/data_<street> and put it into OUT/nets")
    t.add_argument("street", choices=STREETS)
    t.add_argument("out", help="run directory (OUT/<street>.pt, OUT/<street>.pt.last, OUT/nets); rerun to resume")
    _preset_options(t)
    _train_options(t)
    t.set_defaults(func=run_train)


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
    p.add_argument("--device", default=None, help="torch device of the numpy/torch backends (default: cuda if present)")
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


def _interruptible(args, work) -> int:
    """Run ``work()``; Ctrl-C / SIGTERM: say what is kept and exit with 128 + signal."""
    from cfrkit.cli._runtime import InterruptOnSignal

    with InterruptOnSignal() as signals:
        try:
            work()
        except KeyboardInterrupt:
            print(f"cfrkit deepstack {args.deepstack_command}: interrupted; finished shards and training "
                  f"checkpoints are kept in {args.out} (run the same command to resume)", file=sys.stderr)
            return signals.exit_code()
    return 0


def run_nets(args) -> int:
    from cfrkit.value_nets.holdem.pipeline import build_nets, parse_streets, step_line

    preset = _preset(args)
    streets = parse_streets(args.streets)
    _check_run_options(args)
    done = {}

    def show(kind, street, info):
        print(step_line(kind, street, info, preset, args.out), flush=True)

    def work():
        done["report"] = build_nets(args.out, preset, streets, seed=args.seed, ray=args.ray, backend=args.backend,
                                    workers=args.workers, device=args.device, progress=not args.no_progress,
                                    threads=args.threads, on_step=show,
                                    max_train_seconds=None if args.max_train_minutes is None
                                    else 60 * args.max_train_minutes)

    code = _interruptible(args, work)
    if code == 0 and done["report"].get("stopped_at"):
        print(f"the {done['report']['stopped_at']} net's training stopped at --max-train-minutes; run the same "
              f"command to continue it (the later streets wait for the finished net)")
    if code == 0:
        print(f"nets: {done['report']['nets']} ({', '.join(done['report']['net_streets'])}); report: {args.out}/report.json")
    return code


def run_data(args) -> int:
    from cfrkit.value_nets.holdem.pipeline import generate_data, step_line

    preset = _preset(args)
    _check_run_options(args)
    done = {}

    def work():
        done["gen"] = generate_data(args.street, args.out, preset, seed=args.seed, backend=args.backend,
                                    workers=args.workers, ray=args.ray, device=args.device, leaf_nets=args.leaf_nets,
                                    progress=not args.no_progress)

    code = _interruptible(args, work)
    if code == 0:
        print(step_line("data", args.street, done["gen"], preset, args.out))
    return code


def run_train(args) -> int:
    from cfrkit.value_nets.holdem.pipeline import nets_dir, step_line, train_net

    preset = _preset(args)
    _check_run_options(args)
    done = {}

    def work():
        done["summary"] = train_net(args.street, args.out, preset, seed=args.seed, progress=not args.no_progress,
                                    threads=args.threads, max_seconds=None if args.max_train_minutes is None
                                    else 60 * args.max_train_minutes)

    code = _interruptible(args, work)
    if code == 0:
        print(step_line("train", args.street, done["summary"], preset, args.out) + f"; nets: {nets_dir(args.out)}")
    return code
