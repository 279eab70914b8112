"""Every rule of the 135-rule base on a constructed state where it must fire and one where it must not.

``CASES[name]`` gives, for each rule of :data:`RULE_BASE`, a hand-built state where the rule must fire
(with the move it must propose, or a check of it) and one where it must not.  Conditional rules
(``IfLives>1``, ``IfTokens<4``, ``HailMary``, ``IfDeckNotEmpty``) reuse their base rule's firing state
with the condition met and unmet; threshold rules pick, from a pool of states with known
probabilities, one at or above the threshold and one below.  Extra tests check the parameters that
the generic table cannot (singled-out / newest-card flags, finesse only with 3+ players, and the
partner estimates against an independent numpy computation).
"""
import numpy as np
import pytest

from cfrkit._kernels import hanabi_engine as E
from cfrkit.agents.hanabi import NUM_RULES, RULE_BASE, rule_fires
from cfrkit.agents.hanabi.rules import KINDS, SEMANTICS

COL = "RYGWB"
PLAY, COLOR, RANK = 5, 10, 15        # 2-player Full move id bases (hand 5)
C3, R3 = 10, 20                       # 3-player colour / rank hint bases (offset 1; +5 for offset 2)
A = ["R1", "Y1", "G2", "W3", "B4"]    # player 0's hand in most states
B = ["Y3", "G4", "W2", "B3", "B2"]    # a partner hand with no playable, useless or critical card
TELL = ["R2", "Y2", "G2", "W3", "B4"], ["Y3", "R1", "G4", "W2", "B5"]   # partner holds a playable 1, a 5


def cid(name):
    return COL.index(name[0]) * 5 + int(name[1]) - 1


def mk(hands, moves=(), tokens=8, **kw):
    """Full-rules state with player 0 to act after ``moves`` (made by the players before it, in turn)."""
    n = len(hands)
    cfg = E.EngineConfig(players=n)
    st = E.EngineState(cfg, 0)
    hints = sum(1 for m in moves if m >= 2 * cfg.hand_size)
    st.set_state([[cid(c) for c in h] for h in hands], current_player=(-len(moves)) % n, tokens=tokens + hints, **kw)
    for m in moves:
        st.apply(m)
        st.deal_random()
    assert st.current_player() == 0
    return st


EMPTY = dict(deck=[0] * 25)


def changed_cards(st, move, target=1):
    child = st.clone()
    before = child.knowledge(target)
    child.apply(move)
    return sum(a != b for a, b in zip(before, child.knowledge(target)))


def best_information(st):
    hints = [m for m in st.legal_moves() if m >= 2 * st.config.hand_size]
    top = max(changed_cards(st, m) for m in hints)
    return lambda move: move in hints and changed_cards(st, move) == top


# ----------------------------------------------------------------------------- base cases
# each: kw -> (state where the rule fires, expected move or predicate, state where it must not fire)
def _tell(kw, fire_hands, expect, none_hands=(A, B), moves=(), none_moves=(), **extra):
    return mk(fire_hands, moves, **{**extra, **kw}), expect, mk(none_hands, none_moves, **extra)


