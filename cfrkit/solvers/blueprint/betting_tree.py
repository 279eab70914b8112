"""The betting tree of an action-abstracted heads-up no-limit game, as flat arrays.

Betting does not depend on the cards, so the abstract game's betting tree is built once, by walking
:class:`~cfrkit.games.holdem.abstraction.AbstractHoldemGame` (its raise sizes: ``f`` times the pot
after calling, all-in offered whenever raising is legal) with a cap on the raises of each round.
There are no chance nodes: a call that closes a round leads straight to the next round's first
decision (the blueprint solver samples the whole board before it walks the tree), and a call that
puts a player all-in leads to a showdown.

Layout (node ids: children contiguous, after their parent):

* ``kind[n]``: 0 decision, 1 fold terminal, 2 showdown terminal;
* ``player[n]`` (decisions: acting seat; folds: the seat that folded), ``round[n]`` (0..3);
* ``child_start[n]``, ``num_children[n]`` (decisions);
* ``spent[n, 2]``: chips each seat has put in (blinds included) at the node;
* ``action_kind[c]`` of the action leading to child ``c`` (0 fold, 1 check/call, 2 raise),
  ``raise_to[c]`` (chips, ACPC ``r<N>`` total), ``pot_fraction[c]`` (the raise increment over the pot
  after calling: the abstract size), ``is_allin[c]``;
* ``slot[n]``: first entry of decision ``n`` in the regret / strategy-sum arrays, laid out
  ``slot[n] + bucket * num_children[n] + action`` (``num_buckets[round[n]]`` buckets per node).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.games.base import GameError
from cfrkit.games.holdem.abstraction import AbstractHoldemGame
from cfrkit.games.holdem.game import CALL, FOLD, HoldemGame

DECISION, FOLD_TERMINAL, SHOWDOWN = 0, 1, 2
ACTION_FOLD, ACTION_CALL, ACTION_RAISE = 0, 1, 2

#: the OpenHoldem A^C action abstraction: fold, check/call, half pot, pot, all-in.
DEFAULT_BETS = "0.5+1"
DEFAULT_GAME = "holdem"
DEFAULT_RAISE_CAP = 3

#: named action abstractions: ``(bets, raise cap)``.  ``rich``: six sizes (1/3, 1/2, 3/4, 1, 3/2, 2 pots) for the
#: first bet preflop and on the flop, then 1/2, 1, 2 and 1 pot for later raises preflop, 1/2 and 1 then 1 pot on
#: the flop, 1/2 and 1 then 1 pot on turn and river, all-in always; at most 4 raises a round.  With
#: 169/1000/1000/1000 buckets: 157.6 million information sets, 405 million entries (docs/blueprint.md).
ACTION_PRESETS = {
    "acpc": (DEFAULT_BETS, DEFAULT_RAISE_CAP),
    "rich": ("0.33+0.5+0.75+1+1.5+2:0.5+1+2:1/0.33+0.5+0.75+1+1.5+2:0.5+1:1/0.5+1:1/0.5+1:1", 4),
}


class BlueprintError(GameError):
    """Bad input to the blueprint solver or agent (the message says what was given and what is allowed)."""


@dataclass
class BettingTree:
    """Flat arrays of an abstract betting tree (see the module docstring)."""

    game_string: str
    bets: str
    raise_cap: int
    kind: np.ndarray
    player: np.ndarray
    round: np.ndarray
    child_start: np.ndarray
    num_children: np.ndarray
    spent: np.ndarray
    action_kind: np.ndarray
    raise_to: np.ndarray
    pot_fraction: np.ndarray
    is_allin: np.ndarray
    stacks: Tuple[int, int]
    num_rounds: int

    @property
    def num_nodes(self) -> int:
        return int(self.kind.shape[0])

    def decision_nodes(self, round_index: int = -1) -> np.ndarray:
        """Ids of the decision nodes (of one round when ``round_index >= 0``)."""
        mask = self.kind == DECISION
        if round_index >= 0:
            mask &= self.round == round_index
        return np.flatnonzero(mask)

    def slots(self, num_buckets: Sequence[int]) -> Tuple[np.ndarray, int]:
        """``(slot int64[nodes], total)`` for ``num_buckets[r]`` buckets in round ``r``: the layout of the
        per-(node, bucket, action) arrays (``slot = -1`` at terminals)."""
        if len(num_buckets) < self.num_rounds:
            raise BlueprintError(f"the card abstraction has {len(num_buckets)} rounds, the game {self.num_rounds}")
        sizes = np.where(self.kind == DECISION,
                         np.asarray(num_buckets, dtype=np.int64)[self.round] * self.num_children, 0)
        slot = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        slot[self.kind != DECISION] = -1
        return slot, int(sizes.sum())

    def children(self, node: int) -> range:
        """The ids of ``node``'s children (contiguous)."""
        first = int(self.child_start[node])
        return range(first, first + int(self.num_children[node]))

    def child_of_kind(self, node: int, kind: int) -> Optional[int]:
        """``node``'s first child reached by an action of ``kind`` (``ACTION_FOLD`` / ``ACTION_CALL``), or None."""
        for c in self.children(node):
            if self.action_kind[c] == kind:
                return c
        return None

    def fingerprint(self) -> str:
        """A digest of the rules and every array (checkpoints and agents compare it)."""
        h = hashlib.sha256(json.dumps([self.game_string, self.bets, self.raise_cap]).encode())
        for arr in (self.kind, self.player, self.round, self.child_start, self.num_children, self.spent,
                    self.action_kind, self.raise_to):
            h.update(np.ascontiguousarray(arr).tobytes())
        return h.hexdigest()[:16]

    def path_string(self, node: int) -> str:
        """The betting line to ``node`` (``c r300 c / r600 f``), for messages and docs."""
        parent = {}
        for n in np.flatnonzero(self.kind == DECISION):
            for c in range(self.child_start[n], self.child_start[n] + self.num_children[n]):
                parent[int(c)] = int(n)
        parts: List[str] = []
        n = int(node)
        while n in parent:
            p = parent[n]
            code = "fcr"[self.action_kind[n]]
            parts.append(f"r{self.raise_to[n]}" if code == "r" else code)
            if self.round[n] != self.round[p]:
                parts.append("/")
            n = p
        return " ".join(reversed(parts))


