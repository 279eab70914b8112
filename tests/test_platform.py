"""The match platform: schedule, JSON and ACPC doors, faults, privacy, storage, restart, results."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from platform_helpers import ROOT, LineClient, free_port, start_server  # noqa: E402

from cfrkit.games.holdem.deals import deal_for_hand
from cfrkit.games.holdem.history import replay_acpc_log, replay_phh
from cfrkit.games.registry import load
from cfrkit.platform import AgentClient, Client
from cfrkit.platform.server import Server
from cfrkit.platform.storage import Store
from cfrkit.poker import hand_plan, make_agent, player_of_seat


# ----------------------------------------------------------------------------- schedule
def test_hand_plan_duplicate_swaps_seats_and_keeps_deal():
    for n in (2, 3, 6):
        seen = {}
        for i in range(4 * n):
            deal, seat_of = hand_plan(n, i, True)
            assert sorted(seat_of) == list(range(n))
            assert player_of_seat(seat_of)[seat_of[0]] == 0
            seen.setdefault(deal, []).append(tuple(seat_of))
        for deal, rotations in seen.items():
            assert len(rotations) == n
            # every player takes every seat once per deal
            for j in range(n):
                assert sorted(r[j] for r in rotations) == list(range(n))
    deal, seat_of = hand_plan(2, 7, False)
    assert deal == 7 and seat_of == [1, 0]


# ----------------------------------------------------------------------------- in-process server
def _run(coro):
    return asyncio.run(coro)


async def _server(tmp_path, **kw):
    srv = Server(str(tmp_path / "p.db"), port=0, **kw)
    await srv.start()
    return srv


class Recorder(AgentClient):
    """An agent client that keeps every message it sees (privacy checks)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.states = []

    def act(self, state):
        self.states.append(state)
        return super().act(state)


def test_json_clients_play_house_agents_and_storage_agrees(tmp_path):
    async def main():
        srv = await _server(tmp_path)
        port = srv.bound["json"]
        clients = [Recorder(make_agent("random", seed=i), "127.0.0.1", port,
                            play={"opponent": opp, "hands": 40, "seed": 11 + i})
                   for i, opp in enumerate(["ar", "random", "always-call", "fixed-range-raiser"])]
        results = await asyncio.gather(*(c.run_async() for c in clients))
        await srv.close()
        return clients, results

    clients, results = _run(main())
    store = Store(str(tmp_path / "p.db"))
    game = load("holdem")
    for client, res in zip(clients, results):
        assert res.finished and not res.errors
        hands = store.hands(res.match)
        assert [h["hand"] for h in hands] == list(range(40))
        # the client saw every hand, with the stored result, and the totals add up
        assert sorted(res.hands) == list(range(40))
        for h in hands:
            assert res.hands[h["hand"]] == pytest.approx(h["returns"][0])
            assert sum(h["returns"]) == pytest.approx(0.0)
        assert store.totals(res.match)[0] == pytest.approx(res.chips)
        # every stored hand replays under the rules (ACPC log and PHH) to the stored chips
        log_text = "\n".join(h["acpc"] for h in hands)
        assert all(r.ok for r in replay_acpc_log(log_text, game))
        assert all(replay_phh(h["phh"]).ok for h in hands)
        # the deal of every hand is deal_for_hand(seed, deal index), cards staying with the seat
        seed = store.match(res.match)["spec"]["seed"]
        for h in hands[:10]:
            cards_field = h["acpc"].split(":")[3]
            holes = cards_field.split("/")[0].split("|")
            deal = deal_for_hand(game, seed, h["deal"])
            from cfrkit.cards import cards_to_string
            assert holes == [cards_to_string(deal[0:2]), cards_to_string(deal[2:4])]
        # privacy: before the end of a hand the opponent's hole cards are never in a state message
        for state in client.states:
            holes = state["matchstate"].split(":")[4].split("/")[0].split("|")
            assert holes[1 - state["seat"]] == ""
            assert holes[state["seat"]] == "".join(state["hole"])
    store.close()


