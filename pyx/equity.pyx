# cython: language_level=3
"""Range-vectorised card kernels (Cython). Python API: cfrkit.cards.equity.

Hole-card pairs are indexed 0..1325 in colex order: pair {a < b} has index b * (b - 1) / 2 + a.
A "strength" array is int32[1326]: the hand class 1..7462 of hole pair + board, 0 when the pair
shares a card with the board ("blocked").
"""
import numpy as np
cimport numpy as cnp
from libc.string cimport memset

include "handeval_tables.pxi"

cnp.import_array()

# the small tables now; the hash table of eval_key on first use (_ensure_hash_table): a river solve evaluates one
# board's 1,081 hands with eval_mask and never builds it (about 1 MiB of peak memory and 10 ms at import)
_init_eval_tables(False)

# board_strengths evaluates up to this many boards with eval_mask (the same classes: the reference evaluator the
# hash table is built from) while the hash table is not built; more boards build it
MASK_EVAL_MAX_BOARDS = 4

cdef enum:
    NUM_PAIRS = 1326

cdef uint8_t _PAIR_C1[1326]   # lower card of each pair
cdef uint8_t _PAIR_C2[1326]   # higher card


def _init_pairs():
    cdef int a, b, i
    for b in range(1, 52):
        for a in range(b):
            i = b * (b - 1) // 2 + a
            _PAIR_C1[i] = a
            _PAIR_C2[i] = b


_init_pairs()


cdef void _strengths_for_board(uint64_t board_mask, uint64_t board_key, int32_t *strength) noexcept nogil:
    # board mask / additive key in evaluator layout; strength 0 for pairs touching the board
    cdef int i
    cdef uint64_t b1, b2
    for i in range(NUM_PAIRS):
        b1 = _CARD_BIT[_PAIR_C1[i]]
        b2 = _CARD_BIT[_PAIR_C2[i]]
        if (board_mask & b1) or (board_mask & b2):
            strength[i] = 0
        else:
            strength[i] = eval_key(board_key + _CARD_KEY[_PAIR_C1[i]] + _CARD_KEY[_PAIR_C2[i]],
                                   board_mask | b1 | b2)


cdef void _strengths_for_board_mask(uint64_t board_mask, int32_t *strength) noexcept nogil:
    # as _strengths_for_board with the reference evaluator (no hash table)
    cdef int i
    cdef uint64_t b1, b2
    for i in range(NUM_PAIRS):
        b1 = _CARD_BIT[_PAIR_C1[i]]
        b2 = _CARD_BIT[_PAIR_C2[i]]
        if (board_mask & b1) or (board_mask & b2):
            strength[i] = 0
        else:
            strength[i] = eval_mask(board_mask | b1 | b2)


cdef int _sorted_order(const int32_t *strength, int32_t *order) noexcept nogil:
    # unblocked pairs in ascending strength (stable two-pass LSD radix sort on the 13-bit class);
    # returns their number
    cdef int i, n = 0, h, c, t
    cdef int32_t tmp[1326]
    cdef int32_t cnt_lo[129]
    cdef int32_t cnt_hi[65]
    memset(cnt_lo, 0, sizeof(cnt_lo))
    memset(cnt_hi, 0, sizeof(cnt_hi))
    for i in range(NUM_PAIRS):
        if strength[i] > 0:
            cnt_lo[(strength[i] & 127) + 1] += 1
            cnt_hi[(strength[i] >> 7) + 1] += 1
            n += 1
    for i in range(128):
        cnt_lo[i + 1] += cnt_lo[i]
    for i in range(64):
        cnt_hi[i + 1] += cnt_hi[i]
    for i in range(NUM_PAIRS):
        if strength[i] > 0:
            c = strength[i] & 127
            tmp[cnt_lo[c]] = i
            cnt_lo[c] += 1
    for t in range(n):
        h = tmp[t]
        c = strength[h] >> 7
        order[cnt_hi[c]] = h
        cnt_hi[c] += 1
    return n


