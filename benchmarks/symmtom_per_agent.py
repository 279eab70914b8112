"""SymmToM 3/6/3: per-agent networks (and MADDPG's soft actions) against the table's shared networks.

Reads the ablation runs (``symmtom_ablation.py --set per_agent=1 [--set soft_actions=1]``, one JSON each)
and the stored 60,000-episode table runs of the same models (``symmtom_table1.py run``: shared actor and
critic, one-hot actions), and prints

* the final scores under ``symmtom_table1.PROTOCOLS`` (stored cell; best / last checkpoint, greedy /
  sampled actions on 5,000 held-out episodes) beside the table runs' (``protocols --save`` JSON), and
* the curves at equal episode counts: the best greedy evaluation so far, the mean of the last 5 greedy
  evaluations and of the last 5 training batches' (sampled actions) reward, at each of ``--at`` episodes
  (an unfinished ablation JSON is compared up to where it stopped).

    python benchmarks/symmtom_per_agent.py --runs benchmarks/results/symmtom_agents/ablation_*_s0.json
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "results", "symmtom_table1_60k")
PROTOCOLS_JSON = os.path.join(HERE, "results", "symmtom_why", "protocols_3_6_3.json")
PAPER_3_6_3 = {"maddpg": (40, 2), "rmaddpg": (39, 5), "ce": (36, 4), "ge": (37, 7), "ee": (41, 4), "oracle": (42, 7)}
KEYS = ("stored", "best_greedy_fresh", "last_greedy_fresh", "best_sampled_fresh", "last_sampled_fresh")


def at_episodes(curve: List[dict], episodes: int) -> Optional[Dict[str, float]]:
    """The curve up to ``episodes``: best greedy evaluation so far, mean of the last 5 greedy evaluations and
    of the last 5 training rewards; None when the curve has not reached ``episodes``."""
    upto = [p for p in curve if p["episodes"] <= episodes]
    if not upto or curve[-1]["episodes"] < episodes - 1024:
        return None
    last = upto[-5:]
    return {"best": max(p["eval_reward"] for p in upto),
            "last5": sum(p["eval_reward"] for p in last) / len(last),
            "train5": sum(p["train_reward"] for p in last) / len(last)}


def _label(run: dict) -> str:
    """``model`` then its overrides: per-agent, soft, other fields as ``name=value``."""
    o = dict(run.get("overrides", {}))
    words = (["per-agent"] if o.pop("per_agent", False) else []) + (["soft"] if o.pop("soft_actions", False) else [])
    return " ".join([run["model"]] + words + [f"{k}={v}" for k, v in o.items()])


def _mean_std(xs: List[float]) -> str:
    m = sum(xs) / len(xs)
    s = (sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5 if len(xs) > 1 else 0.0
    return f"{m:.1f} [{s:.1f}]"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", nargs="+", required=True, help="ablation JSONs (globs allowed)")
    p.add_argument("--table", default=TABLE, help="the table's run directory (read only)")
    p.add_argument("--protocols", default=PROTOCOLS_JSON, help="the table runs' protocol scores (protocols --save)")
    p.add_argument("--at", default="5120,10240,20480,30720,40960,60032", help="episode counts for the curves")
    args = p.parse_args(argv)
    files = sorted({f for pat in args.runs for f in glob.glob(pat)})
    runs = [json.load(open(f)) for f in files]
    prot = json.load(open(args.protocols))["runs"] if os.path.exists(args.protocols) else {}
    marks = [int(x) for x in args.at.split(",")]
    print("Final scores, 3/6/3 (reward per agent per episode; table runs: mean [std] over seeds 0/1/2)\n")
    print("| model | networks | episodes | " + " | ".join(KEYS) + " | paper | training CPU s |")
    print("|---|---|---:|" + "---:|" * len(KEYS) + "---:|---:|")
    for model in sorted({r["model"] for r in runs}):
        shared = [prot.get(f"{model}_n3_w6_c3_s{s}") for s in range(3)]
        shared = [x for x in shared if x]
        table = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(args.table, f"{model}_n3_w6_c3_s*.json")))]
        if shared:
            cells = " | ".join(_mean_std([x[k] for x in shared]) for k in KEYS)
            cpu = _mean_std([t["cpu_seconds"] for t in table]) if table else "-"
            print(f"| {model} | shared (table, {len(shared)} seeds) | 60032 | {cells} | {PAPER_3_6_3[model][0]} "
                  f"[{PAPER_3_6_3[model][1]}] | {cpu} |")
        if shared and table:
            s0 = prot.get(f"{model}_n3_w6_c3_s0")
            print(f"| {model} | shared, seed 0 | 60032 | " + " | ".join(f"{s0[k]:.1f}" for k in KEYS)
                  + f" | | {table[0]['cpu_seconds']:.0f} |")
        for r in (r for r in runs if r["model"] == model):
            sc = r.get("scores")
            cells = " | ".join(f"{sc[k]:.1f}" for k in KEYS) if sc else " | ".join("-" for _ in KEYS)
            print(f"| {model} | {_label(r)[len(model) + 1:]}, seed {r['seed']}{'' if r.get('finished', True) else ' (unfinished)'} "
                  f"| {r['episodes']} | {cells} | | {r['cpu_seconds']:.0f} |")
    print("\nCurves at equal episodes: best greedy so far / mean of the last 5 greedy evaluations / mean of the last 5 "
          "training rewards (sampled actions)\n")
    print("| run | " + " | ".join(str(m) for m in marks) + " |")
    print("|---|" + "---|" * len(marks))
    for model in sorted({r["model"] for r in runs}):
        for s in range(3):
            path = os.path.join(args.table, f"{model}_n3_w6_c3_s{s}.json")
            if os.path.exists(path):
                c = json.load(open(path))["curve"]
                row = [at_episodes(c, m) for m in marks]
                print(f"| {model} shared s{s} | " + " | ".join(
                    f"{x['best']:.1f} / {x['last5']:.1f} / {x['train5']:.1f}" if x else "-" for x in row) + " |")
        for r in (r for r in runs if r["model"] == model):
            row = [at_episodes(r["curve"], m) for m in marks]
            print(f"| {_label(r)} s{r['seed']} | " + " | ".join(
                f"{x['best']:.1f} / {x['last5']:.1f} / {x['train5']:.1f}" if x else "-" for x in row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
