"""Moved: the seat schedule lives in :mod:`cfrkit.poker.schedule` (one schedule for the server and the
in-process runner); re-exported here for the server and for one release."""
from cfrkit.poker.schedule import hand_plan, player_of_seat, round_up_hands

__all__ = ["hand_plan", "player_of_seat", "round_up_hands"]
