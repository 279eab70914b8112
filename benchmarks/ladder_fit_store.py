"""CPU seconds of a blueprint's fitted opponent tables: fitted, built and stored, then read back (issue 27, ladder).

What a ladder worker pays per (blueprint, opponent) pair with ``--fit-opponent DEALS``: the first time
:meth:`~cfrkit.agents.blueprint.BlueprintAgent.opponent_value_function` fits the opponent's policy, runs the
backward pass per seat and stores the tables in ``STORE``; a later process (a resumed ladder, another worker) reads
them back (digests checked, memory-mapped).  Both in this process with fresh agents (no in-memory cache).

    python benchmarks/ladder_fit_store.py /work/runs/bp2h/bp2h.npz rule-based 20000 /tmp/fits/bp2h_ar
"""
import argparse
import resource
import shutil
import time

from cfrkit.poker.registry import make_agent
from cfrkit.poker.view import poker_view


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("blueprint")
    ap.add_argument("opponent")
    ap.add_argument("deals", type=int)
    ap.add_argument("store")
    ap.add_argument("--seed", type=int, default=12345)
    args = ap.parse_args()
    shutil.rmtree(args.store, ignore_errors=True)
    view = poker_view("holdem")
    for what in ("fit, build and store", "read back"):
        bp = make_agent(f"blueprint:{args.blueprint}", game=view.game, seed=0)
        other = make_agent(args.opponent, game=view.game, seed=0)
        c0 = time.process_time()
        vf = bp.opponent_value_function(view, other, args.deals, args.seed, store=args.store,
                                        opponent_key=args.opponent)
        print(f"{what}: {time.process_time() - c0:.1f} CPU s; max RSS so far "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB; tables "
              f"{sum(t.nbytes for t in vf.fitted.values()) / 1e9:.2f} GB", flush=True)
        del vf, bp


if __name__ == "__main__":
    main()
