"""MADDPG (Lowe et al. 2017) for SymmToM with the paper's variants, on :class:`BatchedSymmToM`.

Variants (``MADDPGSettings.variant``):

* ``maddpg`` -- actor on the observation only (no memory).
* ``rmaddpg`` -- recurrent actor (GRU cell; Wang et al. 2020).  The hidden state is stored with each
  transition and the actor is trained one step back from it (truncated back-propagation of length 1).
* ``ce`` / ``ge`` -- the observation followed by the knowledge matrix K of the conservative / greedy
  encounter model (Sclar et al. Sec. 6; :mod:`.knowledge`, identical to the single-episode tracker).
* ``ee`` -- MADDPG-EstimatedEncounter: a probabilistic K whose unwitnessed speech is estimated by a
  learned MLP inside the actor (:mod:`.estimated`, :class:`~.estimated.EETrainer`).
* ``oracle`` -- the observation followed by the true knowledge of every agent (MADDPG-Oracle).

Training (centralised critic, decentralised actors): discrete actions (movement, speech) as two
categorical heads; exploration samples them; actor gradients go through straight-through
Gumbel-softmax samples into the critic Q_i(all features, all actions).  As the agents are symmetric
and observations egocentric, one actor and one critic (inputs ordered ego-first) serve every agent
-- a deviation from the paper's per-agent networks that uses n times more data per network.
Paper hyper-parameters: two-layer ReLU MLPs of 64 units, lr 0.001, tau 0.005; gamma 0.95 and
batch 1024 as MADDPG.

One iteration plays ``num_envs`` whole episodes in lock-step (a fresh batch seeded by the run seed
and the iteration), adds them to the replay buffer and runs ``updates`` gradient steps; a checkpoint
holds networks, optimisers, replay contents and the torch / numpy generator states, so resuming is
bit-exact.
"""
from __future__ import annotations

import copy
import time
from dataclasses import asdict, dataclass
from typing import Callable, Dict, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F

from cfrkit.agents.rl import LearnerError, RunDirectory, default_device
from cfrkit.agents.rl.replay import ReplayBuffer
from cfrkit.agents.symmtom.base import SymmToMAgent
from cfrkit.agents.symmtom.learning.knowledge import BatchedKnowledge
from cfrkit.agents.symmtom.learning.networks import Actor, Critic
from cfrkit.games.symmtom.batched import BatchedSymmToM
from cfrkit.games.symmtom.core import NUM_MOVES, SymmToMConfig

VARIANTS = ("maddpg", "rmaddpg", "ce", "ge", "ee", "oracle")
_KNOWLEDGE = {"ce": "ce", "ge": "ge", "oracle": "oracle"}


@dataclass(frozen=True)
class MADDPGSettings:
    variant: str = "maddpg"
    num_envs: int = 32            # episodes per iteration
    hidden: int = 64
    lr: float = 1e-3
    tau: float = 0.005
    gamma: float = 0.95
    batch: int = 1024
    updates: int = 10             # gradient steps per iteration
    buffer: int = 20_000          # joint steps kept
    warmup: int = 2_000           # joint steps before the first update
    logit_reg: float = 1e-3       # MADDPG's penalty on the actor's logits
    max_grad_norm: float = 0.5
    seed: int = 0

    def validate(self) -> None:
        if self.variant not in VARIANTS:
            raise LearnerError(f"variant must be one of {', '.join(VARIANTS)}, got {self.variant!r}")
        for name in ("num_envs", "hidden", "batch", "updates", "buffer"):
            if int(getattr(self, name)) < 1:
                raise LearnerError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0 < self.tau <= 1 or not 0 <= self.gamma <= 1 or self.lr <= 0:
            raise LearnerError("need 0 < tau <= 1, 0 <= gamma <= 1, lr > 0")


def _episode_seed(seed: int, index: int) -> int:
    return int((int(seed) * 1_000_003 + int(index) * 7_919 + 1) % (2 ** 63))


