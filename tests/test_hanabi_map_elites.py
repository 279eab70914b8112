"""MAP-Elites generator, pool metrics, the self-play / ad-hoc protocols and the ``cfrkit hanabi`` CLI."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from cfrkit.agents.hanabi import NUM_RULES, RuleAgent, named_agent
from cfrkit.agents.hanabi.map_elites import MapElites, MapElitesConfig, evaluate, niche_of
from cfrkit.cli import main
from cfrkit.evaluation.hanabi_metrics import (action_similarity, best_partner_counts, cross_run_diversity,
                                              hamming_distance, intra_run_diversity, map_metrics)
from cfrkit.evaluation.hanabi_protocols import (FixedChallenger, PoolMatchingChallenger, adhoc_evaluate, crosstable,
                                                record_selfplay, selfplay_report, team_scores)

SMALL = dict(individuals=400, initial_random=200, games_per_eval=10, batch_size=64)


def test_niches_and_features():
    assert niche_of(0.0, 0.0, 20) == (0, 0)
    assert niche_of(0.449, 0.8, 20) == (8, 16)
    assert niche_of(1.0, 1.0, 20) == (19, 19)
    piers = evaluate(named_agent("Piers").rules, 2, 200, seed=1)
    assert 0 < piers.communicativeness < 1 and 0.5 < piers.risk_aversion <= 1
    assert abs(piers.fitness - 17.5) < 1.0
    # an agent that always hints when it can has communicativeness 1; one that never hints 0
    assert evaluate(RuleAgent.from_names(["TellRandomly", "DiscardOldestFirst"]).rules, 2, 20, 1).communicativeness == 1
    never = evaluate(RuleAgent.from_names(["PlaySafeCard", "DiscardOldestFirst", "PlayProbablySafeCard(0.0)"]).rules,
                     2, 20, 1)
    assert never.communicativeness == 0.0


def test_run_is_reproducible_and_independent_of_workers(tmp_path):
    a = MapElites(MapElitesConfig(seed=3, **SMALL))
    a.run()
    b = MapElites(MapElitesConfig(seed=3, **SMALL), workers=2)
    b.run()
    assert np.array_equal(np.nan_to_num(a.archive.fitness, nan=-1), np.nan_to_num(b.archive.fitness, nan=-1))
    assert np.array_equal(a.archive.chromosomes, b.archive.chromosomes)
    c = MapElites(MapElitesConfig(seed=4, **SMALL))
    c.run()
    assert not np.array_equal(a.archive.chromosomes, c.archive.chromosomes)
    s = a.archive.summary()
    assert s["coverage"] > 20 and s["best_score"] > 5
    assert a.archive.chromosomes.min() >= 0 and a.archive.chromosomes.max() < NUM_RULES


def test_checkpoint_resume_gives_the_same_archive(tmp_path):
    path = str(tmp_path / "ck.npz")
    whole = MapElites(MapElitesConfig(seed=5, **SMALL))
    whole.run()
    part = MapElites(MapElitesConfig(seed=5, **SMALL), checkpoint=path)
    part.run(individuals=192)
    assert part.generated == 192 and os.path.exists(path)
    resumed = MapElites.load(path)
    assert resumed.generated == 192
    resumed.run()
    assert resumed.generated == 400
    assert np.array_equal(np.nan_to_num(whole.archive.fitness, nan=-1), np.nan_to_num(resumed.archive.fitness, nan=-1))
    assert np.array_equal(whole.archive.chromosomes, resumed.archive.chromosomes)
    with open(path, "wb") as f:
        f.write(b"garbage")
    with pytest.raises(Exception, match="unreadable|not a cfrkit"):
        MapElites.load(path)


def test_stop_request_saves_a_checkpoint_that_resumes_exactly(tmp_path):
    path = str(tmp_path / "ck.npz")
    whole = MapElites(MapElitesConfig(seed=6, **SMALL))
    whole.run()
    part = MapElites(MapElitesConfig(seed=6, **SMALL), checkpoint=path)
    part.run(stop=lambda: part.batches >= 2, checkpoint_every=1e9)  # no periodic save: only the one on stopping
    assert 0 < part.generated < 400
    resumed = MapElites.load(path)
    assert resumed.generated == part.generated
    resumed.run()
    assert np.array_equal(whole.archive.chromosomes, resumed.archive.chromosomes)


def test_cli_sigterm_stops_after_the_batch_and_saves(tmp_path):
    """SIGTERM (a cluster's scheduler, `kill`) or SIGINT: the run ends after its current batch with the
    checkpoint written, exit code 128 + signal, and the same command resumes it."""
    out = tmp_path / "me"
    ck = out / "checkpoint.npz"
    cmd = [sys.executable, "-m", "cfrkit", "hanabi", "map-elites", "--out", str(out), "--individuals", "1000000",
           "--initial-random", "200", "--games", "5", "--no-progress", "--checkpoint-every", "0.2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not ck.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "checkpoint saved" in err and "Traceback" not in err
    run = MapElites.load(str(ck))
    assert 0 < run.generated < 1_000_000 and not (out / "summary.json").exists()


def test_elites_are_rechallenged_and_fitness_is_consistent():
    run = MapElites(MapElitesConfig(seed=6, **SMALL))
    run.run()
    arch = run.archive
    for niche in arch.occupied()[:10]:
        c, r = arch.features[niche]
        assert niche_of(c, r, arch.bins) == niche
    assert arch.evaluations.max() >= 2  # some elites were re-evaluated when challenged
    re = run.reevaluate(games=50)
    occ = ~np.isnan(arch.fitness)
    assert np.array_equal(occ, ~np.isnan(re))
    assert np.corrcoef(arch.fitness[occ], re[occ])[0, 1] > 0.8


def test_bad_config_errors():
    with pytest.raises(ValueError, match="mutation_rate"):
        MapElites(MapElitesConfig(mutation_rate=1.5))
    with pytest.raises(ValueError, match="players"):
        MapElites(MapElitesConfig(players=7))


def test_map_metrics_and_distances():
    fit = np.full((4, 4), np.nan)
    fit[0, 1], fit[2, 3], fit[3, 3] = 5.0, 0.0, 10.0
    m = map_metrics(fit)
    assert m["coverage"] == 2 and m["mean_score_covered"] == 7.5 and m["best_score"] == 10 and m["best_niche"] == (3, 3)
    assert hamming_distance([1, 2, 3], [1, 5, 3]) == 1
    assert action_similarity([1, 2, 3, 4], [1, 2, 0, 0]) == 0.5
    assert best_partner_counts(np.array([[1, 5], [7, 2]])).tolist() == [1, 1]


def test_intra_and_cross_run_diversity():
    runs = []
    for seed in (7, 8):
        r = MapElites(MapElitesConfig(seed=seed, **SMALL))
        r.run()
        runs.append(r.archive)
    intra = intra_run_diversity(runs[0].fitness, runs[0].chromosomes, games=20, state_games=2, max_agents=8)
    assert intra["agents"] == 8 and intra["crosstable"].shape == (8, 8)
    assert intra["best_partner_counts"].sum() == 8
    assert 0 <= intra["mean_action_similarity"] <= 1 and 0 < intra["mean_hamming"] <= 15
    cross = cross_run_diversity(runs[0].fitness, runs[0].chromosomes, runs[1].fitness, runs[1].chromosomes,
                                games=20, state_games=2)
    assert cross["corresponding_niches"] > 5
    assert cross["mean_hamming"] > 10  # independent runs share few genes position by position
    assert 0 <= cross["mean_action_similarity"] <= 1


def test_selfplay_report_both_scorings():
    r = selfplay_report("IGGI", players=2, games=1000, seed=3)
    z, p = r.zero_on_loss, r.played_cards
    assert r.games == 1000 and sum(z.histogram) == 1000 and len(z.histogram) == 26
    assert z.mean <= p.mean and abs(p.mean - 16.4) < 0.8
    assert z.sem == pytest.approx(z.std / np.sqrt(1000))
    # every game lost with cards on the fireworks moves at least one point between the two scorings
    assert 0 < r.lost_all_lives_rate <= p.mean - z.mean
    assert p.perfect_rate == z.perfect_rate


def test_crosstable_diagonal_is_self_play():
    table = crosstable(["IGGI", "Piers", "LegalRandom"], players=2, games=400, seed=1)
    assert table.shape == (3, 3) and table[2, 2] < 1 and table[0, 2] < 2
    for i, name in enumerate(["IGGI", "Piers"]):
        sp = team_scores([name, name], 2000, seed=11).mean()
        assert abs(table[i, i] - sp) < 1.0


def test_adhoc_protocol_and_pool_matching():
    games = record_selfplay("Outer", 2, 10, seed=3)
    assert len(games) == 10 and all(len(g) > 10 for g in games)
    challenger = PoolMatchingChallenger(["IGGI", "Outer", "VanDenBergh"])
    challenger.observe(games)
    assert challenger.choice.name == "Outer" and max(challenger.agreement) > 0.7
    results = adhoc_evaluate(challenger, {"Outer": "Outer"}, players=2, trials=60, num_sets=6, seed=2)
    (res,) = results
    assert res.trials == 60 and len(res.scores) == 60
    assert abs(res.mean - res.team_selfplay_mean) < 2.5
    bad = adhoc_evaluate(FixedChallenger("LegalRandom"), {"Outer": "Outer"}, players=3, trials=30, num_sets=3, seed=2)
    assert bad[0].mean < res.mean


def test_cli(tmp_path, capsys):
    out = tmp_path / "me"
    assert main(["hanabi", "map-elites", "--out", str(out), "--individuals", "300", "--initial-random", "200",
                 "--games", "10", "--no-progress", "--reevaluate", "20"]) == 0
    summary = json.load(open(out / "summary.json"))
    assert summary["individuals"] == 300 and summary["coverage"] > 10 and "reevaluated" in summary
    assert (out / "map.png").stat().st_size > 1000
    assert main(["hanabi", "crosstable", "--archive", str(out / "checkpoint.npz"), "--top", "3", "--games", "20",
                 "--png", str(tmp_path / "ct.png"), "--json", str(tmp_path / "ct.json")]) == 0
    assert len(json.load(open(tmp_path / "ct.json"))["table"]) == 3
    assert main(["hanabi", "selfplay", "--agent", "Piers", "--players", "2", "--games", "50",
                 "--json", str(tmp_path / "sp.json")]) == 0
    assert "Piers" in capsys.readouterr().out
    assert main(["hanabi", "selfplay", "--agent", "Nobody"]) == 2
    assert main(["hanabi", "selfplay", "--players", "9"]) == 2
    assert "players must be in" in capsys.readouterr().err
    assert main(["hanabi", "adhoc", "--teams", "IGGI", "--trials", "10", "--sets", "2"]) == 0
    out2 = tmp_path / "me2"
    assert main(["hanabi", "map-elites", "--out", str(out2), "--individuals", "200", "--initial-random", "200",
                 "--games", "10", "--no-progress", "--seed", "5"]) == 0
    assert main(["hanabi", "diversity", str(out / "checkpoint.npz"), str(out2 / "checkpoint.npz"), "--top", "4",
                 "--games", "10", "--state-games", "1", "--json", str(tmp_path / "div.json")]) == 0
    div = json.load(open(tmp_path / "div.json"))
    assert div["intra"]["agents"] == 4 and div["cross"]["corresponding_niches"] > 0


def test_full_rule_base_and_runs_of_the_earlier_84_rules(tmp_path):
    # a run over the 135-rule base draws the new rules; a run declared with the earlier 84 rules never does
    new = MapElites(MapElitesConfig(seed=9, individuals=150, initial_random=150, games_per_eval=4, batch_size=50))
    new.run()
    assert NUM_RULES == 135 and new.archive.chromosomes[~np.isnan(new.archive.fitness)].max() >= 84
    path = str(tmp_path / "old.npz")
    old = MapElites(MapElitesConfig(seed=9, individuals=300, initial_random=100, games_per_eval=4, batch_size=50,
                                    num_rules=84), checkpoint=path)
    old.run(individuals=150)
    resumed = MapElites.load(path)
    assert resumed.config.num_rules == 84
    resumed.run()
    assert resumed.archive.chromosomes.max() < 84
    with pytest.raises(ValueError, match="rule base"):
        MapElites(MapElitesConfig(num_rules=200))
