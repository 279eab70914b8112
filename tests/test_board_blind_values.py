"""AIVAT for agents that do not read the board (random, always-call, fixed-range-raiser): random's raise sizes
split between representative sizes, and the betting's exact expectation as the value function.

The checks: the size shares against brute force; random's ``taken_weights`` averaging to its strategy over its
real play (every legal size enumerated with ``hand_action_probability``); AIVAT's mean against the exact value
of the match computed here independently (every integer raise size, the deal by classes of hands); and that
the test notices a wrong deal expectation."""
import numpy as np
import pytest

from cfrkit.agents.poker import AlwaysCallAgent, FixedRangeRaiser, RandomAgent
from cfrkit.cards.preflop import preflop_equity_vs_random
from cfrkit.evaluation import board_blind_values as bbv
from cfrkit.evaluation.headtohead import head_to_head
from cfrkit.evaluation.ladder import supports_aivat
from cfrkit.games import load
from cfrkit.games.base import GameError
from cfrkit.games.holdem.game import CALL, CHANCE, FOLD, raise_action
from cfrkit.poker.agent import size_interpolation, size_node_weights
from cfrkit.poker.view import poker_view

SHORT = "holdem(stacks=250;250)"   # blinds 50/100: a few dozen raise sizes, so every size can be enumerated


def test_size_node_weights_are_the_mean_interpolation_of_a_uniform_size():
    rng = np.random.default_rng(0)
    for _ in range(30):
        lo = int(rng.integers(0, 500))
        inner = sorted(set(rng.integers(lo + 1, lo + 400, size=int(rng.integers(0, 6))).tolist()))
        nodes = np.array([lo] + [x for x in inner if x < lo + 400] + [lo + 400])
        brute = np.mean([size_interpolation(nodes, t) for t in range(lo, lo + 401)], axis=0)
        assert np.allclose(size_node_weights(nodes), brute, atol=1e-12)
        assert abs(size_node_weights(nodes).sum() - 1.0) < 1e-12
    assert size_node_weights([7]).tolist() == [1.0]
    with pytest.raises(ValueError):
        size_node_weights([3, 3])
    with pytest.raises(ValueError):
        size_interpolation([0, 10], 11)


def _decision_states():
    """States where random is to act: facing the blinds, a limp, a raise, and after a flop bet (20,000-chip
    stacks: thousands of legal sizes)."""
    game = load("holdem")
    root = game.new_initial_state()
    while root.current_player() == CHANCE:
        root.apply_action(root.chance_outcomes()[0][0])
    out = [root.clone()]
    limp = root.clone()
    limp.apply_action(CALL)
    out.append(limp)
    raised = root.clone()
    raised.apply_action(raise_action(300))
    out.append(raised)
    flop = limp.clone()
    flop.apply_action(CALL)
    while flop.current_player() == CHANCE:
        flop.apply_action(flop.chance_outcomes()[0][0])
    flop.apply_action(raise_action(500))
    out.append(flop)
    return out


def test_random_taken_weights_average_to_its_strategy_over_its_real_play():
    """Summed over every legal action with the probability random really plays it, the weights that stand for
    the action equal the strategy's probabilities: the zero-mean condition of AIVAT's term."""
    agent = RandomAgent(0)
    view = poker_view(load("holdem"))
    for state in _decision_states():
        actions, probs = agent.own_strategy(state)
        hand = view.hand_of(state, state.current_player())
        lo, hi = state.raise_range()
        legal = [FOLD, CALL] + [raise_action(t) for t in range(lo, hi + 1)]
        mean = np.zeros(actions.size)
        total = 0.0
        for a in legal:
            if not state.is_legal(a):
                continue
            p = float(agent.hand_action_probability(state, a)[hand])
            total += p
            mean += p * agent.taken_weights(state, a, actions)
        assert abs(total - 1.0) < 1e-9
        assert np.allclose(mean, probs, atol=1e-12), (mean, probs)
        # the 1326 rows of hand_strategy say the same
        hs = agent.hand_strategy(state)
        assert np.allclose(hs.probs[hand], probs)


def _exact_value(game, seat_agents, hand0, hand1, eq0: float) -> float:
    """Seat 0's expected chips over every line of the two (board-blind) agents with ``hand0`` / ``hand1``,
    every legal raise size of random by ``hand_action_probability`` (not the representative sizes), showdowns
    at the equity ``eq0``: an independent walk of the betting."""
    view = poker_view(game)
    state = game.new_initial_state()
    for c in (*hand0, *hand1):
        state.apply_action(int(c))

    def walk(s) -> float:
        if s.is_terminal():
            if s.reached_showdown():
                m = min(s.spent)
                return eq0 * 2 * m - m
            return float(s.returns()[0])
        if s.current_player() == CHANCE:
            used = set(s.board) | set(hand0) | set(hand1)
            t = s.clone()
            t.apply_action(next(c for c in range(52) if c not in used))
            return walk(t)
        agent = seat_agents[s.current_player()]
        hand = view.hand_of(s, s.current_player())
        rr = s.raise_range()
        legal = [FOLD, CALL] + ([] if rr is None else [raise_action(t) for t in range(rr[0], rr[1] + 1)])
        total = 0.0
        for a in legal:
            if not s.is_legal(a):
                continue
            if isinstance(agent, RandomAgent):
                p = float(agent.hand_action_probability(s, a)[hand])
            else:
                p = 1.0 if a == agent.act(s) else 0.0
            if p > 0:
                t = s.clone()
                t.apply_action(a)
                total += p * walk(t)
        return total

    return walk(state)


