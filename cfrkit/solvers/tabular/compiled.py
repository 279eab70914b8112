"""Compile a game of the protocol into flat arrays that the Cython CFR and best-response kernels run over.

Layout (``N`` nodes, ``I`` information sets, ``A`` information-set actions in total):

* Nodes are numbered so that every node's children are contiguous and numbered after it
  (``child_start[i] .. child_start[i] + num_children[i]``); a forward pass in id order therefore
  sees parents before children and a backward pass in reverse order sees children first.
* ``node_player[i]``: acting player, :data:`~cfrkit.games.base.CHANCE` or :data:`~cfrkit.games.base.TERMINAL`.
* ``node_infoset[i]``: information-set index of a decision node, else -1.
* ``node_chance_prob[i]``: probability of the chance outcome leading to node ``i`` (1 otherwise).
* ``node_action[i]``: action id leading to node ``i`` from its parent (-1 at the root);
  ``node_parent[i]``: the parent (-1 at the root).
* ``utilities[i, p]``: return of player ``p`` at terminal node ``i`` (0 elsewhere), game units.
* Per information set: ``infoset_player``, ``infoset_offset`` (``I + 1`` entries; the actions of
  set ``s`` occupy slots ``infoset_offset[s] .. infoset_offset[s+1]`` of every per-action array),
  ``slot_action`` (action id of each slot), ``infoset_keys`` (information-state strings) and the
  decision nodes of each set (``infoset_node_offset``/``infoset_nodes``, used by best response).

Compiled trees are cached on disk under ``$CFRKIT_CACHE`` (default ``~/.cache/cfrkit/trees``) and
in memory for the process, keyed by the game string, the compiler version and a fingerprint of the
game's code (:func:`tree_cache_key`); ``compile_game(game, cache=False)`` bypasses both.
"""
from __future__ import annotations

import hashlib
import os
import random
from dataclasses import dataclass
from typing import Dict, List, Optional

import numpy as np

from cfrkit.games.base import CHANCE, SIMULTANEOUS, TERMINAL, Game, GameError, State
from cfrkit.games.registry import load
from cfrkit.games.sequential import as_sequential
from cfrkit.policy import player_key, shared_strings

COMPILER_VERSION = 2  # 2: information sets keyed by (player, string)
#: how far a chance node's probabilities may sum from 1 (float rounding of fractions like 1/3)
CHANCE_SUM_TOLERANCE = 1e-6
#: root-to-leaf paths replayed through the game before a cached tree is used (memory / disk cache)
VERIFY_PATHS_MEMORY = 16
VERIFY_PATHS_DISK = 64
_ARRAYS = ("node_player", "node_infoset", "child_start", "num_children", "node_chance_prob", "node_action",
           "node_parent", "utilities", "infoset_player", "infoset_offset", "slot_action",
           "infoset_node_offset", "infoset_nodes")
# bytes per node and per information-set slot of the compiled arrays (used for the size estimate)
_BYTES_PER_NODE = 4 * 7 + 8
_BYTES_PER_SLOT = 4 + 8 * 4


class TreeTooLargeError(GameError):
    """The game tree would not fit in the memory budget."""


