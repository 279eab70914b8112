"""Public trees of heads-up no-limit hold'em subgames (HoldemPublicGame) against the protocol game.

* random paths of the public tree, replayed on protocol states with random concrete hole cards:
  every offered action is legal, contributions / player / board agree at every node, and the
  fold / showdown chips of the public tree equal the protocol's returns;
* the bet sizes equal holdem_abstract's; a river tree equals RiverPublicGame's tree and solve;
* depth-limited trees are the full trees cut at the next street; bad input gives GameError.
"""
from __future__ import annotations

import numpy as np
import pytest

from cfrkit.cards.equity import board_strengths
from cfrkit.cards.hands import pair_index
from cfrkit.games import load
from cfrkit.games.base import CHANCE, GameError
from cfrkit.games.holdem import AbstractHoldemState, raise_action
from cfrkit.games.holdem.matchstate import state_from_matchstate
from cfrkit.solvers.public.flat_range_cfr import FlatRangeSolver
from cfrkit.solvers.public.games import HoldemPublicGame, RiverPublicGame, normalize_bet_sizing, public_game_for
from cfrkit.solvers.public.tree import (CHANCE_NODE, DECISION, FOLD_NODE, LEAF, SHOWDOWN_NODE, RangeSolver,
                                        build_public_tree)

SIZINGS = [{1: [1.0]}, {1: [0.5, 1.0], 2: [1.0]}, {1: [0.33], 2: [0.75, 2.0]}, [[0.25, 3.0], []]]


def random_postflop_state(rng, game, street, chance_root=False):
    """A random protocol state (random hole cards and betting) at a decision on ``street`` (1..3), or
    at the chance node dealing that street's card (``chance_root``, street 2 or 3)."""
    for _ in range(1000):
        s = game.new_initial_state()
        while s.current_player() == CHANCE and len(s.board) == 0 and s._dealt < 4:
            outcomes = [c for c, _ in s.chance_outcomes()]
            s.apply_action(int(rng.choice(outcomes)))
        ok = False
        while not s.is_terminal():
            p = s.current_player()
            if p == CHANCE:
                if chance_root and s.round == street:
                    ok = True
                    break
                s.apply_action(int(rng.choice([c for c, _ in s.chance_outcomes()])))
                continue
            if s.round == street and not chance_root and rng.random() < 0.5:
                ok = True
                break
            u = rng.random()
            rr = s.raise_range()
            if u < 0.08 and s.is_legal(0):
                s.apply_action(0)
            elif u < 0.65 or rr is None:
                s.apply_action(1)
            else:
                lo, hi = rr
                total = hi if rng.random() < 0.15 else int(rng.integers(lo, min(hi, 3 * lo) + 1))
                s.apply_action(raise_action(total))
        if ok and s.round == street and len(s.board) >= 3:
            return s
    raise AssertionError("no state found")


def random_game(rng, equal_stacks=False):
    a = int(rng.integers(4, 40)) * 100
    b = a if equal_stacks or rng.random() < 0.5 else int(rng.integers(4, 40)) * 100 + int(rng.integers(0, 100))
    return load(f"holdem(stacks={a};{b})")


def public_terminal_returns(pgame, node_contrib, folder, board, holes):
    """Chips of both players at a public terminal for concrete hole cards (the solver's formula)."""
    if folder >= 0:
        out = [0.0, 0.0]
        out[folder] = -node_contrib[folder]
        out[1 - folder] = node_contrib[folder]
        return out
    s = pgame.strengths(board)
    h0, h1 = pair_index(*holes[0]), pair_index(*holes[1])
    sign = float(np.sign(s[h0] - s[h1]))
    return [sign * node_contrib[0], -sign * node_contrib[1]]


def check_decision(pgame, ps, concrete, actions):
    p = concrete.current_player()
    assert pgame.player(ps) == p
    for a in actions:
        assert concrete.is_legal(a), (a, concrete.legal_actions_summary())
    assert (0 in actions) == concrete.is_legal(0)
    assert 1 in actions
    rr = concrete.raise_range()
    raises = [a - 2 for a in actions if a >= 2]
    if rr is None:
        assert raises == []
    else:
        assert raises[-1] == rr[1]                          # all-in always offered, last
        assert all(rr[0] <= t <= rr[1] for t in raises)     # never below the minimum raise
        assert raises == sorted(set(raises))


