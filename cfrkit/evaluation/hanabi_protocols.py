"""The Hanabi challenge's evaluation protocols (Bard et al. 2020, section 3) for cfrkit agents.

* :func:`selfplay_report` -- the self-play report: mean, standard deviation, standard error,
  score histogram and perfect-game rate over at least 1000 games, under both scorings (HLE's 0 when
  the last life is lost, and the played cards the Walton-Rivers framework counts).
* :func:`crosstable` -- mean score of every pair of agents playing together (both seatings).
* :func:`adhoc_evaluate` -- the ad-hoc protocol: per trial the challenger is reset, sees 10 self-play
  games of the hold-out team (one of at least 100 pre-generated sets), then plays one game in a random
  seat with the team in the other seats; at least 1000 trials per hold-out team, reported with the
  team's own self-play baseline.

Rule agents run in C (``play_games``); challengers are any object with ``reset()``,
``observe(games)`` and ``act(state) -> move`` (see :class:`FixedChallenger`, :class:`PoolMatchingChallenger`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

import numpy as np

from cfrkit._kernels import hanabi_engine as _engine
from cfrkit.agents.hanabi import RuleAgent, as_agent, rule_table

#: A recorded game: (state before the move, player, move) per decision.
RecordedGame = List[Tuple[object, int, int]]


def _engine_config(players: int, played_cards: bool = False):
    return _engine.EngineConfig(players=players, played_cards_scoring=played_cards)


def seat_matrix(agents: Sequence[RuleAgent]) -> np.ndarray:
    """Chromosomes of the seats as one rectangular int array (shorter ones padded with their last rule,
    which never changes behaviour: a repeated rule is only reached when its first copy did not fire)."""
    if any(not hasattr(a, "rules") for a in agents):
        raise ValueError("convention bots (SmartBot, Information) only play with themselves: use selfplay_report")
    width = max(len(a.rules) for a in agents)
    out = np.empty((len(agents), width), dtype=np.intc)
    for i, a in enumerate(agents):
        out[i, :len(a.rules)] = a.rules
        out[i, len(a.rules):] = a.rules[-1]
    return out


@dataclass
class ScoreStats:
    mean: float
    std: float
    sem: float
    perfect_rate: float
    histogram: List[int]

    @classmethod
    def of(cls, scores: np.ndarray, max_score: int) -> "ScoreStats":
        scores = np.asarray(scores, dtype=np.float64)
        std = float(scores.std(ddof=1)) if len(scores) > 1 else 0.0
        return cls(float(scores.mean()), std, std / np.sqrt(len(scores)), float(np.mean(scores == max_score)),
                   np.bincount(scores.astype(int), minlength=max_score + 1).tolist())


@dataclass
class SelfPlayReport:
    agent: str
    players: int
    games: int
    zero_on_loss: ScoreStats
    played_cards: ScoreStats
    lost_all_lives_rate: float

    def as_dict(self) -> Dict[str, object]:
        return {"agent": self.agent, "players": self.players, "games": self.games,
                "zero_on_loss": vars(self.zero_on_loss), "played_cards": vars(self.played_cards),
                "lost_all_lives_rate": self.lost_all_lives_rate}


def selfplay_report(agent, players: int = 2, games: int = 1000, seed: int = 0) -> SelfPlayReport:
    """Self-play of ``players`` copies of ``agent`` over ``games`` games (both scorings from the same games)."""
    agent = as_agent(agent)
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    cfg = _engine_config(players)
    if hasattr(agent, "kind"):  # a convention bot: whole games in the kernel with its public knowledge
        scores, played, _ = _engine.convention_play_games(cfg, agent.kind, games, seed)
    else:
        scores, played, _ = _engine.play_games(cfg, rule_table(), seat_matrix([agent] * players), games, seed)
    max_score = cfg.colors * cfg.ranks
    lost = float(np.mean((scores == 0) & (played > 0)))
    return SelfPlayReport(agent.name, players, games, ScoreStats.of(scores, max_score), ScoreStats.of(played, max_score),
                          lost)


def team_scores(agents: Sequence, games: int, seed: int = 0, scoring: str = "zero_on_loss") -> np.ndarray:
    """Scores of ``games`` games with ``agents[k]`` in seat k."""
    agents = [as_agent(a) for a in agents]
    cfg = _engine_config(len(agents), scoring == "played_cards")
    scores, _, _ = _engine.play_games(cfg, rule_table(), seat_matrix(agents), games, seed)
    return scores


def crosstable(agents: Sequence, players: int = 2, games: int = 200, seed: int = 0,
               scoring: str = "zero_on_loss", progress: bool = False) -> np.ndarray:
    """``M[i, j]``: mean score when agent i sits with agent j in every other seat.

    The games are split evenly over the seats agent i can take, so seat effects average out.
    The diagonal is self-play.
    """
    agents = [as_agent(a) for a in agents]
    n = len(agents)
    out = np.zeros((n, n))
    pairs = [(i, j) for i in range(n) for j in range(n)]
    it = pairs
    if progress:
        from tqdm import tqdm

        it = tqdm(pairs, desc="crosstable", unit="pair", dynamic_ncols=True)
    per_seat = max(1, games // players)
    for i, j in it:
        total = 0.0
        for seat in range(players):
            team = [agents[j]] * players
            team[seat] = agents[i]
            total += team_scores(team, per_seat, seed + 7919 * seat + 104729 * (i * n + j), scoring).sum()
        out[i, j] = total / (per_seat * players)
    return out


# ----------------------------------------------------------------------------- ad-hoc protocol
def play_game(policies: Sequence, players: int, seed: int, record: bool = False, scoring: str = "zero_on_loss"):
    """One game where seat k moves with ``policies[k](state) -> move``; returns ``(score, record)``."""
    state = _engine.EngineState(_engine_config(players, scoring == "played_cards"), seed)
    state.deal_random()
    log: RecordedGame = []
    while not state.is_terminal():
        p = state.current_player()
        move = int(policies[p](state))
        if not state.is_legal(move):
            raise ValueError(f"seat {p} chose illegal move {move}; legal: {state.legal_moves()}")
        if record:
            log.append((state.clone(), p, move))
        state.apply(move)
        state.deal_random()
    return state.score(), log


def _rule_policy(agent: RuleAgent, seed: int):
    counter = [0]

    def policy(state):
        counter[0] += 1
        return agent.act(state, seed * 1_000_003 + counter[0])

    return policy


def record_selfplay(agent, players: int, games: int, seed: int) -> List[RecordedGame]:
    """``games`` recorded self-play games of ``agent`` (the ad-hoc protocol's warm-up material)."""
    agent = as_agent(agent)
    out = []
    for g in range(games):
        policy = _rule_policy(agent, seed + g)
        _, log = play_game([policy] * players, players, seed * 7_919 + g, record=True)
        out.append(log)
    return out


class FixedChallenger:
    """A challenger that ignores the warm-up games and plays one rule agent."""

    def __init__(self, agent):
        self.agent = as_agent(agent)
        self.name = f"Fixed({self.agent.name})"
        self._calls = 0

    def reset(self) -> None:
        self._calls = 0

    def observe(self, games: Sequence[RecordedGame]) -> None:
        pass

    def act(self, state) -> int:
        self._calls += 1
        return self.agent.act(state, self._calls)


class PoolMatchingChallenger:
    """Adapts by imitation: plays the candidate agent whose moves agree most with the warm-up games."""

    def __init__(self, pool: Sequence):
        self.pool = [as_agent(a) for a in pool]
        if not self.pool:
            raise ValueError("PoolMatchingChallenger needs at least one candidate agent")
        self.name = "PoolMatching(" + ",".join(a.name for a in self.pool) + ")"
        self.choice = self.pool[0]
        self.agreement: List[float] = []
        self._calls = 0

    def reset(self) -> None:
        self.choice = self.pool[0]
        self.agreement = []
        self._calls = 0

    def observe(self, games: Sequence[RecordedGame]) -> None:
        states = [s for g in games for (s, _, _) in g]
        moves = np.array([m for g in games for (_, _, m) in g], dtype=np.int32)
        if not len(states):
            return
        self.agreement = [float(np.mean(_engine.actions_on_states(states, rule_table(), a.rules, 5) == moves))
                          for a in self.pool]
        self.choice = self.pool[int(np.argmax(self.agreement))]

    def act(self, state) -> int:
        self._calls += 1
        return self.choice.act(state, self._calls)


@dataclass
class AdHocResult:
    team: str
    trials: int
    mean: float
    std: float
    sem: float
    team_selfplay_mean: float
    team_selfplay_std: float
    scores: List[int] = field(repr=False, default_factory=list)


def adhoc_evaluate(challenger, holdout_teams: Dict[str, object], players: int = 2, trials: int = 1000,
                   num_sets: int = 100, games_per_set: int = 10, seed: int = 0, progress: bool = False
                   ) -> List[AdHocResult]:
    """Run the ad-hoc protocol for ``challenger`` against each hold-out team (name -> rule agent)."""
    if trials < 1 or num_sets < 1 or games_per_set < 0:
        raise ValueError("trials and num_sets must be >= 1, games_per_set >= 0")
    rng = np.random.default_rng(seed)
    results = []
    for t_index, (name, team_agent) in enumerate(holdout_teams.items()):
        team_agent = as_agent(team_agent)
        sets = [record_selfplay(team_agent, players, games_per_set, seed + 1_000 * t_index + 17 * k)
                for k in range(min(num_sets, trials))]
        scores = []
        it = range(trials)
        if progress:
            from tqdm import tqdm

            it = tqdm(it, desc=f"ad-hoc vs {name}", unit="trial", dynamic_ncols=True)
        for trial in it:
            challenger.reset()
            challenger.observe(sets[trial % len(sets)])
            seat = int(rng.integers(players))
            policies = [_rule_policy(team_agent, seed + trial * players + k) for k in range(players)]
            policies[seat] = challenger.act
            score, _ = play_game(policies, players, int(rng.integers(2 ** 62)))
            scores.append(score)
        baseline = team_scores([team_agent] * players, max(trials, 1000), seed + 99)
        arr = np.asarray(scores, dtype=np.float64)
        std = float(arr.std(ddof=1)) if len(arr) > 1 else 0.0
        results.append(AdHocResult(name, trials, float(arr.mean()), std, std / np.sqrt(len(arr)),
                                   float(baseline.mean()), float(baseline.std(ddof=1)), scores))
    return results
