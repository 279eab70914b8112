"""The iteration loop shared by every iterative solver: progress bar, periodic callback and
evaluation, early stopping (a target, or a signal), resume; and the history of a run."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, List, Optional, Sequence


@dataclass(frozen=True)
class HistoryRecord:
    """One point of a run: iterations done, solver seconds so far, exploitability (None if not evaluated)."""

    iteration: int
    seconds: float
    exploitability: Optional[float] = None


class SolverHistory(list):
    """The records of a solver's runs (a list of :class:`HistoryRecord`), with plotting and export.

    Exploitability is in the game's units (chips for poker), as
    :func:`cfrkit.evaluation.exploitability` reports it.
    """

    def add(self, iteration: int, seconds: float, exploitability: Optional[float] = None) -> None:
        # one record per iteration count: an evaluated record replaces a plain one
        if self and self[-1].iteration == iteration:
            if exploitability is None:
                return
            self.pop()
        self.append(HistoryRecord(int(iteration), float(seconds),
                                  None if exploitability is None else float(exploitability)))

    def evaluated(self) -> List[HistoryRecord]:
        """The records that carry an exploitability."""
        return [r for r in self if r.exploitability is not None]

    def to_rows(self) -> List[dict]:
        """Plain dicts (iteration, seconds, exploitability), e.g. for ``pandas.DataFrame(rows)``."""
        return [{"iteration": r.iteration, "seconds": r.seconds, "exploitability": r.exploitability} for r in self]

    def to_json(self) -> List[list]:
        return [[r.iteration, r.seconds, r.exploitability] for r in self]

    @classmethod
    def from_json(cls, rows: Iterable) -> "SolverHistory":
        history = cls()
        for row in rows or []:
            history.add(int(row[0]), float(row[1]), None if row[2] is None else float(row[2]))
        return history

    def plot(self, path: Optional[str] = None, title: str = ""):
        """Exploitability against iterations and seconds (log-log); saved to ``path`` when given.

        Returns the matplotlib figure.  Needs matplotlib (``pip install 'cfrkit[plots]'``).
        """
        try:
            import matplotlib
        except ImportError:
            raise ImportError("plotting needs matplotlib: pip install 'cfrkit[plots]'") from None
        if path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        points = self.evaluated()
        if not points:
            raise ValueError("no evaluated records to plot: run with eval_every > 0")
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, xs, label in ((axes[0], [r.iteration for r in points], "iterations"),
                              (axes[1], [r.seconds for r in points], "seconds")):
            ax.loglog([max(x, 1e-9) for x in xs], [max(r.exploitability, 1e-12) for r in points], marker="o")
            ax.set_xlabel(label)
            ax.set_ylabel("exploitability (game units)")
            ax.grid(True, which="both", alpha=0.3)
        if title:
            fig.suptitle(title)
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=100)
            plt.close(fig)
        return fig


def default_progress() -> bool:
    """Progress bars by default only when a person watches (stderr is a terminal)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def run_iterations(solver: Any, iterations: int, callback: Optional[Callable[[Any], None]] = None,
                   callback_every: int = 0, progress: Optional[bool] = None, desc: str = "",
                   should_stop: Optional[Callable[[], bool]] = None,
                   after_chunk: Optional[Callable[[Any], None]] = None, chunk_seconds: float = 0.25,
                   align: Sequence[int] = (), eval_every: int = 0, target: Optional[float] = None,
                   evaluate: Optional[Callable[[Any], float]] = None) -> Any:
    """Call ``solver.iterate(k)`` until ``solver.iterations == iterations`` (or ``should_stop()``,
    or the evaluation reaches ``target``).

    A resumed solver therefore runs only what is left.  ``callback(solver)`` is called whenever
    ``solver.iterations`` reaches a multiple of ``callback_every`` (when > 0) and once at the end if
    the last iteration was not such a multiple; ``progress`` shows a tqdm bar (default: when stderr
    is a terminal).

    With ``eval_every > 0``, ``evaluate(solver)`` (exploitability) runs every ``eval_every``
    iterations and at the end, is recorded in ``solver.history`` when the solver has one, and the
    run stops early once it is at most ``target``.

    Iterations run in chunks of about ``chunk_seconds`` (never stepping over a callback or evaluation
    point), so ``should_stop`` (checked between chunks; the loop returns early, without the final
    callback, when it answers True) and ``after_chunk(solver)`` (e.g. time-based checkpoints) are
    called between whole iterations only: the solver's state is consistent whenever they run.
    Chunks also end at every multiple of each number in ``align`` (e.g. checkpoint intervals).
    """
    if iterations < 0:
        raise ValueError(f"iterations must be >= 0, got {iterations}")
    if eval_every < 0 or callback_every < 0:
        raise ValueError("eval_every and callback_every must be >= 0")
    if target is not None and eval_every <= 0:
        raise ValueError("stopping at a target needs eval_every > 0")
    if eval_every > 0 and evaluate is None:
        raise ValueError("eval_every needs an evaluate function")
    history = getattr(solver, "history", None)
    if progress is None:
        progress = default_progress()
    remaining = iterations - solver.iterations
    bar = None
    if progress and remaining > 0:
        from tqdm.auto import tqdm

        bar = tqdm(total=iterations, initial=solver.iterations, desc=desc, unit="it")
    last_value: Optional[float] = None

    def evaluate_now() -> float:
        value = float(evaluate(solver))
        if history is not None:
            history.add(solver.iterations, getattr(solver, "seconds", 0.0), value)
        if bar is not None:
            bar.set_postfix(exploitability=f"{value:.4g}")
        return value

    step = 1  # grows until a chunk takes about chunk_seconds
    reached = False
    while solver.iterations < iterations:
        if should_stop is not None and should_stop():
            break
        chunk = min(step, iterations - solver.iterations)
        for every in (callback_every, eval_every, *align):
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
        if eval_every > 0 and solver.iterations % eval_every == 0:
            last_value = evaluate_now()
            if target is not None and last_value <= target:
                reached = True
                break
    if bar is not None:
        bar.close()
    if solver.iterations < iterations and not reached:
        if history is not None:
            history.add(solver.iterations, getattr(solver, "seconds", 0.0))
        return solver  # stopped from outside (a signal): no final evaluation or callback
    if eval_every > 0 and (solver.iterations % eval_every != 0 or last_value is None):
        evaluate_now()
    elif history is not None:
        history.add(solver.iterations, getattr(solver, "seconds", 0.0))
    if callback is not None and (callback_every <= 0 or solver.iterations % callback_every != 0):
        callback(solver)
    return solver
