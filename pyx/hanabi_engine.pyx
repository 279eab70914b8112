# cython: language_level=3
"""Hanabi engine kernel: HLE rules, canonical encodings, batched stepping and rule agents in C.

Everything hot runs on plain C structs without the GIL:

* ``Cfg``  -- game parameters and derived sizes (move counts, encoding section lengths).
* ``St``   -- one game state: hands, card knowledge from hints (positive and negative), deck counts,
  fireworks, tokens, lives, the last move (for the encoding) and the end-game counter.
* ``Rule`` -- one production rule of the Walton-Rivers / MAP-Elites rule base (kind, threshold,
  condition).  An agent is an array of rule indices into a rule table; the first rule that fires
  gives the move, LegalRandom is the fallback.

Python sees small classes: :class:`EngineConfig`, :class:`EngineState` (one game, chance handled
either explicitly by :meth:`EngineState.deal` or by the seeded sampler), :class:`BatchEngine`
(many games stepped at once) and the module functions :func:`play_games` / :func:`agent_action`.
The Python packages ``cfrkit.games.hanabi`` and ``cfrkit.agents.hanabi`` wrap these.

Move ids follow HLE: discards ``0..H-1``, plays ``H..2H-1``, colour hints ``2H + (offset-1)*C + c``,
rank hints after all colour hints.  Card ids are ``colour * ranks + rank`` (0-based).
"""
from libc.string cimport memset, memcpy
from libc.stdlib cimport malloc, free
from libc.stdint cimport uint64_t
cimport numpy as cnp
import numpy as np

cnp.import_array()

DEF MAXP = 5
DEF MAXC = 5
DEF MAXR = 5
DEF MAXH = 5
DEF MAXK = 25
DEF MAXM = 50

cdef enum:
    CHANCE = -1
    TERMINAL = -4

# last move types, in the order of the encoding's move-type bits
cdef enum:
    MT_PLAY = 0
    MT_DISCARD = 1
    MT_COLOR = 2
    MT_RANK = 3

# observation types (HLE numbering)
cdef enum:
    OBS_MINIMAL = 0
    OBS_KNOWLEDGE = 1
    OBS_SEER = 2

ctypedef struct Cfg:
    int players, colors, ranks, hand_size, max_tokens, max_lives, obs_type, score_played
    int num_cards, deck_size, num_moves
    int counts[MAXK]
    int len_hands, len_board, len_discards, len_last, len_know, enc_len
    int random_start        # HLE's random_start_player: the first player is drawn at reset

ctypedef struct St:
    signed char hand[MAXP][MAXH]
    unsigned char kcol[MAXP][MAXH]
    unsigned char krank[MAXP][MAXH]
    signed char hcol[MAXP][MAXH]
    signed char hrank[MAXP][MAXH]
    signed char hand_len[MAXP]
    signed char remaining[MAXK]
    signed char discarded[MAXK]
    signed char fireworks[MAXC]
    int deck_left, tokens, lives
    int cur, next_player, turns_to_play, moves
    int last_type, last_player, last_target, last_color, last_rank, last_mask
    int last_pos, last_card, last_scored, last_token
    int num_discarded
    signed char discard_pile[64]    # discarded and misplayed cards in order
    uint64_t rng
    # history the convention rules read (not part of HLE's observation encoding)
    int prev_type, prev_target, prev_mask   # the move before the last one (hints only: target, mask)
    unsigned char recent[MAXP]          # slots of each player touched by hints since its last move
    unsigned char recent_single[MAXP]   # ... by a hint that touched exactly one card


# ----------------------------------------------------------------------------- random numbers
cdef inline uint64_t splitmix(uint64_t* x) noexcept nogil:
    x[0] += <uint64_t>0x9E3779B97F4A7C15ULL
    cdef uint64_t z = x[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)

cdef inline int rand_below(uint64_t* x, int n) noexcept nogil:
    return <int>((splitmix(x) >> 11) % <uint64_t>n)

cdef inline double rand_unit(uint64_t* x) noexcept nogil:
    return (splitmix(x) >> 11) * (1.0 / 9007199254740992.0)

cdef inline uint64_t mix_seed(uint64_t seed, uint64_t index) noexcept nogil:
    cdef uint64_t x = seed * <uint64_t>0xD1B54A32D192ED03ULL + index
    splitmix(&x)
    return splitmix(&x)


# ----------------------------------------------------------------------------- configuration
cdef int cfg_setup(Cfg* g, int players, int colors, int ranks, int hand_size, int max_tokens,
                   int max_lives, int obs_type, int score_played) noexcept nogil:
    cdef int c, r, k, B
    g.players = players
    g.colors = colors
    g.ranks = ranks
    g.hand_size = hand_size
    g.max_tokens = max_tokens
    g.max_lives = max_lives
    g.obs_type = obs_type
    g.score_played = score_played
    g.num_cards = colors * ranks
    g.deck_size = 0
    for c in range(colors):
        for r in range(ranks):
            k = c * ranks + r
            if r == 0:
                g.counts[k] = 3
            elif r == ranks - 1:
                g.counts[k] = 1
            else:
                g.counts[k] = 2
            g.deck_size += g.counts[k]
    g.num_moves = 2 * hand_size + (players - 1) * (colors + ranks)
    B = g.num_cards
    g.len_hands = (players - 1) * hand_size * B + players
    g.len_board = g.deck_size - players * hand_size + B + max_tokens + max_lives
    g.len_discards = g.deck_size
    g.len_last = players + 4 + players + colors + ranks + hand_size + hand_size + B + 2
    g.len_know = 0 if obs_type == OBS_MINIMAL else players * hand_size * (B + colors + ranks)
    g.enc_len = g.len_hands + g.len_board + g.len_discards + g.len_last + g.len_know
    return 0


# ----------------------------------------------------------------------------- state basics
cdef inline int fireworks_total(Cfg* g, St* s) noexcept nogil:
    cdef int c, t = 0
    for c in range(g.colors):
        t += s.fireworks[c]
    return t