BASE = {
    "PlaySafeCard": lambda kw: (mk([A, B], [RANK], **kw), PLAY + 0, mk([A, B])),
    "PlayIfCertain": lambda kw: (mk([A, B], [RANK, COLOR + 1, COLOR], **kw), PLAY + 0, mk([A, B], [RANK])),
    "PlayUniquePossibleCard": lambda kw: (mk([A, B], [RANK, COLOR + 1, COLOR], **kw), PLAY + 0, mk([A, B], [RANK])),
    "PlayHintedCard": lambda kw: (mk([["R3", "Y1", "R2", "W3", "B4"], B], [COLOR], fireworks=[1, 0, 0, 0, 0], **kw),
                                  PLAY + 2, mk([A, B])),
    "PlayHintedCardBlindly": lambda kw: (mk([["R3", "Y1", "R2", "W3", "B4"], B], [COLOR], fireworks=[1, 0, 0, 0, 0],
                                            **kw), PLAY + 2, mk([A, B])),
    "PlayOldestHintedCard": lambda kw: (mk([A, B], [RANK + 1], **kw), PLAY + 2, mk([A, B])),
    "TellAnyoneAboutUsefulCard": lambda kw: _tell(kw, TELL, RANK + 0),
    "TellAnyoneAboutOldestUsefulCard": lambda kw: _tell(kw, TELL, RANK + 0),
    "TellPlayableCardOuter": lambda kw: _tell(kw, TELL, COLOR + 0),
    "TellPlayableCard": lambda kw: _tell(kw, TELL, {COLOR + 0, RANK + 0}),
    "TellFives": lambda kw: _tell(kw, TELL, RANK + 4),
    "TellAboutOnes": lambda kw: _tell(kw, TELL, RANK + 0),
    "TellCritical": lambda kw: _tell(kw, TELL, RANK + 4),
    # the partner's Y1 Y1 Y2 Y2 Y3 are fully known after yellow, 1, 2 and 3 (player 1's hints in between)
    "TellUnknown": lambda kw: (mk(TELL, **kw), COLOR + 1,
                               mk([A, ["Y1", "Y1", "Y2", "Y2", "Y3"]], [COLOR + 1, RANK + 1, RANK + 0, RANK + 2,
                                                                        RANK + 1, RANK + 3, RANK + 2, RANK + 0])),
    "TellAnyoneAboutUselessCard": lambda kw: (mk(TELL, fireworks=[5, 0, 0, 0, 0], **kw), COLOR + 0, mk(TELL)),
    "TellDispensable": lambda kw: (mk(TELL, fireworks=[5, 0, 0, 0, 0], **kw), COLOR + 0, mk(TELL)),
    "CompleteTellUsefulCard": lambda kw: (mk(TELL, [RANK + 0, RANK + 1], **kw), COLOR + 0, mk(TELL)),
    "TellMostInformation": lambda kw: (mk(TELL, **kw), best_information(mk(TELL, **kw)), mk(TELL, tokens=0)),
    # every card of the partner already carries a hint -> no ill-informed player
    "TellIllInformed": lambda kw: (mk(TELL, **kw), best_information(mk(TELL, **kw)),
                                   mk([A, ["Y3", "Y4", "Y2", "Y1", "Y5"]], [COLOR + 1, RANK + 1])),
    "TellRandomly": lambda kw: (mk(TELL, **kw), set(range(10, 20)) & set(mk(TELL).legal_moves()),
                                mk(TELL, tokens=0)),
    "DiscardOldestFirst": lambda kw: (mk([A, B], **{"tokens": 5, **kw}), 0, mk([A, B])),
    "DiscardRandomly": lambda kw: (mk([A, B], **{"tokens": 5, **kw}), set(range(5)), mk([A, B])),
    "DiscardOldestNoInfoFirst": lambda kw: (mk([A, B], [RANK], **{"tokens": 5, **kw}), 2,
                                            mk([["R1", "Y1", "G1", "W1", "B1"], B], [RANK], tokens=5)),
    "DiscardSafeCard": lambda kw: (mk([A, B], [RANK], fireworks=[1] * 5, **{"tokens": 5, **kw}), 0,
                                   mk([A, B], tokens=5)),
    "DiscardUselessCard": lambda kw: (mk([A, B], [RANK], fireworks=[1] * 5, **{"tokens": 5, **kw}), 0,
                                      mk([A, B], tokens=5)),
    "OsawaDiscard": lambda kw: (mk([A, B], [RANK], fireworks=[1] * 5, **{"tokens": 5, **kw}), 0,
                                mk([A, B], tokens=5)),
    "DiscardIfCertain": lambda kw: (mk([A, B], [RANK, COLOR + 1, COLOR], fireworks=[1, 0, 0, 0, 0],
                                       **{"tokens": 5, **kw}), 0,
                                    mk([A, B], [RANK], tokens=5, fireworks=[1] * 5)),
    "DiscardLeastLikelyToBeNecessary": lambda kw: (mk([A, B], [RANK], **{"tokens": 5, **kw}), 0, mk([A, B])),
    "DiscardHighest": lambda kw: (mk([["R1", "Y1", "G2", "W3", "B5"], B], [RANK + 4], **{"tokens": 5, **kw}), 4,
                                  mk([A, B])),
    # --- the extended rules
    # p2 hints p1 a red 2 (one above red's next card): player 0 plays its newest card
    "PlayFinesse": lambda kw: (mk([A, ["R2", "Y3", "G4", "W2", "B3"], ["Y4", "G3", "W4", "B5", "W1"]], [C3 + 5],
                                  **kw), PLAY + 4,
                               mk([A, ["R1", "Y3", "G4", "W2", "B3"], ["Y4", "G3", "W4", "B5", "W1"]], [C3 + 5])),
    # p1 singled out player 0's W3, then p2 played: player 0 plays the W3
    "PlayFinesseTold": lambda kw: (mk([A, B, ["B1", "G3", "W4", "B5", "W1"]], [R3 + 5 + 2, PLAY], **kw), PLAY + 3,
                                   mk([A, B, ["B1", "G3", "W4", "B5", "W1"]], [R3 + 5 + 0, PLAY])),
    "PlayJustHinted": lambda kw: (mk([A, B], [RANK], **kw), PLAY + 1, mk([A, B], [RANK, COLOR + 1, PLAY])),
    # the next player's newest card R1 is playable and the one after holds R2 (unique rank): hint it rank 2
    "TellFinesse": lambda kw: (mk([A, ["Y3", "G4", "W2", "B3", "R1"], ["Y4", "G3", "W4", "B5", "R2"]], **kw),
                               R3 + 5 + 1,
                               mk([A, ["Y3", "G4", "W2", "R1", "B3"], ["Y4", "G3", "W4", "B5", "R2"]])),
    "TellToSave": lambda kw: _tell(kw, TELL, RANK + 4),
    "TellAnyoneAboutUsefulCardImproved": lambda kw: _tell(kw, TELL, COLOR + 0, moves=[RANK + 0, RANK + 1]),
    "TellNextPlayerAboutSingleUsefulCard": lambda kw: _tell(kw, TELL, RANK + 0,
                                                            none_hands=(A, ["R1", "R3", "Y1", "Y4", "B4"])),
    # no token; player 0 knows its 1s are useless and the partner knows nothing
    "TryToUnBlock": lambda kw: (mk([A, B], [RANK], **{"tokens": 0, "fireworks": [1] * 5, **kw}), 0,
                                mk([A, B], [RANK], tokens=1, fireworks=[1] * 5)),
}

