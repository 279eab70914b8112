"""``BlueprintAgent``: plays a trained blueprint (OpenHoldem's A^C) in the real heads-up no-limit game.

At a decision the agent follows the real hand down the abstract betting tree: folds and calls map to
the fold / call child; a raise maps to the raise children with the pseudo-harmonic translation of
Ganzfried & Sandholm (2013) between the two neighbouring abstract sizes (pot fractions), an all-in
to the all-in child.  A translated opponent raise is sampled once and remembered for the hand; the
agent's own raises are remembered as the abstract action it chose.  Its hand's bucket
(``abstraction.buckets_for_board``) picks the row of the average strategy; an abstract raise of ``f``
pots is played as ``f`` times the real pot after calling (clamped to the legal sizes), all-in as
all-in.  When the abstract tree cannot follow the real hand (e.g. a real raise was mapped to an
all-in and the real betting went on) the hand is off the tree (counted in ``off_tree_hands``): if the
abstract line had ended all-in the agent is committed and checks or calls to the end (it never folds a
pot it treated as all-in); otherwise it plays, for the rest of the hand, the strategy of the nearest
decision node of the same round, seat and facing-a-bet status (pot size and price of calling closest).

:meth:`BlueprintAgent.hand_strategy` gives the same distribution for all 1326 hands (the evaluation
interface of :class:`~cfrkit.agents.poker.PokerAgent`); :meth:`act` samples the row of its own hand.

Matches are played by :func:`cfrkit.poker.match.play_match` (``duplicate=True``: every deal twice
with the seats swapped); :func:`duplicate_match` is its deprecated predecessor.
"""
from __future__ import annotations

import copy
import os
import random
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit._deprecated import deprecated_alias
from cfrkit.agents.blueprint_values import BlueprintValueFunction
from cfrkit.agents.opponent_values import (FIT_FORMAT, OpponentTablesValueFunction, blueprint_fingerprint,
                                           fit_abstract_policy, load_fitted_tables, save_fitted_tables)
from cfrkit.cards.hands import NUM_PAIRS, blocked_pairs, pair_index
from cfrkit.games.base import GameError
from cfrkit.games.holdem.abstraction import pseudo_harmonic_mapping
from cfrkit.games.holdem.game import CALL, FOLD, HoldemState, raise_action, raise_amount
from cfrkit.games.registry import load
from cfrkit.poker.agent import HandStrategy, PokerAgent
from cfrkit.poker.match import play_hand as run_hand
from cfrkit.poker.match import play_match
from cfrkit.poker.registry import agent_entry, make_agent, parse_spec
from cfrkit.solvers.blueprint.betting_tree import (ACTION_CALL, ACTION_FOLD, ACTION_RAISE, DECISION, SHOWDOWN,
                                                   BlueprintError)
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy


_PAIRS: Dict[Tuple[int, ...], int] = {}  # pair_index of a hand's two cards, as dealt (either order)


def _cards_dealt(state: HoldemState) -> int:
    """The cards dealt at ``state`` (both hands' and the board's): one per chance action of its history."""
    return len(state.hole[0]) + len(state.hole[1]) + len(state.board)


