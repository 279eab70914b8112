"""The equity control variate of the blueprint value function's sampled chance expectations (issue 27, branch
aivat-80b): the showdown equity is a martingale over the cards to come (exact), a sampled expectation with the
control variate is unbiased for the mean over every card and spreads less than without it, a wrongly centred
control variate is caught, and AIVAT's mean with it agrees with the winnings."""
import functools
from types import SimpleNamespace

import numpy as np
import pytest
from aivat_checks import aivat_counting_gap
from holdem_play import play

from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.agents.blueprint_values import BlueprintValueFunction
from cfrkit.cards.hands import pair_index
from cfrkit.cards.preflop import preflop_equity_table
from cfrkit.evaluation.headtohead import head_to_head
from cfrkit.games import load
from cfrkit.games.holdem.game import CALL, raise_action
from cfrkit.poker.registry import make_agent
from cfrkit.poker.view import poker_view
from cfrkit.solvers.blueprint.betting_tree import SHOWDOWN
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy

GAME = "holdem(stacks=400;400)"
# seat 0: a pair of aces (cards 48, 49), seat 1: seven-deuce (20, 1): far from even, so a centring error shows
HANDS = [48, 20, 49, 1]
DEEP = "holdem(stacks=1500;1500)"  # the engine deals seat 0, seat 1, seat 0, seat 1


@pytest.fixture(scope="module")
def agent(tiny_blueprint):
    return BlueprintAgent(BlueprintStrategy.load(tiny_blueprint(GAME)), seed=0)


@pytest.fixture(scope="module")
def vf(agent):
    return BlueprintValueFunction(agent.blueprint, poker_view(load(GAME)), agent.translate_raise, boards=4, flops=6,
                                  river_exact=False, follow_owner=False, chance_cv=True)


def _hand_to(actions, cards):
    state = load(GAME).new_initial_state()
    play(state, *actions, board=cards)
    return state


def test_the_equity_is_a_martingale_over_the_cards_to_come(vf):
    """What makes the control variate's mean exactly zero: today's equity is the mean of the equity after the next
    card(s), over every turn and river card, and over every flop (all 17,296) against the exact preflop table."""
    hole = ([48, 49], [20, 1])
    for board in ([21, 6, 30], [21, 6, 30, 41]):
        rest = [c for c in range(52) if c not in board + HANDS]
        nxt = [vf._equity(hole, board + [c]) for c in rest]
        assert np.mean(nxt) == pytest.approx(vf._equity(hole, board), abs=1e-12)
        assert np.std(nxt) > 0.01  # the cards do move it
    rest = [c for c in range(52) if c not in HANDS]
    flops = [vf._equity(hole, [a, b, c]) for i, a in enumerate(rest) for j, b in enumerate(rest[i + 1:], i + 1)
             for c in rest[j + 1:]]
    assert len(flops) == 17296  # C(48, 3)
    pre = preflop_equity_table(progress=False)[pair_index(48, 49), pair_index(20, 1)]
    assert np.mean(flops) == pytest.approx(pre, abs=1e-6)


def _draws(vf, state, n):
    return np.array([vf.chance_expectation(state) for _ in range(n)])


