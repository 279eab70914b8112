"""The average strategy of a trained blueprint: what an agent plays (tree, layout, strategy sums, abstraction)."""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from cfrkit.solvers.blueprint.abstraction_spec import abstraction_fingerprint, abstraction_from_spec
from cfrkit.solvers.blueprint.betting_tree import BettingTree, BlueprintError
from cfrkit.solvers.blueprint.trainer import check_abstraction, read_checkpoint, tree_from_arrays


class BlueprintStrategy:
    """Normalised strategy sums per (betting node, bucket): ``probabilities(node, buckets)``."""

    def __init__(self, tree: BettingTree, strategy_sum: np.ndarray, abstraction, header: Optional[Dict] = None):
        self.tree = tree
        self.abstraction = abstraction
        self.num_buckets = tuple(int(abstraction.num_buckets(r)) for r in range(4))
        self.slot, total = tree.slots(self.num_buckets)
        strategy_sum = np.ascontiguousarray(strategy_sum, dtype=np.float32)
        if strategy_sum.shape != (total,):
            raise BlueprintError(f"strategy sums of shape {strategy_sum.shape} do not fit the tree and abstraction "
                                 f"({total} entries)")
        self.strategy_sum = strategy_sum
        self.header = dict(header or {})

    @classmethod
    def from_trainer(cls, trainer) -> "BlueprintStrategy":
        """The trainer's current average strategy (CFR+ / ES: shares its arrays, no copy; pluribus: the full-layout
        array of its files, a copy)."""
        return cls(trainer.tree, trainer.full_strategy(), trainer.abstraction, trainer.header())

    @classmethod
    def load(cls, path: str, abstraction=None) -> "BlueprintStrategy":
        """Load a checkpoint or a strategy-only snapshot.  ``abstraction`` (object or spec) defaults to the one
        named in the file; a different one is refused (:class:`BlueprintError`)."""
        header, data = read_checkpoint(path, arrays=("strategy_sum",))
        tree = tree_from_arrays(header, data)
        spec = abstraction if abstraction is not None else header["abstraction"]
        if isinstance(spec, str) and spec.startswith("object:"):
            raise BlueprintError(f"{path} was trained with an abstraction object; pass the same abstraction")
        ab = abstraction_from_spec(spec) if isinstance(spec, str) else spec
        check_abstraction(path, header, abstraction_fingerprint(ab), [ab.num_buckets(r) for r in range(4)])
        return cls(tree, data["strategy_sum"], ab, header)

    def probabilities(self, node: int, buckets) -> np.ndarray:
        """float64[len(buckets), actions of node]: average strategy (uniform where never reached)."""
        from cfrkit._kernels import blueprint_cfr

        b = np.asarray(buckets, dtype=np.int32)
        r = int(self.tree.round[node])
        if b.size and (b.min() < 0 or b.max() >= self.num_buckets[r]):
            raise BlueprintError(f"bucket outside 0..{self.num_buckets[r] - 1} for round {r}")
        nodes = np.full(b.size, int(node), dtype=np.int32)
        out = blueprint_cfr.average_strategy_rows(self.strategy_sum, self.slot, self.tree.num_children, nodes, b)
        return out[:, :int(self.tree.num_children[node])]
