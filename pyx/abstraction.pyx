# cython: boundscheck=False, wraparound=False, cdivision=True, language_level=3
"""Nearest-centre search under the L1 distance (the 1-D EMD of histograms as cumulative sums).

The L1 distance of two vectors is at least the absolute difference of their coordinate sums (for
cumulative histograms: the difference of their means), so with the centres sorted by sum the
search walks outwards from the point's sum and stops once that bound exceeds the second-best
distance found; a distance sum also stops early once it exceeds it.  Exact result, most distance
computations skipped (the count of full and partial distances is returned).
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport fabs
from libc.stdint cimport int64_t, int32_t

cnp.import_array()


cdef inline double _l1_bounded(const float *a, const float *b, Py_ssize_t d, double bound) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t j
    for j in range(d):
        s += fabs(a[j] - b[j])
        if s >= bound:
            return s
    return s


def l1_nearest_two(const float[:, ::1] X, const float[:, ::1] C_sorted, const double[::1] csum,
                   const int64_t[::1] order):
    """For each row of X: (label, distance to nearest, distance to second nearest) under L1.

    C_sorted: centres sorted by coordinate sum ``csum`` (ascending); ``order[i]`` is the original id
    of sorted centre i.  Returns (int32[n] labels, float64[n] d1, float64[n] d2, int64 distances
    computed)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], k = C_sorted.shape[0]
    cdef cnp.ndarray[int32_t, ndim=1] lab_a = np.empty(n, dtype=np.int32)
    cdef cnp.ndarray[double, ndim=1] d1_a = np.empty(n), d2_a = np.empty(n)
    cdef int32_t[::1] lab = lab_a
    cdef double[::1] d1 = d1_a, d2 = d2_a
    cdef Py_ssize_t i, j, lo, hi, mid, left, right, best
    cdef double s, b1, b2, gl, gr, dist
    cdef int64_t computed = 0
    with nogil:
        for i in range(n):
            s = 0.0
            for j in range(d):
                s += X[i, j]
            lo = 0
            hi = k
            while lo < hi:
                mid = (lo + hi) // 2
                if csum[mid] < s:
                    lo = mid + 1
                else:
                    hi = mid
            left = lo - 1
            right = lo
            b1 = 1e300
            b2 = 1e300
            best = 0
            while left >= 0 or right < k:
                gl = s - csum[left] if left >= 0 else 1e300
                gr = csum[right] - s if right < k else 1e300
                if gl <= gr:
                    if gl >= b2:
                        break
                    dist = _l1_bounded(&X[i, 0], &C_sorted[left, 0], d, b2)
                    computed += 1
                    if dist < b1:
                        b2 = b1
                        b1 = dist
                        best = left
                    elif dist < b2:
                        b2 = dist
                    left -= 1
                else:
                    if gr >= b2:
                        break
                    dist = _l1_bounded(&X[i, 0], &C_sorted[right, 0], d, b2)
                    computed += 1
                    if dist < b1:
                        b2 = b1
                        b1 = dist
                        best = right
                    elif dist < b2:
                        b2 = dist
                    right += 1
            lab[i] = <int32_t>order[best]
            d1[i] = b1
            d2[i] = b2 if k > 1 else 1e300
    return lab_a, d1_a, d2_a, computed


