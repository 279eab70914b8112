"""Hold'em driven by an ACPC game definition: limit and no-limit, 2-10 players.

Registered as ``holdem(definition=NAME_OR_PATH, stacks=..., blinds=..., antes=..., fractional_split=false,
ante_trimming=false)``; the optional tuples override the definition's per-seat stacks, blinds and
antes (e.g. for unequal stacks); ``fractional_split=true`` splits tied pots into fractions of a chip
as the ACPC dealer does.

Antes follow PHH's ``ante_trimming_status`` (pokerkit's rule): with ``ante_trimming=false`` (the
default, and the right setting for big-blind antes) the antes are dead money: they go into the main
pot, which every live player can win, and do not count as part of a player's contribution when side
pots are built (an all-in ante payer does not get its ante back).  With ``ante_trimming=true`` the
antes are collected like a bet: the part of an ante above the second-largest ante is returned before
the blinds (a lone big-blind ante is returned entirely) and the rest counts as an ordinary
contribution.  With equal antes both settings give the same results.

Action ids (stable, documented):

* ``0`` -- fold (legal only when facing a bet: folding when checking is free is not allowed);
* ``1`` -- check or call (a call for less than the full amount when the stack is short);
* limit games: ``2`` -- raise (the size is fixed by ``raiseSize``, capped by the stack);
* no-limit games: ``2 + N`` -- raise to a total of ``N`` chips put in by the raiser in the hand,
  earlier rounds, blinds and antes included (ACPC's ``r<N>``).  Use :func:`raise_action` and
  :func:`raise_amount` to convert.  The legal ``N`` form one interval ``[min, max]``
  (:meth:`HoldemState.raise_range`).

Agents and servers use :meth:`HoldemState.action_view` (an :class:`~cfrkit.games.holdem.actions.ActionView`:
fold / check-call / raise to ``[min, max]`` in chips).  ``legal_actions()`` stays the sorted id list
for tree algorithms, as a lazy :class:`~cfrkit.games.holdem.actions.LegalActions` sequence (``len``,
``in``, indexing, equality with lists) that never materialises the raise sizes, so huge stacks cost
nothing.

Chance outcomes are card ids (``4 * rank + suit``): first the hole cards (seat 0's, then seat 1's,
...), then each round's board cards.  Returns are chips won minus chips put in.

Betting rules (as the TDA rules and pokerkit play them; ACPC agrees on all ordinary lines):

* the minimum raise increment is the larger of the largest full raise increment of the round and
  the big blind (limit: ``raiseSize`` of the round); a raise may always go all-in for less;
* an all-in raise smaller than a full raise does not reopen the betting: a player who has already
  acted and faces only such raises (that do not add up to a full raise) may only call or fold;
* no raise when every other live player is all-in or cannot put in more than the current bet;
* ``maxRaises`` caps the raises of a round (blinds are not raises);
* a round with at most one player able to act is skipped (the cards are still dealt);
* pots: main and side pots by contribution levels; each goes to the best hand among its eligible
  players.  Players who win no pot drop out, the pots are re-formed among the others (consecutive
  pots with the same eligible players merged) and a tie splits a pot evenly, odd chips to the tied
  player with the lowest seat (pokerkit's convention; ACPC's dealer splits into fractions).
"""
from __future__ import annotations

from operator import sub as _sub
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from cfrkit.games.base import CHANCE, TERMINAL, Game, GameError, IllegalActionError, State
from cfrkit.games.holdem.actions import CALL, FOLD, RAISE, RAISE_OFFSET, ActionView, LegalActions
from cfrkit.games.holdem.definition import GameDefinition, load_definition, validate
from cfrkit.games.registry import register

_new_view = ActionView._make
_MAX_MASK = 64 << 20  # ids: the largest legal_actions_mask (bytes) built
DEFAULT_DEFINITION = "holdem.nolimit.2p.reverse_blinds"


def raise_action(amount: int) -> int:
    """Action id of a no-limit raise to a total of ``amount`` chips."""
    return RAISE_OFFSET + int(amount)


