"""SymmToM environment speed: joint steps/s of cfrkit (single and batched) vs a reference loop.

The authors' environment (github.com/msclar/symmtom, built on multiagent-particle-envs and gym) is
not on PyPI.  As the peer we time a plain-Python reference step written here in the style of that
code: per-agent objects with continuous positions in [-1, 1] converted to grid cells, numpy
vectors per agent for actions and speech, the pairwise collision loop, per-agent reward loops with
a temporary knowledge copy, and per-agent observations built with ``np.concatenate``.  It is checked
to give the same rewards as cfrkit on random play before being timed.  REFERENCE.md quotes
1.3-2.7k joint steps/s for the authors' environment measured on a machine like ours.

    python benchmarks/symmtom.py [--seconds 2] [--agents 3] [--width 6] [--pieces 3]

Timings are noisy: the machine is shared.  Random actions; observations built every step unless
stated ("no obs").
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cfrkit.games.symmtom import BatchedSymmToM, Start, SymmToMConfig, SymmToMEnv  # noqa: E402


class _RefAgent:
    def __init__(self):
        self.p_pos = None
        self.p_vel = None
        self.c = None
        self.first = None
        self.action_u = None
        self.action_c = None


class ReferenceSymmToM:
    """Reference step loop in the style of the authors' particle-world implementation."""

    def __init__(self, n, w, c, h=1, seed=0):
        self.n, self.w, self.c, self.h = n, w, c, h
        self.cells = w + 2                      # wall ring included, as in the authors' code
        self.tile = 2.0 / self.cells
        self.rng = np.random.default_rng(seed)

    def to_cell(self, p):
        return np.rint((p - (-1 + self.tile / 2)) / self.tile).astype(int)

    def reset(self, start: Start):
        self.agents = []
        for i in range(self.n):
            a = _RefAgent()
            cell = np.array(start.positions[i]) + 1
            a.p_pos = -1 + self.tile / 2 + self.tile * cell.astype(float)
            a.p_vel = np.zeros(2)
            a.c = np.zeros(self.c)
            a.first = np.array([(start.first_hand[i] >> p) & 1 for p in range(self.c)], dtype=bool)
            self.agents.append(a)
        self.bases = [np.array(b) + 1 for b in start.bases]
        self.knowledge = np.array([a.first for a in self.agents])
        self.tmp = self.knowledge.copy()

    def is_wall(self, cell):
        return cell[0] <= 0 or cell[1] <= 0 or cell[0] >= self.cells - 1 or cell[1] >= self.cells - 1

    def step(self, moves, pieces):
        n = self.n
        for i, a in enumerate(self.agents):
            u = np.zeros(2)
            if moves[i] == 1: u[0] = -1.0
            if moves[i] == 2: u[0] = +1.0
            if moves[i] == 3: u[1] = -1.0
            if moves[i] == 4: u[1] = +1.0
            a.action_u = u * self.tile
            cvec = np.zeros(self.c)
            cvec[pieces[i]] = 1.0
            cvec[np.logical_not(self.tmp[i])] = 0          # speak only what is known
            a.action_c = cvec
        self.knowledge = self.tmp.copy()
        force = [a.action_u.copy() for a in self.agents]
        for i, a in enumerate(self.agents):
            if self.is_wall(self.to_cell(a.p_pos + force[i])):
                force[i] = np.zeros(2)
        cancelled = True
        while cancelled:
            cancelled = False
            for x in range(n):
                for y in range(x + 1, n):
                    px = self.to_cell(self.agents[x].p_pos + force[x])
                    py = self.to_cell(self.agents[y].p_pos + force[y])
                    if not (px - py).any():
                        for k in (x, y):                    # "first" tie-break, as cfrkit's tiebreak="first"
                            if force[k].any():
                                force[k] = np.zeros(2)
                                cancelled = True
                                break
        for i, a in enumerate(self.agents):
            a.p_vel = force[i]
            a.p_pos = a.p_pos + force[i]
            a.c = a.action_c
        rewards = []
        full = self.c
        for i, a in enumerate(self.agents):
            r = 0
            for j, o in enumerate(self.agents):
                if i == j:
                    continue
                if np.max(np.abs(o.p_pos - a.p_pos)) < self.h * self.tile + 1e-6:
                    for p, v in enumerate(o.c):
                        if v > 0.5 and not self.knowledge[i][p]:
                            r += 1
                            self.tmp[i][p] = True
                    for p, v in enumerate(a.c):
                        if v > 0.5 and not self.knowledge[j][p]:
                            r += 1
                            self.tmp[j][p] = True
            if self.knowledge[i].sum() == full and not (self.to_cell(a.p_pos) - self.bases[i]).any():
                r += self.knowledge[i].sum() * (n - 1)
                self.tmp[i] = a.first.copy()
            rewards.append(r)
        return rewards

    def observation(self, i):
        a = self.agents[i]
        scale = self.tile * (self.cells - 3)
        parts = [a.first.astype(float), a.p_vel / self.tile]
        parts += [o.p_vel / self.tile for j, o in enumerate(self.agents) if j != i]
        parts += [(o.p_pos - a.p_pos) / scale for j, o in enumerate(self.agents) if j != i]
        parts += [o.first.astype(float) for j, o in enumerate(self.agents) if j != i]
        bases = [(-1 + self.tile / 2 + self.tile * self.bases[k] - o.p_pos) / scale for k, o in enumerate(self.agents)]
        parts += [bases[i]] + [b for k, b in enumerate(bases) if k != i]
        for j, o in enumerate(self.agents):
            if j != i:
                heard = np.max(np.abs(o.p_pos - a.p_pos)) < self.h * self.tile + 1e-6
                parts.append(o.c if heard else np.zeros(self.c))
        cell = self.to_cell(a.p_pos)
        parts.append(np.array([self.is_wall(cell + d) for d in ([0, 1], [0, -1], [1, 0], [-1, 0])], dtype=float))
        return np.concatenate(parts)


