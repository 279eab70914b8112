"""CFR+ with public chance sampling on the abstract heads-up no-limit game: the blueprint trainer.

An iteration samples ``boards_per_iteration`` complete boards (a function of ``(seed, iteration)``,
so a resumed run repeats exactly what an uninterrupted one does), then, for seat 0 and then seat 1,
walks the betting tree once per board with vectors over the live hands (``pyx/blueprint_cfr.pyx``):
regret matching+ per (betting node, bucket), regrets floored at zero, the average strategy weighted
by the iteration number (CFR+'s linear averaging).  With one board per iteration the update is in
place; with more (threads or Ray workers) every board's regret and strategy-sum deltas are computed
against the same current strategy; each worker sums its share of the boards, the driver adds the
workers' sums in worker order and then floors the regrets.  A run is therefore deterministic for a
given number of workers (timing never matters); other worker counts agree to float32 rounding.

Memory: two float32 arrays (regrets, strategy sums) of ``sum over decision nodes of buckets(round) x
actions`` entries: 8 bytes per (information set, action).  :meth:`BlueprintTrainer.memory_bytes`.
"""
from __future__ import annotations

import json
import os
import signal
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import numpy as np

from cfrkit._io import atomic_open
from cfrkit._ray import import_ray, join_ray
from cfrkit.solvers.blueprint.abstraction_spec import (DEFAULT_ABSTRACTION, abstraction_fingerprint,
                                                       abstraction_from_spec, check_holdem_abstraction)
from cfrkit.solvers.blueprint.betting_tree import (DEFAULT_BETS, DEFAULT_GAME, DEFAULT_RAISE_CAP, BettingTree,
                                                   BlueprintError, build_betting_tree)
from cfrkit.solvers.blueprint.boards import board_inputs, sample_boards

CHECKPOINT_MAGIC = "cfrkit-blueprint"
CHECKPOINT_VERSION = 1
_HEADER_FIELDS = ("game", "bets", "raise_cap", "tree", "abstraction", "abstraction_id", "num_buckets", "seed",
                  "boards_per_iteration", "iterations", "nodes", "seconds", "total_slots")
#: The blueprint tree's per-node arrays a checkpoint stores (as ``tree_<name>`` members), in file order.
TREE_FIELDS = ("kind", "player", "round", "child_start", "num_children", "spent", "action_kind", "raise_to",
                "pot_fraction", "is_allin")


def _kernel():
    from cfrkit._kernels import blueprint_cfr

    return blueprint_cfr


class BoardWorker:
    """Computes one board's traversal against given regrets (used in-process, in threads and as a Ray actor)."""

    def __init__(self, tree: BettingTree, abstraction, slot: np.ndarray):
        self.tree = tree
        self.abstraction = abstraction
        self.slot = slot
        self.max_actions = int(tree.num_children.max())
        self.max_depth = int(_kernel().tree_depth(tree.kind, tree.child_start, tree.num_children))
        self.max_buckets = int(max(abstraction.num_buckets(r) for r in range(4)))

    def inputs(self, board):
        return board_inputs(self.abstraction, board)

    def traverse(self, inputs, traverser: int, weight: float, regrets_in: np.ndarray, regrets_out: np.ndarray,
                 strategy_out: np.ndarray, in_place: bool, root_reach: Optional[np.ndarray] = None) -> int:
        """One kernel walk; ``root_reach`` (float64[1326], default all ones) weights both players' hands."""
        t = self.tree
        L = inputs.hands.size
        own = np.ones(L) if root_reach is None else np.ascontiguousarray(root_reach[inputs.hands], dtype=np.float64)
        opp = own.copy()
        values = np.zeros(L)
        return int(_kernel().traverse(t.kind, t.player, t.round, t.child_start, t.num_children, t.spent, self.slot,
                                      self.max_actions, self.max_depth, inputs.cards, inputs.bucket, inputs.groups,
                                      inputs.present, inputs.num_present, self.max_buckets, int(traverser),
                                      float(weight), regrets_in, regrets_out, strategy_out, bool(in_place), own, opp,
                                      values))

    def deltas(self, boards: np.ndarray, traverser: int, weight: float, regrets: np.ndarray):
        """``(regret delta, strategy-sum delta, nodes)`` of ``boards`` against ``regrets`` (float32 arrays)."""
        d_reg = np.zeros_like(regrets)
        d_str = np.zeros_like(regrets)
        nodes = 0
        for board in boards:
            nodes += self.traverse(self.inputs(board), traverser, weight, regrets, d_reg, d_str, False)
        return d_reg, d_str, nodes


