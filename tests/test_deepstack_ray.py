"""Data generation over Ray (a local Ray instance stands in for a cluster) gives the same shards as processes."""
import numpy as np
import pytest

from cfrkit.value_nets.data import generate_dataset, load_dataset

ray = pytest.importorskip("ray")  # a test dependency (setup.py extras "test" and "distributed")


def test_ray_shards_equal_process_shards(tmp_path):
    kwargs = dict(num_samples=30, shard_size=10, iterations=40, skip=20, seed=7)
    # a small local instance (one worker, no dashboard) keeps the test quick; generate_dataset joins it
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        generate_dataset(str(tmp_path / "ray"), "leduc_nolimit", ray_address="local", **kwargs)
    finally:
        ray.shutdown()
    generate_dataset(str(tmp_path / "proc"), "leduc_nolimit", workers=1, **kwargs)
    a, b = load_dataset(str(tmp_path / "ray")), load_dataset(str(tmp_path / "proc"))
    assert len(a["contribs"]) == 30
    for key in ("boards", "contribs", "ranges", "values"):
        np.testing.assert_array_equal(a[key], b[key])
