"""AIVAT values from a continual re-solving agent's own re-solves (DeepStack, A^D; issue 27).

A re-solving agent (:class:`~cfrkit.agents.holdem_deepstack.HoldemDeepStackAgent`, the Leduc
:class:`~cfrkit.agents.leduc_agents.LeducDeepStackAgent`) solves, at each of its decisions, the public
subgame from the actual state to the end of the street (or of the game) for both players; its action
is drawn from that solve's average strategy.  :class:`ResolveValueFunction` values a state ``h`` (seat
0's chips, both hands known, as AIVAT's in-process observer allows) by the solve made at the agent's
latest decision *strictly before* ``h`` (before its first decision: the hand's first solve, the plain
solve from the start of the betting): the expected chips of the two actual hands from ``h``'s node of
that solve's tree when both seats play the solve's strategies (the agent's own, which it plays, and its
model of the opponent), leaves and showdowns at the hands' exact check-down equity:

    v(node) = sum_a sigma_p(a | hand_p) v(child a)          (decision of seat p)
    v(node) = mean over the cards c the two hands leave of v(child c)   (chance inside the tree)
    v(leaf) = eq(hand_0, hand_1 | board) * pot - c_0,  v(fold) = the folder's loss

(``eq`` on the state's own board: :meth:`~cfrkit.poker.view.PokerView.equity_hands`; preflop: the
exact hand-against-hand table :func:`~cfrkit.cards.preflop.preflop_equity_table`, float32, the same
numbers for the deal's expectation and for the dealt hands; other boards: showdown strengths over every
card to come).  At the agent's decision the children's values are the *action values of the solve
that produced the action* (the agent memoises it: :meth:`hand_strategy` and :meth:`act` read the same
solve), so AIVAT's term ``v(h a) - sum_a' sigma(a') v(h a')`` is taken against the strategy played.

Unbiasedness does not depend on these numbers (every AIVAT term has zero mean whatever ``v`` is), only
on the chance expectations, which follow the true distribution given both hands:

* the deal: the mean of the first solve's root value over every ordered pair of disjoint hands (one
  vectorised pass over the tree, computed once per solve; ~1.6 million pairs in hold'em, seconds);
* a chance node inside the solve's tree (Leduc's board card; hold'em with value nets): every card,
  each valued as above;
* a chance node where the solve stopped (hold'em without nets: the next street's card): ``v`` is the
  check-down value ``eq * pot - c_0`` there and, after the cards, the same with the new board's equity and
  the pot where play left the tree; its mean over the cards to come is itself (the equity is a
  martingale), so no enumeration.

A state off the solve's tree because the opponent bet a size the solve did not offer is valued at the
solve's raise of the nearest size (hold'em; any function keeps AIVAT unbiased).  A state the tree cannot
reach otherwise (a new street where the opponent acts before the agent has re-solved it) takes the
check-down value of its own pot (``left_tree="checkdown"``, default; a raise counted as if called) or
the pot where play left the tree (``"frozen"``: the opponent's choices there all get one value, so its
decision adds no term).  The agent's next re-solve of
the new street is not used for the chance term: that would need a re-solve per possible board
(docs/evaluation.md).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Dict, Optional, Sequence, Tuple

import numpy as np

from cfrkit.solvers.public.public_tree import (ALLIN_NODE, CHANCE_NODE, DECISION, FOLD_NODE, LEAF, SHOWDOWN_NODE,
                                               PublicNode)

#: the deal's expectation per solve (result, root node index, mean), shared by every value function of the process
#: (a ladder makes one per match); the last few solves kept
_DEAL_CACHE: "OrderedDict[int, Tuple[object, int, float]]" = OrderedDict()
_DEAL_CACHE_SIZE = 8

#: pairs of hands per chunk of the deal's all-pairs pass (memory: a few float64 arrays of this length per tree level)
_CHUNK = 400_000

#: ``ResolveValueFunction(hand_value=...)``: the pair of actual hands, the agent's own hand at the states
#: ``resolve_next`` re-solves, its own hand everywhere
HAND_VALUES = ("pair", "own_next", "own")


class ResolveValueFunction:
    """Seat 0's value (chips) of a state from a re-solving agent's own solves (module docstring).

    ``view``: the match's :class:`~cfrkit.poker.view.PokerView`; ``agent``: an agent with
    ``resolve_covering(state, seat) -> (ResolveResult, public actions from its root, position)`` (the solve
    of its latest decision in ``seat`` strictly before ``state``).  The observer tells it where the agent
    sits (:meth:`hand_start`); without that call it assumes both seats (the latest solve of either).
    ``nearest_raise`` (default True): an off-tree raise is valued at the tree's raise of the nearest size
    (False: as a state outside the tree).  ``left_tree``: a state outside the tree (a new street before the agent
    re-solved it) is valued at the check-down value of its own pot (``"checkdown"``, default: a raise there counted as
    if called and checked down) or at its board's check-down equity times the pot where play left the tree
    (``"frozen"``: every action there has the same value, so an opponent's decision outside the tree adds no term).
    Both keep the cards' term a martingale; on 150 deals of A^D vs A^C neither was reliably better: one uncorrected
    200-big-blind all-in made "frozen" no better than plain counting (benchmarks/RESULTS.md).  ``stats`` counts
    the values taken in the tree, at a mapped raise and outside the tree.  ``resolve_next`` (default False): a
    state where the agent acts next after a betting action is valued by the agent's own re-solve there
    (``resolve_at``; the one its next decision uses when the state is played, an extra re-solve for each other
    child of the opponent's decisions, seconds each in hold'em; with the agent's ``keep_preflop`` about 1.25x the
    agent's own CPU per hand), closing the gap between an earlier solve's model of the agent's play and its
    re-solve; after a card the rule above stays (a re-solve per card would be needed).
    ``next_iterations`` (with ``resolve_next``; default None: the agent's own re-solves): those states are valued by
    a re-solve there with this many iterations instead, made from the same earlier solve for *every* such state,
    the one then played included (``resolve_at(state, seat, iterations=...)``, kept apart from the re-solve the
    agent's ``act`` makes there).  Cheaper (one cheap re-solve per child instead of a full one per child not
    taken); unbiased, since a child's value must not depend on which child is drawn: giving the taken child the
    agent's full re-solve and the others cheap ones would make the opponent's term biased.
    ``hand_value``: what a node of a solve is worth for the two actual hands.  ``"pair"`` (default): the pair value
    above, both seats on the solve's strategies *for their actual hands*; the solve pins the opponent's strategy for
    its actual hand down only through the opponent's range, so where that hand is one the solve's model would play
    otherwise than the opponent does, the value follows the model (A^D vs A^C, hand 67: a check valued as the
    opponent paying off a 183-big-blind shove it would not make).  ``"own_next"`` (needs ``resolve_next``): a state
    where the agent acts next after a betting action is valued by the agent's counterfactual value of its *own*
    actual hand against the opponent's range in its re-solve there (the re-solve's cfv of the hand divided by the
    opponent's reach of the hands it does not block: chips; zero-sum for the opponent's seat), the DeepStack AIVAT
    paper's choice; other states as ``"pair"``.  ``"own"``: that own-hand value at every node of the agent's solves
    (the covering solve's, in the seat it was made for; the deal's expectation is then the mean over the agent's
    hands).  A node without cfvs (below an all-in run-out) or where the opponent's range is empty falls back to
    the pair value.  Each is fixed before the draws it values, so AIVAT stays unbiased.  ``next_outside`` (with
    ``resolve_next``): a state where the agent acts next but which its covering solve does not reach (a new street
    the opponent opened before the agent re-solved it) is valued by the agent's re-solve there (``"resolve"``,
    default) or by the rule of ``left_tree`` (``"checkdown"``: as without ``resolve_next``; the check-down rule that
    corrected A^D vs A^C's 200-big-blind all-in).
    """

    def __init__(self, view, agent, nearest_raise: bool = True, left_tree: str = "checkdown", resolve_next: bool = False,
                 next_iterations: Optional[int] = None, hand_value: str = "pair", next_outside: str = "resolve"):
        if left_tree not in ("frozen", "checkdown"):
            raise ValueError(f"left_tree must be 'frozen' or 'checkdown', got {left_tree!r}")
        if hand_value not in HAND_VALUES:
            raise ValueError(f"hand_value must be one of {HAND_VALUES}, got {hand_value!r}")
        if hand_value == "own_next" and not resolve_next:
            raise ValueError("hand_value='own_next' values the states of resolve_next: needs resolve_next=True")
        if next_outside not in ("resolve", "checkdown"):
            raise ValueError(f"next_outside must be 'resolve' or 'checkdown', got {next_outside!r}")
        self.hand_value = hand_value
        self.next_outside = next_outside
        if next_iterations is not None and (not resolve_next or int(next_iterations) < 1):
            raise ValueError(f"next_iterations needs resolve_next=True and a positive count, got {next_iterations!r}")
        self.next_iterations = None if next_iterations is None else int(next_iterations)
        self.left_tree = left_tree
        self.resolve_next = bool(resolve_next)
        self.view = view
        self.agent = agent
        self.nearest_raise = bool(nearest_raise)
        self.seats: Tuple[int, ...] = (0, 1)
        self._memo: Dict[tuple, Tuple[object, float]] = {}
        self._strengths: Dict[Tuple[int, ...], np.ndarray] = {}
        self._table = None
        self._holdem = False
        self.stats = {"tree": 0, "mapped": 0, "left": 0}

    # ------------------------------------------------------------------ observer hooks
    def hand_start(self, hand) -> None:
        """Read the agent's seats in this hand (``hand.seat_agents``, checked agents unwrapped)."""
        seats = tuple(s for s, a in enumerate(hand.seat_agents) if getattr(a, "agent", a) is self.agent)
        self.seats = seats
        self._memo.clear()

    # ------------------------------------------------------------------ values
    def value(self, state) -> float:
        """Seat 0's value of ``state`` (chips): the solve's pair value, else the check-down value."""
        if state.is_terminal():
            return float(state.returns()[0])
        if not self.view.hands_dealt(state):
            return self._checkdown(state)
        found = self._resolved_here(state) if self.resolve_next else None
        own_seat = None
        if found is not None and self.hand_value != "pair":
            own_seat = state.current_player()
        if found is None:
            found = self._locate(state)
            if found is not None and self.hand_value == "own":
                own_seat = found[3]
        if found is None or found[2] == "left":
            self.stats["left"] += 1
            return self._left(state, None if found is None else found[1])
        result, node, status = found[:3]
        self.stats[status] += 1
        if own_seat is not None:
            own = self._own_value(result, node, own_seat, self.view.hand_of(state, own_seat))
            if own is not None:
                self.stats["own"] = self.stats.get("own", 0) + 1
                return own
        x = self.view.hand_of(state, 0)
        y = self.view.hand_of(state, 1)
        key = (id(result), node.index, x, y)
        hit = self._memo.get(key)
        if hit is None or hit[0] is not result:   # (the solve kept with its values: an id is never read stale)
            self._pgame(result)
            here = (tuple(node.board), self._state_equity(state, node))
            hit = (result, float(self._walk(result, node, np.array([x]), np.array([y]), here)[0]))
            if len(self._memo) > 100_000:
                self._memo.clear()
            self._memo[key] = hit
        return hit[1]

    def chance_expectation(self, state) -> float:
        """``E_c v(state c)`` over the run of chance nodes at ``state`` under the true distribution given the
        hands: the deal by every pair of hands, a chance node inside the solve's tree by every card, else the
        check-down value (a martingale)."""
        if not self.view.hands_dealt(state):
            return self._deal_expectation(state)
        found = self._locate(state)
        if found is not None and found[1].kind == CHANCE_NODE and found[2] == "tree":
            return self._enumerate(state)
        # after the cards the state is outside the tree (play leaves it at this node: a leaf, or already outside),
        # valued by _left with this node's pot: the mean of the equity over the cards is today's
        return self._left(state, None if found is None else found[1])

    # ------------------------------------------------------------------ helpers
    def _checkdown(self, state) -> float:
        c = self.view.contributions(state)
        eq = self.view.equity_hands(state) if self.view.hands_dealt(state) else 0.5
        return eq * (c[0] + c[1]) - c[0]

    def _enumerate(self, state) -> float:
        total = 0.0
        for action, p in state.chance_outcomes():
            child = state.clone()
            child.apply_action(int(action))
            total += float(p) * (self._enumerate(child) if child.is_chance_node() else self.value(child))
        return total

    def _covering(self, state):
        """The agent's latest solve strictly before ``state`` over its seats: (result, public actions, position, seat)."""
        best = None
        for seat in self.seats:
            got = self.agent.resolve_covering(state, seat)
            if got is not None and (best is None or got[2] > best[2]):
                best = tuple(got) + (seat,)
        return best

    def _locate(self, state):
        """``(result, node, status, seat)``: the node of ``state`` in the covering solve's tree (status ``"tree"``),
        the node reached with off-tree raises taken as the nearest raise (``"mapped"``), or the node where play left
        the tree (``"left"``: a card or an action the tree does not have), and the seat the solve was read for; None
        before the hole cards."""
        got = self._covering(state)
        if got is None:
            return None
        result, rel, seat = got[0], tuple(got[1]), got[3]
        tree = result.tree
        node, k = tree.deepest_node(rel)
        if k == len(rel):
            return result, node, "tree", seat
        self._pgame(result)
        if not self.nearest_raise or not self._holdem:
            return result, node, "left", seat
        for a in rel[k:]:
            if node.kind != DECISION:
                return result, node, "left", seat
            if a in node.actions:
                node = tree.nodes[node.children[list(node.actions).index(a)]]
                continue
            j = _nearest_raise(node.actions, int(a))
            if j is None:
                return result, node, "left", seat
            node = tree.nodes[node.children[j]]
        return result, node, "mapped", seat

    def _resolved_here(self, state):
        """With ``resolve_next``: at the agent's decision reached by a betting action (not a card), its own re-solve
        there (``resolve_at``: made now if the agent has not, deterministic), whose root value is what its next
        decision term expects; None elsewhere."""
        seat = state.current_player()
        if seat not in self.seats:
            return None
        hist = list(state.history())
        parent = self.view.game.new_initial_state()
        for a in hist[:-1]:
            parent.apply_action(int(a))
        if parent.is_chance_node():
            return None   # after a card: the chance term's expectation would need a re-solve per card
        if self.next_outside == "checkdown":
            found = self._locate(state)
            if found is None or found[2] == "left":
                return None   # outside the covering solve's tree: the left_tree rule
        got = (self.agent.resolve_at(state, seat) if self.next_iterations is None
               else self.agent.resolve_at(state, seat, iterations=self.next_iterations))
        if got is None:
            return None
        result, rel = got[0], tuple(got[1])
        node, k = result.tree.deepest_node(rel)
        return (result, node, "tree") if k == len(rel) else None

    def _own_value(self, result, node: PublicNode, seat: int, hand: int, blocked=None) -> Optional[float]:
        """Seat 0's value (chips) at ``node`` of ``result`` from ``seat``'s own ``hand`` alone: the solve's cfv of the
        hand divided by the opponent's reach of the hands it does not block (its expected chips against the
        opponent's range there), negated for seat 1; None without cfvs or opponent reach there.  ``blocked``: the
        (H,) mask of hands sharing a card with ``hand`` (computed when not given)."""
        vals = result.values[node.index] if node.index < len(result.values) else None
        reach = result.reach[node.index] if node.index < len(result.reach) else None
        if vals is None or reach is None:
            return None
        vals = np.asarray(vals, dtype=np.float64).reshape(-1, 2, np.shape(vals)[-1])[0]
        reach = np.asarray(reach, dtype=np.float64).reshape(-1, 2, np.shape(reach)[-1])[0]
        pg = self._pgame(result)
        if blocked is None:
            cards = np.asarray(pg.hand_cards).reshape(int(pg.num_hands), -1)
            blocked = (cards[:, :, None] == cards[hand][None, None, :]).any(axis=(1, 2))
        opp = reach[1 - seat] * np.asarray(pg.hand_mask(tuple(node.board)), dtype=np.float64)
        norm = float(opp[~blocked].sum())
        if not norm > 1e-12 * max(float(opp.sum()), 1e-300):
            return None
        v = float(vals[seat, hand]) / norm
        return v if seat == 0 else -v

    def _left(self, state, node: Optional[PublicNode]) -> float:
        """The value of a state outside the solve's tree: the two hands' check-down equity on the state's board times
        the pot of ``node``, where play left the tree (``left_tree="frozen"``), or of the state itself
        (``"checkdown"``, or no node)."""
        if node is None or self.left_tree == "checkdown":
            return self._checkdown(state)
        eq = self.view.equity_hands(state)
        return eq * (node.contrib[0] + node.contrib[1]) - node.contrib[0]

    def _state_equity(self, state, node: PublicNode):
        """Seat 0's equity of the two actual hands on ``node``'s board (= the state's): the view's exact equity,
        preflop the float32 table (as the deal's expectation)."""
        if len(node.board) == 0 and self._holdem:
            return None  # the table, read in _equity
        return float(self.view.equity_hands(state))

    def _pgame(self, result):
        """The solve's public game; notes whether it is hold'em (52 cards: the preflop table, five-card boards)."""
        pg = result.tree.pgame
        self._holdem = int(pg.deck_size) == 52
        return pg

    def _walk(self, result, node: PublicNode, x: np.ndarray, y: np.ndarray, here) -> np.ndarray:
        """Seat 0's chips from ``node`` for the hand pairs ``(x[i], y[i])`` under the solve's strategies."""
        pg = self._pgame(result)
        kind = node.kind
        if kind == FOLD_NODE:
            v = -node.contrib[0] if node.folder == 0 else node.contrib[1]
            return np.full(x.shape, float(v))
        if kind in (LEAF, SHOWDOWN_NODE, ALLIN_NODE) or (kind == DECISION and result.strategy.get(node.index) is None):
            eq = self._equity(pg, tuple(node.board), x, y, here)
            return eq * (node.contrib[0] + node.contrib[1]) - node.contrib[0]
        tree = result.tree
        if kind == CHANCE_NODE:
            num = np.zeros(x.shape)
            den = np.zeros(x.shape)
            for c in node.children:
                child = tree.nodes[c]
                mask = pg.hand_mask(child.board)
                ok = mask[x] * mask[y]
                if not ok.any():
                    continue
                num += ok * self._walk(result, child, x, y, here)
                den += ok
            return num / np.where(den > 0, den, 1.0)
        if kind != DECISION:
            raise ValueError(f"unknown public node kind {kind!r}")
        strat = np.asarray(result.strategy[node.index][0], dtype=np.float64)   # (A, H)
        rows = strat[:, x if node.player == 0 else y]                          # (A, P)
        tot = rows.sum(axis=0)
        rows = np.where(tot > 0, rows / np.where(tot > 0, tot, 1.0), 1.0 / rows.shape[0])
        out = np.zeros(x.shape)
        for j, c in enumerate(node.children):
            w = rows[j]
            if not w.any():
                continue
            out += w * self._walk(result, tree.nodes[c], x, y, here)
        return out

    def _equity(self, pg, board: Tuple[int, ...], x: np.ndarray, y: np.ndarray, here) -> np.ndarray:
        """Seat 0's showdown equity of pairs ``(x, y)`` on ``board`` over the cards to come."""
        if self._holdem and len(board) == 0:
            if self._table is None:
                from cfrkit.cards.preflop import preflop_equity_table

                self._table = preflop_equity_table(progress=False)
            return self._table[x, y].astype(np.float64)
        if here is not None and here[1] is not None and board == here[0]:
            return np.full(x.shape, here[1])
        final = 5 if self._holdem else 1
        if len(board) >= final:
            s = self._strengths.get(board)
            if s is None:
                s = self._strengths[board] = np.asarray(pg.strengths(board))
            return (s[x] > s[y]) + 0.5 * (s[x] == s[y])
        num = np.zeros(x.shape)
        den = np.zeros(x.shape)
        for c in range(int(pg.deck_size)):
            if c in board:
                continue
            nb = board + (c,)
            mask = pg.hand_mask(nb)
            ok = mask[x] * mask[y]
            if ok.any():
                num += ok * self._equity(pg, nb, x, y, None)
                den += ok
        return num / np.where(den > 0, den, 1.0)

    def _deal_expectation(self, state) -> float:
        """Mean over every ordered pair of disjoint hands of the value right after the deal (once per solve)."""
        dealt = state.clone()
        while dealt.is_chance_node() and not self.view.hands_dealt(dealt):
            dealt.apply_action(int(dealt.chance_outcomes()[0][0]))
        if dealt.is_chance_node() or dealt.is_terminal():
            return self._checkdown(state)
        found = self._locate(dealt)
        if found is None or found[2] != "tree":
            return self._checkdown(state)
        result, node, _, seat = found
        own = self.hand_value == "own"
        key = (id(result), seat if own else None)
        hit = _DEAL_CACHE.get(key)
        if hit is not None and hit[0] is result and hit[1] == node.index:
            _DEAL_CACHE.move_to_end(key)
            return hit[2]
        pg = self._pgame(result)
        mask = pg.hand_mask(tuple(node.board))
        hands = np.flatnonzero(mask > 0)
        cards = np.asarray(pg.hand_cards).reshape(int(pg.num_hands), -1)
        if own:
            # the value after the deal is the seat's own-hand value, a function of its hand only: the mean over the
            # ordered pairs is the mean over its hands weighted by the number of opponent hands each leaves
            conflict = (cards[hands][:, None, :, None] == cards[hands][None, :, None, :]).any(axis=(2, 3))
            total = weight = 0.0
            for i, x in enumerate(hands):
                v = self._own_value(result, node, seat, int(x), blocked=np.isin(np.arange(cards.shape[0]),
                                                                                 hands[conflict[i]]) | (mask <= 0))
                if v is None:   # no cfv at the root: the pair values for this hand's pairs
                    ys = hands[~conflict[i]]
                    xs = np.full(ys.shape, x)
                    pv = self._walk(result, node, xs, ys, None) if seat == 0 else self._walk(result, node, ys, xs, None)
                    total += float(pv.sum())
                else:
                    total += v * float((~conflict[i]).sum())
                weight += float((~conflict[i]).sum())
            mean = total / weight
        else:
            xs, ys = np.meshgrid(hands, hands, indexing="ij")
            xs, ys = xs.ravel(), ys.ravel()
            disjoint = ~(cards[xs][:, :, None] == cards[ys][:, None, :]).any(axis=(1, 2))
            xs, ys = xs[disjoint], ys[disjoint]
            total = 0.0
            for lo in range(0, xs.size, _CHUNK):
                total += float(self._walk(result, node, xs[lo:lo + _CHUNK], ys[lo:lo + _CHUNK], None).sum())
            mean = total / xs.size
        _DEAL_CACHE[key] = (result, node.index, mean)
        while len(_DEAL_CACHE) > _DEAL_CACHE_SIZE:
            _DEAL_CACHE.popitem(last=False)
        return mean


def _nearest_raise(actions: Sequence[int], action: int) -> Optional[int]:
    """Index of the raise in ``actions`` nearest in size to ``action`` (hold'em raise-to ids), or None."""
    from cfrkit.games.holdem import RAISE_OFFSET

    if action < RAISE_OFFSET:
        return None
    raises = [(abs(int(a) - action), j) for j, a in enumerate(actions) if int(a) >= RAISE_OFFSET]
    return min(raises)[1] if raises else None
