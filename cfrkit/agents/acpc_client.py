"""Play a cfrkit poker agent against an ACPC dealer (protocol v2.0.0 over TCP).

The client sends ``VERSION:2.0.0\\r\\n``, then for every ``MATCHSTATE`` line the dealer sends it
rebuilds the state (:func:`~cfrkit.games.holdem.matchstate.state_from_matchstate`); when it is the
agent's turn it answers ``<the same line>:<action>\\r\\n``.  Comment lines (``#``, ``;``) are ignored.
A malformed line (or one the game's rules reject) is reported through ``report`` and skipped --
the client never answers it and never waits on it.  The session ends with :class:`ClientError`
(never a normal summary) when:

* the first ``MATCHSTATE`` does not fit the game (players, hole cards, rounds), or the first one
  with a raise shows limit raises in a no-limit game or the reverse: the dealer plays another game,
  so nothing the client does would be right;
* the dealer closes the connection in the middle of a hand (killed or crashed);
* the dealer is silent for ``timeout`` seconds when it owes a message (after the client's action,
  at the start of a hand).  While another player is to act, the wait is the opponent's thinking
  time, bounded only by ``opponent_timeout`` (default: none; the dealer enforces its own limits).

A showdown ``MATCHSTATE`` that does not show a live opponent's cards is reported and skipped: its
chips are not counted (cards are never made up).  Chips are summed exactly; with several players use
a game with ``fractional_split=true`` (the ``acpc-client`` command's default) so split pots are
counted in fractions of a chip as the ACPC dealer does.
"""
from __future__ import annotations

import math
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from cfrkit.games.base import GameError
from cfrkit.games.holdem.game import HoldemGame
from cfrkit.games.holdem.matchstate import (HiddenShowdownError, MatchStateError, action_string, game_mismatch,
                                            parse_matchstate, state_from_matchstate)
from cfrkit.poker.agent import PokerAgent

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
    #: hands that ended in a showdown the dealer did not show (not counted in ``hands``/``chips``)
    unsettled_hands: int = 0

    def __str__(self) -> str:
        per_hand = self.chips / self.hands if self.hands else 0.0
        return (f"hands {self.hands}, chips won {format_chips(self.chips)} ({per_hand:+.2f} per hand), "
                f"actions sent {self.actions_sent}, malformed lines {len(self.malformed)}"
                + (f", unsettled hands {self.unsettled_hands}" if self.unsettled_hands else ""))


def format_chips(chips: float) -> str:
    """Signed chips, exact: ``-2292710`` (not ``-2.29271e+06``), fractions to 6 decimals."""
    if float(chips).is_integer():
        return f"{int(chips):+d}"
    return f"{chips:+.6f}".rstrip("0").rstrip(".")


def check_timeout(value: Optional[float], name: str = "timeout", allow_none: bool = False) -> Optional[float]:
    """``value`` as a positive finite number of seconds, or :class:`ClientError`."""
    if value is None and allow_none:
        return None
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ClientError(f"{name} must be a number of seconds, got {value!r}") from None
    if not math.isfinite(seconds) or seconds <= 0 or seconds > 10 ** 7:
        raise ClientError(f"{name} must be a positive, finite number of seconds (at most 1e7), got {value!r}")
    return seconds


