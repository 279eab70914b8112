"""DeepStack hold'em agent (A^D): thinking time per decision per round, and a river correctness check.

    python benchmarks/deepstack_holdem_agent.py [--iterations 200] [--hands 2] [--nets DIR] [--solver board|numpy]
                                                [--check-iterations 200] [--skip-timing] [--skip-check]
                                                [--lbr DEALS --lbr-settings FCPA/3-4,FC/1-4]

Thinking time: the agent (:class:`cfrkit.agents.holdem_deepstack.HoldemDeepStackAgent`, DCFR, default
lookahead sizes) plays ``--hands`` seeded deals of ACPC heads-up no-limit (200bb, 50/100) against
always-call, in both seats, so every street is reached; each ``act`` call is timed (wall and this
process's CPU seconds, which the machine's load does not inflate) and grouped by round, beside
DeepHoldem's published times per decision on one P100 (preflop 2.7 s, flop 12.4 s, turn 7.6 s, river
3.3 s; DeepHoldem's re-solves use 1000 CFR+ iterations on the GPU).  The first decision of a hand
includes the preflop root solve (once per agent) and the first flop decision the flop's run-out matrix
(once per flop); both are inside the numbers.  Without ``--nets`` the turn and flop lookaheads stop
before the next card with check-down leaf values (the documented fallback), which is cheaper than net
leaves; say so when quoting.

Correctness: on a river spot (seat 0 first to act, pot 400, random ranges over a third of the live
pairs), the agent's strategy after ``--check-iterations`` DCFR iterations against a full compiled solve
(:class:`~cfrkit.solvers.public.flat_range_cfr.FlatRangeSolver`, to 0.05% of the pot): the agent's
exploitability in the compiled solver, the largest difference of range-weighted first-action
frequencies, and the root value difference (fractions of the pot).

No peer is run here (DeepHoldem needs Lua/Torch7 and a GPU); the P100 figures are quoted.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

DEEPHOLDEM_P100 = {"preflop": 2.7, "flop": 12.4, "turn": 7.6, "river": 3.3}
STREETS = ("preflop", "flop", "turn", "river")


class TimedAgent:
    """Wraps an agent's ``act`` and records (wall, cpu) seconds per round."""

    def __init__(self, agent):
        self.agent = agent
        self.times = {s: [] for s in STREETS}

    def new_hand(self):
        self.agent.new_hand()

    def act(self, state):
        w, c = time.perf_counter(), time.process_time()
        a = self.agent.act(state)
        self.times[STREETS[state.round]].append((time.perf_counter() - w, time.process_time() - c))
        return a


def timing(args):
    from cfrkit.agents.holdem_deepstack import HoldemDeepStackAgent
    from cfrkit.agents.poker import AlwaysCallAgent
    from cfrkit.games.holdem.deals import deal_for_hand
    from cfrkit.games.registry import load
    from cfrkit.poker.match import play_hand

    game = load("holdem")
    agent = TimedAgent(HoldemDeepStackAgent(game, nets=args.nets, iterations=args.iterations, seed=args.seed,
                                            solver=args.solver))
    for i in range(args.hands):
        cards = deal_for_hand(game, args.seed, i)
        for seats in ([agent, AlwaysCallAgent()], [AlwaysCallAgent(), agent]):
            play_hand(game, seats, cards)
            print(f"  deal {i}: decisions so far " + ", ".join(f"{s} {len(agent.times[s])}" for s in STREETS),
                  flush=True)
    print(f"\nthinking time per decision, {args.iterations} DCFR iterations per re-solve, solver {args.solver} "
          f"(re-solves per path {agent.agent.solver_used}) "
          f"({'nets ' + args.nets if args.nets else 'no nets: check-down leaves'}), load {os.getloadavg()[0]:.1f}")
    print(f"{'round':8s} {'decisions':>9s} {'wall s':>8s} {'CPU s':>8s} {'CPU s/it':>9s} {'P100 s':>7s} "
          f"{'CPU/P100':>9s}")
    for s in STREETS:
        t = np.array(agent.times[s]) if agent.times[s] else np.zeros((0, 2))
        if not len(t):
            print(f"{s:8s} {0:9d}")
            continue
        wall, cpu = t[:, 0].mean(), t[:, 1].mean()
        print(f"{s:8s} {len(t):9d} {wall:8.2f} {cpu:8.2f} {cpu / args.iterations:9.4f} {DEEPHOLDEM_P100[s]:7.1f} "
              f"{cpu / DEEPHOLDEM_P100[s]:9.2f}")


