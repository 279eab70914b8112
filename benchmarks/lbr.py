"""LBR in heads-up no-limit hold'em (50/100, 200 bb) against simple agents, four settings.

    python benchmarks/lbr.py [--deals 40] [--processes 2] [--agents always-fold,always-call,random,fixed-range-raiser]
    python benchmarks/lbr.py --agents blueprint:/work/runs/bp_s0.npz --deals 2000 [--settings FC/1-4,FCPA/3-4]
                             [--calling-range] [--preflop-samples 1000]
    python benchmarks/lbr.py --leduc [--deepstack-iterations 100]
    python benchmarks/lbr.py --agents blueprint:/work/runs/bp2h/bp2h.npz --deals 50000 --chunk 2500 \
                             --checkpoint-dir lbr-bp2h        # resumable: run the same command again

Prints a markdown table of LBR's winnings (mbb/g, 95% interval) under FC/1-4, FC/3-4, FCPA/1-4 and
FCPA/3-4 beside the published figures of the DeepStack supplement (always-fold, Slumbot 2016,
DeepStack), and LBR's speed per setting (all agents, ``--processes`` worker processes): hands per
wall second and hands per CPU second (this process and its finished workers, ``resource.getrusage``;
the machine is shared, so CPU seconds are the steadier figure), with the load average.
``--preflop-samples 1000`` reproduces the method before issue 27 (1,000 sampled boards preflop).
``--checkpoint-dir DIR``: each (agent, setting) keeps its finished chunks in
``DIR/<agent>-<setting>.npz`` (:func:`cfrkit.evaluation.lbr.run_lbr`'s checkpoint), so a killed run
resumes and more ``--deals`` extend the same deals; hands/s then count the chunks run this time only.
Each result line also gives the per-deal standard deviation (mbb/g) and the deals its interval
needs to reach +-``--target`` mbb/g (1.96 sd / sqrt(n)).  ``--startup``: time a run of one deal
per worker first (process start, imports, the agent sent to each worker).
No public LBR runs on real no-limit betting to time against (PokerRL's runs on discretised games
only and is not installed), so there is no peer ratio.

``--leduc``: exact LBR values (compiled-tree walk, no sampling) on Leduc and no-limit Leduc beside
the exact best response, for uniform random, CFR+ after 10 / 100 / 1000 iterations and the DeepStack
agent (exact leaf values, ``--deepstack-iterations`` per re-solve), in mbb/g.
"""
import argparse
import math
import os
import resource
import time

