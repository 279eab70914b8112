"""Picking, training and loading a SymmToM MADDPG-family trainer of any variant.

Above :mod:`.maddpg` (MADDPG, RMADDPG, CE, GE, Oracle) and :mod:`.estimated` (EE), which both build
on :mod:`.settings`; neither imports this module, so there is no import cycle.
"""
from __future__ import annotations

from dataclasses import asdict
from typing import Callable, Optional

from cfrkit.agents.rl import LearnerError, RunDirectory, load_checkpoint
from cfrkit.agents.rl.loop import run_iterations
from cfrkit.agents.symmtom.learning.estimated import EETrainer
from cfrkit.agents.symmtom.learning.maddpg import MADDPGTrainer
from cfrkit.agents.symmtom.learning.peragent import PerAgentTrainer
from cfrkit.agents.symmtom.learning.settings import MADDPGSettings
from cfrkit.games.symmtom.core import SymmToMConfig

SCALAR_FIELDS = ["iteration", "env_steps", "episodes", "updates", "wall_seconds", "cpu_seconds", "train_reward",
                 "eval_reward", "critic_loss", "actor_loss", "q"]


def make_trainer(config: SymmToMConfig, settings: MADDPGSettings = MADDPGSettings(),
                 device: Optional[str] = None) -> MADDPGTrainer:
    """The trainer of ``settings.variant``: :class:`~.estimated.EETrainer` for ``ee``, :class:`~.peragent.PerAgentTrainer`
    with ``settings.per_agent``, else :class:`MADDPGTrainer`."""
    if settings.variant == "ee":
        return EETrainer(config, settings, device)
    if settings.per_agent:
        return PerAgentTrainer(config, settings, device)
    return MADDPGTrainer(config, settings, device)


def train_maddpg(config: SymmToMConfig, settings: MADDPGSettings, out: str, iterations: int, eval_every: int = 10,
                 eval_episodes: int = 200, checkpoint_every: int = 10, device: Optional[str] = None,
                 fresh: bool = False, progress: bool = True,
                 should_stop: Callable[[], bool] = lambda: False) -> MADDPGTrainer:
    """Train until ``iterations`` iterations in total (rerun on ``out`` to resume); CSV in ``out/scalars.csv``.

    ``eval_reward``: greedy self-play reward per agent over ``eval_episodes`` fixed episodes.
    """
    hyper = {"algo": "maddpg", "config": {"agents": config.agents, "width": config.width, "pieces": config.pieces,
                                          "hearing": config.hearing, "steps": config.steps}, **asdict(settings)}
    run = RunDirectory(out, hyper, fresh=fresh)
    trainer = make_trainer(config, settings, device)
    run_iterations(trainer, run, SCALAR_FIELDS, iterations,
                   lambda: {"eval_reward": float(trainer.evaluate(eval_episodes).mean())}, eval_every,
                   checkpoint_every, progress, settings.variant, should_stop, "train_reward")
    return trainer


def load_maddpg(path: str, device: Optional[str] = None) -> MADDPGTrainer:
    """The trainer saved in a MADDPG-family checkpoint."""
    payload = load_checkpoint(path)
    hyper = payload.get("hyper", {})
    if hyper.get("algo") != "maddpg":
        raise LearnerError(f"{path} is not a MADDPG checkpoint (algo {hyper.get('algo')!r})")
    settings = MADDPGSettings(**{k: v for k, v in hyper.items() if k in MADDPGSettings.__dataclass_fields__})
    trainer = make_trainer(SymmToMConfig(**hyper["config"]), settings, device)
    trainer.load_state_dict(payload["trainer"])
    return trainer
