"""Training speed of the SymmToM MADDPG family: episodes per CPU second (one torch thread, one core).

Each variant trains with its trainer's default settings (``MADDPGSettings(variant=...)``) in one
setting; the replay is first filled to the warm-up size (not timed), then iterations are timed
until at least ``--episodes`` more episodes are played (updates included, evaluation excluded).
CPU seconds are ``time.process_time`` of this process, so the rate is per core even on a loaded
machine (a loaded machine still slows it through shared caches; say so when reporting).

    python benchmarks/symmtom_learner_speed.py --setting 3/6/3 --episodes 2000
    python benchmarks/symmtom_learner_speed.py --setting all --split 30   # every Table 1 setting, quickly
    python benchmarks/symmtom_learner_speed.py --split 30 --variants maddpg,ce,ge --per-agent   # per-agent networks
    PYTHONPATH=/path/to/other/checkout python benchmarks/symmtom_learner_speed.py ...   # another version
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import torch

from cfrkit.agents.symmtom.learning import MADDPGSettings, make_trainer
from cfrkit.games.symmtom import SymmToMConfig

VARIANTS = ("maddpg", "rmaddpg", "ce", "ge", "ee", "oracle")


def measure(variant: str, n: int, w: int, c: int, episodes: int, **overrides) -> dict:
    """Steady-state training rate of one variant: episodes and CPU seconds after the warm-up
    (``overrides``: ``MADDPGSettings`` fields other than the defaults)."""
    cfg = SymmToMConfig(agents=n, width=w, pieces=c)
    settings = MADDPGSettings(variant=variant, **overrides)
    t = make_trainer(cfg, settings, "cpu")
    warm = min(settings.warmup, settings.buffer)
    while len(t.replay) < warm:
        t.iterate()
    e0, c0, w0 = t.episodes, time.process_time(), time.perf_counter()
    while t.episodes - e0 < episodes:
        t.iterate()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    played = t.episodes - e0
    return {"variant": variant, "setting": f"{n}/{w}/{c}", "episodes": played, "cpu_seconds": round(cpu, 2),
            "wall_seconds": round(wall, 2), "episodes_per_cpu_second": round(played / cpu, 1),
            "projected_cpu_minutes_60000": round(60000 / (played / cpu) / 60, 1), **overrides}


def measure_split(variant: str, n: int, w: int, c: int, updates: int = 30, **overrides) -> dict:
    """A quick projection: CPU ms of acting per episode (one 128-episode batch, stored, after the
    warm-up fill) and per gradient step (``updates`` steps after 3 untimed ones), combined at the
    settings' rate of one step per ``update_every`` joint steps into CPU minutes per 60,000 episodes
    (evaluation excluded).  Seconds per variant instead of minutes; noisier than :func:`measure`."""
    cfg = SymmToMConfig(agents=n, width=w, pieces=c)
    t = make_trainer(cfg, MADDPGSettings(variant=variant, **overrides), "cpu")
    s, L = t.settings, cfg.episode_length
    play = 0.0
    while len(t.replay) < min(s.warmup, s.buffer):
        c0 = time.process_time()
        t.play(s.num_envs, 1000 + t.iteration, greedy=False, store=True)
        play = (time.process_time() - c0) / s.num_envs
        t.iteration += 1
    for _ in range(3):
        t.update()
    c0 = time.process_time()
    for _ in range(updates):
        t.update()
    update = (time.process_time() - c0) / updates
    per_episode = play + update * L / s.update_every
    return {"variant": variant, "setting": f"{n}/{w}/{c}", "play_ms_per_episode": round(1e3 * play, 3),
            "update_ms": round(1e3 * update, 2), "episodes_per_cpu_second": round(1 / per_episode, 1),
            "projected_cpu_minutes_60000": round(60000 * per_episode / 60, 2), **overrides}


SETTINGS = tuple((n, w, k * n) for n in (3, 4) for w in (6, 12) for k in (1, 2, 3))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--setting", default="3/6/3", help="n/w/c, or all (Table 1's 12 settings)")
    p.add_argument("--split", type=int, default=0,
                   help="quick mode: time acting and this many gradient steps apart and project (measure_split)")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--episodes", type=int, default=2000, help="timed episodes per variant (after the warm-up)")
    p.add_argument("--update-every", type=int, default=None,
                   help="joint steps per gradient step (default: the settings' 100); e.g. 192 for the earlier "
                        "loop's rate at w = 12 (10 updates per 32 episodes of 60 steps)")
    p.add_argument("--per-agent", action="store_true",
                   help="one actor and critic per agent (MADDPGSettings.per_agent; feed-forward variants)")
    p.add_argument("--json", default=None, help="also append one JSON line per variant to this file")
    args = p.parse_args(argv)
    try:
        settings = list(SETTINGS) if args.setting == "all" else [tuple(int(x) for x in args.setting.split("/"))]
        if any(len(x) != 3 for x in settings):
            raise ValueError
    except ValueError:
        raise SystemExit(f"--setting: expected n/w/c like 3/6/3 or all, got {args.setting!r}") from None
    if args.episodes < 1 or args.split < 0:
        raise SystemExit("--episodes must be >= 1 and --split >= 0")
    torch.set_num_threads(1)
    overrides = {} if args.update_every is None else {"update_every": args.update_every}
    if overrides and not hasattr(MADDPGSettings(), "update_every"):
        raise SystemExit("--update-every: this checkout's MADDPGSettings has no update_every")
    if args.per_agent:
        if not hasattr(MADDPGSettings(), "per_agent"):
            raise SystemExit("--per-agent: this checkout's MADDPGSettings has no per_agent")
        overrides["per_agent"] = True
    for (n, w, c) in settings:
        for v in args.variants.split(","):
            r = (measure_split(v, n, w, c, args.split, **overrides) if args.split
                 else measure(v, n, w, c, args.episodes, **overrides))
            print(json.dumps(r), flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
