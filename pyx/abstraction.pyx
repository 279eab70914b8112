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
from libc.math cimport fabs, sqrt
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


cdef inline Py_ssize_t _lower_bound(const double *a, Py_ssize_t k, double x) noexcept nogil:
    """First index of the ascending ``a[k]`` whose value is not below ``x`` (``k`` when none)."""
    cdef Py_ssize_t lo = 0, hi = k, mid
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


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
    cdef Py_ssize_t i, j, lo, left, right, best
    cdef double s, b1, b2, gl, gr, dist
    cdef int64_t computed = 0
    with nogil:
        for i in range(n):
            s = 0.0
            for j in range(d):
                s += X[i, j]
            lo = _lower_bound(&csum[0], k, s)
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


cdef inline bint _pair_less(const _Pair *x, const _Pair *y) noexcept nogil:
    # total order (distance, source, sink): the greedy plan is defined even with equal distances
    return x.d < y.d or (x.d == y.d and (x.i < y.i or (x.i == y.i and x.j < y.j)))


cdef inline void _pair_swap(_Pair *buf, int x, int y) noexcept nogil:
    cdef _Pair t = buf[x]
    buf[x] = buf[y]
    buf[y] = t


cdef double _greedy(const int *pi, const double *pm, int np_, const int32_t *qi, const double *qm, int nq,
                    const double[:, ::1] ground, _Pair *buf, double *rp, double *rq, int *stk,
                    double stop) noexcept nogil:
    """Greedy transport (cheapest remaining pair first): a feasible plan, so an upper bound on the EMD.

    Pairs are consumed in increasing (distance, source, sink) order by an incremental quicksort (the
    leftmost unsorted segment is partitioned first), so the sort stops with the plan: once all mass
    has moved, or once the cost reaches ``stop`` (the caller only needs to know it is >= stop).
    ``stk`` holds 2 x np_ x nq ints."""
    cdef int a, b, t = 0, sp = 0, lo, hi, mid, x, y, store
    cdef double cost = 0.0, f, left = 0.0
    cdef _Pair piv
    for a in range(np_):
        rp[a] = pm[a]
        left += pm[a]
        for b in range(nq):
            buf[t].d = ground[pi[a], qi[b]]
            buf[t].i = a
            buf[t].j = b
            t += 1
    for b in range(nq):
        rq[b] = qm[b]
    if t == 0:
        return 0.0
    stk[0] = 0
    stk[1] = t
    sp = 1
    while sp > 0:
        sp -= 1
        lo = stk[2 * sp]
        hi = stk[2 * sp + 1]
        if hi - lo > 16:
            mid = lo + (hi - lo) // 2
            # median of three to hi - 1
            if _pair_less(&buf[mid], &buf[lo]):
                _pair_swap(buf, mid, lo)
            if _pair_less(&buf[hi - 1], &buf[lo]):
                _pair_swap(buf, hi - 1, lo)
            if _pair_less(&buf[mid], &buf[hi - 1]):
                _pair_swap(buf, mid, hi - 1)
            piv = buf[hi - 1]
            store = lo
            for x in range(lo, hi - 1):
                if _pair_less(&buf[x], &piv):
                    _pair_swap(buf, x, store)
                    store += 1
            _pair_swap(buf, store, hi - 1)
            # right part, the pivot alone, then the left part on top (processed first)
            if store + 1 < hi:
                stk[2 * sp] = store + 1
                stk[2 * sp + 1] = hi
                sp += 1
            stk[2 * sp] = store
            stk[2 * sp + 1] = store + 1
            sp += 1
            if lo < store:
                stk[2 * sp] = lo
                stk[2 * sp + 1] = store
                sp += 1
            continue
        for x in range(lo + 1, hi):  # insertion sort of a short segment, then consume it
            piv = buf[x]
            y = x - 1
            while y >= lo and _pair_less(&piv, &buf[y]):
                buf[y + 1] = buf[y]
                y -= 1
            buf[y + 1] = piv
        for x in range(lo, hi):
            a = buf[x].i
            b = buf[x].j
            if rp[a] <= 0.0 or rq[b] <= 0.0:
                continue
            f = rp[a] if rp[a] < rq[b] else rq[b]
            cost += f * buf[x].d
            rp[a] -= f
            rq[b] -= f
            left -= f
            if left <= 1e-13 or cost >= stop:
                return cost
    return cost


