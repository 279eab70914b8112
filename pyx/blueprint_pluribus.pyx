# cython: language_level=3, boundscheck=False, wraparound=False
"""External-sampling MCCFR at Pluribus' recipe over the abstract heads-up no-limit betting tree.

Same tree layout and regret layout (``slot[n] + bucket * num_children[n] + action``) as
``blueprint_mccfr.pyx``; what differs:

* **compact regrets**: regrets are int32 chips (rounded to the nearest chip, clamped to
  ``[regret_floor, regret_ceiling]``) when ``iregrets`` is given, float32 otherwise (the reference
  for tests);
* **partial averaging**: the opponent's strategy sum is kept only at nodes with ``avg_slot[n] >= 0``
  (Pluribus: the first betting round), in a separate compact array at ``avg_slot[n] + bucket * A``;
  other rounds are played from the current strategy (regret matching of the final regrets);
* **unit increments**: the strategy sum gets ``sigma`` (weight 1); linear weighting comes from the
  periodic discount of regrets and sums (:func:`discount_int32`, :func:`discount_float32`), as in
  Linear CFR / Pluribus' first phase;
* **no GIL**: several threads may call :func:`iterate_board` on the same arrays at once
  (Hogwild-style: a read-modify-write of one entry may lose a concurrent update; int32 / float32
  loads and stores are atomic on the platforms we build for, so values are never torn).

Pruning (Pluribus' form): in a traversal that prunes (probability ``prune_probability``), a traverser
action whose regret is below ``prune_threshold`` is skipped unless it is on the river or leads to a
terminal; skipped actions keep their regrets.

Random numbers are xoshiro256** seeded from ``seed`` (a run is a function of its seeds on one thread).

**Board preparation in the kernel** (:func:`run_boards`): the board of ``(seed, iteration, board index)``, the
hole-card deals and, for bucket-table abstractions (:class:`BucketTables`), every dealt hand's bucket on every
street (suit-isomorphism index, then a read of the round's uint16 table, memory-mapped or in RAM) and its
river strength (the hand evaluator) are computed here, without the GIL, so that threads scale.  Abstractions
without tables (the E[HS] stand-in) pass the board's ``bucket[4, 1326]`` and ``strength[1326]`` arrays
computed in Python instead; the board, deals and traversal draw the same numbers either way, so both paths
give bit-identical tables for the same abstraction.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint8_t, uint16_t, int32_t, int64_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.math cimport floor

include "blueprint_tree.pxi"


cdef struct Ctx:
    Tree t
    const long long* avg_slot
    int buckets[2][4]
    int winner
    int traverser
    int prune
    double prune_threshold
    double regret_floor
    double regret_ceiling
    float* fregrets        # float32 regrets, or NULL
    int* iregrets          # int32 regrets, or NULL
    float* strategy_sum    # compact sums of the averaged nodes
    double* work
    int max_actions
    uint64_t s[4]
    long long visited


include "xoshiro256.pxi"
include "handeval_core.pxi"
include "isomorph_core.pxi"
include "blueprint_sampling.pxi"

_init_binom()

cdef enum:
    NUM_PAIRS = 1326

cdef uint8_t _PAIR_LO[1326]   # lower card of each hole pair (pair order of cfrkit.cards.hands)
cdef uint8_t _PAIR_HI[1326]
cdef int _PAIR_OF[52][52]      # pair index of two distinct cards


def _init_pairs():
    cdef int a, b, i
    for b in range(1, 52):
        for a in range(b):
            i = b * (b - 1) // 2 + a
            _PAIR_LO[i] = a
            _PAIR_HI[i] = b
            _PAIR_OF[a][b] = i
            _PAIR_OF[b][a] = i
    for a in range(52):
        _PAIR_OF[a][a] = -1


_init_pairs()

cdef int[4] _BOARD_CARDS = [0, 3, 4, 5]


cdef inline double _get(Ctx* c, long long i) noexcept nogil:
    if c.iregrets != NULL:
        return <double>c.iregrets[i]
    return <double>c.fregrets[i]


cdef inline void _set(Ctx* c, long long i, double u) noexcept nogil:
    if u < c.regret_floor:
        u = c.regret_floor
    if u > c.regret_ceiling:
        u = c.regret_ceiling
    if c.iregrets != NULL:
        c.iregrets[i] = <int>floor(u + 0.5)
    else:
        c.fregrets[i] = <float>u


cdef inline void _match(Ctx* c, long long idx, int A, double* out) noexcept nogil:
    """out = regret matching of the regrets at idx (uniform when none is positive)."""
    cdef int a
    cdef double total = 0.0, x
    for a in range(A):
        x = _get(c, idx + a)
        out[a] = x if x > 0 else 0.0
        total += out[a]
    if total > 0:
        for a in range(A):
            out[a] /= total
    else:
        for a in range(A):
            out[a] = 1.0 / A


cdef double _walk(Ctx* c, int n, int depth) noexcept nogil:
    cdef int p = c.traverser
    cdef int k, a, A, child, r
    cdef long long idx, aidx
    cdef double v
    cdef double* sig
    cdef double* vals
    c.visited += 1
    k = c.t.kind[n]
    if k == 1 or k == 2:
        return _terminal_value(c, n, k)
    A = c.t.num_children[n]
    r = c.t.rnd[n]
    sig = c.work + <long long>depth * 2 * c.max_actions
    vals = sig + c.max_actions
    if c.t.player[n] == p:
        idx = c.t.slot[n] + <long long>c.buckets[p][r] * A
        _match(c, idx, A, sig)
        v = 0.0
        for a in range(A):
            child = c.t.child_start[n] + a
            if c.prune and r < 3 and c.t.kind[child] == 0 and _get(c, idx + a) < c.prune_threshold:
                vals[a] = 1e300  # marks a skipped action
                continue
            vals[a] = _walk(c, child, depth + 1)
            v += sig[a] * vals[a]
        for a in range(A):
            if vals[a] == 1e300:
                continue
            _set(c, idx + a, _get(c, idx + a) + (vals[a] - v))
        return v
    idx = c.t.slot[n] + <long long>c.buckets[1 - p][r] * A
    _match(c, idx, A, sig)
    if c.avg_slot[n] >= 0:
        aidx = c.avg_slot[n] + <long long>c.buckets[1 - p][r] * A
        for a in range(A):
            c.strategy_sum[aidx + a] += <float>sig[a]
    return _walk(c, c.t.child_start[n] + _sample_action(c, sig, A), depth + 1)


cdef void _bind_tree(Ctx* c, const signed char[::1] kind, const signed char[::1] player,
                     const signed char[::1] rnd, const int[::1] child_start, const int[::1] num_children,
                     const long long[:, ::1] spent, const long long[::1] slot, const long long[::1] avg_slot,
                     float[::1] strategy_sum, double prune_threshold, double regret_floor,
                     double regret_ceiling, int max_actions):
    """Point the context at the flat tree and tables (both entry points; the caller keeps the arrays alive)."""
    _bind_tree_arrays(&c.t, kind, player, rnd, child_start, num_children, spent, slot)
    c.avg_slot = &avg_slot[0]
    c.strategy_sum = &strategy_sum[0]
    c.prune_threshold = prune_threshold
    c.regret_floor = regret_floor
    c.regret_ceiling = regret_ceiling
    c.max_actions = max_actions
    c.visited = 0


cdef int _bind_regrets(Ctx* c, regrets, float[::1] strategy_sum) except -1:
    """Point the context at the int32 or float32 regret vector (the caller keeps the array alive); checks
    that ``strategy_sum`` is not empty."""
    cdef int[::1] ir
    cdef float[::1] fr
    c.iregrets = NULL
    c.fregrets = NULL
    if isinstance(regrets, np.ndarray) and regrets.dtype == np.int32:
        ir = regrets
        c.iregrets = &ir[0]
    elif isinstance(regrets, np.ndarray) and regrets.dtype == np.float32:
        fr = regrets
        c.fregrets = &fr[0]
    else:
        raise TypeError("regrets must be an int32 or float32 numpy vector")
    if strategy_sum.shape[0] == 0:
        raise ValueError("strategy_sum must hold at least one entry (pass a 1-entry array when nothing is averaged)")
    return 0


cdef int _alloc_work(Ctx* c, int max_actions, int max_depth) except -1:
    """The walk's per-depth workspace (freed by the caller)."""
    c.work = <double*>malloc(sizeof(double) * 2 * max_actions * (max_depth + 2))
    if c.work == NULL:
        raise MemoryError("pluribus kernel workspace")
    return 0


