"""Checkpoints for torch learners: atomic writes, resume checks, device choice.

A run lives in a directory ``out/`` holding ``checkpoint.pt`` (everything needed to continue the run
bit for bit: networks, optimisers, torch and numpy generator states, counters, replay contents) and
``scalars.csv``.  Rerunning the same command on the same directory resumes; a checkpoint made with
different hyper-parameters is refused (one line naming the differing keys).
"""
from __future__ import annotations

import os
from typing import Any, Dict, Optional

from cfrkit._io import atomic_path
from cfrkit.games.base import GameError


class LearnerError(GameError):
    """Bad learner input: unknown variant, mismatching checkpoint, unusable device."""


def default_device(requested: Optional[str] = None) -> str:
    """``requested`` if given ("cpu", "cuda", "cuda:1"), else "cuda" when available, else "cpu"."""
    import torch

    if requested in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise LearnerError(f"device {requested!r} requested but CUDA is not available")
    if requested != "cpu" and not requested.startswith("cuda"):
        raise LearnerError(f"device must be 'auto', 'cpu' or 'cuda[:k]', got {requested!r}")
    return requested


def save_checkpoint(path: str, payload: Dict[str, Any]) -> None:
    """``torch.save`` atomically (:func:`cfrkit._io.atomic_path`), so an interrupted save never leaves half a file."""
    import torch

    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def load_checkpoint(path: str) -> Dict[str, Any]:
    """Load a checkpoint written by :func:`save_checkpoint` (tensors mapped to the CPU)."""
    import torch

    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:  # a truncated or foreign file: one line, not a pickle traceback
        raise LearnerError(f"cannot read checkpoint {path}: {type(exc).__name__}: {exc}") from None


class RunDirectory:
    """``out/checkpoint.pt`` + ``out/scalars.csv`` of one training run.

    ``hyper`` (a JSON-like dict of the settings that define the run) is stored in the checkpoint;
    :meth:`resume_payload` returns the saved payload when one exists and its settings match.
    """

    def __init__(self, out: str, hyper: Dict[str, Any], fresh: bool = False):
        if os.path.exists(out) and not os.path.isdir(out):
            raise LearnerError(f"--out {out} is a file; give a directory")
        os.makedirs(out, exist_ok=True)
        self.out = out
        self.hyper = dict(hyper)
        self.checkpoint_path = os.path.join(out, "checkpoint.pt")
        self.scalars_path = os.path.join(out, "scalars.csv")
        if fresh:
            for p in (self.checkpoint_path, self.scalars_path):
                if os.path.exists(p):
                    os.unlink(p)

    def resume_payload(self, ignore=("iterations", "device")) -> Optional[Dict[str, Any]]:
        if not os.path.exists(self.checkpoint_path):
            return None
        payload = load_checkpoint(self.checkpoint_path)
        saved = payload.get("hyper", {})
        differ = sorted(k for k in set(saved) | set(self.hyper)
                        if k not in ignore and saved.get(k) != self.hyper.get(k))
        if differ:
            detail = ", ".join(f"{k}: saved {saved.get(k)!r} vs {self.hyper.get(k)!r}" for k in differ[:4])
            raise LearnerError(f"{self.checkpoint_path} was made with other settings ({detail}); "
                               f"use another --out or --fresh")
        return payload

    def save(self, payload: Dict[str, Any]) -> None:
        payload = dict(payload)
        payload["hyper"] = self.hyper
        save_checkpoint(self.checkpoint_path, payload)
