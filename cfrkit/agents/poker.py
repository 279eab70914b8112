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

The interface (:class:`~cfrkit.poker.agent.PokerAgent`, :class:`~cfrkit.poker.agent.HandStrategy`,
:class:`~cfrkit.poker.agent.AgentInterfaceError`) lives in :mod:`cfrkit.poker.agent` and is re-exported
here.  Agents are built by name with :func:`cfrkit.poker.registry.make_agent` (``make_agent`` and
``AGENT_NAMES`` of this module are deprecated aliases).
"""
from __future__ import annotations

import math
import random
from typing import Dict, Iterable, Optional, Set

import numpy as np

from cfrkit._deprecated import deprecated_alias
from cfrkit.games.base import GameError
from cfrkit.games.holdem.game import CALL, FOLD, RAISE, HoldemState, raise_action, raise_amount
# the interface lives in the play layer; re-exported here for code written before it moved
from cfrkit.poker.agent import (AgentInterfaceError, HandStrategy, PokerAgent, board_live, size_interpolation,
                                size_node_weights, uniform_strategy)

_RANKS = "23456789TJQKA"


class RandomAgent(PokerAgent):
    """Uniform over the legal kinds of action (fold, call, raise), then a uniform raise-to amount.

    Its strategy does not depend on the hand.  :meth:`hand_action_probability` is exact for any
    raise size (``1 / kinds / number of legal sizes``); :meth:`hand_strategy` spreads the raise
    probability over ``representative_sizes`` evenly spaced sizes from the minimum to all-in
    (``exact_support`` is False in no-limit games), each with the share a uniform size gives it when
    split between its two neighbouring nodes by linear interpolation (:func:`size_node_weights`), and
    :meth:`taken_weights` is that split of the size played: AIVAT then corrects random's decisions too.
    """

    name = "random"
    representative_sizes = 5
    ignores_board = True   # neither the board ...
    ignores_hand = True    # ... nor the hole cards: the legal actions alone decide

    def __init__(self, seed: Optional[int] = None):
        self.rng = random.Random(seed)

    @property
    def exact_support(self) -> bool:  # type: ignore[override]
        return False

    def _kinds(self, state: HoldemState):
        kinds = [k for k in (FOLD, CALL) if state.is_legal(k)]
        rng_range = state.raise_range()
        return kinds, rng_range

    def hand_action_probability(self, state: HoldemState, action: int) -> np.ndarray:
        kinds, rng_range = self._kinds(state)
        k = len(kinds) + (rng_range is not None)
        action = int(action)
        if action in (FOLD, CALL):
            p = 1.0 / k if action in kinds else 0.0
        elif rng_range is None or not state.is_legal(action):
            p = 0.0
        elif state.d.is_limit:
            p = 1.0 / k
        else:
            p = 1.0 / k / (rng_range[1] - rng_range[0] + 1)
        return board_live(state) * p

    def _size_nodes(self, rng_range) -> np.ndarray:
        """int64[m]: the representative raise-to totals (chips), evenly spaced from the minimum to all-in."""
        lo, hi = rng_range
        m = max(1, self.representative_sizes - 1)
        return np.array(sorted({int(round(lo + (hi - lo) * i / m)) for i in range(self.representative_sizes)}),
                        dtype=np.int64)

    def _support(self, state: HoldemState):
        """The representative support (action ids) and its probabilities at ``state``."""
        kinds, rng_range = self._kinds(state)
        k = len(kinds) + (rng_range is not None)
        actions = list(kinds)
        probs = [1.0 / k] * len(kinds)
        if rng_range is not None:
            if state.d.is_limit:
                actions.append(RAISE)
                probs.append(1.0 / k)
            else:
                nodes = self._size_nodes(rng_range)
                actions += [raise_action(int(t)) for t in nodes]
                probs += (size_node_weights(nodes) / k).tolist()
        return actions, probs

    def hand_strategy(self, state: HoldemState) -> HandStrategy:
        actions, probs = self._support(state)
        return uniform_strategy(state, actions, probs)

    def own_strategy(self, state: HoldemState):
        """``(actions, probs)``: :meth:`hand_strategy`'s row (the same for every hand), without the 1326 rows."""
        hs_actions, probs = self._support(state)
        return np.array(hs_actions, dtype=np.int64), np.array(probs, dtype=np.float64)

    def taken_weights(self, state: HoldemState, action: int, actions) -> np.ndarray:
        """float64[A]: the weights over ``actions`` (this agent's ``hand_strategy`` support at ``state``) that
        stand for the played ``action``: one-hot for fold, call and a node size, else the linear split of the
        raise-to total between its two neighbouring nodes.  Their mean over random's play is the strategy's
        probabilities (:func:`size_node_weights`), so AIVAT's term at the decision keeps zero mean."""
        actions = np.asarray(actions, dtype=np.int64)
        w = np.zeros(actions.size)
        hit = np.flatnonzero(actions == int(action))
        if hit.size:
            w[hit[0]] = 1.0
            return w
        _, rng_range = self._kinds(state)
        if rng_range is None or state.d.is_limit or not state.is_legal(int(action)) or int(action) in (FOLD, CALL):
            raise AgentInterfaceError(f"agent {self.name!r}: action {int(action)} is neither in the support "
                                      f"{actions.tolist()} nor a legal raise")
        nodes = self._size_nodes(rng_range)
        where = {int(a): j for j, a in enumerate(actions.tolist())}
        missing = [int(t) for t in nodes if raise_action(int(t)) not in where]
        if missing:
            raise AgentInterfaceError(f"agent {self.name!r}: support {actions.tolist()} lacks the raise nodes "
                                      f"{missing} of this state")
        split = size_interpolation(nodes, raise_amount(int(action)))
        for t, x in zip(nodes.tolist(), split.tolist()):
            w[where[raise_action(t)]] += x
        return w

    def act(self, state: HoldemState) -> int:
        view = state.action_view()
        kind = self.rng.choice(view.kinds)
        if kind != RAISE or view.is_limit:
            return kind
        return raise_action(self.rng.randint(view.raise_min, view.raise_max))


