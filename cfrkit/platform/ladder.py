"""The ladder: every pair of agents, duplicate + AIVAT, resumable, parallel, stored in the platform's SQLite.

::

    from cfrkit.platform.ladder import run_ladder, plot_ladder
    res = run_ladder(["rule-based", "blueprint:bp.npz", "always-call", "random"], deals=2000,
                     db="ladder/ladder.db", processes=2, seed=0)
    print(res.crosstable.text())        # mbb/h +- 95% per pair, and each agent's rating
    plot_ladder(res.crosstable, "ladder/ladder.png")

**Blocks.**  Each pair (its agents in a canonical order: the specs sorted, so the order on the
command line does not matter) plays ``deals`` seeded deals in blocks of ``block`` deals
(:func:`cfrkit.evaluation.ladder.play_block`, the match runner's ``first_deal``), each deal twice
with the seats swapped.  A block is one stored match of the platform database (id
``ladder-<pair hash>-<block>``, agents named by their labels) written by the platform's
:class:`~cfrkit.platform.storage.StoreObserver`, so ``cfrkit results --db FILE`` reads the ladder's
hands like any other match; its per-deal values (duplicate and AIVAT, mbb/h) go to the table
``ladder_blocks`` of the same file once the block is complete: that row is what makes a block done.

**Resuming.**  A run plays only the blocks without a row.  A block interrupted half-way (Ctrl-C, a
killed worker) left its hands as a match in state ``error`` (or ``running``) but no row: the next run
deletes that match and plays the block again from its seeded deal, so no deal is counted twice, in the
ladder or in ``cfrkit results``.  Deals and agent seeds depend only on (seed, pair, block), never on
which process ran a block or what ran before, so an interrupted and resumed ladder ends with the same
numbers as an uninterrupted one (tested).  A larger ``deals`` continues a finished ladder.  One run
per database at a time.

**A target interval** (``target_ci``, mbb/h): pairs differ by orders of magnitude in per-deal variance (two
agents that do not read the board: exact AIVAT values, a deviation near 0; random against a blueprint: tens of
thousands), so equal deals per pair waste most of a ladder's time.  With a target every pair first plays
``pilot_blocks`` blocks; from those alone each pair's number of blocks is fixed and played (capped at ``deals``).
Because the count never depends on the blocks after the pilot, the mean keeps no optional-stopping bias, and a
resumed run asks for the same blocks.  The count is Stein's two-stage rule (``pilot_rule="t"``, default): the
pilot's interval carried to the target, ``deals = pilot deals x (t_{k-1} / z)^2 x (pilot ci95 / target)^2`` with
the t quantile of the pilot's ``k`` blocks (:func:`~cfrkit.evaluation.ladder.pilot_factor`), since a pilot's variance
is itself an estimate.  ``pilot_rule="z"`` (the normal quantile, the rule before) gives the plans of ladders run
with it; the t rule never asks fewer blocks, so it reads such a database without dropping a stored block.

*Which ``pilot_blocks``.*  Poker winnings are heavy-tailed: a pilot's variance is more often below the truth than
above, so with the normal rule a pair ends above the target about as often as not.  Measured on the 3,594 stored
blocks of a ladder (7 agents, blocks of 200 deals, target +-50; each rule replayed 400 times on pilots drawn from a
pair's stored blocks; benchmarks/RESULTS.md "The ladder's stored fits, memory and pilot"): with the normal rule and
5 blocks, the six pairs of a blueprint or A^R against a raising agent end above +-52.5 in 43-57% of the replays
(90th percentile +-73 to +-81, as the two pairs of that ladder that ended at +-54 and +-76); with the t rule and
**20 blocks (the default)** in 16-23%, the 90th percentile at +-54 to +-57, for 1.14 times the normal rule's deals
(5 blocks: 2.0 times, 10: 1.33, 40: 1.07).  Pick ``pilot_blocks`` 20 (or more where blocks are small: at least
2,000 pilot deals) and, where the target is a hard bound, ask for 10% below it (``--target-ci 45`` for +-50).  A
pilot larger than a pair needs costs only its own blocks (the exact pairs stop at the pilot).

**Fitted AIVAT values** (``fit_opponent_deals`` > 0, default off): a pair of a blueprint and an agent with
``hand_strategy`` but no value function (A^R, ...) gets AIVAT values from the blueprint's tables against that
agent's policy fitted on that many deals of a separate match (:class:`~cfrkit.evaluation.aivat.AivatObserver`;
~2 CPU s per 1,000 deals plus ~10 CPU s of tables; the fit depends only on the pair's deal seed, so a resumed run
fits the same tables).  The setting is part of such a pair's key, like its estimator and block size: a run with
another value is a separate run of that pair in the same database (other pairs keep their blocks), on the same
hands (the agents' seeds leave the setting out).  **The fitted tables are stored** beside the database
(:func:`fits_dir`: ``ladder.db`` -> ``ladder.fits/``, one directory per pair and fit; ``store_fits``, default on):
the first worker to need them fits and writes them (one ``.npy`` per seat, table and round, 1.2 GB per pair for
the CLI-default cap-2 tree), later workers and resumed runs read them back instead of fitting again.  Each store
carries what its tables depend on (the blueprint's content digest, the opponent's spec, the fit's deals and seed,
the game, :data:`~cfrkit.agents.opponent_values.FIT_FORMAT`) and every file's digest: a stale store (a retrained
blueprint under the same file name) or a corrupt one is fitted again with one line on stderr, never used.  The
tables are used as read-only memory maps of those files, so the numbers are the same bit for bit as a fresh fit's
(tested) and the pages are the page cache's: shared by the workers, not counted against each one's own memory.
A blueprint's self-play tables (the values a pair uses when no fit applies: against another blueprint or random)
are stored there the same way (0.6 GB per blueprint, keyed by its content).  Delete ``ladder.fits/`` to reclaim
the disk; it is refilled on demand.

**Memory** (``cache_gb``, default 2): a worker keeps each value function it has built (a blueprint's self-play
values, its fitted tables against each opponent) with its caches (betting lines, buckets, closing tables), each
bounded, ~0.45 GB when full; a worker of a ladder with three blueprints holds a dozen.  ``cache_gb`` is one budget
over all of them (:func:`cfrkit.agents.blueprint_values.set_cache_budget`, split evenly over the value functions
alive in the worker); the caches only memoize, so the numbers do not depend on it (tested).

**Parallel.**  Blocks run in ``processes`` worker processes or as Ray tasks
(``ray_address``: ``"local"`` or a cluster address; the database path must be reachable by the
workers, which write their blocks themselves: SQLite in WAL mode, as the platform's server workers
do).  Blocks are handed out pair by pair in rounds (block 0 of every pair, then block 1, ...), so a
run stopped early (``minutes``, Ctrl-C) has every pair at about the same number of deals.  On Linux the workers
are forked (``start_method``) after this process has built every agent once, read the self-play tables of the
blueprints the AIVAT pairs use from the store (checking their files' digests once; on a first run building and
storing them once instead of in every worker at the same time) and built the preflop matchup counts: a worker
then starts with them instead of importing and building them itself (1.8-2.3 CPU s per worker for a blueprint
pair; a spawned worker, as elsewhere, does).  The numbers do not depend on how the workers start (tested).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import pickle
import random
import signal
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit._ray import ray_session
from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.agents.blueprint_values import set_cache_budget
from cfrkit.evaluation.aivat import fit_opponent_pair, fit_seed
from cfrkit.evaluation.ladder import (Crosstable, deals_for_interval, derived_seed, pair_result, play_block,
                                     supports_aivat)
from cfrkit.games.base import GameError
from cfrkit.games.holdem.game import HoldemGame
from cfrkit.platform.storage import Store, StoreObserver
from cfrkit.poker.registry import make_agent, parse_spec
from cfrkit.poker.view import poker_view, preflop_matchup_count

__all__ = ["LadderError", "LadderResult", "agent_labels", "fits_dir", "ladder_crosstable", "plot_ladder", "run_ladder"]

LADDER_SCHEMA = """
CREATE TABLE IF NOT EXISTS ladder_blocks (
    pair TEXT NOT NULL, block INTEGER NOT NULL, first_deal INTEGER NOT NULL, deals INTEGER NOT NULL,
    match_id TEXT NOT NULL, duplicate BLOB NOT NULL, aivat BLOB, hands INTEGER NOT NULL,
    cpu_seconds REAL NOT NULL, finished REAL NOT NULL, PRIMARY KEY (pair, block));
