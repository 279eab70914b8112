"""Validation loss of a hold'em value net against the number of training samples (issue 14: "validation loss
against the number of samples, beside DeepHoldem's").

    python benchmarks/deepstack_holdem_samples.py --data runs/ds_small/data_river --counts 1000,2000,5000,all \\
        --hidden 256,256,256 --out runs/ds_samples_river.json

One dataset of ``benchmarks/deepstack_holdem.py`` (a ``data_<street>`` directory).  A fixed tenth of its
(board, pot) groups (``--val-fraction``, seeded) is the validation set of every run; the rest, in a seeded
order of groups, is the training pool, and each count of ``--counts`` trains a fresh net (the pipeline's
recipe: :func:`~cfrkit.value_nets.holdem.nets.train_street_net`, Huber loss, Adam, early stopping) on the
first whole groups of the pool that hold at least that many samples (``all``: the whole pool); the study is
:func:`cfrkit.value_nets.holdem.studies.sample_curve`, this script prints it.  So the
losses differ only by the training samples: the curve says how much more data would buy.  Losses are
DeepStack's normalisation (values as fractions of the pot for ranges summing to 1, Huber with delta 1 over
the buckets on the board); DeepHoldem's published validation losses with about 1M samples are printed
beside them as context (river 0.0415, turn 0.045, flop 0.013: other sample counts, buckets and nets).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from cfrkit.value_nets.holdem.pipeline import DEEPHOLDEM_VAL  # noqa: E402
from cfrkit.value_nets.holdem.studies import sample_curve, split_groups  # noqa: E402


def parse_counts(text: str):
    out = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if part == "all":
            out.append(None)
            continue
        try:
            n = int(part)
        except ValueError:
            raise ValueError(f"--counts: {part!r} is neither a number nor 'all'") from None
        if n < 10:
            raise ValueError(f"--counts: {n} is below 10 samples")
        out.append(n)
    if not out:
        raise ValueError("--counts is empty")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="a data_<street> directory of benchmarks/deepstack_holdem.py")
    ap.add_argument("--counts", default="1000,2000,5000,all", help="training sample counts, comma-separated; "
                    "'all' is the whole training pool")
    ap.add_argument("--hidden", default="256,256,256", help="hidden layer widths (the small preset's)")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--patience", type=int, default=20)
    ap.add_argument("--val-fraction", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="JSON file for the results")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    try:
        counts = parse_counts(args.counts)
    except ValueError as exc:
        ap.error(str(exc))
    try:
        hidden = tuple(int(h) for h in args.hidden.split(","))
    except ValueError:
        hidden = ()
    if not hidden or min(hidden) < 1:
        ap.error(f"--hidden {args.hidden!r} must be positive widths, e.g. 256,256,256")
    if not 0 < args.val_fraction < 0.5:
        ap.error("--val-fraction must be in (0, 0.5)")

    from cfrkit.value_nets.holdem.datagen import load_holdem_dataset
    from cfrkit.value_nets.model import ValueNetFileError

    try:
        data = load_holdem_dataset(args.data)
        groups, val_mask, _ = split_groups(data, args.val_fraction, args.seed)
    except (FileNotFoundError, ValueNetFileError, ValueError) as exc:
        print(f"deepstack_holdem_samples: {exc}", file=sys.stderr)
        return 2
    street = data["settings"].get("street", "?")
    print(f"{street}: {len(groups)} samples in {len(np.unique(groups))} (board, pot) groups; validation "
          f"{int(val_mask.sum())} samples ({int(np.unique(groups[val_mask]).size)} groups), training pool "
          f"{int((~val_mask).sum())}; net {list(hidden)}, {data['targets'].shape[1] // 2} buckets", flush=True)

    def show(row):
        print(f"{street}: {row['train_samples']:7d} training samples -> best validation Huber "
              f"{row['best_val_huber']:.4g} (epoch {row['best_epoch']}, {row['cpu_seconds']:.0f} CPU s)", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        rows = sample_curve(data, counts, tmp, hidden=hidden, epochs=args.epochs, patience=args.patience,
                            val_fraction=args.val_fraction, seed=args.seed, progress=not args.no_progress,
                            on_row=show)
    ref = DEEPHOLDEM_VAL.get(street)
    lines = [f"{'training samples':>16s} {'validation Huber':>17s}",
             *(f"{r['train_samples']:16d} {r['best_val_huber']:17.4g}" for r in rows)]
    if ref is not None:
        lines.append(f"{'~1,000,000':>16s} {ref:17.4g}  (DeepHoldem, context only)")
    print("\n".join(lines))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"data": os.path.abspath(args.data), "street": street, "hidden": list(hidden),
                       "seed": args.seed, "val_fraction": args.val_fraction, "rows": rows,
                       "deepholdem_val_huber_1M": ref}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
