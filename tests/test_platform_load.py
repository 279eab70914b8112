"""The server's fast paths equal the reference: hand-end views, ACPC lines, PHH derived on read,
group commit, cheap deals, and the multi-process server (``--workers``)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from cfrkit.agents.poker import make_agent
from cfrkit.games.holdem.deals import deal_for_hand
from cfrkit.games.holdem.history import acpc_log_line, phh_compatible, to_phh
from cfrkit.games.registry import load
from cfrkit.platform import protocol as P
from cfrkit.platform.local import play_hand
from cfrkit.platform.storage import Store

GAMES = ["holdem", "holdem(definition=holdem.nolimit.3p,stacks=400;300;500)",
         "holdem(definition=holdem.limit.2p.reverse_blinds)"]


def _hands(game_string, count, seed=0):
    game = load(game_string)
    n = game.num_players
    rng = random.Random(seed)
    for i in range(count):
        agents = [make_agent(rng.choice(["random", "always-call", "rule-based", "fixed-range-raiser"]),
                             seed=rng.randrange(10 ** 6)) for _ in range(n)]
        yield game, i, play_hand(game, agents, deal_for_hand(game, seed, i))


@pytest.mark.parametrize("game_string", GAMES)
def test_hand_end_views_and_acpc_line_equal_the_reference(game_string):
    for game, i, state in _hands(game_string, 40):
        n = game.num_players
        names = [f"p{j}" for j in range(n)]
        returns = state.returns()
        assert P.acpc_log_line(state, i, names, returns) == acpc_log_line(state, i, names)
        player_returns = returns[::-1]
        totals = [float(j) for j in range(n)]
        views = P.HandEndViews(state, match_id="m", hand=i, names_by_seat=names, returns=returns,
                               player_returns=player_returns, totals=totals)
        for seat in range(n):
            ref = P.hand_end_view(state, seat, match_id="m", hand=i, player=n - 1 - seat, names_by_seat=names,
                                  player_returns=player_returns, totals=totals)
            assert views.view(seat, n - 1 - seat) == ref


@pytest.mark.parametrize("game_string", GAMES[:2])
def test_group_commit_stores_hands_and_derives_the_same_phh(tmp_path, game_string):
    store = Store(str(tmp_path / "s.db"))
    game = load(game_string)
    n = game.num_players
    names = [f"p{j}" for j in range(n)]
    store.create_match("m1", {"game": game.game_string()}, [{"name": x, "kind": "house"} for x in names])
    states = [s for _, _, s in _hands(game_string, 30, seed=3)]
    records = [("m1", i, i, list(range(n)), acpc_log_line(s, i, names), s.returns(), []) for i, s in enumerate(states)]
    store.record_hands(records[:10])
    store.record_hands(records[10:11])
    store.record_hands(records[11:])
    with pytest.raises(Exception):  # hand 5 again: the batch is refused whole
        store.record_hands([("m1", 30, 30, [0] * n, "x", [0.0] * n, []), records[5]])
    stored = store.hands("m1")
    assert [h["hand"] for h in stored] == list(range(30))
    assert phh_compatible(game.definition) is None
    for h, s in zip(stored, states):
        assert h["phh"] == to_phh(s, names, h["hand"])
    assert store.match("m1")["hands_done"] == 30
    assert store.totals("m1") == pytest.approx([sum(s.returns()[j] for s in states) for j in range(n)])


def test_rule_based_act_on_one_row_equals_the_full_table():
    """A^R's postflop ``act`` computes the features of its own pair only; the action must be the
    full table's (hand_strategy) on flops, turns and rivers, checked and facing bets."""
    from cfrkit.agents.rule_based import BoardFeatures, RuleBasedAgent, _FEATURES
    from cfrkit.cards.hands import pair_index

    game = load("holdem")
    rng = random.Random(5)
    checked = 0
    for i in range(60):
        cards = deal_for_hand(game, 99, i)
        state = game.new_initial_state()
        others = [make_agent("random", seed=i), make_agent("always-call")]
        k = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(cards[k])
                k += 1
                continue
            if state.round > 0:
                _FEATURES.clear()
                fast = RuleBasedAgent().act(state)
                table = RuleBasedAgent().hand_strategy(state)
                hole = state.hole[state.current_player()]
                row = table.probs[pair_index(hole[0], hole[1])]
                assert fast == int(table.actions[int(np.argmax(row))])
                board = tuple(sorted(state.board))
                full = BoardFeatures(board)
                rows = np.array(rng.sample(range(1326), 40))
                part = BoardFeatures(board, rows)
                for name in ("hs", "ehs", "outs", "blocked"):
                    assert np.array_equal(getattr(part, name), getattr(full, name)[rows])
                checked += 1
            state.apply_action(others[rng.randrange(2)].act(state))
    assert checked > 40
