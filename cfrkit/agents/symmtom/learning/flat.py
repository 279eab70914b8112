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
from torch.optim.adam import adam


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
        step_grads([self], [g])

    def adam_step(self, g: torch.Tensor) -> None:
        """One step of the optimiser's own ``torch.optim.Adam.step`` on the (already clipped) gradient ``g``."""
        self.flat.grad = g
        self.opt.step()
        self.flat.grad = None

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
    """``optimisers[i].step_grad(grads[i])`` for every i (e.g. the stacked seeds' Adam steps): each gradient is
    clipped in place by its own L2 norm, then every vector takes one Adam step.

    The steps are one call of torch's public functional ``torch.optim.adam.adam`` with ``fused=True`` -- the
    function each ``Adam(fused=True).step`` calls with its one vector, here given all of them: the fused kernel
    is elementwise per vector, so every vector gets the bits of its optimiser's own step, without
    ``Optimizer.step``'s per-call Python (hooks, ``_init_group``).  Before Adam's state exists (the first
    step), when the optimisers' settings differ, or on a torch older than Adam's ``decoupled_weight_decay``
    setting, each optimiser's own ``step`` is used."""
    if len(optimisers) != len(grads):
        raise ValueError(f"{len(optimisers)} optimisers but {len(grads)} gradients")
    clipped = [_clip_(g, o.max_grad_norm) for o, g in zip(optimisers, grads)]
    states = [o.opt.state.get(o.flat) for o in optimisers]
    g0 = _settings(optimisers[0])
    if (any(not st for st in states) or not g0.get("fused") or g0["amsgrad"] or g0["differentiable"]
            or "decoupled_weight_decay" not in g0          # an older torch: its functional adam's signature differs
            or any(_settings(o) != g0 or o.flat.device != optimisers[0].flat.device for o in optimisers[1:])):
        for o, g in zip(optimisers, clipped):
            o.adam_step(g)
    else:
        beta1, beta2 = g0["betas"]
        with torch.no_grad():          # as Optimizer.step (not differentiable)
            adam([o.flat for o in optimisers], clipped, [st["exp_avg"] for st in states],
                 [st["exp_avg_sq"] for st in states], [], [st["step"] for st in states], foreach=g0["foreach"],
                 capturable=g0["capturable"], differentiable=False, fused=True, has_complex=False,
                 decoupled_weight_decay=g0["decoupled_weight_decay"], amsgrad=False, beta1=beta1, beta2=beta2,
                 lr=g0["lr"], weight_decay=g0["weight_decay"], eps=g0["eps"], maximize=g0["maximize"])
    for o, g in zip(optimisers, clipped):
        o.last_grad = g        # the clipped gradient just applied (tests compare it)


def _settings(o: FlatAdam) -> Dict:
    """The settings of ``o``'s one parameter group (lr, betas, eps, ...), without its parameters."""
    return {k: v for k, v in o.opt.param_groups[0].items() if k != "params"}
