"""Poker games seen from the public tree: betting, board chance, hands and showdown strengths.

A *public poker game* tells the public-tree builder (:mod:`cfrkit.solvers.public.tree`) what it
needs and nothing about private cards of a particular deal:

* ``num_hands`` private hands, ``hand_cards`` (``num_hands x cards_per_hand`` card ids), ``deck_size``;
* public states: ``kind`` (``"decision"``, ``"chance"``, ``"terminal"``), acting ``player``,
  legal ``actions`` and ``child``, board ``chance_cards`` and ``chance_child``, ``contributions``
  (chips each player has put in), ``folder`` (-1 unless someone folded), ``board`` and ``round``;
* ``strengths(board)``: showdown strength of every hand (higher wins; ties split).

:class:`LeducPublicGame` wraps the protocol games ``leduc`` and ``leduc_nolimit`` (a public state
is a protocol state whose private cards are placeholders, so betting rules come from the game itself);
:class:`RiverPublicGame` is a hand-built hold'em river subgame (1326 hands, card id ``4 * rank + suit``) with
pot-fraction bets per number of bets plus all-in, fold and call always offered;
:class:`HoldemPublicGame` wraps heads-up no-limit ``holdem`` protocol states from the flop on (betting
rules and chips from the game, bet sizes from a pot-fraction abstraction, turn/river chance nodes).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.cards.equity import board_strengths
from cfrkit.games.base import CHANCE, TERMINAL, Game, GameError, State


def cached_strengths(cache: dict, board: Tuple[int, ...]) -> np.ndarray:
    """int64[1326] showdown strength (hand class, higher wins; 0 if blocked) of every pair on a river
    ``board``, zeros before the river (heads-up showdowns only happen on complete boards); memoised in
    ``cache`` under the key ``board``."""
    s = cache.get(board)
    if s is None:
        if len(board) == 5:
            s = board_strengths(board).astype(np.int64)
        else:
            s = np.zeros(1326, dtype=np.int64)
        cache[board] = s
    return s


class PublicPokerGame:
    """Interface (see module docstring).  Subclasses implement every method."""

    num_hands: int
    hand_cards: np.ndarray
    deck_size: int
    cards_per_hand: int

    def hand_mask(self, board: Sequence[int]) -> np.ndarray:
        """1.0 for hands that share no card with ``board``, else 0.0 (shape ``(num_hands,)``)."""
        mask = np.ones(self.num_hands)
        for c in board:
            mask[(self.hand_cards == c).any(axis=1)] = 0.0
        return mask

    def chance_weight(self, board: Sequence[int]) -> float:
        """Probability of each board card dealt next, given both players' hands (card removal)."""
        return 1.0 / (self.deck_size - len(board) - 2 * self.cards_per_hand)

    def hands_blocked_by(self, card: int) -> np.ndarray:
        return (self.hand_cards == card).any(axis=1)

    def children(self, ps) -> List[Tuple[int, Any]]:
        """``(action, child state)`` for every offered betting action of decision state ``ps``, in
        :meth:`actions` order (the tree builder's walk; games override it to skip re-checking each action)."""
        return [(a, self.child(ps, a)) for a in self.actions(ps)]

    def public_key(self, ps) -> str:
        """Key of a public state: its public actions (bets and board cards) joined by commas; games whose
        states are protocol states override it."""
        return ",".join(map(str, ps.history))


class ProtocolPublicGame(PublicPokerGame):
    """A public poker game whose public states are protocol states (private cards are placeholders)."""

    def kind(self, ps: State) -> str:
        p = ps.current_player()
        if p == TERMINAL:
            return "terminal"
        if p == CHANCE:
            return "chance"
        return "decision"

    def player(self, ps: State) -> int:
        return ps.current_player()


