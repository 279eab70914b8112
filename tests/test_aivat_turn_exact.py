"""``turn_exact`` of the blueprint value function (issue 27, branch aivat-80e): a flop-closing call is valued by the
mean of ``value`` over every turn card (the turn's street lookahead on each), where it is asked and at the leaves of
the flop's lookahead.  Checked: the node's value and its chance expectation are that mean exactly; the flop lookahead
with these leaves equals a slow reference walk, and over a chance node's boards at once equals board by board; the
flop's split expectation (``turn_flops``) is unbiased for the mean of ``value`` over the flops, and dropping its
played-out part (a chance expectation of another function than ``value``) is caught; AIVAT's mean with the option
stays on the winnings."""
from types import SimpleNamespace

import numpy as np
import pytest
from aivat_checks import aivat_counting_gap
from holdem_play import play

from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.agents.blueprint_values import BlueprintValueFunction
from cfrkit.evaluation.headtohead import head_to_head
from cfrkit.games import load
from cfrkit.games.holdem.game import CALL, raise_action
from cfrkit.poker.registry import make_agent
from cfrkit.poker.view import poker_view
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy

GAME = "holdem(stacks=400;400)"
HANDS = [48, 20, 49, 1]  # seat 0 a pair of aces, seat 1 seven-deuce (the engine deals seat 0, 1, 0, 1)
FLOP = [21, 6, 30]


@pytest.fixture(scope="module")
def agent(tiny_blueprint):
    return BlueprintAgent(BlueprintStrategy.load(tiny_blueprint(GAME)), seed=0)


def _vf(agent, **kw):
    opts = dict(boards=4, flops=64, river_exact=False, follow_owner=False, owner_fallback=True, chance_cv=True,
                turn_exact=True)
    opts.update(kw)
    return BlueprintValueFunction(agent.blueprint, poker_view(load(GAME)), agent.translate_raise, **opts)


def _hand_to(actions, cards):
    state = load(GAME).new_initial_state()
    play(state, *actions, board=cards)
    return state


def _children(state):
    out = []
    for c, _ in state.chance_outcomes():
        child = state.clone()
        child.apply_action(int(c))
        out.append(child)
    return out


def test_a_flop_closing_call_is_the_mean_over_every_turn_card(agent):
    """At a flop-closing call against A^R (either seating) ``value`` and ``chance_expectation`` are both the mean of
    ``value`` over the 45 turn cards, so the turn card's AIVAT term has no residual; without ``turn_exact`` the value
    there is the transition-averaged tables, chips away from that mean."""
    ar = make_agent("rule-based", game=load(GAME), seed=1)
    state = _hand_to([raise_action(200), CALL, CALL, CALL], HANDS + FLOP)
    assert state.is_chance_node() and len(state.board) == 3
    gaps = []
    for seating in ([agent, ar], [ar, agent]):
        on, off = _vf(agent), _vf(agent, turn_exact=False)
        for vf in (on, off):
            vf.hand_start(SimpleNamespace(seat_agents=seating))
        mean = np.mean([on.value(c) for c in _children(state)])
        assert len(state.chance_outcomes()) == 45
        assert on.value(state) == pytest.approx(mean, abs=1e-9)
        assert on.chance_expectation(state) == pytest.approx(mean, abs=1e-9)
        assert off.chance_expectation(state) == pytest.approx(mean, abs=1e-9)  # the turn's values are unchanged
        gaps.append(abs(off.value(state) - mean))
    assert max(gaps) > 1.0


def _reference(vf, state, turn_value):
    """The flop's street lookahead by hand: a terminal's chips, at a flop-closing call the mean over every turn card
    of ``value`` computed board by board in Python (``_values_on_boards`` off), else the known policies' mixture."""
    if state.is_terminal():
        return float(state.returns()[0])
    if state.is_chance_node():
        assert len(state.board) == 3
        return float(np.mean([turn_value(c) for c in _children(state)]))
    p = state.current_player()
    pol = vf._policy[p] or vf._own[p]
    acts, probs = pol(state, None, None) if pol is vf._own[p] else pol(state)
    total = 0.0
    for a, q in zip(acts, probs):
        if q > 0:
            child = state.clone()
            child.apply_action(int(a))
            total += float(q) * _reference(vf, child, turn_value)
    return total