cdef inline bint st_terminal(Cfg* g, St* s) noexcept nogil:
    return s.lives < 1 or s.turns_to_play <= 0 or fireworks_total(g, s) == g.num_cards

cdef inline int st_score(Cfg* g, St* s) noexcept nogil:
    if s.lives < 1 and not g.score_played:
        return 0
    return fireworks_total(g, s)

cdef inline int st_player_to_deal(Cfg* g, St* s) noexcept nogil:
    cdef int p
    if s.deck_left <= 0:
        return -1
    for p in range(g.players):
        if s.hand_len[p] < g.hand_size:
            return p
    return -1

cdef inline void st_advance(Cfg* g, St* s) noexcept nogil:
    if st_player_to_deal(g, s) >= 0:
        s.cur = CHANCE
    else:
        s.cur = s.next_player
        s.next_player = (s.cur + 1) % g.players

cdef void st_reset(Cfg* g, St* s, uint64_t seed) noexcept nogil:
    cdef int k
    memset(s, 0, sizeof(St))
    for k in range(g.num_cards):
        s.remaining[k] = g.counts[k]
    s.deck_left = g.deck_size
    s.tokens = g.max_tokens
    s.lives = g.max_lives
    s.turns_to_play = g.players
    s.next_player = 0
    s.cur = CHANCE
    s.last_type = -1
    s.prev_type = -1
    s.rng = seed
    if g.random_start:
        # HLE deals the hands in seat order and draws the first player uniformly from its rng
        s.next_player = rand_below(&s.rng, g.players)

cdef inline int st_current(Cfg* g, St* s) noexcept nogil:
    if st_terminal(g, s):
        return TERMINAL
    return s.cur