def test_acpc_agent_joins_unchanged_on_its_seat_port(tmp_path):
    from cfrkit.agents.acpc_client import run_client

    async def main():
        srv = await _server(tmp_path, acpc_port=0)
        c = LineClientAsync(srv.bound["json"])
        await c.open()
        await c.send({"type": "create", "players": ["acpc", "rule-based"], "hands": 30, "seed": 5,
                      "time_per_action": 20.0, "time_bank": 5.0})
        created = await c.recv_type("created")
        port = created["acpc_ports"]["0"]
        loop = asyncio.get_running_loop()
        summary = await loop.run_in_executor(None, lambda: run_client("127.0.0.1", port, load("holdem"),
                                                                      make_agent("always-call"), timeout=20,
                                                                      report=lambda m: None))
        match = srv.store.match(created["match"])
        hands = srv.store.hands(created["match"])
        await srv.close()
        return summary, match, hands

    summary, match, hands = _run(main())
    assert match["status"] == "finished" and len(hands) == 30
    # the ACPC client saw (nearly) every hand -- it may join after hand 0 was folded by A^R -- and
    # its chips equal the stored results of the hands it saw
    assert summary.hands >= 29 and not summary.malformed
    seen = hands[30 - summary.hands:]
    assert summary.chips == pytest.approx(sum(h["returns"][0] for h in seen))
    assert not any(h["faults"] for h in hands)


class LineClientAsync:
    def __init__(self, port):
        self.port = port

    async def open(self):
        self.r, self.w = await asyncio.open_connection("127.0.0.1", self.port)
        hello = json.loads(await self.r.readline())
        assert hello["type"] == "hello"

    async def send(self, obj):
        self.w.write((json.dumps(obj) + "\n").encode())

    async def send_raw(self, data):
        self.w.write(data)

    async def recv(self, timeout=10):
        return json.loads(await asyncio.wait_for(self.r.readline(), timeout))

    async def recv_type(self, *types):
        while True:
            msg = await self.recv()
            if msg["type"] in types:
                return msg


def test_timeouts_and_bad_messages_fold_only_the_offender(tmp_path):
    async def main():
        srv = await _server(tmp_path)
        port = srv.bound["json"]
        # a healthy match runs beside the faulty one and must not notice anything
        healthy = AgentClient(make_agent("random", seed=3), "127.0.0.1", port,
                              play={"opponent": "ar", "hands": 30, "seed": 9})
        healthy_task = asyncio.get_running_loop().create_task(healthy.run_async())
        bad = LineClientAsync(port)
        await bad.open()
        await bad.send({"type": "play", "opponent": "always-call", "hands": 6, "seed": 2,
                        "time_per_action": 1.0, "time_bank": 0.1})
        created = await bad.recv_type("created")
        welcome = await bad.recv_type("welcome")
        codes = []
        # hand by hand: never answer (timeout), answer garbage, answer illegally
        while True:
            msg = await bad.recv(timeout=20)
            if msg["type"] == "match_end":
                break
            if msg["type"] == "error":
                codes.append(msg["code"])
            if msg["type"] == "state" and msg["to_act"]:
                if msg["hand"] % 3 == 1:
                    await bad.send_raw(b'{"type": "action", "action": \n')
                elif msg["hand"] % 3 == 2:
                    await bad.send({"type": "action", "action": "raise", "amount": 10 ** 9, "hand": msg["hand"]})
        hands = srv.store.hands(created["match"])
        res = await healthy_task
        await srv.close()
        return welcome, codes, hands, res

    welcome, codes, hands, res = _run(main())
    assert welcome["player"] == 0 and len(hands) == 6
    assert "timeout" in codes and "bad_json" in codes and "illegal_action" in codes
    faults = [f for h in hands for f in h["faults"]]
    assert any("timeout" in f for f in faults) and any("bad_json" in f for f in faults) \
        and any("illegal_action" in f for f in faults)
    for h in hands:  # the offender only ever folded or checked: it never lost more than the big blind
        assert h["returns"][0] >= -100.0 - 1e-9, h
    assert res.finished and len(res.hands) == 30 and not res.errors