def walk(rng, pgame, tree, concrete, stats):
    """Follow one random path of ``tree`` (then of ``pgame`` past its leaves) on the protocol state."""
    node = tree.root
    ps = node.state
    cap = min(concrete.d.stack)
    while True:
        if node is not None:
            assert node.contrib == pgame.contributions(ps)
            assert node.board == tuple(concrete.board)
        contrib = pgame.contributions(ps)
        assert contrib == tuple(float(min(x, cap)) for x in concrete.spent)
        assert pgame.board(ps) == tuple(concrete.board)
        kind = pgame.kind(ps)
        if kind == "terminal":
            assert concrete.is_terminal()
            assert node is None or node.kind in (FOLD_NODE, SHOWDOWN_NODE)
            folder = pgame.folder(ps)
            expected = public_terminal_returns(pgame, contrib, folder, tuple(concrete.board), concrete.hole)
            assert concrete.returns() == pytest.approx(expected, abs=1e-9)
            stats["fold" if folder >= 0 else "showdown"] += 1
            return
        if kind == "chance":
            assert concrete.current_player() == CHANCE
            cards = pgame.chance_cards(ps)
            held = set(concrete.hole[0] + concrete.hole[1])
            outcomes = [c for c, _ in concrete.chance_outcomes()]
            assert sorted(c for c in cards if c not in held) == sorted(outcomes)
            # chance weight: 1 / (52 - board - 4), the protocol's probability of each card given both hands
            assert pgame.chance_weight(pgame.board(ps)) == pytest.approx(concrete.chance_outcomes()[0][1])
            card = int(rng.choice(outcomes))
            if node is not None:
                assert node.kind == CHANCE_NODE and tuple(node.actions) == tuple(cards)
                node = tree.nodes[node.children[node.actions.index(card)]]
                ps = node.state
            else:
                ps = pgame.chance_child(ps, card)
            concrete.apply_action(card)
            stats["chance"] += 1
            continue
        assert concrete.current_player() == pgame.player(ps) >= 0
        if node is not None and node.kind == LEAF:
            assert pgame.round(ps) > pgame.round(tree.root.state) and len(ps.board) >= 4
            stats["leaf"] += 1
            node = None
        actions = pgame.actions(ps)
        check_decision(pgame, ps, concrete, actions)
        # bias towards calls so that paths reach showdowns too
        weights = np.array([3.0 if a == 1 else 1.0 for a in actions])
        a = int(rng.choice(actions, p=weights / weights.sum()))
        if node is not None:
            assert node.kind == DECISION and tuple(node.actions) == tuple(actions)
            assert node.player == concrete.current_player()
            node = tree.nodes[node.children[node.actions.index(a)]]
            ps = node.state
        else:
            ps = pgame.child(ps, a)
        concrete.apply_action(a)
        stats["action"] += 1


def test_random_paths_agree_with_protocol_chips_and_legality():
    rng = np.random.default_rng(7)
    stats = {"fold": 0, "showdown": 0, "chance": 0, "leaf": 0, "action": 0}
    for trial in range(36):
        game = random_game(rng)
        street = (1, 2, 3)[trial % 3]
        chance_root = street > 1 and trial % 4 == 0
        state = random_postflop_state(rng, game, street, chance_root)
        sizing = SIZINGS[trial % len(SIZINGS)]
        pgame = HoldemPublicGame(game, sizing)
        # full trees on the river, depth-limited trees on the flop and turn
        tree = build_public_tree(pgame, state, depth_limit=street < 3)
        assert tree.root.contrib == tuple(float(min(x, min(game.definition.stack))) for x in state.spent)
        for _ in range(4):
            concrete = state.clone()
            # new random concrete hole cards off the board
            free = [c for c in range(52) if c not in state.board]
            cards = rng.choice(free, 4, replace=False)
            concrete.hole = [[int(cards[0]), int(cards[1])], [int(cards[2]), int(cards[3])]]
            walk(rng, pgame, tree, concrete, stats)
    assert stats["fold"] > 5 and stats["showdown"] > 5 and stats["leaf"] > 5 and stats["chance"] > 20, stats


