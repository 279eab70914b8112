# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""E[HS] of a few hole pairs against a uniform opponent (Cython): ``uniform_river_ehs`` of
:mod:`cfrkit._kernels.range_equity` for K pairs instead of all 1326 (AIVAT's value functions bucket the
two hands of a deal on many sampled boards).  Python API: ``EHSAbstraction.ehs_of_pairs``.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint8_t

cnp.import_array()

cdef enum:
    NUM_PAIRS = 1326

cdef uint8_t _C1[1326]      # lower card of each pair
cdef uint8_t _C2[1326]      # higher card


def _init_pairs():
    cdef int a, b
    for b in range(1, 52):
        for a in range(b):
            _C1[b * (b - 1) // 2 + a] = a
            _C2[b * (b - 1) // 2 + a] = b


_init_pairs()


def uniform_river_ehs_pairs(const int32_t[:, ::1] strengths, const int64_t[::1] pairs):
    """float64[K]: ``uniform_river_ehs(strengths)[pairs]`` bit for bit (NaN where a pair is blocked on every
    board), ``strengths`` int32[B, 1326] from ``river_strengths`` (0 = blocked), ``pairs`` int64[K] indices.

    On each board where the pair is live: ``(wins + ties / 2) / C(k - 2, 2)`` over the live pairs disjoint
    from it (``k`` live cards, ``k (k - 1) / 2`` live pairs), summed over the boards in order and divided by
    their number -- the kernel's operations in its order, with each pair's counts by one sweep of the row
    instead of a sort of all pairs.
    """
    cdef Py_ssize_t nb = strengths.shape[0], nk = pairs.shape[0], b, q
    if strengths.shape[1] != NUM_PAIRS:
        raise ValueError("strengths must be (B, 1326)")
    for q in range(nk):
        if not 0 <= pairs[q] < NUM_PAIRS:
            raise ValueError(f"pair index {pairs[q]} is not in 0..1325")
    out_arr = np.full(nk, np.nan)
    total_arr = np.zeros(nk)
    count_arr = np.zeros(nk, dtype=np.int64)
    cdef double[::1] out = out_arr
    cdef double[::1] total = total_arr
    cdef int64_t[::1] count = count_arr
    cdef const int32_t *s
    cdef int j, n, k, compat, win, tie, sp, sj, p, a, c
    with nogil:
        for b in range(nb):
            s = &strengths[b, 0]
            n = 0
            for j in range(NUM_PAIRS):
                if s[j] > 0:
                    n += 1
            k = 2
            while k * (k - 1) // 2 < n:
                k += 1
            compat = (k - 2) * (k - 3) // 2
            for q in range(nk):
                p = <int>pairs[q]
                sp = s[p]
                if sp <= 0:
                    continue
                a = _C1[p]
                c = _C2[p]
                win = 0
                tie = 0
                for j in range(NUM_PAIRS):
                    sj = s[j]
                    if sj <= 0 or sj > sp:
                        continue
                    if _C1[j] == a or _C1[j] == c or _C2[j] == a or _C2[j] == c:
                        continue
                    if sj < sp:
                        win += 1
                    else:
                        tie += 1
                total[q] += (<double>win + 0.5 * <double>tie) / <double>compat
                count[q] += 1
        for q in range(nk):
            if count[q] > 0:
                out[q] = total[q] / <double>count[q]
    return out_arr
