"""Rule base (each rule on hand-built states), production-rule agents and the named agents' scores."""
import numpy as np
import pytest

from cfrkit._kernels import hanabi_engine as E
from cfrkit.agents.hanabi import NAMED_AGENTS, NUM_RULES, RULE_BASE, RuleAgent, named_agent, rule_fires, rule_table
from cfrkit.agents.hanabi.rules import SEMANTICS

COL = "RYGWB"


def cid(name):
    return COL.index(name[0]) * 5 + int(name[1]) - 1


def state(p0, p1, hints_to_p0=(), **kw):
    """Two-player Full state with player 0 to act; ``hints_to_p0`` are hints player 1 gave first."""
    cfg = E.EngineConfig(players=2)
    st = E.EngineState(cfg, 0)
    tokens = kw.pop("tokens", 8)
    st.set_state([[cid(c) for c in p0], [cid(c) for c in p1]], current_player=1 if hints_to_p0 else 0,
                 tokens=tokens + len(hints_to_p0), **kw)
    for i, h in enumerate(hints_to_p0):
        m = 10 + COL.index(h) if h in COL else 15 + int(h) - 1
        st.apply(m)
        if i + 1 < len(hints_to_p0):  # player 0 passes the turn back with a harmless hint
            st.apply(15 + 4 if cid("B5") in st.hand(1) else st.legal_moves()[-1])
    assert st.current_player() == 0
    return st


PLAY, COLOR, RANK = 5, 10, 15  # 2-player Full move id bases


def test_rule_base_is_documented():
    assert NUM_RULES == len(RULE_BASE) >= 80
    assert len({r.name for r in RULE_BASE}) == NUM_RULES
    for r in RULE_BASE:
        assert r.kind in SEMANTICS and r.description


def test_play_safe_card_and_play_if_certain():
    hand = ["R1", "Y1", "G2", "W3", "B4"]
    other = ["Y3", "G4", "W2", "B3", "B2"]
    assert rule_fires(state(hand, other), "PlaySafeCard") == -1
    st = state(hand, other, hints_to_p0=["1"])
    assert rule_fires(st, "PlaySafeCard") == PLAY + 0
    assert rule_fires(st, "PlayIfCertain") == -1
    assert rule_fires(st, "PlayUniquePossibleCard") == -1
    st = state(hand, other, hints_to_p0=["1", "R"])
    assert rule_fires(st, "PlayIfCertain") == PLAY + 0
    assert rule_fires(st, "PlayUniquePossibleCard") == PLAY + 0
    # with red 1 already played, a known 1 is not safe any more
    st = state(hand, other, hints_to_p0=["1"], fireworks=[1, 0, 0, 0, 0])
    assert rule_fires(st, "PlaySafeCard") == -1


def test_play_probably_safe_card_thresholds():
    st = state(["R1", "Y1", "G2", "W3", "B4"], ["Y3", "G4", "W2", "B3", "B2"], hints_to_p0=["1"],
               fireworks=[1, 0, 0, 0, 0])
    probs = [p for p, _, _ in E.playable_probabilities(st, 0)]
    best = int(np.argmax(probs))
    assert 0.5 < probs[best] < 1.0
    assert rule_fires(st, "PlayProbablySafeCard(0.0)") == PLAY + best
    assert rule_fires(st, "PlayProbablySafeCard(0.5)") == PLAY + best
    assert rule_fires(st, "PlayProbablySafeCard(1.0)") == -1
    # probabilities count unseen copies: 1s left for player 0 are R1 x1 (one played, one in its hand... unseen),
    # Y1 x3, G1 x3, W1 x3, B1 x3 -> playable fraction (3+3+3+3) / (2+12)
    assert probs[0] == pytest.approx(12 / 14)


def test_play_hinted_card_follows_the_last_hint():
    st = state(["R3", "Y1", "R2", "W3", "B4"], ["Y3", "G4", "W2", "B3", "B2"], hints_to_p0=["R"],
               fireworks=[1, 0, 0, 0, 0])
    assert rule_fires(st, "PlayHintedCard") == PLAY + 2  # newest red card
    assert rule_fires(state(["R3", "Y1", "R2", "W3", "B4"], ["Y3", "G4", "W2", "B3", "B2"]), "PlayHintedCard") == -1


