"""DeepStack's value nets for heads-up no-limit hold'em: bucketing, situations, data, nets, leaf values.

See docs/deepstack.md ("Hold'em value nets").  The interface for re-solving agents::

    from cfrkit.value_nets.holdem import HoldemValueNets
    nets = HoldemValueNets.load("nets/")
    SubgameSolver(flop_tree, ranges, leaf_values=nets.leaf_values("turn"), ...)   # cfrkit.solvers.public
"""
from cfrkit.value_nets.holdem.nets import HoldemValueNets, train_street_net

__all__ = ["HoldemValueNets", "train_street_net"]
