"""Compiled range solver on flop trees (two chance levels) and postflop-solver-style spots.

* bet sizes parse as postflop-solver reads them, and a spot built by PostflopPublicGame offers the
  actions postflop-solver's documented example shows (``Check, Bet(120), Bet(216), AllIn(900)``, then
  ``Fold, Call, Raise(300)``); a river spot with one pot-size-fraction builds the same tree as the
  hand-built RiverPublicGame;
* on a reduced-deck flop tree the first iteration of FlatRangeSolver equals RangeSolver's (regrets of
  every hand not blocked by the node's board, average strategy), and the kernel's evaluation
  (exploitability, root values) of a later profile equals RangeSolver's.  Later iterates are not
  compared: after one iteration some hands are exactly indifferent (regrets 0 vs +-1e-15 from
  rounding) and the two implementations' regret matching parts ways there (see test_turn_flat_solver);
* the torch path (RangeSolver on torch: CPU here, CUDA when present) gives the compiled kernel's first
  iteration on the same flop tree;
* the exploitability of a flop-tree profile equals a brute force over the protocol hold'em game
  (concrete hole cards, the protocol's chance probabilities and returns).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from cfrkit.cards.encoding import parse_cards
from cfrkit.cards.equity import board_strengths
from cfrkit.cards.hands import HOLE_PAIRS
from cfrkit.games import load
from cfrkit.games.base import GameError
from cfrkit.games.holdem.matchstate import state_from_matchstate
from cfrkit.solvers.public.bet_sizing import BetSize, BetSizeError, parse_bet_sizes
from cfrkit.solvers.public.flat_range_cfr import FlatRangeSolver
from cfrkit.solvers.public.games import RiverPublicGame
from cfrkit.solvers.public.postflop_game import PostflopPublicGame, action_tree_counts
from cfrkit.solvers.public.tree import CHANCE_NODE, RangeSolver, build_public_tree

DECK = parse_cards("AsKsQsJsTs9sAhKhQhJh")


def test_bet_sizes_parse_as_postflop_solver_reads_them():
    assert parse_bet_sizes("50c, e, a,") == (BetSize("chips", 50), BetSize("geometric", math.inf), BetSize("allin"))
    assert parse_bet_sizes("25%, 2.5x, e200%", raise_sizes=True) == (
        BetSize("pot", 0.25), BetSize("prev_bet", 2.5), BetSize("geometric", 2.0))
    assert parse_bet_sizes("112.5%, 3e, 20c3r", True) == (BetSize("pot", 1.125), BetSize("chips", 20, cap=3),
                                                         BetSize("geometric", math.inf, streets=3))
    for bad in ["", "0", "1.23", "%", "+42%", "-30%", "x", "1x", "c", "12.3c", "10c10", "c3r", "0e", "2.7e",
                "3e7", "bet", "1a", "a1", ","]:
        with pytest.raises(BetSizeError):
            parse_bet_sizes(bad, raise_sizes=True) if bad else parse_bet_size_single(bad)
    with pytest.raises(BetSizeError):
        parse_bet_sizes("2.5x")  # multiples of the previous bet are raises only


def parse_bet_size_single(text):
    from cfrkit.solvers.public.bet_sizing import parse_bet_size

    return parse_bet_size(text, True)


def test_spot_offers_postflop_solvers_documented_actions():
    sizes = {"turn": ("60%, e, a", "2.5x"), "river": ("60%, e, a", "2.5x")}
    g = PostflopPublicGame("Td9d6hQc", 200, 900, sizes, add_allin_threshold=1.5, force_allin_threshold=0.15,
                           merging_threshold=0.1)
    root = g.root()
    assert g.bet_amounts(root) == [("check", 0), ("bet", 120), ("bet", 216), ("allin", 900)]
    assert g.bet_amounts(g.child(root, 3 + 120)) == [("fold", 0), ("call", 0), ("raise", 300)]
    counts = action_tree_counts(g)
    assert counts[0] == 0 and counts[1] > 0 and counts[2] > counts[1]


def test_river_spot_builds_the_same_tree_as_the_river_game():
    board = parse_cards("AsJd8h5c2d")
    mine = build_public_tree(PostflopPublicGame(board, 1000, 2000, "50%, a"))
    ref = build_public_tree(RiverPublicGame(board, board_strengths(board), 1000, 2000, [(0.5,)], min_bet=1,
                                            max_bets=100))
    assert len(mine) == len(ref) and mine.counts() == ref.counts()
    for a, b in zip(mine.nodes, ref.nodes):
        assert (a.kind, a.contrib, a.player, a.folder, len(a.children)) == (b.kind, b.contrib, b.player, b.folder,
                                                                            len(b.children))


@pytest.fixture(scope="module")
def flop():
    g = PostflopPublicGame("AsKhTs", 100, 300, "50%, a", deck=DECK)
    tree = build_public_tree(g)
    assert tree.counts()[CHANCE_NODE] > 20 and action_tree_counts(g)[0] > 0
    ranges = (np.random.default_rng(1).random((2, 1326)) + 0.05) * g.hand_mask(g.board_cards)
    return g, tree, ranges


@pytest.mark.parametrize("algorithm", ["dcfr"])  # cfr+ shares every code path but the update, checked on turn trees
def test_flop_first_iteration_and_evaluation_equal_numpy_solver(flop, algorithm):
    g, tree, ranges = flop
    ref = RangeSolver(tree, ranges=ranges, algorithm=algorithm)
    fast = FlatRangeSolver(tree, ranges=ranges, algorithm=algorithm)
    ref.run(1)
    fast.run(1)
    live_rows = 0
    for node, slot in fast.flat.slot_of.items():
        A = fast.flat.actions_of[node]
        live = g.hand_mask(tree.nodes[node].board)[fast.hands] > 0
        np.testing.assert_allclose(fast.regrets[slot:slot + A][:, live], ref.regrets[node][:, 0][:, fast.hands][:, live],
                                   rtol=1e-9, atol=1e-9)
        live_rows += live.sum()
    assert np.count_nonzero(fast.regrets) > 0.2 * fast.regrets.size and live_rows > 0
    assert fast.exploitability() == pytest.approx(float(ref.exploitability()[0]), rel=1e-9)
    # a later, far from uniform profile: the kernel evaluates it as RangeSolver does
    ref.run(3)
    profile = ref.to_numpy_strategy()
    assert fast.exploitability(profile) == pytest.approx(float(ref.exploitability()[0]), rel=1e-9)
    np.testing.assert_allclose(fast.root_values(profile), ref.root_values()[0], rtol=1e-9)


def test_torch_path_first_iteration_equals_compiled_solver(flop):
    """The torch path (RangeSolver on torch, CPU here, CUDA when present) and the compiled kernel agree on a flop tree."""
    pytest.importorskip("torch")
    g, tree, ranges = flop
    gpu_path = RangeSolver(tree, ranges=ranges, algorithm="dcfr", backend="torch", device="cpu")
    fast = FlatRangeSolver(tree, ranges=ranges, algorithm="dcfr")
    gpu_path.run(1)
    fast.run(1)
    regrets = {n: gpu_path.be.to_numpy(r) for n, r in gpu_path.regrets.items()}
    compared = 0
    for node, slot in fast.flat.slot_of.items():
        A = fast.flat.actions_of[node]
        live = g.hand_mask(tree.nodes[node].board)[fast.hands] > 0
        np.testing.assert_allclose(fast.regrets[slot:slot + A][:, live], regrets[node][:, 0][:, fast.hands][:, live],
                                   rtol=1e-9, atol=1e-9)
        compared += live.sum()
    assert compared > 0
    assert fast.exploitability() == pytest.approx(float(gpu_path.exploitability()[0]), rel=1e-9)


def test_flop_solve_converges(flop):
    g, tree, ranges = flop
    fast = FlatRangeSolver(tree, ranges=ranges)
    first = fast.exploitability()
    final = fast.solve(0.01, check_every=10, max_iterations=300)
    assert final <= 0.01 * fast.pot < first


@pytest.mark.slow  # the brute force walks 2352 run-outs per hand pair
def test_flop_exploitability_equals_protocol_brute_force():
    from test_holdem_public_tree_solve import brute_force

    game = load("holdem(stacks=1200;1200)")
    state = state_from_matchstate(game, "MATCHSTATE:0:0:r1150c/:5d5c|/8dAs8s")
    tree = build_public_tree(game, state, bet_sizing={1: [1.0]})
    assert any(len(n.board) == 4 and n.kind == CHANCE_NODE for n in tree.nodes)
    rng = np.random.default_rng(3)
    pool = [48, 49, 50, 44, 45, 36, 37, 12]
    free = [h for h in range(1326) if set(HOLE_PAIRS[h].tolist()) <= set(pool)]
    ranges = np.zeros((2, 1326))
    for p in range(2):
        idx = rng.choice(free, 2, replace=False)
        ranges[p, idx] = rng.random(2) + 0.1
    fast = FlatRangeSolver(tree, ranges=ranges)
    fast.run(5)
    strategies = fast.average_strategy()   # a non-equilibrium profile (the kernel's own evaluation is checked)
    total_br = 0.0
    for p in (0, 1):
        for h, (_, brv) in brute_force(tree, state, strategies, ranges, p).items():
            total_br += ranges[p, h] * brv
    z = sum(ranges[0, a] * ranges[1, b] for a in np.nonzero(ranges[0])[0] for b in np.nonzero(ranges[1])[0]
            if not set(HOLE_PAIRS[a].tolist()) & set(HOLE_PAIRS[b].tolist()))
    assert fast.exploitability(strategies) == pytest.approx(total_br / 2 / z, rel=1e-9)
    assert total_br / 2 / z > 0.01


def test_bad_spots_raise_game_errors():
    with pytest.raises(GameError):
        PostflopPublicGame("AsKh", 100, 300)
    with pytest.raises(GameError):
        PostflopPublicGame("AsKhTs", 0, 300)
    with pytest.raises(GameError):
        PostflopPublicGame("AsKhTs", 100, 300, "50 percent")


def test_postflop_solver_weighting():
    """dcfr-postflop: the strategy sum after iterations 1 and 2 (counted 0 and 1: discount 0) is exactly the
    strategy played in that iteration, unweighted by reach; the solve converges."""
    board = parse_cards("AsJd8h5c2d")
    tree = build_public_tree(PostflopPublicGame(board, 1000, 2000, "50%, 100%, a"))
    fast = FlatRangeSolver(tree, algorithm="dcfr-postflop")
    fast.run(1)
    np.testing.assert_allclose(fast.strategy_sum, 1.0 / np.repeat(
        [fast.flat.actions_of[n] for n in sorted(fast.flat.slot_of, key=fast.flat.slot_of.get)],
        [fast.flat.actions_of[n] for n in sorted(fast.flat.slot_of, key=fast.flat.slot_of.get)])[:, None] + 0 * fast.strategy_sum)
    played = fast.sigma.copy()   # regret matching of the regrets after the first iteration
    fast.run(1)
    np.testing.assert_allclose(fast.strategy_sum, played, rtol=0, atol=1e-15)
    assert fast.solve(0.003, check_every=10, max_iterations=400) <= 0.003 * fast.pot
    with pytest.raises(ValueError, match="dcfr-postflop"):
        FlatRangeSolver(tree, algorithm="pio")


def test_float32_storage_follows_float64():
    """dtype='float32' (range_cfr32): half the bytes; iterates and exploitability follow float64 up to rounding."""
    board = parse_cards("AsJd8h5c2d")
    tree = build_public_tree(PostflopPublicGame(board, 1000, 2000, "50%, 100%, a"))
    f64, f32 = FlatRangeSolver(tree), FlatRangeSolver(tree, dtype="float32")
    assert f32.regrets.dtype == np.float32 and f32.regrets.nbytes * 2 == f64.regrets.nbytes
    f64.run(20)
    f32.run(20)
    scale = np.abs(f64.regrets).max()
    assert np.abs(f32.regrets - f64.regrets).max() < 1e-3 * scale
    assert f32.exploitability() == pytest.approx(f64.exploitability(), rel=1e-3)
    assert f32.solve(0.003, max_iterations=300) <= 0.003 * f32.pot


def test_float32_flop_tree(flop):
    g, tree, ranges = flop
    f64 = FlatRangeSolver(tree, ranges=ranges)
    f32 = FlatRangeSolver(tree, ranges=ranges, dtype="float32")
    f64.run(1)
    f32.run(1)
    assert f32.exploitability() == pytest.approx(f64.exploitability(), rel=1e-5)


def test_locking_one_player_to_an_equilibrium_reproduces_it():
    """Node locking: lock every decision of player 0 to an (approximate) equilibrium strategy and solve the
    rest from scratch: player 0's average is exactly the locked strategy and player 1 earns the game value
    (its best-response value against the locked strategy, within the equilibrium's exploitability).
    Player 1's strategy itself need not be an equilibrium one: any mix of its indifferent actions is a best
    response, so the profile's exploitability is not checked."""
    board = parse_cards("AsJd8h5c2d")
    tree = build_public_tree(PostflopPublicGame(board, 1000, 2000, "50%, 100%, a"))
    eq = FlatRangeSolver(tree)
    eps = eq.solve(0.0005, max_iterations=1000)
    assert eps <= 0.0005 * eq.pot
    strategy = eq.average_strategy()
    value = eq.root_values()[1]
    locked = FlatRangeSolver(tree)
    p0 = [n for n in strategy if tree.nodes[n].player == 0]
    for n in p0:
        locked.lock(n, strategy[n])
    locked.run(200)
    avg = locked.average_strategy()
    for n in p0:
        np.testing.assert_allclose(avg[n][0][:, locked.hands], strategy[n][0][:, locked.hands], atol=1e-9)
    got = locked.root_values()[1]
    assert value - 0.1 * eps <= got <= value + 2 * eps
    # without the lock, 200 iterations from scratch are far from that value's precision on player 0's side
    free = FlatRangeSolver(tree)
    free.run(5)
    assert free.exploitability() > 20 * eps
    with pytest.raises(ValueError, match="sum to 1"):
        locked.lock(p0[0], 2 * strategy[p0[0]])


def test_two_threads_give_the_same_iterates(flop):
    """threads=2 runs each tree level's nodes in parallel; every node's arithmetic is unchanged, so the
    iterates are bitwise those of one thread (flop tree: two chance levels, many nodes per level)."""
    g, tree, ranges = flop
    one = FlatRangeSolver(tree, ranges=ranges, threads=1)
    two = FlatRangeSolver(tree, ranges=ranges, threads=2)
    one.run(3)
    two.run(3)
    np.testing.assert_array_equal(two.regrets, one.regrets)
    np.testing.assert_array_equal(two.strategy_sum, one.strategy_sum)
    with pytest.raises(ValueError, match="threads"):
        FlatRangeSolver(tree, threads=0)
