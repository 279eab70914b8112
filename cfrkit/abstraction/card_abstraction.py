"""Bucket lookup: :class:`CardAbstraction` and :func:`load_abstraction`.

A built abstraction is a directory::

    abstraction.json        parameters (AbstractionParams) and per-round build statistics
    round{r}.bkt            uint16 bucket table over the round's isomorphism indices (tables.py)
    round{r}_centres.npy    cluster centres in feature space (potential-aware ground distances,
                            lookups of rounds stored as centres)
    round{r}_index.npy      reduced decks only: the sorted isomorphism indices the table covers
    ochs_ranges.npy         OCHS opponent clusters, float64[k, 1326]

Rounds: 0 = preflop, 1 = flop, 2 = turn, 3 = river.  Buckets are ints 0..num_buckets(r)-1; hands
blocked by the board (or outside a reduced deck) get -1 in :meth:`CardAbstraction.buckets_for_board`.
"""
from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Union

import numpy as np

from cfrkit._io import read_json_manifest
from cfrkit.abstraction.errors import AbstractionError
from cfrkit.abstraction.params import BOARD_CARDS, ROUND_NAMES, AbstractionParams
from cfrkit.abstraction.tables import open_table
from cfrkit.cards.encoding import CardError, as_card_ids
from cfrkit.cards.hands import HOLE_PAIRS, NUM_PAIRS, pair_index
from cfrkit.cards.isomorphism import holdem_indexer

MANIFEST = "abstraction.json"
KIND = "cfrkit-card-abstraction"


def table_path(directory: str, round_: int) -> str:
    return os.path.join(directory, f"round{round_}.bkt")


