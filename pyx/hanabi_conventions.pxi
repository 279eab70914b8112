# Included at the end of hanabi_engine.pyx: the convention bots run on the engine's C state ``St``.
#
# Two hand-coded convention strategies, written from the published descriptions and the reference
# programs' behaviour (not copied):
#
# * ``information`` -- the hat-guessing "information strategy" of Cox et al. as generalised to 2-5
#   players by hanabi.rs (WuTheFWasThat): every hint encodes, modulo the number of distinguishable
#   hints, the sum of the answers to a fixed sequence of questions about each other player's hand;
#   each receiver subtracts the answers it can see and decodes its own.
# * ``smartbot`` -- Arthur O'Dwyer's SmartBot: public card knowledge plus conventions (a hint marks
#   the newest newly-possibly-playable touched card as playable; a value hint on the left partner's
#   next discard is a "valuable" warning; no warning means the next discard is not valuable; a known
#   playable card discarded is a "discard finesse" for the same card on a partner's newest slot).
#
# Both keep, per player and hand slot, a 25-bit set of card identities still possible from public
# information (bit k = card id k).  Everything below runs without the GIL.

cdef extern from *:
    int __builtin_popcount(unsigned int) nogil
    int __builtin_ctz(unsigned int) nogil

DEF CONV_INFORMATION = 0
DEF CONV_SMARTBOT = 1
DEF CONV_SMARTBOT_SAFE = 2     # SmartBot without the late-game gamble (never risks a life)

ctypedef struct ConvMem:
    unsigned int know[MAXP][MAXH]      # public possibility sets of every hand slot

ctypedef struct CBoard:
    int pubw[MAXK]          # copies not yet played or discarded (public)
    unsigned int nz         # cards with pubw > 0
    unsigned int playable   # next card of its firework
    unsigned int dead       # can never be played (already played, firework blocked by discards)
    unsigned int dispensable  # dead, or not the last copy outside the discard pile
    unsigned int valuable   # SmartBot: not dead and the last unseen-in-public copy
    unsigned int colmask[MAXC]
    unsigned int rankmask[MAXR]
    unsigned int full

ctypedef struct HatQ:
    int kind                # 1 combination of yes/no questions, 2 partition of one card's identities
    int info                # number of answers
    int n                   # yes/no questions (kind 1)
    int idx[2 * MAXH]
    int isdead[2 * MAXH]    # 0: "is card idx playable?", 1: "is card idx dead?"
    int pidx                # partitioned card (kind 2)
    signed char block[MAXK]


cdef inline int popc(unsigned int x) noexcept nogil:
    return __builtin_popcount(x)

cdef void cboard_setup(Cfg* g, St* s, CBoard* b) noexcept nogil:
    cdef int c, r, k, reach, public
    cdef int C = g.colors, R = g.ranks
    b.nz = 0
    b.playable = 0
    b.dead = 0
    b.dispensable = 0
    b.valuable = 0
    b.full = (1u << g.num_cards) - 1
    for r in range(R):
        b.rankmask[r] = 0
    for c in range(C):
        b.colmask[c] = ((1u << R) - 1) << (c * R)
        reach = R
        for r in range(s.fireworks[c], R):
            if s.discarded[c * R + r] >= g.counts[c * R + r]:
                reach = r
                break
        for r in range(R):
            k = c * R + r
            b.rankmask[r] |= 1u << k
            public = s.discarded[k] + (1 if r < s.fireworks[c] else 0)
            b.pubw[k] = g.counts[k] - public
            if b.pubw[k] > 0:
                b.nz |= 1u << k
            if r == s.fireworks[c]:
                b.playable |= 1u << k
            if r < s.fireworks[c] or r >= reach:
                b.dead |= 1u << k
                b.dispensable |= 1u << k
            else:
                if g.counts[k] - s.discarded[k] != 1:
                    b.dispensable |= 1u << k
                if public == g.counts[k] - 1:
                    b.valuable |= 1u << k

cdef inline int wsum(unsigned int m, int* w) noexcept nogil:
    cdef int t = 0
    while m:
        t += w[__builtin_ctz(m)]
        m &= m - 1
    return t

cdef inline float wprob(unsigned int m, unsigned int pred, int* w) noexcept nogil:
    """Weighted probability that a card with possible set ``m`` satisfies ``pred`` (0 if m empty)."""
    cdef int tot = wsum(m, w)
    if tot <= 0:
        return 0.0
    return <float>wsum(m & pred, w) / <float>tot

cdef inline int conv_hint_move(Cfg* g, int p, int t, int is_rank, int x) noexcept nogil:
    cdef int off = (t - p + g.players) % g.players
    if is_rank:
        return 2 * g.hand_size + (g.players - 1) * g.colors + (off - 1) * g.ranks + x
    return 2 * g.hand_size + (off - 1) * g.colors + x


# ============================================================================ information strategy
cdef inline bint subset(unsigned int a, unsigned int b) noexcept nogil:
    """a non-empty and contained in b (a 'probability one' event)."""
    return a != 0 and (a & ~b) == 0

