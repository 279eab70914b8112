"""The compact action view (``HoldemState.action_view``) and the lazy id list (``LegalActions``)."""
import random

import numpy as np
import pytest

from cfrkit.games import load
from cfrkit.games.base import GameError, IllegalActionError
from cfrkit.games.holdem import CALL, FOLD, RAISE, HoldemGame, raise_action
from cfrkit.games.holdem.actions import ActionView, LegalActions


def _deal_hole(state):
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    return state


def test_huge_stacks_do_not_enumerate_raise_sizes():
    game = load("holdem(stacks=1000000000;1000000000)")
    s = _deal_hole(game.new_initial_state())
    legal = s.legal_actions()
    assert isinstance(legal, LegalActions)
    assert len(legal) == 2 + (1_000_000_000 - 200 + 1)
    assert legal[0] == FOLD and legal[1] == CALL and legal[2] == raise_action(200)
    assert legal[-1] == raise_action(1_000_000_000)
    assert raise_action(123_456_789) in legal and raise_action(199) not in legal
    assert legal.index(raise_action(1_000_000_000)) == len(legal) - 1
    view = s.action_view()
    assert (view.raise_min, view.raise_max, view.call_amount) == (200, 1_000_000_000, 50)
    s.apply_action(raise_action(1_000_000_000))  # all-in: the other player may only fold or call
    assert s.legal_actions() == [FOLD, CALL]
    s.apply_action(CALL)
    assert s.is_chance_node()


def test_legal_actions_behave_like_the_list():
    x = LegalActions((0, 1), 302, 310)
    ref = [0, 1] + list(range(302, 311))
    assert x == ref and ref == x and x == tuple(ref) and not (x != ref)
    assert x != ref[:-1] and x != ref + [311] and x != [0, 1] + list(range(303, 312))
    assert list(x) == ref and list(reversed(x)) == ref[::-1] and len(x) == len(ref)
    assert [x[i] for i in range(-len(ref), len(ref))] == ref + ref
    assert x[2:5] == ref[2:5] and x[::3] == ref[::3]
    assert all(a in x for a in ref) and 2 not in x and 301 not in x and 311 not in x and 1.5 not in x
    assert [x.index(a) for a in ref] == list(range(len(ref)))
    assert np.array_equal(np.asarray(x), np.array(ref)) and np.asarray(x).dtype == np.int64
    with pytest.raises(IndexError):
        x[len(ref)]
    with pytest.raises(ValueError):
        x.index(2)
    assert LegalActions((1,)) == [1] and len(LegalActions()) == 0 and list(LegalActions()) == []
    assert x + [5] == ref + [5]


def test_action_view_matches_the_id_list_on_random_hands():
    rng = random.Random(5)
    for name in ("holdem.nolimit.2p.reverse_blinds", "holdem.nolimit.6p", "holdem.limit.3p"):
        game = HoldemGame(name)
        for _ in range(40):
            s = game.new_initial_state()
            while not s.is_terminal():
                if s.is_chance_node():
                    outcomes = s.chance_outcomes()
                    s.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                    continue
                view = s.action_view()
                legal = s.legal_actions()
                assert view.legal_actions() == legal and view.num_actions() == len(legal)
                assert view.player == s.current_player()
                assert view.can_fold == s.is_legal(FOLD) and view.call_amount == s.call_amount()
                rr = s.raise_range()
                assert (view.raise_min, view.raise_max) == ((None, None) if rr is None else rr)
                assert view.pot == s.pot() and view.to_match == s.max_spent()
                assert view.spent + view.remaining == game.definition.stack[view.player]
                mask = s.legal_actions_mask()
                assert np.array_equal(np.flatnonzero(mask), np.asarray(legal))
                for a in legal[:3] + legal[-2:] + [legal[-1] + 1]:
                    assert (a in view) == s.is_legal(a) == (a in legal)
                kind = rng.choice(view.kinds)
                if kind == RAISE:
                    action = view.action(RAISE, rng.randint(view.raise_min, view.raise_max))
                    assert view.kind_of(action) == RAISE
                else:
                    action = view.action(kind)
                s.apply_action(action)


def test_action_view_helpers_and_errors():
    s = _deal_hole(load("holdem").new_initial_state())
    view = s.action_view()
    assert isinstance(view, ActionView)
    assert view.kinds == (FOLD, CALL, RAISE) and not view.is_check
    assert view.describe() == "fold, call 50, raise to 200..20000"
    # 1 pot after calling: to_match 100 + (150 + 50) = 300
    assert view.pot_raise(1.0) == raise_action(300)
    assert view.pot_raise(1000.0) == raise_action(20000) and view.pot_raise(0.01) == raise_action(200)
    assert view.clamp_raise(5) == 200 and view.raise_total(raise_action(450)) == 450
    with pytest.raises(IllegalActionError):
        view.raise_to(199)
    with pytest.raises(IllegalActionError):
        view.action(RAISE)  # no-limit raise without an amount
    s.apply_action(CALL)
    view = s.action_view()
    assert view.kinds == (CALL, RAISE) and view.is_check and FOLD not in view
    with pytest.raises(IllegalActionError):
        view.action(FOLD)
    with pytest.raises(GameError):
        load("holdem").new_initial_state().action_view()  # chance node


def test_limit_view():
    s = _deal_hole(load("holdem(definition=holdem.limit.2p.reverse_blinds)").new_initial_state())
    view = s.action_view()
    assert view.is_limit and view.raise_min == view.raise_max == 20
    assert view.action(RAISE) == RAISE and view.pot_raise(3.0) == RAISE
    assert s.legal_actions() == [FOLD, CALL, RAISE]


def test_chance_outcomes_are_validated_without_listing_them():
    game = load("holdem(definition=leduc.limit.2p)")  # a 6-card deck: ids 0, 1, 4, 5, 8, 9
    s = game.new_initial_state()
    with pytest.raises(IllegalActionError, match="not legal for chance"):
        s.apply_action(2)  # not in this deck
    s.apply_action(4)
    with pytest.raises(IllegalActionError, match="not legal for chance"):
        s.apply_action(4)  # already dealt
    assert [c for c, _ in s.chance_outcomes()] == [0, 1, 5, 8, 9]
    assert s.history() == [4]


def test_huge_stacks_give_clear_errors_in_tabular_tools():
    from cfrkit.solvers.tabular.compiled import TreeTooLargeError, compile_game
    from cfrkit.solvers.tabular.mccfr import ExternalSamplingMCCFR

    name = "holdem(stacks=1000000000;1000000000)"
    with pytest.raises(TreeTooLargeError):
        compile_game(name)
    with pytest.raises(GameError, match="legal actions at one decision"):
        ExternalSamplingMCCFR(name, seed=1).run(1, progress=False)
    s = _deal_hole(load(name).new_initial_state())
    with pytest.raises(GameError, match="too large"):
        s.legal_actions_mask()
