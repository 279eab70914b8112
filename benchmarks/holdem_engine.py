"""Random heads-up no-limit hold'em hands per second: cfrkit's engines beside pokerkit and OpenSpiel.

The game: heads-up no-limit, stacks 20000, blinds 50/100 (ACPC's HUNL,
``holdem.nolimit.2p.reverse_blinds``), full game (every raise size legal).  Agents included: at every
decision a random agent picks uniformly among the legal kinds (fold when facing a bet, check/call,
raise when legal), then a raise-to amount uniformly between the minimum raise and all-in
(cfrkit's ``RandomAgent`` rule); cards are dealt at random; each hand is played to its payoffs.

Contenders (one process, one core, same run):

* ``cfrkit compiled (batched)`` -- ``cfrkit.games.holdem.fast.play_random_hands``: engine and random
  agents in C (``pyx/holdem_engine.pyx``);
* ``cfrkit compiled (stepped)`` -- ``FastHoldemState`` stepped from Python by the Python
  ``RandomAgent`` (one ``action_view()`` and one ``apply`` per decision);
* ``cfrkit HoldemState`` -- the ``holdem`` protocol (reference engine) with the Python ``RandomAgent``
  (reads ``action_view()``), chance through ``chance_outcomes()``; and the same with a game-agnostic
  random agent that reads the id list ``legal_actions()`` (the path that listed 19,803 raise ids per
  decision before ``legal_actions()`` became lazy);
* ``pokerkit`` -- ``NoLimitTexasHoldem`` with dealing, showdown and chip automations, the same
  random agent through its ``can_*`` / ``fold`` / ``check_or_call`` / ``complete_bet_or_raise_to`` API;
* ``OpenSpiel universal_poker`` -- the same game (``bettingAbstraction=fullgame``) through pyspiel,
  the same random agent over ``legal_actions()``, chance through ``chance_outcomes()``.

Usage: python benchmarks/holdem_engine.py [--seconds 3] [--seed 0]
Each contender plays for about ``--seconds`` (wall); hands/s are reported per wall second and per
CPU second of this process (the machine is shared: the CPU figure is the less noisy one).
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run from a checkout

from cfrkit.agents.poker import RandomAgent  # noqa: E402
from cfrkit.games import load  # noqa: E402
from cfrkit.games.holdem.fast import compiled_state, play_random_hands  # noqa: E402

GAME = "holdem(definition=holdem.nolimit.2p.reverse_blinds)"


def timed(play, seconds):
    """Call ``play(k)`` (plays k hands, returns a checksum) with growing k until ``seconds`` pass."""
    hands, wall, cpu, k = 0, 0.0, 0.0, 1
    while wall < seconds:
        t, c = time.perf_counter(), time.process_time()
        play(k)
        wall += time.perf_counter() - t
        cpu += time.process_time() - c
        hands += k
        k = min(k * 2, 1_000_000)
    return hands, wall, cpu


def cfrkit_batched(seed):
    game = load(GAME)
    counter = [seed]

    def play(k):
        counter[0] += 1
        return float(play_random_hands(game, k, seed=counter[0]).returns[:, 0].sum())
    return play


def cfrkit_stepped(seed):
    game = load(GAME)
    agents = [RandomAgent(seed), RandomAgent(seed + 1)]
    rng = random.Random(seed)
    deck = list(range(52))

    def play(k):
        total = 0.0
        for _ in range(k):
            s = compiled_state(game)
            cards = rng.sample(deck, 9)
            i = 0
            while True:
                p = s.current_player()
                if p >= 0:
                    s.apply(agents[p].act(s))
                elif p == -1:
                    s.apply(cards[i])
                    i += 1
                else:
                    break
            total += s.returns()[0]
        return total
    return play


def protocol_play(game, rng, act):
    """``play(k)``: k hands of ``game`` through the OpenSpiel-style state protocol (cfrkit's or pyspiel's),
    chance outcomes drawn uniformly with ``rng``, ``act(state)`` at decisions; returns seat 0's total (chips)."""
    def play(k):
        total = 0.0
        for _ in range(k):
            s = game.new_initial_state()
            while not s.is_terminal():
                if s.is_chance_node():
                    outcomes = s.chance_outcomes()
                    s.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                else:
                    s.apply_action(act(s))
            total += s.returns()[0]
        return total
    return play


