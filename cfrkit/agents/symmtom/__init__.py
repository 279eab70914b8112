"""SymmToM agents: the paper's heuristic, belief-tracking planners (CE, GE), an oracle planner,
a random baseline and a torch-policy adapter.  :func:`make_agent` builds one by name."""
from typing import Optional

from cfrkit.agents.symmtom.base import RandomAgent, SymmToMAgent, TorchPolicyAgent, play_episode
from cfrkit.agents.symmtom.belief import BeliefAgent, KnowledgeTracker, OracleAgent
from cfrkit.agents.symmtom.heuristic import HeuristicAgent

#: Agent names accepted by :func:`make_agent` (and ``cfrkit symmtom eval --agent``).
AGENT_NAMES = ("heuristic", "ce", "ge", "oracle", "random")
#: Agents that need the environment's oracle knowledge.
ORACLE_AGENTS = ("oracle",)


def make_agent(name: str, seed: Optional[int] = None) -> SymmToMAgent:
    """A fresh agent called ``name`` (one of :data:`AGENT_NAMES`)."""
    if name == "heuristic":
        return HeuristicAgent()
    if name in ("ce", "ge"):
        return BeliefAgent(name)
    if name == "oracle":
        return OracleAgent()
    if name == "random":
        return RandomAgent(seed)
    raise ValueError(f"unknown SymmToM agent {name!r}; known: {', '.join(AGENT_NAMES)}")


__all__ = ["AGENT_NAMES", "ORACLE_AGENTS", "BeliefAgent", "HeuristicAgent", "KnowledgeTracker", "OracleAgent",
           "RandomAgent", "SymmToMAgent", "TorchPolicyAgent", "make_agent", "play_episode"]
