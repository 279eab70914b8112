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
                   help="'random', 'deepstack' (same settings), 'cfr:N' (CFR+ with N iterations) or a policy .npz")
    q.add_argument("--hands", type=int, default=200, help="hands, seats alternating (default 200)")
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


def _opponent(spec: str, game, seat: int, make_agent):
    from cfrkit.policy import TabularPolicy, UniformRandomPolicy

    if spec == "random":
        return UniformRandomPolicy()
    if spec == "deepstack":
        return make_agent(seat)
    if spec.startswith("cfr:"):
        from cfrkit.solvers import CFRSolver

        try:
            n = int(spec[4:])
        except ValueError:
            raise CliError(f"--opponent cfr:N needs an integer N, got {spec!r}") from None
        return CFRSolver(game, algorithm="cfr+").run(n).average_policy()
    if os.path.exists(spec):
        return TabularPolicy.load(spec, game)
    raise CliError(f"unknown opponent {spec!r}: use random, deepstack, cfr:N or a policy file")


def run_play(args) -> int:
    import numpy as np
    from tqdm.auto import tqdm

    from cfrkit.agents.deepstack import DeepStackAgent, agent_policy
    from cfrkit.games.registry import load

    _check_positive(hands=args.hands, iterations=args.iterations)
    game = load(args.game)
    from cfrkit.games.holdem.game import HoldemGame

    if isinstance(game, HoldemGame):
        return _play_holdem(args, game)
    leaf = None
    if args.net is not None:
        from cfrkit.value_nets.train import load_leaf_values

        leaf = load_leaf_values(args.net)

    def make_agent(seat):
        return DeepStackAgent(game, seat, leaf_values=leaf, iterations=args.iterations, skip=args.skip,
                              algorithm=args.algorithm, carry=args.carry, seed=args.seed + seat)

    agents = [make_agent(0), make_agent(1)]
    opponents = [_opponent(args.opponent, game, 1 - s, make_agent) for s in (0, 1)]
    rng = np.random.default_rng(args.seed)
    total = []
    for hand in tqdm(range(args.hands), desc="hands", unit="hand"):
        seat = hand % 2
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outs = state.chance_outcomes()
                state.apply_action(outs[rng.choice(len(outs), p=[p for _, p in outs])][0])
                continue
            p = state.current_player()
            if p == seat:
                probs = agents[seat].action_probabilities(state)
            else:
                probs = opponents[seat].action_probabilities(state, p)
            acts = list(probs)
            pr = np.array([probs[a] for a in acts])
            state.apply_action(acts[rng.choice(len(acts), p=pr / pr.sum())])
        total.append(state.returns()[seat])
    total = np.array(total)
    se = total.std(ddof=1) / np.sqrt(len(total)) if len(total) > 1 else float("nan")
    print(f"DeepStack vs {args.opponent}: {total.mean():+.2f} +- {1.96 * se:.2f} chips/hand over {len(total)} hands")
    if args.exploitability:
        from cfrkit.evaluation import exploitability

        policy = agent_policy(game, agents, progress=True)
        print(f"exact exploitability of the agent: {exploitability(game, policy):.4f} chips")
    return 0


def _play_holdem(args, game) -> int:
    """``cfrkit play holdem``: the hold'em DeepStack agent against a poker agent (duplicate match)."""
    from cfrkit.agents.holdem_deepstack import HoldemDeepStackAgent
    from cfrkit.agents.poker import make_agent
    from cfrkit.evaluation.headtohead import play_match

    if args.exploitability:
        raise CliError("--exploitability is exact for Leduc only; bound a hold'em agent with cfrkit lbr")
    if args.carry != "average_values":
        raise CliError("the hold'em agent carries the averaged opponent values (--carry average_values)")
    agent = HoldemDeepStackAgent(game, nets=args.net, iterations=args.iterations, skip=args.skip,
                                 algorithm=args.algorithm, seed=args.seed)
    if args.opponent == "deepstack":
        opponent = HoldemDeepStackAgent(game, nets=args.net, iterations=args.iterations, skip=args.skip,
                                        algorithm=args.algorithm, seed=args.seed + 1)
    else:
        opponent = make_agent(args.opponent, seed=args.seed + 1)
    # re-solves take seconds to minutes per decision on a loaded CPU: no per-answer time limit here
    res = play_match([agent, opponent], game, args.hands, seed=args.seed, duplicate=True, progress=True,
                     time_limit=float("inf"))
    print(f"DeepStack vs {args.opponent}: {res.summary() if hasattr(res, 'summary') else res}")
    return 0