def test_a_sampled_expectation_with_the_control_variate_is_unbiased_and_narrower(agent, vf, monkeypatch):
    """Against A^R (the street lookahead over the boards), at a turn-closing call (6 of 44 river cards sampled) and
    at a preflop-closing call (6 sampled flops): the mean of many sampled expectations agrees with the mean of
    ``value`` over every river card (over 300 independent flops), the control variate lowers their spread, and
    centring it on the other seat's equity (``1 - eq``: a mean off by ``c (1 - 2 eq)``) is caught."""
    ar = make_agent("rule-based", game=load(GAME), seed=1)
    vf.hand_start(SimpleNamespace(seat_agents=[agent, ar]))
    rng = np.random.default_rng(0)
    try:
        assert vf._street
        for actions, cards in (([raise_action(200), CALL] + [CALL] * 4, HANDS + [21, 6, 30, 41]),
                               ([CALL, CALL], HANDS)):
            state = _hand_to(actions, cards)
            assert state.is_chance_node()
            if state.board:  # every river card
                runs = [[c] for c, _ in state.chance_outcomes()]
                assert len(runs) == 44
            else:  # flops: an independent sample of the mean
                rest = [c for c in range(52) if c not in HANDS]
                runs = [list(rng.choice(rest, 3, replace=False)) for _ in range(300)]
            values = []
            for run in runs:
                child = state.clone()
                for c in run:
                    child.apply_action(int(c))
                values.append(vf.value(child))
            exact_se = 0.0 if state.board else np.std(values) / np.sqrt(len(values))
            with_cv = _draws(vf, state, 100)
            se = np.hypot(with_cv.std(ddof=1) / np.sqrt(with_cv.size), exact_se)
            assert abs(with_cv.mean() - np.mean(values)) < 5 * se
            monkeypatch.setattr(vf, "chance_cv", False)
            plain = _draws(vf, state, 100)
            monkeypatch.setattr(vf, "chance_cv", True)
            assert with_cv.std() < 0.6 * plain.std()
            real = BlueprintValueFunction._equity_cv

            def wrong(self, s, node, r, boards):
                eq = self._equity(s.hole, [int(c) for c in s.board])
                return real(self, s, node, r, boards) + self._cv_pot(s, node, r) * (1.0 - 2.0 * eq)
            monkeypatch.setattr(BlueprintValueFunction, "_equity_cv", wrong)
            bad = _draws(vf, state, 100)
            monkeypatch.undo()
            assert abs(bad.mean() - np.mean(values)) > 5 * np.hypot(bad.std(ddof=1) / np.sqrt(bad.size), exact_se)
    finally:
        vf.hand_start(SimpleNamespace(seat_agents=[object(), object()]))


@pytest.fixture(scope="module")
def deep(tiny_blueprint):
    """A blueprint 15 big blinds deep (A^R plays its postflop rules above 12): most hands see sampled chance nodes."""
    return BlueprintAgent(BlueprintStrategy.load(tiny_blueprint(DEEP)), seed=0)


def test_aivat_with_the_control_variate_agrees_with_counting(deep, monkeypatch):
    """AIVAT's mean with the control variate on stays on the winnings over 100 duplicate deals against A^R, and the
    term does change the values.  (A biased control variate is caught at the chance node itself, above: it fires
    only at the sampled chance nodes, ~20 in these 200 hands, too few for a match-level test to see a bias.)"""
    game = load(DEEP)
    other = make_agent("rule-based", game=game, seed=1)


    calls = []
    real = BlueprintValueFunction._equity_cv
    monkeypatch.setattr(BlueprintValueFunction, "_equity_cv",
                        lambda self, *a: (calls.append(1), real(self, *a))[1])
    runs = []
    for cv in (False, True):
        bp = BlueprintAgent(deep.blueprint, seed=0)  # the same draws in both matches
        monkeypatch.setattr(bp, "aivat_value_function",
                            functools.partial(type(bp).aivat_value_function, bp, flops=6, chance_cv=cv))
        runs.append(head_to_head(game, [bp, other], 100, seed=11, duplicate=True, aivat=True))
    off, on = runs
    np.testing.assert_array_equal(off.payoffs, on.payoffs)  # the value function never touches the hands
    assert len(calls) >= 15 and aivat_counting_gap(on) < 4.0 and on.aivat.std < on.plain.std
    assert np.abs(on.aivat_values - off.aivat_values).max() > 1.0


def test_the_river_played_out_over_all_cards_at_once_equals_card_by_card(agent, monkeypatch):
    """``river_exact``'s mean at a turn-closing call plays the river's lookahead over every card at once (the
    lookahead over the boards): the same number as the card-by-card loop, in either seating against A^R."""
    ar = make_agent("rule-based", game=load(GAME), seed=1)
    vf = BlueprintValueFunction(agent.blueprint, poker_view(load(GAME)), agent.translate_raise, boards=4, flops=6,
                                river_exact=True, river_cards=64, follow_owner=False)
    try:
        for seating in ([agent, ar], [ar, agent]):
            vf.hand_start(SimpleNamespace(seat_agents=seating))
            state = _hand_to([raise_action(200), CALL] + [CALL] * 4, HANDS + [21, 6, 30, 41])
            assert vf._values_on_boards(state, [[21, 6, 30, 41, c] for c in (2, 3)]) is not None
            fast = vf._river_mean(state)
            vf._river = {}
            with monkeypatch.context() as m:
                m.setattr(vf, "_values_on_boards", lambda s, b, *rest: None)
                slow = vf._river_mean(state)
            assert fast == slow
            # the flop's lookahead with the river played out inside stays board by board (its samples)
            flop = _hand_to([raise_action(200), CALL, CALL, CALL], HANDS + [21, 6, 30])
            assert vf._values_on_boards(flop, [[21, 6, 30, 2], [21, 6, 30, 3]]) is None
    finally:
        vf.hand_start(SimpleNamespace(seat_agents=[object(), object()]))


