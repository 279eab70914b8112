"""SymmToM in the cfrkit game protocol: ``load("symmtom(agents=2,width=4,pieces=2,steps=2)")``.

The game is natively simultaneous: after the start, every node is ``SIMULTANEOUS`` and takes one
joint action (``apply_actions``); action id ``move * c + piece`` (5 c ids, all legal: an unknown
piece is silence, a move off the grid is cancelled, as in the environment).  Chance nodes:

* the random start, drawn one component per node -- the agents holding an extra first-hand piece
  (when ``c % n != 0``), the first-hand owner of each piece, each agent's cell, each base's cell --
  with the authors' distribution; with ``start="fixed"`` the cells follow
  :func:`cfrkit.games.symmtom.core.fixed_start` and only the first-hand pieces are drawn;
* a fair coin whenever two moving agents aim at one cell (outcome 1 cancels the lower index).
  Chance nodes with a single outcome are resolved silently.

A player's information state is everything it perceived: the start (own first-hand pieces, and the
others' unless ``hide_first_hand``; all cells and bases), then per step its own action, everyone's
realized moves, what it heard and its reward.  Returns are the summed rewards (not constant-sum).
Solvers that need turns use ``turn_based(game=symmtom(...))``.
"""
from __future__ import annotations

import itertools
from typing import List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.games.base import CHANCE, SIMULTANEOUS, TERMINAL, Game, GameError, State
from cfrkit.games.registry import register
from cfrkit.games.symmtom.core import (
    MOVE_NAMES, NUM_MOVES, SymmToMConfig, apply_step, fixed_start, hears, observation_vector,
)


class _NeedCoin(Exception):
    pass


class SymmToMGame(Game):
    """SymmToM with ``agents`` n, ``width`` w, ``pieces`` c, ``hearing`` h and ``steps`` (0 = 5 w)."""

    short_name = "symmtom"
    simultaneous = True
    constant_sum = False
    utility_sum = None
    perfect_recall = True

    def __init__(self, agents: int = 3, width: int = 6, pieces: int = 3, hearing: int = 1, steps: int = 0,
                 start: str = "random", hide_first_hand: bool = False, oracle: bool = False):
        if start not in ("random", "fixed"):
            raise GameError(f"symmtom: start must be 'random' or 'fixed', got {start!r}")
        self.config = SymmToMConfig(agents=agents, width=width, pieces=pieces, hearing=hearing, steps=steps,
                                    hide_first_hand=hide_first_hand, oracle=oracle)
        super().__init__({"agents": agents, "width": width, "pieces": pieces, "hearing": hearing, "steps": steps,
                          "start": start, "hide_first_hand": hide_first_hand, "oracle": oracle})
        self.num_players = agents
        self.start = start
        self.extra_subsets = list(itertools.combinations(range(agents), pieces % agents))

    def new_initial_state(self) -> "SymmToMState":
        return SymmToMState(self)

    def num_distinct_actions(self) -> int:
        return NUM_MOVES * self.config.pieces

    def max_utility(self) -> float:
        return float(self.config.episode_length * self.config.max_step_reward())

    def min_utility(self) -> float:
        return 0.0

    def observation_tensor_shape(self) -> Tuple[int, ...]:
        return (self.config.observation_size,)

    def max_game_length(self) -> int:
        cfg = self.config
        start = 1 + cfg.pieces + 2 * cfg.agents
        coins = cfg.agents * (cfg.agents - 1) // 2
        return start + cfg.episode_length * (cfg.agents + coins)


