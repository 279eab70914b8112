"""Head-to-head matches: duplicate seating, AIVAT unbiasedness and variance, logs, agent checks."""
import time

import numpy as np
import pytest

from cfrkit.agents.leduc_agents import LeducPolicyAgent, make_leduc_agent
from cfrkit.agents.poker import AlwaysCallAgent, FixedRangeRaiser, RandomAgent
from cfrkit.evaluation.headtohead import exact_match_value, head_to_head
from cfrkit.poker.agent import AgentInterfaceError, HandStrategy, PokerAgent
from cfrkit.games.base import GameError


@pytest.fixture(scope="module")
def weak_cfr_agent():
    from cfrkit.solvers import CFRSolver

    solver = CFRSolver("leduc", algorithm="cfr+")
    solver.run(10)
    return LeducPolicyAgent(solver.average_policy(), "leduc", name="cfr+10", seed=1)


def test_duplicate_seats_swap_on_the_same_cards():
    res = head_to_head("holdem", [AlwaysCallAgent(), AlwaysCallAgent()], 5, seed=2, duplicate=True)
    pairs = res.hand_values.reshape(-1, 2)
    assert np.array_equal(pairs[:, 0], -pairs[:, 1])  # same play, cards stay with the seat: A's results cancel
    assert res.duplicate_estimate.mean == 0.0 and list(res.hand_seat[:4]) == [0, 1, 0, 1]
    assert list(res.hand_deal[:4]) == [0, 0, 1, 1]


def test_a_match_split_at_first_deal_equals_the_whole_match():
    # deterministic agents: the two parts of a split match must replay the whole match's hands exactly
    whole = head_to_head("holdem", [FixedRangeRaiser(), AlwaysCallAgent()], 12, seed=5)
    parts = [head_to_head("holdem", [FixedRangeRaiser(), AlwaysCallAgent()], n, seed=5, first_deal=k)
             for k, n in ((0, 7), (7, 5))]
    assert np.array_equal(np.concatenate([p.hand_values for p in parts]), whole.hand_values)
    assert np.array_equal(np.concatenate([p.hand_deal for p in parts]), whole.hand_deal)
    with pytest.raises(GameError, match="first_deal"):
        head_to_head("holdem", [AlwaysCallAgent(), AlwaysCallAgent()], 2, first_deal=-1)


def test_aivat_is_unbiased_on_leduc_and_reduces_variance(weak_cfr_agent):
    opponent = make_leduc_agent("random", "leduc", seed=2)
    exact = exact_match_value([weak_cfr_agent, opponent], "leduc") * 1000.0
    inside = 0
    means, stds = [], {"plain": [], "duplicate": [], "aivat": []}
    seeds = range(8)
    for seed in seeds:
        res = head_to_head("leduc", [weak_cfr_agent, opponent], 150, seed=seed, duplicate=True, aivat=True)
        inside += abs(res.aivat.mean - exact) <= res.aivat.ci95
        means.append(res.aivat.mean)
        stds["plain"].append(res.plain.std)
        stds["duplicate"].append(res.duplicate_estimate.std)
        stds["aivat"].append(res.aivat.std)
    assert inside >= 6  # 95% intervals: 8 of 8 expected, 6 allowed
    pooled_se = np.std(means, ddof=1) / np.sqrt(len(means))
    assert abs(np.mean(means) - exact) < 4 * pooled_se
    assert np.mean(stds["aivat"]) < 0.75 * np.mean(stds["plain"])
    assert np.mean(stds["aivat"]) < np.mean(stds["duplicate"])


def test_aivat_on_holdem_keeps_the_mean_of_a_deterministic_matchup():
    # fixed-range-raiser vs always-call: both known, so AIVAT's corrections must average out
    res = head_to_head("holdem", [FixedRangeRaiser(), AlwaysCallAgent()], 40, seed=1, duplicate=True, aivat=True)
    assert abs(res.aivat.mean - res.duplicate_estimate.mean) < 2 * (res.aivat.ci95 + res.duplicate_estimate.ci95)
    assert res.aivat.std < res.plain.std


def test_match_logs_replay(tmp_path):
    from cfrkit.games.holdem.history import replay_acpc_log, replay_phh
    from cfrkit.games.registry import load

    acpc, phh = tmp_path / "m.log", tmp_path / "m.phhs"
    res = head_to_head("holdem", [FixedRangeRaiser(), RandomAgent(3)], 6, seed=5, acpc_log=str(acpc), phh_log=str(phh))
    replays = replay_acpc_log(acpc.read_text(), load("holdem"))
    assert len(replays) == 12
    sections = [s for s in phh.read_text().split("\n[") if s.strip()]
    assert len(sections) == 12
    body = sections[3].split("]\n", 1)[1]
    replay_phh(body)
    with pytest.raises(GameError, match="hold'em games only"):
        head_to_head("leduc", [AlwaysCallAgent(), AlwaysCallAgent()], 2, acpc_log=str(acpc))


class _Illegal(PokerAgent):
    name = "bad-raiser"

    def act(self, state):
        return 7  # a raise to 5 chips: never legal in HUNL


class _BadSums(AlwaysCallAgent):
    name = "bad-sums"

    def hand_strategy(self, state):
        hs = super().hand_strategy(state)
        return HandStrategy(hs.actions, hs.probs * 0.5)


class _IllegalSupport(AlwaysCallAgent):
    name = "bad-support"

    def hand_strategy(self, state):
        return HandStrategy(np.array([1, 7]), np.tile([0.5, 0.5], (1326, 1)))


