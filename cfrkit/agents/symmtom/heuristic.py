"""The paper's heuristic agent (movement helpers: :mod:`cfrkit.agents.symmtom.paths`).

Heuristic (Sclar et al., Sec. 5): go to the centre of the board and say the known pieces round
robin until knowing all c pieces; then go to the own recharge base by a shortest path and come
back to the centre, where the process restarts.  It tracks only its own knowledge (first-hand,
what it hears, forgetting after a correct base use).
"""
from __future__ import annotations

from typing import Tuple

from cfrkit.agents.symmtom.base import SymmToMAgent
# the movement helpers live in paths.py (the belief agents use them too); re-exported here
from cfrkit.agents.symmtom.paths import Cell, center_cell, manhattan, path_step, step_toward, steps_to_range
from cfrkit.games.symmtom.env import AgentView

__all__ = ["HeuristicAgent", "Cell", "center_cell", "manhattan", "path_step", "step_toward", "steps_to_range"]


class HeuristicAgent(SymmToMAgent):
    """The paper's heuristic (see module docstring)."""

    name = "heuristic"

    def reset(self, view: AgentView) -> None:
        self.me = view.agent
        self.first = view.first_hand[view.agent]
        self.known = self.first
        self.full = view.config.full_mask
        self.turn = 0

    def _update(self, view: AgentView) -> None:
        before = self.known
        for _, piece in view.heard:
            self.known |= 1 << piece
        if before == self.full and view.positions[self.me] == view.bases[self.me]:
            self.known = self.first

    def act(self, view: AgentView) -> Tuple[int, int]:
        if view.t > 0:
            self._update(view)
        cfg = view.config
        me = view.positions[self.me]
        target = view.bases[self.me] if self.known == self.full else center_cell(cfg.width)
        others = [p for j, p in enumerate(view.positions) if j != self.me]
        move = path_step(me, target, cfg.width, others)
        known = [p for p in range(cfg.pieces) if (self.known >> p) & 1]
        piece = known[self.turn % len(known)] if known else 0
        self.turn += 1
        return move, piece
