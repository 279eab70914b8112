"""Hanabi parameters, the HLE presets, and names of cards and moves.

Parameters (HLE's, with its defaults): ``players`` 2-5, ``colors`` 1-5, ``ranks`` 1-5, ``hand_size``
(0 = HLE's default: 5 for 2-3 players, 4 for 4-5), ``max_information_tokens`` 8, ``max_life_tokens`` 3,
``observation_type`` (``minimal``, ``card_knowledge``, ``seer``) and ``scoring``: ``zero_on_loss``
(HLE: a game that loses its last life scores 0) or ``played_cards`` (the Walton-Rivers framework and
the MAP-Elites paper: such a game scores the cards on the fireworks).  ``random_start_player`` (HLE's
option, default False): the hands are dealt in seat order as usual, then the first player to act is
drawn uniformly from the game's seeded sampler instead of being player 0.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Dict

from cfrkit._kernels import hanabi_engine as _engine
from cfrkit.games.base import GameError

COLOR_CHARS = "RYGWB"
OBSERVATION_TYPES = ("minimal", "card_knowledge", "seer")
SCORINGS = ("zero_on_loss", "played_cards")

#: HLE's rl_env presets (``num_players`` is given separately).
PRESETS: Dict[str, Dict[str, Any]] = {
    "full": dict(colors=5, ranks=5, hand_size=0, max_information_tokens=8, max_life_tokens=3,
                 observation_type="card_knowledge"),
    "full-minimal": dict(colors=5, ranks=5, hand_size=0, max_information_tokens=8, max_life_tokens=3,
                         observation_type="minimal"),
    "small": dict(colors=2, ranks=5, hand_size=2, max_information_tokens=3, max_life_tokens=1,
                  observation_type="card_knowledge"),
    "very-small": dict(colors=1, ranks=5, hand_size=2, max_information_tokens=3, max_life_tokens=1,
                       observation_type="card_knowledge"),
}
_PRESET_ALIASES = {"hanabi-full": "full", "hanabi-full-cardknowledge": "full", "full-cardknowledge": "full",
                   "hanabi-full-minimal": "full-minimal", "hanabi-small": "small",
                   "hanabi-very-small": "very-small", "full_minimal": "full-minimal", "very_small": "very-small"}


@dataclass(frozen=True)
class HanabiConfig:
    """The rules of one Hanabi variant (validated on construction)."""

    players: int = 2
    colors: int = 5
    ranks: int = 5
    hand_size: int = 0
    max_information_tokens: int = 8
    max_life_tokens: int = 3
    observation_type: str = "card_knowledge"
    scoring: str = "zero_on_loss"
    random_start_player: bool = False

    def __post_init__(self):
        if not isinstance(self.random_start_player, (bool, int)) or self.random_start_player not in (0, 1):
            raise GameError(f"random_start_player must be True or False, got {self.random_start_player!r}")
        object.__setattr__(self, "random_start_player", bool(self.random_start_player))
        if self.observation_type not in OBSERVATION_TYPES:
            raise GameError(f"observation_type must be one of {', '.join(OBSERVATION_TYPES)}, "
                            f"got {self.observation_type!r}")
        if self.scoring not in SCORINGS:
            raise GameError(f"scoring must be one of {', '.join(SCORINGS)}, got {self.scoring!r}")
        if self.hand_size == 0:
            object.__setattr__(self, "hand_size", 5 if self.players <= 3 else 4)
        try:
            self.engine_config()
        except ValueError as exc:
            raise GameError(f"bad Hanabi parameters: {exc}") from None

    def engine_config(self):
        """The compiled engine's configuration object."""
        return _engine.EngineConfig(self.players, self.colors, self.ranks, self.hand_size,
                                    self.max_information_tokens, self.max_life_tokens,
                                    OBSERVATION_TYPES.index(self.observation_type),
                                    self.scoring == "played_cards", self.random_start_player)

    def replace(self, **changes) -> "HanabiConfig":
        return replace(self, **changes)

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @property
    def max_score(self) -> int:
        return self.colors * self.ranks


def preset(name: str, players: int = 2, **overrides) -> HanabiConfig:
    """HLE preset ``full``, ``full-minimal``, ``small`` or ``very-small`` (HLE names accepted too)."""
    key = name.strip().lower()
    key = _PRESET_ALIASES.get(key, key)
    if key not in PRESETS:
        raise GameError(f"unknown Hanabi preset {name!r}; known: {', '.join(PRESETS)}")
    params = dict(PRESETS[key])
    params.update(overrides)
    return HanabiConfig(players=players, **params)


def card_name(card: int, ranks: int) -> str:
    """``'R1'`` style name of a card id (colour letter, 1-based rank)."""
    return f"{COLOR_CHARS[card // ranks]}{card % ranks + 1}"


def move_to_dict(move: int, config: HanabiConfig) -> Dict[str, Any]:
    """HLE's dictionary form of a move id (as rl_env's ``legal_moves`` lists them)."""
    H, C, R, n = config.hand_size, config.colors, config.ranks, config.players
    if not 0 <= move < 2 * H + (n - 1) * (C + R):
        raise GameError(f"move id {move} outside [0, {2 * H + (n - 1) * (C + R)})")
    if move < H:
        return {"action_type": "DISCARD", "card_index": move}
    if move < 2 * H:
        return {"action_type": "PLAY", "card_index": move - H}
    x = move - 2 * H
    if x < (n - 1) * C:
        return {"action_type": "REVEAL_COLOR", "target_offset": x // C + 1, "color": COLOR_CHARS[x % C]}
    x -= (n - 1) * C
    return {"action_type": "REVEAL_RANK", "target_offset": x // R + 1, "rank": x % R}


def move_from_dict(move: Dict[str, Any], config: HanabiConfig) -> int:
    """Inverse of :func:`move_to_dict`."""
    H, C, R, n = config.hand_size, config.colors, config.ranks, config.players
    try:
        kind = move["action_type"]
        if kind == "DISCARD":
            return int(move["card_index"])
        if kind == "PLAY":
            return H + int(move["card_index"])
        off = int(move["target_offset"])
        if kind == "REVEAL_COLOR":
            color = move["color"]
            c = COLOR_CHARS.index(color) if isinstance(color, str) else int(color)
            return 2 * H + (off - 1) * C + c
        if kind == "REVEAL_RANK":
            return 2 * H + (n - 1) * C + (off - 1) * R + int(move["rank"])
    except (KeyError, ValueError, TypeError):
        pass
    raise GameError(f"malformed move {move!r}")


def move_to_string(move: int, config: HanabiConfig) -> str:
    d = move_to_dict(move, config)
    kind = d["action_type"]
    if kind in ("PLAY", "DISCARD"):
        return f"({kind.capitalize()} {d['card_index']})"
    if kind == "REVEAL_COLOR":
        return f"(Reveal player +{d['target_offset']} color {d['color']})"
    return f"(Reveal player +{d['target_offset']} rank {d['rank'] + 1})"
