"""Fuzzing of every file loader: bit flips, truncation and garbage give the documented error type only.

Each loader is given a valid file and then mutated copies of it (seeded); a mutated file either loads
(the change hit bytes that do not matter) or raises the loader's documented error
(:class:`~cfrkit.policy.PolicyFileError`, :class:`~cfrkit.value_nets.model.ValueNetFileError`,
``ValueError`` for the SymmToM JSON checkpoint).  Anything else -- ``zlib.error``, ``IndexError``, a
segfault -- fails the test.  The compiled-tree cache must in addition never hand a damaged tree to
the kernels: ``compile_game`` rebuilds it and the exploitability stays exact.
"""
from __future__ import annotations

import os
import random
import shutil

import numpy as np
import pytest

from cfrkit.policy import PolicyFileError, TabularPolicy

MUTATIONS_PER_LOADER = int(os.environ.get("CFRKIT_FUZZ_MUTATIONS", "60"))


def _mutations(data: bytes, rng: random.Random, count: int):
    """``count`` damaged copies of ``data``: bit flips, truncations, garbage spans, appended junk."""
    n = len(data)
    for i in range(count):
        kind = i % 5
        b = bytearray(data)
        if kind == 0:  # a few random bit flips
            for _ in range(rng.randint(1, 8)):
                k = rng.randrange(n)
                b[k] ^= 1 << rng.randrange(8)
        elif kind == 1:  # truncation
            b = b[: rng.randrange(n)]
        elif kind == 2:  # a span overwritten with garbage
            lo = rng.randrange(n)
            hi = min(n, lo + rng.randint(1, 64))
            b[lo:hi] = bytes(rng.randrange(256) for _ in range(hi - lo))
        elif kind == 3:  # a bit flip in the last 200 bytes (zip central directory / end record)
            k = max(0, n - 1 - rng.randrange(min(n, 200)))
            b[k] ^= 1 << rng.randrange(8)
        else:  # pure garbage of a random length
            b = bytearray(rng.randrange(256) for _ in range(rng.randint(0, 2048)))
        yield bytes(b)


def _fuzz(tmp_path, path: str, loader, errors, seed: int, count: int = MUTATIONS_PER_LOADER):
    with open(path, "rb") as f:
        original = f.read()
    loader(path)  # the intact file loads
    rng = random.Random(seed)
    outcomes = {"loaded": 0, "refused": 0}
    target = str(tmp_path / ("mutant" + os.path.splitext(path)[1]))
    for mutant in _mutations(original, rng, count):
        with open(target, "wb") as f:
            f.write(mutant)
        try:
            loader(target)
            outcomes["loaded"] += 1
        except errors:
            outcomes["refused"] += 1
    assert outcomes["refused"] > count // 2, outcomes  # most damage is detected, none crashes
    return outcomes


def test_fuzz_policy_file(tmp_path):
    from cfrkit.solvers import CFRSolver

    path = str(tmp_path / "policy.npz")
    CFRSolver("kuhn", algorithm="cfr+").run(20).average_policy().save(path)
    _fuzz(tmp_path, path, lambda p: TabularPolicy.load(p, "kuhn"), PolicyFileError, seed=1)


def test_fuzz_cfr_checkpoint(tmp_path):
    from cfrkit.solvers import CFRSolver

    path = str(tmp_path / "cfr.npz")
    CFRSolver("kuhn", algorithm="dcfr").run(20).save(path)
    _fuzz(tmp_path, path, lambda p: CFRSolver.load(p, "kuhn"), PolicyFileError, seed=2)


@pytest.mark.parametrize("algorithm", ["es", "os"])
def test_fuzz_mccfr_checkpoint(tmp_path, algorithm):
    from cfrkit.solvers.tabular import mccfr

    cls = mccfr.ExternalSamplingMCCFR if algorithm == "es" else mccfr.OutcomeSamplingMCCFR
    path = str(tmp_path / "mccfr.npz")
    cls("kuhn", seed=3).run(50, progress=False).save(path)
    _fuzz(tmp_path, path, lambda p: mccfr.load_mccfr(p, "kuhn"), PolicyFileError, seed=3)


