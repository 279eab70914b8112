"""Training data for value networks: random situations solved with CFR+, written in shards.

A situation is the start of a betting round (Leduc: the second round): a random board card, a pot
(each player's contribution, drawn from the contributions the game can reach at that point or
uniformly), and both players' ranges from DeepStack's recursive range generator (hands sorted by
strength on the board; the mass of a segment is split at its middle by a uniform random fraction,
recursively).  Each situation is solved with ``iterations`` CFR+ iterations (the first ``skip`` left
out of the average); the targets are both players' root cfvs averaged over the iterations after the
skip (DeepStack's targets; see :func:`solve_situations`), as fractions of the pot, for ranges
normalised to sum 1.

Situations sharing a board and pot share a public tree, so they are solved together as one batch
(``RangeSolver`` batch dimension; on the torch backend this runs on the GPU when there is one).

Shards: ``shard_00000.npz`` ... in the output directory plus ``dataset.json`` (game, settings).
Generation is resumable (finished shards are kept and checked) and parallel over processes, or over
a Ray cluster with ``ray_address`` (Ray is imported only then).
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit._io import atomic_open, remove_stale_temp_files_in
from cfrkit._ray import import_ray
from cfrkit.games.base import Game, GameError
from cfrkit.games.registry import load
from cfrkit.policy import PolicyFileError, check_array, load_npz_checked, save_npz_atomic
from cfrkit.solvers.public.games import LeducPublicGame, public_game_for
from cfrkit.solvers.public.public_tree import DECISION, build_public_tree
from cfrkit.solvers.public.solver import SubgameSolver
from cfrkit.value_nets.model import ValueNetFileError

SHARD_MAGIC = "cfrkit-valuenet-shard"
SHARD_ARRAYS = ("boards", "contribs", "ranges", "values")


def recursive_ranges(rng: np.random.Generator, count: int, order: Sequence[int], num_hands: int) -> np.ndarray:
    """DeepStack's recursive range generator: ``(count, num_hands)`` ranges summing to 1 over ``order``.

    ``order`` lists the hands that may hold mass, sorted by strength.
    """
    out = np.zeros((count, num_hands))
    order = np.asarray(order)

    def rec(lo: int, hi: int, mass: np.ndarray) -> None:
        if hi - lo == 1:
            out[:, order[lo]] = mass
            return
        mid = (lo + hi) // 2
        split = rng.random(count)
        rec(lo, mid, mass * split)
        rec(mid, hi, mass * (1.0 - split))

    if len(order):
        rec(0, len(order), np.ones(count))
    return out


def round_start_contributions(game: Game) -> List[int]:
    """Contributions (per player, equal) with which the second betting round can start with chips behind."""
    pgame = public_game_for(game)
    tree = build_public_tree(pgame)
    out = set()
    for n in tree.nodes:
        if n.kind == DECISION and n.board and tree.nodes[n.parent].kind == "chance":
            out.add(int(n.contrib[0]))
    return sorted(out)


def solve_situations(game: Game, boards: np.ndarray, contribs: np.ndarray, ranges: np.ndarray, iterations: int,
                     skip: int = 0, backend: str = "numpy", device: Optional[str] = None,
                     targets: str = "average_values") -> np.ndarray:
    """Root cfvs ``(N, 2, H)`` (pot fractions, ranges normalised) of each situation, batched by (board, pot).

    ``targets``: ``"average_values"`` (default; DeepStack's targets) averages the root cfvs of the
    current strategies over the iterations after ``skip``; for a hand with (almost) no reach they
    approach its best-response value, which is what a re-solver needs to decide whether to bring that
    hand to this situation.  ``"average_strategy"`` takes the cfvs of the average strategy, whose
    strategy for a hand with zero reach is the uniform default (a hand's value is then badly
    understated, and depth-limited CFR keeps such hands away from the leaf for good).
    """
    if targets not in ("average_values", "average_strategy"):
        raise ValueError(f"targets must be 'average_values' or 'average_strategy', got {targets!r}")
    pgame = public_game_for(game)
    if not isinstance(pgame, LeducPublicGame):
        raise GameError("situation solving is implemented for the Leduc family")
    values = np.zeros_like(ranges)
    keys = sorted(set(zip(boards.tolist(), contribs.tolist())))
    for board, contrib in keys:
        idx = np.nonzero((boards == board) & (contribs == contrib))[0]
        tree = build_public_tree(pgame, pgame.round_start_state(int(board), contrib))
        solver = SubgameSolver(tree, ranges[idx], backend=backend, algorithm="cfr+", skip=skip, device=device)
        solver.run(iterations)
        pot = 2.0 * contrib
        # (B, 2, H) chips: averaged over the iterations after skip, or the average strategy's cfvs
        avg = solver.average_root_cfvs() if targets == "average_values" else solver.root_cfvs()
        values[idx, 0], values[idx, 1] = avg[:, 0] / pot, avg[:, 1] / pot
    return values


def sample_situations(game: Game, count: int, rng: np.random.Generator, pots: str = "reachable"):
    """Random boards, contributions and recursive ranges: ``(boards, contribs, ranges)``."""
    pgame = public_game_for(game)
    H = pgame.num_hands
    if pots == "reachable":
        choices = np.array(round_start_contributions(game), dtype=np.float64)
        contribs = rng.choice(choices, size=count)
    elif pots == "uniform":
        lo, hi = float(game.ante), float(getattr(game, "stack", game.max_utility()))
        contribs = np.round(rng.uniform(lo, hi, size=count))
    else:
        raise ValueError(f"pots must be 'reachable' or 'uniform', got {pots!r}")
    boards = rng.integers(0, pgame.deck_size, size=count)
    ranges = np.zeros((count, 2, H))
    for b in np.unique(boards):
        idx = np.nonzero(boards == b)[0]
        s = pgame.strengths([int(b)])
        valid = [h for h in range(H) if pgame.hand_mask([int(b)])[h] > 0]
        order = sorted(valid, key=lambda h: (s[h], h))
        for p in (0, 1):
            ranges[idx, p] = recursive_ranges(rng, len(idx), order, H)
    return boards, contribs, ranges


def make_shard(path: str, game_string: str, count: int, seed: int, iterations: int, skip: int, pots: str,
               backend: str = "numpy", device: Optional[str] = None, targets: str = "average_values") -> str:
    """Generate and write one shard (called in worker processes)."""
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        pass
    game = load(game_string)
    rng = np.random.default_rng(seed)
    boards, contribs, ranges = sample_situations(game, count, rng, pots)
    values = solve_situations(game, boards, contribs, ranges, iterations, skip, backend, device, targets)
    header = {"magic": SHARD_MAGIC, "version": 1, "game": game_string, "seed": seed, "count": count,
              "iterations": iterations, "skip": skip, "pots": pots, "targets": targets}
    save_npz_atomic(path, header=header, boards=boards[:, None].astype(np.int64), contribs=contribs,
                    ranges=ranges, values=values)
    return path


def load_shard(path: str):
    """``(header, arrays)`` of a shard; :class:`ValueNetFileError` if it is corrupted or not a shard."""
    try:
        header, arrays = load_npz_checked(path, SHARD_MAGIC, SHARD_ARRAYS)
    except PolicyFileError as exc:
        raise ValueNetFileError(f"corrupted or foreign data shard: {exc}") from None
    try:
        boards = check_array(path, arrays, "boards", "iu", 2)
        contribs = check_array(path, arrays, "contribs", "f", 1, finite=True)
        ranges = check_array(path, arrays, "ranges", "f", 3, finite=True)
        values = check_array(path, arrays, "values", "f", 3, finite=True)
    except PolicyFileError as exc:
        raise ValueNetFileError(str(exc)) from None
    n = len(contribs)
    if not (boards.shape[0] == n == ranges.shape[0] == values.shape[0]) or ranges.shape != values.shape \
            or ranges.shape[1] != 2 or not isinstance(header.get("game"), str):
        raise ValueNetFileError(f"{path}: inconsistent array sizes in data shard (corrupted file)")
    return header, arrays


# ----------------------------------------------------------------------------- shard datasets
# A dataset directory holds ``shard_00000.npz`` ... plus ``dataset.json`` (the settings); the helpers
# below are the one implementation of its layout, resume and job running for every datagen (Leduc
# here, hold'em in :mod:`cfrkit.value_nets.holdem.datagen`).
DATASET_META = "dataset.json"


def shard_path(out_dir: str, index: int) -> str:
    """Path of shard ``index`` (0-based) in ``out_dir``: ``shard_00000.npz`` ..."""
    return os.path.join(out_dir, f"shard_{index:05d}.npz")


def open_dataset_dir(out_dir: str) -> Optional[Dict[str, Any]]:
    """Make ``out_dir`` ready for shards and return its stored ``dataset.json`` (None for a new dataset).

    Creates the directory, deletes temporary files of saves cut short by a kill, and raises
    :class:`ValueNetFileError` (one line) when ``out_dir`` is a file or the metadata is unreadable.
    """
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ValueNetFileError(f"{out_dir} is a file; datagen writes shards into a directory")
    os.makedirs(out_dir, exist_ok=True)
    remove_stale_temp_files_in(out_dir, ("shard_", DATASET_META))
    meta_path = os.path.join(out_dir, DATASET_META)
    if not os.path.exists(meta_path):
        return None
    try:
        with open(meta_path) as f:
            meta = json.load(f)
    except (OSError, ValueError) as exc:
        raise ValueNetFileError(f"{meta_path}: unreadable dataset metadata ({exc})") from None
    if not isinstance(meta, dict):
        raise ValueNetFileError(f"{meta_path}: unreadable dataset metadata (not a mapping)")
    return meta


def write_dataset_meta(out_dir: str, meta: Dict[str, Any]) -> None:
    """Write ``out_dir/dataset.json`` atomically."""
    with atomic_open(os.path.join(out_dir, DATASET_META), "w") as f:
        json.dump(meta, f, indent=1)


def pending_shards(out_dir: str, num_samples: int, shard_size: int, load_header,
                   is_current) -> Tuple[int, List[Tuple[int, str, int]]]:
    """The shards still to write: ``(num_shards, [(index, path, count), ...])``.

    A shard on disk is kept when ``load_header(path)`` reads it and ``is_current(header, index, count)``
    holds; a damaged one (``load_header`` raises :class:`ValueNetFileError`) is regenerated.
    """
    num_shards = -(-num_samples // shard_size)
    todo = []
    for i in range(num_shards):
        path = shard_path(out_dir, i)
        count = min(shard_size, num_samples - i * shard_size)
        if os.path.exists(path):
            try:
                if is_current(load_header(path), i, count):
                    continue
            except ValueNetFileError:
                pass  # regenerate a damaged shard
        todo.append((i, path, count))
    return num_shards, todo


def run_shard_jobs(jobs: Sequence[tuple], fn, num_shards: int, workers: Optional[int] = None,
                   ray_address: Optional[str] = None, progress: bool = True, desc: str = "datagen shards",
                   gpus_per_task: float = 0.0) -> None:
    """Run ``fn(*job)`` for every job: on Ray (``ray_address``; each task requests ``gpus_per_task`` GPUs, so on a
    GPU cluster Ray places it on a GPU node and makes that GPU its ``cuda``; fractions share a GPU), in this
    process (``workers == 1`` or a single job) or in ``workers`` processes (default: all cores), with a progress
    bar over ``num_shards``."""
    gpus_per_task = float(gpus_per_task)
    if not gpus_per_task >= 0:
        raise ValueError(f"gpus_per_task must be >= 0, got {gpus_per_task}")
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=num_shards, initial=num_shards - len(jobs), desc=desc, unit="shard")
    try:
        if ray_address is not None:
            _run_ray(jobs, ray_address, bar, fn=fn, gpus_per_task=gpus_per_task)
        elif workers == 1 or len(jobs) <= 1:
            for job in jobs:
                fn(*job)
                if bar is not None:
                    bar.update(1)
        else:
            _run_processes(jobs, workers or os.cpu_count() or 1, bar, fn=fn)
    finally:
        if bar is not None:
            bar.close()


def generate_dataset(out_dir: str, game: "str | Game", num_samples: int, shard_size: int = 1000,
                     iterations: int = 1000, skip: int = 500, seed: int = 0, pots: str = "reachable",
                     workers: Optional[int] = None, ray_address: Optional[str] = None, backend: str = "numpy",
                     device: Optional[str] = None, progress: bool = True,
                     targets: str = "average_values") -> List[str]:
    """Write ``ceil(num_samples / shard_size)`` shards to ``out_dir`` (resumable; see module docstring).

    Shard ``i`` uses seed ``seed * 1_000_003 + i``, so a resumed or re-run generation gives the same data.
    """
    game = load(game)
    if not isinstance(public_game_for(game), LeducPublicGame):
        raise GameError(f"value-net data generation is implemented for the Leduc family (leduc, leduc_nolimit), "
                        f"not {game.short_name!r}")
    if ray_address is not None:
        import_ray(GameError)   # a one-line error now, not after the first shard
    if num_samples <= 0 or shard_size <= 0 or iterations <= 0 or not 0 <= skip < iterations:
        raise ValueError("need num_samples > 0, shard_size > 0, iterations > 0 and 0 <= skip < iterations")
    settings = {"game": game.game_string(), "shard_size": shard_size, "iterations": iterations, "skip": skip,
                "seed": seed, "pots": pots, "targets": targets}
    old = open_dataset_dir(out_dir)
    if old is not None:
        diff = {k: (old.get(k), v) for k, v in settings.items() if old.get(k) != v}
        if diff:
            raise ValueError(f"{out_dir} holds a dataset made with other settings {diff}; use another directory")
    write_dataset_meta(out_dir, {**settings, "num_samples": num_samples})

    def is_current(header, i, count):
        return header.get("count") == count and header.get("seed") == seed * 1_000_003 + i \
            and header.get("targets", "average_strategy") == targets

    num_shards, todo = pending_shards(out_dir, num_samples, shard_size, lambda path: load_shard(path)[0], is_current)
    jobs = [(path, game.game_string(), count, seed * 1_000_003 + i, iterations, skip, pots, backend, device, targets)
            for i, path, count in todo]
    run_shard_jobs(jobs, make_shard, num_shards, workers, ray_address, progress)
    return [shard_path(out_dir, i) for i in range(num_shards)]


def _run_processes(jobs, workers: int, bar, fn=None) -> None:
    """Run ``fn`` (default :func:`make_shard`) jobs in ``workers`` processes that die with this one.

    Workers ask the kernel for SIGKILL when their parent dies (``PR_SET_PDEATHSIG``) and also watch
    the parent's pid, so neither ``kill -9`` of the parent nor an exception here leaves them running;
    on any exit from this function (KeyboardInterrupt included) the pool is terminated.
    """
    import multiprocessing

    pool = multiprocessing.get_context("fork").Pool(min(workers, len(jobs)), initializer=_worker_init,
                                                   initargs=(os.getpid(),))
    try:
        pending = [pool.apply_async(fn or make_shard, job) for job in jobs]
        while pending:
            pending[0].wait(0.2)  # short waits keep the parent responsive to signals
            still = []
            for result in pending:
                if result.ready():
                    result.get()  # re-raises a worker's error here
                    if bar is not None:
                        bar.update(1)
                else:
                    still.append(result)
            pending = still
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def _worker_init(parent_pid: int) -> None:
    """In each worker: die with the parent (SIGKILL on its death; a watchdog thread as a fallback)."""
    import signal
    import threading
    import time

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the whole group: the parent decides
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler: pool.terminate() must kill
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)

    def watchdog() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watchdog, daemon=True).start()


def _ray_remote(fn, gpus_per_task: float = 0.0):
    """``fn`` as a Ray remote function; ``num_gpus=gpus_per_task`` when positive (Ray then schedules the task on
    a node with that much free GPU and sets its ``CUDA_VISIBLE_DEVICES``; without it a task on a GPU cluster runs
    on the CPU)."""
    import ray

    return ray.remote(num_gpus=gpus_per_task)(fn) if gpus_per_task > 0 else ray.remote(fn)


def _run_ray(jobs, address: str, bar, fn=None, gpus_per_task: float = 0.0) -> None:
    """Run ``fn`` (default :func:`make_shard`) jobs as Ray tasks on the cluster at ``address``
    (Ray's own address strings: ``"auto"``, ``"local"`` for a new local instance, ``ray://...``), each requesting
    ``gpus_per_task`` GPUs (:func:`_ray_remote`)."""
    import ray

    ray.init(address=address, ignore_reinit_error=True)
    remote = _ray_remote(fn or make_shard, gpus_per_task)
    pending = [remote.remote(*job) for job in jobs]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        ray.get(done)
        if bar is not None:
            bar.update(len(done))


def dataset_shards(paths_or_dirs: "str | Sequence[str]") -> List[str]:
    """The shard files of datagen directories and/or shard paths, in order (each directory's ``shard_*.npz``
    sorted); ``FileNotFoundError`` for a missing directory, :class:`ValueNetFileError` when there are none."""
    items = [paths_or_dirs] if isinstance(paths_or_dirs, str) else list(paths_or_dirs)
    paths: List[str] = []
    for item in items:
        if isinstance(paths_or_dirs, str) or os.path.isdir(item):
            if not os.path.isdir(item):
                raise FileNotFoundError(f"no such data directory: {item}")
            paths += sorted(os.path.join(item, f) for f in os.listdir(item)
                            if f.startswith("shard_") and f.endswith(".npz"))
        else:
            paths.append(item)
    if not paths:
        raise ValueNetFileError(f"no data shards in {' '.join(map(str, items))}")
    return paths


def load_dataset(paths_or_dir: "str | Sequence[str]") -> Dict[str, Any]:
    """Concatenate shards (a directory, or a list of shard paths and/or directories: :func:`dataset_shards`):
    dict of arrays plus ``game``; shards of different games are refused."""
    paths = dataset_shards(paths_or_dir)
    parts: Dict[str, List[np.ndarray]] = {k: [] for k in SHARD_ARRAYS}
    game = None
    for p in paths:
        header, arrays = load_shard(p)
        if game is not None and header["game"] != game:
            raise ValueNetFileError(f"{p}: shard is for {header['game']!r}, others for {game!r}")
        game = header["game"]
        for k in SHARD_ARRAYS:
            parts[k].append(arrays[k])
    out: Dict[str, Any] = {k: np.concatenate(v) for k, v in parts.items()}
    out["game"] = game
    return out
