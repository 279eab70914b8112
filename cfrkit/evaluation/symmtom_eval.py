"""Table 1 of Sclar et al.: average reward per agent over episodes in 12 SymmToM settings.

Settings: n in {3, 4}, w in {6, 12}, c in {n, 2n, 3n}, h = 1, episodes of 5 w steps, random
starts.  Every agent of an episode runs the evaluated policy (self-play, as in the paper).  For each
setting the episode score is the mean over agents of their episode returns; the table reports the
mean and standard deviation of that score over episodes, and optionally the post-hoc metrics.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit._io import atomic_open
from cfrkit.agents.symmtom import ORACLE_AGENTS, make_agent, play_episode
from cfrkit.evaluation.symmtom_metrics import MetricsRecorder
from cfrkit.games.symmtom.core import SymmToMConfig
from cfrkit.games.symmtom.env import SymmToMEnv

#: (n, w, c multiplier) in Table 1's column order.
TABLE1_SETTINGS: Tuple[Tuple[int, int, int], ...] = tuple(
    (n, w, k) for n in (3, 4) for w in (6, 12) for k in (1, 2, 3))
#: The paper's heuristic row of Table 1 (mean, std) in column order.
PAPER_HEURISTIC = ((39, 11), (53, 13), (58, 13), (37, 12), (58, 15), (71, 15),
                   (60, 15), (74, 15), (74, 16), (59, 18), (86, 18), (99, 18))
#: The best learned imperfect-information agent per column (bold in Table 1).
PAPER_BEST_LEARNED = (41, 26, 34, 52, 61, 20, 40, 31, 26, 34, 28, 16)


@dataclass
class SettingResult:
    """Reward statistics of one setting (per-agent episode returns)."""

    agents: int
    width: int
    pieces: int
    episodes: int
    mean: float
    std: float
    metrics: Dict[str, float] = field(default_factory=dict)


def evaluate_setting(agent: str, n: int, w: int, c: int, episodes: int, seed: int = 0,
                     metrics: bool = False, progress=None) -> SettingResult:
    """Self-play ``episodes`` episodes of ``agent`` in one setting; seeds ``seed + e``."""
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    cfg = SymmToMConfig(agents=n, width=w, pieces=c, oracle=agent in ORACLE_AGENTS)
    env = SymmToMEnv(cfg)
    recorder = MetricsRecorder() if metrics else None
    scores = []
    for e in range(episodes):
        agents = [make_agent(agent, seed=(seed + e) * 31 + i) for i in range(n)]
        hook = None
        if recorder is not None:
            env.reset(seed=seed + e)
            recorder.start(env)
            hook = recorder
        returns = play_episode(env, agents, seed=seed + e, on_step=hook)
        scores.append(float(np.mean(returns)))
        if progress is not None:
            progress.update(1)
    return SettingResult(n, w, c, episodes, float(np.mean(scores)), float(np.std(scores)),
                         recorder.summary() if recorder is not None else {})


def _checkpoint_key(agent: str, n: int, w: int, k: int, episodes: int, seed: int, metrics: bool) -> str:
    return f"{agent}|n={n}|w={w}|k={k}|episodes={episodes}|seed={seed}|metrics={int(metrics)}"


def _load_checkpoint(path: str) -> Dict[str, dict]:
    if not os.path.exists(path):
        return {}
    try:
        with open(path) as fh:
            data = json.load(fh)
        if not isinstance(data, dict) or data.get("format") != "cfrkit-symmtom-table1-v1":
            raise ValueError("wrong format tag")
        return dict(data["results"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"checkpoint {path} is not a SymmToM Table 1 checkpoint ({exc})") from None


def _save_checkpoint(path: str, results: Dict[str, dict]) -> None:
    with atomic_open(path, "w") as fh:
        json.dump({"format": "cfrkit-symmtom-table1-v1", "results": results}, fh, indent=1)


def evaluate_table1(agent: str, episodes: int = 1000, seed: int = 0, settings: Sequence[Tuple[int, int, int]] = TABLE1_SETTINGS,
                    metrics: bool = False, progress: bool = True, checkpoint: Optional[str] = None) -> List[SettingResult]:
    """Every Table 1 setting for ``agent``; a tqdm bar counts episodes.

    With ``checkpoint`` (a JSON file path) each finished setting is saved, and settings already in
    the file (same agent, episodes, seed and metrics flag) are read back instead of rerun.
    """
    saved = _load_checkpoint(checkpoint) if checkpoint else {}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=episodes * len(settings), desc=f"symmtom eval {agent}", unit="ep")
    results = []
    try:
        for n, w, k in settings:
            key = _checkpoint_key(agent, n, w, k, episodes, seed, metrics)
            if key in saved:
                results.append(SettingResult(**saved[key]))
                if bar is not None:
                    bar.update(episodes)
                continue
            result = evaluate_setting(agent, n, w, k * n, episodes, seed, metrics, bar)
            results.append(result)
            if checkpoint:
                saved[key] = asdict(result)
                _save_checkpoint(checkpoint, saved)
        return results
    finally:
        if bar is not None:
            bar.close()


def format_table1(rows: Dict[str, List[SettingResult]], settings: Sequence[Tuple[int, int, int]] = TABLE1_SETTINGS,
                  paper: bool = True) -> str:
    """Table 1's layout: header rows for n, w, c; one row per agent, ``mean [std]`` per column."""
    label = 24
    cell = 9
    def line(name: str, cells: Sequence[str]) -> str:
        return f"{name:<{label}}" + "".join(f"{x:>{cell}}" for x in cells)

    out = [line("agents (n)", [str(n) for n, _, _ in settings]),
           line("grid width (w)", [str(w) for _, w, _ in settings]),
           line("info pieces (c)", [("n" if k == 1 else f"{k}n") for _, _, k in settings])]
    if paper and tuple(settings) == TABLE1_SETTINGS:
        out.append(line("paper: Heuristic", [f"{m} [{s}]" for m, s in PAPER_HEURISTIC]))
        out.append(line("paper: best learned", [str(m) for m in PAPER_BEST_LEARNED]))
    for name, results in rows.items():
        out.append(line(name, [f"{r.mean:.0f} [{r.std:.0f}]" for r in results]))
    return "\n".join(out)


def format_metrics(rows: Dict[str, List[SettingResult]], settings: Sequence[Tuple[int, int, int]] = TABLE1_SETTINGS) -> str:
    """One block per post-hoc metric in Table 1's column layout (values per agent per episode)."""
    from cfrkit.evaluation.symmtom_metrics import METRIC_NAMES

    label, cell = 24, 9
    blocks = []
    for m in METRIC_NAMES:
        lines = [f"{m} (per agent per episode, lower is better)"]
        for name, results in rows.items():
            if results and results[0].metrics:
                lines.append(f"{name:<{label}}" + "".join(f"{r.metrics[m]:>{cell}.2f}" for r in results))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
