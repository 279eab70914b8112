"""Re-solving on the compiled depth-limited solver (``resolve_board``, ``HoldemDeepStackAgent(solver="board")``).

* with DeepStack's re-solving gadget (opponent's root range from regret matching of follow / terminate
  against given cfvs), the compiled path's iterates equal the numpy ``resolve``'s in float64: root average
  strategy, the opponent's averaged root cfvs, its gadget range and best-response cfvs, on a depth-limited
  turn (both re-solving seats, CFR+ and DCFR) and on a river (no leaves);
* the agent's action probabilities at a river and a turn spot are the same on both paths, and the board
  path is the one used (preflop falls back to numpy);
* bad input is refused.

Ties: in tiny decks a hand can have exactly equal action values, where CFR+ follows rounding (see the
note in tests/test_board_leaf_cfr.py); the gadget makes it likelier (its follow range jumps to exactly 0 or
1, and reach-sensitive leaf functions then amplify rounding at zero reach).  The decks here have no such
ties and the leaf function is smooth in the reaches.
"""
from __future__ import annotations

import numpy as np
import pytest

from cfrkit.agents.holdem_deepstack import HoldemDeepStackAgent
from cfrkit.solvers.public.leaf_functions import CheckdownValues
from cfrkit.cards import parse_cards
from cfrkit.cards.hands import blocked_pairs
from cfrkit.games.holdem.matchstate import state_from_matchstate
from cfrkit.games.registry import load
from cfrkit.solvers.public.board_leaf_cfr import BoardLeafSolver
from cfrkit.solvers.public.postflop_game import PostflopPublicGame
from cfrkit.solvers.public.resolving import board_resolve_supported, resolve, resolve_board
from cfrkit.solvers.public.tree import build_public_tree

TURN = ("AsKhTs9h", "AsKsQsJsTs9sAhKhQhJh9h8c7c6d5d")
RIVER = ("AsKhTs9h2c", "AsKsQsJsTs9sAhKhQhJh9h8c2c3c4c")


def leaf_fn(seed=0):
    """Leaf values smooth in both reaches (no steep term at zero reach), per hand and leaf, deterministic."""
    tab = np.random.default_rng(seed).normal(size=1326)

    def fn(leaves, r0, r1, backend):
        r0, r1 = np.asarray(r0), np.asarray(r1)
        pot = np.array([leaf.contrib[0] for leaf in leaves])[:, None, None]
        card = np.array([leaf.board[-1] for leaf in leaves])[:, None, None] / 52.0
        m0, m1 = r0.sum(-1, keepdims=True), r1.sum(-1, keepdims=True)
        v0 = pot * ((tab + card) * m1 + 0.3 * r1 * np.sqrt(m1 * m1 + 1.0))
        v1 = pot * (-(tab - card) * m0 + 0.2 * r0 * np.sqrt(m0 * m0 + 1.0))
        return v0, v1

    return fn


def _spot(board, deck, depth_limit):
    g = PostflopPublicGame(board, 100, 300, "50%, a", deck=parse_cards(deck))
    tree = build_public_tree(g, depth_limit=depth_limit)
    mask = g.hand_mask(tree.root.board)
    rng = np.random.default_rng(1)
    return g, tree, rng.random((2, 1326)) * mask, rng.normal(size=1326) * 50 * mask, mask > 0


@pytest.mark.parametrize("street,algorithm,own", [("turn", "cfr+", 0), ("turn", "cfr+", 1), ("turn", "dcfr", 0),
                                                  ("turn", "dcfr", 1), ("river", "dcfr", 1)])
