"""``cfrkit.value_nets.holdem.studies``: the studies the DeepStack benchmark scripts print (river targets, auxiliary
net targets and error, random-weight nets), on tiny inputs."""
import numpy as np
import pytest
import torch

from cfrkit.value_nets.holdem import HoldemValueNets
from cfrkit.value_nets.holdem.bucketing import PreflopBucketer
from cfrkit.value_nets.holdem.situations import sample_situations
from cfrkit.value_nets.holdem.studies import (preflop_flops_study, preflop_net_study, random_holdem_nets,
                                              river_target_study)
from cfrkit.value_nets.model import ValueNet


@pytest.fixture(scope="module")
def nets(tmp_path_factory):
    """Random-weight river/turn/flop nets (small) plus a random auxiliary preflop net, saved and loaded."""
    n = random_holdem_nets("cpu", seed=1, hidden=(16,), river_buckets=20, buckets=10)
    torch.manual_seed(2)
    n.models["preflop"] = ValueNet(169, (16,), batchnorm=False).eval()
    n.extras["preflop"] = {"bucketer": PreflopBucketer().to_dict(), "val_loss": 0.5}
    d = str(tmp_path_factory.mktemp("study_nets") / "nets")
    n.save(d)
    return HoldemValueNets.load(d)


def test_random_nets_have_the_shape_and_are_zero_sum(nets):
    assert nets.streets == ("preflop", "flop", "turn", "river") and nets.stack == 20000.0
    assert nets.bucketer("river").num_buckets == 20 and nets.bucketer("flop").num_buckets == 10
    sit = sample_situations("river", 3, np.random.default_rng(0), group=3)
    v = nets.predict("river", sit.boards, sit.contribs, sit.ranges)
    assert v.shape == (3, 2, 1326) and np.abs(v).max() > 1e-3
    # the net's zero-sum correction survives the scatter to hands: both players' range-weighted values cancel
    total = (sit.ranges[:, 0] * v[:, 0]).sum(-1) + (sit.ranges[:, 1] * v[:, 1]).sum(-1)
    np.testing.assert_allclose(total, 0.0, atol=1e-5)


def test_preflop_studies(nets):
    res = preflop_flops_study(nets, count=2, seed=0, flop_counts=(2, 40), reference=40)
    assert res["situations"] == 2 and res["mean_abs_value_40"] > 0
    few, many = res["flops_2"]["range_weighted_mae_vs_40"], res["flops_40"]["range_weighted_mae_vs_40"]
    assert 0 < many < few   # the sampling error falls with more flops
    assert res["flops_2"]["cpu_s_per_situation"] > 0
    net = preflop_net_study(nets, count=2, seed=0, flops=20, reference=40)
    assert net["val_loss"] == 0.5 and net["reference_flops"] == 40
    for row in ("net", "targets_20_flops", "zero"):
        assert np.isfinite(net[row]["range_weighted_mae"]) and net[row]["huber"] >= 0
    # 20-flop targets are closer to the 40-flop reference than predicting 0 is
    assert net["targets_20_flops"]["range_weighted_mae"] < net["zero"]["range_weighted_mae"]


def test_river_target_study_small():
    res = river_target_study(seed=0, count=2, reference_iterations=200)
    assert set(res) == {"dcfr_100_vs_200", "deepstack_cfr+_averaged_vs_dcfr_average_strategy", "situations"}
    assert 0 < res["dcfr_100_vs_200"] < 0.1
    assert 0 < res["deepstack_cfr+_averaged_vs_dcfr_average_strategy"] < 0.1
