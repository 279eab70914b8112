"""MADDPG-EstimatedEncounter (MADDPG-EE; Sclar et al. Sec. 6.1 and Algorithm 1, App. A.4).

EE's knowledge matrix K (c x n per agent, "the agent believes j knows piece i") is probabilistic,
``K_ij in [0, 1]``, and is computed *inside the actor*, so that the MLP ``f_1`` estimating the
speech the agent did not witness is trained by the actor's gradient:

* ``S[0]`` (what I said reached my listeners) and ``S[1]`` (what I heard from l reached me, l and
  everyone in l's range) are exact, as in CE/GE (:mod:`.knowledge`).
* ``S[2]``: for every speaker l out of my hearing range (l != me),
  ``U_l = softmax(f_1(K[:, l], {K[:, m], for m in l's range}))`` estimates the piece l uttered, and an
  agent j != me in range of such speakers learned piece i with probability
  ``S2_ij = 1 - prod_l (1 - U_l[i])`` (the paper's formula).  ``f_1`` is a two-layer ReLU MLP of 64
  units; its input is ``K[:, l]`` followed, for each other agent m in index order, by
  ``H_lm K[:, m]`` and the bit ``H_lm`` (a fixed-size encoding of "all agents in l's range").
* Update (Eq. 2 made differentiable): ``K = F + (1 - F) (1 - B_j E_j) (1 - (1 - K') (1 - S0 v S1) (1 - S2))``
  with K' the previous K, F the public first-hand pieces, B_j "j is on its base" and
  ``E_j = prod_i K'_ij`` (the probability that j knew everything).  On binary inputs with S2 = 0 this
  is exactly Eq. 2 (CE's K); Algorithm 1 writes a step function, which has no gradient, so the
  noisy-or above keeps K in [0, 1] and differentiable -- our reading of "a differential approximation
  of Eq. 2".

The policy ``f_2`` is MADDPG's actor on ``[observation, K]``.  Training is MADDPG's
(:class:`~.maddpg.MADDPGTrainer`): the previous K is stored with every transition and K is
recomputed from it in the update (truncated back-propagation of one step, as RMADDPG's hidden
state); the centralised critic sees every agent's ``[observation, K]`` as acted.

The actor's per-step input besides the observation is an *event vector* of what agent k perceived
in the step just played (:func:`events_batched` for the batched environment, :func:`events_from_view`
for one episode; they agree exactly): ``X`` (c n, piece-major: S0 v S1), ``W`` (n n: ``W[j, l]`` = j is
in range of l, l is out of k's range, j != k, l != k -- the unwitnessed encounters), ``H`` (n n,
in-range matrix without the diagonal), ``B`` (n, on own base) and ``F`` (c n, piece-major).  At reset
nobody has spoken: X = W = B = 0.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import numpy as np
import torch
from torch import nn

from cfrkit.agents.rl import LearnerError
from cfrkit.agents.symmtom.base import SymmToMAgent
from cfrkit.agents.symmtom.learning.maddpg import MADDPGTrainer, action_generator, pick_actions
from cfrkit.agents.symmtom.learning.networks import Actor, ActorPass, Critic, softmax
from cfrkit.agents.symmtom.learning.settings import MADDPGSettings, check_setting
from cfrkit.games.symmtom.batched import BatchedSymmToM
from cfrkit.games.symmtom.core import SymmToMConfig, hears


def event_size(n: int, c: int) -> int:
    """Length of the event vector: X (c n) + W (n n) + H (n n) + B (n) + F (c n)."""
    return 2 * c * n + 2 * n * n + n


def _events(in_range: np.ndarray, spoken: np.ndarray, on_base: np.ndarray, first: np.ndarray,
            c: int, reset: bool) -> np.ndarray:
    """Event vectors of every observer.  in_range (B, n, n) bool (no diagonal), spoken (B, n) effective
    speech or -1, on_base (B, n) bool, first (B, n, c) bool -> (B, n_observers, E) float32.

    All observers k and speakers l at once (bool arrays up to (B, k, l, c, j)); no Python loop."""
    B, n = spoken.shape
    cn, nn = c * n, n * n
    out = np.zeros((B, n, event_size(n, c)), dtype=np.float32)
    if not reset:
        eye = np.eye(n, dtype=bool)
        onehot = (spoken[:, :, None] == np.arange(c)[None, None, :]) & (spoken >= 0)[:, :, None]   # (B, l, c)
        # S[0]: my effective speech reached everyone in my range -> (B, k, piece, j)
        X = onehot[:, :, :, None] & in_range[:, :, None, :]
        # S[1]: speech of l heard by me reached me, l and everyone in l's range: X[k, p, j] |= any over l of
        # (k hears l) & (l said p) & (j hears l or j is l, or j is k); the "any" as a count product of 0/1
        # float32 matrices (counts <= n, exact) instead of a (B, k, l, piece, j) boolean array
        reach = in_range | eye[None]                                       # (B, l, j): j hears l, or j is l
        hears_l = in_range.astype(np.float32)                              # (B, k, l)
        said_reach = (onehot[:, :, :, None] & reach[:, :, None, :]).astype(np.float32).reshape(B, n, cn)
        X |= (np.matmul(hears_l, said_reach) > 0).reshape(B, n, c, n)
        heard = np.matmul(hears_l, onehot.astype(np.float32)) > 0          # (B, k, piece): k heard piece
        X |= heard[:, :, :, None] & eye[None, :, None, :]
        # W[k, j, l]: j hears l and I (k) do not; j != k, l != k
        W = in_range[:, None, :, :] & ~in_range[:, :, None, :]
        W &= ~eye[None, :, :, None] & ~eye[None, :, None, :]
        out[:, :, :cn] = X.reshape(B, n, cn)
        out[:, :, cn:cn + nn] = W.reshape(B, n, nn)
        out[:, :, cn + 2 * nn:cn + 2 * nn + n] = on_base[:, None, :]
    out[:, :, cn + nn:cn + 2 * nn] = in_range.reshape(B, 1, nn)
    out[:, :, cn + 2 * nn + n:] = np.transpose(first, (0, 2, 1)).reshape(B, 1, cn)       # piece-major
    return out


def events_batched(env: BatchedSymmToM, reset: bool = False) -> np.ndarray:
    """(B, n, E) event vectors of every agent after ``env.reset()`` (``reset=True``) or ``env.step``."""
    cfg = env.config
    n, h = cfg.agents, cfg.hearing
    rows, cols = env.rows, env.cols
    in_range = ((np.abs(rows[:, :, None] - rows[:, None, :]) <= h)
                & (np.abs(cols[:, :, None] - cols[:, None, :]) <= h) & ~np.eye(n, dtype=bool)[None])
    on_base = (rows == env.base_rows) & (cols == env.base_cols)
    return _events(in_range, env.spoken, on_base, env.first_hand, cfg.pieces, reset)


def events_from_view(view) -> np.ndarray:
    """(E,) event vector of ``view.agent`` from a single-episode :class:`AgentView` (t = 0: reset).

    Needs public first-hand pieces (the paper's setting); uses only what the agent perceives:
    positions, bases, first-hand pieces, the speech it heard and its own realized speech.
    """
    cfg = view.config
    n, c, h, k = cfg.agents, cfg.pieces, cfg.hearing, view.agent
    if any(m is None for m in view.first_hand):
        raise LearnerError("MADDPG-EE needs public first-hand pieces (hide_first_hand=False)")
    pos = view.positions
    in_range = np.array([[j != l and hears(pos[j], pos[l], h) for l in range(n)] for j in range(n)])[None]
    # only k's row of "spoken" is used where k cannot hear: fill heard speakers, own speech, rest -1
    spoken = np.full((1, n), -1, dtype=np.int64)
    for l, p in view.heard:
        spoken[0, l] = p
    spoken[0, k] = view.own_spoken
    on_base = np.array([[tuple(pos[j]) == tuple(view.bases[j]) for j in range(n)]])
    first = np.array([[[(view.first_hand[j] >> p) & 1 for p in range(c)] for j in range(n)]], dtype=bool)
    return _events(in_range, spoken, on_base, first, c, reset=view.t == 0)[0, k]


class EstimatedKnowledge(nn.Module):
    """The K update of MADDPG-EE with its speech estimator ``f_1``.

    ``forward(k_prev (M, c n), events (M, E)) -> K (M, c n)``, piece-major, values in [0, 1].
    """

    def __init__(self, agents: int, pieces: int, hidden: int = 64):
        super().__init__()
        n, c = agents, pieces
        self.n, self.c = n, c
        self.f1 = nn.Sequential(nn.Linear(c + (n - 1) * (c + 1), hidden), nn.ReLU(),
                                nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, c))
        self.register_buffer("others", torch.tensor([[m for m in range(n) if m != l] for l in range(n)]),
                             persistent=False)

    def split(self, ev: torch.Tensor):
        n, c, M = self.n, self.c, ev.shape[0]
        X, ev = ev[:, :c * n].reshape(M, c, n), ev[:, c * n:]
        W, ev = ev[:, :n * n].reshape(M, n, n), ev[:, n * n:]
        H, ev = ev[:, :n * n].reshape(M, n, n), ev[:, n * n:]
        Bf, Fm = ev[:, :n], ev[:, n:].reshape(M, c, n)
        return X, W, H, Bf, Fm

    def speech(self, kp: torch.Tensor, H: torch.Tensor) -> torch.Tensor:
        """U (M, n, c): the estimated distribution of the piece each agent l uttered (every row and speaker;
        :meth:`forward` evaluates only the speakers it needs, :meth:`speech_at`)."""
        M, c, n = kp.shape
        r = torch.arange(M, device=kp.device).repeat_interleave(n)
        l = torch.arange(n, device=kp.device).repeat(M)
        return self.speech_at(kp, H, r, l).reshape(M, n, c)

    def speech_at(self, kp: torch.Tensor, H: torch.Tensor, r: torch.Tensor, l: torch.Tensor) -> torch.Tensor:
        """U (P, c) for the P (row ``r``, speaker ``l``) pairs: ``softmax(f_1(K[:, l], H_lm K[:, m], H_lm))``,
        kp (M, c, n) the previous K, H (M, n, n) the in-range matrix."""
        cols = kp.transpose(1, 2)                                       # (M, l, c)
        others = self.others.index_select(0, l)                         # (P, n-1)
        own = cols[r, l]                                                # (P, c)
        other = cols[r[:, None], others]                                # (P, n-1, c)
        mask = H[r[:, None], l[:, None], others][..., None]             # (P, n-1, 1): H[l, m]
        inp = torch.cat([own, torch.cat([other * mask, mask], -1).reshape(own.shape[0], -1)], -1)
        return softmax(self.f1(inp))

    def forward(self, k_prev: torch.Tensor, ev: torch.Tensor) -> torch.Tensor:
        n, c, M = self.n, self.c, ev.shape[0]
        X, W, H, Bf, Fm = self.split(ev)
        kp = k_prev.reshape(M, c, n)
        E = torch.prod(kp, dim=1)                                       # (M, j)
        keep = (1 - Bf * E)[:, None, :]
        rest = (1 - kp) * (1 - X)                                       # (M, c, j): 1 - (K' v S0 v S1)
        # S[2] only where it can be non-zero: speakers l that someone heard out of my range
        # (W[:, l] != 0).  Elsewhere 1 - W U = 1 exactly, so this equals the product over every row
        # and speaker; f_1 runs on those pairs only (typically 3-20% of them), in training and acting.
        live = W.amax(1) > 0                                            # (M, l)
        rows = live.any(1).nonzero().squeeze(1)                         # (R,)
        if rows.numel():
            ri, l = live.index_select(0, rows).nonzero(as_tuple=True)   # pairs, ri indexes rows
            U = self.speech_at(kp, H, rows.index_select(0, ri), l)      # (P, c)
            Ur = U.new_zeros(rows.numel(), n, c).index_put((ri, l), U)  # (R, l, c); 0 where not live
            Wr = W.index_select(0, rows)                                # (R, j, l)
            # 1 - S2[i, j] = prod_l (1 - W[j, l] U[l, i])
            no_s2 = torch.prod(1 - Wr[:, None, :, :] * Ur.transpose(1, 2)[:, :, None, :], dim=-1)   # (R, c, j)
            rest = rest.index_put((rows,), rest.index_select(0, rows) * no_s2)
        k = Fm + (1 - Fm) * keep * (1 - rest)
        return k.clamp(0.0, 1.0).reshape(M, c * n)


class EEActor(nn.Module):
    """``forward([observation, events] (M, O + E), k_prev (M, c n) or None) -> (move logits, piece logits, K)``."""

    def __init__(self, observation_size: int, agents: int, pieces: int, hidden: int = 64):
        super().__init__()
        self.observation_size = observation_size
        self.ksize = agents * pieces
        self.knowledge = EstimatedKnowledge(agents, pieces, hidden)
        self.policy = Actor(observation_size + self.ksize, pieces, hidden, recurrent=False)

    def forward(self, x: torch.Tensor, h: Optional[torch.Tensor] = None
                ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        obs, ev = x[:, :self.observation_size], x[:, self.observation_size:]
        if h is None:
            h = torch.zeros(x.shape[0], self.ksize, dtype=x.dtype, device=x.device)
        k = self.knowledge(h, ev)
        lm, lp, _ = self.policy(torch.cat([obs, k], -1))
        return lm, lp, k


class EETrainer(MADDPGTrainer):
    """MADDPG-EE on :class:`BatchedSymmToM` (shared actor and critic, as :class:`MADDPGTrainer`).

    Replay fields: ``x`` / ``x2`` critic features ``[observation, K]`` at t and t+1, ``h`` / ``h2``
    the K the actor received (K_{t-1}) and produced (K_t), ``e`` / ``e2`` the event vectors.
    """

    def __init__(self, config: SymmToMConfig, settings: MADDPGSettings = MADDPGSettings(variant="ee"),
                 device: Optional[str] = None):
        if settings.variant != "ee":
            raise LearnerError(f"EETrainer trains variant 'ee', got {settings.variant!r}")
        super().__init__(config, settings, device)

    def _build_networks(self) -> None:
        n, c, s = self.config.agents, self.config.pieces, self.settings
        self.obs_size = self.config.observation_size
        self.ksize = n * c
        self.ev_size = event_size(n, c)
        self.features = self.obs_size + self.ksize          # what the critic sees per agent
        self.recurrent = True                                # the actor carries K from step to step
        self.hsize = self.ksize
        self.actor = EEActor(self.obs_size, n, c, s.hidden).to(self.device)
        self.critic = Critic(n, self.features, self.action_size, s.hidden).to(self.device)
        self._finish_networks()

    def _replay_fields(self) -> Dict[str, Tuple[tuple, torch.dtype]]:
        n, f32 = self.config.agents, torch.float32
        fields = super()._replay_fields()
        fields.update(e=((n, self.ev_size), f32), e2=((n, self.ev_size), f32))
        return fields

    def _knowledge(self, k_prev: np.ndarray, ev: np.ndarray) -> np.ndarray:
        B, n = ev.shape[:2]
        with torch.no_grad():
            k = self.actor.knowledge(torch.as_tensor(k_prev, device=self.device).reshape(B * n, -1),
                                     torch.as_tensor(ev, device=self.device).reshape(B * n, -1))
        return k.cpu().numpy().reshape(B, n, -1)

    def play(self, num_envs: int, seed: int, greedy: bool, store: bool = False) -> np.ndarray:
        """Play ``num_envs`` episodes together; returns per-agent returns (B, n); ``store`` adds them to the replay.

        ``KIN[t]`` is the K the actor receives at step t (K_{t-1}; zero at t = 0), so K_t = KIN[t + 1];
        the K after the last step (the critic's x2 there) is one more no-grad pass of the K update."""
        cfg, n, B, L, dev = self.config, self.config.agents, num_envs, self.config.episode_length, self.device
        env = BatchedSymmToM(cfg, B, seed=seed)
        env.reset()
        obs = torch.from_numpy(env.observations()).to(dev)
        ev = torch.from_numpy(events_batched(env, reset=True)).to(dev)
        h = torch.zeros(B * n, self.ksize, device=dev)
        if store:
            OBS = torch.empty((L + 1, B, n, self.obs_size), device=dev)
            EV = torch.empty((L + 1, B, n, self.ev_size), device=dev)
            KIN = torch.zeros((L + 2, B, n, self.ksize), device=dev)
            Mv = torch.empty((L, B, n), dtype=torch.int64, device=dev)
            Pc = torch.empty((L, B, n), dtype=torch.int64, device=dev)
            R = torch.empty((L, B, n), device=dev)
            OBS[0], EV[0] = obs, ev
        with torch.no_grad():
            for t in range(L):
                moves, pieces, k = self._policy(torch.cat([obs, ev], -1).reshape(B * n, -1), h, greedy)
                moves, pieces = moves.reshape(B, n), pieces.reshape(B, n)
                rewards = env.step(moves.cpu().numpy(), pieces.cpu().numpy())
                obs = torch.from_numpy(env.observations()).to(dev)
                ev = torch.from_numpy(events_batched(env)).to(dev)
                if store:
                    OBS[t + 1], EV[t + 1], KIN[t + 1] = obs, ev, k.reshape(B, n, -1)
                    Mv[t], Pc[t], R[t] = moves, pieces, torch.from_numpy(rewards)
                h = k
            if store:
                KIN[L + 1] = self.actor.knowledge(h, ev.reshape(B * n, -1)).reshape(B, n, -1)
        if store:
            self._store({"x": torch.cat([OBS[:-1], KIN[1:-1]], -1), "x2": torch.cat([OBS[1:], KIN[2:]], -1),
                         "h": KIN[:-2], "h2": KIN[1:-1], "e": EV[:-1], "e2": EV[1:], "m": Mv, "p": Pc, "r": R}, B)
        return env.returns.astype(np.float64)

    def actor_inputs(self, b: Dict[str, torch.Tensor], nxt: bool):
        """:meth:`MADDPGTrainer.actor_inputs` for EE: input ``[observation, events]`` and hidden state the
        previous knowledge estimate K (M n, n c)."""
        M, n = b["x"].shape[:2]
        x, e, h = (b["x2"], b["e2"], b["h2"]) if nxt else (b["x"], b["e"], b["h"])
        return torch.cat([x[..., :self.obs_size], e], -1).reshape(M * n, -1), h.reshape(M * n, -1)

    def actor_step(self, b: Dict[str, torch.Tensor]):
        """EE's actor step: K (with f_1) by autograd, the policy on ``[observation, K]`` by hand
        (:class:`~.networks.ActorPass`), whose input gradient at K is back-propagated into f_1."""
        s = self.settings
        x, h = self.actor_inputs(b, False)
        obs, ev = x[:, :self.obs_size], x[:, self.obs_size:]
        k = self.actor.knowledge(h, ev)
        xin = torch.cat([obs, k.detach()], -1)
        ap = ActorPass(self.actor.policy, xin, self._gumbel_pair(x.shape[0]), self.eye_moves, self.eye_pieces)
        f1 = list(self.actor.knowledge.parameters())
        n_f1 = sum(p.numel() for p in f1)

        def apply(d_new_a: torch.Tensor) -> torch.Tensor:
            g = torch.empty_like(self.actor_opt.flat)      # EEActor's order: knowledge (f_1), then policy
            with torch.no_grad():
                _, dx = ap.parameter_grad(d_new_a, s.logit_reg, g[n_f1:], input_grad=True)
            if k.requires_grad:
                gk = torch.autograd.grad(k, f1, grad_outputs=dx[:, self.obs_size:], allow_unused=True,
                                         materialize_grads=True)
            else:       # no live (row, speaker) pair in the batch: f_1 took no part, zero gradient
                gk = [torch.zeros_like(p) for p in f1]
            with torch.no_grad():
                g[:n_f1] = torch.cat([t.reshape(-1) for t in gk])
                self.actor_opt.step_grad(g)
                return ap.regulariser(s.logit_reg)
        return ap.new_a, apply

    def make_agent(self, sample: bool = False, seed: Optional[int] = None) -> "EEAgent":
        """A single-episode MADDPG-EE agent for :func:`play_episode` and the theory-of-mind tests: greedy, or
        sampling its actions (``sample``, a generator seeded ``seed``)."""
        return EEAgent(self.actor, self.config, self.device, sample, seed)


class EEAgent(SymmToMAgent):
    """The trained MADDPG-EE actor as a :class:`SymmToMAgent`: carries its own K between steps."""

    needs_observation = True
    name = "maddpg-ee"

    def __init__(self, actor: EEActor, config: SymmToMConfig, device: str = "cpu", sample: bool = False,
                 seed: Optional[int] = None):
        self.actor, self.config, self.device = actor, config, device
        self.generator = action_generator(sample, seed)
        self.k = None

    def reset(self, view) -> None:
        cfg = view.config
        check_setting(self.config, cfg)
        if cfg.oracle:
            raise LearnerError("MADDPG-EE plays the paper's observation (an environment with oracle=False)")
        self.k = None

    def knowledge(self) -> Optional[np.ndarray]:
        """The current K as a (c, n) float array (None before the first action)."""
        return None if self.k is None else self.k[0].cpu().numpy().reshape(self.config.pieces, self.config.agents)

    def act(self, view) -> Tuple[int, int]:
        x = np.concatenate([view.observation, events_from_view(view)]).astype(np.float32)
        with torch.no_grad():
            lm, lp, self.k = self.actor(torch.as_tensor(x, device=self.device)[None], self.k)
        return pick_actions(lm, lp, self.generator)
