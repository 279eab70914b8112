"""The hold'em value-net pipeline as library calls (``cfrkit.value_nets.holdem.pipeline``) and its CLI
(``cfrkit deepstack data|train|nets``), at the ``smoke`` preset (seconds): a nets directory the agent loads
and plays with, resume without redoing finished work, refusal of changed settings, the command line."""
import dataclasses
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from cfrkit.value_nets.holdem import HoldemValueNets
from cfrkit.value_nets.holdem.datagen import load_holdem_dataset, shard_path
from cfrkit.value_nets.holdem.pipeline import (PRESETS, STREETS, PipelinePreset, build_nets, data_dir,
                                               generate_data, get_preset, nets_dir, parse_streets, read_report,
                                               river_check, step_line, train_net)
from cfrkit.value_nets.model import load_checkpoint

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
KW = dict(workers=1, progress=False, backend="board")


def _sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """River and turn at the smoke preset, in one build_nets call (a few seconds)."""
    out = str(tmp_path_factory.mktemp("ds_pipeline") / "run")
    steps = []
    report = build_nets(out, "smoke", "river,turn", on_step=lambda k, s, i: steps.append((k, s)), **KW)
    return {"out": out, "report": report, "steps": steps}


def test_presets_are_frozen_data():
    p = PRESETS["smoke"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.epochs = 3
    q = get_preset("smoke", hidden="4,4", turn_iterations=None, epochs=3)
    assert q.hidden == (4, 4) and q.epochs == 3 and q.turn_iterations == p.turn_iterations
    assert q.samples("turn") == p.turn_samples and q.street_iterations("preflop") == 1
    for bad, match in (({"epochs": 0}, "epochs must be a positive"), ({"hidden": "4,x"}, "comma-separated"),
                       ({"bogus": 1}, "unknown preset setting")):
        with pytest.raises(ValueError, match=match):
            get_preset("tiny", **bad)
    with pytest.raises(ValueError, match="unknown preset 'huge'"):
        get_preset("huge")
    assert parse_streets("river, turn") == ("river", "turn")
    for bad in ("river,bogus", "river,river", ""):
        with pytest.raises(ValueError):
            parse_streets(bad)
    # the small preset keeps the sizes RESULTS.md's small run used
    s = PRESETS["small"]
    assert (s.river_samples, s.turn_samples, s.flop_samples, s.hidden, s.preflop_flops) == \
        (20000, 1200, 400, (256, 256, 256), 200)


def test_cli_names_match_library():
    from cfrkit.cli import deepstack_nets_cmd

    assert deepstack_nets_cmd.STREETS == STREETS
    assert set(deepstack_nets_cmd.PRESET_NAMES) == set(PRESETS)
    assert set(deepstack_nets_cmd._INT_OPTIONS) <= {f.name for f in dataclasses.fields(PipelinePreset)}


def test_pipeline_builds_nets_the_agent_loads_and_plays(built):
    from cfrkit.poker import make_agent
    from cfrkit.poker import play_match
    from cfrkit.games import load

    out, report = built["out"], built["report"]
    assert built["steps"] == [("data", "river"), ("train", "river"), ("check", "river"), ("data", "turn"),
                              ("train", "turn")]
    nets = HoldemValueNets.load(nets_dir(out))
    assert nets.streets == ("turn", "river") and report["net_streets"] == ["turn", "river"]
    assert nets.stack == 20000.0 and nets.bucketer("river").num_buckets == PRESETS["smoke"].river_buckets
    assert nets.bucketer("turn").num_buckets == PRESETS["smoke"].num_buckets
    for street in ("river", "turn"):
        rec = report["rounds"][street]
        # the nets directory holds the best checkpoint of the street's training, as the report says
        best, _ = load_checkpoint(os.path.join(out, f"{street}.pt"))
        for k, v in best.state_dict().items():
            assert torch.equal(v, nets.models[street].state_dict()[k])
        assert nets.extras[street]["val_loss"] == pytest.approx(rec["best_val_loss"])
        assert rec["net_sha256"] == _sha(os.path.join(out, "nets", f"{street}.pt"))
        assert rec["situations"] == len(load_holdem_dataset(data_dir(out, street))["contribs"])
    # the turn data were made with this river net at the leaves (the chain's order)
    turn_meta = json.load(open(os.path.join(data_dir(out, "turn"), "dataset.json")))
    assert turn_meta["leaf_net_digest"] == report["rounds"]["river"]["net_sha256"][:16]
    # the river check is reproducible from its seed
    again = river_check(nets_dir(out), PRESETS["smoke"].check_samples, PRESETS["smoke"].iterations)
    assert again["huber"] == pytest.approx(report["river_check"]["huber"], rel=1e-6)
    assert read_report(out)["rounds"].keys() == report["rounds"].keys()
    # the agent loads the directory by name and plays whole hands (chips within the stacks)
    agent = make_agent(f"deepstack-holdem:nets={nets_dir(out)},iterations=3,preflop_boards=10,flop_runouts=20",
                       seed=2)
    assert set(agent.leaf_values) == {"turn", "river"}
    res = play_match(load("holdem"), [agent, make_agent("always-call", seed=5)], 2, seed=4, duplicate=True)
    assert len(res.hand_values) == 4 and np.all(np.abs(res.hand_values) <= 20000)
    assert agent.num_resolves >= 2


def test_finished_run_is_skipped_and_changed_settings_refused(built):
    out = built["out"]
    files = {p: os.stat(os.path.join(out, p)).st_mtime_ns
             for p in ("nets/river.pt", "nets/turn.pt", "river.pt", "turn.pt", "data_turn/shard_00000.npz")}
    steps = []
    build_nets(out, "smoke", ("river", "turn"), on_step=lambda k, s, i: steps.append((k, s, i)), **KW)
    assert [(k, s) for k, s, _ in steps] == [("data", "river"), ("skip", "river"), ("data", "turn"), ("skip", "turn")]
    assert all(i.get("generated", 0) > 0 for k, s, i in steps if k == "data")  # the rate of the run that made them
    assert {p: os.stat(os.path.join(out, p)).st_mtime_ns for p in files} == files
    with pytest.raises(ValueError, match="other settings") as err:
        build_nets(out, get_preset("smoke", turn_iterations=5), ("river", "turn"), **KW)
    assert "\n" not in str(err.value) and "iterations" in str(err.value)
    with pytest.raises(ValueError, match="other settings"):
        build_nets(out, "smoke", ("river",), seed=1, **KW)


def test_resume_after_interruption_keeps_finished_shards_and_gives_the_same_files(built, tmp_path):
    out = str(tmp_path / "run")

    def stop_at_turn_data(kind, street, info):
        if (kind, street) == ("data", "turn"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_nets(out, "smoke", ("river", "turn"), on_step=stop_at_turn_data, **KW)
    assert list(read_report(out)["rounds"]) == ["river"]   # written after the river: the finished street is kept
    os.remove(shard_path(data_dir(out, "turn"), 1))         # as if killed in the middle of the turn's datagen
    kept = {p: os.stat(p).st_mtime_ns for p in (shard_path(data_dir(out, "river"), 0),
                                                shard_path(data_dir(out, "turn"), 0), os.path.join(out, "river.pt"))}
    steps = []
    build_nets(out, "smoke", ("river", "turn"), on_step=lambda k, s, i: steps.append((k, s, i)), **KW)
    assert [(k, s) for k, s, _ in steps] == [("data", "river"), ("skip", "river"), ("data", "turn"), ("train", "turn")]
    assert steps[2][2]["generated"] == PRESETS["smoke"].shard_size   # only the missing shard was made
    assert {p: os.stat(p).st_mtime_ns for p in kept} == kept
    ref = built["out"]
    for street in ("river", "turn"):
        a, b = load_holdem_dataset(data_dir(out, street)), load_holdem_dataset(data_dir(ref, street))
        for k in ("boards", "contribs", "ranges", "values", "inputs", "targets"):
            np.testing.assert_array_equal(a[k], b[k])
        assert _sha(os.path.join(out, "nets", f"{street}.pt")) == _sha(os.path.join(ref, "nets", f"{street}.pt"))


def test_time_limited_training_stops_the_chain_and_continues(tmp_path):
    out = str(tmp_path / "run")
    steps = []
    report = build_nets(out, "smoke", ("river", "turn"), max_train_seconds=0.0,
                        on_step=lambda k, s, i: steps.append((k, s, i)), **KW)
    assert report["stopped_at"] == "river" and not report["rounds"]["river"]["complete"]
    assert [(k, s) for k, s, _ in steps] == [("data", "river"), ("train", "river")]   # no turn data on that net
    assert steps[1][2]["epochs_run"] == 1 and "run again to continue" in step_line("train", "river", steps[1][2],
                                                                                   "smoke")
    steps.clear()
    report = build_nets(out, "smoke", ("river",), on_step=lambda k, s, i: steps.append((k, s, i)), **KW)
    assert "stopped_at" not in report and report["rounds"]["river"]["complete"]
    assert [(k, s) for k, s, _ in steps] == [("data", "river"), ("train", "river"), ("check", "river")]
    assert steps[1][2]["epochs_run"] == PRESETS["smoke"].epochs and steps[0][2]["generated"] > 0


def test_resumed_training_that_stopped_early_stays_stopped(tmp_path):
    """``train_on_arrays(resume=True)`` after early stopping trains no further: the saved net stays the one the
    later streets' data were made with."""
    from cfrkit.value_nets.train import train_on_arrays

    rng = np.random.default_rng(0)
    x = rng.random((40, 5)).astype(np.float32)
    y = rng.normal(size=(40, 4)).astype(np.float32)
    m = np.ones_like(y)
    out = str(tmp_path / "n.pt")
    kw = dict(hidden=(4,), epochs=200, lr=0.5, patience=1, progress=False)
    first = train_on_arrays(x, y, m, out, {"game": "g"}, **kw)
    assert first["epochs_run"] < 200 and first["epochs_run"] - 1 - first["best_epoch"] >= 1   # stopped early
    before = (_sha(out), _sha(out + ".last"))
    again = train_on_arrays(x, y, m, out, {"game": "g"}, resume=True, **kw)
    assert again["epochs_run"] == first["epochs_run"] and (_sha(out), _sha(out + ".last")) == before
    longer = {**kw, "patience": 50, "epochs": first["epochs_run"] + 1}
    more = train_on_arrays(x, y, m, out, {"game": "g"}, resume=True, **longer)
    assert more["epochs_run"] == first["epochs_run"] + 1   # a larger patience continues


def test_street_calls_and_one_line_errors(built, tmp_path):
    out = str(tmp_path / "run")
    with pytest.raises(ValueError, match="no river net") as err:
        generate_data("turn", out, "smoke", **KW)
    assert "\n" not in str(err.value)
    with pytest.raises(FileNotFoundError, match="no such data directory"):
        train_net("flop", out, "smoke", progress=False)
    with pytest.raises(ValueError, match="unknown street"):
        generate_data("showdown", out, "smoke", **KW)
    with pytest.raises(ValueError, match="unknown backend"):
        build_nets(out, "smoke", "river", workers=1, progress=False, backend="gpu")
    gen = generate_data("river", out, "smoke", **KW)
    assert gen["generated"] == PRESETS["smoke"].river_samples and gen["situations"] == gen["generated"]
    line = step_line("data", "river", gen, "smoke", out)
    assert "\n" not in line and "10 situations" in line and "CPU s per situation" in line


def test_cli_help_and_one_line_errors(tmp_path, capsys):
    from cfrkit.cli import main

    for args in (("deepstack", "--help"), ("deepstack", "nets", "--help"), ("deepstack", "data", "--help"),
                 ("deepstack", "train", "--help")):
        with pytest.raises(SystemExit) as exit_:
            main(list(args))
        assert exit_.value.code == 0 and "usage: cfrkit deepstack" in capsys.readouterr().out
    run = str(tmp_path / "run")
    for bad in (("nets", run, "--streets", "river,bogus"), ("nets", run, "--hidden", "8,x"),
                ("nets", run, "--epochs", "0"), ("nets", run, "--workers", "0"),
                ("data", "turn", run, "--preset", "smoke", "--workers", "1", "--no-progress")):
        assert main(["deepstack", *bad]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("cfrkit deepstack: error:"), err
    assert "no river net" in err


def test_cli_tiny_run_in_a_subprocess(tmp_path):
    env = {**os.environ, "PYTHONPATH": ROOT}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "cfrkit", "deepstack", "nets", "run", "--preset", "smoke",
                               "--streets", "river", "--workers", "1", "--no-progress", "--backend", "board", *args],
                              capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)

    r = cli()
    assert r.returncode == 0, r.stderr
    assert "river: net [8] x 10 buckets" in r.stdout and "river check:" in r.stdout
    assert "nets: run/nets (river)" in r.stdout
    assert HoldemValueNets.load(str(tmp_path / "run" / "nets")).streets == ("river",)
    r = cli("--iterations", "21")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "other settings" in r.stderr


def test_training_device_reaches_the_trainer_and_bad_devices_are_one_line(built, tmp_path, monkeypatch, capsys):
    import shutil

    import torch

    from cfrkit.cli import main
    from cfrkit.value_nets import train as train_module
    from cfrkit.value_nets.holdem.pipeline import resolve_device

    seen = []
    real = train_module.train_on_arrays

    def spy(*args, **kwargs):
        seen.append(kwargs.get("device"))
        return real(*args, **kwargs)

    monkeypatch.setattr(train_module, "train_on_arrays", spy)
    out = str(tmp_path / "run")
    shutil.copytree(built["out"], out)
    for name in ("river.pt", "river.pt.last"):   # train again from scratch on the copied data
        os.remove(os.path.join(out, name))
    auto = "cuda" if torch.cuda.is_available() else "cpu"
    summary = train_net("river", out, "smoke", progress=False, device="auto")
    assert seen == [auto] and summary["epochs_run"] >= 1
    # the same run on the CPU by default: the same net (a device must not change the recipe)
    if auto == "cpu":
        first = _sha(os.path.join(out, "river.pt"))
        for name in ("river.pt", "river.pt.last"):
            os.remove(os.path.join(out, name))
        train_net("river", out, "smoke", progress=False)
        assert seen[-1] == "cpu" and _sha(os.path.join(out, "river.pt")) == first
    assert resolve_device(None) is None and resolve_device("cpu") == "cpu"
    with pytest.raises(ValueError, match="only cpu and cuda"):
        resolve_device("meta")
    with pytest.raises(ValueError, match="unknown device"):
        resolve_device("gpu7")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            train_net("river", out, "smoke", progress=False, device="cuda")
        assert main(["deepstack", "train", "river", out, "--preset", "smoke", "--device", "cuda:0",
                     "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "CUDA is not available" in err
