"""`benchmarks/blueprint.py curve` keeps each finished point and reuses it, so an interrupted curve resumes by
points; a snapshot newer than its kept point is replayed."""
import os

from cfrkit.solvers.blueprint.betting_tree import build_betting_tree
from cfrkit.solvers.blueprint.trainer import BlueprintTrainer


def test_a_kept_curve_point_is_reused_and_a_newer_snapshot_replayed(benchmark_script, tmp_path, monkeypatch):
    bench = benchmark_script("blueprint")
    game = "holdem(stacks=400;400)"
    trainer = BlueprintTrainer(game, "1", 1, abstraction="ehs:169,2,2,2", seed=0, tree=build_betting_tree(game, "1", 1))
    trainer.iterate(2)
    path = str(tmp_path / "bp.npz")
    trainer.save(path)
    points = str(tmp_path / "points")
    task = (path, "always-call", 4, 5, points)
    first = bench._curve_point(task)
    assert first["deals"] == 4 and len(first["dup_per_deal"]) == 4
    assert os.path.exists(bench._point_file(points, path, "always-call", 4, 5))

    played = []
    real = bench._play_curve_point
    monkeypatch.setattr(bench, "_play_curve_point", lambda *a: played.append(a) or real(*a))
    assert bench._curve_point(task) == first and played == []  # read back, not replayed
    assert bench._curve_point((path, "always-call", 6, 5, points))["deals"] == 6 and len(played) == 1  # other deals

    trainer.iterate(2)
    trainer.save(path)
    os.utime(path, (os.path.getmtime(path) + 10,) * 2)  # the snapshot rewritten after its point was kept
    again = bench._curve_point(task)
    assert len(played) == 2 and again["iterations"] == 4 and first["iterations"] == 2