def iterate_board(const signed char[::1] kind, const signed char[::1] player, const signed char[::1] rnd,
                  const int[::1] child_start, const int[::1] num_children, const long long[:, ::1] spent,
                  const long long[::1] slot, const long long[::1] avg_slot, int max_actions, int max_depth,
                  const int[:, ::1] bucket, const int[::1] strength, const int[:, ::1] deals,
                  regrets, float[::1] strategy_sum, unsigned long long seed,
                  double prune_probability, double prune_threshold, double regret_floor, double regret_ceiling,
                  double[::1] root_values=None):
    """External-sampling traversals of one board (module docstring); releases the GIL while it walks.

    ``bucket[4, 1326]``: each pair's bucket per round; ``strength[1326]``: river strength (higher wins);
    ``deals[K, 2]``: pair indices of seat 0 and 1.  ``regrets``: int32 or float32 vector (chips), updated in
    place; ``strategy_sum``: float32, the averaged nodes' sums (``avg_slot``).  For each deal traverser 0
    then 1.  ``root_values`` (float64[2]) receives the sums of the sampled root values (chips).  Returns the
    number of tree nodes visited.
    """
    cdef Ctx c
    cdef Py_ssize_t K = deals.shape[0]
    cdef double sums[2]
    if K == 0:
        return 0
    _bind_regrets(&c, regrets, strategy_sum)
    _bind_tree(&c, kind, player, rnd, child_start, num_children, spent, slot, avg_slot, strategy_sum,
               prune_threshold, regret_floor, regret_ceiling, max_actions)
    sums[0] = 0.0
    sums[1] = 0.0
    _seed(&c, seed)
    _alloc_work(&c, max_actions, max_depth)
    with nogil:
        _play_given_deals(&c, bucket, strength, deals, prune_probability, sums)
    free(c.work)
    if root_values is not None:
        root_values[0] += sums[0]
        root_values[1] += sums[1]
    return c.visited


