"""What one iteration of a stacked SymmToM table run costs beside its training: the periodic greedy evaluation and
the resumable checkpoint (``symmtom_table1.py run --stack-seeds``: 3 seeds, an evaluation of 200 episodes per seed
every 8 iterations, a checkpoint per seed every 50 iterations, replay included).

Builds 3 stacked seeds with the table's settings, fills the replays to the warm-up, trains ``--iterations``
iterations (``StackedSeeds.iterate``), then times (``time.process_time``, one torch thread; ``os.times`` for the
write's user and system CPU) the 3 evaluations, the 3 state dicts and the 3 ``save_checkpoint`` writes (atomic,
fsynced) into ``--out``.  Prints CPU seconds and the file size; the shares per iteration follow from the
schedule (evaluation / 8, checkpoint / 50 iterations).  Also the harness for a profile:

    PYTHONPATH=. py-spy record --native -r 200 --format raw -o maddpg.raw -- \\
        python benchmarks/symmtom_iteration_cost.py --variant maddpg --setting 4/12/8 --iterations 8
"""
from __future__ import annotations

import argparse
import os
import sys
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--variant", default="maddpg")
    p.add_argument("--setting", default="4/12/8", help="n/w/c")
    p.add_argument("--iterations", type=int, default=4, help="training iterations timed after the warm-up")
    p.add_argument("--out", default="/tmp/symmtom_iteration_cost", help="directory for the 3 checkpoint files")
    args = p.parse_args(argv)
    import torch

    from cfrkit.agents.rl import save_checkpoint
    from cfrkit.agents.symmtom.learning import MADDPGSettings, make_trainer
    from cfrkit.agents.symmtom.learning.stacked import StackedSeeds
    from cfrkit.games.symmtom import SymmToMConfig

    torch.set_num_threads(1)
    n, w, c = (int(x) for x in args.setting.split("/"))
    cfg = SymmToMConfig(agents=n, width=w, pieces=c)
    g = StackedSeeds.create(lambda st: make_trainer(cfg, st, "cpu"),
                            [MADDPGSettings(variant=args.variant, seed=s) for s in range(3)])
    g.fill_warmup()
    pt = time.process_time
    c0 = pt()
    for _ in range(args.iterations):
        stats = g.iterate()
    it = (pt() - c0) / max(args.iterations, 1)
    c0 = pt()
    for s, t in enumerate(g.trainers):
        g.run_for_seed(s, t.evaluate, 200, 0)
    ev = pt() - c0
    c0 = pt()
    states = [g.seed_state_dict(s) for s in range(3)]
    sd = pt() - c0
    os.makedirs(args.out, exist_ok=True)
    o0, w0 = os.times(), time.perf_counter()
    for s in range(3):
        save_checkpoint(os.path.join(args.out, f"seed{s}.pt"), {"trainer": states[s], "bench": {}})
    o1 = os.times()
    size = os.path.getsize(os.path.join(args.out, "seed0.pt")) / 1e6
    print(f"{args.variant} {args.setting}: {stats[0]['updates']} stacked steps per iteration, iteration {it:.3f} CPU s "
          f"(3 seeds); 3 evaluations of 200: {ev:.3f} CPU s; 3 state dicts {sd:.3f} CPU s; 3 checkpoint writes: user "
          f"{o1.user - o0.user:.3f} + system {o1.system - o0.system:.3f} CPU s, {time.perf_counter() - w0:.2f} s wall, "
          f"{size:.0f} MB each (replay {len(g.trainers[0].replay)} rows); shares of an iteration: evaluation "
          f"{100 * ev / 8 / it:.1f}%, checkpoint {100 * (sd + o1.user - o0.user + o1.system - o0.system) / 50 / it:.1f}%",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
