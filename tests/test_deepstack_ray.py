"""Data generation over Ray (a local Ray instance stands in for a cluster) gives the same shards as processes."""
import numpy as np
import pytest

from cfrkit.value_nets.data import generate_dataset, load_dataset

ray = pytest.importorskip("ray")  # a test dependency (setup.py extras "test" and "distributed")


@pytest.fixture(scope="module")
def local_ray():
    """One small local instance for the module (one worker, no dashboard; starting Ray takes tens of seconds here),
    declaring one logical GPU: Ray schedules on resources, so tasks can request it without CUDA."""
    ray.init(num_cpus=1, num_gpus=1, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_shards_equal_process_shards(tmp_path, local_ray):
    kwargs = dict(num_samples=30, shard_size=10, iterations=40, skip=20, seed=7)
    generate_dataset(str(tmp_path / "ray"), "leduc_nolimit", ray_address="local", **kwargs)   # joins the instance
    generate_dataset(str(tmp_path / "proc"), "leduc_nolimit", workers=1, **kwargs)
    a, b = load_dataset(str(tmp_path / "ray")), load_dataset(str(tmp_path / "proc"))
    assert len(a["contribs"]) == 30
    for key in ("boards", "contribs", "ranges", "values"):
        np.testing.assert_array_equal(a[key], b[key])


def test_gpus_per_task_reaches_the_ray_tasks(tmp_path, local_ray):
    from cfrkit.value_nets.data import _ray_remote, run_shard_jobs
    from cfrkit.value_nets.holdem.datagen import default_gpus_per_task

    def _gpu_ids_job(path):   # local: pickled by value (the workers cannot import the test module)
        """A shard job that records the GPUs Ray gave its task."""
        import ray as ray_in_task

        with open(path, "w") as f:
            f.write(",".join(str(g) for g in ray_in_task.get_gpu_ids()))

    assert default_gpus_per_task("torch", "cuda") == 1.0 and default_gpus_per_task("torch", "cuda:1") == 1.0
    assert default_gpus_per_task("torch", "cpu") == 0.0 and default_gpus_per_task("board", "cuda") == 0.0
    assert default_gpus_per_task("torch", None) == 0.0
    assert _ray_remote(_gpu_ids_job, 0.5)._default_options.get("num_gpus") == 0.5
    with_gpu, without = str(tmp_path / "gpu.txt"), str(tmp_path / "cpu.txt")
    run_shard_jobs([(with_gpu,)], _gpu_ids_job, 1, ray_address="local", progress=False, gpus_per_task=0.5)
    run_shard_jobs([(without,)], _gpu_ids_job, 1, ray_address="local", progress=False)
    assert open(with_gpu).read() == "0"       # the task held the GPU (CUDA_VISIBLE_DEVICES=0 inside it)
    assert open(without).read() == ""          # no num_gpus: Ray gives the task no GPU
    with pytest.raises(ValueError, match="gpus_per_task must be >= 0"):
        run_shard_jobs([(without,)], _gpu_ids_job, 1, workers=1, progress=False, gpus_per_task=-1)