class AlwaysCallAgent(PokerAgent):
    """Checks or calls every time."""

    name = "always-call"
    ignores_board = True
    ignores_hand = True  # checks or calls whatever it holds

    def act(self, state: HoldemState) -> int:
        return CALL

    def hand_strategy(self, state: HoldemState) -> HandStrategy:
        return uniform_strategy(state, [CALL], [1.0])

    def own_strategy(self, state: HoldemState):
        """``(actions, probs)`` of the hand held: check / call with probability 1."""
        return _PURE_CALL


#: the pure strategy (actions int64[1], probs float64[1]) of a check / call, shared (read-only)
_PURE_CALL = (np.array([CALL], dtype=np.int64), np.ones(1))
for _a in _PURE_CALL:
    _a.setflags(write=False)


def _pure(action: int):
    """``(actions, probs)`` of a pure strategy playing ``action``."""
    return np.array([int(action)], dtype=np.int64), np.ones(1)


class AlwaysFoldAgent(PokerAgent):
    """Folds whenever folding is legal, checks otherwise (the LBR sanity check: 750 mbb/g in HUNL)."""

    name = "always-fold"
    ignores_board = True  # folds or checks by legality alone
    ignores_hand = True

    def act(self, state: HoldemState) -> int:
        return FOLD if state.is_legal(FOLD) else CALL

    def hand_strategy(self, state: HoldemState) -> HandStrategy:
        return uniform_strategy(state, [self.act(state)], [1.0])

    def own_strategy(self, state: HoldemState):
        """``(actions, probs)`` of the hand held: the pure action of :meth:`act`."""
        return _pure(self.act(state))


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
    ignores_board = True  # the hole cards' class and the pot decide

    def __init__(self, hand_range: str = "88+,ATs+,KQs,AJo+", fraction: float = 1.0):
        self.range_text = hand_range
        self.classes = parse_range(hand_range)
        if not self.classes:
            raise ValueError(f"empty hand range {hand_range!r}")
        if not (isinstance(fraction, (int, float)) and math.isfinite(fraction) and 0 < fraction <= 1000):
            raise ValueError(f"raise fraction must be a positive finite pot fraction (at most 1000), got {fraction}")
        self.fraction = float(fraction)

    def in_range(self, state: HoldemState, player: int) -> bool:
        hole = state.hole[player]
        if len(hole) != 2:  # non-hold'em deals: play the strongest (pair) hands only
            return False
        return hand_class(hole) in self.classes

    def _raise(self, state: HoldemState) -> int:
        view = state.action_view()
        if not view.can_raise:
            return CALL
        return view.pot_raise(self.fraction)

    def act(self, state: HoldemState) -> int:
        view = state.action_view()
        if not self.in_range(state, view.player):
            return FOLD if view.can_fold else CALL
        return self._raise(state)

    def own_strategy(self, state: HoldemState):
        """``(actions, probs)`` of the hand held: the pure action of :meth:`act` (the row of
        :meth:`hand_strategy` for that hand, without the other 1325)."""
        if state.d.num_hole_cards != 2:
            raise AgentInterfaceError(f"agent {self.name!r} gives hand strategies for 2-card hold'em only")
        return _pure(self.act(state))

    def hand_classes(self) -> np.ndarray:
        """int64[1326]: 1 for the hole pairs in the range, 0 for the others (its play depends on the hand only
        through this class: AIVAT's board-blind values, :mod:`cfrkit.evaluation.board_blind_values`)."""
        return self.range_mask().astype(np.int64)

    def range_mask(self) -> np.ndarray:
        """bool[1326]: the hole pairs in the agent's range."""
        mask = getattr(self, "_mask", None)
        if mask is None:
            from cfrkit.cards.hands import HOLE_PAIRS

            mask = np.array([hand_class((int(a), int(b))) in self.classes for a, b in HOLE_PAIRS])
            self._mask = mask
        return mask

    def hand_strategy(self, state: HoldemState) -> HandStrategy:
        if state.d.num_hole_cards != 2:
            raise AgentInterfaceError(f"agent {self.name!r} gives hand strategies for 2-card hold'em only")
        live = board_live(state)
        inside = self.range_mask() * live
        outside = (~self.range_mask()) * live
        bet = self._raise(state)
        other = FOLD if state.is_legal(FOLD) else CALL
        if bet == other:
            return HandStrategy(np.array([bet], dtype=np.int64), live[:, None].copy())
        return HandStrategy(np.array([other, bet], dtype=np.int64), np.stack([outside, inside], axis=1))


