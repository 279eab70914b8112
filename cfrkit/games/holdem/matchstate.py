"""ACPC protocol v2.0.0 ``MATCHSTATE`` strings: parse into a hold'em state, format from one.

``MATCHSTATE:<position>:<hand number>:<betting>:<cards>`` where betting uses ``f``, ``c``, ``r<N>``
(no-limit raise-to totals; plain ``r`` in limit games) with rounds separated by ``/``, and cards are
``hole|hole|.../board round 1/board round 2...`` with the hole cards of other players empty unless
they were shown down.  A client answers with the same string followed by ``:<action>``.

Parsing rebuilds a full :class:`~cfrkit.games.holdem.game.HoldemState` by replaying the actions;
hole cards the viewer cannot see are filled with unseen cards (the lowest card ids by default, or
a random sample with ``rng``), so the state is exact for everything the viewer knows and formatting
it back from the same position gives the same string.  A hand that ended in a showdown must show the
hole cards of every player who has not folded (the dealer does): otherwise the chips would be counted
from made-up cards, so it is refused.  The syntax is strict: ASCII digits of at most
:data:`MAX_DIGITS` digits, cards as the dealer writes them (``AhKs``: upper-case rank, lower-case
suit, no separators).  Malformed strings and actions the rules
reject raise :class:`MatchStateError` naming the problem.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from cfrkit.games.base import CHANCE, GameError, IllegalActionError
from cfrkit.games.holdem.game import CALL, FOLD, RAISE, HoldemGame, HoldemState, raise_action

_ACTION_RE = re.compile(r"f|c|k|r([0-9]*)|b([0-9]*)")
#: longest number accepted in a MATCHSTATE (hand numbers, raise amounts): 18 digits fit any real match
MAX_DIGITS = 18
_NUMBER_RE = re.compile(r"[0-9]{1,%d}" % MAX_DIGITS)
#: one group of cards as the ACPC dealer writes it: rank (upper case) then suit, no separators
_CARDS_RE = re.compile(r"(?:[2-9TJQKA][cdhs])*")


class MatchStateError(GameError):
    """A malformed ``MATCHSTATE`` string, or one the game's rules reject."""


class HiddenShowdownError(MatchStateError):
    """A finished hand's showdown ``MATCHSTATE`` without a live player's hole cards (it cannot be
    settled: the cards would have to be made up)."""


@dataclass(frozen=True)
class MatchState:
    """The fields of a ``MATCHSTATE`` line (syntax only; see :func:`state_from_matchstate`)."""

    position: int
    hand_number: int
    betting: str
    cards: str

    def __str__(self) -> str:
        return f"MATCHSTATE:{self.position}:{self.hand_number}:{self.betting}:{self.cards}"


def parse_matchstate(line: str) -> MatchState:
    """Split a ``MATCHSTATE`` line into its fields (a trailing ``\\r\\n`` is ignored)."""
    if not isinstance(line, str):
        raise MatchStateError(f"a MATCHSTATE line must be a string, got {type(line).__name__}")
    text = line.rstrip("\r\n")
    if not text.startswith("MATCHSTATE:"):
        raise MatchStateError(f"not a MATCHSTATE line: {text[:80]!r}")
    parts = text.split(":")
    if len(parts) != 5:
        raise MatchStateError(f"MATCHSTATE needs 5 ':'-separated fields "
                              f"(MATCHSTATE:position:hand:betting:cards), got {len(parts)} in {text[:120]!r}")
    _, position, hand, betting, cards = parts
    if not re.fullmatch(r"[0-9]{1,2}", position):
        raise MatchStateError(f"MATCHSTATE position must be a seat number, got {position[:20]!r} in {text[:120]!r}")
    if not _NUMBER_RE.fullmatch(hand):
        raise MatchStateError(f"MATCHSTATE hand number must be a number of at most {MAX_DIGITS} digits, "
                              f"got {hand[:20]!r} in {text[:120]!r}")
    return MatchState(int(position), int(hand), betting, cards)


