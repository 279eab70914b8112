"""benchmarks/gpu_check.py in its CPU form (--device cpu --tiny), so the GPU check cannot rot between GPU sessions."""
import json

import pytest

pytest.importorskip("torch")


@pytest.fixture
def gc(benchmark_script):
    return benchmark_script("gpu_check")


def test_tiny_cpu_run_measures_every_section(gc, tmp_path, capsys):
    out = str(tmp_path / "check.json")
    assert gc.main(["--device", "cpu", "--tiny", "--out", out]) == 0
    text = capsys.readouterr().out
    rep = json.load(open(out))
    assert rep["preflight"]["problems"] == [] and rep["preflight"]["compiled_kernels"] is True
    assert set(rep["sections"]) == set(gc.SECTIONS)
    for name, sec in rep["sections"].items():
        assert sec["status"] == "ok", (name, sec["reason"])
        assert sec["rows"], name
        assert sec["seconds"] <= sec["budget_seconds"] + 15
    rows = {r["item"]: r for sec in rep["sections"].values() for r in sec["rows"]}
    # what --tiny leaves out is said, with the reason
    assert rows["turn spot"]["status"] == "skipped" and "--tiny" in rows["turn spot"]["reason"]
    assert rows["datagen flop"]["status"] == "skipped"
    river = rows["river spot"]
    assert river["torch"]["iterations_per_second"] > 0 and river["compiled"]["iterations_per_second"] > 0
    assert [s["batch"] for s in river["torch"]["batch_sweep"]] == [1, 2]
    for street in ("river", "turn"):
        r = rows[f"datagen {street}"]
        assert r["torch_best"]["situations_per_second"] > 0 and r["compiled"]["situations_per_second"] > 0
        assert all(not s.get("extrapolated") for s in r["sweep"])
        assert r["rows_that_fit"] >= 1
    # the turn: one group of 2, then two groups in one batched solve (MultiBoardLeafSolver)
    assert [s["batch"] for s in rows["datagen turn"]["sweep"]] == [2, 4]
    # turn: the compiled BoardLeafSolver (float32) runs the torch path's CFR+ iterates: rounding only; a swapped
    # player or pot normalisation is O(1).  River: two target definitions after 3 iterations, just finite
    assert rows["datagen turn"]["targets_weighted_mean_abs_diff"] < 1e-3
    assert rows["datagen river"]["targets_weighted_mean_abs_diff"] < 100
    for street in ("river", "turn", "flop"):
        t = rows[f"train {street} net"]["cpu"]
        assert t["samples_per_second"] > 0 and t["seconds_per_epoch"] > 0
    for item in ("Rainbow (Hanabi)", "IPPO (Hanabi)", "MADDPG (SymmToM)"):
        assert rows[item]["cpu"]["updates_per_second"] > 0 and rows[item]["cpu"]["updates"] > 0
    assert rows["Rainbow (Hanabi)"]["cpu"]["env_steps_per_second"] > 0
    assert rows["DRL-BR (Leduc, vs always-call)"]["cpu"]["steps"] >= 120
    # the table: one line per measure, the JSON keeps it too
    for measure in ("iterations/s (one spot)", "situations/s, batch 10", "samples/s", "env steps/s", "steps/s",
                    "SKIPPED: --tiny"):
        assert measure in text
    assert rep["table"] in text


