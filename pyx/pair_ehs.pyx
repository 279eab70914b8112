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
cdef int32_t _CARD_PAIRS[52][51]   # the 51 pairs holding each card


def _init_pairs():
    cdef int a, b, i
    cdef int fill[52]
    for a in range(52):
        fill[a] = 0
    for b in range(1, 52):
        for a in range(b):
            i = b * (b - 1) // 2 + a
            _C1[i] = a
            _C2[i] = b
            _CARD_PAIRS[a][fill[a]] = i
            fill[a] += 1
            _CARD_PAIRS[b][fill[b]] = i
            fill[b] += 1


_init_pairs()


def uniform_river_ehs_pairs(const int32_t[:, ::1] strengths, const int64_t[::1] pairs):
    """float64[K]: ``uniform_river_ehs(strengths)[pairs]`` bit for bit (NaN where a pair is blocked on every
    board), ``strengths`` int32[B, 1326] from ``river_strengths`` (0 = blocked), ``pairs`` int64[K] indices.

    On each board where the pair is live: ``(wins + ties / 2) / C(k - 2, 2)`` over the live pairs disjoint
    from it (``k`` live cards, ``k (k - 1) / 2`` live pairs), summed over the boards in order and divided by
    their number -- the kernel's operations in its order, with the pairs' counts from one sweep of the row
    (less the pairs sharing a card with each) instead of a sort of all pairs.
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
    cdef const unsigned int *us
    cdef int j, n, k, compat, t, q2, c, p
    cdef int sp[2]
    cdef int win[2]
    cdef int tie[2]
    cdef unsigned int lim[2]
    cdef int32_t sj
    cdef int w0, t0, w1, t1
    cdef unsigned int l0, l1, u
    cdef int s0, s1
    with nogil:
        for b in range(nb):
            s = &strengths[b, 0]
            us = <const unsigned int *>s
            # branch-free sweeps of the row that the compiler vectorises: live pairs (s > 0), and per pair those
            # live and below it (s - 1 < sp - 1 as unsigned: s = 0 wraps to the top) and those equal to it, two
            # pairs per sweep; the ones sharing a card with the pair are subtracted next
            n = 0
            for j in range(NUM_PAIRS):
                n += s[j] > 0
            k = 2
            while k * (k - 1) // 2 < n:
                k += 1
            compat = (k - 2) * (k - 3) // 2
            for q in range(0, nk, 2):
                q2 = 2 if q + 1 < nk else 1
                for c in range(q2):
                    sp[c] = s[pairs[q + c]]
                    lim[c] = <unsigned int>(sp[c] - 1)
                s0 = sp[0]
                s1 = sp[q2 - 1]
                l0 = lim[0]
                l1 = lim[q2 - 1]
                w0 = 0
                t0 = 0
                w1 = 0
                t1 = 0
                for j in range(NUM_PAIRS):
                    u = us[j] - 1u
                    w0 += u < l0
                    t0 += s[j] == s0
                    w1 += u < l1
                    t1 += s[j] == s1
                win[0] = w0
                tie[0] = t0
                win[1] = w1
                tie[1] = t1
                for c in range(q2):
                    if sp[c] <= 0:
                        continue
                    p = <int>pairs[q + c]
                    tie[c] += 1  # the pair itself is in both of its cards' lists: subtracted twice below
                    for t in range(51):
                        sj = s[_CARD_PAIRS[_C1[p]][t]]
                        win[c] -= (<unsigned int>sj - 1u) < lim[c]
                        tie[c] -= sj == sp[c]
                        sj = s[_CARD_PAIRS[_C2[p]][t]]
                        win[c] -= (<unsigned int>sj - 1u) < lim[c]
                        tie[c] -= sj == sp[c]
                    total[q + c] += (<double>win[c] + 0.5 * <double>tie[c]) / <double>compat
                    count[q + c] += 1
        for q in range(nk):
            if count[q] > 0:
                out[q] = total[q] / <double>count[q]
    return out_arr
