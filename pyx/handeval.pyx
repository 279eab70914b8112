# cython: language_level=3
"""Hand evaluation kernels (Cython). Python API: cfrkit.cards.evaluator.

All functions take numpy arrays of card ids (4 * rank + suit) and return numpy arrays; hot loops
release the GIL.
"""
import numpy as np
cimport numpy as cnp
from operator import index as _index

include "handeval_core.pxi"

cdef uint64_t _KEY_EXT[256]   # _CARD_KEY for ids < 52, an invalid-id flag (1 << 60) otherwise
cdef uint64_t _BIT_EXT[256]   # _CARD_BIT for ids < 52, 0 otherwise
for _i in range(256):
    _KEY_EXT[_i] = _CARD_KEY[_i] if _i < 52 else ((<uint64_t>1) << 60)
    _BIT_EXT[_i] = _CARD_BIT[_i] if _i < 52 else 0

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
    cdef uint64_t m, total, key
    cdef const uint8_t *row
    with nogil:
        for i in range(n):
            row = &cards[i, 0]
            m = 0
            total = 0
            key = KEY_START
            for j in range(k):
                # ids >= 52 add a flag above the suit counters and no card bit
                m |= _BIT_EXT[row[j]]
                total += _BIT_EXT[row[j]]
                key += _KEY_EXT[row[j]]
            if total == m and (key >> 60) == 0:  # no duplicate (no carry) and no bad id
                out[i] = eval_key(key, m)
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
    cdef uint64_t m = 0, b, key = KEY_START
    cdef long c
    if len(cards) < 5 or len(cards) > 7:
        return -1
    for x in cards:
        c = x if type(x) is int else _index(x)
        if c < 0 or c >= 52:
            return -2
        b = _CARD_BIT[c]
        if m & b:
            return -3
        m |= b
        key += _CARD_KEY[c]
    return eval_key(key, m)


def evaluate_one(cards):
    """Class of one hand given as a sequence of 5..7 distinct valid card ids (checked by caller)."""
    cdef uint64_t m = 0
    cdef uint64_t key = KEY_START
    for cd in cards:
        m |= card_bit(cd)
        key += _CARD_KEY[cd]
    return eval_key(key, m)


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
    cdef uint64_t ma, mb, mc, md, me, mf, ka, kb, kc, kd, ke, kf
    cdef int64_t *row = &counts[a, 0]
    ma = _CARD_BIT[a]
    ka = KEY_START + _CARD_KEY[a]
    for b in range(a + 1, 52):
        mb = ma | _CARD_BIT[b]
        kb = ka + _CARD_KEY[b]
        for c in range(b + 1, 52):
            mc = mb | _CARD_BIT[c]
            kc = kb + _CARD_KEY[c]
            for d in range(c + 1, 52):
                md = mc | _CARD_BIT[d]
                kd = kc + _CARD_KEY[d]
                for e in range(d + 1, 52):
                    me = md | _CARD_BIT[e]
                    ke = kd + _CARD_KEY[e]
                    for f in range(e + 1, 52):
                        mf = me | _CARD_BIT[f]
                        kf = ke + _CARD_KEY[f]
                        for g in range(f + 1, 52):
                            row[eval_key(kf + _CARD_KEY[g], mf | _CARD_BIT[g])] += 1


def count_evaluator_mismatches(int k):
    """Number of k-card hands (k = 5, 6 or 7; all C(52, k) of them) on which the fast keyed
    evaluator and the reference bit-mask evaluator disagree (a self-check; 0 expected)."""
    cdef int64_t bad = 0
    cdef int a
    if k < 5 or k > 7:
        raise ValueError("k must be 5, 6 or 7")
    with nogil:
        for a in range(52):
            bad += _mismatch_rec(a + 1, k - 1, KEY_START + _CARD_KEY[a], _CARD_BIT[a])
    return bad


cdef int64_t _mismatch_rec(int start, int left, uint64_t key, uint64_t mask) noexcept nogil:
    cdef int c
    cdef int64_t bad = 0
    if left == 0:
        return eval_key(key, mask) != eval_mask(mask)
    for c in range(start, 52 - left + 1):
        bad += _mismatch_rec(c + 1, left - 1, key + _CARD_KEY[c], mask | _CARD_BIT[c])
    return bad


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
                            out[i] = eval_mask(md | card_bit(e))  # reference evaluator
                            i += 1
    return out_arr
