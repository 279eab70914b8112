"""Hanabi learners (IPPO on the batched engine): learning on a tiny variant, bit-exact resume, masking."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cfrkit.agents.hanabi.learning import (IPPOSettings, IPPOTrainer, RainbowSettings, RainbowTrainer, greedy_policy,
                                          selfplay_scores, train_ippo, train_rainbow)
from cfrkit.agents.hanabi.learning.networks import ActorCritic, DuelingDistributionalQ, masked_entropy
from cfrkit.agents.rl import read_scalars
from cfrkit.cli import main as cli_main
from cfrkit.games.hanabi import HanabiConfig

# 2 players, 1 colour, ranks 1-2, hand 1: the person-by-person optimum scores 2.0 (tests/solvers).
TINY = HanabiConfig(players=2, colors=1, ranks=2, hand_size=1, max_information_tokens=1, max_life_tokens=1)


pytestmark = pytest.mark.usefixtures("torch_one_thread")


def _random_policy(seed):
    rng = np.random.default_rng(seed)

    def policy(obs, mask):
        return np.array([rng.choice(np.flatnonzero(m)) for m in mask], dtype=np.int64)

    return policy


def test_ippo_learns_tiny_hanabi_beyond_random():
    random_mean = selfplay_scores(_random_policy(0), TINY, 500, seed=3).mean()
    t = IPPOTrainer(TINY, IPPOSettings(num_envs=128, hidden=(64, 64), lr=3e-3, minibatch=512, seed=0))
    for _ in range(10):
        t.iterate()
    learned = t.evaluate(500, seed=3).mean()
    assert random_mean < 0.6
    assert learned > 1.7            # optimum 2.0
    assert learned <= 2.0


def test_ippo_resume_is_bit_exact(tmp_path):
    s = IPPOSettings(num_envs=16, hidden=(32,), minibatch=64, epochs=2, seed=5)
    straight = train_ippo(TINY, s, str(tmp_path / "a"), 4, eval_every=2, eval_games=50, progress=False)
    train_ippo(TINY, s, str(tmp_path / "b"), 2, eval_every=2, eval_games=50, progress=False)
    resumed = train_ippo(TINY, s, str(tmp_path / "b"), 4, eval_every=2, eval_games=50, progress=False)
    for (k, v), (k2, v2) in zip(straight.net.state_dict().items(), resumed.net.state_dict().items()):
        assert k == k2 and torch.equal(v, v2)
    assert straight.env_steps == resumed.env_steps
    cols = ("iteration", "env_steps", "train_score", "eval_score", "policy_loss", "value_loss")
    rows_a = [[r[c] for c in cols] for r in read_scalars(str(tmp_path / "a" / "scalars.csv"))]
    rows_b = [[r[c] for c in cols] for r in read_scalars(str(tmp_path / "b" / "scalars.csv"))]
    assert rows_a == rows_b and len(rows_a) == 4
    # settings that differ from the checkpoint's are refused in one line
    with pytest.raises(ValueError, match="other settings"):
        train_ippo(TINY, IPPOSettings(num_envs=8, hidden=(32,), seed=5), str(tmp_path / "b"), 5, progress=False)


def _rainbow_settings(**kw):
    base = dict(num_envs=64, hidden=(64, 64), lr=1e-3, batch=128, updates=16, warmup=200, target_every=50,
                epsilon_decay_steps=2000, epsilon_final=0.05, v_min=-3, v_max=3, atoms=21, seed=0, noisy=False,
                n_step=1)
    base.update(kw)
    return RainbowSettings(**base)


@pytest.mark.parametrize("extra, iterations", [(dict(), 20), (dict(noisy=True, n_step=3), 30)])
def test_rainbow_learns_tiny_hanabi_beyond_random(extra, iterations):
    """Epsilon-greedy 1-step (the challenge's) and noisy nets with 3-step returns (the default)."""
    t = RainbowTrainer(TINY, _rainbow_settings(**extra))
    for _ in range(iterations):
        t.iterate()
    assert t.evaluate(500, seed=3).mean() > 1.6      # random 0.24, optimum 2.0


@pytest.mark.parametrize("extra", [dict(), dict(noisy=True, n_step=3)])
def test_rainbow_resume_is_bit_exact(tmp_path, extra):
    s = _rainbow_settings(num_envs=8, hidden=(16, 16), batch=16, updates=2, warmup=10, target_every=3, **extra)
    a = train_rainbow(TINY, s, str(tmp_path / "a"), 4, eval_every=2, eval_games=20, progress=False)
    train_rainbow(TINY, s, str(tmp_path / "b"), 2, eval_every=2, eval_games=20, progress=False)
    b = train_rainbow(TINY, s, str(tmp_path / "b"), 4, eval_every=2, eval_games=20, progress=False)
    for v, v2 in zip(a.net.state_dict().values(), b.net.state_dict().values()):
        assert torch.equal(v, v2)
    assert np.array_equal(a.replay.priority, b.replay.priority) and a.env_steps == b.env_steps
    rows = [[(r["train_score"], r["loss"], r["eval_score"]) for r in read_scalars(str(tmp_path / d / "scalars.csv"))]
            for d in "ab"]
    assert rows[0] == rows[1]


def test_masking_never_picks_an_illegal_move():
    gen = torch.Generator().manual_seed(0)
    net = ActorCritic(20, 12, (16,))
    torch.nn.init.normal_(net.policy.weight, std=5.0, generator=gen)   # sharp logits favouring masked moves too
    obs = torch.rand(4000, 20, generator=gen)
    mask = torch.rand(4000, 12, generator=gen) < 0.3
    mask[torch.arange(4000), torch.randint(0, 12, (4000,), generator=gen)] = True
    logits, _ = net(obs, mask)
    draws = torch.multinomial(torch.softmax(logits, -1), 8, replacement=True, generator=gen)
    assert mask.gather(1, draws).all()
    assert mask.gather(1, logits.argmax(-1, keepdim=True)).all()
    assert torch.isfinite(masked_entropy(logits, mask)).all()
    q = DuelingDistributionalQ(20, 12, atoms=11, hidden=(16, 16))
    q.resample_noise(gen)
    assert mask.gather(1, q.q_values(obs, mask).argmax(-1, keepdim=True)).all()
    # the engine rejects illegal moves, so whole games with an untrained net prove legality too
    scores = selfplay_scores(greedy_policy(ActorCritic(TINY.engine_config().encoding_length,
                                                       TINY.engine_config().num_moves, (8,))), TINY, 64)
    assert scores.shape == (64,) and scores.min() >= 0 and scores.max() <= 2


def test_cli_train_and_eval(tmp_path, capsys):
    out = str(tmp_path / "run")
    args = ["train", "hanabi-ippo", "--out", out, "--preset", "very-small", "--config", "ranks=2,hand_size=1",
            "--iterations", "2", "--num-envs", "8", "--hidden", "16", "--minibatch", "64", "--no-progress"]
    assert cli_main(args) == 0
    assert cli_main(["train", "hanabi-eval", out, "--games", "20"]) == 0
    assert "self-play (20 games" in capsys.readouterr().out
    rb = str(tmp_path / "rb")
    assert cli_main(["train", "hanabi-rainbow", "--out", rb, "--preset", "very-small", "--config", "ranks=2,hand_size=1",
                     "--iterations", "1", "--num-envs", "4", "--hidden", "16,16", "--no-progress"]) == 0
    assert cli_main(["train", "hanabi-eval", rb, "--games", "10"]) == 0
    assert cli_main(["train", "hanabi-ippo", "--out", out, "--hidden", "x", "--no-progress"]) == 2
    assert cli_main(["train", "hanabi-eval", str(tmp_path / "missing")]) == 2
