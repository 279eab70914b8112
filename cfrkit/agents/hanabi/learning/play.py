"""Playing learned Hanabi policies: batched self-play on the engine and the ad-hoc challenger adapter.

A *policy* here is any callable ``policy(obs (B, L) uint8, mask (B, M) bool) -> moves (B,) int64``;
:func:`greedy_policy` turns an :class:`ActorCritic` or a Q-network into one.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from cfrkit._kernels import hanabi_engine as _engine
from cfrkit.games.hanabi.config import HanabiConfig

Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]


def episode_seed(seed: int, index: int) -> int:
    """The engine seed of batch ``index`` of a run seeded ``seed`` (distinct, reproducible, < 2**63)."""
    return int((int(seed) * 1_000_003 + int(index) * 7_919 + 1) % (2 ** 63))


def greedy_policy(net, device: str = "cpu") -> Policy:
    """Arg-max over legal moves of ``net`` (an ActorCritic: logits; a Q-net: expected returns)."""

    def policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            x = torch.as_tensor(obs, device=device).float()
            m = torch.as_tensor(mask, device=device)
            scores = net.q_values(x, m) if hasattr(net, "q_values") else net(x, m)[0]
            return scores.argmax(-1).cpu().numpy().astype(np.int64)

    return policy


def selfplay_scores(policy: Policy, config: HanabiConfig, games: int, seed: int = 0, batch: int = 1024) -> np.ndarray:
    """Scores of ``games`` self-play games (every seat plays ``policy``), in batches of one game per slot.

    Games are seeded by ``(seed, batch index)`` through the engine, so two policies are compared on
    the same deals.  Returns int scores (HLE scoring of ``config``), shape (games,).
    """
    out = []
    done_games, index = 0, 0
    while done_games < games:
        n = min(batch, games - done_games)
        out.append(play_batch(policy, config, n, episode_seed(seed, 10_000_000 + index)))
        done_games += n
        index += 1
    return np.concatenate(out)


def play_batch(policy: Policy, config: HanabiConfig, num_games: int, engine_seed: int) -> np.ndarray:
    """One game per slot of a fresh :class:`BatchEngine`; returns each slot's first final score."""
    eng = _engine.BatchEngine(config.engine_config(), int(num_games), int(engine_seed), True)
    obs, mask, _ = eng.reset()
    active = np.ones(num_games, dtype=bool)
    scores = np.zeros(num_games, dtype=np.int64)
    actions = np.zeros(num_games, dtype=np.int64)
    while active.any():
        idx = np.nonzero(active)[0]
        actions[idx] = policy(obs[idx], mask[idx])
        if (~active).any():  # finished slots restarted: any legal move keeps them going, unrecorded
            rest = np.nonzero(~active)[0]
            actions[rest] = mask[rest].argmax(1)
        obs, mask, _, _, dones, finals = eng.step(actions)
        newly = dones & active
        scores[newly] = finals[newly]
        active &= ~dones
    return scores


class LearnedChallenger:
    """A learned policy as a challenger of the ad-hoc protocol (:func:`cfrkit.evaluation.hanabi_protocols.adhoc_evaluate`).

    It does not adapt: the warm-up games are ignored (the Hanabi challenge's "no adaptation" baseline).
    The policy must have been trained on the protocol's game (Full Hanabi, the same player count).
    """

    def __init__(self, policy: Policy, name: str = "learned"):
        self.policy = policy
        self.name = name

    def reset(self) -> None:
        pass

    def observe(self, games) -> None:
        pass

    def act(self, state) -> int:
        p = state.current_player()
        obs = np.asarray(state.encode(p), dtype=np.uint8)[None]
        mask = np.asarray(state.legal_mask(), dtype=bool)[None]
        return int(self.policy(obs, mask)[0])
