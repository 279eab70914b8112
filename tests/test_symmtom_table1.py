"""``benchmarks/symmtom_table1.py``: Table 1 over seeds (mean, spread across seeds), the cells flagged
against the paper's std, the curves PNG, unfinished runs read from their checkpoints, and a tiny
run -> report -> tom pipeline."""
import json
import os
import signal
import subprocess
import sys
import threading
import time

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
    # a run finished before `finish` stored its sampled cell: backfill-sampled computes what finish did
    path = os.path.join(out, "maddpg_n3_w6_c3_s0.json")
    with open(path) as f:
        stored = json.load(f)
    with open(path, "w") as f:
        json.dump({k: v for k, v in stored.items() if k != "table_sampled"}, f)
    save = str(tmp_path / "backfill.json")
    assert bench.main(["backfill-sampled", "--out", out, "--save", save]) == 0
    with open(save) as f:
        cell = json.load(f)["maddpg_n3_w6_c3_s0"]
    assert (cell["mean"], cell["std"]) == (data["table_sampled"]["mean"], data["table_sampled"]["std"])
    assert cell["greedy_check"] == pytest.approx(data["table"]["mean"], abs=6e-4) and cell["episodes"] == 50
    merged = bench.summary_data(out, None, episodes=256, seeds=1, sampled={"maddpg_n3_w6_c3_s0": cell})
    assert merged["results"][("maddpg", 3, 6, 3)]["table_sampled"]["mean"] == data["table_sampled"]["mean"]
    with open(path, "w") as f:
        json.dump(stored, f)
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
    with open(os.path.join(out, "tom_maddpg.json")) as f:
        tom = json.load(f)
    assert set(tom) == {"zeroth_w6"} and tom["zeroth_w6"]["trials"] == 3 and tom["zeroth_w6"]["trained_episodes"] == 256


@pytest.mark.slow
def test_stacked_seeds_run_gives_each_seed_its_own_run(bench, tmp_path, monkeypatch):
    """``run --stack-seeds`` (train_stacked): each seed's JSON equals its run trained alone, also when one
    seed resumes from a checkpoint ahead of the other (which then catches up alone before stacking)."""
    from cfrkit.agents.symmtom.learning import MADDPGSettings

    # tiny settings so that the stacked gradient steps run: 16 episodes per iteration, warm-up after one
    monkeypatch.setattr(bench._Run, "settings", lambda self: MADDPGSettings(
        variant=self.model, seed=self.seed, num_envs=16, warmup=300, batch=96))
    kw = {"eval_every": 1, "eval_episodes": 10, "final_episodes": 20, "log": lambda s: None}
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


@pytest.fixture
def one_torch_thread():
    """torch on one thread for the test (as ``run --threads 1``): two threads on a loaded 2-core machine spin."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _tiny_run(out, episodes=640):
    """``run`` of one 3/6/3 MADDPG run in a child process (default SIGINT handling, as from a terminal), a greedy
    evaluation and a progress line after every iteration of 128 episodes."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = [sys.executable, os.path.join(root, "benchmarks", "symmtom_table1.py"), "run", "--episodes", str(episodes),
           "--settings", "3/6/3", "--models", "maddpg", "--eval-every", "1", "--eval-episodes", "10",
           "--final-episodes", "20", "--progress-every", "1", "--out", out]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root,
                            env=dict(os.environ, PYTHONPATH=root))


def _stop_after_first_progress(proc, sig):
    """Send ``sig`` once the run has trained an iteration (its first progress line); (stdout lines, stderr,
    seconds from the signal to the exit)."""
    watchdog = threading.Timer(240, proc.kill)
    watchdog.start()
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if "greedy reward" in line:
                break
        sent = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate()
        return lines + out.splitlines(), err, time.monotonic() - sent
    finally:
        watchdog.cancel()


def _rewards(data):
    """A run JSON's curve without its timings: (episodes, greedy evaluation, training reward) per point."""
    return [(p["episodes"], p["eval_reward"], p["train_reward"]) for p in data["curve"]]


def _checkpoint_episodes(path):
    from cfrkit.agents.rl import load_checkpoint

    return int(load_checkpoint(path)["trainer"]["episodes"])


