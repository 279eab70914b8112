"""AIVAT with a re-solving agent's own values (issue 27, A^D): exact unbiasedness on Leduc, the correction's strategy
is the one the agent plays, lower variance than plain counting, and the hold'em value function's chance terms."""
from types import SimpleNamespace

import numpy as np
import pytest
from aivat_checks import exact_aivat_mean

from cfrkit.agents.leduc_agents import LeducDeepStackAgent, LeducPolicyAgent
from cfrkit.evaluation.aivat import AivatObserver, EquityValueFunction
from cfrkit.evaluation.headtohead import exact_match_value
from cfrkit.games.holdem import CALL
from cfrkit.poker import make_agent, play_match
from cfrkit.poker.agent import CheckedAgent
from cfrkit.poker.view import poker_view


@pytest.fixture(scope="module")
def leduc_pair():
    from cfrkit.solvers import CFRSolver

    solver = CFRSolver("leduc", algorithm="cfr+")
    solver.run(10)
    ds = LeducDeepStackAgent("leduc", seed=3, iterations=20)
    other = LeducPolicyAgent(solver.average_policy(), "leduc", name="cfr+10", seed=1)
    return ds, other


# deal 0 and 3, the agent (seat 0) checks, the opponent raises: the agent acts next after a betting action
_AFTER_RAISE = (0, 3, 1, 2)


def _started_state(view, actions, seating, *functions):
    """The Leduc state after ``actions`` (the deal's chance outcomes, then betting actions), each value function in
    ``functions`` started on a hand of the agents ``seating`` (seat 0 first)."""
    s = view.game.new_initial_state()
    for a in actions:
        s.apply_action(a)
    for f in functions:
        f.hand_start(SimpleNamespace(seat_agents=list(seating)))
    return s


def _both_seatings(view, ds, other, vf, term_strategy=None):
    vf.hand_start(SimpleNamespace(seat_agents=[ds, other]))
    a = exact_aivat_mean(view, [ds, other], vf, term_strategy)
    vf.hand_start(SimpleNamespace(seat_agents=[other, ds]))
    b = exact_aivat_mean(view, [other, ds], vf, term_strategy)
    return (a - b) / 2   # agents[0]'s chips per hand, both seats


def test_resolve_values_are_exactly_unbiased_on_leduc(leduc_pair):
    ds, other = leduc_pair
    view = poker_view("leduc")
    vf = ds.aivat_value_function(view)
    exact = exact_match_value([ds, other], "leduc")
    assert _both_seatings(view, ds, other, vf) == pytest.approx(exact, abs=1e-9)
    assert vf.stats["tree"] > 0 and vf.stats["left"] == 0   # every state valued inside a solve's tree
    # the value is not the check-down value (else this test would only repeat the equity value's)
    s = _started_state(view, (0, 3), (ds, other), vf)
    assert abs(vf.value(s) - EquityValueFunction(view).value(s)) > 1e-3


def test_resolve_next_is_exactly_unbiased_on_leduc(leduc_pair):
    """With the agent's own re-solve at each state where it acts next after a betting action (``resolve_next``)."""
    from cfrkit.agents.resolve_values import ResolveValueFunction

    ds, other = leduc_pair
    view = poker_view("leduc")
    vf = ResolveValueFunction(view, ds, resolve_next=True)
    plain = ds.aivat_value_function(view)
    assert _both_seatings(view, ds, other, vf) == pytest.approx(exact_match_value([ds, other], "leduc"), abs=1e-9)
    # it is another function: at a state reached by the opponent's raise where the agent acts next
    s = _started_state(view, _AFTER_RAISE, (ds, other), vf, plain)
    assert abs(vf.value(s) - plain.value(s)) > 1e-6


def test_resolve_next_with_cheap_resolves_is_exactly_unbiased_on_leduc(leduc_pair):
    """``next_iterations``: the states where the agent acts next valued by cheaper re-solves (4 iterations instead
    of 20), the same function for every child of the opponent's decision: still exact; another function than the
    full ``resolve_next``; and the agent's own re-solve there (what ``act`` draws from) is untouched."""
    from cfrkit.agents.resolve_values import ResolveValueFunction

    ds, other = leduc_pair
    view = poker_view("leduc")
    cheap = ResolveValueFunction(view, ds, resolve_next=True, next_iterations=4)
    full = ResolveValueFunction(view, ds, resolve_next=True)
    assert _both_seatings(view, ds, other, cheap) == pytest.approx(exact_match_value([ds, other], "leduc"), abs=1e-9)
    s = _started_state(view, _AFTER_RAISE, (ds, other), cheap, full)
    assert abs(cheap.value(s) - full.value(s)) > 1e-6
    own = ds.resolve_at(s, 0)[0]
    assert own is not ds.resolve_at(s, 0, iterations=4)[0]
    assert own is ds.resolve_at(s, 0)[0] and own is ds.resolve_at(s, 0, iterations=20)[0]
    with pytest.raises(ValueError, match="next_iterations"):
        ResolveValueFunction(view, ds, next_iterations=4)