cdef void _sweep(const int32_t *strength, const int32_t *order, int n, const double *opp,
                 double *win, double *lose, double *compat) noexcept nogil:
    """For each unblocked pair h: opponent mass (over pairs disjoint from h and the board) that h
    beats (win), loses to (lose) and in total (compat). Blocked pairs are left untouched."""
    cdef double below_card[52]
    cdef double below_total = 0.0, w, total
    cdef int i, j, t, h, s
    memset(below_card, 0, sizeof(below_card))
    # ascending: strictly weaker mass
    i = 0
    while i < n:
        s = strength[order[i]]
        j = i
        while j < n and strength[order[j]] == s:
            j += 1
        for t in range(i, j):
            h = order[t]
            win[h] = below_total - below_card[_PAIR_C1[h]] - below_card[_PAIR_C2[h]]
        for t in range(i, j):
            h = order[t]
            w = opp[h]
            below_total += w
            below_card[_PAIR_C1[h]] += w
            below_card[_PAIR_C2[h]] += w
        i = j
    total = below_total
    for t in range(n):
        h = order[t]
        compat[h] = total - below_card[_PAIR_C1[h]] - below_card[_PAIR_C2[h]] + opp[h]
    # descending: strictly stronger mass
    memset(below_card, 0, sizeof(below_card))
    below_total = 0.0
    i = n - 1
    while i >= 0:
        s = strength[order[i]]
        j = i
        while j >= 0 and strength[order[j]] == s:
            j -= 1
        for t in range(j + 1, i + 1):
            h = order[t]
            lose[h] = below_total - below_card[_PAIR_C1[h]] - below_card[_PAIR_C2[h]]
        for t in range(j + 1, i + 1):
            h = order[t]
            w = opp[h]
            below_total += w
            below_card[_PAIR_C1[h]] += w
            below_card[_PAIR_C2[h]] += w
        i = j


def board_strengths(const uint8_t[:, ::1] boards):
    """Strength (class 1..7462, 0 = blocked) of all 1326 pairs on each board: uint8[B, k] -> int32[B, 1326].

    k = 3..5 board cards (hands of 5..7 cards). Boards must hold distinct valid cards (checked by caller).
    Up to ``MASK_EVAL_MAX_BOARDS`` boards while the hash table is not built: the reference evaluator (same classes).
    """
    cdef Py_ssize_t nb = boards.shape[0], k = boards.shape[1], b, j
    cdef cnp.ndarray[int32_t, ndim=2] out_arr = np.empty((nb, NUM_PAIRS), dtype=np.int32)
    cdef int32_t[:, ::1] out = out_arr
    cdef uint64_t m, key
    cdef bint by_mask = not _HASH_READY and nb <= MASK_EVAL_MAX_BOARDS
    if not by_mask:
        _ensure_hash_table()
    with nogil:
        for b in range(nb):
            m = 0
            key = KEY_START
            for j in range(k):
                m |= _CARD_BIT[boards[b, j]]
                key += _CARD_KEY[boards[b, j]]
            if by_mask:
                _strengths_for_board_mask(m, &out[b, 0])
            else:
                _strengths_for_board(m, key, &out[b, 0])
    return out_arr


