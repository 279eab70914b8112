"""Hold'em rules: known betting situations, side and split pots, conservation, protocol checks."""
import random

import pytest

from cfrkit.cards import parse_cards
from cfrkit.games import GameError, IllegalActionError, load
from cfrkit.games.consistency import check_game
from cfrkit.games.holdem import CALL, FOLD, RAISE, HoldemGame, hand_strength, raise_action, raise_amount
from holdem_play import play

GAMES = [
    "holdem",
    "holdem(definition=holdem.limit.2p.reverse_blinds)",
    "holdem(definition=holdem.nolimit.3p)",
    "holdem(definition=holdem.nolimit.6p)",
    "holdem(definition=holdem.limit.3p)",
    "holdem(definition=leduc.limit.2p)",
    "holdem(definition=holdem.nolimit.3p,stacks=300;1000;150,antes=5;5;5)",
    "holdem(definition=holdem.nolimit.6p,stacks=100;2000;150;4000;51;900)",
]


@pytest.mark.parametrize("game", GAMES)
def test_consistency(game):
    result = check_game(game, num_playthroughs=150, seed=3)
    assert result["terminals"] == 150


def deal(state, holes):
    """Deal explicit hole cards ('AsKs|QhQd|...') as chance outcomes."""
    for hole in holes.split("|"):
        for c in parse_cards(hole):
            state.apply_action(c)


def test_hunl_preflop_amounts():
    s = load("holdem").new_initial_state()
    deal(s, "AsKs|QhQd")
    assert s.current_player() == 1  # small blind first pre-flop
    assert s.call_amount() == 50
    assert s.raise_range() == (200, 20000)
    assert not s.is_legal(raise_action(199)) and s.is_legal(raise_action(200))
    s.apply_action(raise_action(300))
    assert s.current_player() == 0 and s.call_amount() == 200
    assert s.raise_range() == (500, 20000)  # last raise 200 -> at least 300 + 200
    s.apply_action(CALL)
    assert s.is_chance_node() and s.round == 1
    for c in parse_cards("2c7d9h"):
        s.apply_action(c)
    assert s.current_player() == 0  # big blind first after the flop
    assert s.raise_range() == (400, 20000)  # bet at least the big blind
    assert not s.is_legal(FOLD)  # no folding when checking is free
    s.apply_action(raise_action(450))  # bet 150
    assert s.raise_range() == (600, 20000)  # min raise = max(150, 100)
    assert s.betting_string() == "r300c/r450"


def test_all_in_always_allowed_and_short_stack_call():
    g = load("holdem(stacks=20000;180)")
    s = g.new_initial_state()
    deal(s, "AsKs|QhQd")
    assert s.raise_range() == (180, 180)  # can only go all-in for less than a min raise
    s.apply_action(raise_action(180))
    assert s.call_amount() == 80 and s.raise_range() is None  # nobody left to raise against
    s.apply_action(CALL)
    play(s, board=parse_cards("2c7d9h3s4s"))
    assert s.is_terminal() and s.returns() == [-180.0, 180.0]  # QQ beats AK on this board


def test_short_all_in_does_not_reopen_betting():
    # seat 1 (big blind) has 250: an all-in raise of 50 over 200 is not a full raise
    g = load("holdem(definition=holdem.nolimit.3p,stacks=20000;250;20000)")
    s = g.new_initial_state()
    deal(s, "AsKs|QhQd|JcJd")
    assert s.current_player() == 2
    s.apply_action(raise_action(200))
    s.apply_action(CALL)  # seat 0
    assert s.current_player() == 1 and s.raise_range() == (250, 250)
    s.apply_action(raise_action(250))
    assert s.current_player() == 2 and s.raise_range() is None and s.legal_actions() == [FOLD, CALL]
    s.apply_action(CALL)
    assert s.current_player() == 0 and s.raise_range() is None
    # with 300 the all-in is a full raise and seat 2 may raise again (to at least 400)
    g = load("holdem(definition=holdem.nolimit.3p,stacks=20000;300;20000)")
    s = g.new_initial_state()
    deal(s, "AsKs|QhQd|JcJd")
    play(s, raise_action(200), CALL, raise_action(300))
    assert s.raise_range() == (400, 20000)


def test_side_pots():
    g = load("holdem(definition=holdem.nolimit.3p,stacks=1000;3000;3000)")
    s = g.new_initial_state()
    deal(s, "AsAd|KsKd|QsQd")
    play(s, raise_action(300), raise_action(1000), CALL, CALL,  # pre-flop: seat 0 all-in
         raise_action(1500), CALL,  # flop: seat 1 bets 500, seat 2 calls
         CALL, CALL, CALL, CALL, board=parse_cards("2c7d9h4s3c"))
    assert s.is_terminal() and s.reached_showdown()
    assert s.pots() == [(3000, [0, 1, 2]), (1000, [1, 2])]
    assert s.returns() == [2000.0, -500.0, -1500.0]


