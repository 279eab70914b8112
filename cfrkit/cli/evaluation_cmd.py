"""``cfrkit match``, ``cfrkit lbr``, ``cfrkit drl-br``: head-to-head and exploitability bounds for poker agents."""
from __future__ import annotations

import json
import os
import sys

HOLDEM_AGENTS = "random, always-call, always-fold, fixed-range-raiser, rule-based, policy:PATH, blueprint:PATH, " \
                "deepstack-holdem:OPTIONS"
LEDUC_AGENTS = "random, always-call, always-fold, policy:PATH, deepstack, cfr:N"


def agent_options(args, prefix: str = "") -> dict:
    """The agent options given on the command line (``--policy``, ``--range``, ``--fraction``), for
    :func:`cfrkit.poker.registry.make_agent`; options not given are left out."""
    key = prefix.replace("-", "_")
    given = {"policy_path": getattr(args, f"{key}policy", None), "hand_range": getattr(args, f"{key}hand_range", None),
             "fraction": getattr(args, f"{key}fraction", None)}
    return {k: v for k, v in given.items() if v is not None}


def _agent_options(p, prefix: str = "") -> None:
    p.add_argument(f"--{prefix}policy", default=None, help="policy file (.npz) for a 'policy' or 'blueprint' agent "
                                                           "(or write policy:PATH)")
    p.add_argument(f"--{prefix}range", dest=f"{prefix.replace('-', '_')}hand_range", default=None,
                   help="hand range of fixed-range-raiser, e.g. 'TT+,AQs+,AKo'")
    p.add_argument(f"--{prefix}fraction", type=float, default=None,
                   help="pot fraction fixed-range-raiser raises (default 1)")


def _checkpoint_options(p, default_name: str) -> None:
    p.add_argument("--checkpoint", default=None, help=f"checkpoint file (default {default_name})")
    p.add_argument("--no-checkpoint", action="store_true", help="do not write a checkpoint")


def _checkpoint_file(args, default_name: str):
    """The checkpoint path of a resumable evaluation: ``--checkpoint``, else ``default_name`` made
    file-name safe; None with ``--no-checkpoint``."""
    if args.no_checkpoint:
        return None
    return args.checkpoint or _safe(default_name)


def _game(text):
    from cfrkit.poker.view import poker_view

    return poker_view(text).game


