"""Fingerprints of stacked SymmToM training, to show that a faster code path computes bit for bit what
the previous one did: S seeds trained together (``StackedSeeds``, the table's ``--stack-seeds``) for a
few iterations with gradient steps and a greedy evaluation, then a SHA-256 of every seed's parameters
(actor, critic, both targets), Adam states, replay and generator states, and of the evaluation's rewards.

Run it on two checkouts and compare the lines (equal hashes = identical bits):

    PYTHONPATH=/path/to/checkout python benchmarks/symmtom_stacked_hash.py --variants maddpg,ce,ee --setting 3/6/3
"""
from __future__ import annotations

import argparse
import hashlib
import sys


def fingerprint(variant: str, n: int, w: int, c: int, iterations: int, seeds: int = 3) -> dict:
    import numpy as np
    import torch

    from cfrkit.agents.symmtom.learning import MADDPGSettings, make_trainer
    from cfrkit.agents.symmtom.learning.stacked import StackedSeeds
    from cfrkit.games.symmtom import SymmToMConfig

    torch.set_num_threads(1)
    cfg = SymmToMConfig(agents=n, width=w, pieces=c)
    settings = [MADDPGSettings(variant=variant, seed=s, num_envs=32, warmup=1600) for s in range(seeds)]
    group = StackedSeeds.create(lambda st: make_trainer(cfg, st, "cpu"), settings)
    updates = 0
    for _ in range(iterations):
        updates += group.iterate()[0]["updates"]
    h = hashlib.sha256()
    for s, t in enumerate(group.trainers):
        st = group.seed_state_dict(s)
        for name in ("actor", "critic", "actor_target", "critic_target"):
            for v in st[name].values():
                h.update(v.numpy().tobytes())
        for name in ("actor_opt", "critic_opt"):
            for v in st[name]["state"].values():
                for k in ("exp_avg", "exp_avg_sq", "step"):
                    h.update(v[k].numpy().tobytes())
        for v in st["replay"]["data"].values():
            h.update(v.numpy().tobytes())
        h.update(st["torch_rng"].numpy().tobytes())
        h.update(np.asarray(group.run_for_seed(s, t.evaluate, 64, 3)).tobytes())
    return {"variant": variant, "setting": f"{n}/{w}/{c}", "iterations": iterations, "updates": updates,
            "sha256": h.hexdigest()[:16]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--variants", default="maddpg,rmaddpg,ce,ge,ee,oracle")
    p.add_argument("--setting", default="3/6/3", help="n/w/c")
    p.add_argument("--iterations", type=int, default=8)
    args = p.parse_args(argv)
    n, w, c = (int(x) for x in args.setting.split("/"))
    for v in args.variants.split(","):
        r = fingerprint(v, n, w, c, args.iterations)
        print(f"{r['variant']:7s} {r['setting']:7s} iterations {r['iterations']} updates {r['updates']} "
              f"sha256 {r['sha256']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
