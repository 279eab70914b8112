"""Client library of the platform: write ``act(state)``, the library does the rest.

>>> class MyBot(Client):                                     # doctest: +SKIP
...     def act(self, state):
...         return "call"
>>> MyBot("127.0.0.1", 1080, play={"opponent": "ar", "hands": 1000}).run()   # doctest: +SKIP

``state`` is the server's ``state`` message (a dict, see ``docs/platform.md``): own hole cards,
board, pot, stacks, ``legal`` actions and the ACPC ``matchstate`` string.  ``act`` returns
``"fold"``, ``"check"``, ``"call"``, ``("raise", amount)`` or an action dict
``{"action": "raise", "amount": N}`` (raise-to total in chips).  The client reconnects with its
seat's token when the connection drops (e.g. a server restart) for up to ``reconnect`` seconds.

:class:`AgentClient` plays a cfrkit :class:`~cfrkit.agents.poker.PokerAgent` (the built-in agents
as clients); :func:`run_clients` runs many clients concurrently in one process (load tests).
"""
from __future__ import annotations

import asyncio
import socket
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from cfrkit.games.base import GameError
from cfrkit.platform.jsonlines import dumps, loads


class PlatformClientError(GameError):
    """The client could not reach the server, or the server refused the session."""


@dataclass
class ClientResult:
    """What a session saw: hands finished (hand index -> own chips won), errors, totals."""

    match: Optional[str] = None
    player: Optional[int] = None
    token: Optional[str] = None
    hands: Dict[int, float] = field(default_factory=dict)
    errors: List[Dict[str, Any]] = field(default_factory=list)
    totals: Optional[List[float]] = None
    finished: bool = False
    reconnects: int = 0
    actions: int = 0

    @property
    def chips(self) -> float:
        return float(sum(self.hands.values()))


