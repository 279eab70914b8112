"""cfrkit hold'em vs pokerkit (an independent engine): legal actions, amounts and payoffs.

10,000 random hands over limit and no-limit, heads-up and multi-way games with random (often
unequal) stacks, blinds and antes, so short all-ins, side pots and split pots all occur.
"""
import os
import random
import sys

import pytest

pytest.importorskip("pokerkit")
sys.path.insert(0, os.path.dirname(__file__))

from test_holdem_pokerkit_harness import play_and_compare  # noqa: E402

from cfrkit.games.holdem import HoldemGame, load_definition  # noqa: E402


def random_definition(rng: random.Random, betting: str, players: int):
    base = load_definition("holdem.limit.2p.reverse_blinds" if betting == "limit" else "holdem.nolimit.2p.reverse_blinds")
    bb = rng.choice([2, 10, 100])
    sb = rng.randint(1, bb - 1)  # sb == bb would make the first actor a matter of convention
    ante = rng.choice([0, 0, 0, 1, bb // 2])
    if players == 2:
        blinds, first = (bb, sb), (1, 0, 0, 0)
    else:
        blinds, first = (sb, bb) + (0,) * (players - 2), (2 % players, 0, 0, 0)
    stacks = []
    for p in range(players):
        need = blinds[p] + ante
        u = rng.random()
        if u < 0.05:
            stacks.append(max(need, 1))  # all-in from the blinds / ante (or 1 chip)
        elif u < 0.5:
            stacks.append(rng.randint(max(need, 1), max(need, 1) + 8 * bb))  # short
        else:
            stacks.append(rng.randint(20 * bb, 60 * bb))
    changes = dict(num_players=players, stack=tuple(stacks), blind=blinds, ante=(ante,) * players,
                   first_player=first)
    if betting == "limit":
        changes["raise_size"] = (bb, bb, 2 * bb, 2 * bb)
        changes["max_raises"] = tuple(rng.choice([3, 4]) for _ in range(4))
    return base.with_changes(**changes)


# multi-way showdowns are slow in pokerkit (its hand evaluation is pure Python): most hands are 2-3 handed
CONFIGS = [("nolimit", 2, 3500), ("nolimit", 3, 2000), ("nolimit", 6, 600), ("nolimit", 9, 150),
           ("limit", 2, 2500), ("limit", 3, 1000), ("limit", 6, 400)]


@pytest.mark.parametrize("betting,players,hands", CONFIGS)
def test_random_hands_agree_with_pokerkit(betting, players, hands):
    rng = random.Random(1000 * players + len(betting))
    decisions = 0
    for i in range(hands):
        if i % 25 == 0:
            game = HoldemGame(random_definition(rng, betting, players))
        decisions += play_and_compare(game, rng)
    assert decisions > hands  # the hands had real betting


def test_total_playthroughs_at_least_10000():
    assert sum(h for _, _, h in CONFIGS) >= 10_000


@pytest.mark.parametrize("name", ["holdem.nolimit.2p.reverse_blinds", "holdem.limit.2p.reverse_blinds",
                                  "holdem.nolimit.3p", "holdem.nolimit.6p", "holdem.limit.3p"])
def test_shipped_definitions_agree_with_pokerkit(name):
    rng = random.Random(7)
    game = HoldemGame(name)
    for _ in range(100):
        play_and_compare(game, rng)
