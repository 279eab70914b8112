"""Leduc-family agents with the evaluation interface (per-hand strategies over Leduc's private cards).

The head-to-head runner, LBR, AIVAT and DRL-BR work on ``leduc`` and ``leduc_nolimit`` as on
hold'em; there a "hand" is a private card id ``0 .. num_cards-1`` and :class:`HandStrategy` rows are
indexed by card (rows of the card on the board are zero).

* :class:`LeducPolicyAgent` -- plays any policy of the game (``TabularPolicy``, uniform random, a CFR
  average policy) and answers for every card by querying the policy with that card;
* :class:`LeducDeepStackAgent` -- DeepStack's continual re-solving (one
  :class:`~cfrkit.agents.deepstack.DeepStackAgent` per seat, created on demand); its per-hand strategy
  is the re-solved strategy at the public history.

:func:`make_leduc_agent` builds one by name.
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from cfrkit.games.base import Game, GameError, State
from cfrkit.games.registry import load
from cfrkit.poker.agent import AgentInterfaceError, HandStrategy, PokerAgent


def _live_cards(state: State, num_cards: int) -> np.ndarray:
    live = np.ones(num_cards)
    if state.public >= 0:
        live[state.public] = 0.0
    return live


class LeducPolicyAgent(PokerAgent):
    """Play ``policy`` (``action_probabilities(state, player)``) in a Leduc-family game."""

    def __init__(self, policy, game: "str | Game", name: str = "policy", seed: Optional[int] = None):
        self.policy = policy
        self.game = load(game)
        if self.game.short_name not in ("leduc", "leduc_nolimit"):
            raise GameError(f"LeducPolicyAgent plays leduc or leduc_nolimit, not {self.game.game_string()!r}")
        self.name = name
        self.rng = np.random.default_rng(seed)
        self._memo: Dict[tuple, HandStrategy] = {}

    def _probs(self, state: State, player: int) -> Dict[int, float]:
        legal = set(state.legal_actions(player))
        probs = {int(a): float(q) for a, q in self.policy.action_probabilities(state, player).items()
                 if q > 0 and a in legal}
        total = sum(probs.values())
        if total <= 0:
            raise AgentInterfaceError(f"agent {self.name!r}: the policy gives no legal action at "
                                      f"{state.information_state_string(player)!r}")
        return {a: q / total for a, q in probs.items()}

    def act(self, state: State) -> int:
        p = state.current_player()
        hs = self.hand_strategy(state)
        row = hs.probs[state.private[p]]
        return int(hs.actions[self.rng.choice(len(row), p=row / row.sum())])

    def hand_strategy(self, state: State) -> HandStrategy:
        # the policy is fixed, so the answer depends only on the seat and the public state (memoised)
        p = state.current_player()
        key = (p, state.public_state_string())
        hit = self._memo.get(key)
        if hit is None:
            hit = self._hand_strategy(state, p)
            if len(self._memo) < 100_000:
                self._memo[key] = hit
        return HandStrategy(hit.actions, hit.probs.copy())

    def _hand_strategy(self, state: State, p: int) -> HandStrategy:
        n = self.game.num_cards
        live = _live_cards(state, n)
        rows = {}
        for h in range(n):
            if not live[h]:
                continue
            s2 = state.clone()
            s2.private[p] = h
            rows[h] = self._probs(s2, p)
        actions = sorted({a for r in rows.values() for a in r})
        probs = np.zeros((n, len(actions)))
        for h, r in rows.items():
            for k, a in enumerate(actions):
                probs[h, k] = r.get(a, 0.0)
        return HandStrategy(np.array(actions, dtype=np.int64), probs)


class LeducDeepStackAgent(PokerAgent):
    """DeepStack continual re-solving in either seat (``DeepStackAgent`` options passed through)."""

    name = "deepstack"

    def __init__(self, game: "str | Game", seed: int = 0, **options):
        self.game = load(game)
        self.options = dict(options)
        self.seed = int(seed)
        self._seats: Dict[int, object] = {}

    def seat(self, player: int):
        """The :class:`~cfrkit.agents.deepstack.DeepStackAgent` of ``player`` (built on first use)."""
        agent = self._seats.get(player)
        if agent is None:
            from cfrkit.agents.deepstack import DeepStackAgent

            agent = DeepStackAgent(self.game, player, seed=self.seed + player, **self.options)
            self._seats[player] = agent
        return agent

    def act(self, state: State) -> int:
        return self.seat(state.current_player()).step(state)

    def hand_strategy(self, state: State) -> HandStrategy:
        p = state.current_player()
        agent = self.seat(p)
        actions, strat = agent.strategy_at(agent.public_history(state))
        probs = np.array(strat, dtype=np.float64).T.copy()  # (hands, actions)
        probs *= _live_cards(state, self.game.num_cards)[:, None]
        rows = probs.sum(axis=1, keepdims=True)
        probs = np.where(rows > 0, probs / np.where(rows > 0, rows, 1.0), 0.0)
        return HandStrategy(np.array(actions, dtype=np.int64), probs)

    def resolve_covering(self, state: State, seat: int):
        """The re-solve of this agent's latest decision in ``seat`` strictly before ``state`` (see
        :meth:`cfrkit.agents.deepstack.DeepStackAgent.resolve_covering`); None before the private cards."""
        if len(state.private) < 2:
            return None
        return self.seat(seat).resolve_covering(state)

    def resolve_at(self, state: State, seat: int, iterations: Optional[int] = None):
        """The re-solve at ``state``, a decision of ``seat`` (see :meth:`cfrkit.agents.deepstack.DeepStackAgent.resolve_at`;
        ``iterations``: one with that many iterations, for valuation only)."""
        if len(state.private) < 2 or state.current_player() != seat:
            return None
        return self.seat(seat).resolve_at(state, iterations)

    def aivat_value_function(self, view):
        """AIVAT values from this agent's own re-solves (:class:`~cfrkit.agents.resolve_values.ResolveValueFunction`)."""
        from cfrkit.agents.resolve_values import ResolveValueFunction

        return ResolveValueFunction(view, self)

    def policy(self, progress: bool = False):
        """TabularPolicy of the agent at every information set (both seats), for exact evaluation."""
        from cfrkit.agents.deepstack import agent_policy

        return agent_policy(self.game, [self.seat(0), self.seat(1)], progress=progress)