@pytest.mark.slow
def test_run_stops_on_sigint_and_sigterm_with_a_checkpoint_and_resumes(bench, tmp_path, one_torch_thread):
    """SIGINT, then SIGTERM on the resumed command: each stops ``run`` within seconds after the iteration under way,
    with its checkpoint saved, its lock released, one line saying how to resume, exit status 128 + signal and no
    traceback (the interrupt used to be ignored or to leave no checkpoint); a third ``run`` resumes where the second
    stopped and finishes with the curve and Table 1 cell of the run trained without a stop."""
    out = str(tmp_path / "stopped")
    name = "maddpg_n3_w6_c3_s0"
    ck, lock = os.path.join(out, "ckpt", name + ".pt"), os.path.join(out, "ckpt", name + ".lock")
    stopped_at = [0]
    for sig in (signal.SIGINT, signal.SIGTERM):
        proc = _tiny_run(out)
        lines, err, seconds = _stop_after_first_progress(proc, sig)
        assert proc.returncode == 128 + sig, (lines, err)
        assert "Traceback" not in err and seconds < 10, (err, seconds)
        assert f"{name}: training from episode {stopped_at[-1]} to 640" in lines[0]
        assert ("resumed from its checkpoint" in lines[0]) == (stopped_at[-1] > 0)
        episodes = _checkpoint_episodes(ck)
        assert stopped_at[-1] < episodes < 640 and not os.path.exists(lock)
        assert lines[-1].startswith(f"stopped by {sig.name}: {name} saved at {episodes} episodes ({ck})")
        assert "lock released; resume with: python " in lines[-1] and lines[-1].endswith(f"--out {out}")
        assert sum(line.startswith("stopped by") for line in lines) == 1
        stopped_at.append(episodes)
    proc = _tiny_run(out)
    text, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    assert f"{name}: training from episode {stopped_at[-1]} to 640 (resumed from its checkpoint)" in text.splitlines()
    with open(os.path.join(out, name + ".json")) as f:
        data = json.load(f)
    assert data["episodes"] == 640 and [p["episodes"] for p in data["curve"]] == list(range(128, 641, 128))
    assert not [f for f in os.listdir(os.path.join(out, "ckpt")) if f.endswith((".lock", ".pt"))
                and not f.endswith(".actors.pt")]
    # the checkpoints saved on the signals continue the run bit for bit
    ref = bench.train_run("maddpg", 3, 6, 3, 640, str(tmp_path / "whole"), eval_every=1, eval_episodes=10,
                          final_episodes=20, log=lambda s: None, keep_checkpoint=False)
    assert _rewards(data) == _rewards(ref)
    assert (data["table"], data["last"], data["best_iteration"]) == (ref["table"], ref["last"], ref["best_iteration"])


def test_stacked_run_stops_between_iterations_with_every_seed_saved(bench, tmp_path, monkeypatch, one_torch_thread):
    """``train_stacked`` asked to stop (``should_stop``) after two iterations: every seed's checkpoint saved at
    the same episode count, no lock left, :class:`RunStopped` naming them; a rerun resumes both and ends as the
    run without a stop."""
    from cfrkit.agents.symmtom.learning import MADDPGSettings

    monkeypatch.setattr(bench._Run, "settings", lambda self: MADDPGSettings(
        variant=self.model, seed=self.seed, num_envs=16, warmup=300, batch=96))
    kw = {"eval_every": 1, "eval_episodes": 10, "final_episodes": 20, "log": lambda s: None}
    out = str(tmp_path / "stopped")
    polls = iter(range(100))
    with pytest.raises(bench.RunStopped) as stop:
        bench.train_stacked("maddpg", 3, 6, 3, 96, [0, 1], out, should_stop=lambda: next(polls) >= 2, **kw)
    assert [(name, episodes) for name, episodes, _ in stop.value.saved] == [("maddpg_n3_w6_c3_s0", 32),
                                                                            ("maddpg_n3_w6_c3_s1", 32)]
    assert all(_checkpoint_episodes(path) == 32 for _, _, path in stop.value.saved)
    assert not [f for f in os.listdir(os.path.join(out, "ckpt")) if f.endswith(".lock")]
    got = bench.train_stacked("maddpg", 3, 6, 3, 96, [0, 1], out, **kw)
    ref = bench.train_stacked("maddpg", 3, 6, 3, 96, [0, 1], str(tmp_path / "whole"), **kw)
    for g, r in zip(got, ref):
        assert g["episodes"] == 96 and _rewards(g) == _rewards(r) and g["table"] == r["table"]


