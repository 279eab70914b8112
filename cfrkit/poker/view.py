"""The public view of a poker hand: what the match runner and the range-tracking evaluators (LBR,
AIVAT, DRL-BR) need of a poker game.

A :class:`PokerView` hides the differences between heads-up hold'em (``holdem``, private hands =
the 1326 hole-card pairs of :mod:`cfrkit.cards.hands`) and the Leduc family (``leduc``,
``leduc_nolimit``, private hands = the card ids ``0 .. num_cards-1``):

* private hands: ``num_hands``, the hand a player holds, a copy of a state with another hand;
* public cards and which hands they block;
* the chips each player has put in (``contributions``, blinds / antes included);
* seeded deals (hold'em: :func:`cfrkit.games.holdem.deals.deal_for_hand`; Leduc the same scheme);
* exact showdown equity (win + tie / 2) of a hand against a range over the board cards to come
  (LBR), and of one hand against another (AIVAT's fallback value function).

:func:`poker_view` builds the view of a game (``GameError`` for other games).
"""
from __future__ import annotations

import os
from itertools import permutations
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.cards.equity import (board_strengths, board_strengths_batch, hand_vs_hand_counts, runout_boards,
                                 runout_masses, showdown_masses)
from cfrkit.games.base import Game, GameError, State
from cfrkit.games.holdem.deals import deal_for_hand
from cfrkit.games.holdem.game import HoldemGame
from cfrkit.games.leduc import LeducPoker
from cfrkit.games.leduc_nolimit import LeducNoLimit
from cfrkit.games.registry import load

__all__ = ["HoldemView", "LeducView", "PREFLOP_BOARDS", "PokerView", "poker_view", "preflop_matchup_count"]


class PokerView:
    """Base class; see the module docstring.  All chip amounts are the game's chips."""

    game: Game
    num_hands: int
    big_blind: float
    is_limit: bool

    def hand_of(self, state: State, player: int) -> int:
        raise NotImplementedError

    def hands_dealt(self, state: State) -> bool:
        """Whether both players' private hands are dealt in ``state``."""
        raise NotImplementedError

    def with_hand(self, state: State, player: int, hand: int) -> State:
        """A copy of ``state`` where ``player`` holds ``hand`` (the other cards unchanged)."""
        raise NotImplementedError

    def hand_cards(self, hand: int) -> Tuple[int, ...]:
        raise NotImplementedError

    def public_cards(self, state: State) -> List[int]:
        raise NotImplementedError

    def blocked(self, cards: Sequence[int]) -> np.ndarray:
        """bool[num_hands]: hands sharing a card with ``cards``."""
        raise NotImplementedError

    def contributions(self, state: State) -> List[float]:
        """Chips each player has put in so far (blinds, antes and all rounds)."""
        raise NotImplementedError

    def stacks(self) -> List[float]:
        """Total chips each player can put in during a hand."""
        raise NotImplementedError

    def round_of(self, state: State) -> int:
        """Betting round, 0-based (preflop 0)."""
        raise NotImplementedError

    def num_rounds(self) -> int:
        raise NotImplementedError

    def deal(self, seed: int, hand_index: int) -> List[int]:
        """Chance outcomes of deal ``hand_index`` of a match seeded ``seed``, in dealing order."""
        raise NotImplementedError

    def equity_vs_range(self, state: State, hand: int, opp_range: np.ndarray,
                        samples: Optional[int] = None, seed: int = 0) -> Tuple[float, float]:
        """``(equity, standard error)`` of ``hand`` against ``opp_range`` over the board cards to come.

        Equity = P(win) + P(tie) / 2 with card removal (opponent hands sharing a card with ``hand``
        or the board are excluded).  Exact (error 0) unless the view must sample (hold'em preflop,
        or ``samples`` runouts asked for on the flop).  NaN if no compatible opponent hand remains.
        """
        raise NotImplementedError

    def equity_hands(self, state: State) -> float:
        """Player 0's exact equity against player 1's actual hand over the board cards to come."""
        raise NotImplementedError

    def legal(self, state: State, action: int) -> bool:
        return action in state.legal_actions()

    def describe(self, state: State) -> str:
        """Short public description of a state for error messages."""
        return f"{self.game.game_string()} public state {state.public_state_string()!r}"


