"""Hanabi speed: cfrkit's engine vs hanabi-learning-environment (HLE), timed in the same run.

Measures (Full rules, 2 players unless told):

1. random legal play, steps/s:
   * HLE's C++ core through its C API (a small C++ loop compiled here against libpyhanabi.so),
   * HLE through its Python API (pyhanabi), and through rl_env (observations of every player),
   * cfrkit single game from Python (EngineState), through HanabiEnv (rl_env-like observations),
   * cfrkit batched in C (BatchEngine.random_steps) and batched with encodings + masks (step()).
2. canonical observation encodings/s (HLE ObservationEncoder vs cfrkit single and batched).
3. rule-agent self-play games/s: cfrkit's C rule agents (IGGI, Piers) vs HLE's SimpleAgent through
   rl_env; and HLE's SimpleAgent run unchanged on cfrkit's rl_env-like HanabiEnv.

Usage: ``python benchmarks/hanabi.py [--seconds 2] [--players 2]``.  The machine is shared, so
numbers are noisy; every figure is printed next to HLE's and as a ratio.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from cfrkit._kernels import hanabi_engine as E  # noqa: E402
from cfrkit.agents.hanabi import named_agent, rule_table  # noqa: E402
from cfrkit.games.hanabi import HanabiEnv, HanabiVectorEnv, preset  # noqa: E402

HLE_CORE_SRC = r"""
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include "pyhanabi.h"
int main(int argc, char** argv) {
  long target = atol(argv[1]);
  const char* params[] = {"players", argv[2], "seed", "1"};
  pyhanabi_game_t game;
  NewGame(&game, 4, params);
  srand(7);
  long steps = 0, games = 0;
  auto t0 = std::chrono::steady_clock::now();
  while (steps < target) {
    pyhanabi_state_t state;
    NewState(&game, &state);
    while (StateEndOfGameStatus(&state) == 0) {  /* NOT_FINISHED */
      if (StateCurPlayer(&state) == -1) { StateDealRandomCard(&state); continue; }
      void* moves = StateLegalMoves(&state);
      int n = NumMoves(moves);
      pyhanabi_move_t move;
      GetMove(moves, rand() % n, &move);
      StateApplyMove(&state, &move);
      DeleteMove(&move);
      DeleteMoveList(moves);
      ++steps;
    }
    DeleteState(&state);
    ++games;
  }
  double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("%ld %ld %f\n", steps, games, dt);
  DeleteGame(&game);
  return 0;
}
"""


def timed(fn, seconds):
    """Run ``fn()`` (returns units done) repeatedly for about ``seconds``; units per second."""
    done, start = 0, time.perf_counter()
    while True:
        done += fn()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done / elapsed


def hle_core(players, steps):
    import hanabi_learning_environment as hle

    lib_dir = os.path.dirname(hle.__file__)
    work = tempfile.mkdtemp(prefix="hle_core_")
    src, exe = os.path.join(work, "bench.cc"), os.path.join(work, "bench")
    with open(src, "w") as f:
        f.write(HLE_CORE_SRC)
    subprocess.run(["g++", "-O2", "-o", exe, src, f"-I{lib_dir}", f"-L{lib_dir}", "-lpyhanabi",
                    f"-Wl,-rpath,{lib_dir}"], check=True, capture_output=True)
    out = subprocess.run([exe, str(steps), str(players)], check=True, capture_output=True, text=True).stdout.split()
    return int(out[0]) / float(out[2])


def hle_python_random(players, seconds):
    from hanabi_learning_environment import pyhanabi

    game = pyhanabi.HanabiGame({"players": players, "seed": 3})
    rng = random.Random(0)

    def one_game():
        s = game.new_initial_state()
        n = 0
        while not s.is_terminal():
            if s.cur_player() == pyhanabi.CHANCE_PLAYER_ID:
                s.deal_random_card()
                continue
            s.apply_move(rng.choice(s.legal_moves()))
            n += 1
        return n

    return timed(one_game, seconds)


def timed_random_games(env, seconds):
    """Uniformly random legal moves through an rl_env-style ``env`` (the HLE's or cfrkit's HanabiEnv, same
    observation dicts), games played for ``seconds``, as :func:`timed`."""
    rng = random.Random(0)

    def one_game():
        obs, done, n = env.reset(), False, 0
        while not done:
            legal = obs["player_observations"][obs["current_player"]]["legal_moves_as_int"]
            obs, _, done, _ = env.step(rng.choice(legal))
            n += 1
        return n

    return timed(one_game, seconds)


def hle_rlenv_random(players, seconds):
    from hanabi_learning_environment import rl_env

    return timed_random_games(rl_env.make("Hanabi-Full", num_players=players), seconds)


def cfrkit_single_random(players, seconds):
    cfg = E.EngineConfig(players=players)
    rng = random.Random(0)
    counter = [0]

    def one_game():
        counter[0] += 1
        s = E.EngineState(cfg, counter[0])
        s.deal_random()
        n = 0
        while not s.is_terminal():
            s.apply(rng.choice(s.legal_moves()))
            s.deal_random()
            n += 1
        return n

    return timed(one_game, seconds)


def cfrkit_env_random(players, seconds):
    return timed_random_games(HanabiEnv(preset("full", players), seed=1), seconds)


def cfrkit_batched_random(players, seconds, num_envs=1024):
    venv = HanabiVectorEnv(preset("full", players), num_envs=num_envs, seed=1, encode=False)
    venv.reset()
    return timed(lambda: venv.random_steps(200_000)[0], seconds)


def cfrkit_batched_step(players, seconds, num_envs=1024):
    venv = HanabiVectorEnv(preset("full", players), num_envs=num_envs, seed=1, encode=True)
    obs, mask, cur = venv.reset()
    rng = np.random.default_rng(0)

    def step():
        nonlocal mask
        # uniform random legal action per game, vectorised: argmax of random keys on legal entries
        keys = rng.random(mask.shape) * mask
        obs_, mask_, *_ = venv.step(keys.argmax(axis=1))
        mask = mask_
        return num_envs

    return timed(step, seconds)


def encodings(players, seconds):
    from hanabi_learning_environment import pyhanabi

    game = pyhanabi.HanabiGame({"players": players, "seed": 5})
    enc = pyhanabi.ObservationEncoder(game)
    s = game.new_initial_state()
    while s.cur_player() == pyhanabi.CHANCE_PLAYER_ID:
        s.deal_random_card()
    for _ in range(6):
        s.apply_move(s.legal_moves()[-1])
        while s.cur_player() == pyhanabi.CHANCE_PLAYER_ID:
            s.deal_random_card()
    obs = s.observation(0)

    def hle_obs_and_encode():
        for _ in range(100):
            enc.encode(s.observation(0))
        return 100

    def hle_encode_only():
        for _ in range(100):
            enc.encode(obs)
        return 100

    es = E.EngineState(E.EngineConfig(players=players), 5)
    es.deal_random()
    buf = np.empty(es.config.encoding_length, dtype=np.uint8)

    def ours_single():
        for _ in range(100):
            es.encode_into(0, buf)
        return 100

    venv = HanabiVectorEnv(preset("full", players), num_envs=1024, seed=2)
    venv.reset()
    venv.batch.random_steps(20_000)

    def ours_batched():
        venv.batch.encode_all()
        return 1024

    return {"hle (observation + encode)": timed(hle_obs_and_encode, seconds),
            "hle (encode only)": timed(hle_encode_only, seconds),
            "cfrkit single": timed(ours_single, seconds),
            "cfrkit batched": timed(ours_batched, seconds)}


def rule_agent_games(players, seconds):
    from hanabi_learning_environment import rl_env
    from hanabi_learning_environment.agents.simple_agent import SimpleAgent

    out = {}
    cfg = E.EngineConfig(players=players)
    for name in ("IGGI", "Piers"):
        rules = np.tile(named_agent(name).rules, (players, 1))
        counter = [0]

        def batch():
            counter[0] += 1
            E.play_games(cfg, rule_table(), rules, 500, counter[0])
            return 500

        out[f"cfrkit C rule agent {name}"] = timed(batch, seconds)

    def simple_games(env):
        agents = [SimpleAgent({"players": players, "information_tokens": 8}) for _ in range(players)]

        def one_game():
            obs, done = env.reset(), False
            while not done:
                p = obs["current_player"]
                obs, _, done, _ = env.step(agents[p].act(obs["player_observations"][p]))
            return 1

        return one_game

    out["hle SimpleAgent on HLE rl_env"] = timed(simple_games(rl_env.make("Hanabi-Full", num_players=players)), seconds)
    out["hle SimpleAgent on cfrkit HanabiEnv"] = timed(simple_games(HanabiEnv(preset("full", players), seed=0)),
                                                      seconds)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    ap.add_argument("--players", type=int, default=2)
    args = ap.parse_args()
    try:
        import hanabi_learning_environment  # noqa: F401
    except ImportError:
        sys.exit("this benchmark compares against hanabi-learning-environment: "
                 "CMAKE_POLICY_VERSION_MINIMUM=3.5 pip install hanabi-learning-environment")
    p, sec = args.players, args.seconds
    print(f"Hanabi benchmark: Full rules, {p} players, {sec:.1f} s per measurement, 1 core (shared machine)\n")
    print("random legal play (steps/s)")
    core = hle_core(p, 2_000_000)
    hle_py = hle_python_random(p, sec)
    hle_rl = hle_rlenv_random(p, sec)
    ours_single = cfrkit_single_random(p, sec)
    ours_env = cfrkit_env_random(p, sec)
    ours_batch = cfrkit_batched_random(p, sec)
    ours_step = cfrkit_batched_step(p, sec)
    rows = [("HLE C++ core via C API (compiled loop)", core, None),
            ("HLE Python API (pyhanabi)", hle_py, None),
            ("HLE rl_env (all observations)", hle_rl, None),
            ("cfrkit EngineState from Python", ours_single, (hle_py, "HLE Python API")),
            ("cfrkit HanabiEnv (rl_env-like observations)", ours_env, (hle_rl, "HLE rl_env")),
            ("cfrkit batched in C, 1024 games", ours_batch, (core, "HLE C++ core")),
            ("cfrkit batched step() + encodings + masks", ours_step, (core, "HLE C++ core"))]
    for name, value, ref in rows:
        ratio = f"  x{value / ref[0]:.1f} vs {ref[1]}" if ref else ""
        print(f"  {name:46s} {value:14,.0f}{ratio}")
    print("\ncanonical observation encodings (per s)")
    enc = encodings(p, sec)
    for name, value in enc.items():
        print(f"  {name:46s} {value:14,.0f}")
    print(f"  cfrkit single / HLE (observation + encode): x{enc['cfrkit single'] / enc['hle (observation + encode)']:.1f};"
          f" batched: x{enc['cfrkit batched'] / enc['hle (observation + encode)']:.1f}")
    print("\nrule-agent self-play (games/s, one core)")
    games = rule_agent_games(p, sec)
    for name, value in games.items():
        print(f"  {name:46s} {value:14,.1f}")
    print(f"  cfrkit IGGI / HLE SimpleAgent on HLE: x{games['cfrkit C rule agent IGGI'] / games['hle SimpleAgent on HLE rl_env']:.0f}")


if __name__ == "__main__":
    main()
