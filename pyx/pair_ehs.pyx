# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""E[HS] of a few hole pairs against a uniform opponent (Cython): ``uniform_river_ehs`` of
:mod:`cfrkit._kernels.range_equity` for K pairs instead of all 1326 (AIVAT's value functions bucket the
two hands of a deal on many sampled boards).  Python API: ``EHSAbstraction.ehs_of_pairs``.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

cnp.import_array()


cdef extern from *:
    """
    /* numpy's Generator(PCG64(seed)).random() for a 64-bit integer seed, reproduced in C so that a batch of
       boards needs no Python object per board: SeedSequence(seed) (pool of 4 words, generate_state(4, uint64)),
       PCG64's seeding and XSL-RR 128/64 output, and the 53-bit double.  Checked draw for draw against numpy
       (tests/test_aivat_blueprint_fast.py). */
    typedef unsigned __int128 cfrkit_u128;
    static inline uint32_t cfrkit_hashmix(uint32_t value, uint32_t *hash_const) {
        value ^= *hash_const;
        *hash_const *= 0x931e8875u;
        value *= *hash_const;
        value ^= value >> 16;
        return value;
    }
    static inline uint32_t cfrkit_mix(uint32_t x, uint32_t y) {
        uint32_t r = 0xca01f9ddu * x - 0x4973f715u * y;
        return r ^ (r >> 16);
    }
    typedef struct { cfrkit_u128 state, inc; } cfrkit_pcg64;
    static inline void cfrkit_pcg_step(cfrkit_pcg64 *g) {
        const cfrkit_u128 mult = (((cfrkit_u128)2549297995355413924ULL) << 64) | 4865540595714422341ULL;
        g->state = g->state * mult + g->inc;
    }
    static void cfrkit_pcg64_seed(cfrkit_pcg64 *g, uint64_t seed) {
        /* the seed's 32-bit words, least significant first; a missing high word mixes as 0, the same */
        uint32_t words[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
        uint32_t pool[4], h = 0x43b0d7e5u, w[8];
        uint64_t val[4];
        for (int i = 0; i < 4; i++) pool[i] = cfrkit_hashmix(i < 2 ? words[i] : 0u, &h);
        for (int src = 0; src < 4; src++)
            for (int dst = 0; dst < 4; dst++)
                if (src != dst) pool[dst] = cfrkit_mix(pool[dst], cfrkit_hashmix(pool[src], &h));
        h = 0x8b51f9ddu;
        for (int i = 0; i < 8; i++) {
            uint32_t v = pool[i & 3] ^ h;
            h *= 0x58f38dedu;
            v *= h;
            v ^= v >> 16;
            w[i] = v;
        }
        for (int k = 0; k < 4; k++) val[k] = (uint64_t)w[2 * k] | ((uint64_t)w[2 * k + 1] << 32);
        g->state = 0;
        g->inc = ((((cfrkit_u128)val[2]) << 64 | val[3]) << 1) | 1u;
        cfrkit_pcg_step(g);
        g->state += ((cfrkit_u128)val[0]) << 64 | val[1];
        cfrkit_pcg_step(g);
    }
    static inline double cfrkit_pcg64_double(cfrkit_pcg64 *g) {
        cfrkit_pcg_step(g);
        uint64_t x = (uint64_t)(g->state >> 64) ^ (uint64_t)g->state;
        unsigned rot = (unsigned)(g->state >> 122);
        x = (x >> rot) | (x << ((-rot) & 63u));
        return (double)(x >> 11) * (1.0 / 9007199254740992.0);
    }
    static inline uint64_t cfrkit_pcg64_out53(cfrkit_u128 s) {
        /* the 53 bits cfrkit_pcg64_double scales (its double is this integer times 2^-53: the same order) */
        uint64_t x = (uint64_t)(s >> 64) ^ (uint64_t)s;
        unsigned rot = (unsigned)(s >> 122);
        x = (x >> rot) | (x << ((-rot) & 63u));
        return x >> 11;
    }
    static inline void cfrkit_fold2(uint64_t k, int j, uint64_t *b1, int *m1, uint64_t *b2, int *m2) {
        /* (b1, m1): the smallest key so far and its first index; (b2, m2): the same among the others --
           branch-free (the keys are random: a branch per new minimum was mispredicted) */
        int lt1 = k < *b1, lt2 = k < *b2;
        *b2 = lt1 ? *b1 : (lt2 ? k : *b2);
        *m2 = lt1 ? *m1 : (lt2 ? j : *m2);
        *b1 = lt1 ? k : *b1;
        *m1 = lt1 ? j : *m1;
    }
    static void cfrkit_pcg64_two_smallest(cfrkit_pcg64 *g, int n, int *m1, int *m2) {
        /* n draws of cfrkit_pcg64_double (as their 53-bit integers: the same order): the index of the smallest
           (the first of equal ones, as numpy.argmin) and of the smallest of the others.  The states four steps at
           a time from the same state (step k: s m^k + c (m^(k-1) + ... + 1), mod 2^128: the very states of k
           single steps), so the four 128-bit multiplications do not wait on each other. */
        const cfrkit_u128 a1 = (((cfrkit_u128)2549297995355413924ULL) << 64) | 4865540595714422341ULL;
        const cfrkit_u128 a2 = a1 * a1, a3 = a2 * a1, a4 = a3 * a1;
        const cfrkit_u128 c1 = g->inc, c2 = c1 * (a1 + 1u), c3 = c1 * (a2 + a1 + 1u), c4 = c1 * (a3 + a2 + a1 + 1u);
        cfrkit_u128 s = g->state;
        uint64_t b1 = 0xFFFFFFFFFFFFFFFFULL, b2 = 0xFFFFFFFFFFFFFFFFULL;  /* above every 53-bit key */
        int i1 = 0, i2 = 0, j = 0;
        for (; j + 3 < n; j += 4) {
            cfrkit_u128 s1 = s * a1 + c1, s2 = s * a2 + c2, s3 = s * a3 + c3, s4 = s * a4 + c4;
            uint64_t k1 = cfrkit_pcg64_out53(s1), k2 = cfrkit_pcg64_out53(s2), k3 = cfrkit_pcg64_out53(s3),
                     k4 = cfrkit_pcg64_out53(s4);
            cfrkit_fold2(k1, j, &b1, &i1, &b2, &i2);
            cfrkit_fold2(k2, j + 1, &b1, &i1, &b2, &i2);
            cfrkit_fold2(k3, j + 2, &b1, &i1, &b2, &i2);
            cfrkit_fold2(k4, j + 3, &b1, &i1, &b2, &i2);
            s = s4;
        }
        for (; j < n; j++) {
            s = s * a1 + c1;
            cfrkit_fold2(cfrkit_pcg64_out53(s), j, &b1, &i1, &b2, &i2);
        }
        g->state = s;
        *m1 = i1;
        *m2 = i2;
    }
    """
    ctypedef struct cfrkit_pcg64:
        pass
    void cfrkit_pcg64_seed(cfrkit_pcg64 *g, uint64_t seed) nogil
    double cfrkit_pcg64_double(cfrkit_pcg64 *g) nogil
    void cfrkit_pcg64_two_smallest(cfrkit_pcg64 *g, int n, int *m1, int *m2) nogil

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
    if strengths.shape[1] != NUM_PAIRS:
        raise ValueError("strengths must be (B, 1326)")
    _check_pairs(pairs)
    out_arr = np.full(pairs.shape[0], np.nan)
    cdef double[::1] out = out_arr
    total_arr = np.zeros(pairs.shape[0])
    count_arr = np.zeros(pairs.shape[0], dtype=np.int64)
    cdef double[::1] total = total_arr
    cdef int64_t[::1] count = count_arr
    if pairs.shape[0] > 0:
        with nogil:
            _pairs_ehs(&strengths[0, 0] if strengths.shape[0] > 0 else NULL, strengths.shape[0], &pairs[0],
                       pairs.shape[0], &out[0], &total[0], &count[0])
    return out_arr


