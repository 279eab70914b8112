"""cfrkit._io: atomic writes keep the old file on any failure, including a SIGKILL mid-write, and leave
no temporary files behind once their writer is gone."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from cfrkit._io import (TEMP_MARK, atomic_open, atomic_path, remove_stale_temp_files,
                        remove_stale_temp_files_in, temp_path)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def leftovers(directory):
    return sorted(n for n in os.listdir(directory) if TEMP_MARK in n)


def test_atomic_open_replaces_whole_file_and_leaves_no_temp(tmp_path):
    path = str(tmp_path / "a.json")
    with open(path, "w") as f:
        f.write("old")
    with atomic_open(path, "w") as f:
        assert f.name == temp_path(path)
        assert os.path.dirname(f.name) == str(tmp_path)  # same directory: os.replace is atomic
        json.dump({"x": 1}, f)
        with open(path) as g:  # not visible before the block ends
            assert g.read() == "old"
    with open(path) as f:
        assert json.load(f) == {"x": 1}
    assert leftovers(tmp_path) == []


def test_exception_in_block_keeps_old_file(tmp_path):
    path = str(tmp_path / "b.bin")
    with open(path, "wb") as f:
        f.write(b"old content")
    with pytest.raises(RuntimeError):
        with atomic_open(path, "wb") as f:
            f.write(b"half of the new")
            raise RuntimeError("writer failed")
    with open(path, "rb") as f:
        assert f.read() == b"old content"
    assert leftovers(tmp_path) == []


def test_atomic_path_for_name_taking_writers(tmp_path):
    path = str(tmp_path / "arr.npy")
    data = np.arange(10)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            np.save(f, data)
    assert np.array_equal(np.load(path), data)
    with pytest.raises(FileNotFoundError, match="nothing was written"):
        with atomic_path(path):
            pass  # a writer that silently wrote nothing must not replace the file with nothing
    assert np.array_equal(np.load(path), data)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("mode", ["r", "a", "r+", "w+", "x", "ab"])
def test_atomic_open_refuses_non_write_modes(tmp_path, mode):
    with pytest.raises(ValueError, match="mode"):
        with atomic_open(str(tmp_path / "c"), mode):
            pass


def test_bad_paths_are_refused(tmp_path):
    for bad in ("", str(tmp_path) + os.sep):
        with pytest.raises(ValueError, match="file path"):
            temp_path(bad)


def _writer_script(path, ready):
    # writes the first half of a new file, says so, then waits to be killed
    return textwrap.dedent(f"""
        import os, sys, time
        sys.path.insert(0, {REPO!r})
        from cfrkit._io import atomic_open
        with atomic_open({path!r}, "wb") as f:
            f.write(b"N" * 100000)
            f.flush()
            open({ready!r}, "w").close()
            time.sleep(60)
            f.write(b"rest")
    """)


def test_kill_mid_write_keeps_old_file_and_stale_temp_is_removed(tmp_path):
    path = str(tmp_path / "checkpoint.bin")
    ready = str(tmp_path / "ready")
    with open(path, "wb") as f:
        f.write(b"old checkpoint")
    proc = subprocess.Popen([sys.executable, "-c", _writer_script(path, ready)])
    try:
        for _ in range(400):
            if os.path.exists(ready) or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert os.path.exists(ready), "the writer never started writing"
        tmp = f"{path}{TEMP_MARK}{proc.pid}"
        assert os.path.getsize(tmp) == 100000
        # a live writer's temporary file is not stale
        assert remove_stale_temp_files(path) == []
        assert os.path.exists(tmp)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with open(path, "rb") as f:
        assert f.read() == b"old checkpoint"
    assert leftovers(tmp_path) == [os.path.basename(tmp)]
    assert remove_stale_temp_files(path) == [tmp]
    assert leftovers(tmp_path) == []


def test_remove_stale_temp_files_in_directory_by_prefix(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    pid = int(dead.stdout)
    for name in ("shard_0.npz", "dataset.json", "other.txt"):
        (tmp_path / f"{name}{TEMP_MARK}{pid}").write_bytes(b"partial")
    (tmp_path / "shard_1.npz").write_bytes(b"complete")
    removed = remove_stale_temp_files_in(str(tmp_path), ("shard_", "dataset.json"))
    assert sorted(os.path.basename(r) for r in removed) == [f"dataset.json{TEMP_MARK}{pid}",
                                                          f"shard_0.npz{TEMP_MARK}{pid}"]
    assert sorted(os.listdir(tmp_path)) == [f"other.txt{TEMP_MARK}{pid}", "shard_1.npz"]
    assert remove_stale_temp_files_in(str(tmp_path / "missing")) == []


def test_save_npz_atomic_failure_keeps_old_file(tmp_path, monkeypatch):
    from cfrkit.policy import load_npz_checked, save_npz_atomic

    path = str(tmp_path / "p.npz")
    save_npz_atomic(path, {"magic": "test", "v": 1}, a=np.arange(3))

    def broken(f, **arrays):
        f.write(b"PK\x03\x04 half a zip")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", broken)
    with pytest.raises(OSError, match="disk full"):
        save_npz_atomic(path, {"magic": "test", "v": 2}, a=np.arange(4))
    monkeypatch.undo()
    header, arrays = load_npz_checked(path, "test", ["a"])
    assert header["v"] == 1 and np.array_equal(arrays["a"], np.arange(3))
    assert leftovers(tmp_path) == []


def test_migrated_writers_go_through_the_helper(tmp_path, monkeypatch):
    """The abstraction builder's JSON / .npy writers and the SymmToM checkpoint keep the old file when
    the write fails half way."""
    from cfrkit.abstraction import build
    from cfrkit.evaluation import symmtom_eval

    man = str(tmp_path / "manifest.json")
    build._atomic_json(man, {"v": 1})
    arr = str(tmp_path / "x.npy")
    build._atomic_npy(arr, np.arange(5))
    ck = str(tmp_path / "table1.json")
    symmtom_eval._save_checkpoint(ck, {"a": {"score": 1.0}})

    def half_dump(obj, fh, **kw):
        fh.write('{"v": ')
        raise KeyboardInterrupt

    monkeypatch.setattr(json, "dump", half_dump)
    for call in (lambda: build._atomic_json(man, {"v": 2}),
                 lambda: symmtom_eval._save_checkpoint(ck, {"b": {}})):
        with pytest.raises(KeyboardInterrupt):
            call()
    monkeypatch.setattr(np, "save", lambda fh, a: (fh.write(b"\x93NUMPY"), 1 / 0))
    with pytest.raises(ZeroDivisionError):
        build._atomic_npy(arr, np.arange(6))
    monkeypatch.undo()
    with open(man) as f:
        assert json.load(f) == {"v": 1}
    with open(ck) as f:
        assert json.load(f)["results"] == {"a": {"score": 1.0}}
    assert np.array_equal(np.load(arr), np.arange(5))
    assert leftovers(tmp_path) == []
