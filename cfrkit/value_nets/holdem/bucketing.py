"""Bucketers of the 1326 hold'em hands for the hold'em value nets (the :class:`Bucketer` interface).

* river: :class:`RiverStrengthBucketer`, hand-strength classes: a hand's strength on the river board
  (win + tie / 2 against a uniform opponent, card removal included) cut into ``num_buckets`` equal
  classes of [0, 1] (DeepStack/DeepHoldem: about 500 classes);
* turn and flop: :class:`AbstractionBucketer`, the buckets of a :class:`cfrkit.abstraction.CardAbstraction`
  (EMD k-means of hand-strength histograms; 1000 per round in DeepStack's large run, 50 in the
  default abstraction), or :class:`EHSBucketer`, E[HS] percentile buckets (no table to build: tests
  and quick runs);
* preflop: :class:`PreflopBucketer`, the 169 lossless classes.

Every bucketer caches the buckets of the boards it has seen (``cache_size`` boards, LRU) and has a
``to_dict`` / :func:`holdem_bucketer_from_dict` round trip for checkpoints and data shards.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Dict, Optional, Sequence, Tuple

import numpy as np

from cfrkit.cards.hands import NUM_PAIRS, blocked_pairs
from cfrkit.value_nets.bucketing import Bucketer

STREETS = ("preflop", "flop", "turn", "river")
BOARD_SIZE = {"preflop": 0, "flop": 3, "turn": 4, "river": 5}
ROUND_OF = {s: i for i, s in enumerate(STREETS)}


class HoldemBucketer(Bucketer):
    """Common part: board checks, LRU cache of ``hand_buckets`` and the sparse matrix."""

    street: str = "river"
    num_hands = NUM_PAIRS

    def __init__(self, cache_size: int = 4096):
        self._cache: "OrderedDict[Tuple[int, ...], np.ndarray]" = OrderedDict()
        self._cache_size = int(cache_size)

    def _compute(self, board: Tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError

    def hand_buckets(self, board: Sequence[int]) -> np.ndarray:
        """``int64[1326]`` bucket of every pair on ``board``; -1 where the pair shares a card with it."""
        key = tuple(sorted(int(c) for c in board))
        if len(key) != BOARD_SIZE[self.street] or len(set(key)) != len(key) or (key and not 0 <= min(key) <= max(key) < 52):
            raise ValueError(f"the {self.street} bucketer needs {BOARD_SIZE[self.street]} distinct board cards, "
                             f"got {list(board)}")
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        out = np.asarray(self._compute(key), dtype=np.int64).copy()
        if key:
            out[blocked_pairs(list(key))] = -1
        out.setflags(write=False)
        self._cache[key] = out
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return out


class RiverStrengthBucketer(HoldemBucketer):
    """River hand-strength classes: bucket ``floor(HS * n)`` (HS = 1 in the top class).

    HS of a pair is its showdown equity against the uniform range of the pairs that miss the board
    and the pair (exactly, with the cards kernels).  Equal-width classes are board independent, so
    one net covers every river board (about 500 classes as DeepStack's river net).
    """

    street = "river"

    def __init__(self, num_buckets: int = 500, cache_size: int = 4096):
        super().__init__(cache_size)
        if int(num_buckets) < 2:
            raise ValueError(f"num_buckets must be >= 2, got {num_buckets}")
        self.num_buckets = int(num_buckets)

    def strengths(self, board: Sequence[int]) -> np.ndarray:
        """``float64[1326]`` river hand strength (win + tie / 2 against uniform); NaN where blocked."""
        from cfrkit.cards.equity import board_strengths, showdown_masses

        s = board_strengths(list(board))
        win, lose, compat = showdown_masses(s, (s > 0).astype(np.float64))
        tie = compat - win - lose
        with np.errstate(invalid="ignore", divide="ignore"):
            hs = np.where(compat > 0, (win + 0.5 * tie) / np.where(compat > 0, compat, 1), np.nan)
        hs[s <= 0] = np.nan
        return hs

    def _compute(self, board):
        hs = self.strengths(board)
        out = np.minimum(np.floor(np.nan_to_num(hs, nan=0.0) * self.num_buckets), self.num_buckets - 1)
        return out.astype(np.int64)

    def to_dict(self):
        return {"kind": "holdem-river-hs", "num_buckets": self.num_buckets}


class AbstractionBucketer(HoldemBucketer):
    """Flop or turn buckets of a card abstraction (``CardAbstraction`` or any object with
    ``num_buckets(round)`` and ``buckets_for_board(round, board)``).

    ``source``: how :func:`holdem_bucketer_from_dict` finds the abstraction again: ``"default"``
    (:func:`cfrkit.abstraction.default_abstraction`) or a directory of a built abstraction.
    """

    def __init__(self, street: str, abstraction=None, source: Optional[str] = None, cache_size: int = 4096):
        super().__init__(cache_size)
        if street not in ("flop", "turn", "river"):
            raise ValueError(f"AbstractionBucketer is for the flop, turn or river, got {street!r}")
        self.street = street
        if abstraction is None:
            abstraction, source = _open_abstraction(source or "default")
        if source is None:
            source = getattr(abstraction, "directory", None)
        self.abstraction = abstraction
        self.source = source
        self.num_buckets = int(abstraction.num_buckets(ROUND_OF[street]))

    def _compute(self, board):
        return self.abstraction.buckets_for_board(ROUND_OF[self.street], list(board))

    def to_dict(self):
        return {"kind": "holdem-abstraction", "street": self.street, "source": self.source,
                "num_buckets": self.num_buckets}


class EHSBucketer(HoldemBucketer):
    """E[HS] percentile buckets of :class:`cfrkit.abstraction.ehs_abstraction.EHSAbstraction` for one street."""

    def __init__(self, street: str, num_buckets: int = 50, runouts: int = 24, seed: int = 0, cache_size: int = 4096):
        super().__init__(cache_size)
        from cfrkit.abstraction.ehs_abstraction import EHSAbstraction

        if street not in ("flop", "turn", "river"):
            raise ValueError(f"EHSBucketer is for the flop, turn or river, got {street!r}")
        self.street = street
        self.num_buckets = int(num_buckets)
        self.runouts, self.seed = int(runouts), int(seed)
        counts = [169, 2, 2, 2]
        counts[ROUND_OF[street]] = self.num_buckets
        self.abstraction = EHSAbstraction(tuple(counts), runouts=self.runouts, seed=self.seed)

    def _compute(self, board):
        return self.abstraction.buckets_for_board(ROUND_OF[self.street], list(board))

    def to_dict(self):
        return {"kind": "holdem-ehs", "street": self.street, "num_buckets": self.num_buckets,
                "runouts": self.runouts, "seed": self.seed}


class PreflopBucketer(HoldemBucketer):
    """The 169 lossless preflop classes (pairs, suited, offsuit)."""

    street = "preflop"

    def __init__(self):
        super().__init__(cache_size=1)
        self.num_buckets = 169

    def _compute(self, board):
        from cfrkit.abstraction.ehs_abstraction import preflop_classes

        return preflop_classes()

    def to_dict(self):
        return {"kind": "holdem-preflop"}


_ABSTRACTIONS: Dict[str, object] = {}


def _open_abstraction(source: str):
    """The abstraction named by ``source`` (cached per process)."""
    if source not in _ABSTRACTIONS:
        if source == "default":
            from cfrkit.abstraction import default_abstraction

            _ABSTRACTIONS[source] = default_abstraction(progress=False)
        else:
            from cfrkit.abstraction import load_abstraction

            _ABSTRACTIONS[source] = load_abstraction(source)
    return _ABSTRACTIONS[source], source


def holdem_bucketer_from_dict(d) -> HoldemBucketer:
    """Inverse of ``to_dict`` of every bucketer here (ValueError for an unknown description)."""
    kind = d.get("kind") if isinstance(d, dict) else None
    if kind == "holdem-river-hs":
        return RiverStrengthBucketer(int(d["num_buckets"]))
    if kind == "holdem-ehs":
        return EHSBucketer(d["street"], int(d["num_buckets"]), int(d.get("runouts", 24)), int(d.get("seed", 0)))
    if kind == "holdem-preflop":
        return PreflopBucketer()
    if kind == "holdem-abstraction":
        b = AbstractionBucketer(d["street"], source=d["source"])
        if b.num_buckets != int(d["num_buckets"]):
            raise ValueError(f"abstraction {d['source']!r} has {b.num_buckets} {d['street']} buckets, "
                             f"expected {d['num_buckets']}")
        return b
    raise ValueError(f"unknown hold'em bucketer {d!r}")


def make_bucketer(street: str, spec: str = "auto", num_buckets: Optional[int] = None) -> HoldemBucketer:
    """Bucketer of a street from a short spec.

    River: ``"hs"`` / ``"auto"`` (hand-strength classes, ``num_buckets`` default 500) or ``"ehs"``.
    Flop/turn: ``"default"`` / ``"auto"`` (the default EMD abstraction), ``"ehs"`` (E[HS] percentiles,
    ``num_buckets`` default 50) or a directory of a built abstraction.  Preflop: 169 classes.
    """
    if street == "preflop":
        return PreflopBucketer()
    if street == "river" and spec in ("auto", "hs"):
        return RiverStrengthBucketer(num_buckets or 500)
    if spec == "ehs":
        return EHSBucketer(street, num_buckets or 50)
    if street not in ("flop", "turn", "river"):
        raise ValueError(f"unknown street {street!r}; choose one of {', '.join(STREETS)}")
    b = AbstractionBucketer(street, source="default" if spec == "auto" else spec)
    if num_buckets is not None and num_buckets != b.num_buckets:
        raise ValueError(f"abstraction {spec!r} has {b.num_buckets} {street} buckets, not {num_buckets}")
    return b
