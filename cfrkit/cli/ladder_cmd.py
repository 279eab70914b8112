"""``cfrkit ladder``: every pair of poker agents (duplicate + AIVAT), a crosstable and a rating.

    cfrkit ladder rule-based blueprint:bp.npz fixed-range-raiser always-call random --hands 2000 --out ladder
    cfrkit ladder rule-based always-call random --hands 5000 --processes 2 --minutes 30   # run again to continue
    cfrkit ladder rule-based blueprint:bp.npz always-call --hands 100000 --target-ci 50   # each pair to +-50 mbb/h

The work is :func:`cfrkit.platform.ladder.run_ladder`; this module parses and prints.
"""
from __future__ import annotations

import json
import os

from cfrkit.cli import CliError
from cfrkit.cli._runtime import GracefulStop


def add_parser(sub) -> None:
    p = sub.add_parser("ladder", help="play every pair of poker agents: crosstable and rating (resumable)",
                       description="Play every pair of agents (registry specs: rule-based, blueprint:PATH, "
                                   "always-call, fixed-range-raiser, random, ...) over --hands duplicate deals each "
                                   "(AIVAT where both agents give their strategy, else duplicate), store the hands in "
                                   "the platform's SQLite database (read it with `cfrkit results --db`), and print the "
                                   "crosstable (mbb/h with 95%% intervals) and each agent's mean against the field. "
                                   "Finished blocks of deals are kept: run the same command again to continue.")
    p.add_argument("agents", nargs="+", metavar="AGENT", help="agent specs (at least two)")
    p.add_argument("--hands", type=int, required=True,
                   help="deals per pair, each played twice with the seats swapped (rounded up to whole blocks)")
    p.add_argument("--game", default="holdem", help="heads-up hold'em game (default holdem: HUNL 50/100, 200bb)")
    p.add_argument("--out", default="ladder", help="directory for ladder.db, ladder.png and ladder.json "
                                                   "(default ./ladder)")
    p.add_argument("--db", default=None, help="the SQLite database (default OUT/ladder.db)")
    p.add_argument("--png", default=None, help="the picture (default OUT/ladder.png; needs matplotlib)")
    p.add_argument("--no-png", action="store_true", help="write no picture")
    p.add_argument("--seed", type=int, default=0, help="ladder seed (deals and agent seeds derive from it)")
    p.add_argument("--block", type=int, default=50, help="deals per block: the unit of work and of resuming "
                                                        "(default 50)")
    p.add_argument("--processes", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--ray", default=None, metavar="ADDRESS", help="run blocks on Ray: 'local' or a cluster address "
                                                                 "(the database must be reachable by the workers)")
    p.add_argument("--minutes", type=float, default=None, help="start no new block after this many minutes")
    p.add_argument("--no-aivat", action="store_true", help="duplicate estimates only (faster, wider intervals)")
    p.add_argument("--fit-opponent", type=int, default=0, metavar="DEALS",
                   help="AIVAT of a blueprint against an agent without a value function of its own (A^R, ...): the "
                        "blueprint's tables against that agent's policy fitted on DEALS deals of a separate match "
                        "(~2 CPU s per 1,000 deals + ~10 CPU s of tables, per pair and worker; default 0: off)")
    p.add_argument("--target-ci", type=float, default=None, metavar="MBB",
                   help="play each pair until its 95%% interval should be +-MBB mbb/h: --pilot-blocks blocks first, "
                        "then as many as the pilot's variance asks for (Stein's two-stage rule), at most --hands "
                        "deals; the crosstable counts each pair's own deals (default: --hands for every pair)")
    p.add_argument("--pilot-blocks", type=int, default=20,
                   help="blocks of every pair before --target-ci decides the rest (default 20: at least 1,000 deals "
                        "and 19 degrees of freedom for the pilot's variance; see docs/evaluation.md)")
    p.add_argument("--pilot-rule", choices=("t", "z"), default="t",
                   help="carry the pilot's interval to --target-ci with the t quantile of its blocks (t, default: "
                        "Stein's rule) or the normal one (z: the plans of ladders run before the t rule)")
    p.add_argument("--cache-gb", type=float, default=2.0, metavar="GB",
                   help="memory of each worker's value-function caches together (AIVAT with blueprint values), split "
                        "over the value functions it holds (default 2; the numbers do not depend on it; fitted tables "
                        "are memory-mapped files beside the database and not counted)")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds an agent may take per answer")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run_ladder_cmd)


