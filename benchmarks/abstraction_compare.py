"""E[HS], histogram-EMD and potential-aware card abstractions at equal size on real hold'em (issue 28).

    python benchmarks/abstraction_compare.py --out /work/runs/abscmp --buckets 169,200,200,200 --bets rich \\
        --cpu-minutes 120 --deals 20000 --lbr-deals 2000
    python benchmarks/abstraction_compare.py --out /tmp/abscmp_smoke --smoke        # minutes: the whole pipeline
    python benchmarks/abstraction_compare.py --out DIR --stages eval ...             # one stage (resumes)

Johanson et al. (2013) found potential-aware and distribution-aware (histogram-EMD) buckets less exploitable
than E[HS] buckets of equal size; this driver asks the question on real heads-up no-limit hold'em.  Three card
abstractions with the same bucket counts and the same river (``--river-feature``, default E[HS]: only the
flop and turn features differ) are built with ``cfrkit abstraction build``:

======  =======================================  =========================================================
name    features (preflop, flop, turn, river)    flop / turn buckets from
======  =======================================  =========================================================
ehs     lossless, ehs, ehs, RIVER                E[HS] against a uniform opponent (k-means on one number)
hist    lossless, hist-emd, hist-emd, RIVER      histograms of next-round strength, EMD k-means
pa      lossless, pa-emd, hist-emd, RIVER        flop: distributions over turn buckets, EMD with ground
                                                 distances between turn centres (cfrkit's default scheme)
======  =======================================  =========================================================

Stages (each resumes where it stopped; state and results in ``OUT/state.json``):

* ``build``: ``OUT/abs_NAME`` (the build resumes itself); CPU seconds of each build (``getrusage`` of the
  child).
* ``train``: ``cfrkit blueprint train OUT/bp_NAME.npz --algorithm pluribus --abstraction emd:OUT/abs_NAME``
  with the same ``--bets``, seed, threads and ``--cpu-minutes`` budget (process CPU of training, counted
  across resumes), checkpoints every ``--checkpoint-minutes``; SIGTERM saves, rerunning resumes.
* ``eval``: the three pairs play duplicate matches with AIVAT (``cfrkit.evaluation.ladder.play_block``) in
  blocks of ``--block`` deals (``OUT/eval/A-B/FIRST.npz``, each block kept: an interrupted stage loses at most a
  block), then LBR against each blueprint in ``--lbr-settings`` (``run_lbr`` with its own checkpoint file per
  cell).  Results: mbb/hand of the first-named with 95% intervals; LBR mbb/g that LBR wins.

``--smoke`` shrinks everything (buckets 169,8,8,8, river stored as centres so no 4.9 GB river table is
written, 1,000 k-means samples, 0.2 CPU minutes of training, 40 deals, LBR FCPA/3-4 over 10 deals) to check
the pipeline end to end in minutes; its numbers mean nothing.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

KINDS = {"ehs": ("ehs", "ehs"), "hist": ("hist-emd", "hist-emd"), "pa": ("pa-emd", "hist-emd")}
STAGES = ("build", "train", "eval")


def features(kind: str, river: str) -> str:
    """The ``--features`` string of abstraction ``kind``."""
    flop, turn = KINDS[kind]
    return f"lossless,{flop},{turn},{river}"


class State:
    """``OUT/state.json``: what each stage has done (written atomically after every step)."""

    def __init__(self, out: str):
        self.path = os.path.join(out, "state.json")
        self.data = {"builds": {}, "training": {}, "pairs": {}, "lbr": {}}
        if os.path.exists(self.path):
            with open(self.path) as f:
                self.data.update(json.load(f))

    def save(self) -> None:
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1)
        os.replace(tmp, self.path)


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(cmd, log_path: str) -> float:
    """Run ``cmd`` (appending its output to ``log_path``); returns its CPU seconds; exits on failure."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    c0 = _child_cpu()
    print("$ " + " ".join(cmd), flush=True)
    with open(log_path, "a") as log:
        rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    if rc != 0:
        sys.exit(f"command failed with exit code {rc} (log: {log_path}): {' '.join(cmd)}")
    return _child_cpu() - c0