cdef int hat_ask(CBoard* b, unsigned int* m, int L, int total, HatQ* q) noexcept nogil:
    """The next question about a hand with possible sets ``m[0:L]`` given ``total`` answers of room.

    Returns 0 (no question) or the question kind.  Mirrors the question order of the reference
    strategy: while no card is known playable, a combination of "is it playable / dead?"; then a
    single "is it playable?" about a card with P(playable) near 0.7; then a partition of the
    identities of the least-likely-dead undetermined card.
    """
    cdef int i, j, t, n = 0, cap, best
    cdef unsigned int em[MAXH]
    cdef bint know_play = False, know_dead = False
    cdef int aug[MAXH]
    cdef int na = 0
    cdef float pp[MAXH]
    cdef float pd[MAXH]
    cdef float key[2 * MAXH]
    cdef float bestf, f
    cdef int ti, td
    cdef float tk
    cdef int nblock, cur, eff
    cdef unsigned int poss
    cdef int k
    if total <= 1:
        return 0
    for i in range(L):
        em[i] = m[i] & b.nz
        pp[i] = wprob(em[i], b.playable, b.pubw)
        pd[i] = wprob(em[i], b.dead, b.pubw)
        if subset(em[i], b.playable):
            know_play = True
        if subset(em[i], b.dead):
            know_dead = True
        if not subset(em[i], b.dead) and popc(em[i]) != 1:
            aug[na] = i
            na += 1
    if not know_play:
        for j in range(na):
            i = aug[j]
            if em[i] & b.playable:
                q.idx[n] = i
                q.isdead[n] = 0
                key[n] = pp[i]
                n += 1
        if not know_dead:
            for j in range(na):
                i = aug[j]
                if em[i] & b.dead:
                    q.idx[n] = i
                    q.isdead[n] = 1
                    key[n] = pd[i]
                    n += 1
        cap = total - 1
        if n > cap:
            # keep the play questions first, then the likeliest (stable insertion sort)
            for j in range(1, n):
                ti = q.idx[j]; td = q.isdead[j]; tk = key[j]
                t = j - 1
                while t >= 0 and (q.isdead[t] > td or (q.isdead[t] == td and -key[t] > -tk)):
                    q.idx[t + 1] = q.idx[t]; q.isdead[t + 1] = q.isdead[t]; key[t + 1] = key[t]
                    t -= 1
                q.idx[t + 1] = ti; q.isdead[t + 1] = td; key[t + 1] = tk
            n = cap
        # ask about the least likely first: a "yes" then also says "no" about the ones before it
        for j in range(1, n):
            ti = q.idx[j]; td = q.isdead[j]; tk = key[j]
            t = j - 1
            while t >= 0 and (q.isdead[t] > td or (q.isdead[t] == td and key[t] > tk)):
                q.idx[t + 1] = q.idx[t]; q.isdead[t + 1] = q.isdead[t]; key[t + 1] = key[t]
                t -= 1
            q.idx[t + 1] = ti; q.isdead[t + 1] = td; key[t + 1] = tk
        if n > 0:
            q.kind = 1
            q.n = n
            q.info = n + 1
            return 1
    best = -1
    bestf = 0.0
    for j in range(na):
        i = aug[j]
        f = pp[i] - <float>0.7
        if f < 0:
            f = -f
        if f < <float>0.2 and (best < 0 or f < bestf):
            best = i
            bestf = f
    if best >= 0:
        q.kind = 1
        q.n = 1
        q.idx[0] = best
        q.isdead[0] = 0
        q.info = 2
        return 1
    best = -1
    for j in range(na):
        i = aug[j]
        if best < 0 or pd[i] < bestf:
            best = i
            bestf = pd[i]
    if best < 0:
        return 0
    # partition the possible identities of card ``best`` round-robin; dead identities share a block
    poss = em[best]
    eff = total - (1 if (poss & b.dead) else 0)
    cur = 0
    nblock = 0
    for k in range(MAXK):
        q.block[k] = -1
    for k in range(MAXK):
        if poss & (1u << k) and not (b.dead & (1u << k)):
            q.block[k] = cur
            cur = (cur + 1) % eff
            if nblock < eff:
                nblock += 1
    if poss & b.dead:
        for k in range(MAXK):
            if poss & b.dead & (1u << k):
                q.block[k] = nblock
        nblock += 1
    q.kind = 2
    q.pidx = best
    q.info = nblock
    return 2

cdef inline int hat_answer(CBoard* b, HatQ* q, signed char* hand) noexcept nogil:
    cdef int j
    cdef unsigned int bit
    if q.kind == 2:
        return q.block[hand[q.pidx]]
    for j in range(q.n):
        bit = 1u << hand[q.idx[j]]
        if (b.dead if q.isdead[j] else b.playable) & bit:
            return j + 1
    return 0

cdef inline void hat_ack(CBoard* b, HatQ* q, int a, unsigned int* m) noexcept nogil:
    cdef int j, k
    cdef unsigned int pred, keep
    if q.kind == 2:
        keep = 0
        for k in range(MAXK):
            if q.block[k] == a:
                keep |= 1u << k
        m[q.pidx] &= keep
        return
    for j in range(q.n):
        pred = b.dead if q.isdead[j] else b.playable
        if a == 0 or j < a - 1:
            m[q.idx[j]] &= ~pred
        elif j == a - 1:
            m[q.idx[j]] &= pred
            return

cdef int hat_encode(CBoard* b, unsigned int* m, int L, signed char* hand, int total) noexcept nogil:
    """Answers of a hand (seen by others) to the question sequence, packed into [0, total)."""
    cdef HatQ q
    cdef int modulus = 1, value = 0, room, a
    while True:
        room = (total - value - 1) // modulus + 1
        if hat_ask(b, m, L, room, &q) == 0:
            break
        a = hat_answer(b, &q, hand)
        hat_ack(b, &q, a, m)
        value += modulus * a
        modulus = modulus * q.info
        if modulus > total:
            modulus = total
    return value

cdef void hat_decode(CBoard* b, unsigned int* m, int L, int total, int value) noexcept nogil:
    """The receiver's side of :func:`hat_encode`: replay the questions and split ``value``."""
    cdef HatQ q
    cdef int modulus = total, a
    while True:
        if hat_ask(b, m, L, modulus, &q) == 0:
            break
        a = value % q.info
        value = value // q.info
        modulus = (modulus - a - 1) // q.info + 1
        hat_ack(b, &q, a, m)

cdef int info_per_player(Cfg* g, St* s, CBoard* b, ConvMem* mem, int o) noexcept nogil:
    """4 distinguishable hint kinds if the hand publicly holds two colours and two ranks, else 3."""
    cdef int c, r, i
    cdef bint all_c, one_color = False, one_rank = False
    for c in range(g.colors):
        all_c = True
        for i in range(s.hand_len[o]):
            if not (mem.know[o][i] & b.nz & b.colmask[c]):
                all_c = False
                break
        if all_c:
            one_color = True
            break
    for r in range(g.ranks):
        all_c = True
        for i in range(s.hand_len[o]):
            if not (mem.know[o][i] & b.nz & b.rankmask[r]):
                all_c = False
                break
        if all_c:
            one_rank = True
            break
    return 3 if (one_color or one_rank) else 4

cdef inline bint one_colour(CBoard* b, unsigned int em, int C) noexcept nogil:
    cdef int c
    for c in range(C):
        if (em & ~b.colmask[c]) == 0:
            return True
    return False

