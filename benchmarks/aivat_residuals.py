"""Where AIVAT's remaining variance comes from (issue 27): its value per hand split into one term per step.

    python benchmarks/aivat_residuals.py blueprint:BP.npz,rule-based DEALS [SEED] [--set OPTION=VALUE ...]

AIVAT's value telescopes: with ``v(root) = E_c v(deal)``,

    u~ = v(root) + sum over steps of a residual:
         a chance run h -> h c:              E_c v(h c) - v(h)
         a known mixed decision h -> h a:    sum_a' sigma(a' | h) v(h a') - v(h)
         any other step (a pure or unknown decision, the last step to the terminal):  v(h a) - v(h)

(at a terminal ``v`` is the winnings), so every term is zero for the true expected value and the variance of
``u~`` is the variance of the sum of these residuals.  This script plays one duplicate match with the
first blueprint's value function (the observer's default), records every step's residual with its kind
(``chance`` and the street dealt; ``decision``, the acting agent and the street; ``pure``), checks the
identity hand by hand (what does not add up, a value that changed between steps, is the kind ``drift``),
and prints per kind the variance of the per-deal sum of its residuals (seat-averaged,
mbb^2) and its share of the per-deal variance of AIVAT (the shares add to 1 with the covariances, also printed
as their sum).
"""
import argparse
import json
import time
from collections import defaultdict

import numpy as np

from aivat_lookahead_modes import _load_fit, _save_fit, fit_tag

from cfrkit.agents.blueprint import BlueprintAgent
from cfrkit.agents.opponent_values import OpponentTablesValueFunction, fit_abstract_policy
from cfrkit.evaluation.aivat import AivatObserver
from cfrkit.poker import make_agent, play_match
from cfrkit.poker.view import poker_view

_STREETS = ("preflop", "flop", "turn", "river")


class ResidualObserver(AivatObserver):
    """AIVAT (the same terms as :class:`AivatObserver`) plus each step's residual (module doc), per hand."""

    def __init__(self, value_function=None, agent=None, names=None, split_lookahead: bool = False):
        super().__init__(value_function, agent)
        self.names = names or {}
        self.split_lookahead = bool(split_lookahead)
        self.rows = []  # per hand: {kind: summed residual (chips of agents[0])}, and the AIVAT value

    def hand_start(self, hand):
        super().hand_start(hand)
        self._open = None  # (kind, v(h), expectation or None): the step in progress
        self._res = defaultdict(float)
        self._corr = 0.0
        self._root = None

    def _close(self, v_next):
        if self._open is not None:
            kind, vh, expect = self._open
            self._res[kind] += (expect if expect is not None else v_next) - vh
        self._open = None

    def before_chance(self, hand, state):
        vf = self.vf
        expect = float(vf.chance_expectation(state))
        if self._root is None:
            self._root = expect
            vh = expect
        else:
            vh = float(vf.value(state))
        self._close(vh)
        street = len(state.board)
        self._open = ("chance " + ("deal" if not state.hole[0] else _STREETS[{0: 1, 3: 2, 4: 3}[street]]), vh, expect)
        self._expect = expect

    def after_chance(self, hand, state):
        self._corr += float(self.vf.value(state)) - self._expect

    def decision(self, hand, state, seat):
        self._vpre = float(self.vf.value(state)) if getattr(self.vf, "translation_expectation", None) else None
        super().decision(hand, state, seat)

    def _translation(self, state, expect):
        # the agent's draw of a translation: a step from v before the draw to v after it
        self._close(self._vpre)
        v_post = float(self.vf.value(state))
        self._open = ("translation", self._vpre, expect)
        self._corr += v_post - expect

    def action(self, hand, state, seat, action):
        pending = self._pending
        self._pending = None
        vf = self.vf
        vh = float(vf.value(state))
        self._close(vh)
        who = self.names.get(id(getattr(hand.seat_agents[seat], "agent", hand.seat_agents[seat])), f"seat{seat}")
        street = _STREETS[int(state.round)]
        if pending is None:
            self._open = (f"pure {who} {street}", vh, None)
            return
        actions, row = pending
        support = [(int(a), float(q)) for a, q in zip(actions, row) if q > 0]
        if len(support) == 1:
            self._open = (f"pure {who} {street}", vh, None)
            return
        if self.split_lookahead:
            who += self._lookahead_tag(state, seat, actions, row)
        values = {}
        for a, q in support:
            child = state.clone()
            child.apply_action(a)
            values[a] = float(vf.value(child))
        expect = sum(q * values[a] for a, q in support)
        self._corr += values[int(action)] - expect
        self._open = (f"decision {who} {street}", vh, expect)

    def _lookahead_tag(self, state, seat, actions, row) -> str:
        """`` (lookahead differs)`` when the street lookahead's policy for the owner's seat (its ``_own``) gives
        another strategy at ``state`` than the agent's own (``--split-lookahead``; translation draws, off-tree
        play), ``""`` when it agrees or there is none."""
        own = getattr(self.vf, "_own", [None, None])[seat]
        if own is None:
            return ""
        got = own(state, None, self.vf._memo)
        if got is None:
            return " (lookahead none)"
        same = np.array_equal(np.asarray(got[0]), np.asarray(actions)) and np.allclose(got[1], row)
        return "" if same else " (lookahead differs)"

    def hand_end(self, hand):
        u0 = float(hand.returns[0])
        self._close(u0)
        sign = 1.0 if hand.seat_of_player[0] == 0 else -1.0
        aivat = u0 - self._corr
        total = self._root + sum(self._res.values())
        if abs(total - aivat) > 1e-6 * max(1.0, abs(aivat)):
            # v of a state changed between two steps (the owner remembered a translation of its own raise,
            # or a river sample was redrawn): no term corrects that change, so it is its own kind
            self._res["drift"] += aivat - total
        self.rows.append((sign * aivat, sign * u0, {k: sign * x for k, x in self._res.items()}))
        self.values.append(sign * aivat)

    def match_end(self, result):
        pass


