"""Where the range solver's memory goes on river, turn and flop, and how long the trees take to build (issue 30).

    python benchmarks/range_solver_memory.py [--spots river,turn,flop] [--iterations 30] [--storage float32,16bit]
                                             [--flop-iterations 0] [--postflop-solver BINARY] [--checkout DIR]

Each case runs in its own process (``ru_maxrss`` is the process's peak): the floors first (``python -c pass``,
``import numpy``, ``import cfrkit.solvers.public``; the range solver path must not import torch), then per spot
the resident memory after each step (imports, ``build_public_tree``, the solver's construction, ``N``
iterations) with the CPU seconds (``process_time``) of the tree build and of the layout.  Spots as in
``benchmarks/range_solver.py`` (river As Jd 8h 5c 2d, turn 8d As 8s Kh, flop Qs Jh 2h "50%, a"), full ranges,
DCFR, one thread, ``BoardRangeSolver`` through ``SubgameSolver``.

The flop's regrets and strategy sums (2.68 GB at 16-bit) are allocated zeroed and become resident on the first
iteration; with ``--flop-iterations 0`` (default: a process on this shared machine stays under 2 GB) the flop
line gives the resident memory after one exploitability walk (the kernel's workspace set up as a solve sets it
up; the zero tables are only read, and pages never written stay out of the resident set) plus the tables'
bytes, a projection of the peak, marked so.  ``--postflop-solver BINARY`` (``benchmarks/postflop_solver/build.sh``) runs postflop-solver's
``cfrkit_bench`` on the same spots and storage after ours (its flop with 0 iterations: its own count of the
memory it allocates, ``memory_usage``).  ``--checkout DIR`` measures the cfrkit of another checkout (before /
after comparisons; default: this script's).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")

CHILD = r"""
import json, resource, sys, time
def rss():
    with open('/proc/self/status') as f:
        return {k: int(v.split()[0]) / 1024 for k, v in (l.split(':', 1) for l in f) if k in ('VmRSS', 'VmHWM')}
case, iterations, storage = sys.argv[1], int(sys.argv[2]), sys.argv[3]
out = {'case': case, 'steps': []}
step = lambda name, **kw: out['steps'].append(dict(name=name, rss=rss()['VmRSS'], peak=rss()['VmHWM'], **kw))
if case == 'python':
    step('python')
elif case == 'numpy':
    import numpy
    step('import numpy')
else:
    import cfrkit.solvers.public
    step('import cfrkit.solvers.public', torch='torch' in sys.modules, scipy='scipy' in sys.modules)
    if case != 'cfrkit':
        from cfrkit.solvers.public import SubgameSolver, build_public_tree
        from cfrkit.solvers.public.postflop_game import PostflopPublicGame
        spots = {'river': ('AsJd8h5c2d', 1000, 2000, '50%, 100%, a'),
                 'turn': ('8dAs8sKh', 4000, 18000, {'turn': '50%, 100%, a', 'river': '100%, a'}),
                 'flop': ('QsJh2h', 200, 900, '50%, a')}
        board, pot, stack, sizes = spots[case]
        game = PostflopPublicGame(board, starting_pot=pot, effective_stack=stack, bet_sizes=sizes)
        c = time.process_time()
        tree = build_public_tree(game)
        step('tree', cpu=time.process_time() - c, nodes=len(tree))
        c = time.process_time()
        solver = SubgameSolver(tree, backend='compiled', storage=storage, threads=1)
        eng = solver.engine
        table = eng.storage_bytes / 2 ** 20
        step('solver', cpu=time.process_time() - c, table_mib=table, kernel_nodes=eng.layout.num_nodes,
             allin_mib=eng.allin_bytes / 2 ** 20)
        if iterations:
            c = time.process_time()
            solver.run(iterations)
            step(f'{iterations} iterations', cpu=time.process_time() - c)
        else:
            # one exploitability walk: the kernel's workspace as a solve sets it up, the zero tables only read
            # (untouched pages stay out of the resident set), so RSS + the tables is the peak of a solve
            c = time.process_time()
            eng.exploitability()
            step('workspace (exploitability walk)', cpu=time.process_time() - c)
            out['projected_peak'] = out['steps'][-1]['rss'] + table
