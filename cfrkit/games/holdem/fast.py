"""The compiled hold'em core (``pyx/holdem_engine.pyx``): the rules of :class:`HoldemState` on a C struct.

For code that plays many hands: random-play simulation, load tests, Monte Carlo evaluation.  The
rules are those of :class:`~cfrkit.games.holdem.game.HoldemState` (the reference, checked against
pokerkit), ported line by line; ``tests/test_holdem_fast.py`` checks that both agree on legal
actions, action sequences and payoffs on random heads-up and multiway, limit and no-limit hands with
unequal stacks, blinds and antes.

* :func:`compiled_state` -- a hand on the compiled core (:class:`FastHoldemState`), stepped from
  Python: ``apply(action)`` (cards at chance nodes, protocol action ids at decisions),
  ``action_view()`` (the same :class:`~cfrkit.games.holdem.actions.ActionView` as
  ``HoldemState.action_view()``, so agents that read only the view, like ``RandomAgent``, play on
  it), ``legal_actions()``, ``returns()``, ``clone()``.
* :func:`play_random_hands` -- ``N`` hands between random agents (``RandomAgent``'s rule: a uniform
  legal kind, then a uniform raise-to amount) entirely in C; optionally records every deal, action
  and legal range.

Games whose showdown uses more than 7 cards (e.g. 5 hole cards and 5 board cards) are not supported
by the compiled core (:class:`~cfrkit.games.base.GameError`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from cfrkit._kernels import holdem_engine as _kernel
from cfrkit.games.base import GameError
from cfrkit.games.holdem.actions import CALL, FOLD, RAISE, RAISE_OFFSET, ActionView, LegalActions
from cfrkit.games.holdem.game import HoldemGame

_new_view = ActionView._make


class FastHoldemState(_kernel.CompiledState):
    """A hand on the compiled core with the agent-facing views of :class:`HoldemState`.

    Compiled methods: ``current_player()`` (seat, -1 chance, -4 terminal), ``is_terminal()``,
    ``apply(action)`` (a card id at chance nodes, else a protocol action id; ``IllegalActionError``
    if illegal), ``is_legal(a)``, ``decision()`` (the view's numbers as a tuple, fastest),
    ``returns()`` (chips), ``spent``, ``round``, ``hole``, ``board``, ``history()``, ``clone()``.
    :meth:`to_holdem_state` gives the reference state of the same hand (for information-state
    strings, MATCHSTATE, hand histories).
    """

    def is_chance_node(self) -> bool:
        return self.current_player() == -1

    def chance_outcomes(self):
        """``(card, probability)`` for the cards not dealt yet (uniform), at chance nodes."""
        if self.current_player() != -1:
            raise GameError("chance_outcomes called at a non-chance node")
        dealt = set(self.board)
        for h in self.hole:
            dealt.update(h)
        deck = [c for c in self.rules.deck if c not in dealt]
        return [(c, 1.0 / len(deck)) for c in deck]

    def to_holdem_state(self, game: HoldemGame):
        """The :class:`HoldemState` of this hand (``game``: the game this state was made from)."""
        return game.state_from_history(self.history())

    def action_view(self) -> ActionView:
        """The decision of the player to act (see ``HoldemState.action_view``)."""
        d = self.decision()
        if d is None:
            raise GameError("action_view needs a decision node, not a chance or terminal node")
        p, can_fold, call, lo, hi, pot, spent, remaining, to_match = d
        if lo < 0:
            lo = hi = None
        return _new_view((p, can_fold, call, lo, hi, self.is_limit, pot, spent, remaining, to_match))

    def legal_actions(self) -> LegalActions:
        """The protocol's sorted legal ids at a decision node (lazy; empty elsewhere)."""
        d = self.decision()
        if d is None:
            return LegalActions()
        _, can_fold, _, lo, hi = d[:5]
        small = (FOLD, CALL) if can_fold else (CALL,)
        if lo < 0:
            return LegalActions(small)
        if self.is_limit:
            return LegalActions(small + (RAISE,))
        return LegalActions(small, RAISE_OFFSET + lo, RAISE_OFFSET + hi)

    def apply_action(self, action: int) -> None:
        """Alias of ``apply`` (the protocol's name)."""
        self.apply(action)


def compiled_rules(game: HoldemGame) -> "_kernel.CompiledRules":
    """The compiled core's rules of ``game`` (built once and cached on the game)."""
    rules = getattr(game, "_compiled_rules", None)
    if rules is not None:
        return rules
    if not isinstance(game, HoldemGame):
        raise GameError(f"the compiled hold'em core needs a holdem game, got {game!r}")
    d = game.definition
    if d.num_hole_cards + d.total_board_cards() > 7:
        raise GameError(f"the compiled hold'em core shows down at most 7 cards; {game.game_string()} uses "
                        f"{d.num_hole_cards + d.total_board_cards()} (use HoldemState)")
    # antes as posted after PHH ante trimming; dead antes stay out of the side-pot levels (as HoldemState.pots)
    rules = _kernel.CompiledRules(d.num_players, d.num_rounds, d.is_limit, list(d.stack), list(d.blind),
                                  list(game.posted_antes), list(d.raise_size), list(d.first_player),
                                  list(d.max_raises), list(d.num_board_cards), d.num_hole_cards, list(d.deck()),
                                  bool(game.fractional_split), list(game.dead_antes))
    game._compiled_rules = rules
    return rules


def compiled_state(game: HoldemGame) -> FastHoldemState:
    """A new hand of ``game`` on the compiled core (a chance node: deal the cards with ``apply``)."""
    return FastHoldemState(compiled_rules(game))


@dataclass
class RandomHands:
    """Result of :func:`play_random_hands`.

    ``returns``: float64[N, players], chips won minus chips put in per hand and seat;
    ``decisions``: player decisions in all hands.  With recording: ``cards`` int16[N, C] (each hand's
    cards in dealing order; undealt ones at the end), ``actions`` int64[N, L] (protocol action ids of
    the decisions, -1 padded), ``views`` int64[N, L, 4] (can_fold, call_amount, raise_min, raise_max at
    each decision, -1 for no raise); else None.
    """

    returns: np.ndarray
    decisions: int
    cards: Optional[np.ndarray] = None
    actions: Optional[np.ndarray] = None
    views: Optional[np.ndarray] = None


def play_random_hands(game: HoldemGame, num_hands: int, seed: int = 0, record_length: int = 0) -> RandomHands:
    """Play ``num_hands`` hands of ``game`` between random agents in the compiled core.

    Each agent picks uniformly among the legal kinds (fold when facing a bet, check/call, raise when
    legal) and, for a no-limit raise, a raise-to total uniformly in ``[min, max]`` chips.  Cards: a
    seeded shuffle per hand (splitmix64; not the same stream as :func:`~.deals.deal_for_hand`).
    ``record_length > 0`` records up to that many decisions per hand (``ValueError`` if a hand has
    more).
    """
    if int(num_hands) < 0:
        raise GameError(f"num_hands must be >= 0, got {num_hands}")
    if not 0 <= int(seed) < 2 ** 64:
        raise GameError(f"seed must be in [0, 2**64), got {seed}")
    returns, decisions, records = _kernel.play_random_hands(compiled_rules(game), int(num_hands), int(seed),
                                                            int(record_length))
    if records is None:
        return RandomHands(returns, int(decisions))
    return RandomHands(returns, int(decisions), records["cards"], records["actions"], records["views"])
