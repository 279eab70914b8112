"""The thread count of a running solve, chosen by timing it: :class:`ThreadChooser`.

The compiled range solvers give the same iterates for any thread count, so a solve may change its thread count
between any two iterations.  Whether a second thread helps depends on the machine at that moment: on an idle
machine 2 threads run the turn spot of ``benchmarks/range_solver.py`` 1.98x faster than 1, but beside CPU-bound
processes of *other* sessions the scheduler (Linux autogroup: one CPU share per session, however many threads it
runs) gives the solver no more CPU for its second thread, and 2 threads were 18-40% slower in wall seconds
(benchmarks/RESULTS.md, issue 30).  No static rule (load average, core count) sees the share the scheduler
gives; a timing does.

The chooser runs the solve in chunks of iterations: one warm-up iteration at ``low`` (first touch of the
tables; ``low`` is the count to beat, so ties run on fewer threads at less CPU), then a *probe* (a short chunk at
each candidate count, the other one first, about ``probe_seconds`` of wall time and at least 2 iterations each),
then a *run* at the faster count for ``period`` times the probe's wall time, then a probe again (the load may
have changed), and so on.  A probe switches counts only when the other count was faster per iteration by more
than ``margin`` (hysteresis: noise does not flip-flop), and, unless by more than ``sure``, only after a second
probe right after it agrees on the two probes' sums (one short chunk on a busy machine varies by +-10%).  Each
probe where the current count won by more than ``margin`` doubles the run after it, up to ``max_period`` (a
stable machine pays fewer probes); a switch resets it to ``period``; a tie (within ``margin``) sets it to
``tie_period``: probing costs nothing when the counts are equal, and a tie may be a noisy chunk hiding a real
difference (once a second thread measured 3% faster where it was 1.5x), so it is probed again soon.  The chunks are timed in wall seconds (``clock``, :func:`time.perf_counter`; injectable for
tests).  A probe wastes at most its chunk at the slower count, against ``period`` x the probe's time run at the
faster one: at the defaults about 1.5% on a machine where one count is 2x slower than the other, less as the
runs double; a short run pays the warm-up and the first probe (the turn spot's 100 iterations on an idle
machine: 4 iterations on 1 thread, about 4%).

Use (the solver's run loop)::

    count, n = chooser.plan()                # thread count and iterations of the next chunk
    t0 = chooser.clock(); ...run n' <= n iterations on count threads...
    chooser.record(count, n', chooser.clock() - t0)

``iterations`` / ``seconds``: per count, the iterations run and their wall seconds (probes included);
``switches``, ``probes``: counts of each.
"""
from __future__ import annotations

import time
from typing import Callable, Dict, List, Optional, Tuple

WARM, PROBE, RUN = "warm", "probe", "run"


