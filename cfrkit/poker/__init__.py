"""The poker play layer: the agent interface, the public view of a hand, the seat schedule, the one
match runner and the one agent registry.

* :mod:`cfrkit.poker.agent` -- :class:`PokerAgent`, :class:`HandStrategy`, :class:`AgentInterfaceError`,
  :class:`CheckedAgent` (validated calls with a time limit);
* :mod:`cfrkit.poker.view` -- :class:`PokerView` (:func:`poker_view`): private hands, public cards,
  contributions, seeded deals and equities of hold'em and the Leduc family;
* :mod:`cfrkit.poker.schedule` -- which deal hand ``i`` plays and who sits where (duplicate seating);
* :mod:`cfrkit.poker.match` -- :func:`play_match` / :func:`play_hand`, :class:`MatchResult`,
  :class:`Estimate`, and the :class:`MatchObserver` hooks that AIVAT, hand logs, storage, LBR and the
  progress bar attach to;
* :mod:`cfrkit.poker.logs` -- ACPC and PHH log writers (observers);
* :mod:`cfrkit.poker.registry` -- :func:`make_agent` ("always-call", "blueprint:bp.npz", ...),
  :func:`register_agent`, :func:`agent_names`.

This layer sits below :mod:`cfrkit.agents` (which implements the interface), :mod:`cfrkit.evaluation`
and :mod:`cfrkit.platform`, and imports none of them.
"""
from cfrkit.poker.agent import (DEFAULT_TIME_LIMIT, AgentInterfaceError, CheckedAgent, HandStrategy, PokerAgent,
                                agent_name)
from cfrkit.poker.logs import AcpcLogWriter, PhhLogWriter
from cfrkit.poker.match import (Estimate, Hand, HandDriver, MatchInfo, MatchObserver, MatchResult, ProgressObserver, estimate,
                                play_hand, play_match)
from cfrkit.poker.registry import RegistryError, agent_help, agent_names, make_agent, register_agent
from cfrkit.poker.schedule import Seating, hand_plan, player_of_seat, round_up_hands, seatings
from cfrkit.poker.view import HoldemView, LeducView, PokerView, poker_view

__all__ = ["AcpcLogWriter", "AgentInterfaceError", "CheckedAgent", "DEFAULT_TIME_LIMIT", "Estimate", "Hand",
           "HandDriver", "HandStrategy", "HoldemView", "LeducView", "MatchInfo", "MatchObserver", "MatchResult", "PhhLogWriter",
           "PokerAgent", "PokerView", "ProgressObserver", "RegistryError", "Seating", "agent_help", "agent_name",
           "agent_names", "estimate", "hand_plan", "make_agent", "play_hand", "play_match", "player_of_seat",
           "poker_view", "register_agent", "round_up_hands", "seatings"]
