"""``cfrkit serve``, ``cfrkit results [MATCH]``, ``cfrkit platform-agent AGENT``: the match platform."""
from __future__ import annotations


# the server's limits: flag, type, default (None: the server's), lowest accepted value, help
_LIMITS = (
    ("--max-matches", int, None, 0,
     "matches running at once (default 5000, or half the descriptor budget under a low ulimit -n)"),
    ("--max-per-address", int, 256, 1, "connections open at once from one address (default 256)"),
    ("--max-plays-per-address", int, 16, 0,
     "running matches one address may start with 'play' without the operator token (default 16)"),
    ("--idle-timeout", float, 120.0, 0.001, "seconds a connection without a seat may stay silent (default 120)"),
    ("--match-idle-timeout", float, 900.0, 0.001,
     "seconds a match may have none of its remote players connected before it expires (default 900)"),
    ("--rate", float, None, 0.001,
     "messages per second a connection may send; faster ones are read later, never dropped (default 200)"),
    ("--burst", float, None, 1, "burst of the rate limit, messages (default 400)"),
)


def add_parser(sub) -> None:
    import argparse

    from cfrkit.poker.registry import agent_names

    p = sub.add_parser("serve", help="run the match platform server (JSON lines, ACPC, browser)",
                       description="Serve matches between agents and people: JSON lines over TCP (--port), the "
                                   "ACPC protocol (per-seat ports, and --acpc-port with a TOKEN line), and a "
                                   "browser page with WebSocket (--http-port). Matches and hands are stored in "
                                   "SQLite (--db); after a restart running matches continue. See docs/platform.md.")
    p.add_argument("--db", default="platform.db", help="SQLite database file (default platform.db)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=1080, help="JSON-lines TCP port (default 1080)")
    p.add_argument("--acpc-port", type=int, default=1081, help="shared ACPC door (default 1081; -1 = off)")
    p.add_argument("--http-port", type=int, default=8080, help="HTTP + WebSocket port (default 8080; -1 = off)")
    p.add_argument("--policy", action="append", default=[], metavar="NAME=PATH",
                   help="offer a policy file as the house agent 'policy:NAME' (repeatable)")
    p.add_argument("--workers", type=int, default=1,
                   help="server processes sharing the ports and the database, one core each (default 1)")
    p.add_argument("--operator-token", default=None,
                   help="token that create / cancel / admin messages must carry ('operator' field); default: "
                        "$CFRKIT_OPERATOR_TOKEN, none on a loopback bind, a new random one printed at start otherwise")
    p.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                   help="also accept WebSocket connections from pages of ORIGIN (e.g. https://play.example.org; "
                        "repeatable); the server's own page is always accepted")
    for flag, kind, default, _low, text in _LIMITS:
        p.add_argument(flag, type=kind, default=default, help=text)
    p.set_defaults(func=run_serve)

    r = sub.add_parser("results", help="per-agent mbb/h with 95%% intervals, leaderboard, PNG of winnings",
                       description="Results of matches stored by `cfrkit serve`: per-agent mbb/h with 95%% "
                                   "intervals (duplicate deals paired) for one match or a leaderboard over all.")
    r.add_argument("match", nargs="?", default=None, help="match id (default: leaderboard over all matches)")
    r.add_argument("--db", default="platform.db", help="SQLite database file (default platform.db)")
    r.add_argument("--png", default=None, help="write the cumulative winnings of MATCH to this PNG")
    r.set_defaults(func=run_results)

    c = sub.add_parser("create-match", help="create a match on a running server and print its ports and tokens",
                       description="Create a match on a running `cfrkit serve` (JSON door) and print the seat "
                                   "of every player: the TCP port an unchanged ACPC agent connects to, the token "
                                   "of a JSON / browser seat. Hand 0 starts once every seat is taken.")
    c.add_argument("players", nargs="+", metavar="PLAYER",
                   help="one per seat: acpc, remote or a built-in agent; NAME=KIND names the player, "
                        "acpc@PORT fixes an ACPC seat's port (e.g. slumbot=acpc@40123 ar)")
    c.add_argument("--host", default="127.0.0.1")
    c.add_argument("--port", type=int, default=1080, help="the server's JSON door (default 1080)")
    c.add_argument("--game", default="holdem", help="holdem(definition=NAME, ...) game string (default holdem)")
    c.add_argument("--hands", type=int, default=1000)
    c.add_argument("--seed", type=int, default=None, help="deal seed (default: the server draws one)")
    c.add_argument("--duplicate", action=argparse.BooleanOptionalAction, default=None,
                   help="duplicate deals (default: on for two players)")
    c.add_argument("--time-per-action", type=float, default=None, help="seconds per decision (default 10)")
    c.add_argument("--time-bank", type=float, default=None, help="seconds of time bank per player (default 60)")
    c.add_argument("--operator-token", default=None,
                   help="the server's operator token (default $CFRKIT_OPERATOR_TOKEN; not needed on a loopback "
                        "server started without one)")
    c.add_argument("--json", action="store_true", help="print the server's created message as JSON")
    c.set_defaults(func=run_create_match)

    a = sub.add_parser("platform-agent", help="play a built-in agent on the platform (JSON door)",
                       description="Connect a built-in agent to a platform server as a client: start a match "
                                   "against house agents (--opponent) or take a seat (--match, --token).")
    a.add_argument("agent", help=f"agent: {', '.join(agent_names())} (policy:PATH, blueprint:PATH)")
    a.add_argument("--host", default="127.0.0.1")
    a.add_argument("--port", type=int, default=1080)
    a.add_argument("--opponent", default=None, help="house agent(s) to play, comma-separated (starts a match)")
    a.add_argument("--hands", type=int, default=1000)
    a.add_argument("--seed", type=int, default=None, help="deal seed of a new match (and the agent's seed)")
    a.add_argument("--game", default="holdem", help="game string of a new match (default holdem)")
    a.add_argument("--match", default=None, help="join this match ...")
    a.add_argument("--token", default=None, help="... with this seat token")
    a.add_argument("--policy", default=None, help="policy file for --agent policy")
    a.set_defaults(func=run_agent)


