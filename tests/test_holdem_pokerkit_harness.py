"""Drive a cfrkit hold'em hand and a pokerkit hand side by side (test helper; pokerkit only here)."""
from __future__ import annotations

import random
from typing import List

import pytest

pk = pytest.importorskip("pokerkit")  # an optional test dependency (setup.py extras "test")

from cfrkit.cards import cards_to_string  # noqa: E402
from cfrkit.games.holdem import CALL, FOLD, RAISE, RAISE_OFFSET, HoldemGame, raise_action  # noqa: E402
from cfrkit.games.holdem.definition import GameDefinition  # noqa: E402

AUTOMATIONS = (
    pk.Automation.ANTE_POSTING,
    pk.Automation.BET_COLLECTION,
    pk.Automation.BLIND_OR_STRADDLE_POSTING,
    pk.Automation.CARD_BURNING,
    pk.Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    pk.Automation.HAND_KILLING,
    pk.Automation.CHIPS_PUSHING,
    pk.Automation.CHIPS_PULLING,
)


def pokerkit_state(d: GameDefinition, ante_trimming: bool = True) -> pk.State:
    """A pokerkit state with the rules of an ACPC hold'em definition (standard 52-card deck).

    ``ante_trimming`` is pokerkit's ``ante_trimming_status`` (cfrkit's ``ante_trimming``)."""
    streets = []
    for r in range(d.num_rounds):
        streets.append(pk.Street(
            False,
            (False,) * d.num_hole_cards if r == 0 else (),
            d.num_board_cards[r],
            False,
            pk.Opening.POSITION,
            d.raise_size[r] if d.is_limit else d.big_blind,
            d.max_raises[r] if d.is_limit else None,
        ))
    blinds = list(d.blind)
    antes = list(d.ante)
    if d.num_players == 2:
        blinds = blinds[::-1]  # pokerkit reverses heads-up blinds and antes
        antes = antes[::-1]
    structure = pk.BettingStructure.FIXED_LIMIT if d.is_limit else pk.BettingStructure.NO_LIMIT
    state = pk.State(AUTOMATIONS, pk.Deck.STANDARD, (pk.StandardHighHand,), tuple(streets), structure, ante_trimming,
                     tuple(antes), tuple(blinds), 0, tuple(d.stack), d.num_players)
    if not any(d.ante):
        assert list(state.bets) == list(d.blind), (state.bets, d.blind)
    return state


def choose(state, rng: random.Random) -> int:
    """A random legal action with a spread of raise sizes (min, max, pot-like, uniform)."""
    legal_fold = state.is_legal(FOLD)
    rr = state.raise_range()
    u = rng.random()
    if legal_fold and u < 0.15:
        return FOLD
    if rr is None or u < 0.6:
        return CALL
    if state.d.is_limit:
        return RAISE
    lo, hi = rr
    v = rng.random()
    if v < 0.3:
        amount = lo
    elif v < 0.45:
        amount = hi
    elif v < 0.7:
        amount = min(hi, max(lo, state.max_spent() + state.pot()))
    else:
        amount = rng.randint(lo, hi)
    return raise_action(amount)


def _sync_cards(s, p: pk.State, hole_done: List[bool], board_done: List[int]) -> None:
    if not hole_done[0] and s._dealt >= s.game._num_hole:
        while p.can_deal_hole():
            i = p.hole_dealee_index
            k = len(p.hole_cards[i])
            p.deal_hole(cards_to_string([s.hole[i][k]]))
        hole_done[0] = True
    # deal the board street by street as far as cfrkit has dealt it
    while p.can_deal_board():
        street = p.street_index
        count = p.streets[street].board_dealing_count
        if board_done[0] + count > len(s.board):
            break
        p.deal_board(cards_to_string(s.board[board_done[0]:board_done[0] + count]))
        board_done[0] += count


def play_and_compare(game: HoldemGame, rng: random.Random) -> int:
    """Play one random hand in both engines; assert they agree at every decision and at the end.

    Returns the number of decisions compared.
    """
    d = game.definition
    s = game.new_initial_state()
    p = pokerkit_state(d, game.ante_trimming)
    hole_done, board_done = [False], [0]
    decisions = 0
    while not s.is_terminal():
        if s.is_chance_node():
            outcomes = s.chance_outcomes()
            s.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            continue
        _sync_cards(s, p, hole_done, board_done)
        player = s.current_player()
        rr = s.raise_range()
        pk_raise = p.can_complete_bet_or_raise_to()
        ok = (p.actor_index == player and p.can_fold() == s.is_legal(FOLD)
              and p.checking_or_calling_amount == s.call_amount() and pk_raise == (rr is not None))
        if ok and rr is not None:
            base = s.round_start[player]
            pk_range = (p.min_completion_betting_or_raising_to_amount + base,
                        p.max_completion_betting_or_raising_to_amount + base)
            ok = pk_range == rr
        if not ok:  # build the (slow) message only on failure
            raise AssertionError(
                f"{game.game_string()} history {s.history()} betting {s.betting_string()}: pokerkit actor "
                f"{p.actor_index} fold {p.can_fold()} call {p.checking_or_calling_amount} raise {pk_raise} "
                f"range ({p.min_completion_betting_or_raising_to_amount}, "
                f"{p.max_completion_betting_or_raising_to_amount}) + round start {s.round_start[player]}; "
                f"cfrkit actor {player} fold {s.is_legal(FOLD)} call {s.call_amount()} raise range {rr}")
        action = choose(s, rng)
        if action == FOLD:
            p.fold()
        elif action == CALL:
            p.check_or_call()
        else:
            total = rr[0] if d.is_limit else action - RAISE_OFFSET
            p.complete_bet_or_raise_to(total - s.round_start[player])
        s.apply_action(action)
        decisions += 1
    _sync_cards(s, p, hole_done, board_done)
    assert not p.status, f"pokerkit hand not over when cfrkit's is: {game.game_string()} {s.history()}"
    pk_returns = [float(p.stacks[i] - d.stack[i]) for i in range(d.num_players)]
    assert pk_returns == s.returns(), f"payoffs: pokerkit {pk_returns} cfrkit {s.returns()} at {s.history()}"
    assert sum(s.returns()) == 0.0
    return decisions
