"""Blueprint training on Ray actors (a local Ray instance stands in for a cluster) equals the in-process run."""
import numpy as np
import pytest

from cfrkit.solvers.blueprint.betting_tree import build_betting_tree
from cfrkit.solvers.blueprint.trainer import BlueprintTrainer

ray = pytest.importorskip("ray")  # a test dependency (setup.py extras "test" and "distributed")


def test_ray_actors_give_the_in_process_result():
    tree = build_betting_tree("holdem(stacks=400;400)", "0.5+1", 1)
    kwargs = dict(game="holdem(stacks=400;400)", raise_cap=1, abstraction="ehs:169,5,5,5", seed=4, tree=tree,
                  boards_per_iteration=2, workers=1)
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        remote = BlueprintTrainer(ray_address="local", **kwargs)
        remote.iterate(2)
        remote.close()
    finally:
        ray.shutdown()
    local = BlueprintTrainer(**kwargs)
    local.iterate(2)
    assert remote.stats.nodes == local.stats.nodes > 0
    np.testing.assert_array_equal(remote.regrets, local.regrets)
    np.testing.assert_array_equal(remote.strategy_sum, local.strategy_sum)
    assert (local.strategy_sum > 0).any()
