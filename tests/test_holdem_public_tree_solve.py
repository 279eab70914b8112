"""Solving hold'em turn subgames built by HoldemPublicGame, checked against the protocol game.

* CFR (DCFR) on a turn subgame with restricted ranges: exploitability falls below 0.5% of the pot,
  and a CFR-D gadget re-solve of a river node from it is safe (DeepStack's continual re-solving);
* an independent brute force: for tiny ranges, enumerate the protocol game (concrete hole cards,
  the protocol's own chance probabilities and returns) under the solver's strategy and compare the
  counterfactual values of every hand, the best-response values and the exploitability with the
  vectorised RangeSolver.
"""
from __future__ import annotations

import numpy as np
import pytest

from cfrkit.cards.hands import HOLE_PAIRS
from cfrkit.games import load
from cfrkit.games.holdem.matchstate import state_from_matchstate
from cfrkit.solvers.public.tree import CHANCE_NODE, DECISION, RangeSolver, build_public_tree
from cfrkit.solvers.public.resolving import resolve

TURN = "MATCHSTATE:0:0:r200c/cc/:5d5c|/8dAs8s/Kh"


def turn_tree(stacks=1200, sizing=None):
    game = load(f"holdem(stacks={stacks};{stacks})")
    state = state_from_matchstate(game, TURN)
    return state, build_public_tree(game, state, bet_sizing=sizing or {1: [1.0]})


def random_ranges(rng, board, count, pool=None):
    free = [h for h in range(1326) if not set(HOLE_PAIRS[h].tolist()) & set(board)]
    if pool is not None:
        free = [h for h in free if set(HOLE_PAIRS[h].tolist()) <= set(pool)]
    ranges = np.zeros((2, 1326))
    for p in range(2):
        idx = rng.choice(free, count, replace=False)
        ranges[p, idx] = rng.random(count) + 0.1
    return ranges


def test_turn_subgame_exploitability_falls_below_bound():
    state, tree = turn_tree()
    assert tree.counts()[CHANCE_NODE] > 0
    ranges = random_ranges(np.random.default_rng(1), state.board, 30)
    solver = RangeSolver(tree, ranges=ranges, algorithm="dcfr")
    pot = tree.root.pot
    solver.run(10)
    early = float(solver.exploitability()[0]) / pot
    solver.run(100)
    late = float(solver.exploitability()[0]) / pot
    assert late < 0.005 and late < early / 5, (early, late)
    # zero-sum: the root values of both players cancel
    v = solver.root_values()[0]
    assert abs(v[0] + v[1]) < 1e-9 * pot

    # continual re-solving on the river (DeepStack): at the river after check-check, re-solve for
    # player 0 with the CFR-D gadget fed the opponent's best-response cfvs from the turn solve; the
    # opponent's best response to the re-solved strategy must not beat those values (gadget safety)
    strategy = solver.average_strategy()
    reach = solver._forward(strategy)
    br1 = solver._backward(reach, 1, strategy, {}, best_response=True)
    card = [c for c in range(52) if c not in state.board][5]
    node = tree.node_at((1, 1, card))
    assert node.kind == DECISION and len(node.board) == 5 and node.player == 0
    own, opp_reach, opp_cfvs = reach[node.index][0][0], reach[node.index][1][0], br1[node.index][0]
    result = resolve(tree.pgame, node.state, 0, own, opp_cfvs=opp_cfvs, iterations=400, algorithm="dcfr")
    assert result.tree.root.contrib == node.contrib and len(result.tree) > 10
    excess = result.opp_br_values[0][0] - opp_cfvs
    live = opp_reach > 0
    assert excess[live].max() < 0.005 * np.abs(opp_cfvs[live]).max()
    assert (opp_reach * excess).sum() < 1e-3 * (opp_reach * np.abs(opp_cfvs)).sum()