def raise_amount(action: int) -> int:
    """Raise-to total (chips) of a no-limit raise action id."""
    return int(action) - RAISE_OFFSET


class HoldemGame(Game):
    """Hold'em with the rules of an ACPC :class:`GameDefinition` (see the module docstring)."""

    short_name = "holdem"

    def __init__(self, definition: Union[str, GameDefinition] = DEFAULT_DEFINITION,
                 stacks: Tuple[int, ...] = (), blinds: Tuple[int, ...] = (), antes: Tuple[int, ...] = (),
                 fractional_split: bool = False, ante_trimming: bool = False):
        if isinstance(definition, GameDefinition):
            d = definition
            def_name = d.name or "<inline>"
        else:
            d = load_definition(definition)
            def_name = str(definition)
        changes = {}
        for key, value, field_name in (("stacks", stacks, "stack"), ("blinds", blinds, "blind"),
                                       ("antes", antes, "ante")):
            if value:
                if len(value) != d.num_players:
                    raise GameError(f"holdem: {key} needs {d.num_players} values (one per seat), got {len(value)}")
                try:
                    changes[field_name] = tuple(int(v) for v in value)
                except (TypeError, ValueError):
                    raise GameError(f"holdem: {key} must be integers (chips), got {value!r:.80}") from None
        if changes:
            try:
                d = d.with_changes(**changes)
            except GameError as exc:
                raise GameError(f"holdem({def_name}): {exc}") from None
        else:
            validate(d)
        super().__init__({"definition": def_name, "stacks": tuple(stacks), "blinds": tuple(blinds),
                          "antes": tuple(antes), "fractional_split": bool(fractional_split),
                          "ante_trimming": bool(ante_trimming)})
        self.fractional_split = bool(fractional_split)
        self.ante_trimming = bool(ante_trimming)
        # antes actually posted (chips): trimming returns what exceeds the second-largest ante
        if ante_trimming and d.num_players > 1:
            cutoff = sorted(d.ante)[-2]
            self.posted_antes = tuple(min(a, cutoff) for a in d.ante)
        else:
            self.posted_antes = tuple(d.ante)
        #: per seat, the chips of its ante that are dead money (not part of its contribution level)
        self.dead_antes = (0,) * d.num_players if ante_trimming else self.posted_antes
        self.definition = d
        self.num_players = d.num_players
        self.is_limit = d.is_limit
        self.big_blind = float(d.big_blind) if d.big_blind > 0 else None
        self._deck = tuple(d.deck())
        self._deck_set = frozenset(self._deck)
        self._num_hole = d.num_players * d.num_hole_cards
        self._board_after = [d.total_board_cards(r + 1) for r in range(d.num_rounds)]
        # largest number of chips a player can put in (bounds the utilities)
        if d.is_limit:
            level = max(d.blind) + sum(d.raise_size[r] * min(d.max_raises[r], 10_000) for r in range(d.num_rounds))
            commit = [min(d.stack[p], d.ante[p] + level) for p in range(d.num_players)]
        else:
            commit = list(d.stack)
        self._max_commit = commit
        self._num_actions = 3 if d.is_limit else RAISE_OFFSET + max(d.stack) + 1

    def new_initial_state(self) -> "HoldemState":
        return HoldemState(self)

    def num_distinct_actions(self) -> int:
        return self._num_actions

    def max_utility(self) -> float:
        c = sorted(self._max_commit)
        return float(sum(c[:-1]))

    def min_utility(self) -> float:
        return -float(max(self._max_commit))

    def max_game_length(self) -> Optional[int]:
        return None

    def acpc_definition_text(self) -> str:
        return self.definition.to_text()


