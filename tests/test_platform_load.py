"""The server's fast paths equal the reference: hand-end views, ACPC lines, PHH derived on read,
group commit, cheap deals, and the multi-process server (``--workers``)."""
from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from cfrkit.games.holdem.deals import deal_for_hand
from cfrkit.games.holdem.history import acpc_log_line, phh_compatible, to_phh
from cfrkit.games.registry import load
from cfrkit.platform import protocol as P
from cfrkit.platform.client import Client
from cfrkit.platform.storage import Store
from cfrkit.poker import make_agent, play_hand

sys.path.insert(0, os.path.dirname(__file__))
from platform_helpers import ROOT, LineClient, free_port  # noqa: E402

GAMES = ["holdem", "holdem(definition=holdem.nolimit.3p,stacks=400;300;500)",
         "holdem(definition=holdem.limit.2p.reverse_blinds)"]


def _hands(game_string, count, seed=0):
    game = load(game_string)
    n = game.num_players
    rng = random.Random(seed)
    for i in range(count):
        agents = [make_agent(rng.choice(["random", "always-call", "rule-based", "fixed-range-raiser"]),
                             seed=rng.randrange(10 ** 6)) for _ in range(n)]
        yield game, i, play_hand(game, agents, deal_for_hand(game, seed, i))


@pytest.mark.parametrize("game_string", GAMES)
def test_hand_end_views_and_acpc_line_equal_the_reference(game_string):
    for game, i, state in _hands(game_string, 40):
        n = game.num_players
        names = [f"p{j}" for j in range(n)]
        returns = state.returns()
        assert P.acpc_log_line(state, i, names, returns) == acpc_log_line(state, i, names)
        player_returns = returns[::-1]
        totals = [float(j) for j in range(n)]
        views = P.HandEndViews(state, match_id="m", hand=i, names_by_seat=names, returns=returns,
                               player_returns=player_returns, totals=totals)
        for seat in range(n):
            ref = P.hand_end_view(state, seat, match_id="m", hand=i, player=n - 1 - seat, names_by_seat=names,
                                  player_returns=player_returns, totals=totals)
            assert views.view(seat, n - 1 - seat) == ref


@pytest.mark.parametrize("game_string", GAMES[:2])
def test_group_commit_stores_hands_and_derives_the_same_phh(tmp_path, game_string):
    store = Store(str(tmp_path / "s.db"))
    game = load(game_string)
    n = game.num_players
    names = [f"p{j}" for j in range(n)]
    store.create_match("m1", {"game": game.game_string()}, [{"name": x, "kind": "house"} for x in names])
    states = [s for _, _, s in _hands(game_string, 30, seed=3)]
    records = [("m1", i, i, list(range(n)), acpc_log_line(s, i, names), s.returns(), []) for i, s in enumerate(states)]
    store.record_hands(records[:10])
    store.record_hands(records[10:11])
    store.record_hands(records[11:])
    with pytest.raises(Exception):  # hand 5 again: the batch is refused whole
        store.record_hands([("m1", 30, 30, [0] * n, "x", [0.0] * n, []), records[5]])
    stored = store.hands("m1")
    assert [h["hand"] for h in stored] == list(range(30))
    assert phh_compatible(game.definition) is None
    for h, s in zip(stored, states):
        assert h["phh"] == to_phh(s, names, h["hand"])
    assert store.match("m1")["hands_done"] == 30
    assert store.totals("m1") == pytest.approx([sum(s.returns()[j] for s in states) for j in range(n)])


def test_rule_based_act_on_one_row_equals_the_full_table():
    """A^R's postflop ``act`` computes the features of its own pair only; the action must be the
    full table's (hand_strategy) on flops, turns and rivers, checked and facing bets."""
    from cfrkit.agents.rule_based import BoardFeatures, RuleBasedAgent, _FEATURES
    from cfrkit.cards.hands import pair_index

    game = load("holdem")
    rng = random.Random(5)
    checked = 0
    for i in range(12):
        cards = deal_for_hand(game, 99, i)
        state = game.new_initial_state()
        others = [make_agent("random", seed=i), make_agent("always-call")]
        k = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(cards[k])
                k += 1
                continue
            if state.round > 0:
                _FEATURES.clear()
                fast = RuleBasedAgent().act(state)
                table = RuleBasedAgent().hand_strategy(state)
                hole = state.hole[state.current_player()]
                row = table.probs[pair_index(hole[0], hole[1])]
                assert fast == int(table.actions[int(np.argmax(row))])
                board = tuple(sorted(state.board))
                full = BoardFeatures(board)
                rows = np.array(rng.sample(range(1326), 40))
                part = BoardFeatures(board, rows)
                for name in ("hs", "ehs", "outs", "blocked"):
                    assert np.array_equal(getattr(part, name), getattr(full, name)[rows])
                checked += 1
            state.apply_action(others[rng.randrange(2)].act(state))
    assert checked > 6


