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
-- a deviation from the paper's per-agent networks (``MADDPGSettings(per_agent=True)`` builds those:
:mod:`.peragent`); a gradient step uses ``batch`` (transition, ego) rows, as many as each of MADDPG's
per-agent networks uses.  Paper hyper-parameters: two-layer ReLU
MLPs of 64 units, lr 0.001, tau 0.005; gamma 0.95, batch 1024, one gradient step per 100 joint
environment steps as MADDPG.

The loop is batched end to end: one iteration steps ``num_envs`` whole episodes together in one
:class:`BatchedSymmToM` (a fresh batch seeded by the run seed and the iteration); each step is one
actor forward pass over every agent of every episode; the episodes go into a replay of preallocated
torch tensors in one block; then ``num_envs * steps / update_every`` gradient steps follow (the
fraction carried to the next iteration).  A checkpoint holds networks, optimisers, replay contents,
the carried fraction and the torch / numpy generator states, so resuming is bit-exact.
"""
from __future__ import annotations

import copy
import time
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch

from cfrkit.agents.rl import LearnerError, default_device
from cfrkit.agents.rl.tensor_replay import TensorReplay
from cfrkit.agents.symmtom.base import SymmToMAgent
from cfrkit.agents.symmtom.knowledge import KnowledgeTracker
from cfrkit.agents.symmtom.learning.flat import FlatAdam, flatten_parameters
from cfrkit.agents.symmtom.learning.knowledge import BatchedKnowledge
from cfrkit.agents.symmtom.learning.networks import Actor, ActorPass, Critic, CriticPass, softmax
from cfrkit.agents.symmtom.learning.settings import VARIANTS, MADDPGSettings, check_setting, episode_seed
from cfrkit.games.symmtom.batched import BatchedSymmToM
from cfrkit.games.symmtom.core import NUM_MOVES, SymmToMConfig

__all__ = ["VARIANTS", "MADDPGSettings", "MADDPGTrainer", "LearnedSymmToMAgent", "gumbel_noise",
           "gumbel_noise_into", "pick_actions", "action_generator"]

_KNOWLEDGE = {"ce": "ce", "ge": "ge", "oracle": "oracle"}
_episode_seed = episode_seed      # the name earlier code used


def gumbel_noise(logits: torch.Tensor) -> torch.Tensor:
    """Standard Gumbel noise shaped like ``logits`` (-log -log U; uniform draws are cheaper than exponentials).
    Computed in place in one buffer (the same values as ``-torch.log(-torch.log(u))``, without three temporaries)."""
    u = torch.rand_like(logits).clamp_(min=1e-10, max=1.0 - 1e-7)
    return u.log_().neg_().log_().neg_()


def gumbel_noise_into(out: torch.Tensor) -> torch.Tensor:
    """:func:`gumbel_noise` written into ``out`` (contiguous): the same uniform draws in the same order, the
    same values as ``out.copy_(gumbel_noise(out))``."""
    return out.uniform_(0.0, 1.0).clamp_(min=1e-10, max=1.0 - 1e-7).log_().neg_().log_().neg_()


def _gumbel_argmax(logits: torch.Tensor) -> torch.Tensor:
    """A sample of the categorical distribution of ``logits`` (M, k) -> (M,) (the Gumbel-max trick)."""
    return (logits + gumbel_noise(logits)).argmax(-1)


def _gumbel_hard(logits: torch.Tensor, eye: torch.Tensor) -> torch.Tensor:
    """Straight-through Gumbel-softmax (temperature 1): a one-hot sample forward, the softmax's gradient
    backward -- ``torch.nn.functional.gumbel_softmax(hard=True)``'s estimator.  ``eye``: the (k, k)
    identity, whose rows are the one-hot vectors (one gather instead of one_hot's zeros, scatter, cast)."""
    soft = softmax(logits + gumbel_noise(logits))
    hard = eye.index_select(0, soft.argmax(-1))
    return hard - soft.detach() + soft


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
        self.hsize = settings.hidden if self.recurrent else 0
        torch.manual_seed(settings.seed)
        self._build_networks()
        self.rng = np.random.default_rng(settings.seed + 1)
        self.replay = TensorReplay(settings.buffer, self._replay_fields(), self.device)
        #: one-hot rows of the move head (5, 5) and the piece head (c, c), float32 identity matrices
        self.eye_moves = torch.eye(NUM_MOVES, device=self.device)
        self.eye_pieces = torch.eye(c, device=self.device)
        # _joint[m c + p] = [one-hot m, one-hot p] (the critic's action)
        self._joint = torch.cat([self.eye_moves.repeat_interleave(c, 0), self.eye_pieces.repeat(NUM_MOVES, 1)], 1)
        self.order = torch.tensor([[k] + [j for j in range(n) if j != k] for k in range(n)], device=self.device)
        self.order_flat = self.order.reshape(-1)   # order flattened: ego k's slot j holds agent order[k, j]
        self.iteration = 0
        self.episodes = 0
        self.env_steps = 0
        self.update_credit = 0.0      # fraction of a gradient step carried to the next iteration
        self.wall_seconds = 0.0
        self.cpu_seconds = 0.0

    def _build_networks(self) -> None:
        s, c = self.settings, self.config.pieces
        self.actor = Actor(self.features, c, s.hidden, self.recurrent).to(self.device)
        self.critic = Critic(self.config.agents, self.features, self.action_size, s.hidden).to(self.device)
        self._finish_networks()

    def _finish_networks(self) -> None:
        """Targets and optimisers.  Each network's parameters are views of one flat vector
        (:mod:`.flat`), so Adam, clipping and the soft target update are single-tensor operations."""
        s = self.settings
        flats = [flatten_parameters(self.actor), flatten_parameters(self.critic)]
        self.actor_target = copy.deepcopy(self.actor)
        self.critic_target = copy.deepcopy(self.critic)
        for net in (self.actor_target, self.critic_target):
            net.requires_grad_(False)
        self.actor_opt = FlatAdam(self.actor, flats[0], s.lr, s.max_grad_norm)
        self.critic_opt = FlatAdam(self.critic, flats[1], s.lr, s.max_grad_norm)
        #: ``[(actor target, actor), (critic target, critic)]``: each network's flat parameter vector (1-D), the
        #: soft update moves the first of a pair towards the second
        self.target_pairs = [(flatten_parameters(self.actor_target), flats[0]),
                             (flatten_parameters(self.critic_target), flats[1])]

    def _replay_fields(self) -> Dict[str, Tuple[tuple, torch.dtype]]:
        n, f32 = self.config.agents, torch.float32
        fields = {"x": ((n, self.features), f32), "x2": ((n, self.features), f32), "m": ((n,), torch.int64),
                  "p": ((n,), torch.int64), "r": ((n,), f32), "done": ((), f32)}
        if self.recurrent:
            fields.update(h=((n, self.hsize), f32), h2=((n, self.hsize), f32))
        return fields

    # ------------------------------------------------------------------ state
    def state_dict(self) -> Dict:
        return {"actor": self.actor.state_dict(), "critic": self.critic.state_dict(),
                "actor_target": self.actor_target.state_dict(), "critic_target": self.critic_target.state_dict(),
                "actor_opt": self.actor_opt.state_dict(), "critic_opt": self.critic_opt.state_dict(),
                "rng": self.rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
                "replay": self.replay.state_dict(), "iteration": self.iteration, "episodes": self.episodes,
                "env_steps": self.env_steps, "update_credit": self.update_credit,
                "wall_seconds": self.wall_seconds, "cpu_seconds": self.cpu_seconds}

    def load_state_dict(self, state: Dict) -> None:
        if "update_credit" not in state or set(state["replay"]["data"]) != set(self.replay.data):
            raise LearnerError("checkpoint written by the earlier per-step MADDPG trainer (numpy replay); "
                               "it cannot resume the batched trainer: start the run afresh")
        for name in ("actor", "critic", "actor_target", "critic_target", "actor_opt", "critic_opt"):
            getattr(self, name).load_state_dict(state[name])
        self.rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        self.replay.load_state_dict(state["replay"])
        for k in ("iteration", "episodes", "env_steps", "update_credit", "wall_seconds", "cpu_seconds"):
            setattr(self, k, state[k])

    # ------------------------------------------------------------------ acting
    def _features(self, env: BatchedSymmToM, knowledge: Optional[BatchedKnowledge]) -> np.ndarray:
        obs = env.observations()
        return np.concatenate([obs, knowledge.features()], -1) if knowledge is not None else obs

    def _policy(self, x: torch.Tensor, h: Optional[torch.Tensor], greedy: bool
                ) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
        """One forward pass for every agent of every episode: x (M, D), h (M, H) or None ->
        moves (M,), pieces (M,), new h (M, H) or None (actor-specific extra output)."""
        lm, lp, h2 = self.actor(x, h)
        if greedy:
            return lm.argmax(-1), lp.argmax(-1), h2
        return (torch.multinomial(softmax(lm), 1).squeeze(1), torch.multinomial(softmax(lp), 1).squeeze(1), h2)

    def _act(self, x: np.ndarray, h: np.ndarray, greedy: bool) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """numpy wrapper of :meth:`_policy`: x (B, n, D), h (B, n, H) -> moves (B, n), pieces (B, n), new h."""
        B, n = x.shape[:2]
        with torch.no_grad():
            xt = torch.as_tensor(x, device=self.device).reshape(B * n, -1)
            ht = torch.as_tensor(h, device=self.device).reshape(B * n, -1) if self.recurrent else None
            m, p, h2 = self._policy(xt, ht, greedy)
        h2 = h2.cpu().numpy().reshape(B, n, -1) if h2 is not None else h
        return m.cpu().numpy().reshape(B, n), p.cpu().numpy().reshape(B, n), h2

    def play(self, num_envs: int, seed: int, greedy: bool, store: bool = False) -> np.ndarray:
        """Play ``num_envs`` episodes together; returns per-agent returns (B, n) in reward points;
        ``store`` adds every transition to the replay (one block, time-major)."""
        cfg, n, B, L = self.config, self.config.agents, num_envs, self.config.episode_length
        env = BatchedSymmToM(cfg, B, seed=seed)
        env.reset()
        knowledge = BatchedKnowledge(env, self.knowledge_mode) if self.knowledge_mode else None
        if knowledge is not None:
            knowledge.reset()
        dev = self.device
        x = torch.from_numpy(self._features(env, knowledge)).to(dev)                  # (B, n, F)
        h = torch.zeros(B * n, self.hsize, device=dev) if self.recurrent else None
        if store:
            X = torch.empty((L + 1, B, n, self.features), device=dev)
            Mv = torch.empty((L, B, n), dtype=torch.int64, device=dev)
            Pc = torch.empty((L, B, n), dtype=torch.int64, device=dev)
            R = torch.empty((L, B, n), device=dev)
            Hs = torch.zeros((L + 1, B, n, self.hsize), device=dev) if self.recurrent else None
            # a replay of soft actions (PerAgentTrainer with soft_actions): the samples _policy leaves in played_soft
            Sa = torch.empty((L, B, n, self.action_size), device=dev) if "a" in self.replay.data else None
            X[0] = x
        with torch.no_grad():
            for t in range(L):
                moves, pieces, h2 = self._policy(x.reshape(B * n, -1), h, greedy)
                moves, pieces = moves.reshape(B, n), pieces.reshape(B, n)
                rewards = env.step(moves.cpu().numpy(), pieces.cpu().numpy())
                if knowledge is not None:
                    knowledge.update(rewards)
                x = torch.from_numpy(self._features(env, knowledge)).to(dev)
                if store:
                    X[t + 1], Mv[t], Pc[t] = x, moves, pieces
                    if Sa is not None:
                        Sa[t] = self.played_soft.reshape(B, n, -1)
                    R[t] = torch.from_numpy(rewards)
                    if Hs is not None:
                        Hs[t + 1] = h2.reshape(B, n, -1)
                h = h2
        if store:
            batch = {"x": X[:-1], "x2": X[1:], "m": Mv, "p": Pc, "r": R}
            if Sa is not None:
                batch["a"] = Sa
            if Hs is not None:
                batch.update(h=Hs[:-1], h2=Hs[1:])
            self._store(batch, B)
        return env.returns.astype(np.float64)

    def _store(self, batch: Dict[str, torch.Tensor], B: int) -> None:
        """Add (L, B, ...) episode tensors to the replay as L B transitions (``done`` at the last step, unless
        ``settings.terminal_done`` is False)."""
        L = self.config.episode_length
        done = torch.zeros((L, B), device=self.device)
        done[-1] = 1.0 if self.settings.terminal_done else 0.0
        batch["done"] = done
        self.replay.add(**{k: v.reshape((L * B,) + tuple(v.shape[2:])) for k, v in batch.items()})

    # ------------------------------------------------------------------ learning
    def ego_rows(self, t: torch.Tensor) -> torch.Tensor:
        """The critic's ego-centric rows: ``t`` (M, n, D), per transition each agent's D values -> (M n, n D),
        row ``m n + k`` holding agent k's values first, then the others' in seat order."""
        M, n, D = t.shape
        return t.index_select(1, self.order_flat).reshape(M * n, n * D)

    def onehot_actions(self, moves: torch.Tensor, pieces: torch.Tensor) -> torch.Tensor:
        """(M, n) move and piece ids -> (M, n, 5 + c) float one-hot actions (the critic's input)."""
        ids = moves * self.config.pieces + pieces
        return self._joint.index_select(0, ids.reshape(-1)).reshape(ids.shape + (self._joint.shape[1],))

    def actor_inputs(self, b: Dict[str, torch.Tensor], nxt: bool) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """The actor's (input (M n, F), hidden state (M n, H) or None) for a replay batch ``b`` of M transitions
        (:meth:`TensorReplay.sample`; ``x``, ``x2`` (M, n, F)) at t, or at t+1 with ``nxt``; agents flattened."""
        x, h = (b["x2"], b.get("h2")) if nxt else (b["x"], b.get("h"))
        M, n = x.shape[:2]
        return x.reshape(M * n, -1), (h.reshape(M * n, -1) if self.recurrent else None)

    def _sample_actions(self, actor, x: torch.Tensor, h: Optional[torch.Tensor]):
        """Straight-through Gumbel-softmax samples of both heads (M, 5 + c), and the logits."""
        lm, lp, _ = actor(x, h)
        return torch.cat([_gumbel_hard(lm, self.eye_moves), _gumbel_hard(lp, self.eye_pieces)], -1), lm, lp

    def _gumbel_pair(self, rows: int) -> Tuple[torch.Tensor, torch.Tensor]:
        """Gumbel noise for the move and piece heads, drawn in that order (as :func:`_gumbel_hard` draws it)."""
        with torch.no_grad():
            return (gumbel_noise(torch.empty(rows, NUM_MOVES, device=self.device)),
                    gumbel_noise(torch.empty(rows, self.config.pieces, device=self.device)))

    def actor_step(self, b: Dict[str, torch.Tensor]):
        """``(new_a, apply)``: the actor's sampled actions (M n, 5 + c) (straight-through Gumbel-softmax) on the
        replay batch ``b`` of M transitions, and ``apply(d_new_a)`` that, given the critic's gradient at them
        (M n, 5 + c), steps the actor and returns the logit regulariser (a scalar tensor).  Draws the Gumbel
        noise from the global torch generator."""
        s = self.settings
        if type(self.actor) is Actor and not self.recurrent:     # feed-forward: by hand (networks.ActorPass)
            xa, _ = self.actor_inputs(b, False)
            ap = ActorPass(self.actor, xa, self._gumbel_pair(xa.shape[0]), self.eye_moves, self.eye_pieces)

            def apply(d_new_a: torch.Tensor) -> torch.Tensor:
                with torch.no_grad():
                    self.actor_opt.step_grad(ap.parameter_grad(d_new_a, s.logit_reg,
                                                               torch.empty_like(self.actor_opt.flat)))
                    return ap.regulariser(s.logit_reg)
            return ap.new_a, apply
        new_a, lm, lp = self._sample_actions(self.actor, *self.actor_inputs(b, False))

        def apply(d_new_a: torch.Tensor) -> torch.Tensor:
            reg = s.logit_reg * (lm.pow(2).mean() + lp.pow(2).mean())
            # d(-mean Q)/d(actor) through the ego's action: the surrogate (new_a . dQ/da) has that gradient
            self.actor_opt.step((new_a * d_new_a).sum() + reg)
            return reg.detach()
        return new_a, apply

    def update(self) -> Dict[str, float]:
        """One gradient step of critic then actor on ``batch`` (transition, ego agent) rows."""
        s, n = self.settings, self.config.agents
        M = max(1, s.batch // n)                                     # transitions; every agent is an ego
        b = self.replay.sample(self.rng, M)
        a = self.onehot_actions(b["m"], b["p"])                       # (M, n, A)
        with torch.no_grad():   # target actions: hard samples only (no straight-through part needed)
            lm2, lp2, _ = self.actor_target(*self.actor_inputs(b, True))
            a2 = self.onehot_actions(_gumbel_argmax(lm2), _gumbel_argmax(lp2))
            q2 = self.critic_target(self.ego_rows(b["x2"]), self.ego_rows(a2.reshape(M, n, -1)))
            y = b["r"].reshape(-1) + s.gamma * (1 - b["done"]).repeat_interleave(n) * q2
        # critic and the critic's part of the actor step by hand (networks.CriticPass): the same
        # gradients as autograd's, without its graph; the actor's own part: actor_step
        xe = self.ego_rows(b["x"])
        cp = CriticPass(self.critic, xe, self.ego_rows(a))
        with torch.no_grad():
            err = cp.q - y
            critic_loss, q_mean = err.pow(2).mean(), cp.q.mean()
            self.critic_opt.step_grad(cp.parameter_grad(err * (2.0 / err.numel()), torch.empty_like(self.critic_opt.flat)))

        new_a, apply = self.actor_step(b)
        A = new_a.shape[1]
        with torch.no_grad():
            ae = a[:, self.order]                                    # (M, n_ego, n, A)
            ae = torch.cat([new_a.detach().reshape(M, n, 1, -1), ae[:, :, 1:]], 2).reshape(M * n, -1)
            cp = CriticPass(self.critic, xe, ae)                     # the critic just stepped, fixed here
            q_new = cp.q
            d_new_a = cp.action_grad(torch.full_like(q_new, -1.0 / q_new.numel()), slice(0, A))
        reg = apply(d_new_a)
        actor_loss = -q_new.mean() + reg.detach()
        with torch.no_grad():
            for target, online in self.target_pairs:
                target.lerp_(online, s.tau)                          # target += tau (online - target)
        return {"critic_loss": float(critic_loss), "actor_loss": float(actor_loss), "q": float(q_mean)}

    def updates_due(self, num_envs: int) -> int:
        """Gradient steps owed after ``num_envs`` more episodes (0 before the warm-up is reached)."""
        s = self.settings
        if len(self.replay) < min(s.warmup, s.buffer):
            return 0
        if s.updates:
            return s.updates
        self.update_credit += num_envs * self.config.episode_length / s.update_every
        k = int(self.update_credit)
        self.update_credit -= k
        return k

    def iterate(self) -> Dict[str, float]:
        """One iteration: ``num_envs`` exploring episodes into the replay, then the gradient steps due."""
        s = self.settings
        wall0, cpu0 = time.perf_counter(), time.process_time()
        returns = self.play(s.num_envs, episode_seed(s.seed, self.iteration), greedy=False, store=True)
        stats = {"critic_loss": 0.0, "actor_loss": 0.0, "q": 0.0}
        done = self.updates_due(s.num_envs)
        for _ in range(done):
            for k, v in self.update().items():
                stats[k] += v
        stats = {k: v / max(done, 1) for k, v in stats.items()}
        self.iteration += 1
        self.episodes += s.num_envs
        self.env_steps += s.num_envs * self.config.episode_length
        self.wall_seconds += time.perf_counter() - wall0
        self.cpu_seconds += time.process_time() - cpu0
        stats.update(train_reward=float(returns.mean()), episodes=self.episodes, env_steps=self.env_steps,
                     updates=done)
        return stats

    def evaluate(self, episodes: int = 1000, seed: int = 0, greedy: bool = True) -> np.ndarray:
        """Self-play: per-episode mean reward per agent (Table 1's unit, reward points), shape (episodes,).

        ``greedy`` plays each head's most likely action; ``greedy=False`` samples the actions from the
        actor's distributions, as the paper's MADDPG code acts (its Gumbel-softmax sample, argmaxed by the
        environment, is a sample of the categorical).  The episodes' starts depend on ``seed`` only; the
        sampled actions come from a torch generator seeded by ``seed`` as well, forked so that the
        caller's global torch random state is left as it was (a training run's stream is unchanged)."""
        out: List[np.ndarray] = []
        done, index = 0, 0
        cuda = str(self.device).startswith("cuda")
        with torch.random.fork_rng(devices=None if cuda else []):   # forks (and restores) the GPU's state on a GPU
            if not greedy:
                torch.manual_seed(20_000_003 + int(seed))
            while done < episodes:
                m = min(500, episodes - done)
                out.append(self.play(m, episode_seed(10_000_019 + seed, index), greedy=greedy).mean(1))
                done, index = done + m, index + 1
        return np.concatenate(out)

    def make_agent(self, sample: bool = False, seed: Optional[int] = None) -> "LearnedSymmToMAgent":
        """A single-episode agent (for :func:`play_episode` and the theory-of-mind tests): greedy, or with
        ``sample`` drawing its actions from the actor's distributions (its own generator, seeded ``seed``)."""
        return LearnedSymmToMAgent(self.actor, self.config, self.knowledge_mode, self.recurrent, self.device,
                                   sample, seed)


def pick_actions(lm: torch.Tensor, lp: torch.Tensor, generator: Optional[torch.Generator]) -> Tuple[int, int]:
    """(move, piece) from one row of move and piece logits: each head's argmax when ``generator`` is
    None, else a sample of each head's categorical distribution drawn with ``generator``."""
    if generator is None:
        return int(lm.argmax()), int(lp.argmax())
    return (int(torch.multinomial(softmax(lm.reshape(1, -1)), 1, generator=generator)),
            int(torch.multinomial(softmax(lp.reshape(1, -1)), 1, generator=generator)))


def action_generator(sample: bool, seed: Optional[int]) -> Optional[torch.Generator]:
    """None for a greedy agent; else a CPU torch generator seeded ``seed`` (from the OS when None)."""
    if not sample:
        return None
    gen = torch.Generator()
    if seed is None:
        gen.seed()
    else:
        gen.manual_seed(int(seed))
    return gen


class LearnedSymmToMAgent(SymmToMAgent):
    """The trained actor as a :class:`SymmToMAgent`, with its own K tracker or GRU state: greedy, or
    with ``sample`` drawing each head's action from the actor's distribution (a generator seeded
    ``seed``), as the paper's MADDPG code acts.

    CE/GE use :class:`~cfrkit.agents.symmtom.knowledge.KnowledgeTracker` (the same K as in training);
    the environment's configuration must have the trained numbers of agents and pieces.
    """

    needs_observation = True

    def __init__(self, actor: Actor, config: SymmToMConfig, knowledge_mode: Optional[str], recurrent: bool,
                 device: str = "cpu", sample: bool = False, seed: Optional[int] = None):
        self.actor, self.config, self.mode, self.recurrent, self.device = actor, config, knowledge_mode, recurrent, device
        self.generator = action_generator(sample, seed)
        self.name = {None: "rmaddpg" if recurrent else "maddpg"}.get(knowledge_mode, f"maddpg-{knowledge_mode}")
        self.tracker = None
        self.h = None

    def reset(self, view) -> None:
        cfg = view.config
        check_setting(self.config, cfg)
        self.h = None
        if self.mode:
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
        return pick_actions(lm, lp, self.generator)


def _strip_oracle(obs: np.ndarray, cfg: SymmToMConfig) -> np.ndarray:
    """The paper's observation from an oracle environment's (drop own knowledge first, others' before block 4)."""
    n, c = cfg.agents, cfg.pieces
    k = c + c + 2 * n + 2 * (n - 1)        # own knowledge, first hand, moves, positions
    return np.concatenate([obs[c:k], obs[k + (n - 1) * c:]])


