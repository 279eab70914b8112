"""Card abstraction for hold'em: features, EMD k-means, bucket tables (see docs/abstraction.md).

Interface (rounds: 0 = preflop, 1 = flop, 2 = turn, 3 = river)::

    from cfrkit.abstraction import build_abstraction, load_abstraction, default_abstraction
    abs_ = default_abstraction()                       # small, built once and cached
    abs_ = build_abstraction((169, 1000, 1000, 1000), out="abs_dir")   # or load_abstraction("abs_dir")
    abs_.num_buckets(1)                                # buckets of the flop
    abs_.bucket(1, "AhKs", "Td7c2h")                   # one hand -> int
    abs_.buckets_for_board(2, "Td7c2h9s")              # int32[1326], -1 for blocked pairs
"""
from cfrkit.abstraction.errors import AbstractionError
from cfrkit.abstraction.params import FEATURES, ROUND_NAMES, AbstractionParams, parse_buckets
from cfrkit.abstraction.card_abstraction import CardAbstraction, load_abstraction
from cfrkit.abstraction.build import build_abstraction, default_abstraction

__all__ = ["AbstractionError", "AbstractionParams", "CardAbstraction", "FEATURES", "ROUND_NAMES",
           "build_abstraction", "default_abstraction", "load_abstraction", "parse_buckets"]
