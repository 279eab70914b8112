"""Kuhn poker for 2 or more players (the rules OpenSpiel's ``kuhn_poker`` uses).

Deck of ``players + 1`` cards (0 is the lowest); each player antes 1 chip and is dealt one card.
Players act in turn: pass (0) or bet (1, one chip).  After a bet, each later player calls (bet) or
folds (pass).  The highest card among the players still in wins the pot.

Two-player game value for player 0 (first to act): -1/18 chips.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from cfrkit.games.base import CHANCE, TERMINAL, Game, GameError, State
from cfrkit.games.registry import register

PASS, BET = 0, 1


class KuhnPoker(Game):
    short_name = "kuhn"
    big_blind = 1.0

    def __init__(self, players: int = 2):
        if players < 2:
            raise GameError(f"kuhn needs at least 2 players, got players={players}")
        super().__init__({"players": players})
        self.num_players = players
        self.num_cards = players + 1

    def new_initial_state(self) -> "KuhnState":
        return KuhnState(self)

    def num_distinct_actions(self) -> int:
        return 2

    def max_utility(self) -> float:
        return float(self.num_players - 1) * 2

    def min_utility(self) -> float:
        return -2.0

    def information_state_tensor_shape(self) -> Tuple[int, ...]:
        # one-hot player, one-hot card, then (pass, bet) per betting turn
        return (self.num_players + self.num_cards + 2 * (2 * self.num_players - 1),)

    def max_game_length(self) -> int:
        return self.num_players + 2 * self.num_players - 1


class KuhnState(State):
    def __init__(self, game: KuhnPoker):
        super().__init__(game)
        self.cards: List[int] = []
        self.bets: List[int] = []  # betting actions in order

    def clone(self) -> "KuhnState":
        new = KuhnState.__new__(KuhnState)
        new.game = self.game
        new._history = list(self._history)
        new.cards = list(self.cards)
        new.bets = list(self.bets)
        return new

    def _first_bettor(self) -> int:
        return self.bets.index(BET) if BET in self.bets else -1

    def current_player(self) -> int:
        n = self.game.num_players
        if len(self.cards) < n:
            return CHANCE
        if self._is_over():
            return TERMINAL
        return len(self.bets) % n

    def _is_over(self) -> bool:
        n = self.game.num_players
        first = self._first_bettor()
        if first < 0:
            return len(self.bets) == n
        return len(self.bets) == first + n

    def chance_outcomes(self) -> List[Tuple[int, float]]:
        remaining = [c for c in range(self.game.num_cards) if c not in self.cards]
        p = 1.0 / len(remaining)
        return [(c, p) for c in remaining]

    def _legal_actions(self, player: int) -> List[int]:
        return [PASS, BET] if player == self.current_player() else []

    def _apply_action(self, action: int) -> None:
        if len(self.cards) < self.game.num_players:
            self.cards.append(action)
        else:
            self.bets.append(action)

    def returns(self) -> List[float]:
        n = self.game.num_players
        if not self.is_terminal():
            return [0.0] * n
        first = self._first_bettor()
        contributed = [1.0] * n
        if first < 0:
            in_hand = list(range(n))
        else:
            in_hand = [first]
            contributed[first] += 1
            for i in range(first + 1, first + n):
                if self.bets[i] == BET:
                    p = i % n
                    in_hand.append(p)
                    contributed[p] += 1
        winner = max(in_hand, key=lambda p: self.cards[p])
        pot = sum(contributed)
        return [(pot if p == winner else 0.0) - contributed[p] for p in range(n)]

    def information_state_string(self, player: Optional[int] = None) -> str:
        card = self.player_card(player, self.cards)[1]
        return f"{'?' if card is None else card}" + "".join("pb"[b] for b in self.bets)

    def information_state_tensor(self, player: Optional[int] = None) -> np.ndarray:
        player, out = self.card_tensor(player, self.cards)
        g = self.game
        base = g.num_players + g.num_cards
        for i, b in enumerate(self.bets):
            out[base + 2 * i + b] = 1
        return out

    def public_state_string(self) -> str:
        return "".join("pb"[b] for b in self.bets)

    def action_to_string(self, action: int, player: Optional[int] = None) -> str:
        if player == CHANCE or (player is None and self.is_chance_node()):
            return f"deal:{action}"
        return "pass" if action == PASS else "bet"


register("kuhn", KuhnPoker, {"players": 2}, "Kuhn poker (players+1 cards, ante 1, one bet of 1)")