@dataclass
class CompiledGame:
    """A game tree as flat numpy arrays (see the module docstring for the layout)."""

    game_string: str
    num_players: int
    node_player: np.ndarray
    node_infoset: np.ndarray
    child_start: np.ndarray
    num_children: np.ndarray
    node_chance_prob: np.ndarray
    node_action: np.ndarray
    node_parent: np.ndarray
    utilities: np.ndarray
    infoset_player: np.ndarray
    infoset_offset: np.ndarray
    slot_action: np.ndarray
    infoset_node_offset: np.ndarray
    infoset_nodes: np.ndarray
    infoset_keys: List[str]

    @property
    def num_nodes(self) -> int:
        return len(self.node_player)

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_player)

    @property
    def num_slots(self) -> int:
        return int(self.infoset_offset[-1])

    def validate(self) -> "CompiledGame":
        """Check every array the kernels index (dtypes, shapes, ranges, tree structure); returns ``self``.

        The Cython kernels trust these arrays (no bounds checks), so a tree from a damaged cache file
        or built by hand is checked here once; a bad one raises :class:`GameError`, never a crash.
        """
        if getattr(self, "_validated", False):
            return self
        problem = _tree_problem(self)
        if problem:
            raise GameError(f"compiled tree of {self.game_string} is inconsistent: {problem}")
        object.__setattr__(self, "_validated", True)
        return self

    def infoset_index(self) -> Dict[str, int]:
        """Information-state key -> information-set index (built once, cached)."""
        index = getattr(self, "_key_index", None)
        if index is None:
            index = {k: i for i, k in enumerate(self.infoset_keys)}
            object.__setattr__(self, "_key_index", index)
        return index

    def history_of(self, node: int) -> List[int]:
        """Actions from the root to ``node`` (replayable with ``Game.state_from_history``)."""
        actions = []
        while self.node_parent[node] >= 0:
            actions.append(int(self.node_action[node]))
            node = int(self.node_parent[node])
        return actions[::-1]

    def game(self) -> Game:
        """The (turn-based) game the tree was compiled from."""
        source = getattr(self, "_source_game", None)
        return source if source is not None else as_sequential(load(self.game_string))

    def describe(self) -> str:
        kinds = {"decision": int(np.sum(self.node_player >= 0)), "chance": int(np.sum(self.node_player == CHANCE)),
                 "terminal": int(np.sum(self.node_player == TERMINAL))}
        return (f"{self.game_string}: {self.num_nodes} nodes ({kinds['decision']} decision, {kinds['chance']} chance, "
                f"{kinds['terminal']} terminal), {self.num_infosets} information sets, {self.num_slots} actions")


def _tree_problem(t: CompiledGame) -> Optional[str]:
    """What is wrong with ``t``'s arrays (None when the kernels can run over them safely)."""
    P = t.num_players
    if not isinstance(P, (int, np.integer)) or P < 1:
        return f"num_players {P!r}"
    for name in _ARRAYS:
        a = getattr(t, name)
        want = np.float64 if name in ("node_chance_prob", "utilities") else np.int32
        if not isinstance(a, np.ndarray) or a.dtype != want or not a.flags.c_contiguous:
            return f"{name} must be a C-contiguous {np.dtype(want).name} array"
        if a.ndim != (2 if name == "utilities" else 1):
            return f"{name} has {a.ndim} dimensions"
    n = len(t.node_player)
    if n == 0:
        return "no nodes"
    for name in ("node_infoset", "child_start", "num_children", "node_chance_prob", "node_action", "node_parent"):
        if len(getattr(t, name)) != n:
            return f"{name} has {len(getattr(t, name))} entries for {n} nodes"
    if t.utilities.shape != (n, P):
        return f"utilities has shape {t.utilities.shape}, expected ({n}, {P})"
    I = len(t.infoset_player)
    if len(t.infoset_offset) != I + 1 or len(t.infoset_node_offset) != I + 1 or len(t.infoset_keys) != I:
        return "information-set arrays of different lengths"
    player, nc, cs = t.node_player, t.num_children, t.child_start
    decision = player >= 0
    terminal = player == TERMINAL
    chance = player == CHANCE
    if np.any(player >= P) or not np.all(decision | terminal | chance):
        return "node_player outside [0, num_players) and {CHANCE, TERMINAL}"
    if np.any(nc[terminal] != 0) or np.any(nc[~terminal] < 1):
        return "terminal nodes with children or inner nodes without"
    inner = np.flatnonzero(~terminal)
    if np.any(cs[inner] <= inner) or np.any(cs[inner].astype(np.int64) + nc[inner] > n):
        return "children out of range (children must be numbered after their parent)"
    child_count = int(nc.astype(np.int64).sum())
    if child_count != n - 1:
        return f"{child_count} child links for {n} nodes (not a tree)"
    parents = np.repeat(inner, nc[inner])
    children = (np.repeat(cs[inner].astype(np.int64), nc[inner])
                + np.arange(child_count) - np.repeat(np.cumsum(nc[inner]) - nc[inner], nc[inner]))
    if t.node_parent[0] != -1 or np.any(t.node_parent[children] != parents) or len(np.unique(children)) != n - 1:
        return "node_parent does not match the children"
    if not (np.isfinite(t.node_chance_prob).all() and np.isfinite(t.utilities).all()):
        return "NaN or infinite chance probabilities or utilities"
    if np.any(t.node_chance_prob < 0) or np.any(t.node_chance_prob > 1):
        return "chance probabilities outside [0, 1]"
    if np.any(chance):  # the outcomes of a chance node (contiguous children) form a distribution
        cum = np.concatenate(([0.0], np.cumsum(t.node_chance_prob)))
        starts = cs[chance].astype(np.int64)
        sums = cum[starts + nc[chance]] - cum[starts]
        worst = int(np.argmax(np.abs(sums - 1.0)))
        if abs(sums[worst] - 1.0) > CHANCE_SUM_TOLERANCE:
            return (f"the chance probabilities of node {int(np.flatnonzero(chance)[worst])} sum to "
                    f"{sums[worst]:.9g}, not 1")
    off = t.infoset_offset
    if off[0] != 0 or np.any(np.diff(off) < 1) or off[-1] != len(t.slot_action):
        return "infoset_offset is not increasing from 0 to the number of slots"
    if np.any(t.infoset_player < 0) or np.any(t.infoset_player >= P):
        return "infoset_player out of range"
    ni = t.node_infoset
    if np.any(ni[~decision] != -1) or np.any(ni[decision] < 0) or np.any(ni[decision] >= I):
        return "node_infoset out of range"
    dn = np.flatnonzero(decision)
    if np.any(t.infoset_player[ni[dn]] != player[dn]):
        return "an information set holds nodes of two players"
    if np.any(np.diff(off)[ni[dn]] != nc[dn]):
        return "a node's number of children differs from its information set's number of actions"
    noff = t.infoset_node_offset
    if noff[0] != 0 or np.any(np.diff(noff) < 1) or noff[-1] != len(t.infoset_nodes) or len(t.infoset_nodes) != len(dn):
        return "infoset_node_offset does not partition the decision nodes"
    members = t.infoset_nodes
    if np.any(members < 0) or np.any(members >= n) or not np.all(decision[members]):
        return "infoset_nodes out of range"
    if np.any(ni[members] != np.repeat(np.arange(I), np.diff(noff))):
        return "infoset_nodes disagree with node_infoset"
    return None


