# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""One hand against a range over many boards (Cython). Python API: cfrkit.cards.range_equity.

Strength rows are int32[B, 1326] hand classes (1..7462, 0 = the pair touches that board), from
``cfrkit.cards.equity.board_strengths_batch`` or :func:`river_strengths` (the same classes, faster);
ranges are float64[1326] in the pair order of cfrkit.cards.hands.
"""
import numpy as np
cimport numpy as cnp

include "handeval_core.pxi"
from libc.string cimport memcpy

cnp.import_array()

cdef enum:
    NUM_PAIRS = 1326

cdef uint8_t _C1[1326]      # lower card of each pair
cdef uint8_t _C2[1326]      # higher card
cdef uint8_t _RANKS[1326]   # 13 * low rank + high rank of the pair (rank order inside the pair)
cdef uint32_t _RANK_KEY[13] # 5^rank: a card's share of the rank word of the additive key
cdef uint8_t _R91[169]      # 13 * ra + rb (ra <= rb) -> its index among the 91 rank pairs in that order


def _init_pairs():
    cdef int a, b, i, ra, rb
    for b in range(1, 52):
        for a in range(b):
            i = b * (b - 1) // 2 + a
            _C1[i] = a
            _C2[i] = b
            ra = a >> 2
            rb = b >> 2
            _RANKS[i] = 13 * min(ra, rb) + max(ra, rb)
    for a in range(13):
        _RANK_KEY[a] = <uint32_t>(_CARD_KEY[4 * a] & 0xFFFFFFFFu)
    i = 0
    for a in range(13):
        for b in range(a, 13):
            _R91[13 * a + b] = i
            i += 1


_init_pairs()


cdef extern from *:
    """
    /* restrict: the compiler may vectorise these loops (no aliasing between the arrays) */
    static void cfrkit_gather_ranks(const int32_t *restrict by_ranks, const uint8_t *restrict ranks,
                                    int32_t *restrict row) {
        for (int i = 0; i < 1326; i++) row[i] = by_ranks[ranks[i]];
    }
    static void cfrkit_hand_row(const int32_t *restrict row, int sh, int32_t *restrict score,
                                int32_t *restrict count) {
        for (int j = 0; j < 1326; j++) {
            int sj = row[j];
            int live = sj != 0;
            score[j] += live * (2 * (sh > sj) + (sh == sj));
            count[j] += live;
        }
    }
    static void cfrkit_rank_row(const int32_t *restrict by_ranks, int sh, int32_t *restrict acc) {
        for (int q = 0; q < 169; q++) acc[q] += 2 * (sh > by_ranks[q]) + (sh == by_ranks[q]);
    }
    static void cfrkit_below_equal(const uint16_t *restrict cls, const int32_t *restrict cnt, int sp, int *w,
                                   int *t) {
        /* the live opponents of the 91 rank pairs whose class is below / equal to sp (branch-free, vectorised) */
        int ww = 0, tt = 0;
        for (int j = 0; j < 91; j++) {
            int c = cls[j];
            ww += cnt[j] * (c < sp);
            tt += cnt[j] * (c == sp);
        }
        *w = ww;
        *t = tt;
    }
    static void cfrkit_flush_fix(const uint64_t *restrict fmask, const int32_t *restrict fcls,
                                 const int32_t *restrict fsq, int nf, uint64_t pm, int sp, int *w, int *t) {
        /* the nf flush pairs disjoint from the pair pm: their rank pair's class out, their own class in
           (branch-free: the same integer sums as skipping the pairs that share a card) */
        int ww = *w, tt = *t;
        for (int j = 0; j < nf; j++) {
            int ok = (pm & fmask[j]) == 0;
            ww += ok * ((fsq[j] < sp) - (fcls[j] < sp));
            tt += ok * ((fsq[j] == sp) - (fcls[j] == sp));
        }
        *w = ww;
        *t = tt;
    }
    static void cfrkit_flush_out(const uint64_t *restrict fmask, const int32_t *restrict fcls, int nf, uint64_t pm,
                                 int sp, int *w, int *t) {
        /* cfrkit_flush_fix where every flush pair's own class is above sp (sp below the lowest flush): their rank
           pair's class out, nothing in (the same integer sums: (fsq < sp) and (fsq == sp) are 0 there) */
        int ww = *w, tt = *t;
        for (int j = 0; j < nf; j++) {
            int ok = (pm & fmask[j]) == 0;
            ww -= ok * (fcls[j] < sp);
            tt -= ok * (fcls[j] == sp);
        }
        *w = ww;
        *t = tt;
    }
    """
    void cfrkit_flush_out(const uint64_t *fmask, const int32_t *fcls, int nf, uint64_t pm, int sp, int *w,
                          int *t) nogil
    void cfrkit_flush_fix(const uint64_t *fmask, const int32_t *fcls, const int32_t *fsq, int nf, uint64_t pm,
                          int sp, int *w, int *t) nogil
    void cfrkit_below_equal(const uint16_t *cls, const int32_t *cnt, int sp, int *w, int *t) nogil
    void cfrkit_rank_row(const int32_t *by_ranks, int sh, int32_t *acc) nogil
    void cfrkit_gather_ranks(const int32_t *by_ranks, const uint8_t *ranks, int32_t *row) nogil
    void cfrkit_hand_row(const int32_t *row, int sh, int32_t *score, int32_t *count) nogil


cdef int32_t _CARD_PAIRS[52][51]     # the 51 pairs holding each card
cdef int32_t _SUIT_PAIRS[4][585]     # pairs with at least one card of each suit (both-suited first)
cdef int _SUITED_COUNT = 78          # of which the first 78 hold two cards of the suit


def _init_lists():
    cdef int c, i, n, s, k
    cdef int fill[52]
    for c in range(52):
        fill[c] = 0
    for i in range(NUM_PAIRS):
        _CARD_PAIRS[_C1[i]][fill[_C1[i]]] = i
        fill[_C1[i]] += 1
        _CARD_PAIRS[_C2[i]][fill[_C2[i]]] = i
        fill[_C2[i]] += 1
    for s in range(4):
        n = 0
        for k in range(2):  # both cards of the suit first, then one
            for i in range(NUM_PAIRS):
                if ((_C1[i] & 3) == s) + ((_C2[i] & 3) == s) == 2 - k:
                    _SUIT_PAIRS[s][n] = i
                    n += 1


_init_lists()


cdef inline int _rank_class(uint32_t rk) noexcept nogil:
    return _HASH_CLASS[_hash_pos(rk, _ROW_SEED[_hash_row(rk)])]


cdef void _board_row(const uint8_t *board, int32_t *row) noexcept nogil:
    """Hand class of all 1326 pairs on one 5-card board into ``row`` (0 = the pair touches it)."""
    cdef uint64_t mask = 0, key = KEY_START, pm
    cdef uint32_t rk
    cdef int i, j, c, ra, rb, fs, need, n, p
    cdef int counts[4]
    cdef int32_t by_ranks[169]
    counts[0] = 0
    counts[1] = 0
    counts[2] = 0
    counts[3] = 0
    for j in range(5):
        c = board[j]
        mask |= _CARD_BIT[c]
        key += _CARD_KEY[c]
        counts[c & 3] += 1
    rk = <uint32_t>(key & 0xFFFFFFFFu)
    for ra in range(13):
        for rb in range(ra, 13):
            by_ranks[13 * ra + rb] = _rank_class(rk + _RANK_KEY[ra] + _RANK_KEY[rb])
    cfrkit_gather_ranks(by_ranks, _RANKS, row)
    # a 5-card board holds at most one suit with 3+ cards: the pairs with 5 - count cards of
    # that suit can make a flush and are evaluated as cards
    fs = -1
    need = 3
    for j in range(4):
        if counts[j] >= 3:
            fs = j
            need = 5 - counts[j]
    if fs >= 0:
        if need == 0:
            for i in range(NUM_PAIRS):
                row[i] = eval_key(key + _CARD_KEY[_C1[i]] + _CARD_KEY[_C2[i]],
                                  mask | _CARD_BIT[_C1[i]] | _CARD_BIT[_C2[i]])
        else:
            n = 78 if need == 2 else 585
            for j in range(n):
                p = _SUIT_PAIRS[fs][j]
                pm = _CARD_BIT[_C1[p]] | _CARD_BIT[_C2[p]]
                if not (mask & pm):
                    row[p] = eval_key(key + _CARD_KEY[_C1[p]] + _CARD_KEY[_C2[p]], mask | pm)
    for j in range(5):
        c = board[j]
        for i in range(51):
            row[_CARD_PAIRS[c][i]] = 0


def river_strengths(const uint8_t[:, ::1] boards):
    """Hand class of all 1326 pairs on each 5-card board: uint8[B, 5] -> int32[B, 1326] (0 = blocked).

    The same numbers as ``cfrkit.cards.equity.board_strengths_batch`` (tested on all pairs of many
    boards), about twice as fast: a pair that cannot make a flush with the board is worth the class
    of its rank multiset alone, so the 91 rank combinations are evaluated once per board and the
    pairs read them; only pairs that can complete a flush are evaluated as cards, and the pairs
    touching the board are zeroed from per-card lists.  Boards must hold 5 distinct valid cards (the
    caller checks).
    """
    cdef Py_ssize_t nb = boards.shape[0], b
    if boards.shape[1] != 5:
        raise ValueError(f"boards must have shape (B, 5), got ({nb}, {boards.shape[1]})")
    out_arr = np.empty((nb, NUM_PAIRS), dtype=np.int32)
    cdef int32_t[:, ::1] out = out_arr
    with nogil:
        for b in range(nb):
            _board_row(&boards[b, 0], &out[b, 0])
    return out_arr


def flop_hand_rows(const uint8_t[::1] flop, const int32_t[::1] hands):
    """:func:`hand_rows` of several pairs over all 1,176 turn-river runouts of a flop, in one pass.

    ``flop``: uint8[3] distinct card ids; ``hands``: int32[K] pair indices.  Returns two
    int32[K, 1326] arrays (``twice_score``, ``count``), row k equal to
    ``hand_rows(river_strengths(runout_boards(flop)), hands[k])`` (tested), without the 6 MB strength
    matrix or the runout list: the rank classes are computed once per (turn rank, river rank), each
    hand's comparisons are summed per rank combination, and only flush pairs and pairs holding the
    turn or river card are corrected pair by pair (the two hands of a duplicate deal share the flop).
    """
    if flop.shape[0] != 3:
        raise ValueError(f"flop must hold 3 cards, got {flop.shape[0]}")
    cdef int k, nh = hands.shape[0], t, r, c
    cdef uint64_t used = 0
    for k in range(3):
        c = flop[k]
        if c > 51 or (used >> c) & 1:
            raise ValueError(f"flop cards must be distinct ids 0..51, got {list(flop)}")
        used |= (<uint64_t>1) << c
    for k in range(nh):
        if not 0 <= hands[k] < 1326:
            raise ValueError(f"hands must be pair indices 0..1325, got {hands[k]}")
    # Per runout a pair is worth the class of its rank combination unless it can make a flush (then
    # it is evaluated as cards) or touches the turn or river (then it counts nothing).  So each hand's
    # comparisons are summed per rank combination (169 entries instead of 1,326 pairs), and only the
    # flush pairs and the pairs holding the turn or river card are corrected pair by pair.
    score_arr = np.zeros((nh, NUM_PAIRS), dtype=np.int32)
    count_arr = np.zeros((nh, NUM_PAIRS), dtype=np.int32)
    acc_arr = np.zeros((nh, 169), dtype=np.int32)
    live_arr = np.zeros(nh, dtype=np.int32)
    sh_arr = np.zeros(nh, dtype=np.int32)
    cdef int32_t[:, ::1] score = score_arr, count = count_arr, acc = acc_arr
    cdef int32_t[::1] live = live_arr, shs = sh_arr
    tables_arr = np.zeros((169, 169), dtype=np.int32)
    cdef int32_t[:, ::1] tables = tables_arr
    cdef char done[169]
    cdef int32_t *by_ranks
    cdef int32_t fval[1326]
    cdef int32_t fpair[1326]
    cdef uint64_t mask, key, pm, fmask = 0, hm
    cdef uint32_t rk
    cdef int ra, rb, q, j, p, i, n, nf, fs, need, h, v, base, sh, x
    cdef int counts[4]
    cdef int fcounts[4]
    for q in range(169):
        done[q] = 0
    for j in range(4):
        fcounts[j] = 0
    for j in range(3):
        fmask |= _CARD_BIT[flop[j]]
        fcounts[flop[j] & 3] += 1
    with nogil:
        for t in range(52):
            if (used >> t) & 1:
                continue
            for r in range(t + 1, 52):
                if (used >> r) & 1:
                    continue
                mask = fmask | _CARD_BIT[t] | _CARD_BIT[r]
                key = KEY_START + _CARD_KEY[flop[0]] + _CARD_KEY[flop[1]] + _CARD_KEY[flop[2]] + _CARD_KEY[t] + _CARD_KEY[r]
                for j in range(4):
                    counts[j] = fcounts[j]
                counts[t & 3] += 1
                counts[r & 3] += 1
                # the rank classes depend on the turn's and river's ranks only: 91 tables for 1,176 runouts
                by_ranks = &tables[13 * (t >> 2) + (r >> 2), 0]
                if not done[13 * (t >> 2) + (r >> 2)]:
                    done[13 * (t >> 2) + (r >> 2)] = 1
                    rk = <uint32_t>(key & 0xFFFFFFFFu)
                    for ra in range(13):
                        for rb in range(ra, 13):
                            by_ranks[13 * ra + rb] = _rank_class(rk + _RANK_KEY[ra] + _RANK_KEY[rb])
                fs = -1
                need = 3
                for j in range(4):
                    if counts[j] >= 3:
                        fs = j
                        need = 5 - counts[j]
                # the flush pairs' classes (the pairs river_strengths evaluates as cards)
                nf = 0
                if fs >= 0:
                    n = NUM_PAIRS if need == 0 else (78 if need == 2 else 585)
                    for j in range(n):
                        p = j if need == 0 else _SUIT_PAIRS[fs][j]
                        pm = _CARD_BIT[_C1[p]] | _CARD_BIT[_C2[p]]
                        if not (mask & pm):
                            fpair[nf] = p
                            fval[nf] = eval_key(key + _CARD_KEY[_C1[p]] + _CARD_KEY[_C2[p]], mask | pm)
                            nf += 1
                for k in range(nh):
                    h = hands[k]
                    hm = _CARD_BIT[_C1[h]] | _CARD_BIT[_C2[h]]
                    if mask & hm:
                        shs[k] = 0
                        continue
                    sh = by_ranks[_RANKS[h]]
                    if fs >= 0 and (need == 0 or (((_C1[h] & 3) == fs) + ((_C2[h] & 3) == fs)) >= need):
                        sh = eval_key(key + _CARD_KEY[_C1[h]] + _CARD_KEY[_C2[h]], mask | hm)
                    shs[k] = sh
                    live[k] += 1
                    cfrkit_rank_row(by_ranks, sh, &acc[k, 0])
                    for i in range(nf):
                        p = fpair[i]
                        base = by_ranks[_RANKS[p]]
                        v = fval[i]
                        score[k, p] += (2 * (sh > v) + (sh == v)) - (2 * (sh > base) + (sh == base))
                    # pairs holding the turn or river card: not live on this runout (the pair of both once)
                    for x in range(2):
                        c = t if x == 0 else r
                        for i in range(51):
                            p = _CARD_PAIRS[c][i]
                            if x == 1 and (_CARD_BIT[_C1[p]] | _CARD_BIT[_C2[p]]) == (_CARD_BIT[t] | _CARD_BIT[r]):
                                continue
                            base = by_ranks[_RANKS[p]]
                            score[k, p] -= 2 * (sh > base) + (sh == base)
                            count[k, p] -= 1
        for k in range(nh):
            for j in range(NUM_PAIRS):
                if (_CARD_BIT[_C1[j]] | _CARD_BIT[_C2[j]]) & fmask:
                    score[k, j] = 0
                    count[k, j] = 0
                else:
                    score[k, j] += acc[k, _RANKS[j]]
                    count[k, j] += live[k]
    return score_arr, count_arr


def hand_rows(const int32_t[:, ::1] strengths, int hand):
    """Pair ``hand`` against every opponent pair, summed over the boards of ``strengths``.

    Returns two int32[1326] arrays: ``twice_score[j]`` = sum over the boards where neither pair is
    blocked of 2 (``hand`` wins) or 1 (tie), and ``count[j]`` = the number of those boards.  So the
    equity of ``hand`` against weights ``w`` (zero on pairs sharing a card with ``hand``) is
    ``0.5 * (w @ twice_score) / (w @ count)``: exact integer counts, the same equity as
    :func:`hand_vs_range_rows` summed over boards (up to float rounding), and each further range
    costs one O(1326) product instead of O(B * 1326).
    """
    cdef Py_ssize_t nb = strengths.shape[0], b
    if strengths.shape[1] != 1326:
        raise ValueError("strengths must be (B, 1326)")
    if not 0 <= hand < 1326:
        raise ValueError(f"hand must be a pair index 0..1325, got {hand}")
    score_arr = np.zeros(NUM_PAIRS, dtype=np.int32)
    count_arr = np.zeros(NUM_PAIRS, dtype=np.int32)
    cdef int32_t[::1] score = score_arr, count = count_arr
    cdef int sh
    with nogil:
        for b in range(nb):
            sh = strengths[b, hand]
            if sh != 0:
                cfrkit_hand_row(&strengths[b, 0], sh, &score[0], &count[0])
    return score_arr, count_arr


def hand_vs_range_rows(const int[:, ::1] strengths, int hand, const double[::1] weights):
    """Per board: (win, tie, compatible) opponent weight of pair ``hand`` against ``weights``.

    Boards where ``hand`` is blocked (strength 0) give zeros.  Opponent pairs touching a board are
    skipped there (strength 0); the caller zeroes the weights of pairs sharing a card with ``hand``.
    Returns three float64[B] arrays.  O(B * 1326).
    """
    cdef Py_ssize_t nb = strengths.shape[0], b, j
    if strengths.shape[1] != 1326 or weights.shape[0] != 1326:
        raise ValueError("strengths must be (B, 1326) and weights (1326,)")
    if not 0 <= hand < 1326:
        raise ValueError(f"hand must be a pair index 0..1325, got {hand}")
    win = np.zeros(nb)
    tie = np.zeros(nb)
    compat = np.zeros(nb)
    cdef double[::1] w_ = win, t_ = tie, c_ = compat
    cdef int sh, sj
    cdef double x, cw, tw, ww
    with nogil:
        for b in range(nb):
            sh = strengths[b, hand]
            if sh == 0:
                continue
            cw = 0.0
            tw = 0.0
            ww = 0.0
            for j in range(1326):
                x = weights[j]
                if x == 0.0:
                    continue
                sj = strengths[b, j]
                if sj == 0:
                    continue
                cw += x
                if sh > sj:
                    ww += x
                elif sh == sj:
                    tw += x
            w_[b] = ww
            t_[b] = tw
            c_[b] = cw
    return win, tie, compat


def uniform_river_ehs(const int32_t[:, ::1] strengths):
    """E[HS] of every pair against a uniform opponent, averaged over the complete boards of
    ``strengths`` (int32[B, 1326] from :func:`river_strengths`): float64[1326], NaN where a pair is
    blocked on every board.

    On each board a live pair's hand strength is (wins + ties / 2) / 990 over the 990 opponent pairs
    disjoint from it and the board, counted exactly (one radix sort of the 1081 live pairs, then a
    sweep with per-card counts for card removal); the strengths are summed over the boards in order
    and divided by the number of boards where the pair is live -- the same floating-point operations,
    in the same order, as the numpy code of ``EHSAbstraction.ehs`` (tested bit for bit).
    """
    cdef Py_ssize_t nb = strengths.shape[0], b
    if strengths.shape[1] != NUM_PAIRS:
        raise ValueError("strengths must be (B, 1326)")
    total_arr = np.zeros(NUM_PAIRS)
    count_arr = np.zeros(NUM_PAIRS, dtype=np.int64)
    cdef double[::1] total = total_arr
    cdef int64_t[::1] count = count_arr
    cdef int32_t order[1326]
    cdef int32_t tmp[1326]
    cdef int32_t cnt_lo[129]
    cdef int32_t cnt_hi[65]
    cdef int32_t below[52]      # per card: live pairs holding it with a smaller class (swept so far)
    cdef int32_t same[52]       # per card: pairs holding it in the current class
    cdef const int32_t *s
    cdef int i, n, t, c, h, g0, g1, k, win, tie, live_pairs, compat
    with nogil:
        for b in range(nb):
            s = &strengths[b, 0]
            memset(cnt_lo, 0, sizeof(cnt_lo))
            memset(cnt_hi, 0, sizeof(cnt_hi))
            n = 0
            for i in range(NUM_PAIRS):
                if s[i] > 0:
                    cnt_lo[(s[i] & 127) + 1] += 1
                    cnt_hi[(s[i] >> 7) + 1] += 1
                    n += 1
            for i in range(128):
                cnt_lo[i + 1] += cnt_lo[i]
            for i in range(64):
                cnt_hi[i + 1] += cnt_hi[i]
            for i in range(NUM_PAIRS):
                if s[i] > 0:
                    c = s[i] & 127
                    tmp[cnt_lo[c]] = i
                    cnt_lo[c] += 1
            for t in range(n):
                h = tmp[t]
                c = s[h] >> 7
                order[cnt_hi[c]] = h
                cnt_hi[c] += 1
            # a live pair meets C(live cards - 2, 2) opponents: 990 on a 5-card board (47 cards left)
            live_pairs = n
            compat = 0
            if n > 0:
                for i in range(52):
                    below[i] = 0
                    same[i] = 0
                # the number of live cards k solves k (k - 1) / 2 = n
                k = 2
                while k * (k - 1) // 2 < n:
                    k += 1
                compat = (k - 2) * (k - 3) // 2
            g0 = 0
            while g0 < n:
                g1 = g0
                while g1 < n and s[order[g1]] == s[order[g0]]:
                    h = order[g1]
                    same[_C1[h]] += 1
                    same[_C2[h]] += 1
                    g1 += 1
                for t in range(g0, g1):
                    h = order[t]
                    win = g0 - below[_C1[h]] - below[_C2[h]]
                    tie = (g1 - g0) - same[_C1[h]] - same[_C2[h]] + 1
                    total[h] += (<double>win + 0.5 * <double>tie) / <double>compat
                    count[h] += 1
                for t in range(g0, g1):
                    h = order[t]
                    below[_C1[h]] += 1
                    below[_C2[h]] += 1
                    same[_C1[h]] = 0
                    same[_C2[h]] = 0
                g0 = g1
    out = np.full(NUM_PAIRS, np.nan)
    seen = count_arr > 0
    out[seen] = total_arr[seen] / count_arr[seen]
    return out


# The rank classes of a board's rank multiset plus two more ranks, for boards of 3, 4 and 5 cards (hands of 5..7
# cards): ``_MULTI_CLASS[n][91 * row + j]`` = ``_rank_class`` of the board's rank word plus ranks (ra, rb), j the
# index of ra <= rb in (0, 0), (0, 1) .. (12, 12), row the colex index of the board's sorted ranks
# (:func:`_multiset_row`).  The same values ``_pair_counts`` computed per board from the hash (91 lookups of a
# 256 KiB table per board), read as one row; built on first use (2.5 MB in all).
cdef uint16_t *_MULTI_CLASS[6]
cdef int _MULTI_READY = 0
cdef int _BINOM[18][6]


cdef inline int _multiset_row(const int *live, int n) noexcept nogil:
    """The colex index of the multiset of ranks with ``4 - live[r]`` cards of rank ``r`` (``n`` in all): the sorted
    ranks r_0 <= .. <= r_{n-1} as the strictly increasing s_i = r_i + i, sum_i C(s_i, i + 1)."""
    cdef int r, k, i = 0, idx = 0
    for r in range(13):
        for k in range(4 - live[r]):
            idx += _BINOM[r + i][i + 1]
            i += 1
    return idx


def _ensure_multi_classes():
    """Build ``_MULTI_CLASS`` once (about 8,500 rows of 91 classes, a few ms).  The rows are filled in private
    buffers and published together with the ready flag in C (no Python call between: atomic under the GIL), so a
    thread never reads a half-built table; a thread that built a second copy meanwhile frees it."""
    global _MULTI_READY
    if _MULTI_READY:
        return
    cdef int a, b, n, j, ra, rb, r
    cdef int live[13]
    cdef uint32_t rk
    cdef uint16_t *dst
    cdef uint16_t *built[6]
    cdef int binom[18][6]
    for a in range(18):
        for b in range(6):
            binom[a][b] = 0
        binom[a][0] = 1
        for b in range(1, 6):
            if a > 0:
                binom[a][b] = binom[a - 1][b - 1] + binom[a - 1][b]
    for a in range(18):
        for b in range(6):
            _BINOM[a][b] = binom[a][b]  # the same numbers whichever thread writes them
    import itertools
    for n in range(6):
        built[n] = NULL
    try:
        for n in (3, 4, 5):
            built[n] = <uint16_t *> malloc(binom[12 + n][n] * 91 * sizeof(uint16_t))
            if built[n] == NULL:
                raise MemoryError("range_equity: the rank class tables")
            for ranks in itertools.combinations_with_replacement(range(13), n):
                for r in range(13):
                    live[r] = 4
                rk = 0
                for r in ranks:
                    live[r] -= 1
                    rk += _RANK_KEY[r]
                dst = built[n] + 91 * _multiset_row(live, n)
                j = 0
                for ra in range(13):
                    for rb in range(ra, 13):
                        # a rank held 5+ times (never dealt) gets what the hash gives: multiplied by 0 live pairs
                        dst[j] = <uint16_t>_rank_class(rk + _RANK_KEY[ra] + _RANK_KEY[rb])
                        j += 1
        if not _MULTI_READY:
            for n in (3, 4, 5):
                _MULTI_CLASS[n] = built[n]
                built[n] = NULL
            _MULTI_READY = 1
    finally:
        for n in range(6):
            free(built[n])


cdef void _pair_counts(const uint8_t *board, const int64_t *pairs, Py_ssize_t nk, int *win, int *tie,
                       int32_t *row, int ncards=5) noexcept nogil:
    """Per pair ``pairs[q]`` live on the ``ncards``-card ``board`` (3, 4 or 5 cards: hands of 5, 6 or 7 cards):
    ``win[q]`` / ``tie[q]`` = the live pairs sharing no card with it whose class is below / equal to its own (-1 /
    -1 where it touches the board): the counts of a sweep of ``_board_row``'s row (on 5 cards; ``board_strengths``'
    row on fewer), from the rank classes and the live cards of each rank (each non-flush pair is worth its rank
    pair's class) with the flush pairs evaluated as cards.  A board holds at most one suit of 3+ cards, so only
    pairs with ``5 - count`` cards of it can make a flush; all pairs only on a one-suit 5-card board.  ``row``:
    scratch int32[1326] for a board of one suit (every pair evaluated as cards)."""
    cdef uint64_t mask = 0, key = KEY_START, pm, qm
    cdef uint32_t rk
    cdef int i, j, c, ra, rb, fs = -1, need = 3, n, p, q, sp, sq, w, t, cls
    cdef int counts[4]
    cdef int live[13]
    cdef int32_t base[91]
    cdef int32_t cnt[91]
    cdef int k
    cdef const uint16_t *cls91
    cdef uint64_t fmask[585]
    cdef int32_t fcls[585]
    cdef int32_t fsq[585]
    cdef int32_t fpair[585]
    cdef int nf = 0, fsq_ready = 0, la
    cdef int flb[13]
    cdef int fl[13]
    counts[0] = 0
    counts[1] = 0
    counts[2] = 0
    counts[3] = 0
    for j in range(13):
        live[j] = 4
    for j in range(ncards):
        c = board[j]
        mask |= _CARD_BIT[c]
        key += _CARD_KEY[c]
        counts[c & 3] += 1
        live[c >> 2] -= 1
    for j in range(4):
        if counts[j] >= 3:
            fs = j
            need = 5 - counts[j]
    if fs >= 0 and need == 0:  # a one-suit board: every pair evaluated, then swept
        _board_row(board, row)
        for q in range(nk):
            p = <int>pairs[q]
            sp = row[p]
            if sp <= 0:
                win[q] = -1
                tie[q] = -1
                continue
            pm = _CARD_BIT[_C1[p]] | _CARD_BIT[_C2[p]]
            w = 0
            t = 0
            for i in range(NUM_PAIRS):
                if row[i] > 0 and not ((_CARD_BIT[_C1[i]] | _CARD_BIT[_C2[i]]) & pm):
                    w += row[i] < sp
                    t += row[i] == sp
            win[q] = w
            tie[q] = t  # the pair itself shares its cards: not counted
        return
    # the 91 rank pairs' classes on this board's ranks: one row of the table (what _rank_class gives per pair), and
    # the live opponent pairs of each rank pair off the board (a pair's own cards are taken out below)
    cls91 = _MULTI_CLASS[ncards] + 91 * _multiset_row(live, ncards)
    j = 0
    for ra in range(13):
        for rb in range(ra, 13):
            base[j] = live[ra] * (live[ra] - 1) // 2 if ra == rb else live[ra] * live[rb]
            j += 1
    n = 0 if fs < 0 else (78 if need == 2 else 585)
    if fs >= 0:  # the flush suit's cards off the board, by rank
        for j in range(13):
            flb[j] = 1
        for j in range(ncards):
            if (board[j] & 3) == fs:
                flb[board[j] >> 2] = 0
    for q in range(nk):
        p = <int>pairs[q]
        pm = _CARD_BIT[_C1[p]] | _CARD_BIT[_C2[p]]
        if mask & pm:
            win[q] = -1
            tie[q] = -1
            continue
        # the pair's own class: as cards if it can make the flush
        sp = cls91[_R91[_RANKS[p]]]
        if fs >= 0 and ((_C1[p] & 3) == fs) + ((_C2[p] & 3) == fs) >= need:
            sp = eval_key(key + _CARD_KEY[_C1[p]] + _CARD_KEY[_C2[p]], mask | pm)
        # live cards of each rank without the pair's: the opponents of the rank pairs holding its ranks change
        live[_C1[p] >> 2] -= 1
        live[_C2[p] >> 2] -= 1
        memcpy(cnt, base, sizeof(cnt))
        for k in range(2):
            ra = (_C1[p] if k == 0 else _C2[p]) >> 2
            for rb in range(13):
                if ra == rb:
                    cnt[_R91[14 * ra]] = live[ra] * (live[ra] - 1) // 2
                elif ra < rb:
                    cnt[_R91[13 * ra + rb]] = live[ra] * live[rb]
                else:
                    cnt[_R91[13 * rb + ra]] = live[ra] * live[rb]
        if fs >= 0 and sp < _BASE_FLUSH:
            # every flush pair (both cards of the suit when the board holds 3 of it, one card when 4) is a flush or a
            # straight flush, above the pair: only the other opponents count -- per rank pair, the live pairs
            # without the pair's cards less its flush pairs (the same integers as taking each flush pair's rank
            # class out one by one, ``cfrkit_flush_out``)
            for j in range(13):
                fl[j] = flb[j]
            if (_C1[p] & 3) == fs:
                fl[_C1[p] >> 2] = 0
            if (_C2[p] & 3) == fs:
                fl[_C2[p] >> 2] = 0
            if need == 2:
                for ra in range(13):
                    if fl[ra]:
                        for rb in range(ra + 1, 13):
                            cnt[_R91[13 * ra + rb]] -= fl[rb]
            else:  # no card of the suit at all
                j = 0
                for ra in range(13):
                    la = live[ra] - fl[ra]
                    for rb in range(ra, 13):
                        cnt[j] = la * (la - 1) // 2 if ra == rb else la * (live[rb] - fl[rb])
                        j += 1
        live[_C1[p] >> 2] += 1
        live[_C2[p] >> 2] += 1
        cfrkit_below_equal(cls91, cnt, sp, &w, &t)
        # the flush pairs among them: their rank pair's class out, their own class in -- every one a flush or a
        # straight flush (5+ cards of the suit); built at the first pair asked at or above the lowest flush
        if sp >= _BASE_FLUSH:
            if not fsq_ready:
                # the flush pairs' rank classes and own classes (those touching the board left out).  Branch-free:
                # every entry is written and kept only where the pair is off the board (the next one overwrites it
                # otherwise); the skips were mispredicted branches.
                nf = 0
                for j in range(n):
                    i = _SUIT_PAIRS[fs][j]
                    qm = _CARD_BIT[_C1[i]] | _CARD_BIT[_C2[i]]
                    fmask[nf] = qm
                    fcls[nf] = cls91[_R91[_RANKS[i]]]
                    fpair[nf] = i
                    nf += (mask & qm) == 0
                for j in range(nf):
                    i = fpair[j]
                    fsq[j] = eval_key(key + _CARD_KEY[_C1[i]] + _CARD_KEY[_C2[i]], mask | fmask[j])
                fsq_ready = 1
            cfrkit_flush_fix(fmask, fcls, fsq, nf, pm, sp, &w, &t)
        win[q] = w
        tie[q] = t


cdef void _ehs_groups(const uint8_t[:, ::1] rivers, Py_ssize_t block, const int64_t[::1] pairs, double[:, ::1] out,
                      double *total, int64_t *count, int *win, int *tie, int32_t *row) noexcept nogil:
    """The body of :func:`river_ehs_of_pairs`: ``out[g, q]`` the E[HS] of pair ``q`` over group ``g`` of ``block``
    rivers (left as it is, NaN from the caller, where the pair touches every board of the group)."""
    cdef Py_ssize_t nk = pairs.shape[0], ng = rivers.shape[0] // block, g, b, q
    # the live pairs of a 5-card board: 47 live cards, C(45, 2) opponents disjoint from a live pair
    cdef double compat = 990.0
    for g in range(ng):
        for q in range(nk):
            total[q] = 0.0
            count[q] = 0
        for b in range(g * block, (g + 1) * block):
            _pair_counts(&rivers[b, 0], &pairs[0], nk, win, tie, row)
            for q in range(nk):
                if win[q] >= 0:
                    total[q] += (<double>win[q] + 0.5 * <double>tie[q]) / compat
                    count[q] += 1
        for q in range(nk):
            if count[q] > 0:
                out[g, q] = total[q] / <double>count[q]


def _check_rivers(const uint8_t[:, ::1] rivers, Py_ssize_t block, const int64_t[::1] pairs):
    """One-line errors for :func:`river_ehs_of_pairs`'s arguments (shapes, block, pair indices)."""
    cdef Py_ssize_t nb = rivers.shape[0], nk = pairs.shape[0], q
    if rivers.shape[1] != 5:
        raise ValueError(f"rivers must have shape (B, 5), got ({nb}, {rivers.shape[1]})")
    if block < 1 or nb % block != 0:
        raise ValueError(f"block must be a positive divisor of the {nb} rows, got {block}")
    for q in range(nk):
        if not 0 <= pairs[q] < NUM_PAIRS:
            raise ValueError(f"pair index {pairs[q]} is not in 0..1325")


def river_ehs_of_pairs(const uint8_t[:, ::1] rivers, Py_ssize_t block, const int64_t[::1] pairs):
    """float64[B // block, K]: the E[HS] of the K pairs ``pairs`` over each group of ``block`` river boards
    (``rivers`` uint8[B, 5], distinct valid cards, ``B`` a multiple of ``block``), equal bit for bit to
    ``pair_ehs.uniform_river_ehs_pairs_blocks(river_strengths(rivers), block, pairs)`` (NaN where a pair touches
    every board of its group): the same integer win and tie counts per board, from the rank classes instead of all
    1326 pairs' classes, and the same float64 operations in the same order."""
    _check_rivers(rivers, block, pairs)
    cdef Py_ssize_t nk = pairs.shape[0], ng = rivers.shape[0] // block
    _ensure_multi_classes()
    out_arr = np.full((ng, nk), np.nan)
    if nk == 0 or ng == 0:
        return out_arr
    cdef double[:, ::1] out = out_arr
    total_arr = np.zeros(nk)
    count_arr = np.zeros(nk, dtype=np.int64)
    win_arr = np.zeros(nk, dtype=np.intc)
    tie_arr = np.zeros(nk, dtype=np.intc)
    row_arr = np.zeros(NUM_PAIRS, dtype=np.int32)
    cdef double[::1] total = total_arr
    cdef int64_t[::1] count = count_arr
    cdef int[::1] win = win_arr, tie = tie_arr
    cdef int32_t[::1] row = row_arr
    with nogil:
        _ehs_groups(rivers, block, pairs, out, &total[0], &count[0], &win[0], &tie[0], &row[0])
    return out_arr


def river_ehs_buckets(const uint8_t[:, ::1] rivers, Py_ssize_t block, const int64_t[::1] pairs,
                      const double[::1] edges):
    """int32[B // block, K]: the percentile bucket of each E[HS] of :func:`river_ehs_of_pairs` (same arguments):
    ``numpy.searchsorted(edges, ehs, side="right")`` -- the number of ``edges`` (float64[E], non-decreasing) at or
    below the value -- and -1 where the E[HS] is NaN (the pair touches every board of its group), equal bit for
    bit to those numpy steps on :func:`river_ehs_of_pairs`'s values (the same doubles compared), in one call
    without the float64 array in between (``EHSAbstraction.pair_buckets_boards``: a chance node's boards)."""
    _check_rivers(rivers, block, pairs)
    cdef Py_ssize_t nk = pairs.shape[0], ng = rivers.shape[0] // block, ne = edges.shape[0], g, q, lo, hi, mid
    cdef double v
    for q in range(1, ne):
        if not edges[q - 1] <= edges[q]:
            raise ValueError("edges must be non-decreasing (and not NaN)")
    res_arr = np.empty((ng, nk), dtype=np.int32)
    if nk == 0 or ng == 0:
        return res_arr
    vals_arr = river_ehs_of_pairs(rivers, block, pairs)
    cdef double[:, ::1] vals = vals_arr
    cdef int32_t[:, ::1] res = res_arr
    with nogil:
        for g in range(ng):
            for q in range(nk):
                v = vals[g, q]
                if v != v:  # NaN: the pair touches every board of the group
                    res[g, q] = -1
                    continue
                lo = 0  # the first edge above v (upper bound): searchsorted's side="right"
                hi = ne
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if edges[mid] <= v:
                        lo = mid + 1
                    else:
                        hi = mid
                res[g, q] = <int32_t>lo
    return res_arr


cdef inline bint _wet(const uint8_t *board, int n) noexcept nogil:
    """A^R's wet board (``rule_based.BoardFeatures.wet``): three cards of a suit, or three of its ranks within one
    window of five consecutive ranks ``lo .. lo + 4``, ``lo`` = -1 .. 8 (the ace counts high only)."""
    cdef int suits[4]
    cdef int j, lo, r, inside
    cdef uint32_t ranks = 0
    suits[0] = 0
    suits[1] = 0
    suits[2] = 0
    suits[3] = 0
    for j in range(n):
        suits[board[j] & 3] += 1
        ranks |= 1u << (board[j] >> 2)
    for j in range(4):
        if suits[j] >= 3:
            return True
    for lo in range(-1, 9):
        inside = 0
        for r in range(lo if lo > 0 else 0, lo + 5 if lo + 5 < 13 else 13):
            inside += (ranks >> r) & 1
        if inside >= 3:
            return True
    return False


def pair_features_boards(const uint8_t[:, ::1] boards, Py_ssize_t pair, Py_ssize_t sample=16):
    """A^R's postflop features of one hole pair on each of B boards (``rule_based.BoardFeatures`` with one row):
    ``boards`` uint8[B, n], n = 3, 4 or 5 distinct valid cards per row.  Returns ``(hs, blocked, total, count,
    hits)``: float64[B] the share won (+ half the ties) against a uniform opponent pair on the board (0 where
    ``pair`` touches it), bool[B] whether it touches it, and over the next cards ``rest[::step]`` (``rest`` the
    52 - n cards off the board in increasing order, ``step = max(1, (52 - n) // sample)``; none on the river):
    float64[B] the sum of that share on the next boards where the pair is live (in the cards' order), int64[B]
    their number, int64[B] how many reach >= 0.85; and ``wet`` bool[B], the board's texture flag (:func:`_wet`).
    The cards of a row may come in any order.

    Equal bit for bit to ``pair_masses.pair_row_features`` on ``board_strengths`` rows (the Python path): the same
    integer counts -- here from the rank classes of the board's cards plus two ranks and the flush pairs evaluated
    as cards (:func:`_pair_counts`), not from the 1326 pairs' classes of every next board -- and the same float64
    operations in the same order."""
    cdef Py_ssize_t nb = boards.shape[0], n = boards.shape[1], b, j, ns
    if n < 3 or n > 5:
        raise ValueError(f"boards must have 3, 4 or 5 cards, got {n}")
    if not 0 <= pair < NUM_PAIRS:
        raise ValueError(f"pair index {pair} is not in 0..1325")
    if sample < 1:
        raise ValueError(f"sample must be >= 1, got {sample}")
    cdef uint64_t seen
    for b in range(nb):
        seen = 0
        for j in range(n):
            if boards[b, j] > 51 or seen & (<uint64_t>1 << boards[b, j]):
                raise ValueError(f"board {b} must hold distinct card ids 0..51")
            seen |= <uint64_t>1 << boards[b, j]
    _ensure_multi_classes()
    hs_arr = np.zeros(nb)
    blocked_arr = np.zeros(nb, dtype=bool)
    total_arr = np.zeros(nb)
    count_arr = np.zeros(nb, dtype=np.int64)
    hits_arr = np.zeros(nb, dtype=np.int64)
    wet_arr = np.zeros(nb, dtype=bool)
    cdef uint8_t[::1] wet = wet_arr.view(np.uint8)
    cdef double[::1] hs = hs_arr, total = total_arr
    cdef uint8_t[::1] blocked = blocked_arr.view(np.uint8)
    cdef int64_t[::1] count = count_arr, hits = hits_arr
    cdef int64_t pr[1]
    pr[0] = pair
    cdef int w, t, k, step, nrest
    cdef int32_t row[1326]
    cdef uint8_t cards[6]
    cdef uint8_t rest[52]
    cdef uint64_t used
    cdef long c0, c1, dwin, dlose
    cdef double dw, dl, dc, x, tot
    with nogil:
        for b in range(nb):
            used = 0
            for j in range(n):
                cards[j] = boards[b, j]
                used |= <uint64_t>1 << boards[b, j]
            wet[b] = _wet(cards, <int>n)
            _pair_counts(cards, pr, 1, &w, &t, row, <int>n)
            if w < 0:
                blocked[b] = 1  # touches the board: so does every next board (no share counted)
                continue
            # the live opponents: pairs of the 52 - n - 2 cards off the board and the pair (pair_row_features' c)
            c0 = (50 - n) * (49 - n) // 2
            dwin = w
            dlose = c0 - w - t
            dw = <double>dwin
            dl = <double>dlose
            dc = <double>c0
            hs[b] = (dw + 0.5 * ((dc - dw) - dl)) / (dc if dc > 1e-12 else 1e-12)
            if n == 5:
                continue
            nrest = 0
            for k in range(52):
                if not (used & (<uint64_t>1 << k)):
                    rest[nrest] = <uint8_t>k
                    nrest += 1
            step = nrest // <int>sample
            if step < 1:
                step = 1
            c1 = (49 - n) * (48 - n) // 2
            tot = 0.0
            k = 0
            while k < nrest:
                cards[n] = rest[k]
                k += step
                _pair_counts(cards, pr, 1, &w, &t, row, <int>n + 1)
                if w < 0:
                    continue  # the next card is one of the pair's
                dwin = w
                dlose = c1 - w - t
                dw = <double>dwin
                dl = <double>dlose
                dc = <double>c1
                x = (dw + 0.5 * ((dc - dw) - dl)) / (dc if dc > 1e-12 else 1e-12)
                tot += x
                count[b] += 1
                if x >= 0.85:
                    hits[b] += 1
            total[b] = tot
    return hs_arr, blocked_arr, total_arr, count_arr, hits_arr, wet_arr
