"""The poker play layer: one match runner (seat schedule, observers, estimates) and one agent registry."""
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from cfrkit.agents.leduc_agents import make_leduc_agent
from cfrkit.agents.poker import AlwaysCallAgent, FixedRangeRaiser, RandomAgent
from cfrkit.evaluation.headtohead import head_to_head
from cfrkit.evaluation.lbr import LBRSettings, lbr_deals
from cfrkit.games.registry import load
from cfrkit.poker import (MatchObserver, RegistryError, agent_names, make_agent, play_hand, play_match,
                          register_agent)
from cfrkit.poker.registry import _ALIASES, _ENTRIES

# Values the three old hand loops gave (recorded on main at 4a0fe5e, before they were replaced by the runner):
# evaluation.headtohead.play_match, platform.local.run_local_match, agents.blueprint.duplicate_match, lbr_deals.
OLD_H2H_HOLDEM = [50, -50, 50, -50, 50, -50, -100, -50, 7153, -50, -100, -50, -100, -50, -100, -50, -100, -50, -100,
                  -50, -100, -50, -100, -50]
# AIVAT of the same hands since random's decisions are known (its raise sizes split between representative sizes)
# and both agents' play is valued by the betting's exact expectation (evaluation.board_blind_values): every hand
# without an off-node raise of random scores its seat's exact value (293.09 / 362.25 mbb); the old loops'
# equity-valued numbers no longer apply to this pair.
H2H_HOLDEM_AIVAT = [293.087993, 362.25174] * 4 + [-728.935576, 362.25174] + [293.087993, 362.25174] * 7
OLD_H2H_LEDUC = [0, 0, 1, -1, 5, -3, 5, -7, 0, 0, 0, 0, 7, -5, 0, 0, -3, 1, 3, -5, 0, 0, 7, -3, 5, -5, -5, 5, -3, 7,
                 3, -5, -5, 3, 0, 0, -5, 7, 0, 0]
OLD_H2H_LEDUC_AIVAT = [1.5, -0.5, -0.25, -2.75, 3.75, -2.25, 3.25, -0.75, -1.5, -0.5, -0.5, -0.5, 5.25, -2.75, -0.5,
                       -0.5, -0.75, -0.75, -0.25, -2.25, 0.5, -1.5, 3.75, -0.75, 3.75, -2.75, -2.75, 3.75, -2.25, 5.25,
                       1.25, -2.75, -2.75, 1.25, -0.5, 0.5, -2.75, 5.25, 1.5, -0.5]
OLD_LOCAL_3P = [[-50, 50, 0], [-18664, 18714, -50], [13071, -12971, -100], [9096, -9096, 0], [-1202, 1252, -50],
                [-19446, 19546, -100], [-16446, 16446, 0], [-12612, 12662, -50], [0, -8100, 8100]]
OLD_DUPLICATE = (9130.625, 18947.479734799163)
OLD_LBR_LEDUC = [[-1, 3, 0], [1, 3, 0], [1, 0, 0], [3, -13, 0], [-9, 7, 0], [-3, 9, 0]]
THREE = "holdem(definition=holdem.nolimit.3p)"


class Recorder(MatchObserver):
    """Everything the runner shows an observer."""

    def __init__(self):
        self.events = []
        self.hands = []
        self.actions = {}
        self.decisions = 0

    def match_start(self, match):
        self.events.append(("start", match.hands))

    def hand_start(self, hand):
        self.actions[hand.number] = []

    def decision(self, hand, state, seat):
        assert state.current_player() == seat
        self.decisions += 1

    def action(self, hand, state, seat, action):
        assert state.is_legal(action) if hasattr(state, "is_legal") else action in state.legal_actions()
        self.actions[hand.number].append(action)

    def hand_end(self, hand):
        assert hand.state.is_terminal()
        self.hands.append((hand.number, hand.deal, tuple(hand.seat_of_player), tuple(hand.cards), list(hand.payoffs),
                           hand.state))

    def match_end(self, result):
        self.events.append(("end", result is not None))


