"""``cfrkit blueprint train | info | play``: the CFR+ blueprint (OpenHoldem's A^C) on the command line.

    cfrkit blueprint train bp.npz --minutes 120 --raise-cap 2 --abstraction ehs:169,50,50,50 --eval-minutes 10
    cfrkit blueprint train bp.npz --minutes 60            # resumes bp.npz where it stopped
    cfrkit blueprint train es.npz --minutes 60 --algorithm es-mccfr --prune   # the measured alternative
    cfrkit blueprint train pl.npz --minutes 60 --algorithm pluribus --bets rich --threads 2   # Pluribus' recipe
    cfrkit blueprint info bp.npz
    cfrkit blueprint play bp.npz --opponent always-call --deals 1000
    cfrkit acpc-client HOST PORT --agent blueprint --policy bp.npz
"""
from __future__ import annotations

import os

from cfrkit.cli import CliError

EVAL_OPPONENTS = ("always-call", "random", "fixed-range-raiser")
ALGORITHMS = ("cfr+", "es-mccfr", "pluribus")


def add_parser(sub) -> None:
    p = sub.add_parser("blueprint", help="train, inspect and play a CFR+ blueprint of heads-up no-limit hold'em")
    bs = p.add_subparsers(dest="blueprint_command", metavar="SUBCOMMAND")
    bs.required = True

    t = bs.add_parser("train", help="train (or resume) a blueprint with CFR+ (or external-sampling MCCFR)",
                      description="Trains CFR+ (or, with --algorithm es-mccfr, external-sampling MCCFR) on the "
                                  "abstract game, saving PATH atomically every "
                                  "--checkpoint-minutes, at the end and on Ctrl-C / SIGTERM; if PATH exists the "
                                  "run resumes from it (bit-exact: boards are a function of seed and iteration).")
    t.add_argument("path", help="checkpoint file (.npz); resumed when it exists")
    t.add_argument("--game", default=None, help="heads-up no-limit holdem game string (default: ACPC "
                                                "20000 stacks, 50/100 blinds)")
    t.add_argument("--bets", default=None,
                   help="action abstraction in one string: pot fractions (rounds '/', raises ':', sizes '+'; default "
                        "0.5+1: half pot, pot; all-in always offered), optionally '@CAP' for the raise cap, or a "
                        "preset: 'rich' (Pluribus-like sizes, cap 4; docs/blueprint.md)")
    t.add_argument("--raise-cap", type=int, default=None, help="raises per round before only fold/call/all-in "
                                                               "remain (default 2)")
    t.add_argument("--abstraction", default=None,
                   help="card abstraction: ehs:169,B,B,B (E[HS] percentiles; default ehs:169,50,50,50), emd:DIR "
                        "or default")
    t.add_argument("--iterations", type=int, default=None, help="stop at this many iterations in total")
    t.add_argument("--minutes", type=float, default=None, help="stop after this many minutes (this session)")
    t.add_argument("--cpu-minutes", type=float, default=None,
                   help="stop when the file's training has used this many process CPU minutes in total (all "
                        "threads, resumes included): equal budgets on a shared machine")
    t.add_argument("--seed", type=int, default=None, help="seed of the board sampling (default 0)")
    t.add_argument("--algorithm", choices=ALGORITHMS, default=None,
                   help="cfr+ (default: public chance sampling CFR+, vectors over hands) or es-mccfr (external "
                        "sampling MCCFR, one thread); a resumed run keeps the file's")
    t.add_argument("--prune", action="store_true", help="es-mccfr: regret-based pruning after --prune-warmup "
                                                        "(pluribus prunes unless --no-prune)")
    t.add_argument("--no-prune", action="store_true", help="pluribus: no pruning")
    t.add_argument("--regret-storage", choices=("int32", "float32"), default=None,
                   help="pluribus: int32 chips (default, as Pluribus) or float32 regrets")
    t.add_argument("--average", choices=("preflop", "all"), default=None,
                   help="pluribus: keep strategy sums for the first round only (default, as Pluribus; later rounds "
                        "play the current strategy) or everywhere")
    t.add_argument("--discount-every", type=int, default=None,
                   help="pluribus: Linear-CFR discount interval in iterations (default 100)")
    t.add_argument("--discount-until", type=int, default=None,
                   help="pluribus: last iteration of the discount phase (default 10000; 0: no discounting)")
    t.add_argument("--allow-over-memory", action="store_true",
                   help="train even when the tables are estimated to exceed the machine's available memory")
    t.add_argument("--prune-warmup", type=int, default=None, help="es-mccfr: iterations before pruning (default 200)")
    t.add_argument("--prune-threshold", type=float, default=None,
                   help="es-mccfr: prune actions with regret below this many chips (default minus the stack)")
    t.add_argument("--deals-per-board", type=int, default=None,
                   help="es-mccfr: hole-card deals traversed per sampled board (one iteration; default 64)")
    t.add_argument("--threads", type=int, default=1, help="threads computing boards (default 1)")
    t.add_argument("--boards-per-iteration", type=int, default=None,
                   help="boards sampled per iteration (default: threads or Ray workers)")
    t.add_argument("--ray", metavar="ADDRESS", default=None,
                   help="compute boards on Ray actors ('local' starts a local Ray); --threads = actors")
    t.add_argument("--checkpoint-minutes", type=float, default=10.0, help="save every this many minutes "
                                                                          "(default 10; 0: only at the end)")
    t.add_argument("--eval-minutes", type=float, default=0.0,
                   help="every this many minutes play the current strategy against --eval-opponents (duplicate "
                        "+ AIVAT, the same deals each time) and optionally LBR, and save a strategy snapshot "
                        "PATH.itN.npz (default 0: off)")
    t.add_argument("--eval-deals", type=int, default=200, help="duplicate deals per opponent per evaluation")
    t.add_argument("--eval-opponents", default="rule-based",
                   help="comma-separated fixed references, agent specs of the registry (default rule-based: A^R)")
    t.add_argument("--eval-lbr", default=None, metavar="BETS/ROUNDS",
                   help="also LBR against the strategy at each evaluation, e.g. FCPA/1-4 or FC/3-4 (default off)")
    t.add_argument("--eval-lbr-deals", type=int, default=200, help="LBR deals per evaluation (default 200)")
    t.add_argument("--no-progress", action="store_true")
    t.set_defaults(func=run_train)

    i = bs.add_parser("info", help="what a blueprint file holds")
    i.add_argument("path")
    i.set_defaults(func=run_info)

    q = bs.add_parser("play", help="a blueprint against a simple agent (duplicate deals)")
    q.add_argument("path")
    q.add_argument("--opponent", default="always-call", help="an agent spec of the registry (default always-call)")
    q.add_argument("--deals", type=int, default=500, help="deals, each played in both seats (default 500)")
    q.add_argument("--seed", type=int, default=0)
    q.set_defaults(func=run_play)


