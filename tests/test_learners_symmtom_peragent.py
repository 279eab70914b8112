"""Per-agent networks (``MADDPGSettings(per_agent=True)``, :class:`PerAgentTrainer`): each agent's actor and
critic are its own, and the batched step computes what each agent's own networks compute alone.

The reference is plain :class:`Actor` / :class:`Critic` modules holding one agent's weights, trained by
autograd on that agent's own replay rows with the same Gumbel noise: MADDPG's per-agent update written
out one agent at a time."""
import copy

import pytest

torch = pytest.importorskip("torch")

from cfrkit.agents.rl import LearnerError
from cfrkit.agents.symmtom.learning import MADDPGSettings, make_trainer
from cfrkit.agents.symmtom.learning.maddpg import gumbel_noise_into
from cfrkit.agents.symmtom.learning.networks import Critic
from cfrkit.agents.symmtom.learning.peragent import AgentActors, AgentCritics, PerAgentTrainer, RowAdam
from cfrkit.agents.symmtom.learning.stacked import CriticStack, StackedSeeds, stacked_views
from cfrkit.games.symmtom import SymmToMConfig, SymmToMEnv
from cfrkit.agents.symmtom import play_episode
from cfrkit.games.symmtom.core import NUM_MOVES

CFG = SymmToMConfig(agents=3, width=4, pieces=3, steps=8)

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def _settings(variant="ce", seed=0, **kw):
    return MADDPGSettings(variant=variant, seed=seed, num_envs=16, warmup=256, batch=40, update_every=20,
                          per_agent=True, **kw)


def _filled(variant="ce", **kw):
    t = make_trainer(CFG, _settings(variant, **kw), "cpu")
    assert isinstance(t, PerAgentTrainer)
    while len(t.replay) < t.settings.warmup:
        t.play(t.settings.num_envs, 100 + t.iteration, False, True)
        t.iteration += 1
    return t


def _critic_of(critics: AgentCritics, k: int, agents: int, features: int, action_size: int, hidden: int) -> Critic:
    net = Critic(agents, features, action_size, hidden)
    with torch.no_grad():
        for p, v in zip(net.parameters(), stacked_views(critics.flat.detach()[k:k + 1], critics.shapes)):
            p.copy_(v[0])
    return net


