"""AIVAT with A^D's own re-solve values (issue 27): standard deviation against plain counting, duplicate, AIVAT
with the blueprint's values and AIVAT with the check-down equity value, on the same hands; CPU per hand.

    python benchmarks/aivat_deepstack_values.py hands A,B --deals 100 [--seed 0] --out FILE.jsonl
    python benchmarks/aivat_deepstack_values.py summary FILE.jsonl [--json OUT.json]
    python benchmarks/aivat_deepstack_values.py leduc [--deals 20000] [--iterations 50]

``hands`` plays one duplicate match of ``--deals`` deals between two registry specs (hold'em), with up to three
AIVAT observers on the same hands: the value function of the first agent that gives one through
``aivat_value_function`` *of a re-solving agent* (:class:`~cfrkit.agents.resolve_values.ResolveValueFunction`;
and its ``left_tree="frozen"`` variant as ``aivat_resolve_frozen``, which runs first and pays the deal's one-off pass),
the blueprint's (when a blueprint plays) and :class:`~cfrkit.evaluation.aivat.EquityValueFunction`.  One JSON line
per hand (seat-0 payoff of ``agents[0]``'s side and each estimator, and the CPU seconds spent in each value
function) is appended and flushed as the hand ends, so a run stopped early keeps its hands; ``summary`` reads the
complete deals: std per hand and per deal (seat-averaged) in mbb, mean +- 95%, hands per CPU second of the match
without AIVAT and with each value function (the match's CPU minus the value functions', plus one).

``leduc`` is the same on Leduc with the Leduc DeepStack agent against a CFR+ policy (cheap: many hands).
"""
import argparse
import json
import os
import sys
import time

import numpy as np

from cfrkit.agents.resolve_values import ResolveValueFunction
from cfrkit.evaluation.aivat import AivatObserver, EquityValueFunction
from cfrkit.poker import make_agent, play_match
from cfrkit.poker.view import poker_view


class Timed:
    """A value function whose calls add their CPU seconds to ``seconds`` (attributes forwarded)."""

    def __init__(self, vf):
        self._vf = vf
        self.seconds = 0.0

    def __getattr__(self, name):
        attr = getattr(self._vf, name)
        if not callable(attr):
            return attr

        def timed(*args, **kwargs):
            t = time.process_time()
            try:
                return attr(*args, **kwargs)
            finally:
                self.seconds += time.process_time() - t

        return timed


class Keep(AivatObserver):
    """An AIVAT observer whose values stay on the observer (several in one match)."""

    def match_end(self, result) -> None:
        pass


class Writer:
    """Appends one JSON line per hand: agents[0]'s chips and each estimator's value, CPU of each value function."""

    def __init__(self, path, named, bb, agents):
        self.f = open(path, "a")
        self.named = named
        self.bb = bb
        self.agents = agents
        self.t0 = time.process_time()

    def hand_end(self, hand) -> None:
        p0 = 0 if hand.seat_of_player[0] == 0 else 1
        row = {"hand": hand.number, "deal": hand.deal, "seat_of_a": hand.seat_of_player[0],
               "plain": float(hand.returns[p0]) * self.bb, "cpu": time.process_time() - self.t0}
        # the Keep observers' hand_end ran before this one (observer order): their last value is this hand's
        for name, (obs, timed) in self.named.items():
            row[name] = float(obs.values[-1]) * self.bb
            row[f"cpu_{name}"] = timed.seconds
        self.f.write(json.dumps(row) + "\n")
        self.f.flush()


def play(specs, deals: int, seed: int, out: str, resolve_next: bool = False) -> None:
    agents = [make_agent(s, game="holdem", seed=i + 1) for i, s in enumerate(specs)]
    view = poker_view(agents[0].game)
    game = view.game
    bb = 1000.0 / float(game.definition.big_blind)
    named = {}
    dealt = game.new_initial_state()
    while not view.hands_dealt(dealt):
        dealt.apply_action(int(dealt.chance_outcomes()[0][0]))
    for a in agents:
        if hasattr(a, "resolve_covering"):
            # the default (left_tree="checkdown": states outside A^D's tree at their own check-down value, a raise
            # as if called) and the "frozen" variant (the pot where play left the tree)
            named["aivat_resolve_frozen"] = ResolveValueFunction(view, a, left_tree="frozen")
            named["aivat_resolve"] = a.aivat_value_function(view)
            if resolve_next:   # A^D's own re-solve at each state where it acts next after a betting action
                named["aivat_resolve_next"] = ResolveValueFunction(view, a, resolve_next=True)
            # the hand's first solve (a plain preflop solve, made once per agent) is made at A^D's first decision
            # anyway: made here, so the value function's CPU below counts only what AIVAT adds
            t = time.process_time()
            a.resolve_covering(dealt, 0)
            print(json.dumps({"first_solve_cpu_s": round(time.process_time() - t, 2)}), flush=True)
    t = time.process_time()
    for a in agents:
        if hasattr(a, "blueprint") and hasattr(a, "aivat_value_function"):
            named["aivat_blueprint"] = a.aivat_value_function(view)
    build = time.process_time() - t
    named["aivat_equity"] = EquityValueFunction(view)
    observers = {}
    for name, vf in named.items():
        timed = Timed(vf)
        observers[name] = (Keep(timed), timed)
    writer = Writer(out, observers, bb, agents)
    print(json.dumps({"pair": list(specs), "deals": deals, "seed": seed, "blueprint_table_cpu_s": round(build, 2),
                      "estimators": list(named)}), flush=True)
    play_match(game, agents, deals, seed=seed, duplicate=True, observers=[o for o, _ in observers.values()] + [writer],
               time_limit=float("inf"))
    for name, vf in named.items():
        if hasattr(vf, "stats"):
            print(name, json.dumps(vf.stats), flush=True)


