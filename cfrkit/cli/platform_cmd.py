"""``cfrkit serve``, ``cfrkit results [MATCH]``, ``cfrkit platform-agent AGENT``: the match platform."""
from __future__ import annotations


def add_parser(sub) -> None:
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
    p.add_argument("--max-matches", type=int, default=5000, help="matches running at once (default 5000)")
    p.add_argument("--workers", type=int, default=1,
                   help="server processes sharing the ports and the database, one core each (default 1)")
    p.set_defaults(func=run_serve)

    r = sub.add_parser("results", help="per-agent mbb/h with 95%% intervals, leaderboard, PNG of winnings",
                       description="Results of matches stored by `cfrkit serve`: per-agent mbb/h with 95%% "
                                   "intervals (duplicate deals paired) for one match or a leaderboard over all.")
    r.add_argument("match", nargs="?", default=None, help="match id (default: leaderboard over all matches)")
    r.add_argument("--db", default="platform.db", help="SQLite database file (default platform.db)")
    r.add_argument("--png", default=None, help="write the cumulative winnings of MATCH to this PNG")
    r.set_defaults(func=run_results)

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

    from cfrkit.cli import CliError
    from cfrkit.platform.server import Server

    policies = {}
    for item in args.policy:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise CliError(f"--policy takes NAME=PATH, got {item!r}")
        policies[name] = path
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if args.workers < 1:
        raise CliError(f"--workers must be at least 1, got {args.workers}")
    if args.workers > 1:
        from cfrkit.games.base import GameError
        from cfrkit.platform.workers import serve_workers

        try:
            return serve_workers(args.workers, args.db, args.host, args.port,
                                 None if args.acpc_port < 0 else args.acpc_port,
                                 None if args.http_port < 0 else args.http_port,
                                 on_ready=lambda bound: print(f"cfrkit serve: {bound} (db {args.db})", flush=True),
                                 max_matches=args.max_matches, policies=policies)
        except GameError as exc:
            raise CliError(str(exc)) from None

    async def main():
        server = Server(args.db, args.host, args.port, None if args.acpc_port < 0 else args.acpc_port,
                        None if args.http_port < 0 else args.http_port, max_matches=args.max_matches,
                        policies=policies)
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

    from cfrkit.cli import CliError
    from cfrkit.platform.results import agent_results, leaderboard_text, plot_cumulative
    from cfrkit.platform.storage import Store

    if not os.path.exists(args.db):
        raise CliError(f"no database {args.db!r}")
    store = Store(args.db)
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
