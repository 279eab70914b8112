"""The blueprint's self-play values as an AIVAT value function (issue 27, A^C): the vectorised backward
pass against a slow scalar walk, the chance expectations against exact enumeration, the wiring."""
import functools
from functools import lru_cache

import numpy as np
import pytest
from aivat_checks import aivat_counting_gap
from holdem_play import play

from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.agents.blueprint_values import BlueprintValueFunction, blueprint_values
from cfrkit.cards.preflop import preflop_equity_table
from cfrkit.games.base import GameError
from cfrkit.cards.hands import HOLE_PAIRS, pair_index
from cfrkit.evaluation.headtohead import head_to_head
from cfrkit.games import load
from cfrkit.games.holdem.game import CALL, raise_action
from cfrkit.poker.registry import make_agent
from cfrkit.poker.view import poker_view
from cfrkit.solvers.blueprint.betting_tree import DECISION, FOLD_TERMINAL
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy

GAME = "holdem(stacks=400;400)"
_PATH = [""]  # the trained blueprint's file (a second agent loads its own copy)


@pytest.fixture(scope="module")
def agent(tiny_blueprint):
    path = tiny_blueprint(GAME)
    _PATH[:] = [path]
    return BlueprintAgent(BlueprintStrategy.load(path), seed=0)


@pytest.fixture(scope="module")
def vf(agent):
    return agent.aivat_value_function(poker_view(load(GAME)), boards=4, flops=8, follow_owner=True)


def test_backward_pass_matches_a_scalar_walk_of_the_tree(agent, vf):
    s = agent.blueprint
    t = s.tree
    nb = s.num_buckets
    trans = vf.trans

    @lru_cache(maxsize=None)
    def ref(n, b0, b1):
        """(D, S): seat 0's chips with showdowns counted as lost, and the showdown pot (scalar walk)."""
        r = int(t.round[n])
        s0, s1 = float(t.spent[n, 0]), float(t.spent[n, 1])
        if t.kind[n] == FOLD_TERMINAL:
            return (-s0 if t.player[n] == 0 else s1), 0.0
        if t.kind[n] != DECISION:
            return -s0, s0 + s1
        sigma = s.probabilities(n, [b0 if t.player[n] == 0 else b1])[0]
        d = sd = 0.0
        for i in range(int(t.num_children[n])):
            c = int(t.child_start[n]) + i
            if t.round[c] == r or t.kind[c] != DECISION:
                x, y = ref(c, b0, b1) if t.kind[c] == DECISION else ref(c, 0, 0)
            else:
                tr = trans[r]
                x = sum(tr[b0, u] * tr[b1, w] * ref(c, u, w)[0] for u in range(nb[r + 1]) for w in range(nb[r + 1]))
                y = sum(tr[b0, u] * tr[b1, w] * ref(c, u, w)[1] for u in range(nb[r + 1]) for w in range(nb[r + 1]))
            d += sigma[i] * x
            sd += sigma[i] * y
        return d, sd

    fast = blueprint_values(s, trans)
    for b0, b1 in [(0, 0), (168, 3), (40, 120), (100, 100)]:
        d, sd = fast.ds(0)
        want = ref(0, b0, b1)
        assert d[b0, b1] == pytest.approx(want[0], abs=1e-3) and sd[b0, b1] == pytest.approx(want[1], abs=1e-3)
    for n in list(t.decision_nodes(1)[:5]) + list(t.decision_nodes(3)[-5:]):
        d, sd = fast.ds(int(n))
        for b0 in range(nb[int(t.round[n])]):
            for b1 in range(nb[int(t.round[n])]):
                want = ref(int(n), b0, b1)
                assert d[b0, b1] == pytest.approx(want[0], abs=1e-3)  # float32 storage
                assert sd[b0, b1] == pytest.approx(want[1], abs=1e-3)
    # chips are conserved: a showdown pot is at most both stacks, and seat 0 loses at most its stack
    for r in range(4):
        assert fast.S[r].min() >= 0 and fast.S[r].max() <= 800 + 1e-3
        assert fast.D[r].min() >= -400 - 1e-3 and fast.D[r].max() <= 400 + 1e-3
    # only decision nodes are stored
    assert sum(x.shape[0] for x in fast.D) == int((t.kind == DECISION).sum())


