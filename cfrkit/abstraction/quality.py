"""Abstraction quality in a small hold'em game: solve the abstract game, lift the strategy, and
compute its exact exploitability in the real (unabstracted) game.

The game ("flop-turn hold'em", :class:`FlopTurnGame`): a reduced deck (default 4 ranks x 4 suits,
16 cards), 2 hole cards each, an ante of 1 chip each, the 3-card flop dealt before the first betting
round and one turn card before the second; limit betting with raises of 2 then 4 chips, at most 2
raises a round, player 0 first in both rounds; showdown with the 6 cards.  As an ACPC definition::

    GAMEDEF / limit / numPlayers = 2 / numRounds = 2 / ante = 1 1 / raiseSize = 2 4 /
    firstPlayer = 1 1 / maxRaises = 2 2 / numSuits = 4 / numRanks = 4 / numHoleCards = 2 /
    numBoardCards = 3 1 / END GAMEDEF

Why not ``compile_game``: the protocol tree deals cards one by one (ordered), about 4 x 10^7 nodes
even for this deck, beyond a compiled tree in Python.  Here the public tree (canonical flops,
weighted by the flops they stand for, x turn cards x betting) carries vectors over the deck's hole
pairs, with showdown and fold matrices per board: CFR+ on the abstract game keeps one regret per
(betting node, bucket) -- hands of a bucket share it, across boards -- and the best response in the
real game maximises per hand at every public node, which is exact because every chance event but
the private cards is public.  Suit symmetry makes canonical flops exact (the root has no decision).
Values are chips per hand for player 0; exploitability = (BR_0 + BR_1) / 2 in chips.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from cfrkit.abstraction.enumerate import board_sets, deck_cards
from cfrkit.cards.equity import board_strengths_batch
from cfrkit.cards.hands import HOLE_PAIRS, NUM_PAIRS


@dataclass
class _Node:
    kind: str                      # "dec", "fold", "show", "chance"
    round: int
    player: int = -1
    contrib: Tuple[int, int] = (1, 1)
    children: Tuple[int, ...] = ()
    folder: int = -1
    index: int = -1                # decision index within its round (regret tables)


class FlopTurnGame:
    """The public tree and card matrices of flop-turn hold'em (see the module docstring).

    Vectors over hands are compact: ``[F, m1]`` on the flop (the m1 deck pairs disjoint from each
    canonical flop, listed in ``hands1[f]`` as indices into the 1326 pairs) and ``[F, T, m2]`` on the
    turn (``gather[f, t]`` picks the m2 of them disjoint from the turn card too)."""

    def __init__(self, num_ranks: int = 4, num_suits: int = 4, raise_sizes=(2, 4), max_raises: int = 1):
        self.num_ranks, self.num_suits = num_ranks, num_suits
        self.deck = deck_cards(num_ranks, num_suits)
        indeck = np.zeros(52, bool)
        indeck[self.deck] = True
        deck_pairs = np.flatnonzero(indeck[HOLE_PAIRS[:, 0]] & indeck[HOLE_PAIRS[:, 1]])
        self.flops, w = board_sets(3, num_ranks, num_suits)
        self.flop_weight = w.astype(np.float64)
        F = len(self.flops)
        T = self.deck.size - 3
        self.turns = np.zeros((F, T), dtype=np.uint8)
        self.m1 = _comb(self.deck.size - 3, 2)
        self.m2 = _comb(self.deck.size - 4, 2)
        self.hands1 = np.zeros((F, self.m1), np.int64)
        self.gather = np.zeros((F, T, self.m2), np.int64)
        self.fold1 = np.zeros((F, self.m1, self.m1))
        self.fold2 = np.zeros((F, T, self.m2, self.m2))
        self.show = np.zeros((F, T, self.m2, self.m2))
        for f, flop in enumerate(self.flops):
            pc_all = HOLE_PAIRS[deck_pairs].astype(np.int64)
            h1 = deck_pairs[~np.isin(pc_all, flop).any(1)]
            self.hands1[f] = h1
            pc = HOLE_PAIRS[h1].astype(np.int64)
            share = (pc[:, None, 0] == pc[None, :, 0]) | (pc[:, None, 0] == pc[None, :, 1]) | \
                    (pc[:, None, 1] == pc[None, :, 0]) | (pc[:, None, 1] == pc[None, :, 1])
            self.fold1[f] = ~share
            rest = np.setdiff1d(self.deck, flop)
            self.turns[f] = rest
            boards = np.concatenate([np.broadcast_to(flop, (T, 3)), rest[:, None]], axis=1)
            strength = board_strengths_batch(boards)
            for t in range(T):
                keep = np.flatnonzero(~(pc == rest[t]).any(1))
                self.gather[f, t] = keep
                st = strength[t, h1[keep]].astype(np.int64)
                sh = share[np.ix_(keep, keep)]
                self.fold2[f, t] = ~sh
                self.show[f, t] = np.sign(st[:, None] - st[None, :]) * ~sh
        self._scatter = (np.arange(F)[:, None, None] * self.m1 + self.gather).reshape(-1)
        self.remaining = self.deck.size - 3 - 4  # turn cards left once both hands and the flop are out
        self.deals = float(self.flop_weight.sum() * self.m1 * _comb(self.deck.size - 5, 2))
        self.nodes: List[_Node] = []
        self.num_dec = [0, 0]
        self.raise_sizes, self.max_raises = tuple(raise_sizes), int(max_raises)
        self.root = self._build(0, 0, (1, 1), 0, 0, False)

    def down(self, v1: np.ndarray) -> np.ndarray:
        """Flop vector [F, m1] -> turn vectors [F, T, m2] (hands holding the turn card dropped)."""
        return np.take_along_axis(v1[:, None, :], self.gather, axis=2)

    def up(self, v2: np.ndarray) -> np.ndarray:
        """Sum turn vectors back onto the flop hands: [F, T, m2] -> [F, m1]."""
        F = self.gather.shape[0]
        return np.bincount(self._scatter, v2.reshape(-1), minlength=F * self.m1).reshape(F, self.m1)

    def _build(self, rnd, player, contrib, raises, acted, facing) -> int:
        idx = len(self.nodes)
        node = _Node("dec", rnd, player, contrib, index=self.num_dec[rnd])
        self.nodes.append(node)
        self.num_dec[rnd] += 1
        kids = []
        opp = 1 - player
        if facing:  # fold, call, raise
            f = len(self.nodes)
            self.nodes.append(_Node("fold", rnd, contrib=contrib, folder=player))
            kids.append(f)
            kids.append(self._after_round(rnd, (max(contrib),) * 2))
        else:       # check (ends the round if the other already checked), bet
            kids.append(self._after_round(rnd, contrib) if acted else self._build(rnd, opp, contrib, raises, 1, False))
        if raises < self.max_raises:
            c = list(contrib)
            c[player] = max(contrib) + self.raise_sizes[rnd]
            kids.append(self._build(rnd, opp, tuple(c), raises + 1, 1, True))
        node.children = tuple(kids)
        return idx

    def _after_round(self, rnd, contrib) -> int:
        idx = len(self.nodes)
        if rnd == 1:
            self.nodes.append(_Node("show", rnd, contrib=contrib))
            return idx
        node = _Node("chance", rnd, contrib=contrib)
        self.nodes.append(node)
        node.children = (self._build(1, 0, contrib, 0, 0, False),)
        return idx

    # ----------------------------------------------------------------------------- buckets
    def abstraction_buckets(self, abstraction):
        """(flop buckets int64[F, m1], turn buckets int64[F, T, m2], k1, k2) of a CardAbstraction."""
        F, T = self.turns.shape
        b1 = np.zeros((F, self.m1), np.int64)
        b2 = np.zeros((F, T, self.m2), np.int64)
        for f, flop in enumerate(self.flops):
            b1[f] = abstraction.buckets_for_board(1, flop)[self.hands1[f]]
            for t in range(T):
                bb = abstraction.buckets_for_board(2, list(flop) + [int(self.turns[f, t])])
                b2[f, t] = bb[self.hands1[f][self.gather[f, t]]]
        assert b1.min() >= 0 and b2.min() >= 0
        return b1, b2, abstraction.num_buckets(1), abstraction.num_buckets(2)

    def lossless_buckets(self):
        """Every (board, hand) its own bucket: the abstract game is the real game."""
        F, T = self.turns.shape
        return (np.arange(F * self.m1).reshape(F, self.m1), np.arange(F * T * self.m2).reshape(F, T, self.m2),
                F * self.m1, F * T * self.m2)


def _comb(a, b):
    from math import comb

    return comb(a, b)


def _terminal(game: FlopTurnGame, nd: _Node, p: int, r_opp: np.ndarray) -> np.ndarray:
    """Counterfactual values of p's hands at a fold or showdown (matrices are from p's hand's side)."""
    if nd.kind == "fold":
        sign = -1.0 if nd.folder == p else 1.0
        M = game.fold1 if nd.round == 0 else game.fold2
        return sign * nd.contrib[nd.folder] * np.matmul(M, r_opp[..., None])[..., 0]
    return nd.contrib[0] * np.matmul(game.show, r_opp[..., None])[..., 0]


