"""Value functions for AIVAT fitted to the agents that play (issue 27): a value table trained on played hands.

AIVAT (:mod:`cfrkit.evaluation.aivat`) is unbiased for any value function whose chance corrections
use the true chance distribution; the closer the values are to the match's real expected winnings,
the lower the variance.  The equity fallback (``equity x pot - contribution``) ignores how big the
pot will grow, which decides most of a hold'em hand's swing; :class:`TableValueFunction` adds a
learned term for that::

    v(h) = pot(h) * (eq(h) + rho[cell(h)]) - c0(h)           (chips of seat 0)

``eq`` is seat 0's showdown equity against seat 1's actual hand over the cards to come, ``pot`` the
chips in the pot, ``c0`` seat 0's contribution, and ``rho[cell]`` the mean extra winnings per chip
of pot that the pilot hands had in that cell.  A cell is (which agent sits in seat 0, round, pot
bin, and the hands: preflop the two players' hand-strength deciles, later the equity bin).
:func:`fit_value_table` plays a pilot match with the same agents (other deals than the evaluation
match's) and fits ``rho`` by shrunken least squares on the hands' final winnings.

Unbiasedness: ``chance_expectation(h)`` is ``E_c v(h c)`` under the true chance distribution:

* the hole cards: exact, from the deciles' joint distribution over all disjoint pairs of hands
  (and the preflop equity averaging to 1/2 by symmetry);
* the turn and river: exact, every card enumerated;
* the flop: an unbiased estimate, the mean of ``v`` over ``samples`` flops drawn uniformly from the
  cards left (by the value function's own generator, independent of the deal), so the correction
  has zero mean over the deal and the draw.  The preflop equity ``eq`` itself is the mean of the
  same flops' exact equities (an unbiased estimate of the preflop equity, 1.7 million boards).

Leduc-family games enumerate every chance outcome exactly (:meth:`TableValueFunction.chance_expectation`).
"""
from __future__ import annotations

import math
from typing import Dict, Optional, Sequence, Tuple

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.linalg import lsqr

from cfrkit.cards import preflop as cards_preflop
from cfrkit.cards.equity import hand_vs_hand_counts
from cfrkit.cards.evaluator import evaluate_batch
from cfrkit.cards.hands import HOLE_PAIRS, pair_index
from cfrkit.cards.isomorphism import pair_preflop_classes
from cfrkit.evaluation.aivat import AivatObserver
from cfrkit.games.base import GameError
from cfrkit.poker.match import Hand, MatchObserver, play_match
from cfrkit.poker.view import HoldemView, PokerView, poker_view

__all__ = ["TableValueFunction", "fit_value_table", "preflop_deciles"]

_POT_BINS = 10      # log2(pot / big blind) bins: 1 bb .. 512+ bb
_EQ_BINS = 10       # showdown-equity bins on the flop, turn and river
_DECILES = 10       # preflop hand-strength classes per player (equal-count, by equity against a random hand)
_SHRINK = 5.0       # ridge: pseudo-rows per feature pulling its weight towards 0 (the equity value)

