"""Seeded k-means for the three distances of card abstraction.

- :func:`kmeans_l2`: plain feature vectors (E[HS], OCHS), scikit-learn's KMeans (k-means++ seeding,
  Elkan's triangle-inequality bounds), weighted, seeded.
- :func:`kmeans_emd1d`: histograms on a line under the 1-D EMD, which is the L1 distance of the
  cumulative sums; points are given as cumulative histograms.  k-means++ seeding, Lloyd iterations
  with Hamerly's bounds (skip a point when its upper bound is below its lower bound or half the gap
  to the nearest other centre), and an exact nearest search that skips centres by the sum bound of
  ``pyx/abstraction.pyx``.  Counts of distances computed and skipped are returned.
- :func:`kmeans_pa_emd`: potential-aware distributions over next-round buckets under the EMD whose
  ground distance is the distance between next-round centres (POT's exact ``ot.emd2``).  The
  distance of the mean embeddings (next-round centres are points of a normed space) is a lower
  bound on that EMD; it orders and prunes the exact computations and feeds Hamerly's bounds.

All three return (labels of the points, centres, stats dict) and a matching ``assign_*`` labels
new points against fixed centres (the streaming pass over every hand of a round).
"""
from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple

import numpy as np

from cfrkit.abstraction.errors import AbstractionError

try:
    from cfrkit._kernels import abstraction as _kernel
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError("cfrkit's abstraction kernel is not built; run `python setup.py build_ext --inplace`") from exc


def _check_k(n_distinct: int, k: int, what: str) -> int:
    if k < 1:
        raise AbstractionError(f"{what}: need at least 1 cluster, got {k}")
    return min(k, n_distinct)


# --------------------------------------------------------------------------------------------- L2

def kmeans_l2(X: np.ndarray, k: int, weights: Optional[np.ndarray] = None, seed: int = 0,
              max_iter: int = 100) -> Tuple[np.ndarray, np.ndarray, Dict[str, float]]:
    """Weighted k-means (k-means++ seeding, Lloyd with Elkan bounds) of float rows X; seeded."""
    from sklearn.cluster import KMeans

    X = np.ascontiguousarray(X, dtype=np.float64)
    k = _check_k(len(np.unique(X, axis=0)), k, "kmeans_l2")
    km = KMeans(n_clusters=k, init="k-means++", n_init=1, max_iter=max_iter, random_state=seed,
                algorithm="elkan")
    labels = km.fit_predict(X, sample_weight=weights)
    return labels.astype(np.int32), km.cluster_centers_.astype(np.float32), {"iterations": float(km.n_iter_),
                                                                             "inertia": float(km.inertia_)}


class L2Centres:
    """Centres sorted by their projection on their principal direction, for :func:`assign_l2`."""

    def __init__(self, centres: np.ndarray):
        C = np.ascontiguousarray(centres, dtype=np.float64)
        if len(C) > 1:
            axis = np.linalg.svd(C - C.mean(0), full_matrices=False)[2][0]
        else:
            axis = np.eye(C.shape[1])[0]
        axis = np.ascontiguousarray(axis / max(np.linalg.norm(axis), 1e-300))
        proj = C @ axis
        self.order = np.argsort(proj, kind="stable").astype(np.int64)
        self.sorted = np.ascontiguousarray(C[self.order])
        self.proj = np.ascontiguousarray(proj[self.order])
        self.axis = axis

    def nearest(self, X: np.ndarray):
        return _kernel.l2_nearest(np.ascontiguousarray(X, dtype=np.float32), self.sorted, self.proj, self.order,
                                  self.axis)


def assign_l2(X: np.ndarray, centres: np.ndarray, prepared: Optional[L2Centres] = None,
              counts: bool = False) -> np.ndarray:
    """Nearest centre (L2, exact in float64, ties to the smaller id) of each row: int32[n]; rows
    with NaN get -1.  Centres are searched in the order of their projection on their principal
    direction and pruned by it (``pyx/abstraction.pyx``); ``counts`` also returns the distances
    computed."""
    lab, computed = (prepared or L2Centres(centres)).nearest(X)
    return (lab, computed) if counts else lab