class Client:
    """A platform player.  Subclass and implement :meth:`act` (see the module docstring).

    Either ``play`` (a dict: ``opponent`` (agent name or list), ``hands``, ``seed``, ``game``,
    ``duplicate``, ``time_per_action``, ``time_bank``) starts a match against built-in agents, or
    ``match`` + ``token`` join a seat of an existing match.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 1080, *, play: Optional[Dict[str, Any]] = None,
                 match: Optional[str] = None, token: Optional[str] = None, reconnect: float = 30.0,
                 connect_timeout: float = 10.0):
        if play is None and not (match and token):
            raise PlatformClientError("give either play={...} or match= and token=")
        self.host, self.port = host, int(port)
        self.play = play
        self.result = ClientResult(match=match, token=token)
        self.reconnect = float(reconnect)
        self.connect_timeout = float(connect_timeout)
        self.welcome: Optional[Dict[str, Any]] = None

    # ------------------------------------------------------------------ user hooks
    def act(self, state: Dict[str, Any]):
        """Return this player's action for ``state`` (see the module docstring)."""
        raise NotImplementedError("implement act(state)")

    def on_welcome(self, msg: Dict[str, Any]) -> None:
        """Called when the seat is joined (``welcome`` message, has the game definition)."""

    def on_hand_end(self, msg: Dict[str, Any]) -> None:
        """Called at the end of each hand (``hand_end`` message)."""

    # ------------------------------------------------------------------ running
    def run(self) -> ClientResult:
        """Play until the match ends; returns the :class:`ClientResult`."""
        return asyncio.run(self.run_async())

    @staticmethod
    def _normalise(action) -> Dict[str, Any]:
        if isinstance(action, str):
            return {"type": "action", "action": action}
        if isinstance(action, tuple):
            return {"type": "action", "action": action[0], "amount": int(action[1])}
        if isinstance(action, dict):
            out = dict(action)
            out.setdefault("type", "action")
            return out
        raise PlatformClientError(f"act() returned {action!r}; expected 'fold', 'check', 'call', "
                                  f"('raise', amount) or a dict")

    async def _connect(self) -> "_Session":
        loop = asyncio.get_running_loop()
        deadline = time.monotonic() + self.reconnect
        while True:
            try:
                _, session = await asyncio.wait_for(
                    loop.create_connection(lambda: _Session(self, loop), self.host, self.port), self.connect_timeout)
                return session
            except (OSError, asyncio.TimeoutError) as exc:
                if time.monotonic() > deadline:
                    raise PlatformClientError(f"cannot reach the platform at {self.host}:{self.port}: {exc}") from None
                await asyncio.sleep(0.2)

    async def run_async(self) -> ClientResult:
        """The client loop (asyncio); reconnects with the token after a dropped connection."""
        res = self.result
        while True:
            session = await self._connect()
            try:
                if res.token and res.match:
                    first = {"type": "join", "match": res.match, "token": res.token}
                else:
                    first = dict(self.play)
                    first["type"] = "play"
                session.transport.write(dumps(first) + b"\n")
                done = await session.done
            except (ConnectionError, OSError, asyncio.IncompleteReadError):
                done = False
            finally:
                session.transport.close()
            if done:
                return res
            if not (res.token and res.match):
                raise PlatformClientError("the connection dropped before the match was created")
            res.reconnects += 1
            await asyncio.sleep(0.05)

    def _handle(self, msg: Dict[str, Any], writer) -> bool:
        """Handle one server message; True when the session is over (the match ended)."""
        res = self.result
        kind = msg.get("type")
        if kind == "state":
            if msg.get("to_act"):
                out = self._normalise(self.act(msg))
                out["hand"] = msg["hand"]
                writer.write(dumps(out) + b"\n")
                res.actions += 1
        elif kind == "hand_end":
            res.hands[int(msg["hand"])] = float(msg["player_returns"][msg["player"]])
            res.totals = msg["totals"]
            self.on_hand_end(msg)
        elif kind == "welcome":
            res.match, res.player, res.token = msg["match"], msg["player"], msg["token"]
            self.welcome = msg
            self.on_welcome(msg)
            if msg["hands_done"] >= msg["hands"]:
                res.finished = True
                return True
        elif kind == "match_end":
            res.totals = msg["totals"]
            res.finished = True
            return True
        elif kind == "error":
            res.errors.append(msg)
            if msg.get("code") in ("unknown_match", "bad_token", "bad_request", "server_busy") or \
                    (msg.get("fatal") and msg.get("code") != "replaced"):
                if msg.get("code") == "unknown_match" and res.hands:
                    res.finished = True  # the match ended while we were away
                    return True
                raise PlatformClientError(f"server refused: {msg.get('code')}: {msg.get('message')}")
        elif kind == "created":
            res.match = msg["match"]
            tokens = msg.get("tokens") or {}
            if len(tokens) == 1:
                res.token = next(iter(tokens.values()))
        return False


class _Session(asyncio.Protocol):
    """One connection of a :class:`Client`: splits the server's lines and hands each message to
    ``Client._handle`` in the loop step that reads it (the server writes the messages of one step
    in one segment: a hand's end and the next state are handled in one wake-up).  ``done``: True
    when the match is over, False when the connection dropped, or the exception a hook raised."""

    def __init__(self, client: Client, loop):
        self.client = client
        self.done = loop.create_future()
        self.buf = b""
        self.transport = None

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self.done.done():
            return
        buf = self.buf + data if self.buf else data
        start = 0
        handle, transport = self.client._handle, self.transport
        try:
            while True:
                nl = buf.find(b"\n", start)
                if nl < 0:
                    break
                line, start = buf[start:nl], nl + 1
                if line.strip() and handle(loads(line), transport):
                    self._finish(True)
                    return
        except Exception as exc:  # a hook's ConnectionError reconnects; anything else ends run_async
            self._finish(exc)
            return
        self.buf = buf[start:] if start else buf
        if len(self.buf) > (1 << 24):
            self._finish(PlatformClientError("the server sent a line longer than 16 MiB"))

    def _finish(self, result) -> None:
        if not self.done.done():
            if isinstance(result, BaseException):
                self.done.set_exception(result)
            else:
                self.done.set_result(result)
        self.transport.close()

    def connection_lost(self, exc) -> None:
        if not self.done.done():
            self.done.set_result(False)