def game_mismatch(game: HoldemGame, ms: MatchState) -> Optional[str]:
    """Why a (syntactically valid) MATCHSTATE cannot come from ``game``'s dealer, or None.

    Checks the shape only (players, hole cards, rounds, limit vs no-limit raise tokens), so a
    client can tell a wrong game from one bad line at the first message.
    """
    d = game.definition
    if ms.position >= d.num_players:
        return f"position {ms.position}, but the game has {d.num_players} players"
    holes = ms.cards.split("/")[0].split("|")
    if len(holes) != d.num_players:
        return f"the cards show {len(holes)} seats, the game has {d.num_players} players"
    if len(holes[ms.position]) != 2 * d.num_hole_cards:
        return f"the viewer holds {len(holes[ms.position]) // 2} hole card(s), the game deals {d.num_hole_cards}"
    rounds = ms.betting.split("/")
    if len(rounds) > d.num_rounds:
        return f"the betting has {len(rounds)} rounds, the game has {d.num_rounds}"
    if d.is_limit and re.search(r"r[0-9]", ms.betting):
        return "no-limit raises (r<amount>) in a limit game"
    if not d.is_limit and re.search(r"r(?![0-9])", ms.betting):
        return "limit raises (r without an amount) in a no-limit game"
    return None


def parse_betting(betting: str) -> List[List[Tuple[str, Optional[int]]]]:
    """``"r300c/cr900f"`` -> ``[[('r', 300), ('c', None)], [('c', None), ('r', 900), ('f', None)]]``."""
    if not isinstance(betting, str):
        raise MatchStateError(f"betting must be a string, got {type(betting).__name__}")
    rounds = []
    for r, part in enumerate(betting.split("/")):
        actions = []
        pos = 0
        while pos < len(part):
            m = _ACTION_RE.match(part, pos)
            if not m:
                raise MatchStateError(f"bad betting action at {part[pos:pos + 8]!r} in round {r + 1} of {betting!r} "
                                      f"(expected f, c or r<amount>)")
            token = m.group(0)
            if token[0] in "rb":
                digits = token[1:]
                if len(digits) > MAX_DIGITS:
                    raise MatchStateError(f"raise amount {digits[:20]}... in round {r + 1} of {betting[:80]!r} has "
                                          f"more than {MAX_DIGITS} digits")
                actions.append(("r", int(digits) if digits else None))
            elif token == "k":
                actions.append(("c", None))
            else:
                actions.append((token, None))
            pos = m.end()
        rounds.append(actions)
    return rounds


def _parse_cards_field(game: HoldemGame, cards: str):
    from cfrkit.cards import CardError, parse_cards

    d = game.definition
    parts = cards.split("/")
    holes = parts[0].split("|")
    for group in holes + parts[1:]:
        if not _CARDS_RE.fullmatch(group):
            raise MatchStateError(f"cards {cards[:80]!r}: bad card group {group[:20]!r} (ACPC cards are a rank from "
                                  f"23456789TJQKA and a suit from cdhs, e.g. 'AhKs', with no separators)")
    if len(holes) != d.num_players:
        raise MatchStateError(f"cards {cards!r}: expected {d.num_players} '|'-separated hole-card groups, "
                              f"got {len(holes)}")
    try:
        hole = [parse_cards(h) if h else None for h in holes]
        boards = [parse_cards(b) for b in parts[1:]]
    except CardError as exc:
        raise MatchStateError(f"cards {cards!r}: {exc}") from None
    for p, h in enumerate(hole):
        if h is not None and len(h) != d.num_hole_cards:
            raise MatchStateError(f"cards {cards!r}: seat {p} shows {len(h)} hole cards, the game deals "
                                  f"{d.num_hole_cards}")
    deck = set(d.deck())
    seen: List[int] = [c for h in hole if h for c in h] + [c for b in boards for c in b]
    if len(set(seen)) != len(seen):
        raise MatchStateError(f"cards {cards!r}: a card appears twice")
    bad = [c for c in seen if c not in deck]
    if bad:
        from cfrkit.cards import card_to_string

        raise MatchStateError(f"cards {cards!r}: {card_to_string(bad[0])} is not in this game's deck")
    return hole, boards


