"""The same fixed workloads on two checkouts of cfrkit, in one run: CPU and wall seconds and their ratio.

    python benchmarks/before_after.py --base /path/to/old/checkout [--new .] [--repeats 2] [--only river,turn]
                                      [--blueprint BP.npz] [--json out.json]

Each checkout must be built (``python setup.py build_ext --inplace`` or its compiled kernels copied in).
Every workload is a command line that both versions accept and that does a fixed amount of work
(fixed iterations, deals or hands, fixed seeds), run as a child process with ``PYTHONPATH`` set to the
checkout; its CPU time is the child's (and its own children's) user + system time from ``wait4``, which
load on the machine distorts less than wall time.  Runs alternate base / new ``--repeats`` times and the
smallest CPU time of each is kept.  A ratio new / base below 1 means the new checkout is faster.

Workloads (names for ``--only``):

* ``river``: the range solver on postflop-solver's river spot to 0.1% of the pot, one thread;
* ``turn``: the turn spot, 40 iterations, one thread (the tree build included);
* ``blueprint``: blueprint CFR+ training speed, raise cap 1, 30 iterations (``benchmarks/blueprint.py speed``);
* ``match``: fixed-range-raiser against always-call, 2,000 duplicate hands with AIVAT (``cfrkit match``);
* ``lbr``: LBR against the random agent, FCPA, rounds 1-4, 100 deals, one process;
* ``lbr-blueprint``: the same against a blueprint file given by ``--blueprint`` (skipped without one);
* ``platform``: the platform load benchmark's fixed work (20 matches of 30 hands each, the server's CPU).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def workloads(blueprint: str | None):
    """Name -> argument list (run with the checkout as the working directory)."""
    py = sys.executable
    jobs = {
        "river": [py, "benchmarks/range_solver.py", "--spots", "river", "--targets", "0.1",
                  "--max-iterations", "400", "--threads", "1"],
        "turn": [py, "benchmarks/range_solver.py", "--spots", "turn", "--targets", "0.001",
                 "--max-iterations", "40", "--check-every", "40", "--threads", "1"],
        "blueprint": [py, "benchmarks/blueprint.py", "speed", "--raise-cap", "1", "--iterations", "30"],
        "match": [py, "-m", "cfrkit", "match", "fixed-range-raiser", "always-call", "--hands", "2000",
                  "--duplicate", "--aivat", "--seed", "1"],
        "lbr": [py, "-m", "cfrkit", "lbr", "random", "--bets", "FCPA", "--rounds", "1-4", "--hands", "100",
                "--processes", "1", "--seed", "1", "--no-checkpoint"],
        "platform": [py, "benchmarks/platform_load.py", "--matches", "20", "--fixed-hands", "30",
                     "--skip-restart"],
    }
    if blueprint:
        # "blueprint --policy FILE": the spelling both the old CLI and the registry accept
        jobs["lbr-blueprint"] = [py, "-m", "cfrkit", "lbr", "blueprint", "--policy", os.path.abspath(blueprint),
                                 "--bets", "FCPA", "--rounds", "1-4", "--hands", "100", "--processes", "1",
                                 "--seed", "1", "--no-checkpoint"]
    return jobs


def run_measured(args, checkout: Path, timeout: float):
    """(CPU seconds, wall seconds, return code, last output line) of one child run in ``checkout``.

    The CPU seconds are the child's and its waited-for descendants' user + system time (``RUSAGE_CHILDREN``
    before and after: the child is reaped by ``communicate``).
    """
    env = dict(os.environ, PYTHONPATH=str(checkout), OMP_NUM_THREADS="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return float("inf"), timeout, -9, "timed out"
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, proc.returncode, (out.strip().splitlines() or [""])[-1][:160]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="the older checkout (built)")
    parser.add_argument("--new", default=str(ROOT), help="the newer checkout (default: this one)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated workload names")
    parser.add_argument("--blueprint", default=None, help="a blueprint .npz for the lbr-blueprint workload")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args(argv)
    base, new = Path(args.base).resolve(), Path(args.new).resolve()
    for path in (base, new):
        if not (path / "cfrkit" / "__init__.py").exists():
            parser.error(f"{path} is not a cfrkit checkout")
    jobs = workloads(args.blueprint)
    names = [n for n in args.only.split(",") if n] or list(jobs)
    unknown = [n for n in names if n not in jobs]
    if unknown:
        parser.error(f"unknown workload(s) {unknown}; known: {', '.join(jobs)}")
    rows = []
    print(f"base {base}\nnew  {new}\nload average at start: {os.getloadavg()[0]:.2f}")
    print("| workload | base CPU s | new CPU s | new/base CPU | base wall s | new wall s |")
    print("|---|---|---|---|---|---|")
    for name in names:
        best = {"base": (float("inf"), float("inf")), "new": (float("inf"), float("inf"))}
        failed = []
        for _ in range(max(1, args.repeats)):
            for label, checkout in (("base", base), ("new", new)):
                cpu, wall, rc, last = run_measured(jobs[name], checkout, args.timeout)
                if rc != 0:
                    failed.append(f"{label} exited {rc}: {last}")
                    continue
                if cpu < best[label][0]:
                    best[label] = (cpu, wall)
        (bc, bw), (nc, nw) = best["base"], best["new"]
        ratio = nc / bc if bc not in (0.0, float("inf")) and nc != float("inf") else float("nan")
        rows.append({"workload": name, "base_cpu_s": bc, "new_cpu_s": nc, "ratio": ratio, "base_wall_s": bw,
                     "new_wall_s": nw, "failures": failed})
        print(f"| {name} | {bc:.2f} | {nc:.2f} | {ratio:.3f} | {bw:.2f} | {nw:.2f} |", flush=True)
        for f in failed:
            print(f"  ({name}: {f})")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"base": str(base), "new": str(new), "rows": rows}, indent=2))
    return 0 if not any(r["failures"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