@dataclass
class TrainStats:
    """Counters of a run (kept across resumes): iterations, tree nodes visited, seconds of training (wall),
    evaluations, and process CPU seconds of training (all threads; counted by :func:`train`)."""

    iterations: int = 0
    nodes: int = 0
    seconds: float = 0.0
    evaluations: List[Dict] = field(default_factory=list)
    cpu_seconds: float = 0.0


def stats_from_header(header: Dict) -> TrainStats:
    """The counters a checkpoint's header records (``cpu_seconds`` is 0 in files from before it)."""
    return TrainStats(int(header["iterations"]), int(header["nodes"]), float(header["seconds"]),
                      list(header.get("evaluations", [])), float(header.get("cpu_seconds", 0.0)))


class BlueprintTrainer:
    """CFR+ on an abstract heads-up no-limit game (see the module docstring).

    Args:
        game: a heads-up no-limit ``holdem`` game string (default ACPC 20000 stacks, 50/100 blinds).
        bets: pot-fraction sizes (:mod:`cfrkit.games.holdem.abstraction` syntax; default half pot and pot;
            all-in always offered).
        raise_cap: raises per round before only fold / call / all-in remain.
        abstraction: a card abstraction object or a spec (``ehs:169,50,50,50``, ``emd:DIR``, ``default``).
        seed: seed of the board sampling.
        boards_per_iteration: boards per iteration (default: the number of workers).
        workers: threads computing boards (the kernel releases the GIL).
        ray_address: run the boards on Ray actors instead (``"local"`` starts a local instance).
    """

    #: the traversal, recorded in checkpoints (``cfr+`` files from before the field have none)
    algorithm = "cfr+"

    def __init__(self, game: str = DEFAULT_GAME, bets: str = DEFAULT_BETS, raise_cap: int = DEFAULT_RAISE_CAP,
                 abstraction=DEFAULT_ABSTRACTION, seed: int = 0, boards_per_iteration: Optional[int] = None,
                 workers: int = 1, ray_address: Optional[str] = None, tree: Optional[BettingTree] = None,
                 _allocate: bool = True):
        if int(workers) < 1:
            raise BlueprintError(f"workers must be at least 1, got {workers}")
        self.abstraction_spec = abstraction if isinstance(abstraction, str) else getattr(
            abstraction, "spec", f"object:{type(abstraction).__name__}")
        self.abstraction = abstraction_from_spec(abstraction) if isinstance(abstraction, str) else abstraction
        check_holdem_abstraction(self.abstraction, self.abstraction_spec)
        self.tree = tree if tree is not None else build_betting_tree(game, bets, raise_cap)
        self.num_buckets = tuple(int(self.abstraction.num_buckets(r)) for r in range(4))
        self.slot, self.total = self.tree.slots(self.num_buckets)
        self.seed = int(seed)
        self.workers = int(workers)
        self.boards_per_iteration = int(boards_per_iteration or workers)
        if self.boards_per_iteration < 1:
            raise BlueprintError("boards_per_iteration must be at least 1")
        self.abstraction_id = abstraction_fingerprint(self.abstraction)
        # subclasses with other table layouts allocate their own (_allocate=False: no full float32 tables)
        size = self.total if _allocate else 0
        self.regrets = np.zeros(size, dtype=np.float32)
        self.strategy_sum = np.zeros(size, dtype=np.float32)
        self.stats = TrainStats()
        self.worker = BoardWorker(self.tree, self.abstraction, self.slot)
        self.ray_address = ray_address
        self._ray_actors = None
        self._pool = ThreadPoolExecutor(self.workers) if self.workers > 1 and ray_address is None else None

    # ------------------------------------------------------------------ sizes
    @property
    def iterations(self) -> int:
        return self.stats.iterations

    def num_information_sets(self) -> int:
        """Decision nodes x buckets of their round."""
        dec = self.tree.kind == 0
        return int(np.asarray(self.num_buckets, dtype=np.int64)[self.tree.round[dec]].sum())

    def memory_bytes(self) -> int:
        """Bytes of the regret and strategy-sum arrays (float32 each)."""
        return int(self.regrets.nbytes + self.strategy_sum.nbytes)

    # ------------------------------------------------------------------ iterations
    def iterate(self, count: int = 1) -> None:
        """Run ``count`` more iterations."""
        for _ in range(int(count)):
            t = self.stats.iterations + 1
            boards = sample_boards(self.seed, t, self.boards_per_iteration)
            start = time.perf_counter()
            for traverser in (0, 1):
                self.stats.nodes += self._update(boards, traverser, float(t))
            self.stats.seconds += time.perf_counter() - start
            self.stats.iterations = t

    def _update(self, boards: np.ndarray, traverser: int, weight: float) -> int:
        if len(boards) == 1 and self._ray_actors is None and self.ray_address is None:
            inputs = self.worker.inputs(boards[0])
            return self.worker.traverse(inputs, traverser, weight, self.regrets, self.regrets, self.strategy_sum,
                                        True)
        if self.ray_address is not None:
            results = self._ray_deltas(boards, traverser, weight)
        else:
            chunks = np.array_split(boards, min(self.workers, len(boards)))
            if self._pool is not None:
                results = list(self._pool.map(lambda b: self.worker.deltas(b, traverser, weight, self.regrets), chunks))
            else:
                results = [self.worker.deltas(b, traverser, weight, self.regrets) for b in chunks]
        nodes = 0
        for d_reg, d_str, n in results:  # fixed order: the sum does not depend on timing
            self.regrets += d_reg
            self.strategy_sum += d_str
            nodes += n
        np.maximum(self.regrets, 0, out=self.regrets)
        return nodes

    # ------------------------------------------------------------------ Ray
    def _ray_deltas(self, boards, traverser, weight):
        ray = import_ray(BlueprintError)
        if self._ray_actors is None:
            join_ray(self.ray_address, self.workers, BlueprintError)   # the session stays for the trainer's life
            actor_cls = ray.remote(num_cpus=1)(_RayBoardWorker)
            spec = self.abstraction_spec if not self.abstraction_spec.startswith("object:") else None
            payload = None if spec is not None else self.abstraction
            self._ray_actors = [actor_cls.remote(self.tree, spec, payload, self.slot) for _ in range(self.workers)]
        regrets_ref = ray.put(self.regrets)  # one broadcast per update, read-only in the actors
        chunks = np.array_split(boards, min(len(self._ray_actors), len(boards)))
        futures = [actor.deltas.remote(chunk, traverser, weight, regrets_ref)
                   for actor, chunk in zip(self._ray_actors, chunks)]
        return ray.get(futures)

    def close(self) -> None:
        """Stop the thread pool and Ray actors (if any)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        if self._ray_actors is not None:
            import ray

            for a in self._ray_actors:
                ray.kill(a)
            self._ray_actors = None

    # ------------------------------------------------------------------ strategy
    def full_strategy(self) -> np.ndarray:
        """float32[total]: the strategy array in the regret layout that files store and agents read (here the
        strategy sums themselves, not a copy)."""
        return self.strategy_sum

    def average_strategy(self, node: int, buckets: np.ndarray) -> np.ndarray:
        """float64[len(buckets), actions]: the average strategy of ``node`` for each bucket."""
        nodes = np.full(len(buckets), int(node), dtype=np.int32)
        out = _kernel().average_strategy_rows(self.strategy_sum, self.slot, self.tree.num_children, nodes,
                                              np.asarray(buckets, dtype=np.int32))
        return out[:, :int(self.tree.num_children[node])]

    # ------------------------------------------------------------------ files
    def header(self) -> Dict:
        t = self.tree
        return {"magic": CHECKPOINT_MAGIC, "version": CHECKPOINT_VERSION, "algorithm": self.algorithm,
                "game": t.game_string, "bets": t.bets,
                "raise_cap": t.raise_cap, "tree": t.fingerprint(), "abstraction": self.abstraction_spec,
                "abstraction_id": self.abstraction_id, "num_buckets": list(self.num_buckets),
                "seed": self.seed, "boards_per_iteration": self.boards_per_iteration,
                "iterations": self.stats.iterations, "nodes": self.stats.nodes, "seconds": self.stats.seconds,
                "cpu_seconds": self.stats.cpu_seconds, "evaluations": self.stats.evaluations,
                "total_slots": self.total}

    def save(self, path: str, strategy_only: bool = False) -> None:
        """Write a checkpoint atomically (temporary file, then rename): tree, regrets, strategy sums, counters.

        ``strategy_only`` leaves the regrets out (a smaller file that can be played, not resumed).
        """
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        header = self.header()
        header["strategy_only"] = bool(strategy_only)
        arrays = {f"tree_{name}": getattr(self.tree, name) for name in TREE_FIELDS}
        arrays["strategy_sum"] = self.strategy_sum
        if not strategy_only:
            arrays["regrets"] = self.regrets
        with atomic_open(path, "wb") as f:
            np.savez(f, __header__=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)

    @classmethod
    def load(cls, path: str, abstraction=None, workers: int = 1, ray_address: Optional[str] = None,
             boards_per_iteration: Optional[int] = None) -> "BlueprintTrainer":
        """Resume from a checkpoint.  Raises :class:`BlueprintError` for a corrupt or truncated file, a
        file of another kind, or a card abstraction other than the one it was trained with."""
        header, data, tree, spec = cls._open_for_resume(path, abstraction)
        trainer = cls._for_checkpoint(path, header, tree, spec, workers, ray_address, boards_per_iteration)
        return trainer._restore(path, header, data)

    @classmethod
    def _for_checkpoint(cls, path: str, header: Dict, tree: BettingTree, spec, workers: int,
                        ray_address: Optional[str], boards_per_iteration: Optional[int]) -> "BlueprintTrainer":
        """A trainer with the settings of a checkpoint's header (its tables not read yet); subclasses read
        their own settings."""
        return cls(game=header["game"], bets=header["bets"], raise_cap=header["raise_cap"], abstraction=spec,
                   seed=header["seed"], boards_per_iteration=boards_per_iteration or header["boards_per_iteration"],
                   workers=workers, ray_address=ray_address, tree=tree)

    @classmethod
    def _open_for_resume(cls, path: str, abstraction=None, arrays=("regrets", "strategy_sum")):
        """``(header, arrays, tree, abstraction spec)`` of a checkpoint this class can resume, or BlueprintError."""
        header, data = read_checkpoint(path, arrays=arrays)
        if header.get("strategy_only"):
            raise BlueprintError(f"{path}: a strategy-only file (no regrets); it can be played, not resumed")
        found = header.get("algorithm", "cfr+")
        if found != cls.algorithm:
            raise BlueprintError(f"{path} was trained with {found}, not {cls.algorithm}; resume it with "
                                 f"--algorithm {found}")
        tree = tree_from_arrays(header, data)
        spec = abstraction if abstraction is not None else header["abstraction"]
        if isinstance(spec, str) and spec.startswith("object:"):
            raise BlueprintError(f"{path} was trained with an abstraction object; pass the same object to resume")
        return header, data, tree, spec

    def _restore(self, path: str, header: Dict, data: Dict) -> "BlueprintTrainer":
        """Take the regrets, strategy sums and counters of a checkpoint (checked against this trainer)."""
        trainer = self
        check_abstraction(path, header, trainer.abstraction_id, trainer.num_buckets)
        regrets = data["regrets"]
        strategy = data["strategy_sum"]
        if regrets.shape != (trainer.total,) or strategy.shape != (trainer.total,) or regrets.dtype != np.float32:
            raise BlueprintError(f"{path}: regret arrays of shape {regrets.shape} do not fit the tree and "
                                 f"abstraction ({trainer.total} entries)")
        trainer.regrets = np.ascontiguousarray(regrets)
        trainer.strategy_sum = np.ascontiguousarray(strategy)
        trainer.stats = stats_from_header(header)
        return trainer


def read_checkpoint(path: str, arrays=("regrets", "strategy_sum")):
    """``(header, {name: array})`` of a blueprint file, every named array read (and CRC-checked)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such blueprint file: {path}")
    try:
        with np.load(path, allow_pickle=False) as z:
            if "__header__" not in z.files:
                raise BlueprintError(f"{path}: not a cfrkit blueprint file (no header)")
            header = json.loads(bytes(z["__header__"]).decode())
            if not isinstance(header, dict):
                raise BlueprintError(f"{path}: not a cfrkit blueprint file (its header is not a JSON object)")
            if header.get("magic") != CHECKPOINT_MAGIC:
                raise BlueprintError(f"{path}: expected a {CHECKPOINT_MAGIC} file, found {header.get('magic')!r}")
            if header.get("version", 0) > CHECKPOINT_VERSION:
                raise BlueprintError(f"{path}: blueprint file version {header.get('version')} is newer than this "
                                     f"cfrkit")
            resume_only = ("regrets", "averaged_sums")  # absent from strategy-only files
            wanted = [f"tree_{n}" for n in TREE_FIELDS] + [a for a in arrays
                                                             if not (a in resume_only and header.get("strategy_only"))]
            absent = [k for k in _HEADER_FIELDS if k not in header]
            if absent:
                raise BlueprintError(f"{path}: the blueprint header lacks {', '.join(absent)} (corrupt file)")
            missing = [k for k in wanted if k not in z.files]
            if missing:
                raise BlueprintError(f"{path}: missing arrays {missing} (truncated or corrupt file)")
            data = {k: z[k] for k in wanted}
            for k in ("regrets", "strategy_sum", "averaged_sums"):
                # pluribus files may keep int32 regrets (chips); every other array is float32
                allowed = (np.float32, np.int32) if k == "regrets" and header.get("algorithm") == "pluribus" else (
                    np.float32,)
                if k in data and (data[k].dtype not in allowed or data[k].ndim != 1):
                    raise BlueprintError(f"{path}: {k} must be a {' or '.join(np.dtype(a).name for a in allowed)} "
                                         f"vector, found {data[k].dtype} of shape {data[k].shape} (corrupt or "
                                         f"foreign file)")
    except BlueprintError:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError, json.JSONDecodeError) as exc:
        raise BlueprintError(f"{path}: corrupt or truncated blueprint file ({type(exc).__name__}: {exc})") from None
    return header, data