@pytest.mark.parametrize("game, agents", [
    ("holdem", lambda: [RandomAgent(1), FixedRangeRaiser()]),
    (THREE, lambda: [RandomAgent(1), AlwaysCallAgent(), RandomAgent(2)]),
    ("leduc", lambda: [make_leduc_agent("random", "leduc", seed=1), make_leduc_agent("always-call", "leduc")]),
])
def test_chips_are_conserved_and_observers_see_every_hand_and_action(game, agents):
    rec = Recorder()
    res = play_match(game, agents(), 15, seed=4, duplicate=True, observers=[rec])
    n = res.num_agents
    assert res.payoffs.shape == (15 * n, n)
    assert np.allclose(res.payoffs.sum(axis=1), 0.0)  # zero-sum: what one agent wins the others lose
    assert rec.events == [("start", 15 * n), ("end", True)]
    assert [h[0] for h in rec.hands] == list(range(15 * n))
    for number, _, seats, _, payoffs, state in rec.hands:
        # the player actions observed are exactly the decisions of the final history
        g = state.game if hasattr(state, "game") else load(game)
        replay = g.new_initial_state()
        played = []
        for a in state.history():
            if not replay.is_chance_node():
                played.append(a)
            replay.apply_action(a)
        assert rec.actions[number] == played
        assert np.allclose(payoffs, res.payoffs[number])
        assert np.allclose([state.returns()[s] for s in seats], payoffs)
    assert rec.decisions == sum(len(v) for v in rec.actions.values())


@pytest.mark.parametrize("game, n", [("holdem", 2), (THREE, 3)])
def test_duplicate_seating_plays_each_deal_in_every_rotation_on_the_same_cards(game, n):
    rec = Recorder()
    agents = [RandomAgent(k) for k in range(n)]
    play_match(game, agents, 6, seed=9, duplicate=True, observers=[rec], first_deal=3)
    by_deal = {}
    for _, deal, seats, cards, _, _ in rec.hands:
        by_deal.setdefault(deal, []).append((seats, cards))
    assert sorted(by_deal) == list(range(3, 9))
    for deal, plays in by_deal.items():
        assert len(plays) == n and len({c for _, c in plays}) == 1  # the same cards for every rotation
        assert sorted(s for s, _ in plays) == sorted(tuple((j + r) % n for j in range(n)) for r in range(n))
    # heads-up: the second hand of a deal is the mirror of the first (seats swapped)
    if n == 2:
        assert all(plays[0][0] == (0, 1) and plays[1][0] == (1, 0) for plays in by_deal.values())
    plain = Recorder()
    play_match(game, agents, 5, seed=9, duplicate=False, observers=[plain])
    assert [h[1] for h in plain.hands] == list(range(5))
    assert [h[2][0] for h in plain.hands] == [i % n for i in range(5)]


def test_the_runner_gives_what_the_old_loops_gave():
    res = head_to_head("holdem", [make_agent("fixed-range-raiser", seed=1), make_agent("random", seed=2)], 12, seed=3,
                       duplicate=True, aivat=True)
    assert res.hand_values.tolist() == OLD_H2H_HOLDEM
    assert np.allclose(res.aivat_values, H2H_HOLDEM_AIVAT, atol=1e-5)
    g = load("leduc")
    res = head_to_head(g, [make_agent("random", game=g, seed=5), make_agent("always-call", game=g)], 20, seed=6,
                       duplicate=True, aivat=True)
    assert res.hand_values.tolist() == OLD_H2H_LEDUC and np.allclose(res.aivat_values, OLD_H2H_LEDUC_AIVAT)
    res = play_match(THREE, [make_agent("random", seed=1), make_agent("always-call"), make_agent("fixed-range-raiser")],
                     3, seed=2, duplicate=True)
    assert res.payoffs.tolist() == OLD_LOCAL_3P
    res = play_match("holdem", [make_agent("fixed-range-raiser"), make_agent("random", seed=9)], 8, seed=10,
                     first_deal=2)
    assert np.allclose((res.duplicate_estimate.mean, res.duplicate_estimate.ci95), OLD_DUPLICATE)
    values = lbr_deals(make_agent("random", game="leduc", seed=11), "leduc", 12, 0, 6,
                       LBRSettings(bets=(1.0,), rounds=(0, 1)))
    assert values.tolist() == OLD_LBR_LEDUC


def test_estimates_follow_from_the_payoffs():
    res = play_match("holdem", [RandomAgent(3), AlwaysCallAgent()], 10, seed=1)
    mbb = res.hand_values * 1000.0 / res.big_blind
    assert np.isclose(res.plain.mean, mbb.mean()) and res.plain.n == 20
    pairs = mbb.reshape(-1, 2).mean(axis=1)
    assert np.isclose(res.duplicate_estimate.mean, pairs.mean()) and res.duplicate_estimate.n == 10
    assert np.isclose(res.duplicate_estimate.ci95, 1.96 * pairs.std(ddof=1) / np.sqrt(10))
    assert res.estimate is not None and "duplicate" in res.summary()
    assert json.loads(res.to_json())["hands_played"] == 20
    with pytest.raises(Exception, match="needs 2 agents"):
        play_match("holdem", [RandomAgent(1)], 3)
    with pytest.raises(Exception, match="hands must be positive"):
        play_match("holdem", [RandomAgent(1), RandomAgent(2)], 0)


