"""Exact solving of small common-payoff games (e.g. the tiniest Hanabi variants) by full traversal.

For a cooperative game every player's return is the same, so a joint policy has one value.
:func:`person_by_person_optimum` enumerates the whole tree once, then improves a deterministic joint
policy one information state at a time (each step is an exact best response of that information
state's player with everything else fixed) until no single change helps: the result is a
person-by-person optimal joint policy (a local optimum of the team problem; the global one is
NEXP-hard in general).  :func:`policy_value` and :func:`perfect_information_value` give the exact
value of a policy and the value a team that sees every card could reach (an upper bound).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple

import numpy as np

from cfrkit.games.base import Game
from cfrkit.games.registry import load


@dataclass
class _Tree:
    infosets: List[str]
    actions: List[List[int]]                # legal actions per information state
    terminal_prob: np.ndarray               # chance probability of each terminal's path
    terminal_value: np.ndarray              # common return of each terminal
    path: List[List[Tuple[int, int]]]       # (information state, action index) decisions on each path


def _enumerate(game: Game, max_nodes: int) -> _Tree:
    index: Dict[str, int] = {}
    actions: List[List[int]] = []
    probs, values, paths = [], [], []
    stack = [(game.new_initial_state(), 1.0, [])]
    nodes = 0
    while stack:
        state, p, path = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            raise ValueError(f"{game} has more than {max_nodes} nodes; too large for exact solving")
        if state.is_terminal():
            probs.append(p)
            values.append(state.returns()[0])
            paths.append(path)
            continue
        if state.is_chance_node():
            for a, q in state.chance_outcomes():
                stack.append((state.child(a), p * q, path))
            continue
        key = f"{state.current_player()}|{state.information_state_string()}"
        legal = state.legal_actions()
        if key not in index:
            index[key] = len(actions)
            actions.append(legal)
        i = index[key]
        for k, a in enumerate(legal):
            stack.append((state.child(a), p, path + [(i, k)]))
    return _Tree(list(index), actions, np.asarray(probs), np.asarray(values, dtype=np.float64), paths)


def _check_common_payoff(game: Game) -> None:
    if game.num_players > 1 and getattr(game, "constant_sum", False) and game.utility_sum == 0:
        raise ValueError(f"{game} is zero-sum, not a common-payoff game")


def policy_value(tree: _Tree, choice: np.ndarray) -> float:
    """Exact value of the deterministic joint policy ``choice[infoset] = action index``."""
    live = np.array([all(choice[i] == k for i, k in path) for path in tree.path])
    return float(np.sum(tree.terminal_prob * tree.terminal_value * live))


@dataclass
class CooperativeSolution:
    value: float
    policy: Dict[str, int]          # information state key -> action
    information_states: int
    terminals: int
    sweeps: int
    uniform_random_value: float


def person_by_person_optimum(game: "str | Game", max_sweeps: int = 50, seed: int = 0,
                             max_nodes: int = 2_000_000) -> CooperativeSolution:
    """Improve a deterministic joint policy one information state at a time until none helps."""
    game = load(game)
    _check_common_payoff(game)
    tree = _enumerate(game, max_nodes)
    n_inf = len(tree.infosets)
    rng = np.random.default_rng(seed)
    choice = np.array([rng.integers(len(a)) for a in tree.actions], dtype=np.int64)
    # terminals through each information state, and for each terminal the decisions on its path
    through: List[List[int]] = [[] for _ in range(n_inf)]
    for t, path in enumerate(tree.path):
        for i, _ in path:
            through[i].append(t)
    weight = tree.terminal_prob * tree.terminal_value
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):
        improved = False
        for i in range(n_inf):
            ts = through[i]
            if not ts:
                continue
            best_k, best_v = choice[i], None
            for k in range(len(tree.actions[i])):
                v = 0.0
                for t in ts:
                    if all((choice[j] if j != i else k) == kk for j, kk in tree.path[t]):
                        v += weight[t]
                if best_v is None or v > best_v + 1e-12:
                    best_k, best_v = k, v
            if best_k != choice[i]:
                choice[i] = best_k
                improved = True
        if not improved:
            break
    value = policy_value(tree, choice)
    uniform = float(sum(w * np.prod([1.0 / len(tree.actions[i]) for i, _ in path])
                        for w, path in zip(weight, tree.path)))
    policy = {tree.infosets[i]: tree.actions[i][choice[i]] for i in range(n_inf)}
    return CooperativeSolution(value, policy, n_inf, len(tree.path), sweeps, uniform)


def perfect_information_value(game: "str | Game", max_nodes: int = 2_000_000) -> float:
    """Value of the best policy of a team that sees every dealt card (not the deck): an upper bound."""
    game = load(game)
    count = [0]

    def value(state) -> float:
        count[0] += 1
        if count[0] > max_nodes:
            raise ValueError(f"{game} has more than {max_nodes} nodes; too large for exact solving")
        if state.is_terminal():
            return state.returns()[0]
        if state.is_chance_node():
            return sum(q * value(state.child(a)) for a, q in state.chance_outcomes())
        return max(value(state.child(a)) for a in state.legal_actions())

    return float(value(game.new_initial_state()))
