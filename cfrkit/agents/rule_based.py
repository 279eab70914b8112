"""A^R: a rule-based no-limit hold'em agent (heads-up and multiway), OpenHoldem's first baseline.

OpenHoldem suggests comparing every new agent with a rule-based one as a sanity check.  This one is
written as a poker player would: preflop ranges in poker notation (``PREFLOP_RANGES``), postflop
rules on made-hand strength, draws and potential, pot odds and board texture; bet sizes are
fractions of the pot.  Every rule is deterministic and looks only at the public state and the hole
cards, so the agent computes the rule for all 1326 hands at once (numpy) and

* ``act(state)`` plays the row of its own hand;
* ``hand_strategy(state)`` returns the whole table (a pure strategy: each row one-hot).

**Preflop** (``_preflop``).  Position is the number of players still to act after us preflop
(heads-up: the small blind / button acts first).  Depth is the effective stack in big blinds.

* at most ``SHORT_STACK_BB`` deep: push or fold (``push``), call an all-in with ``call_push``;
* unopened pot: raise with ``open[position]`` to ``OPEN_SIZE_BB`` (+1 bb per limper); the big blind
  checks what it does not raise (``raise_vs_limp``);
* facing one raise: re-raise ``three_bet`` to 3x the raise (3.5x out of position), call
  ``call_open`` (a call needs the raise to be at most ``BIG_RAISE_BB``);
* facing a re-raise: all-in / 5-bet with ``four_bet``, call with ``call_three_bet``;
* any raise to more than ``BIG_RAISE_BB`` (the pot-odds rule): besides the ranges above, call with
  hands whose equity against a random hand is at least the pot odds plus ``BIG_RAISE_MARGIN``.

**Postflop** (``_postflop``).  Per hand, from the cards kernels (:mod:`cfrkit.cards.equity`):
``hs`` = hand strength now against a uniform hand (win + tie/2), ``ehs`` = hand strength after
one more card averaged over that card (the potential; river: ``hs``; a fixed spread sample of
``NEXT_CARD_SAMPLE`` next cards), ``outs`` = next cards that lift a hand from below 0.7 to at
least 0.85 (draws; counted on the sample and scaled to the whole deck).  Against ``k`` opponents strengths are
raised to the power ``k``.  Board texture: *wet* when three cards of a suit or three ranks within
a five-rank window are out, *paired* when a rank repeats.

* checked to us: value bet with strength >= ``VALUE_BET`` (river: ``RIVER_VALUE_BET``) for
  ``BET_WET`` of the pot on wet boards else ``BET_DRY``, a full pot with the nuts-ish
  (>= ``NUT_STRENGTH``); semi-bluff draws with >= ``DRAW_OUTS`` outs heads-up; as the preflop
  raiser heads-up on the flop, continuation-bet ``CBET`` of the pot with a fixed ``CBET_SHARE`` of
  the other hands (chosen by a hash of hand and board, so the rule stays deterministic);
* facing a bet: raise ``RAISE_POT`` of the pot with strength >= ``RAISE_STRENGTH``; call when
  strength >= pot odds + a margin growing with the bet size (``CALL_MARGIN`` + ``CALL_MARGIN_SLOPE``
  x bet / pot), or with a draw whose outs pay the odds; otherwise fold;
* a bet that would leave less than ``ALLIN_REST`` of the pot behind goes all-in.

Limit games use the same rules with the fixed raise.  Games that are not 52-card two-hole-card
hold'em play check/call (the kernels are for Texas hold'em).
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from cfrkit.agents.poker import hand_class, parse_range
from cfrkit.games.holdem.game import CALL, FOLD, RAISE, HoldemState, raise_action
from cfrkit.poker.agent import HandStrategy, PokerAgent

#: Preflop ranges, in poker notation.  ``open`` is keyed by players still to act after us preflop
#: (heads-up: ``1`` is the small blind / button); larger keys use the tightest listed range.
PREFLOP_RANGES: Dict[str, object] = {
    "open": {
        1: "22+,A2+,K2+,Q2s+,Q5o+,J3s+,J7o+,T5s+,T7o+,95s+,97o+,84s+,86o+,74s+,76o,63s+,65o,53s+,43s",  # heads-up SB
        2: "22+,A2s+,A7o+,K8s+,KTo+,Q9s+,QTo+,J9s+,JTo,T8s+,97s+,87s,76s,65s",                # button
        3: "22+,A2s+,A9o+,K9s+,KJo+,Q9s+,QJo,J9s+,T9s,98s,87s",                              # cutoff
        4: "55+,A8s+,ATo+,KTs+,KQo,QTs+,JTs",                                                 # middle position
        5: "77+,ATs+,AJo+,KQs",                                                               # early position
    },
    "raise_vs_limp": "77+,A9s+,ATo+,KTs+,KQo",
    "three_bet": "TT+,AJs+,KQs,AQo+",
    "call_open": "22-99,A2s-ATs,KTs-KJs,QTs+,J9s+,T8s+,98s,87s,76s,65s,A9o-AJo,KJo+,QJo",
    "four_bet": "QQ+,AKs,AKo",
    "call_three_bet": "88-JJ,AQs,AJs,KQs,AQo",
    "push": "22+,A2+,K7s+,K9o+,Q9s+,QTo+,J9s+,T9s",
    "call_push": "55+,A7s+,A9o+,KTs+,KQo",
}

OPEN_SIZE_BB = 2.5
SHORT_STACK_BB = 12.0
BIG_RAISE_BB = 10.0
BIG_RAISE_MARGIN = 0.08

VALUE_BET = 0.78
RIVER_VALUE_BET = 0.80
NUT_STRENGTH = 0.95
BET_WET = 0.75
BET_DRY = 0.5
CBET = 0.4
CBET_SHARE = 0.4
DRAW_OUTS = 8
RAISE_STRENGTH = 0.92
RAISE_POT = 0.8
CALL_MARGIN = 0.05
CALL_MARGIN_SLOPE = 0.12
ALLIN_REST = 0.3

_NUM_PAIRS = 1326
#: next cards sampled for the potential and the outs (flop and turn)
NEXT_CARD_SAMPLE = 16


_PAIRS: Optional[np.ndarray] = None


class PostflopContext(NamedTuple):
    """The betting's part of A^R's postflop rules at one state (:meth:`RuleBasedAgent.postflop_context`).

    ``k``: opponents still in (strengths are raised to that power); ``river``: the board has five cards (``nboard``);
    ``free``: nothing to call.  Free: the rules, first match wins, are the nuts (hs^k >= ``NUT_STRENGTH`` with a
    value strength) -> ``nut``, a value strength on a wet / dry board -> ``wet`` / ``dry``, (``draw_rule``) outs >=
    ``DRAW_OUTS`` -> ``draw``, (``cbet_rule``) the c-bet share -> ``cbet``, else check.  Facing a bet: strength >=
    ``RAISE_STRENGTH`` (and hs^k >= 0.75 before the river) -> ``raise_``, strength >= ``need`` -> call, a draw whose
    outs pay the pot ``odds`` (heads-up) -> call, else fold (check where folding is not legal, ``fold_legal``).
    Actions are action ids, None where no raise is legal (the rule is then skipped)."""
    k: int
    river: bool
    nboard: int
    free: bool
    fold_legal: bool
    nut: Optional[int]
    wet: Optional[int]
    dry: Optional[int]
    draw: Optional[int]
    draw_rule: bool
    cbet: Optional[int]
    cbet_rule: bool
    raise_: Optional[int]
    odds: float
    need: float
    value_bet: float = VALUE_BET          # the value strength of this street (``RIVER_VALUE_BET`` on the river)
    nut_strength: float = NUT_STRENGTH
    raise_strength: float = RAISE_STRENGTH
    made_min: float = 0.75                # hs^k needed besides the strength to raise before the river
    draw_outs: int = DRAW_OUTS
    outs_mult: float = 1.0                # the outs' pot odds count twice on the flop (two cards to come)


def _pairs() -> np.ndarray:
    """int64[1326, 2]: the hole pairs in cfrkit's order (built once)."""
    global _PAIRS
    if _PAIRS is None:
        from cfrkit.cards.hands import HOLE_PAIRS

        _PAIRS = np.asarray(HOLE_PAIRS, dtype=np.int64)
        _PAIRS.setflags(write=False)
    return _PAIRS


