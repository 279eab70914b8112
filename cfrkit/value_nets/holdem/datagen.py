"""Training data of the hold'em value nets: DeepStack situations solved with the range solvers, in shards.

Rounds, as DeepStack: **river** situations are solved to showdown with the compiled solver
(:func:`~cfrkit.solvers.public.flat_range_cfr.solve_many`, DCFR, no net; backends ``"board"`` / ``"board64"``)
or, with ``backend="numpy"`` / ``"torch"``, with ``RangeSolver`` on the river tree, a group as one batch
(:func:`solve_river_group_range`; so ``"torch"`` on CUDA puts every round on the GPU); **turn** situations with
``RangeSolver`` on the depth-limited turn tree whose leaves (first river decision, one per river card)
take their values from the river net; **flop** situations likewise with the turn net at the leaves
(first turn decision, one per turn card: the tree's chance node averages the net over turn cards).
Turn and flop situations go by default to the compiled
:class:`~cfrkit.solvers.public.board_leaf_cfr.BoardLeafSolver` (``backend="board"``, float32;
``"board64"`` in float64: the same iterates as ``RangeSolver``, all-in lines by an equity matrix per
board); ``backend="numpy"`` runs ``RangeSolver`` on a whole group of situations (same board and pot) as one
batch, on every round, the river included; ``backend="torch"`` runs the same iterates with ALL groups of a
shard batched into one solve per tree shape (:mod:`cfrkit.solvers.public.torch_batch`: boards, pots, chance
masks, leaf boards and all-in matrices per row; CUDA when present, float32 there, float64 on the CPU).

**Preflop** situations (DeepStack's auxiliary net: the chance state before the flop cards, empty board,
both players in for the same chips) need no solve: the target is a forward pass, the flop net averaged
over ``flops`` sampled flops (:class:`~cfrkit.value_nets.holdem.leaf_values.FlopNetPreflopValues`, the
ratio estimator the agent's ``preflop_flops`` option uses), a fresh flop sample per group of situations
(seed ``[shard seed, group index]``) so the samples' errors are independent across the data and the net
learns the average over all flops; bucketed over the 169 preflop classes.  Default 200 flops: every
hand then misses about 176 of them, so the sampling error of a hand's value is about 1/13 of the
flop-to-flop spread of the flop net's values (RESULTS.md measures it against 1000 flops) while a situation
costs 200 flop-net rows of 1326 hands.

Targets, per hand, as fractions of the pot for ranges summing to 1 (DeepStack's normalisation):

* turn/flop: DeepStack's -- both players' root cfvs averaged over the iterations
  after ``skip`` (CFR+, ``skip = iterations / 2`` by default);
* river, compiled solver: the root cfvs of the final DCFR average strategy (the kernel does not
  accumulate per-iteration root values); with recursive ranges every live hand has positive reach, so
  these are defined for every hand; their distance to ``RangeSolver``'s averaged values is measured by
  ``benchmarks/deepstack_holdem.py --study`` (RESULTS.md);
* river, ``backend="numpy"`` / ``"torch"``: the turn/flop definition (CFR+ root cfvs averaged over the
  iterations after ``skip``).  Such a river dataset records ``river_solver: "range_solver"`` in its
  settings (so its digest differs and compiled-river shards never mix with it; the compiled backends add
  nothing, their digests are unchanged).  ``benchmarks/deepstack_datagen_rate.py`` times the torch path
  per round (CUDA events on a GPU) beside the compiled one.

Shards ``shard_NNNNN.npz`` (checked header, atomic writes) hold the hand-space arrays (boards, pots,
ranges, values; float32) and the bucketed training arrays (``inputs (N, 2M+1)``, ``targets (N, 2M)``,
``mask``); ``dataset.json`` records the settings.  A re-run regenerates only missing or damaged shards
and refuses a directory made with other settings; shard ``i`` uses seed ``seed * 1_000_003 + i``, so
its content does not depend on which machine or process made it.  Parallel over processes or, with
``ray_address``, over a Ray cluster (the Leduc datagen's runners).
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from typing import Any, Dict, List, Optional

import numpy as np

from cfrkit._ray import import_ray
from cfrkit.games.base import GameError
from cfrkit.games.registry import load
from cfrkit.policy import PolicyFileError, check_array, load_npz_checked, save_npz_atomic
from cfrkit.solvers.public.flat_range_cfr import solve_many
from cfrkit.solvers.public.games import HoldemPublicGame, normalize_bet_sizing
from cfrkit.solvers.public.public_tree import build_public_tree
from cfrkit.solvers.public.solver import SubgameSolver
from cfrkit.value_nets.data import open_dataset_dir, pending_shards, run_shard_jobs, shard_path, write_dataset_meta
from cfrkit.value_nets.holdem.bucketing import holdem_bucketer_from_dict, make_bucketer
from cfrkit.value_nets.holdem.situations import group_slices, sample_situations, street_start_state
from cfrkit.value_nets.model import ValueNetFileError

SHARD_MAGIC = "cfrkit-holdem-valuenet-shard"
SHARD_ARRAYS = ("boards", "contribs", "ranges", "values", "inputs", "targets", "mask")
LEAF_STREET = {"preflop": "flop", "flop": "turn", "turn": "river", "river": None}
DEFAULT_PREFLOP_FLOPS = 200  # flops averaged per preflop situation (module docstring)
BACKENDS = ("board", "board64", "numpy", "torch")  # solvers of turn / flop situations (solve_group_with_leaves)
DEFAULT_SIZING = ((1.0,), (1.0,), ())  # pot bets, one pot raise, then fold/call/all-in (all-in always)


def sizing_levels(bet_sizing) -> List[List[float]]:
    """Bet sizing as lists of pot fractions per bet number in a round (entry ``k`` = the ``(k+1)``-th bet),
    normalised by :func:`~cfrkit.solvers.public.games.normalize_bet_sizing`; None gives :data:`DEFAULT_SIZING`.
    The JSON-ready form stored in a dataset's metadata."""
    return [list(level) for level in normalize_bet_sizing(DEFAULT_SIZING if bet_sizing is None else bet_sizing)]


