# Included by hanabi_engine.pyx after hanabi_state.pxi: HLE's canonical observation encoding of a
# ``St`` for one player (hands, board, discards, last move, card knowledge).

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
