"""MADDPG-EE: its K equals CE's when S[2] is switched off, batched and single-episode inputs agree,
S[2] is a probability learned by the actor's gradient, training, resume and the single-episode agent."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cfrkit.agents.rl import read_scalars
from cfrkit.agents.symmtom import play_episode
from cfrkit.agents.symmtom.learning import BatchedKnowledge, MADDPGSettings, make_trainer, train_maddpg
from cfrkit.agents.symmtom.learning.estimated import (EETrainer, EstimatedKnowledge, event_size, events_batched,
                                                      events_from_view)
from cfrkit.cli import main as cli_main
from cfrkit.evaluation.symmtom_tests import run_tom_test
from cfrkit.games.symmtom import BatchedSymmToM, SymmToMConfig, SymmToMEnv


pytestmark = pytest.mark.usefixtures("torch_one_thread")


def _pair(cfg, B, seed):
    bat = BatchedSymmToM(cfg, B, seed=seed)
    bat.reset()
    envs = []
    for b in range(B):
        start = bat.start(b)
        env = SymmToMEnv(cfg, seed=0)
        env.reset(start=start)
        envs.append(env)
    return bat, envs


class _NoS2(EstimatedKnowledge):
    def speech_at(self, kp, H, r, l):   # U = 0: no estimated speech
        return torch.zeros(r.shape[0], self.c)


@pytest.mark.parametrize("n,w,c,steps", [(3, 4, 3, 60), (4, 4, 8, 20)])
def test_ee_without_s2_is_ce_and_view_events_match_batched(n, w, c, steps):
    """Over random play with forgetting: EE's K with U = 0 equals CE's K step for step (binary
    inputs: the noisy-or update is Eq. 2), and the single-episode event vectors equal the batched ones."""
    cfg = SymmToMConfig(agents=n, width=w, pieces=c, tiebreak="first", steps=steps)
    B = 8
    bat, envs = _pair(cfg, B, seed=2)
    ce = BatchedKnowledge(bat, "ce")
    ce.reset()
    model = _NoS2(n, c, hidden=8)
    ev = events_batched(bat, reset=True)
    assert ev.shape == (B, n, event_size(n, c))
    k = model(torch.zeros(B * n, n * c), torch.as_tensor(ev).reshape(B * n, -1))
    assert np.array_equal(k.numpy().reshape(B, n, -1), ce.features())
    rng = np.random.default_rng(0)
    forgot = 0
    for _ in range(cfg.episode_length):
        moves, pieces = rng.integers(0, 5, (B, n)), rng.integers(0, c, (B, n))
        ce.update(bat.step(moves, pieces))
        ev = events_batched(bat)
        for b in range(B):
            envs[b].step([(int(moves[b, i]), int(pieces[b, i])) for i in range(n)], observe=False)
            for i in range(n):
                assert np.array_equal(events_from_view(envs[b].view(i, False)), ev[b, i])
        before = k
        k = model(k, torch.as_tensor(ev).reshape(B * n, -1))
        forgot += int(((before - k) > 0.5).sum())
        assert np.array_equal(k.numpy().reshape(B, n, -1), ce.features())
    assert forgot > 0 or n == 4   # the forgetting branch ran (3 agents, 3 pieces: often)


def test_ee_s2_is_a_probability_on_unwitnessed_encounters_and_gets_gradient():
    n, c = 3, 3
    model = EstimatedKnowledge(n, c, hidden=16)
    M = 1
    ev = torch.zeros(M, event_size(n, c))
    # observer 0; agents 1 and 2 in range of each other, out of 0's range
    W = torch.zeros(n, n)
    W[1, 2] = W[2, 1] = 1
    H = W.clone()
    ev[0, c * n:c * n + n * n] = W.reshape(-1)
    ev[0, c * n + n * n:c * n + 2 * n * n] = H.reshape(-1)
    Fm = torch.zeros(c, n)
    Fm[0, 0] = Fm[1, 1] = Fm[2, 2] = 1
    ev[0, -c * n:] = Fm.reshape(-1)
    k = model(Fm.reshape(1, -1), ev).reshape(c, n)
    assert torch.all((k >= 0) & (k <= 1))
    assert torch.equal(k[:, 0], Fm[:, 0])               # my own column stays exact
    u = model.speech(Fm.reshape(1, c, n), H[None])[0]   # (l, c), rows sum to 1
    assert torch.allclose(u.sum(-1), torch.ones(n))
    assert torch.allclose(k[:, 1], torch.maximum(Fm[:, 1], u[2]), atol=1e-6)   # 1 heard only 2
    k.sum().backward()
    assert model.f1[0].weight.grad.abs().sum() > 0


def _dense_k(model, k_prev, ev):
    """The K update with f_1 on every (row, speaker) pair (the formula as written; the module
    evaluates f_1 only where some agent heard a speaker out of my range)."""
    n, c, M = model.n, model.c, ev.shape[0]
    X, W, H, Bf, Fm = model.split(ev)
    kp = k_prev.reshape(M, c, n)
    U = model.speech(kp, H)                                                   # (M, l, c)
    s2 = 1 - torch.prod(1 - W[:, None, :, :] * U.transpose(1, 2)[:, :, None, :], dim=-1)
    keep = (1 - Bf * torch.prod(kp, dim=1))[:, None, :]
    return (Fm + (1 - Fm) * keep * (1 - (1 - kp) * (1 - X) * (1 - s2))).clamp(0, 1).reshape(M, c * n)


@pytest.mark.parametrize("n,w,c", [(3, 4, 3), (4, 6, 8)])
def test_ee_k_on_live_speakers_only_equals_the_dense_formula(n, w, c):
    """f_1 evaluated only on the (row, speaker) pairs with an unwitnessed encounter gives the same K
    and the same gradient of f_1 as evaluating it on every pair (replay rows of random play)."""
    t = make_trainer(SymmToMConfig(agents=n, width=w, pieces=c), MADDPGSettings(variant="ee", warmup=100, seed=1))
    t.play(32, 3, greedy=False, store=True)
    b = t.replay.sample(t.rng, 512)
    x, h = t.actor_inputs(b, False)
    ev = x[:, t.obs_size:]
    model = t.actor.knowledge
    _, W, _, _, _ = model.split(ev)
    live = (W.amax(1) > 0).float().mean()
    assert 0.01 < live < 0.9                  # some pairs skipped, some not: the check is not vacuous
    weights = torch.rand(n * c)
    k = model(h, ev)
    ref = _dense_k(model, h, ev)
    assert torch.allclose(k, ref, atol=1e-6)
    g = torch.autograd.grad((k * weights).sum(), list(model.parameters()))
    g_ref = torch.autograd.grad((ref * weights).sum(), list(model.parameters()))
    assert max(float(x.abs().max()) for x in g_ref) > 1e-3
    for a, r in zip(g, g_ref):
        assert torch.allclose(a, r, rtol=1e-4, atol=1e-6)


TINY = SymmToMConfig(agents=2, width=4, pieces=2, steps=8)


def test_ee_learns_tiny_setting_beyond_random():
    t = make_trainer(TINY, MADDPGSettings(variant="ee", num_envs=32, warmup=500, updates=10, batch=256, lr=3e-3))
    assert isinstance(t, EETrainer)
    before = t.evaluate(200).mean()
    for _ in range(15):
        t.iterate()
    after = t.evaluate(200).mean()
    assert before < 1.2
    assert after > 2.2


def test_ee_resume_is_bit_exact(tmp_path):
    s = MADDPGSettings(variant="ee", num_envs=4, hidden=16, batch=32, updates=2, buffer=500, warmup=50, seed=3)
    a = train_maddpg(TINY, s, str(tmp_path / "a"), 4, eval_every=2, eval_episodes=8, progress=False)
    train_maddpg(TINY, s, str(tmp_path / "b"), 2, eval_every=2, eval_episodes=8, progress=False)
    b = train_maddpg(TINY, s, str(tmp_path / "b"), 4, eval_every=2, eval_episodes=8, progress=False)
    for net in ("actor", "critic", "actor_target", "critic_target"):
        for v, v2 in zip(getattr(a, net).state_dict().values(), getattr(b, net).state_dict().values()):
            assert torch.equal(v, v2)
    rows = [[(r["iteration"], r["critic_loss"]) for r in read_scalars(str(tmp_path / d / "scalars.csv"))] for d in "ab"]
    assert rows[0] == rows[1] and len(rows[0]) == 4


def test_ee_agent_matches_batched_play_and_runs_tom_tests(tmp_path, capsys):
    """The single-episode agent takes the batched actor's greedy actions (same start, same K)."""
    cfg = SymmToMConfig(agents=3, width=6, pieces=3, tiebreak="first")
    t = make_trainer(cfg, MADDPGSettings(variant="ee", hidden=16, seed=5))
    bat, envs = _pair(cfg, 1, seed=7)
    agents = [t.make_agent() for _ in range(3)]
    for i, a in enumerate(agents):
        a.reset(envs[0].view(i))
    h = np.zeros((1, 3, 9), dtype=np.float32)
    obs, ev = bat.observations(), events_batched(bat, reset=True)
    for _ in range(cfg.episode_length):
        moves, pieces, h = t._act(np.concatenate([obs, ev], -1), h, greedy=True)
        single = [a.act(envs[0].view(i)) for i, a in enumerate(agents)]
        assert single == [(int(moves[0, i]), int(pieces[0, i])) for i in range(3)]
        assert np.allclose(agents[0].knowledge().reshape(-1), h[0, 0], atol=1e-6)
        bat.step(moves, pieces)
        envs[0].step(single)
        obs, ev = bat.observations(), events_batched(bat)
    assert np.allclose(envs[0].returns, bat.returns[0])
    returns = play_episode(SymmToMEnv(SymmToMConfig(agents=3, width=6, pieces=3)), [t.make_agent() for _ in range(3)],
                           seed=1)
    assert len(returns) == 3 and min(returns) >= 0
    r = run_tom_test("zeroth", 6, t.make_agent, trials=2, seed=0)
    assert 0 <= r.success_rate + r.failure_rate <= 1
    out = str(tmp_path / "ee")
    assert cli_main(["train", "symmtom-maddpg", "--variant", "ee", "--out", out, "--iterations", "1",
                     "--num-envs", "2", "--batch", "8", "--no-progress"]) == 0
    assert cli_main(["train", "symmtom-eval", out, "--episodes", "4"]) == 0
    assert "ee n=3 w=6 c=3: reward per agent" in capsys.readouterr().out