def test_gadget_resolve_equals_numpy(street, algorithm, own):
    board, deck = TURN if street == "turn" else RIVER
    g, tree, ranges, cfvs, live = _spot(board, deck, street == "turn")
    fn = leaf_fn() if tree.leaf_nodes else None
    assert bool(tree.leaf_nodes) == (street == "turn")
    kw = dict(opp_cfvs=cfvs, iterations=25, skip=2, leaf_values=fn, algorithm=algorithm, tree=tree)
    want = resolve(g, tree.root.state, own, ranges[own], **kw)
    got = resolve_board(g, tree.root.state, own, ranges[own], **kw)
    opp = 1 - own
    for i, s in want.strategy.items():
        np.testing.assert_allclose(got.strategy[i][:, :, live], s[:, :, live], rtol=0, atol=1e-9)
    # the opponent's root cfvs averaged over the iterations (and the re-solver's), its gadget range
    wv, gv = want.solver.average_root_values()[0], got.solver.average_root_values()
    scale = np.abs(wv[:, live]).max()
    assert np.abs(gv[:, live] - wv[:, live]).max() <= 1e-9 * scale
    assert np.abs(gv[opp, live]).max() > 1.0                    # not trivially zero
    np.testing.assert_allclose(got.solver.gadget_range()[live], want.solver.gadget_range()[0, live], atol=1e-9)
    # the gadget did something: some hands terminate, some follow
    follow = got.solver.gadget_range()[live]
    assert follow.min() < 0.5 < follow.max()
    # per-node results of the average strategy (opponent's best response at every node, reach); None below
    # all-in nodes (RangeSolver's allin_equity: the run-outs are one terminal) in both
    for a, b in zip(want.opp_br_values, got.opp_br_values):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b[:, live], a[:, live], rtol=0, atol=1e-9 * scale)
    for a, b in zip(want.reach, got.reach):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b[:, :, live], a[:, :, live], rtol=0, atol=1e-9)
    np.testing.assert_allclose(got.solver.gadget_values[0], cfvs)


def test_plain_resolve_equals_numpy():
    g, tree, ranges, _, live = _spot(*TURN, True)
    kw = dict(opp_range=ranges[1], iterations=15, leaf_values=leaf_fn(), algorithm="dcfr", tree=tree)
    want = resolve(g, tree.root.state, 0, ranges[0], **kw)
    got = resolve_board(g, tree.root.state, 0, ranges[0], **kw)
    np.testing.assert_allclose(got.root_strategy()[:, :, live], want.root_strategy()[:, :, live], atol=1e-9)
    assert got.solver.gadget_range() is None


class Checkdown64(CheckdownValues):
    """The agent's check-down leaf values with float64 products (the default float32 products round
    differently for the two paths' batch shapes: about 1e-4 apart in the strategies after 40 iterations)."""

    def _compute(self, leaves, r0, r1, need0=True, need1=True):
        v0, v1 = np.zeros_like(r0), np.zeros_like(r1)
        cache = self.__dict__.setdefault("_m64", {})
        groups = {}
        for k, leaf in enumerate(leaves):
            groups.setdefault(tuple(sorted(leaf.board)), []).append(k)
        H = r0.shape[-1]
        for key, idx in groups.items():   # one float64 product per board, all its leaves at once
            if key not in cache:
                cache[key] = np.ascontiguousarray(self.matrix(key).astype(np.float64).T)
            mt = cache[key]
            c0 = np.array([leaves[k].contrib[0] for k in idx])[:, None, None]
            c1 = np.array([leaves[k].contrib[1] for k in idx])[:, None, None]
            v0[idx] = c0 * (r1[idx].reshape(-1, H) @ mt).reshape(r1[idx].shape)
            v1[idx] = c1 * (r0[idx].reshape(-1, H) @ mt).reshape(r0[idx].shape)
        return v0, v1


SPOTS = {"river": "MATCHSTATE:0:0:r200c/cc/cc/:5d5c|/8dAs8s/Kh/2c",
         "turn": "MATCHSTATE:0:0:r200c/cc/:5d5c|/8dAs8s/Kh"}


