"""Hanabi engine: every rule of the game, encodings on hand-built states, replays, errors."""
import numpy as np
import pytest

from cfrkit._kernels import hanabi_engine as E
from cfrkit.games import GameError, IllegalActionError, load
from cfrkit.games.consistency import check_game
from cfrkit.games.hanabi import HanabiConfig, HanabiEnv, HanabiVectorEnv, move_from_dict, move_to_dict, preset

COL = "RYGWB"


def cid(name, ranks=5):
    return COL.index(name[0]) * ranks + int(name[1]) - 1


def built(hands, players=None, cfg=None, **kw):
    cfg = cfg or E.EngineConfig(players=players or len(hands))
    st = E.EngineState(cfg, 0)
    st.set_state([[cid(c, cfg.ranks) for c in h] for h in hands], **kw)
    return cfg, st


def color_hint(cfg, offset, color):
    return 2 * cfg.hand_size + (offset - 1) * cfg.colors + COL.index(color)


def rank_hint(cfg, offset, rank):
    return 2 * cfg.hand_size + (cfg.players - 1) * cfg.colors + (offset - 1) * cfg.ranks + rank - 1


# ----------------------------------------------------------------------------- sizes and numbering
@pytest.mark.parametrize("players,moves,full,minimal", [(2, 20, 658, 308), (3, 30, 956, 431), (4, 38, 1041, 481),
                                                        (5, 48, 1280, 580)])
def test_move_counts_and_encoding_lengths(players, moves, full, minimal):
    assert E.EngineConfig(players=players).num_moves == moves
    assert E.EngineConfig(players=players).encoding_length == full
    assert E.EngineConfig(players=players, observation_type="minimal").encoding_length == minimal
    assert E.EngineConfig(players=players, observation_type="seer").encoding_length == full
    assert HanabiEnv(preset("full", players)).vectorized_observation_shape() == [full]
    assert HanabiEnv(preset("full-minimal", players)).vectorized_observation_shape() == [minimal]


def test_sections_of_full_two_player_encoding():
    cfg = E.EngineConfig(players=2)
    assert cfg.section_lengths() == {"hands": 127, "board": 76, "discards": 50, "last_action": 55,
                                     "card_knowledge": 350}


def test_deck_composition_and_initial_deal():
    for players, hand in [(2, 5), (3, 5), (4, 4), (5, 4)]:
        cfg = E.EngineConfig(players=players)
        assert cfg.deck_size == 50
        assert [cfg.card_count(k) for k in range(5)] == [3, 2, 2, 2, 1]
        st = E.EngineState(cfg, 3)
        assert st.current_player() == -1
        st.deal_random()
        assert st.current_player() == 0
        assert all(len(st.hand(p)) == hand for p in range(players))
        assert st.deck_size == 50 - players * hand
        assert (st.information_tokens, st.life_tokens) == (8, 3)
    assert E.EngineConfig(players=2, colors=1, ranks=2, hand_size=1).deck_size == 4
    assert E.EngineConfig(players=2, colors=1, ranks=3, hand_size=1).deck_size == 6


def test_move_dicts_round_trip():
    config = HanabiConfig(players=3)
    for m in range(30):
        assert move_from_dict(move_to_dict(m, config), config) == m
    assert move_to_dict(0, config) == {"action_type": "DISCARD", "card_index": 0}
    assert move_to_dict(5, config) == {"action_type": "PLAY", "card_index": 0}
    assert move_to_dict(10, config) == {"action_type": "REVEAL_COLOR", "target_offset": 1, "color": "R"}
    assert move_to_dict(20, config) == {"action_type": "REVEAL_RANK", "target_offset": 1, "rank": 0}
    assert move_to_dict(29, config) == {"action_type": "REVEAL_RANK", "target_offset": 2, "rank": 4}


