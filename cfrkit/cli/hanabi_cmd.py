"""``cfrkit hanabi``: self-play reports, MAP-Elites runs, crosstables and the ad-hoc protocol.

Examples::

    cfrkit hanabi selfplay --agent Piers --players 2 3 4 5 --games 1000
    cfrkit hanabi map-elites --out runs/me --individuals 100000 --workers 2
    cfrkit hanabi crosstable --agents IGGI Piers Outer Internal VanDenBergh --png table.png
    cfrkit hanabi crosstable --archive runs/me/checkpoint.npz --top 20 --png elites.png
    cfrkit hanabi adhoc --challenger pool:IGGI,Piers,Outer --teams IGGI VanDenBergh --trials 1000
    cfrkit hanabi diversity runs/me/checkpoint.npz runs/me2/checkpoint.npz --top 50
"""
from __future__ import annotations

import json
import os
import sys

from cfrkit.cli import CliError


def add_parser(sub) -> None:
    p = sub.add_parser("hanabi", help="Hanabi: self-play, MAP-Elites, crosstables, ad-hoc protocol")
    hs = p.add_subparsers(dest="hanabi_command", metavar="SUBCOMMAND")
    hs.required = True

    s = hs.add_parser("selfplay", help="self-play report of rule agents (mean, s.e., histogram, perfect games)")
    s.add_argument("--agent", nargs="+", default=["Piers"],
                   help="named agents (rule agents, SmartBot, Information), or chromosomes like 3,17,42")
    s.add_argument("--players", nargs="+", type=int, default=[2, 3, 4, 5])
    s.add_argument("--games", type=int, default=1000)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--json", help="write the reports to this JSON file")
    s.add_argument("--histogram", help="PNG of the score histogram (first agent, first player count)")
    s.set_defaults(func=run_selfplay)

    m = hs.add_parser("map-elites", help="generate a pool of diverse rule agents with MAP-Elites (resumable)")
    m.add_argument("--out", required=True, help="run directory (checkpoint.npz, summary.json, map.png)")
    m.add_argument("--individuals", type=int, default=100_000)
    # run settings default to None so that a resume can tell "not given" (kept) from "changed" (refused)
    m.add_argument("--initial-random", type=int, default=None, help="random individuals first (default 10000)")
    m.add_argument("--games", type=int, default=None, help="self-play games per evaluation (default 100)")
    m.add_argument("--bins", type=int, default=None, help="bins per behaviour axis (default 20)")
    m.add_argument("--length", type=int, default=None, help="chromosome length (default 15)")
    m.add_argument("--players", type=int, default=None, help="players (default 2)")
    m.add_argument("--scoring", choices=["played_cards", "zero_on_loss"], default=None,
                   help="fitness scoring (default played_cards)")
    m.add_argument("--workers", type=int, default=1, help="worker processes")
    m.add_argument("--seed", type=int, default=None, help="seed (default 0)")
    m.add_argument("--time-limit", type=float, default=None, help="stop after this many seconds (resume later)")
    m.add_argument("--checkpoint-every", type=float, default=60.0, help="seconds between checkpoints")
    m.add_argument("--reevaluate", type=int, default=0, help="re-evaluate elites over this many games at the end")
    m.add_argument("--no-progress", action="store_true")
    m.set_defaults(func=run_map_elites)

    c = hs.add_parser("crosstable", help="mean score of every pair of agents (PNG heatmap optional)")
    c.add_argument("--agents", nargs="+", help="named agents or chromosomes")
    c.add_argument("--archive", help="a MAP-Elites checkpoint: use its valid elites")
    c.add_argument("--top", type=int, default=20, help="with --archive: the best N elites")
    c.add_argument("--players", type=int, default=2)
    _pair_games_options(c, 200, "write a heatmap here", "write the table here", run_crosstable)

    d = hs.add_parser("diversity", help="intra-run (one archive) and cross-run (two archives) diversity metrics")
    d.add_argument("archives", nargs="+", help="one or two MAP-Elites checkpoints")
    d.add_argument("--top", type=int, default=50, help="intra-run: the best N valid elites")
    d.add_argument("--state-games", type=int, default=5, help="self-play games per agent recording states")
    _pair_games_options(d, 100, "intra-run crosstable heatmap", "write the metrics here", run_diversity)

    a = hs.add_parser("adhoc", help="the Hanabi challenge's ad-hoc protocol")
    a.add_argument("--challenger", default="pool:IGGI,Piers,Outer,Internal,VanDenBergh",
                   help="a named agent / chromosome, or pool:A,B,... (imitates the best-matching candidate)")
    a.add_argument("--teams", nargs="+", default=["IGGI", "Piers", "Outer", "Internal", "VanDenBergh"])
    a.add_argument("--players", type=int, default=2)
    a.add_argument("--trials", type=int, default=1000)
    a.add_argument("--sets", type=int, default=100, help="distinct sets of warm-up games")
    a.add_argument("--warmup-games", type=int, default=10)
    a.add_argument("--seed", type=int, default=0)
    a.set_defaults(func=run_adhoc)