def bucket_arrays(bucketer, boards: np.ndarray, contribs: np.ndarray, ranges: np.ndarray, values: np.ndarray,
                  stack: float):
    """DeepStack's net arrays of hand-space data: ``inputs (N, 2M+1)`` (ranges per bucket normalised to 1,
    contribution / stack), ``targets (N, 2M)`` (range-weighted mean pot-fraction value per bucket; the
    plain mean where a player has no mass in a bucket), ``mask (N, 2M)`` (1 for buckets on the board)."""
    N = len(contribs)
    M = bucketer.num_buckets
    inputs = np.zeros((N, 2 * M + 1), dtype=np.float32)
    targets = np.zeros((N, 2 * M), dtype=np.float32)
    mask = np.zeros((N, 2 * M), dtype=np.float32)
    for i in range(N):
        ids = bucketer.hand_buckets(boards[i])
        ok = ids >= 0
        b = ids[ok]
        counts = np.bincount(b, minlength=M).astype(np.float64)
        present = (counts > 0).astype(np.float32)
        for p in (0, 1):
            r = ranges[i, p][ok].astype(np.float64)
            v = values[i, p][ok].astype(np.float64)
            rb = np.bincount(b, weights=r, minlength=M)
            tot = rb.sum()
            inputs[i, p * M:(p + 1) * M] = rb / tot if tot > 0 else rb
            weighted = np.bincount(b, weights=r * v, minlength=M)
            plain = np.bincount(b, weights=v, minlength=M) / np.where(counts > 0, counts, 1.0)
            targets[i, p * M:(p + 1) * M] = np.where(rb > 0, weighted / np.where(rb > 0, rb, 1.0), plain)
            mask[i, p * M:(p + 1) * M] = present
    inputs[:, -1] = contribs / stack
    return inputs, targets, mask


def street_tree(game, bet_sizing, board, contrib, depth_limit: bool):
    """Public tree of the street of ``board`` (3, 4 or 5 card ids) for both players in for ``contrib`` chips,
    with ``bet_sizing`` (pot fractions per bet number); ``depth_limit`` stops it at the street's end
    (value-function leaves) instead of playing the later streets out."""
    pgame = HoldemPublicGame(game, bet_sizing)
    return build_public_tree(pgame, street_start_state(game, board, contrib), depth_limit=depth_limit)


