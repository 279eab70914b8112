"""Range solvers on public trees of poker subgames (DeepStack's lookahead, postflop-solver's spots).

:mod:`games` gives the public view of a poker game (Leduc, hold'em from any protocol state, hand-built
river spots); :mod:`tree` builds public trees and solves them with range-vectorised CFR+/DCFR on numpy
or torch (:class:`~cfrkit.solvers.public.tree.RangeSolver`); :mod:`flat_range_cfr` runs the same
algorithm compiled to C for hold'em river and turn trees; :mod:`resolving` re-solves with the CFR-D
gadget; :mod:`terminal_values` computes fold and showdown values with card removal.
"""
