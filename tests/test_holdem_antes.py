"""Antes as PHH/pokerkit define them (``ante_trimming_status``): dead big-blind antes, trimmed antes.

Checked against pokerkit, an independent engine: fixed hands with known payoffs, random hands with
big-blind antes under both trimming settings, and cfrkit's own PHH export replayed by pokerkit.
"""
import os
import random
import sys

import pytest

pk = pytest.importorskip("pokerkit")
sys.path.insert(0, os.path.dirname(__file__))

from test_holdem_pokerkit_harness import play_and_compare  # noqa: E402

from cfrkit.cards import parse_cards  # noqa: E402
from cfrkit.games.holdem import CALL, FOLD, HoldemGame, load_definition, raise_action  # noqa: E402
from cfrkit.games.holdem.history import replay_phh, to_phh  # noqa: E402

ANTE = 225


def bb_ante_game(stacks, ante_trimming=False, ante=ANTE):
    """3-handed no-limit, blinds 100/200, the big blind (seat 1) pays the ante for the table."""
    d = load_definition("holdem.nolimit.2p.reverse_blinds").with_changes(
        num_players=3, stack=tuple(stacks), blind=(100, 200, 0), ante=(0, ante, 0), first_player=(2, 0, 0, 0))
    return HoldemGame(d, ante_trimming=ante_trimming)


def deal(state, text):
    for c in parse_cards(text):
        state.apply_action(c)


def test_all_in_ante_payer_does_not_get_the_ante_back():
    # the big blind (seat 1) has 200 behind after the ante and blind; it shoves, the button calls
    game = bb_ante_game([5000, ANTE + 200 + 300, 5000])
    s = game.new_initial_state()
    deal(s, "KsKh" "2c3d" "AsAh")  # seat 1 loses
    s.apply_action(CALL)  # button calls 200
    s.apply_action(FOLD)  # small blind folds
    s.apply_action(raise_action(ANTE + 500))  # big blind all-in: 500 bet + its ante
    s.apply_action(CALL)  # button calls 500
    deal(s, "7c8d9hJsQs")  # no more betting: the board is dealt to the showdown
    assert s.is_terminal()
    # the ante is dead money: the button wins everything, the big blind loses ante + 500
    assert s.returns() == [-100.0, -(ANTE + 500.0), ANTE + 600.0]
    assert s.pots() == [(ANTE + 1100, [1, 2])]


def test_trimming_returns_a_lone_big_blind_ante():
    game = bb_ante_game([5000, 5000, 5000], ante_trimming=True)
    s = game.new_initial_state()
    assert s.spent == [100, 200, 0] and s.pot() == 300  # the whole ante was returned before the blinds
    same = bb_ante_game([5000, 5000, 5000], ante_trimming=False).new_initial_state()
    assert same.spent == [100, ANTE + 200, 0]


@pytest.mark.parametrize("trimming", [False, True])
@pytest.mark.parametrize("players", [2, 3, 6])
def test_random_big_blind_ante_hands_agree_with_pokerkit(trimming, players):
    rng = random.Random(17 + players + 10 * trimming)
    base = load_definition("holdem.nolimit.2p.reverse_blinds")
    hands = 0
    for _ in range(12 if players < 6 else 5):
        bb = 100
        ante = rng.choice([bb, 2 * bb, 3 * bb // 2])
        if players == 2:
            blinds, first, antes = (bb, bb // 2), (1, 0, 0, 0), (ante, 0)  # seat 0 is the big blind
            big_blind_seat = 0
        else:
            blinds, first = (bb // 2, bb) + (0,) * (players - 2), (2 % players, 0, 0, 0)
            antes = (0, ante) + (0,) * (players - 2)
            big_blind_seat = 1
        stacks = []
        for p in range(players):
            need = blinds[p] + antes[p]
            # short stacks (often the ante payer) so all-ins over the ante happen
            stacks.append(rng.randint(need + 1, need + 6 * bb) if rng.random() < 0.5 or p == big_blind_seat
                          else rng.randint(20 * bb, 40 * bb))
        d = base.with_changes(num_players=players, stack=tuple(stacks), blind=blinds, ante=antes, first_player=first)
        game = HoldemGame(d, ante_trimming=trimming)
        for _ in range(10):
            play_and_compare(game, rng)
            hands += 1
    assert hands >= 50


def _pokerkit_final_stacks(text):
    return [float(x) for x in list(pk.HandHistory.loads(text))[-1].stacks]


@pytest.mark.parametrize("trimming", [False, True])
def test_phh_export_of_ante_payer_folding_to_a_raise_replays_in_pokerkit(trimming):
    game = bb_ante_game([5000, 5000, 5000], ante_trimming=trimming)
    s = game.new_initial_state()
    deal(s, "KsKh" "2c3d" "AsAh")
    s.apply_action(raise_action(600))  # button raises
    s.apply_action(FOLD)
    s.apply_action(FOLD)  # the ante payer folds to the raise
    assert s.is_terminal()
    text = to_phh(s)
    assert f"ante_trimming_status = {'true' if trimming else 'false'}" in text
    result = replay_phh(text)
    assert result.ok, result.message
    ours = result.final_stacks()
    assert _pokerkit_final_stacks(text) == ours
    posted = 0 if trimming else ANTE
    assert ours == [4900.0, 4800.0 - posted, 5300.0 + posted]


def test_heads_up_antes_are_written_in_phh_order():
    # heads-up PHH lists antes like blinds, small blind first; pokerkit agrees on the stacks
    d = load_definition("holdem.nolimit.2p.reverse_blinds").with_changes(stack=(3000, 3000), ante=(150, 0))
    game = HoldemGame(d)
    s = game.new_initial_state()
    deal(s, "KsKh" "2c3d")
    s.apply_action(raise_action(300))
    s.apply_action(FOLD)
    text = to_phh(s)
    assert "antes = [0, 150]" in text
    result = replay_phh(text)
    assert result.ok and result.state.history() == s.history()
    assert _pokerkit_final_stacks(text) == result.final_stacks() == [2750.0, 3250.0]


def test_phh_reader_honours_ante_trimming_status():
    text = ('variant = "NT"\nante_trimming_status = {flag}\nantes = [0, 225, 0]\n'
            'blinds_or_straddles = [100, 200, 0]\nmin_bet = 200\nstarting_stacks = [5000, 5000, 5000]\n'
            'actions = ["d dh p1 KsKh", "d dh p2 2c3d", "d dh p3 AsAh", "p3 cbr 600", "p1 f", "p2 f"]\n')
    for flag, trimming in (("false", False), ("true", True)):
        result = replay_phh(text.format(flag=flag))
        assert result.ok and result.state.game.ante_trimming is trimming
        assert result.final_stacks() == _pokerkit_final_stacks(text.format(flag=flag))
    # the PHH default is false
    result = replay_phh(text.replace("ante_trimming_status = {flag}\n", ""))
    assert result.state.game.ante_trimming is False
