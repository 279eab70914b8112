"""SymmToM (Sclar, Neubig, Bisk 2022): a symmetric theory-of-mind grid world.

* :mod:`.core` -- configuration, rules of one step, the authors' observation vector.
* :mod:`.env` -- single-episode environment, scripted agents, per-agent views.
* :mod:`.batched` -- numpy environment stepping many episodes at once.
* :mod:`.parallel` -- a ``pettingzoo.ParallelEnv`` with Gymnasium spaces.
* :mod:`.game` -- SymmToM in the cfrkit game protocol (registered as ``symmtom``).
"""
from cfrkit.games.symmtom.core import (
    DOWN, LEFT, MOVE_NAMES, NUM_MOVES, RIGHT, SILENT, STAY, UP, Start, StepOutcome, SymmToMConfig,
    apply_step, fixed_start, observation_vector, resolve_moves, sample_start,
)
from cfrkit.games.symmtom.env import AgentView, Script, SymmToMEnv
from cfrkit.games.symmtom.batched import BatchedSymmToM

__all__ = [
    "DOWN", "LEFT", "MOVE_NAMES", "NUM_MOVES", "RIGHT", "SILENT", "STAY", "UP", "Start", "StepOutcome",
    "SymmToMConfig", "apply_step", "fixed_start", "observation_vector", "resolve_moves", "sample_start",
    "AgentView", "Script", "SymmToMEnv", "BatchedSymmToM",
]
