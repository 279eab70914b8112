"""Evaluate the hold'em DeepStack agent A^D in one command: duplicate head-to-head matches and LBR.

    python benchmarks/deepstack_holdem_eval.py --nets runs/ds_small/nets --iterations 250 --hands 50 \\
        --blueprint runs/blueprint.npz --lbr-deals 25 --out runs/ds_eval [--processes 2]

A^D (:class:`cfrkit.agents.holdem_deepstack.HoldemDeepStackAgent` with the value nets ``--nets`` and
``--iterations`` DCFR iterations per re-solve) plays ``--hands`` deals of ACPC heads-up no-limit
hold'em (200bb, 50/100) against each opponent of ``--opponents``, every deal in both seats (duplicate),
with AIVAT (A^D's known strategy at its decisions, the equity value function at chance), through
:func:`cfrkit.evaluation.headtohead.head_to_head` -- what ``cfrkit match deepstack-holdem:nets=DIR,iterations=N
OPP --duplicate --aivat`` runs, split into chunks of ``--chunk`` deals:

* ``rule-based`` (A^R), ``blueprint`` (A^C: a ``cfrkit blueprint train`` file, ``--blueprint``; skipped
  without one), ``always-call``, ``fixed-range-raiser`` (raises a pot with 88+/ATs+/KQs/AJo+, calls
  nothing else), ``random``;

then LBR (:func:`cfrkit.evaluation.lbr.run_lbr`, ``--lbr-deals`` deals in both seats) for each setting of
``--lbr-settings`` (default FC and FCPA on rounds 1-4 and 3-4).  Results are in mbb/hand of A^D
(positive: A^D wins) and, for LBR, mbb/game LBR wins against A^D (a lower bound on its exploitability),
each with a 95% interval.

Resumable: every finished chunk is written at once to ``OUT/h2h-<opponent>.json`` (hand values, AIVAT
values, deal index, seat, CPU seconds) and every LBR chunk to ``OUT/lbr-<setting>.npz`` (run_lbr's
checkpoint), with each setting's result in ``OUT/lbr-<setting>.json``; re-running the command skips
what is done (raise ``--hands`` / ``--lbr-deals`` to extend; ``--hands 100,random=20`` gives an opponent its own
count).  ``--processes 2`` runs chunks in two
worker processes (each keeps its agents, so A^D's preflop root solve is paid once per process).
Progress: a tqdm bar per opponent (hands) and per LBR setting (deals).  At the end a table of all
results is printed and written to ``OUT/summary.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

OPPONENTS = ("rule-based", "blueprint", "always-call", "fixed-range-raiser", "random")
LABELS = {"rule-based": "A^R", "blueprint": "A^C"}
_AGENTS = {}  # per process: built agents by spec (A^D keeps its preflop root solve between chunks)


def _ds_spec(nets: str, iterations: int) -> str:
    return f"deepstack-holdem:nets={nets},iterations={int(iterations)}"


def _agent(spec: str, seed: int, blueprint=None):
    key = (spec, seed, blueprint)
    if key not in _AGENTS:
        from cfrkit.poker import make_agent

        _AGENTS[key] = make_agent(spec, seed=seed, **({"policy_path": blueprint} if blueprint else {}))
    return _AGENTS[key]


def play_chunk(nets: str, iterations: int, opponent: str, blueprint, seed: int, first: int, count: int,
               aivat: bool, progress: bool = False) -> dict:
    """Deals ``first .. first + count - 1`` of A^D against ``opponent`` (duplicate; AIVAT if ``aivat``):
    chips A^D won per hand played, AIVAT values, deal indices, A^D's seats, and the CPU seconds."""
    import torch

    from cfrkit.evaluation.headtohead import head_to_head

    torch.set_num_threads(1)
    cpu = time.process_time()
    ds = _agent(_ds_spec(nets, iterations), seed)
    opp = _agent(opponent, seed + 1, blueprint if opponent == "blueprint" else None)
    # each chunk's action sampling from its own seed: a chunk plays the same whichever process runs it, and
    # when (resumed runs)
    for k, a in enumerate((ds, opp)):
        if isinstance(getattr(a, "rng", None), np.random.Generator):
            a.rng = np.random.default_rng([seed, k, first])
    res = head_to_head("holdem", [ds, opp], count, seed=seed, duplicate=True, aivat=aivat, progress=progress,
                       time_limit=float("inf"), first_deal=first)
    return {"first": int(first), "count": int(count), "values": res.hand_values.tolist(),
            "aivat": None if res.aivat_values is None else res.aivat_values.tolist(),
            "deal": res.hand_deal.tolist(), "seat": res.hand_seat.tolist(),
            "cpu_seconds": time.process_time() - cpu}


def _load(path: str, header: dict) -> dict:
    if not os.path.exists(path):
        return {"header": header, "chunks": {}}
    with open(path) as f:
        data = json.load(f)
    if data.get("header") != header:
        raise SystemExit(f"{path} was written with {data.get('header')}, this run has {header}: use another --out")
    return data


