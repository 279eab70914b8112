"""The set of hold'em value nets (flop, turn, river, and DeepStack's auxiliary preflop net) and their training.

A :class:`HoldemValueNets` directory holds ``nets.json`` (manifest: game, stack, which streets) and one
value-net checkpoint per street (``river.pt``, ``turn.pt``, ``flop.pt``, optionally ``preflop.pt``: the
auxiliary net, 169 classes, values of the state before the flop cards; :mod:`cfrkit.value_nets.model`
format, metadata: bucketer, stack, game, data settings, validation loss)::

    nets = HoldemValueNets.load("nets/")          # ValueNetFileError if missing or corrupted
    nets.streets                                  # e.g. ("turn", "river")
    fn = nets.leaf_values("river")                # leaves on the river: a turn re-solve's tree
    SubgameSolver(turn_tree, ranges, leaf_values=fn)   # fn: a LeafValues, (L, B, 1326) chips

``leaf_values(street)`` takes the street of the *leaves*: a flop re-solve uses ``leaf_values("turn")``, a
preflop re-solve ``leaf_values("preflop")`` (the auxiliary net; its leaves have an empty board).
"""
from __future__ import annotations

import json
import os
import shutil
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from cfrkit._io import atomic_open, read_json_manifest
from cfrkit.value_nets.holdem.bucketing import holdem_bucketer_from_dict
from cfrkit.value_nets.holdem.leaf_values import HoldemNetLeafValues
from cfrkit.value_nets.model import ValueNet, ValueNetFileError, load_checkpoint, save_checkpoint

MANIFEST = "nets.json"
KIND = "cfrkit-holdem-value-nets"
NET_STREETS = ("preflop", "flop", "turn", "river")


class HoldemValueNets:
    """Value nets of some of the streets preflop (auxiliary net), flop, turn, river (see module docstring)."""

    def __init__(self, models: Optional[Dict[str, ValueNet]] = None, extras: Optional[Dict[str, Dict[str, Any]]] = None,
                 game: str = "holdem", stack: float = 20000.0, device: str = "cpu"):
        self.models: Dict[str, ValueNet] = dict(models or {})
        self.extras: Dict[str, Dict[str, Any]] = {k: dict(v) for k, v in (extras or {}).items()}
        self.game = game
        self.stack = float(stack)
        self.device = device
        self._bucketers: Dict[str, Any] = {}
        self._leaf: Dict[str, HoldemNetLeafValues] = {}
        for s in self.models:
            if s not in NET_STREETS:
                raise ValueError(f"hold'em value nets are for {', '.join(NET_STREETS)}, not {s!r}")

    @property
    def streets(self) -> Tuple[str, ...]:
        """The streets that have a net, in game order."""
        return tuple(s for s in NET_STREETS if s in self.models)

    def bucketer(self, street: str):
        """The bucketer the ``street`` net was trained with."""
        self._need(street)
        if street not in self._bucketers:
            try:
                self._bucketers[street] = holdem_bucketer_from_dict(self.extras[street]["bucketer"])
            except (KeyError, ValueError, TypeError) as exc:
                raise ValueNetFileError(f"the {street} net has no usable bucketer metadata ({exc})") from None
        return self._bucketers[street]

    def _need(self, street: str) -> None:
        if street not in NET_STREETS:
            raise ValueError(f"street must be one of {', '.join(NET_STREETS)}, got {street!r}")
        if street not in self.models:
            have = ", ".join(self.streets) or "none"
            raise ValueNetFileError(f"no {street} value net (nets present: {have})")

    def leaf_values(self, street: str, empty_range: str = "uniform") -> HoldemNetLeafValues:
        """:class:`~cfrkit.solvers.public.leaf_values.LeafValues` for ``SubgameSolver(leaf_values=...)`` on
        depth-limited ``HoldemPublicGame`` trees whose leaves are on ``street`` (chips; see
        :class:`HoldemNetLeafValues`)."""
        key = f"{street}:{empty_range}"
        if key not in self._leaf:
            self._need(street)
            self._leaf[key] = HoldemNetLeafValues(self.models[street], self.bucketer(street), self.stack, street,
                                                  device=self.device, empty_range=empty_range)
        return self._leaf[key]

    def predict(self, street: str, boards: Sequence, contribs, ranges: np.ndarray) -> np.ndarray:
        """Net values per hand ``(N, 2, 1326)`` as fractions of the pot for situations with normalised
        ``ranges (N, 2, 1326)`` (the datagen's target format), board ``boards[i]``, ``contribs[i]`` chips each."""
        import torch

        fn = self.leaf_values(street)
        r = torch.as_tensor(np.asarray(ranges), dtype=fn.dtype)
        v0, v1 = fn.evaluate([tuple(int(c) for c in b) for b in boards], contribs, r[:, None, 0], r[:, None, 1])
        pots = 2.0 * np.asarray(contribs, dtype=np.float64)
        out = np.stack([v0[:, 0].double().numpy(), v1[:, 0].double().numpy()], 1)
        mass = np.asarray(ranges).sum(-1)[:, ::-1]  # values scale with the opponent's mass
        return out / pots[:, None, None] / np.where(mass > 0, mass, 1.0)[:, :, None]

    # ------------------------------------------------------------------ files
    def set_net(self, street: str, checkpoint: str) -> None:
        """Adopt the checkpoint at ``checkpoint`` (from training) as the ``street`` net."""
        model, payload = load_checkpoint(checkpoint, map_location=self.device)
        self.models[street] = model
        self.extras[street] = payload.get("extra", {})
        self._bucketers.pop(street, None)
        self._leaf = {k: v for k, v in self._leaf.items() if not k.startswith(street + ":")}

    def save(self, directory: str) -> None:
        """Write every net and the manifest to ``directory`` (atomic per file; the manifest last)."""
        os.makedirs(directory, exist_ok=True)
        for s in self.streets:
            save_checkpoint(os.path.join(directory, f"{s}.pt"), self.models[s], self.extras.get(s, {}))
        man = {"kind": KIND, "version": 1, "game": self.game, "stack": self.stack, "streets": list(self.streets),
               "val_loss": {s: self.extras.get(s, {}).get("val_loss") for s in self.streets}}
        with atomic_open(os.path.join(directory, MANIFEST), "w") as f:
            json.dump(man, f, indent=1)

    @classmethod
    def load(cls, directory: str, device: str = "cpu") -> "HoldemValueNets":
        """Open a directory written by :meth:`save`; :class:`ValueNetFileError` (one line) if it is missing,
        incomplete, corrupted or not a set of hold'em value nets."""
        path = os.path.join(str(directory), MANIFEST)
        man = read_json_manifest(directory, MANIFEST, ValueNetFileError, "hold'em value nets")
        if not isinstance(man, dict) or man.get("kind") != KIND or not isinstance(man.get("streets"), list):
            raise ValueNetFileError(f"{path} is not a cfrkit hold'em value-nets manifest")
        models, extras = {}, {}
        for s in man["streets"]:
            if s not in NET_STREETS:
                raise ValueNetFileError(f"{path}: unknown street {s!r}")
            ck = os.path.join(str(directory), f"{s}.pt")
            try:
                models[s], payload = load_checkpoint(ck, map_location=device)
            except FileNotFoundError:
                raise ValueNetFileError(f"{directory}: the manifest lists a {s} net but {s}.pt is missing") from None
            extras[s] = payload.get("extra", {})
        nets = cls(models, extras, game=str(man.get("game", "holdem")), stack=float(man.get("stack", 20000.0)),
                   device=device)
        for s in nets.streets:
            nets.bucketer(s)  # fail now, with one line, if a bucketer cannot be rebuilt
            if nets.models[s].num_buckets != nets.bucketer(s).num_buckets:
                raise ValueNetFileError(f"{directory}: the {s} net has {nets.models[s].num_buckets} buckets, "
                                        f"its bucketer {nets.bucketer(s).num_buckets}")
        return nets


