"""Hold'em postflop spots built as postflop-solver builds them: same bet sizes, same rules, same trees.

:class:`PostflopPublicGame` is a public poker game (see :mod:`cfrkit.solvers.public.games`) for a spot
given the way postflop-solver users give it: a flop, turn or river board, a starting pot, an effective
stack (chips behind each player), and bet sizes per street and per player, bets and raises apart
(:mod:`cfrkit.solvers.public.bet_sizing`).  Player 0 is out of position (acts first on every street).

Tree rules (those of postflop-solver's ``ActionTree``; chips are whole numbers, ``round`` is half away
from zero):

* ``pot`` = starting pot + both players' chips in after the mover calls.  A bet of ``X%`` is
  ``round(X * pot)`` chips; a raise of ``X%`` goes to ``previous bet + round(X * pot)`` on the street;
  ``Nx`` to ``round(N * previous bet)``; ``e`` is the geometric size that puts the stacks in over the
  remaining streets (``((2 * stack/pot + 1)^(1/n) - 1) / 2`` of the pot).  No raise cap (except ``c..r``).
* sizes are clamped to [minimum bet or raise, all-in]; a size within ``force_allin_threshold`` of the
  pot after it of all-in becomes all-in; all-in is added when the stack is at most
  ``add_allin_threshold`` pots (beyond the previous bet, for raises); sizes within
  ``merging_threshold`` of a larger one are dropped (PioSOLVER's merging, largest first).
* after an all-in only fold and call remain; a called all-in deals the remaining board cards and
  goes to showdown.  No rake, no donk-bet sizes (the first bet of a street uses the bet sizes).

Actions: fold ``0``, check ``1``, call ``2``, bet/raise/all-in to ``A`` chips on this street ``3 + A``.
Contributions include half the starting pot each, so utilities are net chips relative to the pot's
start.  ``deck`` (default: the 52 cards) restricts the cards that can be dealt and held: a reduced deck
makes small flop trees for tests.
"""
from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.games.base import GameError
from cfrkit.solvers.public.bet_sizing import ALLIN, CHIPS, GEOMETRIC, POT, PREV_BET, StreetSizes
from cfrkit.solvers.public.games import PublicPokerGame, cached_strengths, holdem_hands
from cfrkit.solvers.public.public_tree import (CHANCE_NODE, DECISION, FOLD_NODE, SHOWDOWN_NODE, DeferredState,
                                               NodeArrays, PublicNode, check_node_budget)

FOLD, CHECK, CALL, BET_BASE = 0, 1, 2, 3
STREETS = ("flop", "turn", "river")
_NONE, _CHECK, _CALL, _BET, _CHANCE = "none", "check", "call", "bet", "chance"


def _round(x: float) -> int:
    """Round half away from zero (Rust's ``f64::round``) for non-negative ``x``."""
    return int(math.floor(x + 0.5))


@dataclass(frozen=True, slots=True)  # slots: a flop tree holds ~1.2M of them
class PostflopState:
    """Public state: board, who acts (``player`` 0/1, or -1 at chance and terminal states), chips behind
    (``stack``), the street total of the last bet (``prev_amount``), what the last action was, bets made in
    the round, whether someone is all-in."""

    board: Tuple[int, ...]
    kind: str
    player: int
    stack: Tuple[int, int]
    prev_amount: int = 0
    prev_action: str = _NONE
    num_bets: int = 0
    allin: bool = False
    folder: int = -1
    history: Tuple[int, ...] = ()


def _node_state(node: PublicNode, fields: tuple) -> PostflopState:
    """The :class:`PostflopState` of a node built by :meth:`PostflopPublicGame.public_arrays`: its board and history
    with ``fields`` (the state's fields between them)."""
    return PostflopState(node.board, *fields, node.history)


def _parse_board(board) -> Tuple[int, ...]:
    from cfrkit.cards.encoding import parse_cards

    cards = parse_cards(board) if isinstance(board, str) else [int(c) for c in board]
    if len(cards) not in (3, 4, 5) or len(set(cards)) != len(cards) or min(cards) < 0 or max(cards) > 51:
        raise GameError(f"a postflop board needs 3, 4 or 5 distinct cards, got {board!r}")
    return tuple(cards)


