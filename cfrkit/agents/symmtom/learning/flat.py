"""One contiguous parameter vector per network, so that Adam, gradient clipping and the soft target
update are each one or two tensor operations per gradient step instead of one per parameter.

:func:`flatten_parameters` makes every parameter of a module a view into one flat tensor (the
module computes exactly as before).  :class:`FlatAdam` then clips and steps that vector: the
gradient is taken with ``torch.autograd.grad`` and concatenated, clipped by its global L2 norm
(``torch.nn.utils.clip_grad_norm_``'s rule) and applied by a fused single-tensor Adam.  Its
``state_dict`` is written in the per-parameter format of ``torch.optim.Adam`` over
``module.parameters()``, so checkpoints of the per-parameter trainer and of this one load into
each other.
"""
from __future__ import annotations

from typing import Dict, List, Sequence

import torch
from torch import nn


def flatten_parameters(module: nn.Module) -> torch.Tensor:
    """Move ``module``'s parameters into one contiguous 1-D tensor (returned); each parameter's data
    becomes a view of it, in ``module.parameters()`` order.  Values are unchanged."""
    params = list(module.parameters())
    flat = torch.cat([p.detach().reshape(-1) for p in params])
    offset = 0
    for p in params:
        k = p.numel()
        p.data = flat[offset:offset + k].view_as(p)
        offset += k
    return flat


class FlatAdam:
    """Adam (``lr``, torch's default betas and eps) with global-norm clipping (``max_grad_norm``) on a
    module whose parameters are views of ``flat`` (:func:`flatten_parameters`)."""

    def __init__(self, module: nn.Module, flat: torch.Tensor, lr: float, max_grad_norm: float):
        self.params: List[nn.Parameter] = list(module.parameters())
        self.flat = nn.Parameter(flat, requires_grad=False)     # the optimiser's view of the whole vector
        self.max_grad_norm = float(max_grad_norm)
        fused = flat.device.type in ("cpu", "cuda")
        self.opt = torch.optim.Adam([self.flat], lr=lr, fused=fused, foreach=None if fused else False)
        self.last_grad = None

    def step(self, loss: torch.Tensor) -> None:
        """Back-propagate ``loss`` into the parameters only, clip the gradient's L2 norm, one Adam step."""
        # a parameter may be unused in one step (MADDPG-EE's f_1 when no speaker in the batch was
        # heard out of the ego's range): its gradient is zero, as backward() would leave it
        grads = torch.autograd.grad(loss, self.params, allow_unused=True, materialize_grads=True)
        self.step_grad(torch.cat([x.reshape(-1) for x in grads]))

    def step_grad(self, g: torch.Tensor) -> None:
        """Clip the flat gradient ``g`` (modified in place) by its L2 norm, then one Adam step."""
        self.flat.grad = _clip_(g, self.max_grad_norm)
        self.opt.step()
        self.flat.grad = None
        self.last_grad = g        # the clipped gradient just applied (tests compare it)

    def state_dict(self) -> Dict:
        """``torch.optim.Adam``'s state dict over the module's parameters (one entry per parameter)."""
        inner = self.opt.state_dict()
        group = {k: v for k, v in inner["param_groups"][0].items() if k != "params"}
        for k in ("fused", "foreach"):     # as the per-parameter optimiser wrote them
            group.pop(k, None)
        group["params"] = list(range(len(self.params)))
        state = {}
        st = inner["state"].get(0)
        if st is not None:
            offset = 0
            for i, p in enumerate(self.params):
                k = p.numel()
                state[i] = {"step": st["step"].clone(),
                            "exp_avg": st["exp_avg"][offset:offset + k].view_as(p).clone(),
                            "exp_avg_sq": st["exp_avg_sq"][offset:offset + k].view_as(p).clone()}
                offset += k
        return {"state": state, "param_groups": [group]}

    def load_state_dict(self, sd: Dict) -> None:
        """Load a state dict of :meth:`state_dict`'s (or a per-parameter ``torch.optim.Adam``'s) format."""
        groups = sd["param_groups"]
        if len(groups) != 1 or len(groups[0]["params"]) != len(self.params):
            raise ValueError(f"optimiser state for {sum(len(g['params']) for g in groups)} parameters; "
                             f"this network has {len(self.params)}")
        ids = groups[0]["params"]
        group = {k: v for k, v in groups[0].items() if k not in ("params", "fused", "foreach")}
        inner = self.opt.state_dict()
        inner["param_groups"][0].update(group)
        inner["state"] = {}
        if ids[0] in sd["state"]:
            st = [sd["state"][i] for i in ids]
            inner["state"][0] = {"step": torch.as_tensor(st[0]["step"], dtype=torch.float32).clone(),
                                 "exp_avg": torch.cat([s["exp_avg"].reshape(-1) for s in st]),
                                 "exp_avg_sq": torch.cat([s["exp_avg_sq"].reshape(-1) for s in st])}
        self.opt.load_state_dict(inner)


def _clip_(g: torch.Tensor, max_grad_norm: float) -> torch.Tensor:
    """``g`` scaled in place by clip_grad_norm_'s rule: by max / (norm + 1e-6) when that is below 1."""
    coef = (max_grad_norm / (torch.linalg.vector_norm(g) + 1e-6)).clamp_(max=1.0)
    return g.mul_(coef)


def step_grads(optimisers: Sequence[FlatAdam], grads: Sequence[torch.Tensor]) -> None:
    """``optimisers[i].step_grad(grads[i])`` for every i (the stacked seeds' Adam steps, seed by seed).

    One fused call over all vectors (``torch._fused_adam_``) gave the same bits and saved about a tenth of a
    millisecond per call, but it is a private torch function: kept out, the public per-optimiser step is used."""
    if len(optimisers) != len(grads):
        raise ValueError(f"{len(optimisers)} optimisers but {len(grads)} gradients")
    for o, g in zip(optimisers, grads):
        o.step_grad(g)
