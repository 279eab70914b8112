"""DRL-BR: a deep Q-network trained to best-respond to a fixed poker agent (OpenHoldem's protocol).

The evaluated agent is part of the environment; the learner plays both seats (alternating hands,
deals from :func:`cfrkit.games.holdem.deals.deal_for_hand` with the training seed) and sees its own
cards, the board, the round, its seat and the chips in the pot.  Its actions are fold, check/call
and raises from a configurable bet set (pot fractions and all-in, mapped to legal sizes as LBR maps
them); illegal ones are masked.  Learning: double DQN with a target network, experience replay,
n-step returns (rewards come at the end of the hand, so n-step speeds up their propagation; no
discount within a hand) and an optional dueling head.  CPU by default, CUDA when present.

After training the greedy policy plays the agent head to head (duplicate; AIVAT with the agent's
known strategy when it has one) and the result is DRL-BR's estimate of the agent's exploitability,
in mbb/hand with a 95% interval -- a lower bound up to sampling error, like LBR.

Training is checkpointed (networks, optimiser, replay buffer, counters and random states; atomic
writes) every ``checkpoint_every`` steps and on Ctrl-C; running again with the same file resumes.
"""
from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

from cfrkit._io import atomic_path
from cfrkit.evaluation.headtohead import exact_match_value, head_to_head
from cfrkit.evaluation.lbr import ALL_IN, bet_actions
from cfrkit.games.base import GameError
from cfrkit.poker.agent import DEFAULT_TIME_LIMIT, CheckedAgent, HandStrategy, PokerAgent, agent_name
from cfrkit.poker.match import play_hand
from cfrkit.poker.view import PokerView, poker_view

FOLD, CALL = 0, 1