_PREFLOP_CACHE: Dict[int, Tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def preflop_equity_vs_random() -> np.ndarray:
    """float64[1326]: each hole pair's exact preflop equity (win + tie / 2) against a uniformly random
    hand, over all boards (card removal exact): :func:`cfrkit.cards.preflop.preflop_equity_vs_random`, from
    the shipped exact matchup counts in about a second (it was enumerated here, 40 CPU seconds, before)."""
    return cards_preflop.preflop_equity_vs_random()


def preflop_deciles(num_classes: int = _DECILES) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(cls, joint, eq)``: each of the 1326 hole pairs' preflop strength class (int64[1326], 0
    weakest, equal-count classes by :func:`preflop_equity_vs_random`), the exact joint probability
    of the two players' classes over all deals of two disjoint pairs (float64[num_classes,
    num_classes], sums to 1) and the equities themselves.  Cached per ``num_classes``."""
    hit = _PREFLOP_CACHE.get(num_classes)
    if hit is not None:
        return hit
    strength = preflop_equity_vs_random()
    order = np.argsort(strength, kind="stable")
    cls = np.empty(1326, dtype=np.int64)
    cls[order] = np.arange(1326) * num_classes // 1326
    cards = np.zeros((1326, 52))
    pairs = np.asarray(HOLE_PAIRS)
    cards[np.arange(1326), pairs[:, 0]] = 1.0
    cards[np.arange(1326), pairs[:, 1]] = 1.0
    disjoint = (cards @ cards.T) == 0
    onehot = np.zeros((1326, num_classes))
    onehot[np.arange(1326), cls] = 1.0
    joint = onehot.T @ disjoint.astype(np.float64) @ onehot
    joint /= joint.sum()
    _PREFLOP_CACHE[num_classes] = (cls, joint, strength)
    return cls, joint, strength


class TableValueFunction:
    """``v(h) = pot * (eq + w . phi(h)) - c0`` for seat 0 (chips); ``w`` zero gives the equity value.

    ``phi(h)`` is sparse: per (seating, round, pot bin) group, hold'em preflop one-hot features of
    each player's hand class (169 classes) and of the pair of their strength classes (``classes``
    equal-count E[HS] classes), later rounds a one-hot equity bin (``eq_bins``); every group also has
    the slope feature ``eq - 1/2``.  Seating: whether ``agents[0]`` sits in seat 0 of the hand.

    ``view``: the game's :class:`~cfrkit.poker.view.PokerView` (heads-up hold'em or Leduc);
    ``w``: float64[num_features] (default zeros); ``samples``: flops per flop expectation (hold'em);
    ``seed``: the flop sampler's seed.  Call :meth:`hand_start` with each hand (the AIVAT observer
    does) so the features know the seating.
    """

    def __init__(self, view: PokerView, w: Optional[np.ndarray] = None, samples: int = 48, seed: int = 0,
                 classes: int = _DECILES, eq_bins: int = _EQ_BINS, pot_bins: int = _POT_BINS):
        if min(classes, eq_bins, pot_bins) < 1:
            raise GameError(f"classes, eq_bins and pot_bins must be >= 1, got {classes}, {eq_bins}, {pot_bins}")
        if samples < 1:
            raise GameError(f"samples must be >= 1, got {samples}")
        self.nc, self.ne, self.npb = int(classes), int(eq_bins), int(pot_bins)
        self.view = view
        self.holdem = isinstance(view, HoldemView)
        if self.holdem and (view.d.num_players != 2 or view.d.num_hole_cards != 2):
            raise GameError("TableValueFunction needs heads-up hold'em with 2 hole cards")
        self.samples = int(samples)
        self.rounds = view.num_rounds()
        self.bb = float(view.big_blind)
        if self.holdem:
            self.hand_class = np.asarray(pair_preflop_classes(), dtype=np.int64)
            self.k = 169
            self.p_class = np.bincount(self.hand_class, minlength=169) / 1326.0  # each seat's class marginal
            self._preflop_tables = None  # (deciles, joint, class equities): loaded at the first preflop use
        else:
            self.hand_class = np.arange(view.num_hands, dtype=np.int64)
            self.k = int(view.num_hands)
        # one (seating, round, pot bin) group: per player a class intercept and a class slope on
        # (eq - 1/2) (4 k), then hold'em preflop the pair of strength classes, later an equity bin, and a slope
        self.extra = [(self.nc * self.nc if (self.holdem and r == 0) else self.ne) for r in range(self.rounds)]
        self.group = [4 * self.k + e + 1 for e in self.extra]
        per_round = [g * self.npb for g in self.group]
        self.offset = np.concatenate([[0], np.cumsum(per_round)]).astype(np.int64)
        self.per_seating = int(self.offset[-1])
        self.num_features = 2 * self.per_seating
        self.w = np.zeros(self.num_features) if w is None else np.asarray(w, dtype=np.float64)
        if self.w.shape != (self.num_features,):
            raise GameError(f"w has shape {self.w.shape}; this game's model has {self.num_features} features")
        self.rng = np.random.default_rng(np.random.SeedSequence([int(seed), 27]))
        self.seating = 0
        self.validation: Dict[float, float] = {}  # set by fit_value_table: weight factor -> held-out AIVAT std
        self._hands_key = None
        self._eq: Dict[tuple, float] = {}
        self._flops: Optional[np.ndarray] = None
        self._flop_eq: Optional[np.ndarray] = None

    def _preflop(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(strength decile per pair, exact decile-pair joint, exact class equity against a random hand)."""
        if self._preflop_tables is None:
            cls, joint, strength = preflop_deciles(self.nc)
            counts = np.bincount(self.hand_class, minlength=169)
            self._preflop_tables = (cls, joint, np.bincount(self.hand_class, weights=strength, minlength=169) / counts)
        return self._preflop_tables

    # ------------------------------------------------------------------ per hand
    def hand_start(self, hand: Hand) -> None:
        """Seat the features: 0 when ``agents[0]`` is in seat 0 of this hand, else 1."""
        self.seating = 0 if hand.seat_of_player[0] == 0 else 1

    def _hole(self, state) -> Optional[Tuple[Tuple[int, ...], Tuple[int, ...]]]:
        if self.holdem:
            h0, h1 = state.hole
            if len(h0) < 2 or len(h1) < 2:
                return None
            return (int(h0[0]), int(h0[1])), (int(h1[0]), int(h1[1]))
        if min(state.private) < 0:
            return None
        return (int(state.private[0]),), (int(state.private[1]),)

    def _new_hands(self, key) -> None:
        if key == self._hands_key:
            return
        self._hands_key = key
        self._eq = {}
        self._flops = None

    # ------------------------------------------------------------------ equity (seat 0 vs seat 1, exact or sampled)
    def _holdem_eq(self, hole, board: Tuple[int, ...]) -> float:
        if len(board) == 0:
            self._sample_flops(hole)
            return float(self._flop_eq.mean())
        hit = self._eq.get(board)
        if hit is None:
            (a, b), (c, d) = hole
            w, t, l = hand_vs_hand_counts((a, b), (c, d), board)
            hit = self._eq[board] = (w + 0.5 * t) / (w + t + l)
        return hit

    def _next_card_eqs(self, hole, board: Tuple[int, ...]) -> np.ndarray:
        """float64[cards left]: exact equity after each possible turn (3-card board) or river (4-card
        board), in card order; one batched evaluation (and cached for the child states' values)."""
        key = ("next",) + board
        hit = self._eq.get(key)
        if hit is not None:
            return hit
        dead = set(hole[0]) | set(hole[1]) | set(board)
        rest = np.array([c for c in range(52) if c not in dead], dtype=np.uint8)
        fixed = np.array(board, dtype=np.uint8)
        if len(board) == 4:  # river: win / tie / loss per card
            nxt = rest[:, None]
        else:  # turn: every (turn, river) pair, the river averaged out per turn
            t, r = np.meshgrid(np.arange(rest.size), np.arange(rest.size), indexing="ij")
            keep = t != r
            nxt = np.stack([rest[t[keep]], rest[r[keep]]], axis=1)
        rows = nxt.shape[0]
        cards = np.empty((2 * rows, 2 + len(board) + nxt.shape[1]), dtype=np.uint8)
        cards[:rows, :2] = hole[0]
        cards[rows:, :2] = hole[1]
        cards[:, 2:2 + len(board)] = fixed
        cards[:rows, 2 + len(board):] = nxt
        cards[rows:, 2 + len(board):] = nxt
        v = evaluate_batch(cards)
        score = np.where(v[:rows] > v[rows:], 1.0, np.where(v[:rows] == v[rows:], 0.5, 0.0))
        eqs = score if len(board) == 4 else score.reshape(rest.size, rest.size - 1).mean(axis=1)
        for c, e in zip(rest.tolist(), eqs.tolist()):
            self._eq[board + (c,)] = e
        self._eq[key] = eqs
        return eqs

    def _sample_flops(self, hole) -> None:
        if self._flops is not None:
            return
        dead = set(hole[0]) | set(hole[1])
        deck = np.array([c for c in range(52) if c not in dead], dtype=np.int64)
        picks = np.argsort(self.rng.random((self.samples, deck.size)), axis=1)[:, :3]
        self._flops = deck[picks]
        self._flop_eq = np.array([self._holdem_eq(hole, tuple(int(c) for c in f)) for f in self._flops])

    def equity(self, state) -> float:
        """Seat 0's showdown equity against seat 1's hand (hold'em preflop: over ``samples`` sampled flops)."""
        hole = self._hole(state)
        if hole is None:
            return 0.5
        self._new_hands(hole)
        if self.holdem:
            return self._holdem_eq(hole, tuple(int(c) for c in state.board))
        return float(self.view.equity_hands(state))

    # ------------------------------------------------------------------ features
    def _pot_bin(self, pot: float) -> int:
        return min(self.npb - 1, max(0, int(math.log2(max(pot, 1e-9) / self.bb))))

    def _base(self, r: int, pot: float) -> int:
        return self.seating * self.per_seating + int(self.offset[r]) + self._pot_bin(pot) * self.group[r]

    def features(self, state) -> Tuple[float, float, float, np.ndarray, np.ndarray]:
        """``(eq, pot, c0, idx, val)`` of a non-terminal state: ``phi`` is ``val`` at ``idx`` (empty
        before the hands are dealt)."""
        c = self.view.contributions(state)
        pot = c[0] + c[1]
        hole = self._hole(state)
        if hole is None:
            return 0.5, pot, c[0], np.zeros(0, dtype=np.int64), np.zeros(0)
        eq = self.equity(state)
        r = int(self.view.round_of(state))
        base = self._base(r, pot)
        k = self.k
        if self.holdem:
            p0, p1 = pair_index(*hole[0]), pair_index(*hole[1])
            c0, c1 = int(self.hand_class[p0]), int(self.hand_class[p1])
        else:
            p0 = c0 = hole[0][0]
            p1 = c1 = hole[1][0]
        if self.holdem and r == 0:
            cls = self._preflop()[0]
            cell = int(cls[p0]) * self.nc + int(cls[p1])
        else:
            cell = min(self.ne - 1, int(eq * self.ne))
        e = eq - 0.5
        idx = np.array([base + c0, base + k + c1, base + 2 * k + c0, base + 3 * k + c1, base + 4 * k + cell,
                        base + self.group[r] - 1], dtype=np.int64)
        return eq, pot, c[0], idx, np.array([1.0, 1.0, e, e, 1.0, e])

    # ------------------------------------------------------------------ the value function
    def value(self, state) -> float:
        """Seat 0's value of ``state`` in chips (exact winnings at a terminal)."""
        if state.is_terminal():
            return float(state.returns()[0])
        if state.is_chance_node():  # a decision's child that deals cards: its expectation, for consistency
            return self.chance_expectation(state)
        eq, pot, c0, idx, val = self.features(state)
        return pot * (eq + float(self.w[idx] @ val)) - c0

    def chance_expectation(self, state) -> float:
        """``E_c v(state c)`` over the run of chance nodes starting at ``state`` (see the module doc)."""
        if not self.holdem:
            return self._enumerate(state)
        c = self.view.contributions(state)
        pot, c0 = c[0] + c[1], c[0]
        hole = self._hole(state)
        k = self.k
        if hole is None:  # the hole cards: exact class marginals, class-pair joint and class equities
            w = self.w[self._base(0, pot):]
            _, joint, eq_class = self._preflop()
            p, dev = self.p_class, eq_class - 0.5
            extra = (float(p @ w[:k]) + float(p @ w[k:2 * k]) + float((p * dev) @ w[2 * k:3 * k])
                     - float((p * dev) @ w[3 * k:4 * k]) + float(joint.ravel() @ w[4 * k:4 * k + self.nc ** 2]))
            return pot * (0.5 + extra) - c0
        self._new_hands(hole)
        board = tuple(int(x) for x in state.board)
        if self._runs_out(state):  # all-in: the cards run out to the showdown
            return pot * self._holdem_eq(hole, board) - c0
        if len(board) == 0:
            self._sample_flops(hole)
            eqs = self._flop_eq
        else:
            eqs = self._next_card_eqs(hole, board)
        nxt = {0: 1, 3: 2, 4: 3}[len(board)]  # the round the run deals (the engine may have advanced ``round``)
        ca = int(self.hand_class[pair_index(*hole[0])])
        cb = int(self.hand_class[pair_index(*hole[1])])
        w = self.w[self.seating * self.per_seating + int(self.offset[nxt]) + self._pot_bin(pot) * self.group[nxt]:]
        eb = np.minimum(self.ne - 1, (eqs * self.ne).astype(np.int64))
        mean_eq = float(eqs.mean())
        slope = w[2 * k + ca] + w[3 * k + cb] + w[self.group[nxt] - 1]
        extra = w[ca] + w[k + cb] + slope * (mean_eq - 0.5) + float(w[4 * k + eb].mean())
        return pot * (mean_eq + extra) - c0

    def _runs_out(self, state) -> bool:
        """Whether the chance run at ``state`` deals to the end of the hand (no decision left)."""
        s = state.clone()
        while s.is_chance_node():
            s.apply_action(int(s.chance_outcomes()[0][0]))
        return s.is_terminal()

    def _enumerate(self, state) -> float:
        """Exact ``E_c v`` by walking every chance outcome (small games)."""
        total = 0.0
        for action, p in state.chance_outcomes():
            child = state.clone()
            child.apply_action(int(action))
            total += p * (self._enumerate(child) if child.is_chance_node() else self.value(child))
        return total

    # ------------------------------------------------------------------ storage
    def save(self, path: str) -> None:
        """Write ``w`` and the model's settings to an ``.npz`` file."""
        np.savez(path, w=self.w, samples=self.samples, game=self.view.game.game_string(),
                 shape=np.array([self.nc, self.ne, self.npb]))

    @classmethod
    def load(cls, path: str, view: Optional[PokerView] = None, seed: int = 0) -> "TableValueFunction":
        """Read a model written by :meth:`save` (``view`` defaults to the stored game's)."""
        data = np.load(path)
        view = view or poker_view(str(data["game"]))
        nc, ne, npb = (int(x) for x in data["shape"])
        return cls(view, data["w"], int(data["samples"]), seed, nc, ne, npb)


