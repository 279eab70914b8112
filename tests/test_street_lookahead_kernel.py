"""The street lookahead walked in C (``pyx/street_lookahead.pyx``, issue 27) against the Python walk.

``BlueprintValueFunction._values_on_boards`` plays the rest of a street over a chance node's sampled boards; with
``compiled_lookahead`` (the default) the betting lines are kept across hands as plans and walked in C, off it
walks the states in Python (the reference).  The two must give the same numbers bit for bit, on any state, with
any known policy in the other seat, and when the kept lines are read in later hands (other cards).
"""
import copy
from types import SimpleNamespace

import numpy as np
import pytest

import cfrkit.agents.blueprint_values as bv
from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.agents.poker import AlwaysCallAgent, AlwaysFoldAgent, FixedRangeRaiser, RandomAgent
from cfrkit.agents.rule_based import RuleBasedAgent
from cfrkit.games import load
from cfrkit.games.base import GameError
from cfrkit.poker.view import poker_view
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy
from holdem_play import BoardParityCaller, postflop_decisions, sample_boards

GAME = "holdem(stacks=400;400)"

pytestmark = pytest.mark.skipif(bv._street_kernel is None, reason="kernels not rebuilt (street_lookahead)")


@pytest.fixture(scope="module")
def strategy(tiny_blueprint):
    return BlueprintStrategy.load(tiny_blueprint(GAME))


def _other(name, strategy):
    return {"always-call": AlwaysCallAgent(), "always-fold": AlwaysFoldAgent(), "rule-based": RuleBasedAgent(),
            "range-raiser": FixedRangeRaiser("TT+,AK", 1.0), "mixed": BoardParityCaller("TT+"),
            "blueprint": BlueprintAgent(copy.copy(strategy), seed=4)}[name]


@pytest.mark.parametrize("opponent,river_exact,follow,draws", [
    ("always-call", False, False, False), ("always-call", True, True, False), ("rule-based", False, False, False),
    ("rule-based", True, False, False), ("range-raiser", False, True, False), ("mixed", False, False, False),
    ("blueprint", False, False, False), ("always-fold", False, False, False), ("rule-based", False, True, True),
    ("range-raiser", True, True, True)])
def test_compiled_lookahead_is_the_python_walk(strategy, opponent, river_exact, follow, draws):
    """On random betting lines at every chance node after the preflop, over sampled boards: the compiled walk's
    values equal the Python walk's bit for bit, in both seatings, the kept lines read again in later hands; with
    ``owner_draws`` (a raise whose size the owner draws: the mean over the sizes below it) too."""
    game = load(GAME)
    owner = BlueprintAgent(strategy, seed=3)
    other = _other(opponent, strategy)
    vf = owner.aivat_value_function(poker_view(game), boards=2, river_exact=river_exact)
    vf.follow_owner = follow
    vf.owner_draws = vf.owner_fallback = draws
    vf.blueprint_lookahead = True
    rng = np.random.default_rng(11)
    bettor = RandomAgent(5)
    compared = differ = 0
    for hand in range(24):
        seats = [owner, other] if hand % 2 == 0 else [other, owner]
        vf.hand_start(SimpleNamespace(seat_agents=seats))
        if follow:  # remembered translations: any child of the node, as an owner agent draws them
            vf._memo = {}
        state = game.new_initial_state()
        cards = [int(c) for c in rng.permutation(52)]
        while not state.is_terminal():
            if state.is_chance_node():
                if state.hole_cards_dealt and not vf._runs_out(state):
                    boards = sample_boards(state, cards, rng, 7)
                    vf.compiled_lookahead = True
                    fast = vf._values_on_boards(state, boards)
                    vf.compiled_lookahead = False
                    slow = vf._values_on_boards(state, boards)
                    vf.compiled_lookahead = True
                    assert (fast is None) == (slow is None)
                    if fast is not None:
                        compared += 1
                        assert np.array_equal(np.asarray(fast), np.asarray(slow)), (hand, state.history())
                        differ += len(set(fast)) > 1
                state.apply_action(cards.pop())
                continue
            action = bv.CALL if rng.random() < 0.6 else bettor.act(state)
            if follow and action not in (bv.FOLD, bv.CALL):
                node = vf._shared.walker.node_of(state, None, vf._memo)
                if node is not None and vf.tree.kind[node] == bv.DECISION:
                    first = int(vf.tree.child_start[node])
                    vf._memo[len(state.history())] = (action, first + int(rng.integers(int(vf.tree.num_children[node]))))
            state.apply_action(action)
    assert compared >= 8 and differ >= 3  # the boards' values differ: the walk reads each board's cards
    assert vf._plans is not None and len(vf._plans.roots) < compared  # lines kept and read again