"""


#: the default pilot of a target interval (blocks; module docstring)
PILOT_BLOCKS = 20
#: the default memory of a worker's value-function caches, GB (module docstring)
CACHE_GB = 2.0
#: how worker processes may start (``run_ladder``'s ``start_method``)
START_METHODS = ("fork", "spawn", "forkserver")


class LadderError(GameError):
    """A ladder that cannot run as asked (too few or repeated agents, bad sizes, a bad database)."""


# ---------------------------------------------------------------------- agents and pairs
def agent_labels(specs: Sequence[str]) -> List[str]:
    """Short display names of agent specs, also the names stored with the hands (ACPC log lines, so
    no ``:`` or ``|``): ``NAME[ARGUMENT]``, a file argument shown by its base name without extension
    (``blueprint:/runs/bp_s0.npz`` -> ``blueprint[bp_s0]``); the whole argument where two would collide."""
    def label(spec: str, short: bool) -> str:
        name, arg = parse_spec(spec)
        if arg is None:
            return name
        if short and ("/" in arg or arg.endswith(".npz")):
            arg = os.path.splitext(os.path.basename(arg))[0]
        return f"{name}[{arg}]".replace(":", "=").replace("|", "/")

    labels = [label(s, True) for s in specs]
    if len(set(labels)) < len(labels):
        labels = [label(s, False) for s in specs]
    if len(set(labels)) < len(labels):
        raise LadderError(f"agents {', '.join(specs)} do not have distinct names")
    return labels


@dataclass(frozen=True)
class _Pair:
    a: int          # indices into the ladder's specs, a's spec sorts first
    b: int
    key: str        # identity of the pair's match in the database (game, seed, specs, estimator, block size)
    deal_seed: int
    aivat: bool
    fit_opponent_deals: int = 0   # fitted AIVAT values for this pair (0: the agents' own)
    seed_key: str = ""            # what the agents' seeds derive from: ``key`` without the fit setting

    @property
    def match_prefix(self) -> str:
        return "ladder-" + hashlib.blake2b(self.key.encode(), digest_size=6).hexdigest()


def _pairs(specs: Sequence[str], game_string: str, seed: int, block: int, aivat_ok: Sequence[bool],
           aivat: bool, built: Sequence = (), fit_opponent_deals: int = 0) -> List[_Pair]:
    out = []
    n = len(specs)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = sorted((i, j), key=lambda k: specs[k])
            use = bool(aivat and aivat_ok[a] and aivat_ok[b])
            settings = {"game": game_string, "seed": int(seed), "a": specs[a], "b": specs[b],
                        "estimator": "aivat" if use else "duplicate", "block": int(block)}
            seed_key = json.dumps(settings, sort_keys=True)
            fit = int(fit_opponent_deals) if use and fit_opponent_deals and fit_opponent_pair(
                (built[a], built[b])) is not None else 0
            if fit:  # only where it applies: the other pairs keep the keys (and stored blocks) of a run without it
                settings["fit_opponent_deals"] = fit
            key = json.dumps(settings, sort_keys=True)
            out.append(_Pair(a, b, key, derived_seed("deals", seed, specs[a], specs[b]), use, fit, seed_key))
    return out


# ---------------------------------------------------------------------- the database
def fits_dir(db: str) -> str:
    """The directory beside the ladder's database ``db`` that keeps its AIVAT tables (``ladder.db`` ->
    ``ladder.fits/``): ``fit-<digest>/`` per fitted pair (game, specs, fit deals and seed), ``self-<digest>/`` per
    blueprint whose self-play tables a pair uses (game, spec); each with a ``meta.json`` of what it was built from."""
    return os.path.splitext(os.path.abspath(db))[0] + ".fits"


def _open(db: str) -> Store:
    try:
        store = Store(db)
        store.db.executescript(LADDER_SCHEMA)
    except sqlite3.DatabaseError as exc:
        raise LadderError(f"{db}: not a usable database ({exc})") from None
    return store


def _done_blocks(store: Store, key: str) -> Dict[int, tuple]:
    rows = store.db.execute("SELECT block, first_deal, deals, duplicate, aivat, hands, cpu_seconds FROM ladder_blocks "
                            "WHERE pair=? ORDER BY block", (key,)).fetchall()
    return {int(r[0]): r for r in rows}


def _forget_match(store: Store, match_id: str) -> None:
    """Delete an unfinished block's match (its hands, players and totals) so it can be played again;
    the platform tables are those of :data:`cfrkit.platform.storage.SCHEMA`."""
    with store.db:
        store.db.execute("BEGIN IMMEDIATE")
        for table in ("hands", "players", "results"):
            store.db.execute(f"DELETE FROM {table} WHERE match_id=?", (match_id,))
        store.db.execute("DELETE FROM matches WHERE id=?", (match_id,))


# ---------------------------------------------------------------------- one block (runs in a worker)
_AGENTS: Dict[Tuple[str, str], Any] = {}   # per process: built agents, reused by later blocks
_SEEDED: Dict[Tuple[str, str], bool] = {}
_STORES: Dict[Tuple[int, str], Store] = {}   # (process id, database) -> its connection


def _agent(spec: str, game_string: str, seed: int):
    """The agent ``spec`` as if built with ``seed``.  An agent whose randomness is an ``rng`` attribute
    (``random.Random`` or numpy ``Generator``) is built once per process and reseeded for each block
    (a blueprint file is loaded once); one that does not depend on its seed is reused as it is; any
    other is built afresh for each block."""
    key = (spec, game_string)
    cached = _AGENTS.get(key)
    if cached is not None:
        rng = getattr(cached, "rng", None)
        if isinstance(rng, random.Random):
            rng.seed(seed)
            return cached
        if isinstance(rng, np.random.Generator):
            cached.rng = np.random.default_rng(seed)
            return cached
        if not _depends_on_seed(spec, game_string):
            return cached
    agent = make_agent(spec, game=game_string, seed=seed)
    _AGENTS[key] = agent
    return agent


def _depends_on_seed(spec: str, game_string: str) -> bool:
    """Whether two seeds give agents ``spec`` that differ (compared pickled; unpicklable: assume so)."""
    key = (spec, game_string)
    if key not in _SEEDED:
        a, b = (make_agent(spec, game=game_string, seed=s) for s in (1, 2))
        try:
            _SEEDED[key] = pickle.dumps(a) != pickle.dumps(b)
        except Exception:  # an agent pickle cannot take: rebuilding per block is always right
            _SEEDED[key] = True
    return _SEEDED[key]


def ladder_block(task: dict) -> dict:
    """Play one block of one pair and store it (the worker function; ``task`` from :func:`run_ladder`).

    Deletes a match left by an interrupted earlier try of the block, plays the block with a
    :class:`~cfrkit.platform.storage.StoreObserver` attached, then writes the block's row.  Returns
    ``{"pair", "block", "hands", "cpu_seconds"}``."""
    db = task["db"]
    # keyed by process too: a forked worker never uses (nor closes) a connection its parent opened
    where = (os.getpid(), db)
    store = _STORES.get(where)
    if store is None:
        store = _STORES[where] = _open(db)
    match_id = task["match_id"]
    if store.db.execute("SELECT 1 FROM ladder_blocks WHERE pair=? AND block=?",
                        (task["pair"], task["block"])).fetchone():
        return {"pair": task["pair"], "block": task["block"], "hands": 0, "cpu_seconds": 0.0}
    _forget_match(store, match_id)
    if task.get("cache_gb") is not None:  # one budget over the caches of the worker's value functions
        set_cache_budget(1000.0 * float(task["cache_gb"]))
    game = task["game"]
    # the agents' seeds leave the fit setting out: with and without it the same hands are played
    seed_key = task.get("seed_key", task["pair"])
    a = _agent(task["spec_a"], game, derived_seed("agent", task["seed"], task["spec_a"], seed_key, task["block"]))
    b = _agent(task["spec_b"], game, derived_seed("agent", task["seed"], task["spec_b"], seed_key, task["block"]))
    if task.get("fits") and task["aivat"]:
        _stored_values(task, a, b)
    # the stored names are the ladder's labels (two blueprints would both be "blueprint")
    names = (getattr(a, "name", None), getattr(b, "name", None))
    a.name, b.name = task["label_a"], task["label_b"]
    try:
        blk = play_block(game, a, b, task["first_deal"], task["deals"], task["deal_seed"], aivat=task["aivat"],
                         observers=[StoreObserver(store, match_id, batch=256)], time_limit=task["time_limit"],
                         fit_opponent_deals=task.get("fit_opponent_deals", 0))
    finally:
        for agent, name in zip((a, b), names):
            if name is None:
                del agent.name
            else:
                agent.name = name
    with store.db:
        store.db.execute("BEGIN IMMEDIATE")
        store.db.execute("INSERT INTO ladder_blocks(pair, block, first_deal, deals, match_id, duplicate, aivat, hands, "
                         "cpu_seconds, finished) VALUES (?,?,?,?,?,?,?,?,?,?)",
                         (task["pair"], task["block"], blk.first_deal, blk.deals, match_id,
                          blk.duplicate.astype("<f8").tobytes(),
                          None if blk.aivat is None else blk.aivat.astype("<f8").tobytes(), blk.hands,
                          blk.cpu_seconds, time.time()))
    return {"pair": task["pair"], "block": task["block"], "hands": blk.hands, "cpu_seconds": blk.cpu_seconds}


def _fit_slot(p: _Pair, game_string: str) -> str:
    """The directory name of a pair's fitted tables: what the fit depends on besides the blueprint's content and the
    format (those are checked from the stored meta.json): the game, the two specs, the fit's deals and deal seed."""
    return _slot_name("fit-", {"game": game_string, "specs": sorted(json.loads(p.key)[k] for k in ("a", "b")),
                               "deals": p.fit_opponent_deals, "seed": fit_seed(p.deal_seed)})


