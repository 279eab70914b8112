"""The fast paths of the blueprint's AIVAT value function (issue 27, match speed) against the plain ones.

Fast paths: the tables built once per agent and shared by the value functions of later matches
(``BlueprintValueFunction.fresh``), the abstract node memoised per betting line, the two hands' E[HS]
buckets alone on sampled boards (``EHSAbstraction.pair_buckets``), remembered buckets, equities and
run-outs, the other blueprint's per-line actions, ``own_strategy`` rows in the lookahead.  Each must give
the plain path's numbers bit for bit, so a match keeps its hands and its per-hand AIVAT values.
"""
import copy
from types import SimpleNamespace

import numpy as np
import pytest

import cfrkit.agents.blueprint_values as bv
from cfrkit.abstraction.ehs_abstraction import EHSAbstraction
from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.agents.poker import AlwaysCallAgent, AlwaysFoldAgent, FixedRangeRaiser, RandomAgent
from cfrkit.agents.rule_based import RuleBasedAgent
from cfrkit.cards.hands import pair_index
from cfrkit.evaluation.headtohead import head_to_head
from cfrkit.games import load
from cfrkit.poker.registry import make_agent
from cfrkit.poker.view import poker_view
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy
from holdem_play import BoardParityCaller, postflop_decisions, sample_boards

GAME = "holdem(stacks=400;400)"


@pytest.fixture(scope="module")
def strategy(tiny_blueprint):
    return BlueprintStrategy.load(tiny_blueprint(GAME))


def test_pair_buckets_are_the_board_buckets_bit_for_bit():
    ab = EHSAbstraction((169, 7, 7, 7), calibration_boards=4)
    rng = np.random.default_rng(5)
    for n, r in ((3, 1), (4, 2), (5, 3)) * 25:
        perm = [int(c) for c in rng.permutation(52)]
        board = perm[:n]
        pairs = [pair_index(perm[n], perm[n + 1]), pair_index(perm[n + 2], perm[n + 3]),
                 pair_index(perm[0], perm[n + 4])]  # the last touches the board: NaN, bucket -1
        ehs = ab.ehs(tuple(board))
        part = ab.ehs_of_pairs(tuple(board), pairs)
        assert np.array_equal(part, ehs[pairs], equal_nan=True) and np.isnan(part[2])
        ab._cache.clear()
        fast = ab.pair_buckets(r, board, pairs)       # not cached: the pairs' own E[HS]
        full = ab.buckets_for_board(r, board)[pairs]  # now cached
        assert np.array_equal(fast, full) and fast[2] == -1
        assert np.array_equal(ab.pair_buckets(r, board, pairs), full)  # read from the cache
    assert np.array_equal(ab.pair_buckets(0, [], [0, 1325]), ab.buckets_for_board(0, [])[[0, 1325]])
    with pytest.raises(ValueError, match="3 cards"):
        ab.pair_buckets(1, [1, 2], [0])
    with pytest.raises(ValueError, match="pair index"):
        ab.ehs_of_pairs((1, 2, 3), [1326])


def _plain(monkeypatch):
    """Switch the value function to its plain paths: the history walk from the root, the full board's
    buckets, the kernel's equity per call, the run-out played out, the other blueprint asked afresh."""
    monkeypatch.setattr(bv.NodeWalker, "node_of", lambda self, state, key=None, memo=None:
                        bv.BlueprintValueFunction._node_of_history(self, state, memo))

    def two_buckets(ab, cache, r, board, hole):
        b = ab.buckets_for_board(r, list(board))
        return int(b[pair_index(*hole[0])]), int(b[pair_index(*hole[1])])
    monkeypatch.setattr(bv, "_two_buckets", two_buckets)
    monkeypatch.setattr(bv.BlueprintValueFunction, "_equity", lambda self, hole, board: bv._equity(hole[0], hole[1], board))
    monkeypatch.setattr(bv.BlueprintValueFunction, "_runs_out", lambda self, state, key=None: bv._runs_out(state))

    def policy_call(self, state, key=None, memo=None):  # the tests pin follow_owner off: no memo followed
        a = self.agent
        node = self.nodes(state)
        if node is None or a.tree.kind[node] != bv.DECISION or a.tree.round[node] != state.round:
            return None
        b = a.blueprint.abstraction.buckets_for_board(int(a.tree.round[node]), list(state.board))
        row = a.blueprint.probabilities(node, [int(b[pair_index(*state.hole[state.current_player()])])])[0]
        first = int(a.tree.child_start[node])
        return np.array([a.real_action(first + i, state) for i in range(row.size)], dtype=np.int64), row
    monkeypatch.setattr(bv._BlueprintPolicy, "__call__", policy_call)
    monkeypatch.setattr(bv._Shared, "remember", staticmethod(lambda cache, key, value, limit=0: None))  # no memo
    # the chance expectations' lookahead board by board, not over all the boards at once
    monkeypatch.setattr(bv.BlueprintValueFunction, "_values_on_boards", lambda self, state, boards, *rest: None)

    def rebuilt(self, view, flops=16, boards=24, seed=0, river_exact=False):  # new tables per match
        return bv.BlueprintValueFunction(self.blueprint, view, self.translate_raise, boards=boards, flops=flops, seed=seed,
                                         river_exact=river_exact)
    monkeypatch.setattr(BlueprintAgent, "aivat_value_function", rebuilt)