def test_with_cards_is_the_same_betting_on_other_cards():
    """``HoldemState.with_cards`` equals the state the same betting reaches when other cards are dealt."""
    game = load("holdem")
    rng = np.random.default_rng(4)
    bettor = RandomAgent(1)
    for _ in range(30):
        deal_a, deal_b = [int(c) for c in rng.permutation(52)], [int(c) for c in rng.permutation(52)]
        a, b = game.new_initial_state(), game.new_initial_state()
        while not a.is_terminal():
            if a.is_chance_node():
                a.apply_action(deal_a.pop())
                b.apply_action(deal_b.pop())
            else:
                act = bv.CALL if rng.random() < 0.5 else bettor.act(a)
                a.apply_action(act)
                b.apply_action(act)
            if a.hole_cards_dealt:
                got = a.with_cards(b.hole, b.board)
                assert got.history() == b.history() and got.hole == b.hole and got.board == b.board
                assert got.pot() == b.pot() and got.current_player() == b.current_player()
                if got.is_terminal():
                    assert np.array_equal(got.returns(), b.returns())
    s = game.new_initial_state()
    for c in (0, 1, 2, 3):
        s.apply_action(c)
    with pytest.raises(GameError, match="not distinct"):
        s.with_cards([[0, 1], [1, 2]], [])
    with pytest.raises(GameError, match="hole and 3 board cards given"):
        s.with_cards([[0, 1], [4, 5]], [6, 7, 8])


def test_agents_marked_ignores_hand_play_alike_on_every_hand():
    """``ignores_hand`` (the compiled lookahead keeps the answer per betting line for every hand) holds for the
    agents that claim it: the same own strategy with other hole cards and boards; not claimed by hand readers."""
    game = load("holdem")
    rng = np.random.default_rng(9)
    bettor = RandomAgent(2)
    agents = [AlwaysCallAgent(), AlwaysFoldAgent()]
    assert all(a.ignores_hand for a in agents)
    assert not FixedRangeRaiser.ignores_hand and not RuleBasedAgent.ignores_hand
    checked = 0
    for _ in range(30):
        deal = [int(c) for c in rng.permutation(52)]
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(deal.pop())
                continue
            other = [int(c) for c in rng.permutation([c for c in range(52)])]
            hole = [other[0:2], other[2:4]]
            board = other[4:4 + len(state.board)]
            moved = state.with_cards(hole, board)
            for a in agents:
                x, y = a.own_strategy(state), a.own_strategy(moved)
                assert np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1])
            checked += 1
            state.apply_action(bv.CALL if rng.random() < 0.6 else bettor.act(state))
    assert checked > 50


class _ActionBuilder:
    """A walk's builder whose children are fold terminals worth their action id: the walk's value on each board is
    the action the compiled rules chose there."""

    def __init__(self, agent, state, boards):
        self.agent, self.state, self.boards = agent, state, boards

    def plan_features(self, plan):
        hs, ehs, outs, wet = self.agent.features_on_boards(self.state, self.boards)
        return hs, ehs, outs.astype(np.int64), wet.astype(np.uint8)

    def plan_shares(self, plan):
        return self.agent.cbet_share_on_boards(self.state, self.boards)

    def plan_child(self, plan, action):
        child = bv._street_kernel.Plan(None, (), 1)
        child.street, child.value = bv._street_kernel.ST_FOLD, float(action)
        return child