class CardAbstraction:
    """Buckets of every hold'em hand, round by round (see the module docstring).

    Use :func:`load_abstraction`, :func:`~cfrkit.abstraction.build.build_abstraction` or
    :func:`~cfrkit.abstraction.build.default_abstraction` to get one.
    """

    def __init__(self, directory: str, params: AbstractionParams, verify: bool = True, rounds=None):
        from cfrkit.abstraction.features import DeckContext

        self.directory = directory
        self.params = params
        self.ctx = DeckContext(params)
        self._tables: Dict[int, np.ndarray] = {}
        self._index_maps: Dict[int, Optional[np.ndarray]] = {}
        self._centres: Dict[int, np.ndarray] = {}
        self._prepared = {}
        pdict = params.to_dict()
        for r in range(params.num_rounds) if rounds is None else sorted(rounds):
            if params.storage(r) == "table":
                arr, head = open_table(table_path(directory, r), pdict, r, verify=verify)
                self._tables[r] = arr
                if not params.full_deck:
                    self._index_maps[r] = _load_npy(directory, f"round{r}_index.npy")
                    if self._index_maps[r].size != arr.size:
                        raise AbstractionError(f"{directory}: round {r} index map does not match its table")
                else:
                    self._index_maps[r] = None
            else:
                self._centres[r] = _load_npy(directory, f"round{r}_centres.npy")
        if "ochs" in params.features and os.path.exists(os.path.join(directory, "ochs_ranges.npy")):
            self.ctx.ochs_ranges = _load_npy(directory, "ochs_ranges.npy")

    # ---------------------------------------------------------------------------------- queries
    @property
    def num_rounds(self) -> int:
        return self.params.num_rounds

    def num_buckets(self, round_: int) -> int:
        """Number of buckets of a round (0 = preflop .. 3 = river)."""
        return int(self.params.buckets[self._round(round_)])

    def _round(self, round_) -> int:
        if isinstance(round_, bool) or not isinstance(round_, (int, np.integer)) or not 0 <= round_ < self.num_rounds:
            raise AbstractionError(f"round must be 0..{self.num_rounds - 1} "
                                   f"({', '.join(ROUND_NAMES[:self.num_rounds])}), got {round_!r}")
        return int(round_)

    def centres(self, round_: int) -> Optional[np.ndarray]:
        """Cluster centres of a round in its feature space (None for lossless rounds)."""
        r = self._round(round_)
        if r not in self._centres:
            path = os.path.join(self.directory, f"round{r}_centres.npy")
            self._centres[r] = np.load(path) if os.path.exists(path) else None
        return self._centres[r]

    def bucket_tables(self) -> Optional[List[np.ndarray]]:
        """The four rounds' uint16 bucket tables, indexed by each round's suit-isomorphism index
        (:func:`~cfrkit.cards.isomorphism.holdem_indexer`; read-only memory maps of the files), for
        kernels that look buckets up themselves; ``None`` unless every round of a full-deck hold'em
        abstraction is stored as a table (a river stored as centres needs features per lookup)."""
        if not self.params.full_deck or self.num_rounds != 4 or sorted(self._tables) != [0, 1, 2, 3]:
            return None
        return [self._tables[r] for r in range(4)]

    def bucket(self, round_: int, hole, board=()) -> int:
        """Bucket of one hand: ``hole`` two cards, ``board`` the round's board cards (strings or ids)."""
        r = self._round(round_)
        h = as_card_ids(hole)
        b = as_card_ids(board)
        if len(h) != 2:
            raise AbstractionError(f"a hand has 2 hole cards, got {len(h)}")
        if len(b) != BOARD_CARDS[r]:
            raise AbstractionError(f"the {ROUND_NAMES[r]} has {BOARD_CARDS[r]} board cards, got {len(b)}")
        as_card_ids(h + b)  # duplicate check
        deck = set(self.ctx.deck.tolist())
        if not set(h + b) <= deck:
            raise AbstractionError("a card is outside the abstraction's deck "
                                   f"({self.params.num_ranks} ranks x {self.params.num_suits} suits)")
        if r in self._tables:
            return int(self.bucket_batch(r, np.array([h + b], dtype=np.uint8))[0])
        return int(self.buckets_for_board(r, b)[pair_index(h[0], h[1])])

    def bucket_batch(self, round_: int, cards: np.ndarray) -> np.ndarray:
        """Vectorised lookup: ``uint8[n, 2 + board cards]`` (hole, flop, turn, river in deal order)
        -> int32[n] buckets.  Rounds stored as tables only."""
        r = self._round(round_)
        arr = np.asarray(cards, dtype=np.uint8)
        if arr.ndim != 2 or arr.shape[1] != 2 + BOARD_CARDS[r]:
            raise AbstractionError(f"the {ROUND_NAMES[r]} needs cards of shape (n, {2 + BOARD_CARDS[r]}), got {arr.shape}")
        if r not in self._tables:
            raise AbstractionError(f"the {ROUND_NAMES[r]} is stored as centres; use buckets_for_board")
        try:
            idx = holdem_indexer().index_batch(arr)
        except CardError as exc:
            raise AbstractionError(str(exc)) from None
        imap = self._index_maps[r]
        if imap is not None:
            pos = np.searchsorted(imap, idx)
            pos = np.minimum(pos, imap.size - 1)
            if (imap[pos] != idx).any():
                raise AbstractionError("a hand is outside the abstraction's deck")
            idx = pos
        out = np.asarray(self._tables[r][idx]).astype(np.int32)
        if (out == 0xFFFF).any():
            raise AbstractionError(f"the {ROUND_NAMES[r]} table has no bucket for a hand (incomplete table)")
        return out

    def buckets_for_board(self, round_: int, board=()) -> np.ndarray:
        """Buckets of all 1326 hole pairs on a board: int32[1326] in the pair order of
        :mod:`cfrkit.cards.hands`, -1 for pairs blocked by the board or outside the deck."""
        r = self._round(round_)
        b = np.array(as_card_ids(board), dtype=np.uint8)
        if b.size != BOARD_CARDS[r]:
            raise AbstractionError(f"the {ROUND_NAMES[r]} has {BOARD_CARDS[r]} board cards, got {b.size}")
        live = self.ctx.live(b)
        if b.size and not np.isin(b, self.ctx.deck).all():
            raise AbstractionError("a board card is outside the abstraction's deck")
        out = np.full(NUM_PAIRS, -1, dtype=np.int32)
        pairs = np.flatnonzero(live)
        if r in self._tables:
            cards = np.empty((pairs.size, 2 + b.size), dtype=np.uint8)
            cards[:, :2] = HOLE_PAIRS[pairs]
            cards[:, 2:] = b
            out[pairs] = self.bucket_batch(r, cards)
        else:
            out[pairs] = self._assign_from_features(r, b)[pairs]
        return out

    def _assign_from_features(self, r: int, board: np.ndarray) -> np.ndarray:
        from cfrkit.abstraction import features as F
        from cfrkit.abstraction.clustering import L2Centres, assign_l2

        feat = self.params.features[r]
        if feat == "ochs":
            X = F.ochs(self.ctx, board)
        elif feat == "ehs":
            X = F.expected_strength(self.ctx, board)[:, None]
        else:
            raise AbstractionError(f"{feat} buckets of the {ROUND_NAMES[r]} need a table")
        if ("l2", r) not in self._prepared:
            self._prepared[("l2", r)] = L2Centres(self._centres[r])
        return assign_l2(X, self._centres[r], self._prepared[("l2", r)])

    def info(self) -> Dict[str, object]:
        """Parameters and build statistics from the manifest."""
        with open(os.path.join(self.directory, MANIFEST)) as fh:
            return json.load(fh)

    def __repr__(self) -> str:
        return (f"CardAbstraction({self.directory!r}, buckets={list(self.params.buckets)}, "
                f"features={list(self.params.features)})")


