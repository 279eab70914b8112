"""CPU seconds per 1,000 training episodes of a stacked SymmToM run, one checkout against another.

For each (variant, setting) and each checkout, a fresh process (``PYTHONPATH`` = the checkout) builds
3 stacked seeds (``StackedSeeds``, as ``symmtom_table1.py run --stack-seeds``), fills each replay to
the warm-up with exploring episodes, then times (``time.process_time``, one torch thread) stacked
gradient steps, exploring 128-episode batches (``play(..., store=True)``) and the 200-episode greedy
evaluation, and projects the CPU seconds per 1,000 episodes per seed as a run spends them: 1000/128
batches, 250 gradient steps shared by the 3 seeds, an evaluation every 8 iterations.  Checkouts are
interleaved (round by round), so both see the same load; the table prints medians and the ratio.

    python benchmarks/symmtom_speed4.py --before /tmp/main --after . --variants maddpg,ce --settings 4/12/12
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CHILD = r'''
import json, os, sys, time, statistics
import torch
from cfrkit.agents.symmtom.learning import MADDPGSettings, make_trainer
from cfrkit.agents.symmtom.learning.stacked import StackedSeeds
from cfrkit.games.symmtom import SymmToMConfig
torch.set_num_threads(1)
variant, setting, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
n, w, c = map(int, setting.split("/"))
cfg = SymmToMConfig(agents=n, width=w, pieces=c)
g = StackedSeeds.create(lambda st: make_trainer(cfg, st, "cpu"), [MADDPGSettings(variant=variant, seed=s) for s in range(3)])
for s, t in enumerate(g.trainers):
    while len(t.replay) < min(t.settings.warmup, t.settings.buffer):
        g.run_for_seed(s, t.play, t.settings.num_envs, 1000 + t.iteration, False, True)
        t.iteration += 1
g.update()
ups, plays = [], []
for r in range(3):
    c0 = time.process_time()
    for _ in range(steps):
        g.update()
    ups.append((time.process_time() - c0) / steps)
    c0 = time.process_time()
    for s, t in enumerate(g.trainers):
        g.run_for_seed(s, t.play, 128, 77 + r, False, True)
    plays.append((time.process_time() - c0) / 3)
c0 = time.process_time()
g.run_for_seed(0, g.trainers[0].evaluate, 200, 0)
ev = time.process_time() - c0
up, pl = statistics.median(ups), statistics.median(plays)
print(json.dumps({"update_ms": 1e3 * up, "play_ms": 1e3 * pl, "eval200_ms": 1e3 * ev,
                  "per1000": 1000 / 128 * pl + 250 * up / 3 + 1000 / 1024 * ev}))
'''


def measure(checkout: str, variant: str, setting: str, steps: int) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(checkout))
    out = subprocess.run([sys.executable, "-c", CHILD, variant, setting, str(steps)], env=env, cwd="/tmp",
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--before", required=True, help="checkout of the reference (e.g. an export of main)")
    p.add_argument("--after", default=".", help="checkout measured against it")
    p.add_argument("--variants", default="maddpg,rmaddpg,ce,ge,ee,oracle")
    p.add_argument("--settings", default="3/12/3,4/12/12")
    p.add_argument("--steps", type=int, default=15, help="gradient steps per timed round (3 rounds)")
    p.add_argument("--rounds", type=int, default=1, help="before/after pairs per (variant, setting)")
    args = p.parse_args(argv)
    print(f"load average at start {os.getloadavg()[0]:.1f}", flush=True)
    print("| setting | variant | before: step (3 seeds) ms | after | before: play 128 ms | after "
          "| before: CPU s / 1,000 ep / seed | after | speed-up |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for setting in args.settings.split(","):
        for v in args.variants.split(","):
            res = {"before": [], "after": []}
            for r in range(args.rounds):
                order = ("before", "after") if r % 2 == 0 else ("after", "before")
                for k in order:
                    res[k].append(measure(getattr(args, k), v, setting, args.steps))
            med = {k: {f: sorted(x[f] for x in xs)[len(xs) // 2] for f in xs[0]} for k, xs in res.items()}
            b, a = med["before"], med["after"]
            print(f"| {setting} | {v} | {b['update_ms']:.1f} | {a['update_ms']:.1f} | {b['play_ms']:.0f} | "
                  f"{a['play_ms']:.0f} | {b['per1000']:.2f} | {a['per1000']:.2f} | {b['per1000'] / a['per1000']:.2f}x |",
                  flush=True)
    print(f"load average at end {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
