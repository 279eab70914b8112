"""Production-rule agents for Hanabi and the named agents of the Walton-Rivers framework.

An agent is an ordered list of rules from :data:`cfrkit.agents.hanabi.rules.RULE_BASE`; it plays the
move of the first rule that fires, a uniformly random legal move when none does.  The named agents
(compositions as published in the framework):

* ``IGGI``: PlayIfCertain, PlaySafeCard, TellAnyoneAboutUsefulCard, OsawaDiscard, DiscardOldestFirst.
* ``Internal`` (Osawa's internal-state strategy): PlaySafeCard, OsawaDiscard, TellPlayableCard,
  TellRandomly, DiscardRandomly.
* ``Outer`` (Osawa's outer-state strategy): PlaySafeCard, OsawaDiscard, TellPlayableCardOuter,
  TellUnknown, DiscardRandomly.
* ``Piers``: HailMary PlayProbablySafeCard(0), PlaySafeCard, IfLives>1 PlayProbablySafeCard(0.6),
  TellAnyoneAboutUsefulCard, IfTokens<4 TellDispensable, OsawaDiscard, DiscardOldestFirst,
  TellRandomly, DiscardRandomly.
* ``VanDenBergh``: IfLives>1 PlayProbablySafeCard(0.6), PlaySafeCard, DiscardProbablyUselessCard(1.0),
  TellAnyoneAboutUsefulCard, TellAnyoneAboutUselessCard, TellMostInformation,
  DiscardProbablyUselessCard(0.0).
* ``Flawed``: PlaySafeCard, PlayProbablySafeCard(0.25), TellRandomly, OsawaDiscard, DiscardOldestFirst,
  DiscardRandomly (risky plays and random hints, the framework's threshold).
* ``LegalRandom``: a uniformly random legal move.
"""
from __future__ import annotations

from typing import Dict, List, Sequence

import numpy as np

from cfrkit._kernels import hanabi_engine as _engine
from cfrkit.agents.hanabi.rules import NUM_RULES, RULE_BASE, rule_indices, rule_table

NAMED_AGENTS: Dict[str, List[str]] = {
    "IGGI": ["PlayIfCertain", "PlaySafeCard", "TellAnyoneAboutUsefulCard", "OsawaDiscard", "DiscardOldestFirst"],
    "Internal": ["PlaySafeCard", "OsawaDiscard", "TellPlayableCard", "TellRandomly", "DiscardRandomly"],
    "Outer": ["PlaySafeCard", "OsawaDiscard", "TellPlayableCardOuter", "TellUnknown", "DiscardRandomly"],
    "Piers": ["HailMary:PlayProbablySafeCard(0.0)", "PlaySafeCard", "IfLives>1:PlayProbablySafeCard(0.6)",
              "TellAnyoneAboutUsefulCard", "IfTokens<4:TellDispensable", "OsawaDiscard", "DiscardOldestFirst",
              "TellRandomly", "DiscardRandomly"],
    "VanDenBergh": ["IfLives>1:PlayProbablySafeCard(0.6)", "PlaySafeCard", "DiscardProbablyUselessCard(1.0)",
                    "TellAnyoneAboutUsefulCard", "TellAnyoneAboutUselessCard", "TellMostInformation",
                    "DiscardProbablyUselessCard(0.0)"],
    "Flawed": ["PlaySafeCard", "PlayProbablySafeCard(0.25)", "TellRandomly", "OsawaDiscard", "DiscardOldestFirst",
               "DiscardRandomly"],
    "LegalRandom": ["LegalRandom"],
}


class RuleAgent:
    """A production-rule agent: ``rules`` are indices into the rule base (a chromosome)."""

    def __init__(self, rules: Sequence[int], name: str = ""):
        rules = [int(r) for r in rules]
        if any(not 0 <= r < NUM_RULES for r in rules):
            raise ValueError(f"rule indices must be in [0, {NUM_RULES}), got {rules}")
        self.rules = np.asarray(rules, dtype=np.intc)
        self.name = name or "RuleAgent[" + ",".join(map(str, rules)) + "]"

    @classmethod
    def from_names(cls, names: Sequence[str], name: str = "") -> "RuleAgent":
        return cls(rule_indices(names), name)

    def rule_names(self) -> List[str]:
        return [RULE_BASE[r].name for r in self.rules]

    def act(self, state, seed: int = 0) -> int:
        """Move id chosen at an :class:`~cfrkit._kernels.hanabi_engine.EngineState` decision node."""
        move, _ = _engine.agent_action(state, rule_table(), self.rules, seed)
        return int(move)

    def explain(self, state, seed: int = 0):
        """``(move, rule name or 'fallback')`` at a decision node."""
        move, fired = _engine.agent_action(state, rule_table(), self.rules, seed)
        return int(move), (RULE_BASE[self.rules[fired]].name if fired >= 0 else "fallback LegalRandom")

    def __repr__(self) -> str:
        return f"<RuleAgent {self.name}: {' > '.join(self.rule_names())}>"


def named_agent(name: str) -> RuleAgent:
    """One of :data:`NAMED_AGENTS` (case-insensitive), or a convention bot (SmartBot, Information)."""
    from cfrkit.agents.hanabi.conventions import CONVENTION_AGENTS, ConventionAgent, lookup_convention

    if lookup_convention(name) is not None:
        return ConventionAgent(name)
    lookup = {k.lower(): k for k in NAMED_AGENTS}
    key = lookup.get(name.lower())
    if key is None:
        raise ValueError(f"unknown agent {name!r}; known: {', '.join(list(NAMED_AGENTS) + list(CONVENTION_AGENTS))}")
    return RuleAgent.from_names(NAMED_AGENTS[key], key)


def as_agent(agent: "RuleAgent | str | Sequence[int]") -> RuleAgent:
    """Accept an agent, a named agent's name, or a chromosome."""
    if isinstance(agent, RuleAgent) or type(agent).__name__ == "ConventionAgent":
        return agent
    if isinstance(agent, str):
        return named_agent(agent)
    return RuleAgent(agent)
