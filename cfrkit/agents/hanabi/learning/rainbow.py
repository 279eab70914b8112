"""A Rainbow-style DQN for Hanabi (the Hanabi challenge's Rainbow baseline) on the batched engine.

Included: distributional C51 (51 atoms on [-25, 25]), a dueling head, prioritised replay
(proportional, alpha 0.6, beta 0.4 -> 1), n-step returns, a target network, and either noisy nets
(``noisy=True``, the default) or epsilon-greedy exploration annealed to ``epsilon_final``.  Double-Q is
not used.  Illegal moves are masked in acting and in the bootstrap arg-max.  Every seat shares the network
(the challenge's multi-agent Rainbow); as in :mod:`.ippo` the team's move sequence is one trajectory
(common payoff), so a transition goes from the acting player's observation to the next acting player's
observation ``n`` moves later.

Defaults (noisy nets, 3-step returns, 16 games and 32 gradient steps of 128 per iteration: about 4
replayed samples per environment step) are the configuration measured to learn on this engine
(RESULTS.md).  The challenge's own Dopamine configuration -- epsilon-greedy annealed to 0 over 1000
steps, 1-step returns, ``noisy=False, n_step=1`` -- stalled here: its greedy policy stopped playing cards
(0.75 points after 10^6 steps), having no exploration left once epsilon reached 0.

One iteration plays ``num_envs`` complete games (engine seeded by run seed and iteration) into the
replay, then runs ``updates`` gradient steps; checkpoints hold the replay and every generator, so
resuming is bit-exact.
"""
from __future__ import annotations

import copy
import time
from dataclasses import asdict, dataclass
from typing import Callable, Dict, Optional

import numpy as np
import torch

from cfrkit._kernels import hanabi_engine as _engine
from cfrkit.agents.hanabi.learning.networks import DuelingDistributionalQ
from cfrkit.agents.hanabi.learning.play import episode_seed, greedy_policy, selfplay_scores
from cfrkit.agents.rl import CsvScalars, LearnerError, RunDirectory, default_device
from cfrkit.agents.rl.prioritized import PrioritizedReplay
from cfrkit.games.hanabi.config import HanabiConfig


@dataclass(frozen=True)
class RainbowSettings:
    num_envs: int = 16
    hidden: tuple = (512, 512)
    atoms: int = 51
    v_min: float = -25.0
    v_max: float = 25.0
    lr: float = 2.5e-4
    adam_eps: float = 3.125e-4
    gamma: float = 0.99
    n_step: int = 3
    batch: int = 128
    updates: int = 32
    buffer: int = 50_000
    warmup: int = 2_000
    target_every: int = 500          # gradient steps between target-network copies
    epsilon_final: float = 0.0
    epsilon_decay_steps: int = 1000  # environment steps
    alpha: float = 0.6
    beta0: float = 0.4
    beta_steps: int = 100_000
    noisy: bool = True
    seed: int = 0

    def validate(self) -> None:
        for name in ("num_envs", "atoms", "n_step", "batch", "updates", "buffer", "target_every"):
            if int(getattr(self, name)) < 1:
                raise LearnerError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.atoms < 2 or self.v_max <= self.v_min:
            raise LearnerError("need atoms >= 2 and v_max > v_min")