# partner hands for the unambiguous-hint rules (green, and for UNAMB3 blue, at 1: G1 / B1 are unplayable)
UNAMB = ["R1", "Y1", "G1", "W3", "B4"]
UNAMB3 = ["R1", "Y1", "G1", "B1", "W3"]
for _q, _expect in ((1, RANK + 0), (0, COLOR + 0)):
    BASE[f"TellUnambiguous({'playable' if _q else 'unplayable'}-first)"] = (
        lambda kw, e=_expect: (mk([A, UNAMB], fireworks=[0, 0, 1, 0, 0], **kw), e, mk([A, B])))
for _wp, _wu, _expect in ((1, 0, RANK + 0), (1, -1, COLOR + 0)):
    BASE[f"TellUnambiguous3({_wp},{_wu})"] = (
        lambda kw, e=_expect: (mk([A, UNAMB3], fireworks=[0, 0, 1, 0, 1], **kw), e, mk([A, B])))


def partner_playability(st, p, t, knowledge):
    """Independent numpy estimate of P_t(playable) per card of t as p computes it (no peeking)."""
    cfg = st.config
    counts = np.array([cfg.card_count(k) for k in range(25)]) - np.array(st.discard_counts())
    for c, f in enumerate(st.fireworks()):
        counts[c * 5:c * 5 + f] -= 1
    for q in range(cfg.players):
        if q not in (p, t):
            for k in st.hand(q):
                counts[k] -= 1
    fw = st.fireworks()
    out = []
    for kc, kr, _, _ in knowledge:
        ids = [c * 5 + r for c in range(5) if kc >> c & 1 for r in range(5) if kr >> r & 1]
        w = np.array([max(counts[k], 0) for k in ids], dtype=float)
        play = np.array([fw[k // 5] == k % 5 for k in ids])
        out.append(float(w[play].sum() / w.sum()))
    return out


def weighted_best_hint(st, wp, wu):
    """Argmax over the partner's hints of sum weight * P(playable) after the hint (ranks first, then colours)."""
    fw = st.fireworks()
    playable = [fw[k // 5] == k % 5 for k in st.hand(1)]
    order = [RANK + r for r in range(5)] + [COLOR + c for c in range(5)]
    best, top = None, -np.inf
    for m in order:
        if not st.is_legal(m):
            continue
        child = st.clone()
        child.apply(m)
        probs = partner_playability(st, 0, 1, child.knowledge(1))
        score = sum((wp if pl else wu) * q for pl, q in zip(playable, probs))
        if score > top + 1e-12:
            best, top = m, score
    return best


UNAMB2 = ["R1", "Y1", "G1", "W3", "B4"]
for _wp, _wu in ((1, 0), (10, -1), (2, -1)):
    BASE[f"TellUnambiguous2({_wp},{_wu})"] = (
        lambda kw, wp=_wp, wu=_wu: (mk([A, UNAMB2], fireworks=[0, 0, 1, 0, 0], **kw),
                                    weighted_best_hint(mk([A, UNAMB2], fireworks=[0, 0, 1, 0, 0]), wp, wu),
                                    mk([A, B])))
for _n in (1, 2, 3):
    BASE[f"TellAtLeastNUseless({_n})"] = (
        lambda kw, n=_n: (mk([A, ["R1", "Y1", "G1", "W3", "B4"]], fireworks=[1] * 5, **kw), RANK + 0,
                          mk([A, ["R1", "Y1", "G3", "W3", "B4"]], fireworks=[1] * 5) if n == 3 else mk([A, B])))
# false positive: the partner knows its G1 is a "1" (12 of 14 unseen 1s playable) but green is at 1
FP = dict(hands=[A, ["G1", "Y3", "W2", "B3", "B2"]], moves=[RANK + 0, RANK + 0], fireworks=[0, 0, 1, 0, 0])
FP_NONE = dict(hands=[A, ["R1", "Y3", "W2", "B3", "B2"]], moves=[RANK + 0, RANK + 0], fireworks=[0, 0, 1, 0, 0])
# false negative: the partner's B5 (blue at 4) is playable and it knows nothing about it
FN = dict(hands=[A, ["Y3", "G4", "W2", "B3", "B5"]], fireworks=[5, 5, 5, 5, 4])
for _t in (0.4, 0.6, 0.8):
    BASE[f"TellHighProbabilityMistake(fp,{_t})"] = (
        lambda kw: (mk(FP["hands"], FP["moves"], fireworks=FP["fireworks"], **kw), COLOR + 2,
                    mk(FP_NONE["hands"], FP_NONE["moves"], fireworks=FP_NONE["fireworks"])))
for _t in (0.2, 0.4, 0.6):
    BASE[f"TellHighProbabilityMistake(fn,{_t})"] = (
        lambda kw: (mk(FN["hands"], fireworks=FN["fireworks"], **kw), RANK + 4, mk([A, B])))


# ----------------------------------------------------------------------------- threshold rules
def _play_pool(**kw):
    """States whose best P(playable) of player 0 spans [0, 1] (plus one with no card)."""
    return [mk([A, B], [RANK], **kw),                                   # 1.0
            mk([A, B], [RANK], fireworks=[1, 0, 0, 0, 0], **kw),         # 12/14
            mk([A, ["Y3", "G4", "W2", "B3", "Y1"]], [COLOR + 1], **kw),   # a yellow card
            mk([A, B], **kw),                                            # nothing known
            mk([A, ["R5", "Y5", "G5", "W5", "B2"]], fireworks=[4] * 5, **kw),   # only B5 playable
            mk([[], B], **kw)]                                           # no card at all


def _discard_pool(**kw):
    kw = {"tokens": 5, **kw}
    return [mk([A, B], [RANK], fireworks=[1] * 5, **kw),                # known useless 1s
            mk([A, B], [RANK + 1], fireworks=[2, 2, 2, 2, 0], **kw),
            mk([A, B], [RANK + 1], fireworks=[2, 2, 0, 0, 0], **kw),
            mk([A, B], [RANK + 1], fireworks=[2, 0, 0, 0, 0], **kw),
            mk([A, B], fireworks=[3, 3, 3, 3, 3], **kw),
            mk([A, B], fireworks=[1, 1, 1, 1, 1], **kw),
            mk([A, B], **kw),                                            # nothing useless
            mk([[], B], **kw)]


def _threshold_case(kind, t, kw):
    pool = _play_pool(**kw) if kind == "PlayProbablySafeCard" else _discard_pool(**kw)
    col = 0 if kind == "PlayProbablySafeCard" else 1
    best = [max((x[col] for x in E.playable_probabilities(s, 0)), default=-1.0) for s in pool]
    above = [i for i, b in enumerate(best) if b >= t - 1e-12]
    below = [i for i, b in enumerate(best) if b < t - 1e-12]
    assert above and below, f"pool does not bracket {kind}({t})"
    fire = min(above, key=lambda i: best[i])       # the tightest states on both sides
    none = max(below, key=lambda i: best[i])
    base = 5 if col == 0 else 0
    probs = [x[col] for x in E.playable_probabilities(pool[fire], 0)]
    expect = base + int(np.argmax(probs))
    nokw = {k: v for k, v in kw.items() if k not in ("lives",)}
    none_state = (_play_pool if col == 0 else _discard_pool)(**nokw)[none]
    return pool[fire], expect, none_state


# ----------------------------------------------------------------------------- conditions
def case_for(rule):
    kind, cond = rule.kind, rule.condition
    if kind in ("PlayProbablySafeCard", "DiscardProbablyUselessCard"):
        base = lambda kw: _threshold_case(kind, rule.threshold, kw)   # noqa: E731
    elif kind == "PlayJustHinted" and rule.param:
        base = lambda kw: _just_hinted_case(rule, kw)                 # noqa: E731
    else:
        key = rule.name.split(":", 1)[-1]
        base = BASE[key] if key in BASE else BASE[kind]
    if cond == "":
        return base({})
    if cond == "IfLives>1":
        fire, expect, _ = base({"lives": 2})
        return fire, expect, base({"lives": 1})[0]
    if cond == "IfTokens<4":
        fire, expect, _ = base({"tokens": 3})
        return fire, expect, base({"tokens": 5})[0]
    if cond == "HailMary":
        fire, expect, _ = base({"lives": 2, **EMPTY})
        return fire, expect, base({"lives": 2})[0]
    if cond == "IfDeckNotEmpty":
        fire, expect, _ = base({})
        return fire, expect, base(EMPTY)[0]
    raise AssertionError(cond)


# PlayJustHinted(singled, newest, lives>2, t): player 0's newest card singled out by a hint
def _jh_state(prob, lives):
    if prob == "certain":   # a known 1, nothing played
        return mk([["Y3", "G4", "W2", "B3", "R1"], B], [RANK], lives=lives)
    if prob == "likely":    # a known 1 with red at 1: 12/14
        return mk([["R3", "G4", "W2", "B3", "Y1"], B], [RANK], fireworks=[1, 0, 0, 0, 0], lives=lives)
    return mk([["Y3", "G4", "W2", "B3", "R1"], B], [COLOR], lives=lives)   # a red card: unlikely


def _just_hinted_case(rule, kw):
    t = rule.threshold
    lives = kw.get("lives", 3)
    if t >= 1.0:
        return _jh_state("certain", lives), PLAY + 4, _jh_state("likely", 3)
    if t > 0:
        return _jh_state("likely", lives), PLAY + 4, _jh_state("unlikely", 3)
    return _jh_state("unlikely", lives), PLAY + 4, _jh_state("unlikely", 2)


# ----------------------------------------------------------------------------- the tests
def test_rule_base_has_135_documented_rules():
    assert NUM_RULES == len(RULE_BASE) == 135
    assert len({r.name for r in RULE_BASE}) == 135
    assert set(SEMANTICS) == set(KINDS)
    for r in RULE_BASE:
        assert r.description and r.kind in SEMANTICS
    # the original 84 rules keep their indices (older MAP-Elites checkpoints stay valid)
    assert RULE_BASE[0].name == "PlaySafeCard" and RULE_BASE[83].name == "LegalRandom"


@pytest.mark.parametrize("index", range(135), ids=[r.name for r in RULE_BASE])
def test_rule_fires_and_does_not_fire(index):
    rule = RULE_BASE[index]
    if rule.kind == "LegalRandom":   # fires at every decision node: check it is a legal move
        st = mk([A, B])
        assert all(rule_fires(st, index, seed) in st.legal_moves() for seed in range(20))
        return
    fire, expect, none = case_for(rule)
    move = rule_fires(fire, index)
    if callable(expect):
        assert expect(move), (rule.name, move)
    elif isinstance(expect, set):
        assert move in expect, (rule.name, move)
    else:
        assert move == expect, (rule.name, move, expect)
    assert fire.is_legal(move)
    assert rule_fires(none, index) == -1, rule.name


def test_just_hinted_flags():
    # two cards touched (R1 and Y1 by "1"): the singled-out variants do not fire, the others do
    two = mk([A, B], [RANK], lives=3)
    assert rule_fires(two, "PlayJustHinted(singled=1,newest=0,lives>2,1.0)") == -1
    assert rule_fires(two, "PlayJustHinted(singled=0,newest=0,lives>2,1.0)") == PLAY + 1   # ties: newer card
    # a card that is not the newest: the newest-only variants do not fire
    old = mk([["R1", "G4", "W2", "B3", "Y3"], B], [RANK], lives=3)
    assert rule_fires(old, "PlayJustHinted(singled=1,newest=1,lives>2,1.0)") == -1
    assert rule_fires(old, "PlayJustHinted(singled=1,newest=0,lives>2,1.0)") == PLAY + 0
    # hints are forgotten once player 0 has moved: p1 hints, p0 hints back, p1 hints someone else's... nothing new
    moved = mk([A, B], [RANK, COLOR + 1, RANK + 1])
    assert rule_fires(moved, "PlayJustHinted") == PLAY + 2   # only the G2 touched by the last hint


def test_finesse_needs_three_players_and_the_right_order():
    # 2 players: the last hint always targets the player to act, so PlayFinesse never fires
    assert rule_fires(mk([A, ["R2", "Y3", "G4", "W2", "B3"]], [COLOR]), "PlayFinesse") == -1
    assert rule_fires(mk(TELL), "TellFinesse") == -1
    # the hint must be the last move: a play after it breaks the finesse
    st = mk([A, ["R2", "Y3", "G4", "W2", "B3"], ["Y4", "G3", "W2", "B5", "W1"]], [C3 + 3, PLAY + 0])
    assert rule_fires(st, "PlayFinesse") == -1


def test_partner_estimates_do_not_peek_at_the_own_hand():
    # the same partner and table, different own hands: partner-model rules propose the same move
    owns = (A, ["B1", "W1", "G2", "R2", "Y5"], ["Y2", "B5", "W5", "R1", "G3"])
    other = ["R1", "Y1", "G1", "W3", "B4"]
    cases = [("TellUnambiguous2(1,0)", [], [1, 0, 1, 0, 0], other),
             ("TellUnambiguous2(10,-1)", [], [1, 0, 1, 0, 0], other),
             ("TellAtLeastNUseless(1)", [], [1, 1, 1, 1, 1], other),
             ("TellHighProbabilityMistake(fn,0.6)", [], [1, 0, 1, 0, 0], other),
             ("TellHighProbabilityMistake(fp,0.4)", [RANK + 0, RANK + 0], [0, 0, 1, 0, 0], FP["hands"][1])]
    for name, moves, fireworks, partner in cases:
        found = {rule_fires(mk([own, partner], moves, fireworks=fireworks), name) for own in owns}
        assert len(found) == 1 and found != {-1}, (name, found)


def test_tell_to_save_completes_partial_knowledge():
    # the partner knows its B5 is a 5: TellCritical (unhinted cards only) is silent, TellToSave names blue
    st = mk(TELL, [RANK + 4, RANK + 1])
    assert rule_fires(st, "TellCritical") == -1
    assert rule_fires(st, "TellToSave") == COLOR + 4


def test_try_to_unblock_waits_for_an_unblocking_partner():
    # the partner itself knows a useless card: it is not blocked, so player 0 need not unblock
    st = mk([A, ["R1", "Y3", "W2", "B3", "B2"]], [RANK, RANK], tokens=0, fireworks=[1] * 5)
    assert rule_fires(st, "TryToUnBlock") == -1


def test_docs_table_lists_every_rule():
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "docs", "hanabi_rules.md")
    rows = [line for line in open(path).read().splitlines() if line.startswith("| ") and "`" in line]
    assert len(rows) == 135
    for i, (row, rule) in enumerate(zip(rows, RULE_BASE)):
        assert row.startswith(f"| {i} | `{rule.name}` | {rule.description}"), i
