"""Hand histories: PHH (checked both ways against pokerkit) and ACPC logs; replays and rejections."""
import io
import random

import pytest

from cfrkit.games import load
from cfrkit.games.holdem.history import (HistoryError, acpc_log_line, parse_acpc_log_line, read_phh,
                                         replay_acpc_log, replay_phh, to_phh, write_acpc_log)

pk = pytest.importorskip("pokerkit")

GAMES = ["holdem", "holdem(definition=holdem.nolimit.6p,stacks=500;800;160;2000;3000;150)",
         "holdem(definition=holdem.limit.2p.reverse_blinds)", "holdem(definition=holdem.nolimit.3p,antes=5;5;5)",
         "holdem(definition=holdem.limit.3p)"]


def random_hand(game, rng):
    s = game.new_initial_state()
    while not s.is_terminal():
        if s.is_chance_node():
            s.apply_action(rng.choice(s.chance_outcomes())[0])
        else:
            legal = s.legal_actions()
            s.apply_action(rng.choice(legal[:3] + [legal[-1]]) if len(legal) > 3 and rng.random() < 0.7
                           else rng.choice(legal))
    return s


@pytest.mark.parametrize("game_string", GAMES)
def test_phh_round_trip_and_pokerkit_replays_it(game_string):
    game = load(game_string)
    rng = random.Random(4)
    for hand in range(80):
        s = random_hand(game, rng)
        text = to_phh(s, names=[f"bot{i}" for i in range(game.num_players)], hand=hand)
        result = replay_phh(text)
        assert result.ok, result.message
        assert result.state.history() == s.history() and result.names[0] == "bot0"
        final = list(pk.HandHistory.loads(text))[-1]  # pokerkit replays cfrkit's PHH
        assert list(final.stacks) == [int(x) for x in result.final_stacks()], text


def test_pokerkit_phh_replays_in_cfrkit():
    automations = (pk.Automation.ANTE_POSTING, pk.Automation.BET_COLLECTION, pk.Automation.BLIND_OR_STRADDLE_POSTING,
                   pk.Automation.CARD_BURNING, pk.Automation.HOLE_DEALING, pk.Automation.BOARD_DEALING,
                   pk.Automation.HOLE_CARDS_SHOWING_OR_MUCKING, pk.Automation.HAND_KILLING,
                   pk.Automation.CHIPS_PUSHING, pk.Automation.CHIPS_PULLING)
    rng = random.Random(8)
    checked = 0
    for players, stacks_range, limit in [(2, (300, 3000), False), (3, (150, 2000), False), (6, (101, 3000), False),
                                         (2, (10 ** 6, 10 ** 6), True), (4, (40, 400), True)]:
        for _ in range(60):
            if limit:
                game = pk.FixedLimitTexasHoldem(automations, True, 0, (5, 10), 10, 20)
            else:
                game = pk.NoLimitTexasHoldem(automations, True, 0, (50, 100), 100)
            stacks = tuple(rng.randint(*stacks_range) for _ in range(players))
            st = game(stacks, players)
            while st.status:
                if st.can_fold() and rng.random() < 0.15:
                    st.fold()
                elif st.can_complete_bet_or_raise_to() and rng.random() < 0.35:
                    st.complete_bet_or_raise_to(rng.randint(st.min_completion_betting_or_raising_to_amount,
                                                            st.max_completion_betting_or_raising_to_amount))
                else:
                    st.check_or_call()
            text = pk.HandHistory.from_game_state(game, st, finishing_stacks=list(st.stacks)).dumps()
            result = replay_phh(text)
            assert result.ok, (result.message, text)
            assert [int(x) for x in result.final_stacks()] == list(st.stacks)
            checked += 1
    assert checked == 300


