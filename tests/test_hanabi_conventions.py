"""Convention bots (SmartBot, hat-guessing Information strategy): conventions on constructed states,
hat-sum decoding, knowledge consistency over whole games, and scores near the published means."""
import numpy as np
import pytest

from cfrkit._kernels import hanabi_engine as E
from cfrkit.agents.hanabi import ConventionAgent, ConventionTeam, convention_scores, deal_team, named_agent
from cfrkit.agents.hanabi.conventions import PUBLISHED_SCORES
from cfrkit.evaluation.hanabi_protocols import crosstable, selfplay_report

R, Y, G, W, B = range(5)


def card(colour, rank):
    """Card id of colour (R Y G W B) and 1-based rank."""
    return colour * 5 + rank - 1


def rank_hint(players, hand_size, offset, rank):
    return 2 * hand_size + (players - 1) * 5 + (offset - 1) * 5 + rank - 1


def colour_hint(hand_size, offset, colour):
    return 2 * hand_size + (offset - 1) * 5 + colour


def dealt(players, seed):
    st = E.EngineState(E.EngineConfig(players=players), seed=seed)
    while st.current_player() == -1:
        st.deal_random()
    return st


def constructed(players, hands, **kw):
    st = E.EngineState(E.EngineConfig(players=players), seed=1)
    st.set_state(hands, **kw)
    return st


# ----------------------------------------------------------------------------- SmartBot
def test_smartbot_colour_hint_marks_newest_touched_card_playable():
    st = constructed(2, [[card(W, 4), card(W, 3), card(Y, 3), card(Y, 4), card(B, 4)],
                         [card(R, 3), card(R, 2), card(B, 2), card(G, 4), card(R, 1)]], tokens=8)
    team = ConventionTeam(st, "smartbot")
    red = colour_hint(5, 1, R)
    assert team.act() == red                       # the most informative hint revealing a playable card
    team.step(red)
    know = team.knowledge(1)
    assert know[4] == [card(R, 1)]                 # newest red card: red and playable -> red 1
    assert know[0] == know[1] == [card(R, r) for r in range(1, 6)]   # older red cards: only "red"
    assert card(R, 1) not in know[2] and card(R, 1) not in know[3]


def test_smartbot_rank_hint_on_next_discard_is_a_valuable_warning():
    # the other blue 2 is discarded: player 1's oldest card (its next discard) is the last blue 2
    st = constructed(2, [[card(W, 4), card(W, 3), card(Y, 3), card(Y, 4), card(B, 4)],
                         [card(B, 2), card(G, 3), card(Y, 4), card(W, 3), card(R, 4)]],
                     discards=[card(B, 2)], tokens=7)
    team = ConventionTeam(st, "smartbot")
    warning = rank_hint(2, 5, 1, 2)
    assert team.act() == warning                   # nothing playable to reveal: warn with its rank
    team.step(warning)
    assert team.knowledge(1)[0] == [card(B, 2)]    # "a 2, and the last copy of its kind"


def test_smartbot_no_warning_means_next_discard_is_not_valuable():
    st = constructed(2, [[card(W, 4), card(W, 3), card(Y, 3), card(Y, 4), card(R, 1)],
                         [card(B, 2), card(G, 3), card(Y, 4), card(W, 3), card(R, 4)]], tokens=7)
    team = ConventionTeam(st, "smartbot")
    team.step(5 + 4)                               # player 0 plays instead of warning player 1
    fives = {card(c, 5) for c in range(5)}         # the valuable cards at the start
    assert set(team.knowledge(1)[0]) == set(range(25)) - fives
    assert set(team.knowledge(1)[1]) == set(range(25))


def test_smartbot_plays_known_playable_and_discards_known_trash():
    st = constructed(2, [[card(W, 4), card(W, 3), card(R, 2), card(Y, 4), card(B, 4)],
                         [card(B, 2), card(G, 3), card(Y, 4), card(W, 3), card(R, 4)]],
                     fireworks=[1, 0, 0, 0, 0], tokens=3)
    team = ConventionTeam(st, "smartbot")
    team.set_knowledge(0, 2, [card(R, 2)])
    assert team.act() == 5 + 2
    st = constructed(2, [[card(W, 4), card(W, 3), card(R, 1), card(Y, 4), card(B, 4)],
                         [card(B, 2), card(G, 3), card(Y, 4), card(W, 3), card(R, 4)]],
                     fireworks=[1, 0, 0, 0, 0], tokens=0)
    team = ConventionTeam(st, "smartbot")
    team.set_knowledge(0, 2, [card(R, 1), card(R, 1)])
    assert team.act() == 2                         # no token to hint: discard the known-dead red 1


def test_smartbot_discard_finesse_names_the_partners_newest_card():
    # player 0 knows its middle card is a red 1; player 1's newest card is the other red 1 in sight
    st = constructed(3, [[card(W, 4), card(W, 3), card(R, 1), card(Y, 4), card(B, 4)],
                         [card(B, 2), card(G, 3), card(Y, 4), card(W, 3), card(R, 1)],
                         [card(B, 3), card(G, 4), card(Y, 3), card(R, 3), card(G, 2)]], tokens=6)
    team = ConventionTeam(st, "smartbot")
    team.set_knowledge(0, 2, [card(R, 1)])
    assert team.act() == 2                         # discard it instead of playing it ...
    team.step(2)
    assert team.knowledge(1)[4] == [card(R, 1)]    # ... so player 1 learns its newest card
    assert team.knowledge(2)[4] == list(range(25))