def showdown_masses(const int32_t[:, ::1] strengths, const double[:, ::1] opp_ranges):
    """Win, lose and compatible opponent mass of every pair, with card removal, in O(n) per range
    after one sort per strength row.

    strengths: int32[S, 1326] with S = 1 (shared by all ranges) or S = R. opp_ranges: float64[R, 1326]
    (weights of blocked pairs are ignored). Returns three float64[R, 1326] arrays (0 for blocked pairs).
    """
    cdef Py_ssize_t ns = strengths.shape[0], nr = opp_ranges.shape[0], r
    cdef cnp.ndarray[double, ndim=2] win_arr = np.zeros((nr, NUM_PAIRS))
    cdef cnp.ndarray[double, ndim=2] lose_arr = np.zeros((nr, NUM_PAIRS))
    cdef cnp.ndarray[double, ndim=2] compat_arr = np.zeros((nr, NUM_PAIRS))
    cdef double[:, ::1] win = win_arr
    cdef double[:, ::1] lose = lose_arr
    cdef double[:, ::1] compat = compat_arr
    cdef int32_t order[1326]
    cdef int n = 0
    with nogil:
        if ns == 1:
            n = _sorted_order(&strengths[0, 0], order)
        for r in range(nr):
            if ns > 1:
                n = _sorted_order(&strengths[r, 0], order)
            _sweep(&strengths[0 if ns == 1 else r, 0], order, n, &opp_ranges[r, 0],
                   &win[r, 0], &lose[r, 0], &compat[r, 0])
    return win_arr, lose_arr, compat_arr


def fold_masses(const uint8_t[::1] board, const double[:, ::1] opp_ranges):
    """Opponent mass compatible with each pair (no shared card with the pair or the board):
    float64[R, 1326] -> float64[R, 1326], O(n) per range; 0 for pairs touching the board."""
    cdef Py_ssize_t nr = opp_ranges.shape[0], r
    cdef int i
    cdef uint64_t bm = 0
    cdef cnp.ndarray[double, ndim=2] out_arr = np.zeros((nr, NUM_PAIRS))
    cdef double[:, ::1] out = out_arr
    cdef double card_mass[52]
    cdef double total, w
    cdef uint8_t blocked[1326]
    for i in range(board.shape[0]):
        bm |= (<uint64_t>1) << board[i]
    for i in range(NUM_PAIRS):
        blocked[i] = ((bm >> _PAIR_C1[i]) & 1) | ((bm >> _PAIR_C2[i]) & 1)
    with nogil:
        for r in range(nr):
            memset(card_mass, 0, sizeof(card_mass))
            total = 0.0
            for i in range(NUM_PAIRS):
                if not blocked[i]:
                    w = opp_ranges[r, i]
                    total += w
                    card_mass[_PAIR_C1[i]] += w
                    card_mass[_PAIR_C2[i]] += w
            for i in range(NUM_PAIRS):
                if not blocked[i]:
                    out[r, i] = total - card_mass[_PAIR_C1[i]] - card_mass[_PAIR_C2[i]] + opp_ranges[r, i]
    return out_arr