def test_tokens_reconnect_and_replay(tmp_path):
    async def main():
        srv = await _server(tmp_path)
        port = srv.bound["json"]
        a = LineClientAsync(port)
        await a.open()
        await a.send({"type": "create", "players": ["remote", "remote"], "hands": 4, "seed": 1,
                      "time_per_action": 30.0, "time_bank": 0.0})
        created = await a.recv_type("created")
        tokens = created["tokens"]
        mid = created["match"]
        out = {}
        # a wrong token, a token of seat 1 used on another match id, a token of seat 0 used twice
        await a.send({"type": "join", "match": mid, "token": "x" * 24})
        out["bad"] = (await a.recv_type("error"))["code"]
        await a.send({"type": "join", "match": "nomatch", "token": tokens["0"]})
        out["unknown"] = (await a.recv_type("error"))["code"]
        await a.send({"type": "join", "match": mid, "token": tokens["0"]})
        w0 = await a.recv_type("welcome")
        b = LineClientAsync(port)
        await b.open()
        await b.send({"type": "join", "match": mid, "token": tokens["1"]})
        w1 = await b.recv_type("welcome")
        # seat 1 cannot act for seat 0: find whose turn it is and let the other one try
        s0 = await a.recv_type("state")
        actor_conn, other = (a, b) if s0["to_act"] else (b, a)
        await other.send({"type": "action", "action": "call"})
        out["out_of_turn"] = (await other.recv_type("error"))["code"]
        await actor_conn.send({"type": "action", "action": "call", "hand": 99})
        out["stale"] = (await actor_conn.recv_type("error"))["code"]
        # a second connection with seat 0's token takes the seat over; the old one is told
        a2 = LineClientAsync(port)
        await a2.open()
        await a2.send({"type": "join", "match": mid, "token": tokens["0"]})
        await a2.recv_type("welcome")
        out["replaced"] = (await a.recv_type("error"))["code"]
        await srv.close()
        return out, w0, w1

    out, w0, w1 = _run(main())
    assert out == {"bad": "bad_token", "unknown": "unknown_match", "out_of_turn": "not_your_turn",
                   "stale": "stale", "replaced": "replaced"}
    assert (w0["player"], w1["player"]) == (0, 1)


# ----------------------------------------------------------------------------- fuzz
FUZZ_JSON = [
    b'{"type": "action"',                       # truncated
    b'\xff\xfe\x00garbage',                     # not UTF-8
    b'[1, 2, 3]',                               # not an object
    b'42',
    b'{"type": 5}',                             # wrong type of type
    b'{"no_type": true}',
    b'{"type": "teleport"}',                    # unknown type
    b'{"type": "join"}',                        # missing fields
    b'{"type": "join", "match": 1, "token": []}',
    b'{"type": "action", "action": "call"}',    # not joined
    b'{"type": "create", "players": "ar"}',     # bad request
    b'{"type": "create", "players": ["ar", "ar"], "hands": -5}',
    b'{"type": "create", "players": ["ar", "ar"], "game": "kuhn"}',
    b'{"type": "create", "players": ["ar", "nobody"]}',
    b'{"type": "play", "opponent": 7}',
    b'{"type": "play", "opponent": "ar", "hands": "many"}',
    b'{"type": "create", "players": ["ar", "ar"], "time_per_action": true}',
    b'x' * 6000,                                # oversized
]


def test_fuzz_json_door_every_bad_message_gets_an_error(tmp_path):
    rng = np.random.default_rng(0)
    extra = [b"~" + bytes(rng.integers(32, 127, size=rng.integers(1, 60)).astype(np.uint8)) for _ in range(25)]

    async def main():
        srv = await _server(tmp_path)
        port = srv.bound["json"]
        bystander = AgentClient(make_agent("random", seed=1), "127.0.0.1", port,
                                play={"opponent": "ar", "hands": 20, "seed": 4})
        task = asyncio.get_running_loop().create_task(bystander.run_async())
        c = LineClientAsync(port)
        await c.open()
        codes = []
        for raw in FUZZ_JSON + extra:
            await c.send_raw(raw + b"\n")
            msg = await c.recv()
            assert msg["type"] == "error", (raw, msg)
            codes.append(msg["code"])
        # a joined player fuzzing its own actions, in and out of turn
        await c.send({"type": "play", "opponent": "always-call", "hands": 2, "seed": 3, "time_per_action": 5.0})
        await c.recv_type("welcome")
        bad_actions = [{"type": "action"}, {"type": "action", "action": 3}, {"type": "action", "action": "raise"},
                       {"type": "action", "action": "raise", "amount": "10"},
                       {"type": "action", "action": "raise", "amount": 1.5}, {"type": "action", "action": "dance"}]
        answered = 0
        for bad in bad_actions:
            await c.send(bad)
            msg = await c.recv_type("error")
            codes.append(msg["code"])
            answered += 1
        res = await task
        alive = LineClientAsync(port)
        await alive.open()
        await alive.send({"type": "ping"})
        pong = await alive.recv()
        await srv.close()
        return codes, answered, res, pong

    codes, answered, res, pong = _run(main())
    assert len(codes) == len(FUZZ_JSON) + 25 + 6 and answered == 6
    assert {"bad_json", "bad_message", "bad_request", "not_joined", "too_large"} <= set(codes)
    assert res.finished and len(res.hands) == 20 and pong["type"] == "pong"


