# cython: language_level=3
"""Suit-isomorphism hand indexer kernels (Cython). Python API: cfrkit.cards.isomorphism.

A hand of rounds r = 0..R-1 (cards in round order) is described per suit by the rank sets it holds
in each round. Its size vector (cards per round) has code sum_j v_j << (3 j). The canonical form is
the multiset of the four per-suit descriptions. Index = offset of the configuration (the sorted
size-vector codes, looked up by binary search in `keys`) + a mixed-radix number over the groups of
suits that share a size vector; inside a group the multiset of per-suit indices is ranked in colex
order. A per-suit index is a mixed-radix number of the colex ranks of each round's rank set among
the ranks unused in earlier rounds.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint8_t, int32_t, uint32_t, int64_t, uint64_t

cnp.import_array()

cdef extern from *:
    int __builtin_popcount(unsigned int) nogil
    int __builtin_ctz(unsigned int) nogil


include "isomorph_core.pxi"

_init_binom()


cdef inline uint32_t _expand(uint32_t m, uint32_t used) noexcept nogil:
    cdef uint32_t out = 0
    cdef int r, pos = 0
    for r in range(13):
        if not (used >> r) & 1:
            if (m >> pos) & 1:
                out |= 1u << r
            pos += 1
    return out


cdef inline int64_t _colex(uint32_t m) noexcept nogil:
    cdef int64_t r = 0
    cdef int i = 1
    while m:
        r += _BINOM[__builtin_ctz(m)][i]
        i += 1
        m &= m - 1
    return r


cdef inline uint32_t _colex_unrank(int64_t rank, int k) noexcept nogil:
    cdef uint32_t m = 0
    cdef int i, y
    for i in range(k, 0, -1):
        y = i - 1
        while _BINOM[y + 1][i] <= rank:
            y += 1
        rank -= _BINOM[y][i]
        m |= 1u << y
    return m


cdef void _unindex_one(int64_t index, const int32_t *sizes, int nr, const int64_t *keys,
                       const int64_t *offsets, Py_ssize_t ncfg, uint8_t *out) noexcept nogil:
    cdef int codes[4]
    cdef int64_t sidx[4]
    cdef int64_t xs[4]
    cdef int64_t lo = 0, hi = ncfg - 1, mid, rem, gcount, n, y
    cdef int a, b, g, t, s, j, v, pos, i
    cdef int64_t key
    cdef uint32_t used, m
    cdef int fill[8]
    cdef int start[8]
    # last configuration whose offset <= index
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if offsets[mid] <= index:
            lo = mid
        else:
            hi = mid - 1
    key = keys[lo]
    rem = index - offsets[lo]
    for a in range(4):
        codes[a] = (key >> (12 * (3 - a))) & 0xFFF
    a = 0
    while a < 4:
        b = a
        while b < 4 and codes[b] == codes[a]:
            b += 1
        g = b - a
        n = _suit_count(codes[a], nr)
        gcount = _choose(n + g - 1, g)
        y = rem % gcount
        rem = rem // gcount
        for i in range(g, 0, -1):
            # largest z with C(z, i) <= y
            lo = i - 1
            hi = n + g - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if _choose(mid, i) <= y:
                    lo = mid
                else:
                    hi = mid - 1
            y -= _choose(lo, i)
            xs[i - 1] = lo - (i - 1)
        for t in range(g):
            sidx[a + t] = xs[t]
        a = b
    start[0] = 0
    for j in range(1, nr):
        start[j] = start[j - 1] + sizes[j - 1]
    for j in range(nr):
        fill[j] = 0
    for s in range(4):
        used = 0
        rem = sidx[s]
        for j in range(nr):
            v = (codes[s] >> (3 * j)) & 7
            if v == 0:
                continue
            n = _BINOM[13 - _POP13[used]][v]
            m = _expand(_colex_unrank(rem % n, v), used)
            rem = rem // n
            used |= m
            while m:
                out[start[j] + fill[j]] = <uint8_t>(4 * __builtin_ctz(m) + s)
                fill[j] += 1
                m &= m - 1
    # sort cards inside each round
    for j in range(nr):
        for a in range(start[j] + 1, start[j] + sizes[j]):
            t = out[a]
            b = a - 1
            while b >= start[j] and out[b] > t:
                out[b + 1] = out[b]
                b -= 1
            out[b + 1] = t


def index_batch(const uint8_t[:, ::1] cards, const int32_t[::1] sizes,
                const int64_t[::1] keys, const int64_t[::1] offsets):
    """Canonical indices of hands (cards in round order): uint8[n, sum(sizes)] -> int64[n].

    Returns (indices, first bad row or -1); a bad row (id >= 52 or duplicate) gets -1."""
    cdef Py_ssize_t n = cards.shape[0], i, bad = -1
    cdef int nr = sizes.shape[0]
    cdef cnp.ndarray[int64_t, ndim=1] out_arr = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] out = out_arr
    with nogil:
        for i in range(n):
            out[i] = _index_one(&cards[i, 0], &sizes[0], nr, &keys[0], &offsets[0], keys.shape[0])
            if out[i] < 0 and bad < 0:
                bad = i
    return out_arr, bad


def unindex_batch(const int64_t[::1] indices, const int32_t[::1] sizes,
                  const int64_t[::1] keys, const int64_t[::1] offsets):
    """Canonical hands of indices (checked in range by caller): int64[n] -> uint8[n, sum(sizes)]."""
    cdef Py_ssize_t n = indices.shape[0], i
    cdef int nr = sizes.shape[0], k = 0, j
    for j in range(nr):
        k += sizes[j]
    cdef cnp.ndarray[uint8_t, ndim=2] out_arr = np.zeros((n, k), dtype=np.uint8)
    cdef uint8_t[:, ::1] out = out_arr
    with nogil:
        for i in range(n):
            _unindex_one(indices[i], &sizes[0], nr, &keys[0], &offsets[0], keys.shape[0], &out[i, 0])
    return out_arr


def count_for(const int32_t[::1] sizes, const int64_t[::1] keys):
    """Number of hands of each configuration key (int64 array, same order as keys)."""
    cdef Py_ssize_t c
    cdef int nr = sizes.shape[0], a, b, g
    cdef int codes[4]
    cdef int64_t cnt
    out = np.empty(keys.shape[0], dtype=np.int64)
    for c in range(keys.shape[0]):
        for a in range(4):
            codes[a] = (keys[c] >> (12 * (3 - a))) & 0xFFF
        cnt = 1
        a = 0
        while a < 4:
            b = a
            while b < 4 and codes[b] == codes[a]:
                b += 1
            g = b - a
            cnt *= _choose(_suit_count(codes[a], nr) + g - 1, g)
            a = b
        out[c] = cnt
    return out
