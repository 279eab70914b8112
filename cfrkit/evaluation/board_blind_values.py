"""AIVAT values for two hold'em agents whose play never reads the board: the betting's exact expectation.

When neither agent looks at the board cards (random, always-call, fixed-range-raiser: ``ignores_board``),
the betting that follows a state does not depend on the cards still to come.  Player 0's expected winnings
from a state ``h`` where both hands are dealt are then exactly::

    v(h) = A(h) + eq(h) * B(h)                                   (chips of seat 0)

with ``eq(h)`` seat 0's showdown equity against seat 1's actual hand over the cards to come, and over every
betting line ``l`` the agents can play from ``h`` (with its probability ``P(l)`` under their known
strategies for the hands they hold)::

    A(h) = sum_{l ends in a fold} P(l) * won_0(l)  -  sum_{l reaches showdown} P(l) * m(l)
    B(h) = sum_{l reaches showdown} P(l) * 2 m(l)

(``m(l)`` the chips each side has matched at the showdown).  :class:`BoardBlindValueFunction` computes
``A`` and ``B`` by walking the betting tree from ``h`` (cards the walk needs are placeholders: nobody reads
them), memoised per betting string and per pair of the agents' hand classes.

Why AIVAT stays unbiased (its terms need ``E_c v(h c)`` exactly at chance events):

* after the deal, ``A`` and ``B`` do not change with a board card and the equity is a martingale over the
  cards to come, so ``E_c v(h c) = A(h) + E_c eq(h c) B(h) = v(h)``: no enumeration;
* at the deal, ``E v`` is summed exactly over the agents' hand classes (an agent's strategy depends on its
  hole cards only through ``hand_classes()``; one class for agents with ``ignores_hand``), with the class
  pairs' probabilities and mean equities from the exact preflop equity counts
  (:func:`cfrkit.cards.preflop.table_from_matchup_counts` in float64).

A raise size drawn from a continuous range (random) enters through the strategy's representative sizes
(``own_strategy``; :func:`cfrkit.poker.agent.size_node_weights`): ``v`` stays an exact expectation of that
discretised play, which is all AIVAT needs of it (any ``v`` keeps the estimator unbiased; the closer to the
real expectation, the lower the variance).  Everything else (chance, both agents' mixed choices) is exact,
so between two agents of this kind AIVAT's deviation is what the size discretisation leaves.
"""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.cards import preflop as cards_preflop
from cfrkit.games.base import GameError
from cfrkit.games.holdem.game import CHANCE, HoldemGame
from cfrkit.poker.agent import CheckedAgent
from cfrkit.poker.view import PokerView

__all__ = ["BoardBlindValueFunction", "board_blind", "class_pair_moments", "hand_classes"]

_MEMO_LIMIT = 200_000   # memo entries before it is cleared (about 50 MB at most)


def board_blind(agent) -> bool:
    """Whether ``agent`` (or the agent a :class:`~cfrkit.poker.agent.CheckedAgent` wraps) plays without reading
    the board (``ignores_board``), answers ``own_strategy`` for the hand it holds, and has a known partition of
    its hole cards (``ignores_hand`` or ``hand_classes()``)."""
    inner = getattr(agent, "agent", agent)
    return (bool(getattr(inner, "ignores_board", False)) and hasattr(inner, "own_strategy")
            and (bool(getattr(inner, "ignores_hand", False)) or hasattr(inner, "hand_classes")))


def hand_classes(agent) -> np.ndarray:
    """int64[1326]: the class of each hole pair such that ``agent``'s strategy depends on its hole cards only
    through it (all 0 for an agent with ``ignores_hand``)."""
    inner = getattr(agent, "agent", agent)
    if getattr(inner, "ignores_hand", False):
        return np.zeros(1326, dtype=np.int64)
    labels = np.asarray(inner.hand_classes(), dtype=np.int64)
    if labels.shape != (1326,) or labels.min() < 0:
        raise GameError(f"agent {getattr(inner, 'name', inner)!r}: hand_classes() must give 1326 labels >= 0, "
                        f"got shape {labels.shape}")
    return labels


