"""Compiled kernels (Cython, built by setup.py) and the thread policy of the OpenMP ones.

The range CFR kernels (``range_cfr*``) run one spot on OpenMP threads.  GNU OpenMP lets a thread that waits
for work (at the end of a parallel loop, between two parallel loops) spin on the CPU for a while before it
sleeps.  On an idle machine that saves a wake-up; on a shared one (other processes, other solvers) the
spinning thread burns the CPU time the working thread needs, and 2 threads ran 4x slower than 1 in
wall time (issue 30).  So, before any kernel loads the OpenMP runtime, this package sets

* ``OMP_WAIT_POLICY=passive``: a waiting thread sleeps at once (a futex wake costs microseconds; the range
  kernels fork a few hundred times per iteration, each time for milliseconds of work).

``os.environ.setdefault``: a value set by the user (``OMP_WAIT_POLICY=active``, or ``GOMP_SPINCOUNT``) wins.
The runtime reads it once, when it is first loaded into the process: if another library loaded it earlier
(torch ships a ``libgomp.so.1`` that the kernels then share), that library's setting stays, so import
cfrkit first or export ``OMP_WAIT_POLICY=passive`` in the shell.  The setting applies to the whole process's
GNU OpenMP runtime (torch's CPU threads included when they share it).
"""
from __future__ import annotations

import os


def _openmp_loaded() -> bool:
    """Whether a GNU OpenMP runtime is already mapped into this process (Linux; False where unknown)."""
    try:
        with open("/proc/self/maps") as f:
            return "libgomp" in f.read()
    except OSError:
        return False


#: True when this package chose the wait policy (the runtime was not loaded yet and the user set none)
WAIT_POLICY_SET = ("OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ
                   and not _openmp_loaded())
if WAIT_POLICY_SET:
    os.environ["OMP_WAIT_POLICY"] = "passive"


def default_threads() -> int:
    """Default thread count of the compiled solvers: the cores this process may run on
    (``os.sched_getaffinity``: a ``taskset`` / cgroup cpuset mask is honoured), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity API (macOS, Windows)
        return max(1, os.cpu_count() or 1)
