"""How much the authors' speech timing moves SymmToM's rewards, measured on fixed (non-learned) agents.

In the authors' environment (msclar/symmtom, ``environment.py: _set_action`` masks the spoken piece
with ``world.knowledge_storage`` before ``world.step`` copies the step's new knowledge in), a piece
heard at step t can first be said at step t+2; cfrkit (docs/symmtom.md) lets it be said at t+1.
This script plays the same episodes both ways: "lagged" silences a piece the speaker did not know at
the start of the previous step (the authors' rule, except that the authors also let an agent say,
on the step after a recharge, second-hand pieces it has just forgotten; here those are silent too).

    python benchmarks/symmtom_speech_lag.py --setting 3/6/3 --episodes 1000 --agents heuristic,ge,oracle

Prints mean [std over episodes] of the reward per agent (Table 1's unit) and the ratio lagged / cfrkit.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def play(agent_name: str, n: int, w: int, c: int, episodes: int, lagged: bool, seed: int = 0) -> np.ndarray:
    """Per-episode mean reward per agent of ``agent_name`` in self-play, episodes seeded ``seed + e``."""
    from cfrkit.agents.symmtom import ORACLE_AGENTS, make_agent
    from cfrkit.games.symmtom.core import SILENT, SymmToMConfig
    from cfrkit.games.symmtom.env import SymmToMEnv

    cfg = SymmToMConfig(agents=n, width=w, pieces=c, oracle=agent_name in ORACLE_AGENTS)
    env = SymmToMEnv(cfg)
    out = np.empty(episodes)
    for e in range(episodes):
        agents = [make_agent(agent_name, seed=(seed + e) * 31 + i) for i in range(n)]
        env.reset(seed=seed + e)
        for i, a in enumerate(agents):
            a.reset(env.view(i, a.needs_observation))
        previous = list(env.knowledge)              # knowledge at the start of the previous step (t = 0: K_0)
        while not env.done:
            actions = [agents[i].act(env.view(i, agents[i].needs_observation)) for i in range(n)]
            start = list(env.knowledge)
            if lagged:
                actions = [(m, p if p >= 0 and (previous[i] >> p) & 1 else SILENT) for i, (m, p) in enumerate(actions)]
            env.step(actions, observe=False)
            previous = start
        out[e] = float(np.mean(env.returns))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--setting", default="3/6/3")
    p.add_argument("--episodes", type=int, default=1000)
    p.add_argument("--agents", default="heuristic,ge,oracle")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.episodes < 1:
        raise SystemExit("--episodes must be >= 1")
    try:
        n, w, c = (int(x) for x in args.setting.split("/"))
    except ValueError:
        raise SystemExit(f"--setting: expected n/w/c like 3/6/3, got {args.setting!r}") from None
    print(f"| agent ({args.setting}, {args.episodes} episodes) | cfrkit rule (t+1) | authors' rule (t+2) | ratio | CPU s |")
    print("|---|---:|---:|---:|---:|")
    for name in args.agents.split(","):
        c0 = time.process_time()
        a = play(name, n, w, c, args.episodes, False, args.seed)
        b = play(name, n, w, c, args.episodes, True, args.seed)
        print(f"| {name} | {a.mean():.1f} [{a.std(ddof=1):.1f}] | {b.mean():.1f} [{b.std(ddof=1):.1f}] | "
              f"{b.mean() / a.mean():.3f} | {time.process_time() - c0:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
