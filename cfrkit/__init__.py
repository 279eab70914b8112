"""cfrkit: a toolkit for imperfect-information game research.

Layers (each depends only on those above it in this list):
``cfrkit.games`` (rules behind one protocol) -> ``cfrkit.solvers`` (CFR family, compiled trees) ->
``cfrkit.evaluation`` (best response, exploitability, matches) and ``cfrkit.agents``.
"""
__version__ = "0.1.0"
