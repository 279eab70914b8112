"""``cfrkit spot`` hardening: size estimate before building, memory limit, stop-and-save on Ctrl-C."""
import os
import signal
import subprocess
import sys

import numpy as np

from cfrkit.cli import main
from cfrkit.solvers.public.spot import estimate_spot, load_spot, solve_spot

TURN = ("AsJd8h5c", "QQ+,AJs", "JJ+,KQs")


def test_estimate_counts_the_nodes_solve_builds():
    for board, bets in (("Ks7h2dQc3s", "33%, 75%, a"), ("AsJd8h5c", "50%, a")):
        est = estimate_spot(board, 100, 200, bet_sizes=bets)
        r = solve_spot(board, "QQ+,AJs", "JJ+,KQs", pot=100, stack=200, bet_sizes=bets, max_iterations=1)
        assert est["nodes"] == len(r.tree.nodes)
        assert est["hands"] == r.solver.engine.regrets.shape[1]
        assert est["bytes"] >= 2 * r.solver.engine.regrets.nbytes  # regrets and strategy sums at least


def test_stop_hook_ends_between_blocks_and_the_partial_result_reloads(tmp_path):
    blocks = []
    r = solve_spot(*TURN, pot=100, stack=100, bet_sizes="50%, a", target=1e-6, max_iterations=1000,
                   check_every=5, on_block=lambda it, pct: blocks.append((it, pct)), stop=lambda: len(blocks) >= 2)
    assert r.stopped and r.iterations == 10 and [b[0] for b in blocks] == [5, 10]
    assert r.exploitability_pct == blocks[-1][1]
    path = str(tmp_path / "partial.npz")
    r.save(path)
    again = load_spot(path)
    assert again.iterations == 10 and abs(again.exploitability - r.exploitability) < 1e-3 * r.pot


def test_memory_limit_refuses_in_one_line(capsys):
    code = main(["spot", TURN[0], "--oop", TURN[1], "--ip", TURN[2], "--pot", "100", "--stack", "100",
                 "--max-memory", "0.0001"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "over the limit of 0.0001 GB" in err and "--max-memory" in err and "\n" not in err


def test_sigint_while_solving_saves_the_partial_solve(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = str(tmp_path / "spot.npz")
    proc = subprocess.Popen([sys.executable, "-m", "cfrkit", "spot", TURN[0], "--oop", TURN[1], "--ip", TURN[2],
                             "--pot", "100", "--stack", "100", "--bets", "50%, a", "--target", "0.000001",
                             "--max-iterations", "10000000", "--save", out],
                            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stdout:  # the solve has run its first block: Ctrl-C lands mid-solve
            if line.startswith("solving"):
                break
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted at iteration" in rest and f"saved {out}" in rest
    r = load_spot(out)
    assert 0 < r.iterations < 10000000 and np.isfinite(r.exploitability)