def discount_int32(int[::1] values, double factor):
    """values[i] = round(values[i] * factor) in place (Linear CFR's discount of int32 regrets)."""
    cdef Py_ssize_t i, n = values.shape[0]
    with nogil:
        for i in range(n):
            values[i] = <int>floor(values[i] * factor + 0.5)


def discount_float32(float[::1] values, double factor):
    """values[i] *= factor in place (float32 regrets or strategy sums)."""
    cdef Py_ssize_t i, n = values.shape[0]
    cdef float f = <float>factor
    with nogil:
        for i in range(n):
            values[i] = values[i] * f


def current_strategy_into(regrets, const signed char[::1] kind, const int[::1] num_children,
                          const long long[::1] slot, const long long[::1] avg_slot, const signed char[::1] rnd,
                          const int[::1] num_buckets, float[::1] out, Py_ssize_t start, Py_ssize_t stop):
    """Write the regret-matching strategy into ``out`` for entries ``[start, stop)`` of the regret layout, at
    the decision nodes that are not averaged (``avg_slot < 0``); other entries of ``out`` are left alone.

    ``out`` has ``stop - start`` entries (a chunk of the full strategy array, so that a file can be written
    without a second full-size array).  Probabilities, float32.
    """
    cdef Ctx c
    cdef Py_ssize_t n, N = kind.shape[0]
    cdef long long s0, e0, lo, hi, base, j
    cdef int A, b, a, B
    cdef double sig[256]
    cdef int[::1] ir
    cdef float[::1] fr
    c.iregrets = NULL
    c.fregrets = NULL
    if regrets.dtype == np.int32:
        ir = regrets
        c.iregrets = &ir[0]
    else:
        fr = regrets
        c.fregrets = &fr[0]
    with nogil:
        for n in range(N):
            if kind[n] != 0 or avg_slot[n] >= 0:
                continue
            A = num_children[n]
            B = num_buckets[rnd[n]]
            s0 = slot[n]
            e0 = s0 + <long long>A * B
            if e0 <= start or s0 >= stop:
                continue
            for b in range(B):
                base = s0 + <long long>b * A
                if base + A <= start or base >= stop:
                    continue
                _match(&c, base, A, sig)
                for a in range(A):
                    j = base + a
                    if start <= j < stop:
                        out[j - start] = <float>sig[a]


# ---------------------------------------------------------------------------------------------------------------
# Board preparation in the kernel: boards, deals, bucket-table lookups and river strengths without the GIL.

cdef struct Lookup:
    const uint16_t* table[4]     # round r: bucket of each isomorphism index
    const int32_t* sizes[4]      # hand indexer of round r (cards per round, configuration keys, offsets)
    const int64_t* keys[4]
    const int64_t* offsets[4]
    Py_ssize_t ncfg[4]
    long long entries[4]
    int num_buckets[4]


