"""A tiny array-backend layer so the range-vectorised solvers run on numpy or torch (CPU/GPU).

Only the handful of operations the public-tree solvers need are wrapped; everything else is plain
arithmetic and indexing, which numpy arrays and torch tensors share.  Torch is imported lazily.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np


class NumpyBackend:
    """Arrays are ``numpy.ndarray`` (float64 by default)."""

    name = "numpy"

    def __init__(self, dtype=np.float64):
        self.dtype = np.dtype(dtype)
        self.device = "cpu"

    def asarray(self, x):
        return np.asarray(x, dtype=self.dtype)

    def index(self, x):
        return np.asarray(x, dtype=np.int64)

    def zeros(self, shape):
        return np.zeros(shape, dtype=self.dtype)

    def ones(self, shape):
        return np.ones(shape, dtype=self.dtype)

    def full(self, shape, value):
        return np.full(shape, value, dtype=self.dtype)

    def relu(self, x):
        return np.maximum(x, 0.0)

    def maximum(self, a, b):
        return np.maximum(a, b)

    def sum(self, x, axis, keepdims=False):
        return x.sum(axis=axis, keepdims=keepdims)

    def amax(self, x, axis, keepdims=False):
        return x.max(axis=axis, keepdims=keepdims)

    def cumsum(self, x, axis):
        return np.cumsum(x, axis=axis)

    def where(self, cond, a, b):
        return np.where(cond, a, b)

    def stack(self, xs: Sequence, axis=0):
        return np.stack(xs, axis=axis)

    def concat(self, xs: Sequence, axis=0):
        return np.concatenate(xs, axis=axis)

    def matmul(self, a, b):
        return a @ b

    def take(self, x, idx):
        """``x[:, idx]`` for a 2-D ``x`` and an integer index array of any shape."""
        return x[:, idx]

    def to_numpy(self, x) -> np.ndarray:
        return np.asarray(x)

    def copy(self, x):
        return x.copy()


class TorchBackend:
    """Arrays are ``torch.Tensor`` on ``device`` (``cuda`` when available unless told otherwise)."""

    name = "torch"

    def __init__(self, device: Optional[str] = None, dtype=None):
        import torch

        self.torch = torch
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        self.dtype = dtype if dtype is not None else torch.float64

    def asarray(self, x):
        t = self.torch
        if isinstance(x, t.Tensor):
            return x.to(device=self.device, dtype=self.dtype)
        return t.as_tensor(np.asarray(x), dtype=self.dtype, device=self.device)

    def index(self, x):
        return self.torch.as_tensor(np.asarray(x, dtype=np.int64), device=self.device)

    def zeros(self, shape):
        return self.torch.zeros(shape, dtype=self.dtype, device=self.device)

    def ones(self, shape):
        return self.torch.ones(shape, dtype=self.dtype, device=self.device)

    def full(self, shape, value):
        return self.torch.full(shape, float(value), dtype=self.dtype, device=self.device)

    def relu(self, x):
        return self.torch.clamp(x, min=0.0)

    def maximum(self, a, b):
        t = self.torch
        if not isinstance(b, t.Tensor):
            b = t.as_tensor(b, dtype=self.dtype, device=self.device)
        return t.maximum(a, b)

    def sum(self, x, axis, keepdims=False):
        return x.sum(dim=axis, keepdim=keepdims)

    def amax(self, x, axis, keepdims=False):
        return x.amax(dim=axis, keepdim=keepdims)

    def cumsum(self, x, axis):
        return self.torch.cumsum(x, dim=axis)

    def where(self, cond, a, b):
        t = self.torch
        if not isinstance(a, t.Tensor):
            a = t.as_tensor(a, dtype=self.dtype, device=self.device)
        if not isinstance(b, t.Tensor):
            b = t.as_tensor(b, dtype=self.dtype, device=self.device)
        return t.where(cond, a, b)

    def stack(self, xs: Sequence, axis=0):
        return self.torch.stack(list(xs), dim=axis)

    def concat(self, xs: Sequence, axis=0):
        return self.torch.cat(list(xs), dim=axis)

    def matmul(self, a, b):
        return a @ b

    def take(self, x, idx):
        """``x[:, idx]`` via ``index_select`` (much faster than advanced indexing on CPU)."""
        return x.index_select(1, idx.reshape(-1)).reshape((x.shape[0],) + tuple(idx.shape))

    def to_numpy(self, x) -> np.ndarray:
        return x.detach().cpu().numpy()

    def copy(self, x):
        return x.clone()


def make_backend(backend: "str | NumpyBackend | TorchBackend | None" = "numpy", device: Optional[str] = None,
                 dtype=None):
    """``"numpy"`` (default), ``"torch"`` (device: cuda if available, else cpu) or a backend object."""
    if backend is None or backend == "numpy":
        return NumpyBackend(dtype if dtype is not None else np.float64)
    if backend == "torch":
        if dtype is not None and not hasattr(dtype, "is_floating_point"):
            import torch

            dtype = {np.float32: torch.float32, np.float64: torch.float64}.get(np.dtype(dtype).type, torch.float64)
        return TorchBackend(device=device, dtype=dtype)
    if isinstance(backend, (NumpyBackend, TorchBackend)):
        return backend
    raise ValueError(f"unknown array backend {backend!r}; choose 'numpy' or 'torch'")