cdef void st_deal(Cfg* g, St* s, int card) noexcept nogil:
    """Deal ``card`` (which must remain in the deck) to the player who is short of cards."""
    cdef int p = st_player_to_deal(g, s)
    cdef int i = s.hand_len[p]
    s.hand[p][i] = card
    if g.obs_type == OBS_SEER:
        s.kcol[p][i] = 1 << (card // g.ranks)
        s.krank[p][i] = 1 << (card % g.ranks)
        s.hcol[p][i] = card // g.ranks
        s.hrank[p][i] = card % g.ranks
    else:
        s.kcol[p][i] = (1 << g.colors) - 1
        s.krank[p][i] = (1 << g.ranks) - 1
        s.hcol[p][i] = -1
        s.hrank[p][i] = -1
    s.hand_len[p] = i + 1
    s.remaining[card] -= 1
    s.deck_left -= 1
    st_advance(g, s)

cdef int st_sample_card(Cfg* g, St* s) noexcept nogil:
    cdef int x = rand_below(&s.rng, s.deck_left)
    cdef int k
    for k in range(g.num_cards):
        x -= s.remaining[k]
        if x < 0:
            return k
    return g.num_cards - 1

cdef inline void st_auto_deal(Cfg* g, St* s) noexcept nogil:
    while s.cur == CHANCE and not st_terminal(g, s):
        st_deal(g, s, st_sample_card(g, s))

cdef inline void remove_slot(Cfg* g, St* s, int p, int i) noexcept nogil:
    cdef int j
    for j in range(i, s.hand_len[p] - 1):
        s.hand[p][j] = s.hand[p][j + 1]
        s.kcol[p][j] = s.kcol[p][j + 1]
        s.krank[p][j] = s.krank[p][j + 1]
        s.hcol[p][j] = s.hcol[p][j + 1]
        s.hrank[p][j] = s.hrank[p][j + 1]
    s.hand_len[p] -= 1

cdef bint st_move_legal(Cfg* g, St* s, int m) noexcept nogil:
    cdef int H = g.hand_size, n = g.players, C = g.colors, R = g.ranks
    cdef int p = s.cur, off, t, x, i
    if p < 0 or st_terminal(g, s) or m < 0 or m >= g.num_moves:
        return False
    if m < H:
        return s.tokens < g.max_tokens and m < s.hand_len[p]
    if m < 2 * H:
        return m - H < s.hand_len[p]
    if s.tokens <= 0:
        return False
    m -= 2 * H
    if m < (n - 1) * C:
        off = m // C + 1
        x = m % C
        t = (p + off) % n
        for i in range(s.hand_len[t]):
            if s.hand[t][i] // R == x:
                return True
        return False
    m -= (n - 1) * C
    off = m // R + 1
    x = m % R
    t = (p + off) % n
    for i in range(s.hand_len[t]):
        if s.hand[t][i] % R == x:
            return True
    return False

cdef int st_legal_mask(Cfg* g, St* s, unsigned char* mask) noexcept nogil:
    """Legal-move mask of the player to act (all zero at chance or terminal nodes); returns the count."""
    cdef int H = g.hand_size, n = g.players, C = g.colors, R = g.ranks
    cdef int p = s.cur, i, off, t, x, base, count = 0
    cdef unsigned int cols, ranks
    memset(mask, 0, g.num_moves)
    if p < 0 or st_terminal(g, s):
        return 0
    if s.tokens < g.max_tokens:
        for i in range(s.hand_len[p]):
            mask[i] = 1
        count += s.hand_len[p]
    for i in range(s.hand_len[p]):
        mask[H + i] = 1
    count += s.hand_len[p]
    if s.tokens > 0:
        for off in range(1, n):
            t = (p + off) % n
            cols = 0
            ranks = 0
            for i in range(s.hand_len[t]):
                cols |= 1u << (s.hand[t][i] // R)
                ranks |= 1u << (s.hand[t][i] % R)
            base = 2 * H + (off - 1) * C
            for x in range(C):
                if cols & (1u << x):
                    mask[base + x] = 1
                    count += 1
            base = 2 * H + (n - 1) * C + (off - 1) * R
            for x in range(R):
                if ranks & (1u << x):
                    mask[base + x] = 1
                    count += 1
    return count

cdef void st_apply(Cfg* g, St* s, int m) noexcept nogil:
    """Apply a legal move id of the player to act (no validation here)."""
    cdef int H = g.hand_size, n = g.players, C = g.colors, R = g.ranks
    cdef int p = s.cur, i, card, c, r, t, mask, x
    if s.deck_left == 0:
        s.turns_to_play -= 1
    s.prev_type = s.last_type
    s.prev_target = s.last_target
    s.prev_mask = s.last_mask
    s.recent[p] = 0
    s.recent_single[p] = 0
    s.last_player = p
    s.last_scored = 0
    s.last_token = 0
    s.last_mask = 0
    s.moves += 1
    if m < 2 * H:
        i = m if m < H else m - H
        card = s.hand[p][i]
        s.last_pos = i
        s.last_card = card
        if m < H:
            s.last_type = MT_DISCARD
            if s.tokens < g.max_tokens:
                s.tokens += 1
                s.last_token = 1
            s.discarded[card] += 1
            s.discard_pile[s.num_discarded] = card
            s.num_discarded += 1
        else:
            s.last_type = MT_PLAY
            c = card // R
            r = card % R
            if s.fireworks[c] == r:
                s.fireworks[c] += 1
                s.last_scored = 1
                if s.fireworks[c] == R and s.tokens < g.max_tokens:
                    s.tokens += 1
                    s.last_token = 1
            else:
                s.lives -= 1
                s.discarded[card] += 1
                s.discard_pile[s.num_discarded] = card
                s.num_discarded += 1
        remove_slot(g, s, p, i)
    else:
        s.tokens -= 1
        x = m - 2 * H
        mask = 0
        if x < (n - 1) * C:
            t = (p + x // C + 1) % n
            c = x % C
            s.last_type = MT_COLOR
            s.last_color = c
            for i in range(s.hand_len[t]):
                if s.hand[t][i] // R == c:
                    mask |= 1 << i
                    s.kcol[t][i] = 1 << c
                    s.hcol[t][i] = c
                else:
                    s.kcol[t][i] &= ~(1 << c)
        else:
            x -= (n - 1) * C
            t = (p + x // R + 1) % n
            r = x % R
            s.last_type = MT_RANK
            s.last_rank = r
            for i in range(s.hand_len[t]):
                if s.hand[t][i] % R == r:
                    mask |= 1 << i
                    s.krank[t][i] = 1 << r
                    s.hrank[t][i] = r
                else:
                    s.krank[t][i] &= ~(1 << r)
        s.last_target = t
        s.last_mask = mask
        s.recent[t] |= mask
        if mask & (mask - 1) == 0:
            s.recent_single[t] |= mask
    s.next_player = (p + 1) % n
    st_advance(g, s)


# ----------------------------------------------------------------------------- canonical encoding
cdef void st_encode(Cfg* g, St* s, int obs, unsigned char* out) noexcept nogil:
    """HLE's canonical observation of player ``obs`` into ``out[0:g.enc_len]``."""
    cdef int n = g.players, H = g.hand_size, C = g.colors, R = g.ranks, B = g.num_cards
    cdef int off = 0, rel, p, i, c, r, k, L
    memset(out, 0, g.enc_len)
    # hands of the other players, then one "missing card" bit per player
    for rel in range(1, n):
        p = (obs + rel) % n
        for i in range(s.hand_len[p]):
            out[off + s.hand[p][i]] = 1
            off += B
        off += (H - s.hand_len[p]) * B
    for rel in range(n):
        p = (obs + rel) % n
        if s.hand_len[p] < H:
            out[off + rel] = 1
    off += n
    # board: deck thermometer, fireworks one-hot per colour, token and life thermometers
    for i in range(min(s.deck_left, g.deck_size - n * H)):  # hand-built states may hold short hands
        out[off + i] = 1
    off += g.deck_size - n * H
    for c in range(C):
        if s.fireworks[c] > 0:
            out[off + s.fireworks[c] - 1] = 1
        off += R
    for i in range(min(s.tokens, g.max_tokens)):  # the thermometer has max_tokens cells
        out[off + i] = 1
    off += g.max_tokens
    for i in range(s.lives):
        out[off + i] = 1
    off += g.max_lives
    # discards: thermometer per card type
    for k in range(B):
        for i in range(s.discarded[k]):
            out[off + i] = 1
        off += g.counts[k]
    # last action
    if s.last_type < 0:
        off += g.len_last
    else:
        out[off + (s.last_player - obs + n) % n] = 1
        off += n
        out[off + s.last_type] = 1
        off += 4
        if s.last_type == MT_COLOR or s.last_type == MT_RANK:
            out[off + (s.last_target - obs + n) % n] = 1
        off += n
        if s.last_type == MT_COLOR:
            out[off + s.last_color] = 1
        off += C
        if s.last_type == MT_RANK:
            out[off + s.last_rank] = 1
        off += R
        if s.last_type == MT_COLOR or s.last_type == MT_RANK:
            for i in range(H):
                if s.last_mask & (1 << i):
                    out[off + i] = 1
        off += H
        if s.last_type == MT_PLAY or s.last_type == MT_DISCARD:
            out[off + s.last_pos] = 1
        off += H
        if s.last_type == MT_PLAY or s.last_type == MT_DISCARD:
            out[off + s.last_card] = 1
        off += B
        if s.last_type == MT_PLAY:
            if s.last_scored:
                out[off] = 1
            if s.last_token:
                out[off + 1] = 1
        off += 2
    # card knowledge of every player's cards, the observer's first
    if g.obs_type != OBS_MINIMAL:
        for rel in range(n):
            p = (obs + rel) % n
            for i in range(s.hand_len[p]):
                for c in range(C):
                    if s.kcol[p][i] & (1 << c):
                        for r in range(R):
                            if s.krank[p][i] & (1 << r):
                                out[off + c * R + r] = 1
                off += B
                if s.hcol[p][i] >= 0:
                    out[off + s.hcol[p][i]] = 1
                off += C
                if s.hrank[p][i] >= 0:
                    out[off + s.hrank[p][i]] = 1
                off += R
            off += (H - s.hand_len[p]) * (B + C + R)


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


# ============================================================================= Python layer
OBS_TYPES = {"minimal": 0, "card_knowledge": 1, "seer": 2}


cdef class EngineConfig:
    """Validated Hanabi parameters with the derived sizes (move count, encoding sections)."""
    cdef Cfg cfg

    def __init__(self, int players=2, int colors=5, int ranks=5, int hand_size=0,
                 int max_information_tokens=8, int max_life_tokens=3, observation_type=1,
                 bint played_cards_scoring=False, bint random_start_player=False):
        if isinstance(observation_type, str):
            if observation_type not in OBS_TYPES:
                raise ValueError(f"observation_type must be one of {sorted(OBS_TYPES)}, got {observation_type!r}")
            observation_type = OBS_TYPES[observation_type]
        if not 2 <= players <= MAXP:
            raise ValueError(f"players must be in [2, 5], got {players}")
        if not 1 <= colors <= MAXC:
            raise ValueError(f"colors must be in [1, 5], got {colors}")
        if not 1 <= ranks <= MAXR:
            raise ValueError(f"ranks must be in [1, 5], got {ranks}")
        if hand_size == 0:
            hand_size = 5 if players <= 3 else 4
        if not 1 <= hand_size <= MAXH:
            raise ValueError(f"hand_size must be in [1, 5], got {hand_size}")
        if not 0 <= max_information_tokens <= 64:
            raise ValueError(f"max_information_tokens must be in [0, 64], got {max_information_tokens}")
        if not 1 <= max_life_tokens <= 64:
            raise ValueError(f"max_life_tokens must be in [1, 64], got {max_life_tokens}")
        if observation_type not in (0, 1, 2):
            raise ValueError(f"observation_type must be 0 (minimal), 1 (card knowledge) or 2 (seer), got {observation_type}")
        cfg_setup(&self.cfg, players, colors, ranks, hand_size, max_information_tokens, max_life_tokens,
                  observation_type, played_cards_scoring)
        self.cfg.random_start = random_start_player
        if players * hand_size > self.cfg.deck_size:
            raise ValueError(f"{players} hands of {hand_size} cards need {players * hand_size} cards but the deck "
                             f"of {colors} colours x {ranks} ranks has only {self.cfg.deck_size}")

    property players:
        def __get__(self): return self.cfg.players
    property colors:
        def __get__(self): return self.cfg.colors
    property ranks:
        def __get__(self): return self.cfg.ranks
    property hand_size:
        def __get__(self): return self.cfg.hand_size
    property max_information_tokens:
        def __get__(self): return self.cfg.max_tokens
    property max_life_tokens:
        def __get__(self): return self.cfg.max_lives
    property observation_type:
        def __get__(self): return self.cfg.obs_type
    property played_cards_scoring:
        def __get__(self): return bool(self.cfg.score_played)
    property random_start_player:
        def __get__(self): return bool(self.cfg.random_start)
    property num_cards:
        def __get__(self): return self.cfg.num_cards
    property deck_size:
        def __get__(self): return self.cfg.deck_size
    property num_moves:
        def __get__(self): return self.cfg.num_moves
    property encoding_length:
        def __get__(self): return self.cfg.enc_len

    def card_count(self, int card):
        """Copies of card id ``card`` in the deck."""
        if not 0 <= card < self.cfg.num_cards:
            raise ValueError(f"card id {card} outside [0, {self.cfg.num_cards})")
        return self.cfg.counts[card]

    def section_lengths(self):
        """Lengths of the canonical encoding's sections, in order."""
        return {"hands": self.cfg.len_hands, "board": self.cfg.len_board, "discards": self.cfg.len_discards,
                "last_action": self.cfg.len_last, "card_knowledge": self.cfg.len_know}


cdef class EngineState:
    """One Hanabi game.  Chance is explicit: at a chance node call :meth:`deal` or :meth:`deal_random`."""
    cdef Cfg cfg
    cdef St st
    cdef readonly EngineConfig config

    def __init__(self, EngineConfig config not None, uint64_t seed=0):
        self.config = config
        self.cfg = config.cfg
        st_reset(&self.cfg, &self.st, mix_seed(seed, 0))

    def clone(self):
        cdef EngineState new = EngineState.__new__(EngineState)
        new.config = self.config
        new.cfg = self.cfg
        new.st = self.st
        return new

    def set_start_player(self, int player):
        """Make ``player`` the first to act (before any move; e.g. to mirror HLE's random start)."""
        if not 0 <= player < self.cfg.players:
            raise ValueError(f"player {player} outside [0, {self.cfg.players})")
        if self.st.moves > 0:
            raise ValueError("set_start_player() after the first move")
        self.st.next_player = player
        if self.st.cur >= 0:
            self.st.cur = player
            self.st.next_player = (player + 1) % self.cfg.players

    def reseed(self, uint64_t seed):
        """Set the seed of the chance sampler used by :meth:`deal_random`."""
        self.st.rng = mix_seed(seed, 0)

    # -- chance
    def current_player(self):
        """Player to act, -1 at a chance node, -4 at a terminal state."""
        return st_current(&self.cfg, &self.st)

    def is_terminal(self):
        return st_terminal(&self.cfg, &self.st)

    def player_to_deal(self):
        return st_player_to_deal(&self.cfg, &self.st)

    def chance_outcomes(self):
        """``[(card_id, probability)]`` for the next card dealt."""
        cdef int k
        return [(k, self.st.remaining[k] / <double>self.st.deck_left) for k in range(self.cfg.num_cards)
                if self.st.remaining[k] > 0]

    def deal(self, int card):
        if st_current(&self.cfg, &self.st) != CHANCE:
            raise ValueError("deal() called when no card is to be dealt")
        if not 0 <= card < self.cfg.num_cards or self.st.remaining[card] <= 0:
            raise ValueError(f"card {card} is not left in the deck")
        st_deal(&self.cfg, &self.st, card)

    def deal_random(self):
        """Deal every pending card with the seeded sampler."""
        st_auto_deal(&self.cfg, &self.st)

    # -- moves
    def legal_moves(self):
        cdef unsigned char mask[MAXM]
        cdef int m
        if st_current(&self.cfg, &self.st) < 0:
            return []
        st_legal_mask(&self.cfg, &self.st, mask)
        return [m for m in range(self.cfg.num_moves) if mask[m]]

    def legal_mask(self):
        cdef cnp.ndarray[cnp.uint8_t, ndim=1] out = np.zeros(self.cfg.num_moves, dtype=np.uint8)
        if st_current(&self.cfg, &self.st) >= 0:
            st_legal_mask(&self.cfg, &self.st, <unsigned char*>out.data)
        return out

    def is_legal(self, int move):
        return st_move_legal(&self.cfg, &self.st, move)

    def apply(self, int move):
        if not st_move_legal(&self.cfg, &self.st, move):
            raise ValueError(f"move {move} is not legal here")
        st_apply(&self.cfg, &self.st, move)

    # -- observations
    def encode(self, int observer):
        """Canonical HLE observation vector of ``observer`` (uint8, length ``encoding_length``)."""
        if not 0 <= observer < self.cfg.players:
            raise ValueError(f"observer {observer} outside [0, {self.cfg.players})")
        cdef cnp.ndarray[cnp.uint8_t, ndim=1] out = np.empty(self.cfg.enc_len, dtype=np.uint8)
        st_encode(&self.cfg, &self.st, observer, <unsigned char*>out.data)
        return out

    def encode_into(self, int observer, unsigned char[::1] out not None):
        if not 0 <= observer < self.cfg.players:
            raise ValueError(f"observer {observer} outside [0, {self.cfg.players})")
        if out.shape[0] < self.cfg.enc_len:
            raise ValueError(f"out has {out.shape[0]} entries, the encoding needs {self.cfg.enc_len}")
        st_encode(&self.cfg, &self.st, observer, &out[0])

    # -- inspection
    def score(self):
        return st_score(&self.cfg, &self.st)

    def played_cards(self):
        return fireworks_total(&self.cfg, &self.st)

    property information_tokens:
        def __get__(self): return self.st.tokens
    property life_tokens:
        def __get__(self): return self.st.lives
    property deck_size:
        def __get__(self): return self.st.deck_left
    property turns_to_play:
        def __get__(self): return self.st.turns_to_play
    property num_moves_made:
        def __get__(self): return self.st.moves

    def fireworks(self):
        return [self.st.fireworks[c] for c in range(self.cfg.colors)]

    def hand(self, int player):
        """Card ids of ``player``'s hand, oldest first."""
        if not 0 <= player < self.cfg.players:
            raise ValueError(f"player {player} outside [0, {self.cfg.players})")
        return [self.st.hand[player][i] for i in range(self.st.hand_len[player])]

    def knowledge(self, int player):
        """Per card: (colour-plausible bitmask, rank-plausible bitmask, hinted colour or -1, hinted rank or -1)."""
        if not 0 <= player < self.cfg.players:
            raise ValueError(f"player {player} outside [0, {self.cfg.players})")
        return [(self.st.kcol[player][i], self.st.krank[player][i], self.st.hcol[player][i], self.st.hrank[player][i])
                for i in range(self.st.hand_len[player])]

    def discard_counts(self):
        return [self.st.discarded[k] for k in range(self.cfg.num_cards)]

    def discard_pile(self):
        """Discarded and misplayed card ids in the order they left the hands (HLE's discard pile)."""
        return [self.st.discard_pile[i] for i in range(self.st.num_discarded)]

    def deck_counts(self):
        return [self.st.remaining[k] for k in range(self.cfg.num_cards)]

    def last_move(self):
        """The last non-chance move as a dict, or None before the first move (absolute player ids)."""
        cdef St* s = &self.st
        if s.last_type < 0:
            return None
        kind = ("play", "discard", "reveal_color", "reveal_rank")[s.last_type]
        out = {"type": kind, "player": s.last_player}
        if s.last_type <= MT_DISCARD:
            out.update(card_index=s.last_pos, card=s.last_card, scored=bool(s.last_scored),
                       information_token=bool(s.last_token))
        else:
            out.update(target=s.last_target, reveal_mask=s.last_mask)
            if s.last_type == MT_COLOR:
                out["color"] = s.last_color
            else:
                out["rank"] = s.last_rank
        return out

    def set_state(self, hands, fireworks=None, discards=None, int tokens=-1, int lives=-1, int current_player=0,
                  deck=None):
        """Build a state by hand (for tests and puzzles): hands as lists of card ids, oldest first.

        ``deck`` gives the remaining deck counts (default: all cards not in hands, discards or fireworks).
        Card knowledge starts empty; apply hint moves to add some.
        """
        cdef int p, i, k, c, r
        if len(hands) != self.cfg.players:
            raise ValueError(f"need {self.cfg.players} hands, got {len(hands)}")
        # validate everything before touching the state (indices below go into fixed-size C arrays)
        if not 0 <= current_player < self.cfg.players:
            raise ValueError(f"current_player {current_player} outside [0, {self.cfg.players})")
        if tokens > 64:  # above max_tokens is allowed while building (hints applied next spend them)
            raise ValueError(f"tokens {tokens} above 64")
        if lives == 0 or lives > self.cfg.max_lives:
            raise ValueError(f"lives {lives} outside [1, {self.cfg.max_lives}]")
        if fireworks is not None and len(fireworks) != self.cfg.colors:
            raise ValueError(f"need {self.cfg.colors} fireworks, got {len(fireworks)}")
        if discards is not None and len(discards) > self.cfg.deck_size:
            raise ValueError(f"{len(discards)} discards but the deck has {self.cfg.deck_size} cards")
        if deck is not None and (len(deck) != self.cfg.num_cards or
                                 any(not 0 <= deck[k] <= self.cfg.counts[k] for k in range(self.cfg.num_cards))):
            raise ValueError(f"deck needs {self.cfg.num_cards} counts, each at most the copies of that card")
        st_reset(&self.cfg, &self.st, self.st.rng)
        counts = [self.cfg.counts[k] for k in range(self.cfg.num_cards)]
        fireworks = list(fireworks or [0] * self.cfg.colors)
        discards = list(discards or [])
        ids = list(discards) + [k for h in hands for k in h]
        if any(not 0 <= k < self.cfg.num_cards for k in ids):
            raise ValueError(f"card ids must be in [0, {self.cfg.num_cards})")
        for c in range(self.cfg.colors):
            if not 0 <= fireworks[c] <= self.cfg.ranks:
                raise ValueError(f"firework {fireworks[c]} of colour {c} outside [0, {self.cfg.ranks}]")
            self.st.fireworks[c] = fireworks[c]
            for r in range(fireworks[c]):
                counts[c * self.cfg.ranks + r] -= 1
        for k in discards:
            self.st.discarded[k] += 1
            self.st.discard_pile[self.st.num_discarded] = k
            self.st.num_discarded += 1
            counts[k] -= 1
        for p in range(self.cfg.players):
            if len(hands[p]) > self.cfg.hand_size:
                raise ValueError(f"hand of player {p} has more than {self.cfg.hand_size} cards")
            for i, k in enumerate(hands[p]):
                self.st.hand[p][i] = k
                self.st.kcol[p][i] = (1 << self.cfg.colors) - 1
                self.st.krank[p][i] = (1 << self.cfg.ranks) - 1
                self.st.hcol[p][i] = -1
                self.st.hrank[p][i] = -1
                counts[k] -= 1
            self.st.hand_len[p] = len(hands[p])
        if deck is not None:
            counts = list(deck)
        if any(x < 0 for x in counts):
            raise ValueError("more copies of some card than the deck holds")
        for k in range(self.cfg.num_cards):
            self.st.remaining[k] = counts[k]
        self.st.deck_left = sum(counts)
        if tokens >= 0:
            self.st.tokens = tokens
        if lives >= 0:
            self.st.lives = lives
        self.st.cur = current_player
        self.st.next_player = (current_player + 1) % self.cfg.players


cdef class RuleTable:
    """The rule base as a C array: entry i = (kind, condition, threshold)."""
    cdef Rule* rules
    cdef readonly int size

    def __cinit__(self, kinds, conds, thresholds, params=None):
        cdef int i
        if params is None:
            params = [0] * len(kinds)
        if not len(kinds) == len(conds) == len(thresholds) == len(params):
            raise ValueError(f"kinds, conds, thresholds and params need equal lengths, got {len(kinds)}, "
                             f"{len(conds)}, {len(thresholds)}, {len(params)}")
        self.size = len(kinds)
        self.rules = <Rule*>malloc(max(1, self.size) * sizeof(Rule))
        if self.rules == NULL:
            raise MemoryError("RuleTable")
        for i in range(self.size):
            self.rules[i].kind = kinds[i]
            self.rules[i].cond = conds[i]
            self.rules[i].threshold = thresholds[i]
            self.rules[i].param = params[i]

    def __dealloc__(self):
        free(self.rules)


def agent_action(EngineState state not None, RuleTable table not None, rules, uint64_t seed=0):
    """Move the production-rule agent ``rules`` (rule indices) picks at ``state``, and the index of the rule that fired (-1: fallback)."""
    cdef int cur = st_current(&state.cfg, &state.st)
    if cur < 0:
        raise ValueError("agent_action needs a decision node")
    cdef cnp.ndarray[int, ndim=1, mode="c"] arr = np.ascontiguousarray(rules, dtype=np.intc)
    if arr.shape[0] and (arr.min() < 0 or arr.max() >= table.size):
        raise ValueError(f"rule indices must be in [0, {table.size})")
    cdef uint64_t rng = mix_seed(seed, 7)
    cdef int fired
    cdef int m = agent_act(&state.cfg, &state.st, <int*>arr.data, arr.shape[0], table.rules, &rng, NULL, &fired)
    return m, fired


def rule_fires(EngineState state not None, RuleTable table not None, int rule_index, uint64_t seed=0):
    """Move proposed by one rule of the table at ``state`` for the player to act, or -1."""
    cdef View v
    cdef uint64_t rng = mix_seed(seed, 11)
    cdef int p = st_current(&state.cfg, &state.st)
    if p < 0:
        raise ValueError("rule_fires needs a decision node")
    if not 0 <= rule_index < table.size:
        raise ValueError(f"rule index {rule_index} outside [0, {table.size})")
    compute_view(&state.cfg, &state.st, p, &v)
    return fire_rule(&state.cfg, &state.st, p, &table.rules[rule_index], &v, &rng)


def playable_probabilities(EngineState state not None, int player):
    """Per card of ``player``: P(playable), P(useless), P(critical) from that player's grounded view."""
    cdef View v
    if not 0 <= player < state.cfg.players:
        raise ValueError(f"player {player} outside [0, {state.cfg.players})")
    compute_view(&state.cfg, &state.st, player, &v)
    return [(v.pplay[i], v.puse[i], v.pcrit[i]) for i in range(state.st.hand_len[player])]


def play_games(EngineConfig config not None, RuleTable table not None, seat_rules, int num_games, uint64_t seed=0):
    """Play ``num_games`` games with one rule chromosome per seat (array players x L).

    Returns ``(scores, played, stats)``: the HLE-style score per game (0 when the last life is lost,
    unless the config scores played cards), the cards on the fireworks per game, and per-seat
    statistics ``[turns, hint_turns, hints, plays, risk_sum]`` summed over games.
    Game i uses seed ``(seed, i)`` so results are reproducible and independent of batching.
    """
    cdef Cfg g = config.cfg
    cdef cnp.ndarray[int, ndim=2, mode="c"] rules = np.ascontiguousarray(seat_rules, dtype=np.intc)
    if rules.shape[0] != g.players:
        raise ValueError(f"need one chromosome per seat ({g.players}), got {rules.shape[0]}")
    if rules.size and (rules.min() < 0 or rules.max() >= table.size):
        raise ValueError(f"rule indices must be in [0, {table.size})")
    cdef int L = rules.shape[1]
    cdef cnp.ndarray[cnp.int32_t, ndim=1] scores = np.zeros(num_games, dtype=np.int32)
    cdef cnp.ndarray[cnp.int32_t, ndim=1] played = np.zeros(num_games, dtype=np.int32)
    cdef cnp.ndarray[cnp.float64_t, ndim=2] stats = np.zeros((g.players, 5), dtype=np.float64)
    cdef SeatStats seat[MAXP]
    cdef St s
    cdef int gi, m, p, fired
    cdef uint64_t rng
    cdef int* rp = <int*>rules.data
    memset(seat, 0, sizeof(seat))
    with nogil:
        for gi in range(num_games):
            st_reset(&g, &s, mix_seed(seed, 2 * gi))
            rng = mix_seed(seed, 2 * gi + 1)
            st_auto_deal(&g, &s)
            while not st_terminal(&g, &s):
                p = s.cur
                m = agent_act(&g, &s, rp + p * L, L, table.rules, &rng, &seat[p], &fired)
                st_apply(&g, &s, m)
                st_auto_deal(&g, &s)
            scores[gi] = st_score(&g, &s)
            played[gi] = fireworks_total(&g, &s)
    for p in range(g.players):
        stats[p, 0] = seat[p].turns
        stats[p, 1] = seat[p].hint_turns
        stats[p, 2] = seat[p].hints
        stats[p, 3] = seat[p].plays
        stats[p, 4] = seat[p].risk_sum
    return scores, played, stats


def record_states(EngineConfig config not None, RuleTable table not None, seat_rules, int num_games,
                  uint64_t seed=0):
    """Play games like :func:`play_games` and return every decision state visited (list of EngineState)."""
    cdef Cfg g = config.cfg
    cdef cnp.ndarray[int, ndim=2, mode="c"] rules = np.ascontiguousarray(seat_rules, dtype=np.intc)
    if rules.shape[0] != g.players:
        raise ValueError(f"need one chromosome per seat ({g.players}), got {rules.shape[0]}")
    if rules.size and (rules.min() < 0 or rules.max() >= table.size):
        raise ValueError(f"rule indices must be in [0, {table.size})")
    cdef int L = rules.shape[1], gi, m, p, fired
    cdef EngineState es
    cdef uint64_t rng
    cdef St s
    out = []
    for gi in range(num_games):
        st_reset(&g, &s, mix_seed(seed, 2 * gi))
        rng = mix_seed(seed, 2 * gi + 1)
        st_auto_deal(&g, &s)
        while not st_terminal(&g, &s):
            es = EngineState.__new__(EngineState)
            es.config = config
            es.cfg = g
            es.st = s
            out.append(es)
            p = s.cur
            m = agent_act(&g, &s, <int*>rules.data + p * L, L, table.rules, &rng, NULL, &fired)
            st_apply(&g, &s, m)
            st_auto_deal(&g, &s)
    return out


def actions_on_states(states, RuleTable table not None, rules, uint64_t seed=0):
    """The move a rule agent picks at each recorded state (int32 array)."""
    cdef cnp.ndarray[int, ndim=1, mode="c"] arr = np.ascontiguousarray(rules, dtype=np.intc)
    if arr.shape[0] and (arr.min() < 0 or arr.max() >= table.size):
        raise ValueError(f"rule indices must be in [0, {table.size})")
    cdef cnp.ndarray[cnp.int32_t, ndim=1] out = np.empty(len(states), dtype=np.int32)
    cdef EngineState es
    cdef uint64_t rng
    cdef int i, fired
    for i in range(len(states)):
        es = states[i]
        if es is None or st_current(&es.cfg, &es.st) < 0:
            raise ValueError(f"states[{i}] is not a decision state")
        rng = mix_seed(seed, i)
        out[i] = agent_act(&es.cfg, &es.st, <int*>arr.data, arr.shape[0], table.rules, &rng, NULL, &fired)
    return out


# ----------------------------------------------------------------------------- batched games
cdef class BatchEngine:
    """``num_envs`` independent games stepped together (auto-dealing, auto-reset on terminal).

    The player to act's observation and legal mask are written into the arrays ``obs`` (N x L uint8)
    and ``mask`` (N x num_moves uint8) after :meth:`reset` and every :meth:`step`.
    """
    cdef Cfg cfg
    cdef St* states
    cdef readonly int num_envs
    cdef uint64_t seed
    cdef uint64_t games_started
    cdef readonly cnp.ndarray obs
    cdef readonly cnp.ndarray mask
    cdef readonly cnp.ndarray current_player
    cdef readonly cnp.ndarray last_score
    cdef readonly bint encode
    cdef readonly EngineConfig config
    cdef readonly bint started
    cdef object mask_bool

    def __cinit__(self, EngineConfig config not None, int num_envs, uint64_t seed=0, bint encode=True):
        if not 1 <= num_envs <= 1 << 24:
            raise ValueError(f"num_envs must be in [1, 2**24], got {num_envs}")
        self.config = config
        self.cfg = config.cfg
        self.num_envs = num_envs
        self.seed = seed
        self.encode = encode
        self.states = <St*>malloc(num_envs * sizeof(St))
        if self.states == NULL:
            raise MemoryError(f"BatchEngine of {num_envs} games")
        memset(self.states, 0, num_envs * sizeof(St))
        self.started = False  # the games exist only after reset()
        self.obs = np.zeros((num_envs, self.cfg.enc_len if encode else 1), dtype=np.uint8)
        self.mask = np.zeros((num_envs, self.cfg.num_moves), dtype=np.uint8)
        self.mask_bool = self.mask.view(np.bool_)  # the same memory (0/1 bytes), as a boolean mask
        self.current_player = np.zeros(num_envs, dtype=np.int32)
        self.last_score = np.zeros(num_envs, dtype=np.int32)
        self.games_started = 0

    def __dealloc__(self):
        free(self.states)

    cdef void _start(self, int i) noexcept nogil:
        st_reset(&self.cfg, &self.states[i], mix_seed(self.seed, self.games_started))
        self.games_started += 1
        st_auto_deal(&self.cfg, &self.states[i])

    cdef void _observe(self, int i, unsigned char* obs, unsigned char* mask, int* cur) noexcept nogil:
        cdef St* s = &self.states[i]
        cur[i] = s.cur
        st_legal_mask(&self.cfg, s, mask + i * self.cfg.num_moves)
        if self.encode:
            st_encode(&self.cfg, s, s.cur, obs + i * self.cfg.enc_len)

    def _require_started(self):
        if not self.started:
            raise ValueError("call reset() before step(), random_steps(), state() or encode_all()")

    def reset(self):
        """Start a new game in every slot; returns ``(obs, mask, current_player)`` (``mask``: bool)."""
        cdef int i
        cdef unsigned char* o = <unsigned char*>self.obs.data
        cdef unsigned char* mk = <unsigned char*>self.mask.data
        cdef int* cur = <int*>self.current_player.data
        for i in range(self.num_envs):
            self._start(i)
            self._observe(i, o, mk, cur)
        self.started = True
        return self.obs, self.mask_bool, self.current_player

    def step(self, actions):
        """Apply one move per game.  Returns ``(obs, mask, current_player, rewards, dones, final_scores)``.

        ``rewards`` is the score change (HLE's rl_env reward); finished games restart at once, their
        final score in ``final_scores`` (-1 for games still running).  ``mask`` and ``dones`` are bool.
        """
        self._require_started()
        raw = np.asarray(actions)
        if raw.ndim != 1 or raw.shape[0] != self.num_envs:
            raise ValueError(f"need a 1-D array of {self.num_envs} actions, got shape {raw.shape}")
        if raw.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers, got dtype {raw.dtype}")
        if raw.dtype.kind == "u" and raw.size and raw.max() > np.iinfo(np.int64).max:
            raise ValueError("actions out of range")
        cdef cnp.ndarray[cnp.int64_t, ndim=1] acts = np.ascontiguousarray(raw, dtype=np.int64)
        cdef cnp.ndarray[cnp.float32_t, ndim=1] rewards = np.zeros(self.num_envs, dtype=np.float32)
        cdef cnp.ndarray[cnp.uint8_t, ndim=1] dones = np.zeros(self.num_envs, dtype=np.uint8)
        cdef long long num_moves = self.cfg.num_moves
        cdef cnp.ndarray[cnp.int32_t, ndim=1] finals = np.full(self.num_envs, -1, dtype=np.int32)
        cdef int i, bad = -1, before, after
        cdef unsigned char* o = <unsigned char*>self.obs.data
        cdef unsigned char* mk = <unsigned char*>self.mask.data
        cdef int* cur = <int*>self.current_player.data
        with nogil:
            for i in range(self.num_envs):
                # range first: the cast to int must not wrap a huge id onto a legal one
                if acts[i] < 0 or acts[i] >= num_moves or not st_move_legal(&self.cfg, &self.states[i], <int>acts[i]):
                    bad = i
                    break
        if bad >= 0:
            raise ValueError(f"action {acts[bad]} is not legal in game {bad}")
        with nogil:
            for i in range(self.num_envs):
                before = st_score(&self.cfg, &self.states[i])
                st_apply(&self.cfg, &self.states[i], <int>acts[i])
                st_auto_deal(&self.cfg, &self.states[i])
                after = st_score(&self.cfg, &self.states[i])
                rewards[i] = after - before
                if st_terminal(&self.cfg, &self.states[i]):
                    dones[i] = 1
                    finals[i] = after
                    self._start(i)
                self._observe(i, o, mk, cur)
        return self.obs, self.mask_bool, self.current_player, rewards, dones.view(np.bool_), finals

    def random_steps(self, long num_steps, uint64_t seed=0):
        """Play ``num_steps`` uniformly random legal moves spread over all games (no encoding).

        Returns ``(steps, finished_games, score_sum)``.  Used by the benchmark.
        """
        cdef long k = 0
        cdef int i, m, stuck = -1
        cdef long finished = 0, score_sum = 0
        cdef uint64_t rng = mix_seed(seed, 3)
        self._require_started()
        with nogil:
            while k < num_steps and stuck < 0:
                for i in range(self.num_envs):
                    m = random_legal(&self.cfg, &self.states[i], &rng)
                    if m < 0:
                        stuck = i
                        break
                    st_apply(&self.cfg, &self.states[i], m)
                    st_auto_deal(&self.cfg, &self.states[i])
                    if st_terminal(&self.cfg, &self.states[i]):
                        finished += 1
                        score_sum += st_score(&self.cfg, &self.states[i])
                        self._start(i)
                k += self.num_envs
        if stuck >= 0:
            raise ValueError(f"game {stuck} has no legal move")
        return k, finished, score_sum

    def encode_all(self):
        """Re-encode every game's observation for its player to act (into ``obs``)."""
        cdef int i
        cdef unsigned char* o = <unsigned char*>self.obs.data
        self._require_started()
        if not self.encode:
            raise ValueError("this batch was built with encode=False")
        with nogil:
            for i in range(self.num_envs):
                st_encode(&self.cfg, &self.states[i], self.states[i].cur, o + i * self.cfg.enc_len)
        return self.obs

    def state(self, int i):
        """A copy of game ``i`` as an :class:`EngineState`."""
        self._require_started()
        if not 0 <= i < self.num_envs:
            raise ValueError(f"game index {i} outside [0, {self.num_envs})")
        cdef EngineState es = EngineState.__new__(EngineState)
        es.config = self.config
        es.cfg = self.cfg
        es.st = self.states[i]
        return es


# ============================================================================= convention bots
include "hanabi_conventions.pxi"
