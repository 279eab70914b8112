"""Post-hoc SymmToM metrics (Sclar et al., Sec. 8 / App. A.2), per agent per episode (lower is better).

* ``unsuccessful_base``: steps an agent stands on its own recharge base without knowing all pieces
  (the authors' ``incorrect_recharge_base_use`` log).
* ``wrong_communication``: steps an agent tries to say a piece it does not know (silence results).
* ``useless_communication``: steps an agent says a piece every listener in its hearing range
  already knew, while it knew a piece that at least one of them did not know.
* ``useless_movement``: steps an agent that does not know everything moves away (Manhattan
  distance grows) from every agent whose knowledge differs from its own (there being at least one).

:class:`MetricsRecorder` is a ``play_episode`` step hook; it reads the true state, so it measures
behaviour, not beliefs.
"""
from __future__ import annotations

from typing import Dict, List

import numpy as np

from cfrkit.games.symmtom.core import SILENT, hears

METRIC_NAMES = ("unsuccessful_base", "wrong_communication", "useless_communication", "useless_movement")


class MetricsRecorder:
    """Counts the post-hoc metrics over one or more episodes; call :meth:`start` after each reset."""

    def __init__(self):
        self.totals: Dict[str, List[float]] = {m: [] for m in METRIC_NAMES}
        self._counts = None

    def start(self, env) -> None:
        self._finish()
        n = env.config.agents
        self._counts = {m: np.zeros(n) for m in METRIC_NAMES}
        self._prev_positions = list(env.positions)

    def _finish(self) -> None:
        if self._counts is not None:
            for m in METRIC_NAMES:
                self.totals[m].extend(self._counts[m].tolist())
            self._counts = None

    def __call__(self, env, actions, info) -> None:
        if self._counts is None:
            raise RuntimeError("MetricsRecorder.start(env) must be called after each reset")
        out = info["outcome"]
        cfg = env.config
        n, h, full = cfg.agents, cfg.hearing, cfg.full_mask
        before = out.knowledge_before
        pos, prev = env.positions, self._prev_positions
        attempts = env.last_attempt
        counts = self._counts
        for i in range(n):
            if out.failed_base[i]:
                counts["unsuccessful_base"][i] += 1
            p = attempts[i]
            if p != SILENT and not (before[i] >> p) & 1:
                counts["wrong_communication"][i] += 1
            listeners = [j for j in range(n) if j != i and hears(pos[i], pos[j], h)]
            said = out.spoken[i]
            if said != SILENT and listeners and all((before[j] >> said) & 1 for j in listeners):
                if any(before[i] & ~before[j] for j in listeners):
                    counts["useless_communication"][i] += 1
            if before[i] != full and pos[i] != prev[i]:
                different = [j for j in range(n) if j != i and before[j] != before[i]]
                if different and all(_manhattan(pos[i], prev[j]) > _manhattan(prev[i], prev[j]) for j in different):
                    counts["useless_movement"][i] += 1
        self._prev_positions = list(pos)

    def summary(self) -> Dict[str, float]:
        """Mean count per agent per episode of each metric."""
        self._finish()
        return {m: float(np.mean(v)) if v else 0.0 for m, v in self.totals.items()}


def _manhattan(a, b) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])
