"""Environment APIs over the compiled Hanabi engine.

* :class:`HanabiEnv` reads like HLE's ``rl_env.HanabiEnv``: ``reset()`` and ``step(action)`` return the
  observations of every player (``observations["current_player"]`` is to act), the reward is the change
  of the score, ``done`` marks the end of the game.  Actions are HLE move ids or HLE move dicts.
* :class:`HanabiAECEnv` is a ``pettingzoo.AECEnv`` (``agents``, ``agent_selection``, ``observe``,
  ``step``, ``last``; observations ``{"observation", "action_mask"}``) with Gymnasium spaces.
* :class:`HanabiVectorEnv` steps many games at once in C (auto-reset), returning numpy arrays.
* :class:`HanabiGymVectorEnv` is the same batch as a ``gymnasium.vector.VectorEnv`` (self-play: one
  policy moves for whichever player is to act; the legal mask is in ``infos["action_mask"]``).

Observation vectors are HLE's canonical encoding (0/1; uint8 numpy arrays, int8 in the AEC env as
Gymnasium's ``MultiBinary`` space holds them).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from pettingzoo import AECEnv

from cfrkit._kernels import hanabi_engine as _engine
from cfrkit.games.base import GameError, IllegalActionError, check_action_id
from cfrkit.games.hanabi.config import (COLOR_CHARS, HanabiConfig, move_from_dict, move_to_dict, move_to_string,
                                        preset)

ConfigLike = Union[HanabiConfig, Dict[str, Any], str, None]


def _move_id(action: Any, num_moves: int) -> int:
    """An integer move id in ``[0, num_moves)`` or :class:`IllegalActionError` (floats are not truncated)."""
    move = check_action_id(action)
    if not 0 <= move < num_moves:
        raise IllegalActionError(f"move {move} outside [0, {num_moves})")
    return move

_HLE_KEYS = {"players", "colors", "ranks", "hand_size", "max_information_tokens", "max_life_tokens",
             "observation_type", "scoring", "seed", "random_start_player"}


def _config(config: ConfigLike, players: Optional[int] = None) -> HanabiConfig:
    if config is None:
        return HanabiConfig(players=players or 2)
    if isinstance(config, HanabiConfig):
        return config
    if isinstance(config, str):
        return preset(config, players or 2)
    if isinstance(config, dict):
        unknown = set(config) - _HLE_KEYS
        if unknown:
            raise GameError(f"unknown Hanabi config keys {sorted(unknown)}; known: {sorted(_HLE_KEYS)}")
        params = {k: v for k, v in config.items() if k != "seed"}
        ot = params.get("observation_type")
        if isinstance(ot, int):
            params["observation_type"] = ("minimal", "card_knowledge", "seer")[ot]
        if players is not None:
            params["players"] = players
        return HanabiConfig(**params)
    raise GameError(f"expected a HanabiConfig, dict or preset name, got {type(config).__name__}")


def make(environment_name: str = "Hanabi-Full", num_players: int = 2, seed: int = 0) -> "HanabiEnv":
    """Like HLE's ``rl_env.make``: ``Hanabi-Full``, ``Hanabi-Full-Minimal``, ``Hanabi-Small``, ``Hanabi-Very-Small``."""
    return HanabiEnv(preset(environment_name, num_players), seed=seed)