class ThreadChooser:
    """Chooses between two thread counts ``low`` and ``high`` while a solve runs (module docstring).

    Args:
        low, high: the candidate thread counts (``1`` and the cores the process may use); ``low == high``:
            always that count, no probes.
        probe_seconds: wall seconds of each probe chunk (at least two iterations).
        period, max_period: a run lasts ``period`` x the last probe's wall seconds, doubled after each probe that
            keeps the count because it was faster by more than ``margin``, up to ``max_period`` x.
        tie_period: after a probe that found the counts within ``margin`` of each other, the run lasts this
            many times the probe's wall seconds (a tie costs nothing to probe, and may be noise).
        margin: the other count must be faster per iteration by more than this fraction to switch.
        sure: faster by more than this fraction in one probe: switch without a second probe (one chunk's noise on
            a busy machine is about +-10%).
        clock: wall-clock seconds (default :func:`time.perf_counter`).
    """

    def __init__(self, low: int = 1, high: int = 2, probe_seconds: float = 0.15, period: float = 16.0,
                 max_period: float = 64.0, margin: float = 0.05, sure: float = 0.25, tie_period: float = 4.0,
                 clock: Callable[[], float] = time.perf_counter):
        if not 1 <= int(low) <= int(high):
            raise ValueError(f"thread counts need 1 <= low <= high, got {low}, {high}")
        if not (probe_seconds > 0 and 1 <= tie_period <= period <= max_period and 0 <= margin <= sure):
            raise ValueError("need probe_seconds > 0, 1 <= tie_period <= period <= max_period and "
                             "0 <= margin <= sure")
        self.low, self.high = int(low), int(high)
        self.probe_seconds, self.margin, self.sure = float(probe_seconds), float(margin), float(sure)
        self.period0, self.max_period, self.tie_period = float(period), float(max_period), float(tie_period)
        self.period = self.period0
        self.clock = clock
        # the count runs use; before the first probe the fewest threads: a count needs to be measurably faster than
        # it to win, so ties (a machine that gives the solver one core's share) run on 1 thread, at less CPU
        self.current = self.low
        self.iterations: Dict[int, int] = {self.low: 0, self.high: 0}
        self.seconds: Dict[int, float] = {self.low: 0.0, self.high: 0.0}
        self.per_iteration: Dict[int, Optional[float]] = {self.low: None, self.high: None}  # latest, s / iteration
        self.switches = self.probes = 0
        self.history: List[Tuple[float, float, int]] = []  # per probe: (s / it at low, s / it at high, chosen)
        # planned steps: [kind, count, iterations planned (None: set when the step starts), done, seconds]
        self._steps: List[list] = []
        self._probe: Dict[int, List[float]] = {}  # the probe in progress: [iterations, seconds] per count
        self._confirming = False             # the probe in progress confirms a first probe's switch
        self._probe_wall = 0.0               # its wall seconds so far
        self._last_probe_seconds = 0.0       # the last complete probe's wall seconds
        self._warm: Optional[float] = None   # the warm-up's seconds per iteration
        if self.low == self.high:
            self._steps.append([RUN, self.high, None, 0, 0.0])
        else:
            self._steps += [[WARM, self.low, 1, 0, 0.0]] + self._probe_steps()

    @property
    def fixed(self) -> bool:
        """Whether there is only one count to run."""
        return self.low == self.high

    def _other(self, count: int) -> int:
        return self.low if count == self.high else self.high

    def _probe_steps(self) -> List[list]:
        # the other count first, then the current one: the run after the probe goes on at the current count
        # unless the probe switches
        return [[PROBE, self._other(self.current), None, 0, 0.0], [PROBE, self.current, None, 0, 0.0]]

    def _estimate(self, count: int) -> float:
        """Seconds per iteration expected at ``count``: the latest measured, else the warm-up's (an upper bound:
        it pays the first touch of the tables), else the other count's."""
        t = self.per_iteration[count]
        if t is None:
            t = self._warm if self._warm is not None else self.per_iteration[self._other(count)]
        return 1.0 if t is None else t

    def plan(self) -> Tuple[int, int]:
        """``(threads, iterations)`` of the next chunk (the caller may run fewer and :meth:`record` them)."""
        step = self._steps[0]
        kind, count = step[0], step[1]
        if step[2] is None:
            if self.fixed:
                step[2] = 1 << 30
            elif kind == PROBE:
                step[2] = max(2, int(round(self.probe_seconds / self._estimate(count))))
            else:  # a run: period x the last probe's wall seconds
                step[2] = max(1, int(round(self.period * self._last_probe_seconds / self._estimate(count))))
        return count, step[2] - step[3]

    def record(self, count: int, iterations: int, seconds: float) -> None:
        """``iterations`` (>= 0) run at ``count`` threads in ``seconds`` wall seconds, the chunk :meth:`plan`
        gave (or a part of it)."""
        step = self._steps[0]
        if count != step[1] or iterations < 0 or iterations > step[2] - step[3]:
            raise ValueError(f"record({count}, {iterations}) does not match the planned chunk "
                             f"({step[1]} threads, {step[2] - step[3]} iterations)")
        if iterations == 0:
            return
        seconds = max(float(seconds), 0.0)
        self.iterations[count] += iterations
        self.seconds[count] += seconds
        step[3] += iterations
        step[4] += seconds
        if step[3] < step[2]:
            return
        self._steps.pop(0)
        kind = step[0]
        per_it = step[4] / step[3]
        if kind != WARM:  # the warm-up's first touch of the tables is no rate
            self.per_iteration[count] = per_it
        else:
            self._warm = per_it
        if self.fixed:
            self._steps.append([RUN, self.high, None, 0, 0.0])
        elif kind == PROBE:
            acc = self._probe.setdefault(count, [0, 0.0])
            acc[0] += step[3]
            acc[1] += step[4]
            self._probe_wall += step[4]
            if not self._steps:  # the pair is complete
                self._decide()
        elif kind == RUN:
            self._steps += self._probe_steps()
        # after the warm-up the first probe's steps are already planned

    def _decide(self) -> None:
        cur, oth = self.current, self._other(self.current)
        t_cur, t_oth = (self._probe[c][1] / self._probe[c][0] for c in (cur, oth))
        self.probes += 1
        faster = t_oth * (1.0 + self.margin) < t_cur
        if faster and not self._confirming and not t_oth * (1.0 + self.sure) < t_cur:
            # a switch needs a second probe pair right away, judged on both pairs' sums: one short chunk on a busy
            # machine varies by +-10% (benchmarks/RESULTS.md, issue 30), a wrong switch runs a whole period
            self._confirming = True
            self._steps += self._probe_steps()
            return
        if faster:
            self.current = oth
            self.switches += 1
            self.period = self.period0
        elif t_cur * (1.0 + self.margin) < t_oth:  # the current count won clearly: probe less often
            self.period = min(max(2.0 * self.period, self.period0), self.max_period)
        else:
            # a tie: probing costs nothing when the counts are equal, and a tie may be one noisy chunk hiding a
            # real difference (a second thread 1.5x faster measured 3% faster once): probe again soon
            self.period = self.tie_period
        self.history.append((self._probe[self.low][1] / self._probe[self.low][0],
                             self._probe[self.high][1] / self._probe[self.high][0], self.current))
        self._last_probe_seconds = self._probe_wall / (2 if self._confirming else 1)
        self._probe, self._probe_wall, self._confirming = {}, 0.0, False
        self._steps.append([RUN, self.current, None, 0, 0.0])

    def stats(self) -> dict:
        """Per count the iterations and wall seconds run, the probes and switches: for benchmarks' reports."""
        return {"iterations": dict(self.iterations), "seconds": dict(self.seconds), "probes": self.probes,
                "switches": self.switches, "current": self.current, "history": list(self.history)}