def _regret_matching(r: np.ndarray) -> np.ndarray:
    pos = np.maximum(r, 0)
    s = pos.sum(1, keepdims=True)
    return np.where(s > 0, pos / np.where(s > 0, s, 1), 1.0 / r.shape[1])


class AbstractSolver:
    """CFR+ (alternating updates, regrets floored at 0, linear averaging) on the abstract game whose
    information sets are (betting node, bucket): ``b1`` int[F, n] flop buckets, ``b2`` int[F, T, n]
    turn buckets of the game's hole pairs on each board."""

    def __init__(self, game: FlopTurnGame, b1, b2, k1: int, k2: int):
        self.g = game
        self.b = (np.asarray(b1), np.asarray(b2))
        self.k = (int(k1), int(k2))
        self.regret: Dict[int, np.ndarray] = {}
        self.avg: Dict[int, np.ndarray] = {}
        for i, nd in enumerate(game.nodes):
            if nd.kind == "dec":
                self.regret[i] = np.zeros((self.k[nd.round], len(nd.children)))
                self.avg[i] = np.zeros((self.k[nd.round], len(nd.children)))
        self.iterations = 0

    def _cfr(self, i, p, r_own, r_opp):
        g = self.g
        nd = g.nodes[i]
        if nd.kind in ("fold", "show"):
            return _terminal(g, nd, p, r_opp)
        if nd.kind == "chance":
            v = self._cfr(nd.children[0], p, g.down(r_own), g.down(r_opp))
            return g.up(v) / g.remaining
        strat = _regret_matching(self.regret[i])[self.b[nd.round]]          # [..., n, A]
        if nd.player != p:
            return sum(self._cfr(c, p, r_own, r_opp * strat[..., a]) for a, c in enumerate(nd.children))
        vals = np.stack([self._cfr(c, p, r_own * strat[..., a], r_opp) for a, c in enumerate(nd.children)], -1)
        v = (vals * strat).sum(-1)
        b = self.b[nd.round].reshape(-1)
        reg, avg = self.regret[i], self.avg[i]
        for a in range(len(nd.children)):
            reg[:, a] += np.bincount(b, (vals[..., a] - v).reshape(-1), minlength=reg.shape[0])
            avg[:, a] += self.iterations * np.bincount(b, (r_own * strat[..., a]).reshape(-1), minlength=reg.shape[0])
        np.maximum(reg, 0, out=reg)
        return v

    def iterate(self, n: int = 1) -> None:
        root = np.repeat(self.g.flop_weight[:, None], self.g.m1, 1)   # flop chance weights
        for _ in range(int(n)):
            self.iterations += 1
            for p in (0, 1):
                self._cfr(self.g.root, p, root, root)

    def average_tables(self) -> Dict[int, np.ndarray]:
        """Average strategy per decision node: float[k, A] over buckets."""
        return {i: _regret_matching(a) if a.sum() > 0 else np.full_like(a, 1.0 / a.shape[1]) for i, a in self.avg.items()}


