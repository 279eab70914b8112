"""BoardRangeSolver: hand spaces per board, depth-first passes, threads over dealt cards, suit isomorphism.

* on a river spot and a reduced-deck flop tree its iterates equal FlatRangeSolver's and the numpy
  RangeSolver's (random ranges: no exact ties between actions, where implementations that round
  differently part ways; see test_range_solver_flop), and its exploitability equals theirs;
* its exploitability equals the evaluation of its average strategy by FlatRangeSolver (an independent
  layout, itself checked against a brute force over the protocol game) and, in a slow test, the brute force;
* with two suits interchangeable, the isomorphic solve (one subtree per pair of isomorphic cards) gives
  the iterates of the full solve; 1 and 2 threads give the same iterates bitwise.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from cfrkit.cards.encoding import parse_cards
from cfrkit.cards.hands import HOLE_PAIRS
from cfrkit.games import load
from cfrkit.games.base import GameError
from cfrkit.games.holdem.matchstate import state_from_matchstate
from cfrkit.solvers.public.board_range_cfr import BoardLayout, BoardRangeSolver
from cfrkit.solvers.public.flat_range_cfr import FlatRangeSolver
from cfrkit.solvers.public.postflop_game import PostflopPublicGame
from cfrkit.solvers.public.tree import CHANCE_NODE, RangeSolver, build_public_tree

DECK = parse_cards("AsKsQsJsTs9sAhKhQhJh")
# clubs and diamonds interchangeable on an As Kh Ts flop
ISO_DECK = parse_cards("AsKhTs9sQhAcKcQcJcAdKdQdJd")


def live_diff(tree, pg, a, b):
    """Largest difference of two strategy dicts over the hands live on each node's board."""
    out = 0.0
    for k in a:
        m = pg.hand_mask(tree.nodes[k].board) > 0
        out = max(out, float(np.abs(a[k][..., m] - b[k][..., m]).max()))
    return out


@pytest.fixture(scope="module")
def river():
    board = parse_cards("AsJd8h5c2d")
    g = PostflopPublicGame(board, 1000, 2000, "50%, 100%, a")
    ranges = (np.random.default_rng(4).random((2, 1326)) + 0.05) * g.hand_mask(board)
    return g, build_public_tree(g), ranges


@pytest.fixture(scope="module")
def flop():
    g = PostflopPublicGame("AsKhTs", 100, 300, "50%, a", deck=DECK)
    tree = build_public_tree(g)
    ranges = (np.random.default_rng(1).random((2, 1326)) + 0.05) * g.hand_mask(g.board_cards)
    return g, tree, ranges


@pytest.mark.parametrize("algorithm", ["dcfr", "cfr+", "dcfr-postflop"])
def test_river_iterates_equal_flat_solver(river, algorithm):
    g, tree, ranges = river
    ref = FlatRangeSolver(tree, ranges=ranges, algorithm=algorithm)
    fast = BoardRangeSolver(tree, ranges=ranges, algorithm=algorithm, dtype="float64")
    # postflop-solver's weighting wipes positive regrets in iteration 2 (discount 0): the regrets left are the
    # instantaneous ones, exactly 0 (+-rounding) where two bet sizes are worth the same, so only iteration 1
    # is comparable; its convergence is checked instead
    steps = 1 if algorithm == "dcfr-postflop" else 6
    ref.run(steps)
    fast.run(steps)
    assert live_diff(tree, g, ref.average_strategy(), fast.average_strategy()) < 1e-8
    sigma, current = ref.sigma, {}
    for node, slot in ref.flat.slot_of.items():
        A = ref.flat.actions_of[node]
        current[node] = np.zeros((1, A, 1326))
        current[node][0][:, ref.hands] = sigma[slot:slot + A]
    assert live_diff(tree, g, current, fast.current_strategy()) < 1e-8
    assert fast.exploitability() == pytest.approx(ref.exploitability(), rel=1e-9)
    if algorithm == "dcfr-postflop":
        ref.solve(0.001, check_every=5, max_iterations=400)
        fast.solve(0.001, check_every=5, max_iterations=400)
        assert abs(fast.iterations - ref.iterations) <= 0.15 * ref.iterations


@pytest.mark.parametrize("bets", ["a", "25%, 50%, 100%, 150%, a"])
def test_river_iterates_equal_flat_solver_any_action_count(bets):
    """The board kernel matches regrets and sums a decision's value in one pass per hand for 2-4 actions and
    per action for more (branch range-speed9); with 2 actions (check / all-in) and with 6 (four bets and all-in)
    its iterates equal the flat kernel's, an independent implementation, as with the benchmark's 4."""
    board = parse_cards("AsJd8h5c2d")
    g = PostflopPublicGame(board, 1000, 2000, bets)
    tree = build_public_tree(g)
    ranges = (np.random.default_rng(7).random((2, 1326)) + 0.05) * g.hand_mask(board)
    widths = {len(tree.nodes[k].children) for k in range(len(tree)) if tree.nodes[k].kind == "decision"}
    assert (max(widths) == 2) if bets == "a" else (max(widths) == 6 and 3 in widths)
    ref = FlatRangeSolver(tree, ranges=ranges, algorithm="dcfr")
    fast = BoardRangeSolver(tree, ranges=ranges, algorithm="dcfr", dtype="float64")
    ref.run(6)
    fast.run(6)
    assert live_diff(tree, g, ref.average_strategy(), fast.average_strategy()) < 1e-8
    assert fast.exploitability() == pytest.approx(ref.exploitability(), rel=1e-9)