def _slot_name(prefix: str, what: dict) -> str:
    """``prefix`` + the 16 hex digits of the 8-byte blake2b of ``what`` as JSON with sorted keys: the directory name
    of stored tables under the ladder's fits directory (``fit-`` a pair's fitted tables, ``self-`` a blueprint's
    self-play tables)."""
    return prefix + hashlib.blake2b(json.dumps(what, sort_keys=True).encode(), digest_size=8).hexdigest()


def _stored_values(task: dict, a, b) -> None:
    """Make the blueprint whose tables the block's AIVAT observer will use hold them before it asks, read from the
    ladder's store (``task["fits"]``) or built and stored there, so the observer finds them in the agent's memory
    (the same arguments): a fitted pair's opponent tables
    (:meth:`~cfrkit.agents.blueprint.BlueprintAgent.opponent_value_function` with ``store``, keyed by the blueprint's
    content, the opponent's spec, the fit's deals and seed, the game and the format;
    :func:`~cfrkit.evaluation.aivat.fit_seed` of the pair's deal seed), else the self-play tables of the first agent
    of the pair with a value function when it is a blueprint (``aivat_value_function`` with ``store``)."""
    pair = fit_opponent_pair((a, b)) if task.get("fit_opponent_deals", 0) else None
    if pair is None:
        i, owner = next(((i, x) for i, x in enumerate((a, b)) if hasattr(x, "aivat_value_function")), (None, None))
        if isinstance(owner, BlueprintAgent):
            spec = task["spec_a"] if i == 0 else task["spec_b"]
            slot = _slot_name("self-", {"game": task["game"], "spec": spec})
            owner.aivat_value_function(poker_view(task["game"]), store=os.path.join(task["fits"], slot))
        return
    owner, other = pair
    other_spec = task["spec_b"] if other is getattr(b, "agent", b) else task["spec_a"]
    owner.opponent_value_function(poker_view(task["game"]), other, int(task["fit_opponent_deals"]),
                                  fit_seed(task["deal_seed"]), store=os.path.join(task["fits"], task["fit_slot"]),
                                  opponent_key=other_spec)


