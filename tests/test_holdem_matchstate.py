"""ACPC MATCHSTATE strings: round trips for every definition, the reference example, clear errors."""
import random

import pytest

from cfrkit.games import load
from cfrkit.games.holdem import CALL, list_definitions, raise_action
from cfrkit.games.holdem.matchstate import (MatchStateError, action_string, format_matchstate, parse_matchstate,
                                            parse_response, state_from_matchstate)


def test_reference_example():
    g = load("holdem")
    line = "MATCHSTATE:0:0:r1761r7884c/:5d5c|/8dAs8s"
    s = state_from_matchstate(g, line)
    assert s.round == 1 and s.current_player() == 0
    assert s.spent == [7884, 7884]
    assert s.raise_range() == (7984, 20000)
    assert format_matchstate(s, 0, 0) == line
    assert action_string(s, raise_action(9000)) == "r9000"
    assert parse_response(s, "r9000") == raise_action(9000)


@pytest.mark.parametrize("name", list_definitions())
def test_round_trip_every_definition(name):
    g = load(f"holdem(definition={name})")
    rng = random.Random(len(name))
    checked = 0
    for hand in range(60):
        s = g.new_initial_state()
        while True:
            if not s.is_chance_node():
                for pos in range(g.num_players):
                    line = format_matchstate(s, pos, hand)
                    again = state_from_matchstate(g, line, rng=random.Random(hand))
                    assert format_matchstate(again, pos, hand) == line
                    assert again.current_player() == s.current_player()
                    assert again.spent == s.spent and again.board == s.board
                    assert again.hole[pos] == s.hole[pos]
                    if s.is_terminal() and not s.reached_showdown():
                        assert again.returns() == s.returns()
                    if s.is_terminal() and s.reached_showdown():
                        assert format_matchstate(s, pos, hand).count("|") == g.num_players - 1
                        assert again.returns() == s.returns()  # all live hands are shown
                    checked += 1
            if s.is_terminal():
                break
            if s.is_chance_node():
                s.apply_action(rng.choice(s.chance_outcomes())[0])
            else:
                legal = s.legal_actions()
                weights = [legal[:2], [legal[-1]], legal]
                s.apply_action(rng.choice(rng.choice(weights)))
    assert checked > 100


def test_showdown_reveals_live_hands_only():
    g = load("holdem(definition=holdem.nolimit.3p)")
    s = state_from_matchstate(g, "MATCHSTATE:2:7:ff:||AhKh")
    assert s.is_terminal() and s.returns() == [-50.0, 50.0, 0.0]  # seats 2 and 0 fold to the big blind
    with pytest.raises(MatchStateError, match="after the hand is over"):
        state_from_matchstate(g, "MATCHSTATE:2:7:ffc:||AhKh")
    s = g.new_initial_state()
    for c in range(6):
        s.apply_action(c)
    for a in [CALL, CALL, CALL]:
        s.apply_action(a)
    for c in (10, 11, 12):
        s.apply_action(c)
    assert format_matchstate(s, 0, 1) == "MATCHSTATE:0:1:ccc/:2c2d||/4h4s5c"
    for a in [raise_action(300), 0, CALL, 14, CALL, CALL, 15, CALL, CALL]:  # seat 1 folds on the flop
        s.apply_action(a)
    assert s.is_terminal()
    assert format_matchstate(s, 0, 1) == "MATCHSTATE:0:1:ccc/r300fc/cc/cc:2c2d||3c3d/4h4s5c/5h/5s"


@pytest.mark.parametrize("line,fragment", [
    ("MATCHSTATE:0:0:r100", "5 ':'-separated fields"),
    ("MATCH:0:0::AsKs|", "not a MATCHSTATE line"),
    ("MATCHSTATE:x:0::AsKs|", "position must be a seat number"),
    ("MATCHSTATE:0:-1::AsKs|", "hand number must be a number"),
    ("MATCHSTATE:5:0::AsKs|", "position 5 but the game has 2 players"),
    ("MATCHSTATE:0:0:r50:AsKs|", "illegal"),
    ("MATCHSTATE:0:0:r300z:AsKs|", "bad betting action"),
    ("MATCHSTATE:0:0::AsKs", "expected 2 '|'-separated"),
    ("MATCHSTATE:0:0::AsXs|", "bad card"),
    ("MATCHSTATE:0:0::AsAs|", "duplicate card As"),
    ("MATCHSTATE:0:0:cc/:AsKs|/2c3cKs", "a card appears twice"),
    ("MATCHSTATE:0:0::|AsKs", "viewer's (seat 0) hole cards are missing"),
    ("MATCHSTATE:0:0:cc:AsKs|", "no '/'"),
    ("MATCHSTATE:0:0:c/:AsKs|/2c3c4c", "starts before the betting"),
    ("MATCHSTATE:0:0:cc/:AsKs|/2c3c", "needs 3 board card"),
    ("MATCHSTATE:0:0:cc/cc/cc/cc/cc:AsKs|/2c3c4c/5c/6c/7c", "5 rounds, the game has 4"),
    ("MATCHSTATE:0:0:ff:AsKs|", "after the hand is over"),
    ("MATCHSTATE:0:0:r:AsKs|", "without an amount"),
    ("MATCHSTATE:0:0:cc/:AsKsQs|/2c3c4c", "seat 0 shows 3 hole cards"),
])
def test_bad_lines_give_clear_errors(line, fragment):
    with pytest.raises(MatchStateError) as info:
        state_from_matchstate(load("holdem"), line)
    assert fragment in str(info.value), str(info.value)


