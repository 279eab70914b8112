"""Hold'em value nets: bucketing, DeepStack situations, datagen shards, nets files, leaf values."""
import os

import numpy as np
import pytest
import torch

from cfrkit.cards.equity import board_strengths
from cfrkit.cards.hands import HOLE_PAIRS, blocked_pairs
from cfrkit.games import load
from cfrkit.value_nets.holdem import HoldemValueNets
from cfrkit.value_nets.holdem.bucketing import (EHSBucketer, PreflopBucketer, RiverStrengthBucketer,
                                                holdem_bucketer_from_dict)
from cfrkit.value_nets.holdem.datagen import (bucket_arrays, generate_holdem_dataset, load_holdem_dataset,
                                              shard_path, solve_situations)
from cfrkit.value_nets.holdem.situations import (DEEPSTACK_POT_INTERVALS, sample_pot, sample_situations, strength_order,
                                                 street_start_state)
from cfrkit.value_nets.model import ValueNet, ValueNetFileError, save_checkpoint

BOARD = (0, 9, 18, 27, 44)  # 2c 4d 6h 8s Kc


def test_river_buckets_follow_hand_strength():
    b = RiverStrengthBucketer(50)
    ids = b.hand_buckets(BOARD)
    blocked = blocked_pairs(list(BOARD))
    assert (ids[blocked] == -1).all() and ((ids >= 0) & (ids < 50))[~blocked].all()
    s = board_strengths(list(BOARD))
    live = np.flatnonzero(~blocked)
    order = live[np.argsort(s[live], kind="stable")]
    assert (np.diff(ids[order]) >= 0).all()  # stronger hands never get a lower class
    assert ids[order[-1]] == 49 and ids[order[0]] == 0  # the nuts beat (almost) everything, the worst hand nothing
    assert (b.hand_buckets(BOARD[::-1]) == ids).all()  # board order does not matter
    assert (holdem_bucketer_from_dict(b.to_dict()).hand_buckets(BOARD) == ids).all()