def _check_opponent(name: str) -> str:
    from cfrkit.poker.registry import RegistryError, agent_entry, agent_names, parse_spec

    try:
        agent_entry(parse_spec(name)[0])
    except RegistryError:
        raise CliError(f"unknown opponent {name!r}; use an agent of the registry: {', '.join(agent_names())}") \
            from None
    return name


def make_evaluator(deals: int, opponents, seed: int = 12345, lbr=None, lbr_deals: int = 200):
    """``evaluate(trainer) -> {opponent: {mbb_per_hand, ci95, estimator, ...}}`` for periodic evaluations:
    duplicate + AIVAT against fixed references and optionally LBR
    (:func:`cfrkit.evaluation.ladder.training_evaluator`, the ladder's blocks)."""
    from cfrkit.evaluation.ladder import training_evaluator

    return training_evaluator([_check_opponent(o) for o in opponents], deals, seed=seed, lbr=lbr,
                              lbr_deals=lbr_deals)


#: what ``train`` uses for a new run when an option is not given (a resumed run takes the file's values)
TRAIN_DEFAULTS = {"game": "holdem", "bets": "0.5+1", "raise_cap": 2, "abstraction": "ehs:169,50,50,50", "seed": 0,
                  "algorithm": "cfr+", "deals_per_board": 64, "prune_warmup": 200}