def stage_build(args, state: State) -> None:
    from cfrkit.abstraction import load_abstraction
    from cfrkit.abstraction.errors import AbstractionError

    for kind in args.kinds:
        out = os.path.join(args.out, f"abs_{kind}")
        try:
            load_abstraction(out, verify=False)
            if kind in state.data["builds"]:
                print(f"build {kind}: done ({out})")
                continue
        except AbstractionError:
            pass
        w0 = time.perf_counter()
        cpu = _run([sys.executable, "-m", "cfrkit", "abstraction", "build", "--buckets", args.buckets, "--features",
                    features(kind, args.river_feature), "--out", out, "--workers", str(args.workers), "--sample",
                    str(args.sample), "--seed", str(args.seed), "--river-storage", args.river_storage,
                    "--no-progress"], os.path.join(args.out, f"build_{kind}.log"))
        prev = state.data["builds"].get(kind, {})
        state.data["builds"][kind] = {"features": features(kind, args.river_feature), "dir": out,
                                      "cpu_s": prev.get("cpu_s", 0.0) + cpu,
                                      "wall_s": prev.get("wall_s", 0.0) + time.perf_counter() - w0}
        state.save()
        print(f"build {kind}: {cpu:.0f} CPU s", flush=True)


def stage_train(args, state: State) -> None:
    from cfrkit.solvers.blueprint.trainer import read_checkpoint

    for kind in args.kinds:
        path = os.path.join(args.out, f"bp_{kind}.npz")
        cmd = [sys.executable, "-m", "cfrkit", "blueprint", "train", path, "--cpu-minutes", str(args.cpu_minutes),
               "--checkpoint-minutes", str(args.checkpoint_minutes), "--threads", str(args.threads), "--no-progress"]
        if not os.path.exists(path):
            cmd += ["--algorithm", "pluribus", "--abstraction", f"emd:{os.path.join(args.out, f'abs_{kind}')}",
                    "--bets", args.bets, "--seed", str(args.seed)]
        _run(cmd, os.path.join(args.out, f"train_{kind}.log"))
        header, _ = read_checkpoint(path, arrays=())
        state.data["training"][kind] = {"file": path, "iterations": header["iterations"],
                                        "cpu_s": header.get("cpu_seconds"), "wall_s": header["seconds"],
                                        "nodes": header["nodes"], "bets": header["bets"]}
        state.save()
        print(f"train {kind}: {header['iterations']:,} iterations, {header.get('cpu_seconds', 0):.0f} CPU s",
              flush=True)


def stage_eval(args, state: State) -> None:
    from cfrkit.agents.blueprint import BlueprintAgent
    from cfrkit.evaluation.ladder import pair_result, play_block, supports_aivat
    from cfrkit.evaluation.lbr import run_lbr, settings_from
    from cfrkit.games.registry import load
    from cfrkit.solvers.blueprint.strategy import BlueprintStrategy
    from cfrkit.solvers.blueprint.trainer import read_checkpoint

    files = {k: os.path.join(args.out, f"bp_{k}.npz") for k in args.kinds}
    header, _ = read_checkpoint(files[args.kinds[0]], arrays=())
    game = load(header["game"])
    strategies = {k: BlueprintStrategy.load(f) for k, f in files.items()}
    for a, b in itertools.combinations(args.kinds, 2):
        folder = os.path.join(args.out, "eval", f"{a}-{b}")
        os.makedirs(folder, exist_ok=True)
        dup, av = [], []
        for first in range(0, args.deals, args.block):
            n = min(args.block, args.deals - first)
            block_path = os.path.join(folder, f"{first:08d}.npz")
            if not os.path.exists(block_path):
                agent_a = BlueprintAgent(strategies[a], seed=args.seed + 1)
                agent_b = BlueprintAgent(strategies[b], seed=args.seed + 2)
                aivat = supports_aivat(agent_a) and supports_aivat(agent_b)
                blk = play_block(game, agent_a, agent_b, first, n, args.seed + 7, aivat=aivat)
                tmp = block_path + ".tmp.npz"
                np.savez(tmp, duplicate=blk.duplicate, aivat=blk.aivat if blk.aivat is not None else np.zeros(0),
                         cpu_s=blk.cpu_seconds)
                os.replace(tmp, block_path)
                print(f"{a} vs {b}: deals {first}..{first + n - 1} ({blk.cpu_seconds:.0f} CPU s)", flush=True)
            with np.load(block_path) as z:
                dup.append(z["duplicate"])
                av.append(z["aivat"])
        aivat = np.concatenate(av) if all(x.size for x in av) else None
        pr = pair_result(a, b, np.concatenate(dup), aivat)
        state.data["pairs"][f"{a}-{b}"] = pr.to_dict()
        state.save()
        print(f"{a} vs {b}: {pr.estimate.mean:+.0f} +- {pr.estimate.ci95:.0f} mbb/h ({pr.estimator}, {pr.deals} deals)",
              flush=True)
    lbr_dir = os.path.join(args.out, "lbr")
    os.makedirs(lbr_dir, exist_ok=True)
    for setting in [s for s in args.lbr_settings.split(",") if s]:
        bets, _, rounds = setting.partition("/")
        for k in args.kinds:
            key = f"{k} {setting}"
            done = state.data["lbr"].get(key)
            if done and done["deals"] >= args.lbr_deals:
                continue
            c0, w0 = time.process_time() + _child_cpu(), time.perf_counter()
            res = run_lbr(BlueprintAgent(strategies[k], seed=args.seed + 3), game, args.lbr_deals,
                          settings_from(bets, rounds or "1-4"), seed=args.seed + 11, processes=args.processes,
                          checkpoint=os.path.join(lbr_dir, f"{k}_{setting.replace('/', '_')}.npz"))
            # cpu_s counts LBR's worker processes only once they have exited; wall_s is the steadier bound
            state.data["lbr"][key] = dict(res.to_dict(), cpu_s=time.process_time() + _child_cpu() - c0,
                                          wall_s=time.perf_counter() - w0)
            state.save()
            print(f"LBR {setting} vs {k}: {res.mbb_per_game:+.0f} +- {res.ci95:.0f} mbb/g ({res.deals} deals)",
                  flush=True)