_CLASS_CACHE: Optional[np.ndarray] = None
_PREFLOP_EQ: Optional[np.ndarray] = None


def _pair_classes() -> np.ndarray:
    """object[1326]: the 169-class label (``"AKs"``) of every hole pair."""
    global _CLASS_CACHE
    if _CLASS_CACHE is None:
        _CLASS_CACHE = np.array([hand_class(p) for p in _pairs()], dtype=object)
    return _CLASS_CACHE


def _range_mask(text: str) -> np.ndarray:
    classes = parse_range(text)
    return np.array([c in classes for c in _pair_classes()], dtype=bool)


_MASKS: Dict[str, np.ndarray] = {}


def range_mask(text: str) -> np.ndarray:
    """bool[1326]: pairs whose class is in the range ``text`` (poker notation; cached)."""
    if text not in _MASKS:
        _MASKS[text] = _range_mask(text)
    return _MASKS[text]


def preflop_equity() -> np.ndarray:
    """float64[1326]: preflop equity of each pair against one uniformly random hand.

    From the cards kernel (E[HS] over 4000 sampled boards, fixed seed), averaged over the pairs
    of a class so suit-isomorphic hands get one value."""
    global _PREFLOP_EQ
    if _PREFLOP_EQ is None:
        from cfrkit.cards.equity import hand_strength_stats

        raw = hand_strength_stats([], num_samples=4000, seed=12345).ehs
        classes = _pair_classes()
        out = np.empty(_NUM_PAIRS)
        for c in set(classes):
            idx = classes == c
            out[idx] = raw[idx].mean()
        _PREFLOP_EQ = out
    return _PREFLOP_EQ


