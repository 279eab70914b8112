"""LBR: the always-fold check in HUNL, bounds by the exact best response on Leduc, runners."""
import os

import numpy as np
import pytest

#: long checks (minutes) run only with CFRKIT_LONG=1; their short forms always run
LONG = pytest.mark.skipif(not os.environ.get("CFRKIT_LONG"), reason="long check: set CFRKIT_LONG=1")

from cfrkit.agents.leduc_agents import LeducDeepStackAgent, LeducPolicyAgent, make_leduc_agent
from cfrkit.agents.poker import AgentInterfaceError, AlwaysCallAgent, AlwaysFoldAgent, PokerAgent, RandomAgent
from cfrkit.evaluation.lbr import (ALL_IN, LBRSettings, exact_best_response_values, exact_lbr_values, parse_bets,
                                   parse_rounds, run_lbr, settings_from)
from cfrkit.poker.view import poker_view
from cfrkit.games.base import GameError


def test_parse_settings():
    assert parse_bets("FC") == ()
    assert parse_bets("fcpa") == (1.0, ALL_IN)
    assert parse_bets("1,0.5,A") == (0.5, 1.0, ALL_IN)
    assert parse_rounds("3-4") == (2, 3)
    assert settings_from("FCPA", "3-4").label() == "FCPA/3-4"
    with pytest.raises(GameError, match="bad LBR bet"):
        parse_bets("FCX")
    with pytest.raises(GameError, match="1..4"):
        parse_rounds("0-4")


@pytest.mark.parametrize("rounds", ["1-4", "3-4"])
def test_always_fold_is_exactly_750_mbb(rounds):
    res = run_lbr(AlwaysFoldAgent(), "holdem", 4, settings_from("FCPA", rounds), seed=3)
    assert res.mbb_per_game == 750.0 and res.ci95 == 0.0
    assert res.seat_mbb == (500.0, 1000.0)  # the agent folds its small blind; LBR's pot bet takes the big blind


def test_fold_call_only_lbr_cannot_make_always_fold_fold_its_big_blind():
    res = run_lbr(AlwaysFoldAgent(), "holdem", 3, settings_from("FC", "3-4"), seed=0)
    assert res.seat_mbb[0] == 500.0
    res = run_lbr(AlwaysCallAgent(), "holdem", 3, settings_from("FC", "3-4"), seed=0)
    assert res.mbb_per_game == 0.0  # check-down on identical cards: the two seats cancel exactly


@pytest.fixture(scope="module")
def leduc_agents():
    from cfrkit.solvers import CFRSolver

    out = {}
    for game in ("leduc", "leduc_nolimit"):
        agents = [make_leduc_agent("random", game)]
        solver = CFRSolver(game, algorithm="cfr+")
        for n in (10, 100, 1000):
            solver.run(n)
            agents.append(LeducPolicyAgent(solver.average_policy(), game, name=f"cfr+{n}"))
        out[game] = agents
    return out


def _check_bounds(game, agents):
    settings = settings_from("FCPA", "1-2", num_rounds=2)
    lbr_values = []
    for agent in agents:
        lbr = exact_lbr_values(agent, game, settings)
        br = exact_best_response_values(agent, game)
        for seat in (0, 1):
            assert lbr[seat] <= br[seat] + 1e-9, (agent.name, seat, lbr, br)
        lbr_values.append(sum(lbr) / 2)
    # against uniform random LBR wins a lot (a real bound, not a trivial one)
    assert lbr_values[0] > 0.5 * poker_view(game).big_blind


@pytest.mark.parametrize("game,which", [("leduc", (0, 1, 3)), ("leduc_nolimit", (0, 2))])
def test_lbr_never_above_exact_best_response_on_leduc(game, which, leduc_agents):
    _check_bounds(game, [leduc_agents[game][k] for k in which])


