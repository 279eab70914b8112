"""Test helpers: drive a hold'em state through a scripted hand, walk random hands, a board-reading mixed agent
(not a test module)."""
import numpy as np

from cfrkit.agents.blueprint_values import CALL, FOLD
from cfrkit.agents.poker import FixedRangeRaiser, RandomAgent
from cfrkit.agents.rule_based import RuleBasedAgent
from cfrkit.games import load


def play(state, *actions, board=()):
    """Apply ``actions`` in order; the cards of ``board`` are dealt wherever the state is at a chance node
    (before an action, and after the last one while cards remain)."""
    cards = list(board)
    for a in actions:
        while state.is_chance_node():
            state.apply_action(cards.pop(0))
        state.apply_action(a)
    while state.is_chance_node() and cards:
        state.apply_action(cards.pop(0))


def sample_boards(state, cards, rng, count):
    """``count`` boards completing ``state``'s street at a chance node: its board plus cards drawn by ``rng``
    from those not on the board, in either hand or among ``cards[-3:]`` (the run-out the hand will deal)."""
    dead = set(state.board) | set(state.hole[0]) | set(state.hole[1]) | set(cards[-3:])
    rest = [c for c in range(52) if c not in dead]
    need = state.cards_needed()
    return [list(state.board) + [int(c) for c in rng.choice(rest, need, replace=False)] for _ in range(count)]


def postflop_decisions(game_string, rng, hands, bettor_seed=7, choose=None):
    """Every postflop decision state of ``hands`` random heads-up hands of ``game_string`` (A^R's moves mixed with
    random calls and bets: c-bet spots, bets faced, all-in sizes; or ``choose(state, bettor, rng)``'s action).  The
    state itself is yielded, before its action is chosen, so a caller may draw from the same ``rng`` in between
    (clone it to keep it)."""
    game = load(game_string)
    agent = RuleBasedAgent()
    bettor = RandomAgent(bettor_seed)
    for _ in range(hands):
        state = game.new_initial_state()
        cards = [int(c) for c in rng.permutation(52)]
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(cards.pop())
                continue
            if state.round > 0:
                yield state
            if choose is not None:
                state.apply_action(choose(state, bettor, rng))
                continue
            # preflop mostly the rules (raises), sometimes a random raise or a call (the big blind raising last:
            # c-bet spots); postflop the rules or a random call or bet
            if rng.random() < (0.6 if state.round == 0 else 0.5):
                action = agent.act(state)
            else:
                action = CALL if rng.random() < 0.5 else bettor.act(state)
            state.apply_action(action)


class BoardParityCaller(FixedRangeRaiser):
    """A mixed strategy that reads the board: out of range and facing a bet, call 1/4 or 3/4 of the time by the
    parity of the board's highest card (the same support on every board, different probabilities)."""
    ignores_board = False

    def own_strategy(self, state):
        acts, probs = super().own_strategy(state)
        if acts[0] == FOLD:
            q = 0.25 if max(state.board, default=0) % 2 == 0 else 0.75
            return np.array([CALL, FOLD], dtype=np.int64), np.array([q, 1.0 - q])
        return acts, probs