def test_a_runner_match_stored_by_the_platform_observer_reads_back():
    from cfrkit.platform.results import agent_results
    from cfrkit.platform.storage import Store, StoreObserver

    store = Store(":memory:")
    obs = StoreObserver(store, "local1", batch=4)
    res = play_match(THREE, [RandomAgent(1), AlwaysCallAgent(), FixedRangeRaiser()], 5, seed=3, observers=[obs])
    hands = store.hands("local1")
    assert len(hands) == res.hands_played == 15
    assert [h["seats"] for h in hands] == res.seats.tolist()
    assert np.allclose([h["returns"] for h in hands], res.payoffs)
    assert np.allclose(store.totals("local1"), res.payoffs.sum(axis=0))
    assert store.match("local1")["status"] == "finished"
    by_name = {r.name: r for r in agent_results(store)}
    assert set(by_name) == set(res.agents) and by_name["always-call"].hands == 15


def test_play_hand_plays_one_hand_on_given_cards():
    from cfrkit.games.holdem.deals import deal_for_hand

    g = load("holdem")
    cards = deal_for_hand(g, 0, 0)
    a = play_hand(g, [AlwaysCallAgent(), AlwaysCallAgent()], cards)
    b = play_hand(g, [AlwaysCallAgent(), AlwaysCallAgent()], cards)
    assert a.is_terminal() and a.history() == b.history() and sum(a.returns()) == 0
    with pytest.raises(Exception, match="ran out of cards"):
        play_hand(g, [AlwaysCallAgent(), AlwaysCallAgent()], cards[:3])


def test_the_step_wise_hand_driver_is_the_hand_play_hand_plays():
    """Driven step by step (as the platform server does, trusted or checked), a hand ends in the state
    play_hand reaches on the same cards; an illegal action and an early finish are refused."""
    from cfrkit.games.holdem.deals import deal_for_hand
    from cfrkit.poker import HandDriver

    g = load(THREE)
    for deal in range(4):
        cards = deal_for_hand(g, 7, deal)
        agents = [RandomAgent(seed=deal), FixedRangeRaiser(), AlwaysCallAgent()]
        ref = play_hand(g, agents, cards)
        for trusted in (False, True):
            agents = [RandomAgent(seed=deal), FixedRangeRaiser(), AlwaysCallAgent()]
            driver = HandDriver(g, cards, resets=agents, trusted=trusted)
            while (seat := driver.next_decision()) is not None:
                assert seat == driver.state.current_player()
                driver.apply(seat, agents[seat].act(driver.state))
            end = driver.finish()
            assert end.history() == ref.history() and end.returns() == ref.returns() and sum(end.returns()) == 0
    driver = HandDriver(g, deal_for_hand(g, 7, 0))
    seat = driver.next_decision()
    with pytest.raises(Exception, match="not over"):
        driver.finish()
    with pytest.raises(Exception, match="not legal"):
        driver.apply(seat, 10 ** 9)


# ---------------------------------------------------------------------- registry
def _policy_file(tmp_path):
    from cfrkit.solvers import CFRSolver

    path = str(tmp_path / "leduc.npz")
    CFRSolver("leduc", algorithm="cfr+").run(3).average_policy().save(path)
    return path


SMALL = "holdem(stacks=400;400)"


@pytest.fixture(scope="module")
def tiny_blueprint(tmp_path_factory):
    from cfrkit.solvers.blueprint.trainer import BlueprintTrainer

    path = str(tmp_path_factory.mktemp("bp") / "bp.npz")
    tr = BlueprintTrainer(SMALL, "0.5+1", 1, abstraction="ehs:169,2,2,2", seed=1)
    tr.iterate(1)
    tr.save(path)
    return tr, path


def test_the_registry_builds_every_registered_name(tmp_path, tiny_blueprint):
    small, bp = SMALL, tiny_blueprint[1]
    specs = {"random": ("random", "holdem"), "always-call": ("always-call", "leduc"),
             "always-fold": ("always-fold", "holdem"), "fixed-range-raiser": ("fixed-range-raiser:TT+", "holdem"),
             "rule-based": ("ar", "holdem"), "policy": (f"policy:{_policy_file(tmp_path)}", "leduc"),
             "blueprint": (f"blueprint:{bp}", small), "deepstack-holdem": ("ds-holdem:iterations=5", "holdem"),
             "deepstack": ("deepstack", "leduc"), "cfr": ("cfr:2", "leduc")}
    assert set(specs) == set(agent_names())
    for name, (spec, game) in specs.items():
        agent = make_agent(spec, game=game, seed=1)
        assert hasattr(agent, "act"), name
    assert make_agent("raiser", hand_range="AA").classes == {"AA"}
    assert make_agent("deepstack", game="leduc", iterations=7).options["iterations"] == 7
    # a built agent plays its game
    g = load("leduc")
    res = play_match(g, [make_agent("cfr:2", game=g, seed=1), make_agent(specs["policy"][0], game=g, seed=2)], 3)
    assert res.hands_played == 6


