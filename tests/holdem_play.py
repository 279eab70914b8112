"""Test helper: drive a hold'em state through a scripted hand (not a test module)."""


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