def _blocks(strategy, opponent, blueprint_lookahead=False):
    """Two blocks of a pair with AIVAT by the blueprint's values (the first agent's), the agents kept between
    them as a ladder worker keeps them: per-deal duplicate and AIVAT values.  ``follow_owner`` is pinned off (the
    plain path does not follow the owner's translations; the memoised walk with them is checked against the
    history walk in ``test_memoised_walk_is_the_history_walk``)."""
    game = load(GAME)
    a = BlueprintAgent(strategy, seed=3)
    # another blueprint: a separate strategy object (the same numbers), so the value function follows it
    b = BlueprintAgent(copy.copy(strategy), seed=4) if opponent == "blueprint" else make_agent(opponent, game=game, seed=1)
    out = []
    for first in (0, 6):
        vf = a.aivat_value_function(poker_view(game))
        vf.follow_owner = False
        vf.blueprint_lookahead = blueprint_lookahead  # on: the value function follows the other blueprint
        res = head_to_head(game, [a, b], 6, seed=21, duplicate=True, aivat=True, value_function=vf, first_deal=first,
                           time_limit=float("inf"))
        out += [res.hand_values, res.aivat_values]
    return out


@pytest.mark.parametrize("opponent", [pytest.param("rule-based", marks=pytest.mark.slow),
                                      pytest.param("always-call", marks=pytest.mark.slow),
                                      "fixed-range-raiser", "blueprint"])
def test_fast_value_function_gives_the_plain_aivat_values(strategy, opponent, monkeypatch):
    look = opponent == "blueprint"   # another blueprint: followed by its own tree when asked
    fast = _blocks(strategy, opponent, look)
    with monkeypatch.context() as m:
        _plain(m)
        plain = _blocks(strategy, opponent, look)
    for x, y in zip(fast, plain):
        assert np.array_equal(x, y)
    assert not np.array_equal(fast[1], fast[0])  # AIVAT's terms are not all zero


def test_memoised_walk_is_the_history_walk(strategy):
    game = load(GAME)
    agent = BlueprintAgent(strategy, seed=3)
    vf = agent.aivat_value_function(poker_view(game), boards=2)
    walker, tree = vf._shared.walker, vf.tree
    rng = np.random.default_rng(3)
    seen = followed = 0
    for hand in range(40):  # random bettors: translated raises, all-ins, lines off the tree
        state = game.new_initial_state()
        cards = [int(c) for c in rng.permutation(52)]
        memo = {}  # remembered translations as an owner agent draws them (follow_owner): any child of the node
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(cards.pop())
                continue
            assert vf.node_of(state) == vf._node_of_history(state)
            seen += vf.node_of(state) is None
            node = walker.node_of(state, None, memo)
            assert node == vf._node_of_history(state, memo)
            assert walker.walk(state, None, memo) == bv._walk_history(tree, vf.translate_raise, state, memo)
            followed += node != vf.node_of(state)
            legal = state.legal_actions()
            options = list(legal.small)
            if legal.last_raise >= legal.first_raise:
                options += [legal.first_raise, int(rng.integers(legal.first_raise, legal.last_raise + 1)),
                            legal.last_raise]
            action = int(options[int(rng.integers(len(options)))])
            if action not in options[:len(legal.small)] and node is not None and tree.kind[node] == bv.DECISION:
                first = int(tree.child_start[node])
                memo[len(state.history())] = (action, first + int(rng.integers(int(tree.num_children[node]))))
            state.apply_action(action)
    assert seen > 0 and followed > 0  # some lines leave the tree; remembered translations change some nodes