def test_fuzz_acpc_door(tmp_path):
    async def main():
        srv = await _server(tmp_path, acpc_port=0)
        c = LineClientAsync(srv.bound["json"])
        await c.open()
        await c.send({"type": "create", "players": ["acpc", "always-call"], "hands": 3, "seed": 8,
                      "time_per_action": 5.0, "time_bank": 0.0})
        created = await c.recv_type("created")
        port = created["acpc_ports"]["0"]
        errors = []

        async def read_until(r, pred):
            while True:
                line = (await asyncio.wait_for(r.readline(), 10)).decode().strip()
                if pred(line):
                    return line

        # the shared ACPC door without a token, with a bad token
        r, w = await asyncio.open_connection("127.0.0.1", srv.bound["acpc"])
        for raw in (b"VERSION:2.0.0\r\n", b"TOKEN:nomatch:abc\r\n", b"TOKEN:a:b:c:d\r\n"):
            w.write(raw)
            errors.append(await read_until(r, lambda x: x.startswith("# ERROR")))
        w.close()
        # the seat's own port: garbage before VERSION, then bad lines while to act and out of turn
        r, w = await asyncio.open_connection("127.0.0.1", port)
        w.write(b"HELLO\r\n")
        errors.append(await read_until(r, lambda x: x.startswith("# ERROR")))
        w.write(b"VERSION:2.0.0\r\n")
        state = await read_until(r, lambda x: x.startswith("MATCHSTATE"))
        bad = [b"garbage\r\n", b"MATCHSTATE:0:0::|:c\r\n", b"x" * 9000 + b"\r\n"]
        for raw in bad:
            w.write(raw)
            errors.append(await read_until(r, lambda x: x.startswith("# ERROR")))
        await srv.close()
        return errors

    errors = _run(main())
    assert len(errors) == 7
    assert all(e.startswith("# ERROR ") for e in errors)
    assert "not_joined" in errors[0] and "unknown_match" in errors[1] and "bad_message" in errors[2]


# ----------------------------------------------------------------------------- restart after kill -9
def _run_clients_in_thread(port, specs, out):
    async def main():
        clients = [AgentClient(make_agent(agent, seed=i), "127.0.0.1", port, play=play, reconnect=60.0)
                   for i, (agent, play) in enumerate(specs)]
        out.extend(await asyncio.gather(*(c.run_async() for c in clients), return_exceptions=True))

    asyncio.run(main())


def _hands_stored(db):
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return con.execute("SELECT COUNT(*) FROM hands").fetchone()[0]
    except sqlite3.Error:
        return 0


def kill_restart_run(tmp_path, matches: int, hands: int, kills: int = 2):
    """Clients play ``matches`` matches of ``hands`` hands while the server is killed (SIGKILL) and
    restarted ``kills`` times; returns (client results, store)."""
    db = str(tmp_path / "k.db")
    port = free_port()
    proc = start_server(db, port)
    specs = [("random", {"opponent": opp, "hands": hands, "seed": 100 + i, "time_per_action": 10.0})
             for i, opp in enumerate(["rule-based", "always-call", "random", "fixed-range-raiser"] * matches)][:matches]
    out = []
    th = threading.Thread(target=_run_clients_in_thread, args=(port, specs, out), daemon=True)
    th.start()
    total = matches * hands
    try:
        for k in range(kills):
            target = total * (k + 1) // (kills + 1)
            deadline = time.monotonic() + 120
            while _hands_stored(db) < target and time.monotonic() < deadline:
                time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            proc = start_server(db, port)
        th.join(timeout=300)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    return out, Store(db)