class _Slow(AlwaysCallAgent):
    name = "slow"

    def act(self, state):
        time.sleep(0.05)
        return 1


def test_bad_agents_get_errors_naming_agent_and_state():
    with pytest.raises(AgentInterfaceError, match=r"'bad-raiser' at betting 'c', board -, seat 0 to act: act returned illegal action 7"):
        head_to_head("holdem", [_Illegal(), AlwaysCallAgent()], 1)
    with pytest.raises(AgentInterfaceError, match="'bad-sums' at .* sum to 0.5"):
        head_to_head("holdem", [_BadSums(), AlwaysCallAgent()], 1, aivat=True)
    with pytest.raises(AgentInterfaceError, match="'bad-support' .*illegal action 7"):
        head_to_head("holdem", [_IllegalSupport(), AlwaysCallAgent()], 1, aivat=True)
    with pytest.raises(AgentInterfaceError, match="'slow' .*over the limit of 0.01 s"):
        head_to_head("holdem", [_Slow(), AlwaysCallAgent()], 1, time_limit=0.01)


def test_random_agent_probabilities_are_exact_for_any_size():
    from cfrkit.games.holdem.deals import deal_state
    from cfrkit.games.registry import load

    state, _ = deal_state(load("holdem"), 0, 0)
    agent = RandomAgent(0)
    lo, hi = state.raise_range()
    p = agent.hand_action_probability(state, 2 + lo + 17)
    assert np.allclose(p, 1.0 / 3 / (hi - lo + 1))
    hs = agent.hand_strategy(state)
    assert np.allclose(hs.probs.sum(axis=1), 1.0)
    counts = {}
    for _ in range(3000):
        a = agent.act(state)
        kind = min(a, 2)
        counts[kind] = counts.get(kind, 0) + 1
    assert all(abs(counts[k] / 3000 - 1 / 3) < 0.04 for k in (0, 1, 2))


def test_fixed_range_raiser_strategy_matches_act():
    from cfrkit.cards.hands import HOLE_PAIRS
    from cfrkit.games.holdem.deals import deal_state
    from cfrkit.games.registry import load

    agent = FixedRangeRaiser("TT+,AKs")
    state, _ = deal_state(load("holdem"), 0, 0)
    hs = agent.hand_strategy(state)
    for h in (0, 500, 1325, 1300):
        s2 = state.clone()
        s2.hole[state.current_player()] = [int(x) for x in HOLE_PAIRS[h]]
        assert hs.probability_of(agent.act(s2))[h] == 1.0


def test_policy_agent_on_real_holdem_answers_for_every_hand():
    from cfrkit.agents.poker import PolicyAgent
    from cfrkit.games.holdem.deals import deal_state
    from cfrkit.games.registry import load
    from cfrkit.policy import UniformRandomPolicy

    class Cheap(UniformRandomPolicy):
        game = load("holdem(definition=holdem.limit.2p.reverse_blinds)")

    agent = PolicyAgent(Cheap())
    state, _ = deal_state(Cheap.game, 0, 0)
    hs = agent.hand_strategy(state)
    assert list(hs.actions) == [0, 1, 2] and np.allclose(hs.probs, 1 / 3)


def test_exact_match_value_is_antisymmetric(weak_cfr_agent):
    opponent = make_leduc_agent("always-call", "leduc")
    v = exact_match_value([weak_cfr_agent, opponent], "leduc")
    w = exact_match_value([opponent, weak_cfr_agent], "leduc")
    assert abs(v + w) < 1e-12 and v > 0


class _ByLastRaise:
    """Abstract policy: call a translated half-pot raise, otherwise make the largest non-all-in raise."""

    def action_probabilities(self, state, player=None):
        hist = state.history()[4:]
        if hist and hist[-1] == 2:
            return {1: 1.0}
        targets = [a for a, _, _ in state.raise_targets() if a != state.game.allin_action]
        return {max(targets): 1.0} if targets else {1: 1.0}


def test_abstract_policy_agent_mixes_untranslated_bets_and_agrees_with_act():
    from cfrkit.agents.poker import PolicyAgent
    from cfrkit.games.holdem import pseudo_harmonic_probability, raise_action
    from cfrkit.games.holdem.deals import deal_state
    from cfrkit.games.registry import load

    abstract = load("holdem_abstract(game=holdem,bets=0.5+1)")
    agent = PolicyAgent(_ByLastRaise(), game=abstract, seed=2)
    state, _ = deal_state(abstract.inner, 0, 0)
    state.apply_action(raise_action(250))  # small blind raises 0.75 pots: between the 0.5 and 1 pot sizes
    agent.new_hand()
    hs = agent.hand_strategy(state)
    p_half = pseudo_harmonic_probability(0.5, 1.0, 0.75)
    assert np.allclose(hs.probability_of(1)[:10], p_half)  # call iff translated to half pot
    assert agent._choices == {}  # the query remembered nothing
    calls = 0
    for _ in range(1500):
        agent.new_hand()
        a = agent.act(state)
        assert hs.probability_of(a)[0] > 0
        calls += a == 1
    assert calls / 1500 == pytest.approx(p_half, abs=0.04)
    agent.new_hand()
    a = agent.act(state)  # after act, the translation is remembered and the strategy is pure
    assert agent.hand_strategy(state).probability_of(a)[5] == pytest.approx(1.0)
