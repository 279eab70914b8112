"""The iteration loop shared by every iterative solver: progress bar, periodic callback, resume."""
from __future__ import annotations

from typing import Any, Callable, Optional


def run_iterations(solver: Any, iterations: int, callback: Optional[Callable[[Any], None]] = None,
                   callback_every: int = 0, progress: bool = False, desc: str = "") -> Any:
    """Call ``solver.iterate(k)`` until ``solver.iterations == iterations``.

    A resumed solver therefore runs only what is left.  ``callback(solver)`` is called whenever
    ``solver.iterations`` reaches a multiple of ``callback_every`` (when > 0) and once at the end if
    the last iteration was not such a multiple; ``progress`` shows a tqdm bar.
    """
    if iterations < 0:
        raise ValueError(f"iterations must be >= 0, got {iterations}")
    remaining = iterations - solver.iterations
    bar = None
    if progress and remaining > 0:
        from tqdm.auto import tqdm

        bar = tqdm(total=iterations, initial=solver.iterations, desc=desc, unit="it")
    # chunks small enough for a smooth bar, and never stepping over a callback point
    step = max(1, remaining // 100) if bar is not None else max(1, remaining)
    while solver.iterations < iterations:
        chunk = min(step, iterations - solver.iterations)
        if callback_every > 0:
            chunk = min(chunk, callback_every - solver.iterations % callback_every)
        before = solver.iterations
        solver.iterate(chunk)
        if bar is not None:
            bar.update(solver.iterations - before)
        if callback is not None and callback_every > 0 and solver.iterations % callback_every == 0:
            callback(solver)
    if bar is not None:
        bar.close()
    if callback is not None and (callback_every <= 0 or solver.iterations % callback_every != 0):
        callback(solver)
    return solver
