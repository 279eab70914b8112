"""Public trees of poker subgames: node kinds, :class:`PublicNode`, :class:`PublicTree`, :func:`build_public_tree`.

The bottom of :mod:`cfrkit.solvers.public`: it imports only the games layer and :mod:`.games` (public views of
poker games), so every solver module (numpy/torch :mod:`.tree`, the compiled :mod:`.flat_range_cfr`,
:mod:`.board_range_cfr`, :mod:`.board_leaf_cfr`) and the all-in equity module :mod:`.allin` build on it
without importing each other.

A *public tree* has one node per public state of a subgame: betting decisions, board chance and
fold/showdown terminals, plus *leaves* where a depth-limited tree stops (the start of the next betting round,
after the board card).  Contributions (``PublicNode.contrib``) are chips per player.
"""
from __future__ import annotations

import gc
import operator
from array import array
from collections.abc import Sequence as SequenceABC
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.games.base import Game, GameError, State
from cfrkit.solvers.public.games import PublicPokerGame, public_game_for

DECISION, CHANCE_NODE, FOLD_NODE, SHOWDOWN_NODE, LEAF = "decision", "chance", "fold", "showdown", "leaf"
ALLIN_NODE = "allin"  # RangeSolver's role of an all-in run-out's chance node valued by an equity matrix


class DeferredState:
    """A node's game state made on first access from the node's own fields: ``make(node, data)``.

    Builders of large trees give the nodes one shared :class:`DeferredState` per betting situation instead of
    one state object each (a flop tree has ~1.2M nodes; the state is read only for labels and keys).  ``make``
    should be a module-level function so that trees pickle and copy."""

    __slots__ = ("make", "data")

    def __init__(self, make: Callable[["PublicNode", Any], Any], data: Any):
        self.make = make
        self.data = data

    def __reduce__(self):
        return DeferredState, (self.make, self.data)


class PublicNode:
    """One public state of the subgame (see module docstring).

    Fields: ``index``, ``kind``, ``state`` (the game's state; a :class:`DeferredState` given here is resolved on
    each access), ``parent`` (-1 at the root), ``depth``, ``history`` (public actions -- betting actions and
    board cards -- from the subgame root; a builder may give the parent's node instead, with ``action`` the
    public action from it, and the tuple is then made when read), ``player`` (decision nodes; else -1),
    ``actions`` (betting actions of a decision or board cards of a chance node, one per child), ``children``
    (node indices: a list, or a tuple where a builder makes them so), ``contrib`` (chips put in by each player),
    ``board``, ``folder`` (fold nodes; else -1)."""

    # slots: a flop tree has ~1.2M nodes (memory and build time)
    __slots__ = ("index", "kind", "_state", "parent", "depth", "_history", "player", "actions", "children",
                 "contrib", "board", "folder", "_action")
    _FIELDS = ("index", "kind", "state", "parent", "depth", "history", "player", "actions", "children", "contrib",
               "board", "folder")

    def __init__(self, index: int, kind: str, state: Any, parent: int = -1, depth: int = 0,
                 history: Tuple[int, ...] = (), player: int = -1, actions: Tuple[int, ...] = (),
                 children: Optional[Sequence[int]] = None, contrib: Tuple[float, float] = (0.0, 0.0),
                 board: Tuple[int, ...] = (), folder: int = -1, action: int = -1):
        self.index = index
        self.kind = kind
        self._state = state
        self.parent = parent
        self.depth = depth
        self._history = history  # a tuple, or the parent PublicNode (then _action is the action from it)
        self._action = action
        self.player = player
        self.actions = actions
        self.children = [] if children is None else children
        self.contrib = contrib
        self.board = board
        self.folder = folder

    @property
    def state(self) -> Any:
        s = self._state
        return s.make(self, s.data) if type(s) is DeferredState else s

    @state.setter
    def state(self, value: Any) -> None:
        self._state = value

    @property
    def history(self) -> Tuple[int, ...]:
        h = self._history
        if type(h) is tuple:
            return h
        if type(h) is NodeArrays:  # a node made from a tree's arrays: its history from the parent indices
            return h.history_of(self.index)
        acts = [self._action]  # deferred: walk up to the nearest node holding its tuple
        while type(h._history) is not tuple:
            acts.append(h._action)
            h = h._history
        return h._history + tuple(reversed(acts))

    @history.setter
    def history(self, value: Tuple[int, ...]) -> None:
        self._history = tuple(value)

    def __repr__(self) -> str:
        return "PublicNode(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self._FIELDS) + ")"

    def __eq__(self, other) -> bool:
        if type(other) is not PublicNode:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._FIELDS)

    __hash__ = None  # mutable, compared by value (as the dataclass it was)

    @property
    def pot(self) -> float:
        return self.contrib[0] + self.contrib[1]

    def terminal_code(self) -> Tuple[int, Tuple[float, float]]:
        """(kernel node type, amount pair) of a terminal node, as the compiled range-CFR kernels read
        them: fold (1, chips each player wins: -own contribution for the folder, the folder's for the
        other), showdown (2, contributions, chips; the kernels pay them by strength)."""
        if self.kind == FOLD_NODE:
            return 1, tuple(-self.contrib[p] if self.folder == p else self.contrib[1 - p] for p in (0, 1))
        return 2, self.contrib