@pytest.mark.slow
@LONG
@pytest.mark.parametrize("game", ["leduc", "leduc_nolimit"])
def test_lbr_never_above_exact_best_response_on_leduc_full(game, leduc_agents):
    _check_bounds(game, leduc_agents[game])
    agent = LeducDeepStackAgent(game, iterations=100)
    lbr = exact_lbr_values(agent, game, settings_from("FCPA", "1-2", num_rounds=2))
    br = exact_best_response_values(agent, game)
    assert lbr[0] <= br[0] + 1e-9 and lbr[1] <= br[1] + 1e-9


def test_lbr_bounds_deepstack_on_leduc():
    agent = LeducDeepStackAgent("leduc", iterations=10)
    settings = settings_from("FCPA", "1-2", num_rounds=2)
    lbr = exact_lbr_values(agent, "leduc", settings)
    br = exact_best_response_values(agent, "leduc")
    assert lbr[0] <= br[0] + 1e-9 and lbr[1] <= br[1] + 1e-9


def test_sampled_lbr_agrees_with_exact_lbr_value():
    game = "leduc_nolimit"
    agent = make_leduc_agent("random", game, seed=5)
    settings = settings_from("FCPA", "1-2", num_rounds=2)
    exact = sum(exact_lbr_values(agent, game, settings)) / 2 * 1000 / 100
    res = run_lbr(agent, game, 500, settings, seed=2)
    assert abs(res.mbb_per_game - exact) < 2 * res.ci95  # about 4 standard errors


def test_checkpoint_resume_equals_uninterrupted_run(tmp_path, monkeypatch):
    import cfrkit.evaluation.lbr as lbr

    game = "leduc"
    agent = make_leduc_agent("random", game, seed=1)
    settings = settings_from("FCPA", "1-2", num_rounds=2)
    full = run_lbr(agent, game, 60, settings, seed=4, chunk=20)
    path = str(tmp_path / "lbr.npz")
    real = lbr.lbr_deals
    calls = {"n": 0}

    def dying(*args, **kw):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(lbr, "lbr_deals", dying)
    with pytest.raises(KeyboardInterrupt):
        run_lbr(agent, game, 60, settings, seed=4, chunk=20, checkpoint=path)
    monkeypatch.setattr(lbr, "lbr_deals", real)
    resumed = run_lbr(agent, game, 60, settings, seed=4, chunk=20, checkpoint=path)
    assert np.array_equal(resumed.values, full.values)
    # more deals extend the checkpoint (its chunks are reused, not replayed), fewer keep a prefix
    calls["n"] = 0

    def counting(*args, **kw):
        calls["n"] += 1
        return real(*args, **kw)

    monkeypatch.setattr(lbr, "lbr_deals", counting)
    longer = run_lbr(agent, game, 80, settings, seed=4, chunk=20, checkpoint=path)
    assert calls["n"] == 1 and np.array_equal(longer.values[:60], full.values)
    assert np.array_equal(longer.values, run_lbr(agent, game, 80, settings, seed=4, chunk=20).values)
    calls["n"] = 0
    shorter = run_lbr(agent, game, 40, settings, seed=4, chunk=20, checkpoint=path)
    assert calls["n"] == 0 and np.array_equal(shorter.values, full.values[:40])
    monkeypatch.setattr(lbr, "lbr_deals", real)
    with pytest.raises(GameError, match="checkpoint"):
        run_lbr(agent, game, 60, settings_from("FC", "1-2", num_rounds=2), seed=4, chunk=20, checkpoint=path)


def test_processes_and_ray_give_the_in_process_values():
    game = "leduc"
    agent = make_leduc_agent("random", game, seed=1)
    settings = settings_from("FCPA", "1-2", num_rounds=2)
    base = run_lbr(agent, game, 20, settings, seed=7, chunk=10)
    procs = run_lbr(agent, game, 20, settings, seed=7, chunk=10, processes=2)
    assert np.array_equal(base.values, procs.values)
    pytest.importorskip("ray")
    # a local Ray instance with one CPU (a cluster is the same call with its address)
    ray_run = run_lbr(agent, game, 20, settings, seed=7, chunk=10, processes=1, ray_address="local")
    assert np.array_equal(base.values, ray_run.values)