def check(args):
    from cfrkit.agents.holdem_deepstack import HoldemDeepStackAgent
    from cfrkit.cards import parse_cards
    from cfrkit.cards.hands import blocked_pairs
    from cfrkit.games.holdem.matchstate import state_from_matchstate
    from cfrkit.games.registry import load
    from cfrkit.poker.match import play_hand
    from cfrkit.solvers.public.flat_range_cfr import FlatRangeSolver

    game = load("holdem")
    state = state_from_matchstate(game, "MATCHSTATE:0:0:r200c/cc/cc/:5d5c|/8dAs8s/Kh/2c")
    rng = np.random.default_rng(0)
    live = ~blocked_pairs(parse_cards("8dAs8sKh2c"))
    ranges = rng.random((2, 1326)) * live * (rng.random((2, 1326)) < 0.33)
    ranges /= ranges.sum(1, keepdims=True)
    agent = HoldemDeepStackAgent(game, iterations=args.check_iterations, seed=3)
    c = time.process_time()
    agent.start_spot(state, ranges)
    cpu = time.process_time() - c
    hs = agent.hand_strategy(state)
    rec = agent._records[("spot",)]
    tree = rec.result.tree
    pot = 400.0
    flat = FlatRangeSolver(tree, ranges=ranges)
    expl = flat.exploitability(rec.result.strategy)
    full = FlatRangeSolver(tree, ranges=ranges)
    c = time.process_time()
    full_expl = full.solve(target_fraction=0.0005, check_every=20, max_iterations=5000)
    full_cpu = time.process_time() - c
    ref = full.average_strategy()[0][0].T
    freq_a, freq_f = ranges[0] @ hs.probs, ranges[0] @ ref
    dv = abs(flat.root_values(rec.result.strategy)[0] - full.root_values()[0])
    labels = [tree.pgame.action_label(tree.root.state, int(a)) for a in tree.root.actions]
    print(f"\nriver spot (pot 400, {len(tree)} nodes): agent {args.check_iterations} DCFR iterations "
          f"({cpu:.2f} CPU s) vs compiled full solve ({full.iterations if hasattr(full, 'iterations') else '?'} "
          f"iterations, {full_cpu:.2f} CPU s, exploitability {100 * full_expl / pot:.3f}% of the pot)")
    print(f"  agent exploitability (compiled solver): {100 * expl / pot:.3f}% of the pot")
    for lab, a, f in zip(labels, freq_a, freq_f):
        print(f"  first action {lab:22s} agent {a:.4f}  full solve {f:.4f}")
    print(f"  largest frequency difference {np.abs(freq_a - freq_f).max():.4f}; root value difference "
          f"{100 * dv / pot:.3f}% of the pot")


