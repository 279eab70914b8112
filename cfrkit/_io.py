"""Atomic file writes: the one way cfrkit replaces a file so that a crash never leaves half of it.

Every writer goes through a temporary file in the same directory as the target, named
``<path>.tmp-<pid>``, which is moved over the target with :func:`os.replace` only once it is complete
and flushed to disk. A process killed mid-write (SIGKILL, out of memory, a lost machine) therefore leaves
the old file intact plus at most one temporary file, which :func:`remove_stale_temp_files` deletes once
its writer no longer runs.

* :func:`atomic_path` -- a context manager yielding the temporary path, for writers that take a file
  name (``torch.save``, ``np.save``, a memmap).
* :func:`atomic_open` -- a context manager yielding an open file object on the temporary path.
* :func:`temp_path` -- the temporary name itself, for two-phase writers that cannot use a ``with``
  block (the bucket tables, a writability probe).
* :func:`remove_stale_temp_files` / :func:`remove_stale_temp_files_in` -- clean-up after killed writers.
* :func:`read_json_manifest` -- the JSON manifest of a directory store, with one-line errors.

The rename is atomic on POSIX file systems; the directory entry itself is not fsynced, so after a power
loss the target may still name the old file (never a partial one).
"""
from __future__ import annotations

import glob
import json
import os
from contextlib import contextmanager
from typing import IO, Any, Iterable, Iterator, List, Type

#: What separates a target's name from the writer's pid in a temporary file name.
TEMP_MARK = ".tmp-"


def temp_path(path: str) -> str:
    """The temporary file name this process uses for writing ``path``: ``<path>.tmp-<pid>``.

    Same directory as ``path`` (so :func:`os.replace` stays on one file system and is atomic).
    """
    if not path or os.path.basename(path) in ("", ".", ".."):
        raise ValueError(f"atomic write needs a file path, got {path!r}")
    return f"{path}{TEMP_MARK}{os.getpid()}"


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_path(path: str, fsync: bool = True) -> Iterator[str]:
    """Yield a temporary path next to ``path``; when the block ends normally, move it over ``path``.

    Write the whole file to the yielded path inside the block. On normal exit the file is fsynced
    (``fsync=True``) and renamed onto ``path`` with :func:`os.replace`; if the block raises (or the
    writer never created the file), the temporary file is removed and ``path`` is left untouched.
    Raises ``ValueError`` for an empty path or a directory name.
    """
    tmp = temp_path(path)
    try:
        yield tmp
        if not os.path.exists(tmp):
            raise FileNotFoundError(f"atomic write of {path}: nothing was written to {tmp}")
        if fsync:
            _fsync_file(tmp)
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise


@contextmanager
def atomic_open(path: str, mode: str = "w", fsync: bool = True, **kwargs) -> Iterator[IO]:
    """Open a temporary file next to ``path`` for writing; replace ``path`` with it when the block ends.

    ``mode`` is a whole-file write mode (``"w"``, ``"wb"`` or ``"wt"``; read, append, ``"+"`` and ``"x"``
    modes are refused with ``ValueError``); ``kwargs`` go to :func:`open` (``encoding``, ``newline``). On an exception in the block
    the temporary file is removed and ``path`` keeps its old content.
    """
    if "w" not in mode or any(c in mode for c in "ra+x"):
        raise ValueError(f"atomic_open writes a whole new file: mode must be 'w', 'wb' or 'wt', got {mode!r}")
    with atomic_path(path, fsync=False) as tmp:
        with open(tmp, mode, **kwargs) as fh:
            yield fh
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temp_files(path: str) -> List[str]:
    """Delete ``<path>.tmp-<pid>`` files whose writing process no longer runs; returns what was removed.

    Temporary files of live processes other than this one are kept (they may be writing now); this
    process's own leftovers are removed (it is not inside a write when it calls this).
    """
    removed = []
    for tmp in glob.glob(glob.escape(path) + TEMP_MARK + "*"):
        pid_text = tmp.rsplit(TEMP_MARK, 1)[1]
        if pid_text.isdigit() and int(pid_text) != os.getpid() and _pid_alive(int(pid_text)):
            continue
        try:
            os.unlink(tmp)
            removed.append(tmp)
        except OSError:
            pass
    return removed


def remove_stale_temp_files_in(directory: str, prefixes: Iterable[str] = ("",)) -> List[str]:
    """:func:`remove_stale_temp_files` for every target in ``directory`` whose name starts with one of
    ``prefixes`` (default: every name); returns what was removed. A missing directory removes nothing."""
    prefixes = tuple(prefixes)
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    targets = sorted({name.rsplit(TEMP_MARK, 1)[0] for name in names
                      if TEMP_MARK in name and name.startswith(prefixes)})
    removed: List[str] = []
    for target in targets:
        removed += remove_stale_temp_files(os.path.join(directory, target))
    return removed


def read_json_manifest(directory: str, name: str, error: Type[Exception], what: str) -> Any:
    """The parsed JSON file ``name`` of the store ``directory`` (a directory of files written by one of
    cfrkit's savers); ``error`` (one line) when the directory does not exist, the file is missing
    (``what``: the store's kind, e.g. "card abstraction", for the message) or it is not JSON."""
    directory = str(directory)
    path = os.path.join(directory, name)
    if not os.path.isdir(directory):
        raise error(f"{what} directory {directory} does not exist (not a directory)")
    try:
        with open(path) as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise error(f"{directory} holds no {what} ({name} missing; unfinished write?)") from None
    except ValueError:
        raise error(f"{path} is damaged (not JSON)") from None
    except OSError as exc:
        raise error(f"{path} cannot be read ({type(exc).__name__})") from None