def decompose(rows, bb):
    """Per kind: variance of the per-deal (seat-averaged) residual sum in mbb^2, and its share."""
    kinds = sorted({k for _, _, r in rows for k in r})
    n = len(rows) // 2
    mat = np.zeros((n, len(kinds)))
    for i, (_, _, r) in enumerate(rows[:2 * n]):
        for j, k in enumerate(kinds):
            mat[i // 2, j] += 0.5 * r.get(k, 0.0) * bb
    aivat = np.array([a for a, _, _ in rows[:2 * n]]).reshape(n, 2).mean(1) * bb
    plain = np.array([u for _, u, _ in rows[:2 * n]]) * bb
    total_var = aivat.var()
    out = {"deals": n, "std_deal_aivat": round(float(aivat.std()), 1),
           "std_hand_aivat": round(float(np.array([a for a, _, _ in rows]).std() * bb), 1),
           "std_hand_plain": round(float(plain.std()), 1),
           "std_deal_duplicate": round(float(plain.reshape(n, 2).mean(1).std()), 1), "kinds": {}}
    own = 0.0
    for j, k in enumerate(kinds):
        v = float(mat[:, j].var())
        own += v
        out["kinds"][k] = {"std": round(v ** 0.5, 1), "share": round(v / total_var, 3),
                           "mean": round(float(mat[:, j].mean()), 1)}
    out["covariance_share"] = round((total_var - own) / total_var, 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pair")
    ap.add_argument("deals", type=int)
    ap.add_argument("seed", type=int, nargs="?", default=11)
    ap.add_argument("--set", nargs="*", default=[], metavar="OPTION=VALUE",
                    help="value-function options (follow_owner=0, river_exact=0, street_from=2, ...)")
    ap.add_argument("--fit", type=int, default=0, metavar="DEALS",
                    help="tables against the other agent's abstract policy fitted on DEALS duplicate deals of "
                         "its own (other agent objects, seed 1000 + SEED; cfrkit.agents.opponent_values)")
    ap.add_argument("--prior", type=float, default=2.0, help="the fit's prior weight in hands")
    ap.add_argument("--fit-file", default=None, metavar="PATH",
                    help="keep the fitted counts in PATH (npz), read back when it exists (aivat_lookahead_modes.py's)")
    ap.add_argument("--split-lookahead", action="store_true",
                    help="split the owner's mixed decisions by whether the street lookahead plays the agent's own "
                         "strategy there (kind suffix ' (lookahead differs)')")
    args = ap.parse_args()
    specs = args.pair.split(",")
    agents = [make_agent(s, game="holdem", seed=i + 1) for i, s in enumerate(specs)]
    owner = next((a for a in agents if isinstance(a, BlueprintAgent)), None)
    if owner is None:
        raise SystemExit("need a blueprint in the pair")
    view = poker_view(owner.game)
    bb = 1000.0 / float(view.game.definition.big_blind)
    names = {id(a): f"{s.split(':')[0]}{i}" for i, (a, s) in enumerate(zip(agents, specs))}
    vf = owner.aivat_value_function(view)
    fit_cpu = 0.0
    if args.fit:
        t = time.process_time()
        other = next(i for i, a in enumerate(agents) if a is not owner)
        tag = fit_tag(specs, args.fit, args.seed)
        counts = _load_fit(args.fit_file, tag)
        if counts is None:
            twins = [make_agent(s, game="holdem", seed=100 + i) for i, s in enumerate(specs)]
            counts = fit_abstract_policy(twins[1 - other], twins[other], args.fit, seed=1000 + args.seed)
            del twins  # their blueprint's arrays
            _save_fit(args.fit_file, counts, tag)
        vf = OpponentTablesValueFunction(owner.blueprint, view, owner.translate_raise, agents[other], counts,
                                         prior=args.prior, river_exact=False, follow_owner=False)
        fit_cpu = time.process_time() - t
    for opt in args.set:
        name, value = opt.split("=")
        if not hasattr(vf, name):
            raise SystemExit(f"no value-function option {name!r}")
        now = getattr(vf, name)  # an option that is None when unset (turn_flops) takes an int
        setattr(vf, name, int(value) if now is None else type(now)(int(value)))
    obs = ResidualObserver(vf, agent=agents, names=names, split_lookahead=args.split_lookahead)
    t = time.process_time()
    play_match(view.game, agents, args.deals, seed=args.seed, duplicate=True, observers=[obs],
               time_limit=float("inf"))
    cpu = time.process_time() - t
    out = decompose(obs.rows, bb)
    out.update(pair=specs, seed=args.seed, options=args.set, cpu_s=round(cpu, 1), fit_deals=args.fit,
               prior=args.prior, fit_and_build_cpu_s=round(fit_cpu, 1))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
