"""Torch networks for the Hanabi learners, with action masking.

Inputs are the engine's canonical encodings (uint8, one row per decision; HLE's layout) and the legal
move masks (bool).  Illegal moves get logit -inf (probability exactly 0) or Q = -inf, so sampling and
arg-max never pick them.
"""
from __future__ import annotations

import torch
from torch import nn


def mlp(sizes, activate_last: bool = True) -> nn.Sequential:
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or activate_last:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with illegal entries (``mask`` False) set to -inf; every row needs a legal move."""
    return logits.masked_fill(~mask, float("-inf"))


def masked_entropy(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Entropy (nats) of the softmax over legal moves only, per row."""
    logp = torch.log_softmax(masked_logits(logits, mask), dim=-1)
    p = logp.exp()
    return -(p * logp.masked_fill(~mask, 0.0)).sum(-1)


class ActorCritic(nn.Module):
    """Shared trunk (ReLU MLP), policy logits over the moves, a state value (the team's return).

    ``forward(obs (B, L) float, mask (B, M) bool) -> (masked logits (B, M), value (B,))``.
    """

    def __init__(self, obs_len: int, num_moves: int, hidden=(256, 256)):
        super().__init__()
        self.trunk = mlp((obs_len,) + tuple(hidden))
        self.policy = nn.Linear(hidden[-1], num_moves)
        self.value = nn.Linear(hidden[-1], 1)
        nn.init.orthogonal_(self.policy.weight, gain=0.01)
        nn.init.zeros_(self.policy.bias)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor):
        h = self.trunk(obs)
        return masked_logits(self.policy(h), mask), self.value(h).squeeze(-1)


class NoisyLinear(nn.Module):
    """Factorised Gaussian noisy layer (Fortunato et al. 2018); noise drawn by :meth:`resample`."""

    def __init__(self, fan_in: int, fan_out: int, sigma0: float = 0.5):
        super().__init__()
        bound = fan_in ** -0.5
        self.weight_mu = nn.Parameter(torch.empty(fan_out, fan_in).uniform_(-bound, bound))
        self.weight_sigma = nn.Parameter(torch.full((fan_out, fan_in), sigma0 * bound))
        self.bias_mu = nn.Parameter(torch.empty(fan_out).uniform_(-bound, bound))
        self.bias_sigma = nn.Parameter(torch.full((fan_out,), sigma0 * bound))
        self.register_buffer("eps_in", torch.zeros(fan_in))
        self.register_buffer("eps_out", torch.zeros(fan_out))
        self.noisy = True

    @staticmethod
    def _f(x: torch.Tensor) -> torch.Tensor:
        return x.sign() * x.abs().sqrt()

    def resample(self, generator: torch.Generator) -> None:
        self.eps_in.copy_(self._f(torch.randn(self.eps_in.shape, generator=generator)))
        self.eps_out.copy_(self._f(torch.randn(self.eps_out.shape, generator=generator)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.noisy:
            return nn.functional.linear(x, self.weight_mu, self.bias_mu)
        w = self.weight_mu + self.weight_sigma * torch.outer(self.eps_out, self.eps_in)
        b = self.bias_mu + self.bias_sigma * self.eps_out
        return nn.functional.linear(x, w, b)


class DuelingDistributionalQ(nn.Module):
    """Rainbow's head: dueling value/advantage streams over ``atoms`` return bins (C51), noisy layers.

    ``forward(obs, mask) -> log-probabilities (B, M, atoms)``; :meth:`q_values` gives masked expectations.
    """

    def __init__(self, obs_len: int, num_moves: int, atoms: int = 51, v_min: float = -25.0, v_max: float = 25.0,
                 hidden=(512, 512), noisy: bool = True):
        super().__init__()
        self.num_moves, self.atoms = num_moves, atoms
        self.trunk = mlp((obs_len, hidden[0]))
        make = (lambda i, o: NoisyLinear(i, o)) if noisy else nn.Linear
        self.value = nn.Sequential(make(hidden[0], hidden[1]), nn.ReLU(), make(hidden[1], atoms))
        self.advantage = nn.Sequential(make(hidden[0], hidden[1]), nn.ReLU(), make(hidden[1], num_moves * atoms))
        self.register_buffer("support", torch.linspace(v_min, v_max, atoms))

    def noisy_layers(self):
        return [m for m in self.modules() if isinstance(m, NoisyLinear)]

    def resample_noise(self, generator: torch.Generator) -> None:
        for m in self.noisy_layers():
            m.resample(generator)

    def set_noisy(self, on: bool) -> None:
        for m in self.noisy_layers():
            m.noisy = on

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        h = self.trunk(obs)
        v = self.value(h).view(-1, 1, self.atoms)
        a = self.advantage(h).view(-1, self.num_moves, self.atoms)
        return torch.log_softmax(v + a - a.mean(1, keepdim=True), dim=-1)

    def q_values(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        q = (self.forward(obs).exp() * self.support).sum(-1)
        return q.masked_fill(~mask, float("-inf"))
