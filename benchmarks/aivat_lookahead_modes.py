"""AIVAT with a blueprint's own values: deviation and CPU per deal for each lookahead mode (issue 27).

    python benchmarks/aivat_lookahead_modes.py blueprint:BP.npz,rule-based 5000 street,tables [SEED] [VALUES.npz]

Modes: ``tables`` (the value tables alone), ``one-step`` (one step of the other known agent's strategy),
``street`` (the rest of the street played out with both known strategies, the default for A^R and simple
agents; a turn-closing call valued by the river played out on ``river_cards`` cards; the owner's drawn
translations followed), ``street-main`` (``street`` without those two), ``street-follow`` (``street`` with the
river by the tables: the translations alone), ``street-river44`` (every river card), ``street-river`` (the river
played out on 12 cards, translations not followed), ``street-cv`` (``street-main`` with the equity control variate
on every sampled chance expectation, ``chance_cv``), ``street-cv45`` (the same with 45 flops and every turn and river
card), ``street-cv45o`` (and the owner's off-tree play in the lookahead, ``owner_fallback``),
``street-river-cv`` / ``street-river-cvo`` / ``street-river-cv45`` / ``street-river-cv45o`` (``street-river`` with
the control variate; and the owner's off-tree play; 45 flops and every turn card; both), ``street-cv45od`` /
``street-river-cv45od`` (those with the owner's drawn translations followed and a draw still to come valued by the
mean over its sizes, ``owner_draws``), ``street-cv45odt`` / ``street-cv45odt9`` (``street-cv45od`` with the turn
played out at the flop-closing calls, ``turn_exact``; the flop's expectation's played-out part over all its 45 flops
or the first 9, ``turn_flops``), ``street-river-cv45odt`` (``street-river-cv45od`` with the turn played out on 6
sampled turn cards, ``turn_cards``, the played-out part over 3 flops).
A pair without a blueprint takes the tables of VALUES.npz.  A mode with the suffix ``+fit`` (``street-main+fit``)
uses the tables against the other agent's abstract policy fitted on ``--fit N`` duplicate deals (default 2,000;
other agent objects, seed 1000 + SEED; :mod:`cfrkit.agents.opponent_values`), fitted once and reported on its own;
``--fit-file PATH`` keeps the fitted counts in PATH (npz) and reads them back when it exists (the same deals and
seed give the same counts, so only the fitting match's CPU is saved).
One duplicate match of DEALS deals per mode (seed SEED, default 7); prints per mode the CPU seconds,
hands per CPU second, the per-deal standard deviation of AIVAT and of duplicate (mbb/h) and variance x CPU per
deal (lower: narrower intervals per CPU second).
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from aivat_blueprint_values import _Keep  # noqa: E402

from cfrkit.agents.blueprint import BlueprintAgent  # noqa: E402
from cfrkit.agents.blueprint_values import BlueprintValueFunction  # noqa: E402
from cfrkit.agents.opponent_values import OpponentTablesValueFunction, fit_abstract_policy  # noqa: E402
from cfrkit.poker import RegistryError, make_agent, play_match  # noqa: E402
from cfrkit.poker.view import poker_view  # noqa: E402

#: the value function's options per mode (another blueprint is followed too, to compare its cost)
MODES = {"tables": dict(lookahead=False), "one-step": dict(street_from=4, blueprint_lookahead=True),
         "street": dict(blueprint_lookahead=True),
         # before the river boundary and the owner's translations (branch aivat-ar): the street mode of main
         "street-main": dict(blueprint_lookahead=True, follow_owner=False, river_exact=False),
         # the owner's translations followed, the river by the tables (BlueprintAgent.aivat_value_function's default)
         "street-follow": dict(blueprint_lookahead=True, river_exact=False),
         "street-river44": dict(blueprint_lookahead=True, river_cards=44),
         # the river played out (12 cards), the owner's translations not followed (branch aivat-80)
         "street-river": dict(blueprint_lookahead=True, follow_owner=False),
         "street-noleaves": dict(blueprint_lookahead=True, river_leaves=False),
         # street-main with the equity control variate on every sampled chance expectation (branch aivat-80b)
         "street-cv": dict(blueprint_lookahead=True, follow_owner=False, river_exact=False, chance_cv=True),
         # street-cv with 45 flops and every turn and river card (``flops`` covers the 45 turn cards)
         "street-cv45": dict(blueprint_lookahead=True, follow_owner=False, river_exact=False, chance_cv=True,
                             flops=45),
         # street-cv45 with the owner's off-tree play in the lookahead (``owner_fallback``)
         "street-cv45o": dict(blueprint_lookahead=True, follow_owner=False, river_exact=False, chance_cv=True,
                              flops=45, owner_fallback=True),
         # street-river with the control variate (the river's 12 cards too)
         "street-river-cv": dict(blueprint_lookahead=True, follow_owner=False, chance_cv=True),
         # street-river-cv with the owner's off-tree play in the lookahead
         "street-river-cvo": dict(blueprint_lookahead=True, follow_owner=False, chance_cv=True, owner_fallback=True),
         # street-river-cv with 45 flops and every turn card
         "street-river-cv45": dict(blueprint_lookahead=True, follow_owner=False, chance_cv=True, flops=45),
         # street-river-cv45 with the owner's off-tree play in the lookahead
         "street-river-cv45o": dict(blueprint_lookahead=True, follow_owner=False, chance_cv=True, flops=45,
                                    owner_fallback=True),
         # street-cv45o following the owner's drawn translations, a draw still to come valued by the mean over
         # its sizes (``owner_draws``, branch aivat-80c)
         "street-cv45od": dict(blueprint_lookahead=True, follow_owner=True, river_exact=False, chance_cv=True,
                               flops=45, owner_fallback=True, owner_draws=True),
         # street-river-cv45o with the same
         "street-river-cv45od": dict(blueprint_lookahead=True, follow_owner=True, chance_cv=True, flops=45,
                                     owner_fallback=True, owner_draws=True),
         # street-cv45od with the turn played out at every flop-closing call (``turn_exact``: every turn card, the
         # turn's lookahead on each), the flop's expectation's played-out part over all 45 flops (branch aivat-80e)
         "street-cv45odt": dict(blueprint_lookahead=True, follow_owner=True, river_exact=False, chance_cv=True,
                                flops=45, owner_fallback=True, owner_draws=True, turn_exact=True),
         # the same with that part over the first 9 of the 45 flops (``turn_flops``)
         "street-cv45odt9": dict(blueprint_lookahead=True, follow_owner=True, river_exact=False, chance_cv=True,
                                 flops=45, owner_fallback=True, owner_draws=True, turn_exact=True, turn_flops=9),
         # street-river-cv45od with the turn played out at the flop-closing calls on 6 sampled turn cards (the river
         # on 12 at each of their turn-closing calls), the flop's expectation's played-out part on 3 of its flops
         "street-river-cv45odt": dict(blueprint_lookahead=True, follow_owner=True, chance_cv=True, flops=45,
                                      owner_fallback=True, owner_draws=True, turn_exact=True, turn_flops=3,
                                      turn_cards=6)}


class _Stream(_Keep):
    """:class:`_Keep` that also appends each hand's AIVAT value and winnings of ``agents[0]`` (chips) and the CPU
    seconds so far to ``path`` as it goes, so a long run can be read before it ends (``--values-out``)."""

    def __init__(self, vf, path: str):
        super().__init__(vf)
        self._out = open(path, "w")
        self._out.write("aivat_chips payoff_chips cpu_s\n")
        self._t = time.process_time()

    def hand_end(self, hand) -> None:
        super().hand_end(hand)
        sign = 1.0 if hand.seat_of_player[0] == 0 else -1.0
        self._out.write(f"{self.values[-1]!r} {sign * float(hand.returns[0])!r} {time.process_time() - self._t:.2f}\n")
        self._out.flush()


def _load_fit(path, tag: str):
    """The fitted counts saved by :func:`_save_fit` at ``path`` under ``tag`` (the pair, fitting deals and seed),
    None when there is no such file; a file saved under another tag is refused in one line."""
    if not path or not os.path.exists(path):
        return None
    try:
        z = np.load(path, allow_pickle=False)
        if not hasattr(z, "files"):
            raise ValueError("not an npz archive")
    except (OSError, ValueError) as exc:
        raise SystemExit(f"--fit-file {path}: not a fitted-counts file ({exc})") from None
    with z:
        if "_tag" not in z.files or str(z["_tag"]) != tag:
            raise SystemExit(f"--fit-file {path}: fitted for {z['_tag'] if '_tag' in z.files else 'unknown'}, "
                             f"not {tag}")
        counts = {0: {}, 1: {}}
        for k in z.files:
            if k != "_tag":
                seat, node = k.split("_")
                counts[int(seat)][int(node)] = z[k]
    return counts


def _save_fit(path, counts, tag: str) -> None:
    """``counts[seat][node]`` to ``path`` (npz; keys ``seat_node``, and ``_tag``), so later runs skip the fitting
    match."""
    if path:
        np.savez(path, _tag=np.array(tag), **{f"{s}_{n}": w for s, c in counts.items() for n, w in c.items()})


def fit_tag(specs, deals: int, seed: int) -> str:
    """What a fitted-counts file is for: the pair, the fitting deals and the match seed they derive from."""
    return f"{','.join(specs)} deals={int(deals)} seed={int(seed)}"


def _parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="usage example: blueprint:BP.npz,rule-based 5000 street,tables 7")
    ap.add_argument("pair", help="two agent specs, comma-separated (one a blueprint, or give VALUES)")
    ap.add_argument("deals", type=int, help="duplicate deals per mode (> 0)")
    ap.add_argument("modes", help=f"comma-separated, each among {sorted(MODES)}, optionally with +fit")
    ap.add_argument("seed", type=int, nargs="?", default=7, help="match seed (default 7)")
    ap.add_argument("values", nargs="?", default=None, help="a blueprint whose tables value a pair without one")
    ap.add_argument("--fit", type=int, default=2000, metavar="N", help="fitting deals of a +fit mode (default 2000)")
    ap.add_argument("--fit-file", default=None, metavar="PATH", help="keep / reuse the fitted counts (npz)")
    ap.add_argument("--values-out", default=None, metavar="PATH",
                    help="append each hand's AIVAT value, winnings (chips of the first agent) and CPU s to PATH "
                         "as the match goes (one mode only), to read a long run before it ends")
    args = ap.parse_args(argv)
    if args.deals <= 0 or args.fit <= 0:
        ap.error("deals and --fit must be positive")
    bad = [m for m in args.modes.split(",") if m.removesuffix("+fit") not in MODES]
    if bad:
        ap.error(f"unknown mode(s) {bad}; modes are {sorted(MODES)}")
    if args.values_out and len(args.modes.split(",")) != 1:
        ap.error("--values-out takes one mode")
    if args.values_out and not os.path.isdir(os.path.dirname(os.path.abspath(args.values_out))):
        ap.error(f"--values-out: no directory {os.path.dirname(os.path.abspath(args.values_out))!r}")
    return args


def main() -> None:
    args = _parse(sys.argv[1:])
    specs, deals, modes, seed = args.pair.split(","), args.deals, args.modes.split(","), args.seed
    fit_deals, fit_file = args.fit, args.fit_file
    if len(specs) != 2:
        raise SystemExit(f"pair: two agent specs, got {len(specs)}")
    try:
        agents = [make_agent(s, game="holdem", seed=i + 1) for i, s in enumerate(specs)]
        owner = next((a for a in agents if isinstance(a, BlueprintAgent)), None)
        if owner is None and args.values:
            owner = make_agent("blueprint:" + args.values, game="holdem", seed=0)
    except RegistryError as exc:
        raise SystemExit(str(exc)) from None
    if owner is None:
        raise SystemExit("need a blueprint in the pair (or VALUES, a blueprint file, after the seed)")
    bb = 1000.0 / float(owner.game.definition.big_blind)  # chips -> mbb
    view = poker_view(owner.game)
    game = view.game
    counts = None
    for mode in modes:
        opts = MODES[mode.removesuffix("+fit")]
        if mode.endswith("+fit"):
            other = next(i for i, a in enumerate(agents) if a is not owner)
            if counts is None:
                t = time.process_time()
                tag = fit_tag(specs, fit_deals, seed)
                counts = _load_fit(fit_file, tag)
                if counts is None:
                    twins = [make_agent(s, game="holdem", seed=100 + i) for i, s in enumerate(specs)]
                    counts = fit_abstract_policy(twins[1 - other], twins[other], fit_deals, seed=1000 + seed)
                    del twins
                    _save_fit(fit_file, counts, tag)
                print(json.dumps({"fit_deals": fit_deals, "fit_cpu_s": round(time.process_time() - t, 1),
                                  "nodes": {s: len(c) for s, c in counts.items()}}), flush=True)
            t = time.process_time()
            vf = OpponentTablesValueFunction(owner.blueprint, view, owner.translate_raise, agents[other], counts,
                                             **opts)
            build = time.process_time() - t
        else:
            vf, build = BlueprintValueFunction(owner.blueprint, view, owner.translate_raise, **opts), 0.0
        keep = _Stream(vf, args.values_out) if args.values_out else _Keep(vf)
        t = time.process_time()
        res = play_match(game, agents, deals, seed=seed, duplicate=True, observers=[keep], time_limit=float("inf"))
        cpu = time.process_time() - t
        per_deal = (np.asarray(keep.values) * bb).reshape(-1, 2).mean(1)
        dup = (res.payoffs[:, 0] * bb).reshape(-1, 2).mean(1)
        print(json.dumps({"pair": specs, "mode": mode, "deals": deals, "cpu_s": round(cpu, 1),
                          "tables_build_cpu_s": round(build, 1),
                          "hands_per_cpu_s": round(2 * deals / cpu, 1), "std_deal_aivat": round(float(per_deal.std()), 0),
                          "std_deal_dup": round(float(dup.std()), 0), "mean": round(float(per_deal.mean()), 1),
                          "var_x_cpu_per_deal": round(float(per_deal.var() * cpu / deals))}), flush=True)


if __name__ == "__main__":
    main()