def _int32_array(values: np.ndarray) -> array:
    """``values`` as an ``array("i")`` (indexing gives Python ints, cheaply)."""
    out = array("i")
    out.frombytes(np.ascontiguousarray(values, dtype=np.int32).tobytes())
    return out


KINDS = (DECISION, CHANCE_NODE, FOLD_NODE, SHOWDOWN_NODE, LEAF)  # node kind codes of TreeArrays.kind: their index
KIND_CODE = {k: i for i, k in enumerate(KINDS)}


class TreeArrays:
    """A public tree's structure as arrays (:meth:`PublicTree.arrays`), for the layouts of the compiled solvers.

    ``N`` nodes in pre-order; per node: ``kind`` (int8, the index of its kind in :data:`KINDS`), ``parent``
    (int32, -1 at the root), ``player`` and ``folder`` (int8, -1 where none), ``board`` (int32 index into
    ``boards``, a list of board tuples), ``contrib`` (int32 index into ``contribs``, a list of ``(c0, c1)`` chip
    pairs, and into ``contrib_values``, the same as an ``(K, 2)`` float64 array); children in CSR form:
    ``children[child_start[i]:child_start[i + 1]]`` (int32) are node ``i``'s children in order and
    ``edge_action`` (int64, aligned with ``children``) the action or card leading to each."""

    __slots__ = ("kind", "parent", "player", "folder", "board", "boards", "contrib", "contribs", "contrib_values",
                 "child_start", "children", "edge_action")

    def __init__(self, kind, parent, player, folder, board, boards, contrib, contribs, child_start, children,
                 edge_action):
        self.kind, self.parent, self.player, self.folder = kind, parent, player, folder
        self.board, self.boards, self.contrib, self.contribs = board, boards, contrib, contribs
        self.contrib_values = np.array(contribs, dtype=np.float64).reshape(-1, 2)
        self.child_start, self.children, self.edge_action = child_start, children, edge_action

    @classmethod
    def of_nodes(cls, nodes: Sequence[PublicNode]) -> "TreeArrays":
        """The arrays of a list of :class:`PublicNode` (one pass over the nodes)."""
        N = len(nodes)
        kind, player, folder = array("b"), array("b"), array("b")
        parent, board, contrib, start, children = array("i"), array("i"), array("i"), array("i", [0]), array("i")
        edge = array("q")
        board_id: Dict[Tuple[int, ...], int] = {}
        contrib_id: Dict[Tuple[float, float], int] = {}
        for n in nodes:
            kind.append(KIND_CODE[n.kind])
            parent.append(n.parent)
            player.append(n.player)
            folder.append(n.folder)
            b = tuple(n.board)
            board.append(board_id.setdefault(b, len(board_id)))
            c = tuple(n.contrib)
            contrib.append(contrib_id.setdefault(c, len(contrib_id)))
            if n.children:
                children.extend(n.children)
                edge.extend(n.actions)
            start.append(len(children))
        if len(edge) != len(children) or len(children) != max(N - 1, 0):
            raise GameError("internal: a public tree's nodes must have one action per child and one parent each")
        return cls(np.frombuffer(kind, dtype=np.int8), np.frombuffer(parent, dtype=np.int32),
                   np.frombuffer(player, dtype=np.int8), np.frombuffer(folder, dtype=np.int8),
                   np.frombuffer(board, dtype=np.int32), list(board_id), np.frombuffer(contrib, dtype=np.int32),
                   list(contrib_id), np.frombuffer(start, dtype=np.int32), np.frombuffer(children, dtype=np.int32),
                   np.frombuffer(edge, dtype=np.int64))