@pytest.mark.parametrize("hand_value,resolve_next,next_outside", [("own_next", True, "resolve"), ("own", True, "resolve"),
                                                                   ("own", False, "resolve"),
                                                                   ("own_next", True, "checkdown")])
def test_own_hand_values_are_exactly_unbiased_on_leduc(leduc_pair, hand_value, resolve_next, next_outside):
    """``hand_value="own_next"`` / ``"own"``: the agent's own hand against the opponent's range (at the states
    ``resolve_next`` re-solves, or at every node of its solves, the deal's expectation included): still exact."""
    from cfrkit.agents.resolve_values import ResolveValueFunction

    ds, other = leduc_pair
    view = poker_view("leduc")
    vf = ResolveValueFunction(view, ds, resolve_next=resolve_next, hand_value=hand_value, next_outside=next_outside)
    assert _both_seatings(view, ds, other, vf) == pytest.approx(exact_match_value([ds, other], "leduc"), abs=1e-9)
    assert vf.stats["own"] > 0 and vf.stats["left"] == 0


def test_own_hand_value_is_the_pair_value_averaged_over_the_opponent_range(leduc_pair):
    """At a state where the agent acts next after the opponent's raise, ``own_next`` is the pair value of its hand
    with each opponent hand, averaged with the opponent's reach in the agent's re-solve there (an independent
    computation from the pair values of the other deals); for seat 1 the same, negated (seat 0's chips); and it
    is another value than the pair value of the actual hands."""
    from cfrkit.agents.resolve_values import ResolveValueFunction

    ds, other = leduc_pair
    view = poker_view("leduc")
    own = ResolveValueFunction(view, ds, resolve_next=True, hand_value="own_next")
    pair = ResolveValueFunction(view, ds, resolve_next=True)
    for seat, line in ((0, (1, 2)), (1, (2,))):   # seat 0: it checks, the opponent raises; seat 1: the opponent raises
        seating = [ds, other] if seat == 0 else [other, ds]
        for f in (own, pair):
            f.hand_start(SimpleNamespace(seat_agents=seating))
        mine = 4
        num = den = 0.0
        pair_values = []
        for theirs in range(6):
            if theirs == mine:
                continue
            s = view.game.new_initial_state()
            for a in ((mine, theirs) if seat == 0 else (theirs, mine)) + line:
                s.apply_action(a)
            assert s.current_player() == seat
            result, rel, _ = ds.resolve_at(s, seat)
            node, _ = result.tree.deepest_node(tuple(rel))
            w = float(np.asarray(result.reach[node.index]).reshape(-1, 2, 6)[0, 1 - seat, theirs])
            v = pair.value(s)
            pair_values.append(v)
            num += w * v
            den += w
        assert den > 0
        assert own.value(s) == pytest.approx(num / den, abs=1e-9)
        assert max(abs(v - own.value(s)) for v in pair_values) > 1e-3
    with pytest.raises(ValueError, match="resolve_next"):
        ResolveValueFunction(view, ds, hand_value="own_next")
    with pytest.raises(ValueError, match="hand_value"):
        ResolveValueFunction(view, ds, hand_value="mine")


def test_a_correction_with_another_strategy_than_the_played_one_is_biased(leduc_pair):
    """The same exact walk with the correction at the DeepStack agent's decisions taken against another re-solve's
    strategy (fewer iterations) than the one its actions are drawn from: the mean moves off the exact value."""
    ds, other = leduc_pair
    view = poker_view("leduc")
    vf = ds.aivat_value_function(view)
    exact = exact_match_value([ds, other], "leduc")
    twin = LeducDeepStackAgent("leduc", seed=3, iterations=4)

    def wrong(seat, state):
        hs = (twin if seat_of[seat] is ds else other).hand_strategy(state)
        return hs.probs[view.hand_of(state, seat)]

    seat_of = [ds, other]
    vf.hand_start(SimpleNamespace(seat_agents=[ds, other]))
    a = exact_aivat_mean(view, [ds, other], vf, wrong)
    seat_of = [other, ds]
    vf.hand_start(SimpleNamespace(seat_agents=[other, ds]))
    b = exact_aivat_mean(view, [other, ds], vf, wrong)
    assert abs((a - b) / 2 - exact) > 1e-3


class _Recorder:
    """Stands for an agent's generator: records the distribution ``choice`` is asked to draw from."""

    def __init__(self):
        self.p = None

    def choice(self, n, p):
        self.p = np.asarray(p, dtype=np.float64)
        return int(np.argmax(self.p))