def test_flop_iterates_equal_numpy_and_flat_solvers(flop):
    """First iteration equal (regrets of every live hand, average strategy; the current one is regret matching
    of regrets that are exactly 0 for some hands, +-rounding in each implementation); later iterates part
    ways at exact ties between actions (regrets 0 vs +-1e-15: the flat and numpy solvers part ways there too,
    see test_range_solver_flop), so later profiles are compared by evaluating them."""
    g, tree, ranges = flop
    ref = RangeSolver(tree, ranges=ranges, algorithm="dcfr")
    flat = FlatRangeSolver(tree, ranges=ranges, algorithm="dcfr")
    fast = BoardRangeSolver(tree, ranges=ranges, algorithm="dcfr", dtype="float64")
    assert not fast.layout.copy_of  # no isomorphic cards in this deck
    ref.run(1)
    flat.run(1)
    fast.run(1)
    avg = fast.average_strategy()
    assert live_diff(tree, g, ref.to_numpy_strategy(ref.average_strategy()), avg) < 1e-9
    for node, kn in fast.layout.node_of.items():
        pairs = fast.layout.space_pairs[fast.layout.node_space[kn]]
        np.testing.assert_allclose(fast._block(kn, fast.regrets), ref.regrets[node][:, 0][:, pairs], rtol=1e-9,
                                   atol=1e-9)
    assert fast.exploitability() == pytest.approx(float(ref.exploitability()[0]), rel=1e-9)
    # a later profile: the kernel's best responses agree with both solvers' evaluation of its exported average
    fast.run(9)
    profile = fast.average_strategy()
    assert fast.exploitability() == pytest.approx(flat.exploitability(profile), rel=1e-9)
    assert fast.exploitability() == pytest.approx(float(ref.exploitability(ref.from_numpy_strategy(profile))[0]),
                                                  rel=1e-9)


def test_flop_solve_converges_float32(flop):
    g, tree, ranges = flop
    fast = BoardRangeSolver(tree, ranges=ranges)
    first = fast.exploitability()
    final = fast.solve(0.003, check_every=10, max_iterations=400)
    assert fast.regrets.dtype == np.float32
    assert final <= 0.003 * fast.pot < first
    assert final == pytest.approx(FlatRangeSolver(tree, ranges=ranges).exploitability(fast.average_strategy()),
                                  rel=1e-4)


def test_16bit_storage_converges_like_float32(flop):
    g, tree, ranges = flop
    f32 = BoardRangeSolver(tree, ranges=ranges)
    c16 = BoardRangeSolver(tree, ranges=ranges, compression=True)
    assert c16.regrets.dtype == np.int16 and c16.strategy_sum.dtype == np.uint16
    assert c16.regrets.nbytes * 2 == f32.regrets.nbytes
    f32.run(1)
    c16.run(1)
    # after one iteration the decoded regrets are the float32 ones up to a few 16-bit steps (1/32767) of each\n    # node's block (the second player's pass sees the first player's rounded regrets)
    for kn in list(c16.layout.node_of.values())[::7]:
        r32, r16 = f32._block(kn, f32.regrets), c16._block(kn, c16.regrets)
        assert np.abs(r32 - r16).max() <= np.abs(r32).max() * 1e-3 + 1e-9
    f32.run(60)
    c16.run(60)
    e32, e16 = f32.exploitability(), c16.exploitability()
    assert e16 == pytest.approx(e32, rel=0.1)
    assert e16 == pytest.approx(FlatRangeSolver(tree, ranges=ranges).exploitability(c16.average_strategy()), rel=1e-4)
    with pytest.raises(ValueError, match="float32"):
        BoardRangeSolver(tree, ranges=ranges, dtype="float64", compression=True)


def iso_spot():
    g = PostflopPublicGame("AsKhTs", 100, 300, "50%, a", deck=ISO_DECK)
    tree = build_public_tree(g)
    r = np.random.default_rng(7).random((2, 1326)) * g.hand_mask(g.board_cards)
    layout = BoardLayout.of(tree, True)
    assert layout.swaps == [(0, 1)]  # clubs <-> diamonds
    ranges = (r + r[:, layout.pair_perm((0, 1))]) / 2
    return g, tree, ranges


