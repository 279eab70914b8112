"""Potential-aware search kernels against independent references: the greedy transport against a
pure-Python one, the marginal lower bound against scipy's 1-D Wasserstein distance and POT's exact
EMD, the pruned searches against brute force, and a potential-aware build over histogram-EMD turn
buckets (the full-deck default shape) that is reproducible."""
import numpy as np
import pytest

from cfrkit.abstraction import build_abstraction
from cfrkit.abstraction.clustering import (L2Centres, PACentres, PotentialSpace, assign_l2, assign_pa_emd,
                                           pa_nearest)
from cfrkit._kernels import abstraction as K


def _greedy_reference(pi, pm, qi, qm, ground):
    """Greedy transport in plain Python: cheapest remaining pair first."""
    pairs = sorted((ground[a, b], x, y) for x, a in enumerate(pi) for y, b in enumerate(qi))
    rp, rq, cost = list(pm), list(qm), 0.0
    for d, x, y in pairs:
        f = min(rp[x], rq[y])
        if f > 0:
            cost += f * d
            rp[x] -= f
            rq[y] -= f
    return cost


def _space(rng, K_=40, bins=12, norm=1, support=16):
    embed = np.cumsum(rng.dirichlet(np.ones(bins), size=K_), axis=1) / bins  # next-round centres as cdfs / bins
    return PotentialSpace(embed, norm=norm, support=support)


def _dense(pc, K_):
    Q = np.zeros((len(pc.cids), K_))
    for j in range(len(pc.cids)):
        v = pc.cids[j] >= 0
        Q[j, pc.cids[j][v]] = pc.cmass[j][v]
    return Q


def test_greedy_and_lower_bounds_against_references():
    ot = pytest.importorskip("ot")
    from scipy.stats import wasserstein_distance

    rng = np.random.default_rng(11)
    space = _space(rng)
    ids = rng.integers(0, 40, size=(16, 9)).astype(np.int32)
    ids[rng.random(ids.shape) < 0.2] = -1
    pc = PACentres(space, rng.dirichlet(np.full(40, 0.4), size=8))
    Q = _dense(pc, 40)
    l0, l1 = K.pa_lower_bounds(ids, space.embed, 1, pc.cids, pc.cemb, pc.cvals, pc.cw)
    for i in range(len(ids)):
        pi, pm = space._masses(ids[i])
        for j in range(len(Q)):
            qi = np.flatnonzero(Q[j] > 0)
            g = space.greedy_emd(ids[i], Q[j])
            assert g == pytest.approx(_greedy_reference(pi, pm, qi, Q[j][qi], space.ground), abs=1e-9)
            exact = ot.emd2(pm, Q[j][qi], space.ground[np.ix_(pi, qi)])
            assert space.exact_emd(ids[i], Q[j]) == pytest.approx(exact, abs=1e-9)
            marg = sum(wasserstein_distance(space.embed[pi, c], space.embed[qi, c], pm, Q[j][qi])
                       for c in range(space.embed.shape[1]))
            assert l1[i, j] == pytest.approx(marg, abs=1e-9)  # LB1 = sum of the coordinates' 1-D EMDs
            mean = np.abs(pm @ space.embed[pi] - Q[j][qi] @ space.embed[qi]).sum()
            assert l0[i, j] == pytest.approx(mean, abs=1e-9)
            assert l0[i, j] <= l1[i, j] + 1e-12 and l1[i, j] <= exact + 1e-9 and exact <= g + 1e-9
    # the marginal bound is not vacuous: it closes most of the gap left by the mean bound
    assert np.mean(l1) > 1.2 * np.mean(l0)


