"""Seeded deals for matches: the cards of hand ``i`` of a match depend only on ``(seed, i)``.

Every match runner (in-process head-to-head, the platform server, LBR, DRL-BR evaluation) deals with
:func:`deal_for_hand`, so a match can be replayed, and a duplicate match replays each deal with the
agents' seats swapped (the cards stay with the seat, the agents move).
"""
from __future__ import annotations

from typing import List

import numpy as np

from cfrkit.games.base import GameError

_DECKS: dict = {}  # (num_ranks, num_suits) -> int64[ranks * suits] read-only: GameDefinition.deck() as an array


def deal_for_hand(game, seed: int, hand_index: int) -> List[int]:
    """The chance outcomes (card ids) of hand ``hand_index`` of a match seeded with ``seed``.

    In dealing order, as the ``holdem`` protocol asks for them: hole cards seat by seat, then the
    board cards round by round; enough cards for the whole hand.  ``game``: a ``HoldemGame``.
    """
    if int(seed) < 0 or int(hand_index) < 0:
        raise GameError(f"seed and hand index must be non-negative, got {seed}, {hand_index}")
    d = game.definition
    needed = d.num_players * d.num_hole_cards + d.total_board_cards(d.num_rounds)
    key = (d.num_ranks, d.num_suits)
    deck = _DECKS.get(key)
    if deck is None:  # the deck's ids as an array, built once per deck shape (17 us a deal on the shared machine)
        deck = _DECKS[key] = np.asarray(d.deck(), dtype=np.int64)
        deck.setflags(write=False)  # permutation shuffles a copy
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(hand_index)]))
    return rng.permutation(deck)[:needed].tolist()  # Python ints, the same cards


def deal_state(game, seed: int, hand_index: int):
    """A new state of ``game`` with hand ``hand_index``'s hole cards dealt (board cards to come).

    Returns ``(state, cards)``: ``cards`` is the whole deal of :func:`deal_for_hand`; apply
    ``cards[len(state.history()):]`` one by one at the chance nodes that follow.
    """
    cards = deal_for_hand(game, seed, hand_index)
    state = game.new_initial_state()
    k = 0
    while state.is_chance_node() and k < game.definition.num_players * game.definition.num_hole_cards:
        state.apply_action(cards[k])
        k += 1
    return state, cards
