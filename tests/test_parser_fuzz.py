"""Bounded fuzzing of every text parser: random mutations of valid inputs raise only documented errors.

Parsers: ACPC MATCHSTATE lines and responses, PHH hands, ACPC dealer logs, ACPC game definitions,
registry game strings, serialized states, card strings, hand-range strings, Hanabi preset names and
move dicts.  Each gets a few hundred seeded mutations (character edits, swapped fields, long digit
runs, non-ASCII digits, separators); anything but the documented error type (or a clean answer) is
a failure.  File loaders (.npz) are fuzzed elsewhere.
"""
import random

import pytest

from cfrkit.cards import CardError, parse_card, parse_cards
from cfrkit.games import GameError, load
from cfrkit.games.base import deserialize_state
from cfrkit.games.holdem.definition import DefinitionError, parse_definition
from cfrkit.games.holdem.history import HistoryError, replay_acpc_log, replay_phh
from cfrkit.games.holdem.matchstate import MatchStateError, parse_response, state_from_matchstate

#: characters mutations insert: protocol separators, digits (ASCII and not), card letters, junk
ALPHABET = (list(":|/,;#=-+.[]\"'() \t\n\r") + list("0123456789") + list("fcrkbAKQJT98765432shdcSHDC")
            + ["\u0663", "\u00b9", "\u00e9", "\x00", "\ufeff", "1" * 30, "9" * 400, "r", "cbr", "??"])


def mutate(text: str, rng: random.Random) -> str:
    """One to four random edits of ``text``."""
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        op = rng.random()
        pos = rng.randrange(len(chars) + 1)
        if op < 0.3 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif op < 0.6:
            chars.insert(pos, rng.choice(ALPHABET))
        elif op < 0.8 and chars:
            chars[min(pos, len(chars) - 1)] = rng.choice(ALPHABET)
        elif chars:  # duplicate or move a chunk
            a = rng.randrange(len(chars))
            b = min(len(chars), a + rng.randint(1, 12))
            chunk = chars[a:b]
            if rng.random() < 0.5:
                del chars[a:b]
            pos = rng.randrange(len(chars) + 1)
            chars[pos:pos] = chunk
    return "".join(chars)


def fuzz(seeds, parse, allowed, count, seed):
    rng = random.Random(seed)
    rejected = 0
    for i in range(count):
        text = mutate(seeds[i % len(seeds)], rng)
        try:
            parse(text)
        except allowed:
            rejected += 1
        except Exception as exc:  # noqa: BLE001 -- the defect being looked for
            raise AssertionError(f"{type(exc).__name__}: {exc!s:.200} on input {text!r:.300}") from None
    assert rejected > count // 10  # the mutations did reach the error paths
    return rejected


HOLDEM = load("holdem")
LIMIT3 = load("holdem(definition=holdem.limit.3p)")
MATCHSTATES = ["MATCHSTATE:0:0:r1761r7884c/:5d5c|/8dAs8s", "MATCHSTATE:1:12:cr300c/cr900c/r2000:|AhKh/2c3c4c/5d",
               "MATCHSTATE:0:3:cc/cc/cc/cc:5d5c|AhKh/8dAs8s/2c/3h", "MATCHSTATE:0:3:r300f:5d5c|"]


def test_fuzz_matchstate():
    def parse(text):
        state_from_matchstate(HOLDEM, text)
        state_from_matchstate(LIMIT3, text.replace("r1761r7884", "rr").replace("|", "||", 1))

    fuzz(MATCHSTATES, parse, MatchStateError, 1500, 1)


def test_fuzz_matchstate_response():
    state = state_from_matchstate(HOLDEM, "MATCHSTATE:0:0:r1761r7884c/:5d5c|/8dAs8s")
    fuzz(["r9000", "c", "f", "r20000", "k"], lambda t: parse_response(state, t), MatchStateError, 400, 2)


PHH = ['variant = "NT"\nante_trimming_status = false\nantes = [0, 225, 0]\nblinds_or_straddles = [100, 200, 0]\n'
       'min_bet = 200\nstarting_stacks = [5000, 925, 5000]\n'
       'actions = ["d dh p1 KsKh", "d dh p2 2c3d", "d dh p3 AsAh", "p3 cc", "p1 f", "p2 cbr 700", "p3 cc",'
       ' "d db 7c8d9h", "d db Js", "d db Qs", "p2 sm 2c3d", "p3 sm AsAh"]\nfinishing_stacks = [4900, 0, 6025]\n',
       'variant = "NT"\nantes = [0, 0]\nblinds_or_straddles = [0.5, 1.0]\nmin_bet = 1.0\n'
       'starting_stacks = [100.00, 80.25]\nactions = ["d dh p1 AsKs", "d dh p2 ????", "p2 cbr 3.00", "p1 f"]\n'
       'players = ["a", "b"]\nhand = 7\n',
       'variant = "FT"\nantes = 0\nblinds_or_straddles = [1, 2]\nsmall_bet = 2\nbig_bet = 4\n'
       'starting_stacks = [200, 200]\nactions = ["d dh p1 AsKs", "d dh p2 7h7d", "p2 cbr 4", "p1 cc",'
       ' "d db 2c3c4c", "p1 cc", "p2 cc", "d db 9s", "p1 f"]\n_max_raises = [4, 4, 4, 4]\n']