def test_run_checkpoint_every_zero_saves_only_when_stopped(bench, tmp_path, monkeypatch):
    """``run --checkpoint-every 0`` writes no periodic checkpoint (the many-runs-on-a-slow-disk case); the
    default writes one every 50 iterations and ``--checkpoint-every 1`` after every iteration but the last."""
    saved = []
    monkeypatch.setattr(bench._Run, "save", lambda self, state: saved.append(self.name))
    common = ["run", "--episodes", "384", "--settings", "3/6/3", "--models", "maddpg", "--eval-every", "1",
              "--eval-episodes", "5", "--final-episodes", "5", "--progress-every", "0"]
    assert bench.main(common + ["--checkpoint-every", "0", "--out", str(tmp_path / "a")]) == 0
    assert saved == []
    assert bench.main(common + ["--checkpoint-every", "1", "--out", str(tmp_path / "b")]) == 0
    assert saved == ["maddpg_n3_w6_c3_s0"] * 2      # after iterations 1 and 2 of 3


def _final_json(out, model, n, w, c, seed, mean, episodes=60032, cpu=100.0, wall=150.0, name=None):
    data = {"model": model, "agents": n, "width": w, "pieces": c, "seed": seed, "episodes": episodes,
            "cpu_seconds": cpu, "wall_seconds": wall, "eval_cpu_seconds": 2.0, "best_iteration": 3,
            "best_eval_reward": mean, "table": {"mean": mean, "std": 30.0, "episodes": 1000, "checkpoint": "best"},
            "table_sampled": {"mean": mean - 1.0, "std": 30.0}, "last": {"mean": mean - 10.0, "std": 30.0}, "curve": [
                {"episodes": 128 * (i + 1), "eval_reward": mean * (i + 1) / 3, "train_reward": 1.0} for i in range(3)]}
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name or f"{model}_n{n}_w{w}_c{c}_s{seed}.json"), "w") as f:
        json.dump(data, f)