def test_tree_contributions_and_terminals_everywhere_on_a_river_tree():
    """Every node of a river tree (not only random paths) against the protocol, one fixed deal."""
    game = load("holdem(stacks=2000;2600)")
    state = state_from_matchstate(game, "MATCHSTATE:0:0:r300c/cr600c/cc/r700:5d5c|Kh2c/8dAs8s/Kd/7c")
    pgame = public_game_for(game, {1: [0.5, 1.0], 2: [1.0]})
    tree = build_public_tree(game, state, bet_sizing={1: [0.5, 1.0], 2: [1.0]})
    assert tree.root.player == 1 and tree.root.contrib == (700.0, 600.0)
    states = {0: state.clone()}
    kinds = set()
    for n in tree.nodes:
        concrete = states.pop(n.index)
        assert n.contrib == tuple(float(min(x, 2000)) for x in concrete.spent)
        if n.kind in (FOLD_NODE, SHOWDOWN_NODE):
            kinds.add(n.kind)
            assert concrete.returns() == pytest.approx(
                public_terminal_returns(pgame, n.contrib, n.folder, n.board, concrete.hole))
            continue
        check_decision(pgame, n.state, concrete, list(n.actions))
        for a, ch in zip(n.actions, n.children):
            states[ch] = concrete.child(a)
    assert kinds == {FOLD_NODE, SHOWDOWN_NODE}


def test_bet_sizes_equal_holdem_abstract():
    rng = np.random.default_rng(3)
    checked = 0
    for trial in range(60):
        game = random_game(rng, equal_stacks=True)
        abstract = load(f"holdem_abstract(game={game.game_string()},bets=0.5+1:1)")
        pgame = HoldemPublicGame(game, {1: [0.5, 1.0], 2: [1.0]})
        state = random_postflop_state(rng, game, 1 + trial % 3)
        ours = pgame.raise_totals(pgame.root(state))
        theirs = [t for _, t, _ in AbstractHoldemState(abstract, state.clone()).raise_targets()]
        assert ours == theirs
        checked += len(ours) > 1
    assert checked > 20


def test_river_tree_equals_river_public_game():
    """A river state of the protocol gives RiverPublicGame's tree, and the same solve."""
    game = load("holdem(stacks=2000;2000)")
    state = state_from_matchstate(game, "MATCHSTATE:0:0:r500c/cc/cc/:5d5c|/8dAs8s/Kd/7c")
    tree = build_public_tree(game, state, bet_sizing={1: [0.5, 1.0], 2: [1.0]})
    board = tuple(state.board)
    river = RiverPublicGame(board, board_strengths(board), pot=1000, stack=1500,
                            bet_fractions=[(0.5, 1.0), (1.0,)], min_bet=100, max_bets=100)
    ref = build_public_tree(river)
    assert len(tree) == len(ref) and tree.counts() == ref.counts()
    for a, b in zip(tree.nodes, ref.nodes):
        assert (a.kind, a.player, a.contrib, a.folder, a.board, len(a.children)) == \
               (b.kind, b.player, b.contrib, b.folder, b.board, len(b.children))
    ranges = np.random.default_rng(0).random((2, 1326))
    s1 = RangeSolver(tree, ranges=ranges, algorithm="dcfr").run(40)
    s2 = RangeSolver(ref, ranges=ranges, algorithm="dcfr").run(40)
    assert s1.exploitability() == pytest.approx(s2.exploitability(), rel=1e-9)
    flat = FlatRangeSolver(tree, ranges=ranges, algorithm="dcfr")
    flat.run(40)
    assert flat.exploitability() == pytest.approx(float(s1.exploitability()[0]), rel=1e-6)