def test_fuzz_phh():
    assert all(replay_phh(text).ok for text in PHH[:1])
    fuzz(PHH, replay_phh, HistoryError, 1500, 3)


ACPC_LOG = ("# a log\nSTATE:0:r300c/cr600c/cc/r1200f:5d5c|AhKh/8dAs8s/2c/3h:600|-600:alice|bob\n"
            "STATE:1:cc/cc/cc/cc:Td9d|AhKh/8dAs8s/2c/3h:-100|100:bob|alice # 12:00\n"
            "SCORE:500|-500:alice|bob\n")


def test_fuzz_acpc_log():
    fuzz([ACPC_LOG], lambda t: replay_acpc_log(t, HOLDEM), HistoryError, 800, 4)


DEFINITION = ("GAMEDEF\nnolimit\nnumPlayers = 2\nnumRounds = 4\nstack = 20000 20000\nblind = 100 50\n"
              "firstPlayer = 2 1 1 1\nnumSuits = 4\nnumRanks = 13\nnumHoleCards = 2\nnumBoardCards = 0 3 1 1\n"
              "END GAMEDEF\n")


def test_fuzz_game_definitions():
    limit = DEFINITION.replace("nolimit", "limit").replace("blind", "raiseSize = 100 100 200 200\nmaxRaises = 3 4 4 4\nblind")
    fuzz([DEFINITION, limit], parse_definition, DefinitionError, 1500, 5)


GAME_STRINGS = ["kuhn(players=3)", "leduc(ranks=4,suits=3)", "leduc_nolimit(fractions=0.5;1;2,stack=600)",
                "holdem(definition=holdem.nolimit.3p,antes=5;5;5,ante_trimming=true)",
                "holdem(definition=holdem.limit.2p.reverse_blinds,fractional_split=true)",
                "turn_based(game=matrix(rows=2,cols=3,row_payoffs=1;2;3;4;5;6))", "rps", "hanabi", "symmtom"]


def test_fuzz_game_strings():
    def parse(text):
        if len(text) > 200 or any(ch.isdigit() and ch not in "0123456" for ch in text):
            raise GameError("skipped: may build a big game")  # bounded: only small sizes are loaded
        load(text)

    fuzz(GAME_STRINGS, parse, GameError, 1200, 6)


def test_fuzz_serialized_states():
    state = HOLDEM.new_initial_state()
    for a in (0, 1, 2, 3, 1, 1):
        state.apply_action(a)
    texts = [state.serialize(), "leduc|0,3,1,2", "kuhn(players=3)|0,1,2,0"]
    fuzz(texts, deserialize_state, GameError, 800, 7)


def test_fuzz_cards():
    fuzz(["AhKs", "Ah Ks 2c", "Ah,Ks", "10h9c", "2c3d4h5s6c"], parse_cards, CardError, 800, 8)
    fuzz(["Ah", "2c", "10h", "Ts"], parse_card, CardError, 300, 9)


def test_fuzz_hand_ranges():
    from cfrkit.agents.poker import parse_range

    fuzz(["22+,A2s+,KTo+,QJ,76s-54s", "TT+,AQs+,AKo", "AA", "55-22,A5s-A2s"], parse_range, ValueError, 800, 10)


def test_fuzz_hanabi_presets_and_moves():
    from cfrkit.games.hanabi import HanabiConfig, move_from_dict, preset

    fuzz(["full", "Hanabi-Full-Minimal", "small", "very-small"], preset, GameError, 300, 11)
    config = HanabiConfig(players=2)
    moves = ["PLAY:0", "DISCARD:4", "REVEAL_COLOR:1:R", "REVEAL_RANK:1:3"]

    def parse(text):
        parts = text.split(":")
        move = {"action_type": parts[0]}
        if len(parts) > 1:
            move["card_index" if parts[0] in ("PLAY", "DISCARD") else "target_offset"] = \
                int(parts[1]) if parts[1].isascii() and parts[1].isdigit() else parts[1]
        if len(parts) > 2:
            move["color" if "COLOR" in parts[0] else "rank"] = parts[2]
        move_from_dict(move, config)

    fuzz(moves, parse, GameError, 400, 12)
