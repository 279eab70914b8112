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
from cfrkit.cards.evaluator import (
    CATEGORY_NAMES,
    NUM_CLASSES,
    category_name,
    evaluate,
    evaluate_batch,
    hand_category,
)
from cfrkit.cards.hands import HOLE_PAIRS, NUM_PAIRS, PAIR_STRINGS, pair_cards, pair_index, pair_index_of
from cfrkit.cards.ranges import Range, RangeError, parse_range, range_vector

__all__ = [
    "CARD_STRINGS", "NUM_CARDS", "RANK_CHARS", "SUIT_CHARS", "CardError", "as_card_ids", "card_mask",
    "card_rank", "card_suit", "card_to_string", "cards_to_string", "check_distinct", "make_card",
    "parse_card", "parse_cards", "CATEGORY_NAMES", "NUM_CLASSES", "category_name", "evaluate",
    "evaluate_batch", "hand_category", "HOLE_PAIRS", "NUM_PAIRS", "PAIR_STRINGS", "pair_cards",
    "pair_index", "pair_index_of", "Range", "RangeError", "parse_range", "range_vector",
]