# ---------------------------------------------------------------------- the run
@dataclass
class LadderResult:
    """A ladder run: the :class:`~cfrkit.evaluation.ladder.Crosstable` over every stored block (up to
    ``deals`` per pair), and what this run played: ``hands``, ``blocks``, ``seconds`` (wall) and
    ``cpu_seconds`` (the blocks' process time, summed over workers); ``complete``: every pair has its
    ``deals``; ``db``: the database."""

    crosstable: Crosstable
    deals: int
    hands: int
    blocks: int
    seconds: float
    cpu_seconds: float
    complete: bool
    db: str
    stored_blocks: int = 0
    agents: List[str] = field(default_factory=list)
    target_ci: Optional[float] = None

    @property
    def hands_per_second(self) -> float:
        return self.hands / self.seconds if self.seconds > 0 else float("nan")

    @property
    def hands_per_cpu_second(self) -> float:
        return self.hands / self.cpu_seconds if self.cpu_seconds > 0 else float("nan")

    def summary(self) -> str:
        done = "complete" if self.complete else "incomplete: run again to continue"
        lines = [self.crosstable.text(), "",
                 f"this run: {self.hands} hands in {self.blocks} blocks, {self.seconds:.1f} s wall "
                 f"({self.hands_per_second:.1f} hands/s), {self.cpu_seconds:.1f} CPU s "
                 f"({self.hands_per_cpu_second:.1f} hands per CPU s); {self.stored_blocks} blocks stored in "
                 f"{self.db} ({done})"]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        out = self.crosstable.to_dict()
        out.update({"specs": self.agents, "deals": self.deals, "target_ci": self.target_ci,
                    "complete": self.complete, "db": self.db,
                    "run": {"hands": self.hands, "blocks": self.blocks, "seconds": self.seconds,
                            "cpu_seconds": self.cpu_seconds}})
        return out