class MADDPGTrainer:
    """One shared actor and critic for all agents of ``config`` (see the module docstring)."""

    def __init__(self, config: SymmToMConfig, settings: MADDPGSettings = MADDPGSettings(), device: Optional[str] = None):
        settings.validate()
        if config.oracle or config.hide_first_hand:
            raise LearnerError("train on the paper's observation (oracle=False, hide_first_hand=False); "
                               "use variant 'oracle' for the true knowledge")
        self.config, self.settings = config, settings
        self.device = default_device(device)
        n, c = config.agents, config.pieces
        self.knowledge_mode = _KNOWLEDGE.get(settings.variant)
        self.recurrent = settings.variant == "rmaddpg"
        self.features = config.observation_size + (n * c if self.knowledge_mode else 0)
        self.action_size = NUM_MOVES + c
        self.hsize = settings.hidden if self.recurrent else 1
        torch.manual_seed(settings.seed)
        self.actor = Actor(self.features, c, settings.hidden, self.recurrent).to(self.device)
        self.critic = Critic(n, self.features, self.action_size, settings.hidden).to(self.device)
        self.actor_target = copy.deepcopy(self.actor)
        self.critic_target = copy.deepcopy(self.critic)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=settings.lr)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=settings.lr)
        self.rng = np.random.default_rng(settings.seed + 1)
        self.replay = ReplayBuffer(settings.buffer, {
            "x": ((n, self.features), np.float32), "h": ((n, self.hsize), np.float32),
            "a": ((n, self.action_size), np.float32), "r": ((n,), np.float32),
            "x2": ((n, self.features), np.float32), "h2": ((n, self.hsize), np.float32), "done": ((), np.float32)})
        self.order = torch.tensor([[k] + [j for j in range(n) if j != k] for k in range(n)])
        self.iteration = 0
        self.episodes = 0
        self.env_steps = 0
        self.wall_seconds = 0.0
        self.cpu_seconds = 0.0

    # ------------------------------------------------------------------ state
    def state_dict(self) -> Dict:
        return {"actor": self.actor.state_dict(), "critic": self.critic.state_dict(),
                "actor_target": self.actor_target.state_dict(), "critic_target": self.critic_target.state_dict(),
                "actor_opt": self.actor_opt.state_dict(), "critic_opt": self.critic_opt.state_dict(),
                "rng": self.rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
                "replay": self.replay.state_dict(), "iteration": self.iteration, "episodes": self.episodes,
                "env_steps": self.env_steps, "wall_seconds": self.wall_seconds, "cpu_seconds": self.cpu_seconds}

    def load_state_dict(self, state: Dict) -> None:
        for name in ("actor", "critic", "actor_target", "critic_target", "actor_opt", "critic_opt"):
            getattr(self, name).load_state_dict(state[name])
        self.rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        self.replay.load_state_dict(state["replay"])
        for k in ("iteration", "episodes", "env_steps", "wall_seconds", "cpu_seconds"):
            setattr(self, k, state[k])

    # ------------------------------------------------------------------ acting
    def _features(self, env: BatchedSymmToM, knowledge: Optional[BatchedKnowledge]) -> np.ndarray:
        obs = env.observations()
        return np.concatenate([obs, knowledge.features()], -1) if knowledge is not None else obs

    def _act(self, x: np.ndarray, h: np.ndarray, greedy: bool) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """x (B, n, F), h (B, n, H) -> moves (B, n), pieces (B, n), new h."""
        B, n = x.shape[:2]
        with torch.no_grad():
            xt = torch.as_tensor(x, device=self.device).reshape(B * n, -1)
            ht = torch.as_tensor(h, device=self.device).reshape(B * n, -1) if self.recurrent else None
            lm, lp, h2 = self.actor(xt, ht)
            if greedy:
                m, p = lm.argmax(-1), lp.argmax(-1)
            else:
                m = torch.multinomial(torch.softmax(lm, -1).cpu(), 1).squeeze(1)
                p = torch.multinomial(torch.softmax(lp, -1).cpu(), 1).squeeze(1)
        h2 = h2.cpu().numpy().reshape(B, n, -1) if self.recurrent else h
        return m.cpu().numpy().reshape(B, n), p.cpu().numpy().reshape(B, n), h2

    def play(self, num_envs: int, seed: int, greedy: bool, store: bool = False) -> np.ndarray:
        """Play ``num_envs`` episodes; returns per-agent returns (B, n); ``store`` adds them to the replay."""
        cfg, n = self.config, self.config.agents
        env = BatchedSymmToM(cfg, num_envs, seed=seed)
        env.reset()
        knowledge = BatchedKnowledge(env, self.knowledge_mode) if self.knowledge_mode else None
        if knowledge is not None:
            knowledge.reset()
        x = self._features(env, knowledge)
        h = np.zeros((num_envs, n, self.hsize), dtype=np.float32)
        L = cfg.episode_length
        for t in range(L):
            moves, pieces, h2 = self._act(x, h, greedy)
            rewards = env.step(moves, pieces)
            if knowledge is not None:
                knowledge.update(rewards)
            x2 = self._features(env, knowledge)
            if store:
                a = np.zeros((num_envs, n, self.action_size), dtype=np.float32)
                np.put_along_axis(a, moves[..., None], 1.0, -1)
                np.put_along_axis(a, NUM_MOVES + pieces[..., None], 1.0, -1)
                self.replay.add(x=x, h=h, a=a, r=rewards.astype(np.float32), x2=x2, h2=h2,
                                done=np.full(num_envs, float(t == L - 1), dtype=np.float32))
            x, h = x2, h2
        return env.returns.astype(np.float64)

    # ------------------------------------------------------------------ learning
    def _ego(self, t: torch.Tensor) -> torch.Tensor:
        """(M, n, D) -> (M n, n D): for every agent k, k first then the others."""
        M, n, D = t.shape
        return t[:, self.order].reshape(M * n, n * D)

    def _sample_actions(self, actor: Actor, x: torch.Tensor, h: Optional[torch.Tensor]):
        lm, lp, _ = actor(x, h)
        return torch.cat([F.gumbel_softmax(lm, hard=True), F.gumbel_softmax(lp, hard=True)], -1), lm, lp

    def _actor_inputs(self, b: Dict[str, torch.Tensor], nxt: bool) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """The actor's (input, hidden state) for a replay batch at t (or t+1 with ``nxt``), agents flattened."""
        x, h = (b["x2"], b["h2"]) if nxt else (b["x"], b["h"])
        M, n = x.shape[:2]
        return x.reshape(M * n, -1), (h.reshape(M * n, -1) if self.recurrent else None)

    def update(self) -> Dict[str, float]:
        s, n = self.settings, self.config.agents
        b = {k: torch.as_tensor(v, device=self.device) for k, v in self.replay.sample(self.rng, s.batch).items()}
        M = s.batch
        with torch.no_grad():
            a2, _, _ = self._sample_actions(self.actor_target, *self._actor_inputs(b, True))
            q2 = self.critic_target(self._ego(b["x2"]), self._ego(a2.reshape(M, n, -1)))
            y = b["r"].reshape(-1) + s.gamma * (1 - b["done"]).repeat_interleave(n) * q2
        xe = self._ego(b["x"])
        q = self.critic(xe, self._ego(b["a"]))
        critic_loss = F.mse_loss(q, y)
        self.critic_opt.zero_grad()
        critic_loss.backward()
        torch.nn.utils.clip_grad_norm_(self.critic.parameters(), s.max_grad_norm)
        self.critic_opt.step()

        new_a, lm, lp = self._sample_actions(self.actor, *self._actor_inputs(b, False))
        ae = b["a"][:, self.order]                                   # (M, n_ego, n, A)
        ae = torch.cat([new_a.reshape(M, n, 1, -1), ae[:, :, 1:]], 2).reshape(M * n, -1)
        actor_loss = -self.critic(xe, ae).mean() + s.logit_reg * (lm.pow(2).mean() + lp.pow(2).mean())
        self.actor_opt.zero_grad()
        actor_loss.backward()
        torch.nn.utils.clip_grad_norm_(self.actor.parameters(), s.max_grad_norm)
        self.actor_opt.step()
        with torch.no_grad():
            for net, target in ((self.actor, self.actor_target), (self.critic, self.critic_target)):
                for p, tp in zip(net.parameters(), target.parameters()):
                    tp.mul_(1 - s.tau).add_(s.tau * p)
        return {"critic_loss": float(critic_loss.detach()), "actor_loss": float(actor_loss.detach()),
                "q": float(q.detach().mean())}

    def iterate(self) -> Dict[str, float]:
        """One iteration: ``num_envs`` exploring episodes into the replay, then ``updates`` steps."""
        s = self.settings
        wall0, cpu0 = time.perf_counter(), time.process_time()
        returns = self.play(s.num_envs, _episode_seed(s.seed, self.iteration), greedy=False, store=True)
        stats = {"critic_loss": 0.0, "actor_loss": 0.0, "q": 0.0}
        done = 0
        if len(self.replay) >= min(s.warmup, s.buffer):
            for _ in range(s.updates):
                for k, v in self.update().items():
                    stats[k] += v
                done += 1
        stats = {k: v / max(done, 1) for k, v in stats.items()}
        self.iteration += 1
        self.episodes += s.num_envs
        self.env_steps += s.num_envs * self.config.episode_length
        self.wall_seconds += time.perf_counter() - wall0
        self.cpu_seconds += time.process_time() - cpu0
        stats.update(train_reward=float(returns.mean()), episodes=self.episodes, env_steps=self.env_steps)
        return stats

    def evaluate(self, episodes: int = 1000, seed: int = 0) -> np.ndarray:
        """Greedy self-play: per-episode mean reward per agent (Table 1's unit), shape (episodes,)."""
        out, done, index = [], 0, 0
        while done < episodes:
            m = min(500, episodes - done)
            out.append(self.play(m, _episode_seed(10_000_019 + seed, index), greedy=True).mean(1))
            done, index = done + m, index + 1
        return np.concatenate(out)

    def make_agent(self) -> "LearnedSymmToMAgent":
        """A single-episode agent (for :func:`play_episode` and the theory-of-mind tests)."""
        return LearnedSymmToMAgent(self.actor, self.config, self.knowledge_mode, self.recurrent, self.device)