def parse_action_abstraction(text: str) -> Tuple[str, Optional[int]]:
    """One string for the whole action abstraction -> ``(bets, raise cap or None)``.

    ``text`` is a preset name (:data:`ACTION_PRESETS`), or a bet spec (pot fractions, see
    :mod:`cfrkit.games.holdem.abstraction`) optionally followed by ``@CAP`` (raises per round), e.g.
    ``0.33+0.75+1.5:1/0.5+1@3``.  Raises :class:`BlueprintError` for a bad cap.
    """
    t = str(text).strip()
    if t in ACTION_PRESETS:
        bets, cap = ACTION_PRESETS[t]
        return bets, int(cap)
    if "@" in t:
        bets, _, cap_text = t.rpartition("@")
        try:
            cap = int(cap_text)
        except ValueError:
            raise BlueprintError(f"action abstraction {text!r}: the raise cap after '@' must be an integer, got "
                                 f"{cap_text!r}") from None
        if cap < 1:
            raise BlueprintError(f"action abstraction {text!r}: the raise cap must be at least 1, got {cap}")
        return bets.strip(), cap
    return t, None


def build_betting_tree(game: str = DEFAULT_GAME, bets: str = DEFAULT_BETS, raise_cap: int = DEFAULT_RAISE_CAP,
                       max_nodes: int = 5_000_000) -> BettingTree:
    """Build the betting tree of heads-up no-limit ``game`` under the action abstraction ``bets``.

    ``bets``: the syntax of :mod:`cfrkit.games.holdem.abstraction` (pot fractions per round and raise
    number; default ``0.5+1``: half pot and pot), all-in always offered; ``raise_cap``: at most this many
    raises per round (then only fold and call).  Raises :class:`BlueprintError` for a game that is not
    heads-up no-limit hold'em or a tree larger than ``max_nodes``.
    """
    if int(raise_cap) < 1:
        raise BlueprintError(f"the raise cap must be at least 1 per round, got {raise_cap}")
    try:
        abstract = AbstractHoldemGame(game=game, bets=bets, allin=True)
    except GameError as exc:
        raise BlueprintError(f"blueprint game {game!r} with bets {bets!r}: {exc}") from None
    inner: HoldemGame = abstract.inner
    d = inner.definition
    if d.num_players != 2 or d.is_limit:
        raise BlueprintError(f"the blueprint solver plays heads-up no-limit hold'em; {inner.game_string()!r} "
                             f"has {d.num_players} players and {d.betting} betting")
    if d.num_hole_cards != 2 or d.num_suits != 4 or d.num_ranks != 13:
        raise BlueprintError(f"the blueprint solver needs the 52-card deck and 2 hole cards (card abstraction "
                             f"over 1326 pairs); {inner.game_string()!r} differs")
    kind: List[int] = []
    player: List[int] = []
    rnd: List[int] = []
    child_start: List[int] = []
    num_children: List[int] = []
    spent: List[Tuple[int, int]] = []
    action_kind: List[int] = []
    raise_to: List[int] = []
    pot_fraction: List[float] = []
    is_allin: List[bool] = []

    def new_node() -> int:
        kind.append(0), player.append(-1), rnd.append(0), child_start.append(0), num_children.append(0)
        spent.append((0, 0)), action_kind.append(0), raise_to.append(0), pot_fraction.append(0.0)
        is_allin.append(False)
        if len(kind) > max_nodes:
            raise BlueprintError(f"the betting tree has more than {max_nodes} nodes; lower the raise cap "
                                 f"or use fewer bet sizes")
        return len(kind) - 1

    deck = list(d.deck())

    def deal(state) -> None:
        # betting does not depend on the cards: deal the lowest unused ones
        while state.is_chance_node():
            used = set(state.inner.board) | {c for h in state.inner.hole for c in h}
            state.apply_action(next(c for c in deck if c not in used))

    def fill(n: int, state) -> None:
        s = state.inner
        spent[n] = (s.spent[0], s.spent[1])
        rnd[n] = s.round
        if s.is_terminal():
            if s.num_active() < 2:
                kind[n] = FOLD_TERMINAL
                player[n] = 0 if s.folded[0] else 1
            else:
                kind[n] = SHOWDOWN
            return
        kind[n] = DECISION
        p = s.current_player()
        player[n] = p
        options = []
        if s.is_legal(FOLD):
            options.append((ACTION_FOLD, FOLD, 0, 0.0, False))
        options.append((ACTION_CALL, CALL, s.spent[p] + s.call_amount(p), 0.0, False))
        for a, total, pots in state.raise_targets():
            allin = a == abstract.allin_action
            # past the cap only the all-in raise stays (so any real re-raise has an abstract image)
            if s.raise_count < raise_cap or allin:
                options.append((ACTION_RAISE, a, total, pots, allin))
        first = len(kind)
        for _ in options:
            new_node()
        child_start[n] = first
        num_children[n] = len(options)
        for i, (code, a, total, pots, allin) in enumerate(options):
            c = first + i
            action_kind[c] = code
            raise_to[c] = total
            pot_fraction[c] = pots
            is_allin[c] = allin
            child = state.clone()
            child.apply_action(a)
            deal(child)
            fill(c, child)

    root_state = abstract.new_initial_state()
    deal(root_state)
    root = new_node()
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        fill(root, root_state)
    finally:
        sys.setrecursionlimit(limit)
    return BettingTree(
        game_string=inner.game_string(), bets=str(bets), raise_cap=int(raise_cap),
        kind=np.asarray(kind, dtype=np.int8), player=np.asarray(player, dtype=np.int8),
        round=np.asarray(rnd, dtype=np.int8), child_start=np.asarray(child_start, dtype=np.int32),
        num_children=np.asarray(num_children, dtype=np.int32), spent=np.asarray(spent, dtype=np.int64),
        action_kind=np.asarray(action_kind, dtype=np.int8), raise_to=np.asarray(raise_to, dtype=np.int64),
        pot_fraction=np.asarray(pot_fraction, dtype=np.float64), is_allin=np.asarray(is_allin, dtype=bool),
        stacks=(int(d.stack[0]), int(d.stack[1])), num_rounds=int(d.num_rounds))
