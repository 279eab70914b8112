"""Set-up shared by the blueprint trainer benchmarks (``blueprint_mccfr.py``, ``blueprint_pluribus.py``,
``blueprint_threads.py``): the abstract game's command-line options, training to a CPU budget, and the
results file.  Imported by those scripts (run as ``python benchmarks/NAME.py``, which puts this folder first
on the import path); not a benchmark itself.
"""
from __future__ import annotations

import json
import os
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def add_game_arguments(ap) -> None:
    """The abstract game of a trainer comparison: ``--buckets`` (E[HS] buckets per round), ``--raise-cap``,
    ``--game`` and ``--bets`` (the action abstraction, pot fractions)."""
    ap.add_argument("--buckets", default="169,10,10,10")
    ap.add_argument("--raise-cap", type=int, default=2)
    ap.add_argument("--game", default="holdem")
    ap.add_argument("--bets", default="0.5+1")


def train_to(trainer, budget_cpu: float, spent: dict) -> None:
    """Iterate until this trainer's accumulated process CPU seconds ``spent["cpu"]`` reach ``budget_cpu``."""
    while spent["cpu"] < budget_cpu:
        c0 = time.process_time()
        trainer.iterate(1)
        spent["cpu"] += time.process_time() - c0


def save_results(name: str, data: dict) -> str:
    """Write ``data`` to ``benchmarks/results/NAME.json``; returns that path relative to the repository."""
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", f"{name}.json"), "w") as f:
        json.dump(data, f, indent=1)
    return f"benchmarks/results/{name}.json"
