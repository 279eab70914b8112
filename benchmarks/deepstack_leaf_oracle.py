"""Diagnose DeepStack on no-limit Leduc: continual re-solving with exact leaf values passed through the
value net's interface, versus the trained net and versus no depth limit.  Exact exploitability (chips).

    python benchmarks/deepstack_leaf_oracle.py --leaf oracle --iterations 100 --inner 200 --inner-skip 100
    python benchmarks/deepstack_leaf_oracle.py --leaf /tmp/ds_leduc_av/net_180000.pt --iterations 300
    python benchmarks/deepstack_leaf_oracle.py --leaf none --iterations 100

``--leaf oracle`` plugs :class:`cfrkit.value_nets.oracle.SolvedBucketModel` (every leaf situation the
agent meets solved with ``--inner`` CFR+ iterations, the net's inputs and outputs: normalised bucket
ranges, pot fractions) into :class:`cfrkit.value_nets.leaf_values.NetLeafValues`.  If the agent is bad
with it, the problem is not the network's accuracy; ``--targets`` chooses what the oracle returns (the
cfvs averaged over its iterations, DeepStack's targets, or the cfvs of its average strategy).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from cfrkit.agents.deepstack import DeepStackAgent, agent_policy  # noqa: E402
from cfrkit.evaluation import exploitability  # noqa: E402
from cfrkit.games import load  # noqa: E402
from cfrkit.value_nets.bucketing import LeducBucketer  # noqa: E402
from cfrkit.value_nets.leaf_values import NetLeafValues  # noqa: E402
from cfrkit.value_nets.oracle import SolvedBucketModel  # noqa: E402
from cfrkit.value_nets.train import load_leaf_values  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="leduc_nolimit", help="Leduc-family game string (default leduc_nolimit)")
    ap.add_argument("--leaf", default="oracle", help="'oracle', 'none' (full-depth re-solving) or a net checkpoint")
    ap.add_argument("--iterations", type=int, default=100, help="iterations per re-solve")
    ap.add_argument("--skip", type=int, default=0, help="re-solve iterations left out of the average")
    ap.add_argument("--algorithm", choices=("cfr+", "dcfr"), default="cfr+", help="re-solve algorithm")
    ap.add_argument("--inner", type=int, default=200, help="oracle: CFR+ iterations per leaf situation")
    ap.add_argument("--inner-skip", type=int, default=100, help="oracle: iterations left out of the averages")
    ap.add_argument("--targets", choices=("average_values", "average_strategy"), default="average_values")
    ap.add_argument("--empty-range", choices=("uniform", "zeros"), default="uniform")
    ap.add_argument("--carry", choices=("average_values", "best_response"), default="average_values")
    args = ap.parse_args()
    torch.set_num_threads(1)
    game = load(args.game)
    stack = float(getattr(game, "stack", 0.0))
    if args.leaf != "none" and not stack:
        ap.error(f"--leaf {args.leaf} needs a no-limit game with a stack; {args.game} has none (use --leaf none)")
    if args.leaf == "oracle":
        model = SolvedBucketModel(game, stack, iterations=args.inner, skip=args.inner_skip, targets=args.targets)
        leaf = NetLeafValues(model, LeducBucketer(game.num_cards, game.suits), stack, empty_range=args.empty_range)
    elif args.leaf == "none":
        leaf = None
    else:
        leaf = load_leaf_values(args.leaf)
        leaf.empty_range = args.empty_range
    t = time.perf_counter()
    agents = [DeepStackAgent(game, p, leaf_values=leaf, iterations=args.iterations, skip=args.skip,
                             algorithm=args.algorithm, carry=args.carry) for p in (0, 1)]
    expl = exploitability(game, agent_policy(game, agents, progress=True))
    print(f"leaf={args.leaf} {args.algorithm} carry={args.carry} iterations={args.iterations} skip={args.skip} inner={args.inner}/{args.inner_skip} "
          f"targets={args.targets} empty_range={args.empty_range}: exploitability {expl:.4f} chips "
          f"({agents[0].num_resolves + agents[1].num_resolves} re-solves, {time.perf_counter() - t:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
