"""Cards: encoding, hand evaluation, equity kernels, suit isomorphism and range strings.

Card id = ``4 * rank + suit``, rank 0..12 for 2..A, suit 0..3 for c, d, h, s (ACPC order).
See docs/cards.md.
"""
from cfrkit.cards.encoding import (
    CARD_STRINGS,
    NUM_CARDS,
    RANK_CHARS,
    SUIT_CHARS,
    CardError,
    as_card_ids,
    card_mask,
    card_rank,
    card_suit,
    card_to_string,
    cards_to_string,
    check_distinct,
    make_card,
    parse_card,
    parse_cards,
)
from cfrkit.cards.hands import HOLE_PAIRS, NUM_PAIRS, PAIR_STRINGS, pair_cards, pair_index, pair_index_of

# The evaluator (its compiled kernel and tables) and the range strings are imported on first use (PEP 562), so
# that importing cfrkit.cards.encoding or .hands (as a range solve does) does not load them: ~1.5 MiB of
# resident memory (benchmarks/RESULTS.md, issue 30 part 11).
_LAZY = {"CATEGORY_NAMES": "evaluator", "NUM_CLASSES": "evaluator", "category_name": "evaluator",
         "evaluate": "evaluator", "evaluate_batch": "evaluator", "hand_category": "evaluator",
         "Range": "ranges", "RangeError": "ranges", "parse_range": "ranges", "range_vector": "ranges"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"cfrkit.cards.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'cfrkit.cards' has no attribute {name!r}")


__all__ = [
    "CARD_STRINGS", "NUM_CARDS", "RANK_CHARS", "SUIT_CHARS", "CardError", "as_card_ids", "card_mask",
    "card_rank", "card_suit", "card_to_string", "cards_to_string", "check_distinct", "make_card",
    "parse_card", "parse_cards", "CATEGORY_NAMES", "NUM_CLASSES", "category_name", "evaluate",
    "evaluate_batch", "hand_category", "HOLE_PAIRS", "NUM_PAIRS", "PAIR_STRINGS", "pair_cards",
    "pair_index", "pair_index_of", "Range", "RangeError", "parse_range", "range_vector",
]
