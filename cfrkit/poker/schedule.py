"""The seat schedule of a match: which deal hand ``i`` plays and who sits where.

Players ``0..n-1`` are the match's entrants (the order of the ``agents`` list); seats are the
game's positions (hold'em: ACPC seats, seat 0 first to act after the flop heads-up; Leduc: the
game's players).  Every hand's chance outcomes come from the view's seeded deal
(:meth:`cfrkit.poker.view.PokerView.deal`, hold'em: :func:`cfrkit.games.holdem.deals.deal_for_hand`
``(game, seed, deal_index)``), so a match can be replayed and split over processes.

* seat rotation: in hand ``i`` player ``j`` sits in seat ``(j + i) mod n`` (each player takes every
  seat in turn);
* duplicate mode: each deal is played ``n`` times in a row, once per rotation (``deal_index =
  i // n``, rotation ``i mod n``): heads-up, the two hands of a deal have the same cards per seat
  with the players swapped (the mirrored deal), which removes most of the luck of the cards from
  the difference.

The platform server (:mod:`cfrkit.platform.server`) and the in-process runner
(:func:`cfrkit.poker.match.play_match`) use this one schedule.
"""
from __future__ import annotations

from typing import Iterator, List, NamedTuple, Tuple

__all__ = ["Seating", "hand_plan", "player_of_seat", "round_up_hands", "seatings"]


def hand_plan(num_players: int, hand_index: int, duplicate: bool) -> Tuple[int, List[int]]:
    """``(deal_index, seat_of_player)`` of hand ``hand_index`` (see the module docstring)."""
    n = int(num_players)
    i = int(hand_index)
    if duplicate:
        deal_index, rotation = divmod(i, n)
    else:
        deal_index, rotation = i, i % n
    return deal_index, [(j + rotation) % n for j in range(n)]


def player_of_seat(seat_of_player: List[int]) -> List[int]:
    """Inverse of ``seat_of_player``: ``player_of_seat(s)[seat]`` is the player in ``seat``."""
    out = [0] * len(seat_of_player)
    for j, s in enumerate(seat_of_player):
        out[s] = j
    return out


def round_up_hands(num_players: int, hands: int, duplicate: bool) -> int:
    """Hands rounded up to a whole number of rotations in duplicate mode (each deal complete)."""
    if not duplicate:
        return int(hands)
    n = int(num_players)
    return -(-int(hands) // n) * n


class Seating(NamedTuple):
    """One hand of a match: its number in play order, its deal and who sits where.

    ``seat_of_player[j]`` is the seat of player (agent) ``j``; ``player_of_seat`` its inverse."""

    hand: int
    deal: int
    seat_of_player: Tuple[int, ...]
    player_of_seat: Tuple[int, ...]


def seatings(num_players: int, deals: int, duplicate: bool, first_deal: int = 0) -> Iterator[Seating]:
    """The hands of a match of ``deals`` deals (``first_deal .. first_deal + deals - 1``), in play order.

    With ``duplicate`` each deal is played ``num_players`` times (once per rotation), else once with
    the rotation of its position in this match (deal ``first_deal + k`` rotated by ``k mod n``)."""
    n = int(num_players)
    total = int(deals) * n if duplicate else int(deals)
    first = int(first_deal)
    # the n rotations, built once (a match plays thousands of hands)
    rotations = []
    for r in range(n):
        seat_of = tuple((j + r) % n for j in range(n))
        rotations.append((seat_of, tuple(player_of_seat(list(seat_of)))))
    for i in range(total):
        deal, r = divmod(i, n) if duplicate else (i, i % n)
        seat_of, player_of = rotations[r]
        yield Seating(i, first + deal, seat_of, player_of)
