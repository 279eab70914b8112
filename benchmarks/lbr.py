"""LBR in heads-up no-limit hold'em (50/100, 200 bb) against simple agents, four settings.

    python benchmarks/lbr.py [--deals 40] [--processes 2] [--agents always-fold,always-call,random,fixed-range-raiser]

Prints a markdown table of LBR's winnings (mbb/g, 95% interval) under FC/1-4, FC/3-4, FCPA/1-4 and
FCPA/3-4 beside the published figures of the DeepStack supplement (always-fold, Slumbot 2016,
DeepStack), and LBR's speed in hands/s per setting (all agents, ``--processes`` worker processes).
No public LBR runs on real no-limit betting to time against (PokerRL's runs on discretised games
only and is not installed), so there is no peer ratio.
"""
import argparse
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
    args = parser.parse_args()

    from cfrkit.agents.poker import make_agent
    from cfrkit.evaluation.lbr import run_lbr, settings_from

    names = args.agents.split(",")
    cells = {}
    speed = {s: [0, 0.0] for s in SETTINGS}
    for name in names:
        for setting in SETTINGS:
            bets, rounds = setting.split("/")
            start = time.perf_counter()
            res = run_lbr(make_agent(name, seed=1), "holdem", args.deals, settings_from(bets, rounds), seed=args.seed,
                          processes=args.processes, chunk=max(1, args.deals // (2 * args.processes)))
            took = time.perf_counter() - start
            speed[setting][0] += 2 * args.deals
            speed[setting][1] += took
            cells[(name, setting)] = res
            print(f"{name:20s} {setting:9s} {res.mbb_per_game:+9.0f} +- {res.ci95:7.0f} mbb/g  "
                  f"({2 * args.deals} hands, {took:.1f} s)", flush=True)
    print()
    print("| agent | " + " | ".join(SETTINGS) + " |")
    print("|---|" + "---|" * len(SETTINGS))
    for name in names:
        row = [f"{cells[(name, s)].mbb_per_game:+.0f} +- {cells[(name, s)].ci95:.0f}" for s in SETTINGS]
        print(f"| {name} (cfrkit, {args.deals} deals) | " + " | ".join(row) + " |")
    for name, vals in PUBLISHED.items():
        print(f"| {name} (published) | " + " | ".join(f"{v:,}" for v in vals) + " |")
    print()
    print("| LBR setting | hands/s (" + f"{args.processes} processes) |")
    print("|---|---|")
    for s in SETTINGS:
        n, t = speed[s]
        print(f"| {s} | {n / t:.1f} |")


if __name__ == "__main__":
    main()
