"""Hand logs as match observers: ACPC logs and PHH (pokerkit's ``.phhs`` layout), hold'em games.

::

    play_match("holdem", agents, 100, observers=[AcpcLogWriter("m.log"), PhhLogWriter("m.phhs")])

Each writer keeps the finished hands and writes its file once, atomically, when the match ends
(also when it stops on an exception: the hands played so far are written).  Names are the agents'
names by seat; hand numbers count the hands played (0-based in ACPC lines, ``[n]`` from 1 in PHH).
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from cfrkit._io import atomic_open
from cfrkit.games.base import GameError
from cfrkit.games.holdem.game import HoldemGame, HoldemState
from cfrkit.games.holdem.history import to_phh, write_acpc_log
from cfrkit.poker.match import Hand, MatchInfo, MatchObserver

__all__ = ["AcpcLogWriter", "PhhLogWriter"]


class _HandLog(MatchObserver):
    """Collects ``(terminal state, hand number, names by seat)`` and writes them at the match's end."""

    kind = "hand"

    def __init__(self, path: str):
        self.path = str(path)
        self.game: Optional[HoldemGame] = None
        self.hands: List[Tuple[HoldemState, int, Sequence[str]]] = []

    def match_start(self, match: MatchInfo) -> None:
        if not isinstance(match.game, HoldemGame):
            raise GameError(f"{self.kind} logs are written for hold'em games only, not {match.game.game_string()!r}")
        self.game = match.game
        self.hands = []

    def hand_end(self, hand: Hand) -> None:
        self.hands.append((hand.state, len(self.hands), list(hand.seat_names)))

    def match_end(self, result) -> None:
        if self.game is not None and self.hands:
            with atomic_open(self.path, "w") as f:
                self.write(f)

    def write(self, f) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class AcpcLogWriter(_HandLog):
    """Write the match's hands as an ACPC log (``STATE:n:betting:cards:returns:names`` lines, ``SCORE``)."""

    kind = "ACPC"

    def write(self, f) -> None:
        write_acpc_log(self.hands, f, self.game)


class PhhLogWriter(_HandLog):
    """Write the match's hands as PHH, one ``[n]``-headed section per hand."""

    kind = "PHH"

    def write(self, f) -> None:
        for state, number, names in self.hands:
            f.write(f"[{number + 1}]\n")
            f.write(to_phh(state, names=names, hand=number))
            f.write("\n")
