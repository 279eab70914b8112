"""Moved: :class:`~cfrkit.poker.agent.CheckedAgent` and :func:`~cfrkit.poker.agent.agent_name` live in
:mod:`cfrkit.poker.agent` (the play layer); re-exported here for one release."""
from cfrkit.poker.agent import DEFAULT_TIME_LIMIT, AgentInterfaceError, CheckedAgent, HandStrategy, agent_name

__all__ = ["DEFAULT_TIME_LIMIT", "AgentInterfaceError", "CheckedAgent", "HandStrategy", "agent_name"]
