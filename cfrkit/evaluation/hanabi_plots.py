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
        for i in range(bins):
            for j in range(bins):
                if values[i, j] > 0:
                    ax.text(j, i, f"{values[i, j]:.1f}", ha="center", va="center", fontsize=5)
    fig.colorbar(im, ax=ax, label="mean score")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


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
        for i in range(n):
            for j in range(n):
                ax.text(j, i, f"{table[i, j]:.1f}", ha="center", va="center", fontsize=6)
    fig.colorbar(im, ax=ax, label="mean score")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def histogram_png(path: str, histogram: Sequence[int], title: str = "Self-play scores") -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(range(len(histogram)), histogram)
    ax.set_xlabel("score")
    ax.set_ylabel("games")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