def test_oversized_tables_are_refused(agent, monkeypatch):
    import cfrkit.agents.blueprint_values as bv

    monkeypatch.setattr(bv, "_MAX_ENTRIES", 1000)
    with pytest.raises(GameError, match="more than 1000"):
        blueprint_values(agent.blueprint, bv.bucket_transitions(agent.blueprint.abstraction, 1))
    fresh = BlueprintAgent(agent.blueprint, seed=0)
    assert fresh.aivat_value_function(poker_view(load(GAME)), boards=1) is None  # the observer's equity fallback


def _hand_to(actions, cards):
    """GAME's state after dealing ``cards`` at chance nodes and playing ``actions`` (tests/holdem_play.py)."""
    state = load(GAME).new_initial_state()
    play(state, *actions, board=cards)
    return state


def test_chance_expectations_are_exact(vf, monkeypatch):
    hands = [0, 13, 1, 14]  # the engine deals hole cards at chance nodes first
    # the deal: D + S * eq averaged over every ordered pair of disjoint hands, by brute force over 1326 x 1326
    root = load(GAME).new_initial_state()
    pre = np.asarray(vf.ab.buckets_for_board(0, []))
    pairs = np.asarray(HOLE_PAIRS)
    disjoint = (pairs[:, None, 0] != pairs[None, :, 0]) & (pairs[:, None, 0] != pairs[None, :, 1]) \
        & (pairs[:, None, 1] != pairs[None, :, 0]) & (pairs[:, None, 1] != pairs[None, :, 1])
    d, sd = vf.table.ds(0)
    v = d[pre[:, None], pre[None, :]] + sd[pre[:, None], pre[None, :]] * preflop_equity_table(progress=False)
    assert vf.chance_expectation(root) == pytest.approx(v[disjoint].mean(), rel=1e-9, abs=1e-6)
    # the turn (every card when ``flops`` covers them) and the river (always every card): the mean of value
    monkeypatch.setattr(vf, "flops", 64)
    for actions, cards in (([CALL] * 4, hands + [20, 30, 40]), ([CALL] * 6, hands + [20, 30, 40, 45])):
        state = _hand_to(actions, cards)
        assert state.is_chance_node() and len(state.board) == len(cards) - 4
        expected = vf.chance_expectation(state)
        values = []
        for card, _ in state.chance_outcomes():
            child = state.clone()
            child.apply_action(card)
            assert not child.is_chance_node()
            values.append(vf.value(child))
        assert expected == pytest.approx(np.mean(values), abs=1e-9)
    monkeypatch.undo()
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


    res = head_to_head(game, [agent, other], 150, seed=11, duplicate=True, aivat=True)
    assert aivat_counting_gap(res) < 4.0
    assert res.aivat.std < res.plain.std  # the control variates do reduce the spread
    real = BlueprintValueFunction.chance_expectation
    monkeypatch.setattr(BlueprintValueFunction, "chance_expectation", lambda self, s: real(self, s) + 100.0)
    bad = head_to_head(game, [agent, other], 150, seed=11, duplicate=True, aivat=True)
    assert aivat_counting_gap(bad) > 4.0


def _street_reference(vf, state, policies):
    """Seat 0's value with the rest of the street played by ``policies[seat](state) -> (actions, probs)``, the
    tables after a round-closing call (an independent recursion for the lookahead's check)."""
    if state.is_terminal():
        return float(state.returns()[0])
    if state.is_chance_node():
        return vf.table_value(state)
    acts, probs = policies[state.current_player()](state)
    total = 0.0
    for a, q in zip(acts, probs):
        if q > 0:
            child = state.clone()
            child.apply_action(int(a))
            total += q * _street_reference(vf, child, policies)
    return total