class BlueprintAgent(PokerAgent):
    """Play a :class:`~cfrkit.solvers.blueprint.strategy.BlueprintStrategy` (or a blueprint file path)."""

    name = "blueprint"

    def __init__(self, blueprint, seed: Optional[int] = None, abstraction=None):
        if isinstance(blueprint, str):
            blueprint = BlueprintStrategy.load(blueprint, abstraction)
        self.blueprint: BlueprintStrategy = blueprint
        self.tree = blueprint.tree
        from cfrkit.games.registry import load

        self.game = load(self.tree.game_string)
        self.rng = random.Random(seed)
        self.off_tree_hands = 0
        self._choices: Dict[int, Tuple[int, int]] = {}
        self._off_tree = False
        self._committed = False
        self._all_in = False
        self._candidates = None
        self._reset_caches()

    def _reset_caches(self) -> None:
        # per hand: history -> (node or None, all-in flag) of abstract_node, and history -> (node, real
        # state) of the walks that stayed on the tree, so a later call walks only the new actions
        self._nodes: Dict[Tuple[int, ...], Tuple[Optional[int], bool]] = {}
        self._walks: Dict[Tuple[int, ...], Tuple[int, HoldemState]] = {}
        # across hands (small LRUs): node -> float64[buckets of its round, children] average strategy,
        # (round, board) -> bucket of every pair, board -> pairs disjoint from it
        self._tables: "OrderedDict[int, np.ndarray]" = OrderedDict()
        self._buckets: "OrderedDict[Tuple[int, Tuple[int, ...]], np.ndarray]" = OrderedDict()
        self._live: "OrderedDict[Tuple[int, ...], np.ndarray]" = OrderedDict()
        # (round, board, pair) -> the bucket of one hand, where the board's whole row is not cached
        self._hand_buckets: "OrderedDict[Tuple[int, Tuple[int, ...], int], int]" = OrderedDict()
        # the game object check_game last accepted (its rules compared once, not at every decision)
        self._game_ok = None

    def __deepcopy__(self, memo):
        # the blueprint (tree, strategy, abstraction) is never written after loading: share it, copy the
        # per-hand state and the generator (LBR copies the agent for every chunk of deals)
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            if key in ("blueprint", "tree", "game", "_candidates"):
                setattr(new, key, value)
            elif key not in ("_tables", "_buckets", "_live", "_nodes", "_walks", "_hand_buckets", "_fitted",
                             "_game_ok"):
                setattr(new, key, copy.deepcopy(value, memo))
        new._reset_caches()
        return new

    def __getstate__(self):
        state = dict(self.__dict__)
        for key in ("_tables", "_buckets", "_live", "_nodes", "_walks", "_hand_buckets", "_fitted", "_game_ok"):
            state.pop(key, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._reset_caches()

    # ------------------------------------------------------------------ bookkeeping
    def new_hand(self) -> None:
        self._choices = {}
        self._off_tree = False
        self._committed = False
        self._nodes = {}
        self._walks = {}

    @property
    def translations(self) -> Dict[int, Tuple[int, int]]:
        """This hand's raise translations so far: history index -> (real action id, abstract child node), the
        sampled or chosen child each real raise was mapped to.  The live dict (it grows as the hand goes on; a new
        hand starts a new one): read it, never write it."""
        return self._choices

    def _remember_choice(self, index: int, choice: Tuple[int, int]) -> None:
        """Set the abstract child played for the action at history ``index``; cached walks through that
        index may have used another and are dropped."""
        if self._choices.get(index) != choice:
            self._nodes = {h: v for h, v in self._nodes.items() if len(h) <= index}
            self._walks = {h: v for h, v in self._walks.items() if len(h) <= index}
        self._choices[index] = choice

    def check_game(self, game) -> None:
        """Raise ``GameError`` unless ``game`` has the rules the blueprint was trained for (a game object accepted
        last time is not compared again: a game's definition is fixed when it is built)."""
        if game is self._game_ok:
            return
        if getattr(game, "definition", None) != self.game.definition:
            raise GameError(f"the blueprint is for {self.game.game_string()!r}, whose rules differ from "
                            f"{game.game_string()!r}")
        self._game_ok = game

    # ------------------------------------------------------------------ translation
    def translate_raise(self, node: int, real: HoldemState, raise_to: int) -> List[Tuple[int, float]]:
        """``[(child node, probability)]``: the abstract raises a real raise to ``raise_to`` chips maps to.

        Raises :class:`BlueprintError` if ``raise_to`` exceeds the raiser's stack; returns ``[]`` when the
        abstract node offers no raise.
        """
        p = real.current_player()
        stack = real.d.stack[p]
        if raise_to > stack:
            raise BlueprintError(f"a raise to {raise_to} chips is larger than player {p}'s stack of {stack} chips")
        t = self.tree
        first = int(t.child_start[node])
        kids = [c for c in range(first, first + int(t.num_children[node])) if t.action_kind[c] == ACTION_RAISE]
        if not kids:
            return []
        rng = real.raise_range(p)
        allin = [c for c in kids if t.is_allin[c]]
        if allin and rng is not None and raise_to >= rng[1]:
            return [(allin[0], 1.0)]
        x = (raise_to - real.max_spent()) / float(max(1, real.pot() + real.call_amount(p)))
        return pseudo_harmonic_mapping(sorted((float(t.pot_fraction[c]), c) for c in kids), x)

    def real_action(self, child: int, real: HoldemState) -> int:
        """The real game's action id that plays abstract child ``child`` at ``real``."""
        t = self.tree
        kind = int(t.action_kind[child])
        if kind == ACTION_FOLD:
            return FOLD if real.is_legal(FOLD) else CALL
        if kind == ACTION_CALL:
            return CALL
        rng = real.raise_range()
        if rng is None:
            return CALL
        if t.is_allin[child]:
            return raise_action(rng[1])
        target = real.max_spent() + int(round(float(t.pot_fraction[child]) * (real.pot() + real.call_amount())))
        return raise_action(min(rng[1], max(rng[0], target)))

    def abstract_node(self, state: HoldemState) -> Optional[int]:
        """The betting node that follows ``state``'s hand, or None when the abstract tree cannot.

        Results are cached per hand by history, and a new history is walked from the longest cached
        prefix (the same walk, and the same sampled translations, as a walk from the root)."""
        self.check_game(state.game)
        history = tuple(state.history())
        hit = self._nodes.get(history)
        if hit is not None:
            self._all_in = hit[1]
            return hit[0]
        node = self._walk(state, history)
        self._nodes[history] = (node, self._all_in)
        return node

    def _walk(self, state: HoldemState, history: Tuple[int, ...]) -> Optional[int]:
        t = self.tree
        start = len(history)
        while start > 0 and history[:start] not in self._walks:
            start -= 1
        if start:
            node, real = self._walks[history[:start]]
            real = real.clone()
        else:
            real = state.game.new_initial_state()
            node = 0
        self._all_in = False
        dealt = _cards_dealt(state)  # at ``state``: hole and board cards, one per chance action
        for index in range(start, len(history)):
            action = history[index]
            if real.is_chance_node():
                if len(history) - index == dealt - _cards_dealt(real):
                    # only deals are left: they lead to ``state`` itself (the history fixes the state), so its
                    # copy is the replay's end without re-dealing the board (the same state, the same checks)
                    real = state.clone()
                    break
                real.apply_trusted(action)  # the actions of a real state's history are legal
                continue
            if t.kind[node] != DECISION or t.player[node] != real.current_player() or t.round[node] != real.round:
                self._all_in = bool(t.kind[node] == SHOWDOWN)
                return None
            first = int(t.child_start[node])
            if action in (FOLD, CALL):
                child = t.child_of_kind(node, ACTION_FOLD if action == FOLD else ACTION_CALL)
                if child is None:
                    return None
            else:
                memo = self._choices.get(index)  # (real action, abstract child) chosen or sampled before
                if memo is not None and memo[0] == action and first <= memo[1] < first + t.num_children[node]:
                    child = memo[1]
                else:
                    choices = self.translate_raise(node, real, raise_amount(action))
                    if not choices:
                        return None
                    child = self._sample(choices)
                    self._remember_choice(index, (int(action), child))
            real.apply_trusted(action)
            node = child
        if t.kind[node] != DECISION or t.player[node] != real.current_player() or t.round[node] != real.round:
            self._all_in = bool(t.kind[node] == SHOWDOWN)
            return None
        self._walks[history] = (node, real)
        return node

    def _sample(self, choices: List[Tuple[int, float]]) -> int:
        u, acc = self.rng.random(), 0.0
        for c, p in choices:
            acc += p
            if u < acc:
                return c
        return choices[-1][0]

    # ------------------------------------------------------------------ strategy
    def _node_or_none(self, state: HoldemState) -> Optional[int]:
        """The node to play at ``state``; None means check / call (the abstract hand is all-in)."""
        node = None if self._off_tree else self.abstract_node(state)
        if node is None:
            if not self._off_tree:
                self._off_tree = True
                self._committed = self._all_in
                self.off_tree_hands += 1
            if self._committed:
                return None
            node = self.nearest_node(state)
        return node

    def nearest_node(self, state: HoldemState) -> Optional[int]:
        """The decision node most like ``state`` when the tree cannot follow the hand's betting line.

        Among the tree's decisions of the same round and seat that face a bet exactly when the real player
        does, the one closest in pot size (log ratio) and in the price of calling (call / (pot + call)).
        """
        t = self.tree
        p = state.current_player()
        if p < 0:
            return None
        if self._candidates is None:
            dec = np.flatnonzero(t.kind == DECISION)
            pot = t.spent[dec].sum(axis=1).astype(np.float64)
            call = np.abs(t.spent[dec, 0] - t.spent[dec, 1]).astype(np.float64)
            self._candidates = (dec, t.round[dec], t.player[dec], np.log(pot), call / (pot + call), call > 0)
        dec, rnd, player, log_pot, price, facing = self._candidates
        call = state.call_amount(p)
        pot = state.pot()
        mask = (rnd == state.round) & (player == p) & (facing == (call > 0))
        if not mask.any():
            return None
        dist = np.abs(log_pot[mask] - np.log(pot)) + 4.0 * np.abs(price[mask] - call / float(pot + call))
        return int(dec[mask][int(np.argmin(dist))])

    def _support(self, node: int, state: HoldemState) -> Tuple[np.ndarray, np.ndarray]:
        """(real action ids, column of each abstract child in that list) -- children playing the same real
        action (clamped sizes) share a column."""
        t = self.tree
        first = int(t.child_start[node])
        actions: List[int] = []
        column = []
        # real_action of every child, what it reads of ``state`` read once (the same numbers)
        fold = rng = base = None
        for c in range(first, first + int(t.num_children[node])):
            kind = int(t.action_kind[c])
            if kind == ACTION_FOLD:
                if fold is None:
                    fold = FOLD if state.is_legal(FOLD) else CALL
                a = fold
            elif kind == ACTION_CALL:
                a = CALL
            else:
                if base is None:
                    rng = state.raise_range()
                    base = (state.max_spent(), state.pot() + state.call_amount()) if rng is not None else ()
                if rng is None:
                    a = CALL
                elif t.is_allin[c]:
                    a = raise_action(rng[1])
                else:
                    target = base[0] + int(round(float(t.pot_fraction[c]) * base[1]))
                    a = raise_action(min(rng[1], max(rng[0], target)))
            if a not in actions:
                actions.append(a)
            column.append(actions.index(a))
        return np.asarray(actions, dtype=np.int64), np.asarray(column, dtype=np.int64)

    @staticmethod
    def _lru(cache: "OrderedDict", key, make, size: int = 64):
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = make()
            if len(cache) > size:
                cache.popitem(last=False)
        else:
            cache.move_to_end(key)
        return hit

    def _table(self, node: int) -> np.ndarray:
        """float64[buckets of the node's round, children]: the average strategy of every bucket (rows are
        computed independently, so a row equals ``probabilities(node, [bucket])``)."""
        nb = int(self.blueprint.num_buckets[int(self.tree.round[node])])
        return self._lru(self._tables, node, lambda: self.blueprint.probabilities(node, np.arange(nb)), 4096)

    def _board_buckets(self, node: int, board: Tuple[int, ...]) -> np.ndarray:
        r = int(self.tree.round[node])
        return self._lru(self._buckets, (r, board),
                         lambda: np.asarray(self.blueprint.abstraction.buckets_for_board(r, list(board))))

    def _hand_bucket(self, node: int, board: Tuple[int, ...], hole) -> int:
        """The bucket of the hand ``hole`` on ``board`` in ``node``'s round: from the board's row when cached, else
        the hand's alone (the abstraction's ``pair_buckets``: the same bucket, a fraction of the work; ``act`` and
        ``own_strategy`` need one hand, ``hand_strategy`` all of them)."""
        r = int(self.tree.round[node])
        key = tuple(hole)
        pair = _PAIRS.get(key)
        if pair is None:
            pair = _PAIRS[key] = pair_index(*hole)  # checked once per ordered pair of cards (2,652 at most)
        full = self._buckets.get((r, board))
        pair_buckets = getattr(self.blueprint.abstraction, "pair_buckets", None)
        if full is not None or pair_buckets is None or r == 0:
            return int((full if full is not None else self._board_buckets(node, board))[pair])
        return self._lru(self._hand_buckets, (r, board, pair),
                         lambda: int(pair_buckets(r, list(board), [pair])[0]), 256)

    def _live_pairs(self, board: Tuple[int, ...]) -> np.ndarray:
        return self._lru(self._live, board, lambda: ~blocked_pairs(list(board)) if board else
                         np.ones(NUM_PAIRS, dtype=bool))

    def hand_strategy(self, state: HoldemState) -> HandStrategy:
        """The strategy at ``state`` for all 1326 hands (rows of hands touching the board are zero)."""
        node = self._node_or_none(state)
        board = tuple(state.board)
        live = self._live_pairs(board)
        if node is None:
            probs = np.zeros((NUM_PAIRS, 1))
            probs[live, 0] = 1.0
            return HandStrategy(np.array([CALL], dtype=np.int64), probs)
        rows = self._table(node)[self._board_buckets(node, board)[live]]
        actions, column = self._support(node, state)
        probs = np.zeros((NUM_PAIRS, actions.size))
        if actions.size == column.size:  # one real action per abstract child: columns in order
            probs[live] = rows
        else:  # children clamped to the same real size share its column
            merged = np.zeros((rows.shape[0], actions.size))
            np.add.at(merged.T, column, rows.T)
            probs[live] = merged
        return HandStrategy(actions, probs)

    def own_strategy(self, state: HoldemState) -> Tuple[np.ndarray, np.ndarray]:
        """``(actions int64[A], probs float64[A])``: the strategy of the hand the player to act holds, equal
        bit for bit to that hand's :meth:`hand_strategy` row (same actions, same sampled translations) but
        one bucket's row instead of 1326 (what the AIVAT observer asks at each decision)."""
        node = self._node_or_none(state)
        if node is None:
            return np.array([CALL], dtype=np.int64), np.ones(1)
        hole = state.hole[state.current_player()]
        row = self._table(node)[self._hand_bucket(node, tuple(state.board), hole)]
        actions, column = self._support(node, state)
        if actions.size == column.size:
            return actions, row.copy()
        probs = np.zeros(actions.size)
        for c, q in zip(column.tolist(), row.tolist()):  # hand_strategy's np.add.at: children in order
            probs[c] += q
        return actions, probs

    def aivat_value_function(self, view, flops: int = 16, boards: int = 24, seed: int = 0, river_exact: bool = False,
                             follow_owner: bool = False, chance_cv: bool = False, store: Optional[str] = None):
        """The blueprint's own self-play values as an AIVAT value function (seat 0's chips; see
        :mod:`cfrkit.agents.blueprint_values`), or None when its table would be too large (the AIVAT
        observer then uses the check-down equity value).  Built once per agent (a few CPU seconds).
        ``river_exact`` off by default: against A^R it cut the per-deal deviation by a tenth at 4.6x the CPU
        (benchmarks/RESULTS.md, branch aivat-ar); ``follow_owner`` off by default: following this agent's own
        bet-size translations left the deviation unchanged against A^R (2,416 vs 2,462 mbb per deal, 300 deals)
        at 19% fewer hands per CPU s.  ``chance_cv``: the equity control variate on sampled chance expectations (the
        ``chance_cv`` option of :class:`~cfrkit.agents.blueprint_values.BlueprintValueFunction`).  Every setting keeps the
        estimator unbiased.  ``store`` (a directory, optional): the self-play tables are read from there when stored
        for the same blueprint content, ``boards``, ``seed``, game and format, else built and stored there, and used
        as read-only memory maps either way (as :meth:`opponent_value_function`'s ``store``: the same numbers, the
        pages shared by the processes that map them)."""
        cached = getattr(self, "_value_function", None)
        if cached is not None and cached.view is view:
            return cached
        if (cached is not None and (cached.flops, cached.boards, cached.seed, cached.river_exact, cached.follow_owner,
                                    cached.chance_cv)
                == (int(flops), int(boards), int(seed), bool(river_exact), bool(follow_owner), bool(chance_cv))
                and getattr(view.game, "definition", None) == getattr(cached.view.game, "definition", None)):
            # another view of the same game (every match makes its own): the same tables, a fresh generator
            vf = self._value_function = cached.fresh(view)
            return vf
        settings = dict(boards=boards, flops=flops, seed=seed, river_exact=river_exact, follow_owner=follow_owner,
                        chance_cv=chance_cv)
        try:
            if store is None:
                vf = BlueprintValueFunction(self.blueprint, view, self.translate_raise, **settings)
            else:
                meta = {"format": FIT_FORMAT, "blueprint": blueprint_fingerprint(self.blueprint), "self_play": True,
                        "game": view.game.game_string(), "transitions": [int(boards), int(seed)]}
                found = os.path.isdir(store)
                tables = load_fitted_tables(store, meta, self.blueprint)
                vf = None
                if tables is None:
                    vf = BlueprintValueFunction(self.blueprint, view, self.translate_raise, **settings)
                    mine = save_fitted_tables(store, {0: vf.table}, meta, keep_same=not found)
                    tables = load_fitted_tables(store, meta, self.blueprint, verify=not mine)
                if tables is not None:  # the mapped copy (else, e.g. a full disk: the one built in memory)
                    vf = BlueprintValueFunction(self.blueprint, view, self.translate_raise, self_play_table=tables[0],
                                                **settings)
        except GameError:
            return None
        self._value_function = vf
        return vf

    def opponent_value_function(self, view, opponent, deals: int, seed: int, prior: float = 2.0,
                                store: Optional[str] = None, opponent_key: Optional[str] = None):
        """AIVAT values (seat 0's chips) of this blueprint against ``opponent`` (an agent with ``hand_strategy``):
        an :class:`~cfrkit.agents.opponent_values.OpponentTablesValueFunction` whose tables put ``opponent``'s
        abstract policy, fitted on ``deals`` duplicate deals dealt with ``seed``, in its seat (lookahead as
        :meth:`aivat_value_function`'s defaults; against A^R with the two-hour blueprint: per-deal sd 65.4% ->
        68.9% below duplicate, variance x CPU -29%, benchmarks/RESULTS.md).  Give a ``seed``
        other than the evaluated match's: the fit then never sees the evaluated hands and AIVAT stays unbiased.
        The fit is played by twins (this blueprint reseeded with ``seed``; a copy of ``opponent`` whose ``rng``,
        if any, is reseeded with ``seed``), so the evaluated agents' draws are untouched and the same arguments
        give the same tables in any process.  Cost: ~2 CPU s per 1,000 fitting deals against A^R plus ~10 CPU s
        of tables for the two-hour blueprint (and two more pairs of float32 tables in memory); built once per
        (opponent object, deals, seed, prior) and shared by later calls (the last 4 kept; a new ``view`` gets a
        :meth:`~cfrkit.agents.blueprint_values.BlueprintValueFunction.fresh` copy).

        ``store`` (a directory, optional): the fitted tables are read from there when they were stored for the same
        blueprint content (:func:`~cfrkit.agents.opponent_values.blueprint_fingerprint`), ``opponent_key`` (a name
        of the opponent that fixes its play, e.g. its registry spec; default its class name), ``deals``, ``seed``,
        ``prior``, game and :data:`~cfrkit.agents.opponent_values.FIT_FORMAT`, else fitted and stored there (a
        stale or corrupt store is fitted again with one line on stderr).  Either way the tables are then used as
        read-only memory maps of the stored files: the same numbers bit for bit, in the page cache instead of the
        process's own memory (shared by the processes that map them, and dropped by the system when short).
        Raises ``GameError`` (one line) for ``deals < 1`` or an opponent without ``hand_strategy``."""
        if int(deals) < 1:
            raise GameError(f"fitting the opponent needs at least 1 deal, got {deals}")
        cache = self.__dict__.setdefault("_fitted", OrderedDict())
        key = (id(opponent), int(deals), int(seed), float(prior), getattr(view.game, "definition", None))
        vf = cache.get(key)
        if vf is None:
            # the lookahead settings of aivat_value_function's defaults (those of the measured +29%)
            settings = dict(prior=prior, river_exact=False, follow_owner=False)
            meta = None
            tables = None
            if store is not None:
                meta = {"format": FIT_FORMAT, "blueprint": blueprint_fingerprint(self.blueprint),
                        "opponent": str(opponent_key) if opponent_key is not None else type(opponent).__qualname__,
                        "deals": int(deals), "seed": int(seed), "prior": float(prior),
                        "game": view.game.game_string(), "transitions": [24, 0]}  # the value function's boards, seed
                found = os.path.isdir(store)
                tables = load_fitted_tables(store, meta, self.blueprint)
            if tables is None:
                twin = copy.deepcopy(opponent)
                rng = getattr(twin, "rng", None)
                if isinstance(rng, random.Random):
                    rng.seed(int(seed))
                elif isinstance(rng, np.random.Generator):
                    twin.rng = np.random.default_rng(int(seed))
                counts = fit_abstract_policy(BlueprintAgent(self.blueprint, seed=int(seed)), twin, int(deals),
                                             seed=int(seed))
                vf = OpponentTablesValueFunction(self.blueprint, view, self.translate_raise, opponent, counts,
                                                 **settings)
                if store is not None:
                    # a store found stale or corrupt is replaced; one that appeared while fitting is kept
                    mine = save_fitted_tables(store, vf.fitted, meta, keep_same=not found)
                    tables = load_fitted_tables(store, meta, self.blueprint, verify=not mine)
                    if tables is not None:  # the mapped copy: the process's own tables are freed
                        vf = None
            if vf is None:
                vf = OpponentTablesValueFunction(self.blueprint, view, self.translate_raise, opponent,
                                                 tables=tables, **settings)
            cache[key] = vf
            while len(cache) > 4:
                cache.popitem(last=False)
        cache.move_to_end(key)
        if vf.view is not view:
            vf = cache[key] = vf.fresh(view)
        return vf

    def act(self, state: HoldemState) -> int:
        p = state.current_player()
        node = self._node_or_none(state)
        if node is None:
            return CALL
        hole = state.hole[p]
        bucket = self._hand_bucket(node, tuple(state.board), hole)
        row = self._table(node)[bucket]
        first = int(self.tree.child_start[node])
        child = self._sample([(first + i, q) for i, q in enumerate(row.tolist())])  # tolist: the same doubles
        action = self.real_action(child, state)
        self._remember_choice(len(state.history()), (action, child))
        return action


# ---------------------------------------------------------------------- matches
def play_blueprint(blueprint, opponent: str, deals: int, seed: int = 0, progress: bool = False):
    """A blueprint (file or :class:`BlueprintStrategy`) against the registered agent ``opponent`` in the
    blueprint's game: ``deals`` duplicate deals (match seed ``seed``, agent seeds ``seed`` and
    ``seed + 1``).  Returns ``(MatchResult, BlueprintAgent)`` (the agent counts its off-tree hands)."""
    agent = BlueprintAgent(blueprint, seed=seed)
    game = load(agent.tree.game_string)
    other = make_agent(opponent, game=game, seed=seed + 1)
    result = play_match(game, [agent, other], deals, seed=seed, duplicate=True, progress=progress,
                        time_limit=float("inf"))
    return result, agent


def match_summary(result) -> Dict[str, float]:
    """``{deals, hands, mbb_per_hand, ci95}`` of a duplicate match (mbb/hand of ``agents[0]``, rounded to 0.1)."""
    est = result.duplicate_estimate or result.plain
    return {"deals": int(result.deals), "hands": int(result.hands_played), "mbb_per_hand": round(est.mean, 1),
            "ci95": round(est.ci95, 1)}


def blueprint_evaluator(deals: int, opponents: Sequence[str], seed: int = 12345) -> Callable[[Any], Dict[str, dict]]:
    """``evaluate(trainer) -> {opponent: {deals, hands, mbb_per_hand, ci95}}``: the trainer's current
    average strategy in duplicate matches of ``deals`` deals against each registered ``opponent``
    (what ``cfrkit blueprint train --eval-minutes`` records; mbb/hand of the blueprint, 95% intervals)."""
    for name in opponents:
        agent_entry(parse_spec(name)[0])  # an unknown name fails before training starts

    def evaluate(trainer) -> Dict[str, dict]:
        game = load(trainer.tree.game_string)
        agent = BlueprintAgent(BlueprintStrategy.from_trainer(trainer), seed=seed)
        out = {}
        for name in opponents:
            res = play_match(game, [agent, make_agent(name, game=game, seed=seed)], deals, seed=seed, duplicate=True,
                             time_limit=float("inf"))
            out[name] = match_summary(res)
        return out

    return evaluate


# ---------------------------------------------------------------------- deprecated match helpers
@dataclass
class DuplicateMatchSummary:
    """What the deprecated :func:`duplicate_match` returns: agent A's mean and 95% half-width in mbb per
    hand (per seat-averaged deal).  New code reads :class:`cfrkit.poker.match.MatchResult`."""

    deals: int
    mbb_per_hand: float
    ci95: float

    def as_dict(self) -> Dict[str, float]:
        return {"deals": self.deals, "hands": 2 * self.deals, "mbb_per_hand": round(self.mbb_per_hand, 1),
                "ci95": round(self.ci95, 1)}


def _duplicate_match(game, make_a: Callable[[], PokerAgent], make_b: Callable[[], PokerAgent], deals: int,
                     seed: int = 0, progress: bool = False, first_deal: int = 0) -> DuplicateMatchSummary:
    """Agent A against agent B on seeded deals ``first_deal .. first_deal + deals - 1``, each played twice
    with the seats swapped (the runner :func:`cfrkit.poker.match.play_match`)."""
    res = play_match(game, [make_a(), make_b()], deals, seed=seed, duplicate=True, progress=progress,
                     first_deal=first_deal, time_limit=float("inf"))
    est = res.duplicate_estimate
    return DuplicateMatchSummary(int(deals), est.mean, est.ci95 if deals > 1 else float("nan"))


def _play_hand(game, agents, cards: List[int]) -> List[float]:
    return run_hand(game, agents, cards).returns()


duplicate_match = deprecated_alias(_duplicate_match, "cfrkit.agents.blueprint.duplicate_match",
                                   "cfrkit.poker.play_match(game, agents, deals, duplicate=True)")
play_hand = deprecated_alias(_play_hand, "cfrkit.agents.blueprint.play_hand", "cfrkit.poker.play_hand")
