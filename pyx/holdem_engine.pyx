# cython: language_level=3
"""Compiled hold'em core: the rules of ``cfrkit.games.holdem.game.HoldemState`` on a C struct.

Python API: :mod:`cfrkit.games.holdem.fast` (``CompiledHoldemGame``, ``play_random_hands``).  The rules
are a line-by-line port of ``HoldemState`` (the reference): betting order, minimum raises, short
all-ins that do not reopen the betting, ``maxRaises``, skipped rounds, side pots re-formed among the
players who win a pot, odd chips to the lowest seat or ``fractional_split``.  Tests compare both on
random hands (``tests/test_holdem_fast.py``).

Showdowns: 5..7 cards use the cards kernel's evaluator (``handeval_core.pxi``); fewer than 5 cards
rank pairs / trips / quads then high cards as ``hand_strength`` does.  Games that show down more
than 7 cards are refused by the Python wrapper.

Action ids as in the protocol: 0 fold, 1 check/call, 2 limit raise, ``2 + N`` no-limit raise to N.
"""
from operator import index as _index

import numpy as np
cimport numpy as cnp

from libc.stdint cimport int8_t, int16_t
from libc.stdlib cimport realloc
include "handeval_core.pxi"

cnp.import_array()

cdef enum:
    MAXP = 10
    MAXR = 4
    MAXHOLE = 5
    MAXBOARD = 7
    ACT_FOLD = 0
    ACT_CALL = 1
    ACT_RAISE = 2
    P_CHANCE = -1
    P_TERMINAL = -4


cdef struct Rules:
    int n
    int rounds
    int is_limit
    int num_hole
    int num_hole_total
    int deck_len
    int fractional
    int small_showdown
    int64_t big_blind
    int64_t stack[MAXP]
    int64_t blind[MAXP]
    int64_t ante[MAXP]        # antes posted (after PHH ante trimming)
    int64_t dead_ante[MAXP]   # the part of each ante that is dead money (not a contribution level)
    int64_t raise_size[MAXR]
    int first_player[MAXR]
    int max_raises[MAXR]
    int board_after[MAXR]
    uint8_t deck[52]
    uint64_t deck_mask


cdef struct HS:
    int64_t spent[MAXP]
    int64_t round_start[MAXP]
    uint8_t folded[MAXP]
    int8_t actors[MAXP]
    int n_actors
    int acted            # bit mask of seats that acted since the last full raise
    int64_t raise_inc
    int raise_count
    int n_short          # all-in raises for less than a full raise since the last full raise
    int64_t short_sum
    int rnd
    int terminal
    int dealt
    int nboard
    uint64_t used        # bit c: card c dealt
    uint8_t hole[MAXP][MAXHOLE]
    uint8_t board[MAXBOARD + 1]


# ---------------------------------------------------------------------------------------- rules
cdef inline int64_t _bet(HS *s, int p) noexcept nogil:
    return s.spent[p] - s.round_start[p]


cdef inline int64_t _remaining(Rules *r, HS *s, int p) noexcept nogil:
    return r.stack[p] - s.spent[p]


cdef inline int64_t _max_bet(Rules *r, HS *s) noexcept nogil:
    cdef int64_t m = s.spent[0] - s.round_start[0], b
    cdef int p
    for p in range(1, r.n):
        b = s.spent[p] - s.round_start[p]
        if b > m:
            m = b
    return m


cdef inline int _num_active(Rules *r, HS *s) noexcept nogil:
    cdef int p, k = 0
    for p in range(r.n):
        if not s.folded[p]:
            k += 1
    return k


cdef inline int _cards_needed(Rules *r, HS *s) noexcept nogil:
    if s.dealt < r.num_hole_total:
        return r.num_hole_total - s.dealt
    return r.board_after[s.rnd] - s.nboard


cdef inline int _current_player(Rules *r, HS *s) noexcept nogil:
    if s.terminal:
        return P_TERMINAL
    if _cards_needed(r, s) > 0:
        return P_CHANCE
    return s.actors[0]


