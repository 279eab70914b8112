"""CPU seconds per hand of one pair on two source trees at the same time (issue 27's per-hand A/B).

Each round starts ``benchmarks/match_speed.py`` (one AIVAT block of ``--deals`` duplicate deals, timed in CPU seconds
by ``time.process_time``) once per tree, the two processes side by side so that both see the same machine load, the
first started alternating by round (A B, B A, ...).  Prints each round's rates, the per-deal values' hashes (equal
hashes = the same numbers bit for bit) and the load, then the mean CPU s per hand of each tree and their ratio.

    python benchmarks/match_speed_ab.py /work/main $PWD always-call blueprint:/tmp/ms14/bp2h.npz --deals 1200 --rounds 6
"""
import argparse
import json
import os
import subprocess
import sys
import time

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "match_speed.py")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", help="source tree of the before (its cfrkit is imported: PYTHONPATH)")
    ap.add_argument("after", help="source tree of the after")
    ap.add_argument("agents", nargs=2, help="the pair's registry specs")
    ap.add_argument("--deals", type=int, default=1200, help="deals per block (2 hands each)")
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    if args.rounds < 1 or args.deals < 1:
        sys.exit("match_speed_ab: --rounds and --deals must be >= 1")
    cpu = {"before": [], "after": []}
    hashes = set()
    for r in range(args.rounds):
        order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
        procs = {}
        for name in order:
            env = dict(os.environ, PYTHONPATH=os.path.abspath(getattr(args, name)))
            procs[name] = subprocess.Popen([sys.executable, SCRIPT, *args.agents, "--deals", str(args.deals),
                                            "--no-plain"], env=env, stdout=subprocess.PIPE, text=True)
            time.sleep(0.5)
        rows = {}
        for name, p in procs.items():
            out, _ = p.communicate()
            if p.returncode != 0:
                sys.exit(f"match_speed_ab: the {name} run failed (exit {p.returncode})")
            rows[name] = json.loads(out.strip().splitlines()[-1])
            cpu[name].append(rows[name]["aivat_cpu_s"] / (2 * args.deals))
            hashes.add(rows[name]["aivat_values_sha256"])
        with open("/proc/loadavg") as fh:
            load = fh.read().split()[0]
        print(f"round {r + 1} ({' first, '.join(order)} second): before {rows['before']['aivat_hands_per_cpu_s']} / "
              f"after {rows['after']['aivat_hands_per_cpu_s']} hands per CPU s, ratio "
              f"{cpu['before'][-1] / cpu['after'][-1]:.3f}, values {rows['before']['aivat_values_sha256']} / "
              f"{rows['after']['aivat_values_sha256']}, load {load}", flush=True)
    b, a = (sum(cpu[k]) / len(cpu[k]) for k in ("before", "after"))
    print(f"mean CPU ms per hand: before {1e3 * b:.4f}, after {1e3 * a:.4f}: {b / a:.3f}x "
          f"({100 * (1 - a / b):.1f}% fewer CPU s per hand); values {'identical' if len(hashes) == 1 else 'DIFFER'}")


if __name__ == "__main__":
    main()