def _pair_games_options(p, games: int, png_help: str, json_help: str, func) -> None:
    """Options of a command that plays every pair of agents: games per pair, seed, PNG and JSON outputs."""
    p.add_argument("--games", type=int, default=games, help=f"games per pair (default {games})")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--png", help=png_help)
    p.add_argument("--json", help=json_help)
    p.set_defaults(func=func)


def _agent(text: str):
    from cfrkit.agents.hanabi import RuleAgent, named_agent

    if "," in text or text.isdigit():
        try:
            return RuleAgent([int(x) for x in text.split(",") if x.strip()])
        except ValueError as exc:
            raise ValueError(f"bad chromosome {text!r}: {exc}") from None
    return named_agent(text)


def _check_players(players) -> None:
    for p in players:
        if not 2 <= p <= 5:
            raise ValueError(f"players must be in [2, 5], got {p}")


def run_selfplay(args) -> int:
    from tqdm import tqdm

    from cfrkit.evaluation.hanabi_protocols import selfplay_report

    _check_players(args.players)
    if args.games < 1:
        raise ValueError("--games must be >= 1")
    agents = [_agent(a) for a in args.agent]
    reports = []
    jobs = [(a, p) for a in agents for p in args.players]
    for agent, players in tqdm(jobs, desc="self-play", unit="setting", dynamic_ncols=True, leave=False):
        reports.append(selfplay_report(agent, players, args.games, args.seed))
    print(f"{'agent':14s} {'players':>7s} {'score (0 on loss)':>19s} {'perfect':>8s} {'score (played cards)':>21s} "
          f"{'lost all lives':>14s}")
    for r in reports:
        z, pc = r.zero_on_loss, r.played_cards
        print(f"{r.agent[:14]:14s} {r.players:7d} {z.mean:10.2f} +- {z.sem:5.2f} {100 * z.perfect_rate:7.1f}% "
              f"{pc.mean:12.2f} +- {pc.sem:5.2f} {100 * r.lost_all_lives_rate:13.1f}%")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([r.as_dict() for r in reports], f, indent=2)
    if args.histogram:
        from cfrkit.evaluation.hanabi_plots import histogram_png

        r = reports[0]
        histogram_png(args.histogram, r.zero_on_loss.histogram, f"{r.agent}, {r.players} players, {r.games} games")
    return 0


