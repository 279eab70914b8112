# Included by hanabi_engine.pyx after hanabi_state.pxi: the production-rule agents of the
# Walton-Rivers / MAP-Elites rule base on the C state (views, rule kinds and conditions, the
# extended finesse / partner-model rules, and ``agent_act``). All ``nogil``.

# ----------------------------------------------------------------------------- rule agents
# Rule kinds (see cfrkit/agents/hanabi/rules.py for the documented semantics of each).
cdef enum:
    R_PLAY_SAFE = 0
    R_PLAY_CERTAIN = 1
    R_PLAY_PROBABLY_SAFE = 2
    R_PLAY_UNIQUE_POSSIBLE = 3
    R_PLAY_HINTED = 4
    R_PLAY_HINTED_BLINDLY = 5
    R_PLAY_OLDEST_HINTED = 6
    R_TELL_USEFUL = 10
    R_TELL_OLDEST_USEFUL = 11
    R_TELL_USELESS = 12
    R_TELL_DISPENSABLE = 13
    R_TELL_MOST_INFORMATION = 14
    R_TELL_PLAYABLE = 15
    R_TELL_FIVES = 16
    R_TELL_ONES = 17
    R_TELL_UNKNOWN = 18
    R_TELL_ILL_INFORMED = 19
    R_TELL_RANDOMLY = 20
    R_COMPLETE_TELL_USEFUL = 21
    R_TELL_CRITICAL = 22
    R_TELL_PLAYABLE_ANY = 23
    R_DISCARD_OLDEST = 30
    R_DISCARD_OLDEST_NO_INFO = 31
    R_DISCARD_SAFE = 32
    R_DISCARD_USELESS = 33
    R_DISCARD_IF_CERTAIN = 34
    R_DISCARD_PROBABLY_USELESS = 35
    R_DISCARD_LEAST_LIKELY_NECESSARY = 36
    R_DISCARD_HIGHEST = 37
    R_DISCARD_RANDOMLY = 38
    R_OSAWA_DISCARD = 39
    R_LEGAL_RANDOM = 50

# conditions wrapped around a rule
cdef enum:
    COND_NONE = 0
    COND_LIVES_GT1 = 1
    COND_TOKENS_LT4 = 2
    COND_HAIL_MARY = 3      # deck empty and more than one life left
    COND_DECK_NONEMPTY = 4

ctypedef struct Rule:
    int kind
    int cond
    double threshold
    int param               # integer parameter of the extended rules (flags, counts, weights)

ctypedef struct View:
    int unseen[MAXK]
    int reach[MAXC]          # lowest rank of each colour that can no longer be played
    unsigned char useless[MAXK]
    unsigned char critical[MAXK]
    double pplay[MAXH]
    double puse[MAXH]
    double pcrit[MAXH]
    double erank[MAXH]
    int nposs[MAXH]
    int single[MAXH]

ctypedef struct SeatStats:
    double hint_turns      # turns with at least one token available
    double hints           # hints given
    double plays           # cards played
    double risk_sum        # sum over plays of P(playable) from the player's grounded view
    double turns

