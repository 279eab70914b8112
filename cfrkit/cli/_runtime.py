"""Helpers every long-running command shares: graceful stop on SIGINT/SIGTERM (from :mod:`cfrkit.signals`),
output checks."""
from __future__ import annotations

import os

from cfrkit._io import temp_path
from cfrkit.cli import CliError
from cfrkit.signals import GracefulStop, InterruptOnSignal

__all__ = ["GracefulStop", "InterruptOnSignal", "check_output_file"]


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
