# Included by hanabi_engine.pyx: the Python classes over one game, :class:`EngineConfig` and
# :class:`EngineState`.

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
