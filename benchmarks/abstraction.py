"""Build time and memory of the 169/1000/1000/1000 hold'em abstraction, measured on subsets.

Each round runs in its own process (its peak RSS is the round's memory): features of the k-means
sample, k-means, then the assignment pass over a random ``--fraction`` of the round's canonical
boards (all hands, all orderings, written into the memory-mapped table).  The full round's time is
EXTRAPOLATED as sample features + k-means + assignment / fraction.  The flop (potential-aware over
turn buckets) looks its turn buckets up in a synthetic turn table (random buckets: the lookup cost
is that of the real table; the turn centres are the real ones of the turn phase).  Also measures
the potential-aware distance: greedy EMD (used) and POT's Sinkhorn against exact ``ot.emd2``.

    python benchmarks/abstraction.py --fraction 0.002 --sample 50000 --workers 2   # whole phases
    python benchmarks/abstraction.py --rates --boards 20          # per-board CPU of the assignment
    OMP_NUM_THREADS=1 python benchmarks/abstraction.py --kmeans-points 20000   # k-means CPU
    # potential-aware flop over a REAL turn table in --out (a finished turn round, built with --sample S):
    python benchmarks/abstraction.py --flop-kmeans 20000 --sample S --out DIR      # k-means, saves centres
    python benchmarks/abstraction.py --rates --rounds flop --sample S --out DIR    # assignment CPU / board
    python benchmarks/abstraction.py --flop-agreement --boards 16 --sample S --out DIR  # capped vs exact
    # the full build this extrapolates:
    python -m cfrkit abstraction build --buckets 169,1000,1000,1000 --out abs_1000
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def params_for(args):
    from cfrkit.abstraction.params import AbstractionParams

    return AbstractionParams(buckets=(169, 1000, 1000, 1000), sample=args.sample, seed=0)


def run_phase(args) -> dict:
    from cfrkit.abstraction import build as B
    from cfrkit.abstraction import features as F
    from cfrkit.abstraction.tables import write_table
    from cfrkit.cards.isomorphism import holdem_indexer

    p = params_for(args)
    os.makedirs(args.out, exist_ok=True)
    r = {"river": 3, "turn": 2, "flop": 1}[args.phase]
    t0 = time.time()
    if not os.path.exists(os.path.join(args.out, "ochs_ranges.npy")):
        B._atomic_npy(os.path.join(args.out, "ochs_ranges.npy"),
                      F.preflop_opponent_clusters(F.DeckContext(p), p.ochs_clusters, p.seed))
    if r == 1:  # synthetic turn table with the turn phase's real centres
        assert os.path.exists(os.path.join(args.out, "round2_centres.npy")), "run the turn phase first"
        n = holdem_indexer().size(2)
        rng = np.random.default_rng(0)
        write_table(os.path.join(args.out, "round2.bkt"), rng.integers(0, 1000, n).astype(np.uint16),
                    {"round": 2, "params": p.to_dict(), "num_buckets": 1000, "seed": 0, "synthetic": True})
    setup = time.time() - t0
    stats = B._build_round(p, r, args.out, args.workers, not args.no_progress, None, args.fraction)
    stats["setup_seconds"] = setup
    stats["peak_rss_mb"] = B._peak_rss_mb()
    if r == 1:
        stats["distance_error"] = pa_distance_error(p, args.out)
    return stats


def pa_distance_error(p, out, n_points=40, n_centres=5) -> dict:
    """Greedy and Sinkhorn EMD against exact EMD on flop points x flop centres."""
    from cfrkit.abstraction.build import RoundFeatures
    from cfrkit.abstraction.enumerate import board_sets

    rf = RoundFeatures(p, 1, out)
    C = np.load(os.path.join(out, "round1_centres.npy")).astype(np.float64)
    sets, _ = board_sets(3)
    rng = np.random.default_rng(1)
    rows = []
    for b in rng.choice(len(sets), 4, replace=False):
        _, X = rf.of_board(sets[b])
        rows.extend(X[rng.choice(len(X), n_points // 4, replace=False)])
    exact, greedy, sink = [], [], []
    te = tg = ts = 0.0
    for row in rows:
        for q in C[rng.choice(len(C), n_centres, replace=False)]:
            t = time.perf_counter(); exact.append(rf.space.exact_emd(row, q)); te += time.perf_counter() - t
            t = time.perf_counter(); greedy.append(rf.space.greedy_emd(row, q)); tg += time.perf_counter() - t
            t = time.perf_counter(); sink.append(rf.space.sinkhorn_emd(row, q, reg=0.01)); ts += time.perf_counter() - t
    exact, greedy, sink = map(np.array, (exact, greedy, sink))
    n = len(exact)
    return {"pairs": n, "greedy_rel_error_mean": float(np.mean((greedy - exact) / exact)),
            "greedy_rel_error_max": float(np.max((greedy - exact) / exact)),
            "sinkhorn_rel_error_mean": float(np.mean(np.abs(sink - exact) / exact)),
            "exact_us": te / n * 1e6, "greedy_us": tg / n * 1e6, "sinkhorn_us": ts / n * 1e6,
            "argmin_agreement_greedy": None}


def rates(args) -> None:
    """CPU seconds per board of the assignment pass (features + nearest centre + isomorphism indices
    of every ordering), with centres left in --out by earlier phases (flop: 1000 random sample points'
    distributions as centres, turn: synthetic table), and CPU seconds of k-means on a small sample;
    the full round is EXTRAPOLATED from them."""
    from cfrkit.abstraction.build import RoundFeatures, assign_boards
    from cfrkit.abstraction.enumerate import board_sets
    from cfrkit.abstraction.params import BOARD_CARDS

    p = params_for(args)
    rng = np.random.default_rng(0)
    out = {}
    rounds = [x for x in (("river", 3, args.boards), ("turn", 2, args.boards), ("flop", 1, max(2, args.boards // 10)))
              if x[0] in args.rounds.split(",")]
    for name, r, nb in rounds:
        rf = RoundFeatures(p, r, args.out)
        if r == 1:
            rf.space.max_candidates = args.max_candidates
        sets, _ = board_sets(BOARD_CARDS[r])
        pick = rng.choice(len(sets), nb, replace=False)
        if r == 1 and os.path.exists(os.path.join(args.out, "round1_centres.npy")):
            rf.centres = np.load(os.path.join(args.out, "round1_centres.npy"))  # from --flop-kmeans
        elif r == 1:
            X = np.concatenate([rf.of_board(sets[b])[1] for b in pick])
            C = np.zeros((1000, 1000))
            for j, row in enumerate(X[rng.choice(len(X), 1000, replace=False)]):
                ids, cnt = np.unique(row[row >= 0], return_counts=True)
                C[j, ids] = cnt / cnt.sum()
            rf.centres = C.astype(np.float32)
        else:
            rf.centres = np.load(os.path.join(args.out, f"round{r}_centres.npy"))
        c0 = time.process_time()
        entries = 0
        computed = 0
        for b in pick:
            pos, _, c = assign_boards(rf, sets[b:b + 1], None)
            entries += pos.size
            computed += c
        cpu = (time.process_time() - c0) / nb
        out[name] = {"boards": len(sets), "cpu_per_board": cpu, "entries_per_board": entries / nb,
                     "assign_cpu_total": cpu * len(sets), "distances_per_hand": computed / max(entries, 1)}
        print(f"{name}: {cpu * 1000:.1f} ms CPU per board ({entries / nb:.0f} table entries), "
              f"{len(sets)} boards -> {cpu * len(sets):.0f} CPU s, {cpu * len(sets) / 2 / 3600:.2f} h on 2 cores "
              f"(EXTRAPOLATED)", flush=True)
    print("RATES " + json.dumps(out))


def flop_sample(args, rf, n_hands, seed=1):
    """Flop points (turn buckets of every hand for each turn card) of the boards a build samples."""
    from cfrkit.abstraction.enumerate import board_sets

    sets, weights = board_sets(3)
    rng = np.random.default_rng(seed)
    n_boards = min(len(sets), -(-n_hands // 1176))
    X, W = [], []
    for b in np.sort(rng.choice(len(sets), n_boards, replace=False)):
        live, x = rf.of_board(sets[b])
        X.append(x)
        W.append(np.full(len(live), float(weights[b])))
    return np.concatenate(X), np.concatenate(W)


def flop_kmeans(args) -> None:
    """CPU seconds and bound statistics of the potential-aware flop k-means (k = 1000) on
    --flop-kmeans hands, over the real turn table of --out (a finished turn round); saves the
    centres as round1_centres.npy for --rates / --flop-agreement."""
    from cfrkit.abstraction.build import RoundFeatures
    from cfrkit.abstraction.clustering import kmeans_pa_emd

    p = params_for(args)
    rf = RoundFeatures(p, 1, args.out)
    c0 = time.process_time()
    X, W = flop_sample(args, rf, args.flop_kmeans)
    print(f"sample features: {len(X)} hands, {time.process_time() - c0:.1f} CPU s", flush=True)
    feat = time.process_time() - c0
    rf.space.max_candidates = args.max_candidates
    labels, C, st = kmeans_pa_emd(X, rf.space, 1000, W, p.seed, max_iter=args.max_iter,
                                  on_iteration=lambda it: print("ITER " + json.dumps(it), flush=True))
    np.save(os.path.join(args.out, "round1_centres.npy"), C)
    print("FLOPKMEANS " + json.dumps({"points": len(X), "sample_feature_cpu": feat, "max_candidates": args.max_candidates,
                                       "stats": st, "peak_rss_mb": __import__("resource").getrusage(
                                           __import__("resource").RUSAGE_SELF).ru_maxrss / 1024}), flush=True)


def flop_agreement(args) -> None:
    """Candidate-capped search (EMD to the ``--max-candidates`` best-LB0 centres) against the exact
    search (all centres, pruned by LB0/LB1 only), both under the greedy EMD, on every hand of
    --boards // 4 random flop boards; and the greedy EMD's nearest centre against the exact EMD's
    (POT ot.emd2, all centres whose LB1 is below the exact EMD of the greedy choice) on a subsample."""
    from cfrkit.abstraction.build import RoundFeatures
    from cfrkit.abstraction.clustering import PACentres, pa_nearest
    from cfrkit.abstraction.enumerate import board_sets
    from cfrkit._kernels import abstraction as K

    p = params_for(args)
    rf = RoundFeatures(p, 1, args.out)
    C = np.load(os.path.join(args.out, "round1_centres.npy"))
    pc = PACentres(rf.space, C)
    sets, _ = board_sets(3)
    rng = np.random.default_rng(7)
    nb = max(1, args.boards // 4)
    X = np.concatenate([rf.of_board(sets[b])[1] for b in rng.choice(len(sets), nb, replace=False)])
    res = {"boards": nb, "hands": len(X)}
    space = rf.space
    space.max_candidates = 0
    c0 = time.process_time()
    lab_x, d_x, _, cnt_x = pa_nearest(space, X, pc)
    res["exact_search_cpu_per_hand_ms"] = (time.process_time() - c0) / len(X) * 1e3
    res["exact_search_counts_per_hand"] = (cnt_x / len(X)).tolist()
    space.use_marginal = False
    c0 = time.process_time()
    sub = X[:200]
    lab_0, _, _, cnt_0 = pa_nearest(space, sub, pc)
    res["lb0_only_cpu_per_hand_ms"] = (time.process_time() - c0) / len(sub) * 1e3
    res["lb0_only_counts_per_hand"] = (cnt_0 / len(sub)).tolist()
    assert np.array_equal(lab_0, lab_x[:200])
    space.use_marginal = True
    for cap in (8, 32):
        space.max_candidates = cap
        c0 = time.process_time()
        lab_c, d_c, _, cnt_c = pa_nearest(space, X, pc)
        res[f"cap{cap}"] = {"same_centre": float(np.mean(lab_c == lab_x)),
                            "mean_emd_excess": float(np.mean((d_c - d_x) / d_x)),
                            "max_emd_excess": float(np.max((d_c - d_x) / d_x)),
                            "cpu_per_hand_ms": (time.process_time() - c0) / len(X) * 1e3,
                            "counts_per_hand": (cnt_c / len(X)).tolist()}
    space.max_candidates = 0
    # greedy argmin against exact-EMD argmin (POT), pruned by LB1 <= exact EMD
    Qt = np.zeros((len(C), space.num_buckets))
    for j in range(len(C)):
        v = pc.cids[j] >= 0
        Qt[j, pc.cids[j][v]] = pc.cmass[j][v]
    pick = rng.choice(len(X), min(args.exact_hands, len(X)), replace=False)
    same = 0
    excess = []
    pot_calls = 0
    for i in pick:
        row = X[i]
        _, l1 = K.pa_lower_bounds(X[i:i + 1], space.embed, space.norm, pc.cids, pc.cemb, pc.cvals, pc.cw)
        l1 = l1[0]
        e_g = space.exact_emd(row, Qt[lab_x[i]])
        best, best_j = e_g, lab_x[i]
        for j in np.argsort(l1):
            if l1[j] >= best:
                break
            if j == lab_x[i]:
                continue
            e = space.exact_emd(row, Qt[j])
            pot_calls += 1
            if e < best:
                best, best_j = e, j
        same += best_j == lab_x[i]
        excess.append((e_g - best) / best)
    res["greedy_vs_exact_emd"] = {"hands": len(pick), "same_centre": same / len(pick),
                                  "mean_exact_emd_excess": float(np.mean(excess)),
                                  "max_exact_emd_excess": float(np.max(excess)), "pot_calls_per_hand": pot_calls / len(pick)}
    print("FLOPAGREE " + json.dumps(res), flush=True)


def kmeans_rates(args) -> None:
    """CPU seconds of the river (L2, sklearn) and turn (1-D EMD, Hamerly + sum bound) k-means with
    k = 1000 on --kmeans-points hands drawn from 20 random boards (centres of --out not needed)."""
    from cfrkit.abstraction.build import RoundFeatures
    from cfrkit.abstraction.clustering import kmeans_emd1d, kmeans_l2
    from cfrkit.abstraction.enumerate import board_sets
    from cfrkit.abstraction.params import BOARD_CARDS

    p = params_for(args)
    rng = np.random.default_rng(0)
    for r in (3, 2):
        rf = RoundFeatures(p, r, args.out)
        sets, w = board_sets(BOARD_CARDS[r])
        X, W = [], []
        c0 = time.process_time()
        for b in rng.choice(len(sets), 20, replace=False):
            live, x = rf.of_board(sets[b])
            X.append(x)
            W.append(np.full(len(live), float(w[b])))
        X, W = np.concatenate(X), np.concatenate(W)
        feat = (time.process_time() - c0) / len(X)
        idx = rng.choice(len(X), min(args.kmeans_points, len(X)), replace=False)
        c0 = time.process_time()
        _, _, st = (kmeans_l2 if r == 3 else kmeans_emd1d)(X[idx], 1000, W[idx], 0)
        print(json.dumps({"round": r, "points": len(idx), "feature_cpu_per_hand_us": feat * 1e6,
                          "kmeans_cpu": time.process_time() - c0, "stats": st}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--phase", choices=("river", "turn", "flop", "all"), default="all")
    ap.add_argument("--fraction", type=float, default=0.01, help="fraction of each round's boards assigned")
    ap.add_argument("--sample", type=int, default=50_000, help="k-means sample (hands) per round, measured")
    ap.add_argument("--full-sample", type=int, default=200_000, help="the full build's sample (extrapolated)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default="/tmp/cfrkit_abstraction_bench")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--rates", action="store_true", help="per-board assignment CPU rates only")
    ap.add_argument("--boards", type=int, default=20, help="boards per round for --rates")
    ap.add_argument("--rounds", default="river,turn,flop", help="rounds for --rates")
    ap.add_argument("--max-candidates", type=int, default=0, help="flop: approximate search (0 = exact)")
    ap.add_argument("--kmeans-points", type=int, default=0, help="k-means CPU timing on this many hands")
    ap.add_argument("--flop-kmeans", type=int, default=0, help="potential-aware flop k-means on this many hands")
    ap.add_argument("--max-iter", type=int, default=20, help="--flop-kmeans: Lloyd iterations at most")
    ap.add_argument("--flop-agreement", action="store_true", help="capped vs exact flop search, greedy vs exact EMD")
    ap.add_argument("--exact-hands", type=int, default=100, help="--flop-agreement: hands checked with POT")
    args = ap.parse_args()
    if args.flop_kmeans:
        flop_kmeans(args)
        return
    if args.flop_agreement:
        flop_agreement(args)
        return
    if args.kmeans_points:
        kmeans_rates(args)
        return
    if args.rates:
        rates(args)
        return
    if args.phase != "all":
        print("RESULT " + json.dumps(run_phase(args)), flush=True)
        return
    results = {}
    for phase in ("river", "turn", "flop"):
        cmd = [sys.executable, __file__, "--phase", phase, "--fraction", str(args.fraction), "--sample",
               str(args.sample), "--workers", str(args.workers), "--out", args.out] + (["--no-progress"] if args.no_progress else [])
        out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True).stdout
        results[phase] = json.loads([l for l in out.splitlines() if l.startswith("RESULT ")][-1][7:])
    print(f"load average at the end: {os.getloadavg()}")
    total = 0.0
    scale = args.full_sample / args.sample
    print("CPU seconds (the machine is shared: wall clock is meaningless under load); EXTRAPOLATED full round\n"
          f"= sample features x {scale:g} + k-means x {scale:g} (sample {args.sample:,} -> {args.full_sample:,}) "
          "+ assignment CPU / fraction / 2 cores")
    print(f"{'round':6s} {'feature':9s} {'sample cpu':>10s} {'k-means cpu':>11s} {'assign cpu (boards)':>20s} "
          f"{'full round s, 2 cores':>22s} {'peak RSS MB':>11s} {'table GB':>8s} {'k-means dist. skipped':>21s}")
    for phase in ("flop", "turn", "river"):
        s = results[phase]
        frac = s["assigned_boards"] / s["boards"]
        full = scale * (s["sample_feature_cpu_seconds"] + s["kmeans_cpu_seconds"]) + s["assign_cpu_seconds"] / frac / 2
        total += full
        print(f"{phase:6s} {s['feature']:9s} {s['sample_feature_cpu_seconds']:10.1f} {s['kmeans_cpu_seconds']:11.1f} "
              f"{s['assign_cpu_seconds']:10.1f} ({s['assigned_boards']:5d}/{s['boards']}) {full:18.0f} "
              f"{s['peak_rss_mb']:11.0f} {2 * s['entries'] / 1e9:8.2f} {s['kmeans'].get('skipped_fraction', float('nan')):21.3f}")
    print(f"whole table (EXTRAPOLATED, preflop negligible): {total / 3600:.2f} h on 2 dedicated cores")
    print("flop distance check: " + json.dumps(results["flop"]["distance_error"]))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