def estimate_tree_size(game: "str | Game", probes: int = 300, seed: int = 0) -> float:
    """Knuth's unbiased estimate of the number of nodes: mean over random root-to-leaf paths of the
    sum of products of branching factors.  Cheap (``probes`` playthroughs) and exact for uniform trees."""
    game = as_sequential(load(game))
    rng = random.Random(seed)
    total = 0.0
    for _ in range(probes):
        state = game.new_initial_state()
        weight, count = 1.0, 1.0
        while not state.is_terminal():
            actions = state.legal_actions()
            weight *= len(actions)
            count += weight
            state.apply_action(rng.choice(actions))
        total += count
    return total / probes


def _available_memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 8 << 30


def compile_game(game: "str | Game", max_nodes: Optional[int] = None, cache: bool = True,
                 cache_dir: Optional[str] = None) -> CompiledGame:
    """Compile ``game`` (a game string or Game) into a :class:`CompiledGame`.

    Simultaneous-move games are compiled through :func:`~cfrkit.games.sequential.as_sequential`.
    Before walking the tree the node count is estimated; a tree whose estimate exceeds ``max_nodes``
    (default: what fits in a quarter of the free memory) raises :class:`TreeTooLargeError`.

    Caching (``cache=True``): trees are kept in memory and on disk under a key made of the game
    string, the compiler version and a fingerprint of the code of the game's classes (see
    :func:`tree_cache_key`), so a game whose rules change under the same name is compiled anew.  A
    game object that is not what its game string loads (built by hand with other data, an
    unregistered class) is not cached at all.  ``cache=False`` always compiles and stores nothing.
    """
    game = as_sequential(load(game))
    key = game.game_string()
    cache_key = tree_cache_key(game) if cache else None
    if cache_key is None:
        cache = False
    # a cached tree is used only after a sample of its paths replays through the game itself
    # (actions, chance probabilities, returns): the key cannot see data the rules read at run time
    # (a module-level table changed between two runs), the replay does
    if cache and cache_key in _MEMORY_CACHE:
        tree = _MEMORY_CACHE[cache_key]
        if tree_mismatch(tree, game, VERIFY_PATHS_MEMORY) is None:
            return tree
        del _MEMORY_CACHE[cache_key]
    path = _cache_path(cache_key, cache_dir) if cache else None
    if path is not None and os.path.exists(path):
        try:
            tree = _load_tree(path, key)
            if tree_mismatch(tree, game, VERIFY_PATHS_DISK) is None:
                _MEMORY_CACHE[cache_key] = tree
                return tree
        except (GameError, OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
            pass  # a stale or damaged cache entry is rebuilt
    if max_nodes is None:
        max_nodes = max(10_000, _available_memory_bytes() // 4 // (_BYTES_PER_NODE + 8 * game.num_players + 400))
    estimate = estimate_tree_size(game)
    if estimate > max_nodes:
        raise TreeTooLargeError(
            f"{key} has about {estimate:.3g} nodes (estimate), more than the budget of {max_nodes:,}; "
            f"use a sampling solver (es-mccfr, os-mccfr) or raise max_nodes")
    tree = _build(game, max_nodes).validate()
    _check_utility_bounds(tree, game)
    object.__setattr__(tree, "_source_game", game)
    if cache:
        _MEMORY_CACHE[cache_key] = tree
        if path is not None:
            try:
                _save_tree(tree, path)
            except OSError:
                pass  # an unwritable cache only costs the rebuild next time
    return tree


def _check_utility_bounds(tree: CompiledGame, game: Game) -> None:
    """Refuse a tree whose returns leave the game's declared ``[min_utility, max_utility]``
    (the evaluators' bounds and the solvers' regret scales rely on them)."""
    try:
        lo, hi = float(game.min_utility()), float(game.max_utility())
    except (TypeError, ValueError, NotImplementedError):
        return
    terminal = tree.node_player == TERMINAL
    if not np.any(terminal):
        return
    values = tree.utilities[terminal]
    slack = 1e-9 * max(1.0, abs(lo), abs(hi))
    if values.min() < lo - slack or values.max() > hi + slack:
        node = int(np.flatnonzero(terminal)[int(np.argmax((values < lo - slack).any(1) | (values > hi + slack).any(1)))])
        raise GameError(f"{tree.game_string}: returns {tree.utilities[node].tolist()} after history "
                        f"{tree.history_of(node)} lie outside the declared utility bounds [{lo:g}, {hi:g}] "
                        f"(min_utility / max_utility)")


def tree_mismatch(tree: CompiledGame, game: Game, paths: int = 16, seed: int = 0) -> Optional[str]:
    """Where ``tree`` differs from ``game``, or None: ``paths`` root-to-leaf paths of the tree (the
    first always takes the first child, the others random ones) are replayed through the game's
    protocol, comparing at every node the player to act, the actions (legal actions, chance
    outcomes with their probabilities) and at the leaf the returns."""
    rng = random.Random(seed)
    for k in range(paths):
        state, node = game.new_initial_state(), 0
        while True:
            player = state.current_player()
            if int(tree.node_player[node]) != player:
                return f"node {node}: player {int(tree.node_player[node])} in the tree, {player} in the game"
            if player == TERMINAL:
                if not np.allclose(tree.utilities[node], state.returns(), rtol=1e-9, atol=1e-12):
                    return f"node {node}: returns {tree.utilities[node].tolist()} in the tree, {state.returns()} in the game"
                break
            start, count = int(tree.child_start[node]), int(tree.num_children[node])
            actions = tree.node_action[start:start + count].tolist()
            if player == CHANCE:
                outcomes = state.chance_outcomes()
                if [a for a, _ in outcomes] != actions or not np.allclose(
                        [p for _, p in outcomes], tree.node_chance_prob[start:start + count], rtol=1e-9, atol=1e-12):
                    return f"node {node}: other chance outcomes in the game"
            elif list(state.legal_actions()) != actions:
                return f"node {node}: legal actions {actions[:8]} in the tree, {list(state.legal_actions())[:8]} in the game"
            pick = 0 if k == 0 else rng.randrange(count)
            node = start + pick
            state.apply_action(actions[pick])
    return None


_MEMORY_CACHE: Dict[str, CompiledGame] = {}
_FILE_DIGESTS: Dict[tuple, str] = {}
_CODE_DIGESTS: Dict[tuple, Optional[str]] = {}


def tree_cache_key(game: Game) -> Optional[str]:
    """The cache key of ``game``'s compiled tree, or None when it must not be cached.

    The key hashes the compiler version, the game string, and the code that defines the tree: the
    bytecode and constants of every method of the game's and the root state's classes (their MROs,
    and those of wrapped games) and the source files of their modules.  None when the game object is
    not what :func:`~cfrkit.games.load` builds from its game string (other instance data, a class
    that is not registered under that name), or when a class's module has no source file.
    """
    cached = game.__dict__.get("_tree_cache_key", False)
    if cached is not False:
        return cached
    key = None
    try:
        rebuilt = as_sequential(load(game.game_string()))
        if _instance_digest(rebuilt) == _instance_digest(game):
            code = _code_digest(game)
            if code is not None:
                key = hashlib.sha256(f"{COMPILER_VERSION}\0{game.game_string()}\0{code}".encode()).hexdigest()
    except (GameError, ValueError, TypeError, RecursionError):
        key = None
    game.__dict__["_tree_cache_key"] = key
    return key


def _games_of(game: Game) -> List[Game]:
    """``game`` and the games it wraps (adapters keep theirs in ``inner``)."""
    out = [game]
    while isinstance(getattr(out[-1], "inner", None), Game) and len(out) < 8:
        out.append(out[-1].inner)
    return out


def _code_digest(game: Game) -> Optional[str]:
    classes = []
    for g in _games_of(game):
        classes += [c for c in type(g).__mro__ if c is not object]
        classes += [c for c in type(g.new_initial_state()).__mro__ if c is not object]
    classes = tuple(classes)
    # a class object's code does not change while it lives (a redefinition makes a new class)
    if classes not in _CODE_DIGESTS:
        _CODE_DIGESTS[classes] = _classes_digest(classes)
    return _CODE_DIGESTS[classes]


def _classes_digest(classes) -> Optional[str]:
    import sys

    h = hashlib.sha256()
    for cls in classes:
        h.update(f"{cls.__module__}.{cls.__qualname__}".encode())
        for name in sorted(cls.__dict__):
            value = cls.__dict__[name]
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                value = value.fget
            code = getattr(value, "__code__", None)
            if code is not None:
                h.update(name.encode() + _code_bytes(code))
                # closures and defaults carry rules too (classes made by a factory function)
                cells = [c.cell_contents for c in (value.__closure__ or ()) if _cell_is_data(c)]
                h.update(_instance_digest([cells, value.__defaults__, value.__kwdefaults__]).encode())
            elif isinstance(value, (int, float, str, bool, tuple, type(None))):
                h.update(f"{name}={value!r}".encode())
        module = sys.modules.get(cls.__module__)
        source = getattr(module, "__file__", None)
        if cls.__module__ == "builtins" or cls.__module__.startswith("abc"):
            continue
        if not source or not os.path.isfile(source):
            return None  # code without a file (interactive, exec): nothing stable to key a disk cache on
        h.update(_file_digest(source).encode())
        if cls.__module__.startswith("cfrkit."):
            # cfrkit's games use helpers across their subpackage (hold'em definitions, card tables)
            package_dir = os.path.dirname(source)
            for name in sorted(os.listdir(package_dir)):
                if name.endswith(".py"):
                    h.update(_file_digest(os.path.join(package_dir, name)).encode())
    return h.hexdigest()


def _cell_is_data(cell) -> bool:
    try:
        value = cell.cell_contents
    except ValueError:  # an empty cell
        return False
    return not isinstance(value, type)  # the class itself (super()'s __class__ cell)


def _code_bytes(code) -> bytes:
    parts = [code.co_code, repr(code.co_names).encode(), repr(code.co_varnames).encode()]
    for const in code.co_consts:
        parts.append(_code_bytes(const) if hasattr(const, "co_code") else repr(const).encode())
    return b"\0".join(parts)


def _file_digest(path: str) -> str:
    stat = os.stat(path)
    key = (path, stat.st_mtime_ns, stat.st_size)
    digest = _FILE_DIGESTS.get(key)
    if digest is None:
        with open(path, "rb") as f:
            digest = _FILE_DIGESTS[key] = hashlib.sha256(f.read()).hexdigest()
    return digest


def _instance_digest(obj, depth: int = 0, seen=None) -> str:
    """A digest of an object's data (numbers, strings, arrays, containers, attributes), to tell a game
    built by hand with other data from the one its game string loads."""
    seen = set() if seen is None else seen
    if depth > 12 or id(obj) in seen:
        return "..."
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return repr(obj)
    if isinstance(obj, np.ndarray):
        return f"nd{obj.dtype}{obj.shape}:" + hashlib.sha256(np.ascontiguousarray(obj).tobytes()).hexdigest()
    if isinstance(obj, np.generic):
        return repr(obj.item())
    seen = seen | {id(obj)}
    if isinstance(obj, (list, tuple)):
        return "[" + ",".join(_instance_digest(x, depth + 1, seen) for x in obj) + "]"
    if isinstance(obj, (set, frozenset)):
        return "{" + ",".join(sorted(_instance_digest(x, depth + 1, seen) for x in obj)) + "}"
    if isinstance(obj, dict):
        items = sorted((repr(k), _instance_digest(v, depth + 1, seen)) for k, v in obj.items()
                       if k != "_tree_cache_key")
        return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    if callable(obj) and not hasattr(obj, "__dict__"):
        return getattr(obj, "__qualname__", type(obj).__qualname__)
    attrs = getattr(obj, "__dict__", None)
    if attrs is not None:
        return type(obj).__qualname__ + _instance_digest(attrs, depth + 1, seen)
    text = str(obj)
    return type(obj).__qualname__ + ("<opaque>" if " at 0x" in text else text)


def _build(game: Game, max_nodes: int) -> CompiledGame:
    n_players = game.num_players
    player: List[int] = [0]
    chance_prob: List[float] = [1.0]
    action_in: List[int] = [-1]
    parent: List[int] = [-1]
    child_start: List[int] = [0]
    num_children: List[int] = [0]
    infoset: List[int] = [-1]
    utilities: Dict[int, List[float]] = {}
    key_index: Dict[str, int] = {}
    infoset_keys: List[str] = []
    infoset_player: List[int] = []
    infoset_actions: List[List[int]] = []
    infoset_nodes: List[List[int]] = []

    stack = [(0, game.new_initial_state())]
    while stack:
        node, state = stack.pop()
        current = state.current_player()
        if current == SIMULTANEOUS:  # pragma: no cover - as_sequential removes these
            raise GameError("simultaneous node in a sequential game")
        player[node] = current
        if current == TERMINAL:
            utilities[node] = list(state.returns())
            continue
        if current == CHANCE:
            outcomes = state.chance_outcomes()
            actions = [a for a, _ in outcomes]
            probs = [p for _, p in outcomes]
        else:
            actions = state.legal_actions()  # may be a lazy sequence (hold'em raise sizes): check size first
            if len(player) + len(actions) > max_nodes:
                raise TreeTooLargeError(f"{game.game_string()} has more than {max_nodes:,} nodes; "
                                        f"use a sampling solver (es-mccfr, os-mccfr) or raise max_nodes")
            probs = [1.0] * len(actions)
            key = state.information_state_string(current)
            index = key_index.get((current, key))
            if index is None:
                index = key_index[(current, key)] = len(infoset_keys)
                infoset_keys.append(key)
                infoset_player.append(current)
                infoset_actions.append(list(actions))
                infoset_nodes.append([])
            elif infoset_actions[index] != list(actions):
                hint = ""
                if getattr(game, "simultaneous_inner", False) or type(game).__name__ == "SequentialAdapter":
                    hint = ("; this simultaneous-move game is played in turns by cfrkit's turn_based(game=...) "
                            "adapter, whose information states are the original game's: for an OpenSpiel game "
                            "load openspiel(name=turn_based_simultaneous_game(game=...)) instead")
                raise GameError(f"information set {key!r} of player {current} has legal actions "
                                f"{infoset_actions[index]} and {list(actions)} in different states (the game "
                                f"lacks perfect recall or its information-state strings are too coarse){hint}")
            infoset[node] = index
            infoset_nodes[index].append(node)
        first = len(player)
        if first + len(actions) > max_nodes:
            raise TreeTooLargeError(f"{game.game_string()} has more than {max_nodes:,} nodes; "
                                    f"use a sampling solver (es-mccfr, os-mccfr) or raise max_nodes")
        child_start[node] = first
        num_children[node] = len(actions)
        for a, p in zip(actions, probs):
            player.append(0)
            chance_prob.append(p)
            action_in.append(a)
            parent.append(node)
            child_start.append(0)
            num_children.append(0)
            infoset.append(-1)
        # push in reverse so children are expanded in order (keeps ids of a subtree close together)
        for k in range(len(actions) - 1, -1, -1):
            stack.append((first + k, state.child(actions[k]) if k else _advance(state, actions[k])))

    # a string several players share becomes "[player p] string" (the policy key of that set)
    shared = shared_strings((infoset_player[i], k) for i, k in enumerate(infoset_keys))
    if shared:
        infoset_keys = [player_key(infoset_player[i], k) if k in shared else k for i, k in enumerate(infoset_keys)]
    n = len(player)
    util = np.zeros((n, n_players), dtype=np.float64)
    for node, values in utilities.items():
        util[node] = values
    offsets = np.zeros(len(infoset_keys) + 1, dtype=np.int32)
    offsets[1:] = np.cumsum([len(a) for a in infoset_actions])
    node_offsets = np.zeros(len(infoset_keys) + 1, dtype=np.int32)
    node_offsets[1:] = np.cumsum([len(x) for x in infoset_nodes])
    return CompiledGame(
        game_string=game.game_string(),
        num_players=n_players,
        node_player=np.asarray(player, dtype=np.int32),
        node_infoset=np.asarray(infoset, dtype=np.int32),
        child_start=np.asarray(child_start, dtype=np.int32),
        num_children=np.asarray(num_children, dtype=np.int32),
        node_chance_prob=np.asarray(chance_prob, dtype=np.float64),
        node_action=np.asarray(action_in, dtype=np.int32),
        node_parent=np.asarray(parent, dtype=np.int32),
        utilities=util,
        infoset_player=np.asarray(infoset_player, dtype=np.int32),
        infoset_offset=offsets,
        slot_action=np.asarray([a for acts in infoset_actions for a in acts], dtype=np.int32),
        infoset_node_offset=node_offsets,
        infoset_nodes=np.asarray([x for nodes in infoset_nodes for x in nodes], dtype=np.int32),
        infoset_keys=infoset_keys,
    )


def _advance(state: State, action: int) -> State:
    """The last child may reuse the parent state (it is not needed afterwards)."""
    state.apply_action(action)
    return state


def default_cache_dir() -> str:
    return os.environ.get("CFRKIT_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "cfrkit", "trees"))


def _cache_path(key: str, cache_dir: Optional[str]) -> str:
    digest = hashlib.sha1(key.encode()).hexdigest()[:20]
    return os.path.join(cache_dir or default_cache_dir(), f"{digest}.npz")


def _save_tree(tree: CompiledGame, path: str) -> None:
    from cfrkit.policy import save_npz_atomic

    os.makedirs(os.path.dirname(path), exist_ok=True)
    header = {"magic": "cfrkit-compiled-tree", "version": 1, "compiler": COMPILER_VERSION,
              "game": tree.game_string, "num_players": tree.num_players}
    arrays = {name: getattr(tree, name) for name in _ARRAYS}
    save_npz_atomic(path, header=header, infoset_keys=np.asarray(tree.infoset_keys, dtype=str), **arrays)


def _load_tree(path: str, key: str) -> CompiledGame:
    from cfrkit.policy import load_npz_checked

    header, arrays = load_npz_checked(path, "cfrkit-compiled-tree", _ARRAYS + ("infoset_keys",))
    if header.get("game") != key or header.get("compiler") != COMPILER_VERSION:
        raise GameError("cache entry belongs to another game or compiler version")
    fields = {name: arrays[name] for name in _ARRAYS}
    keys = arrays["infoset_keys"]
    if keys.dtype.kind != "U" or keys.ndim != 1 or not isinstance(header.get("num_players"), int):
        raise GameError("damaged cache entry")
    tree = CompiledGame(game_string=key, num_players=header["num_players"], infoset_keys=keys.tolist(), **fields)
    return tree.validate()
