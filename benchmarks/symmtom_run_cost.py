"""What one Table 1 run really costs: the whole process's CPU (getrusage) against the JSON's "cpu".

``benchmarks/symmtom_table1.py run`` logs and stores ``cpu_seconds``: ``time.process_time`` inside
``trainer.iterate`` only (acting and gradient steps).  This script runs ``train_run`` exactly as
``run`` does (same evaluation and checkpoint cadence, one torch thread) into a scratch directory and
splits the process's CPU (``resource.getrusage``: user + system, every thread) into training,
greedy evaluation, checkpoint writing and the rest (start-up, imports, final scoring), so the
table's projection can use the real cost per run.

    python benchmarks/symmtom_run_cost.py --runs maddpg:3/6/3,ee:4/12/12 --episodes 12800
    python benchmarks/symmtom_run_cost.py --runs maddpg:4/12/12 --episodes 3840 --stacked 3   # seeds stacked or not
    python benchmarks/symmtom_run_cost.py --runs ee:4/12/12 --stacked 3 --steps   # gradient steps only
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import symmtom_table1 as table  # noqa: E402  (the benchmark next to this file)


def _rusage_cpu() -> float:
    """User + system CPU seconds of this process so far (all threads)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(model: str, n: int, w: int, c: int, episodes: int, seed: int = 0) -> dict:
    """One run of ``train_run`` to ``episodes`` episodes in a scratch directory; CPU seconds split
    into training (the JSON's ``cpu_seconds``), evaluation (``eval_cpu_seconds``), checkpoint
    writes (timed around ``save_checkpoint``) and the rest of the process."""
    import torch

    import cfrkit.agents.rl as rl

    torch.set_num_threads(1)
    saved = {"cpu": 0.0, "calls": 0, "bytes": 0}
    original = rl.save_checkpoint

    def timed_save(path, payload):
        c0 = _rusage_cpu()
        original(path, payload)
        saved["cpu"] += _rusage_cpu() - c0
        saved["calls"] += 1
        saved["bytes"] += os.path.getsize(path)

    rl.save_checkpoint = timed_save
    try:
        with tempfile.TemporaryDirectory() as out:
            c0, w0 = _rusage_cpu(), time.perf_counter()
            data = table.train_run(model, n, w, c, episodes, out, seed=seed, log=lambda s: None,
                                   keep_checkpoint=False)
            total, wall = _rusage_cpu() - c0, time.perf_counter() - w0
    finally:
        rl.save_checkpoint = original
    train, ev = data["cpu_seconds"], data["eval_cpu_seconds"]
    return {"model": model, "setting": f"{n}/{w}/{c}", "episodes": data["episodes"],
            "total_cpu_s": round(total, 1), "training_cpu_s": train, "eval_cpu_s": ev,
            "checkpoint_cpu_s": round(saved["cpu"], 1), "checkpoints": saved["calls"],
            "checkpoint_mb": round(saved["bytes"] / 2 ** 20, 1),
            "other_cpu_s": round(total - train - ev - saved["cpu"], 1),
            "total_over_training": round(total / train, 3), "wall_s": round(wall, 1),
            "loadavg": round(os.getloadavg()[0], 1)}


def compare_stacked(model: str, n: int, w: int, c: int, episodes: int, seeds: int,
                    stacked_first: bool = False) -> dict:
    """The same ``seeds`` runs trained one after the other (``train_run``) and together
    (``train_stacked``), each into its own scratch directory: whole-process CPU seconds of each."""
    import torch

    torch.set_num_threads(1)
    cpu = {}
    for mode in (("stacked", "alone") if stacked_first else ("alone", "stacked")):
        with tempfile.TemporaryDirectory() as out:
            c0 = _rusage_cpu()
            if mode == "alone":
                data = [table.train_run(model, n, w, c, episodes, out, seed=s, log=lambda x: None,
                                        keep_checkpoint=False) for s in range(seeds)]
            else:
                data = table.train_stacked(model, n, w, c, episodes, list(range(seeds)), out, log=lambda x: None,
                                           keep_checkpoint=False)
            cpu[mode] = (_rusage_cpu() - c0, sum(d["cpu_seconds"] for d in data))
    return {"model": model, "setting": f"{n}/{w}/{c}", "episodes": episodes, "seeds": seeds,
            "alone_total_cpu_s": round(cpu["alone"][0], 1), "alone_training_cpu_s": round(cpu["alone"][1], 1),
            "stacked_total_cpu_s": round(cpu["stacked"][0], 1), "stacked_training_cpu_s": round(cpu["stacked"][1], 1),
            "speedup_total": round(cpu["alone"][0] / cpu["stacked"][0], 3), "stacked_first": stacked_first,
            "loadavg": round(os.getloadavg()[0], 1)}


def compare_steps(model: str, n: int, w: int, c: int, seeds: int, steps: int = 20, rounds: int = 4) -> dict:
    """CPU ms of one gradient step of ``seeds`` seeds, stacked (``StackedSeeds.update``) against each
    seed's own ``update`` in turn, alternated in one process after the warm-up fill (acting excluded;
    the quick, steadier comparison).  Returns the median per round of each and their ratio."""
    import numpy as np
    import torch

    from cfrkit.agents.symmtom.learning import MADDPGSettings, make_trainer
    from cfrkit.agents.symmtom.learning.stacked import StackedSeeds
    from cfrkit.games.symmtom import SymmToMConfig

    torch.set_num_threads(1)
    cfg = SymmToMConfig(agents=n, width=w, pieces=c)
    group = StackedSeeds.create(lambda st: make_trainer(cfg, st, "cpu"),
                                [MADDPGSettings(variant=model, seed=s) for s in range(seeds)])
    group.fill_warmup()
    group.update()
    stacked, alone = [], []
    for _ in range(rounds):
        c0 = time.process_time()
        for _ in range(steps):
            group.update()
        stacked.append((time.process_time() - c0) / steps)
        c0 = time.process_time()
        for _ in range(steps):
            for s, t in enumerate(group.trainers):
                group.run_for_seed(s, t.update)
        alone.append((time.process_time() - c0) / steps)
    st, al = float(np.median(stacked)), float(np.median(alone))
    return {"model": model, "setting": f"{n}/{w}/{c}", "seeds": seeds, "stacked_ms": round(1e3 * st, 2),
            "alone_ms": round(1e3 * al, 2), "speedup": round(al / st, 3), "loadavg": round(os.getloadavg()[0], 1)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", default="maddpg:3/6/3", help="comma-separated model:n/w/c")
    p.add_argument("--episodes", type=int, default=12800)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--stacked", type=int, default=0,
                   help="instead: this many seeds trained alone, then stacked (train_stacked); CPU of each")
    p.add_argument("--stacked-first", action="store_true", help="with --stacked: time the stacked seeds first")
    p.add_argument("--steps", action="store_true",
                   help="with --stacked: compare gradient steps only (compare_steps), not whole runs")
    args = p.parse_args(argv)
    for item in args.runs.split(","):
        try:
            model, setting = item.split(":")
            n, w, c = (int(x) for x in setting.split("/"))
        except ValueError:
            raise SystemExit(f"--runs: expected model:n/w/c like ee:4/12/12, got {item!r}") from None
        if args.stacked and args.steps:
            print(json.dumps(compare_steps(model, n, w, c, args.stacked)), flush=True)
        elif args.stacked:
            r = compare_stacked(model, n, w, c, args.episodes, args.stacked, args.stacked_first)
            print(json.dumps(r), flush=True)
        else:
            print(json.dumps(measure(model, n, w, c, args.episodes, args.seed)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
