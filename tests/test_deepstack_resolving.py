"""Re-solving with the CFR-D gadget and the continual re-solving agent."""
import numpy as np
import pytest

from cfrkit.agents.deepstack import DeepStackAgent, agent_policy
from cfrkit.evaluation import exploitability
from cfrkit.games import load
from cfrkit.solvers.public.tree import DECISION, RangeSolver, build_public_tree
from cfrkit.solvers.public.leaf_functions import ExactContinuationValues
from cfrkit.solvers.public.resolving import resolve


@pytest.fixture(scope="module")
def leduc_equilibrium():
    game = load("leduc")
    tree = build_public_tree(game)
    solver = RangeSolver(tree, algorithm="cfr+").run(400)
    strategy = solver.average_strategy()
    values, reach = solver.node_values(strategy)
    return game, tree, solver, strategy, values, reach


def _splice(solver, tree, base, history, result, player):
    strat = dict(base)
    for sub in result.tree.nodes:
        if sub.kind == DECISION and sub.player == player:
            full = tree.node_at(tuple(history) + sub.history)
            strat[full.index] = solver.be.asarray(result.strategy[sub.index].transpose(1, 0, 2))
    return strat


@pytest.mark.parametrize("history", [(1,), (2, 2), (1, 1, 3), (2, 1, 0, 2)])
def test_gadget_resolve_from_equilibrium_values_is_safe(leduc_equilibrium, history):
    game, tree, solver, base, values, reach = leduc_equilibrium
    base_expl = solver.exploitability(base)[0]
    node = tree.node_at(history)
    for player in (0, 1):
        res = resolve(tree.pgame, node.state, player, reach[node.index][player][0],
                      opp_cfvs=values[node.index][1 - player][0], iterations=400)
        spliced = _splice(solver, tree, base, history, res, player)
        assert solver.exploitability(spliced)[0] <= base_expl + 2e-3
        # the gadget bounds the opponent: its best-response cfvs stay (nearly) below the stored values
        br = res.opp_br_values[0][0]
        mask = tree.pgame.hand_mask(node.board)
        scale = np.abs(values[node.index][1 - player][0]).max() + 1e-12
        assert np.max((br - values[node.index][1 - player][0]) * mask) <= 0.05 * scale


def test_resolve_without_gadget_recovers_full_solve(leduc_equilibrium):
    game, tree, solver, *_ = leduc_equilibrium
    res = resolve(tree.pgame, tree.root.state, 0, np.full(6, 1 / 6), opp_range=np.full(6, 1 / 6), iterations=50)
    direct = RangeSolver(tree).run(50).to_numpy_strategy()
    np.testing.assert_allclose(res.strategy[0], direct[0], atol=1e-12)
    # against an independent solver: tabular CFR+ on the compiled Leduc tree (whose iterates equal
    # OpenSpiel's CFRPlusSolver) gives the same average strategy at all 936 information sets
    from cfrkit.solvers import CFRSolver
    from cfrkit.solvers.public.tree import strategy_to_policy

    resolved = strategy_to_policy(res.tree, res.strategy)
    tabular = CFRSolver(game, algorithm="cfr+").run(50).average_policy()
    assert set(resolved.table) == set(tabular.table) and len(tabular.table) == 936
    worst = max(abs(resolved.table[k][a] - p) for k, probs in tabular.table.items() for a, p in probs.items())
    assert worst < 1e-9
    assert exploitability(game, resolved) == pytest.approx(exploitability(game, tabular), abs=1e-9)


def test_continual_resolving_agent_is_nearly_unexploitable_on_leduc():
    game = load("leduc")
    agents = [DeepStackAgent(game, p, iterations=200) for p in (0, 1)]
    policy = agent_policy(game, agents)
    expl = exploitability(game, policy)
    assert expl < 0.01  # uniform random is about 2.4 chips; full-game CFR+ with 200 iterations about 0.005
    # playing through the protocol gives the same strategy as the tabulated policy
    state = game.new_initial_state()
    state.apply_action(0)
    state.apply_action(3)
    state.apply_action(2)  # player 0 raises
    probs = agents[1].action_probabilities(state)
    assert probs == pytest.approx(policy.action_probabilities(state, 1))


def test_depth_limited_resolve_with_exact_continuation():
    """Depth-limited solving of a late round-1 node with solved leaves agrees with the full-depth solve."""
    game = load("leduc")
    tree = build_public_tree(game)
    node = tree.node_at((2, 2))  # raise, re-raise: player 0 to call or fold, then round 2
    rng = np.random.default_rng(0)
    ranges = rng.random((2, 6))
    full = resolve(tree.pgame, node.state, 0, ranges[0], opp_range=ranges[1], iterations=300)
    limited = resolve(tree.pgame, node.state, 0, ranges[0], opp_range=ranges[1], iterations=20,
                      leaf_values=ExactContinuationValues(tree.pgame, iterations=150))
    assert limited.tree.leaf_nodes and not full.tree.leaf_nodes
    # the root decision (fold or call) of player 0 and the root values agree
    np.testing.assert_allclose(limited.strategy[0], full.strategy[0], atol=0.05)
    np.testing.assert_allclose(limited.values[0], full.values[0], atol=0.06 * np.abs(full.values[0]).max())  # 20 outer iterations: a rough solve


def test_average_node_values_follow_the_average_strategy(leduc_equilibrium):
    """Iterate-averaged cfvs (DeepStack's carry) match the average strategy's cfvs where both players reach a node."""
    game, tree, *_ = leduc_equilibrium
    solver = RangeSolver(tree, algorithm="cfr+", track_node_values=True).run(1500)
    vals, reach = solver.node_values()
    checked = 0
    for p in (0, 1):
        avg = solver.average_node_values(p)
        for n in tree.nodes:
            own = reach[n.index][p][0] > 0.02  # hands the player itself brings to the node
            opp_mass = reach[n.index][1 - p][0].sum()
            if n.kind != DECISION or not own.any() or opp_mass < 0.02:
                continue
            # cfvs scale with the opponent's mass; payoffs are at most 13 chips
            err = np.abs(avg[n.index][0] - vals[n.index][p][0])[own].max() / opp_mass
            assert err < 0.02, (p, n.history, err)
            checked += 1
    assert checked > 50
    with pytest.raises(ValueError, match="track_node_values"):
        RangeSolver(tree).run(2).average_node_values(0)


def test_continual_resolving_carries_average_values_by_default():
    game = load("leduc")
    agent = DeepStackAgent(game, 1, iterations=50)
    assert agent.carry == "average_values"
    with pytest.raises(ValueError, match="carry"):
        DeepStackAgent(game, 1, carry="bogus")
