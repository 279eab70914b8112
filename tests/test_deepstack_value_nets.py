"""Value networks: zero-sum property, data generation, training, file errors, CLI."""
import os

import numpy as np
import pytest
import torch

from cfrkit.cli import main as cli_main
from cfrkit.games import load
from cfrkit.solvers.public.games import public_game_for
from cfrkit.solvers.public.tree import RangeSolver, build_public_tree
from cfrkit.value_nets.bucketing import LeducBucketer
from cfrkit.value_nets.data import (generate_dataset, load_dataset, load_shard, recursive_ranges,
                                    round_start_contributions, solve_situations)
from cfrkit.value_nets.leaf_values import NetLeafValues
from cfrkit.value_nets.model import ValueNet, ValueNetFileError, load_checkpoint
from cfrkit.value_nets.train import build_training_arrays, load_leaf_values, train_value_net


def test_zero_sum_correction_holds_to_float_precision():
    torch.manual_seed(0)
    net = ValueNet(36, (32, 32, 32)).eval()
    r = torch.rand(64, 2, 36)
    r = r / r.sum(-1, keepdim=True)
    x = torch.cat([r.reshape(64, 72), torch.rand(64, 1)], 1)
    v = net(x).reshape(64, 2, 36)
    residual = (r * v).sum((1, 2))
    scale = (r * v.abs()).sum((1, 2))
    assert torch.all(residual.abs() <= 1e-6 * scale.clamp(min=1.0))
    # without the correction the raw network is far from zero-sum
    raw = net.body(x).reshape(64, 2, 36)
    assert (r * raw).sum((1, 2)).abs().max() > 1e-3


def test_leduc_buckets_are_suit_isomorphic():
    b = LeducBucketer(6, 2)
    assert b.num_buckets == 18
    # boards K-spade (4) and K-heart (5): the hand of the board's suit maps to the same bucket
    assert b.hand_buckets([4]).tolist() == [12, 13, 14, 15, -1, 17]
    assert b.hand_buckets([5]).tolist() == [13, 12, 15, 14, 17, -1]
    assert set(b.hand_buckets([0])[1:]) == {1, 2, 3, 4, 5}
    m = b.matrix([2])
    assert m.shape == (6, 18) and m.sum() == 5 and m.sum(0).max() == 1


def test_recursive_ranges_sum_to_one_on_allowed_hands():
    rng = np.random.default_rng(0)
    r = recursive_ranges(rng, 100, [4, 0, 2, 5], 6)
    np.testing.assert_allclose(r.sum(1), 1.0)
    assert np.all(r[:, [1, 3]] == 0)
    assert r.std(0)[[4, 0, 2, 5]].min() > 0.01


def test_situation_values_match_solver_and_are_zero_sum():
    game = load("leduc_nolimit")
    assert round_start_contributions(game) == [100, 300, 900]
    rng = np.random.default_rng(1)
    ranges = np.zeros((4, 2, 6))
    ranges[:, :, [0, 1, 2, 3, 5]] = rng.random((4, 2, 5))
    ranges /= ranges.sum(-1, keepdims=True)
    boards = np.array([4, 4, 4, 0])
    contribs = np.array([100.0, 100.0, 300.0, 100.0])
    ranges[3, :, 0] = 0
    ranges[3] /= ranges[3].sum(-1, keepdims=True)
    values = solve_situations(game, boards, contribs, ranges, iterations=200, skip=100, targets="average_strategy")
    # zero-sum: r0 . v0 + r1 . v1 = 0 for exact cfvs of one strategy profile
    assert np.abs((ranges * values).sum((1, 2))).max() < 1e-9
    pgame = public_game_for(game)
    tree = build_public_tree(pgame, pgame.round_start_state(4, 100))
    one = RangeSolver(tree, ranges=ranges[1], skip=100).run(200)
    vals, _ = one.node_values()
    np.testing.assert_allclose(vals[0][0][0] / 200.0, values[1, 0], atol=1e-12)
    # default targets: cfvs averaged over the iterations after skip (DeepStack), near zero-sum
    averaged = solve_situations(game, boards, contribs, ranges, iterations=200, skip=100)
    np.testing.assert_allclose(one.average_root_values()[0] / 200.0, averaged[1], atol=1e-12)
    assert np.abs((ranges * averaged).sum((1, 2))).max() < 0.01


@pytest.fixture(scope="module")
def tiny_dataset(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("data"))
    generate_dataset(out, "leduc_nolimit", 120, shard_size=60, iterations=60, skip=20, seed=3, workers=1,
                     progress=False)
    return out


def test_datagen_shards_are_resumable_and_reproducible(tiny_dataset, tmp_path):
    shards = sorted(f for f in os.listdir(tiny_dataset) if f.startswith("shard_"))
    assert len(shards) == 2
    header, arrays = load_shard(os.path.join(tiny_dataset, shards[1]))
    assert header["count"] == 60 and header["iterations"] == 60 and arrays["ranges"].shape == (60, 2, 6)
    before = os.path.getmtime(os.path.join(tiny_dataset, shards[0]))
    os.remove(os.path.join(tiny_dataset, shards[1]))
    generate_dataset(tiny_dataset, "leduc_nolimit", 120, shard_size=60, iterations=60, skip=20, seed=3, workers=1,
                     progress=False)
    assert os.path.getmtime(os.path.join(tiny_dataset, shards[0])) == before  # kept, not regenerated
    _, again = load_shard(os.path.join(tiny_dataset, shards[1]))
    np.testing.assert_array_equal(again["values"], arrays["values"])
    with pytest.raises(ValueError, match="other settings"):
        generate_dataset(tiny_dataset, "leduc_nolimit", 120, shard_size=60, iterations=61, skip=20, seed=3,
                         workers=1, progress=False)


