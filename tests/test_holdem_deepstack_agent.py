"""HoldemDeepStackAgent: continual re-solving for heads-up no-limit hold'em (cfrkit/agents/holdem_deepstack.py).

River spots use exact values (solved to showdown); the protocol test plays a short-stack game where the
check-down leaves are exact (all-in lines) or the documented fallback.
"""
import numpy as np
import pytest

from cfrkit.agents.holdem_deepstack import HoldemDeepStackAgent
from cfrkit.solvers.public.leaf_functions import showdown_sign_matrix
from cfrkit.cards.hands import HOLE_PAIRS, blocked_pairs, pair_index
from cfrkit.cards import parse_cards
from cfrkit.games.holdem.game import CALL, FOLD, raise_action
from cfrkit.games.holdem.matchstate import state_from_matchstate
from cfrkit.games.registry import load
from cfrkit.solvers.public.flat_range_cfr import FlatRangeSolver

RIVER = "MATCHSTATE:0:0:r200c/cc/cc/:5d5c|/8dAs8s/Kh/2c"   # seat 0 first to act on the river, pot 400


def _river_ranges(seed=0):
    """Two random ranges over the pairs disjoint from the river board (a third of the pairs each)."""
    rng = np.random.default_rng(seed)
    live = ~blocked_pairs(parse_cards("8dAs8sKh2c"))
    r = rng.random((2, 1326)) * live * (rng.random((2, 1326)) < 0.33)
    return r / r.sum(1, keepdims=True)


@pytest.fixture(scope="module")
def river_spot():
    game = load("holdem")
    state = state_from_matchstate(game, RIVER)
    ranges = _river_ranges()
    agent = HoldemDeepStackAgent(game, iterations=200, seed=3)
    agent.start_spot(state, ranges)
    return game, state, ranges, agent


def test_river_first_action_equals_full_solve(river_spot):
    game, state, ranges, agent = river_spot
    hs = agent.hand_strategy(state)
    rec = agent._records[("spot",)]
    tree = rec.result.tree
    # independent check in the compiled solver: the agent's whole river strategy is nearly unexploitable
    flat = FlatRangeSolver(tree, ranges=ranges)
    agent_expl = flat.exploitability(rec.result.strategy)
    pot = 400.0
    assert agent_expl < 0.015 * pot          # measured: 0.94% of the pot after 200 DCFR iterations
    # and its first action matches a full solve of the spot (range-weighted action frequencies)
    full = FlatRangeSolver(tree, ranges=ranges)
    full.solve(target_fraction=0.001, check_every=20, max_iterations=2000)
    ref = full.average_strategy()[0][0].T          # (H, A)
    freq_agent = ranges[0] @ hs.probs
    freq_full = ranges[0] @ ref
    assert list(hs.actions) == list(tree.root.actions)
    np.testing.assert_allclose(freq_agent, freq_full, atol=0.03)   # measured: 0.013
    # values: the agent's root value equals the full solve's to a fraction of a percent of the pot
    assert abs(flat.root_values(rec.result.strategy)[0] - full.root_values()[0]) < 0.005 * pot   # measured: 0.1%


def test_hand_strategy_rows_and_sampled_action(river_spot):
    game, state, ranges, agent = river_spot
    hs = agent.hand_strategy(state)
    live = ~blocked_pairs(list(state.board))
    np.testing.assert_allclose(hs.probs[live].sum(1), 1.0, atol=1e-9)
    assert np.all(hs.probs[~live] == 0)
    assert all(state.is_legal(int(a)) for a in hs.actions)
    h = pair_index(*state.hole[0])
    for _ in range(20):
        a = agent.act(state)
        assert hs.probability_of(a)[h] > 0
    np.testing.assert_allclose(agent.hand_action_probability(state, CALL), hs.probability_of(CALL))


def _gadget_excess(rec, opp_reach):
    """Opponent's best-response cfvs against the re-solved strategy minus the carried cfvs: (largest
    excess over the hands it holds / largest carried value, reach-weighted excess / weighted |carried|)."""
    res = rec.result
    br = res.opp_br_values[0][0]
    carried = res.solver.gadget_values[0]
    ex = br - carried
    live = opp_reach > 0
    return (float(ex[live].max() / np.abs(carried[live]).max()),
            float((opp_reach * ex).sum() / (opp_reach * np.abs(carried)).sum()))


def test_gadget_resolve_keeps_opponent_values(river_spot):
    game, state, ranges, agent = river_spot
    # seat 0 checks, the opponent bets pot (on the tree): seat 0 re-solves with the CFR-D gadget
    s = state.child(CALL)
    s = s.child(raise_action(s.max_spent() + 400))
    hs = agent.hand_strategy(s)
    rec = agent._record_for(0, tuple(s.history()))
    assert rec.root == tuple(s.history()[4:])
    # carried values are the opponent's values from the previous solve at this node
    base = agent._records[("spot",)]
    node = base.result.tree.node_at(tuple(s.history()[len(state.history()):]))
    # the opponent's best response to the re-solved strategy stays within the carried values (both solves
    # 200 DCFR iterations; measured 0.054 and 0.018)
    worst, weighted = _gadget_excess(rec, base.result.reach[node.index][0, 1])
    assert worst < 0.08 and weighted < 0.03
    np.testing.assert_allclose(rec.result.solver.gadget_values[0],
                               base.result.opp_avg_values[node.index][0] * agent._pgames[3].hand_mask(s.board))
    assert set(hs.actions.tolist()) >= {FOLD, CALL}


