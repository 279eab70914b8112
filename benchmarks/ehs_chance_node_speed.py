"""CPU microseconds of a flop chance node's buckets: the run-outs and the E[HS] of a deal's two hands (issue 27).

Per node: 16 sampled flops, 24 run-outs each (``pair_ehs.sampled_runouts``), then the two hands' E[HS] buckets on
the 384 rivers (``range_equity.river_ehs_buckets``) -- what ``EHSAbstraction.pair_buckets_boards`` does at the AIVAT
value function's flop chance node.  Best of ``--reps`` passes over ``--nodes`` random nodes, CPU time
(``time.process_time``); ``--against DIR`` runs the same in a process importing cfrkit from DIR (another checkout)
and prints the ratio, after checking that both give the same rivers and buckets.

    python benchmarks/ehs_chance_node_speed.py --against /work/main
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

import numpy as np

from cfrkit._kernels import pair_ehs, range_equity
from cfrkit.cards.hands import pair_index


def _nodes(count: int, seed: int):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        cards = rng.choice(52, 4, replace=False)
        rest = np.array([c for c in range(52) if c not in cards.tolist()])
        flops = np.sort(np.array([rng.choice(rest, 3, replace=False) for _ in range(16)]), axis=1).astype(np.int64)
        seeds = rng.integers(0, 2 ** 63, 16).astype(np.uint64)
        pairs = np.array([pair_index(int(cards[0]), int(cards[1])), pair_index(int(cards[2]), int(cards[3]))],
                         dtype=np.int64)
        out.append((np.ascontiguousarray(flops), seeds, pairs))
    return out


def measure(nodes: int, reps: int, seed: int) -> dict:
    work = _nodes(nodes, seed)
    edges = np.linspace(0.02, 0.98, 49)
    digest = hashlib.sha256()
    for flops, seeds, pairs in work:
        rivers = pair_ehs.sampled_runouts(flops, seeds, 24)
        digest.update(rivers.tobytes())
        digest.update(range_equity.river_ehs_buckets(rivers, 24, pairs, edges).tobytes())
    both, runouts = [], []
    for _ in range(reps):
        t = time.process_time()
        for flops, seeds, pairs in work:
            range_equity.river_ehs_buckets(pair_ehs.sampled_runouts(flops, seeds, 24), 24, pairs, edges)
        both.append(time.process_time() - t)
        t = time.process_time()
        for flops, seeds, pairs in work:
            pair_ehs.sampled_runouts(flops, seeds, 24)
        runouts.append(time.process_time() - t)
    us = 1e6 / nodes
    return {"node_us": min(both) * us, "runouts_us": min(runouts) * us, "ehs_us": (min(both) - min(runouts)) * us,
            "digest": digest.hexdigest()[:12]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--against", default=None, help="another checkout's root: the same measure there, and the ratio")
    ap.add_argument("--json", action="store_true", help="print this checkout's numbers as JSON only")
    args = ap.parse_args()
    here = measure(args.nodes, args.reps, args.seed)
    if args.json:
        print(json.dumps(here))
        return
    print(f"this checkout: {json.dumps(here)}")
    if args.against:
        env = dict(os.environ, PYTHONPATH=args.against)
        out = subprocess.run([sys.executable, __file__, "--nodes", str(args.nodes), "--reps", str(args.reps),
                              "--seed", str(args.seed), "--json"], env=env, capture_output=True, text=True, check=True)
        other = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{args.against}: {json.dumps(other)}")
        if other["digest"] != here["digest"]:
            raise SystemExit("the rivers or buckets differ between the checkouts")
        for k in ("node_us", "runouts_us", "ehs_us"):
            print(f"{k}: {other[k]:.1f} -> {here[k]:.1f} ({other[k] / here[k]:.2f}x)")


if __name__ == "__main__":
    main()
