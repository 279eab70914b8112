"""Test helper: AIVAT's unbiasedness against counting in a duplicate match (not a test module)."""
import numpy as np


def aivat_counting_gap(res) -> float:
    """|mean| / standard error of seat 0's AIVAT value minus its winnings, per hand of a duplicate
    ``head_to_head`` result (chips).  Zero mean when every correction term has zero mean; seat 0, not
    ``agents[0]``, because a bias of seat 0's value cancels between a deal's two seatings (``agents[0]`` sits
    in seat 0 in the first hand of each deal)."""
    sign = np.tile([1.0, -1.0], res.payoffs.shape[0] // 2)
    d = (res.aivat_values - res.payoffs[:, 0]) * sign
    return float(abs(d.mean()) / (d.std(ddof=1) / np.sqrt(d.size)))
