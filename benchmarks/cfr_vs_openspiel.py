"""Leduc CFR+ and exact exploitability: cfrkit against OpenSpiel's C++ (pyspiel) in the same run.

    python benchmarks/cfr_vs_openspiel.py [--iterations 1000] [--scaling]

Prints, for 1000 CFR+ iterations on Leduc, the seconds and final exploitability of each (each
measured with its own evaluator and cross-checked with the other's), the speed ratio, and the time of
one exact exploitability computation.  ``--scaling`` adds time per iteration on larger Leduc decks.
Times are process CPU seconds (``time.process_time``) and wall seconds; the machine has 2 cores.
"""
import argparse
import time



def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--scaling", action="store_true", help="time per iteration on larger Leduc decks")
    args = parser.parse_args()

    import pyspiel

    from cfrkit.evaluation import exploitability
    from cfrkit.solvers import CFRSolver, compile_game

    n = args.iterations
    # --- cfrkit: compile (uncached, included in the time) + n CFR+ iterations
    def run_cfrkit():
        tree = compile_game("leduc", cache=False)  # cache=False: compiled anew, the in-memory cache unread
        solver = CFRSolver(tree, "cfr+")
        solver.run(n)
        return tree, solver

    (tree, solver), ck_wall, ck_cpu = timed(run_cfrkit)
    ck_policy = solver.average_policy()
    ck_expl = exploitability(tree, ck_policy)
    compile_wall = timed(lambda: compile_game("leduc", cache=False))[1]

    # --- OpenSpiel C++ CFR+
    game = pyspiel.load_game("leduc_poker")

    def run_openspiel():
        s = pyspiel.CFRPlusSolver(game)
        for _ in range(n):
            s.evaluate_and_update_policy()
        return s

    os_solver, os_wall, os_cpu = timed(run_openspiel)
    os_policy = os_solver.average_policy()
    os_expl = pyspiel.exploitability(game, os_policy)

    # cross-check: OpenSpiel's evaluator on cfrkit's policy (info states mapped by a lockstep walk)
    cross = pyspiel.exploitability(game, _to_openspiel(ck_policy, game, pyspiel))

    # --- one exact exploitability computation of a Leduc policy
    reps = 50
    slots = solver.average_strategy_array()
    _, t_slots, _ = timed(lambda: [exploitability(tree, slots) for _ in range(reps)])
    _, t_table, _ = timed(lambda: [exploitability(tree, ck_policy) for _ in range(reps)])
    _, t_os, _ = timed(lambda: [pyspiel.exploitability(game, os_policy) for _ in range(5)])

    print(f"Leduc CFR+ {n} iterations")
    print(f"  cfrkit    : {ck_wall:7.3f} s wall {ck_cpu:7.3f} s CPU (compile {compile_wall:.3f} s incl.)  "
          f"exploitability {ck_expl:.4e} (OpenSpiel's evaluator on it: {cross:.4e})")
    print(f"  OpenSpiel : {os_wall:7.3f} s wall {os_cpu:7.3f} s CPU                          "
          f"exploitability {os_expl:.4e}")
    print(f"  speed ratio (OpenSpiel / cfrkit, CPU): {os_cpu / ck_cpu:.1f}x; "
          f"exploitability {'<=' if ck_expl <= os_expl * (1 + 1e-9) else '>'} OpenSpiel's")
    print("Exact exploitability of a Leduc policy")
    print(f"  cfrkit per-slot array : {1000 * t_slots / reps:7.3f} ms")
    print(f"  cfrkit TabularPolicy  : {1000 * t_table / reps:7.3f} ms")
    print(f"  OpenSpiel C++         : {1000 * t_os / 5:7.3f} ms   ratio {t_os / 5 / (t_table / reps):.0f}x")

    if args.scaling:
        print("Time per CFR+ iteration on larger Leduc decks (2 suits)")
        print(f"  {'ranks':>5} {'nodes':>10} {'infosets':>9} {'compile s':>10} {'ms/iter':>9} {'us/node/iter':>13}")
        for ranks in (3, 4, 6, 8, 10, 13):
            g = f"leduc(ranks={ranks})"
            t, compile_s, _ = timed(lambda: compile_game(g, cache=False))
            s = CFRSolver(t, "cfr+")
            iters = max(5, int(2e6 / t.num_nodes))
            _, wall, _ = timed(lambda: s.run(iters))
            per = wall / iters
            print(f"  {ranks:>5} {t.num_nodes:>10,} {t.num_infosets:>9,} {compile_s:>10.2f} {1000 * per:>9.3f} "
                  f"{1e6 * per / t.num_nodes:>13.4f}")


def _to_openspiel(policy, os_game, pyspiel):
    """cfrkit TabularPolicy of leduc -> pyspiel.TabularPolicy (same action and chance ids)."""
    from cfrkit.games import load

    ours = load("leduc")
    table = {}

    def walk(a, b):
        if a.is_terminal():
            return
        if not a.is_chance_node():
            p = a.current_player()
            key = b.information_state_string(p)
            if key not in table:
                probs = policy.action_probabilities(a, p)
                table[key] = [(act, probs.get(act, 0.0)) for act in b.legal_actions()]
        for act in a.legal_actions():
            walk(a.child(act), b.child(act))

    walk(ours.new_initial_state(), os_game.new_initial_state())
    return pyspiel.TabularPolicy(table)


if __name__ == "__main__":
    main()
