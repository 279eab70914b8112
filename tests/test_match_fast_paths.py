"""The match runner's and AIVAT's fast paths (issue 27) against slow references kept here.

The fast paths: AIVAT asks each known agent for the strategy of the hand it holds
(``CheckedAgent.own_strategy``, A^R's and the simple agents' ``own_strategy``) instead of all 1326
hands, skips the child values of pure decisions, and reads the preflop hand-against-hand equity
from the shipped exact matchup counts; the runner checks an action once.  The references: a plain
loop over the seeded deals that asks every known agent's full ``hand_strategy`` (all rows
checked) before it acts, values every child, and enumerates every equity with the kernel.  The
same seeds must give the same hands and the same per-hand AIVAT values.
"""
import numpy as np
import pytest

from cfrkit._kernels import equity as equity_kernel
from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.agents.poker import (
    AlwaysCallAgent,
    AlwaysFoldAgent,
    FixedRangeRaiser,
    RandomAgent,
)
from cfrkit.agents.rule_based import RuleBasedAgent
from cfrkit.cards.hands import pair_index
from cfrkit.evaluation.aivat import AivatObserver, EquityValueFunction
from cfrkit.evaluation.headtohead import head_to_head
from cfrkit.games.holdem.deals import deal_for_hand
from cfrkit.games.registry import load
from cfrkit.poker.agent import AgentInterfaceError, CheckedAgent, HandStrategy
from cfrkit.poker.match import play_match
from cfrkit.poker.view import PREFLOP_BOARDS, poker_view, preflop_matchup_count
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy
from cfrkit.solvers.blueprint.trainer import BlueprintTrainer


@pytest.fixture(scope="module")
def tiny_strategy():
    """A blueprint of the default hold'em game after 2 iterations (raise cap 1, 2 buckets after the
    flop): mixed strategies, so AIVAT's decision terms are not zero."""
    tr = BlueprintTrainer("holdem", "0.5+1", 1, abstraction="ehs:169,2,2,2", seed=1)
    tr.iterate(2)
    return BlueprintStrategy.from_trainer(tr)


def _agent(name, tiny_strategy, seed):
    return {"rule-based": RuleBasedAgent, "fixed-range-raiser": FixedRangeRaiser, "always-call": AlwaysCallAgent,
            "always-fold": AlwaysFoldAgent}[name]() if name != "blueprint" else BlueprintAgent(tiny_strategy, seed=seed)


_EQ = {}


def _enumerated_equity(state):
    """Seat 0's equity against seat 1's hand by enumerating every board (the kernel, preflop too)."""
    h0, h1 = state.hole
    key = (tuple(h0), tuple(h1), tuple(state.board))
    if key not in _EQ:
        w, t, l = equity_kernel.hand_vs_hand_counts(h0[0], h0[1], h1[0], h1[1], np.array(state.board, dtype=np.uint8))
        _EQ[key] = (w + 0.5 * t) / (w + t + l)
    return _EQ[key]


def _value(state):
    if state.is_terminal():
        return float(state.returns()[0])
    c = [float(x) for x in state.spent]
    eq = _enumerated_equity(state) if len(state.hole[0]) == 2 and len(state.hole[1]) == 2 else 0.5
    return eq * (c[0] + c[1]) - c[0]