def run_serve(args) -> int:
    import asyncio
    import logging
    import os
    import resource
    import secrets
    import sqlite3
    import sys

    from cfrkit.cli import CliError
    from cfrkit.platform.server import Server, is_loopback

    policies = {}
    for item in args.policy:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise CliError(f"--policy takes NAME=PATH, got {item!r}")
        policies[name] = path
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if args.workers < 1:
        raise CliError(f"--workers must be at least 1, got {args.workers}")
    for flag, value in (("--port", args.port), ("--acpc-port", args.acpc_port), ("--http-port", args.http_port)):
        if not -1 <= value <= 65535 or flag == "--port" and value < 0:
            raise CliError(f"{flag} must be a TCP port 0..65535{'' if flag == '--port' else ' or -1 (off)'}, got {value}")
    for flag, _kind, _default, low, _text in _LIMITS:
        value = getattr(args, flag[2:].replace("-", "_"))
        if value is not None and not value >= low:
            raise CliError(f"{flag} must be at least {low:g}, got {value:g}")
    # descriptors: use what the hard limit allows (the server budgets connections and seats below it)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else 1 << 16
    if soft != resource.RLIM_INFINITY and soft < min(want, 1 << 16):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, 1 << 16), hard))
        except (ValueError, OSError):
            pass
    token = args.operator_token or os.environ.get("CFRKIT_OPERATOR_TOKEN") or None
    loopback = is_loopback(args.host)
    if not loopback:
        if token is None:
            token = secrets.token_urlsafe(18)
            print(f"cfrkit serve: operator token (create / cancel / admin need it): {token}", flush=True)
        print(f"cfrkit serve: WARNING: binding {args.host}, not a loopback address: anybody who can reach it may "
              f"connect and play, and tokens travel in clear text; put the server behind TLS (a reverse proxy) "
              f"and pass its public page with --allow-origin", file=sys.stderr, flush=True)
    kwargs = dict(max_matches=args.max_matches, policies=policies, operator_token=token,
                  allow_origins=args.allow_origin, max_per_address=args.max_per_address,
                  max_plays_per_address=args.max_plays_per_address, idle_timeout=args.idle_timeout,
                  match_idle_timeout=args.match_idle_timeout)
    if args.rate is not None:
        kwargs["rate_per_second"] = args.rate
    if args.burst is not None:
        kwargs["rate_burst"] = args.burst
    if args.workers > 1:
        from cfrkit.games.base import GameError
        from cfrkit.platform.workers import serve_workers

        try:
            return serve_workers(args.workers, args.db, args.host, args.port,
                                 None if args.acpc_port < 0 else args.acpc_port,
                                 None if args.http_port < 0 else args.http_port,
                                 on_ready=lambda bound: print(f"cfrkit serve: {bound} (db {args.db})", flush=True),
                                 **kwargs)
        except GameError as exc:
            raise CliError(str(exc)) from None

    async def main():
        try:
            server = Server(args.db, args.host, args.port, None if args.acpc_port < 0 else args.acpc_port,
                            None if args.http_port < 0 else args.http_port, **kwargs)
        except (sqlite3.Error, OSError) as exc:
            raise CliError(f"cannot open the database {args.db!r}: {exc}") from None
        try:
            await server.start()
        except OSError as exc:
            raise CliError(f"cannot bind: {exc}") from None
        print(f"cfrkit serve: {server.bound} (db {args.db})", flush=True)
        try:
            await server.serve_forever()
        finally:
            await server.close()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        print("cfrkit serve: stopped", flush=True)
    return 0