class NodeArrays(SequenceABC):
    """The nodes of a large public tree held as arrays, a :class:`PublicNode` made on each access.

    A sequence of nodes like the list a :class:`PublicTree` usually holds (``len``, ``[i]``, slices, iteration),
    for builders of large trees (a flop tree has ~1.2M nodes: ~200 bytes each as objects, 22 here).  Per node:
    ``sid`` (int32 index into ``states``: one ``(kind, player, folder, contrib, actions, state)`` per betting
    situation, ``actions`` None at chance nodes), ``board`` (int32 index into ``boards``), ``parent`` (int32),
    ``action`` (int32, the betting action or card from the parent; -1 at the root), ``depth`` (int16); the
    cards dealt at a chance node are ``chance_cards[board]``.  Children (int32, CSR: ``child_start``,
    ``children``) follow from the parents (pre-order: a node's children in increasing index, in action order).
    Node 0 (the root) holds ``root_state`` and ``root_history``; the others make their history from the parent
    indices when read.  A node made here is a copy: assigning to its fields does not change the tree."""

    def __init__(self, sid: array, board: array, parent: array, action: array, depth: array, states: List[tuple],
                 boards: List[Tuple[int, ...]], chance_cards: Dict[int, Tuple[int, ...]], root_state: Any,
                 root_history: Tuple[int, ...]):
        n = len(sid)
        if not (n and len(board) == len(parent) == len(action) == len(depth) == n):
            raise GameError("internal: node arrays of different lengths")
        self.sid, self.board, self.parent, self.action, self.depth = sid, board, parent, action, depth
        self.states, self.boards, self.chance_cards = states, boards, chance_cards
        self.root_state, self.root_history = root_state, tuple(root_history)
        par = np.frombuffer(parent, dtype=np.int32)[1:]
        if n > 1 and not (np.all(par >= 0) and np.all(par < np.arange(1, n))):
            raise GameError("internal: node arrays not in pre-order (a parent after its child)")
        self.children = _int32_array(np.argsort(par, kind="stable") + 1)
        self.child_start = _int32_array(np.r_[0, np.cumsum(np.bincount(par, minlength=n))])
        self._root: Optional[PublicNode] = None

    def __len__(self) -> int:
        return len(self.sid)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._node(j) for j in range(*i.indices(len(self.sid)))]
        i = operator.index(i)
        n = len(self.sid)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("node index out of range")
        return self._node(i)

    def __iter__(self):
        return map(self._node, range(len(self.sid)))

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_root"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._root = None

    def _node(self, i: int) -> PublicNode:
        if i == 0:
            if self._root is None:  # the root made once: its state is the caller's own object
                kind, player, folder, contrib, actions, _ = self.states[self.sid[0]]
                self._root = self._make(0, kind, self.root_state, self.root_history, player, folder, contrib,
                                        actions)
            return self._root
        kind, player, folder, contrib, actions, state = self.states[self.sid[i]]
        return self._make(i, kind, state, self, player, folder, contrib, actions)

    def _make(self, i, kind, state, history, player, folder, contrib, actions) -> PublicNode:
        a, b = self.child_start[i], self.child_start[i + 1]
        bid = self.board[i]
        if actions is None:
            actions = self.chance_cards[bid]
        return PublicNode(i, kind, state, self.parent[i], self.depth[i], history, player, actions,
                          tuple(self.children[a:b]) if b > a else (), contrib, self.boards[bid], folder,
                          self.action[i])

    def history_of(self, i: int) -> Tuple[int, ...]:
        """Public actions (betting actions and cards) from the tree's root to node ``i``, after the root's own."""
        acts = []
        parent, action = self.parent, self.action
        while i > 0:
            acts.append(action[i])
            i = parent[i]
        return self.root_history + tuple(reversed(acts))

    def histories(self) -> List[Tuple[int, ...]]:
        """Every node's history (pre-order: a history extends its parent's, made just before)."""
        hs = [self.root_history]
        append = hs.append
        for p, a in zip(self.parent[1:], self.action[1:]):
            append(hs[p] + (a,))
        return hs

    def kind_codes(self) -> np.ndarray:
        """``(N,)`` int8: each node's kind as its index in :data:`KINDS`."""
        codes = np.array([KIND_CODE[s[0]] for s in self.states], dtype=np.int8)
        return codes[np.frombuffer(self.sid, dtype=np.int32)]

    def arrays(self) -> TreeArrays:
        """The :class:`TreeArrays` of these nodes (per-node fields looked up in the per-situation tables)."""
        sid = np.frombuffer(self.sid, dtype=np.int32)
        contrib_id: Dict[Tuple[float, float], int] = {}
        cid = np.array([contrib_id.setdefault(tuple(s[3]), len(contrib_id)) for s in self.states], dtype=np.int32)
        children = np.frombuffer(self.children, dtype=np.int32)
        return TreeArrays(self.kind_codes(), np.frombuffer(self.parent, dtype=np.int32),
                          np.array([s[1] for s in self.states], dtype=np.int8)[sid],
                          np.array([s[2] for s in self.states], dtype=np.int8)[sid],
                          np.frombuffer(self.board, dtype=np.int32), self.boards, cid[sid], list(contrib_id),
                          np.frombuffer(self.child_start, dtype=np.int32), children,
                          np.frombuffer(self.action, dtype=f"i{self.action.itemsize}")[children].astype(np.int64))