def _street_sizes(spec) -> Tuple[StreetSizes, StreetSizes]:
    """(OOP, IP) sizes from one spec for both players or ``{"oop": spec, "ip": spec}``."""
    if isinstance(spec, dict):
        extra = set(spec) - {"oop", "ip"}
        if extra or not spec:
            raise GameError(f"per-player bet sizes take the keys 'oop' and 'ip', got {sorted(spec)}")
        oop = StreetSizes.of(spec.get("oop", spec.get("ip")))
        ip = StreetSizes.of(spec.get("ip", spec.get("oop")))
        return oop, ip
    s = StreetSizes.of(spec)
    return s, s


class PostflopPublicGame(PublicPokerGame):
    """A postflop-solver spot as a public game (see module docstring).

    Args:
        board: ``"Td9d6h"``, ``"8dAs8sKh"``, ... or card ids (3, 4 or 5 cards: the tree starts on that street).
        starting_pot: chips in the pot at the root (whole number, > 0).
        effective_stack: chips behind each player at the root (whole number, > 0).
        bet_sizes: sizes for every street, or ``{"flop": ..., "turn": ..., "river": ...}``; each value is a
            string for bets and raises alike (``"50%, 100%, a"``), a ``(bets, raises)`` pair of strings, a
            :class:`~cfrkit.solvers.public.bet_sizing.StreetSizes`, or ``{"oop": ..., "ip": ...}`` of those.
            Streets left out offer no sized bets (check/call/fold and the automatic all-in only).
        add_allin_threshold, force_allin_threshold, merging_threshold: postflop-solver's thresholds; 0
            disables each, as in its ``TreeConfig::default()`` (its examples use 1.5, 0.15 and 0.1).
        deck: cards in play (default all 52).
    """

    def __init__(self, board, starting_pot: int, effective_stack: int, bet_sizes="50%, 100%, a",
                 add_allin_threshold: float = 0.0, force_allin_threshold: float = 0.0,
                 merging_threshold: float = 0.0, deck: Optional[Sequence[int]] = None):
        self.board_cards = _parse_board(board)
        if int(starting_pot) != starting_pot or starting_pot <= 0:
            raise GameError(f"starting pot must be a positive whole number of chips, got {starting_pot}")
        if int(effective_stack) != effective_stack or effective_stack <= 0:
            raise GameError(f"effective stack must be a positive whole number of chips, got {effective_stack}")
        for name, v in (("add_allin_threshold", add_allin_threshold),
                        ("force_allin_threshold", force_allin_threshold), ("merging_threshold", merging_threshold)):
            if not (v >= 0 and math.isfinite(v)):
                raise GameError(f"{name} must be finite and non-negative, got {v}")
        self.starting_pot = int(starting_pot)
        self.effective_stack = int(effective_stack)
        if isinstance(bet_sizes, dict) and set(bet_sizes) <= set(STREETS) and bet_sizes:
            per_street = {s: bet_sizes.get(s) for s in STREETS}
        else:
            per_street = {s: bet_sizes for s in STREETS}
        self.sizes: Dict[str, Tuple[StreetSizes, StreetSizes]] = {
            s: (_street_sizes(v) if v is not None else (StreetSizes(), StreetSizes())) for s, v in per_street.items()}
        self.add_allin_threshold = float(add_allin_threshold)
        self.force_allin_threshold = float(force_allin_threshold)
        self.merging_threshold = float(merging_threshold)
        self.deck = tuple(sorted(set(int(c) for c in deck))) if deck is not None else tuple(range(52))
        if not set(self.board_cards) <= set(self.deck):
            raise GameError("the board must be made of cards in the deck")
        if len(self.deck) - 5 < 4:
            raise GameError(f"a deck of {len(self.deck)} cards cannot deal two hands and the board")
        self.hand_cards = holdem_hands()
        self.num_hands = 1326
        self.deck_size = 52
        self.cards_per_hand = 2
        in_deck = np.zeros(52, bool)
        in_deck[list(self.deck)] = True
        self._deck_mask = in_deck[self.hand_cards].all(axis=1).astype(np.float64)
        self._strengths: Dict[Tuple[int, ...], np.ndarray] = {}
        # the actions offered depend on the betting state only, not on the cards: a flop tree repeats each
        # turn and river betting sequence under every dealt card (about 2000 times), so they are computed once
        self._actions: Dict[tuple, List[int]] = {}

    # -------------------------------------------------------------- structure
    def street_of(self, board: Sequence[int]) -> str:
        return STREETS[len(board) - 3]

    def root(self, state=None) -> PostflopState:
        if state is not None:
            if not isinstance(state, PostflopState):
                raise GameError("PostflopPublicGame roots its tree at its own board; pass no state")
            return state
        s = self.effective_stack
        return PostflopState(self.board_cards, "decision", 0, (s, s))

    def kind(self, ps: PostflopState) -> str:
        return ps.kind

    def player(self, ps: PostflopState) -> int:
        return ps.player

    def contributions(self, ps: PostflopState) -> Tuple[float, float]:
        half = self.starting_pot / 2
        return (half + self.effective_stack - ps.stack[0], half + self.effective_stack - ps.stack[1])

    def folder(self, ps: PostflopState) -> int:
        return ps.folder

    def board(self, ps: PostflopState) -> Tuple[int, ...]:
        return ps.board

    def round(self, ps: PostflopState) -> int:
        return len(ps.board) - 2

    # -------------------------------------------------------------- betting
    def bet_amounts(self, ps: PostflopState) -> List[Tuple[str, int]]:
        """Sorted ``(kind, street total)`` of the offered actions: ``fold``/``check``/``call`` (amount 0),
        ``bet``/``raise``/``allin`` (chips this player will have put in on this street)."""
        p, o = ps.player, 1 - ps.player
        to_call = ps.stack[p] - ps.stack[o]
        pot = self.starting_pot + 2 * (self.effective_stack - ps.stack[o])
        prev = ps.prev_amount
        max_amount = ps.stack[o] + prev
        min_amount = min(max(prev + to_call, 1), max_amount)
        street = self.street_of(ps.board)
        remaining = 3 - STREETS.index(street)
        sizes = self.sizes[street][p]
        spr_after_call = ps.stack[o] / pot

        def geometric(streets: int, top: float) -> int:
            ratio = ((2.0 * spr_after_call + 1.0) ** (1.0 / streets) - 1.0) / 2.0
            return _round(pot * min(ratio, top))

        acts: List[Tuple[str, int]] = []
        if ps.prev_action in (_NONE, _CHECK, _CHANCE):
            acts.append((_CHECK, 0))
            for b in sizes.bet:
                if b.kind == POT:
                    acts.append((_BET, _round(pot * b.value)))
                elif b.kind == CHIPS:
                    acts.append((_BET, int(b.value)))
                elif b.kind == GEOMETRIC:
                    acts.append((_BET, geometric(b.streets or remaining, b.value)))
                elif b.kind == ALLIN:
                    acts.append((ALLIN, max_amount))
            if max_amount <= _round(pot * self.add_allin_threshold):
                acts.append((ALLIN, max_amount))
        else:
            acts.append(("fold", 0))
            acts.append((_CALL, 0))
            if not ps.allin:
                for b in sizes.raise_:
                    if b.kind == POT:
                        acts.append(("raise", prev + _round(pot * b.value)))
                    elif b.kind == PREV_BET:
                        acts.append(("raise", _round(prev * b.value)))
                    elif b.kind == CHIPS:
                        if b.cap == 0 or ps.num_bets <= b.cap:
                            acts.append(("raise", prev + int(b.value)))
                    elif b.kind == GEOMETRIC:
                        n = max((b.streets or remaining) - ps.num_bets + 1, 1)
                        acts.append(("raise", prev + geometric(n, b.value)))
                    elif b.kind == ALLIN:
                        acts.append((ALLIN, max_amount))
                if max_amount <= prev + _round(pot * self.add_allin_threshold):
                    acts.append((ALLIN, max_amount))

        def forced_allin(amount: int) -> bool:
            new_pot = pot + 2 * (amount - prev)
            return max_amount <= amount + _round(new_pot * self.force_allin_threshold)

        out = []
        for kind, amount in acts:
            if kind in (_BET, "raise"):
                clamped = min(max(amount, min_amount), max_amount)
                if forced_allin(clamped):
                    kind, amount = ALLIN, max_amount
                else:
                    amount = clamped
            out.append((kind, amount))
        order = {"fold": 0, _CHECK: 1, _CALL: 2, _BET: 3, "raise": 4, ALLIN: 5}
        out = sorted(set(out), key=lambda a: (order[a[0]], a[1]))
        return self._merge(out, pot, prev)

    def _merge(self, acts: List[Tuple[str, int]], pot: int, offset: int) -> List[Tuple[str, int]]:
        """Drop bet sizes within ``merging_threshold`` of the next larger kept one (largest first)."""
        cur = 2 ** 31 - 1
        kept = []
        for kind, amount in reversed(acts):
            if kind in (_BET, "raise", ALLIN):
                ratio = (amount - offset) / pot
                cur_ratio = (cur - offset) / pot
                limit = (cur_ratio - self.merging_threshold) / (1.0 + self.merging_threshold)
                if ratio < limit * (1.0 - 1e-12):
                    kept.append((kind, amount))
                    cur = amount
            else:
                kept.append((kind, amount))
        return kept[::-1]

    def actions(self, ps: PostflopState) -> List[int]:
        key = (len(ps.board), ps.player, ps.stack, ps.prev_amount, ps.prev_action, ps.allin, ps.num_bets)
        out = self._actions.get(key)
        if out is None:
            out = self._actions[key] = [{"fold": FOLD, _CHECK: CHECK, _CALL: CALL}.get(kind, BET_BASE + amount)
                                        for kind, amount in self.bet_amounts(ps)]
        return list(out)

    def child(self, ps: PostflopState, action: int) -> PostflopState:
        action = int(action)
        if action not in self.actions(ps):
            raise GameError(f"action {action} is not offered here; offered: {self.actions(ps)}")
        return self._child(ps, action)

    def children(self, ps: PostflopState) -> List[Tuple[int, PostflopState]]:
        """``(action, child state)`` per offered action of ``ps`` (the actions are offered, so not re-checked)."""
        return [(a, self._child(ps, a)) for a in self.actions(ps)]

    def _child(self, ps: PostflopState, action: int) -> PostflopState:
        p, o = ps.player, 1 - ps.player
        hist = ps.history + (action,)
        river = len(ps.board) == 5
        stack = list(ps.stack)
        if action == FOLD:
            return PostflopState(ps.board, "terminal", -1, ps.stack, folder=p, history=hist)
        if action == CHECK:
            if p == 0:
                return PostflopState(ps.board, "decision", 1, ps.stack, 0, _CHECK, ps.num_bets, ps.allin,
                                     history=hist)
            return self._street_over(ps.board, ps.stack, ps.allin, hist, river)
        if action == CALL:
            stack[p] = stack[o]
            return self._street_over(ps.board, (stack[0], stack[1]), ps.allin, hist, river)
        amount = action - BET_BASE
        to_call = stack[p] - stack[o]
        stack[p] -= amount - ps.prev_amount + to_call
        allin = amount == ps.stack[o] + ps.prev_amount
        return PostflopState(ps.board, "decision", o, (stack[0], stack[1]), amount, _BET, ps.num_bets + 1, allin,
                             history=hist)

    def public_nodes(self, root: PostflopState, max_nodes: int, progress=None) -> List[PublicNode]:
        """Pre-order :class:`PublicNode` list of the full tree below ``root``: the nodes of
        :meth:`public_arrays` as objects."""
        return list(self.public_arrays(root, max_nodes, progress))

    def public_arrays(self, root: PostflopState, max_nodes: int, progress=None) -> NodeArrays:
        """The full tree below ``root`` (no depth limit) as :class:`~cfrkit.solvers.public.public_tree.NodeArrays`:
        the nodes :func:`~cfrkit.solvers.public.public_tree.build_public_tree`'s generic walk builds, field for
        field, each made when read.

        Fast path of the builder (a flop tree has ~1.2M nodes): the children of a betting state depend on its
        street, stacks and betting fields only, not on the board or the history, so each distinct betting state
        is expanded once (:meth:`_child` on a representative) and reused under every board; a node is five
        numbers (its betting situation, board, parent, action and depth: 18 bytes instead of a ~200-byte
        object).  The nodes share one :class:`~cfrkit.solvers.public.public_tree.DeferredState` per betting state
        (their :class:`PostflopState` is made from the node's board and history when read) and one contributions
        tuple per stack pair.  ``progress(nodes_built)`` every 4096 nodes.
        """
        code = "i" if self.effective_stack + BET_BASE < 2 ** 31 else "q"  # actions are BET_BASE + chips
        sids, bids, parents, acts, depths = array("i"), array("i"), array("i"), array(code), array("h")
        half, eff = self.starting_pot / 2, self.effective_stack
        contribs: Dict[Tuple[int, int], Tuple[float, float]] = {}
        deferred: Dict[tuple, DeferredState] = {}
        states: List[tuple] = []  # per (board length, betting fields): (kind, player, folder, contrib, actions, state)
        state_id: Dict[tuple, int] = {}
        expansions: Dict[tuple, tuple] = {}
        boards: List[Tuple[int, ...]] = [tuple(root.board)]
        child_board: Dict[Tuple[int, int], int] = {}
        chance_cards: Dict[int, Tuple[int, ...]] = {}
        deck = self.deck

        def contrib_of(stack):
            c = contribs.get(stack)
            if c is None:
                c = contribs[stack] = (half + eff - stack[0], half + eff - stack[1])
            return c

        def deferred_of(fields):
            # fields: PostflopState's fields between board and history
            d = deferred.get(fields)
            if d is None:
                d = deferred[fields] = DeferredState(_node_state, fields)
            return d

        def sid_of(board, f) -> int:
            # the betting situation of a node of state PostflopState(board, *f): its index in ``states``
            key = (len(board), f)
            s = state_id.get(key)
            if s is None:
                kind = f[0]
                if kind == "terminal":
                    if f[7] < 0 and f[2][0] != f[2][1]:
                        raise GameError(f"showdown with unequal contributions {contrib_of(f[2])}")
                    entry = (FOLD_NODE if f[7] >= 0 else SHOWDOWN_NODE, -1, f[7], contrib_of(f[2]), (), deferred_of(f))
                elif kind == "chance":
                    entry = (CHANCE_NODE, -1, -1, contrib_of(f[2]), None, deferred_of(f))
                else:
                    entry = (DECISION, f[1], -1, contrib_of(f[2]), expand(board, f)[0], deferred_of(f))
                s = state_id[key] = len(states)
                states.append(entry)
            return s

        def expand(board, fields):
            # (actions, ((action, child fields, child's situation, whether the child is a fold/showdown), ..))
            key = (len(board), fields)
            out = expansions.get(key)
            if out is None:
                ps = PostflopState(board, *fields)
                kids = []
                for a in self.actions(ps):
                    c = self._child(ps, a)
                    f = (c.kind, c.player, c.stack, c.prev_amount, c.prev_action, c.num_bets, c.allin, c.folder)
                    kids.append((a, f, sid_of(board, f), c.kind == "terminal"))
                out = expansions[key] = (tuple(k[0] for k in kids), tuple(kids))
            return out

        def add(board, bid, a, f, s, parent: int, depth: int) -> None:
            # a node of state PostflopState(board, *f, history) and situation ``s``: a decision, a chance node or an
            # all-in run-out's showdown (the other terminals are made by their parent's loop)
            idx = len(sids)
            if idx >= max_nodes or (progress is not None and not idx & 4095):
                check_node_budget(idx, max_nodes, progress)
            sids.append(s)
            bids.append(bid)
            parents.append(parent)
            acts.append(a)
            depths.append(depth)
            kind = f[0]
            if kind == "terminal":
                return
            d1 = depth + 1
            if kind == "chance":
                cards = chance_cards.get(bid)
                if cards is None:
                    used = set(board)
                    cards = chance_cards[bid] = tuple(c for c in deck if c not in used)
                stack = f[2]
                if f[6]:  # all-in: the run-out's cards, then the showdown
                    cf = ("chance" if len(board) < 4 else "terminal", -1, stack, 0, _NONE, 0, True, -1)
                else:
                    cf = ("decision", 0, stack, 0, _CHANCE, 0, False, -1)
                cs = -1
                for c in cards:
                    cb = child_board.get((bid, c))
                    if cb is None:
                        cb = child_board[(bid, c)] = len(boards)
                        boards.append(board + (c,))
                    if cs < 0:
                        cs = sid_of(boards[cb], cf)
                    add(boards[cb], cb, c, cf, cs, idx, d1)
                return
            for a, cf, cs, terminal in expand(board, f)[1]:
                if not terminal:
                    add(board, bid, a, cf, cs, idx, d1)
                    continue
                k = len(sids)  # a terminal child, made here (half the nodes of a tree)
                if k >= max_nodes or (progress is not None and not k & 4095):
                    check_node_budget(k, max_nodes, progress)
                sids.append(cs)
                bids.append(bid)
                parents.append(idx)
                acts.append(a)
                depths.append(d1)

        f = (root.kind, root.player, root.stack, root.prev_amount, root.prev_action, root.num_bets, root.allin,
             root.folder)
        add(boards[0], 0, -1, f, sid_of(boards[0], f), -1, 0)
        return NodeArrays(sids, bids, parents, acts, depths, states, boards, chance_cards, root, root.history)

    @staticmethod
    def _street_over(board, stack, allin, hist, river) -> PostflopState:
        if river:
            return PostflopState(board, "terminal", -1, tuple(stack), allin=allin, history=hist)
        return PostflopState(board, "chance", -1, tuple(stack), allin=allin, history=hist)

    # -------------------------------------------------------------- chance
    def chance_cards(self, ps: PostflopState) -> List[int]:
        used = set(ps.board)
        return [c for c in self.deck if c not in used]

    def chance_child(self, ps: PostflopState, card: int) -> PostflopState:
        board = ps.board + (int(card),)
        hist = ps.history + (int(card),)
        if ps.allin:
            kind = "chance" if len(board) < 5 else "terminal"
            return PostflopState(board, kind, -1, ps.stack, allin=True, history=hist)
        return PostflopState(board, "decision", 0, ps.stack, 0, _CHANCE, 0, False, history=hist)

    def chance_weight(self, board: Sequence[int]) -> float:
        return 1.0 / (len(self.deck) - len(board) - 4)

    def hand_mask(self, board: Sequence[int]) -> np.ndarray:
        return super().hand_mask(board) * self._deck_mask

    # -------------------------------------------------------------- showdown and labels
    def strengths(self, board: Sequence[int]) -> np.ndarray:
        """Showdown strength of every pair on a 5-card ``board`` (zeros before the river)."""
        return cached_strengths(self._strengths, tuple(sorted(int(c) for c in board)))

    def action_label(self, ps: PostflopState, action: int) -> str:
        if action == FOLD:
            return "fold"
        if action == CHECK:
            return "check"
        if action == CALL:
            return "call"
        amount = action - BET_BASE
        if amount == ps.stack[1 - ps.player] + ps.prev_amount:
            return f"all-in {amount}"
        return f"{'raise' if ps.prev_action == _BET else 'bet'} {amount}"

    def describe(self) -> str:
        """One line per street with both players' sizes (postflop-solver's notation)."""
        lines = []
        for s in STREETS[len(self.board_cards) - 3:]:
            oop, ip = self.sizes[s]
            lines.append(f"{s}: OOP {oop}; IP {ip}" if oop != ip else f"{s}: {oop}")
        return "\n".join(lines)


def action_tree_counts(pgame: PostflopPublicGame) -> Tuple[int, int, int]:
    """Nodes of the action tree per street ``(flop, turn, river)``, one card per chance node -- the count
    postflop-solver's ``ActionTree`` reports (every node, terminal and chance nodes included, a chance node
    on the street it closes); streets before the root's count 0."""
    counts = [0, 0, 0]

    def walk(ps: PostflopState):
        counts[len(ps.board) - 3] += 1
        if ps.kind == "terminal":
            return
        if ps.kind == "chance":
            walk(pgame.chance_child(ps, pgame.chance_cards(ps)[0]))
            return
        for a in pgame.actions(ps):
            walk(pgame.child(ps, a))

    walk(pgame.root())
    return counts[0], counts[1], counts[2]