def test_isomorphic_solve_equals_full_solve():
    """The isomorphic solve's first iterate equals the full solve's (every node, twins' nodes read back with
    the suits swapped); later ones part ways only at exact ties (as any two summation orders do), so the
    profiles are then compared by evaluation and convergence."""
    g, tree, ranges = iso_spot()
    iso = BoardRangeSolver(tree, ranges=ranges, dtype="float64")
    full = BoardRangeSolver(tree, ranges=ranges, dtype="float64", isomorphism=False)
    assert iso.layout.swaps and iso.layout.copy_of and not full.layout.swaps
    assert iso.layout.num_entries < 0.8 * full.layout.num_entries
    iso.run(1)
    full.run(1)
    assert live_diff(tree, g, iso.average_strategy(), full.average_strategy()) < 1e-9
    assert iso.exploitability() == pytest.approx(full.exploitability(), rel=1e-9)
    iso.run(1)
    full.run(1)
    assert iso.exploitability() == pytest.approx(full.exploitability(), rel=1e-9)
    iso.run(18)
    full.run(18)
    flat = FlatRangeSolver(tree, ranges=ranges)
    # the kernel's best response reads a twin's values off its canonical card, exact while the strategies above
    # the chance node are suit-symmetric; they are up to rounding of the two summation orders
    assert iso.exploitability() == pytest.approx(flat.exploitability(iso.average_strategy()), rel=1e-4)
    assert iso.exploitability() == pytest.approx(full.exploitability(), rel=0.25)
    assert iso.exploitability() < 0.1 * flat.exploitability()  # flat: never run, uniform strategy
    # asymmetric ranges cannot share subtrees
    skew = ranges.copy()
    skew[0, np.nonzero(skew[0])[0][0]] *= 2
    assert BoardRangeSolver(tree, ranges=skew).layout.swaps == []
    with pytest.raises(ValueError, match="symmetric"):
        BoardRangeSolver(tree, ranges=skew, isomorphism=True)


def test_two_threads_give_the_same_iterates():
    g, tree, ranges = iso_spot()
    one = BoardRangeSolver(tree, ranges=ranges, threads=1)
    two = BoardRangeSolver(tree, ranges=ranges, threads=2)
    one.run(5)
    two.run(5)
    assert np.array_equal(one.regrets, two.regrets) and np.array_equal(one.strategy_sum, two.strategy_sum)
    assert one.exploitability() == two.exploitability()


@pytest.mark.parametrize("dtype,compression,threads", [("float32", True, 1), ("float64", False, 2)])
def test_batched_showdowns_equal_single_sweeps(flop, dtype, compression, threads):
    """River subtrees sweep their showdowns four at a time (one SIMD lane each) and keep the opponent's
    strategies formed for them; with the batches switched off in the layout (every showdown swept where the
    walk reaches it, every strategy formed there) the iterates and the exploitability are the same bitwise."""
    g, tree, ranges = flop
    on = BoardRangeSolver(tree, ranges=ranges, dtype=dtype, compression=compression, threads=threads)
    off = BoardRangeSolver(tree, ranges=ranges, dtype=dtype, compression=compression, threads=threads)
    lay = on.layout
    assert lay.sd_count.max() >= 2 and np.all(lay.sd_count[lay.sd_count > 0] >= 2)
    batched = lay.sd_slot >= 0
    assert np.all(lay.node_type[batched] == 2) and np.all(lay.node_type[lay.dec_slot >= 0] == 0)
    assert batched.sum() > 0.5 * (lay.node_type == 2).sum()
    unbatched = lay.layout[:17] + (np.full_like(lay.sd_slot, -1), np.zeros_like(lay.sd_count),
                                   np.full_like(lay.dec_slot, -1))

    class Off:  # the same layout object, batches switched off in the tuple the kernel takes
        def __getattr__(self, name):
            return unbatched if name == "layout" else getattr(lay, name)

    off.layout = Off()
    for k in range(3):
        on.run(3)
        off.run(3)
        assert np.array_equal(on.regrets, off.regrets) and np.array_equal(on.strategy_sum, off.strategy_sum)
        if compression:
            assert np.array_equal(on.scales, off.scales)
    assert on.exploitability() == off.exploitability()



def _batches_off(solver):
    """Switch ``solver``'s showdown and fold batches off in the layout tuple its kernel takes (every showdown swept
    and every fold summed where the walk reaches it, every strategy formed there)."""
    lay = solver.layout
    unbatched = lay.layout[:17] + (np.full_like(lay.sd_slot, -1), np.zeros_like(lay.sd_count),
                                   np.full_like(lay.dec_slot, -1))

    class Off:
        def __getattr__(self, name):
            return unbatched if name == "layout" else getattr(lay, name)

    solver.layout = Off()
    return solver


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_eight_lane_sweeps_and_fold_batches_equal_single_sweeps(river, dtype):
    """On the river spot (15 showdowns and 7 folds of each player below the root) the showdowns are swept eight
    at a time (AVX-512: rcb_showdown8; two four-lane sweeps on the AVX2 build) and the opponent's folds summed per
    card eight at a time: the iterates and the exploitability equal those of single sweeps and sums bitwise, on
    the AVX-512 and the AVX2 builds alike."""
    from cfrkit._kernels import range_cfr_board as kern64
    from cfrkit._kernels import range_cfr_board32 as kern32

    kern = kern32 if dtype == "float32" else kern64
    g, tree, ranges = river
    probe = BoardRangeSolver(tree, ranges=ranges, dtype=dtype)
    lay = probe.layout
    assert lay.sd_count.max() > 4  # an eight-lane sweep
    folds = np.flatnonzero(lay.node_type == 1)
    assert len(folds) >= 2 * kern.FOLD_BATCH_MIN  # both players' folds batched
    runs = []
    before = kern.simd_level_16bit(2)
    try:
        for level, batched in ((2, True), (1, True), (2, False)):
            kern.simd_level_16bit(level)
            s = BoardRangeSolver(tree, ranges=ranges, dtype=dtype, threads=1)
            if not batched:
                _batches_off(s)
            s.run(7)
            runs.append((s.regrets.copy(), s.strategy_sum.copy(), s.exploitability()))
    finally:
        kern.simd_level_16bit(before)
    for reg, ssum, expl in runs[1:]:
        assert np.array_equal(reg, runs[0][0]) and np.array_equal(ssum, runs[0][1]) and expl == runs[0][2]