def test_owner_fallback_plays_the_owners_off_tree_strategy_in_the_lookahead(agent):
    """A raise to 390 of 400 walks to the abstract all-in; once called, the real hand goes on to the flop with 10
    chips behind while the owner's tree is at a showdown.  With ``owner_fallback`` the lookahead plays what the
    owner agent plays there (``own_strategy``: check / call), without it the lookahead stops (None)."""
    ar = make_agent("rule-based", game=load(GAME), seed=1)
    state = _hand_to([raise_action(390), CALL], HANDS + [21, 6, 30])
    assert state.current_player() == 0 and not state.is_chance_node() and len(state.board) == 3
    vfs = {}
    for fallback in (False, True):
        vf = BlueprintValueFunction(agent.blueprint, poker_view(load(GAME)), agent.translate_raise, boards=4, flops=6,
                                    river_exact=False, follow_owner=False, owner_fallback=fallback)
        vf.hand_start(SimpleNamespace(seat_agents=[agent, ar]))
        vfs[fallback] = vf
    node = vfs[True].node_of(state)
    assert vfs[True].tree.kind[node] == SHOWDOWN  # the walk ends at the abstract all-in's showdown
    assert vfs[False]._own[0](state, None, None) is None
    acts, probs = vfs[True]._own[0](state, None, None)
    want = agent.own_strategy(state)
    np.testing.assert_array_equal(acts, want[0])
    np.testing.assert_array_equal(probs, want[1])
    assert vfs[False]._street_value(state) is None and vfs[True]._street_value(state) is not None


def test_an_off_tree_chance_node_averages_the_lookahead_over_the_cards(deep):
    """A preflop re-raise over the tree's one raise per round leaves the tree with 900 chips behind.  At the turn's
    and the river's chance nodes of that hand the street lookahead still plays both strategies after the card (A^R's
    rules, the owner's off-tree play), so the chance expectation must be the mean of ``value`` over every card
    (exact here: ``flops`` covers them); the check-down equity value it returned before is off by chips, a bias."""
    game = load(DEEP)
    ar = make_agent("rule-based", game=game, seed=1)
    vf = BlueprintValueFunction(deep.blueprint, poker_view(game), deep.translate_raise, boards=4, flops=64,
                                river_exact=False, follow_owner=False, owner_fallback=True)
    vf.hand_start(SimpleNamespace(seat_agents=[deep, ar]))
    pre = [raise_action(200), raise_action(600), CALL]
    gaps = []
    for actions, board in ((pre + [CALL, CALL], [21, 6, 30]), (pre + [CALL] * 4, [21, 6, 30, 41])):
        state = load(DEEP).new_initial_state()
        play(state, *actions, board=HANDS + board)
        assert state.is_chance_node() and vf.node_of(state) is None and not vf._runs_out(state)
        values = []
        for c, _ in state.chance_outcomes():
            child = state.clone()
            child.apply_action(int(c))
            values.append(vf.value(child))
        assert len(values) == 52 - 4 - len(board)
        assert vf.chance_expectation(state) == pytest.approx(np.mean(values), rel=1e-12, abs=1e-9)
        gaps.append(abs(np.mean(values) - vf._equity_value(state)))
    assert max(gaps) > 1.0  # what the old shortcut got wrong: the lookahead's value is not the check-down's


def test_the_deals_expectation_follows_the_known_first_actor(agent):
    """With A^R first to act preflop, ``value`` after the hole cards is one step of A^R's strategy over the tables'
    children, so the deal's expectation must average that, not the tables' root (the blueprint in A^R's seat): a
    mean of ``value`` over 3,000 random deals agrees with the new expectation and is far from the tables' (the bias
    the tables' root gave); with the owner first both are the tables' root."""
    game = load(GAME)
    ar = make_agent("rule-based", game=game, seed=1)
    vf = BlueprintValueFunction(agent.blueprint, poker_view(game), agent.translate_raise, boards=4, flops=6,
                                river_exact=False, follow_owner=False)
    first = vf._first_seat()
    seating = [agent, ar] if first == 1 else [ar, agent]
    vf.hand_start(SimpleNamespace(seat_agents=seating))
    rng = np.random.default_rng(3)
    values = []
    for _ in range(3000):
        state = game.new_initial_state()
        for c in rng.permutation(52)[:4]:
            state.apply_action(int(c))
        values.append(vf.value(state))
    se = np.std(values) / np.sqrt(len(values))
    assert abs(np.mean(values) - vf._deal()) < 4 * se
    assert abs(np.mean(values) - vf._table_deal()) > 8 * se
    vf.hand_start(SimpleNamespace(seat_agents=seating[::-1]))  # the owner first: the tables model it
    assert vf._deal() == vf._table_deal()


