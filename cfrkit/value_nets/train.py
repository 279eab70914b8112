"""Training of DeepStack value networks: Huber loss on bucket cfvs, validation split, early stopping.

Inputs are built from the shards' hand-space ranges through a bucketer (ranges summed per bucket,
targets averaged per bucket weighted by the range), the pot fraction is each player's contribution
over the stack.  The loss is the Huber loss over the buckets that exist on each sample's board.
After every epoch the state (model, optimizer, epoch, best validation loss) is checkpointed to
``<out>.last``; the best model so far is saved to ``<out>``.  ``resume=True`` continues from
``<out>.last``.  Training stops early when the validation loss has not improved for ``patience`` epochs,
or after ``max_seconds``; resuming a run that stopped early trains no further (unless ``patience`` grew).
"""
from __future__ import annotations

import os
import time
from typing import Any, Dict, Optional, Sequence

import numpy as np
import torch
from torch import nn

from cfrkit.games.registry import load
from cfrkit.value_nets.bucketing import Bucketer, LeducBucketer, bucketer_from_dict
from cfrkit.value_nets.model import ValueNet, ValueNetFileError, load_checkpoint, save_checkpoint


def bucketer_for_game(game) -> Bucketer:
    game = load(game)
    if game.short_name in ("leduc", "leduc_nolimit"):
        return LeducBucketer(game.num_cards, game.suits)
    raise ValueError(f"no bucketer for game {game.short_name!r}")


def build_training_arrays(data: Dict[str, Any], bucketer: Bucketer, stack: float):
    """``(inputs (N, 2M+1), targets (N, 2M), mask (N, 2M))`` as float32 arrays."""
    boards, contribs, ranges, values = data["boards"], data["contribs"], data["ranges"], data["values"]
    N = len(contribs)
    M = bucketer.num_buckets
    inputs = np.zeros((N, 2 * M + 1), dtype=np.float32)
    targets = np.zeros((N, 2 * M), dtype=np.float32)
    mask = np.zeros((N, 2 * M), dtype=np.float32)
    keys = [tuple(b) for b in boards.tolist()]
    for board in sorted(set(keys)):
        idx = np.array([i for i, k in enumerate(keys) if k == board])
        mat = bucketer.matrix(board)  # (H, M)
        bmask = (mat.sum(0) > 0).astype(np.float32)
        for p in (0, 1):
            r = ranges[idx, p]
            rb = r @ mat
            tot = rb.sum(1, keepdims=True)
            inputs[idx, p * M:(p + 1) * M] = rb / np.where(tot > 0, tot, 1.0)
            counts = mat.sum(0)
            weighted = (r * values[idx, p]) @ mat
            plain = values[idx, p] @ mat / np.where(counts > 0, counts, 1.0)
            targets[idx, p * M:(p + 1) * M] = np.where(rb > 0, weighted / np.where(rb > 0, rb, 1.0), plain)
            mask[idx, p * M:(p + 1) * M] = bmask
    inputs[:, -1] = contribs / stack
    return inputs, targets, mask