def test_bad_trees_and_arguments():
    g = PostflopPublicGame("AsKhTs", 100, 300, "50%, a", deck=DECK)
    with pytest.raises(GameError):
        BoardRangeSolver(build_public_tree(g, depth_limit=True))
    tree = build_public_tree(g)
    with pytest.raises(ValueError):
        BoardRangeSolver(tree, threads=0)
    with pytest.raises(ValueError):
        BoardRangeSolver(tree, algorithm="pio")
    with pytest.raises(ValueError):
        BoardRangeSolver(tree, ranges=np.ones((2, 5)))


@pytest.mark.slow  # the brute force walks 2352 run-outs per hand pair (minutes); short form: the flat solver's
@pytest.mark.skipif(not os.environ.get("CFRKIT_LONG"), reason="long check: set CFRKIT_LONG=1")  # evaluation above
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
    fast = BoardRangeSolver(tree, ranges=ranges, dtype="float64")
    fast.run(5)
    strategies = fast.average_strategy()
    total_br = 0.0
    for p in (0, 1):
        for h, (_, brv) in brute_force(tree, state, strategies, ranges, p).items():
            total_br += ranges[p, h] * brv
    z = sum(ranges[0, a] * ranges[1, b] for a in np.nonzero(ranges[0])[0] for b in np.nonzero(ranges[1])[0]
            if not set(HOLE_PAIRS[a].tolist()) & set(HOLE_PAIRS[b].tolist()))
    assert fast.exploitability() == pytest.approx(total_br / 2 / z, rel=1e-9)
    assert total_br / 2 / z > 0.01


def test_16bit_stochastic_rounding_is_unbiased_and_stays_in_range():
    """The 16-bit encoding: key 0 rounds to nearest; other keys round stochastically, so the mean of the
    decoded values over many keys is the value itself (to nearest it would be the nearest step, off by up to
    half a step every time); the block's largest magnitude never overflows its code."""
    kern = pytest.importorskip("cfrkit._kernels.range_cfr_board32")
    rng = np.random.default_rng(3)
    x = rng.normal(size=257).astype(np.float32) * 3
    x[5] = -np.abs(x).max() * 1.5  # the scale, negative
    x[9] = 1.0e-5 * abs(x[5])  # a third of a regret step (1/32767 of the scale): 0 to nearest (1/32767 of the scale)
    q, scale = kern.quantize_16bit(x, True, 0)
    assert scale == pytest.approx(abs(x[5])) and q[5] == -32767 and q[9] == 0
    assert np.array_equal(q, np.round(x.astype(np.float64) * 32767 / scale).astype(np.int16))
    mean = np.mean([kern.quantize_16bit(x, True, k)[0].astype(np.float64) for k in range(1, 4001)], axis=0)
    assert np.abs(mean - x * 32767 / scale).max() < 0.05  # 4000 draws: standard error <= 0.5 / 63
    assert mean[9] == pytest.approx(x[9] * 32767 / scale, abs=0.05) and mean[9] > 0.25
    y = np.abs(x)
    y[7] = 0.0
    for k in range(1, 200):
        qu, su = kern.quantize_16bit(y, False, k)
        assert su == y.max() and qu.max() == 65535 and qu[7] == 0
        qs, _ = kern.quantize_16bit(x, True, k)
        assert qs[5] == -32767 and np.abs(qs.astype(np.int32)).max() <= 32767
    qu0, _ = kern.quantize_16bit(-y, False, 0)
    assert not qu0.any()  # negative strategy sums are stored as 0


def test_16bit_kernel_builds_give_the_same_bits(flop):
    """The 16-bit storage's kernels (matching on the codes, the update with its block maxima, stochastic rounding)
    are compiled for AVX-512, AVX2 and the baseline: the same operations without FMA, so every build the CPU can run
    gives the same codes and scales bit for bit."""
    from cfrkit._kernels import range_cfr_board32 as kern

    g, tree, ranges = flop
    runs = []
    before = kern.simd_level_16bit(2)
    try:
        for level in (2, 1, 0):
            kern.simd_level_16bit(level)
            s = BoardRangeSolver(tree, ranges=ranges, compression=True, threads=1)
            s.run(4)
            runs.append((s.regrets.copy(), s.strategy_sum.copy(), s.scales.copy(), s.exploitability()))
    finally:
        kern.simd_level_16bit(before)
    for reg, ssum, scales, expl in runs[1:]:
        assert np.array_equal(reg, runs[0][0]) and np.array_equal(ssum, runs[0][1])
        assert np.array_equal(scales, runs[0][2]) and expl == runs[0][3]
    with pytest.raises(ValueError, match="level"):
        kern.simd_level_16bit(3)


