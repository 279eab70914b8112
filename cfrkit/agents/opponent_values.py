"""A blueprint's value tables with another agent in one seat: AIVAT values for A^C against A^R (issue 27).

:func:`~cfrkit.agents.blueprint_values.blueprint_values` values every abstract node by the blueprint's self-play:
both seats play the blueprint.  Against A^R (or any agent whose strategy for every hand can be asked,
``hand_strategy``) that model is wrong exactly where the street lookahead of
:class:`~cfrkit.agents.blueprint_values.BlueprintValueFunction` hands over to the tables: preflop, and after each
round-closing call.  Here the other agent's strategy is estimated per (abstract node, bucket) from hands it
played, and the backward pass is run again with that estimate in its seat:

    sigma_R(a | n, b) = (W[n, b, a] + prior * sigma_BP(a | n, b)) / (sum_a W[n, b, a] + prior)

``W[n, b, a]``: over every decision the agent made at a state whose betting walks to node ``n`` (each raise to
its most likely abstract size), the summed weight of the hands of bucket ``b`` (on that board) for which its
``hand_strategy`` takes an action that walks to child ``a``; a hand's weight is the probability that the agent
played the hand's way to that state (its own reach, from its strategy at its earlier decisions of the hand).
So ``W`` is the agent's abstract strategy averaged as the abstract game averages it (over the hands of a bucket
that reach the node, on the boards played); ``prior`` (in hands) pulls nodes seldom seen to the blueprint's.

The estimate only shapes the value function: fitted on other hands than the ones evaluated (its own match, its
own seed), the tables are a fixed function, the chance expectations average the same tables (the deal
exactly, :func:`~cfrkit.agents.blueprint_values.deal_expectation`), so AIVAT stays unbiased whatever the fit.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import uuid
from typing import Dict, Optional

import numpy as np

from cfrkit._io import atomic_open, read_json_manifest
from cfrkit.agents.blueprint_values import (BlueprintValueFunction, BlueprintValueTable, NodeWalker, walk_step,
                                            blueprint_values, deal_expectation)
from cfrkit.games.base import GameError
from cfrkit.poker.match import MatchObserver, play_match
from cfrkit.solvers.blueprint.betting_tree import DECISION

__all__ = ["AbstractPolicyRecorder", "FIT_FORMAT", "blueprint_fingerprint", "fit_abstract_policy", "load_fitted_tables",
           "opponent_sigma", "OpponentTablesValueFunction", "save_fitted_tables"]


class AbstractPolicyRecorder(MatchObserver):
    """A match observer that adds up ``W[seat][node]`` (float64[B_r, children of node], module doc) for the
    decisions of ``target`` (an agent with ``hand_strategy``: actions int64[A], probs float64[1326, A]) on the
    tree and abstraction of ``strategy``, raises translated by ``translate_raise`` (the most likely size)."""

    def __init__(self, strategy, translate_raise, target):
        self.strategy = strategy
        self.tree = strategy.tree
        self.ab = strategy.abstraction
        self.translate_raise = translate_raise
        self.target = target
        self.walker = NodeWalker(strategy.tree, translate_raise)
        self.counts: Dict[int, Dict[int, np.ndarray]] = {0: {}, 1: {}}
        self.decisions = 0
        self._reach: Dict[int, np.ndarray] = {}
        self._last = None

    def hand_start(self, hand) -> None:
        self._reach = {}
        self._last = None

    def _is_target(self, agent) -> bool:
        return getattr(agent, "agent", agent) is self.target

    def decision(self, hand, state, seat: int) -> None:
        self._last = None
        if not self._is_target(hand.seat_agents[seat]):
            return
        hs = self.target.hand_strategy(state)
        probs = np.asarray(hs.probs, dtype=np.float64)
        reach = self._reach.setdefault(seat, np.ones(probs.shape[0]))
        self._last = (np.asarray(hs.actions, dtype=np.int64), probs)
        t = self.tree
        node = self.walker.node_of(state)
        if (node is None or t.kind[node] != DECISION or int(t.player[node]) != seat
                or int(t.round[node]) != int(state.round)):
            return  # the tree cannot follow this hand: nothing to learn for the tables
        r = int(t.round[node])
        buckets = np.asarray(self.ab.buckets_for_board(r, [int(c) for c in state.board]), dtype=np.int64)
        ok = (buckets >= 0) & (reach > 0)
        first, m = int(t.child_start[node]), int(t.num_children[node])
        acc = self.counts[seat].get(node)
        if acc is None:
            acc = self.counts[seat][node] = np.zeros((int(self.strategy.num_buckets[r]), m))
        for j, action in enumerate(self._last[0]):
            w = probs[:, j] * reach
            sel = ok & (w > 0)
            if not sel.any():
                continue
            child = walk_step(t, self.translate_raise, node, state, int(action), None)
            if child is None or child < 0:
                continue  # an action the tree cannot follow (its weight is left out of this node's estimate)
            np.add.at(acc[:, int(child) - first], buckets[sel], w[sel])
        self.decisions += 1

    def action(self, hand, state, seat: int, action: int) -> None:
        if self._last is None:
            return
        actions, probs = self._last
        self._last = None
        hit = np.flatnonzero(actions == int(action))
        col = probs[:, hit[0]] if hit.size else np.zeros(probs.shape[0])
        self._reach[seat] = self._reach[seat] * col


def fit_abstract_policy(owner, target, deals: int, seed: int = 0) -> Dict[int, Dict[int, np.ndarray]]:
    """``W[seat][node]`` (module doc) of ``target`` from a duplicate match of ``deals`` deals (2 x ``deals``
    hands, ``target`` in each seat) against ``owner``, a :class:`~cfrkit.agents.blueprint.BlueprintAgent` whose
    tree and abstraction the tables use.  Use agent objects (and a seed) other than the evaluated match's, so
    the evaluated hands play as they would without the fit."""
    if deals < 1:
        raise GameError(f"deals must be >= 1, got {deals}")
    if not hasattr(target, "hand_strategy"):
        raise GameError(f"{getattr(target, 'name', target)!r} has no hand_strategy: its policy cannot be fitted")
    rec = AbstractPolicyRecorder(owner.blueprint, owner.translate_raise, target)
    play_match(owner.game, [owner, target], int(deals), seed=int(seed), duplicate=True, observers=[rec],
               time_limit=float("inf"))
    return rec.counts


def opponent_sigma(strategy, counts: Dict[int, np.ndarray], prior: float = 2.0):
    """``sigma(node)`` for :func:`~cfrkit.agents.blueprint_values.blueprint_values`: the smoothed estimate of the
    module doc at the nodes in ``counts`` (one seat's ``W``), None (the blueprint's strategy) elsewhere;
    ``prior`` in hands (> 0)."""
    if not prior > 0:
        raise GameError(f"prior must be > 0, got {prior}")

    def sigma(node: int) -> Optional[np.ndarray]:
        w = counts.get(int(node))
        if w is None:
            return None
        bp = strategy.probabilities(int(node), np.arange(w.shape[0]))
        return (w + prior * bp) / (w.sum(axis=1, keepdims=True) + prior)
    return sigma


class OpponentTablesValueFunction(BlueprintValueFunction):
    """:class:`~cfrkit.agents.blueprint_values.BlueprintValueFunction` whose tables, in a hand where ``opponent``
    (the agent object of the evaluated match) sits in seat ``s``, are those of the blueprint against the fitted
    model of ``opponent`` in seat ``s`` (``counts[s]``, from :func:`fit_abstract_policy`); the self-play tables in
    other hands.  ``prior``: see :func:`opponent_sigma`; other arguments as the base class.  One more backward
    pass per seat (seconds) and one more pair of float32 tables per seat in memory.

    ``tables`` (instead of ``counts``): the fitted tables per seat, built before (:attr:`fitted`, e.g. read back
    by :func:`load_fitted_tables` as read-only memory maps: no backward pass, and the pages are the page cache's,
    shared by every process that maps the same files).  With both seats fitted the self-play tables are never
    built (every hand with ``opponent`` uses a fitted pair)."""

    def __init__(self, strategy, view, translate_raise, opponent, counts: Optional[Dict[int, Dict[int, np.ndarray]]]
                 = None, prior: float = 2.0, tables: Optional[Dict[int, BlueprintValueTable]] = None, **kwargs):
        if (counts is None) == (tables is None):
            raise GameError("OpponentTablesValueFunction needs either counts (a fit) or tables (built before)")
        seats = sorted(int(s) for s, c in (counts if tables is None else tables).items() if c)
        super().__init__(strategy, view, translate_raise, self_play_table=seats != [0, 1], **kwargs)
        self.opponent = opponent
        self.prior = float(prior)
        self._base = self.table
        self._tables = {}
        for s in seats:
            self._tables[s] = tables[s] if tables is not None else \
                blueprint_values(strategy, self.trans, opponent_sigma(strategy, counts[s], prior))
        self._deals = {}

    @property
    def fitted(self) -> Dict[int, BlueprintValueTable]:
        """The fitted tables per seat (seat -> :class:`~cfrkit.agents.blueprint_values.BlueprintValueTable`)."""
        return dict(self._tables)

    def hand_start(self, hand) -> None:
        super().hand_start(hand)
        seat = next((s for s, a in enumerate(hand.seat_agents) if getattr(a, "agent", a) is self.opponent), None)
        self.table = self._tables.get(seat, self._base) if seat is not None else self._base
        if self.table is None:
            raise GameError("OpponentTablesValueFunction: a hand without the fitted opponent (its self-play tables "
                            "were dropped, as both seats are fitted)")

    def _table_deal(self) -> float:
        if self.table is self._base:
            return super()._table_deal()
        hit = self._deals.get(id(self.table))
        if hit is None:
            hit = self._deals[id(self.table)] = deal_expectation(self.table, self.ab)
        return hit


# ---------------------------------------------------------------------- fitted tables on disk
#: the version of the stored tables' format and of what they mean: bump it when the fit
#: (:func:`fit_abstract_policy`), the smoothing (:func:`opponent_sigma`) or the backward pass
#: (:func:`~cfrkit.agents.blueprint_values.blueprint_values`) changes their numbers; stored tables of another
#: version are then fitted again
FIT_FORMAT = 1


def blueprint_fingerprint(strategy) -> str:
    """Digest (hex, 32 characters) of everything a blueprint's value tables depend on: its strategy sums, its
    betting tree (game and arrays) and its card abstraction (the fingerprint checkpoints carry).  Two blueprints
    with equal digests give the same tables; a retrained or edited file gives another (~0.1 s per 100 MB)."""
    from cfrkit.solvers.blueprint.abstraction_spec import abstraction_fingerprint

    h = hashlib.blake2b(digest_size=16)
    t = strategy.tree
    h.update(str(t.game_string).encode())
    for name in ("kind", "round", "player", "child_start", "num_children", "spent"):
        a = np.ascontiguousarray(getattr(t, name))
        h.update(f"{name}{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    h.update(abstraction_fingerprint(strategy.abstraction).encode())
    h.update(np.ascontiguousarray(strategy.strategy_sum).view(np.uint8))
    return h.hexdigest()


def _file_digest(path: str) -> str:
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(1 << 23)
            if not chunk:
                return h.hexdigest()
            h.update(chunk)


#: the file beside ``meta.json`` that records each table file's state at its last digest check (:func:`_stamp`)
STAMPS_FILE = "verified.json"


def _stamp(st: os.stat_result, digest: str) -> list:
    """What a table file's digest check is remembered by: its size, modification and change times (ns), inode and
    device, and the digest it matched.  Any write to the file changes its times (the change time even where the
    modification time is set back), a replaced file its inode: then the digest is computed again."""
    return [int(st.st_size), int(st.st_mtime_ns), int(st.st_ctime_ns), int(st.st_ino), int(st.st_dev), str(digest)]


def _read_stamps(path: str) -> dict:
    """The stamps of the store ``path`` ({file name: :func:`_stamp`}); {} when none or unreadable (then checked)."""
    try:
        with open(os.path.join(path, STAMPS_FILE)) as fh:
            got = json.load(fh)
    except (OSError, ValueError):
        return {}
    return got if isinstance(got, dict) else {}


def _write_stamps(path: str, stamps: dict) -> None:
    """Write the stamps of the store ``path`` (atomically; a store that cannot be written keeps checking digests)."""
    try:
        with atomic_open(os.path.join(path, STAMPS_FILE), "w", fsync=False) as fh:
            json.dump(stamps, fh, sort_keys=True)
    except OSError:
        pass


def _normal(meta: dict) -> dict:
    return json.loads(json.dumps(meta, sort_keys=True))


def save_fitted_tables(path: str, tables: Dict[int, BlueprintValueTable], meta: dict,
                       keep_same: bool = True) -> bool:
    """Store fitted tables (seat -> table) in the directory ``path`` with ``meta`` (a JSON-able dict: everything
    they depend on, :func:`load_fitted_tables` compares it): one ``.npy`` per seat, table and round, and
    ``meta.json`` with each file's size and blake2b digest.  Written into a temporary directory beside ``path`` and
    renamed, so a reader never sees half a store; a stale store at ``path`` (another ``meta``) is replaced, one for
    the same ``meta`` (another process was faster) is kept with ``keep_same`` (default; False: replaced, for a
    store found corrupt).  Returns whether ours was written."""
    if keep_same and _stored_key(path) == _normal(meta):  # another process stored the same tables meanwhile
        return False
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, f".{os.path.basename(path)}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    os.makedirs(tmp)
    try:
        files = {}
        for seat, table in sorted(tables.items()):
            for name, blocks in (("D", table.D), ("S", table.S)):
                for r, block in enumerate(blocks):
                    fname = f"seat{int(seat)}_{name}{r}.npy"
                    full = os.path.join(tmp, fname)
                    np.save(full, np.ascontiguousarray(block, dtype=np.float32))
                    files[fname] = {"bytes": os.path.getsize(full), "blake2b": _file_digest(full)}
        with open(os.path.join(tmp, "meta.json"), "w") as fh:
            json.dump({"key": _normal(meta), "seats": sorted(int(s) for s in tables), "files": files}, fh,
                      indent=1, sort_keys=True)
        if os.path.lexists(path):
            shutil.rmtree(path, ignore_errors=True)   # stale: mapped files stay readable where they are open
        os.rename(tmp, path)
        return True
    except OSError:
        if os.path.isdir(path):  # another process stored them first
            return False
        raise
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)


def _read_meta(path: str) -> dict:
    """``meta.json`` of the store ``path`` (GameError, one line, when missing or not JSON)."""
    return read_json_manifest(path, "meta.json", GameError, "fitted opponent tables")


def _stored_key(path: str) -> Optional[dict]:
    try:
        return _read_meta(path)["key"]
    except (GameError, KeyError, TypeError):
        return None


def _refit(path: str, why: str) -> None:
    print(f"cfrkit: fitted opponent tables {path}: {why}; fitting them again", file=sys.stderr, flush=True)


def load_fitted_tables(path: str, meta: dict, strategy,
                       verify: bool = True) -> Optional[Dict[int, BlueprintValueTable]]:
    """The tables :func:`save_fitted_tables` stored at ``path`` for exactly ``meta``, as read-only memory maps
    (seat -> :class:`~cfrkit.agents.blueprint_values.BlueprintValueTable` on ``strategy``'s tree), or None: nothing
    stored (silently), or a stale store (other ``meta``: another blueprint file, fit, game or format) or a corrupt
    one (a missing, truncated or altered file, a bad shape), each with one line on stderr; the caller then fits
    them again.  Every file's size is checked, and with ``verify`` (default) its digest (about 1 s per GB; off only
    for files this process has just written) -- once per state of the file: a file whose size, times, inode and
    device are those recorded when its digest last matched (``verified.json`` in the store, :func:`_stamp`) is not
    read again (0.7 CPU s per load of a CLI-default blueprint's self-play tables; any write to a file changes its
    change time, so an altered file is still read and refused)."""
    if not os.path.isdir(path):
        return None
    try:
        stored = _read_meta(path)
        key, files, seats = stored["key"], stored["files"], [int(s) for s in stored["seats"]]
    except (GameError, ValueError, KeyError, TypeError) as exc:
        _refit(path, f"corrupt (meta.json: {exc if isinstance(exc, GameError) else type(exc).__name__})")
        return None
    want = _normal(meta)
    if key != want:
        differ = sorted(k for k in set(key) | set(want) if key.get(k) != want.get(k))
        _refit(path, f"stale (stored for another {', '.join(differ)})")
        return None
    tables = {}
    stamps = _read_stamps(path) if verify else {}
    checked = {}
    try:
        nb = strategy.num_buckets
        for s in seats:
            blocks = ([], [])
            for i, name in enumerate(("D", "S")):
                for r in range(len(nb)):
                    fname = f"seat{s}_{name}{r}.npy"
                    full = os.path.join(path, fname)
                    info = files[fname]
                    st = os.stat(full)
                    if st.st_size != int(info["bytes"]):
                        _refit(path, f"corrupt ({fname} changed since it was stored)")
                        return None
                    if verify:
                        mark = _stamp(st, info["blake2b"])
                        if stamps.get(fname) != mark and _file_digest(full) != info["blake2b"]:
                            _refit(path, f"corrupt ({fname} changed since it was stored)")
                            return None
                        checked[fname] = mark
                    try:
                        blocks[i].append(np.load(full, mmap_mode="r", allow_pickle=False))
                    except ValueError:  # a round without decisions: an empty block cannot be mapped
                        blocks[i].append(np.load(full, allow_pickle=False))
            tables[s] = BlueprintValueTable(strategy.tree, nb, blocks)
    except (OSError, ValueError, KeyError, GameError) as exc:
        _refit(path, f"corrupt ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})")
        return None
    if verify and checked != stamps:
        _write_stamps(path, checked)
    return tables
