"""A^R's steps of the one-board street lookahead (``BlueprintValueFunction._street_value``) by the compiled walk's
rules (``street_lookahead.rules_action`` on the rules' arrays kept per betting line) instead of ``act``: the same
action at every postflop decision, and the same values bit for bit (issue 27, match speed part 7)."""
from types import SimpleNamespace

import numpy as np
import pytest

import cfrkit.agents.blueprint_values as bv
from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.agents.rule_based import RuleBasedAgent
from cfrkit.games import load
from cfrkit.poker.view import poker_view
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy
from holdem_play import postflop_decisions

GAME = "holdem(stacks=400;400)"

pytestmark = pytest.mark.skipif(bv._street_kernel is None, reason="kernels not rebuilt (street_lookahead)")


@pytest.fixture(scope="module")
def value_function(tiny_blueprint):
    owner = BlueprintAgent(BlueprintStrategy.load(tiny_blueprint(GAME)), seed=3)
    return owner, owner.aivat_value_function(poker_view(load(GAME)), boards=2)


def _cbet_spots(rng, count: int):
    """Flop decisions where the big blind raised preflop last and acts first: A^R's c-bet rule applies."""
    game = load(GAME)
    for _ in range(count):
        state = game.new_initial_state()
        cards = [int(c) for c in rng.permutation(52)]
        for _ in range(4):
            state.apply_action(cards.pop())
        state.apply_action(bv.CALL)  # the small blind calls, the big blind raises, the small blind calls
        lo, hi = state.raise_range(state.current_player())
        state.apply_action(bv.raise_action(int(rng.integers(lo, min(hi, 3 * lo) + 1))))
        state.apply_action(bv.CALL)
        while state.is_chance_node():
            state.apply_action(cards.pop())
        yield state


def test_rules_step_is_act(value_function):
    _, vf = value_function
    agent = RuleBasedAgent()
    pol = bv._ActPolicy(agent)
    rng = np.random.default_rng(23)
    checked = cbet_asked = 0
    states = [s.clone() for s in postflop_decisions(GAME, rng, 200)] + list(_cbet_spots(rng, 60))
    for state in states:
        key = bv._betting_key(state)
        for _ in range(2):  # the second time from the kept rules of the line
            acts, probs = vf._rules_step(pol, state, key)
            assert acts.tolist() == [agent.act(state)] and probs.tolist() == [1.0], state.history()
        par, racts = vf._shared.rules_lines[(key, len(state.board))][1]
        hs, ehs, outs, wet = agent.features_on_boards(state, [state.board])
        cbet_asked += bv._street_kernel.rules_action(par, racts, hs[0], ehs[0], int(outs[0]), bool(wet[0])) == -2
        checked += 1
    assert checked > 150 and cbet_asked >= 3, (checked, cbet_asked)
    # a broken threshold (the value bet's strength) changes some actions: the comparison above can fail
    for hit in vf._shared.rules_lines.values():
        if hit[1] is not None:
            hit[1][0][bv._street_kernel.R_VALUE] += 0.15
    wrong = sum(vf._rules_step(pol, s, bv._betting_key(s))[0][0] != agent.act(s) for s in states)
    vf._shared.rules_lines.clear()
    assert wrong > 0


def test_rules_action_refuses_wrong_shapes():
    with pytest.raises(ValueError, match="12 rules and 6 actions"):
        bv._street_kernel.rules_action(np.zeros(11), np.zeros(6, np.int64), 0.5, 0.5, 0, False)


def test_one_board_walk_values_are_unchanged(value_function):
    """``value`` at A^R's and the owner's postflop decisions (the one-board walk plays A^R's steps by the rules) equals
    ``value`` with ``act`` asked at those steps, bit for bit, in both seatings."""
    owner, vf = value_function
    agent = RuleBasedAgent()
    rng = np.random.default_rng(31)
    compared = 0
    real = vf._rules_step
    for hand, state in enumerate(s.clone() for s in postflop_decisions(GAME, rng, 40)):
        seats = [owner, agent] if hand % 2 == 0 else [agent, owner]
        vf.hand_start(SimpleNamespace(seat_agents=seats))
        vf._lines = {}
        fast = vf.value(state)
        vf._lines = {}
        vf._rules_step = lambda pol, s, key: pol(s)  # the step as before: the agent's act
        try:
            slow = vf.value(state)
        finally:
            del vf._rules_step
        assert vf._rules_step == real
        assert fast == slow, state.history()
        compared += 1
    assert compared > 40 and vf._shared.rules_lines  # A^R's lines were walked by the rules


def test_betting_key_is_the_betting_actions_of_the_history():
    """``_betting_key``: the history's action ids without the chance cards (a raise its raise-to id), in no-limit and
    limit, checked against the history and each round's action list on random hands."""
    import random

    from cfrkit.games.holdem.game import CALL, FOLD, RAISE, raise_action
    from cfrkit.games.registry import load

    rng = random.Random(3)
    for name in ("holdem", "holdem(definition=holdem.limit.2p.reverse_blinds)"):
        game = load(name)
        limit = game.definition.is_limit
        assert limit == ("limit" in name and "nolimit" not in name)
        for _ in range(60):
            s = game.new_initial_state()
            while not s.is_terminal():
                if s.is_chance_node():
                    s.apply_action(rng.choice([c for c, _ in s.chance_outcomes()]))
                else:
                    s.apply_action(rng.choice(s.legal_actions()))
                want = tuple(FOLD if code == "f" else CALL if code == "c" else (RAISE if limit else raise_action(t))
                             for rnd in s.actions for _, code, t in rnd)
                got = bv._betting_key(s)
                assert got == want and all(type(a) is int for a in got)
                dealt = len(s.board) + sum(len(h) for h in s.hole)
                assert len(got) == len(s.history()) - dealt
