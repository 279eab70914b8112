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


# ---------------------------------------------------------------- the stacked step's fast parts (branch symmtom-speed4)
# Each replaces a composition of the earlier step; it must give the same bits (torch.equal), so that runs stay
# comparable with those trained before (benchmarks/symmtom_stacked_hash.py checks the whole step end to end).


def test_step_grads_gives_each_optimiser_its_own_step_bit_for_bit():
    """``step_grads`` (one functional fused Adam call over all vectors) and ``FlatAdam.step_grad`` (the same call,
    one vector) against the reference: clip_grad_norm_'s rule, then each optimiser's own ``torch.optim.Adam.step``."""
    from cfrkit.agents.symmtom.learning.flat import FlatAdam, flatten_parameters, step_grads

    def build(seed):
        torch.manual_seed(seed)
        net = torch.nn.Sequential(torch.nn.Linear(7, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3))
        return net, FlatAdam(net, flatten_parameters(net), 1e-3, 0.5)

    def reference_step(o, g):
        g = g * (0.5 / (torch.linalg.vector_norm(g) + 1e-6)).clamp(max=1.0)
        o.flat.grad = g
        o.opt.step()
        o.flat.grad = None
        return g

    alone = [build(s) for s in range(3)]
    fused = [build(s) for s in range(3)]
    single = [build(s) for s in range(3)]
    gen = torch.Generator().manual_seed(5)
    for step in range(4):               # the first step creates Adam's state (fallback), then the fused call
        grads = [torch.randn(o.flat.numel(), generator=gen) * (10.0 if step == 2 else 0.1) for _, o in alone]
        clipped = [reference_step(o, g.clone()) for (_, o), g in zip(alone, grads)]
        step_grads([o for _, o in fused], [g.clone() for g in grads])
        for (_, o), g in zip(single, grads):
            o.step_grad(g.clone())
        for (_, a), c, (_, b), (_, d) in zip(alone, clipped, fused, single):
            for x in (b, d):
                assert torch.equal(a.flat, x.flat) and torch.equal(c, x.last_grad)
                sa, sb = a.opt.state[a.flat], x.opt.state[x.flat]
                for k in ("step", "exp_avg", "exp_avg_sq"):
                    assert torch.equal(sa[k], sb[k]), (step, k)
    assert fused[0][1].opt.state[fused[0][1].flat]["step"].item() == 4
    assert not torch.equal(fused[0][1].flat, fused[1][1].flat)
    with pytest.raises(ValueError, match="optimisers"):
        step_grads([alone[0][1]], [])


@pytest.mark.parametrize("variant", ["maddpg", "ee"])
def test_gather_equals_sample_stack_and_ego_rows(variant):
    import copy

    group = StackedSeeds.create(lambda st: make_trainer(CFG, st, "cpu"), [_settings(variant, s) for s in (0, 1)])
    for _ in range(3):
        group.iterate()
    M = 32
    rngs = [copy.deepcopy(t.rng) for t in group.trainers]
    b = group._gather(M)
    n, F = CFG.agents, group.trainers[0].features
    assert b["x"].shape == (2, M * n, n * F)
    for s, (t, rng) in enumerate(zip(group.trainers, rngs)):
        ref = t.replay.sample(rng, M)
        assert t.rng.bit_generator.state == rng.bit_generator.state      # the same draw from the seed's generator
        assert torch.equal(b["x"][s], t.ego_rows(ref["x"])) and torch.equal(b["x2"][s], t.ego_rows(ref["x2"]))
        for k, v in ref.items():
            if k not in ("x", "x2"):
                assert torch.equal(b[k][s], v), k
        own = group._seed_batch(b, s, M, F)
        for k, v in ref.items():
            assert torch.equal(own[k], v), k


def test_gumbel_noise_into_draws_what_gumbel_noise_draws():
    from cfrkit.agents.symmtom.learning.maddpg import gumbel_noise, gumbel_noise_into

    torch.manual_seed(3)
    ref = [gumbel_noise(torch.empty(64, k)) for k in (5, 12)]
    torch.manual_seed(3)
    buf = torch.empty(2, 64, 12)
    out = [gumbel_noise_into(torch.empty(64, 5)), gumbel_noise_into(buf[1])]
    assert torch.equal(out[0], ref[0]) and torch.equal(buf[1], ref[1]) and out[1].data_ptr() == buf[1].data_ptr()
    assert torch.isfinite(buf[1]).all() and ref[1].std() > 0.5


def test_events_heard_speech_equals_the_boolean_reference():
    """MADDPG-EE's S[1] block (speech of l heard by k reached k, l and l's hearers) as the earlier
    (B, k, l, piece, j) boolean array computed it, on random positions and speech."""
    import numpy as np

    from cfrkit.agents.symmtom.learning.estimated import _events

    rng = np.random.default_rng(0)
    for n, c in ((3, 3), (4, 12), (4, 8), (2, 5)):
        B = 200
        eye = np.eye(n, dtype=bool)
        in_range = (rng.random((B, n, n)) < 0.45) & ~eye[None]
        spoken = rng.integers(-1, c, size=(B, n))
        on_base = rng.random((B, n)) < 0.3
        first = rng.random((B, n, c)) < 0.3
        got = _events(in_range, spoken, on_base, first, c, reset=False)
        onehot = (spoken[:, :, None] == np.arange(c)[None, None, :]) & (spoken >= 0)[:, :, None]
        X = onehot[:, :, :, None] & in_range[:, :, None, :]
        reach = in_range | eye[None]
        heard = onehot[:, None, :, :, None] & in_range[:, :, :, None, None]
        X |= (heard & (reach[:, None, :, None, :] | eye[None, :, None, None, :])).any(2)
        assert np.array_equal(got[:, :, :c * n], X.reshape(B, n, c * n).astype(np.float32)), (n, c)
        assert 0 < X.mean() < 1


@pytest.mark.parametrize("variant", ["maddpg", "ee"])
def test_stacked_seeds_charge_each_seed_its_share_of_the_cpu(variant):
    """A stacked seed's ``cpu_seconds`` / ``wall_seconds`` hold its own acting plus 1/S of the shared
    gradient steps: summed over the seeds they equal the group's CPU and wall time (the whole table's
    cost is the sum over the runs' JSONs), and no seed holds the stack's total."""
    import time

    group = StackedSeeds.create(lambda st: make_trainer(CFG, st, "cpu"), [_settings(variant, s) for s in (0, 1, 2)])
    for _ in range(2):   # the warm-up: no gradient steps yet
        group.iterate()
    cpu0 = [t.cpu_seconds for t in group.trainers]
    wall0 = [t.wall_seconds for t in group.trainers]
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(6):
        stats = group.iterate()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    assert all(s["updates"] > 0 for s in stats)
    shares = [t.cpu_seconds - c for t, c in zip(group.trainers, cpu0)]
    walls = [t.wall_seconds - w for t, w in zip(group.trainers, wall0)]
    assert sum(shares) == pytest.approx(cpu, rel=0.05, abs=0.02)
    assert sum(walls) == pytest.approx(wall, rel=0.05, abs=0.02)
    assert all(0 < s < 0.6 * cpu for s in shares)
