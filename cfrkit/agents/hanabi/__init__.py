"""Rule-based Hanabi agents: the rule base, production-rule agents, named agents, convention bots, MAP-Elites."""
from cfrkit.agents.hanabi.agents import NAMED_AGENTS, RuleAgent, as_agent, named_agent
from cfrkit.agents.hanabi.conventions import (CONVENTION_AGENTS, ConventionAgent, ConventionTeam, convention_scores,
                                             deal_team)
from cfrkit.agents.hanabi.rules import NUM_RULES, RULE_BASE, RULE_INDEX, RuleSpec, rule_fires, rule_table

__all__ = ["CONVENTION_AGENTS", "ConventionAgent", "ConventionTeam", "convention_scores", "deal_team", "NAMED_AGENTS",
           "RuleAgent", "as_agent", "named_agent", "NUM_RULES", "RULE_BASE", "RULE_INDEX", "RuleSpec", "rule_fires",
           "rule_table"]
