# Suit-isomorphism index of one hand (the ranking half of the hand indexer), textually included by
# isomorph.pyx (cfrkit.cards.isomorphism) and blueprint_pluribus.pyx (bucket-table lookups inside the
# trainer's kernel, without the GIL).  The including module must declare __builtin_ctz (cdef extern) and
# call `_init_binom()` at import; each including module gets its own copy of the small tables.
from libc.stdint cimport uint8_t, int32_t, uint32_t, int64_t, uint64_t

cdef int64_t _BINOM[64][8]
cdef uint8_t _POP13[8192]


def _init_binom():
    cdef int n, k, m
    for m in range(8192):
        _POP13[m] = bin(m).count("1")
    for n in range(64):
        for k in range(8):
            _BINOM[n][k] = 0
    for n in range(64):
        _BINOM[n][0] = 1
        for k in range(1, 8):
            if n > 0:
                _BINOM[n][k] = _BINOM[n - 1][k - 1] + _BINOM[n - 1][k]


cdef inline int64_t _choose(int64_t n, int k) noexcept nogil:
    # C(n, k) for k <= 4 and n possibly large (per-suit counts up to ~1.5M)
    if k < 0 or n < k:
        return 0
    if n < 64:
        return _BINOM[n][k]
    if k == 0:
        return 1
    if k == 1:
        return n
    if k == 2:
        return n * (n - 1) // 2
    if k == 3:
        return n * (n - 1) // 2 * (n - 2) // 3
    return n * (n - 1) // 2 * (n - 2) // 3 * (n - 3) // 4


cdef inline int64_t _colex_within(uint32_t m, uint32_t used) noexcept nogil:
    # colex rank of m's positions among the ranks not in `used` (= _colex(_compress(m, used)))
    cdef int64_t r = 0
    cdef int i = 1, b
    while m:
        b = __builtin_ctz(m)
        r += _BINOM[b - _POP13[used & ((1u << b) - 1u)]][i]
        i += 1
        m &= m - 1
    return r


cdef inline int64_t _suit_count(int code, int nr) noexcept nogil:
    cdef int64_t n = 1
    cdef int j, v, used = 0
    for j in range(nr):
        v = (code >> (3 * j)) & 7
        n *= _BINOM[13 - used][v]
        used += v
    return n


cdef int64_t _index_one(const uint8_t *cards, const int32_t *sizes, int nr,
                        const int64_t *keys, const int64_t *offsets, Py_ssize_t ncfg) noexcept nogil:
    cdef uint32_t masks[4][8]
    cdef int codes[4]
    cdef int64_t sidx[4]
    cdef int order[4]
    cdef int s, j, t, pos = 0, tmp, g, a, b
    cdef uint32_t used
    cdef int64_t mult, idx, key, lo, hi, mid, total, gmult, x, grank
    cdef int64_t xs[4]
    cdef uint64_t seen = 0, bit
    for s in range(4):
        for j in range(nr):
            masks[s][j] = 0
    for j in range(nr):
        for t in range(sizes[j]):
            if cards[pos] >= 52:
                return -1
            bit = (<uint64_t>1) << cards[pos]
            if seen & bit:
                return -1
            seen |= bit
            masks[cards[pos] & 3][j] |= 1u << (cards[pos] >> 2)
            pos += 1
    for s in range(4):
        codes[s] = 0
        idx = 0
        mult = 1
        used = 0
        for j in range(nr):
            if masks[s][j] == 0:
                continue  # contributes digit 0 with radix C(n, 0) = 1
            t = _POP13[masks[s][j]]
            codes[s] |= t << (3 * j)
            idx += _colex_within(masks[s][j], used) * mult
            mult *= _BINOM[13 - _POP13[used]][t]
            used |= masks[s][j]
        sidx[s] = idx
        order[s] = s
    # sort suits by code descending (insertion sort on 4)
    for a in range(1, 4):
        tmp = order[a]
        b = a - 1
        while b >= 0 and codes[order[b]] < codes[tmp]:
            order[b + 1] = order[b]
            b -= 1
        order[b + 1] = tmp
    key = 0
    for a in range(4):
        key = (key << 12) | codes[order[a]]
    lo = 0
    hi = ncfg - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    if ncfg == 0 or keys[lo] != key:
        return -2
    total = 0
    gmult = 1
    a = 0
    while a < 4:
        b = a
        while b < 4 and codes[order[b]] == codes[order[a]]:
            b += 1
        g = b - a
        # per-suit indices of the group, sorted ascending
        for t in range(g):
            xs[t] = sidx[order[a + t]]
        for s in range(1, g):
            x = xs[s]
            j = s - 1
            while j >= 0 and xs[j] > x:
                xs[j + 1] = xs[j]
                j -= 1
            xs[j + 1] = x
        grank = 0
        for t in range(g):
            grank += _choose(xs[t] + t, t + 1)
        total += grank * gmult
        gmult *= _choose(_suit_count(codes[order[a]], nr) + g - 1, g)
        a = b
    return offsets[lo] + total
