"""SubgameSolver, the range solvers' front, and the LeafValues implementations.

* the front runs the engine of its table (``choose_engine``) and gives bit-identical strategies, exploitability
  and root cfvs to that engine constructed directly: a river spot (board kernel in float64 / float32 with two
  threads / 16-bit, flat kernel, numpy), a reduced-deck turn tree, and a depth-limited turn tree with each
  LeafValues implementation (exact continuation, check-down, all-in equity, a hold'em value net through the
  compiled direct path) on the compiled and the numpy engine;
* LeafValues that must agree do: all-in equity (exact, float64) and check-down (float32 sign matrices) values;
  the exact continuation at a leaf and the full solve of the leaf's subgame (same game value);
* the solvers' package imports neither the value nets nor torch; bad options give one-line errors.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from cfrkit.cards.encoding import parse_cards
from cfrkit.games import load
from cfrkit.solvers.public import (AllinEquityValues, BucketedLeafValues, CheckdownValues, ExactContinuationValues,
                                   LeafValues, SubgameSolver, build_public_tree, choose_engine)
from cfrkit.solvers.public.array_backend import make_backend
from cfrkit.solvers.public.board_leaf_cfr import BoardLeafSolver
from cfrkit.solvers.public.board_range_cfr import BoardRangeSolver
from cfrkit.solvers.public.flat_range_cfr import FlatRangeSolver
from cfrkit.solvers.public.postflop_game import PostflopPublicGame
from cfrkit.solvers.public.tree import RangeSolver

TURN = ("AsKhTs9h", "AsKsQsJsTs9sAhKhQhJh9h8c")   # as tests/test_board_leaf_cfr.py (no exact CFR+ ties)


@pytest.fixture(scope="module")
def river():
    g = PostflopPublicGame("AsJd8h5c2d", starting_pot=1000, effective_stack=2000, bet_sizes="50%, a")
    tree = build_public_tree(g)
    ranges = np.random.default_rng(3).random((2, 1326)) * g.hand_mask(tree.root.board)
    return g, tree, ranges


def turn_spot(depth_limit: bool, seed: int = 1, bet_sizes: str = "50%, a"):
    g = PostflopPublicGame(TURN[0], 100, 300, bet_sizes, deck=parse_cards(TURN[1]))
    tree = build_public_tree(g, depth_limit=depth_limit)
    ranges = np.random.default_rng(seed).random((2, 1326)) * g.hand_mask(tree.root.board)
    return g, tree, ranges


def same_strategies(a, b):
    assert set(a) == set(b)
    for k in a:
        assert a[k].shape == b[k].shape and np.array_equal(a[k], b[k]), k


ENGINES = [  # (front options, engine class, engine options, algorithm)
    ({}, BoardRangeSolver, {}, "dcfr"),   # the defaults: storage by size (float32 here), adaptive threads
    ({"storage": "float64", "threads": 1}, BoardRangeSolver, {"dtype": "float64", "threads": 1}, "dcfr"),
    ({"storage": "float32", "threads": 2}, BoardRangeSolver, {"dtype": "float32", "threads": 2}, "dcfr"),
    ({"storage": "16bit"}, BoardRangeSolver, {"dtype": "float32", "compression": True}, "dcfr-postflop"),
    ({"kernel": "flat"}, FlatRangeSolver, {}, "dcfr"),
    ({"backend": "numpy"}, RangeSolver, {}, "cfr+"),
]


@pytest.mark.parametrize("front_kw,cls,kw,algorithm", ENGINES, ids=lambda x: str(x)[:40])
def test_river_front_equals_its_engine(river, front_kw, cls, kw, algorithm):
    g, tree, ranges = river
    front = SubgameSolver(tree, ranges, algorithm=algorithm, **front_kw)
    assert front.engine_name == cls.__name__ == choose_engine(tree, front_kw.get("backend", "auto"),
                                                              kernel=front_kw.get("kernel", "board"))
    direct = cls(tree, ranges=ranges, algorithm=algorithm, **kw)
    front.run(7).run(8)
    if cls is RangeSolver:
        direct.iterate(15)
        want_strategy, want_expl = direct.to_numpy_strategy(), float(direct.exploitability()[0])
    else:
        direct.run(15)
        want_strategy, want_expl = direct.average_strategy(), direct.exploitability()
    assert front.iterations == 15
    same_strategies(front.average_strategy(), want_strategy)
    assert front.exploitability() == want_expl
    assert front.exploitability_percent() == pytest.approx(100 * want_expl / 1000)
    # root cfvs (chips, (2, 1326)): every engine's equal the numpy pass over the same strategy
    cfv = front.root_cfvs()
    ref = SubgameSolver(tree, ranges, backend="numpy").root_cfvs(front.average_strategy())
    assert cfv.shape == (2, 1326)
    np.testing.assert_allclose(cfv, ref, rtol=0, atol=1e-9 * np.abs(ref).max())


def test_solve_to_a_target_in_percent_of_the_pot(river):
    g, tree, ranges = river
    for kw in ({}, {"kernel": "flat"}, {"backend": "numpy"}):
        s = SubgameSolver(tree, ranges, **kw)
        pct = s.solve(1.0, max_iterations=200, check_every=10)
        assert pct <= 1.0 and s.iterations % 10 == 0 and s.iterations < 200
        assert pct == pytest.approx(s.exploitability_percent(), rel=1e-9)


def test_reduced_turn_front_equals_engines():
    g, tree, ranges = turn_spot(depth_limit=False)
    assert not tree.leaf_nodes and any(n.kind == "chance" for n in tree.nodes)
    for front_kw, cls, kw, algorithm in ENGINES:
        front = SubgameSolver(tree, ranges, algorithm=algorithm, **front_kw).run(5)
        direct = cls(tree, ranges=ranges, algorithm=algorithm, **kw)
        if cls is RangeSolver:
            direct.iterate(5)
            same_strategies(front.average_strategy(), direct.to_numpy_strategy())
        else:
            direct.run(5)
            same_strategies(front.average_strategy(), direct.average_strategy())


def small_net():
    import torch

    from cfrkit.value_nets.holdem.bucketing import make_bucketer
    from cfrkit.value_nets.holdem.leaf_values import HoldemNetLeafValues
    from cfrkit.value_nets.model import ValueNet

    torch.manual_seed(0)
    return HoldemNetLeafValues(ValueNet(20, hidden=(16, 16)), make_bucketer("river", "hs", 20), 300.0, "river")


LEAF_FUNCTIONS = {
    "exact": lambda g: ExactContinuationValues(g, iterations=4),
    "checkdown": lambda g: CheckdownValues(),
    "allin_equity": lambda g: AllinEquityValues(g),
    "value_net": lambda g: small_net(),
}


@pytest.mark.parametrize("name", list(LEAF_FUNCTIONS))
def test_depth_limited_front_equals_engines(name):
    # all-in or check: 8 leaves (one per river card) and all-in nodes; the exact continuation solves each leaf
    g, tree, ranges = turn_spot(depth_limit=True, bet_sizes="a")
    assert len(tree.leaf_nodes) == 8
    make = LEAF_FUNCTIONS[name]
    assert isinstance(make(g), LeafValues)
    assert isinstance(make(g), BucketedLeafValues) == (name == "value_net")
    iters = 4
    # compiled: BoardLeafSolver (float64), the value net through its direct bucket path
    front = SubgameSolver(tree, ranges, leaf_values=make(g), algorithm="cfr+", skip=1).run(iters)
    assert front.engine_name == "BoardLeafSolver"
    direct = BoardLeafSolver(tree, ranges=ranges, leaf_values=make(g), algorithm="cfr+", skip=1, dtype="float64")
    direct.run(iters)
    assert np.array_equal(front.average_root_cfvs(), direct.average_root_values())
    same_strategies(front.average_strategy(), direct.average_strategy())
    # numpy: RangeSolver
    front = SubgameSolver(tree, ranges, backend="numpy", leaf_values=make(g), algorithm="cfr+", skip=1).run(iters)
    direct = RangeSolver(tree, ranges=ranges, leaf_values=make(g), algorithm="cfr+", skip=1)
    direct.iterate(iters)
    assert np.array_equal(front.average_root_cfvs(), direct.average_root_values()[0])
    same_strategies(front.average_strategy(), direct.to_numpy_strategy())
    with pytest.raises(ValueError, match="depth-limited"):
        front.exploitability()


def test_value_net_direct_path_equals_its_call():
    g, tree, ranges = turn_spot(depth_limit=True)
    out = []
    for fast in (True, False):
        s = SubgameSolver(tree, ranges, leaf_values=small_net(), algorithm="cfr+", skip=1, fast_nets=fast).run(5)
        out.append(s.average_root_cfvs())
    np.testing.assert_allclose(out[0], out[1], rtol=0, atol=1e-5 * np.abs(out[1]).max())


def test_allin_equity_and_checkdown_values_agree():
    g, tree, _ = turn_spot(depth_limit=True)
    leaves = [tree.nodes[i] for i in tree.leaf_nodes][:4]
    rng = np.random.default_rng(7)
    r0, r1 = (rng.random((len(leaves), 2, 1326)) * g.hand_mask(leaves[0].board) for _ in range(2))
    be = make_backend("numpy")
    a = AllinEquityValues(g)(leaves, r0, r1, be)
    c = CheckdownValues()(leaves, r0, r1, be)
    live = np.stack([g.hand_mask(n.board) > 0 for n in leaves])[:, None, :]   # pairs of the reduced deck
    for x, y in zip(a, c):
        x, y = np.where(live, x, 0.0), np.where(live, y, 0.0)
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-5 * np.abs(y).max())


@pytest.mark.slow
def test_allin_equity_and_checkdown_values_agree_on_a_flop():
    # every turn-river run-out: float32 sign matrix against exact float64 (about 10 s)
    rng = np.random.default_rng(8)
    be = make_backend("numpy")
    flop = PostflopPublicGame("AsKhTs", 100, 300, "50%, a")
    root = build_public_tree(flop, depth_limit=True).root
    r = rng.random((2, 1, 1, 1326)) * flop.hand_mask(root.board)
    a = AllinEquityValues(flop)([root], r[0], r[1], be)
    c = CheckdownValues()([root], r[0], r[1], be)
    np.testing.assert_allclose(a[0], c[0], rtol=0, atol=1e-5 * np.abs(c[0]).max())


def test_exact_continuation_equals_the_leaf_subgame_solve():
    g, tree, _ = turn_spot(depth_limit=True)
    leaf = next(tree.nodes[i] for i in tree.leaf_nodes if tree.nodes[i].pot > 100)
    sub = build_public_tree(g, leaf.state)
    rng = np.random.default_rng(11)
    reach = rng.random((2, 1326)) * g.hand_mask(leaf.board)
    exact = ExactContinuationValues(g, iterations=400)
    v0, v1 = exact([leaf], reach[0][None, None], reach[1][None, None], make_backend("numpy"))
    full = SubgameSolver(sub, reach, storage="float64")
    full.solve(0.05, max_iterations=2000)
    cfv = full.root_cfvs()
    mass = float(reach[0].sum() * reach[1].sum())   # the game value's scale: chips x both reach masses
    # the game value (sum of range x cfv) is the same at every equilibrium; the continuation's is within the
    # two solves' exploitability of it
    for p, v in ((0, v0), (1, v1)):
        got, want = float(reach[p] @ v[0, 0]), float(reach[p] @ cfv[p])
        assert abs(got - want) <= 0.01 * leaf.pot * mass, (p, got, want)


def test_solvers_package_imports_no_value_nets_nor_torch():
    code = ("import sys, cfrkit.solvers.public, cfrkit.solvers.public.resolving, cfrkit.solvers.public.spot; "
            "bad = [m for m in sys.modules if m.startswith(('cfrkit.value_nets', 'cfrkit.agents', 'torch'))]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_full_tree_solve_imports_only_the_board_engine():
    """A float32 river solve through the front (the benchmark's spot) loads the board engine and its float32
    kernel, not the leaf functions, the numpy engine, the depth-limited engine, the float64 kernel, the hand
    evaluator or the thread pool (issue 30 part 11: ~2 MiB of the process's memory), nor builds the equity kernel's
    hash table (part 12); the lazy names still work."""
    code = ("import sys\n"
            "from cfrkit.solvers.public import SubgameSolver, build_public_tree\n"
            "from cfrkit.solvers.public.postflop_game import PostflopPublicGame\n"
            "g = PostflopPublicGame('AsJd8h5c2d', 1000, 2000, '50%, 100%, a')\n"
            "s = SubgameSolver(build_public_tree(g), storage='float32', threads=1)\n"
            "s.run(5)\n"
            "assert 0 < s.exploitability_percent() < 100\n"
            "lazy = ('cfrkit.solvers.public.leaf_functions', 'cfrkit.solvers.public.tree', "
            "'cfrkit.solvers.public.board_leaf_cfr', 'cfrkit._kernels.range_cfr_board', 'cfrkit._kernels.handeval', "
            "'cfrkit.cards.evaluator', 'cfrkit.cards.ranges', 'concurrent.futures')\n"
            "loaded = [m for m in lazy if m in sys.modules]\n"
            "assert not loaded, loaded\n"
            "assert 'cfrkit._kernels.range_cfr_board32' in sys.modules\n"
            "from cfrkit._kernels import equity\n"
            "assert not equity.hash_table_built()\n"   # the river's strengths by eval_mask (part 12: ~1.1 MiB)
            "import cfrkit.cards, cfrkit.solvers.public as pub\n"
            "assert pub.CheckdownValues.__module__ == 'cfrkit.solvers.public.leaf_functions'\n"
            "assert cfrkit.cards.evaluate('AsKsQsJsTs') > 0 and cfrkit.cards.range_vector('AA').sum() == 6\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_old_names_warn_and_still_work():
    from cfrkit.agents import holdem_deepstack
    from cfrkit.solvers.public import leaf_functions, resolving

    with pytest.warns(DeprecationWarning, match="ExactContinuationValues"):
        assert resolving.SolvedLeafValues is ExactContinuationValues
    for name in ("CheckdownValues", "showdown_sign_matrix"):
        with pytest.warns(DeprecationWarning, match="leaf_functions"):
            assert getattr(holdem_deepstack, name) is getattr(leaf_functions, name)


def test_bad_options_are_refused(river):
    g, tree, ranges = river
    leduc = build_public_tree(load("leduc"))
    assert SubgameSolver(leduc).engine_name == "RangeSolver"
    for kwargs, msg in (({"backend": "gpu"}, "backend"), ({"storage": "float16"}, "storage"),
                        ({"algorithm": "cfr"}, "algorithm"), ({"backend": "numpy", "storage": "16bit"}, "16-bit"),
                        ({"backend": "numpy", "threads": 2}, "threads"), ({"kernel": "flat", "storage": "16bit"},
                                                                           "16-bit"),
                        ({"threads": 0}, "threads"), ({"leaf_values": 3}, "callable")):
        with pytest.raises(ValueError, match=msg):
            SubgameSolver(tree, ranges, **kwargs)
    with pytest.raises(ValueError, match="compiled"):
        SubgameSolver(leduc, backend="compiled")
    with pytest.raises(ValueError, match="leaf_values"):
        SubgameSolver(turn_spot(depth_limit=True)[1])
    with pytest.raises(ValueError, match="PublicTree"):
        SubgameSolver("river")
    with pytest.raises(ValueError, match="kernel='flat'"):
        SubgameSolver(tree, ranges).lock(0, np.full((3, 1326), 1 / 3))
