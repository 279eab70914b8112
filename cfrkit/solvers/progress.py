"""The iteration loop shared by every iterative solver: progress bar, periodic callback, resume, stop."""
from __future__ import annotations

import time
from typing import Any, Callable, Optional, Sequence


def run_iterations(solver: Any, iterations: int, callback: Optional[Callable[[Any], None]] = None,
                   callback_every: int = 0, progress: bool = False, desc: str = "",
                   should_stop: Optional[Callable[[], bool]] = None,
                   after_chunk: Optional[Callable[[Any], None]] = None, chunk_seconds: float = 0.25,
                   align: Sequence[int] = ()) -> Any:
    """Call ``solver.iterate(k)`` until ``solver.iterations == iterations`` (or ``should_stop()``).

    A resumed solver therefore runs only what is left.  ``callback(solver)`` is called whenever
    ``solver.iterations`` reaches a multiple of ``callback_every`` (when > 0) and once at the end if
    the last iteration was not such a multiple; ``progress`` shows a tqdm bar.

    Iterations run in chunks of about ``chunk_seconds`` (never stepping over a callback point), so
    ``should_stop`` (checked between chunks; the loop returns early, without the final callback,
    when it answers True) and ``after_chunk(solver)`` (e.g. time-based checkpoints) are called
    between whole iterations only: the solver's state is consistent whenever they run.  Chunks also
    end at every multiple of each number in ``align`` (e.g. checkpoint intervals).
    """
    if iterations < 0:
        raise ValueError(f"iterations must be >= 0, got {iterations}")
    remaining = iterations - solver.iterations
    bar = None
    if progress and remaining > 0:
        from tqdm.auto import tqdm

        bar = tqdm(total=iterations, initial=solver.iterations, desc=desc, unit="it")
    step = 1  # grows until a chunk takes about chunk_seconds
    while solver.iterations < iterations:
        if should_stop is not None and should_stop():
            break
        chunk = min(step, iterations - solver.iterations)
        for every in (callback_every, *align):
            if every > 0:
                chunk = min(chunk, every - solver.iterations % every)
        before = solver.iterations
        start = time.perf_counter()
        solver.iterate(chunk)
        elapsed = time.perf_counter() - start
        if elapsed < chunk_seconds / 2 and chunk == step:
            step *= 2
        elif elapsed > chunk_seconds and step > 1:
            step = max(1, step // 2)
        if bar is not None:
            bar.update(solver.iterations - before)
        if after_chunk is not None:
            after_chunk(solver)
        if callback is not None and callback_every > 0 and solver.iterations % callback_every == 0:
            callback(solver)
    if bar is not None:
        bar.close()
    if solver.iterations < iterations:
        return solver
    if callback is not None and (callback_every <= 0 or solver.iterations % callback_every != 0):
        callback(solver)
    return solver