class _Recorder(MatchObserver):
    """Pilot-match observer: features, pot and equity value at every decision state of every hand."""

    def __init__(self, vf: TableValueFunction):
        self.vf = vf
        self.rows, self.pots, self.base, self.hand_of_row, self.u0 = [], [], [], [], []
        self.hands = 0

    def hand_start(self, hand: Hand) -> None:
        self.vf.hand_start(hand)

    def decision(self, hand: Hand, state, seat: int) -> None:
        eq, pot, c0, idx, val = self.vf.features(state)
        if idx.size:
            self.rows.append((idx, val))
            self.pots.append(pot)
            self.base.append(pot * eq - c0)
            self.hand_of_row.append(self.hands)

    def hand_end(self, hand: Hand) -> None:
        self.u0.append(float(hand.returns[0]))
        self.hands += 1


def fit_value_table(game, agents: Sequence, deals: int, *, seed: int = 1_000_003, samples: int = 48,
                    shrink: float = _SHRINK, validate: float = 0.25, scales: Sequence[float] = (1.0, 0.5, 0.25, 0.0),
                    view: Optional[PokerView] = None, **shape) -> TableValueFunction:
    """Fit a :class:`TableValueFunction` for ``agents`` (``agents[0]``'s side) on a pilot match.

    Plays ``deals`` duplicate deals (match seed ``seed``: use another seed than the evaluation match's,
    so the values do not depend on the hands they evaluate) and fits ``w`` by ridge least squares of
    seat 0's final winnings ``u0`` on ``pot * eq - c0 + pot * w . phi`` over every decision state
    visited (chips; each feature's column scaled to unit root-mean-square, ridge ``shrink``).
    The last ``validate`` fraction of the pilot deals is held out: it is played with AIVAT once per
    factor in ``scales`` (``w`` times the factor; 0 is the equity value) and the factor with the
    lowest AIVAT standard deviation is kept (``vf.validation``: factor -> std in chips per hand), so
    a table that generalises badly (sparse pilot, mixed strategies) falls back towards the equity
    value.  The choice uses pilot hands only, so the evaluation match stays unbiased.  ``shape``:
    ``classes``, ``eq_bins``, ``pot_bins`` of :class:`TableValueFunction`.
    """

    view = view or poker_view(game)
    vf = TableValueFunction(view, samples=samples, seed=seed, **shape)
    if not 0.0 <= validate < 1.0:
        raise GameError(f"validate must be in [0, 1), got {validate}")
    held = int(round(int(deals) * validate)) if scales else 0
    fit_deals = int(deals) - held
    if fit_deals < 1:
        raise GameError(f"a pilot of {deals} deals leaves none to fit on")
    rec = _Recorder(vf)
    play_match(view.game, list(agents), fit_deals, seed=int(seed), duplicate=True, observers=[rec],
               time_limit=float("inf"))
    if not rec.rows:
        raise GameError("the pilot match visited no decision state")
    pots = np.asarray(rec.pots)
    target = np.asarray(rec.u0)[np.asarray(rec.hand_of_row)] - np.asarray(rec.base)  # chips
    lengths = np.array([len(i) for i, _ in rec.rows])
    cols = np.concatenate([i for i, _ in rec.rows])
    vals = np.concatenate([v for _, v in rec.rows]) * np.repeat(pots, lengths)  # pot * phi: chips per unit of w
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    # columns scaled to unit root-mean-square, so the ridge pulls a feature seen in n rows by n / (n + shrink)
    # whatever its size (a small-pot preflop feature as much as a big-pot river one)
    count = np.bincount(cols, minlength=vf.num_features)
    norm = np.sqrt(np.bincount(cols, weights=vals * vals, minlength=vf.num_features) / np.maximum(count, 1))
    norm[norm == 0] = 1.0
    design = csr_matrix((vals / norm[cols], cols, indptr), shape=(len(rec.rows), vf.num_features))
    vf.w = lsqr(design, target, damp=math.sqrt(shrink), atol=1e-10, btol=1e-10, iter_lim=5000)[0] / norm
    vf.validation = {}
    if held > 0:
        fitted = vf.w.copy()
        for factor in scales:
            vf.w = fitted * float(factor)
            obs = AivatObserver(vf)
            play_match(view.game, list(agents), held, seed=int(seed), duplicate=True, first_deal=fit_deals,
                       observers=[obs], time_limit=float("inf"))
            vf.validation[float(factor)] = float(np.std(obs.values))
        best = min(vf.validation, key=vf.validation.get)
        vf.w = fitted * best
    return vf