class HoldemState(State):
    """A node of a hold'em hand.  Chip amounts are integers; ``spent[p]`` counts antes and blinds."""

    def __init__(self, game: HoldemGame):
        super().__init__(game)
        d = game.definition
        n = d.num_players
        self.d = d
        self.hole: List[List[int]] = [[] for _ in range(n)]
        self.board: List[int] = []
        self.round = 0
        antes = game.posted_antes
        self.spent: List[int] = [antes[p] + d.blind[p] for p in range(n)]
        self.round_start: List[int] = list(antes)
        self.folded: List[bool] = [False] * n
        self.actors: List[int] = []
        self.acted: set = set()
        self.raise_inc = 0
        self.raise_count = 0
        self.short_allins: List[int] = []
        #: per round, the actions as (player, code, raise-to total): code 'f', 'c' or 'r'
        self.actions: List[List[Tuple[int, str, int]]] = [[]]
        self._terminal = False
        self._dealt = 0  # number of cards dealt so far

    def clone(self) -> "HoldemState":
        """An independent copy.  Lists this state never changes again are shared, not copied: a player's hole
        cards once every hole card is dealt (``_deal`` appends only while dealing them; callers replace a hole list,
        ``hole[p] = [...]``, never edit one) and the action lists of the rounds before the current one (actions are
        appended to the current round's list only): the AIVAT walk clones a state per child it values."""
        new = HoldemState.__new__(HoldemState)
        new.game = self.game
        new.d = self.d
        new._history = self._history[:]
        hole = self.hole
        new.hole = hole[:] if self._dealt >= self.game._num_hole else [h[:] for h in hole]
        new.board = self.board[:]
        new.round = self.round
        new.spent = self.spent[:]
        new.round_start = self.round_start[:]
        new.folded = self.folded[:]
        new.actors = self.actors[:]
        new.acted = self.acted.copy()
        new.raise_inc = self.raise_inc
        new.raise_count = self.raise_count
        new.short_allins = self.short_allins[:]
        actions = new.actions = self.actions[:]
        actions[-1] = actions[-1][:]  # the current round's (the last: a round's list is added as it starts)
        new._terminal = self._terminal
        new._dealt = self._dealt
        return new

    # ------------------------------------------------------------------ chips
    def bet(self, p: int) -> int:
        """Chips ``p`` has put in during the current round."""
        return self.spent[p] - self.round_start[p]

    def remaining(self, p: int) -> int:
        """Chips ``p`` has behind (not yet put in)."""
        return self.d.stack[p] - self.spent[p]

    def max_bet(self) -> int:
        """The largest bet of the current round (chips)."""
        spent, start = self.spent, self.round_start
        if len(spent) == 2:  # heads-up (asked several times per action): the two bets compared inline
            a, b = spent[0] - start[0], spent[1] - start[1]
            return a if a >= b else b
        return max(map(_sub, spent, start))

    def max_spent(self) -> int:
        """The largest total any player has put in (the amount to match)."""
        return max(self.spent)

    def pot(self) -> int:
        """All chips put in so far (every round, blinds and antes included)."""
        return sum(self.spent)

    def call_amount(self, p: Optional[int] = None) -> int:
        """Chips ``p`` (default: the player to act) must add to call (capped by its stack)."""
        if p is None:
            p = self.current_player()
        return min(self.remaining(p), self.max_bet() - self.bet(p))

    def num_active(self) -> int:
        return self.folded.count(False)  # the flags are bools

    # ------------------------------------------------------------------ flow
    def cards_needed(self) -> int:
        """Cards chance deals before the next decision: the hole cards not dealt yet, else the current
        round's board cards not dealt yet (0 at a decision)."""
        if self._dealt < self.game._num_hole:
            return self.game._num_hole - self._dealt
        return self.game._board_after[self.round] - len(self.board)

    @property
    def hole_cards_dealt(self) -> bool:
        """Whether every player's hole cards are dealt."""
        return self._dealt >= self.game._num_hole

    def with_board_cards(self, start: int, cards: Sequence[int]) -> "HoldemState":
        """A copy of this state whose board cards ``start, start + 1, ...`` are ``cards`` (card ids), in the board
        and in the history: the state the same betting reaches on another run-out (hole cards, chips and actions
        unchanged; the betting is the caller's to keep legal, e.g. a lookahead sharing one betting line over many
        boards of a street).

        Raises:
            GameError: positions outside the dealt board, a card outside the deck, or a card dealt twice.
        """
        cards = [int(c) for c in cards]
        if start < 0 or start + len(cards) > len(self.board):
            raise GameError(f"with_board_cards: board positions {start}..{start + len(cards) - 1} are not all dealt "
                            f"({len(self.board)} board cards)")
        new = self.clone()
        new.board[start:start + len(cards)] = cards
        dealt = new.board + [c for h in new.hole for c in h]
        if len(set(dealt)) != len(dealt) or not self.game._deck_set.issuperset(cards):
            raise GameError(f"with_board_cards: cards {cards} are not distinct unseen cards of the deck (board "
                            f"{new.board}, hole cards {new.hole})")
        # the history holds the hole cards, then per round its new board cards and its betting actions
        pos, r = self.game._num_hole, 0
        board_after = self.game._board_after
        for j in range(start + len(cards)):
            while board_after[r] <= j:       # board card j is dealt at the start of the first round showing it
                pos += len(self.actions[r])
                r += 1
            if j >= start:
                new._history[pos + j] = cards[j - start]
        return new

    def with_cards(self, hole: Sequence[Sequence[int]], board: Sequence[int]) -> "HoldemState":
        """A copy of this state with every dealt card replaced: ``hole`` (per player, as many cards as are dealt to
        each) and ``board`` (as many cards as are dealt), in the hole cards, the board and the history: the state the
        same betting reaches on another deal (chips and actions unchanged; the betting is the caller's to keep legal,
        e.g. a lookahead's betting line kept from one hand and read in the next).

        Raises:
            GameError: another number of cards than dealt, a card outside the deck, or a card dealt twice.
        """
        hole = [[int(c) for c in h] for h in hole]
        board = [int(c) for c in board]
        if [len(h) for h in hole] != [len(h) for h in self.hole] or len(board) != len(self.board):
            raise GameError(f"with_cards: {[len(h) for h in hole]} hole and {len(board)} board cards given, "
                            f"{[len(h) for h in self.hole]} and {len(self.board)} dealt")
        dealt = board + [c for h in hole for c in h]
        if len(set(dealt)) != len(dealt) or not self.game._deck_set.issuperset(dealt):
            raise GameError(f"with_cards: cards {dealt} are not distinct cards of the deck")
        new = self.clone()
        k = self.d.num_hole_cards
        for i in range(min(self._dealt, self.game._num_hole)):  # dealt player by player, k cards each
            new._history[i] = hole[i // k][i % k]
        new.hole = hole
        return new.with_board_cards(0, board) if board else new

    def current_player(self) -> int:
        if self._terminal:
            return TERMINAL
        game = self.game
        if self._dealt < game._num_hole or game._board_after[self.round] > len(self.board):
            return CHANCE
        return self.actors[0]

    def is_terminal(self) -> bool:
        return self._terminal  # current_player() == TERMINAL, without the call (asked at every step of a walk)

    def is_chance_node(self) -> bool:
        if self._terminal:  # current_player() == CHANCE, inline
            return False
        game = self.game
        return self._dealt < game._num_hole or game._board_after[self.round] > len(self.board)

    def chance_outcomes(self) -> List[Tuple[int, float]]:
        if self.current_player() != CHANCE:
            raise GameError("chance_outcomes called at a non-chance node")
        used = set(self.board)
        for h in self.hole:
            used.update(h)
        p = 1.0 / (len(self.game._deck) - len(used))
        return [(c, p) for c in self.game._deck if c not in used]

    def _deal(self, card: int) -> None:
        k = self.d.num_hole_cards
        if self._dealt < self.game._num_hole:
            self.hole[self._dealt // k].append(card)
        else:
            self.board.append(card)
        self._dealt += 1
        if self.cards_needed() == 0:
            self._begin_round()

    def _begin_round(self) -> None:
        d = self.d
        n = d.num_players
        self.raise_inc = 0
        self.raise_count = 0
        self.acted = set()
        self.short_allins = []
        if self.round > 0:
            self.round_start = list(self.spent)
        opener = d.first_player[self.round]
        stack, start, spent, folded = d.stack, self.round_start, self.spent, self.folded
        totals = sorted([stack[p] - start[p] for p in range(n) if not folded[p]])
        second = totals[-2] if len(totals) > 1 else 0
        actors = []
        for i in range(n):  # from the opener on (remaining / bet inline: once per round, per seat)
            p = (opener + i) % n
            rem = stack[p] - spent[p]
            if folded[p] or rem <= 0:
                continue
            if min(rem, max(0, second - (spent[p] - start[p]))) <= 0:
                continue
            actors.append(p)
        if len(actors) == 1 and spent[actors[0]] - start[actors[0]] >= self.max_bet():
            actors = []
        self.actors = actors
        if not actors or self.num_active() <= 1:
            self._end_round()

    def _end_round(self) -> None:
        self.actors = []
        if self.num_active() <= 1 or self.round == self.d.num_rounds - 1:
            self._terminal = True
            return
        self.round += 1
        self.actions.append([])
        if self.cards_needed() == 0:
            self._begin_round()

    # ------------------------------------------------------------------ legality
    def can_raise(self, p: Optional[int] = None) -> bool:
        """Whether the player to act may raise (see the module docstring for the rules)."""
        return self.raise_range(p) is not None

    def raise_range(self, p: Optional[int] = None) -> Optional[Tuple[int, int]]:
        """``(min, max)`` legal raise-to totals (chips, ACPC ``r<N>``) of the player to act, or None when it may not
        raise (:meth:`can_raise`; the bets and stacks read once for both)."""
        if p is None:
            p = self.current_player()
        if self._terminal or p < 0 or not self.actors or self.actors[0] != p:
            return None
        d = self.d
        max_bet = self.max_bet()
        start = self.round_start
        spent_p = self.spent[p]
        bet = spent_p - start[p]
        rem = d.stack[p] - spent_p
        to_call = max_bet - bet
        if min(rem, to_call) < self.raise_inc:
            return None
        if self.raise_count >= d.max_raises[self.round]:
            return None
        if self.short_allins and sum(self.short_allins) < self.raise_inc and p in self.acted:
            return None
        if rem <= to_call:
            return None
        folded, stack = self.folded, d.stack
        for i in range(d.num_players):
            if i != p and not folded[i] and stack[i] - start[i] > max_bet:
                break
        else:
            return None
        street_min = d.raise_size[self.round] if d.is_limit else d.big_blind
        cap = bet + rem
        lo = min(cap, max(self.raise_inc, street_min) + max_bet)
        hi = lo if d.is_limit else cap
        return start[p] + lo, start[p] + hi

    def _legal_actions(self, player: int) -> LegalActions:
        if player < 0 or player != self.current_player():
            return LegalActions()
        small = (FOLD, CALL) if self.bet(player) < self.max_bet() else (CALL,)
        rng = self.raise_range(player)
        if rng is None:
            return LegalActions(small)
        if self.d.is_limit:
            return LegalActions(small + (RAISE,))
        return LegalActions(small, RAISE_OFFSET + rng[0], RAISE_OFFSET + rng[1])

    def legal_actions_mask(self, player: Optional[int] = None) -> np.ndarray:
        """int8[num_distinct_actions()] with ones at the legal ids (filled by slices).

        Raises ``GameError`` when the mask would exceed 64 MiB (deep stacks): use ``legal_actions()``
        or ``action_view()``.
        """
        if self.game.num_distinct_actions() > _MAX_MASK:
            raise GameError(f"a legal-action mask of {self.game.num_distinct_actions():,} ids is too large; use "
                            f"legal_actions() (lazy) or action_view()")
        mask = np.zeros(self.game.num_distinct_actions(), dtype=np.int8)
        legal = self.legal_actions(player)
        if isinstance(legal, LegalActions):
            mask[list(legal.small)] = 1
            mask[legal.first_raise:legal.last_raise + 1] = 1
        else:
            mask[legal] = 1
        return mask

    def action_view(self) -> ActionView:
        """The decision of the player to act: fold / check-call / raise to ``[min, max]`` (chips).

        See :class:`~cfrkit.games.holdem.actions.ActionView`; raises ``GameError`` at chance and
        terminal nodes.
        """
        p = self.current_player()
        if p < 0:
            raise GameError("action_view needs a decision node, not a " +
                            ("terminal" if p == TERMINAL else "chance") + " node")
        max_bet = self.max_bet()
        bet = self.spent[p] - self.round_start[p]
        remaining = self.d.stack[p] - self.spent[p]
        rng = self.raise_range(p)
        lo, hi = (None, None) if rng is None else rng
        return _new_view((p, bet < max_bet, min(remaining, max_bet - bet), lo, hi, self.d.is_limit, sum(self.spent),
                          self.spent[p], remaining, self.round_start[p] + max_bet))

    def is_legal(self, action: int) -> bool:
        """Fast legality test of a player action (no list of all raise sizes is built)."""
        p = self.current_player()
        if p < 0:
            return False
        if action == FOLD:
            return self.bet(p) < self.max_bet()
        if action == CALL:
            return True
        rng = self.raise_range(p)
        if rng is None:
            return False
        if self.d.is_limit:
            return action == RAISE
        return rng[0] <= action - RAISE_OFFSET <= rng[1]

    def legal_actions_summary(self) -> str:
        """Readable legal actions: ``0 (fold), 1 (call 50), 302..20002 (raise to 300..20000)``."""
        p = self.current_player()
        parts = []
        if self.bet(p) < self.max_bet():
            parts.append("0 (fold)")
        parts.append(f"1 (call {self.call_amount(p)})" if self.call_amount(p) else "1 (check)")
        rng = self.raise_range(p)
        if rng is not None:
            if self.d.is_limit:
                parts.append(f"2 (raise to {rng[0]})")
            elif rng[0] == rng[1]:
                parts.append(f"{raise_action(rng[0])} (raise to {rng[0]}, all-in)")
            else:
                parts.append(f"{raise_action(rng[0])}..{raise_action(rng[1])} (raise to {rng[0]}..{rng[1]})")
        return ", ".join(parts)

    def apply_action(self, action: int) -> None:
        """Apply ``action`` in place (validated without listing every raise size)."""
        current = self.current_player()
        if current == TERMINAL:
            raise IllegalActionError(f"action {action} applied to a terminal state")
        if current == CHANCE:
            # a card of the deck not dealt yet (checked without listing the chance outcomes)
            if (type(action) is not int and not hasattr(action, "__index__")) or action not in self.game._deck_set \
                    or action in self.board or any(action in h for h in self.hole):
                raise IllegalActionError(f"card {action!r} is not legal for chance (not in the deck, or "
                                         f"already dealt)")
            self._deal(int(action))
            self._history.append(int(action))
            return
        if not isinstance(action, (int,)) and not hasattr(action, "__index__"):
            raise IllegalActionError(f"action must be an integer id, got {action!r}")
        if not self.is_legal(int(action)):
            raise IllegalActionError(f"action {action} is not legal for player {current}; legal: "
                                     f"{self.legal_actions_summary()}")
        self._apply_action(int(action))
        self._history.append(int(action))

    def _apply_action(self, action: int) -> None:
        if self.is_chance_node():
            self._deal(action)
            return
        p = self.actors.pop(0)
        self.acted.add(p)
        n = self.d.num_players
        if action == FOLD:
            self.folded[p] = True
            self.actions[self.round].append((p, "f", 0))
        elif action == CALL:
            spent = self.spent  # remaining(p) and bet(p) inline
            spent[p] += min(self.d.stack[p] - spent[p], self.max_bet() - (spent[p] - self.round_start[p]))
            self.actions[self.round].append((p, "c", spent[p]))
        else:
            if self.d.is_limit:
                total = self._limit_raise_to(p)
            else:
                total = action - RAISE_OFFSET
            max_bet = self.max_bet()
            new_bet = total - self.round_start[p]
            increment = new_bet - max_bet
            self.spent[p] = total
            self.actors = [(p + i) % n for i in range(1, n)
                           if not self.folded[(p + i) % n] and self.remaining((p + i) % n) > 0]
            if increment >= self.raise_inc:
                self.acted = {p}
            self.raise_inc = max(self.raise_inc, increment)
            self.raise_count += 1
            if self.remaining(p) > 0:
                self.short_allins = []
            else:
                self.short_allins.append(increment)
            if sum(self.short_allins) >= self.raise_inc:
                self.short_allins = []
            self.actions[self.round].append((p, "r", total))
        if not self.actors or self.num_active() <= 1:
            self._end_round()

    def _limit_raise_to(self, p: int) -> int:
        d = self.d
        cap = self.bet(p) + self.remaining(p)
        lo = min(cap, max(self.raise_inc, d.raise_size[self.round]) + self.max_bet())
        return self.round_start[p] + lo

    # ------------------------------------------------------------------ outcome
    def hand_values(self) -> List[Optional[tuple]]:
        """Showdown strength of every live player (comparable tuples, higher wins; None if folded)."""
        values: List[Optional[tuple]] = []
        for p in range(self.d.num_players):
            if self.folded[p]:
                values.append(None)
            else:
                values.append(hand_strength(self.hole[p] + self.board))
        return values

    def pots(self, contenders: Optional[Sequence[int]] = None) -> List[Tuple[int, List[int]]]:
        """Main and side pots as ``(chips, eligible seats)``.

        A pot per contribution level; consecutive pots with the same eligible players are merged.
        Eligible: players who have not folded (and are in ``contenders`` when given).  Dead antes
        (``ante_trimming=false``) are left out of the contribution levels and added to the first pot.
        """
        n = self.d.num_players
        allowed = set(range(n)) if contenders is None else set(contenders)
        dead = self.game.dead_antes
        contribution = [self.spent[p] - dead[p] for p in range(n)]
        pots: List[Tuple[int, List[int]]] = []
        previous = 0
        amount = sum(dead)
        for level in sorted(set(contribution)):
            amount += sum(min(s, level) - min(s, previous) for s in contribution)
            eligible = [p for p in range(n) if not self.folded[p] and p in allowed and contribution[p] >= level]
            while pots and pots[-1][1] == eligible:
                amount += pots.pop()[0]
            if amount:
                pots.append((amount, eligible))
            amount = 0
            previous = level
        return pots

    def winnings(self) -> List[float]:
        """Chips each player collects at the end of the hand (terminal states).

        Players whose hand wins no pot drop out first, then the pots are re-formed among the rest
        (so a pot split between the same players is split once); a tie splits a pot evenly and the
        odd chips go to the tied player with the lowest seat (pokerkit's convention).  With
        ``fractional_split`` ties split every pot exactly into fractions of a chip (the ACPC
        dealer's convention).
        """
        n = self.d.num_players
        won = [0] * n
        if self.game.fractional_split and self.num_active() > 1:
            values = self.hand_values()
            for amount, eligible in self.pots():
                best = max(values[p] for p in eligible)
                winners = [p for p in eligible if values[p] == best]
                for p in winners:
                    won[p] += amount / len(winners)
            return won
        live = [p for p in range(n) if not self.folded[p]]
        if len(live) == 1:
            won[live[0]] = self.pot()
            return won
        values = self.hand_values()
        contenders = set()
        for amount, eligible in self.pots():
            best = max(values[p] for p in eligible)
            contenders.update(p for p in eligible if values[p] == best)
        for amount, eligible in self.pots(sorted(contenders)):
            best = max(values[p] for p in eligible)
            winners = [p for p in eligible if values[p] == best]
            share, odd = divmod(amount, len(winners))
            for p in winners:
                won[p] += share
            won[winners[0]] += odd
        return won

    def returns(self) -> List[float]:
        if not self._terminal:
            return [0.0] * self.d.num_players
        won = self.winnings()
        return [float(won[p] - self.spent[p]) for p in range(self.d.num_players)]

    def reached_showdown(self) -> bool:
        return self._terminal and self.num_active() > 1

    # ------------------------------------------------------------------ strings
    def betting_string(self) -> str:
        """ACPC betting string: ``r300c/cr900f`` (no-limit amounts are raise-to totals)."""
        parts = []
        for r in range(self.round + 1):
            codes = []
            for _, code, total in self.actions[r]:
                if code == "r" and not self.d.is_limit:
                    codes.append(f"r{total}")
                else:
                    codes.append(code)
            parts.append("".join(codes))
        return "/".join(parts)

    def cards_string(self, viewer: Optional[int] = None) -> str:
        """ACPC cards: ``hole|hole/flop/turn/river``; hole cards of others hidden unless ``viewer`` is None
        or the hand was shown down (non-folded players)."""
        from cfrkit.cards import cards_to_string

        d = self.d
        shown = []
        showdown = self.reached_showdown()
        for p in range(d.num_players):
            if viewer is None or p == viewer or (showdown and not self.folded[p]):
                shown.append(cards_to_string(self.hole[p]))
            else:
                shown.append("")
        text = "|".join(shown)
        start = 0
        for r in range(self.round + 1):
            count = d.num_board_cards[r]
            if r > 0 or count:
                text += "/" + cards_to_string(self.board[start:start + count])
            start += count
        return text

    def information_state_string(self, player: Optional[int] = None) -> str:
        if player is None:
            player = self.current_player()
        if player < 0:
            raise GameError("information_state_string needs a player at chance or terminal nodes")
        return f"{player}:{self.betting_string()}:{self.cards_string(viewer=player)}"

    def public_state_string(self) -> str:
        from cfrkit.cards import cards_to_string

        return f"{self.betting_string()}:{cards_to_string(self.board)}"

    def action_to_string(self, action: int, player: Optional[int] = None) -> str:
        if player == CHANCE or (player is None and self.is_chance_node()):
            from cfrkit.cards import card_to_string

            return card_to_string(action)
        if action == FOLD:
            return "f"
        if action == CALL:
            return "c"
        if self.d.is_limit:
            return "r"
        return f"r{action - RAISE_OFFSET}"


def hand_strength(cards: Sequence[int]) -> tuple:
    """Comparable strength of the best poker hand in ``cards`` (higher wins).

    5-7 cards use :func:`cfrkit.cards.evaluate`; fewer cards (small ACPC games) rank by pairs,
    trips and quads then high cards (no straights or flushes with fewer than 5 cards); 8 or more
    cards take the best 7-card subset.
    """
    n = len(cards)
    if 5 <= n <= 7:
        from cfrkit.cards import evaluate

        return (evaluate(list(cards)),)
    if n > 7:
        from itertools import combinations

        from cfrkit.cards import evaluate

        return (max(evaluate(list(c)) for c in combinations(cards, 7)),)
    counts: Dict[int, int] = {}
    for c in cards:
        counts[c >> 2] = counts.get(c >> 2, 0) + 1
    groups = sorted(((cnt, rank) for rank, cnt in counts.items()), reverse=True)
    shape = tuple(cnt for cnt, _ in groups)
    category = {(4,): 7, (3, 1): 3, (3,): 3, (2, 2): 2, (2, 1, 1): 1, (2, 1): 1, (2,): 1}.get(shape, 0)
    return (0, category) + tuple(rank for _, rank in groups)


register("holdem", HoldemGame,
         {"definition": DEFAULT_DEFINITION, "stacks": (), "blinds": (), "antes": (), "fractional_split": False,
          "ante_trimming": False},
         "Hold'em from an ACPC game definition (data/acpc/*.game or a path); limit and no-limit, 2-10 players")