def test_split_pot_odd_chip_to_lowest_seat():
    g = load("holdem(definition=holdem.nolimit.3p,blinds=25;100;0)")
    s = g.new_initial_state()
    deal(s, "2c3d|4h5s|6c7d")
    play(s, CALL, FOLD, CALL, CALL, CALL, CALL, CALL, CALL, CALL, board=parse_cards("AsKsQdJhTc"))
    assert s.is_terminal()
    assert s.returns() == [-25.0, 13.0, 12.0]  # 225 split: odd chip to seat 1


def test_fractional_split_as_the_acpc_dealer():
    g = load("holdem(definition=holdem.nolimit.3p,blinds=25;100;0,fractional_split=true)")
    s = g.new_initial_state()
    deal(s, "2c3d|4h5s|6c7d")
    play(s, CALL, FOLD, CALL, CALL, CALL, CALL, CALL, CALL, CALL, board=parse_cards("AsKsQdJhTc"))
    assert s.returns() == [-25.0, 12.5, 12.5]  # integer split: [-25, 13, 12]
    s = g.new_initial_state()
    deal(s, "2c3d|4h5s|6c7d")  # everybody puts in 301 and ties: nobody wins or loses
    play(s, raise_action(301), CALL, CALL, CALL, CALL, CALL, CALL, CALL, CALL, CALL, CALL,
         board=parse_cards("AsKsQdJhTc"))
    assert s.returns() == [0.0, 0.0, 0.0]
    assert check_game(g, num_playthroughs=100)["terminals"] == 100


def test_fold_ends_hand_and_uncalled_bet_returns():
    s = load("holdem").new_initial_state()
    deal(s, "AsKs|QhQd")
    play(s, raise_action(300), raise_action(900), FOLD)
    assert s.is_terminal() and not s.reached_showdown()
    assert s.returns() == [300.0, -300.0]


def test_limit_raise_cap_and_sizes():
    g = load("holdem(definition=holdem.limit.2p.reverse_blinds)")
    s = g.new_initial_state()
    deal(s, "AsKs|QhQd")
    assert g.num_distinct_actions() == 3
    for expected in (20, 30, 40):
        assert s.raise_range() == (expected, expected)
        s.apply_action(RAISE)
    assert s.raise_range() is None and s.legal_actions() == [FOLD, CALL]  # maxRaises 3 pre-flop
    s.apply_action(CALL)
    for c in parse_cards("2c7d9h"):
        s.apply_action(c)
    assert s.raise_range() == (50, 50)  # flop small bet 10
    play(s, CALL, CALL, CALL, board=parse_cards("3s"))
    assert s.raise_range() == (60, 60)  # turn big bet 20
    assert s.betting_string() == "rrrc/cc/c"


def test_illegal_action_message_is_compact():
    s = load("holdem").new_initial_state()
    deal(s, "AsKs|QhQd")
    with pytest.raises(IllegalActionError) as info:
        s.apply_action(raise_action(150))
    message = str(info.value)
    assert "202..20002 (raise to 200..20000)" in message and len(message) < 200


def test_action_encoding_helpers():
    assert raise_amount(raise_action(1234)) == 1234
    g = load("holdem")
    assert g.num_distinct_actions() == raise_action(20000) + 1


def test_small_deck_showdown_uses_pairs():
    g = load("holdem(definition=leduc.limit.2p)")
    assert hand_strength(parse_cards("2c2d")) > hand_strength(parse_cards("4c3d"))
    s = g.new_initial_state()
    s.apply_action(parse_cards("2c")[0])
    s.apply_action(parse_cards("4c")[0])
    play(s, CALL, CALL, CALL, CALL, board=parse_cards("2d"))
    assert s.is_terminal() and s.returns() == [1.0, -1.0]


@pytest.mark.parametrize("game", GAMES)
def test_chips_conserved_and_bounded(game):
    g = load(game)
    rng = random.Random(11)
    for _ in range(300):
        s = g.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(rng.choice(s.chance_outcomes())[0])
            else:
                legal = s.legal_actions()
                s.apply_action(rng.choice(legal[:2] + [legal[-1]] if len(legal) > 3 and rng.random() < 0.5 else legal))
            assert all(0 <= s.spent[p] <= g.definition.stack[p] for p in range(g.num_players))
        r = s.returns()
        assert sum(r) == 0.0
        assert sum(s.winnings()) == s.pot()
        assert all(g.min_utility() <= x <= g.max_utility() for x in r)


def test_bad_overrides():
    with pytest.raises(GameError, match="stacks needs 2 values"):
        load("holdem(stacks=100;200;300)")
    with pytest.raises(GameError, match="smaller than its blind"):
        load("holdem(stacks=50;1000)")
    with pytest.raises(GameError, match="unknown game definition"):
        load("holdem(definition=no.such.game)")


