"""AIVAT with a blueprint's own self-play values (issue 27, A^C): standard deviation against plain
counting and against AIVAT with the check-down equity value, on the same hands.

    python benchmarks/aivat_blueprint_values.py PAIR [PAIR ...] [--deals 2000] [--seed 0]

``PAIR`` is two registry specs joined by ``,`` (``blueprint:/tmp/bp_s0.npz,rule-based``).  Each pair plays
one duplicate match of ``--deals`` deals (match seed ``--seed``) with two AIVAT observers attached: the
default one (the first agent's ``aivat_value_function``: a blueprint's values,
:mod:`cfrkit.agents.blueprint_values`) and one with :class:`~cfrkit.evaluation.aivat.EquityValueFunction`.
Prints per-hand and per-deal (seat-averaged) standard deviations in mbb, the means with 95% intervals,
and CPU seconds (match alone; the value table's build time separately).
"""
import argparse
import json
import time

import numpy as np

from cfrkit.evaluation.aivat import AivatObserver, EquityValueFunction
from cfrkit.poker import make_agent, play_match
from cfrkit.poker.view import poker_view


class _Keep(AivatObserver):
    """An AIVAT observer whose values stay on the observer (two of them in one match)."""

    def match_end(self, result) -> None:
        pass


def run_pair(specs, deals: int, seed: int) -> dict:
    agents = [make_agent(s, game="holdem", seed=i + 1) for i, s in enumerate(specs)]
    view = poker_view(agents[0].game if hasattr(agents[0], "game") else "holdem")
    game = view.game
    t = time.process_time()
    vf = next((a.aivat_value_function(view) for a in agents if hasattr(a, "aivat_value_function")), None)
    build = time.process_time() - t
    own = _Keep(vf if vf is not None else EquityValueFunction(view))
    eq = _Keep(EquityValueFunction(view))
    t = time.process_time()
    res = play_match(game, agents, deals, seed=seed, duplicate=True, observers=[own, eq], time_limit=float("inf"))
    cpu = time.process_time() - t
    bb = 1000.0 / float(game.definition.big_blind)  # chips -> mbb
    out = {"pair": list(specs), "deals": deals, "hands": int(res.hands_played), "value_function": type(own.value_function).__name__,
           "table_build_cpu_s": round(build, 2), "match_cpu_s": round(cpu, 1)}
    rows = {"plain": res.payoffs[:, 0], "aivat_equity": np.asarray(eq.values),
            "aivat_own_values": np.asarray(own.values)}
    for name, v in rows.items():
        v = np.asarray(v) * bb
        per_deal = v.reshape(-1, 2).mean(axis=1)
        out[name] = {"std_hand": round(float(v.std(ddof=1)), 1), "std_deal": round(float(per_deal.std(ddof=1)), 1),
                     "mean": round(float(per_deal.mean()), 1),
                     "ci95": round(1.96 * float(per_deal.std(ddof=1)) / np.sqrt(per_deal.size), 1)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs", nargs="+")
    ap.add_argument("--deals", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    for pair in args.pairs:
        print(json.dumps(run_pair(pair.split(","), args.deals, args.seed)), flush=True)


if __name__ == "__main__":
    main()
