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