def test_compiled_rules_are_act_on_boards():
    """A^R's postflop rules in the walk (``ST_RULES``) choose on every board what ``act_on_boards`` plays, on random
    heads-up betting at every postflop decision (c-bet spots, bets faced, all-in sizes), 12 boards each."""
    k = bv._street_kernel
    agent = RuleBasedAgent()
    rng = np.random.default_rng(17)
    checked = cbets = facing = 0
    for state in postflop_decisions("holdem", rng, 250, bettor_seed=3):
        p = state.current_player()
        dead = set(state.hole[0]) | set(state.hole[1])
        rest = [c for c in range(52) if c not in dead]
        boards = [[int(c) for c in rng.choice(rest, len(state.board), replace=False)] for _ in range(12)]
        plan = k.Plan(state, (), 0)
        assert bv._StreetPlans._rules_plan(plan, agent, state, p)
        got = k.street_values(plan, _ActionBuilder(agent, state, boards), np.zeros(12, np.int64),
                              np.zeros(12, np.int64), np.zeros(12))
        assert np.array_equal(got.astype(np.int64), agent.act_on_boards(state, boards))
        checked += 1
        cbets += plan.rules[k.R_CBET] == 1.0
        facing += plan.rules[k.R_FREE] == 0.0
    assert checked > 100 and cbets >= 5 and facing >= 20


@pytest.mark.parametrize("opponent,river_exact,turn_exact", [
    ("always-call", False, False), ("rule-based", False, False), ("mixed", False, False),
    ("blueprint", False, False), ("always-call", True, False), ("always-call", False, True)])
def test_chance_and_value_is_the_two_calls(strategy, opponent, river_exact, turn_exact):
    """``chance_and_value(before, after)`` (the dealt board walked with the chance node's sampled boards, its lines
    kept for the street's decisions) equals ``chance_expectation(before)`` then ``value(after)`` of a twin value
    function bit for bit, the two generators stay in step, and every later value of the hand (each legal action's
    child at each decision) is the twin's; with ``turn_exact`` a walk that would draw turn cards is refused (the
    separate calls take over).  Both paths are taken."""
    game = load(GAME)
    owner = BlueprintAgent(strategy, seed=3)
    other = _other(opponent, strategy)
    view = poker_view(game)
    base = owner.aivat_value_function(view, boards=2, river_exact=river_exact)
    fast, slow = base.fresh(view), base.fresh(view)  # the same tables, generators seeded alike
    for vf in (fast, slow):
        vf.blueprint_lookahead = True
        vf.turn_exact = turn_exact
    rng = np.random.default_rng(5)
    bettor = RandomAgent(7)
    fused = separate = values = 0
    walked = []
    real = bv.BlueprintValueFunction._values_with_real

    def spy(self, state, boards, board, *rest):
        got = real(self, state, boards, board, *rest)
        walked.append(got is not None)
        return got
    bv.BlueprintValueFunction._values_with_real = spy
    try:
        for hand in range(16 if turn_exact else 30):
            seats = [owner, other] if hand % 2 == 0 else [other, owner]
            for vf in (fast, slow):
                vf.hand_start(SimpleNamespace(seat_agents=seats))
            state = game.new_initial_state()
            cards = [int(c) for c in rng.permutation(52)]
            while not state.is_terminal():
                if state.is_chance_node():
                    before = state.clone()
                    while state.is_chance_node():
                        state.apply_action(cards.pop())
                    n = len(walked)
                    got = fast.chance_and_value(before, state)
                    want = (slow.chance_expectation(before), slow.value(state))
                    assert got == want, (hand, state.history())
                    fused += len(walked) > n and walked[-1]
                    separate += len(walked) == n or not walked[-1]
                    assert fast.rng.bit_generator.state == slow.rng.bit_generator.state
                    continue
                action = bv.CALL if rng.random() < 0.6 else bettor.act(state)
                legal = set(int(a) for a in state.legal_actions())
                for a in sorted({bv.CALL, bv.FOLD, action} & legal):  # the played one, a check / call, a fold
                    child = state.clone()
                    child.apply_action(a)
                    assert fast.value(child) == slow.value(child), (hand, state.history(), a)
                    values += 1
                state.apply_action(action)
    finally:
        bv.BlueprintValueFunction._values_with_real = real
    assert values > 50 and separate > 0
    assert fused >= (0 if river_exact or turn_exact else 10)
    if turn_exact:  # refused walks (a draw of turn cards inside) and fused ones (turn and river)
        assert False in walked and True in walked