def run_ladder_cmd(args) -> int:
    from cfrkit.platform.ladder import plot_ladder, run_ladder

    for name in ("hands", "block", "processes", "pilot_blocks"):
        if getattr(args, name) <= 0:
            raise CliError(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    if not (args.cache_gb > 0 and args.cache_gb != float("inf")):
        raise CliError(f"--cache-gb must be a positive number of GB, got {args.cache_gb}")
    if args.minutes is not None and args.minutes <= 0:
        raise CliError(f"--minutes must be positive, got {args.minutes}")
    if args.target_ci is not None and not (args.target_ci > 0 and args.target_ci != float("inf")):
        raise CliError(f"--target-ci must be a positive number of mbb/h, got {args.target_ci}")
    if args.time_limit <= 0:
        raise CliError(f"--time-limit must be positive, got {args.time_limit}")
    if args.fit_opponent < 0:
        raise CliError(f"--fit-opponent must be >= 0 deals, got {args.fit_opponent}")
    if args.fit_opponent and args.no_aivat:
        raise CliError("--fit-opponent shapes the AIVAT estimate: it cannot go with --no-aivat")
    if args.db is None or (args.png is None and not args.no_png):  # OUT holds a default file
        if os.path.exists(args.out) and not os.path.isdir(args.out):
            raise CliError(f"--out {args.out} is a file; give a directory")
        os.makedirs(args.out, exist_ok=True)
    db = args.db or os.path.join(args.out, "ladder.db")
    if os.path.isdir(db):
        raise CliError(f"--db {db} is a directory; give a file name")
    parent = os.path.dirname(os.path.abspath(db))
    if not os.path.isdir(parent):
        raise CliError(f"--db {db}: directory {parent} does not exist")
    png = None if args.no_png else (args.png or os.path.join(args.out, "ladder.png"))
    if png is not None and not os.path.isdir(os.path.dirname(os.path.abspath(png))):
        raise CliError(f"--png {png}: directory {os.path.dirname(os.path.abspath(png))} does not exist")
    if png is not None:
        try:
            import matplotlib  # noqa: F401  (the optional extra: fail now, not after the hands)
        except ImportError:
            raise CliError("the PNG needs matplotlib (pip install 'cfrkit[plots]') or give --no-png") from None
    try:
        # SIGTERM or a first Ctrl-C: the blocks under way finish, no new one starts, the table is printed
        with GracefulStop() as scope:
            res = run_ladder(args.agents, args.hands, db, game=args.game, seed=args.seed, block=args.block,
                             processes=args.processes, ray_address=args.ray, aivat=not args.no_aivat,
                             minutes=args.minutes, progress=not (args.json or args.no_progress),
                             time_limit=args.time_limit, stop=scope.requested,
                             fit_opponent_deals=args.fit_opponent, target_ci=args.target_ci,
                             pilot_blocks=args.pilot_blocks, pilot_rule=args.pilot_rule, cache_gb=args.cache_gb)
    except KeyboardInterrupt:
        print(f"cfrkit ladder: interrupted; the finished blocks are stored in {db}: run the same command to "
              f"continue", flush=True)
        return 130
    if png is not None:
        per_pair = f"{res.deals} deals per pair" if args.target_ci is None else \
            f"up to {res.deals} deals per pair for +-{args.target_ci:g} mbb/h"
        plot_ladder(res.crosstable, png, title=f"ladder: {per_pair} (seed {args.seed})")
    out = res.to_dict()
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(res.summary())
        if png is not None:
            print(f"picture: {os.path.abspath(png)}")
    if args.db is None:
        with open(os.path.join(args.out, "ladder.json"), "w") as fh:
            json.dump(out, fh, indent=2)
    if scope.requested():
        print(f"cfrkit ladder: stopped by signal {scope.signum}; run the same command to continue", flush=True)
        return scope.exit_code()
    return 0