class HoldemView(PokerView):
    """Heads-up hold'em (any ACPC definition with 2 players, 2 hole cards and a 52-card deck).

    With ``heads_up=False`` any hold'em table is accepted (the match runner deals and checks
    actions with it); the per-hand methods then assume 2 hole cards."""

    def __init__(self, game, heads_up: bool = True):
        if not isinstance(game, HoldemGame):
            raise GameError(f"not a holdem game: {game.game_string()!r}")
        d = game.definition
        # the match runner plays any table (heads_up=False); range evaluators need heads-up 2-card hold'em
        if heads_up and (d.num_players != 2 or d.num_hole_cards != 2 or len(d.deck()) != 52):
            raise GameError(f"range evaluators need heads-up hold'em with 2 hole cards and 52 cards, "
                            f"got {game.game_string()!r}")
        self.game = game
        self.d = d
        self.num_hands = 1326
        self.big_blind = float(d.big_blind or 1)  # ante-only tables: mbb per 1000 chips
        self.is_limit = d.is_limit
        self._equity_cache: dict = {}

    def hand_of(self, state, player: int) -> int:
        a, b = state.hole[player]
        a, b = int(a), int(b)
        if a > b:
            a, b = b, a
        if not 0 <= a < b < 52:  # not two distinct card ids: pair_index's error
            from cfrkit.cards.hands import pair_index

            return pair_index(a, b)
        return b * (b - 1) // 2 + a  # the pair index of cfrkit.cards.hands, without its checks

    def hands_dealt(self, state) -> bool:
        hole = state.hole
        return len(hole[0]) == 2 and len(hole[1]) == 2

    def with_hand(self, state, player: int, hand: int):
        from cfrkit.cards.hands import HOLE_PAIRS

        new = state.clone()
        a, b = HOLE_PAIRS[hand]
        new.hole[player] = [int(a), int(b)]
        return new

    def hand_cards(self, hand: int) -> Tuple[int, ...]:
        from cfrkit.cards.hands import HOLE_PAIRS

        return tuple(int(c) for c in HOLE_PAIRS[hand])

    def public_cards(self, state) -> List[int]:
        return list(state.board)

    def blocked(self, cards: Sequence[int]) -> np.ndarray:
        from cfrkit.cards.hands import blocked_pairs

        return blocked_pairs(list(cards)) if len(cards) else np.zeros(1326, dtype=bool)

    def contributions(self, state) -> List[float]:
        return [float(x) for x in state.spent]

    def stacks(self) -> List[float]:
        return [float(x) for x in self.d.stack]

    def round_of(self, state) -> int:
        return int(state.round)

    def num_rounds(self) -> int:
        return int(self.d.num_rounds)

    def deal(self, seed: int, hand_index: int) -> List[int]:
        return deal_for_hand(self.game, seed, hand_index)

    def legal(self, state, action: int) -> bool:
        return state.is_legal(int(action))

    def describe(self, state) -> str:
        from cfrkit.cards import cards_to_string

        return (f"betting {state.betting_string()!r}, board {cards_to_string(state.board) or '-'}, "
                f"seat {state.current_player()} to act")

    def equity_vs_range(self, state, hand: int, opp_range: np.ndarray,
                        samples: Optional[int] = None, seed: int = 0) -> Tuple[float, float]:
        board = list(state.board)
        rng = np.ascontiguousarray(opp_range, dtype=np.float64)
        if len(board) == 5:
            win, lose, compat = showdown_masses(board_strengths(board), rng)
            if compat[hand] <= 0:
                return float("nan"), 0.0
            tie = compat[hand] - win[hand] - lose[hand]
            return float((win[hand] + 0.5 * tie) / compat[hand]), 0.0
        mine = set(self.hand_cards(hand))
        if len(board) == 4 or (len(board) == 3 and samples is None):
            boards = runout_boards(board)
            keep = ~np.isin(boards[:, len(board):], list(mine)).any(axis=1)
            winm, tiem, compm = runout_masses(boards[keep], rng)
            if compm[hand] <= 0:
                return float("nan"), 0.0
            return float((winm[hand] + 0.5 * tiem[hand]) / compm[hand]), 0.0
        n = int(samples or 1000)
        boards = runout_boards(board, n * 2, seed)
        keep = ~np.isin(boards[:, len(board):], list(mine)).any(axis=1)
        boards = np.ascontiguousarray(boards[keep][:n])
        # per-board equities (for the standard error): strengths of all boards, masses per board
        strengths = board_strengths_batch(boards)
        win, lose, compat = showdown_masses(strengths, rng)
        c = compat[:, hand]
        if c.sum() <= 0:
            return float("nan"), 0.0
        score = win[:, hand] + 0.5 * (c - win[:, hand] - lose[:, hand])
        eq = float(score.sum() / c.sum())
        # ratio estimator's standard error
        k = len(c)
        resid = score - eq * c
        se = float(np.sqrt(np.sum(resid ** 2) / max(1, k - 1) / k) / max(c.mean(), 1e-300))
        return eq, se

    def equity_hands(self, state) -> float:
        """Player 0's equity (win + tie / 2) against player 1's hand over the board cards to come (exact).

        Preflop from the shipped exact matchup counts (:func:`preflop_matchup_count`, microseconds
        instead of 5 ms of enumeration; the same float64 as the enumeration, bit for bit), later
        rounds by enumeration (:func:`~cfrkit.cards.equity.hand_vs_hand_counts`, cached per hands and board)."""
        h0, h1 = state.hole
        board = state.board
        key = (tuple(h0), tuple(h1), tuple(board))
        hit = self._equity_cache.get(key)
        if hit is not None:
            return hit
        count = preflop_matchup_count(h0[0], h0[1], h1[0], h1[1]) if not board else None
        if count is not None:
            # (2 wins + ties) / (2 boards): the same real number as (w + t / 2) / (w + t + l), one rounding
            eq = count / (2.0 * PREFLOP_BOARDS)
        else:
            w, t, l = hand_vs_hand_counts(h0, h1, board)
            eq = (w + 0.5 * t) / (w + t + l)
        if len(self._equity_cache) > 4096:
            self._equity_cache.clear()
        self._equity_cache[key] = eq
        return eq