def test_phh_rejections_name_the_action():
    game = load("holdem")
    s = random_hand(game, random.Random(1))
    while s.history().count(0) or len(s.actions[0]) < 2:  # want a hand with some betting
        s = random_hand(game, random.Random(len(s.history())))
    text = to_phh(s)
    # raise smaller than the minimum
    bad = text.replace('"p2 cc"', '"p2 cbr 150"', 1) if '"p2 cc"' in text else text.replace('"p2 cbr', '"p2 cbr 1 #', 1)
    result = replay_phh(bad)
    assert not result.ok and "action 3" in result.message and "p2 cbr" in result.message
    # acting out of turn
    result = replay_phh(text.replace('"d dh p2', '"p1 cc", "d dh p2', 1))
    assert not result.ok and "p1 acts but it is p2's turn" in result.message
    # wrong finishing stacks
    wrong = text.replace("finishing_stacks = [", "finishing_stacks = [1")
    result = replay_phh(wrong)
    assert not result.ok and "the history says" in result.message


def test_phh_bad_inputs():
    with pytest.raises(HistoryError, match="variant 'FO/2LD' is not supported"):
        read_phh('variant = "FO/2LD"\n')
    with pytest.raises(HistoryError, match="not valid PHH"):
        read_phh("variant = \n")
    with pytest.raises(HistoryError, match="required field 'starting_stacks' missing"):
        read_phh('variant = "NT"\nantes = 0\nblinds_or_straddles = [1, 2]\nmin_bet = 2\nactions = []\n')
    with pytest.raises(HistoryError, match="cannot be written as PHH"):
        to_phh(random_hand(load("holdem(definition=leduc.limit.2p)"), random.Random(0)))


@pytest.mark.parametrize("game_string", GAMES + ["holdem(definition=leduc.limit.2p)",
                                                 "holdem(definition=holdem.nolimit.3p,blinds=25;100;0,"
                                                 "fractional_split=true)"])
def test_acpc_log_write_and_replay(game_string):
    game = load(game_string)
    rng = random.Random(2)
    hands = [(random_hand(game, rng), i, [f"p{(i + k) % game.num_players}" for k in range(game.num_players)])
             for i in range(60)]
    out = io.StringIO()
    write_acpc_log(hands, out, game)
    text = out.getvalue()
    assert text.splitlines()[-1].startswith("SCORE:")
    results = replay_acpc_log(text, game)
    assert len(results) == 60 and all(r.ok for r in results), [r.message for r in results if not r.ok]
    for (state, number, names), r in zip(hands, results):
        assert r.hand_number == number and r.names == names
        assert r.final_stacks() == [game.definition.stack[p] + x for p, x in enumerate(state.returns())]
        assert r.state.history() == state.history()


def test_acpc_log_rejections():
    game = load("holdem")
    line = "STATE:3:r300c/cr600f:AsKs|QhQd/2c7d9h:-300|300:alice|bob"
    (result,) = replay_acpc_log(line, game)
    assert result.ok and result.final_stacks() == [19700, 20300]
    (result,) = replay_acpc_log(line.replace("cr600f", "cr250f"), game)
    assert not result.ok and "line 1" in result.message and "action 2 of round 2 (r250) is illegal" in result.message
    (result,) = replay_acpc_log(line.replace(":-300|300:", ":-200|200:"), game)
    assert not result.ok and "seat 0 nets -300 chips under the rules, the history says -200" in result.message
    (result,) = replay_acpc_log("STATE:3:r300c/cr600:AsKs|QhQd/2c7d9h:0|0:a|b", game)
    assert not result.ok and "ends before the hand is over" in result.message
    with pytest.raises(HistoryError, match="line 2: expected STATE"):
        replay_acpc_log("# header\nSTATE:1:cc\n", game)
    assert parse_acpc_log_line(line)[3] == [-300.0, 300.0]
    (result,) = replay_acpc_log(line, game)
    assert acpc_log_line(result.state, 3, ["alice", "bob"]) == line


def test_published_log_lines_replay():
    # the example hand of the public DeepStack match logs (ACPC format with a timestamp)
    deepstack = ("STATE:19:r200c/cr400c/cr850f:9hQc|5dQd/4h4c6c/4s:-400|400:DeepStack|player.account"
                 " # 1479132064.35509")
    (result,) = replay_acpc_log(deepstack, load("holdem"))
    assert result.ok, result.message
    assert result.names == ["DeepStack", "player.account"] and result.final_stacks() == [19600, 20400]
    # the example hand of the public Pluribus 5 humans + 1 AI logs (blinds 50/100, stacks 10000)
    pluribus = ("STATE:7:fr225fffc/cr475c/cr1225c/cc:5hJc|Jd9h|6s5c|Ah7h|2s2d|3hTs/3sJh2h/Tc/Ks:"
                "-50|1275|0|-1225|0|0:Gogo|Budd|Eddie|Bill|Pluribus|MrWhite")
    game = load("holdem(definition=holdem.nolimit.6p,stacks=10000;10000;10000;10000;10000;10000)")
    (result,) = replay_acpc_log(pluribus, game)
    assert result.ok, result.message
    assert result.state.returns() == [-50.0, 1275.0, 0.0, -1225.0, 0.0, 0.0]


