"""Turn a simultaneous-move game into a sequential one with hidden moves.

At each simultaneous node of the inner game, players 0..n-1 choose one after another; a player's
information state does not include the choices made earlier at the same node, so the adapted game
has the same strategies and equilibria as the original.  Chance and sequential nodes pass through.
Solvers call :func:`as_sequential` on any game; it returns sequential games unchanged.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from cfrkit.games.base import SIMULTANEOUS, Game, GameError, State
from cfrkit.games.registry import load, register


class SequentialAdapter(Game):
    short_name = "turn_based"

    def __init__(self, game: "str | Game" = "rps"):
        inner = load(game)
        super().__init__({"game": inner.game_string()})
        self.inner = inner
        self.num_players = inner.num_players
        self.constant_sum = inner.constant_sum
        self.utility_sum = inner.utility_sum
        self.perfect_recall = inner.perfect_recall
        self.big_blind = inner.big_blind

    def new_initial_state(self) -> "SequentialState":
        return SequentialState(self, self.inner.new_initial_state())

    def num_distinct_actions(self) -> int:
        return self.inner.num_distinct_actions()

    def max_utility(self) -> float:
        return self.inner.max_utility()

    def min_utility(self) -> float:
        return self.inner.min_utility()

    def information_state_tensor_shape(self) -> Optional[Tuple[int, ...]]:
        return self.inner.information_state_tensor_shape()


class SequentialState(State):
    def __init__(self, game: SequentialAdapter, inner: State):
        super().__init__(game)
        self.inner = inner
        self.pending: List[int] = []

    def clone(self) -> "SequentialState":
        new = SequentialState(self.game, self.inner.clone())
        new._history = list(self._history)
        new.pending = list(self.pending)
        return new

    def current_player(self) -> int:
        player = self.inner.current_player()
        return len(self.pending) if player == SIMULTANEOUS else player

    def chance_outcomes(self):
        return self.inner.chance_outcomes()

    def _legal_actions(self, player: int) -> List[int]:
        if self.inner.current_player() == SIMULTANEOUS:
            return self.inner.legal_actions(player) if player == len(self.pending) else []
        return self.inner.legal_actions(player) if player == self.inner.current_player() else []

    def _apply_action(self, action: int) -> None:
        if self.inner.current_player() == SIMULTANEOUS:
            self.pending.append(action)
            if len(self.pending) == self.game.num_players:
                joint, self.pending = self.pending, []
                self.inner.apply_actions(joint)
        else:
            self.inner.apply_action(action)

    def returns(self) -> List[float]:
        return self.inner.returns()

    def rewards(self) -> List[float]:
        return self.inner.rewards()

    def information_state_string(self, player: Optional[int] = None) -> str:
        if player is None:
            player = self.current_player()
        if player < 0:
            raise GameError("information_state_string needs a player")
        # the moves already made at this simultaneous node stay hidden
        return self.inner.information_state_string(player)

    def information_state_tensor(self, player: Optional[int] = None) -> np.ndarray:
        if player is None:
            player = self.current_player()
        return self.inner.information_state_tensor(player)

    def observation_string(self, player: Optional[int] = None) -> str:
        return self.inner.observation_string(self.current_player() if player is None else player)

    def action_to_string(self, action: int, player: Optional[int] = None) -> str:
        return self.inner.action_to_string(action, self.current_player() if player is None else player)


def as_sequential(game: "str | Game") -> Game:
    """The game itself if it has no simultaneous nodes, else its sequential adapter."""
    game = load(game)
    return SequentialAdapter(game) if game.simultaneous else game


register("turn_based", SequentialAdapter, {"game": "rps"},
         "A simultaneous-move game played in turns with hidden moves: turn_based(game=rps)")
