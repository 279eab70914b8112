"""Hold'em ranges as text and as 1326-hand weight vectors.

A range string is a comma-separated list of tokens, each optionally followed by ``:weight`` (a
fraction 0..1 of the hand's combos; default 1):

* a hand class: ``AA`` (6 combos), ``AKs`` (4), ``AKo`` (12), ``AK`` (both, 16);
* a class and everything above it: ``TT+`` (TT..AA), ``A2s+`` / ``KTo+`` / ``QT+`` (kicker up to
  one below the top card);
* a run between two classes of the same shape: ``QQ-99``, ``A5s-A2s``, ``76s-54s`` (connectors);
* a single combo: ``AhKh``, ``7c7d``.

Tokens are applied left to right and a later token overrides the weight of the hands it names, so
``"AK,AhKh:0"`` is AK without AhKh.  Ranks in either case (``T`` or ``10`` for ten), suits ``c d h s``.

:func:`parse_range` gives a :class:`Range` (float64[1326] weights in the pair order of
:mod:`cfrkit.cards.hands`); :meth:`Range.to_string` writes the shortest usual notation back, and
:meth:`Range.without` removes hands that share a card with a board (card removal).
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, List, Tuple

import numpy as np

from cfrkit.cards.encoding import RANK_CHARS, SUIT_CHARS, CardError, as_card_ids
from cfrkit.cards.hands import HOLE_PAIRS, NUM_PAIRS, PAIR_INDEX_TABLE, PAIR_STRINGS


class RangeError(CardError):
    """A malformed range string or weight vector (the message names the bad token)."""


def _class_label(low: int, high: int) -> str:
    rh, rl = high >> 2, low >> 2
    if rh == rl:
        return RANK_CHARS[rh] * 2
    if rh < rl:
        rh, rl = rl, rh
    return RANK_CHARS[rh] + RANK_CHARS[rl] + ("s" if (low & 3) == (high & 3) else "o")


#: The 169-class label of each of the 1326 pairs ("AA", "AKs", "72o").
PAIR_CLASSES: Tuple[str, ...] = tuple(_class_label(int(a), int(b)) for a, b in HOLE_PAIRS)

#: The 169 class labels, strongest-looking first (pairs AA..22, then AKs, AKo, AQs ...).
CLASS_LABELS: Tuple[str, ...] = tuple(
    [RANK_CHARS[r] * 2 for r in range(12, -1, -1)]
    + [RANK_CHARS[h] + RANK_CHARS[l] + k for h in range(12, -1, -1) for l in range(h - 1, -1, -1) for k in "so"]
)

_PAIRS_OF_CLASS: Dict[str, np.ndarray] = {}
for _i, _label in enumerate(PAIR_CLASSES):
    _PAIRS_OF_CLASS.setdefault(_label, [])  # type: ignore[arg-type]
    _PAIRS_OF_CLASS[_label].append(_i)  # type: ignore[union-attr]
_PAIRS_OF_CLASS = {k: np.asarray(v, dtype=np.int64) for k, v in _PAIRS_OF_CLASS.items()}

_CLASS_RE = re.compile(r"^([2-9TJQKA])([2-9TJQKA])([so]?)$")
_COMBO_RE = re.compile(r"^([2-9TJQKA][cdhs])([2-9TJQKA][cdhs])$")


def class_pairs(label: str) -> np.ndarray:
    """int64 pair indices of a hand class (``"AKs"`` -> its 4 pairs); raises RangeError if unknown."""
    pairs = _PAIRS_OF_CLASS.get(label)
    if pairs is None:
        raise RangeError(f"unknown hand class {label!r} (examples: AA, AKs, AKo)")
    return pairs


def _rank(ch: str) -> int:
    return RANK_CHARS.index(ch)


def _classes(high: int, low: int, kind: str) -> List[str]:
    """Labels of ranks high/low with kind '', 's' or 'o' (pairs ignore the kind)."""
    if high == low:
        return [RANK_CHARS[high] * 2]
    if high < low:
        high, low = low, high
    kinds = "so" if kind == "" else kind
    return [RANK_CHARS[high] + RANK_CHARS[low] + k for k in kinds]


def _parse_class(text: str, token: str) -> Tuple[int, int, str]:
    m = _CLASS_RE.match(text)
    if m is None:
        raise RangeError(f"bad range token {token!r}: expected a class like AA, AKs, AKo, AK or a combo like AhKh")
    high, low, kind = _rank(m.group(1)), _rank(m.group(2)), m.group(3)
    if high == low and kind:
        raise RangeError(f"bad range token {token!r}: a pair has no suited/offsuit mark")
    if high < low:
        high, low = low, high
    return high, low, kind


def _expand_token(body: str, token: str) -> np.ndarray:
    """Pair indices named by one token without its weight."""
    combo = _COMBO_RE.match(body)
    if combo is not None:
        if combo.group(1) == combo.group(2):
            raise RangeError(f"bad range token {token!r}: the same card twice")
        a, b = as_card_ids([combo.group(1), combo.group(2)])
        return np.asarray([PAIR_INDEX_TABLE[a, b]], dtype=np.int64)
    labels: List[str] = []
    if "-" in body:
        parts = body.split("-")
        if len(parts) != 2:
            raise RangeError(f"bad range token {token!r}: a run has two ends, e.g. QQ-99 or A5s-A2s")
        h1, l1, k1 = _parse_class(parts[0], token)
        h2, l2, k2 = _parse_class(parts[1], token)
        if k1 != k2 or (h1 == l1) != (h2 == l2):
            raise RangeError(f"bad range token {token!r}: both ends of a run must have the same shape")
        if h1 == l1:
            for r in range(min(h1, h2), max(h1, h2) + 1):
                labels += _classes(r, r, "")
        elif h1 == h2:
            for r in range(min(l1, l2), max(l1, l2) + 1):
                labels += _classes(h1, r, k1)
        elif h1 - l1 == h2 - l2:
            gap = h1 - l1
            for r in range(min(h1, h2), max(h1, h2) + 1):
                labels += _classes(r, r - gap, k1)
        else:
            raise RangeError(f"bad range token {token!r}: a run keeps the top card (A5s-A2s) or the gap (76s-54s)")
    elif body.endswith("+"):
        high, low, kind = _parse_class(body[:-1], token)
        if high == low:
            for r in range(high, 13):
                labels += _classes(r, r, "")
        else:
            for r in range(low, high):
                labels += _classes(high, r, kind)
    else:
        high, low, kind = _parse_class(body, token)
        labels = _classes(high, low, kind)
    return np.concatenate([_PAIRS_OF_CLASS[label] for label in labels])


class Range:
    """Weights of the 1326 hole pairs (float64, each 0..1), in :mod:`cfrkit.cards.hands` order."""

    __slots__ = ("weights",)

    def __init__(self, weights=None):
        w = np.zeros(NUM_PAIRS) if weights is None else np.array(weights, dtype=np.float64)
        if w.shape != (NUM_PAIRS,):
            raise RangeError(f"a range has 1326 weights, got shape {w.shape}")
        if not np.isfinite(w).all() or (w < 0).any() or (w > 1).any():
            raise RangeError("range weights must be finite and within 0..1")
        self.weights = w

    @classmethod
    def parse(cls, text: str) -> "Range":
        """The range of a range string (see the module docstring)."""
        return parse_range(text)

    def __array__(self, dtype=None, copy=None):
        return self.weights if dtype is None else self.weights.astype(dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Range) and bool(np.array_equal(self.weights, other.weights))

    def __repr__(self) -> str:
        return f"Range({self.to_string()!r})"

    @property
    def num_combos(self) -> float:
        """Weighted number of combos (a full class like AKo counts 12)."""
        return float(self.weights.sum())

    def without(self, cards) -> "Range":
        """The range with every hand that holds one of ``cards`` (e.g. the board) removed."""
        ids = as_card_ids(cards)
        w = self.weights.copy()
        if ids:
            blocked = np.isin(HOLE_PAIRS, np.asarray(ids)).any(axis=1)
            w[blocked] = 0.0
        return Range(w)

    def class_weights(self) -> Dict[str, float]:
        """Mean weight of each of the 169 classes over its combos (classes with weight 0 left out)."""
        out = {}
        for label in CLASS_LABELS:
            value = float(self.weights[_PAIRS_OF_CLASS[label]].mean())
            if value > 0:
                out[label] = value
        return out

    def to_string(self) -> str:
        """Range text that :func:`parse_range` turns back into this range exactly.

        Classes whose combos share one weight are written as classes, grouped into ``TT+``,
        ``A2s+`` and ``QQ-99`` style runs; other classes as single combos.
        """
        uniform: Dict[str, float] = {}
        combos: List[str] = []
        for label in CLASS_LABELS:
            w = self.weights[_PAIRS_OF_CLASS[label]]
            if (w == w[0]).all():
                if w[0] > 0:
                    uniform[label] = float(w[0])
            else:
                for i in _PAIRS_OF_CLASS[label]:
                    if self.weights[i] > 0:
                        combos.append(_with_weight(PAIR_STRINGS[i], float(self.weights[i])))
        return ",".join(_group_classes(uniform) + combos)


def _with_weight(text: str, weight: float) -> str:
    return text if weight == 1.0 else f"{text}:{weight!r}"


def _group_classes(uniform: Dict[str, float]) -> List[str]:
    """Tokens for classes of one weight each: pairs and same-top-card runs are joined."""
    tokens: List[str] = []
    # pairs: maximal runs of equal weight
    ranks = [r for r in range(12, -1, -1) if RANK_CHARS[r] * 2 in uniform]
    tokens += _runs(ranks, lambda r: RANK_CHARS[r] * 2, uniform, top=12,
                    plus=lambda r: RANK_CHARS[r] * 2 + "+",
                    span=lambda hi, lo: f"{RANK_CHARS[hi] * 2}-{RANK_CHARS[lo] * 2}")
    for high in range(12, 0, -1):
        for kind in "so":
            def label(r, high=high, kind=kind):
                return RANK_CHARS[high] + RANK_CHARS[r] + kind
            kickers = [r for r in range(high - 1, -1, -1) if label(r) in uniform]
            tokens += _runs(kickers, label, uniform, top=high - 1,
                            plus=lambda r, label=label: label(r) + "+",
                            span=lambda hi, lo, label=label: f"{label(hi)}-{label(lo)}")
    return tokens


def _runs(ranks: List[int], label, uniform: Dict[str, float], top: int, plus, span) -> List[str]:
    """Join consecutive ranks (descending) of equal weight into runs."""
    out: List[str] = []
    i = 0
    while i < len(ranks):
        j = i
        weight = uniform[label(ranks[i])]
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] - 1 and uniform[label(ranks[j + 1])] == weight:
            j += 1
        hi, lo = ranks[i], ranks[j]
        if hi == lo:
            text = label(hi)
        elif hi == top:
            text = plus(lo)
        else:
            text = span(hi, lo)
        out.append(_with_weight(text, weight))
        i = j + 1
    return out


def _normalize(body: str) -> str:
    """A token as the patterns read it: ranks in either case (``tt+``, ``aks``) and ``10`` for the
    ten (``10h9h``), as :func:`~cfrkit.cards.parse_cards` and the peers' parsers accept them; suits
    in either case in combos (``AHKH``).  The suited / offsuit marks stay ``s`` / ``o``."""
    body = body.replace("10", "T")
    combo = len(body) == 4 and body[1].lower() in SUIT_CHARS and body[3].lower() in SUIT_CHARS \
        and body[0].upper() in RANK_CHARS and body[2].upper() in RANK_CHARS
    if combo:
        return body[0].upper() + body[1].lower() + body[2].upper() + body[3].lower()
    return "".join(ch.upper() if ch in "akqjt" else ch for ch in body)


def parse_range(text: str) -> Range:
    """The :class:`Range` of a range string such as ``"QQ+,AKs,KQs:0.5,AhKh"``.

    Raises :class:`RangeError` (a ``ValueError``) naming the bad token.
    """
    if not isinstance(text, str):
        raise RangeError(f"a range string is expected, got {type(text).__name__}")
    weights = np.zeros(NUM_PAIRS)
    for raw in text.split(","):
        token = raw.strip()
        if not token:
            continue
        body, sep, weight_text = token.partition(":")
        body = body.strip()
        weight = 1.0
        if sep:
            try:
                weight = float(weight_text)
            except ValueError:
                raise RangeError(f"bad weight in range token {token!r}: expected a number 0..1") from None
            if not 0.0 <= weight <= 1.0:  # also rejects nan
                raise RangeError(f"bad weight in range token {token!r}: must be within 0..1")
        if not body.isascii():
            raise RangeError(f"bad range token {token!r}: ranks 23456789TJQKA and suits {SUIT_CHARS}")
        weights[_expand_token(_normalize(body), token)] = weight
    return Range(weights)


def range_vector(text_or_range, board: Iterable = ()) -> np.ndarray:
    """float64[1326] weights of a range string (or :class:`Range` or weight vector), with hands that
    share a card with ``board`` set to 0."""
    if isinstance(text_or_range, str):
        r = parse_range(text_or_range)
    elif isinstance(text_or_range, Range):
        r = text_or_range
    else:
        r = Range(text_or_range)
    return r.without(board).weights if board is not None else r.weights.copy()