class PublicTree:
    """Nodes of a public subgame tree in pre-order (parents before children).

    ``nodes``: a list of :class:`PublicNode`, or for large trees a :class:`NodeArrays` (the same sequence, each
    node made on access)."""

    def __init__(self, pgame: PublicPokerGame, nodes: "List[PublicNode] | NodeArrays"):
        self.pgame = pgame
        self.nodes = nodes
        self.num_hands = pgame.num_hands
        self._decision_nodes: Optional[List[int]] = None
        self._leaf_nodes: Optional[List[int]] = None
        if not isinstance(nodes, NodeArrays):
            self._decision_nodes = [n.index for n in nodes if n.kind == DECISION]
            self._leaf_nodes = [n.index for n in nodes if n.kind == LEAF]
        self._history_index: Optional[Dict[Tuple[int, ...], int]] = None  # built on first look-up

    @property
    def decision_nodes(self) -> List[int]:
        """Indices of the decision nodes, in pre-order (made on first read for a :class:`NodeArrays` tree)."""
        if self._decision_nodes is None:
            self._decision_nodes = np.flatnonzero(self.nodes.kind_codes() == KIND_CODE[DECISION]).tolist()
        return self._decision_nodes

    @property
    def leaf_nodes(self) -> List[int]:
        """Indices of the leaves (depth-limited trees), in pre-order."""
        if self._leaf_nodes is None:
            self._leaf_nodes = np.flatnonzero(self.nodes.kind_codes() == KIND_CODE[LEAF]).tolist()
        return self._leaf_nodes

    def __setstate__(self, state):
        # trees pickled before decision_nodes / leaf_nodes became properties
        for old in ("decision_nodes", "leaf_nodes"):
            if old in state:
                state["_" + old] = state.pop(old)
        self.__dict__.update(state)

    def arrays(self) -> TreeArrays:
        """The tree's structure as :class:`TreeArrays` (made on each call; a layout reads it once)."""
        if isinstance(self.nodes, NodeArrays):
            return self.nodes.arrays()
        return TreeArrays.of_nodes(self.nodes)

    @property
    def _by_history(self) -> Dict[Tuple[int, ...], int]:
        # {history: node index}, built on the first look-up: ~100 bytes a node (110 MB on a 1.2M-node flop tree)
        # that a solve from the root never needs
        if self._history_index is None:
            if isinstance(self.nodes, NodeArrays):
                hs = self.nodes.histories()
            else:
                hs = []  # pre-order: a deferred history extends its parent's, made just before
                for n in self.nodes:
                    h = n._history
                    hs.append(h if type(h) is tuple else hs[n.parent] + (n._action,))
            self._history_index = {h: i for i, h in enumerate(hs)}
        return self._history_index

    @property
    def root(self) -> PublicNode:
        return self.nodes[0]

    def __len__(self) -> int:
        return len(self.nodes)

    def has_history(self, history: Sequence[int]) -> bool:
        """Whether public ``history`` (betting actions and board cards from the root) leads to a node of this tree."""
        return tuple(int(a) for a in history) in self._by_history

    def node_at(self, history: Sequence[int]) -> PublicNode:
        """Node reached from the root by public ``history`` (betting actions and board cards)."""
        idx = self._by_history.get(tuple(int(a) for a in history))
        if idx is None:
            raise GameError(f"public history {list(history)} is not in this public tree")
        return self.nodes[idx]

    def deepest_node(self, history: Sequence[int]) -> Tuple[PublicNode, int]:
        """``(node, k)``: the node of the longest prefix ``history[:k]`` in this tree (the root when none
        is; ``k == len(history)`` when the whole history is), where play left a depth-limited tree."""
        k = len(history)
        while k > 0 and not self.has_history(history[:k]):
            k -= 1
        return self.node_at(history[:k]), k

    def counts(self) -> Dict[str, int]:
        """Nodes per kind."""
        if isinstance(self.nodes, NodeArrays):
            per = np.bincount(self.nodes.kind_codes(), minlength=len(KINDS))
            return {KINDS[k]: int(per[k]) for k in np.flatnonzero(per)}
        out: Dict[str, int] = {}
        for n in self.nodes:
            out[n.kind] = out.get(n.kind, 0) + 1
        return out


