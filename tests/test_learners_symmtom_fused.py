"""The SymmToM learners' fused update (flat parameters, single-tensor Adam and clipping, manual
softmax, one-hot by table lookup) computes what the per-parameter update it replaced computed:
same losses, same clipped gradients, same parameters after a step, for the same batch, weights and
noise.  The reference below is that earlier update, kept here as the independent implementation."""
import copy

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F

from cfrkit.agents.symmtom.learning import VARIANTS, MADDPGSettings, make_trainer
from cfrkit.agents.symmtom.learning import estimated
from cfrkit.agents.symmtom.learning.flat import FlatAdam, flatten_parameters
from cfrkit.agents.symmtom.learning.networks import softmax
from cfrkit.games.symmtom import SymmToMConfig
from cfrkit.games.symmtom.core import NUM_MOVES


pytestmark = pytest.mark.usefixtures("torch_one_thread")


CFG = SymmToMConfig(agents=3, width=4, pieces=3, steps=8)


def _critic_ref(critic, x, a):
    """The earlier Critic.forward: both first-layer parts by F.linear, then net[1:]."""
    first = critic.net[0]
    nx = x.shape[-1]
    z = F.linear(x, first.weight[:, :nx]) + F.linear(a, first.weight[:, nx:], first.bias)
    return critic.net[1:](z).squeeze(-1)


def _noise(logits):
    u = torch.rand_like(logits).clamp_(min=1e-10, max=1.0 - 1e-7)
    return -torch.log(-torch.log(u))


def _hard_ref(logits):
    soft = torch.softmax(logits + _noise(logits), -1)
    hard = F.one_hot(soft.argmax(-1), logits.shape[-1]).to(soft.dtype)
    return hard - soft.detach() + soft