def random_kind_action(rng):
    """``act(state)`` of a game-agnostic random agent reading ``legal_actions()`` (ids: 0 fold, 1 call, then
    the raises) at every decision: fold, call or raise uniformly, then a raise size uniformly."""
    def act(s):
        legal = s.legal_actions()  # cfrkit's is lazy: len / indexing without listing 19,803 raise ids
        kinds = [a for a in (0, 1) if a in legal]
        raises = len(legal) - len(kinds)
        if raises:
            kinds.append(2)
        kind = rng.choice(kinds)
        return kind if kind < 2 else legal[len(kinds) - 1 + rng.randrange(raises)]
    return act


def cfrkit_protocol(seed):
    agents = [RandomAgent(seed), RandomAgent(seed + 1)]
    return protocol_play(load(GAME), random.Random(seed), lambda s: agents[s.current_player()].act(s))


def cfrkit_protocol_generic(seed):
    """A game-agnostic random agent that reads ``legal_actions()`` (the id list) at every decision."""
    rng = random.Random(seed)
    return protocol_play(load(GAME), rng, random_kind_action(rng))


def pokerkit_player(seed):
    import pokerkit as pk

    rng = random.Random(seed)
    automations = (pk.Automation.ANTE_POSTING, pk.Automation.BET_COLLECTION,
                   pk.Automation.BLIND_OR_STRADDLE_POSTING, pk.Automation.CARD_BURNING,
                   pk.Automation.HOLE_DEALING, pk.Automation.BOARD_DEALING,
                   pk.Automation.HOLE_CARDS_SHOWING_OR_MUCKING, pk.Automation.HAND_KILLING,
                   pk.Automation.CHIPS_PUSHING, pk.Automation.CHIPS_PULLING)

    def play(k):
        total = 0.0
        for _ in range(k):
            st = pk.NoLimitTexasHoldem.create_state(automations, True, 0, (50, 100), 100, 20000, 2)
            while st.status:
                kinds = ["c"]
                if st.can_fold():
                    kinds.append("f")
                if st.can_complete_bet_or_raise_to():
                    kinds.append("r")
                kind = rng.choice(kinds)
                if kind == "f":
                    st.fold()
                elif kind == "c":
                    st.check_or_call()
                else:
                    st.complete_bet_or_raise_to(rng.randint(st.min_completion_betting_or_raising_to_amount,
                                                            st.max_completion_betting_or_raising_to_amount))
            total += st.stacks[0] - 20000
        return total
    return play


def openspiel_player(seed):
    import pyspiel

    game = pyspiel.load_game("universal_poker", {
        "betting": "nolimit", "numPlayers": 2, "numRounds": 4, "blind": "100 50", "firstPlayer": "2 1 1 1",
        "numSuits": 4, "numRanks": 13, "numHoleCards": 2, "numBoardCards": "0 3 1 1",
        "stack": "20000 20000", "bettingAbstraction": "fullgame"})
    rng = random.Random(seed)
    return protocol_play(game, rng, random_kind_action(rng))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="play time per contender (wall seconds)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"python {platform.python_version()}, {platform.machine()}, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    contenders = [("cfrkit compiled (batched, agents in C)", cfrkit_batched),
                  ("cfrkit compiled (stepped, Python RandomAgent)", cfrkit_stepped),
                  ("cfrkit HoldemState protocol (Python RandomAgent)", cfrkit_protocol),
                  ("cfrkit HoldemState protocol (legal_actions() agent)", cfrkit_protocol_generic),
                  ("pokerkit", pokerkit_player),
                  ("OpenSpiel universal_poker", openspiel_player)]
    rates = {}
    for name, make in contenders:
        try:
            play = make(args.seed)
        except ImportError as exc:
            print(f"{name:52s} skipped: {exc}")
            continue
        play(2)  # warm up (tables, imports)
        hands, wall, cpu = timed(play, args.seconds)
        rates[name] = (hands / wall, hands / cpu)
        print(f"{name:52s} {hands:9d} hands {hands / wall:12,.0f} hands/s wall {hands / cpu:12,.0f} hands/s CPU")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for peer in ("pokerkit", "OpenSpiel universal_poker"):
        if peer not in rates:
            continue
        for name in [n for n in rates if n.startswith("cfrkit")]:
            print(f"ratio {name} / {peer}: {rates[name][0] / rates[peer][0]:,.1f}x wall, "
                  f"{rates[name][1] / rates[peer][1]:,.1f}x CPU")


if __name__ == "__main__":
    main()
