"""MADDPG with one actor and one critic per agent (MADDPG's and the SymmToM paper's choice), batched over agents.

:class:`~.maddpg.MADDPGTrainer` shares one actor and one critic among the n agents (the agents are
symmetric, observations egocentric, the critic's inputs ego-first).  MADDPG's code (Lowe et al. 2017,
``maddpg/trainer/maddpg.py``; the SymmToM authors "directly modified the original MADDPG code") builds
one ``MADDPGAgentTrainer`` per agent, each with its own actor, critic, targets and Adam, and each
drawing its own replay indices (``make_index``) of ``batch`` transitions per update.
:class:`PerAgentTrainer` (``MADDPGSettings(per_agent=True)``) does that, still batched:

* every network's parameters are one (n, P) tensor, row k = agent k's parameters in the layout of
  the shared network (:class:`~.networks.Actor` / :class:`~.networks.Critic` parameter order), and a
  forward pass over all agents is one batched product per layer (:class:`~.stacked.ActorStack`,
  :class:`~.stacked.CriticStack`, the code that stacks seeds, with agents on the leading axis);
* a gradient step gives agent k's critic and actor ``batch`` transitions of their own (independent
  index draws per agent, as MADDPG's per-agent ``make_index``), agent k's critic sees the features
  and actions ego-first (a fixed permutation of MADDPG's concatenation, which an MLP's first layer
  absorbs), and clips agent k's gradient by its own norm (MADDPG's per-agent ``clip_by_norm``);
  Adam is elementwise, so one Adam over the (n, P) tensor is n Adams with the same step count;
* acting, the replay, the evaluation and checkpoints are :class:`MADDPGTrainer`'s;
* with ``soft_actions``, MADDPG's soft Gumbel-softmax samples wherever the critic meets an action:
  exploring actions are the argmax of a soft sample ``softmax(logits + Gumbel)`` (a sample of the
  categorical, as ``multinomial``), and the replay keeps the soft sample (``a``, (n, 5 + c)), as MADDPG's
  ``action_n`` (``SoftMultiCategoricalPd.sample()``) is stored; target actions and the actor's own action
  in its step are soft samples too (MADDPG's ``target_act`` and ``act_pd.sample()``), the actor's gradient
  the softmax's (which the straight-through estimator also uses: only the point where the critic is
  evaluated changes).

Feed-forward variants only (``maddpg``, ``ce``, ``ge``, ``oracle``): the recurrent and EE actors keep
autograd steps of their own and are refused.  A step costs about n times the shared trainer's
(n networks of ``batch`` rows each, against one network of ``batch`` rows).
"""
from __future__ import annotations

import copy
from typing import Dict, Optional, Tuple

import torch
from torch import nn

from cfrkit.agents.rl import LearnerError
from cfrkit.agents.symmtom.learning.maddpg import LearnedSymmToMAgent, MADDPGTrainer, gumbel_noise, gumbel_noise_into
from cfrkit.agents.symmtom.learning.networks import Actor, Critic, softmax
from cfrkit.agents.symmtom.learning.stacked import (ActorStack, CriticStack, batched_linear, parameter_shapes,
                                                    stacked_views)
from cfrkit.games.symmtom.core import NUM_MOVES

__all__ = ["PerAgentTrainer", "AgentActors", "AgentCritics", "RowAdam", "PerAgentLearnedAgent"]


def _stack_of(modules) -> torch.Tensor:
    """(n, P): row k = the k-th module's parameters flattened in ``parameters()`` order."""
    return torch.stack([torch.cat([p.detach().reshape(-1) for p in m.parameters()]) for m in modules])