def test_lookahead_plays_the_known_agents_own_strategies(agent, vf, monkeypatch):
    from types import SimpleNamespace

    game = load(GAME)
    ar = make_agent("rule-based", game=game, seed=1)
    twin = BlueprintAgent(agent.blueprint, seed=7)  # the owner's strategy, asked through the agent itself

    def own(state):
        hs = twin.hand_strategy(state)
        return hs.actions, hs.probs[pair_index(*state.hole[state.current_player()])]

    def ar_policy(state):
        return [ar.act(state)], [1.0]

    try:
        for street_from in (4, 1):  # one step at A^R's decisions only; the whole street for both seats
            monkeypatch.setattr(vf, "street_from", street_from)
            vf.hand_start(SimpleNamespace(seat_agents=[ar, agent]))  # A^R in seat 0: first to act after the flop
            assert vf._policy[1] is None and vf._policy[0] is not None  # the owner is modelled by the tables
            state = _hand_to([CALL, CALL], [0, 13, 1, 14, 20, 30, 40])
            assert state.current_player() == 0
            child = state.clone()
            child.apply_action(ar.act(state))
            if street_from == 4:
                assert vf.value(state) == pytest.approx(vf.table_value(child), abs=1e-9)
            else:
                twin.new_hand()
                assert vf.value(state) == pytest.approx(_street_reference(vf, state, [ar_policy, own]), abs=1e-6)
            assert vf.value(state) != pytest.approx(vf.table_value(state), abs=1e-6)  # the lookahead changes it
            # the river's expectation averages the same value over every card (enumerated when ``flops`` covers
            # them, sampled otherwise), whoever acts first
            monkeypatch.setattr(vf, "flops", 64)
            monkeypatch.setattr(vf, "river_cards", 64)
            for seating in ([ar, agent], [agent, ar]):
                vf.hand_start(SimpleNamespace(seat_agents=seating))
                state = _hand_to([CALL] * 6, [0, 13, 1, 14, 20, 30, 40, 45])
                values = []
                for card, _ in state.chance_outcomes():
                    c = state.clone()
                    c.apply_action(card)
                    values.append(vf.value(c))
                assert vf.chance_expectation(state) == pytest.approx(np.mean(values), abs=1e-9)
        with pytest.raises(GameError, match="street_from"):
            BlueprintValueFunction(agent.blueprint, poker_view(game), agent.translate_raise, boards=1, street_from=0)
        # another blueprint (a separate strategy object) is followed by its own tree, without touching it
        other = BlueprintAgent(BlueprintStrategy.load(_PATH[0]), seed=5)
        assert vf.policy_of(other) is None  # not followed unless asked (blueprint_lookahead)
        vf.blueprint_lookahead = True
        policy = vf.policy_of(other)
        assert policy is not None
        state = _hand_to([CALL, CALL], [0, 13, 1, 14, 20, 30, 40])
        before = (other.off_tree_hands, dict(other._choices), other.rng.getstate())
        acts, probs = policy(state)
        hs = other.hand_strategy(state)
        row = hs.probs[pair_index(*state.hole[0])]
        for x, q in zip(acts, probs):
            assert x in hs.actions
        merged = {int(x): 0.0 for x in hs.actions}
        for x, q in zip(acts, probs):
            merged[int(x)] += q
        assert [merged[int(x)] for x in hs.actions] == pytest.approx(list(row), abs=1e-9)
        assert (other.off_tree_hands, dict(other._choices)) == before[:2] and other.rng.getstate() == before[2]
    finally:
        vf._policy = [None, None]


def test_a_turn_closing_call_is_valued_by_the_river_played_out(agent, vf, monkeypatch):
    """With both strategies known, the value at a turn-closing call is the mean of the river's values (every
    card, or an unbiased sample of ``river_cards``), so the river's chance term leaves no residual."""
    from types import SimpleNamespace

    game = load(GAME)
    ar = make_agent("rule-based", game=game, seed=1)
    try:
        for seating in ([ar, agent], [agent, ar]):
            monkeypatch.setattr(vf, "river_exact", True)  # off in the agents' default (its CPU)
            agent.new_hand()
            vf.hand_start(SimpleNamespace(seat_agents=seating))
            assert vf._street and vf._memo is agent.translations
            state = _hand_to([CALL] * 6, [0, 13, 1, 14, 20, 30, 40, 45])
            values = []
            for card, _ in state.chance_outcomes():
                c = state.clone()
                c.apply_action(card)
                values.append(vf.value(c))
            monkeypatch.setattr(vf, "river_cards", 64)
            vf._river = {}
            assert vf.value(state) == pytest.approx(np.mean(values), abs=1e-9)
            assert vf.chance_expectation(state) == vf.value(state)  # the same cached mean: zero residual
            monkeypatch.setattr(vf, "river_exact", False)
            assert vf.value(state) != pytest.approx(np.mean(values), abs=1e-6)  # the tables' transitions
            monkeypatch.setattr(vf, "river_exact", True)
            monkeypatch.setattr(vf, "river_cards", 6)  # a sample of six cards: unbiased for the mean
            draws = []
            for _ in range(60):
                vf._river = {}
                draws.append(vf.value(state))
                assert any(abs(draws[-1] - x) > 1e-9 for x in values)  # a mean of several cards, not one
            se = np.std(values) * np.sqrt((len(values) - 6) / ((len(values) - 1) * 6 * 60))
            assert abs(np.mean(draws) - np.mean(values)) < 5 * se + 1e-9
            monkeypatch.undo()
        with pytest.raises(GameError, match="river_cards"):
            BlueprintValueFunction(agent.blueprint, poker_view(game), agent.translate_raise, boards=1, river_cards=0)
    finally:
        vf.hand_start(SimpleNamespace(seat_agents=[object(), object()]))