def test_depth_limited_tree_is_the_full_tree_cut_at_the_next_street():
    game = load("holdem(stacks=1500;1500)")
    state = state_from_matchstate(game, "MATCHSTATE:0:0:r200c/cc/:5d5c|/8dAs8s/Kh")
    full = build_public_tree(game, state, bet_sizing={1: [1.0]})
    cut = build_public_tree(game, state, bet_sizing={1: [1.0]}, depth_limit=True)
    full_by_history = {n.history: n for n in full.nodes}
    leaves = 0
    for n in cut.nodes:
        m = full_by_history[n.history]
        assert m.contrib == n.contrib and m.board == n.board
        if n.kind == LEAF:
            leaves += 1
            assert m.kind == DECISION and len(m.board) == 5 and cut.nodes[n.parent].kind == CHANCE_NODE
        else:
            assert m.kind == n.kind
            if n.kind == DECISION:
                assert len(n.board) == 4
    expected_leaves = sum(1 for m in full.nodes if m.kind == DECISION and len(m.board) == 5
                          and full.nodes[m.parent].kind == CHANCE_NODE)
    assert leaves == expected_leaves > 0
    # river chance nodes deal the 48 cards off the turn board; an all-in call runs out to showdowns
    chance = [n for n in cut.nodes if n.kind == CHANCE_NODE]
    assert chance and all(len(n.actions) == 48 for n in chance)
    assert any(all(cut.nodes[c].kind == SHOWDOWN_NODE for c in n.children) for n in chance)
    # flop: the turn chance nodes deal 49 cards, leaves sit on 4-card boards
    flop = state_from_matchstate(game, "MATCHSTATE:0:0:r200c/:5d5c|/8dAs8s")
    ftree = build_public_tree(game, flop, bet_sizing={1: [1.0]}, depth_limit=True)
    assert {len(ftree.nodes[i].board) for i in ftree.leaf_nodes} == {4}
    assert all(len(n.actions) == 49 for n in ftree.nodes if n.kind == CHANCE_NODE and len(n.board) == 3)


def test_bad_input_gives_game_error():
    with pytest.raises(GameError, match="limit"):
        public_game_for(load("holdem(definition=holdem.limit.2p.reverse_blinds)"))
    with pytest.raises(GameError, match="heads-up only"):
        public_game_for(load("holdem(definition=holdem.nolimit.3p)"))
    with pytest.raises(GameError, match="heads-up only"):
        HoldemPublicGame(load("holdem(definition=holdem.nolimit.6p)"))
    with pytest.raises(GameError, match="wrapped game"):
        HoldemPublicGame(load("holdem_abstract"))
    game = load("holdem")
    with pytest.raises(GameError, match="preflop"):
        build_public_tree(game, state_from_matchstate(game, "MATCHSTATE:0:0:r300:5d5c|"))
    with pytest.raises(GameError, match="preflop"):
        build_public_tree(game, game.new_initial_state())
    waiting = game.new_initial_state()
    for a in (0, 1, 2, 3, raise_action(300), 1):   # hole cards, raise to 300, call: the flop is to come
        waiting.apply_action(a)
    assert waiting.current_player() == CHANCE and waiting.round == 1
    with pytest.raises(GameError, match="flop is not dealt"):
        build_public_tree(game, waiting)
    with pytest.raises(GameError, match="needs a protocol state"):
        build_public_tree(game)
    with pytest.raises(GameError, match="terminal"):
        build_public_tree(game, state_from_matchstate(game, "MATCHSTATE:0:0:r300c/r600f:5d5c|/8dAs8s"))
    with pytest.raises(GameError, match="belongs to"):
        HoldemPublicGame(load("holdem(stacks=500;500)")).root(
            state_from_matchstate(game, "MATCHSTATE:0:0:r300c/:5d5c|/8dAs8s"))
    for bad in ({}, {0: [1.0]}, {1: [-0.5]}, {1: ["big"]}, "1.0", []):
        with pytest.raises(GameError, match="bet sizing"):
            normalize_bet_sizing(bad)
    with pytest.raises(GameError, match="bet_sizing must be None"):
        public_game_for(load("leduc_nolimit"), {1: [1.0]})
    from cfrkit.agents.deepstack import DeepStackAgent

    with pytest.raises(GameError, match="Leduc family"):
        DeepStackAgent("holdem", 0)
    assert normalize_bet_sizing({1: [1.0, 0.5], 3: [2.0]}) == ((0.5, 1.0), (0.5, 1.0), (2.0,))
