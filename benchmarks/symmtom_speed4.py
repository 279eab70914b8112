"""CPU seconds per 1,000 training episodes of a stacked SymmToM run, one checkout against another.

For each (variant, setting) and each checkout, a fresh process (``PYTHONPATH`` = the checkout) builds
3 stacked seeds (``StackedSeeds``, as ``symmtom_table1.py run --stack-seeds``), fills each replay to
the warm-up with exploring episodes, then times (``time.process_time``, one torch thread) stacked
gradient steps, exploring 128-episode batches (``play(..., store=True)``) and the 200-episode greedy
evaluation, and projects the CPU seconds per 1,000 episodes per seed as a run spends them: 1000/128
batches, 250 gradient steps shared by the 3 seeds, an evaluation every 8 iterations.  Checkouts are
interleaved (round by round), so both see the same load; the table prints medians and the ratio.

    python benchmarks/symmtom_speed4.py --before /tmp/main --after . --variants maddpg,ce --settings 4/12/12

``--inprocess`` (steadier on a loaded machine): one process of this checkout; the ``--before``
checkout's ``stacked.py`` (and ``estimated.py``'s event function) loaded beside it as a separate
module, the two ``StackedSeeds.update`` run on the same group alternately (``--steps`` steps each,
``--rounds`` rounds), medians; acting and evaluation timed with each one's event function (only
MADDPG-EE's acting changed).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

# both children build the same group of 3 stacked seeds of (variant, setting), their replays filled to the warm-up
# (StackedSeeds.fill_warmup written out: the children also run older checkouts, which lack that method)
WARMED_GROUP = r'''
n, w, c = map(int, setting.split("/"))
cfg = SymmToMConfig(agents=n, width=w, pieces=c)
g = StackedSeeds.create(lambda st: make_trainer(cfg, st, "cpu"), [MADDPGSettings(variant=variant, seed=s) for s in range(3)])
for s, t in enumerate(g.trainers):
    while len(t.replay) < min(t.settings.warmup, t.settings.buffer):
        g.run_for_seed(s, t.play, t.settings.num_envs, 1000 + t.iteration, False, True)
        t.iteration += 1
'''

CHILD = r'''
import json, os, sys, time, statistics
import torch
from cfrkit.agents.symmtom.learning import MADDPGSettings, make_trainer
from cfrkit.agents.symmtom.learning.stacked import StackedSeeds
from cfrkit.games.symmtom import SymmToMConfig
torch.set_num_threads(1)
variant, setting, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
%WARMED_GROUP%
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
'''.replace("%WARMED_GROUP%\n", WARMED_GROUP)


def measure(checkout: str, variant: str, setting: str, steps: int) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(checkout))
    out = subprocess.run([sys.executable, "-c", CHILD, variant, setting, str(steps)], env=env, cwd="/tmp",
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


INPROCESS = r'''
import importlib.util, json, os, statistics, sys, time
import torch
import cfrkit.agents.symmtom.learning.estimated as est
from cfrkit.agents.symmtom.learning import MADDPGSettings, make_trainer
from cfrkit.agents.symmtom.learning.stacked import StackedSeeds
from cfrkit.games.symmtom import SymmToMConfig
before, variant, setting, steps, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])

def load(name, rel):
    spec = importlib.util.spec_from_file_location(name, os.path.join(before, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

old_stacked = load("before_stacked", "cfrkit/agents/symmtom/learning/stacked.py")
old_events = load("before_estimated", "cfrkit/agents/symmtom/learning/estimated.py")._events
new_events = est._events
torch.set_num_threads(1)
%WARMED_GROUP%
fns = {"before": lambda: old_stacked.StackedSeeds.update(g), "after": g.update}
evs = {"before": old_events, "after": new_events}
for f in fns.values():
    f()
up = {"before": [], "after": []}
pl = {"before": [], "after": []}
ev = {"before": [], "after": []}
for r in range(rounds):
    for k in (("before", "after") if r % 2 == 0 else ("after", "before")):
        c0 = time.process_time()
        for _ in range(steps):
            fns[k]()
        up[k].append((time.process_time() - c0) / steps)
        est._events = evs[k]
        t = g.trainers[r % 3]
        c0 = time.process_time()
        g.run_for_seed(r % 3, t.play, 128, 77 + r, False, True)
        pl[k].append(time.process_time() - c0)
        if r < 2:
            c0 = time.process_time()
            g.run_for_seed(0, g.trainers[0].evaluate, 200, r)
            ev[k].append(time.process_time() - c0)
        est._events = new_events
out = {}
for k in ("before", "after"):
    u, p, e = statistics.median(up[k]), statistics.median(pl[k]), statistics.median(ev[k])
    out[k] = {"update_ms": 1e3 * u, "play_ms": 1e3 * p, "eval200_ms": 1e3 * e,
              "per1000": 1000 / 128 * p + 250 * u / 3 + 1000 / 1024 * e}
print(json.dumps(out))
'''.replace("%WARMED_GROUP%\n", WARMED_GROUP)


def run_ab_child(code: str, before: str, after: str, *args) -> dict:
    """Run the A/B child script ``code`` with ``after`` on PYTHONPATH and ``before``'s path as its first argument
    (then ``args``); return the JSON of its last output line."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(after))
    out = subprocess.run([sys.executable, "-c", code, os.path.abspath(before), *map(str, args)], env=env, cwd="/tmp",
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_inprocess(before: str, after: str, variant: str, setting: str, steps: int, rounds: int) -> dict:
    return run_ab_child(INPROCESS, before, after, variant, setting, steps, rounds)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--before", required=True, help="checkout of the reference (e.g. an export of main)")
    p.add_argument("--after", default=".", help="checkout measured against it")
    p.add_argument("--variants", default="maddpg,rmaddpg,ce,ge,ee,oracle")
    p.add_argument("--settings", default="3/12/3,4/12/12")
    p.add_argument("--steps", type=int, default=15, help="gradient steps per timed round (3 rounds)")
    p.add_argument("--rounds", type=int, default=1, help="before/after pairs per (variant, setting)")
    p.add_argument("--inprocess", action="store_true", help="both updates alternated in one process (see above)")
    args = p.parse_args(argv)
    print(f"load average at start {os.getloadavg()[0]:.1f}", flush=True)
    print("| setting | variant | before: step (3 seeds) ms | after | before: play 128 ms | after "
          "| before: CPU s / 1,000 ep / seed | after | speed-up |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for setting in args.settings.split(","):
        for v in args.variants.split(","):
            res = {"before": [], "after": []}
            if args.inprocess:
                r = measure_inprocess(args.before, args.after, v, setting, args.steps, max(args.rounds, 2))
                res = {k: [r[k]] for k in res}
            for r in range(0 if args.inprocess else args.rounds):
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
