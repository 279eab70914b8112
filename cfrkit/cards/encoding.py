"""Card encoding, parsing and printing.

A card is an int id ``4 * rank + suit`` with rank 0..12 for 2..A and suit 0..3 for c, d, h, s
(the ACPC dealer's order), so ``2c = 0``, ``2d = 1``, ``Ah = 50``, ``As = 51``. A card's text form
is a rank character from ``23456789TJQKA`` followed by a suit character from ``cdhs``
(``"Ah"``, ``"Tc"``). Parsing accepts lower-case ranks and a ``10`` rank as well.
"""
from __future__ import annotations

from typing import Iterable, List, Sequence

import numpy as np

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"
NUM_RANKS = 13
NUM_SUITS = 4
NUM_CARDS = 52

_RANK_OF_CHAR = {ch: i for i, ch in enumerate(RANK_CHARS)}
_RANK_OF_CHAR.update({ch.lower(): i for i, ch in enumerate(RANK_CHARS)})
_SUIT_OF_CHAR = {ch: i for i, ch in enumerate(SUIT_CHARS)}
_SUIT_OF_CHAR.update({ch.upper(): i for i, ch in enumerate(SUIT_CHARS)})
CARD_STRINGS = tuple(r + s for r in RANK_CHARS for s in SUIT_CHARS)


class CardError(ValueError):
    """A card string or card id is malformed, out of range, or duplicated."""


def make_card(rank: int, suit: int) -> int:
    """Card id of rank 0..12 (2..A) and suit 0..3 (c, d, h, s)."""
    if not (0 <= int(rank) < NUM_RANKS) or not (0 <= int(suit) < NUM_SUITS):
        raise CardError(f"rank must be 0..12 and suit 0..3, got rank={rank!r}, suit={suit!r}")
    return 4 * int(rank) + int(suit)


def card_rank(card: int) -> int:
    """Rank 0..12 (2..A) of a card id."""
    return int(card) >> 2


def card_suit(card: int) -> int:
    """Suit 0..3 (c, d, h, s) of a card id."""
    return int(card) & 3


def parse_card(text: str) -> int:
    """Card id of a two-character card string such as ``"Ah"`` or ``"2c"`` (also ``"10h"``)."""
    if not isinstance(text, str):
        raise CardError(f"a card string is expected, got {type(text).__name__} {text!r}")
    s = text.strip()
    if s.startswith("10") and len(s) == 3:
        s = "T" + s[2]
    if len(s) != 2 or s[0] not in _RANK_OF_CHAR or s[1] not in _SUIT_OF_CHAR:
        raise CardError(
            f"bad card {text!r}: expected a rank from {RANK_CHARS} followed by a suit from {SUIT_CHARS}"
        )
    return 4 * _RANK_OF_CHAR[s[0]] + _SUIT_OF_CHAR[s[1]]


def parse_cards(text: str, allow_duplicates: bool = False) -> List[int]:
    """Card ids of a card string such as ``"AhKs"``, ``"Ah Ks 2c"`` or ``"Ah,Ks"``.

    An empty string gives an empty list. Duplicate cards raise :class:`CardError` unless
    ``allow_duplicates``.
    """
    if not isinstance(text, str):
        raise CardError(f"a card string is expected, got {type(text).__name__} {text!r}")
    compact = "".join(ch for ch in text if not ch.isspace() and ch not in ",|/-")
    compact = compact.replace("10", "T")
    if len(compact) % 2:
        raise CardError(f"bad card string {text!r}: expected pairs of rank and suit characters")
    cards = [parse_card(compact[i:i + 2]) for i in range(0, len(compact), 2)]
    if not allow_duplicates:
        check_distinct(cards)
    return cards


def card_to_string(card: int) -> str:
    """Two-character string of a card id (``50 -> "Ah"``)."""
    try:
        c = int(card)
    except (TypeError, ValueError):
        raise CardError(f"a card id 0..51 is expected, got {card!r}") from None
    if not 0 <= c < NUM_CARDS or c != card:
        raise CardError(f"card id must be an integer 0..51, got {card!r}")
    return CARD_STRINGS[c]


def cards_to_string(cards: Iterable[int], sep: str = "") -> str:
    """String of several card ids (``[50, 47] -> "AhKs"``)."""
    return sep.join(card_to_string(c) for c in cards)


def check_distinct(cards: Sequence[int]) -> None:
    """Raise :class:`CardError` if a card id is out of 0..51 or appears twice."""
    seen = 0  # bit set of the ids so far
    for c in cards:
        if type(c) is not int or not 0 <= c < NUM_CARDS:  # anything but a plain valid id: checked (or refused)
            card_to_string(c)
        bit = 1 << int(c)
        if seen & bit:
            raise CardError(f"duplicate card {CARD_STRINGS[int(c)]} in {cards_to_string(cards, ' ')}")
        seen |= bit


def as_card_ids(cards) -> List[int]:
    """Normalise a card string, a sequence of ids or card strings into a list of distinct ids."""
    if isinstance(cards, str):
        return parse_cards(cards)
    out = []
    for c in cards:
        if type(c) is int:  # the common case first (dealt card ids)
            out.append(c)
        elif isinstance(c, str):
            out.append(parse_card(c))
        elif isinstance(c, (int, np.integer)):
            out.append(int(c))
        else:
            raise CardError(f"a card id or card string is expected, got {type(c).__name__} {c!r}")
    check_distinct(out)
    return out


def card_mask(cards: Iterable[int]) -> int:
    """Bit set of card ids (bit ``card``), a 52-bit int."""
    m = 0
    for c in cards:
        m |= 1 << int(c)
    return m