def brute_force(tree, state, strategies, ranges, player):
    """Per own hand: (cfv under ``strategies``, best-response cfv) of ``player``, from the protocol game.

    Walks the public tree together with one concrete protocol state per opponent hand (own hand
    fixed); the opponent's reach is multiplied by its strategy, chance by the protocol's probability of
    each card given both hands, and terminals pay ``state.returns()``.
    """
    opp = 1 - player
    own_hands = np.nonzero(ranges[player])[0]
    opp_hands = np.nonzero(ranges[opp])[0]

    def rec(idx, states):
        node = tree.nodes[idx]
        if not states:
            return 0.0, 0.0
        first = next(iter(states.values()))[0]
        if first.is_terminal():
            ev = sum(w * st.returns()[player] for st, w in states.values())
            return ev, ev
        if node.kind == CHANCE_NODE:
            ev = br = 0.0
            for card, ch in zip(node.actions, node.children):
                sub = {}
                for h, (st, w) in states.items():
                    outcomes = dict(st.chance_outcomes())
                    if card in outcomes:
                        sub[h] = (st.child(card), w * outcomes[card])
                e, b = rec(ch, sub)
                ev += e
                br += b
            return ev, br
        assert node.kind == DECISION and first.current_player() == node.player
        sigma = strategies[idx][0]            # (A, H)
        if node.player == player:
            vals = [rec(ch, {h: (st.child(a), w) for h, (st, w) in states.items()})
                    for a, ch in zip(node.actions, node.children)]
            own = own_hand[0]
            ev = sum(sigma[k, own] * vals[k][0] for k in range(len(vals)))
            return ev, max(v[1] for v in vals)
        ev = br = 0.0
        for k, (a, ch) in enumerate(zip(node.actions, node.children)):
            sub = {h: (st.child(a), w * sigma[k, h]) for h, (st, w) in states.items() if sigma[k, h] > 0}
            e, b = rec(ch, sub)
            ev += e
            br += b
        return ev, br

    out = {}
    own_hand = [0]
    for h in own_hands:
        own_hand[0] = h
        states = {}
        for o in opp_hands:
            cards = set(HOLE_PAIRS[h].tolist()) | set(HOLE_PAIRS[o].tolist())
            if len(cards) < 4:
                continue
            st = state.clone()
            st.hole[player] = [int(c) for c in HOLE_PAIRS[h]]
            st.hole[opp] = [int(c) for c in HOLE_PAIRS[o]]
            states[o] = (st, ranges[opp, o])
        out[int(h)] = rec(0, states)
    return out


def test_turn_values_and_best_response_equal_protocol_brute_force():
    state, tree = turn_tree(stacks=1000, sizing={1: [0.5], 2: [1.0]})
    # tiny ranges on few cards, so that the two ranges share cards (card removal matters)
    pool = [48, 49, 50, 44, 45, 36, 37, 12, 13, 0]
    ranges = random_ranges(np.random.default_rng(5), state.board, 5, pool=pool)
    solver = RangeSolver(tree, ranges=ranges, algorithm="cfr+").run(15)   # a non-equilibrium strategy
    strategies = solver.to_numpy_strategy()
    values, _ = solver.node_values()
    total_br = 0.0
    for p in (0, 1):
        brute = brute_force(tree, state, strategies, ranges, p)
        br = solver.best_response_values(p)[0]
        for h, (ev, brv) in brute.items():
            assert values[0][p][0, h] == pytest.approx(ev, abs=1e-7), (p, h)
            assert br[h] == pytest.approx(brv, abs=1e-7), (p, h)
            total_br += ranges[p, h] * brv
    z = sum(ranges[0, a] * ranges[1, b] for a in np.nonzero(ranges[0])[0] for b in np.nonzero(ranges[1])[0]
            if not set(HOLE_PAIRS[a].tolist()) & set(HOLE_PAIRS[b].tolist()))
    assert solver.exploitability()[0] == pytest.approx(total_br / 2 / z, rel=1e-9)
    assert total_br / 2 / z > 1.0   # 15 iterations: clearly exploitable, so the check is not trivial
