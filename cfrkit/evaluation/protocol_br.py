"""Exact best response, expected values, NashConv and exploitability on the game protocol.

These functions walk the game tree through the :mod:`cfrkit.games` protocol (no compilation), so
they work for any game that fits in memory: n players, chance nodes, and simultaneous-move games
(through :func:`cfrkit.games.sequential.as_sequential`, whose information states are those of the
original game).  They are the reference implementation; the compiled-tree evaluator is the fast one.

Algorithm (best response of player ``p`` to the other players' fixed policies):

1. The tree is expanded once into flat lists (per node: kind, player, information-set id,
   children, chance probabilities, returns) and every history is grouped under its information
   set.  The policy is queried once per information set (a policy must not depend on anything
   else).
2. The reach probability of every history through chance and the players other than ``p`` is
   computed top-down.
3. Values are computed bottom-up with memoisation; at an information set ``I`` of player ``p`` the
   best-response action is ``argmax_a sum_{h in I} reach_{-p}(h) * v(h.a)`` (counterfactual value),
   ties going to the lowest action id.  With perfect recall this is an exact best response.

All values are in game units (chips for poker), in the order of the players.
"""
from __future__ import annotations

import sys
from collections import OrderedDict
from typing import Dict, List, Optional, Tuple

import numpy as np

from cfrkit.games.base import CHANCE, TERMINAL, Game, GameError
from cfrkit.games.registry import load
from cfrkit.games.sequential import as_sequential
from cfrkit.policy import Policy, TabularPolicy, player_key, shared_strings

_KIND_TERMINAL, _KIND_CHANCE, _KIND_DECISION = 0, 1, 2