def assign_l2_blas(X: np.ndarray, centres: np.ndarray, chunk: int = 65536) -> np.ndarray:
    """Nearest centre by the float32 expansion ||c||^2 - 2 x.c (BLAS), as builds before the pruned
    search did; kept for measuring the agreement of the two (near-ties may differ)."""
    X = np.asarray(X, dtype=np.float32)
    C = np.asarray(centres, dtype=np.float32)
    cn = (C * C).sum(1)
    out = np.full(len(X), -1, dtype=np.int32)
    for s in range(0, len(X), chunk):
        x = X[s:s + chunk]
        ok = ~np.isnan(x).any(1)
        d = cn[None, :] - 2.0 * (x[ok] @ C.T)
        out[s:s + chunk][ok] = np.argmin(d, axis=1)
    return out


# ------------------------------------------------------------------------------------- 1-D EMD (L1)

class _SortedCentres:
    def __init__(self, C: np.ndarray):
        C = np.ascontiguousarray(C, dtype=np.float32)
        sums = C.astype(np.float64).sum(1)
        self.order = np.argsort(sums, kind="stable").astype(np.int64)
        self.sorted = np.ascontiguousarray(C[self.order])
        self.sums = np.ascontiguousarray(sums[self.order])

    def nearest_two(self, X: np.ndarray):
        return _kernel.l1_nearest_two(np.ascontiguousarray(X, dtype=np.float32), self.sorted, self.sums, self.order)


def _weighted_means(X, labels, w, k, old):
    sums = np.zeros((k, X.shape[1]))
    np.add.at(sums, labels, X * w[:, None])
    tot = np.bincount(labels, weights=w, minlength=k)
    out = old.astype(np.float64).copy()
    nz = tot > 0
    out[nz] = sums[nz] / tot[nz, None]
    return out.astype(np.float32)


def kmeanspp_l1(X: np.ndarray, k: int, w: np.ndarray, rng: np.random.Generator, max_seed_points: int = 50_000):
    """k-means++ seeding under L1 (next centre drawn with probability ~ weight x distance^2),
    on at most ``max_seed_points`` points drawn by weight."""
    if len(X) > max_seed_points:
        pick = rng.choice(len(X), size=max_seed_points, replace=False, p=w / w.sum())
        X, w = X[pick], np.ones(max_seed_points)
    X = np.ascontiguousarray(X, dtype=np.float32)
    centres = [int(rng.choice(len(X), p=w / w.sum()))]
    d = np.abs(X - X[centres[0]]).sum(1).astype(np.float64)
    for _ in range(1, k):
        p = w * d * d
        if p.sum() <= 0:
            break
        c = int(rng.choice(len(X), p=p / p.sum()))
        centres.append(c)
        d = np.minimum(d, np.abs(X - X[c]).sum(1))
    return X[centres].copy()


def _hamerly_bounds(u: np.ndarray, l: np.ndarray, labels: np.ndarray, drift: np.ndarray, cc: np.ndarray,
                    distance_to_own: Callable[[np.ndarray], np.ndarray]):
    """One bound update of Hamerly's k-means after the centres moved (both k-means loops use it).

    ``u``: float[n] upper bounds on each point's distance to its own centre, ``l``: float[n] lower
    bounds on its distance to any other centre; ``drift``: float[k] how far each centre moved;
    ``cc``: float[k, k] distances between the new centres (overwritten: its diagonal is set to inf);
    ``distance_to_own(rows)``: exact distances of those points to their own centres.  A point keeps
    its label while its upper bound is at most both its lower bound and half the distance from its
    centre to the nearest other one; the others get their upper bound made exact first.  Returns the
    new ``(u, l)``, the points that still need a full search (int64[m]) and how many exact distances
    were computed.
    """
    np.fill_diagonal(cc, np.inf)
    half = 0.5 * cc.min(1) if len(cc) > 1 else np.full(1, np.inf)
    u = u + drift[labels]
    l = l - drift.max()
    bound = np.maximum(half[labels], l)
    need = np.flatnonzero(u > bound)
    if not need.size:
        return u, l, need, 0
    u[need] = distance_to_own(need)
    return u, l, need[u[need] > bound[need]], int(need.size)


