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

Conditions wrap a rule: ``IfLives>1``, ``IfTokens<4``, ``HailMary`` (deck empty and more than one life),
``IfDeckNotEmpty``.  Thresholds use steps of 0.1 (the framework's PlayProbablySafeCard /
DiscardProbablyUselessCard) plus Flawed's 0.25 and Piers's 0.1 hail mary.

The base has 135 rules, the paper's count (Canaan et al. 2019 do not list theirs; the public code
has 105): 45 kinds with their thresholds / parameters and conditional variants (IfLives>1,
IfTokens<4, HailMary, IfDeckNotEmpty) -- e.g. PlayProbablySafeCard 25 rules (12 thresholds, 11 with
IfLives>1, 2 HailMary), PlayJustHinted 18, DiscardProbablyUselessCard 11, TellHighProbabilityMistake 6
(``docs/hanabi_rules.md`` has the table); :data:`RULE_BASE` lists them in a fixed order.  A *partner
estimate* P_partner is computed by the acting player without peeking at its own hand: the copies
the partner cannot see are taken as all copies minus discards, fireworks and the hands of the
players other than the two.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from cfrkit._kernels import hanabi_engine as _engine

# kind ids: must match the enums in pyx/hanabi_rules.pxi
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
    # the rest of the MAP-Elites rule base (finesse, "just hinted", unambiguous hints, partner models)
    "PlayFinesse": 60, "PlayFinesseTold": 61, "PlayJustHinted": 62, "TellFinesse": 63, "TellUnambiguous": 64,
    "TellUnambiguous2": 65, "TellUnambiguous3": 66, "TellAtLeastNUseless": 67, "TellHighProbabilityMistake": 68,
    "TellToSave": 69, "TellAnyoneAboutUsefulCardImproved": 70, "TellNextPlayerAboutSingleUsefulCard": 71,
    "TryToUnBlock": 72,
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
    "PlayFinesse": "the last move hinted a third player a card one rank above its colour's next playable card: "
                   "play my newest card (the finesse; never fires with 2 players)",
    "PlayFinesseTold": "two moves ago a hint singled out one of my cards and the last move was a play: play that card",
    "PlayJustHinted": "among my cards touched by hints since my last move (params: only hints that singled out one "
                      "card; only my newest card), play the one most likely playable if P = 1, or if P >= threshold "
                      "and lives > min_lives",
    "TellFinesse": "3+ players: the next player's newest card is playable and the player after holds the next card "
                   "of that colour: hint that card (both attributes unique in the hand: the attribute not yet known; "
                   "else a unique rank, else a unique colour)",
    "TellUnambiguous": "hint an unknown attribute of another player's playable card, choosing by the other unhinted "
                       "cards the hint also touches: most playable then fewest unplayable (playable-first) or fewest "
                       "unplayable then most playable (unplayable-first); first player in turn order with a candidate",
    "TellUnambiguous2": "to the first player holding a playable card: the hint maximising sum_cards weight * "
                        "P_partner(playable) after the hint (weights w_playable, w_unplayable; ranks tried first)",
    "TellUnambiguous3": "hint an unknown attribute of a playable card maximising w_playable * playable + w_unplayable "
                        "* unplayable other unhinted cards it touches (rank first)",
    "TellAtLeastNUseless": "to a player holding a useless card but knowing of none: the hint after which it knows "
                           "the most cards are useless (P_partner > 0.99), if at least n",
    "TellHighProbabilityMistake": "a card the partner misjudges: (fp) an unplayable card with P_partner(playable) >= "
                                  "threshold (the highest), or (fn) a playable one with P_partner(playable) <= "
                                  "threshold (the lowest): tell its rank, else its colour",
    "TellToSave": "a critical card (last copy, not useless) of another player: tell its rank, else its colour",
    "TellAnyoneAboutUsefulCardImproved": "a playable card with exactly one attribute known: tell the other; else the "
                                         "first playable card not fully known: its rank, else colour",
    "TellNextPlayerAboutSingleUsefulCard": "the next player's first playable card whose rank (else colour) no other "
                                           "card in that hand shares: hint it",
    "TryToUnBlock": "no token left, I know a move that regains one (a hinted-useless discard or a known last card) "
                    "and a later player is blocked (knows no playable card or safe discard) before any player who "
                    "could unblock: make that move",
}


def _num(x: float) -> str:
    return f"{x:.1f}" if round(x, 1) == x else f"{x:.2f}"


