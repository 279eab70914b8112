"""DeepStack's hold'em value-net pipeline as library calls: presets, data per street, training, the whole chain.

What it produces is a run directory ``OUT``::

    OUT/data_<street>/      datagen shards + dataset.json (generate_holdem_dataset; resumable, settings digest)
    OUT/<street>.pt         best checkpoint of the street's training (OUT/<street>.pt.last: the state after
                            every epoch, from which training resumes)
    OUT/nets/               the HoldemValueNets directory (nets.json + <street>.pt) that the A^D agent loads
                            (``make_agent("deepstack-holdem:nets=OUT/nets")``, ``HoldemValueNets.load``)
    OUT/report.json         one record per finished street (situations, rates, losses, the data digest and
                            the net's sha256) and the river check; written after every street

The chain (:func:`build_nets`), in DeepStack's order: river data (compiled solver, no net) -> river net ->
river check (held-out situations re-solved exactly against the net) -> turn data (the river net at the
leaves) -> turn net -> flop data (turn net) -> flop net -> optionally preflop data (no solve: the flop net
averaged over ``preflop_flops`` sampled flops) -> the auxiliary preflop net.  Each street's data depend on
the previous street's net (its sha256 is part of the data's settings digest).

Resume rules (re-running the same call continues where it stopped):

* shards already written with the same settings are kept; missing or damaged ones are made again (shard ``i``
  is seeded ``seed * 1_000_003 + i``, so the files do not depend on when or where they were made);
* a street whose record in ``report.json`` matches its data (digest and situation count), its training
  settings and the net in ``OUT/nets`` is *finished* and skipped (no training, no check);
* training continues from ``OUT/<street>.pt.last`` (same hidden sizes, seed, samples, or a one-line refusal);
* a changed setting that defines a street's data (iterations, group, buckets, seed, the previous street's
  net, ...) is refused with one line (``ValueError``: "... holds a dataset made with other settings ...");
  use another ``OUT``.  More situations than before are allowed (new shards are added, the net retrained).

Units: pot sizes in chips; targets and losses in fractions of the pot (DeepStack's normalisation); rates in
situations per wall second and CPU seconds per situation (the workers' process time, from the shard headers).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Optional, Sequence, Tuple

import numpy as np
import torch

from cfrkit._io import atomic_open
from cfrkit.games.registry import load
from cfrkit.value_nets.holdem.datagen import (BACKENDS, LEAF_STREET, bucket_arrays, generate_holdem_dataset,
                                              load_holdem_dataset, solve_situations)
from cfrkit.value_nets.holdem.nets import MANIFEST, HoldemValueNets, train_street_net
from cfrkit.value_nets.data import DATASET_META
from cfrkit.value_nets.holdem.situations import sample_situations
from cfrkit.value_nets.model import ValueNetFileError
from cfrkit.value_nets.train import masked_huber

STREETS = ("river", "turn", "flop", "preflop")   # the pipeline's order: each street needs the previous one's net
DEFAULT_STREETS = ("river", "turn", "flop")
REPORT = "report.json"
NETS_DIR = "nets"
#: DeepHoldem's best validation Huber losses with about 1M samples per street (fractions of the pot); no preflop.
DEEPHOLDEM_VAL = {"river": 0.0415, "turn": 0.045, "flop": 0.013, "preflop": None}
TRAIN_BATCH = 1000   # DeepStack's batch size
TRAIN_PATIENCE = 20  # epochs without a better validation loss before training stops


@dataclass(frozen=True)
class PipelinePreset:
    """Sizes of one pipeline run.  ``*_samples``: situations per street; ``*_iterations``: solver iterations
    per situation (river: compiled DCFR; turn/flop: CFR+ with the next street's net at the leaves);
    ``hidden``: hidden layer widths of every net; ``epochs``: training epochs at most (early stopping after
    20 without a better validation loss); ``shard_size``: situations per shard file; ``group``: situations
    sharing a board and pot (one tree, one batch); ``check_samples``: held-out river situations of the river
    check; ``river_buckets``: river hand-strength classes; ``buckets``: flop/turn bucketing (``"default"``: the
    EMD abstraction, ``"ehs"``: E[HS] percentiles with ``num_buckets``, or an abstraction directory);
    ``preflop_flops``: flops averaged per preflop situation (the auxiliary net's targets)."""

    name: str
    river_samples: int
    turn_samples: int
    flop_samples: int
    preflop_samples: int
    iterations: int
    turn_iterations: int
    flop_iterations: int
    hidden: Tuple[int, ...]
    epochs: int
    shard_size: int
    group: int
    check_samples: int
    river_buckets: int
    buckets: str
    num_buckets: Optional[int]
    preflop_flops: int

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name in ("name", "buckets", "num_buckets", "hidden"):
                continue
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise ValueError(f"preset {self.name!r}: {f.name} must be a positive integer, got {v!r}")
        if not self.hidden or any(int(h) < 1 for h in self.hidden):
            raise ValueError(f"preset {self.name!r}: hidden needs positive widths, got {self.hidden!r}")
        if self.num_buckets is not None and self.num_buckets < 1:
            raise ValueError(f"preset {self.name!r}: num_buckets must be positive, got {self.num_buckets}")

    def samples(self, street: str) -> int:
        """Situations of ``street``."""
        return getattr(self, f"{_street(street)}_samples")

    def street_iterations(self, street: str) -> int:
        """Solver iterations per ``street`` situation (1 for the preflop: a forward pass, no solve)."""
        street = _street(street)
        return {"river": self.iterations, "turn": self.turn_iterations, "flop": self.flop_iterations,
                "preflop": 1}[street]

    def replace(self, **changes) -> "PipelinePreset":
        """A copy with ``changes`` (None values are ignored, so parsed options can be passed as they are);
        ``hidden`` may be a string ``"500,500,500"``."""
        changes = {k: v for k, v in changes.items() if v is not None}
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise ValueError(f"unknown preset setting(s) {', '.join(unknown)}")
        if isinstance(changes.get("hidden"), str):
            changes["hidden"] = parse_hidden(changes["hidden"])
        if "hidden" in changes:
            changes["hidden"] = tuple(int(h) for h in changes["hidden"])
        return dataclasses.replace(self, **changes)


PRESETS: Dict[str, PipelinePreset] = {
    # seconds: tests and the CLI's smoke run (nets of no use for play beyond checking that it runs)
    "smoke": PipelinePreset("smoke", river_samples=10, turn_samples=10, flop_samples=10, preflop_samples=10,
                            iterations=20, turn_iterations=4, flop_iterations=2, hidden=(8,), epochs=2, shard_size=5,
                            group=2, check_samples=2, river_buckets=10, buckets="ehs", num_buckets=10,
                            preflop_flops=4),
    # minutes
    "tiny": PipelinePreset("tiny", river_samples=300, turn_samples=20, flop_samples=10, preflop_samples=20,
                           iterations=1000, turn_iterations=50, flop_iterations=10, hidden=(64, 64, 64), epochs=40,
                           shard_size=100, group=10, check_samples=40, river_buckets=100, buckets="ehs",
                           num_buckets=30, preflop_flops=20),
    # hours on a 2-core machine
    "small": PipelinePreset("small", river_samples=20000, turn_samples=1200, flop_samples=400, preflop_samples=5000,
                            iterations=250, turn_iterations=300, flop_iterations=200, hidden=(256, 256, 256),
                            epochs=200, shard_size=200, group=10, check_samples=200, river_buckets=500,
                            buckets="default", num_buckets=None, preflop_flops=200),
    # DeepStack's scale (GPUs / a Ray cluster)
    "large": PipelinePreset("large", river_samples=1_000_000, turn_samples=1_000_000, flop_samples=1_000_000,
                            preflop_samples=1_000_000, iterations=1000, turn_iterations=1000, flop_iterations=1000,
                            hidden=(500, 500, 500), epochs=200, shard_size=1000, group=10, check_samples=1000,
                            river_buckets=500, buckets="default", num_buckets=None, preflop_flops=1000),
}


def _street(street: str) -> str:
    if street not in STREETS:
        raise ValueError(f"unknown street {street!r}; choose from {', '.join(STREETS)}")
    return street


def parse_hidden(text: str) -> Tuple[int, ...]:
    """``"500,500,500"`` -> ``(500, 500, 500)``; a one-line ``ValueError`` for anything else."""
    try:
        sizes = tuple(int(h) for h in str(text).split(",") if h.strip())
    except ValueError:
        raise ValueError(f"hidden sizes must be comma-separated integers, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise ValueError(f"hidden sizes must be positive integers, got {text!r}")
    return sizes


def parse_streets(streets: "str | Iterable[str]") -> Tuple[str, ...]:
    """``"river,turn"`` or a sequence -> a tuple of streets in the pipeline's order (given order kept: the
    chain runs them as listed); one-line ``ValueError`` for an unknown or repeated street."""
    items = [s.strip() for s in streets.split(",")] if isinstance(streets, str) else [str(s) for s in streets]
    items = [s for s in items if s]
    bad = [s for s in items if s not in STREETS]
    if bad:
        raise ValueError(f"unknown street(s) {', '.join(bad)}; choose from {', '.join(STREETS)}")
    if not items:
        raise ValueError(f"no street given; choose from {', '.join(STREETS)}")
    if len(set(items)) != len(items):
        raise ValueError(f"a street is listed twice: {','.join(items)}")
    return tuple(items)


def get_preset(preset: "str | PipelinePreset", **changes) -> PipelinePreset:
    """The preset named ``preset`` (``smoke``, ``tiny``, ``small``, ``large``) or the given one, with ``changes``
    (see :meth:`PipelinePreset.replace`)."""
    if isinstance(preset, PipelinePreset):
        return preset.replace(**changes)
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose from {', '.join(PRESETS)}")
    return PRESETS[preset].replace(**changes)


def default_backend() -> str:
    """``"torch"`` when CUDA is present (every round on the GPU), else ``"board"`` (the compiled CPU solvers)."""
    return "torch" if torch.cuda.is_available() else "board"


def resolve_device(device: Optional[str]) -> Optional[str]:
    """A torch device string checked here (one-line ``ValueError`` instead of a failure deep in a worker): ``None``
    stays ``None`` (each step's default: the data's torch backend takes cuda when present, training the CPU),
    ``"auto"`` is ``"cuda"`` when CUDA is present, else ``"cpu"``; ``"cpu"``, ``"cuda"``, ``"cuda:N"`` as given
    (CUDA ones only where CUDA is present)."""
    if device is None:
        return None
    dev = str(device)
    if dev == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        parsed = torch.device(dev)
    except RuntimeError:
        raise ValueError(f"unknown device {device!r}; use auto, cpu, cuda or cuda:N") from None
    if parsed.type not in ("cpu", "cuda"):
        raise ValueError(f"device {device!r}: only cpu and cuda are supported")
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: CUDA is not available on this machine (use cpu or auto)")
    return dev


def data_dir(out_dir: str, street: str) -> str:
    """``OUT/data_<street>``: the shards of ``street``."""
    return os.path.join(out_dir, f"data_{_street(street)}")


def nets_dir(out_dir: str) -> str:
    """``OUT/nets``: the :class:`HoldemValueNets` directory the agent loads."""
    return os.path.join(out_dir, NETS_DIR)


def checkpoint_path(out_dir: str, street: str) -> str:
    """``OUT/<street>.pt``: the best checkpoint of the street's training (``.last``: the resume state)."""
    return os.path.join(out_dir, f"{_street(street)}.pt")


def generate_data(street: str, out_dir: str, preset: "str | PipelinePreset" = "tiny", *, seed: int = 0,
                  backend: Optional[str] = None, workers: Optional[int] = None, ray: Optional[str] = None,
                  device: Optional[str] = None, leaf_nets: Optional[str] = None,
                  progress: bool = True) -> Dict[str, Any]:
    """Generate (or complete) the ``street`` situations of ``preset`` in ``OUT/data_<street>``.

    Turn, flop and preflop data need the previous street's net: ``leaf_nets`` (default ``OUT/nets``) must
    hold it.  ``backend``: ``"board"`` (compiled CPU solvers), ``"board64"``, ``"numpy"`` or ``"torch"``
    (``RangeSolver``, torch on CUDA when present); default :func:`default_backend`.  ``workers``: processes
    (default all cores), ``ray``: a Ray address (``"auto"``, ``"local"``) instead.  Resumable (module
    docstring); a directory made with other settings is refused with a one-line ``ValueError``.

    Returns :func:`~cfrkit.value_nets.holdem.datagen.generate_holdem_dataset`'s summary (shards, situations
    generated now, wall/CPU seconds, situations per wall second, CPU seconds per situation) plus
    ``data_digest`` (the settings digest of the directory) and ``situations`` (in the directory).
    """
    street = _street(street)
    preset = get_preset(preset)
    backend = backend or default_backend()
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    n = preset.samples(street)
    leaf = None
    if LEAF_STREET[street] is not None:
        leaf = leaf_nets or nets_dir(out_dir)
    d = data_dir(out_dir, street)
    gen = generate_holdem_dataset(d, street, n, shard_size=min(preset.shard_size, n),
                                  iterations=preset.street_iterations(street), seed=int(seed),
                                  group=min(preset.group, n), buckets="auto" if street == "river" else preset.buckets,
                                  num_buckets=preset.river_buckets if street == "river" else preset.num_buckets,
                                  leaf_nets=leaf, workers=workers, ray_address=ray, backend=backend, device=device,
                                  progress=progress, flops=preset.preflop_flops)
    with open(os.path.join(d, DATASET_META)) as f:
        meta = json.load(f)
    return {**gen, "data_digest": meta.get("settings_digest"), "situations": int(n)}


def train_net(street: str, out_dir: str, preset: "str | PipelinePreset" = "tiny", *, seed: int = 0,
              max_seconds: Optional[float] = None, progress: bool = True, threads: int = 1,
              device: Optional[str] = None) -> Dict[str, Any]:
    """Train the ``street`` net on ``OUT/data_<street>`` and put it into ``OUT/nets`` (made if missing).

    DeepStack's recipe (:func:`~cfrkit.value_nets.holdem.nets.train_street_net`): ``preset.hidden`` widths,
    at most ``preset.epochs`` epochs, batch 1000, Huber loss in fractions of the pot, validation on unseen
    (board, pot) groups.  Writes ``OUT/<street>.pt`` (best) and ``OUT/<street>.pt.last`` (resume state after
    every epoch: a re-run continues from it; other hidden sizes, seed or sample count are refused with one
    line), then ``OUT/nets/<street>.pt`` and ``OUT/nets/nets.json``.  ``max_seconds``: wall-clock limit of
    this call's training.  Returns the training summary (``best_val_loss``, ``best_epoch``, ``epochs_run``,
    ``samples``, ``split``, ``history``, ``seconds``) plus ``buckets``, ``net_sha256`` (of the adopted net) and
    ``complete`` (False when ``max_seconds`` stopped it before early stopping or the last epoch).  ``device``:
    where the training runs (:func:`resolve_device`; default the CPU, ``"auto"``/``"cuda"`` a GPU); the net and
    its resume state load on any device, so a run may continue on another.
    """
    street = _street(street)
    preset = get_preset(preset)
    device = resolve_device(device) or "cpu"
    data = load_holdem_dataset(data_dir(out_dir, street))
    ck = checkpoint_path(out_dir, street)
    summary = train_street_net(data, ck, hidden=preset.hidden, epochs=preset.epochs, batch_size=TRAIN_BATCH,
                               patience=TRAIN_PATIENCE, seed=int(seed), max_seconds=max_seconds, resume=True,
                               progress=progress, threads=threads, device=device)
    nets = _open_nets(out_dir, data["settings"]["game"])
    nets.set_net(street, ck)
    nets.save(nets_dir(out_dir))
    # finished: all epochs run or early stopping; otherwise the time limit stopped it and a re-run continues
    complete = summary["epochs_run"] >= preset.epochs or summary["epochs_run"] - 1 - summary["best_epoch"] >= \
        TRAIN_PATIENCE
    return {**summary, "buckets": int(data["targets"].shape[1] // 2), "net_sha256": _net_sha(out_dir, street),
            "complete": bool(complete)}


def _open_nets(out_dir: str, game: str) -> HoldemValueNets:
    d = nets_dir(out_dir)
    if os.path.exists(os.path.join(d, MANIFEST)):
        return HoldemValueNets.load(d)   # a damaged directory: one-line ValueNetFileError, not a silent restart
    g = load(game)
    return HoldemValueNets(game=g.game_string(), stack=float(min(g.definition.stack)))


def _net_sha(out_dir: str, street: str) -> Optional[str]:
    try:
        with open(os.path.join(nets_dir(out_dir), f"{street}.pt"), "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def river_check(nets: "str | HoldemValueNets", samples: int, iterations: int, seed: int = 0,
                game: str = "holdem") -> Dict[str, Any]:
    """The river net against exact re-solves of ``samples`` held-out situations (one per board and pot, seed
    ``[seed, 777]``: not a training seed), each solved with ``iterations`` of the compiled DCFR.

    Returns ``huber`` (the validation loss's masked Huber over buckets, fractions of the pot), ``mae_per_hand``
    (mean |net - exact| over live hands), ``range_weighted_mae`` (weighted by the ranges: the error a re-solve
    sees), ``val_loss`` (the net's own best validation loss), ``samples`` and ``solve_cpu_s`` (CPU seconds of
    the exact solves)."""
    if samples < 1 or iterations < 1:
        raise ValueError(f"need samples >= 1 and iterations >= 1, got {samples}, {iterations}")
    if not isinstance(nets, HoldemValueNets):
        nets = HoldemValueNets.load(nets)
    g = load(game)
    rng = np.random.default_rng([int(seed), 777])
    stack = float(min(g.definition.stack))
    # one situation per board and pot: the check's error is averaged over as many boards/pots as possible
    sit = sample_situations("river", samples, rng, group=1, stack=stack)
    t0 = time.process_time()
    exact = solve_situations(g, sit, iterations)
    solve_cpu = time.process_time() - t0
    inputs, targets, mask = bucket_arrays(nets.bucketer("river"), sit.boards, sit.contribs, sit.ranges, exact, stack)
    with torch.no_grad():
        pred = nets.models["river"](torch.as_tensor(inputs))
    huber = float(masked_huber(pred, torch.as_tensor(targets), torch.as_tensor(mask)))
    hand_pred = nets.predict("river", sit.boards, sit.contribs, sit.ranges)
    live = sit.ranges > 0
    return {"samples": len(sit), "huber": huber, "mae_per_hand": float(np.abs(hand_pred - exact)[live].mean()),
            "range_weighted_mae": float((np.abs(hand_pred - exact) * sit.ranges).sum() / sit.ranges.sum()),
            "val_loss": float(nets.extras["river"].get("val_loss", float("nan"))), "solve_cpu_s": solve_cpu}


def read_report(out_dir: str) -> Dict[str, Any]:
    """``OUT/report.json`` (``{}`` when there is none yet); one-line ``ValueNetFileError`` if it is damaged."""
    path = os.path.join(out_dir, REPORT)
    if not os.path.exists(path):
        return {}
    try:
        with open(path) as f:
            report = json.load(f)
    except (OSError, ValueError) as exc:
        raise ValueNetFileError(f"{path}: unreadable pipeline report ({type(exc).__name__}); move it away to "
                                f"rebuild the records (shards and checkpoints are kept)") from None
    if not isinstance(report, dict):
        raise ValueNetFileError(f"{path}: not a pipeline report")
    return report


def _write_report(out_dir: str, report: Dict[str, Any]) -> None:
    with atomic_open(os.path.join(out_dir, REPORT), "w") as f:
        json.dump(report, f, indent=1, default=float)


def _train_settings(preset: PipelinePreset, seed: int) -> Dict[str, Any]:
    return {"hidden": list(preset.hidden), "epochs": int(preset.epochs), "seed": int(seed), "batch_size": TRAIN_BATCH}


def street_finished(record: Optional[Dict[str, Any]], gen: Dict[str, Any], preset: PipelinePreset, seed: int,
                    out_dir: str, street: str) -> bool:
    """Whether ``record`` (the street's entry of ``report.json``) describes a net trained on exactly the data
    ``gen`` describes (digest and situation count), with ``preset``'s training settings, and that net is the
    one in ``OUT/nets``: then the street is skipped on resume."""
    if not record:
        return False
    return (record.get("data_digest") == gen.get("data_digest") and record.get("situations") == gen["situations"]
            and record.get("train") == _train_settings(preset, seed) and record.get("complete", False)
            and record.get("net_sha256") is not None and record.get("net_sha256") == _net_sha(out_dir, street))


StepCallback = Callable[[str, str, Dict[str, Any]], None]


def build_nets(out_dir: str, preset: "str | PipelinePreset" = "tiny", streets: "str | Sequence[str]" = DEFAULT_STREETS,
               *, seed: int = 0, ray: Optional[str] = None, backend: Optional[str] = None,
               workers: Optional[int] = None, device: Optional[str] = None, max_train_seconds: Optional[float] = None,
               progress: bool = True, threads: int = 1, on_step: Optional[StepCallback] = None) -> Dict[str, Any]:
    """Run the chain data -> net for each of ``streets`` in order (default river, turn, flop; add
    ``"preflop"`` after the flop for DeepStack's auxiliary net) into ``out_dir``; resumable (module docstring).

    ``backend``: the data's solver (:func:`generate_data`; default torch on CUDA, else the compiled ``board``);
    ``ray``: a Ray address for the shards (``"local"`` starts one here), ``workers``: processes otherwise;
    ``device`` (:func:`resolve_device`): the data's numpy/torch solvers and the training (None: the data's torch
    backend on cuda when present, the training on the CPU; ``"auto"``: cuda for both when present);
    ``max_train_seconds``: wall-clock limit of each street's training in this call; a street whose training
    stops at the limit ends the call (``report["stopped_at"]``): the next call continues that training, and the
    later streets' data wait for the finished net.  ``on_step(kind, street,
    info)`` is called after each step: ``"data"`` (the :func:`generate_data` summary), ``"train"`` (the
    :func:`train_net` summary), ``"skip"`` (the street's finished record: nothing redone), ``"check"`` (the
    :func:`river_check` result), for progress lines.

    Returns the report written to ``OUT/report.json``: ``preset`` (name), ``settings`` (the preset's fields),
    ``backend``, ``hidden``, ``rounds`` (per street: ``situations``, ``iterations``, ``generation`` (the rate of
    the run that made the shards), ``best_val_loss``, ``best_epoch``, ``epochs_run``, ``buckets``, ``val_curve``,
    ``data_digest``, ``net_sha256``, ``train``, ``complete``), ``river_check``, ``nets`` (the directory), ``net_streets`` (the
    streets with a net there, in game order) and, with the preflop, ``preflop_flops``.
    """
    preset = get_preset(preset)
    order = parse_streets(streets)
    device = resolve_device(device)
    backend = backend or default_backend()
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ValueError(f"{out_dir} is a file; the pipeline writes into a directory")
    os.makedirs(out_dir, exist_ok=True)
    previous = read_report(out_dir)
    rounds_before = previous.get("rounds", {}) if isinstance(previous.get("rounds"), dict) else {}
    report: Dict[str, Any] = {"preset": preset.name, "out": out_dir, "backend": backend,
                              "hidden": list(preset.hidden), "settings": dataclasses.asdict(preset),
                              "nets": nets_dir(out_dir),
                              "rounds": {s: r for s, r in rounds_before.items() if s not in order}}
    for key in ("river_check", "preflop_flops"):
        if key in previous:
            report[key] = previous[key]
    step = on_step or (lambda kind, street, info: None)
    for street in order:
        gen = generate_data(street, out_dir, preset, seed=seed, backend=backend, workers=workers, ray=ray,
                            device=device, progress=progress)
        old = rounds_before.get(street)
        if gen["generated"] == 0 and old and old.get("generation", {}).get("generated", 0) > 0:
            # a resumed run made no new situations: keep the rate measured when they were made
            gen = {**old["generation"], "data_digest": gen["data_digest"], "situations": gen["situations"]}
        step("data", street, gen)
        if street_finished(old, gen, preset, seed, out_dir, street):
            report["rounds"][street] = old
            step("skip", street, old)
        else:
            summary = train_net(street, out_dir, preset, seed=seed, max_seconds=max_train_seconds,
                                progress=progress, threads=threads, device=device)
            step("train", street, summary)
            report["rounds"][street] = {
                "situations": gen["situations"], "iterations": preset.street_iterations(street),
                "generation": {k: v for k, v in gen.items() if k not in ("directory", "data_digest", "situations")},
                "best_val_loss": summary["best_val_loss"], "best_epoch": summary["best_epoch"],
                "epochs_run": summary["epochs_run"], "buckets": summary["buckets"],
                "val_curve": [h[2] for h in summary["history"]], "data_digest": gen["data_digest"],
                "net_sha256": summary["net_sha256"], "train": _train_settings(preset, seed),
                "complete": summary["complete"]}
            if not summary["complete"]:
                # the later streets' data would be made with a net that the next call keeps training (and
                # then refused as made with another net): stop here; the next call continues this training
                report["stopped_at"] = street
                report["net_streets"] = list(HoldemValueNets.load(nets_dir(out_dir)).streets)
                _write_report(out_dir, report)
                return report
            if street == "river":
                report["river_check"] = river_check(nets_dir(out_dir), preset.check_samples, preset.iterations,
                                                    seed=seed)
                step("check", street, report["river_check"])
        if street == "preflop":
            report["preflop_flops"] = preset.preflop_flops
        report["net_streets"] = list(HoldemValueNets.load(nets_dir(out_dir)).streets)
        _write_report(out_dir, report)   # after every street: an interruption keeps the finished ones
    return report


def step_line(kind: str, street: str, info: Dict[str, Any], preset: "str | PipelinePreset", out_dir: str = "") -> str:
    """One line describing a :func:`build_nets` step (``on_step``'s arguments), as ``cfrkit deepstack`` and
    ``benchmarks/deepstack_holdem.py`` print it: rates for ``"data"``, the validation loss beside DeepHoldem's
    for ``"train"`` / ``"skip"``, the held-out error for ``"check"``."""
    preset = get_preset(preset)
    if kind == "data":
        rate = (f"{info['situations_per_second']:.3g} situations/s wall" if info.get("generated", 0) > 0
                else "wall rate not measured in this run")
        how = (f"{preset.preflop_flops} flops averaged" if street == "preflop"
               else f"{preset.street_iterations(street)} iterations")
        return (f"{street}: {info['situations']} situations in {data_dir(out_dir, street)} ({info['generated']} made "
                f"now or in the run that made them, {how} each): {rate}, {info['cpu_seconds_per_situation']:.3g} "
                f"CPU s per situation (all shards; workers' process time)")
    ref = DEEPHOLDEM_VAL[street]
    deepholdem = f"DeepHoldem {ref} with ~1M samples" if ref is not None else "DeepHoldem reports no preflop loss"
    if kind == "train":
        return (f"{street}: net {list(preset.hidden)} x {info['buckets']} buckets, best validation Huber loss "
                f"{info['best_val_loss']:.4g} (epoch {info['best_epoch']}, {info['epochs_run']} epochs, "
                f"{info['samples']} samples, validation split by {info['split']}; {deepholdem})" +
                ("" if info.get("complete", True) else "; stopped at the time limit: run again to continue"))
    if kind == "skip":
        return (f"{street}: finished in an earlier run (same data, training settings and net): best validation "
                f"Huber loss {info['best_val_loss']:.4g} ({deepholdem}); not retrained")
    if kind == "check":
        verdict = "within" if info["huber"] <= 1.5 * info["val_loss"] else "NOT within"
        return (f"river check: {info['samples']} held-out situations re-solved exactly: Huber {info['huber']:.4g} "
                f"vs validation {info['val_loss']:.4g} ({verdict} 1.5x); mean |error| per hand "
                f"{info['mae_per_hand']:.4g} of the pot, range-weighted {info['range_weighted_mae']:.4g}")
    raise ValueError(f"unknown pipeline step {kind!r}")