def check_port(port) -> int:
    """A TCP port 1..65535, or :class:`ClientError`."""
    if isinstance(port, bool) or not isinstance(port, (int, str)) or not str(port).isascii() \
            or not str(port).strip().isdigit() or not 1 <= int(port) <= 65535:
        raise ClientError(f"port must be a number 1..65535, got {port!r}")
    return int(port)


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def play_session(sock: socket.socket, game: HoldemGame, agent: PokerAgent, timeout: float = 30.0,
                 max_hands: Optional[int] = None, report: Callable[[str], None] = _stderr,
                 opponent_timeout: Optional[float] = None) -> ClientSummary:
    """Run the protocol on a connected socket until the dealer closes it (or ``max_hands``).

    ``timeout``: seconds the dealer may stay silent when it owes a message; ``opponent_timeout``:
    seconds to wait while another player is to act (None: no limit).  See the module docstring.
    """
    timeout = check_timeout(timeout)
    opponent_timeout = check_timeout(opponent_timeout, "opponent_timeout", allow_none=True)
    summary = ClientSummary()
    try:  # small request/response messages: do not let Nagle's algorithm delay them
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass
    try:
        sock.settimeout(timeout)
        sock.sendall((PROTOCOL_VERSION + "\r\n").encode("ascii"))
    except OSError as exc:
        raise ClientError(f"connection to the dealer failed: {exc}") from None
    buffer = b""
    finished_hands: Dict[int, bool] = {}
    current_hand = None
    first_state = True  # no MATCHSTATE accepted yet: a shape mismatch means a wrong --game
    raise_seen = False  # limit and no-limit differ only once a raise is shown
    opponent_to_act = False  # the last state showed another player to act: waiting is its thinking time
    hand_open = False  # a hand has started and its final state has not arrived
    while True:
        while b"\n" not in buffer:
            if len(buffer) > MAX_LINE:
                report(f"malformed line from server: longer than {MAX_LINE} bytes without a newline; dropped")
                summary.malformed.append(buffer[:80].decode("ascii", "replace"))
                buffer = b""
            limit = opponent_timeout if opponent_to_act else timeout
            started = time.monotonic()
            try:
                sock.settimeout(limit)
                chunk = sock.recv(4096)
            except socket.timeout:
                waited = time.monotonic() - started
                who = "while another player was to act" if opponent_to_act else "when it owed a message"
                raise ClientError(f"no message from the dealer for {waited:.3g} s {who}; giving up "
                                  f"({summary.hands} hands finished)") from None
            except OSError as exc:
                raise ClientError(f"connection to the dealer failed: {exc} ({summary.hands} hands finished)") from None
            if not chunk:
                if buffer.strip():
                    report(f"malformed line from server: incomplete final line {buffer[:80]!r}")
                    summary.malformed.append(buffer.decode("ascii", "replace"))
                if hand_open:
                    raise ClientError(f"the dealer closed the connection in the middle of hand {current_hand} "
                                      f"(killed or crashed?) after {summary.hands} finished hands, "
                                      f"{format_chips(summary.chips)} chips")
                return summary
            buffer += chunk
        raw, buffer = buffer.split(b"\n", 1)
        line = raw.decode("ascii", "replace").rstrip("\r")
        if not line or line[0] in "#;":
            continue
        try:
            ms = parse_matchstate(line)
        except MatchStateError as exc:
            report(f"malformed line from server: {exc}")
            summary.malformed.append(line)
            continue
        if first_state or not raise_seen:  # shape checks until the game is confirmed
            mismatch = game_mismatch(game, ms)
            if mismatch and (first_state or "raises" in mismatch):
                raise ClientError(f"the dealer's message {line[:120]!r} does not fit the game "
                                  f"{game.game_string()}: {mismatch}; pass the dealer's game (--game)")
        try:
            state = state_from_matchstate(game, ms)
        except HiddenShowdownError as exc:  # the hand is over, but its chips cannot be counted
            report(f"malformed line from server: {exc}; the hand's chips are not counted")
            summary.malformed.append(line)
            summary.unsettled_hands += 1
            if ms.hand_number == current_hand:
                hand_open = opponent_to_act = False
            continue
        except (MatchStateError, GameError, ValueError) as exc:
            report(f"malformed line from server: {exc}")
            summary.malformed.append(line)
            continue
        first_state = False
        raise_seen = raise_seen or "r" in ms.betting
        if ms.hand_number != current_hand:
            current_hand = ms.hand_number
            agent.new_hand()
        hand_open = not state.is_terminal()
        opponent_to_act = hand_open and state.current_player() != ms.position
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
               max_hands: Optional[int] = None, report: Callable[[str], None] = _stderr,
               opponent_timeout: Optional[float] = None) -> ClientSummary:
    """Connect to an ACPC dealer at ``host:port`` (1..65535) and play until it closes the connection."""
    port = check_port(port)
    timeout = check_timeout(timeout)
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except (OSError, UnicodeError) as exc:
        raise ClientError(f"cannot connect to the dealer at {host}:{port}: {exc}") from None
    with sock:
        return play_session(sock, game, agent, timeout=timeout, max_hands=max_hands, report=report,
                            opponent_timeout=opponent_timeout)