def test_16bit_stochastic_storage_is_reproducible_and_converges(flop):
    """Stochastic rounding is keyed by (iteration, player, node): the same iterates on 1 and 2 threads and on a
    resumed run; and on this flop it ends no worse than rounding to nearest (which drops updates under half
    a step) at the same iteration count."""
    g, tree, ranges = flop
    a = BoardRangeSolver(tree, ranges=ranges, compression=True, threads=1)
    b = BoardRangeSolver(tree, ranges=ranges, compression=True, threads=2)
    a.run(10)
    for _ in range(5):
        b.run(2)
    assert np.array_equal(a.regrets, b.regrets) and np.array_equal(a.strategy_sum, b.strategy_sum)
    assert np.array_equal(a.scales, b.scales)
    near = BoardRangeSolver(tree, ranges=ranges, compression=True, rounding="nearest")
    near.run(10)
    assert not np.array_equal(a.regrets, near.regrets)
    a.run(190)
    near.run(190)
    f32 = BoardRangeSolver(tree, ranges=ranges)
    f32.run(200)
    e_sr, e_near, e32 = a.exploitability(), near.exploitability(), f32.exploitability()
    assert e_sr <= e_near * 1.05 and e_sr == pytest.approx(e32, rel=0.25)
    with pytest.raises(ValueError, match="rounding"):
        BoardRangeSolver(tree, ranges=ranges, compression=True, rounding="up")


def test_allin_run_outs_by_matrix_equal_walked_run_outs(flop):
    """All-in run-outs valued by equity matrix (the default) against the same run-outs walked board by board:
    the first iterate equal (every decision's regrets and strategy sums, 1e-9), the kernel's exploitability of a
    later profile equal to the flat solver's independent evaluation of it, 1 and 2 threads bitwise equal; a tree
    without all-in run-outs cannot ask for them."""
    g, tree, ranges = flop
    walked = BoardRangeSolver(tree, ranges=ranges, dtype="float64", allin_equity=False)
    matrix = BoardRangeSolver(tree, ranges=ranges, dtype="float64")
    assert np.sum(matrix.layout.node_type == 5) >= 2 and not np.any(walked.layout.node_type == 5)
    assert matrix.layout.num_nodes < walked.layout.num_nodes
    walked.run(1)
    matrix.run(1)
    for node, kw in walked.layout.node_of.items():
        km = matrix.layout.node_of[node]
        for src in ("regrets", "strategy_sum"):
            np.testing.assert_allclose(matrix._block(km, getattr(matrix, src)), walked._block(kw, getattr(walked, src)),
                                       rtol=1e-9, atol=1e-9)
    assert matrix.exploitability() == pytest.approx(walked.exploitability(), rel=1e-9)
    matrix.run(9)
    assert matrix.exploitability() == pytest.approx(
        FlatRangeSolver(tree, ranges=ranges).exploitability(matrix.average_strategy()), rel=1e-9)
    two = BoardRangeSolver(tree, ranges=ranges, dtype="float64", threads=2)
    one = BoardRangeSolver(tree, ranges=ranges, dtype="float64", threads=1)
    two.run(4)
    one.run(4)
    assert np.array_equal(one.regrets, two.regrets) and np.array_equal(one.strategy_sum, two.strategy_sum)
    assert one.exploitability() == two.exploitability()
    river = build_public_tree(PostflopPublicGame("AsJd8h5c2d", 1000, 2000, "50%, a"))
    with pytest.raises(ValueError, match="all-in run-out"):
        BoardRangeSolver(river, allin_equity=True)


# Issue 30's flop spot (Qs Jh 2h, pot 200, stack 900, "50%, a" on every street, full ranges, DCFR) on a reduced
# deck: its exploitability (% of the pot) after N iterations as the kernel gave it before the speed work of
# issue 30 (main at bed6dd3).  The run-outs walked board by board keep that arithmetic (equal to 1e-12); valued
# by equity matrix they are equal up to the rounding of the matrix sums, which regret matching turns into
# different (equally good) iterates at exact ties between actions: full ranges have many, and there two
# independent engines (FlatRangeSolver and BoardRangeSolver) part ways by as much after 20 iterations.
FLOP_SPOT = ("QsJh2h", 200, 900, "50%, a")
FLOP_REFERENCE = {
    ("QsJh2hAsKdTc9c8s7h6d5c4s3hAh", 20): {"float32": 10.931911178847818, "float64": 10.787174509509862},
    ("QsJh2hAsKdTc9c8s7h6d5c4s3hAhKcQdJcTd9h8d", 30): {"float32": 6.199902499550117, "float64": 6.190409545308819},
}

