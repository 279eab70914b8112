"""The rule base of the Walton-Rivers framework and the MAP-Elites generator (Canaan et al. 2019).

A *rule* looks at the game from the acting player's point of view and either proposes a move or
does not fire.  A production-rule agent is an ordered list of rules; it plays the move of the first
rule that fires (and a uniformly random legal move if none does).  The rules run in C
(``cfrkit._kernels.hanabi_engine``); this module names them, documents them and builds the rule
table every agent indexes into.

Vocabulary used below (all from the acting player's view, nothing hidden is peeked at):

* *hinted* colour/rank: revealed by a positive hint (HLE's "colour/rank was hinted").
* *possible identities* of an own card: colour x rank pairs allowed by the positive and negative hints
  whose copies are not all visible elsewhere (other hands, discards, fireworks); each weighted by the
  number of unseen copies.  ``P(playable)`` etc. are the weighted fractions.
* *playable*: the next card of its colour's firework.  *useless*: already played, or a lower card of its
  colour has all copies discarded.  *critical*: not useless and the last copy left.
* Hints go to the other players in turn order starting with the next player; cards are scanned oldest
  (slot 0) first.  Tell rules need an information token, discard rules need fewer than the maximum.

Conditions wrap a rule: ``IfLives>1``, ``IfTokens<4``, ``HailMary`` (deck empty and more than one life).
Thresholds use steps of 0.1 (the framework's PlayProbablySafeCard / DiscardProbablyUselessCard).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from cfrkit._kernels import hanabi_engine as _engine

# kind ids: must match the enum in pyx/hanabi_engine.pyx
KINDS: Dict[str, int] = {
    "PlaySafeCard": 0, "PlayIfCertain": 1, "PlayProbablySafeCard": 2, "PlayUniquePossibleCard": 3,
    "PlayHintedCard": 4, "PlayHintedCardBlindly": 5, "PlayOldestHintedCard": 6,
    "TellAnyoneAboutUsefulCard": 10, "TellAnyoneAboutOldestUsefulCard": 11, "TellAnyoneAboutUselessCard": 12,
    "TellDispensable": 13, "TellMostInformation": 14, "TellPlayableCardOuter": 15, "TellFives": 16,
    "TellAboutOnes": 17, "TellUnknown": 18, "TellIllInformed": 19, "TellRandomly": 20,
    "CompleteTellUsefulCard": 21, "TellCritical": 22, "TellPlayableCard": 23,
    "DiscardOldestFirst": 30, "DiscardOldestNoInfoFirst": 31, "DiscardSafeCard": 32, "DiscardUselessCard": 33,
    "DiscardIfCertain": 34, "DiscardProbablyUselessCard": 35, "DiscardLeastLikelyToBeNecessary": 36,
    "DiscardHighest": 37, "DiscardRandomly": 38, "OsawaDiscard": 39,
    "LegalRandom": 50,
}

CONDITIONS: Dict[str, int] = {"": 0, "IfLives>1": 1, "IfTokens<4": 2, "HailMary": 3, "IfDeckNotEmpty": 4}

#: What each rule kind does (the documented semantics the tests check).
SEMANTICS: Dict[str, str] = {
    "PlaySafeCard": "play the oldest own card whose possible identities are all playable",
    "PlayIfCertain": "play the oldest own card whose colour and rank were both hinted and which is playable",
    "PlayProbablySafeCard": "play the own card most likely playable if P(playable) >= threshold (ties: oldest)",
    "PlayUniquePossibleCard": "play an own card with exactly one possible identity, when that identity is playable",
    "PlayHintedCard": "if the last move was a hint to me, play the newest touched card that may be playable",
    "PlayHintedCardBlindly": "if the last move was a hint to me, play the newest touched card whatever its "
                             "probability (the 'a hint means play' convention)",
    "PlayOldestHintedCard": "play the oldest card that has any positive hint, whatever its probability",
    "TellAnyoneAboutUsefulCard": "first playable card of another player not fully hinted: tell its rank, "
                                 "or its colour if the rank was hinted",
    "TellAnyoneAboutOldestUsefulCard": "like TellAnyoneAboutUsefulCard but the oldest slot first across players",
    "TellAnyoneAboutUselessCard": "first useless card of another player not fully hinted: tell colour, else rank",
    "TellDispensable": "a useless card whose hints do not show it useless: tell the attribute that alone shows "
                       "it (a finished/dead colour, or a rank useless in every colour)",
    "TellMostInformation": "the hint that changes the knowledge of the most cards (ties: lowest move id)",
    "TellPlayableCardOuter": "first playable card of the next player not fully hinted: tell its colour, else its rank",
    "TellPlayableCard": "first playable card of the next player: tell its colour or its rank (coin flip), "
                        "whatever the player already knows",
    "TellFives": "tell rank 5 (the top rank) to the first player holding a top card whose rank is not hinted",
    "TellAboutOnes": "tell rank 1 to the first player holding a playable 1 whose rank is not hinted",
    "TellUnknown": "first card of the next player with an unhinted attribute: tell its colour, else its rank",
    "TellIllInformed": "to the player with the most cards without any hint, the hint changing the most cards",
    "TellRandomly": "a uniformly random legal hint",
    "CompleteTellUsefulCard": "a playable card with exactly one of colour/rank hinted: tell the other one",
    "TellCritical": "a critical card without any hint: tell its rank",
    "DiscardOldestFirst": "discard the oldest card",
    "DiscardOldestNoInfoFirst": "discard the oldest card without any hint",
    "DiscardSafeCard": "discard the oldest own card whose possible identities are all useless",
    "DiscardUselessCard": "discard the oldest card whose hint-plausible identities (ignoring counts) are all useless",
    "DiscardIfCertain": "discard the oldest card whose colour and rank were both hinted and which is useless",
    "DiscardProbablyUselessCard": "discard the own card most likely useless if P(useless) >= threshold",
    "DiscardLeastLikelyToBeNecessary": "discard the card least likely to be critical (ties: oldest)",
    "DiscardHighest": "discard the card with the highest expected rank (ties: oldest)",
    "DiscardRandomly": "discard a uniformly random card",
    "OsawaDiscard": "discard the oldest card with a positive hint whose hinted attributes alone show it useless",
    "LegalRandom": "a uniformly random legal move",
}


@dataclass(frozen=True)
class RuleSpec:
    """One entry of the rule base: a kind, an optional condition and a threshold."""

    kind: str
    threshold: float = 0.0
    condition: str = ""

    @property
    def name(self) -> str:
        base = self.kind
        if self.kind in ("PlayProbablySafeCard", "DiscardProbablyUselessCard"):
            base = f"{self.kind}({self.threshold:.1f})"
        return f"{self.condition}:{base}" if self.condition else base

    @property
    def description(self) -> str:
        text = SEMANTICS[self.kind]
        if self.kind in ("PlayProbablySafeCard", "DiscardProbablyUselessCard"):
            text = text.replace("threshold", f"{self.threshold:.1f}")
        cond = {"IfLives>1": "when more than one life is left, ", "IfTokens<4": "when fewer than 4 tokens are left, ",
                "HailMary": "when the deck is empty and more than one life is left, ",
                "IfDeckNotEmpty": "while the deck is not empty, "}.get(self.condition, "")
        return cond + text


_THRESHOLDS = [round(0.1 * i, 1) for i in range(10)] + [1.0]


def _build_rule_base() -> List[RuleSpec]:
    rules: List[RuleSpec] = []
    for kind in ("PlaySafeCard", "PlayIfCertain", "PlayUniquePossibleCard", "PlayHintedCard", "PlayHintedCardBlindly",
                 "PlayOldestHintedCard"):
        rules.append(RuleSpec(kind))
    for t in _THRESHOLDS:
        rules.append(RuleSpec("PlayProbablySafeCard", t))
    for t in _THRESHOLDS:
        rules.append(RuleSpec("PlayProbablySafeCard", t, "IfLives>1"))
    rules.append(RuleSpec("PlayHintedCard", 0.0, "IfLives>1"))
    rules.append(RuleSpec("PlayHintedCardBlindly", 0.0, "IfLives>1"))
    rules.append(RuleSpec("PlayOldestHintedCard", 0.0, "IfLives>1"))
    rules.append(RuleSpec("PlayProbablySafeCard", 0.0, "HailMary"))
    tells = ["TellAnyoneAboutUsefulCard", "TellAnyoneAboutOldestUsefulCard", "TellAnyoneAboutUselessCard",
             "TellDispensable", "TellMostInformation", "TellPlayableCard", "TellPlayableCardOuter", "TellFives", "TellAboutOnes",
             "TellUnknown", "TellIllInformed", "TellRandomly", "CompleteTellUsefulCard", "TellCritical"]
    for kind in tells:
        rules.append(RuleSpec(kind))
    for kind in tells:
        rules.append(RuleSpec(kind, 0.0, "IfTokens<4"))
    for kind in ("DiscardOldestFirst", "DiscardOldestNoInfoFirst", "DiscardSafeCard", "DiscardUselessCard",
                 "DiscardIfCertain", "DiscardLeastLikelyToBeNecessary", "DiscardHighest", "DiscardRandomly",
                 "OsawaDiscard"):
        rules.append(RuleSpec(kind))
    for t in _THRESHOLDS:
        rules.append(RuleSpec("DiscardProbablyUselessCard", t))
    for kind in ("DiscardOldestFirst", "DiscardRandomly", "DiscardOldestNoInfoFirst"):
        rules.append(RuleSpec(kind, 0.0, "IfDeckNotEmpty"))
    rules.append(RuleSpec("LegalRandom"))
    return rules


#: The rule base in a fixed order: chromosomes are lists of indices into it.
RULE_BASE: List[RuleSpec] = _build_rule_base()
RULE_INDEX: Dict[str, int] = {r.name: i for i, r in enumerate(RULE_BASE)}
NUM_RULES = len(RULE_BASE)

_TABLE: Optional[object] = None


def rule_table():
    """The C rule table of :data:`RULE_BASE` (built once)."""
    global _TABLE
    if _TABLE is None:
        _TABLE = _engine.RuleTable([KINDS[r.kind] for r in RULE_BASE], [CONDITIONS[r.condition] for r in RULE_BASE],
                                   [float(r.threshold) for r in RULE_BASE])
    return _TABLE


def rule_indices(names: Sequence[str]) -> List[int]:
    """Indices of rules given by name (``"PlayProbablySafeCard(0.6)"``, ``"IfLives>1:PlaySafeCard"``)."""
    out = []
    for name in names:
        if name not in RULE_INDEX:
            raise ValueError(f"unknown rule {name!r}; see cfrkit.agents.hanabi.rules.RULE_BASE")
        out.append(RULE_INDEX[name])
    return out


def rule_fires(state, rule: "int | str", seed: int = 0) -> int:
    """Move the rule proposes for the player to act at an engine state, or -1 when it does not fire."""
    index = RULE_INDEX[rule] if isinstance(rule, str) else int(rule)
    return _engine.rule_fires(state, rule_table(), index, seed)