cdef inline bint one_rank(CBoard* b, unsigned int em, int R) noexcept nogil:
    cdef int r
    for r in range(R):
        if (em & ~b.rankmask[r]) == 0:
            return True
    return False

cdef int index_for_hint(Cfg* g, St* s, CBoard* b, ConvMem* mem, int o) noexcept nogil:
    """The card whose colour/rank a hint to ``o`` is about: the least-known card that may matter."""
    cdef int i, sc, best = 0, best_sc = -1
    cdef unsigned int em
    for i in range(s.hand_len[o]):
        em = mem.know[o][i] & b.nz
        if subset(em, b.dead) or popc(em) == 1:
            sc = 0
        else:
            sc = 1 + (0 if one_colour(b, em, g.colors) else 1) + (0 if one_rank(b, em, g.ranks) else 1)
        if sc > best_sc:
            best_sc = sc
            best = i
    return best

cdef int hat_values(Cfg* g, St* s, CBoard* b, ConvMem* mem, int source, int total, int* vals) noexcept nogil:
    """Each other player's encoded answers (what every third party computes); returns their sum mod total."""
    cdef unsigned int tmp[MAXH]
    cdef int o, i, tot = 0
    for o in range(g.players):
        vals[o] = 0
        if o == source:
            continue
        for i in range(s.hand_len[o]):
            tmp[i] = mem.know[o][i]
        vals[o] = hat_encode(b, tmp, s.hand_len[o], s.hand[o], total)
        tot += vals[o]
    return tot % total

cdef void hat_receive(Cfg* g, St* s, CBoard* b, ConvMem* mem, int source, int total, int hat_sum) noexcept nogil:
    """Every player but ``source`` recovers its own answers from the announced sum and updates."""
    cdef int vals[MAXP]
    cdef int j, o, v
    hat_values(g, s, b, mem, source, total, vals)
    for j in range(g.players):
        if j == source:
            continue
        v = hat_sum
        for o in range(g.players):
            if o != source and o != j:
                v -= vals[o]      # j sees o's hand, so it can compute o's answers
        v = ((v % total) + total) % total
        hat_decode(b, mem.know[j], s.hand_len[j], total, v)

cdef bint knows_playable(St* s, CBoard* b, ConvMem* mem, int o) noexcept nogil:
    cdef int i
    for i in range(s.hand_len[o]):
        if subset(mem.know[o][i] & b.nz, b.playable):
            return True
    return False

cdef void noone_needs_hint(Cfg* g, St* s, CBoard* b, ConvMem* mem, int source) noexcept nogil:
    """Public inference from not hinting: whoever does not know a playable card has none."""
    cdef int o, i
    for o in range(g.players):
        if o != source and not knows_playable(s, b, mem, o):
            for i in range(s.hand_len[o]):
                mem.know[o][i] &= ~b.playable

cdef int find_useless(Cfg* g, CBoard* b, unsigned int* em, int L, int* out) noexcept nogil:
    """Slots known dead, or known duplicates of another known card in the same hand (sorted)."""
    cdef int i, j, n = 0
    cdef bint mark[MAXH]
    for i in range(L):
        mark[i] = subset(em[i], b.dead)
    for i in range(L):
        if not mark[i] and popc(em[i]) == 1:
            for j in range(i):
                if em[j] == em[i] and not subset(em[j], b.dead):
                    mark[i] = True
                    mark[j] = True
                    break
    for i in range(L):
        if mark[i]:
            out[n] = i
            n += 1
    return n

cdef int info_hint_layout(Cfg* g, St* s, CBoard* b, ConvMem* mem, int h, int* per, int* idx) noexcept nogil:
    cdef int j, o, total = 0
    for j in range(g.players - 1):
        o = (h + 1 + j) % g.players
        per[j] = info_per_player(g, s, b, mem, o)
        idx[j] = index_for_hint(g, s, b, mem, o)
        total += per[j]
    return total