def accumulate_runouts(const uint8_t[:, ::1] boards, const double[::1] opp, int num_bins):
    """Accumulate river statistics of every pair over a list of complete 5-card boards.

    For each board and each pair h disjoint from it, the river hand strength
    HS = (win + tie / 2) / compat against the opponent weights `opp` (card removal applied;
    HS = 0.5 if no opponent hand is compatible). Returns, each indexed by pair:
      hs_sum, hs2_sum (float64[1326]), count (int64[1326], boards used), hist (float64[1326, num_bins],
      counts of HS in equal-width bins on [0, 1], empty if num_bins = 0), win_mass, tie_mass,
      compat_mass (float64[1326], sums over boards, for ratio-of-sums equity).
    """
    cdef Py_ssize_t nb = boards.shape[0], b
    cdef int i, h, bin_
    cdef cnp.ndarray[double, ndim=1] hs_sum_a = np.zeros(NUM_PAIRS)
    cdef cnp.ndarray[double, ndim=1] hs2_sum_a = np.zeros(NUM_PAIRS)
    cdef cnp.ndarray[int64_t, ndim=1] count_a = np.zeros(NUM_PAIRS, dtype=np.int64)
    cdef cnp.ndarray[double, ndim=2] hist_a = np.zeros((NUM_PAIRS, max(num_bins, 0)))
    cdef cnp.ndarray[double, ndim=1] winm_a = np.zeros(NUM_PAIRS)
    cdef cnp.ndarray[double, ndim=1] tiem_a = np.zeros(NUM_PAIRS)
    cdef cnp.ndarray[double, ndim=1] compm_a = np.zeros(NUM_PAIRS)
    cdef double[::1] hs_sum = hs_sum_a, hs2_sum = hs2_sum_a, winm = winm_a, tiem = tiem_a, compm = compm_a
    cdef int64_t[::1] count = count_a
    cdef double[:, ::1] hist = hist_a
    cdef int32_t strength[1326]
    cdef int32_t order[1326]
    cdef double win[1326]
    cdef double lose[1326]
    cdef double compat[1326]
    cdef double hs, tie
    cdef uint64_t m, key
    cdef int n, j
    if opp.shape[0] != NUM_PAIRS or boards.shape[1] != 5:
        raise ValueError("accumulate_runouts needs boards of shape (n, 5) and 1326 opponent weights")
    _ensure_hash_table()
    with nogil:
        for b in range(nb):
            m = 0
            key = KEY_START
            for j in range(5):
                m |= _CARD_BIT[boards[b, j]]
                key += _CARD_KEY[boards[b, j]]
            _strengths_for_board(m, key, strength)
            n = _sorted_order(strength, order)
            _sweep(strength, order, n, &opp[0], win, lose, compat)
            for i in range(n):
                h = order[i]
                tie = compat[h] - win[h] - lose[h]
                if tie < 0.0:
                    tie = 0.0
                if compat[h] > 0.0:
                    hs = (win[h] + 0.5 * tie) / compat[h]
                else:
                    hs = 0.5
                hs_sum[h] += hs
                hs2_sum[h] += hs * hs
                count[h] += 1
                winm[h] += win[h]
                tiem[h] += tie
                compm[h] += compat[h]
                if num_bins > 0:
                    bin_ = <int>(hs * num_bins)
                    if bin_ >= num_bins:
                        bin_ = num_bins - 1
                    if bin_ < 0:
                        bin_ = 0
                    hist[h, bin_] += 1.0
    return hs_sum_a, hs2_sum_a, count_a, hist_a, winm_a, tiem_a, compm_a


cdef void _hvh_counts(int a1, int a2, int b1, int b2, const uint8_t *board, int k, int64_t *out) noexcept nogil:
    """(wins, ties, losses) of (a1, a2) against (b1, b2) over every completion of the ``k``-card board (k <= 5)
    into ``out[0..2]`` (cards distinct and valid: checked by the callers)."""
    cdef uint64_t used = 0, bm = 0, ha, hb, kb = KEY_START, ka_, kb_, k0, k1, k2, k3, k4
    cdef int i, n = 0, c0, c1, c2, c3, c4
    cdef int need = 5 - k
    cdef int deck[52]
    cdef int64_t wins = 0, ties = 0, losses = 0
    cdef int va, vb
    cdef uint64_t m0, m1, m2, m3, m4
    for i in range(k):
        bm |= card_bit(board[i])
        kb += _CARD_KEY[board[i]]
    ha = card_bit(a1) | card_bit(a2)
    hb = card_bit(b1) | card_bit(b2)
    ka_ = _CARD_KEY[a1] + _CARD_KEY[a2]
    kb_ = _CARD_KEY[b1] + _CARD_KEY[b2]
    used = bm | ha | hb
    for i in range(52):
        if not (used & card_bit(i)):
            deck[n] = i
            n += 1
    # enumerate need-subsets of deck with nested loops (need <= 5); unused loops run once
    for c0 in range(n if need >= 1 else 1):
        m0 = card_bit(deck[c0]) if need >= 1 else 0
        k0 = kb + (_CARD_KEY[deck[c0]] if need >= 1 else 0)
        for c1 in range((c0 + 1) if need >= 2 else 0, n if need >= 2 else 1):
            m1 = m0 | (card_bit(deck[c1]) if need >= 2 else 0)
            k1 = k0 + (_CARD_KEY[deck[c1]] if need >= 2 else 0)
            for c2 in range((c1 + 1) if need >= 3 else 0, n if need >= 3 else 1):
                m2 = m1 | (card_bit(deck[c2]) if need >= 3 else 0)
                k2 = k1 + (_CARD_KEY[deck[c2]] if need >= 3 else 0)
                for c3 in range((c2 + 1) if need >= 4 else 0, n if need >= 4 else 1):
                    m3 = m2 | (card_bit(deck[c3]) if need >= 4 else 0)
                    k3 = k2 + (_CARD_KEY[deck[c3]] if need >= 4 else 0)
                    for c4 in range((c3 + 1) if need >= 5 else 0, n if need >= 5 else 1):
                        m4 = bm | m3 | (card_bit(deck[c4]) if need >= 5 else 0)
                        k4 = k3 + (_CARD_KEY[deck[c4]] if need >= 5 else 0)
                        va = eval_key(k4 + ka_, m4 | ha)
                        vb = eval_key(k4 + kb_, m4 | hb)
                        if va > vb:
                            wins += 1
                        elif va < vb:
                            losses += 1
                        else:
                            ties += 1
    out[0] = wins
    out[1] = ties
    out[2] = losses