def solve_river_group(game, bet_sizing, board, contrib: float, ranges: np.ndarray, iterations: int,
                      threads: int = 1) -> np.ndarray:
    """Pot-fraction root cfvs ``(B, 2, 1326)`` of river situations sharing ``board`` and ``contrib``
    (compiled DCFR, ``iterations`` each; cfvs of the average strategy)."""
    tree = street_tree(game, bet_sizing, board, contrib, depth_limit=False)
    batch = solve_many(tree, ranges, max_iterations=iterations, threads=threads)
    out = np.stack([s.root_cfvs() for s in batch.solvers])   # (B, 2, 1326) chips, average strategies
    return out / (2.0 * contrib)


def solve_river_group_range(game, bet_sizing, board, contrib: float, ranges: np.ndarray, iterations: int,
                            skip: int, backend: str = "torch", device: Optional[str] = None,
                            algorithm: str = "cfr+") -> np.ndarray:
    """Pot-fraction root cfvs ``(B, 2, 1326)`` of river situations sharing ``board`` and ``contrib``, solved by
    ``RangeSolver`` (``backend`` ``"numpy"`` or ``"torch"`` on ``device``: CUDA when present) on the river tree to
    showdown, the group as one batch, no leaf values; the targets of the turn/flop path: root cfvs averaged
    over the iterations after ``skip`` (CFR+ by default)."""
    if backend not in ("numpy", "torch"):
        raise ValueError(f"the river RangeSolver path runs on backend 'numpy' or 'torch', not {backend!r}")
    tree = street_tree(game, bet_sizing, board, contrib, depth_limit=False)
    solver = SubgameSolver(tree, np.asarray(ranges).reshape(-1, 2, 1326), backend=backend, algorithm=algorithm,
                           skip=skip, device=device)
    solver.run(iterations)
    return solver.average_root_cfvs() / (2.0 * contrib)


def solve_river_groups_torch(game, bet_sizing, situations, iterations: int, skip: int,
                             device: Optional[str] = None, algorithm: str = "cfr+") -> np.ndarray:
    """Pot-fraction root cfvs ``(N, 2, 1326)`` of river ``situations``, EVERY group in one batched torch solve
    (:func:`~cfrkit.solvers.public.torch_batch.solve_river_trees`: trees of one shape side by side, boards and pots
    per row, batches sized from the device's free memory; float32 on CUDA, float64 on the CPU): the iterates and
    targets of :func:`solve_river_group_range` per group, without a Python loop over groups in the solve."""
    from cfrkit.solvers.public.torch_batch import solve_river_trees

    slices = list(group_slices(situations.groups))
    trees = [street_tree(game, bet_sizing, situations.boards[idx[0]], float(situations.contribs[idx[0]]), False)
             for idx in slices]
    vals = solve_river_trees(trees, [situations.ranges[idx] for idx in slices], iterations, skip, algorithm,
                             device=device)
    values = np.zeros_like(situations.ranges, dtype=np.float64)
    for idx, v in zip(slices, vals):
        values[idx] = v / (2.0 * float(situations.contribs[idx[0]]))
    return values


def solve_groups_with_leaves_torch(game, bet_sizing, situations, iterations: int, skip: int, leaf_values,
                                   device: Optional[str] = None, algorithm: str = "cfr+") -> np.ndarray:
    """Pot-fraction root cfvs ``(N, 2, 1326)`` of turn / flop ``situations``, EVERY group in one batched torch solve
    (:func:`~cfrkit.solvers.public.torch_batch.solve_leaf_trees`: depth-limited trees of one shape side by side,
    boards, pots, chance masks, leaf boards and all-in matrices per row, one net call per pass for all leaves and
    rows; batches sized from the device's free memory; float32 on CUDA, float64 on the CPU): the iterates and
    targets of :func:`solve_group_with_leaves` with ``backend="torch"`` per group, without a Python loop over groups
    in the solve."""
    from cfrkit.solvers.public.torch_batch import solve_leaf_trees

    slices = list(group_slices(situations.groups))
    trees = [street_tree(game, bet_sizing, situations.boards[idx[0]], float(situations.contribs[idx[0]]), True)
             for idx in slices]
    vals = solve_leaf_trees(trees, [situations.ranges[idx] for idx in slices], leaf_values, iterations, skip,
                            algorithm, device=device)
    values = np.zeros_like(situations.ranges, dtype=np.float64)
    for idx, v in zip(slices, vals):
        values[idx] = v / (2.0 * float(situations.contribs[idx[0]]))
    return values