def run_results(args) -> int:
    import os
    import sqlite3

    from cfrkit.cli import CliError
    from cfrkit.platform.storage import Store, StoreError

    if not os.path.exists(args.db):
        raise CliError(f"no database {args.db!r}")
    if os.path.isdir(args.db):
        raise CliError(f"{args.db!r} is a directory, not a database file")
    try:
        store = Store(args.db, readonly=True)  # results never write to (or create) the database
        try:
            return _print_results(args, store)
        finally:
            store.close()
    except (StoreError, sqlite3.Error) as exc:
        raise CliError(f"cannot read {args.db!r}: {exc}") from None


def _print_results(args, store) -> int:
    from cfrkit.cli import CliError
    from cfrkit.platform.results import agent_results, leaderboard_text, plot_cumulative

    if args.match:
        m = store.match(args.match)
        if m is None:
            raise CliError(f"no match {args.match!r} in {args.db}")
        print(leaderboard_text(agent_results(store, [args.match]),
                               f"match {args.match} ({m['status']}, {m['hands_done']}/{m['spec']['hands']} hands, "
                               f"{m['spec']['game']}, {'duplicate' if m['spec']['duplicate'] else 'rotation'})"))
        if args.png:
            print(f"wrote {plot_cumulative(store, args.match, args.png)}")
    else:
        if args.png:
            raise CliError("--png needs a MATCH")
        print(leaderboard_text(agent_results(store), f"leaderboard over {len(store.match_ids())} matches"))
    return 0


def run_create_match(args) -> int:
    import json
    import os

    from cfrkit.cli import CliError
    from cfrkit.platform.client import PlatformClientError, create_match

    players = []
    for item in args.players:
        name, sep, kind = item.rpartition("=")
        kind, at, port = kind.partition("@")
        entry = {"agent": kind}
        if sep:
            entry["name"] = name
        if at:
            if not port.isdigit():
                raise CliError(f"{item!r}: write a fixed ACPC port as acpc@PORT, e.g. acpc@40123")
            entry["port"] = int(port)
        players.append(entry if len(entry) > 1 else kind)
    settings = {"game": args.game, "hands": args.hands}
    for key in ("seed", "duplicate", "time_per_action", "time_bank"):
        if getattr(args, key) is not None:
            settings[key] = getattr(args, key)
    token = args.operator_token or os.environ.get("CFRKIT_OPERATOR_TOKEN") or None
    try:
        created = create_match(args.host, args.port, players, operator=token, **settings)
    except PlatformClientError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print(json.dumps(created))
        return 0
    print(f"match {created['match']}: {created['hands']} hands, seed {created['seed']} "
          f"(hand 0 starts once every seat is taken)")
    for j, name in enumerate(created["players"]):
        key = str(j)
        if key in created.get("acpc_ports", {}):
            port = created["acpc_ports"][key]
            print(f"  player {j} {name}: ACPC port {port}  (cfrkit acpc-client {args.host} {port} --agent ..., "
                  f"or any ACPC agent; shared door: TOKEN:{created['match']}:{created['tokens'][key]})")
        elif key in created.get("tokens", {}):
            print(f"  player {j} {name}: token {created['tokens'][key]}  (cfrkit platform-agent AGENT --port "
                  f"{args.port} --match {created['match']} --token {created['tokens'][key]})")
        else:
            print(f"  player {j} {name}: house agent")
    return 0


def run_agent(args) -> int:
    from cfrkit.cli import CliError
    from cfrkit.platform.client import AgentClient, PlatformClientError
    from cfrkit.poker.registry import make_agent

    agent = make_agent(args.agent, seed=args.seed, **({"policy_path": args.policy} if args.policy else {}))
    if args.match and args.token:
        client = AgentClient(agent, args.host, args.port, match=args.match, token=args.token)
    elif args.opponent:
        play = {"opponent": args.opponent.split(","), "hands": args.hands, "game": args.game, "name": agent.name}
        if args.seed is not None:
            play["seed"] = args.seed
        client = AgentClient(agent, args.host, args.port, play=play)
    else:
        raise CliError("give --opponent (start a match) or --match and --token (join a seat)")
    try:
        res = client.run()
    except PlatformClientError as exc:
        raise CliError(str(exc)) from None
    hands = len(res.hands)
    print(f"platform-agent {agent.name}: match {res.match}, {hands} hands, chips {res.chips:+g}, "
          f"errors {len(res.errors)}, reconnects {res.reconnects}")
    return 0