def test_the_translation_term_is_centred_on_the_owners_draw(agent, vf):
    """A raise that maps to two abstract sizes: the expectation the observer subtracts is the mean, over the
    draw the owner then makes, of the value after the draw (exactly, with translate_raise's probabilities)."""
    from types import SimpleNamespace

    game = load(GAME)
    ar = make_agent("rule-based", game=game, seed=1)
    state = _hand_to([raise_action(250)], [0, 13, 1, 14])  # seat 1 raises to 250: between two abstract sizes
    assert state.current_player() == 0
    choices = dict(agent.translate_raise(agent.abstract_node(_hand_to([], [0, 13, 1, 14])), _hand_to([], [0, 13, 1, 14]),
                                         250))
    assert len(choices) == 2
    try:
        seen = {}
        expects = set()
        for seed in range(40):
            owner = BlueprintAgent(agent.blueprint, seed=seed)
            owner.translate_raise = agent.translate_raise.__func__.__get__(owner)
            owner.new_hand()
            vf.hand_start(SimpleNamespace(seat_agents=[owner, ar]))
            assert vf.translation_expectation(state, 1) is None  # only at the owner's seat
            expect = vf.translation_expectation(state, 0)
            expects.add(round(expect, 9))
            assert not vf.translation_drawn()
            owner.own_strategy(state)  # the owner walks the history: it draws the raise's size
            assert vf.translation_drawn()
            child = owner._choices[4][1]
            seen.setdefault(child, []).append(vf.value(state))
            assert vf.translation_expectation(state, 0) is None  # drawn: nothing pending
        assert len(expects) == 1 and set(seen) == set(choices)
        for child, vals in seen.items():  # the value after a draw depends only on the size drawn
            assert max(vals) - min(vals) < 1e-9
        mean = sum(q * seen[c][0] for c, q in choices.items())
        assert mean == pytest.approx(expects.pop(), abs=1e-9)
        assert abs(seen[3][0] - seen[4][0]) > 1e-6  # the draw matters, so the term is not trivially zero
    finally:
        vf.hand_start(SimpleNamespace(seat_agents=[object(), object()]))


def test_aivat_stays_unbiased_with_translation_and_river_terms(agent, monkeypatch):
    """A bettor whose raises fall between the blueprint's sizes: the translation terms fire, the AIVAT mean
    agrees with counting, and a biased translation expectation is caught."""
    from cfrkit.evaluation.aivat import AivatObserver

    game = load(GAME)
    other = make_agent("random", game=game, seed=1)  # raises of any size: many between two abstract sizes
    fired = []
    real = AivatObserver._translation
    monkeypatch.setattr(AivatObserver, "_translation", lambda self, s, e: (fired.append(1), real(self, s, e)))
    # the translation terms exist only when the value function follows the agent's picks (off in its default)
    monkeypatch.setattr(agent, "aivat_value_function",
                        functools.partial(type(agent).aivat_value_function, agent, follow_owner=True))


    res = head_to_head(game, [agent, other], 150, seed=5, duplicate=True, aivat=True)
    assert fired and aivat_counting_gap(res) < 4.0
    tx = BlueprintValueFunction.translation_expectation
    monkeypatch.setattr(BlueprintValueFunction, "translation_expectation",
                        lambda self, s, seat: None if tx(self, s, seat) is None else tx(self, s, seat) + 300.0)
    bad = head_to_head(game, [agent, other], 150, seed=5, duplicate=True, aivat=True)
    assert aivat_counting_gap(bad) > 4.0