def solve_group_with_leaves(game, bet_sizing, board, contrib: float, ranges: np.ndarray, iterations: int,
                            skip: int, leaf_values, backend: str = "board", device: Optional[str] = None,
                            algorithm: str = "cfr+") -> np.ndarray:
    """Pot-fraction root cfvs ``(B, 2, 1326)`` of flop/turn situations sharing ``board`` and ``contrib`` on
    the depth-limited tree, ``leaf_values`` at the leaves, values averaged over the iterations after ``skip``
    (DeepStack's targets).  ``backend``: ``"board"`` (default: the compiled
    :class:`~cfrkit.solvers.public.board_leaf_cfr.BoardLeafSolver`, float32 storage, the group's situations
    side by side with one net call per pass, all-in lines by the board's equity matrix), ``"board64"`` (the
    same in float64), ``"numpy"`` or ``"torch"`` (``RangeSolver``, the group as one batch on ``device``; all-in
    lines by the same equity matrix, ``allin_equity=True``: one ``(B K, 1326) x (1326, 1326)`` product per pass,
    on the device with torch; so ``"numpy"`` computes ``"board64"``'s values, up to float rounding)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    tree = street_tree(game, bet_sizing, board, contrib, depth_limit=True)
    ranges = np.asarray(ranges).reshape(-1, 2, 1326)
    if backend in ("board", "board64"):
        solver = SubgameSolver(tree, ranges, backend="compiled", storage="float32" if backend == "board" else "float64",
                               leaf_values=leaf_values, algorithm=algorithm, skip=skip, kernel="leaf")
    else:   # all-in lines by the board's equity matrix: RangeSolver's default on 52-card hold'em trees
        solver = SubgameSolver(tree, ranges, backend=backend, leaf_values=leaf_values, algorithm=algorithm,
                               skip=skip, device=device)
    solver.run(iterations)
    return solver.average_root_cfvs() / (2.0 * contrib)


def solve_situations(game, situations, iterations: int, skip: int = 0, bet_sizing=None, leaf_values=None,
                     backend: str = "board", device: Optional[str] = None, threads: int = 1) -> np.ndarray:
    """Pot-fraction root cfvs ``(N, 2, 1326)`` of every situation, one solve per group.

    River: the compiled solver (:func:`solve_river_group`; ``skip`` unused) with ``backend`` ``"board"`` /
    ``"board64"``, ``RangeSolver`` (:func:`solve_river_group_range`) with ``"numpy"``, all groups batched on
    ``device`` (:func:`solve_river_groups_torch`, the same iterates) with ``"torch"``; flop/turn: the ``backend``
    of :func:`solve_group_with_leaves` with ``leaf_values``, all groups batched on ``device``
    (:func:`solve_groups_with_leaves_torch`, the same iterates) with ``"torch"``."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    bet_sizing = sizing_levels(bet_sizing)
    if situations.street == "river" and backend == "torch":  # all groups in one batched solve (GPU-sized)
        return solve_river_groups_torch(game, bet_sizing, situations, iterations, skip, device)
    if situations.street in ("turn", "flop") and backend == "torch" and leaf_values is not None:
        return solve_groups_with_leaves_torch(game, bet_sizing, situations, iterations, skip, leaf_values, device)
    values = np.zeros_like(situations.ranges)
    for idx in group_slices(situations.groups):
        board, contrib, r = situations.boards[idx[0]], float(situations.contribs[idx[0]]), situations.ranges[idx]
        if situations.street == "river" and backend in ("numpy", "torch"):
            values[idx] = solve_river_group_range(game, bet_sizing, board, contrib, r, iterations, skip, backend,
                                                  device)
        elif situations.street == "river":
            values[idx] = solve_river_group(game, bet_sizing, board, contrib, r, iterations, threads)
        else:
            if leaf_values is None:
                raise GameError(f"{situations.street} situations need the {LEAF_STREET[situations.street]} net "
                                f"at the leaves")
            values[idx] = solve_group_with_leaves(game, bet_sizing, board, contrib, r, iterations, skip,
                                                  leaf_values, backend, device)
    return values