# ----------------------------------------------------------------------------- legality
def test_hints_must_touch_a_card_and_need_a_token():
    cfg, st = built([["R1", "R2", "Y3", "G4", "W5"], ["R1", "R2", "R3", "R4", "R1"]])
    legal = set(st.legal_moves())
    assert color_hint(cfg, 1, "R") in legal
    for c in "YGWB":
        assert color_hint(cfg, 1, c) not in legal
    assert rank_hint(cfg, 1, 5) not in legal and rank_hint(cfg, 1, 4) in legal
    _, st0 = built([["R1", "R2", "Y3", "G4", "W5"], ["R1", "R2", "R3", "R4", "R1"]], tokens=0)
    assert all(m < 10 for m in st0.legal_moves())


def test_no_discard_at_maximum_tokens():
    _, st = built([["R1", "R2", "Y3", "G4", "W5"], ["R1", "R2", "R3", "R4", "R1"]])
    assert not any(m < 5 for m in st.legal_moves())
    _, st = built([["R1", "R2", "Y3", "G4", "W5"], ["R1", "R2", "R3", "R4", "R1"]], tokens=7)
    assert set(range(10)) <= set(st.legal_moves())
    st.apply(0)
    assert st.information_tokens == 8 and st.discard_counts()[cid("R1")] == 1


def test_shorter_hands_limit_card_moves():
    _, st = built([["R1", "R2"], ["Y1", "Y2", "Y3", "Y4", "Y5"]], tokens=5)
    legal = st.legal_moves()
    assert [m for m in legal if m < 10] == [0, 1, 5, 6]


# ----------------------------------------------------------------------------- plays, lives, scoring
def test_successful_and_failed_plays():
    cfg, st = built([["R1", "R3", "Y3", "G4", "W5"], ["B1", "B2", "B3", "B4", "B1"]])
    st.apply(5)  # play R1
    assert st.fireworks()[0] == 1 and st.score() == 1 and st.life_tokens == 3
    assert st.last_move()["scored"]
    assert st.current_player() == -1
    st.deal(cid("G2"))
    st.apply(color_hint(cfg, 1, "R"))  # player 1 hints player 0 (offset 1)
    st.apply(5)  # play R3 (slot 0 after the shift) -> fails
    assert st.life_tokens == 2 and st.discard_counts()[cid("R3")] == 1 and st.fireworks()[0] == 1
    assert not st.last_move()["scored"]


def test_last_life_scores_zero_or_played_cards():
    for played, expected in [(False, 0), (True, 2)]:
        cfg = E.EngineConfig(players=2, played_cards_scoring=played)
        _, st = built([["Y3", "R1", "Y3", "G4", "W5"], ["B1", "B2", "B3", "B4", "B1"]], cfg=cfg,
                      fireworks=[2, 0, 0, 0, 0], lives=1)
        assert st.score() == 2
        st.apply(5)
        assert st.is_terminal() and st.current_player() == -4
        assert st.score() == expected and st.played_cards() == 2


def test_completing_a_colour_returns_a_token_below_maximum():
    for tokens, after, flag in [(5, 6, True), (8, 8, False)]:
        _, st = built([["R5", "R1", "Y3", "G4", "W5"], ["B1", "B2", "B3", "B4", "B1"]],
                      fireworks=[4, 0, 0, 0, 0], tokens=tokens)
        st.apply(5)
        assert st.fireworks()[0] == 5 and st.information_tokens == after
        assert st.last_move()["information_token"] is flag


def test_final_round_after_the_last_card_is_drawn():
    for players in (2, 3, 4, 5):
        hand = ["R1", "Y1", "G1", "W1"]
        hands = [hand] * players
        deck = [0] * 25
        deck[cid("B1")] = 1
        _, st = built(hands, cfg=E.EngineConfig(players=players, hand_size=4), fireworks=[1, 1, 1, 1, 0], tokens=7,
                      deck=deck)
        assert st.deck_size == 1
        st.apply(0)  # discard, draws the last card
        assert st.current_player() == -1 and st.player_to_deal() == 0
        st.deal_random()
        assert st.hand(0)[-1] == cid("B1")
        assert st.deck_size == 0 and not st.is_terminal()
        turns = 0
        while not st.is_terminal():
            st.apply(st.legal_moves()[-1] if st.information_tokens else 0)
            turns += 1
        assert turns == players  # every player, the drawer included, gets exactly one more turn