cdef _check_pairs(const int64_t[::1] pairs):
    cdef Py_ssize_t q
    for q in range(pairs.shape[0]):
        if not 0 <= pairs[q] < NUM_PAIRS:
            raise ValueError(f"pair index {pairs[q]} is not in 0..1325")


cdef void _pairs_ehs(const int32_t *rows, Py_ssize_t nb, const int64_t *pairs, Py_ssize_t nk, double *out,
                     double *total, int64_t *count) noexcept nogil:
    """The body of :func:`uniform_river_ehs_pairs` on ``nb`` rows of 1326 strengths; ``total`` and ``count``
    (K each) start at zero; ``out[q]`` is written where the pair is live on some board (else left as is)."""
    cdef Py_ssize_t b, q
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
    for b in range(nb):
        s = rows + b * NUM_PAIRS
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


def pcg64_doubles(uint64_t seed, Py_ssize_t n):
    """float64[n]: ``numpy.random.Generator(numpy.random.PCG64(seed)).random(n)`` bit for bit (``seed`` a
    64-bit unsigned integer), from the C reproduction :func:`sampled_runouts` draws with."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    out_arr = np.empty(n)
    cdef double[::1] out = out_arr
    cdef cfrkit_pcg64 g
    cdef Py_ssize_t i
    cfrkit_pcg64_seed(&g, seed)
    for i in range(n):
        out[i] = cfrkit_pcg64_double(&g)
    return out_arr


def sorted_boards(const int64_t[:, ::1] boards):
    """int64[B, n]: each row of ``boards`` (int64[B, n], card ids in any order) sorted increasingly, checked: ids
    0..51, distinct within a row (one-line ValueError).  ``EHSAbstraction._sorted_boards`` of an integer array: the
    sort and the checks in one pass instead of five numpy calls (a chance node's 16 boards)."""
    cdef Py_ssize_t nb = boards.shape[0], n = boards.shape[1], k, i, j
    out_arr = np.empty((nb, n), dtype=np.int64)
    cdef int64_t[:, ::1] out = out_arr
    cdef int64_t x
    cdef bint bad = False
    with nogil:
        for k in range(nb):
            for i in range(n):  # insertion sort: 3 to 5 cards
                x = boards[k, i]
                if x < 0 or x > 51:
                    bad = True
                j = i
                while j > 0 and out[k, j - 1] > x:
                    out[k, j] = out[k, j - 1]
                    j -= 1
                out[k, j] = x
            for i in range(1, n):
                if out[k, i] == out[k, i - 1]:
                    bad = True
    if bad:
        raise ValueError("boards must hold distinct card ids 0..51")
    return out_arr


def sampled_runouts(const int64_t[:, ::1] boards, const uint64_t[::1] seeds, Py_ssize_t runouts):
    """uint8[K * runouts, 5]: the river boards ``EHSAbstraction`` averages E[HS] over, for K boards at once.

    ``boards``: int64[K, n] sorted distinct card ids (``n`` 3 or 4); ``seeds``: uint64[K], each board's sampling
    seed.  Rows ``k * runouts .. (k + 1) * runouts - 1`` are board ``k``'s cards followed by the ``5 - n`` live
    cards (increasing ids ``rest``) of smallest keys in a row of ``rest.size`` uniform keys, in increasing key
    order, the keys of the run-outs drawn row after row by ``Generator(PCG64(seeds[k])).random((runouts,
    rest.size))``; the smallest key found as ``numpy.argmin`` finds it (the first of equal keys).  A turn
    (``n`` 4) needs ``runouts`` below its 48 rivers (else every river is taken, not sampled).
    """
    cdef Py_ssize_t nb = boards.shape[0], n = boards.shape[1], k, i, j, nr
    if seeds.shape[0] != nb:
        raise ValueError(f"need one seed per board: {nb} boards, {seeds.shape[0]} seeds")
    if n not in (3, 4):
        raise ValueError(f"boards must hold 3 or 4 cards, got {n}")
    if runouts < 1 or (n == 4 and runouts >= 48):
        raise ValueError(f"runouts must be in 1..{49 if n == 3 else 47} to be sampled, got {runouts}")
    cdef uint64_t used
    for k in range(nb):
        used = 0
        for i in range(n):
            if not 0 <= boards[k, i] < 52 or (used >> boards[k, i]) & 1 or (i > 0 and boards[k, i] < boards[k, i - 1]):
                raise ValueError(f"board {k} must hold sorted distinct card ids 0..51, got {list(boards[k])}")
            used |= (<uint64_t>1) << boards[k, i]
    out_arr = np.empty((nb * runouts, 5), dtype=np.uint8)
    cdef uint8_t[:, ::1] out = out_arr
    cdef int rest[52]
    cdef int i1, i2
    cdef cfrkit_pcg64 g
    with nogil:
        for k in range(nb):
            used = 0
            for i in range(n):
                used |= (<uint64_t>1) << boards[k, i]
            nr = 0
            for j in range(52):
                if not (used >> j) & 1:
                    rest[nr] = <int>j
                    nr += 1
            cfrkit_pcg64_seed(&g, seeds[k])
            for i in range(runouts):
                # the row's keys drawn and folded at once: the smallest (numpy.argmin's index) and, on a flop, the
                # smallest of the others (argmin after the first is set to infinity)
                cfrkit_pcg64_two_smallest(&g, <int>nr, &i1, &i2)
                for j in range(n):
                    out[k * runouts + i, j] = <uint8_t>boards[k, j]
                out[k * runouts + i, n] = <uint8_t>rest[i1]
                if n == 3:
                    out[k * runouts + i, 4] = <uint8_t>rest[i2]
    return out_arr