# The default engine's (all-in run-outs by equity matrix) figures after N iterations, recorded on main 180fd1f
# before the kernel work of issue 30's branch range-kernel; that work keeps every sum in its order (the same
# iterates bit for bit), so they hold to 1e-12.  A change that reorders sums re-pins them, saying why.
FLOP_REFERENCE_MATRIX = {
    ("QsJh2hAsKdTc9c8s7h6d5c4s3hAh", 20): {"float32": 10.763638418237619, "float64": 10.68360601105349},
}


def _check_flop_spot(deck: str, iterations: int, threads=(1, 2)):
    from cfrkit.solvers.public import SubgameSolver

    tree = build_public_tree(PostflopPublicGame(*FLOP_SPOT, deck=parse_cards(deck)))
    for storage, ref in FLOP_REFERENCE[(deck, iterations)].items():
        walked = BoardRangeSolver(tree, dtype=storage, threads=1, allin_equity=False)
        walked.run(iterations)
        assert 100 * walked.exploitability() / walked.pot == pytest.approx(ref, rel=1e-12, abs=0)
        got = []
        for n in (threads if storage == "float32" else threads[:1]):
            front = SubgameSolver(tree, storage=storage, threads=n)   # the default engine: matrix run-outs
            assert front.engine_name == "BoardRangeSolver" and np.any(front.engine.layout.node_type == 5)
            front.run(iterations)
            got.append(front.exploitability_percent())
        assert got == [got[0]] * len(got)   # any thread count: the same iterates
        assert got[0] == pytest.approx(ref, rel=0.05)
        matrix_ref = FLOP_REFERENCE_MATRIX.get((deck, iterations), {}).get(storage)
        if matrix_ref is not None:
            assert got[0] == pytest.approx(matrix_ref, rel=1e-12, abs=0)


# The 16-bit storage (SubgameSolver(storage="16bit"), the default engine, DCFR, stochastic rounding) on the same spot,
# recorded on branch range-speed6 (issue 30), whose fused 16-bit kernels read and write the codes in the matching and
# update loops and round in float32 lanes (the codec before it, rounding in double: 10.850957987004135).  The float32
# pins above are the float32 path's; this one holds the 16-bit path's iterates (any thread count, any of its SIMD
# builds: no FMA, the same operations) to 1e-12.
FLOP_REFERENCE_16BIT = {("QsJh2hAsKdTc9c8s7h6d5c4s3hAh", 20): 10.859210872050603}


def test_flop_spot_16bit_exploitability_after_n_iterations_pinned():
    from cfrkit.solvers.public import SubgameSolver

    (deck, iterations), ref = next(iter(FLOP_REFERENCE_16BIT.items()))
    tree = build_public_tree(PostflopPublicGame(*FLOP_SPOT, deck=parse_cards(deck)))
    got = []
    for n in (1, 2):
        front = SubgameSolver(tree, storage="16bit", algorithm="dcfr", threads=n)
        front.run(iterations)
        got.append(front.exploitability_percent())
    assert got[0] == got[1]
    # 16-bit rounding moves the trajectory a little from float32's (FLOP_REFERENCE_MATRIX: 10.76)
    assert got[0] == pytest.approx(FLOP_REFERENCE_MATRIX[(deck, iterations)]["float32"], rel=0.03)
    assert got[0] == pytest.approx(ref, rel=1e-12, abs=0)


def test_flop_spot_exploitability_after_n_iterations_unchanged():
    """Short form (14 cards, 20 iterations): see FLOP_REFERENCE."""
    _check_flop_spot("QsJh2hAsKdTc9c8s7h6d5c4s3hAh", 20)


@pytest.mark.slow  # 20 cards, 30 iterations: a minute on a loaded machine
@pytest.mark.skipif(not os.environ.get("CFRKIT_LONG"), reason="long check: set CFRKIT_LONG=1")
def test_flop_spot_exploitability_after_n_iterations_unchanged_long():
    _check_flop_spot("QsJh2hAsKdTc9c8s7h6d5c4s3hAhKcQdJcTd9h8d", 30)


