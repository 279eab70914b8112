"""The match server: one asyncio loop, three doors onto one match engine, SQLite storage.

Doors (see ``docs/platform.md`` for the message schemas):

* JSON lines over TCP (``port``): ``create`` / ``play`` / ``join`` / ``action`` / ``stats`` messages;
* ACPC protocol v2.0.0: every player of kind ``acpc`` gets a TCP port of its own (the ACPC
  dealer's way: the port is the seat's credential) where an unchanged ACPC agent connects; the
  shared ACPC door (``acpc_port``) takes ``TOKEN:<match>:<token>`` before ``VERSION:2.0.0``;
* HTTP + WebSocket (``http_port``): ``GET /`` serves the browser page, ``/ws`` speaks the JSON
  messages, ``GET /api/matches`` lists matches.

Every match runs as its own task (:class:`Match`) to its last hand, with house agents (the
built-in agents, called in the loop or, for slow ones, in a thread) and remote players.  Faults
cost only the offender: a remote player that times out, is disconnected when it must act, or
sends a malformed or illegal message while it is to act plays the default action (fold, or check
when checking is free); messages out of turn get an error and change nothing.  Each finished hand
is committed to SQLite before anybody is told the result.
"""
from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import resource
import secrets
import socket
import time
from collections import deque
from pathlib import Path
from typing import Any, Deque, Dict, List, Optional, Sequence

from cfrkit.games.base import GameError
from cfrkit.games.holdem.deals import deal_for_hand
from cfrkit.games.holdem.definition import list_definitions
from cfrkit.games.holdem.game import DEFAULT_DEFINITION, HoldemGame
from cfrkit.games.holdem.matchstate import MatchStateError, format_matchstate, parse_response
from cfrkit.games.registry import parse_game_string
from cfrkit.platform import protocol as P
from cfrkit.platform.jsonlines import dumps as _dumps
from cfrkit.platform.schedule import hand_plan, player_of_seat, round_up_hands
from cfrkit.platform.storage import Store
from cfrkit.poker.match import HandDriver

log = logging.getLogger("cfrkit.platform")

#: built-in agents a match can seat (``make_agent`` names); fast ones run in the event loop
FAST_AGENTS = ("random", "always-call", "fixed-range-raiser", "rule-based")
HOUSE_AGENT_NAMES = ("random", "always-call", "fixed-range-raiser", "rule-based", "ar", "call", "raiser")
MAX_HANDS = 10_000_000
#: file descriptors kept for the process itself (database and journal, doors, event loop, stdio,
#: threads, the workers' hand-over sockets); the rest is the budget of connections and ACPC seats
FD_RESERVE = 48
#: how often (seconds) idle connections and idle matches are looked for
HOUSEKEEPING_PERIOD = 5.0
#: ``--max-matches`` default, lowered to half the descriptor budget on machines with a low ulimit
DEFAULT_MAX_MATCHES = 5000
STATIC_DIR = Path(__file__).resolve().parent / "static"


#: parameters of ``holdem(...)`` a client may set; the definition is one of the server's own, by name
CLIENT_GAME_PARAMS = ("definition", "stacks", "blinds", "antes", "fractional_split", "ante_trimming")
#: largest stack, blind or ante (chips) a client's game may ask for (ACPC's dealer uses 32-bit chips)
MAX_CLIENT_CHIPS = 2 ** 31 - 1
MAX_GAME_STRING = 300