class GameTree:
    """The full game tree of a (sequential) game in flat Python lists, histories grouped by infoset.

    Node 0 is the root; ``children[n]`` lists child node ids aligned with ``actions[n]`` (chance
    outcomes at chance nodes, whose probabilities are in ``chance_probs[n]``).  ``infoset[n]`` is
    the information-set id of the acting player at decision nodes (-1 elsewhere); information set
    ``i`` belongs to ``infoset_player[i]``, has key ``infoset_keys[i]``, the legal actions
    ``infoset_actions[i]`` and the member histories ``infoset_nodes[i]``.
    """

    def __init__(self, game: "str | Game", max_nodes: int = 20_000_000):
        self.game = as_sequential(load(game))
        self.num_players = self.game.num_players
        self.kind: List[int] = []
        self.player: List[int] = []
        self.infoset: List[int] = []
        self.actions: List[Tuple[int, ...]] = []
        self.children: List[List[int]] = []
        self.chance_probs: List[Tuple[float, ...]] = []
        self.returns: List[Optional[Tuple[float, ...]]] = []
        self.representative = []  # one state per information set (to query policies)
        self.infoset_player: List[int] = []
        self.infoset_keys: List[str] = []
        self.infoset_actions: List[Tuple[int, ...]] = []
        self.infoset_nodes: List[List[int]] = []
        index: Dict[Tuple[int, str], int] = {}

        stack = [(self.game.new_initial_state(), -1, 0)]
        while stack:
            state, parent, slot = stack.pop()
            node = len(self.kind)
            if node >= max_nodes:
                raise GameError(f"{self.game.game_string()}: more than {max_nodes} nodes; too big for an exact "
                                f"protocol tree walk (use the compiled-tree evaluator or a smaller game)")
            if parent >= 0:
                self.children[parent][slot] = node
            player = state.current_player()
            self.player.append(player)
            if player == TERMINAL:
                self.kind.append(_KIND_TERMINAL)
                self.infoset.append(-1)
                self.actions.append(())
                self.children.append([])
                self.chance_probs.append(())
                self.returns.append(tuple(float(r) for r in state.returns()))
                continue
            if player == CHANCE:
                outcomes = state.chance_outcomes()
                actions = tuple(a for a, _ in outcomes)
                self.kind.append(_KIND_CHANCE)
                self.infoset.append(-1)
                self.chance_probs.append(tuple(float(p) for _, p in outcomes))
            else:
                actions = tuple(state.legal_actions())
                key = state.information_state_string(player)
                info = index.get((player, key))
                if info is None:
                    info = index[(player, key)] = len(self.infoset_keys)
                    self.infoset_player.append(player)
                    self.infoset_keys.append(key)
                    self.infoset_actions.append(actions)
                    self.infoset_nodes.append([])
                    self.representative.append(state.clone())
                elif self.infoset_actions[info] != actions:
                    raise GameError(f"{self.game.game_string()}: information state {key!r} of player {player} "
                                    f"has legal actions {self.infoset_actions[info]} and {actions}")
                self.infoset_nodes[info].append(node)
                self.kind.append(_KIND_DECISION)
                self.infoset.append(info)
                self.chance_probs.append(())
            self.actions.append(actions)
            self.children.append([-1] * len(actions))
            self.returns.append(None)
            for slot_index in range(len(actions) - 1, -1, -1):
                child = state.clone()
                child.apply_action(actions[slot_index])
                stack.append((child, node, slot_index))

    @property
    def num_nodes(self) -> int:
        return len(self.kind)

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_keys)

    def policy_table(self, policy: Policy, players=None) -> List[Optional[Tuple[float, ...]]]:
        """Per information set, the policy's probabilities aligned with its legal actions.

        Only infosets of ``players`` (default all) are queried; the others get ``None``.
        """
        wanted = set(range(self.num_players)) if players is None else set(players)
        table: List[Optional[Tuple[float, ...]]] = []
        for i, (player, actions) in enumerate(zip(self.infoset_player, self.infoset_actions)):
            if player not in wanted:
                table.append(None)
                continue
            probs = policy.action_probabilities(self.representative[i], player)
            unknown = set(probs) - set(actions)
            if any(probs[a] > 0 for a in unknown):
                raise GameError(f"policy gives probability to illegal action(s) {sorted(unknown)} at information "
                                f"state {self.infoset_keys[i]!r} (legal: {list(actions)})")
            row = tuple(float(probs.get(a, 0.0)) for a in actions)
            total = sum(row)
            if not (all(p >= -1e-12 for p in row) and abs(total - 1.0) <= 1e-6):  # NaN fails too
                raise GameError(f"policy at information state {self.infoset_keys[i]!r} is not a distribution: "
                                f"{dict(zip(actions, row))}")
            table.append(row)
        return table

    # ----------------------------------------------------------------- evaluations
    def expected_values(self, table) -> np.ndarray:
        """Expected return of every player when everyone follows ``table`` (bottom-up)."""
        n = self.num_players
        values = [None] * self.num_nodes
        for node in range(self.num_nodes - 1, -1, -1):  # children have larger ids than parents
            kind = self.kind[node]
            if kind == _KIND_TERMINAL:
                values[node] = np.asarray(self.returns[node], dtype=np.float64)
                continue
            probs = self.chance_probs[node] if kind == _KIND_CHANCE else table[self.infoset[node]]
            acc = np.zeros(n)
            for p, child in zip(probs, self.children[node]):
                if p != 0.0:
                    acc += p * values[child]
            values[node] = acc
        return values[0]

    def best_response(self, table, player: int) -> Tuple[float, Dict[int, int]]:
        """Best-response value of ``player`` against ``table`` and its action per information set.

        Returns ``(value, {infoset id: action})``; the value is in game units.
        """
        if not 0 <= player < self.num_players:
            raise GameError(f"player must be in [0, {self.num_players}), got {player}")
        kind, children, infoset = self.kind, self.children, self.infoset
        # reach of every node through chance and the other players
        reach = [0.0] * self.num_nodes
        reach[0] = 1.0
        for node in range(self.num_nodes):
            k = kind[node]
            if k == _KIND_TERMINAL:
                continue
            r = reach[node]
            kids = children[node]
            if k == _KIND_CHANCE:
                for p, child in zip(self.chance_probs[node], kids):
                    reach[child] = r * p
            elif self.player[node] == player:
                for child in kids:
                    reach[child] = r
            else:
                for p, child in zip(table[infoset[node]], kids):
                    reach[child] = r * p

        value: Dict[int, float] = {}
        choice: Dict[int, int] = {}  # infoset id -> index of the best action
        returns = self.returns

        def node_value(node: int) -> float:
            v = value.get(node)
            if v is not None:
                return v
            k = kind[node]
            if k == _KIND_TERMINAL:
                v = returns[node][player]
            elif k == _KIND_CHANCE:
                v = 0.0
                for p, child in zip(self.chance_probs[node], children[node]):
                    v += p * node_value(child)
            elif self.player[node] == player:
                v = node_value(children[node][best_index(infoset[node])])
            else:
                v = 0.0
                for p, child in zip(table[infoset[node]], children[node]):
                    if p != 0.0:
                        v += p * node_value(child)
            value[node] = v
            return v

        def best_index(info: int) -> int:
            c = choice.get(info)
            if c is not None:
                return c
            members = self.infoset_nodes[info]
            q = [0.0] * len(self.infoset_actions[info])
            for h in members:
                r = reach[h]
                if r == 0.0:
                    continue
                for j, child in enumerate(children[h]):
                    q[j] += r * node_value(child)
            best = 0
            for j in range(1, len(q)):
                if q[j] > q[best]:
                    best = j
            choice[info] = best
            return best

        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 10_000))
        try:
            root_value = node_value(0)
            # fix an action at every infoset of the player, reachable or not, so the BR policy is complete
            for info, owner in enumerate(self.infoset_player):
                if owner == player:
                    best_index(info)
        finally:
            sys.setrecursionlimit(limit)
        return root_value, {info: self.infoset_actions[info][j] for info, j in choice.items()}