# ============================================================================ observations and actions
class Features:
    """Observation vector of the player to act (float32): own cards, board, round, seat, chips."""

    def __init__(self, view: PokerView):
        self.view = view
        self.deck = 52 if view.game.short_name == "holdem" else view.num_hands
        self.rounds = view.num_rounds()
        # Leduc: the rank of the private card and whether it pairs the board (suits do not matter)
        self.ranks = 0 if view.game.short_name == "holdem" else view.game.ranks
        self.size = 2 * self.deck + self.rounds + 2 + 6 + (self.ranks + 1 if self.ranks else 0)
        self.stack = max(view.stacks())

    def encode(self, state, player: int, hand: Optional[int] = None) -> np.ndarray:
        v = self.view
        x = np.zeros(self.size, dtype=np.float32)
        h = v.hand_of(state, player) if hand is None else hand
        for c in v.hand_cards(h):
            x[c] = 1.0
        for c in v.public_cards(state):
            x[self.deck + c] = 1.0
        o = 2 * self.deck
        x[o + min(v.round_of(state), self.rounds - 1)] = 1.0
        o += self.rounds
        x[o + player] = 1.0
        o += 2
        c = v.contributions(state)
        mine, opp = c[player], c[1 - player]
        s = self.stack
        x[o:o + 6] = (mine / s, opp / s, (mine + opp) / s, max(0.0, opp - mine) / s,
                      max(0.0, opp - mine) / max(1.0, mine + opp), math.log1p((mine + opp) / v.big_blind) / 5.0)
        if self.ranks:
            o += 6
            suits = v.game.suits
            x[o + h // suits] = 1.0
            public = v.public_cards(state)
            x[o + self.ranks] = float(bool(public) and public[0] // suits == h // suits)
        return x


class ActionSet:
    """DQN action slots: fold, check/call, then one raise per bet size (pot fractions, inf = all-in)."""

    def __init__(self, view: PokerView, bets: Sequence[float]):
        self.view = view
        self.bets = tuple(bets)
        self.size = 2 + len(self.bets)

    def legal(self, state) -> Tuple[np.ndarray, List[Optional[int]]]:
        """(bool mask over slots, the game action of each slot or None)."""
        acts: List[Optional[int]] = [FOLD if self.view.legal(state, FOLD) else None, CALL]
        for f in self.bets:
            got = bet_actions(self.view, state, [f])
            acts.append(got[0] if got else None)
        return np.array([a is not None for a in acts]), acts

    def labels(self) -> List[str]:
        return ["fold", "call"] + ["allin" if f == ALL_IN else f"{f:g}pot" for f in self.bets]


# ============================================================================ network and replay
def _torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is an extra
        raise GameError("DRL-BR needs torch (pip install 'cfrkit[torch]')") from None
    return torch


def build_qnet(inputs: int, actions: int, hidden: Sequence[int] = (128, 128), dueling: bool = True):
    torch = _torch()
    nn = torch.nn

    class QNet(nn.Module):
        def __init__(self):
            super().__init__()
            layers, last = [], inputs
            for h in hidden:
                layers += [nn.Linear(last, h), nn.ReLU()]
                last = h
            self.body = nn.Sequential(*layers)
            self.dueling = dueling
            self.adv = nn.Linear(last, actions)
            self.val = nn.Linear(last, 1) if dueling else None

        def forward(self, x):
            z = self.body(x)
            a = self.adv(z)
            if self.dueling:
                return self.val(z) + a - a.mean(dim=1, keepdim=True)
            return a

    return QNet()


class Replay:
    """Ring buffer of n-step transitions (numpy arrays, saved in checkpoints)."""

    def __init__(self, capacity: int, obs: int, actions: int):
        self.capacity = int(capacity)
        self.obs = np.zeros((capacity, obs), dtype=np.float32)
        self.action = np.zeros(capacity, dtype=np.int64)
        self.ret = np.zeros(capacity, dtype=np.float32)
        self.next_obs = np.zeros((capacity, obs), dtype=np.float32)
        self.next_mask = np.zeros((capacity, actions), dtype=bool)
        self.done = np.zeros(capacity, dtype=np.float32)
        self.size = 0
        self.pos = 0

    def add(self, obs, action, ret, next_obs, next_mask, done) -> None:
        i = self.pos
        self.obs[i], self.action[i], self.ret[i] = obs, action, ret
        self.next_obs[i], self.next_mask[i], self.done[i] = next_obs, next_mask, done
        self.pos = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, rng: np.random.Generator, batch: int):
        idx = rng.integers(0, self.size, size=batch)
        return self.obs[idx], self.action[idx], self.ret[idx], self.next_obs[idx], self.next_mask[idx], self.done[idx]

    def arrays(self) -> dict:
        return {k: getattr(self, k) for k in ("obs", "action", "ret", "next_obs", "next_mask", "done")}


# ============================================================================ the trainer
@dataclass
class DQNConfig:
    """Hyper-parameters (defaults suit Leduc; rewards are scaled by 1 / big blind).

    ``n_step = 8`` exceeds a Leduc hand's decisions, so returns are Monte Carlo there (it beat 3 in
    the runs of docs/evaluation.md); the learning rate decays linearly from ``lr`` to ``lr_end``.
    """

    bets: Tuple[float, ...] = (0.5, 1.0, ALL_IN)
    hidden: Tuple[int, ...] = (64, 64)
    dueling: bool = True
    double: bool = True
    n_step: int = 8
    lr: float = 1e-3
    batch: int = 128
    replay: int = 50_000
    learn_start: int = 500
    train_every: int = 2
    target_every: int = 250
    eps_start: float = 1.0
    eps_end: float = 0.02
    eps_steps: int = 3_000
    grad_clip: float = 10.0
    lr_end: float = 1e-4
    lr_decay_steps: int = 10_000


class _ExploringSeat:
    """The learner at the table during training: epsilon-greedy, and a learning step every
    ``train_every`` decisions; ``trajectory`` holds ``(observation, slot, legal mask)`` per decision."""

    name = "drl-br-learner"

    def __init__(self, learner: "DQNBestResponse"):
        self.learner = learner
        self.trajectory: list = []

    def new_hand(self) -> None:
        self.trajectory = []

    def act(self, state) -> int:
        obs, slot, mask, action = self.learner.explore(state)
        self.trajectory.append((obs, slot, mask))
        return action


class DQNBestResponse(PokerAgent):
    """A DQN best responder to ``agent`` in ``game`` (see module docstring).

    ``train(steps)`` runs until ``steps`` learner decisions in total; the object is itself a poker
    agent (greedy ``act`` and deterministic ``hand_strategy`` over all hands) for evaluation.
    """

    name = "drl-br"

    def __init__(self, agent, game, config: DQNConfig = DQNConfig(), seed: int = 0, device: Optional[str] = None,
                 time_limit: float = DEFAULT_TIME_LIMIT, threads: Optional[int] = 1):
        torch = _torch()
        self.threads = threads
        self.view = poker_view(game)
        self.opponent = CheckedAgent(agent, self.view, time_limit)
        self.config = config
        self.seed = int(seed)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        try:
            kind = torch.device(self.device).type
        except (RuntimeError, ValueError, TypeError):
            raise GameError(f"device {self.device!r}: not a torch device (cpu, cuda, cuda:1, ...)") from None
        if kind == "cuda" and not torch.cuda.is_available():
            raise GameError(f"device {self.device!r}: CUDA is not available on this machine; use --device cpu")
        self.features = Features(self.view)
        self.actions = ActionSet(self.view, config.bets)
        torch.manual_seed(seed)
        self.online = build_qnet(self.features.size, self.actions.size, config.hidden, config.dueling).to(self.device)
        self.target = build_qnet(self.features.size, self.actions.size, config.hidden, config.dueling).to(self.device)
        self.target.load_state_dict(self.online.state_dict())
        self.optim = torch.optim.Adam(self.online.parameters(), lr=config.lr)
        self.replay = Replay(config.replay, self.features.size, self.actions.size)
        self.rng = np.random.default_rng(seed)
        self.steps = 0
        self.episodes = 0
        self.losses: List[float] = []
        self.returns: List[float] = []

    # ------------------------------------------------------------------ acting
    def q_values(self, obs: np.ndarray) -> np.ndarray:
        torch = _torch()
        with torch.no_grad():
            return self.online(torch.as_tensor(obs, device=self.device)).cpu().numpy()

    def _greedy_slot(self, q: np.ndarray, mask: np.ndarray) -> int:
        return int(np.argmax(np.where(mask, q, -np.inf)))

    def act(self, state) -> int:
        p = state.current_player()
        mask, acts = self.actions.legal(state)
        q = self.q_values(self.features.encode(state, p)[None])[0]
        return int(acts[self._greedy_slot(q, mask)])

    def hand_strategy(self, state) -> HandStrategy:
        """Greedy action for every hand the learner could hold (deterministic, exact support)."""
        p = state.current_player()
        mask, acts = self.actions.legal(state)
        live = ~self.view.blocked(self.view.public_cards(state))
        hands = np.flatnonzero(live)
        obs = np.stack([self.features.encode(state, p, int(h)) for h in hands])
        q = self.q_values(obs)
        slots = np.argmax(np.where(mask[None, :], q, -np.inf), axis=1)
        support = sorted({int(acts[s]) for s in slots})
        col = {a: k for k, a in enumerate(support)}
        probs = np.zeros((self.view.num_hands, len(support)))
        for h, s in zip(hands, slots):
            probs[h, col[int(acts[s])]] = 1.0
        return HandStrategy(np.array(support, dtype=np.int64), probs)

    # ------------------------------------------------------------------ training
    def explore(self, state) -> Tuple[np.ndarray, int, np.ndarray, int]:
        """The learner's training decision at ``state`` (its seat to act): epsilon-greedy over the legal slots;
        counts one step, and takes a learning step every ``train_every`` steps (once the replay holds
        ``learn_start`` transitions) and refreshes the target network every ``target_every`` steps.

        Returns ``(observation float32[features], slot, legal mask bool[slots], action id)``: the slot in
        :attr:`actions` (fold, call, then the bets) and the game's action id it maps to.
        """
        c = self.config
        p = state.current_player()
        mask, acts = self.actions.legal(state)
        obs = self.features.encode(state, p)
        if self.rng.random() < self._epsilon():
            slot = int(self.rng.choice(np.flatnonzero(mask)))
        else:
            slot = self._greedy_slot(self.q_values(obs[None])[0], mask)
        self.steps += 1
        if self.steps % c.train_every == 0 and self.replay.size >= c.learn_start:
            self._learn()
        if self.steps % c.target_every == 0:
            self.target.load_state_dict(self.online.state_dict())
        return obs, slot, mask, int(acts[slot])

    def _epsilon(self) -> float:
        c = self.config
        frac = min(1.0, self.steps / max(1, c.eps_steps))
        return c.eps_start + frac * (c.eps_end - c.eps_start)

    def _episode(self) -> None:
        """One hand against the agent, learner in seat ``episodes % 2``; stores n-step transitions."""
        view, c = self.view, self.config
        seat = self.episodes % 2
        cards = view.deal(self.seed + 1_000_003, self.episodes)
        explorer = _ExploringSeat(self)
        state = play_hand(view.game, [explorer, self.opponent] if seat == 0 else [self.opponent, explorer], cards)
        traj = explorer.trajectory
        reward = float(state.returns()[seat]) / view.big_blind
        self.returns.append(reward)
        # rewards only at the end: the n-step return of decision t is the final reward if the hand
        # ends within n decisions, else 0 with a bootstrap from decision t + n
        t_end = len(traj)
        for t, (obs, slot, _) in enumerate(traj):
            j = t + c.n_step
            if j >= t_end:
                self.replay.add(obs, slot, reward, np.zeros_like(obs), np.ones(self.actions.size, dtype=bool), 1.0)
            else:
                self.replay.add(obs, slot, 0.0, traj[j][0], traj[j][2], 0.0)
        self.episodes += 1

    def _learn(self) -> None:
        torch = _torch()
        c = self.config
        frac = min(1.0, self.steps / max(1, c.lr_decay_steps))
        for group in self.optim.param_groups:  # linear decay: noisy targets need small late steps
            group["lr"] = c.lr + frac * (c.lr_end - c.lr)
        obs, act, ret, nobs, nmask, done = self.replay.sample(self.rng, c.batch)
        dev = self.device
        obs, nobs = torch.as_tensor(obs, device=dev), torch.as_tensor(nobs, device=dev)
        act, ret = torch.as_tensor(act, device=dev), torch.as_tensor(ret, device=dev)
        nmask, done = torch.as_tensor(nmask, device=dev), torch.as_tensor(done, device=dev)
        q = self.online(obs).gather(1, act[:, None])[:, 0]
        with torch.no_grad():
            tq = self.target(nobs).masked_fill(~nmask, -1e9)
            if c.double:
                choice = self.online(nobs).masked_fill(~nmask, -1e9).argmax(dim=1, keepdim=True)
                nq = tq.gather(1, choice)[:, 0]
            else:
                nq = tq.max(dim=1).values
            target = ret + (1.0 - done) * nq
        loss = torch.nn.functional.smooth_l1_loss(q, target)
        self.optim.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.online.parameters(), c.grad_clip)
        self.optim.step()
        if self.steps % 100 == 0:
            self.losses.append(float(loss.item()))

    def train(self, steps: int, checkpoint: Optional[str] = None, checkpoint_every: int = 5000,
              progress: bool = False) -> "DQNBestResponse":
        """Train until ``steps`` learner decisions in total (resumes a ``checkpoint`` file if it exists)."""
        torch = _torch()
        previous_threads = torch.get_num_threads()
        if self.threads and self.device == "cpu":
            torch.set_num_threads(int(self.threads))  # small networks: more threads only contend (restored after)
        try:
            return self._train(steps, checkpoint, checkpoint_every, progress)
        finally:
            torch.set_num_threads(previous_threads)

    def _train(self, steps, checkpoint, checkpoint_every, progress) -> "DQNBestResponse":
        if checkpoint and os.path.exists(checkpoint) and self.steps == 0:
            self.load(checkpoint)
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=int(steps), initial=self.steps, desc=f"DRL-BR vs {self.opponent.name}", unit="step")
        last_saved = self.steps
        try:
            while self.steps < steps:
                before = self.steps
                self._episode()
                if bar is not None:
                    bar.update(self.steps - before)
                    if self.episodes % 200 == 0 and self.returns:
                        bar.set_postfix(reward=f"{np.mean(self.returns[-2000:]):+.3f}bb", eps=f"{self._epsilon():.2f}")
                if checkpoint and self.steps - last_saved >= checkpoint_every:
                    self.save(checkpoint)
                    last_saved = self.steps
        except KeyboardInterrupt:
            if checkpoint:
                self.save(checkpoint)
            raise
        finally:
            if bar is not None:
                bar.close()
        if checkpoint:
            self.save(checkpoint)
        return self

    # ------------------------------------------------------------------ checkpoints
    def _header(self) -> dict:
        return {"game": self.view.game.game_string(), "agent": self.opponent.name, "config": asdict(self.config),
                "seed": self.seed}

    def save(self, path: str) -> None:
        """Write a checkpoint atomically (``path`` is replaced only when the file is complete)."""
        torch = _torch()
        state = {"header": self._header(), "online": self.online.state_dict(), "target": self.target.state_dict(),
                 "optim": self.optim.state_dict(), "replay": self.replay.arrays(),
                 "replay_size": self.replay.size, "replay_pos": self.replay.pos, "steps": self.steps,
                 "episodes": self.episodes, "rng": self.rng.bit_generator.state, "losses": self.losses,
                 "returns": self.returns[-10000:], "torch_rng": torch.get_rng_state()}
        with atomic_path(path) as tmp:
            torch.save(state, tmp)

    def load(self, path: str) -> None:
        torch = _torch()
        try:
            state = torch.load(path, map_location=self.device, weights_only=False)
        except Exception as exc:
            raise GameError(f"cannot read DRL-BR checkpoint {path}: {exc}") from None
        header = state.get("header", {})
        mine = self._header()
        mine["config"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in mine["config"].items()}
        theirs = dict(header)
        theirs["config"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in header.get("config", {}).items()}
        if theirs != mine:
            diff = [k for k in mine if mine[k] != theirs.get(k)]
            raise GameError(f"checkpoint {path} was made for other settings ({', '.join(diff)} differ)")
        self.online.load_state_dict(state["online"])
        self.target.load_state_dict(state["target"])
        self.optim.load_state_dict(state["optim"])
        for k, v in state["replay"].items():
            getattr(self.replay, k)[...] = v
        self.replay.size, self.replay.pos = state["replay_size"], state["replay_pos"]
        self.steps, self.episodes = state["steps"], state["episodes"]
        self.rng.bit_generator.state = state["rng"]
        self.losses, self.returns = list(state["losses"]), list(state["returns"])
        torch.set_rng_state(state["torch_rng"])


