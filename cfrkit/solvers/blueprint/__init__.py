"""CFR+ blueprints of heads-up no-limit hold'em (OpenHoldem's A^C; see ``docs/blueprint.md``).

:mod:`betting_tree` builds the action abstraction's betting tree as flat arrays, :mod:`trainer` runs
public chance sampling CFR+ on it (``pyx/blueprint_cfr.pyx``) with threads or Ray and checkpoints,
:mod:`mccfr` is the measured alternative (external-sampling MCCFR with regret-based pruning, same files),
:mod:`pluribus` the trainer at Pluribus' recipe (ES-MCCFR, Linear-CFR discounting, pruning, int32 regrets, threads),
:mod:`strategy` reads the average strategy that :class:`cfrkit.agents.blueprint.BlueprintAgent` plays.
"""
from cfrkit.solvers.blueprint.betting_tree import BettingTree, BlueprintError, build_betting_tree
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy
from cfrkit.solvers.blueprint.trainer import BlueprintTrainer, TrainConfig, train
from cfrkit.solvers.blueprint.mccfr import ESMCCFRTrainer
from cfrkit.solvers.blueprint.pluribus import PluribusTrainer

__all__ = ["BettingTree", "BlueprintError", "build_betting_tree", "BlueprintStrategy", "BlueprintTrainer",
           "ESMCCFRTrainer", "PluribusTrainer", "TrainConfig", "train"]
