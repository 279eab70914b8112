"""Test helpers: AIVAT's unbiasedness against counting in a duplicate match, and its exact expectation over a
small game (not a test module)."""
import numpy as np

from cfrkit.evaluation.aivat import AivatTracker


def aivat_counting_gap(res) -> float:
    """|mean| / standard error of seat 0's AIVAT value minus its winnings, per hand of a duplicate
    ``head_to_head`` result (chips).  Zero mean when every correction term has zero mean; seat 0, not
    ``agents[0]``, because a bias of seat 0's value cancels between a deal's two seatings (``agents[0]`` sits
    in seat 0 in the first hand of each deal)."""
    sign = np.tile([1.0, -1.0], res.payoffs.shape[0] // 2)
    d = (res.aivat_values - res.payoffs[:, 0]) * sign
    return float(abs(d.mean()) / (d.std(ddof=1) / np.sqrt(d.size)))


def exact_aivat_mean(view, agents, vf, term_strategy=None):
    """sum_z pi(z) * AIVAT(z) over every deal and action of one seating (agents[j] in seat j), the actions drawn
    from each agent's ``hand_strategy``; ``term_strategy(seat, state)`` (optional) gives the row the correction
    uses instead (a wrong one must show)."""
    total = 0.0

    def run(state, prob, tracker):
        nonlocal total
        if state.is_terminal():
            total += prob * (state.returns()[0] - tracker.correction)
            return
        if state.is_chance_node():
            t = AivatTracker(vf)
            t.correction = tracker.correction
            t.before_chance(state)
            chance(state, prob, t)
            return
        seat = state.current_player()
        hs = agents[seat].hand_strategy(state)
        row = hs.probs[view.hand_of(state, seat)]
        used = row if term_strategy is None else term_strategy(seat, state)
        for a, q in zip(hs.actions, row):
            if q <= 0:
                continue
            t = AivatTracker(vf)
            t.correction = tracker.correction
            t.decision(state, hs.actions, used, int(a))
            child = state.clone()
            child.apply_action(int(a))
            run(child, prob * q, t)

    def chance(state, prob, t):
        for action, p in state.chance_outcomes():
            child = state.clone()
            child.apply_action(int(action))
            if child.is_chance_node():
                chance(child, prob * p, t)
            else:
                t2 = AivatTracker(vf)
                t2.correction, t2._pending = t.correction, t._pending
                t2.after_chance(child)
                run(child, prob * p, t2)

    run(view.game.new_initial_state(), 1.0, AivatTracker(vf))
    return total
