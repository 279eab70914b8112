"""No-limit Leduc hold'em as DeepStack-Leduc plays it.

Cards as in :mod:`cfrkit.games.leduc` (``ranks`` x ``suits``, default J Q K in two suits).  Each
player antes ``ante`` (100) from a stack of ``stack`` (1200) chips.  Player 0 acts first in both
rounds.  Bets are pot fractions plus all-in, DeepStack's rule: with ``b`` the opponent's total bet
and ``m`` the mover's, the pot after a call is ``2b``; a bet of fraction ``f`` raises to
``b + f * 2b`` when ``f * 2b`` is at least the minimum raise ``max(b - m, ante)`` and below the
all-in raise ``stack - b``; all-in is always offered while chips remain.  Folding is legal only when
facing a bet (a fold when checking is free is dominated).  If both players are all in, the public
card is dealt and the hand goes to showdown.

Actions: fold=0, call/check=1, bet with ``fractions[i]`` = 2+i, all-in = 2+len(fractions).
Chance outcomes are card ids.  Utilities in chips.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from cfrkit.games.base import CHANCE, Game, GameError
from cfrkit.games.leduc import CALL, FOLD, LeducStateBase
from cfrkit.games.registry import register

__all__ = ["CALL", "FOLD", "LeducNoLimit", "LeducNoLimitState"]


class LeducNoLimit(Game):
    short_name = "leduc_nolimit"

    def __init__(self, ante: int = 100, stack: int = 1200, fractions: Tuple[float, ...] = (1.0,),
                 ranks: int = 3, suits: int = 2):
        if ranks < 2 or suits < 2:
            raise GameError(f"leduc_nolimit needs ranks >= 2 and suits >= 2, got {ranks}, {suits}")
        if ante <= 0 or stack <= ante:
            raise GameError(f"leduc_nolimit needs 0 < ante < stack, got ante={ante}, stack={stack}")
        if any(f <= 0 for f in fractions):
            raise GameError(f"bet fractions must be positive fractions of the pot, got {fractions}")
        fractions = tuple(sorted(set(float(f) for f in fractions)))
        super().__init__({"ante": ante, "stack": stack, "fractions": fractions, "ranks": ranks, "suits": suits})
        self.num_players = 2
        self.ante, self.stack, self.fractions = ante, stack, fractions
        self.ranks, self.suits = ranks, suits
        self.num_cards = ranks * suits
        self.big_blind = float(ante)
        self.allin_action = 2 + len(fractions)
        # per action id: its code in betting strings and its readable name
        bets = range(len(fractions))
        self.action_codes = ("f", "c", *(f"b{i}" for i in bets), "a")
        self.action_names = ("fold", "call", *(f"bet{f:g}pot" for f in fractions), "allin")

    def new_initial_state(self) -> "LeducNoLimitState":
        return LeducNoLimitState(self)

    def num_distinct_actions(self) -> int:
        return 3 + len(self.fractions)

    def max_utility(self) -> float:
        return float(self.stack)

    def min_utility(self) -> float:
        return -float(self.stack)


class LeducNoLimitState(LeducStateBase):
    def raise_to_amounts(self) -> List[Tuple[int, int]]:
        """``(action, total chips the mover will have in)`` for each legal bet/raise."""
        g = self.game
        p = self.player
        opp_bet, my_bet = self.contrib[1 - p], self.contrib[p]
        max_raise = g.stack - opp_bet
        min_raise = min(max(opp_bet - my_bet, g.ante), max_raise)
        if min_raise <= 0:
            return []
        out = []
        if min_raise < max_raise:
            pot = 2 * opp_bet
            for i, f in enumerate(g.fractions):
                size = int(round(pot * f))
                if min_raise <= size < max_raise:
                    out.append((2 + i, opp_bet + size))
        out.append((g.allin_action, g.stack))
        return out

    def _raise_actions(self) -> List[int]:
        return [a for a, _ in self.raise_to_amounts()]

    def _bet(self, player: int, action: int) -> None:
        self.contrib[player] = dict(self.raise_to_amounts())[action]

    def _on_public_card(self) -> None:
        # both all in: no second betting round, straight to showdown
        if self.contrib[0] == self.game.stack and self.contrib[1] == self.game.stack:
            self._finished = True

    def _action_code(self, action: int) -> str:
        return self.game.action_codes[action]

    def public_state_string(self) -> str:
        public = self.public if self.public >= 0 else "?"
        return f"{public}:{self._betting_string()}:{self.contrib[0]},{self.contrib[1]}"

    def action_to_string(self, action: int, player: Optional[int] = None) -> str:
        if player == CHANCE or (player is None and self.is_chance_node()):
            return f"card{action}"
        return self.game.action_names[action]


register("leduc_nolimit", LeducNoLimit,
         {"ante": 100, "stack": 1200, "fractions": (1.0,), "ranks": 3, "suits": 2},
         "No-limit Leduc as DeepStack-Leduc plays it (ante 100, stack 1200, pot-fraction bets + all-in)")