def test_blueprint_matches_run_on_the_runner(tiny_blueprint):
    from cfrkit.agents.blueprint import blueprint_evaluator, play_blueprint

    trainer, path = tiny_blueprint
    res, agent = play_blueprint(path, "always-call", 4, seed=2)
    assert res.hands_played == 8 and np.allclose(res.payoffs.sum(axis=1), 0.0) and res.agents[1] == "always-call"
    again, _ = play_blueprint(path, "always-call", 4, seed=2)
    assert res.payoffs.tolist() == again.payoffs.tolist()  # seeded: the same match
    report = blueprint_evaluator(3, ["always-call", "random"], seed=1)(trainer)
    assert set(report) == {"always-call", "random"} and report["random"]["hands"] == 6
    with pytest.raises(RegistryError, match="unknown agent"):
        blueprint_evaluator(3, ["nobody"])


@pytest.mark.parametrize("spec, options, message", [
    ("nobody", {}, "unknown agent 'nobody'; known: random, always-call"),
    ("random", {"hand_range": "AA"}, "agent 'random' takes no option 'hand_range'"),
    ("fixed-range-raiser", {"fraction": -1}, "pot fraction"),
    ("policy", {}, "needs a file"),
    ("blueprint:/nonexistent/bp.npz", {}, "blueprint"),
    ("cfr:x", {"game": "leduc"}, "integer N"),
    ("rule-based", {"game": "leduc"}, "plays hold'em"),
    ("", {}, "non-empty string"),
])
def test_the_registry_refuses_bad_specs_in_one_line(spec, options, message):
    with pytest.raises(RegistryError, match=message) as info:
        make_agent(spec, **options)
    assert "\n" not in str(info.value)


def test_register_agent_takes_entry_points_and_refuses_clashes():
    register_agent("test-caller", "cfrkit.agents.builders:always_call", help="a test entry", aliases=("tc",))
    try:
        assert make_agent("tc").name == "always-call" and "test-caller" in agent_names()
        with pytest.raises(RegistryError, match="already registered"):
            register_agent("test-caller", "cfrkit.agents.builders:random_agent")
        with pytest.raises(RegistryError, match="module:attribute"):
            register_agent("other", "no-colon")
    finally:
        _ENTRIES.pop("test-caller", None)
        _ALIASES.pop("tc", None)
    register_agent("broken", "cfrkit.no_such_module:build")
    try:
        with pytest.raises(RegistryError, match="cannot load its entry point"):
            make_agent("broken")
    finally:
        _ENTRIES.pop("broken", None)


def test_the_play_layer_imports_nothing_above_it():
    code = ("import sys, cfrkit.poker\n"
            "print([m for m in sys.modules if m.split('.')[:2] in (['cfrkit', 'agents'], ['cfrkit', 'evaluation'], "
            "['cfrkit', 'platform'], ['cfrkit', 'cli']) or m == 'torch'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout


def test_old_names_still_work_and_warn():
    from cfrkit.agents import blueprint, poker
    from cfrkit.evaluation import headtohead, poker_view
    from cfrkit.platform import local

    with pytest.warns(DeprecationWarning, match="cfrkit.poker.make_agent"):
        assert poker.make_agent("call").name == "always-call"
    with pytest.warns(DeprecationWarning, match="head_to_head"):
        old = headtohead.play_match([AlwaysCallAgent(), RandomAgent(1)], "holdem", 3, seed=1)
    new = head_to_head("holdem", [AlwaysCallAgent(), RandomAgent(1)], 3, seed=1)
    assert old.hand_values.tolist() == new.hand_values.tolist()
    with pytest.warns(DeprecationWarning):
        res = local.run_local_match(load("holdem"), [AlwaysCallAgent(), RandomAgent(1)], 5, seed=1)
    assert res.returns.shape == (6, 2)  # rounded up to whole rotations
    with pytest.warns(DeprecationWarning):
        dup = blueprint.duplicate_match(load("holdem"), AlwaysCallAgent, lambda: RandomAgent(1), 3, seed=1)
    assert dup.as_dict()["hands"] == 6
    with pytest.warns(DeprecationWarning):
        assert poker_view.poker_view("leduc").num_hands == 6
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from cfrkit.agents.poker import HandStrategy, PokerAgent  # noqa: F401  (class re-exports: no warning)