cdef class BucketTables:
    """The four rounds' bucket tables of a card abstraction, read by :func:`run_boards` without the GIL.

    ``tables``: four uint16 vectors (the bucket of each suit-isomorphism index of the round; numpy arrays or
    read-only memory maps); ``indexer``: four ``(sizes int32, keys int64, offsets int64)`` of the hand indexer
    (:meth:`cfrkit.cards.isomorphism.HandIndexer.index_tables`); ``num_buckets``: buckets per round (a table
    entry at or above it, such as the 0xFFFF of an unfinished table, stops the kernel with an error).
    """
    cdef Lookup lk
    cdef object keep

    def __init__(self, tables, indexer, num_buckets):
        cdef const uint16_t[::1] tv
        cdef const int32_t[::1] sv
        cdef const int64_t[::1] kv
        cdef const int64_t[::1] ov
        cdef int r
        if len(tables) != 4 or len(indexer) != 4 or len(num_buckets) != 4:
            raise ValueError("bucket tables, indexer tables and bucket counts are needed for the four rounds")
        keep = []
        for r in range(4):
            t = np.asarray(tables[r])
            if t.dtype != np.uint16 or t.ndim != 1 or not t.flags.c_contiguous or t.size == 0:
                raise ValueError(f"round {r}: a bucket table must be a non-empty contiguous uint16 vector")
            sizes, keys, offsets = indexer[r][0], indexer[r][1], indexer[r][2]
            tv = t
            sv = np.ascontiguousarray(sizes, dtype=np.int32)
            kv = np.ascontiguousarray(keys, dtype=np.int64)
            ov = np.ascontiguousarray(offsets, dtype=np.int64)
            if sv.shape[0] != r + 1 or kv.shape[0] == 0 or ov.shape[0] != kv.shape[0]:
                raise ValueError(f"round {r}: indexer tables do not describe round {r}")
            keep.append((t, sv, kv, ov))
            self.lk.table[r] = &tv[0]
            self.lk.entries[r] = t.shape[0]
            self.lk.sizes[r] = &sv[0]
            self.lk.keys[r] = &kv[0]
            self.lk.offsets[r] = &ov[0]
            self.lk.ncfg[r] = kv.shape[0]
            self.lk.num_buckets[r] = int(num_buckets[r])
        self.keep = keep

    def buckets(self, int round_, const uint8_t[:, ::1] cards):
        """int32[n]: buckets of hands ``cards[n, 2 + board cards]`` (hole, then board in deal order) by the
        kernel's lookup (-1 for a bad hand; for tests against the Python lookup)."""
        cdef Py_ssize_t i, n = cards.shape[0]
        out = np.empty(n, dtype=np.int32)
        cdef int[::1] o = out
        if not 0 <= round_ < 4 or cards.shape[1] != 2 + _BOARD_CARDS[round_]:
            raise ValueError(f"round {round_} needs cards of shape (n, {2 + _BOARD_CARDS[round_]})")
        with nogil:
            for i in range(n):
                o[i] = _lookup(&self.lk, round_, &cards[i, 0])
        return out


cdef inline int _lookup(const Lookup* lk, int r, const uint8_t* cards) noexcept nogil:
    """Bucket of one hand (hole cards then the round's board cards); -1 when it cannot be indexed."""
    cdef int64_t idx = _index_one(cards, lk.sizes[r], r + 1, lk.keys[r], lk.offsets[r], lk.ncfg[r])
    if idx < 0 or idx >= lk.entries[r]:
        return -1
    return lk.table[r][idx]


cdef inline uint64_t _mix64(uint64_t z) noexcept nogil:
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef void _seed_board(Ctx* c, uint64_t seed, long long it, long long b) noexcept nogil:
    """The generator of board ``b`` of iteration ``it`` (a function of the three, nothing else)."""
    cdef uint64_t h = _mix64(seed + 0x9E3779B97F4A7C15ULL)
    h = _mix64(h ^ (<uint64_t>it + 0x632BE59BD9B4E019ULL))
    h = _mix64(h ^ (<uint64_t>b + 0x8CB92BA72F3D8DD7ULL))
    _seed(c, h)


cdef inline int _below(Ctx* c, int n) noexcept nogil:
    cdef int k = <int>(_uniform(c) * n)
    return k if k < n else n - 1