def test_fuzz_compiled_tree_cache(tmp_path):
    """A damaged cache file is refused by the loader, and compile_game rebuilds the exact tree."""
    from cfrkit.evaluation import exploitability
    from cfrkit.solvers.tabular import compiled

    cache = str(tmp_path / "cache")
    compiled._MEMORY_CACHE.clear()
    tree = compiled.compile_game("kuhn", cache_dir=cache)
    key = tree.game_string
    files = [os.path.join(cache, f) for f in os.listdir(cache)]
    assert len(files) == 1
    path = files[0]
    reference = exploitability(tree, np.full(tree.num_slots, 0.5))
    _fuzz(tmp_path, path, lambda p: compiled._load_tree(p, key), (PolicyFileError, compiled.GameError), seed=4)
    # through compile_game: every mutant is either loaded intact or rebuilt, never given to a kernel damaged
    rng = random.Random(5)
    with open(path, "rb") as f:
        original = f.read()
    for mutant in _mutations(original, rng, 20):
        with open(path, "wb") as f:
            f.write(mutant)
        compiled._MEMORY_CACHE.clear()
        rebuilt = compiled.compile_game("kuhn", cache_dir=cache)
        assert exploitability(rebuilt, np.full(rebuilt.num_slots, 0.5)) == pytest.approx(reference, abs=1e-12)


def test_fuzz_datagen_shard(tmp_path):
    from cfrkit.value_nets.data import load_shard, make_shard
    from cfrkit.value_nets.model import ValueNetFileError

    path = str(tmp_path / "shard_00000.npz")
    make_shard(path, "leduc", 3, seed=6, iterations=8, skip=2, pots="reachable")
    _fuzz(tmp_path, path, load_shard, ValueNetFileError, seed=6)


def test_fuzz_value_net_checkpoint(tmp_path):
    from cfrkit.value_nets.model import ValueNet, ValueNetFileError, load_checkpoint, save_checkpoint

    path = str(tmp_path / "net.pt")
    save_checkpoint(path, ValueNet(6, (8, 8)), {"game": "leduc"})
    # torch stores tensors uncompressed: a flipped weight bit may load, a damaged structure must not crash
    outcomes = _fuzz(tmp_path, path, load_checkpoint, ValueNetFileError, seed=7)
    assert outcomes["refused"] >= 1


def test_fuzz_map_elites_checkpoint(tmp_path):
    from cfrkit.agents.hanabi.map_elites import MapElites, MapElitesConfig

    path = str(tmp_path / "checkpoint.npz")
    run = MapElites(MapElitesConfig(individuals=64, initial_random=32, games_per_eval=2, batch_size=32, bins=4,
                                    chromosome_length=5, seed=8), checkpoint=path)
    run.run(progress=False)
    _fuzz(tmp_path, path, MapElites.load, PolicyFileError, seed=8)


def test_fuzz_symmtom_checkpoint(tmp_path):
    from cfrkit.evaluation.symmtom_eval import _load_checkpoint, _save_checkpoint

    path = str(tmp_path / "table1.json")
    _save_checkpoint(path, {"ge|n=2": {"mean": 1.5, "std": 0.25}})
    _fuzz(tmp_path, path, _load_checkpoint, ValueError, seed=9)


def test_bit_flipped_policy_is_one_line_in_the_cli(tmp_path, capsys):
    """Issue 17 item 15: a bit-flipped .npz raised zlib.error from `cfrkit exploitability`."""
    from cfrkit.cli import main
    from cfrkit.solvers import CFRSolver

    path = str(tmp_path / "p.npz")
    CFRSolver("kuhn").run(10).save(path)
    data = bytearray(open(path, "rb").read())
    # flip bits in the middle of the deflate stream of the largest member
    for k in range(len(data) // 3, len(data) // 3 + 40, 7):
        data[k] ^= 0x10
    shutil.copy(path, path + ".orig")
    with open(path, "wb") as f:
        f.write(bytes(data))
    assert main(["exploitability", "kuhn", path]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unreadable cfrkit file" in err or "corrupted" in err
    assert main(["solve", "kuhn", "-n", "20", "-o", path, "--no-progress"]) == 2