# --------------------------------------------------------------------------------------------- Leduc
class LeducPublicGame(ProtocolPublicGame):
    """Public view of ``leduc`` / ``leduc_nolimit`` (any ranks/suits): one private card per player."""

    def __init__(self, game: Game):
        if game.short_name not in ("leduc", "leduc_nolimit"):
            raise GameError(f"LeducPublicGame needs a leduc or leduc_nolimit game, got {game.short_name!r}")
        self.game = game
        self.num_hands = game.num_cards
        self.hand_cards = np.arange(game.num_cards, dtype=np.int64)[:, None]
        self.deck_size = game.num_cards
        self.cards_per_hand = 1
        self.suits = game.suits

    def root(self, state: Optional[State] = None) -> State:
        """Public state for ``state`` (default: the start of the betting, placeholder private cards)."""
        if state is None:
            state = self.game.new_initial_state()
        if state.game != self.game:
            raise GameError(f"state belongs to {state.game}, not {self.game}")
        state = state.clone()
        while len(state.private) < 2:
            state.apply_action([c for c, _ in state.chance_outcomes()][0])
        return state

    # -------------------------------------------------------------- public state queries
    def actions(self, ps: State) -> List[int]:
        return ps.legal_actions()

    def child(self, ps: State, action: int) -> State:
        return ps.child(action)

    def board(self, ps: State) -> Tuple[int, ...]:
        return (ps.public,) if ps.public >= 0 else ()

    def chance_cards(self, ps: State) -> List[int]:
        used = set(self.board(ps))
        return [c for c in range(self.deck_size) if c not in used]

    def chance_child(self, ps: State, card: int) -> State:
        new = ps.clone()
        new.private = [c for c in range(self.deck_size) if c != card][:2]
        new.apply_action(card)
        return new

    def contributions(self, ps: State) -> Tuple[float, float]:
        return float(ps.contrib[0]), float(ps.contrib[1])

    def folder(self, ps: State) -> int:
        return int(ps.folded)

    def round(self, ps: State) -> int:
        return int(ps.round)

    def strengths(self, board: Sequence[int]) -> np.ndarray:
        ranks = np.arange(self.num_hands) // self.suits
        if not board:
            return ranks.astype(np.int64)
        board_rank = board[0] // self.suits
        return np.where(ranks == board_rank, 1000 + ranks, ranks).astype(np.int64)

    def public_key(self, ps: State) -> str:
        return ps.public_state_string()

    def infoset_key(self, ps: State, player: int, hand: int) -> str:
        st = ps.clone()
        st.private = list(st.private)
        st.private[player] = int(hand)
        return st.information_state_string(player)

    def action_label(self, ps: State, action: int) -> str:
        return ps.action_to_string(action)

    def round_start_state(self, board_card: int, contribution: float) -> State:
        """Public state at the start of the second round: board ``board_card``, both players in for ``contribution``."""
        if not 0 <= board_card < self.deck_size:
            raise GameError(f"board card must be in [0, {self.deck_size}), got {board_card}")
        st = self.game.new_initial_state()
        for c in [c for c in range(self.deck_size) if c != board_card][:2]:
            st.apply_action(c)
        st.apply_action(1)
        st.apply_action(1)
        st.apply_action(board_card)
        st.contrib = [int(contribution), int(contribution)]
        return st

    def bet_state_of(self, state: State) -> State:
        """The public state matching a real protocol state (private cards replaced by placeholders)."""
        ps = state.clone()
        board = self.board(ps)
        ps.private = [c for c in range(self.deck_size) if c not in board][:2]
        return ps


# --------------------------------------------------------------------------------------------- hold'em river
def holdem_hands() -> np.ndarray:
    """The 1326 hold'em hole-card pairs ``(low card, high card)`` in :mod:`cfrkit.cards` order
    (pair ``{a < b}`` at index ``b * (b - 1) // 2 + a``), card id ``4 * rank + suit``."""
    from cfrkit.cards.hands import HOLE_PAIRS

    return HOLE_PAIRS.astype(np.int64)


@dataclass(frozen=True)
class RiverState:
    contrib: Tuple[float, float]
    player: int = 0
    history: Tuple[int, ...] = ()
    num_bets: int = 0
    last_raise: float = 0.0
    folder: int = -1
    finished: bool = False


FOLD, CALL = 0, 1