def test_flop_sampling_error_is_measured():
    from cfrkit.games.holdem.deals import deal_state

    view = poker_view("holdem")
    state, cards = deal_state(view.game, 0, 1)
    for a in (1, 1):  # limp, check: to the flop
        state.apply_action(a)
    for c in cards[4:7]:
        state.apply_action(c)
    rng = np.random.default_rng(0).random(1326)
    hand = view.hand_of(state, 0)
    exact, e0 = view.equity_vs_range(state, hand, rng)
    approx, se = view.equity_vs_range(state, hand, rng, samples=300, seed=1)
    assert e0 == 0.0 and 0 < se < 0.05
    assert abs(approx - exact) < 4 * se


class _NoInterface(PokerAgent):
    name = "opaque"

    def act(self, state):
        return 1


def test_agent_without_interface_gets_a_clear_error():
    with pytest.raises(AgentInterfaceError, match="'opaque' does not provide"):
        run_lbr(_NoInterface(), "holdem", 1, settings_from("FC", "3-4"))


def _river_spot():
    """HUNL, LBR (seat 0) holds AsAh on Kd Qc 7h 5s 4c after a checked-down hand, and is to act."""
    from cfrkit.cards import parse_cards

    view = poker_view("holdem")
    state = view.game.new_initial_state()
    hole0, hole1, board = parse_cards("AsAh"), parse_cards("3d2c"), parse_cards("KdQc7h5s4c")
    for c in hole0 + hole1:
        state.apply_action(c)
    state.apply_action(1)  # small blind calls
    state.apply_action(1)  # big blind checks
    for street in (board[:3], board[3:4], board[4:]):
        for c in street:
            state.apply_action(c)
        if len(state.board) < 5:
            state.apply_action(1)
            state.apply_action(1)
    assert state.current_player() == 0 and len(state.board) == 5
    return view, state


def test_lbr_decision_values_on_a_known_river():
    from cfrkit.cards.hands import pair_index_of
    from cfrkit.poker.agent import CheckedAgent
    from cfrkit.evaluation.lbr import lbr_decision
    from cfrkit.games.holdem.game import raise_action

    view, state = _river_spot()
    settings = settings_from("FCPA", "1-4")
    weak = np.zeros(1326)
    weak[pair_index_of("3d2c")] = 1.0
    # a calling station holding a beaten hand: wp = 1, fp = 0 -> all-in is worth the opponent's whole stack
    d = lbr_decision(view, CheckedAgent(AlwaysCallAgent(), view), state, 0, weak, settings)
    assert d.equity == 1.0 and d.action == raise_action(20000)
    assert d.utilities[1] == 200.0  # checking down wins the 200-chip pot
    assert d.utilities[raise_action(20000)] == 200.0 + 19900.0  # pot + the opponent's call of 19900
    assert d.utilities[raise_action(300)] == 200.0 + 200.0  # pot bet: raise to 300, called
    strong = np.zeros(1326)
    strong[pair_index_of("KsKh")] = 1.0
    # against a set that always folds, any bet takes the pot (200) and checking loses nothing
    d = lbr_decision(view, CheckedAgent(AlwaysFoldAgent(), view), state, 0, strong, settings)
    assert d.equity == 0.0 and d.utilities[1] == 0.0
    assert d.utilities[raise_action(300)] == 200.0 and d.action != 1
    # the same set calling: LBR checks (every bet loses it)
    d = lbr_decision(view, CheckedAgent(AlwaysCallAgent(), view), state, 0, strong, settings)
    assert d.action == 1 and d.utilities[raise_action(300)] == -200.0