cdef struct _RankSetup:
    # what the rank-class counters (_hvh_counts3, _hvh_counts4) share about a board and two hole pairs
    int live[13]       # cards of each rank still in the deck (off the board and the four hole cards)
    int ca[4]          # cards of each suit in hand a + board
    int cb[4]          # likewise for hand b
    uint64_t bm        # board card mask
    uint64_t kb        # KEY_START + board's additive key
    uint64_t ha        # hand a's card mask
    uint64_t hb        # hand b's card mask
    uint64_t ka        # hand a's additive key (no KEY_START)
    uint64_t kb_       # hand b's additive key
    uint32_t rka       # low word (ranks) of hand a + board's key
    uint32_t rkb       # likewise for hand b


cdef inline bint _rank_setup(int a1, int a2, int b1, int b2, const uint8_t *board, int k,
                             _RankSetup *st) noexcept nogil:
    """Fill ``st`` for the ``k``-card board (k = 3 or 4) and hole pairs (a1, a2), (b1, b2); True when a hand holds
    ``k`` + 1 or more cards of one suit with the board (every run-out of that suit is a flush for it: the callers
    fall back to :func:`_hvh_counts`)."""
    cdef int i, c, s
    for i in range(4):
        st.ca[i] = 0
        st.cb[i] = 0
    for i in range(13):
        st.live[i] = 4
    st.bm = 0
    st.kb = KEY_START
    st.rka = 0
    st.rkb = 0
    for i in range(k):
        c = board[i]
        st.bm |= card_bit(c)
        st.kb += _CARD_KEY[c]
        st.ca[c & 3] += 1
        st.cb[c & 3] += 1
        st.live[c >> 2] -= 1
        st.rka += <uint32_t>_CARD_KEY[c]
        st.rkb += <uint32_t>_CARD_KEY[c]
    for i in range(2):
        c = a1 if i == 0 else a2
        st.ca[c & 3] += 1
        st.live[c >> 2] -= 1
        st.rka += <uint32_t>_CARD_KEY[c]
        c = b1 if i == 0 else b2
        st.cb[c & 3] += 1
        st.live[c >> 2] -= 1
        st.rkb += <uint32_t>_CARD_KEY[c]
    st.ha = card_bit(a1) | card_bit(a2)
    st.hb = card_bit(b1) | card_bit(b2)
    st.ka = _CARD_KEY[a1] + _CARD_KEY[a2]
    st.kb_ = _CARD_KEY[b1] + _CARD_KEY[b2]
    for s in range(4):
        if st.ca[s] > k or st.cb[s] > k:
            return True
    return False


