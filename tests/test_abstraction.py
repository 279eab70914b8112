"""Card abstraction: table files, clustering kernels against brute force, small builds, bad input."""
import os

import numpy as np
import pytest

from cfrkit.abstraction import AbstractionError, AbstractionParams, build_abstraction, load_abstraction
from cfrkit.abstraction.clustering import (PotentialSpace, assign_emd1d, histogram_cdfs, kmeans_emd1d,
                                           kmeans_pa_emd, prepare_pa_centres, assign_pa_emd)
from cfrkit.abstraction.tables import MAGIC, open_table, write_table
from cfrkit.cards import parse_cards
from cfrkit.cards.hands import HOLE_PAIRS


# ------------------------------------------------------------------------------------ table files

def test_table_roundtrip_and_refusals(tmp_path):
    path = str(tmp_path / "t.bkt")
    data = (np.arange(1000) % 7).astype(np.uint16)
    write_table(path, data, {"round": 1, "params": {"a": 1}})
    arr, head = open_table(path, {"a": 1}, 1)
    assert np.array_equal(arr, data) and head["num_buckets"] if "num_buckets" in head else True
    with pytest.raises(AbstractionError, match="other parameters"):
        open_table(path, {"a": 2}, 1)
    with pytest.raises(AbstractionError, match="round 1"):
        open_table(path, {"a": 1}, 2)
    raw = open(path, "rb").read()
    open(path, "wb").write(raw[:-10])
    with pytest.raises(AbstractionError, match="truncated"):
        open_table(path)
    damaged = bytearray(raw)
    damaged[-3] ^= 0xFF
    open(path, "wb").write(bytes(damaged))
    with pytest.raises(AbstractionError, match="CRC"):
        open_table(path)
    open(path, "wb").write(b"NOTMAGIC" + raw[len(MAGIC):])
    with pytest.raises(AbstractionError, match="not a cfrkit bucket table"):
        open_table(path)


# -------------------------------------------------------------------------------------- clustering

def test_emd1d_kmeans_matches_brute_force_and_skips():
    rng = np.random.default_rng(3)
    X = histogram_cdfs(rng.dirichlet(np.full(12, 0.4), size=3000))
    labels, C, stats = kmeans_emd1d(X, 40, seed=5)
    brute = np.abs(X[:, None, :] - C[None]).sum(-1)
    assert np.array_equal(labels, brute.argmin(1))  # bounds never skip a needed distance
    assert stats["skipped_fraction"] > 0.5
    lab2, computed = assign_emd1d(X, C)
    assert np.array_equal(lab2, brute.argmin(1)) and computed < X.shape[0] * 40
    # reproducible
    labels_again, C2, _ = kmeans_emd1d(X, 40, seed=5)
    assert np.array_equal(labels, labels_again) and np.array_equal(C, C2)


def test_potential_aware_search_is_exact_for_its_distance_and_bounded():
    rng = np.random.default_rng(1)
    embed = np.cumsum(rng.dirichlet(np.ones(10), size=30), axis=1) / 10  # 30 next-round centres (cdfs)
    space = PotentialSpace(embed, norm=1, support=64)
    ids = rng.integers(0, 30, size=(400, 9)).astype(np.int32)
    ids[rng.random(ids.shape) < 0.2] = -1
    labels, Q, stats = kmeans_pa_emd(ids, space, 12, seed=2)
    lab, computed = assign_pa_emd(ids, space, Q)
    greedy = np.array([[space.greedy_emd(row, q.astype(np.float64)) for q in Q] for row in ids[:60]])
    assert np.array_equal(lab[:60], greedy.argmin(1))
    assert computed < 400 * 12
    exact = np.array([space.exact_emd(ids[i], Q[j].astype(np.float64)) for i in range(20) for j in range(3)])
    g = greedy[:20, :3].reshape(-1)
    pemb = space.embed_points(ids[:20])
    qemb = Q[:3].astype(np.float64) @ space.embed
    lb = space.dist(pemb, qemb).reshape(-1)
    assert np.all(lb <= exact + 1e-9) and np.all(exact <= g + 1e-9)  # lower bound <= EMD <= greedy


# --------------------------------------------------------------------------------- small builds

@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("abs") / "tiny")
    # deck of 3 ranks x 4 suits: 9 preflop classes; flop potential-aware over OCHS turn buckets
    return build_abstraction((9, 12, 8), out, features=("lossless", "pa-emd", "ochs"), num_ranks=3, num_suits=4,
                             sample=2000, workers=1, progress=False)


