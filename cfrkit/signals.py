"""Stop a long run cleanly on SIGINT / SIGTERM: the scopes every long-running command and script share.

The handlers replace whatever was installed before, an inherited ``SIG_IGN`` too: a command started in the
background by a non-interactive shell ignores SIGINT, and Ctrl-C or ``kill -INT`` would otherwise do nothing.
The previous handlers come back when the scope closes.
"""
from __future__ import annotations

import signal
import threading

__all__ = ["GracefulStop", "InterruptOnSignal"]


class _SignalScope:
    """Install ``_handle`` for SIGINT and SIGTERM while the context is open (main thread only: Python
    delivers signals there), restoring the previous handlers on exit.  ``signum`` is the signal that
    arrived, for the exit code ``128 + signum``."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous = {}

    def exit_code(self) -> int:
        """The process exit status for the signal that arrived: ``128 + signum`` (130 for SIGINT)."""
        return 128 + (self.signum or signal.SIGINT)

    def name(self) -> str:
        """The arrived signal's name (``"SIGINT"`` when none arrived yet)."""
        return signal.Signals(self.signum or signal.SIGINT).name

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


class InterruptOnSignal(_SignalScope):
    """Raise ``KeyboardInterrupt`` on SIGTERM as on SIGINT, so ``finally`` blocks run (worker pools are
    terminated, temporary files removed); ``signum`` tells which signal it was."""

    def _handle(self, signum, frame) -> None:
        self.signum = signum
        raise KeyboardInterrupt
