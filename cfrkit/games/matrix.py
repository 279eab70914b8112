"""One-shot matrix games (simultaneous moves): Rock-Paper-Scissors and any bimatrix game.

Both players choose at once; returns come from the payoff matrices.  Solvers see them through
:mod:`cfrkit.games.sequential`, which makes the moves sequential with the first move hidden.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.games.base import SIMULTANEOUS, TERMINAL, Game, GameError, State
from cfrkit.games.registry import register


class MatrixGame(Game):
    """A two-player one-shot game with payoff matrices ``row_payoffs[i, j]`` and ``col_payoffs[i, j]``."""

    simultaneous = True

    def __init__(self, row_payoffs: Sequence[Sequence[float]], col_payoffs: Sequence[Sequence[float]],
                 row_names: Optional[Sequence[str]] = None, col_names: Optional[Sequence[str]] = None,
                 short_name: str = "matrix", params: Optional[dict] = None):
        row = np.asarray(row_payoffs, dtype=np.float64)
        col = np.asarray(col_payoffs, dtype=np.float64)
        if row.ndim != 2 or row.shape != col.shape or row.size == 0:
            raise GameError(f"payoff matrices must be non-empty and of one 2-D shape, got {row.shape} and {col.shape}")
        if not (np.isfinite(row).all() and np.isfinite(col).all()):
            raise GameError("payoffs must be finite numbers (got NaN or infinity)")
        self.short_name = short_name
        super().__init__(params if params is not None else {})
        self.num_players = 2
        self.row_payoffs, self.col_payoffs = row, col
        sums = row + col
        self.constant_sum = bool(np.allclose(sums, sums.flat[0]))
        self.utility_sum = float(sums.flat[0]) if self.constant_sum else None
        self.row_names = list(row_names) if row_names else [f"r{i}" for i in range(row.shape[0])]
        self.col_names = list(col_names) if col_names else [f"c{j}" for j in range(row.shape[1])]

    def new_initial_state(self) -> "MatrixState":
        return MatrixState(self)

    def num_distinct_actions(self) -> int:
        return max(self.row_payoffs.shape)

    def max_utility(self) -> float:
        return float(max(self.row_payoffs.max(), self.col_payoffs.max()))

    def min_utility(self) -> float:
        return float(min(self.row_payoffs.min(), self.col_payoffs.min()))

    def max_game_length(self) -> int:
        return 2


class MatrixState(State):
    def __init__(self, game: MatrixGame):
        super().__init__(game)
        self.actions: Optional[Tuple[int, int]] = None

    def clone(self) -> "MatrixState":
        new = MatrixState(self.game)
        new._history = list(self._history)
        new.actions = self.actions
        return new

    def current_player(self) -> int:
        return TERMINAL if self.actions is not None else SIMULTANEOUS

    def _legal_actions(self, player: int) -> List[int]:
        if self.actions is not None:
            return []
        return list(range(self.game.row_payoffs.shape[player]))

    def _apply_action(self, action: int) -> None:  # pragma: no cover - apply_action refuses at SIMULTANEOUS
        raise GameError("matrix games take joint actions")

    def _apply_joint_action(self, actions: Sequence[int]) -> None:
        self.actions = (actions[0], actions[1])

    def returns(self) -> List[float]:
        if self.actions is None:
            return [0.0, 0.0]
        i, j = self.actions
        return [float(self.game.row_payoffs[i, j]), float(self.game.col_payoffs[i, j])]

    def information_state_string(self, player: Optional[int] = None) -> str:
        if player is None or player < 0:
            raise GameError("matrix games: pass the player whose information state you want")
        if self.actions is None:
            return f"p{player}"
        return f"p{player}:{self.actions[0]},{self.actions[1]}"

    def action_to_string(self, action: int, player: Optional[int] = None) -> str:
        names = self.game.row_names if player in (None, 0) else self.game.col_names
        return names[action] if 0 <= action < len(names) else str(action)


def rock_paper_scissors(win: float = 1.0) -> MatrixGame:
    """Rock-Paper-Scissors; the winner gets ``win`` from the loser.  Value 0, equilibrium uniform."""
    m = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], dtype=np.float64) * win
    return MatrixGame(m, -m, ["rock", "paper", "scissors"], ["rock", "paper", "scissors"],
                      short_name="rps", params={"win": win})


def matrix_game(rows: int = 2, cols: int = 2, row_payoffs: Tuple[float, ...] = (1.0, -1.0, -1.0, 1.0),
                col_payoffs: Tuple[float, ...] = ()) -> MatrixGame:
    """A bimatrix game from flat row-major payoffs; ``col_payoffs`` empty means zero-sum."""
    if len(row_payoffs) != rows * cols:
        raise GameError(f"row_payoffs needs rows*cols = {rows * cols} numbers, got {len(row_payoffs)}")
    row = np.asarray(row_payoffs, dtype=np.float64).reshape(rows, cols)
    if col_payoffs:
        if len(col_payoffs) != rows * cols:
            raise GameError(f"col_payoffs needs rows*cols = {rows * cols} numbers, got {len(col_payoffs)}")
        col = np.asarray(col_payoffs, dtype=np.float64).reshape(rows, cols)
    else:
        col = -row
    return MatrixGame(row, col, short_name="matrix",
                      params={"rows": rows, "cols": cols, "row_payoffs": tuple(row_payoffs),
                              "col_payoffs": tuple(col_payoffs)})


register("rps", rock_paper_scissors, {"win": 1.0}, "Rock-Paper-Scissors (simultaneous, zero-sum)")
register("matrix", matrix_game, {"rows": 2, "cols": 2, "row_payoffs": (1.0, -1.0, -1.0, 1.0), "col_payoffs": ()},
         "Any bimatrix game from flat payoffs (default: matching pennies)")