cdef void _init(Rules *r, HS *s) noexcept nogil:
    cdef int p
    for p in range(MAXP):
        s.spent[p] = 0
        s.round_start[p] = 0
        s.folded[p] = 0
        s.actors[p] = 0
    for p in range(r.n):
        s.spent[p] = r.ante[p] + r.blind[p]
        s.round_start[p] = r.ante[p]
    s.n_actors = 0
    s.acted = 0
    s.raise_inc = 0
    s.raise_count = 0
    s.n_short = 0
    s.short_sum = 0
    s.rnd = 0
    s.terminal = 0
    s.dealt = 0
    s.nboard = 0
    s.used = 0


cdef void _begin_round(Rules *r, HS *s) noexcept nogil:
    cdef int n = r.n, i, p, k = 0, nt = 0
    cdef int64_t totals[MAXP]
    cdef int64_t first = -1, second = -1, t, need, rem
    s.raise_inc = 0
    s.raise_count = 0
    s.acted = 0
    s.n_short = 0
    s.short_sum = 0
    if s.rnd > 0:
        for p in range(n):
            s.round_start[p] = s.spent[p]
    # the two largest stacks-at-round-start among live players (second largest bounds who can act)
    for p in range(n):
        if not s.folded[p]:
            t = r.stack[p] - s.round_start[p]
            nt += 1
            if t > first:
                second = first
                first = t
            elif t > second:
                second = t
    if nt < 2:
        second = 0
    for i in range(n):
        p = (r.first_player[s.rnd] + i) % n
        rem = _remaining(r, s, p)
        if s.folded[p] or rem <= 0:
            continue
        need = second - _bet(s, p)
        if need < 0:
            need = 0
        if (rem if rem < need else need) <= 0:
            continue
        s.actors[k] = p
        k += 1
    s.n_actors = k
    if k == 1 and _bet(s, s.actors[0]) >= _max_bet(r, s):
        s.n_actors = 0
    if s.n_actors == 0 or _num_active(r, s) <= 1:
        _end_round(r, s)


cdef void _end_round(Rules *r, HS *s) noexcept nogil:
    s.n_actors = 0
    if _num_active(r, s) <= 1 or s.rnd == r.rounds - 1:
        s.terminal = 1
        return
    s.rnd += 1
    if _cards_needed(r, s) == 0:
        _begin_round(r, s)