class LeducView(PokerView):
    """Limit and no-limit Leduc (any deck size): private hands are card ids."""

    def __init__(self, game):
        if not isinstance(game, (LeducPoker, LeducNoLimit)):
            raise GameError(f"not a Leduc-family game: {game.game_string()!r}")
        self.game = game
        self.num_hands = game.num_cards
        self.suits = game.suits
        self.big_blind = float(game.big_blind)
        self.is_limit = isinstance(game, LeducPoker)

    def hand_of(self, state, player: int) -> int:
        return int(state.private[player])

    def hands_dealt(self, state) -> bool:
        return len(state.private) >= 2  # the deal appends the private cards one by one

    def with_hand(self, state, player: int, hand: int):
        new = state.clone()
        new.private[player] = int(hand)
        return new

    def hand_cards(self, hand: int) -> Tuple[int, ...]:
        return (int(hand),)

    def public_cards(self, state) -> List[int]:
        return [state.public] if state.public >= 0 else []

    def blocked(self, cards: Sequence[int]) -> np.ndarray:
        out = np.zeros(self.num_hands, dtype=bool)
        out[list(cards)] = True
        return out

    def contributions(self, state) -> List[float]:
        return [float(x) for x in state.contrib]

    def stacks(self) -> List[float]:
        if self.is_limit:
            g = self.game
            return [float(g.ante + g.max_raises * sum(g.raise_sizes))] * 2
        return [float(self.game.stack)] * 2

    def round_of(self, state) -> int:
        return int(state.round)

    def num_rounds(self) -> int:
        return 2

    def deal(self, seed: int, hand_index: int) -> List[int]:
        if int(seed) < 0 or int(hand_index) < 0:
            raise GameError(f"seed and hand index must be non-negative, got {seed}, {hand_index}")
        rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(hand_index)]))
        return [int(c) for c in rng.permutation(self.num_hands)[:3]]

    def _score(self, mine: np.ndarray, opp: np.ndarray, public: np.ndarray) -> np.ndarray:
        """+1 / 0.5 / 0 (win / tie / loss) of card ``mine`` against ``opp`` with ``public`` (arrays broadcast)."""
        s = self.suits
        sm = np.where(mine // s == public // s, 1000 + mine // s, mine // s)
        so = np.where(opp // s == public // s, 1000 + opp // s, opp // s)
        return np.where(sm > so, 1.0, np.where(sm == so, 0.5, 0.0))

    def equity_vs_range(self, state, hand: int, opp_range: np.ndarray,
                        samples: Optional[int] = None, seed: int = 0) -> Tuple[float, float]:
        n = self.num_hands
        w = np.array(opp_range, dtype=np.float64)
        w[hand] = 0.0
        cards = np.arange(n)
        if state.public >= 0:
            w[state.public] = 0.0
            publics = np.array([state.public])
        else:
            publics = np.array([c for c in range(n) if c != hand])
        num = den = 0.0
        for pub in publics:
            ww = w.copy()
            ww[pub] = 0.0
            num += float(np.sum(ww * self._score(np.int64(hand), cards, np.int64(pub))))
            den += float(ww.sum())
        if den <= 0:
            return float("nan"), 0.0
        return num / den, 0.0

    def equity_hands(self, state) -> float:
        h0, h1 = state.private
        s = self.suits
        publics = [state.public] if state.public >= 0 else [c for c in range(self.num_hands) if c not in (h0, h1)]
        total = 0.0
        for pub in publics:  # scalar loop: at most num_cards - 2 boards
            a = 1000 + h0 // s if h0 // s == pub // s else h0 // s
            b = 1000 + h1 // s if h1 // s == pub // s else h1 // s
            total += 1.0 if a > b else (0.5 if a == b else 0.0)
        return total / len(publics)


#: boards of the 48 cards left after two hole pairs: C(48, 5)
PREFLOP_BOARDS = 1_712_304
_SUIT_PERMS = tuple(permutations(range(4)))
_MATCHUPS: Optional[Dict[int, int]] = None


def _matchup_table() -> Optional[Dict[int, int]]:
    """{canonical matchup key: 2 wins + ties} from the shipped counts (None without the file); built
    once per process (about a second: the canonical matchups of :mod:`cfrkit.cards.preflop`)."""
    global _MATCHUPS
    if _MATCHUPS is None:
        from cfrkit.cards.preflop import MATCHUP_FILE, canonical_matchups

        if not os.path.exists(MATCHUP_FILE):
            return None
        m = canonical_matchups()
        keys = ((m[:, 0] * 52 + m[:, 1]) * 52 + m[:, 2]) * 52 + m[:, 3]
        counts = np.load(MATCHUP_FILE)
        if counts.shape != keys.shape:
            return None
        _MATCHUPS = dict(zip(keys.tolist(), counts.astype(np.int64).tolist()))
    return _MATCHUPS


def preflop_matchup_count(a: int, b: int, c: int, d: int) -> Optional[int]:
    """``2 * wins + ties`` of hole pair ``(a, b)`` against ``(c, d)`` (card ids, disjoint) over all
    :data:`PREFLOP_BOARDS` boards, exact (an integer in ``0 .. 2 * PREFLOP_BOARDS``); None when the
    shipped counts are missing.  The matchup is put in the canonical form of
    :func:`cfrkit.cards.preflop.canonical_matchups` (the smallest code over the 24 suit permutations
    and both orders); listed the other way round it counts the opponent's wins: ``2 * BOARDS - count``."""
    table = _matchup_table()
    if table is None:
        return None
    ra, sa, rb, sb, rc, sc, rd, sd = a >> 2, a & 3, b >> 2, b & 3, c >> 2, c & 3, d >> 2, d & 3
    best = -1
    flip = False
    for perm in _SUIT_PERMS:
        x, y = 4 * ra + perm[sa], 4 * rb + perm[sb]
        p = x * 52 + y if x < y else y * 52 + x
        x, y = 4 * rc + perm[sc], 4 * rd + perm[sd]
        q = x * 52 + y if x < y else y * 52 + x
        fwd, rev = p * 2704 + q, q * 2704 + p
        if best < 0 or fwd < best:
            best, flip = fwd, False
        if rev < best:
            best, flip = rev, True
    count = table.get(best)
    if count is None:
        return None
    return 2 * PREFLOP_BOARDS - count if flip else count


def poker_view(game: "str | Game", heads_up: bool = True) -> PokerView:
    """The :class:`PokerView` of a heads-up hold'em or Leduc-family game (``GameError`` otherwise).

    ``heads_up=False`` also accepts hold'em tables of any size (for the match runner)."""
    game = load(game)
    if isinstance(game, HoldemGame):
        return HoldemView(game, heads_up=heads_up)
    if isinstance(game, (LeducPoker, LeducNoLimit)):
        return LeducView(game)
    raise GameError(f"{game.game_string()!r} is not a two-player poker game these evaluators know "
                    f"(holdem, leduc, leduc_nolimit)")
