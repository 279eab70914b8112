"""Several server processes on one database: ``cfrkit serve --workers N``.

One Python process serves one core.  With ``N`` workers the supervisor (the process ``cfrkit
serve`` started) forks ``N`` server processes that listen on the same ports (``SO_REUSEPORT``:
the kernel spreads new connections over them) and share the SQLite database (WAL: concurrent
readers, writers take turns; each worker commits its hands in group transactions).

* Shards: worker ``k`` runs the matches whose hexadecimal id is ``k`` mod ``N``; a match created
  on worker ``k`` gets such an id.  After a restart each worker resumes its shard's running matches.
* A connection that joins a match of another shard (JSON ``join``, ACPC ``TOKEN:`` line) is handed
  to that worker: the socket itself moves (``SCM_RIGHTS`` over a Unix datagram socket) with the
  bytes read but not handled yet, so the client notices nothing.  ACPC seat ports are opened by the
  match's worker.  The HTTP + WebSocket door is served by worker 0 (browser matches run there).
* Faults: a worker that dies is restarted (it resumes its matches as after any crash).  Workers die
  with the supervisor (``PR_SET_PDEATHSIG``), so ``kill -9`` of the supervisor stops everything,
  and a restart resumes every match: the guarantees of the one-process server hold.
"""
from __future__ import annotations

import array
import asyncio
import ctypes
import json
import logging
import os
import signal
import socket
import time
from typing import Dict, List, Optional

from cfrkit.games.base import GameError

log = logging.getLogger("cfrkit.platform")

_HEADER_LIMIT = 1 << 18


def _address(tag: str, k: int) -> str:
    return f"\0cfrkit-serve-{tag}-{k}"  # Linux abstract namespace: no file to clean up


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the watchdog below still ends the worker
        pass


def _reserve(host: str, port: int, reserved: List[socket.socket]) -> int:
    """Bind (without listening) a SO_REUSEPORT socket, appended to ``reserved``: fixes the port number
    for the workers; returns it (the one the system chose for ``port`` 0).  GameError if it is taken."""
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        s.bind((host, port))
    except OSError as exc:
        s.close()
        raise GameError(f"cannot bind {host}:{port}: {exc}") from None
    reserved.append(s)
    return s.getsockname()[1]


def _run_worker(k: int, n: int, tag: str, parent: int, kwargs: Dict, ready_fd: int) -> None:
    from cfrkit.platform.server import Server

    _die_with_parent()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor handles Ctrl-C

    async def main():
        server = Server(worker=k, workers=n, **kwargs)
        inbox = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        inbox.bind(_address(tag, k))
        inbox.setblocking(False)
        outbox = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        loop = asyncio.get_running_loop()

        def handoff(worker: int, door: str, sock: socket.socket, data: bytes) -> None:
            header = json.dumps({"door": door}).encode() + b"\n"
            # (socket.send_fds ignores its address argument: sendmsg directly)
            outbox.sendmsg([header + data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [sock.fileno()]))],
                           0, _address(tag, worker))

        def receive() -> None:
            while True:
                try:
                    msg, fds, _, _ = socket.recv_fds(inbox, _HEADER_LIMIT, 4)
                except (BlockingIOError, InterruptedError):
                    return
                if not fds:
                    continue
                for extra in fds[1:]:
                    os.close(extra)
                header, _, data = msg.partition(b"\n")
                try:
                    door = json.loads(header)["door"]
                except (ValueError, KeyError, TypeError):
                    os.close(fds[0])
                    continue
                sock = socket.socket(fileno=fds[0])
                loop.create_task(server.accept_handed(door, sock, data))

        server.handoff = handoff
        loop.add_reader(inbox.fileno(), receive)
        stop = loop.create_future()
        loop.add_signal_handler(signal.SIGTERM, lambda: stop.done() or stop.set_result(None))

        async def watchdog():  # the supervisor is gone (where PDEATHSIG is not available)
            while os.getppid() == parent:
                await asyncio.sleep(1.0)
            stop.done() or stop.set_result(None)

        await server.start()
        os.write(ready_fd, json.dumps(server.bound).encode() + b"\n")
        os.close(ready_fd)
        serving = loop.create_task(server.serve_forever())
        dog = loop.create_task(watchdog())
        try:
            await stop
        finally:
            serving.cancel()
            dog.cancel()
            await server.close()

    try:
        asyncio.run(main())
    except Exception:
        log.exception("worker %d stopped", k)
        os._exit(1)
    os._exit(0)


def serve_workers(workers: int, db_path: str, host: str, port: int, acpc_port: Optional[int],
                  http_port: Optional[int], on_ready=None, **server_kwargs) -> int:
    """Run ``workers`` server processes until SIGTERM / SIGINT (the supervisor; returns 0).

    ``on_ready(bound)`` is called once every worker listens (``bound``: door -> port)."""
    from cfrkit.platform.storage import Store

    if workers < 2:
        raise GameError("serve_workers needs at least 2 workers")
    Store(db_path).close()  # create the schema once, before the workers open the file
    reserved: List[socket.socket] = []
    port = _reserve(host, port, reserved)
    if acpc_port is not None:
        acpc_port = _reserve(host, acpc_port, reserved)
    kwargs = dict(server_kwargs, db_path=db_path, host=host, port=port, acpc_port=acpc_port, http_port=http_port)
    tag = f"{os.getpid()}-{time.monotonic_ns()}"
    parent = os.getpid()
    children: Dict[int, int] = {}  # pid -> worker index
    bound: Dict[str, int] = {}

    def spawn(k: int) -> int:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                _run_worker(k, workers, tag, parent, kwargs, w)
            finally:
                os._exit(1)
        os.close(w)
        with os.fdopen(r, "rb") as fh:
            line = fh.readline()
        children[pid] = k
        if not line:  # it died before listening (its error is in the log)
            return 0
        bound.update({key: v for key, v in json.loads(line).items() if v})
        return pid

    stopping = []

    def stop(signum, frame):
        stopping.append(signum)
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    old_term = signal.signal(signal.SIGTERM, stop)
    old_int = signal.signal(signal.SIGINT, stop)
    try:
        for k in range(workers):
            if not spawn(k):
                stop(None, None)
                while children:
                    try:
                        children.pop(os.wait()[0], None)
                    except ChildProcessError:
                        break
                raise GameError(f"worker {k} of {workers} did not start (see the log above)")
        if on_ready is not None:
            on_ready(dict(bound, workers=workers))
        while children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            except InterruptedError:
                continue
            k = children.pop(pid, None)
            if k is None:
                continue
            if not stopping:  # a worker crashed: restart it, it resumes its shard's matches
                log.warning("worker %d (pid %d) ended with status %d; restarting it", k, pid, status)
                time.sleep(1.0)
                spawn(k)
    finally:
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGINT, old_int)
        for s in reserved:
            s.close()
    return 0

