"""Actor and critic networks of the SymmToM MADDPG family (two-layer ReLU MLPs, 64 units: the paper's).

Actors output two heads -- movement (5 logits) and speech (c logits); a joint action id
``move * c + piece`` has log-probability ``log p(move) + log p(piece)``.  The recurrent actor
(RMADDPG) puts a GRU cell after the first layer and returns its new hidden state.
"""
from __future__ import annotations

from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from cfrkit.games.symmtom.core import NUM_MOVES


def softmax(x: torch.Tensor) -> torch.Tensor:
    """``torch.softmax(x, -1)`` for the short last dimensions here (5 moves, c pieces): the same
    function, written as max-shifted exp over its sum, which on CPU is 4-10x faster than torch's
    softmax kernel (forward and backward) when the last dimension has under ~16 entries.
    The max is detached: softmax does not change under a shift, so the gradient is exact."""
    e = (x - x.detach().amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


class Actor(nn.Module):
    """``forward(x (B, F), h=None) -> (move logits (B, 5), piece logits (B, c), h or None)``."""

    def __init__(self, features: int, pieces: int, hidden: int = 64, recurrent: bool = False):
        super().__init__()
        self.recurrent = recurrent
        self.hidden = hidden
        self.fc1 = nn.Linear(features, hidden)
        self.core = nn.GRUCell(hidden, hidden) if recurrent else nn.Linear(hidden, hidden)
        self.move = nn.Linear(hidden, NUM_MOVES)
        self.piece = nn.Linear(hidden, pieces)

    def forward(self, x: torch.Tensor, h: Optional[torch.Tensor] = None
                ) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
        z = torch.relu(self.fc1(x))
        if self.recurrent:
            if h is None:
                h = torch.zeros(x.shape[0], self.hidden, dtype=x.dtype, device=x.device)
            h = self.core(z, h)
            z = h
        else:
            z = torch.relu(self.core(z))
        return self.move(z), self.piece(z), h

    def joint_logits(self, x: torch.Tensor, h: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Log-probabilities over joint ids ``move * c + piece`` (B, 5 c) (TorchPolicyAgent's format)."""
        m, p, _ = self.forward(x, h)
        lm, lp = torch.log_softmax(m, -1), torch.log_softmax(p, -1)
        return (lm[:, :, None] + lp[:, None, :]).reshape(x.shape[0], -1)


class Critic(nn.Module):
    """Centralised Q of one agent: ``forward(features of all agents (B, n F), actions (B, n A)) -> (B,)``.

    Inputs are ordered ego-first (the evaluated agent, then the others in index order), so one
    critic serves every agent (the agents are symmetric).  The first layer is applied to the
    features and the actions separately (same weights as on their concatenation), so a pass that
    needs gradients only for the actions (the actor's step) never forms the features' gradient.
    """

    def __init__(self, agents: int, features: int, action_size: int, hidden: int = 64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(agents * (features + action_size), hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        first, second, last = self.net[0], self.net[2], self.net[4]
        w = first.weight
        nx = x.shape[-1]
        z = torch.addmm(F.linear(a, w[:, nx:], first.bias), x, w[:, :nx].t())
        z = torch.relu(second(torch.relu(z)))
        return last(z).squeeze(-1)


def relu_backward(grad: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """ReLU's backward from its output: ``grad`` where ``out > 0``, else 0 (autograd's own kernel)."""
    return torch.ops.aten.threshold_backward(grad, out, 0.0)


class CriticPass:
    """One forward pass of a :class:`Critic` kept for a hand-written backward (no autograd graph).

    The critic is two ReLU layers and a linear output; its backward is five small matrix products,
    so writing it out saves the autograd engine's bookkeeping in every gradient step (the update's
    largest cost besides the matrix products themselves).  ``x`` (B, n F) features and ``a``
    (B, n A) actions, ego first; ``q`` (B,).
    """

    def __init__(self, critic: Critic, x: torch.Tensor, a: torch.Tensor):
        first, second, last = critic.net[0], critic.net[2], critic.net[4]
        self.critic, self.x, self.a = critic, x, a
        w = first.weight
        nx = x.shape[-1]
        self.nx = nx
        with torch.no_grad():
            self.h1 = torch.relu(torch.addmm(F.linear(a, w[:, nx:], first.bias), x, w[:, :nx].t()))
            self.h2 = torch.relu(torch.addmm(second.bias, self.h1, second.weight.t()))
            self.q = torch.addmv(last.bias, self.h2, last.weight[0])

    def _hidden_grads(self, dq: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """dq (B,) -> gradients at the two pre-activations (B, H) each."""
        second, last = self.critic.net[2], self.critic.net[4]
        dz2 = relu_backward(dq[:, None] * last.weight, self.h2)
        dz1 = relu_backward(dz2.mm(second.weight), self.h1)
        return dz1, dz2

    def parameter_grad(self, dq: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """The gradient of ``sum(dq * q)`` with respect to the critic's parameters, written into ``out``,
        a flat vector in ``critic.parameters()`` order (:func:`~.flat.flatten_parameters`'s layout)."""
        dz1, dz2 = self._hidden_grads(dq)
        views, offset = [], 0
        for p in self.critic.parameters():
            views.append(out[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
        gw1, gb1, gw2, gb2, gw3, gb3 = views
        gw1[:, :self.nx] = dz1.t().mm(self.x)
        gw1[:, self.nx:] = dz1.t().mm(self.a)
        torch.sum(dz1, 0, out=gb1)
        torch.mm(dz2.t(), self.h1, out=gw2)
        torch.sum(dz2, 0, out=gb2)
        torch.mv(self.h2.t(), dq, out=gw3[0])
        gb3.fill_(dq.sum())
        return out

    def action_grad(self, dq: torch.Tensor, columns: slice) -> torch.Tensor:
        """The gradient of ``sum(dq * q)`` with respect to ``a[:, columns]`` (B, k)."""
        dz1, _ = self._hidden_grads(dq)
        return dz1.mm(self.critic.net[0].weight[:, self.nx:][:, columns])


class ActorPass:
    """The actor step of a feed-forward :class:`Actor` by hand: forward, straight-through
    Gumbel-softmax samples of both heads, and the parameter gradient of
    ``sum(new_a * d_a) + logit_reg * (mean(move logits^2) + mean(piece logits^2))`` -- the actor loss
    whose critic part has gradient ``d_a`` at the sampled actions (:meth:`CriticPass.action_grad`).
    Autograd's result for the same noise, without its graph (the recurrent and EE actors keep autograd).
    """

    def __init__(self, actor: Actor, x: torch.Tensor, noise: Tuple[torch.Tensor, torch.Tensor],
                 eye_m: torch.Tensor, eye_p: torch.Tensor):
        if actor.recurrent:
            raise ValueError("ActorPass is for the feed-forward actor; the recurrent one uses autograd")
        self.actor, self.x = actor, x
        with torch.no_grad():
            self.h1 = torch.relu(torch.addmm(actor.fc1.bias, x, actor.fc1.weight.t()))
            self.h2 = torch.relu(torch.addmm(actor.core.bias, self.h1, actor.core.weight.t()))
            self.lm = torch.addmm(actor.move.bias, self.h2, actor.move.weight.t())
            self.lp = torch.addmm(actor.piece.bias, self.h2, actor.piece.weight.t())
            self.soft_m = softmax(self.lm + noise[0])
            self.soft_p = softmax(self.lp + noise[1])
            # straight-through: the one-hot sample forward (hard - soft + soft, as autograd's estimator)
            hm = eye_m.index_select(0, self.soft_m.argmax(-1))
            hp = eye_p.index_select(0, self.soft_p.argmax(-1))
            self.new_a = torch.cat([hm - self.soft_m + self.soft_m, hp - self.soft_p + self.soft_p], -1)

    def regulariser(self, logit_reg: float) -> torch.Tensor:
        return logit_reg * (self.lm.pow(2).mean() + self.lp.pow(2).mean())

    def parameter_grad(self, d_a: torch.Tensor, logit_reg: float, out: torch.Tensor,
                       input_grad: bool = False):
        """Gradient (into the flat ``out``, ``actor.parameters()`` order) for the critic's ``d_a`` (B, 5 + c);
        with ``input_grad`` also the gradient with respect to the input ``x`` (returns ``(out, dx)``)."""
        a = self.actor
        k = self.lm.shape[1]
        dm, dp = d_a[:, :k], d_a[:, k:]
        # softmax backward, then the regulariser's 2 reg l / numel
        dlm = self.soft_m * (dm - (dm * self.soft_m).sum(-1, keepdim=True)) + (2 * logit_reg / self.lm.numel()) * self.lm
        dlp = self.soft_p * (dp - (dp * self.soft_p).sum(-1, keepdim=True)) + (2 * logit_reg / self.lp.numel()) * self.lp
        views, offset = [], 0
        for p in a.parameters():
            views.append(out[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
        gw1, gb1, gwc, gbc, gwm, gbm, gwp, gbp = views
        torch.mm(dlm.t(), self.h2, out=gwm)
        torch.sum(dlm, 0, out=gbm)
        torch.mm(dlp.t(), self.h2, out=gwp)
        torch.sum(dlp, 0, out=gbp)
        dz2 = relu_backward(torch.addmm(dlm.mm(a.move.weight), dlp, a.piece.weight), self.h2)
        torch.mm(dz2.t(), self.h1, out=gwc)
        torch.sum(dz2, 0, out=gbc)
        dz1 = relu_backward(dz2.mm(a.core.weight), self.h1)
        torch.mm(dz1.t(), self.x, out=gw1)
        torch.sum(dz1, 0, out=gb1)
        return (out, dz1.mm(a.fc1.weight)) if input_grad else out