PUBLISHED = {  # DeepStack supplement, LBR columns in its order; see docs/evaluation.md on the column mapping
    "always-fold": (250, 750, 750, 750),
    "Slumbot 2016": (522, 4020, 3763, 1227),
    "DeepStack": (-428, -383, -775, -602),
}
SETTINGS = ("FC/1-4", "FC/3-4", "FCPA/1-4", "FCPA/3-4")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=40, help="deals per cell (each played in both seats)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--agents", default="always-fold,always-call,random,fixed-range-raiser")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--settings", default=",".join(SETTINGS), help="comma-separated LBR settings")
    parser.add_argument("--calling-range", action="store_true", help="LBR values called bets against the calling range")
    parser.add_argument("--preflop-samples", type=int, default=None, help="sampled preflop boards (default: exact table)")
    parser.add_argument("--chunk", type=int, default=None, help="deals per task (default deals / (2 processes))")
    parser.add_argument("--leduc", action="store_true", help="exact LBR vs exact BR on the Leduc family instead")
    parser.add_argument("--deepstack-iterations", type=int, default=100)
    parser.add_argument("--checkpoint-dir", default=None, help="resumable: one checkpoint per agent and setting")
    parser.add_argument("--target", type=float, default=150.0, help="interval half-width (mbb/g) to size runs for")
    parser.add_argument("--startup", action="store_true", help="time the worker start-up alone first")
    parser.add_argument("--start-method", default="spawn", choices=("spawn", "fork", "forkserver"),
                        help="how worker processes start (fork: nearly free, POSIX only)")
    args = parser.parse_args()
    if args.leduc:
        leduc_table(args.deepstack_iterations)
        return

    from cfrkit.poker import make_agent
    from cfrkit.evaluation.lbr import run_lbr, settings_from

    names = args.agents.split(",")
    settings = args.settings.split(",")
    cells = {}
    speed = {s: [0, 0.0, 0.0] for s in settings}
    for name in names:
        agent = make_agent(name, seed=1)
        if args.startup and args.processes > 1:
            start, cpu = time.perf_counter(), _cpu_seconds()
            run_lbr(agent, getattr(agent, "game", "holdem"), args.processes, settings_from("FC", "4"),
                    seed=args.seed, processes=args.processes, chunk=1, start_method=args.start_method)
            print(f"{name:20s} start-up of {args.processes} workers and one deal each: "
                  f"{time.perf_counter() - start:.1f} s, {_cpu_seconds() - cpu:.1f} CPU s, "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
        for setting in settings:
            bets, rounds = setting.split("/")
            lbr_settings = settings_from(bets, rounds, calling_range=args.calling_range,
                                         preflop_samples=args.preflop_samples)
            checkpoint = None
            if args.checkpoint_dir:
                os.makedirs(args.checkpoint_dir, exist_ok=True)
                label = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in f"{name}-{lbr_settings.label()}")
                checkpoint = os.path.join(args.checkpoint_dir, f"{label}-s{args.seed}.npz")
            chunk = args.chunk or max(1, args.deals // (2 * args.processes))
            resumed = _finished_deals(checkpoint, args.deals, chunk)
            start, cpu = time.perf_counter(), _cpu_seconds()
            res = run_lbr(agent, getattr(agent, "game", "holdem"), args.deals, lbr_settings,
                          seed=args.seed, processes=args.processes,
                          chunk=chunk, checkpoint=checkpoint,
                          start_method=args.start_method)
            took, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
            hands = 2 * (args.deals - resumed)
            speed[setting][0] += hands
            speed[setting][1] += took
            speed[setting][2] += cpu
            cells[(name, setting)] = res
            sd = res.ci95 * math.sqrt(res.deals) / 1.96
            need = math.ceil((1.96 * sd / args.target) ** 2) if math.isfinite(sd) else float("nan")
            print(f"{name:20s} {setting:9s} {res.mbb_per_game:+9.0f} +- {res.ci95:7.0f} mbb/g  "
                  f"(seats {res.seat_mbb[0]:+.0f} / {res.seat_mbb[1]:+.0f}; {res.deals} deals, per-deal sd {sd:,.0f}, "
                  f"+-{args.target:g} needs {need:,} deals; {hands} hands run in {took:.1f} s = "
                  f"{hands / max(took, 1e-9):.1f} hands/s, {cpu:.1f} CPU s, load {os.getloadavg()[0]:.1f})", flush=True)
    print()
    print("| agent | " + " | ".join(settings) + " |")
    print("|---|" + "---|" * len(settings))
    for name in names:
        row = [f"{cells[(name, s)].mbb_per_game:+.0f} +- {cells[(name, s)].ci95:.0f}" for s in settings]
        print(f"| {name} (cfrkit, {args.deals} deals) | " + " | ".join(row) + " |")
    if settings == list(SETTINGS):
        for name, vals in PUBLISHED.items():
            print(f"| {name} (published) | " + " | ".join(f"{v:,}" for v in vals) + " |")
    print()
    print("| LBR setting | hands/s (" + f"{args.processes} processes) | hands per CPU second |")
    print("|---|---|---|")
    for s in settings:
        n, t, c = speed[s]
        print(f"| {s} | {n / max(t, 1e-9):.1f} | {n / max(c, 1e-9):.1f} |")


def _finished_deals(checkpoint, deals: int, chunk: int) -> int:
    """Deals a run of ``deals`` in chunks of ``chunk`` takes from ``checkpoint`` (run_lbr's reuse rule: a
    finished chunk with the same bounds)."""
    if not checkpoint or not os.path.exists(checkpoint):
        return 0
    import numpy as np

    with np.load(checkpoint) as data:
        done, old_deals = data["done"], len(data["values"])
    count = 0
    for k, s in enumerate(range(0, deals, chunk)):
        if k < len(done) and done[k] and min(old_deals, s + chunk) == min(deals, s + chunk):
            count += min(deals, s + chunk) - s
    return count


def _cpu_seconds() -> float:
    """CPU seconds of this process and its reaped children (the worker processes of finished runs)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def leduc_table(ds_iterations: int) -> None:
    from cfrkit.agents.leduc_agents import LeducDeepStackAgent, LeducPolicyAgent, make_leduc_agent
    from cfrkit.evaluation.lbr import exact_best_response_values, exact_lbr_values, settings_from
    from cfrkit.poker.view import poker_view
    from cfrkit.solvers import CFRSolver

    print("| game | agent | LBR FC/1-2 | LBR FCPA/1-2 | exact BR | LBR <= BR per seat |")
    print("|---|---|---|---|---|---|")
    for game in ("leduc", "leduc_nolimit"):
        scale = 1000.0 / poker_view(game).big_blind
        agents = [make_leduc_agent("random", game)]
        solver = CFRSolver(game, algorithm="cfr+")
        for n in (10, 100, 1000):
            solver.run(n)
            agents.append(LeducPolicyAgent(solver.average_policy(), game, name=f"CFR+ {n}"))
        agents.append(LeducDeepStackAgent(game, iterations=ds_iterations))
        for agent in agents:
            start = time.perf_counter()
            br = exact_best_response_values(agent, game)
            fc = exact_lbr_values(agent, game, settings_from("FC", "1-2", num_rounds=2))
            fcpa = exact_lbr_values(agent, game, settings_from("FCPA", "1-2", num_rounds=2))
            ok = all(v[s] <= br[s] + 1e-9 for v in (fc, fcpa) for s in (0, 1))
            name = agent.name if agent.name != "deepstack" else f"DeepStack ({ds_iterations} it.)"
            print(f"| {game} | {name} | {sum(fc) / 2 * scale:+.0f} | {sum(fcpa) / 2 * scale:+.0f} | "
                  f"{sum(br) / 2 * scale:+.0f} | {'yes' if ok else 'NO'} |  <!-- {time.perf_counter() - start:.0f} s -->",
                  flush=True)


if __name__ == "__main__":
    main()
