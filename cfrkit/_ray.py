"""One way to reach Ray (an optional extra: ``pip install 'cfrkit[distributed]'``).

Ray is imported only here and only when a caller asks for it, so that ``import cfrkit`` never pays for it.
Address strings are Ray's own, plus ``"local"``: a new local instance with a given number of CPUs.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Tuple, Type

INSTALL_HINT = "Ray is not installed (pip install 'cfrkit[distributed]')"


def import_ray(error: Type[Exception] = ImportError):
    """The ``ray`` module; ``error(INSTALL_HINT)`` (one line) when it is not installed."""
    try:
        import ray  # the optional extra: imported only when asked for
    except ImportError:
        raise error(INSTALL_HINT) from None
    return ray


def join_ray(address: str, num_cpus: int = 1, error: Type[Exception] = ImportError) -> Tuple[Any, bool]:
    """``(ray, started)``: ``ray`` joined to the cluster at ``address`` (``"local"`` or ``""``: a new local instance
    with ``num_cpus`` CPUs, no dashboard); ``started`` is True when this call started the session (a session
    already running is joined as it is)."""
    ray = import_ray(error)
    if ray.is_initialized():
        return ray, False
    if address in ("local", ""):
        ray.init(num_cpus=max(1, int(num_cpus)), include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)
    return ray, True


@contextmanager
def ray_session(address: str, num_cpus: int = 1, error: Type[Exception] = ImportError) -> Iterator:
    """Yield ``ray`` joined as :func:`join_ray` does; a session this call started is shut down on exit."""
    ray, started = join_ray(address, num_cpus, error)
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()
