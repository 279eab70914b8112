"""AIVAT with a blueprint's own values: deviation and CPU per deal for each lookahead mode (issue 27).

    python benchmarks/aivat_lookahead_modes.py blueprint:BP.npz,rule-based 5000 street,tables [SEED] [VALUES.npz]

Modes: ``tables`` (the value tables alone), ``one-step`` (one step of the other known agent's strategy),
``street`` (the rest of the street played out with both known strategies, the default for A^R and simple
agents; a turn-closing call valued by the river played out on ``river_cards`` cards; the owner's drawn
translations followed), ``street-main`` (``street`` without those two), ``street-follow`` (``street`` with the
river by the tables: the translations alone, the agent's default), ``street-river44`` (every river card).
A pair without a blueprint takes the tables of VALUES.npz.  One duplicate match of DEALS deals per mode (seed SEED, default 7); prints per mode the CPU seconds,
hands per CPU second, the per-deal standard deviation of AIVAT and of duplicate (mbb/h) and variance x CPU per
deal (lower: narrower intervals per CPU second).
"""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from aivat_blueprint_values import _Keep  # noqa: E402

from cfrkit.agents.blueprint import BlueprintAgent  # noqa: E402
from cfrkit.agents.blueprint_values import BlueprintValueFunction  # noqa: E402
from cfrkit.poker import make_agent, play_match  # noqa: E402
from cfrkit.poker.view import poker_view  # noqa: E402

#: the value function's options per mode (another blueprint is followed too, to compare its cost)
MODES = {"tables": dict(lookahead=False), "one-step": dict(street_from=4, blueprint_lookahead=True),
         "street": dict(blueprint_lookahead=True),
         # before the river boundary and the owner's translations (branch aivat-ar): the street mode of main
         "street-main": dict(blueprint_lookahead=True, follow_owner=False, river_exact=False),
         # the owner's translations followed, the river by the tables (BlueprintAgent.aivat_value_function's default)
         "street-follow": dict(blueprint_lookahead=True, river_exact=False),
         "street-river44": dict(blueprint_lookahead=True, river_cards=44),
         "street-noleaves": dict(blueprint_lookahead=True, river_leaves=False)}


def main() -> None:
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    specs, deals, modes = sys.argv[1].split(","), int(sys.argv[2]), sys.argv[3].split(",")
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 7
    agents = [make_agent(s, game="holdem", seed=i + 1) for i, s in enumerate(specs)]
    owner = next((a for a in agents if isinstance(a, BlueprintAgent)), None)
    if owner is None and len(sys.argv) > 5:
        owner = make_agent("blueprint:" + sys.argv[5], game="holdem", seed=0)
    if owner is None or any(m not in MODES for m in modes):
        raise SystemExit(f"need a blueprint in the pair and modes among {sorted(MODES)}")
    view = poker_view(owner.game)
    game = view.game
    bb = 1000.0 / float(game.definition.big_blind)  # chips -> mbb
    for mode in modes:
        keep = _Keep(BlueprintValueFunction(owner.blueprint, view, owner.translate_raise, **MODES[mode]))
        t = time.process_time()
        res = play_match(game, agents, deals, seed=seed, duplicate=True, observers=[keep], time_limit=float("inf"))
        cpu = time.process_time() - t
        per_deal = (np.asarray(keep.values) * bb).reshape(-1, 2).mean(1)
        dup = (res.payoffs[:, 0] * bb).reshape(-1, 2).mean(1)
        print(json.dumps({"pair": specs, "mode": mode, "deals": deals, "cpu_s": round(cpu, 1),
                          "hands_per_cpu_s": round(2 * deals / cpu, 1), "std_deal_aivat": round(float(per_deal.std()), 0),
                          "std_deal_dup": round(float(dup.std()), 0), "mean": round(float(per_deal.mean()), 1),
                          "var_x_cpu_per_deal": round(float(per_deal.var() * cpu / deals))}), flush=True)


if __name__ == "__main__":
    main()