def test_the_flop_lookahead_with_the_turn_played_out_equals_a_slow_reference(agent, monkeypatch):
    """On random hands, flops and flop betting lines (both seatings against A^R): ``value`` (the compiled walk, its
    flop-closing leaves each a turn lookahead over every card at once) equals the reference walk of
    :func:`_reference`, and the flop lookahead over a chance node's flops at once equals it flop by flop."""
    game = load(GAME)
    ar = make_agent("rule-based", game=game, seed=1)
    rng = np.random.default_rng(5)
    checked = 0
    for trial in range(6):
        seating = [agent, ar] if trial % 2 == 0 else [ar, agent]
        vf, slow = _vf(agent), _vf(agent, compiled_lookahead=False)
        for v in (vf, slow):
            v.hand_start(SimpleNamespace(seat_agents=seating))
        cards = [int(c) for c in rng.permutation(52)[:7]]
        state = game.new_initial_state()
        play(state, CALL, CALL, board=cards[:7])  # limp, check: the flop dealt
        while not state.is_terminal() and not state.is_chance_node() and rng.random() < 0.5:
            acts = state.legal_actions()
            state.apply_action(int(acts[rng.integers(len(acts))]))  # a random flop line
        if state.is_terminal() or len(state.board) != 3:
            continue
        with monkeypatch.context() as m:
            m.setattr(slow, "_values_on_boards", lambda s, b, *rest: None)
            want = _reference(vf, state, slow.value)
        assert vf.value(state) == pytest.approx(want, abs=1e-9)
        checked += 1
        pre = game.new_initial_state()
        play(pre, CALL, CALL, board=cards[:4])
        flops = [cards[4:7], [int(c) for c in rng.choice([c for c in range(52) if c not in cards[:4]], 3, False)]]
        fast = vf._values_list(pre, [list(f) for f in flops])
        with monkeypatch.context() as m:
            m.setattr(vf, "_values_on_boards", lambda s, b, *rest: None)
            one = vf._values_list(pre, [list(f) for f in flops])
        np.testing.assert_allclose(fast, one, rtol=0, atol=1e-9)
    assert checked >= 3


def test_the_flops_split_expectation_is_unbiased_and_a_broken_one_is_caught(agent, monkeypatch):
    """At a preflop-closing call (6 sampled flops, the turn played out on the first 2): two value functions with the
    same seed draw the same flops, one with ``turn_exact``, one without, so their expectations differ by the mean
    over the first 2 flops of what the played-out turn changes in ``value``.  Over 150 draws that difference agrees
    with the same change's mean over 400 independent flops; an expectation that leaves the played-out part out
    (the old flop mean, of another function than ``value``) is more than 5 standard errors away."""
    game = load(GAME)
    ar = make_agent("rule-based", game=game, seed=1)
    on, off = _vf(agent, flops=6, turn_flops=2), _vf(agent, flops=6, turn_exact=False)
    for vf in (on, off):
        vf.hand_start(SimpleNamespace(seat_agents=[agent, ar]))
    state = _hand_to([CALL, CALL], HANDS)
    assert state.is_chance_node() and not state.board
    rng = np.random.default_rng(0)
    rest = [c for c in range(52) if c not in HANDS]
    change = []
    for _ in range(400):
        child = state.clone()
        for c in rng.choice(rest, 3, replace=False):
            child.apply_action(int(c))
        change.append(on.value(child) - off.value(child))
    change = np.array(change)

    def draws(n=150):
        return np.array([on.chance_expectation(state) - off.chance_expectation(state) for _ in range(n)])
    got = draws()
    se = np.hypot(got.std(ddof=1) / np.sqrt(got.size), change.std(ddof=1) / np.sqrt(change.size))
    assert abs(got.mean() - change.mean()) < 4 * se
    real = BlueprintValueFunction._flop_mean

    def cheap_only(self, s, boards):  # the broken variant: the flops valued with the tables at the leaves only
        self._turn_suspended = True
        try:
            return float(np.mean(self._values_list(s, boards)))
        finally:
            self._turn_suspended = False
    monkeypatch.setattr(BlueprintValueFunction, "_flop_mean", cheap_only)
    bad = draws()
    monkeypatch.setattr(BlueprintValueFunction, "_flop_mean", real)
    assert abs(bad.mean() - change.mean()) > 5 * np.hypot(bad.std(ddof=1) / np.sqrt(bad.size),
                                                          change.std(ddof=1) / np.sqrt(change.size))


def test_aivat_with_the_turn_played_out_agrees_with_counting(agent, monkeypatch):
    """AIVAT's mean with ``turn_exact`` stays on the winnings over 100 duplicate deals against A^R, the hands are
    those of the match without it, and the option changes the values."""
    game = load(GAME)
    other = make_agent("rule-based", game=game, seed=1)
    runs = []
    for turn in (False, True):
        bp = BlueprintAgent(agent.blueprint, seed=0)
        vf = _vf(bp, flops=6, turn_exact=turn, turn_flops=2)
        monkeypatch.setattr(bp, "aivat_value_function", lambda view, vf=vf: vf.fresh(view))
        runs.append(head_to_head(game, [bp, other], 100, seed=11, duplicate=True, aivat=True))
    off, on = runs
    np.testing.assert_array_equal(off.payoffs, on.payoffs)
    assert aivat_counting_gap(on) < 4.0
    assert np.abs(on.aivat_values - off.aivat_values).max() > 1.0
