"""Load on loopback: many concurrent heads-up matches on one platform server, and kill -9 restarts.

Phase 1 (load): the server runs in its own process (``python -m cfrkit serve``); this process runs
``--matches`` concurrent clients over the JSON door, each starting a heads-up match against a
house agent (always-call, random, fixed-range-raiser, rule-based in turn).  The clients are
built-in agents (``--clients agent``: cfrkit agents that rebuild the state from the ACPC string)
or light JSON callers (``--clients json``, the default: they answer from the JSON state, so the
client process costs little and the server is what is measured).  After ``--warmup`` seconds the
server's own counters are read twice ``--seconds`` apart: hands/s, server time per action (from
the action's arrival to the next state sent, p50 / p99), and the server's memory (RSS).

Phase 2 (restarts): ``--restart-matches`` matches of ``--restart-hands`` hands while the server
is killed with SIGKILL and restarted twice; then every match must hold exactly its hands, each
once, each from its seeded deal, and every result a client was told must be the stored one.

Fixed work (``--fixed-hands N``, instead of phase 1): every match plays N hands; the deals, house
agents and clients are seeded, so every run does the same work and the server's CPU for it compares
servers (``--server-root`` runs another checkout's server) measured under different loads.
``--workers N`` runs ``cfrkit serve --workers N`` (counters summed over the workers).

    PYTHONPATH=. python benchmarks/platform_load.py --matches 200 --seconds 30 [--workers 2]
    PYTHONPATH=. python benchmarks/platform_load.py --matches 200 --fixed-hands 30 --skip-restart
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cfrkit.platform.client import AgentClient, Client  # noqa: E402
from cfrkit.poker.registry import make_agent  # noqa: E402

HOUSE = ["always-call", "random", "fixed-range-raiser", "rule-based"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


WORKERS = 1


SERVER_ROOT = ROOT
#: ``--profile FILE``: the server runs under cProfile (CPU clock) and is stopped with SIGINT, which
#: writes FILE (pstats); only with one worker
PROFILE = None


def start_server(db: str, port: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(SERVER_ROOT))
    prof = ["-c", "import cProfile, sys, time; from cfrkit.cli import main; sys.argv = ['cfrkit'] + sys.argv[1:]; "
                  f"p = cProfile.Profile(time.process_time)\ntry:\n    p.runcall(main)\nfinally:\n    p.dump_stats({PROFILE!r})"] \
        if PROFILE else ["-m", "cfrkit"]
    cmd = [sys.executable] + prof + ["serve", "--db", db, "--port", str(port), "--acpc-port", "-1",
           "--http-port", "-1", "--max-matches", "100000"]
    if WORKERS != 1:
        cmd += ["--workers", str(WORKERS)]
    proc = subprocess.Popen(cmd, cwd=str(SERVER_ROOT), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                if s.makefile().readline().startswith('{"type":"hello"'):
                    return proc
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


class JsonCaller(Client):
    """A light client: calls, or (with ``mix``) raises the minimum / folds at random."""

    def __init__(self, *a, seed=0, **kw):
        super().__init__(*a, **kw)
        self.rng = random.Random(seed)

    def act(self, state):
        legal = state["legal"]
        u = self.rng.random()
        if legal["raise"] and u < 0.15:
            return ("raise", legal["raise"][0])
        if legal["fold"] and u > 0.9:
            return "fold"
        return "call"


async def _stats_once(port: int) -> dict:
    r, w = await asyncio.open_connection("127.0.0.1", port)
    await r.readline()
    w.write(b'{"type":"stats"}\n')
    msg = json.loads(await r.readline())
    w.close()
    return msg


async def stats(port: int) -> dict:
    """The server's counters; with several workers, every worker's (new connections until each
    has answered: the kernel spreads connections by address), summed; time quantiles: the worst
    worker's."""
    seen = {}
    for _ in range(200):
        msg = await _stats_once(port)
        seen[msg.get("worker", 0)] = msg
        if len(seen) >= msg.get("workers", 1):
            break
    out = dict(next(iter(seen.values())))
    for key in ("hands", "actions", "errors", "cpu_seconds", "rss_mb", "matches_running", "connections", "commits"):
        out[key] = round(sum(m.get(key, 0) for m in seen.values()), 3)
    for key in ("action_ms_p50", "action_ms_p99", "service_ms_p50", "service_ms_p99"):
        vals = [m[key] for m in seen.values() if m.get(key) is not None]
        out[key] = max(vals) if vals else None
    out["workers_seen"] = len(seen)
    return out


