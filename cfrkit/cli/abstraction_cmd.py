"""``cfrkit abstraction build`` and ``cfrkit abstraction info``.

``cfrkit abstraction build --buckets 169,1000,1000,1000 --out DIR`` builds a card abstraction
(lossless preflop, potential-aware flop, histogram-EMD turn, OCHS river by default) with a progress
bar per phase; killed and run again with the same arguments it resumes at the first unfinished
round.  A directory holding another abstraction is refused and left untouched.
``cfrkit abstraction info DIR`` prints the parameters and per-round statistics (``--verify`` checks
every table's CRC).
"""
from __future__ import annotations

import json

from cfrkit.cli import CliError


def add_parser(sub) -> None:
    p = sub.add_parser("abstraction", help="build or inspect hold'em card abstractions (bucket tables)")
    s = p.add_subparsers(dest="abstraction_command", metavar="ACTION")
    s.required = True
    b = s.add_parser("build", help="build (or resume) a card abstraction")
    b.add_argument("--buckets", default="169,1000,1000,1000", help="buckets per round (default 169,1000,1000,1000)")
    b.add_argument("--out", "-o", required=True, help="output directory (resumed when it holds this build)")
    b.add_argument("--features", default=None,
                   help="feature per round: lossless, ehs, hist-emd, pa-emd, ochs "
                        "(default lossless,pa-emd,hist-emd,ochs)")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--workers", type=int, default=0, help="processes (default: all cores)")
    b.add_argument("--ray", default=None, metavar="ADDRESS", help="run the assignment pass on Ray ('local' or an address)")
    b.add_argument("--sample", type=int, default=200_000, help="hands that train each round's k-means")
    b.add_argument("--hist-bins", type=int, default=50)
    b.add_argument("--ochs-clusters", type=int, default=8)
    b.add_argument("--river-storage", default="table", choices=("table", "centres"))
    b.add_argument("--pa-candidates", type=int, default=0,
                   help="potential-aware rounds: greedy EMD to at most this many best-bounded centres (0 = exact search)")
    b.add_argument("--ranks", type=int, default=13, help="ranks in the deck (small games)")
    b.add_argument("--suits", type=int, default=4, help="suits in the deck (small games)")
    b.add_argument("--no-progress", action="store_true")
    b.set_defaults(func=run_build)
    i = s.add_parser("info", help="parameters and statistics of a built abstraction")
    i.add_argument("directory")
    i.add_argument("--verify", action="store_true", help="check every table's CRC-32")
    i.set_defaults(func=run_info)


def run_build(args) -> int:
    from cfrkit.abstraction import build_abstraction, parse_buckets

    buckets = parse_buckets(args.buckets)
    features = None
    if args.features:
        features = tuple(f.strip() for f in args.features.split(","))
    if args.workers < 0:
        raise CliError("--workers must be >= 0")
    abs_ = build_abstraction(buckets, args.out, features=features, seed=args.seed, workers=args.workers or None,
                             progress=not args.no_progress, ray_address=args.ray, sample=args.sample,
                             hist_bins=args.hist_bins, ochs_clusters=args.ochs_clusters,
                             river_storage=args.river_storage, num_ranks=args.ranks, num_suits=args.suits,
                             pa_candidates=args.pa_candidates)
    print(f"built {abs_!r}")
    return 0


def run_info(args) -> int:
    from cfrkit.abstraction.card_abstraction import load_abstraction, read_manifest

    man = read_manifest(args.directory)
    if man.get("complete"):
        load_abstraction(args.directory, verify=args.verify)  # raises on a damaged or mismatched table
    p = man["params"]
    print(f"{args.directory}: {'complete' if man.get('complete') else 'unfinished (rounds done: ' + str(man.get('rounds_done')) + ')'}")
    print(f"  deck {p['num_ranks']} ranks x {p['num_suits']} suits, seed {p['seed']}, buckets {p['buckets']}, "
          f"features {p['features']}")
    names = ("preflop", "flop", "turn", "river")
    for r in sorted(man.get("rounds", {}), key=int):
        st = man["rounds"][r]
        parts = [f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(st.items()) if k != "kmeans"]
        if "kmeans" in st:
            parts.append("kmeans=" + json.dumps({k: round(v, 4) for k, v in st["kmeans"].items()}))
        print(f"  {names[int(r)]}: " + ", ".join(parts))
    if args.verify and man.get("complete"):
        print("  all tables verified (CRC-32)")
    return 0