def _suit_perm(cards, perm):
    return [4 * (c // 4) + perm[c % 4] for c in cards]


def test_tiny_build_buckets_are_suit_invariant_and_complete(tiny):
    deck = tiny.ctx.deck.tolist()
    rng = np.random.default_rng(0)
    for _ in range(30):
        cards = rng.choice(deck, size=6, replace=False).tolist()
        perm = rng.permutation(4).tolist()
        for r, nb in ((0, 0), (1, 3), (2, 4)):
            h, b = cards[:2], cards[2:2 + nb]
            a = tiny.bucket(r, h, b)
            assert 0 <= a < tiny.num_buckets(r)
            assert a == tiny.bucket(r, _suit_perm(h, perm), _suit_perm(b, perm))
            if nb == 4:  # the flop/turn order matters only through the isomorphism index
                assert a == tiny.bucket(r, h[::-1], b[:3][::-1] + b[3:])
    board = [deck[0], deck[5], deck[9]]
    bb = tiny.buckets_for_board(1, board)
    live = np.isin(HOLE_PAIRS, deck).all(1) & ~np.isin(HOLE_PAIRS, board).any(1)
    assert np.all(bb[live] >= 0) and np.all(bb[~live] == -1)
    assert len(np.unique(tiny.buckets_for_board(0, []) [live[:] | True][tiny.buckets_for_board(0, []) >= 0])) == 9


def test_tiny_build_is_reproducible_resumes_and_refuses_other_params(tiny, tmp_path):
    out = str(tmp_path / "again")
    again = build_abstraction((9, 12, 8), out, features=("lossless", "pa-emd", "ochs"), num_ranks=3, num_suits=4,
                              sample=2000, workers=2, progress=False)
    for r in range(3):
        assert np.array_equal(np.asarray(again._tables[r]), np.asarray(tiny._tables[r]))
    # a build killed after the turn: the flop and preflop are redone, the turn kept
    import json
    man_path = os.path.join(out, "abstraction.json")
    man = json.load(open(man_path))
    man["rounds_done"] = [2]
    man["complete"] = False
    json.dump(man, open(man_path, "w"))
    os.remove(os.path.join(out, "round1.bkt"))
    with pytest.raises(AbstractionError, match="unfinished"):
        load_abstraction(out)
    turn_mtime = os.path.getmtime(os.path.join(out, "round2.bkt"))
    resumed = build_abstraction((9, 12, 8), out, features=("lossless", "pa-emd", "ochs"), num_ranks=3,
                                num_suits=4, sample=2000, workers=1, progress=False)
    assert os.path.getmtime(os.path.join(out, "round2.bkt")) == turn_mtime
    assert np.array_equal(np.asarray(resumed._tables[1]), np.asarray(tiny._tables[1]))
    before = open(os.path.join(out, "round1.bkt"), "rb").read()
    with pytest.raises(AbstractionError, match="other parameters"):
        build_abstraction((9, 13, 8), out, features=("lossless", "pa-emd", "ochs"), num_ranks=3, num_suits=4,
                          sample=2000, workers=1, progress=False)
    with pytest.raises(AbstractionError, match="buckets"):
        load_abstraction(out, buckets=(9, 13, 8))
    assert open(os.path.join(out, "round1.bkt"), "rb").read() == before


def test_preflop_lossless_and_bad_input(tmp_path):
    from cfrkit.cards.isomorphism import holdem_indexer

    a = build_abstraction((169,), str(tmp_path / "pre"), progress=False)
    assert a.num_buckets(0) == 169
    assert a.bucket(0, "AhKh") == holdem_indexer().index(parse_cards("AhKh"))
    assert a.bucket(0, "AhKh") == a.bucket(0, "AsKs") != a.bucket(0, "AhKs")
    allb = a.buckets_for_board(0, [])
    assert allb.min() == 0 and len(np.unique(allb)) == 169
    with pytest.raises(AbstractionError, match="169"):
        build_abstraction((170,), str(tmp_path / "bad"), progress=False)
    with pytest.raises(AbstractionError, match="unknown feature"):
        build_abstraction((169, 10), str(tmp_path / "bad"), features=("lossless", "magic"), progress=False)
    with pytest.raises(AbstractionError, match="OCHS"):
        build_abstraction((169, 10, 10), str(tmp_path / "bad"), features=("lossless", "ochs", "ochs"), progress=False)
    with pytest.raises(AbstractionError, match="round must be"):
        a.bucket(1, "AhKh", "2c3c4c")
    with pytest.raises(AbstractionError, match="2 hole cards"):
        a.bucket(0, "AhKhQh")
    with pytest.raises(AbstractionError, match="does not exist"):
        load_abstraction(str(tmp_path / "nothing"))


def test_cli_build_info_and_bad_buckets(tmp_path, capsys):
    from cfrkit.cli import main

    out = str(tmp_path / "cli")
    assert main(["abstraction", "build", "--buckets", "9,6", "--features", "lossless,ochs", "--ranks", "3",
                 "--sample", "1000", "--out", out, "--no-progress", "--workers", "1"]) == 0
    assert main(["abstraction", "info", out, "--verify"]) == 0
    assert "verified" in capsys.readouterr().out
    assert main(["abstraction", "build", "--buckets", "9,x", "--out", out]) == 2
    assert main(["abstraction", "build", "--buckets", "9,7", "--features", "lossless,ochs", "--ranks", "3",
                 "--sample", "1000", "--out", out, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "other parameters" in err


def test_ray_assignment_equals_process_build(tmp_path):
    ray = pytest.importorskip("ray")
    kw = dict(features=("lossless", "ochs"), num_ranks=3, num_suits=4, sample=1000, progress=False)
    local = build_abstraction((9, 6), str(tmp_path / "local"), workers=1, **kw)
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        remote = build_abstraction((9, 6), str(tmp_path / "ray"), ray_address="local", **kw)
    finally:
        ray.shutdown()
    assert np.array_equal(np.asarray(remote._tables[1]), np.asarray(local._tables[1]))


@pytest.mark.slow
def test_quality_game_solver_and_exact_best_response():
    from cfrkit.abstraction.quality import AbstractSolver, FlopTurnGame, best_response_value, exploitability

    game = FlopTurnGame()
    assert game.flop_weight.sum() == 560 and game.m1 == 78 and game.m2 == 66
    b1, b2, k1, k2 = game.lossless_buckets()
    solver = AbstractSolver(game, b1, b2, k1, k2)
    uniform = {i: np.full_like(a, 1.0 / a.shape[1]) for i, a in solver.avg.items()}
    e0 = exploitability(game, uniform, b1, b2)
    solver.iterate(3)
    tables = solver.average_tables()
    e3 = exploitability(game, tables, b1, b2)
    assert 0 < e3 < 0.8 * e0  # CFR+ on the real game: exploitability falls
    # one bucket per round: the lifted strategy ignores the cards; still a valid (worse) strategy
    one = AbstractSolver(game, np.zeros_like(b1), np.zeros_like(b2), 1, 1)
    one.iterate(2)
    e_one = exploitability(game, one.average_tables(), np.zeros_like(b1), np.zeros_like(b2))
    assert e_one > e3 > 0
    assert best_response_value(game, tables, b1, b2, 0) + best_response_value(game, tables, b1, b2, 1) > 0


@pytest.mark.slow
def test_four_round_build_with_river_centres(tmp_path):
    # the shape of default_abstraction() on a 12-card deck: histogram-EMD flop and turn, OCHS river
    # stored as centres (features computed at lookup)
    a = build_abstraction((9, 6, 6, 5), str(tmp_path / "four"), features=("lossless", "hist-emd", "hist-emd", "ochs"),
                          num_ranks=3, num_suits=4, sample=1000, river_storage="centres", workers=1, progress=False)
    deck = a.ctx.deck.tolist()
    rng = np.random.default_rng(4)
    for _ in range(10):
        cards = rng.choice(deck, size=7, replace=False).tolist()
        perm = rng.permutation(4).tolist()
        for r, nb in ((1, 3), (2, 4), (3, 5)):
            b = a.bucket(r, cards[:2], cards[2:2 + nb])
            assert 0 <= b < a.num_buckets(r)
            assert b == a.bucket(r, _suit_perm(cards[:2], perm), _suit_perm(cards[2:2 + nb], perm))
    river = a.buckets_for_board(3, cards[2:7])
    assert (river >= 0).sum() == 21  # C(7, 2) live pairs of the 12-card deck
    assert not os.path.exists(str(tmp_path / "four" / "round3.bkt"))


def _worker_that_dies(boards):
    os._exit(3)  # as a worker killed by the kernel (out of memory) ends: no exception, no result


def test_a_build_whose_worker_dies_stops_with_one_line_instead_of_hanging(tmp_path, monkeypatch):
    """The assignment's process pool: a dead worker must end the build with an error (mp.Pool waited forever)."""
    from cfrkit.abstraction import build as build_module

    monkeypatch.setattr(build_module, "_worker_chunk", _worker_that_dies)
    out = str(tmp_path / "dies")
    with pytest.raises(AbstractionError, match="lost a worker process"):
        build_abstraction((9, 12, 8), out, features=("lossless", "pa-emd", "ochs"), num_ranks=3, num_suits=4,
                          sample=2000, workers=2, progress=False)
    monkeypatch.undo()
    again = build_abstraction((9, 12, 8), out, features=("lossless", "pa-emd", "ochs"), num_ranks=3, num_suits=4,
                              sample=2000, workers=2, progress=False)  # run again: it resumes and finishes
    assert again.num_buckets(2) == 8