def leaf_paths(args):
    """CPU seconds per iteration of the agent's turn and flop re-solves with value-net leaves: the net's leaves
    through the compiled solver's direct batched path vs every leaf through the generic call (same spot, same
    lookahead, random ranges over a third of the live pairs; check-down values for the all-in leaves)."""
    from cfrkit.agents.holdem_deepstack import HoldemDeepStackAgent
    from cfrkit.cards.hands import blocked_pairs
    from cfrkit.games.holdem.matchstate import state_from_matchstate
    from cfrkit.games.registry import load
    from cfrkit.poker.match import play_hand
    from cfrkit.solvers.public.board_leaf_cfr import BoardLeafSolver
    from cfrkit.solvers.public.tree import build_public_tree

    game = load("holdem")
    agent = HoldemDeepStackAgent(game, nets=args.nets, iterations=args.iterations, seed=args.seed)
    spots = {"turn": "MATCHSTATE:0:0:r200c/cc/:5d5c|/8dAs8s/Kh", "flop": "MATCHSTATE:0:0:r200c/:5d5c|/8dAs8s"}
    print(f"\nleaf paths, nets {args.nets}, {args.leaf_path_iterations} DCFR iterations, float64, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{'spot':6s} {'leaves':>6s} {'net':>5s} {'path':8s} {'setup CPU s':>11s} {'CPU s/it':>9s} {'speedup':>8s}")
    for street, ms in spots.items():
        state = state_from_matchstate(game, ms)
        r = int(state.round)
        if r + 1 >= 4 or ("turn", "river")[r - 1] not in agent.leaf_values:
            print(f"{street:6s} no {('turn', 'river')[r - 1]} net in {args.nets}: skipped")
            continue
        rng = np.random.default_rng(args.seed)
        live = ~blocked_pairs(list(state.board))
        ranges = rng.random((2, 1326)) * live * (rng.random((2, 1326)) < 0.33)
        ranges /= ranges.sum(1, keepdims=True)
        pgame = agent._pgames[r]
        tree = build_public_tree(pgame, pgame.root(state), depth_limit=True)
        fn = agent._leaf_fn(r)
        per_it = {}
        for fast in (True, False):
            c = time.process_time()
            solver = BoardLeafSolver(tree, ranges=ranges, leaf_values=fn, algorithm="dcfr", dtype="float64",
                                     fast_nets=fast)
            solver.run(1)
            setup = time.process_time() - c
            c = time.process_time()
            solver.run(args.leaf_path_iterations)
            per_it[fast] = (time.process_time() - c) / args.leaf_path_iterations
            sess = solver.session
            n_net = 0 if sess._net is None else len(sess._net["leaves"])
            sp = f"{per_it[False] / per_it[True]:8.1f}x" if not fast else ""
            print(f"{street:6s} {sess.L:6d} {n_net:5d} {'direct' if fast else 'generic':8s} {setup:11.2f} "
                  f"{per_it[fast]:9.4f} {sp}", flush=True)


def lbr(args):
    from cfrkit.agents.holdem_deepstack import HoldemDeepStackAgent
    from cfrkit.evaluation.lbr import run_lbr, settings_from
    from cfrkit.games.registry import load
    from cfrkit.poker.match import play_hand

    game = load("holdem")
    agent = HoldemDeepStackAgent(game, nets=args.nets, iterations=args.iterations, seed=args.seed,
                                 preflop_boards=args.preflop_boards)
    for setting in args.lbr_settings.split(","):
        bets, rounds = setting.split("/")
        w, c = time.perf_counter(), time.process_time()
        # no per-answer time limit: a re-solve can take minutes of wall time on a loaded machine
        res = run_lbr(agent, game, args.lbr, settings_from(bets, rounds), seed=args.seed, time_limit=float("inf"))
        print(f"{res}  ({time.process_time() - c:.0f} CPU s, {time.perf_counter() - w:.0f} s wall)", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--hands", type=int, default=2)
    p.add_argument("--nets", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check-iterations", type=int, default=200)
    p.add_argument("--skip-timing", action="store_true")
    p.add_argument("--skip-check", action="store_true")
    p.add_argument("--lbr", type=int, default=0, help="also run LBR over this many deals (both seats)")
    p.add_argument("--lbr-settings", default="FCPA/3-4", help="comma-separated BETS/ROUNDS, e.g. FC/1-4,FCPA/3-4")
    p.add_argument("--preflop-boards", type=int, default=500)
    p.add_argument("--leaf-paths", action="store_true",
                   help="with --nets: CPU s per iteration of a turn and a flop re-solve, direct net path vs generic")
    p.add_argument("--leaf-path-iterations", type=int, default=10)
    p.add_argument("--solver", default="board", choices=("board", "numpy"),
                   help="re-solve flop/turn/river on the compiled solver (board; preflop numpy) or all on numpy")
    args = p.parse_args()
    if args.leaf_paths:
        if not args.nets:
            p.error("--leaf-paths needs --nets")
        leaf_paths(args)
    if not args.skip_check:
        check(args)
    if not args.skip_timing:
        timing(args)
    if args.lbr:
        lbr(args)


if __name__ == "__main__":
    main()