def _reference_match(game, agents, deals, seed):
    """(payoffs of agents[0] per hand, AIVAT values per hand), duplicate, the seats of play_match."""
    view = poker_view(game)
    checked = [CheckedAgent(a, view) for a in agents]
    payoffs, aivat = [], []
    for deal in range(deals):
        cards = deal_for_hand(game, seed, deal)
        for rotation in (0, 1):
            by_seat = checked if rotation == 0 else checked[::-1]
            for a in by_seat:
                a.new_hand()
            state = game.new_initial_state()
            correction, k = 0.0, 0
            while not state.is_terminal():
                if state.is_chance_node():
                    before = _value(state)
                    while state.is_chance_node():
                        state.apply_action(cards[k])
                        k += 1
                    correction += _value(state) - before
                    continue
                seat = state.current_player()
                hs = by_seat[seat].hand_strategy(state)          # every row checked, as before issue 27
                row = hs.probs[pair_index(*state.hole[seat])]
                action = by_seat[seat].act(state)
                values = {}
                for a, q in zip(hs.actions, row):
                    if q > 0:
                        child = state.clone()
                        child.apply_action(int(a))
                        values[int(a)] = _value(child)
                correction += values[action] - sum(q * values[int(a)] for a, q in zip(hs.actions, row) if q > 0)
                state.apply_action(action)
            sign = 1.0 if rotation == 0 else -1.0
            u0 = float(state.returns()[0])
            payoffs.append(sign * u0)
            aivat.append(sign * (u0 - correction))
    return np.array(payoffs), np.array(aivat)


@pytest.mark.parametrize("names", [("rule-based", "fixed-range-raiser"), ("rule-based", "always-call"),
                                   ("fixed-range-raiser", "always-call"), ("blueprint", "rule-based"),
                                   ("blueprint", "always-call"), ("always-fold", "blueprint")])
def test_fast_match_gives_the_reference_hands_and_aivat_values(names, tiny_strategy):
    game = load("holdem")
    deals, seed = 12, 2024
    fast = head_to_head(game, [_agent(n, tiny_strategy, 5 + i) for i, n in enumerate(names)], deals, seed=seed,
                        duplicate=True, aivat=True, value_function=EquityValueFunction(poker_view(game)),
                        time_limit=float("inf"))
    payoffs, aivat = _reference_match(game, [_agent(n, tiny_strategy, 5 + i) for i, n in enumerate(names)], deals,
                                      seed)
    assert np.array_equal(fast.hand_values, payoffs)
    np.testing.assert_allclose(fast.aivat_values, aivat, rtol=0, atol=1e-9)
    if "blueprint" in names:  # mixed decisions: the terms that the fast path computes are not all zero
        assert np.any(np.abs(fast.aivat_values - fast.hand_values) > 1)
    # AIVAT attached or not, the agents play the same hands
    plain = play_match(game, [_agent(n, tiny_strategy, 5 + i) for i, n in enumerate(names)], deals, seed=seed,
                       time_limit=float("inf"))
    assert np.array_equal(plain.hand_values, payoffs)


def _states(game, agents, deals, seed):
    """Every decision state of a few seeded hands between ``agents`` (copies)."""
    out = []
    for deal in range(deals):
        cards = deal_for_hand(game, seed, deal)
        for seats in (agents, agents[::-1]):
            for a in seats:
                a.new_hand()
            state, k = game.new_initial_state(), 0
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(cards[k])
                    k += 1
                    continue
                out.append(state.clone())
                state.apply_action(seats[state.current_player()].act(state))
    return out


@pytest.mark.parametrize("agent", [RuleBasedAgent(), FixedRangeRaiser(), FixedRangeRaiser("22+,A2s+", 0.5),
                                   AlwaysCallAgent(), AlwaysFoldAgent()], ids=lambda a: a.name)
def test_own_strategy_is_the_hand_strategy_row_of_the_hand_held(agent):
    game = load("holdem")
    states = _states(game, [RandomAgent(3), RuleBasedAgent()], 12, 7)
    assert len({len(s.board) for s in states}) == 4     # every street
    for state in states:
        hs = agent.hand_strategy(state)
        row = hs.probs[pair_index(*state.hole[state.current_player()])]
        actions, probs = agent.own_strategy(state)
        full = {int(a): float(q) for a, q in zip(hs.actions, row) if q > 0}
        assert {int(a): float(q) for a, q in zip(actions, probs) if q > 0} == full


