"""Hanabi convention bots: self-play scores beside the published ones, and games/s beside the rule agents.

For each bot (SmartBot, the hat-guessing Information strategy) and 2-5 players, plays ``--games``
seeded games in the engine kernel and prints

* the mean score with its standard error in the reference programs' own scoring (cards on the
  fireworks, also when the last life is lost -- hanabi.rs and O'Dwyer's framework both count them)
  beside the published mean and the difference in standard errors (for ``smartbot_safe``, the
  Hanabi challenge's SmartBot without life-risking plays, the published figures are HLE scores and
  the difference is taken on the HLE score),
* HLE's score (0 when the last life is lost), the perfect-game rate and the lost-all-lives rate,
* CPU games/s (``time.process_time``, which machine load does not distort) and, timed in the same
  run, the games/s of the C rule agent Piers (the "rule-agent speed" reference).

Usage: ``python benchmarks/hanabi_conventions.py [--games 20000] [--seed 0] [--json out.json]``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from cfrkit._kernels import hanabi_engine as E  # noqa: E402
from cfrkit.agents.hanabi import named_agent, rule_table  # noqa: E402
from cfrkit.agents.hanabi.conventions import PUBLISHED_SCORES  # noqa: E402
from cfrkit.evaluation.hanabi_protocols import seat_matrix  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 5])
    ap.add_argument("--bots", nargs="+", default=["smartbot", "smartbot_safe", "information"])
    ap.add_argument("--rule-games", type=int, default=2000, help="games of Piers timed for the speed reference")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    rows = []
    print(f"{'bot':12s} {'P':>2s} {'played cards':>16s} {'published':>9s} {'diff/se':>8s} {'HLE score':>16s} "
          f"{'perfect':>8s} {'lost':>6s} {'games/s':>8s} {'Piers g/s':>9s}")
    for bot in args.bots:
        for p in args.players:
            cfg = E.EngineConfig(players=p)
            t0, w0 = time.process_time(), time.perf_counter()
            scores, played, moves = E.convention_play_games(cfg, bot, args.games, args.seed)
            cpu, wall = time.process_time() - t0, time.perf_counter() - w0
            piers = named_agent("Piers")
            t1 = time.process_time()
            E.play_games(cfg, rule_table(), seat_matrix([piers] * p), args.rule_games, args.seed)
            rule_cpu = time.process_time() - t1
            pc = played.astype(np.float64)
            hle = scores.astype(np.float64)
            se = pc.std(ddof=1) / np.sqrt(len(pc))
            se_h = hle.std(ddof=1) / np.sqrt(len(hle))
            pub = PUBLISHED_SCORES[bot][p - 2]
            ref, ref_se = (hle.mean(), se_h) if bot == "smartbot_safe" else (pc.mean(), se)
            row = {"bot": bot, "players": p, "games": args.games, "seed": args.seed,
                   "played_mean": pc.mean(), "played_se": se, "published": pub,
                   "hle_mean": hle.mean(), "hle_se": se_h, "perfect_rate": float(np.mean(played == 25)),
                   "lost_all_lives_rate": float(np.mean((scores == 0) & (played > 0))),
                   "moves_per_game": float(moves.mean()),
                   "games_per_cpu_s": args.games / cpu, "games_per_wall_s": args.games / wall,
                   "piers_games_per_cpu_s": args.rule_games / rule_cpu}
            rows.append(row)
            print(f"{bot:12s} {p:2d} {pc.mean():8.3f} +- {se:5.3f} {pub:9.2f} {(ref - pub) / ref_se:8.1f} "
                  f"{hle.mean():8.3f} +- {se_h:5.3f} {100 * row['perfect_rate']:7.1f}% "
                  f"{100 * row['lost_all_lives_rate']:5.1f}% {row['games_per_cpu_s']:8.0f} "
                  f"{row['piers_games_per_cpu_s']:9.0f}", flush=True)
    print(f"load average: {os.getloadavg()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