def test_the_observer_corrects_with_the_distribution_act_draws_from_leduc(leduc_pair):
    """At every DeepStack decision of a few hands, the row AIVAT's observer takes (``own_strategy``) is the
    distribution the agent's ``act`` samples its action from, and the value function's children are read from
    the solve made there."""
    ds, _ = leduc_pair
    view = poker_view("leduc")
    checked = CheckedAgent(ds, view)
    vf = ds.aivat_value_function(view)
    vf.hand_start(SimpleNamespace(seat_agents=[ds, ds]))
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(6):
        s = view.game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                acts, probs = zip(*s.chance_outcomes())
                s.apply_action(int(rng.choice(acts, p=probs)))
                continue
            seat = s.current_player()
            _actions, row = checked.own_strategy(s)
            rec = _Recorder()
            inner = ds.seat(seat)
            inner.rng, keep = rec, inner.rng
            try:
                a = ds.act(s)
            finally:
                inner.rng = keep
            assert rec.p.shape == row.shape and np.allclose(rec.p / rec.p.sum(), row, atol=1e-12)
            got = ds.resolve_covering(s.child(a), seat)
            assert got[1] == (a,)           # the children are the root's children of the solve made here
            seen += 1
            s.apply_action(a)
    assert seen >= 6


class _Keep(AivatObserver):
    """An AIVAT observer that keeps its values (two in one match)."""

    def match_end(self, result) -> None:
        pass


def test_resolve_values_lower_the_variance_on_leduc(leduc_pair):
    ds, other = leduc_pair
    view = poker_view("leduc")
    own, eq = _Keep(ds.aivat_value_function(view)), _Keep(EquityValueFunction(view))
    res = play_match("leduc", [ds, other], 200, seed=0, observers=[own, eq])
    plain = np.std(res.payoffs[:, 0])
    assert np.std(own.values) < 0.7 * plain      # measured: about 0.4 (benchmarks/RESULTS.md)
    assert np.std(own.values) < np.std(eq.values)


@pytest.fixture(scope="module")
def holdem_ds():
    return make_agent("deepstack-holdem:iterations=3,preflop_boards=50", game="holdem", seed=1)


def _dealt(view, seed=0):
    s = view.game.new_initial_state()
    rng = np.random.default_rng(seed)
    while s.is_chance_node():
        acts, probs = zip(*s.chance_outcomes())
        s.apply_action(int(rng.choice(acts, p=probs)))
    return s


def test_holdem_deal_expectation_is_the_mean_over_hands(holdem_ds):
    """The deal's expectation (one pass over every pair of hands) agrees with the values of sampled deals."""
    view = poker_view(holdem_ds.game)
    vf = holdem_ds.aivat_value_function(view)
    vf.hand_start(SimpleNamespace(seat_agents=[holdem_ds, object()]))
    expect = vf.chance_expectation(view.game.new_initial_state())
    vals = np.array([vf.value(_dealt(view, k)) for k in range(200)])
    assert abs(vals.mean() - expect) < 4 * vals.std(ddof=1) / np.sqrt(vals.size)
    assert vals.std() > 1.0      # pair values, not a constant


def test_holdem_own_hand_deal_expectation_is_the_mean_over_hands(holdem_ds):
    """``hand_value="own"``: the deal's expectation (the mean over A^D's hands) agrees with sampled deals."""
    from cfrkit.agents.resolve_values import ResolveValueFunction

    view = poker_view(holdem_ds.game)
    vf = ResolveValueFunction(view, holdem_ds, hand_value="own")
    vf.hand_start(SimpleNamespace(seat_agents=[holdem_ds, object()]))
    expect = vf.chance_expectation(view.game.new_initial_state())
    deals = [_dealt(view, k) for k in range(200)]
    vals = np.array([vf.value(s) for s in deals])
    assert abs(vals.mean() - expect) < 4 * vals.std(ddof=1) / np.sqrt(vals.size)
    assert vals.std() > 1.0
    assert vf.stats["own"] >= 200       # every one of them valued from A^D's own hand


def test_holdem_street_end_is_the_checkdown_martingale(holdem_ds):
    """Where A^D's solve stops (before the flop), the value is the check-down value, and the chance term's
    expectation is that value: the flop's mean of the check-down value, exactly (the equity is a martingale)."""
    view = poker_view(holdem_ds.game)
    vf = holdem_ds.aivat_value_function(view)
    eq = EquityValueFunction(view)
    s = _dealt(view, 3)
    vf.hand_start(SimpleNamespace(seat_agents=[holdem_ds, object()]))
    while not s.is_chance_node():          # both call down preflop: A^D's first solve covers it
        s.apply_action(CALL)
    assert vf.chance_expectation(s) == pytest.approx(eq.value(s), abs=1e-9)
    assert vf.value(s) == pytest.approx(eq.value(s), abs=1e-3)    # the solve's leaf (float32 preflop table)
    flop = s.clone()
    while flop.is_chance_node():
        flop.apply_action(int(flop.chance_outcomes()[0][0]))
    assert vf.value(flop) == pytest.approx(eq.value(flop), abs=1e-9)   # after the card: outside the solve's tree


