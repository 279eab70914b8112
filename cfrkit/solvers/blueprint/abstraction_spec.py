"""Card abstractions by name, and a fingerprint that works for any object of the interface.

Specs: ``ehs:169,50,50,50`` (the E[HS] percentile stand-in, :mod:`cfrkit.abstraction.ehs_abstraction`),
``emd:DIR`` (a bucket table built by ``cfrkit abstraction build``, loaded with
``cfrkit.abstraction.load_abstraction``), ``default`` (``cfrkit.abstraction.default_abstraction()``).
"""
from __future__ import annotations

import hashlib

import numpy as np

from cfrkit.solvers.blueprint.betting_tree import BlueprintError

DEFAULT_ABSTRACTION = "ehs:169,50,50,50"
#: the E[HS] abstraction of each bucket counts built so far (see abstraction_from_spec)
_EHS: dict = {}

#: fixed boards on which the fingerprint reads every round's buckets
_PROBE_BOARDS = ((), (0, 17, 34), (51, 30, 9), (0, 17, 34, 45), (51, 30, 9, 12), (0, 17, 34, 45, 22),
                 (51, 30, 9, 12, 40))


def abstraction_from_spec(spec: str):
    """Build the card abstraction named by ``spec`` (see the module docstring)."""
    text = str(spec).strip()
    if text.startswith("ehs:") or text == "ehs":
        from cfrkit.abstraction.ehs_abstraction import EHSAbstraction

        counts = text[4:] or "169,50,50,50"
        try:
            buckets = tuple(int(x) for x in counts.split(","))
            # a pure function of the counts (its tables are fixed, its caches only remember): one instance per
            # counts and process, so blueprints of one abstraction (two in a match) share the boards' buckets
            hit = _EHS.get(buckets)
            if hit is None:
                hit = _EHS[buckets] = EHSAbstraction(buckets)
            return hit
        except ValueError as exc:
            raise BlueprintError(f"card abstraction {spec!r}: {exc}") from None
    if text.startswith("emd:") or text == "default":
        import cfrkit.abstraction as package

        name = "default_abstraction" if text == "default" else "load_abstraction"
        loader = getattr(package, name, None)
        if loader is None:
            raise BlueprintError(f"card abstraction {spec!r} needs cfrkit.abstraction.{name}, which this build "
                                 f"lacks; use ehs:169,50,50,50")
        abstraction = loader() if text == "default" else loader(text[4:])
        check_holdem_abstraction(abstraction, spec)
        return abstraction
    raise BlueprintError(f"unknown card abstraction {spec!r}; use ehs:169,B,B,B, emd:DIR or default")


def check_holdem_abstraction(abstraction, name) -> None:
    """Raise :class:`BlueprintError` unless ``abstraction`` covers the four rounds of the full 52-card deck."""
    rounds = getattr(abstraction, "num_rounds", 4)
    params = getattr(abstraction, "params", None)
    if rounds != 4:
        plural = "" if rounds == 1 else "s"
        raise BlueprintError(f"card abstraction {name!r} has {rounds} round{plural}; heads-up hold'em blueprints "
                             f"need 4 (preflop, flop, turn, river)")
    if params is not None and not getattr(params, "full_deck", True):
        raise BlueprintError(f"card abstraction {name!r} is for a {params.num_ranks}-rank x {params.num_suits}-suit "
                             f"deck; blueprints need the 52-card deck")


def abstraction_fingerprint(abstraction) -> str:
    """Digest of the bucket counts and of the buckets of every hand on fixed probe boards.

    Two abstractions with equal fingerprints bucket those boards identically; a checkpoint trained with
    one is refused with another.
    """
    h = hashlib.sha256()
    for r in range(4):
        h.update(int(abstraction.num_buckets(r)).to_bytes(8, "little"))
    for board in _PROBE_BOARDS:
        r = {0: 0, 3: 1, 4: 2, 5: 3}[len(board)]
        h.update(np.asarray(abstraction.buckets_for_board(r, list(board)), dtype=np.int32).tobytes())
    return h.hexdigest()[:16]
