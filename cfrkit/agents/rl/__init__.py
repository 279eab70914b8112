"""Pieces shared by cfrkit's torch learners (Hanabi IPPO/DQN, SymmToM MADDPG family).

* :mod:`.checkpoint` -- atomic torch checkpoints, RNG state capture, device choice, run directories.
* :mod:`.scalars` -- CSV scalar logs (one row per iteration; TensorBoard-style tags as columns).
* :mod:`.replay` -- a uniform replay buffer of named numpy arrays whose state goes into checkpoints.

torch is imported lazily by the learners; these modules import it at the top (they are only
imported by code that trains).
"""
from cfrkit.agents.rl.checkpoint import (LearnerError, RunDirectory, default_device, load_checkpoint,
                                         save_checkpoint)
from cfrkit.agents.rl.scalars import CsvScalars, read_scalars

__all__ = ["LearnerError", "RunDirectory", "default_device", "load_checkpoint", "save_checkpoint",
           "CsvScalars", "read_scalars"]