def greedy_emd_pairs(const int32_t[::1] pi, const double[::1] pm, const int32_t[::1] qi, const double[::1] qm,
                     const double[:, ::1] ground):
    """Greedy transport cost between two sparse distributions (ids, masses): an upper bound on the EMD."""
    cdef int np_ = pi.shape[0], nq = qi.shape[0], a
    cdef int *ids = <int *>malloc(max(np_, 1) * sizeof(int))
    cdef _Pair *buf = <_Pair *>malloc(max(np_ * nq, 1) * sizeof(_Pair))
    cdef int *stk = <int *>malloc(2 * max(np_ * nq, 1) * sizeof(int))
    cdef double *rp = <double *>malloc(max(np_, 1) * sizeof(double))
    cdef double *rq = <double *>malloc(max(nq, 1) * sizeof(double))
    cdef double out
    for a in range(np_):
        ids[a] = pi[a]
    out = _greedy(ids, &pm[0], np_, &qi[0], &qm[0], nq, ground, buf, rp, rq, stk, 1e300)
    free(ids); free(buf); free(stk); free(rp); free(rq)
    return out


# ------------------------------------------- potential-aware search with the marginal lower bound
#
# Ground distance = L1 between next-round embeddings e_t (norm 1) or L2 (norm 2).  Two lower bounds
# of the EMD between a point P and a centre Q, cheapest first:
#   LB0 = ||E_P[e] - E_Q[e]||  (distance of the mean embeddings; any norm, by convexity);
#   LB1 = sum_j W1(P o e_j^-1, Q o e_j^-1)  (norm 1 only): any transport plan pays at least the
#         1-D EMD of every coordinate's projection, and the L1 ground cost is the sum over
#         coordinates.  LB1 >= LB0 (the 1-D EMD of a coordinate is at least its mean difference).
# Candidates leave a heap in increasing LB0; LB1 (stopped once it reaches the second-best distance)
# discards most of them before the greedy transport is computed.  Both prunes are exact: the
# nearest two centres are those of the unpruned search.

cdef inline bint _key_less(_Key a, _Key b) noexcept nogil:
    return a.v < b.v or (a.v == b.v and a.i < b.i)