def best_response_value(game: FlopTurnGame, tables: Dict[int, np.ndarray], b1, b2, p: int) -> float:
    """Exact value (chips per hand) of player p's best response in the real game against the lifted
    per-bucket strategy ``tables`` (node -> float[k, A]) of the other player."""
    bk = (b1, b2)

    def walk(i, r_opp):
        nd = game.nodes[i]
        if nd.kind in ("fold", "show"):
            return _terminal(game, nd, p, r_opp)
        if nd.kind == "chance":
            return game.up(walk(nd.children[0], game.down(r_opp))) / game.remaining
        if nd.player == p:
            return np.max(np.stack([walk(c, r_opp) for c in nd.children], -1), -1)
        strat = tables[i][bk[nd.round]]
        return sum(walk(c, r_opp * strat[..., a]) for a, c in enumerate(nd.children))

    v = walk(game.root, np.repeat(game.flop_weight[:, None], game.m1, 1))
    total = v.sum()
    return float(total / game.deals)


def exploitability(game: FlopTurnGame, tables, b1, b2) -> float:
    """(BR_0 + BR_1) / 2 in chips per hand: 0 exactly at an equilibrium of the real game."""
    return 0.5 * (best_response_value(game, tables, b1, b2, 0) + best_response_value(game, tables, b1, b2, 1))