def test_game_ends_when_every_firework_is_complete():
    _, st = built([["B5", "R1", "Y3", "G4"], ["B1", "B2", "B3", "B4"]], cfg=E.EngineConfig(players=2, hand_size=4),
                  fireworks=[5, 5, 5, 5, 4])
    st.apply(4 + 0)  # play B5
    assert st.is_terminal() and st.score() == 25


# ----------------------------------------------------------------------------- card knowledge
def test_positive_and_negative_card_knowledge():
    cfg, st = built([["R1", "R2", "Y3", "G4", "W5"], ["R1", "Y1", "R2", "B4", "B1"]])
    st.apply(color_hint(cfg, 1, "R"))
    k = st.knowledge(1)
    assert [x[2] for x in k] == [0, -1, 0, -1, -1]
    assert k[0][0] == 0b00001 and k[1][0] == 0b11110 and k[3][0] == 0b11110
    assert all(x[1] == 0b11111 for x in k)
    st.apply(rank_hint(cfg, 1, 1))  # player 1 tells player 0 about its 1s
    k0 = st.knowledge(0)
    assert k0[0][1] == 0b00001 and k0[0][3] == 0 and k0[1][1] == 0b11110 and k0[1][3] == -1
    assert st.last_move()["reveal_mask"] == 0b00001


def test_knowledge_moves_with_the_cards():
    cfg, st = built([["R1", "R2", "Y3", "G4", "W5"], ["R1", "Y1", "R2", "B4", "B1"]], tokens=7)
    st.apply(color_hint(cfg, 1, "Y"))
    st.apply(5)  # player 1 plays R1 (slot 0): the Y hint moves from slot 1 to slot 0
    k = st.knowledge(1)
    assert k[0][2] == 1 and len(k) == 4  # the new card is dealt at the chance node
    assert st.current_player() == -1
    st.deal(cid("G2"))
    k = st.knowledge(1)
    assert len(k) == 5 and k[4] == (0b11111, 0b11111, -1, -1)
    assert st.hand(1)[4] == cid("G2") and st.current_player() == 0


# ----------------------------------------------------------------------------- encoding on hand-built states
def reference_encoding(cfg, st, obs):
    """The canonical encoding from its documented layout, built with Python lists."""
    n, H, C, R = cfg.players, cfg.hand_size, cfg.colors, cfg.ranks
    B = C * R
    v = []
    for rel in range(1, n):
        hand = st.hand((obs + rel) % n)
        for i in range(H):
            bits = [0] * B
            if i < len(hand):
                bits[hand[i]] = 1
            v += bits
    v += [int(len(st.hand((obs + rel) % n)) < H) for rel in range(n)]
    v += [1] * st.deck_size + [0] * (cfg.deck_size - n * H - st.deck_size)
    for f in st.fireworks():
        v += [int(f > 0 and r == f - 1) for r in range(R)]
    v += [1] * st.information_tokens + [0] * (cfg.max_information_tokens - st.information_tokens)
    v += [1] * st.life_tokens + [0] * (cfg.max_life_tokens - st.life_tokens)
    for k, d in enumerate(st.discard_counts()):
        v += [1] * d + [0] * (cfg.card_count(k) - d)
    last = st.last_move()
    seg = [0] * (n + 4 + n + C + R + H + H + B + 2)
    if last is not None:
        kinds = ["play", "discard", "reveal_color", "reveal_rank"]
        seg[(last["player"] - obs) % n] = 1
        seg[n + kinds.index(last["type"])] = 1
        base = n + 4
        if last["type"].startswith("reveal"):
            seg[base + (last["target"] - obs) % n] = 1
            if "color" in last:
                seg[base + n + last["color"]] = 1
            else:
                seg[base + n + C + last["rank"]] = 1
            for i in range(H):
                if last["reveal_mask"] >> i & 1:
                    seg[base + n + C + R + i] = 1
        else:
            seg[base + n + C + R + H + last["card_index"]] = 1
            seg[base + n + C + R + 2 * H + last["card"]] = 1
            if last["type"] == "play":
                seg[-2] = int(last["scored"])
                seg[-1] = int(last["information_token"])
    v += seg
    if cfg.observation_type != 0:
        for rel in range(n):
            know = st.knowledge((obs + rel) % n)
            for i in range(H):
                bits = [0] * (B + C + R)
                if i < len(know):
                    kc, kr, hc, hr = know[i]
                    for c in range(C):
                        for r in range(R):
                            bits[c * R + r] = int(bool(kc >> c & 1 and kr >> r & 1))
                    if hc >= 0:
                        bits[B + hc] = 1
                    if hr >= 0:
                        bits[B + C + hr] = 1
                v += bits
    return np.array(v, dtype=np.uint8)


