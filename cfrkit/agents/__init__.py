"""Agents that play games through the protocol.

* :mod:`cfrkit.agents.poker` -- simple hold'em agents (random, always-call, fixed-range raiser, policy);
* :mod:`cfrkit.agents.leduc_agents`, :mod:`cfrkit.agents.blueprint`, :mod:`cfrkit.agents.rule_based`,
  :mod:`cfrkit.agents.holdem_deepstack` -- Leduc-family agents, A^C, A^R, A^D;
* :mod:`cfrkit.agents.builders` -- the entry points of the agent registry; build agents by name with
  :func:`cfrkit.poker.make_agent` (the poker agent interface is :mod:`cfrkit.poker.agent`);
* :mod:`cfrkit.agents.acpc_client` -- play an agent against an ACPC dealer (``cfrkit acpc-client``).
"""
