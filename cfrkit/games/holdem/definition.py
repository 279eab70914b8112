"""ACPC game definition files: parse, validate, format, and locate the shipped ones.

An ACPC definition is a text block::

    GAMEDEF
    nolimit
    numPlayers = 2
    numRounds = 4
    stack = 20000 20000
    blind = 100 50
    firstPlayer = 2 1 1 1
    numSuits = 4
    numRanks = 13
    numHoleCards = 2
    numBoardCards = 0 3 1 1
    END GAMEDEF

Keywords are case-insensitive; lines starting with ``#`` or ``;`` and blank lines are ignored.
Per-player lists (``stack``, ``blind``, ``ante``) are indexed by seat, per-round lists
(``firstPlayer`` (1-based), ``raiseSize``, ``maxRaises``, ``numBoardCards``) by betting round.
``ante`` is a cfrkit extension (the ACPC server has no antes).  Defaults as in the ACPC server:
stacks ``2**31 - 1`` (effectively unlimited) in limit games, no raise cap, first player 1 in every
round, no blinds.  No-limit definitions must give ``stack`` (with unlimited stacks every raise size up
to 2**31 - 1 would be legal).  Numbers are ASCII integers of at most 2**31 - 1 (the server's limit).

Chips are integers; ``stack`` is a player's whole stack at the start of a hand (blinds and antes are
taken from it).  Any malformed or inconsistent file raises :class:`DefinitionError` naming the line.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Optional, Tuple, Union

from cfrkit.games.base import GameError

_INTEGER = re.compile(r"[-+]?[0-9]{1,10}")
#: ACPC's default stack: effectively unlimited.
UNLIMITED_STACK = 2 ** 31 - 1
#: ACPC's default raise cap (no cap in practice).
UNLIMITED_RAISES = 255
MAX_PLAYERS = 10
MAX_ROUNDS = 4


class DefinitionError(GameError):
    """A malformed or inconsistent ACPC game definition (the message names the file line)."""


@dataclass(frozen=True)
class GameDefinition:
    """Rules of an ACPC-style hold'em game.

    All chip amounts are integers; ``first_player`` is 0-based here (1-based in the file).
    """

    betting: str  # "limit" or "nolimit"
    num_players: int
    num_rounds: int
    stack: Tuple[int, ...]
    blind: Tuple[int, ...]
    ante: Tuple[int, ...]
    raise_size: Tuple[int, ...]
    first_player: Tuple[int, ...]
    max_raises: Tuple[int, ...]
    num_suits: int
    num_ranks: int
    num_hole_cards: int
    num_board_cards: Tuple[int, ...]
    name: str = field(default="", compare=False)

    @property
    def is_limit(self) -> bool:
        return self.betting == "limit"

    @property
    def big_blind(self) -> int:
        """The largest blind (chips): the no-limit minimum raise."""
        return max(self.blind) if self.blind else 0

    @property
    def deck_size(self) -> int:
        return self.num_suits * self.num_ranks

    def deck(self) -> List[int]:
        """Card ids of the deck: ``4 * rank + suit`` for the first ``num_ranks`` ranks and suits."""
        return [4 * r + s for r in range(self.num_ranks) for s in range(self.num_suits)]

    def total_board_cards(self, rounds: Optional[int] = None) -> int:
        """Board cards dealt in rounds ``0 .. rounds-1`` (all rounds by default)."""
        return sum(self.num_board_cards[: self.num_rounds if rounds is None else rounds])

    def with_changes(self, **changes) -> "GameDefinition":
        """A validated copy with some fields replaced (e.g. ``stack=(300, 500)``)."""
        new = replace(self, **changes)
        validate(new)
        return new

    def to_text(self) -> str:
        """The definition in ACPC file syntax (parses back to an equal definition)."""
        lines = ["GAMEDEF", self.betting, f"numPlayers = {self.num_players}", f"numRounds = {self.num_rounds}"]
        if any(s != UNLIMITED_STACK for s in self.stack):
            lines.append("stack = " + " ".join(map(str, self.stack)))
        lines.append("blind = " + " ".join(map(str, self.blind)))
        if any(self.ante):
            lines.append("ante = " + " ".join(map(str, self.ante)))
        if self.is_limit:
            lines.append("raiseSize = " + " ".join(map(str, self.raise_size)))
        lines.append("firstPlayer = " + " ".join(str(p + 1) for p in self.first_player))
        if any(m != UNLIMITED_RAISES for m in self.max_raises):
            lines.append("maxRaises = " + " ".join(map(str, self.max_raises)))
        lines += [f"numSuits = {self.num_suits}", f"numRanks = {self.num_ranks}",
                  f"numHoleCards = {self.num_hole_cards}",
                  "numBoardCards = " + " ".join(map(str, self.num_board_cards)), "END GAMEDEF"]
        return "\n".join(lines) + "\n"


# keyword (lower case) -> (field, kind): kind "int" = one integer, "players"/"rounds" = a list
_KEYWORDS: Dict[str, Tuple[str, str]] = {
    "numplayers": ("num_players", "int"),
    "numrounds": ("num_rounds", "int"),
    "stack": ("stack", "players"),
    "blind": ("blind", "players"),
    "ante": ("ante", "players"),
    "raisesize": ("raise_size", "rounds"),
    "firstplayer": ("first_player", "rounds"),
    "maxraises": ("max_raises", "rounds"),
    "numsuits": ("num_suits", "int"),
    "numranks": ("num_ranks", "int"),
    "numholecards": ("num_hole_cards", "int"),
    "numboardcards": ("num_board_cards", "rounds"),
}


def parse_definition(text: str, source: str = "<definition>") -> GameDefinition:
    """Parse ACPC definition text; errors name ``source`` and the offending line number."""
    values: Dict[str, object] = {}
    where: Dict[str, int] = {}
    betting = None
    state = "before"  # before GAMEDEF, inside, after END GAMEDEF
    end_line = 0
    lines = text.splitlines()

    def fail(lineno: int, msg: str):
        raise DefinitionError(f"{source} line {lineno}: {msg}")

    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith(";"):
            continue
        low = line.lower()
        if state == "before":
            if low != "gamedef":
                fail(lineno, f"expected 'GAMEDEF' to open the definition, got {line!r}")
            state = "inside"
            continue
        if state == "after":
            fail(lineno, f"text after 'END GAMEDEF': {line!r}")
        if " ".join(low.split()) == "end gamedef":
            state = "after"
            end_line = lineno
            continue
        if low in ("limit", "nolimit"):
            if betting is not None:
                fail(lineno, f"betting type given twice ({betting!r} at line {where['betting']})")
            betting, where["betting"] = low, lineno
            continue
        if low in ("potlimit", "pot-limit"):
            fail(lineno, "pot-limit betting is not supported (use 'limit' or 'nolimit')")
        if "=" not in line:
            fail(lineno, f"expected 'keyword = values', 'limit', 'nolimit' or 'END GAMEDEF', got {line!r}")
        key, _, rest = line.partition("=")
        key = key.strip().lower()
        if key not in _KEYWORDS:
            known = ", ".join(["numPlayers", "numRounds", "stack", "blind", "ante", "raiseSize", "firstPlayer",
                               "maxRaises", "numSuits", "numRanks", "numHoleCards", "numBoardCards"])
            fail(lineno, f"unknown keyword {key.strip()!r}; known: {known}")
        name, kind = _KEYWORDS[key]
        if name in values:
            fail(lineno, f"{key!r} given twice (first at line {where[name]})")
        tokens = rest.split()
        if not tokens:
            fail(lineno, f"{key!r} has no value")
        if not all(_INTEGER.fullmatch(t) for t in tokens):
            fail(lineno, f"{key!r} needs integers (ASCII digits, at most {UNLIMITED_STACK}), got {rest.strip()[:60]!r}")
        numbers = [int(t) for t in tokens]
        if any(abs(x) > UNLIMITED_STACK for x in numbers):
            fail(lineno, f"{key!r} values must be at most {UNLIMITED_STACK} (the ACPC server's 32-bit limit)")
        if kind == "int":
            if len(numbers) != 1:
                fail(lineno, f"{key!r} needs one integer, got {len(numbers)}")
            values[name] = numbers[0]
        else:
            values[name] = tuple(numbers)
        where[name] = lineno

    if state == "before":
        raise DefinitionError(f"{source}: no 'GAMEDEF' line found (empty definition?)")
    if state == "inside":
        raise DefinitionError(f"{source} line {len(lines)}: missing 'END GAMEDEF'")
    if betting is None:
        fail(end_line, "betting type missing: add a line 'limit' or 'nolimit'")
    for required in ("num_players", "num_rounds", "num_suits", "num_ranks", "num_hole_cards"):
        if required not in values:
            fail(end_line, f"required keyword {_file_key(required)!r} missing")

    n, r = values["num_players"], values["num_rounds"]
    if not isinstance(n, int) or not 2 <= n <= MAX_PLAYERS:
        fail(where["num_players"], f"numPlayers must be 2..{MAX_PLAYERS}, got {n}")
    if not isinstance(r, int) or not 1 <= r <= MAX_ROUNDS:
        fail(where["num_rounds"], f"numRounds must be 1..{MAX_ROUNDS}, got {r}")
    for name, kind in _KEYWORDS.values():
        if name in values and kind in ("players", "rounds"):
            want = n if kind == "players" else r
            got = len(values[name])
            if got != want:
                what = "numPlayers" if kind == "players" else "numRounds"
                fail(where[name], f"{_file_key(name)!r} needs {want} values ({what} = {want}), got {got}")
    if betting == "nolimit" and "stack" not in values:
        fail(end_line, "no-limit betting needs 'stack' (one per player): without it every raise size up to "
                       f"{UNLIMITED_STACK} chips would be legal")
    if betting == "limit" and "raise_size" not in values:
        fail(end_line, "limit betting needs 'raiseSize' (one per round)")
    if "first_player" in values:
        bad = [p for p in values["first_player"] if not 1 <= p <= n]
        if bad:
            fail(where["first_player"], f"firstPlayer values are 1-based seats 1..{n}, got {bad[0]}")
    definition = GameDefinition(
        betting=betting,
        num_players=n,
        num_rounds=r,
        stack=values.get("stack", (UNLIMITED_STACK,) * n),
        blind=values.get("blind", (0,) * n),
        ante=values.get("ante", (0,) * n),
        raise_size=values.get("raise_size", (0,) * r),
        first_player=tuple(p - 1 for p in values.get("first_player", (1,) * r)),
        max_raises=values.get("max_raises", (UNLIMITED_RAISES,) * r),
        num_suits=values["num_suits"],
        num_ranks=values["num_ranks"],
        num_hole_cards=values["num_hole_cards"],
        num_board_cards=values.get("num_board_cards", (0,) * r),
        name=source,
    )
    try:
        validate(definition)
    except DefinitionError as exc:
        field_name = getattr(exc, "field_name", None)
        lineno = where.get(field_name, end_line) if field_name else end_line
        raise DefinitionError(f"{source} line {lineno}: {exc.args[0]}") from None
    return definition


def _file_key(name: str) -> str:
    return {"num_players": "numPlayers", "num_rounds": "numRounds", "num_suits": "numSuits",
            "num_ranks": "numRanks", "num_hole_cards": "numHoleCards", "num_board_cards": "numBoardCards",
            "raise_size": "raiseSize", "first_player": "firstPlayer", "max_raises": "maxRaises"}.get(name, name)


def validate(d: GameDefinition) -> None:
    """Check a definition's consistency; raises :class:`DefinitionError` (``.field_name`` set)."""

    def bad(field_name: str, msg: str):
        exc = DefinitionError(msg)
        exc.field_name = field_name
        raise exc

    if d.betting not in ("limit", "nolimit"):
        bad("betting", f"betting must be 'limit' or 'nolimit', got {d.betting!r}")
    n, r = d.num_players, d.num_rounds
    if not 2 <= n <= MAX_PLAYERS:
        bad("num_players", f"numPlayers must be 2..{MAX_PLAYERS}, got {n}")
    if not 1 <= r <= MAX_ROUNDS:
        bad("num_rounds", f"numRounds must be 1..{MAX_ROUNDS}, got {r}")
    for name, want in (("stack", n), ("blind", n), ("ante", n), ("raise_size", r), ("first_player", r),
                       ("max_raises", r), ("num_board_cards", r)):
        if len(getattr(d, name)) != want:
            bad(name, f"{_file_key(name)!r} needs {want} values, got {len(getattr(d, name))}")
    if not 1 <= d.num_suits <= 4:
        bad("num_suits", f"numSuits must be 1..4, got {d.num_suits}")
    if not 1 <= d.num_ranks <= 13:
        bad("num_ranks", f"numRanks must be 1..13, got {d.num_ranks}")
    if not 1 <= d.num_hole_cards <= 5:
        bad("num_hole_cards", f"numHoleCards must be 1..5, got {d.num_hole_cards}")
    if any(b < 0 for b in d.num_board_cards) or d.total_board_cards() > 7:
        bad("num_board_cards", f"numBoardCards must be >= 0 and at most 7 in total, got {list(d.num_board_cards)}")
    needed = n * d.num_hole_cards + d.total_board_cards()
    if needed > d.deck_size:
        bad("num_ranks", f"the deck has {d.deck_size} cards (numSuits x numRanks) but the game deals {needed}")
    if any(b < 0 for b in d.blind):
        bad("blind", f"blinds must be >= 0, got {list(d.blind)}")
    if any(a < 0 for a in d.ante):
        bad("ante", f"antes must be >= 0, got {list(d.ante)}")
    if any(s <= 0 for s in d.stack):
        bad("stack", f"stacks must be positive, got {list(d.stack)}")
    for p in range(n):
        if d.stack[p] < d.blind[p] + d.ante[p]:
            bad("stack", f"seat {p + 1}'s stack {d.stack[p]} is smaller than its blind + ante "
                         f"{d.blind[p] + d.ante[p]}")
    if any(not 0 <= p < n for p in d.first_player):
        bad("first_player", f"firstPlayer values must be seats 1..{n}")
    if any(m < 0 for m in d.max_raises):
        bad("max_raises", f"maxRaises must be >= 0, got {list(d.max_raises)}")
    if d.is_limit:
        if any(s <= 0 for s in d.raise_size):
            bad("raise_size", f"limit raiseSize values must be positive, got {list(d.raise_size)}")
    elif d.big_blind <= 0:
        bad("blind", "no-limit betting needs a positive big blind (the minimum raise)")


