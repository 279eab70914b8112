"""LBR at speed (issue 27): the fast paths give the same numbers as the plain ones.

* ``river_strengths`` (rank classes) equals ``board_strengths_batch`` on every pair of many boards,
  flush-heavy ones included;
* the flop equity from per-hand integer rows (``hand_rows``) equals the per-runout kernel's, and the
  one-pass rows of several hands (``flop_hand_rows``, both hands of a duplicate deal) equal them;
* the blueprint agent's caches (walks from cached prefixes, per-node bucket tables, board buckets)
  change nothing: ``hand_strategy`` / ``act`` and LBR's per-deal chips equal those of an agent that
  walks from the root at every call, with LBR on the old equity path.
"""
import copy
import random

import numpy as np
import pytest

import cfrkit.evaluation.lbr as lbr_module
from cfrkit._kernels import range_equity as kernel
from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.cards.equity import board_strengths_batch, runout_boards
from cfrkit.cards.hands import HOLE_PAIRS, blocked_pairs
from cfrkit.cards.range_equity import RangeEquity
from cfrkit.evaluation.lbr import lbr_deals, settings_from

from test_lbr_blueprint import SMALL_GAME, blueprint  # noqa: F401  (module fixture: a small blueprint)


def test_river_strengths_are_the_evaluators_classes():
    rng = np.random.default_rng(5)
    flops = [tuple(rng.choice(52, 3, replace=False)) for _ in range(12)]
    flops += [(0, 4, 8), (1, 5, 9), (2, 6, 3), (48, 49, 50)]  # suited flops: flushes, four-flushes, quads
    for flop in flops:
        boards = runout_boards(list(flop))
        assert np.array_equal(kernel.river_strengths(boards), board_strengths_batch(boards)), flop
    monotone = np.array([[0, 4, 8, 12, 16], [3, 7, 11, 15, 51]], dtype=np.uint8)  # straight flush, flush
    assert np.array_equal(kernel.river_strengths(monotone), board_strengths_batch(monotone))
    with pytest.raises(ValueError, match="shape"):
        kernel.river_strengths(np.zeros((2, 4), dtype=np.uint8))


def _reference_equity(hand, weights, board):
    """The per-runout kernel over ``board_strengths_batch`` (the path before the rows)."""
    w = np.array(weights, dtype=np.float64)
    w[blocked_pairs([int(c) for c in HOLE_PAIRS[hand]] + list(board))] = 0.0
    win, tie, compat = kernel.hand_vs_range_rows(board_strengths_batch(runout_boards(list(board))), hand, w)
    return float((win + 0.5 * tie).sum() / compat.sum())


def test_flop_rows_give_the_per_runout_equity():
    rng = np.random.default_rng(8)
    engine = RangeEquity()
    for _ in range(6):
        cards = [int(c) for c in rng.choice(52, 5, replace=False)]
        board, hand = tuple(cards[:3]), int(np.flatnonzero(~blocked_pairs(cards[:3]))[rng.integers(1000)])
        if set(HOLE_PAIRS[hand]) & set(board):
            continue
        for sparse in (False, True):
            w = rng.random(1326) * (rng.random(1326) < (0.2 if sparse else 1.0))
            got, err = engine.equity(hand, w, board)
            assert err == 0.0
            assert got == pytest.approx(_reference_equity(hand, w, board), abs=1e-12)
    # integer rows: each board counted once per live opponent pair
    boards = runout_boards([0, 5, 10])
    score, count = kernel.hand_rows(kernel.river_strengths(boards), 700)
    assert count.max() <= len(boards) and (score <= 2 * count).all() and (score >= 0).all()


def test_flop_hand_rows_are_the_matrix_rows_of_each_hand():
    """The one-pass kernel (runouts enumerated inside, no strength matrix) equals ``hand_rows`` over
    ``river_strengths(runout_boards(flop))`` for every hand asked, blocked hands (all zeros) included."""
    rng = np.random.default_rng(11)
    flops = [tuple(int(c) for c in rng.choice(52, 3, replace=False)) for _ in range(4)] + [(0, 4, 8), (48, 49, 50)]
    for flop in flops:
        strengths = kernel.river_strengths(runout_boards(list(flop)))
        hands = [int(h) for h in rng.choice(1326, 5, replace=False)] + [int(np.flatnonzero(blocked_pairs(flop))[0])]
        score, count = kernel.flop_hand_rows(np.array(flop, dtype=np.uint8), np.array(hands, dtype=np.int32))
        assert score.shape == count.shape == (len(hands), 1326)
        for k, h in enumerate(hands):
            ref_score, ref_count = kernel.hand_rows(strengths, h)
            assert np.array_equal(score[k], ref_score) and np.array_equal(count[k], ref_count), (flop, h)
        assert not score[-1].any() and not count[-1].any()  # the hand touching the flop counts nothing
    with pytest.raises(ValueError, match="distinct"):
        kernel.flop_hand_rows(np.array([3, 3, 7], dtype=np.uint8), np.array([0], dtype=np.int32))
    with pytest.raises(ValueError, match="pair indices"):
        kernel.flop_hand_rows(np.array([3, 4, 7], dtype=np.uint8), np.array([1326], dtype=np.int32))


