"""Bet sizes written as postflop-solver users write them: ``"50%, 100%, a"`` for bets, ``"2.5x"`` for raises.

One size per comma-separated element, each ending in one of:

* ``%``: fraction of the pot (after calling, for raises: ``previous bet + X% of the pot after calling``);
* ``x``: multiple of the previous bet (raises only, > 1);
* ``c``: a constant number of chips (``"100c"``); ``"20c3r"``: the same with a raise cap (raises only:
  offered while at most 3 bets were made in the round);
* ``e``: geometric size (``"e"``: as many streets as remain, ``"2e"``: two streets, ``"3e200%"``: at most
  200% of the pot); for raises the bets made so far are subtracted from the streets;
* ``a``: all-in.

:func:`parse_bet_sizes` turns one string into a tuple of :class:`BetSize`; :class:`StreetSizes` holds the
bet and raise sizes of one player on one street.  The tree rules that use them (rounding, clamping,
forced all-ins, merging of close sizes) live in :mod:`cfrkit.solvers.public.postflop_game`.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Tuple

from cfrkit.games.base import GameError

POT, PREV_BET, CHIPS, GEOMETRIC, ALLIN = "pot", "prev_bet", "chips", "geometric", "allin"
_KIND_ORDER = {POT: 0, PREV_BET: 1, CHIPS: 2, GEOMETRIC: 3, ALLIN: 4}
_NUMBER = re.compile(r"^(\d+\.?\d*|\.\d+)$")


class BetSizeError(GameError):
    """A bet-size string that cannot be read."""


@dataclass(frozen=True)
class BetSize:
    """One bet size.  ``kind``: ``pot`` (``value`` = fraction of the pot), ``prev_bet`` (multiple of the
    previous bet), ``chips`` (``value`` chips, ``cap`` = raise cap or 0), ``geometric`` (``streets``, 0 = the
    remaining streets; ``value`` = largest fraction of the pot, inf = none) or ``allin``."""

    kind: str
    value: float = 0.0
    cap: int = 0
    streets: int = 0

    def sort_key(self):
        return (_KIND_ORDER[self.kind], self.value, self.cap, self.streets)

    def __str__(self) -> str:
        if self.kind == POT:
            return f"{100 * self.value:g}%"
        if self.kind == PREV_BET:
            return f"{self.value:g}x"
        if self.kind == CHIPS:
            return f"{int(self.value)}c" + (f"{self.cap}r" if self.cap else "")
        if self.kind == GEOMETRIC:
            return (f"{self.streets}" if self.streets else "") + "e" + (
                f"{100 * self.value:g}%" if math.isfinite(self.value) else "")
        return "a"


def _number(text: str, what: str, whole: str) -> float:
    if not _NUMBER.match(text):
        raise BetSizeError(f"bet size {whole!r}: {what} {text!r} is not a non-negative number")
    return float(text)


def parse_bet_size(text: str, raise_size: bool) -> BetSize:
    """One element such as ``"75%"``, ``"2.5x"``, ``"100c"``, ``"2e"`` or ``"a"`` (see module docstring)."""
    s = text.strip().lower()
    if s.endswith("x"):
        if not raise_size:
            raise BetSizeError(f"bet size {text!r}: a multiple of the previous bet is only allowed for raises")
        v = _number(s[:-1], "multiplier", text)
        if v <= 1.0:
            raise BetSizeError(f"bet size {text!r}: the multiplier must be greater than 1")
        return BetSize(PREV_BET, v)
    if "c" in s and _NUMBER.match(s.partition("c")[0]):  # 'abc' is not a chip size: the syntax error below
        add, _, cap = s.partition("c")
        v = _number(add, "chip amount", text)
        if v != int(v):
            raise BetSizeError(f"bet size {text!r}: a constant size must be a whole number of chips")
        if v == 0:
            raise BetSizeError(f"bet size {text!r}: a bet of 0 chips is no bet (checking is always allowed)")
        c = 0
        if cap:
            if not raise_size:
                raise BetSizeError(f"bet size {text!r}: a raise cap is only allowed for raises")
            if not cap.endswith("r"):
                raise BetSizeError(f"bet size {text!r}: write a raise cap as e.g. '20c3r'")
            cv = _number(cap[:-1], "raise cap", text)
            if cv != int(cv) or not 1 <= cv <= 100:
                raise BetSizeError(f"bet size {text!r}: the raise cap must be a whole number in [1, 100]")
            c = int(cv)
        return BetSize(CHIPS, v, cap=c)
    if "e" in s:
        streets, _, limit = s.partition("e")
        n = 0
        if streets:
            nv = _number(streets, "number of streets", text)
            if nv != int(nv) or not 1 <= nv <= 100:
                raise BetSizeError(f"bet size {text!r}: the number of streets must be a whole number in [1, 100]")
            n = int(nv)
        top = math.inf
        if limit:
            if not limit.endswith("%"):
                raise BetSizeError(f"bet size {text!r}: write the largest geometric size as e.g. '3e200%'")
            top = _number(limit[:-1], "percentage", text) / 100.0
        return BetSize(GEOMETRIC, top, streets=n)
    if s.endswith("%"):
        v = _number(s[:-1], "percentage", text)
        if v == 0:  # it used to become a 1-chip bet after rounding
            raise BetSizeError(f"bet size {text!r}: a bet of 0% of the pot is no bet (checking is always allowed)")
        return BetSize(POT, v / 100.0)
    if s == "a":
        return BetSize(ALLIN)
    raise BetSizeError(f"bet size {text!r}: end each size with %, x, c, e or write 'a' (all-in), "
                       f"e.g. '50%, 100%, a'")


def parse_bet_sizes(text: str, raise_sizes: bool = False) -> Tuple[BetSize, ...]:
    """Comma-separated sizes (a trailing comma and an empty string are allowed), sorted as postflop-solver sorts them."""
    if not isinstance(text, str):
        raise BetSizeError(f"bet sizes must be a string such as '50%, 100%, a', got {type(text).__name__}")
    parts = [p.strip() for p in text.split(",")]
    if parts and parts[-1] == "":
        parts.pop()
    if any(p == "" for p in parts):
        raise BetSizeError(f"bet sizes {text!r}: empty element between commas")
    return tuple(sorted((parse_bet_size(p, raise_sizes) for p in parts), key=BetSize.sort_key))


@dataclass(frozen=True)
class StreetSizes:
    """Bet sizes (first bet of the round) and raise sizes of one player on one street."""

    bet: Tuple[BetSize, ...] = ()
    raise_: Tuple[BetSize, ...] = ()

    @classmethod
    def parse(cls, bet: str, raise_: str = "") -> "StreetSizes":
        """``StreetSizes.parse("50%, 100%, a", "2.5x, a")``."""
        return cls(parse_bet_sizes(bet, False), parse_bet_sizes(raise_, True))

    @classmethod
    def of(cls, spec) -> "StreetSizes":
        """A StreetSizes, a string (bets and raises alike), or a ``(bets, raises)`` pair of strings."""
        if isinstance(spec, StreetSizes):
            return spec
        if isinstance(spec, str):
            return cls.parse(spec, spec)
        if isinstance(spec, (tuple, list)) and len(spec) == 2 and all(isinstance(x, str) for x in spec):
            return cls.parse(spec[0], spec[1])
        raise BetSizeError(f"bet sizes: give a string ('50%, a'), a (bets, raises) pair of strings or a StreetSizes, "
                           f"got {spec!r}")

    def __str__(self) -> str:
        return f"bet {', '.join(map(str, self.bet)) or '-'} / raise {', '.join(map(str, self.raise_)) or '-'}"
