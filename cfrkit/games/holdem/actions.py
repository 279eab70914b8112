"""Compact views of a hold'em decision: :class:`ActionView` and the lazy id list :class:`LegalActions`.

A no-limit decision has up to three kinds of action -- fold, check/call, raise to any total in an
interval ``[raise_min, raise_max]`` -- but its protocol id list (``0``, ``1``, ``2 + N`` for every legal
raise-to ``N``) can hold millions of ids (``holdem(stacks=1000000000;1000000000)``).  Agents, the
match server and evaluators use :class:`ActionView` (a few integers); tree algorithms keep the id list
from ``legal_actions()``, which is a :class:`LegalActions`: a read-only sequence that behaves like the
sorted list of ids (``len``, ``in``, iteration, indexing, slicing, equality with lists) without
materialising it.

Action ids (as in :mod:`cfrkit.games.holdem.game`): fold ``0``, check/call ``1``, limit raise ``2``,
no-limit raise to a total of ``N`` chips ``2 + N``.
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Iterator, NamedTuple, Optional, Tuple

import numpy as np

from cfrkit.games.base import IllegalActionError

FOLD, CALL, RAISE = 0, 1, 2
#: no-limit raise-to N has action id ``RAISE_OFFSET + N``.
RAISE_OFFSET = 2


class LegalActions(Sequence):
    """The sorted legal action ids ``[fold?, call?, limit raise?] + range(first_raise, last_raise + 1)``.

    Equal to the list it stands for (``LegalActions((0, 1), 302, 20002) == [0, 1, 302, ..., 20002]``)
    and as cheap for ``len``, ``in``, ``index`` and indexing whatever the number of raise sizes.
    ``list(x)`` materialises it (only do that when the range is small).  ``np.asarray(x)`` gives int64.

    ``small``: the ids below the raise range (sorted, each < ``first_raise``); ``first_raise`` ..
    ``last_raise``: inclusive range of no-limit raise ids (empty when ``last_raise < first_raise``).
    """

    __slots__ = ("small", "first_raise", "last_raise")

    def __init__(self, small: Tuple[int, ...] = (), first_raise: int = 0, last_raise: int = -1):
        self.small = tuple(small)
        if last_raise < first_raise:
            first_raise, last_raise = 0, -1
        self.first_raise = int(first_raise)
        self.last_raise = int(last_raise)

    @property
    def num_raises(self) -> int:
        """Number of no-limit raise ids (0 when none is legal)."""
        return self.last_raise - self.first_raise + 1

    def __len__(self) -> int:
        return len(self.small) + self.last_raise - self.first_raise + 1

    def __iter__(self) -> Iterator[int]:
        if self.last_raise < self.first_raise:
            return iter(self.small)
        return chain(self.small, range(self.first_raise, self.last_raise + 1))

    def __reversed__(self) -> Iterator[int]:
        return chain(range(self.last_raise, self.first_raise - 1, -1), reversed(self.small))

    def __contains__(self, action) -> bool:
        try:
            a = int(action)
        except (TypeError, ValueError):
            return False
        if a != action:  # 1.5 is not an action id
            return False
        return self.first_raise <= a <= self.last_raise or a in self.small

    def __getitem__(self, index):
        n = len(self)
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(n))]
        i = int(index)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"legal action index {index} out of range ({n} actions)")
        k = len(self.small)
        return self.small[i] if i < k else self.first_raise + (i - k)

    def index(self, action, start: int = 0, stop: Optional[int] = None) -> int:
        if action not in self:
            raise ValueError(f"{action} is not a legal action")
        a = int(action)
        i = self.small.index(a) if a in self.small else len(self.small) + a - self.first_raise
        if i < start or (stop is not None and i >= stop):
            raise ValueError(f"{action} is not in the given part of the legal actions")
        return i

    def count(self, action) -> int:
        return 1 if action in self else 0

    def __eq__(self, other) -> bool:
        if isinstance(other, LegalActions):
            return (self.small, self.first_raise, self.last_raise) == (other.small, other.first_raise,
                                                                      other.last_raise)
        if isinstance(other, (list, tuple, range, Sequence)) and not isinstance(other, (str, bytes)):
            if len(other) != len(self):
                return False
            return all(a == b for a, b in zip(self, other))
        if isinstance(other, np.ndarray):
            return other.ndim == 1 and len(other) == len(self) and bool(np.all(other == np.asarray(self)))
        return NotImplemented

    def __ne__(self, other) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # like a list

    def __add__(self, other):
        return list(self) + list(other)

    def __radd__(self, other):
        return list(other) + list(self)

    def __array__(self, dtype=None, copy=None):
        out = np.concatenate([np.asarray(self.small, dtype=np.int64),
                              np.arange(self.first_raise, self.last_raise + 1, dtype=np.int64)])
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        if self.num_raises <= 6:
            return repr(list(self))
        head = ", ".join(str(a) for a in self.small + (self.first_raise,))
        return f"[{head}, ..., {self.last_raise}]  # {len(self)} ids"


class ActionView(NamedTuple):
    """What the player to act may do, in chips: fold, check/call, raise to ``[raise_min, raise_max]``.

    An immutable named tuple of the ten fields below (cheap to build: agents get one per decision).
    ``action in view`` is the legality test of a protocol action id (not tuple membership).  Built by :meth:`HoldemState.action_view() <cfrkit.games.holdem.game.HoldemState.action_view>` at a
    decision node.  All amounts are integer chips.

    * ``player`` -- the seat to act (0-based).
    * ``can_fold`` -- folding is legal (only when facing a bet; a free check cannot be folded).
    * ``call_amount`` -- chips the player adds to check (0) or call (capped by its stack: a short call
      puts it all-in).
    * ``raise_min`` / ``raise_max`` -- smallest and largest legal raise-to totals (chips the raiser has
      put in during the whole hand after raising, blinds and antes included: ACPC's ``r<N>``); both
      ``None`` when raising is illegal.  ``raise_max`` is all-in.  In limit games both equal the one
      legal raise size.
    * ``is_limit`` -- a limit game (the raise action id is ``2``, not ``2 + N``).
    * ``pot`` -- chips put in by all players so far (every round, blinds and antes included).
    * ``spent`` -- chips this player has put in so far (whole hand); ``remaining`` -- chips behind.
    * ``to_match`` -- the largest total any player has put in (what a call brings ``spent`` up to,
      unless the player is short).

    Pot-fraction sizing: a raise of ``f`` pots is raise-to ``to_match + f * (pot + call_amount)``
    (:meth:`pot_raise`), clamped to the legal interval.
    """

    player: int
    can_fold: bool
    call_amount: int
    raise_min: Optional[int]
    raise_max: Optional[int]
    is_limit: bool
    pot: int
    spent: int
    remaining: int
    to_match: int

    @property
    def can_raise(self) -> bool:
        return self.raise_min is not None

    @property
    def kinds(self) -> Tuple[int, ...]:
        """The legal kinds among ``FOLD`` (0), ``CALL`` (1), ``RAISE`` (2), ascending."""
        kinds = (FOLD, CALL) if self.can_fold else (CALL,)
        return kinds + (RAISE,) if self.raise_min is not None else kinds

    @property
    def is_check(self) -> bool:
        """Whether check/call is a free check."""
        return self.call_amount == 0

    def clamp_raise(self, amount: int) -> int:
        """``amount`` (a raise-to total, chips) moved into ``[raise_min, raise_max]``."""
        if self.raise_min is None:
            raise IllegalActionError(f"player {self.player} may not raise here")
        return min(self.raise_max, max(self.raise_min, int(amount)))

    def raise_to(self, amount: int) -> int:
        """Action id of a raise to a total of ``amount`` chips (must be in the legal interval)."""
        if self.raise_min is None:
            raise IllegalActionError(f"player {self.player} may not raise here")
        amount = int(amount)
        if not self.raise_min <= amount <= self.raise_max:
            raise IllegalActionError(f"raise to {amount} is outside the legal interval "
                                     f"[{self.raise_min}, {self.raise_max}]")
        return RAISE if self.is_limit else RAISE_OFFSET + amount

    def pot_raise(self, fraction: float) -> int:
        """Action id of a raise of ``fraction`` pots (pot after calling), clamped to the legal sizes."""
        target = self.to_match + int(round(float(fraction) * (self.pot + self.call_amount)))
        return self.raise_to(self.clamp_raise(target))

    def action(self, kind: int, amount: Optional[int] = None) -> int:
        """Action id of ``kind`` (``FOLD``, ``CALL``, ``RAISE``); a no-limit raise needs ``amount``."""
        if kind == FOLD:
            if not self.can_fold:
                raise IllegalActionError("fold is not legal here (checking is free)")
            return FOLD
        if kind == CALL:
            return CALL
        if kind == RAISE:
            if self.is_limit:
                return self.raise_to(self.raise_min if amount is None else amount)
            if amount is None:
                raise IllegalActionError("a no-limit raise needs a raise-to amount")
            return self.raise_to(amount)
        raise IllegalActionError(f"unknown action kind {kind!r} (0 fold, 1 check/call, 2 raise)")

    def kind_of(self, action: int) -> int:
        """The kind (``FOLD``, ``CALL``, ``RAISE``) of a protocol action id."""
        return RAISE if action >= RAISE else int(action)

    def raise_total(self, action: int) -> int:
        """Raise-to total (chips) of a raise action id (limit: the one legal size)."""
        if self.is_limit:
            return self.raise_min
        return int(action) - RAISE_OFFSET

    def __contains__(self, action) -> bool:
        """Whether the protocol id ``action`` is legal (same as :meth:`is_legal`)."""
        return self.is_legal(action)

    def is_legal(self, action: int) -> bool:
        """Whether the protocol id ``action`` is legal."""
        if action == FOLD:
            return self.can_fold
        if action == CALL:
            return True
        if self.raise_min is None:
            return False
        if self.is_limit:
            return action == RAISE
        return self.raise_min <= action - RAISE_OFFSET <= self.raise_max

    def legal_actions(self) -> LegalActions:
        """The protocol's sorted id list, lazily (same as ``state.legal_actions()``)."""
        small = (FOLD, CALL) if self.can_fold else (CALL,)
        if self.raise_min is None:
            return LegalActions(small)
        if self.is_limit:
            return LegalActions(small + (RAISE,))
        return LegalActions(small, RAISE_OFFSET + self.raise_min, RAISE_OFFSET + self.raise_max)

    def num_actions(self) -> int:
        """Number of protocol ids (``len(legal_actions())``)."""
        n = 2 if self.can_fold else 1
        if self.raise_min is not None:
            n += 1 if self.is_limit else self.raise_max - self.raise_min + 1
        return n

    def describe(self) -> str:
        """Readable summary: ``fold, call 50, raise to 300..20000``."""
        parts = ["fold"] if self.can_fold else []
        parts.append(f"call {self.call_amount}" if self.call_amount else "check")
        if self.raise_min is not None:
            if self.raise_min == self.raise_max:
                parts.append(f"raise to {self.raise_min}")
            else:
                parts.append(f"raise to {self.raise_min}..{self.raise_max}")
        return ", ".join(parts)