cdef void _hvh_counts3(int a1, int a2, int b1, int b2, const uint8_t *board, int64_t *out) noexcept nogil:
    """:func:`_hvh_counts` on a flop (``k`` = 3: the 990 turn-river run-outs), the same integer counts from the rank
    classes: a run-out that makes no flush for either hand is worth its rank pair's classes (the hash path of
    ``eval_key``: no suit of 5+ cards), so the 91 rank pairs are evaluated once each and weighted by their live card
    pairs; the run-outs that do make a flush (both cards of a suit of which a hand holds 3 with the flop) are
    evaluated as cards and taken out of their rank pair's weight.  A hand with 4+ cards of a suit with the flop
    (every run-out of that suit counts): :func:`_hvh_counts` itself."""
    cdef _RankSetup st
    cdef int64_t wt[13][13]
    cdef int j, c, s, ra, rb, t, u, nl, va, vb
    cdef int cards[13]
    cdef uint64_t k2, m2, used
    cdef uint32_t rk
    cdef int64_t wins = 0, ties = 0, losses = 0, n
    if _rank_setup(a1, a2, b1, b2, board, 3, &st):
        _hvh_counts(a1, a2, b1, b2, board, 3, out)
        return
    used = st.bm | st.ha | st.hb
    for ra in range(13):
        for rb in range(ra, 13):
            wt[ra][rb] = st.live[ra] * (st.live[ra] - 1) // 2 if ra == rb else st.live[ra] * st.live[rb]
    # the run-outs of two cards of a suit a hand holds 3 of: a flush for it, evaluated as cards
    for s in range(4):
        if st.ca[s] != 3 and st.cb[s] != 3:
            continue
        nl = 0
        for j in range(13):
            c = 4 * j + s
            if not (used & card_bit(c)):
                cards[nl] = c
                nl += 1
        for t in range(nl):
            for u in range(t + 1, nl):
                k2 = st.kb + _CARD_KEY[cards[t]] + _CARD_KEY[cards[u]]
                m2 = st.bm | card_bit(cards[t]) | card_bit(cards[u])
                va = eval_key(k2 + st.ka, m2 | st.ha)
                vb = eval_key(k2 + st.kb_, m2 | st.hb)
                if va > vb:
                    wins += 1
                elif va < vb:
                    losses += 1
                else:
                    ties += 1
                wt[cards[t] >> 2][cards[u] >> 2] -= 1  # cards[t] < cards[u]: the lower rank first
    # every other run-out by its ranks (no suit of 5+ cards for either hand)
    for ra in range(13):
        for rb in range(ra, 13):
            n = wt[ra][rb]
            if n <= 0:
                continue
            rk = _RANK_POW[ra] + _RANK_POW[rb]
            va = eval_key(<uint64_t>(st.rka + rk), 0)
            vb = eval_key(<uint64_t>(st.rkb + rk), 0)
            if va > vb:
                wins += n
            elif va < vb:
                losses += n
            else:
                ties += n
    out[0] = wins
    out[1] = ties
    out[2] = losses


cdef void _hvh_counts4(int a1, int a2, int b1, int b2, const uint8_t *board, int64_t *out) noexcept nogil:
    """:func:`_hvh_counts` on a turn (``k`` = 4: the 44 river cards), the same integer counts from the rank classes as
    :func:`_hvh_counts3` does on a flop: a river card that makes no flush for either hand is worth its rank's classes,
    weighted by the live cards of the rank; a river card of a suit a hand holds 4 of with the board is evaluated as a
    card and taken out of its rank's weight.  A hand with 5+ cards of a suit already: :func:`_hvh_counts` itself."""
    cdef _RankSetup st
    cdef int j, c, s, va, vb
    cdef uint64_t used
    cdef int64_t wins = 0, ties = 0, losses = 0, n
    if _rank_setup(a1, a2, b1, b2, board, 4, &st):
        _hvh_counts(a1, a2, b1, b2, board, 4, out)
        return
    used = st.bm | st.ha | st.hb
    # the river cards of a suit a hand holds 4 of: a flush for it, evaluated as cards
    for s in range(4):
        if st.ca[s] != 4 and st.cb[s] != 4:
            continue
        for j in range(13):
            c = 4 * j + s
            if used & card_bit(c):
                continue
            va = eval_key(st.kb + _CARD_KEY[c] + st.ka, st.bm | card_bit(c) | st.ha)
            vb = eval_key(st.kb + _CARD_KEY[c] + st.kb_, st.bm | card_bit(c) | st.hb)
            if va > vb:
                wins += 1
            elif va < vb:
                losses += 1
            else:
                ties += 1
            st.live[j] -= 1
    # every other river card by its rank (no suit of 5+ cards for either hand)
    for j in range(13):
        n = st.live[j]
        if n <= 0:
            continue
        va = eval_key(<uint64_t>(st.rka + _RANK_POW[j]), 0)
        vb = eval_key(<uint64_t>(st.rkb + _RANK_POW[j]), 0)
        if va > vb:
            wins += n
        elif va < vb:
            losses += n
        else:
            ties += n
    out[0] = wins
    out[1] = ties
    out[2] = losses


