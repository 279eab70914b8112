"""Settings shared by every SymmToM MADDPG-family trainer (the variants, hyper-parameters, seeds).

Lives below :mod:`.maddpg` and :mod:`.estimated` so that both (and :mod:`.training`, which picks
the trainer of a variant) import it without importing each other.
"""
from __future__ import annotations

from dataclasses import dataclass

from cfrkit.agents.rl import LearnerError

VARIANTS = ("maddpg", "rmaddpg", "ce", "ge", "ee", "oracle")


@dataclass(frozen=True)
class MADDPGSettings:
    """Hyper-parameters of a MADDPG-family run (the paper's / MADDPG's unless said otherwise).

    ``num_envs`` episodes are stepped together per iteration; ``batch`` is the number of critic
    rows, i.e. (transition, ego agent) pairs, per gradient step -- the shared critic and actor see
    ``batch`` rows per step, as each of MADDPG's per-agent networks does; ``update_every`` joint
    environment steps per gradient step (MADDPG's 100); ``updates`` > 0 fixes the gradient steps per
    iteration instead.  ``buffer`` and ``warmup`` count joint steps (transitions).

    ``per_agent``: one actor and one critic per agent, as MADDPG's code and the paper
    (:class:`~.peragent.PerAgentTrainer`; feed-forward variants only), each agent's networks seeing
    ``batch`` transitions of their own per step; False (the default): one actor and critic shared by all
    agents, ``batch`` (transition, ego) rows per step.  ``soft_actions`` (with ``per_agent``): MADDPG's
    soft Gumbel-softmax samples (temperature 1) wherever the critic meets an action -- the replay keeps the
    sample whose argmax was played, the target actions and the actor's own action are soft samples (no
    straight-through one-hot); False: one-hot actions in all three places.  ``terminal_done``: the last
    step of an episode ends the return (``done`` = 1 in the replay); False: MADDPG's code with SymmToM's
    ``done`` (always False): the time limit is not a terminal state and the target bootstraps from the
    episode's last observation.
    """

    variant: str = "maddpg"
    num_envs: int = 128           # episodes per iteration, stepped together
    hidden: int = 64
    lr: float = 1e-3
    tau: float = 0.005
    gamma: float = 0.95
    batch: int = 1024             # critic rows (transition, ego agent) per gradient step
    update_every: int = 100       # joint environment steps per gradient step (MADDPG)
    updates: int = 0              # > 0: gradient steps per iteration instead of update_every
    buffer: int = 50_000          # joint steps kept
    warmup: int = 25_600          # joint steps before the first update (MADDPG: batch x 25-step episodes)
    logit_reg: float = 1e-3       # MADDPG's penalty on the actor's logits
    max_grad_norm: float = 0.5
    seed: int = 0
    per_agent: bool = False       # one actor and critic per agent (MADDPG's) instead of one shared
    soft_actions: bool = False    # the critic sees soft Gumbel-softmax samples (MADDPG's), needs per_agent
    terminal_done: bool = True    # False: no terminal at the time limit (MADDPG's code on SymmToM)

    def validate(self) -> None:
        if self.variant not in VARIANTS:
            raise LearnerError(f"variant must be one of {', '.join(VARIANTS)}, got {self.variant!r}")
        for name in ("num_envs", "hidden", "batch", "buffer", "update_every"):
            if int(getattr(self, name)) < 1:
                raise LearnerError(f"{name} must be >= 1, got {getattr(self, name)}")
        if int(self.updates) < 0 or int(self.warmup) < 0:
            raise LearnerError(f"updates and warmup must be >= 0, got {self.updates} and {self.warmup}")
        if not 0 < self.tau <= 1 or not 0 <= self.gamma <= 1 or self.lr <= 0:
            raise LearnerError("need 0 < tau <= 1, 0 <= gamma <= 1, lr > 0")
        if self.per_agent and self.variant in ("rmaddpg", "ee"):
            raise LearnerError(f"per_agent networks are built for the feed-forward variants (maddpg, ce, ge, oracle), "
                               f"not {self.variant!r}")
        if self.soft_actions and not self.per_agent:
            raise LearnerError("soft_actions is built for per-agent networks: set per_agent=True as well")


def episode_seed(seed: int, index: int) -> int:
    """The environment seed of batch ``index`` of a run seeded ``seed``."""
    return int((int(seed) * 1_000_003 + int(index) * 7_919 + 1) % (2 ** 63))


def check_setting(trained, view_config) -> None:
    """Refuse (:class:`LearnerError`, one line) to play an environment whose agent and piece counts differ from
    ``trained``, the configuration a learned agent was trained on."""
    if (view_config.agents, view_config.pieces) != (trained.agents, trained.pieces):
        raise LearnerError(f"agent trained with n={trained.agents}, c={trained.pieces}; "
                           f"environment has n={view_config.agents}, c={view_config.pieces}")
