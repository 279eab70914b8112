"""The blueprint's value tables against a fitted model of the other agent (issue 27, A^C vs A^R): the recorded
abstract strategy against the agent's own actions, the backward pass with a replaced strategy against a scalar
walk, the chance expectations against enumeration, and AIVAT's mean against counting."""
from functools import lru_cache

import numpy as np
import pytest
from aivat_checks import aivat_counting_gap
from holdem_play import play

from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.agents.blueprint_values import walk_step, blueprint_values
from cfrkit.agents.opponent_values import (OpponentTablesValueFunction, fit_abstract_policy, opponent_sigma)
from cfrkit.cards.hands import HOLE_PAIRS
from cfrkit.cards.preflop import preflop_equity_table
from cfrkit.evaluation.headtohead import head_to_head
from cfrkit.games import load
from cfrkit.games.base import GameError
from cfrkit.games.holdem.game import CALL
from cfrkit.poker.registry import make_agent
from cfrkit.poker.view import poker_view
from cfrkit.solvers.blueprint.betting_tree import DECISION, FOLD_TERMINAL
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy

GAME = "holdem(stacks=400;400)"


@pytest.fixture(scope="module")
def owner(tiny_blueprint):
    return BlueprintAgent(BlueprintStrategy.load(tiny_blueprint(GAME)), seed=0)


@pytest.fixture(scope="module")
def fitted(owner):
    """(counts, the fitting's A^R): 40 duplicate deals of the owner against A^R."""
    ar = make_agent("rule-based", game=load(GAME), seed=5)
    twin = BlueprintAgent(owner.blueprint, seed=9)  # not the evaluated agent: its draws stay untouched
    return fit_abstract_policy(twin, ar, 40, seed=3), ar


def test_recorded_preflop_strategy_is_the_agents_own_per_class(owner, fitted):
    """At the first preflop decision (A^R in seat 1, first to act preflop) every hand reaches it, A^R is pure and
    plays by hand class (the preflop buckets), so the fitted strategy with a negligible prior is the one-hot of A^R's own action for
    each class, translated to the abstract child: asked here hand by hand through ``act``."""
    counts, _ = fitted
    s = owner.blueprint
    t = s.tree
    assert 0 in counts[1] and int(t.player[0]) == 1
    ar = make_agent("rule-based", game=load(GAME), seed=11)
    sigma = opponent_sigma(s, counts[1], prior=1e-9)(0)
    cls = np.asarray(s.abstraction.buckets_for_board(0, []))
    root = load(GAME).new_initial_state()
    first = int(t.child_start[0])
    seen = set()
    for pair, (a, b) in enumerate(HOLE_PAIRS):
        if cls[pair] in seen:
            continue
        seen.add(int(cls[pair]))
        state = root.clone()
        other = [c for c in range(52) if c not in (a, b)][:2]
        for c in (*other, a, b):  # seat 0's cards are dealt first
            state.apply_action(int(c))
        assert sorted(state.hole[1]) == sorted((a, b)) and state.current_player() == 1
        action = ar.act(state)
        child = walk_step(t, owner.translate_raise, 0, state, int(action), None)
        want = np.zeros(int(t.num_children[0]))
        want[int(child) - first] = 1.0
        np.testing.assert_allclose(sigma[int(cls[pair])], want, atol=1e-6)
    # every class reached the root: all 169 rows are learned, and the weights are hand counts (4, 6 or 12 per class)
    w = counts[1][0].sum(axis=1)
    assert len(seen) == 169 and set(np.unique(w / w.min()).round(6)) <= {1.0, 1.5, 3.0}