def test_preflop_equity_from_the_matchup_counts_is_the_enumeration_bit_for_bit():
    rng = np.random.default_rng(11)
    view = poker_view("holdem")
    matchups = [tuple(int(c) for c in rng.permutation(52)[:4]) for _ in range(12)]
    # suit-symmetric and same-rank matchups, where the canonical form may list either pair first
    matchups += [(48, 44, 49, 45), (49, 45, 48, 44), (0, 1, 2, 3), (51, 47, 3, 7)]
    for a, b, c, d in matchups:
        w, t, l = equity_kernel.hand_vs_hand_counts(a, b, c, d, np.zeros(0, dtype=np.uint8))
        assert w + t + l == PREFLOP_BOARDS
        assert preflop_matchup_count(a, b, c, d) == 2 * w + t
        assert preflop_matchup_count(b, a, d, c) == 2 * w + t        # card order within a pair
        assert preflop_matchup_count(c, d, a, b) == 2 * l + t        # the other side's count
        state = load("holdem").new_initial_state()
        for card in (a, b, c, d):
            state.apply_action(card)
        assert view.equity_hands(state) == (w + 0.5 * t) / (w + t + l)


class _OtherStrategy(AlwaysCallAgent):
    """Overrides hand_strategy alone (folds or calls, half and half): the inherited own_strategy (always
    call) must not answer for it."""

    name = "half-folds"

    def hand_strategy(self, state):
        hs = super().hand_strategy(state)
        return HandStrategy(np.array([0, 1]), np.concatenate([0.5 * hs.probs, 0.5 * hs.probs], axis=1))


class _BadOwn(AlwaysCallAgent):
    name = "bad-own"

    def own_strategy(self, state):
        return np.array([1, 0]), np.array([0.7, 0.7])


def test_own_strategy_answers_only_for_its_own_hand_strategy_and_is_checked():
    view = poker_view("holdem")
    state = load("holdem").new_initial_state()
    for card in deal_for_hand(state.game, 0, 0)[:4]:
        state.apply_action(card)
    actions, probs = CheckedAgent(_OtherStrategy(), view).own_strategy(state)
    assert dict(zip(actions.tolist(), probs.tolist())) == {0: 0.5, 1: 0.5}   # hand_strategy's row
    actions, probs = CheckedAgent(AlwaysCallAgent(), view).own_strategy(state)
    assert dict(zip(actions.tolist(), probs.tolist())) == {1: 1.0}
    with pytest.raises(AgentInterfaceError, match="'bad-own' .*sum to 1.4"):
        CheckedAgent(_BadOwn(), view).own_strategy(state)
    with pytest.raises(AgentInterfaceError, match="'bad-own' .*sum to 1.4"):
        head_to_head("holdem", [_BadOwn(), FixedRangeRaiser()], 1, aivat=True)


def test_aivat_observer_on_agents_without_a_checked_wrapper():
    # play_hand passes agents as given: the observer wraps them itself, with the same values
    from cfrkit.poker.match import MatchInfo, play_hand

    game = load("holdem")
    view = poker_view(game, heads_up=False)
    obs = AivatObserver(EquityValueFunction(view))
    obs.match_start(MatchInfo(game, view, ("rule-based", "always-call"), 1, 3, True, 1, 1))
    play_hand(game, [RuleBasedAgent(), AlwaysCallAgent()], deal_for_hand(game, 3, 1), observers=[obs])
    fast = head_to_head(game, [RuleBasedAgent(), AlwaysCallAgent()], 2, seed=3, aivat=True,
                        value_function=EquityValueFunction(view))
    assert obs.values == [fast.aivat_values[2]]


def _small_blueprint(stacks):
    """Hold'em with ``stacks`` chips a player and its blueprint after 2 iterations (raise cap 2, 2 buckets after the
    flop): (game, strategy)."""
    game = load(f"holdem(stacks={stacks};{stacks})")
    tr = BlueprintTrainer(game.game_string(), "0.5+1", 2, abstraction="ehs:169,2,2,2", seed=1)
    tr.iterate(2)
    return game, BlueprintStrategy.from_trainer(tr)