class RainbowTrainer:
    """Trains a :class:`DuelingDistributionalQ` by self-play (see the module docstring)."""

    def __init__(self, config: HanabiConfig, settings: RainbowSettings = RainbowSettings(), device: Optional[str] = None):
        settings.validate()
        self.config, self.settings = config, settings
        self.device = default_device(device)
        ec = config.engine_config()
        self.obs_len, self.num_moves = ec.encoding_length, ec.num_moves
        torch.manual_seed(settings.seed)
        self.net = DuelingDistributionalQ(self.obs_len, self.num_moves, settings.atoms, settings.v_min,
                                          settings.v_max, tuple(settings.hidden), settings.noisy).to(self.device)
        self.target = copy.deepcopy(self.net)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=settings.lr, eps=settings.adam_eps)
        self.generator = torch.Generator().manual_seed(settings.seed + 1)
        self.rng = np.random.default_rng(settings.seed + 2)
        self.replay = PrioritizedReplay(settings.buffer, {
            "obs": ((self.obs_len,), np.uint8), "action": ((), np.int64), "ret": ((), np.float32),
            "discount": ((), np.float32), "next_obs": ((self.obs_len,), np.uint8),
            "next_mask": ((self.num_moves,), bool)}, settings.alpha)
        self.iteration = self.env_steps = self.games = self.grad_steps = 0
        self.wall_seconds = self.cpu_seconds = 0.0

    def state_dict(self) -> Dict:
        return {"net": self.net.state_dict(), "target": self.target.state_dict(),
                "optimizer": self.optimizer.state_dict(), "generator": self.generator.get_state(),
                "rng": self.rng.bit_generator.state, "replay": self.replay.state_dict(),
                **{k: getattr(self, k) for k in ("iteration", "env_steps", "games", "grad_steps", "wall_seconds",
                                                   "cpu_seconds")}}

    def load_state_dict(self, state: Dict) -> None:
        self.net.load_state_dict(state["net"])
        self.target.load_state_dict(state["target"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        self.rng.bit_generator.state = state["rng"]
        self.replay.load_state_dict(state["replay"])
        for k in ("iteration", "env_steps", "games", "grad_steps", "wall_seconds", "cpu_seconds"):
            setattr(self, k, state[k])

    def epsilon(self) -> float:
        s = self.settings
        if s.noisy:
            return 0.0
        frac = min(1.0, self.env_steps / max(1, s.epsilon_decay_steps))
        return 1.0 + frac * (s.epsilon_final - 1.0)

    def _rollout(self) -> np.ndarray:
        s, N = self.settings, self.settings.num_envs
        eng = _engine.BatchEngine(self.config.engine_config(), N, episode_seed(s.seed, self.iteration), True)
        obs, mask, _ = eng.reset()
        active = np.ones(N, dtype=bool)
        scores = np.zeros(N, dtype=np.int64)
        traj = {k: [] for k in ("obs", "mask", "action", "reward", "valid")}
        eps = self.epsilon()
        if s.noisy:
            self.net.resample_noise(self.generator)
        while active.any():
            with torch.no_grad():
                q = self.net.q_values(torch.as_tensor(obs, device=self.device).float(),
                                      torch.as_tensor(mask, device=self.device)).cpu()
            greedy = q.argmax(-1)
            legal = torch.as_tensor(mask).float()
            rand = torch.multinomial(legal, 1, generator=self.generator).squeeze(1)
            explore = torch.rand(N, generator=self.generator) < eps
            a = torch.where(explore, rand, greedy).numpy()
            traj["obs"].append(obs.copy())
            traj["mask"].append(mask.copy())
            traj["action"].append(a)
            traj["valid"].append(active.copy())
            obs, mask, _, rewards, dones, finals = eng.step(a)
            traj["reward"].append(np.where(active, rewards, 0.0))
            newly = dones & active
            scores[newly] = finals[newly]
            active &= ~dones
        t = {k: np.stack(v) for k, v in traj.items()}
        self._store(t)
        return scores, int(t["valid"].sum())

    def _store(self, t: Dict[str, np.ndarray]) -> None:
        """n-step transitions of the finished games (T, N) into the replay."""
        n, g = self.settings.n_step, self.settings.gamma
        lengths = t["valid"].sum(0)
        for i in range(t["valid"].shape[1]):
            L = int(lengths[i])
            r = t["reward"][:L, i]
            start = np.arange(L)
            end = np.minimum(start + n, L)
            ret = np.array([sum(g ** k * r[j + k] for k in range(e - j)) for j, e in zip(start, end)], np.float32)
            discount = np.where(end < L, g ** (end - start), 0.0).astype(np.float32)
            nxt = np.minimum(end, L - 1)
            self.replay.add(obs=t["obs"][:L, i], action=t["action"][:L, i], ret=ret, discount=discount,
                            next_obs=t["obs"][nxt, i], next_mask=t["mask"][nxt, i])

    def _update(self) -> Dict[str, float]:
        s = self.settings
        beta = min(1.0, s.beta0 + (1 - s.beta0) * self.env_steps / s.beta_steps)
        b, idx, w = self.replay.sample_prioritized(self.rng, s.batch, beta)
        dev = self.device
        obs = torch.as_tensor(b["obs"], device=dev).float()
        nobs = torch.as_tensor(b["next_obs"], device=dev).float()
        nmask = torch.as_tensor(b["next_mask"], device=dev)
        support = self.net.support
        dz = (s.v_max - s.v_min) / (s.atoms - 1)
        if s.noisy:
            self.net.resample_noise(self.generator)
            self.target.resample_noise(self.generator)
        with torch.no_grad():
            logp_next = self.target(nobs)                                       # (B, M, atoms)
            q_next = (logp_next.exp() * support).sum(-1).masked_fill(~nmask, float("-inf"))
            a_next = q_next.argmax(-1)
            p_next = logp_next.exp()[torch.arange(s.batch), a_next]            # (B, atoms)
            disc = torch.as_tensor(b["discount"], device=dev)
            tz = (torch.as_tensor(b["ret"], device=dev)[:, None] + disc[:, None] * support[None]).clamp(s.v_min, s.v_max)
            pos = (tz - s.v_min) / dz
            lo, hi = pos.floor().long(), pos.ceil().long()
            target = torch.zeros_like(p_next)
            target.scatter_add_(1, lo, p_next * (hi.float() - pos + (lo == hi).float()))
            target.scatter_add_(1, hi, p_next * (pos - lo.float()))
        logp = self.net(obs)[torch.arange(s.batch), torch.as_tensor(b["action"], device=dev)]
        ce = -(target * logp).sum(-1)
        loss = (torch.as_tensor(w, device=dev) * ce).mean()
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.net.parameters(), 10.0)
        self.optimizer.step()
        self.replay.update_priorities(idx, ce.detach().cpu().numpy())
        self.grad_steps += 1
        if self.grad_steps % s.target_every == 0:
            self.target.load_state_dict(self.net.state_dict())
        return {"loss": float(loss.detach())}

    def iterate(self) -> Dict[str, float]:
        s = self.settings
        wall0, cpu0 = time.perf_counter(), time.process_time()
        eps = self.epsilon()
        scores, steps = self._rollout()
        loss, done = 0.0, 0
        if len(self.replay) >= min(s.warmup, s.buffer):
            for _ in range(s.updates):
                loss += self._update()["loss"]
                done += 1
        self.iteration += 1
        self.games += len(scores)
        self.env_steps += steps
        self.wall_seconds += time.perf_counter() - wall0
        self.cpu_seconds += time.process_time() - cpu0
        return {"train_score": float(scores.mean()), "loss": loss / max(done, 1), "epsilon": eps,
                "env_steps": self.env_steps, "games": self.games}

    def evaluate(self, games: int = 1000, seed: int = 12345) -> np.ndarray:
        """Greedy self-play scores (noise off) on fixed deals."""
        self.net.set_noisy(False)
        try:
            return selfplay_scores(greedy_policy(self.net, self.device), self.config, games, seed)
        finally:
            self.net.set_noisy(self.settings.noisy)


SCALAR_FIELDS = ["iteration", "env_steps", "games", "wall_seconds", "cpu_seconds", "train_score", "eval_score",
                 "loss", "epsilon"]


def _hyper(config: HanabiConfig, settings) -> Dict:
    return {"algo": "rainbow", "config": config.as_dict(),
            **{k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(settings).items()}}


def train_rainbow(config: HanabiConfig, settings: RainbowSettings, out: str, iterations: int, eval_every: int = 10,
                  eval_games: int = 500, checkpoint_every: int = 10, device: Optional[str] = None,
                  fresh: bool = False, progress: bool = True,
                  should_stop: Callable[[], bool] = lambda: False) -> RainbowTrainer:
    """Train until ``iterations`` iterations in total (rerun on ``out`` to resume); see :func:`train_ippo`."""
    from cfrkit.agents.rl.loop import run_iterations

    run = RunDirectory(out, _hyper(config, settings), fresh=fresh)
    trainer = RainbowTrainer(config, settings, device)
    run_iterations(trainer, run, SCALAR_FIELDS, iterations,
                   lambda: {"eval_score": float(trainer.evaluate(eval_games).mean())}, eval_every,
                   checkpoint_every, progress, "rainbow", should_stop, "train_score")
    return trainer