def test_the_observer_corrects_with_the_distribution_act_draws_from_holdem(holdem_ds):
    """A^D: the row the observer takes at its decision is the distribution ``act`` draws from, and the value
    function's children are the root children of the solve made there."""
    view = poker_view(holdem_ds.game)
    holdem_ds.new_hand()
    s = _dealt(view, 5)
    seat = s.current_player()
    actions, row = CheckedAgent(holdem_ds, view).own_strategy(s)
    rec = _Recorder()
    holdem_ds.rng, keep = rec, holdem_ds.rng
    try:
        a = holdem_ds.act(s)
    finally:
        holdem_ds.rng = keep
    assert rec.p.shape == row.shape and np.allclose(rec.p / rec.p.sum(), row, atol=1e-12)
    result, rel, at = holdem_ds.resolve_covering(s.child(a), seat)
    assert rel == (a,) and at == 0 and tuple(result.tree.root.actions) == tuple(int(x) for x in actions)


def test_holdem_kept_preflop_resolves_are_the_same_and_not_made_again():
    """``keep_preflop``: a preflop re-solve met again in a later hand (same seat and betting, other cards) is the
    kept one, with the same strategy as a fresh agent's; the agent makes no new re-solve for it."""
    kept = make_agent("deepstack-holdem:iterations=3,preflop_boards=50,keep_preflop=8", game="holdem", seed=1)
    fresh = make_agent("deepstack-holdem:iterations=3,preflop_boards=50", game="holdem", seed=1)
    view = poker_view(kept.game)
    first = _dealt(view, 1)
    first.apply_action(CALL)            # the small blind limps: the big blind's re-solve
    kept.new_hand()
    a = kept.hand_strategy(first)
    made = kept.num_resolves
    kept.new_hand()                     # a new hand: the per-hand records are cleared, the preflop one kept
    second = _dealt(view, 2)
    second.apply_action(CALL)
    assert tuple(second.history()[4:]) == tuple(first.history()[4:]) and second.hole != first.hole
    b = kept.hand_strategy(second)
    assert kept.num_resolves == made
    fresh.new_hand()
    c = fresh.hand_strategy(second)
    assert np.array_equal(b.actions, c.actions) and np.array_equal(b.probs, c.probs)
    assert np.array_equal(a.probs, b.probs)   # the strategy of every hand: the cards do not enter a re-solve
    with pytest.raises(Exception, match="keep_preflop"):
        make_agent("deepstack-holdem:iterations=3,keep_preflop=-1", game="holdem", seed=1)


def test_holdem_next_outside_checkdown_keeps_the_checkdown_value_on_a_new_street(holdem_ds):
    """``next_outside="checkdown"``: a flop state where A^D acts next after the opponent's bet, which A^D's preflop
    solve does not reach, takes the check-down value (as without ``resolve_next``); ``"resolve"`` re-solves it."""
    from cfrkit.agents.resolve_values import ResolveValueFunction
    from cfrkit.games.holdem import RAISE_OFFSET

    view = poker_view(holdem_ds.game)
    holdem_ds.new_hand()
    s = _dealt(view, 7)
    s.apply_action(CALL)                  # the small blind limps, the big blind checks: the flop
    s.apply_action(CALL)
    while s.is_chance_node():
        acts, _probs = zip(*s.chance_outcomes())
        s.apply_action(int(acts[0]))
    opener = s.current_player()
    bets = [int(a) for a in s.legal_actions() if int(a) >= RAISE_OFFSET]
    s.apply_action(bets[0])               # the opener bets; A^D (the other seat) acts next
    ds_seat = 1 - opener
    seating = [holdem_ds, object()] if ds_seat == 0 else [object(), holdem_ds]
    cd = ResolveValueFunction(view, holdem_ds, resolve_next=True, hand_value="own_next", next_outside="checkdown")
    rs = ResolveValueFunction(view, holdem_ds, resolve_next=True, hand_value="own_next")
    for f in (cd, rs):
        f.hand_start(SimpleNamespace(seat_agents=seating))
    assert cd.value(s) == pytest.approx(EquityValueFunction(view).value(s), abs=1e-9)
    assert cd.stats["left"] == 1 and cd.stats.get("own", 0) == 0
    assert abs(rs.value(s) - cd.value(s)) > 1e-6 and rs.stats["own"] == 1
    with pytest.raises(ValueError, match="next_outside"):
        ResolveValueFunction(view, holdem_ds, resolve_next=True, next_outside="never")