cdef double hint_goodness(Cfg* g, St* s, CBoard* b, ConvMem* mem, int t, int is_rank, int x) noexcept nogil:
    cdef int i, card, ow, nw
    cdef unsigned int em, nm, sel
    cdef double good = 1.0
    for i in range(s.hand_len[t]):
        em = mem.know[t][i] & b.nz
        if subset(em, b.dead) or popc(em) == 1:
            continue
        card = s.hand[t][i]
        sel = b.rankmask[x] if is_rank else b.colmask[x]
        if (card % g.ranks == x) if is_rank else (card // g.ranks == x):
            nm = em & sel
        else:
            nm = em & ~sel
        ow = wsum(em, b.pubw)
        nw = wsum(nm, b.pubw)
        if nw <= 0:
            continue
        good *= (2.0 if (popc(nm) == 1 or subset(nm, b.dead)) else 1.0) * (<double>ow / <double>nw)
    return good

cdef int info_choose_hint(Cfg* g, St* s, CBoard* b, ConvMem* mem, int h) noexcept nogil:
    cdef int per[MAXP]
    cdef int idx[MAXP]
    cdef int vals[MAXP]
    cdef int total = info_hint_layout(g, s, b, mem, h, per, idx)
    cdef int S = hat_values(g, s, b, mem, h, total, vals)
    cdef int amt = 0, typ = S, t, card, i, c2, best_m = -1, is_rank, x
    cdef double best_g = -1.0, gd
    while typ >= per[amt]:
        typ -= per[amt]
        amt += 1
    t = (h + 1 + amt) % g.players
    card = s.hand[t][idx[amt]]
    if typ == 0:
        return conv_hint_move(g, h, t, 1, card % g.ranks)
    if typ == 1:
        return conv_hint_move(g, h, t, 0, card // g.ranks)
    # a hint that does not touch the chosen card: rank (type 2) or colour (type 3) with 4 kinds,
    # either with 3 kinds; among the candidates the most informative one
    for i in range(s.hand_len[t]):
        c2 = s.hand[t][i]
        for is_rank in range(2):
            if per[amt] == 4 and is_rank != (1 if typ == 2 else 0):
                continue
            if is_rank:
                x = c2 % g.ranks
                if x == card % g.ranks:
                    continue
            else:
                x = c2 // g.ranks
                if x == card // g.ranks:
                    continue
            gd = hint_goodness(g, s, b, mem, t, is_rank, x)
            if gd > best_g:
                best_g = gd
                best_m = conv_hint_move(g, h, t, is_rank, x)
    if best_m < 0:
        # every card shares the chosen card's colour and rank (three 1s in a 3-card hand): no hint
        # of the asked kind exists; hanabi.rs would stop here, we give the rank hint (legal, mis-read)
        best_m = conv_hint_move(g, h, t, 1, card % g.ranks)
    return best_m

cdef int info_decode_hint_sum(Cfg* g, St* s, CBoard* b, ConvMem* mem, int h, int move, int* total_out) noexcept nogil:
    """The hat sum announced by hint ``move`` of player ``h`` (read off the hint's target, kind and touch)."""
    cdef int per[MAXP]
    cdef int idx[MAXP]
    cdef int total = info_hint_layout(g, s, b, mem, h, per, idx)
    cdef int H = g.hand_size, n = g.players, x = move - 2 * H, off, is_rank, val, amt, j, prev = 0, typ
    cdef int t, card
    cdef bint touched
    if x < (n - 1) * g.colors:
        off = x // g.colors + 1
        is_rank = 0
        val = x % g.colors
    else:
        x -= (n - 1) * g.colors
        off = x // g.ranks + 1
        is_rank = 1
        val = x % g.ranks
    t = (h + off) % n
    amt = off - 1
    for j in range(amt):
        prev += per[j]
    card = s.hand[t][idx[amt]]
    touched = (card % g.ranks == val) if is_rank else (card // g.ranks == val)
    if touched:
        typ = 0 if is_rank else 1
    elif per[amt] == 3:
        typ = 2
    else:
        typ = 2 if is_rank else 3
    total_out[0] = total
    return prev + typ

cdef inline bint seen_elsewhere(Cfg* g, St* s, int p, int k) noexcept nogil:
    cdef int o, j
    for o in range(g.players):
        if o != p:
            for j in range(s.hand_len[o]):
                if s.hand[o][j] == k:
                    return True
    return False

cdef int info_act(Cfg* g, St* s, ConvMem* mem) noexcept nogil:
    cdef CBoard b
    cdef int p = s.cur, n = g.players, L = s.hand_len[p], H = g.hand_size
    cdef int pw[MAXK]
    cdef unsigned int pnz = 0
    cdef unsigned int em[MAXH]
    cdef unsigned int pub[MAXH]
    cdef int i, k, o, j, best, thr
    cdef float sc, bestf, num_with, tw
    cdef int useless[MAXH]
    cdef int pub_useless[MAXH]
    cdef int nu, npu
    cdef int vals[MAXP]
    cdef bint will_hint, other_playable, needs
    cdef ConvMem tmp
    cdef double cv, bestcv
    cboard_setup(g, s, &b)
    for k in range(g.num_cards):
        pw[k] = b.pubw[k]
    for o in range(n):
        if o != p:
            for i in range(s.hand_len[o]):
                pw[s.hand[o][i]] -= 1
    for k in range(g.num_cards):
        if pw[k] > 0:
            pnz |= 1u << k
    for i in range(L):
        em[i] = mem.know[p][i] & pnz
        pub[i] = mem.know[p][i] & b.nz
    # 1. a surely playable card: the one that unlocks most, preferring cards nobody else holds
    best = -1
    bestf = 0.0
    for i in range(L):
        if not subset(em[i], b.playable):
            continue
        sc = 0.0
        tw = 0.0
        for k in range(g.num_cards):
            if em[i] & (1u << k):
                num_with = 1.0
                if s.deck_left > 0:
                    for o in range(n):
                        if o != p:
                            for j in range(s.hand_len[o]):
                                if s.hand[o][j] == k:
                                    num_with += 1.0
                                    break
                sc += pw[k] * ((10.0 - (k % g.ranks + 1)) / num_with)
                tw += pw[k]
        sc /= tw
        if best < 0 or sc > bestf:
            best = i
            bestf = sc
    if best >= 0:
        return H + best
    # 2. a risky play early in the game: playable or dead for sure, playable with P > 0.75
    thr = g.deck_size - g.num_cards - n * H
    if s.lives > 1 and s.num_discarded <= thr:
        best = -1
        bestf = 0.0
        for i in range(L):
            if subset(em[i], b.playable | b.dead):
                sc = wprob(em[i], b.playable, pw)
                if best < 0 or sc > bestf:
                    best = i
                    bestf = sc
        if best >= 0 and bestf > <float>0.75:
            return H + best
    npu = find_useless(g, &b, pub, L, pub_useless)
    nu = find_useless(g, &b, em, L, useless)
    other_playable = False
    needs = False
    for o in range(n):
        if o == p:
            continue
        for j in range(s.hand_len[o]):
            if b.playable & (1u << s.hand[o][j]):
                other_playable = True
                if not knows_playable(s, &b, mem, o):
                    needs = True
                break
    if s.tokens >= g.max_tokens:
        will_hint = True      # HLE forbids discarding with all tokens (hanabi.rs allows it)
    elif s.tokens > 0 and needs:
        will_hint = True
    elif s.num_discarded <= thr and nu > 0:
        will_hint = False
    elif s.tokens > 0 and other_playable:
        will_hint = True
    elif s.tokens > 4:
        will_hint = True
    else:
        will_hint = False
    if will_hint:
        return info_choose_hint(g, s, &b, mem, p)
    # discard: a publicly useless card chosen by hat sum, else a privately useless one, else the
    # card most likely seen elsewhere / dispensable / high
    if npu > 1:
        tmp = mem[0]
        if s.tokens > 0:
            noone_needs_hint(g, s, &b, &tmp, p)
        return pub_useless[hat_values(g, s, &b, &tmp, p, npu, vals)]
    if nu > 0:
        return useless[0]
    best = 0
    bestcv = -1e30
    for i in range(L):
        cv = 0.0
        for k in range(g.num_cards):
            if em[i] & (1u << k) and seen_elsewhere(g, s, p, k):
                cv += pw[k]
        tw = wsum(em[i], pw)
        cv = 20.0 * (<float>cv / tw) + 10.0 * wprob(em[i], b.dispensable, pw)
        sc = 0.0
        for k in range(g.num_cards):
            if em[i] & (1u << k):
                sc += pw[k] * (k % g.ranks + 1)
        cv += sc / tw
        if cv > bestcv:
            bestcv = cv
            best = i
    return best

cdef void info_observe(Cfg* g, St* s, ConvMem* mem, int move) noexcept nogil:
    """Public-information update for a move of the player to act, before the move is applied."""
    cdef CBoard b
    cdef int h = s.cur, H = g.hand_size, total, S, npu, j, idx
    cdef unsigned int pub[MAXH]
    cdef int pub_useless[MAXH]
    cboard_setup(g, s, &b)
    if move >= 2 * H:
        S = info_decode_hint_sum(g, s, &b, mem, h, move, &total)
        hat_receive(g, s, &b, mem, h, total, S)
    elif move < H:
        for j in range(s.hand_len[h]):
            pub[j] = mem.know[h][j] & b.nz
        npu = find_useless(g, &b, pub, s.hand_len[h], pub_useless)
        if s.tokens > 0:
            noone_needs_hint(g, s, &b, mem, h)
        if npu > 1:
            idx = -1
            for j in range(npu):
                if pub_useless[j] == move:
                    idx = j
            if idx >= 0:
                hat_receive(g, s, &b, mem, h, npu, idx)


# ============================================================================ SmartBot
DEF TRI_NO = 0
DEF TRI_MAYBE = 1
DEF TRI_YES = 2

cdef inline int tri(unsigned int m, unsigned int pred) noexcept nogil:
    if (m & pred) == 0:
        return TRI_NO
    if (m & ~pred) == 0:
        return TRI_YES
    return TRI_MAYBE

cdef inline double uprob(unsigned int m, unsigned int pred) noexcept nogil:
    """Fraction of the possible identities satisfying pred (SmartBot counts identities, not copies)."""
    cdef int t = popc(m)
    if t == 0:
        return 0.0
    return <double>popc(m & pred) / t

cdef inline int sb_rank(CBoard* b, unsigned int m, int R) noexcept nogil:
    """The rank every possibility shares (0-based), -1 if not determined."""
    cdef int r
    if m == 0:
        return -1
    for r in range(R):
        if (m & ~b.rankmask[r]) == 0:
            return r
    return -1

cdef inline int single_card(unsigned int m) noexcept nogil:
    cdef int k = 0
    if popc(m) != 1:
        return -1
    while not (m & 1u):
        m >>= 1
        k += 1
    return k

cdef inline void narrow(unsigned int* m, unsigned int keep) noexcept nogil:
    """Intersect a possibility set, ignoring an inference that would leave nothing possible."""
    if m[0] & keep:
        m[0] &= keep

cdef void sb_located(Cfg* g, St* s, ConvMem* mem, int* loc) noexcept nogil:
    cdef int p, i, k
    for k in range(g.num_cards):
        loc[k] = 0
    for p in range(g.players):
        for i in range(s.hand_len[p]):
            k = single_card(mem.know[p][i])
            if k >= 0:
                loc[k] += 1

cdef void sb_refresh(Cfg* g, St* s, CBoard* b, ConvMem* mem) noexcept nogil:
    """Rule out identities whose copies are all public or located in some hand, to a fixed point."""
    cdef int loc[MAXK]
    cdef int nloc[MAXK]
    cdef int p, i, k, rounds
    cdef unsigned int gone
    cdef bint changed
    sb_located(g, s, mem, loc)
    for rounds in range(64):
        gone = 0
        for k in range(g.num_cards):
            if loc[k] >= b.pubw[k]:
                gone |= 1u << k
        for p in range(g.players):
            for i in range(s.hand_len[p]):
                if popc(mem.know[p][i]) != 1:
                    narrow(&mem.know[p][i], ~gone)
        sb_located(g, s, mem, nloc)
        changed = False
        for k in range(g.num_cards):
            if nloc[k] != loc[k]:
                changed = True
            loc[k] = nloc[k]
        if not changed:
            break

cdef int sb_next_discard(St* s, CBoard* b, ConvMem* mem, int to) noexcept nogil:
    """The slot ``to`` would discard next by convention (-1: it has a play or a known-trash card)."""
    cdef int i, best = -1
    cdef double f, bestf = 0.0
    cdef unsigned int m
    for i in range(s.hand_len[to]):
        m = mem.know[to][i]
        if tri(m, b.playable) == TRI_YES or tri(m, b.dead) == TRI_YES:
            return -1
        if tri(m, b.valuable) == TRI_YES:
            continue
        f = 100.0 + uprob(m, b.dead)
        if f > bestf:
            bestf = f
            best = i
    return best

cdef bint could_be_valuable_with_rank(CBoard* b, unsigned int m, int r, int R) noexcept nogil:
    if r < 0 or r >= R or (m & b.rankmask[r]) == 0:
        return False
    if tri(m, b.valuable) != TRI_MAYBE:
        return False
    return tri(m & b.rankmask[r], b.valuable) != TRI_NO

cdef void sb_no_warning(Cfg* g, St* s, CBoard* b, ConvMem* mem, int frm) noexcept nogil:
    """The left partner of ``frm`` was not warned, so its next discard is not valuable."""
    cdef int pew, di
    if s.deck_left == 0 or s.tokens == 0:
        return
    pew = (frm + 1) % g.players
    di = sb_next_discard(s, b, mem, pew)
    if di >= 0:
        narrow(&mem.know[pew][di], ~b.valuable)

cdef void sb_observe(Cfg* g, St* s, ConvMem* mem, int move) noexcept nogil:
    """SmartBot's observers for a move of the player to act, before the move is applied."""
    cdef CBoard b
    cdef int h = s.cur, n = g.players, H = g.hand_size, R = g.ranks, C = g.colors
    cdef int x, off, t, val, is_rank, i, card, j, holder, pew, di, inferred, tl
    cdef unsigned int touched = 0, sel, m
    cdef bint identified, was, warning, reclaim
    cboard_setup(g, s, &b)
    if move < 2 * H:
        i = move if move < H else move - H
        sb_no_warning(g, s, &b, mem, h)
        m = mem.know[h][i]
        if move < H and popc(m) == 1 and tri(m, b.playable) == TRI_YES:
            # discard finesse: the partner whose newest card is this card now knows it
            card = s.hand[h][i]
            holder = -1
            for j in range(n):
                if j != h and s.hand_len[j] > 0 and s.hand[j][s.hand_len[j] - 1] == card:
                    holder = j
                    break
            if holder >= 0:
                mem.know[holder][s.hand_len[holder] - 1] = 1u << card
        return
    x = move - 2 * H
    if x < (n - 1) * C:
        off = x // C + 1
        is_rank = 0
        val = x % C
        sel = b.colmask[val]
    else:
        x -= (n - 1) * C
        off = x // R + 1
        is_rank = 1
        val = x % R
        sel = b.rankmask[val]
    t = (h + off) % n
    tl = s.hand_len[t]
    for i in range(tl):
        card = s.hand[t][i]
        if (card % R == val) if is_rank else (card // R == val):
            touched |= 1u << i
    pew = (h + 1) % n
    warning = False
    reclaim = False
    if is_rank:
        di = sb_next_discard(s, &b, mem, pew)
        reclaim = s.tokens == g.max_tokens and h == (t + 1) % n and (touched & 1u)
        warning = (not reclaim and t == pew and di >= 0 and (touched & (1u << di))
                   and could_be_valuable_with_rank(&b, mem.know[t][di], val, R))
        if warning:
            narrow(&mem.know[t][di], b.valuable)
    identified = False
    inferred = -1
    for i in range(tl - 1, -1, -1):
        was = tri(mem.know[t][i], b.playable) == TRI_MAYBE
        if touched & (1u << i):
            narrow(&mem.know[t][i], sel)
            if was:
                if tri(mem.know[t][i], b.playable) == TRI_YES:
                    identified = True
                elif tri(mem.know[t][i], b.playable) == TRI_MAYBE and inferred < 0:
                    inferred = i
        else:
            narrow(&mem.know[t][i], ~sel)
            if was and tri(mem.know[t][i], b.playable) == TRI_YES:
                identified = True
    if not warning and not reclaim and not identified and inferred >= 0:
        narrow(&mem.know[t][inferred], b.playable)
    if t != pew:
        sb_no_warning(g, s, &b, mem, h)

cdef inline unsigned int eye_mask(unsigned int m, unsigned int gone) noexcept nogil:
    if popc(m) == 1:
        return m
    if m & ~gone:
        return m & ~gone
    return m

cdef int sb_best_hint(Cfg* g, St* s, CBoard* b, ConvMem* mem, int p, int to, int* fitness) noexcept nogil:
    """SmartBot's most informative hint to ``to`` that reveals a playable card and is not misleading."""
    cdef int R = g.ranks, C = g.colors, L = s.hand_len[to], i, x, is_rank, avoid = -1, di, fit, best_m = -1
    cdef int best_f = -1
    cdef unsigned int present_c = 0, present_r = 0, sel, old
    cdef unsigned int nm[MAXH]
    cdef bint reveals, inc
    cdef int mis
    for i in range(L):
        present_c |= 1u << (s.hand[to][i] // R)
        present_r |= 1u << (s.hand[to][i] % R)
    if to == (p + 1) % g.players:
        di = sb_next_discard(s, b, mem, to)
        if di >= 0:
            avoid = s.hand[to][di] % R
            if not could_be_valuable_with_rank(b, mem.know[to][di], avoid, R):
                avoid = -1
    for is_rank in range(2):
        for x in range(R if is_rank else C):
            if not ((present_r if is_rank else present_c) & (1u << x)):
                continue
            if is_rank and x == avoid:
                continue     # would read as a valuable warning
            sel = b.rankmask[x] if is_rank else b.colmask[x]
            fit = 0
            for i in range(L):
                inc = (s.hand[to][i] % R == x) if is_rank else (s.hand[to][i] // R == x)
                nm[i] = mem.know[to][i] & (sel if inc else ~sel)
                fit += popc(mem.know[to][i]) - popc(nm[i])
            reveals = False
            mis = -1
            for i in range(L - 1, -1, -1):
                old = mem.know[to][i]
                if tri(old, b.playable) != TRI_MAYBE:
                    continue
                if nm[i] != 0 and tri(nm[i], b.playable) == TRI_YES:
                    reveals = True
                elif tri(nm[i], b.playable) == TRI_MAYBE and ((s.hand[to][i] % R == x) if is_rank else (s.hand[to][i] // R == x)):
                    if mis < 0:
                        mis = 0 if (b.playable & (1u << s.hand[to][i])) else 1
            if reveals or mis == 0:
                if fit > best_f:
                    best_f = fit
                    best_m = conv_hint_move(g, p, to, is_rank, x)
    fitness[0] = best_f
    return best_m

cdef int sb_play_lowest(Cfg* g, St* s, CBoard* b, ConvMem* mem, int p, unsigned int gone) noexcept nogil:
    cdef int i, best = -1, r
    cdef double f, bestf = 0.0
    cdef unsigned int m, e
    for i in range(s.hand_len[p]):
        m = mem.know[p][i]
        if tri(m, b.playable) == TRI_NO:
            continue
        e = eye_mask(m, gone)
        if tri(e, b.playable) != TRI_YES:
            continue
        r = sb_rank(b, e, g.ranks)
        f = (5 - r) if r >= 0 else 7
        if tri(m, b.playable) != TRI_YES:
            f += 100     # nobody else knows I know it: play it before someone wastes a hint
        if f > bestf:
            bestf = f
            best = i
    return best

cdef int sb_mystery(Cfg* g, St* s, CBoard* b, ConvMem* mem, int p, unsigned int gone) noexcept nogil:
    """Late in the game, a gamble on the likeliest playable card (deck <= 3 with 3 lives, <= 1 else)."""
    cdef int lives = s.lives if s.lives <= 3 else 3, limit, i, best = -1
    cdef double f, bestf = 0.0
    cdef unsigned int e
    if lives <= 0:
        return -1
    limit = 3 if lives == 3 else 1
    if s.deck_left > limit:
        return -1
    for i in range(s.hand_len[p] - 1, -1, -1):
        e = eye_mask(mem.know[p][i], gone)
        if tri(e, b.playable) == TRI_MAYBE:
            f = uprob(e, b.playable)
            if f > bestf:
                bestf = f
                best = i
    return best

cdef int sb_act(Cfg* g, St* s, ConvMem* mem, bint gamble) noexcept nogil:
    cdef CBoard b
    cdef int p = s.cur, n = g.players, H = g.hand_size, R = g.ranks
    cdef int eye[MAXK]
    cdef unsigned int gone = 0, m
    cdef int i, k, o, j, pw, di, fit, mv, best_m, best_f, card, cnt, right, best
    cdef double f, bestf
    cboard_setup(g, s, &b)
    sb_refresh(g, s, &b, mem)
    for k in range(g.num_cards):
        eye[k] = 0
    for o in range(n):
        if o != p:
            for j in range(s.hand_len[o]):
                eye[s.hand[o][j]] += 1
        else:
            for j in range(s.hand_len[o]):
                k = single_card(mem.know[o][j])
                if k >= 0:
                    eye[k] += 1
    for k in range(g.num_cards):
        if eye[k] >= b.pubw[k]:
            gone |= 1u << k
    if s.deck_left == 0:
        i = sb_play_lowest(g, s, &b, mem, p, gone)
        if i >= 0:
            return H + i
        i = sb_mystery(g, s, &b, mem, p, gone) if gamble else -1
        if i >= 0:
            return H + i
    # warn the left partner before it discards the last copy of a card
    if s.tokens > 0:
        pw = (p + 1) % n
        di = sb_next_discard(s, &b, mem, pw)
        if di >= 0 and (b.valuable & (1u << s.hand[pw][di])):
            mv = sb_best_hint(g, s, &b, mem, p, pw, &fit)
            if fit > 0:
                return mv
            return conv_hint_move(g, p, pw, 1, s.hand[pw][di] % R)
    # discard finesse
    if s.tokens < g.max_tokens:
        for i in range(s.hand_len[p]):
            m = mem.know[p][i]
            card = single_card(m)
            if card >= 0 and tri(m, b.valuable) == TRI_NO and tri(m, b.playable) == TRI_YES:
                cnt = 0
                for j in range(1, n):
                    o = (p + j) % n
                    if s.hand_len[o] > 0 and s.hand[o][s.hand_len[o] - 1] == card:
                        cnt += 1
                if cnt == 1:
                    return i
    i = sb_play_lowest(g, s, &b, mem, p, gone)
    if i >= 0:
        return H + i
    if s.tokens > 0:
        best_f = -1
        best_m = -1
        for j in range(1, n):
            mv = sb_best_hint(g, s, &b, mem, p, (p + j) % n, &fit)
            if fit > best_f:
                best_f = fit
                best_m = mv
        if best_f > 0:
            return best_m
    i = sb_mystery(g, s, &b, mem, p, gone) if gamble else -1
    if i >= 0:
        return H + i
    if s.tokens >= g.max_tokens:
        # discarding is illegal: tell the right partner about its oldest card
        right = (p + n - 1) % n
        return conv_hint_move(g, p, right, 1, s.hand[right][0] % R)
    best = -1
    bestf = 0.0
    for i in range(s.hand_len[p]):
        m = mem.know[p][i]
        if tri(m, b.dead) == TRI_NO:
            continue
        if tri(m, b.dead) == TRI_MAYBE and tri(eye_mask(m, gone), b.dead) != TRI_YES:
            continue
        f = 2.0 - uprob(m, b.dead)
        if f > bestf:
            bestf = f
            best = i
    if best >= 0:
        return best
    di = sb_next_discard(s, &b, mem, p)
    if di >= 0:
        return di
    best = 0
    for i in range(s.hand_len[p]):
        if sb_rank(&b, mem.know[p][i], R) > sb_rank(&b, mem.know[p][best], R):
            best = i
    return best


# ============================================================================ driver
cdef void conv_reset(Cfg* g, St* s, ConvMem* mem) noexcept nogil:
    """Possibility sets from the engine's hint knowledge (all identities for a fresh deal)."""
    cdef int p, i, c, r
    cdef unsigned int m
    memset(mem, 0, sizeof(ConvMem))
    for p in range(g.players):
        for i in range(s.hand_len[p]):
            m = 0
            for c in range(g.colors):
                if s.kcol[p][i] & (1 << c):
                    for r in range(g.ranks):
                        if s.krank[p][i] & (1 << r):
                            m |= 1u << (c * g.ranks + r)
            mem.know[p][i] = m

cdef inline int conv_act(Cfg* g, St* s, ConvMem* mem, int kind) noexcept nogil:
    if kind == CONV_SMARTBOT:
        return sb_act(g, s, mem, True)
    if kind == CONV_SMARTBOT_SAFE:
        return sb_act(g, s, mem, False)
    return info_act(g, s, mem)

cdef void conv_step(Cfg* g, St* s, ConvMem* mem, int kind, int move) noexcept nogil:
    """Observe, apply and deal: the public knowledge follows the move (slots shift, new card appended)."""
    cdef int p = s.cur, H = g.hand_size, n = g.players, C = g.colors, R = g.ranks
    cdef int i, j, L, x, t, val, is_rank
    cdef unsigned int sel, full = (1u << g.num_cards) - 1
    if kind == CONV_INFORMATION:
        info_observe(g, s, mem, move)
    else:
        sb_observe(g, s, mem, move)
    if move >= 2 * H and kind == CONV_INFORMATION:
        x = move - 2 * H
        if x < (n - 1) * C:
            t = (p + x // C + 1) % n
            val = x % C
            is_rank = 0
            sel = ((1u << R) - 1) << (val * R)
        else:
            x -= (n - 1) * C
            t = (p + x // R + 1) % n
            val = x % R
            is_rank = 1
            sel = 0
            for j in range(C):
                sel |= 1u << (j * R + val)
        for i in range(s.hand_len[t]):
            if (s.hand[t][i] % R == val) if is_rank else (s.hand[t][i] // R == val):
                mem.know[t][i] &= sel
            else:
                mem.know[t][i] &= ~sel
    L = s.hand_len[p]
    st_apply(g, s, move)
    st_auto_deal(g, s)
    if move < 2 * H:
        i = move if move < H else move - H
        for j in range(i, L - 1):
            mem.know[p][j] = mem.know[p][j + 1]
        mem.know[p][L - 1] = full if s.hand_len[p] == L else 0


CONVENTION_BOTS = {"information": CONV_INFORMATION, "smartbot": CONV_SMARTBOT, "smartbot_safe": CONV_SMARTBOT_SAFE}


def _convention_kind(kind):
    if isinstance(kind, str):
        key = kind.lower()
        if key not in CONVENTION_BOTS:
            raise ValueError(f"unknown convention bot {kind!r}; known: {', '.join(CONVENTION_BOTS)}")
        return CONVENTION_BOTS[key]
    if kind not in (CONV_INFORMATION, CONV_SMARTBOT, CONV_SMARTBOT_SAFE):
        raise ValueError(f"unknown convention bot id {kind}")
    return int(kind)


def _check_convention_config(EngineConfig config):
    c = config.cfg
    if c.colors * c.ranks > 25 or c.players < 2:
        raise ValueError("convention bots need at most 25 card identities and 2-5 players")


def convention_play_games(EngineConfig config not None, kind, int num_games, uint64_t seed=0):
    """Self-play ``num_games`` games of a convention bot (``"information"`` or ``"smartbot"``).

    Returns ``(scores, played, turns)``: the config's score per game (HLE: 0 when the last life is
    lost), the cards on the fireworks per game (the score of hanabi.rs and O'Dwyer's framework) and
    the number of moves per game.  Game i is dealt from seed ``(seed, 2i)`` exactly as
    :func:`play_games` deals it, so the bots and the rule agents meet the same decks.
    """
    cdef int k = _convention_kind(kind)
    _check_convention_config(config)
    if num_games < 0:
        raise ValueError("num_games must be >= 0")
    cdef Cfg g = config.cfg
    cdef cnp.ndarray[cnp.int32_t, ndim=1] scores = np.zeros(num_games, dtype=np.int32)
    cdef cnp.ndarray[cnp.int32_t, ndim=1] played = np.zeros(num_games, dtype=np.int32)
    cdef cnp.ndarray[cnp.int32_t, ndim=1] turns = np.zeros(num_games, dtype=np.int32)
    cdef St s
    cdef ConvMem mem
    cdef int gi, m, bad = 0
    with nogil:
        for gi in range(num_games):
            st_reset(&g, &s, mix_seed(seed, 2 * gi))
            st_auto_deal(&g, &s)
            conv_reset(&g, &s, &mem)
            while not st_terminal(&g, &s):
                m = conv_act(&g, &s, &mem, k)
                if not st_move_legal(&g, &s, m):
                    bad = 1
                    break
                conv_step(&g, &s, &mem, k, m)
            if bad:
                break
            scores[gi] = st_score(&g, &s)
            played[gi] = fireworks_total(&g, &s)
            turns[gi] = s.moves
    if bad:
        raise RuntimeError(f"convention bot chose an illegal move {m} in game {gi}")
    return scores, played, turns


cdef class ConventionTeam:
    """A game in progress played by one convention bot in every seat, with its public knowledge.

    Built from an :class:`EngineState` (its hint knowledge seeds the possibility sets); ``act()``
    gives the move of the player to act, ``step(move)`` observes and applies a move (any legal
    move, so tests can drive the bots through constructed situations).
    """
    cdef Cfg cfg
    cdef St st
    cdef ConvMem mem
    cdef readonly int kind
    cdef readonly EngineConfig config

    def __init__(self, EngineState state not None, kind="information"):
        self.kind = _convention_kind(kind)
        _check_convention_config(state.config)
        self.config = state.config
        self.cfg = state.cfg
        self.st = state.st
        conv_reset(&self.cfg, &self.st, &self.mem)

    def act(self):
        if st_current(&self.cfg, &self.st) < 0:
            raise ValueError("no player to act (chance or terminal state)")
        return conv_act(&self.cfg, &self.st, &self.mem, self.kind)

    def step(self, int move):
        if not st_move_legal(&self.cfg, &self.st, move):
            raise ValueError(f"illegal move {move}")
        conv_step(&self.cfg, &self.st, &self.mem, self.kind, move)

    def state(self):
        cdef EngineState es = EngineState.__new__(EngineState)
        es.config = self.config
        es.cfg = self.cfg
        es.st = self.st
        return es

    def knowledge(self, int player):
        """Per slot of ``player``: the sorted card ids still publicly possible."""
        cdef int i, k
        if not 0 <= player < self.cfg.players:
            raise ValueError(f"player {player} outside [0, {self.cfg.players})")
        return [[k for k in range(self.cfg.num_cards) if self.mem.know[player][i] & (1u << k)]
                for i in range(self.st.hand_len[player])]

    def set_knowledge(self, int player, int slot, cards):
        """Overwrite the public possibility set of one slot (constructed test states)."""
        cdef unsigned int m = 0
        if not 0 <= player < self.cfg.players or not 0 <= slot < self.st.hand_len[player]:
            raise ValueError("no such player/slot")
        for k in cards:
            if not 0 <= k < self.cfg.num_cards:
                raise ValueError(f"card id {k} outside [0, {self.cfg.num_cards})")
            m |= 1u << int(k)
        self.mem.know[player][slot] = m

    def hat_roundtrip(self, int source, int total):
        """Encode every non-source hand into a hat sum mod ``total`` and let each receiver decode it.

        Returns ``(hat_sum, encoded, decoded)``: the sum, and per player the possibility sets after
        acknowledging its true answers (what the sender computes) and after decoding the sum minus
        the answers it can see (what the receiver computes); they must agree.
        """
        cdef CBoard b
        cdef ConvMem enc
        cdef int vals[MAXP]
        cdef ConvMem dec
        cdef int o, i, j, v, S
        if not 0 <= source < self.cfg.players or total < 1:
            raise ValueError("bad source or total")
        cboard_setup(&self.cfg, &self.st, &b)
        enc = self.mem
        S = 0
        for o in range(self.cfg.players):
            vals[o] = 0
            if o != source:
                vals[o] = hat_encode(&b, enc.know[o], self.st.hand_len[o], self.st.hand[o], total)
                S += vals[o]
        S %= total
        dec = self.mem
        hat_receive(&self.cfg, &self.st, &b, &dec, source, total, S)
        encoded = []
        decoded = []
        for o in range(self.cfg.players):
            encoded.append([[k for k in range(self.cfg.num_cards) if enc.know[o][i] & (1u << k)]
                            for i in range(self.st.hand_len[o])])
            decoded.append([[k for k in range(self.cfg.num_cards) if dec.know[o][i] & (1u << k)]
                            for i in range(self.st.hand_len[o])])
        return S, encoded, decoded
