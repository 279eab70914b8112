"""The DeepStack counterfactual value network (torch).

Input: both players' ranges over ``M`` buckets (each normalised to sum 1) and the pot as a fraction
of the stack (``2M + 1`` numbers).  Output: both players' counterfactual values per bucket as
fractions of the pot (``2M``), after the zero-sum correction: with ``e = r0 . v0 + r1 . v1`` (which
is 0 for exact values, since the game is zero-sum), ``e / 2`` is subtracted from every value of both
players, so ``r0 . v0' + r1 . v1' = 0`` holds by construction.

Hidden layers: Linear (+ optional BatchNorm) + PReLU, DeepStack's architecture.  Checkpoints are
``torch.save`` dicts with a magic string; :func:`load_checkpoint` gives :class:`ValueNetFileError`
for missing, truncated or foreign files.
"""
from __future__ import annotations

import os
from typing import Any, Dict, Optional, Sequence

import torch
from torch import nn

from cfrkit._io import atomic_path

CHECKPOINT_MAGIC = "cfrkit-valuenet-checkpoint"
CHECKPOINT_VERSION = 1


class ValueNetFileError(ValueError):
    """A value-net checkpoint or data shard that is missing, truncated, corrupted or foreign."""


class ValueNet(nn.Module):
    def __init__(self, num_buckets: int, hidden: Sequence[int] = (128, 128, 128), batchnorm: bool = False):
        super().__init__()
        self.num_buckets = int(num_buckets)
        self.hidden = tuple(int(h) for h in hidden)
        self.batchnorm = bool(batchnorm)
        layers = []
        width = 2 * self.num_buckets + 1
        for h in self.hidden:
            layers.append(nn.Linear(width, h))
            if self.batchnorm:
                layers.append(nn.BatchNorm1d(h))
            layers.append(nn.PReLU())
            width = h
        layers.append(nn.Linear(width, 2 * self.num_buckets))
        self.body = nn.Sequential(*layers)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """``inputs (N, 2M+1)`` -> zero-sum corrected bucket values ``(N, 2M)`` (pot fractions)."""
        raw = self.body(inputs)
        return zero_sum_correction(inputs[:, : 2 * self.num_buckets], raw)

    def config(self) -> Dict[str, Any]:
        return {"num_buckets": self.num_buckets, "hidden": list(self.hidden), "batchnorm": self.batchnorm}


def zero_sum_correction(ranges: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Subtract half of ``r0 . v0 + r1 . v1`` from every value (ranges normalised to sum 1 per player)."""
    error = (ranges * values).sum(dim=1, keepdim=True)
    return values - 0.5 * error


def save_checkpoint(path: str, model: ValueNet, extra: Optional[Dict[str, Any]] = None,
                    optimizer: Optional[torch.optim.Optimizer] = None) -> None:
    """Write model weights, config and ``extra`` metadata atomically."""
    payload = {"magic": CHECKPOINT_MAGIC, "version": CHECKPOINT_VERSION, "config": model.config(),
               "state_dict": model.state_dict(), "extra": dict(extra or {})}
    if optimizer is not None:
        payload["optimizer"] = optimizer.state_dict()
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def load_checkpoint(path: str, map_location: str = "cpu"):
    """Return ``(model, payload)``; :class:`ValueNetFileError` on a bad file."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such checkpoint: {path}")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # torch raises many kinds on a truncated/foreign file
        raise ValueNetFileError(f"{path}: unreadable value-net checkpoint ({type(exc).__name__}: "
                                f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    if not isinstance(payload, dict) or payload.get("magic") != CHECKPOINT_MAGIC:
        raise ValueNetFileError(f"{path}: not a cfrkit value-net checkpoint")
    if not isinstance(payload.get("version", 0), int) or not isinstance(payload.get("extra", {}), dict):
        raise ValueNetFileError(f"{path}: corrupted value-net checkpoint header")
    if payload.get("version", 0) > CHECKPOINT_VERSION:
        raise ValueNetFileError(f"{path}: checkpoint version {payload.get('version')} is newer than this cfrkit")
    try:
        cfg = payload["config"]
        model = ValueNet(cfg["num_buckets"], cfg["hidden"], cfg.get("batchnorm", False))
        model.load_state_dict(payload["state_dict"])
        if not all(torch.isfinite(t).all() for t in model.state_dict().values() if t.is_floating_point()):
            raise ValueNetFileError(f"{path}: NaN or infinite weights (corrupted checkpoint)")
    except (KeyError, RuntimeError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ValueNetFileError(f"{path}: checkpoint does not match the value-net model ({exc})") from None
    model.eval()
    return model, payload
