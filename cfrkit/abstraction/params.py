"""Parameters of a card abstraction: the deck, the buckets and the features of each round.

Rounds are numbered by the board cards seen: 0 = preflop (hole cards only), 1 = flop (3 board
cards), 2 = turn (4), 3 = river (5). A reduced deck (the first ``num_ranks`` ranks, first
``num_suits`` suits, card id ``4 * rank + suit`` as in ACPC games) and fewer rounds are allowed, so
that abstractions of small games can be compared against exact best responses.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Dict, Tuple

import numpy as np

from cfrkit.abstraction.enumerate import round_hands
from cfrkit.abstraction.errors import AbstractionError
from cfrkit.cards.hands import BOARD_CARDS
from cfrkit.cards.isomorphism import holdem_indexer

#: Board cards seen in each abstraction round.
ROUND_NAMES = ("preflop", "flop", "turn", "river")

#: Features a round may be clustered on (see docs/abstraction.md):
#:   lossless   every suit-isomorphism class is its own bucket (preflop: 169 buckets)
#:   ehs        E[HS] against a uniform opponent, k-means (L2) on one number
#:   hist-emd   histogram of next-round strength, k-means with the 1-D EMD (L1 of cumulative sums)
#:   pa-emd     potential-aware: distribution over next-round buckets, k-means with the EMD whose
#:              ground distance is the distance between the next round's cluster centres
#:   ochs       equity against each of k opponent hand clusters, k-means (L2)
FEATURES = ("lossless", "ehs", "hist-emd", "pa-emd", "ochs")
DEFAULT_FEATURES = ("lossless", "pa-emd", "hist-emd", "ochs")
#: How a round's buckets are stored: a uint16 table over the isomorphism indices, or the cluster
#: centres alone, each lookup computing the features of the board's hands (cheap on the river).
STORAGE = ("table", "centres")

FORMAT_VERSION = 1


@dataclass(frozen=True)
class AbstractionParams:
    """Everything that determines a card abstraction (two builds with equal params are identical).

    buckets: buckets per round (length = num_rounds); features: one of FEATURES per round;
    num_ranks / num_suits: the deck (13 / 4 = the full deck); seed: k-means seeding and sampling;
    hist_bins: bins of strength histograms on [0, 1]; ochs_clusters: opponent clusters of OCHS;
    sample: at most this many points train each round's k-means (all points are then assigned);
    river_storage: "table" (full uint16 table, 4.9 GB for hold'em) or "centres";
    pa_candidates: potential-aware search computes the EMD to at most this many centres of smallest
    lower bound (approximate); 0 = the exact search (pruned by the mean and marginal lower bounds,
    affordable at k = 1000 since the marginal bound; see docs/abstraction.md).
    """

    buckets: Tuple[int, ...] = (169, 1000, 1000, 1000)
    features: Tuple[str, ...] = DEFAULT_FEATURES
    num_ranks: int = 13
    num_suits: int = 4
    seed: int = 0
    hist_bins: int = 50
    ochs_clusters: int = 8
    sample: int = 200_000
    river_storage: str = "table"
    pa_candidates: int = 0
    extra: Tuple[Tuple[str, object], ...] = field(default=())

    @property
    def num_rounds(self) -> int:
        return len(self.buckets)

    def deck(self) -> np.ndarray:
        """Card ids of the deck (uint8, increasing)."""
        return np.array(sorted(4 * r + s for r in range(self.num_ranks) for s in range(self.num_suits)),
                        dtype=np.uint8)

    @property
    def full_deck(self) -> bool:
        return self.num_ranks == 13 and self.num_suits == 4

    def storage(self, round_: int) -> str:
        if self.features[round_] == "lossless":
            return "table"
        if round_ == 3:
            return self.river_storage
        return "table"

    def to_dict(self) -> Dict[str, object]:
        d = asdict(self)
        d["buckets"] = list(self.buckets)
        d["features"] = list(self.features)
        d["extra"] = [list(x) for x in self.extra]
        return d

    @classmethod
    def from_dict(cls, d: Dict[str, object]) -> "AbstractionParams":
        try:
            d = dict(d)
            d["buckets"] = tuple(int(b) for b in d["buckets"])
            d["features"] = tuple(str(f) for f in d["features"])
            d["extra"] = tuple(tuple(x) for x in d.get("extra", ()))
            return check_params(cls(**d))
        except (KeyError, TypeError, ValueError) as exc:
            raise AbstractionError(f"malformed abstraction parameters: {exc}") from None

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


def num_classes(round_: int, num_ranks: int = 13, num_suits: int = 4) -> int:
    """Suit-isomorphism classes of hands of a round for the deck (full deck: 169 / 1,286,792 /
    55,190,538 / 2,428,287,420); counted on the reduced deck for small games."""
    if num_ranks == 13 and num_suits == 4:
        return holdem_indexer().size(round_)
    return int(np.unique(round_hands(round_, num_ranks, num_suits)[1]).size)


def check_params(p: AbstractionParams) -> AbstractionParams:
    """Validate parameters; raise one AbstractionError saying what is allowed."""
    if not 1 <= p.num_rounds <= 4:
        raise AbstractionError(f"buckets must give 1 to 4 rounds (preflop, flop, turn, river), got {list(p.buckets)}")
    if len(p.features) != p.num_rounds:
        raise AbstractionError(f"features must name one feature per round ({p.num_rounds}), got {list(p.features)}")
    if not (2 <= p.num_ranks <= 13 and 1 <= p.num_suits <= 4):
        raise AbstractionError(f"the deck needs 2..13 ranks and 1..4 suits, got {p.num_ranks} x {p.num_suits}")
    if p.num_ranks * p.num_suits < 2 + 2 + BOARD_CARDS[p.num_rounds - 1]:
        raise AbstractionError(f"a deck of {p.num_ranks * p.num_suits} cards is too small for {p.num_rounds} rounds")
    if p.river_storage not in STORAGE:
        raise AbstractionError(f"river_storage must be one of {', '.join(STORAGE)}, got {p.river_storage!r}")
    if p.pa_candidates < 0:
        raise AbstractionError(f"pa_candidates must be >= 0 (0 = exact search), got {p.pa_candidates}")
    if p.hist_bins < 2 or p.ochs_clusters < 2 or p.sample < 1000:
        raise AbstractionError("hist_bins and ochs_clusters must be >= 2 and sample >= 1000")
    for r, (k, feat) in enumerate(zip(p.buckets, p.features)):
        name = ROUND_NAMES[r]
        if feat not in FEATURES:
            raise AbstractionError(f"unknown feature {feat!r} for the {name}; known: {', '.join(FEATURES)}")
        if r == 0 and feat not in ("lossless", "ehs", "hist-emd", "pa-emd", "ochs"):
            raise AbstractionError(f"unknown preflop feature {feat!r}")
        if feat == "pa-emd" and r == p.num_rounds - 1:
            raise AbstractionError(f"potential-aware buckets need a next round; the {name} is the last round")
        if feat == "ochs" and r != p.num_rounds - 1:
            raise AbstractionError(f"OCHS buckets are for the last round; the {name} is not")
        if feat == "hist-emd" and r == p.num_rounds - 1:
            raise AbstractionError(f"histogram buckets need a next round; the {name} is the last round "
                                   f"(use ehs or ochs)")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= 65535:
            raise AbstractionError(f"the {name} needs 1..65535 buckets, got {k!r}")
        if feat == "lossless":
            if p.full_deck:
                n = num_classes(r)
                if k != n:
                    raise AbstractionError(f"lossless {name} buckets must number {n} (its isomorphism classes), got {k}")
            if r > 1:
                raise AbstractionError(f"lossless buckets exist for the preflop and reduced-deck flop only, not the {name}")
    return p


def parse_buckets(text: str) -> Tuple[int, ...]:
    """"169,1000,1000,1000" -> (169, 1000, 1000, 1000); one clear error for anything else."""
    try:
        out = tuple(int(x) for x in str(text).split(","))
    except ValueError:
        raise AbstractionError(f"--buckets needs comma-separated integers like 169,1000,1000,1000, got {text!r}") from None
    if not 1 <= len(out) <= 4 or any(k < 1 or k > 65535 for k in out):
        raise AbstractionError(f"--buckets needs 1..4 counts of 1..65535 (preflop, flop, turn, river), got {text!r}")
    return out
