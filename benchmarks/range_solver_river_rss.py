"""Where the river solve's memory goes, step by step, in one process (issue 30 part 12).

    python benchmarks/range_solver_river_rss.py [--smaps] [--target 0.1]

The smallest program that solves the benchmark's river spot (As Jd 8h 5c 2d, pot 1000, stack 2000,
"50%, 100%, a", full ranges, float32, 1 thread, DCFR) to ``--target`` % of the pot (checks every 5
iterations), with the process's resident memory read from ``/proc/self/status`` after each step: VmRSS,
VmHWM (peak), RssAnon and RssFile in MiB, and the number of loaded modules.  ``--smaps``: also the resident
KiB each mapping (shared library, heap, anonymous region) gained in each step (``/proc/self/smaps``), the
changes of 40 KiB or more.  Linux only.  Run it with ``/usr/bin/time -f %M`` for the whole process's peak;
postflop-solver's river: ``/usr/bin/time -v .../cfrkit_bench river 0.1 400`` (3.3 MiB, RESULTS.md part 12).
"""
import argparse
import collections
import sys


def status() -> dict:
    """VmRSS, VmHWM, RssAnon, RssFile of this process in MiB."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, value = line.split(":", 1)
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[key] = int(value.split()[0]) / 1024
    return out


def mappings() -> collections.Counter:
    """Resident KiB per mapping: the file's path, or [heap] / [stack] / [anon START] for anonymous regions."""
    agg, cur = collections.Counter(), None
    with open("/proc/self/smaps") as f:
        for line in f:
            parts = line.split()
            if not parts[0].endswith(":"):
                name = parts[5] if len(parts) > 5 else "[anon]"
                cur = name if name != "[anon]" else f"[anon {parts[0].split('-')[0]}]"
            elif parts[0] == "Rss:":
                agg[cur] += int(parts[1])
    return agg


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smaps", action="store_true", help="per-mapping resident KiB gained in each step")
    ap.add_argument("--target", type=float, default=0.1, help="exploitability target, %% of the pot")
    args = ap.parse_args()
    last = [mappings() if args.smaps else None]

    def step(name: str) -> None:
        s = status()
        print(f"{name:52s} VmRSS {s['VmRSS']:6.1f}  VmHWM {s['VmHWM']:6.1f}  anon {s['RssAnon']:6.1f}  "
              f"file {s['RssFile']:6.1f}  modules {len(sys.modules)}", flush=True)
        if args.smaps:
            now = mappings()
            for key in sorted(set(now) | set(last[0]), key=lambda k: now[k] - last[0][k]):
                if abs(now[key] - last[0][key]) >= 40:
                    print(f"    {now[key] - last[0][key]:+6d} KiB {key}")
            last[0] = mappings()

    step("start (interpreter, argparse)")
    import numpy  # noqa: F401

    step("import numpy")
    from cfrkit.solvers.public import SubgameSolver, build_public_tree

    step("from cfrkit.solvers.public import ...")
    from cfrkit.solvers.public.postflop_game import PostflopPublicGame

    step("import postflop_game")
    game = PostflopPublicGame("AsJd8h5c2d", starting_pot=1000, effective_stack=2000, bet_sizes="50%, 100%, a")
    step("game")
    tree = build_public_tree(game)
    step(f"build_public_tree ({len(tree)} nodes)")
    solver = SubgameSolver(tree, backend="compiled", storage="float32", threads=1)
    step("SubgameSolver (layout, tables, workspace)")
    e = solver.exploitability_percent()
    step("first exploitability")
    while e > args.target:
        solver.run(5)
        e = solver.exploitability_percent()
    step(f"solved: {solver.engine.iterations} iterations, {e:.4f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
