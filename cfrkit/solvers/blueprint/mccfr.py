"""External-sampling MCCFR with regret-based pruning: the measured alternative to the CFR+ blueprint trainer.

Same abstract game, betting tree, card abstraction, regret / strategy-sum layout (float32, 8 bytes per
(information set, action)), checkpoint format, resume, progress bar and evaluation hooks as
:class:`~cfrkit.solvers.blueprint.trainer.BlueprintTrainer` (whose :func:`train` loop runs both); the
average strategy is played by the same :class:`BlueprintStrategy` / ``BlueprintAgent``.

An iteration samples one complete board (the CFR+ trainer's board of the same seed and iteration), looks
up every hand's buckets on it once, then deals ``deals_per_board`` pairs of hole cards (uniform over the
pairs the board leaves live, the two seats disjoint) and, for each deal, runs one external-sampling
traversal per seat in ``pyx/blueprint_mccfr.pyx``.  The average strategy is linearly weighted (weight =
iteration number, added at the opponent's sampled decisions).  With ``prune`` on, after
``prune_warmup`` iterations a traversal skips (with probability ``prune_probability``) the traverser's
actions whose regret is below ``prune_threshold`` chips, except on the river and before terminals;
regrets are floored at ``regret_floor`` so a pruned action can recover.

Every random number of iteration ``t`` is a function of ``(seed, t)``: a resumed run repeats exactly what
an uninterrupted one does.  One thread (the updates are in place and sequential).
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from cfrkit.cards.equity import board_strengths
from cfrkit.cards.hands import HOLE_PAIRS, NUM_PAIRS
from cfrkit.solvers.blueprint.abstraction_spec import DEFAULT_ABSTRACTION
from cfrkit.solvers.blueprint.betting_tree import (DEFAULT_BETS, DEFAULT_GAME, DEFAULT_RAISE_CAP, BettingTree,
                                                   BlueprintError)
from cfrkit.solvers.blueprint.boards import BOARD_CARDS, sample_boards
from cfrkit.solvers.blueprint.trainer import BlueprintTrainer

#: pair indices sharing a card: _CONFLICT[i, j] is True when pairs i and j overlap
_CONFLICT = None


def _conflicts() -> np.ndarray:
    global _CONFLICT
    if _CONFLICT is None:
        a = HOLE_PAIRS.astype(np.int64)
        _CONFLICT = ((a[:, None, 0] == a[None, :, 0]) | (a[:, None, 0] == a[None, :, 1])
                     | (a[:, None, 1] == a[None, :, 0]) | (a[:, None, 1] == a[None, :, 1]))
    return _CONFLICT


def _mccfr_kernel():
    from cfrkit._kernels import blueprint_mccfr

    return blueprint_mccfr


def sample_deals(rng: np.random.Generator, board: np.ndarray, count: int,
                 hand_weights: Optional[np.ndarray] = None) -> np.ndarray:
    """int32[count, 2]: hole pairs (indices of :mod:`cfrkit.cards.hands`) of seat 0 and seat 1 on ``board``.

    Each deal is drawn with probability proportional to ``w[h0] * w[h1]`` over pairs disjoint from each other
    and from the board (``hand_weights`` default 1 for every pair: uniform deals).
    """
    from cfrkit.cards.hands import blocked_pairs

    w = np.ones(NUM_PAIRS) if hand_weights is None else np.asarray(hand_weights, dtype=np.float64).copy()
    w[blocked_pairs([int(c) for c in board])] = 0.0
    total = w.sum()
    if total <= 0:
        raise BlueprintError("no hole pair can be dealt on this board with the given hand weights")
    cdf = np.cumsum(w / total)
    cdf[-1] = 1.0
    h0 = np.searchsorted(cdf, rng.random(count), side="right").astype(np.int64)
    h1 = np.searchsorted(cdf, rng.random(count), side="right").astype(np.int64)
    conflict = _conflicts()
    bad = conflict[h0, h1]
    tries = 0
    while bad.any():  # rejection: seat 1's pair must not share a card with seat 0's
        tries += 1
        if tries > 10_000:
            raise BlueprintError("the hand weights leave no two disjoint pairs to deal")
        idx = np.flatnonzero(bad)
        h1[idx] = np.searchsorted(cdf, rng.random(idx.size), side="right")
        bad[idx] = conflict[h0[idx], h1[idx]]
    return np.ascontiguousarray(np.stack([h0, h1], axis=1).astype(np.int32))


class ESMCCFRTrainer(BlueprintTrainer):
    """External-sampling MCCFR (optionally with regret-based pruning) on the abstract game (module docstring).

    Args (others as :class:`BlueprintTrainer`):
        deals_per_board: hole-card deals traversed (once per seat) on each sampled board; one iteration is one
            board.
        prune: regret-based pruning after ``prune_warmup`` iterations, in a ``prune_probability`` share of the
            traversals, of actions with regret below ``prune_threshold`` (chips; default minus the stack).
        regret_floor: lower bound of the regrets (chips; default 1.5 x the threshold, or minus 15 stacks
            without pruning).
        board: a fixed 5-card board for every iteration (tests and single-board studies); default sampled.
        hand_weights: float[1326] weights of the pairs dealt (default uniform).
    """

    algorithm = "es-mccfr"

    def __init__(self, game: str = DEFAULT_GAME, bets: str = DEFAULT_BETS, raise_cap: int = DEFAULT_RAISE_CAP,
                 abstraction=DEFAULT_ABSTRACTION, seed: int = 0, deals_per_board: int = 64, prune: bool = False,
                 prune_warmup: int = 200, prune_probability: float = 0.95, prune_threshold: Optional[float] = None,
                 regret_floor: Optional[float] = None, board=None, hand_weights=None,
                 tree: Optional[BettingTree] = None, workers: int = 1, ray_address: Optional[str] = None,
                 boards_per_iteration: Optional[int] = None, _allocate: bool = True):
        if int(workers) != 1 or ray_address is not None or (boards_per_iteration or 1) != 1:
            raise BlueprintError("es-mccfr runs on one thread with one board per iteration (its updates are in "
                                 "place); use cfr+ for threads or Ray")
        super().__init__(game, bets, raise_cap, abstraction, seed, boards_per_iteration=1, workers=1, tree=tree,
                         _allocate=_allocate)
        if int(deals_per_board) < 1:
            raise BlueprintError(f"deals_per_board must be at least 1, got {deals_per_board}")
        if not 0.0 <= float(prune_probability) <= 1.0:
            raise BlueprintError(f"prune_probability must be in [0, 1], got {prune_probability}")
        if int(prune_warmup) < 0:
            raise BlueprintError(f"prune_warmup must be >= 0 iterations, got {prune_warmup}")
        stack = float(max(self.tree.stacks))
        self.deals_per_board = int(deals_per_board)
        self.prune = bool(prune)
        self.prune_warmup = int(prune_warmup)
        self.prune_probability = float(prune_probability)
        self.prune_threshold = float(-stack if prune_threshold is None else prune_threshold)
        if self.prune_threshold >= 0:
            raise BlueprintError(f"prune_threshold must be negative (chips), got {self.prune_threshold}")
        default_floor = 1.5 * self.prune_threshold if self.prune else -15.0 * stack
        self.regret_floor = float(default_floor if regret_floor is None else regret_floor)
        if self.regret_floor >= 0 or (self.prune and self.regret_floor > self.prune_threshold):
            raise BlueprintError(f"regret_floor must be negative and at most the prune threshold, got "
                                 f"{self.regret_floor}")
        self.board = None
        if board is not None:
            from cfrkit.cards.encoding import as_card_ids

            ids = as_card_ids(board)
            if len(ids) != 5:
                raise BlueprintError(f"a fixed board has 5 cards, got {len(ids)}")
            self.board = np.asarray(ids, dtype=np.uint8)
        self.hand_weights = None
        if hand_weights is not None:
            w = np.asarray(hand_weights, dtype=np.float64)
            if w.shape != (NUM_PAIRS,) or (w < 0).any() or not np.isfinite(w).all():
                raise BlueprintError(f"hand_weights must be 1326 finite non-negative numbers, got shape {w.shape}")
            self.hand_weights = w
        self.root_value_sum = np.zeros(2)  # sum of sampled root values per seat (chips), this session

    # ------------------------------------------------------------------ iterations
    def board_arrays(self, board: np.ndarray):
        """``(bucket int32[4, 1326], strength int32[1326])`` of a complete board (-1 / 0 for blocked pairs)."""
        bucket = np.empty((4, NUM_PAIRS), dtype=np.int32)
        for r in range(4):
            b = np.asarray(self.abstraction.buckets_for_board(r, [int(c) for c in board[:BOARD_CARDS[r]]]))
            if b.shape != (NUM_PAIRS,):
                raise BlueprintError(f"the card abstraction returned buckets of shape {b.shape} for round {r}")
            if b.max() >= self.num_buckets[r]:
                raise BlueprintError(f"the card abstraction returned a bucket outside 0..{self.num_buckets[r] - 1}")
            bucket[r] = b
        strength = np.ascontiguousarray(board_strengths([int(c) for c in board]), dtype=np.int32)
        return bucket, strength

    def iterate(self, count: int = 1) -> None:
        """Run ``count`` more iterations (boards)."""
        import time

        kernel = _mccfr_kernel()
        t = self.tree
        for _ in range(int(count)):
            it = self.stats.iterations + 1
            start = time.perf_counter()
            board = self.board if self.board is not None else sample_boards(self.seed, it, 1)[0]
            rng = np.random.default_rng(np.random.SeedSequence([self.seed, it, 0x5EED]))
            deals = sample_deals(rng, board, self.deals_per_board, self.hand_weights)
            kernel_seed = int(rng.integers(0, 2**63))
            bucket, strength = self.board_arrays(board)
            prune_p = self.prune_probability if self.prune and it > self.prune_warmup else 0.0
            self.stats.nodes += int(kernel.iterate_board(
                t.kind, t.player, t.round, t.child_start, t.num_children, t.spent, self.slot, self.worker.max_actions,
                self.worker.max_depth, bucket, strength, deals, self.regrets, self.strategy_sum, float(it),
                kernel_seed, prune_p, self.prune_threshold, self.regret_floor, self.root_value_sum))
            self.stats.seconds += time.perf_counter() - start
            self.stats.iterations = it

    # ------------------------------------------------------------------ files
    def header(self) -> Dict:
        h = super().header()
        h["mccfr"] = {"deals_per_board": self.deals_per_board, "prune": self.prune, "prune_warmup": self.prune_warmup,
                      "prune_probability": self.prune_probability, "prune_threshold": self.prune_threshold,
                      "regret_floor": self.regret_floor,
                      "board": None if self.board is None else [int(c) for c in self.board],
                      "hand_weights": None if self.hand_weights is None else self.hand_weights.tolist()}
        return h

    @classmethod
    def _for_checkpoint(cls, path: str, header: Dict, tree: BettingTree, spec, workers: int,
                        ray_address: Optional[str], boards_per_iteration: Optional[int]) -> "ESMCCFRTrainer":
        """:meth:`BlueprintTrainer.load`'s trainer from an es-mccfr header (a damaged one raises BlueprintError)."""
        m = sampling_settings(path, header, "mccfr", "es-mccfr")
        try:
            return cls(abstraction=spec, tree=tree, workers=workers, ray_address=ray_address,
                       boards_per_iteration=boards_per_iteration, **sampled_trainer_keywords(header, m))
        except (KeyError, TypeError) as exc:
            raise BlueprintError(f"{path}: damaged es-mccfr settings in the header ({exc})") from None


def sampling_settings(path: str, header: Dict, key: str, label: str) -> Dict:
    """The sampling trainer's settings stored under ``header[key]`` of a checkpoint; :class:`BlueprintError`
    (naming ``label``) when they are missing."""
    m = header.get(key)
    if not isinstance(m, dict):
        raise BlueprintError(f"{path}: the {label} settings are missing from the header (corrupt file)")
    return m


def sampled_trainer_keywords(header: Dict, m: Dict) -> Dict:
    """Constructor keywords shared by the sampling trainers (ES-MCCFR and its Pluribus recipe), read from a
    checkpoint's header and its settings ``m``; ``KeyError`` when one is missing."""
    keys = ("deals_per_board", "prune", "prune_warmup", "prune_probability", "prune_threshold", "regret_floor",
            "board", "hand_weights")
    return dict({k: header[k] for k in ("game", "bets", "raise_cap", "seed")}, **{k: m[k] for k in keys})