def test_owner_draws_values_a_raise_by_the_mean_over_the_owners_draws(agent):
    """A bet of 0.75 pot by the other seat maps to the 0.5 and 1 pot bets: the owner draws one when it acts.  With
    ``owner_draws`` the value after the bet is the mean over the two sizes, so the draw's expectation
    (``translation_expectation``) equals it and its term is zero, and the street lookahead from the state before
    the bet (the other seat's known pure strategy bets) gives the same number; without it the value is the most
    likely size's, off the draw's expectation."""
    game = load(GAME)
    ar = make_agent("rule-based", game=game, seed=1)
    state = _hand_to([CALL, CALL, CALL], HANDS + [21, 6, 30])  # preflop limp and check, the flop checked to seat 1
    assert state.current_player() == 1 and len(state.board) == 3
    bet = raise_action(state.max_spent() + int(0.75 * state.pot()))
    after = state.clone()
    after.apply_action(bet)
    got = {}
    for draws in (False, True):
        vf = BlueprintValueFunction(agent.blueprint, poker_view(game), agent.translate_raise, boards=4, flops=6,
                                    river_exact=False, follow_owner=True, owner_fallback=True, owner_draws=draws)
        agent.new_hand()
        vf.hand_start(SimpleNamespace(seat_agents=[agent, ar]))
        vf._policy[1] = lambda s, b=bet, real=vf._policy[1]: (np.array([b]), np.ones(1)) if s.current_player() == 1 \
            and len(s.history()) == len(state.history()) else real(s)
        assert len(vf._draws_at(state, None, bet)) == int(draws)  # one raise whose size the owner draws
        got[draws] = (vf.value(state), vf.value(after), vf.translation_expectation(after, 0))
    before, value, expect = got[True]
    assert value == pytest.approx(expect, abs=1e-9) and before == pytest.approx(value, abs=1e-9)
    assert abs(got[False][1] - got[False][2]) > 1e-3  # the most likely size alone is not the draw's mean


def test_owner_draws_the_known_seats_preflop_step_and_the_deal_average_the_draws(deep):
    """15 big blinds deep A^R opens preflop to a size between the tree's two raises, which the owner draws when it
    acts.  With ``owner_draws`` the value after the open is the mean over the two sizes, so the one step of A^R's
    (pure) strategy before it must take that mean too (v before the open equals v after it), and the deal's
    expectation must average it: over random deals the mean of ``value`` with the draws minus without agrees with
    the difference of the two deal expectations and is far from zero, what a deal expectation that ignored the
    draws would give (a bias of about a chip per hand in this game)."""
    game = load(DEEP)
    ar = make_agent("rule-based", game=game, seed=1)
    vfs = []
    for draws in (False, True):
        vf = BlueprintValueFunction(deep.blueprint, poker_view(game), deep.translate_raise, boards=4, flops=6,
                                    river_exact=False, follow_owner=True, owner_fallback=True, owner_draws=draws)
        first = vf._first_seat()
        deep.new_hand()
        vf.hand_start(SimpleNamespace(seat_agents=[deep, ar] if first == 1 else [ar, deep]))
        vfs.append(vf)
    plain, drawn = vfs
    rng = np.random.default_rng(0)
    diffs, drawn_opens = [], 0
    for i in range(3000):
        state = game.new_initial_state()
        for c in rng.permutation(52)[:4]:
            state.apply_action(int(c))
        diffs.append(drawn.value(state) - plain.value(state))
        if i < 300:
            a = ar.act(state)
            after = state.clone()
            after.apply_action(a)
            drawn_opens += bool(drawn._draws_at(state, None, a))
            assert drawn.value(state) == pytest.approx(drawn.value(after), abs=1e-9)  # A^R's pure step
    assert drawn_opens > 50  # the opens the owner draws a size for
    diffs = np.array(diffs)
    se = diffs.std(ddof=1) / np.sqrt(diffs.size)
    exact = drawn._deal() - plain._deal()
    assert abs(diffs.mean() - exact) < 4 * se and abs(diffs.mean()) > 4 * se
