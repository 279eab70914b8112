"""Blueprint (OpenHoldem's A^C) benchmarks: sizes, training speed, duplicate head-to-head, strength vs time.

    python benchmarks/blueprint.py sizes                          # tree, information sets, bytes per round
    python benchmarks/blueprint.py speed --raise-cap 1 --iterations 30
    python benchmarks/blueprint.py match BP.npz --deals 10000     # vs always-call, random, fixed-range-raiser
    python benchmarks/blueprint.py curve BP.npz --deals 1000      # every snapshot BP.itN.npz vs always-call, AIVAT
                                                                  # (points kept in BP.curve_points/: reruns resume)

The duplicate matches are the runner's (``cfrkit.poker.play_match(duplicate=True)``: seeded deals of
``cfrkit.games.holdem.deals.deal_for_hand``, each played twice with the seats swapped); results in
mbb per hand with 95% normal intervals over deals.  Results are also written to
``benchmarks/results/blueprint_<command>.json``.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402


def _save(name, data):
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", f"blueprint_{name}.json"), "w") as f:
        json.dump(data, f, indent=1)


def _load_avg():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def cmd_sizes(args):
    from cfrkit.solvers.blueprint.betting_tree import build_betting_tree

    rows = []
    for cap in args.caps:
        tree = build_betting_tree(args.game, args.bets, cap)
        dec = tree.kind == 0
        per_round = [int((dec & (tree.round == r)).sum()) for r in range(4)]
        for buckets in ((169, 50, 50, 50), (169, 200, 200, 200), (169, 1000, 1000, 1000)):
            slot, total = tree.slots(buckets)
            infosets = int(np.asarray(buckets)[tree.round[dec]].sum())
            row = {"raise_cap": cap, "betting_nodes": tree.num_nodes, "decisions_per_round": per_round,
                   "buckets": list(buckets), "information_sets": infosets, "entries": total,
                   "bytes": 8 * total, "bytes_per_information_set": round(8 * total / infosets, 1)}
            rows.append(row)
            print(f"cap {cap}: {tree.num_nodes} nodes, decisions per round {per_round}; buckets {buckets}: "
                  f"{infosets:,} information sets, {total:,} entries, {8 * total / 2**20:,.1f} MiB "
                  f"({8 * total / infosets:.1f} bytes per information set)")
    _save("sizes", rows)


def cmd_speed(args):
    from cfrkit.solvers.blueprint.trainer import BlueprintTrainer

    tr = BlueprintTrainer(args.game, args.bets, args.raise_cap, abstraction=args.abstraction, seed=1)
    tr.iterate(2)  # warm caches
    t0, c0, n0 = time.perf_counter(), time.process_time(), tr.stats.nodes
    tr.iterate(args.iterations)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    nodes = tr.stats.nodes - n0
    live_hands = 1081  # hands a 5-card board leaves live: the length of every vector
    out = {"raise_cap": args.raise_cap, "abstraction": args.abstraction, "iterations": args.iterations,
           "wall_s": wall, "cpu_s": cpu, "iterations_per_s_wall": args.iterations / wall,
           "iterations_per_s_cpu": args.iterations / cpu, "nodes_per_s_cpu": nodes / cpu,
           "hand_nodes_per_s_cpu": nodes * live_hands / cpu, "load_average": _load_avg(),
           "memory_bytes": tr.memory_bytes()}
    print(json.dumps(out, indent=1))
    _save(f"speed_cap{args.raise_cap}", out)


def _opponents(names, seed, game):
    from cfrkit.poker import make_agent

    return {n: (lambda n=n: make_agent(n, game=game, seed=seed)) for n in names}  # a fresh agent per match


def cmd_match(args):
    from cfrkit.agents.blueprint import BlueprintAgent, match_summary
    from cfrkit.games.registry import load
    from cfrkit.poker import play_match

    agent = BlueprintAgent(args.path, seed=args.seed)
    game = load(agent.tree.game_string)
    results = {"path": args.path, "iterations": agent.blueprint.header.get("iterations"),
               "seconds": agent.blueprint.header.get("seconds"), "load_average": _load_avg()}
    for name, make in _opponents(args.opponents, args.seed + 1, game).items():
        t0 = time.perf_counter()
        r = match_summary(play_match(game, [agent, make()], args.deals, seed=args.seed, duplicate=True,
                                     progress=args.progress, first_deal=args.first_deal, time_limit=float("inf")))
        results[name] = dict(r, seconds=round(time.perf_counter() - t0, 1))
        print(f"blueprint vs {name}: {r['mbb_per_hand']:+.1f} +- {r['ci95']:.1f} mbb/hand over {r['hands']} hands "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    results["off_tree_hands"] = agent.off_tree_hands
    results["first_deal"] = args.first_deal
    _save(f"match_{args.tag}" if args.tag else "match", results)


def _point_file(points_dir, path, spec, deals, seed) -> str:
    """Where one curve point is kept (JSON): by snapshot file, reference, deals and seed."""
    ref = re.sub(r"[^A-Za-z0-9._-]+", "_", spec)
    return os.path.join(points_dir, f"{os.path.basename(path)}__{ref}__{int(deals)}__{int(seed)}.json")


def _curve_point(task):
    """One (snapshot, reference) point of the curve: the ladder's duplicate + AIVAT block on fixed deals.  Kept
    in ``points_dir`` when given (read back instead of replayed: an interrupted curve resumes by points)."""
    path, spec, deals, seed, points_dir = task
    keep = _point_file(points_dir, path, spec, deals, seed) if points_dir else None
    if keep and os.path.exists(keep) and os.path.getmtime(keep) >= os.path.getmtime(path):
        with open(keep) as fh:
            return json.load(fh)
    point = _play_curve_point(path, spec, deals, seed)
    if keep:
        os.makedirs(points_dir, exist_ok=True)
        with open(keep + ".tmp", "w") as fh:
            json.dump(point, fh)
        os.replace(keep + ".tmp", keep)
    return point


def _play_curve_point(path, spec, deals, seed):
    from cfrkit.agents.blueprint import BlueprintAgent
    from cfrkit.evaluation.ladder import derived_seed, pair_result, play_block, supports_aivat
    from cfrkit.games.registry import load
    from cfrkit.poker import make_agent

    agent = BlueprintAgent(path, seed=seed)
    game = load(agent.tree.game_string)
    ref = make_agent(spec, game=game, seed=derived_seed(seed, spec))
    block = play_block(game, agent, ref, 0, deals, seed, aivat=supports_aivat(agent) and supports_aivat(ref))
    pr = pair_result(os.path.basename(path), spec, block.duplicate, block.aivat)
    return {"path": path, "reference": spec, "iterations": agent.blueprint.header.get("iterations"),
            "train_seconds": round(float(agent.blueprint.header.get("seconds", 0.0)), 1),
            "estimator": pr.estimator, "mbb_per_hand": round(pr.estimate.mean, 1), "ci95": round(pr.estimate.ci95, 1),
            "duplicate": round(pr.duplicate.mean, 1), "duplicate_ci95": round(pr.duplicate.ci95, 1),
            "variance_reduction": pr.variance_reduction(), "deals": deals, "cpu_s": round(block.cpu_seconds, 1),
            "dup_per_deal": block.duplicate.tolist(),
            "aivat_per_deal": None if block.aivat is None else block.aivat.tolist()}


def cmd_curve(args):
    """Strength against training time: every snapshot ``BP.itN.npz`` and ``BP.npz`` itself against each
    reference on the same seeded duplicate deals (AIVAT where both sides give their strategy, else
    duplicate: :func:`cfrkit.evaluation.ladder.play_block`), so points share the cards' luck.  Prints
    mbb/hand of the snapshot with 95% intervals and, per reference, the last-minus-first difference with
    its paired 95% interval (same deals)."""
    from concurrent.futures import ProcessPoolExecutor

    if not os.path.isfile(args.path):
        raise SystemExit(f"curve: no such blueprint file: {args.path}")
    if args.deals <= 0 or args.processes <= 0:
        raise SystemExit("curve: --deals and --processes must be positive")
    root, ext = os.path.splitext(args.path)
    snaps = sorted(glob.glob(f"{root}.it*{ext}"), key=lambda p: int(re.search(r"\.it(\d+)", p).group(1)))
    snaps.append(args.path)
    points_dir = None if args.no_resume else (args.points_dir or f"{root}.curve_points")
    tasks = [(p, ref, args.deals, args.seed, points_dir) for p in snaps for ref in args.opponents]
    if args.processes > 1:
        with ProcessPoolExecutor(args.processes) as pool:
            points = list(pool.map(_curve_point, tasks))
    else:
        points = [_curve_point(t) for t in tasks]
    print("| iterations | training s | " + " | ".join(args.opponents) + " |")
    print("|---|---|" + "---|" * len(args.opponents))
    by = {(pt["path"], pt["reference"]): pt for pt in points}
    if len(snaps) > 1 and by[(snaps[-1], args.opponents[0])]["iterations"] == by[(snaps[-2], args.opponents[0])]["iterations"]:
        snaps.pop(-2)  # the trainer's last snapshot is the final file's strategy: one row
    for p in snaps:
        first = by[(p, args.opponents[0])]
        cells = [f"{by[(p, r)]['mbb_per_hand']:+.0f} +- {by[(p, r)]['ci95']:.0f} ({by[(p, r)]['estimator']})"
                 for r in args.opponents]
        print(f"| {first['iterations']} | {first['train_seconds']:.0f} | " + " | ".join(cells) + " |")
    summary = {}
    for r in args.opponents:
        a, b = by[(snaps[0], r)], by[(snaps[-1], r)]
        key = "aivat_per_deal" if a["aivat_per_deal"] is not None and b["aivat_per_deal"] is not None \
            else "dup_per_deal"
        d = np.asarray(b[key]) - np.asarray(a[key])
        if d.size > 1:
            ci = 1.96 * d.std(ddof=1) / np.sqrt(d.size)
            summary[r] = {"last_minus_first": round(float(d.mean()), 1), "paired_ci95": round(float(ci), 1),
                          "widest_point_ci95": max(by[(p, r)]["ci95"] for p in snaps)}
            print(f"{r}: last - first {d.mean():+.0f} +- {ci:.0f} mbb/hand (paired, same deals); widest point "
                  f"interval +-{summary[r]['widest_point_ci95']:.0f}")
    for pt in points:
        pt.pop("dup_per_deal")
        pt.pop("aivat_per_deal")
    _save("curve", {"points": points, "summary": summary, "load_average": _load_avg()})


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sizes")
    s.add_argument("--game", default="holdem")
    s.add_argument("--bets", default="0.5+1")
    s.add_argument("--caps", type=int, nargs="+", default=[1, 2, 3])
    s.set_defaults(func=cmd_sizes)
    v = sub.add_parser("speed")
    v.add_argument("--game", default="holdem")
    v.add_argument("--bets", default="0.5+1")
    v.add_argument("--raise-cap", type=int, default=1)
    v.add_argument("--abstraction", default="ehs:169,50,50,50")
    v.add_argument("--iterations", type=int, default=30)
    v.set_defaults(func=cmd_speed)
    m = sub.add_parser("match")
    m.add_argument("path")
    m.add_argument("--deals", type=int, default=10000)
    m.add_argument("--opponents", nargs="+", default=["always-call", "random", "fixed-range-raiser"])
    m.add_argument("--seed", type=int, default=2026)
    m.add_argument("--progress", action="store_true")
    m.add_argument("--first-deal", type=int, default=0, help="deal offset (split one match over processes)")
    m.add_argument("--tag", default="", help="suffix of the results file")
    m.set_defaults(func=cmd_match)
    c = sub.add_parser("curve")
    c.add_argument("path")
    c.add_argument("--deals", type=int, default=1000)
    c.add_argument("--opponents", nargs="+", default=["always-call"])
    c.add_argument("--seed", type=int, default=2027)
    c.add_argument("--processes", type=int, default=1)
    c.add_argument("--points-dir", default=None,
                   help="keep each finished point here and reuse it (default: BP.curve_points beside BP.npz)")
    c.add_argument("--no-resume", action="store_true", help="replay every point, keep none")
    c.set_defaults(func=cmd_curve)
    args = p.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
