"""Helpers for the platform tests: free ports, a server in a subprocess, a line-based test client."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(db: str, port: int, http_port: int = -1, acpc_port: int = -1, timeout: float = 90.0,
                 extra=(), preexec_fn=None):
    """``python -m cfrkit serve`` in a subprocess (``extra`` flags; ``preexec_fn`` run in the child before it
    starts, e.g. a resource limit); returns the Popen once the JSON door answers."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "cfrkit", "serve", "--db", str(db), "--port", str(port),
                             "--http-port", str(http_port), "--acpc-port", str(acpc_port), *extra],
                            cwd=str(ROOT), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            preexec_fn=preexec_fn)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stdout.read().decode()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                if s.makefile().readline().startswith('{"type":"hello"'):
                    return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


class LineClient:
    """A blocking JSON-lines connection for tests."""

    def __init__(self, port: int, timeout: float = 10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.file = self.sock.makefile("rwb")
        hello = self.recv()
        assert hello["type"] == "hello"

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, obj) -> None:
        self.sock.sendall((json.dumps(obj) + "\n").encode())

    def recv(self):
        line = self.file.readline()
        if not line:
            raise EOFError("connection closed")
        return json.loads(line)

    def recv_type(self, *types, limit: int = 10000):
        for _ in range(limit):
            msg = self.recv()
            if msg["type"] in types:
                return msg
        raise AssertionError(f"no {types} message")

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
