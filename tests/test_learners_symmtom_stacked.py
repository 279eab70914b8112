"""Seeds trained together (``StackedSeeds``): each seed computes what it computes alone.

The reference is each seed's own :class:`MADDPGTrainer` run to the end before the next is built
(the unstacked update, its own torch stream); the group must give the same parameters (to float
rounding: batched instead of per-seed matrix products), the same replay and the same counters, and
for RMADDPG and EE, whose actors step per seed (autograd) after the stacked critic, too."""
import pytest

torch = pytest.importorskip("torch")

from cfrkit.agents.rl import LearnerError
from cfrkit.agents.symmtom.learning import MADDPGSettings, make_trainer
from cfrkit.agents.symmtom.learning.stacked import StackedSeeds
from cfrkit.games.symmtom import SymmToMConfig

CFG = SymmToMConfig(agents=3, width=4, pieces=3, steps=8)


pytestmark = pytest.mark.usefixtures("torch_one_thread")


def _settings(variant, seed):
    # warm-up after 2 iterations, then 16 x 8 / 20 = 6.4 gradient steps per iteration
    return MADDPGSettings(variant=variant, seed=seed, num_envs=16, warmup=256, batch=96, update_every=20)


def _max_diff(a, b):
    return max((x - y).abs().max().item() for x, y in zip(a.parameters(), b.parameters()))


@pytest.mark.parametrize("variant", ["maddpg", "ce", "rmaddpg", "ee"])
def test_stacked_seeds_equal_the_seeds_trained_alone(variant):
    seeds, iterations = (0, 1, 2), 6
    alone = []
    for seed in seeds:
        t = make_trainer(CFG, _settings(variant, seed), "cpu")
        for _ in range(iterations):
            t.iterate()
        alone.append(t)
    group = StackedSeeds.create(lambda st: make_trainer(CFG, st, "cpu"), [_settings(variant, s) for s in seeds])
    assert group.stacked and group.feed_forward == (variant in ("maddpg", "ce"))
    for _ in range(iterations):
        stats = group.iterate()
    assert len(stats) == 3 and all(s["updates"] > 0 for s in stats)
    # rounding (batched vs per-seed matrix products, which BLAS kernel a CPU picks) grows through Adam, whose step
    # is ~lr in size whatever the gradient's: 2e-5 was seen on an AMD EPYC.  5% of one step (lr 1e-3) still
    # catches a wrong batch, seed or update, which moves parameters by whole steps
    tol = 0.05 * _settings(variant, 0).lr
    for ref, t in zip(alone, group.trainers):
        assert (t.iteration, t.episodes, t.env_steps) == (ref.iteration, ref.episodes, ref.env_steps)
        assert torch.equal(t.replay.data["m"], ref.replay.data["m"])        # the same exploring episodes
        for net in ("actor", "critic", "actor_target", "critic_target"):
            assert _max_diff(getattr(t, net), getattr(ref, net)) <= tol, (variant, t.settings.seed, net)
        for opt in ("actor_opt", "critic_opt"):     # as many Adam steps
            steps = [getattr(x, opt).opt.state_dict()["state"][0]["step"].item() for x in (t, ref)]
            assert steps[0] == steps[1] > 0
    # the seeds really differ (separate streams, not one run three times)
    assert _max_diff(group.trainers[0].actor, group.trainers[1].actor) > 1e-3


def test_stacked_seeds_refuse_mixed_runs():
    a = make_trainer(CFG, _settings("maddpg", 0), "cpu")
    b = make_trainer(CFG, _settings("ce", 1), "cpu")
    with pytest.raises(LearnerError, match="only the seed may differ"):
        StackedSeeds([a, b], [torch.get_rng_state()] * 2)
    c = make_trainer(CFG, _settings("maddpg", 1), "cpu")
    c.iterate()
    with pytest.raises(LearnerError, match="same iteration"):
        StackedSeeds([a, c], [torch.get_rng_state()] * 2).iterate()
