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

from typing import Dict, Optional, Tuple

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


def assign_l2(X: np.ndarray, centres: np.ndarray, chunk: int = 65536) -> np.ndarray:
    """Nearest centre (L2) of each row: int32[n]; rows with NaN get -1."""
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
        cc = _kernel.l1_pairwise(C, C)
        np.fill_diagonal(cc, np.inf)
        half = 0.5 * cc.min(1) if k > 1 else np.full(1, np.inf)
        computed += k * k + k
        naive += n * k
        u = u + drift[labels]
        l = l - drift.max()
        bound = np.maximum(half[labels], l)
        need = np.flatnonzero(u > bound)
        if need.size:
            u[need] = _kernel.l1_rows(X[need], C, labels[need])
            computed += need.size
            need = need[u[need] > bound[need]]
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

    ``embed``: float32[K, D], the next round's centres as points of a normed space (cdfs / bins for
    histogram buckets and L1; feature vectors and L2 for E[HS] / OCHS buckets); ``norm``: 1 or 2.
    ``support``: centres are compared through their heaviest ``support`` buckets (renormalised).
    """

    def __init__(self, embed: np.ndarray, norm: int, support: int = 64):
        self.embed = np.asarray(embed, dtype=np.float64)
        self.norm = int(norm)
        K = len(self.embed)
        diff = self.embed[:, None, :] - self.embed[None, :, :]
        self.ground = (np.abs(diff).sum(-1) if self.norm == 1 else np.sqrt((diff ** 2).sum(-1)))
        self.support = int(support)
        self.num_buckets = K

    def dist(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Norm distances between rows of a and rows of b (the lower bounds)."""
        diff = a[:, None, :] - b[None, :, :]
        return np.abs(diff).sum(-1) if self.norm == 1 else np.sqrt((diff ** 2).sum(-1))

    def point_masses(self, ids: np.ndarray):
        """Sparse distributions of points given as next-bucket ids int[n, m] (-1 = none): lists of
        (bucket ids, masses) and the mean embeddings float64[n, D]."""
        out, emb = [], np.zeros((len(ids), self.embed.shape[1]))
        for i, row in enumerate(ids):
            row = row[row >= 0]
            b, c = np.unique(row, return_counts=True)
            m = c / c.sum()
            out.append((b, m))
            emb[i] = m @ self.embed[b]
        return out, emb

    def sparse_centre(self, q: np.ndarray):
        idx = np.flatnonzero(q > 0)
        if idx.size > self.support:
            idx = idx[np.argsort(q[idx])[::-1][: self.support]]
        m = q[idx] / q[idx].sum()
        return idx, m

    def emd(self, a, b) -> float:
        import ot

        (ia, ma), (ib, mb) = a, b
        return float(ot.emd2(ma, mb, self.ground[np.ix_(ia, ib)]))


def _pa_nearest(space: PotentialSpace, pts, pemb, centres_sparse, cemb, idx):
    """Exact nearest and second-nearest centre of points ``idx``: LB-ordered EMD search."""
    lb = space.dist(pemb[idx], cemb)
    lab = np.empty(len(idx), dtype=np.int32)
    d1 = np.empty(len(idx))
    d2 = np.empty(len(idx))
    computed = 0
    for r, i in enumerate(idx):
        order = np.argsort(lb[r])
        b1 = b2 = np.inf
        best = int(order[0])
        for c in order:
            if lb[r, c] >= b2:
                break
            d = space.emd(pts[i], centres_sparse[c])
            computed += 1
            if d < b1:
                b2, b1, best = b1, d, int(c)
            elif d < b2:
                b2 = d
        lab[r], d1[r], d2[r] = best, b1, b2
    return lab, d1, d2, computed


