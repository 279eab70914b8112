"""``cfrkit datagen``, ``cfrkit train-valuenet`` and ``cfrkit play``: DeepStack's pipeline on the command line.

    cfrkit datagen leduc_nolimit data/ --samples 50000 --shard-size 10000 --iterations 1000 --skip 500
    cfrkit train-valuenet data/ net.pt --epochs 200 --max-minutes 5
    cfrkit play leduc_nolimit --net net.pt --opponent random --hands 1000 --exploitability
"""
from __future__ import annotations

import os
import sys

from cfrkit.cli import CliError


def add_parser(sub) -> None:
    p = sub.add_parser("datagen", help="generate value-net training data (random situations solved with CFR+)")
    p.add_argument("game", help="game string, e.g. leduc_nolimit")
    p.add_argument("out_dir", help="directory for the shards (resumable: finished shards are kept)")
    p.add_argument("--samples", type=int, default=10000, help="number of situations (default 10000)")
    p.add_argument("--shard-size", type=int, default=5000, help="situations per shard (default 5000)")
    p.add_argument("--iterations", type=int, default=1000, help="CFR+ iterations per situation (default 1000)")
    p.add_argument("--skip", type=int, default=500, help="iterations left out of the average (default 500)")
    p.add_argument("--pots", choices=("reachable", "uniform"), default="reachable",
                   help="contributions reachable at the round start (default) or uniform in [ante, stack)")
    p.add_argument("--targets", choices=("average_values", "average_strategy"), default="average_values",
                   help="root cfvs averaged over the iterations after --skip (DeepStack's, default) or the cfvs "
                        "of the average strategy (understates hands with zero reach)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    p.add_argument("--ray", metavar="ADDRESS", default=None, help="run shards on a Ray cluster (needs ray)")
    p.add_argument("--backend", choices=("numpy", "torch"), default="numpy",
                   help="solver arrays; torch uses the GPU when there is one")
    p.add_argument("--device", default=None, help="torch device (default: cuda if available)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run_datagen)

    t = sub.add_parser("train-valuenet", help="train a DeepStack value network on datagen shards")
    t.add_argument("data_dir", nargs="+", help="one or more datagen directories (same game)")
    t.add_argument("out", help="checkpoint path of the best model (the last state goes to OUT.last)")
    t.add_argument("--hidden", default="128,128,128", help="hidden layer widths (default 128,128,128)")
    t.add_argument("--epochs", type=int, default=200)
    t.add_argument("--batch-size", type=int, default=1000)
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--val-fraction", type=float, default=0.1)
    t.add_argument("--patience", type=int, default=20, help="early stopping patience in epochs")
    t.add_argument("--max-minutes", type=float, default=None, help="stop after this long")
    t.add_argument("--batchnorm", action="store_true")
    t.add_argument("--pot-weighted", action="store_true", help="weight samples by pot (loss in chips)")
    t.add_argument("--resume", action="store_true", help="continue from OUT.last")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    t.set_defaults(func=run_train)

    q = sub.add_parser("play", help="a continual re-solving DeepStack agent against another agent")
    q.add_argument("game", help="game string (leduc or leduc_nolimit family, or heads-up no-limit holdem)")
    q.add_argument("--net", default=None, help="value-net checkpoint (default: re-solve to the end of the game); "
                                               "holdem: a directory of hold'em value nets (default: check-down leaves)")
    q.add_argument("--opponent", default="random",
                   help="an agent name ('random', 'always-call', 'deepstack' (same settings), 'cfr:N' (CFR+ with N "
                        "iterations), ...) or a policy .npz")
    q.add_argument("--hands", type=int, default=200,
                   help="Leduc: hands, seats alternating; hold'em: duplicate deals (default 200)")
    q.add_argument("--iterations", type=int, default=1000, help="CFR iterations per re-solve")
    q.add_argument("--skip", type=int, default=0)
    q.add_argument("--algorithm", choices=("dcfr", "cfr+"), default="dcfr",
                   help="re-solve algorithm (default dcfr: alpha 1.5, beta 0, gamma 2)")
    q.add_argument("--carry", choices=("average_values", "best_response"), default="average_values",
                   help="opponent cfvs carried between decisions: averaged over the re-solve's iterations "
                        "(DeepStack, default) or of the best response to the average strategy")
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--exploitability", action="store_true",
                   help="also compute the agent's exact exploitability (re-solves every public state)")
    q.set_defaults(func=run_play)


def _check_positive(**kw):
    for k, v in kw.items():
        if v is not None and v <= 0:
            raise CliError(f"--{k.replace('_', '-')} must be positive, got {v}")


def run_datagen(args) -> int:
    from cfrkit.value_nets.data import generate_dataset

    _check_positive(samples=args.samples, shard_size=args.shard_size, iterations=args.iterations,
                    workers=args.workers)
    if not 0 <= args.skip < args.iterations:
        raise CliError(f"--skip must be in [0, --iterations), got {args.skip}")
    from cfrkit.cli._runtime import InterruptOnSignal

    with InterruptOnSignal() as signals:
        try:
            paths = generate_dataset(args.out_dir, args.game, args.samples, shard_size=args.shard_size,
                                     iterations=args.iterations, skip=args.skip, seed=args.seed, pots=args.pots,
                                     workers=args.workers, ray_address=args.ray, backend=args.backend,
                                     device=args.device, targets=args.targets, progress=not args.no_progress)
        except KeyboardInterrupt:
            print(f"cfrkit datagen: interrupted; finished shards are kept in {args.out_dir} (run the same command "
                  f"to resume)", file=sys.stderr)
            return signals.exit_code()
    print(f"{len(paths)} shards in {args.out_dir}")
    return 0


def run_train(args) -> int:
    from cfrkit.value_nets.data import load_dataset
    from cfrkit.value_nets.train import train_value_net

    try:
        hidden = tuple(int(h) for h in args.hidden.split(",") if h.strip())
    except ValueError:
        raise CliError(f"--hidden must be comma-separated integers, got {args.hidden!r}") from None
    _check_positive(epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, patience=args.patience,
                    max_minutes=args.max_minutes)
    if not hidden or min(hidden) <= 0:
        raise CliError(f"--hidden needs positive widths, got {args.hidden!r}")
    missing = [d for d in args.data_dir if not os.path.isdir(d)]
    if missing:   # checked here: load_dataset would take a missing name for a shard path
        raise CliError(f"no such data directory: {missing[0]}")
    data = load_dataset(args.data_dir)
    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    summary = train_value_net(data, args.out, hidden=hidden, epochs=args.epochs, batch_size=args.batch_size,
                              lr=args.lr, val_fraction=args.val_fraction, patience=args.patience, seed=args.seed,
                              max_seconds=None if args.max_minutes is None else 60 * args.max_minutes,
                              resume=args.resume, batchnorm=args.batchnorm, threads=args.threads,
                              pot_weighted=args.pot_weighted)
    print(f"best validation Huber loss {summary['best_val_loss']:.4g} at epoch {summary['best_epoch']} "
          f"({summary['samples']} samples, {summary['epochs_run']} epochs, {summary['seconds']:.0f} s); saved {args.out}")
    return 0


def opponent_spec(text: str) -> str:
    """The registry spec of ``--opponent``: a policy file becomes ``policy:PATH``; ``random``,
    ``deepstack``, ``cfr:N`` and the other registered names stand as they are."""
    from cfrkit.poker.registry import RegistryError, agent_entry, parse_spec

    try:
        agent_entry(parse_spec(text)[0])
    except RegistryError:
        if os.path.exists(text):
            return f"policy:{text}"
    return text


def run_play(args) -> int:
    from cfrkit.games.holdem.game import HoldemGame
    from cfrkit.games.registry import load
    from cfrkit.poker.match import play_match
    from cfrkit.poker.registry import make_agent

    _check_positive(hands=args.hands, iterations=args.iterations)
    game = load(args.game)
    holdem = isinstance(game, HoldemGame)
    if holdem and args.exploitability:
        raise CliError("--exploitability is exact for Leduc only; bound a hold'em agent with cfrkit lbr")
    if holdem and args.carry != "average_values":
        raise CliError("the hold'em agent carries the averaged opponent values (--carry average_values)")
    options = dict(net=args.net, iterations=args.iterations, skip=args.skip, algorithm=args.algorithm)
    if not holdem:
        options["carry"] = args.carry
    agent = make_agent("deepstack", game=game, seed=args.seed, **options)
    spec = opponent_spec(args.opponent)
    if spec == "deepstack":
        opponent = make_agent("deepstack", game=game, seed=args.seed + 1, **options)
    else:
        opponent = make_agent(spec, game=game, seed=args.seed + 1)
    # re-solves take seconds to minutes per decision on a loaded CPU: no per-answer time limit here;
    # hold'em plays duplicate deals, the Leduc family one hand per deal with the seats alternating
    res = play_match(game, [agent, opponent], args.hands, seed=args.seed, duplicate=holdem, progress=True,
                     time_limit=float("inf"))
    mean, half = res.mbb_per_hand(0)
    chips = res.big_blind / 1000.0
    print(f"DeepStack vs {args.opponent}: {mean * chips:+.2f} +- {half * chips:.2f} chips/hand over "
          f"{res.hands_played} hands")
    print(res.summary())
    if args.exploitability:
        from cfrkit.evaluation import exploitability

        print(f"exact exploitability of the agent: {exploitability(game, agent.policy(progress=True)):.4f} chips")
    return 0
