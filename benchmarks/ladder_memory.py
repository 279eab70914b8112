"""Where a ladder worker's memory is, and its hands per CPU second (issue 27, ladder part).

Runs :func:`cfrkit.platform.ladder.run_ladder` in this process (one worker: ``processes=1``) on a fresh database
in ``--dir`` and prints, after the run, the process's memory (``ru_maxrss``; from ``/proc/self/smaps_rollup`` the
resident set split into private pages and the file pages it maps, e.g. stored fitted tables, which the system
shares between workers and may drop) and a breakdown of the value functions the worker's agents hold: their
tables (own memory or mapped) and every cache (entries and estimated bytes: the mean deep size of up to 200
entries times their number).  ``--tracemalloc``: the 15 source lines holding the most Python/numpy memory.

    python benchmarks/ladder_memory.py blueprint:/work/runs/bp_s0.npz rule-based always-call \\
        --deals 400 --block 50 --fit 300 --dir /tmp/lm            # fits and stores the tables (first run)
    python benchmarks/ladder_memory.py ... --dir /tmp/lm --again  # a resume: the stored tables, mapped
    python benchmarks/ladder_memory.py ... --no-store             # the tables in the worker's own memory
"""
import argparse
import inspect
import os
import resource
import shutil
import sys
import time

import numpy as np

import cfrkit.platform.ladder as ladder_mod
from cfrkit.platform.ladder import run_ladder


def smaps() -> dict:
    """kB fields of /proc/self/smaps_rollup (Rss, Pss, Private_Dirty, Private_Clean, Shared_Clean, ...)."""
    out = {}
    try:
        with open("/proc/self/smaps_rollup") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 3 and parts[2] == "kB":
                    out[parts[0].rstrip(":")] = int(parts[1])
    except OSError:
        pass
    return out