def l1_rows(const float[:, ::1] X, const float[:, ::1] C, const int32_t[::1] labels):
    """L1 distance of each row of X to centre labels[i]: float64[n]."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], i
    cdef cnp.ndarray[double, ndim=1] out_a = np.empty(n)
    cdef double[::1] out = out_a
    with nogil:
        for i in range(n):
            out[i] = _l1_bounded(&X[i, 0], &C[labels[i], 0], d, 1e300)
    return out_a


def l1_pairwise(const float[:, ::1] A, const float[:, ::1] B):
    """All L1 distances: float64[len(A), len(B)]."""
    cdef Py_ssize_t n = A.shape[0], m = B.shape[0], d = A.shape[1], i, j
    cdef cnp.ndarray[double, ndim=2] out_a = np.empty((n, m))
    cdef double[:, ::1] out = out_a
    with nogil:
        for i in range(n):
            for j in range(m):
                out[i, j] = _l1_bounded(&A[i, 0], &B[j, 0], d, 1e300)
    return out_a


# ------------------------------------------------------------------ potential-aware EMD (greedy)
from libc.stdlib cimport malloc, free, qsort

cdef struct _Pair:
    double d
    int i
    int j

cdef int _cmp_pair(const void *a, const void *b) noexcept nogil:
    cdef double x = (<_Pair *>a).d, y = (<_Pair *>b).d
    return -1 if x < y else (1 if x > y else 0)

cdef struct _Key:
    double v
    int i

cdef int _cmp_key(const void *a, const void *b) noexcept nogil:
    cdef double x = (<_Key *>a).v, y = (<_Key *>b).v
    return -1 if x < y else (1 if x > y else 0)

cdef int _cmp_int(const void *a, const void *b) noexcept nogil:
    return (<int *>a)[0] - (<int *>b)[0]


cdef int _compress(const int32_t *raw, int m, int *ids, double *mass) noexcept nogil:
    """Unique ids (>= 0) of a row with their frequencies; returns the count."""
    cdef int n = 0, i, u = 0
    for i in range(m):
        if raw[i] >= 0:
            ids[n] = raw[i]
            n += 1
    if n == 0:
        return 0
    qsort(ids, n, sizeof(int), _cmp_int)
    for i in range(n):
        if u > 0 and ids[u - 1] == ids[i]:
            mass[u - 1] += 1.0
        else:
            ids[u] = ids[i]
            mass[u] = 1.0
            u += 1
    for i in range(u):
        mass[i] /= n
    return u


cdef double _greedy(const int *pi, const double *pm, int np_, const int32_t *qi, const double *qm, int nq,
                    const double[:, ::1] ground, _Pair *buf, double *rp, double *rq) noexcept nogil:
    """Greedy transport (cheapest remaining pair first): a feasible plan, so an upper bound on the EMD."""
    cdef int a, b, t = 0, n
    cdef double cost = 0.0, f
    for a in range(np_):
        rp[a] = pm[a]
        for b in range(nq):
            buf[t].d = ground[pi[a], qi[b]]
            buf[t].i = a
            buf[t].j = b
            t += 1
    for b in range(nq):
        rq[b] = qm[b]
    qsort(buf, t, sizeof(_Pair), _cmp_pair)
    for n in range(t):
        a = buf[n].i
        b = buf[n].j
        if rp[a] <= 0.0 or rq[b] <= 0.0:
            continue
        f = rp[a] if rp[a] < rq[b] else rq[b]
        cost += f * buf[n].d
        rp[a] -= f
        rq[b] -= f
    return cost


def pa_nearest_two(const int32_t[:, ::1] pts, const double[:, ::1] lb, const int32_t[:, ::1] cids,
                   const double[:, ::1] cmass, const double[:, ::1] ground, int max_candidates=0):
    """Nearest and second-nearest potential-aware centre of each point under the greedy EMD.

    max_candidates > 0 computes the EMD only to that many centres of smallest lower bound
    (approximate search; 0 = exact).

    pts: next-round bucket ids of each point (int32[n, m], -1 = none); lb: float64[n, k] lower bounds
    (distance of mean embeddings); cids / cmass: centres' support (int32[k, S], -1 padded) and masses.
    Centres are tried in increasing lower bound and the search stops once the bound reaches the
    second-best distance.  Returns (int32 labels, float64 d1, float64 d2, int64 EMDs computed)."""
    cdef Py_ssize_t n = pts.shape[0], m = pts.shape[1], k = lb.shape[1], S = cids.shape[1]
    cdef cnp.ndarray[int32_t, ndim=1] lab_a = np.empty(n, dtype=np.int32)
    cdef cnp.ndarray[double, ndim=1] d1_a = np.empty(n), d2_a = np.empty(n)
    cdef int32_t[::1] lab = lab_a
    cdef double[::1] d1 = d1_a, d2 = d2_a
    cdef int64_t computed = 0
    cdef Py_ssize_t i, c, r
    cdef int np_, nq, best
    cdef Py_ssize_t limit = k if max_candidates <= 0 or max_candidates > k else max_candidates
    cdef double b1, b2, dist
    cdef int *ids = <int *>malloc(m * sizeof(int))
    cdef double *mass = <double *>malloc(m * sizeof(double))
    cdef _Key *keys = <_Key *>malloc(k * sizeof(_Key))
    cdef _Pair *buf = <_Pair *>malloc(m * S * sizeof(_Pair))
    cdef double *rp = <double *>malloc(m * sizeof(double))
    cdef double *rq = <double *>malloc(S * sizeof(double))
    cdef int *nsup = <int *>malloc(k * sizeof(int))
    try:
        with nogil:
            for c in range(k):
                nq = 0
                while nq < S and cids[c, nq] >= 0:
                    nq += 1
                nsup[c] = nq
            for i in range(n):
                np_ = _compress(&pts[i, 0], m, ids, mass)
                for c in range(k):
                    keys[c].v = lb[i, c]
                    keys[c].i = c
                qsort(keys, k, sizeof(_Key), _cmp_key)
                b1 = 1e300
                b2 = 1e300
                best = keys[0].i
                for r in range(limit):
                    if keys[r].v >= b2:
                        break
                    c = keys[r].i
                    dist = _greedy(ids, mass, np_, &cids[c, 0], &cmass[c, 0], nsup[c], ground, buf, rp, rq)
                    computed += 1
                    if dist < b1:
                        b2 = b1
                        b1 = dist
                        best = c
                    elif dist < b2:
                        b2 = dist
                lab[i] = best
                d1[i] = b1
                d2[i] = b2
    finally:
        free(ids); free(mass); free(keys); free(buf); free(rp); free(rq); free(nsup)
    return lab_a, d1_a, d2_a, computed


def greedy_emd_pairs(const int32_t[::1] pi, const double[::1] pm, const int32_t[::1] qi, const double[::1] qm,
                     const double[:, ::1] ground):
    """Greedy transport cost between two sparse distributions (ids, masses): an upper bound on the EMD."""
    cdef int np_ = pi.shape[0], nq = qi.shape[0], a
    cdef int *ids = <int *>malloc(max(np_, 1) * sizeof(int))
    cdef _Pair *buf = <_Pair *>malloc(max(np_ * nq, 1) * sizeof(_Pair))
    cdef double *rp = <double *>malloc(max(np_, 1) * sizeof(double))
    cdef double *rq = <double *>malloc(max(nq, 1) * sizeof(double))
    cdef double out
    for a in range(np_):
        ids[a] = pi[a]
    out = _greedy(ids, &pm[0], np_, &qi[0], &qm[0], nq, ground, buf, rp, rq)
    free(ids); free(buf); free(rp); free(rq)
    return out