LEDUC_AGENT_NAMES = ("random", "always-call", "always-fold", "policy", "deepstack")


class _Constant:
    """Policy that plays one action kind: call, or fold when folding is legal (else call)."""

    def __init__(self, kind: str):
        self.kind = kind

    def action_probabilities(self, state, player=None):
        legal = state.legal_actions(player)
        if self.kind == "fold" and 0 in legal:
            return {0: 1.0}
        return {1: 1.0}


def make_leduc_agent(name: str, game: "str | Game", seed: Optional[int] = None,
                     policy_path: Optional[str] = None, **options) -> PokerAgent:
    """A Leduc-family agent by name: ``random`` (uniform over legal actions), ``always-call``,
    ``always-fold``, ``policy`` (a TabularPolicy file, ``policy_path``), ``deepstack`` (exact leaf
    values, ``options`` passed to :class:`~cfrkit.agents.deepstack.DeepStackAgent`)."""
    from cfrkit.policy import TabularPolicy, UniformRandomPolicy

    game = load(game)
    key = {"call": "always-call", "fold": "always-fold"}.get(name, name)
    if key == "random":
        return LeducPolicyAgent(UniformRandomPolicy(), game, name="random", seed=seed)
    if key == "always-call":
        return LeducPolicyAgent(_Constant("call"), game, name="always-call", seed=seed)
    if key == "always-fold":
        return LeducPolicyAgent(_Constant("fold"), game, name="always-fold", seed=seed)
    if key == "policy":
        if not policy_path:
            raise GameError("the policy agent needs a policy file (--policy PATH)")
        return LeducPolicyAgent(TabularPolicy.load(policy_path, game), game, name="policy", seed=seed)
    if key == "deepstack":
        return LeducDeepStackAgent(game, seed=seed or 0, **options)
    raise GameError(f"unknown Leduc agent {name!r}; known: {', '.join(LEDUC_AGENT_NAMES)}")
