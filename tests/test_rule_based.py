"""A^R, the rule-based agent: ranges as data, the 1326-hand strategy, sane decisions, and wins."""
from __future__ import annotations

import random

import numpy as np
import pytest

from cfrkit.agents.poker import AlwaysCallAgent, RandomAgent, parse_range
from cfrkit.agents.rule_based import PREFLOP_RANGES, RuleBasedAgent, board_features, range_mask
from cfrkit.cards import parse_cards
from cfrkit.cards.hands import blocked_pairs, pair_index
from cfrkit.games.holdem.game import CALL, FOLD, raise_action
from cfrkit.games.registry import load
from cfrkit.poker import make_agent, play_match
from holdem_play import play


def test_ranges_are_readable_data_and_nested_by_position():
    for key, value in PREFLOP_RANGES.items():
        for text in (value.values() if isinstance(value, dict) else [value]):
            assert parse_range(text), key
    opens = PREFLOP_RANGES["open"]
    # later position (fewer players behind) opens every hand an earlier one opens
    for behind in range(2, 6):
        assert parse_range(opens[behind]) <= parse_range(opens[behind - 1])
    assert parse_range(PREFLOP_RANGES["four_bet"]) <= parse_range(PREFLOP_RANGES["three_bet"])
    # about two thirds of hands open heads-up from the small blind, about a tenth under the gun
    assert 0.55 < range_mask(opens[1]).mean() < 0.8
    assert 0.05 < range_mask(opens[5]).mean() < 0.15
    assert make_agent("ar").name == make_agent("rule-based").name == "rule-based"


def _state(game, holes, board=(), actions=()):
    s = game.new_initial_state()
    for c in holes:
        s.apply_action(c)
    play(s, *actions, board=board)
    return s


def test_textbook_decisions():
    g = load("holdem")
    ar = RuleBasedAgent()
    # heads-up: seat 1 is the small blind and acts first; seat 0 = big blind
    aa = _state(g, parse_cards("2c7d") + parse_cards("AhAs"))
    assert ar.act(aa) > CALL                       # aces open
    trash = _state(g, parse_cards("2c7d") + parse_cards("7h2s"))
    assert ar.act(trash) == FOLD                   # 72o folds the small blind
    # river, checked to us with the nut flush: bet; facing a pot bet with nothing: fold
    board = parse_cards("2h7hTh Jc 3d")
    nuts = _state(g, parse_cards("4c5s") + parse_cards("AhKh"), board, [CALL, CALL, CALL, CALL, CALL, CALL, CALL])
    assert nuts.current_player() == 1 and ar.act(nuts) > CALL
    air = _state(g, parse_cards("4c5s") + parse_cards("9c8c"), board,
                 [CALL, CALL, CALL, CALL, CALL, CALL, CALL, raise_action(300)])
    assert air.current_player() == 0 and ar.act(air) == FOLD
    # ten big blinds deep: push or fold -- A5o moves all in from the small blind, 83o folds
    from cfrkit.games.holdem.game import HoldemGame
    short = HoldemGame(stacks=(1000, 1000))
    push = _state(short, parse_cards("2c7d") + parse_cards("Ah5s"))
    assert ar.act(push) == raise_action(1000)
    assert ar.act(_state(short, parse_cards("2c7d") + parse_cards("8h3s"))) == FOLD
    f = board_features(parse_cards("2h7hTh"))
    assert f.wet and not f.paired
    # a flush draw has outs (estimated on a sample of next cards), a hand with no draw has (almost) none
    draw, nothing = pair_index(*parse_cards("As5h")), pair_index(*parse_cards("Kc4d"))
    assert f.outs[draw] >= 3 and f.outs[nothing] < f.outs[draw]
    assert f.ehs[draw] > f.hs[draw]  # potential: the draw improves on average


def _decisions(game_string, n_states, seed):
    """A^R decision points reached in random play (preflop to river)."""
    game = load(game_string)
    rng = random.Random(seed)
    states = []
    players = RandomAgent(seed)
    while len(states) < n_states:
        s = game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(rng.choice([c for c, _ in s.chance_outcomes()]))
                continue
            if rng.random() < 0.4:
                states.append(s.clone())
            a = CALL if rng.random() < 0.6 else players.act(s)
            s.apply_action(a)
    return states


@pytest.mark.parametrize("game_string", ["holdem", "holdem(definition=holdem.nolimit.6p)"])
def test_hand_strategy_matches_act_for_every_hand(game_string):
    ar = RuleBasedAgent()
    for s in _decisions(game_string, 25, 3):
        strat = ar.hand_strategy(s)
        assert strat.probs.shape == (1326, len(strat.actions))
        blocked = blocked_pairs(s.board) if s.board else np.zeros(1326, bool)
        assert np.allclose(strat.probs[blocked], 0.0)
        rows = strat.probs[~blocked]
        assert np.allclose(rows.sum(axis=1), 1.0) and set(np.unique(rows)) <= {0.0, 1.0}
        for a in strat.actions:
            assert s.is_legal(int(a))
        p = s.current_player()
        own = pair_index(*s.hole[p])
        assert int(strat.actions[strat.probs[own].argmax()]) == ar.act(s)
        # the evaluation interface: probability of the action taken is 1 for the held hand
        assert ar.hand_action_probability(s, ar.act(s))[own] == 1.0


def _on_board(state, board):
    """``state``'s hand replayed with ``board`` for its board cards (the same hole cards and betting)."""
    new = state.game.new_initial_state()
    cards = iter(board)
    for a in state.history():
        if new.is_chance_node() and new.hole_cards_dealt:
            a = next(cards)
        new.apply_action(int(a))
    return new


@pytest.mark.parametrize("game_string", ["holdem", "holdem(definition=holdem.nolimit.6p)"])
def test_act_on_boards_is_act_on_each_board(game_string):
    ar = RuleBasedAgent()
    rng = np.random.default_rng(4)
    varied = postflop = 0
    for s in _decisions(game_string, 80, 5):
        if s.round == 0:
            assert ar.act_on_boards(s, [[]]) is None
            continue
        postflop += 1
        used = {c for h in s.hole for c in h}
        free = [c for c in range(52) if c not in used]
        boards = [[int(c) for c in rng.choice(free, len(s.board), replace=False)] for _ in range(8)] + [list(s.board)]
        want = [ar.act(_on_board(s, b)) for b in boards]
        assert ar.act_on_boards(s, boards).tolist() == want
        varied += len(set(want)) > 1
    assert postflop > 10 and varied > 3  # boards that change the action (sizes, folds, c-bets) are met


def test_beats_the_baselines_in_short_duplicate_matches():
    g = load("holdem")
    for opponent, hands in (("always-call", 400), ("random", 1200), ("fixed-range-raiser", 2000)):
        res = play_match(g, [RuleBasedAgent(), make_agent(opponent, seed=5)], hands // 2, seed=77, duplicate=True)
        mean, half = res.mbb_per_hand(0)
        assert mean - half > 0, (opponent, mean, half)
        # zero-sum bookkeeping
        assert np.allclose(res.returns.sum(axis=1), 0.0)


def test_multiway_match_runs_and_conserves_chips():
    g = load("holdem(definition=holdem.nolimit.6p)")
    agents = [RuleBasedAgent(), AlwaysCallAgent(), RandomAgent(1), RuleBasedAgent(), make_agent("raiser"),
              RandomAgent(2)]
    res = play_match(g, agents, 60, seed=3, duplicate=False)
    assert res.returns.shape == (60, 6)
    assert np.allclose(res.returns.sum(axis=1), 0.0)
