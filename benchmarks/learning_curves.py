"""Print a learner's learning curve (score against environment steps, CPU and wall time) as a
markdown table, from the run's ``scalars.csv``.

    python benchmarks/learning_curves.py runs/ippo [--every 10]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cfrkit.agents.rl import read_scalars  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="run directory holding scalars.csv")
    ap.add_argument("--every", type=int, default=10, help="keep rows whose evaluation column is set, every N")
    args = ap.parse_args()
    rows = read_scalars(os.path.join(args.run, "scalars.csv"))
    score = "eval_score" if "eval_score" in rows[0] else "eval_reward"
    train = "train_score" if "train_score" in rows[0] else "train_reward"
    print(f"| iteration | env steps | CPU s | wall s | {train} (sampling) | {score} (greedy) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if r[score] != "" and int(r["iteration"]) % args.every == 0 or r is rows[-1] and r[score] != "":
            print(f"| {r['iteration']} | {int(float(r['env_steps'])):,} | {float(r['cpu_seconds']):.0f} | "
                  f"{float(r['wall_seconds']):.0f} | {float(r[train]):.2f} | {float(r[score]):.2f} |")


if __name__ == "__main__":
    main()
