# Tables and evaluators of the cfrkit hand evaluator, textually included by the card kernels (through
# handeval_core.pxi, which builds every table at import; equity.pyx includes this file directly and builds the
# hash table on first use). Each including module gets its own copy of the tables (about 340 KiB):
# `_init_eval_tables(hash_table)` builds the small tables (about 40 KiB: all `eval_mask` needs) and, with
# `hash_table`, the perfect hash of `eval_key` (288 KiB written, about 1 MiB of temporaries while it is built,
# ~10 ms); `_ensure_hash_table()` builds it once when it is missing (call it with the GIL before `eval_key`).
#
# Card id = 4 * rank + suit (rank 0..12 = 2..A, suit 0..3 = c, d, h, s). A set of cards is a 64-bit
# mask with 16 bits per suit: bit (16 * suit + rank). The evaluator returns the equivalence class
# 1..7462 of the best 5-card hand (higher wins, equal ties):
#   high card 1..1277, pair ..4137, two pair ..4995, trips ..5853, straight ..5863,
#   flush ..7140, full house ..7296, quads ..7452, straight flush ..7462.
#
# Two evaluators share the tables:
# - `eval_mask(mask)` (reference): classes computed combinatorially from rank bit masks; inside
#   each category the index is a dense colex rank of the deciding ranks, which orders exactly like
#   comparing ranks from the highest down.
# - `eval_key(key, mask)` (fast, used by the batch kernels): a hand also carries an additive key,
#   the sum of per-card keys (`_CARD_KEY`): 5^rank in the low 32 bits (so the low word is the
#   base-5 rank-count vector, unique per rank multiset) and a 4-bit counter per suit, started at 3,
#   in the high word (bit 3 of a counter is set iff that suit holds >= 5 cards). Flushes are read
#   from the suit's rank mask (`_FLUSH_CLASS`, 16 KiB); other hands from a hash-and-displace
#   perfect hash of the rank multiset: row = hash(key) picks a 16-bit seed (32 KiB), which places
#   the key in a 2^17-entry class table (256 KiB). The table is built at import from `eval_mask`
#   over all 73,775 rank multisets of 5..7 cards, so both evaluators agree by construction (and
#   the tests compare them on all 133,784,560 seven-card hands).
from libc.stdint cimport uint8_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memset

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

cdef enum:
    _ROW_BITS = 14
    _TABLE_BITS = 17
    _MAX_MULTISETS = 80000

cdef uint64_t _CARD_KEY[52]           # additive per-card key (see header)
cdef uint64_t _CARD_BIT[52]           # card mask bit (16 * suit + rank)
cdef uint16_t _ROW_SEED[1 << _ROW_BITS]
cdef uint16_t _HASH_CLASS[1 << _TABLE_BITS]
cdef uint64_t KEY_START = (<uint64_t>0x3333) << 32   # suit counters start at 3


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


cdef inline uint32_t _hash_pos(uint32_t rk, uint32_t seed) noexcept nogil:
    return ((rk ^ seed) * 0x85EBCA77u) >> (32 - _TABLE_BITS)


cdef inline uint32_t _hash_row(uint32_t rk) noexcept nogil:
    return (rk * 0x9E3779B1u) >> (32 - _ROW_BITS)


cdef inline int eval_key(uint64_t key, uint64_t mask) noexcept nogil:
    """Class 1..7462 of a hand of 5..7 cards given its additive key (KEY_START + sum of
    _CARD_KEY) and its card mask (sum of _CARD_BIT)."""
    cdef uint32_t f = (<uint32_t>(key >> 32)) & 0x8888u
    cdef uint32_t rk
    if f:
        return _FLUSH_CLASS[(mask >> ((__builtin_ctz(f) >> 2) << 4)) & 0x1FFF]
    rk = <uint32_t>key
    return _HASH_CLASS[_hash_pos(rk, _ROW_SEED[_hash_row(rk)])]


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


cdef bint _HASH_READY = False


def _init_eval_tables(bint hash_table=True):
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

    for i in range(52):
        _CARD_BIT[i] = card_bit(i)
        _CARD_KEY[i] = ((<uint64_t>1) << (32 + 4 * (i & 3))) + <uint64_t>(5 ** (i >> 2))
    if hash_table:
        _ensure_hash_table()


