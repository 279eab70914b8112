"""Simple hold'em agents: random, always-call, and a fixed-range raiser.

An agent answers ``act(state) -> action id`` for a :class:`~cfrkit.games.holdem.game.HoldemState`
where it is to act.  Agents may look only at their own hole cards and the public information (a
state rebuilt from a ``MATCHSTATE`` line fills the opponents' hidden cards arbitrarily).

* ``random`` -- picks fold / call / raise uniformly among the legal kinds, then a raise-to amount
  uniformly between the minimum and all-in (no-limit);
* ``always-call`` -- checks or calls every time;
* ``fixed-range-raiser`` -- with a hand in its range (poker notation, e.g. ``"TT+,AQs+,AKo"``) it
  raises ``fraction`` of the pot (clamped to the legal sizes) on every round, otherwise it checks
  when free and folds to a bet;
* ``policy`` -- plays a policy of the ``holdem`` game or of a ``holdem_abstract`` game (off-tree
  bets translated, see :class:`PolicyAgent`).

:func:`make_agent` builds one by name (``AGENT_NAMES``).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Dict, Iterable, Optional, Set

import numpy as np

from cfrkit.games.base import GameError
from cfrkit.games.holdem.game import CALL, FOLD, RAISE, HoldemState, raise_action

_RANKS = "23456789TJQKA"


class AgentInterfaceError(GameError):
    """An agent lacks a method an evaluator needs, or answered it wrongly (names agent and state)."""


@dataclass
class HandStrategy:
    """An agent's mixed strategy at one decision, for every one of the 1326 hole-card pairs.

    ``actions``: int64[A] protocol action ids (fold ``0``, check/call ``1``, raise-to ``N`` as
    ``raise_action(N)``), the finite support shared by all hands; ``probs``: float64[1326, A] in the
    pair order of :mod:`cfrkit.cards.hands`.  Rows of hands that share a card with the board are all
    zero; every other row sums to one.
    """

    actions: np.ndarray
    probs: np.ndarray

    def probability_of(self, action: int) -> np.ndarray:
        """float64[1326]: probability that each hand takes ``action`` (0 outside the support)."""
        hits = np.flatnonzero(self.actions == int(action))
        if hits.size == 0:
            return np.zeros(self.probs.shape[0])
        return self.probs[:, hits[0]].copy()


class PokerAgent:
    """Base class of hold'em agents.

    ``act(state)`` returns a legal action id for the player to act.  Evaluators that track the
    agent's range (LBR, AIVAT, DRL-BR's opponent model) also need what the agent would do with each
    of the 1326 hands at the same decision, given the public state and the agent's own earlier
    decisions: :meth:`hand_strategy` (a full mixed strategy over a finite support) and
    :meth:`hand_action_probability` (the probability of one given action, which suffices for Bayes
    updates and works for agents whose raise sizes have a large support).  Agents that cannot
    answer keep the defaults, which raise :class:`AgentInterfaceError`.
    """

    name = "agent"

    def act(self, state: HoldemState) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def new_hand(self) -> None:
        """Called before each hand (agents with per-hand memory reset it here)."""

    def hand_strategy(self, state: HoldemState) -> HandStrategy:
        """The agent's strategy at ``state`` (it is to act) for every hole-card pair it could hold.

        The agent's own hole cards in ``state`` are ignored: rows are indexed by hypothetical hands.
        """
        raise AgentInterfaceError(f"agent {self.name!r} does not provide its strategy for all 1326 hands "
                                  f"(hand_strategy), which this evaluator needs")

    def hand_action_probability(self, state: HoldemState, action: int) -> np.ndarray:
        """float64[1326]: probability that the agent, holding each pair, takes ``action`` at ``state``."""
        return self.hand_strategy(state).probability_of(action)


class RandomAgent(PokerAgent):
    """Uniform over the legal kinds of action (fold, call, raise), then a uniform raise-to amount."""

    name = "random"

    def __init__(self, seed: Optional[int] = None):
        self.rng = random.Random(seed)

    def act(self, state: HoldemState) -> int:
        kinds = [k for k in (FOLD, CALL) if state.is_legal(k)]
        rng_range = state.raise_range()
        if rng_range is not None:
            kinds.append(RAISE)
        kind = self.rng.choice(kinds)
        if kind != RAISE or state.d.is_limit:
            return kind
        return raise_action(self.rng.randint(rng_range[0], rng_range[1]))


class AlwaysCallAgent(PokerAgent):
    """Checks or calls every time."""

    name = "always-call"

    def act(self, state: HoldemState) -> int:
        return CALL


def parse_range(text: str) -> Set[str]:
    """Hand classes of a range in poker notation: ``"22+,A2s+,KTo+,QJ,76s-54s"``.

    Classes are ``"AA"``, ``"AKs"``, ``"AKo"`` (169 in all).  ``XX+`` = that pair and higher,
    ``XYs+`` / ``XYo+`` = kicker Y up to one below X, ``XY`` = suited and offsuit, ``A-B`` = the
    run between two classes of the same shape.  Raises ``ValueError`` naming a bad token.
    """
    out: Set[str] = set()
    for raw in text.replace(" ", "").split(","):
        if not raw:
            continue
        try:
            out.update(_expand(raw))
        except (ValueError, IndexError):
            raise ValueError(f"bad hand range token {raw!r} in {text!r} (examples: TT+, AQs+, KJo, 76s-54s)") from None
    return out


def _cls(a: int, b: int, kind: str) -> Set[str]:
    hi, lo = max(a, b), min(a, b)
    if hi == lo:
        return {_RANKS[hi] * 2}
    kinds = ("s", "o") if kind == "" else (kind,)
    return {_RANKS[hi] + _RANKS[lo] + k for k in kinds}


def _expand(token: str) -> Set[str]:
    if "-" in token:
        left, right = token.split("-")
        a1, b1, k1 = _RANKS.index(left[0]), _RANKS.index(left[1]), left[2:]
        a2, b2, k2 = _RANKS.index(right[0]), _RANKS.index(right[1]), right[2:]
        if k1 != k2 or (a1 == b1) != (a2 == b2) or len(left) > 3 or len(right) > 3:
            raise ValueError
        out = set()
        if a1 == b1:
            for r in range(min(a1, a2), max(a1, a2) + 1):
                out |= _cls(r, r, "")
        elif a1 == a2:
            for r in range(min(b1, b2), max(b1, b2) + 1):
                out |= _cls(a1, r, k1)
        else:  # connectors run: 76s-54s
            gap = a1 - b1
            if a2 - b2 != gap:
                raise ValueError
            for r in range(min(a1, a2), max(a1, a2) + 1):
                out |= _cls(r, r - gap, k1)
        return out
    plus = token.endswith("+")
    body = token[:-1] if plus else token
    if len(body) not in (2, 3):
        raise ValueError
    a, b = _RANKS.index(body[0]), _RANKS.index(body[1])
    kind = body[2:]
    if kind not in ("", "s", "o") or (a == b and kind):
        raise ValueError
    if a < b:
        a, b = b, a
    if not plus:
        return _cls(a, b, kind)
    if a == b:
        return set().union(*(_cls(r, r, "") for r in range(a, 13)))
    return set().union(*(_cls(a, r, kind) for r in range(b, a)))


def hand_class(hole: Iterable[int]) -> str:
    """169-class label of two hole cards (card ids): ``"AKs"``, ``"72o"``, ``"TT"``."""
    c1, c2 = list(hole)
    r1, r2 = c1 >> 2, c2 >> 2
    hi, lo = max(r1, r2), min(r1, r2)
    if hi == lo:
        return _RANKS[hi] * 2
    return _RANKS[hi] + _RANKS[lo] + ("s" if (c1 & 3) == (c2 & 3) else "o")


class FixedRangeRaiser(PokerAgent):
    """Raise ``fraction`` of the pot with hands in ``hand_range``, otherwise check or fold."""

    name = "fixed-range-raiser"

    def __init__(self, hand_range: str = "88+,ATs+,KQs,AJo+", fraction: float = 1.0):
        self.range_text = hand_range
        self.classes = parse_range(hand_range)
        if not self.classes:
            raise ValueError(f"empty hand range {hand_range!r}")
        if not fraction > 0:
            raise ValueError(f"raise fraction must be positive, got {fraction}")
        self.fraction = float(fraction)

    def in_range(self, state: HoldemState, player: int) -> bool:
        hole = state.hole[player]
        if len(hole) != 2:  # non-hold'em deals: play the strongest (pair) hands only
            return False
        return hand_class(hole) in self.classes

    def act(self, state: HoldemState) -> int:
        p = state.current_player()
        if not self.in_range(state, p):
            return FOLD if state.is_legal(FOLD) else CALL
        rng = state.raise_range()
        if rng is None:
            return CALL
        if state.d.is_limit:
            return RAISE
        target = state.max_spent() + int(round(self.fraction * (state.pot() + state.call_amount(p))))
        return raise_action(min(rng[1], max(rng[0], target)))


AGENT_NAMES = ("random", "always-call", "fixed-range-raiser", "policy", "blueprint")
_ALIASES = {"call": "always-call", "caller": "always-call", "raiser": "fixed-range-raiser"}


def make_agent(name: str, seed: Optional[int] = None, hand_range: Optional[str] = None,
               fraction: float = 1.0, policy_path: Optional[str] = None) -> PokerAgent:
    """An agent by name (``random``, ``always-call``, ``fixed-range-raiser``, ``policy``, ``blueprint``;
    aliases call, raiser).  ``policy`` loads a :class:`~cfrkit.policy.TabularPolicy` file of a ``holdem`` or
    ``holdem_abstract`` game from ``policy_path``."""
    key = _ALIASES.get(name, name)
    if key == "blueprint":  # a CFR+ blueprint file (cfrkit blueprint train), given as policy_path
        if not policy_path:
            raise GameError("the blueprint agent needs a blueprint file (--policy PATH)")
        from cfrkit.agents.blueprint import BlueprintAgent

        return BlueprintAgent(policy_path, seed=seed)
    if key == "policy":
        if not policy_path:
            raise GameError("the policy agent needs a policy file (--policy PATH)")
        from cfrkit.policy import TabularPolicy

        return PolicyAgent(TabularPolicy.load(policy_path), seed=seed)
    if key == "random":
        return RandomAgent(seed)
    if key == "always-call":
        return AlwaysCallAgent()
    if key == "fixed-range-raiser":
        return FixedRangeRaiser(hand_range or "88+,ATs+,KQs,AJo+", fraction)
    raise GameError(f"unknown agent {name!r}; known: {', '.join(AGENT_NAMES)}")


class PolicyAgent(PokerAgent):
    """Play a policy (``action_probabilities(state)``, e.g. a :class:`~cfrkit.policy.TabularPolicy`).

    For a policy of the real ``holdem`` game the agent samples it directly.  For a policy of a
    ``holdem_abstract`` game it follows the hand in the abstract game: opponents' raises are mapped
    to abstract sizes with the pseudo-harmonic translation (sampled once per hand and remembered),
    and a chosen abstract raise of ``f`` pots is played as a raise of ``f`` times the real pot
    (clamped to the legal sizes; abstract all-in = real all-in).  If the abstract game cannot follow
    the real hand (e.g. a real bet was translated to an all-in and the betting went on) the agent
    checks or calls for the rest of the hand (counted in ``off_tree_hands``).
    """

    name = "policy"

    def __init__(self, policy, game=None, seed: Optional[int] = None):
        from cfrkit.games.holdem.abstraction import AbstractHoldemGame
        from cfrkit.games.holdem.game import HoldemGame
        from cfrkit.games.registry import load

        self.policy = policy
        self.game = load(game) if game is not None else getattr(policy, "game", None)
        if isinstance(self.game, AbstractHoldemGame):
            self.abstract = self.game
        elif isinstance(self.game, HoldemGame):
            self.abstract = None
        else:
            raise GameError(f"a poker policy agent needs a holdem or holdem_abstract policy, got "
                            f"{getattr(self.game, 'game_string', lambda: self.game)()!r}")
        self.rng = random.Random(seed)
        self.off_tree_hands = 0
        self._choices: Dict[int, int] = {}
        self._off_tree = False

    def new_hand(self) -> None:
        self._choices = {}
        self._off_tree = False

    def check_game(self, game) -> None:
        """Raise ``GameError`` unless the policy's rules are those of ``game`` (a ``HoldemGame``)."""
        rules = self.abstract.inner.definition if self.abstract is not None else self.game.definition
        if rules != game.definition:
            raise GameError(f"the policy is for {self.game.game_string()!r}, whose rules differ from "
                            f"{game.game_string()!r}")

    def _sample(self, probs: Dict[int, float], legal) -> int:
        items = [(a, p) for a, p in probs.items() if a in legal and p > 0]
        if not items:
            return CALL
        total = sum(p for _, p in items)
        u, acc = self.rng.random() * total, 0.0
        for a, p in items:
            acc += p
            if u < acc:
                return a
        return items[-1][0]

    def abstract_state(self, state: HoldemState):
        """The abstract-game state that follows ``state``'s hand, or None if it cannot."""
        from cfrkit.games.base import IllegalActionError

        self.check_game(state.game)
        a = self.abstract.new_initial_state()
        real = state.game.new_initial_state()
        index = 0
        try:
            for action in state.history():
                if real.is_chance_node():
                    if not a.is_chance_node():
                        return None
                    a.apply_action(action)
                    real.apply_action(action)
                    continue
                if a.current_player() != real.current_player():
                    return None
                if action in (FOLD, CALL):
                    abstract_action = action
                elif index in self._choices:
                    abstract_action = self._choices[index]
                else:
                    if real.d.is_limit:
                        abstract_action = RAISE
                    else:
                        x = (action - 2 - real.max_spent()) / float(max(1, real.pot() + real.call_amount()))
                        choices = a.translate_pot_fraction(x)
                        abstract_action = self._sample(dict(choices), [c for c, _ in choices])
                    self._choices[index] = abstract_action
                a.apply_action(abstract_action)
                real.apply_action(action)
                index += 1
        except (IllegalActionError, GameError):
            return None
        return a

    def act(self, state: HoldemState) -> int:
        p = state.current_player()
        if self.abstract is None:
            legal = state.legal_actions()
            return self._sample(self.policy.action_probabilities(state, p), set(legal))
        a = None if self._off_tree else self.abstract_state(state)
        if a is None or a.current_player() != p:
            if not self._off_tree:
                self._off_tree = True
                self.off_tree_hands += 1
            return CALL
        choice = self._sample(self.policy.action_probabilities(a, p), set(a.legal_actions()))
        if choice in (FOLD, CALL):
            return choice if state.is_legal(choice) else CALL
        rng = state.raise_range()
        if rng is None:
            return CALL
        if state.d.is_limit:
            return RAISE
        for action, _, pots in a.raise_targets():
            if action == choice:
                if action == self.abstract.allin_action:
                    return raise_action(rng[1])
                target = state.max_spent() + int(round(pots * (state.pot() + state.call_amount(p))))
                return raise_action(min(rng[1], max(rng[0], target)))
        return CALL
