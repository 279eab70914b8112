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


def sample_boards(state, cards, rng, count):
    """``count`` boards completing ``state``'s street at a chance node: its board plus cards drawn by ``rng``
    from those not on the board, in either hand or among ``cards[-3:]`` (the run-out the hand will deal)."""
    dead = set(state.board) | set(state.hole[0]) | set(state.hole[1]) | set(cards[-3:])
    rest = [c for c in range(52) if c not in dead]
    need = state.cards_needed()
    return [list(state.board) + [int(c) for c in rng.choice(rest, need, replace=False)] for _ in range(count)]
