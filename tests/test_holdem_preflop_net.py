"""DeepStack's auxiliary (preflop) value net for hold'em: data (the flop net averaged over flops), shards,
nets files, and the agent using it for the preflop lookahead's leaves."""
import os

import numpy as np
import pytest
import torch

from cfrkit.games import load
from cfrkit.value_nets.holdem import HoldemValueNets, train_street_net
from cfrkit.value_nets.holdem.bucketing import EHSBucketer, PreflopBucketer
from cfrkit.value_nets.holdem.datagen import (bucket_arrays, generate_holdem_dataset, load_holdem_dataset,
                                              preflop_targets, shard_path)
from cfrkit.value_nets.holdem.leaf_values import FlopNetPreflopValues
from cfrkit.value_nets.holdem.situations import preflop_strengths, sample_situations, strength_order
from cfrkit.value_nets.model import ValueNet, save_checkpoint

FLOPS = 40


def _flop_net(path, seed=0, buckets=10):
    torch.manual_seed(seed)
    model = ValueNet(buckets, (16,), batchnorm=False)
    for p in model.parameters():
        p.data.normal_(0, 0.5)
    save_checkpoint(path, model, {"bucketer": EHSBucketer("flop", buckets).to_dict(), "stack": 20000.0,
                                  "game": "holdem", "val_loss": 0.1})


@pytest.fixture(scope="module")
def preflop_data(tmp_path_factory):
    """A randomly initialised flop net (EHS buckets) and 12 preflop situations made from it in 3 shards."""
    tmp = tmp_path_factory.mktemp("preflop")
    ck = str(tmp / "flop_ck.pt")
    _flop_net(ck)
    nets = HoldemValueNets(game="holdem", stack=20000.0)
    nets.set_net("flop", ck)
    nets_dir = str(tmp / "nets")
    nets.save(nets_dir)
    out = str(tmp / "data_preflop")
    kw = dict(shard_size=4, seed=3, group=2, leaf_nets=nets_dir, workers=1, progress=False, flops=FLOPS)
    summary = generate_holdem_dataset(out, "preflop", 12, **kw)
    return {"tmp": tmp, "nets_dir": nets_dir, "nets": nets, "out": out, "kw": kw, "summary": summary,
            "data": load_holdem_dataset(out)}


def test_preflop_situations_are_deepstack_ranges():
    order = strength_order(())
    assert sorted(order) == list(range(1326))
    s = preflop_strengths()
    assert np.all(np.diff(s[order]) >= 0)
    from cfrkit.cards.encoding import parse_cards
    from cfrkit.cards.hands import pair_index

    aces, seven_deuce = pair_index(*parse_cards("AcAd")), pair_index(*parse_cards("7c2h"))
    assert s[aces] == s.max() and s[seven_deuce] < 0.4
    sit = sample_situations("preflop", 6, np.random.default_rng(0), group=3)
    assert sit.boards.shape == (6, 0) and np.allclose(sit.ranges.sum(-1), 1.0)
    assert (sit.ranges > 0).all()    # the recursive generator gives every pair some mass
    assert len(set(sit.contribs[:3])) == 1 and ((sit.contribs >= 100) & (sit.contribs < 20000)).all()