def _pair_decisions(game, deal_seed, pair, opponent, opponent_actions, deals=40):
    """Every decision of ``deals`` seeded deals (``deal_for_hand(game, deal_seed, deal)``), each played twice: the
    two agents of ``pair`` in seat 0 against ``opponent``, then in seat 1.  Yields (seat of the pair, state) before
    each decision of either player; when the loop asks for the next one, the player acts: the pair's first agent (the
    second must pick the same action) or the opponent (its action appended to ``opponent_actions``)."""
    first, second = pair
    for deal in range(deals):
        cards = deal_for_hand(game, deal_seed, deal)
        for seat in (0, 1):
            first.new_hand()
            second.new_hand()
            state, k = game.new_initial_state(), 0
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(cards[k])
                    k += 1
                    continue
                yield seat, state
                if state.current_player() == seat:
                    action = first.act(state)
                    assert second.act(state) == action, (deal, seat, state.history())
                else:
                    action = opponent.act(state)
                    opponent_actions.append(action)
                state.apply_action(action)


def test_blueprint_own_strategy_is_its_hand_strategy_row_bit_for_bit():
    """Two blueprint agents with one seed follow the same hands against a random bettor (its raises are
    translated and sampled, often to an all-in that takes the hand off the tree): one is asked
    ``hand_strategy``, the other ``own_strategy``, at every decision of either seat; rows, actions and
    sampled plays are equal.  Stacks of 10 big blinds, so abstract raises clamped to one real size
    (merged columns) happen."""
    game, strategy = _small_blueprint(1000)
    full, own = BlueprintAgent(strategy, seed=9), BlueprintAgent(strategy, seed=9)
    streets, merged, opponent_actions = set(), 0, []
    for _seat, state in _pair_decisions(game, 31, (full, own), RandomAgent(4), opponent_actions):
        p = state.current_player()
        hs = full.hand_strategy(state)
        actions, probs = own.own_strategy(state)
        assert np.array_equal(actions, hs.actions)
        assert np.array_equal(probs, hs.probs[pair_index(*state.hole[p])])   # bit for bit
        streets.add(len(state.board))
        node = own._node_or_none(state)
        merged += node is not None and actions.size < int(own.tree.num_children[node])
    translated = sum(action > 1 for action in opponent_actions)
    assert streets == {0, 3, 4, 5} and merged > 0 and translated > 20 and own.off_tree_hands > 0
    assert own.off_tree_hands == full.off_tree_hands and own.rng.random() == full.rng.random()


class _FromTheRoot(BlueprintAgent):
    """The agent walking every state's hand from the root (no walk kept from an earlier decision)."""

    def abstract_node(self, state):
        self._nodes, self._walks = {}, {}
        return super().abstract_node(state)


def test_blueprint_walk_from_the_last_decision_is_the_walk_from_the_root():
    """The agent's tree walk resumes at the last decision it walked and takes the deals after the last betting
    action from the state itself (no re-dealing): the same node, all-in flag and sampled translations at every
    decision of either seat as a walk from the root, against a random bettor (translated raises, off-tree
    all-ins), and the walk it keeps for the next decision is the state's own line."""
    game, strategy = _small_blueprint(2000)
    kept, root = BlueprintAgent(strategy, seed=5), _FromTheRoot(strategy, seed=5)
    asked, resumed, streets = 0, 0, set()
    for seat, state in _pair_decisions(game, 17, (kept, root), RandomAgent(7), []):
        resumed += bool(kept._walks)
        node = kept.abstract_node(state)
        assert node == root.abstract_node(state), (seat, state.history())
        assert kept._all_in == root._all_in
        assert kept.translations == root.translations
        history = tuple(state.history())
        if node is not None:
            assert kept._walks[history][1].serialize() == state.serialize()
            assert kept._walks[history][1] is not state
        asked += 1
        streets.add(len(state.board))
    assert asked > 200 and resumed > 100 and streets == {0, 3, 4, 5}
