"""The torch path of the hold'em datagen: river groups on RangeSolver, and the rate benchmark run on CPU."""
import json

import numpy as np
import pytest

from cfrkit.games import load
from cfrkit.solvers.public.tree import RangeSolver
from cfrkit.value_nets.holdem.datagen import (sizing_levels, street_tree, generate_holdem_dataset, load_holdem_dataset,
                                              solve_situations)
from cfrkit.value_nets.holdem.situations import sample_situations


def _weighted(a, b, w):
    return float((np.abs(a - b) * w).sum() / w.sum())


def test_river_range_solver_targets_match_compiled_and_torch_equals_numpy():
    g = load("holdem")
    sit = sample_situations("river", 2, np.random.default_rng([1, 5]), group=2)
    assert sit.contribs[0] == 1808  # a mid-size pot (the draw this test was calibrated on)
    compiled = solve_situations(g, sit, 300)                      # default backend: compiled DCFR
    rs = solve_situations(g, sit, 300, 150, backend="numpy")      # RangeSolver CFR+, averaged after 150
    w = sit.ranges
    # nearly zero-sum per situation (pot fractions of normalised ranges; not exactly: with alternating updates
    # the two players' values of an iteration come from different strategy pairs): measured 1.3e-5
    assert np.abs((w * rs).sum((1, 2))).max() < 1e-3
    # two definitions of the target (DCFR average strategy's cfvs vs CFR+ cfvs averaged over iterations
    # 151-300) of the same equilibrium: measured 0.004 of the pot here; swapped players, a sign or a factor 2
    # in the pot normalisation each give >= 0.25
    err = _weighted(rs, compiled, w)
    assert err < 0.02
    assert _weighted(rs[:, ::-1], compiled, w) > 0.2 and _weighted(2 * rs, compiled, w) > 0.2
    # torch: the same iterates; against the numpy backend's Cython terminal kernels only rounding (amplified a
    # little by CFR+'s zero regrets), against numpy with the same sorted prefix-sum kernel exactly
    tv = solve_situations(g, sit, 20, 10, backend="torch", device="cpu")
    nv = solve_situations(g, sit, 20, 10, backend="numpy")
    assert _weighted(tv, nv, w) < 1e-4
    tree = street_tree(g, sizing_levels(None), sit.boards[0], sit.contribs[0], False)
    s = RangeSolver(tree, ranges=sit.ranges, skip=10, terminal_kernel="sorted").run(20)
    assert np.allclose(s.average_root_values() / (2 * sit.contribs[0]), tv, rtol=0, atol=1e-10)


def test_river_dataset_settings_keep_compiled_digest(tmp_path):
    out = str(tmp_path / "river")
    kw = dict(shard_size=2, iterations=20, seed=3, group=2, num_buckets=20, workers=1, progress=False)
    generate_holdem_dataset(out, "river", 2, **kw)
    settings = load_holdem_dataset(out)["settings"]
    assert "river_solver" not in settings and settings["backend"] == "board"
    generate_holdem_dataset(out, "river", 2, backend="board64", **kw)  # compiled river too: the same dataset
    with pytest.raises(ValueError, match="other settings.*river_solver"):  # other targets: refused
        generate_holdem_dataset(out, "river", 2, backend="numpy", **kw)
    other = str(tmp_path / "river_np")
    generate_holdem_dataset(other, "river", 2, backend="numpy", **kw)
    data = load_holdem_dataset(other)
    assert data["settings"]["river_solver"] == "range_solver"
    sit = sample_situations("river", 2, np.random.default_rng(3 * 1_000_003), group=2)
    assert np.allclose(data["values"], solve_situations(load("holdem"), sit, 20, 10, backend="numpy"), atol=1e-6)


@pytest.fixture
def bench(benchmark_script):
    return benchmark_script("deepstack_datagen_rate")


def test_rate_benchmark_times_batched_groups_beside_the_per_group_loop(tmp_path, capsys, bench):
    out = str(tmp_path / "rate.json")
    assert bench.main(["--streets", "turn", "--batch", "4", "--group", "2", "--iterations", "3", "--device", "cpu",
                       "--no-compiled", "--out", out]) == 0
    row = json.load(open(out))["rounds"]["turn"]
    assert row["groups"] == 2 and row["torch_per_group"]["seconds_per_batch"] > 0
    assert row["batching_speedup"] > 0 and row["batching_speedup_cpu_seconds"] > 0
    assert "per-group torch loop" in capsys.readouterr().out
    assert bench.main(["--group", "0"]) == 2


def test_rate_benchmark_runs_on_cpu(tmp_path, capsys, bench):
    out = str(tmp_path / "rate.json")
    assert bench.main(["--streets", "river,turn", "--batch", "2", "--iterations", "6", "--device", "cpu",
                       "--out", out]) == 0
    text = capsys.readouterr().out
    assert "RANDOM-WEIGHT nets" in text and "time.perf_counter" in text and "DeepHoldem about 7/s" in text
    rep = json.load(open(out))
    assert rep["device"] == "cpu" and set(rep["rounds"]) == {"river", "turn"}
    for street, row in rep["rounds"].items():
        for path in ("torch", "compiled"):
            assert row[path]["seconds_per_batch"] > 0 and row[path]["situations_per_second"] > 0
            assert np.isclose(row[path]["situations_per_second"] * row[path]["seconds_per_batch"], 2)
        assert row["torch_over_compiled"] > 0
        # turn: the compiled BoardLeafSolver runs the same CFR+ iterates in float32; river: other target
        # definitions after 6 iterations, still well under the 0.25 of a wrong sign or side
        assert row["targets_weighted_mean_abs_diff"] < (1e-4 if street == "turn" else 0.1)
        assert f"{street}: device cpu, batch 2, 6 iterations" in text


@pytest.mark.parametrize("argv, message", [
    (["--streets", "river,preflop"], "unknown street(s) preflop"),
    (["--batch", "0"], "--batch must be positive"),
    (["--iterations", "-3"], "--iterations must be positive"),
    (["--nets", "/nonexistent/nets"], "no such directory"),
    (["--device", "cuda:0"], "CUDA is not available"),
    (["--device", "gpu7"], "unknown --device"),
])
def test_rate_benchmark_bad_input_one_line(argv, message, capsys, bench):
    import torch

    if "cuda" in argv[-1] and torch.cuda.is_available():
        pytest.skip("CUDA present")
    assert bench.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and err.startswith("deepstack_datagen_rate: error:")


def test_rate_benchmark_nets_without_the_leaf_street(tmp_path, capsys, bench):
    from cfrkit.value_nets.holdem.nets import HoldemValueNets

    d = str(tmp_path / "nets")
    HoldemValueNets(game="holdem", stack=20000.0).save(d)  # a valid but empty set of nets
    assert bench.main(["--streets", "turn", "--nets", d, "--device", "cpu"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no river value net" in err and len(err.splitlines()) == 1