cdef void _deal(Rules *r, HS *s, int card) noexcept nogil:
    if s.dealt < r.num_hole_total:
        s.hole[s.dealt // r.num_hole][s.dealt % r.num_hole] = <uint8_t>card
    else:
        s.board[s.nboard] = <uint8_t>card
        s.nboard += 1
    s.used |= (<uint64_t>1) << card
    s.dealt += 1
    if _cards_needed(r, s) == 0:
        _begin_round(r, s)


cdef int _can_raise(Rules *r, HS *s, int p) noexcept nogil:
    cdef int64_t max_bet = _max_bet(r, s), rem = _remaining(r, s, p)
    cdef int64_t to_call = max_bet - _bet(s, p)
    cdef int i
    if rem < to_call:
        to_call = rem
    if to_call < s.raise_inc:
        return 0
    if s.raise_count >= r.max_raises[s.rnd]:
        return 0
    if s.n_short and s.short_sum < s.raise_inc and (s.acted >> p) & 1:
        return 0
    if rem <= max_bet - _bet(s, p):
        return 0
    for i in range(r.n):
        if i != p and not s.folded[i] and r.stack[i] - s.round_start[i] > max_bet:
            return 1
    return 0


cdef int _raise_range(Rules *r, HS *s, int p, int64_t *lo, int64_t *hi) noexcept nogil:
    """Legal raise-to totals of ``p`` into lo/hi; returns 0 when raising is illegal."""
    if not _can_raise(r, s, p):
        return 0
    cdef int64_t street_min = r.raise_size[s.rnd] if r.is_limit else r.big_blind
    cdef int64_t cap = _bet(s, p) + _remaining(r, s, p)
    cdef int64_t inc = s.raise_inc if s.raise_inc > street_min else street_min
    cdef int64_t low = inc + _max_bet(r, s)
    if cap < low:
        low = cap
    lo[0] = s.round_start[p] + low
    hi[0] = s.round_start[p] + (low if r.is_limit else cap)
    return 1


cdef void _apply(Rules *r, HS *s, int64_t action) noexcept nogil:
    """Apply a legal player action (fold, call, or raise: ``2`` limit / ``2 + N`` no-limit)."""
    cdef int p = s.actors[0], i, q, n = r.n, k
    cdef int64_t total, max_bet, inc, lo, hi, c
    for i in range(1, s.n_actors):
        s.actors[i - 1] = s.actors[i]
    s.n_actors -= 1
    s.acted |= 1 << p
    if action == ACT_FOLD:
        s.folded[p] = 1
    elif action == ACT_CALL:
        max_bet = _max_bet(r, s)
        c = max_bet - _bet(s, p)
        if _remaining(r, s, p) < c:
            c = _remaining(r, s, p)
        s.spent[p] += c
    else:
        if r.is_limit:
            # the one limit size: as _raise_range, without its legality checks (p has just acted)
            max_bet = _max_bet(r, s)
            inc = s.raise_inc if s.raise_inc > r.raise_size[s.rnd] else r.raise_size[s.rnd]
            lo = _bet(s, p) + _remaining(r, s, p)
            if inc + max_bet < lo:
                lo = inc + max_bet
            total = s.round_start[p] + lo
        else:
            total = action - ACT_RAISE
        max_bet = _max_bet(r, s)
        inc = total - s.round_start[p] - max_bet
        s.spent[p] = total
        k = 0
        for i in range(1, n):
            q = (p + i) % n
            if not s.folded[q] and _remaining(r, s, q) > 0:
                s.actors[k] = q
                k += 1
        s.n_actors = k
        if inc >= s.raise_inc:
            s.acted = 1 << p
        if inc > s.raise_inc:
            s.raise_inc = inc
        s.raise_count += 1
        if _remaining(r, s, p) > 0:
            s.n_short = 0
            s.short_sum = 0
        else:
            s.n_short += 1
            s.short_sum += inc
        if s.short_sum >= s.raise_inc:
            s.n_short = 0
            s.short_sum = 0
    if s.n_actors == 0 or _num_active(r, s) <= 1:
        _end_round(r, s)


# ------------------------------------------------------------------------------------ showdown
cdef int64_t _small_value(uint8_t *cards, int k) noexcept nogil:
    """``hand_strength`` of fewer than 5 cards as one comparable integer."""
    cdef int counts[13]
    cdef int gcnt[5]
    cdef int grank[5]
    cdef int i, cnt, rank, ng = 0, cat = 0
    cdef int64_t v
    for i in range(13):
        counts[i] = 0
    for i in range(k):
        counts[cards[i] >> 2] += 1
    for cnt in range(4, 0, -1):
        for rank in range(12, -1, -1):
            if counts[rank] == cnt and ng < 5:
                gcnt[ng] = cnt
                grank[ng] = rank
                ng += 1
    if ng > 0:
        if gcnt[0] == 4:
            cat = 7
        elif gcnt[0] == 3:
            cat = 3
        elif gcnt[0] == 2:
            cat = 2 if (ng > 1 and gcnt[1] == 2) else 1
    v = (<int64_t>cat) << 24
    for i in range(ng if ng < 5 else 5):
        v |= (<int64_t>(grank[i] + 1)) << (4 * (4 - i))
    return v


cdef int64_t _hand_value(Rules *r, HS *s, int p) noexcept nogil:
    cdef uint8_t cards[MAXHOLE + MAXBOARD]
    cdef int k = 0, i
    cdef uint64_t key = KEY_START, mask = 0
    for i in range(r.num_hole):
        cards[k] = s.hole[p][i]
        k += 1
    for i in range(s.nboard):
        cards[k] = s.board[i]
        k += 1
    if r.small_showdown:
        return _small_value(cards, k)
    for i in range(k):
        key += _CARD_KEY[cards[i]]
        mask |= _CARD_BIT[cards[i]]
    return eval_key(key, mask)


cdef int _pots(Rules *r, HS *s, int allowed, int64_t *amounts, int *elig) noexcept nogil:
    """Main and side pots (chips, eligible seat mask), as ``HoldemState.pots``; returns the count.

    Dead antes are left out of the contribution levels and added to the first pot."""
    cdef int64_t levels[MAXP]
    cdef int64_t contrib[MAXP]
    cdef int nl = 0, i, j, p, np_ = 0, eligible
    cdef int64_t v, previous = 0, amount, a, b, dead = 0
    for p in range(r.n):
        contrib[p] = s.spent[p] - r.dead_ante[p]
        dead += r.dead_ante[p]
    for p in range(r.n):
        v = contrib[p]
        j = 0
        while j < nl and levels[j] < v:
            j += 1
        if j < nl and levels[j] == v:
            continue
        for i in range(nl, j, -1):
            levels[i] = levels[i - 1]
        levels[j] = v
        nl += 1
    for i in range(nl):
        amount = dead if i == 0 else 0
        for p in range(r.n):
            a = contrib[p] if contrib[p] < levels[i] else levels[i]
            b = contrib[p] if contrib[p] < previous else previous
            amount += a - b
        eligible = 0
        for p in range(r.n):
            if not s.folded[p] and (allowed >> p) & 1 and contrib[p] >= levels[i]:
                eligible |= 1 << p
        while np_ > 0 and elig[np_ - 1] == eligible:
            np_ -= 1
            amount += amounts[np_]
        if amount:
            amounts[np_] = amount
            elig[np_] = eligible
            np_ += 1
        previous = levels[i]
    return np_


cdef void _winnings(Rules *r, HS *s, double *won) noexcept nogil:
    """Chips each player collects at a terminal state, as ``HoldemState.winnings``."""
    cdef int n = r.n, p, i, live = 0, last_live = -1, npots, contenders = 0, winners, first, cnt
    cdef int64_t values[MAXP]
    cdef int64_t amounts[MAXP]
    cdef int elig[MAXP]
    cdef int64_t best, total = 0, share, odd
    for p in range(n):
        won[p] = 0.0
        total += s.spent[p]
        if not s.folded[p]:
            live += 1
            last_live = p
    if live == 1:
        won[last_live] = <double>total
        return
    for p in range(n):
        values[p] = _hand_value(r, s, p) if not s.folded[p] else -1
    npots = _pots(r, s, (1 << n) - 1, amounts, elig)
    for i in range(npots):
        best = -1
        for p in range(n):
            if (elig[i] >> p) & 1 and values[p] > best:
                best = values[p]
        winners = 0
        cnt = 0
        for p in range(n):
            if (elig[i] >> p) & 1 and values[p] == best:
                winners |= 1 << p
                cnt += 1
        if r.fractional:
            for p in range(n):
                if (winners >> p) & 1:
                    won[p] += <double>amounts[i] / cnt
        contenders |= winners
    if r.fractional:
        return
    npots = _pots(r, s, contenders, amounts, elig)
    for i in range(npots):
        best = -1
        for p in range(n):
            if (elig[i] >> p) & 1 and values[p] > best:
                best = values[p]
        cnt = 0
        first = -1
        for p in range(n):
            if (elig[i] >> p) & 1 and values[p] == best:
                cnt += 1
                if first < 0:
                    first = p
        if cnt == 0:
            continue
        share = amounts[i] // cnt
        odd = amounts[i] - share * cnt
        for p in range(n):
            if (elig[i] >> p) & 1 and values[p] == best:
                won[p] += <double>share
        won[first] += <double>odd


# ---------------------------------------------------------------------------------------- rng
cdef inline uint64_t _next(uint64_t *state) noexcept nogil:
    """splitmix64: fast, full-period, good enough for simulation (not for cryptography)."""
    state[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t _below(uint64_t *state, uint64_t bound) noexcept nogil:
    """Uniform integer in [0, bound) (rejection: no modulo bias)."""
    cdef uint64_t limit = 0xFFFFFFFFFFFFFFFFULL - (0xFFFFFFFFFFFFFFFFULL % bound)
    cdef uint64_t x = _next(state)
    while x >= limit:
        x = _next(state)
    return x % bound


# ---------------------------------------------------------------------------------- Python API
cdef class CompiledRules:
    """Rules of one game for the compiled core (built by ``cfrkit.games.holdem.fast``)."""
    cdef Rules r
    cdef tuple _args

    def __init__(self, int num_players, int num_rounds, bint is_limit, stacks, blinds, antes, raise_sizes,
                 first_players, max_raises, num_board_cards, int num_hole_cards, deck, bint fractional_split,
                 dead_antes=None):
        cdef int p, i, acc = 0
        if dead_antes is None:
            dead_antes = (0,) * num_players
        self._args = (num_players, num_rounds, is_limit, tuple(stacks), tuple(blinds), tuple(antes),
                      tuple(raise_sizes), tuple(first_players), tuple(max_raises), tuple(num_board_cards),
                      num_hole_cards, tuple(deck), fractional_split, tuple(dead_antes))
        if not 2 <= num_players <= MAXP or not 1 <= num_rounds <= MAXR or not 1 <= num_hole_cards <= MAXHOLE:
            raise ValueError("compiled hold'em: players 2..10, rounds 1..4, hole cards 1..5")
        self.r.n = num_players
        self.r.rounds = num_rounds
        self.r.is_limit = is_limit
        self.r.num_hole = num_hole_cards
        self.r.num_hole_total = num_players * num_hole_cards
        self.r.fractional = fractional_split
        self.r.big_blind = 0
        for p in range(num_players):
            self.r.stack[p] = stacks[p]
            self.r.blind[p] = blinds[p]
            self.r.ante[p] = antes[p]
            self.r.dead_ante[p] = dead_antes[p]
            if blinds[p] > self.r.big_blind:
                self.r.big_blind = blinds[p]
        for i in range(num_rounds):
            self.r.raise_size[i] = raise_sizes[i]
            self.r.first_player[i] = first_players[i]
            self.r.max_raises[i] = max_raises[i]
            acc += num_board_cards[i]
            self.r.board_after[i] = acc
        if acc > MAXBOARD or len(deck) > 52 or any(not 0 <= c < 52 for c in deck):
            raise ValueError("compiled hold'em: at most 7 board cards and a deck of card ids 0..51")
        if num_hole_cards + acc > 7:
            raise ValueError("compiled hold'em: showdowns of more than 7 cards are not supported")
        self.r.small_showdown = 1 if num_hole_cards + acc < 5 else 0
        self.r.deck_len = len(deck)
        self.r.deck_mask = 0
        for i in range(len(deck)):
            self.r.deck[i] = deck[i]
            self.r.deck_mask |= (<uint64_t>1) << deck[i]

    @property
    def num_players(self):
        return self.r.n

    def __reduce__(self):
        return (CompiledRules, self._args)

    @property
    def deck(self):
        """Card ids of the deck."""
        return [self.r.deck[i] for i in range(self.r.deck_len)]

    @property
    def cards_per_hand(self):
        return self.r.num_hole_total + self.r.board_after[self.r.rounds - 1]


cdef class CompiledState:
    """A hand on the compiled core.  Mutable: ``apply`` changes it in place (``clone`` copies).

    Python subclasses may add methods (``cfrkit.games.holdem.fast.FastHoldemState``); ``clone`` keeps
    the subclass."""
    cdef Rules *r
    cdef readonly CompiledRules rules
    cdef HS s
    cdef int64_t *hist      # actions applied from the root (cards included), growable
    cdef Py_ssize_t hlen, hcap

    def __cinit__(self, CompiledRules rules, bint start=True):
        self.rules = rules
        self.r = &rules.r
        self.hlen = 0
        self.hcap = 32
        self.hist = <int64_t *>malloc(self.hcap * sizeof(int64_t))
        if self.hist == NULL:
            raise MemoryError()
        if start:
            _init(self.r, &self.s)

    def __dealloc__(self):
        free(self.hist)

    cdef int _push(self, int64_t action) except -1:
        cdef int64_t *grown
        if self.hlen == self.hcap:
            grown = <int64_t *>realloc(self.hist, 2 * self.hcap * sizeof(int64_t))
            if grown == NULL:
                raise MemoryError()
            self.hist = grown
            self.hcap *= 2
        self.hist[self.hlen] = action
        self.hlen += 1
        return 0

    def clone(self):
        cdef CompiledState new = type(self).__new__(type(self), self.rules, False)
        cdef Py_ssize_t i
        new.s = self.s
        for i in range(self.hlen):
            new._push(self.hist[i])
        return new

    def __reduce__(self):
        # pickled as rules + history, rebuilt by replaying (subclasses included)
        return (_rebuild_state, (type(self), self.rules, self.history()))

    def history(self):
        """Actions applied from the root (card ids at chance nodes, protocol action ids otherwise)."""
        return [self.hist[i] for i in range(self.hlen)]

    @property
    def hole(self):
        """Hole cards dealt so far, per seat (card ids)."""
        cdef int p, i, k = 0
        out = [[] for p in range(self.r.n)]
        for p in range(self.r.n):
            for i in range(self.r.num_hole):
                if k < self.s.dealt:
                    out[p].append(self.s.hole[p][i])
                k += 1
        return out

    @property
    def board(self):
        """Board cards dealt so far (card ids)."""
        return [self.s.board[i] for i in range(self.s.nboard)]

    def current_player(self):
        """Seat to act, -1 at chance nodes, -4 at terminal nodes."""
        return _current_player(self.r, &self.s)

    def is_terminal(self):
        return self.s.terminal != 0

    def decision(self):
        """``(player, can_fold, call_amount, raise_min, raise_max, pot, spent, remaining, to_match)`` in
        chips at a decision node (raise bounds -1 when raising is illegal; ``spent``/``remaining``: the
        player's chips put in / behind; ``to_match``: what a call brings ``spent`` up to unless short);
        ``None`` at chance and terminal nodes."""
        cdef int p = _current_player(self.r, &self.s), q
        cdef int64_t lo = -1, hi = -1, c, mb, rem, pot = 0
        if p < 0:
            return None
        mb = _max_bet(self.r, &self.s)
        rem = _remaining(self.r, &self.s, p)
        c = mb - _bet(&self.s, p)
        if rem < c:
            c = rem
        if not _raise_range(self.r, &self.s, p, &lo, &hi):
            lo = hi = -1
        for q in range(self.r.n):
            pot += self.s.spent[q]
        return (p, _bet(&self.s, p) < mb, c, lo, hi, pot, self.s.spent[p], rem,
                self.s.round_start[p] + mb)

    def is_legal(self, object action_id):
        """Whether ``action_id`` (an integer) is legal: an undealt deck card at chance nodes, else a
        legal protocol action id.  Non-integers and out-of-range integers are illegal."""
        cdef int p = _current_player(self.r, &self.s)
        cdef int64_t lo, hi, action
        if type(action_id) is not int:
            try:
                action_id = _index(action_id)
            except TypeError:
                return False
        if not -(1 << 62) < action_id < (1 << 62):
            return False
        action = action_id
        if p == P_CHANCE:
            return 0 <= action < 52 and ((self.r.deck_mask & ~self.s.used) >> action) & 1 == 1
        if p < 0:
            return False
        if action == ACT_FOLD:
            return _bet(&self.s, p) < _max_bet(self.r, &self.s)
        if action == ACT_CALL:
            return True
        if not _raise_range(self.r, &self.s, p, &lo, &hi):
            return False
        if self.r.is_limit:
            return action == ACT_RAISE
        return lo <= action - ACT_RAISE <= hi

    def apply(self, object action_id):
        """Apply a card (chance node) or a player action; an illegal one raises ``IllegalActionError``."""
        cdef int64_t action
        if not self.is_legal(action_id):
            from cfrkit.games.base import IllegalActionError
            raise IllegalActionError(f"action {action_id!r} is not legal here (player "
                                     f"{_current_player(self.r, &self.s)})")
        action = _index(action_id)
        if _current_player(self.r, &self.s) == P_CHANCE:
            _deal(self.r, &self.s, <int>action)
        else:
            _apply(self.r, &self.s, action)
        self._push(action)

    def returns(self):
        """Chips won minus chips put in, per seat (zeros before the end)."""
        cdef double won[MAXP]
        cdef int p
        if not self.s.terminal:
            return [0.0] * self.r.n
        _winnings(self.r, &self.s, won)
        return [won[p] - self.s.spent[p] for p in range(self.r.n)]

    @property
    def spent(self):
        return [self.s.spent[p] for p in range(self.r.n)]

    @property
    def round(self):
        return self.s.rnd

    @property
    def num_players(self):
        return self.r.n

    @property
    def is_limit(self):
        return self.r.is_limit != 0


def _rebuild_state(cls, CompiledRules rules, history):
    state = cls(rules)
    for action in history:
        state.apply(action)
    return state


def play_random_hands(CompiledRules rules, int64_t num_hands, uint64_t seed, int record_length=0):
    """Play ``num_hands`` hands between random agents on the compiled core.

    The agents pick uniformly among the legal kinds (fold when facing a bet, check/call, raise when
    legal), then a raise-to total uniformly in ``[min, max]`` (``RandomAgent``'s rule); cards come
    from a seeded shuffle (splitmix64).  Returns ``(returns float64[num_hands, players] in chips,
    decisions int64, records)``; with ``record_length > 0`` ``records`` is a dict of
    ``cards`` int16[num_hands, cards per hand] (dealing order), ``actions`` int64[num_hands, L]
    (protocol ids, -1 padded) and ``views`` int64[num_hands, L, 4] (can_fold, call_amount,
    raise_min, raise_max; -1 without a raise) at each decision; else ``None``.
    """
    cdef Rules *r = &rules.r
    cdef int n = r.n, p, i, k, kinds, kind, ncards = rules.cards_per_hand, nd
    cdef int64_t h, lo, hi, action, decisions = 0, c, mb
    cdef uint64_t state = seed
    cdef double won[MAXP]
    cdef uint8_t deck[52]
    cdef uint8_t tmp
    cdef HS s
    cdef int record = record_length > 0
    cdef int L = record_length if record_length > 0 else 1
    out_arr = np.zeros((num_hands, n), dtype=np.float64)
    cards_arr = np.full((num_hands if record else 1, ncards), -1, dtype=np.int16)
    actions_arr = np.full((num_hands if record else 1, L), -1, dtype=np.int64)
    views_arr = np.full((num_hands if record else 1, L, 4), -1, dtype=np.int64)
    cdef double[:, ::1] out = out_arr
    cdef int16_t[:, ::1] rec_cards = cards_arr
    cdef int64_t[:, ::1] rec_actions = actions_arr
    cdef int64_t[:, :, ::1] rec_views = views_arr
    cdef int overflow = 0
    with nogil:
        for h in range(num_hands):
            _init(r, &s)
            # partial Fisher-Yates: the first ncards of a shuffled deck, dealt in order
            for i in range(r.deck_len):
                deck[i] = r.deck[i]
            for i in range(ncards):
                k = i + <int>_below(&state, r.deck_len - i)
                tmp = deck[i]
                deck[i] = deck[k]
                deck[k] = tmp
            k = 0
            nd = 0
            while not s.terminal:
                p = _current_player(r, &s)
                if p == P_CHANCE:
                    if record:
                        rec_cards[h, k] = deck[k]
                    _deal(r, &s, deck[k])
                    k += 1
                    continue
                mb = _max_bet(r, &s)
                kinds = 1
                if _bet(&s, p) < mb:
                    kinds += 1
                if _raise_range(r, &s, p, &lo, &hi):
                    kinds += 1
                else:
                    lo = hi = -1
                kind = <int>_below(&state, kinds)
                if not (kinds == 3 or (kinds == 2 and lo < 0)):
                    kind = kind + 1   # no fold: the kinds are call[, raise]
                if kind == 2:
                    if r.is_limit:
                        action = ACT_RAISE
                    else:
                        action = ACT_RAISE + lo + <int64_t>_below(&state, <uint64_t>(hi - lo + 1))
                else:
                    action = kind
                if record:
                    if nd < L:
                        c = mb - _bet(&s, p)
                        if _remaining(r, &s, p) < c:
                            c = _remaining(r, &s, p)
                        rec_actions[h, nd] = action
                        rec_views[h, nd, 0] = 1 if _bet(&s, p) < mb else 0
                        rec_views[h, nd, 1] = c
                        rec_views[h, nd, 2] = lo
                        rec_views[h, nd, 3] = hi
                    else:
                        overflow = 1
                nd += 1
                _apply(r, &s, action)
            decisions += nd
            if record:
                while k < ncards:  # the undealt rest of the shuffle, for completeness
                    rec_cards[h, k] = deck[k]
                    k += 1
            _winnings(r, &s, won)
            for p in range(n):
                out[h, p] = won[p] - s.spent[p]
    if overflow:
        raise ValueError(f"a hand had more than record_length={record_length} decisions; pass a larger one")
    if not record:
        return out_arr, decisions, None
    return out_arr, decisions, {"cards": cards_arr, "actions": actions_arr, "views": views_arr}
