"""LBR against a blueprint (A^C), issue 27: the range LBR tracks is the agent's real play (sampled ``act``
against ``hand_strategy``, through bet translation and bucket lookup, on every street), and the
check/call prefix of the 3-4 settings.

The blueprint is a small one (400-chip stacks, E[HS] 169/6/6/6, 30 iterations: seconds to train);
``CFRKIT_LBR_BLUEPRINT=path.npz`` runs the same checks against another blueprint file.
"""
import os

import numpy as np
import pytest

from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.evaluation.lbr import LBRPlayer, settings_from
from cfrkit.poker.agent import CheckedAgent
from cfrkit.poker.match import MatchObserver, play_match
from cfrkit.poker.view import poker_view

SMALL_GAME = "holdem(stacks=2000;2000)"


@pytest.fixture(scope="module")
def blueprint(tmp_path_factory):
    path = os.environ.get("CFRKIT_LBR_BLUEPRINT")
    if path:
        return path
    from cfrkit.solvers.blueprint.betting_tree import build_betting_tree
    from cfrkit.solvers.blueprint.trainer import BlueprintTrainer

    tr = BlueprintTrainer(SMALL_GAME, "0.5+1", 2, abstraction="ehs:169,6,6,6", seed=1,
                          tree=build_betting_tree(SMALL_GAME, "0.5+1", 2))
    tr.iterate(20)
    out = str(tmp_path_factory.mktemp("bp") / "bp.npz")
    tr.save(out)
    return out


class _Audit(MatchObserver):
    """At each of the agent's decisions: its ``act`` sampled ``n`` times against its ``hand_strategy`` row for
    the hand it holds, and after its action LBR's range against the prior times that action's column."""

    def __init__(self, agent, lbr, n):
        self.agent, self.lbr, self.n = agent, lbr, n
        self.rounds = set()
        self.worst = 0.0
        self.checked = 0
        self.translated = 0

    def decision(self, hand, state, seat):
        if seat == self.lbr.seat:
            return
        view = self.lbr.view
        hs = self.agent.hand_strategy(state)
        row = hs.probs[view.hand_of(state, seat)]
        counts = {}
        for _ in range(self.n):
            a = self.agent.act(state)
            counts[a] = counts.get(a, 0) + 1
        assert set(counts) <= {int(a) for a, q in zip(hs.actions, row) if q > 0}, "act took an action of probability 0"
        for a, q in zip(hs.actions, row):
            z = abs(counts.get(int(a), 0) / self.n - q) / max(np.sqrt(q * (1 - q) / self.n), 1e-3)
            self.worst = max(self.worst, z)
        self.rounds.add(int(state.round))
        self.checked += 1
        self.translated += any(a > 1 for a in state.history()[4:])  # the agent faces or made a raise
        self.prior = self.lbr.range.copy()
        self.hs = hs

    def action(self, hand, state, seat, action):
        if seat == self.lbr.seat:
            return
        expect = self.prior * self.hs.probability_of(action)
        expect /= expect.sum()
        # the observers run in order: LBR's own update came first
        assert np.allclose(self.lbr.range, expect, atol=1e-12)


def test_lbr_range_is_the_agents_real_play(blueprint):
    """LBR with pot / all-in bets, an off-tree size (0.7 pots: translated) and fold/call only (hands that
    reach the river): at every agent decision the sampled ``act`` matches ``hand_strategy``."""
    agent = BlueprintAgent(blueprint, seed=5)
    view = poker_view(agent.game)
    checked = CheckedAgent(agent, view, float("inf"))
    audit = None
    for bets in ("FCPA", "0.7,A", "FC"):
        lbr = LBRPlayer(view, checked, settings_from(bets, "1-4"))
        if audit is None:
            audit = _Audit(agent, lbr, 200)
        audit.lbr = lbr
        play_match(view.game, [lbr, checked], 25, seed=3, duplicate=True, observers=[lbr, audit],
                   time_limit=float("inf"))
    assert audit.checked >= 20 and audit.translated >= 3
    assert audit.rounds == {0, 1, 2, 3}, f"agent decisions seen only in rounds {sorted(audit.rounds)}"
    assert audit.worst < 5.0  # 200 samples per decision: any real mismatch is tens of standard errors