_CARD_PAIRS: Optional[np.ndarray] = None


def _pairs_with_card() -> np.ndarray:
    """bool[52, 1326]: the pairs holding each card."""
    global _CARD_PAIRS
    if _CARD_PAIRS is None:
        pairs = _pairs()
        out = np.zeros((52, _NUM_PAIRS), dtype=bool)
        out[pairs[:, 0], np.arange(_NUM_PAIRS)] = True
        out[pairs[:, 1], np.arange(_NUM_PAIRS)] = True
        _CARD_PAIRS = out
    return _CARD_PAIRS


def _masses(strengths: np.ndarray, rows: Optional[np.ndarray]):
    """(win, lose, compatible) uniform opponent counts of the pairs ``rows`` (all when None) for
    strengths int32[B, 1326]; shapes [B, len(rows)].  Equal to ``showdown_masses`` with a uniform
    range (integer counts, exact in float64), at O(1326) per row instead of a sort per board."""
    from cfrkit.cards.equity import showdown_masses

    if rows is None:
        return showdown_masses(strengths, np.ones(_NUM_PAIRS))
    b = strengths.shape[0]
    win = np.zeros((b, len(rows)))
    lose = np.zeros((b, len(rows)))
    compat = np.zeros((b, len(rows)))
    for k, r in enumerate(rows):
        opp = strengths[:, _opponent_pairs(int(r))]  # pairs sharing no card with r
        own = strengths[:, r:r + 1]
        live = own[:, 0] > 0  # a pair blocked by the board gets 0, as in showdown_masses
        valid = opp > 0  # opponent pairs not blocked by the board
        compat[:, k] = np.count_nonzero(valid, axis=1) * live
        lose[:, k] = np.count_nonzero(opp > own, axis=1) * live
        win[:, k] = np.count_nonzero(valid & (opp < own), axis=1) * live
    return win, lose, compat


_OPPONENTS: Dict[int, np.ndarray] = {}


def _opponent_pairs(r: int) -> np.ndarray:
    """int64[1225]: indices of the pairs that share no card with pair ``r`` (cached)."""
    idx = _OPPONENTS.get(r)
    if idx is None:
        a, c = _pairs()[r]
        with_card = _pairs_with_card()
        idx = np.flatnonzero(~(with_card[a] | with_card[c]))
        _OPPONENTS[r] = idx
    return idx


def _connected_table() -> List[bool]:
    """Per rank bit set (13 bits): whether 3 of its ranks lie within one of the windows of 5 consecutive ranks
    ``lo .. lo + 4``, ``lo`` = -1 .. 8 (a straight-draw board; the ace counts high only)."""
    bits = (np.arange(1 << 13)[:, None] >> np.arange(13)) & 1
    within = np.stack([bits[:, max(lo, 0):lo + 5].sum(axis=1) for lo in range(-1, 9)], axis=1)
    return (within >= 3).any(axis=1).tolist()


#: the connectedness of every rank bit set, read once per board's texture
_CONNECTED = _connected_table()