# --------------------------------------------------------------------------- data files
def data_dir() -> Path:
    """The top-level ``data/`` directory next to the installed ``cfrkit`` package (editable install).

    ``CFRKIT_DATA`` in the environment overrides it.
    """
    env = os.environ.get("CFRKIT_DATA")
    if env:
        return Path(env)
    # this file is cfrkit/games/holdem/definition.py; data/ sits beside the cfrkit package
    return Path(__file__).resolve().parents[3] / "data"


def data_path(*parts: str) -> Path:
    """Path of a file under :func:`data_dir`; raises ``FileNotFoundError`` naming where it looked."""
    path = data_dir().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"data file {'/'.join(parts)} not found at {path} "
                                f"(cfrkit looks in the data/ directory next to the package; set CFRKIT_DATA)")
    return path


def list_definitions() -> List[str]:
    """Names of the shipped ACPC definitions (``data/acpc/<name>.game``), sorted."""
    folder = data_dir() / "acpc"
    if not folder.is_dir():
        return []
    return sorted(p.name[: -len(".game")] for p in folder.glob("*.game"))


def load_definition(name_or_path: Union[str, os.PathLike]) -> GameDefinition:
    """A shipped definition by name (``"holdem.nolimit.2p.reverse_blinds"``) or any file path."""
    text_name = str(name_or_path)
    candidates = [Path(text_name)]
    if os.sep not in text_name and "/" not in text_name:
        base = text_name if text_name.endswith(".game") else text_name + ".game"
        candidates.insert(0, data_dir() / "acpc" / base)
    for path in candidates:
        if path.is_file():
            definition = parse_definition(path.read_text(), source=str(path))
            return replace(definition, name=text_name)
    known = ", ".join(list_definitions()) or "none found"
    raise DefinitionError(f"unknown game definition {text_name!r}: not a file and not one of the shipped "
                          f"definitions ({known})")