class AgentActors(nn.Module):
    """n feed-forward :class:`~.networks.Actor` s, one per agent, as one parameter ``flat`` (n, P).

    ``forward(x (B n, F), h=None) -> (move logits (B n, 5), piece logits (B n, c), None)``: rows in
    (episode, agent) order, as :class:`MADDPGTrainer` feeds its shared actor; row ``b n + k`` goes
    through agent k's network.  Each agent's initial weights are an :class:`Actor`'s default
    initialisation, drawn agent after agent."""

    def __init__(self, agents: int, features: int, pieces: int, hidden: int = 64):
        super().__init__()
        nets = [Actor(features, pieces, hidden) for _ in range(agents)]
        self.agents, self.features, self.pieces, self.hidden = agents, features, pieces, hidden
        self.shapes = parameter_shapes(nets[0])
        self.flat = nn.Parameter(_stack_of(nets))

    def logits(self, x: torch.Tensor, flat: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
        """Agent-major pass: x (n, B, F), agent k's rows through agent k's network (``flat``: another (n, P)
        stack of the same layout, e.g. the target's) -> move (n, B, 5) and piece (n, B, c) logits."""
        w1, b1, wc, bc, wm, bm, wp, bp = stacked_views(self.flat if flat is None else flat, self.shapes)
        h = batched_linear(batched_linear(x, w1, b1).relu_(), wc, bc).relu_()
        return batched_linear(h, wm, bm), batched_linear(h, wp, bp)

    def forward(self, x: torch.Tensor, h: Optional[torch.Tensor] = None):
        n = self.agents
        if x.dim() != 2 or x.shape[0] % n:
            raise ValueError(f"AgentActors: expected (B * {n}, F) rows in (episode, agent) order, got {tuple(x.shape)}")
        B = x.shape[0] // n
        lm, lp = self.logits(x.reshape(B, n, -1).transpose(0, 1))
        return lm.transpose(0, 1).reshape(B * n, -1), lp.transpose(0, 1).reshape(B * n, -1), None

    def seat(self, k: int) -> Actor:
        """Agent k's network as a stand-alone :class:`Actor` (a copy of its weights)."""
        if not 0 <= k < self.agents:
            raise ValueError(f"seat {k} outside 0..{self.agents - 1}")
        with torch.random.fork_rng(devices=[]):      # the initialisation it overwrites draws nothing from the caller
            net = Actor(self.features, self.pieces, self.hidden).to(self.flat.device)
        with torch.no_grad():
            for p, v in zip(net.parameters(), stacked_views(self.flat.detach()[k:k + 1], self.shapes)):
                p.copy_(v[0])
        return net


class AgentCritics(nn.Module):
    """n :class:`~.networks.Critic` s, one per agent, as one parameter ``flat`` (n, P); critic k's inputs
    are ego-first with agent k as the ego.  ``forward(x (n, B, n F), a (n, B, n A)) -> q (n, B)``."""

    def __init__(self, agents: int, features: int, action_size: int, hidden: int = 64):
        super().__init__()
        nets = [Critic(agents, features, action_size, hidden) for _ in range(agents)]
        self.shapes = parameter_shapes(nets[0])
        self.flat = nn.Parameter(_stack_of(nets))

    def forward(self, x: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return CriticStack(self.shapes, self.flat.detach(), x, a).q


class RowAdam:
    """Adam (``lr``, torch's default betas and eps) on an (n, P) parameter, each row's gradient clipped by
    its own L2 norm (``clip_grad_norm_``'s rule per agent): n independent Adams in one call."""

    def __init__(self, flat: nn.Parameter, lr: float, max_grad_norm: float):
        self.flat = flat
        self.max_grad_norm = float(max_grad_norm)
        fused = flat.device.type in ("cpu", "cuda")
        self.opt = torch.optim.Adam([flat], lr=lr, fused=fused, foreach=None if fused else False)
        self.last_grad = None

    def step_grad(self, g: torch.Tensor) -> None:
        """Clip each row of ``g`` (n, P; modified in place) by its L2 norm, then one Adam step."""
        coef = (self.max_grad_norm / (torch.linalg.vector_norm(g, dim=1, keepdim=True) + 1e-6)).clamp_(max=1.0)
        self.flat.grad = g.mul_(coef)
        self.opt.step()
        self.flat.grad = None
        self.last_grad = g

    def state_dict(self) -> Dict:
        return self.opt.state_dict()

    def load_state_dict(self, sd: Dict) -> None:
        self.opt.load_state_dict(sd)


class PerAgentTrainer(MADDPGTrainer):
    """:class:`MADDPGTrainer` with one actor, critic, target pair and Adam per agent (see the module docstring).

    ``settings.batch`` is the number of transitions each agent's networks see per gradient step (MADDPG's
    per-agent batch); the shared trainer's ``batch`` counts (transition, ego) rows of its one network, so
    both give every network ``batch`` rows per step."""

    def _build_networks(self) -> None:
        if self.recurrent or self.settings.variant == "ee":
            raise LearnerError("per_agent: feed-forward variants only (maddpg, ce, ge, oracle), "
                               f"not {self.settings.variant!r}")
        s, n, c = self.settings, self.config.agents, self.config.pieces
        self.actor = AgentActors(n, self.features, c, s.hidden).to(self.device)
        self.critic = AgentCritics(n, self.features, self.action_size, s.hidden).to(self.device)
        self._finish_networks()

    def _finish_networks(self) -> None:
        s = self.settings
        self.actor_target = copy.deepcopy(self.actor)
        self.critic_target = copy.deepcopy(self.critic)
        for net in (self.actor_target, self.critic_target):
            net.requires_grad_(False)
        self.actor_opt = RowAdam(self.actor.flat, s.lr, s.max_grad_norm)
        self.critic_opt = RowAdam(self.critic.flat, s.lr, s.max_grad_norm)
        self.target_pairs = [(self.actor_target.flat.data, self.actor.flat.data),
                             (self.critic_target.flat.data, self.critic.flat.data)]

    def _replay_fields(self):
        fields = super()._replay_fields()
        if self.settings.soft_actions:
            fields["a"] = ((self.config.agents, self.action_size), torch.float32)
        return fields

    def _policy(self, x: torch.Tensor, h: Optional[torch.Tensor], greedy: bool):
        """:meth:`MADDPGTrainer._policy`; with ``soft_actions`` an exploring action is the argmax of a soft
        Gumbel-softmax sample, which is left in ``played_soft`` (M, 5 + c) for the replay."""
        if greedy or not self.settings.soft_actions:
            return super()._policy(x, h, greedy)
        lm, lp, _ = self.actor(x, h)
        sm, sp = (softmax(l + gumbel_noise(l)) for l in (lm, lp))
        self.played_soft = torch.cat([sm, sp], -1)
        return sm.argmax(-1), sp.argmax(-1), None

    def sample_indices(self) -> torch.Tensor:
        """(n, batch) replay rows: agent k's own draw of ``batch`` transitions (numpy generator ``rng``)."""
        n, M = self.config.agents, self.settings.batch
        if len(self.replay) == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        return torch.from_numpy(self.rng.integers(0, len(self.replay), size=(n, M))).to(self.device)

    def agent_batch(self, idx: torch.Tensor) -> Dict[str, torch.Tensor]:
        """Each agent's rows of its sample ``idx`` (n, M): ``x``, ``x2`` (n, M, n F) ego-first (agent k first in
        row block k), ``m``, ``p`` (n, M, n) ego-first, ``r``, ``done`` (n, M) (agent k's reward), and ``x2_all``
        (n, M, n, F), the next features in seat order (the target actors' inputs)."""
        n, F = self.config.agents, self.features
        M = idx.shape[1]
        d = self.replay.data
        ego = (idx[:, :, None] * n + self.order[:, None, :]).reshape(-1)           # (n M n) rows of data.view(-1, .)
        seat = (idx * n + torch.arange(n, device=idx.device)[:, None]).reshape(-1)  # agent k's own entry
        flat = idx.reshape(-1)
        return {"x": d["x"].view(-1, F).index_select(0, ego).view(n, M, n * F),
                "x2": d["x2"].view(-1, F).index_select(0, ego).view(n, M, n * F),
                "m": d["m"].view(-1).index_select(0, ego).view(n, M, n),
                "p": d["p"].view(-1).index_select(0, ego).view(n, M, n),
                "r": d["r"].view(-1).index_select(0, seat).view(n, M),
                "done": d["done"].index_select(0, flat).view(n, M),
                "x2_all": d["x2"].index_select(0, flat).view(n, M, n, F),
                **({"a": d["a"].view(-1, self.action_size).index_select(0, ego).view(n, M, n, self.action_size)}
                   if "a" in d else {})}

    def update(self) -> Dict[str, float]:
        """One gradient step of every agent's critic then actor, each on its own ``batch`` transitions;
        returns the means over agents of the critic loss, actor loss and Q."""
        s, n, c = self.settings, self.config.agents, self.config.pieces
        b = self.agent_batch(self.sample_indices())
        M, A, F = b["r"].shape[1], self.action_size, self.features
        with torch.no_grad():
            # Gumbel noise, drawn in a fixed order: the target actors' heads (actor j, all critics' rows), then
            # the actors' heads (agent k's rows)
            nz = [gumbel_noise_into(torch.empty(n, n * M, k, device=self.device)) for k in (NUM_MOVES, c)]
            nz += [gumbel_noise_into(torch.empty(n, M, k, device=self.device)) for k in (NUM_MOVES, c)]
            # targets: actor j acts on its own next features in every critic's rows (hard samples)
            xt = b["x2_all"].permute(2, 0, 1, 3).reshape(n, n * M, F)                # (actor j, critic k M, F)
            lm2, lp2 = self.actor.logits(xt, self.actor_target.flat)
            if s.soft_actions:                                                          # MADDPG's soft samples
                a2 = torch.cat([softmax(lm2 + nz[0]), softmax(lp2 + nz[1])], -1)
            else:                                                                       # one-hot samples
                a2 = self.onehot_actions((lm2 + nz[0]).argmax(-1), (lp2 + nz[1]).argmax(-1))   # (j, k M, A)
            a2 = a2.reshape(n, n, M, A).permute(1, 2, 0, 3)                            # (k, M, j, A) seat order
            a2 = a2.gather(2, self.order[:, None, :, None].expand(n, M, n, A)).reshape(n, M, n * A)   # ego-first
            q2 = CriticStack(self.critic.shapes, self.critic_target.flat, b["x2"], a2).q
            y = b["r"] + s.gamma * (1 - b["done"]) * q2
            a = b["a"] if s.soft_actions else self.onehot_actions(b["m"], b["p"])       # (n, M, n, A) ego-first
            cp = CriticStack(self.critic.shapes, self.critic.flat.detach(), b["x"], a.reshape(n, M, n * A))
            err = cp.q - y
            critic_loss, q_mean = err.pow(2).mean(1), cp.q.mean(1)
            self.critic_opt.step_grad(cp.parameter_grad(err * (2.0 / M)))
            # actors: agent k's straight-through sample on its own features, through its critic just stepped
            ap = ActorStack(self.actor.shapes, self.actor.flat.detach(), b["x"][..., :F], (nz[2], nz[3]),
                            self.eye_moves, self.eye_pieces)
            own = torch.cat([ap.soft_m, ap.soft_p], -1) if s.soft_actions else ap.new_a
            ae = torch.cat([own.reshape(n, M, 1, A), a[:, :, 1:]], 2).reshape(n, M, n * A)
            cq = CriticStack(self.critic.shapes, self.critic.flat.detach(), b["x"], ae)
            d_new_a = cq.action_grad(torch.full_like(cq.q, -1.0 / M), slice(0, A))
            self.actor_opt.step_grad(ap.parameter_grad(d_new_a, s.logit_reg))
            reg = ap.regulariser(s.logit_reg)
            for target, online in self.target_pairs:
                target.lerp_(online, s.tau)
        actor_loss = -cq.q.mean(1) + reg
        return {"critic_loss": float(critic_loss.mean()), "actor_loss": float(actor_loss.mean()),
                "q": float(q_mean.mean())}

    def make_agent(self, sample: bool = False, seed: Optional[int] = None) -> "PerAgentLearnedAgent":
        """A single-episode agent playing the network of its seat (``view.agent``), greedy or sampled."""
        return PerAgentLearnedAgent(self.actor, self.config, self.knowledge_mode, self.device, sample, seed)


class PerAgentLearnedAgent(LearnedSymmToMAgent):
    """:class:`LearnedSymmToMAgent` over :class:`AgentActors`: at each episode's start it takes the
    network of the seat it is given (``view.agent``)."""

    def __init__(self, actors: AgentActors, config, knowledge_mode: Optional[str], device: str = "cpu",
                 sample: bool = False, seed: Optional[int] = None):
        super().__init__(actors.seat(0), config, knowledge_mode, False, device, sample, seed)
        self.actors = actors

    def reset(self, view) -> None:
        super().reset(view)
        self.actor = self.actors.seat(view.agent)