def _match_value_exact(game, agent, other) -> float:
    """``agent``'s exact expected winnings per deal of a duplicate match against ``other`` (mean of its two
    seats, chips): each seat's value over the deal, the fixed-range-raiser's hands by its range (in or out),
    the equity given that class from the exact preflop equities against a random hand."""
    eq_vs_random = preflop_equity_vs_random()
    frr = agent if isinstance(agent, FixedRangeRaiser) else other if isinstance(other, FixedRangeRaiser) else None
    if frr is None:
        classes = [(1.0, 0.5, (0, 1))]   # the betting ignores the cards: E eq = 1/2 by symmetry
    else:
        from cfrkit.cards.hands import HOLE_PAIRS

        mask = frr.range_mask()
        # P(the raiser's hand is in its range): every pair equally likely; E[eq | class] its pairs' mean
        classes = [(float(mask.mean()), float(eq_vs_random[mask].mean()), HOLE_PAIRS[np.flatnonzero(mask)[0]]),
                   (float((~mask).mean()), float(eq_vs_random[~mask].mean()), HOLE_PAIRS[np.flatnonzero(~mask)[0]])]
    values = []
    for seat_of_agent in (0, 1):
        seats = [agent, other] if seat_of_agent == 0 else [other, agent]
        v_seat0 = 0.0
        for p, eq_frr, frr_hand in classes:
            frr_hand = tuple(int(c) for c in frr_hand)
            rest = tuple(c for c in range(52) if c not in frr_hand)[:2]
            if frr is None or seats[0] is frr:
                h0, h1, eq0 = frr_hand, rest, eq_frr
            else:
                h0, h1, eq0 = rest, frr_hand, 1.0 - eq_frr
            v_seat0 += p * _exact_value(game, seats, h0, h1, eq0)
        values.append(v_seat0 if seat_of_agent == 0 else -v_seat0)
    return 0.5 * (values[0] + values[1])


@pytest.mark.parametrize("pair", ["random-call", "raiser-call", "random-raiser"])
def test_aivat_mean_equals_the_exact_value_of_the_match(pair):
    """AIVAT with the board-blind values is centred on the match's exact value (computed independently above)
    and removes nearly all of duplicate's deviation."""
    game = load(SHORT)
    agents = {"random-call": (RandomAgent(1), AlwaysCallAgent()),
              "raiser-call": (FixedRangeRaiser(), AlwaysCallAgent()),
              "random-raiser": (RandomAgent(1), FixedRangeRaiser())}[pair]
    exact = _match_value_exact(game, *agents) / 100.0 * 1000.0   # mbb per hand (big blind 100 chips)
    res = head_to_head(game, list(agents), 400, seed=4, duplicate=True, aivat=True)
    per_deal = res.aivat_values.reshape(-1, 2).mean(axis=1) * 1000.0 / 100.0
    duplicate = res.payoffs[:, 0].reshape(-1, 2).mean(axis=1) * 1000.0 / 100.0
    se = per_deal.std(ddof=1) / np.sqrt(per_deal.size)
    assert abs(per_deal.mean() - exact) <= 4 * se + 1e-6 * max(1.0, abs(exact)), (per_deal.mean(), exact, se)
    assert per_deal.std() < 0.2 * duplicate.std(), (per_deal.std(), duplicate.std())


def test_a_wrong_deal_expectation_is_caught(monkeypatch):
    """The same check notices a value function whose deal expectation ignores the raiser's range (equity 1/2
    for every class): AIVAT is then biased and its mean leaves the exact value."""
    game = load(SHORT)
    agents = (FixedRangeRaiser(), AlwaysCallAgent())
    exact = _match_value_exact(game, *agents) / 100.0 * 1000.0
    real = bbv._preflop_equity_float64

    monkeypatch.setattr(bbv, "_preflop_equity_float64", lambda: np.full_like(real(), 0.5))
    monkeypatch.setattr(bbv, "_MOMENTS", {})   # the class moments are cached per labelling
    res = head_to_head(game, list(agents), 100, seed=4, duplicate=True, aivat=True)
    per_deal = res.aivat_values.reshape(-1, 2).mean(axis=1) * 1000.0 / 100.0
    se = per_deal.std(ddof=1) / np.sqrt(per_deal.size)
    assert abs(per_deal.mean() - exact) > 4 * se + 1e-6 * abs(exact)


def test_which_agents_get_the_values_and_aivat():
    view = poker_view(load(SHORT))
    assert all(bbv.board_blind(a) for a in (RandomAgent(0), AlwaysCallAgent(), FixedRangeRaiser()))
    assert supports_aivat(RandomAgent(0))
    with pytest.raises(GameError, match="reads the board"):
        bbv.BoardBlindValueFunction(view, [RandomAgent(0), object()])
    with pytest.raises(GameError, match="heads-up hold'em"):
        bbv.BoardBlindValueFunction(poker_view(load("leduc")), [RandomAgent(0), AlwaysCallAgent()])