class LearnedSymmToMAgent(SymmToMAgent):
    """The trained actor as a :class:`SymmToMAgent` (greedy), with its own K tracker or GRU state.

    CE/GE use :class:`~cfrkit.agents.symmtom.belief.KnowledgeTracker` (the same K as in training);
    the environment's configuration must have the trained numbers of agents and pieces.
    """

    needs_observation = True

    def __init__(self, actor: Actor, config: SymmToMConfig, knowledge_mode: Optional[str], recurrent: bool,
                 device: str = "cpu"):
        self.actor, self.config, self.mode, self.recurrent, self.device = actor, config, knowledge_mode, recurrent, device
        self.name = {None: "rmaddpg" if recurrent else "maddpg"}.get(knowledge_mode, f"maddpg-{knowledge_mode}")
        self.tracker = None
        self.h = None

    def reset(self, view) -> None:
        cfg = view.config
        if (cfg.agents, cfg.pieces) != (self.config.agents, self.config.pieces):
            raise LearnerError(f"agent trained with n={self.config.agents}, c={self.config.pieces}; "
                               f"environment has n={cfg.agents}, c={cfg.pieces}")
        self.h = None
        if self.mode:
            from cfrkit.agents.symmtom.belief import KnowledgeTracker

            self.tracker = KnowledgeTracker(view, self.mode)

    def act(self, view) -> Tuple[int, int]:
        obs = view.observation
        if self.mode == "oracle":   # an oracle environment: its observation carries the knowledge blocks
            obs = _strip_oracle(obs, self.config)
        if self.tracker is not None:
            if view.t > 0:
                self.tracker.update(view)
            obs = np.concatenate([obs, self.tracker.matrix().astype(np.float32).reshape(-1)])
        with torch.no_grad():
            lm, lp, self.h = self.actor(torch.as_tensor(obs, dtype=torch.float32, device=self.device)[None], self.h)
        return int(lm.argmax()), int(lp.argmax())


