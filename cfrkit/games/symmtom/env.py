"""Single-episode SymmToM environment, scripted agents and the per-agent view agents act on.

>>> env = SymmToMEnv(agents=3, width=6, pieces=3, seed=0)
>>> obs = env.reset()
>>> obs, rewards, done, info = env.step([(0, 0), (1, 1), (4, 2)])   # (move, piece) per agent

Actions are ``(move, piece)`` pairs or joint ids ``move * c + piece``.  Agents under a
:class:`Script` (fixed, immobile or following a path) ignore the action passed for them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from cfrkit.games.base import GameError
from cfrkit.games.symmtom.core import (
    NUM_MOVES, SILENT, STAY, Start, StepOutcome, SymmToMConfig, apply_step, hears, mask_to_array,
    observation_vector, sample_start,
)

Action = Union[int, Tuple[int, int], Sequence[int]]


@dataclass
class Script:
    """Scripted control of one agent.

    ``moves[k]`` / ``pieces[k]`` are used on the k-th step after the script was set; after the lists
    run out ``then_move`` / ``then_piece`` are used.  A piece of ``None`` (or -1) is silence.
    """

    moves: Sequence[int] = ()
    pieces: Sequence[Optional[int]] = ()
    then_move: int = STAY
    then_piece: Optional[int] = None

    @staticmethod
    def immobile(piece: Optional[int] = None) -> "Script":
        """Never moves; says ``piece`` every step (silence if None or unknown)."""
        return Script((), (), STAY, piece)

    @staticmethod
    def fixed(move: int, piece: Optional[int] = None) -> "Script":
        """The same (move, piece) every step."""
        return Script((), (), move, piece)

    @staticmethod
    def path(moves: Sequence[int], pieces: Sequence[Optional[int]] = (), then_piece: Optional[int] = None) -> "Script":
        """Follows ``moves`` (then stays), saying ``pieces[k]`` on step k."""
        return Script(tuple(moves), tuple(pieces), STAY, then_piece)

    def action(self, k: int) -> Tuple[int, int]:
        move = self.moves[k] if k < len(self.moves) else self.then_move
        piece = self.pieces[k] if k < len(self.pieces) else self.then_piece
        return int(move), SILENT if piece is None else int(piece)


@dataclass
class AgentView:
    """What one agent perceives at a decision point (after ``reset`` or a step).

    Public: grid geometry, all positions and bases, last realized moves; first-hand masks of all
    agents (others' are None when ``hide_first_hand``).  Private: speech heard this step from agents
    in range (``heard``: list of (speaker, piece)), the agent's own attempted and realized speech and
    its reward.  ``knowledge`` (every agent's true knowledge masks) is set only with the oracle.
    """

    agent: int
    config: SymmToMConfig
    t: int
    positions: List[Tuple[int, int]]
    bases: List[Tuple[int, int]]
    first_hand: List[Optional[int]]
    last_moves: List[int]
    heard: List[Tuple[int, int]]
    own_attempt: int
    own_spoken: int
    reward: float
    observation: Optional[np.ndarray]
    knowledge: Optional[List[int]] = None


class SymmToMEnv:
    """One SymmToM episode at a time (pure Python; about 10-50k joint steps/s)."""

    def __init__(self, config: Optional[SymmToMConfig] = None, seed: Optional[int] = None, **params):
        if config is None:
            config = SymmToMConfig(**params)
        elif params:
            raise GameError("pass either a SymmToMConfig or keyword parameters, not both")
        self.config = config
        self.rng = np.random.default_rng(seed)
        self.scripts: Dict[int, Script] = {}
        self._script_start: Dict[int, int] = {}
        self.t = 0
        self._started = False

    # ----------------------------------------------------------------- control
    def reset(self, seed: Optional[int] = None, start: Optional[Start] = None) -> List[np.ndarray]:
        """Start an episode (random layout unless ``start`` is given); returns observations."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        cfg = self.config
        if start is None:
            start = sample_start(cfg, self.rng)
        else:
            start.validate(cfg)
        self.positions = [tuple(map(int, p)) for p in start.positions]
        self.bases = [tuple(map(int, b)) for b in start.bases]
        self.first_hand = [int(m) for m in start.first_hand]
        self.knowledge = list(self.first_hand)
        self.last_moves = [STAY] * cfg.agents
        self.last_spoken = [SILENT] * cfg.agents
        self.last_attempt = [SILENT] * cfg.agents
        self.last_rewards = [0] * cfg.agents
        self.returns = [0] * cfg.agents
        self.last_outcome: Optional[StepOutcome] = None
        self.t = 0
        self._started = True
        for i in self.scripts:
            self._script_start[i] = 0
        return self.observations()

    def set_script(self, agent: int, script: Optional[Script]) -> None:
        """Put ``agent`` under scripted control from the next step on (None releases it)."""
        if not 0 <= agent < self.config.agents:
            raise GameError(f"agent {agent} does not exist (agents 0..{self.config.agents - 1})")
        if script is None:
            self.scripts.pop(agent, None)
            self._script_start.pop(agent, None)
        else:
            self.scripts[agent] = script
            self._script_start[agent] = self.t

    @property
    def done(self) -> bool:
        return self.t >= self.config.episode_length

    def _parse(self, agent: int, action: Action) -> Tuple[int, int]:
        c = self.config.pieces
        if isinstance(action, (int, np.integer)):
            a = int(action)
            if not 0 <= a < NUM_MOVES * c:
                raise GameError(f"action {a} of agent {agent} is outside [0, {NUM_MOVES * c})")
            return divmod(a, c)
        try:
            move, piece = action
        except (TypeError, ValueError):
            raise GameError(f"action of agent {agent} must be an id or a (move, piece) pair, got {action!r}") from None
        move, piece = int(move), int(piece)
        if not 0 <= move < NUM_MOVES:
            raise GameError(f"move {move} of agent {agent} is outside [0, {NUM_MOVES})")
        if not (0 <= piece < c or piece == SILENT):
            raise GameError(f"piece {piece} of agent {agent} is outside [0, {c})")
        return move, piece

    def step(self, actions: Sequence[Action], observe: bool = True):
        """Apply one joint action; returns ``(observations, rewards, done, info)``.

        ``info`` holds the :class:`StepOutcome` under ``"outcome"``.  With ``observe=False`` the
        observations are not built (None), which is faster.
        """
        if not self._started:
            raise GameError("call reset() before step()")
        if self.done:
            raise GameError("the episode is over; call reset()")
        n = self.config.agents
        if len(actions) != n:
            raise GameError(f"need {n} actions, got {len(actions)}")
        moves, pieces = [0] * n, [0] * n
        for i in range(n):
            script = self.scripts.get(i)
            if script is not None:
                moves[i], pieces[i] = script.action(self.t - self._script_start[i])
            else:
                moves[i], pieces[i] = self._parse(i, actions[i])
        outcome = apply_step(self.config, self.positions, self.bases, self.first_hand, self.knowledge,
                             moves, pieces, self._coin)
        self.t += 1
        self.last_moves = outcome.realized_moves
        self.last_spoken = outcome.spoken
        self.last_attempt = pieces
        self.last_rewards = outcome.rewards
        for i in range(n):
            self.returns[i] += outcome.rewards[i]
        self.last_outcome = outcome
        obs = self.observations() if observe else None
        return obs, list(outcome.rewards), self.done, {"outcome": outcome}

    def _coin(self, a: int, b: int) -> bool:
        if self.config.tiebreak == "first":
            return True
        return bool(self.rng.random() < 0.5)

    # ----------------------------------------------------------------- views
    def observation(self, agent: int) -> np.ndarray:
        """The authors' observation vector of ``agent`` (see :func:`observation_vector`)."""
        return observation_vector(self.config, agent, self.positions, self.bases, self.first_hand,
                                  self.knowledge, self.last_moves, self.last_spoken)

    def observations(self) -> List[np.ndarray]:
        return [self.observation(i) for i in range(self.config.agents)]

    def knowledge_matrix(self) -> np.ndarray:
        """True knowledge, bool (c, n): entry (p, j) is True when agent j knows piece p."""
        c = self.config.pieces
        return np.stack([mask_to_array(m, c) for m in self.knowledge], axis=1)

    def view(self, agent: int, with_observation: bool = True) -> AgentView:
        """What ``agent`` perceives now (see :class:`AgentView`); ``observation`` is None unless
        ``with_observation``."""
        cfg = self.config
        me = self.positions[agent]
        heard = [(j, self.last_spoken[j]) for j in range(cfg.agents)
                 if j != agent and self.last_spoken[j] >= 0 and hears(self.positions[j], me, cfg.hearing)]
        first = [m if (j == agent or not cfg.hide_first_hand) else None for j, m in enumerate(self.first_hand)]
        return AgentView(agent, cfg, self.t, list(self.positions), list(self.bases), first,
                         list(self.last_moves), heard, self.last_attempt[agent], self.last_spoken[agent],
                         float(self.last_rewards[agent]), self.observation(agent) if with_observation else None,
                         list(self.knowledge) if cfg.oracle else None)

    def render(self) -> str:
        """A text picture: agents as digits, bases as letters (A = agent 0's base)."""
        w = self.config.width
        grid = [["." for _ in range(w)] for _ in range(w)]
        for i, (r, c) in enumerate(self.bases):
            grid[r][c] = chr(ord("A") + i)
        for i, (r, c) in enumerate(self.positions):
            grid[r][c] = str(i % 10)
        rows = ["".join(row) for row in grid]
        c = self.config.pieces
        know = " ".join(f"{i}:" + "".join("1" if (m >> p) & 1 else "0" for p in range(c))
                        for i, m in enumerate(self.knowledge))
        return "\n".join(rows) + f"\nt={self.t} knowledge(piece 0 first) {know}"