def run_map_elites(args) -> int:
    from cfrkit.agents.hanabi.map_elites import MapElites, MapElitesConfig, save_summary
    from cfrkit.evaluation.hanabi_metrics import map_metrics

    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "checkpoint.npz")
    # command-line option -> MapElitesConfig field, default
    settings = {"players": ("players", 2), "length": ("chromosome_length", 15), "bins": ("bins", 20),
                "initial_random": ("initial_random", 10_000), "games": ("games_per_eval", 100),
                "scoring": ("scoring", "played_cards"), "seed": ("seed", 0)}
    if os.path.exists(path):
        from cfrkit._resume import changed_settings

        run = MapElites.load(path, workers=args.workers)
        changed = changed_settings({opt: getattr(args, opt) for opt in settings},
                                   {opt: getattr(run.config, field) for opt, (field, _) in settings.items()})
        if changed:
            detail = ", ".join(f"--{opt.replace('_', '-')} {new} (checkpoint: {old})"
                               for opt, (new, old) in changed.items())
            raise CliError(f"{path} was made with other settings: {detail}; leave them out to resume "
                           f"or use another --out")
        if args.individuals > run.config.individuals:
            run.config.individuals = args.individuals
        kept = ", ".join(f"{opt} {getattr(run.config, field)}" for opt, (field, _) in settings.items())
        print(f"resuming {path}: {run.generated} individuals done (settings from the checkpoint: {kept})")
    else:
        values = {field: default if getattr(args, opt) is None else getattr(args, opt)
                  for opt, (field, default) in settings.items()}
        config = MapElitesConfig(individuals=args.individuals, **values)
        run = MapElites(config, checkpoint=path, workers=args.workers)
    from cfrkit.cli._runtime import GracefulStop

    # the first SIGINT/SIGTERM ends the run after the current batch and saves the checkpoint (a second one
    # stops at once; the last periodic checkpoint is then the one on disk)
    with GracefulStop() as signals:
        run.run(time_limit=args.time_limit, checkpoint_every=args.checkpoint_every, progress=not args.no_progress,
                stop=signals.requested)
    if signals.requested():
        print(f"cfrkit hanabi map-elites: stopped by signal {signals.signum} after {run.generated} individuals; "
              f"checkpoint saved in {path} (run the same command to resume)", file=sys.stderr)
        return signals.exit_code()
    extra = {}
    fitness = run.archive.fitness
    if args.reevaluate > 0:
        fitness = run.reevaluate(args.reevaluate)
        m = map_metrics(fitness)
        extra["reevaluated"] = {"games": args.reevaluate, **m,
                                "best_chromosome": run.archive.chromosomes[m["best_niche"]].tolist(),
                                "fitness": [[None if x != x else round(float(x), 3) for x in row] for row in fitness]}
    save_summary(os.path.join(args.out, "summary.json"), run, extra)
    try:
        from cfrkit.evaluation.hanabi_plots import niche_map_png

        niche_map_png(os.path.join(args.out, "map.png"), fitness,
                      f"MAP-Elites, {run.generated} individuals: coverage {map_metrics(fitness)['coverage']}")
    except ValueError as exc:
        print(f"no map.png: {exc}")
    m = map_metrics(fitness)
    print(f"individuals {run.generated}  coverage {m['coverage']}/{m['niches']}  mean (covered) "
          f"{m['mean_score_covered']:.2f}  best {m['best_score']:.2f} at niche "
          f"({m['best_niche'][0] / run.config.bins:.2f}, {m['best_niche'][1] / run.config.bins:.2f})")
    from cfrkit.agents.hanabi import RULE_BASE

    best = run.archive.chromosomes[m["best_niche"]]
    print(f"best chromosome: {best.tolist()}")
    print("  = " + " > ".join(RULE_BASE[r].name for r in best))
    return 0


def run_crosstable(args) -> int:
    import numpy as np

    from cfrkit.evaluation.hanabi_protocols import crosstable

    _check_players([args.players])
    if bool(args.agents) == bool(args.archive):
        raise ValueError("give either --agents or --archive")
    if args.agents:
        agents = [_agent(a) for a in args.agents]
        names = [a.name for a in agents]
    else:
        from cfrkit.agents.hanabi import RuleAgent
        from cfrkit.agents.hanabi.map_elites import MapElites

        run = MapElites.load(args.archive)
        fit = np.nan_to_num(run.archive.fitness, nan=0.0)
        niches = [tuple(n) for n in np.argwhere(fit > 0)]
        niches.sort(key=lambda n: -fit[n])
        niches = niches[:args.top]
        if len(niches) < 2:
            raise ValueError(f"{args.archive} has fewer than two valid elites")
        bins = run.config.bins
        names = [f"({n[0] / bins:.2f},{n[1] / bins:.2f})" for n in niches]
        agents = [RuleAgent(run.archive.chromosomes[n], name=names[k]) for k, n in enumerate(niches)]
    table = crosstable(agents, args.players, args.games, args.seed, progress=True)
    width = max(len(n) for n in names)
    print(" " * width + " " + " ".join(f"{k:>6d}" for k in range(len(names))))
    for k, (name, row) in enumerate(zip(names, table)):
        print(f"{name:>{width}s} " + " ".join(f"{x:6.2f}" for x in row) + f"   [{k}]")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"agents": names, "table": table.tolist(), "games_per_pair": args.games}, f, indent=2)
    if args.png:
        from cfrkit.evaluation.hanabi_plots import crosstable_png

        crosstable_png(args.png, table, names, f"{args.players}-player crosstable, {args.games} games per pair")
    return 0