def test_expected_hands_share_one_pass_and_change_no_equity(monkeypatch):
    rng = np.random.default_rng(12)
    board, w = (2, 17, 40), rng.random(1326)
    free = [int(h) for h in np.flatnonzero(~blocked_pairs(list(board)))]
    h1, h2 = free[100], next(h for h in free[500:] if not set(HOLE_PAIRS[h]) & set(HOLE_PAIRS[free[100]]))
    calls = []
    real = kernel.flop_hand_rows
    monkeypatch.setattr(kernel, "flop_hand_rows", lambda f, hs: calls.append(list(hs)) or real(f, hs))
    shared = RangeEquity()
    shared.expect_hands([h1, h2])
    got = [shared.equity(h1, w, board), shared.equity(h2, w, board)]
    assert calls == [[h1, h2]]  # the second hand's query found its rows counted
    alone = [RangeEquity().equity(h, w, board) for h in (h1, h2)]
    assert got == alone
    assert got[0][0] == pytest.approx(_reference_equity(h1, w, board), abs=1e-12)
    with pytest.raises(ValueError, match="pair indices"):
        shared.expect_hands([-1])


class _PlainAgent(BlueprintAgent):
    """The agent as before its caches: every call walks the hand from the root, buckets and rows are
    looked up afresh."""

    def abstract_node(self, state):
        self._nodes, self._walks = {}, {}
        return super().abstract_node(state)

    def _table(self, node):
        self._tables.clear()
        return super()._table(node)

    def _board_buckets(self, node, board):
        self._buckets.clear()
        return super()._board_buckets(node, board)


class _PlainEquity(RangeEquity):
    def equity(self, hand, opp_range, board=(), seed=0):
        if len(board) == 3 and self.flop_samples is None:
            w = np.array(opp_range, dtype=np.float64)
            w[blocked_pairs([int(c) for c in HOLE_PAIRS[int(hand)]] + list(board))] = 0.0
            if not w.sum() > 0:
                return float("nan"), 0.0
            return _reference_equity(int(hand), w, tuple(board)), 0.0
        return super().equity(hand, opp_range, board, seed)