def test_no_cuda_is_reported_not_crashed(gc, tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    out = str(tmp_path / "check.json")
    assert gc.main(["--device", "cuda", "--out", out]) == 1
    rep = json.load(open(out))
    assert "CUDA requested" in rep["preflight"]["problems"][0]
    for sec in rep["sections"].values():
        assert sec["status"] == "skipped" and "CUDA requested" in sec["reason"]
    assert "NOT COMPLETE" in capsys.readouterr().out


def test_budgets_cut_off_and_skip(gc, tmp_path, capsys):
    out = str(tmp_path / "check.json")
    # a section past its budget is killed and reported; the run still writes its JSON
    assert gc.main(["--device", "cpu", "--tiny", "--isolate", "yes", "--sections", "drl_br", "--budget", "0.5",
                    "--grace", "0.5", "--out", out]) == 1
    rep = json.load(open(out))
    assert rep["sections"]["drl_br"]["status"] == "timed out"
    assert rep["sections"]["train"] == {"status": "skipped", "reason": "not in --sections", "rows": []}
    assert "TIMED OUT" in capsys.readouterr().out


def test_section_in_a_child_process(gc, tmp_path):
    """The GPU form's path: a section in its own process, its rows back through the JSON lines."""
    out = str(tmp_path / "check.json")
    assert gc.main(["--device", "cpu", "--tiny", "--isolate", "yes", "--sections", "drl_br", "--out", out]) == 0
    sec = json.load(open(out))["sections"]["drl_br"]
    assert sec["status"] == "ok" and sec["rows"][0]["cpu"]["steps"] >= 120


@pytest.mark.parametrize("argv, message", [
    (["--sections", "datagen,quantum"], "unknown section(s) quantum"),
    (["--device", "tpu"], "--device must be cuda"),
])
def test_bad_arguments_one_line(gc, argv, message, capsys):
    assert gc.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_failures_are_reported_and_the_rest_runs(gc, tmp_path, monkeypatch, capsys):
    """A section that raises is 'failed' with its reason; an item that raises (a missing package) is a FAILED row
    and the section's other items still run."""
    def boom(ctx):
        raise RuntimeError("simulated section failure")

    def no_gym(ctx, per):
        raise ModuleNotFoundError("No module named 'gymnasium'")

    monkeypatch.setitem(gc.SECTION_FNS, "drl_br", boom)
    monkeypatch.setattr(gc, "_rainbow", no_gym)
    out = str(tmp_path / "check.json")
    assert gc.main(["--device", "cpu", "--tiny", "--sections", "learners,drl_br", "--out", out]) == 1
    rep = json.load(open(out))
    assert rep["sections"]["drl_br"]["status"] == "failed"
    assert "simulated section failure" in rep["sections"]["drl_br"]["reason"]
    rows = {r["item"]: r for r in rep["sections"]["learners"]["rows"]}
    assert rep["sections"]["learners"]["status"] == "ok"
    assert rows["Rainbow (Hanabi)"]["status"] == "failed" and "gymnasium" in rows["Rainbow (Hanabi)"]["reason"]
    assert rows["IPPO (Hanabi)"]["cpu"]["updates"] > 0 and rows["MADDPG (SymmToM)"]["cpu"]["updates"] > 0
    text = capsys.readouterr().out
    assert "FAILED: ModuleNotFoundError" in text and "NOT COMPLETE: drl_br" in text


def test_datagen_extrapolation_counts_the_set_up_once(gc, monkeypatch, tmp_path):
    """The first GPU run extrapolated (set-up + 2 iterations) x iterations / 2, so one-time host set-up (showdown
    indices, all-in matrices, the copies) was multiplied by 150 on the turn and 500 on the river: a batch of 50 turn
    situations read 0.57/s against 6.2/s for 10 measured in full.  A fake clock: 10 s of set-up per solver and
    0.01 s per iteration; 1000 iterations must cost 10 + 1000 x 0.01 s per solve, not ~5000 s."""
    import time

    import numpy as np

    from cfrkit.games import load
    from cfrkit.solvers.public import torch_batch
    from cfrkit.value_nets.holdem.datagen import sizing_levels
    from cfrkit.value_nets.holdem.situations import sample_situations

    now = [0.0]
    real_init, real_iterate = torch_batch.MultiBoardRiverSolver.__init__, torch_batch.MultiBoardRiverSolver.iterate

    def init(self, *a, **k):
        real_init(self, *a, **k)
        now[0] += 10.0

    def iterate(self, count=1):
        real_iterate(self, count)
        now[0] += 0.01 * count

    monkeypatch.setattr(torch_batch.MultiBoardRiverSolver, "__init__", init)
    monkeypatch.setattr(torch_batch.MultiBoardRiverSolver, "iterate", iterate)
    ctx = gc.Ctx("cpu", tiny=False, budget=60.0, lines=str(tmp_path / "rows"), threads=1)
    ctx.clock = lambda: now[0]
    game = load("holdem")
    sit = sample_situations("river", 2, np.random.default_rng(5), group=2, stack=20000.0)
    # ``end`` already passed: the probe and the steady iterations run, the rest is extrapolated
    e = gc._datagen_point(ctx, game, sizing_levels(None), sit, 1000, 500, None, time.perf_counter())
    assert e["extrapolated"] and e["solves"] == 1
    assert e["setup_seconds"] == pytest.approx(10.0)
    assert e["per_iteration_seconds"] == pytest.approx(0.01)
    assert e["solve_seconds"] == pytest.approx(10.0 + 1000 * 0.01)
    assert e["stage_estimate_seconds"] == pytest.approx(e["seconds"])
    assert e["naive_extrapolation_seconds"] == pytest.approx((10.0 + 2 * 0.01) * 500)   # the first form's figure
