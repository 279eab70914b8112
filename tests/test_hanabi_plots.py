"""The Hanabi PNG writers produce images of the documented size (matplotlib: the ``plots`` extra)."""
import numpy as np
import pytest

pytest.importorskip("matplotlib")

from cfrkit.evaluation.hanabi_plots import crosstable_png, histogram_png, niche_map_png  # noqa: E402


def _shape(path):
    import matplotlib.image

    return matplotlib.image.imread(str(path)).shape[:2]


def test_png_writers_write_images_of_their_figure_size(tmp_path):
    rng = np.random.default_rng(0)
    fitness = rng.random((20, 20)) * 25
    fitness[0, 0] = np.nan  # an empty niche
    niche_map_png(tmp_path / "niche.png", fitness)
    crosstable_png(tmp_path / "cross.png", rng.random((5, 5)) * 20, list("abcde"))
    histogram_png(tmp_path / "hist.png", [1, 4, 2])
    # figure size (inches) x 130 dpi, as (height, width) in pixels
    assert _shape(tmp_path / "niche.png") == (975, 1170)
    assert _shape(tmp_path / "cross.png") == (650, 845)
    assert _shape(tmp_path / "hist.png") == (455, 910)