def test_summary_counts_complete_cells_sums_costs_and_flags_cells_beyond_the_paper_std(bench, tmp_path, capsys):
    out, old = str(tmp_path / "60k"), str(tmp_path / "old")
    # complete cells (3 seeds at >= 60,000 episodes); paper: MADDPG 3/6/n 40 [2], CE 3/6/n 36 [4],
    # MADDPG 4/6/3n 13 [0], EE 4/6/3n 14 [1], GE 3/12/n 52 [19]
    for s, mean in enumerate((43.0, 42.0, 44.0)):        # 43.0: +1.5 paper stds -> above
        _final_json(out, "maddpg", 3, 6, 3, s, mean, cpu=100.0 + s, wall=200.0)
    for s, mean in enumerate((39.0, 40.0, 41.0)):        # 40.0: exactly one std above -> within
        _final_json(out, "ce", 3, 6, 3, s, mean, cpu=50.0)
    for s in range(3):                                  # paper std 0, equal mean -> within
        _final_json(out, "maddpg", 4, 6, 12, s, 13.0, cpu=300.0)
    for s, mean in enumerate((10.0, 11.0, 12.0)):        # 11.0: 3 paper stds below
        _final_json(out, "ee", 4, 6, 12, s, mean, cpu=400.0)
    # a partial cell: two seeds finished, the third's JSON is from an earlier budget stage (not counted)
    _final_json(out, "ge", 3, 12, 3, 0, 20.0, cpu=70.0)
    _final_json(out, "ge", 3, 12, 3, 1, 22.0, cpu=70.0)
    _final_json(out, "ge", 3, 12, 3, 2, 60.0, episodes=30016, cpu=35.0)
    _final_json(out, "ce", 4, 6, 3, 0, 50.0)             # not a Table 1 setting: ignored
    with open(os.path.join(out, "tom_ce.json"), "w") as f:
        json.dump({}, f)
    # the old loop's runs: 10 and 20 ms per episode for MADDPG where the new runs exist, 5 where they do not
    _final_json(old, "maddpg", 3, 6, 3, 0, 30.0, episodes=1280, cpu=12.8, name="maddpg_n3_w6_c3.json")
    _final_json(old, "maddpg", 4, 6, 12, 0, 9.0, episodes=1280, cpu=25.6, name="maddpg_n4_w6_c12.json")
    _final_json(old, "maddpg", 3, 12, 3, 0, 9.0, episodes=1280, cpu=6.4, name="maddpg_n3_w12_c3.json")

    data = bench.summary_data(out, old, episodes=60_000, seeds=3)
    assert sorted(data["complete"]) == [("ce", 3, 6, 3), ("ee", 4, 6, 12), ("maddpg", 3, 6, 3), ("maddpg", 4, 6, 12)]
    assert data["partial"] == [("ge", 3, 12, 3)] and len(data["missing"]) == 72 - 5
    assert data["status"][("ge", 3, 12, 3)] == 2
    assert data["results"][("ge", 3, 12, 3)]["table"]["mean"] == pytest.approx(21.0)
    t = data["totals"]
    assert t["runs"] == 14 and t["episodes"] == 14 * 60032
    assert t["cpu_seconds"] == pytest.approx(303.0 + 150.0 + 900.0 + 1200.0 + 140.0)
    assert t["wall_seconds"] == pytest.approx(3 * 200.0 + 11 * 150.0)
    assert t["eval_cpu_seconds"] == pytest.approx(28.0)
    diffs = {(d["model"], d["setting"]): d["z"] for d in data["differences"]}
    assert diffs == pytest.approx({("maddpg", "3/6/3"): 1.5, ("ee", "4/6/12"): -3.0, ("ge", "3/12/3"): -31 / 19})
    # sampled (mean - 1): MADDPG 3/6/n 42 within, CE 39 within, MADDPG 4/6/3n 12 below (paper std 0), EE 10 below,
    # GE 20 below; the last checkpoint
    # (mean - 10): MADDPG 33 below, CE 30 below, MADDPG 4/6/3n 3 below, EE 1 below, GE 11 below
    sampled = data["protocols"]["best checkpoint, sampled actions"]
    assert sampled["cells"] == 5 and {(d["model"], d["setting"]) for d in sampled["differences"]} == {
        ("maddpg", "4/6/12"), ("ee", "4/6/12"), ("ge", "3/12/3")}
    assert len(data["protocols"]["last checkpoint, greedy"]["differences"]) == 5
    maddpg = data["rates"]["maddpg"]
    assert maddpg["rate"] == pytest.approx(6 * 60032 / 1203.0)
    assert maddpg["before"]["settings"] == ["3/6/n", "4/6/3n"]          # 3/12/n has no new run: left out
    assert maddpg["before"]["rate"] == pytest.approx(2560 / 38.4)
    assert maddpg["before"]["speedup"] == pytest.approx((6 * 60032 / 1203.0) / (2560 / 38.4))
    assert data["rates"]["ce"]["before"] is None
    assert data["per_setting"][(3, 6, 3)]["before_ms_per_episode"] == {"maddpg": pytest.approx(10.0)}
    assert data["before_table_cpu_seconds"] is None                   # the old runs do not cover the table

    text = bench.format_summary(data)
    assert text.startswith("**4 of 72 (setting, model) cells complete** (3 seeds at >= 60,000 episodes); 1 partial")
    assert "3/12/n: maddpg (0/3 seeds), rmaddpg (0/3 seeds), ce (0/3 seeds), ge (2/3 seeds)" in text
    assert "**3 of 5 cells differ from the paper by more than the paper's std** (1 above, 2 below)." in text
    row = next(line for line in text.splitlines() if line.startswith("| cfrkit: MADDPG |")).split(" | ")
    assert row[1] == "43.0 [1.0]^" and row[9] == "13.0 [0.0]"
    ge = next(line for line in text.splitlines() if line.startswith("| cfrkit: +Greedy (GE) |")).split(" | ")
    assert ge[4] == "21.0 [1.4]v (2s)"
    assert "| 4/6/3n | +Estimated (EE) | 11.0 [1.0] | 14 [1] | -3.0 | -3.0 | 3 |" in text
    assert "| last checkpoint, greedy | 5 | 0 / 5 | 0 |" in text
    assert bench.main(["summary", "--out", out, "--before", old, "--heuristic-episodes", "0", "--no-random"]) == 0
    printed = capsys.readouterr().out
    assert "**4 of 72 (setting, model) cells complete**" in printed and "summary --out" in printed
    assert bench.main(["summary", "--out", str(tmp_path / "none"), "--heuristic-episodes", "0"]) == 1