def test_information_state_hides_other_cards():
    s = load("holdem").new_initial_state()
    deal(s, "AsKs|QhQd")
    assert s.information_state_string(1) == "1::|QhQd"
    assert s.information_state_string(0) == "0::AsKs|"
    assert HoldemGame().game_string() == "holdem"


def _replayed_with_board(state, start, cards):
    """Reference for HoldemState.with_board_cards: replay the history, dealing ``cards`` as board cards
    ``start, start + 1, ...`` (chance deals after the hole cards are the board, in order)."""
    out = state.game.new_initial_state()
    board_index = 0
    for action in state.history():
        if out.is_chance_node() and out.hole_cards_dealt:
            if start <= board_index < start + len(cards):
                action = cards[board_index - start]
            board_index += 1
        out.apply_action(action)
    return out


@pytest.mark.parametrize("game", ["holdem", "holdem(definition=holdem.limit.3p)", "holdem(definition=leduc.limit.2p)"])
def test_with_board_cards_equals_replaying_the_history_on_another_board(game):
    g = load(game)
    rng = random.Random(11)
    checked = 0
    for _ in range(300):
        s = g.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(rng.choice([c for c, _ in s.chance_outcomes()]))
            else:
                legal = s.legal_actions()
                s.apply_action(rng.choice([a for a in legal if a != FOLD] or legal))
            if s.board and rng.random() < 0.3:
                break
        if not s.board:
            continue
        start = rng.randrange(len(s.board))
        seen = set(s.board) | {c for h in s.hole for c in h}
        unseen = [c for c in g.definition.deck() if c not in seen]
        cards = rng.sample(unseen, rng.randint(1, len(s.board) - start))
        before = (list(s.board), s.history())
        got = s.with_board_cards(start, cards)
        want = _replayed_with_board(s, start, cards)
        assert got.history() == want.history() and got.board == want.board and got.hole == want.hole
        assert got.legal_actions() == want.legal_actions() and got.spent == want.spent
        if got.is_terminal():
            assert got.returns() == want.returns()
        assert (s.board, s.history()) == before  # the original is unchanged
        checked += 1
    assert checked > 100
    with pytest.raises(GameError, match="not all dealt"):
        s.with_board_cards(len(s.board), [unseen[0]])
    with pytest.raises(GameError, match="distinct unseen"):
        s.with_board_cards(0, [s.hole[0][0]])
    with pytest.raises(GameError, match="distinct unseen"):
        s.with_board_cards(0, [999])


def _fields(s):
    """Every field of a hold'em state that the rules read, as plain values (lists and sets copied)."""
    return (s.history(), [list(h) for h in s.hole], list(s.board), s.round, list(s.spent), list(s.round_start),
            list(s.folded), list(s.actors), sorted(s.acted), s.raise_inc, s.raise_count, list(s.short_allins),
            [list(a) for a in s.actions], s._terminal, s._dealt)


@pytest.mark.parametrize("game", ["holdem", "holdem(definition=holdem.limit.3p)", "holdem(definition=leduc.limit.2p)",
                                  "holdem(definition=holdem.nolimit.3p,stacks=300;1000;150,antes=5;5;5)"])
def test_clones_played_on_leave_the_original_as_replayed(game):
    """``clone`` shares the lists a state no longer changes (complete hole cards, past rounds' actions): a clone
    taken at every node and played to the end (cards, folds, calls, raises, new rounds), its hole lists replaced as
    the views do, leaves the original field for field as it was, and plays as a fresh replay of its history."""
    g = load(game)
    rng = random.Random(5)

    def step(s):
        if s.is_chance_node():
            s.apply_action(rng.choice([c for c, _ in s.chance_outcomes()]))
        else:
            legal = list(s.legal_actions()) if g.definition.is_limit else None
            if legal is None:
                lo_hi = s.raise_range()
                legal = [FOLD, CALL] + ([raise_action(rng.randint(*lo_hi))] if lo_hi else [])
                legal = [a for a in legal if s.is_legal(a)]
            s.apply_action(rng.choice(legal))

    clones = 0
    for _ in range(60):
        s = g.new_initial_state()
        while not s.is_terminal():
            before = _fields(s)
            c = s.clone()
            while not c.is_terminal():
                step(c)
            if c.hole and c.hole[0]:
                c.hole[0] = list(c.hole[0])  # replaced, as poker views do; the original keeps its own
            assert _fields(s) == before
            replay = g.new_initial_state()
            for a in c.history():
                replay.apply_action(a)
            assert _fields(replay) == _fields(c) and replay.returns() == c.returns()
            clones += 1
            step(s)
    assert clones > 300
