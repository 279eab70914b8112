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