def test_corrupted_shard_gives_clear_error(tiny_dataset, tmp_path):
    src = os.path.join(tiny_dataset, "shard_00000.npz")
    bad = tmp_path / "shard_00000.npz"
    bad.write_bytes(open(src, "rb").read()[:300])
    with pytest.raises(ValueNetFileError, match="corrupted|unreadable"):
        load_shard(str(bad))
    with pytest.raises(ValueNetFileError):
        load_dataset(str(tmp_path))
    (tmp_path / "other.npz").write_bytes(b"not a zip file at all")
    with pytest.raises(ValueNetFileError):
        load_shard(str(tmp_path / "other.npz"))
    # the CLI reports it as one line with exit code 2
    assert cli_main(["train-valuenet", str(tmp_path), str(tmp_path / "net.pt")]) == 2


def test_dataset_of_several_directories(tiny_dataset, tmp_path):
    """``load_dataset`` of directories and shard paths (what ``cfrkit train-valuenet DIR DIR`` loads): the shards of
    every directory in order; a missing directory or no shard at all is one line."""
    import shutil

    from cfrkit.value_nets.data import dataset_shards

    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(os.path.join(tiny_dataset, "shard_00001.npz"), other / "shard_00000.npz")
    assert dataset_shards([tiny_dataset, str(other)]) == [os.path.join(tiny_dataset, "shard_00000.npz"),
                                                          os.path.join(tiny_dataset, "shard_00001.npz"),
                                                          str(other / "shard_00000.npz")]
    both, one = load_dataset([tiny_dataset, str(other)]), load_dataset(tiny_dataset)
    np.testing.assert_array_equal(both["values"], np.concatenate([one["values"], one["values"][60:]]))
    with pytest.raises(FileNotFoundError, match="no such data directory"):
        dataset_shards(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueNetFileError, match="no data shards"):
        dataset_shards([str(tmp_path / "empty")])


def test_training_checkpoints_resume_and_corruption(tiny_dataset, tmp_path):
    data = load_dataset(tiny_dataset)
    inputs, targets, mask = build_training_arrays(data, LeducBucketer(6, 2), 1200.0)
    assert inputs.shape == (120, 37) and targets.shape == (120, 36)
    np.testing.assert_allclose(inputs[:, :18].sum(1), 1.0, atol=1e-6)
    assert mask.sum(1).min() == 10  # 5 hands per board and player
    out = str(tmp_path / "net.pt")
    summary = train_value_net(data, out, hidden=(16, 16, 16), epochs=4, batch_size=32, progress=False)
    assert summary["epochs_run"] == 4 and os.path.exists(out) and os.path.exists(out + ".last")
    again = train_value_net(data, out, hidden=(16, 16, 16), epochs=6, batch_size=32, progress=False, resume=True)
    assert len(again["history"]) == 6 and again["history"][:4] == summary["history"]
    leaf = load_leaf_values(out)
    assert isinstance(leaf, NetLeafValues)
    # corrupted checkpoint -> clear error, also through the CLI
    bad = tmp_path / "bad.pt"
    bad.write_bytes(open(out, "rb").read()[:200])
    with pytest.raises(ValueNetFileError, match="unreadable"):
        load_checkpoint(str(bad))
    torch.save({"weights": 1}, str(tmp_path / "foreign.pt"))
    with pytest.raises(ValueNetFileError, match="not a cfrkit"):
        load_checkpoint(str(tmp_path / "foreign.pt"))
    assert cli_main(["play", "leduc_nolimit", "--net", str(bad), "--hands", "1"]) == 2


def test_net_leaf_values_are_zero_sum_in_chips():
    torch.manual_seed(0)
    net = ValueNet(18, (16, 16, 16))
    leaf_fn = NetLeafValues(net, LeducBucketer(6, 2), 1200.0)
    game = load("leduc_nolimit")
    tree = build_public_tree(game, depth_limit=True)
    leaves = [tree.nodes[i] for i in tree.leaf_nodes]
    rng = np.random.default_rng(0)
    r0 = rng.random((len(leaves), 2, 6))
    r1 = rng.random((len(leaves), 2, 6))
    for k, leaf in enumerate(leaves):
        r0[k, :, leaf.board[0]] = 0
        r1[k, :, leaf.board[0]] = 0
    from cfrkit.solvers.public.array_backend import make_backend

    v0, v1 = leaf_fn(leaves, r0, r1, make_backend("numpy"))
    total = (r0 * v0).sum(-1) + (r1 * v1).sum(-1)
    assert np.abs(total).max() < 1e-4 * np.abs(r0 * v0).sum(-1).max()
    assert np.all(v0[np.arange(len(leaves)), :, [leaf.board[0] for leaf in leaves]] == 0)


def test_cli_pipeline_end_to_end(tmp_path, capsys):
    data = str(tmp_path / "data")
    net = str(tmp_path / "net.pt")
    assert cli_main(["datagen", "leduc_nolimit", data, "--samples", "60", "--shard-size", "30", "--iterations", "30",
                     "--skip", "10", "--workers", "1"]) == 0
    assert cli_main(["train-valuenet", data, net, "--hidden", "8,8,8", "--epochs", "2", "--batch-size", "16"]) == 0
    assert cli_main(["play", "leduc_nolimit", "--net", net, "--hands", "2", "--iterations", "10"]) == 0
    out = capsys.readouterr().out
    assert "2 shards" in out and "best validation Huber loss" in out and "chips/hand over 2 hands" in out
    assert cli_main(["datagen", "leduc_nolimit", data, "--samples", "60", "--skip", "40", "--iterations", "30"]) == 2