def _strip_oracle(obs: np.ndarray, cfg: SymmToMConfig) -> np.ndarray:
    """The paper's observation from an oracle environment's (drop own knowledge first, others' before block 4)."""
    n, c = cfg.agents, cfg.pieces
    k = c + c + 2 * n + 2 * (n - 1)        # own knowledge, first hand, moves, positions
    return np.concatenate([obs[c:k], obs[k + (n - 1) * c:]])


SCALAR_FIELDS = ["iteration", "env_steps", "episodes", "wall_seconds", "cpu_seconds", "train_reward", "eval_reward",
                 "critic_loss", "actor_loss", "q"]


def make_trainer(config: SymmToMConfig, settings: MADDPGSettings = MADDPGSettings(),
                 device: Optional[str] = None) -> MADDPGTrainer:
    """The trainer of ``settings.variant``: :class:`~.estimated.EETrainer` for ``ee``, else :class:`MADDPGTrainer`."""
    if settings.variant == "ee":
        from cfrkit.agents.symmtom.learning.estimated import EETrainer

        return EETrainer(config, settings, device)
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
    from cfrkit.agents.rl.loop import run_iterations

    run = RunDirectory(out, hyper, fresh=fresh)
    trainer = make_trainer(config, settings, device)
    run_iterations(trainer, run, SCALAR_FIELDS, iterations,
                   lambda: {"eval_reward": float(trainer.evaluate(eval_episodes).mean())}, eval_every,
                   checkpoint_every, progress, settings.variant, should_stop, "train_reward")
    return trainer


def load_maddpg(path: str, device: Optional[str] = None) -> MADDPGTrainer:
    """The trainer saved in a MADDPG-family checkpoint."""
    from cfrkit.agents.rl import load_checkpoint

    payload = load_checkpoint(path)
    hyper = payload.get("hyper", {})
    if hyper.get("algo") != "maddpg":
        raise LearnerError(f"{path} is not a MADDPG checkpoint (algo {hyper.get('algo')!r})")
    settings = MADDPGSettings(**{k: v for k, v in hyper.items() if k in MADDPGSettings.__dataclass_fields__})
    trainer = make_trainer(SymmToMConfig(**hyper["config"]), settings, device)
    trainer.load_state_dict(payload["trainer"])
    return trainer