cdef void _sift_down(_Key *h, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    cdef Py_ssize_t c
    cdef _Key t
    while True:
        c = 2 * i + 1
        if c >= n:
            return
        if c + 1 < n and _key_less(h[c + 1], h[c]):
            c += 1
        if _key_less(h[c], h[i]):
            t = h[c]
            h[c] = h[i]
            h[i] = t
            i = c
        else:
            return


cdef void _sort_pairs_by_value(double *v, double *w, int n) noexcept nogil:
    """Insertion sort of (value, weight) by value (n <= a few dozen)."""
    cdef int a, b
    cdef double tv, tw
    for a in range(1, n):
        tv = v[a]
        tw = w[a]
        b = a - 1
        while b >= 0 and v[b] > tv:
            v[b + 1] = v[b]
            w[b + 1] = w[b]
            b -= 1
        v[b + 1] = tv
        w[b + 1] = tw


cdef double _w1_sorted(const double *pv, const double *pw, int np_, const double *qv, const double *qw,
                       int nq) noexcept nogil:
    """1-D EMD of two discrete distributions given by values sorted ascending and their masses."""
    cdef int a = 0, b = 0
    cdef double fp = 0.0, fq = 0.0, prev, x, s = 0.0, diff
    if np_ == 0 or nq == 0:
        return 0.0
    prev = pv[0] if pv[0] < qv[0] else qv[0]
    while a < np_ or b < nq:
        if b >= nq or (a < np_ and pv[a] <= qv[b]):
            x = pv[a]
            diff = fp - fq
            s += (diff if diff >= 0 else -diff) * (x - prev)
            fp += pw[a]
            a += 1
        else:
            x = qv[b]
            diff = fp - fq
            s += (diff if diff >= 0 else -diff) * (x - prev)
            fq += qw[b]
            b += 1
        prev = x
    return s


cdef double _marginal_lb(const double *pv, const double *pw, int np_, const double[:, :, ::1] cvals,
                         const double[:, :, ::1] cw, Py_ssize_t c, int nq, Py_ssize_t D, double stop) noexcept nogil:
    """Sum over coordinates of the 1-D EMDs (stops once it reaches ``stop``)."""
    cdef double s = 0.0
    cdef Py_ssize_t j
    for j in range(D):
        s += _w1_sorted(&pv[j * np_], &pw[j * np_], np_, &cvals[c, j, 0], &cw[c, j, 0], nq)
        if s >= stop:
            return s
    return s


cdef inline int _support_size(const int32_t *cid, Py_ssize_t S) noexcept nogil:
    """Entries of a centre's support row ``cid[S]`` before its -1 padding."""
    cdef int a = 0
    while a < S and cid[a] >= 0:
        a += 1
    return a


cdef inline void _mean_embedding(const int *ids, const double *mass, int np_, const double[:, ::1] embed,
                                 Py_ssize_t D, double *pe) noexcept nogil:
    """``pe[D]``: the point's mass-weighted mean of the next-round centre embeddings ``embed[ids]``."""
    cdef Py_ssize_t j
    cdef int a
    cdef double s
    for j in range(D):
        s = 0.0
        for a in range(np_):
            s += mass[a] * embed[ids[a], j]
        pe[j] = s


cdef inline void _point_marginals(const int *ids, const double *mass, int np_, const double[:, ::1] embed,
                                  Py_ssize_t D, double *pv, double *pw) noexcept nogil:
    """Per embedding dimension ``j``, the point's (value, mass) pairs sorted by value at ``pv / pw[j * np_]``
    (the 1-D marginals LB1 compares)."""
    cdef Py_ssize_t j
    cdef int a
    for j in range(D):
        for a in range(np_):
            pv[j * np_ + a] = embed[ids[a], j]
            pw[j * np_ + a] = mass[a]
        _sort_pairs_by_value(&pv[j * np_], &pw[j * np_], np_)


cdef inline double _embedding_distance(const double *pe, const double *ce, Py_ssize_t D, int norm) noexcept nogil:
    """LB0: L1 (``norm`` 1) or L2 distance of two mean embeddings ``[D]``."""
    cdef Py_ssize_t j
    cdef double s = 0.0, t
    if norm == 1:
        for j in range(D):
            t = pe[j] - ce[j]
            s += t if t >= 0 else -t
        return s
    for j in range(D):
        t = pe[j] - ce[j]
        s += t * t
    return sqrt(s)


def pa_centre_marginals(const int32_t[:, ::1] cids, const double[:, ::1] cmass, const double[:, ::1] embed):
    """Per centre and coordinate, its support's embedding values sorted ascending with their masses:
    (float64[k, D, S] values, float64[k, D, S] masses; entries past the support are padding)."""
    cdef Py_ssize_t k = cids.shape[0], S = cids.shape[1], D = embed.shape[1], c, j, b
    cdef int nq
    cdef cnp.ndarray[double, ndim=3] v_a = np.zeros((k, D, S)), w_a = np.zeros((k, D, S))
    cdef double[:, :, ::1] v = v_a, w = w_a
    with nogil:
        for c in range(k):
            nq = 0
            while nq < S and cids[c, nq] >= 0:
                nq += 1
            for j in range(D):
                for b in range(nq):
                    v[c, j, b] = embed[cids[c, b], j]
                    w[c, j, b] = cmass[c, b]
                _sort_pairs_by_value(&v[c, j, 0], &w[c, j, 0], nq)
    return v_a, w_a


def pa_search(const int32_t[:, ::1] pts, const double[:, ::1] embed, int norm, const int32_t[:, ::1] cids,
              const double[:, ::1] cmass, const double[:, ::1] cemb, const double[:, :, ::1] cvals,
              const double[:, :, ::1] cw, const double[:, ::1] ground, int max_candidates=0, bint use_marginal=True,
              bint use_stop=True):
    """Nearest and second-nearest centre of each point under the greedy EMD, pruned by LB0 and LB1.

    pts: next-round bucket ids (int32[n, m], -1 = none); embed: float64[K, D] next-round centres;
    norm: 1 (L1 ground, LB1 used) or 2; cids / cmass: centres' supports (int32[k, S], -1 padded)
    and masses; cemb: their mean embeddings float64[k, D]; cvals / cw: :func:`pa_centre_marginals`.
    max_candidates > 0 examines only that many centres of smallest LB0 (approximate; 0 = exact).
    use_stop: a greedy EMD stops once it reaches the second-best distance (same result, cheaper).
    Returns (int32 labels, float64 d1, float64 d2, int64[3] counts: centres examined, LB1s, EMDs)."""
    cdef Py_ssize_t n = pts.shape[0], m = pts.shape[1], k = cids.shape[0], S = cids.shape[1]
    cdef Py_ssize_t D = embed.shape[1]
    cdef cnp.ndarray[int32_t, ndim=1] lab_a = np.empty(n, dtype=np.int32)
    cdef cnp.ndarray[double, ndim=1] d1_a = np.empty(n), d2_a = np.empty(n)
    cdef cnp.ndarray[int64_t, ndim=1] cnt_a = np.zeros(3, dtype=np.int64)
    cdef int32_t[::1] lab = lab_a
    cdef double[::1] d1 = d1_a, d2 = d2_a
    cdef int64_t examined = 0, n_lb1 = 0, n_emd = 0
    cdef Py_ssize_t i, c, j, hn, limit = k if max_candidates <= 0 or max_candidates > k else max_candidates
    cdef Py_ssize_t taken
    cdef int np_, best, a
    cdef double b1, b2, dist, s, t
    cdef bint marg = use_marginal and norm == 1
    cdef int *ids = <int *>malloc(m * sizeof(int))
    cdef double *mass = <double *>malloc(m * sizeof(double))
    cdef double *pe = <double *>malloc(D * sizeof(double))
    cdef double *pv = <double *>malloc(D * m * sizeof(double))
    cdef double *pw = <double *>malloc(D * m * sizeof(double))
    cdef _Key *heap = <_Key *>malloc(k * sizeof(_Key))
    cdef _Pair *buf = <_Pair *>malloc(m * S * sizeof(_Pair))
    cdef int *stk = <int *>malloc(2 * m * S * sizeof(int))
    cdef double *rp = <double *>malloc(m * sizeof(double))
    cdef double *rq = <double *>malloc(S * sizeof(double))
    cdef int *nsup = <int *>malloc(k * sizeof(int))
    try:
        with nogil:
            for c in range(k):
                nsup[c] = _support_size(&cids[c, 0], S)
            for i in range(n):
                np_ = _compress(&pts[i, 0], m, ids, mass)
                _mean_embedding(ids, mass, np_, embed, D, pe)
                if marg:
                    _point_marginals(ids, mass, np_, embed, D, pv, pw)
                for c in range(k):
                    heap[c].v = _embedding_distance(pe, &cemb[c, 0], D, norm)
                    heap[c].i = <int>c
                hn = k
                c = k // 2
                while c > 0:
                    c -= 1
                    _sift_down(heap, hn, c)
                b1 = 1e300
                b2 = 1e300
                best = heap[0].i
                taken = 0
                while hn > 0 and taken < limit:
                    if heap[0].v >= b2:
                        break
                    c = heap[0].i
                    hn -= 1
                    heap[0] = heap[hn]
                    _sift_down(heap, hn, 0)
                    taken += 1
                    if marg:
                        n_lb1 += 1
                        if _marginal_lb(pv, pw, np_, cvals, cw, c, nsup[c], D, b2) >= b2:
                            continue
                    dist = _greedy(ids, mass, np_, &cids[c, 0], &cmass[c, 0], nsup[c], ground, buf, rp, rq, stk,
                                   b2 if use_stop else 1e300)
                    n_emd += 1
                    if dist < b1:
                        b2 = b1
                        b1 = dist
                        best = <int>c
                    elif dist < b2:
                        b2 = dist
                examined += taken
                lab[i] = best
                d1[i] = b1
                d2[i] = b2
    finally:
        free(ids); free(mass); free(pe); free(pv); free(pw); free(heap); free(buf); free(stk); free(rp); free(rq); free(nsup)
    cnt_a[0] = examined
    cnt_a[1] = n_lb1
    cnt_a[2] = n_emd
    return lab_a, d1_a, d2_a, cnt_a


def pa_lower_bounds(const int32_t[:, ::1] pts, const double[:, ::1] embed, int norm, const int32_t[:, ::1] cids,
                    const double[:, ::1] cemb, const double[:, :, ::1] cvals, const double[:, :, ::1] cw):
    """LB0 and LB1 (norm 1; LB0 again for norm 2) of every point against every centre:
    (float64[n, k], float64[n, k]).  For tests and measurements."""
    cdef Py_ssize_t n = pts.shape[0], m = pts.shape[1], k = cids.shape[0], S = cids.shape[1]
    cdef Py_ssize_t D = embed.shape[1], i, c, j
    cdef cnp.ndarray[double, ndim=2] l0_a = np.empty((n, k)), l1_a = np.empty((n, k))
    cdef double[:, ::1] l0 = l0_a, l1 = l1_a
    cdef int np_, a, nq
    cdef double s, t
    cdef int *ids = <int *>malloc(m * sizeof(int))
    cdef double *mass = <double *>malloc(m * sizeof(double))
    cdef double *pe = <double *>malloc(D * sizeof(double))
    cdef double *pv = <double *>malloc(D * m * sizeof(double))
    cdef double *pw = <double *>malloc(D * m * sizeof(double))
    try:
        with nogil:
            for i in range(n):
                np_ = _compress(&pts[i, 0], m, ids, mass)
                _mean_embedding(ids, mass, np_, embed, D, pe)
                _point_marginals(ids, mass, np_, embed, D, pv, pw)
                for c in range(k):
                    l0[i, c] = _embedding_distance(pe, &cemb[c, 0], D, norm)
                    if norm == 1:
                        l1[i, c] = _marginal_lb(pv, pw, np_, cvals, cw, c, _support_size(&cids[c, 0], S), D, 1e300)
                    else:
                        l1[i, c] = l0[i, c]
    finally:
        free(ids); free(mass); free(pe); free(pv); free(pw)
    return l0_a, l1_a


def pa_rows(const int32_t[:, ::1] pts, const int32_t[::1] labels, const int32_t[:, ::1] cids,
            const double[:, ::1] cmass, const double[:, ::1] ground):
    """Greedy EMD of each point to centre labels[i]: float64[n]."""
    cdef Py_ssize_t n = pts.shape[0], m = pts.shape[1], S = cids.shape[1], i
    cdef cnp.ndarray[double, ndim=1] out_a = np.empty(n)
    cdef double[::1] out = out_a
    cdef int np_, nq, c
    cdef int *ids = <int *>malloc(m * sizeof(int))
    cdef double *mass = <double *>malloc(m * sizeof(double))
    cdef _Pair *buf = <_Pair *>malloc(m * S * sizeof(_Pair))
    cdef int *stk = <int *>malloc(2 * m * S * sizeof(int))
    cdef double *rp = <double *>malloc(m * sizeof(double))
    cdef double *rq = <double *>malloc(S * sizeof(double))
    try:
        with nogil:
            for i in range(n):
                np_ = _compress(&pts[i, 0], m, ids, mass)
                c = labels[i]
                out[i] = _greedy(ids, mass, np_, &cids[c, 0], &cmass[c, 0], _support_size(&cids[c, 0], S), ground,
                                 buf, rp, rq, stk, 1e300)
    finally:
        free(ids); free(mass); free(buf); free(stk); free(rp); free(rq)
    return out_a


# ----------------------------------------------------------------- L2 nearest centre (OCHS, E[HS])

def l2_nearest(const float[:, ::1] X, const double[:, ::1] C_sorted, const double[::1] proj,
               const int64_t[::1] order, const double[::1] axis):
    """Nearest centre of each row of X under L2, exact in float64.

    Centres are sorted by their projection ``proj`` on the unit vector ``axis`` (the centres'
    principal direction); |proj(x) - proj(c)| <= ||x - c||, so the search walks outwards from the
    point's projection and stops once that bound reaches the best distance; a distance sum stops
    once it exceeds the best.  Ties go to the smaller original centre id.  Rows holding a NaN get -1.
    Returns (int32[n] labels, int64 distances computed)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], k = C_sorted.shape[0]
    cdef cnp.ndarray[int32_t, ndim=1] lab_a = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] lab = lab_a
    cdef Py_ssize_t i, j, lo, left, right, c, best
    cdef double px, best_d, gap, gl, gr, s, t
    cdef int64_t computed = 0
    cdef bint nan
    with nogil:
        for i in range(n):
            px = 0.0
            nan = False
            for j in range(d):
                if X[i, j] != X[i, j]:
                    nan = True
                px += X[i, j] * axis[j]
            if nan:
                lab[i] = -1
                continue
            lo = _lower_bound(&proj[0], k, px)
            left = lo - 1
            right = lo
            best_d = 1e300
            best = -1
            while left >= 0 or right < k:
                gl = px - proj[left] if left >= 0 else 1e300
                gr = proj[right] - px if right < k else 1e300
                if gl <= gr:
                    c = left
                    gap = gl
                    left -= 1
                else:
                    c = right
                    gap = gr
                    right += 1
                if gap * gap > best_d:
                    break
                s = 0.0
                for j in range(d):
                    t = X[i, j] - C_sorted[c, j]
                    s += t * t
                    if s > best_d:
                        break
                computed += 1
                if s < best_d or (s == best_d and order[c] < order[best]):
                    best_d = s
                    best = c
            lab[i] = <int32_t>order[best]
    return lab_a, computed
