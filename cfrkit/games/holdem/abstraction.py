"""Action abstraction of no-limit hold'em as a wrapper game, and translation of off-tree bets.

``holdem_abstract(game=holdem(...), bets=SPEC, allin=true)`` keeps the rules of the wrapped
:class:`~cfrkit.games.holdem.game.HoldemGame` but offers only fold, check/call, a few raise sizes
given as fractions of the pot, and all-in.

``bets`` syntax: rounds separated by ``/``; within a round, the sizes for the first bet, the first
raise, the second raise ... separated by ``:``; sizes within one of those separated by ``+``; an
empty entry or ``x`` means no sizes (only fold, call and all-in).  The last round's entry applies
to later rounds and the last entry of a round to later raises.  Example: ``0.5+1:1/0.5+1+2:1`` --
preflop open 0.5 or 1 pot, re-raise 1 pot; flop onwards bet 0.5, 1 or 2 pots, raise 1 pot.

A size ``f`` raises by ``f`` times the pot after calling: raise-to ``= M + f * (P + C)`` chips with
``M`` the largest total put in, ``P`` the pot and ``C`` the mover's call amount (rounded to a chip).
Sizes below the minimum raise or at least the all-in amount are not offered (all-in is offered
separately whenever raising is legal, unless ``allin=false``, in which case larger sizes are
capped at all-in).  In limit games the wrapper offers the game's own fold / call / raise.

Action ids: fold=0, call=1, ``2+i`` the i-th size (in increasing order) of the current node's
entry, all-in ``= 2 + max number of sizes``.

:func:`pseudo_harmonic_probability` and :meth:`AbstractHoldemState.translate_raise` map an
opponent's off-tree raise to the neighbouring abstract sizes with the pseudo-harmonic mapping of
Ganzfried & Sandholm (IJCAI 2013): for sizes ``A < x < B`` (pot fractions),
``P(A) = (B - x)(1 + A) / ((B - A)(1 + x))``.
"""
from __future__ import annotations

import random
from typing import List, Optional, Sequence, Tuple

from cfrkit.games.base import CHANCE, Game, GameError, State
from cfrkit.games.holdem.game import CALL, FOLD, RAISE, HoldemGame, HoldemState, raise_action, raise_amount
from cfrkit.games.registry import load, register


def parse_bet_spec(spec: str) -> Tuple[Tuple[Tuple[float, ...], ...], ...]:
    """``"0.5+1:1/1"`` -> ``(((0.5, 1.0), (1.0,)), ((1.0,),))`` (rounds x raises x sizes)."""
    text = str(spec).strip()
    rounds = []
    for r, round_text in enumerate(text.split("/")):
        levels = []
        for level_text in round_text.split(":"):
            level_text = level_text.strip()
            if level_text in ("", "x", "X"):
                levels.append(())
                continue
            sizes = []
            for item in level_text.split("+"):
                try:
                    f = float(item)
                except ValueError:
                    raise GameError(f"bet spec {spec!r}: {item!r} (round {r + 1}) is not a pot fraction; "
                                    f"syntax: rounds '/', raises ':', sizes '+', e.g. 0.5+1:1/1") from None
                if not f > 0:
                    raise GameError(f"bet spec {spec!r}: pot fractions must be positive, got {item!r}")
                sizes.append(f)
            levels.append(tuple(sorted(set(sizes))))
        rounds.append(tuple(levels))
    return tuple(rounds)


def pseudo_harmonic_probability(a: float, b: float, x: float) -> float:
    """Probability of mapping a bet of ``x`` pots to the smaller abstract size ``a`` (``a <= x <= b``).

    Ganzfried & Sandholm (2013): ``f_A(x) = (B - x)(1 + A) / ((B - A)(1 + x))``; sizes in pot fractions.
    """
    if not a < b:
        raise ValueError(f"need a < b, got a={a}, b={b}")
    if x <= a:
        return 1.0
    if x >= b:
        return 0.0
    return (b - x) * (1.0 + a) / ((b - a) * (1.0 + x))


def pseudo_harmonic_mapping(sizes: Sequence[Tuple[float, int]], x: float) -> List[Tuple[int, float]]:
    """Map a bet of ``x`` pots onto abstract bets: ``sizes`` are ``(pot fraction, action)`` sorted by
    fraction (non-empty); returns ``[(action, probability)]``: below the smallest size the smallest,
    above the largest the largest, on a size that size, else its two neighbours with
    :func:`pseudo_harmonic_probability`."""
    if x <= sizes[0][0]:
        return [(sizes[0][1], 1.0)]
    if x >= sizes[-1][0]:
        return [(sizes[-1][1], 1.0)]
    for (pa, aa), (pb, ab) in zip(sizes, sizes[1:]):
        if pa <= x <= pb:
            if x == pa:
                return [(aa, 1.0)]
            if x == pb:
                return [(ab, 1.0)]
            prob = pseudo_harmonic_probability(pa, pb, x)
            return [(aa, prob), (ab, 1.0 - prob)]
    raise AssertionError("unreachable: sizes are sorted")