def kmeans_emd1d(cdfs: np.ndarray, k: int, weights: Optional[np.ndarray] = None, seed: int = 0,
                 max_iter: int = 50, tol: float = 1e-4) -> Tuple[np.ndarray, np.ndarray, Dict[str, float]]:
    """k-means of histograms under the 1-D EMD; ``cdfs`` are their cumulative sums (float32[n, bins]).

    EMD between two histograms = L1 distance of their cdfs x bin width.  Centres are the weighted
    means of their points' cdfs (the cdf of the mean histogram).  Stops when fewer than ``tol`` of
    the points change cluster.  Stats: iterations, distances computed, distances a naive Lloyd would
    compute, and the fraction skipped by the bounds."""
    X = np.ascontiguousarray(cdfs, dtype=np.float32)
    n = len(X)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    rng = np.random.default_rng(seed)
    k = _check_k(len(np.unique(X, axis=0)) if n <= 200_000 else n, k, "kmeans_emd1d")
    C = kmeanspp_l1(X, k, w, rng)
    k = len(C)
    labels, u, l, computed = _SortedCentres(C).nearest_two(X)
    naive = n * k
    it = 0
    for it in range(1, max_iter + 1):
        newC = _weighted_means(X, labels, w, k, C)
        drift = _kernel.l1_rows(C, newC, np.arange(k, dtype=np.int32))
        C = newC
        computed += k * k + k
        naive += n * k
        u, l, need, tightened = _hamerly_bounds(
            u, l, labels, drift, _kernel.l1_pairwise(C, C), lambda rows: _kernel.l1_rows(X[rows], C, labels[rows]))
        computed += tightened
        changed = 0
        if need.size:
            lab2, d1, d2, c2 = _SortedCentres(C).nearest_two(X[need])
            computed += c2
            changed = int((lab2 != labels[need]).sum())
            labels[need], u[need], l[need] = lab2, d1, d2
        if changed <= tol * n:
            break
    return labels, C, {"iterations": float(it), "distances": float(computed), "naive_distances": float(naive),
                       "skipped_fraction": 1.0 - computed / max(naive, 1)}


def assign_emd1d(cdfs: np.ndarray, centres: np.ndarray, sorted_centres: Optional[_SortedCentres] = None):
    """Nearest centre of each cdf row under L1 (exact, pruned): (int32[n] labels, distances computed)."""
    sc = sorted_centres or _SortedCentres(centres)
    lab, _, _, computed = sc.nearest_two(cdfs)
    return lab, computed


def histogram_cdfs(hist: np.ndarray) -> np.ndarray:
    """Cumulative sums of histograms, float32 (the space in which the 1-D EMD is an L1 distance)."""
    return np.cumsum(np.asarray(hist, dtype=np.float32), axis=1, dtype=np.float32)


# ------------------------------------------------------------------------------- potential-aware EMD