def test_allin_matrices_coded_bitwise(flop):
    """The all-in equity matrices the kernel reads as 1- or 2-byte codes (code_matrix) decode to the float
    matrix bit for bit, padding columns to +0.0, in both storage types; one byte per entry for up to 255
    distinct values (rounding residues and -0.0 kept apart), two beyond, an error beyond 65,535."""
    from cfrkit.solvers.public.allin import allin_equity_matrix
    from cfrkit.solvers.public.board_range_cfr import code_matrix

    g, tree, ranges = flop
    for dtype in (np.float32, np.float64):
        s = BoardRangeSolver(tree, ranges=ranges, dtype=dtype)
        ext_off, nodes, group_start, codes, mat_off, width, lut, lut_off, Hp, chunks = s._allin
        lay = s.layout
        assert len(group_start) >= 3 and lut.dtype == dtype
        for gi in range(len(group_start) - 1):
            n = nodes[group_start[gi]]
            pairs = lay.space_pairs[lay.node_space[n]]
            H = len(pairs)
            want = allin_equity_matrix(tree, lay.order[n], pairs, cache=False).astype(dtype)
            w = int(width[gi])
            block = codes[mat_off[gi]:mat_off[gi] + H * Hp * w].view(np.uint8 if w == 1 else np.uint16).reshape(H, Hp)
            got = lut[lut_off[gi] + block.astype(np.int64)]
            assert np.array_equal(got[:, :H].view(np.uint8), want.view(np.uint8))
            assert np.all(got[:, H:].view(np.uint8) == 0)
        assert s.allin_bytes == codes.nbytes + lut.nbytes
    rng = np.random.default_rng(0)
    m = (rng.integers(-44, 45, (40, 40)) / 44).astype(np.float32)
    m[3, 5], m[4, 6] = np.float32(7e-18), np.float32(-0.0)  # residues of k = 0 and a negative zero: own codes
    codes, lut = code_matrix(m, 48)
    assert codes.dtype == np.uint8 and len(lut) == len(np.unique(m.view(np.uint32))) + 1
    assert np.array_equal(lut[codes[:, :40]].view(np.uint32), m.view(np.uint32))
    assert np.all(lut[codes[:, 40:]].view(np.uint32) == 0)
    big = (rng.integers(-1176, 1177, (300, 300)) / 1176).astype(np.float64)
    codes, lut = code_matrix(big, 304)
    assert codes.dtype == np.uint16 and np.array_equal(lut[codes[:, :300]].view(np.uint64), big.view(np.uint64))
    with pytest.raises(GameError, match="square"):
        code_matrix(np.zeros((3, 4)), 8)
    with pytest.raises(GameError, match="16 bits"):
        code_matrix(np.arange(300 * 300, dtype=np.float32).reshape(300, 300), 300)


def test_kernel_node_map_is_the_decisions_mapping(flop):
    """layout.node_of maps exactly the laid-out decisions (not the isomorphic copies) to kernel decisions,
    like the dict it replaces: items, lookups, KeyError elsewhere."""
    g, tree, ranges = flop
    lay = BoardLayout.of(tree, True, allin=True)
    m = lay.node_of
    items = dict(m.items())
    assert len(items) == len(m) == int(np.sum((lay.node_type == 0) & (lay.is_copy == 0)))
    for old, new in items.items():
        assert tree.nodes[old].kind == "decision" and lay.order[new] == old and lay.node_type[new] == 0
        assert m[np.int64(old)] == new and old in m
    others = [i for i in range(len(tree.nodes)) if i not in items]
    assert others and not any(i in m for i in others[:50])
    for bad in (-1, len(tree.nodes), others[0]):
        with pytest.raises(KeyError):
            m[bad]


@pytest.mark.skipif(__import__("platform").libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_release_freed_heap_returns_freed_heap_to_the_system():
    """The kernel's release_freed_heap gives back heap pages freed in the middle of the heap (holes that free()
    alone keeps resident), which the solver calls after building a large layout."""
    from cfrkit.solvers.public.board_range_cfr import kernel_module

    def anon_mib():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("RssAnon")) / 1024

    kernel_module().release_freed_heap()
    blocks = [np.ones(1024) for _ in range(12000)]  # 8 KB each: from the heap, not mmap
    del blocks[::2]                                 # 6,000 holes of 8 KB between live blocks
    before = anon_mib()
    kernel_module().release_freed_heap()
    assert before - anon_mib() > 20  # ~47 MB freed, at least one whole page per hole
    assert len(blocks) == 6000 and float(blocks[-1].sum()) == 1024.0


def _layout_digest(lay, solver=None) -> str:
    """One sha256 over every array and table of a BoardLayout (the kernel's layout tuple, the kernel order,
    decision map, copies, hand spaces, all-in nodes, leaf offsets) and of the solver's all-in tables."""
    import hashlib
    import json

    def h(x):
        if isinstance(x, np.ndarray):
            return hashlib.sha256(str((x.dtype.str, x.shape)).encode()
                                  + np.ascontiguousarray(x).tobytes()).hexdigest()[:16]
        return hashlib.sha256(repr(x).encode()).hexdigest()[:16]

    out = {f"layout[{i}]": h(v) for i, v in enumerate(lay.layout)}
    out.update(order=h(np.asarray(lay.order, dtype=np.int64)), node_of=h(lay.node_of.array),
               copy_of=h(sorted(lay.copy_of.items())), ext_off=h(lay.ext_off), ext_nodes=h(list(lay.ext_nodes)),
               num_ext=lay.num_ext, num_entries=lay.num_entries, num_nodes=lay.num_nodes,
               allin_nodes=h(list(lay.allin_nodes)), swaps=h(lay.swaps), root_pairs=h(lay.root_pairs),
               space_pairs=h([p.tolist() for p in lay.space_pairs]), space_id=h(sorted(lay._space_id.items())),
               pot=lay.pot)
    if solver is not None and solver._allin is not None:
        out.update({f"allin[{i}]": h(v) for i, v in enumerate(solver._allin)})
    return hashlib.sha256(json.dumps(out, sort_keys=True).encode()).hexdigest()[:24]