class RiverPublicGame(PublicPokerGame):
    """Heads-up hold'em river subgame: board of 5 cards, 1326 hands, one betting round.

    Args:
        board: five card ids.
        strengths: ``(1326,)`` showdown strength of each hand on ``board`` (higher wins); hands that
            share a card with the board are ignored.
        pot: chips in the pot at the start of the river (split equally between the players).
        stack: chips each player has behind at the start of the river.
        bet_fractions: pot fractions offered per number of bets/raises already made in the round:
            ``[(0.5, 1.0), (1.0,)]`` = bets of half and full pot, raises of pot; the last entry repeats.
        min_bet: smallest bet/raise size in chips (the big blind).
        max_bets: cap on bets/raises in the round beyond which only call/fold (and no all-in) remain.

    Player 0 acts first.  Actions: fold 0, check/call 1, bet fraction ``fractions[j]`` = ``2 + j``
    (``fractions`` is the sorted union), all-in ``2 + len(fractions)``.  Utilities are net chips.
    """

    def __init__(self, board: Sequence[int], strengths: np.ndarray, pot: float = 1000.0, stack: float = 1000.0,
                 bet_fractions: Sequence[Sequence[float]] = ((0.5, 1.0),), min_bet: float = 10.0,
                 max_bets: int = 4):
        board = tuple(int(c) for c in board)
        if len(board) != 5 or len(set(board)) != 5 or min(board) < 0 or max(board) > 51:
            raise GameError(f"a river board needs 5 distinct cards in [0, 52), got {board}")
        strengths = np.asarray(strengths)
        if strengths.shape != (1326,):
            raise GameError(f"strengths must have shape (1326,), got {strengths.shape}")
        if pot <= 0 or stack < 0:
            raise GameError(f"pot must be > 0 and stack >= 0, got pot={pot}, stack={stack}")
        self.board_cards = board
        self.hand_cards = holdem_hands()
        self.num_hands = 1326
        self.deck_size = 52
        self.cards_per_hand = 2
        self._strengths = strengths.astype(np.int64)
        self.pot = float(pot)
        self.stack = float(stack)
        self.bet_fractions = [tuple(sorted(float(f) for f in fr)) for fr in bet_fractions] or [()]
        self.fractions = tuple(sorted({f for fr in self.bet_fractions for f in fr}))
        self.allin_action = 2 + len(self.fractions)
        self.min_bet = float(min_bet)
        self.max_bets = int(max_bets)

    def root(self, state=None) -> RiverState:
        half = self.pot / 2
        return RiverState(contrib=(half, half), last_raise=self.min_bet)

    def kind(self, ps: RiverState) -> str:
        return "terminal" if ps.finished else "decision"

    def player(self, ps: RiverState) -> int:
        return ps.player

    def _max_contrib(self) -> float:
        return self.pot / 2 + self.stack

    def raise_options(self, ps: RiverState) -> List[Tuple[int, float]]:
        """``(action, total contribution after the bet)`` of every bet/raise the abstraction offers."""
        p = ps.player
        opp = ps.contrib[1 - p]
        cap = self._max_contrib()
        if opp >= cap or ps.num_bets >= self.max_bets:
            return []
        pot_after_call = 2 * opp
        min_raise = max(ps.last_raise, self.min_bet)
        out = []
        fractions = self.bet_fractions[min(ps.num_bets, len(self.bet_fractions) - 1)]
        for f in fractions:
            size = f * pot_after_call
            if size >= min_raise and opp + size < cap:
                out.append((2 + self.fractions.index(f), opp + size))
        out.append((self.allin_action, cap))
        return out

    def actions(self, ps: RiverState) -> List[int]:
        acts = []
        if ps.contrib[ps.player] < ps.contrib[1 - ps.player]:
            acts.append(FOLD)
        acts.append(CALL)
        acts.extend(a for a, _ in self.raise_options(ps))
        return acts

    def child(self, ps: RiverState, action: int) -> RiverState:
        p = ps.player
        hist = ps.history + (action,)
        if action == FOLD:
            return RiverState(ps.contrib, p, hist, ps.num_bets, ps.last_raise, folder=p, finished=True)
        if action == CALL:
            contrib = list(ps.contrib)
            contrib[p] = contrib[1 - p]
            done = len(hist) >= 2
            return RiverState(tuple(contrib), 1 - p, hist, ps.num_bets, ps.last_raise, finished=done)
        amount = dict(self.raise_options(ps)).get(action)
        if amount is None:
            raise GameError(f"action {action} is not legal here; legal: {self.actions(ps)}")
        contrib = list(ps.contrib)
        raise_size = amount - contrib[1 - p]
        contrib[p] = amount
        return RiverState(tuple(contrib), 1 - p, hist, ps.num_bets + 1, max(raise_size, ps.last_raise))

    def chance_cards(self, ps):
        return []

    def chance_child(self, ps, card):
        raise GameError("the river has no chance nodes")

    def contributions(self, ps: RiverState) -> Tuple[float, float]:
        return ps.contrib

    def folder(self, ps: RiverState) -> int:
        return ps.folder

    def board(self, ps: RiverState) -> Tuple[int, ...]:
        return self.board_cards

    def round(self, ps: RiverState) -> int:
        return 3

    def strengths(self, board: Sequence[int]) -> np.ndarray:
        return self._strengths

    def action_label(self, ps: RiverState, action: int) -> str:
        if action == FOLD:
            return "fold"
        if action == CALL:
            return "call"
        if action == self.allin_action:
            return "allin"
        return f"bet{self.fractions[action - 2]:g}pot"


