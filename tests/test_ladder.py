"""The ladder (cfrkit.evaluation.ladder, cfrkit.platform.ladder, `cfrkit ladder`): resume, symmetry, the
rating's interval, errors, the command line."""
import json
import math
import os
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

import cfrkit.platform.ladder as ladder_mod
from cfrkit.cli import main
from cfrkit.evaluation.ladder import Crosstable, pair_result, play_block
from cfrkit.games.base import GameError
from cfrkit.platform.ladder import LadderError, run_ladder
from cfrkit.platform.results import agent_results
from cfrkit.platform.storage import Store
from cfrkit.poker import MatchObserver, make_agent
from cfrkit.poker.registry import RegistryError

AGENTS = ["rule-based", "always-call", "random"]   # three AIVAT pairs, two with a seeded agent (random)


class _StopAfter(MatchObserver):
    """Ctrl-C in the middle of a block: KeyboardInterrupt after ``hands`` hands."""

    def __init__(self, hands):
        self.left = hands

    def hand_end(self, hand):
        self.left -= 1
        if self.left == 0:
            raise KeyboardInterrupt


def _pairs(res):
    return {(p.a, p.b): p for p in res.crosstable.pairs.values()}


def _values(db):
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT pair, block, duplicate, aivat FROM ladder_blocks ORDER BY pair, block").fetchall()
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def test_interrupted_and_resumed_ladder_equals_an_uninterrupted_one(tmp_path, monkeypatch):
    whole = run_ladder(AGENTS, 30, str(tmp_path / "whole.db"), block=10, seed=3)
    assert whole.complete and whole.blocks == 9 and whole.hands == 9 * 20

    db = str(tmp_path / "resumed.db")
    real = ladder_mod.play_block
    calls = {"n": 0}

    def interrupted(game, a, b, first_deal, deals, seed, aivat=True, observers=(), time_limit=float("inf"), **kw):
        calls["n"] += 1
        if calls["n"] == 5:  # the fifth block stops after 7 of its 20 hands
            observers = list(observers) + [_StopAfter(7)]
        return real(game, a, b, first_deal, deals, seed, aivat=aivat, observers=observers, time_limit=time_limit,
                    **kw)

    monkeypatch.setattr(ladder_mod, "play_block", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_ladder(AGENTS, 20, db, block=10, seed=3)
    monkeypatch.setattr(ladder_mod, "play_block", real)
    store = Store(db)
    try:
        # the finished blocks are kept; the broken block's hands are there but not counted as a block
        assert len(_values(db)) == 4
        statuses = [store.match(m)["status"] for m in store.match_ids()]
        assert statuses.count("finished") == 4 and statuses.count("error") == 1
    finally:
        store.close()

    part = run_ladder(AGENTS, 20, db, block=10, seed=3)        # resume: the 2 blocks left, nothing replayed
    assert part.complete and part.blocks == 2
    rest = run_ladder(AGENTS, 30, db, block=10, seed=3)        # more deals continue the finished ladder
    assert rest.blocks == 3 and rest.complete
    again = run_ladder(list(reversed(AGENTS)), 30, db, block=10, seed=3)   # agent order does not matter
    assert again.blocks == 0

    # the same per-deal values, bit for bit, and the same crosstable
    assert _values(db) == _values(str(tmp_path / "whole.db"))
    for key, p in _pairs(whole).items():
        q = _pairs(rest)[key]
        assert (q.estimator, q.deals, q.estimate.mean, q.estimate.ci95) == (p.estimator, p.deals, p.estimate.mean,
                                                                           p.estimate.ci95)
    assert _pairs(whole)[("always-call", "rule-based")].aivat is not None
    # random's uniform raise sizes enter AIVAT through their split between representative sizes
    assert _pairs(whole)[("random", "rule-based")].aivat is not None
    # no deal counted twice in the platform tables either (what `cfrkit results` reads)
    store = Store(db)
    try:
        assert len(store.match_ids()) == 9
        assert {r.name: r.hands for r in agent_results(store)} == {a: 2 * 30 * 2 for a in AGENTS}
        for mid in store.match_ids():
            assert [h["hand"] for h in store.hands(mid)] == list(range(20))
    finally:
        store.close()


def test_crosstable_is_antisymmetric_and_a_pair_reversed_is_its_negation():
    a, b = make_agent("rule-based"), make_agent("fixed-range-raiser")
    ab = play_block("holdem", a, b, 5, 6, seed=11, aivat=True)
    ba = play_block("holdem", b, a, 5, 6, seed=11, aivat=True)
    np.testing.assert_allclose(ab.duplicate, -ba.duplicate, atol=1e-9)
    np.testing.assert_allclose(ab.aivat, -ba.aivat, atol=1e-6)
    assert ab.hands == 12 and np.any(ab.duplicate != 0)
    table = Crosstable(["A", "B", "C"], {(0, 1): pair_result("A", "B", ab.duplicate, ab.aivat),
                                         (2, 1): pair_result("C", "B", ba.duplicate)})
    mean, ci = table.matrix()
    assert np.allclose(mean, -mean.T, equal_nan=True) and np.allclose(ci, ci.T, equal_nan=True)
    assert table.cell(1, 0).estimate.mean == -table.cell(0, 1).estimate.mean
    assert math.isnan(mean[0, 2]) and table.cell(0, 2) is None


def test_a_pair_reports_the_less_variable_of_its_unbiased_estimators():
    rng = np.random.default_rng(1)
    dup = rng.normal(100, 1000, 500)
    calm = dup + rng.normal(0, 10, 500) - 0.9 * (dup - dup.mean())   # AIVAT with a good value function
    wild = dup + rng.normal(0, 3000, 500)                             # AIVAT with a bad one
    good, bad, none = pair_result("a", "b", dup, calm), pair_result("a", "b", dup, wild), pair_result("a", "b", dup)
    assert good.estimator == "aivat" and good.estimate is good.aivat and good.variance_reduction() > 50
    assert bad.estimator == "duplicate" and bad.estimate is bad.duplicate and bad.variance_reduction() < 1
    assert none.estimator == "duplicate" and none.aivat is None and none.variance_reduction() is None
    assert good.estimate.n == 500 and good.deals == 500 and good.hands == 1000
    with pytest.raises(GameError, match="AIVAT values"):
        pair_result("a", "b", dup, wild[:10])


def test_rating_is_the_field_mean_and_its_interval_covers_95_percent():
    rng = np.random.default_rng(0)
    strength = np.array([300.0, 100.0, -50.0, -350.0])          # true additive strengths (mbb/h)
    noise = np.array([[0, 900, 2500, 400], [0, 0, 1500, 3000], [0, 0, 0, 700], [0, 0, 0, 0]], dtype=float)
    names = ["a", "b", "c", "d"]
    truth = [np.mean([strength[i] - strength[j] for j in range(4) if j != i]) for i in range(4)]
    inside = np.zeros(4)
    trials = 400
    for t in range(trials):
        pairs = {}
        for i in range(4):
            for j in range(i + 1, 4):
                deals = int(rng.integers(40, 120))
                pairs[(i, j)] = pair_result(names[i], names[j],
                                            rng.normal(strength[i] - strength[j], noise[i, j], deals))
        table = Crosstable(names, pairs)
        for i, r in enumerate(table.ratings):
            inside[i] += abs(r.mean - truth[i]) <= r.ci95
        if t == 0:  # the formula: the mean of the pair means, sqrt of the summed pair variances over k
            r = table.ratings[1]
            cells = [table.cell(1, j) for j in (0, 2, 3)]
            assert r.mean == pytest.approx(np.mean([c.estimate.mean for c in cells]))
            assert r.ci95 == pytest.approx(1.959964 * math.sqrt(sum(c.se ** 2 for c in cells)) / 3)
            assert r.pairs == 3
    coverage = inside / trials
    assert np.all(coverage > 0.91) and np.all(coverage < 0.99), coverage


@pytest.mark.parametrize("specs,deals,message", [
    (["rule-based", "no-such-bot"], 10, "unknown agent 'no-such-bot'"),
    (["rule-based"], 10, "at least two agents"),
    (["always-call", "always-call"], 10, "listed twice"),
    (["always-call", "random"], 0, "deals must be positive"),
])
def test_bad_ladders_fail_before_playing(tmp_path, specs, deals, message):
    with pytest.raises((LadderError, RegistryError), match=message):
        run_ladder(specs, deals, str(tmp_path / "l.db"))
    with pytest.raises(LadderError, match="hold'em matches"):
        run_ladder(["always-call", "random"], 10, str(tmp_path / "l.db"), game="leduc")


@pytest.mark.parametrize("argv,message", [
    (["ladder", "always-call", "nope", "--hands", "4"], "unknown agent 'nope'"),
    (["ladder", "always-call", "random", "--hands", "0"], "--hands must be positive"),
    (["ladder", "always-call", "random", "--hands", "4", "--block", "-1"], "--block must be positive"),
    (["ladder", "always-call", "random", "--hands", "4", "--db", "/nonexistent/dir/l.db", "--no-png"],
     "does not exist"),
    (["ladder", "always-call", "blueprint:/nonexistent.npz", "--hands", "4"], "blueprint"),
    (["ladder", "always-call", "random", "--hands", "4", "--fit-opponent", "-2"], "--fit-opponent must be >= 0"),
    (["ladder", "always-call", "random", "--hands", "4", "--fit-opponent", "5", "--no-aivat"], "--no-aivat"),
    (["ladder", "always-call", "random", "--hands", "4", "--target-ci", "-5"], "--target-ci must be a positive"),
    (["ladder", "always-call", "random", "--hands", "4", "--pilot-blocks", "0"], "--pilot-blocks must be positive"),
    (["ladder", "always-call", "random", "--hands", "4", "--cache-gb", "0"], "--cache-gb must be a positive"),
    (["blueprint", "train", "bp.npz", "--iterations", "1", "--eval-minutes", "1", "--eval-lbr", "FCQ/1-4"],
     "bad LBR bet set"),
    (["blueprint", "train", "bp.npz", "--iterations", "1", "--eval-minutes", "1", "--eval-opponents", "nobody"],
     "unknown opponent 'nobody'"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err
    assert not os.path.exists(tmp_path / "bp.npz")


def test_cli_tiny_ladder_in_a_subprocess(tmp_path):
    pytest.importorskip("matplotlib")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                        os.environ.get("PYTHONPATH", "")]))
    out = tmp_path / "lad"
    cmd = [sys.executable, "-m", "cfrkit", "ladder", "always-call", "fixed-range-raiser", "random", "--hands", "4",
           "--block", "2", "--out", str(out), "--json", "--seed", "1"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert len(res["pairs"]) == 3 and all(p["deals"] == 4 and p["hands"] == 8 for p in res["pairs"])
    assert res["run"]["hands"] == 3 * 8 and res["complete"]
    assert {r["name"] for r in res["ratings"]} == {"always-call", "fixed-range-raiser", "random"}
    # ratings are the field means of the pairs
    means = {(p["a"], p["b"]): p["estimate"]["mean"] for p in res["pairs"]}
    for r in res["ratings"]:
        mine = [m if a == r["name"] else -m for (a, b), m in means.items() if r["name"] in (a, b)]
        assert r["mean"] == pytest.approx(np.mean(mine))
    assert (out / "ladder.png").stat().st_size > 1000 and (out / "ladder.json").exists()
    # `cfrkit results` reads the ladder's database
    proc = subprocess.run([sys.executable, "-m", "cfrkit", "results", "--db", str(out / "ladder.db")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "fixed-range-raiser" in proc.stdout and "6 matches" in proc.stdout
    # run again: nothing left to play, the same table
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    again = json.loads(proc.stdout)
    assert again["run"]["hands"] == 0 and again["pairs"] == res["pairs"]


@pytest.mark.slow
def test_blocks_in_worker_processes_give_the_in_process_values(tmp_path):
    specs = ["always-call", "fixed-range-raiser", "random"]
    one = run_ladder(specs, 12, str(tmp_path / "one.db"), block=3, seed=5)
    two = run_ladder(specs, 12, str(tmp_path / "two.db"), block=3, seed=5, processes=2)
    assert two.blocks == one.blocks == 12 and two.complete
    assert _values(str(tmp_path / "one.db")) == _values(str(tmp_path / "two.db"))


@pytest.fixture(scope="module")
def tiny_trainer(tmp_path_factory):
    from cfrkit.solvers.blueprint.trainer import BlueprintTrainer

    path = str(tmp_path_factory.mktemp("bp") / "bp.npz")
    tr = BlueprintTrainer("holdem(stacks=400;400)", "0.5+1", 1, abstraction="ehs:169,2,2,2", seed=1)
    tr.iterate(1)
    tr.save(path)
    return tr, path


def test_training_evaluator_uses_aivat_blocks_and_lbr_on_fixed_deals(tiny_trainer):
    from cfrkit.evaluation.ladder import training_evaluator

    trainer, _ = tiny_trainer
    evaluate = training_evaluator(["always-call", "random"], 3, seed=1, lbr="FC/3-4", lbr_deals=2)
    report = evaluate(trainer)
    assert set(report) == {"always-call", "random", "lbr FC/3-4"}
    assert report["always-call"]["estimator"] in ("aivat", "duplicate")
    assert report["random"]["estimator"] in ("aivat", "duplicate")
    assert report["always-call"]["hands"] == 6 and report["lbr FC/3-4"]["deals"] == 2
    assert evaluate(trainer) == report        # the same deals and seeds at every evaluation
    with pytest.raises(RegistryError, match="unknown agent"):
        training_evaluator(["nobody"], 3)
    with pytest.raises(ValueError):
        training_evaluator(["always-call"], 3, lbr="FCQ/1-4")


def test_a_blueprint_in_the_ladder_is_stored_under_its_file_name(tiny_trainer, tmp_path):
    _, path = tiny_trainer
    db = str(tmp_path / "bp.db")
    res = run_ladder([f"blueprint:{path}", "always-call", "random"], 4, db, game="holdem(stacks=400;400)", block=2)
    assert res.complete and res.crosstable.names[0] == "blueprint[bp]"
    # every pair runs AIVAT (random's raise sizes through taken_weights; always-call vs random board-blind values)
    assert all(res.crosstable.cell(i, j).aivat is not None for i, j in ((0, 1), (0, 2), (1, 2)))
    store = Store(db)
    try:
        assert {r.name for r in agent_results(store)} == {"blueprint[bp]", "always-call", "random"}
    finally:
        store.close()


def test_fit_opponent_is_a_stored_setting_of_the_blueprint_pairs(tiny_trainer, tmp_path, monkeypatch):
    """``fit_opponent_deals``: the blueprint-vs-always-call pair gets other AIVAT values on the same hands, under its
    own key (a run with another value is a separate run; the pair without a blueprint keeps its blocks), a resume
    plays nothing, and tables fitted afresh (a new process: no cached agents) give the same values bit for bit."""
    from cfrkit.platform.ladder import ladder_crosstable

    _, path = tiny_trainer
    specs, game = [f"blueprint:{path}", "always-call", "fixed-range-raiser"], "holdem(stacks=400;400)"
    db = str(tmp_path / "fit.db")
    plain = run_ladder(specs, 4, db, game=game, block=2, seed=2)
    fit = run_ladder(specs, 4, db, game=game, block=2, seed=2, fit_opponent_deals=8)
    # only the blueprint's pairs with a hand_strategy agent lacking a value function are replayed: 2 pairs x 2 blocks
    assert plain.blocks == 6 and fit.blocks == 4 and fit.complete
    assert run_ladder(specs, 4, db, game=game, block=2, seed=2, fit_opponent_deals=8).blocks == 0   # resume
    for j in (1, 2):
        p, q = plain.crosstable.cell(0, j), fit.crosstable.cell(0, j)
        assert p.duplicate == q.duplicate and q.aivat is not None and q.aivat.mean != p.aivat.mean
    assert plain.crosstable.cell(1, 2) == fit.crosstable.cell(1, 2)
    table, complete, _ = ladder_crosstable(db, specs, 4, game=game, block=2, seed=2, fit_opponent_deals=8)
    assert complete and table.cell(0, 1).aivat == fit.crosstable.cell(0, 1).aivat
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    fresh = str(tmp_path / "fresh.db")
    run_ladder(specs[:2], 4, fresh, game=game, block=2, seed=2, fit_opponent_deals=8)
    rows = {(r[0], r[1]): r for r in _values(db)}
    assert all(rows[(r[0], r[1])] == r for r in _values(fresh))
    with pytest.raises(LadderError, match="fit_opponent_deals must be >= 0"):
        run_ladder(specs, 4, db, game=game, block=2, fit_opponent_deals=-1)


@pytest.mark.slow
def test_blocks_as_ray_tasks_give_the_in_process_values(tmp_path):
    pytest.importorskip("ray")
    specs = ["always-call", "fixed-range-raiser", "random"]
    run_ladder(specs, 4, str(tmp_path / "one.db"), block=2, seed=1)
    ray = run_ladder(specs, 4, str(tmp_path / "ray.db"), block=2, seed=1, ray_address="local", processes=2)
    assert ray.blocks == 6 and ray.complete
    assert _values(str(tmp_path / "one.db")) == _values(str(tmp_path / "ray.db"))


def test_sigterm_finishes_the_block_under_way_and_keeps_the_table(tmp_path):
    import signal
    import time

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                        os.environ.get("PYTHONPATH", "")]))
    out = tmp_path / "lad"
    proc = subprocess.Popen([sys.executable, "-m", "cfrkit", "ladder", "always-call", "fixed-range-raiser", "random",
                             "--hands", "4000", "--block", "4", "--out", str(out), "--no-png", "--no-progress"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    db = out / "ladder.db"
    deadline = time.time() + 120
    while time.time() < deadline:   # wait for the first stored blocks
        time.sleep(0.5)
        if db.exists():
            try:
                with sqlite3.connect(str(db)) as con:
                    if con.execute("SELECT count(*) FROM ladder_blocks").fetchone()[0] >= 3:
                        break
            except sqlite3.OperationalError:
                pass
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "stopped by signal" in stdout and "crosstable" in stdout and (out / "ladder.json").exists()
    store = Store(str(db))
    try:  # graceful: the block under way finished, so every stored match is a finished block
        statuses = {store.match(m)["status"] for m in store.match_ids()}
        assert statuses == {"finished"}
        with sqlite3.connect(str(db)) as con:
            assert con.execute("SELECT count(*) FROM ladder_blocks").fetchone()[0] == len(store.match_ids())
    finally:
        store.close()


def test_a_block_whose_worker_was_killed_is_played_again_on_resume(tmp_path):
    # a hard kill (no match_end): the block's match stays 'running' with its hands and no block row
    whole = run_ladder(AGENTS, 20, str(tmp_path / "whole.db"), block=10, seed=3)
    db = str(tmp_path / "killed.db")
    script = f"""
import os
import cfrkit.platform.ladder as L
from cfrkit.poker import MatchObserver

class Kill(MatchObserver):
    def __init__(self, store):
        self.store, self.n = store, 0
    def hand_end(self, hand):
        self.n += 1
        if self.n == 7:
            for obs in self.store:
                obs._flush()           # the block's first hands reached the database
            os._exit(9)

real = L.play_block
def play(game, a, b, first_deal, deals, seed, aivat=True, observers=(), time_limit=float("inf"), **kw):
    if first_deal == 10:   # the first pair's second block
        observers = list(observers) + [Kill([o for o in observers if hasattr(o, "_flush")])]
    return real(game, a, b, first_deal, deals, seed, aivat=aivat, observers=observers, time_limit=time_limit, **kw)
L.play_block = play
L.run_ladder({AGENTS!r}, 20, {db!r}, block=10, seed=3)
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                        os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 9, proc.stderr
    store = Store(db)
    try:
        statuses = [store.match(m)["status"] for m in store.match_ids()]
        assert statuses.count("finished") == 3 and statuses.count("running") == 1 and len(_values(db)) == 3
        killed = [m for m in store.match_ids() if store.match(m)["status"] == "running"][0]
        assert len(store.hands(killed)) == 7
    finally:
        store.close()
    rest = run_ladder(AGENTS, 20, db, block=10, seed=3)      # the killed block again, then the two left
    assert rest.complete and rest.blocks == 3
    assert _values(db) == _values(str(tmp_path / "whole.db"))
    store = Store(db)
    try:  # the killed try's hands are gone: every deal counted once
        assert {store.match(m)["status"] for m in store.match_ids()} == {"finished"} and len(store.match_ids()) == 6
        assert {r.name: r.hands for r in agent_results(store)} == {a: 2 * 20 * 2 for a in AGENTS}
    finally:
        store.close()
    assert whole.complete


def test_a_target_interval_gives_each_pair_the_blocks_its_pilot_asks_for(tmp_path):
    """With ``target_ci`` every pair plays the pilot, then ceil(pilot deals x (pilot ci / target)^2) deals in
    whole blocks (capped): the exact pair (fixed-range-raiser vs always-call, AIVAT deviation 0) stops at the
    pilot, the pairs with A^R play more, the crosstable counts each pair's own deals, and a second run plays
    nothing."""
    from cfrkit.evaluation.ladder import deals_for_interval

    game = "holdem(stacks=400;400)"
    specs = ["always-call", "fixed-range-raiser", "rule-based"]
    db = str(tmp_path / "t.db")
    pilot = pair_result("x", "y", np.array([0.0, 100.0, -100.0, 50.0]))
    assert deals_for_interval(pilot, pilot.estimate.ci95 / 2) == 16      # half the width: four times the deals
    with pytest.raises(ValueError):
        deals_for_interval(pilot, 0.0)
    assert deals_for_interval(pilot, pilot.estimate.ci95 / 2, pilot_blocks=2) == math.ceil(16 * 12.7062 ** 2 /
                                                                                            1.959964 ** 2)
    res = run_ladder(specs, 400, db, game=game, block=4, seed=2, target_ci=60.0, pilot_blocks=3, pilot_rule="z")
    by_pair = _pairs(res)
    assert by_pair[("always-call", "fixed-range-raiser")].deals == 12                  # the pilot: exact values
    pilots = ladder_mod.ladder_crosstable(db, specs, 12, game=game, block=4, seed=2)[0]  # the first 3 blocks
    first = {(q.a, q.b): q for q in pilots.pairs.values()}
    for (a, b), p in by_pair.items():
        want = min(400, max(12, -(-deals_for_interval(first[(a, b)], 60.0) // 4) * 4))
        assert p.deals == want, (a, b, p.deals, want)
    assert {p.deals for p in by_pair.values()} != {12}                                 # not every pair stopped
    assert res.complete and res.target_ci == 60.0
    again = run_ladder(specs, 400, db, game=game, block=4, seed=2, target_ci=60.0, pilot_blocks=3, pilot_rule="z")
    assert again.blocks == 0 and {k: p.deals for k, p in _pairs(again).items()} == \
        {k: p.deals for k, p in by_pair.items()}
    # Stein's t rule on the same pilots: (t_2 / z)^2 = 4.5 times the deals, every stored block still counted
    t = run_ladder(specs, 400, db, game=game, block=4, seed=2, target_ci=60.0, pilot_blocks=3)
    for (a, b), p in _pairs(t).items():
        want = min(400, max(12, -(-deals_for_interval(first[(a, b)], 60.0, pilot_blocks=3) // 4) * 4))
        assert p.deals == want >= by_pair[(a, b)].deals, (a, b, p.deals, want)
    assert t.blocks > 0 and t.complete
    with pytest.raises(LadderError, match="target_ci"):
        run_ladder(specs, 60, db, game=game, target_ci=-1.0)
    with pytest.raises(LadderError, match="pilot_rule"):
        run_ladder(specs, 60, db, game=game, target_ci=10.0, pilot_rule="normal")


def test_the_t_rule_factor_is_students_quantile_over_the_normal_one():
    """pilot_factor: (t_{k-1, 0.975} / 1.96)^2 from tabulated t quantiles (2.776 for 4 degrees of freedom, 2.093 for
    19, 2.023 for 39), falling to 1 as the pilot grows; a one-block pilot has no t quantile."""
    from cfrkit.evaluation.ladder import pilot_factor

    for k, tq in ((5, 2.7764), (20, 2.0930), (40, 2.0227)):
        assert pilot_factor(k) == pytest.approx((tq / 1.959964) ** 2, rel=1e-4)
    assert pilot_factor(None) == 1.0 and pilot_factor(1000) == pytest.approx(1.0, abs=0.005)
    with pytest.raises(ValueError, match="at least 2 blocks"):
        pilot_factor(1)


def _fit_rows(db):
    """The stored blocks' values of the pairs with fitted tables (their keys name the setting)."""
    return [r for r in _values(db) if "fit_opponent_deals" in r[0]]


def _replay_fitted(db):
    """Drop the stored blocks of the fitted pairs, so that the next run plays them again."""
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM ladder_blocks WHERE pair LIKE '%fit_opponent_deals%'")


def test_stored_fitted_tables_give_the_refitted_blocks_bit_for_bit(tiny_trainer, tmp_path, monkeypatch, capsys):
    """The fitted opponent tables are stored beside the database and read back (memory-mapped) by a later run: its
    blocks equal bit for bit those of a run that fits them afresh; a changed blueprint file or a corrupt store is
    fitted again (one line on stderr), never served the old tables."""
    import shutil

    import cfrkit.agents.blueprint as bp_mod
    from cfrkit.platform.ladder import fits_dir
    from cfrkit.solvers.blueprint.trainer import BlueprintTrainer

    _, tiny = tiny_trainer
    path = str(tmp_path / "bp.npz")
    shutil.copy(tiny, path)
    specs, game = [f"blueprint:{path}", "always-call", "fixed-range-raiser"], "holdem(stacks=400;400)"
    kw = dict(game=game, block=2, seed=4, fit_opponent_deals=8)
    real_fit = bp_mod.fit_abstract_policy
    fits = {"n": 0}

    def counting_fit(*a, **k):
        fits["n"] += 1
        return real_fit(*a, **k)

    monkeypatch.setattr(bp_mod, "fit_abstract_policy", counting_fit)
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    run_ladder(specs, 4, str(tmp_path / "refit.db"), store_fits=False, **kw)
    refit = _fit_rows(str(tmp_path / "refit.db"))
    assert len(refit) == 4 and fits["n"] == 2 and not os.path.exists(fits_dir(str(tmp_path / "refit.db")))

    db = str(tmp_path / "stored.db")
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    run_ladder(specs, 2, db, **kw)                     # the first block of each pair: fitted and stored
    assert fits["n"] == 4 and len(os.listdir(fits_dir(db))) == 2
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})     # a new process: nothing in memory
    res = run_ladder(specs, 4, db, **kw)               # resumed: the second blocks with the stored tables
    assert res.blocks == 3 and fits["n"] == 4
    assert _fit_rows(db) == refit
    assert capsys.readouterr().err.count("fitted opponent tables") == 0

    # a corrupt store (one byte changed) is fitted again, with the same values
    store = os.path.join(fits_dir(db), sorted(os.listdir(fits_dir(db)))[0])
    victim = os.path.join(store, sorted(f for f in os.listdir(store) if f.endswith(".npy"))[0])
    raw = bytearray(open(victim, "rb").read())
    raw[-1] ^= 0x40
    open(victim, "wb").write(bytes(raw))
    _replay_fitted(db)
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    run_ladder(specs, 4, db, **kw)
    err = capsys.readouterr().err
    assert fits["n"] == 5 and err.count("corrupt") == 1 and len(err.strip().splitlines()) == 1
    assert _fit_rows(db) == refit

    # another blueprint under the same file name: its tables, not the stored ones
    tr = BlueprintTrainer(game, "0.5+1", 1, abstraction="ehs:169,2,2,2", seed=7)
    tr.iterate(2)
    tr.save(path)
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    run_ladder(specs, 4, str(tmp_path / "refit2.db"), store_fits=False, **kw)
    want = _fit_rows(str(tmp_path / "refit2.db"))
    assert want != refit
    _replay_fitted(db)
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    n = fits["n"]
    run_ladder(specs, 4, db, **kw)
    err = capsys.readouterr().err
    assert fits["n"] == n + 2 and err.count("stale (stored for another blueprint)") == 2
    assert _fit_rows(db) == want


def test_the_caches_budget_changes_no_value_and_splits_over_the_value_functions(tiny_trainer, tmp_path, monkeypatch):
    """A worker's caches budget (cache_gb) scales every cache bound of its value functions (a tiny budget: every
    cache emptied at 16 entries) and the blocks' values stay the same bit for bit; the scale is the budget over the
    ~450 MB of each value function alive, and a run in this process gives the caller's budget back."""
    import gc

    from cfrkit.agents import blueprint_values as bv

    _, path = tiny_trainer
    specs, game = [f"blueprint:{path}", "rule-based", "random"], "holdem(stacks=400;400)"
    kw = dict(game=game, block=3, seed=6, fit_opponent_deals=6, store_fits=False)
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    run_ladder(specs, 6, str(tmp_path / "free.db"), cache_gb=None, **kw)
    seen = []
    real = bv._Shared.remember

    def spy(cache, key, value, limit=100_000):
        seen.append(bv.cache_scale())
        real(cache, key, value, limit)

    monkeypatch.setattr(bv._Shared, "remember", staticmethod(spy))
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    run_ladder(specs, 6, str(tmp_path / "tight.db"), cache_gb=1e-9, **kw)
    assert seen and max(seen) < 1e-6                       # every bound at its floor of 16 entries
    assert _values(str(tmp_path / "tight.db")) == _values(str(tmp_path / "free.db"))
    assert bv.set_cache_budget(None) is None               # the caller's (none) was given back

    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    gc.collect()
    old = bv.set_cache_budget(900.0)
    try:
        n = len(bv._LIVE)
        assert bv.cache_scale() == pytest.approx(min(1.0, 900e6 / (n * 450e6)) if n else 1.0)
        bp = make_agent(f"blueprint:{path}", game=game, seed=0)
        from cfrkit.poker.view import poker_view
        bp.aivat_value_function(poker_view(game))
        assert len(bv._LIVE) == n + 1 and bv.cache_scale() == pytest.approx(min(1.0, 900e6 / ((n + 1) * 450e6)))
        del bp
        gc.collect()
        assert len(bv._LIVE) == n and bv.cache_scale() == pytest.approx(min(1.0, 900e6 / (n * 450e6)) if n else 1.0)
        with pytest.raises(GameError, match="positive number of MB"):
            bv.set_cache_budget(0)
    finally:
        bv.set_cache_budget(old)
    with pytest.raises(LadderError, match="cache_gb"):
        run_ladder(specs, 6, str(tmp_path / "bad.db"), cache_gb=-1.0, **kw)


def test_a_database_written_by_the_code_before_resumes_without_replaying_its_blocks(tmp_path):
    """tests/data/ladder_main_e543b5f.db: a target-interval ladder written by main at e543b5f (before the stored
    fits, the caches' budget and the t rule; 3 agents, 120 deals, blocks of 4, target +-60, a 3-block pilot).  The
    pair keys, match ids and deals are unchanged: with the rule it was planned with ("z") a resume plays nothing and
    reads the same crosstable; the t rule (more deals for the same pilots) plays only blocks not stored and leaves the
    stored rows and matches as they were."""
    import shutil

    src = os.path.join(os.path.dirname(__file__), "data", "ladder_main_e543b5f.db")
    db = str(tmp_path / "ladder.db")
    shutil.copy(src, db)
    specs, kw = ["always-call", "fixed-range-raiser", "rule-based"], dict(game="holdem(stacks=400;400)", block=4,
                                                                        seed=2, target_ci=60.0, pilot_blocks=3)
    before = _values(db)
    with sqlite3.connect(db) as con:
        matches = con.execute("SELECT id, status FROM matches ORDER BY id").fetchall()
        hands = con.execute("SELECT match_id, COUNT(*) FROM hands GROUP BY match_id ORDER BY match_id").fetchall()
    assert len(before) == 56
    z = run_ladder(specs, 120, db, pilot_rule="z", **kw)
    assert z.blocks == 0 and z.complete and _values(db) == before
    got = {(p.a, p.b): (p.deals, round(p.estimate.mean, 3), round(p.estimate.ci95, 3))
           for p in z.crosstable.pairs.values()}
    assert got == {("always-call", "fixed-range-raiser"): (12, 127.329, 0.0),      # main's own printout
                   ("always-call", "rule-based"): (120, -209.383, 102.574),
                   ("fixed-range-raiser", "rule-based"): (92, -144.126, 61.608)}
    t = run_ladder(specs, 120, db, **kw)
    after = _values(db)
    assert t.complete and t.blocks == len(after) - len(before) == 7                  # FRR vs A^R: 23 -> 30 blocks
    assert [r for r in after if (r[0], r[1]) in {(b[0], b[1]) for b in before}] == before
    with sqlite3.connect(db) as con:
        assert set(matches) <= set(con.execute("SELECT id, status FROM matches").fetchall())
        assert set(hands) <= set(con.execute("SELECT match_id, COUNT(*) FROM hands GROUP BY match_id").fetchall())


def test_fitted_tables_store_round_trip_and_refusals(tiny_trainer, tmp_path, capsys):
    """save_fitted_tables / load_fitted_tables: the arrays come back equal and memory-mapped read-only; a store of
    the same key written meanwhile by another process is kept (keep_same), replaced when asked; a truncated file, an
    edited meta.json and another key are refused (None) with one line each, nothing stored is silent."""
    from cfrkit.agents.blueprint_values import blueprint_values, bucket_transitions
    from cfrkit.agents.opponent_values import (blueprint_fingerprint, load_fitted_tables, opponent_sigma,
                                               save_fitted_tables)
    from cfrkit.solvers.blueprint.strategy import BlueprintStrategy

    _, path = tiny_trainer
    bp = BlueprintStrategy.load(path)
    trans = bucket_transitions(bp.abstraction, 4, 0)
    tables = {0: blueprint_values(bp, trans), 1: blueprint_values(bp, trans, opponent_sigma(bp, {}, 2.0))}
    meta = {"blueprint": blueprint_fingerprint(bp), "deals": 8, "prior": 2.0}
    store = str(tmp_path / "fits" / "pair")
    assert load_fitted_tables(store, meta, bp) is None and capsys.readouterr().err == ""
    assert save_fitted_tables(store, tables, meta)
    got = load_fitted_tables(store, meta, bp)
    for s in (0, 1):
        for a, b in zip(tables[s].D + tables[s].S, got[s].D + got[s].S):
            assert np.array_equal(a, b) and not b.flags.writeable
    assert not save_fitted_tables(store, tables, meta)                  # the same key is there: kept
    assert save_fitted_tables(store, tables, meta, keep_same=False)     # replaced when the caller found it unusable
    assert load_fitted_tables(store, dict(meta, deals=9), bp) is None
    assert "stale (stored for another deals)" in capsys.readouterr().err
    victim = os.path.join(store, "seat1_S3.npy")
    with open(victim, "r+b") as fh:
        fh.truncate(os.path.getsize(victim) - 4)
    assert load_fitted_tables(store, meta, bp) is None
    err = capsys.readouterr().err
    assert "corrupt" in err and len(err.strip().splitlines()) == 1
    save_fitted_tables(store, tables, meta, keep_same=False)
    with open(os.path.join(store, "meta.json"), "w") as fh:
        fh.write("{not json")
    assert load_fitted_tables(store, meta, bp) is None and "corrupt (meta.json" in capsys.readouterr().err
    assert blueprint_fingerprint(bp) == blueprint_fingerprint(BlueprintStrategy.load(path))


def test_stored_self_play_tables_give_the_built_blocks_bit_for_bit(tiny_trainer, tmp_path, monkeypatch):
    """A blueprint whose own values a pair uses (against random: no fit applies) gets its self-play tables stored
    beside the database too; a resumed run maps them instead of building them, with the same blocks bit for bit."""
    from cfrkit.agents import blueprint_values as bv
    from cfrkit.platform.ladder import fits_dir

    _, path = tiny_trainer
    specs, kw = [f"blueprint:{path}", "random"], dict(game="holdem(stacks=400;400)", block=2, seed=8)
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    run_ladder(specs, 4, str(tmp_path / "built.db"), store_fits=False, **kw)
    db = str(tmp_path / "stored.db")
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    run_ladder(specs, 2, db, **kw)
    assert [d[:5] for d in os.listdir(fits_dir(db))] == ["self-"]

    def no_build(*a, **k):
        raise AssertionError("the self-play tables were built again")

    monkeypatch.setattr(bv, "blueprint_values", no_build)
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    assert run_ladder(specs, 4, db, **kw).blocks == 1
    assert _values(db) == _values(str(tmp_path / "built.db")) and len(_values(db)) == 2


def test_two_workers_share_the_stored_fits_and_give_the_in_process_values(tiny_trainer, tmp_path, monkeypatch):
    """Two worker processes fit (or read) the stored tables of the same pairs as their blocks come: the blocks equal
    those of a run in this process that fits afresh, and the store holds one directory per pair."""
    from cfrkit.platform.ladder import fits_dir

    _, path = tiny_trainer
    specs, kw = [f"blueprint:{path}", "always-call", "random"], dict(game="holdem(stacks=400;400)", block=2, seed=9,
                                                                     fit_opponent_deals=6)
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    run_ladder(specs, 6, str(tmp_path / "one.db"), store_fits=False, **kw)
    # forked workers start with this process's agents: not those of the run above, whose tables are in memory only
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    two = run_ladder(specs, 6, str(tmp_path / "two.db"), processes=2, **kw)
    assert two.complete and two.blocks == 9
    assert _values(str(tmp_path / "two.db")) == _values(str(tmp_path / "one.db"))
    assert sorted(d.split("-")[0] for d in os.listdir(fits_dir(str(tmp_path / "two.db")))) == ["fit", "self"]


def test_the_stored_tables_slot_names_are_pinned():
    """The ``fit-`` / ``self-`` directory names (one helper, ``_slot_name``) stay the ones stored ladders already hold:
    the values below are those of the two hand-written blake2b-of-JSON keys the helper replaced."""
    p = ladder_mod._Pair(a=0, b=1, key=json.dumps({"a": "always-call", "b": "blueprint:/x/bp.npz", "game": "holdem"},
                                                  sort_keys=True), deal_seed=12345, aivat=True, fit_opponent_deals=2000)
    assert ladder_mod._fit_slot(p, "holdem-game") == "fit-f314a13f561a606c"
    assert ladder_mod._slot_name("self-", {"spec": "blueprint:/x/bp.npz", "game": "holdem"}) == "self-0de1c53e558b311a"
    # another deal seed, fit size or spec gives another name
    assert ladder_mod._fit_slot(ladder_mod._Pair(a=0, b=1, key=p.key, deal_seed=12346, aivat=True,
                                                 fit_opponent_deals=2000), "holdem-game") != "fit-f314a13f561a606c"
    assert ladder_mod._slot_name("self-", {"spec": "blueprint:/x/bp2.npz", "game": "holdem"}) != "self-0de1c53e558b311a"


def test_a_block_keeps_the_objects_before_it_out_of_the_collections_and_gives_them_back():
    """During ``play_block`` the objects alive before it are frozen (a full collection of the block walks only what
    it made), after it nothing stays frozen; a process that froze objects itself keeps its freeze untouched; the
    values are those of a block played with the collector as it was."""
    import gc

    seen = []

    class Peek(MatchObserver):
        def hand_start(self, hand) -> None:
            seen.append(gc.get_freeze_count())

    a, b = make_agent("rule-based", seed=1), make_agent("always-call", seed=2)
    assert gc.get_freeze_count() == 0
    blk = play_block("holdem", a, b, 0, 3, 7, aivat=True, observers=[Peek()])
    assert gc.get_freeze_count() == 0 and seen and min(seen) > 0
    gc.freeze()
    try:
        mine = gc.get_freeze_count()
        seen.clear()
        again = play_block("holdem", a, b, 0, 3, 7, aivat=True, observers=[Peek()])
        # neither frozen further (the block's objects and the rest) nor given back: only frees take from the count
        after = gc.get_freeze_count()
        assert mine / 2 < after <= mine and max(seen) <= mine
    finally:
        gc.unfreeze()
    assert np.array_equal(blk.duplicate, again.duplicate) and np.array_equal(blk.aivat, again.aivat)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")
def test_forked_workers_start_with_the_parents_agents_and_tables_and_give_the_spawned_values(tiny_trainer, tmp_path,
                                                                                             monkeypatch):
    """Forked workers (the default on Linux) build no agent and no table of their own: the parent built every agent
    and read or built the blueprint's self-play tables before the fork (every agent built in this process, the store
    written once); their blocks equal those of spawned workers and of a run in this process, value for value."""
    from cfrkit.platform.ladder import fits_dir

    _, path = tiny_trainer
    specs, kw = [f"blueprint:{path}", "always-call", "random"], dict(game="holdem(stacks=400;400)", block=2, seed=4)
    log = tmp_path / "built.txt"
    real = ladder_mod.make_agent

    def logged(spec, *a, **k):  # inherited by forked workers, not by spawned ones (they import afresh)
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()} {spec}\n")
        return real(spec, *a, **k)

    monkeypatch.setattr(ladder_mod, "make_agent", logged)
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    one = run_ladder(specs, 4, str(tmp_path / "one.db"), store_fits=False, **kw)
    monkeypatch.setattr(ladder_mod, "_AGENTS", {})
    log.unlink()
    forked = run_ladder(specs, 4, str(tmp_path / "fork.db"), processes=2, start_method="fork", **kw)
    pids = {line.split()[0] for line in log.read_text().splitlines()}
    assert pids == {str(os.getpid())}          # every agent was built here, none in a worker
    assert [d.split("-")[0] for d in os.listdir(fits_dir(str(tmp_path / "fork.db")))] == ["self"]
    spawned = run_ladder(specs, 4, str(tmp_path / "spawn.db"), processes=2, start_method="spawn", **kw)
    assert one.blocks == forked.blocks == spawned.blocks == 6 and forked.complete and spawned.complete
    assert _values(str(tmp_path / "fork.db")) == _values(str(tmp_path / "spawn.db")) == _values(str(tmp_path / "one.db"))
    with pytest.raises(LadderError, match="start_method"):
        run_ladder(specs, 4, str(tmp_path / "bad.db"), processes=2, start_method="thread", **kw)