def preflop_targets(flop_fn, situations, flops: int = DEFAULT_PREFLOP_FLOPS, seed: int = 0) -> np.ndarray:
    """Pot-fraction values ``(N, 2, 1326)`` of preflop ``situations`` (ranges summing to 1): the flop value
    function ``flop_fn`` (a :class:`~cfrkit.value_nets.holdem.leaf_values.HoldemNetLeafValues` of the flop
    net) averaged over ``flops`` sampled flops by
    :class:`~cfrkit.value_nets.holdem.leaf_values.FlopNetPreflopValues`, seeded ``[seed, g]`` for the
    situations of group ``g`` (groups in order of first appearance, numbered from 0).  A forward pass, no solve."""
    from cfrkit.value_nets.holdem.leaf_values import FlopNetPreflopValues

    if situations.street != "preflop":
        raise GameError(f"preflop targets need preflop situations, got {situations.street!r}")
    values = np.zeros_like(situations.ranges, dtype=np.float64)
    for g, idx in enumerate(group_slices(situations.groups)):
        fn = FlopNetPreflopValues(flop_fn, None, num_flops=flops, seed=[int(seed), g])
        r = situations.ranges[idx]
        c = situations.contribs[idx]
        v0, v1 = fn.evaluate(c, r[:, None, 0], r[:, None, 1])
        pots = 2.0 * np.asarray(c, dtype=np.float64)[:, None]
        values[idx, 0] = v0[:, 0] / pots
        values[idx, 1] = v1[:, 0] / pots
    return values


def _nets_digest(directory: Optional[str], street: Optional[str]) -> Optional[str]:
    if directory is None or street is None:
        return None
    path = os.path.join(directory, f"{street}.pt")
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        raise ValueNetFileError(f"{directory}: no {street} net ({path} missing); train it first") from None


def make_holdem_shard(path: str, settings: Dict[str, Any], index: int, count: int) -> Dict[str, float]:
    """Generate and write one shard (runs in worker processes / Ray tasks); returns its timing."""
    import torch

    torch.set_num_threads(1)
    t0, c0 = time.perf_counter(), time.process_time()
    game = load(settings["game"])
    seed = settings["seed"] * 1_000_003 + index
    rng = np.random.default_rng(seed)
    street = settings["street"]
    stack = float(min(game.definition.stack))
    sit = sample_situations(street, count, rng, group=settings["group"], stack=stack,
                            big_blind=float(max(game.definition.blind)))
    leaf_fn = None
    if LEAF_STREET[street] is not None:
        from cfrkit.value_nets.holdem.nets import HoldemValueNets

        device = settings.get("device")
        if device is None and settings["backend"] == "torch":   # the solver's own default: cuda when present
            device = "cuda" if torch.cuda.is_available() else "cpu"
        # the leaf nets on the solver's device: the torch solvers' leaf reaches never leave it
        nets = HoldemValueNets.load(settings["leaf_nets"], device=device or "cpu")
        leaf_fn = nets.leaf_values(LEAF_STREET[street])
    if street == "preflop":
        values = preflop_targets(leaf_fn, sit, settings["flops"], seed)
    else:
        values = solve_situations(game, sit, settings["iterations"], settings["skip"], settings["bet_sizing"],
                                  leaf_fn, settings["backend"], settings.get("device"), threads=1)
    bucketer = holdem_bucketer_from_dict(settings["bucketer"])
    inputs, targets, mask = bucket_arrays(bucketer, sit.boards, sit.contribs, sit.ranges, values, stack)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    header = {"magic": SHARD_MAGIC, "version": 1, "game": settings["game"], "street": street, "seed": seed,
              "count": count, "settings_digest": settings_digest(settings), "wall_seconds": wall, "cpu_seconds": cpu}
    save_npz_atomic(path, header=header, boards=sit.boards.astype(np.int64), contribs=sit.contribs,
                    ranges=sit.ranges.astype(np.float32), values=values.astype(np.float32),
                    inputs=inputs, targets=targets, mask=mask)
    return {"wall_seconds": wall, "cpu_seconds": cpu, "count": count}


def default_gpus_per_task(backend: str, device: Optional[str]) -> float:
    """GPUs a Ray shard task requests by default: 1 when the torch path is asked for CUDA (``device`` ``"cuda"`` or
    ``"cuda:N"``; inside the task Ray's ``CUDA_VISIBLE_DEVICES`` makes its GPU ``cuda``), else 0."""
    return 1.0 if backend == "torch" and device is not None and str(device).startswith("cuda") else 0.0


