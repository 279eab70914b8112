"""Poker hand evaluation: 5-, 6- and 7-card hands to one of 7462 equivalence classes.

``evaluate(cards)`` returns the class of the best 5-card hand, an int 1..7462 where higher wins
and equal values tie (1 = 7-5-4-3-2 high, 7462 = royal flush). ``hand_category(value)`` gives the
category 0 (high card) .. 8 (straight flush). The kernel (``cfrkit._kernels.handeval``) computes
classes from rank bit masks with small tables (about 40 KiB) and releases the GIL.
"""
from __future__ import annotations

import numpy as np

from cfrkit.cards.encoding import CardError, as_card_ids

try:
    from cfrkit._kernels import handeval as _kernel
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError(
        "cfrkit's hand evaluator kernel is not built; run `python setup.py build_ext --inplace`"
    ) from exc

NUM_CLASSES = 7462
HIGH_CARD, PAIR, TWO_PAIR, THREE_OF_A_KIND, STRAIGHT, FLUSH, FULL_HOUSE, FOUR_OF_A_KIND, STRAIGHT_FLUSH = range(9)
CATEGORY_NAMES = (
    "high card",
    "pair",
    "two pair",
    "three of a kind",
    "straight",
    "flush",
    "full house",
    "four of a kind",
    "straight flush",
)
# number of classes per category (standard: 1277, 2860, 858, 858, 10, 1277, 156, 156, 10)
CATEGORY_CLASS_COUNTS = (1277, 2860, 858, 858, 10, 1277, 156, 156, 10)
# highest class value of each category
CATEGORY_UPPER = np.cumsum(CATEGORY_CLASS_COUNTS).astype(np.int32)


def evaluate(cards) -> int:
    """Class 1..7462 of the best 5-card hand among 5, 6 or 7 distinct cards (higher wins).

    ``cards`` is a sequence of card ids, of card strings, or one card string ("AhKsQd2c3c").
    """
    if type(cards) is list or type(cards) is tuple:
        try:
            value = _kernel.evaluate_checked(cards)
        except TypeError:  # card strings or other objects: take the checked path below
            value = 0
        if value > 0:
            return value
    ids = as_card_ids(cards)
    if not 5 <= len(ids) <= 7:
        raise CardError(f"evaluate needs 5, 6 or 7 cards, got {len(ids)}")
    return _kernel.evaluate_one(ids)


def evaluate_batch(cards: np.ndarray) -> np.ndarray:
    """Classes of many hands: ``uint8[n, k]`` card ids (k = 5, 6 or 7) -> ``int32[n]``.

    Runs without the GIL. Raises :class:`CardError` naming the first row with an id >= 52 or a
    duplicate card.
    """
    arr = np.asarray(cards)
    if arr.ndim != 2 or not 5 <= arr.shape[1] <= 7:
        raise CardError(f"evaluate_batch needs an array of shape (n, 5..7), got shape {arr.shape}")
    if arr.dtype != np.uint8:
        if not np.issubdtype(arr.dtype, np.integer):
            raise CardError(f"card ids must be integers, got an array of {arr.dtype}")
        if arr.size and (arr.min() < 0 or arr.max() > 51):
            raise CardError("card ids must be in 0..51")
        arr = arr.astype(np.uint8)
    arr = np.ascontiguousarray(arr)
    out, bad = _kernel.evaluate_rows(arr)
    if bad >= 0:
        raise CardError(f"row {bad} of the batch has a card id >= 52 or a duplicate card: {arr[bad].tolist()}")
    return out


def hand_category(value) -> int:
    """Category 0 (high card) .. 8 (straight flush) of a class value 1..7462 (or an array of them)."""
    v = np.asarray(value)
    if v.size and (v.min() < 1 or v.max() > NUM_CLASSES):
        raise ValueError(f"hand class values are 1..{NUM_CLASSES}, got {value!r}")
    cat = np.searchsorted(CATEGORY_UPPER, v, side="left")
    return int(cat) if cat.ndim == 0 else cat.astype(np.int8)


def category_name(value) -> str:
    """Name of the category of a class value ("two pair")."""
    return CATEGORY_NAMES[hand_category(int(value))]


def seven_card_class_counts() -> np.ndarray:
    """Number of the 133,784,560 seven-card hands in each class: ``int64[7463]`` (index = class)."""
    return _kernel.seven_card_class_counts()


def five_card_classes_all() -> np.ndarray:
    """Class of each of the 2,598,960 five-card hands, lexicographic order of sorted card ids."""
    return _kernel.five_card_classes_all()