def test_hypothetical_queries_do_not_change_the_agents_play(blueprint):
    """LBR asks the agent how it would answer bets LBR then does not make; those questions must leave the
    agent's strategy at the real states unchanged (no off-tree flag, no remembered translation)."""
    from cfrkit.evaluation.lbr import bet_actions
    from cfrkit.games.holdem.game import CALL

    probe = BlueprintAgent(blueprint, seed=11)
    quiet = BlueprintAgent(blueprint, seed=11)
    view = poker_view(probe.game)
    compared = 0
    for deal in range(6):
        state = view.game.new_initial_state()
        for c in view.deal(7, deal)[:4]:
            state.apply_action(c)
        probe.new_hand()
        quiet.new_hand()
        # seat 0 is LBR and always calls; before each call it asks about its pot / all-in bets
        while not state.is_terminal() and len(state.board) < 5:
            if state.is_chance_node():
                state.apply_action(view.deal(7, deal)[4 + len(state.board)])
                continue
            if state.current_player() == 0:
                for a in bet_actions(view, state, (0.7, 1.0, float("inf"))):
                    child = state.clone()
                    child.apply_action(a)
                    if not child.is_terminal() and child.current_player() == 1:
                        probe.hand_action_probability(child, 0)
                state.apply_action(CALL)
                continue
            a = probe.hand_strategy(state)
            b = quiet.hand_strategy(state)
            assert np.array_equal(a.actions, b.actions) and np.allclose(a.probs, b.probs)
            compared += 1
            state.apply_action(CALL)
    assert compared >= 6


def test_check_call_prefix_never_folds_or_raises(blueprint):
    """In the rounds LBR does not think in (FCPA/3-4: preflop and flop) it checks or calls whatever it faces,
    as Lisy and Bowling's LBR does; from the turn on it may fold and bet."""
    agent = BlueprintAgent(blueprint, seed=2)
    view = poker_view(agent.game)
    checked = CheckedAgent(agent, view, float("inf"))
    lbr = LBRPlayer(view, checked, settings_from("FCPA", "3-4"))
    seen = {0: set(), 1: set(), 2: set(), 3: set()}

    class Log(MatchObserver):
        def action(self, hand, state, seat, action):
            if seat == lbr.seat:
                seen[int(state.round)].add(int(action))

    play_match(view.game, [lbr, checked], 30, seed=1, duplicate=True, observers=[lbr, Log()], time_limit=float("inf"))
    assert seen[0] == {1} and seen[1] <= {1}
    assert seen[2] | seen[3] - {1}, "LBR never bet or folded on the turn or river"


# ---------------------------------------------------------------------------------------------- exact on the river
class _RiverCaller:
    """Checks when checked to; facing a bet folds with probability ``fold[h]`` and calls otherwise."""

    name = "river-caller"

    def __init__(self, fold):
        self.fold = np.asarray(fold, dtype=np.float64)

    def new_hand(self):
        pass

    def hand_strategy(self, state):
        from cfrkit.poker.agent import HandStrategy, board_live

        live = board_live(state)
        if state.call_amount(state.current_player()) > 0:
            return HandStrategy(np.array([0, 1]), np.stack([self.fold * live, (1 - self.fold) * live], 1))
        return HandStrategy(np.array([1]), live[:, None])

    def act(self, state):
        return 1