def _check(specs: Sequence[str], deals: int, block: int, processes: int, fit_opponent_deals: int = 0) -> List[str]:
    specs = [str(s).strip() for s in specs]
    if len(specs) < 2:
        raise LadderError(f"a ladder needs at least two agents, got {len(specs)}")
    seen = set()
    for s in specs:
        if s in seen:
            raise LadderError(f"agent {s!r} is listed twice")
        seen.add(s)
    for name, v in (("deals", deals), ("block", block), ("processes", processes)):
        if int(v) <= 0:
            raise LadderError(f"{name} must be positive, got {v}")
    if int(fit_opponent_deals) < 0:
        raise LadderError(f"fit_opponent_deals must be >= 0, got {fit_opponent_deals}")
    return specs


def _check_pilot(pilot_blocks, pilot_rule) -> None:
    if int(pilot_blocks) <= 0:
        raise LadderError(f"pilot_blocks must be positive, got {pilot_blocks}")
    if pilot_rule not in ("t", "z"):
        raise LadderError(f"pilot_rule must be 't' (Stein's t quantile) or 'z' (the normal one), got {pilot_rule!r}")


def _setup(specs, deals, block, game, seed, aivat, processes=1, fit_opponent_deals=0):
    specs = _check(specs, deals, block, processes, fit_opponent_deals)
    view = poker_view(game)
    game_string = view.game.game_string()
    if not isinstance(view.game, HoldemGame):
        raise LadderError(f"the ladder stores its hands in the platform database, which holds hold'em matches, "
                          f"not {game_string!r}")
    # build every agent once now: an unknown name, a missing file or a game mismatch fails before any hand
    built = [make_agent(s, game=view.game, seed=0) for s in specs]
    pairs = _pairs(specs, game_string, seed, block, [supports_aivat(a) for a in built], aivat, built,
                   fit_opponent_deals)
    return specs, view, game_string, pairs


def ladder_crosstable(db: str, specs: Sequence[str], deals: int, *, game="holdem", seed: int = 0, block: int = 50,
                      aivat: bool = True, fit_opponent_deals: int = 0, target_ci: Optional[float] = None,
                      pilot_blocks: int = PILOT_BLOCKS, pilot_rule: str = "t") -> Tuple[Crosstable, bool, int]:
    """The crosstable of a ladder's stored blocks (the first ``ceil(deals / block)`` blocks of each
    pair, or with ``target_ci`` the blocks each pair's pilot asks for, as :func:`run_ladder`), read from
    ``db``; ``(crosstable, complete, stored blocks)``.  Nothing is played."""
    _check_pilot(pilot_blocks, pilot_rule)
    specs, view, game_string, pairs = _setup(specs, deals, block, game, seed, aivat, 1, fit_opponent_deals)
    store = _open(db)
    try:
        return _crosstable(store, specs, pairs, _needed(store, specs, pairs, deals, block, target_ci, pilot_blocks,
                                                        pilot_rule))
    finally:
        store.close()