def _preflop_equity_float64() -> np.ndarray:
    """float64[1326, 1326]: the exact preflop equity of each pair against each pair (0 where they share a card)."""
    if os.path.exists(cards_preflop.MATCHUP_FILE):
        return cards_preflop.table_from_matchup_counts(np.load(cards_preflop.MATCHUP_FILE), dtype=np.float64)
    return cards_preflop.preflop_equity_table().astype(np.float64)


_MOMENTS: Dict[Tuple[bytes, bytes], List[Tuple[float, float, int, int]]] = {}


def class_pair_moments(labels0: np.ndarray, labels1: np.ndarray) -> List[Tuple[float, float, int, int]]:
    """Per pair of hand classes (seat 0's class by ``labels0``, seat 1's by ``labels1``, int[1326] each) that
    can be dealt together: ``(probability, mean equity of seat 0, a seat-0 pair, a disjoint seat-1 pair)`` over
    the uniform deal of two disjoint hole pairs, from the exact preflop counts.  Cached per pair of labellings
    (a ladder builds a value function per block; the 1326 x 1326 table costs about a second)."""
    key = (np.asarray(labels0, dtype=np.int64).tobytes(), np.asarray(labels1, dtype=np.int64).tobytes())
    hit = _MOMENTS.get(key)
    if hit is not None:
        return hit
    compat = cards_preflop.preflop_compatible().astype(np.float64)
    total = compat.sum()
    eq = _preflop_equity_float64()
    out = []
    for k0 in np.unique(labels0).tolist():
        rows = labels0 == k0
        for k1 in np.unique(labels1).tolist():
            cols = labels1 == k1
            block = compat[np.ix_(rows, cols)]
            mass = block.sum()
            if mass == 0:
                continue
            h0, h1 = _disjoint_representatives(rows, cols, block)
            out.append((float(mass / total), float((eq[np.ix_(rows, cols)] * block).sum() / mass), h0, h1))
    _MOMENTS[key] = out
    return out


