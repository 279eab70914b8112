"""``benchmarks/deepstack_holdem_samples.py`` and ``train_on_arrays(val_mask=...)``: one validation set for every
training-set size, whole (board, pot) groups on either side."""
import json

import numpy as np
import pytest

from cfrkit.value_nets.holdem.datagen import generate_holdem_dataset, load_holdem_dataset
from cfrkit.value_nets.holdem.studies import split_groups, training_groups
from cfrkit.value_nets.train import train_on_arrays


@pytest.fixture(scope="module")
def bench(benchmark_script):
    return benchmark_script("deepstack_holdem_samples")


@pytest.fixture(scope="module")
def river_data(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("samples") / "data_river")
    generate_holdem_dataset(out, "river", 40, shard_size=20, iterations=20, seed=3, group=4, num_buckets=10,
                            workers=1, progress=False)
    return out


def test_val_mask_is_the_validation_set(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.random((30, 5)).astype(np.float32)
    x[:, 4] = 1.0
    y = rng.normal(size=(30, 4)).astype(np.float32)
    m = np.ones_like(y, dtype=bool)
    mask = np.zeros(30, dtype=bool)
    mask[[1, 7, 20]] = True
    s = train_on_arrays(x, y, m, str(tmp_path / "a.pt"), {"game": "g"}, hidden=(4,), epochs=2, progress=False,
                        val_mask=mask)
    assert s["split"] == "given" and sorted(s["val_indices"].tolist()) == [1, 7, 20]
    for bad in (np.zeros(30, bool), np.ones(30, bool), np.zeros(29, bool)):
        with pytest.raises(ValueError, match="val_mask"):
            train_on_arrays(x, y, m, str(tmp_path / "b.pt"), {"game": "g"}, hidden=(4,), epochs=1,
                            progress=False, val_mask=bad)


def test_split_keeps_groups_whole_and_nests_training_sets(river_data):
    data = load_holdem_dataset(river_data)
    groups, val_mask, pool = split_groups(data, 0.2, seed=1)
    assert val_mask.any() and not np.isin(pool, groups[val_mask]).any()        # no group on both sides
    small, large = training_groups(groups, pool, 8), training_groups(groups, pool, 20)
    assert set(small) < set(large) <= set(pool)                                  # training sets nest
    assert np.isin(groups, small).sum() >= 8 and np.isin(groups, large).sum() >= 20
    assert list(training_groups(groups, pool, None)) == list(pool)


def test_study_runs_and_reports_one_row_per_count(bench, river_data, tmp_path, capsys):
    out = tmp_path / "s.json"
    assert bench.main(["--data", river_data, "--counts", "12,all", "--hidden", "8", "--epochs", "3",
                       "--out", str(out), "--no-progress"]) == 0
    rows = json.load(open(out))["rows"]
    assert [r["requested"] for r in rows] == [12, None]
    assert rows[0]["train_samples"] < rows[1]["train_samples"] and rows[0]["val_samples"] == rows[1]["val_samples"]
    assert all(np.isfinite(r["best_val_huber"]) and r["best_val_huber"] > 0 for r in rows)
    assert "0.0415" in capsys.readouterr().out
    assert bench.main(["--data", str(tmp_path / "nothing")]) == 2
    for bad in (["--counts", "5"], ["--counts", "x"], ["--hidden", "0"], ["--val-fraction", "0.7"]):
        with pytest.raises(SystemExit):
            bench.main(["--data", river_data, *bad])
