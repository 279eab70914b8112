"""AIVAT with fitted value functions (issue 27): exact unbiasedness on Leduc, exact chance expectations in hold'em."""
from types import SimpleNamespace

import numpy as np
import pytest

from cfrkit.agents.leduc_agents import LeducPolicyAgent, make_leduc_agent
from cfrkit.evaluation.aivat import AivatTracker
from cfrkit.evaluation.aivat_values import TableValueFunction, fit_value_table
from cfrkit.evaluation.headtohead import exact_match_value
from cfrkit.games.registry import load
from cfrkit.poker.view import poker_view

from aivat_checks import exact_aivat_mean


@pytest.fixture(scope="module")
def leduc_agents():
    from cfrkit.solvers import CFRSolver

    solver = CFRSolver("leduc", algorithm="cfr+")
    solver.run(10)
    return [LeducPolicyAgent(solver.average_policy(), "leduc", name="cfr+10", seed=1),
            make_leduc_agent("random", "leduc", seed=2)]


class _FirstOutcome:
    """A wrong chance expectation (the value after the first outcome): AIVAT with it is biased."""

    def __init__(self, vf):
        self.vf = vf

    def value(self, state):
        return self.vf.value(state)

    def chance_expectation(self, state):
        s = state.clone()
        while s.is_chance_node():
            s.apply_action(int(s.chance_outcomes()[0][0]))
        return self.vf.value(s)


def test_fitted_table_is_exactly_unbiased_on_leduc(leduc_agents):
    view = poker_view("leduc")
    vf = fit_value_table("leduc", leduc_agents, 150, seed=5, scales=())  # all of the pilot fits, no held-out choice
    assert np.abs(vf.w).max() > 1e-3  # the pilot fitted something
    vf.hand_start(SimpleNamespace(seat_of_player=(0, 1)))
    exact_seat0 = exact_match_value(leduc_agents, "leduc")  # chips per hand, mean of both seats
    got = exact_aivat_mean(view, leduc_agents, vf)
    swapped = [leduc_agents[1], leduc_agents[0]]
    vf.hand_start(SimpleNamespace(seat_of_player=(1, 0)))
    got_swapped = exact_aivat_mean(view, swapped, vf)  # seat 0 is agents[1] here
    assert (got - got_swapped) / 2 == pytest.approx(exact_seat0, abs=1e-9)
    # a chance expectation off the true distribution biases the same walk: the test would see it
    vf.hand_start(SimpleNamespace(seat_of_player=(0, 1)))
    wrong = exact_aivat_mean(view, leduc_agents, _FirstOutcome(vf))
    assert abs(wrong - got) > 1e-3


def test_fitted_table_lowers_the_variance_on_leduc(leduc_agents):
    from cfrkit.evaluation.aivat import AivatObserver
    from cfrkit.poker import play_match

    vf = fit_value_table("leduc", leduc_agents, 300, seed=7)
    fitted = play_match("leduc", leduc_agents, 400, seed=0, observers=[AivatObserver(vf)])
    equity = play_match("leduc", leduc_agents, 400, seed=0, observers=[AivatObserver()])
    assert fitted.aivat.std < equity.aivat.std < fitted.plain.std


def _flop_done_state(turn: bool):
    """Heads-up no-limit: both call preflop, check the flop (and the turn): a chance node for the next card."""
    game = load("holdem")
    s = game.new_initial_state()
    for c in (0, 13, 26, 39):  # hole cards: seat 0 gets 2c 2d-ish ids 0/13, seat 1 26/39 (the engine's order)
        s.apply_action(c)
    s.apply_action(1)
    s.apply_action(1)
    for c in (5, 18, 44):
        s.apply_action(c)
    s.apply_action(1)
    s.apply_action(1)
    if turn:
        s.apply_action(7)
        s.apply_action(1)
        s.apply_action(1)
    assert s.is_chance_node()
    return s


@pytest.mark.parametrize("turn", [False, True])
def test_holdem_chance_expectation_enumerates_the_next_card_exactly(turn):
    view = poker_view("holdem")
    rng = np.random.default_rng(3)
    vf = TableValueFunction(view)
    vf.w = rng.normal(0, 0.3, vf.num_features)
    vf.hand_start(SimpleNamespace(seat_of_player=(1, 0)))
    state = _flop_done_state(turn)
    values = []
    for card, _ in state.chance_outcomes():
        child = state.clone()
        child.apply_action(int(card))
        assert not child.is_chance_node()
        values.append(vf.value(child))
    assert vf.chance_expectation(state) == pytest.approx(np.mean(values), rel=1e-12, abs=1e-9)


def test_holdem_flop_expectation_is_an_unbiased_sample_mean():
    view = poker_view("holdem")
    rng = np.random.default_rng(4)
    w = rng.normal(0, 0.3, TableValueFunction(view).num_features)
    game = load("holdem")
    s = game.new_initial_state()
    for c in (0, 13, 26, 39):
        s.apply_action(c)
    s.apply_action(1)
    s.apply_action(1)
    assert s.is_chance_node()
    seat = SimpleNamespace(seat_of_player=(0, 1))
    ref = TableValueFunction(view, w)
    ref.hand_start(seat)
    exact = []  # every flop: v(state after the flop)
    for a in range(52):
        for b in range(a + 1, 52):
            for c in range(b + 1, 52):
                if {a, b, c} & {0, 13, 26, 39}:
                    continue
                child = s.clone()
                for x in (a, b, c):
                    child.apply_action(x)
                exact.append(ref.value(child))
    exact_mean = float(np.mean(exact))
    estimates = []
    for seed in range(30):  # independent samplers: their mean converges to the exact expectation
        vf = TableValueFunction(view, w, samples=16, seed=seed)
        vf.hand_start(seat)
        estimates.append(vf.chance_expectation(s))
    se = np.std(estimates, ddof=1) / np.sqrt(len(estimates))
    assert abs(np.mean(estimates) - exact_mean) < 4 * se + 1e-9
    assert np.std(estimates) > 0