class PotentialSpace:
    """Distributions over next-round buckets with the EMD whose ground distance is the distance
    between next-round centres.

    ``embed``: float[K, D], the next round's centres as points of a normed space (cdfs / bins for
    histogram buckets and L1; feature vectors and L2 for E[HS] / OCHS buckets); ``norm``: 1 or 2.
    ``support``: centres are compared through their heaviest ``support`` buckets (renormalised).
    Distances are the greedy transport cost (cheapest pair first; an upper bound on the exact EMD,
    Ganzfried & Sandholm 2014 use a similar fast approximation); :meth:`exact_emd` gives POT's exact
    value, :meth:`sinkhorn_emd` the entropic one, for measuring the error.
    """

    def __init__(self, embed: np.ndarray, norm: int, support: int = 64, max_candidates: int = 0,
                 use_marginal: bool = False):
        from scipy.spatial.distance import cdist

        self.max_candidates = int(max_candidates)  # > 0: approximate search (EMD to the best-bounded only)
        # LB1 prune (norm 1), same result: it cuts the hold'em flop's greedy EMDs 3x but costs more than
        # it saves against the early-stopped greedy (benchmarks/RESULTS.md), so it is off by default
        self.use_marginal = bool(use_marginal)
        self.embed = np.ascontiguousarray(embed, dtype=np.float64)
        self.norm = int(norm)
        self._metric = "cityblock" if self.norm == 1 else "euclidean"
        self.ground = np.ascontiguousarray(cdist(self.embed, self.embed, self._metric))
        self.support = int(support)
        self.num_buckets = len(self.embed)

    def dist(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Norm distances between rows of a and rows of b (lower bounds of the EMD)."""
        from scipy.spatial.distance import cdist

        return cdist(a, b, self._metric)

    def embed_points(self, ids: np.ndarray, chunk: int = 8192) -> np.ndarray:
        """Mean embedding of points given as next-bucket ids int[n, m] (-1 = none): float64[n, D]."""
        out = np.zeros((len(ids), self.embed.shape[1]))
        for s in range(0, len(ids), chunk):
            x = ids[s:s + chunk]
            ok = x >= 0
            e = self.embed[np.where(ok, x, 0)] * ok[..., None]
            out[s:s + chunk] = e.sum(1) / np.maximum(ok.sum(1), 1)[:, None]
        return out

    def sparse_centres(self, Q: np.ndarray):
        """Centres' heaviest ``support`` buckets: (int32[k, S] ids padded with -1, float64[k, S] masses),
        and their mean embeddings float64[k, D]."""
        k = len(Q)
        S = min(self.support, Q.shape[1])
        cids = np.full((k, S), -1, dtype=np.int32)
        cmass = np.zeros((k, S))
        for j, q in enumerate(Q):
            idx = np.flatnonzero(q > 0)
            if idx.size > S:
                idx = idx[np.argsort(q[idx], kind="stable")[::-1][:S]]
            cids[j, :idx.size] = idx
            cmass[j, :idx.size] = q[idx] / q[idx].sum()
        cemb = (self.embed[np.maximum(cids, 0)] * cmass[..., None]).sum(1)
        return cids, cmass, cemb

    @staticmethod
    def _masses(row):
        b, c = np.unique(row[row >= 0], return_counts=True)
        return b.astype(np.int32), c / c.sum()

    def greedy_emd(self, row: np.ndarray, q: np.ndarray) -> float:
        """Greedy EMD between a point (bucket ids) and a dense centre distribution."""
        pi, pm = self._masses(np.asarray(row))
        qi = np.flatnonzero(q > 0).astype(np.int32)
        return float(_kernel.greedy_emd_pairs(pi, pm, qi, np.ascontiguousarray(q[qi], dtype=np.float64), self.ground))

    def exact_emd(self, row: np.ndarray, q: np.ndarray) -> float:
        """Exact EMD (POT's network simplex ``ot.emd2``)."""
        import ot

        pi, pm = self._masses(np.asarray(row))
        qi = np.flatnonzero(q > 0)
        return float(ot.emd2(pm, q[qi] / q[qi].sum(), self.ground[np.ix_(pi, qi)]))

    def sinkhorn_emd(self, row: np.ndarray, q: np.ndarray, reg: float = 1e-3) -> float:
        """Entropic approximation (POT's ``ot.sinkhorn2``, regularisation ``reg`` x the largest cost)."""
        import ot

        pi, pm = self._masses(np.asarray(row))
        qi = np.flatnonzero(q > 0)
        M = self.ground[np.ix_(pi, qi)]
        scale = max(M.max(), 1e-12)
        return float(ot.sinkhorn2(pm, q[qi] / q[qi].sum(), M / scale, reg, numItermax=5000)) * scale


class PACentres:
    """Potential-aware centres prepared for the search: supports (``cids`` int32[k, S] padded with -1,
    ``cmass`` float64[k, S]), mean embeddings ``cemb`` float64[k, D] (LB0) and per-coordinate sorted
    support values / masses ``cvals``, ``cw`` float64[k, D, S] (LB1, the marginal bound)."""

    def __init__(self, space: "PotentialSpace", Q: np.ndarray):
        self.cids, self.cmass, self.cemb = space.sparse_centres(np.asarray(Q, dtype=np.float64))
        if space.norm == 1:
            self.cvals, self.cw = _kernel.pa_centre_marginals(self.cids, self.cmass, space.embed)
        else:  # LB1 is for L1 ground distances only; unused
            self.cvals = self.cw = np.zeros((len(self.cids), 1, 1))


def pa_nearest(space: PotentialSpace, ids, pc: PACentres):
    """Nearest and second-nearest centre (greedy EMD, pruned by LB0 and LB1) of every point.

    ``ids``: int[n, m] next-round bucket ids (-1 = none); ``pc``: centres from :func:`prepare_pa_centres`.
    Returns (labels int32[n], d1 and d2 float[n] = EMD to the nearest and second-nearest centre found,
    counts int64[3] = centres examined, LB1 bounds, EMDs computed); :func:`assign_pa_emd` returns the
    labels alone."""
    return _kernel.pa_search(np.ascontiguousarray(ids, dtype=np.int32), space.embed, space.norm, pc.cids, pc.cmass,
                             pc.cemb, pc.cvals, pc.cw, space.ground, space.max_candidates, space.use_marginal)


def _pa_rows(space, ids, pc: PACentres, labels):
    return _kernel.pa_rows(np.ascontiguousarray(ids, dtype=np.int32), np.ascontiguousarray(labels, dtype=np.int32),
                           pc.cids, pc.cmass, space.ground)


def kmeans_pa_emd(ids: np.ndarray, space: PotentialSpace, k: int, weights: Optional[np.ndarray] = None,
                  seed: int = 0, max_iter: int = 20, tol: float = 1e-3, on_iteration=None):
    """Potential-aware k-means: points are next-round bucket ids int[n, m] (-1 = none).

    Seeding: k-means++ under the lower-bound (embedding) distance; Lloyd: centres are the weighted
    mean distributions, assignment by greedy EMD with Hamerly's bounds (upper bound = distance to
    the own centre plus its drift, lower bound = second-best distance minus the largest drift,
    centre-to-centre gaps from LB0, which only skips less); the points that fail the test are
    searched again (:func:`pa_search`: LB0 order, LB1 prune, greedy EMD).  Returns (labels, centres
    float32[k, K] distributions, stats: iterations, EMDs computed, EMDs a plain Lloyd would compute,
    fraction skipped, LB1 bounds computed, CPU seconds).  ``on_iteration(stats)`` is called after the
    first assignment and each Lloyd iteration (progress, measurements)."""
    import time

    cpu0 = time.process_time()
    ids = np.ascontiguousarray(ids, dtype=np.int32)
    n = len(ids)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    rng = np.random.default_rng(seed)
    pemb = space.embed_points(ids)
    k = _check_k(len(np.unique(np.round(pemb, 9), axis=0)), k, "kmeans_pa_emd")
    seed_pool = np.arange(n) if n <= 50_000 else rng.choice(n, 50_000, replace=False, p=w / w.sum())
    sw = w[seed_pool]
    chosen = [int(seed_pool[rng.choice(len(seed_pool), p=sw / sw.sum())])]
    d = space.dist(pemb[seed_pool], pemb[[chosen[0]]])[:, 0]
    for _ in range(1, k):
        p = sw * d * d
        if p.sum() <= 0:
            break
        c = int(seed_pool[rng.choice(len(seed_pool), p=p / p.sum())])
        chosen.append(c)
        d = np.minimum(d, space.dist(pemb[seed_pool], pemb[[c]])[:, 0])
    k = len(chosen)
    K = space.num_buckets
    Q = np.zeros((k, K))
    for j, c in enumerate(chosen):
        b, m = space._masses(ids[c])
        Q[j, b] = m
    cpu_seed = time.process_time() - cpu0
    pc = PACentres(space, Q)
    labels, u, l, counts = pa_nearest(space, ids, pc)
    counts = counts.astype(np.float64)
    computed = counts[2]
    naive = n * k

    def report(it, changed):
        if on_iteration is not None:
            on_iteration({"iteration": it, "changed": changed, "distances": float(computed), "naive_distances": float(naive),
                          "lb1_bounds": float(counts[1]), "cpu_seconds": time.process_time() - cpu0})

    report(0, n)
    ok = ids >= 0
    cnt = np.maximum(ok.sum(1), 1)
    rows = np.repeat(np.arange(n), ids.shape[1])[ok.reshape(-1)]
    cols = ids.reshape(-1)[ok.reshape(-1)].astype(np.int64)
    pw = (w / cnt)[rows]
    it = 0
    for it in range(1, max_iter + 1):
        newQ = np.bincount(labels[rows].astype(np.int64) * K + cols, weights=pw, minlength=k * K).reshape(k, K)
        tot = newQ.sum(1)
        newQ[tot > 0] /= tot[tot > 0, None]
        newQ[tot == 0] = Q[tot == 0]
        npc = PACentres(space, newQ)
        drift = np.array([_kernel.greedy_emd_pairs(pc.cids[j][pc.cids[j] >= 0], pc.cmass[j][pc.cids[j] >= 0],
                                                   npc.cids[j][npc.cids[j] >= 0], npc.cmass[j][npc.cids[j] >= 0],
                                                   space.ground) for j in range(k)])
        computed += k
        Q, pc = newQ, npc
        naive += n * k
        u, l, need, tightened = _hamerly_bounds(
            u, l, labels, drift, space.dist(pc.cemb, pc.cemb), lambda rows: _pa_rows(space, ids[rows], pc, labels[rows]))
        computed += tightened
        changed = 0
        if need.size:
            lab2, d1, d2, c2 = pa_nearest(space, ids[need], pc)
            counts += c2
            computed += c2[2]
            changed = int((lab2 != labels[need]).sum())
            labels[need], u[need], l[need] = lab2, d1, d2
        report(it, changed)
        if changed <= tol * n:
            break
    return labels, Q.astype(np.float32), {"iterations": float(it), "distances": float(computed),
                                         "naive_distances": float(naive),
                                         "skipped_fraction": 1.0 - computed / max(naive, 1),
                                         "lb1_bounds": float(counts[1]), "candidates_examined": float(counts[0]),
                                         "seeding_cpu_seconds": cpu_seed,
                                         "cpu_seconds": time.process_time() - cpu0}


def prepare_pa_centres(space: PotentialSpace, centres: np.ndarray) -> PACentres:
    """Centres (float[k, K] distributions) prepared once for :func:`assign_pa_emd`."""
    return PACentres(space, centres)


def assign_pa_emd(ids: np.ndarray, space: PotentialSpace, centres: np.ndarray, prepared=None, counts: bool = False):
    """Nearest potential-aware centre (greedy EMD, pruned by LB0 and LB1) of each point:
    (int32[n], EMDs computed), or with ``counts`` (int32[n], int64[3] = centres examined, LB1s, EMDs)."""
    pc = prepared if prepared is not None else prepare_pa_centres(space, centres)
    lab, _, _, c = pa_nearest(space, np.ascontiguousarray(ids, dtype=np.int32), pc)
    return (lab, c) if counts else (lab, int(c[2]))