def _save(path: str, data: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def summarise_h2h(data: dict, hands: int, big_blind: float = 100.0) -> dict:
    """Estimates (mbb/hand of A^D, 95% intervals) over the finished chunks of the first ``hands`` deals."""
    from dataclasses import asdict

    from cfrkit.poker.match import estimate

    chunks = sorted((c for c in data["chunks"].values() if c["first"] < hands), key=lambda c: c["first"])
    if not chunks:
        return {"deals": 0}
    v = np.concatenate([np.asarray(c["values"], dtype=np.float64) for c in chunks])
    scale = 1000.0 / big_blind
    out = {"deals": int(len(v) // 2), "hands_played": int(len(v)),
           "plain": asdict(estimate(v * scale)),
           "duplicate": asdict(estimate(v.reshape(-1, 2).mean(1) * scale, 2)),
           "cpu_seconds_per_hand": float(sum(c["cpu_seconds"] for c in chunks) / len(v))}
    if all(c["aivat"] is not None for c in chunks):
        a = np.concatenate([np.asarray(c["aivat"], dtype=np.float64) for c in chunks])
        out["aivat"] = asdict(estimate(a.reshape(-1, 2).mean(1) * scale, 2))
    return out


def parse_hands(text: str, opponents) -> dict:
    """``--hands``: ``N`` deals for every opponent, or ``N,OPPONENT=M,...`` to give some opponents their own count
    (``40,random=10``: 40 deals each, 10 against ``random``).  Raises ValueError with a one-line reason."""
    counts, default = {}, None
    for part in (p.strip() for p in str(text).split(",") if p.strip()):
        name, eq, value = part.rpartition("=")
        try:
            n = int(value)
        except ValueError:
            raise ValueError(f"--hands: {part!r} is not N or OPPONENT=N") from None
        if n < 0:
            raise ValueError(f"--hands: {part!r} is negative")
        if not eq:
            default = n
        elif name.strip() not in OPPONENTS:
            raise ValueError(f"--hands: unknown opponent {name.strip()!r}; known: {', '.join(OPPONENTS)}")
        else:
            counts[name.strip()] = n
    if default is None and any(o not in counts for o in opponents):
        raise ValueError("--hands needs a plain count N for the opponents not named in it")
    return {o: counts.get(o, default) for o in opponents}


def head_to_head(args, opponent: str, hands: int) -> dict:
    from tqdm.auto import tqdm

    header = {"nets": os.path.abspath(args.nets), "iterations": args.iterations, "opponent": opponent,
              "blueprint": os.path.abspath(args.blueprint) if opponent == "blueprint" else None,
              "seed": args.seed, "chunk": args.chunk, "aivat": not args.no_aivat}
    path = os.path.join(args.out, f"h2h-{opponent}.json")
    data = _load(path, header)
    todo = [s for s in range(0, hands, args.chunk) if str(s) not in data["chunks"]]
    done_hands = sum(2 * min(c["count"], hands - c["first"]) for c in data["chunks"].values()
                     if c["first"] < hands)
    name = LABELS.get(opponent, opponent)
    bar = tqdm(total=2 * hands, initial=done_hands, desc=f"A^D vs {name}", unit="hand")

    def finish(out):
        data["chunks"][str(out["first"])] = out
        _save(path, data)
        bar.update(2 * out["count"])
        est = summarise_h2h(data, hands)
        key = "aivat" if "aivat" in est else "duplicate"
        bar.set_postfix_str(f"{key} {est[key]['mean']:+.0f} +- {est[key]['ci95']:.0f} mbb/h")

    jobs = [(args.nets, args.iterations, opponent, args.blueprint, args.seed, s, min(args.chunk, hands - s),
             not args.no_aivat) for s in todo]
    try:
        if args.processes > 1 and len(jobs) > 1:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor, as_completed

            with ProcessPoolExecutor(max_workers=args.processes, mp_context=mp.get_context("spawn")) as pool:
                futures = [pool.submit(play_chunk, *job) for job in jobs]
                for fut in as_completed(futures):
                    finish(fut.result())
        else:
            for job in jobs:   # in this process: a bar per hand inside the chunk too
                finish(play_chunk(*job, progress=True))
    finally:
        bar.close()
    return summarise_h2h(data, hands)


def lbr(args, setting: str) -> dict:
    from cfrkit.evaluation.lbr import run_lbr, settings_from

    bets, rounds = setting.split("/")
    ds = _agent(_ds_spec(args.nets, args.iterations), args.seed)
    label = setting.replace("/", "_")
    w, c = time.perf_counter(), time.process_time()
    res = run_lbr(ds, "holdem", args.lbr_deals, settings_from(bets, rounds), seed=args.seed,
                  processes=args.processes, chunk=args.lbr_chunk,
                  checkpoint=os.path.join(args.out, f"lbr-{label}.npz"), progress=True, time_limit=float("inf"))
    out = res.to_dict()
    out.update(wall_seconds_this_run=time.perf_counter() - w, cpu_seconds_this_process=time.process_time() - c)
    _save(os.path.join(args.out, f"lbr-{label}.json"), out)
    return out


def table(results: dict, args) -> str:
    lines = [f"A^D: nets {args.nets}, {args.iterations} DCFR iterations per re-solve; seed {args.seed}",
             f"{'opponent':20s} {'deals':>5s} {'plain mbb/h':>16s} {'duplicate mbb/h':>16s} {'AIVAT mbb/h':>16s} "
             f"{'CPU s/hand':>10s}"]

    def fmt(e):
        return f"{e['mean']:+8.0f} +- {e['ci95']:<5.0f}" if e else f"{'-':>16s}"

    for opp, r in results.get("h2h", {}).items():
        if not r.get("deals"):
            lines.append(f"{LABELS.get(opp, opp):20s} {'0':>5s}   (skipped or nothing finished: {r.get('note', '')})")
            continue
        lines.append(f"{LABELS.get(opp, opp) + ' (' + opp + ')' if opp in LABELS else opp:20s} {r['deals']:5d} "
                     f"{fmt(r['plain'])} {fmt(r['duplicate'])} {fmt(r.get('aivat'))} {r['cpu_seconds_per_hand']:10.1f}")
    if results.get("lbr"):
        lines.append(f"\n{'LBR setting':20s} {'deals':>5s} {'LBR wins mbb/g':>18s}  seats")
        for s, r in results["lbr"].items():
            lines.append(f"{s:20s} {r['deals']:5d} {r['mbb_per_game']:+9.0f} +- {r['ci95']:<6.0f} "
                         f"{r['seat_mbb'][0]:+.0f} / {r['seat_mbb'][1]:+.0f}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nets", required=True, help="hold'em value nets directory (HoldemValueNets)")
    p.add_argument("--iterations", type=int, default=250, help="DCFR iterations per re-solve (default 250)")
    p.add_argument("--hands", default="20", help="deals per opponent, each played in both seats: N, or "
                   "N,OPPONENT=M,... for per-opponent counts (e.g. 40,random=10)")
    p.add_argument("--opponents", default=",".join(OPPONENTS), help=f"comma-separated, from {', '.join(OPPONENTS)}")
    p.add_argument("--blueprint", default=None, help="A^C: a blueprint .npz from `cfrkit blueprint train`")
    p.add_argument("--lbr-deals", type=int, default=0, help="LBR deals per setting (both seats; 0: no LBR)")
    p.add_argument("--lbr-settings", default="FC/1-4,FCPA/1-4,FC/3-4,FCPA/3-4", help="comma-separated BETS/ROUNDS")
    p.add_argument("--out", default="runs/ds_eval", help="results directory (resumed when it exists)")
    p.add_argument("--processes", type=int, default=1, help="worker processes (matches and LBR)")
    p.add_argument("--chunk", type=int, default=2, help="deals per match chunk (the resume granularity)")
    p.add_argument("--lbr-chunk", type=int, default=2, help="deals per LBR chunk (checkpoint granularity)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-aivat", action="store_true")
    args = p.parse_args(argv)
    if args.lbr_deals < 0 or args.chunk <= 0 or args.lbr_chunk <= 0 or args.processes <= 0:
        p.error("--lbr-deals must be >= 0, --chunk, --lbr-chunk and --processes positive")
    if not os.path.isdir(args.nets):
        p.error(f"no nets directory {args.nets}")
    opponents = [o.strip() for o in args.opponents.split(",") if o.strip()]
    bad = [o for o in opponents if o not in OPPONENTS]
    if bad:
        p.error(f"unknown opponent(s) {', '.join(bad)}; known: {', '.join(OPPONENTS)}")
    try:
        hands = parse_hands(args.hands, opponents)
    except ValueError as exc:
        p.error(str(exc))
    if args.blueprint and not os.path.exists(args.blueprint):
        p.error(f"no blueprint file {args.blueprint}")
    if args.blueprint and "blueprint" in opponents:
        try:  # a corrupt or foreign file is refused here, not in a worker
            _agent("blueprint", args.seed, os.path.abspath(args.blueprint))
        except Exception as exc:  # noqa: BLE001  (BlueprintError, GameError, OSError: one line either way)
            p.error(f"blueprint {args.blueprint}: {exc}")
    settings = [s.strip() for s in args.lbr_settings.split(",") if s.strip()]
    for s in settings:
        if s.count("/") != 1:
            p.error(f"LBR setting {s!r} must look like BETS/ROUNDS, e.g. FCPA/3-4")
    os.makedirs(args.out, exist_ok=True)
    results = {"h2h": {}, "lbr": {}}
    for opp in opponents:
        if opp == "blueprint" and not args.blueprint:
            print("A^C (blueprint) skipped: no --blueprint file", flush=True)
            results["h2h"][opp] = {"deals": 0, "note": "no --blueprint"}
            continue
        if hands[opp]:
            results["h2h"][opp] = head_to_head(args, opp, hands[opp])
    if args.lbr_deals:
        for s in settings:
            results["lbr"][s] = lbr(args, s)
    text = table(results, args)
    print("\n" + text, flush=True)
    _save(os.path.join(args.out, "summary.json"),
          dict(results, nets=args.nets, iterations=args.iterations, seed=args.seed, table=text))


if __name__ == "__main__":
    main()