#: deprecated: :func:`cfrkit.poker.registry.agent_names` lists the registered agents
AGENT_NAMES = ("random", "always-call", "always-fold", "fixed-range-raiser", "rule-based", "policy", "blueprint",
               "deepstack-holdem")


def _legacy_make_agent(name: str, seed: Optional[int] = None, hand_range: Optional[str] = None,
                       fraction: float = 1.0, policy_path: Optional[str] = None) -> PokerAgent:
    """The old ``make_agent(name, seed, hand_range, fraction, policy_path)`` on the registry (hold'em)."""
    from cfrkit.poker.registry import make_agent as build

    options = {}
    if hand_range is not None:
        options["hand_range"] = hand_range
    if fraction != 1.0:
        options["fraction"] = fraction
    if policy_path is not None:
        options["policy_path"] = policy_path
    return build(name, seed=seed, defaults=options)


make_agent = deprecated_alias(_legacy_make_agent, "cfrkit.agents.poker.make_agent", "cfrkit.poker.make_agent")


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
            # the lazy id list answers `in` without listing every raise size
            return self._sample(self.policy.action_probabilities(state, p), state.legal_actions())
        a = None if self._off_tree else self.abstract_state(state)
        if a is None or a.current_player() != p:
            if not self._off_tree:
                self._off_tree = True
                self.off_tree_hands += 1
            return CALL
        choice = self._sample(self.policy.action_probabilities(a, p), set(a.legal_actions()))
        view = state.action_view()
        if choice in (FOLD, CALL):
            return choice if choice in view else CALL
        if not view.can_raise:
            return CALL
        if view.is_limit:
            return RAISE
        for action, _, pots in a.raise_targets():
            if action == choice:
                if action == self.abstract.allin_action:
                    return view.raise_to(view.raise_max)
                return view.pot_raise(pots)
        return CALL

    # ------------------------------------------------------------------ evaluation interface
    def _abstract_branches(self, state: HoldemState):
        """``[(weight, abstract state)]`` following ``state`` without changing the agent's memory:
        translations already made this hand are reused, the others are enumerated with their
        pseudo-harmonic probabilities.  An empty list when the abstract game cannot follow."""
        from cfrkit.games.base import IllegalActionError

        self.check_game(state.game)
        reference = state.game.new_initial_state()
        branches = [(1.0, self.abstract.new_initial_state())]
        index = 0
        for action in state.history():
            if reference.is_chance_node():
                nxt = []
                for w, a in branches:
                    if a.is_chance_node():
                        a.apply_action(action)
                        nxt.append((w, a))
                branches = nxt
                reference.apply_action(action)
                continue
            if action in (FOLD, CALL):
                options = [(action, 1.0)]
            elif index in self._choices:
                options = [(self._choices[index], 1.0)]
            elif reference.d.is_limit:
                options = [(RAISE, 1.0)]
            else:
                options = None  # translated per branch (the abstract states agree on the real pot)
            nxt = []
            for w, a in branches:
                if a.current_player() != reference.current_player():
                    continue
                opts = options
                try:
                    if opts is None:
                        x = (action - 2 - reference.max_spent()) / float(max(1, reference.pot() + reference.call_amount()))
                        opts = a.translate_pot_fraction(x)
                    for k, (choice, q) in enumerate(opts):
                        if q <= 0:
                            continue
                        a2 = a if k == len(opts) - 1 else a.clone()
                        a2.apply_action(choice)
                        nxt.append((w * q, a2))
                except (IllegalActionError, GameError):
                    continue
            branches = nxt
            reference.apply_action(action)
            index += 1
        return branches

    def hand_strategy(self, state: HoldemState) -> HandStrategy:
        """Per-hand strategy: the policy queried with each of the 1326 pairs as the agent's cards
        (abstract policies: mixed over the translations of opponents' bets not yet translated)."""
        from cfrkit.cards.hands import HOLE_PAIRS

        p = state.current_player()
        live = board_live(state)
        if self.abstract is None:
            rows = []
            support: Dict[int, int] = {}
            for h in range(1326):
                if not live[h]:
                    rows.append({})
                    continue
                s2 = state.clone()
                s2.hole[p] = [int(HOLE_PAIRS[h][0]), int(HOLE_PAIRS[h][1])]
                probs = {a: q for a, q in self.policy.action_probabilities(s2, p).items() if q > 0 and state.is_legal(a)}
                total = sum(probs.values())
                if total <= 0:
                    probs, total = {CALL: 1.0}, 1.0
                rows.append({a: q / total for a, q in probs.items()})
                for a in probs:
                    support.setdefault(a, len(support))
            return _rows_to_strategy(rows, support, live)
        branches = [] if self._off_tree else [(w, a) for w, a in self._abstract_branches(state) if a.current_player() == p]
        if not branches:
            return uniform_strategy(state, [CALL], [1.0])
        total_w = sum(w for w, _ in branches)
        rows = [dict() for _ in range(1326)]
        support = {}
        for w, a in branches:
            mapping = {}
            for act in a.legal_actions():
                mapping[act] = self._real_action(state, a, act)
            for h in range(1326):
                if not live[h]:
                    continue
                a.inner.hole[p] = [int(HOLE_PAIRS[h][0]), int(HOLE_PAIRS[h][1])]
                probs = {x: q for x, q in self.policy.action_probabilities(a, p).items() if q > 0 and x in mapping}
                tot = sum(probs.values())
                if tot <= 0:
                    probs, tot = {CALL: 1.0}, 1.0
                    mapping.setdefault(CALL, CALL)
                row = rows[h]
                for x, q in probs.items():
                    real = mapping[x]
                    row[real] = row.get(real, 0.0) + w / total_w * q / tot
                    support.setdefault(real, len(support))
        return _rows_to_strategy(rows, support, live)

    def _real_action(self, state: HoldemState, a, choice: int) -> int:
        """The real action ``act`` plays for abstract action ``choice`` (see :meth:`act`)."""
        p = state.current_player()
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


def _rows_to_strategy(rows, support: Dict[int, int], live: np.ndarray) -> HandStrategy:
    actions = sorted(support)
    col = {a: k for k, a in enumerate(actions)}
    probs = np.zeros((len(rows), len(actions)))
    for h, row in enumerate(rows):
        for a, q in row.items():
            probs[h, col[a]] += q
    probs *= live[:, None]
    return HandStrategy(np.asarray(actions, dtype=np.int64), probs)
