"""DeepStack's continual re-solving agent (A^D) for heads-up no-limit hold'em.

At each of its decisions the agent re-solves the public subgame rooted at the *actual* state (any
ACPC heads-up no-limit state, whatever bet sizes led there) with the CFR-D gadget, from two things it
carries between decisions (:class:`HoldemDeepStackAgent`):

* its own range over the 1326 hole-card pairs: the reach of each pair under its own earlier re-solved
  strategies (Bayes' rule through its own actions; pairs that share a card with the board drop out);
* the opponent's counterfactual values (chips), read from the previous re-solve at the deepest node
  of that solve's tree the public history reaches: after our action, the opponent's reply and any
  board card.  These are the opponent's cfvs averaged over the re-solve's iterations with the
  average strategy's weights (DeepStack's choice, see docs/deepstack.md) on the numpy path, its
  best-response cfvs on the compiled path (see **Solver** below).

**Off-tree opponent bets.**  When the opponent raises to a size the previous lookahead did not
offer, the history leaves that tree at the opponent's decision node.  The agent keeps its own range
there (the opponent's action does not change it) and the opponent's values *at that node* (what the
opponent could get with each hand before choosing its action), and re-solves from the actual state,
which includes the real bet; the gadget then lets every opponent hand take at most those values.
This is DeepStack's rule (the carried bound is only replaced at our own actions and board cards), so
any bet size is answered by a solve that contains it, never by rounding it to a nearby size.

**Lookahead per round** (``bet_sizing``: pot fractions per number of bets in the round and street;
fold, call and all-in are always offered): the river is solved to showdown; the turn and flop to the
first decision of the next street, whose leaves take the next street's value function
(``leaf_values["river"]`` for a turn re-solve, ``leaf_values["turn"]`` for a flop re-solve; the
tree's chance node averages them over the dealt card), as DeepStack does.  A line where both players
are all in ends in a leaf valued exactly: the showdown averaged over every run-out
(:class:`~cfrkit.solvers.public.leaf_functions.CheckdownValues`).

**Without a value function for a street** (no nets, or nets without that street) the lookahead stops
before the next street's card and the leaf takes the *check-down* value: the showdown averaged over
run-outs as if nobody bet again.  That is exact for all-in lines and an approximation otherwise (it
ignores later betting); the agent still plays every street, so it runs end to end without nets.
**Preflop**: DeepStack's auxiliary net (values of the flop averaged over flops, over the 169 preflop
classes).  When a nets directory holds a ``preflop`` net (``benchmarks/deepstack_holdem.py --streets
...,flop,preflop``; :func:`cfrkit.value_nets.holdem.datagen.generate_holdem_dataset` with street
``"preflop"``), the agent **uses it by default** for the preflop lookahead's leaves (the state before the
flop cards; leaves where a player is all in keep the exact check-down value,
:class:`~cfrkit.value_nets.holdem.leaf_values.AllinSplitValues`);
``preflop_net=False`` turns it off.  An explicit ``leaf_values["preflop"]`` gets every preflop leaf and
wins over the net.  Otherwise, with ``preflop_flops=N`` and a flop net (this option also replaces a nets
directory's auxiliary net), the flop net averaged over N sampled flops (:class:`FlopNetPreflopValues`,
the auxiliary net's training target; correct up to the net and the sample, but one flop-net pass over
leaves x N rows per call: about 5x the CPU of the default at 50 flops); otherwise the check-down value
over sampled boards (``preflop_boards``, default 500) -- a documented fallback, not DeepStack's net.
When the flop comes, the opponent's values for the
actual flop are the flop value function (``leaf_values["flop"]``, else the check-down value) at the
preflop lookahead's reach.

**Solver** (``solver="board"``, the default): flop, turn and river re-solves run on the compiled
depth-limited range solver (:func:`~cfrkit.solvers.public.resolving.resolve_board`: ``BoardLeafSolver`` with
the re-solving gadget between its kernel passes; the same iterates as the numpy ``RangeSolver``), preflop
re-solves (no board to lay out) on the numpy solver.  There, with nets, the leaves a value net values go
through the solver's direct batched net path (``fast_nets``; :meth:`_LeafDispatch.split_leaves` names
them), the check-down and all-in leaves through the generic call.  The compiled walk returns root values only, so on that
path the carried opponent values are its best-response cfvs at the node (CFR-D's carry, an upper bound)
instead of the cfvs averaged over the iterations; ``solver="numpy"`` keeps the averaged ones everywhere.

The first solve of every hand is a plain solve of the preflop from the start of the betting with both
ranges uniform (computed once per agent); both seats then walk down from it.  Every re-solve is a
deterministic function of (seat, public history) and is memoised, so :meth:`hand_strategy` (all
1326 hands, for LBR and AIVAT) and :meth:`act` agree, and evaluators may ask about hypothetical
states.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Tuple

import numpy as np

from cfrkit.games.base import CHANCE, GameError
from cfrkit.poker.agent import HandStrategy, PokerAgent
from cfrkit.solvers.public.games import HoldemPublicGame
from cfrkit.solvers.public import leaf_functions
from cfrkit.solvers.public.resolving import ResolveResult, board_resolve_supported, resolve, resolve_board
from cfrkit.solvers.public.tree import LEAF, PublicNode, build_public_tree

STREETS = ("preflop", "flop", "turn", "river")

#: DeepStack-style lookahead sizes (pot fractions per number of bets in the round, per street): the
#: first bet of a round half pot or pot, later raises pot; fold, call and all-in are always offered.
DEFAULT_BET_SIZING: Dict[str, Dict[int, list]] = {
    "preflop": {1: [0.5, 1.0], 2: [1.0]},
    "flop": {1: [0.5, 1.0], 2: [1.0]},
    "turn": {1: [0.5, 1.0], 2: [1.0]},
    "river": {1: [0.5, 1.0], 2: [1.0]},
}


def __getattr__(name):
    # the check-down values moved to the solvers' LeafValues implementations (cfrkit.solvers.public.leaf_functions):
    # the old import path warns for one release
    if name in ("CheckdownValues", "showdown_sign_matrix"):
        import warnings

        warnings.warn(f"cfrkit.agents.holdem_deepstack.{name} moved to cfrkit.solvers.public.leaf_functions.{name}",
                      DeprecationWarning, stacklevel=2)
        return getattr(leaf_functions, name)
    # FlopNetPreflopValues moved to the value-net layer (cfrkit.value_nets.holdem.leaf_values); the old import
    # path still works, lazily (that module needs torch, this one does not)
    if name == "FlopNetPreflopValues":
        from cfrkit.value_nets.holdem.leaf_values import FlopNetPreflopValues

        return FlopNetPreflopValues
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ============================================================================ lookahead view
def _no_more_betting(ps) -> bool:
    """True when a non-folded player has no chips behind (the rest is a run-out)."""
    return any(not ps.folded[p] and ps.remaining(p) <= 0 for p in range(2))


class LookaheadHoldemGame(HoldemPublicGame):
    """:class:`HoldemPublicGame` for depth-limited lookaheads from any street, preflop included.

    Chance states where no more betting is possible (both all in) are reported as leaves (valued by a
    run-out average instead of a flop tree of 49 x 48 showdowns); so are the chance state before the
    flop (preflop lookaheads) and, with ``chance_leaves=True``, every chance state (no value function
    for the next street: the leaf sits before the card).  Use only with ``depth_limit=True``.
    """

    def __init__(self, game, bet_sizing=None, chance_leaves: bool = False):
        super().__init__(game, bet_sizing)
        self.chance_leaves = bool(chance_leaves)

    def check_state(self, state) -> None:
        from cfrkit.games.holdem.game import HoldemState

        if isinstance(state, HoldemState) and state.round == 0 and not state.is_terminal() \
                and state.hole_cards_dealt and state.game == self.game:
            return
        super().check_state(state)

    def kind(self, ps) -> str:
        k = super().kind(ps)
        if k == "chance" and (self.chance_leaves or not ps.board or _no_more_betting(ps)):
            return "decision"  # build_public_tree turns a later-round "decision" into a leaf
        return k


def is_chance_leaf(node: PublicNode) -> bool:
    return node.state.current_player() == CHANCE


class _LeafDispatch:
    """Chance leaves (run-outs, cards to come) -> ``chance_fn``; decision leaves -> ``street_fn``."""

    def __init__(self, street_fn, chance_fn):
        self.street_fn, self.chance_fn = street_fn, chance_fn

    def split_leaves(self, leaves):
        """``[(fn, leaf indices), ...]``: which function values which leaves (the compiled solver's
        :class:`~cfrkit.solvers.public.board_leaf_cfr.LeafSession` sends a value net's leaves through its
        direct batched net path and only the others through this object's call)."""
        chance = [k for k, n in enumerate(leaves) if is_chance_leaf(n)]
        other = [k for k, n in enumerate(leaves) if not is_chance_leaf(n)]
        return [(self.chance_fn, chance), (self.street_fn, other)]

    def __call__(self, leaves, reach0, reach1, backend):
        be = backend
        r0, r1 = be.to_numpy(reach0), be.to_numpy(reach1)
        v0, v1 = np.zeros_like(r0), np.zeros_like(r1)
        chance = [k for k, n in enumerate(leaves) if is_chance_leaf(n)]
        other = [k for k, n in enumerate(leaves) if not is_chance_leaf(n)]
        for idx, fn in ((chance, self.chance_fn), (other, self.street_fn)):
            if not idx:
                continue
            if fn is None:
                raise GameError("a depth-limited lookahead has leaves at the next street but no value function for it")
            a, b = fn([leaves[k] for k in idx], be.asarray(r0[idx]), be.asarray(r1[idx]), be)
            v0[idx], v1[idx] = be.to_numpy(a), be.to_numpy(b)
        return be.asarray(v0), be.asarray(v1)


# ============================================================================ the agent
@dataclass
class _Record:
    root: Tuple[int, ...]      # public history (board cards and betting after the hole cards) at the solve's root
    result: ResolveResult


def _parse_options(text: str) -> Dict[str, str]:
    out = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise GameError(f"agent option {part!r} must look like name=value (e.g. iterations=500)")
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return out


class HoldemDeepStackAgent(PokerAgent):
    """Continual re-solving for heads-up no-limit hold'em (see the module docstring).

    Args:
        game: a heads-up no-limit ``holdem`` game (string or Game; default ACPC 200bb, 50/100).
        leaf_values: value functions by the street of the leaves, ``{"turn": fn, "river": fn}``
            (``fn(leaves, reach0, reach1, backend) -> (v0, v1)`` in chips, as ``RangeSolver`` takes);
            optional ``"flop"`` (values at the actual flop after a preflop lookahead) and ``"preflop"``
            (an auxiliary net for the preflop lookahead's leaves before the flop cards).
        nets: a directory of hold'em value nets (:class:`cfrkit.value_nets.holdem.HoldemValueNets`);
            its streets fill ``leaf_values`` (explicit ``leaf_values`` entries win).
        iterations, skip, algorithm: CFR settings of every re-solve (``dcfr`` or ``cfr+``).
        bet_sizing: ``{street: {bet number: [pot fractions]}}`` (missing streets: DEFAULT_BET_SIZING).
        preflop_boards: sampled boards of the preflop check-down values.
        preflop_flops: with a flop net and no ``leaf_values["preflop"]``: value the preflop lookahead's leaves
            with the flop net averaged over this many sampled flops (:class:`FlopNetPreflopValues`; replaces the
            nets' auxiliary net); 0 (default): the auxiliary net if ``nets`` has one, else the check-down values.
        preflop_net: use the auxiliary ("preflop") net of ``nets`` when it has one (default True; all-in
            preflop leaves keep the check-down values); False: the check-down values (or ``preflop_flops``).
        flop_runouts: sampled turn-river run-outs of the flop's check-down values (default None: all
            1176, exact; about 4 CPU seconds per flop, cached per board).
        seed: seed of the action sampling in :meth:`act` (and of the sampled preflop boards).
        max_records: memoised re-solves kept (cleared at ``new_hand`` too).
        keep_preflop: preflop re-solves kept across hands (default 0: none).  A preflop re-solve depends only on
            the seat and the betting (not on the cards: the ranges come from the public history), so the same
            re-solve is met again in later hands (A^D's answer to a limp, to each raise size); kept, it is not
            made again (the same numbers: a re-solve is deterministic).  Memory: about 1-5 MB per re-solve.
        solver: ``"board"`` (default): flop, turn and river re-solves on the compiled depth-limited solver
            (:func:`~cfrkit.solvers.public.resolving.resolve_board`: the same iterates as the numpy path, its
            carried opponent values are best-response cfvs); preflop re-solves (no board) use the numpy
            ``RangeSolver`` without error.  ``"numpy"``: every re-solve on the numpy ``RangeSolver``
            (:func:`~cfrkit.solvers.public.resolving.resolve`, carrying the opponent's averaged cfvs).
            ``solver_used`` counts the re-solves per path.
        fast_nets: on the ``"board"`` path, the leaves a hold'em value net values (the next street's first
            decisions) go through the compiled solver's direct batched net path (bucket sums in the kernel, one
            net forward pass for all leaves per player pass; the same values as the generic call up to float
            rounding; about 4x less CPU per iteration on a turn re-solve with small nets, RESULTS.md); the check-down and all-in
            leaves keep the generic call.  False: every leaf through the generic call (tests, comparisons).
    """

    name = "deepstack-holdem"
    #: every hand_strategy at a new state is a re-solve (seconds): AIVAT's value functions must not ask it at
    #: hypothetical states (the blueprint values' one-step lookahead skips this agent); see docs/evaluation.md
    costly_strategy = True

    def __init__(self, game="holdem", leaf_values: Optional[Mapping[str, object]] = None, nets: Optional[str] = None,
                 iterations: int = 1000, skip: int = 0, algorithm: str = "dcfr", bet_sizing=None,
                 preflop_boards: int = 500, flop_runouts: Optional[int] = None, seed: Optional[int] = None,
                 max_records: int = 64, solver: str = "board", fast_nets: bool = True, preflop_flops: int = 0,
                 preflop_net: bool = True, keep_preflop: int = 0):
        from cfrkit.games.holdem.game import HoldemGame
        from cfrkit.games.registry import load

        self.game = load(game) if isinstance(game, str) else game
        if not isinstance(self.game, HoldemGame):
            raise GameError(f"the deepstack-holdem agent plays heads-up no-limit holdem, not "
                            f"{getattr(self.game, 'game_string', lambda: self.game)()!r}")
        if int(iterations) < 1 or not 0 <= int(skip) < int(iterations):
            raise GameError(f"need iterations >= 1 and 0 <= skip < iterations, got {iterations}, {skip}")
        if algorithm not in ("dcfr", "cfr+"):
            raise GameError(f"algorithm must be 'dcfr' or 'cfr+', got {algorithm!r}")
        if solver not in ("board", "numpy"):
            raise GameError(f"solver must be 'board' or 'numpy', got {solver!r}")
        self.iterations, self.skip, self.algorithm = int(iterations), int(skip), algorithm
        self.solver = solver
        self.fast_nets = bool(fast_nets)
        self.solver_used: Dict[str, int] = {"board": 0, "numpy": 0}
        fns: Dict[str, object] = {}
        self.nets_dir = nets
        if nets is not None:
            fns.update(load_nets_leaf_values(nets, self.game))
        if not preflop_net or int(preflop_flops) > 0:
            fns.pop("preflop", None)   # the nets' auxiliary net is not wanted (or preflop_flops replaces it)
        # the nets' auxiliary net values the preflop leaves where nobody is all in; all-in leaves: check-down
        self._preflop_net = "preflop" in fns and "preflop" not in (leaf_values or {})
        for street, fn in (leaf_values or {}).items():
            if street not in STREETS:
                raise GameError(f"leaf_values keys are streets of the leaves {STREETS}, got {street!r}")
            fns[street] = fn
        self.leaf_values = fns
        self.preflop_flops = int(preflop_flops)
        if self.preflop_flops < 0:
            raise GameError(f"preflop_flops must be >= 0, got {preflop_flops}")
        sizing = dict(DEFAULT_BET_SIZING)
        for street, s in (bet_sizing or {}).items():
            if street not in STREETS:
                raise GameError(f"bet_sizing keys are streets {STREETS}, got {street!r}")
            sizing[street] = s
        self.bet_sizing = sizing
        self.checkdown = leaf_functions.CheckdownValues(preflop_boards, seed=0 if seed is None else int(seed),
                                         flop_samples=flop_runouts)
        if self.preflop_flops and "preflop" not in fns and "flop" in fns:
            from cfrkit.value_nets.holdem.leaf_values import FlopNetPreflopValues

            fns["preflop"] = FlopNetPreflopValues(fns["flop"], self.checkdown, self.preflop_flops,
                                                  seed=0 if seed is None else int(seed))
        # round r's lookahead ends at street r + 1 (its leaves' street); a net for it -> leaves after the card
        self._pgames = {}
        for r in range(4):
            nxt = STREETS[r + 1] if r < 3 else None
            chance_leaves = r in (1, 2) and nxt not in self.leaf_values
            self._pgames[r] = LookaheadHoldemGame(self.game, sizing[STREETS[r]], chance_leaves=chance_leaves)
        self.rng = np.random.default_rng(seed)
        self.max_records = int(max_records)
        self._records: "OrderedDict[tuple, _Record]" = OrderedDict()
        self._initial: Optional[_Record] = None
        if int(keep_preflop) < 0:
            raise GameError(f"keep_preflop must be >= 0, got {keep_preflop}")
        self.keep_preflop = int(keep_preflop)
        self._preflop: "OrderedDict[tuple, _Record]" = OrderedDict()
        self.num_resolves = 0
        self.solve_seconds: Dict[str, list] = {s: [] for s in STREETS}   # (wall, cpu) per re-solve
        d = self.game.definition
        self._num_hole = d.num_players * d.num_hole_cards   # history entries before the first betting action

    @classmethod
    def from_spec(cls, spec: str = "", seed: Optional[int] = None, **kwargs) -> "HoldemDeepStackAgent":
        """Build from ``"nets=DIR,iterations=500,algorithm=cfr+,skip=0,game=holdem,solver=board"`` (also
        ``preflop_boards``, ``flop_runouts``, ``preflop_flops``, ``preflop_net=0|1``, ``keep_preflop``)."""
        opts = _parse_options(spec)
        known = {"nets", "iterations", "skip", "algorithm", "preflop_boards", "flop_runouts", "game", "solver",
                 "preflop_flops", "preflop_net", "keep_preflop"}
        bad = sorted(set(opts) - known)
        if bad:
            raise GameError(f"unknown deepstack-holdem option(s) {', '.join(bad)}; known: {', '.join(sorted(known))}")
        args = dict(kwargs)
        for k, v in opts.items():
            if k == "preflop_net":
                if v not in ("0", "1"):
                    raise GameError(f"deepstack-holdem option preflop_net must be 0 or 1, got {v!r}")
                args[k] = v == "1"
            elif k in ("iterations", "skip", "preflop_boards", "flop_runouts", "preflop_flops", "keep_preflop"):
                try:
                    args[k] = int(v)
                except ValueError:
                    raise GameError(f"deepstack-holdem option {k} must be an integer, got {v!r}") from None
            else:
                args[k] = v
        return cls(seed=seed, **args)

    def describe_leaves(self) -> str:
        """One line naming the leaf values each street's re-solve uses (nets from which directory, or
        check-down equity), and the cost of a decision: what a command prints before the first hand."""
        netted = [s for s in STREETS if s in self.leaf_values]
        where = f"value nets from {self.nets_dir}" if self.nets_dir is not None else "the given value functions"
        what = (f"leaf values: {where} at the {', '.join(netted)} leaves, check-down equity elsewhere"
                if netted else "leaf values: check-down equity (no value nets given)")
        return f"{what}; each decision re-solves ({self.iterations} iterations) and takes seconds"

    def check_game(self, game) -> None:
        if getattr(game, "definition", None) != self.game.definition:
            raise GameError(f"the deepstack-holdem agent was built for {self.game.game_string()!r}, whose rules "
                            f"differ from {game.game_string()!r}")

    def new_hand(self) -> None:
        self._records.clear()

    def __getstate__(self):
        # copies and pickles (LBR's deepcopy, worker processes, Ray) drop the memoised re-solves, which
        # hold solver objects; they are recomputed deterministically on demand
        state = dict(self.__dict__)
        state["_records"] = OrderedDict()
        state["_preflop"] = OrderedDict()
        state["_initial"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.checkdown.reset()

    # ------------------------------------------------------------------ solving
    def _pgame(self, state) -> LookaheadHoldemGame:
        return self._pgames[int(state.round)]

    def _leaf_fn(self, street_round: int):
        nxt = STREETS[street_round + 1] if street_round < 3 else None
        if street_round == 0:
            fn = self.leaf_values.get("preflop", self.checkdown)
            if self._preflop_net:
                from cfrkit.value_nets.holdem.leaf_values import AllinSplitValues

                fn = AllinSplitValues(fn, self.checkdown)
            return _LeafDispatch(None, fn)
        return _LeafDispatch(self.leaf_values.get(nxt), self.checkdown)

    def _solve(self, ps, seat: int, own_range, opp_cfvs=None, opp_range=None,
               iterations: Optional[int] = None) -> ResolveResult:
        """One re-solve at public state ``ps`` (``iterations``: default the agent's own)."""
        import time

        r = int(ps.round)
        pgame = self._pgames[r]
        depth_limited = r < 3
        tree = build_public_tree(pgame, ps, depth_limit=depth_limited)
        wall, cpu = time.perf_counter(), time.process_time()
        path = "board" if self.solver == "board" and board_resolve_supported(tree) else "numpy"
        fn = resolve_board if path == "board" else resolve
        extra = {"fast_nets": self.fast_nets} if path == "board" else {}
        res = fn(pgame, tree.root.state, seat, own_range, opp_cfvs=opp_cfvs, opp_range=opp_range,
                 iterations=self.iterations if iterations is None else int(iterations),
                 skip=self.skip if iterations is None else min(self.skip, int(iterations) - 1),
                 leaf_values=self._leaf_fn(r) if tree.leaf_nodes else None, depth_limit=depth_limited,
                 algorithm=self.algorithm, tree=tree, **extra)
        self.solver_used[path] += 1
        self.solve_seconds[STREETS[r]].append((time.perf_counter() - wall, time.process_time() - cpu))
        self.num_resolves += 1
        return res

    def _replay(self, history) -> "object":
        s = self.game.new_initial_state()
        for a in history:
            s.apply_action(int(a))
        return s

    def _initial_record(self, hole_deal) -> _Record:
        if self._initial is None:
            start = self._replay(hole_deal)
            pgame = self._pgames[0]
            ps = pgame.root(start)
            prior = np.full(1326, 1.0 / 1326)
            self._initial = _Record((), self._solve(ps, 0, prior, opp_range=prior))
        return self._initial

    def start_spot(self, state, ranges) -> None:
        """Start this hand's continual re-solving at ``state`` (any street) with both players' ``ranges``
        ``(2, 1326)`` instead of the preflop solve: a plain solve there, from which later decisions walk
        down (spots, tests).  Cleared by :meth:`new_hand`."""
        hist = tuple(state.history())
        ranges = np.asarray(ranges, dtype=np.float64)
        ps = self._pgame(state).root(state)
        p = state.current_player()
        rec = _Record(hist[self._num_hole:], self._solve(ps, p, ranges[p], opp_range=ranges[1 - p]))
        self._records[("spot",)] = rec

    def _record_for(self, seat: int, hist: Tuple[int, ...], iterations: Optional[int] = None) -> _Record:
        """The re-solve at ``seat``'s decision reached by the full action history ``hist`` (``iterations``: a re-solve
        there with that many iterations instead of the agent's own, from the same earlier solve, kept apart: for
        valuation only, :meth:`resolve_at`)."""
        nh = self._num_hole
        pub = tuple(int(a) for a in hist[nh:])
        if iterations is not None and int(iterations) == self.iterations:
            iterations = None
        key = (seat, pub) if iterations is None else (seat, pub, "iterations", int(iterations))
        rec = self._records.get(key)
        if rec is not None:
            self._records.move_to_end(key)
            return rec
        spot = self._records.get(("spot",))
        if spot is None and key in self._preflop:      # only preflop re-solves are kept there (keep_preflop)
            rec = self._records[key] = self._preflop[key]
            self._preflop.move_to_end(key)
            return rec
        # own earlier decisions: the latest one's re-solve is where we walk down from
        s = self._replay(hist[:nh])
        prev = None
        for k, a in enumerate(pub):
            if s.current_player() == seat and (spot is None or k >= len(spot.root)):
                prev = k
            s.apply_action(a)
        if s.current_player() != seat:
            raise GameError(f"seat {seat} is not to act after {list(pub)}")
        if prev is not None:
            base = self._record_for(seat, hist[:nh + prev])
        elif spot is not None and pub[:len(spot.root)] == spot.root:
            base = spot
        else:
            base = self._initial_record(hist[:nh])
        rel = pub[len(base.root):]
        node, k = base.result.tree.deepest_node(rel)
        if k == len(rel) and node.index == 0:
            rec = base
        else:
            res = base.result
            opp = 1 - seat
            own = res.reach[node.index][0, seat].copy()
            opp_cfvs = res.opp_avg_values[node.index][0].copy() if res.opp_avg_values is not None else None
            ps = self._pgame(s).root(s)
            if node.kind == LEAF and is_chance_leaf(node) and not _no_more_betting(node.state):
                # the lookahead stopped before the next street's cards, which are now known: the
                # opponent's values for the actual board from the next street's value function
                opp_cfvs = self._values_after_cards(node, rel[k:], own, res.reach[node.index][0, opp], seat)
            mask = self._pgames[0].hand_mask(ps.board)
            own = own * mask
            if own.sum() <= 0:
                own = mask / mask.sum()   # a history our strategy never takes (hypothetical states)
            if opp_cfvs is None:
                rec_res = self._solve(ps, seat, own, opp_range=res.reach[node.index][0, opp] * mask,
                                      iterations=iterations)
            else:
                rec_res = self._solve(ps, seat, own, opp_cfvs=opp_cfvs * mask, iterations=iterations)
            rec = _Record(pub, rec_res)
        self._records[key] = rec
        while len(self._records) > self.max_records:
            self._records.popitem(last=False)
        if self.keep_preflop and spot is None and int(s.round) == 0:
            self._preflop[key] = rec
            while len(self._preflop) > self.keep_preflop:
                self._preflop.popitem(last=False)
        return rec

    def _values_after_cards(self, leaf: PublicNode, rest, own_reach, opp_reach, seat: int):
        pgame = self._pgames[0]
        ps = leaf.state
        for a in rest:
            if ps.current_player() != CHANCE:
                break
            ps = pgame.chance_child(ps, int(a))
        board = tuple(ps.board)
        mask = pgame.hand_mask(board)
        node = PublicNode(0, LEAF, ps, board=board, contrib=pgame.contributions(ps))
        fn = self.leaf_values.get(STREETS[int(ps.round)]) if ps.current_player() != CHANCE else None
        fn = fn or self.checkdown
        from cfrkit.solvers.public.array_backend import make_backend

        be = make_backend("numpy")
        r = [None, None]
        r[seat], r[1 - seat] = own_reach * mask, opp_reach * mask
        v = fn([node], be.asarray(r[0][None, None]), be.asarray(r[1][None, None]), be)
        return be.to_numpy(v[1 - seat])[0, 0]

    # ------------------------------------------------------------------ playing
    def hand_strategy(self, state) -> HandStrategy:
        """The re-solved strategy at ``state`` for all 1326 pairs (rows touching the board are zero)."""
        seat = state.current_player()
        if seat not in (0, 1):
            raise GameError("hand_strategy needs a state where a player is to act")
        rec = self._record_for(seat, tuple(state.history()))
        strat = rec.result.strategy[0][0]                    # (A, H)
        probs = np.ascontiguousarray(strat.T, dtype=np.float64)
        mask = self._pgames[0].hand_mask(state.board)
        probs *= mask[:, None]
        tot = probs.sum(1, keepdims=True)
        probs = np.where(tot > 0, probs / np.where(tot > 0, tot, 1.0), 0.0)
        return HandStrategy(np.asarray(rec.result.tree.root.actions, dtype=np.int64), probs)

    def resolve_covering(self, state, seat: int):
        """``(ResolveResult, public actions from its root to state, position)``: the re-solve of this agent's
        latest decision in ``seat`` strictly before ``state`` (memoised: the solve :meth:`act` drew that action
        from), or, before its first decision, the hand's first solve (position -1); None before the hole cards
        are dealt.  Only solves of decisions the agent took in this hand are read, so no new re-solve is made
        there (the first solve is made once per agent)."""
        hist = tuple(int(a) for a in state.history())
        nh = self._num_hole
        if len(hist) < nh:
            return None
        pub = hist[nh:]
        s = self._replay(hist[:nh])
        prev = None
        for k, a in enumerate(pub):
            if s.current_player() == seat:
                prev = k
            s.apply_action(a)
        if prev is None:
            spot = self._records.get(("spot",))
            rec = spot if spot is not None and pub[:len(spot.root)] == spot.root else self._initial_record(hist[:nh])
        else:
            rec = self._record_for(seat, hist[:nh + prev])
        if pub[:len(rec.root)] != rec.root:
            return None
        return rec.result, pub[len(rec.root):], -1 if prev is None else prev

    def resolve_at(self, state, seat: int, iterations: Optional[int] = None):
        """``(ResolveResult, public actions from its root to state, position)`` of this agent's own re-solve at
        ``state``, where ``seat`` is to act (memoised; made now if not yet: deterministic, seconds).  ``iterations``:
        a re-solve there with that many iterations instead (from the same earlier solve; kept apart from the one
        :meth:`act` uses, which it never replaces)."""
        hist = tuple(int(a) for a in state.history())
        if len(hist) < self._num_hole or state.current_player() != seat:
            return None
        rec = self._record_for(seat, hist, iterations)
        pub = hist[self._num_hole:]
        return rec.result, pub[len(rec.root):], len(pub)

    def aivat_value_function(self, view):
        """AIVAT values from this agent's own re-solves (:class:`~cfrkit.agents.resolve_values.ResolveValueFunction`:
        seat 0's chips, the solve's strategies for both actual hands; unbiased whatever their quality)."""
        from cfrkit.agents.resolve_values import ResolveValueFunction

        return ResolveValueFunction(view, self)

    def act(self, state) -> int:
        from cfrkit.cards.hands import pair_index

        hs = self.hand_strategy(state)
        row = hs.probs[pair_index(*state.hole[state.current_player()])]
        row = row / row.sum()
        return int(hs.actions[self.rng.choice(len(row), p=row)])


def load_nets_leaf_values(directory: str, game=None) -> Dict[str, object]:
    """``{street of the leaves: fn}`` from a directory of hold'em value nets (HoldemValueNets)."""
    import os

    if not os.path.isdir(str(directory)):
        raise GameError(f"no hold'em value nets directory {directory!r}")
    try:
        from cfrkit.value_nets.holdem import HoldemValueNets
    except ImportError as exc:
        raise GameError(f"hold'em value nets are not available in this cfrkit ({exc}); build them with the "
                        f"value-net pipeline or pass leaf_values") from None
    nets = HoldemValueNets.load(directory)
    stack = getattr(nets, "stack", None)
    if game is not None and stack is not None and float(stack) != float(min(game.definition.stack)):
        raise GameError(f"the value nets in {directory} were trained for stacks of {stack:g} chips, the game has "
                        f"{min(game.definition.stack)}: their pot inputs would be wrong")
    return {s: nets.leaf_values(s) for s in nets.streets}   # "preflop": the auxiliary net, when trained
