"""Hanabi in the cfrkit game protocol (``load("hanabi(players=3)")``).

Chance nodes deal one card at a time (outcome = card id ``colour * ranks + rank``, probability
proportional to the copies left), exactly as HLE's chance player does; decision nodes use HLE's move
ids.  The game is cooperative: every player's return is the game's score.

A player's information state is everything it has observed: the cards dealt to the others (its own
as ``?``; seer games show them too) and every move with its public outcome (the card played or
discarded, the cards a hint touched).  Observation tensors are HLE's canonical encoding.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from cfrkit._kernels import hanabi_engine as _engine
from cfrkit.games.base import CHANCE, Game, GameError, State
from cfrkit.games.hanabi.config import HanabiConfig, card_name, move_to_string
from cfrkit.games.registry import register

DEFAULTS = dict(players=2, colors=5, ranks=5, hand_size=0, max_information_tokens=8, max_life_tokens=3,
                observation_type="card_knowledge", scoring="zero_on_loss")


class HanabiGame(Game):
    """Hanabi with HLE's rules for the given parameters (see :class:`HanabiConfig`)."""

    short_name = "hanabi"
    constant_sum = False
    utility_sum = None

    def __init__(self, players: int = 2, colors: int = 5, ranks: int = 5, hand_size: int = 0,
                 max_information_tokens: int = 8, max_life_tokens: int = 3,
                 observation_type: str = "card_knowledge", scoring: str = "zero_on_loss",
                 random_start_player: bool = False):
        if random_start_player:
            # HLE draws the first player from its generator, not as a chance outcome; this game's chance
            # nodes are exactly the deals, so a random start belongs to the environments
            raise GameError("random_start_player is supported by HanabiEnv, HanabiAECEnv, HanabiVectorEnv and "
                            "play_games, not by the protocol game (player 0 starts)")
        self.config = HanabiConfig(players, colors, ranks, hand_size, max_information_tokens, max_life_tokens,
                                   observation_type, scoring)
        params = dict(players=players, colors=colors, ranks=ranks, hand_size=hand_size,
                      max_information_tokens=max_information_tokens, max_life_tokens=max_life_tokens,
                      observation_type=observation_type, scoring=scoring)
        super().__init__(params)
        self.num_players = players
        self.engine_config = self.config.engine_config()

    @classmethod
    def from_config(cls, config: HanabiConfig) -> "HanabiGame":
        return cls(**config.as_dict())

    def new_initial_state(self) -> "HanabiState":
        return HanabiState(self)

    def num_distinct_actions(self) -> int:
        return self.engine_config.num_moves

    def max_chance_outcomes(self) -> int:
        return self.engine_config.num_cards

    def max_utility(self) -> float:
        return float(self.config.max_score)

    def min_utility(self) -> float:
        return 0.0

    def observation_tensor_shape(self) -> Tuple[int, ...]:
        return (self.engine_config.encoding_length,)

    def max_game_length(self) -> int:
        cfg = self.engine_config
        return 3 * cfg.deck_size + cfg.max_information_tokens + cfg.colors + cfg.players


class HanabiState(State):
    def __init__(self, game: HanabiGame):
        super().__init__(game)
        self.engine = _engine.EngineState(game.engine_config, 0)
        # per-player observation tokens (the information state) and the public ones
        self._seen: List[List[str]] = [[] for _ in range(game.num_players)]

    def clone(self) -> "HanabiState":
        new = HanabiState.__new__(HanabiState)
        new.game = self.game
        new._history = list(self._history)
        new.engine = self.engine.clone()
        new._seen = [list(s) for s in self._seen]
        return new

    def current_player(self) -> int:
        return self.engine.current_player()

    def chance_outcomes(self) -> List[Tuple[int, float]]:
        if self.engine.current_player() != CHANCE:
            raise GameError("chance_outcomes() at a node that is not a chance node")
        return self.engine.chance_outcomes()

    def _legal_actions(self, player: int) -> List[int]:
        if player != self.engine.current_player():
            return []
        return self.engine.legal_moves()

    def _apply_action(self, action: int) -> None:
        cfg = self.game.config
        if self.engine.current_player() == CHANCE:
            to = self.engine.player_to_deal()
            self.engine.deal(action)
            name = card_name(action, cfg.ranks)
            seer = cfg.observation_type == "seer"
            for p in range(cfg.players):
                self._seen[p].append(f"d{to}{name if (p != to or seer) else '?'}")
            return
        actor = self.engine.current_player()
        self.engine.apply(action)
        last = self.engine.last_move()
        if last["type"] in ("play", "discard"):
            detail = card_name(last["card"], cfg.ranks) + ("+" if last["scored"] else "")
        else:
            detail = f"{last['reveal_mask']:b}"
        token = f"{actor}:{action}:{detail}"
        for p in range(cfg.players):
            self._seen[p].append(token)

    def returns(self) -> List[float]:
        score = float(self.engine.score()) if self.engine.is_terminal() else 0.0
        return [score] * self.game.num_players

    def score(self) -> int:
        """Current score (HLE's rule for the configured scoring)."""
        return self.engine.score()

    def information_state_string(self, player: Optional[int] = None) -> str:
        if player is None:
            player = self.current_player()
        if not 0 <= player < self.game.num_players:
            raise GameError(f"information_state_string needs a player in [0, {self.game.num_players}), got {player}")
        return f"p{player}|" + ",".join(self._seen[player])

    def public_state_string(self) -> str:
        return ",".join(t for t in self._seen[0] if not t.startswith("d"))

    def observation_tensor(self, player: Optional[int] = None) -> np.ndarray:
        if player is None:
            player = self.current_player()
        if not 0 <= player < self.game.num_players:
            raise GameError(f"observation_tensor needs a player in [0, {self.game.num_players}), got {player}")
        return self.engine.encode(player).astype(np.float32)

    def observation_string(self, player: Optional[int] = None) -> str:
        if player is None:
            player = self.current_player()
        cfg = self.game.config
        e = self.engine
        lines = [f"Life tokens: {e.life_tokens}", f"Info tokens: {e.information_tokens}",
                 "Fireworks: " + " ".join(f"{'RYGWB'[c]}{f}" for c, f in enumerate(e.fireworks())),
                 "Hands:"]
        for rel in range(cfg.players):
            p = (player + rel) % cfg.players
            cards = []
            for card, (kc, kr, hc, hr) in zip(e.hand(p), e.knowledge(p)):
                shown = "XX" if (p == player and cfg.observation_type != "seer") else card_name(card, cfg.ranks)
                plaus = "".join("RYGWB"[c] for c in range(cfg.colors) if kc >> c & 1) + \
                    "".join(str(r + 1) for r in range(cfg.ranks) if kr >> r & 1)
                cards.append(f"{shown}|{plaus}")
            lines.append(("Cur player " if p == e.current_player() else "") + " ".join(cards))
        lines.append(f"Deck size: {e.deck_size}")
        lines.append("Discards: " + " ".join(card_name(k, cfg.ranks) for k in e.discard_pile()))
        return "\n".join(lines)

    def action_to_string(self, action: int, player: Optional[int] = None) -> str:
        if player == CHANCE or (player is None and self.is_chance_node()):
            return f"(Deal {card_name(action, self.game.config.ranks)})"
        return move_to_string(action, self.game.config)


register("hanabi", HanabiGame, DEFAULTS,
         "Hanabi with HLE's rules (2-5 players; hand_size=0 means 5 for 2-3 players, 4 for 4-5)")
