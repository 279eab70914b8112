"""``cfrkit acpc-client HOST PORT --agent NAME``: play a cfrkit agent against an ACPC dealer."""
from __future__ import annotations


def add_parser(sub) -> None:
    from cfrkit.agents.poker import AGENT_NAMES

    p = sub.add_parser("acpc-client", help="play a poker agent against an ACPC dealer (protocol v2.0.0)",
                       description="Connect to an ACPC dealer, answer its MATCHSTATE lines with an agent's "
                                   "actions, and print a summary when the dealer closes the connection. "
                                   "Malformed dealer lines are reported on stderr and skipped.")
    p.add_argument("host", help="dealer host name or address")
    p.add_argument("port", type=int, help="dealer port for this seat")
    p.add_argument("--agent", required=True, help=f"agent: {', '.join(AGENT_NAMES)}")
    p.add_argument("--game", default="holdem",
                   help="the dealer's game as a cfrkit game string (default: holdem = heads-up no-limit, "
                        "ACPC reverse blinds); e.g. 'holdem(definition=holdem.limit.2p.reverse_blinds)' or "
                        "'holdem(definition=path/to/file.game)'")
    p.add_argument("--seed", type=int, default=None, help="random seed of the agent")
    p.add_argument("--range", dest="hand_range", default=None,
                   help="hand range of fixed-range-raiser, e.g. 'TT+,AQs+,AKo'")
    p.add_argument("--fraction", type=float, default=1.0, help="pot fraction fixed-range-raiser raises (default 1)")
    p.add_argument("--policy", default=None,
                   help="policy file (TabularPolicy .npz of a holdem or holdem_abstract game) for --agent policy")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="seconds to wait for the dealer before giving up (default 30)")
    p.add_argument("--hands", type=int, default=None, help="stop after this many finished hands")
    p.set_defaults(func=run)


def run(args) -> int:
    from cfrkit.agents.acpc_client import ClientError, run_client
    from cfrkit.agents.poker import make_agent
    from cfrkit.cli import CliError
    from cfrkit.games.holdem.game import HoldemGame
    from cfrkit.games.registry import load

    game = load(args.game)
    if not isinstance(game, HoldemGame):
        raise CliError(f"--game must be a holdem game, got {game.game_string()!r}")
    if args.timeout <= 0:
        raise CliError("--timeout must be positive")
    agent = make_agent(args.agent, seed=args.seed, hand_range=args.hand_range, fraction=args.fraction,
                       policy_path=args.policy)
    if hasattr(agent, "check_game"):
        agent.check_game(game)
    try:
        summary = run_client(args.host, args.port, game, agent, timeout=args.timeout, max_hands=args.hands)
    except ClientError as exc:
        raise CliError(str(exc)) from None
    print(f"acpc-client {agent.name}: {summary}")
    return 0