def test_closing_entries_in_one_call_are_closing_ds_entry_by_entry(strategy):
    """``BlueprintValueTable.closing_many`` (the compiled walk's unread closing entries in one call) gives
    ``closing_ds`` of each entry bit for bit: on fresh tables over the same blocks, entries repeated, in any order,
    with rows remembered, and reading the entries ``closing_ds`` remembered (a wrong one planted there shows
    through)."""
    game = load(GAME)
    vf = BlueprintAgent(strategy, seed=3).aivat_value_function(poker_view(game), boards=2)
    t = strategy.tree
    rng = np.random.default_rng(7)
    nodes = [int(n) for n in np.flatnonzero((t.kind == bv.DECISION) & (t.round > 0))]
    many = bv.BlueprintValueTable(t, vf.table.num_buckets, blocks=(vf.table.D, vf.table.S))
    one = bv.BlueprintValueTable(t, vf.table.num_buckets, blocks=(vf.table.D, vf.table.S))
    for _ in range(6):
        n = int(rng.choice(nodes))
        r = int(t.round[n])
        nb = vf.table.num_buckets[r - 1]
        b0s = rng.integers(0, nb, 300).tolist()
        b1s = rng.integers(0, nb, 300).tolist()
        b0s[5], b1s[5] = b0s[2], b1s[2]  # an entry asked twice in one call
        got = many.closing_many(n, b0s, b1s, vf.trans[r - 1])
        want = [one.closing_ds(n, x, y, vf.trans[r - 1]) for x, y in zip(b0s, b1s)]
        assert got == want and all(type(v) is float for pair in got for v in pair)
        assert not many.closing and all((n, x) in many._closing_rows for x in b0s)  # the rows kept, not the entries
        # with the rows remembered, and the entries closing_ds remembered: the same numbers
        assert many.closing_many(n, b0s[::-1], b1s[::-1], vf.trans[r - 1]) == want[::-1]
        assert one.closing_many(n, b0s, b1s, vf.trans[r - 1]) == want
        one.closing[(n, b0s[0], b1s[0])] = (-1.0, -2.0)
        assert one.closing_many(n, b0s[:1], b1s[:1], vf.trans[r - 1]) == [(-1.0, -2.0)]
        del one.closing[(n, b0s[0], b1s[0])]


