"""ACPC game definition files: the shipped ones, round trips, and errors that name the line."""
import pytest

from cfrkit.games.holdem import (DefinitionError, data_dir, data_path, list_definitions, load_definition,
                                 parse_definition)
from cfrkit.games.holdem.definition import UNLIMITED_RAISES, UNLIMITED_STACK

HUNL = """GAMEDEF
nolimit
numPlayers = 2
numRounds = 4
stack = 20000 20000
blind = 100 50
firstPlayer = 2 1 1 1
numSuits = 4
numRanks = 13
numHoleCards = 2
numBoardCards = 0 3 1 1
END GAMEDEF
"""


def test_shipped_definitions_present():
    names = list_definitions()
    for name in ("holdem.nolimit.2p.reverse_blinds", "holdem.limit.2p.reverse_blinds", "holdem.nolimit.3p",
                 "holdem.nolimit.6p"):
        assert name in names
    assert data_path("acpc", "holdem.nolimit.6p.game").is_file()
    assert (data_dir() / "acpc").is_dir()


def test_hunl_reverse_blinds_fields():
    d = load_definition("holdem.nolimit.2p.reverse_blinds")
    assert d.betting == "nolimit" and d.num_players == 2 and d.num_rounds == 4
    assert d.stack == (20000, 20000) and d.blind == (100, 50) and d.big_blind == 100
    assert d.first_player == (1, 0, 0, 0)  # 0-based: seat 1 (small blind) first pre-flop
    assert (d.num_suits, d.num_ranks, d.num_hole_cards, d.num_board_cards) == (4, 13, 2, (0, 3, 1, 1))
    assert d.max_raises == (UNLIMITED_RAISES,) * 4


def test_limit_and_multiway_fields():
    lim = load_definition("holdem.limit.2p.reverse_blinds")
    assert lim.is_limit and lim.raise_size == (10, 10, 20, 20) and lim.max_raises == (3, 4, 4, 4)
    assert lim.stack == (UNLIMITED_STACK,) * 2
    six = load_definition("holdem.nolimit.6p")
    assert six.num_players == 6 and six.blind == (50, 100, 0, 0, 0, 0) and six.first_player == (2, 0, 0, 0)
    three = load_definition("holdem.nolimit.3p")
    assert three.num_players == 3 and three.stack == (20000,) * 3


@pytest.mark.parametrize("name", list_definitions())
def test_to_text_round_trip(name):
    d = load_definition(name)
    again = parse_definition(d.to_text())
    assert again == d


def test_keywords_case_insensitive_and_comments():
    text = "# comment\n; other\n\ngamedef\nNOLIMIT\nNUMPLAYERS = 2\nnumrounds=4\nSTACK = 500 600\nblind = 10 5\n" \
           "firstplayer = 2 1 1 1\nnumsuits = 4\nnumranks = 13\nnumholecards = 2\nnumboardcards = 0 3 1 1\n" \
           "end gamedef\n"
    d = parse_definition(text)
    assert d.stack == (500, 600) and d.blind == (10, 5)


def test_ante_extension():
    d = load_definition("leduc.limit.2p")
    assert d.ante == (1, 1) and d.blind == (0, 0) and d.deck_size == 6


