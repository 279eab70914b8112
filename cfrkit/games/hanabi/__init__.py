"""Hanabi: HLE-compatible engine (compiled), the cfrkit game, rl_env / PettingZoo / batched APIs."""
from cfrkit.games.hanabi.config import (COLOR_CHARS, PRESETS, HanabiConfig, card_name, move_from_dict, move_to_dict,
                                        move_to_string, preset)
from cfrkit.games.hanabi.env import HanabiAECEnv, HanabiEnv, HanabiGymVectorEnv, HanabiVectorEnv, make
from cfrkit.games.hanabi.game import HanabiGame, HanabiState

__all__ = ["COLOR_CHARS", "PRESETS", "HanabiConfig", "card_name", "move_from_dict", "move_to_dict", "move_to_string",
           "preset", "HanabiAECEnv", "HanabiEnv", "HanabiGymVectorEnv", "HanabiVectorEnv", "make", "HanabiGame",
           "HanabiState"]
