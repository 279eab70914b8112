"""A^R (rule-based agent) against the simple baselines in duplicate matches.

Same seeded deals as the platform (``deal_for_hand``), each deal played twice with the seats
swapped (:func:`cfrkit.poker.play_match`); 95% intervals over the deals.

    python benchmarks/rule_based_duplicate.py --hands 20000
"""
import argparse
import time

from cfrkit.games.registry import load
from cfrkit.poker import make_agent, play_match


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=20000, help="hands per opponent (duplicate pairs count twice)")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--game", default="holdem")
    ap.add_argument("--opponents", default="random,always-call,fixed-range-raiser")
    args = ap.parse_args()
    game = load(args.game)
    print(f"A^R vs baselines, {game.game_string()}, {args.hands} hands each, duplicate, seed {args.seed}")
    for opp in args.opponents.split(","):
        t = time.time()
        res = play_match(game, [make_agent("rule-based"), make_agent(opp, seed=args.seed)], -(-args.hands // 2),
                         seed=args.seed, duplicate=True)
        mean, half = res.mbb_per_hand(0)
        verdict = "beats" if mean - half > 0 else "does NOT beat"
        print(f"  vs {opp:20s} {mean:+9.1f} +- {half:7.1f} mbb/h (95%), {len(res.returns)} hands, "
              f"{time.time() - t:6.1f} s  -> A^R {verdict} {opp}", flush=True)


if __name__ == "__main__":
    main()