def deep_size(obj, seen=None, depth=0) -> int:
    """Bytes of ``obj`` and what it holds (containers, numpy arrays: a memory map counts 0), not following
    agents, trees or strategies (shared with the rest of the process)."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 8:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.memmap) or (isinstance(obj, np.ndarray) and isinstance(obj.base, np.memmap)):
        return 0
    if isinstance(obj, np.ndarray):
        return obj.nbytes + 112
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        return size + sum(deep_size(k, seen, depth + 1) + deep_size(v, seen, depth + 1) for k, v in obj.items())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return size + sum(deep_size(v, seen, depth + 1) for v in obj)
    return size


def cache_bytes(d, sample: int = 200) -> int:
    n = len(d)
    if n == 0:
        return 0
    items = list(d.items())[:sample] if isinstance(d, dict) else list(d)[:sample]
    seen = set()
    per = sum(deep_size(x, seen) for x in items) / len(items)
    return int(per * n + sys.getsizeof(d))


def table_bytes(table):
    if table is None:
        return 0, 0
    own = mapped = 0
    for x in list(table.D) + list(table.S):
        if isinstance(x, np.memmap) or isinstance(getattr(x, "base", None), np.memmap):
            mapped += x.nbytes
        else:
            own += x.nbytes
    return own, mapped


def breakdown() -> list:
    """(what, entries, bytes) of the value functions of the worker's agents, largest first."""
    rows = []
    seen_tables = set()
    for (spec, _), agent in ladder_mod._AGENTS.items():
        vfs = []
        if getattr(agent, "_value_function", None) is not None:
            vfs.append(("self-play", agent._value_function))
        for key, vf in getattr(agent, "__dict__", {}).get("_fitted", {}).items():
            vfs.append((f"fitted vs {type(vf.opponent).__name__}", vf))
        for what, vf in vfs:
            name = f"{os.path.basename(spec)} {what}"
            tables = [vf.table] + list(getattr(vf, "fitted", {}).values())
            for t in tables:
                if t is None or id(t) in seen_tables:
                    continue
                seen_tables.add(id(t))
                own, mapped = table_bytes(t)
                rows.append((f"{name}: table D/S (own)", 0, own))
                rows.append((f"{name}: table D/S (mapped file)", 0, mapped))
                rows.append((f"{name}: table.closing", len(t.closing), cache_bytes(t.closing)))
                rows.append((f"{name}: table closing rows", len(t._closing_rows), cache_bytes(t._closing_rows)))
            sh = vf._shared
            for attr, val in sorted(vars(sh).items()):
                if isinstance(val, dict):
                    rows.append((f"{name}: shared.{attr}", len(val), cache_bytes(val)))
            for pol in sh._policies.values():
                for attr in ("_tables", "_rows", "_follow"):
                    val = getattr(pol, attr, None)
                    if isinstance(val, dict):
                        rows.append((f"{name}: policy.{attr}", len(val), cache_bytes(val)))
            plans = vf._plans
            if plans is not None:
                for attr, val in sorted(vars(plans).items()):
                    if isinstance(val, dict):
                        rows.append((f"{name}: plans.{attr}", len(val), cache_bytes(val)))
            for attr in ("_river", "_offtree", "_lines", "_deals_one_step"):
                val = getattr(vf, attr, None)
                if isinstance(val, dict):
                    rows.append((f"{name}: {attr}", len(val), cache_bytes(val)))
    return sorted(rows, key=lambda r: -r[2])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("agents", nargs="+")
    ap.add_argument("--deals", type=int, default=400)
    ap.add_argument("--block", type=int, default=50)
    ap.add_argument("--fit", type=int, default=300, help="--fit-opponent deals")
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--dir", default="/tmp/ladder_memory")
    ap.add_argument("--again", action="store_true", help="keep the stored fitted tables (a resume); new database")
    ap.add_argument("--no-store", action="store_true", help="do not store the fitted tables (the code before)")
    ap.add_argument("--cache-gb", type=float, default=None, help="run_ladder's cache_gb (default None: no budget)")
    ap.add_argument("--tracemalloc", action="store_true")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()

    os.makedirs(args.dir, exist_ok=True)
    db = os.path.join(args.dir, "ladder.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    fits = os.path.join(args.dir, "ladder.fits")  # cfrkit.platform.ladder.fits_dir(db)
    if not args.again and os.path.isdir(fits):
        shutil.rmtree(fits)
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start(1)
    t0, c0 = time.perf_counter(), time.process_time()
    extra = {}
    params = inspect.signature(run_ladder).parameters
    if "store_fits" in params:  # the code before (PYTHONPATH=/work/main) has neither: it stores nothing
        extra["store_fits"] = not args.no_store
    if "cache_gb" in params:
        extra["cache_gb"] = args.cache_gb
    res = run_ladder(args.agents, args.deals, db, block=args.block, seed=args.seed, fit_opponent_deals=args.fit,
                     **extra)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    mem = smaps()
    import sqlite3

    with sqlite3.connect(db) as con:  # the blocks after each pair's first (those pay no fit in any version)
        later = con.execute("SELECT SUM(hands), SUM(cpu_seconds), COUNT(*) FROM ladder_blocks "
                            "WHERE block > 0").fetchone()
    import cfrkit
    from cfrkit.agents import blueprint_values as bv

    print(f"cfrkit from {os.path.dirname(cfrkit.__file__)}; agents {' '.join(args.agents)}; {args.deals} deals per "
          f"pair in blocks of {args.block}, fit {args.fit} deals, store "
          f"{'off' if args.no_store or 'store_fits' not in extra else ('reused' if args.again else 'written')}, "
          f"caches' budget {args.cache_gb} GB")
    live = len(getattr(bv, "_LIVE", ()))
    if args.cache_gb is not None and live:
        print(f"  value functions alive: {live}; cache bounds scaled by "
              f"{min(1.0, args.cache_gb * 1e9 / (live * 450e6)):.3f} during the run")
    print(f"run: {res.hands} hands, {res.cpu_seconds:.1f} CPU s in blocks ({res.hands_per_cpu_second:.1f} hands per "
          f"CPU s), {cpu:.1f} CPU s in all (set-up and fits included), {wall:.1f} s wall, load "
          f"{os.getloadavg()[0]:.2f}")
    if later[2]:
        print(f"blocks after each pair's first: {later[2]} blocks, {later[0]} hands in {later[1]:.2f} CPU s: "
              f"{later[0] / later[1]:.1f} hands per CPU s")
    print(f"memory: max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB; now RSS "
          f"{mem.get('Rss', 0) / 1e6:.2f} GB = the process's own (anonymous) {mem.get('Anonymous', 0) / 1e6:.2f} GB + "
          f"file pages (mapped tables, libraries; the page cache's, shared) "
          f"{(mem.get('Rss', 0) - mem.get('Anonymous', 0)) / 1e6:.2f} GB")
    rows = breakdown()
    print(f"{'value functions of the worker: what':<70} {'entries':>9} {'MB':>9}")
    for what, n, b in rows[:args.top]:
        print(f"{what:<70} {n:>9} {b / 1e6:>9.1f}")
    print(f"{'sum of the above (all rows)':<70} {'':>9} {sum(r[2] for r in rows) / 1e6:>9.1f}")
    if args.tracemalloc:
        import tracemalloc

        snap = tracemalloc.take_snapshot()
        print("tracemalloc: the source lines holding the most")
        for st in snap.statistics("lineno")[:15]:
            print(f"  {st.size / 1e6:9.1f} MB  {st.count:9d} blocks  {st.traceback}")


if __name__ == "__main__":
    main()
