"""External-sampling MCCFR (with regret-based pruning) on the blueprint's abstract game: convergence on a fixed
board toward equilibrium and toward the CFR+ strategy, pruning skips work, bit-exact resume, play strength,
the command line and bad input."""
import hashlib
import os

import numpy as np
import pytest

from cfrkit.cards.hands import NUM_PAIRS, pair_index_of
from cfrkit.solvers.blueprint.betting_tree import BlueprintError, build_betting_tree
from cfrkit.solvers.blueprint.mccfr import ESMCCFRTrainer, sample_deals
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy
from cfrkit.solvers.blueprint.trainer import BlueprintTrainer
from test_blueprint import BOARD, HANDS, SMALL_GAME, FixedBoardGame, HandListAbstraction, KernelPolicy


@pytest.fixture(scope="module")
def small_tree():
    return build_betting_tree(SMALL_GAME, "0.5+1", 1)


@pytest.fixture(scope="module")
def fixed_board(small_tree):
    """The fixed-board game of test_blueprint, compiled, with its CFR+ solution (400 iterations)."""
    from cfrkit.solvers import CFRSolver, compile_game

    compiled = compile_game(FixedBoardGame(small_tree, BOARD, HANDS), cache=False)
    reference = CFRSolver(compiled, algorithm="cfr+").run(400).average_strategy_array()
    weights = np.zeros(NUM_PAIRS)
    weights[[pair_index_of(h) for h in HANDS]] = 1.0
    return compiled, reference, weights


def _es(small_tree, weights, **kw):
    return ESMCCFRTrainer(SMALL_GAME, "0.5+1", 1, abstraction=HandListAbstraction(HANDS), tree=small_tree,
                          board=BOARD, hand_weights=weights, deals_per_board=64, **kw)


def _measure(tr, small_tree, compiled, reference):
    from cfrkit.evaluation import exploitability, expected_values
    from cfrkit.solvers.tabular.cfr import policy_to_slots

    policy = KernelPolicy(BlueprintStrategy(small_tree, tr.strategy_sum, tr.abstraction), compiled)
    slots = policy_to_slots(compiled, policy)
    return (exploitability(compiled, slots), expected_values(compiled, slots)[0],
            float(np.abs(slots - reference).mean()))


def test_fixed_board_es_mccfr_converges_to_equilibrium_and_toward_cfr_plus(small_tree, fixed_board):
    from cfrkit.evaluation import expected_values

    compiled, reference, weights = fixed_board
    ref_value = expected_values(compiled, reference)[0]  # about -12.5 chips for seat 0
    tr = _es(small_tree, weights, seed=2)
    tr.iterate(25)
    e25, v25, d25 = _measure(tr, small_tree, compiled, reference)
    tr.iterate(375)
    e400, v400, d400 = _measure(tr, small_tree, compiled, reference)
    # 400-chip stacks: uniform play is about 40 chips exploitable, CFR+ reaches about 0.27
    assert e400 < 0.5 * e25 and e400 < 12.0
    assert abs(v400 - ref_value) < 2.0
    assert d400 < 0.75 * d25  # the average strategy moves toward CFR+'s (mean per-slot distance)
    # the sampled root values of the two seats average to the game value and its negative
    per = tr.root_value_sum / (tr.iterations * tr.deals_per_board)
    assert abs(per[0] - ref_value) < 4.0 and abs(per[0] + per[1]) < 6.0


def test_pruning_skips_work_and_still_converges(small_tree, fixed_board):
    compiled, reference, weights = fixed_board
    plain = _es(small_tree, weights, seed=5, regret_floor=-75.0)
    pruned = _es(small_tree, weights, seed=5, prune=True, prune_warmup=50, prune_threshold=-50.0, regret_floor=-75.0)
    for tr in (plain, pruned):
        tr.iterate(50)
    assert plain.stats.nodes == pruned.stats.nodes  # identical during the warm-up
    assert np.array_equal(plain.regrets, pruned.regrets)
    n_plain, n_pruned = plain.stats.nodes, pruned.stats.nodes
    for tr in (plain, pruned):
        tr.iterate(250)
    assert (pruned.stats.nodes - n_pruned) < 0.9 * (plain.stats.nodes - n_plain)
    assert pruned.regrets.min() >= pruned.regret_floor
    e, v, _ = _measure(pruned, small_tree, compiled, reference)
    assert e < 20.0


def test_resume_is_bit_exact_with_pruning(tmp_path, small_tree):
    a = ESMCCFRTrainer(SMALL_GAME, "0.5+1", 1, abstraction="ehs:169,6,6,6", seed=3, tree=small_tree,
                       deals_per_board=16, prune=True, prune_warmup=2, prune_threshold=-20.0)
    a.iterate(3)
    path = str(tmp_path / "es.npz")
    a.save(path)
    b = ESMCCFRTrainer.load(path)
    assert (b.prune, b.prune_warmup, b.prune_threshold, b.deals_per_board) == (True, 2, -20.0, 16)
    a.iterate(3)
    b.iterate(3)
    assert b.iterations == 6 and a.stats.nodes == b.stats.nodes
    assert np.array_equal(a.regrets, b.regrets) and np.array_equal(a.strategy_sum, b.strategy_sum)
    assert (a.regrets < 0).any() and (a.strategy_sum > 0).any()
    # a function of (seed, iteration): the same seed repeats itself, another seed does not
    c = ESMCCFRTrainer(SMALL_GAME, "0.5+1", 1, abstraction="ehs:169,6,6,6", seed=4, tree=small_tree,
                       deals_per_board=16, prune=True, prune_warmup=2, prune_threshold=-20.0)
    c.iterate(6)
    assert not np.array_equal(a.regrets, c.regrets)