def state_from_matchstate(game: HoldemGame, line, rng: Optional[random.Random] = None) -> HoldemState:
    """The hold'em state a ``MATCHSTATE`` line describes (see the module docstring)."""
    ms = line if isinstance(line, MatchState) else parse_matchstate(line)
    d = game.definition
    where = str(ms)
    if ms.position >= d.num_players:
        raise MatchStateError(f"{where}: position {ms.position} but the game has {d.num_players} players")
    hole, boards = _parse_cards_field(game, ms.cards)
    if hole[ms.position] is None:
        raise MatchStateError(f"{where}: the viewer's (seat {ms.position}) hole cards are missing")
    rounds = parse_betting(ms.betting)
    if len(rounds) > d.num_rounds:
        raise MatchStateError(f"{where}: betting has {len(rounds)} rounds, the game has {d.num_rounds}")
    # board cards per round, as the cards field lists them (a '/' group for round 0 only if it has cards)
    board_rounds = [r for r in range(len(rounds)) if r > 0 or d.num_board_cards[r] > 0]
    if len(boards) != len(board_rounds):
        raise MatchStateError(f"{where}: {len(rounds)} betting round(s) need {len(board_rounds)} '/'-separated "
                              f"board group(s) in the cards, got {len(boards)}")
    board_of_round = {r: boards[i] for i, r in enumerate(board_rounds)}
    for r, cards in board_of_round.items():
        if len(cards) != d.num_board_cards[r]:
            raise MatchStateError(f"{where}: round {r + 1} needs {d.num_board_cards[r]} board card(s), "
                                  f"got {len(cards)}")
    visible = set(c for h in hole if h for c in h) | set(c for b in boards for c in b)
    unseen = [c for c in d.deck() if c not in visible]
    if rng is not None:
        rng.shuffle(unseen)
    state = game.new_initial_state()
    for p in range(d.num_players):
        cards = hole[p] if hole[p] is not None else [unseen.pop(0) for _ in range(d.num_hole_cards)]
        for c in cards:
            state.apply_action(c)
    for r, actions in enumerate(rounds):
        if board_of_round.get(r):
            if state.current_player() != CHANCE or state.round != r:
                raise MatchStateError(f"{where}: round {r + 1} starts before the betting of round {state.round + 1} "
                                      f"is over")
            for c in board_of_round[r]:
                state.apply_action(c)
        if state.round != r and (actions or state.round < r) and not state.is_terminal():
            raise MatchStateError(f"{where}: betting of round {r + 1} given but the hand is in round "
                                  f"{state.round + 1}")
        for i, (code, amount) in enumerate(actions):
            if state.is_terminal():
                raise MatchStateError(f"{where}: action {i + 1} of round {r + 1} comes after the hand is over")
            if state.current_player() == CHANCE:
                raise MatchStateError(f"{where}: action {i + 1} of round {r + 1} comes after the round is over "
                                      f"(missing '/')")
            action = _action_id(state, code, amount, where, r, i)
            try:
                state.apply_action(action)
            except IllegalActionError as exc:
                raise MatchStateError(f"{where}: action {i + 1} of round {r + 1} "
                                      f"({code}{'' if amount is None else amount}) is illegal: {exc}") from None
    if not state.is_terminal() and state.round >= len(rounds):
        raise MatchStateError(f"{where}: betting of round {state.round} is over but the string has no '/' "
                              f"and board for the next round")
    if state.reached_showdown():
        hidden = [p for p in range(d.num_players) if hole[p] is None and not state.folded[p]]
        if hidden:  # the dealer shows every live hand at a showdown: never settle it with made-up cards
            raise HiddenShowdownError(f"{where}: the hand ends in a showdown but the hole cards of seat(s) "
                                  f"{', '.join(map(str, hidden))} are not shown")
    return state


def _action_id(state: HoldemState, code: str, amount: Optional[int], where: str, r: int, i: int) -> int:
    if code == "f":
        return FOLD
    if code == "c":
        return CALL
    if state.d.is_limit:
        if amount is not None:
            expected = state.raise_range()
            if expected is None or amount != expected[0]:
                raise MatchStateError(f"{where}: limit raise r{amount} (action {i + 1} of round {r + 1}) does not "
                                      f"match the fixed raise-to {expected[0] if expected else 'none'}")
        return RAISE
    if amount is None:
        raise MatchStateError(f"{where}: no-limit raise without an amount (action {i + 1} of round {r + 1})")
    return raise_action(amount)


def format_matchstate(state: HoldemState, position: int, hand_number: int = 0) -> str:
    """``MATCHSTATE:position:hand:betting:cards`` of a state seen from seat ``position``."""
    return f"MATCHSTATE:{position}:{hand_number}:{state.betting_string()}:{state.cards_string(viewer=position)}"


def action_string(state: HoldemState, action: int) -> str:
    """The ACPC response token of an action id in ``state``: ``f``, ``c``, ``r`` or ``r<N>``."""
    return state.action_to_string(action, state.current_player())


def parse_response(state: HoldemState, token: str) -> int:
    """Action id of an ACPC response token (``f``, ``c``, ``k``, ``r``, ``r<N>``) in ``state``."""
    rounds = parse_betting(token)
    if len(rounds) != 1 or len(rounds[0]) != 1:
        raise MatchStateError(f"expected one action (f, c, r<N>), got {token!r}")
    code, amount = rounds[0][0]
    return _action_id(state, code, amount, token, state.round, 0)