def _river_solver_values(tree, agent_range, fold, lbr_choice=None):
    """(best-response chips of seat 0 per hand, seat 0's chips per hand playing ``lbr_choice`` (root action
    per hand) or None): cfvs of the range solver divided by the agent's compatible mass."""
    from cfrkit.cards.hands import blocked_pairs
    from cfrkit.solvers.public.tree import RangeSolver

    board = list(tree.nodes[0].board)
    live = (~blocked_pairs(board)).astype(float)
    ranges = np.stack([live, agent_range * live])[None]
    strategies = {}
    for n in tree.nodes:
        if n.kind != "decision":
            continue
        s = np.zeros((len(n.actions), 1, 1326))  # (actions, batch, hands)
        if n.player == 1:
            if 0 in n.actions:  # facing a bet: fold or call
                s[n.actions.index(0), 0] = fold
                s[n.actions.index(1), 0] = 1 - fold
            else:
                s[n.actions.index(1), 0] = 1.0
        else:
            s[n.actions.index(1), 0] = 1.0
            if n.index == 0 and lbr_choice is not None:
                s[:] = 0.0
                for h, a in enumerate(lbr_choice):
                    s[n.actions.index(a), 0, h] = 1.0
        strategies[n.index] = s
    solver = RangeSolver(tree, ranges=ranges)
    mass = np.array([agent_range[~blocked_pairs(board + list(_pair(h)))].sum() if live[h] else 0.0
                     for h in range(1326)])
    with np.errstate(invalid="ignore", divide="ignore"):
        br = np.asarray(solver.best_response_values(0, strategies, root_ranges=ranges))[0] / mass
        played = None
        if lbr_choice is not None:
            vals, _ = solver.node_values(strategies, root_ranges=ranges)
            played = np.asarray(vals[0][0])[0] / mass
    return br, played


def _pair(h):
    from cfrkit.cards.hands import HOLE_PAIRS

    return [int(c) for c in HOLE_PAIRS[h]]


@pytest.mark.parametrize("hand_dependent,calling_range", [(False, False), (True, False), (True, True)])
def test_river_lbr_against_call_or_fold_agents_vs_range_solver_best_response(hand_dependent, calling_range):
    """River, LBR first to act with check / pot / all-in, the agent only checks, calls or folds.  With a fold
    probability that does not depend on the agent's hand LBR's one-step look-ahead is exact: its value for
    every hand equals the range solver's best response (same actions); with hand-dependent folding LBR's
    equity is the whole range's, not the calling range's, so it can only be below the best response, unless it
    values calls with the calling range's equity (``calling_range=True``): then it is exact again."""
    from cfrkit.cards.hands import blocked_pairs
    from cfrkit.evaluation.lbr import lbr_decision
    from cfrkit.games import load
    from cfrkit.games.holdem.matchstate import state_from_matchstate
    from cfrkit.solvers.public.tree import build_public_tree

    game = load("holdem")
    view = poker_view(game)
    state = state_from_matchstate(game, "MATCHSTATE:0:0:cc/cc/cc/:AsAh|/KdQc7h/5s/4c")
    tree = build_public_tree(game, state, bet_sizing={1: [1.0]})
    assert tree.nodes[0].player == 0 and set(tree.nodes[0].actions) == {1, 302, 20002}
    gen = np.random.default_rng(4)
    board = list(state.board)
    live = ~blocked_pairs(board)
    agent_range = gen.random(1326) * live
    if hand_dependent:  # like a real agent: weak hands fold, strong hands call
        from cfrkit.cards.equity import board_strengths

        strength = board_strengths(board).astype(float)
        fold = np.clip(1.0 - (strength - strength[live].min()) / np.ptp(strength[live]), 0, 1) * live
    else:
        fold = np.full(1326, 0.35)
    agent = CheckedAgent(_RiverCaller(fold), view, float("inf"))
    settings = settings_from("FCPA", "1-4", calling_range=calling_range)
    hands = gen.choice(np.flatnonzero(live), 40, replace=False)
    choice = np.ones(1326, dtype=np.int64)
    estimate = {}
    for h in hands:
        d = lbr_decision(view, agent, view.with_hand(state, 0, int(h)), 0, agent_range, settings)
        choice[h] = d.action
        estimate[h] = d.utilities[d.action] - 100.0  # LBR counts from its 100 chips in; the solver in net chips
    br, played = _river_solver_values(tree, agent_range, fold, choice)
    assert len(set(choice[hands].tolist())) >= 2  # some hands bet, some check
    for h in hands:
        assert played[h] <= br[h] + 1e-9
        if calling_range or not hand_dependent:
            assert estimate[h] == pytest.approx(br[h], abs=1e-6)
            assert played[h] == pytest.approx(br[h], abs=1e-6)
    if hand_dependent and not calling_range:
        assert any(played[h] < br[h] - 1.0 for h in hands)  # the bound is not tight here