class HanabiEnv:
    """Single-game environment with HLE's rl_env interface (seeded; game k uses seed ``(seed, k)``)."""

    def __init__(self, config: ConfigLike = None, seed: int = 0, players: Optional[int] = None):
        if isinstance(config, dict) and "seed" in config:
            seed = int(config["seed"])
        self.config = _config(config, players)
        self.engine_config = self.config.engine_config()
        self.players = self.config.players
        self.seed = int(seed)
        self.episodes = 0
        self.state: Optional[_engine.EngineState] = None

    # -- HLE rl_env API
    def vectorized_observation_shape(self) -> List[int]:
        return [self.engine_config.encoding_length]

    def num_moves(self) -> int:
        return self.engine_config.num_moves

    def reset(self) -> Dict[str, Any]:
        self.state = _engine.EngineState(self.engine_config, self.seed * 1_000_003 + self.episodes)
        self.episodes += 1
        self.state.deal_random()
        return self._observations()

    def step(self, action: Union[int, Dict[str, Any]]):
        """Apply the current player's move; returns ``(observations, reward, done, info)``."""
        if self.state is None:
            raise GameError("call reset() before step()")
        if self.state.is_terminal():
            raise GameError("the game is over; call reset()")
        move = move_from_dict(action, self.config) if isinstance(action, dict) else \
            _move_id(action, self.engine_config.num_moves)
        if not self.state.is_legal(move):
            legal = ", ".join(f"{m} {move_to_string(m, self.config)}" for m in self.state.legal_moves())
            raise IllegalActionError(f"move {action!r} is not legal for player {self.state.current_player()}; "
                                     f"legal: {legal}")
        before = self.state.score()
        self.state.apply(move)
        self.state.deal_random()
        reward = self.state.score() - before
        done = bool(self.state.is_terminal())
        return self._observations(), float(reward), done, {"score": self.state.score()}

    # -- observations
    def _observations(self) -> Dict[str, Any]:
        cur = self.state.current_player()
        return {"current_player": cur,
                "player_observations": [self.observation(p) for p in range(self.players)]}

    def observation(self, player: int) -> Dict[str, Any]:
        """HLE-style observation dict of ``player``."""
        if self.state is None:
            raise GameError("call reset() before observation()")
        if isinstance(player, bool) or not isinstance(player, (int, np.integer)) or not 0 <= player < self.players:
            raise GameError(f"player must be a seat 0..{self.players - 1}, got {player!r}")
        player = int(player)
        cfg, s = self.config, self.state
        cur = s.current_player()
        n = cfg.players
        legal = s.legal_moves() if cur == player else []
        hands, knowledge = [], []
        for rel in range(n):
            p = (player + rel) % n
            if p == player and cfg.observation_type != "seer":
                hands.append([{"color": None, "rank": -1} for _ in s.hand(p)])
            else:
                hands.append([{"color": COLOR_CHARS[c // cfg.ranks], "rank": c % cfg.ranks} for c in s.hand(p)])
            knowledge.append([{"color": COLOR_CHARS[hc] if hc >= 0 else None, "rank": hr if hr >= 0 else None}
                              for (_, _, hc, hr) in s.knowledge(p)])
        discards = [{"color": COLOR_CHARS[k // cfg.ranks], "rank": k % cfg.ranks} for k in s.discard_pile()]
        return {
            "current_player": cur,
            "current_player_offset": (cur - player) % n if cur >= 0 else -1,
            "life_tokens": s.life_tokens,
            "information_tokens": s.information_tokens,
            "num_players": n,
            "deck_size": s.deck_size,
            "fireworks": {COLOR_CHARS[c]: f for c, f in enumerate(s.fireworks())},
            "legal_moves": [move_to_dict(m, cfg) for m in legal],
            "legal_moves_as_int": legal,
            "observed_hands": hands,
            "discard_pile": discards,
            "card_knowledge": knowledge,
            "vectorized": s.encode(player),
        }


class HanabiAECEnv(AECEnv):
    """A PettingZoo ``AECEnv`` over one Hanabi game (cooperative rewards: every player gets the
    change in score).  Observations are dicts ``{"observation": int8[encoding], "action_mask":
    int8[moves]}``; passes ``pettingzoo.test.api_test``."""

    metadata = {"name": "cfrkit_hanabi_v0", "is_parallelizable": False, "render_modes": ["ansi", "human"]}

    def __init__(self, config: ConfigLike = None, seed: int = 0, players: Optional[int] = None,
                 render_mode: Optional[str] = "ansi"):
        if render_mode not in (None, "ansi", "human"):
            raise GameError(f"render_mode must be None, 'ansi' or 'human', got {render_mode!r}")
        self.config = _config(config, players)
        self.engine_config = self.config.engine_config()
        self.possible_agents = [f"player_{i}" for i in range(self.config.players)]
        self._seed = int(seed)
        self._episodes = 0
        self.state = None
        self.agents: List[str] = []
        self.render_mode = render_mode
        # one space object per agent, the same on every call (PettingZoo expects it)
        self._action_spaces = {a: spaces.Discrete(self.num_actions()) for a in self.possible_agents}
        self._observation_spaces = {
            a: spaces.Dict({"observation": spaces.MultiBinary(self.observation_length()),
                            "action_mask": spaces.MultiBinary(self.num_actions())})
            for a in self.possible_agents}

    def num_actions(self) -> int:
        return self.engine_config.num_moves

    def observation_length(self) -> int:
        return self.engine_config.encoding_length

    def action_space(self, agent: str):
        """``gymnasium.spaces.Discrete(num_moves)``."""
        return self._action_spaces[self.possible_agents[self._index(agent)]]

    def observation_space(self, agent: str):
        """``Dict(observation=MultiBinary(encoding length), action_mask=MultiBinary(num_moves))``."""
        return self._observation_spaces[self.possible_agents[self._index(agent)]]

    def render(self) -> Optional[str]:
        """The game as one line of text; printed (and None returned) with ``render_mode="human"``."""
        text = "" if self.state is None else (f"score {self.state.score()}  fireworks {self.state.fireworks()}  "
                                              f"to act: {self.agent_selection if self.agents else '-'}")
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.state = None

    def reset(self, seed: Optional[int] = None, options=None) -> None:
        if seed is not None:
            self._seed, self._episodes = int(seed), 0
        self.state = _engine.EngineState(self.engine_config, self._seed * 1_000_003 + self._episodes)
        self._episodes += 1
        self.state.deal_random()
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.state.current_player()]

    def _index(self, agent: str) -> int:
        try:
            return self.possible_agents.index(agent)
        except ValueError:
            raise GameError(f"unknown agent {agent!r}; agents: {self.possible_agents}") from None

    def observe(self, agent: str) -> Dict[str, np.ndarray]:
        """``{"observation": int8 0/1 vector, "action_mask": int8 0/1}`` (PettingZoo's int8 mask
        convention; the dtype of Gymnasium's ``MultiBinary``)."""
        if self.state is None:
            raise GameError("call reset() before observe()")
        p = self._index(agent)
        mask = np.zeros(self.num_actions(), dtype=np.int8)
        if self.state.current_player() == p:
            mask[:] = self.state.legal_mask()
        return {"observation": np.asarray(self.state.encode(p), dtype=np.int8), "action_mask": mask}

    def last(self, observe: bool = True):
        a = self.agent_selection
        obs = self.observe(a) if observe else None
        return obs, self._cumulative_rewards[a], self.terminations[a], self.truncations[a], self.infos[a]

    def step(self, action: Optional[int]) -> None:
        if self.state is None:
            raise GameError("call reset() before step()")
        agent = self.agent_selection
        if self.terminations.get(agent) or self.truncations.get(agent):
            if action is not None:
                raise GameError(f"{agent} is done: step(None) to remove it")
            self.agents.remove(agent)
            del self.rewards[agent], self._cumulative_rewards[agent], self.terminations[agent]
            del self.truncations[agent], self.infos[agent]
            for a in self.agents:  # removing a finished agent earns nobody anything
                self.rewards[a] = 0.0
            if self.agents:
                self.agent_selection = self.agents[0]
            return
        move = None if action is None else _move_id(action, self.num_actions())
        if move is None or not self.state.is_legal(move):
            raise IllegalActionError(f"action {action!r} is not legal for {agent}; legal: {self.state.legal_moves()}")
        self._cumulative_rewards[agent] = 0.0
        before = self.state.score()
        self.state.apply(move)
        self.state.deal_random()
        reward = float(self.state.score() - before)
        for a in self.agents:
            self.rewards[a] = reward
            self._cumulative_rewards[a] += reward
        if self.state.is_terminal():
            for a in self.agents:
                self.terminations[a] = True
                self.infos[a] = {"score": self.state.score()}
            self.agent_selection = self.agents[(self.agents.index(agent) + 1) % len(self.agents)]
        else:
            self.agent_selection = self.possible_agents[self.state.current_player()]


class HanabiVectorEnv:
    """``num_envs`` games stepped together in C; finished games restart at once.

    ``reset()`` returns ``(obs, mask, current_player)``; ``step(actions)`` returns
    ``(obs, mask, current_player, rewards, dones, final_scores)``.  Arrays are reused between calls
    (copy them to keep them).  ``obs`` is the acting player's canonical encoding (N x L, uint8);
    ``mask`` (N x num_moves) and ``dones`` (N) are bool, so ``x[dones]`` selects the finished games.
    ``actions`` must be N integer move ids; ``reset()`` must come first.
    """

    def __init__(self, config: ConfigLike = None, num_envs: int = 64, seed: int = 0, players: Optional[int] = None,
                 encode: bool = True):
        self.config = _config(config, players)
        self.engine_config = self.config.engine_config()
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)):
            raise GameError(f"num_envs must be an integer, got {num_envs!r}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2 ** 63:
            raise GameError(f"seed must be an integer in [0, 2**63), got {seed!r}")
        try:
            self.batch = _engine.BatchEngine(self.engine_config, int(num_envs), int(seed), bool(encode))
        except (ValueError, OverflowError) as exc:
            raise GameError(str(exc)) from None
        self.num_envs = int(num_envs)

    def reset(self):
        return self.batch.reset()

    def _require_reset(self, what: str) -> None:
        if not self.batch.started:
            raise GameError(f"call reset() before {what}")

    def step(self, actions: Sequence[int]):
        self._require_reset("step()")
        try:
            return self.batch.step(np.asarray(actions))
        except (ValueError, TypeError, OverflowError) as exc:
            raise IllegalActionError(str(exc)) from None

    def random_steps(self, num_steps: int, seed: int = 0):
        """Uniformly random legal play for ``num_steps`` moves in C; ``(steps, finished_games, score_sum)``."""
        self._require_reset("random_steps()")
        for name, value in (("num_steps", num_steps), ("seed", seed)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < 2 ** 62:
                raise GameError(f"{name} must be an integer in [0, 2**62), got {value!r}")
        try:
            return self.batch.random_steps(int(num_steps), int(seed))
        except ValueError as exc:
            raise GameError(str(exc)) from None

    def state(self, index: int):
        self._require_reset("state()")
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < self.num_envs:
            raise GameError(f"index must be a game 0..{self.num_envs - 1}, got {index!r}")
        return self.batch.state(int(index))


class HanabiGymVectorEnv(VectorEnv):
    """``num_envs`` Hanabi games as a ``gymnasium.vector.VectorEnv`` (the C batch of
    :class:`HanabiVectorEnv`), for single-agent RL code used as self-play.

    Each sub-environment is one game seen from the player to act: observations are that player's
    canonical encoding (``single_observation_space = MultiBinary(encoding length)``, int8), actions
    are move ids (``single_action_space = Discrete(num_moves)``; batched: ``MultiDiscrete``), the
    reward (float64) is the change of the team's score, so an episode's rewards sum to its final
    score (HLE scoring).  ``infos["action_mask"]`` (bool, N x num_moves) marks the legal moves and
    ``infos["current_player"]`` the seat to act; an illegal move raises
    :class:`~cfrkit.games.base.IllegalActionError`.  Finished games restart within the same step
    (``metadata["autoreset_mode"] = AutoresetMode.SAME_STEP``): their final score is in
    ``infos["final_info"]["score"]`` (masks ``infos["_final_info"]``); the terminal observation is not
    kept (``"final_obs"`` is absent), as a finished game has no value to bootstrap.  Games never
    truncate.  ``reset(seed=s)`` restarts the batch from seed ``s``; the returned arrays are copies.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, config: ConfigLike = None, num_envs: int = 64, seed: int = 0, players: Optional[int] = None):
        self._venv = HanabiVectorEnv(config, num_envs=num_envs, seed=seed, players=players)
        self.config = self._venv.config
        self.engine_config = self._venv.engine_config
        self.num_envs = self._venv.num_envs
        self.single_observation_space = spaces.MultiBinary(self.engine_config.encoding_length)
        self.single_action_space = spaces.Discrete(self.engine_config.num_moves)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._truncations = np.zeros(self.num_envs, dtype=np.bool_)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        """New games in every slot (from ``seed`` when given); returns ``(observations, infos)``."""
        if seed is not None:
            self._venv = HanabiVectorEnv(self.config, num_envs=self.num_envs, seed=seed)
        obs, mask, cur = self._venv.reset()
        return obs.astype(np.int8), {"action_mask": mask.copy(), "current_player": cur.copy()}

    def step(self, actions):
        """One move per game; returns ``(observations, rewards, terminations, truncations, infos)``."""
        obs, mask, cur, rewards, dones, finals = self._venv.step(actions)
        infos: Dict[str, Any] = {"action_mask": mask.copy(), "current_player": cur.copy()}
        if dones.any():
            infos["final_info"] = {"score": finals.copy(), "_score": dones.copy()}
            infos["_final_info"] = dones.copy()
        return (obs.astype(np.int8), rewards.astype(np.float64), dones.copy(), self._truncations.copy(), infos)