def root_ranges(tree: "PublicTree", ranges=None, batched: bool = False) -> np.ndarray:
    """Checked float64 root reach of ``tree``: ``(2, H)``, or also ``(B, 2, H)`` (``B >= 1`` spots) when
    ``batched`` (``H = tree.num_hands``); ``None`` gives the uniform range over the root board's live pairs.
    Raises ValueError on another shape or on negative or non-finite entries."""
    H = tree.num_hands
    if ranges is None:
        mask = tree.pgame.hand_mask(tree.root.board)
        ranges = np.broadcast_to(mask / mask.sum(), (2, len(mask)))
    ranges = np.asarray(ranges, dtype=np.float64)
    if not (ranges.shape == (2, H) or (batched and ranges.ndim == 3 and ranges.shape[1:] == (2, H) and len(ranges))):
        shapes = f"(2, {H}) or (B, 2, {H})" if batched else f"(2, {H})"
        raise ValueError(f"ranges must have shape {shapes}, got {ranges.shape}")
    if not np.all(np.isfinite(ranges)) or ranges.min() < 0:
        raise ValueError("ranges must be finite and non-negative")
    return ranges


def check_node_budget(built: int, max_nodes: int, progress: Optional[Callable[[int], None]]) -> None:
    """The tree builders' per-node check: GameError once ``built`` reaches ``max_nodes``, else
    ``progress(built)`` every 4096 nodes (when given)."""
    if built >= max_nodes:
        raise GameError(f"public tree exceeds {max_nodes} nodes; use a coarser bet-size abstraction")
    if progress is not None and built % 4096 == 0:
        progress(built)