def test_tell_rules_on_the_partner_hand():
    st = state(["R2", "Y2", "G2", "W3", "B4"], ["Y3", "R1", "G4", "W2", "B5"])
    assert rule_fires(st, "TellAnyoneAboutUsefulCard") == RANK + 0
    assert rule_fires(st, "TellAnyoneAboutOldestUsefulCard") == RANK + 0
    assert rule_fires(st, "TellPlayableCardOuter") == COLOR + 0
    assert rule_fires(st, "TellPlayableCard") in (COLOR + 0, RANK + 0)
    assert rule_fires(st, "TellFives") == RANK + 4
    assert rule_fires(st, "TellAboutOnes") == RANK + 0
    assert rule_fires(st, "TellUnknown") == COLOR + 1  # oldest card Y3: colour first
    assert rule_fires(st, "TellCritical") == RANK + 4  # B5 is the last copy
    assert rule_fires(st, "TellAnyoneAboutUselessCard") == -1
    assert rule_fires(st, "CompleteTellUsefulCard") == -1
    assert rule_fires(st, "TellRandomly") in st.legal_moves()
    no_tokens = state(["R2", "Y2", "G2", "W3", "B4"], ["Y3", "R1", "G4", "W2", "B5"], tokens=0)
    for name in ["TellAnyoneAboutUsefulCard", "TellFives", "TellUnknown", "TellRandomly", "TellMostInformation"]:
        assert rule_fires(no_tokens, name) == -1


def test_tell_useless_dispensable_and_complete():
    st = state(["R2", "Y2", "G2", "W3", "B4"], ["Y3", "R1", "G4", "W2", "B5"], fireworks=[5, 0, 0, 0, 0])
    assert rule_fires(st, "TellAnyoneAboutUselessCard") == COLOR + 0
    assert rule_fires(st, "TellDispensable") == COLOR + 0  # the red firework is complete
    st = state(["R2", "Y2", "G2", "W3", "B4"], ["Y3", "R1", "G4", "W2", "B1"], fireworks=[2, 2, 2, 2, 2])
    assert rule_fires(st, "TellDispensable") == RANK + 0  # every 1 is useless
    # partner already knows the rank of its playable R1 -> complete with the colour
    cfg = E.EngineConfig(players=2)
    st = E.EngineState(cfg, 0)
    st.set_state([[cid(c) for c in ["R2", "Y2", "G2", "W3", "B4"]], [cid(c) for c in ["Y3", "R1", "G4", "W2", "B5"]]])
    st.apply(RANK + 0)  # player 0 tells player 1 about its 1
    st.apply(RANK + 1)  # player 1 answers with the 2s
    assert rule_fires(st, "CompleteTellUsefulCard") == COLOR + 0
    assert rule_fires(st, "TellAnyoneAboutUsefulCard") == COLOR + 0


def _changed_cards(st, move):
    child = st.clone()
    before = child.knowledge(1)
    child.apply(move)
    return sum(a != b for a, b in zip(before, child.knowledge(1)))


def test_tell_most_information_maximises_changed_cards():
    cfg = E.EngineConfig(players=2)
    st = E.EngineState(cfg, 0)
    st.set_state([[cid(c) for c in ["R2", "Y2", "G2", "W3", "B4"]], [cid(c) for c in ["Y1", "Y2", "Y3", "G4", "B5"]]])
    st.apply(COLOR + 1)  # tell yellow
    st.apply(RANK + 1)
    move = rule_fires(st, "TellMostInformation")
    hints = [m for m in st.legal_moves() if m >= 10]
    assert move in hints and _changed_cards(st, move) == max(_changed_cards(st, m) for m in hints)
    assert _changed_cards(st, COLOR + 1) == 0 < _changed_cards(st, move)


def test_discard_rules():
    hand = ["R1", "Y1", "G2", "W3", "B5"]
    other = ["Y3", "G4", "W2", "B3", "B2"]
    assert rule_fires(state(hand, other), "DiscardOldestFirst") == -1  # 8 tokens: no discard
    st = state(hand, other, tokens=5)
    assert rule_fires(st, "DiscardOldestFirst") == 0
    assert rule_fires(st, "DiscardOldestNoInfoFirst") == 0
    assert rule_fires(st, "DiscardSafeCard") == -1
    assert 0 <= rule_fires(st, "DiscardRandomly") < 5
    st = state(hand, other, hints_to_p0=["1"], tokens=5, fireworks=[1, 1, 1, 1, 1])
    assert rule_fires(st, "OsawaDiscard") == 0
    assert rule_fires(st, "DiscardUselessCard") == 0
    assert rule_fires(st, "DiscardSafeCard") == 0
    assert rule_fires(st, "DiscardIfCertain") == -1  # colours were not hinted
    assert rule_fires(st, "DiscardOldestNoInfoFirst") == 2
    assert rule_fires(st, "DiscardProbablyUselessCard(1.0)") == 0
    st = state(hand, other, hints_to_p0=["1", "R"], tokens=5, fireworks=[1, 0, 0, 0, 0])
    assert rule_fires(st, "DiscardIfCertain") == 0
    st = state(hand, other, hints_to_p0=["5"], tokens=5)
    assert rule_fires(st, "DiscardHighest") == 4
    st = state(hand, other, hints_to_p0=["1"], tokens=5)
    crit = [c for _, _, c in E.playable_probabilities(st, 0)]
    assert crit[0] == 0.0 and rule_fires(st, "DiscardLeastLikelyToBeNecessary") == 0


