"""AIVAT with A^D's own re-solve values (issue 27): standard deviation against plain counting, duplicate, AIVAT
with the blueprint's values and AIVAT with the check-down equity value, on the same hands; CPU per hand.

    python benchmarks/aivat_deepstack_values.py hands A,B --deals 100 [--first-deal 0] [--seed 0] --out FILE.jsonl
        [--resolve-next] [--next-iterations M] [--own-values] [--check-against OLD.jsonl]
    python benchmarks/aivat_deepstack_values.py summary FILE.jsonl [MORE.jsonl ...] [--drop-deal D] [--json OUT.json]
    python benchmarks/aivat_deepstack_values.py leduc [--deals 20000] [--iterations 50]

``hands`` plays one duplicate match of ``--deals`` deals between two registry specs (hold'em), with up to three
AIVAT observers on the same hands: the value function of the first agent that gives one through
``aivat_value_function`` *of a re-solving agent* (:class:`~cfrkit.agents.resolve_values.ResolveValueFunction`;
and its ``left_tree="frozen"`` variant as ``aivat_resolve_frozen``, which runs first and pays the deal's one-off pass),
the blueprint's (when a blueprint plays) and :class:`~cfrkit.evaluation.aivat.EquityValueFunction`.  One JSON line
per hand (seat-0 payoff of ``agents[0]``'s side and each estimator, and the CPU seconds spent in each value
function) is appended and flushed as the hand ends, so a run stopped early keeps its hands; ``summary`` reads the
complete deals: std per hand and per deal (seat-averaged) in mbb, mean +- 95%, hands per CPU second of the match
without AIVAT and with each value function (the match's CPU minus the value functions', plus one).

**Resumable and splittable.**  ``--first-deal K --deals N`` plays deals ``K .. K+N-1`` of the match with deal seed
``--seed``: the same cards *and the same agents' draws* as those deals of one long run from deal 0.  The cards of a
deal depend only on (seed, deal) (``play_match``'s ``first_deal``), but ``play_match`` does not reseed the agents:
their generators (A^D's action draws, the blueprint's raise translations, the blueprint value function's board
samples) carry over from deal to deal.  So after every complete deal the generators' states are written to
``FILE.state.json`` (atomically, with the deal to play next); a restart with the same arguments drops the rows of a
deal left half-written, restores the generators and goes on.  Starting at ``K > 0`` without that file, deals
``0 .. K-1`` are replayed first with the cheap observers (every value function except the ``resolve_next`` ones,
which draw nothing) and not written; ``--check-against OLD.jsonl`` compares the replayed hands with an earlier run's
rows (plain and every shared estimator), so a continuation is shown to be on that run's hands.  With
``--next-iterations M`` (and ``--resolve-next``) A^D's values with cheap re-solves for the states where it acts next
(``ResolveValueFunction(next_iterations=M)``) are added as ``aivat_resolve_next_itM``.  ``--own-values`` adds A^D's
values of its own actual hand against A^C's range (``hand_value``): ``aivat_resolve_own`` (every node of A^D's
solves), with ``--resolve-next`` also ``aivat_resolve_next_own`` (only at the states ``resolve_next`` re-solves) and
``aivat_resolve_next_ownall`` (both); ``--next-checkdown`` adds ``aivat_resolve_next_cd`` and
``aivat_resolve_next_own_cd``: those with the check-down rule where A^D's covering solve does not reach
(``next_outside="checkdown"``).

``leduc`` is the same on Leduc with the Leduc DeepStack agent against a CFR+ policy (cheap: many hands).
"""
import argparse
import json
import os
import random
import sys
import time

import numpy as np

from cfrkit.agents.resolve_values import ResolveValueFunction
from cfrkit.evaluation.aivat import AivatObserver, EquityValueFunction
from cfrkit.poker import make_agent, play_match
from cfrkit.poker.view import poker_view


class Timed:
    """A value function whose calls add their CPU seconds to ``seconds`` (attributes forwarded)."""

    def __init__(self, vf):
        self._vf = vf
        self.seconds = 0.0

    def __getattr__(self, name):
        attr = getattr(self._vf, name)
        if not callable(attr):
            return attr

        def timed(*args, **kwargs):
            t = time.process_time()
            try:
                return attr(*args, **kwargs)
            finally:
                self.seconds += time.process_time() - t

        return timed