def test_fresh_shares_the_tables_and_restarts_the_generator(strategy):
    game = load(GAME)
    agent = BlueprintAgent(strategy, seed=3)
    view = poker_view(game)
    vf = agent.aivat_value_function(view, boards=2)
    assert agent.aivat_value_function(view, boards=2) is vf
    first = vf.rng.random(3)
    other = agent.aivat_value_function(poker_view(game), boards=2)   # another match's view: not rebuilt
    assert other is not vf and other.table is vf.table and other.trans is vf.trans
    assert np.array_equal(other.rng.random(3), first)
    vf.flops, vf.street_from = 3, 4    # settings changed on one value function do not pass to the next
    later = agent.aivat_value_function(poker_view(game), boards=2)
    assert (later.flops, later.street_from) == (16, 1)
    again = agent.aivat_value_function(poker_view(game), boards=3)   # other arguments: built anew
    assert again.table is not vf.table
    with pytest.raises(Exception, match="not this value function's game"):
        vf.fresh(poker_view(load("holdem")))


class _BoardReader(FixedRangeRaiser):
    """fixed-range-raiser without ``ignores_board``: the lookahead asks it on each board's own state."""
    ignores_board = False


@pytest.mark.parametrize("opponent", ["always-call", "rule-based", "board-reader", "mixed", "blueprint"])
def test_lookahead_over_all_boards_is_the_per_board_lookahead(strategy, opponent):
    """At chance nodes after the preflop, ``_values_on_boards`` (the street lookahead played once over all the
    sampled boards) equals ``value`` of each board's dealt state, bit for bit, whichever way the other seat's
    policy is asked (board-blind, A^R's rules over the boards, each board's state, another blueprint's rows)."""
    game = load(GAME)
    owner = BlueprintAgent(strategy, seed=3)
    other = {"always-call": AlwaysCallAgent(), "rule-based": RuleBasedAgent(), "board-reader": _BoardReader("22+,A2+"),
             "mixed": BoardParityCaller("TT+"), "blueprint": BlueprintAgent(copy.copy(strategy), seed=4)}[opponent]
    vf = owner.aivat_value_function(poker_view(game), boards=2)
    vf.follow_owner = False
    vf.blueprint_lookahead = True
    rng = np.random.default_rng(8)
    bettor = RandomAgent(5)
    shared = 0
    for hand in range(30):
        seats = [owner, other] if hand % 2 == 0 else [other, owner]
        vf.hand_start(SimpleNamespace(seat_agents=seats))
        assert vf._street
        state = game.new_initial_state()
        cards = [int(c) for c in rng.permutation(52)]
        while not state.is_terminal():
            if state.is_chance_node():
                if state.hole_cards_dealt and not vf._runs_out(state):
                    boards = sample_boards(state, cards, rng, 6)
                    fast = vf._values_on_boards(state, boards)
                    slow = []
                    for bd in boards:
                        child = state.clone()
                        for c in bd[len(state.board):]:
                            child.apply_action(c)
                        slow.append(vf.value(child))
                    if fast is not None:
                        shared += 1
                        assert np.array_equal(fast, slow)
                state.apply_action(cards.pop())
                continue
            action = CALL_OR_RANDOM(state, bettor, rng)
            state.apply_action(action)
    assert shared >= 10


def CALL_OR_RANDOM(state, bettor, rng):
    """Mostly check / call (hands reach the later streets), sometimes a random bet or fold."""
    return bv.CALL if rng.random() < 0.7 else bettor.act(state)


def test_agents_marked_ignores_board_play_alike_on_every_board():
    """``ignores_board`` (the lookahead asks such an agent once for all boards) holds for the agents that claim it:
    the same own strategy and action at the same betting with other board cards."""
    game = load("holdem")
    rng = np.random.default_rng(2)
    agents = [AlwaysCallAgent(), AlwaysFoldAgent(), FixedRangeRaiser(), FixedRangeRaiser("22+,A2+,K9s+", 0.5)]
    assert all(a.ignores_board for a in agents) and not RuleBasedAgent.ignores_board
    checked = 0
    for state in postflop_decisions("holdem", rng, 40, choose=CALL_OR_RANDOM):
        dead = set(state.board) | set(state.hole[0]) | set(state.hole[1])
        others = iter(int(c) for c in rng.permutation(52) if c not in dead)
        other = game.new_initial_state()
        for a in state.history():  # the same hands and betting, other board cards
            other.apply_action(next(others) if other.is_chance_node() and other.hole_cards_dealt else a)
        assert other.board != state.board
        for agent in agents:
            mine, theirs = agent.own_strategy(state), agent.own_strategy(other)
            assert np.array_equal(mine[0], theirs[0]) and np.array_equal(mine[1], theirs[1])
            assert agent.act(state) == agent.act(other)
        checked += 1
    assert checked > 20