def test_off_tree_bet_is_resolved_from_carried_values(river_spot):
    game, state, ranges, agent = river_spot
    s = state.child(CALL)
    base = agent._records[("spot",)]
    opp_node = base.result.tree.node_at((CALL,))
    off = raise_action(s.max_spent() + 290)                   # 0.725 pot: the tree has 0.5 and 1 pot
    assert off not in opp_node.actions
    s_off = s.child(off)
    hs = agent.hand_strategy(s_off)
    rec = agent._record_for(0, tuple(s_off.history()))
    # re-solved at the actual state: the real bet is in the root's contributions
    assert rec.result.tree.root.contrib == (200.0, 490.0)
    # the gadget's values are the opponent's carried values at its decision node (before the bet)
    np.testing.assert_allclose(rec.result.solver.gadget_values[0],
                               base.result.opp_avg_values[opp_node.index][0] * agent._pgames[3].hand_mask(s.board))
    worst, weighted = _gadget_excess(rec, base.result.reach[opp_node.index][0, 1])
    assert worst < 0.05 and weighted < 0.03            # measured 0.026 and -0.09
    live = ~blocked_pairs(list(s_off.board))
    np.testing.assert_allclose(hs.probs[live].sum(1), 1.0, atol=1e-9)
    # a bet one chip off a tree size is answered almost like the tree size
    near = s.child(raise_action(s.max_spent() + 401))
    on = s.child(raise_action(s.max_spent() + 400))
    own = agent._record_for(0, tuple(on.history())).result.reach[0][0, 0]
    fold_near = own @ agent.hand_strategy(near).probability_of(FOLD) / own.sum()
    fold_on = own @ agent.hand_strategy(on).probability_of(FOLD) / own.sum()
    assert abs(fold_near - fold_on) < 0.05


def test_checkdown_matrix_matches_enumeration():
    board = parse_cards("8dAs8sKh")
    m = showdown_sign_matrix(board)
    from cfrkit.cards import evaluate

    rng = np.random.default_rng(1)
    live = np.flatnonzero(~blocked_pairs(board))
    for _ in range(5):
        h, g = rng.choice(live, 2, replace=False)
        a, b = HOLE_PAIRS[h], HOLE_PAIRS[g]
        if len({*a, *b}) < 4:
            assert m[h, g] == 0
            continue
        tot = 0
        n = 0
        for c in range(52):
            if c in board or c in a or c in b:
                continue
            x, y = evaluate(list(board) + [c] + list(a)), evaluate(list(board) + [c] + list(b))
            tot += np.sign(x - y)
            n += 1
        assert m[h, g] == pytest.approx(tot / n, abs=1e-6)


def test_protocol_hands_short_stacks():
    """Whole hands through the protocol (checked legality, AIVAT's consistency check, chip sums)."""
    from cfrkit.evaluation.headtohead import head_to_head
    from cfrkit.poker import make_agent

    game = load("holdem(stacks=400;400)")
    agent = make_agent("deepstack-holdem:iterations=20,preflop_boards=40,flop_runouts=60,"
                       "game=holdem(stacks=400;400)", seed=2)
    res = head_to_head(game, [agent, make_agent("random", seed=5)], 2, seed=4, duplicate=True, aivat=True)
    assert len(res.hand_values) == 4
    assert np.all(np.abs(res.hand_values) <= 400)
    assert agent.num_resolves >= 2


def test_turn_leaf_values_callable_matches_chance_leaves():
    """A turn re-solve whose river leaves take a value function (the nets interface; here the exact
    check-down value of each river board) equals the re-solve whose leaves sit before the river card
    with the check-down value over river cards: same game, so the same iterates up to rounding."""
    game = load("holdem")
    state = state_from_matchstate(game, "MATCHSTATE:0:0:r200c/cc/:5d5c|/8dAs8s/Kh")
    rng = np.random.default_rng(2)
    live = ~blocked_pairs(list(state.board))
    ranges = rng.random((2, 1326)) * live
    a = HoldemDeepStackAgent(game, iterations=2, seed=1)
    b = HoldemDeepStackAgent(game, iterations=2, seed=1, leaf_values={"river": a.checkdown})
    a.start_spot(state, ranges)
    b.start_spot(state, ranges)
    ra, rb = a._records[("spot",)].result, b._records[("spot",)].result
    assert not any(n.kind == "chance" for n in ra.tree.nodes)                   # leaves before the card
    assert sum(n.kind == "chance" for n in rb.tree.nodes) > 0                   # leaves after it
    assert all(len(rb.tree.nodes[i].board) == 5 or rb.tree.nodes[i].state.current_player() == -1
               for i in rb.tree.leaf_nodes)
    np.testing.assert_allclose(a.hand_strategy(state).probs, b.hand_strategy(state).probs, atol=1e-4)
    scale = np.abs(rb.opp_avg_values[0]).max()       # the sign matrices are float32
    np.testing.assert_allclose(ra.opp_avg_values[0], rb.opp_avg_values[0], rtol=0, atol=1e-4 * scale)


def test_agent_spec_and_copies(river_spot):
    import copy

    from cfrkit.poker import make_agent
    from cfrkit.games.base import GameError

    game, state, ranges, agent = river_spot
    twin = copy.deepcopy(agent)          # LBR copies agents; memoised solves are dropped, settings kept
    assert twin.iterations == agent.iterations and not twin._records and agent._records
    a = make_agent("deepstack-holdem:iterations=7,algorithm=cfr+,skip=2", seed=1)
    assert (a.iterations, a.algorithm, a.skip) == (7, "cfr+", 2)
    for bad in ("deepstack-holdem:iterations=x", "deepstack-holdem:bogus=1", "deepstack-holdem:iterations"):
        with pytest.raises(GameError):
            make_agent(bad)
    with pytest.raises(GameError, match="value nets"):
        HoldemDeepStackAgent(game, nets="/nonexistent-nets-dir")