def test_batched_actors_equal_each_agent_network_alone():
    torch.manual_seed(3)
    n, F, c = 3, 11, 4
    actors = AgentActors(n, F, c, hidden=16)
    x = torch.randn(7 * n, F)                       # 7 episodes, rows (episode, agent)
    lm, lp, h = actors(x)
    assert h is None and lm.shape == (7 * n, NUM_MOVES) and lp.shape == (7 * n, c)
    for k in range(n):
        m_k, p_k, _ = actors.seat(k)(x[k::n])
        torch.testing.assert_close(lm[k::n], m_k, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(lp[k::n], p_k, rtol=1e-5, atol=1e-6)
    # the agents' networks really differ (each its own initialisation)
    assert (actors.flat[0] - actors.flat[1]).abs().max() > 1e-2
    critics = AgentCritics(n, F, NUM_MOVES + c, hidden=16)
    xe, ae = torch.randn(n, 5, n * F), torch.randn(n, 5, n * (NUM_MOVES + c))
    q = critics(xe, ae)
    for k in range(n):
        ref = _critic_of(critics, k, n, F, NUM_MOVES + c, 16)
        torch.testing.assert_close(q[k], ref(xe[k], ae[k]), rtol=1e-5, atol=1e-6)


def test_one_agents_loss_moves_only_that_agents_parameters():
    torch.manual_seed(4)
    n, F, c = 3, 9, 3
    actors = AgentActors(n, F, c, hidden=8)
    lm, lp, _ = actors(torch.randn(6 * n, F))
    (lm[1::n].pow(2).sum() + lp[1::n].sum()).backward()         # agent 1's rows only
    g = actors.flat.grad
    assert g[1].abs().max() > 0 and g[0].abs().max() == 0 and g[2].abs().max() == 0
    critics = AgentCritics(n, F, NUM_MOVES + c, hidden=8)
    q = CriticStack(critics.shapes, critics.flat, torch.randn(n, 4, n * F), torch.randn(n, 4, n * (NUM_MOVES + c))).q
    (g,) = torch.autograd.grad(q[2].sum(), critics.flat)
    assert g[2].abs().max() > 0 and g[0].abs().max() == 0 and g[1].abs().max() == 0
    # clipping and Adam per agent: agent 0's step does not depend on agent 1's gradient, and a zero
    # gradient leaves an agent's parameters where they are
    steps = []
    for scale in (1.0, 100.0):
        flat = torch.nn.Parameter(torch.zeros(n, 5))
        opt = RowAdam(flat, lr=0.1, max_grad_norm=0.5)
        grad = torch.zeros(n, 5)
        grad[0], grad[1] = torch.arange(5.0), scale * torch.ones(5)
        opt.step_grad(grad)
        steps.append(flat.detach().clone())
        assert torch.equal(flat[2].detach(), torch.zeros(5))
    assert torch.equal(steps[0][0], steps[1][0])


@pytest.mark.parametrize("variant,soft", [("ce", False), ("maddpg", False), ("ce", True)])
def test_update_equals_each_agent_trained_alone(variant, soft):
    t = _filled(variant, soft_actions=soft)
    s, n, c, F, A = t.settings, CFG.agents, CFG.pieces, t.features, t.action_size
    M = s.batch
    for _ in range(2):                      # Adam's moments non-zero
        t.update()
    actors = [t.actor.seat(k) for k in range(n)]
    targets = [t.actor_target.seat(k) for k in range(n)]
    critics = [_critic_of(t.critic, k, n, F, A, s.hidden) for k in range(n)]
    critic_targets = [_critic_of(t.critic_target, k, n, F, A, s.hidden) for k in range(n)]
    rng_state, torch_state = t.rng.bit_generator.state, torch.get_rng_state()
    t.update()
    # the same draws, replayed: each agent's replay rows, then the Gumbel noise in the update's order
    t.rng.bit_generator.state = rng_state
    idx = torch.from_numpy(t.rng.integers(0, len(t.replay), size=(n, M)))
    torch.set_rng_state(torch_state)
    nz = [gumbel_noise_into(torch.empty(n, n * M, k)) for k in (NUM_MOVES, c)]
    nz += [gumbel_noise_into(torch.empty(n, M, k)) for k in (NUM_MOVES, c)]
    d = t.replay.data
    for k in range(n):
        order = t.order[k]
        x, x2 = d["x"][idx[k]], d["x2"][idx[k]]                           # (M, n, F) seat order
        r, done = d["r"][idx[k], k], d["done"][idx[k]]
        with torch.no_grad():
            a2 = []
            for j in range(n):
                lm2, lp2, _ = targets[j](x2[:, j])
                gm, gp = nz[0][j, k * M:(k + 1) * M], nz[1][j, k * M:(k + 1) * M]
                if soft:        # MADDPG's target_act: a soft Gumbel-softmax sample
                    a2.append(torch.cat([torch.softmax(lm2 + gm, -1), torch.softmax(lp2 + gp, -1)], -1))
                else:
                    a2.append(t.onehot_actions((lm2 + gm).argmax(-1), (lp2 + gp).argmax(-1)))
            a2 = torch.stack(a2, 1)                                         # (M, n, A) seat order
            y = r + s.gamma * (1 - done) * critic_targets[k](x2[:, order].reshape(M, -1), a2[:, order].reshape(M, -1))
        a = d["a"][idx[k]] if soft else t.onehot_actions(d["m"][idx[k]], d["p"][idx[k]])
        a = a[:, order]                                                     # (M, n, A) ego first
        xe = x[:, order].reshape(M, -1)
        loss = (critics[k](xe, a.reshape(M, -1)) - y).pow(2).mean()
        g = torch.cat([q.reshape(-1) for q in torch.autograd.grad(loss, list(critics[k].parameters()))])
        g = g * min(1.0, s.max_grad_norm / (float(g.norm()) + 1e-6))
        torch.testing.assert_close(t.critic_opt.last_grad[k], g, rtol=1e-4, atol=1e-6)
        # the actor's step goes through agent k's critic as stepped (the trainer's critic now)
        critic_now = _critic_of(t.critic, k, n, F, A, s.hidden)
        lm, lp, _ = actors[k](x[:, k])
        if soft:                # MADDPG's act_pd.sample(): soft, no straight-through
            new_a = torch.cat([torch.softmax(lm + nz[2][k], -1), torch.softmax(lp + nz[3][k], -1)], -1)
        else:
            new_a = torch.cat([_st(lm, nz[2][k], t.eye_moves), _st(lp, nz[3][k], t.eye_pieces)], -1)
        ae = torch.cat([new_a[:, None], a[:, 1:]], 1).reshape(M, -1)
        loss = -critic_now(xe, ae).mean() + s.logit_reg * (lm.pow(2).mean() + lp.pow(2).mean())
        g = torch.cat([q.reshape(-1) for q in torch.autograd.grad(loss, list(actors[k].parameters()))])
        g = g * min(1.0, s.max_grad_norm / (float(g.norm()) + 1e-6))
        torch.testing.assert_close(t.actor_opt.last_grad[k], g, rtol=1e-4, atol=1e-6)


def _st(logits, noise, eye):
    """Straight-through Gumbel-softmax with the given noise (the trainer's estimator)."""
    soft = torch.softmax(logits + noise, -1)
    return eye[soft.argmax(-1)] - soft.detach() + soft


def test_per_agent_run_trains_checkpoints_and_plays_its_seats():
    t = make_trainer(CFG, _settings("ge"), "cpu")
    for _ in range(4):
        stats = t.iterate()
    assert stats["updates"] > 0
    state = copy.deepcopy(t.state_dict())             # the global torch stream included
    a = t.iterate()
    u = make_trainer(CFG, _settings("ge"), "cpu")
    u.load_state_dict(state)
    b = u.iterate()                                   # resumed bit-exactly
    assert a["critic_loss"] == b["critic_loss"] and torch.equal(t.actor.flat, u.actor.flat)
    # evaluation is the batched play; a single-episode agent plays its seat's network
    assert t.evaluate(8).shape == (8,)
    env = SymmToMEnv(CFG)
    agents = [t.make_agent() for _ in range(CFG.agents)]
    play_episode(env, agents, seed=5)
    for k, ag in enumerate(agents):
        assert torch.equal(ag.actor.fc1.weight, t.actor.seat(k).fc1.weight)


def test_soft_replay_keeps_the_sample_whose_argmax_was_played():
    t = _filled("ge", soft_actions=True)
    d = t.replay.data
    a, k = d["a"][:len(t.replay)], NUM_MOVES
    torch.testing.assert_close(a[..., :k].sum(-1), torch.ones(a.shape[:2]))        # each head a distribution
    torch.testing.assert_close(a[..., k:].sum(-1), torch.ones(a.shape[:2]))
    assert torch.equal(a[..., :k].argmax(-1), d["m"][:len(t.replay)])
    assert torch.equal(a[..., k:].argmax(-1), d["p"][:len(t.replay)])
    assert a[..., :k].max(-1).values.min() < 0.99      # soft, not one-hot
    # the played actions are samples of the actor's distribution: a uniform actor moves in every direction
    with torch.no_grad():
        t.actor.flat.zero_()
    t.play(16, 7, False, True)
    moves = d["m"][len(t.replay) - 16 * CFG.steps:len(t.replay)].reshape(-1)
    counts = torch.bincount(moves, minlength=k).double() / moves.numel()
    assert (counts - 1 / k).abs().max() < 0.06


def test_terminal_done_off_keeps_no_terminal_in_the_replay():
    on, off = _filled("ce"), _filled("ce", terminal_done=False)
    k = len(on.replay)
    assert float(on.replay.data["done"][:k].sum()) == k // CFG.episode_length       # one per episode
    assert float(off.replay.data["done"][:k].sum()) == 0.0
    assert torch.equal(on.replay.data["x"][:k], off.replay.data["x"][:k])              # the same episodes


def test_per_agent_refusals():
    for variant in ("rmaddpg", "ee"):
        with pytest.raises(LearnerError, match="per_agent"):
            make_trainer(CFG, _settings(variant), "cpu")
    with pytest.raises(LearnerError, match="per_agent"):
        make_trainer(CFG, MADDPGSettings(variant="ce", soft_actions=True), "cpu")
    with pytest.raises(LearnerError, match="per_agent"):
        StackedSeeds.create(lambda st: make_trainer(CFG, st, "cpu"), [_settings("ce", s) for s in (0, 1)])