@pytest.mark.parametrize("street", ["river", "turn"])
def test_agent_action_probabilities_equal(street):
    game = load("holdem")
    state = state_from_matchstate(game, SPOTS[street])
    rng = np.random.default_rng(0)
    live = ~blocked_pairs(list(state.board))
    ranges = rng.random((2, 1326)) * live * (rng.random((2, 1326)) < 0.33)
    ranges /= ranges.sum(1, keepdims=True)
    probs = {}
    for solver in ("board", "numpy"):
        agent = HoldemDeepStackAgent(game, iterations=30, seed=3, solver=solver)
        agent.checkdown = Checkdown64()
        agent.start_spot(state, ranges)
        hs = agent.hand_strategy(state)
        assert agent.solver_used == {"board": int(solver == "board"), "numpy": int(solver == "numpy")}
        probs[solver] = hs.probs
    np.testing.assert_allclose(probs["board"], probs["numpy"], rtol=0, atol=1e-9)
    assert probs["board"][live].std(0).max() > 0.01             # a strategy that depends on the hand


def test_preflop_falls_back_and_bad_input():
    game = load("holdem")
    pg = HoldemDeepStackAgent(game, iterations=2, solver="board")._pgames[0]
    state = game.new_initial_state()
    while state.current_player() < 0:
        state.apply_action(state.legal_actions()[0])
    tree = build_public_tree(pg, pg.root(state), depth_limit=True)
    assert not board_resolve_supported(tree)
    with pytest.raises(ValueError, match="flop, turn or river"):
        resolve_board(pg, tree.root.state, 0, np.full(1326, 1 / 1326), opp_range=np.full(1326, 1 / 1326),
                      iterations=2, leaf_values=lambda *a: None, tree=tree)
    with pytest.raises(Exception, match="solver must be"):
        HoldemDeepStackAgent(game, solver="gpu")
    g, tree, ranges, cfvs, _ = _spot(*RIVER, False)
    with pytest.raises(ValueError, match="exactly one"):
        resolve_board(g, tree.root.state, 0, ranges[0], iterations=3, tree=tree)
    with pytest.raises(ValueError, match="gadget cfvs"):
        BoardLeafSolver(tree, ranges=ranges, gadget=(1, cfvs[:10]), allow_no_ext=True)
    with pytest.raises(ValueError, match="no leaf or all-in"):
        BoardLeafSolver(tree, ranges=ranges)


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_agent_net_leaves_direct_path_equals_generic(precision):
    """A turn re-solve with a (small, random) river net: the net's leaves through the compiled solver's direct
    batched path, the all-in leaves through the check-down call; the same iterates as every leaf through the
    generic call (float64 net: to rounding; float32 net: to float32 rounding of the net's inputs)."""
    torch = pytest.importorskip("torch")
    from cfrkit.value_nets.holdem.bucketing import make_bucketer
    from cfrkit.value_nets.holdem.leaf_values import HoldemNetLeafValues
    from cfrkit.value_nets.model import ValueNet

    game = load("holdem")
    state = state_from_matchstate(game, SPOTS["turn"])
    rng = np.random.default_rng(0)
    live = ~blocked_pairs(list(state.board))
    ranges = rng.random((2, 1326)) * live * (rng.random((2, 1326)) < 0.33)
    ranges /= ranges.sum(1, keepdims=True)
    torch.manual_seed(0)
    model = ValueNet(20, hidden=(16, 16))
    model = model.double() if precision == "float64" else model
    fn = HoldemNetLeafValues(model, make_bucketer("river", "hs", 20), 20000.0, "river")
    out = {}
    for fast in (True, False):
        agent = HoldemDeepStackAgent(game, iterations=6, skip=2, seed=3, leaf_values={"river": fn}, fast_nets=fast,
                                     bet_sizing={"turn": {1: [1.0]}})   # pot bet or all-in: fewer leaves
        agent.checkdown = Checkdown64()
        calls = fn.calls
        agent.start_spot(state, ranges)
        solver = agent._records[("spot",)].result.solver
        session = solver.session
        if fast:
            # the net's leaves (first river decisions) direct, the all-in run-outs (chance leaves) generic
            assert session._net is not None and 0 < len(session.generic_leaves) < session.L
            assert all(session.leaf_nodes[i].state.current_player() < 0 for i in session.generic_leaves)
            assert len(session._net["leaves"]) + len(session.generic_leaves) == session.L
        else:
            assert session._net is None and len(session.generic_leaves) == session.L
        assert fn.calls - calls >= 2 * 6           # the net was asked every pass
        out[fast] = (agent.hand_strategy(state).probs, solver.average_root_values())
    (p_fast, v_fast), (p_gen, v_gen) = out[True], out[False]
    tol = 1e-9 if precision == "float64" else 1e-5
    assert np.abs(v_fast - v_gen).max() <= tol * np.abs(v_gen).max()
    assert np.abs(p_fast - p_gen).max() <= tol
    assert p_fast[live].std(0).max() > 0.01