@dataclass(frozen=True)
class RuleSpec:
    """One entry of the rule base: a kind, an optional condition, a threshold and an integer parameter.

    ``param`` (extended rules only): PlayJustHinted flags (1 singled out, 2 newest only) plus 16 x
    min_lives; TellUnambiguous 1 = playable-first; TellUnambiguous2/3 the unplayable weight (the
    threshold is the playable weight); TellAtLeastNUseless n; TellHighProbabilityMistake 1 = false
    positives.
    """

    kind: str
    threshold: float = 0.0
    condition: str = ""
    param: int = 0

    @property
    def name(self) -> str:
        base, k, t, q = self.kind, self.kind, self.threshold, self.param
        if k in ("PlayProbablySafeCard", "DiscardProbablyUselessCard"):
            base = f"{k}({_num(t)})"
        elif k == "PlayJustHinted" and (q or t):
            base = f"{k}(singled={q & 1},newest={q >> 1 & 1},lives>{q >> 4},{_num(t)})"
        elif k == "TellUnambiguous":
            base = f"{k}({'playable' if q else 'unplayable'}-first)"
        elif k in ("TellUnambiguous2", "TellUnambiguous3"):
            base = f"{k}({t:g},{q:g})"
        elif k == "TellAtLeastNUseless":
            base = f"{k}({q})"
        elif k == "TellHighProbabilityMistake":
            base = f"{k}({'fp' if q else 'fn'},{_num(t)})"
        return f"{self.condition}:{base}" if self.condition else base

    @property
    def description(self) -> str:
        text = SEMANTICS[self.kind]
        if self.kind in ("PlayProbablySafeCard", "DiscardProbablyUselessCard"):
            text = text.replace("threshold", _num(self.threshold))
        elif self.kind != "LegalRandom" and self.name != self.kind and "(" in self.name:
            text += " -- parameters " + self.name[self.name.index("("):]
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
    # -- the rest of the MAP-Elites rule base (indices 84..134; the 84 above keep their indices so older
    # checkpoints stay valid)
    for kind in ("PlayFinesse", "PlayFinesseTold", "TellFinesse", "PlayJustHinted"):
        rules.append(RuleSpec(kind))
    for singled in (1, 0):
        for newest in (1, 0):
            for t in (0.0, 0.6, 0.8, 1.0):
                rules.append(RuleSpec("PlayJustHinted", t, "", singled + 2 * newest + 16 * 2))
    rules.append(RuleSpec("TellUnambiguous", 0.0, "", 1))
    rules.append(RuleSpec("TellUnambiguous", 0.0, "", 0))
    for wp, wu in ((1, 0), (10, -1), (2, -1)):
        rules.append(RuleSpec("TellUnambiguous2", float(wp), "", wu))
    for wp, wu in ((1, 0), (1, -1)):
        rules.append(RuleSpec("TellUnambiguous3", float(wp), "", wu))
    for n in (1, 2, 3):
        rules.append(RuleSpec("TellAtLeastNUseless", 0.0, "", n))
    for t in (0.4, 0.6, 0.8):
        rules.append(RuleSpec("TellHighProbabilityMistake", t, "", 1))
    for t in (0.2, 0.4, 0.6):
        rules.append(RuleSpec("TellHighProbabilityMistake", t, "", 0))
    for kind in ("TryToUnBlock", "TellToSave", "TellAnyoneAboutUsefulCardImproved",
                 "TellNextPlayerAboutSingleUsefulCard"):
        rules.append(RuleSpec(kind))
    rules.append(RuleSpec("PlayProbablySafeCard", 0.1, "HailMary"))   # Piers's "slightly smarter hail mary"
    rules.append(RuleSpec("PlayProbablySafeCard", 0.25))               # Flawed's threshold
    for kind in ("PlayFinesse", "PlayFinesseTold", "PlayJustHinted"):
        rules.append(RuleSpec(kind, 0.0, "IfLives>1"))
    for kind, param in (("TellToSave", 0), ("TellAnyoneAboutUsefulCardImproved", 0),
                        ("TellNextPlayerAboutSingleUsefulCard", 0), ("TellUnambiguous", 1), ("TellFinesse", 0)):
        rules.append(RuleSpec(kind, 0.0, "IfTokens<4", param))
    rules.append(RuleSpec("TellUnambiguous2", 1.0, "IfTokens<4", 0))
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
                                   [float(r.threshold) for r in RULE_BASE], [int(r.param) for r in RULE_BASE])
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