# sha256 of every layout array and all-in table (_layout_digest), recorded from main eb9cdb6, where BoardLayout read
# the public tree's node objects one by one; since branch range-mem3 it reads the tree as arrays (TreeArrays) and
# writes the kernel's node arrays whole, and postflop trees are NodeArrays: the layouts must stay these, bit for bit
LAYOUT_SPOTS = {
    "turn": (("8dAs8sKh", 4000, 18000, {"turn": "50%, 100%, a", "river": "100%, a"}), None),
    "flop10": (("AsKhTs", 100, 300, "50%, a"), "AsKsQsJsTs9sAhKhQhJh"),
    "flopiso": (("AsKhTs", 100, 300, "50%, a"), "AsKhTs9sQhAcKcQcJcAdKdQdJd"),
    "flop14": (("QsJh2h", 200, 900, "50%, a"), "QsJh2hAsKdTc9c8s7h6d5c4s3hAh"),
}
LAYOUT_DIGESTS = {
    ("flop10", False, False): "821a51564abfd35ede407dac", ("flop10", False, True): "a1aafe49de0dcd8977200d19",
    ("flop10", True, False): "8ae5236693d54629a653d687", ("flop10", True, True): "a6165d2ef2e71f4feb81c860",
    ("flop14", True, True): "64ff16c89ace80dc8c43a4dc",
    ("flopiso", False, False): "45ec93a31b994bfb9224ac78", ("flopiso", False, True): "0f085128c32c235ef11a939d",
    ("flopiso", True, False): "b30be6630f026928cc3fa60d", ("flopiso", True, True): "053a1951004728e5f41206ab",
    ("turn", False, False): "44816544b75f43ac90079bb2", ("turn", True, True): "40bf32ce3dbe1b0c58a82044",
    ("turn", "leaves"): "f0e6569d5f9a1f51b9d11db5",
}


@pytest.mark.parametrize("spot", sorted(LAYOUT_SPOTS))
def test_layout_arrays_equal_the_object_tree_construction(spot):
    """Every layout array and all-in table, with and without isomorphism and all-in nodes, equals the one recorded
    from the construction over node objects (LAYOUT_DIGESTS), whether the tree holds its nodes as arrays
    (NodeArrays, the postflop builder's) or as a list of PublicNode objects (the same nodes)."""
    from cfrkit.solvers.public.public_tree import NodeArrays, PublicTree

    args, deck = LAYOUT_SPOTS[spot]
    g = PostflopPublicGame(*args, **({} if deck is None else {"deck": parse_cards(deck)}))
    compact = build_public_tree(g)
    assert isinstance(compact.nodes, NodeArrays)
    listed = PublicTree(g, list(compact.nodes))
    cases = [k for k in LAYOUT_DIGESTS if k[0] == spot and k[1] != "leaves"]
    assert cases
    if (spot, "leaves") in LAYOUT_DIGESTS:  # a depth-limited tree (the generic builder's node objects)
        dl = build_public_tree(g, depth_limit=True)
        assert _layout_digest(BoardLayout.of(dl, False, leaves=True)) == LAYOUT_DIGESTS[(spot, "leaves")]
    for tree in (compact, listed):
        for key in cases:
            _, iso, allin = key
            lay = BoardLayout.of(tree, iso, allin=allin)
            solver = None
            if allin:
                solver = BoardRangeSolver(tree, threads=1, isomorphism=iso if lay.swaps or not iso else None)
                solver = solver if solver.layout is lay else None
            assert _layout_digest(lay, solver) == LAYOUT_DIGESTS[key], key


@pytest.mark.parametrize("compression,threads", [(False, 1), (True, 1), (True, 2)])
def test_kept_kernel_workspace_gives_the_iterates_of_a_fresh_one(river, flop, compression, threads):
    """``run`` and ``exploitability`` reuse one kernel workspace (``make_workspace``: the set-up that cost ~0.3 ms
    per call, more than a river iteration); the iterates, 16-bit scales and exploitability after several calls
    are bitwise those of a solver whose every call builds its own, and a workspace built for other arguments is
    refused."""
    from cfrkit.solvers.public.board_range_cfr import kernel_module
    for g, tree, ranges in (river, flop):
        kept = BoardRangeSolver(tree, ranges=ranges, dtype="float32", compression=compression, threads=threads)
        fresh = BoardRangeSolver(tree, ranges=ranges, dtype="float32", compression=compression, threads=threads)
        fresh._workspace = lambda module, threads: {}  # the old path: no workspace
        first = None
        for _ in range(3):
            kept.run(2)
            fresh.run(2)
            assert kept.exploitability() == fresh.exploitability()
            ws = kept._kernel_workspace()[1]["workspace"]
            assert first is None or ws is first
            first = ws
        assert np.array_equal(kept.regrets, fresh.regrets) and np.array_equal(kept.strategy_sum, fresh.strategy_sum)
        if compression:
            assert np.array_equal(kept.scales, fresh.scales)
        other = kernel_module(kept.dtype).make_workspace(kept.layout.layout, threads + 1, kept._allin)
        with pytest.raises(ValueError, match="workspace"):
            kernel_module(kept.dtype).exploitability(kept.layout.layout, kept.ranges, kept._stored()[1], threads,
                                                     kept._compressed, kept._allin, workspace=other)
