"""One SymmToM Table 1 run with changed hyper-parameters, scored under every evaluation protocol.

Trains one (model, setting, seed) run like ``symmtom_table1.py run`` (the same trainer, greedy
evaluation on 200 fixed episodes every 8 iterations picking the best actor), but with
``MADDPGSettings`` fields overridden (``--set buffer=1000000``), to see how far one of cfrkit's
deviations from the paper's MADDPG moves the cell.  Writes a JSON with the curve (greedy evaluation
and the training batches' sampled-action reward) and the final scores under
``symmtom_table1.PROTOCOLS`` (best / last actor, greedy / sampled actions, held-out episodes).

    python benchmarks/symmtom_ablation.py --model ce --setting 3/6/3 --seed 0 --set buffer=1000000 \\
        --out benchmarks/results/symmtom_why/ablation_ce_buffer1e6_s0.json
    python benchmarks/symmtom_ablation.py --model ce --seed 0 --set per_agent=1 --set soft_actions=1 --out ...

Every 10 evaluations the curve so far is written to ``--out`` (``"finished": false``), replaced at the end.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    import torch

    from cfrkit.agents.symmtom.learning import MADDPGSettings, make_trainer
    from cfrkit.games.symmtom import SymmToMConfig

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import symmtom_table1 as table1

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, choices=table1.MODELS)
    p.add_argument("--setting", default="3/6/3")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--episodes", type=int, default=60000)
    p.add_argument("--set", action="append", default=[], help="MADDPGSettings field=value (repeatable)")
    p.add_argument("--eval-every", type=int, default=8)
    p.add_argument("--final-episodes", type=int, default=5000)
    p.add_argument("--out", required=True, help="JSON written at the end")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    (n, w, c), = table1._parse_settings(args.setting)
    fields = {f.name: f.type for f in dataclasses.fields(MADDPGSettings)}
    overrides = {}
    for item in args.set:
        k, _, v = item.partition("=")
        if k not in fields or k in ("variant", "seed"):
            raise SystemExit(f"--set: {k!r} is not a MADDPGSettings field to override")
        overrides[k] = type(getattr(MADDPGSettings(), k))(float(v) if "." in v or "e" in v else int(v))
    settings = MADDPGSettings(variant=args.model, seed=args.seed, **overrides)
    trainer = make_trainer(SymmToMConfig(agents=n, width=w, pieces=c), settings, "cpu")
    iterations = -(-args.episodes // settings.num_envs)
    curve, best, best_it, best_actor = [], -1.0, 0, None
    while trainer.iteration < iterations:
        stats = trainer.iterate()
        if trainer.iteration % args.eval_every == 0 or trainer.iteration == iterations:
            r = float(trainer.evaluate(200, seed=0).mean())
            curve.append({"iteration": trainer.iteration, "episodes": trainer.episodes, "eval_reward": round(r, 3),
                          "train_reward": round(stats["train_reward"], 3),
                          "cpu_seconds": round(trainer.cpu_seconds, 1)})
            if r > best:
                best, best_it = r, trainer.iteration
                best_actor = {k: v.clone() for k, v in trainer.actor.state_dict().items()}
            if len(curve) % 10 == 0:
                # the curve so far, so a run stopped early still leaves its comparison at equal episodes
                table1._write_json(args.out, {"model": args.model, "setting": [n, w, c], "seed": args.seed,
                                              "overrides": overrides, "episodes": trainer.episodes, "finished": False,
                                              "cpu_seconds": round(trainer.cpu_seconds, 1), "best_iteration": best_it,
                                              "curve": curve})
                print(f"{trainer.episodes} episodes: greedy {r:.1f} (best {best:.1f}), train {stats['train_reward']:.1f}, "
                      f"cpu {trainer.cpu_seconds:.0f} s", flush=True)
    last_actor = {k: v.clone() for k, v in trainer.actor.state_dict().items()}
    scores = {}
    for name, (which, greedy, eval_seed) in table1.PROTOCOLS.items():
        trainer.actor.load_state_dict(best_actor if which == "best" else last_actor)
        k = 1000 if name == "stored" else args.final_episodes
        scores[name] = round(float(trainer.evaluate(k, seed=eval_seed, greedy=greedy).mean()), 3)
    data = {"model": args.model, "setting": [n, w, c], "seed": args.seed, "overrides": overrides,
            "settings": dataclasses.asdict(settings), "episodes": trainer.episodes,
            "cpu_seconds": round(trainer.cpu_seconds, 1), "finished": True, "best_iteration": best_it, "scores": scores,
            "curve": curve, "finished_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
            "loadavg_at_finish": round(os.getloadavg()[0], 2)}
    table1._write_json(args.out, data)
    print(json.dumps(scores), f"cpu {trainer.cpu_seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