def tree_from_arrays(header: Dict, data: Dict) -> BettingTree:
    """The betting tree stored in a blueprint file (checked against its fingerprint)."""
    from cfrkit.games.registry import load

    try:
        d = load(header["game"]).definition
    except Exception as exc:
        raise BlueprintError(f"blueprint file for game {header.get('game')!r}, which cannot be loaded: {exc}") from None
    tree = BettingTree(game_string=header["game"], bets=header["bets"], raise_cap=int(header["raise_cap"]),
                       stacks=(int(d.stack[0]), int(d.stack[1])), num_rounds=int(d.num_rounds),
                       **{n: np.ascontiguousarray(data[f"tree_{n}"]) for n in TREE_FIELDS})
    if tree.fingerprint() != header["tree"]:
        raise BlueprintError("the blueprint file's betting tree does not match its header (corrupt file)")
    return tree


def check_abstraction(path: str, header: Dict, abstraction_id: str, num_buckets) -> None:
    """Raise :class:`BlueprintError` unless the abstraction is the one the file was trained with."""
    if list(num_buckets) != list(header["num_buckets"]) or abstraction_id != header["abstraction_id"]:
        raise BlueprintError(f"{path} was trained with card abstraction {header['abstraction']!r} "
                             f"(buckets {header['num_buckets']}, id {header['abstraction_id']}); the one given has "
                             f"buckets {list(num_buckets)}, id {abstraction_id}")