# --------------------------------------------------------------------------------------------- hold'em (protocol)
BetSizing = Tuple[Tuple[float, ...], ...]
DEFAULT_BET_SIZING: BetSizing = ((0.5, 1.0), (1.0,))


def normalize_bet_sizing(bet_sizing) -> BetSizing:
    """Pot fractions per number of bets in the round as a tuple (entry ``k`` = the ``(k+1)``-th bet).

    Accepts ``{1: [0.5, 1.0], 2: [1.0]}`` (keys: 1 = first bet of the round, 2 = first raise, ...;
    missing keys take the previous key's sizes; the last key's sizes repeat for later raises), a
    sequence of sequences in the same order, or None (:data:`DEFAULT_BET_SIZING`).  An empty entry
    offers no sized bets at that bet number (fold, call and all-in remain).
    """
    if bet_sizing is None:
        return DEFAULT_BET_SIZING
    if isinstance(bet_sizing, dict):
        if not bet_sizing:
            raise GameError("bet sizing: give pot fractions for at least the first bet, e.g. {1: [0.5, 1.0]}")
        keys = []
        for k in bet_sizing:
            if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
                raise GameError(f"bet sizing keys are bet numbers 1, 2, ... (1 = first bet of the round), got {k!r}")
            keys.append(int(k))
        levels: List[Sequence[float]] = []
        last: Sequence[float] = ()
        for k in range(1, max(keys) + 1):
            if k in bet_sizing:
                last = bet_sizing[k]
            levels.append(last)
    elif isinstance(bet_sizing, (list, tuple)):
        levels = list(bet_sizing)
        if not levels:
            raise GameError("bet sizing: give pot fractions for at least the first bet, e.g. [[0.5, 1.0]]")
    else:
        raise GameError(f"bet sizing must be a dict {{bet number: pot fractions}} or a list of lists, "
                        f"got {type(bet_sizing).__name__}")
    out = []
    for k, level in enumerate(levels, start=1):
        if isinstance(level, (int, float)):
            level = (level,)
        fractions = []
        for f in level:
            try:
                f = float(f)
            except (TypeError, ValueError):
                raise GameError(f"bet sizing: bet {k}: {f!r} is not a pot fraction") from None
            if not (f > 0 and np.isfinite(f)):
                raise GameError(f"bet sizing: bet {k}: pot fractions must be positive and finite, got {f}")
            fractions.append(f)
        out.append(tuple(sorted(set(fractions))))
    return tuple(out)