class Keep(AivatObserver):
    """An AIVAT observer whose values stay on the observer (several in one match)."""

    def match_end(self, result) -> None:
        pass


def rng_states(objects) -> list:
    """The states of the ``rng`` generators of ``objects`` (numpy Generator or ``random.Random``; None: none)."""
    out = []
    for o in objects:
        g = getattr(o, "rng", None)
        if isinstance(g, np.random.Generator):
            out.append({"numpy": g.bit_generator.state})
        elif isinstance(g, random.Random):
            out.append({"random": g.getstate()})
        elif g is None:
            out.append(None)
        else:
            raise TypeError(f"cannot save the generator {type(g).__name__} of {type(o).__name__}")
    return out


def set_rng_states(objects, states) -> None:
    """Restore what :func:`rng_states` gave (JSON round trip: lists back to tuples)."""
    if len(states) != len(objects):
        raise ValueError(f"{len(states)} generator states for {len(objects)} objects")
    for o, st in zip(objects, states):
        if st is None:
            continue
        if "numpy" in st:
            o.rng.bit_generator.state = st["numpy"]
        else:
            v, internal, gauss = st["random"]
            o.rng.setstate((v, tuple(internal), gauss))


class Writer:
    """Appends one JSON line per hand: agents[0]'s chips and each estimator's value, CPU of each value function
    (``cpu``, ``cpu_NAME``: since this process started; ``dcpu``, ``dcpu_NAME``: this hand's); after each complete
    deal the generators' states go to ``state_path`` (with the deal to play next)."""

    def __init__(self, path, named, bb, rng_objects, state_path, meta, hands_per_deal: int = 2):
        self.f = None if path is None else open(path, "a")
        self.named = named
        self.bb = bb
        self.rng_objects = rng_objects
        self.state_path = state_path
        self.meta = meta
        self.hands_per_deal = hands_per_deal
        self.rows = []
        self.t0 = self.last = time.process_time()
        self.last_vf = {name: 0.0 for name in named}

    def hand_end(self, hand) -> None:
        p0 = 0 if hand.seat_of_player[0] == 0 else 1
        now = time.process_time()
        # the hand's number in one long run from deal 0 (play_match numbers a split run's hands from 0)
        k = sum(r["deal"] == hand.deal for r in self.rows)
        row = {"hand": hand.deal * self.hands_per_deal + k, "deal": hand.deal, "seat_of_a": hand.seat_of_player[0],
               "plain": float(hand.returns[p0]) * self.bb, "cpu": now - self.t0, "dcpu": now - self.last}
        self.last = now
        # the Keep observers' hand_end ran before this one (observer order): their last value is this hand's
        for name, (obs, timed) in self.named.items():
            row[name] = float(obs.values[-1]) * self.bb
            row[f"cpu_{name}"] = timed.seconds
            row[f"dcpu_{name}"] = timed.seconds - self.last_vf[name]
            self.last_vf[name] = timed.seconds
        self.rows.append(row)
        if self.f is not None:
            self.f.write(json.dumps(row) + "\n")
            self.f.flush()
        if self.state_path is not None and k + 1 == self.hands_per_deal:
            state = dict(self.meta, next_deal=hand.deal + 1, rng=rng_states(self.rng_objects))
            tmp = self.state_path + ".tmp"
            with open(tmp, "w") as f:
                json.dump(state, f)
            os.replace(tmp, self.state_path)


