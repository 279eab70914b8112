"""Two builds of the equity kernel's flop / turn counters (``equity.hand_vs_hand_boards``): same counts, CPU seconds.

    python benchmarks/equity_rank_counts_ab.py REF [--deals 2000] [--boards 16] [--rounds 6] [--seed 0]
    python benchmarks/equity_rank_counts_ab.py REF --only ref|new --rounds 1     # one build, e.g. under callgrind

``REF``: a reference ``equity*.so`` (or a directory holding one, e.g. a copy of main's ``cfrkit/_kernels``); "new" is
this checkout's ``cfrkit._kernels.equity``.  The work: ``--deals`` hole-card deals (half uniformly random, half with
both hands and the boards drawn mostly from one or two suits, so that the flush paths and the fall-back to the full
enumeration run too), each with ``--boards`` flops and ``--boards`` turns, one ``hand_vs_hand_boards`` call per deal
and street.  First checks that both builds return the same int64 counts on every call (exits 1 when not), then times
one pass over the work per build and round, alternating the order (``ab_common.alternating_cpu``), and prints the
median CPU seconds (``process_time``) per pass of each and their ratio new / ref.

For instruction counts (load-independent), run each build alone under callgrind, counting only inside the kernel call:

    valgrind --tool=callgrind --collect-atstart=no --toggle-collect='__pyx_pw_*hand_vs_hand_boards' \\
        python benchmarks/equity_rank_counts_ab.py REF --only new --rounds 1
"""
from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ab_common import alternating_cpu

# imported before the reference is loaded: a Cython module registers itself under its full name
from cfrkit._kernels import equity as new_equity


def load_reference(path: str):
    """The equity module built at ``path`` (a .so, or a directory holding exactly one ``equity*.so``)."""
    if os.path.isdir(path):
        found = glob.glob(os.path.join(path, "equity*.so"))
        if len(found) != 1:
            raise SystemExit(f"{path}: need exactly one equity*.so, found {len(found)}")
        path = found[0]
    spec = importlib.util.spec_from_file_location("equity", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if os.path.samefile(module.__file__, new_equity.__file__):
        raise SystemExit(f"{path} is this checkout's build")
    return module


def make_work(deals: int, boards: int, seed: int):
    """List of (a1, a2, b1, b2, flops uint8[boards, 3], turns uint8[boards, 4]) with distinct cards per row."""
    rng = np.random.default_rng(seed)
    work = []
    for d in range(deals):
        if d % 2 == 0:
            pool = np.arange(52)
        else:  # mostly one or two suits: flush draws, made flushes, a hand with 4+ of a suit (the fall-back)
            suits = rng.choice(4, int(rng.integers(1, 3)), replace=False)
            suited = np.array([c for c in range(52) if c & 3 in suits])
            others = np.array([c for c in range(52) if c & 3 not in suits])
            pool = np.concatenate([suited, rng.choice(others, 4, replace=False)])
        hole = rng.choice(pool, 4, replace=False)
        rest = np.array([c for c in pool if c not in hole])
        flops = np.array([rng.choice(rest, 3, replace=False) for _ in range(boards)], dtype=np.uint8)
        turns = np.array([rng.choice(rest, 4, replace=False) for _ in range(boards)], dtype=np.uint8)
        work.append((*(int(c) for c in hole), flops, turns))
    return work


def one_pass(module, work):
    """The counts of every call of one pass over ``work``: list of int64[boards, 3]."""
    out = []
    for a1, a2, b1, b2, flops, turns in work:
        out.append(module.hand_vs_hand_boards(a1, a2, b1, b2, flops))
        out.append(module.hand_vs_hand_boards(a1, a2, b1, b2, turns))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ref")
    ap.add_argument("--deals", type=int, default=2000)
    ap.add_argument("--boards", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=("ref", "new"), help="time one build alone (no comparison)")
    args = ap.parse_args()
    if args.deals < 1 or args.boards < 1 or args.rounds < 1:
        raise SystemExit("--deals, --boards and --rounds must be at least 1")
    builds = {"ref": load_reference(args.ref), "new": new_equity}
    work = make_work(args.deals, args.boards, args.seed)
    calls = 2 * len(work)
    if args.only:
        cpu = alternating_cpu({args.only: lambda _step: one_pass(builds[args.only], work)}, args.rounds)
        print(f"{args.only}: median {np.median(cpu[args.only]):.4f} CPU s per pass of {calls} calls", flush=True)
        return 0
    print(f"load average at start: {os.getloadavg()}", flush=True)
    got = {k: one_pass(m, work) for k, m in builds.items()}  # also warms both (the hash table is per build)
    same = all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(got["ref"], got["new"]))
    rows = sum(len(x) for x in got["new"])
    print(f"{calls} calls, {rows} boards ({args.deals} deals x {args.boards} flops and {args.boards} turns): counts "
          f"{'identical' if same else 'DIFFERENT'}", flush=True)
    cpu = alternating_cpu({k: (lambda _step, m=m: one_pass(m, work)) for k, m in builds.items()}, args.rounds)
    med = {k: float(np.median(v)) for k, v in cpu.items()}
    print(f"CPU s per pass (median of {args.rounds}): ref {med['ref']:.4f}, new {med['new']:.4f}; new / ref = "
          f"{med['new'] / med['ref']:.3f}; load average at end: {os.getloadavg()}", flush=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