def make_clients(kind: str, port: int, n: int, hands: int, seed0: int):
    out = []
    for i in range(n):
        play = {"opponent": HOUSE[i % len(HOUSE)], "hands": hands, "seed": seed0 + i, "time_per_action": 30.0,
                "time_bank": 120.0, "name": "client"}
        if kind == "agent":
            out.append(AgentClient(make_agent(["always-call", "random"][i % 2], seed=i), "127.0.0.1", port,
                                   play=play, reconnect=120.0))
        else:
            out.append(JsonCaller("127.0.0.1", port, play=play, seed=i, reconnect=120.0))
    return out


def load_phase(args) -> None:
    tmp = tempfile.mkdtemp(prefix="cfrkit-load-")
    port = free_port()
    proc = start_server(os.path.join(tmp, "load.db"), port)

    async def main():
        clients = make_clients(args.clients, port, args.matches, 10 ** 6, 1000)
        tasks = [asyncio.get_running_loop().create_task(c.run_async()) for c in clients]
        await asyncio.sleep(args.warmup)
        s0, t0, c0 = await stats(port), time.monotonic(), time.process_time()
        await asyncio.sleep(args.seconds)
        s1, t1, c1 = await stats(port), time.monotonic(), time.process_time()
        client_cpu.append(c1 - c0)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return s0, s1, t1 - t0

    client_cpu = []
    try:
        s0, s1, dt = asyncio.run(main())
    finally:
        stop_server(proc)
    hands = s1["hands"] - s0["hands"]
    actions = s1["actions"] - s0["actions"]
    print(f"load: {args.matches} concurrent heads-up matches ({args.clients} clients vs house agents "
          f"{', '.join(HOUSE)}), server with {WORKERS} worker process(es), {dt:.1f} s measured after "
          f"{args.warmup:g} s warm-up")
    print(f"  hands/s total       {hands / dt:9.1f}   ({hands} hands, {actions / dt:.0f} actions/s)")
    print(f"  server time/action  p50 {s1['action_ms_p50']} ms, p99 {s1['action_ms_p99']} ms "
          f"(arrival of a client's action -> next state sent, queueing in the event loop included)")
    print(f"  match work/action   p50 {s1['service_ms_p50']} ms, p99 {s1['service_ms_p99']} ms "
          f"(the same span without the queueing: engine, house agents, storage, sends)")
    cpu = s1["cpu_seconds"] - s0["cpu_seconds"]
    print(f"  server CPU          {cpu:.1f} s for {hands} hands = {1e3 * cpu / max(hands, 1):.2f} ms/hand "
          f"-> {hands / max(cpu, 1e-9):.0f} hands per CPU-second (what one free core would serve)")
    print(f"  client process CPU  {1e3 * client_cpu[0] / max(hands, 1):.2f} ms/hand (the {args.matches} light clients, "
          f"one process: the other load on the machine's cores)")
    print(f"  group commits       {(s1.get('commits', 0) - s0.get('commits', 0)) / max(dt, 1e-9):.0f} transactions/s "
          f"({hands / max(s1.get('commits', 0) - s0.get('commits', 0), 1):.1f} hands each)")
    print(f"  server memory       {s1['rss_mb']} MB RSS with {s1['matches_running']} matches, "
          f"{s1['connections']} connections; errors {s1['errors']}")


def stop_server(proc: subprocess.Popen) -> None:
    """SIGKILL the server (SIGINT and a wait when it is being profiled, so the profile is written)."""
    if PROFILE:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
            return
        except subprocess.TimeoutExpired:
            pass
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def fixed_phase(args) -> None:
    """Every match plays ``--fixed-hands`` hands: the same work in every run (seeded deals, agents
    and clients), so the server's CPU for it compares servers measured at different loads."""
    tmp = tempfile.mkdtemp(prefix="cfrkit-fixed-")
    port = free_port()
    proc = start_server(os.path.join(tmp, "fixed.db"), port)

    async def main():
        s0, t0, c0 = await stats(port), time.monotonic(), time.process_time()
        clients = make_clients(args.clients, port, args.matches, args.fixed_hands, 1000)
        results = await asyncio.gather(*(c.run_async() for c in clients), return_exceptions=True)
        s1, t1, c1 = await stats(port), time.monotonic(), time.process_time()
        return s0, s1, t1 - t0, c1 - c0, results

    try:
        s0, s1, dt, client_cpu, results = asyncio.run(main())
    finally:
        stop_server(proc)
    hands = s1["hands"] - s0["hands"]
    cpu = s1["cpu_seconds"] - s0["cpu_seconds"]
    failed = sum(1 for r in results if isinstance(r, BaseException))
    print(f"fixed work: {args.matches} heads-up matches x {args.fixed_hands} hands ({hands} hands, "
          f"{failed} failed clients), server {SERVER_ROOT} with {WORKERS} worker(s), {dt:.1f} s wall")
    print(f"  server CPU          {cpu:.2f} s = {1e3 * cpu / max(hands, 1):.3f} ms/hand -> "
          f"{hands / max(cpu, 1e-9):.0f} hands per CPU-second (matches created and played, all of it)")
    print(f"  client process CPU  {1e3 * client_cpu / max(hands, 1):.3f} ms/hand; hands/s wall {hands / dt:.1f}")


