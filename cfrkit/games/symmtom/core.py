"""SymmToM rules: configuration, start layouts, one simultaneous step, observations.

Everything here follows how the authors' environment code behaves (see docs/symmtom.md):

* ``n`` agents on a ``w x w`` grid (the wall ring is outside the grid); agents stand on distinct
  cells; each agent has its own recharge base (bases are on distinct cells, do not block, and may
  hold an agent).
* ``c`` information pieces, each first-hand to exactly one agent: ``c // n`` each, the remaining
  ``c % n`` to a random subset of agents; the assignment is uniform over all such balanced ones.
* Each step every agent picks a move (stay, up, down, left, right) and a piece to say.  Saying a
  piece it does not know (as of the start of the step) is silence.  A move off the grid is cancelled.
  Then, repeatedly and in pair order ``(a, b)`` with ``a < b``, when two agents aim at one cell
  (a staying agent's cell included) one of the two that actually moves -- chosen by a fair coin
  when both move -- is cancelled, until no conflict remains.  Swaps are allowed.
* Speech is judged after movement: ``i`` hears ``j`` when their Chebyshev distance is at most ``h``.
  For every (listener, speaker) pair where the spoken piece is new to the listener (knowledge as of
  the start of the step), the listener gets +1 and the speaker gets +1 (so two speakers saying one
  new piece to a listener give it +2).  An agent standing on its own base (after moving) while
  knowing all ``c`` pieces at the start of the step gets ``c (n - 1)`` and then forgets everything
  but its first-hand pieces.  All knowledge updates apply at the end of the step.
* Episodes last ``steps`` steps (default ``5 w``).

Positions are ``(row, col)`` with ``0 <= row, col < w``; moves are 0 stay, 1 up (row - 1),
2 down (row + 1), 3 left (col - 1), 4 right (col + 1).  Knowledge is stored as one integer bit mask
per agent (bit ``p`` set = knows piece ``p``).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.games.base import GameError

STAY, UP, DOWN, LEFT, RIGHT = 0, 1, 2, 3, 4
NUM_MOVES = 5
MOVE_NAMES = ("stay", "up", "down", "left", "right")
MOVE_DELTAS = ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1))
#: Wall flags in the observation, in the authors' neighbour order: right, left, down, up.
WALL_ORDER = ((0, 1), (0, -1), (1, 0), (-1, 0))
SILENT = -1


@dataclass(frozen=True)
class SymmToMConfig:
    """Parameters of one SymmToM setting.

    ``agents`` n, ``width`` w (cells per side), ``pieces`` c, ``hearing`` h (Chebyshev radius,
    cells), ``steps`` episode length (0 means 5 w), ``hide_first_hand`` removes other agents'
    first-hand pieces from observations (they are zero), ``oracle`` adds every agent's current
    knowledge to observations, ``tiebreak`` is ``"random"`` (the authors' rule: a fair coin picks
    which of two conflicting movers is cancelled) or ``"first"`` (the lower index is cancelled
    first; deterministic, used to compare implementations).
    """

    agents: int = 3
    width: int = 6
    pieces: int = 3
    hearing: int = 1
    steps: int = 0
    hide_first_hand: bool = False
    oracle: bool = False
    tiebreak: str = "random"

    def __post_init__(self):
        for name in ("agents", "width", "pieces", "hearing", "steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise GameError(f"symmtom: {name} must be an integer, got {value!r}")
        if self.agents < 2:
            raise GameError(f"symmtom: needs at least 2 agents, got agents={self.agents}")
        if self.pieces < 1:
            raise GameError(f"symmtom: needs at least 1 information piece, got pieces={self.pieces}")
        if self.hearing < 0:
            raise GameError(f"symmtom: hearing range must be >= 0, got hearing={self.hearing}")
        if self.width < 2 * self.hearing + 2:
            raise GameError(
                f"symmtom: the hearing square must not cover the grid (2h+1 < w): width={self.width}, "
                f"hearing={self.hearing} needs width >= {2 * self.hearing + 2}")
        if self.width * self.width < self.agents:
            raise GameError(f"symmtom: {self.agents} agents do not fit on a {self.width}x{self.width} grid")
        if self.steps < 0:
            raise GameError(f"symmtom: steps must be >= 0 (0 means 5*width), got steps={self.steps}")
        if self.tiebreak not in ("random", "first"):
            raise GameError(f"symmtom: tiebreak must be 'random' or 'first', got {self.tiebreak!r}")

    @property
    def episode_length(self) -> int:
        """Steps per episode: ``steps`` or 5 w."""
        return self.steps if self.steps > 0 else 5 * self.width

    @property
    def full_mask(self) -> int:
        return (1 << self.pieces) - 1

    @property
    def recharge_reward(self) -> int:
        """Reward for a correct recharge-base use: c (n - 1)."""
        return self.pieces * (self.agents - 1)

    @property
    def observation_size(self) -> int:
        """(2n - 1) c + 6 n + 2, plus n c with the oracle."""
        n, c = self.agents, self.pieces
        return (2 * n - 1) * c + 6 * n + 2 + (n * c if self.oracle else 0)

    @property
    def num_actions(self) -> int:
        """Joint move-and-speak action ids per agent: 5 c (id = move * c + piece)."""
        return NUM_MOVES * self.pieces

    def max_step_reward(self) -> int:
        """Largest reward one agent can get in one step."""
        return (self.agents - 1) * 2 + self.recharge_reward


@dataclass
class Start:
    """A start layout: agent cells, base cells, first-hand bit masks (one per agent)."""

    positions: List[Tuple[int, int]]
    bases: List[Tuple[int, int]]
    first_hand: List[int]

    def validate(self, cfg: SymmToMConfig) -> None:
        n, w = cfg.agents, cfg.width
        if len(self.positions) != n or len(self.bases) != n or len(self.first_hand) != n:
            raise GameError(f"symmtom start: need {n} positions, bases and first-hand masks")
        for cell in list(self.positions) + list(self.bases):
            if not (0 <= cell[0] < w and 0 <= cell[1] < w):
                raise GameError(f"symmtom start: cell {cell} is outside the {w}x{w} grid")
        if len(set(map(tuple, self.positions))) != n:
            raise GameError("symmtom start: agents must stand on distinct cells")
        if len(set(map(tuple, self.bases))) != n:
            raise GameError("symmtom start: recharge bases must be on distinct cells")
        union = 0
        for mask in self.first_hand:
            if mask & union:
                raise GameError("symmtom start: a piece is first-hand to two agents")
            union |= mask
        if union != cfg.full_mask:
            raise GameError("symmtom start: every piece must be first-hand to exactly one agent")


def sample_start(cfg: SymmToMConfig, rng: np.random.Generator) -> Start:
    """A random start with the authors' distribution (uniform cells, balanced first-hand pieces)."""
    n, w, c = cfg.agents, cfg.width, cfg.pieces
    cells = rng.choice(w * w, size=n, replace=False)
    base_cells = rng.choice(w * w, size=n, replace=False)
    owners = list(range(n)) * (c // n)
    if c % n:
        owners += list(rng.choice(n, size=c % n, replace=False))
    owners = np.array(owners)
    rng.shuffle(owners)
    first = [0] * n
    for piece, owner in enumerate(owners):
        first[int(owner)] |= 1 << piece
    return Start([divmod(int(x), w) for x in cells], [divmod(int(x), w) for x in base_cells], first)


def fixed_start(cfg: SymmToMConfig, first_hand: Optional[Sequence[int]] = None) -> Start:
    """The canonical layout of small instances: agent i on row 0 at column (h + 1) i (wrapping to
    later rows), base i on the last row at column i (wrapping upward); first-hand pieces ``p`` to
    agent ``p % n`` unless given."""
    n, w, h = cfg.agents, cfg.width, cfg.hearing
    positions, bases = [], []
    for i in range(n):
        k = i * (h + 1)
        positions.append((k // w, k % w) if k < w * w else divmod(i, w))
        bases.append((w - 1 - i // w, i % w))
    if len(set(positions)) != n:
        positions = [divmod(i, w) for i in range(n)]
    if first_hand is None:
        first = [0] * n
        for p in range(cfg.pieces):
            first[p % n] |= 1 << p
    else:
        first = list(first_hand)
    return Start(positions, bases, first)


def resolve_moves(width: int, positions: Sequence[Tuple[int, int]], moves: Sequence[int],
                  coin: Callable[[int, int], bool]) -> Tuple[List[Tuple[int, int]], List[int]]:
    """New positions and realized moves (0 where cancelled) after walls and collisions.

    ``coin(a, b)`` is asked only when agents ``a < b`` both move into one cell; True cancels ``a``.
    """
    n = len(positions)
    target = []
    realized = []
    for i in range(n):
        r, c = positions[i]
        m = moves[i]
        dr, dc = MOVE_DELTAS[m]
        nr, nc = r + dr, c + dc
        if m != STAY and 0 <= nr < width and 0 <= nc < width:
            target.append((nr, nc))
            realized.append(m)
        else:
            target.append((r, c))
            realized.append(STAY)
    changed = True
    while changed:
        changed = False
        for a in range(n):
            for b in range(a + 1, n):
                if target[a] == target[b]:
                    if realized[a] and realized[b]:
                        k = a if coin(a, b) else b
                    else:
                        k = a if realized[a] else b
                    target[k] = positions[k]
                    realized[k] = STAY
                    changed = True
    return target, realized


def hears(p: Tuple[int, int], q: Tuple[int, int], h: int) -> bool:
    """Whether cells ``p`` and ``q`` are within Chebyshev distance ``h``."""
    return abs(p[0] - q[0]) <= h and abs(p[1] - q[1]) <= h


@dataclass
class StepOutcome:
    """What happened in one step (all lists indexed by agent)."""

    rewards: List[int]
    realized_moves: List[int]
    spoken: List[int]              # piece actually said, SILENT when the agent did not know it
    hearing_reward: List[int]
    speaking_reward: List[int]
    recharged: List[bool]          # correct recharge-base use this step
    failed_base: List[bool]        # on own base without knowing all pieces
    knowledge_before: List[int] = field(default_factory=list)


def apply_step(cfg: SymmToMConfig, positions: List[Tuple[int, int]], bases: Sequence[Tuple[int, int]],
               first_hand: Sequence[int], knowledge: List[int], moves: Sequence[int],
               pieces: Sequence[int], coin: Callable[[int, int], bool]) -> StepOutcome:
    """Apply one joint action in place on ``positions`` and ``knowledge``; return what happened.

    ``pieces[i]`` may be ``SILENT`` (scripted silence) or any piece; unknown pieces are silence.
    """
    n, h = cfg.agents, cfg.hearing
    before = list(knowledge)
    spoken = [p if p >= 0 and (before[i] >> p) & 1 else SILENT for i, p in enumerate(pieces)]
    new_pos, realized = resolve_moves(cfg.width, positions, moves, coin)
    positions[:] = new_pos
    hear_r = [0] * n
    speak_r = [0] * n
    new_know = list(before)
    for j in range(n):
        p = spoken[j]
        if p < 0:
            continue
        bit = 1 << p
        pj = new_pos[j]
        for i in range(n):
            if i != j and not before[i] & bit and hears(new_pos[i], pj, h):
                hear_r[i] += 1
                speak_r[j] += 1
                new_know[i] |= bit
    full = cfg.full_mask
    recharge = cfg.recharge_reward
    rewards = [hear_r[i] + speak_r[i] for i in range(n)]
    recharged = [False] * n
    failed = [False] * n
    for i in range(n):
        if new_pos[i] == tuple(bases[i]):
            if before[i] == full:
                rewards[i] += recharge
                recharged[i] = True
                new_know[i] = first_hand[i]
            else:
                failed[i] = True
    knowledge[:] = new_know
    return StepOutcome(rewards, realized, spoken, hear_r, speak_r, recharged, failed, before)


def observation_vector(cfg: SymmToMConfig, agent: int, positions: Sequence[Tuple[int, int]],
                       bases: Sequence[Tuple[int, int]], first_hand: Sequence[int],
                       knowledge: Sequence[int], last_moves: Sequence[int],
                       spoken: Sequence[int]) -> np.ndarray:
    """The authors' observation of ``agent`` (float32, length :attr:`SymmToMConfig.observation_size`).

    Layout: [own knowledge (c, oracle only)], own first-hand (c), last realized move (drow, dcol) of
    self then others (2n), others' positions relative to self / (w - 1) (2(n-1)), [others' knowledge
    ((n-1)c, oracle only)], others' first-hand ((n-1)c; zeros with ``hide_first_hand``), each
    agent's base relative to its owner / (w - 1), self first (2n), what each other agent said this
    step if within hearing range, one-hot ((n-1)c), walls right/left/down/up (4).
    """
    n, c, w, h = cfg.agents, cfg.pieces, cfg.width, cfg.hearing
    out = np.zeros(cfg.observation_size, dtype=np.float32)
    others = [j for j in range(n) if j != agent]
    scale = 1.0 / (w - 1)
    k = 0

    def bits(mask: int, at: int) -> None:
        for p in range(c):
            if (mask >> p) & 1:
                out[at + p] = 1.0

    if cfg.oracle:
        bits(knowledge[agent], k)
        k += c
    bits(first_hand[agent], k)
    k += c
    for j in [agent] + others:
        dr, dc = MOVE_DELTAS[last_moves[j]]
        out[k], out[k + 1] = dr, dc
        k += 2
    me = positions[agent]
    for j in others:
        out[k] = (positions[j][0] - me[0]) * scale
        out[k + 1] = (positions[j][1] - me[1]) * scale
        k += 2
    if cfg.oracle:
        for j in others:
            bits(knowledge[j], k)
            k += c
    for j in others:
        if not cfg.hide_first_hand:
            bits(first_hand[j], k)
        k += c
    for j in [agent] + others:
        out[k] = (bases[j][0] - positions[j][0]) * scale
        out[k + 1] = (bases[j][1] - positions[j][1]) * scale
        k += 2
    for j in others:
        if spoken[j] >= 0 and hears(positions[j], me, h):
            out[k + spoken[j]] = 1.0
        k += c
    for dr, dc in WALL_ORDER:
        r, cc = me[0] + dr, me[1] + dc
        out[k] = 0.0 if (0 <= r < w and 0 <= cc < w) else 1.0
        k += 1
    assert k == out.shape[0]
    return out


def mask_to_array(mask: int, c: int) -> np.ndarray:
    """Bit mask -> bool array of length c."""
    return np.array([(mask >> p) & 1 for p in range(c)], dtype=bool)


def balanced_owner_subsets(n: int, c: int) -> List[Tuple[int, ...]]:
    """The possible sets of agents holding one extra first-hand piece (size c mod n)."""
    return list(itertools.combinations(range(n), c % n))
