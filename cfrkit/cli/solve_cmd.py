"""``cfrkit solve`` and ``cfrkit exploitability``.

``cfrkit solve leduc --algorithm cfr+ --iterations 1000 --out leduc.npz`` runs the solver with a
progress bar, prints exploitability every ``--eval-every`` iterations, saves the average policy and
the solver state to ``--out`` (resuming from it when it exists), and with ``--plot FILE.png`` draws
exploitability against iterations and seconds.
"""
from __future__ import annotations

import os
import sys
import time
from typing import List, Tuple

from cfrkit.cli import CliError

COMPILED = ("cfr", "cfr+", "lcfr", "dcfr")
SAMPLING = ("es-mccfr", "os-mccfr")


def add_parser(sub) -> None:
    p = sub.add_parser("solve", help="solve a game with a CFR-family algorithm, printing exploitability")
    p.add_argument("game", help="game string, e.g. leduc, kuhn(players=3), leduc_nolimit(stack=1200)")
    p.add_argument("--algorithm", "-a", default="cfr+", choices=COMPILED + SAMPLING)
    p.add_argument("--iterations", "-n", type=int, default=1000, help="total iterations (default 1000)")
    p.add_argument("--out", "-o", default=None, help="policy + checkpoint file (.npz); resumed when present")
    p.add_argument("--eval-every", type=int, default=0,
                   help="exploitability every K iterations (default: about 10 reports per run)")
    p.add_argument("--checkpoint-every", type=int, default=0, help="save --out every K iterations")
    p.add_argument("--plot", default=None, help="PNG of exploitability against iterations and seconds")
    p.add_argument("--seed", type=int, default=0, help="seed of the sampling solvers")
    p.add_argument("--alpha", type=float, default=1.5, help="DCFR alpha (default 1.5)")
    p.add_argument("--beta", type=float, default=0.0, help="DCFR beta (default 0)")
    p.add_argument("--gamma", type=float, default=2.0, help="DCFR gamma (default 2)")
    p.add_argument("--simultaneous", action="store_true", help="simultaneous instead of alternating updates (cfr)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run_solve)

    e = sub.add_parser("exploitability", help="exact exploitability of a saved policy")
    e.add_argument("game", help="game string")
    e.add_argument("policy", help="policy file written by cfrkit solve (or TabularPolicy.save)")
    e.set_defaults(func=run_exploitability)


def _make_solver(args, game):
    if args.algorithm in COMPILED:
        from cfrkit.solvers import CFRSolver

        if args.out and os.path.exists(args.out):
            solver = CFRSolver.load(args.out, game)
            if solver.algorithm != args.algorithm:
                raise CliError(f"{args.out} holds a {solver.algorithm} run; use --algorithm {solver.algorithm} "
                               f"to resume it or another --out")
            return solver, True
        return CFRSolver(game, algorithm=args.algorithm, alternating=not args.simultaneous, alpha=args.alpha,
                         beta=args.beta, gamma=args.gamma), False
    from cfrkit.solvers.tabular import mccfr

    cls = mccfr.ExternalSamplingMCCFR if args.algorithm == "es-mccfr" else mccfr.OutcomeSamplingMCCFR
    if args.out and os.path.exists(args.out):
        solver = mccfr.load_mccfr(args.out, game)
        if solver.algorithm != cls.algorithm:
            raise CliError(f"{args.out} holds a {solver.algorithm} run; use another --out to start a new one")
        return solver, True
    return cls(game, seed=args.seed), False


def run_solve(args) -> int:
    from cfrkit.evaluation import exploitability
    from cfrkit.games import load
    from cfrkit.solvers import TreeTooLargeError, compile_game

    if args.iterations <= 0:
        raise CliError(f"--iterations must be positive, got {args.iterations}")
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise CliError("--plot needs matplotlib: pip install 'cfrkit[plots]'") from None
    game = load(args.game)
    try:
        tree = compile_game(game)
    except TreeTooLargeError as exc:
        if args.algorithm in COMPILED:
            raise CliError(str(exc)) from None
        tree = None  # sampling solvers run on the protocol; exploitability needs the tree
    solver, resumed = _make_solver(args, tree if (tree is not None and args.algorithm in COMPILED) else game)
    if resumed:
        print(f"resuming {args.out} at iteration {solver.iterations}", file=sys.stderr)
    every = args.eval_every or max(1, args.iterations // 10)
    history: List[Tuple[int, float, float]] = []
    start_seconds = getattr(solver, "seconds", 0.0)
    wall_start = time.perf_counter()

    def report(s) -> None:
        seconds = getattr(s, "seconds", start_seconds + time.perf_counter() - wall_start)
        if tree is None:
            print(f"iteration {s.iterations:>8d}  {seconds:8.2f} s", flush=True)
            return
        policy = s.average_strategy_array() if hasattr(s, "average_strategy_array") else s.average_policy()
        value = exploitability(tree, policy)
        history.append((s.iterations, seconds, value))
        print(f"iteration {s.iterations:>8d}  {seconds:8.2f} s  exploitability {value:.6g}", flush=True)
        if args.out and args.checkpoint_every and s.iterations % args.checkpoint_every == 0:
            s.save(args.out)

    if solver.iterations >= args.iterations:
        print(f"{args.out} already has {solver.iterations} >= {args.iterations} iterations", file=sys.stderr)
        report(solver)
    else:
        solver.run(args.iterations, callback=report, callback_every=every, progress=not args.no_progress)
    if args.out:
        solver.save(args.out)
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
    from cfrkit.evaluation import exploitability, exploitability_mbb
    from cfrkit.games import load
    from cfrkit.policy import TabularPolicy

    game = load(args.game)
    policy = TabularPolicy.load(args.policy, game)
    value = exploitability(game, policy)
    line = f"exploitability {value:.9g}"
    if game.big_blind:
        line += f"  ({exploitability_mbb(game, policy):.6g} mbb/g)"
    print(line)
    return 0
