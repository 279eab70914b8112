"""``cfrkit solve`` and ``cfrkit exploitability``.

``cfrkit solve leduc --algorithm cfr+ --iterations 1000 --out leduc.npz`` runs the solver with a
progress bar, prints exploitability every ``--eval-every`` iterations, saves the average policy and
the solver state to ``--out`` (resuming from it when it exists), and with ``--plot FILE.png`` draws
exploitability against iterations and seconds.
"""
from __future__ import annotations

import sys
import time
import warnings
from typing import List, Tuple

from cfrkit.cli import CliError

# spelled out (equal to cfrkit.solvers.tabular.runs' tuples, tests/test_solver_runs.py) so that building the
# parser imports no solver
COMPILED = ("cfr", "cfr+", "lcfr", "dcfr")
SAMPLING = ("es-mccfr", "os-mccfr")


def add_parser(sub) -> None:
    p = sub.add_parser("solve", help="solve a game with a CFR-family algorithm, printing exploitability")
    p.add_argument("game", help="game string, e.g. leduc, kuhn(players=3), leduc_nolimit(stack=1200)")
    p.add_argument("--algorithm", "-a", default="cfr+", choices=COMPILED + SAMPLING)
    p.add_argument("--iterations", "-n", type=int, default=1000, help="total iterations (default 1000)")
    p.add_argument("--out", "-o", default=None,
                   help="policy + checkpoint file (.npz); resumed when present, saved periodically and on "
                        "Ctrl-C / SIGTERM")
    p.add_argument("--eval-every", type=int, default=0,
                   help="exploitability every K iterations (default: about 10 reports per run)")
    p.add_argument("--checkpoint-every", type=int, default=0,
                   help="also save --out every K iterations (independent of --eval-every)")
    p.add_argument("--checkpoint-minutes", type=float, default=10.0,
                   help="save --out every M minutes of running (default 10; 0: only at the end and on signals)")
    p.add_argument("--plot", default=None, help="PNG of exploitability against iterations and seconds")
    p.add_argument("--seed", type=int, default=None, help="seed of the sampling solvers (default 0)")
    p.add_argument("--alpha", type=float, default=None, help="DCFR alpha (default 1.5)")
    p.add_argument("--beta", type=float, default=None, help="DCFR beta (default 0)")
    p.add_argument("--gamma", type=float, default=None, help="DCFR gamma (default 2)")
    p.add_argument("--simultaneous", action="store_true", help="simultaneous instead of alternating updates (cfr)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run_solve)

    e = sub.add_parser("exploitability", help="exact exploitability of a saved policy")
    e.add_argument("game", help="game string")
    e.add_argument("policy", help="policy file written by cfrkit solve (or TabularPolicy.save)")
    e.add_argument("--min-coverage", type=float, default=None,
                   help="refuse a policy covering less than this fraction of the information sets (default 0.1)")
    e.set_defaults(func=run_exploitability)


def _open_run(args, game):
    """The solver of ``args`` (resumed from ``--out`` when present, :func:`open_solver_run`); changed settings
    are reported with the options' names, other errors (one-line ``ValueError``) as the library words them."""
    from cfrkit._resume import ResumeSettingsError
    from cfrkit.solvers.tabular.runs import open_solver_run

    try:
        run = open_solver_run(game, args.algorithm, args.out, alpha=args.alpha, beta=args.beta, gamma=args.gamma,
                              seed=args.seed, simultaneous=args.simultaneous)
    except ResumeSettingsError as exc:
        detail = ", ".join(f"--{k} {new} (checkpoint: {old})" for k, (new, old) in exc.changed.items())
        raise CliError(f"{args.out} was made with other settings: {detail}; resume with the checkpoint's settings "
                       f"(or leave them out) or use another --out") from None
    if run.kept:
        print(f"settings from the checkpoint: {', '.join(f'{k} {v}' for k, v in run.kept.items())}", file=sys.stderr)
    return run.solver, run.resumed


def run_solve(args) -> int:
    from cfrkit.cli._runtime import GracefulStop, check_output_file
    from cfrkit.evaluation.convergence import convergence_measure
    from cfrkit.games import load
    from cfrkit._io import remove_stale_temp_files
    from cfrkit.solvers import TreeTooLargeError, compile_game

    if args.iterations <= 0:
        raise CliError(f"--iterations must be positive, got {args.iterations}")
    if args.checkpoint_every < 0 or not args.checkpoint_minutes >= 0:
        raise CliError("--checkpoint-every and --checkpoint-minutes must be >= 0")
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise CliError("--plot needs matplotlib: pip install 'cfrkit[plots]'") from None
        check_output_file(args.plot, "--plot")
    if args.out:
        check_output_file(args.out)
        for tmp in remove_stale_temp_files(args.out):
            print(f"removed {tmp} (left by an interrupted save)", file=sys.stderr)
    game = load(args.game)
    try:
        tree = compile_game(game)
    except TreeTooLargeError as exc:
        if args.algorithm in COMPILED:
            raise CliError(str(exc)) from None
        tree = None  # sampling solvers run on the protocol; exploitability needs the tree
    solver, resumed = _open_run(args, tree if (tree is not None and args.algorithm in COMPILED) else game)
    if resumed:
        print(f"resuming {args.out} at iteration {solver.iterations}", file=sys.stderr)
    every = args.eval_every or max(1, args.iterations // 10)
    measure, measure_name = convergence_measure(tree) if tree is not None else (None, "")
    history: List[Tuple[int, float, float]] = []
    start_seconds = getattr(solver, "seconds", 0.0)
    wall_start = time.perf_counter()
    last_save = [time.monotonic(), solver.iterations]

    def save(s) -> None:
        s.save(args.out)
        last_save[:] = [time.monotonic(), s.iterations]

    def report(s) -> None:
        seconds = getattr(s, "seconds", start_seconds + time.perf_counter() - wall_start)
        if tree is None:
            print(f"iteration {s.iterations:>8d}  {seconds:8.2f} s", flush=True)
            return
        policy = s.average_strategy_array() if hasattr(s, "average_strategy_array") else s.average_policy()
        with warnings.catch_warnings():  # unvisited sets of a sampling solver are uniform by definition
            warnings.simplefilter("ignore")
            value = measure(tree, policy, min_coverage=0.0)
        history.append((s.iterations, seconds, value))
        print(f"iteration {s.iterations:>8d}  {seconds:8.2f} s  {measure_name} {value:.6g}", flush=True)

    def after_chunk(s) -> None:
        if not args.out or s.iterations == last_save[1]:
            return
        k = args.checkpoint_every
        by_count = k and s.iterations // k > last_save[1] // k
        by_time = args.checkpoint_minutes and time.monotonic() - last_save[0] >= 60.0 * args.checkpoint_minutes
        if by_count or by_time:
            save(s)

    if solver.iterations >= args.iterations:
        print(f"{args.out} already has {solver.iterations} >= {args.iterations} iterations", file=sys.stderr)
        report(solver)
    else:
        with GracefulStop() as stop:
            solver.run(args.iterations, callback=report, callback_every=every, progress=not args.no_progress,
                       should_stop=stop.requested, after_chunk=after_chunk,
                       align=(args.checkpoint_every,) if args.out else ())
        if stop.requested():
            if args.out:
                save(solver)
                print(f"interrupted at iteration {solver.iterations}; saved {args.out} (run the same command to "
                      f"resume)", file=sys.stderr)
            else:
                print(f"interrupted at iteration {solver.iterations} (nothing saved: no --out)", file=sys.stderr)
            return stop.exit_code()
    if args.out:
        save(solver)
        print(f"saved {args.out}", file=sys.stderr)
    if args.plot and history:
        _plot(history, args.plot, f"{args.algorithm} on {game.game_string()}")
        print(f"plotted {args.plot}", file=sys.stderr)
    return 0


def _plot(history, path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    its, secs, vals = zip(*history)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, xs, label in ((axes[0], its, "iterations"), (axes[1], secs, "seconds")):
        ax.loglog([max(x, 1e-9) for x in xs], [max(v, 1e-12) for v in vals], marker="o")
        ax.set_xlabel(label)
        ax.set_ylabel("exploitability (game units)")
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def run_exploitability(args) -> int:
    from cfrkit.evaluation import exploitability
    from cfrkit.games import load
    from cfrkit.policy import TabularPolicy
    from cfrkit.solvers.tabular.cfr import PolicyCoverageWarning

    game = load(args.game)
    if args.min_coverage is not None and not 0.0 <= args.min_coverage <= 1.0:
        raise CliError(f"--min-coverage must be in [0, 1], got {args.min_coverage}")
    policy = TabularPolicy.load(args.policy, game)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PolicyCoverageWarning)
        value = exploitability(game, policy, min_coverage=args.min_coverage)
    for w in caught:
        if issubclass(w.category, PolicyCoverageWarning):
            print(f"warning: {w.message}", file=sys.stderr)
    line = f"exploitability {value:.9g}"
    if game.big_blind:
        line += f"  ({value / game.big_blind * 1000.0:.6g} mbb/g)"
    print(line)
    return 0