def report(state: State) -> None:
    d = state.data
    for k, v in d["builds"].items():
        print(f"build {k} ({v['features']}): {v['cpu_s']:.0f} CPU s, {v['wall_s']:.0f} wall s")
    for k, v in d["training"].items():
        print(f"blueprint {k}: {v['iterations']:,} iterations, {v['cpu_s']:.0f} CPU s ({v['bets']})")
    for k, v in d["pairs"].items():
        e = v["estimate"]
        print(f"{v['a']} vs {v['b']}: {e['mean']:+.0f} +- {e['ci95']:.0f} mbb/h ({v['estimator']}, {v['deals']} deals; "
              f"duplicate {v['duplicate']['mean']:+.0f} +- {v['duplicate']['ci95']:.0f})")
    for k, v in d["lbr"].items():
        print(f"LBR {k}: {v['mbb_per_game']:+.0f} +- {v['ci95']:.0f} mbb/g ({v['deals']} deals, {v['cpu_s']:.0f} CPU s)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="working directory (abstractions, blueprints, results)")
    ap.add_argument("--stages", default=",".join(STAGES), help="comma-separated stages to run (default: all)")
    ap.add_argument("--kinds", default="ehs,hist,pa", help="abstractions to compare (of ehs, hist, pa)")
    ap.add_argument("--buckets", default="169,200,200,200")
    ap.add_argument("--river-feature", default="ehs", choices=("ehs", "ochs"),
                    help="the river's feature, the same in every abstraction (default ehs)")
    ap.add_argument("--river-storage", default="table", choices=("table", "centres"),
                    help="table (4.9 GB per abstraction; lookups in the trainer's kernel) or centres")
    ap.add_argument("--sample", type=int, default=200_000, help="hands per round for k-means")
    ap.add_argument("--workers", type=int, default=2, help="build processes")
    ap.add_argument("--bets", default="rich", help="action abstraction of every blueprint")
    ap.add_argument("--cpu-minutes", type=float, default=120.0, help="training budget per blueprint (CPU minutes)")
    ap.add_argument("--threads", type=int, default=1, help="training threads")
    ap.add_argument("--checkpoint-minutes", type=float, default=10.0)
    ap.add_argument("--deals", type=int, default=20_000, help="duplicate deals per pair")
    ap.add_argument("--block", type=int, default=1000, help="deals per saved block")
    ap.add_argument("--lbr-settings", default="FC/1-4,FC/3-4,FCPA/1-4,FCPA/3-4")
    ap.add_argument("--lbr-deals", type=int, default=2000)
    ap.add_argument("--processes", type=int, default=2, help="LBR worker processes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: the pipeline end to end in minutes")
    args = ap.parse_args(argv)
    if args.smoke:
        args.buckets, args.river_storage, args.sample, args.cpu_minutes = "169,8,8,8", "centres", 1000, 0.2
        args.deals, args.block, args.lbr_settings, args.lbr_deals = 40, 20, "FCPA/3-4", 10
        args.bets = "0.5+1@1"
    args.kinds = [k for k in args.kinds.split(",") if k]
    bad = [k for k in args.kinds if k not in KINDS] + [s for s in args.stages.split(",") if s not in STAGES]
    if bad or len(args.kinds) < 2:
        ap.error(f"unknown kinds or stages {bad}; kinds: {', '.join(KINDS)} (two or more), stages: {', '.join(STAGES)}")
    os.makedirs(args.out, exist_ok=True)
    state = State(args.out)
    state.data["settings"] = {k: v for k, v in vars(args).items()}
    state.save()
    for stage, fn in (("build", stage_build), ("train", stage_train), ("eval", stage_eval)):
        if stage in args.stages.split(","):
            fn(args, state)
    report(state)


if __name__ == "__main__":
    main()