def test_kill_9_twice_loses_and_duplicates_no_hand(tmp_path):
    matches, hands = 4, 60
    out, store = kill_restart_run(tmp_path, matches, hands, kills=2)
    game = load("holdem")
    assert len(out) == matches
    for res in out:
        assert not isinstance(res, BaseException), res
        assert res.finished
        m = store.match(res.match)
        assert m["status"] == "finished" and m["hands_done"] == hands
        stored = store.hands(res.match)
        # every hand exactly once, each dealt from its deal index (a voided hand replays its deal)
        assert [h["hand"] for h in stored] == list(range(hands))
        for h in stored:
            from cfrkit.cards import cards_to_string
            holes = h["acpc"].split(":")[3].split("/")[0].split("|")
            deal = deal_for_hand(game, m["spec"]["seed"], h["deal"])
            assert holes == [cards_to_string(deal[0:2]), cards_to_string(deal[2:4])]
        # every result a client was told is the stored one (a hand's result is sent after its commit)
        for hand, chips in res.hands.items():
            assert stored[hand]["returns"][0] == pytest.approx(chips)
        assert sum(h["returns"][0] for h in stored) == pytest.approx(store.totals(res.match)[0])
    assert sum(store.match(r.match)["restarts"] for r in out) >= matches  # every match was resumed


# ----------------------------------------------------------------------------- the 20-line example
@pytest.mark.slow
def test_example_client_plays_1000_hands_against_ar(tmp_path):
    path = ROOT / "examples" / "platform_client.py"
    assert len(path.read_text().strip().splitlines()) <= 22
    db = str(tmp_path / "e.db")
    port = free_port()
    proc = start_server(db, port)
    try:
        run = subprocess.run([sys.executable, str(path), "127.0.0.1", str(port)], capture_output=True, text=True,
                             timeout=240)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    assert run.returncode == 0, run.stderr
    assert "1000 hands" in run.stdout
    store = Store(db)
    (mid,) = store.match_ids()
    assert store.match(mid)["hands_done"] == 1000 and len(store.hands(mid)) == 1000
    chips = float(run.stdout.split("chips won")[1])
    assert chips == pytest.approx(store.totals(mid)[0])


