"""Play a cfrkit poker agent against an ACPC dealer (protocol v2.0.0 over TCP).

The client sends ``VERSION:2.0.0\\r\\n``, then for every ``MATCHSTATE`` line the dealer sends it
rebuilds the state (:func:`~cfrkit.games.holdem.matchstate.state_from_matchstate`); when it is the
agent's turn it answers ``<the same line>:<action>\\r\\n``.  Comment lines (``#``, ``;``) are ignored.
A malformed line (or one the game's rules reject) is reported through ``report`` and skipped --
the client never answers it and never waits on it; a dealer silent for ``timeout`` seconds ends the
session with :class:`ClientError` instead of hanging.
"""
from __future__ import annotations

import socket
import sys
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from cfrkit.agents.poker import PokerAgent
from cfrkit.games.base import GameError
from cfrkit.games.holdem.game import HoldemGame
from cfrkit.games.holdem.matchstate import (MatchStateError, action_string, parse_matchstate,
                                            state_from_matchstate)

PROTOCOL_VERSION = "VERSION:2.0.0"
MAX_LINE = 1 << 16


class ClientError(GameError):
    """The session could not go on (connection refused or lost, dealer silent past the timeout)."""


@dataclass
class ClientSummary:
    """What happened in a session: hands finished, chips won (sum over hands), malformed lines."""

    hands: int = 0
    chips: float = 0.0
    actions_sent: int = 0
    malformed: List[str] = field(default_factory=list)

    def __str__(self) -> str:
        per_hand = self.chips / self.hands if self.hands else 0.0
        return (f"hands {self.hands}, chips won {self.chips:+g} ({per_hand:+.2f} per hand), "
                f"actions sent {self.actions_sent}, malformed lines {len(self.malformed)}")


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def play_session(sock: socket.socket, game: HoldemGame, agent: PokerAgent, timeout: float = 30.0,
                 max_hands: Optional[int] = None, report: Callable[[str], None] = _stderr) -> ClientSummary:
    """Run the protocol on a connected socket until the dealer closes it (or ``max_hands``)."""
    summary = ClientSummary()
    sock.settimeout(timeout)
    try:  # small request/response messages: do not let Nagle's algorithm delay them
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass
    sock.sendall((PROTOCOL_VERSION + "\r\n").encode("ascii"))
    buffer = b""
    finished_hands: Dict[int, bool] = {}
    current_hand = None
    while True:
        while b"\n" not in buffer:
            if len(buffer) > MAX_LINE:
                report(f"malformed line from server: longer than {MAX_LINE} bytes without a newline; dropped")
                summary.malformed.append(buffer[:80].decode("ascii", "replace"))
                buffer = b""
            try:
                chunk = sock.recv(4096)
            except socket.timeout:
                raise ClientError(f"no message from the dealer for {timeout:g} s; giving up") from None
            except OSError as exc:
                raise ClientError(f"connection to the dealer failed: {exc}") from None
            if not chunk:
                if buffer.strip():
                    report(f"malformed line from server: incomplete final line {buffer[:80]!r}")
                    summary.malformed.append(buffer.decode("ascii", "replace"))
                return summary
            buffer += chunk
        raw, buffer = buffer.split(b"\n", 1)
        line = raw.decode("ascii", "replace").rstrip("\r")
        if not line or line[0] in "#;":
            continue
        try:
            ms = parse_matchstate(line)
            state = state_from_matchstate(game, ms)
        except (MatchStateError, GameError, ValueError) as exc:
            report(f"malformed line from server: {exc}")
            summary.malformed.append(line)
            continue
        if ms.hand_number != current_hand:
            current_hand = ms.hand_number
            agent.new_hand()
        if state.is_terminal():
            if not finished_hands.get(ms.hand_number):
                finished_hands[ms.hand_number] = True
                summary.hands += 1
                summary.chips += state.returns()[ms.position]
                if max_hands is not None and summary.hands >= max_hands:
                    return summary
            continue
        if state.current_player() != ms.position:
            continue
        action = agent.act(state)
        if not state.is_legal(action):
            raise ClientError(f"agent {agent.name} chose illegal action {action} at {line!r}; "
                              f"legal: {state.legal_actions_summary()}")
        try:
            sock.sendall(f"{line}:{action_string(state, action)}\r\n".encode("ascii"))
        except OSError as exc:
            raise ClientError(f"connection to the dealer failed: {exc}") from None
        summary.actions_sent += 1


def run_client(host: str, port: int, game: HoldemGame, agent: PokerAgent, timeout: float = 30.0,
               max_hands: Optional[int] = None, report: Callable[[str], None] = _stderr) -> ClientSummary:
    """Connect to an ACPC dealer at ``host:port`` and play until it closes the connection."""
    try:
        sock = socket.create_connection((host, int(port)), timeout=timeout)
    except OSError as exc:
        raise ClientError(f"cannot connect to the dealer at {host}:{port}: {exc}") from None
    with sock:
        return play_session(sock, game, agent, timeout=timeout, max_hands=max_hands, report=report)