@pytest.mark.parametrize("norm", [1, 2])
def test_pruned_search_is_brute_force_argmin(norm):
    rng = np.random.default_rng(norm)
    space = _space(rng, norm=norm)
    space.use_marginal = True
    ids = rng.integers(0, 40, size=(250, 10)).astype(np.int32)
    ids[rng.random(ids.shape) < 0.15] = -1
    pc = PACentres(space, rng.dirichlet(np.full(40, 0.3), size=30))
    Q = _dense(pc, 40)
    g = np.array([[space.greedy_emd(r, q) for q in Q] for r in ids])
    lab, d1, d2, counts = pa_nearest(space, ids, pc)
    srt = np.sort(g, axis=1)
    assert np.array_equal(lab, g.argmin(1))
    assert np.allclose(d1, srt[:, 0], atol=1e-12) and np.allclose(d2, srt[:, 1], atol=1e-12)
    assert counts[2] < g.size  # some EMDs skipped
    if norm == 1:
        assert counts[1] > counts[2]  # LB1 discarded candidates before the EMD
    space.use_marginal = False
    lab0, _, _, c0 = pa_nearest(space, ids, pc)
    assert np.array_equal(lab0, lab) and c0[2] >= counts[2]
    space.use_marginal = True
    space.max_candidates = 30  # a cap at k is the exact search
    assert np.array_equal(assign_pa_emd(ids, space, Q, pc)[0], lab)
    space.max_candidates = 3  # a small cap: among the 3 best-LB0 centres
    capped = assign_pa_emd(ids, space, Q, pc)[0]
    lb0 = K.pa_lower_bounds(ids, space.embed, norm, pc.cids, pc.cemb, pc.cvals, pc.cw)[0]
    first3 = np.argsort(lb0, axis=1, kind="stable")[:, :3]
    rows = np.arange(len(ids))
    assert np.array_equal(capped, first3[rows, g[rows[:, None], first3].argmin(1)])
    assert np.array_equal(K.pa_rows(ids, lab, pc.cids, pc.cmass, space.ground), d1)


def test_l2_nearest_is_float64_argmin_with_nan_rows():
    rng = np.random.default_rng(5)
    C = rng.random((300, 8)).astype(np.float32)
    X = rng.random((2000, 8)).astype(np.float32)
    X[:5] = C[:5]  # exact hits
    X[7, 3] = np.nan
    lab, computed = assign_l2(X, C, L2Centres(C), counts=True)
    d = ((X[:, None, :].astype(np.float64) - C[None].astype(np.float64)) ** 2).sum(-1)
    ok = ~np.isnan(X).any(1)
    assert np.array_equal(lab[ok], d[ok].argmin(1)) and lab[7] == -1
    assert computed < ok.sum() * len(C)


def test_potential_aware_build_over_histogram_turn_is_reproducible(tmp_path):
    # 12-card deck, the full-deck default features: potential-aware flop over histogram-EMD turn
    # buckets (L1 ground, LB1 pruning), OCHS river kept as centres
    kw = dict(features=("lossless", "pa-emd", "hist-emd", "ochs"), num_ranks=3, num_suits=4, sample=1000,
              river_storage="centres", progress=False)
    a = build_abstraction((9, 10, 8, 6), str(tmp_path / "a"), workers=1, **kw)
    b = build_abstraction((9, 10, 8, 6), str(tmp_path / "b"), workers=2, **kw)
    for r in range(3):
        assert np.array_equal(np.asarray(a._tables[r]), np.asarray(b._tables[r]))
    # flop buckets are the greedy-EMD nearest centres of the hands' turn-bucket distributions
    from cfrkit.abstraction.build import RoundFeatures

    rf = RoundFeatures(a.params, 1, str(tmp_path / "a"))
    board = a.ctx.deck[[0, 5, 10]]
    live, X = rf.of_board(board)
    C = a.centres(1).astype(np.float64)
    pc = PACentres(rf.space, C)
    Q = _dense(pc, rf.space.num_buckets)
    brute = np.array([[rf.space.greedy_emd(r, q) for q in Q] for r in X]).argmin(1)
    assert np.array_equal(a.buckets_for_board(1, board)[live], brute)
