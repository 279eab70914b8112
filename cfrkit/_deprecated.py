"""Thin deprecated aliases: old public names kept for one release, each call warning where it moved."""
from __future__ import annotations

import functools
import warnings
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)


def deprecated_alias(func: F, old: str, new: str) -> F:
    """``func`` under its old name ``old``: every call emits a ``DeprecationWarning`` naming ``new``."""

    @functools.wraps(func)
    def alias(*args, **kwargs):
        warnings.warn(f"{old} is deprecated and will be removed in the next release; use {new}",
                      DeprecationWarning, stacklevel=2)
        return func(*args, **kwargs)

    alias.__doc__ = f"Deprecated alias of :func:`{new}` (warns).\n\n" + (func.__doc__ or "")
    return alias  # type: ignore[return-value]
