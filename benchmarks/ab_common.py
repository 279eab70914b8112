"""Shared by the A/B benchmarks (``range_solver_ab.py``, ``range_solver_storage_ab.py``, ``equity_rank_counts_ab.py``):
workloads timed in alternating order in one process, so that every one of them sees the same machine load."""
from __future__ import annotations

import time
from collections.abc import Callable


def alternating_cpu(runs: dict[str, Callable[[int], object]], rounds: int, step: int = 1,
                    on_round: Callable[[int, dict[str, list[float]]], None] | None = None) -> dict[str, list[float]]:
    """CPU seconds (``time.process_time``) per unit of work of each workload, one entry per round.

    ``runs``: name -> a callable doing ``step`` units of work (iterations, calls) when called with ``step``.  Round
    ``r`` runs them in the order of ``runs`` when ``r`` is even and in the reverse order when it is odd (A B, B A,
    ...), each once; ``on_round(r, cpu)``, if given, is called after each round with the lists so far.  Returns
    name -> list of ``rounds`` CPU seconds per unit (the round's time divided by ``step``).

    Raises:
        ValueError: ``rounds`` or ``step`` below 1, or no workload.
    """
    if rounds < 1 or step < 1 or not runs:
        raise ValueError(f"alternating_cpu needs rounds >= 1, step >= 1 and a workload (got {rounds}, {step}, "
                         f"{len(runs)} workloads)")
    names = list(runs)
    cpu: dict[str, list[float]] = {k: [] for k in names}
    for r in range(rounds):
        for k in (names if r % 2 == 0 else names[::-1]):
            c0 = time.process_time()
            runs[k](step)
            cpu[k].append((time.process_time() - c0) / step)
        if on_round is not None:
            on_round(r, cpu)
    return cpu