def test_table_rows_are_the_strategy_rows(blueprint):  # noqa: F811
    agent = BlueprintAgent(blueprint, seed=0)
    for node in (0, int(agent.tree.child_start[0])):
        nb = int(agent.blueprint.num_buckets[int(agent.tree.round[node])])
        table = agent._table(node)
        for b in range(0, nb, max(1, nb // 7)):
            assert np.array_equal(table[b], agent.blueprint.probabilities(node, [b])[0])


@pytest.mark.parametrize("setting", ["FC/1-4", "FCPA/1-4", "0.5,1,A/1-4"])
def test_lbr_values_equal_the_plain_paths(blueprint, monkeypatch, setting):  # noqa: F811
    """Same deals, same chips per deal and seat: fast engine + cached agent vs plain engine + plain agent."""
    bets, rounds = setting.split("/")
    settings = settings_from(bets, rounds)
    fast = lbr_deals(BlueprintAgent(blueprint, seed=3), SMALL_GAME, 7, 0, 12, settings)
    monkeypatch.setattr(lbr_module, "RangeEquity", _PlainEquity)
    plain = lbr_deals(_PlainAgent(blueprint, seed=3), SMALL_GAME, 7, 0, 12, settings)
    assert np.array_equal(fast, plain)
    assert np.abs(fast[:, :2]).sum() > 0  # chips moved: the deals were played


def test_cached_agent_plays_like_the_plain_agent(blueprint):  # noqa: F811
    """Along played hands (with hypothetical raises asked in between, as LBR does), hand_strategy and
    the sampled actions of the cached agent equal the plain agent's, draw for draw."""
    from cfrkit.poker.view import poker_view

    view = poker_view(SMALL_GAME)
    fast, plain = BlueprintAgent(blueprint, seed=11), _PlainAgent(blueprint, seed=11)
    pick = random.Random(4)
    for deal in range(25):
        cards = view.deal(2, deal)
        state = view.game.new_initial_state()
        fast.new_hand()
        plain.new_hand()
        k = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(cards[k])
                k += 1
                continue
            if state.current_player() == 1:
                a, b = fast.hand_strategy(state), plain.hand_strategy(state)
                assert np.array_equal(a.actions, b.actions) and np.array_equal(a.probs, b.probs)
                action = fast.act(state)
                assert action == plain.act(state)
            else:
                legal = state.legal_actions()
                for hypothetical in pick.sample(legal, min(2, len(legal))):  # LBR's fp questions
                    child = state.clone()
                    child.apply_action(hypothetical)
                    if not child.is_terminal() and not child.is_chance_node():
                        assert np.array_equal(fast.hand_action_probability(child, 0),
                                              plain.hand_action_probability(child, 0))
                action = pick.choice(legal)
            state.apply_action(action)
    assert fast.rng.random() == plain.rng.random()  # the same number of draws


def test_deepcopy_shares_the_blueprint_and_copies_the_generator(blueprint):  # noqa: F811
    agent = BlueprintAgent(blueprint, seed=1)
    twin = copy.deepcopy(agent)
    assert twin.blueprint is agent.blueprint and type(twin) is BlueprintAgent
    assert twin.rng is not agent.rng and twin.rng.random() == agent.rng.random()


def test_forked_workers_give_the_in_process_values(blueprint):  # noqa: F811
    """Chunks run in forked workers (the agent sent once per worker) equal the run in this process."""
    import multiprocessing as mp

    from cfrkit.evaluation.lbr import run_lbr
    from cfrkit.games.base import GameError

    agent = BlueprintAgent(blueprint, seed=5)
    settings = settings_from("FCPA", "3-4")
    here = run_lbr(agent, SMALL_GAME, 8, settings, seed=2, chunk=3)
    if "fork" in mp.get_all_start_methods():
        forked = run_lbr(agent, SMALL_GAME, 8, settings, seed=2, chunk=3, processes=2, start_method="fork")
        assert np.array_equal(here.values, forked.values)
    with pytest.raises(GameError, match="start_method"):
        run_lbr(agent, SMALL_GAME, 8, settings, seed=2, chunk=3, processes=2, start_method="teleport")


def _numpy_ehs(rivers, board):
    """``EHSAbstraction.ehs``'s numpy formula before the kernel (showdown masses against the uniform range)."""
    from cfrkit.cards.equity import showdown_masses

    strengths = board_strengths_batch(rivers)
    win, lose, compat = showdown_masses(strengths, (strengths > 0).astype(np.float64))
    tie = compat - win - lose
    with np.errstate(invalid="ignore", divide="ignore"):
        hs = np.where(compat > 0, (win + 0.5 * tie) / np.where(compat > 0, compat, 1), np.nan)
    live = strengths > 0
    counts = live.sum(axis=0)
    out = np.where(counts > 0, np.where(live, hs, 0.0).sum(axis=0) / np.maximum(counts, 1), np.nan)
    out[blocked_pairs(list(board))] = np.nan
    return out


def test_ehs_kernel_is_the_numpy_formula_bit_for_bit(monkeypatch):
    """The blueprint's buckets come from E[HS] percentiles, so E[HS] must not move by one ulp."""
    import cfrkit.abstraction.ehs_abstraction as ehs_module
    from cfrkit.abstraction.ehs_abstraction import EHSAbstraction

    abstraction = EHSAbstraction((169, 8, 8, 8), calibration_boards=4)
    seen = []
    real = ehs_module._range_kernel.river_strengths

    class Spy:
        uniform_river_ehs = staticmethod(ehs_module._range_kernel.uniform_river_ehs)

        @staticmethod
        def river_strengths(rivers):
            seen.append(np.array(rivers))
            return real(rivers)

    monkeypatch.setattr(ehs_module, "_range_kernel", Spy)
    rng = np.random.default_rng(12)
    for n in (3, 3, 3, 4, 4, 4, 5, 5):
        board = tuple(int(c) for c in rng.choice(52, n, replace=False))
        got = abstraction.ehs(board)
        assert np.array_equal(got, _numpy_ehs(seen[-1], board), equal_nan=True), board
    assert len(seen) == 8


def test_blocked_pairs_is_the_per_card_definition():
    """The bit-mask ``blocked_pairs`` marks exactly the pairs holding one of the cards (card 51's bit too)."""
    rng = np.random.default_rng(13)
    for n in (0, 1, 2, 3, 5, 7):
        cards = [int(c) for c in rng.choice(52, n, replace=False)] + ([51] if n == 2 else [])
        want = np.array([bool(set(int(c) for c in HOLE_PAIRS[j]) & set(cards)) for j in range(1326)])
        got = blocked_pairs(cards)
        assert got.dtype == bool and np.array_equal(got, want), cards