def _stored(db: str) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return con.execute("SELECT COUNT(*) FROM hands").fetchone()[0]
    except sqlite3.Error:
        return 0


def restart_phase(args) -> bool:
    from cfrkit.cards import cards_to_string
    from cfrkit.games.holdem.deals import deal_for_hand
    from cfrkit.games.registry import load
    from cfrkit.platform.storage import Store

    tmp = tempfile.mkdtemp(prefix="cfrkit-restart-")
    db = os.path.join(tmp, "restart.db")
    port = free_port()
    proc = start_server(db, port)
    results = []

    def run_clients():
        async def main():
            clients = make_clients(args.clients, port, args.restart_matches, args.restart_hands, 5000)
            results.extend(await asyncio.gather(*(c.run_async() for c in clients), return_exceptions=True))
        asyncio.run(main())

    th = threading.Thread(target=run_clients, daemon=True)
    th.start()
    total = args.restart_matches * args.restart_hands
    t0 = time.monotonic()
    for k in range(2):
        target = total * (k + 1) // 3
        while _stored(db) < target:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        print(f"restart: killed the server (SIGKILL) at {_stored(db)} stored hands; restarting", flush=True)
        proc = start_server(db, port)
    th.join()
    wall = time.monotonic() - t0
    proc.send_signal(signal.SIGTERM)
    proc.wait()
    store = Store(db)
    game = load("holdem")
    lost = dup = mismatched = told_wrong = errors = 0
    for res in results:
        if isinstance(res, BaseException):
            errors += 1
            continue
        m = store.match(res.match)
        hands = store.hands(res.match)
        idx = [h["hand"] for h in hands]
        lost += len(set(range(args.restart_hands)) - set(idx))
        dup += len(idx) - len(set(idx))
        for h in hands:
            holes = h["acpc"].split(":")[3].split("/")[0].split("|")
            deal = deal_for_hand(game, m["spec"]["seed"], h["deal"])
            mismatched += holes != [cards_to_string(deal[0:2]), cards_to_string(deal[2:4])]
        by_hand = {h["hand"]: h["returns"][0] for h in hands}
        told_wrong += sum(1 for hnd, chips in res.hands.items() if abs(by_hand.get(hnd, 1e18) - chips) > 1e-6)
    ok = not (lost or dup or mismatched or told_wrong or errors)
    print(f"restart: {args.restart_matches} matches x {args.restart_hands} hands, server killed twice, {wall:.1f} s: "
          f"lost {lost}, duplicated {dup}, deal mismatches {mismatched}, results told != stored {told_wrong}, "
          f"client errors {errors} -> {'OK' if ok else 'FAILED'}")
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--warmup", type=float, default=10.0)
    ap.add_argument("--clients", choices=("json", "agent"), default="json")
    ap.add_argument("--restart-matches", type=int, default=40)
    ap.add_argument("--restart-hands", type=int, default=100)
    ap.add_argument("--workers", type=int, default=1, help="server processes (cfrkit serve --workers)")
    ap.add_argument("--fixed-hands", type=int, default=0,
                    help="instead of the timed load: every match plays this many hands, server CPU for the lot")
    ap.add_argument("--server-root", default=str(ROOT), help="checkout whose server to run (compare versions)")
    ap.add_argument("--profile", default=None, help="run the server under cProfile (CPU clock), write this pstats file")
    ap.add_argument("--skip-load", action="store_true")
    ap.add_argument("--skip-restart", action="store_true")
    args = ap.parse_args()
    global WORKERS, SERVER_ROOT, PROFILE
    WORKERS = args.workers
    PROFILE = os.path.abspath(args.profile) if args.profile else None
    SERVER_ROOT = Path(args.server_root).resolve()
    print(f"uptime: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (load average, 2 cores)")
    if args.fixed_hands > 0:
        fixed_phase(args)
    elif not args.skip_load:
        load_phase(args)
    if not args.skip_restart:
        ok = restart_phase(args)
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
