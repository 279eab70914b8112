"""CPU seconds per iteration of a stacked SymmToM run (3 seeds, ``symmtom_table1.py run --stack-seeds``), one
checkout's gradient step against another's, alternated in one process.

One process of this checkout (``PYTHONPATH`` = ``--after``) builds 3 stacked seeds of (variant, setting) with the
table's settings, fills each replay to the warm-up, and loads the ``--before`` checkout's ``stacked.py`` and
``flat.py`` beside its own as separate modules (the before ``StackedSeeds.update`` calling the before
``step_grads``).  The two updates then run on the same group alternately (``--steps`` stacked steps each,
``--rounds`` rounds, order swapped every round), timed with ``time.process_time`` (one torch thread); medians.
Acting (one seed's 128 exploring episodes) and the 200-episode greedy evaluation are timed once per round (the
same code on both sides).  The projection: an iteration of the 3 seeds = 3 plays + its stacked gradient steps
(128 x episode length / 100), plus an evaluation of each seed every 8 iterations.

    PYTHONPATH=. python benchmarks/symmtom_speed5.py --before /tmp/main_export --settings 4/12/8
"""
from __future__ import annotations

import argparse
import os
import sys

CHILD = r'''
import importlib.util, json, os, statistics, sys, time
import torch
from cfrkit.agents.symmtom.learning import MADDPGSettings, make_trainer
from cfrkit.agents.symmtom.learning.stacked import StackedSeeds
from cfrkit.games.symmtom import SymmToMConfig
before, variant, setting, steps, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
torch.set_num_threads(1)

def load(name, rel):
    spec = importlib.util.spec_from_file_location(name, os.path.join(before, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

old_flat = load("before_flat", "cfrkit/agents/symmtom/learning/flat.py")
old_stacked = load("before_stacked", "cfrkit/agents/symmtom/learning/stacked.py")
old_stacked.step_grads = old_flat.step_grads
n, w, c = map(int, setting.split("/"))
cfg = SymmToMConfig(agents=n, width=w, pieces=c)
g = StackedSeeds.create(lambda st: make_trainer(cfg, st, "cpu"), [MADDPGSettings(variant=variant, seed=s) for s in range(3)])
g.fill_warmup()
fns = {"before": lambda: old_stacked.StackedSeeds.update(g), "after": g.update}
for f in fns.values():
    f()
up = {"before": [], "after": []}
pl, ev = [], []
for r in range(rounds):
    for k in (("before", "after") if r % 2 == 0 else ("after", "before")):
        c0 = time.process_time()
        for _ in range(steps):
            fns[k]()
        up[k].append((time.process_time() - c0) / steps)
    t = g.trainers[r % 3]
    c0 = time.process_time()
    g.run_for_seed(r % 3, t.play, t.settings.num_envs, 77 + r, False, True)
    pl.append(time.process_time() - c0)
    if r < 2:
        c0 = time.process_time()
        g.run_for_seed(0, g.trainers[0].evaluate, 200, r)
        ev.append(time.process_time() - c0)
t0 = g.trainers[0]
due = t0.settings.num_envs * cfg.episode_length / t0.settings.update_every
p, e = statistics.median(pl), statistics.median(ev)
out = {"updates_per_iteration": due, "play_ms": 1e3 * p, "eval200_ms": 1e3 * e}
for k in ("before", "after"):
    u = statistics.median(up[k])
    it = 3 * p + due * u + 3 * e / 8
    out[k] = {"step_ms": 1e3 * u, "iteration_s": it, "per1000": it / 3 * 1000 / t0.settings.num_envs}
print(json.dumps(out))
'''


def measure(before: str, after: str, variant: str, setting: str, steps: int, rounds: int) -> dict:
    from symmtom_speed4 import (
        run_ab_child,  # same directory (sys.path[0] when run as a script)
    )
    return run_ab_child(CHILD, before, after, variant, setting, steps, rounds)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--before", required=True, help="checkout of the reference (e.g. an export of main)")
    p.add_argument("--after", default=".", help="checkout measured against it")
    p.add_argument("--variants", default="maddpg,rmaddpg,ce,ge,ee,oracle")
    p.add_argument("--settings", default="4/12/8")
    p.add_argument("--steps", type=int, default=10, help="stacked gradient steps per timed block")
    p.add_argument("--rounds", type=int, default=6, help="before/after pairs per (variant, setting)")
    args = p.parse_args(argv)
    print(f"load average at start {os.getloadavg()[0]:.1f}", flush=True)
    print("| setting | variant | step (3 seeds), before ms | after | play 128 ms | eval 200 ms "
          "| CPU s / iteration (3 seeds), before | after | speed-up |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for setting in args.settings.split(","):
        for v in args.variants.split(","):
            r = measure(args.before, args.after, v, setting, args.steps, args.rounds)
            b, a = r["before"], r["after"]
            print(f"| {setting} | {v} | {b['step_ms']:.1f} | {a['step_ms']:.1f} | {r['play_ms']:.0f} | "
                  f"{r['eval200_ms']:.0f} | {b['iteration_s']:.3f} | {a['iteration_s']:.3f} | "
                  f"{b['iteration_s'] / a['iteration_s']:.3f}x |", flush=True)
    print(f"load average at end {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