cdef uint32_t _RANK_POW[13]   # 5^rank: the low word of a card's additive key
for _r in range(13):
    _RANK_POW[_r] = 5 ** _r


def hand_vs_hand_counts(int a1, int a2, int b1, int b2, const uint8_t[::1] board):
    """Exact (wins, ties, losses) of hole pair (a1, a2) against (b1, b2) over every completion of
    the board (0..5 cards) from the remaining deck. Cards must be distinct and valid (checked by caller)."""
    cdef int k = board.shape[0]
    cdef int64_t out[3]
    if k > 5:
        raise ValueError("board has more than 5 cards")
    _ensure_hash_table()
    with nogil:
        _hvh_counts(a1, a2, b1, b2, &board[0] if k > 0 else NULL, k, out)
    return out[0], out[1], out[2]


def hash_table_built():
    """True once ``eval_key``'s hash table is built in this module (first use of a batch kernel; not by importing)."""
    return bool(_HASH_READY)


def hand_vs_hand_boards(int a1, int a2, int b1, int b2, const uint8_t[:, ::1] boards):
    """int64[B, 3]: :func:`hand_vs_hand_counts` (wins, ties, losses) of (a1, a2) against (b1, b2) on each row of
    ``boards`` (uint8[B, k], k <= 5; AIVAT's sampled boards of one chance node).  The four hole cards and each
    row's cards must be distinct valid ids: checked here (a clear ValueError)."""
    cdef Py_ssize_t nb = boards.shape[0], b, j
    cdef int k = boards.shape[1]
    if k > 5:
        raise ValueError(f"boards have more than 5 cards ({k})")
    cdef uint64_t hole = 0, used
    cdef int c
    for c in (a1, a2, b1, b2):
        if not 0 <= c <= 51 or hole & (<uint64_t>1 << c):
            raise ValueError(f"hole cards must be distinct ids 0..51, got {(a1, a2, b1, b2)}")
        hole |= <uint64_t>1 << c
    for b in range(nb):
        used = hole
        for j in range(k):
            if boards[b, j] > 51 or used & (<uint64_t>1 << boards[b, j]):
                raise ValueError(f"board {b} must hold distinct card ids 0..51 off the hole cards")
            used |= <uint64_t>1 << boards[b, j]
    out_arr = np.zeros((nb, 3), dtype=np.int64)
    cdef int64_t[:, ::1] out = out_arr
    _ensure_hash_table()
    with nogil:
        for b in range(nb):
            if k == 3:  # flops: by the rank pairs of the run-outs (the same counts)
                _hvh_counts3(a1, a2, b1, b2, &boards[b, 0], &out[b, 0])
            elif k == 4:  # turns: by the river cards' ranks
                _hvh_counts4(a1, a2, b1, b2, &boards[b, 0], &out[b, 0])
            else:
                _hvh_counts(a1, a2, b1, b2, &boards[b, 0] if k > 0 else NULL, k, &out[b, 0])
    return out_arr
