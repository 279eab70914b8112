"""A blueprint's own expected values as an AIVAT value function (issue 27, A^C).

:func:`blueprint_values` makes one backward pass over the abstract betting tree with the blueprint's
average strategy for both seats (self-play values):

    V[n][b0, b1]  = seat 0's expected chips at node ``n`` when seat 0 holds bucket ``b0`` and seat 1
                    bucket ``b1`` of round ``round[n]``  (float64[B_r, B_r] per node)

* a fold terminal: ``+spent[1]`` or ``-spent[0]``; a showdown: ``W_r[b0, b1] * pot - spent[0]``
  where ``W_r`` is an approximate win probability from the bucket order (the EHS abstractions number
  buckets weakest first): ``1/2 + (q0 - q1)`` clipped to [0, 1], ``q`` the bucket's quantile;
* a decision of seat ``p``: ``sum_a sigma(a | n, b_p) V[child_a]`` (numpy over buckets);
* a call that closes a round: ``T_r V[next] T_r^T``, ``T_r[b, b']`` the abstraction's transition
  statistics ``P(bucket b' next round | bucket b this round)``, estimated at load from ``boards``
  sampled boards (each player's transition taken independently of the other's).

Chance is approximated only inside the table: :class:`BlueprintValueFunction` maps a real state to the
abstract node (pseudo-harmonic bet translation, the most likely abstract size) and the two real hands
to their buckets, and its ``chance_expectation`` uses the TRUE chance distribution given both hands:
the turn and river exactly (every card), the flop by ``flops`` flops drawn uniformly from the cards
left by its own generator (an unbiased estimate), the hole cards exactly from the joint distribution
of the preflop buckets over all disjoint pairs of hands.  So AIVAT stays unbiased; the approximations
cost variance only.  A state the tree cannot follow (off-tree betting) and all-in run-outs use the
check-down equity value ``eq * pot - c0``.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from cfrkit.cards.hands import HOLE_PAIRS, pair_index
from cfrkit.games.base import GameError
from cfrkit.games.holdem.game import CALL, FOLD, raise_amount
from cfrkit.solvers.blueprint.betting_tree import (ACTION_CALL, ACTION_FOLD, DECISION,
                                                   FOLD_TERMINAL, SHOWDOWN)

__all__ = ["blueprint_values", "bucket_transitions", "BlueprintValueFunction"]

_MAX_ENTRIES = 50_000_000  # float64 entries of the value table (400 MB): larger abstractions are refused


def _runs_out(state) -> bool:
    """Whether the chance run at ``state`` deals to the end of the hand (a real all-in)."""
    s = state.clone()
    while s.is_chance_node():
        s.apply_action(int(s.chance_outcomes()[0][0]))
    return s.is_terminal()


def _win_matrix(num_buckets: int) -> np.ndarray:
    """float64[B, B]: approximate P(seat 0 wins) + ties/2 from the buckets' strength quantiles."""
    q = (np.arange(num_buckets) + 0.5) / num_buckets
    return np.clip(0.5 + q[:, None] - q[None, :], 0.0, 1.0)


def bucket_transitions(abstraction, boards: int = 24, seed: int = 0) -> List[np.ndarray]:
    """``[T_0, T_1, T_2]``: ``T_r`` float64[B_r, B_{r+1}], row-stochastic, the fraction of hands in bucket
    ``b`` of round ``r`` that are in bucket ``b'`` after the next card(s), over ``boards`` sampled
    run-outs (every live hole pair of each; rows never seen are uniform)."""
    rng = np.random.default_rng(seed)
    nb = [int(abstraction.num_buckets(r)) for r in range(4)]
    counts = [np.zeros((nb[r], nb[r + 1])) for r in range(3)]
    for _ in range(int(boards)):
        board = [int(c) for c in rng.permutation(52)[:5]]
        prev = np.asarray(abstraction.buckets_for_board(0, []))
        for r, n in ((1, 3), (2, 4), (3, 5)):
            cur = np.asarray(abstraction.buckets_for_board(r, board[:n]))
            ok = (prev >= 0) & (cur >= 0)
            np.add.at(counts[r - 1], (prev[ok], cur[ok]), 1.0)
            prev = cur
    out = []
    for c in counts:
        rows = c.sum(axis=1, keepdims=True)
        out.append(np.where(rows > 0, c / np.maximum(rows, 1.0), 1.0 / c.shape[1]))
    return out