def test_encoding_of_a_hand_built_state():
    cfg, st = built([["R1", "R2", "Y3", "G4", "W5"], ["R1", "Y1", "R2", "B4", "B1"]],
                    fireworks=[1, 0, 0, 0, 0], discards=[cid("G1"), cid("G1")], tokens=6, lives=2)
    v = st.encode(0)
    assert v.shape == (658,)
    # player 1's cards seen by player 0: R1 at 0, Y1 at 25+5, R2 at 50+1, B4 at 75+23, B1 at 100+20
    assert list(np.flatnonzero(v[:125])) == [0, 30, 51, 98, 120]
    assert v[125:127].sum() == 0  # no hand is missing a card
    deck_left = 50 - 10 - 1 - 2
    assert v[127:167].sum() == deck_left and v[127 + deck_left - 1] == 1 and v[127 + deck_left] == 0
    assert list(np.flatnonzero(v[167:192])) == [0]  # red firework at rank 1
    assert v[192:200].tolist() == [1] * 6 + [0] * 2 and v[200:203].tolist() == [1, 1, 0]
    g1 = 203 + 10 + 10  # discard thermometers: R (3+2+2+2+1), Y (10), then G1's three bits
    assert v[g1:g1 + 3].tolist() == [1, 1, 0] and v[203:253].sum() == 2
    assert v[253:308].sum() == 0  # no last move yet
    assert np.array_equal(v, reference_encoding(cfg, st, 0))
    st.apply(color_hint(cfg, 1, "R"))
    st.apply(8)  # player 1 plays its slot 3 (B4): fails
    for obs in (0, 1):
        assert np.array_equal(st.encode(obs), reference_encoding(cfg, st, obs))
    v = st.encode(0)
    last = v[253:308]
    assert last[1] == 1 and last[2] == 1  # player +1 acted; move type play
    assert last[2 + 4 + 2 + 5 + 5 + 5 + 3] == 1  # played slot 3
    assert last[2 + 4 + 2 + 5 + 5 + 5 + 5 + cid("B4")] == 1 and last[-2:].tolist() == [0, 0]


def test_encodings_match_reference_along_random_games():
    for players in (2, 3, 4, 5):
        for ot in (0, 1, 2):
            cfg = E.EngineConfig(players=players, observation_type=ot)
            st = E.EngineState(cfg, players * 10 + ot)
            st.deal_random()
            rng = np.random.default_rng(ot)
            while not st.is_terminal():
                for obs in range(players):
                    assert np.array_equal(st.encode(obs), reference_encoding(cfg, st, obs))
                legal = st.legal_moves()
                plays = [m for m in legal if cfg.hand_size <= m < 2 * cfg.hand_size]
                choice = [m for m in legal if m not in plays] or legal
                st.apply(int(rng.choice(choice)))
                st.deal_random()


def test_minimal_encoding_is_the_prefix_of_card_knowledge():
    a = E.EngineState(E.EngineConfig(players=3), 5)
    b = E.EngineState(E.EngineConfig(players=3, observation_type="minimal"), 5)
    a.deal_random()
    b.deal_random()
    for m in [21, 5, 0]:
        if a.is_legal(m):
            a.apply(m), b.apply(m)
            a.deal_random(), b.deal_random()
    assert np.array_equal(a.encode(1)[:431], b.encode(1))


