"""Kill `cfrkit solve` (CFR+, ES-MCCFR) and `cfrkit datagen` with SIGINT, SIGTERM and SIGKILL at random
moments; the resumed run must end bit-identical to an uninterrupted one, with no process left behind
and no temporary file left over (issue 17, items 1 and 3).

The short form (default) runs one signal per command, the signals assigned by a draw that changes
every hour so that successive runs cover every pair; ``CFRKIT_FULL_TESTS=1`` adds the full matrix
(every command x every signal, repeated at other random moments; a few minutes).
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from cfrkit.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}

SOLVE_ARGS = {
    "cfr+": ["leduc", "-a", "cfr+", "-n", "1200", "--checkpoint-every", "100"],
    "es-mccfr": ["leduc", "-a", "es-mccfr", "-n", "6000", "--seed", "7", "--checkpoint-every", "500"],
}
DATAGEN_ARGS = ["leduc", "--samples", "6", "--shard-size", "1", "--iterations", "60", "--skip", "10",
                "--seed", "3", "--workers", "2"]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover
        return True
    # zombies count as gone: list the group's live members
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def _interrupt(args, ready, sig, rng, log_path, timeout=120.0, finished=None):
    """Start ``python -m cfrkit *args`` in its own session, wait for ``ready()``, sleep a random moment,
    send ``sig``; return the exit code after checking that no process of the session survives.

    stderr goes to a file, not a pipe: surviving workers would hold a pipe open and hang the test
    instead of failing it."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "cfrkit"] + args, cwd=ROOT, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + timeout
    while not ready() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(rng.uniform(0.0, 0.4))
    if proc.poll() is None:
        os.kill(proc.pid, sig)
    try:
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:  # pragma: no cover - a hang is a failure
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError(f"{args[0]} did not exit after {sig!r}")
    end = time.monotonic() + 10.0
    while _group_alive(proc.pid) and time.monotonic() < end:
        time.sleep(0.05)
    if _group_alive(proc.pid):
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError(f"processes of `cfrkit {args[0]}` still run after {sig!r} of the parent")
    with open(log_path) as f:
        err = f.read()
    os.unlink(log_path)
    assert "Traceback" not in err, err
    if sig != signal.SIGKILL:
        # a signal that lands while the interpreter shuts down, after the run has finished its work,
        # meets the default action (Python resets its handlers at exit): allowed only then
        late = code == -sig and finished is not None and finished()
        assert code in (0, 128 + sig) or late, (code, err)
    return code


def _check_solve(tmp_path, algorithm, sig_name, seed):
    from cfrkit.solvers import CFRSolver
    from cfrkit.solvers.tabular import mccfr

    rng = random.Random(seed)
    out = str(tmp_path / f"{algorithm}.npz")
    args = ["solve"] + SOLVE_ARGS[algorithm] + ["-o", out, "--no-progress"]
    n = int(SOLVE_ARGS[algorithm][SOLVE_ARGS[algorithm].index("-n") + 1])
    _interrupt(args, lambda: os.path.exists(out), SIGNALS[sig_name], rng, str(tmp_path / "stderr.log"),
               finished=lambda: CFRSolver.load(out).iterations == n if algorithm == "cfr+" else
               mccfr.load_mccfr(out).iterations == n)
    assert main(args) == 0  # resume to the end
    assert sorted(os.listdir(tmp_path)) == [os.path.basename(out)]  # no .tmp files left
    if algorithm == "cfr+":
        resumed, reference = CFRSolver.load(out), CFRSolver("leduc", algorithm="cfr+").run(n)
        assert resumed.iterations == n
        assert np.array_equal(resumed.regrets, reference.regrets)
        assert np.array_equal(resumed.strategy_sum, reference.strategy_sum)
    else:
        resumed = mccfr.load_mccfr(out)
        reference = mccfr.ExternalSamplingMCCFR("leduc", seed=7).run(n, progress=False)
        assert resumed.iterations == n and resumed.rng.getstate() == reference.rng.getstate()
        assert set(resumed.infosets) == set(reference.infosets)
        for key, info in reference.infosets.items():
            assert resumed.infosets[key].regrets == info.regrets and resumed.infosets[key].sums == info.sums


def _check_datagen(tmp_path, sig_name, seed):
    from cfrkit.value_nets.data import generate_dataset, load_shard

    rng = random.Random(seed)
    out = str(tmp_path / "data")
    args = ["datagen"] + DATAGEN_ARGS[:1] + [out] + DATAGEN_ARGS[1:] + ["--no-progress"]
    _interrupt(args, lambda: os.path.isdir(out) and any(f.startswith("shard_") for f in os.listdir(out)),
               SIGNALS[sig_name], rng, str(tmp_path / "stderr.log"),
               finished=lambda: sum(f.startswith("shard_") and f.endswith(".npz") for f in os.listdir(out)) == 6)
    assert main(args) == 0
    names = sorted(os.listdir(out))
    assert names == ["dataset.json"] + [f"shard_{i:05d}.npz" for i in range(6)], names
    reference = str(tmp_path / "reference")
    generate_dataset(reference, "leduc", 6, shard_size=1, iterations=60, skip=10, seed=3, workers=1, progress=False)
    for name in names[1:]:
        _, got = load_shard(os.path.join(out, name))
        _, want = load_shard(os.path.join(reference, name))
        for k in want:
            assert np.array_equal(got[k], want[k]), (name, k)


_SHORT = random.Random(os.environ.get("PYTEST_XDIST_WORKER", "") + time.strftime("%Y%m%d%H"))
_ORDER = list(SIGNALS)
_SHORT.shuffle(_ORDER)


@pytest.mark.parametrize("algorithm, sig_name", [("cfr+", _ORDER[0]), ("es-mccfr", _ORDER[1])])
def test_kill_and_resume_solve(tmp_path, algorithm, sig_name):
    _check_solve(tmp_path, algorithm, sig_name, seed=hash((algorithm, sig_name)) & 0xFFFF)


def test_kill_and_resume_datagen(tmp_path):
    _check_datagen(tmp_path, _ORDER[2], seed=11)


full_only = pytest.mark.skipif(not os.environ.get("CFRKIT_FULL_TESTS"), reason="full form: CFRKIT_FULL_TESTS=1")


@pytest.mark.slow
@full_only
@pytest.mark.parametrize("sig_name", list(SIGNALS))
@pytest.mark.parametrize("algorithm", list(SOLVE_ARGS))
def test_kill_and_resume_solve_full(tmp_path, algorithm, sig_name):
    for repeat in range(3):
        sub = tmp_path / str(repeat)
        sub.mkdir()
        _check_solve(sub, algorithm, sig_name, seed=repeat)


@pytest.mark.slow
@full_only
@pytest.mark.parametrize("sig_name", list(SIGNALS))
def test_kill_and_resume_datagen_full(tmp_path, sig_name):
    for repeat in range(2):
        sub = tmp_path / str(repeat)
        sub.mkdir()
        _check_datagen(sub, sig_name, seed=repeat)
