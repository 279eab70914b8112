"""benchmarks/aivat_deepstack_values.py ``hands``: a run split at a deal, or stopped in the middle of a deal and
restarted, writes exactly the rows of one long run (the same cards, the same draws of both agents, the same
values of every estimator): the agents' generators carry over from deal to deal and are saved and restored.
About 80 CPU s (each run makes the first solve's all-pairs deal pass again, 4 s), hence slow."""
import json

import pytest

PAIR = ["deepstack-holdem:iterations=3,preflop_boards=50,keep_preflop=16", "random"]


def _rows(path):
    return [json.loads(line) for line in open(path)]


def _values(rows):
    return [{k: v for k, v in r.items() if k in ("hand", "deal", "plain") or k.startswith("aivat_")} for r in rows]


@pytest.fixture(scope="module")
def bench(benchmark_script):
    return benchmark_script("aivat_deepstack_values")


@pytest.fixture(scope="module")
def unsplit(bench, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("unsplit") / "u.jsonl")
    bench.play(PAIR, 2, 5, out, resolve_next=True, next_iterations=2)
    return _rows(out)


@pytest.mark.slow
def test_a_split_run_equals_the_long_run(bench, unsplit, tmp_path):
    one, two = str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")
    bench.play(PAIR, 1, 5, one, resolve_next=True, next_iterations=2)
    bench.play(PAIR, 1, 5, two, resolve_next=True, next_iterations=2, first_deal=1, check_against=one)
    split = _rows(one) + _rows(two)
    assert len(unsplit) == 4 and [r["hand"] for r in split] == list(range(4))
    assert _values(split) == _values(unsplit)
    # the random agent's raises differ between hands (else its generator would not be tested)
    assert len({r["plain"] for r in unsplit}) > 1


@pytest.mark.slow
def test_a_run_stopped_inside_a_deal_resumes_into_the_long_run(bench, unsplit, tmp_path, monkeypatch):
    out = str(tmp_path / "r.jsonl")
    real = bench.Writer.hand_end

    def stop_at_fourth_hand(self, hand):
        real(self, hand)
        if len(self.rows) == 3:          # deal 0 and the first hand of deal 1 written, deal 1 not complete
            raise KeyboardInterrupt

    monkeypatch.setattr(bench.Writer, "hand_end", stop_at_fourth_hand)
    with pytest.raises(KeyboardInterrupt):
        bench.play(PAIR, 2, 5, out, resolve_next=True, next_iterations=2)
    monkeypatch.setattr(bench.Writer, "hand_end", real)
    assert len(_rows(out)) == 3
    bench.play(PAIR, 2, 5, out, resolve_next=True, next_iterations=2)   # drops deal 1's half, replays from deal 1
    assert _values(_rows(out)) == _values(unsplit)
    with pytest.raises(SystemExit, match="another run"):
        bench.play(PAIR, 3, 5, out)                                         # other arguments: refused