def kmeans_pa_emd(ids: np.ndarray, space: PotentialSpace, k: int, weights: Optional[np.ndarray] = None,
                  seed: int = 0, max_iter: int = 20, tol: float = 1e-3):
    """Potential-aware k-means: points are next-round bucket ids int[n, m] (-1 = none).

    Seeding: k-means++ under the lower-bound (embedding) distance; Lloyd: centres are the weighted
    mean distributions, assignment by exact EMD with Hamerly's bounds.  Returns (labels, centres
    float32[k, K] distributions, stats with exact EMDs computed and skipped)."""
    n = len(ids)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    rng = np.random.default_rng(seed)
    pts, pemb = space.point_masses(ids)
    # seeding in the embedding (a lower bound of the EMD)
    k = _check_k(len(np.unique(np.round(pemb, 9), axis=0)), k, "kmeans_pa_emd")
    first = int(rng.choice(n, p=w / w.sum()))
    chosen = [first]
    d = space.dist(pemb, pemb[[first]])[:, 0]
    for _ in range(1, k):
        p = w * d * d
        if p.sum() <= 0:
            break
        c = int(rng.choice(n, p=p / p.sum()))
        chosen.append(c)
        d = np.minimum(d, space.dist(pemb, pemb[[c]])[:, 0])
    k = len(chosen)
    K = space.num_buckets
    Q = np.zeros((k, K))
    for j, c in enumerate(chosen):
        Q[j, pts[c][0]] = pts[c][1]
    sparse = [space.sparse_centre(q) for q in Q]
    cemb = np.array([m @ space.embed[i] for i, m in sparse])
    labels, u, l, computed = _pa_nearest(space, pts, pemb, sparse, cemb, np.arange(n))
    naive = n * k
    it = 0
    for it in range(1, max_iter + 1):
        newQ = np.zeros((k, K))
        for i, (b, m) in enumerate(pts):
            newQ[labels[i], b] += w[i] * m
        tot = newQ.sum(1)
        newQ[tot > 0] /= tot[tot > 0, None]
        newQ[tot == 0] = Q[tot == 0]
        new_sparse = [space.sparse_centre(q) for q in newQ]
        drift = np.array([space.emd(sparse[j], new_sparse[j]) for j in range(k)])
        computed += k
        Q, sparse = newQ, new_sparse
        cemb = np.array([m @ space.embed[i] for i, m in sparse])
        cc = space.dist(cemb, cemb)
        np.fill_diagonal(cc, np.inf)
        half = 0.5 * cc.min(1) if k > 1 else np.full(1, np.inf)  # a lower bound: still safe
        naive += n * k
        u = u + drift[labels]
        l = l - drift.max()
        bound = np.maximum(half[labels], l)
        need = np.flatnonzero(u > bound)
        for i in need:
            u[i] = space.emd(pts[i], sparse[labels[i]])
        computed += need.size
        need = need[u[need] > bound[need]]
        changed = 0
        if need.size:
            lab2, d1, d2, c2 = _pa_nearest(space, pts, pemb, sparse, cemb, need)
            computed += c2
            changed = int((lab2 != labels[need]).sum())
            labels[need], u[need], l[need] = lab2, d1, d2
        if changed <= tol * n:
            break
    return labels, Q.astype(np.float32), {"iterations": float(it), "distances": float(computed),
                                         "naive_distances": float(naive),
                                         "skipped_fraction": 1.0 - computed / max(naive, 1)}


def assign_pa_emd(ids: np.ndarray, space: PotentialSpace, centres: np.ndarray, prepared=None):
    """Nearest potential-aware centre (exact EMD, LB-pruned) of each point: (int32[n], EMDs computed)."""
    if prepared is None:
        prepared = prepare_pa_centres(space, centres)
    sparse, cemb = prepared
    pts, pemb = space.point_masses(ids)
    lab, _, _, computed = _pa_nearest(space, pts, pemb, sparse, cemb, np.arange(len(ids)))
    return lab, computed


def prepare_pa_centres(space: PotentialSpace, centres: np.ndarray):
    sparse = [space.sparse_centre(np.asarray(q, dtype=np.float64)) for q in centres]
    cemb = np.array([m @ space.embed[i] for i, m in sparse])
    return sparse, cemb
