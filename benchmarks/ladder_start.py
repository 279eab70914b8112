"""CPU seconds of a ladder run outside its blocks: the parent's and each worker's start (issue 27, match-speed13).

Runs :func:`cfrkit.platform.ladder.run_ladder` once in this process (the checkout on ``PYTHONPATH``) and prints
one JSON line: wall seconds, this process's CPU seconds (imports, agents, the schedule, and with forked workers
what it builds for them), the workers' CPU seconds (``RUSAGE_CHILDREN`` once the pool is gone), the blocks' CPU
seconds as the ladder counts them, and per worker the difference (its start outside the blocks), the peak resident
memory of this process and of the largest worker, with the load average.  The machine is shared: compare CPU seconds, and run the checkouts alternately.

    mkdir -p /tmp/ls/a && cp /work/runs/bp2h/bp2h.npz /tmp/ls/
    PYTHONPATH=/work/main python benchmarks/ladder_start.py always-call blueprint:/tmp/ls/bp2h.npz \\
        --deals 400 --block 100 --processes 2 --db /tmp/ls/a/main.db
    PYTHONPATH=$PWD python benchmarks/ladder_start.py always-call blueprint:/tmp/ls/bp2h.npz \\
        --deals 400 --block 100 --processes 2 --db /tmp/ls/a/branch.db

``--fits DIR``: the stored tables' directory to use (symlinked as the database's ``.fits``: a warm store shared by
runs with their own databases); without it the run builds and stores them (a first run).  ``--keep``: keep the
database (default: deleted before the run, so every run plays its blocks).
"""
import argparse
import json
import os
import resource
import shutil
import time


def main() -> None:
    t0, w0 = time.process_time(), time.perf_counter()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("agents", nargs="+", help="registry specs")
    ap.add_argument("--deals", type=int, default=400, help="deals per pair (2 hands each)")
    ap.add_argument("--block", type=int, default=100)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--db", required=True, help="the ladder's SQLite file (deleted first unless --keep)")
    ap.add_argument("--fits", default=None, help="a stored tables directory to use as the database's .fits")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--start-method", default=None, help="fork / spawn (the checkout's default when absent)")
    args = ap.parse_args()
    from cfrkit.platform.ladder import fits_dir, run_ladder

    if not args.keep:
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(args.db + suffix):
                os.unlink(args.db + suffix)
    fits = fits_dir(args.db)
    if args.fits:
        if os.path.islink(fits) or os.path.isfile(fits):
            os.unlink(fits)
        elif os.path.isdir(fits):
            shutil.rmtree(fits)
        os.symlink(os.path.abspath(args.fits), fits)
    kw = {} if args.start_method is None else {"start_method": args.start_method}
    res = run_ladder(args.agents, args.deals, args.db, block=args.block, processes=args.processes, progress=False,
                     **kw)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers = kids.ru_utime + kids.ru_stime
    parent = time.process_time() - t0
    procs = max(1, args.processes)
    print(json.dumps({
        "agents": args.agents, "hands": res.hands, "blocks": res.blocks, "processes": args.processes,
        "wall_s": round(time.perf_counter() - w0, 2), "parent_cpu_s": round(parent, 2),
        "workers_cpu_s": round(workers, 2), "blocks_cpu_s": round(res.cpu_seconds, 2),
        "start_cpu_s_per_worker": round((workers - res.cpu_seconds) / procs, 2) if procs > 1 else None,
        "all_cpu_s": round(parent + workers, 2), "blocks_hands_per_cpu_s": round(res.hands_per_cpu_second, 1),
        "parent_max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0),
        "largest_worker_max_rss_mb": round(kids.ru_maxrss / 1024.0),
        "load": float(open("/proc/loadavg").read().split()[0])}), flush=True)


if __name__ == "__main__":
    main()