def add_parser(sub) -> None:
    m = sub.add_parser("match", help="head-to-head match of two poker agents (duplicate, AIVAT)",
                       description=f"Play two agents against each other in process and report agent A's winnings in "
                                   f"mbb/hand with 95%% intervals (plain, duplicate, AIVAT). Hold'em agents: "
                                   f"{HOLDEM_AGENTS}; Leduc agents: {LEDUC_AGENTS}.")
    m.add_argument("agent_a")
    m.add_argument("agent_b")
    m.add_argument("--game", default="holdem", help="holdem (HUNL 50/100, 200bb), leduc, leduc_nolimit, ...")
    m.add_argument("--hands", type=int, default=1000, help="number of deals (default 1000; doubled by --duplicate)")
    m.add_argument("--duplicate", action="store_true", help="replay every deal with the seats swapped")
    m.add_argument("--aivat", action="store_true", help="AIVAT estimate (known strategies of the agents)")
    m.add_argument("--fit-opponent", type=int, default=0, metavar="DEALS",
                   help="with --aivat, a blueprint against an agent without a value function of its own (A^R, ...): "
                        "AIVAT from the blueprint's tables against that agent's policy fitted on DEALS deals of a "
                        "separate match (~2 CPU s per 1,000 deals + ~10 CPU s of tables; default 0: off)")
    m.add_argument("--seed", type=int, default=0, help="match seed (deals)")
    m.add_argument("--acpc-log", default=None, help="write the hands as an ACPC log (hold'em)")
    m.add_argument("--phh-log", default=None, help="write the hands as PHH (hold'em)")
    m.add_argument("--json", action="store_true", help="print the result as JSON")
    m.add_argument("--time-limit", type=float, default=60.0, help="seconds an agent may take per answer")
    _agent_options(m, "a-")
    _agent_options(m, "b-")
    m.set_defaults(func=run_match)

    lb = _target_parser(sub, "lbr", "local best response (lower bound on an agent's exploitability)",
                        "Local Best Response (Lisy & Bowling 2017) against an agent: LBR plays both seats on the "
                        "same cards; result in mbb/game with a 95%% interval. Checkpointed after every chunk of "
                        "deals; run again to resume.", game="holdem")
    lb.add_argument("--bets", default="FCPA", help="FC, FCPA or pot fractions such as 0.5,1,A (default FCPA)")
    lb.add_argument("--rounds", default=None, help="rounds where LBR acts, 1-based (default: all, e.g. 1-4)")
    lb.add_argument("--hands", type=int, default=1000, help="deals, each played in both seats (default 1000)")
    lb.add_argument("--seed", type=int, default=0)
    lb.add_argument("--processes", type=int, default=1, help="worker processes (default 1)")
    lb.add_argument("--ray", default=None, metavar="ADDRESS", help="run on Ray: 'local' or a cluster address")
    lb.add_argument("--chunk", type=int, default=25, help="deals per task and checkpoint (default 25)")
    _checkpoint_options(lb, "lbr-<agent>-<bets>-<rounds>-s<seed>.npz")
    lb.add_argument("--flop-samples", type=int, default=None, help="sampled flop runouts (default: exact)")
    lb.add_argument("--preflop-samples", type=int, default=None,
                    help="sampled boards for preflop equities (default: the exact preflop equity table)")
    lb.add_argument("--calling-range", action="store_true",
                    help="value a called bet with the equity against the hands that do not fold (not the whole range)")
    lb.add_argument("--seed-agent", type=int, default=None, help="agent's random seed")
    _target_options(lb, "re-solve iterations of the Leduc deepstack agent", run_lbr_cmd)

    d = _target_parser(sub, "drl-br", "deep-RL best response (DQN) to an agent, then a head-to-head estimate",
                       "Train a double DQN (dueling, n-step, replay, target network) against a fixed agent, then "
                       "play it head to head (duplicate; AIVAT when the agent's strategy is known). Checkpointed; "
                       "run again with a larger --steps to continue.", game="leduc")
    d.add_argument("--steps", type=int, default=20000, help="learner decisions in total (default 20000)")
    d.add_argument("--bets", default="0.5,1,A", help="raise sizes: pot fractions and A (default 0.5,1,A)")
    d.add_argument("--eval-hands", type=int, default=2000, help="deals of the evaluation match (duplicate)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--device", default=None, help="cpu or cuda (default: cuda when present)")
    _checkpoint_options(d, "drl-br-<agent>-<game>-s<seed>.pt")
    d.add_argument("--exact", action="store_true", help="also the exact value of the learner (Leduc)")
    _target_options(d, "re-solve iterations of the deepstack agent", run_drl_br)


def _target_parser(sub, name: str, help: str, description: str, game: str):
    """The parser of a best-response command: its target agent (a registry name) and the game."""
    p = sub.add_parser(name, help=help, description=description)
    p.add_argument("agent", help="the agent to best-respond to (a registry name, e.g. blueprint:bp.npz)")
    p.add_argument("--game", default=game, help=f"game (default {game})")
    return p


def _target_options(p, iterations_help: str, func) -> None:
    """Options of a best-response command about its target agent (JSON output, the agent's options)."""
    p.add_argument("--json", action="store_true")
    _agent_options(p)
    p.add_argument("--iterations", type=int, default=200, help=iterations_help)
    p.set_defaults(func=func)


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)