def run_diversity(args) -> int:
    import numpy as np

    from cfrkit.agents.hanabi.map_elites import MapElites
    from cfrkit.evaluation.hanabi_metrics import cross_run_diversity, intra_run_diversity, map_metrics

    if len(args.archives) > 2:
        raise ValueError("give one archive (intra-run) or two (cross-run as well)")
    runs = [MapElites.load(path) for path in args.archives]
    players = runs[0].config.players
    out = {}
    for path, run in zip(args.archives, runs):
        m = map_metrics(run.archive.fitness)
        print(f"{path}: {run.generated} individuals, coverage {m['coverage']}, mean (covered) "
              f"{m['mean_score_covered']:.2f}, best {m['best_score']:.2f}")
    scoring = runs[0].config.scoring
    intra = intra_run_diversity(runs[0].archive.fitness, runs[0].archive.chromosomes, players, args.games,
                                args.state_games, args.seed, max_agents=args.top, progress=True, scoring=scoring)
    print(f"intra-run ({intra['agents']} best elites, {args.games} games per pair, {intra['recorded_states']} states, "
          f"scoring {scoring}):")
    print(f"  self-play mean {intra['self_play_mean']:.2f}, pairwise mean {intra['pairwise_mean']:.2f}, "
          f"mean Hamming distance {intra['mean_hamming']:.2f}, mean action similarity "
          f"{intra['mean_action_similarity']:.3f}")
    print("  by Manhattan distance in the map: distance  hamming  action-similarity  pair-score")
    for dist, row in intra["by_manhattan_distance"].items():
        print(f"  {dist:8d} {row['hamming']:8.2f} {row['action_similarity']:18.3f} {row['pair_score']:11.2f}")
    counts = intra["best_partner_counts"]
    top = np.argsort(-counts)[:5]
    bins = runs[0].config.bins
    print("  most frequent best partners: " + ", ".join(
        f"({intra['niches'][k][0] / bins:.2f},{intra['niches'][k][1] / bins:.2f}) x{counts[k]}" for k in top))
    out["intra"] = {k: v for k, v in intra.items() if k not in ("crosstable", "best_partner_counts", "niches")}
    out["intra"]["best_partner_counts"] = counts.tolist()
    if args.png:
        from cfrkit.evaluation.hanabi_plots import crosstable_png

        names = [f"({n[0] / bins:.2f},{n[1] / bins:.2f})" for n in intra["niches"]]
        crosstable_png(args.png, intra["crosstable"], names, "Elites together (mean score)")
    if len(runs) == 2:
        cross = cross_run_diversity(runs[0].archive.fitness, runs[0].archive.chromosomes, runs[1].archive.fitness,
                                    runs[1].archive.chromosomes, players, args.games, args.state_games, args.seed,
                                    scoring)
        print(f"cross-run ({cross['corresponding_niches']} corresponding niches): pair score "
              f"{cross['mean_pair_score']:.2f} vs self-play {cross['mean_self_play']:.2f}, Hamming "
              f"{cross['mean_hamming']:.2f}, action similarity {cross['mean_action_similarity']:.3f}")
        out["cross"] = cross
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2, default=float)
    return 0


def run_adhoc(args) -> int:
    from cfrkit.evaluation.hanabi_protocols import FixedChallenger, PoolMatchingChallenger, adhoc_evaluate

    _check_players([args.players])
    if args.challenger.startswith("pool:"):
        challenger = PoolMatchingChallenger([_agent(x) for x in args.challenger[5:].split(",") if x])
    else:
        challenger = FixedChallenger(_agent(args.challenger))
    teams = {t: _agent(t) for t in args.teams}
    results = adhoc_evaluate(challenger, teams, args.players, args.trials, args.sets, args.warmup_games, args.seed,
                             progress=True)
    print(f"challenger: {challenger.name}")
    print(f"{'hold-out team':16s} {'ad-hoc score':>18s} {'team self-play':>18s}")
    for r in results:
        print(f"{r.team:16s} {r.mean:9.2f} +- {r.sem:5.2f} {r.team_selfplay_mean:9.2f} (sd {r.team_selfplay_std:4.2f})")
    return 0