@dataclass
class DRLBRResult:
    """DRL-BR's estimate: the learner's winnings against the agent in mbb/hand with a 95% interval."""

    game: str
    agent: str
    steps: int
    mbb_per_hand: float
    ci95: float
    estimator: str
    hands: int
    exact_mbb: Optional[float] = None  # exact value of the greedy learner (small games only)

    def __str__(self) -> str:
        extra = f"; exact {self.exact_mbb:+.1f}" if self.exact_mbb is not None else ""
        return (f"DRL-BR vs {self.agent} in {self.game} after {self.steps} steps: {self.mbb_per_hand:+.1f} +- "
                f"{self.ci95:.1f} mbb/h ({self.estimator}, {self.hands} hands{extra})")


def drl_br(agent, game, steps: int, eval_hands: int = 2000, config: DQNConfig = DQNConfig(), seed: int = 0,
           checkpoint: Optional[str] = None, device: Optional[str] = None, exact: bool = False,
           progress: bool = False) -> Tuple[DQNBestResponse, DRLBRResult]:
    """Train a DQN best response to ``agent`` for ``steps`` decisions, then evaluate it head to head
    (duplicate, AIVAT when the agent has ``hand_strategy``; match seed ``seed + 1``).  ``exact``: also
    the exact value of the greedy learner (Leduc family)."""
    learner = DQNBestResponse(agent, game, config, seed=seed, device=device)
    learner.train(steps, checkpoint=checkpoint, progress=progress)
    has_strategy = True
    try:
        state = learner.view.game.new_initial_state()
        cards = learner.view.deal(0, 0)
        k = 0
        while state.is_chance_node():
            state.apply_action(cards[k])
            k += 1
        CheckedAgent(agent, learner.view).hand_strategy(state)
    except Exception:
        has_strategy = False
    res = head_to_head(learner.view.game, [learner, agent], eval_hands, seed=seed + 1, duplicate=True,
                       aivat=has_strategy, progress=progress)
    est = res.estimate
    exact_mbb = None
    if exact:
        exact_mbb = exact_match_value([learner, agent], learner.view.game) * 1000.0 / learner.view.big_blind
    return learner, DRLBRResult(learner.view.game.game_string(), agent_name(agent), learner.steps, est.mean, est.ci95,
                                "aivat" if has_strategy else "duplicate", res.hands_played, exact_mbb)