class SymmToMState(State):
    def __init__(self, game: SymmToMGame):
        super().__init__(game)
        cfg = game.config
        n = cfg.agents
        self.cfg = cfg
        self.extra: Optional[Tuple[int, ...]] = None if cfg.pieces % n else ()
        self.owners: List[int] = []
        self.positions: List[Tuple[int, int]] = []
        self.bases: List[Tuple[int, int]] = []
        self.first_hand: List[int] = []
        self.knowledge: List[int] = []
        self.t = 0
        self.pending: Optional[List[int]] = None
        self.coins: List[int] = []
        self.totals = [0.0] * n
        self.last_rewards = [0.0] * n
        self.last_moves = [0] * n
        self.last_spoken = [-1] * n
        self.logs: List[List[str]] = [[] for _ in range(n)]
        if game.start == "fixed":
            layout = fixed_start(cfg)
            self.positions, self.bases = list(layout.positions), list(layout.bases)
        self._skip_forced()

    def clone(self) -> "SymmToMState":
        new = SymmToMState.__new__(SymmToMState)
        new.game = self.game
        new.cfg = self.cfg
        new._history = list(self._history)
        new.extra = self.extra
        new.owners = list(self.owners)
        new.positions = list(self.positions)
        new.bases = list(self.bases)
        new.first_hand = list(self.first_hand)
        new.knowledge = list(self.knowledge)
        new.t = self.t
        new.pending = None if self.pending is None else list(self.pending)
        new.coins = list(self.coins)
        new.totals = list(self.totals)
        new.last_rewards = list(self.last_rewards)
        new.last_moves = list(self.last_moves)
        new.last_spoken = list(self.last_spoken)
        new.logs = [list(log) for log in self.logs]
        return new

    # ----------------------------------------------------------------- start phase
    def _start_done(self) -> bool:
        return bool(self.first_hand)

    def _chance_list(self) -> List[Tuple[int, float]]:
        cfg, n, w = self.cfg, self.cfg.agents, self.cfg.width
        if self.pending is not None:
            return [(0, 0.5), (1, 0.5)]
        if self.extra is None:
            subsets = self.game.extra_subsets
            return [(k, 1.0 / len(subsets)) for k in range(len(subsets))]
        if len(self.owners) < cfg.pieces:
            remaining = self._remaining()
            total = sum(remaining)
            return [(a, remaining[a] / total) for a in range(n) if remaining[a] > 0]
        if len(self.positions) < n:
            taken = set(self.positions)
            free = [r * w + c for r in range(w) for c in range(w) if (r, c) not in taken]
            return [(cell, 1.0 / len(free)) for cell in free]
        taken = set(self.bases)
        free = [r * w + c for r in range(w) for c in range(w) if (r, c) not in taken]
        return [(cell, 1.0 / len(free)) for cell in free]

    def _remaining(self) -> List[int]:
        n, c = self.cfg.agents, self.cfg.pieces
        quota = [c // n + (1 if a in self.extra else 0) for a in range(n)]
        for a in self.owners:
            quota[a] -= 1
        return quota

    def _apply_chance(self, outcome: int) -> None:
        cfg, n, w = self.cfg, self.cfg.agents, self.cfg.width
        if self.pending is not None:
            self.coins.append(outcome)
            self._try_step()
            return
        if self.extra is None:
            self.extra = self.game.extra_subsets[outcome]
        elif len(self.owners) < cfg.pieces:
            self.owners.append(outcome)
        elif len(self.positions) < n:
            self.positions.append(divmod(outcome, w))
        else:
            self.bases.append(divmod(outcome, w))
        if len(self.owners) == cfg.pieces and len(self.positions) == n and len(self.bases) == n and not self.first_hand:
            first = [0] * n
            for piece, owner in enumerate(self.owners):
                first[owner] |= 1 << piece
            self.first_hand = first
            self.knowledge = list(first)
            for i in range(n):
                shown = ",".join(str(m) if (j == i or not cfg.hide_first_hand) else "?" for j, m in enumerate(first))
                self.logs[i].append(f"fh={shown};pos={self.positions};bases={self.bases}")

    def _skip_forced(self) -> None:
        while self.current_player() == CHANCE:
            outcomes = self._chance_list()
            if len(outcomes) != 1:
                return
            self._apply_chance(outcomes[0][0])

    # ----------------------------------------------------------------- play
    def _try_step(self) -> None:
        coins = iter(self.coins)

        def coin(a: int, b: int) -> bool:
            try:
                return bool(next(coins))
            except StopIteration:
                raise _NeedCoin from None

        cfg, n, c = self.cfg, self.cfg.agents, self.cfg.pieces
        moves = [a // c for a in self.pending]
        pieces = [a % c for a in self.pending]
        positions, knowledge = list(self.positions), list(self.knowledge)
        try:
            outcome = apply_step(cfg, positions, self.bases, self.first_hand, knowledge, moves, pieces, coin)
        except _NeedCoin:
            return
        joint = self.pending
        self.positions, self.knowledge = positions, knowledge
        self.pending, self.coins = None, []
        self.t += 1
        self.last_rewards = [float(r) for r in outcome.rewards]
        self.last_moves = list(outcome.realized_moves)
        self.last_spoken = list(outcome.spoken)
        for i in range(n):
            self.totals[i] += outcome.rewards[i]
            heard = [(j, outcome.spoken[j]) for j in range(n) if j != i and outcome.spoken[j] >= 0
                     and hears(positions[j], positions[i], cfg.hearing)]
            self.logs[i].append(f"a={joint[i]};m={outcome.realized_moves};h={heard};r={outcome.rewards[i]}")

    def current_player(self) -> int:
        if not self._start_done() or self.pending is not None:
            return CHANCE
        if self.t >= self.cfg.episode_length:
            return TERMINAL
        return SIMULTANEOUS

    def chance_outcomes(self) -> List[Tuple[int, float]]:
        if self.current_player() != CHANCE:
            raise GameError("not a chance node")
        return self._chance_list()

    def _legal_actions(self, player: int) -> List[int]:
        current = self.current_player()
        if current == CHANCE:
            return [a for a, _ in self._chance_list()] if player == CHANCE else []
        if current != SIMULTANEOUS or not 0 <= player < self.cfg.agents:
            return []
        return list(range(NUM_MOVES * self.cfg.pieces))

    def _apply_action(self, action: int) -> None:
        if self.current_player() != CHANCE:
            raise GameError("symmtom takes joint actions at simultaneous nodes: use apply_actions")
        self._apply_chance(action)
        self._skip_forced()

    def _apply_joint_action(self, actions: Sequence[int]) -> None:
        self.pending = list(actions)
        self.coins = []
        self._try_step()
        self._skip_forced()

    def returns(self) -> List[float]:
        return list(self.totals)

    def rewards(self) -> List[float]:
        return list(self.last_rewards)

    def information_state_string(self, player: Optional[int] = None) -> str:
        if player is None or not 0 <= player < self.cfg.agents:
            raise GameError(f"symmtom: pass a player in [0, {self.cfg.agents}) for its information state")
        return f"p{player}|" + "|".join(self.logs[player])

    def observation_string(self, player: Optional[int] = None) -> str:
        if player is None or not 0 <= player < self.cfg.agents:
            raise GameError(f"symmtom: pass a player in [0, {self.cfg.agents}) for its observation")
        return f"p{player}|t={self.t}|" + (self.logs[player][-1] if self.logs[player] else "")

    def observation_tensor(self, player: Optional[int] = None) -> np.ndarray:
        if player is None or not 0 <= player < self.cfg.agents:
            raise GameError(f"symmtom: pass a player in [0, {self.cfg.agents}) for its observation")
        if not self._start_done():
            raise GameError("symmtom: no observation before the start is drawn")
        return observation_vector(self.cfg, player, self.positions, self.bases, self.first_hand, self.knowledge,
                                  self.last_moves, self.last_spoken)

    def action_to_string(self, action: int, player: Optional[int] = None) -> str:
        if self.current_player() == CHANCE or player == CHANCE:
            return f"chance:{action}"
        move, piece = divmod(action, self.cfg.pieces)
        return f"{MOVE_NAMES[move]}+say{piece}" if 0 <= move < NUM_MOVES else str(action)


register("symmtom", SymmToMGame,
         {"agents": 3, "width": 6, "pieces": 3, "hearing": 1, "steps": 0, "start": "random",
          "hide_first_hand": False, "oracle": False},
         "SymmToM theory-of-mind grid world (simultaneous moves); steps=0 means 5*width; "
         "start=fixed gives small traversable instances")
