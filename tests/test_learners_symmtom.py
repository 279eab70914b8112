"""SymmToM learners: batched K equals the single-episode tracker, MADDPG-CE learns a tiny setting,
bit-exact resume, the learned agent in play_episode and the theory-of-mind tests."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cfrkit.agents.rl import read_scalars
from cfrkit.agents.symmtom import play_episode
from cfrkit.agents.symmtom.belief import KnowledgeTracker
from cfrkit.agents.symmtom.learning import BatchedKnowledge, MADDPGSettings, MADDPGTrainer, train_maddpg
from cfrkit.cli import main as cli_main
from cfrkit.evaluation.symmtom_tests import run_tom_test
from cfrkit.games.symmtom import BatchedSymmToM, SymmToMConfig, SymmToMEnv


pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.mark.parametrize("mode", ["ce", "ge"])
@pytest.mark.parametrize("n,w,c", [(3, 4, 3), (4, 4, 8)])
def test_batched_knowledge_matches_single_episode_tracker(mode, n, w, c):
    cfg = SymmToMConfig(agents=n, width=w, pieces=c, tiebreak="first")   # no coins: both envs agree
    B = 12
    bat = BatchedSymmToM(cfg, B, seed=1)
    bat.reset()
    know = BatchedKnowledge(bat, mode)
    know.reset()
    envs, trackers = [], []
    for b in range(B):
        start = bat.start(b)
        env = SymmToMEnv(cfg, seed=0)
        env.reset(start=start)
        envs.append(env)
        trackers.append([KnowledgeTracker(env.view(i, False), mode) for i in range(n)])
    rng = np.random.default_rng(0)
    guesses = 0
    for _ in range(cfg.episode_length):
        moves, pieces = rng.integers(0, 5, (B, n)), rng.integers(0, c, (B, n))
        know.update(bat.step(moves, pieces))
        feats = know.features()
        guesses += int((know.guess != 0).sum())
        for b in range(B):
            envs[b].step([(int(moves[b, i]), int(pieces[b, i])) for i in range(n)], observe=False)
            for i in range(n):
                trackers[b][i].update(envs[b].view(i, False))
                assert np.array_equal(trackers[b][i].matrix().reshape(-1), feats[b, i].astype(bool))
    assert (guesses > 0) == (mode == "ge")   # GE's S[2] was exercised


TINY = SymmToMConfig(agents=2, width=4, pieces=2, steps=8)


def test_maddpg_ce_learns_tiny_setting_beyond_random():
    t = MADDPGTrainer(TINY, MADDPGSettings(variant="ce", num_envs=32, warmup=500, updates=10, batch=256, lr=3e-3))
    before = t.evaluate(200).mean()
    for _ in range(15):
        t.iterate()
    after = t.evaluate(200).mean()
    assert before < 1.2
    assert after > 2.2      # meeting and exchanging both pieces is worth 2 per agent, then the base 2 more


@pytest.mark.parametrize("variant", ["ce", "rmaddpg"])
def test_maddpg_resume_is_bit_exact(tmp_path, variant):
    s = MADDPGSettings(variant=variant, num_envs=4, hidden=16, batch=32, updates=2, buffer=500, warmup=50, seed=3)
    a = train_maddpg(TINY, s, str(tmp_path / "a"), 4, eval_every=2, eval_episodes=8, progress=False)
    train_maddpg(TINY, s, str(tmp_path / "b"), 2, eval_every=2, eval_episodes=8, progress=False)
    b = train_maddpg(TINY, s, str(tmp_path / "b"), 4, eval_every=2, eval_episodes=8, progress=False)
    for net in ("actor", "critic", "actor_target", "critic_target"):
        for v, v2 in zip(getattr(a, net).state_dict().values(), getattr(b, net).state_dict().values()):
            assert torch.equal(v, v2)
    cols = ("iteration", "train_reward", "eval_reward", "critic_loss", "actor_loss")
    rows = [[[r[c] for c in cols] for r in read_scalars(str(tmp_path / d / "scalars.csv"))] for d in "ab"]
    assert rows[0] == rows[1] and len(rows[0]) == 4


def test_learned_agent_plays_episodes_and_tom_tests():
    cfg = SymmToMConfig(agents=3, width=6, pieces=3)
    for variant in ("ge", "rmaddpg", "oracle"):
        t = MADDPGTrainer(cfg, MADDPGSettings(variant=variant, hidden=16))
        env = SymmToMEnv(SymmToMConfig(agents=3, width=6, pieces=3, oracle=variant == "oracle"))
        returns = play_episode(env, [t.make_agent() for _ in range(3)], seed=1)
        assert len(returns) == 3 and min(returns) >= 0
        r = run_tom_test("zeroth", 6, t.make_agent, trials=2, seed=0, oracle=variant == "oracle")
        assert 0 <= r.success_rate + r.failure_rate <= 1
    t = MADDPGTrainer(cfg, MADDPGSettings(variant="ce", hidden=16))
    with pytest.raises(ValueError, match="trained with n=3"):   # first_second has 4 agents
        run_tom_test("first_second", 6, t.make_agent, trials=1)


def test_oracle_features_match_the_oracle_environment():
    """The oracle learner's K (from the batched env) equals the single-episode oracle features."""
    cfg = SymmToMConfig(agents=3, width=5, pieces=6, tiebreak="first")
    t = MADDPGTrainer(cfg, MADDPGSettings(variant="oracle", hidden=16))
    bat = BatchedSymmToM(cfg, 1, seed=4)
    bat.reset()
    know = BatchedKnowledge(bat, "oracle")
    know.reset()
    start = bat.start(0)
    env = SymmToMEnv(SymmToMConfig(agents=3, width=5, pieces=6, tiebreak="first", oracle=True))
    env.reset(start=start)
    agent = t.make_agent()
    agent.reset(env.view(0))
    seen = []
    agent.actor = lambda x, h: (seen.append(x[0].numpy()), (torch.zeros(1, 5), torch.zeros(1, 6), None))[1]
    rng = np.random.default_rng(0)
    for _ in range(6):
        agent.act(env.view(0))
        expected = np.concatenate([bat.observations()[0, 0], know.features()[0, 0]])
        assert np.array_equal(seen[-1], expected)
        moves, pieces = rng.integers(0, 5, (1, 3)), rng.integers(0, 6, (1, 3))
        know.update(bat.step(moves, pieces))
        env.step([(int(moves[0, i]), int(pieces[0, i])) for i in range(3)], observe=False)


def test_cli_symmtom_train_and_eval(tmp_path, capsys):
    out = str(tmp_path / "m")
    assert cli_main(["train", "symmtom-maddpg", "--variant", "ge", "--agents", "3", "--width", "6", "--pieces", "3",
                     "--out", out, "--iterations", "1", "--num-envs", "2", "--batch", "8", "--no-progress"]) == 0
    assert cli_main(["train", "symmtom-eval", out, "--episodes", "4", "--tom", "--trials", "1"]) == 0
    text = capsys.readouterr().out
    assert "ge n=3 w=6 c=3: reward per agent" in text and "zeroth w=6" in text and "first_second" not in text
    assert cli_main(["train", "symmtom-maddpg", "--variant", "xx", "--out", out, "--no-progress"]) == 2
