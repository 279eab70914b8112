# Included by hanabi_engine.pyx: the C game state. Enums, the ``Cfg`` (parameters and derived sizes)
# and ``St`` (one game) structs, the seeded random numbers, configuration, legality, chance deals and
# the move transition. Everything here runs without the GIL.

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
