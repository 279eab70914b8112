"""``cfrkit acpc-client HOST PORT --agent NAME``: play a cfrkit agent against an ACPC dealer."""
from __future__ import annotations


def add_parser(sub) -> None:
    from cfrkit.poker.registry import agent_names

    p = sub.add_parser("acpc-client", help="play a poker agent against an ACPC dealer (protocol v2.0.0)",
                       description="Connect to an ACPC dealer, answer its MATCHSTATE lines with an agent's "
                                   "actions, and print a summary when the dealer closes the connection. "
                                   "Malformed dealer lines are reported on stderr and skipped.")
    p.add_argument("host", help="dealer host name or address")
    p.add_argument("port", help="dealer port for this seat (1..65535)")
    p.add_argument("--agent", required=True, help=f"agent: {', '.join(agent_names())} (policy:PATH, blueprint:PATH)")
    p.add_argument("--game", default="holdem",
                   help="the dealer's game as a cfrkit game string (default: holdem = heads-up no-limit, "
                        "ACPC reverse blinds); e.g. 'holdem(definition=holdem.limit.2p.reverse_blinds)' or "
                        "'holdem(definition=path/to/file.game)'. Split pots are counted in fractions of a "
                        "chip as the ACPC dealer does (fractional_split=true) unless the string says otherwise")
    p.add_argument("--seed", type=int, default=None, help="random seed of the agent")
    p.add_argument("--range", dest="hand_range", default=None,
                   help="hand range of fixed-range-raiser, e.g. 'TT+,AQs+,AKo'")
    p.add_argument("--fraction", type=float, default=None, help="pot fraction fixed-range-raiser raises (default 1)")
    p.add_argument("--policy", default=None,
                   help="policy file (TabularPolicy .npz of a holdem or holdem_abstract game) for --agent policy")
    p.add_argument("--timeout", default="30",
                   help="seconds the dealer may stay silent when it owes a message (after our action, between "
                        "hands) before giving up (default 30); the opponent's thinking time is not counted")
    p.add_argument("--opponent-timeout", default=None,
                   help="seconds to wait while another player is to act (default: no limit)")
    p.add_argument("--hands", type=int, default=None, help="stop after this many finished hands (>= 1)")
    p.set_defaults(func=run)


def run(args) -> int:
    from cfrkit.agents.acpc_client import ClientError, check_port, check_timeout, run_client
    from cfrkit.cli import CliError
    from cfrkit.cli.evaluation_cmd import agent_options
    from cfrkit.poker.registry import make_agent

    try:
        port = check_port(args.port)
        timeout = check_timeout(args.timeout, "--timeout")
        opponent_timeout = check_timeout(args.opponent_timeout, "--opponent-timeout", allow_none=True)
    except ClientError as exc:
        raise CliError(str(exc)) from None
    if args.hands is not None and args.hands < 1:
        raise CliError(f"--hands must be at least 1, got {args.hands}")
    game = client_game(args.game)
    agent = make_agent(args.agent, game=game, seed=args.seed, **agent_options(args))
    try:
        summary = run_client(args.host, port, game, agent, timeout=timeout, max_hands=args.hands,
                             opponent_timeout=opponent_timeout)
    except ClientError as exc:
        raise CliError(str(exc)) from None
    print(f"acpc-client {agent.name}: {summary}")
    return 0


def client_game(game_string: str):
    """The hold'em game of ``--game``, with ``fractional_split=true`` unless the string sets it: the ACPC
    dealer splits tied pots into fractions of a chip, so the client's totals then equal the dealer's."""
    from cfrkit.cli import CliError
    from cfrkit.games.holdem.game import HoldemGame
    from cfrkit.games.registry import load, parse_game_string

    name, params = parse_game_string(game_string)
    if name == "holdem" and "fractional_split" not in params:
        game = load(game_string, fractional_split=True)
    else:
        game = load(game_string)
    if not isinstance(game, HoldemGame):
        raise CliError(f"--game must be a holdem game, got {game.game_string()!r}")
    return game