def test_limit_raise_tokens():
    g = load("holdem(definition=holdem.limit.2p.reverse_blinds)")
    s = state_from_matchstate(g, "MATCHSTATE:1:3:rr:|AsKs")
    assert s.spent == [30, 20]
    assert format_matchstate(s, 1, 3) == "MATCHSTATE:1:3:rr:|AsKs"
    with pytest.raises(MatchStateError, match="does not match the fixed raise-to"):
        state_from_matchstate(g, "MATCHSTATE:1:3:r25:|AsKs")
    assert parse_matchstate("MATCHSTATE:1:3:rr:|AsKs\r\n").hand_number == 3


def test_board_before_first_round_and_small_deck(tmp_path):
    path = tmp_path / "odd.game"
    path.write_text("GAMEDEF\nnolimit\nnumPlayers = 3\nnumRounds = 2\nstack = 400 300 500\nblind = 5 10 0\n"
                    "firstPlayer = 3 1\nnumSuits = 3\nnumRanks = 5\nnumHoleCards = 2\nnumBoardCards = 1 1\n"
                    "END GAMEDEF\n")
    from cfrkit.games.consistency import check_game

    game_string = f"holdem(definition={path})"
    assert check_game(game_string, num_playthroughs=100)["terminals"] == 100
    g = load(game_string)
    rng = random.Random(0)
    for hand in range(100):
        s = g.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(rng.choice(s.chance_outcomes())[0])
                continue
            line = format_matchstate(s, 1, hand)
            assert line.split(":")[4].count("/") == s.round + 1  # round 0 has a board group
            assert format_matchstate(state_from_matchstate(g, line), 1, hand) == line
            s.apply_action(rng.choice(s.legal_actions()))


# ------------------------------------------------------------------ strict syntax (issue 17, item 16)
@pytest.mark.parametrize("line", [
    "MATCHSTATE:0:\u0663:r300c/:5d5c|/8dAs8s",  # Arabic-Indic digit 3 as the hand number
    "MATCHSTATE:\u00b9:0:r300c/:5d5c|/8dAs8s",  # superscript one as the position
    "MATCHSTATE:0:" + "9" * 4300 + ":r300c/:5d5c|/8dAs8s",  # absurdly long hand number
    "MATCHSTATE:0:0:r" + "9" * 4300 + ":5d5c|",  # absurdly long raise amount
    "MATCHSTATE:0:0:r\u0663\u0660\u0660:5d5c|",  # non-ASCII digits in a raise
    "MATCHSTATE:0:0:r300c/:5d5c|/Qh,Jh-2c",  # loose card separators
    "MATCHSTATE:0:0:r300c/:5d5c|/qhjh2c",  # lower-case ranks
    "MATCHSTATE:0:0:r300c/:5D5C|/8dAs8s",  # upper-case suits
    "MATCHSTATE:0:0:r300c/:5d 5c|/8dAs8s",  # spaces
    "MATCHSTATE:0:0:r300c/:10d5c|/8dAs8s",  # '10' for a ten
])
def test_loose_or_overlong_fields_are_refused(line):
    with pytest.raises(MatchStateError):
        state_from_matchstate(load("holdem"), line)


def test_showdown_without_the_opponents_cards_is_refused():
    g = load("holdem")
    full = "MATCHSTATE:0:3:cc/cc/cc/cc:5d5c|AhKh/8dAs8s/2c/3h"
    s = state_from_matchstate(g, full)
    assert s.is_terminal() and s.reached_showdown()
    with pytest.raises(MatchStateError, match="not shown"):
        state_from_matchstate(g, "MATCHSTATE:0:3:cc/cc/cc/cc:5d5c|/8dAs8s/2c/3h")
    # a hand won by a fold needs no other cards
    assert state_from_matchstate(g, "MATCHSTATE:0:3:r300f:5d5c|").is_terminal()


def test_non_strings_are_refused():
    with pytest.raises(MatchStateError):
        parse_matchstate(b"MATCHSTATE:0:0::5d5c|")
    with pytest.raises(MatchStateError):
        state_from_matchstate(load("holdem"), None)
