"""Belief-tracking SymmToM agents: the knowledge matrix K of Sclar et al. (Sec. 6) and a planner.

:class:`KnowledgeTracker` (in :mod:`cfrkit.agents.symmtom.knowledge`, re-exported here) keeps, for the
agent ``k`` it belongs to, K (c x n; K[p, j] = "k believes j knows p") updated every step with Eq. 2 of
the paper:

    K_j <- (F_j or S_j or K_j) and not (B_j and E_j)

* F: first-hand pieces (public; unknown others' rows are zero with ``hide_first_hand``).
* S[0] (exact): the piece k said reached every agent in k's hearing range.
* S[1] (exact): a piece k heard from l reached every agent in l's range (k included).
* S[2]: encounters k could not hear.  ``"ce"`` (conservative) assumes nothing; ``"ge"`` (greedy)
  assumes every unheard agent l with listeners said the piece it knows that the fewest of its
  listeners know (the paper's U_l, restricted to pieces l is believed to know and new to someone).
  Greedy guesses are kept apart from the exact part so that they can be withdrawn: when k's own
  speaking reward shows that all its listeners already knew the piece it said and some listener
  was not believed to know it, that listener's guesses are dropped (a retroactive deduction).
* B, E: an agent on its base believed to know everything forgets all but its first-hand pieces.
* ``"oracle"``: K is the true knowledge (needs an environment built with ``oracle=True``).

k's own column is exact in every mode (zeroth-order theory of mind).

:class:`BeliefAgent` chooses movement and speech to maximise expected reward under K: it goes to
its base when it knows everything (c (n-1) reward), otherwise to the agent whose meeting is worth
most per step -- the value of meeting j is the pieces k can give j plus the pieces j can give k,
and the meeting time accounts for j's predicted movement (j is assumed to run the same rule with
k's beliefs: second-order reasoning) -- and says the known piece that the most predicted listeners
lack.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from cfrkit.agents.symmtom.base import SymmToMAgent
# the tracker and the grid paths sit below the agents; re-exported here where they used to live
from cfrkit.agents.symmtom.knowledge import MODES, KnowledgeTracker, popcount
from cfrkit.agents.symmtom.paths import Cell, path_step, step_toward, steps_to_range
from cfrkit.games.base import GameError
from cfrkit.games.symmtom.core import MOVE_DELTAS, hears
from cfrkit.games.symmtom.env import AgentView


class BeliefAgent(SymmToMAgent):
    """Expected-reward planner on top of a :class:`KnowledgeTracker` (see module docstring)."""

    def __init__(self, mode: str = "ge", horizon: Optional[int] = None):
        if mode not in MODES:
            raise GameError(f"belief agent mode must be one of {MODES}, got {mode!r}")
        self.mode = mode
        self.name = mode
        self.horizon = horizon

    def reset(self, view: AgentView) -> None:
        self.tracker = KnowledgeTracker(view, self.mode)
        self.turn = 0

    # ----------------------------------------------------------------- predictions
    def _value(self, a: int, b: int, know: Sequence[int]) -> int:
        """Reward a meeting of ``a`` and ``b`` is worth to ``a`` (pieces to give plus to get)."""
        return popcount(know[a] & ~know[b]) + popcount(know[b] & ~know[a])

    def _target_of(self, j: int, pos: Sequence[Cell], know: Sequence[int], full: int, h: int) -> Cell:
        """Where agent ``j`` is predicted to head (its base when it knows all, else its best partner)."""
        if know[j] == full:
            return self.tracker.bases[j]
        best, best_score = pos[j], 0.0
        for k in range(len(pos)):
            if k == j:
                continue
            v = self._value(j, k, know)
            if v <= 0:
                continue
            score = v / (steps_to_range(pos[j], pos[k], h) + 1.0)
            if score > best_score + 1e-9:
                best, best_score = pos[k], score
        return best

    def _trajectory(self, j: int, pos: Sequence[Cell], target: Cell, width: int, h: int, length: int,
                    to_range: bool) -> List[Cell]:
        """Predicted cells of ``j`` for t = 0..length (greedy rows-first walk, then stays)."""
        cells = [pos[j]]
        cur = pos[j]
        for _ in range(length):
            done = (steps_to_range(cur, target, h) == 0) if to_range else cur == target
            if not done:
                m = step_toward(cur, target, width)
                cur = (cur[0] + MOVE_DELTAS[m][0], cur[1] + MOVE_DELTAS[m][1])
            cells.append(cur)
        return cells

    # ----------------------------------------------------------------- acting
    def act(self, view: AgentView) -> Tuple[int, int]:
        tr = self.tracker
        if view.t > 0:
            tr.update(view)
        cfg = view.config
        n, w, h, me = cfg.agents, cfg.width, cfg.hearing, tr.me
        pos = [tuple(p) for p in view.positions]
        know = [tr.believed(j) for j in range(n)]
        know[me] = tr.own()
        full = tr.full
        remaining = cfg.episode_length - view.t
        horizon = self.horizon or 2 * w
        # predicted trajectories of the others
        trajs = {}
        for j in range(n):
            if j == me:
                continue
            target = self._target_of(j, pos, know, full, h)
            to_range = target != self.tracker.bases[j] or know[j] != full
            trajs[j] = self._trajectory(j, pos, target, w, h, horizon, to_range)
        others_now = [pos[j] for j in range(n) if j != me]

        if know[me] == full:
            goal = tr.bases[me]
        else:
            goal, best_score = None, 0.0
            for j in range(n):
                if j == me:
                    continue
                v = self._value(me, j, know)
                if v <= 0:
                    continue
                traj = trajs[j]
                tau = next((t for t, cell in enumerate(traj) if steps_to_range(pos[me], cell, h) <= t), None)
                if tau is None or tau >= remaining:
                    continue
                cell = self._nearest_in_range(pos[me], traj[tau], h)
                # others predicted within hearing range of the meeting cell are met too
                for k in range(n):
                    if k != me and k != j and hears(cell, trajs[k][min(tau, len(trajs[k]) - 1)], h):
                        v += self._value(me, k, know)
                score = v / (tau + 1.0)
                if score > best_score + 1e-9:
                    best_score = score
                    goal = cell
                    if goal == pos[me] and not hears(pos[me], pos[j], h):
                        # j is predicted to come to me; walk towards it anyway, so that two agents
                        # waiting for each other never deadlock
                        goal = self._nearest_in_range(pos[me], pos[j], h)
            if goal is None:
                goal = pos[me]
        move = path_step(pos[me], goal, w, others_now)
        nxt = (pos[me][0] + MOVE_DELTAS[move][0], pos[me][1] + MOVE_DELTAS[move][1])
        piece = self._choose_piece(me, nxt, trajs, know, h, cfg.pieces)
        self.turn += 1
        return move, piece

    @staticmethod
    def _nearest_in_range(me: Cell, cell: Cell, h: int) -> Cell:
        """The cell within Chebyshev ``h`` of ``cell`` closest to ``me``."""
        r = min(max(me[0], cell[0] - h), cell[0] + h)
        c = min(max(me[1], cell[1] - h), cell[1] + h)
        return (r, c)

    def _choose_piece(self, me: int, nxt: Cell, trajs, know: Sequence[int], h: int, c: int) -> int:
        mine = know[me]
        known = [p for p in range(c) if (mine >> p) & 1]
        if not known:
            return 0
        sure = self.tracker.sure
        best, best_score = None, 0.0
        for p in known:
            bit = 1 << p
            score = 0.0
            for j, traj in trajs.items():
                nearby = traj[1] if len(traj) > 1 else traj[0]
                if hears(nxt, nearby, h):
                    weight = 1.0
                elif hears(nxt, traj[0], h + 1) or hears(nxt, nearby, h + 1):
                    weight = 0.25
                else:
                    continue
                if not know[j] & bit:
                    score += weight
                elif not sure[j] & bit:
                    score += 0.01 * weight  # believed known only by a guess
            if score > best_score + 1e-12:
                best, best_score = p, score
        if best is None:
            best = known[self.turn % len(known)]
        return best


class OracleAgent(BeliefAgent):
    """The planner with the true knowledge matrix (environment built with ``oracle=True``)."""

    def __init__(self, horizon: Optional[int] = None):
        super().__init__("oracle", horizon)
