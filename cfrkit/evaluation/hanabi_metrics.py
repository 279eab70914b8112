"""Metrics of generators of Hanabi agent pools (Canaan et al. 2019, section III-B and V).

* Map metrics: coverage (niches whose elite scores above 0), mean score over covered niches, best
  score and its niche.
Scores use the scoring of the map (``played_cards`` for the paper's setting).

* Intra-run diversity of one map: pairwise crosstable of the valid elites, best-partner counts,
  chromosome Hamming distance and action similarity on recorded states, both by Manhattan distance in
  the behaviour map.
* Cross-run diversity: corresponding agents (same niche) of two runs -- their score together,
  Hamming distance and action similarity.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit._kernels import hanabi_engine as _engine
from cfrkit.agents.hanabi import RuleAgent, rule_table
from cfrkit.evaluation.hanabi_protocols import crosstable, team_scores


def map_metrics(fitness: np.ndarray) -> Dict[str, object]:
    """Coverage, mean over covered niches, mean over all niches, best score and niche (row, column bins)."""
    values = np.nan_to_num(np.asarray(fitness, dtype=np.float64), nan=0.0)
    covered = values > 0
    best = np.unravel_index(int(np.argmax(values)), values.shape)
    return {"coverage": int(covered.sum()), "niches": int(values.size),
            "mean_score_covered": float(values[covered].mean()) if covered.any() else 0.0,
            "mean_score_all": float(values.mean()), "best_score": float(values[best]),
            "best_niche": (int(best[0]), int(best[1]))}


def hamming_distance(a: Sequence[int], b: Sequence[int]) -> int:
    """Positions at which two chromosomes differ."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise ValueError(f"chromosomes of different lengths {a.shape} and {b.shape}")
    return int(np.sum(a != b))


def recorded_states(agents: Sequence[RuleAgent], players: int = 2, games_per_agent: int = 10, seed: int = 0):
    """Decision states met in self-play of each agent (the states on which actions are compared)."""
    cfg = _engine.EngineConfig(players=players)
    states = []
    for k, agent in enumerate(agents):
        states += _engine.record_states(cfg, rule_table(), np.tile(agent.rules, (players, 1)), games_per_agent,
                                        seed + k)
    return states


def action_matrix(agents: Sequence[RuleAgent], states) -> np.ndarray:
    """``A[k, s]``: the move agent k picks at recorded state s."""
    return np.stack([_engine.actions_on_states(states, rule_table(), a.rules, 13) for a in agents])


def action_similarity(actions_a: np.ndarray, actions_b: np.ndarray) -> float:
    """Fraction of recorded states where two agents pick the same move."""
    return float(np.mean(np.asarray(actions_a) == np.asarray(actions_b)))


def best_partner_counts(table: np.ndarray) -> np.ndarray:
    """``counts[j]``: for how many agents i agent j is the best partner (argmax over j of ``table[i, j]``)."""
    counts = np.zeros(table.shape[1], dtype=np.int64)
    for i in range(table.shape[0]):
        counts[int(np.argmax(table[i]))] += 1
    return counts


def _valid(fitness: np.ndarray, chromosomes: np.ndarray) -> Tuple[List[Tuple[int, int]], List[RuleAgent]]:
    niches = [tuple(int(x) for x in n) for n in np.argwhere(np.nan_to_num(fitness, nan=0.0) > 0)]
    return niches, [RuleAgent(chromosomes[n], name=f"niche{n}") for n in niches]


def intra_run_diversity(fitness: np.ndarray, chromosomes: np.ndarray, players: int = 2, games: int = 100,
                        state_games: int = 5, seed: int = 0, max_agents: Optional[int] = None,
                        progress: bool = False, scoring: str = "played_cards") -> Dict[str, object]:
    """Pairwise metrics of the valid elites of one map, best first (optionally only the ``max_agents`` best)."""
    niches, agents = _valid(fitness, chromosomes)
    order = np.argsort([-fitness[n] for n in niches], kind="stable")  # best elites first
    if max_agents is not None:
        order = order[:max_agents]
    niches = [niches[i] for i in order]
    agents = [agents[i] for i in order]
    if len(agents) < 2:
        raise ValueError("intra-run diversity needs at least two valid elites")
    table = crosstable(agents, players, games, seed, scoring=scoring, progress=progress)
    states = recorded_states(agents, players, state_games, seed + 1)
    actions = action_matrix(agents, states)
    by_distance_h: Dict[int, List[float]] = defaultdict(list)
    by_distance_a: Dict[int, List[float]] = defaultdict(list)
    by_distance_s: Dict[int, List[float]] = defaultdict(list)
    hd, sim = [], []
    for i in range(len(agents)):
        for j in range(i + 1, len(agents)):
            d = abs(niches[i][0] - niches[j][0]) + abs(niches[i][1] - niches[j][1])
            h = hamming_distance(agents[i].rules, agents[j].rules)
            a = action_similarity(actions[i], actions[j])
            hd.append(h)
            sim.append(a)
            by_distance_h[d].append(h)
            by_distance_a[d].append(a)
            by_distance_s[d].append(0.5 * (table[i, j] + table[j, i]))
    off = table[~np.eye(len(agents), dtype=bool)]
    return {
        "agents": len(agents), "niches": niches, "crosstable": table,
        "self_play_mean": float(np.mean(np.diag(table))), "pairwise_mean": float(off.mean()),
        "best_partner_counts": best_partner_counts(table),
        "mean_hamming": float(np.mean(hd)), "mean_action_similarity": float(np.mean(sim)),
        "recorded_states": len(states),
        "by_manhattan_distance": {d: {"hamming": float(np.mean(by_distance_h[d])),
                                      "action_similarity": float(np.mean(by_distance_a[d])),
                                      "pair_score": float(np.mean(by_distance_s[d]))}
                                  for d in sorted(by_distance_h)},
    }


def cross_run_diversity(fitness_a: np.ndarray, chromosomes_a: np.ndarray, fitness_b: np.ndarray,
                        chromosomes_b: np.ndarray, players: int = 2, games: int = 100, state_games: int = 5,
                        seed: int = 0, scoring: str = "played_cards") -> Dict[str, object]:
    """Corresponding agents (niches valid in both runs): score together, Hamming distance, action similarity."""
    both = [tuple(int(x) for x in n) for n in np.argwhere((np.nan_to_num(fitness_a, nan=0.0) > 0)
                                                          & (np.nan_to_num(fitness_b, nan=0.0) > 0))]
    if not both:
        raise ValueError("the two runs share no valid niche")
    pair_scores, hd, sim, selfplay = [], [], [], []
    for k, n in enumerate(both):
        a = RuleAgent(chromosomes_a[n])
        b = RuleAgent(chromosomes_b[n])
        half = max(1, games // 2)
        s = np.concatenate([team_scores([a] + [b] * (players - 1), half, seed + 2 * k, scoring),
                            team_scores([b] + [a] * (players - 1), half, seed + 2 * k + 1, scoring)])
        pair_scores.append(float(s.mean()))
        selfplay.append(0.5 * (fitness_a[n] + fitness_b[n]))
        hd.append(hamming_distance(a.rules, b.rules))
        states = recorded_states([a], players, state_games, seed + 3 * k)
        acts = action_matrix([a, b], states)
        sim.append(action_similarity(acts[0], acts[1]))
    return {"corresponding_niches": len(both), "mean_pair_score": float(np.mean(pair_scores)),
            "mean_self_play": float(np.mean(selfplay)), "mean_hamming": float(np.mean(hd)),
            "mean_action_similarity": float(np.mean(sim))}
