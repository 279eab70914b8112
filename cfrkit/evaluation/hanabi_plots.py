"""PNG heatmaps of Hanabi results (matplotlib, imported lazily: the ``plots`` extra)."""
from __future__ import annotations

from typing import Sequence

import numpy as np


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("PNG output needs matplotlib (pip install cfrkit[plots])") from None
    return plt


def _label_cells(ax, values: np.ndarray, fontsize: int, only_positive: bool = False) -> None:
    """Write each cell's value (one decimal) at its centre; with ``only_positive``, skip cells <= 0."""
    rows, cols = values.shape
    for i in range(rows):
        for j in range(cols):
            if not only_positive or values[i, j] > 0:
                ax.text(j, i, f"{values[i, j]:.1f}", ha="center", va="center", fontsize=fontsize)


def _save(plt, fig, ax, path: str, title: str, colours=None) -> None:
    """Title, a "mean score" colour bar for the image ``colours`` when given, then write the PNG and close."""
    if colours is not None:
        fig.colorbar(colours, ax=ax, label="mean score")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def niche_map_png(path: str, fitness: np.ndarray, title: str = "MAP-Elites: elite self-play score per niche") -> None:
    """The behaviour map: rows = communicativeness bins, columns = risk-aversion bins, colour = score."""
    plt = _pyplot()
    bins = fitness.shape[0]
    values = np.nan_to_num(fitness, nan=0.0)
    fig, ax = plt.subplots(figsize=(9, 7.5))
    im = ax.imshow(values, cmap="RdYlBu_r", origin="upper", vmin=0, vmax=max(25.0 if values.max() > 20 else values.max(), 1))
    ticks = np.arange(bins)
    ax.set_xticks(ticks, [f"{t / bins:.2f}" for t in ticks], rotation=90, fontsize=7)
    ax.set_yticks(ticks, [f"{t / bins:.2f}" for t in ticks], fontsize=7)
    ax.set_xlabel("risk aversion")
    ax.set_ylabel("communicativeness")
    if bins <= 24:
        _label_cells(ax, values, fontsize=5, only_positive=True)
    _save(plt, fig, ax, path, title, colours=im)


def crosstable_png(path: str, table: np.ndarray, names: Sequence[str], title: str = "Crosstable (mean score)") -> None:
    """Heatmap of ``table[i, j]`` (row agent with column agent)."""
    plt = _pyplot()
    n = len(names)
    side = min(2.0 + 0.6 * n, 14.0)
    fig, ax = plt.subplots(figsize=(side + 1.5, side))
    im = ax.imshow(table, cmap="RdYlBu_r", vmin=0)
    if n <= 40:
        ax.set_xticks(range(n), names, rotation=60, ha="right", fontsize=8 if n <= 20 else 5)
        ax.set_yticks(range(n), names, fontsize=8 if n <= 20 else 5)
    else:
        ax.set_xlabel("partner (elites by decreasing self-play score)")
        ax.set_ylabel("agent")
    if n <= 20:
        _label_cells(ax, table, fontsize=6)
    _save(plt, fig, ax, path, title, colours=im)


def histogram_png(path: str, histogram: Sequence[int], title: str = "Self-play scores") -> None:
    """Bar chart of ``histogram[s]`` = games that scored ``s``."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(range(len(histogram)), histogram)
    ax.set_xlabel("score")
    ax.set_ylabel("games")
    _save(plt, fig, ax, path, title)