#: pluribus options and their defaults for a new run
PLURIBUS_DEFAULTS = {"regret_storage": "int32", "average": "preflop", "discount_every": 100, "discount_until": 10_000}


def _check_single_thread(args) -> None:
    if args.threads != 1 or args.ray is not None or (args.boards_per_iteration or 1) != 1:
        raise CliError("es-mccfr runs on one thread, one board per iteration (in-place updates): drop --threads, "
                       "--ray and --boards-per-iteration, or use --algorithm cfr+")


def check_resume_arguments(args) -> str:
    """Raise :class:`CliError` when an option given to resume ``args.path`` contradicts the file (a run is
    resumed with the game, bets, raise cap, abstraction, seed and algorithm it was started with; nothing is
    written).  Returns the file's algorithm."""
    from cfrkit.games.registry import load
    from cfrkit.solvers.blueprint.trainer import read_checkpoint

    header, _ = read_checkpoint(args.path, arrays=())
    differ = []
    if args.game is not None:
        try:
            same = load(args.game).definition == load(header["game"]).definition
        except Exception as exc:  # an unknown game string: report it in one line
            raise CliError(f"--game {args.game!r}: {exc}") from None
        if not same:
            differ.append(f"--game {args.game!r} (file: {header['game']!r})")
    for opt, key in (("bets", "bets"), ("raise_cap", "raise_cap"), ("abstraction", "abstraction"), ("seed", "seed")):
        value = getattr(args, opt)
        if value is not None and str(value) != str(header[key]):
            differ.append(f"--{opt.replace('_', '-')} {value} (file: {header[key]})")
    found = header.get("algorithm", "cfr+")
    if args.algorithm is not None and args.algorithm != found:
        differ.append(f"--algorithm {args.algorithm} (file: {found})")
    mccfr = header.get("mccfr") or header.get("pluribus") or {}
    if args.prune and not mccfr.get("prune"):
        differ.append("--prune (file: no pruning)")
    if args.no_prune and mccfr.get("prune"):
        differ.append("--no-prune (file: pruning)")
    for opt in ("deals_per_board", "prune_warmup", "prune_threshold"):
        value = getattr(args, opt)
        if value is not None and (found == "cfr+" or float(value) != float(mccfr.get(opt, float("nan")))):
            differ.append(f"--{opt.replace('_', '-')} {value} (file: {mccfr.get(opt, 'not es-mccfr / pluribus')})")
    for opt in PLURIBUS_DEFAULTS:
        value = getattr(args, opt)
        if value is not None and (found != "pluribus" or str(value) != str(mccfr.get(opt))):
            differ.append(f"--{opt.replace('_', '-')} {value} (file: {mccfr.get(opt, 'not pluribus')})")
    if differ:
        raise CliError(f"{args.path} exists and was trained with other settings: {'; '.join(differ)}; resume without "
                       f"them or train into a new file")
    return found