class HoldemPublicGame(ProtocolPublicGame):
    """Public view of heads-up no-limit hold'em (the protocol game ``holdem``) from the flop on.

    A public state is a :class:`~cfrkit.games.holdem.game.HoldemState` whose hole cards are
    placeholders (cards off the board), so every chip amount, the order of play, the minimum raise,
    skipped rounds after all-ins and the terminals come from the protocol game itself.  Betting
    actions are the protocol's action ids: fold ``0``, check/call ``1``, raise to ``N`` chips in the
    hand ``2 + N``; board chance nodes deal one card at a time (turn, river) with weight
    ``1 / (52 - board - 4)`` (both players' hole cards removed).

    Args:
        game: a heads-up no-limit :class:`~cfrkit.games.holdem.game.HoldemGame` with a standard
            52-card deck, 2 hole cards and boards of 3, 1, 1 cards after the preflop.
        bet_sizing: pot fractions per number of bets in the round (see :func:`normalize_bet_sizing`),
            e.g. ``{1: [0.5, 1.0], 2: [1.0]}``.  A fraction ``f`` raises to ``M + f * (P + C)``
            chips (``M``: largest total put in, ``P``: pot, ``C``: the mover's call amount), rounded
            to a chip -- the same rule as ``holdem_abstract``.  Sizes below the legal minimum raise
            or at/above all-in are not offered; fold (when facing a bet), check/call and all-in
            (raise to the mover's whole stack, when raising is legal) always are.

    Unequal stacks: contributions are reported capped at the smaller stack (chips above it are
    returned to their owner in the protocol game too), so showdowns have equal contributions.
    Utilities are net chips.  Hands are the 1326 pairs in :mod:`cfrkit.cards` order.
    """

    def __init__(self, game: Game, bet_sizing=None):
        from cfrkit.games.holdem.game import HoldemGame

        if not isinstance(game, HoldemGame):
            inner = getattr(game, "inner", None)
            hint = (f"; pass the wrapped game {inner.game_string()!r}" if isinstance(inner, HoldemGame) else "")
            raise GameError(f"HoldemPublicGame needs a holdem game, got {game.game_string()!r}{hint}")
        d = game.definition
        if d.num_players != 2:
            raise GameError(f"public trees of hold'em are heads-up only: {game.game_string()!r} has "
                            f"{d.num_players} players")
        if d.is_limit:
            raise GameError(f"HoldemPublicGame needs no-limit betting (bet sizes from a pot-fraction abstraction); "
                            f"{game.game_string()!r} is a limit game")
        if (d.num_suits, d.num_ranks, d.num_hole_cards, d.num_rounds, tuple(d.num_board_cards)) != (4, 13, 2, 4,
                                                                                                     (0, 3, 1, 1)):
            raise GameError(f"HoldemPublicGame needs Texas hold'em cards (52-card deck, 2 hole cards, boards of "
                            f"0/3/1/1 cards), got {game.game_string()!r}")
        self.game = game
        self.definition = d
        self.bet_sizing = normalize_bet_sizing(bet_sizing)
        self.hand_cards = holdem_hands()
        self.num_hands = 1326
        self.deck_size = 52
        self.cards_per_hand = 2
        self.effective_stack = float(min(d.stack))
        self._strengths: dict = {}

    # -------------------------------------------------------------- roots
    def check_state(self, state: State) -> None:
        """GameError unless ``state`` is a non-terminal state of this game on the flop, turn or river."""
        from cfrkit.games.holdem.game import HoldemState

        if not isinstance(state, HoldemState):
            inner = getattr(state, "inner", None)
            if isinstance(inner, HoldemState):
                raise GameError("pass the underlying holdem state (state.inner) of a holdem_abstract state")
            raise GameError(f"HoldemPublicGame needs a holdem state, got {type(state).__name__}")
        if state.game != self.game:
            raise GameError(f"state belongs to {state.game.game_string()!r}, not {self.game.game_string()!r}")
        if state.is_terminal():
            raise GameError("the state is terminal: there is no subgame to build")
        if not state.hole_cards_dealt or state.round == 0:
            raise GameError("preflop state: hold'em public trees start on the flop, turn or river "
                            f"(betting so far: {state.betting_string()!r})")
        if len(state.board) < 3:
            raise GameError("the flop is not dealt yet: hold'em public trees start once the flop is on the board")

    def root(self, state: Optional[State] = None) -> State:
        """Public state of a protocol ``state`` on the flop, turn or river (hole cards -> placeholders)."""
        if state is None:
            raise GameError("HoldemPublicGame needs a protocol state on the flop, turn or river to root the tree "
                            "(e.g. from cfrkit.games.holdem.matchstate.state_from_matchstate)")
        self.check_state(state)
        ps = state.clone()
        ps.hole = self._placeholders(ps.board)
        return ps

    bet_state_of = root

    @staticmethod
    def _placeholders(board: Sequence[int], extra: int = -1) -> List[List[int]]:
        used = set(board)
        used.add(extra)
        free = [c for c in range(52) if c not in used][:4]
        return [free[:2], free[2:]]

    # -------------------------------------------------------------- public state queries
    def raise_totals(self, ps: State) -> List[int]:
        """Raise-to totals (chips in the hand) the abstraction offers at ``ps``, all-in last ([] if no raise)."""
        p = ps.current_player()
        rng = ps.raise_range(p)
        if rng is None:
            return []
        lo, hi = rng
        cap = min(hi, ps.d.stack[1 - p])  # raising to the opponent's whole stack or more is all-in
        base = ps.max_spent()
        pot_after_call = ps.pot() + ps.call_amount(p)
        sizing = self.bet_sizing[min(ps.raise_count, len(self.bet_sizing) - 1)]
        out: List[int] = []
        for f in sizing:
            total = base + int(round(f * pot_after_call))
            if lo <= total < cap and total not in out:
                out.append(total)
        out.append(hi)
        return out

    def actions(self, ps: State) -> List[int]:
        from cfrkit.games.holdem.game import CALL, FOLD, raise_action

        p = ps.current_player()
        acts = [FOLD] if ps.bet(p) < ps.max_bet() else []
        acts.append(CALL)
        acts.extend(raise_action(t) for t in self.raise_totals(ps))
        return acts

    def child(self, ps: State, action: int) -> State:
        if action not in self.actions(ps):
            raise GameError(f"action {action} is not in the abstraction here; offered: {self.actions(ps)}")
        return ps.child(action)

    def board(self, ps: State) -> Tuple[int, ...]:
        return tuple(ps.board)

    def chance_cards(self, ps: State) -> List[int]:
        used = set(ps.board)
        return [c for c in range(52) if c not in used]

    def chance_child(self, ps: State, card: int) -> State:
        new = ps.clone()
        new.hole = self._placeholders(new.board, card)
        new.apply_action(int(card))
        return new

    def contributions(self, ps: State) -> Tuple[float, float]:
        cap = self.effective_stack
        return float(min(ps.spent[0], cap)), float(min(ps.spent[1], cap))

    def folder(self, ps: State) -> int:
        for p in (0, 1):
            if ps.folded[p]:
                return p
        return -1

    def round(self, ps: State) -> int:
        return int(ps.round)

    def strengths(self, board: Sequence[int]) -> np.ndarray:
        """Showdown strength (hand class, higher wins; 0 if blocked) of every pair on a river ``board``;
        zeros before the river (heads-up showdowns only happen on complete boards)."""
        return cached_strengths(self._strengths, tuple(int(c) for c in board))

    def public_key(self, ps: State) -> str:
        return ps.public_state_string()

    def action_label(self, ps: State, action: int) -> str:
        from cfrkit.games.holdem.game import CALL, FOLD, raise_amount

        p = ps.current_player()
        if action == FOLD:
            return "fold"
        if action == CALL:
            return "call" if ps.call_amount(p) else "check"
        total = raise_amount(action)
        rng = ps.raise_range(p)
        tag = " (all-in)" if rng is not None and total == rng[1] else ""
        verb = "raise to" if ps.max_bet() > ps.bet(p) or ps.raise_count else "bet to"
        return f"{verb} {total}{tag}"


def public_game_for(game: Game, bet_sizing=None) -> PublicPokerGame:
    """The public view of a protocol poker game: ``leduc``, ``leduc_nolimit`` (betting from the game
    itself; ``bet_sizing`` must be None) or heads-up no-limit ``holdem`` (``bet_sizing``: pot fractions
    per number of bets in the round, see :class:`HoldemPublicGame`)."""
    if game.short_name in ("leduc", "leduc_nolimit"):
        if bet_sizing is not None:
            raise GameError(f"{game.short_name} takes its bet sizes from the game; bet_sizing must be None")
        return LeducPublicGame(game)
    if game.short_name == "holdem":
        return HoldemPublicGame(game, bet_sizing)
    raise GameError(f"no public-tree view of game {game.short_name!r} (supported: leduc, leduc_nolimit, "
                    f"heads-up no-limit holdem)")
