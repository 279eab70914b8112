"""The training loop every learner shares: resume, iterate, evaluate, log, checkpoint, stop."""
from __future__ import annotations

from typing import Callable, Dict, Sequence

from cfrkit.agents.rl.checkpoint import RunDirectory
from cfrkit.agents.rl.scalars import CsvScalars


def run_iterations(trainer, run: RunDirectory, fields: Sequence[str], iterations: int,
                   evaluate: Callable[[], Dict[str, float]], eval_every: int, checkpoint_every: int,
                   progress: bool, desc: str, should_stop: Callable[[], bool], postfix: str) -> None:
    """Resume ``trainer`` from ``run`` if a checkpoint exists, then iterate until ``iterations`` in total.

    ``trainer`` has ``iterate() -> dict``, ``state_dict()``, ``load_state_dict()``, ``iteration``,
    ``wall_seconds``, ``cpu_seconds``.  Rows go to ``run.scalars_path``; ``evaluate()`` adds its
    scalars every ``eval_every`` iterations and at the last; a checkpoint is written every
    ``checkpoint_every`` iterations and always on the way out (end, ``should_stop()``, exceptions).
    """
    payload = run.resume_payload()
    if payload is not None:
        trainer.load_state_dict(payload["trainer"])
    log = CsvScalars(run.scalars_path, fields, after_step=trainer.iteration)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=iterations, initial=min(trainer.iteration, iterations), desc=desc, unit="it",
                   dynamic_ncols=True)
    try:
        while trainer.iteration < iterations and not should_stop():
            stats = trainer.iterate()
            row = dict(iteration=trainer.iteration, wall_seconds=trainer.wall_seconds,
                       cpu_seconds=trainer.cpu_seconds, **stats)
            if eval_every and (trainer.iteration % eval_every == 0 or trainer.iteration == iterations):
                row.update(evaluate())
            log.log(**row)
            if trainer.iteration % checkpoint_every == 0:
                run.save({"trainer": trainer.state_dict()})
            if bar is not None:
                bar.update(1)
                bar.set_postfix({postfix: f"{stats[postfix]:.2f}"})
    finally:
        run.save({"trainer": trainer.state_dict()})
        if bar is not None:
            bar.close()
