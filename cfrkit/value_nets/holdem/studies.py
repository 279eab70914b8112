"""Studies of the hold'em value nets' data and training: what the benchmark scripts time and print.

* :func:`river_target_study` -- river targets against iterations and target kind (``deepstack_holdem.py --study``);
* :func:`split_groups`, :func:`training_groups`, :func:`sample_curve` -- validation loss against the number of
  training samples, one validation set of whole (board, pot) groups (``deepstack_holdem_samples.py``);
* :func:`preflop_flops_study`, :func:`preflop_net_study` -- sampling error of the auxiliary net's targets and the
  trained auxiliary net's error (``deepstack_preflop_aux.py``);
* :func:`random_holdem_nets` -- random-weight nets of a preset's shape (rates without trained nets:
  ``deepstack_datagen_rate.py``).

Errors are range-weighted mean |difference| per hand or DeepStack's bucketed Huber loss, both in fractions of
the pot for ranges summing to 1; CPU seconds are this process's (``time.process_time``).
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np
import torch

from cfrkit.games.registry import load
from cfrkit.value_nets.holdem.bucketing import make_bucketer
from cfrkit.value_nets.holdem.datagen import bucket_arrays, preflop_targets, solve_situations
from cfrkit.value_nets.holdem.nets import HoldemValueNets, train_street_net
from cfrkit.value_nets.holdem.situations import sample_situations
from cfrkit.value_nets.model import ValueNet
from cfrkit.value_nets.train import masked_huber


def _weighted_mae(values: np.ndarray, ref: np.ndarray, ranges: np.ndarray) -> float:
    return float((np.abs(values - ref) * ranges).sum() / ranges.sum())


def _nets(nets: "str | HoldemValueNets") -> HoldemValueNets:
    return nets if isinstance(nets, HoldemValueNets) else HoldemValueNets.load(nets)


def river_target_study(seed: int = 0, count: int = 10, game: str = "holdem",
                       reference_iterations: int = 1000) -> Dict[str, Any]:
    """How river targets depend on iterations and target kind, on ``count`` situations of one board and pot
    (seed ``[seed, 999]``); range-weighted mean |difference| in fractions of the pot.

    (a) ``dcfr_N_vs_1000``: compiled DCFR average-strategy cfvs after N = 100, 250, 500 iterations against
    ``reference_iterations`` (the datagen's river targets); (b) ``deepstack_cfr+_averaged_vs_dcfr_average_strategy``:
    at ``reference_iterations``, DeepStack's targets (``RangeSolver``, CFR+, root cfvs averaged over the
    iterations after half) against the compiled DCFR's."""
    g = load(game)
    sit = sample_situations("river", count, np.random.default_rng([int(seed), 999]), group=count)
    ref = solve_situations(g, sit, reference_iterations)
    out: Dict[str, Any] = {f"dcfr_{n}_vs_{reference_iterations}": _weighted_mae(solve_situations(g, sit, n), ref,
                                                                                 sit.ranges)
                           for n in (100, 250, 500) if n < reference_iterations}
    ds = solve_situations(g, sit, reference_iterations, skip=reference_iterations // 2, backend="numpy")
    out["deepstack_cfr+_averaged_vs_dcfr_average_strategy"] = _weighted_mae(ds, ref, sit.ranges)
    out["situations"] = count
    return out


def split_groups(data: Dict[str, Any], val_fraction: float, seed: int):
    """``(groups (N,), val_mask (N,) bool, pool)``: the group id of each sample (same board and pot), the
    validation mask (whole groups, about ``val_fraction`` of the samples, seeded) and the training pool's
    group ids in a seeded order.  ``ValueError`` with fewer than 3 groups."""
    keys = np.concatenate([np.asarray(data["boards"], dtype=np.float64),
                           np.asarray(data["contribs"], dtype=np.float64)[:, None]], 1)
    groups = np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1)
    ids = np.random.default_rng(seed).permutation(np.unique(groups))
    if len(ids) < 3:
        raise ValueError(f"need at least 3 (board, pot) groups, the data have {len(ids)}")
    sizes = np.bincount(groups, minlength=int(groups.max()) + 1)[ids]
    n_val = min(len(ids) - 2, max(1, int(np.searchsorted(np.cumsum(sizes), val_fraction * len(groups))) + 1))
    val_mask = np.isin(groups, ids[:n_val])
    return groups, val_mask, ids[n_val:]


def training_groups(groups: np.ndarray, pool: np.ndarray, count: Optional[int]) -> np.ndarray:
    """The first groups of ``pool`` holding at least ``count`` samples (``None``: all of them); so the training
    sets of growing counts nest."""
    if count is None:
        return pool
    sizes = np.bincount(groups, minlength=int(groups.max()) + 1)[pool]
    k = int(np.searchsorted(np.cumsum(sizes), count)) + 1
    return pool[:min(k, len(pool))]


