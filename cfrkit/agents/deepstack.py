"""DeepStack's continual re-solving agent for poker games with a public-tree view (Leduc family).

At every own decision the agent re-solves the public subgame rooted at the current state (to the end
of the betting round with a leaf value function, or to the end of the game without one) with the
CFR-D gadget, from two quantities it carries between decisions:

* its own range: the reach of each private hand under its own earlier re-solved strategies (Bayes
  update after each own action; hands blocked by board cards drop out);
* the opponent's counterfactual values from the previous solve, read at the node the public history
  has reached (after our action, the opponent's action and any board card): by default the
  opponent's cfvs averaged over that solve's iterations (DeepStack's choice), or those of the
  opponent's best response to its average strategy (``carry="best_response"``, a looser bound that
  passes the previous solve's residual exploitability on).  When the history has
  left the previous solve's depth-limited tree (a new round where the opponent acts first), the agent
  first re-solves at the leaf where it left and reads the values there.

The first solve of a hand is a plain solve from the start of the betting with both ranges uniform.

The agent is a deterministic function of the public history, so its strategy at every information
set can be computed exactly (:func:`agent_policy`), and its exploitability evaluated exactly.
Re-solves are memoised by public history.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Sequence, Tuple

import numpy as np

from cfrkit.games.base import Game, GameError, State
from cfrkit.games.registry import load
from cfrkit.solvers.public.games import LeducPublicGame, public_game_for
from cfrkit.solvers.public.tree import DECISION, LEAF, PublicTree, build_public_tree
from cfrkit.solvers.public.resolving import ResolveResult, resolve


@dataclass
class _Record:
    root_history: Tuple[int, ...]
    result: ResolveResult


class DeepStackAgent:
    """Continual re-solving for seat ``player`` (see module docstring).

    Args:
        game: a Leduc-family game (string or Game).
        player: the seat the agent plays.
        leaf_values: leaf value function (e.g. a :class:`~cfrkit.value_nets.leaf_values.NetLeafValues`)
            for depth-limited re-solving to the end of the round; None solves to the end of the game.
        iterations, skip, algorithm, average: CFR settings of every re-solve (default DCFR 1.5/0/2, which
            beat CFR+ on no-limit Leduc with and without a value net; see benchmarks/RESULTS.md).
        backend, device: array backend of the re-solves.
        seed: seed of the action sampling in :meth:`step`.
        leaf_resolve: at a depth-limited leaf left by the opponent's first action of a round, re-solve
            with the CFR-D gadget (default) or against the opponent's range there (diagnostics).
        carry: ``"average_values"`` or ``"best_response"`` (see module docstring).
    """

    def __init__(self, game: "str | Game", player: int, leaf_values=None, iterations: int = 1000, skip: int = 0,
                 algorithm: str = "dcfr", average: str = "linear", backend: str = "numpy",
                 device: Optional[str] = None, seed: int = 0, leaf_resolve: str = "gadget",
                 carry: str = "average_values"):
        self.game = load(game)
        if player not in (0, 1):
            raise GameError(f"player must be 0 or 1, got {player}")
        self.player = player
        self.pgame = public_game_for(self.game)
        if not isinstance(self.pgame, LeducPublicGame):
            raise GameError(f"DeepStackAgent plays the Leduc family (leduc, leduc_nolimit), not {self.game.short_name!r}: "
                            f"hold'em public trees exist (HoldemPublicGame) but hold'em value nets do not yet")
        self.leaf_values = leaf_values
        self.iterations, self.skip, self.algorithm, self.average = int(iterations), int(skip), algorithm, average
        self.backend, self.device = backend, device
        if leaf_resolve not in ("gadget", "range"):
            raise ValueError(f"leaf_resolve must be 'gadget' or 'range', got {leaf_resolve!r}")
        self.leaf_resolve = leaf_resolve
        if carry not in ("best_response", "average_values"):
            raise ValueError(f"carry must be 'best_response' or 'average_values', got {carry!r}")
        self.carry = carry
        self.full_tree: PublicTree = build_public_tree(self.pgame)
        self._records: Dict[Tuple[int, ...], _Record] = {}
        self.num_resolves = 0
        self.rng = np.random.default_rng(seed)

    # ----------------------------------------------------------------- solving
    def _solve(self, state, own_range, opp_cfvs=None, opp_range=None, iterations: Optional[int] = None) -> ResolveResult:
        self.num_resolves += 1
        its = self.iterations if iterations is None else int(iterations)
        return resolve(self.pgame, state, self.player, own_range, opp_cfvs=opp_cfvs, opp_range=opp_range,
                       iterations=its, skip=self.skip if iterations is None else min(self.skip, its - 1), leaf_values=self.leaf_values,
                       depth_limit=self.leaf_values is not None, algorithm=self.algorithm, average=self.average,
                       backend=self.backend, device=self.device)

    def _initial_record(self) -> _Record:
        rec = self._records.get(("init",))
        if rec is None:
            root = self.full_tree.root
            mask = self.pgame.hand_mask(root.board)
            prior = mask / mask.sum()
            rec = _Record((), self._solve(root.state, prior, opp_range=prior))
            self._records[("init",)] = rec
        return rec

    def _own_decision_prefixes(self, history: Tuple[int, ...]):
        out = []
        for k in range(len(history)):
            n = self.full_tree.node_at(history[:k])
            if n.kind == DECISION and n.player == self.player:
                out.append(history[:k])
        return out

    def record_at(self, history: Sequence[int], iterations: Optional[int] = None) -> _Record:
        """The re-solve made at own decision node ``history`` (public actions from the start of betting).
        ``iterations``: a re-solve there with that many iterations instead of the agent's own, from the same earlier
        solve (the re-solves on the way, at depth-limited leaves, with those iterations too), kept apart from the
        agent's own records (valuation only: :meth:`resolve_at`)."""
        history = tuple(int(a) for a in history)
        cheap = iterations is not None and int(iterations) != self.iterations
        key = (history, "iterations", int(iterations)) if cheap else history
        rec = self._records.get(key)
        if rec is not None:
            return rec
        node = self.full_tree.node_at(history)
        if node.kind != DECISION or node.player != self.player:
            raise GameError(f"public history {list(history)} is not a decision of player {self.player}")
        prefixes = self._own_decision_prefixes(history)
        rec = self.record_at(prefixes[-1]) if prefixes else self._initial_record()
        opp = 1 - self.player
        while True:
            if rec.root_history == history:
                break
            rel = history[len(rec.root_history):]
            sub, k = rec.result.tree.deepest_node(rel)
            own_range = rec.result.reach[sub.index][0, self.player]
            carried = rec.result.opp_br_values if self.carry == "best_response" else rec.result.opp_avg_values
            opp_cfvs = carried[sub.index][0]
            if k == len(rel):
                target = node.state
            elif sub.kind == LEAF:
                target = sub.state
            else:
                raise GameError(f"public history {list(history)} leaves the re-solved tree at {list(rel[:k])}")
            its = int(iterations) if cheap else None
            if sub.kind == LEAF and self.leaf_resolve == "range":
                # re-solve a depth-limited leaf against the opponent's range there instead of the gadget
                result = self._solve(target, own_range, opp_range=rec.result.reach[sub.index][0, opp], iterations=its)
            else:
                result = self._solve(target, own_range, opp_cfvs=opp_cfvs, iterations=its)
            new = _Record(rec.root_history + tuple(rel[:k]), result)
            if not cheap:
                self._records[new.root_history] = new
            rec = new
        self._records[key] = rec
        return rec

    def strategy_at(self, history: Sequence[int]) -> Tuple[Tuple[int, ...], np.ndarray]:
        """``(actions, (A, H) strategy for every private hand)`` at own decision node ``history``."""
        rec = self.record_at(history)
        return rec.result.tree.root.actions, rec.result.strategy[0][0]

    def resolve_covering(self, state: State):
        """``(ResolveResult, public actions from its root to state, position)``: the re-solve of this seat's
        latest decision strictly before ``state`` (the one :meth:`step` drew that action from), or the hand's
        first solve (position -1)."""
        history = self.public_history(state)
        prefixes = self._own_decision_prefixes(history)
        rec = self.record_at(prefixes[-1]) if prefixes else self._initial_record()
        if history[:len(rec.root_history)] != rec.root_history:
            return None
        return rec.result, history[len(rec.root_history):], len(prefixes[-1]) if prefixes else -1

    def resolve_at(self, state: State, iterations: Optional[int] = None):
        """``(ResolveResult, public actions from its root to state, position)`` of the re-solve at ``state``, an own
        decision (memoised; made now if not yet; ``iterations``: one with that many iterations, :meth:`record_at`)."""
        history = self.public_history(state)
        rec = self.record_at(history, iterations)
        return rec.result, history[len(rec.root_history):], len(history)

    # ----------------------------------------------------------------- playing
    def public_history(self, state: State) -> Tuple[int, ...]:
        return tuple(state.history()[2:])

    def action_probabilities(self, state: State, player: Optional[int] = None) -> Dict[int, float]:
        if player is None:
            player = state.current_player()
        if player != self.player:
            raise GameError(f"this agent plays seat {self.player}, asked for seat {player}")
        actions, strat = self.strategy_at(self.public_history(state))
        hand = state.private[self.player]
        return {int(a): float(strat[k, hand]) for k, a in enumerate(actions)}

    def step(self, state: State) -> int:
        probs = self.action_probabilities(state)
        acts = list(probs)
        p = np.array([probs[a] for a in acts])
        return int(acts[self.rng.choice(len(acts), p=p / p.sum())])


def agent_policy(game: "str | Game", agents: Sequence[DeepStackAgent], progress: bool = False):
    """TabularPolicy with each seat's re-solved strategy at every information set (agents[p] plays seat p)."""
    from cfrkit.policy import TabularPolicy

    game = load(game)
    pgame = public_game_for(game)
    tree = agents[0].full_tree
    policy = TabularPolicy(game)
    nodes = [n for n in tree.nodes if n.kind == DECISION]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(nodes), desc="re-solving every public state", unit="node")
    for n in nodes:
        agent = agents[n.player]
        actions, strat = agent.strategy_at(n.history)
        mask = pgame.hand_mask(n.board)
        for h in range(pgame.num_hands):
            if mask[h] > 0:
                policy.table[pgame.infoset_key(n.state, n.player, h)] = {
                    int(a): float(strat[k, h]) for k, a in enumerate(actions)}
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return policy