class AgentClient(Client):
    """Plays a cfrkit :class:`~cfrkit.agents.poker.PokerAgent` through the JSON door.

    The agent sees a :class:`~cfrkit.games.holdem.game.HoldemState` rebuilt from the state's
    ACPC ``matchstate`` (opponents' hidden cards filled arbitrarily, as with ACPC clients)."""

    def __init__(self, agent, host: str = "127.0.0.1", port: int = 1080, **kwargs):
        super().__init__(host, port, **kwargs)
        self.agent = agent
        self.game = None
        self._hand: Optional[Tuple[str, int]] = None

    def on_welcome(self, msg: Dict[str, Any]) -> None:
        from cfrkit.games.holdem.definition import parse_definition
        from cfrkit.games.holdem.game import HoldemGame

        self.game = HoldemGame(parse_definition(msg["definition"]))

    def act(self, state: Dict[str, Any]):
        from cfrkit.games.holdem.matchstate import state_from_matchstate
        from cfrkit.platform.protocol import action_to_message

        key = (state["match"], state["hand"])
        if key != self._hand:
            self._hand = key
            self.agent.new_hand()
        s = state_from_matchstate(self.game, state["matchstate"])
        return action_to_message(s, self.agent.act(s))


async def run_clients(clients: List[Client]) -> List[Any]:
    """Run clients concurrently in this event loop; returns results or the exceptions raised."""
    return await asyncio.gather(*(c.run_async() for c in clients), return_exceptions=True)


def request(host: str, port: int, message: Dict[str, Any], reply_types: Tuple[str, ...],
            timeout: float = 30.0) -> Dict[str, Any]:
    """Send one message over the JSON door and return the first reply whose ``type`` is in
    ``reply_types`` (``create`` -> ``created``, ``cancel`` -> ``cancelled``, ``admin`` -> ``admin``).

    Raises :class:`PlatformClientError` with a one-line message when the server cannot be reached,
    closes the connection, answers with an ``error`` or does not answer within ``timeout`` seconds."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock, sock.makefile("rwb") as stream:
            stream.write(dumps(message) + b"\n")
            stream.flush()
            for line in stream:
                try:
                    msg = loads(line)
                except ValueError:
                    raise PlatformClientError(f"{host}:{port} is not a cfrkit platform server "
                                              f"(it sent {line[:60]!r})") from None
                if not isinstance(msg, dict):
                    continue
                if msg.get("type") in reply_types:
                    return msg
                if msg.get("type") == "error":
                    raise PlatformClientError(f"server refused: {msg.get('code')}: {msg.get('message')}")
    except socket.timeout:
        raise PlatformClientError(f"no answer from {host}:{port} within {timeout:g} s") from None
    except OSError as exc:
        raise PlatformClientError(f"cannot reach {host}:{port}: {exc.strerror or exc}") from None
    raise PlatformClientError(f"{host}:{port} closed the connection without answering")


def create_match(host: str, port: int, players: List[Any], *, operator: Optional[str] = None,
                 timeout: float = 30.0, **settings: Any) -> Dict[str, Any]:
    """Create a match on a platform server and return its ``created`` message: ``match`` (id),
    ``tokens`` (player -> seat token, remote and ACPC seats), ``acpc_ports`` (player -> the TCP port
    an unchanged ACPC agent connects to), ``hands``, ``seed``, ``players``.

    ``players``: one entry per seat of the game, an agent name, ``"remote"``, ``"acpc"`` or
    ``{"agent": ..., "name": ...}``; ``settings``: ``game``, ``hands``, ``seed``, ``duplicate``,
    ``time_per_action`` and ``time_bank`` (seconds); ``operator``: the server's operator token."""
    message: Dict[str, Any] = dict(settings, type="create", players=list(players))
    if operator is not None:
        message["operator"] = operator
    return request(host, port, message, ("created",), timeout)