def run_train(args) -> int:
    from cfrkit.solvers.blueprint.betting_tree import parse_action_abstraction
    from cfrkit.solvers.blueprint.mccfr import ESMCCFRTrainer
    from cfrkit.solvers.blueprint.pluribus import PluribusTrainer
    from cfrkit.solvers.blueprint.trainer import BlueprintTrainer, TrainConfig, train

    if args.bets is not None:
        bets, cap = parse_action_abstraction(args.bets)
        if cap is not None and args.raise_cap is not None and cap != args.raise_cap:
            raise CliError(f"--bets {args.bets!r} sets raise cap {cap}, --raise-cap says {args.raise_cap}")
        args.bets, args.raise_cap = bets, cap if cap is not None else args.raise_cap
    if args.iterations is None and args.minutes is None and args.cpu_minutes is None:
        raise CliError("give --iterations, --minutes or --cpu-minutes")
    for name in ("iterations", "minutes", "cpu_minutes", "threads", "boards_per_iteration", "eval_deals", "eval_lbr_deals",
                 "discount_every"):
        v = getattr(args, name)
        if v is not None and v <= 0:
            raise CliError(f"--{name.replace('_', '-')} must be positive, got {v}")
    opponents = [o.strip() for o in args.eval_opponents.split(",") if o.strip()]
    for o in opponents:
        _check_opponent(o)
    # built now: a bad reference or LBR setting fails before the abstract game is built
    evaluate = make_evaluator(args.eval_deals, opponents, lbr=args.eval_lbr, lbr_deals=args.eval_lbr_deals) \
        if args.eval_minutes else None
    if os.path.exists(args.path):
        algorithm = check_resume_arguments(args)
        cls = {"es-mccfr": ESMCCFRTrainer, "pluribus": PluribusTrainer}.get(algorithm, BlueprintTrainer)
        if cls is ESMCCFRTrainer:
            _check_single_thread(args)
        trainer = cls.load(args.path, workers=args.threads, ray_address=args.ray,
                           boards_per_iteration=args.boards_per_iteration)
        print(f"resuming {args.path} ({algorithm}) at iteration {trainer.iterations}")
        if isinstance(trainer, PluribusTrainer):
            check_memory(trainer, allow_over=True)
    else:
        for name, value in TRAIN_DEFAULTS.items():
            if getattr(args, name) is None:
                setattr(args, name, value)
        if args.algorithm != "pluribus":
            bad = [f"--{o.replace('_', '-')}" for o in PLURIBUS_DEFAULTS if getattr(args, o) is not None]
            if bad or args.no_prune:
                raise CliError(f"{', '.join(bad + (['--no-prune'] if args.no_prune else []))}: pluribus options "
                               f"(--algorithm pluribus)")
        if args.algorithm == "pluribus":
            for name, value in PLURIBUS_DEFAULTS.items():
                if getattr(args, name) is None:
                    setattr(args, name, value)
            if args.deals_per_board <= 0 or args.prune_warmup < 0 or args.discount_until < 0:
                raise CliError("--deals-per-board must be positive, --prune-warmup and --discount-until >= 0")
            trainer = PluribusTrainer(game=args.game, bets=args.bets, raise_cap=args.raise_cap,
                                      abstraction=args.abstraction, seed=args.seed,
                                      deals_per_board=args.deals_per_board, prune=not args.no_prune,
                                      prune_warmup=args.prune_warmup, prune_threshold=args.prune_threshold,
                                      threads=args.threads, ray_address=args.ray,
                                      boards_per_iteration=args.boards_per_iteration,
                                      regret_storage=args.regret_storage, average=args.average,
                                      discount_every=args.discount_every, discount_until=args.discount_until,
                                      allocate=False)
            check_memory(trainer, args.allow_over_memory)
            trainer.allocate()
        elif args.algorithm == "es-mccfr":
            _check_single_thread(args)
            if args.deals_per_board <= 0 or args.prune_warmup < 0:
                raise CliError("--deals-per-board must be positive and --prune-warmup >= 0")
            trainer = ESMCCFRTrainer(game=args.game, bets=args.bets, raise_cap=args.raise_cap,
                                     abstraction=args.abstraction, seed=args.seed,
                                     deals_per_board=args.deals_per_board, prune=args.prune,
                                     prune_warmup=args.prune_warmup, prune_threshold=args.prune_threshold)
        else:
            if args.prune or args.prune_threshold is not None:
                raise CliError("--prune and --prune-threshold are es-mccfr options (--algorithm es-mccfr)")
            trainer = BlueprintTrainer(game=args.game, bets=args.bets, raise_cap=args.raise_cap,
                                       abstraction=args.abstraction, seed=args.seed, workers=args.threads,
                                       ray_address=args.ray, boards_per_iteration=args.boards_per_iteration)
    if not isinstance(trainer, PluribusTrainer):
        print(f"abstract game: {trainer.tree.num_nodes} betting nodes, {trainer.num_information_sets()} information "
              f"sets, {trainer.total} (information set, action) entries, {trainer.memory_bytes() / 2**20:.1f} MiB "
              f"of regrets and strategy sums")
    try:
        status = train(trainer, args.path, TrainConfig(iterations=args.iterations, minutes=args.minutes,
                                                       cpu_minutes=args.cpu_minutes,
                                                       checkpoint_minutes=args.checkpoint_minutes,
                                                       eval_minutes=args.eval_minutes,
                                                       progress=not args.no_progress), evaluate=evaluate)
    finally:
        trainer.close()
    return 128 + int(getattr(trainer, "stop_signal", None) or 2) if status == "interrupted" else 0


