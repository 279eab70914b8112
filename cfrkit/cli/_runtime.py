"""Helpers every long-running command shares: graceful stop on SIGINT/SIGTERM, output checks."""
from __future__ import annotations

import os
import signal
import threading
from typing import Optional

from cfrkit._io import temp_path
from cfrkit.cli import CliError


class _SignalScope:
    """Install ``_handle`` for SIGINT and SIGTERM while the context is open (main thread only: Python
    delivers signals there), restoring the previous handlers on exit.  ``signum`` is the signal that
    arrived, for the exit code ``128 + signum``."""

    def __init__(self) -> None:
        self.signum: Optional[int] = None
        self._previous = {}

    def exit_code(self) -> int:
        return 128 + (self.signum or signal.SIGINT)

    def _handle(self, signum, frame) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}


class GracefulStop(_SignalScope):
    """Turn the first SIGINT/SIGTERM into a request to stop (checked between iterations), the second into
    ``KeyboardInterrupt``.

    Use as a context manager around a run loop that polls :meth:`requested`.
    """

    def requested(self) -> bool:
        return self.signum is not None

    def _handle(self, signum, frame) -> None:
        if self.signum is not None:
            raise KeyboardInterrupt  # a second signal: stop now (the last checkpoint on disk is intact)
        self.signum = signum


def check_output_file(path: str, option: str = "--out") -> None:
    """Fail now, in one line, if ``path`` cannot be written (missing parent, parent is a file, no
    permission, a directory at ``path``), rather than after hours of computing."""
    if os.path.isdir(path):
        raise CliError(f"{option} {path} is a directory; give a file name")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        what = "is a file" if os.path.exists(parent) else "does not exist"
        raise CliError(f"{option} {path}: cannot write there ({parent} {what})")
    probe = temp_path(path)
    try:
        with open(probe, "wb"):
            pass
        os.unlink(probe)
    except OSError as exc:
        raise CliError(f"{option} {path}: cannot write there ({exc.strerror or exc})") from None
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise CliError(f"{option} {path}: the file exists and is not writable")


class InterruptOnSignal(_SignalScope):
    """Raise ``KeyboardInterrupt`` on SIGTERM as on SIGINT, so ``finally`` blocks run (worker pools are
    terminated, temporary files removed); ``signum`` tells which signal it was."""

    def _handle(self, signum, frame) -> None:
        self.signum = signum
        raise KeyboardInterrupt