def _stats(v: np.ndarray, digits: int = 1) -> dict:
    v = np.asarray(v, dtype=np.float64)
    per_deal = v.reshape(-1, 2).mean(axis=1)
    sd = float(per_deal.std(ddof=1))
    return {"std_hand": round(float(v.std(ddof=1)), digits), "std_deal": round(sd, digits),
            "mean": round(float(per_deal.mean()), digits), "ci95": round(1.96 * sd / np.sqrt(per_deal.size), digits)}


def summary(path: str) -> dict:
    rows = [json.loads(line) for line in open(path) if line.strip()]
    n = len(rows) - len(rows) % 2
    rows = rows[:n]
    names = [k for k in rows[0] if k.startswith("aivat_")]
    out = {"hands": n, "deals": n // 2, "plain": _stats([r["plain"] for r in rows])}
    cpu = rows[-1]["cpu"]
    vf_cpu = {k: rows[-1][f"cpu_{k}"] for k in names}
    bare = cpu - sum(vf_cpu.values())
    out["match_cpu_s"] = round(cpu, 1)
    out["hands_per_cpu_s_plain"] = round(n / bare, 4)
    for k in names:
        out[k] = _stats([r[k] for r in rows])
        out[k]["vf_cpu_s"] = round(vf_cpu[k], 1)
        out[k]["hands_per_cpu_s"] = round(n / (bare + vf_cpu[k]), 4)
        out[k]["reduction_std_hand_vs_plain"] = round(1 - out[k]["std_hand"] / out["plain"]["std_hand"], 3)
        out[k]["reduction_std_deal_vs_duplicate"] = round(1 - out[k]["std_deal"] / out["plain"]["std_deal"], 3)
    return out


def leduc(deals: int, iterations: int, seed: int, opponent_iterations: int) -> dict:
    from cfrkit.agents.leduc_agents import LeducDeepStackAgent, LeducPolicyAgent
    from cfrkit.evaluation.headtohead import exact_match_value
    from cfrkit.solvers import CFRSolver

    solver = CFRSolver("leduc", algorithm="cfr+")
    solver.run(opponent_iterations)
    ds = LeducDeepStackAgent("leduc", seed=seed + 1, iterations=iterations)
    other = LeducPolicyAgent(solver.average_policy(), "leduc", name=f"cfr+{opponent_iterations}", seed=seed + 2)
    view = poker_view("leduc")
    vf = Timed(ds.aivat_value_function(view))
    eq = Timed(EquityValueFunction(view))
    nxt = Timed(ResolveValueFunction(view, ds, resolve_next=True))
    own, base, ahead = Keep(vf), Keep(eq), Keep(nxt)
    t = time.process_time()
    res = play_match("leduc", [ds, other], deals, seed=seed, observers=[own, base, ahead], time_limit=float("inf"))
    cpu = time.process_time() - t
    out = {"pair": [f"deepstack:iterations={iterations}", f"cfr+{opponent_iterations}"], "deals": deals,
           "hands": 2 * deals, "exact_chips_per_hand": round(exact_match_value([ds, other], "leduc"), 5),
           "units": "chips", "plain": _stats(res.payoffs[:, 0], 4), "aivat_resolve": _stats(own.values, 4),
           "aivat_equity": _stats(base.values, 4), "aivat_resolve_next": _stats(ahead.values, 4)}
    for k in ("aivat_resolve", "aivat_equity", "aivat_resolve_next"):
        out[k]["reduction_std_hand_vs_plain"] = round(1 - out[k]["std_hand"] / out["plain"]["std_hand"], 3)
        out[k]["reduction_std_deal_vs_duplicate"] = round(1 - out[k]["std_deal"] / out["plain"]["std_deal"], 3)
    out["match_cpu_s"] = round(cpu, 1)
    bare = cpu - vf.seconds - eq.seconds - nxt.seconds
    out["hands_per_cpu_s"] = {"plain": round(2 * deals / bare, 1),
                              "aivat_resolve": round(2 * deals / (bare + vf.seconds), 1),
                              "aivat_equity": round(2 * deals / (bare + eq.seconds), 1),
                              "aivat_resolve_next": round(2 * deals / (bare + nxt.seconds), 1)}
    out["vf_cpu_s"] = {"aivat_resolve": round(vf.seconds, 2), "aivat_equity": round(eq.seconds, 2),
                       "aivat_resolve_next": round(nxt.seconds, 2)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("hands")
    h.add_argument("pair")
    h.add_argument("--deals", type=int, default=100)
    h.add_argument("--seed", type=int, default=0)
    h.add_argument("--out", required=True)
    h.add_argument("--resolve-next", action="store_true",
                   help="also A^D's values with resolve_next (its re-solve where it acts next; extra re-solves)")
    s = sub.add_parser("summary")
    s.add_argument("path")
    s.add_argument("--json", default=None)
    le = sub.add_parser("leduc")
    le.add_argument("--deals", type=int, default=20000)
    le.add_argument("--iterations", type=int, default=50)
    le.add_argument("--opponent-iterations", type=int, default=30)
    le.add_argument("--seed", type=int, default=0)
    le.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.cmd == "hands":
        if os.path.exists(args.out) and os.path.getsize(args.out):
            sys.exit(f"{args.out} exists: give a new file (lines are appended)")
        play(args.pair.split(","), args.deals, args.seed, args.out, args.resolve_next)
        return
    out = summary(args.path) if args.cmd == "summary" else leduc(args.deals, args.iterations, args.seed,
                                                                   args.opponent_iterations)
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