def sample_curve(data: Dict[str, Any], counts: Sequence[Optional[int]], out_dir: str,
                 hidden: Sequence[int] = (256, 256, 256), epochs: int = 200, patience: int = 20,
                 val_fraction: float = 0.1, seed: int = 0, progress: bool = True,
                 on_row: Optional[Callable[[Dict[str, Any]], None]] = None) -> List[Dict[str, Any]]:
    """Validation loss against the number of training samples on one dataset
    (:func:`~cfrkit.value_nets.holdem.datagen.load_holdem_dataset`).

    One validation set for every run (:func:`split_groups`); for each of ``counts`` (``None``: the whole pool) a
    fresh net (:func:`~cfrkit.value_nets.holdem.nets.train_street_net`, the pipeline's recipe) trains on the
    first whole groups of the pool holding at least that many samples, checkpoints in ``out_dir``.  Returns one
    row per count: ``requested``, ``train_samples``, ``val_samples``, ``best_val_huber`` (fractions of the pot),
    ``best_epoch``, ``epochs_run``, ``wall_seconds``, ``cpu_seconds``; ``on_row(row)`` after each."""
    groups, val_mask, pool = split_groups(data, val_fraction, seed)
    street = data["settings"].get("street", "net")
    rows = []
    for count in counts:
        keep = np.isin(groups, training_groups(groups, pool, count)) | val_mask
        sub: Dict[str, Any] = {k: np.asarray(data[k])[keep] for k in ("inputs", "targets", "mask", "boards",
                                                                      "contribs")}
        sub["settings"] = data["settings"]
        t0, c0 = time.perf_counter(), time.process_time()
        summary = train_street_net(sub, os.path.join(out_dir, f"{street}_{count}.pt"), hidden=tuple(hidden),
                                   epochs=epochs, patience=patience, batch_size=1000, seed=seed, progress=progress,
                                   val_mask=val_mask[keep])
        row = {"requested": count, "train_samples": int(keep.sum() - val_mask.sum()),
               "val_samples": int(val_mask.sum()), "best_val_huber": float(summary["best_val_loss"]),
               "best_epoch": int(summary["best_epoch"]), "epochs_run": int(summary["epochs_run"]),
               "wall_seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows


def preflop_flops_study(nets: "str | HoldemValueNets", count: int, seed: int = 0,
                        flop_counts: Sequence[int] = (25, 50, 100, 200, 400), reference: int = 1000) -> Dict[str, Any]:
    """Preflop targets (:func:`~cfrkit.value_nets.holdem.datagen.preflop_targets`: the flop net of ``nets``
    averaged over sampled flops) with each of ``flop_counts`` flops against ``reference`` flops on the same
    ``count`` situations (seed ``[seed, 4242]``, one per pot): ``flops_N`` -> range-weighted mean |difference|
    (fractions of the pot) and CPU seconds per situation; ``mean_abs_value_1000``: the reference's scale."""
    nets = _nets(nets)
    fn = nets.leaf_values("flop")
    sit = sample_situations("preflop", count, np.random.default_rng([int(seed), 4242]), group=1)
    ref = preflop_targets(fn, sit, flops=reference, seed=seed + 1)
    w = sit.ranges
    out: Dict[str, Any] = {"situations": count, f"mean_abs_value_{reference}": float((np.abs(ref) * w).sum() / w.sum())}
    for n in flop_counts:
        c = time.process_time()
        v = preflop_targets(fn, sit, flops=n, seed=seed)
        out[f"flops_{n}"] = {f"range_weighted_mae_vs_{reference}": _weighted_mae(v, ref, w),
                             "cpu_s_per_situation": (time.process_time() - c) / count}
    return out


def preflop_net_study(nets: "str | HoldemValueNets", count: int, seed: int = 0, flops: int = 200,
                      reference: int = 1000) -> Dict[str, Any]:
    """The trained auxiliary net of ``nets`` on ``count`` held-out preflop situations (seed ``[seed, 777]``, one
    per pot) against ``reference``-flop targets: range-weighted mean |error| per hand and the bucketed Huber
    loss (fractions of the pot), beside the same for ``flops``-flop targets (the training targets' own noise)
    and for predicting 0; ``net_cpu_s_per_situation``: the net's forward pass."""
    nets = _nets(nets)
    fn = nets.leaf_values("flop")
    sit = sample_situations("preflop", count, np.random.default_rng([int(seed), 777]), group=1)
    ref = preflop_targets(fn, sit, flops=reference, seed=seed + 7)
    noisy = preflop_targets(fn, sit, flops=flops, seed=seed + 8)
    c = time.process_time()
    pred = nets.predict("preflop", sit.boards, sit.contribs, sit.ranges)
    net_cpu = (time.process_time() - c) / count
    bucketer = nets.bucketer("preflop")
    _, t_ref, mask = bucket_arrays(bucketer, sit.boards, sit.contribs, sit.ranges, ref, nets.stack)

    def huber(values):
        _, t, _ = bucket_arrays(bucketer, sit.boards, sit.contribs, sit.ranges, values, nets.stack)
        return float(masked_huber(torch.as_tensor(t), torch.as_tensor(t_ref), torch.as_tensor(mask)))

    def row(values):
        return {"range_weighted_mae": _weighted_mae(values, ref, sit.ranges), "huber": huber(values)}

    return {"situations": count, "reference_flops": reference, "net_cpu_s_per_situation": net_cpu,
            "val_loss": float(nets.extras["preflop"].get("val_loss", float("nan"))),
            "net": row(pred), f"targets_{flops}_flops": row(noisy), "zero": row(np.zeros_like(ref))}


def random_holdem_nets(device: str = "cpu", seed: int = 0, hidden: Sequence[int] = (256, 256, 256),
                       river_buckets: int = 500, buckets: int = 50, stack: float = 20000.0) -> HoldemValueNets:
    """Random-weight :class:`HoldemValueNets` (river: ``river_buckets`` hand-strength classes; turn, flop:
    ``buckets`` E[HS] buckets; BatchNorm, eval mode) on ``device``: the shape of trained nets without training,
    for rates and smoke tests."""
    torch.manual_seed(seed)
    models, extras = {}, {}
    for street in ("river", "turn", "flop"):
        bucketer = make_bucketer(street, "hs", river_buckets) if street == "river" else make_bucketer(street, "ehs",
                                                                                                        buckets)
        models[street] = ValueNet(bucketer.num_buckets, tuple(hidden), batchnorm=True).eval()
        extras[street] = {"bucketer": bucketer.to_dict()}
    return HoldemValueNets(models, extras, game="holdem", stack=stack, device=device)
