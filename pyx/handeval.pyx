# cython: language_level=3
"""Hand evaluation kernels (Cython). Python API: cfrkit.cards.evaluator.

All functions take numpy arrays of card ids (4 * rank + suit) and return numpy arrays; hot loops
release the GIL.
"""
import numpy as np
cimport numpy as cnp
from operator import index as _index

include "handeval_core.pxi"

cnp.import_array()


def evaluate_rows(const uint8_t[:, ::1] cards):
    """Class (1..7462) of each row of 5..7 card ids.

    Returns (int32[n] classes, first bad row or -1). A bad row (card id >= 52 or a duplicate card)
    gets class 0; the Python wrapper turns it into an error.
    """
    cdef Py_ssize_t n = cards.shape[0], k = cards.shape[1], i, j
    cdef cnp.ndarray[int32_t, ndim=1] out_arr = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] out = out_arr
    cdef Py_ssize_t bad = -1
    cdef uint64_t m, b
    cdef uint8_t cd
    cdef int ok
    with nogil:
        for i in range(n):
            m = 0
            ok = 1
            for j in range(k):
                cd = cards[i, j]
                b = card_bit(cd)
                if cd >= 52 or (m & b):
                    ok = 0
                m |= b
            if ok:
                out[i] = eval_mask(m)
            else:
                out[i] = 0
                if bad < 0:
                    bad = i
    return out_arr, bad


def evaluate_card_masks(const uint64_t[::1] masks):
    """Class of each 64-bit card mask (bit 16 * suit + rank); masks must hold 5..7 cards."""
    cdef Py_ssize_t n = masks.shape[0], i
    cdef cnp.ndarray[int32_t, ndim=1] out_arr = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] out = out_arr
    with nogil:
        for i in range(n):
            out[i] = eval_mask(masks[i])
    return out_arr


def evaluate_checked(cards):
    """Class of one hand (a list or tuple of 5..7 card ids), or a negative code: -1 wrong number of
    cards, -2 id out of 0..51, -3 duplicate card. Raises TypeError for non-integers."""
    cdef uint64_t m = 0, b
    cdef long c
    if len(cards) < 5 or len(cards) > 7:
        return -1
    for x in cards:
        c = x if type(x) is int else _index(x)
        if c < 0 or c >= 52:
            return -2
        b = card_bit(c)
        if m & b:
            return -3
        m |= b
    return eval_mask(m)


def evaluate_one(cards):
    """Class of one hand given as a sequence of 5..7 distinct valid card ids (checked by caller)."""
    cdef uint64_t m = 0
    for cd in cards:
        m |= card_bit(cd)
    return eval_mask(m)


def seven_card_class_counts():
    """Histogram (int64[7463], index = class) of all C(52, 7) = 133,784,560 seven-card hands.

    Enumerates hands with incremental card masks on one core, without the GIL.
    """
    cdef cnp.ndarray[int64_t, ndim=2] counts_arr = np.zeros((52, 7463), dtype=np.int64)
    cdef int64_t[:, ::1] counts = counts_arr
    cdef int a
    with nogil:
        for a in range(52):
            _count_from_first(a, counts)
    return counts_arr.sum(axis=0)


cdef void _count_from_first(int a, int64_t[:, ::1] counts) noexcept nogil:
    cdef int b, c, d, e, f, g
    cdef uint64_t ma, mb, mc, md, me, mf
    cdef int64_t *row = &counts[a, 0]
    ma = card_bit(a)
    for b in range(a + 1, 52):
        mb = ma | card_bit(b)
        for c in range(b + 1, 52):
            mc = mb | card_bit(c)
            for d in range(c + 1, 52):
                md = mc | card_bit(d)
                for e in range(d + 1, 52):
                    me = md | card_bit(e)
                    for f in range(e + 1, 52):
                        mf = me | card_bit(f)
                        for g in range(f + 1, 52):
                            row[eval_mask(mf | card_bit(g))] += 1


def five_card_classes_all():
    """Class of every 5-card hand, in lexicographic order of (a < b < c < d < e): int32[2,598,960]."""
    cdef cnp.ndarray[int32_t, ndim=1] out_arr = np.empty(2598960, dtype=np.int32)
    cdef int32_t[::1] out = out_arr
    cdef int a, b, c, d, e
    cdef Py_ssize_t i = 0
    cdef uint64_t ma, mb, mc, md
    with nogil:
        for a in range(52):
            ma = card_bit(a)
            for b in range(a + 1, 52):
                mb = ma | card_bit(b)
                for c in range(b + 1, 52):
                    mc = mb | card_bit(c)
                    for d in range(c + 1, 52):
                        md = mc | card_bit(d)
                        for e in range(d + 1, 52):
                            out[i] = eval_mask(md | card_bit(e))
                            i += 1
    return out_arr