def test_deals_are_disjoint_live_and_follow_the_weights():
    from cfrkit.cards import parse_cards
    from cfrkit.cards.hands import HOLE_PAIRS

    board = np.array(parse_cards(BOARD), dtype=np.uint8)
    deals = sample_deals(np.random.default_rng(0), board, 4000)
    cards = HOLE_PAIRS[deals].reshape(len(deals), 4)
    assert all(len(set(row) | set(board.tolist())) == 9 for row in cards.tolist())
    w = np.zeros(NUM_PAIRS)
    w[[pair_index_of(h) for h in HANDS]] = 1.0
    w[pair_index_of(HANDS[0])] = 3.0
    d = sample_deals(np.random.default_rng(1), board, 6000, w)
    assert set(np.unique(d)) <= {pair_index_of(h) for h in HANDS}
    share = (d[:, 0] == pair_index_of(HANDS[0])).mean()
    assert abs(share - 3 / 7) < 0.03  # seat 0's pair: weight 3 of 7


def test_es_blueprint_beats_random_play(small_tree):
    from cfrkit.agents.blueprint import BlueprintAgent
    from cfrkit.games import load
    from cfrkit.poker import make_agent, play_match

    tr = ESMCCFRTrainer(SMALL_GAME, "0.5+1", 1, abstraction="ehs:169,4,4,4", seed=1, tree=small_tree,
                        deals_per_board=64)
    tr.iterate(60)
    agent = BlueprintAgent(BlueprintStrategy.from_trainer(tr), seed=0)
    game = load(SMALL_GAME)
    res = play_match(game, [agent, make_agent("random", game=game, seed=1)], 150, seed=3, duplicate=True)
    assert res.duplicate_estimate.mean - res.duplicate_estimate.ci95 > 0, res.summary()


def _sha(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def test_cli_es_mccfr_train_resume_and_bad_input(tmp_path, capsys):
    from cfrkit.cli import main

    es, cfr = str(tmp_path / "es.npz"), str(tmp_path / "cfr.npz")
    common = ["--game", SMALL_GAME, "--raise-cap", "1", "--abstraction", "ehs:169,4,4,4", "--no-progress"]
    assert main(["blueprint", "train", es, "--iterations", "3", "--algorithm", "es-mccfr", "--prune",
                 "--prune-warmup", "1", "--deals-per-board", "8"] + common) == 0
    assert main(["blueprint", "train", es, "--iterations", "5", "--no-progress"]) == 0
    assert "resuming" in capsys.readouterr().out
    tr = ESMCCFRTrainer.load(es)
    assert tr.iterations == 5 and tr.prune and tr.deals_per_board == 8
    assert main(["blueprint", "info", es]) == 0
    assert "es-mccfr" in capsys.readouterr().out
    assert main(["blueprint", "train", cfr, "--iterations", "2"] + common) == 0
    capsys.readouterr()
    before = {p: _sha(p) for p in (es, cfr)}
    for argv, match in (([es, "--iterations", "9", "--algorithm", "cfr+"], "--algorithm cfr+ (file: es-mccfr)"),
                        ([cfr, "--iterations", "9", "--algorithm", "es-mccfr"], "--algorithm es-mccfr (file: cfr+)"),
                        ([cfr, "--iterations", "9", "--prune"], "--prune (file: no pruning)"),
                        ([es, "--iterations", "9", "--deals-per-board", "16"], "--deals-per-board 16 (file: 8)"),
                        ([es, "--iterations", "9", "--threads", "2"], "one thread"),
                        ([str(tmp_path / "new.npz"), "--iterations", "2", "--prune"] + common, "es-mccfr options"),
                        ([str(tmp_path / "new.npz"), "--iterations", "2", "--algorithm", "es-mccfr",
                          "--deals-per-board", "0"] + common, "--deals-per-board must be positive")):
        assert main(["blueprint", "train"] + argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and match in err, err
    assert {p: _sha(p) for p in (es, cfr)} == before and not os.path.exists(tmp_path / "new.npz")
    with pytest.raises(BlueprintError, match="trained with es-mccfr"):
        BlueprintTrainer.load(es)
    with pytest.raises(BlueprintError, match="trained with cfr\\+"):
        ESMCCFRTrainer.load(cfr)
    assert BlueprintStrategy.load(es).strategy_sum.shape == tr.strategy_sum.shape  # plays like any blueprint


def test_trainer_bad_arguments(small_tree):
    kw = dict(abstraction="ehs:169,4,4,4", tree=small_tree)
    for extra, match in (({"workers": 2}, "one thread"), ({"deals_per_board": 0}, "deals_per_board"),
                         ({"prune_threshold": 5.0}, "must be negative"), ({"prune_probability": 2.0}, "in \\[0, 1\\]"),
                         ({"prune": True, "prune_threshold": -10.0, "regret_floor": -5.0}, "regret_floor"),
                         ({"board": "AsKs2d"}, "5 cards"), ({"hand_weights": np.ones(5)}, "1326"),
                         ({"prune_warmup": -1}, "prune_warmup")):
        with pytest.raises(BlueprintError, match=match):
            ESMCCFRTrainer(SMALL_GAME, "0.5+1", 1, **kw, **extra)
    tr = ESMCCFRTrainer(SMALL_GAME, "0.5+1", 1, board=BOARD, hand_weights=np.zeros(NUM_PAIRS), **kw)
    with pytest.raises(BlueprintError, match="no hole pair"):
        tr.iterate(1)
