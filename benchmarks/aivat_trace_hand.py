"""Replay ``aivat_deepstack_values.py hands``'s match (A^D = deepstack-holdem:iterations=100 vs blueprint bp_s0,
seed 0, duplicate) and print every AIVAT term of the chosen hands with A^D's own values (chips; the acting seat's
strategy row and the values of its children at each known decision):

    python benchmarks/aivat_trace_hand.py DEALS HAND[,HAND...] [--resolve-next] [--keep-preflop]   # e.g. 47 92

(stops after the last).  ``--keep-preflop``: A^D keeps its preflop re-solves across hands (the same play, faster).

Only the chosen hands are observed (the others are played without AIVAT).  ``--resolve-next``: the values with
``resolve_next=True`` (A^D's own re-solve where it acts next after a betting action).
"""
import json, sys
from cfrkit.poker import make_agent, play_match
from cfrkit.poker.view import poker_view
from cfrkit.evaluation.aivat import AivatObserver

WANT = set(int(x) for x in sys.argv[2].split(","))
specs = ["deepstack-holdem:iterations=100" + (",keep_preflop=128" if "--keep-preflop" in sys.argv else ""),
         "blueprint:/work/runs/bp_s0.npz"]
agents = [make_agent(s, game="holdem", seed=i + 1) for i, s in enumerate(specs)]
view = poker_view(agents[0].game)
if "--resolve-next" in sys.argv:
    from cfrkit.agents.resolve_values import ResolveValueFunction

    vf = ResolveValueFunction(view, agents[0], resolve_next=True)
else:
    vf = agents[0].aivat_value_function(view)

class Trace(AivatObserver):
    def match_end(self, r): pass
    def hand_start(self, hand):
        self.on = hand.number in WANT; self.n = hand.number
        if not self.on:
            return
        super().hand_start(hand)
        if self.on: print("HAND", hand.number, "A^D seat", hand.seat_of_player[0], flush=True)
    def _log(self, what, state, before):
        if self.on:
            d = self._tracker.correction - before
            print(f"  {what:28s} term {d:10.1f}  corr {self._tracker.correction:10.1f}  {view.describe(state)}  stats={vf.stats}", flush=True)
    def before_chance(self, hand, state):
        if self.on: super().before_chance(hand, state)
    def decision(self, hand, state, seat):
        if self.on: super().decision(hand, state, seat)
    def after_chance(self, hand, state):
        if not self.on: return
        b = self._tracker.correction; super().after_chance(hand, state); self._log("chance", state, b)
    def action(self, hand, state, seat, action):
        if not self.on: return
        b = self._tracker.correction
        pend = self._pending
        super().action(hand, state, seat, action)
        if self.on and pend is not None:
            acts, row = pend
            vals = []
            for a in acts:
                c = state.clone(); c.apply_action(int(a)); vals.append(round(vf.value(c), 1))
            print(f"    seat {seat} acts {action}; actions {acts.tolist()} probs {[round(float(x),3) for x in row]} values {vals}")
        self._log(f"decision seat {seat} a={action}", state, b)
    def hand_end(self, hand):
        if hand.number >= max(WANT) and not self.on: raise SystemExit(0)
        if not self.on: return
        super().hand_end(hand)
        if self.on: print("  END returns", hand.returns, "aivat(agents[0])", self.values[-1], flush=True)
        if hand.number >= max(WANT): raise SystemExit(0)

play_match(view.game, agents, int(sys.argv[1]), seed=0, duplicate=True, observers=[Trace(vf)], time_limit=float("inf"))