def test_flop_net_preflop_values_average_over_flops():
    """FlopNetPreflopValues: per hand the mean over the sampled flops that miss it of the flop function's
    values (reaches as given; the flop function drops blocked pairs), times C(50,3) / C(48,3); all-in leaves
    go to the exact check-down function."""
    torch = pytest.importorskip("torch")
    from cfrkit.agents.holdem_deepstack import FlopNetPreflopValues, LookaheadHoldemGame
    from cfrkit.cards.hands import HOLE_PAIRS
    from cfrkit.solvers.public.array_backend import make_backend
    from cfrkit.solvers.public.tree import LEAF

    u = np.random.default_rng(2).normal(size=1326)
    hp = np.asarray(HOLE_PAIRS)

    class FakeFlopNet:   # evaluate as HoldemNetLeafValues: chips = pot x table[h] x opponent mass on the flop
        dtype, device = torch.float64, "cpu"

        def evaluate(self, boards, contribs, r0, r1):
            out0, out1 = torch.zeros_like(r0), torch.zeros_like(r1)
            for i, (f, c) in enumerate(zip(boards, contribs)):
                miss = torch.as_tensor(~np.isin(hp, f).any(1))
                m0, m1 = (r0[i] * miss).sum(-1, keepdim=True), (r1[i] * miss).sum(-1, keepdim=True)
                out0[i] = 2 * c * torch.as_tensor(u) * m1 * miss
                out1[i] = -2 * c * torch.as_tensor(u) * m0 * miss
            return out0, out1

    calls = []

    def allin_fn(leaves, r0, r1, be):
        calls.append(len(leaves))
        return be.asarray(np.full(np.shape(r0), 7.0)), be.asarray(np.full(np.shape(r1), -7.0))

    fn = FlopNetPreflopValues(FakeFlopNet(), allin_fn, num_flops=6, seed=1)
    assert len(set(fn.flops)) == 6
    game = load("holdem")
    pg = LookaheadHoldemGame(game, {1: [1.0]})
    s = game.new_initial_state()
    while s.current_player() < 0:
        s.apply_action(s.legal_actions()[0])
    tree = build_public_tree(pg, pg.root(s), depth_limit=True)
    leaves = [n for n in tree.nodes if n.kind == LEAF]
    allin = [k for k, n in enumerate(leaves) if any(n.state.remaining(p) <= 0 and not n.state.folded[p] for p in (0, 1))]
    assert allin and len(allin) < len(leaves)
    rng = np.random.default_rng(0)
    r0, r1 = rng.random((len(leaves), 1, 1326)), rng.random((len(leaves), 1, 1326))
    be = make_backend("numpy")
    v0, v1 = fn(leaves, r0, r1, be)
    assert calls == [len(allin)] and np.all(v0[allin] == 7.0)
    k = next(i for i in range(len(leaves)) if i not in allin)
    c = leaves[k].contrib[0]
    want = np.zeros(1326)
    count = np.zeros(1326)
    for f in fn.flops:
        miss = ~np.isin(hp, f).any(1)
        want += np.where(miss, 2 * c * u * (r1[k, 0] * miss).sum(), 0.0)
        count += miss
    want = want / np.maximum(count, 1) * (19600 / 17296)
    np.testing.assert_allclose(v0[k, 0], want, rtol=1e-12, atol=1e-9)
    assert np.all(v0[k, 0][count == 0] == 0)