cdef void _draw_board(Ctx* c, uint8_t* board) noexcept nogil:
    """Five distinct cards, uniformly (partial Fisher-Yates over the deck)."""
    cdef uint8_t deck[52]
    cdef int i, j
    cdef uint8_t t
    for i in range(52):
        deck[i] = i
    for i in range(5):
        j = i + _below(c, 52 - i)
        t = deck[i]
        deck[i] = deck[j]
        deck[j] = t
        board[i] = deck[i]


cdef inline int _draw_pair(Ctx* c, const double* cdf) noexcept nogil:
    """A pair index drawn by the cumulative masses ``cdf[1326]`` (last entry the total)."""
    cdef double u = _uniform(c) * cdf[NUM_PAIRS - 1]
    cdef int lo = 0, hi = NUM_PAIRS - 1, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if cdf[mid] > u:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef int _one_board(Ctx* c, const Lookup* lk, uint64_t seed, long long it, long long b,
                    const uint8_t* fixed_board, const double* weights, const int* given_bucket,
                    const int* given_strength, int deals, double prune_p, uint8_t* board_out,
                    double* sums) noexcept nogil:
    """Board ``(seed, it, b)``: draw it (or take ``fixed_board``), deal ``deals`` hole-card pairs (masses
    ``weights``, default 1, blocked pairs 0; seat 1's pair disjoint from seat 0's), look their buckets up
    (``given_bucket[4 * 1326]`` / ``given_strength[1326]`` when not NULL, else the tables) and traverse each
    deal once per seat.  Returns 0, or an error code: 1 no pair can be dealt, 2 a table has no bucket."""
    cdef uint8_t board[5]
    cdef uint8_t cards[7]
    cdef double cdf[1326]
    cdef uint64_t dead = 0, bmask = 0, key0 = KEY_START, m
    cdef int i, k, r, h, seat, tries, x
    cdef int hands[2]
    cdef int strength[2]
    cdef double acc = 0.0, w
    _seed_board(c, seed, it, b)
    if fixed_board != NULL:
        for i in range(5):
            board[i] = fixed_board[i]
    else:
        _draw_board(c, board)
    for i in range(5):
        board_out[i] = board[i]
        dead |= (<uint64_t>1) << board[i]
        bmask |= _CARD_BIT[board[i]]
        key0 += _CARD_KEY[board[i]]
    for h in range(NUM_PAIRS):
        if ((dead >> _PAIR_LO[h]) & 1) or ((dead >> _PAIR_HI[h]) & 1):
            w = 0.0
        else:
            w = 1.0 if weights == NULL else weights[h]
        acc += w
        cdf[h] = acc
    if acc <= 0:
        return 1
    for k in range(deals):
        hands[0] = _draw_pair(c, cdf)
        hands[1] = _draw_pair(c, cdf)
        tries = 0
        while (_PAIR_LO[hands[1]] == _PAIR_LO[hands[0]] or _PAIR_LO[hands[1]] == _PAIR_HI[hands[0]]
               or _PAIR_HI[hands[1]] == _PAIR_LO[hands[0]] or _PAIR_HI[hands[1]] == _PAIR_HI[hands[0]]):
            tries += 1
            if tries > 10000:
                return 1
            hands[1] = _draw_pair(c, cdf)
        for seat in range(2):
            h = hands[seat]
            if given_bucket != NULL:
                for r in range(4):
                    c.buckets[seat][r] = given_bucket[r * NUM_PAIRS + h]
                strength[seat] = given_strength[h]
            else:
                cards[0] = _PAIR_LO[h]
                cards[1] = _PAIR_HI[h]
                for i in range(5):
                    cards[2 + i] = board[i]
                for r in range(4):
                    x = _lookup(lk, r, cards)
                    if x < 0 or x >= lk.num_buckets[r]:
                        return 2
                    c.buckets[seat][r] = x
                strength[seat] = eval_key(key0 + _CARD_KEY[cards[0]] + _CARD_KEY[cards[1]],
                                          bmask | _CARD_BIT[cards[0]] | _CARD_BIT[cards[1]])
        _play_deal(c, strength[0], strength[1], prune_p, sums)
    return 0


def sample_board(unsigned long long seed, long long iteration, long long board_index):
    """uint8[5]: the board :func:`run_boards` draws for ``(seed, iteration, board_index)`` (for the Python
    path, which needs the board to compute its buckets first)."""
    cdef Ctx c
    out = np.empty(5, dtype=np.uint8)
    cdef uint8_t[::1] o = out
    _seed_board(&c, seed, iteration, board_index)
    _draw_board(&c, &o[0])
    return out