def blueprint_values(strategy, transitions: List[np.ndarray]) -> List[Optional[np.ndarray]]:
    """The backward pass (module doc): ``V[n]`` float64[B_r, B_r] (seat 0's chips) for every node ``n`` of
    ``strategy.tree`` (terminals too), ``transitions`` from :func:`bucket_transitions`."""
    t = strategy.tree
    nb = strategy.num_buckets
    rounds = t.round.astype(np.int64)
    if int(sum(nb[int(r)] ** 2 for r in rounds)) > _MAX_ENTRIES:
        raise GameError(f"the blueprint's value table would have more than {_MAX_ENTRIES} entries "
                        f"(buckets {nb}); use the equity value function")
    wins = [_win_matrix(b) for b in nb]
    V: List[Optional[np.ndarray]] = [None] * t.num_nodes
    for n in range(t.num_nodes - 1, -1, -1):  # children come after their parent
        r = int(rounds[n])
        s0, s1 = float(t.spent[n, 0]), float(t.spent[n, 1])
        k = int(t.kind[n])
        if k == FOLD_TERMINAL:
            V[n] = np.full((nb[r], nb[r]), -s0 if int(t.player[n]) == 0 else s1)
        elif k == SHOWDOWN:
            V[n] = wins[r] * (s0 + s1) - s0
        else:
            first, m = int(t.child_start[n]), int(t.num_children[n])
            sigma = strategy.probabilities(n, np.arange(nb[r]))  # [B_r, m]
            acc = np.zeros((nb[r], nb[r]))
            for i in range(m):
                c = first + i
                vc = V[c]
                if int(rounds[c]) != r:  # a call closing the round: expectation over the next buckets
                    tr = transitions[r]
                    vc = tr @ vc @ tr.T
                w = sigma[:, i]
                acc += vc * (w[:, None] if int(t.player[n]) == 0 else w[None, :])
            V[n] = acc
    return V


