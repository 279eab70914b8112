"""Issue 17 item 13: information sets keyed by (player, string); compiled trees checked before the kernels.

OpenSpiel's ``oshi_zumo(coins=3,size=1,horizon=1)`` gives both players the same (empty)
information-state string; played in turns through cfrkit's ``turn_based`` adapter, compile_game used
to put both players' nodes in one set, CFR ran, and best response crashed the process.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from cfrkit.evaluation import best_response_policy, exploitability, protocol_br
from cfrkit.games.base import GameError
from cfrkit.policy import TabularPolicy, player_key, tabulate
from cfrkit.solvers import CFRSolver, ExternalSamplingMCCFR, compile_game

OSHI = "turn_based(game=openspiel(name=oshi_zumo(coins=3,size=1,horizon=1)))"


def _payoff_matrix():
    """Player 0's returns of every joint bid, straight from OpenSpiel's simultaneous game."""
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game("oshi_zumo(coins=3,size=1,horizon=1)")
    root = game.new_initial_state()
    rows, cols = root.legal_actions(0), root.legal_actions(1)
    a = np.zeros((len(rows), len(cols)))
    for (i, r), (j, c) in itertools.product(enumerate(rows), enumerate(cols)):
        state = root.clone()
        state.apply_actions([r, c])
        a[i, j] = state.returns()[0]
    return a, rows, cols


def test_shared_strings_get_one_set_per_player_and_match_a_brute_force_exploitability():
    pytest.importorskip("pyspiel")
    tree = compile_game(OSHI, cache=False)
    assert sorted(tree.infoset_keys) == [player_key(0, ""), player_key(1, "")]
    solver = CFRSolver(tree).run(300)
    policy = solver.average_policy()
    a, rows, cols = _payoff_matrix()
    x = np.array([policy[player_key(0, "")][r] for r in rows])
    y = np.array([policy[player_key(1, "")][c] for c in cols])
    value = x @ a @ y
    brute = ((a @ y).max() - value + (-(x @ a)).max() + value) / 2.0  # zero-sum NashConv / 2
    assert exploitability(tree, policy) == pytest.approx(brute, abs=1e-12)
    assert protocol_br.exploitability(OSHI, policy) == pytest.approx(brute, abs=1e-12)
    assert brute < 1e-3
    # best response crashed the process before; now it is a policy over player 1's own set
    br = best_response_policy(tree, policy, 1)
    assert list(br.keys()) == [player_key(1, "")]


def test_policies_round_trip_with_shared_strings(tmp_path):
    pytest.importorskip("pyspiel")
    policy = CFRSolver(OSHI).run(50).average_policy()
    path = str(tmp_path / "oshi.npz")
    policy.save(path)
    loaded = TabularPolicy.load(path, OSHI)
    assert loaded.table == policy.table
    again = tabulate(OSHI, loaded)  # queries through action_probabilities (player-qualified lookups)
    assert again.table == policy.table
    assert exploitability(OSHI, loaded) == pytest.approx(exploitability(OSHI, policy), abs=0)


def test_mccfr_keeps_the_players_apart_and_resumes(tmp_path):
    pytest.importorskip("pyspiel")
    from cfrkit.solvers.tabular.mccfr import load_mccfr

    straight = ExternalSamplingMCCFR(OSHI, seed=4).run(400, progress=False)
    assert sorted(straight.infosets) == [player_key(0, ""), player_key(1, "")]
    half = ExternalSamplingMCCFR(OSHI, seed=4).run(200, progress=False)
    path = str(tmp_path / "m.npz")
    half.save(path)
    resumed = load_mccfr(path).run(400, progress=False)
    assert {k: (i.regrets, i.sums) for k, i in resumed.infosets.items()} == \
           {k: (i.regrets, i.sums) for k, i in straight.infosets.items()}
    assert exploitability(OSHI, straight.average_policy()) == pytest.approx(
        protocol_br.exploitability(OSHI, straight.average_policy()), abs=1e-12)


def _broken(tree, name, fn):
    import dataclasses

    fields = {f.name: getattr(tree, f.name) for f in dataclasses.fields(tree)}
    fields[name] = fn(fields[name].copy())
    return type(tree)(**fields)


@pytest.mark.parametrize("name, damage", [
    ("child_start", lambda a: a + 10_000),
    ("node_infoset", lambda a: np.where(a >= 0, a + 1, a)),
    ("infoset_player", lambda a: 1 - a),
    ("infoset_offset", lambda a: a * 2),
    ("infoset_nodes", lambda a: a[::-1].copy()),
    ("node_player", lambda a: np.where(a == -4, 0, a)),
    ("utilities", lambda a: a * np.nan),
    ("num_children", lambda a: a + 1),
    ("node_chance_prob", lambda a: a.astype(np.float32)),
])
def test_inconsistent_trees_are_refused_before_the_kernels(name, damage):
    tree = compile_game("kuhn")
    bad = _broken(tree, name, damage)
    slots = np.full(tree.num_slots, 0.5)
    with pytest.raises(GameError, match="inconsistent"):
        exploitability(bad, slots)
    with pytest.raises(GameError, match="inconsistent"):
        CFRSolver(bad)