def test_backward_pass_with_a_replaced_strategy_matches_a_scalar_walk(owner):
    s = owner.blueprint
    t = s.tree
    nb = s.num_buckets
    trans = [np.full((nb[r], nb[r + 1]), 1.0 / nb[r + 1]) for r in range(3)]
    rng = np.random.default_rng(0)
    replaced = {}
    for n in np.flatnonzero((t.kind == DECISION) & (t.player == 1)):
        m = int(t.num_children[n])
        replaced[int(n)] = rng.dirichlet(np.ones(m), size=nb[int(t.round[n])])

    def sig(n):
        return replaced.get(int(n))

    @lru_cache(maxsize=None)
    def ref(n, b0, b1):
        r = int(t.round[n])
        s0, s1 = float(t.spent[n, 0]), float(t.spent[n, 1])
        if t.kind[n] == FOLD_TERMINAL:
            return (-s0 if t.player[n] == 0 else s1), 0.0
        if t.kind[n] != DECISION:
            return -s0, s0 + s1
        p0 = int(t.player[n]) == 0
        row = replaced[n][b1] if not p0 else s.probabilities(n, [b0])[0]
        d = sd = 0.0
        for i in range(int(t.num_children[n])):
            c = int(t.child_start[n]) + i
            if t.kind[c] != DECISION or t.round[c] == r:
                x, y = ref(c, b0, b1) if t.kind[c] == DECISION else ref(c, 0, 0)
            else:  # uniform transitions: the mean over the next round's bucket pairs
                pairs = [ref(c, u, w) for u in range(nb[r + 1]) for w in range(nb[r + 1])]
                x, y = np.mean([p[0] for p in pairs]), np.mean([p[1] for p in pairs])
            d += row[i] * x
            sd += row[i] * y
        return d, sd

    fast = blueprint_values(s, trans, sig)
    plain = blueprint_values(s, trans)
    flop = [int(n) for n in t.decision_nodes(1)[:4]]
    for n, b0, b1 in [(0, 0, 0), (0, 168, 3), (0, 40, 120)] + [(n, 1, 2) for n in flop]:
        d, sd = fast.ds(n)
        want = ref(n, b0, b1)
        assert d[b0, b1] == pytest.approx(want[0], abs=1e-3) and sd[b0, b1] == pytest.approx(want[1], abs=1e-3)
    assert not np.allclose(fast.ds(0)[0], plain.ds(0)[0])  # the replaced strategy does change the values
    # None everywhere is the blueprint's own pass
    same = blueprint_values(s, trans, lambda n: None)
    assert all(np.array_equal(a, b) for a, b in zip(same.D, plain.D))


def _vf(owner, fitted, opponent, **kw):
    counts, _ = fitted
    view = poker_view(load(GAME))
    return OpponentTablesValueFunction(owner.blueprint, view, owner.translate_raise, opponent, counts,
                                       boards=4, flops=8, **kw)


def _hand_to(actions, cards):
    """GAME's state after dealing ``cards`` at chance nodes and playing ``actions`` (tests/holdem_play.py)."""
    state = load(GAME).new_initial_state()
    play(state, *actions, board=cards)
    return state


def test_fitted_tables_per_seat_and_exact_chance_expectations(owner, fitted, monkeypatch):
    from types import SimpleNamespace

    ar = make_agent("rule-based", game=load(GAME), seed=1)
    vf = _vf(owner, fitted, ar, river_exact=False)  # river_exact's mean is a 12-card sample (its own test)
    assert vf._base is None  # both seats fitted: the self-play tables are dropped
    pre = np.asarray(vf.ab.buckets_for_board(0, []))
    pairs = np.asarray(HOLE_PAIRS)
    disjoint = (pairs[:, None, 0] != pairs[None, :, 0]) & (pairs[:, None, 0] != pairs[None, :, 1]) \
        & (pairs[:, None, 1] != pairs[None, :, 0]) & (pairs[:, None, 1] != pairs[None, :, 1])
    root = load(GAME).new_initial_state()
    deals = []
    for seats in ([owner, ar], [ar, owner]):
        vf.hand_start(SimpleNamespace(seat_agents=seats))
        assert vf.table is vf._tables[seats.index(ar)]
        d, sd = vf.table.ds(0)
        v = d[pre[:, None], pre[None, :]] + sd[pre[:, None], pre[None, :]] * preflop_equity_table(progress=False)
        deals.append(vf._table_deal())
        assert deals[-1] == pytest.approx(v[disjoint].mean(), rel=1e-9, abs=1e-6)
        # the deal's expectation: the tables' where the owner acts first, else one step of A^R's preflop strategy
        # over them (what value() is after the deal; tests/test_aivat_chance_cv.py)
        first = vf._first_seat()
        assert vf.chance_expectation(root) == (deals[-1] if seats[first] is owner
                                               else vf._deal_one_step(first, vf._policy[first]))
        # the turn and the river: the mean of value() over every card (flops covers them)
        monkeypatch.setattr(vf, "flops", 64)
        hands = [0, 13, 1, 14]
        for actions, cards in (([CALL] * 4, hands + [20, 30, 40]), ([CALL] * 6, hands + [20, 30, 40, 45])):
            state = _hand_to(actions, cards)
            expected = vf.chance_expectation(state)
            values = []
            for card, _ in state.chance_outcomes():
                child = state.clone()
                child.apply_action(card)
                values.append(vf.value(child))
            assert expected == pytest.approx(np.mean(values), abs=1e-9)
        monkeypatch.undo()
    assert deals[0] != pytest.approx(deals[1])  # one pair of tables per seat
    with pytest.raises(GameError, match="without the fitted opponent"):
        vf.hand_start(SimpleNamespace(seat_agents=[owner, make_agent("always-call", game=load(GAME))]))


