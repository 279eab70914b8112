"""cfrkit: a toolkit for imperfect-information game research.

Layers, from the bottom: ``cfrkit.cards`` -> ``cfrkit.games`` (rules behind one protocol) ->
``cfrkit.policy`` -> ``cfrkit.abstraction`` and ``cfrkit.interop`` -> ``cfrkit.solvers`` -> ``cfrkit.value_nets`` ->
``cfrkit.poker`` (play layer) -> ``cfrkit.agents`` -> ``cfrkit.evaluation`` -> ``cfrkit.platform`` ->
``cfrkit.cli``; each imports only the layers below it (docs/ARCHITECTURE.md; the import-linter
contracts in pyproject.toml enforce it).
"""
__version__ = "0.1.0"