class BoardBlindValueFunction:
    """Seat 0's expected winnings (chips) when both seats' agents play without reading the board (module doc).

    ``agents``: the match's two agents (either order; the seats come from :meth:`hand_start`).  A
    :class:`GameError` if one of them is not :func:`board_blind` or the game is not two-player hold'em with
    two hole cards.
    """

    @staticmethod
    def applies(view: PokerView) -> bool:
        """Whether the game is one these values are for: heads-up hold'em with two hole cards."""
        d = getattr(view.game, "definition", None)
        return (isinstance(view.game, HoldemGame) and d is not None and d.num_players == 2
                and d.num_hole_cards == 2 and len(d.deck()) == 52)

    def __init__(self, view: PokerView, agents: Sequence):
        if len(agents) != 2:
            raise GameError(f"BoardBlindValueFunction needs the two agents of a heads-up match, got {len(agents)}")
        if not self.applies(view):
            raise GameError(f"BoardBlindValueFunction is for heads-up hold'em with two hole cards, not "
                            f"{view.game.game_string()!r}")
        for a in agents:
            if not board_blind(a):
                raise GameError(f"agent {getattr(getattr(a, 'agent', a), 'name', a)!r} reads the board or gives "
                                f"no own_strategy / hand classes: the board-blind values do not apply")
        self.view = view
        self.agents = [getattr(a, "agent", a) for a in agents]
        self.classes = {id(a): hand_classes(a) for a in self.agents}
        # answers are checked as the match checks them (shape, sums, legality): a wrong one is a one-line error
        self.checked = {id(a): CheckedAgent(a, view, time_limit=float("inf")) for a in self.agents}
        self.seat_agents: List = list(self.agents)
        self._memo: Dict[tuple, Tuple[float, float]] = {}
        self._deal_values: Dict[tuple, float] = {}

    # ------------------------------------------------------------------ seating
    def hand_start(self, hand) -> None:
        """Take the hand's seating (``hand.seat_agents``: seat 0's agent first)."""
        seated = [getattr(a, "agent", a) for a in hand.seat_agents]
        if {id(a) for a in seated} - {id(a) for a in self.agents}:
            raise GameError("BoardBlindValueFunction: a hand seats an agent it was not built for")
        self.seat_agents = seated

    def _class_key(self, state) -> tuple:
        """The seated agents and the classes of the hands they hold: the betting's only inputs besides the line."""
        a0, a1 = self.seat_agents
        return (id(a0), id(a1), int(self.classes[id(a0)][self.view.hand_of(state, 0)]),
                int(self.classes[id(a1)][self.view.hand_of(state, 1)]))

    # ------------------------------------------------------------------ the betting walk
    def betting_terms(self, state) -> Tuple[float, float]:
        """``(A, B)`` of the module doc at ``state`` (hands dealt): chips of seat 0."""
        key = self._class_key(state) + (state.betting_string(),)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        if state.is_terminal():
            c0, c1 = state.spent[0], state.spent[1]
            if state.reached_showdown():
                m = float(min(c0, c1))
                out = (-m, 2.0 * m)
            else:
                out = (float(state.returns()[0]), 0.0)
        elif state.current_player() == CHANCE:
            child = state.clone()
            while child.current_player() == CHANCE:   # any card: the agents do not read it
                child.apply_action(child.chance_outcomes()[0][0])
            out = self.betting_terms(child)
        else:
            agent = self.checked[id(self.seat_agents[state.current_player()])]
            actions, probs = agent.own_strategy(state)
            a_sum = b_sum = 0.0
            for a, q in zip(np.asarray(actions).tolist(), np.asarray(probs, dtype=np.float64).tolist()):
                if q <= 0.0:
                    continue
                child = state.clone()
                child.apply_action(int(a))
                a_c, b_c = self.betting_terms(child)
                a_sum += q * a_c
                b_sum += q * b_c
            out = (a_sum, b_sum)
        self._memo[key] = out
        return out

    # ------------------------------------------------------------------ AIVAT's interface
    def value(self, state) -> float:
        """Seat 0's expected winnings from ``state`` (chips): exact returns at the end, the deal's expectation
        before the hole cards are dealt."""
        if state.is_terminal():
            return float(state.returns()[0])
        if not self.view.hands_dealt(state):
            return self._deal_value(state)
        a, b = self.betting_terms(state)
        return a + (self.view.equity_hands(state) * b if b else 0.0)

    def chance_expectation(self, state) -> float:
        """``E_c v(state c)`` over the chance events up to the next decision: ``v(state)`` (module doc)."""
        return self.value(state)

    def _deal_value(self, state) -> float:
        """``E v`` over the deal of both hands at the start of a hand (exact over the agents' hand classes)."""
        if state.board or any(len(h) for h in state.hole) or state.betting_string().strip("/"):
            raise GameError("BoardBlindValueFunction: values before the deal are for the start of a hand only")
        a0, a1 = self.seat_agents
        key = (id(a0), id(a1))
        hit = self._deal_values.get(key)
        if hit is not None:
            return hit
        value = 0.0
        for p, mean_eq, h0, h1 in class_pair_moments(self.classes[id(a0)], self.classes[id(a1)]):
            a, b = self.betting_terms(_deal_hole(state, self.view.hand_cards(h0), self.view.hand_cards(h1)))
            value += p * (a + mean_eq * b)
        self._deal_values[key] = value
        return value


def _disjoint_representatives(rows: np.ndarray, cols: np.ndarray, block: np.ndarray) -> Tuple[int, int]:
    """A pair of hole-pair indices (one from ``rows``, one from ``cols``) that share no card."""
    r, c = np.argwhere(block > 0)[0]
    return int(np.flatnonzero(rows)[r]), int(np.flatnonzero(cols)[c])


def _deal_hole(state, hole0: Sequence[int], hole1: Sequence[int]):
    """``state`` (the start of a hand) with the two hands dealt by its own chance actions, so the engine runs
    whatever dealing starts a round (blinds are posted already)."""
    dealt = state.clone()
    order = [hole0[0], hole0[1], hole1[0], hole1[1]]
    for card in order:
        if dealt.current_player() != CHANCE:
            raise GameError("BoardBlindValueFunction: the hand does not start by dealing the hole cards")
        dealt.apply_action(int(card))
    return dealt
