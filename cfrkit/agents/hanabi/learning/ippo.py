"""IPPO for Hanabi: independent PPO with shared parameters (the actor-critic baseline family of the
Hanabi challenge) on the batched C engine, with action masking.

Every seat plays the same network (parameter sharing, self-play); actor and critic see only the
acting player's canonical observation (independent, decentralised critic -- "IPPO").  Hanabi is
common-payoff and turn-based, so the team's move sequence is one trajectory: each move's reward is
the score change it caused (HLE's reward: the whole score is lost with the last life), the value of
a decision is the team's discounted return from it, and GAE runs over the move sequence.

One *iteration* plays ``num_envs`` complete games (one per engine slot, the engine seeded by the
run seed and the iteration) and then runs ``epochs`` PPO epochs over all their decisions.  Because
no game crosses an iteration boundary, a checkpoint holds the whole training state (networks,
optimiser, torch generator, counters) and resuming is bit-exact.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Callable, Dict, Optional

import numpy as np
import torch

from cfrkit._kernels import hanabi_engine as _engine
from cfrkit.agents.hanabi.learning.networks import ActorCritic, masked_entropy
from cfrkit.agents.hanabi.learning.play import episode_seed, greedy_policy, selfplay_scores
from cfrkit.agents.rl import LearnerError, RunDirectory, default_device
from cfrkit.games.hanabi.config import HanabiConfig


@dataclass(frozen=True)
class IPPOSettings:
    """Hyper-parameters (defaults: standard PPO values sized for CPU runs)."""

    num_envs: int = 256          # games per iteration
    hidden: tuple = (256, 256)
    lr: float = 5e-4
    gamma: float = 0.99          # per move
    gae_lambda: float = 0.95
    clip: float = 0.2
    epochs: int = 4
    minibatch: int = 2048        # decisions per gradient step
    value_coef: float = 0.5
    entropy_coef: float = 0.01
    max_grad_norm: float = 0.5
    seed: int = 0

    def validate(self) -> None:
        for name in ("num_envs", "epochs", "minibatch"):
            if int(getattr(self, name)) < 1:
                raise LearnerError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0 < self.gamma <= 1 or not 0 <= self.gae_lambda <= 1:
            raise LearnerError("gamma must be in (0, 1], gae_lambda in [0, 1]")
        if self.lr <= 0:
            raise LearnerError(f"lr must be > 0, got {self.lr}")


class IPPOTrainer:
    """Trains an :class:`ActorCritic` on ``config`` by self-play PPO.

    >>> from cfrkit.games.hanabi import preset
    >>> t = IPPOTrainer(preset("very-small", 2), IPPOSettings(num_envs=8, minibatch=64))
    >>> stats = t.iterate()
    >>> sorted(stats)[:3]
    ['approx_kl', 'entropy', 'env_steps']
    """

    def __init__(self, config: HanabiConfig, settings: IPPOSettings = IPPOSettings(), device: Optional[str] = None):
        settings.validate()
        self.config = config
        self.settings = settings
        self.device = default_device(device)
        ec = config.engine_config()
        self.obs_len, self.num_moves = ec.encoding_length, ec.num_moves
        torch.manual_seed(settings.seed)   # network initialisation only
        self.net = ActorCritic(self.obs_len, self.num_moves, tuple(settings.hidden)).to(self.device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=settings.lr, eps=1e-5)
        self.generator = torch.Generator().manual_seed(settings.seed + 1)
        self.iteration = 0
        self.env_steps = 0
        self.games = 0
        self.wall_seconds = 0.0
        self.cpu_seconds = 0.0

    # ------------------------------------------------------------------ state
    def state_dict(self) -> Dict:
        return {"net": self.net.state_dict(), "optimizer": self.optimizer.state_dict(),
                "generator": self.generator.get_state(), "iteration": self.iteration,
                "env_steps": self.env_steps, "games": self.games, "wall_seconds": self.wall_seconds,
                "cpu_seconds": self.cpu_seconds}

    def load_state_dict(self, state: Dict) -> None:
        self.net.load_state_dict(state["net"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        for k in ("iteration", "env_steps", "games", "wall_seconds", "cpu_seconds"):
            setattr(self, k, state[k])

    # ------------------------------------------------------------------ rollout
    def _rollout(self):
        """Play ``num_envs`` games with the sampling policy; returns per-decision tensors (T, N)."""
        N = self.settings.num_envs
        eng = _engine.BatchEngine(self.config.engine_config(), N, episode_seed(self.settings.seed, self.iteration), True)
        obs, mask, _ = eng.reset()
        active = np.ones(N, dtype=bool)
        scores = np.zeros(N, dtype=np.int64)
        actions = np.zeros(N, dtype=np.int64)
        buf = {k: [] for k in ("obs", "mask", "action", "logp", "value", "reward", "done", "valid")}
        while active.any():
            o = torch.as_tensor(obs, device=self.device).float()
            m = torch.as_tensor(mask, device=self.device)
            with torch.no_grad():
                logits, value = self.net(o, m)
                probs = torch.softmax(logits, -1).cpu()
            a = torch.multinomial(probs, 1, generator=self.generator).squeeze(1)
            logp = torch.log(probs.gather(1, a[:, None]).squeeze(1))
            actions[:] = a.numpy()
            valid = active.copy()
            buf["obs"].append(torch.as_tensor(obs.copy()))
            buf["mask"].append(torch.as_tensor(mask.copy()))
            buf["action"].append(a)
            buf["logp"].append(logp)
            buf["value"].append(value.cpu())
            obs, mask, _, rewards, dones, finals = eng.step(actions)
            buf["reward"].append(torch.as_tensor(rewards.copy()))
            buf["done"].append(torch.as_tensor(dones.copy()))
            buf["valid"].append(torch.as_tensor(valid))
            newly = dones & active
            scores[newly] = finals[newly]
            active &= ~dones
        out = {k: torch.stack(v) for k, v in buf.items()}
        return out, scores

    def _advantages(self, r: torch.Tensor, v: torch.Tensor, done: torch.Tensor, valid: torch.Tensor):
        s = self.settings
        T = r.shape[0]
        adv = torch.zeros_like(v)
        last = torch.zeros(v.shape[1])
        next_v = torch.zeros(v.shape[1])
        for t in range(T - 1, -1, -1):
            nonterminal = (~done[t]).float()
            delta = r[t] + s.gamma * next_v * nonterminal - v[t]
            last = delta + s.gamma * s.gae_lambda * nonterminal * last
            last = last * valid[t].float()
            adv[t] = last
            next_v = v[t]
        return adv, adv + v

    # ------------------------------------------------------------------ update
    def iterate(self) -> Dict[str, float]:
        """One iteration: ``num_envs`` games, then PPO epochs; returns the iteration's scalars."""
        s = self.settings
        wall0, cpu0 = time.perf_counter(), time.process_time()
        data, scores = self._rollout()
        adv, ret = self._advantages(data["reward"], data["value"], data["done"], data["valid"])
        valid = data["valid"].reshape(-1)
        flat = {k: data[k].reshape(-1, *data[k].shape[2:])[valid] for k in ("obs", "mask", "action", "logp", "value")}
        adv, ret = adv.reshape(-1)[valid], ret.reshape(-1)[valid]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        n = adv.shape[0]
        stats = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0}
        steps = 0
        for _ in range(s.epochs):
            perm = torch.randperm(n, generator=self.generator)
            for start in range(0, n, s.minibatch):
                idx = perm[start:start + s.minibatch]
                o = flat["obs"][idx].to(self.device).float()
                m = flat["mask"][idx].to(self.device)
                logits, value = self.net(o, m)
                logp_all = torch.log_softmax(logits, -1)
                logp = logp_all.gather(1, flat["action"][idx].to(self.device)[:, None]).squeeze(1)
                ratio = torch.exp(logp - flat["logp"][idx].to(self.device))
                a = adv[idx].to(self.device)
                policy_loss = -torch.min(ratio * a, ratio.clamp(1 - s.clip, 1 + s.clip) * a).mean()
                value_loss = 0.5 * (value - ret[idx].to(self.device)).pow(2).mean()
                entropy = masked_entropy(logits, m).mean()
                loss = policy_loss + s.value_coef * value_loss - s.entropy_coef * entropy
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.net.parameters(), s.max_grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    stats["approx_kl"] += float((flat["logp"][idx].to(self.device) - logp).mean())
                stats["policy_loss"] += float(policy_loss.detach())
                stats["value_loss"] += float(value_loss.detach())
                stats["entropy"] += float(entropy.detach())
                steps += 1
        stats = {k: v / max(steps, 1) for k, v in stats.items()}
        self.iteration += 1
        self.env_steps += int(n)
        self.games += len(scores)
        self.wall_seconds += time.perf_counter() - wall0
        self.cpu_seconds += time.process_time() - cpu0
        stats.update(train_score=float(scores.mean()), env_steps=self.env_steps, games=self.games)
        return stats

    def evaluate(self, games: int = 1000, seed: int = 12345) -> np.ndarray:
        """Greedy self-play scores on ``games`` seeded games (the same deals for every checkpoint)."""
        self.net.eval()
        try:
            return selfplay_scores(greedy_policy(self.net, self.device), self.config, games, seed)
        finally:
            self.net.train()