print(json.dumps(out))
"""


def run_case(case: str, iterations: int, storage: str, root: str = ROOT) -> dict:
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1")
    if case == "python":
        cmd = [sys.executable, "-S", "-c", CHILD, case, "0", storage]  # -S: no site (the bare interpreter)
    else:
        cmd = [sys.executable, "-c", CHILD, case, str(iterations), storage]
    # cwd: the checkout measured (``python -c`` puts the working directory first on sys.path)
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=root)
    if res.returncode:
        raise SystemExit(f"{case} failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def run_postflop_solver(binary: str, spot: str, iterations: int, compress: bool) -> str:
    args = [binary, spot, "0", str(iterations)] + (["compress"] if compress else [])
    # through a shell that forks it: started directly, its ru_maxrss would begin at this process's peak (Linux keeps
    # the high-water mark across exec; benchmarks/range_solver.py fresh_process)
    res = subprocess.run(["sh", "-c", '"$0" "$@"; exit $?'] + args, capture_output=True, text=True,
                         env=dict(os.environ, RAYON_NUM_THREADS="1"))
    build = re.search(r"memory_usage ([\d.]+) MiB \(compressed ([\d.]+) MiB\)", res.stdout)
    peak = re.search(r"peak RSS (\d+) KiB", res.stdout)
    cpu = re.findall(r"([\d.]+) CPU s", res.stdout)
    return (f"postflop-solver {spot} {'16-bit' if compress else 'f32'}: {iterations} iterations"
            + (f" {cpu[-1]} CPU s" if cpu else "")
            + (f", memory_usage {build.group(2) if compress else build.group(1)} MiB" if build else "")
            + (f", peak RSS {int(peak.group(1)) / 1024:.1f} MiB" if peak else f" (no output: {res.stderr[-300:]})"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spots", default="river,turn,flop")
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--flop-iterations", type=int, default=0)
    ap.add_argument("--storage", default="float32,16bit")
    ap.add_argument("--postflop-solver", default=None, metavar="BINARY")
    ap.add_argument("--checkout", default=ROOT, metavar="DIR", help="cfrkit checkout to measure (default: this one)")
    args = ap.parse_args()
    print(f"cfrkit from {os.path.abspath(args.checkout)}", flush=True)
    print(f"load average at start: {os.getloadavg()}", flush=True)
    for case in ("python", "numpy", "cfrkit"):
        r = run_case(case, 0, "float32", args.checkout)
        s = r["steps"][-1]
        extra = f" (torch imported: {s['torch']}, scipy: {s['scipy']})" if "torch" in s else ""
        print(f"floor {s['name']}: {s['rss']:.1f} MiB{extra}", flush=True)
    for spot in [s for s in args.spots.split(",") if s]:
        for storage in args.storage.split(","):
            if spot == "flop" and storage != "16bit":
                continue  # 5.4 GB in float32
            its = args.flop_iterations if spot == "flop" else args.iterations
            r = run_case(spot, its, storage, args.checkout)
            parts = []
            for s in r["steps"]:
                more = "".join(f", {k} {v:.3f}" if isinstance(v, float) else f", {k} {v}" for k, v in s.items()
                               if k not in ("name", "rss", "peak", "torch", "scipy"))
                parts.append(f"{s['name']}: {s['rss']:.0f} MiB{more}")
            peak = r["steps"][-1]["peak"]
            line = f"{spot} {storage}: " + "; ".join(parts) + f" | peak RSS {peak:.0f} MiB"
            if "projected_peak" in r:
                line += f", projected peak with the tables touched {r['projected_peak']:.0f} MiB (not measured)"
            print(line, flush=True)
            if args.postflop_solver:
                print("  " + run_postflop_solver(args.postflop_solver, spot, its, storage == "16bit"), flush=True)
    print(f"load average at end: {os.getloadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
