"""Evaluation protocols of the SymmToM learners (issue 32): sampled vs greedy actions, best vs last
checkpoint, held-out episodes.  The paper's MADDPG code acts by sampling (a Gumbel-softmax sample that
the environment argmaxes); cfrkit's Table 1 cell plays greedily.  These tests pin both protocols."""
import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cfrkit.agents.symmtom.learning import MADDPGSettings, MADDPGTrainer  # noqa: E402
from cfrkit.agents.symmtom.learning.maddpg import action_generator, pick_actions  # noqa: E402
from cfrkit.games.symmtom import SymmToMConfig  # noqa: E402


@pytest.fixture(scope="module")
def bench(benchmark_script):
    return benchmark_script("symmtom_table1")


def _uniform_trainer():
    """A 3/6/3 MADDPG trainer whose actor's heads output zeros: uniform move and piece distributions."""
    trainer = MADDPGTrainer(SymmToMConfig(agents=3, width=6, pieces=3), MADDPGSettings(variant="maddpg", seed=0), "cpu")
    with torch.no_grad():
        for layer in (trainer.actor.move, trainer.actor.piece):
            layer.weight.zero_()
            layer.bias.zero_()
    return trainer


def test_sampled_evaluation_of_a_uniform_actor_scores_the_random_policy(bench):
    """Sampling a uniform actor is the uniformly random policy: its mean reward per agent equals the
    random policy's (an independent loop over the batched environment) within a few standard errors;
    greedy play of the same actor stands still and says piece 0, far lower.  The sampled evaluation is
    reproducible from its seed and leaves the caller's torch random state alone."""
    trainer = _uniform_trainer()
    state = torch.get_rng_state()
    sampled = trainer.evaluate(1000, seed=3, greedy=False)
    assert torch.equal(torch.get_rng_state(), state)
    assert np.array_equal(sampled, trainer.evaluate(1000, seed=3, greedy=False))
    assert not np.array_equal(sampled[:500], trainer.evaluate(500, seed=4, greedy=False))
    rand_mean, rand_std = bench.random_policy_reward(3, 6, 3, episodes=2000, seed=5)
    se = np.hypot(sampled.std(ddof=1) / np.sqrt(sampled.size), rand_std / np.sqrt(2000))
    assert abs(sampled.mean() - rand_mean) < 4 * se, (sampled.mean(), rand_mean, se)
    greedy = trainer.evaluate(200, seed=3, greedy=True)
    assert greedy.mean() < 0.5 * sampled.mean()
    assert np.array_equal(greedy, trainer.evaluate(200, seed=3))          # greedy is the default


def test_pick_actions_samples_each_head_with_its_own_generator():
    """Greedy: each head's argmax.  Sampled: frequencies match softmax(logits) for 8,000 draws (within
    0.025, about 4.5 standard errors), and a generator seeded alike draws the same sequence."""
    p_move = torch.tensor([0.5, 0.25, 0.125, 0.0625, 0.0625])
    p_piece = torch.tensor([0.2, 0.7, 0.1])
    lm, lp = p_move.log()[None], p_piece.log()[None]
    assert pick_actions(lm, lp, None) == (0, 1)
    assert action_generator(False, 3) is None
    gen = action_generator(True, 3)
    draws = np.array([pick_actions(lm, lp, gen) for _ in range(8000)])
    np.testing.assert_allclose(np.bincount(draws[:, 0], minlength=5) / 8000, p_move.numpy(), atol=0.025)
    np.testing.assert_allclose(np.bincount(draws[:, 1], minlength=3) / 8000, p_piece.numpy(), atol=0.025)
    again = action_generator(True, 3)
    assert [pick_actions(lm, lp, again) for _ in range(50)] == [tuple(d) for d in draws[:50].tolist()]


