"""Limit Leduc hold'em with the rules of OpenSpiel's ``leduc_poker`` (2 players), generalised.

Deck of ``ranks * suits`` cards; card ``c`` has rank ``c // suits``.  Each player antes ``ante`` and
gets one private card; a betting round; one public card; a second betting round.  Raises are fixed
(``raise_sizes`` per round, default 2 then 4 chips) with at most ``max_raises`` per round.  Player 0
acts first in both rounds.  At showdown a private card pairing the public card wins, otherwise the
higher rank; equal ranks split the pot.

Actions: fold=0 (only when facing a raise), call/check=1, raise=2.  Chance outcomes are card ids.
Game value for player 0 with the default parameters: about -0.0856 chips.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from cfrkit.games.base import CHANCE, TERMINAL, Game, GameError, State
from cfrkit.games.registry import register

FOLD, CALL, RAISE = 0, 1, 2


class LeducPoker(Game):
    short_name = "leduc"

    def __init__(self, ranks: int = 3, suits: int = 2, ante: int = 1, raise_sizes: Tuple[int, ...] = (2, 4),
                 max_raises: int = 2):
        if ranks < 2 or suits < 2:
            raise GameError(f"leduc needs ranks >= 2 and suits >= 2, got ranks={ranks}, suits={suits}")
        if len(raise_sizes) != 2 or min(raise_sizes) <= 0:
            raise GameError(f"leduc raise_sizes must be two positive amounts (round 1;round 2), got {raise_sizes}")
        if ante <= 0 or max_raises < 0:
            raise GameError(f"leduc needs ante > 0 and max_raises >= 0, got ante={ante}, max_raises={max_raises}")
        super().__init__({"ranks": ranks, "suits": suits, "ante": ante, "raise_sizes": tuple(raise_sizes),
                          "max_raises": max_raises})
        self.num_players = 2
        self.ranks, self.suits, self.ante = ranks, suits, ante
        self.raise_sizes = tuple(raise_sizes)
        self.max_raises = max_raises
        self.num_cards = ranks * suits
        self.big_blind = float(ante)

    def new_initial_state(self) -> "LeducState":
        return LeducState(self)

    def num_distinct_actions(self) -> int:
        return 3

    def _max_contribution(self) -> int:
        return self.ante + self.max_raises * sum(self.raise_sizes)

    def max_utility(self) -> float:
        return float(self._max_contribution())

    def min_utility(self) -> float:
        return -float(self._max_contribution())

    def information_state_tensor_shape(self) -> Tuple[int, ...]:
        # player (2) + private card + public card + per round a (call, raise) pair per action slot
        return (2 + 2 * self.num_cards + 2 * 2 * self._round_slots(),)

    def _round_slots(self) -> int:
        return 2 + 2 * self.max_raises

    def max_game_length(self) -> int:
        return 3 + 2 * self._round_slots()


class LeducStateBase(State):
    """Dealing, round bookkeeping, showdown and information states shared by limit and no-limit Leduc.

    Subclasses define the betting: ``_raise_actions`` (the legal bets and raises), ``_bet`` (apply a
    non-call action) and ``_action_code`` (one character or token per action in the betting string).
    """

    def __init__(self, game: Game):
        super().__init__(game)
        self.private: List[int] = []
        self.public: int = -1
        self.round = 0
        self.rounds: List[List[int]] = [[], []]  # actions per round
        self.contrib = [game.ante, game.ante]
        self.player = 0
        self.folded = -1
        self._finished = False

    def clone(self) -> "LeducStateBase":
        new = self.__class__.__new__(self.__class__)
        new.__dict__.update(self.__dict__)
        new._history = list(self._history)
        new.private = list(self.private)
        new.rounds = [list(self.rounds[0]), list(self.rounds[1])]
        new.contrib = list(self.contrib)
        return new

    def current_player(self) -> int:
        if self._finished:
            return TERMINAL
        if len(self.private) < 2 or (self.round == 1 and self.public < 0):
            return CHANCE
        return self.player

    def chance_outcomes(self) -> List[Tuple[int, float]]:
        used = set(self.private)
        remaining = [c for c in range(self.game.num_cards) if c not in used]
        p = 1.0 / len(remaining)
        return [(c, p) for c in remaining]

    def _apply_action(self, action: int) -> None:
        if len(self.private) < 2:
            self.private.append(action)
            return
        if self.round == 1 and self.public < 0:
            self.public = action
            self._on_public_card()
            return
        p = self.player
        self.rounds[self.round].append(action)
        if action == FOLD:
            self.folded = p
            self._finished = True
            return
        if action == CALL:
            self.contrib[p] = self.contrib[1 - p]
            # the round closes on any call but a first-to-act check
            if len(self.rounds[self.round]) >= 2:
                if self.round == 1:
                    self._finished = True
                else:
                    self.round = 1
                    self._on_new_round()
                    self.player = 0
                return
        else:
            self._bet(p, action)
        self.player = 1 - p

    def _legal_actions(self, player: int) -> List[int]:
        if player != self.current_player():
            return []
        # fold only when behind; call (check) always; then the variant's bets and raises
        actions = [FOLD, CALL] if self.contrib[player] < self.contrib[1 - player] else [CALL]
        actions.extend(self._raise_actions())
        return actions

    def _raise_actions(self) -> List[int]:
        """The legal bet / raise action ids of the player to act (ascending)."""
        raise NotImplementedError

    def _on_public_card(self) -> None:
        """Hook after the public card is dealt."""

    def _on_new_round(self) -> None:
        """Hook when the second betting round starts."""

    def _bet(self, player: int, action: int) -> None:
        raise NotImplementedError

    def _action_code(self, action: int) -> str:
        raise NotImplementedError

    def _hand_strength(self, player: int) -> int:
        suits = self.game.suits
        rank = self.private[player] // suits
        if rank == self.public // suits:
            return 1000 + rank
        return rank

    def returns(self) -> List[float]:
        if not self._finished:
            return [0.0, 0.0]
        if self.folded >= 0:
            loser = self.folded
            amount = float(self.contrib[loser])
            return [-amount, amount] if loser == 0 else [amount, -amount]
        s0, s1 = self._hand_strength(0), self._hand_strength(1)
        amount = float(self.contrib[0])  # equal after a showdown
        if s0 > s1:
            return [amount, -amount]
        if s1 > s0:
            return [-amount, amount]
        return [0.0, 0.0]

    def _betting_string(self) -> str:
        return "/".join("".join(self._action_code(a) for a in r) for r in self.rounds[: self.round + 1])

    def information_state_string(self, player: Optional[int] = None) -> str:
        player, card = self.player_card(player, self.private)
        card = "?" if card is None else card
        public = self.public if self.public >= 0 else "?"
        return f"p{player}:{card}:{public}:{self._betting_string()}"

    def public_state_string(self) -> str:
        public = self.public if self.public >= 0 else "?"
        return f"{public}:{self._betting_string()}"


class LeducState(LeducStateBase):
    def __init__(self, game: LeducPoker):
        super().__init__(game)
        self.num_raises = 0

    def _raise_actions(self) -> List[int]:
        return [RAISE] if self.num_raises < self.game.max_raises else []

    def _bet(self, player: int, action: int) -> None:
        self.contrib[player] = self.contrib[1 - player] + self.game.raise_sizes[self.round]
        self.num_raises += 1

    def _on_new_round(self) -> None:
        self.num_raises = 0

    def _action_code(self, action: int) -> str:
        return "fcr"[action]

    def information_state_tensor(self, player: Optional[int] = None) -> np.ndarray:
        player, out = self.card_tensor(player, self.private)
        g = self.game
        if self.public >= 0:
            out[2 + g.num_cards + self.public] = 1
        base = 2 + 2 * g.num_cards
        slots = g._round_slots()
        for r in range(2):
            for i, a in enumerate(self.rounds[r]):
                if a != FOLD:
                    out[base + (r * slots + i) * 2 + (a - 1)] = 1
        return out

    def action_to_string(self, action: int, player: Optional[int] = None) -> str:
        if player == CHANCE or (player is None and self.is_chance_node()):
            g = self.game
            return f"card{action}(rank {action // g.suits}, suit {action % g.suits})"
        return ("fold", "call", "raise")[action]


register("leduc", LeducPoker, {"ranks": 3, "suits": 2, "ante": 1, "raise_sizes": (2, 4), "max_raises": 2},
         "Limit Leduc hold'em (OpenSpiel rules); larger decks via ranks/suits")