def _needed(store: Store, specs, pairs: List[_Pair], deals: int, block: int, target_ci: Optional[float],
            pilot_blocks: int, pilot_rule: str = "t") -> Dict[str, int]:
    """Blocks per pair: all ``ceil(deals / block)``, or with ``target_ci`` those its pilot asks for."""
    nblocks = -(-int(deals) // int(block))
    if target_ci is None:
        return {p.key: nblocks for p in pairs}
    return _needed_for_target(store, specs, pairs, min(int(pilot_blocks), nblocks), block, nblocks, target_ci,
                              pilot_rule)


def _crosstable(store: Store, specs, pairs: List[_Pair], needed: Dict[str, int]) -> Tuple[Crosstable, bool, int]:
    """The crosstable of the first ``needed[pair key]`` blocks of each pair."""
    labels = agent_labels(specs)
    results = {}
    complete = True
    stored = 0
    for p in pairs:
        nblocks = needed[p.key]
        done = _done_blocks(store, p.key)
        rows = [done[k] for k in range(nblocks) if k in done]
        stored += len(rows)
        complete &= len(rows) == nblocks
        if not rows:
            continue
        dup = np.concatenate([np.frombuffer(r[3], dtype="<f8") for r in rows])
        av = np.concatenate([np.frombuffer(r[4], dtype="<f8") for r in rows]) if p.aivat else None
        results[(p.a, p.b)] = pair_result(labels[p.a], labels[p.b], dup, av)
    return Crosstable(labels, results), complete, stored


def _schedule(store: Store, pairs: List[_Pair], needed: Dict[str, int]) -> Iterator[Tuple[_Pair, int]]:
    """The blocks still to play, in rounds (block k of every pair that needs it, then k + 1, ...)."""
    done = {p.key: _done_blocks(store, p.key) for p in pairs}
    for k in range(max(needed.values(), default=0)):
        for p in pairs:
            if k < needed[p.key] and k not in done[p.key]:
                yield p, k


def _needed_for_target(store: Store, specs, pairs: List[_Pair], pilot: int, block: int, cap: int,
                       target_ci: float, pilot_rule: str = "t") -> Dict[str, int]:
    """Blocks per pair for a 95% half-width of ``target_ci`` mbb/h, from its first ``pilot`` blocks (Stein's
    two-stage rule, :func:`~cfrkit.evaluation.ladder.deals_for_interval`, with the t quantile of the pilot's
    blocks for ``pilot_rule`` "t", the normal one for "z"), between ``pilot`` and ``cap``; a pair whose pilot is
    not all stored yet keeps ``pilot``.  A one-block pilot under the t rule plays ``cap`` (no variance to carry)."""
    labels = agent_labels(specs)
    out = {}
    for p in pairs:
        done = _done_blocks(store, p.key)
        rows = [done[k] for k in range(pilot) if k in done]
        if len(rows) < pilot:
            out[p.key] = pilot
            continue
        dup = np.concatenate([np.frombuffer(r[3], dtype="<f8") for r in rows])
        av = np.concatenate([np.frombuffer(r[4], dtype="<f8") for r in rows]) if p.aivat else None
        if pilot_rule == "t" and pilot < 2:
            out[p.key] = cap
            continue
        deals = deals_for_interval(pair_result(labels[p.a], labels[p.b], dup, av), target_ci,
                                   pilot if pilot_rule == "t" else None)
        out[p.key] = min(cap, max(pilot, -(-deals // block)))
    return out


def run_ladder(specs: Sequence[str], deals: int, db: str, *, game="holdem", seed: int = 0, block: int = 50,
               processes: int = 1, ray_address: Optional[str] = None, aivat: bool = True,
               minutes: Optional[float] = None, progress: bool = False,
               time_limit: float = float("inf"), stop: Optional[Callable[[], bool]] = None,
               fit_opponent_deals: int = 0, target_ci: Optional[float] = None,
               pilot_blocks: int = PILOT_BLOCKS, pilot_rule: str = "t", store_fits: bool = True,
               cache_gb: Optional[float] = CACHE_GB, start_method: Optional[str] = None) -> LadderResult:
    """Play every pair of ``specs`` (registry specs, at least two) over ``deals`` duplicate deals each
    (rounded up to whole blocks of ``block`` deals; each deal is 2 hands), storing hands and blocks in
    the SQLite file ``db``; blocks already stored are not played again (see the module docstring).

    Args:
        game: heads-up hold'em (any 2-player hold'em definition; the platform stores hold'em only).
        seed: ladder seed: each pair's deal seed and each block's agent seeds derive from it.
        processes: worker processes (1: in this process); ``ray_address``: Ray instead.
        aivat: AIVAT for the pairs whose two agents support it (else duplicate everywhere, faster).
        minutes: start no new block after this many minutes (finished blocks are kept).
        stop: called between blocks; once it returns True no new block starts (the CLI's SIGTERM /
            first Ctrl-C), the blocks under way finish and the result covers what is stored.
        progress: a tqdm bar over the blocks to play.
        time_limit: seconds an agent may take per answer.
        fit_opponent_deals: > 0: fitted AIVAT values for the pairs of a blueprint and an agent with
            ``hand_strategy`` but no value function (module docstring); 0 (default): off.
        store_fits: keep the fitted tables and the blueprints' self-play tables beside the database
            (:func:`fits_dir`), read back (memory-mapped) by later blocks, workers and runs instead of built again
            (default True; module docstring).
        cache_gb: the memory (GB) of each worker's value-function caches together
            (:func:`cfrkit.agents.blueprint_values.set_cache_budget`, split over the value functions it holds;
            default 2; None: each cache's own bound, ~0.45 GB per value function).  The numbers do not depend on it.
        target_ci: play each pair until its 95% interval should be this half-width (mbb/h): every pair first
            plays ``pilot_blocks`` blocks, then the blocks its pilot's variance asks for (Stein's two-stage
            rule, :func:`~cfrkit.evaluation.ladder.deals_for_interval`), at most ``deals``; the crosstable
            then counts each pair's own number of blocks.  None (default): ``deals`` for every pair.
        pilot_blocks: the pilot's blocks (default 20; the module docstring says which to pick).
        pilot_rule: ``"t"`` (default): the pilot's interval carried with the t quantile of ``pilot_blocks - 1``
            degrees of freedom (:func:`~cfrkit.evaluation.ladder.pilot_factor`); ``"z"``: with the normal one, the
            plans of databases run before the t rule (which never asks fewer blocks than "z", so it resumes such a
            database without leaving out a stored block).
        start_method: how the ``processes`` workers start: None (default) ``"fork"`` on Linux, forked after this
            process has built the agents and the blueprints' self-play tables once (module docstring), else
            ``"spawn"`` (each worker imports and builds them itself); or one of :data:`START_METHODS`.  The numbers do
            not depend on it.

    Returns a :class:`LadderResult`.  Ctrl-C stops the run; finished blocks stay stored (the
    ``KeyboardInterrupt`` propagates).  Raises :class:`LadderError` / ``RegistryError`` (one line)
    for bad input before any hand is played.
    """
    deals, block, processes = int(deals), int(block), int(processes)
    if target_ci is not None and not (isinstance(target_ci, (int, float)) and math.isfinite(target_ci)
                                      and target_ci > 0):
        raise LadderError(f"target_ci must be a positive number of mbb/h, got {target_ci!r}")
    _check_pilot(pilot_blocks, pilot_rule)
    if cache_gb is not None and not (isinstance(cache_gb, (int, float)) and math.isfinite(cache_gb) and cache_gb > 0):
        raise LadderError(f"cache_gb must be a positive number of GB (or None), got {cache_gb!r}")
    method = _start_method(start_method)
    specs, view, game_string, pairs = _setup(specs, deals, block, game, seed, aivat, processes, fit_opponent_deals)
    labels = agent_labels(specs)
    nblocks = -(-deals // block)
    store = _open(db)
    fits = fits_dir(db) if store_fits else None

    def tasks_for(needed: Dict[str, int]) -> List[dict]:
        return [{"db": os.path.abspath(db), "game": game_string, "seed": int(seed), "pair": p.key, "block": k,
                 "match_id": f"{p.match_prefix}-{k:05d}", "spec_a": specs[p.a], "spec_b": specs[p.b],
                 "label_a": labels[p.a], "label_b": labels[p.b], "first_deal": k * block, "deals": block,
                 "deal_seed": p.deal_seed, "aivat": p.aivat, "time_limit": float(time_limit),
                 "fit_opponent_deals": p.fit_opponent_deals, "seed_key": p.seed_key,
                 "fits": fits, "fit_slot": _fit_slot(p, game_string), "cache_gb": cache_gb}
                for p, k in _schedule(store, pairs, needed)]

    # with a target, the pilot blocks come first: the rest of each pair's blocks depend on them
    first = _needed(store, specs, pairs, deals, block, None, pilot_blocks) if target_ci is None else \
        {p.key: min(int(pilot_blocks), nblocks) for p in pairs}
    tasks = tasks_for(first)
    deadline = None if minutes is None else time.monotonic() + 60.0 * float(minutes)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(tasks), desc=f"ladder of {len(specs)} agents", unit="block")
    played = {"hands": 0, "blocks": 0, "cpu": 0.0}

    def finish(out: dict) -> None:
        played["hands"] += out["hands"]
        played["blocks"] += 1 if out["hands"] else 0
        played["cpu"] += out["cpu_seconds"]
        if bar is not None:
            bar.update(1)

    def more() -> bool:
        if stop is not None and stop():
            return False
        return deadline is None or time.monotonic() < deadline

    def execute(batch: List[dict]) -> None:
        if ray_address:
            _run_ray(batch, processes, ray_address, finish, more)
        elif processes > 1 and len(batch) > 1:
            _run_processes(batch, processes, finish, more, method)
        else:
            for t in batch:
                if not more():
                    break
                finish(ladder_block(t))

    t0 = time.perf_counter()
    budget = set_cache_budget(None)  # blocks run in this process set it: put back the caller's afterwards
    set_cache_budget(budget)
    try:
        execute(tasks)
        if target_ci is not None and more():
            rest = tasks_for(_needed(store, specs, pairs, deals, block, target_ci, pilot_blocks, pilot_rule))
            if bar is not None:
                bar.total += len(rest)
                bar.refresh()
            execute(rest)
    finally:
        set_cache_budget(budget)
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - t0
    table, complete, stored = _crosstable(store, specs, pairs,
                                          _needed(store, specs, pairs, deals, block, target_ci, pilot_blocks,
                                                  pilot_rule))
    store.close()
    return LadderResult(table, nblocks * block, played["hands"], played["blocks"], seconds, played["cpu"], complete,
                        str(db), stored, list(specs), target_ci)


def _start_method(requested: Optional[str]) -> str:
    """How worker processes start: ``requested``, or by default ``"fork"`` on Linux (the workers begin with what
    :func:`_prepare_workers` built in this process) and ``"spawn"`` elsewhere (macOS and Windows: fork is unsafe or
    missing there)."""
    if requested is None:
        return "fork" if sys.platform.startswith("linux") else "spawn"
    if requested not in START_METHODS:
        raise LadderError(f"start_method must be one of {', '.join(START_METHODS)} (or None), got {requested!r}")
    return requested


def _prepare_workers(tasks: List[dict]) -> None:
    """Build in this process, before worker processes are forked from it, what each worker would otherwise build
    for itself at its first blocks (1.8-2.3 CPU s per worker for a blueprint pair with its stored self-play tables,
    benchmarks/RESULTS.md "Matches at speed, part 13"): every spec's agent (:func:`_agent`'s per-process cache, a
    blueprint file loaded once), the self-play tables of the blueprints the AIVAT pairs use (read from the ladder's
    store and their files' digests checked once, or built and stored there once instead of by every worker at the
    same time: :func:`_stored_values`), and the preflop matchup counts behind the hold'em view's equities.  Fitted
    opponent tables (``fit_opponent_deals``) are left to the workers: they fit different pairs at the same time.
    Only memoizes: the blocks' numbers do not depend on it (agents are reseeded per block as before)."""
    if not tasks:
        return
    built = set()
    pairs = set()
    aivat = False
    for t in tasks:
        game = t["game"]
        for spec in (t["spec_a"], t["spec_b"]):
            if (spec, game) not in built:
                built.add((spec, game))
                _agent(spec, game, 0)
        aivat |= bool(t["aivat"])
        if t["pair"] in pairs:
            continue
        pairs.add(t["pair"])
        if t.get("fits") and t["aivat"] and not t.get("fit_opponent_deals", 0):
            _stored_values(t, _AGENTS[(t["spec_a"], game)], _AGENTS[(t["spec_b"], game)])
    if aivat and isinstance(poker_view(tasks[0]["game"]).game, HoldemGame):
        preflop_matchup_count(0, 1, 2, 3)  # builds the process's table of exact preflop counts (once)


def _forked_worker() -> None:
    """A forked worker's start: the signal handlers a spawned worker has (the parent's, e.g. the CLI's graceful stop,
    would keep a worker playing on after Ctrl-C)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _run_processes(tasks: List[dict], processes: int, finish, more, start_method: str = "spawn") -> None:
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    fork = start_method == "fork"
    if fork:
        _prepare_workers(tasks)
    pool = ProcessPoolExecutor(max_workers=processes, mp_context=mp.get_context(start_method),
                               initializer=_forked_worker if fork else None)
    queue = iter(tasks)
    running = set()
    try:
        # two blocks in flight per worker: a worker never waits for the parent, and a stop (minutes,
        # Ctrl-C) leaves few blocks to finish
        for t in queue:
            running.add(pool.submit(ladder_block, t))
            if len(running) >= 2 * processes:
                break
        while running:
            finished, running = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                finish(fut.result())
                if more():
                    nxt = next(queue, None)
                    if nxt is not None:
                        running.add(pool.submit(ladder_block, nxt))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _run_ray(tasks: List[dict], processes: int, address: str, finish, more) -> None:
    with ray_session(address, processes, LadderError) as ray:
        remote = ray.remote(num_cpus=1)(ladder_block)
        queue = iter(tasks)
        pending = [remote.remote(t) for _, t in zip(range(2 * max(1, processes)), queue)]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for r in ready:
                finish(ray.get(r))
                if more():
                    nxt = next(queue, None)
                    if nxt is not None:
                        pending.append(remote.remote(nxt))


# ---------------------------------------------------------------------- the picture
def plot_ladder(table: Crosstable, path: str, title: Optional[str] = None) -> str:
    """PNG: the crosstable as a heat map (mbb/h of the row agent, +- 95% in each cell) beside the
    ratings with their 95% intervals.  Needs matplotlib (extra ``plots``)."""
    try:
        import matplotlib  # an optional extra: only the picture needs it

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise LadderError("the ladder's PNG needs matplotlib (pip install 'cfrkit[plots]')") from None
    order = table.order()
    names = [table.names[i] for i in order]
    mean, ci = table.matrix()
    mean, ci = mean[np.ix_(order, order)], ci[np.ix_(order, order)]
    n = len(names)
    fig, (ax, axr) = plt.subplots(1, 2, figsize=(6 + 1.3 * n, 1.2 + 0.75 * n),
                                  gridspec_kw={"width_ratios": [max(n, 2), 3]})
    finite = np.abs(mean[np.isfinite(mean)])
    lim = float(np.percentile(finite, 90)) if finite.size else 1.0
    im = ax.imshow(np.nan_to_num(mean), cmap="RdBu", vmin=-max(lim, 1.0), vmax=max(lim, 1.0))
    for i in range(n):
        for j in range(n):
            if np.isfinite(mean[i, j]):
                dark = abs(mean[i, j]) > 0.6 * max(lim, 1.0)   # white on the saturated cells
                ax.text(j, i, f"{mean[i, j]:+.0f}\n+-{ci[i, j]:.0f}", ha="center", va="center", fontsize=7,
                        color="white" if dark else "black")
    ax.set_xticks(range(n), names, rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(n), names, fontsize=8)
    ax.set_title("row vs column, mbb/h (95%)", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    r = [table.ratings[i] for i in order]
    y = np.arange(n)
    axr.errorbar([x.mean for x in r], y, xerr=[x.ci95 if math.isfinite(x.ci95) else 0 for x in r], fmt="o",
                 capsize=3)
    axr.axvline(0, color="grey", lw=0.5)
    axr.set_yticks(y, names, fontsize=8)
    axr.invert_yaxis()
    axr.set_xlabel("mbb/h against the field (95%)", fontsize=8)
    axr.set_title("rating", fontsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