def test_sampled_single_episode_agent_moves_a_uniform_actor_at_random():
    """``make_agent(sample=True)`` on a uniform actor picks every move (not just the argmax, 0)."""
    from cfrkit.agents.symmtom import play_episode
    from cfrkit.games.symmtom.env import SymmToMEnv

    trainer = _uniform_trainer()
    env = SymmToMEnv(trainer.config, seed=0)
    seen = set()

    class Spy:
        needs_observation = True

        def __init__(self, inner):
            self.inner, self.name = inner, "spy"

        def reset(self, view):
            self.inner.reset(view)

        def act(self, view):
            a = self.inner.act(view)
            seen.add(a[0])
            return a

    play_episode(env, [Spy(trainer.make_agent(sample=True, seed=i)) for i in range(3)], seed=1)
    assert seen == {0, 1, 2, 3, 4}
    seen.clear()
    play_episode(env, [Spy(trainer.make_agent()) for _ in range(3)], seed=1)
    assert seen == {0}


def test_protocols_keep_table_seeds_apart(bench):
    """The held-out protocols score on episodes neither the checkpoint choice (seed 0) nor Table 1's
    cell (seed 1) used; ``stored`` is Table 1's own protocol (best actor, greedy, seed 1)."""
    assert bench.PROTOCOLS["stored"] == ("best", True, 1)
    for name, (which, greedy, seed) in bench.PROTOCOLS.items():
        assert which in ("best", "last")
        if name != "stored":
            assert seed not in (0, 1)
            assert greedy == ("greedy" in name) and name.startswith(which)


@pytest.mark.slow
def test_protocol_scores_reproduce_the_stored_cell_and_tom_samples(bench, tmp_path, capsys):
    """A tiny 3/6/3 run (no gradient step yet): ``protocol_scores``' ``stored`` equals the JSON's cell;
    best and last actors are the same network here, so their protocols agree; ``tom --sampled`` keeps
    its own key beside the greedy one."""
    out = str(tmp_path)
    data = bench.train_run("maddpg", 3, 6, 3, 256, out, eval_every=1, eval_episodes=20, final_episodes=1000,
                           log=lambda s: None)
    sc = bench.protocol_scores("maddpg", 3, 6, 3, 0, out, episodes=400)
    assert sc["stored"] == pytest.approx(data["table"]["mean"], abs=6e-4)
    # the run's own sampled cell: the best actor, Table 1's episodes, sampled actions
    trainer, _ = bench.load_trained("maddpg", 3, 6, 3, out)
    assert data["table_sampled"]["mean"] == pytest.approx(trainer.evaluate(1000, seed=1, greedy=False).mean(), abs=6e-4)
    assert data["table_sampled"]["actions"] == "sampled" and data["stages"]["256"]["table_sampled"] == data["table_sampled"]
    assert bench.main(["report", "--out", out, "--heuristic-episodes", "0", "--plot", "none"]) == 0
    assert "| cfrkit, sampled actions: MADDPG | " in capsys.readouterr().out
    assert sc["best_greedy_fresh"] == sc["last_greedy_fresh"]
    assert sc["best_sampled_fresh"] == sc["last_sampled_fresh"]
    assert sc["best_sampled_fresh"] != sc["best_greedy_fresh"]
    save = os.path.join(out, "protocols.json")
    assert bench.main(["protocols", "--out", out, "--settings", "3/6/3", "--episodes", "400", "--save", save]) == 0
    assert "warning" not in capsys.readouterr().out
    assert json.load(open(save))["runs"]["maddpg_n3_w6_c3_s0"] == sc
    for extra in ([], ["--sampled"]):
        assert bench.main(["tom", "--models", "maddpg", "--tests", "zeroth", "--trials", "4", "--out", out] + extra) == 0
    tom = json.load(open(os.path.join(out, "tom_maddpg.json")))
    assert set(tom) == {"zeroth_w6", "zeroth_w6_sampled"}
    assert tom["zeroth_w6"]["actions"] == "greedy" and tom["zeroth_w6_sampled"]["actions"] == "sampled"