# A few recently used trees, keyed by game string, so repeated evaluations (a solver's callback
# every K iterations) do not rebuild them.
_TREE_CACHE: "OrderedDict[str, GameTree]" = OrderedDict()
_TREE_CACHE_SIZE = 4


def game_tree(game: "str | Game") -> GameTree:
    """The (cached) :class:`GameTree` of ``game``."""
    game = as_sequential(load(game))
    key = game.game_string()
    tree = _TREE_CACHE.get(key)
    if tree is None:
        tree = GameTree(game)
        _TREE_CACHE[key] = tree
        while len(_TREE_CACHE) > _TREE_CACHE_SIZE:
            _TREE_CACHE.popitem(last=False)
    else:
        _TREE_CACHE.move_to_end(key)
    return tree


def best_response(game: "str | Game", policy: Policy, player: int) -> Tuple[float, TabularPolicy]:
    """Exact best response of ``player`` to the other players following ``policy``.

    Returns ``(value, br_policy)``: the best-response value for ``player`` (game units, e.g. chips)
    and a deterministic :class:`TabularPolicy` holding the best-response action at every
    information set of ``player`` (keys are the game's information-state strings).
    """
    tree = game_tree(game)
    table = tree.policy_table(policy, players=[p for p in range(tree.num_players) if p != player])
    value, actions = tree.best_response(table, player)
    shared = shared_strings(zip(tree.infoset_player, tree.infoset_keys))
    keys = [player_key(p, k) if k in shared else k for p, k in zip(tree.infoset_player, tree.infoset_keys)]
    br = TabularPolicy(tree.game, {keys[i]: {a: 1.0} for i, a in actions.items()},
                       metadata={"algorithm": "best_response", "player": player, "value": value})
    return value, br


def expected_values(game: "str | Game", policy: Policy) -> np.ndarray:
    """Expected return of every player (game units) when all players follow ``policy``."""
    tree = game_tree(game)
    return tree.expected_values(tree.policy_table(policy))


def nash_conv(game: "str | Game", policy: Policy) -> float:
    """Sum over players of (best-response value - on-policy value), in game units; 0 at a Nash equilibrium."""
    tree = game_tree(game)
    table = tree.policy_table(policy)
    on_policy = tree.expected_values(table)
    total = 0.0
    for player in range(tree.num_players):
        br_value, _ = tree.best_response(table, player)
        total += br_value - on_policy[player]
    return float(total)


def exploitability(game: "str | Game", policy: Policy) -> float:
    """NashConv / number of players, in game units (chips for poker; x1000/big blind for mbb/g).

    Raises :class:`GameError` for games that are not constant-sum (exploitability is not defined
    there, as in OpenSpiel; :func:`nash_conv` is).
    """
    tree = game_tree(game)
    sums = [sum(r) for r in tree.returns if r is not None]
    scale = max([1.0] + [abs(x) for r in tree.returns if r is not None for x in r])
    if sums and max(sums) - min(sums) > 1e-9 * scale:
        raise GameError(f"{tree.game.game_string()} is not constant-sum (returns sum to {min(sums):.6g} .. "
                        f"{max(sums):.6g}): exploitability is defined for constant-sum games only; use nash_conv()")
    return nash_conv(tree.game, policy) / tree.num_players


def exploitability_mbb(game: "str | Game", policy: Policy) -> float:
    """Exploitability in milli-big-blinds per game (poker): ``1000 * exploitability / big_blind``.

    Raises :class:`GameError` for games that declare no big blind (non-poker games).
    """
    tree = game_tree(game)
    if not tree.game.big_blind:
        raise GameError(f"{tree.game.game_string()} declares no big blind; use exploitability() in game units")
    return 1000.0 * exploitability(tree.game, policy) / tree.game.big_blind
