"""CPU time per river of the E[HS] bucket kernel on a chance node's run-outs (issue 27, match speed part 10).

``range_equity.river_ehs_buckets`` as ``EHSAbstraction.pair_buckets_boards`` calls it at AIVAT's chance nodes: 16 sampled
flops or turns, 24 run-outs each, the deal's two hands.  Prints CPU ns per river (``time.process_time``) and a digest
of the buckets (equal digests: the same buckets).  Compare two checkouts by running it under each::

    PYTHONPATH=/work/main python benchmarks/ehs_bucket_speed.py
    PYTHONPATH=$PWD python benchmarks/ehs_bucket_speed.py
"""
import argparse
import hashlib
import json
import time

import numpy as np

from cfrkit._kernels import range_equity
from cfrkit.abstraction.ehs_abstraction import EHSAbstraction


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200, help="chance nodes per street (other boards and hands each)")
    ap.add_argument("--repeat", type=int, default=10, help="calls per chance node")
    args = ap.parse_args()
    ab = EHSAbstraction((169, 50, 50, 50))
    rng = np.random.default_rng(0)
    for r, n in ((1, 3), (2, 4)):
        cases = []
        for _ in range(args.nodes):
            ids = np.sort(np.array([rng.choice(52, n, replace=False) for _ in range(16)], dtype=np.int64), axis=1)
            rivers, block = ab._rivers_of_sorted(ids, ids.tolist())
            cases.append((rivers, block, rng.choice(1326, 2, replace=False).astype(np.int64)))
        edges = np.ascontiguousarray(ab.edges[r], dtype=np.float64)
        digest = hashlib.sha256()
        t0 = time.process_time()
        for rivers, block, pairs in cases:
            for _ in range(args.repeat):
                out = range_equity.river_ehs_buckets(rivers, block, pairs, edges)
            digest.update(out.tobytes())
        cpu = time.process_time() - t0
        count = sum(c[0].shape[0] for c in cases) * args.repeat
        print(json.dumps({"street": ["flop", "turn"][r - 1], "rivers": count, "ns_per_river": round(1e9 * cpu / count),
                          "buckets_sha256": digest.hexdigest()[:12]}), flush=True)


if __name__ == "__main__":
    main()
