"""How often a target-interval ladder's pairs end above the target, per pilot rule and size (issue 27, ladder part).

Reads a ladder database (read only; copy a live one first) and treats each pair's stored blocks as its population:
for each rule (``z``: the normal quantile; ``t``: Stein's, :func:`cfrkit.evaluation.ladder.pilot_factor`) and pilot
size ``k``, it draws ``--reps`` pilots of ``k`` blocks (with replacement) from the pair's blocks, plans the pair's
blocks as :func:`cfrkit.platform.ladder.run_ladder` does (the reported estimator's interval over the pilot's deals,
between ``k`` and no cap), and computes the 95% half-width the planned deals would give with the pair's per-deal
deviation over all its stored blocks.  Prints per pair: the share of replays above ``1.05 x --target``, the 90th
percentile of the half-width (mbb/h) and the mean planned blocks over the blocks the pair's deviation needs.

    cp /work/runs/ladder50/ladder.db /work/runs/ladder50/ladder.db-wal /tmp/ls/
    python benchmarks/ladder_pilot.py /tmp/ls/ladder.db --target 50 --block 200 --min-blocks 100
"""
import argparse
import json
import math
import sqlite3

import numpy as np

from cfrkit.evaluation.ladder import Z95, pair_result, pilot_factor


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("--target", type=float, default=50.0, help="target half-width, mbb/h")
    ap.add_argument("--block", type=int, default=200, help="deals per block of the ladder")
    ap.add_argument("--min-blocks", type=int, default=100, help="pairs with at least this many stored blocks")
    ap.add_argument("--pilots", default="5,10,20,40")
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    con = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    by = {}
    for pair, _, d, a in con.execute("SELECT pair, block, duplicate, aivat FROM ladder_blocks ORDER BY pair, block"):
        by.setdefault(pair, []).append((np.frombuffer(d, "<f8"), None if a is None else np.frombuffer(a, "<f8")))
    rng = np.random.default_rng(args.seed)
    T = args.target

    def result(blocks):
        dup = np.concatenate([b[0] for b in blocks])
        av = None if blocks[0][1] is None else np.concatenate([b[1] for b in blocks])
        return pair_result("a", "b", dup, av)

    pilots = [int(k) for k in args.pilots.split(",")]
    print(f"pairs with >= {args.min_blocks} blocks of {args.block} deals, target +-{T:g}, {args.reps} replays each: "
          f"miss = share above +-{1.05 * T:g}, p90 = 90th percentile of the half-width, x = planned / needed deals")
    for pair, blocks in sorted(by.items()):
        if len(blocks) < args.min_blocks:
            continue
        s = json.loads(pair)
        name = f"{s['a'].split('/')[-1]} v {s['b'].split('/')[-1]}"
        full = result(blocks)
        sd = {"aivat": None if full.aivat is None else full.aivat.std, "duplicate": full.duplicate.std}
        need = (Z95 * full.estimate.std / math.sqrt(2) / T) ** 2 / args.block  # blocks (std is per hand)
        cells = []
        for k in pilots:
            for rule in ("z", "t"):
                f = pilot_factor(k) if rule == "t" else 1.0
                miss, planned, width = 0, [], []
                for _ in range(args.reps):
                    r = result([blocks[i] for i in rng.integers(0, len(blocks), k)])
                    deals = math.ceil(r.deals * f * (r.estimate.ci95 / T) ** 2)
                    n = max(k, -(-deals // args.block))
                    ci = Z95 * sd[r.estimator] / math.sqrt(2) / math.sqrt(n * args.block)
                    miss += ci > 1.05 * T
                    planned.append(n)
                    width.append(ci)
                cells.append(f"{rule}{k}: {100 * miss / args.reps:3.0f}% p90 {np.percentile(width, 90):3.0f} "
                             f"x{np.mean(planned) / need:.2f}")
        print(f"{name[:40]:<40} {len(blocks):5d} blocks, +-{full.estimate.ci95:6.1f} now | " + " | ".join(cells),
              flush=True)


if __name__ == "__main__":
    main()