def _ensure_hash_table():
    """Build the perfect hash of ``eval_key`` (``_ROW_SEED``, ``_HASH_CLASS``) unless it is built."""
    global _HASH_READY
    if _HASH_READY:
        return
    if _build_hash_table() != 0:
        raise ImportError("cfrkit hand evaluator: perfect hash construction failed")
    _HASH_READY = True


cdef int _enumerate_multisets(int rank, int total, uint32_t key, uint64_t mask, int *nk,
                              uint32_t *keys, uint16_t *vals) noexcept nogil:
    # all rank-count vectors with counts <= 4 and 5..7 cards; representative suits cycle over
    # the cards so no suit holds more than 2 (no flush)
    cdef int c, j
    cdef uint64_t m
    cdef uint32_t p5 = 1
    if rank == 13:
        if total >= 5:
            keys[nk[0]] = key
            vals[nk[0]] = <uint16_t>eval_mask(mask)
            nk[0] += 1
        return 0
    for j in range(rank):
        p5 *= 5
    m = mask
    for c in range(0, 5):
        if total + c > 7:
            break
        if c > 0:
            m |= card_bit(4 * rank + ((total + c - 1) & 3))
        _enumerate_multisets(rank + 1, total + c, key + c * p5, m, nk, keys, vals)
    return 0


cdef int _build_hash_table() noexcept:
    cdef uint32_t *keys = <uint32_t *> malloc(_MAX_MULTISETS * sizeof(uint32_t))
    cdef uint16_t *vals = <uint16_t *> malloc(_MAX_MULTISETS * sizeof(uint16_t))
    cdef int32_t *row_start = <int32_t *> malloc(((1 << _ROW_BITS) + 1) * sizeof(int32_t))
    cdef int32_t *by_row = <int32_t *> malloc(_MAX_MULTISETS * sizeof(int32_t))
    cdef int32_t *fill = <int32_t *> malloc((1 << _ROW_BITS) * sizeof(int32_t))
    cdef int32_t *row_order = <int32_t *> malloc((1 << _ROW_BITS) * sizeof(int32_t))
    cdef uint8_t *used = <uint8_t *> malloc(1 << _TABLE_BITS)
    cdef int nk = 0, i, r, t, size, a, ok, na, status = 0
    cdef uint32_t seed, pos, row
    cdef uint32_t positions[16]
    if not (keys and vals and row_start and by_row and fill and row_order and used):
        status = 1
    else:
        _enumerate_multisets(0, 0, 0, 0, &nk, keys, vals)
        memset(row_start, 0, ((1 << _ROW_BITS) + 1) * sizeof(int32_t))
        for i in range(nk):
            row_start[_hash_row(keys[i]) + 1] += 1
        for r in range(1 << _ROW_BITS):
            row_start[r + 1] += row_start[r]
            fill[r] = row_start[r]
        for i in range(nk):
            row = _hash_row(keys[i])
            by_row[fill[row]] = i
            fill[row] += 1
        # rows by decreasing size (counting sort over sizes 0..16)
        for r in range(1 << _ROW_BITS):
            if row_start[r + 1] - row_start[r] > 16:
                status = 2
        t = 0
        for size in range(16, -1, -1):
            for r in range(1 << _ROW_BITS):
                if row_start[r + 1] - row_start[r] == size:
                    row_order[t] = r
                    t += 1
        memset(used, 0, 1 << _TABLE_BITS)
        for i in range(1 << _TABLE_BITS):
            _HASH_CLASS[i] = 0
        for t in range(0 if status == 0 else (1 << _ROW_BITS), 1 << _ROW_BITS):
            r = row_order[t]
            size = row_start[r + 1] - row_start[r]
            _ROW_SEED[r] = 0
            if size == 0:
                continue
            ok = 0
            for seed in range(65536):
                ok = 1
                na = 0
                for a in range(size):
                    pos = _hash_pos(keys[by_row[row_start[r] + a]], seed)
                    if used[pos]:
                        ok = 0
                        break
                    used[pos] = 2  # tentatively taken (catches clashes inside the row)
                    positions[na] = pos
                    na += 1
                for a in range(na):
                    used[positions[a]] = 1 if ok else 0
                if ok:
                    for a in range(size):
                        _HASH_CLASS[positions[a]] = vals[by_row[row_start[r] + a]]
                    _ROW_SEED[r] = <uint16_t>seed
                    break
            if not ok:
                status = 3
                break
        if status == 0 and nk != 73775:
            status = 4
    free(keys); free(vals); free(row_start); free(by_row); free(fill); free(row_order); free(used)
    return status
