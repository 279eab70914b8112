"""CSV scalar logs: one row per training iteration, one column per tag (TensorBoard-style names such
as ``score/train``), readable with any spreadsheet, pandas or :func:`read_scalars`."""
from __future__ import annotations

import csv
import os
from typing import Dict, List, Sequence


class CsvScalars:
    """Append rows of scalars to ``path``.

    On resume (``after_step`` given) rows logged past the checkpoint's step are dropped first, so the
    file matches the resumed run exactly.  Every row is flushed (a killed run keeps its curve).
    """

    def __init__(self, path: str, fields: Sequence[str], step_field: str = "iteration", after_step=None):
        self.path = path
        self.fields = list(fields)
        self.step_field = step_field
        rows: List[Dict[str, str]] = []
        if after_step is not None and os.path.exists(path):
            rows = [r for r in read_scalars(path) if float(r[step_field]) <= after_step]
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.fields)
            w.writeheader()
            for r in rows:
                w.writerow({k: r.get(k, "") for k in self.fields})

    def log(self, **values) -> None:
        unknown = set(values) - set(self.fields)
        if unknown:
            raise KeyError(f"unknown scalar tags {sorted(unknown)}; declared: {self.fields}")
        with open(self.path, "a", newline="") as f:
            csv.DictWriter(f, fieldnames=self.fields).writerow(
                {k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in values.items()})


def read_scalars(path: str) -> List[Dict[str, str]]:
    """The rows of a scalars CSV as dicts (strings; empty string where a tag was not logged)."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))