class BlueprintValueFunction:
    """Seat 0's value in chips of a real heads-up hold'em state from a blueprint's self-play values.

    ``strategy``: a :class:`~cfrkit.solvers.blueprint.strategy.BlueprintStrategy`; ``view``: the match's
    :class:`~cfrkit.poker.view.HoldemView`; ``boards``: run-outs sampled for the transition statistics;
    ``flops``: flops sampled per flop expectation; ``seed``: both samplers' seed.  ``translate_raise``:
    the agent's translation (``BlueprintAgent.translate_raise``), so the tree follows the hand as the
    agent does (the most likely abstract size of a translated raise).
    """

    def __init__(self, strategy, view, translate_raise, boards: int = 24, flops: int = 32, seed: int = 0):
        if flops < 1:
            raise GameError(f"flops must be >= 1, got {flops}")
        self.strategy = strategy
        self.tree = strategy.tree
        self.ab = strategy.abstraction
        self.view = view
        self.translate_raise = translate_raise
        self.flops = int(flops)
        self.trans = bucket_transitions(self.ab, boards, seed)
        self.V = blueprint_values(strategy, self.trans)
        self.rng = np.random.default_rng(np.random.SeedSequence([int(seed), 2727]))
        self._preflop_joint: Optional[np.ndarray] = None

    # ------------------------------------------------------------------ mapping
    def node_of(self, state) -> Optional[int]:
        """The abstract node the real betting history leads to (a decision or, after a round-closing
        call, the next round's first decision), or None when the tree cannot follow it."""
        t = self.tree
        real = state.game.new_initial_state()
        node = 0
        for action in state.history():
            if real.is_chance_node():
                real.apply_action(action)
                continue
            if t.kind[node] != DECISION or t.player[node] != real.current_player():
                return None
            if action in (FOLD, CALL):
                child = t.child_of_kind(node, ACTION_FOLD if action == FOLD else ACTION_CALL)
                if child is None:
                    return None
            else:
                choices = self.translate_raise(node, real, raise_amount(action))
                if not choices:
                    return None
                child = max(choices, key=lambda cp: cp[1])[0]
            real.apply_action(action)
            node = int(child)
        return node

    def _buckets(self, r: int, board, hole) -> Tuple[int, int]:
        b = self.ab.buckets_for_board(r, list(board))
        return int(b[pair_index(*hole[0])]), int(b[pair_index(*hole[1])])

    def _equity_value(self, state) -> float:
        c = self.view.contributions(state)
        return self.view.equity_hands(state) * (c[0] + c[1]) - c[0]

    # ------------------------------------------------------------------ the value function
    def value(self, state) -> float:
        """Seat 0's value of ``state`` in chips (exact winnings at a terminal)."""
        if state.is_terminal():
            return float(state.returns()[0])
        hole = state.hole
        if len(hole[0]) < 2 or len(hole[1]) < 2:
            return self.chance_expectation(state)
        node = self.node_of(state)
        if node is None or self.tree.kind[node] != DECISION or (state.is_chance_node() and _runs_out(state)):
            return self._equity_value(state)
        r = int(self.tree.round[node])
        board = list(state.board)
        if state.is_chance_node() and r > 0 and len(board) < (0, 3, 4, 5)[r]:
            # a round-closing call: the transition-averaged table at the previous round's buckets
            b0, b1 = self._buckets(r - 1, board, hole)
            tr = self.trans[r - 1]
            return float(tr[b0] @ self.V[node] @ tr[b1])
        if len(board) != (0, 3, 4, 5)[r]:
            return self._equity_value(state)
        b0, b1 = self._buckets(r, board, hole)
        return float(self.V[node][b0, b1])

    def chance_expectation(self, state) -> float:
        """``E_c v(state c)`` over the run of chance nodes at ``state`` under the true chance
        distribution (exact, or the flop by an unbiased sample; see the module doc)."""
        hole = state.hole
        if len(hole[0]) == 0 and len(hole[1]) == 0:
            return float(np.sum(self._joint() * self.V[0]))
        if len(hole[0]) < 2 or len(hole[1]) < 2:
            raise GameError("chance_expectation between the two players' hole cards is not supported")
        node = self.node_of(state)
        if node is None or self.tree.kind[node] != DECISION or _runs_out(state):
            return self._equity_value(state)  # all-in run-out or off the tree: E_c of the equity value is itself
        r = int(self.tree.round[node])
        board = [int(c) for c in state.board]
        need = (0, 3, 4, 5)[r] - len(board)
        if need <= 0:
            return self.value(state)
        dead = set(board) | set(hole[0]) | set(hole[1])
        rest = np.array([c for c in range(52) if c not in dead], dtype=np.int64)
        if need == 1:
            boards = [board + [int(c)] for c in rest]
        else:
            picks = np.argsort(self.rng.random((self.flops, rest.size)), axis=1)[:, :need]
            boards = [board + [int(c) for c in rest[p]] for p in picks]
        total = 0.0
        for bd in boards:
            b0, b1 = self._buckets(r, bd, hole)
            total += float(self.V[node][b0, b1])
        return total / len(boards)

    def _joint(self) -> np.ndarray:
        """float64[B_0, B_0]: the exact joint distribution of the two seats' preflop buckets."""
        if self._preflop_joint is None:
            nb = self.strategy.num_buckets[0]
            cls = np.asarray(self.ab.buckets_for_board(0, []), dtype=np.int64)
            cards = np.zeros((1326, 52))
            pairs = np.asarray(HOLE_PAIRS)
            cards[np.arange(1326), pairs[:, 0]] = 1.0
            cards[np.arange(1326), pairs[:, 1]] = 1.0
            disjoint = ((cards @ cards.T) == 0).astype(np.float64)
            onehot = np.zeros((1326, nb))
            onehot[np.arange(1326), cls] = 1.0
            joint = onehot.T @ disjoint @ onehot
            self._preflop_joint = joint / joint.sum()
        return self._preflop_joint
