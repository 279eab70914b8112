"""``benchmarks/symmtom_table1.py``: Table 1 over seeds (mean, spread across seeds), the cells flagged
against the paper's std, the curves PNG, unfinished runs read from their checkpoints, and a tiny
run -> report -> tom pipeline."""
import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def bench(benchmark_script):
    return benchmark_script("symmtom_table1")


def _run_json(out, model, n, w, c, seed, mean, curve):
    data = {"model": model, "agents": n, "width": w, "pieces": c, "seed": seed, "episodes": 1024,
            "cpu_seconds": 10.0, "wall_seconds": 20.0, "best_iteration": 4, "best_eval_reward": max(curve),
            "table": {"mean": mean, "std": 5.0, "episodes": 1000, "checkpoint": "best"},
            "curve": [{"episodes": 256 * (i + 1), "eval_reward": r} for i, r in enumerate(curve)]}
    with open(os.path.join(out, f"{model}_n{n}_w{w}_c{c}_s{seed}.json"), "w") as f:
        json.dump(data, f)


def test_report_over_seeds_flags_cells_beyond_the_paper_std(bench, tmp_path):
    out = str(tmp_path)
    # paper: MADDPG 3/6/n 40 [2], CE 3/6/n 36 [4], EE 4/6/3n 14 [1]
    _run_json(out, "maddpg", 3, 6, 3, 0, 37.5, [1.0, 20.0, 30.0, 37.0])
    _run_json(out, "maddpg", 3, 6, 3, 1, 38.0, [3.0, 10.0, 34.0, 39.0])
    _run_json(out, "ce", 3, 6, 3, 0, 33.0, [1.0, 2.0, 3.0, 4.0])
    _run_json(out, "ce", 3, 6, 3, 1, 35.0, [1.0, 2.0, 3.0, 4.0])
    _run_json(out, "ee", 4, 6, 12, 0, 16.0, [1.0, 2.0, 3.0, 4.0])
    res = bench.load_results(out)
    cell = res[("maddpg", 3, 6, 3)]
    assert cell["seeds"] == [0, 1]
    assert cell["table"]["mean"] == pytest.approx(37.75)
    assert cell["table"]["std"] == pytest.approx(np.std([37.5, 38.0], ddof=1))      # across seeds
    assert res[("ee", 4, 6, 12)]["table"]["std"] == 5.0                              # one seed: over episodes
    assert [(p["min"], p["max"]) for p in cell["curve"]] == [(1.0, 3.0), (10.0, 20.0), (30.0, 34.0), (37.0, 39.0)]
    diffs = bench.paper_differences(res)
    assert [(d["model"], d["setting"]) for d in diffs] == [("maddpg", "3/6/3"), ("ee", "4/6/12")]
    assert diffs[0]["z"] == pytest.approx((37.75 - 40) / 2)
    assert diffs[1]["z"] == pytest.approx(2.0)
    table = bench.format_report(res, {s: (50.0, 10.0) for s in bench.SETTINGS})
    maddpg_row = next(line for line in table.splitlines() if line.startswith("| cfrkit: MADDPG |"))
    assert maddpg_row.split(" | ")[1] == "37.8 [0.4]v"
    ce_row = next(line for line in table.splitlines() if line.startswith("| cfrkit: +Conservative"))
    assert ce_row.split(" | ")[1] == "34.0 [1.4]"
    ee_row = next(line for line in table.splitlines() if line.startswith("| cfrkit: +Estimated"))
    assert ee_row.split(" | ")[9] == "16.0 [5.0]^"
    assert "| cfrkit: heuristic (self-play) | 50.0 [10.0] |" in table
    pytest.importorskip("matplotlib")
    png = tmp_path / "curves.png"
    bench.plot_curves(res, str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_tiny_run_report_in_progress_and_tom(bench, tmp_path, capsys):
    """A 3/6/3 MADDPG run of 256 episodes (no updates yet: the warm-up is 25,600 joint steps) leaves its
    JSON and actors; a second run to 512 stopped half-way is listed from its checkpoint; tom plays the
    zeroth test on the best actor.  Checks the plumbing, not learning (the learners' tests do that)."""
    out = str(tmp_path)
    data = bench.train_run("maddpg", 3, 6, 3, 256, out, eval_every=1, eval_episodes=20, final_episodes=50,
                           log=lambda s: None, checkpoint_every=1)
    assert data["episodes"] == 256 and len(data["curve"]) == 2 and data["table"]["episodes"] == 50
    assert os.path.exists(os.path.join(out, "ckpt", "maddpg_n3_w6_c3_s0.actors.pt"))
    bench.train_run("ce", 3, 6, 3, 128, out, eval_every=1, eval_episodes=20, final_episodes=50,
                    log=lambda s: None, checkpoint_every=1)
    os.unlink(os.path.join(out, "ce_n3_w6_c3_s0.json"))       # as if stopped after its checkpoint
    prog = bench.load_in_progress(out)
    assert list(prog) == [("ce", 3, 6, 3)] and prog[("ce", 3, 6, 3)][0]["episodes"] == 128
    assert bench.main(["report", "--out", out, "--in-progress", "--heuristic-episodes", "0"]) == 0
    text = capsys.readouterr().out
    assert "| ce 3/6/3 s0 | 128 |" in text and "curves_latest.png" in text
    assert os.path.exists(os.path.join(out, "curves_latest.png"))
    assert bench.main(["tom", "--models", "maddpg", "--tests", "zeroth", "--trials", "3", "--out", out]) == 0
    tom = json.load(open(os.path.join(out, "tom_maddpg.json")))
    assert set(tom) == {"zeroth_w6"} and tom["zeroth_w6"]["trials"] == 3 and tom["zeroth_w6"]["trained_episodes"] == 256


@pytest.mark.slow
def test_stacked_seeds_run_gives_each_seed_its_own_run(bench, tmp_path, monkeypatch):
    """``run --stack-seeds`` (train_stacked): each seed's JSON equals its run trained alone, also when one
    seed resumes from a checkpoint ahead of the other (which then catches up alone before stacking)."""
    from cfrkit.agents.symmtom.learning import MADDPGSettings

    # tiny settings so that the stacked gradient steps run: 16 episodes per iteration, warm-up after one
    monkeypatch.setattr(bench._Run, "settings", lambda self: MADDPGSettings(
        variant=self.model, seed=self.seed, num_envs=16, warmup=300, batch=96))
    kw = dict(eval_every=1, eval_episodes=10, final_episodes=20, log=lambda s: None)
    alone, stacked = str(tmp_path / "alone"), str(tmp_path / "stacked")
    ref = [bench.train_run("maddpg", 3, 6, 3, 96, alone, seed=s, **kw) for s in (0, 1)]
    bench.train_run("maddpg", 3, 6, 3, 48, stacked, seed=0, keep_checkpoint=True, **kw)
    got = bench.train_stacked("maddpg", 3, 6, 3, 96, [0, 1], stacked, **kw)
    assert [g["seed"] for g in got] == [0, 1] and all(g["stacked_seeds"] == [0, 1] for g in got)
    for r, g in zip(ref, got):
        assert g["episodes"] == r["episodes"] == 96 and g["iterations"] == r["iterations"]
        assert [p["train_reward"] for p in g["curve"]] == pytest.approx([p["train_reward"] for p in r["curve"]],
                                                                         abs=1e-3)
        assert [p["eval_reward"] for p in g["curve"]] == pytest.approx([p["eval_reward"] for p in r["curve"]], abs=1e-3)
        assert g["table"]["mean"] == pytest.approx(r["table"]["mean"], abs=1e-3)
        assert set(g["stages"]) == ({"48", "96"} if g["seed"] == 0 else {"96"})
    assert ref[0]["curve"][-1]["train_reward"] != ref[1]["curve"][-1]["train_reward"]
    # finished runs are skipped on a rerun; no lock is left behind
    assert bench.train_stacked("maddpg", 3, 6, 3, 96, [0, 1], stacked, **kw) == []
    assert not [f for f in os.listdir(os.path.join(stacked, "ckpt")) if f.endswith(".lock")]