def _load_npy(directory: str, name: str) -> np.ndarray:
    path = os.path.join(directory, name)
    try:
        return np.load(path)
    except FileNotFoundError:
        raise AbstractionError(f"{directory} is incomplete: {name} is missing") from None
    except ValueError:
        raise AbstractionError(f"{path} is damaged") from None


def read_manifest(directory: str) -> Dict[str, object]:
    path = os.path.join(directory, MANIFEST)
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise AbstractionError(f"{directory} is a file, not an abstraction directory (an abstraction is the "
                               f"directory `cfrkit abstraction build --out DIR` wrote)")
    man = read_json_manifest(directory, MANIFEST, AbstractionError, "card abstraction")
    if not isinstance(man, dict) or man.get("kind") != KIND:
        raise AbstractionError(f"{path} is not a cfrkit card abstraction")
    if not isinstance(man.get("params"), dict):
        raise AbstractionError(f"{path} is damaged (no abstraction parameters)")
    return man


def load_abstraction(directory: Union[str, os.PathLike], params: Optional[AbstractionParams] = None,
                     buckets=None, verify: bool = True) -> CardAbstraction:
    """Open a built abstraction (tables memory-mapped).  With ``params`` or ``buckets`` given, refuse
    one built with other parameters.  Raises AbstractionError (missing, incomplete, truncated,
    foreign, damaged or mismatched files)."""
    directory = os.fspath(directory)
    man = read_manifest(directory)
    if not man.get("complete"):
        raise AbstractionError(f"{directory} holds an unfinished build (rounds done: {man.get('rounds_done', [])}); "
                               f"run the build again to resume")
    got = AbstractionParams.from_dict(man["params"])
    if params is not None and params != got:
        raise AbstractionError(f"{directory} was built with other parameters: {got.to_json()}")
    if buckets is not None and tuple(buckets) != got.buckets:
        raise AbstractionError(f"{directory} has buckets {list(got.buckets)}, not {list(buckets)}")
    return CardAbstraction(directory, got, verify=verify)
