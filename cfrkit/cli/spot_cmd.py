"""``cfrkit spot``: solve a hold'em postflop spot and print the strategy by hand class."""
from __future__ import annotations

import os
import sys
from typing import Optional

from cfrkit.cli import CliError
from cfrkit.cli._runtime import GracefulStop, check_output_file


def _gb(nbytes: int) -> str:
    return f"{nbytes / 1e9:.2f} GB" if nbytes >= 1e8 else f"{nbytes / 1e6:.1f} MB"


def available_memory_gb() -> Optional[float]:
    """GB of memory the machine can give now (``MemAvailable`` on Linux, free pages elsewhere), or None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 / 1e9
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 1e9
    except (ValueError, OSError, AttributeError):
        return None


def add_parser(sub) -> None:
    p = sub.add_parser("spot", help="solve a postflop spot (flop, turn or river) and print its strategy table")
    p.add_argument("board", help="board cards, e.g. Ks7h2d (flop), Ks7h2dQc (turn)")
    p.add_argument("--oop", required=True, help="out-of-position range, e.g. '22+,A2s+,KTo+,QJs:0.5'")
    p.add_argument("--ip", required=True, help="in-position range")
    p.add_argument("--pot", type=int, required=True, help="chips in the pot")
    p.add_argument("--stack", type=int, required=True, help="effective stack behind (chips)")
    p.add_argument("--bets", default="33%, 75%, a",
                   help="bet and raise sizes for every street and player, postflop-solver notation "
                        "(default '33%%, 75%%, a')")
    p.add_argument("--target", type=float, default=0.5, help="exploitability target, %% of the pot (default 0.5)")
    p.add_argument("--max-iterations", type=int, default=1000)
    p.add_argument("--node", default="", help="comma-separated action labels from the root, e.g. 'check,bet 25'")
    p.add_argument("--by", choices=("class", "category"), default="class", help="rows by hand class or made hand")
    p.add_argument("--csv", default=None, help="write the per-hand table of the node to this CSV file")
    p.add_argument("--save", default=None, help="save the solved spot (.npz) for cfrkit.solvers.public.spot.load_spot")
    p.add_argument("--max-memory", type=float, default=None, metavar="GB",
                   help="refuse a spot whose estimated memory exceeds this many GB (default: the memory "
                        "available now)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args) -> int:
    from tqdm.auto import tqdm

    from cfrkit.solvers.public.spot import estimate_spot, solve_spot

    if args.max_memory is not None and not args.max_memory > 0:
        raise CliError(f"--max-memory must be a positive number of GB, got {args.max_memory}")
    if args.max_iterations < 1:
        raise CliError(f"--max-iterations must be >= 1, got {args.max_iterations}")
    if args.save:
        check_output_file(args.save, "--save")
    size = estimate_spot(args.board, args.pot, args.stack, bet_sizes=args.bets)
    limit = args.max_memory if args.max_memory is not None else available_memory_gb()
    print(f"tree: {size['nodes']:,} nodes x {size['hands']} hands, about {_gb(size['bytes'])} to solve", flush=True)
    if limit is not None and size["bytes"] / 1e9 > limit:
        raise CliError(f"the spot needs about {_gb(size['bytes'])}, over the limit of {limit:g} GB: "
                       f"use fewer bet sizes, a later street, or raise --max-memory")
    quiet = args.quiet or not sys.stderr.isatty()
    build_bar = tqdm(total=size["nodes"], desc="building", unit="node", disable=quiet, leave=False)
    solve_bar = tqdm(total=args.max_iterations, desc="solving", unit="it", disable=quiet, leave=False)

    def on_build(n: int) -> None:
        build_bar.update(n - build_bar.n)

    started = []

    def on_block(iterations: int, pct: float) -> None:
        if not started:
            started.append(True)
            print("solving (Ctrl-C stops at the next block" + (" and saves to --save)" if args.save else ")"),
                  flush=True)
        solve_bar.update(iterations - solve_bar.n)
        solve_bar.set_postfix_str(f"{pct:.3f}% of pot")

    with GracefulStop() as stop:
        try:
            result = solve_spot(args.board, args.oop, args.ip, pot=args.pot, stack=args.stack,
                                bet_sizes=args.bets, target=args.target, max_iterations=args.max_iterations,
                                on_build=on_build, on_block=on_block, stop=stop.requested)
        finally:
            build_bar.close()
            solve_bar.close()
    if result.stopped:
        print(f"interrupted at iteration {result.iterations}: exploitability {result.exploitability:.3f} chips "
              f"({result.exploitability_pct:.3f}% of the pot)", end="")
        if args.save:
            result.save(args.save)
            print(f"; saved {args.save}")
        else:
            print(" (nothing saved: no --save)")
        return stop.exit_code()
    labels = [s.strip() for s in args.node.split(",") if s.strip()]
    node = result.node(*labels)
    print(f"{result.game.describe()}")
    print(f"solved in {result.iterations} iterations, {result.seconds:.2f} s: exploitability "
          f"{result.exploitability:.3f} chips ({result.exploitability_pct:.3f}% of the pot)")
    print(f"{node!r}")
    rows = result.report(node, by=args.by)
    labels_out = list(node.labels)
    print(f"{'group':16s} {'combos':>7s} " + " ".join(f"{label:>12s}" for label in labels_out))
    for r in rows:
        print(f"{r['group']:16s} {r['combos']:7.2f} " + " ".join(f"{r[l]:12.3f}" for l in labels_out))
    if args.csv:
        result.to_csv(args.csv, node)
        print(f"wrote {args.csv}")
    if args.save:
        result.save(args.save)
        print(f"saved {args.save}")
    return 0