cdef inline bint card_playable(Cfg* g, St* s, int card) noexcept nogil:
    return s.fireworks[card // g.ranks] == card % g.ranks

cdef inline bint card_useless(Cfg* g, St* s, View* v, int card) noexcept nogil:
    return v.useless[card]

cdef inline bint card_critical(Cfg* g, St* s, View* v, int card) noexcept nogil:
    return v.critical[card]

cdef void compute_view(Cfg* g, St* s, int p, View* v) noexcept nogil:
    cdef int n = g.players, R = g.ranks, C = g.colors
    cdef int k, c, r, q, i, w, card
    cdef double tot, pl, us, cr, er
    for k in range(g.num_cards):
        v.unseen[k] = g.counts[k] - s.discarded[k]
        if k % R < s.fireworks[k // R]:
            v.unseen[k] -= 1
    for q in range(n):
        if q != p:
            for i in range(s.hand_len[q]):
                v.unseen[s.hand[q][i]] -= 1
    for c in range(C):
        v.reach[c] = R
        for r in range(s.fireworks[c], R):
            if s.discarded[c * R + r] >= g.counts[c * R + r]:
                v.reach[c] = r
                break
        for r in range(R):
            card = c * R + r
            v.useless[card] = r < s.fireworks[c] or r >= v.reach[c]
            v.critical[card] = (not v.useless[card]) and g.counts[card] - s.discarded[card] == 1
    for i in range(s.hand_len[p]):
        tot = 0.0
        pl = 0.0
        us = 0.0
        cr = 0.0
        er = 0.0
        v.nposs[i] = 0
        v.single[i] = -1
        for c in range(C):
            if s.kcol[p][i] & (1 << c):
                for r in range(R):
                    if s.krank[p][i] & (1 << r):
                        card = c * R + r
                        w = v.unseen[card]
                        if w > 0:
                            v.nposs[i] += 1
                            v.single[i] = card
                            tot += w
                            if s.fireworks[c] == r:
                                pl += w
                            if v.useless[card]:
                                us += w
                            elif v.critical[card]:
                                cr += w
                            er += w * r
        if tot > 0:
            v.pplay[i] = pl / tot
            v.puse[i] = us / tot
            v.pcrit[i] = cr / tot
            v.erank[i] = er / tot
        else:
            v.pplay[i] = 0.0
            v.puse[i] = 0.0
            v.pcrit[i] = 0.0
            v.erank[i] = 0.0

cdef inline int mv_discard(Cfg* g, int i) noexcept nogil:
    return i

cdef inline int mv_play(Cfg* g, int i) noexcept nogil:
    return g.hand_size + i

cdef inline int mv_color(Cfg* g, int off, int c) noexcept nogil:
    return 2 * g.hand_size + (off - 1) * g.colors + c

cdef inline int mv_rank(Cfg* g, int off, int r) noexcept nogil:
    return 2 * g.hand_size + (g.players - 1) * g.colors + (off - 1) * g.ranks + r

cdef inline int tell_missing(Cfg* g, St* s, int t, int off, int i, bint rank_first) noexcept nogil:
    """Hint the attribute of card i of player t that was not positively hinted yet (-1 if both were)."""
    cdef int card = s.hand[t][i]
    if rank_first:
        if s.hrank[t][i] < 0:
            return mv_rank(g, off, card % g.ranks)
        if s.hcol[t][i] < 0:
            return mv_color(g, off, card // g.ranks)
    else:
        if s.hcol[t][i] < 0:
            return mv_color(g, off, card // g.ranks)
        if s.hrank[t][i] < 0:
            return mv_rank(g, off, card % g.ranks)
    return -1

cdef inline bint plausible_all(Cfg* g, St* s, View* v, int p, int i, int what) noexcept nogil:
    """True when every identity allowed by the hints on card i (ignoring counts) is useless (what=0)."""
    cdef int c, r, any_ = 0
    for c in range(g.colors):
        if s.kcol[p][i] & (1 << c):
            for r in range(g.ranks):
                if s.krank[p][i] & (1 << r):
                    any_ = 1
                    if not card_useless(g, s, v, c * g.ranks + r):
                        return False
    return any_ == 1

cdef int random_hint(Cfg* g, St* s, uint64_t* rng) noexcept nogil:
    cdef unsigned char mask[MAXM]
    cdef int m, count = 0, pick
    st_legal_mask(g, s, mask)
    for m in range(2 * g.hand_size, g.num_moves):
        count += mask[m]
    if count == 0:
        return -1
    pick = rand_below(rng, count)
    for m in range(2 * g.hand_size, g.num_moves):
        if mask[m]:
            if pick == 0:
                return m
            pick -= 1
    return -1

cdef int random_legal(Cfg* g, St* s, uint64_t* rng) noexcept nogil:
    cdef unsigned char mask[MAXM]
    cdef int m, count = st_legal_mask(g, s, mask), pick
    if count == 0:
        return -1
    pick = rand_below(rng, count)
    for m in range(g.num_moves):
        if mask[m]:
            if pick == 0:
                return m
            pick -= 1
    return -1

cdef int hint_new_info(Cfg* g, St* s, int t, int is_rank, int x) noexcept nogil:
    """Number of cards of player t whose knowledge a colour/rank hint x would change (0 if illegal)."""
    cdef int i, touched = 0, changed = 0, card
    for i in range(s.hand_len[t]):
        card = s.hand[t][i]
        if is_rank:
            if card % g.ranks == x:
                touched += 1
                if s.hrank[t][i] < 0:
                    changed += 1
            elif s.krank[t][i] & (1 << x):
                changed += 1
        else:
            if card // g.ranks == x:
                touched += 1
                if s.hcol[t][i] < 0:
                    changed += 1
            elif s.kcol[t][i] & (1 << x):
                changed += 1
    if touched == 0:
        return 0
    return changed

# ----------------------------------------------------------------------------- extended rule base
# Finesse, "just hinted", unambiguous-hint and partner-model rules of the MAP-Elites rule base (kinds
# 60+; semantics documented in cfrkit/agents/hanabi/rules.py).  A "partner estimate" is what player p
# can compute of player t's grounded view without peeking at its own hand: the copies t cannot see,
# as far as p knows, are all copies minus discards, fireworks and the hands of players other than p
# and t.
cdef enum:
    R_PLAY_FINESSE = 60
    R_PLAY_FINESSE_TOLD = 61
    R_PLAY_JUST_HINTED = 62
    R_TELL_FINESSE = 63
    R_TELL_UNAMBIGUOUS = 64
    R_TELL_UNAMBIGUOUS_WEIGHTED = 65
    R_TELL_COLLISIONS_WEIGHTED = 66
    R_TELL_AT_LEAST_N_USELESS = 67
    R_TELL_PROBABLE_MISTAKE = 68
    R_TELL_TO_SAVE = 69
    R_TELL_USEFUL_IMPROVED = 70
    R_TELL_NEXT_SINGLE_USEFUL = 71
    R_TRY_TO_UNBLOCK = 72

# PlayJustHinted parameter bits
DEF JH_SINGLED = 1
DEF JH_NEWEST = 2

cdef void partner_unseen(Cfg* g, St* s, int p, int t, int* unseen) noexcept nogil:
    cdef int k, q, i
    for k in range(g.num_cards):
        unseen[k] = g.counts[k] - s.discarded[k]
        if k % g.ranks < s.fireworks[k // g.ranks]:
            unseen[k] -= 1
    for q in range(g.players):
        if q != p and q != t:
            for i in range(s.hand_len[q]):
                unseen[s.hand[q][i]] -= 1

cdef void partner_probs(Cfg* g, St* s, View* v, int t, int* unseen, unsigned char* kc, unsigned char* kr,
                        double* pplay, double* puse) noexcept nogil:
    """P(playable), P(useless) of each card of t given knowledge masks kc/kr, weighted by ``unseen``."""
    cdef int i, c, r, card, w
    cdef double tot, pl, us
    for i in range(s.hand_len[t]):
        tot = 0.0
        pl = 0.0
        us = 0.0
        for c in range(g.colors):
            if kc[i] & (1 << c):
                for r in range(g.ranks):
                    if kr[i] & (1 << r):
                        card = c * g.ranks + r
                        w = unseen[card]
                        if w > 0:
                            tot += w
                            if s.fireworks[c] == r:
                                pl += w
                            if v.useless[card]:
                                us += w
        pplay[i] = pl / tot if tot > 0 else 0.0
        puse[i] = us / tot if tot > 0 else 0.0

cdef void hint_knowledge(Cfg* g, St* s, int t, int is_rank, int x, unsigned char* kc, unsigned char* kr) noexcept nogil:
    """t's knowledge masks after a hypothetical colour/rank hint x (positive and negative information)."""
    cdef int i, card
    for i in range(s.hand_len[t]):
        kc[i] = s.kcol[t][i]
        kr[i] = s.krank[t][i]
        card = s.hand[t][i]
        if is_rank:
            if card % g.ranks == x:
                kr[i] = 1 << x
            elif x >= 0:
                kr[i] &= ~(1 << x)
        else:
            if card // g.ranks == x:
                kc[i] = 1 << x
            elif x >= 0:
                kc[i] &= ~(1 << x)

cdef inline bint hand_has(Cfg* g, St* s, int t, int is_rank, int x) noexcept nogil:
    cdef int i
    for i in range(s.hand_len[t]):
        if (s.hand[t][i] % g.ranks if is_rank else s.hand[t][i] // g.ranks) == x:
            return True
    return False

cdef inline int hint_move(Cfg* g, int off, int is_rank, int x) noexcept nogil:
    return mv_rank(g, off, x) if is_rank else mv_color(g, off, x)

cdef bint hinted_useless(Cfg* g, St* s, View* v, int t, int i) noexcept nogil:
    """Card i of t has a positive hint and every identity its hinted attributes allow is useless."""
    cdef int c, r
    if s.hcol[t][i] < 0 and s.hrank[t][i] < 0:
        return False
    for c in range(g.colors):
        if s.hcol[t][i] >= 0 and c != s.hcol[t][i]:
            continue
        for r in range(g.ranks):
            if s.hrank[t][i] >= 0 and r != s.hrank[t][i]:
                continue
            if not v.useless[c * g.ranks + r]:
                return False
    return True

cdef int unblocking_move(Cfg* g, St* s, View* v, int t) noexcept nogil:
    """A move of t that its hints alone show regains a token (-1 if none): a safe discard or a known last card."""
    cdef int i, c
    for i in range(s.hand_len[t]):
        if hinted_useless(g, s, v, t, i) and s.tokens < g.max_tokens:
            return mv_discard(g, i)
        c = s.hcol[t][i]
        if s.hrank[t][i] == g.ranks - 1 and c >= 0 and s.fireworks[c] == g.ranks - 1:
            return mv_play(g, i)
    return -1

cdef bint is_blocked(Cfg* g, St* s, View* v, int t) noexcept nogil:
    """No token to hint, and t knows of no playable card and no safe discard."""
    cdef int i, c
    if s.tokens > 0:
        return False
    for i in range(s.hand_len[t]):
        if hinted_useless(g, s, v, t, i):
            return False
        c = s.hcol[t][i]
        if c >= 0 and s.hrank[t][i] >= 0 and s.fireworks[c] == s.hrank[t][i]:
            return False
    return True

cdef int fire_extended(Cfg* g, St* s, int p, Rule* rule, View* v, uint64_t* rng) noexcept nogil:
    """The move an extended rule (kind >= 60) proposes for player p, or -1."""
    cdef int n = g.players, R = g.ranks, C = g.colors, L = s.hand_len[p]
    cdef int kind = rule.kind, i, j, off, t, f, card, x, is_rank, m, best, cnt, pc, uc, mask
    cdef int cc[MAXC]
    cdef int rc[MAXR]
    cdef int unseen[MAXK]
    cdef unsigned char kc[MAXH]
    cdef unsigned char kr[MAXH]
    cdef double pp[MAXH]
    cdef double pu[MAXH]
    cdef double bp, score, wp, wu, th = rule.threshold
    cdef bint playable[MAXH]

    if kind == R_PLAY_FINESSE:
        # the previous player hinted a third player a card one above its colour's next playable:
        # it finesses my newest card
        if (s.last_type == MT_COLOR or s.last_type == MT_RANK) and s.last_target != p and L > 0:
            t = s.last_target
            for i in range(s.hand_len[t]):
                card = s.hand[t][i]
                if s.last_mask & (1 << i) and card % R == s.fireworks[card // R] + 1:
                    return mv_play(g, L - 1)
        return -1
    if kind == R_PLAY_FINESSE_TOLD:
        # two moves ago someone singled out one of my cards, and the last move was a play
        if s.last_type == MT_PLAY and (s.prev_type == MT_COLOR or s.prev_type == MT_RANK) and s.prev_target == p:
            mask = s.prev_mask
            if mask and mask & (mask - 1) == 0:
                for i in range(L):
                    if mask == (1 << i):
                        return mv_play(g, i)
        return -1
    if kind == R_PLAY_JUST_HINTED:
        if L == 0:
            return -1
        mask = s.recent_single[p] if rule.param & JH_SINGLED else s.recent[p]
        if rule.param & JH_NEWEST:
            mask &= 1 << (L - 1)
        best = -1
        bp = -1.0
        for i in range(L):
            if mask & (1 << i) and v.pplay[i] >= bp - 1e-12:   # ties: the newer card
                bp = v.pplay[i]
                best = i
        if best < 0:
            return -1
        if bp >= 1.0 - 1e-12 or (bp >= th - 1e-12 and s.lives > (rule.param >> 4)):
            return mv_play(g, best)
        return -1
    if kind == R_TRY_TO_UNBLOCK:
        if s.tokens > 0:
            return -1
        m = unblocking_move(g, s, v, p)
        if m < 0:
            return -1
        for off in range(1, n):
            t = (p + off) % n
            if is_blocked(g, s, v, t):
                return m
            if unblocking_move(g, s, v, t) >= 0:
                return -1
        return -1

    # tell rules
    if s.tokens <= 0:
        return -1
    if kind == R_TELL_FINESSE:
        if n < 3:
            return -1
        t = (p + 1) % n
        f = (p + 2) % n
        if s.hand_len[t] == 0:
            return -1
        card = s.hand[t][s.hand_len[t] - 1]
        if not card_playable(g, s, card):
            return -1
        for x in range(C):
            cc[x] = 0
        for x in range(R):
            rc[x] = 0
        for i in range(s.hand_len[f]):
            cc[s.hand[f][i] // R] += 1
            rc[s.hand[f][i] % R] += 1
        for i in range(s.hand_len[f]):
            x = s.hand[f][i]
            if x // R == card // R and x % R == card % R + 1:
                if cc[x // R] == 1 and rc[x % R] == 1:
                    if s.hrank[f][i] >= 0 and s.hcol[f][i] < 0:
                        return mv_color(g, 2, x // R)
                    if s.hcol[f][i] >= 0 and s.hrank[f][i] < 0:
                        return mv_rank(g, 2, x % R)
                if rc[x % R] == 1:
                    return mv_rank(g, 2, x % R)
                if cc[x // R] == 1:
                    return mv_color(g, 2, x // R)
        return -1
    if kind == R_TELL_TO_SAVE:
        for off in range(1, n):
            t = (p + off) % n
            for i in range(s.hand_len[t]):
                if v.critical[s.hand[t][i]]:
                    m = tell_missing(g, s, t, off, i, True)
                    if m >= 0:
                        return m
        return -1
    if kind == R_TELL_USEFUL_IMPROVED:
        best = -1
        for off in range(1, n):
            t = (p + off) % n
            for i in range(s.hand_len[t]):
                if card_playable(g, s, s.hand[t][i]):
                    m = tell_missing(g, s, t, off, i, True)
                    if m >= 0 and ((s.hcol[t][i] >= 0) != (s.hrank[t][i] >= 0)):
                        return m          # completes what t half knows
                    if best < 0:
                        best = m
        return best
    if kind == R_TELL_NEXT_SINGLE_USEFUL:
        t = (p + 1) % n
        for i in range(s.hand_len[t]):
            card = s.hand[t][i]
            if not card_playable(g, s, card):
                continue
            pc = 0
            uc = 0
            for j in range(s.hand_len[t]):
                pc += s.hand[t][j] % R == card % R
                uc += s.hand[t][j] // R == card // R
            if pc == 1:
                return mv_rank(g, 1, card % R)
            if uc == 1:
                return mv_color(g, 1, card // R)
        return -1

    for off in range(1, n):
        t = (p + off) % n
        cnt = 0
        for i in range(s.hand_len[t]):
            playable[i] = card_playable(g, s, s.hand[t][i])
            cnt += playable[i]
        if kind == R_TELL_UNAMBIGUOUS or kind == R_TELL_COLLISIONS_WEIGHTED:
            # hint an attribute of a playable card the holder does not know yet, judged by the other
            # cards the same hint would newly touch (collisions): TellUnambiguous prefers (param 1) the most
            # playable collisions then the fewest unplayable, or (param 0) the fewest unplayable then the
            # most playable; the weighted form maximises threshold * playable + param * unplayable
            if cnt == 0:
                continue
            best = -1
            bp = -1e9
            wu = 1e9
            for i in range(s.hand_len[t]):
                if not playable[i]:
                    continue
                for j in range(2):
                    # TellUnambiguous looks at the colour first, the weighted form at the rank first
                    is_rank = j if kind == R_TELL_UNAMBIGUOUS else 1 - j
                    if (s.hrank[t][i] if is_rank else s.hcol[t][i]) >= 0:
                        continue
                    x = s.hand[t][i] % R if is_rank else s.hand[t][i] // R
                    pc = 0
                    uc = 0
                    for f in range(s.hand_len[t]):
                        if f == i or (s.hrank[t][f] if is_rank else s.hcol[t][f]) >= 0:
                            continue
                        if (s.hand[t][f] % R if is_rank else s.hand[t][f] // R) == x:
                            if playable[f]:
                                pc += 1
                            else:
                                uc += 1
                    if kind == R_TELL_COLLISIONS_WEIGHTED:
                        score = th * pc + rule.param * uc
                        if score > bp + 1e-12:
                            bp = score
                            best = hint_move(g, off, is_rank, x)
                    elif rule.param:
                        if pc > bp or (pc == bp and uc < wu):
                            bp = pc
                            wu = uc
                            best = hint_move(g, off, is_rank, x)
                    else:
                        if uc < wu or (uc == wu and pc > bp):
                            bp = pc
                            wu = uc
                            best = hint_move(g, off, is_rank, x)
            if best >= 0:
                return best
            continue
        if kind == R_TELL_UNAMBIGUOUS_WEIGHTED:
            # the hint maximising sum over t's cards of weight * P_t(playable) after it
            # (weight: threshold for playable cards, param for the others); ranks first, then colours
            if cnt == 0:
                continue
            partner_unseen(g, s, p, t, unseen)
            best = -1
            bp = -1e18
            for is_rank in range(1, -1, -1):
                for x in range(R if is_rank else C):
                    if not hand_has(g, s, t, is_rank, x):
                        continue
                    hint_knowledge(g, s, t, is_rank, x, kc, kr)
                    partner_probs(g, s, v, t, unseen, kc, kr, pp, pu)
                    score = 0.0
                    for i in range(s.hand_len[t]):
                        score += (th if playable[i] else rule.param) * pp[i]
                    if score > bp + 1e-12:
                        bp = score
                        best = hint_move(g, off, is_rank, x)
            return best
        if kind == R_TELL_AT_LEAST_N_USELESS:
            # t holds a useless card and knows of none: the hint after which t knows the most cards are
            # useless (P_t(useless) > 0.99), if at least ``param`` cards
            uc = 0
            for i in range(s.hand_len[t]):
                uc += v.useless[s.hand[t][i]]
            if uc == 0:
                continue
            partner_unseen(g, s, p, t, unseen)
            hint_knowledge(g, s, t, 0, -1, kc, kr)
            partner_probs(g, s, v, t, unseen, kc, kr, pp, pu)
            cnt = 0
            for i in range(s.hand_len[t]):
                cnt += pu[i] > 0.99
            if cnt:
                continue
            best = -1
            bp = rule.param - 1
            for is_rank in range(1, -1, -1):
                for x in range(R if is_rank else C):
                    if not hand_has(g, s, t, is_rank, x):
                        continue
                    hint_knowledge(g, s, t, is_rank, x, kc, kr)
                    partner_probs(g, s, v, t, unseen, kc, kr, pp, pu)
                    cnt = 0
                    for i in range(s.hand_len[t]):
                        cnt += pu[i] > 0.99
                    if cnt > bp:
                        bp = cnt
                        best = hint_move(g, off, is_rank, x)
            if best >= 0:
                return best
            continue
        if kind == R_TELL_PROBABLE_MISTAKE:
            # param 1: an unplayable card t believes playable with P_t >= threshold (the most likely);
            # param 0: a playable card t believes playable with P_t <= threshold (the least likely);
            # tell its rank, else its colour
            partner_unseen(g, s, p, t, unseen)
            hint_knowledge(g, s, t, 0, -1, kc, kr)
            partner_probs(g, s, v, t, unseen, kc, kr, pp, pu)
            best = -1
            bp = th
            for i in range(s.hand_len[t]):
                if rule.param and not playable[i] and pp[i] >= bp - 1e-12:
                    if tell_missing(g, s, t, off, i, True) >= 0:
                        bp = pp[i]
                        best = i
                if not rule.param and playable[i] and pp[i] <= bp + 1e-12:
                    if tell_missing(g, s, t, off, i, True) >= 0:
                        bp = pp[i]
                        best = i
            if best >= 0:
                return tell_missing(g, s, t, off, best, True)
            continue
    return -1


cdef int fire_rule(Cfg* g, St* s, int p, Rule* rule, View* v, uint64_t* rng) noexcept nogil:
    """The move rule ``rule`` proposes for player p, or -1 when it does not fire."""
    cdef int n = g.players, H = g.hand_size, R = g.ranks, C = g.colors
    cdef int kind = rule.kind, i, j, off, t, card, best, m, x, score, best_score, cnt
    cdef double bp, th = rule.threshold
    cdef bint can_hint = s.tokens > 0
    cdef bint can_discard = s.tokens < g.max_tokens
    cdef int L = s.hand_len[p]
    # conditions
    if rule.cond == COND_LIVES_GT1 and not s.lives > 1:
        return -1
    if rule.cond == COND_TOKENS_LT4 and not s.tokens < 4:
        return -1
    if rule.cond == COND_HAIL_MARY and not (s.deck_left == 0 and s.lives > 1):
        return -1
    if rule.cond == COND_DECK_NONEMPTY and not s.deck_left > 0:
        return -1
    if kind >= R_PLAY_FINESSE:
        return fire_extended(g, s, p, rule, v, rng)

    if kind == R_PLAY_SAFE:
        for i in range(L):
            if v.nposs[i] > 0 and v.pplay[i] >= 1.0 - 1e-12:
                return mv_play(g, i)
        return -1
    if kind == R_PLAY_CERTAIN:
        for i in range(L):
            if s.hcol[p][i] >= 0 and s.hrank[p][i] >= 0 and s.fireworks[s.hcol[p][i]] == s.hrank[p][i]:
                return mv_play(g, i)
        return -1
    if kind == R_PLAY_PROBABLY_SAFE:
        best = -1
        bp = -1.0
        for i in range(L):
            if v.nposs[i] > 0 and v.pplay[i] > bp + 1e-12:
                bp = v.pplay[i]
                best = i
        if best >= 0 and bp >= th - 1e-12:
            return mv_play(g, best)
        return -1
    if kind == R_PLAY_UNIQUE_POSSIBLE:
        for i in range(L):
            if v.nposs[i] == 1 and card_playable(g, s, v.single[i]):
                return mv_play(g, i)
        return -1
    if kind == R_PLAY_HINTED_BLINDLY:
        if (s.last_type == MT_COLOR or s.last_type == MT_RANK) and s.last_target == p:
            for i in range(L - 1, -1, -1):
                if s.last_mask & (1 << i):
                    return mv_play(g, i)
        return -1
    if kind == R_PLAY_OLDEST_HINTED:
        for i in range(L):
            if s.hcol[p][i] >= 0 or s.hrank[p][i] >= 0:
                return mv_play(g, i)
        return -1
    if kind == R_PLAY_HINTED:
        # the last move was a hint to p: play the newest touched card that may be playable
        if (s.last_type == MT_COLOR or s.last_type == MT_RANK) and s.last_target == p:
            for i in range(L - 1, -1, -1):
                if s.last_mask & (1 << i) and v.pplay[i] > 0.0:
                    return mv_play(g, i)
        return -1

    if R_TELL_USEFUL <= kind <= R_TELL_PLAYABLE_ANY:
        if not can_hint:
            return -1
        if kind == R_TELL_RANDOMLY:
            return random_hint(g, s, rng)
        if kind == R_TELL_OLDEST_USEFUL:
            for i in range(H):
                for off in range(1, n):
                    t = (p + off) % n
                    if i < s.hand_len[t] and card_playable(g, s, s.hand[t][i]):
                        m = tell_missing(g, s, t, off, i, True)
                        if m >= 0:
                            return m
            return -1
        if kind == R_TELL_MOST_INFORMATION:
            best = -1
            best_score = 0
            for off in range(1, n):
                t = (p + off) % n
                for x in range(C):
                    score = hint_new_info(g, s, t, 0, x)
                    if score > best_score:
                        best_score = score
                        best = mv_color(g, off, x)
                for x in range(R):
                    score = hint_new_info(g, s, t, 1, x)
                    if score > best_score:
                        best_score = score
                        best = mv_rank(g, off, x)
            return best
        if kind == R_TELL_ILL_INFORMED:
            best = -1
            best_score = 0
            for off in range(1, n):
                t = (p + off) % n
                cnt = 0
                for i in range(s.hand_len[t]):
                    if s.hcol[t][i] < 0 and s.hrank[t][i] < 0:
                        cnt += 1
                if cnt > best_score:
                    best_score = cnt
                    best = off
            if best < 0:
                return -1
            off = best
            t = (p + off) % n
            best = -1
            best_score = 0
            for x in range(C):
                score = hint_new_info(g, s, t, 0, x)
                if score > best_score:
                    best_score = score
                    best = mv_color(g, off, x)
            for x in range(R):
                score = hint_new_info(g, s, t, 1, x)
                if score > best_score:
                    best_score = score
                    best = mv_rank(g, off, x)
            return best
        for off in range(1, n):
            # Osawa's rules only ever hint the next player
            if off > 1 and (kind == R_TELL_UNKNOWN or kind == R_TELL_PLAYABLE or kind == R_TELL_PLAYABLE_ANY):
                break
            t = (p + off) % n
            for i in range(s.hand_len[t]):
                card = s.hand[t][i]
                if kind == R_TELL_USEFUL:
                    if card_playable(g, s, card):
                        m = tell_missing(g, s, t, off, i, True)
                        if m >= 0:
                            return m
                elif kind == R_TELL_PLAYABLE_ANY:
                    if card_playable(g, s, card):
                        if rand_below(rng, 2) == 0:
                            return mv_color(g, off, card // R)
                        return mv_rank(g, off, card % R)
                elif kind == R_TELL_PLAYABLE:
                    if card_playable(g, s, card):
                        m = tell_missing(g, s, t, off, i, False)
                        if m >= 0:
                            return m
                elif kind == R_COMPLETE_TELL_USEFUL:
                    if card_playable(g, s, card) and ((s.hcol[t][i] >= 0) != (s.hrank[t][i] >= 0)):
                        return tell_missing(g, s, t, off, i, True)
                elif kind == R_TELL_USELESS:
                    if card_useless(g, s, v, card):
                        m = tell_missing(g, s, t, off, i, False)
                        if m >= 0:
                            return m
                elif kind == R_TELL_DISPENSABLE:
                    if card_useless(g, s, v, card) and not plausible_all(g, s, v, t, i, 0):
                        # the attribute that alone shows the card is useless
                        x = card // R
                        if s.fireworks[x] == R or v.reach[x] <= s.fireworks[x]:
                            if s.hcol[t][i] < 0:
                                return mv_color(g, off, x)
                        x = card % R
                        cnt = 1
                        for j in range(C):
                            if not (x < s.fireworks[j] or x >= v.reach[j]):
                                cnt = 0
                        if cnt and s.hrank[t][i] < 0:
                            return mv_rank(g, off, x)
                elif kind == R_TELL_FIVES:
                    if card % R == R - 1 and s.hrank[t][i] < 0:
                        return mv_rank(g, off, R - 1)
                elif kind == R_TELL_ONES:
                    if card % R == 0 and s.hrank[t][i] < 0 and card_playable(g, s, card):
                        return mv_rank(g, off, 0)
                elif kind == R_TELL_UNKNOWN:
                    m = tell_missing(g, s, t, off, i, False)
                    if m >= 0:
                        return m
                elif kind == R_TELL_CRITICAL:
                    if card_critical(g, s, v, card) and s.hrank[t][i] < 0 and s.hcol[t][i] < 0:
                        return mv_rank(g, off, card % R)
        return -1

    if R_DISCARD_OLDEST <= kind <= R_OSAWA_DISCARD:
        if not can_discard or L == 0:
            return -1
        if kind == R_DISCARD_OLDEST:
            return mv_discard(g, 0)
        if kind == R_DISCARD_RANDOMLY:
            return mv_discard(g, rand_below(rng, L))
        if kind == R_DISCARD_OLDEST_NO_INFO:
            for i in range(L):
                if s.hcol[p][i] < 0 and s.hrank[p][i] < 0:
                    return mv_discard(g, i)
            return -1
        if kind == R_DISCARD_SAFE:
            for i in range(L):
                if v.nposs[i] > 0 and v.puse[i] >= 1.0 - 1e-12:
                    return mv_discard(g, i)
            return -1
        if kind == R_DISCARD_USELESS:
            for i in range(L):
                if plausible_all(g, s, v, p, i, 0):
                    return mv_discard(g, i)
            return -1
        if kind == R_DISCARD_IF_CERTAIN:
            for i in range(L):
                if s.hcol[p][i] >= 0 and s.hrank[p][i] >= 0 and card_useless(g, s, v, s.hcol[p][i] * R + s.hrank[p][i]):
                    return mv_discard(g, i)
            return -1
        if kind == R_OSAWA_DISCARD:
            # useless judged from the positively hinted attributes only
            for i in range(L):
                cnt = 1
                for x in range(C):
                    if s.hcol[p][i] >= 0 and x != s.hcol[p][i]:
                        continue
                    for j in range(R):
                        if s.hrank[p][i] >= 0 and j != s.hrank[p][i]:
                            continue
                        if not card_useless(g, s, v, x * R + j):
                            cnt = 0
                if cnt and (s.hcol[p][i] >= 0 or s.hrank[p][i] >= 0):
                    return mv_discard(g, i)
            return -1
        if kind == R_DISCARD_PROBABLY_USELESS:
            best = -1
            bp = -1.0
            for i in range(L):
                if v.nposs[i] > 0 and v.puse[i] > bp + 1e-12:
                    bp = v.puse[i]
                    best = i
            if best >= 0 and bp >= th - 1e-12:
                return mv_discard(g, best)
            return -1
        if kind == R_DISCARD_LEAST_LIKELY_NECESSARY:
            best = 0
            bp = 2.0
            for i in range(L):
                if v.pcrit[i] < bp - 1e-12:
                    bp = v.pcrit[i]
                    best = i
            return mv_discard(g, best)
        if kind == R_DISCARD_HIGHEST:
            best = 0
            bp = -1.0
            for i in range(L):
                if v.erank[i] > bp + 1e-12:
                    bp = v.erank[i]
                    best = i
            return mv_discard(g, best)
        return -1
    if kind == R_LEGAL_RANDOM:
        return random_legal(g, s, rng)
    return -1

cdef int agent_act(Cfg* g, St* s, int* rules, int n_rules, Rule* table, uint64_t* rng,
                   SeatStats* stats, int* fired) noexcept nogil:
    """First rule of the chromosome that fires; LegalRandom if none does.  Updates ``stats``."""
    cdef View v
    cdef int p = s.cur, j, m = -1
    compute_view(g, s, p, &v)
    fired[0] = -1
    for j in range(n_rules):
        m = fire_rule(g, s, p, &table[rules[j]], &v, rng)
        if m >= 0:
            fired[0] = j
            break
    if m < 0:
        m = random_legal(g, s, rng)
    if stats != NULL:
        stats.turns += 1
        if s.tokens > 0:
            stats.hint_turns += 1
        if m >= 2 * g.hand_size:
            stats.hints += 1
        elif m >= g.hand_size:
            stats.plays += 1
            stats.risk_sum += v.pplay[m - g.hand_size]
    return m