def _reference_update(t, actor_opt, critic_opt):
    """The earlier per-parameter update on trainer ``t`` (torch.optim.Adam foreach, clip_grad_norm_).
    Returns the losses and the clipped gradients of both steps."""
    s, n, c = t.settings, t.config.agents, t.config.pieces
    M = max(1, s.batch // n)
    b = t.replay.sample(t.rng, M)

    def onehot(m, p):
        return torch.cat([F.one_hot(m, NUM_MOVES), F.one_hot(p, c)], -1).float()

    a = onehot(b["m"], b["p"])
    with torch.no_grad():
        lm2, lp2, _ = t.actor_target(*t.actor_inputs(b, True))
        a2 = onehot((lm2 + _noise(lm2)).argmax(-1), (lp2 + _noise(lp2)).argmax(-1))
        q2 = _critic_ref(t.critic_target, t.ego_rows(b["x2"]), t.ego_rows(a2.reshape(M, n, -1)))
        y = b["r"].reshape(-1) + s.gamma * (1 - b["done"]).repeat_interleave(n) * q2
    xe = t.ego_rows(b["x"])
    q = _critic_ref(t.critic, xe, t.ego_rows(a))
    critic_loss = F.mse_loss(q, y)
    critic_opt.zero_grad(set_to_none=True)
    critic_loss.backward()
    torch.nn.utils.clip_grad_norm_(t.critic.parameters(), s.max_grad_norm, foreach=True)
    critic_grad = torch.cat([p.grad.reshape(-1) for p in t.critic.parameters()])
    critic_opt.step()
    lm, lp, _ = t.actor(*t.actor_inputs(b, False))
    new_a = torch.cat([_hard_ref(lm), _hard_ref(lp)], -1)
    ae = a[:, t.order]
    ae = torch.cat([new_a.reshape(M, n, 1, -1), ae[:, :, 1:]], 2).reshape(M * n, -1)
    t.critic.requires_grad_(False)
    actor_loss = -_critic_ref(t.critic, xe, ae).mean() + s.logit_reg * (lm.pow(2).mean() + lp.pow(2).mean())
    actor_opt.zero_grad(set_to_none=True)
    actor_loss.backward()
    t.critic.requires_grad_(True)
    torch.nn.utils.clip_grad_norm_(t.actor.parameters(), s.max_grad_norm, foreach=True)
    actor_grad = torch.cat([p.grad.reshape(-1) for p in t.actor.parameters()])
    actor_opt.step()
    with torch.no_grad():
        for target, online in ((t.actor_target, t.actor), (t.critic_target, t.critic)):
            torch._foreach_lerp_(list(target.parameters()), list(online.parameters()), s.tau)
    return float(critic_loss.detach()), float(actor_loss.detach()), critic_grad, actor_grad


@pytest.mark.parametrize("variant", VARIANTS)
def test_fused_update_equals_the_per_parameter_update(variant, monkeypatch):
    s = MADDPGSettings(variant=variant, num_envs=16, batch=96, warmup=100, update_every=16, buffer=2000, seed=3)
    t = make_trainer(CFG, s)
    for _ in range(3):
        t.iterate()                       # some updates: Adam's moments are non-zero
    ref = copy.deepcopy(t)
    # the reference optimisers: per-parameter Adam loaded from the fused one's state (format check too)
    opts = []
    for net, fused in ((ref.actor, t.actor_opt), (ref.critic, t.critic_opt)):
        opt = torch.optim.Adam(net.parameters(), lr=s.lr, foreach=True)
        opt.load_state_dict(fused.state_dict())
        opts.append(opt)
    for step in range(3):
        rng_state, torch_state = copy.deepcopy(t.rng.bit_generator.state), torch.get_rng_state()
        out = t.update()
        ref.rng.bit_generator.state = rng_state
        torch.set_rng_state(torch_state)
        with monkeypatch.context() as m:
            m.setattr(estimated, "softmax", lambda x: torch.softmax(x, -1))      # EE's U by torch's softmax
            closs, aloss, cgrad, agrad = _reference_update(ref, *opts)
        assert out["critic_loss"] == pytest.approx(closs, rel=1e-5, abs=1e-6)
        assert out["actor_loss"] == pytest.approx(aloss, rel=1e-5, abs=1e-6)
        assert torch.allclose(t.critic_opt.last_grad, cgrad, rtol=1e-4, atol=1e-6)
        assert torch.allclose(t.actor_opt.last_grad, agrad, rtol=1e-4, atol=1e-6)
        assert cgrad.abs().max() > 1e-4 and agrad.abs().max() > 1e-4      # the check is not vacuous
        for name in ("actor", "critic", "actor_target", "critic_target"):
            for (k, v), v2 in zip(getattr(t, name).state_dict().items(), getattr(ref, name).state_dict().values()):
                assert torch.allclose(v, v2, rtol=1e-5, atol=1e-5), (step, name, k, (v - v2).abs().max())


def test_flat_parameters_and_flat_adam_state_round_trip():
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    before = [p.detach().clone() for p in net.parameters()]
    flat = flatten_parameters(net)
    assert flat.numel() == sum(p.numel() for p in before)
    for p, q in zip(net.parameters(), before):
        assert torch.equal(p, q)
    opt = FlatAdam(net, flat, 1e-2, 0.5)
    x = torch.randn(8, 4)
    opt.step(net(x).pow(2).sum())
    # the parameters are views: the step moved the module's weights
    assert not torch.equal(next(net.parameters()), before[0])
    # per-parameter state dict: loads into torch.optim.Adam and back into a FlatAdam unchanged
    sd = opt.state_dict()
    assert sorted(sd["state"]) == list(range(4))
    torch.optim.Adam(net.parameters(), lr=1e-2).load_state_dict(sd)
    net2 = copy.deepcopy(net)
    opt2 = FlatAdam(net2, flatten_parameters(net2), 1e-2, 0.5)
    opt2.load_state_dict(sd)
    opt.step(net(x).pow(2).sum())
    opt2.step(net2(x).pow(2).sum())
    for p, q in zip(net.parameters(), net2.parameters()):
        assert torch.equal(p, q)
    with pytest.raises(ValueError, match="parameters"):
        FlatAdam(torch.nn.Linear(2, 2), flatten_parameters(torch.nn.Linear(2, 2)), 1e-2, 0.5).load_state_dict(sd)


def test_flat_adam_resumes_a_per_parameter_adam_checkpoint():
    """A checkpoint of the earlier trainer (torch.optim.Adam, foreach, over net.parameters()) resumes."""
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 2))
    x = torch.randn(32, 4)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2, foreach=True)
    for _ in range(3):
        opt.zero_grad()
        net(x).pow(2).sum().backward()
        opt.step()
    fast = copy.deepcopy(net)
    fopt = FlatAdam(fast, flatten_parameters(fast), 1e-2, 1e9)           # no clipping: the plain Adam step
    fopt.load_state_dict(opt.state_dict())
    for _ in range(3):
        opt.zero_grad()
        net(x).pow(2).sum().backward()
        opt.step()
        fopt.step(fast(x).pow(2).sum())
    for p, q in zip(net.parameters(), fast.parameters()):
        assert torch.allclose(p, q, rtol=1e-6, atol=1e-7)
    assert fopt.state_dict()["state"][0]["step"] == 6


def test_gradient_clipping_matches_clip_grad_norm():
    torch.manual_seed(0)
    net = torch.nn.Linear(5, 3)
    ref = copy.deepcopy(net)
    opt = FlatAdam(net, flatten_parameters(net), 1e-3, 0.05)
    x = torch.randn(16, 5)
    opt.step(net(x).pow(2).sum())
    ref(x).pow(2).sum().backward()
    norm = torch.nn.utils.clip_grad_norm_(ref.parameters(), 0.05)
    assert norm > 0.05                                     # clipping was active
    assert torch.allclose(opt.last_grad, torch.cat([p.grad.reshape(-1) for p in ref.parameters()]), atol=1e-7)


def test_softmax_equals_torch_softmax_with_gradient():
    x = torch.randn(50, 5, dtype=torch.float64) * 30
    x.requires_grad_(True)
    w = torch.randn(50, 5, dtype=torch.float64)
    g1, = torch.autograd.grad((softmax(x) * w).sum(), x)
    g2, = torch.autograd.grad((torch.softmax(x, -1) * w).sum(), x)
    assert torch.allclose(softmax(x), torch.softmax(x, -1), atol=1e-12)
    assert torch.allclose(g1, g2, atol=1e-12)
