"""A blueprint's value tables with another agent in one seat: AIVAT values for A^C against A^R (issue 27).

:func:`~cfrkit.agents.blueprint_values.blueprint_values` values every abstract node by the blueprint's self-play:
both seats play the blueprint.  Against A^R (or any agent whose strategy for every hand can be asked,
``hand_strategy``) that model is wrong exactly where the street lookahead of
:class:`~cfrkit.agents.blueprint_values.BlueprintValueFunction` hands over to the tables: preflop, and after each
round-closing call.  Here the other agent's strategy is estimated per (abstract node, bucket) from hands it
played, and the backward pass is run again with that estimate in its seat:

    sigma_R(a | n, b) = (W[n, b, a] + prior * sigma_BP(a | n, b)) / (sum_a W[n, b, a] + prior)

``W[n, b, a]``: over every decision the agent made at a state whose betting walks to node ``n`` (each raise to
its most likely abstract size), the summed weight of the hands of bucket ``b`` (on that board) for which its
``hand_strategy`` takes an action that walks to child ``a``; a hand's weight is the probability that the agent
played the hand's way to that state (its own reach, from its strategy at its earlier decisions of the hand).
So ``W`` is the agent's abstract strategy averaged as the abstract game averages it (over the hands of a bucket
that reach the node, on the boards played); ``prior`` (in hands) pulls nodes seldom seen to the blueprint's.

The estimate only shapes the value function: fitted on other hands than the ones evaluated (its own match, its
own seed), the tables are a fixed function, the chance expectations average the same tables (the deal
exactly, :func:`~cfrkit.agents.blueprint_values.deal_expectation`), so AIVAT stays unbiased whatever the fit.
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from cfrkit.agents.blueprint_values import (BlueprintValueFunction, NodeWalker, walk_step, blueprint_values,
                                            deal_expectation)
from cfrkit.games.base import GameError
from cfrkit.poker.match import MatchObserver, play_match
from cfrkit.solvers.blueprint.betting_tree import DECISION

__all__ = ["AbstractPolicyRecorder", "fit_abstract_policy", "opponent_sigma", "OpponentTablesValueFunction"]


class AbstractPolicyRecorder(MatchObserver):
    """A match observer that adds up ``W[seat][node]`` (float64[B_r, children of node], module doc) for the
    decisions of ``target`` (an agent with ``hand_strategy``: actions int64[A], probs float64[1326, A]) on the
    tree and abstraction of ``strategy``, raises translated by ``translate_raise`` (the most likely size)."""

    def __init__(self, strategy, translate_raise, target):
        self.strategy = strategy
        self.tree = strategy.tree
        self.ab = strategy.abstraction
        self.translate_raise = translate_raise
        self.target = target
        self.walker = NodeWalker(strategy.tree, translate_raise)
        self.counts: Dict[int, Dict[int, np.ndarray]] = {0: {}, 1: {}}
        self.decisions = 0
        self._reach: Dict[int, np.ndarray] = {}
        self._last = None

    def hand_start(self, hand) -> None:
        self._reach = {}
        self._last = None

    def _is_target(self, agent) -> bool:
        return getattr(agent, "agent", agent) is self.target

    def decision(self, hand, state, seat: int) -> None:
        self._last = None
        if not self._is_target(hand.seat_agents[seat]):
            return
        hs = self.target.hand_strategy(state)
        probs = np.asarray(hs.probs, dtype=np.float64)
        reach = self._reach.setdefault(seat, np.ones(probs.shape[0]))
        self._last = (np.asarray(hs.actions, dtype=np.int64), probs)
        t = self.tree
        node = self.walker.node_of(state)
        if (node is None or t.kind[node] != DECISION or int(t.player[node]) != seat
                or int(t.round[node]) != int(state.round)):
            return  # the tree cannot follow this hand: nothing to learn for the tables
        r = int(t.round[node])
        buckets = np.asarray(self.ab.buckets_for_board(r, [int(c) for c in state.board]), dtype=np.int64)
        ok = (buckets >= 0) & (reach > 0)
        first, m = int(t.child_start[node]), int(t.num_children[node])
        acc = self.counts[seat].get(node)
        if acc is None:
            acc = self.counts[seat][node] = np.zeros((int(self.strategy.num_buckets[r]), m))
        for j, action in enumerate(self._last[0]):
            w = probs[:, j] * reach
            sel = ok & (w > 0)
            if not sel.any():
                continue
            child = walk_step(t, self.translate_raise, node, state, int(action), None)
            if child is None or child < 0:
                continue  # an action the tree cannot follow (its weight is left out of this node's estimate)
            np.add.at(acc[:, int(child) - first], buckets[sel], w[sel])
        self.decisions += 1

    def action(self, hand, state, seat: int, action: int) -> None:
        if self._last is None:
            return
        actions, probs = self._last
        self._last = None
        hit = np.flatnonzero(actions == int(action))
        col = probs[:, hit[0]] if hit.size else np.zeros(probs.shape[0])
        self._reach[seat] = self._reach[seat] * col


def fit_abstract_policy(owner, target, deals: int, seed: int = 0) -> Dict[int, Dict[int, np.ndarray]]:
    """``W[seat][node]`` (module doc) of ``target`` from a duplicate match of ``deals`` deals (2 x ``deals``
    hands, ``target`` in each seat) against ``owner``, a :class:`~cfrkit.agents.blueprint.BlueprintAgent` whose
    tree and abstraction the tables use.  Use agent objects (and a seed) other than the evaluated match's, so
    the evaluated hands play as they would without the fit."""
    if deals < 1:
        raise GameError(f"deals must be >= 1, got {deals}")
    if not hasattr(target, "hand_strategy"):
        raise GameError(f"{getattr(target, 'name', target)!r} has no hand_strategy: its policy cannot be fitted")
    rec = AbstractPolicyRecorder(owner.blueprint, owner.translate_raise, target)
    play_match(owner.game, [owner, target], int(deals), seed=int(seed), duplicate=True, observers=[rec],
               time_limit=float("inf"))
    return rec.counts


def opponent_sigma(strategy, counts: Dict[int, np.ndarray], prior: float = 2.0):
    """``sigma(node)`` for :func:`~cfrkit.agents.blueprint_values.blueprint_values`: the smoothed estimate of the
    module doc at the nodes in ``counts`` (one seat's ``W``), None (the blueprint's strategy) elsewhere;
    ``prior`` in hands (> 0)."""
    if not prior > 0:
        raise GameError(f"prior must be > 0, got {prior}")

    def sigma(node: int) -> Optional[np.ndarray]:
        w = counts.get(int(node))
        if w is None:
            return None
        bp = strategy.probabilities(int(node), np.arange(w.shape[0]))
        return (w + prior * bp) / (w.sum(axis=1, keepdims=True) + prior)
    return sigma


class OpponentTablesValueFunction(BlueprintValueFunction):
    """:class:`~cfrkit.agents.blueprint_values.BlueprintValueFunction` whose tables, in a hand where ``opponent``
    (the agent object of the evaluated match) sits in seat ``s``, are those of the blueprint against the fitted
    model of ``opponent`` in seat ``s`` (``counts[s]``, from :func:`fit_abstract_policy`); the self-play tables in
    other hands.  ``prior``: see :func:`opponent_sigma`; other arguments as the base class.  One more backward
    pass per seat (seconds) and one more pair of float32 tables per seat in memory."""

    def __init__(self, strategy, view, translate_raise, opponent, counts: Dict[int, Dict[int, np.ndarray]],
                 prior: float = 2.0, **kwargs):
        super().__init__(strategy, view, translate_raise, **kwargs)
        self.opponent = opponent
        self.prior = float(prior)
        self._base = self.table
        seats = [int(s) for s, c in counts.items() if c]
        if sorted(seats) == [0, 1]:
            # every hand with ``opponent`` uses a fitted pair of tables: the self-play ones (0.6 GB for the
            # two-hour blueprint) are dropped before the fitted ones are built
            self._base = self.table = self._shared.table = None
        self._tables = {}
        for s in seats:
            self._tables[s] = blueprint_values(strategy, self.trans, opponent_sigma(strategy, counts[s], prior))
        self._deals = {}

    def hand_start(self, hand) -> None:
        super().hand_start(hand)
        seat = next((s for s, a in enumerate(hand.seat_agents) if getattr(a, "agent", a) is self.opponent), None)
        self.table = self._tables.get(seat, self._base) if seat is not None else self._base
        if self.table is None:
            raise GameError("OpponentTablesValueFunction: a hand without the fitted opponent (its self-play tables "
                            "were dropped, as both seats are fitted)")

    def _table_deal(self) -> float:
        if self.table is self._base:
            return super()._table_deal()
        hit = self._deals.get(id(self.table))
        if hit is None:
            hit = self._deals[id(self.table)] = deal_expectation(self.table, self.ab)
        return hit