def _estimators(agents, view, resolve_next: bool, next_iterations, dealt, cheap_only: bool = False,
                own_values: bool = False, next_checkdown: bool = False):
    """The value functions by name: A^D's (frozen, checkdown, resolve_next and its cheap variant), the blueprint's,
    the check-down equity's; the first solve made here (A^D makes it at its first decision anyway)."""
    named = {}
    for a in agents:
        if hasattr(a, "resolve_covering"):
            # the default (left_tree="checkdown": states outside A^D's tree at their own check-down value, a raise
            # as if called) and the "frozen" variant (the pot where play left the tree)
            named["aivat_resolve_frozen"] = ResolveValueFunction(view, a, left_tree="frozen")
            named["aivat_resolve"] = a.aivat_value_function(view)
            if resolve_next and not cheap_only:   # A^D's own re-solve at each state where it acts next after betting
                named["aivat_resolve_next"] = ResolveValueFunction(view, a, resolve_next=True)
            if resolve_next and next_iterations:   # the same with cheap re-solves for every such state
                named[f"aivat_resolve_next_it{next_iterations}"] = ResolveValueFunction(
                    view, a, resolve_next=True, next_iterations=next_iterations)
            if own_values:   # A^D's own hand against A^C's range (hand_value): everywhere, and with resolve_next
                named["aivat_resolve_own"] = ResolveValueFunction(view, a, hand_value="own")
                if resolve_next and not cheap_only:
                    named["aivat_resolve_next_own"] = ResolveValueFunction(view, a, resolve_next=True,
                                                                           hand_value="own_next")
                    named["aivat_resolve_next_ownall"] = ResolveValueFunction(view, a, resolve_next=True,
                                                                              hand_value="own")
                    if next_checkdown:   # the same two with the check-down rule outside the covering tree
                        named["aivat_resolve_next_cd"] = ResolveValueFunction(view, a, resolve_next=True,
                                                                              next_outside="checkdown")
                        named["aivat_resolve_next_own_cd"] = ResolveValueFunction(
                            view, a, resolve_next=True, hand_value="own_next", next_outside="checkdown")
            # the hand's first solve (a plain preflop solve, made once per agent) is made at A^D's first decision
            # anyway: made here, so the value function's CPU below counts only what AIVAT adds
            t = time.process_time()
            a.resolve_covering(dealt, 0)
            print(json.dumps({"first_solve_cpu_s": round(time.process_time() - t, 2)}), flush=True)
    t = time.process_time()
    for a in agents:
        if hasattr(a, "blueprint") and hasattr(a, "aivat_value_function"):
            named["aivat_blueprint"] = a.aivat_value_function(view)
    build = time.process_time() - t
    named["aivat_equity"] = EquityValueFunction(view)
    return named, build


def _read_rows(path):
    return [json.loads(line) for line in open(path) if line.strip()] if os.path.exists(path) else []


def split_pair(text: str) -> list:
    """``"A,B"`` into the two registry specs; a spec's own options (``name:k=v,k=v``) keep their commas: a part
    ``k=v`` without a ``:`` before its ``=`` belongs to the spec before it."""
    specs = []
    for part in text.split(","):
        head = part.split("=", 1)[0]
        if specs and "=" in part and ":" not in head:
            specs[-1] += "," + part
        else:
            specs.append(part)
    if len(specs) != 2:
        raise SystemExit(f"need two agent specs A,B, got {specs}")
    return specs