def test_flop_turn_preflop_buckets():
    turn = EHSBucketer("turn", 8, runouts=8)
    ids = turn.hand_buckets(BOARD[:4])
    assert ids.max() < 8 and (ids[blocked_pairs(list(BOARD[:4]))] == -1).all()
    assert len(np.unique(ids[ids >= 0])) >= 6  # percentile buckets are all used
    assert (holdem_bucketer_from_dict(turn.to_dict()).hand_buckets(BOARD[:4]) == ids).all()
    pre = PreflopBucketer().hand_buckets(())
    assert len(np.unique(pre)) == 169
    # pocket aces (6 combos) share one class
    aces = [i for i, (a, c) in enumerate(HOLE_PAIRS) if a // 4 == 12 and c // 4 == 12]
    assert len(aces) == 6 and len(set(pre[aces])) == 1


def test_situation_generator_properties():
    sit = sample_situations("river", 25, np.random.default_rng(3), group=10)
    assert sit.ranges.shape == (25, 2, 1326)
    assert np.allclose(sit.ranges.sum(-1), 1.0)
    for i in range(25):
        blocked = blocked_pairs(list(sit.boards[i]))
        assert (sit.ranges[i][:, blocked] == 0).all() and (sit.ranges[i][:, ~blocked] > 0).all()
    assert len(np.unique(sit.groups)) == 3
    for g in np.unique(sit.groups):
        idx = sit.groups == g
        assert len(np.unique(sit.contribs[idx])) == 1 and len(np.unique(sit.boards[idx], axis=0)) == 1
    # recursive generator: the weaker half of the strength order holds a uniform fraction of the mass
    order = strength_order(sit.boards[0])
    many = sample_situations("river", 400, np.random.default_rng(4), group=400,
                             boards=np.array([sit.boards[0]]))
    low = many.ranges[:, 0, order[:len(order) // 2]].sum(1)
    assert abs(low.mean() - 0.5) < 0.05 and low.min() < 0.05 and low.max() > 0.95
    # pots follow DeepStack's intervals
    gen = np.random.default_rng(5)
    pots = np.array([sample_pot(gen) for _ in range(500)])
    assert all(any(lo <= p <= hi for lo, hi in DEEPSTACK_POT_INTERVALS) for p in pots)
    assert (pots == 100).mean() > 0.1 and (pots > 6000).mean() > 0.1
    again = sample_situations("river", 25, np.random.default_rng(3), group=10)
    assert (again.ranges == sit.ranges).all() and (again.boards == sit.boards).all()


def test_street_start_state():
    g = load("holdem")
    st = street_start_state(g, BOARD[:4], 350)
    assert st.spent == [350, 350] and list(st.board) == list(BOARD[:4]) and st.current_player() == 0


def test_river_solves_are_zero_sum_and_match_range_solver():
    from cfrkit.solvers.public.tree import RangeSolver
    from cfrkit.value_nets.holdem.datagen import sizing_levels, street_tree

    g = load("holdem")
    sit = sample_situations("river", 3, np.random.default_rng(7), group=3)
    vals = solve_situations(g, sit, 200)
    zs = (sit.ranges * vals).sum((1, 2))
    assert np.abs(zs).max() < 1e-9  # pot fractions, normalised ranges
    # the values are those of a profile: RangeSolver (independent numpy code) evaluates the compiled
    # solver's average strategy to the same per-hand values
    from cfrkit.solvers.public.flat_range_cfr import FlatRangeSolver
    tree = street_tree(g, sizing_levels(None), sit.boards[0], sit.contribs[0], False)
    flat = FlatRangeSolver(tree, ranges=sit.ranges[0])
    flat.run(200)
    assert np.allclose(solve_situations(g, sit, 200)[0], vals[0], atol=1e-12)  # deterministic
    rs = RangeSolver(tree, ranges=sit.ranges[:1])
    nv, _ = rs.node_values(rs.from_numpy_strategy(flat.average_strategy()))
    pot = 2 * sit.contribs[0]
    for p in (0, 1):
        assert np.allclose(rs.be.to_numpy(nv[0][p])[0] / pot, vals[0, p], atol=1e-9)


def test_datagen_shards_resumable_and_equal_direct_solves(tmp_path):
    g = load("holdem")
    out = str(tmp_path / "river")
    kw = dict(shard_size=4, iterations=30, seed=2, group=2, num_buckets=20, workers=1, progress=False)
    generate_holdem_dataset(out, "river", 8, **kw)
    data = load_holdem_dataset(out)
    assert data["inputs"].shape == (8, 41) and data["targets"].shape == (8, 40)
    # shard 1 equals a direct solve of the same seeded situations
    rng = np.random.default_rng(2 * 1_000_003 + 1)
    sit = sample_situations("river", 4, rng, group=2)
    direct = solve_situations(g, sit, 30)
    assert np.allclose(data["values"][4:], direct, atol=1e-6)
    assert np.allclose(data["ranges"][4:], sit.ranges, atol=1e-7)
    b = RiverStrengthBucketer(20)
    inputs, targets, mask = bucket_arrays(b, sit.boards, sit.contribs, sit.ranges, direct, 20000.0)
    assert np.allclose(data["targets"][4:], targets, atol=1e-5) and np.allclose(inputs[:, :20].sum(1), 1)
    # bucketed targets keep the zero-sum property: r0 . v0 + r1 . v1 = 0 per situation
    assert np.abs((inputs[:, :40] * targets).sum(1)).max() < 1e-5
    # resume: a deleted and a damaged shard are regenerated identically, others untouched
    before = open(shard_path(out, 0), "rb").read()
    os.remove(shard_path(out, 1))
    generate_holdem_dataset(out, "river", 8, **kw)
    assert open(shard_path(out, 0), "rb").read() == before
    assert np.array_equal(load_holdem_dataset(out)["values"], data["values"])
    with open(shard_path(out, 0), "r+b") as f:
        f.seek(100)
        f.write(b"garbage")
    generate_holdem_dataset(out, "river", 8, **kw)
    assert np.array_equal(load_holdem_dataset(out)["values"], data["values"])
    with pytest.raises(ValueError, match="other settings"):
        generate_holdem_dataset(out, "river", 8, **{**kw, "iterations": 31})


def _tiny_nets(tmp_path, num_buckets=20):
    torch.manual_seed(0)
    model = ValueNet(num_buckets, (8,), batchnorm=False)
    for p in model.parameters():
        p.data.normal_(0, 0.5)
    ck = str(tmp_path / "river_ck.pt")
    save_checkpoint(ck, model, {"bucketer": RiverStrengthBucketer(num_buckets).to_dict(), "stack": 20000.0,
                                "game": "holdem", "val_loss": 0.1})
    nets = HoldemValueNets(game="holdem", stack=20000.0)
    nets.set_net("river", ck)
    return nets, model


def test_nets_files_round_trip_and_errors(tmp_path):
    nets, model = _tiny_nets(tmp_path)
    d = str(tmp_path / "nets")
    nets.save(d)
    again = HoldemValueNets.load(d)
    assert again.streets == ("river",)
    x = torch.rand(3, 41)
    with torch.no_grad():
        assert torch.allclose(again.models["river"](x), model.eval()(x))
    with pytest.raises(ValueNetFileError, match="no turn value net"):
        again.leaf_values("turn")
    with pytest.raises(ValueNetFileError, match="not a directory"):
        HoldemValueNets.load(str(tmp_path / "missing"))
    with pytest.raises(ValueNetFileError, match="nets.json missing"):
        HoldemValueNets.load(str(tmp_path))
    with open(os.path.join(d, "river.pt"), "wb") as f:
        f.write(b"not a checkpoint")
    with pytest.raises(ValueNetFileError):
        HoldemValueNets.load(d)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_leaf_values_on_a_turn_tree(tmp_path, backend):
    """Shapes and units of the leaf function against a per-hand computation, and a solve that uses it."""
    from cfrkit.solvers.public.tree import RangeSolver, build_public_tree
    from cfrkit.solvers.public.array_backend import make_backend

    nets, model = _tiny_nets(tmp_path)
    g = load("holdem")
    state = street_start_state(g, BOARD[:4], 6000)
    tree = build_public_tree(g, state, bet_sizing={1: [1.0], 2: []}, depth_limit=True)
    leaves = [tree.nodes[i] for i in tree.leaf_nodes]
    assert leaves and all(len(n.board) == 5 for n in leaves)
    fn = nets.leaf_values("river")
    rng = np.random.default_rng(0)
    L, B = 5, 2
    sel = leaves[:L]
    r0, r1 = rng.random((L, B, 1326)), rng.random((L, B, 1326))
    for k, n in enumerate(sel):
        r0[k][:, blocked_pairs(list(n.board))] = 0
        r1[k][:, blocked_pairs(list(n.board))] = 0
    be = make_backend(backend, "cpu", None)
    v0, v1 = fn(sel, be.asarray(r0), be.asarray(r1), be)
    v0, v1 = be.to_numpy(v0), be.to_numpy(v1)
    assert v0.shape == (L, B, 1326)
    bucketer = nets.bucketer("river")
    for k, n in enumerate(sel):
        ids = bucketer.hand_buckets(n.board)
        pot = n.contrib[0] + n.contrib[1]
        for b in range(B):
            x = np.zeros(41)
            for p, r in ((0, r0[k, b]), (1, r1[k, b])):
                x[p * 20:(p + 1) * 20] = np.bincount(ids[ids >= 0], weights=r[ids >= 0], minlength=20)
                x[p * 20:(p + 1) * 20] /= r.sum()
            x[40] = n.contrib[0] / 20000.0
            with torch.no_grad():
                out = model(torch.as_tensor(x[None], dtype=torch.float32))[0].numpy()
            live = ids >= 0
            want0 = np.where(live, out[:20][np.maximum(ids, 0)], 0) * pot * r1[k, b].sum()
            want1 = np.where(live, out[20:][np.maximum(ids, 0)], 0) * pot * r0[k, b].sum()
            assert np.allclose(v0[k, b], want0, rtol=1e-4, atol=1e-3)
            assert np.allclose(v1[k, b], want1, rtol=1e-4, atol=1e-3)
            # chips are zero-sum at the leaf: r0 . v0 + r1 . v1 = 0 (the net's correction, scaled)
            assert abs(r0[k, b] @ v0[k, b] + r1[k, b] @ v1[k, b]) < 1e-3 * pot * r0[k, b].sum() * r1[k, b].sum()
    if backend == "numpy":  # (torch's CPU showdown kernel is slow; the leaf function was checked above)
        solver = RangeSolver(tree, algorithm="cfr+", leaf_values=fn, backend=backend).run(3)
        vals = solver.be.to_numpy(solver.average_root_values())
        assert vals.shape == (1, 2, 1326) and np.isfinite(vals).all()


def test_river_net_matches_held_out_resolves_within_validation_error(tmp_path):
    """The correctness check of the pipeline at tiny scale: a river net trained on solved situations is as
    accurate on held-out situations (re-solved exactly) as its validation loss says, and its per-hand
    values (``predict``, the leaf path) are its bucket values."""
    from cfrkit.value_nets.holdem.nets import train_street_net
    from cfrkit.value_nets.train import masked_huber

    g = load("holdem")
    b = RiverStrengthBucketer(20)
    sit = sample_situations("river", 160, np.random.default_rng(11), group=1)
    vals = solve_situations(g, sit, 40)
    inputs, targets, mask = bucket_arrays(b, sit.boards, sit.contribs, sit.ranges, vals, 20000.0)
    data = {"inputs": inputs, "targets": targets, "mask": mask, "boards": sit.boards, "contribs": sit.contribs,
            "settings": {"game": "holdem", "street": "river", "bucketer": b.to_dict()}}
    ck = str(tmp_path / "river.pt")
    summary = train_street_net(data, ck, hidden=(32, 32), epochs=60, batch_size=32, patience=60, batchnorm=False,
                               progress=False, val_fraction=0.25)
    nets = HoldemValueNets(game="holdem", stack=20000.0)
    nets.set_net("river", ck)
    held = sample_situations("river", 60, np.random.default_rng(12), group=1)
    exact = solve_situations(g, held, 40)
    hi, ht, hm = bucket_arrays(b, held.boards, held.contribs, held.ranges, exact, 20000.0)
    with torch.no_grad():
        pred = nets.models["river"](torch.as_tensor(hi))
    held_loss = float(masked_huber(pred, torch.as_tensor(ht), torch.as_tensor(hm)))
    assert 0.5 * summary["best_val_loss"] <= held_loss <= 2.0 * summary["best_val_loss"]
    assert not set(map(tuple, sit.boards[summary["val_indices"]])) & set(map(tuple, sit.boards[np.setdiff1d(
        np.arange(160), summary["val_indices"])]))  # validation boards are unseen in training
    # a trivial predictor (zero values) is worse: the net learned something
    assert held_loss < 0.8 * float(masked_huber(torch.zeros_like(pred), torch.as_tensor(ht), torch.as_tensor(hm)))
    hand = nets.predict("river", held.boards, held.contribs, held.ranges)
    for i in range(3):
        ids = b.hand_buckets(held.boards[i])
        live = ids >= 0
        assert np.allclose(hand[i, 0][live], pred[i, :20].numpy()[ids[live]], atol=1e-4)
        assert np.allclose(hand[i, 1][live], pred[i, 20:].numpy()[ids[live]], atol=1e-4)
