"""build_public_tree's fast walk (``PublicPokerGame.children``, slotted nodes and states) builds the tree a plain
walk builds: same nodes in the same pre-order with the same fields (BoardLayout reads only these, so its arrays
follow).

The reference below walks the public game through its checked interface (``actions`` then ``child`` per action),
as build_public_tree did before its walk was tuned, on the benchmark's river and turn spots, a reduced-deck flop
and a depth-limited hold'em tree.
"""
from __future__ import annotations

import pytest

from cfrkit.cards.encoding import parse_cards
from cfrkit.solvers.public.postflop_game import PostflopPublicGame, PostflopState
from cfrkit.solvers.public.public_tree import (CHANCE_NODE, DECISION, FOLD_NODE, LEAF, SHOWDOWN_NODE,
                                               build_public_tree)


def reference_nodes(pgame, root_state, depth_limit=False):
    """Pre-order list of node field dicts, walking ``pgame.actions`` / ``pgame.child`` (checked) per action."""
    out = []
    root_round = pgame.round(root_state)

    def walk(ps, parent, depth, history):
        idx = len(out)
        rec = dict(index=idx, state=ps, parent=parent, depth=depth, history=history, player=-1, actions=(),
                   children=[], contrib=tuple(pgame.contributions(ps)), board=tuple(pgame.board(ps)), folder=-1)
        out.append(rec)
        kind = pgame.kind(ps)
        if kind == "terminal":
            rec["folder"] = pgame.folder(ps)
            rec["kind"] = FOLD_NODE if rec["folder"] >= 0 else SHOWDOWN_NODE
        elif kind == "decision" and depth_limit and pgame.round(ps) > root_round:
            rec["kind"] = LEAF
        elif kind == "chance":
            rec["kind"] = CHANCE_NODE
            rec["actions"] = tuple(pgame.chance_cards(ps))
            for c in rec["actions"]:
                rec["children"].append(walk(pgame.chance_child(ps, c), idx, depth + 1, history + (c,)))
        else:
            rec["kind"] = DECISION
            rec["player"] = pgame.player(ps)
            rec["actions"] = tuple(pgame.actions(ps))
            for a in rec["actions"]:
                rec["children"].append(walk(pgame.child(ps, a), idx, depth + 1, history + (a,)))
        return idx

    walk(root_state, -1, 0, ())
    return out


def assert_same_tree(tree, ref):
    assert len(tree) == len(ref)
    for node, rec in zip(tree.nodes, ref):
        for key, value in rec.items():
            if key == "state" and not isinstance(value, PostflopState):  # protocol states compare by public key
                assert tree.pgame.public_key(node.state) == tree.pgame.public_key(value), node.index
            elif key == "children":  # a list or (the postflop builder's) a tuple
                assert list(node.children) == value, node.index
            else:
                assert getattr(node, key) == value, (node.index, key)
    assert tree.decision_nodes == [r["index"] for r in ref if r["kind"] == DECISION]
    for rec in ref[:: max(1, len(ref) // 500)]:
        assert tree.node_at(rec["history"]).index == rec["index"]


SPOTS = [
    ("AsJd8h5c2d", 1000, 2000, "50%, 100%, a", None),  # the benchmark's river
    ("8dAs8sKh", 4000, 18000, {"turn": "50%, 100%, a", "river": "100%, a"}, None),  # the benchmark's turn
    ("AsKhTs", 100, 300, "50%, a", "AsKsQsJsTs9sAhKhQhJh"),  # reduced-deck flop
]


@pytest.mark.parametrize("board,pot,stack,sizes,deck", SPOTS)
def test_postflop_tree_equals_checked_walk(board, pot, stack, sizes, deck):
    kw = {} if deck is None else {"deck": parse_cards(deck)}
    game = PostflopPublicGame(board, pot, stack, sizes, **kw)
    tree = build_public_tree(game)
    assert_same_tree(tree, reference_nodes(game, game.root()))


def test_leduc_depth_limited_tree_equals_checked_walk():
    from cfrkit.games import load
    from cfrkit.solvers.public.games import public_game_for

    pgame = public_game_for(load("leduc"))
    root = pgame.root(None)
    for depth_limit in (False, True):
        assert_same_tree(build_public_tree(pgame, depth_limit=depth_limit), reference_nodes(pgame, root, depth_limit))


def test_postflop_tree_pickles_and_copies_with_its_deferred_states_and_histories():
    """The postflop builder's nodes keep a shared deferred state and their parent instead of a history tuple: a
    pickled or deep-copied tree reads back the same states, histories and look-ups."""
    import copy
    import pickle

    game = PostflopPublicGame("8dAs8sKh", 4000, 18000, {"turn": "50%, 100%, a", "river": "100%, a"})
    tree = build_public_tree(game)
    for twin in (pickle.loads(pickle.dumps(tree)), copy.deepcopy(tree)):
        assert len(twin) == len(tree)
        for node in tree.nodes[::37]:
            other = twin.nodes[node.index]
            assert other == node and other.state == node.state and other.history == node.history
            assert twin.node_at(node.history).index == node.index


def test_build_restores_the_garbage_collector_state():
    """build_public_tree pauses the cyclic collector while it builds and leaves it as it found it."""
    import gc

    game = PostflopPublicGame("AsJd8h5c2d", 1000, 2000, "50%, 100%, a")
    was = gc.isenabled()
    try:
        for state in (True, False):
            (gc.enable if state else gc.disable)()
            build_public_tree(game)
            assert gc.isenabled() is state
    finally:
        (gc.enable if was else gc.disable)()


def test_postflop_tree_is_held_as_arrays_and_reads_as_its_node_list():
    """The postflop builder keeps the nodes as arrays (NodeArrays, a node made on access): the sequence reads like
    the list of the same nodes (indices, negative indices, slices, iteration, IndexError), the root is one object,
    the tree's arrays (what the layouts read) equal those of the node objects, and a node costs a few tens of
    bytes instead of the ~200 of an object."""
    import tracemalloc

    import numpy as np

    from cfrkit.solvers.public.public_tree import NodeArrays, PublicTree, TreeArrays

    game = PostflopPublicGame("8dAs8sKh", 4000, 18000, {"turn": "50%, 100%, a", "river": "100%, a"})
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tree = build_public_tree(game)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    nodes = tree.nodes
    assert isinstance(nodes, NodeArrays) and kept / len(tree) < 60, kept / len(tree)
    listed = list(nodes)
    assert len(listed) == len(nodes) == len(tree) > 10000
    assert nodes[-1] == listed[-1] and nodes[5:400:7] == listed[5:400:7] and nodes[123] == nodes[123]
    with pytest.raises(IndexError):
        nodes[len(nodes)]
    assert tree.root is nodes[0] and tree.root.state == game.root() and tree.root.history == ()
    twin = PublicTree(game, listed)
    assert tree.counts() == twin.counts() and tree.decision_nodes == twin.decision_nodes and not tree.leaf_nodes
    a, b = tree.arrays(), TreeArrays.of_nodes(listed)
    for field in ("kind", "parent", "player", "folder", "child_start", "children", "edge_action"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert [a.boards[i] for i in a.board] == [b.boards[i] for i in b.board]
    assert np.array_equal(a.contrib_values[a.contrib], b.contrib_values[b.contrib])
    for n in listed[::997]:
        assert list(a.children[a.child_start[n.index]:a.child_start[n.index + 1]]) == list(n.children)
        assert list(a.edge_action[a.child_start[n.index]:a.child_start[n.index + 1]]) == list(n.actions)
