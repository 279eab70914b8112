# Core of the cfrkit hand evaluator, textually included by the card kernels (handeval.pyx,
# equity.pyx, ...). Each including module gets its own copy of the small tables (2 x 16 KiB + 8 KiB),
# built at import by `_init_eval_tables()`.
#
# Card id = 4 * rank + suit (rank 0..12 = 2..A, suit 0..3 = c, d, h, s). A set of cards is a 64-bit
# mask with 16 bits per suit: bit (16 * suit + rank). The evaluator returns the equivalence class
# 1..7462 of the best 5-card hand (higher wins, equal ties):
#   high card 1..1277, pair ..4137, two pair ..4995, trips ..5853, straight ..5863,
#   flush ..7140, full house ..7296, quads ..7452, straight flush ..7462.
# Classes are computed combinatorially from rank bit masks (no large lookup table): inside each
# category the index is a dense colex rank of the deciding ranks, which orders exactly like
# comparing ranks from the highest down.
from libc.stdint cimport uint8_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t

cdef extern from *:
    int __builtin_popcount(unsigned int) nogil
    int __builtin_clz(unsigned int) nogil
    int __builtin_ctz(unsigned int) nogil
    int __builtin_popcountll(unsigned long long) nogil


cdef enum:
    _BASE_PAIR = 1277
    _BASE_TWOPAIR = 4137
    _BASE_TRIPS = 4995
    _BASE_STRAIGHT = 5853
    _BASE_FLUSH = 5863
    _BASE_FULLHOUSE = 7140
    _BASE_QUADS = 7296
    _BASE_STRAIGHTFLUSH = 7452

cdef uint16_t _FLUSH_CLASS[8192]      # suit rank-mask with >= 5 bits -> flush / straight flush class
cdef uint16_t _HIGH_CLASS[8192]       # rank mask with >= 5 bits, no straight -> high card class
cdef uint8_t _STRAIGHT_HIGH[8192]     # 0: no straight; else 1 (wheel) .. 10 (ace high)
cdef uint16_t _CHOOSE[14][6]
cdef uint8_t _BITS[8192]             # popcount of a 13-bit mask (portable, no -mpopcnt needed)


cdef inline int _hibit(uint32_t m) noexcept nogil:
    return 31 - __builtin_clz(m)


cdef inline uint32_t _topk(uint32_t m, int k) noexcept nogil:
    while _BITS[m] > k:
        m &= m - 1
    return m


cdef inline int _colex(uint32_t m) noexcept nogil:
    # colex rank of a bit set: sum_i C(b_i, i + 1) over its bits b_0 < b_1 < ...
    cdef int r = 0, i = 1
    while m:
        r += _CHOOSE[__builtin_ctz(m)][i]
        i += 1
        m &= m - 1
    return r


cdef inline uint32_t _drop_bit(uint32_t m, int b) noexcept nogil:
    # remove bit position b from the index space (bits above b shift down by one)
    return (m & ((1u << b) - 1u)) | ((m >> (b + 1)) << b)


cdef inline uint64_t card_bit(int card) noexcept nogil:
    return (<uint64_t>1) << (((card & 3) << 4) + (card >> 2))


cdef inline int eval_mask(uint64_t mask) noexcept nogil:
    """Class 1..7462 of the best 5-card hand in a card mask of 5..7 cards."""
    cdef uint32_t c = <uint32_t>(mask & 0x1FFF)
    cdef uint32_t d = <uint32_t>((mask >> 16) & 0x1FFF)
    cdef uint32_t h = <uint32_t>((mask >> 32) & 0x1FFF)
    cdef uint32_t s = <uint32_t>((mask >> 48) & 0x1FFF)
    cdef uint32_t ranks, two, three, four, kick
    cdef int t, p, hi, lo, k, sh
    if _BITS[c] >= 5:
        return _FLUSH_CLASS[c]
    if _BITS[d] >= 5:
        return _FLUSH_CLASS[d]
    if _BITS[h] >= 5:
        return _FLUSH_CLASS[h]
    if _BITS[s] >= 5:
        return _FLUSH_CLASS[s]
    ranks = c | d | h | s
    two = (c & d) | (h & s) | ((c | d) & (h | s))
    if two == 0:
        sh = _STRAIGHT_HIGH[ranks]
        if sh:
            return _BASE_STRAIGHT + sh
        return _HIGH_CLASS[ranks]
    three = (c & d & (h | s)) | (h & s & (c | d))
    if three:
        four = c & d & h & s
        if four:
            t = _hibit(four)
            k = _hibit(ranks ^ (1u << t))
            return _BASE_QUADS + 1 + t * 12 + k - (k > t)
        t = _hibit(three)
        kick = two ^ (1u << t)
        if kick:
            p = _hibit(kick)
            return _BASE_FULLHOUSE + 1 + t * 12 + p - (p > t)
    sh = _STRAIGHT_HIGH[ranks]
    if sh:
        return _BASE_STRAIGHT + sh
    if three:
        kick = _topk(_drop_bit(ranks ^ (1u << t), t), 2)
        return _BASE_TRIPS + 1 + t * 66 + _colex(kick)
    if two & (two - 1):
        hi = _hibit(two)
        lo = _hibit(two ^ (1u << hi))
        k = _hibit(ranks ^ (1u << hi) ^ (1u << lo))
        return _BASE_TWOPAIR + 1 + (_CHOOSE[hi][2] + lo) * 11 + k - (k > lo) - (k > hi)
    p = _hibit(two)
    kick = _topk(_drop_bit(ranks ^ (1u << p), p), 3)
    return _BASE_PAIR + 1 + p * 220 + _colex(kick)


def _init_eval_tables():
    cdef int n, k, m, hi, i
    for n in range(14):
        for k in range(6):
            _CHOOSE[n][k] = 0
    for n in range(14):
        _CHOOSE[n][0] = 1
        for k in range(1, 6):
            if n > 0:
                _CHOOSE[n][k] = _CHOOSE[n - 1][k - 1] + _CHOOSE[n - 1][k]
    straights = []  # (high index 1..10, 5-bit mask)
    straights.append((1, 0x100F))  # wheel A-2-3-4-5
    for hi in range(4, 13):
        straights.append((hi - 2, 0x1F << (hi - 4)))
    for m in range(8192):
        _BITS[m] = bin(m).count("1")
    for m in range(8192):
        _STRAIGHT_HIGH[m] = 0
        for idx, smask in straights:
            if (m & smask) == smask:
                _STRAIGHT_HIGH[m] = idx  # later (higher) straights overwrite
    # dense index of non-straight 5-rank sets, in colex order (= compare from the highest rank)
    five_sets = [m for m in range(8192) if bin(m).count("1") == 5 and _STRAIGHT_HIGH[m] == 0]
    five_sets.sort(key=lambda x: _colex(x))
    hc_index = {m: i for i, m in enumerate(five_sets)}
    assert len(five_sets) == 1277
    for m in range(8192):
        _HIGH_CLASS[m] = 0
        _FLUSH_CLASS[m] = 0
        if bin(m).count("1") >= 5:
            top5 = _topk(m, 5)
            if _STRAIGHT_HIGH[m]:
                _FLUSH_CLASS[m] = _BASE_STRAIGHTFLUSH + _STRAIGHT_HIGH[m]
            else:
                _FLUSH_CLASS[m] = _BASE_FLUSH + 1 + hc_index[top5]
                _HIGH_CLASS[m] = 1 + hc_index[top5]


_init_eval_tables()
