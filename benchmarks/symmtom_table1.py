"""SymmToM Table 1 (Sclar et al.) with the learned rows: MADDPG, RMADDPG, MADDPG-CE/GE/EE/Oracle.

Every (setting, model, seed) triple is one run: a MADDPG-family trainer with its default settings
(``MADDPGSettings``: 128 episodes stepped together per iteration, one gradient step of 1,024 critic
rows per 100 joint steps, lr 0.001, tau 0.005, 64-unit MLPs) trained to a budget of episodes; a
greedy evaluation on 200 fixed episodes every ``--eval-every`` iterations gives the training curve
and picks the best checkpoint (the paper's Table 1 uses each run's best checkpoint), which is then
scored on 1,000 other episodes -- the run's cell, mean [std over episodes] of the reward per agent.
The table reports the mean over seeds and the spread (std) across seeds.

    python benchmarks/symmtom_table1.py run --episodes 60000 --seeds 3 --out /work/runs/symmtom_table1
    python benchmarks/symmtom_table1.py rate --out ...      # CPU cost per setting, projections
    python benchmarks/symmtom_table1.py report --out ...    # Table 1 beside the paper's
    python benchmarks/symmtom_table1.py tom --models ce,ee,oracle --out ...   # theory-of-mind tests (--sampled)
    python benchmarks/symmtom_table1.py protocols --out ... --settings 3/6/3  # best/last x greedy/sampled, held out
    python benchmarks/symmtom_table1.py summary --out ... --tom ...   # issue 32's closing tables as Markdown
    python benchmarks/symmtom_table1.py backfill-sampled --out ...    # sampled cells of runs that predate them

``run`` goes budget stage by budget stage, then seed by seed (every run of seed 0 finishes before
seed 1 starts), so a stopped run leaves whole tables behind.  Results: one JSON per finished run
(``<model>_n<n>_w<w>_c<c>_s<seed>.json``; rewritten at every budget stage); a rerun skips finished
runs and resumes a started one from its checkpoint (networks, optimisers, replay) in ``ckpt/``,
which is replaced by a small file of the final and best actors once the run is finished.  Several
``run`` processes may share the work: a run is claimed by an exclusive lock file.  SIGINT (Ctrl-C) or
SIGTERM stops ``run`` at the end of the iteration under way: the run's checkpoint is saved, its lock
released, one line says how to resume, and the command exits with 128 + the signal's number; a
second signal stops at once (the last periodic checkpoint stays on disk).
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cfrkit.signals import GracefulStop

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "symmtom_table1")
MODELS = ("maddpg", "rmaddpg", "ce", "ge", "ee", "oracle")
LABELS = {"maddpg": "MADDPG", "rmaddpg": "+RNN (RMADDPG)", "ce": "+Conservative (CE)", "ge": "+Greedy (GE)",
          "ee": "+Estimated (EE)", "oracle": "MADDPG-Oracle"}
#: (n, w, c) in Table 1's column order.
SETTINGS: tuple[tuple[int, int, int], ...] = tuple((n, w, k * n) for n in (3, 4) for w in (6, 12) for k in (1, 2, 3))
#: The paper's Table 1 rows, (mean, std) per column (Sclar et al. 2022, 60,000 episodes, 9 seeds, best checkpoint).
PAPER = {
    "heuristic": ((39, 11), (53, 13), (58, 13), (37, 12), (58, 15), (71, 15), (60, 15), (74, 15), (74, 16),
                  (59, 18), (86, 18), (99, 18)),
    "oracle": ((42, 7), (48, 6), (41, 6), (56, 18), (40, 12), (41, 17), (70, 4), (47, 6), (32, 5), (55, 10),
               (33, 6), (33, 11)),
    "maddpg": ((40, 2), (18, 2), (15, 1), (39, 16), (33, 16), (11, 1), (34, 6), (22, 3), (13, 0), (17, 4), (15, 2),
               (14, 1)),
    "rmaddpg": ((39, 5), (19, 3), (18, 3), (42, 9), (24, 15), (20, 7), (30, 4), (20, 2), (16, 1), (32, 7), (17, 3),
                (16, 1)),
    "ce": ((36, 4), (26, 3), (33, 4), (49, 12), (55, 34), (14, 1), (40, 7), (31, 3), (25, 3), (30, 12), (25, 8),
           (16, 1)),
    "ge": ((37, 7), (26, 4), (34, 4), (52, 19), (61, 26), (14, 2), (34, 11), (30, 4), (26, 3), (34, 8), (28, 12),
           (16, 2)),
    "ee": ((41, 4), (20, 2), (15, 2), (39, 10), (24, 10), (11, 1), (36, 8), (22, 3), (14, 1), (23, 13), (18, 3),
           (15, 1)),
}


#: Settings outside Table 1 that a ToM test plays on (first_second: n = 4, c = 3).  ``run --settings``
#: takes them so that those runs train like the table's (seeds stacked, resumable); ``tom`` then finds them.
TOM_SETTINGS: tuple[tuple[int, int, int], ...] = ((4, 6, 3), (4, 12, 3))


def run_name(model: str, n: int, w: int, c: int, seed: int = 0) -> str:
    return f"{model}_n{n}_w{w}_c{c}_s{seed}"


def _parse_settings(text: str, extra: Sequence[tuple[int, int, int]] = ()) -> list[tuple[int, int, int]]:
    """``all`` (Table 1's twelve) or n/w/c items from Table 1's settings and ``extra``."""
    if text == "all":
        return list(SETTINGS)
    out = []
    for item in text.split(","):
        try:
            n, w, c = (int(x) for x in item.split("/"))
        except ValueError:
            raise SystemExit(f"--settings: expected n/w/c items like 3/6/3, got {item!r}") from None
        if (n, w, c) not in SETTINGS and (n, w, c) not in extra:
            allowed = "Table 1's settings" + "".join(f" or {a}/{b}/{k}" for (a, b, k) in extra)
            raise SystemExit(f"--settings: {item} is not one of {allowed}")
        out.append((n, w, c))
    return out


def _parse_models(text: str) -> list[str]:
    models = list(MODELS) if text == "all" else text.split(",")
    bad = [m for m in models if m not in MODELS]
    if bad:
        raise SystemExit(f"--models: unknown {bad}; choose from {', '.join(MODELS)}")
    return models


def _load_json(path: str) -> dict | None:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _write_json(path: str, data: dict) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


class _Lock:
    """An exclusive lock file (removed on exit); ``acquired`` is False when another process holds it."""

    def __init__(self, path: str):
        self.path = path
        self.acquired = False

    def __enter__(self):
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            self.acquired = True
        except FileExistsError:
            try:   # a lock left by a dead process is stale
                pid = int(open(self.path).read().strip() or 0)
                os.kill(pid, 0)
            except (ValueError, ProcessLookupError, OSError):
                os.unlink(self.path)
                return self.__enter__()
        return self

    def __exit__(self, *exc):
        if self.acquired:      # released once (a second exit is a no-op)
            self.acquired = False
            os.unlink(self.path)


class RunStopped(Exception):
    """Training stopped on request (``should_stop()``) between two iterations, after the checkpoints of the
    runs under way were saved; ``saved``: [(run name, episodes trained, checkpoint path)]."""

    def __init__(self, saved: list[tuple[str, int, str]]):
        self.saved = saved
        super().__init__(", ".join(f"{name} at {episodes} episodes" for name, episodes, _ in saved))


class _Run:
    """One (setting, model, seed) run's files and bookkeeping: its lock, its JSON, its resumable
    checkpoint, the greedy evaluations of its curve and its best actor.  ``open`` claims the run
    (False: locked by another process or already finished); the caller builds or resumes the
    trainer, iterates it and calls ``after_iteration``, then ``finish``."""

    def __init__(self, model: str, n: int, w: int, c: int, episodes: int, out: str, eval_every: int,
                 eval_episodes: int, final_episodes: int, seed: int, log, keep_checkpoint: bool,
                 checkpoint_every: int, progress_every: int):
        self.model, self.n, self.w, self.c, self.episodes, self.out, self.seed = model, n, w, c, episodes, out, seed
        self.eval_every, self.eval_episodes, self.final_episodes = eval_every, eval_episodes, final_episodes
        self.log, self.keep_checkpoint = log, keep_checkpoint
        self.checkpoint_every, self.progress_every = checkpoint_every, progress_every
        self.name = run_name(model, n, w, c, seed)
        ckdir = os.path.join(out, "ckpt")
        os.makedirs(ckdir, exist_ok=True)
        self.json_path = os.path.join(out, self.name + ".json")
        self.ck_path = os.path.join(ckdir, self.name + ".pt")
        self.actors_path = os.path.join(ckdir, self.name + ".actors.pt")
        self.lock = _Lock(os.path.join(ckdir, self.name + ".lock"))
        self.result: dict | None = None
        self.state = {"curve": [], "best_reward": -1.0, "best_iteration": 0, "best_actor": None, "eval_cpu": 0.0}
        self.last_train = 0.0
        self.started = time.time()

    def open(self) -> bool:
        """Claim the run; False (lock released) when another process holds it or it is finished
        (``result`` then holds the finished run's JSON)."""
        self.lock.__enter__()
        if not self.lock.acquired:
            return False
        self.done = _load_json(self.json_path)
        if self.done is not None and self.done["episodes"] >= self.episodes:
            self.result = self.done
            self.close()
            return False
        if self.done is not None and not os.path.exists(self.ck_path):
            self.close()
            raise SystemExit(f"{self.name} finished at {self.done['episodes']} episodes without a resumable "
                             f"checkpoint; delete {self.json_path} to train it again to {self.episodes}")
        return True

    def close(self) -> None:
        self.lock.__exit__(None, None, None)

    def settings(self):
        from cfrkit.agents.symmtom.learning import MADDPGSettings
        return MADDPGSettings(variant=self.model, seed=self.seed)

    def iterations(self, trainer) -> int:
        return -(-self.episodes // trainer.settings.num_envs)

    def checkpoint(self) -> dict | None:
        """The resumable checkpoint's payload, or None for a fresh run (its bench state is loaded)."""
        from cfrkit.agents.rl import load_checkpoint
        if not os.path.exists(self.ck_path):
            return None
        payload = load_checkpoint(self.ck_path)
        self.state = payload["bench"]
        return payload

    def after_iteration(self, trainer, train_reward: float, trainer_state) -> None:
        """Evaluate and checkpoint on schedule after one iteration (``trainer_state()``: its state dict)."""
        self.last_train = train_reward
        total = self.iterations(trainer)
        if trainer.iteration % self.eval_every == 0 or trainer.iteration == total:
            self._evaluate(trainer)
        if trainer.iteration % self.checkpoint_every == 0 and trainer.iteration < total:
            self.save(trainer_state)

    def save(self, trainer_state) -> None:
        """Write the resumable checkpoint: the trainer's state dict (``trainer_state()``) and the bench state."""
        from cfrkit.agents.rl import save_checkpoint
        save_checkpoint(self.ck_path, {"trainer": trainer_state(), "bench": self.state})

    def log_start(self, trainer, resumed: bool) -> None:
        self.log(f"{self.name}: training from episode {trainer.episodes} to {self.episodes}"
                 + (" (resumed from its checkpoint)" if resumed else ""))

    def _evaluate(self, trainer) -> None:
        state = self.state
        c0 = time.process_time()
        r = float(trainer.evaluate(self.eval_episodes, seed=0).mean())
        state["eval_cpu"] += time.process_time() - c0
        state["curve"].append({"iteration": trainer.iteration, "episodes": trainer.episodes,
                               "env_steps": trainer.env_steps, "cpu_seconds": round(trainer.cpu_seconds, 2),
                               "wall_seconds": round(trainer.wall_seconds, 2), "eval_reward": round(r, 3),
                               "train_reward": round(self.last_train, 3)})
        if r > state["best_reward"]:
            state["best_reward"], state["best_iteration"] = r, trainer.iteration
            state["best_actor"] = {k: v.clone() for k, v in trainer.actor.state_dict().items()}
        if self.progress_every and len(state["curve"]) % self.progress_every == 0:
            self.log(f"  {self.name}: {trainer.episodes} episodes, greedy reward {r:.1f} "
                     f"(best {state['best_reward']:.1f}), training cpu {trainer.cpu_seconds:.0f} s, "
                     f"wall {trainer.wall_seconds:.0f} s")

    def finish(self, trainer, trainer_state, extra: dict | None = None) -> dict:
        """Score the best checkpoint (Table 1's cell) and the last iterate, write the JSON, release the lock."""
        import torch

        from cfrkit.agents.rl import save_checkpoint
        state, n, w, c = self.state, self.n, self.w, self.c
        c0 = time.process_time()
        last = trainer.evaluate(self.final_episodes, seed=1)
        final_actor = {k: v.clone() for k, v in trainer.actor.state_dict().items()}
        trainer.actor.load_state_dict(state["best_actor"])
        best = trainer.evaluate(self.final_episodes, seed=1)
        # the paper's MADDPG code acts by sampling: the same checkpoint and episodes with sampled actions
        best_sampled = trainer.evaluate(self.final_episodes, seed=1, greedy=False)
        trainer.actor.load_state_dict(final_actor)
        final_cpu = time.process_time() - c0
        save_checkpoint(self.actors_path, {"model": self.model, "config": [n, w, c], "seed": self.seed,
                                           "episodes": trainer.episodes, "actor": final_actor,
                                           "best_actor": state["best_actor"],
                                           "best_iteration": state["best_iteration"]})
        if self.keep_checkpoint:
            save_checkpoint(self.ck_path, {"trainer": trainer_state(), "bench": state})
        elif os.path.exists(self.ck_path):
            os.unlink(self.ck_path)
        settings = trainer.settings
        data = {"model": self.model, "agents": n, "width": w, "pieces": c, "seed": self.seed,
                "episodes": trainer.episodes, "iterations": trainer.iteration, "env_steps": trainer.env_steps,
                "cpu_seconds": round(trainer.cpu_seconds, 2), "wall_seconds": round(trainer.wall_seconds, 2),
                "eval_cpu_seconds": round(state["eval_cpu"] + final_cpu, 2),
                "best_iteration": state["best_iteration"], "best_eval_reward": round(state["best_reward"], 3),
                "table": {"mean": round(float(best.mean()), 3), "std": round(float(best.std(ddof=1)), 3),
                          "episodes": self.final_episodes, "checkpoint": "best"},
                "table_sampled": {"mean": round(float(best_sampled.mean()), 3),
                                  "std": round(float(best_sampled.std(ddof=1)), 3),
                                  "episodes": self.final_episodes, "checkpoint": "best", "actions": "sampled"},
                "last": {"mean": round(float(last.mean()), 3), "std": round(float(last.std(ddof=1)), 3),
                         "episodes": self.final_episodes},
                "curve": state["curve"], "settings": {k: getattr(settings, k) for k in settings.__dataclass_fields__},
                "eval_every": self.eval_every, "eval_episodes": self.eval_episodes,
                "torch_threads": torch.get_num_threads(),
                "finished_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
                "loadavg_at_finish": round(os.getloadavg()[0], 2), **(extra or {})}
        # every budget stage keeps its own Table 1 cell, so a table at a common budget stays available
        stages = dict((self.done or {}).get("stages", {}))
        stages[str(trainer.episodes)] = {k: data[k] for k in ("episodes", "iterations", "cpu_seconds", "wall_seconds",
                                                              "best_iteration", "best_eval_reward", "table", "table_sampled", "last",
                                                              "finished_utc")}
        data["stages"] = stages
        _write_json(self.json_path, data)
        self.log(f"{self.name}: {trainer.episodes} episodes, cpu {trainer.cpu_seconds:.0f} s, wall "
                 f"{trainer.wall_seconds:.0f} s (this call {time.time() - self.started:.0f} s); best it "
                 f"{state['best_iteration']} -> {best.mean():.1f} [{best.std(ddof=1):.1f}], last {last.mean():.1f}")
        self.result = data
        self.close()
        return data


def train_run(model: str, n: int, w: int, c: int, episodes: int, out: str = OUT, eval_every: int = 8,
              eval_episodes: int = 200, final_episodes: int = 1000, seed: int = 0, log=print,
              keep_checkpoint: bool = True, checkpoint_every: int = 50, progress_every: int = 5,
              should_stop: Callable[[], bool] = lambda: False) -> dict | None:
    """Train (or resume) one run to ``episodes`` episodes; write and return its JSON (None if locked).

    Units: ``cpu_seconds`` is process CPU time of training (``time.process_time``), ``wall_seconds``
    wall-clock time of training; evaluation times are reported separately.  Without
    ``keep_checkpoint`` the resumable checkpoint (replay included, up to hundreds of MB) is replaced
    by ``ckpt/<run>.actors.pt`` (final and best actor) once the run is finished.  A progress line is
    logged every ``progress_every`` evaluations (0: never).  ``should_stop()`` is asked before every
    iteration: True saves the checkpoint, releases the lock and raises :class:`RunStopped`.
    """
    from cfrkit.agents.symmtom.learning import make_trainer
    from cfrkit.games.symmtom import SymmToMConfig

    run = _Run(model, n, w, c, episodes, out, eval_every, eval_episodes, final_episodes, seed, log,
               keep_checkpoint, checkpoint_every, progress_every)
    if not run.open():
        return run.result
    try:
        trainer = make_trainer(SymmToMConfig(agents=n, width=w, pieces=c), run.settings(), "cpu")
        payload = run.checkpoint()
        if payload is not None:
            trainer.load_state_dict(payload["trainer"])
        run.log_start(trainer, payload is not None)
        while trainer.iteration < run.iterations(trainer):
            if should_stop():
                run.save(trainer.state_dict)
                raise RunStopped([(run.name, trainer.episodes, run.ck_path)])
            run.after_iteration(trainer, trainer.iterate()["train_reward"], trainer.state_dict)
        return run.finish(trainer, trainer.state_dict)
    finally:
        run.close()


def train_stacked(model: str, n: int, w: int, c: int, episodes: int, seeds: Sequence[int], out: str = OUT,
                  eval_every: int = 8, eval_episodes: int = 200, final_episodes: int = 1000, log=print,
                  keep_checkpoint: bool = True, checkpoint_every: int = 50, progress_every: int = 5,
                  should_stop: Callable[[], bool] = lambda: False) -> list[dict]:
    """:func:`train_run` for several seeds of one (setting, model) in one process, their gradient
    steps stacked (:class:`~cfrkit.agents.symmtom.learning.stacked.StackedSeeds`; for RMADDPG and
    EE the critic's part).  Every seed keeps its own files, checkpoint format, random streams and
    JSON (the same as :func:`train_run`'s, plus ``"stacked_seeds"``); runs locked by another process
    or finished are skipped; a seed resumed behind the others first catches up alone.  ``cpu_seconds``
    charges each seed its own acting and 1/S of the stacked gradient steps.  Returns the JSONs written.
    ``should_stop()`` as in :func:`train_run` (every seed's checkpoint saved, :class:`RunStopped` raised)."""
    from cfrkit.agents.symmtom.learning import make_trainer
    from cfrkit.agents.symmtom.learning.stacked import StackedSeeds
    from cfrkit.games.symmtom import SymmToMConfig

    runs = [_Run(model, n, w, c, episodes, out, eval_every, eval_episodes, final_episodes, seed, log,
                 keep_checkpoint, checkpoint_every, progress_every) for seed in seeds]
    runs = [r for r in runs if r.open()]
    if not runs:
        return []
    try:
        config = SymmToMConfig(agents=n, width=w, pieces=c)
        group = StackedSeeds.create(lambda st: make_trainer(config, st, "cpu"), [r.settings() for r in runs])
        for s, r in enumerate(runs):
            payload = r.checkpoint()
            if payload is not None:
                group.load_seed_state(s, payload["trainer"])
            r.log_start(group.trainers[s], payload is not None)
        trainers = group.trainers
        total = runs[0].iterations(trainers[0])
        extra = {"stacked_seeds": [r.seed for r in runs]}

        def stop_if_asked():
            if should_stop():
                for s, (r, t) in enumerate(zip(runs, trainers)):
                    group.run_for_seed(s, r.save, t.state_dict)
                raise RunStopped([(r.name, t.episodes, r.ck_path) for r, t in zip(runs, trainers)])

        # a seed resumed behind the others catches up alone (same results, no stacking)
        while len({t.iteration for t in trainers}) > 1:
            lead = max(t.iteration for t in trainers)
            for s, (r, t) in enumerate(zip(runs, trainers)):
                if t.iteration < lead:
                    stop_if_asked()
                    stats = group.run_for_seed(s, t.iterate)
                    group.run_for_seed(s, r.after_iteration, t, stats["train_reward"], t.state_dict)
        while trainers[0].iteration < total:
            stop_if_asked()
            for s, (r, t, stats) in enumerate(zip(runs, trainers, group.iterate())):
                group.run_for_seed(s, r.after_iteration, t, stats["train_reward"], t.state_dict)
        return [group.run_for_seed(s, r.finish, t, t.state_dict, extra) for s, (r, t) in enumerate(zip(runs, trainers))]
    finally:
        for r in runs:
            r.close()


def cmd_run(args) -> int:
    import torch

    torch.set_num_threads(args.threads)
    budgets = sorted(int(x) for x in args.episodes.split(","))
    if not budgets or budgets[0] < 1:
        raise SystemExit("--episodes: give positive budgets, e.g. 640,1280")
    settings, models = _parse_settings(args.settings, TOM_SETTINGS), _parse_models(args.models)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    log = lambda s: print(s, flush=True)
    resume = f"resume with: {args.command_line}"
    with GracefulStop() as stop:
        kw = {"log": log, "progress_every": args.progress_every, "should_stop": stop.requested,
              "checkpoint_every": args.checkpoint_every or 10**9}
        try:
            for budget in budgets:
                kw["keep_checkpoint"] = args.keep_checkpoints or budget < budgets[-1]
                if args.stack_seeds:   # every seed of a (setting, model) together, gradient steps stacked
                    for (n, w, c), model in itertools.product(settings, models):
                        train_stacked(model, n, w, c, budget, list(seeds), args.out, args.eval_every,
                                      args.eval_episodes, args.final_episodes, **kw)
                        if stop.requested():
                            raise RunStopped([])
                    continue
                for seed, (n, w, c), model in itertools.product(seeds, settings, models):
                    train_run(model, n, w, c, budget, args.out, args.eval_every, args.eval_episodes,
                              args.final_episodes, seed, **kw)
                    if stop.requested():
                        raise RunStopped([])
        except RunStopped as e:
            saved = "; ".join(f"{name} saved at {episodes} episodes ({path})" for name, episodes, path in e.saved)
            log(f"stopped by {stop.name()}: {saved or 'between runs, nothing under way'}; lock released; {resume}")
            return stop.exit_code()
        except KeyboardInterrupt:
            log(f"stopped at once by a second {stop.name()}: the run under way goes on from its last periodic "
                f"checkpoint; lock released; {resume}")
            return stop.exit_code()
    return 0


def load_runs(out: str = OUT, episodes: int | None = None) -> dict[tuple[str, int, int, int], list[dict]]:
    """Every run's JSON grouped by (model, n, w, c), one entry per seed; with ``episodes``, the runs'
    results at that budget stage (runs that have not reached it are left out; curves cut there)."""
    res: dict[tuple[str, int, int, int], list[dict]] = {}
    if os.path.isdir(out):
        for f in sorted(os.listdir(out)):
            if f.endswith(".json") and not f.startswith("tom_"):
                d = _load_json(os.path.join(out, f))
                if d is None or "model" not in d:
                    continue
                if episodes is not None:
                    st = d.get("stages", {}).get(str(episodes))
                    if st is None:
                        continue
                    d = dict(d, **st)
                    d["curve"] = [p for p in d["curve"] if p["episodes"] <= episodes]
                res.setdefault((d["model"], d["agents"], d["width"], d["pieces"]), []).append(d)
    return res


def aggregate(runs: list[dict]) -> dict:
    """One (model, setting) cell from its seeds: ``table.mean`` the mean over seeds of each run's
    best-checkpoint reward per agent, ``table.std`` the std across seeds (with one seed: over its
    episodes); the same for ``table_sampled`` (sampled actions) and ``last`` (the final actor) where
    every seed has them (else None); CPU and wall seconds summed; the curve averaged where every seed
    has a point."""
    means = np.array([r["table"]["mean"] for r in runs])
    std = float(means.std(ddof=1)) if len(runs) > 1 else runs[0]["table"]["std"]
    common = set.intersection(*[{p["episodes"] for p in r["curve"]} for r in runs])
    curve = []
    for e in sorted(common):
        v = [p["eval_reward"] for r in runs for p in r["curve"] if p["episodes"] == e]
        curve.append({"episodes": e, "eval_reward": float(np.mean(v)), "min": float(min(v)), "max": float(max(v))})
    sampled = None
    if all("table_sampled" in r for r in runs):
        sm = np.array([r["table_sampled"]["mean"] for r in runs])
        sampled = {"mean": float(sm.mean()), "std": float(sm.std(ddof=1)) if len(runs) > 1 else runs[0]["table_sampled"]["std"]}
    last = None
    if all("last" in r for r in runs):
        lm = np.array([r["last"]["mean"] for r in runs])
        last = {"mean": float(lm.mean()), "std": float(lm.std(ddof=1)) if len(runs) > 1 else runs[0]["last"]["std"]}
    return {"table": {"mean": float(means.mean()), "std": std}, "table_sampled": sampled, "last": last,
            "seeds": sorted(r["seed"] for r in runs),
            "episodes": min(r["episodes"] for r in runs), "episodes_total": sum(r["episodes"] for r in runs),
            "cpu_seconds": sum(r["cpu_seconds"] for r in runs), "wall_seconds": sum(r["wall_seconds"] for r in runs),
            "curve": curve, "best_iteration": runs[0]["best_iteration"]}


def load_results(out: str = OUT, episodes: int | None = None) -> dict[tuple[str, int, int, int], dict]:
    """Every (model, n, w, c) cell aggregated over its seeds (:func:`aggregate`)."""
    return {k: aggregate(v) for k, v in load_runs(out, episodes).items()}


def load_in_progress(out: str = OUT) -> dict[tuple[str, int, int, int], list[dict]]:
    """Runs with a resumable checkpoint beyond their finished JSON (or without one): the bench state
    saved with the checkpoint (curve so far, best greedy evaluation on ``eval_episodes`` episodes),
    grouped by (model, n, w, c).  Loading reads the whole checkpoint (replay included: seconds)."""
    from cfrkit.agents.rl import LearnerError, load_checkpoint

    res: dict[tuple[str, int, int, int], list[dict]] = {}
    ckdir = os.path.join(out, "ckpt")
    if not os.path.isdir(ckdir):
        return res
    for f in sorted(os.listdir(ckdir)):
        if not f.endswith(".pt") or f.endswith(".actors.pt"):
            continue
        name = f[:-3]
        try:
            model, n, w, c, seed = name.rsplit("_", 4)
            key = (model, int(n[1:]), int(w[1:]), int(c[1:]))
            seed = int(seed[1:])
        except ValueError:
            continue
        try:
            payload = load_checkpoint(os.path.join(ckdir, f))
        except LearnerError as exc:   # a checkpoint being written right now; say so, go on
            print(f"(in progress: {f} unreadable now: {type(exc).__name__})")
            continue
        bench, episodes = payload["bench"], int(payload["trainer"]["episodes"])
        done = _load_json(os.path.join(out, name + ".json"))
        if done is not None and done["episodes"] >= episodes:
            continue
        res.setdefault(key, []).append({"seed": seed, "episodes": episodes, "curve": bench["curve"],
                                        "best_eval_reward": bench["best_reward"],
                                        "best_iteration": bench["best_iteration"],
                                        "cpu_seconds": float(payload["trainer"]["cpu_seconds"])})
    return res


def heuristic_rewards(out: str = OUT, episodes: int = 1000, path: str | None = None
                      ) -> dict[tuple[int, int, int], tuple[float, float]]:
    """cfrkit's heuristic agent (the paper's baseline) in self-play: (mean, std over episodes) of the
    reward per agent per setting, ``episodes`` episodes each; cached in ``path`` (default
    ``<out>/heuristic.json``)."""
    from cfrkit.evaluation.symmtom_eval import evaluate_setting

    path = path or os.path.join(out, "heuristic.json")
    out = os.path.dirname(path) or "."
    cache = _load_json(path) or {}
    res = {}
    for (n, w, c) in SETTINGS:
        key = f"{n}/{w}/{c}/{episodes}"
        if key not in cache:
            r = evaluate_setting("heuristic", n, w, c, episodes)
            cache[key] = [r.mean, r.std]
            if os.path.isdir(out):
                _write_json(path, cache)
        res[(n, w, c)] = tuple(cache[key])
    return res


def paper_differences(res: dict[tuple[str, int, int, int], dict]) -> list[dict]:
    """The learned cells whose mean over seeds differs from the paper's mean by more than the paper's
    own std (across its 9 seeds), in Table 1's order: model, setting, ours, paper mean and std, and
    the difference in units of the paper's std (inf where the paper's std is 0)."""
    out = []
    for m in ("oracle", "maddpg", "rmaddpg", "ce", "ge", "ee"):
        for col, (n, w, c) in enumerate(SETTINGS):
            d = res.get((m, n, w, c))
            if d is None:
                continue
            mean, (pm, ps) = d["table"]["mean"], PAPER[m][col]
            if abs(mean - pm) > ps:
                out.append({"model": m, "setting": f"{n}/{w}/{c}", "ours": mean, "paper": pm, "paper_std": ps,
                            "seeds": len(d["seeds"]), "z": (mean - pm) / ps if ps else float("inf") * np.sign(mean - pm)})
    return out


def cmd_rate(args) -> int:
    """CPU seconds per 1,000 training episodes per setting and model, from the runs' JSON files."""
    res = load_results(args.out)
    if not res:
        print(f"no results in {args.out}: run `run` first")
        return 1
    models = [m for m in MODELS if any(k[0] == m for k in res)]
    print("CPU s of training per 1,000 episodes (updates included; evaluation excluded)")
    print("| n/w/c | " + " | ".join(models) + " | all models |")
    print("|---|" + "---:|" * (len(models) + 1))
    total = 0.0
    for (n, w, c) in SETTINGS:
        cells, s = [], 0.0
        for m in models:
            d = res.get((m, n, w, c))
            if d is None:
                cells.append("-")
                continue
            rate = 1000 * d["cpu_seconds"] / d["episodes_total"]
            s += rate
            cells.append(f"{rate:.0f}")
        total += s
        print(f"| {n}/{w}/{c} | " + " | ".join(cells) + f" | {s:.0f} |")
    for budget in (2_560, 60_000):
        print(f"projected CPU for all settings x {len(models)} models at {budget:,} episodes each, one seed: "
              f"{total * budget / 1000 / 3600:.2f} h")
    done = [r for runs in load_runs(args.out).values() for r in runs]
    print(f"finished runs: {len(done)}; their training CPU {sum(r['cpu_seconds'] for r in done) / 3600:.2f} h, "
          f"wall {sum(r['wall_seconds'] for r in done) / 3600:.2f} h, evaluation CPU "
          f"{sum(r.get('eval_cpu_seconds', 0) for r in done) / 3600:.2f} h")
    return 0


def _cell(mean, std) -> str:
    return f"{mean:.0f} [{std:.0f}]"


def random_policy_reward(n: int, w: int, c: int, episodes: int = 1000, seed: int = 1) -> tuple[float, float]:
    """Uniformly random moves and speech in self-play: (mean, std over episodes) of the reward per agent."""
    from cfrkit.games.symmtom import BatchedSymmToM, SymmToMConfig

    env = BatchedSymmToM(SymmToMConfig(agents=n, width=w, pieces=c), episodes, seed=seed)
    env.reset()
    rng = np.random.default_rng(seed)
    for _ in range(env.config.episode_length):
        env.step(rng.integers(0, 5, (episodes, n)), rng.integers(0, c, (episodes, n)))
    per_episode = env.returns.mean(1)
    return float(per_episode.mean()), float(per_episode.std(ddof=1))


def format_report(res: dict[tuple[str, int, int, int], dict],
                  heuristic: dict[tuple[int, int, int], tuple[float, float]] | None = None) -> str:
    """Table 1 (paper's layout) with paper rows, cfrkit learned rows (mean over seeds [std across
    seeds; with one seed, std over its 1,000 scoring episodes]; greedy actions, and again with sampled
    actions for runs that recorded ``table_sampled``), the heuristic, budgets and time per setting.
    A learned cell more than the paper's std above (below) the paper's mean is marked ^ (v)."""
    cols = [f"{n}/{w}/{'n' if c == n else str(c // n) + 'n'}" for (n, w, c) in SETTINGS]
    lines = ["| agent (n/w/c) | " + " | ".join(cols) + " |", "|---|" + "---|" * len(SETTINGS)]
    lines.append("| paper: Heuristic (1000 trials) | " + " | ".join(_cell(*x) for x in PAPER["heuristic"]) + " |")
    for m in ("oracle", "maddpg", "rmaddpg", "ce", "ge", "ee"):
        lines.append(f"| paper: {LABELS[m]} | " + " | ".join(_cell(*x) for x in PAPER[m]) + " |")
    for m in ("oracle", "maddpg", "rmaddpg", "ce", "ge", "ee"):
        row = []
        for (n, w, c) in SETTINGS:
            d = res.get((m, n, w, c))
            if d is None:
                row.append("-")
                continue
            pm, ps = PAPER[m][SETTINGS.index((n, w, c))]
            mean = d["table"]["mean"]
            flag = "^" if mean - pm > ps else ("v" if pm - mean > ps else "")
            row.append(f"{mean:.1f} [{d['table']['std']:.1f}]{flag}")
        if any(x != "-" for x in row):
            lines.append(f"| cfrkit: {LABELS[m]} | " + " | ".join(row) + " |")
    # the same best checkpoints with sampled actions (the paper's MADDPG code samples), where the runs have it
    for m in ("oracle", "maddpg", "rmaddpg", "ce", "ge", "ee"):
        row = []
        for (n, w, c) in SETTINGS:
            d = res.get((m, n, w, c))
            ts = d.get("table_sampled") if d is not None else None
            row.append("-" if ts is None else f"{ts['mean']:.1f} [{ts['std']:.1f}]")
        if any(x != "-" for x in row):
            lines.append(f"| cfrkit, sampled actions: {LABELS[m]} | " + " | ".join(row) + " |")
    if heuristic:
        lines.append("| cfrkit: heuristic (self-play) | " + " | ".join(
            "{:.1f} [{:.1f}]".format(*heuristic[s]) for s in SETTINGS) + " |")
    lines.append("| cfrkit: uniformly random policy | " + " | ".join(
        "{:.1f} [{:.1f}]".format(*random_policy_reward(n, w, c)) for (n, w, c) in SETTINGS) + " |")
    # best learned imperfect-information model per column (not the oracle), as the paper's bold
    best = []
    for (n, w, c) in SETTINGS:
        cand = [(res[(m, n, w, c)]["table"]["mean"], m) for m in ("maddpg", "rmaddpg", "ce", "ge", "ee")
                if (m, n, w, c) in res]
        best.append(f"{cand and max(cand)[1] or '-'}")
    lines.append("| cfrkit best learned (no oracle) | " + " | ".join(best) + " |")
    lines.append("| seeds per cell (cfrkit; [std] across seeds when > 1) | " + " | ".join(
        "/".join(sorted({str(len(res[(m, n, w, c)]["seeds"])) for m in MODELS if (m, n, w, c) in res})) or "-"
        for (n, w, c) in SETTINGS) + " |")
    lines.append("| episodes per run (cfrkit) | " + " | ".join(
        "/".join(sorted({str(res[(m, n, w, c)]["episodes"]) for m in MODELS if (m, n, w, c) in res})) or "-"
        for (n, w, c) in SETTINGS) + " |")
    for field, label in (("cpu_seconds", "training CPU s, all models"), ("wall_seconds", "training wall s, all models")):
        cells = []
        for (n, w, c) in SETTINGS:
            runs = [res[(m, n, w, c)][field] for m in MODELS if (m, n, w, c) in res]
            cells.append(f"{sum(runs):.0f}" if runs else "-")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_in_progress(prog: dict[tuple[str, int, int, int], list[dict]]) -> str:
    """Unfinished runs: episodes so far, best and last greedy evaluation (the curve's, on its
    ``eval_episodes`` fixed episodes, not the 1,000-episode Table 1 score), training CPU so far."""
    lines = ["| run (model n/w/c seed) | episodes | best greedy eval (curve) | last greedy eval | training CPU s |",
             "|---|---:|---:|---:|---:|"]
    for (m, n, w, c), runs in sorted(prog.items()):
        for r in sorted(runs, key=lambda r: r["seed"]):
            last = r["curve"][-1]["eval_reward"] if r["curve"] else float("nan")
            lines.append(f"| {m} {n}/{w}/{c} s{r['seed']} | {r['episodes']} | {r['best_eval_reward']:.1f} | "
                         f"{last:.1f} | {r['cpu_seconds']:.0f} |")
    return "\n".join(lines)


def format_curves(res, n: int, w: int, c: int) -> str:
    """Greedy reward per agent (200 fixed episodes) against training episodes, one column per model."""
    models = [m for m in MODELS if (m, n, w, c) in res]
    if not models:
        return ""
    points = sorted({p["episodes"] for m in models for p in res[(m, n, w, c)]["curve"]})
    lines = ["| episodes | " + " | ".join(m for m in models) + " |", "|---:|" + "---:|" * len(models)]
    for e in points:
        row = []
        for m in models:
            v = [p["eval_reward"] for p in res[(m, n, w, c)]["curve"] if p["episodes"] == e]
            row.append(f"{v[0]:.1f}" if v else "")
        lines.append(f"| {e} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def plot_curves(res, path: str, prog: dict[tuple[str, int, int, int], list[dict]] | None = None) -> None:
    """Training curves of every setting (greedy reward per agent on 200 fixed episodes against
    training episodes, one line per model: the mean over seeds, shaded between the lowest and the
    highest seed; unfinished runs dashed; the paper's Table 1 value of each model dotted) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 6, figsize=(22, 7), sharex=False)
    colors = dict(zip(MODELS, ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:gray")))
    for ax, (col, (n, w, c)) in zip(axes.flat, enumerate(SETTINGS)):
        for m in MODELS:
            d = res.get((m, n, w, c))
            if d is not None:
                x = [p["episodes"] for p in d["curve"]]
                ax.plot(x, [p["eval_reward"] for p in d["curve"]], color=colors[m],
                        label=f"{m} ({len(d['seeds'])} seeds)", lw=1.2)
                if len(d["seeds"]) > 1:
                    ax.fill_between(x, [p["min"] for p in d["curve"]], [p["max"] for p in d["curve"]],
                                    color=colors[m], alpha=0.15, lw=0)
            for r in (prog or {}).get((m, n, w, c), []):
                ax.plot([p["episodes"] for p in r["curve"]], [p["eval_reward"] for p in r["curve"]],
                        color=colors[m], ls="--", lw=1.0, label=f"{m} s{r['seed']} (running)")
            ax.axhline(PAPER[m][col][0], color=colors[m], ls=":", lw=0.8)
        ax.set_title(f"n={n} w={w} c={c}", fontsize=9)
        ax.tick_params(labelsize=7)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6)
    fig.supxlabel("training episodes")
    for ax in axes[:, 0]:
        ax.set_ylabel("greedy reward per agent\n(dotted: paper, 60,000 episodes)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def plot_setting_curves(runs: dict[tuple[str, int, int, int], list[dict]], n: int, w: int, c: int, path: str) -> None:
    """Two panels for one setting: the greedy evaluation (200 fixed episodes) and the training reward
    (the iteration's 128 exploring episodes, actions sampled: what the paper's Fig. 5 plots, MADDPG's
    logged episode reward) against training episodes; per model the mean over seeds, shaded between
    the lowest and highest seed; the paper's Table 1 value dotted.  Small PNG (9 x 3.4 in, 80 dpi)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    col = SETTINGS.index((n, w, c))
    colors = dict(zip(MODELS, ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:gray")))
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    for ax, field, title in ((axes[0], "eval_reward", "greedy evaluation (200 fixed episodes)"),
                             (axes[1], "train_reward", "training episodes (sampled actions)")):
        for m in MODELS:
            seeds = runs.get((m, n, w, c), [])
            if not seeds:
                continue
            common = sorted(set.intersection(*[{p["episodes"] for p in r["curve"]} for r in seeds]))
            v = np.array([[next(p[field] for p in r["curve"] if p["episodes"] == e) for e in common] for r in seeds])
            ax.plot(common, v.mean(0), color=colors[m], lw=1.1, label=f"{m} ({len(seeds)} seeds)")
            ax.fill_between(common, v.min(0), v.max(0), color=colors[m], alpha=0.15, lw=0)
            ax.axhline(PAPER[m][col][0], color=colors[m], ls=":", lw=0.9)
        ax.set_title(f"{n}/{w}/{c}: {title}", fontsize=9)
        ax.set_xlabel("training episodes", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].set_ylabel("reward per agent per episode\n(dotted: paper's Table 1)", fontsize=8)
    axes[0].legend(fontsize=6, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def cmd_report(args) -> int:
    res = load_results(args.out, args.episodes)
    prog = load_in_progress(args.out) if args.in_progress else {}
    if not res and not prog:
        print(f"no results in {args.out}: run `run` first")
        return 1
    heuristic = heuristic_rewards(args.out, args.heuristic_episodes) if args.heuristic_episodes else None
    if res:
        print(format_report(res, heuristic))
        diffs = paper_differences(res)
        cells = sum(1 for k in res if k[0] in MODELS)
        print(f"\nCells more than the paper's std from the paper's mean (^ above, v below): {len(diffs)} of {cells}")
        for d in diffs:
            z = "paper std 0" if not np.isfinite(d["z"]) else f"{d['z']:+.1f} paper std"
            print(f"  {d['model']} {d['setting']}: {d['ours']:.1f} vs {d['paper']} [{d['paper_std']}] ({z}; "
                  f"{d['seeds']} seed{'s' if d['seeds'] > 1 else ''})")
    if prog:
        print("\nUnfinished runs (from their checkpoints):")
        print(format_in_progress(prog))
    plot = args.plot or os.path.join(args.out, f"curves_{args.episodes or 'latest'}.png")
    if args.plot != "none" and args.plot_setting:
        (n, w, c), = _parse_settings(args.plot_setting)
        plot_setting_curves(load_runs(args.out, args.episodes), n, w, c, plot)
        print(f"(curves: {plot})")
    elif args.plot != "none":
        plot_curves(res, plot, prog)
        print(f"(curves: {plot})")
    if args.curves:
        for (n, w, c) in _parse_settings(args.curves):
            print(f"\nTraining curve n={n} w={w} c={c}:")
            print(format_curves(res, n, w, c))
    if not res:
        return 0
    # relative statements in the paper's sense: mean over settings of A_i / B_i
    def ratio(a, b):
        pairs = [(res[(a,) + s]["table"]["mean"], res[(b,) + s]["table"]["mean"]) for s in SETTINGS
                 if (a,) + s in res and (b,) + s in res and res[(b,) + s]["table"]["mean"] > 0]
        return (np.mean([x / y for x, y in pairs]), len(pairs)) if pairs else (float("nan"), 0)
    print()
    for a, b in (("ee", "ce"), ("ee", "ge"), ("ce", "maddpg"), ("rmaddpg", "maddpg"), ("oracle", "maddpg")):
        r, k = ratio(a, b)
        wins = sum(1 for s in SETTINGS if (a,) + s in res and (b,) + s in res
                   and res[(a,) + s]["table"]["mean"] > res[(b,) + s]["table"]["mean"])
        print(f"{a} vs {b}: mean ratio {r:.2f} over {k} settings; {a} higher in {wins} of {k}")
    return 0


def load_trained(model: str, n: int, w: int, c: int, out: str = OUT, best: bool = True, seed: int = 0):
    """The trainer of one finished run with its best (``best``) or final actor loaded, and the run's
    bench state (``best_iteration``)."""
    from cfrkit.agents.rl import load_checkpoint
    from cfrkit.agents.symmtom.learning import MADDPGSettings, make_trainer
    from cfrkit.games.symmtom import SymmToMConfig

    path = os.path.join(out, "ckpt", run_name(model, n, w, c, seed) + ".actors.pt")
    payload = load_checkpoint(path)
    trainer = make_trainer(SymmToMConfig(agents=n, width=w, pieces=c), MADDPGSettings(variant=model, seed=seed), "cpu")
    trainer.actor.load_state_dict(payload["best_actor"] if best and payload["best_actor"] is not None
                                  else payload["actor"])
    return trainer, {"best_iteration": payload["best_iteration"]}


def cmd_tom(args) -> int:
    """The paper's theory-of-mind tests on each model's agent trained in the test's own setting.

    Table 1 runs serve zeroth / probabilistic (3/6/3) and zeroth / second_order (3/12/3);
    first_second (n = 4, c = 3) has no Table 1 setting, so those runs are trained here to
    ``--train-episodes`` (the same trainer and budget rules as ``run``).
    """
    import torch

    from cfrkit.evaluation.symmtom_tests import PAPER_TESTS, build_trial, run_tom_test

    torch.set_num_threads(args.threads)
    models = _parse_models(args.models)
    tests = [(t, w) for (t, w) in PAPER_TESTS if args.tests == "all" or t in args.tests.split(",")]
    for model in models:
        path = os.path.join(args.out, f"tom_{model}.json" if args.run_seed == 0 else f"tom_{model}_s{args.run_seed}.json")
        results = _load_json(path) or {}
        for k, (name, w) in enumerate(tests):
            key = f"{name}_w{w}" + ("_sampled" if args.sampled else "")
            cfg = build_trial(name, w, np.random.default_rng(0)).config
            n, c = cfg.agents, cfg.pieces
            run = _load_json(os.path.join(args.out, run_name(model, n, w, c, args.run_seed) + ".json"))
            if (key in results and results[key]["trials"] >= args.trials and run is not None
                    and results[key]["trained_episodes"] == run["episodes"]):
                continue   # done on this run's current checkpoint
            if run is None:
                if (n, w, c) in SETTINGS:
                    print(f"{model} {key}: no run for {n}/{w}/{c} yet; skipped", flush=True)
                    continue
                run = train_run(model, n, w, c, args.train_episodes, args.out, seed=args.run_seed,
                                log=lambda s: print(s, flush=True), keep_checkpoint=False)
                if run is None:
                    continue
            trainer, bench = load_trained(model, n, w, c, args.out, seed=args.run_seed)
            c0 = time.process_time()
            if args.sampled:   # a fresh generator per trial, seeded by (seed, test, trial)
                counter = itertools.count()
                factory = lambda trainer=trainer, k=k, counter=counter: trainer.make_agent(
                    sample=True, seed=(args.seed * 1_000 + k) * 1_000_003 + next(counter))
            else:
                factory = trainer.make_agent
            r = run_tom_test(name, w, factory, args.trials, args.seed + k, oracle=model == "oracle", progress=False)
            results[key] = {"test": name, "width": w, "agents": n, "pieces": c, "trials": args.trials,
                            "actions": "sampled" if args.sampled else "greedy", "run_seed": args.run_seed,
                            "success_rate": r.success_rate, "failure_rate": r.failure_rate,
                            "neither_rate": r.neither_rate, "ratso": r.ratso, "ratso_expected": r.ratso_expected,
                            "mean_turns": r.mean_turns, "trained_episodes": run["episodes"],
                            "best_iteration": bench["best_iteration"], "cpu_seconds": round(time.process_time() - c0, 2)}
            _write_json(path, results)
            print(f"{model} s{args.run_seed} {key} ({run['episodes']} episodes): SR {r.success_rate:.0%} FR {r.failure_rate:.0%} "
                  f"1-SR-FR {r.neither_rate:.0%} RATSO {r.ratso_text()}", flush=True)
    return 0


#: Evaluation protocols of :func:`protocol_scores`: name -> (checkpoint, greedy actions, evaluation seed).
#: ``evaluate(seed=0)`` (200 episodes) picks the best checkpoint during a run and ``seed=1`` scores
#: Table 1's cell, so seed 2 is held out from both.  ``sampled`` draws the actions from the actor's
#: distributions, as the paper's MADDPG code acts at evaluation (its action is a Gumbel-softmax sample
#: that the environment argmaxes: a sample of the categorical).
PROTOCOLS = {"stored": ("best", True, 1), "best_greedy_fresh": ("best", True, 2),
             "last_greedy_fresh": ("last", True, 2), "best_sampled_fresh": ("best", False, 2),
             "last_sampled_fresh": ("last", False, 2)}


def protocol_scores(model: str, n: int, w: int, c: int, seed: int, out: str = OUT, episodes: int = 1000
                    ) -> dict[str, float]:
    """One finished run's stored actors scored under every :data:`PROTOCOLS` entry: mean reward per
    agent (reward points per episode) over ``episodes`` episodes each (``stored`` always over Table
    1's 1,000 so that it reproduces the run's JSON)."""
    from cfrkit.agents.rl import load_checkpoint

    path = os.path.join(out, "ckpt", run_name(model, n, w, c, seed) + ".actors.pt")
    payload = load_checkpoint(path)
    trainer, _ = load_trained(model, n, w, c, out, best=True, seed=seed)
    res = {}
    for name, (which, greedy, eval_seed) in PROTOCOLS.items():
        trainer.actor.load_state_dict(payload["best_actor"] if which == "best" else payload["actor"])
        k = 1000 if name == "stored" else episodes
        res[name] = float(trainer.evaluate(k, seed=eval_seed, greedy=greedy).mean())
    return res


def cmd_protocols(args) -> int:
    """Table 1's cells of the finished runs under other evaluation protocols (evaluation only)."""
    import torch

    if args.episodes < 1:
        raise SystemExit("--episodes must be >= 1")
    torch.set_num_threads(args.threads)
    runs = load_runs(args.out)
    settings = _parse_settings(args.settings)
    rows, per_run = [], {}
    for m in MODELS:
        for (n, w, c) in settings:
            seeds = sorted(r["seed"] for r in runs.get((m, n, w, c), []) if r["episodes"] >= args.min_episodes)
            if not seeds:
                continue
            scores = []
            for sd in seeds:
                sc = protocol_scores(m, n, w, c, sd, args.out, args.episodes)
                stored = next(r for r in runs[(m, n, w, c)] if r["seed"] == sd)["table"]["mean"]
                if abs(sc["stored"] - stored) > 6e-4:   # the JSON keeps 3 decimals
                    print(f"warning: {run_name(m, n, w, c, sd)} rescored {sc['stored']:.3f}, JSON {stored:.3f}")
                per_run[run_name(m, n, w, c, sd)] = sc
                scores.append(sc)
            col = SETTINGS.index((n, w, c))
            cells = []
            for name in PROTOCOLS:
                v = np.array([s[name] for s in scores])
                cells.append(f"{v.mean():.1f} [{v.std(ddof=1) if len(v) > 1 else 0.0:.1f}]")
            rows.append(f"| {LABELS[m]} {n}/{w}/{c} ({len(seeds)} seeds) | " + " | ".join(cells)
                        + " | {} [{}] |".format(*PAPER[m][col]))
    print("| model, setting | " + " | ".join(PROTOCOLS) + " | paper |")
    print("|---|" + "---:|" * (len(PROTOCOLS) + 1))
    print("\n".join(rows))
    if args.save:
        _write_json(args.save, {"episodes": args.episodes, "protocols": {k: list(v) for k, v in PROTOCOLS.items()},
                                "runs": per_run})
        print(f"(per run: {args.save})")
    return 0


#: The paper's Table 2 (SR, FR in %, 9 seeds x 1,000 trials) for the tests whose rows its text gives in full
#: (zeroth and first+second order at w = 6 and 12), and its Table 3 (best seed's SR in %) for every test.
PAPER_TOM = {
    "zeroth_w6": {"oracle": (0, 100), "maddpg": (0, 100), "rmaddpg": (0, 76), "ce": (0, 86), "ge": (0, 57), "ee": (23, 63)},
    "zeroth_w12": {"oracle": (0, 43), "maddpg": (0, 22), "rmaddpg": (0, 32), "ce": (0, 0), "ge": (0, 18), "ee": (0, 11)},
    "first_second_w6": {"oracle": (0, 79), "maddpg": (0, 83), "rmaddpg": (6, 83), "ce": (0, 83), "ge": (25, 58),
                        "ee": (8, 71)},
    "first_second_w12": {"oracle": (0, 37), "maddpg": (0, 24), "rmaddpg": (0, 46), "ce": (0, 51), "ge": (0, 51),
                         "ee": (0, 47)},
}
PAPER_TOM_BEST_SR = {
    "zeroth_w6": {"oracle": 0, "maddpg": 0, "rmaddpg": 0, "ce": 0, "ge": 0, "ee": 100},
    "zeroth_w12": {m: 0 for m in MODELS},
    "first_second_w6": {"oracle": 0, "maddpg": 1, "rmaddpg": 53, "ce": 0, "ge": 79, "ee": 37},
    "first_second_w12": {m: 0 for m in MODELS},
    "second_order_w12": {"oracle": 82, "maddpg": 81, "rmaddpg": 82, "ce": 80, "ge": 80, "ee": 83},
    "probabilistic_w6": {"oracle": 100, "maddpg": 90, "rmaddpg": 99, "ce": 71, "ge": 60, "ee": 79},
}
#: The heuristic's rows of the summary (``heuristic_rewards``' cache, committed: the heuristic is fixed code).
HEURISTIC_CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "symmtom_final", "heuristic.json")
#: Sampled-action cells computed afterwards for runs finished before ``finish`` stored them (``backfill-sampled``).
SAMPLED_BACKFILL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "symmtom_final",
                                "table_sampled_backfill.json")
#: Where the old per-step loop's runs (the issue's "before": 32 episodes then 10 updates, 640-2,560 episodes a run) are.
BEFORE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "symmtom_table1")


def _column(n: int, w: int, c: int) -> str:
    return f"{n}/{w}/{'n' if c == n else str(c // n) + 'n'}"


def summary_data(out: str = OUT, before: str | None = BEFORE, episodes: int = 60_000, seeds: int = 3,
                 sampled: dict[str, dict] | None = None) -> dict:
    """Everything :func:`format_summary` prints, from the runs' JSON files (no evaluation).

    A run counts when its JSON holds at least ``episodes`` training episodes; a (setting, model) cell is
    *complete* with at least ``seeds`` such runs, *partial* with fewer (its mean is over those).
    ``results``: :func:`aggregate` of every cell with a counted run; ``differences``:
    :func:`paper_differences` of those cells (each carries its seed count); ``totals``: training CPU and
    wall seconds, evaluation CPU seconds and episodes summed over the counted runs (a stacked seed's JSON
    holds its own acting plus 1/S of the stacked gradient steps' CPU and wall time, so the sum over seeds is
    the stack's total); ``rates``: per model, training episodes per CPU second (one torch thread: per core)
    after (these runs) and before (the runs in ``before``, the old per-step loop; None: not compared),
    both summed over the same settings, those with runs in both.  ``sampled`` (:func:`sampled_backfill`'s
    cells by run name) supplies ``table_sampled`` to runs whose JSON lacks it (``backfilled`` counts them)."""
    runs = {k: [r for r in v if r["episodes"] >= episodes] for k, v in load_runs(out).items()}
    backfilled = 0
    for v in runs.values():
        for i, r in enumerate(v):
            name = run_name(r["model"], r["agents"], r["width"], r["pieces"], r["seed"])
            cell = (sampled or {}).get(name)
            if "table_sampled" not in r and cell is not None and cell["episodes_trained"] == r["episodes"]:
                v[i] = dict(r, table_sampled=cell)
                backfilled += 1
    runs = {k: v for k, v in runs.items() if v and k[0] in MODELS and k[1:] in SETTINGS}
    status = {(m,) + s: len(runs.get((m,) + s, [])) for m in MODELS for s in SETTINGS}
    complete = [k for k, v in status.items() if v >= seeds]
    partial = [k for k, v in status.items() if 0 < v < seeds]
    missing = [k for k, v in status.items() if v == 0]
    results = {k: aggregate(v) for k, v in runs.items()}
    counted = [r for v in runs.values() for r in v]
    totals = {"runs": len(counted), "episodes": sum(r["episodes"] for r in counted),
              "cpu_seconds": sum(r["cpu_seconds"] for r in counted),
              "wall_seconds": sum(r["wall_seconds"] for r in counted),
              "eval_cpu_seconds": sum(r.get("eval_cpu_seconds", 0.0) for r in counted)}
    old = {}
    if before is not None:
        old = {k: v for k, v in load_runs(before).items() if k[0] in MODELS and k[1:] in SETTINGS}
    rates = {}
    for m in MODELS:
        settings = [s for s in SETTINGS if (m,) + s in runs]
        common = [s for s in settings if (m,) + s in old]
        after = [r for s in settings for r in runs[(m,) + s]]
        if not after:
            continue
        row = {"settings": [_column(*s) for s in settings], "episodes": sum(r["episodes"] for r in after),
               "cpu_seconds": sum(r["cpu_seconds"] for r in after), "before": None}
        row["rate"] = row["episodes"] / row["cpu_seconds"]
        if common:
            a = [r for s in common for r in runs[(m,) + s]]
            b = [r for s in common for r in old[(m,) + s]]
            rb = sum(r["episodes"] for r in b) / sum(r["cpu_seconds"] for r in b)
            ra = sum(r["episodes"] for r in a) / sum(r["cpu_seconds"] for r in a)
            row["before"] = {"settings": [_column(*s) for s in common], "rate": rb, "rate_after": ra,
                             "speedup": ra / rb}
        rates[m] = row
    per_setting = {}
    for s in SETTINGS:
        cell = [r for m in MODELS for r in runs.get((m,) + s, [])]
        if cell:
            per_setting[s] = {"runs": len(cell), "cpu_seconds": sum(r["cpu_seconds"] for r in cell),
                              "wall_seconds": sum(r["wall_seconds"] for r in cell),
                              "before_ms_per_episode": {m: 1000 * sum(r["cpu_seconds"] for r in old[(m,) + s])
                                                        / sum(r["episodes"] for r in old[(m,) + s])
                                                        for m in MODELS if (m,) + s in old},
                              "after_ms_per_episode": {m: 1000 * sum(r["cpu_seconds"] for r in runs[(m,) + s])
                                                       / sum(r["episodes"] for r in runs[(m,) + s])
                                                       for m in MODELS if (m,) + s in runs}}
    # the old loop's cost of the whole table at this budget and seed count, from its per-episode CPU
    before_table = None
    if old and all((m,) + s in old for m in MODELS for s in SETTINGS):
        before_table = sum(episodes * seeds * sum(r["cpu_seconds"] for r in old[(m,) + s])
                           / sum(r["episodes"] for r in old[(m,) + s]) for m in MODELS for s in SETTINGS)
    # the same rule under the other stored protocols (the JSONs' sampled-action and last-checkpoint cells)
    protocols = {}
    for field, label in (("table", "best checkpoint, greedy (Table 1's cells)"),
                         ("table_sampled", "best checkpoint, sampled actions"), ("last", "last checkpoint, greedy")):
        alt = {k: dict(v, table=v[field]) for k, v in results.items() if v.get(field)}
        protocols[label] = {"cells": len(alt), "differences": paper_differences(alt)}
    return {"episodes": episodes, "seeds": seeds, "status": status, "protocols": protocols, "backfilled": backfilled,
            "complete": complete, "partial": partial,
            "missing": missing, "results": results, "differences": paper_differences(results), "totals": totals,
            "rates": rates, "per_setting": per_setting, "before_table_cpu_seconds": before_table}


def sampled_backfill(out: str = OUT) -> dict[str, dict]:
    """``table_sampled`` for every finished run of ``out`` whose JSON lacks it (runs finished before
    ``finish`` stored it): the best actor, sampled actions, the cell's own episodes and seed (1) -- what
    ``finish`` computes -- by run name, with the greedy rescoring of the stored cell (``greedy_check``:
    equal to the JSON's ``table.mean`` to its 3 decimals when the actors are the run's).  Evaluation only."""
    cells = {}
    for runs in load_runs(out).values():
        for r in runs:
            if "table_sampled" in r:
                continue
            name = run_name(r["model"], r["agents"], r["width"], r["pieces"], r["seed"])
            trainer, _ = load_trained(r["model"], r["agents"], r["width"], r["pieces"], out, best=True, seed=r["seed"])
            k = r["table"]["episodes"]
            greedy = float(trainer.evaluate(k, seed=1).mean())
            v = trainer.evaluate(k, seed=1, greedy=False)
            cells[name] = {"mean": round(float(v.mean()), 3), "std": round(float(v.std(ddof=1)), 3), "episodes": k,
                           "checkpoint": "best", "actions": "sampled", "episodes_trained": r["episodes"],
                           "greedy_check": round(greedy, 3), "table_mean": r["table"]["mean"]}
    return cells


def cmd_backfill_sampled(args) -> int:
    """Write :func:`sampled_backfill`'s cells to ``--save`` (merged with what it holds)."""
    import torch

    torch.set_num_threads(args.threads)
    cells = dict(_load_json(args.save) or {})
    new = sampled_backfill(args.out)
    bad = [n for n, c in new.items() if abs(c["greedy_check"] - c["table_mean"]) > 6e-4]
    for n in bad:
        print(f"warning: {n} rescored {new[n]['greedy_check']:.3f} greedy, JSON {new[n]['table_mean']:.3f}: not stored")
    cells.update({n: c for n, c in new.items() if n not in bad})
    _write_json(args.save, cells)
    print(f"{len(new) - len(bad)} runs' sampled cells written to {args.save} ({len(cells)} in all)")
    return 1 if bad else 0


def tom_summary(tom_dir: str) -> dict[str, dict[str, dict]]:
    """The ``tom`` JSONs of ``tom_dir`` (``tom_<model>[_s<seed>].json``) per test key (``zeroth_w6``,
    ``..._sampled``) and model: SR, FR and 1-SR-FR in % (mean over the seeds run, and the best seed's SR),
    trials, seeds and training episodes of the tested runs."""
    res: dict[str, dict[str, dict]] = {}
    if not os.path.isdir(tom_dir):
        return res
    for f in sorted(os.listdir(tom_dir)):
        if not (f.startswith("tom_") and f.endswith(".json")):
            continue
        data = _load_json(os.path.join(tom_dir, f)) or {}
        model = f[4:-5].split("_s")[0]
        for key, r in data.items():
            res.setdefault(key, {}).setdefault(model, []).append(r)
    out: dict[str, dict[str, dict]] = {}
    for key, per_model in res.items():
        for m, rs in per_model.items():
            out.setdefault(key, {})[m] = {
                "sr": 100 * float(np.mean([r["success_rate"] for r in rs])),
                "fr": 100 * float(np.mean([r["failure_rate"] for r in rs])),
                "neither": 100 * float(np.mean([r["neither_rate"] for r in rs])),
                "best_sr": 100 * max(r["success_rate"] for r in rs), "seeds": sorted(r["run_seed"] for r in rs),
                "trials": min(r["trials"] for r in rs), "episodes": min(r["trained_episodes"] for r in rs)}
    return out


def format_summary(data: dict, heuristic: dict[tuple[int, int, int], tuple[float, float]] | None = None,
                   random_rewards: dict[tuple[int, int, int], tuple[float, float]] | None = None,
                   tom: dict[str, dict[str, dict]] | None = None) -> str:
    """Markdown of :func:`summary_data`: the completion line, Table 1 (paper rows, ours with greedy and
    sampled actions, heuristic, random), the cells beyond the paper's std, the cost tables and, with
    ``tom`` (:func:`tom_summary`), the theory-of-mind tests beside the paper's Tables 2 and 3."""
    seeds, res, status = data["seeds"], data["results"], data["status"]
    total = len(MODELS) * len(SETTINGS)
    L = [f"**{len(data['complete'])} of {total} (setting, model) cells complete** ({seeds} seeds at >= "
         f"{data['episodes']:,} episodes); {len(data['partial'])} partial, {len(data['missing'])} without a "
         f"finished run."]
    pending = []
    for s in SETTINGS:
        left = [m for m in MODELS if status[(m,) + s] < seeds]
        if len(left) == len(MODELS) and not any(status[(m,) + s] for m in MODELS):
            pending.append(f"{_column(*s)}: no model finished")
        elif left:
            pending.append(f"{_column(*s)}: " + ", ".join(f"{m} ({status[(m,) + s]}/{seeds} seeds)" for m in left))
    if pending:
        L.append("Not complete: " + "; ".join(pending) + ".")
    cols = [_column(*s) for s in SETTINGS]
    L += ["", "| agent | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(SETTINGS)]
    L.append("| paper: heuristic | " + " | ".join(_cell(*x) for x in PAPER["heuristic"]) + " |")
    order = ("oracle", "maddpg", "rmaddpg", "ce", "ge", "ee")
    for m in order:
        L.append(f"| paper: {LABELS[m]} | " + " | ".join(_cell(*x) for x in PAPER[m]) + " |")
    for field, label in (("table", "cfrkit"), ("table_sampled", "cfrkit, sampled actions")):
        for m in order:
            row = []
            for col, s in enumerate(SETTINGS):
                d = res.get((m,) + s)
                t = d and d[field]
                if not t:
                    row.append("-")
                    continue
                pm, ps = PAPER[m][col]
                flag = "^" if t["mean"] - pm > ps else ("v" if pm - t["mean"] > ps else "")
                k = len(d["seeds"])
                row.append(f"{t['mean']:.1f} [{t['std']:.1f}]{flag}" + (f" ({k}s)" if k < seeds else ""))
            if any(x != "-" for x in row):
                L.append(f"| {label}: {LABELS[m]} | " + " | ".join(row) + " |")
    if heuristic:
        L.append("| cfrkit: heuristic (self-play) | " + " | ".join("{:.1f} [{:.1f}]".format(*heuristic[s])
                                                               for s in SETTINGS) + " |")
    if random_rewards:
        L.append("| cfrkit: uniformly random policy | " + " | ".join("{:.1f} [{:.1f}]".format(*random_rewards[s])
                                                                 for s in SETTINGS) + " |")
    L += ["", f"Cells: mean over seeds [std across seeds] of the reward per agent per episode, best checkpoint, "
          f"1,000 episodes; ^ / v: above / below the paper's mean by more than the paper's std; (ks): only k of "
          f"{seeds} seeds finished; heuristic and random: [std over episodes]."]
    diffs = data["differences"]
    shown = sum(1 for k in res)
    up = sum(1 for d in diffs if d["ours"] > d["paper"])
    L += ["", f"**{len(diffs)} of {shown} cells differ from the paper by more than the paper's std** ({up} above, "
          f"{len(diffs) - up} below)."]
    L += ["", "| protocol (stored in the runs' JSONs) | cells | beyond the paper's std: above / below | within |",
          "|---|---:|---:|---:|"]
    for label, p in data.get("protocols", {}).items():
        a = sum(1 for d in p["differences"] if d["ours"] > d["paper"])
        L.append(f"| {label} | {p['cells']} | {a} / {len(p['differences']) - a} | {p['cells'] - len(p['differences'])} |")
    L += ["", "| model | cells beyond (above / below) | within | largest differences (paper stds) |",
          "|---|---:|---:|---|"]
    for m in order:
        mine = [d for d in diffs if d["model"] == m]
        n_cells = sum(1 for k in res if k[0] == m)
        if not n_cells:
            continue
        a = sum(1 for d in mine if d["ours"] > d["paper"])
        top = sorted(mine, key=lambda d: -abs(d["z"]))[:3]
        L.append(f"| {LABELS[m]} | {len(mine)} ({a} / {len(mine) - a}) | {n_cells - len(mine)} | "
                 + ", ".join(f"{d['setting']} {d['z']:+.1f}" for d in top) + " |")
    L += ["", "| setting | model | ours [std] | paper [std] | ours - paper | paper stds | seeds |",
          "|---|---|---:|---:|---:|---:|---:|"]
    for d in sorted(diffs, key=lambda d: (SETTINGS.index(tuple(int(x) for x in d["setting"].split("/"))),
                                          order.index(d["model"]))):
        key = (d["model"],) + tuple(int(x) for x in d["setting"].split("/"))
        z = "inf (paper std 0)" if not np.isfinite(d["z"]) else f"{d['z']:+.1f}"
        L.append(f"| {_column(*key[1:])} | {LABELS[d['model']]} | {d['ours']:.1f} [{res[key]['table']['std']:.1f}] | "
                 f"{d['paper']} [{d['paper_std']}] | {d['ours'] - d['paper']:+.1f} | {z} | {d['seeds']} |")
    # cost
    t = data["totals"]
    L += ["", "| variant | settings (after) | after: episodes / CPU s | CPU min per 60,000-episode run, after | "
          "before (old loop), episodes / CPU s | after, same settings | speed-up |", "|---|---|---:|---:|---:|---:|---:|"]
    for m in order:
        r = data["rates"].get(m)
        if r is None:
            continue
        b = r["before"]
        tail = (f"{b['rate']:.0f} | {b['rate_after']:.0f} | {b['speedup']:.1f}x" if b else "- | - | -")
        L.append(f"| {LABELS[m]} | {len(r['settings'])} | {r['rate']:.0f} | {60_000 / r['rate'] / 60:.1f} | {tail} |")
    L += ["", "| setting | runs | training CPU s | training wall s | CPU s per 1,000 episodes per run, before -> after "
          "(MADDPG, RMADDPG, CE, GE, EE, Oracle) |", "|---|---:|---:|---:|---|"]
    for s, p in data["per_setting"].items():
        pairs = []
        for m in MODELS:
            a, b = p["after_ms_per_episode"].get(m), p["before_ms_per_episode"].get(m)
            pairs.append("-" if a is None else (f"{b:.1f} -> {a:.1f}" if b is not None else f"{a:.1f}"))
        L.append(f"| {_column(*s)} | {p['runs']} | {p['cpu_seconds']:,.0f} | {p['wall_seconds']:,.0f} | "
                 + ", ".join(pairs) + " |")
    L += ["", f"Whole table so far: {t['runs']} of {total * seeds} runs, {t['episodes']:,} training episodes; "
          f"training CPU {t['cpu_seconds'] / 3600:.2f} h ({t['cpu_seconds'] / max(t['runs'], 1) / 60:.2f} CPU min per "
          f"run), training wall {t['wall_seconds'] / 3600:.2f} h (sum over runs of their process wall time), "
          f"evaluation CPU {t['eval_cpu_seconds'] / 3600:.2f} h.  A stacked seed's JSON holds its own acting and 1/S "
          f"of the stacked gradient steps (CPU and wall), so the sums over seeds are the stacks' totals; two `run` "
          f"processes shared the work, so the elapsed time is below the summed wall."]
    if data["before_table_cpu_seconds"]:
        L.append(f"The old loop's per-episode CPU (its runs' JSONs) projects the same table ({total} cells x {seeds} "
                 f"seeds x {data['episodes']:,} episodes) at {data['before_table_cpu_seconds'] / 3600:.1f} CPU h.")
    if tom:
        L += ["", "| test | model | ours, greedy: SR / FR / 1-SR-FR (best seed's SR) | ours, sampled | "
              "paper Table 2 SR / FR | paper Table 3 best SR | seeds x trials |", "|---|---|---|---|---|---:|---|"]
        known = list(PAPER_TOM_BEST_SR)
        for key in sorted((k for k in tom if not k.endswith("_sampled")),
                          key=lambda k: (known.index(k) if k in known else len(known), k)):
            for m in order:
                g, s = tom[key].get(m), tom.get(key + "_sampled", {}).get(m)
                if g is None and s is None:
                    continue
                fmt = lambda r: ("-" if r is None else
                                 f"{r['sr']:.0f} / {r['fr']:.0f} / {r['neither']:.0f} ({r['best_sr']:.0f})")
                p2 = PAPER_TOM.get(key, {}).get(m)
                ref = g or s
                L.append(f"| {key} | {LABELS[m]} | {fmt(g)} | {fmt(s)} | {'-' if p2 is None else f'{p2[0]} / {p2[1]}'} | "
                         f"{PAPER_TOM_BEST_SR.get(key, {}).get(m, '-')} | {len(ref['seeds'])} x {ref['trials']} |")
    return "\n".join(L)


def cmd_summary(args) -> int:
    """Issue 32's closing numbers as Markdown: completion, Table 1, differing cells, cost, ToM tests."""
    if args.episodes < 1 or args.seeds < 1:
        raise SystemExit("--episodes and --seeds must be >= 1")
    before = None if args.before == "none" else args.before
    sampled = _load_json(args.sampled_cells) if args.sampled_cells != "none" else None
    data = summary_data(args.out, before, args.episodes, args.seeds, sampled)
    if not data["results"]:
        print(f"no run in {args.out} has reached {args.episodes:,} episodes")
        return 1
    heuristic = (heuristic_rewards(args.out, args.heuristic_episodes, args.heuristic_cache)
                 if args.heuristic_episodes else None)
    rnd = {s: random_policy_reward(*s) for s in SETTINGS} if args.random else None
    tom = tom_summary(args.tom) if args.tom else None
    print(format_summary(data, heuristic, rnd, tom))
    if data["backfilled"]:
        print(f"\n({data['backfilled']} runs' sampled-action cells from {os.path.relpath(args.sampled_cells)}: "
              f"computed after the run by `backfill-sampled`, the same actors, episodes and seed as `finish` uses)")
    if args.plot:
        plot_curves(data["results"], args.plot)
        print(f"\n(curves of every setting: {args.plot})")
    print(f"\n(regenerate: {args.command_line})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="train every (setting, model) run to each budget in turn (resumable)")
    r.add_argument("--episodes", default="640,1280,2560", help="comma-separated budgets (episodes per run)")
    r.add_argument("--settings", default="all",
                   help="all (Table 1's twelve), or n/w/c items like 3/6/3,4/12/12; also 4/6/3 and 4/12/3, "
                        "the settings tom's first_second test plays on")
    r.add_argument("--models", default="all", help="all, or a comma-separated subset of " + ",".join(MODELS))
    r.add_argument("--eval-every", type=int, default=8, help="iterations between greedy evaluations (curve, best)")
    r.add_argument("--eval-episodes", type=int, default=200)
    r.add_argument("--final-episodes", type=int, default=1000, help="episodes scoring the best checkpoint")
    r.add_argument("--seeds", type=int, default=1, help="seeds per (setting, model): first-seed, first-seed + 1, ...")
    r.add_argument("--first-seed", type=int, default=0)
    r.add_argument("--keep-checkpoints", action="store_true",
                   help="keep each finished run's resumable checkpoint (replay included) to extend it later")
    r.add_argument("--checkpoint-every", type=int, default=50,
                   help="iterations between a run's resumable checkpoints (replay included: ~240 MB a seed at "
                        "width 12); 0: only when stopped by SIGINT/SIGTERM, for many runs at once on a slow disk")
    r.add_argument("--threads", type=int, default=1)
    r.add_argument("--progress-every", type=int, default=5,
                   help="a progress line every this many greedy evaluations of a run (0: none)")
    r.add_argument("--stack-seeds", action="store_true",
                   help="train the seeds of each (setting, model) together with stacked gradient steps "
                        "(same algorithm and files; order: setting by setting instead of seed by seed)")
    r.add_argument("--out", default=OUT)
    r.set_defaults(func=cmd_run)
    t = sub.add_parser("rate", help="training CPU cost per setting and model, projections")
    t.add_argument("--out", default=OUT)
    t.set_defaults(func=cmd_rate)
    q = sub.add_parser("report", help="Table 1 with the learned rows beside the paper's")
    q.add_argument("--out", default=OUT)
    q.add_argument("--curves", default=None, help="also print training curves for these settings (n/w/c,...|all)")
    q.add_argument("--episodes", type=int, default=None,
                   help="report every run at this budget stage (default: each run's latest)")
    q.add_argument("--plot", default=None,
                   help="PNG of every setting's training curves (default <out>/curves_<episodes|latest>.png; none: no plot)")
    q.add_argument("--plot-setting", default=None,
                   help="one setting n/w/c: plot only its greedy-evaluation and training-reward curves")
    q.add_argument("--in-progress", action="store_true",
                   help="also list unfinished runs from their checkpoints (and draw their curves dashed)")
    q.add_argument("--heuristic-episodes", type=int, default=1000,
                   help="episodes of cfrkit's heuristic per setting for its row (cached in <out>/heuristic.json; 0: no row)")
    q.set_defaults(func=cmd_report)
    v = sub.add_parser("protocols", help="finished runs' actors under other evaluation protocols (no training)")
    v.add_argument("--out", default=OUT)
    v.add_argument("--settings", default="all")
    v.add_argument("--episodes", type=int, default=5000, help="episodes per protocol (stored: always 1,000)")
    v.add_argument("--min-episodes", type=int, default=1, help="only runs trained to at least this many episodes")
    v.add_argument("--save", default=None, help="JSON of every run's scores")
    v.add_argument("--threads", type=int, default=1)
    v.set_defaults(func=cmd_protocols)
    m = sub.add_parser("tom", help="theory-of-mind tests on the trained agents (best checkpoints)")
    m.add_argument("--models", default="ce,ee,oracle")
    m.add_argument("--tests", default="all", help="all, or a comma-separated subset of the test names")
    m.add_argument("--trials", type=int, default=100)
    m.add_argument("--train-episodes", type=int, default=1280, help="budget of the n=4, c=3 runs first_second needs")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--run-seed", type=int, default=0, help="which training seed's agents to test")
    m.add_argument("--sampled", action="store_true",
                   help="red samples its actions from the actor's distributions (default: greedy)")
    m.add_argument("--threads", type=int, default=1)
    m.add_argument("--out", default=OUT)
    m.set_defaults(func=cmd_tom)
    y = sub.add_parser("summary", help="issue 32's closing numbers as Markdown (completion, Table 1, "
                                       "differing cells, cost, ToM tests)")
    y.add_argument("--out", default=OUT)
    y.add_argument("--episodes", type=int, default=60_000, help="a run counts once it has trained this many episodes")
    y.add_argument("--seeds", type=int, default=3, help="seeds a (setting, model) cell needs to be complete")
    y.add_argument("--before", default=BEFORE,
                   help="results folder of the old per-step loop's runs for the before/after rates (none: skip)")
    y.add_argument("--heuristic-episodes", type=int, default=1000,
                   help="episodes of cfrkit's heuristic per setting (0: no row)")
    y.add_argument("--heuristic-cache", default=HEURISTIC_CACHE,
                   help="JSON caching the heuristic's rows (computed and written where missing)")
    y.add_argument("--no-random", dest="random", action="store_false", help="leave out the random policy's row")
    y.add_argument("--tom", default=None, help="folder of `tom` JSONs (tom_<model>[_s<seed>].json) to tabulate")
    y.add_argument("--plot", default=None, help="PNG of every setting's curves (the counted runs)")
    y.add_argument("--sampled-cells", default=SAMPLED_BACKFILL,
                   help="backfill-sampled's JSON for runs whose JSON lacks table_sampled (none: skip)")
    y.set_defaults(func=cmd_summary)
    k = sub.add_parser("backfill-sampled", help="sampled-action cells of finished runs whose JSON lacks them "
                                                "(evaluation only; written to --save, not into the runs' JSONs)")
    k.add_argument("--out", default=OUT)
    k.add_argument("--save", default=SAMPLED_BACKFILL)
    k.add_argument("--threads", type=int, default=1)
    k.set_defaults(func=cmd_backfill_sampled)
    args = p.parse_args(argv)
    script = sys.argv[0] if argv is None else os.path.relpath(os.path.abspath(__file__))
    args.command_line = " ".join(shlex.quote(a) for a in
                                 ["python", script, *(sys.argv[1:] if argv is None else argv)])
    for name in ("heuristic_episodes", "progress_every"):
        if getattr(args, name, 0) < 0:
            raise SystemExit(f"--{name.replace('_', '-')} must be >= 0")
    for name in ("eval_every", "eval_episodes", "final_episodes", "threads", "trials", "train_episodes", "seeds"):
        if getattr(args, name, 1) < 1:
            raise SystemExit(f"--{name.replace('_', '-')} must be >= 1")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
