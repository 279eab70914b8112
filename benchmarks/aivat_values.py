"""AIVAT with fitted value functions (issue 27): standard deviation and hands/s against plain counting.

    python benchmarks/aivat_values.py PAIR [PAIR ...] [--pilot 3000] [--deals 5000] [--before-deals 500]
                                      [--parallel-deals 0]

``PAIR`` is two registry specs joined by ``,`` (``blueprint:/work/runs/bp_s0.npz,rule-based``).  For
each pair: a value table (:func:`cfrkit.evaluation.aivat_values.fit_value_table`) is fitted on a
pilot of ``--pilot`` duplicate deals (seed 1000003), then a duplicate match of ``--deals`` deals
(seed 0) is played with AIVAT on that table; ``--before-deals`` deals are played with the equity value
function (the one AIVAT used before) for the before/after speed and its std.  Prints per-hand
standard deviations (mbb) of plain, duplicate and AIVAT and hands per CPU second; with
``--parallel-deals N`` also N deals split over 2 processes by ``first_deal`` (wall and CPU rates).
"""
import argparse
import json
import multiprocessing as mp
import os
import tempfile
import time

from cfrkit.evaluation.aivat import AivatObserver, EquityValueFunction
from cfrkit.evaluation.aivat_values import TableValueFunction, fit_value_table
from cfrkit.poker import make_agent, play_match
from cfrkit.poker.view import poker_view


def _part(args):
    """One process's share of a parallel match: (hands played, CPU seconds)."""
    specs, path, first, deals = args
    agents = [make_agent(s, game="holdem", seed=i + 1) for i, s in enumerate(specs)]
    vf = TableValueFunction.load(path, seed=first)
    play_match("holdem", agents, 1, seed=1, duplicate=True, time_limit=float("inf"))  # loads tables
    t = time.process_time()
    r = play_match("holdem", agents, deals, seed=0, duplicate=True, first_deal=first,
                   observers=[AivatObserver(vf)], time_limit=float("inf"))
    return r.hands_played, time.process_time() - t


def parallel_speed(specs, vf, deals: int, processes: int) -> dict:
    """Duplicate + AIVAT split over ``processes`` by ``first_deal``: wall and per-process CPU rates."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vf.npz")
        vf.save(path)
        share = [deals // processes + (i < deals % processes) for i in range(processes)]
        firsts = [sum(share[:i]) for i in range(processes)]
        with mp.Pool(processes) as pool:
            t = time.perf_counter()
            out = pool.map(_part, [(specs, path, f, n) for f, n in zip(firsts, share)])
            wall = time.perf_counter() - t
    hands = sum(h for h, _ in out)
    return {"processes": processes, "hands": hands, "hands_per_wall_s": hands / wall,
            "hands_per_cpu_s_per_process": [h / c for h, c in out],
            "capacity_on_free_cores": sum(h / c for h, c in out)}


def run(pair: str, pilot: int, deals: int, before_deals: int, parallel_deals: int = 0) -> dict:
    specs = pair.split(",")
    agents = [make_agent(s, game="holdem", seed=i + 1) for i, s in enumerate(specs)]
    play_match("holdem", agents, 2, seed=99, duplicate=True, time_limit=float("inf"))  # loads tables
    out = {"pair": " vs ".join(specs)}
    t = time.process_time()
    vf = fit_value_table("holdem", agents, pilot)
    out["fit_cpu_s"] = time.process_time() - t
    out["pilot_deals"] = pilot
    t = time.process_time()
    r = play_match("holdem", agents, deals, seed=0, duplicate=True, observers=[AivatObserver(vf)],
                   time_limit=float("inf"))
    took = time.process_time() - t
    out["after"] = {"hands": r.hands_played, "hands_per_cpu_s": r.hands_played / took, "std_plain": r.plain.std,
                    "std_duplicate": r.duplicate_estimate.std, "std_aivat": r.aivat.std,
                    "aivat": str(r.aivat), "duplicate": str(r.duplicate_estimate),
                    "reduction_vs_plain": 1 - r.aivat.std / r.plain.std}
    if before_deals:
        t = time.process_time()
        b = play_match("holdem", agents, before_deals, seed=0, duplicate=True,
                       observers=[AivatObserver(EquityValueFunction(poker_view("holdem", heads_up=False)))],
                       time_limit=float("inf"))
        took = time.process_time() - t
        out["before"] = {"hands": b.hands_played, "hands_per_cpu_s": b.hands_played / took,
                         "std_plain": b.plain.std, "std_aivat": b.aivat.std,
                         "reduction_vs_plain": 1 - b.aivat.std / b.plain.std}
    t = time.process_time()
    n = play_match("holdem", agents, min(deals, 2000), seed=0, duplicate=True, time_limit=float("inf"))
    out["no_aivat_hands_per_cpu_s"] = n.hands_played / (time.process_time() - t)
    if parallel_deals:
        out["parallel"] = parallel_speed(specs, vf, parallel_deals, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pairs", nargs="+")
    parser.add_argument("--pilot", type=int, default=3000)
    parser.add_argument("--deals", type=int, default=5000)
    parser.add_argument("--before-deals", type=int, default=500)
    parser.add_argument("--parallel-deals", type=int, default=0,
                        help="also play this many deals split over 2 processes (first_deal) and time them")
    args = parser.parse_args()
    for pair in args.pairs:
        print(json.dumps(run(pair, args.pilot, args.deals, args.before_deals, args.parallel_deals), indent=1),
              flush=True)


if __name__ == "__main__":
    main()
