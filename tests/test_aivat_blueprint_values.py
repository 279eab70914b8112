"""The blueprint's self-play values as an AIVAT value function (issue 27, A^C): the vectorised backward
pass against a slow scalar walk, the chance expectations against exact enumeration, the wiring."""
from functools import lru_cache

import numpy as np
import pytest

from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.agents.blueprint_values import BlueprintValueFunction, _win_matrix, blueprint_values
from cfrkit.cards.hands import HOLE_PAIRS
from cfrkit.evaluation.headtohead import head_to_head
from cfrkit.games import load
from cfrkit.games.holdem.game import CALL
from cfrkit.poker.registry import make_agent
from cfrkit.poker.view import poker_view
from cfrkit.solvers.blueprint.betting_tree import DECISION, FOLD_TERMINAL, build_betting_tree
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy
from cfrkit.solvers.blueprint.trainer import BlueprintTrainer

GAME = "holdem(stacks=400;400)"


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    tree = build_betting_tree(GAME, "0.5+1", 1)
    tr = BlueprintTrainer(GAME, "0.5+1", 1, abstraction="ehs:169,4,4,4", seed=2, tree=tree)
    tr.iterate(20)
    path = str(tmp_path_factory.mktemp("bpv") / "bp.npz")
    tr.save(path)
    return BlueprintAgent(BlueprintStrategy.load(path), seed=0)


@pytest.fixture(scope="module")
def vf(agent):
    return agent.aivat_value_function(poker_view(load(GAME)), boards=4, flops=8)


def test_backward_pass_matches_a_scalar_walk_of_the_tree(agent, vf):
    s = agent.blueprint
    t = s.tree
    nb = s.num_buckets
    trans = vf.trans

    @lru_cache(maxsize=None)
    def ref(n, b0, b1):
        r = int(t.round[n])
        s0, s1 = float(t.spent[n, 0]), float(t.spent[n, 1])
        if t.kind[n] == FOLD_TERMINAL:
            return -s0 if t.player[n] == 0 else s1
        if t.kind[n] != DECISION:
            return _win_matrix(nb[r])[b0, b1] * (s0 + s1) - s0
        sigma = s.probabilities(n, [b0 if t.player[n] == 0 else b1])[0]
        total = 0.0
        for i in range(int(t.num_children[n])):
            c = int(t.child_start[n]) + i
            if t.round[c] == r:
                v = ref(c, b0, b1)
            else:
                tr = trans[r]
                v = sum(tr[b0, x] * tr[b1, y] * ref(c, x, y) for x in range(nb[r + 1]) for y in range(nb[r + 1]))
            total += sigma[i] * v
        return total

    fast = blueprint_values(s, trans)
    for b0, b1 in [(0, 0), (168, 3), (40, 120), (100, 100)]:
        assert fast[0][b0, b1] == pytest.approx(ref(0, b0, b1), abs=1e-6)
    flop = t.decision_nodes(1)[:5]
    for n in flop:
        for b0 in range(nb[1]):
            for b1 in range(nb[1]):
                assert fast[n][b0, b1] == pytest.approx(ref(int(n), b0, b1), abs=1e-6)
    # chips are conserved in expectation: no value beyond a stack
    assert max(np.abs(v).max() for v in fast) <= 400 + 1e-9


def _hand_to(actions, cards):
    """SMALL game state after dealing ``cards`` in order at chance nodes and playing ``actions``."""
    state = load(GAME).new_initial_state()
    cards, actions = list(cards), list(actions)
    while True:
        if state.is_chance_node():
            if not cards:
                return state
            state.apply_action(cards.pop(0))
        elif actions:
            state.apply_action(actions.pop(0))
        else:
            return state


def test_chance_expectations_are_exact(vf):
    hands = [0, 13, 1, 14]  # the engine deals hole cards at chance nodes first
    # preflop: the joint of the preflop buckets over all disjoint pairs of hands, by brute force
    root = load(GAME).new_initial_state()
    pre = np.asarray(vf.ab.buckets_for_board(0, []))
    pairs = np.asarray(HOLE_PAIRS)
    disjoint = np.array([[not set(p) & set(q) for q in pairs] for p in pairs[::13]])  # a row subsample
    assert vf._joint().sum() == pytest.approx(1.0)
    sub = np.mean([vf.V[0][pre[i * 13], pre[j]] for i in range(disjoint.shape[0]) for j in np.flatnonzero(disjoint[i])])
    assert abs(vf.chance_expectation(root) - sub) < 0.05 * np.abs(vf.V[0]).max()  # a subsample of rows only
    # the turn: chance_expectation is the mean of the value over every turn card
    state = _hand_to([CALL, CALL, CALL, CALL], hands + [20, 30, 40])  # preflop and flop checked through
    assert state.is_chance_node() and len(state.board) == 3
    expected = vf.chance_expectation(state)
    values = []
    for card, _ in state.chance_outcomes():
        child = state.clone()
        child.apply_action(card)
        assert not child.is_chance_node()
        values.append(vf.value(child))
    assert expected == pytest.approx(np.mean(values), abs=1e-9)
    # the flop: a uniform sample, so its mean over many draws tends to the mean over sampled flops' values
    state = _hand_to([CALL, CALL], hands)
    assert state.is_chance_node() and len(state.board) == 0
    draws = [vf.chance_expectation(state) for _ in range(30)]
    rng = np.random.default_rng(0)
    rest = [c for c in range(52) if c not in hands]
    vals = []
    for _ in range(240):
        child = state.clone()
        for c in rng.choice(rest, 3, replace=False):
            child.apply_action(int(c))
        vals.append(vf.value(child))
    se = np.std(vals) * np.sqrt(1 / 240 + 1 / (30 * vf.flops)) + 1e-9
    assert abs(np.mean(draws) - np.mean(vals)) < 5 * se


def test_head_to_head_uses_the_blueprint_values_from_either_seat(agent):
    game = load(GAME)
    other = make_agent("rule-based", game=game, seed=1)
    for agents in ([agent, other], [other, agent]):
        res = head_to_head(game, agents, 30, seed=3, duplicate=True, aivat=True)
        assert res.aivat is not None and np.isfinite(res.aivat.mean)
    assert isinstance(agent.aivat_value_function(poker_view(game)), BlueprintValueFunction)


def test_aivat_mean_agrees_with_counting_and_a_biased_chance_term_is_caught(agent, monkeypatch):
    game = load(GAME)
    other = make_agent("rule-based", game=game, seed=1)

    def gap(res):
        # per hand, seat 0's AIVAT value minus its winnings (chips; agents[0] sits in seat 0 in the first
        # hand of each duplicate deal): zero mean when every correction term has zero mean.  Seat 0, not
        # agents[0], because a bias of seat 0's value cancels between a deal's two seatings.
        sign = np.tile([1.0, -1.0], res.payoffs.shape[0] // 2)
        d = (res.aivat_values - res.payoffs[:, 0]) * sign
        return abs(d.mean()) / (d.std(ddof=1) / np.sqrt(d.size))

    res = head_to_head(game, [agent, other], 150, seed=11, duplicate=True, aivat=True)
    assert gap(res) < 4.0
    assert res.aivat.std < res.plain.std  # the control variates do reduce the spread
    real = BlueprintValueFunction.chance_expectation
    monkeypatch.setattr(BlueprintValueFunction, "chance_expectation", lambda self, s: real(self, s) + 100.0)
    bad = head_to_head(game, [agent, other], 150, seed=11, duplicate=True, aivat=True)
    assert gap(bad) > 4.0