def test_seer_sees_own_cards_in_knowledge():
    cfg = E.EngineConfig(players=2, observation_type="seer")
    st = E.EngineState(cfg, 1)
    st.deal_random()
    know = st.encode(0)[308:]
    for i, card in enumerate(st.hand(0)):
        block = know[i * 35:(i + 1) * 35]
        assert list(np.flatnonzero(block[:25])) == [card]
        assert block[25 + card // 5] == 1 and block[30 + card % 5] == 1


# ----------------------------------------------------------------------------- replays and APIs
def test_identical_replays_for_a_fixed_seed():
    def trajectory(seed):
        env = HanabiEnv(preset("full", 3), seed=seed)
        obs = env.reset()
        rng = np.random.default_rng(0)
        out, done = [], False
        while not done:
            legal = obs["player_observations"][obs["current_player"]]["legal_moves_as_int"]
            a = int(rng.choice(legal))
            obs, r, done, _ = env.step(a)
            out.append((a, r, obs["player_observations"][0]["vectorized"].tobytes()))
        return out
    assert trajectory(4) == trajectory(4)
    assert trajectory(4) != trajectory(5)


def test_rl_env_rewards_are_score_changes():
    env = HanabiEnv(preset("full", 2), seed=2)
    for _ in range(5):
        obs, total, done = env.reset(), 0.0, False
        rng = np.random.default_rng(1)
        while not done:
            legal = obs["player_observations"][obs["current_player"]]["legal_moves_as_int"]
            obs, r, done, info = env.step(int(rng.choice(legal)))
            total += r
        assert total == info["score"] == env.state.score()


def test_vector_env_matches_single_games_and_auto_resets():
    venv = HanabiVectorEnv(preset("full", 2), num_envs=4, seed=9)
    obs, mask, cur = venv.reset()
    singles = [venv.state(i).clone() for i in range(4)]
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(200):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        for i, st in enumerate(singles):
            if st is not None:
                assert np.array_equal(obs[i], st.encode(st.current_player()))
        obs, mask, cur, rewards, dones, finals = venv.step(acts)
        for i, st in enumerate(singles):
            if st is None:
                continue
            before = st.score()
            st.apply(int(acts[i]))
            st.deal_random()
            assert rewards[i] == st.score() - before
            if dones[i]:
                assert finals[i] == st.score()
                singles[i] = None
                finished += 1
    assert finished == 4
    with pytest.raises(IllegalActionError):
        venv.step(np.full(4, 10 ** 6))


# ----------------------------------------------------------------------------- errors
def test_bad_parameters_give_clear_errors():
    with pytest.raises(ValueError, match="players must be in"):
        E.EngineConfig(players=6)
    with pytest.raises(GameError, match="players must be in"):
        load("hanabi(players=1)")
    with pytest.raises(GameError, match="observation_type"):
        load("hanabi(observation_type=psychic)")
    with pytest.raises(GameError, match="need 10 cards"):
        load("hanabi(colors=1,ranks=2,hand_size=5)")
    with pytest.raises(GameError, match="unknown Hanabi preset"):
        preset("gigantic")
    with pytest.raises(GameError, match="unknown Hanabi config keys"):
        HanabiEnv({"players": 2, "colours": 3})


def test_illegal_moves_give_clear_errors():
    env = HanabiEnv(preset("full", 2), seed=0)
    env.reset()
    with pytest.raises(IllegalActionError, match="legal:"):
        env.step(0)  # discarding at 8 tokens
    game = load("hanabi")
    s = game.new_initial_state()
    with pytest.raises(IllegalActionError):
        s.apply_action(30)
    st = E.EngineState(E.EngineConfig(), 0)
    with pytest.raises(ValueError, match="no card is to be dealt|not left"):
        st.deal(99)


# ----------------------------------------------------------------------------- protocol and tiny games
@pytest.mark.parametrize("game", ["hanabi", "hanabi(players=3,scoring=played_cards)", "hanabi(players=4)",
                                  "hanabi(players=5,observation_type=seer)",
                                  "hanabi(players=2,colors=1,ranks=2,hand_size=1)",
                                  "hanabi(colors=2,hand_size=2,max_information_tokens=3,max_life_tokens=1)"])
def test_consistency(game):
    counts = check_game(game, 40)
    assert counts["terminals"] == 40


def _random_policy_value(state):
    if state.is_terminal():
        return state.returns()[0]
    if state.is_chance_node():
        return sum(p * _random_policy_value(state.child(a)) for a, p in state.chance_outcomes())
    acts = state.legal_actions()
    return sum(_random_policy_value(state.child(a)) for a in acts) / len(acts)


def test_tiny_variant_full_traversal_matches_batched_monte_carlo():
    """Exact value of uniform random play by full traversal vs the batched C engine's sampling."""
    gs = "hanabi(players=2,colors=1,ranks=2,hand_size=1,max_information_tokens=3,max_life_tokens=1)"
    game = load(gs)
    exact = _random_policy_value(game.new_initial_state())
    assert 0.4 < exact < 0.7
    venv = HanabiVectorEnv(game.config, num_envs=256, seed=1, encode=False)
    venv.reset()
    steps, finished, score_sum = venv.random_steps(3_000_000, seed=2)
    mc = score_sum / finished
    se = 0.9 / np.sqrt(finished)
    assert abs(mc - exact) < 4 * se, (mc, exact, se)


def test_pettingzoo_style_cycle():
    from cfrkit.games.hanabi import HanabiAECEnv

    env = HanabiAECEnv(preset("full", 3), seed=4)
    env.reset()
    assert env.agents == ["player_0", "player_1", "player_2"] and env.agent_selection == "player_0"
    rng = np.random.default_rng(0)
    total, steps = 0.0, 0
    while env.agents:
        agent = env.agent_selection
        obs, reward, term, trunc, info = env.last()
        if term:
            env.step(None)
            continue
        assert obs["observation"].shape == (956,) and obs["action_mask"].sum() > 0
        other = env.agents[(env.agents.index(agent) + 1) % 3]
        assert env.observe(other)["action_mask"].sum() == 0  # only the player to act has legal moves
        legal = np.flatnonzero(obs["action_mask"])
        if steps == 0:
            with pytest.raises(IllegalActionError):
                env.step(int(np.setdiff1d(np.arange(30), legal)[0]))
        env.step(int(rng.choice(legal)))
        total += env.rewards[agent]
        steps += 1
    assert env.state.is_terminal() and total == env.state.score()
    with pytest.raises(GameError, match="unknown agent"):
        env.observe("player_9")


def test_tiniest_variants_solve_exactly():
    from cfrkit.solvers.tabular.cooperative import perfect_information_value, person_by_person_optimum

    tiny = "hanabi(players=2,colors=1,ranks=2,hand_size=1,max_information_tokens=1,max_life_tokens=1)"
    sol = person_by_person_optimum(tiny, seed=0)
    # the team can always score both cards: the solved value reaches the perfect-information bound (optimal)
    assert sol.value == pytest.approx(2.0) == perfect_information_value(tiny)
    assert sol.uniform_random_value == pytest.approx(_random_policy_value(load(tiny).new_initial_state()))
    assert sol.information_states == 176
    # the solved policy really scores 2 in every deal: replay it through the game protocol
    game = load(tiny)

    def play(state):
        if state.is_terminal():
            return state.returns()[0]
        if state.is_chance_node():
            return sum(p * play(state.child(a)) for a, p in state.chance_outcomes())
        key = f"{state.current_player()}|{state.information_state_string()}"
        return play(state.child(sol.policy[key]))

    assert play(game.new_initial_state()) == pytest.approx(2.0)
    other = "hanabi(players=2,colors=1,ranks=2,hand_size=2,max_information_tokens=2,max_life_tokens=1)"
    sol = person_by_person_optimum(other, seed=1)
    assert sol.uniform_random_value < sol.value <= perfect_information_value(other) + 1e-9