@pytest.mark.parametrize("mutate,line,fragment", [
    (lambda t: t.replace("nolimit\n", "nolimt\n"), 2, "expected 'keyword = values'"),
    (lambda t: t.replace("numPlayers = 2", "numPlayers = 11"), 3, "numPlayers must be 2..10"),
    (lambda t: t.replace("numPlayers = 2", "numPlayers = two"), 3, "needs integers"),
    (lambda t: t.replace("stack = 20000 20000", "stack = 20000"), 5, "needs 2 values"),
    (lambda t: t.replace("firstPlayer = 2 1 1 1", "firstPlayer = 3 1 1 1"), 7, "1-based seats"),
    (lambda t: t.replace("numBoardCards = 0 3 1 1", "numBoardCards = 0 3 1"), 11, "needs 4 values"),
    (lambda t: t.replace("blind = 100 50", "blind = 100 50\nblind = 100 50"), 7, "given twice"),
    (lambda t: t.replace("numSuits = 4", "numSuits = 5"), 8, "numSuits must be 1..4"),
    (lambda t: t.replace("numHoleCards = 2", "numHoleCards = 2\nfoo = 3"), 11, "unknown keyword 'foo'"),
    (lambda t: t.replace("stack = 20000 20000", "stack = 20000 20"), 5, "smaller than its blind"),
    (lambda t: t.replace("nolimit\n", ""), 11, "betting type missing"),
    (lambda t: t.replace("nolimit\n", "limit\n"), 12, "needs 'raiseSize'"),
    (lambda t: t.replace("END GAMEDEF\n", ""), 11, "missing 'END GAMEDEF'"),
    (lambda t: t + "numRanks = 3\n", 13, "after 'END GAMEDEF'"),
    (lambda t: t.replace("GAMEDEF\nnolimit", "GAMEDFE\nnolimit"), 1, "expected 'GAMEDEF'"),
    (lambda t: t.replace("numRanks = 13", "numRanks = 2"), 9, "the deck has 8 cards"),
    (lambda t: t.replace("blind = 100 50", "blind = 0 0"), 6, "positive big blind"),
])
def test_malformed_definition_names_the_line(mutate, line, fragment):
    with pytest.raises(DefinitionError) as info:
        parse_definition(mutate(HUNL), source="bad.game")
    message = str(info.value)
    assert message.startswith(f"bad.game line {line}:"), message
    assert fragment in message, message


def test_empty_and_unknown_definitions():
    with pytest.raises(DefinitionError, match="no 'GAMEDEF'"):
        parse_definition("# nothing\n")
    with pytest.raises(DefinitionError, match="unknown game definition 'nope'.*holdem.nolimit.2p.reverse_blinds"):
        load_definition("nope")


def test_definition_from_path(tmp_path):
    path = tmp_path / "mine.game"
    path.write_text(HUNL.replace("20000 20000", "400 300"))
    d = load_definition(str(path))
    assert d.stack == (400, 300)
    path.write_text(HUNL.replace("numRounds = 4", "numRounds = 0"))
    with pytest.raises(DefinitionError, match=r"mine.game line 4: numRounds must be 1..4"):
        load_definition(str(path))


# ------------------------------------------------------------------ issue 17, item 15
def test_nolimit_definition_without_stacks_is_refused():
    from cfrkit.games.holdem.definition import DefinitionError, parse_definition

    text = ("GAMEDEF\nnolimit\nnumPlayers = 2\nnumRounds = 1\nblind = 2 1\nfirstPlayer = 2\nnumSuits = 4\n"
            "numRanks = 13\nnumHoleCards = 2\nnumBoardCards = 0\nEND GAMEDEF\n")
    with pytest.raises(DefinitionError, match="no-limit betting needs 'stack'"):
        parse_definition(text)
    assert parse_definition(text.replace("blind", "stack = 200 200\nblind")).stack == (200, 200)


@pytest.mark.parametrize("value", ["1" * 40, "\u0663\u0660\u0660", "2_000", "2147483648", "1e3"])
def test_definition_numbers_are_ascii_and_bounded(value):
    from cfrkit.games.holdem.definition import DefinitionError, parse_definition

    text = ("GAMEDEF\nnolimit\nnumPlayers = 2\nnumRounds = 1\nstack = %s 200\nblind = 2 1\nfirstPlayer = 2\n"
            "numSuits = 4\nnumRanks = 13\nnumHoleCards = 2\nnumBoardCards = 0\nEND GAMEDEF\n" % value)
    with pytest.raises(DefinitionError, match="line 5"):
        parse_definition(text)