def build_public_tree(game_or_pgame: "Game | PublicPokerGame", state: Optional[State] = None,
                      depth_limit: bool = False, max_nodes: int = 2_000_000, bet_sizing=None,
                      progress: Optional[Callable[[int], None]] = None) -> PublicTree:
    """Public tree of the subgame rooted at ``state`` (default: the start of the betting).

    ``depth_limit=True`` stops at the end of the root's betting round: the board card(s) dealt next
    are chance children and the first public state of the next round is a ``leaf`` node (its values
    come from a leaf value function).  Terminals after all-in calls are kept (with their board run-outs;
    :class:`RangeSolver` values each run-out as one node by default, see its ``allin_equity``).
    Hold'em needs a ``state`` on the flop, turn or river; ``bet_sizing`` (pot fractions per number of
    bets in the round, e.g. ``{1: [0.5, 1.0], 2: [1.0]}``) is passed to
    :func:`~cfrkit.solvers.public.games.public_game_for` when a protocol game is given.
    ``progress(nodes_built)`` is called every 4096 nodes (a progress bar on large trees).  Games with a
    ``public_arrays(root_state, max_nodes, progress)`` method (:class:`~cfrkit.solvers.public.postflop_game.
    PostflopPublicGame`) build full trees with it: the same nodes, faster, held as :class:`NodeArrays`.
    """
    if isinstance(game_or_pgame, PublicPokerGame):
        if bet_sizing is not None:
            raise GameError("bet_sizing is a setting of the public game: pass it to its constructor")
        pgame = game_or_pgame
    else:
        pgame = public_game_for(game_or_pgame, bet_sizing)
    if state is not None and hasattr(pgame, "bet_state_of") and len(getattr(state, "private", ())) >= 2:
        root_state = pgame.bet_state_of(state)
    else:
        root_state = pgame.root(state)
    fast = getattr(pgame, "public_arrays", None)
    # the cyclic garbage collector paused while the nodes are made: they hold no reference cycles, and its passes
    # over the growing heap were 60% of a flop tree's build (1.2 of 2.0 CPU s)
    enabled = gc.isenabled()
    gc.disable()
    try:
        if fast is not None and not depth_limit:
            return PublicTree(pgame, fast(root_state, max_nodes, progress))
        return _walk_public_tree(pgame, root_state, depth_limit, max_nodes, progress)
    finally:
        if enabled:
            gc.enable()


def _walk_public_tree(pgame: PublicPokerGame, root_state, depth_limit: bool, max_nodes: int,
                      progress: Optional[Callable[[int], None]]) -> PublicTree:
    """The generic builder of :func:`build_public_tree`: one walk through ``pgame.children`` /
    ``pgame.chance_child``."""
    root_round = pgame.round(root_state)
    nodes: List[PublicNode] = []
    # bound methods looked up once: the walk below runs once per node (1.2M on the benchmark's flop)
    append, kind_of, contrib_of, board_of = nodes.append, pgame.kind, pgame.contributions, pgame.board
    round_of, children_of = pgame.round, pgame.children

    def add(ps, parent: int, depth: int, history: Tuple[int, ...]) -> int:
        idx = len(nodes)
        if idx >= max_nodes or progress is not None:
            check_node_budget(idx, max_nodes, progress)
        kind = kind_of(ps)
        contrib = contrib_of(ps)
        node = PublicNode(idx, kind, ps, parent, depth, history, contrib=contrib, board=tuple(board_of(ps)))
        append(node)
        if kind == "terminal":
            node.folder = pgame.folder(ps)
            node.kind = FOLD_NODE if node.folder >= 0 else SHOWDOWN_NODE
            if node.kind == SHOWDOWN_NODE and abs(contrib[0] - contrib[1]) > 1e-9:
                raise GameError(f"showdown with unequal contributions {contrib}")
            return idx
        if kind == "decision" and depth_limit and round_of(ps) > root_round:
            node.kind = LEAF
            return idx
        children = node.children
        if kind == "chance":
            node.kind = CHANCE_NODE
            cards = tuple(pgame.chance_cards(ps))
            node.actions = cards
            for c in cards:
                children.append(add(pgame.chance_child(ps, c), idx, depth + 1, history + (c,)))
            return idx
        node.kind = DECISION
        node.player = pgame.player(ps)
        kids = children_of(ps)
        node.actions = tuple(a for a, _ in kids)
        for a, child in kids:
            children.append(add(child, idx, depth + 1, history + (a,)))
        return idx

    add(root_state, -1, 0, ())
    return PublicTree(pgame, nodes)