def settings_digest(settings: Dict[str, Any]) -> str:
    keep = {k: v for k, v in settings.items() if k not in ("backend", "device", "num_samples")}
    return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:16]


def load_holdem_shard(path: str):
    """``(header, arrays)``; :class:`ValueNetFileError` if the shard is corrupted or foreign."""
    try:
        header, arrays = load_npz_checked(path, SHARD_MAGIC, SHARD_ARRAYS)
        check_array(path, arrays, "boards", "iu", 2)
        for name, nd in (("contribs", 1), ("ranges", 3), ("values", 3), ("inputs", 2), ("targets", 2), ("mask", 2)):
            check_array(path, arrays, name, "f", nd, finite=True)
    except PolicyFileError as exc:
        raise ValueNetFileError(f"corrupted or foreign hold'em data shard: {exc}") from None
    n = len(arrays["contribs"])
    if not all(arrays[k].shape[0] == n for k in SHARD_ARRAYS) or arrays["ranges"].shape != arrays["values"].shape \
            or arrays["inputs"].shape[1] != arrays["targets"].shape[1] + 1 or header.get("count") != n:
        raise ValueNetFileError(f"{path}: inconsistent array sizes in hold'em data shard (corrupted file)")
    return header, arrays


def generate_holdem_dataset(out_dir: str, street: str, num_samples: int, shard_size: int = 100,
                            iterations: int = 1000, skip: Optional[int] = None, seed: int = 0, group: int = 10,
                            bet_sizing=None, buckets: str = "auto", num_buckets: Optional[int] = None,
                            leaf_nets: Optional[str] = None, game: str = "holdem", workers: Optional[int] = None,
                            ray_address: Optional[str] = None, backend: str = "board", device: Optional[str] = None,
                            progress: bool = True, flops: int = DEFAULT_PREFLOP_FLOPS,
                            gpus_per_task: Optional[float] = None) -> Dict[str, Any]:
    """Write ``ceil(num_samples / shard_size)`` shards of ``street`` situations to ``out_dir`` (resumable).

    ``leaf_nets``: a :class:`~cfrkit.value_nets.holdem.nets.HoldemValueNets` directory holding the net
    of the next street (turn data need the river net, flop data the turn net).  ``skip`` defaults to
    half the iterations (turn/flop, and the river with ``RangeSolver``; the compiled river solve uses DCFR's
    own weighting).  ``backend``: the solver (``"board"``: compiled, float32 on turn/flop, default; ``"board64"``;
    ``"numpy"`` / ``"torch"``: ``RangeSolver`` on every round, see :func:`solve_situations`).  ``street="preflop"``: the auxiliary net's data, targets the flop
    net of ``leaf_nets`` averaged over ``flops`` sampled flops per group (:func:`preflop_targets`; no solve,
    ``iterations``, ``skip``, ``backend`` and ``bet_sizing`` unused).  ``gpus_per_task``: the GPUs each Ray task
    requests (:func:`~cfrkit.value_nets.data.run_shard_jobs`; default :func:`default_gpus_per_task`: 1 when
    ``backend="torch"`` and ``device`` is CUDA, else 0; a fraction shares a GPU between tasks).  Returns a summary
    (shards, samples generated now, wall/CPU seconds, situations per second).
    """
    if street not in LEAF_STREET:
        raise GameError(f"hold'em value-net data are for the preflop, flop, turn or river, not {street!r}")
    if street == "preflop" and int(flops) < 1:
        raise ValueError(f"need flops >= 1 for preflop data, got {flops}")
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if num_samples <= 0 or shard_size <= 0 or iterations <= 0 or group <= 0:
        raise ValueError("need num_samples, shard_size, iterations and group > 0")
    skip = iterations // 2 if skip is None else int(skip)
    if not 0 <= skip < iterations:
        raise ValueError(f"need 0 <= skip < iterations, got skip={skip}")
    g = load(game)
    HoldemPublicGame(g)  # GameError for a game without hold'em public trees
    if LEAF_STREET[street] is not None and leaf_nets is None:
        raise GameError(f"{street} data need the {LEAF_STREET[street]} net at the leaves: pass leaf_nets "
                        f"(a HoldemValueNets directory)")
    if ray_address is not None:
        import_ray(GameError)   # a one-line error now, not after the first shard
    gpus_per_task = default_gpus_per_task(backend, device) if gpus_per_task is None else float(gpus_per_task)
    if not gpus_per_task >= 0:
        raise ValueError(f"gpus_per_task must be >= 0, got {gpus_per_task}")
    bucketer = make_bucketer(street, buckets, num_buckets)
    settings = {"game": g.game_string(), "street": street, "shard_size": int(shard_size), "iterations": int(iterations),
                "skip": skip, "seed": int(seed), "group": int(group), "bet_sizing": sizing_levels(bet_sizing),
                "bucketer": bucketer.to_dict(), "leaf_nets": None if leaf_nets is None else os.path.abspath(leaf_nets),
                "leaf_net_digest": _nets_digest(leaf_nets, LEAF_STREET[street]), "backend": backend, "device": device}
    if street == "preflop":   # only here, so the digests of existing flop/turn/river datasets do not change
        settings["flops"] = int(flops)
    if street == "river" and backend in ("numpy", "torch"):
        # other river targets than the compiled solver's (RangeSolver, averaged after skip): another digest, so
        # the two never mix in one directory; absent for "board"/"board64", whose digests stay as they were
        settings["river_solver"] = "range_solver"
    digest = settings_digest(settings)
    old = open_dataset_dir(out_dir)
    if old is not None and old.get("settings_digest") != digest:
        diff = {k: (old.get(k), v) for k, v in settings.items() if old.get(k) != v and k not in ("backend", "device")}
        raise ValueError(f"{out_dir} holds a dataset made with other settings {diff}; use another directory")
    write_dataset_meta(out_dir, {**settings, "num_samples": int(num_samples), "settings_digest": digest})

    def is_current(header, i, count):
        return header.get("count") == count and header.get("settings_digest") == digest \
            and header.get("seed") == seed * 1_000_003 + i

    num_shards, todo = pending_shards(out_dir, num_samples, shard_size, lambda path: load_holdem_shard(path)[0],
                                      is_current)
    jobs = [(path, settings, i, count) for i, path, count in todo]
    t0, c0 = time.perf_counter(), time.process_time()
    run_shard_jobs(jobs, make_holdem_shard, num_shards, workers, ray_address, progress, f"{street} datagen shards",
                   gpus_per_task=gpus_per_task)
    wall = time.perf_counter() - t0
    made = sum(job[3] for job in jobs)
    fresh = {job[0] for job in jobs}
    cpu = cpu_all = 0.0
    for i in range(num_shards):  # the workers' own CPU time, from the shard headers
        c = float(load_holdem_shard(shard_path(out_dir, i))[0].get("cpu_seconds", 0.0))
        cpu_all += c
        if shard_path(out_dir, i) in fresh:
            cpu += c
    return {"directory": out_dir, "shards": num_shards, "generated": made, "wall_seconds": wall,
            "cpu_seconds": cpu, "situations_per_second": made / wall if made and wall > 0 else float("nan"),
            "cpu_seconds_per_situation": cpu_all / num_samples,
            "parent_cpu_seconds": time.process_time() - c0}


def load_holdem_dataset(directory: str) -> Dict[str, Any]:
    """Concatenate a dataset's shards: dict of arrays plus ``settings`` (from ``dataset.json``)."""
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"no such data directory: {directory}")
    paths = sorted(os.path.join(directory, f) for f in os.listdir(directory)
                   if f.startswith("shard_") and f.endswith(".npz"))
    if not paths:
        raise ValueNetFileError(f"no data shards in {directory}")
    try:
        with open(os.path.join(directory, "dataset.json")) as f:
            settings = json.load(f)
    except (OSError, ValueError) as exc:
        raise ValueNetFileError(f"{directory}: unreadable dataset.json ({exc})") from None
    parts: Dict[str, List[np.ndarray]] = {k: [] for k in SHARD_ARRAYS}
    for p in paths:
        header, arrays = load_holdem_shard(p)
        if header.get("settings_digest") != settings.get("settings_digest"):
            raise ValueNetFileError(f"{p}: shard was made with other settings than {directory}/dataset.json")
        for k in SHARD_ARRAYS:
            parts[k].append(arrays[k])
    out: Dict[str, Any] = {k: np.concatenate(v) for k, v in parts.items()}
    out["settings"] = settings
    return out