def check_reference(cfg: SymmToMConfig, steps: int = 300, seed: int = 1) -> None:
    """Rewards and observations of the reference loop must equal cfrkit's (tiebreak='first')."""
    rng = np.random.default_rng(seed)
    env = SymmToMEnv(SymmToMConfig(agents=cfg.agents, width=cfg.width, pieces=cfg.pieces, tiebreak="first"), seed=seed)
    ref = ReferenceSymmToM(cfg.agents, cfg.width, cfg.pieces)
    for t in range(steps):
        if t % cfg.episode_length == 0:
            env.reset()
            ref.reset(Start(list(env.positions), list(env.bases), list(env.first_hand)))
        moves = rng.integers(0, 5, cfg.agents)
        pieces = rng.integers(0, cfg.pieces, cfg.agents)
        obs, rewards, _, _ = env.step(list(zip(moves, pieces)))
        ref_rewards = ref.step(moves, pieces)
        if list(map(int, ref_rewards)) != list(rewards):
            raise AssertionError(f"reference disagrees at step {t}: {ref_rewards} vs {rewards}")
        for i in range(cfg.agents):
            if not np.allclose(ref.observation(i), obs[i]):
                raise AssertionError(f"reference observation of agent {i} disagrees at step {t}")


def rate(fn, seconds: float) -> float:
    """Calls of ``fn`` per second (each call returns the number of joint steps it made)."""
    done, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        done += fn()
    return done / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--agents", type=int, default=3)
    ap.add_argument("--width", type=int, default=6)
    ap.add_argument("--pieces", type=int, default=3)
    args = ap.parse_args()
    cfg = SymmToMConfig(agents=args.agents, width=args.width, pieces=args.pieces)
    n, c, T = cfg.agents, cfg.pieces, cfg.episode_length
    check_reference(cfg)
    print(f"SymmToM n={n} w={cfg.width} c={c} h=1, random actions; reference loop checked equal to cfrkit")
    rng = np.random.default_rng(0)
    acts = rng.integers(0, 5 * c, size=(4096, n))

    ref = ReferenceSymmToM(n, cfg.width, c)
    env = SymmToMEnv(cfg, seed=0)
    state = {"k": 0}

    def ref_steps(observe=True):
        env.reset()
        ref.reset(Start(list(env.positions), list(env.bases), list(env.first_hand)))
        for t in range(T):
            a = acts[(state["k"] + t) % len(acts)]
            ref.step(a // c, a % c)
            if observe:
                for i in range(n):
                    ref.observation(i)
        state["k"] += T
        return T

    def single_steps(observe=True):
        env.reset()
        for t in range(T):
            a = acts[(state["k"] + t) % len(acts)]
            env.step([int(x) for x in a], observe=observe)
        state["k"] += T
        return T

    results = {}
    results["reference loop (obs)"] = rate(lambda: ref_steps(True), args.seconds)
    results["reference loop (no obs)"] = rate(lambda: ref_steps(False), args.seconds)
    results["cfrkit single (obs)"] = rate(lambda: single_steps(True), args.seconds)
    results["cfrkit single (no obs)"] = rate(lambda: single_steps(False), args.seconds)
    for B in (1024, 8192):
        bat = BatchedSymmToM(cfg, B, seed=0, auto_reset=True)
        bat.reset()
        mv = rng.integers(0, 5, size=(8, B, n))
        pc = rng.integers(0, c, size=(8, B, n))

        def batched(observe, bat=bat, mv=mv, pc=pc, B=B):
            for k in range(8):
                bat.step(mv[k], pc[k])
                if observe:
                    bat.observations()
            return 8 * B

        results[f"cfrkit batched B={B} (obs)"] = rate(lambda: batched(True), args.seconds)
        results[f"cfrkit batched B={B} (no obs)"] = rate(lambda: batched(False), args.seconds)
    base = results["reference loop (obs)"]
    print(f"{'implementation':34s} {'joint steps/s':>14s} {'x reference':>12s}")
    for name, value in results.items():
        print(f"{name:34s} {value:14,.0f} {value / base:12.1f}")
    print("authors' environment (REFERENCE.md, measured on a machine like ours): 1.3-2.7k joint steps/s")


if __name__ == "__main__":
    main()
