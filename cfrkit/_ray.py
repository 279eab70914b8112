"""One way to reach Ray (an optional extra: ``pip install 'cfrkit[distributed]'``).

Ray is imported only here and only when a caller asks for it, so that ``import cfrkit`` never pays for it.
Address strings are Ray's own, plus ``"local"``: a new local instance with a given number of CPUs.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Type

INSTALL_HINT = "Ray is not installed (pip install 'cfrkit[distributed]')"


def import_ray(error: Type[Exception] = ImportError):
    """The ``ray`` module; ``error(INSTALL_HINT)`` (one line) when it is not installed."""
    try:
        import ray  # the optional extra: imported only when asked for
    except ImportError:
        raise error(INSTALL_HINT) from None
    return ray


@contextmanager
def ray_session(address: str, num_cpus: int = 1, error: Type[Exception] = ImportError) -> Iterator:
    """Yield ``ray`` joined to the cluster at ``address`` (``"local"``: a new local instance with ``num_cpus``
    CPUs, no dashboard).  A session this call started is shut down on exit; one already running is left alone."""
    ray = import_ray(error)
    started = False
    if not ray.is_initialized():
        if address == "local":
            ray.init(num_cpus=max(1, int(num_cpus)), include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
        started = True
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()