class AbstractHoldemGame(Game):
    """Hold'em restricted to fold, call, pot-fraction raises and all-in (see the module docstring)."""

    short_name = "holdem_abstract"

    def __init__(self, game: str = "holdem", bets: str = "0.5+1", allin: bool = True):
        inner = load(game)
        if not isinstance(inner, HoldemGame):
            raise GameError(f"holdem_abstract wraps a holdem game, got {inner.game_string()!r}")
        self.spec = parse_bet_spec(bets)
        super().__init__({"game": inner.game_string(), "bets": str(bets), "allin": bool(allin)})
        self.inner = inner
        self.allin = bool(allin)
        self.num_players = inner.num_players
        self.big_blind = inner.big_blind
        self.max_sizes = max(len(level) for rnd in self.spec for level in rnd)
        self.allin_action = 2 + self.max_sizes

    def sizes(self, round_index: int, num_raises: int) -> Tuple[float, ...]:
        rnd = self.spec[min(round_index, len(self.spec) - 1)]
        return rnd[min(num_raises, len(rnd) - 1)]

    def new_initial_state(self) -> "AbstractHoldemState":
        return AbstractHoldemState(self, self.inner.new_initial_state())

    def num_distinct_actions(self) -> int:
        return 3 if self.inner.is_limit else self.allin_action + 1

    def max_utility(self) -> float:
        return self.inner.max_utility()

    def min_utility(self) -> float:
        return self.inner.min_utility()


class AbstractHoldemState(State):
    """A node of the abstract game; ``inner`` is the underlying :class:`HoldemState`."""

    def __init__(self, game: AbstractHoldemGame, inner: HoldemState):
        super().__init__(game)
        self.inner = inner

    def clone(self) -> "AbstractHoldemState":
        new = AbstractHoldemState(self.game, self.inner.clone())
        new._history = list(self._history)
        return new

    def current_player(self) -> int:
        return self.inner.current_player()

    def chance_outcomes(self):
        return self.inner.chance_outcomes()

    def raise_targets(self) -> List[Tuple[int, int, float]]:
        """``(abstract action, raise-to total, size in pots)`` of the offered raises, all-in last."""
        s = self.inner
        g = self.game
        p = s.current_player()
        if p < 0:
            return []
        rng = s.raise_range(p)
        if rng is None:
            return []
        if g.inner.is_limit:
            return [(RAISE, rng[0], self._pots(rng[0]))]
        lo, hi = rng
        out = []
        seen = set()
        base = s.max_spent()
        pot_after_call = s.pot() + s.call_amount(p)
        for i, f in enumerate(g.sizes(s.round, s.raise_count)):
            total = base + int(round(f * pot_after_call))
            if not g.allin and total >= hi:
                total = hi
            elif total < lo or total >= hi:
                continue
            if total in seen:
                continue
            seen.add(total)
            out.append((2 + i, total, self._pots(total)))
        if g.allin and hi not in seen:
            out.append((g.allin_action, hi, self._pots(hi)))
        return out

    def _pots(self, total: int) -> float:
        s = self.inner
        p = s.current_player()
        return (total - s.max_spent()) / float(max(1, s.pot() + s.call_amount(p)))

    def inner_action(self, action: int) -> int:
        """The underlying game's action id of an abstract action (``ValueError`` if not offered)."""
        if action in (FOLD, CALL):
            return action
        for a, total, _ in self.raise_targets():
            if a == action:
                return RAISE if self.game.inner.is_limit else raise_action(total)
        raise ValueError(f"abstract action {action} is not offered here")

    def _legal_actions(self, player: int) -> List[int]:
        if player != self.current_player() or player < 0:
            return []
        actions = [a for a in (FOLD, CALL) if self.inner.is_legal(a)]
        actions.extend(a for a, _, _ in self.raise_targets())
        return sorted(actions)

    def _apply_action(self, action: int) -> None:
        if self.inner.current_player() == CHANCE:
            self.inner.apply_action(action)
        else:
            self.inner.apply_action(self.inner_action(action))

    def returns(self) -> List[float]:
        return self.inner.returns()

    def information_state_string(self, player: Optional[int] = None) -> str:
        return self.inner.information_state_string(player)

    def public_state_string(self) -> str:
        return self.inner.public_state_string()

    def action_to_string(self, action: int, player: Optional[int] = None) -> str:
        if self.inner.current_player() == CHANCE or player == CHANCE:
            return self.inner.action_to_string(action, CHANCE)
        if action in (FOLD, CALL):
            return self.inner.action_to_string(action, player)
        for a, total, pots in self.raise_targets():
            if a == action:
                tag = "allin" if a == self.game.allin_action else f"{pots:.2g}pot"
                return f"r{total}({tag})"
        return f"abstract{action}"

    def translate_raise(self, raise_to: int) -> List[Tuple[int, float]]:
        """Map a raise to ``raise_to`` chips (any legal amount) to abstract raises with probabilities.

        Pseudo-harmonic mapping between the two neighbouring offered sizes (in pot fractions);
        below the smallest size -> the smallest, above the largest -> the largest (all-in).
        """
        return self.translate_pot_fraction(self._pots(int(raise_to)))

    def translate_pot_fraction(self, x: float) -> List[Tuple[int, float]]:
        """Map a raise of ``x`` pots (raise increment / (pot + call)) to ``[(abstract action, prob)]``."""
        targets = self.raise_targets()
        if not targets:
            raise GameError("no raise is legal here, so there is nothing to translate a raise to")
        return pseudo_harmonic_mapping([(pots, a) for a, _, pots in targets], x)

    def translate_action(self, inner_action: int, rng: Optional[random.Random] = None) -> int:
        """An abstract action for an action of the underlying game (raises sampled by :meth:`translate_raise`;
        with no ``rng`` the more likely neighbour is taken)."""
        if inner_action in (FOLD, CALL):
            return inner_action
        total = self.inner.raise_range()[0] if self.game.inner.is_limit else raise_amount(inner_action)
        choices = self.translate_raise(total)
        if rng is None:
            return max(choices, key=lambda c: c[1])[0]
        u, acc = rng.random(), 0.0
        for a, p in choices:
            acc += p
            if u < acc:
                return a
        return choices[-1][0]


register("holdem_abstract", AbstractHoldemGame, {"game": "holdem", "bets": "0.5+1", "allin": True},
         "Action-abstracted hold'em: fold, call, pot-fraction raises per round and raise count, all-in")