# ------------------------------------------------------------------ PHH amounts (issue 17, item 8)
DOLLARS = '''variant = "NT"
ante_trimming_status = true
antes = [0, 0]
blinds_or_straddles = [0.5, 1.0]
min_bet = 1.0
starting_stacks = [100.00, 80.25]
actions = ["d dh p1 AsKs", "d dh p2 2c3d", "p2 cbr 3.00", "p1 cbr 9.5", "p2 cc", "d db 7c8d9h", "p1 cbr 12.25", "p2 f"]
'''


def test_phh_decimal_amounts_are_exact_and_agree_with_pokerkit():
    result = replay_phh(DOLLARS)
    assert result.ok, result.message
    assert result.chip_scale == 100  # cents
    assert result.state.spent == [950 + 1225, 950]  # the 0.50 blind was not rounded to 0
    assert result.final_stacks() == [109.5, 70.75]
    assert [float(x) for x in list(pk.HandHistory.loads(DOLLARS))[-1].stacks] == result.final_stacks()
    # finishing stacks in dollars are checked in dollars
    assert replay_phh(DOLLARS + "finishing_stacks = [109.50, 70.75]\n").ok
    wrong = replay_phh(DOLLARS + "finishing_stacks = [109.49, 70.76]\n")
    assert not wrong.ok and "the history says 9.49" in wrong.message


def test_phh_amounts_refused_clearly_never_rounded():
    with pytest.raises(HistoryError, match="more than 6 decimal places"):
        replay_phh(DOLLARS.replace("0.5,", "0.1234567,"))
    with pytest.raises(HistoryError, match="too large"):
        replay_phh(DOLLARS.replace("100.00", "1" * 40))
    with pytest.raises(HistoryError, match="must not be negative|non-negative"):
        replay_phh(DOLLARS.replace("100.00", "-100.00"))
    with pytest.raises(HistoryError, match="finite"):
        replay_phh(DOLLARS.replace("100.00", "inf"))
    for bad in ("3,00", "3.", "abc", "1e3", "٣"):
        with pytest.raises(HistoryError) as info:
            replay_phh(DOLLARS.replace("p2 cbr 3.00", f"p2 cbr {bad}"))
        message = str(info.value)
        assert message.count("action 3") == 1, message  # the location is printed once
    with pytest.raises(HistoryError) as info:
        replay_phh(DOLLARS.replace("p2 cbr 3.00", "p2 cbr"))
    assert str(info.value).count("action 3") == 1 and "cbr needs an amount" in str(info.value)


def test_phh_unknown_hole_cards_at_showdown_are_not_made_up():
    text = ('variant = "NT"\nantes = 0\nblinds_or_straddles = [50, 100]\nmin_bet = 100\n'
            'starting_stacks = [1000, 1000]\n'
            'actions = ["d dh p1 AsAh", "d dh p2 ????", "p2 cc", "p1 cc", "d db 7c8d9h", "p1 cc", "p2 cc",'
            ' "d db 2s", "p1 cc", "p2 cc", "d db 3s", "p1 cc", "p2 cc"]\n')
    result = replay_phh(text)
    assert not result.ok and "p2 are unknown" in result.message
    # shown at the showdown: known, so it settles
    shown = replay_phh(text.replace('"p2 cc"]', '"p2 cc", "p2 sm KcKd", "p1 sm AsAh"]'))
    assert shown.ok and shown.final_stacks() == [1100.0, 900.0]
    # a hand that ends by a fold does not need the unknown cards
    folded = replay_phh(text.split('"d db 7c8d9h"')[0].replace('"p2 cc", "p1 cc", ', '"p2 f"') + "]\n")
    assert folded.ok, folded.message
