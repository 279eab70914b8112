"""``benchmarks/deepstack_holdem_eval.py``: per-opponent deal counts and the summary over finished chunks."""

import numpy as np
import pytest

@pytest.fixture(scope="module")
def bench(benchmark_script):
    return benchmark_script("deepstack_holdem_eval")

def test_parse_hands_per_opponent(bench):
    assert bench.parse_hands("40", ["blueprint", "random"]) == {"blueprint": 40, "random": 40}
    assert bench.parse_hands("40,random=10", ["blueprint", "random"]) == {"blueprint": 40, "random": 10}
    assert bench.parse_hands("random=10", ["random"]) == {"random": 10}
    for bad, why in [("x", "not N"), ("10,bogus=3", "unknown opponent"), ("random=3", "plain count"),
                     ("-1", "negative"), ("5,random=-2", "negative")]:
        with pytest.raises(ValueError, match=why):
            bench.parse_hands(bad, ["blueprint", "random"])

def test_summary_counts_only_the_first_deals(bench):
    """A run extended to more deals and then summarised with fewer uses exactly the first ones; chips become
    mbb/hand at the 100-chip big blind, and the duplicate mean equals the plain mean over whole deals."""
    rng = np.random.default_rng(0)
    chunks = {}
    for first in range(0, 10, 2):
        v = rng.normal(0, 500, 4)
        chunks[str(first)] = {"first": first, "count": 2, "values": v.tolist(), "aivat": (v / 2).tolist(),
                              "deal": [first, first, first + 1, first + 1], "seat": [0, 1, 0, 1],
                              "cpu_seconds": 4.0}
    data = {"chunks": chunks}
    full = bench.summarise_h2h(data, 10)
    part = bench.summarise_h2h(data, 4)
    assert full["deals"] == 10 and part["deals"] == 4 and part["hands_played"] == 8
    first_values = np.concatenate([chunks[k]["values"] for k in ("0", "2")]) * 10.0
    assert part["plain"]["mean"] == pytest.approx(first_values.mean())
    assert part["duplicate"]["mean"] == pytest.approx(first_values.mean())
    assert part["aivat"]["mean"] == pytest.approx(first_values.mean() / 2)
    assert part["cpu_seconds_per_hand"] == pytest.approx(1.0)
    assert bench.summarise_h2h(data, 0) == {"deals": 0}