class _RayBoardWorker(BoardWorker):
    """A Ray actor: builds the abstraction once, then computes deltas of the boards it is sent."""

    def __init__(self, tree, spec, abstraction, slot):
        super().__init__(tree, abstraction if abstraction is not None else abstraction_from_spec(spec), slot)


# ---------------------------------------------------------------------- long runs
@dataclass
class TrainConfig:
    """How long to train and when to save and evaluate (minutes of wall time; 0 disables).

    ``iterations`` and ``cpu_minutes`` are totals over the file's whole history (resumes included; CPU of the
    training process, all threads), ``minutes`` is wall time of this session."""

    iterations: Optional[int] = None
    minutes: Optional[float] = None
    cpu_minutes: Optional[float] = None
    checkpoint_minutes: float = 10.0
    eval_minutes: float = 0.0
    snapshot_on_eval: bool = True
    progress: bool = True


def train(trainer: BlueprintTrainer, path: str, config: TrainConfig,
          evaluate: Optional[Callable[[BlueprintTrainer], Dict]] = None, log: Callable[[str], None] = print) -> str:
    """Run ``trainer`` until ``config.iterations`` (total) or ``config.minutes`` (this session), saving
    ``path`` every ``checkpoint_minutes``, at the end and on SIGINT / SIGTERM (then it returns
    ``"interrupted"``); every ``eval_minutes`` calls ``evaluate(trainer)`` and records the result with the
    iteration count and training seconds (and saves a strategy-only snapshot beside ``path``)."""
    if config.iterations is None and config.minutes is None and config.cpu_minutes is None:
        raise BlueprintError("give a number of iterations, of minutes or of CPU minutes to train")
    stop = {"signal": None}
    #: the signal that interrupted the last train() (the CLI exits 128 + it: 130 SIGINT, 143 SIGTERM)
    trainer.stop_signal = None
    if config.iterations is not None and trainer.iterations >= config.iterations:
        log(f"blueprint: {path} has {trainer.iterations} iterations already, which is at least --iterations "
            f"{config.iterations} (a total): nothing to run")
        return "done"
    if config.cpu_minutes is not None and trainer.stats.cpu_seconds >= 60 * config.cpu_minutes:
        log(f"blueprint: {path} has {trainer.stats.cpu_seconds / 60:.1f} CPU minutes of training already, at least "
            f"--cpu-minutes {config.cpu_minutes} (a total): nothing to run")
        return "done"

    def handler(signum, frame):
        stop["signal"] = signum
        trainer.stop_signal = signum

    old = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            old[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread
            pass
    bar = None
    if config.progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=config.iterations, initial=trainer.iterations, unit="it", desc="blueprint")
    start = time.monotonic()
    last_save = start
    last_eval = start
    status = "done"
    # iterations per call: doubled while a call takes under 0.25 s, halved above 1 s, so that cheap iterations
    # (sampling trainers: a few ms) run in long kernel calls while signals, checkpoints and evaluations are
    # still seen within about a second; the iterations run are the same whatever the chunking
    step = 1
    try:
        while True:
            if config.iterations is not None and trainer.iterations >= config.iterations:
                break
            now = time.monotonic()
            if config.minutes is not None and now - start >= 60 * config.minutes:
                break
            if config.cpu_minutes is not None and trainer.stats.cpu_seconds >= 60 * config.cpu_minutes:
                break
            if stop["signal"] is not None:
                status = "interrupted"
                break
            n = step if config.iterations is None else min(step, config.iterations - trainer.iterations)
            before_nodes, t0, c0 = trainer.stats.nodes, time.perf_counter(), time.process_time()
            trainer.iterate(n)
            dt = max(time.perf_counter() - t0, 1e-9)
            trainer.stats.cpu_seconds += time.process_time() - c0
            step = min(2 * step, 1 << 16) if dt < 0.25 else max(1, step // 2) if dt > 1.0 else step
            if bar is not None:
                bar.update(n)
                bar.set_postfix(nodes_per_s=f"{(trainer.stats.nodes - before_nodes) / dt:.3g}", refresh=False)
            now = time.monotonic()
            if config.eval_minutes and evaluate is not None and now - last_eval >= 60 * config.eval_minutes:
                _evaluate(trainer, path, config, evaluate, log)
                last_eval = time.monotonic()
            if config.checkpoint_minutes and now - last_save >= 60 * config.checkpoint_minutes:
                trainer.save(path)
                last_save = time.monotonic()
    finally:
        if bar is not None:
            bar.close()
        trainer.save(path)
        for sig, h in old.items():
            signal.signal(sig, h)
    if status == "done" and evaluate is not None and config.eval_minutes:
        _evaluate(trainer, path, config, evaluate, log)
        trainer.save(path)
    log(f"blueprint: {trainer.iterations} iterations, {trainer.stats.seconds:.0f} s of training "
        f"({trainer.stats.cpu_seconds:.0f} CPU s), {trainer.stats.nodes / max(trainer.stats.seconds, 1e-9):.3g} "
        f"nodes/s; saved {path}"
        + (" (interrupted)" if status == "interrupted" else ""))
    return status


def _evaluate(trainer, path, config, evaluate, log) -> None:
    result = dict(evaluate(trainer))
    result.update(iterations=trainer.iterations, seconds=round(trainer.stats.seconds, 1))
    trainer.stats.evaluations.append(result)
    log(f"evaluation at {trainer.iterations} iterations: {json.dumps(result)}")
    if config.snapshot_on_eval:
        root, ext = os.path.splitext(path)
        trainer.save(f"{root}.it{trainer.iterations}{ext or '.npz'}", strategy_only=True)