def test_preflop_targets_equal_flop_net_average(preflop_data):
    """Shard 1's targets are FlopNetPreflopValues on the same situations, pot fractions; bucketed by the 169
    classes; the settings digest includes the flop net's."""
    data, nets = preflop_data["data"], preflop_data["nets"]
    assert data["inputs"].shape == (12, 2 * 169 + 1) and data["targets"].shape == (12, 2 * 169)
    assert data["settings"]["flops"] == FLOPS and data["settings"]["leaf_net_digest"]
    seed = 3 * 1_000_003 + 1
    sit = sample_situations("preflop", 4, np.random.default_rng(seed), group=2)
    assert np.allclose(data["ranges"][4:8], sit.ranges, atol=1e-7)
    flop_fn = nets.leaf_values("flop")
    for g, idx in enumerate((np.arange(0, 2), np.arange(2, 4))):
        fn = FlopNetPreflopValues(flop_fn, None, num_flops=FLOPS, seed=[seed, g])
        r = sit.ranges[idx]
        v0, v1 = fn.evaluate(sit.contribs[idx], r[:, None, 0], r[:, None, 1])
        pot = 2 * sit.contribs[idx][:, None]
        np.testing.assert_allclose(data["values"][4 + idx, 0], v0[:, 0] / pot, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(data["values"][4 + idx, 1], v1[:, 0] / pot, rtol=1e-5, atol=1e-6)
    # groups draw different flops (independent sampling errors across the data)
    assert FlopNetPreflopValues(flop_fn, None, FLOPS, [seed, 0]).flops != FlopNetPreflopValues(flop_fn, None, FLOPS,
                                                                                               [seed, 1]).flops
    inputs, targets, mask = bucket_arrays(PreflopBucketer(), sit.boards, sit.contribs, sit.ranges,
                                          data["values"][4:8].astype(np.float64), 20000.0)
    np.testing.assert_allclose(data["targets"][4:8], targets, atol=1e-5)
    assert mask.all() and np.allclose(inputs[:, -1], sit.contribs / 20000.0)
    # another flop net -> another settings digest: the directory refuses it
    other = preflop_data["tmp"] / "nets2"
    _flop_net(str(preflop_data["tmp"] / "flop2.pt"), seed=1)
    n2 = HoldemValueNets(game="holdem", stack=20000.0)
    n2.set_net("flop", str(preflop_data["tmp"] / "flop2.pt"))
    n2.save(str(other))
    with pytest.raises(ValueError, match="other settings"):
        generate_holdem_dataset(preflop_data["out"], "preflop", 12, **{**preflop_data["kw"], "leaf_nets": str(other)})
    with pytest.raises(Exception, match="flop net"):
        generate_holdem_dataset(str(preflop_data["tmp"] / "x"), "preflop", 4, progress=False)


def test_preflop_targets_zero_sum(preflop_data):
    """Every sampled flop is zero-sum (the flop net's correction), so the per-flop sums (values / the ratio
    estimator's per-hand weight) cancel exactly between the players, in chips for the given ranges; the
    ratio-estimated values themselves are zero-sum up to the flop sample."""
    nets = preflop_data["nets"]
    sit = sample_situations("preflop", 4, np.random.default_rng(5), group=2)
    vals = preflop_targets(nets.leaf_values("flop"), sit, flops=FLOPS, seed=9)
    r = sit.ranges
    for g, idx in enumerate((np.arange(0, 2), np.arange(2, 4))):
        w = FlopNetPreflopValues(nets.leaf_values("flop"), None, FLOPS, [9, g]).weight
        s0 = (r[idx, 0] * vals[idx, 0] / w).sum(-1)
        s1 = (r[idx, 1] * vals[idx, 1] / w).sum(-1)
        scale = np.abs(s0) + np.abs(s1)
        assert (scale > 1e-3).all() and (np.abs(s0 + s1) < 1e-6 * scale).all()
    z = (r[:, 0] * vals[:, 0]).sum(-1) + (r[:, 1] * vals[:, 1]).sum(-1)
    mag = np.abs(r[:, 0] * vals[:, 0]).sum(-1)
    assert (np.abs(z) < 0.25 * mag).all()
    # the bucketed arrays keep the same sums (targets are range-weighted bucket means)
    data = preflop_data["data"]
    bz = (data["inputs"][:, :338] * data["targets"]).sum(1)
    hz = (data["ranges"] * data["values"]).sum((1, 2))
    np.testing.assert_allclose(bz, hz, atol=1e-5)


def test_preflop_shard_resumes(preflop_data):
    out, kw = preflop_data["out"], preflop_data["kw"]
    before = open(shard_path(out, 0), "rb").read()
    values = preflop_data["data"]["values"]
    os.remove(shard_path(out, 1))
    s = generate_holdem_dataset(out, "preflop", 12, **kw)
    assert s["generated"] == 4 and open(shard_path(out, 0), "rb").read() == before
    assert np.array_equal(load_holdem_dataset(out)["values"], values)
    with pytest.raises(ValueError, match="other settings"):
        generate_holdem_dataset(out, "preflop", 12, **{**kw, "flops": FLOPS + 1})


def test_agent_uses_trained_preflop_net(preflop_data):
    """The trained auxiliary net in a nets directory: the agent uses it by default for the preflop leaves;
    action probabilities of all 1326 hands sum to 1 and differ from the agent without it."""
    from cfrkit.agents.holdem_deepstack import HoldemDeepStackAgent

    tmp = preflop_data["tmp"]
    ck = str(tmp / "preflop.pt")
    summary = train_street_net(preflop_data["data"], ck, hidden=(16,), epochs=3, batch_size=4, patience=5,
                               progress=False, val_fraction=0.25)
    assert np.isfinite(summary["best_val_loss"])
    nets = HoldemValueNets.load(preflop_data["nets_dir"])
    nets.set_net("preflop", ck)
    d = str(tmp / "nets_aux")
    nets.save(d)
    again = HoldemValueNets.load(d)
    assert again.streets == ("preflop", "flop") and again.bucketer("preflop").num_buckets == 169
    assert again.extras["preflop"]["data"]["flops"] == FLOPS
    game = load("holdem")
    state = game.new_initial_state()
    while state.current_player() < 0:
        state.apply_action(state.legal_actions()[0])
    kw = dict(iterations=4, preflop_boards=10, bet_sizing={"preflop": {1: [1.0]}}, seed=0)
    probs = {}
    for name, extra in (("aux", {}), ("none", {"preflop_net": False})):
        agent = HoldemDeepStackAgent(game, nets=d, **kw, **extra)
        assert ("preflop" in agent.leaf_values) == (name == "aux")
        hs = agent.hand_strategy(state)
        assert hs.probs.shape[0] == 1326
        np.testing.assert_allclose(hs.probs.sum(1), 1.0, atol=1e-9)
        probs[name] = hs.probs
    assert np.abs(probs["aux"] - probs["none"]).max() > 1e-3
    spec = HoldemDeepStackAgent.from_spec(f"nets={d},preflop_net=0,iterations=2")
    assert "preflop" not in spec.leaf_values


def test_pipeline_preflop_round(preflop_data, tmp_path, benchmark_script):
    """``benchmarks/deepstack_holdem.py --streets preflop`` after a flop net: data, the net in the nets
    directory, the round in report.json."""
    import json
    import shutil

    bench = benchmark_script("deepstack_holdem")
    out = tmp_path / "run"
    shutil.copytree(preflop_data["nets_dir"], out / "nets")
    assert bench.main(["--preset", "tiny", "--out", str(out), "--streets", "preflop", "--preflop-samples", "12",
                       "--preflop-flops", "8", "--shard-size", "6", "--epochs", "2", "--hidden", "8",
                       "--workers", "1", "--no-progress"]) == 0
    nets = HoldemValueNets.load(str(out / "nets"))
    assert nets.streets == ("preflop", "flop")
    report = json.load(open(out / "report.json"))
    assert report["rounds"]["preflop"]["situations"] == 12 and report["rounds"]["preflop"]["buckets"] == 169
    assert json.load(open(out / "data_preflop" / "dataset.json"))["flops"] == 8
    assert bench.main(["--out", str(out), "--streets", "flop,bogus"]) == 2
