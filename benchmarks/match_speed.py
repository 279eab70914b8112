"""Hands per CPU second of the ladder's blocks, per pair, with and without AIVAT (issue 27).

Each pair plays one :func:`cfrkit.evaluation.ladder.play_block` of ``--deals`` duplicate deals (2 hands
each) in this process, timed by ``time.process_time`` (the machine is shared: CPU seconds, not wall).
Agents are built once per pair and warmed up on ``--warmup`` deals of another seed first, as a ladder
worker's agents are after its first block (caches of A^R's tables, blueprint buckets).

    python benchmarks/match_speed.py rule-based fixed-range-raiser always-call \\
        blueprint:/work/runs/bp_s0.npz blueprint:/work/runs/bp_s1.npz --deals 200
    python benchmarks/match_speed.py rule-based always-call --deals 200 --profile prof.txt   # cProfile
    python benchmarks/match_speed.py rule-based always-call --store /tmp/bench.db   # hands stored as the ladder does
    python benchmarks/match_speed.py always-call blueprint:/work/runs/bp2h/bp2h.npz --gc   # the gc's CPU s per block
"""
import argparse
import cProfile
import gc
import hashlib
import io
import itertools
import json
import pstats
import time

from cfrkit.evaluation.ladder import derived_seed, play_block, supports_aivat
from cfrkit.platform.ladder import agent_labels
from cfrkit.platform.storage import Store, StoreObserver
from cfrkit.poker.registry import make_agent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("agents", nargs="+", help="registry specs; every pair plays")
    ap.add_argument("--deals", type=int, default=200, help="deals per pair and estimator (2 hands each)")
    ap.add_argument("--warmup", type=int, default=20, help="deals played first on another seed (not timed)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-plain", action="store_true", help="skip the blocks without AIVAT")
    ap.add_argument("--profile", default=None,
                    help="write a CPU-clock cProfile summary (own time top 30, cumulative top 40) per pair here")
    ap.add_argument("--json", default=None, help="write the rows here")
    ap.add_argument("--gc", action="store_true",
                    help="also report the garbage collector's CPU seconds and collections per generation in the block")
    ap.add_argument("--store", default=None, help="attach the ladder's StoreObserver, writing to this SQLite file")
    args = ap.parse_args()
    store = Store(args.store) if args.store else None
    counter = itertools.count()

    def observers():
        return [StoreObserver(store, f"bench-{next(counter)}", batch=256)] if store is not None else []
    labels = agent_labels(args.agents)
    rows = []
    prof_out = []
    for i, j in itertools.combinations(range(len(args.agents)), 2):
        a = make_agent(args.agents[i], game="holdem", seed=derived_seed("agent", args.seed, i))
        b = make_agent(args.agents[j], game="holdem", seed=derived_seed("agent", args.seed, j))
        aivat_ok = supports_aivat(a) and supports_aivat(b)
        seed = derived_seed("deals", args.seed, args.agents[i], args.agents[j])
        row = {"pair": f"{labels[i]} vs {labels[j]}", "deals": args.deals}
        for aivat in ([False] if args.no_plain else [False]) + ([True] if aivat_ok else []):
            if args.no_plain and not aivat:
                continue
            play_block("holdem", a, b, 10 ** 6, args.warmup, seed, aivat=aivat)
            # CPU-time clock: on the shared machine wall time counts other processes' slices
            prof = cProfile.Profile(time.process_time) if args.profile else None
            gc_cpu, gc_runs, gc_t0 = [0.0, 0.0, 0.0], [0, 0, 0], [0.0]

            def on_gc(phase, info):  # gc.callbacks: CPU seconds between a collection's start and stop
                if phase == "start":
                    gc_t0[0] = time.process_time()
                else:
                    gc_cpu[info["generation"]] += time.process_time() - gc_t0[0]
                    gc_runs[info["generation"]] += 1
            if args.gc:
                gc.callbacks.append(on_gc)
            t0 = time.process_time()
            if prof:
                prof.enable()
            # other deals for each estimator: a replayed deal would find the agents' per-board caches warm
            blk = play_block("holdem", a, b, 10 ** 5 if aivat else 0, args.deals, seed, aivat=aivat,
                             observers=observers())
            if prof:
                prof.disable()
            cpu = time.process_time() - t0
            if args.gc:
                gc.callbacks.remove(on_gc)
            key = "aivat" if aivat else "plain"
            row[f"{key}_hands_per_cpu_s"] = round(blk.hands / cpu, 1)
            row[f"{key}_cpu_s"] = round(cpu, 3)
            # per-deal duplicate (and AIVAT) values, bit for bit: equal hashes = the same numbers
            h = hashlib.sha256(blk.duplicate.tobytes())
            if blk.aivat is not None:
                h.update(blk.aivat.tobytes())
            row[f"{key}_values_sha256"] = h.hexdigest()[:12]
            if args.gc:
                row[f"{key}_gc_cpu_s"] = [round(x, 4) for x in gc_cpu]
                row[f"{key}_gc_collections"] = gc_runs
            if prof:
                s = io.StringIO()
                pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(30)
                pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(40)
                prof_out.append(f"===== {row['pair']} ({key}, {blk.hands} hands, {cpu:.2f} CPU s)\n{s.getvalue()}")
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.profile:
        with open(args.profile, "w") as fh:
            fh.write("\n".join(prof_out))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