def test_conditions():
    hand = ["R1", "Y1", "G2", "W3", "B4"]
    other = ["Y3", "G4", "W2", "B3", "B2"]
    assert rule_fires(state(hand, other, lives=1), "IfLives>1:PlayProbablySafeCard(0.0)") == -1
    assert rule_fires(state(hand, other, lives=2), "IfLives>1:PlayProbablySafeCard(0.0)") >= PLAY
    assert rule_fires(state(hand, other), "IfTokens<4:TellRandomly") == -1
    assert rule_fires(state(hand, other, tokens=3), "IfTokens<4:TellRandomly") >= COLOR
    assert rule_fires(state(hand, other, lives=2), "HailMary:PlayProbablySafeCard(0.0)") == -1
    empty = state(hand, other, lives=2, deck=[0] * 25)
    assert rule_fires(empty, "HailMary:PlayProbablySafeCard(0.0)") >= PLAY
    assert rule_fires(state(hand, other, lives=1, deck=[0] * 25), "HailMary:PlayProbablySafeCard(0.0)") == -1


def test_agent_plays_first_rule_that_fires():
    st = state(["R1", "Y1", "G2", "W3", "B4"], ["Y3", "R1", "G4", "W2", "B5"], hints_to_p0=["1"], tokens=5)
    agent = RuleAgent.from_names(["DiscardIfCertain", "PlaySafeCard", "TellFives"])
    assert agent.explain(st) == (PLAY + 0, "PlaySafeCard")
    agent = RuleAgent.from_names(["DiscardIfCertain", "TellFives", "PlaySafeCard"])
    assert agent.explain(st) == (RANK + 4, "TellFives")
    agent = RuleAgent.from_names(["DiscardIfCertain"])
    move, why = agent.explain(st)
    assert why.startswith("fallback") and move in st.legal_moves()
    with pytest.raises(ValueError, match="unknown rule"):
        RuleAgent.from_names(["PlayEverything"])
    with pytest.raises(ValueError, match="unknown agent"):
        named_agent("NoSuchBot")  # SmartBot is a convention bot now (conventions.py)


def test_self_play_is_reproducible_and_stats_are_consistent():
    cfg = E.EngineConfig(players=3)
    rules = np.tile(named_agent("Piers").rules, (3, 1))
    a = E.play_games(cfg, rule_table(), rules, 200, seed=5)
    b = E.play_games(cfg, rule_table(), rules, 200, seed=5)
    c = E.play_games(cfg, rule_table(), rules, 200, seed=6)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[2], b[2]) and not np.array_equal(a[0], c[0])
    scores, played, stats = a
    assert np.all(scores <= played) and np.all((scores == played) | (scores == 0))
    turns, hint_turns, hints, plays, risk = stats.sum(axis=0)
    assert hints <= hint_turns <= turns and 0 <= risk <= plays
    assert played.sum() <= plays


# measured by the framework (1000 mirror games, lost games count their played cards), REFERENCE.md
REFERENCE = {"Piers": [17.2, 17.5, 17.1, 16.3], "IGGI": [16.4, 16.8, 16.2, 15.1], "Outer": [14.5, 14.4, 13.2, 12.6],
             "VanDenBergh": [13.5, 17.4, 17.2, 16.4], "Internal": [11.1, 11.0, 10.0, 9.9]}
TOLERANCE = {"Piers": 0.75, "IGGI": 0.75, "Outer": 1.0, "VanDenBergh": 1.5, "Internal": 1.0}


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_named_agents_self_play_near_the_framework(name):
    agent = named_agent(name)
    for players, ref in zip((2, 3, 4, 5), REFERENCE[name]):
        cfg = E.EngineConfig(players=players, played_cards_scoring=True)
        scores, _, _ = E.play_games(cfg, rule_table(), np.tile(agent.rules, (players, 1)), 1000, seed=2019)
        assert abs(scores.mean() - ref) < TOLERANCE[name], (name, players, scores.mean(), ref)


def test_weak_agents_are_weak():
    for name in ("LegalRandom", "Flawed"):
        agent = named_agent(name)
        cfg = E.EngineConfig(players=2, played_cards_scoring=True)
        scores, _, _ = E.play_games(cfg, rule_table(), np.tile(agent.rules, (2, 1)), 500, seed=1)
        assert scores.mean() < 3.0
    assert set(NAMED_AGENTS) == {"IGGI", "Internal", "Outer", "Piers", "VanDenBergh", "Flawed", "LegalRandom"}