def client_game(game_string: str) -> HoldemGame:
    """The hold'em game of a client's ``create``, built from the server's own definitions only.

    A client names a shipped ACPC definition (``data/acpc/<name>.game``, :func:`list_definitions`)
    by name; a file path or any other name is refused before anything is read, so no file of the
    server machine is ever opened for a client and no error quotes one.  ``stacks`` / ``blinds``
    / ``antes`` (chips, one per seat, ``;``-separated) are bounded integers.  Raises
    :class:`~cfrkit.platform.protocol.ProtocolError` (``bad_request``) with a one-line message."""
    def bad(msg: str):
        raise P.ProtocolError("bad_request", msg)

    if len(game_string) > MAX_GAME_STRING:
        bad(f"game string longer than {MAX_GAME_STRING} characters")
    try:
        name, params = parse_game_string(game_string)
    except GameError:
        bad("game must be holdem or holdem(definition=NAME, stacks=..., blinds=..., antes=...)")
    if name != "holdem":
        bad(f"game must be a holdem(...) game string, not {name[:40]!r}")
    extra = sorted(set(params) - set(CLIENT_GAME_PARAMS))
    if extra:
        bad(f"holdem: unknown parameter {extra[0][:40]!r}; allowed: {', '.join(CLIENT_GAME_PARAMS)}")
    definition = params.get("definition", DEFAULT_DEFINITION)
    known = list_definitions()
    if isinstance(definition, str) and definition.endswith(".game"):
        definition = definition[:-len(".game")]
    if not isinstance(definition, str) or definition not in known:
        # the value is not echoed: it may be a path, and its existence is nobody's business
        bad(f"definition must be the name of one of the server's definitions: {', '.join(known)}")
    params["definition"] = definition
    for key, low in (("stacks", 1), ("blinds", 0), ("antes", 0)):
        value = params.get(key, ())
        value = value if isinstance(value, tuple) else (value,)
        if not all(isinstance(v, int) and not isinstance(v, bool) and low <= v <= MAX_CLIENT_CHIPS for v in value):
            bad(f"holdem: {key} must be integers {low}..{MAX_CLIENT_CHIPS} separated by ';' (one per seat)")
        if key in params:
            params[key] = value
    for key in ("fractional_split", "ante_trimming"):
        if not isinstance(params.get(key, False), bool):
            bad(f"holdem: {key} must be true or false")
    try:
        game = HoldemGame(**params)
    except (GameError, ValueError, TypeError) as exc:  # the server's own file: its messages are fine
        bad(f"game: {str(exc)[:200]}")
    return game


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` serves this machine only (127.0.0.0/8, ::1, localhost)."""
    if host in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_origins(host: str, http_port: int, extra: Sequence[str] = ()) -> List[Optional[str]]:
    """WebSocket ``Origin`` values the browser door accepts: the server's own page
    (``http://HOST:PORT``; on a loopback bind also ``localhost``, ``127.0.0.1`` and ``[::1]``),
    the operator's ``--allow-origin`` values, and no Origin at all (clients that are not browsers)."""
    names = ["127.0.0.1", "localhost", "[::1]"] if is_loopback(host) else []
    if host and host not in ("0.0.0.0", "::") and not is_loopback(host):
        names.append(f"[{host}]" if ":" in host else host)
    out: List[Optional[str]] = [f"http://{name}:{http_port}" for name in names]
    out += [o.rstrip("/") for o in extra if o.rstrip("/") not in out]
    return out + [None]


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


#: decisions whose time limit is at least this long are timed by the server's sweep (every
#: ``TIMEOUT_SWEEP`` seconds) instead of a timer each; shorter ones keep an exact timer
TIMEOUT_SWEEP = 0.1
SWEEP_MIN_TIMEOUT = 1.0


class Stats:
    """Server-side counters: hands, actions, server time per action (seconds, last 200k)."""

    def __init__(self):
        self.started = time.monotonic()
        self.hands = 0
        self.actions = 0
        self.errors = 0
        self.commits = 0
        self.handoffs = 0
        self.action_times: Deque[float] = deque(maxlen=200_000)
        #: the match's own work for the same span (excludes waiting in the event loop's queue)
        self.service_times: Deque[float] = deque(maxlen=200_000)

    def snapshot(self, matches: int, connections: int) -> Dict[str, Any]:
        times = sorted(self.action_times)
        service = sorted(self.service_times)

        def q(x, arr=times):
            return round(arr[min(len(arr) - 1, int(x * len(arr)))] * 1e3, 4) if arr else None

        usage = resource.getrusage(resource.RUSAGE_SELF)

        up = time.monotonic() - self.started
        return {"type": "stats", "uptime": round(up, 3), "hands": self.hands, "actions": self.actions,
                "errors": self.errors, "commits": self.commits, "handoffs": self.handoffs,
                "hands_per_second": round(self.hands / up, 2) if up > 0 else 0.0,
                "action_ms_p50": q(0.5), "action_ms_p99": q(0.99),
                "service_ms_p50": q(0.5, service), "service_ms_p99": q(0.99, service),
                "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3), "matches_running": matches,
                "connections": connections, "rss_mb": round(_rss_mb(), 1)}


class Connection:
    """One client connection (any door): message sending, rate limit, error count."""

    def __init__(self, server: "Server", kind: str, writer=None, ws=None):
        self.server = server
        self.kind = kind  # "json", "ws" or "acpc"
        #: a StreamWriter (ACPC door) or the transport itself (JSON door, :class:`_JsonDoor`)
        self.writer = writer
        self._transport = getattr(writer, "transport", writer)
        self.ws = ws
        #: the peer's address (the per-address connection cap counts by it)
        try:
            peer = ws.remote_address if ws is not None else writer.get_extra_info("peername")
        except Exception:  # a transport without a peer name
            peer = None
        self.addr = str(peer[0]) if isinstance(peer, (tuple, list)) and peer else "?"
        self.slot: Optional["Slot"] = None
        self.errors = 0
        self.closed = False
        self._tokens = server.rate_burst
        self._last = time.monotonic()
        self._queue: Optional[asyncio.Queue] = None
        self._out: List[bytes] = []
        #: set when the connection's match runs in another worker: the socket moves there
        self.handoff_to: Optional[int] = None
        if ws is not None:
            self._queue = asyncio.Queue()
            self._sender = asyncio.get_running_loop().create_task(self._ws_sender())

    async def _ws_sender(self):
        try:
            while True:
                text = await self._queue.get()
                if text is None:
                    return
                await self.ws.send(text)
        except Exception:  # the connection went away
            self.closed = True

    def wait_for_token(self) -> float:
        """Seconds until the token bucket has a message's token again (0 when it has one now)."""
        return max(0.001, (1.0 - self._tokens) / self.server.rate_per_second) if self._tokens < 1.0 else 0.0

    def allow(self) -> bool:
        """Token bucket: False when the client sends faster than the rate limit (the message is
        then read later: the doors slow a fast client down, they never drop its messages)."""
        now = time.monotonic()
        self._tokens = min(self.server.rate_burst, self._tokens + (now - self._last) * self.server.rate_per_second)
        self._last = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True

    def send_text(self, text: str) -> None:
        """Queue one message (text with its line ending, or a WebSocket message)."""
        if self.closed:
            return
        if self.ws is not None:
            self._queue.put_nowait(text)
            return
        self.send_bytes(text.encode("utf-8"))

    def send_bytes(self, data: bytes) -> None:
        """Queue one message's bytes (TCP doors).  Messages of one loop step (a hand's end and the
        next hand's first state, ...) leave in one write: one system call instead of one each."""
        if self.closed:
            return
        if not self._out:
            asyncio.get_running_loop().call_soon(self.flush)
        self._out.append(data)

    def flush(self) -> None:
        """Write the buffered messages (called once per loop step that queued any)."""
        if not self._out:
            return
        data = b"".join(self._out)
        self._out.clear()
        if self.closed or self.writer is None:
            return
        if self.writer.is_closing():
            self.closed = True
            return
        self.writer.write(data)
        if self._transport.get_write_buffer_size() > (1 << 22):  # a reader that never reads
            self.close()

    def send(self, obj: Dict[str, Any]) -> None:
        if self.kind == "acpc":
            if obj.get("type") == "error":
                self.send_text(f"# ERROR {obj['code']}: {obj['message']}\r\n")
            return
        if self.ws is not None:
            self.send_text(_dumps(obj).decode("utf-8"))
        else:
            self.send_bytes(_dumps(obj) + b"\n")

    def error(self, code: str, message: str, fatal: bool = False) -> None:
        self.errors += 1
        self.server.stats.errors += 1
        self.send(P.error_message(code, message, fatal))
        if fatal or self.errors >= P.MAX_ERRORS_PER_CONNECTION:
            self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.slot is not None and self.slot.conn is self:
            self.slot.conn = None
        if self.ws is not None:
            self._queue.put_nowait(None)
            asyncio.get_running_loop().create_task(self.ws.close())
        elif self.writer is not None:
            if self._out:  # the last messages (a fatal error, match_end) still go out
                data, self._out = b"".join(self._out), []
                if not self.writer.is_closing():
                    self.writer.write(data)
            self.writer.close()


class _JsonDoor(asyncio.Protocol):
    """The JSON-lines door of one connection, on ``asyncio.Protocol``: a message is handled in the
    loop step that reads it (no stream reader, no task per connection).  Lines longer than
    ``MAX_MESSAGE_BYTES`` are answered with ``too_large`` and skipped, as on every door."""

    def __init__(self, server: "Server", initial: bytes = b""):
        self.server = server
        self.initial = initial
        self.buf = b""
        self.skipping = False
        self.conn: Optional[Connection] = None
        self.transport = None

    def connection_made(self, transport) -> None:
        server = self.server
        self.transport = transport
        conn = self.conn = Connection(server, "json", writer=transport)
        if not server.admit(conn):
            return
        try:
            transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (OSError, AttributeError):
            pass
        if not self.initial:  # a connection handed over by another worker has had its hello
            conn.send({"type": "hello", "server": "cfrkit", "protocol": 1, "agents": server.house_agents()})
        else:
            data, self.initial = self.initial, b""
            self.data_received(data)

    def data_received(self, data: bytes) -> None:
        conn = self.conn
        if conn.closed:
            return
        buf = self.buf + data if self.buf else data
        on_raw = self.server.on_raw
        start = 0
        while True:
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            raw = buf[start:nl]
            line_start, start = start, nl + 1
            if self.skipping:
                self.skipping = False
                continue
            if raw.endswith(b"\r"):
                raw = raw.rstrip(b"\r")
            if not raw.strip():
                continue
            if not conn.allow():  # over the rate: read this line again once the bucket refills
                self.buf = buf[line_start:]
                self.transport.pause_reading()
                asyncio.get_running_loop().call_later(conn.wait_for_token(), self._resume)
                return
            on_raw(conn, raw)
            if conn.handoff_to is not None:
                self._hand_over(buf[line_start:])
                return
            if conn.closed:
                self.buf = b""
                return
        rest = buf[start:] if start else buf
        if len(rest) > P.MAX_MESSAGE_BYTES:
            if not self.skipping:
                self.server._fault(conn, "too_large", f"message longer than {P.MAX_MESSAGE_BYTES} bytes")
            self.skipping = True
            rest = b""
        self.buf = rest

    def _resume(self) -> None:
        if self.conn.closed:
            return
        self.data_received(b"")
        if not self.conn.closed and not self.transport.is_closing():
            try:
                self.transport.resume_reading()
            except (RuntimeError, AttributeError):  # already reading
                pass

    def _hand_over(self, rest: bytes) -> None:
        self.transport.pause_reading()
        self.buf = b""
        server, conn = self.server, self.conn
        server.release(conn)
        if not server._hand_over(conn, "json", rest):
            conn.close()

    def connection_lost(self, exc) -> None:
        self.server.release(self.conn)
        self.conn.close()


class Slot:
    """One player of a match: a house agent, or a remote player (JSON/WebSocket or ACPC)."""

    def __init__(self, match: "Match", player: int, name: str, kind: str, token: Optional[str],
                 agent=None, port: Optional[int] = None):
        self.match = match
        self.player = player
        self.name = name
        self.kind = kind  # "house", "remote", "acpc"
        self.token = token
        self.agent = agent
        self.port = port
        self.conn: Optional[Connection] = None
        self.bank = match.time_bank
        self.pending: Optional[asyncio.Future] = None
        self.pending_state = None
        self.pending_view = None
        self.pending_seat = -1
        self.pending_matchstate = ""
        self.received_at = 0.0
        self.acpc_server = None

    def resolve(self, action: int, fault: Optional[str] = None) -> None:
        if self.pending is not None and not self.pending.done():
            if fault:
                self.match.faults.append(f"{self.name}: {fault}")
            self.received_at = time.perf_counter()
            self.pending.set_result(action)


class Match:
    """A match between ``players`` (see :mod:`cfrkit.platform.schedule` for seats and deals)."""

    def __init__(self, server: "Server", match_id: str, spec: Dict[str, Any], players: List[Dict[str, Any]],
                 hands_done: int = 0, totals: Optional[List[float]] = None):
        from cfrkit.games.registry import load
        from cfrkit.poker.registry import make_agent

        self.server = server
        self.id = match_id
        self.spec = spec
        self.game = load(spec["game"])
        self.n = self.game.num_players
        self.hands_total = int(spec["hands"])
        self.seed = int(spec["seed"])
        self.duplicate = bool(spec["duplicate"])
        self.time_per_action = float(spec["time_per_action"])
        self.time_bank = float(spec["time_bank"])
        self.hands_done = hands_done
        self.totals = list(totals) if totals else [0.0] * self.n
        self.slots: List[Slot] = []
        for j, pl in enumerate(players):
            agent = None
            if pl["kind"] == "house" and pl["agent"].startswith("policy:"):
                path = server.policies.get(pl["agent"][7:])
                if path is None:
                    raise GameError(f"house policy {pl['agent']!r} is not offered by this server (--policy)")
                agent = make_agent(f"policy:{path}", seed=self.seed * 1000 + j)
            elif pl["kind"] == "house":
                agent = make_agent(pl["agent"], seed=self.seed * 1000 + j)
            slot = Slot(self, j, pl["name"], pl["kind"], pl.get("token"), agent, pl.get("port"))
            slot.agent_name = pl.get("agent")
            # built-in agents quick enough to run in the event loop; the others run in a thread
            slot.fast = slot.agent_name in FAST_AGENTS or getattr(agent, "name", "") in FAST_AGENTS
            self.slots.append(slot)
        #: seats played from outside (JSON, browser, ACPC): a match none of them has been connected
        #: to for the server's match idle timeout expires
        self.remote_slots = [slot for slot in self.slots if slot.kind != "house"]
        self.idle_since = time.monotonic()
        self.cancelled = False
        #: set by the server once every remote seat is taken (while the match waits for them)
        self.seated: Optional[asyncio.Event] = None
        #: the address of a non-operator ``play`` that made the match (None: the operator's)
        self.creator: Optional[str] = None
        self.started = False
        self.state = None
        self.hand = -1
        self.seat_of: List[int] = list(range(self.n))
        self.faults: List[str] = []
        self.task: Optional[asyncio.Task] = None
        self.done = asyncio.Event()
        self._deal_index, self._cards = -1, []
        self._names: Optional[List[str]] = None

    # ------------------------------------------------------------------ views
    def names_by_seat(self) -> List[str]:
        """The players' names by seat in the current hand (built once per hand)."""
        if self._names is None:
            pos = player_of_seat(self.seat_of)
            self._names = [self.slots[pos[s]].name for s in range(self.n)]
        return self._names

    def welcome(self, slot: Slot) -> Dict[str, Any]:
        return {"type": "welcome", "match": self.id, "player": slot.player, "name": slot.name, "token": slot.token,
                "game": self.spec["game"], "definition": self.game.acpc_definition_text(),
                "num_players": self.n, "hands": self.hands_total, "hands_done": self.hands_done,
                "seed": self.seed, "duplicate": self.duplicate, "time_per_action": self.time_per_action,
                "time_bank": self.time_bank, "players": [s.name for s in self.slots],
                "big_blind": self.game.definition.big_blind}

    def send_state_to(self, slot: Slot) -> None:
        conn = slot.conn
        if conn is None or self.state is None or self.state.is_terminal():
            return
        seat = self.seat_of[slot.player]
        if conn.kind == "acpc":
            text = format_matchstate(self.state, seat, self.hand)
            if slot.pending is not None:
                slot.pending_matchstate = text
            conn.send_text(text + "\r\n")
            return
        time_left = None
        if slot.pending is not None:
            time_left = self.time_per_action + slot.bank
        conn.send(P.state_view(self.state, seat, match_id=self.id, hand=self.hand, player=slot.player,
                               names_by_seat=self.names_by_seat(), time_left=time_left,
                               action_view=slot.pending_view if slot.pending is not None else None))

    def broadcast_state(self) -> None:
        for slot in self.slots:
            if slot.conn is not None:
                self.send_state_to(slot)

    # ------------------------------------------------------------------ play
    def start(self) -> None:
        self.idle_since = time.monotonic()
        self.task = asyncio.get_running_loop().create_task(self.run())
        if self.remote_slots:
            self.server._housekeep_soon()

    def all_seated(self) -> bool:
        """Whether every remote seat has a connection (JSON join, or ACPC VERSION line)."""
        return all(slot.conn is not None for slot in self.remote_slots)

    async def run(self) -> None:
        try:
            if self.hands_done == 0 and not self.all_seated():
                # as the ACPC dealer: hand 0 starts once every seat is taken, so no agent misses a
                # hand (a match nobody completes expires after the server's match idle timeout)
                self.seated = asyncio.Event()
                await self.seated.wait()
            self.seated = None
            self.started = True
            while self.hands_done < self.hands_total:
                await self.play_hand(self.hands_done)
            self.server.store.finish_match(self.id)
            for slot in self.slots:
                if slot.conn is not None:
                    slot.conn.send({"type": "match_end", "match": self.id, "hands": self.hands_done,
                                    "players": [s.name for s in self.slots], "totals": self.totals})
                    if slot.conn.kind == "acpc":  # the ACPC dealer ends a match by closing the connection
                        slot.conn.close()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must not stop the other matches
            log.exception("match %s stopped", self.id)
            self.server.store.finish_match(self.id, "error")
            for slot in self.slots:
                if slot.conn is not None:
                    slot.conn.send(P.error_message("server_error", f"match stopped: {exc}", True))
        finally:
            self.done.set()
            self.server.match_finished(self)

    async def play_hand(self, i: int) -> None:
        deal_index, seat_of = hand_plan(self.n, i, self.duplicate)
        self.seat_of = seat_of
        pos = player_of_seat(seat_of)
        if deal_index != self._deal_index:  # duplicate mode plays each deal n times in a row: deal it once
            self._deal_index, self._cards = deal_index, deal_for_hand(self.game, self.seed, deal_index)
        # the play layer's hand (one definition of dealing, legality and chips), driven from this
        # event loop; trusted: the deal's cards are distinct by construction and decide() returns
        # legal actions only, so nothing is checked twice
        house = [slot.agent for slot in self.slots if slot.agent is not None]
        driver = HandDriver(self.game, self._cards, resets=house, trusted=True)
        state = driver.state
        self.state, self.hand, self.faults = state, i, []
        self._names = [self.slots[pos[s]].name for s in range(self.n)]
        last: Optional[Slot] = None
        resumed = time.perf_counter()
        while True:
            seat = driver.next_decision()
            if seat is None:
                break
            slot = self.slots[pos[seat]]
            if slot.kind != "house":
                slot.pending = asyncio.get_running_loop().create_future()
                slot.pending_state = state
                slot.pending_view = state.action_view()  # for its state message and its answer
                slot.pending_seat = seat
                # states go out before every remote decision (and the hand's end): a house agent's
                # action shows in the next state's betting, so no message is spent on it
                self.broadcast_state()
                if last is not None:  # the work a remote action caused ends here
                    now = time.perf_counter()
                    self.server.stats.action_times.append(now - last.received_at)
                    self.server.stats.service_times.append(now - resumed)
                    last = None
            action = await self.decide(slot, state, seat)
            if slot.kind != "house":
                resumed = time.perf_counter()
                last = slot
            driver.apply(seat, action)
            self.server.stats.actions += 1
        returns = driver.finish().returns()
        player_returns = [returns[seat_of[j]] for j in range(self.n)]
        names = self.names_by_seat()
        # the ACPC line is the stored record (cards, betting, chips); the PHH text is derived from it
        # when read (Store.hands), not built on the hot path
        acpc = P.acpc_log_line(state, i, names, returns)
        waited = time.perf_counter()
        await self.server.commit_hand((self.id, i, deal_index, seat_of, acpc, player_returns, self.faults))
        resumed += time.perf_counter() - waited  # the match work below excludes the wait for the commit
        self.hands_done = i + 1
        self.server.stats.hands += 1
        for j in range(self.n):
            self.totals[j] += player_returns[j]
        views = None
        for slot in self.slots:
            conn = slot.conn
            if conn is None:
                continue
            seat = seat_of[slot.player]
            if conn.kind == "acpc":
                conn.send_text(format_matchstate(state, seat, i) + "\r\n")
            else:
                if views is None:
                    views = P.HandEndViews(state, match_id=self.id, hand=i, names_by_seat=names, returns=returns,
                                           player_returns=player_returns, totals=self.totals)
                conn.send(views.view(seat, slot.player))
        if last is not None:
            now = time.perf_counter()
            self.server.stats.action_times.append(now - last.received_at)
            self.server.stats.service_times.append(now - resumed)
        self.state = None

    async def decide(self, slot: Slot, state, seat: int) -> int:
        if slot.kind == "house":
            agent = slot.agent
            try:
                if slot.fast:
                    action = agent.act(state)
                else:
                    loop = asyncio.get_running_loop()
                    action = await asyncio.wait_for(loop.run_in_executor(None, agent.act, state.clone()),
                                                    self.time_per_action + slot.bank)
            except Exception as exc:  # a broken agent folds its hand, the match goes on
                self.faults.append(f"{slot.name}: agent error {type(exc).__name__}")
                return P.default_action(state)
            if not state.is_legal(action):
                self.faults.append(f"{slot.name}: illegal action {action}")
                return P.default_action(state)
            return action
        t0 = time.monotonic()
        timeout = self.time_per_action + slot.bank
        pending = slot.pending
        if timeout < SWEEP_MIN_TIMEOUT:  # a timer on the decision's future itself
            timer = asyncio.get_running_loop().call_later(
                timeout, lambda: pending.done() or pending.set_exception(asyncio.TimeoutError()))
        else:  # the server's sweep times it out (at most TIMEOUT_SWEEP late): no timer per action
            timer = None
            self.server.watch_deadline(pending, t0 + timeout)
        try:
            action = await pending
        except asyncio.TimeoutError:
            self.faults.append(f"{slot.name}: timeout" + ("" if slot.conn else " (disconnected)"))
            slot.bank = 0.0
            slot.received_at = time.perf_counter()
            action = P.default_action(state)
            if slot.conn is not None:
                slot.conn.send(P.error_message("timeout", f"no action within {timeout:.3f} s: "
                                                          f"{'fold' if action == 0 else 'check'} played for you"))
        else:
            used = time.monotonic() - t0
            slot.bank = max(0.0, slot.bank - max(0.0, used - self.time_per_action))
        finally:
            if timer is not None:
                timer.cancel()
            else:
                self.server.deadlines.pop(pending, None)
            slot.pending = None
            slot.pending_state = None
            slot.pending_view = None
        return action


class Server:
    """The platform server (``cfrkit serve``).  ``start()`` binds the doors; ``serve_forever()`` runs."""

    def __init__(self, db_path: str = "platform.db", host: str = "127.0.0.1", port: int = 1080,
                 acpc_port: Optional[int] = None, http_port: Optional[int] = None,
                 max_matches: Optional[int] = None,
                 policies: Optional[Dict[str, str]] = None, max_connections: int = 10000,
                 rate_per_second: float = P.RATE_PER_SECOND, rate_burst: float = P.RATE_BURST,
                 worker: int = 0, workers: int = 1, allow_origins: Sequence[str] = (),
                 max_per_address: int = 256, idle_timeout: float = 120.0, match_idle_timeout: float = 900.0,
                 operator_token: Optional[str] = None, max_plays_per_address: int = 16):
        self.store = Store(db_path)
        #: this process's shard (``cfrkit serve --workers N``, see :mod:`cfrkit.platform.workers`):
        #: it runs the matches whose id is ``worker`` mod ``workers`` and hands a connection that
        #: joins another shard's match to that worker (the socket itself, passed over a Unix socket)
        self.worker, self.workers = int(worker), int(workers)
        self.handoff = None
        #: house policy agents offered as ``policy:NAME`` (policy files of holdem / holdem_abstract games)
        self.policies = dict(policies or {})
        self.host = host
        self.port = port
        self.acpc_port = acpc_port
        self.http_port = http_port
        # file descriptors: every connection and every ACPC seat's listening port holds one; the
        # process limit (ulimit -n) is read once, and connections and seats are budgeted below it so
        # that the server refuses politely instead of failing accept() and open()
        self.fd_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if self.fd_limit == resource.RLIM_INFINITY:
            self.fd_limit = 1 << 20
        self.fd_budget = max(8, self.fd_limit - FD_RESERVE)
        #: ACPC seat ports open at most at once: a quarter of the budget (a seat is its port and its
        #: agent's connection, so the seats hold at most half of it)
        self.max_acpc_seats = self.fd_budget // 4
        self.acpc_ports_open = 0
        self.max_connections = min(int(max_connections), self.fd_budget)
        default_matches = min(DEFAULT_MAX_MATCHES, self.fd_budget // 2)
        self.max_matches = default_matches if max_matches is None else int(max_matches)
        if self.max_matches < 0:
            raise GameError(f"max_matches must be >= 0, got {self.max_matches}")
        if self.max_matches > default_matches:
            log.warning("max_matches %d is more than the descriptor limit allows (%d: ulimit -n %d); matches "
                        "with remote seats may be refused for lack of descriptors", self.max_matches,
                        default_matches, self.fd_limit)
        #: per-connection token bucket (messages per second, burst)
        self.rate_per_second, self.rate_burst = float(rate_per_second), float(rate_burst)
        self.matches: Dict[str, Match] = {}
        self.connections: set = set()
        self.stats = Stats()
        self._pending_hands: List[Any] = []
        #: pending remote decisions -> their deadline (time.monotonic()), checked by _sweep
        self.deadlines: Dict[asyncio.Future, float] = {}
        self._sweeping = False
        self._servers: List[Any] = []
        self.bound: Dict[str, int] = {}
        #: operator token for create / cancel / admin: off (None) on a loopback bind unless given;
        #: on any other bind one is required, made up here when not given (the CLI prints it)
        self.operator_token = operator_token or None
        if self.operator_token is None and not is_loopback(host):
            self.operator_token = secrets.token_urlsafe(18)
            self.operator_token_generated = True
        else:
            self.operator_token_generated = False
        self.max_plays_per_address = int(max_plays_per_address)
        #: connections open per peer address, and the cap
        self.per_address: Dict[str, int] = {}
        self.max_per_address = int(max_per_address)
        #: seconds a connection without a seat may stay silent; seconds a match may have no remote
        #: player connected before it expires
        self.idle_timeout = float(idle_timeout)
        self.match_idle_timeout = float(match_idle_timeout)
        self._housekeeping = None
        #: extra WebSocket origins (``--allow-origin``); ``origins`` is the full list once bound
        self.allow_origins = [str(o) for o in allow_origins]
        self.origins: Optional[List[Optional[str]]] = None
        #: stored running matches this start could not resume: id -> reason (``admin`` lists them)
        self.skipped: Dict[str, str] = {}

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        # matches of a previous run are resumed BEFORE the doors open: a client that rejoins right
        # after a restart must find its match (not ``unknown_match``, which tells it the match ended)
        resumed = []
        for row in self.store.running_matches():  # resume after a restart: the open hand is void
            if self.owner(row["id"]) != self.worker:
                continue
            try:
                players = [dict(spec_player, **stored)
                           for spec_player, stored in zip(row["spec"]["players"], row["players"])]
                match = Match(self, row["id"], row["spec"], players, row["hands_done"], self.store.totals(row["id"]))
            except Exception as exc:  # one match that cannot be rebuilt must not keep the server down
                self.skip_match(row["id"], f"cannot resume: {type(exc).__name__}: {str(exc)[:200]}")
                continue
            self.store.mark_restarted(row["id"])
            log.info("match %s resumes at hand %d (a hand being played at the stop is void and replayed "
                     "from its deal)", row["id"], row["hands_done"])
            self.matches[match.id] = match
            resumed.append(match)
        for match in resumed:
            seats = sum(1 for slot in match.slots if slot.kind == "acpc")
            if self.acpc_ports_open + seats > self.max_acpc_seats:
                self.matches.pop(match.id, None)
                self.skip_match(match.id, f"no file descriptors for its {seats} ACPC seat ports "
                                          f"({self.acpc_ports_open} open of {self.max_acpc_seats}; ulimit -n {self.fd_limit})")
                continue
            try:
                await self._open_acpc_ports(match)
            except OSError as exc:
                self.matches.pop(match.id, None)
                self._close_acpc_ports(match)
                self.skip_match(match.id, f"cannot open its ACPC seat ports: {exc}")
                continue
            match.start()
        reuse = self.workers > 1 or None
        srv = await asyncio.get_running_loop().create_server(self._json_door, self.host, self.port, reuse_port=reuse)
        self._servers.append(srv)
        self.bound["json"] = srv.sockets[0].getsockname()[1]
        if self.acpc_port is not None:
            srv = await asyncio.start_server(lambda r, w: self._acpc_client(r, w, None), self.host, self.acpc_port,
                                             reuse_port=reuse)
            self._servers.append(srv)
            self.bound["acpc"] = srv.sockets[0].getsockname()[1]
        if self.http_port is not None and self.worker == 0:  # the browser door lives in worker 0
            from websockets.asyncio.server import serve

            # bound here first: the allowed origins name the port (also when it is chosen by the OS)
            sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((self.host, self.http_port))
            except OSError:
                sock.close()
                raise
            http_port = sock.getsockname()[1]
            self.origins = allowed_origins(self.host, http_port, self.allow_origins)
            # a browser always sends Origin: a page of another site is refused at the handshake (403);
            # clients that are not browsers send none (None in the list)
            ws = await serve(self._ws_client, sock=sock, process_request=self._http_request,
                             origins=self.origins, max_size=P.MAX_MESSAGE_BYTES, ping_interval=20, ping_timeout=60)
            self._servers.append(ws)
            self.bound["http"] = http_port
        if not is_loopback(self.host):
            log.warning("binding %s, not a loopback address: anybody who can reach it may connect; tokens travel "
                        "in clear text (put the server behind TLS)", self.host)
            if self.operator_token_generated:  # the CLI passes its own (printed); a library caller learns it here
                log.warning("operator token (create / cancel / admin need it): %s", self.operator_token)
        log.info("serving on %s", self.bound)

    async def serve_forever(self) -> None:
        await asyncio.gather(*(s.serve_forever() for s in self._servers if hasattr(s, "serve_forever")))

    async def close(self) -> None:
        if self._housekeeping is not None:
            self._housekeeping.cancel()
            self._housekeeping = None
        for m in list(self.matches.values()):
            if m.task is not None:
                m.task.cancel()
        for s in self._servers:
            s.close()
        for m in list(self.matches.values()):
            for slot in m.slots:
                if slot.acpc_server is not None:
                    slot.acpc_server.close()
        for c in list(self.connections):
            c.close()
        self._write_hands()  # hands already finished are stored on a clean stop
        self.store.close()

    def admit(self, conn: Connection) -> bool:
        """Add a new connection, or refuse it (``server_busy``, fatal) when the connection limit, the
        descriptor budget or the per-address cap is reached."""
        open_now = len(self.connections)
        if open_now >= self.max_connections or open_now + self.acpc_ports_open >= self.fd_budget:
            conn.error("server_busy", f"{open_now} connections open; try later", fatal=True)
            return False
        mine = self.per_address.get(conn.addr, 0)
        if mine >= self.max_per_address:
            conn.error("server_busy", f"{mine} connections open from your address (the limit is "
                                      f"{self.max_per_address}); try later", fatal=True)
            return False
        self.per_address[conn.addr] = mine + 1
        self.connections.add(conn)
        conn._last = time.monotonic()
        self._housekeep_soon()
        return True

    def release(self, conn: Optional[Connection]) -> None:
        """Forget a connection (closed or handed to another worker)."""
        if conn is None or conn not in self.connections:
            return
        self.connections.discard(conn)
        left = self.per_address.get(conn.addr, 1) - 1
        if left > 0:
            self.per_address[conn.addr] = left
        else:
            self.per_address.pop(conn.addr, None)

    # ------------------------------------------------------------------ housekeeping (idle limits)
    def _housekeep_soon(self) -> None:
        if self._housekeeping is None:
            period = max(0.05, min(HOUSEKEEPING_PERIOD, self.idle_timeout / 4, self.match_idle_timeout / 4))
            self._housekeeping = asyncio.get_running_loop().call_later(period, self._housekeep)

    def _housekeep(self) -> None:
        """Close connections idle past ``idle_timeout`` that hold no seat, expire matches whose
        remote seats have all been empty for ``match_idle_timeout`` (one sweep, every few seconds)."""
        self._housekeeping = None
        now = time.monotonic()
        for conn in list(self.connections):
            # browser tabs (WebSocket) stay: a person may read the page for minutes before playing,
            # the page does not reconnect, and the library's pings close a dead one within 80 s
            seated = conn.slot is not None and conn.slot.match.id in self.matches
            if conn.ws is None and not seated and not conn.closed and now - conn._last > self.idle_timeout:
                self.release(conn)
                conn.error("idle", f"nothing received for {self.idle_timeout:g} s and no seat: closed", fatal=True)
        for match in list(self.matches.values()):
            if match.task is None or not match.remote_slots:
                continue
            if any(slot.conn is not None for slot in match.remote_slots):
                match.idle_since = now
            elif now - match.idle_since > self.match_idle_timeout:
                self.cancel_match(match, "expired", f"no player connected for {self.match_idle_timeout:g} s")
        if self.connections or any(m.remote_slots for m in self.matches.values()):
            self._housekeep_soon()

    def cancel_match(self, match: "Match", status: str = "cancelled", reason: str = "cancelled") -> None:
        """Stop a running match now: stored as ``status`` (``cancelled`` / ``expired``) with the hands
        played so far, its players told (``cancelled``), its ACPC seats closed."""
        log.info("match %s %s: %s", match.id, status, reason)
        self.store.finish_match(match.id, status)
        match.cancelled = True
        for slot in match.slots:
            if slot.conn is not None:
                slot.conn.send(P.error_message("cancelled", f"match {match.id} {status}: {reason}"))
                if slot.conn.kind == "acpc":
                    slot.conn.close()
        if match.task is not None:
            match.task.cancel()
        else:
            self.match_finished(match)

    def _host_allowed(self, host: Optional[str]) -> bool:
        """Whether an HTTP ``Host`` header names this server: on a loopback bind, one of the
        loopback names or an allowed origin's host; on other binds any host (the page is public)."""
        if not is_loopback(self.host):
            return True
        if not host:
            return False
        return host.lower() in {o.split("://", 1)[1] for o in self.origins if o}

    # ------------------------------------------------------------------ time limits
    def watch_deadline(self, fut: "asyncio.Future", deadline: float) -> None:
        """Fail ``fut`` with ``asyncio.TimeoutError`` once ``time.monotonic()`` passes ``deadline``
        (checked every ``TIMEOUT_SWEEP`` seconds: one sweep for all decisions, not a timer each)."""
        self.deadlines[fut] = deadline
        if not self._sweeping:
            self._sweeping = True
            asyncio.get_running_loop().call_later(TIMEOUT_SWEEP, self._sweep)

    def _sweep(self) -> None:
        now = time.monotonic()
        expired = [fut for fut, deadline in self.deadlines.items() if deadline <= now]
        for fut in expired:
            del self.deadlines[fut]
            if not fut.done():
                fut.set_exception(asyncio.TimeoutError())
        if self.deadlines:
            asyncio.get_running_loop().call_later(TIMEOUT_SWEEP, self._sweep)
        else:
            self._sweeping = False

    # ------------------------------------------------------------------ storage (group commit)
    def commit_hand(self, record: tuple) -> "asyncio.Future":
        """Store a finished hand; the future is done once it is committed.

        Hands finished in the same loop step are committed together in one transaction (each hand
        whole: nothing of a hand is stored without the rest); nobody is told a hand's result before
        its transaction has committed, so after ``kill -9`` a hand is either stored and possibly
        announced, or void and replayed from its deal."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        if not self._pending_hands:
            loop.call_soon(self._write_hands)
        self._pending_hands.append((record, fut))
        return fut

    def _write_hands(self) -> None:
        batch, self._pending_hands = self._pending_hands, []
        if not batch:
            return
        try:
            self.store.record_hands([rec for rec, _ in batch])
        except Exception:  # one bad hand must not fail the others: store them one by one
            for rec, fut in batch:
                try:
                    self.store.record_hands([rec])
                except Exception as exc:
                    if not fut.done():
                        fut.set_exception(exc)
                else:
                    if not fut.done():
                        fut.set_result(None)
            return
        self.stats.commits += 1
        for _, fut in batch:
            if not fut.done():
                fut.set_result(None)

    async def flush_hands(self) -> None:
        """Wait until the hands queued so far are committed."""
        if self._pending_hands:
            await asyncio.shield(self._pending_hands[-1][1])

    def match_finished(self, match: Match) -> None:
        self._close_acpc_ports(match)
        self.matches.pop(match.id, None)

    def _close_acpc_ports(self, match: Match) -> None:
        for slot in match.slots:
            if slot.acpc_server is not None:
                slot.acpc_server.close()
                slot.acpc_server = None
                self.acpc_ports_open -= 1

    def skip_match(self, match_id: str, reason: str) -> None:
        """A stored running match this start does not resume: logged, listed by ``admin``; it stays
        ``running`` in the database, so a later start that can build it (a ``--policy`` offered
        again, more descriptors) resumes it."""
        log.warning("match %s skipped: %s", match_id, reason)
        self.skipped[match_id] = reason

    def owner(self, match_id: str) -> int:
        """The worker that runs ``match_id`` (its hexadecimal id modulo the number of workers)."""
        if self.workers == 1:
            return 0
        try:
            return int(match_id, 16) % self.workers
        except ValueError:
            return self.worker

    def _foreign(self, conn: Connection, match_id: Any) -> bool:
        """Hand ``conn`` over to the worker of ``match_id`` if another worker runs it."""
        if self.workers == 1 or self.handoff is None or not isinstance(match_id, str) or conn.kind == "ws":
            return False
        owner = self.owner(match_id)
        if owner == self.worker:
            return False
        conn.handoff_to = owner
        return True

    def house_agents(self) -> List[str]:
        """Names of the built-in agents a match can seat on this server."""
        return list(FAST_AGENTS) + [f"policy:{name}" for name in sorted(self.policies)]

    # ------------------------------------------------------------------ matches
    def create_match(self, req: Dict[str, Any]) -> Match:
        """Validate a ``create`` request and start the match (raises ProtocolError)."""
        if len(self.matches) >= self.max_matches:
            raise P.ProtocolError("server_busy", f"{len(self.matches)} matches running; try later")

        def field(name, typ, default):
            value = req.get(name, default)
            if typ is int and (isinstance(value, bool) or not isinstance(value, int)):
                raise P.ProtocolError("bad_request", f"{name!r} must be an integer")
            if typ is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise P.ProtocolError("bad_request", f"{name!r} must be a number")
            if typ is str and not isinstance(value, str):
                raise P.ProtocolError("bad_request", f"{name!r} must be a string")
            if typ is bool and not isinstance(value, bool):
                raise P.ProtocolError("bad_request", f"{name!r} must be true or false")
            return value

        game = client_game(field("game", str, "holdem"))
        hands = field("hands", int, 1000)
        seed = field("seed", int, secrets.randbelow(2 ** 31))
        duplicate = field("duplicate", bool, game.num_players == 2)
        tpa = float(field("time_per_action", float, 10.0))
        bank = float(field("time_bank", float, 60.0))
        if not 1 <= hands <= MAX_HANDS or seed < 0 or not 0.001 <= tpa <= 3600 or not 0 <= bank <= 86400:
            raise P.ProtocolError("bad_request", f"hands 1..{MAX_HANDS}, seed >= 0, time_per_action "
                                                 f"0.001..3600 s, time_bank 0..86400 s")
        players_req = req.get("players")
        if not isinstance(players_req, list) or len(players_req) != game.num_players:
            raise P.ProtocolError("bad_request", f"'players' must list {game.num_players} entries "
                                                 f"(an agent name, 'remote' or 'acpc')")
        players = []
        for j, entry in enumerate(players_req):
            if isinstance(entry, str):
                entry = {"agent": entry}
            if not isinstance(entry, dict) or not isinstance(entry.get("agent"), str):
                raise P.ProtocolError("bad_request", f"player {j}: an agent name, 'remote' or 'acpc'")
            kind_name = entry["agent"]
            # the default name of a house agent is its agent name (``policy:NAME`` -> ``policy-NAME``: a
            # name has no ':', the ACPC log's separator)
            name = entry.get("name", kind_name.replace(":", "-") if kind_name not in ("remote", "acpc") else f"player{j}")
            if not isinstance(name, str) or not 0 < len(name) <= 40 or any(c in name for c in ":|\n\r"):
                raise P.ProtocolError("bad_request", f"player {j}: a name of 1-40 characters without ':' or '|'")
            if kind_name in ("remote", "acpc"):
                players.append({"name": name, "kind": kind_name, "token": secrets.token_urlsafe(18)})
                port = entry.get("port")
                if port is not None:  # a fixed seat port (an agent's configuration names it)
                    if kind_name != "acpc" or isinstance(port, bool) or not isinstance(port, int) \
                            or not 1024 <= port <= 65535:
                        raise P.ProtocolError("bad_request", f"player {j}: 'port' is for ACPC seats, 1024..65535")
                    players[-1]["port"] = port
            elif kind_name in HOUSE_AGENT_NAMES or kind_name.startswith("policy:") and kind_name[7:] in self.policies:
                players.append({"name": name, "kind": "house", "agent": kind_name})
            else:
                raise P.ProtocolError("bad_request", f"player {j}: unknown agent {kind_name!r}; built-in: "
                                                     f"{', '.join(HOUSE_AGENT_NAMES)}, or remote / acpc")
        seats = sum(1 for p in players if p["kind"] == "acpc")
        reserved = sum(1 for m in self.matches.values() for sl in m.slots if sl.kind == "acpc" and sl.acpc_server is None)
        if seats and self.acpc_ports_open + reserved + seats > self.max_acpc_seats:
            raise P.ProtocolError("server_busy", f"no file descriptors left for {seats} ACPC seat port(s): "
                                                 f"{self.acpc_ports_open + reserved} of {self.max_acpc_seats} in use "
                                                 f"(the server's ulimit -n is {self.fd_limit}); try later")
        if len({p["name"] for p in players}) != len(players):
            for j, p in enumerate(players):
                p["name"] = f"{p['name']}#{j}"
        hands = round_up_hands(game.num_players, hands, duplicate)
        spec = {"game": game.game_string(), "hands": hands, "seed": seed, "duplicate": duplicate,
                "time_per_action": tpa, "time_bank": bank,
                "players": [{k: v for k, v in p.items() if k != "token"} for p in players]}
        match_id = secrets.token_hex(6)
        while self.owner(match_id) != self.worker:  # an id of this worker's shard
            match_id = secrets.token_hex(6)
        # build first (agents, policy files), store after: a create that fails leaves nothing behind
        try:
            match = Match(self, match_id, spec, players)
        except P.ProtocolError:
            raise
        except Exception as exc:
            raise P.ProtocolError("bad_request", f"could not build the match: {type(exc).__name__}: "
                                                 f"{str(exc)[:200]}") from None
        match.players_record = players
        self.matches[match_id] = match  # holds its place under max_matches; stored by _start_created
        return match

    async def _open_acpc_ports(self, match: Match, store: bool = True) -> None:
        """Open a listening port for every ACPC seat (its stored port when free, else a new one);
        raises OSError when one cannot be opened (the ports opened so far stay in the slots)."""
        for slot in match.slots:
            if slot.kind != "acpc":
                continue
            handler = (lambda s: (lambda r, w: self._acpc_client(r, w, s)))(slot)
            try:
                srv = await asyncio.start_server(handler, self.host, slot.port or 0)
            except OSError:
                srv = await asyncio.start_server(handler, self.host, 0)
            slot.acpc_server = srv
            self.acpc_ports_open += 1
            if not srv.sockets:
                raise OSError("the seat's port did not open")
            slot.port = srv.sockets[0].getsockname()[1]
            if store:
                self.store.set_port(match.id, slot.player, slot.port)

    def attach(self, conn: Connection, match_id: Any, token: Any) -> Slot:
        if not isinstance(match_id, str) or not isinstance(token, str):
            raise P.ProtocolError("bad_message", "join needs string fields 'match' and 'token'")
        match = self.matches.get(match_id)
        if match is None:
            raise P.ProtocolError("unknown_match", f"no running match {match_id[:20]!r}")
        for slot in match.slots:
            if slot.token is not None and secrets.compare_digest(slot.token, token):
                if conn.kind == "acpc" and slot.kind != "acpc" or conn.kind != "acpc" and slot.kind == "acpc":
                    raise P.ProtocolError("bad_token", "this seat plays through the other protocol")
                return self._attach_slot(conn, slot)
        raise P.ProtocolError("bad_token", "no player of this match has that token")

    def _attach_slot(self, conn: Connection, slot: Slot) -> Slot:
        old = slot.conn
        if old is not None and old is not conn:
            old.send(P.error_message("replaced", "another connection joined with this seat's token", True))
            old.slot = None
            old.close()
        if conn.slot is not None and conn.slot is not slot and conn.slot.conn is conn:
            conn.slot.conn = None
        conn.slot = slot
        slot.conn = conn
        match = slot.match
        if match.seated is not None and match.all_seated():
            match.seated.set()
        return slot

    # ------------------------------------------------------------------ messages (JSON / WebSocket)
    def on_raw(self, conn: Connection, raw) -> None:
        """Handle one raw message of the JSON or WebSocket door (never raises; the door has
        applied the rate limit by reading no faster)."""
        try:
            msg = P.parse_message(raw)
            self.on_message(conn, msg)
        except P.ProtocolError as exc:
            self._fault(conn, exc.code, exc.message)
        except Exception as exc:  # never let one message stop the server
            # one line per failure: a client that repeats a crashing message must not fill the log
            log.error("message handling failed: %s: %.200s", type(exc).__name__, exc)
            log.debug("message handling failed", exc_info=True)
            conn.error("bad_message", f"could not handle the message: {type(exc).__name__}")

    def _fault(self, conn: Connection, code: str, message: str) -> None:
        slot = conn.slot
        if code == "seat_taken":
            conn.error(code, message, fatal=True)
            return
        folds = code in ("bad_json", "bad_message", "illegal_action", "too_large")
        if folds and slot is not None and slot.pending is not None and not slot.pending.done():
            action = P.default_action(slot.pending_state)
            message += f" ({'fold' if action == 0 else 'check'} played for you)"
            slot.resolve(action, f"{code}")
        conn.error(code, message)

    def on_message(self, conn: Connection, msg: Dict[str, Any]) -> None:
        kind = msg["type"]
        if kind == "action":
            slot = conn.slot
            if slot is None:
                raise P.ProtocolError("not_joined", "join a match before sending actions")
            if slot.pending is None or slot.pending.done():
                raise P.ProtocolError("not_your_turn", "no decision of yours is pending")
            hand = msg.get("hand")
            if hand is not None and hand != slot.match.hand:
                raise P.ProtocolError("stale", f"action for hand {hand!r}; the current hand is {slot.match.hand}")
            action = P.action_from_message(slot.pending_state, msg, slot.pending_view)
            slot.resolve(action)
        elif kind == "join":
            if self._foreign(conn, msg.get("match")):
                return
            slot = self.attach(conn, msg.get("match"), msg.get("token"))
            conn.send(slot.match.welcome(slot))
            slot.match.send_state_to(slot)
        elif kind == "create":
            self._require_operator(conn, msg, "create")
            match = self.create_match(msg)
            asyncio.get_running_loop().create_task(self._start_created(conn, match, join=False))
        elif kind == "cancel":
            # the operator cancels any match; a player cancels its own (the token of one of its seats)
            token = msg.get("token")
            if not isinstance(token, str):
                self._require_operator(conn, msg, "cancel")
            if self._foreign(conn, msg.get("match")):
                return
            match = self.matches.get(msg.get("match")) if isinstance(msg.get("match"), str) else None
            if match is None:
                raise P.ProtocolError("unknown_match", f"no running match {str(msg.get('match'))[:20]!r}")
            by = "the operator"
            if isinstance(token, str):
                owner = next((sl for sl in match.slots if sl.token is not None
                              and secrets.compare_digest(sl.token.encode(), token.encode())), None)
                if owner is None:
                    raise P.ProtocolError("bad_token", "no player of this match has that token")
                by = f"player {owner.player} ({owner.name})"
            self.cancel_match(match, "cancelled", f"cancelled by {by}")
            conn.send({"type": "cancelled", "match": match.id, "hands_done": match.hands_done})
        elif kind == "admin":
            self._require_operator(conn, msg, "admin")
            conn.send(self.admin_view())
        elif kind == "play":
            opponents = msg.get("opponents", msg.get("opponent", "rule-based"))
            if isinstance(opponents, str):
                opponents = [opponents]
            if not isinstance(opponents, list):
                raise P.ProtocolError("bad_request", "'opponent' is an agent name or a list of names")
            name = msg.get("name", "you")
            req = dict(msg)
            req["players"] = [{"agent": "remote", "name": name}] + list(opponents)
            if not self._operator(msg):
                # anyone may start a match against the house agents, a few at a time per address
                mine = sum(1 for m in self.matches.values() if m.creator == conn.addr)
                if mine >= self.max_plays_per_address:
                    raise P.ProtocolError("server_busy", f"{mine} matches started from your address are "
                                                         f"running (the limit is {self.max_plays_per_address})")
            match = self.create_match(req)
            if not self._operator(msg):
                match.creator = conn.addr
            asyncio.get_running_loop().create_task(self._start_created(conn, match, join=True))
        elif kind == "ping":
            conn.send({"type": "pong"})
        elif kind == "stats":
            snap = self.stats.snapshot(len(self.matches), len(self.connections))
            snap["worker"], snap["workers"] = self.worker, self.workers
            conn.send(snap)
        elif kind == "agents":
            conn.send({"type": "agents", "agents": self.house_agents()})
        else:
            raise P.ProtocolError("bad_message", f"unknown message type {kind[:30]!r}")

    def _operator(self, msg: Dict[str, Any]) -> bool:
        """Whether a message carries the operator's rights: always when the server has no operator
        token (loopback default), else when its ``operator`` field is the token."""
        if self.operator_token is None:
            return True
        given = msg.get("operator")
        return isinstance(given, str) and secrets.compare_digest(given.encode(), self.operator_token.encode())

    def _require_operator(self, conn: Connection, msg: Dict[str, Any], what: str) -> None:
        if not self._operator(msg):
            raise P.ProtocolError("forbidden", f"{what} needs the operator token ('operator' field) on this server")

    def admin_view(self) -> Dict[str, Any]:
        """The operator's listing: running matches (players, progress, connected seats, idle
        seconds), matches skipped at start, connections (per address, the busiest 20) and the limits."""
        now = time.monotonic()
        matches = [{"match": m.id, "game": m.spec["game"], "hands_done": m.hands_done, "hands": m.hands_total,
                    "players": [s.name for s in m.slots], "kinds": [s.kind for s in m.slots],
                    "connected": [s.conn is not None for s in m.slots],
                    "ports": {str(s.player): s.port for s in m.slots if s.kind == "acpc"},
                    "started": m.started, "idle_seconds": round(now - m.idle_since, 1) if m.remote_slots else None}
                   for m in self.matches.values()]
        busiest = sorted(self.per_address.items(), key=lambda kv: -kv[1])[:20]
        return {"type": "admin", "worker": self.worker, "matches": matches, "skipped": dict(self.skipped),
                "connections": len(self.connections), "per_address": dict(busiest), "limits": self.limits()}

    def limits(self) -> Dict[str, Any]:
        """The server's limits (``docs/platform.md``, "Limits")."""
        return {"max_matches": self.max_matches, "max_connections": self.max_connections,
                "max_per_address": self.max_per_address, "max_plays_per_address": self.max_plays_per_address,
                "max_acpc_seats": self.max_acpc_seats, "acpc_ports_open": self.acpc_ports_open,
                "fd_limit": self.fd_limit, "idle_timeout": self.idle_timeout,
                "match_idle_timeout": self.match_idle_timeout, "rate_per_second": self.rate_per_second,
                "rate_burst": self.rate_burst, "operator_token": self.operator_token is not None}

    async def _start_created(self, conn: Connection, match: Match, join: bool) -> None:
        try:
            await self._open_acpc_ports(match, store=False)
            for slot, record in zip(match.slots, match.players_record):
                if slot.kind == "acpc":
                    if record.get("port") not in (None, slot.port):
                        raise OSError(f"port {record['port']} of player {slot.player} is in use")
                    record["port"] = slot.port
            if match.cancelled:  # cancelled before it was stored (the same read as its create)
                self._close_acpc_ports(match)
                return
            self.store.create_match(match.id, match.spec, match.players_record)
        except Exception as exc:  # no port, or the database refused: nothing of the match remains
            self.matches.pop(match.id, None)
            self._close_acpc_ports(match)
            log.warning("create of match %s failed: %s: %s", match.id, type(exc).__name__, exc)
            conn.error("server_busy", f"could not open the match: {type(exc).__name__}: {str(exc)[:160]}")
            return
        conn.send({"type": "created", "match": match.id, "hands": match.hands_total, "seed": match.seed,
                   "players": [s.name for s in match.slots],
                   "tokens": {str(s.player): s.token for s in match.slots if s.kind != "house"},
                   "acpc_ports": {str(s.player): s.port for s in match.slots if s.kind == "acpc"}})
        if join:
            slot = match.slots[0]
            self._attach_slot(conn, slot)
            conn.send(match.welcome(slot))
        match.start()

    # ------------------------------------------------------------------ doors
    def _json_door(self, initial: bytes = b"") -> "_JsonDoor":
        """A protocol instance of the JSON door (one per connection)."""
        return _JsonDoor(self, initial)

    async def accept_handed(self, door: str, sock, data: bytes) -> None:
        """Serve a connection another worker handed over (``data``: its bytes not handled yet)."""
        sock.setblocking(False)
        if door == "acpc":
            reader, writer = await asyncio.open_connection(sock=sock, limit=P.MAX_MESSAGE_BYTES * 4)
            await self._acpc_client(reader, writer, None, data)
        else:
            await asyncio.get_running_loop().connect_accepted_socket(lambda: self._json_door(data), sock)

    def _hand_over(self, conn: Connection, door: str, data: bytes) -> bool:
        """Pass the connection's socket (and the bytes read but not handled) to its match's worker."""
        conn.flush()
        try:
            self.handoff(conn.handoff_to, door, conn.writer.get_extra_info("socket"), data)
        except OSError as exc:
            log.warning("hand-over to worker %s failed: %s", conn.handoff_to, exc)
            return False
        conn.closed = True
        self.stats.handoffs += 1
        conn.writer.close()  # closes this process's descriptor only: the peer stays connected
        return True

    async def _read_lines(self, reader: asyncio.StreamReader, conn: Connection, handle, initial: bytes = b"") -> bytes:
        """Split the stream into lines; an over-long line is answered with too_large and skipped.

        Returns the bytes not handled yet when the connection is handed to another worker."""
        buf = initial
        skipping = False
        first = bool(initial)
        while not conn.closed:
            if first:
                first = False
            else:
                try:
                    chunk = await reader.read(65536)
                except (ConnectionError, OSError):
                    return b""
                if not chunk:
                    return b""
                buf += chunk
            while True:
                nl = buf.find(b"\n")
                if nl < 0:
                    if len(buf) > P.MAX_MESSAGE_BYTES:
                        if not skipping:
                            conn_slot_fault = P.ProtocolError("too_large", f"message longer than {P.MAX_MESSAGE_BYTES} bytes")
                            self._fault(conn, conn_slot_fault.code, conn_slot_fault.message)
                        skipping = True
                        buf = b""
                    break
                raw, buf = buf[:nl + 1], buf[nl + 1:]
                line = raw[:-1]
                if skipping:
                    skipping = False
                    continue
                line = line.rstrip(b"\r")
                if not line.strip():
                    continue
                while not conn.allow():  # over the rate: slow the agent down, never drop its line
                    await asyncio.sleep(conn.wait_for_token())
                    if conn.closed:
                        return b""
                handle(line)
                if conn.handoff_to is not None:
                    return raw + buf
                if conn.closed:
                    return b""
        return b""

    async def _ws_client(self, ws) -> None:
        conn = Connection(self, "ws", ws=ws)
        if not self.admit(conn):
            return
        conn.send({"type": "hello", "server": "cfrkit", "protocol": 1, "agents": self.house_agents()})
        try:
            async for message in ws:
                raw = message.encode("utf-8") if isinstance(message, str) else message
                while not conn.allow():  # over the rate: wait (the socket buffers), never drop
                    await asyncio.sleep(conn.wait_for_token())
                self.on_raw(conn, raw)
        except Exception:  # closed, oversized frame, protocol error: only this connection ends
            pass
        finally:
            self.release(conn)
            conn.close()

    def _http_request(self, connection, request):
        from websockets.datastructures import Headers
        from websockets.http11 import Response

        path = request.path.split("?")[0]
        if self.origins is not None and not self._host_allowed(request.headers.get("Host")):
            # DNS rebinding: a hostile name resolved to this address reaches it with its own Host
            body = b"forbidden host\n"
            return Response(403, "Forbidden", Headers([("Content-Type", "text/plain"),
                                                       ("Content-Length", str(len(body)))]), body)
        if path == "/ws":
            return None
        if path in ("/", "/index.html"):
            body = (STATIC_DIR / "index.html").read_bytes()
            ctype = "text/html; charset=utf-8"
        elif path == "/api/matches":
            rows = [{"match": m.id, "hands_done": m.hands_done, "hands": m.hands_total,
                     "players": [s.name for s in m.slots]} for m in self.matches.values()]
            body = json.dumps(rows).encode()
            ctype = "application/json"
        elif path == "/api/stats":
            body = json.dumps(self.stats.snapshot(len(self.matches), len(self.connections))).encode()
            ctype = "application/json"
        else:
            body, ctype = b"not found\n", "text/plain"
            return Response(404, "Not Found", Headers([("Content-Type", ctype), ("Content-Length", str(len(body)))]), body)
        return Response(200, "OK", Headers([("Content-Type", ctype), ("Content-Length", str(len(body))),
                                            ("Cache-Control", "no-store")]), body)

    async def _acpc_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                           fixed: Optional[Slot], initial: bytes = b"") -> None:
        conn = Connection(self, "acpc", writer=writer)
        if not self.admit(conn):
            return
        state = {"version": False}

        def handle(raw: bytes) -> None:
            try:
                self._acpc_line(conn, raw.decode("ascii", "replace"), fixed, state)
            except P.ProtocolError as exc:
                self._fault(conn, exc.code, exc.message)
            except Exception as exc:
                log.error("acpc line failed: %s: %.200s", type(exc).__name__, exc)
                log.debug("acpc line failed", exc_info=True)
                conn.error("bad_message", f"could not handle the line: {type(exc).__name__}")

        rest = b""
        try:
            rest = await self._read_lines(reader, conn, handle, initial)
        except asyncio.CancelledError:  # server shutting down
            pass
        finally:
            self.release(conn)
            if conn.handoff_to is not None and self._hand_over(conn, "acpc", rest):
                return
            conn.close()

    def _acpc_line(self, conn: Connection, line: str, fixed: Optional[Slot], st: Dict[str, Any]) -> None:
        if line.startswith("#") or line.startswith(";"):
            return
        if not st["version"]:
            if line.startswith("TOKEN:") and fixed is None and conn.slot is None:
                parts = line.split(":")
                if len(parts) != 3:
                    raise P.ProtocolError("bad_message", "expected TOKEN:<match>:<token>")
                if self._foreign(conn, parts[1]):
                    return
                self.attach(conn, parts[1], parts[2])
                return
            if not line.startswith("VERSION:2."):
                raise P.ProtocolError("bad_message", "the first line must be VERSION:2.0.0")
            if fixed is None and conn.slot is None:
                raise P.ProtocolError("not_joined", "send TOKEN:<match>:<token> before VERSION on the shared ACPC door")
            if fixed is not None and fixed.conn is not None and fixed.conn is not conn and not fixed.conn.closed:
                # the seat's owner is connected: a second agent on its port does not take it over
                # (refused after its VERSION line is read, so the error line reaches it); the owner
                # reconnects here once its connection is gone, or takes over with the seat's token
                # on the shared door (TOKEN:<match>:<token>), as a JSON seat's token does
                raise P.ProtocolError("seat_taken", f"player {fixed.player} of match {fixed.match.id} is "
                                                    f"connected already; a second connection is refused")
            st["version"] = True
            if fixed is not None:
                self._attach_slot(conn, fixed)
            conn.slot.match.send_state_to(conn.slot)
            return
        slot = conn.slot
        if slot is None:
            raise P.ProtocolError("not_joined", "this connection has no seat")
        if not line.startswith("MATCHSTATE:"):
            raise P.ProtocolError("bad_message", "expected MATCHSTATE:<position>:<hand>:<betting>:<cards>:<action>")
        prefix, _, token = line.rpartition(":")
        if slot.pending is None or slot.pending.done():
            raise P.ProtocolError("not_your_turn", "no decision of yours is pending")
        if prefix != slot.pending_matchstate:
            raise P.ProtocolError("stale", f"the state {prefix[:80]!r} is not the current one")
        try:
            action = parse_response(slot.pending_state, token)
        except MatchStateError as exc:
            raise P.ProtocolError("bad_message", str(exc)) from None
        if not slot.pending_state.is_legal(action):
            raise P.ProtocolError("illegal_action", f"{token[:20]!r} is not legal: "
                                                    f"{slot.pending_state.legal_actions_summary()}")
        slot.resolve(action)


async def run_server(db_path: str, host: str, port: int, acpc_port: Optional[int], http_port: Optional[int],
                     ready=None) -> None:
    """Start a server and run until cancelled (``ready(server)`` is called once the doors are bound)."""
    server = Server(db_path, host, port, acpc_port, http_port)
    await server.start()
    if ready is not None:
        ready(server)
    try:
        await server.serve_forever()
    finally:
        await server.close()