def test_summary_takes_backfilled_sampled_cells_only_for_the_same_run(bench, tmp_path):
    out = str(tmp_path)
    for s in range(3):
        _final_json(out, "oracle", 3, 6, 3, s, 70.0 + s)
        path = os.path.join(out, f"oracle_n3_w6_c3_s{s}.json")
        with open(path) as f:
            data = json.load(f)
        del data["table_sampled"]
        with open(path, "w") as f:
            json.dump(data, f)
    cell = lambda mean, trained=60032: {"mean": mean, "std": 9.0, "episodes": 1000, "episodes_trained": trained}
    assert bench.summary_data(out, None)["results"][("oracle", 3, 6, 3)]["table_sampled"] is None
    stale = {"oracle_n3_w6_c3_s0": cell(60.0), "oracle_n3_w6_c3_s1": cell(62.0), "oracle_n3_w6_c3_s2": cell(64.0, 30016)}
    data = bench.summary_data(out, None, sampled=stale)      # seed 2's cell is of an earlier stage: not taken
    assert data["backfilled"] == 2 and data["results"][("oracle", 3, 6, 3)]["table_sampled"] is None
    stale["oracle_n3_w6_c3_s2"] = cell(64.0)
    data = bench.summary_data(out, None, sampled=stale)
    assert data["backfilled"] == 3
    assert data["results"][("oracle", 3, 6, 3)]["table_sampled"] == pytest.approx({"mean": 62.0, "std": 2.0})
    assert data["protocols"]["best checkpoint, sampled actions"]["cells"] == 1


def test_tom_summary_averages_seeds_per_test_and_model(bench, tmp_path):
    def result(sr, fr, seed):
        return {"success_rate": sr, "failure_rate": fr, "neither_rate": 1 - sr - fr, "trials": 1000,
                "run_seed": seed, "trained_episodes": 60032}
    with open(tmp_path / "tom_ge.json", "w") as f:
        json.dump({"zeroth_w6": result(0.0, 1.0, 0), "zeroth_w6_sampled": result(0.1, 0.5, 0)}, f)
    with open(tmp_path / "tom_ge_s1.json", "w") as f:
        json.dump({"zeroth_w6": result(0.5, 0.25, 1)}, f)
    tom = bench.tom_summary(str(tmp_path))
    ge = tom["zeroth_w6"]["ge"]
    assert (ge["sr"], ge["fr"], ge["neither"], ge["best_sr"], ge["seeds"]) == (25.0, 62.5, 12.5, 50.0, [0, 1])
    assert tom["zeroth_w6_sampled"]["ge"]["seeds"] == [0]
    data = {"seeds": 3, "episodes": 60_000, "status": {(m,) + s: 0 for m in bench.MODELS for s in bench.SETTINGS},
            "complete": [], "partial": [], "missing": [], "results": {}, "differences": [],
            "totals": {"runs": 0, "episodes": 0, "cpu_seconds": 0.0, "wall_seconds": 0.0, "eval_cpu_seconds": 0.0},
            "rates": {}, "per_setting": {}, "before_table_cpu_seconds": None}
    text = bench.format_summary(data, tom=tom)
    assert "| zeroth_w6 | +Greedy (GE) | 25 / 62 / 12 (50) | 10 / 50 / 40 (10) | 0 / 57 | 0 | 2 x 1000 |" in text


def test_run_takes_the_tom_settings_and_tom_uses_those_runs(bench, tmp_path):
    """``run --settings 4/6/3,4/12/3`` (first_second's settings, outside Table 1) trains runs that
    ``tom`` then tests instead of training its own; settings outside both lists are refused in one line."""
    out = str(tmp_path)
    assert bench.main(["run", "--episodes", "128", "--settings", "4/6/3,4/12/3", "--models", "maddpg",
                       "--eval-every", "1", "--eval-episodes", "10", "--final-episodes", "20", "--out", out]) == 0
    with open(os.path.join(out, "maddpg_n4_w6_c3_s0.json")) as f:
        run = json.load(f)
    assert (run["agents"], run["width"], run["pieces"], run["episodes"]) == (4, 6, 3, 128)
    assert bench.main(["tom", "--models", "maddpg", "--tests", "first_second", "--trials", "2",
                       "--train-episodes", "99999", "--out", out]) == 0
    with open(os.path.join(out, "tom_maddpg.json")) as f:
        tom = json.load(f)
    # the runs above, not new 99,999-episode ones
    assert {k: v["trained_episodes"] for k, v in tom.items()} == {"first_second_w6": 128, "first_second_w12": 128}
    with pytest.raises(SystemExit, match="not one of Table 1's settings or 4/6/3 or 4/12/3"):
        bench.main(["run", "--settings", "5/6/3", "--out", out])
    with pytest.raises(SystemExit, match="not one of Table 1's settings"):
        bench.main(["protocols", "--settings", "4/6/3", "--out", out])