def test_stored_tables_digests_are_checked_once_per_file_state(tiny_trainer, tmp_path, capsys, monkeypatch):
    """load_fitted_tables reads each file's digest once and records the file's state (``verified.json``): a later load
    of unchanged files reads none (the same arrays); a file changed in place -- its modification time even set back --
    is read again and refused; a lost or garbled record costs a full check only."""
    import cfrkit.agents.opponent_values as ov
    from cfrkit.agents.blueprint_values import blueprint_values, bucket_transitions
    from cfrkit.solvers.blueprint.strategy import BlueprintStrategy

    _, path = tiny_trainer
    bp = BlueprintStrategy.load(path)
    tables = {0: blueprint_values(bp, bucket_transitions(bp.abstraction, 4, 0))}
    meta = {"blueprint": ov.blueprint_fingerprint(bp), "self_play": True}
    store = str(tmp_path / "fits" / "self")
    assert ov.save_fitted_tables(store, tables, meta)
    files = sorted(f for f in os.listdir(store) if f.endswith(".npy"))
    read = []
    real = ov._file_digest
    monkeypatch.setattr(ov, "_file_digest", lambda p: read.append(os.path.basename(p)) or real(p))
    first = ov.load_fitted_tables(store, meta, bp)
    assert sorted(read) == files and os.path.exists(os.path.join(store, ov.STAMPS_FILE))
    read.clear()
    again = ov.load_fitted_tables(store, meta, bp)
    assert read == []
    for a, b in zip(first[0].D + first[0].S, again[0].D + again[0].S):
        assert np.array_equal(a, b)
    assert ov.load_fitted_tables(store, meta, bp, verify=False) is not None and read == []
    # one byte changed in place, the modification time put back: the change time tells
    victim = os.path.join(store, max(files, key=lambda f: os.path.getsize(os.path.join(store, f))))
    st = os.stat(victim)
    raw = bytearray(open(victim, "rb").read())
    raw[-1] ^= 0x40
    with open(victim, "r+b") as fh:
        fh.write(bytes(raw))
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
    read.clear()
    assert ov.load_fitted_tables(store, meta, bp) is None
    assert read == [os.path.basename(victim)] and "corrupt" in capsys.readouterr().err
    # a garbled record: every file checked again, the store still used
    assert ov.save_fitted_tables(store, tables, meta, keep_same=False)
    ov.load_fitted_tables(store, meta, bp)
    with open(os.path.join(store, ov.STAMPS_FILE), "w") as fh:
        fh.write("[not a record")
    read.clear()
    assert ov.load_fitted_tables(store, meta, bp) is not None and sorted(read) == files