def train_street_net(data: Dict[str, Any], out_path: str, hidden: Sequence[int] = (500, 500, 500),
                     epochs: int = 200, batch_size: int = 1000, lr: float = 1e-3, val_fraction: float = 0.1,
                     patience: int = 20, seed: int = 0, max_seconds: Optional[float] = None, resume: bool = False,
                     batchnorm: bool = True, progress: bool = True, threads: int = 1,
                     val_mask: Optional[np.ndarray] = None, device: Optional[str] = None) -> Dict[str, Any]:
    """Train one street's net on a hold'em dataset (:func:`~cfrkit.value_nets.holdem.datagen.load_holdem_dataset`).

    DeepStack's recipe: Huber loss over the buckets on each sample's board, Adam (learning rate cut
    tenfold on plateaus), early stopping after ``patience`` epochs without a better validation loss;
    the best model is saved to ``out_path`` and the training state after every epoch to
    ``out_path + ".last"`` (``resume=True`` continues from it).  The validation set is whole groups of
    situations (same board and pot), so its loss is the error on boards the net has not seen, or exactly
    the samples of ``val_mask`` when given.  Defaults: 3 x 500 hidden units with
    BatchNorm and PReLU, batch 1000 (DeepStack's).  ``device``: the torch device of the data and the model
    (default the CPU; ``"cuda"`` on a GPU: the whole dataset is copied there once, float32); the checkpoints load
    on any device.
    """
    from cfrkit.games.registry import load
    from cfrkit.value_nets.train import train_on_arrays

    settings = data["settings"]
    game = load(settings["game"])
    stack = float(min(game.definition.stack))
    extra = {"game": settings["game"], "street": settings["street"], "bucketer": settings["bucketer"],
             "stack": stack, "pot_weighted": False,
             "data": {k: settings.get(k) for k in ("iterations", "skip", "bet_sizing", "group", "leaf_net_digest")}}
    if "flops" in settings:   # preflop (auxiliary net) data: flops averaged per situation
        extra["data"]["flops"] = settings["flops"]
    groups = None
    if "boards" in data and "contribs" in data:  # validation on unseen (board, pot) groups
        keys = np.concatenate([np.asarray(data["boards"], dtype=np.float64),
                               np.asarray(data["contribs"], dtype=np.float64)[:, None]], 1)
        groups = np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1)
    summary = train_on_arrays(data["inputs"], data["targets"], data["mask"], out_path, extra, hidden=hidden,
                              groups=groups, val_mask=val_mask,
                              epochs=epochs, batch_size=batch_size, lr=lr, val_fraction=val_fraction,
                              patience=patience, seed=seed, max_seconds=max_seconds, resume=resume,
                              batchnorm=batchnorm, progress=progress, threads=threads, device=device,
                              desc=f"train {settings['street']} net")
    return summary


def copy_nets(src: str, dst: str) -> None:
    """Copy a nets directory (manifest and checkpoints)."""
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(src):
        if name == MANIFEST or name.endswith(".pt"):
            shutil.copy2(os.path.join(src, name), os.path.join(dst, name))