def test_preflop_class_equities_are_exact():
    from cfrkit.cards.hands import pair_index_of
    from cfrkit.evaluation.aivat_values import preflop_equity_vs_random

    eq = preflop_equity_vs_random()
    assert eq[pair_index_of("AhAs")] == pytest.approx(0.8520, abs=2e-4)  # published: AA 85.2% against a random hand
    assert eq[pair_index_of("7h2c")] == pytest.approx(0.3458, abs=2e-4)
    assert eq.mean() == pytest.approx(0.5, abs=1e-12)  # every deal counted from both sides


def test_deal_expectation_matches_all_pairs_of_hands(monkeypatch):
    from cfrkit.cards.hands import HOLE_PAIRS
    from cfrkit.cards.isomorphism import pair_preflop_classes
    from cfrkit.evaluation import aivat_values

    # a stand-in for the exact table (its own test above): class-constant equities in (0, 1)
    fake = np.random.default_rng(6).uniform(0.3, 0.8, 169)[pair_preflop_classes()]
    monkeypatch.setattr(aivat_values, "preflop_equity_vs_random", lambda: fake)
    monkeypatch.setattr(aivat_values, "_PREFLOP_CACHE", {})
    view = poker_view("holdem")
    vf = TableValueFunction(view)
    k = vf.k
    rng = np.random.default_rng(5)
    state = load("holdem").new_initial_state()
    vf.hand_start(SimpleNamespace(seat_of_player=(0, 1)))
    pot = float(sum(state.spent))
    base = vf._base(0, pot)
    vf.w[base:base + 4 * k + vf.nc ** 2] = rng.normal(0, 1, 4 * k + vf.nc ** 2)
    # brute force over all ordered pairs of disjoint hands: intercepts, decile pairs and, with the
    # (stand-in) class equities, the slopes' mean (eq - 1/2) given each hand's class
    pairs = np.asarray(HOLE_PAIRS)
    disjoint = ~((pairs[:, None, 0] == pairs[None, :, 0]) | (pairs[:, None, 0] == pairs[None, :, 1])
                 | (pairs[:, None, 1] == pairs[None, :, 0]) | (pairs[:, None, 1] == pairs[None, :, 1]))
    c, d = vf.hand_class, vf._preflop()[0]
    w = vf.w[base:]
    term = (w[c][:, None] + w[k + c][None, :] + w[4 * k + d[:, None] * vf.nc + d[None, :]])
    # E[(eq - 1/2) | seat 0's class] = its class equity - 1/2 and seat 1's the opposite
    slope = w[2 * k + c] * (fake - 0.5)
    brute = float(term[disjoint].mean()) + float(slope.mean()) - float((w[3 * k + c] * (fake - 0.5)).mean())
    assert vf.chance_expectation(state) == pytest.approx(pot * (0.5 + brute) - state.spent[0], rel=1e-10)


def test_children_of_checked_actions_are_the_checked_applys_states():
    """``AivatTracker.decision(..., legal=True)`` (the row of a CheckedAgent's own_strategy: its actions of positive
    probability are legal) reaches each child by ``apply_trusted``: the same child states (histories, pots, the one
    to act) and the same correction bit for bit as the checked apply; an action of probability 0 given a weight is
    still applied with the check (an illegal one raises)."""
    from cfrkit.evaluation.aivat import EquityValueFunction
    from cfrkit.games.base import IllegalActionError
    from cfrkit.games.holdem.game import CALL, FOLD, raise_action

    game = load("holdem(stacks=400;400)")
    view = poker_view(game)

    class Recorder(EquityValueFunction):
        def __init__(self, view):
            super().__init__(view)
            self.seen = []

        def value(self, state):
            self.seen.append((tuple(state.history()), state.current_player(), tuple(state.spent)))
            return super().value(state)

    rng = np.random.default_rng(4)
    checked = refused = 0
    for _ in range(40):
        state = game.new_initial_state()
        for c in rng.permutation(52)[:4]:
            state.apply_action(int(c))
        for _ in range(int(rng.integers(0, 3))):  # a few calls or raises first
            rr = state.raise_range()
            state.apply_action(CALL if rr is None or rng.random() < 0.5 else raise_action(rr[0]))
            if state.is_chance_node() or state.is_terminal():
                break
        if state.is_chance_node() or state.is_terminal():
            continue
        rr = state.raise_range()
        actions = [a for a in ([FOLD] if state.is_legal(FOLD) else []) + [CALL] + (
            [] if rr is None else [raise_action(rr[0]), raise_action(rr[1])])]
        probs = rng.dirichlet(np.ones(len(actions)))
        out = []
        for legal in (False, True):
            vf = Recorder(view)
            tracker = AivatTracker(vf)
            tracker.decision(state, np.array(actions), probs, actions[-1], legal=legal)
            out.append((tracker.correction, vf.seen))
        assert out[0] == out[1] and len(out[0][1]) == len(actions)
        checked += 1
        if not state.is_legal(FOLD):  # a weight on an illegal action of probability 0: checked, so it raises
            with pytest.raises(IllegalActionError):
                AivatTracker(Recorder(view)).decision(state, np.array([FOLD, CALL]), np.array([0.0, 1.0]), CALL,
                                                      taken_weights=np.array([0.5, 0.5]), legal=True)
            refused += 1
    assert checked >= 20 and refused >= 3