def check_memory(trainer, allow_over: bool = False, log=print) -> dict:
    """Print the information sets and table bytes of a pluribus trainer before it allocates them; raise
    :class:`CliError` (one line) when they exceed the machine's available memory, unless ``allow_over``."""
    from cfrkit.solvers.blueprint.pluribus import available_memory_bytes

    est = trainer.estimate()
    avail = available_memory_bytes()
    log(f"abstract game: {trainer.tree.num_nodes:,} betting nodes, {est['information_sets']:,} information sets, "
        f"{est['entries']:,} (information set, action) entries; tables {est['table_bytes']:,} bytes "
        f"({est['table_bytes'] / 2**30:.2f} GiB: {trainer.regret_storage} regrets, strategy sums for "
        f"{est['averaged_entries']:,} entries); available memory {avail / 2**30:.1f} GiB")
    if est["table_bytes"] > avail and not allow_over:
        raise CliError(f"the tables need {est['table_bytes'] / 2**30:.2f} GiB, more than the "
                       f"{avail / 2**30:.1f} GiB available; use fewer bet sizes, a lower raise cap or fewer buckets "
                       f"(or --allow-over-memory)")
    return est


def run_info(args) -> int:
    from cfrkit.solvers.blueprint.trainer import read_checkpoint, tree_from_arrays

    header, data = read_checkpoint(args.path, arrays=("strategy_sum",))
    tree = tree_from_arrays(header, data)  # refuses a file whose tree does not match its header
    try:
        _, total = tree.slots([int(b) for b in header["num_buckets"]])
    except (TypeError, ValueError):
        raise CliError(f"{args.path}: bucket counts {header['num_buckets']!r} in the header (corrupt file)") from None
    if data["strategy_sum"].shape != (total,) or total != header["total_slots"]:
        raise CliError(f"{args.path}: strategy sums of shape {data['strategy_sum'].shape} do not fit the tree and the "
                       f"header's buckets {header['num_buckets']} ({total} entries; corrupt file)")
    kinds = data["tree_kind"]
    print(f"{args.path}: {header.get('algorithm', 'cfr+')}, {header['game']}, bets {header['bets']}, "
          f"raise cap {header['raise_cap']}, "
          f"abstraction {header['abstraction']} (buckets {header['num_buckets']})")
    print(f"  {len(kinds)} betting nodes ({int((kinds == 0).sum())} decisions), {header['total_slots']} entries; "
          f"{header['iterations']} iterations, {header['seconds']:.0f} s ({header.get('cpu_seconds', 0):.0f} CPU s), "
          f"seed {header['seed']}, "
          f"{header['boards_per_iteration']} boards per iteration"
          + (", strategy only" if header.get("strategy_only") else ""))
    for e in header.get("evaluations", []):
        print(f"  evaluation: {e}")
    return 0


def run_play(args) -> int:
    from cfrkit.agents.blueprint import play_blueprint

    if args.deals <= 0:
        raise CliError("--deals must be positive")
    result, agent = play_blueprint(args.path, _check_opponent(args.opponent), args.deals, seed=args.seed,
                                   progress=True)
    est = result.duplicate_estimate
    print(f"blueprint vs {args.opponent}: {est.mean:+.1f} +- {est.ci95:.1f} mbb/hand over "
          f"{result.hands_played} hands ({result.deals} duplicate deals); off-tree hands {agent.off_tree_hands}")
    return 0