SCALAR_FIELDS = ["iteration", "env_steps", "games", "wall_seconds", "cpu_seconds", "train_score", "eval_score",
                 "policy_loss", "value_loss", "entropy", "approx_kl"]


def train_ippo(config: HanabiConfig, settings: IPPOSettings, out: str, iterations: int, eval_every: int = 10,
               eval_games: int = 500, checkpoint_every: int = 10, device: Optional[str] = None, fresh: bool = False,
               progress: bool = True, should_stop: Callable[[], bool] = lambda: False) -> IPPOTrainer:
    """Train until ``iterations`` iterations in total (rerun on the same ``out`` to resume).

    Writes ``out/checkpoint.pt`` every ``checkpoint_every`` iterations, at the end and when
    ``should_stop()`` turns true (Ctrl-C in the CLI), and ``out/scalars.csv`` (one row per iteration;
    ``eval_score``: greedy self-play mean over ``eval_games`` fixed deals every ``eval_every``).
    """
    hyper = {"algo": "ippo", "config": config.as_dict(), **{k: (list(v) if isinstance(v, tuple) else v)
                                                             for k, v in asdict(settings).items()}}
    from cfrkit.agents.rl.loop import run_iterations

    run = RunDirectory(out, hyper, fresh=fresh)
    trainer = IPPOTrainer(config, settings, device)
    run_iterations(trainer, run, SCALAR_FIELDS, iterations,
                   lambda: {"eval_score": float(trainer.evaluate(eval_games).mean())}, eval_every,
                   checkpoint_every, progress, "ippo", should_stop, "train_score")
    return trainer


def load_ippo(path: str, device: Optional[str] = None):
    """The trainer saved in an IPPO or Rainbow checkpoint (``out/checkpoint.pt``); its ``net`` is the policy."""
    from cfrkit.agents.hanabi.learning.rainbow import RainbowSettings, RainbowTrainer
    from cfrkit.agents.rl import load_checkpoint

    payload = load_checkpoint(path)
    hyper = payload.get("hyper", {})
    kinds = {"ippo": (IPPOSettings, IPPOTrainer), "rainbow": (RainbowSettings, RainbowTrainer)}
    if hyper.get("algo") not in kinds:
        raise LearnerError(f"{path} is not a Hanabi learner checkpoint (algo {hyper.get('algo')!r})")
    settings_cls, trainer_cls = kinds[hyper["algo"]]
    settings = settings_cls(**{k: (tuple(v) if k == "hidden" else v) for k, v in hyper.items()
                               if k in settings_cls.__dataclass_fields__})
    trainer = trainer_cls(HanabiConfig(**hyper["config"]), settings, device)
    trainer.load_state_dict(payload["trainer"])
    return trainer