def test_smartbot_gambles_late_and_the_safe_variant_does_not():
    deck = [0] * 25
    deck[card(G, 2)] = 1                           # one card left to draw, no token to hint
    hands = [[card(W, 4), card(W, 3), card(R, 1), card(Y, 4), card(B, 4)],
             [card(B, 2), card(G, 3), card(Y, 4), card(W, 3), card(R, 4)]]
    assert ConventionTeam(constructed(2, hands, tokens=0, deck=deck), "smartbot").act() == 5 + 4
    assert ConventionTeam(constructed(2, hands, tokens=0, deck=deck), "smartbot_safe").act() == 0


# ----------------------------------------------------------------------------- Information strategy
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_hat_sum_decodes_for_every_receiver(players):
    rng = np.random.default_rng(players)
    changed = 0
    for game in range(6):
        team = ConventionTeam(dealt(players, 100 + game), "information")
        for _ in range(int(rng.integers(0, 30))):  # some public knowledge first
            if team.state().is_terminal():
                break
            team.step(team.act())
        if team.state().is_terminal():
            continue
        before = [team.knowledge(p) for p in range(players)]
        for source in range(players):
            for total in (2, 3, 5, 7, 3 * (players - 1), 4 * (players - 1)):
                hat_sum, encoded, decoded = team.hat_roundtrip(source, total)
                assert 0 <= hat_sum < total
                for p in range(players):
                    if p == source:
                        assert decoded[p] == before[p]
                        continue
                    assert decoded[p] == encoded[p], (game, source, total, p)
                    hand = team.state().hand(p)
                    assert all(hand[i] in decoded[p][i] for i in range(len(hand)))
                    changed += decoded[p] != before[p]
    assert changed > 20                            # the hints do carry information


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_information_knowledge_always_holds_the_true_card(players):
    for game in range(5):
        team = ConventionTeam(dealt(players, game), "information")
        hinted = 0
        while not team.state().is_terminal():
            move = team.act()
            st = team.state()
            assert st.is_legal(move)
            hinted += move >= 2 * st.config.hand_size
            team.step(move)
            st = team.state()
            for p in range(players):
                hand = st.hand(p)
                know = team.knowledge(p)
                assert all(hand[i] in know[i] for i in range(len(hand))), (game, p)
        assert hinted > 5


def test_information_plays_a_surely_playable_card_and_prefers_low_ranks():
    st = constructed(3, [[card(W, 4), card(G, 1), card(R, 2), card(Y, 4), card(B, 4)],
                         [card(B, 2), card(G, 3), card(Y, 3), card(W, 5), card(R, 4)],
                         [card(B, 3), card(G, 4), card(Y, 5), card(R, 3), card(G, 2)]],
                     fireworks=[1, 0, 0, 3, 0], tokens=5)
    team = ConventionTeam(st, "information")
    team.set_knowledge(0, 2, [card(R, 2)])
    team.set_knowledge(0, 1, [card(G, 1)])
    team.set_knowledge(0, 0, [card(W, 4)])
    assert team.act() == 5 + 1                     # green 1 unlocks the most: (10 - 1) beats 8 and 6


def test_information_discards_a_known_dead_card_without_tokens():
    st = constructed(2, [[card(W, 4), card(G, 3), card(R, 1), card(Y, 4), card(B, 4)],
                         [card(B, 2), card(G, 3), card(Y, 4), card(W, 3), card(R, 4)]],
                     fireworks=[2, 0, 0, 0, 0], tokens=0)
    team = ConventionTeam(st, "information")
    team.set_knowledge(0, 2, [card(R, 1), card(R, 2)])
    assert team.act() == 2


# ----------------------------------------------------------------------------- scores and plumbing
@pytest.mark.parametrize("bot", ["smartbot", "information"])
def test_scores_near_published_means(bot):
    for players in (2, 3, 4, 5):
        scores, played, moves = convention_scores(bot, players, 300, seed=7)
        se = played.std(ddof=1) / np.sqrt(len(played))
        assert abs(played.mean() - PUBLISHED_SCORES[bot][players - 2]) < 0.2 + 4 * se, (players, played.mean())
        assert np.all(scores <= played) and np.all(moves > 0)


def test_safe_smartbot_matches_the_hanabi_challenge_in_hle_scoring():
    for players in (3, 4, 5):                      # the challenge's SmartBot gambles only with 2 players
        scores, played, _ = convention_scores("smartbot_safe", players, 300, seed=11)
        se = scores.std(ddof=1) / np.sqrt(len(scores))
        assert abs(scores.mean() - PUBLISHED_SCORES["smartbot_safe"][players - 2]) < 0.2 + 4 * se
        assert np.array_equal(scores, played)      # it never loses its last life


def test_registry_selfplay_and_cli(capsys):
    agent = named_agent("smartbot")
    assert isinstance(agent, ConventionAgent) and agent.kind == "smartbot"
    assert named_agent("WTFWThat").kind == "information"
    report = selfplay_report("SmartBot", players=3, games=50, seed=3)
    scores, played, _ = convention_scores("smartbot", 3, 50, seed=3)
    assert report.played_cards.mean == pytest.approx(played.mean())
    assert report.zero_on_loss.mean == pytest.approx(scores.mean())
    st = dealt(4, 0)
    assert st.is_legal(agent.act(st))
    team = deal_team("SmartBotSafe", 3, seed=2)
    assert team.kind == ConventionTeam(dealt(3, 2), "smartbot_safe").kind
    with pytest.raises(ValueError, match="unknown convention bot"):
        deal_team("NoSuchBot", 3)
    with pytest.raises(ValueError, match="only play with themselves"):
        crosstable(["SmartBot", "Piers"], games=2)
    with pytest.raises(ValueError):
        convention_scores("smartbot", 6, 10)
    from cfrkit.cli import main
    assert main(["hanabi", "selfplay", "--agent", "Information", "--players", "4", "--games", "40"]) == 0
    assert "Information" in capsys.readouterr().out