def test_aivat_with_fitted_tables_agrees_with_counting_and_a_biased_deal_is_caught(owner, fitted, monkeypatch):
    game = load(GAME)
    ar = make_agent("rule-based", game=game, seed=1)
    vf = _vf(owner, fitted, ar)
    monkeypatch.setattr(owner, "aivat_value_function", lambda view: vf.fresh(view))


    res = head_to_head(game, [owner, ar], 150, seed=11, duplicate=True, aivat=True)
    assert aivat_counting_gap(res) < 4.0 and res.aivat.std < res.plain.std
    real = OpponentTablesValueFunction._deal
    monkeypatch.setattr(OpponentTablesValueFunction, "_deal", lambda self: real(self) + 100.0)
    bad = head_to_head(game, [owner, ar], 150, seed=11, duplicate=True, aivat=True)
    assert aivat_counting_gap(bad) > 4.0


def test_bad_arguments_are_refused(owner, fitted):
    with pytest.raises(GameError, match="prior must be > 0"):
        opponent_sigma(owner.blueprint, fitted[0][0], prior=0.0)
    with pytest.raises(GameError, match="deals must be >= 1"):
        fit_abstract_policy(owner, fitted[1], 0)
    with pytest.raises(GameError, match="no hand_strategy"):
        fit_abstract_policy(owner, object(), 1)


def test_fit_opponent_option_switches_the_value_function_and_leaves_the_hands_alone(owner):
    """``fit_opponent_deals`` (head_to_head, AivatObserver): the blueprint's values against A^R come from tables
    fitted on a separate match (another seed), so the same hands are played (identical payoffs: the fit used
    twins, never the evaluated agents) while the AIVAT values change; the fit is built once per opponent."""
    from cfrkit.evaluation.aivat import AivatObserver, fit_seed

    game = load(GAME)
    ar = make_agent("rule-based", game=game, seed=1)
    runs = []
    for deals in (0, 12):
        bp = BlueprintAgent(owner.blueprint, seed=4)  # the same draws in both matches
        obs = AivatObserver(agent=[bp, ar], fit_opponent_deals=deals)
        runs.append((head_to_head(game, [bp, ar], 10, seed=11, duplicate=True, observers=[obs]), obs.vf, bp))
    (plain, vf0, _), (fitted, vf1, bp) = runs
    assert not isinstance(vf0, OpponentTablesValueFunction)
    assert isinstance(vf1, OpponentTablesValueFunction) and vf1.opponent is ar
    np.testing.assert_array_equal(plain.payoffs, fitted.payoffs)
    assert not np.allclose(plain.aivat_values, fitted.aivat_values)
    assert fit_seed(11) != 11
    # head_to_head's option is the same observer; the second match reuses the fitted tables
    again = head_to_head(game, [bp, ar], 3, seed=11, duplicate=True, aivat=True, fit_opponent_deals=12)
    assert again.aivat_values is not None and len(bp._fitted) == 1
    assert bp.opponent_value_function(poker_view(game), ar, 12, fit_seed(11))._tables is vf1._tables


def test_fit_opponent_bad_input_is_one_line(owner):
    from cfrkit.evaluation.aivat import AivatObserver

    game = load(GAME)
    ar = make_agent("rule-based", game=game, seed=1)
    with pytest.raises(GameError, match="fit_opponent_deals must be >= 0, got -3"):
        head_to_head(game, [owner, ar], 2, seed=1, aivat=True, fit_opponent_deals=-3)
    with pytest.raises(GameError, match="fit_opponent_deals must be >= 0"):
        AivatObserver(agent=[owner, ar], fit_opponent_deals=-1)
    with pytest.raises(GameError, match="at least 1 deal"):
        owner.opponent_value_function(poker_view(game), ar, 0, seed=5)
    with pytest.raises(GameError, match="no hand_strategy"):
        owner.opponent_value_function(poker_view(game), object(), 5, seed=5)
