"""AIVAT with a blueprint's own self-play values (issue 27): standard deviation against plain counting,
duplicate, and AIVAT with the check-down equity value, on the same hands; hands per CPU second.

    python benchmarks/aivat_blueprint_values.py PAIR [PAIR ...] [--deals 5000] [--seed 0]
        [--values BLUEPRINT.npz] [--timing-deals 300] [--no-lookahead]

``PAIR`` is two registry specs joined by ``,`` (``blueprint:/tmp/bp_s0.npz,rule-based``).  Each pair plays
one duplicate match of ``--deals`` deals (match seed ``--seed``) with two AIVAT observers attached: the
blueprint values (:mod:`cfrkit.agents.blueprint_values`: the first agent's ``aivat_value_function``, or, for a
pair without a blueprint, the table of ``--values``, with the one-step lookahead of the known agents unless
``--no-lookahead``) and :class:`~cfrkit.evaluation.aivat.EquityValueFunction` (what a cap-2 blueprint got
before: its table was refused).  Prints per-hand and per-deal (seat-averaged) standard deviations in mbb,
the means with 95% intervals over deals, and the CPU seconds (``time.process_time`` of this process) of
three timing matches of ``--timing-deals`` deals (seed + 1): no AIVAT, AIVAT with the equity value, AIVAT
with the blueprint values; the value table's build separately.
"""
import argparse
import json
import time

import numpy as np

from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.agents.blueprint_values import BlueprintValueFunction
from cfrkit.evaluation.aivat import AivatObserver, EquityValueFunction
from cfrkit.poker import make_agent, play_match
from cfrkit.poker.view import poker_view


class _Keep(AivatObserver):
    """An AIVAT observer whose values stay on the observer (two of them in one match)."""

    def match_end(self, result) -> None:
        pass


def _stats(v: np.ndarray, bb: float) -> dict:
    v = np.asarray(v, dtype=np.float64) * bb
    per_deal = v.reshape(-1, 2).mean(axis=1)
    sd = float(per_deal.std(ddof=1))
    return {"std_hand": round(float(v.std(ddof=1)), 1), "std_deal": round(sd, 1),
            "mean": round(float(per_deal.mean()), 1), "ci95": round(1.96 * sd / np.sqrt(per_deal.size), 1)}


def run_pair(specs, deals: int, seed: int, values=None, lookahead: bool = True, timing_deals: int = 300) -> dict:
    agents = [make_agent(s, game="holdem", seed=i + 1) for i, s in enumerate(specs)]
    owner = next((a for a in agents if isinstance(a, BlueprintAgent)), None)
    if owner is None:
        if values is None:
            raise SystemExit(f"pair {specs}: no blueprint in it; give --values BLUEPRINT.npz")
        owner = BlueprintAgent(values, seed=0)
    view = poker_view(owner.game)
    game = view.game
    t = time.process_time()
    vf = BlueprintValueFunction(owner.blueprint, view, owner.translate_raise, lookahead=lookahead)
    build = time.process_time() - t
    bb = 1000.0 / float(game.definition.big_blind)  # chips -> mbb
    out = {"pair": list(specs), "deals": deals, "hands": 2 * deals, "lookahead": lookahead,
           "table_build_cpu_s": round(build, 2), "table_mb": round(vf.table.nbytes / 1e6)}
    # speed: the same short match three times (no AIVAT, equity value, blueprint values)
    for name, obs in (("none", []), ("equity", [AivatObserver(EquityValueFunction(view))]), ("blueprint", [AivatObserver(vf)])):
        t = time.process_time()
        play_match(game, agents, timing_deals, seed=seed + 1, duplicate=True, observers=obs, time_limit=float("inf"))
        out[f"hands_per_cpu_s_{name}"] = round(2 * timing_deals / (time.process_time() - t), 1)
    own = _Keep(vf)
    eq = _Keep(EquityValueFunction(view))
    t = time.process_time()
    res = play_match(game, agents, deals, seed=seed, duplicate=True, observers=[own, eq], time_limit=float("inf"))
    out["match_cpu_s"] = round(time.process_time() - t, 1)
    out["plain"] = _stats(res.payoffs[:, 0], bb)   # std_deal of plain = the duplicate estimator's
    out["aivat_equity"] = _stats(eq.values, bb)
    out["aivat_blueprint"] = _stats(own.values, bb)
    for k in ("std_hand", "std_deal"):
        out[f"reduction_{k}"] = round(1.0 - out["aivat_blueprint"][k] / out["plain"]["std_hand" if k == "std_hand" else "std_deal"], 3)
    out["reduction_vs_plain_per_deal"] = round(1.0 - out["aivat_blueprint"]["std_deal"] / (out["plain"]["std_hand"] / np.sqrt(2)), 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs", nargs="+")
    ap.add_argument("--deals", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--values", default=None, help="blueprint file whose table values pairs without a blueprint")
    ap.add_argument("--timing-deals", type=int, default=300)
    ap.add_argument("--no-lookahead", action="store_true")
    args = ap.parse_args()
    for pair in args.pairs:
        print(json.dumps(run_pair(pair.split(","), args.deals, args.seed, args.values, not args.no_lookahead,
                                  args.timing_deals)), flush=True)


if __name__ == "__main__":
    main()