def test_plan_closing_fills_the_dense_table_with_closing_ds(strategy):
    """``_StreetPlans.plan_closing`` (the rows ``tr[b0] @ D`` kept densely per node, the second products by numpy's
    ddot in one kernel call, ``street_lookahead.fill_closing``) writes ``closing_ds`` of each asked entry bit for bit
    into the walk's dense closing table, entries repeated and rows reused across calls, and leaves the others NaN."""
    game = load(GAME)
    vf = BlueprintAgent(strategy, seed=3).aivat_value_function(poker_view(game), boards=2)
    if not bv._numpy_ddot():
        pytest.skip("numpy without a BLAS ddot here: plan_closing takes closing_array")
    plans = bv._StreetPlans(vf)
    one = bv.BlueprintValueTable(strategy.tree, vf.table.num_buckets, blocks=(vf.table.D, vf.table.S))
    t = strategy.tree
    rng = np.random.default_rng(11)
    nodes = [int(n) for n in np.flatnonzero((t.kind == bv.DECISION) & (t.round > 0))]
    for _ in range(4):
        n = int(rng.choice(nodes))
        r = int(t.round[n])
        nb = vf.table.num_buckets[r - 1]
        plan = SimpleNamespace(node=n, closing=plans._closing_table(n))
        asked = set()
        for _ in range(3):  # later calls reuse the rows of the first
            b0s = rng.integers(0, nb, 40)
            b1s = rng.integers(0, nb, 40)
            b0s[5], b1s[5] = b0s[2], b1s[2]
            plans.plan_closing(plan, b0s, b1s)
            asked |= set(zip(b0s.tolist(), b1s.tolist()))
        for x in range(nb):
            for y in range(nb):
                got = tuple(plan.closing[x, y].tolist())
                if (x, y) in asked:
                    assert got == one.closing_ds(n, x, y, vf.trans[r - 1]), (n, x, y)
                else:
                    assert np.isnan(got).all()


def test_support_is_real_action_of_every_child(strategy):
    """``BlueprintAgent._support`` (the state read once for all children) gives ``real_action`` of each child, the
    children playing the same real action in one column: at random decisions of random hands (clamped sizes, all-ins,
    checks where a fold would be)."""
    game = load(GAME)
    agent = BlueprintAgent(strategy, seed=3)
    bettor = RandomAgent(9)
    rng = np.random.default_rng(21)
    seen = 0
    for _ in range(60):
        state = game.new_initial_state()
        agent.new_hand()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = [a for a, _ in state.chance_outcomes()]
                state.apply_action(int(outcomes[int(rng.integers(len(outcomes)))]))
                continue
            node = agent.abstract_node(state)
            if node is not None:
                first = int(agent.tree.child_start[node])
                real = [agent.real_action(c, state) for c in range(first, first + int(agent.tree.num_children[node]))]
                actions, column = agent._support(node, state)
                assert actions.tolist() == list(dict.fromkeys(real))
                assert [actions.tolist()[j] for j in column.tolist()] == real
                seen += 1
            state.apply_action(int(bettor.act(state)))
    assert seen >= 100


def test_dot_rows_is_ndarray_dot_bit_for_bit():
    """``street_lookahead.dot_rows`` with numpy's own BLAS ddot (``blueprint_values._numpy_ddot``) gives
    ``ndarray.dot``'s doubles for every pair of rows (lengths 2..200, mixed signs and magnitudes, zeros and negative
    zeros); one-element rows (numpy's scalar product), indices outside the arrays and a missing address are refused."""
    from cfrkit._kernels import street_lookahead as k

    addr = bv._numpy_ddot()
    if not addr:
        pytest.skip("numpy without a BLAS ddot here: closing_array takes ndarray.dot per entry")
    rng = np.random.default_rng(3)
    for L in (2, 3, 7, 16, 50, 51, 64, 200):
        rows = rng.standard_normal((6, L)) * 10.0 ** rng.integers(-4, 5, size=(6, 1))
        cols = rng.random((5, L))
        rows[0] = 0.0
        rows[1] = -0.0
        ri = rng.integers(0, 6, size=40)
        ci = rng.integers(0, 5, size=40)
        got = k.dot_rows(addr, rows, ri, cols, ci)
        want = np.array([rows[a].dot(cols[b]) for a, b in zip(ri, ci)])
        assert got.tobytes() == want.tobytes(), L
    with pytest.raises(ValueError, match="at least 2"):
        k.dot_rows(addr, np.ones((2, 1)), np.array([0]), np.ones((2, 1)), np.array([0]))
    with pytest.raises(ValueError, match="outside"):
        k.dot_rows(addr, np.ones((2, 3)), np.array([2]), np.ones((2, 3)), np.array([0]))
    with pytest.raises(ValueError, match="no ddot"):
        k.dot_rows(0, np.ones((2, 3)), np.array([0]), np.ones((2, 3)), np.array([0]))
