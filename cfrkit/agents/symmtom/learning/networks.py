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
