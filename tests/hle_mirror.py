"""Helpers that replay the deals of a hanabi-learning-environment game in the cfrkit engine."""
import random

import numpy as np

PRESET_HLE = {
    "full": dict(colors=5, ranks=5, max_information_tokens=8, max_life_tokens=3, observation_type=1),
    "full-minimal": dict(colors=5, ranks=5, max_information_tokens=8, max_life_tokens=3, observation_type=0),
    "small": dict(colors=2, ranks=5, hand_size=2, max_information_tokens=3, max_life_tokens=1, observation_type=1),
    "very-small": dict(colors=1, ranks=5, hand_size=2, max_information_tokens=3, max_life_tokens=1, observation_type=1),
}


def mirror_random_game(pyhanabi, engine_mod, hle_params, seed, careful=False):
    """Play one random HLE game, mirroring every deal and move in an EngineState.

    Yields ``(game, hle_state, engine_state)`` at every decision node and once at the end.  With
    ``careful`` the random player only plays cards that are playable (it peeks), so games run into the
    end-game after the deck is exhausted and complete fireworks instead of losing all lives early.
    """
    params = dict(hle_params)
    params["seed"] = seed
    game = pyhanabi.HanabiGame(params)
    cfg = engine_mod.EngineConfig(players=game.num_players(), colors=game.num_colors(), ranks=game.num_ranks(),
                                  hand_size=game.hand_size(), max_information_tokens=game.max_information_tokens(),
                                  max_life_tokens=game.max_life_tokens(), observation_type=int(game.observation_type()),
                                  random_start_player=bool(params.get("random_start_player", False)))
    hs = game.new_initial_state()
    es = engine_mod.EngineState(cfg, 0)
    rng = random.Random(seed)
    R = game.num_ranks()

    def deal_pending():
        while hs.cur_player() == pyhanabi.CHANCE_PLAYER_ID and not hs.is_terminal():
            p = es.player_to_deal()
            before = len(hs.player_hands()[p])
            hs.deal_random_card()
            card = hs.player_hands()[p][before]
            es.deal(card.color() * R + card.rank())

    deal_pending()
    if params.get("random_start_player"):
        # both draw the first player from their own generators: give the engine HLE's
        es.set_start_player(hs.cur_player())
    while not hs.is_terminal():
        yield game, hs, es
        moves = hs.legal_moves()
        if careful:
            hand = hs.player_hands()[hs.cur_player()]
            fw = hs.fireworks()
            good = [m for m in moves if m.type() != pyhanabi.HanabiMoveType.PLAY
                    or fw[hand[m.card_index()].color()] == hand[m.card_index()].rank()]
            plays = [m for m in good if m.type() == pyhanabi.HanabiMoveType.PLAY]
            moves = plays if plays and rng.random() < 0.7 else (good or moves)
        move = rng.choice(moves)
        es.apply(game.get_move_uid(move))
        hs.apply_move(move)
        deal_pending()
    yield game, hs, es