def masked_huber(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor, delta: float = 1.0,
                 weight: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Huber loss over the unmasked entries; ``weight (N,)`` scales each sample's terms."""
    loss = nn.functional.huber_loss(pred * mask, target * mask, reduction="none", delta=delta)
    if weight is not None:
        return (loss * weight[:, None]).sum() / (mask * weight[:, None]).sum().clamp(min=1e-12)
    return loss.sum() / mask.sum().clamp(min=1.0)


def train_value_net(data: Dict[str, Any], out_path: str, hidden: Sequence[int] = (128, 128, 128),
                    epochs: int = 200, batch_size: int = 1000, lr: float = 1e-3, val_fraction: float = 0.1,
                    patience: int = 20, seed: int = 0, max_seconds: Optional[float] = None, resume: bool = False,
                    batchnorm: bool = False, progress: bool = True, threads: int = 1,
                    pot_weighted: bool = False) -> Dict[str, Any]:
    """Train on ``data`` (from :func:`cfrkit.value_nets.data.load_dataset`); returns a summary dict.

    ``pot_weighted`` weights each sample by its pot, so the loss measures errors in chips rather than
    in fractions of the pot (a 1% error in a large pot costs more chips).
    """
    game = load(data["game"])
    bucketer = bucketer_for_game(game)
    stack = float(getattr(game, "stack", game.max_utility()))
    inputs, targets, mask = build_training_arrays(data, bucketer, stack)
    weights = None
    if pot_weighted:
        c = np.asarray(data["contribs"], dtype=np.float32)
        weights = c / c.mean()
    extra = {"game": game.game_string(), "bucketer": bucketer.to_dict(), "stack": stack,
             "pot_weighted": bool(pot_weighted)}
    return train_on_arrays(inputs, targets, mask, out_path, extra, hidden=hidden, epochs=epochs,
                           batch_size=batch_size, lr=lr, val_fraction=val_fraction, patience=patience, seed=seed,
                           max_seconds=max_seconds, resume=resume, batchnorm=batchnorm, progress=progress,
                           threads=threads, weights=weights)


def train_on_arrays(inputs: np.ndarray, targets: np.ndarray, mask: np.ndarray, out_path: str, extra: Dict[str, Any],
                    hidden: Sequence[int] = (128, 128, 128), epochs: int = 200, batch_size: int = 1000,
                    lr: float = 1e-3, val_fraction: float = 0.1, patience: int = 20, seed: int = 0,
                    max_seconds: Optional[float] = None, resume: bool = False, batchnorm: bool = False,
                    progress: bool = True, threads: int = 1, weights: Optional[np.ndarray] = None,
                    desc: str = "train value net", groups: Optional[np.ndarray] = None,
                    val_mask: Optional[np.ndarray] = None, device: Optional[str] = None) -> Dict[str, Any]:
    """Train a :class:`ValueNet` on bucketed arrays (``inputs (N, 2M+1)``, ``targets``/``mask (N, 2M)``).

    ``extra``: metadata stored in the checkpoints (``game``, ``bucketer``, ``stack``, ...); on resume its
    ``game`` and ``pot_weighted`` must match the checkpoint's.  ``weights (N,)`` scales each sample's
    loss terms.  ``groups (N,)``: samples of a group (e.g. situations sharing board and pot) all go to the
    validation set or all to training, so validation measures error on unseen boards (with fewer than two
    groups the split is by sample; ``summary["split"]`` says which).  ``val_mask (N,)`` bool: exactly these
    samples are the validation set (overrides ``val_fraction`` and ``groups``; for studies that keep one
    validation set while the training set varies; split ``"given"``).  ``device``: where the data and the
    model live while training (default ``"cpu"``; e.g. ``"cuda"``: the whole data set is moved there once,
    float32, ``4 * N * (4M + 1)`` bytes); checkpoints are saved as usual and load on any device.  Returns a summary
    dict (best validation loss, epochs, history ``(epoch, train, val)``, validation indices).
    """
    torch.set_num_threads(threads)
    N = len(inputs)
    if N < 10:
        raise ValueError(f"need at least 10 training samples, got {N}")
    M = targets.shape[1] // 2
    pot_weighted = bool(extra.get("pot_weighted", False))
    rng = np.random.default_rng(seed)
    n_val = max(1, int(round(N * val_fraction)))
    split = "sample"
    if val_mask is not None:
        val_mask = np.asarray(val_mask, dtype=bool).reshape(-1)
        if len(val_mask) != N or not val_mask.any() or val_mask.all():
            raise ValueError(f"val_mask must be {N} booleans with both validation and training samples")
        val_idx, tr_idx = np.flatnonzero(val_mask), np.flatnonzero(~val_mask)
        n_val, split = len(val_idx), "given"
    elif groups is not None and len(np.unique(groups)) >= 2:
        groups = np.asarray(groups)
        gperm = rng.permutation(np.unique(groups))
        sizes = np.array([(groups == g).sum() for g in gperm])
        k = min(int(np.searchsorted(np.cumsum(sizes), n_val)) + 1, len(gperm) - 1)
        is_val = np.isin(groups, gperm[:k])
        val_idx, tr_idx = np.flatnonzero(is_val), np.flatnonzero(~is_val)
        split = "group"
    else:  # no groups, or a single one: split by sample (the summary says which)
        perm = rng.permutation(N)
        val_idx, tr_idx = perm[:n_val], perm[n_val:]
    dev = torch.device(device or "cpu")
    X, Y, Mk = (torch.as_tensor(np.asarray(a, dtype=np.float32), device=dev) for a in (inputs, targets, mask))
    W = None if weights is None else torch.as_tensor(np.asarray(weights, dtype=np.float32), device=dev)
    torch.manual_seed(seed)
    model = ValueNet(M, hidden, batchnorm).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.1, patience=max(1, patience // 3))
    start_epoch, best, best_epoch, history = 0, float("inf"), -1, []
    last_path = out_path + ".last"
    extra_base = {**extra, "pot_weighted": pot_weighted, "seed": int(seed),
                  "samples": int(N), "train_samples": int(len(tr_idx)), "val_samples": int(n_val)}
    if resume and os.path.exists(last_path):
        model, payload = load_checkpoint(last_path)
        model = model.to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.1, patience=max(1, patience // 3))
        ex = payload["extra"]
        if ex.get("game") != extra.get("game"):
            raise ValueNetFileError(f"{last_path}: checkpoint was trained on {ex.get('game')!r}")
        # settings that define the run must not change on resume (they were silently taken from the file)
        changed = {name: (want, got) for name, want, got in (
            ("hidden", list(hidden), list(model.hidden)), ("batchnorm", bool(batchnorm), model.batchnorm),
            ("pot_weighted", pot_weighted, ex.get("pot_weighted", False)),
            ("samples", int(N), ex.get("samples")), ("seed", int(seed), ex.get("seed", int(seed))))
            if want != got}
        if changed:
            detail = ", ".join(f"{k} {want} (checkpoint: {got})" for k, (want, got) in changed.items())
            raise ValueError(f"{last_path} was trained with other settings: {detail}; resume with the same "
                             f"settings and data or train into another file")
        try:
            start_epoch, best, best_epoch = int(ex["epoch"]) + 1, float(ex["best_val"]), int(ex["best_epoch"])
            history = [tuple(h) for h in ex.get("history", [])]
            if "optimizer" in payload:
                opt.load_state_dict(payload["optimizer"])
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise ValueNetFileError(f"{last_path}: unusable training state ({type(exc).__name__}: {exc})") from None
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=epochs, initial=start_epoch, desc=desc, unit="epoch")
    t0 = time.perf_counter()
    gen = torch.Generator().manual_seed(seed + start_epoch)
    epoch = start_epoch - 1
    # a resumed run that had already stopped early stays stopped (another epoch could replace the saved net,
    # and a dataset made with that net would no longer match it)
    last_epoch = start_epoch if start_epoch > 0 and start_epoch - 1 - best_epoch >= patience else epochs
    for epoch in range(start_epoch, last_epoch):
        model.train()
        order = torch.as_tensor(tr_idx)[torch.randperm(len(tr_idx), generator=gen)].to(dev)
        total = torch.zeros((), dtype=torch.float64, device=dev)  # summed on the device: no host sync per step
        for k in range(0, len(order), batch_size):
            b = order[k:k + batch_size]
            opt.zero_grad()
            loss = masked_huber(model(X[b]), Y[b], Mk[b], weight=None if W is None else W[b])
            loss.backward()
            opt.step()
            total += loss.detach() * len(b)
        train_loss = float(total) / len(order)
        model.eval()
        with torch.no_grad():
            vi = torch.as_tensor(val_idx, device=dev)
            val_loss = float(masked_huber(model(X[vi]), Y[vi], Mk[vi], weight=None if W is None else W[vi]))
        sched.step(val_loss)
        history.append((epoch, train_loss, val_loss))
        if val_loss < best:
            best, best_epoch = val_loss, epoch
            save_checkpoint(out_path, model, {**extra_base, "epoch": epoch, "val_loss": val_loss,
                                              "train_loss": train_loss})
        save_checkpoint(last_path, model, {**extra_base, "epoch": epoch, "best_val": best, "best_epoch": best_epoch,
                                           "history": history}, optimizer=opt)
        if bar is not None:
            bar.update(1)
            bar.set_postfix(train=f"{train_loss:.2e}", val=f"{val_loss:.2e}", best=f"{best:.2e}")
        if epoch - best_epoch >= patience:
            break
        if max_seconds is not None and time.perf_counter() - t0 > max_seconds:
            break
    if bar is not None:
        bar.close()
    return {"best_val_loss": best, "best_epoch": best_epoch, "epochs_run": epoch + 1, "samples": N,
            "seconds": time.perf_counter() - t0, "history": history, "val_indices": val_idx, "split": split}


def load_leaf_values(path: str, device: str = "cpu"):
    """A :class:`~cfrkit.value_nets.leaf_values.NetLeafValues` from a checkpoint written by :func:`train_value_net`."""
    from cfrkit.value_nets.leaf_values import NetLeafValues

    model, payload = load_checkpoint(path, map_location=device)
    extra = payload.get("extra", {})
    try:
        bucketer = bucketer_from_dict(extra["bucketer"])
        stack = float(extra["stack"])
    except (KeyError, ValueError, TypeError) as exc:
        raise ValueNetFileError(f"{path}: checkpoint lacks bucketer/stack metadata ({exc})") from None
    return NetLeafValues(model, bucketer, stack, device=device)
