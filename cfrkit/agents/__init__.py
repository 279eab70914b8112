"""Agents that play games through the protocol.

* :mod:`cfrkit.agents.poker` -- simple hold'em agents (random, always-call, fixed-range raiser).
* :mod:`cfrkit.agents.acpc_client` -- play an agent against an ACPC dealer (``cfrkit acpc-client``).
"""