def run_match(args) -> int:
    from cfrkit.cli import CliError
    from cfrkit.evaluation.headtohead import head_to_head
    from cfrkit.poker.registry import make_agent

    if args.hands <= 0:
        raise CliError("--hands must be positive")
    if not args.time_limit > 0:  # NaN fails this too
        raise CliError(f"--time-limit must be a positive number of seconds, got {args.time_limit:g}")
    if args.fit_opponent < 0:
        raise CliError(f"--fit-opponent must be >= 0 deals, got {args.fit_opponent}")
    if args.fit_opponent and not args.aivat:
        raise CliError("--fit-opponent shapes the AIVAT estimate: give --aivat too")
    game = _game(args.game)
    a = make_agent(args.agent_a, game=game, seed=args.seed, **agent_options(args, "a-"))
    b = make_agent(args.agent_b, game=game, seed=args.seed + 1, **agent_options(args, "b-"))
    for seat, spec, agent in (("A", args.agent_a, a), ("B", args.agent_b, b)):
        describe = getattr(agent, "describe_leaves", None)  # slow re-solving agents say what they use first
        if describe is not None:
            print(f"agent {seat} ({spec}): {describe()}", file=sys.stderr, flush=True)
    res = head_to_head(game, [a, b], args.hands, seed=args.seed, duplicate=args.duplicate, aivat=args.aivat,
                       acpc_log=args.acpc_log, phh_log=args.phh_log, progress=not args.json,
                       time_limit=args.time_limit, fit_opponent_deals=args.fit_opponent)
    print(res.to_json() if args.json else res.summary())
    return 0


def run_lbr_cmd(args) -> int:
    from cfrkit.cli import CliError
    from cfrkit.evaluation.lbr import LBRSettings, parse_bets, parse_rounds, run_lbr
    from cfrkit.poker.registry import make_agent
    from cfrkit.poker.view import poker_view

    if args.hands <= 0 or args.processes <= 0:
        raise CliError("--hands and --processes must be positive")
    game = _game(args.game)
    view = poker_view(game)
    rounds = args.rounds or f"1-{view.num_rounds()}"
    settings = LBRSettings(parse_bets(args.bets), parse_rounds(rounds, view.num_rounds()),
                           flop_samples=args.flop_samples, preflop_samples=args.preflop_samples,
                           calling_range=args.calling_range)
    agent = make_agent(args.agent, game=game, seed=args.seed_agent, defaults={"iterations": args.iterations},
                       **agent_options(args))
    cr = "-cr" if args.calling_range else ""
    checkpoint = _checkpoint_file(args, f"lbr-{args.agent}-{args.bets}-{rounds}{cr}-s{args.seed}.npz")
    res = run_lbr(agent, game, args.hands, settings, seed=args.seed, processes=args.processes, ray_address=args.ray,
                  chunk=args.chunk, checkpoint=checkpoint, progress=not args.json)
    if args.json:
        print(json.dumps(res.to_dict(), indent=2))
    else:
        print(res)
        if res.max_equity_error > 0:
            print(f"  largest standard error of a sampled equity: {res.max_equity_error:.4f}")
        if checkpoint:
            print(f"  checkpoint: {os.path.abspath(checkpoint)}")
    return 0


def run_drl_br(args) -> int:
    from cfrkit.cli import CliError
    from cfrkit.evaluation.drl_br import DQNConfig, drl_br
    from cfrkit.evaluation.lbr import parse_bets
    from cfrkit.poker.registry import make_agent

    if args.steps <= 0 or args.eval_hands <= 0:
        raise CliError("--steps and --eval-hands must be positive")
    game = _game(args.game)
    agent = make_agent(args.agent, game=game, seed=args.seed, defaults={"iterations": args.iterations},
                       **agent_options(args))
    checkpoint = _checkpoint_file(args, f"drl-br-{args.agent}-{game.short_name}-s{args.seed}.pt")
    config = DQNConfig(bets=parse_bets(args.bets) or (1.0,))
    _, res = drl_br(agent, game, args.steps, eval_hands=args.eval_hands, config=config, seed=args.seed,
                    checkpoint=checkpoint, device=args.device, exact=args.exact, progress=not args.json)
    if args.json:
        from dataclasses import asdict

        print(json.dumps(asdict(res), indent=2))
    else:
        print(res)
        if checkpoint:
            print(f"  checkpoint: {os.path.abspath(checkpoint)}")
    return 0