# ----------------------------------------------------------------------------- several workers
def _children(pid: int):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


class Dropper(Client):
    """Calls; drops its connection every ``every`` hands and rejoins with its token."""

    def __init__(self, *a, every=4, **kw):
        super().__init__(*a, **kw)
        self.every = every

    def act(self, state):
        return "call"

    def on_hand_end(self, msg):
        if len(self.result.hands) % self.every == 0:
            raise ConnectionError("drop on purpose")


def _start_workers(db, port, acpc_port, workers=2):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "cfrkit", "serve", "--db", str(db), "--port", str(port),
                             "--http-port", "-1", "--acpc-port", str(acpc_port), "--workers", str(workers)],
                            cwd=str(ROOT), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        line = proc.stdout.readline().decode()
        if line.startswith("cfrkit serve:"):
            return proc
        if proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError("server with workers did not start")


def _worker_stats(port, workers):
    seen = {}
    for _ in range(200):
        c = LineClient(port)
        c.send({"type": "stats"})
        msg = c.recv()
        c.sock.close()
        seen[msg["worker"]] = msg
        if len(seen) == workers:
            return seen
    raise AssertionError(f"only workers {sorted(seen)} answered")


def test_workers_hand_over_rejoins_and_survive_kill_9(tmp_path):
    """Two worker processes: clients that drop and rejoin land on either worker and are handed to
    their match's worker (JSON and the shared ACPC door); kill -9 of the supervisor takes the
    workers down; after a restart every match finishes with each hand stored once."""
    db = tmp_path / "w.db"
    port, acpc_port = free_port(), free_port()
    proc = _start_workers(db, port, acpc_port)
    try:
        workers = _children(proc.pid)
        assert len(workers) == 2

        # the shared ACPC door: a seat's TOKEN line is handed to the match's worker from either one
        c = LineClient(port)
        c.send({"type": "create", "players": ["acpc", "always-call"], "hands": 2, "seed": 3,
                "time_per_action": 60.0, "time_bank": 0.0})
        created = c.recv()
        assert created["type"] == "created"
        mid = created["match"]
        # the acpc seat's token is in the store (the create reply lists remote tokens only)
        store = Store(str(db))
        token = store.players(mid)[0]["token"]
        for _ in range(6):  # new connections: some land on the other worker
            with socket.create_connection(("127.0.0.1", acpc_port), timeout=20) as s:
                s.sendall(f"TOKEN:{mid}:{token}\r\nVERSION:2.0.0\r\n".encode())
                line = s.makefile("rb").readline().decode()
                assert line.startswith("MATCHSTATE:0:0:"), line

        async def play(n_clients, hands):
            clients = [Dropper("127.0.0.1", port, play={"opponent": ["always-call", "random", "ar"][i % 3],
                                                        "hands": hands, "seed": 40 + i, "time_per_action": 60.0},
                               every=3, reconnect=90.0) for i in range(n_clients)]
            return await asyncio.gather(*(cl.run_async() for cl in clients))

        results = []

        def run():
            results.extend(asyncio.run(play(6, 24)))

        th = threading.Thread(target=run, daemon=True)
        th.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with sqlite3.connect(str(db), timeout=10) as con:
                if con.execute("SELECT COUNT(*) FROM hands").fetchone()[0] >= 40:
                    break
            time.sleep(0.1)
        stats = _worker_stats(port, 2)
        assert sum(m["handoffs"] for m in stats.values()) > 0
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while any(os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split()[2] != "Z"
                  for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split()[2] != "Z"
                       for pid in workers), "workers outlived the supervisor"
        proc = _start_workers(db, port, acpc_port)
        th.join(180)
        assert not th.is_alive()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    store = Store(str(db))
    assert len(results) == 6
    for res in results:
        assert res.finished and res.reconnects >= 6
        hands = store.hands(res.match)
        assert [h["hand"] for h in hands] == list(range(24))
        assert all(abs(res.hands[h["hand"]] - h["returns"][0]) < 1e-9 for h in hands if h["hand"] in res.hands)