def play(specs, deals: int, seed: int, out: str, resolve_next: bool = False, first_deal: int = 0,
         next_iterations=None, check_against=None, cheap_only: bool = False, own_values: bool = False,
         next_checkdown: bool = False) -> None:
    """Deals ``first_deal .. first_deal + deals - 1`` into ``out`` (resumed from ``out.state.json`` when there)."""
    agents = [make_agent(s, game="holdem", seed=i + 1) for i, s in enumerate(specs)]
    view = poker_view(agents[0].game)
    game = view.game
    bb = 1000.0 / float(game.definition.big_blind)
    dealt = game.new_initial_state()
    while not view.hands_dealt(dealt):
        dealt.apply_action(int(dealt.chance_outcomes()[0][0]))
    named, build = _estimators(agents, view, resolve_next, next_iterations, dealt, cheap_only, own_values,
                               next_checkdown)
    state_path = out + ".state.json"
    meta = {"pair": list(specs), "seed": seed, "first_deal": first_deal, "deals": deals, "estimators": list(named)}
    rows = _read_rows(out)
    start = first_deal
    if rows or os.path.exists(state_path):
        if not os.path.exists(state_path):
            sys.exit(f"{out} has rows but no {state_path}: give a new file")
        with open(state_path) as f:
            saved = json.load(f)
        if {k: saved.get(k) for k in meta} != meta:
            sys.exit(f"{state_path} is of another run ({ {k: saved.get(k) for k in meta} }), not {meta}")
        start = int(saved["next_deal"])
        keep = [r for r in rows if r["deal"] < start]
        if len(keep) != 2 * (start - first_deal):
            sys.exit(f"{out} holds {len(keep)} hands of deals {first_deal}..{start - 1}, not {2 * (start - first_deal)}")
        if len(keep) < len(rows):   # a deal left half-written: its rows are dropped and it is played again
            with open(out + ".tmp", "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in keep)
            os.replace(out + ".tmp", out)
        set_rng_states(agents + list(named.values()), saved["rng"])
        print(json.dumps({"resumed_at_deal": start, "hands_kept": len(keep)}), flush=True)
    elif first_deal > 0:
        _replay(game, agents, view, named, bb, first_deal, seed, check_against)
    if start >= first_deal + deals:
        print(json.dumps({"done": True, "deals": deals}), flush=True)
        return
    observers = {}
    for name, vf in named.items():
        timed = Timed(vf)
        observers[name] = (Keep(timed), timed)
    writer = Writer(out, observers, bb, agents + list(named.values()), state_path, meta)
    print(json.dumps({"pair": list(specs), "deals": [start, first_deal + deals - 1], "seed": seed,
                      "blueprint_table_cpu_s": round(build, 2), "estimators": list(named)}), flush=True)
    play_match(game, agents, first_deal + deals - start, seed=seed, duplicate=True, first_deal=start,
               observers=[o for o, _ in observers.values()] + [writer], time_limit=float("inf"))
    for name, vf in named.items():
        if hasattr(vf, "stats"):
            print(name, json.dumps(vf.stats), flush=True)


def _replay(game, agents, view, named, bb, upto: int, seed: int, check_against=None) -> None:
    """Deals ``0 .. upto-1`` played with every value function but the ``resolve_next`` ones (they draw nothing), not
    written: the generators then stand where one long run's stand before deal ``upto``.  ``check_against``: an
    earlier run's JSONL whose rows of these deals must agree (plain and the estimators both have)."""
    cheap = {k: v for k, v in named.items() if not k.startswith("aivat_resolve_next")}
    observers = {}
    for name, vf in cheap.items():
        timed = Timed(vf)
        observers[name] = (Keep(timed), timed)
    writer = Writer(None, observers, bb, [], None, {})
    t = time.process_time()
    play_match(game, agents, upto, seed=seed, duplicate=True, first_deal=0,
               observers=[o for o, _ in observers.values()] + [writer], time_limit=float("inf"))
    info = {"replayed_deals": upto, "replay_cpu_s": round(time.process_time() - t, 1)}
    if check_against:
        old = {r["hand"]: r for r in _read_rows(check_against)}
        worst, compared = 0.0, 0
        for r in writer.rows:
            o = old.get(r["hand"])
            if o is None:
                continue
            for k in ["plain"] + list(cheap):
                if k in o:
                    worst = max(worst, abs(o[k] - r[k]))
                    compared += 1
        info.update(checked_against=check_against, values_compared=compared, max_abs_diff_mbb=worst)
        if compared == 0 or worst > 1e-3:
            sys.exit(f"the replay differs from {check_against}: {info}")
    print(json.dumps(info), flush=True)


def _stats(v: np.ndarray, digits: int = 1) -> dict:
    v = np.asarray(v, dtype=np.float64)
    per_deal = v.reshape(-1, 2).mean(axis=1)
    sd = float(per_deal.std(ddof=1))
    return {"std_hand": round(float(v.std(ddof=1)), digits), "std_deal": round(sd, digits),
            "mean": round(float(per_deal.mean()), digits), "ci95": round(1.96 * sd / np.sqrt(per_deal.size), digits),
            # median absolute deviation from the median, per hand (the bulk of the hands, without the tails)
            "mad_hand": round(float(np.median(np.abs(v - np.median(v)))), digits)}


def _cpu(rows, key: str) -> float:
    """CPU seconds of ``key`` (``""``: the match) over ``rows``: the per-hand ``dcpu`` fields, else (older files) the
    cumulative field of the last row."""
    d = f"dcpu_{key}" if key else "dcpu"
    if all(d in r for r in rows):
        return float(sum(r[d] for r in rows))
    c = f"cpu_{key}" if key else "cpu"
    return float(rows[-1][c])


def merge(paths) -> list:
    """The rows of several JSONL files of one match merged by hand number (a later file adds its estimators; where
    two files have the same estimator of a hand the values must agree to 1e-3 mbb).  Complete deals only."""
    by_hand = {}
    for path in paths:
        for r in _read_rows(path):
            old = by_hand.get(r["hand"])
            if old is None:
                by_hand[r["hand"]] = dict(r, _files=[path])
                continue
            for k, v in r.items():
                if k.startswith("aivat_") or k == "plain":
                    if k in old and abs(old[k] - v) > 1e-3:
                        raise ValueError(f"hand {r['hand']}: {k} is {old[k]} in {old['_files']}, {v} in {path}")
                    old.setdefault(k, v)
            old["_files"].append(path)
    rows = [by_hand[h] for h in sorted(by_hand)]
    deals = {}
    for r in rows:
        deals.setdefault(r["deal"], []).append(r)
    return [r for d in sorted(deals) if len(deals[d]) == 2 for r in deals[d]]


def summary(paths, drop_deals=(), common: bool = False, only=None) -> dict:
    """Std per hand and per deal of plain and every estimator, over the complete deals of ``paths`` (merged); each
    estimator over the deals that have it, or (``common``) every estimator over the deals that have all of them;
    ``only``: these estimators alone."""
    if isinstance(paths, str):
        paths = [paths]
    rows = [r for r in merge(paths) if r["deal"] not in set(drop_deals)]
    names = sorted({k for r in rows for k in r if k.startswith("aivat_") and (not only or k in only)})
    if common:
        rows = [r for r in rows if all(k in r for k in names)]
    n = len(rows)
    out = {"files": list(paths), "hands": n, "deals": n // 2, "dropped_deals": list(drop_deals),
           "plain": _stats([r["plain"] for r in rows])}
    for k in names:
        sub = [r for r in rows if k in r]
        plain = _stats([r["plain"] for r in sub])
        out[k] = _stats([r[k] for r in sub])
        out[k]["deals"] = len(sub) // 2
        out[k]["plain_same_deals"] = plain
        out[k]["reduction_std_hand_vs_plain"] = round(1 - out[k]["std_hand"] / plain["std_hand"], 3)
        out[k]["reduction_std_deal_vs_duplicate"] = round(1 - out[k]["std_deal"] / plain["std_deal"], 3)
        if len(paths) == 1 and not drop_deals and not common:   # one file: its CPU is comparable
            vf, bare = _cpu(sub, k), _cpu(sub, "") - sum(_cpu(sub, j) for j in names)
            out[k]["vf_cpu_s"] = round(vf, 1)
            out[k]["vf_cpu_s_per_hand"] = round(vf / len(sub), 3)
            out[k]["hands_per_cpu_s"] = round(len(sub) / (bare + vf), 4)
    if len(paths) == 1 and not drop_deals and not common and rows:
        bare = _cpu(rows, "") - sum(_cpu(rows, j) for j in names)
        out["match_cpu_s"] = round(_cpu(rows, ""), 1)
        out["cpu_s_per_hand_without_aivat"] = round(bare / n, 3)
    return out


def leduc(deals: int, iterations: int, seed: int, opponent_iterations: int) -> dict:
    from cfrkit.agents.leduc_agents import LeducDeepStackAgent, LeducPolicyAgent
    from cfrkit.evaluation.headtohead import exact_match_value
    from cfrkit.solvers import CFRSolver

    solver = CFRSolver("leduc", algorithm="cfr+")
    solver.run(opponent_iterations)
    ds = LeducDeepStackAgent("leduc", seed=seed + 1, iterations=iterations)
    other = LeducPolicyAgent(solver.average_policy(), "leduc", name=f"cfr+{opponent_iterations}", seed=seed + 2)
    view = poker_view("leduc")
    fns = {"aivat_resolve": ds.aivat_value_function(view), "aivat_equity": EquityValueFunction(view),
           "aivat_resolve_next": ResolveValueFunction(view, ds, resolve_next=True),
           "aivat_resolve_own": ResolveValueFunction(view, ds, hand_value="own"),
           "aivat_resolve_next_own": ResolveValueFunction(view, ds, resolve_next=True, hand_value="own_next"),
           "aivat_resolve_next_ownall": ResolveValueFunction(view, ds, resolve_next=True, hand_value="own")}
    timed = {k: Timed(f) for k, f in fns.items()}
    keep = {k: Keep(t) for k, t in timed.items()}
    t = time.process_time()
    res = play_match("leduc", [ds, other], deals, seed=seed, observers=list(keep.values()), time_limit=float("inf"))
    cpu = time.process_time() - t
    out = {"pair": [f"deepstack:iterations={iterations}", f"cfr+{opponent_iterations}"], "deals": deals,
           "hands": 2 * deals, "exact_chips_per_hand": round(exact_match_value([ds, other], "leduc"), 5),
           "units": "chips", "plain": _stats(res.payoffs[:, 0], 4)}
    for k, o in keep.items():
        out[k] = _stats(o.values, 4)
        out[k]["reduction_std_hand_vs_plain"] = round(1 - out[k]["std_hand"] / out["plain"]["std_hand"], 3)
        out[k]["reduction_std_deal_vs_duplicate"] = round(1 - out[k]["std_deal"] / out["plain"]["std_deal"], 3)
    out["match_cpu_s"] = round(cpu, 1)
    bare = cpu - sum(t.seconds for t in timed.values())
    out["hands_per_cpu_s"] = {"plain": round(2 * deals / bare, 1)}
    out["hands_per_cpu_s"].update({k: round(2 * deals / (bare + t.seconds), 1) for k, t in timed.items()})
    out["vf_cpu_s"] = {k: round(t.seconds, 2) for k, t in timed.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("hands")
    h.add_argument("pair")
    h.add_argument("--deals", type=int, default=100, help="deals to play (from --first-deal)")
    h.add_argument("--first-deal", type=int, default=0,
                   help="index of the first deal: deals K.. of one long run (the deals before are replayed unwritten)")
    h.add_argument("--next-iterations", type=int, default=None,
                   help="with --resolve-next: also A^D's values with re-solves of this many iterations")
    h.add_argument("--cheap-only", action="store_true",
                   help="with --next-iterations: without the full resolve_next values (their CPU alone)")
    h.add_argument("--check-against", default=None,
                   help="a JSONL of an earlier run whose rows the replayed deals must equal")
    h.add_argument("--seed", type=int, default=0)
    h.add_argument("--out", required=True)
    h.add_argument("--resolve-next", action="store_true",
                   help="also A^D's values with resolve_next (its re-solve where it acts next; extra re-solves)")
    h.add_argument("--own-values", action="store_true",
                   help="also A^D's values of its own hand against A^C's range (hand_value='own'; with --resolve-next "
                        "'own_next' and 'own' with resolve_next too)")
    h.add_argument("--next-checkdown", action="store_true",
                   help="with --own-values and --resolve-next: also the resolve_next values (pair and own_next) with "
                        "the check-down rule at the states outside A^D's covering solve (next_outside='checkdown')")
    s = sub.add_parser("summary")
    s.add_argument("paths", nargs="+", help="JSONL files of one match (merged by hand)")
    s.add_argument("--drop-deal", type=int, action="append", default=[], help="leave this deal out (repeatable)")
    s.add_argument("--common", action="store_true", help="only the deals every estimator has")
    s.add_argument("--only", action="append", default=None, help="this estimator only (repeatable)")
    s.add_argument("--json", default=None)
    le = sub.add_parser("leduc")
    le.add_argument("--deals", type=int, default=20000)
    le.add_argument("--iterations", type=int, default=50)
    le.add_argument("--opponent-iterations", type=int, default=30)
    le.add_argument("--seed", type=int, default=0)
    le.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.cmd == "hands":
        if args.next_iterations is not None and not args.resolve_next:
            sys.exit("--next-iterations needs --resolve-next")
        if args.cheap_only and args.next_iterations is None:
            sys.exit("--cheap-only needs --next-iterations")
        play(split_pair(args.pair), args.deals, args.seed, args.out, args.resolve_next, args.first_deal,
             args.next_iterations, args.check_against, args.cheap_only, args.own_values, args.next_checkdown)
        return
    out = summary(args.paths, args.drop_deal, args.common, args.only) if args.cmd == "summary" else leduc(args.deals, args.iterations, args.seed,
                                                                   args.opponent_iterations)
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
