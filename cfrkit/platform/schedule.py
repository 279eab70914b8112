"""Who sits where in hand ``i`` of a match, and which deal it plays.

Players ``0..n-1`` are the match's entrants; seats are the ACPC game's positions.  Every hand's
cards come from :func:`cfrkit.games.holdem.deals.deal_for_hand` ``(game, seed, deal_index)``.

* seat rotation: in hand ``i`` player ``j`` sits in seat ``(j + i) mod n`` (each player takes every
  seat in turn);
* duplicate mode: each deal is played ``n`` times in a row, once per rotation (``deal_index =
  i // n``, rotation ``i mod n``): heads-up, the two hands of a deal have the same cards per seat
  with the players swapped, which removes most of the luck of the cards from the difference.
"""
from __future__ import annotations

from typing import List, Tuple


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
    """Inverse of ``seat_of_player``."""
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