def run_boards(const signed char[::1] kind, const signed char[::1] player, const signed char[::1] rnd,
               const int[::1] child_start, const int[::1] num_children, const long long[:, ::1] spent,
               const long long[::1] slot, const long long[::1] avg_slot, int max_actions, int max_depth,
               regrets, float[::1] strategy_sum, unsigned long long seed, long long it_start, long long it_end,
               long long boards_per_iteration, long long first_board, long long board_step, int deals_per_board,
               long long prune_warmup, double prune_probability, double prune_threshold, double regret_floor,
               double regret_ceiling, BucketTables tables=None, const int[:, ::1] bucket=None,
               const int[::1] strength=None, const unsigned char[::1] fixed_board=None,
               const double[::1] hand_weights=None, double[::1] root_values=None):
    """External-sampling traversals of the boards ``first_board, first_board + board_step, ... <
    boards_per_iteration`` of iterations ``it_start .. it_end - 1`` (in that order), with the board
    preparation in the kernel; releases the GIL for the whole call.

    Each board is a function of ``(seed, iteration, board index)`` (or ``fixed_board``); ``deals_per_board``
    hole-card deals are drawn on it (``hand_weights`` float64[1326], default uniform) and each is traversed
    once per seat; traversals of iterations above ``prune_warmup`` prune with probability
    ``prune_probability``.  Buckets and strengths come from ``tables`` (a :class:`BucketTables`), or from
    ``bucket[4, 1326]`` and ``strength[1326]`` computed in Python for exactly one board (then ``it_end =
    it_start + 1`` and one board index).  ``regrets`` (int32 or float32 chips) and ``strategy_sum`` (float32)
    are updated in place, as :func:`iterate_board`; ``root_values`` (float64[2]) receives the sums of the
    sampled root values (chips).  Returns the number of tree nodes visited.
    """
    cdef Ctx c
    cdef const Lookup* lk = NULL
    cdef const int* gb = NULL
    cdef const int* gs = NULL
    cdef const uint8_t* fb = NULL
    cdef const double* hw = NULL
    cdef long long it, b, boards = 0
    cdef int err = 0
    cdef uint8_t board[5]
    cdef double sums[2]
    cdef double prune_p
    _bind_regrets(&c, regrets, strategy_sum)
    if board_step < 1 or first_board < 0 or deals_per_board < 1:
        raise ValueError("board_step and deals_per_board must be positive and first_board >= 0")
    if tables is not None:
        lk = &tables.lk
    else:
        if bucket is None or strength is None:
            raise ValueError("give bucket tables, or the board's bucket[4, 1326] and strength[1326] arrays")
        if bucket.shape[0] != 4 or bucket.shape[1] != NUM_PAIRS or strength.shape[0] != NUM_PAIRS:
            raise ValueError("bucket must be int32[4, 1326] and strength int32[1326]")
        if it_end - it_start != 1 or first_board + board_step < boards_per_iteration:
            raise ValueError("bucket / strength arrays describe one board: one iteration and one board index")
        gb = &bucket[0, 0]
        gs = &strength[0]
    if fixed_board is not None:
        if fixed_board.shape[0] != 5:
            raise ValueError("a fixed board has 5 cards")
        fb = &fixed_board[0]
    if hand_weights is not None:
        if hand_weights.shape[0] != NUM_PAIRS:
            raise ValueError("hand_weights must hold 1326 masses")
        hw = &hand_weights[0]
    _bind_tree(&c, kind, player, rnd, child_start, num_children, spent, slot, avg_slot, strategy_sum,
               prune_threshold, regret_floor, regret_ceiling, max_actions)
    sums[0] = 0.0
    sums[1] = 0.0
    _alloc_work(&c, max_actions, max_depth)
    with nogil:
        for it in range(it_start, it_end):
            prune_p = prune_probability if it > prune_warmup else 0.0
            b = first_board
            while b < boards_per_iteration:
                err = _one_board(&c, lk, seed, it, b, fb, hw, gb, gs, deals_per_board, prune_p, board, sums)
                if err:
                    break
                boards += 1
                b += board_step
            if err:
                break
    free(c.work)
    if err == 1:
        raise ValueError("no two disjoint hole pairs can be dealt on board "
                         f"{[int(x) for x in board[:5]]} with the given hand weights")
    if err == 2:
        raise ValueError(f"a bucket table has no valid bucket for a hand on board {[int(x) for x in board[:5]]} "
                         "(unfinished or damaged table)")
    if root_values is not None:
        root_values[0] += sums[0]
        root_values[1] += sums[1]
    return c.visited