class BoardFeatures:
    """Per-pair postflop features of one board (arrays of 1326; blocked pairs get 0).

    hs: strength now vs a uniform hand; ehs: strength after one more card (average; river = hs);
    outs: next cards lifting a hand from < 0.7 to >= 0.85; wet / paired: board texture flags.
    ``rows``: compute the arrays for these pair indices only (in that order): what ``act`` needs,
    with the same values as the full arrays at those pairs.
    """

    def __init__(self, board: Tuple[int, ...], rows: Optional[np.ndarray] = None, compiled: bool = True):
        # the equity kernel directly: the boards are distinct cards of a dealt hand by construction,
        # so the checks of cards.equity.board_strengths(_batch) would only cost time
        from cfrkit._kernels.equity import board_strengths as _strengths

        if rows is not None and compiled and len(rows) == 1 and _pair_features_boards is not None:
            # one pair (act's own hand): its counts from the rank classes, no 1326-pair rows (the same numbers)
            self.hs, self.ehs, self.outs, wet = pair_features_on_boards([board], int(rows[0]))
            self.blocked = np.array([_touches(board, int(rows[0]))])
            self._texture(board)
            return
        board_strengths_batch = _strengths
        strengths = _strengths(np.array([board], dtype=np.uint8))[0]
        if rows is not None and compiled and _pair_row_features is not None:
            self._rows_compiled(board, rows, strengths)
            return
        win, lose, compat = _masses(strengths[None, :], rows)
        win, lose, compat = win[0], lose[0], compat[0]
        tie = compat - win - lose
        self.blocked = (strengths == 0) if rows is None else (strengths[rows] == 0)
        self.hs = np.where(compat > 0, (win + 0.5 * tie) / np.maximum(compat, 1e-12), 0.0)
        width = len(self.hs)
        if len(board) < 5:
            rest = [c for c in range(52) if c not in board]
            # a fixed, evenly spread sample of the next cards (every k-th card of the rest: all ranks,
            # all suits), so the features stay deterministic and cost a third of the full enumeration
            step = max(1, len(rest) // NEXT_CARD_SAMPLE)
            sample = rest[::step]
            boards = np.array([list(board) + [c] for c in sample], dtype=np.uint8)
            s = board_strengths_batch(boards)
            w, l_, c = _masses(s, rows)
            nxt = np.where(c > 0, (w + 0.5 * (c - w - l_)) / np.maximum(c, 1e-12), 0.0)
            valid = (s > 0) if rows is None else (s[:, rows] > 0)
            count = valid.sum(axis=0)
            total = np.zeros(width)
            for row in nxt * valid:  # next cards in order, so any subset of pairs sums alike
                total += row
            self.ehs = np.where(count > 0, total / np.maximum(count, 1), 0.0)
            hits = ((nxt >= 0.85) & valid).sum(axis=0) * (self.hs < 0.7)
            self.outs = np.rint(hits * (len(rest) - 2) / np.maximum(count, 1)).astype(np.int64)
        else:
            self.ehs = self.hs.copy()
            self.outs = np.zeros(width, dtype=np.int64)
        self._texture(board)

    def _texture(self, board) -> None:
        ranks = 0  # bit set of the board's ranks
        suits = [0, 0, 0, 0]
        for c in board:
            ranks |= 1 << (c >> 2)
            suits[c & 3] += 1
        self.wet = max(suits) >= 3 or _CONNECTED[ranks]
        self.paired = bin(ranks).count("1") < len(board)

    def _rows_compiled(self, board: Tuple[int, ...], rows: np.ndarray, strengths: np.ndarray) -> None:
        """The ``rows`` features through ``pair_masses.pair_row_features`` (bit-for-bit the numpy
        path's numbers: the same integer counts and float64 operations in the same order)."""
        from cfrkit._kernels.equity import board_strengths as _strengths

        width = len(rows)
        hs = np.zeros(width)
        blocked = np.zeros(width, dtype=bool)
        ehs = np.zeros(width)
        outs = np.zeros(width, dtype=np.int64)
        if len(board) < 5:
            rest = [c for c in range(52) if c not in board]
            step = max(1, len(rest) // NEXT_CARD_SAMPLE)
            nxt = _strengths(np.array([list(board) + [c] for c in rest[::step]], dtype=np.uint8))
        else:
            nxt = np.zeros((0, _NUM_PAIRS), dtype=np.int32)
        for k, r in enumerate(rows):
            r = int(r)
            h, blk, total, count, hits = _pair_row_features(strengths, nxt, _opponent_pairs(r), r)
            hs[k], blocked[k] = h, blk
            if len(board) < 5:
                ehs[k] = total / count if count > 0 else 0.0
                outs[k] = round(hits * (len(rest) - 2) / max(count, 1)) if h < 0.7 else 0
            else:
                ehs[k] = h
        self.hs, self.blocked, self.ehs, self.outs = hs, blocked, ehs, outs
        self._texture(board)


try:  # the compiled row features (pyx/pair_masses.pyx); the numpy path below is the reference
    from cfrkit._kernels.pair_masses import pair_row_features as _pair_row_features
except ImportError:  # pragma: no cover - a checkout whose kernels were not rebuilt
    _pair_row_features = None
try:  # one pair's features on many boards from rank classes (pyx/range_equity.pyx)
    from cfrkit._kernels.range_equity import pair_features_boards as _pair_features_boards
except ImportError:  # pragma: no cover - a checkout whose kernels were not rebuilt
    _pair_features_boards = None


def pair_features_on_boards(boards, pair: int):
    """``(hs, ehs, outs, wet)`` of hole pair ``pair`` (index 0..1325) on each of K boards of one street (3, 4 or 5
    distinct card ids each): float64[K], float64[K], int64[K], bool[K], equal bit for bit to the rows of
    ``BoardFeatures(board, [pair])`` (``hs``/``ehs`` fractions of the opponent pairs, ``outs`` cards).  The boards'
    cards and their next cards are counted by ``range_equity.pair_features_boards`` (rank classes, the flush pairs
    as cards) instead of evaluating all 1326 pairs on every next board; without the kernel, ``BoardFeatures``."""
    if _pair_features_boards is None or not len(boards):  # kernels not rebuilt (or no boards): the reference path
        keys = [tuple(sorted(int(c) for c in bd)) for bd in boards]
        feats = [BoardFeatures(k, np.array([pair]), compiled=False) for k in keys]
        return (np.array([f.hs[0] for f in feats]), np.array([f.ehs[0] for f in feats]),
                np.array([f.outs[0] for f in feats], dtype=np.int64), np.array([f.wet for f in feats], dtype=bool))
    try:
        cards = np.array(boards, dtype=np.uint8)
    except ValueError:  # ragged
        cards = None
    if cards is None or cards.ndim != 2:
        raise ValueError(f"pair_features_on_boards: boards of one street expected, got sizes "
                         f"{sorted({len(b) for b in boards})}")
    n = cards.shape[1]
    hs, _, total, count, hits, wet = _pair_features_boards(cards, int(pair), NEXT_CARD_SAMPLE)
    if n >= 5:
        return hs, hs.copy(), np.zeros(len(hs), dtype=np.int64), wet
    # _rows_compiled's formulas: the mean share over the live next cards, and the outs scaled to the deck
    ehs = np.where(count > 0, total / np.maximum(count, 1), 0.0)
    outs = np.where(hs < 0.7, np.rint(hits * (52 - n - 2) / np.maximum(count, 1)), 0).astype(np.int64)
    return hs, ehs, outs, wet


def _touches(board, pair: int) -> bool:
    """Whether hole pair ``pair`` (index 0..1325) holds a card of ``board``."""
    a, b = _pairs()[pair]
    return int(a) in board or int(b) in board


_FEATURES: "OrderedDict[Tuple[int, ...], BoardFeatures]" = OrderedDict()


def board_features(board) -> BoardFeatures:
    """Cached :class:`BoardFeatures` of a board (least recently used of 2048 evicted)."""
    key = tuple(sorted(int(c) for c in board))
    feats = _FEATURES.get(key)
    if feats is None:
        feats = BoardFeatures(key)
        _FEATURES[key] = feats
        if len(_FEATURES) > 2048:
            _FEATURES.popitem(last=False)
    else:
        _FEATURES.move_to_end(key)
    return feats


#: (board, rows) -> BoardFeatures of those rows (``act``'s own hand), least recently added evicted
_ROW_FEATURES: "OrderedDict[tuple, BoardFeatures]" = OrderedDict()


class _RowFeatures:
    """Rows of cached full :class:`BoardFeatures`."""

    def __init__(self, full: BoardFeatures, rows: np.ndarray):
        self.hs, self.ehs, self.outs = full.hs[rows], full.ehs[rows], full.outs[rows]
        self.blocked = full.blocked[rows]
        self.wet, self.paired = full.wet, full.paired


def _hash_share(board: Tuple[int, ...], share: float) -> np.ndarray:
    """bool[1326]: a fixed pseudo-random ``share`` of the pairs, depending on the board only."""
    seed = int.from_bytes(hashlib.blake2b(bytes(sorted(board)), digest_size=8).digest(), "little")
    return np.random.default_rng(seed).random(_NUM_PAIRS) < share


#: (definition, player, betting, board) -> (actions, choice) of every A^R (least recently used evicted)
_TABLES: "OrderedDict[tuple, Tuple[np.ndarray, np.ndarray]]" = OrderedDict()


class RuleBasedAgent(PokerAgent):
    """A^R (see the module docstring).  Deterministic: no seed, same state -> same action."""

    name = "rule-based"
    #: act plays the one-hot row of hand_strategy for its own hand (AIVAT's lookahead asks act: one hand)
    pure_strategy = True

    def __init__(self):
        # the rules are deterministic and keep no state, so every A^R shares one table cache (a
        # server seats one A^R per match: they all meet the same preflop spots)
        self._cache = _TABLES
        self._last: Optional[tuple] = None  # (table key, pair, action) of the last postflop row answer

    def __getstate__(self):  # the shared cache stays behind (a pickled agent uses the receiver's)
        state = dict(self.__dict__)
        state.pop("_cache", None)
        state.pop("_last", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._cache = _TABLES
        self._last = None

    # -------------------------------------------------------------- public interface
    def act(self, state: HoldemState) -> int:
        p = state.current_player()
        hole = state.hole[p]
        if not self._texas(state) or len(hole) != 2:
            return CALL
        a, b = int(hole[0]), int(hole[1])  # dealt cards: distinct card ids
        if a > b:
            a, b = b, a
        pair = b * (b - 1) // 2 + a  # cfrkit.cards.hands.pair_index
        if state.round > 0:
            key = self._table_key(state)
            if key not in self._cache:
                # postflop the rules need this hand's row only: features of one pair, not of 1326; the
                # last answer is kept, as AIVAT asks own_strategy and then act at the same decision
                last = self._last
                if last is not None and last[0] == key and last[1] == pair:
                    return last[2]
                actions, choice = self._postflop(state, p, rows=np.array([pair]))
                action = int(actions[choice[0]])
                self._last = (key, pair, action)
                return action
        actions, choice = self._table(state)
        return int(actions[choice[pair]])

    def own_strategy(self, state: HoldemState):
        """``(actions int64[1], probs float64[1])``: the pure action :meth:`act` plays with the hand held
        (its row of :meth:`hand_strategy`; postflop from that hand's features only, not 1326 hands')."""
        return np.array([self.act(state)], dtype=np.int64), np.ones(1)

    def hand_strategy(self, state: HoldemState) -> HandStrategy:
        actions, choice = self._table(state)
        probs = np.zeros((_NUM_PAIRS, len(actions)))
        probs[np.arange(_NUM_PAIRS), choice] = 1.0
        if state.board:
            from cfrkit.cards.hands import blocked_pairs

            probs[blocked_pairs(state.board)] = 0.0
        return HandStrategy(np.asarray(actions, dtype=np.int64), probs)

    # -------------------------------------------------------------- the table
    @staticmethod
    def _texas(state: HoldemState) -> bool:
        d = state.d
        return (d.num_suits, d.num_ranks, d.num_hole_cards) == (4, 13, 2) and tuple(d.num_board_cards[:4]) == (0, 3, 1, 1)

    @staticmethod
    def _table_key(state: HoldemState) -> tuple:
        return (state.d, state.current_player(), state.betting_string(), tuple(state.board))

    def _table(self, state: HoldemState) -> Tuple[np.ndarray, np.ndarray]:
        """(actions int64[A], index into actions per pair int64[1326]) at ``state``."""
        p = state.current_player()
        key = self._table_key(state)
        hit = self._cache.get(key)
        if hit is not None:
            try:
                self._cache.move_to_end(key)
            except KeyError:  # evicted meanwhile by another thread's agent
                pass
            return hit
        if not self._texas(state):
            result = (np.array([CALL]), np.zeros(_NUM_PAIRS, dtype=np.int64))
        elif state.round == 0:
            result = self._preflop(state, p)
        else:
            result = self._postflop(state, p)
        self._cache[key] = result
        while len(self._cache) > 4096:
            try:
                self._cache.popitem(last=False)
            except KeyError:
                break
        return result

    # sizes ---------------------------------------------------------------------
    def _raise_to_pot_fraction(self, state: HoldemState, p: int, fraction: float) -> Optional[int]:
        """Action id of a raise of ``fraction`` of the pot after calling (clamped; all-in when little
        would be left), or None if no raise is legal."""
        rng = state.raise_range(p)
        if rng is None:
            return None
        if state.d.is_limit:
            return RAISE
        to_call = state.call_amount(p)
        pot_after_call = state.pot() + to_call
        target = state.max_spent() + int(round(fraction * pot_after_call))
        target = min(rng[1], max(rng[0], target))
        rest = rng[1] - target
        if rest < ALLIN_REST * (pot_after_call + 2 * (target - state.max_spent())):
            target = rng[1]
        return raise_action(target)

    def _raise_to_total(self, state: HoldemState, p: int, total: float) -> Optional[int]:
        rng = state.raise_range(p)
        if rng is None:
            return None
        if state.d.is_limit:
            return RAISE
        target = min(rng[1], max(rng[0], int(round(total))))
        if rng[1] - target < ALLIN_REST * target:
            target = rng[1]
        return raise_action(target)

    @staticmethod
    def _assemble(state: HoldemState, decisions: List[Tuple[np.ndarray, Optional[int]]]) -> Tuple[np.ndarray, np.ndarray]:
        """First matching rule wins: ``decisions`` = [(mask, action or None)], checked in order;
        hands matching none check (when free) or fold."""
        fallback = FOLD if state.is_legal(FOLD) else CALL
        actions: List[int] = []
        width = next((len(m) for m, _ in decisions if isinstance(m, np.ndarray)), _NUM_PAIRS)
        choice = np.full(width, -1, dtype=np.int64)
        for mask, action in decisions:
            if action is None:
                continue
            if action == FOLD and not state.is_legal(FOLD):
                action = CALL
            free = (choice < 0) & mask
            if not free.any():
                continue
            if action not in actions:
                actions.append(action)
            choice[free] = actions.index(action)
        if (choice < 0).any():
            if fallback not in actions:
                actions.append(fallback)
            choice[choice < 0] = actions.index(fallback)
        return np.asarray(actions, dtype=np.int64), choice

    # preflop -------------------------------------------------------------------
    def _preflop(self, state: HoldemState, p: int):
        d = state.d
        n = d.num_players
        bb = float(d.big_blind or 1)
        live = [q for q in range(n) if not state.folded[q]]
        # players still to act after p in the preflop order (first_player onwards)
        order = [(d.first_player[0] + i) % n for i in range(n)]
        behind = len(order) - 1 - order.index(p)
        raises = [a for a in state.actions[0] if a[1] == "r"]
        to_call = state.call_amount(p)
        odds = to_call / float(state.pot() + to_call) if to_call else 0.0
        eff = min(state.remaining(p) + state.bet(p),
                  max(state.remaining(q) + state.bet(q) for q in live if q != p)) / bb
        eq = preflop_equity()
        big_raise = (state.max_bet() / bb) > BIG_RAISE_BB
        odds_mask = eq >= odds + BIG_RAISE_MARGIN + 0.02 * max(0, len(live) - 2)
        allin = self._raise_to_total(state, p, float(d.stack[p]))
        R = PREFLOP_RANGES
        if eff <= SHORT_STACK_BB:
            if not raises:
                return self._assemble(state, [(range_mask(R["push"]), allin),
                                              (np.ones(_NUM_PAIRS, bool), CALL if to_call == 0 else None)])
            return self._assemble(state, [(range_mask(R["call_push"]) | odds_mask, allin if allin is not None else CALL)])
        if not raises:
            limpers = sum(1 for a in state.actions[0] if a[1] == "c")
            if to_call == 0:  # big blind, limped pot
                size = self._raise_to_total(state, p, (OPEN_SIZE_BB + 1 + limpers) * bb)
                return self._assemble(state, [(range_mask(R["raise_vs_limp"]), size),
                                              (np.ones(_NUM_PAIRS, bool), CALL)])
            opens = R["open"]
            key = min(max(behind, 1), max(opens))
            size = self._raise_to_total(state, p, (OPEN_SIZE_BB + limpers) * bb + (0.5 * bb if n > 2 else 0))
            return self._assemble(state, [(range_mask(opens[key]), size)])
        last_raise = raises[-1][2]
        in_position = (n == 2 and p == order[0]) or (n > 2 and behind == 2)
        if len(raises) == 1:
            size = self._raise_to_total(state, p, last_raise * (3.0 if in_position else 3.5))
            rules = [(range_mask(R["three_bet"]), size)]
            if big_raise:
                rules += [(range_mask(R["four_bet"]), allin), (odds_mask, CALL)]
            else:
                rules.append((range_mask(R["call_open"]), CALL))
            return self._assemble(state, rules)
        if len(raises) == 2:
            size = self._raise_to_total(state, p, last_raise * 2.3)
            rules = [(range_mask(R["four_bet"]), size)]
            rules.append((range_mask(R["call_three_bet"]) | (odds_mask if big_raise else False), CALL))
            return self._assemble(state, rules)
        return self._assemble(state, [(range_mask(R["four_bet"]), allin if allin is not None else CALL),
                                      (range_mask(R["call_three_bet"]) & odds_mask, CALL)])

    # postflop ------------------------------------------------------------------
    def _postflop(self, state: HoldemState, p: int, rows: Optional[np.ndarray] = None):
        """Postflop table of all pairs, or (``rows``) of those pairs only (same rules, same values)."""
        board = tuple(state.board)
        f = self._features(board, rows)

        def share():
            mask = _hash_share(board, CBET_SHARE)
            return mask if rows is None else mask[rows]
        return self._postflop_rules(state, p, f.hs, f.ehs, f.outs, f.wet, share)

    @staticmethod
    def _features(board: Tuple[int, ...], rows: Optional[np.ndarray]):
        """The :class:`BoardFeatures` of ``board`` (all pairs, or ``rows``), from the caches when there."""
        if rows is None:
            return board_features(board)
        key = tuple(sorted(int(c) for c in board))
        cached = _FEATURES.get(key)
        if cached is not None:
            return _RowFeatures(cached, rows)
        # a player often acts twice on a street (check, then facing a bet): keep its row
        row_key = (key, tuple(int(r) for r in rows))
        f = _ROW_FEATURES.get(row_key)
        if f is None:
            f = BoardFeatures(key, rows)
            _ROW_FEATURES[row_key] = f
            while len(_ROW_FEATURES) > 1024:
                try:
                    _ROW_FEATURES.popitem(last=False)
                except KeyError:
                    break
        return f

    def act_on_boards(self, state: HoldemState, boards) -> Optional[np.ndarray]:
        """int64[K]: the action :meth:`act` plays at ``state`` with its board replaced by each of ``boards`` (K
        boards of the same street, none touching the hand; the same betting), or None where ``act`` does not play
        the postflop rules (preflop, not Texas hold'em, no hand).  One pass of the rules over the K boards (each
        board's features of this hand, the betting's sizes once): AIVAT's street lookahead over a chance node's
        sampled boards."""
        p = state.current_player()
        hole = state.hole[p]
        if state.round == 0 or not self._texas(state) or len(hole) != 2:
            return None
        hs, ehs, outs, wet = self.features_on_boards(state, boards)
        actions, choice = self._postflop_rules(state, p, hs, ehs, outs, wet, lambda: self.cbet_share_on_boards(state, boards),
                                               boards=len(boards[0]))
        return actions[choice]

    @staticmethod
    def features_on_boards(state: HoldemState, boards) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(hs, ehs, outs, wet)`` of the hand of the player to act at ``state`` on each of K boards of one street
        (:func:`pair_features_on_boards`: float64[K], float64[K], int64[K], bool[K]), what its postflop rules read."""
        a, b = sorted(int(c) for c in state.hole[state.current_player()])
        return pair_features_on_boards(boards, b * (b - 1) // 2 + a)

    @staticmethod
    def cbet_share_on_boards(state: HoldemState, boards) -> np.ndarray:
        """bool[K]: whether the hand of the player to act is in the c-bet share of each of K boards."""
        a, b = sorted(int(c) for c in state.hole[state.current_player()])
        row = b * (b - 1) // 2 + a
        return np.array([_hash_share(tuple(int(c) for c in bd), CBET_SHARE)[row] for bd in boards])

    def board_rules_context(self, state: HoldemState) -> Optional[PostflopContext]:
        """The :class:`PostflopContext` of the player to act where :meth:`act` (and :meth:`act_on_boards`) plays the
        postflop rules at ``state`` (after the preflop, Texas hold'em, a hand held), else None."""
        p = state.current_player()
        if state.round == 0 or not self._texas(state) or len(state.hole[p]) != 2:
            return None
        return self.postflop_context(state, p)

    def postflop_context(self, state: HoldemState, p: int, boards: Optional[int] = None) -> PostflopContext:
        """The betting's part of the postflop rules of seat ``p`` at ``state`` (the same for every hand and board
        of the street): opponents, thresholds, pot odds and the rules' actions (:class:`PostflopContext`);
        ``boards``: the board's number of cards when it is not ``state``'s (the same street).  The rules themselves
        (:meth:`_postflop_rules`, AIVAT's compiled lookahead) apply it to each hand's or board's features."""
        d = state.d
        nboard = len(state.board) if boards is None else int(boards)
        opponents = sum(1 for q in range(d.num_players) if q != p and not state.folded[q])
        k = max(1, opponents)
        river = nboard >= 5
        to_call = state.call_amount(p)
        pot = float(state.pot())
        fold_legal = state.is_legal(FOLD)
        if to_call == 0:
            preflop_raisers = [a[0] for a in state.actions[0] if a[1] == "r"]
            cbet = bool(nboard == 3 and k == 1 and preflop_raisers and preflop_raisers[-1] == p
                        and not state.actions[state.round])
            return PostflopContext(
                k=k, river=river, nboard=nboard, free=True, fold_legal=fold_legal,
                nut=self._raise_to_pot_fraction(state, p, 1.0),
                wet=self._raise_to_pot_fraction(state, p, BET_WET), dry=self._raise_to_pot_fraction(state, p, BET_DRY),
                draw=self._raise_to_pot_fraction(state, p, 0.5) if not river and k == 1 else None,
                draw_rule=not river and k == 1,
                cbet=self._raise_to_pot_fraction(state, p, CBET) if cbet else None, cbet_rule=cbet,
                raise_=None, odds=0.0, need=0.0, value_bet=RIVER_VALUE_BET if river else VALUE_BET)
        odds = to_call / (pot + to_call)
        bet_fraction = to_call / max(pot - to_call, 1.0)
        need = odds + CALL_MARGIN + CALL_MARGIN_SLOPE * min(bet_fraction, 2.0)
        return PostflopContext(k=k, river=river, nboard=nboard, free=False, fold_legal=fold_legal, nut=None, wet=None,
                               dry=None, draw=None, draw_rule=False, cbet=None, cbet_rule=False,
                               raise_=self._raise_to_pot_fraction(state, p, RAISE_POT), odds=odds, need=need,
                               outs_mult=2.0 if nboard == 3 else 1.0)

    def _postflop_rules(self, state: HoldemState, p: int, hs: np.ndarray, ehs: np.ndarray, outs: np.ndarray, wet,
                        share, boards: Optional[int] = None):
        """The postflop rules over feature arrays (one entry per hand, or per board of one hand): ``wet`` one flag
        for the board or a bool array (per board), ``share()`` the c-bet share mask, asked only where it applies;
        ``boards``: the board's number of cards when it is not ``state``'s (the same street)."""
        c = self.postflop_context(state, p, boards)
        width = len(hs)
        k, river = c.k, c.river
        strength = (hs if river else ehs) ** k
        made = hs ** k
        if c.free:
            value = strength >= c.value_bet
            nuts = (made >= c.nut_strength) & value
            rules = [(nuts, c.nut)]
            if isinstance(wet, np.ndarray):  # per board: the value bet's size splits into two disjoint rules
                rules += [(value & wet, c.wet), (value & ~wet, c.dry)]
            else:
                rules.append((value, c.wet if wet else c.dry))
            if c.draw_rule:
                rules.append((outs >= c.draw_outs, c.draw))
            if c.cbet_rule:
                rules.append((share(), c.cbet))
            rules.append((np.ones(width, bool), CALL))
            return self._assemble(state, rules)
        draw_pays = (outs / 46.0) * c.outs_mult >= c.odds
        rules = [((strength >= c.raise_strength) & (made >= c.made_min if not river else True), c.raise_),
                 (strength >= c.need, CALL),
                 ((outs >= c.draw_outs) & draw_pays & (k == 1), CALL)]
        return self._assemble(state, rules)