# ----------------------------------------------------------------------------- multiway + results
def test_multiway_match_with_rotation_and_results_cli(tmp_path, capsys):
    async def main():
        srv = await _server(tmp_path)
        port = srv.bound["json"]
        game = "holdem(definition=holdem.nolimit.3p)"
        c = AgentClient(make_agent("rule-based"), "127.0.0.1", port,
                        play={"opponent": ["random", "always-call"], "hands": 12, "seed": 2, "game": game, "name": "rule-based",
                              "duplicate": True})
        res = await c.run_async()
        await srv.close()
        return res

    res = _run(main())
    store = Store(str(tmp_path / "p.db"))
    hands = store.hands(res.match)
    assert len(hands) == 12 and res.finished
    for h in hands:
        assert sum(h["returns"]) == pytest.approx(0.0)
    assert [h["seats"] for h in hands[:3]] == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    assert {h["deal"] for h in hands[:3]} == {0}
    from cfrkit.platform.results import agent_results

    results = agent_results(store, [res.match])
    assert {r.name for r in results} == {"rule-based", "random", "always-call"}
    assert sum(r.chips for r in results) == pytest.approx(0.0, abs=1e-6)
    png = tmp_path / "cum.png"
    from cfrkit.cli import main as cli_main

    assert cli_main(["results", res.match, "--db", str(tmp_path / "p.db"), "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "rule-based" in out and "mbb/h" in out
    assert cli_main(["results", "--db", str(tmp_path / "p.db")]) == 0
    assert "leaderboard over 1 matches" in capsys.readouterr().out
    from PIL import Image
    img = np.asarray(Image.open(png).convert("RGB"))
    assert img.shape[0] > 100 and len(np.unique(img.reshape(-1, 3), axis=0)) > 10
    assert cli_main(["results", "nomatch", "--db", str(tmp_path / "p.db")]) == 2
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err


def test_websocket_door_errors_and_oversized_frames(tmp_path):
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async def main():
        srv = await _server(tmp_path, http_port=0)
        url = f"ws://127.0.0.1:{srv.bound['http']}/ws"
        codes = []
        async with connect(url) as ws:
            assert json.loads(await ws.recv())["type"] == "hello"
            for raw in ('{"type": ', '[]', '{"type": "action", "action": "call"}', '{"type": "join", "match": "x", "token": "y"}'):
                await ws.send(raw)
                codes.append(json.loads(await ws.recv())["code"])
            await ws.send('{"type": "play", "opponent": "always-call", "hands": 2, "seed": 1}')
            kinds = [json.loads(await ws.recv())["type"] for _ in range(3)]
        closed = None
        async with connect(url) as ws:
            await ws.recv()
            await ws.send("x" * 10000)  # over the frame limit: this connection closes, nothing else
            try:
                await ws.recv()
            except ConnectionClosed as exc:
                closed = exc.rcvd.code if exc.rcvd else None
        async with connect(url) as ws:
            await ws.recv()
            await ws.send('{"type": "ping"}')
            pong = json.loads(await ws.recv())["type"]
        import urllib.request
        loop = asyncio.get_running_loop()
        page = await loop.run_in_executor(None, lambda: urllib.request.urlopen(
            f"http://127.0.0.1:{srv.bound['http']}/", timeout=10).read().decode())
        await srv.close()
        return codes, kinds, closed, pong, page

    codes, kinds, closed, pong, page = _run(main())
    assert codes == ["bad_json", "bad_message", "not_joined", "unknown_match"]
    assert kinds[:2] == ["created", "welcome"]
    assert closed == 1009 and pong == "pong"
    assert "<title>cfrkit poker platform</title>" in page


def test_platform_agent_cli_plays_a_builtin_agent_as_client(tmp_path, capsys):
    from cfrkit.cli import main as cli_main

    port = free_port()
    proc = start_server(str(tmp_path / "c.db"), port)
    try:
        assert cli_main(["platform-agent", "ar", "--port", str(port), "--opponent", "random", "--hands", "8",
                         "--seed", "3"]) == 0
        assert "8 hands" in capsys.readouterr().out
        assert cli_main(["platform-agent", "ar", "--port", str(port)]) == 2
        assert "error" in capsys.readouterr().err
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    store = Store(str(tmp_path / "c.db"))
    (mid,) = store.match_ids()
    assert [p["name"] for p in store.players(mid)] == ["rule-based", "random"]


def test_connection_limit_refuses_politely(tmp_path):
    async def main():
        srv = await _server(tmp_path, max_connections=1)
        first = LineClientAsync(srv.bound["json"])
        await first.open()
        r, w = await asyncio.open_connection("127.0.0.1", srv.bound["json"])
        refused = json.loads(await asyncio.wait_for(r.readline(), 10))
        await first.send({"type": "ping"})
        pong = await first.recv()
        await srv.close()
        return refused, pong

    refused, pong = _run(main())
    assert refused["type"] == "error" and refused["code"] == "server_busy" and refused["fatal"]
    assert pong["type"] == "pong"


def test_rate_limit_slows_a_flood_down_and_drops_nothing(tmp_path):
    async def main():
        srv = await _server(tmp_path, rate_per_second=50.0, rate_burst=10.0)
        c = LineClientAsync(srv.bound["json"])
        await c.open()
        t0 = time.monotonic()
        await c.send_raw(b'{"type": "ping"}\n' * 60)
        got = [(await c.recv_type("pong", "error")) for _ in range(60)]
        seconds = time.monotonic() - t0
        await c.send({"type": "ping"})
        after = await c.recv()
        await srv.close()
        return got, seconds, after

    got, seconds, after = _run(main())
    assert [m["type"] for m in got] == ["pong"] * 60  # every message answered, none dropped
    assert seconds >= (60 - 10) / 50.0 * 0.9  # the burst at once, the rest at the rate
    assert after["type"] == "pong"
