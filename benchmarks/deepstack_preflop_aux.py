"""DeepStack's auxiliary preflop net: target sampling error, target rate, and the agent's preflop CPU time.

    python benchmarks/deepstack_preflop_aux.py --nets runs/ds_small/nets --study flops
    python benchmarks/deepstack_preflop_aux.py --nets runs/ds_small/nets --study net --count 100
    python benchmarks/deepstack_preflop_aux.py --nets runs/ds_small/nets --study agent --iterations 100

``--study flops``: preflop targets (the flop net averaged over sampled flops,
:func:`cfrkit.value_nets.holdem.datagen.preflop_targets`) with 25, 50, 100, 200 and 400 flops against 1000 flops
on the same situations: range-weighted mean |difference| per hand (fractions of the pot), and the CPU
seconds per situation on one thread.  ``--study net``: the trained auxiliary net on held-out situations
(another seed, one per pot) against 1000-flop targets: range-weighted mean |error| per hand and the
bucketed Huber loss, beside the same numbers for 200-flop targets (the training targets' own noise) and
for predicting 0.  ``--study agent``: CPU seconds of the agent's first two preflop
decisions (the small blind at the root, then the big blind after a small-blind call; the preflop
check-down matrix, which every setting uses for all-in leaves, built once before) with the nets'
auxiliary net (``preflop.pt``; needs one), with the default check-down leaves, and with ``preflop_flops=N``,
and the mean total-variation distance over the 1326 hands between the first two's strategies and the third's.
Prints one JSON object.  The first two are :func:`cfrkit.value_nets.holdem.studies.preflop_flops_study` and
:func:`~cfrkit.value_nets.holdem.studies.preflop_net_study`; the agent study times the agent's calls here.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from cfrkit.value_nets.holdem.studies import preflop_flops_study, preflop_net_study  # noqa: E402


def agent_study(nets_dir: str, iterations: int, preflop_flops: int):
    from cfrkit.agents.holdem_deepstack import HoldemDeepStackAgent
    from cfrkit.games import load

    game = load("holdem")
    state = game.new_initial_state()
    while state.current_player() < 0:
        state.apply_action(state.legal_actions()[0])
    from cfrkit.agents.holdem_deepstack import showdown_sign_matrix

    c = time.process_time()
    showdown_sign_matrix((), 500, 0)   # the preflop check-down matrix (all-in leaves of every setting): once, cached
    out = {"iterations": iterations, "checkdown_matrix_setup_cpu_s": time.process_time() - c}
    settings = {"aux_net": {}, "checkdown_default": {"preflop_net": False},
                f"preflop_flops_{preflop_flops}": {"preflop_flops": preflop_flops}}
    probs = {}
    for name, extra in settings.items():
        agent = HoldemDeepStackAgent(game, nets=nets_dir, iterations=iterations, seed=0, **extra)
        if name == "aux_net" and "preflop" not in agent.leaf_values:
            raise SystemExit(f"{nets_dir} has no preflop (auxiliary) net")
        row = {}
        s = state.clone()
        for k in range(2):
            c, t = time.process_time(), time.perf_counter()
            probs[(name, k)] = agent.hand_strategy(s).probs
            row[f"decision{k + 1}_cpu_s"] = time.process_time() - c
            row[f"decision{k + 1}_wall_s"] = time.perf_counter() - t
            s.apply_action(1)   # the small blind calls
        out[name] = row
    # how far apart the settings' strategies are: mean over the 1326 hands of the total-variation distance
    ref = f"preflop_flops_{preflop_flops}"
    for name in ("aux_net", "checkdown_default"):
        out[f"tv_{name}_vs_{ref}"] = [float(0.5 * np.abs(probs[(name, k)] - probs[(ref, k)]).sum(1).mean())
                                      for k in range(2)]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nets", required=True, help="HoldemValueNets directory (flop net; preflop net for --study agent)")
    ap.add_argument("--study", choices=("flops", "net", "agent"), required=True)
    ap.add_argument("--count", type=int, default=20, help="situations of --study flops")
    ap.add_argument("--iterations", type=int, default=100, help="CFR iterations per re-solve of --study agent")
    ap.add_argument("--preflop-flops", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    if args.study == "flops":
        res = preflop_flops_study(args.nets, args.count, args.seed)
    elif args.study == "net":
        res = preflop_net_study(args.nets, args.count, args.seed)
    else:
        res = agent_study(args.nets, args.iterations, args.preflop_flops)
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    from cfrkit.games.base import GameError

    try:
        sys.exit(main())
    except (GameError, ValueError, OSError) as exc:  # bad input or a missing / foreign net: one line, no traceback
        sys.exit(f"deepstack_preflop_aux: error: {exc}")
