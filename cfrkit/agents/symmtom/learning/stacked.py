"""Several seeds of one SymmToM run trained together: one gradient step for all of them.

A gradient step of the MADDPG family is a few hundred small torch operations, whose fixed cost per
call is about a quarter of a step at the paper's batch of 1,024 rows.  The seeds
of a Table 1 cell are independent runs of the same shapes, so :class:`StackedSeeds` runs their steps
as one: every seed's parameters become one row of an (S, P) stack for the step, the matrix products
are batched over seeds (``torch.bmm``), and the per-operation cost is paid once for S seeds.

Each seed stays its own run: its own :class:`~.maddpg.MADDPGTrainer` (networks, optimisers, replay,
numpy generator) and its own torch random stream -- the group swaps each seed's torch generator
state in before anything of that seed draws (its episodes, its Gumbel noise), so a seed draws exactly
the numbers it draws when trained alone.  A stacked step is therefore each seed's own
:meth:`MADDPGTrainer.update` on the same replay sample and noise, computed with batched instead of
per-seed products (equal to 1e-5; tests/test_learners_symmtom_stacked.py).  Checkpoints stay one per
seed, in the single trainer's format (:meth:`StackedSeeds.seed_state_dict`).

RMADDPG and EE (autograd actors): the critic's passes are stacked, and each seed's actor steps
with its own code (``actor_step``), fed with the stacked critic's action gradient.
"""
from __future__ import annotations

import math
import time
from typing import Dict, List, Sequence, Tuple

import torch

from cfrkit.agents.rl import LearnerError
from cfrkit.agents.symmtom.learning.flat import step_grads
from cfrkit.agents.symmtom.learning.maddpg import MADDPGTrainer, gumbel_noise_into
from cfrkit.agents.symmtom.learning.networks import Actor, relu_backward, softmax
from cfrkit.agents.symmtom.learning.settings import episode_seed
from cfrkit.games.symmtom.core import NUM_MOVES

__all__ = ["ActorStack", "CriticStack", "StackedSeeds", "batched_linear", "flat_grads", "parameter_shapes", "stackable",
           "stacked_views"]


def stackable(trainer: MADDPGTrainer) -> bool:
    """Whether ``trainer``'s actor step can be stacked too (the feed-forward actor's hand-written step)."""
    return type(trainer) is MADDPGTrainer and type(trainer.actor) is Actor and not trainer.recurrent


def parameter_shapes(module: torch.nn.Module) -> List[Tuple[int, ...]]:
    """The shapes of ``module``'s parameters, in its order (what :func:`stacked_views` cuts a stack into)."""
    return [tuple(p.shape) for p in module.parameters()]


def stacked_views(stack: torch.Tensor, shapes) -> List[torch.Tensor]:
    """(S, P) stacked flat parameters (S seeds, or agents) -> one (S, *shape) view per parameter; ``shapes``: a module (its
    parameters' shapes, in its order) or a list of :func:`parameter_shapes`."""
    if isinstance(shapes, torch.nn.Module):
        shapes = parameter_shapes(shapes)
    out, offset = [], 0
    S = stack.shape[0]
    for shape in shapes:
        k = math.prod(shape)
        out.append(stack[:, offset:offset + k].view((S,) + shape))
        offset += k
    return out


def batched_linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per-seed (or per-agent: any leading index) ``x @ w.T + b``: x (S, B, D), w (S, H, D), b (S, H) -> (S, B, H)."""
    return torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))


def flat_grads(pieces: Sequence[torch.Tensor]) -> torch.Tensor:
    """Per-seed gradients (S, *shape_i) in parameter order -> (S, P)."""
    S = pieces[0].shape[0]
    return torch.cat([g.reshape(S, -1) for g in pieces], 1)


class CriticStack:
    """:class:`~.networks.CriticPass` for S seeds at once: x (S, B, n F), a (S, B, n A); q (S, B).
    ``critic``: the module or its :func:`parameter_shapes`."""

    def __init__(self, critic, stack: torch.Tensor, x: torch.Tensor, a: torch.Tensor):
        self.w1, self.b1, self.w2, self.b2, self.w3, self.b3 = stacked_views(stack, critic)
        self.x, self.a, self.nx = x, a, x.shape[-1]
        w1 = self.w1
        z1 = torch.baddbmm(batched_linear(a, w1[:, :, self.nx:], self.b1), x, w1[:, :, :self.nx].transpose(1, 2))
        self.h1 = z1.relu_()                      # in place: the same values, one (S, B, H) buffer less
        self.h2 = batched_linear(self.h1, self.w2, self.b2).relu_()
        self.q = torch.baddbmm(self.b3.unsqueeze(1), self.h2, self.w3.transpose(1, 2)).squeeze(-1)

    def _hidden_grads(self, dq: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        dz2 = relu_backward(dq.unsqueeze(-1) * self.w3, self.h2)              # w3 (S, 1, H)
        dz1 = relu_backward(torch.bmm(dz2, self.w2), self.h1)
        return dz1, dz2

    def parameter_grad(self, dq: torch.Tensor) -> torch.Tensor:
        """Gradient of ``sum(dq * q)`` per seed, (S, P) in ``critic.parameters()`` order."""
        dz1, dz2 = self._hidden_grads(dq)
        d1t = dz1.transpose(1, 2)
        gw1 = torch.cat([torch.bmm(d1t, self.x), torch.bmm(d1t, self.a)], 2)
        gw2 = torch.bmm(dz2.transpose(1, 2), self.h1)
        gw3 = torch.bmm(dq.unsqueeze(1), self.h2)
        return flat_grads([gw1, dz1.sum(1), gw2, dz2.sum(1), gw3, dq.sum(1, keepdim=True)])

    def action_grad(self, dq: torch.Tensor, columns: slice) -> torch.Tensor:
        """Gradient of ``sum(dq * q)`` with respect to ``a[..., columns]`` (S, B, k)."""
        dz1, _ = self._hidden_grads(dq)
        return torch.bmm(dz1, self.w1[:, :, self.nx:][:, :, columns])


class ActorStack:
    """:class:`~.networks.ActorPass` for S seeds at once: x (S, B, F) (any strides), noise ((S, B, 5),
    (S, B, c)); ``actor``: the module or its :func:`parameter_shapes`."""

    def __init__(self, actor, stack: torch.Tensor, x: torch.Tensor,
                 noise: Tuple[torch.Tensor, torch.Tensor], eye_m: torch.Tensor, eye_p: torch.Tensor):
        self.w = stacked_views(stack, actor)
        w1, b1, wc, bc, wm, bm, wp, bp = self.w
        self.x = x
        self.h1 = batched_linear(x, w1, b1).relu_()
        self.h2 = batched_linear(self.h1, wc, bc).relu_()
        self.lm, self.lp = batched_linear(self.h2, wm, bm), batched_linear(self.h2, wp, bp)
        self.soft_m = softmax(self.lm + noise[0])
        self.soft_p = softmax(self.lp + noise[1])
        hm = eye_m[self.soft_m.argmax(-1)]
        hp = eye_p[self.soft_p.argmax(-1)]
        self.new_a = torch.cat([hm - self.soft_m + self.soft_m, hp - self.soft_p + self.soft_p], -1)

    def regulariser(self, logit_reg: float) -> torch.Tensor:
        """Per seed (S,)."""
        return logit_reg * (self.lm.pow(2).mean((1, 2)) + self.lp.pow(2).mean((1, 2)))

    def parameter_grad(self, d_a: torch.Tensor, logit_reg: float) -> torch.Tensor:
        """(S, P) gradient for the critic's ``d_a`` (S, B, 5 + c) plus the regulariser."""
        w1, _, wc, _, wm, _, wp, _ = self.w
        k = self.lm.shape[-1]
        dm, dp = d_a[..., :k], d_a[..., k:]
        per_m, per_p = self.lm[0].numel(), self.lp[0].numel()
        dlm = self.soft_m * (dm - (dm * self.soft_m).sum(-1, keepdim=True)) + (2 * logit_reg / per_m) * self.lm
        dlp = self.soft_p * (dp - (dp * self.soft_p).sum(-1, keepdim=True)) + (2 * logit_reg / per_p) * self.lp
        gwm = torch.bmm(dlm.transpose(1, 2), self.h2)
        gwp = torch.bmm(dlp.transpose(1, 2), self.h2)
        dz2 = relu_backward(torch.baddbmm(torch.bmm(dlm, wm), dlp, wp), self.h2)
        gwc = torch.bmm(dz2.transpose(1, 2), self.h1)
        dz1 = relu_backward(torch.bmm(dz2, wc), self.h1)
        gw1 = torch.bmm(dz1.transpose(1, 2), self.x)
        return flat_grads([gw1, dz1.sum(1), gwc, dz2.sum(1), gwm, dlm.sum(1), gwp, dlp.sum(1)])


class StackedSeeds:
    """S trainers of one (setting, variant), different seeds, iterated in lockstep.

    ``trainers``: freshly built (or freshly loaded, see :meth:`load_seed_state`) trainers with equal
    configuration and settings except the seed, at the same iteration.  Each keeps its own torch
    random stream (the global generator's state is swapped per seed), so seed s gives what it gives
    alone.  ``iterate()`` returns one stats dict per seed; ``cpu_seconds`` of the shared gradient
    steps is split evenly among the seeds, acting is charged to its own seed.
    """

    def __init__(self, trainers: Sequence[MADDPGTrainer], rng_states: Sequence[torch.Tensor]):
        self.trainers = list(trainers)
        if not self.trainers or len(rng_states) != len(self.trainers):
            raise LearnerError("StackedSeeds needs at least one trainer and one torch generator state per trainer")
        t0 = self.trainers[0]
        if getattr(t0.settings, "per_agent", False):
            raise LearnerError("StackedSeeds: per-agent networks (per_agent=True) are already batched over agents; "
                               "train their seeds one at a time")
        for t in self.trainers[1:]:
            if (type(t) is not type(t0) or t.config != t0.config
                    or {**vars(t.settings), "seed": 0} != {**vars(t0.settings), "seed": 0}):
                raise LearnerError("StackedSeeds: every trainer needs the same variant, setting and settings "
                                   "(only the seed may differ)")
        self.stacked = len(self.trainers) > 1
        self.feed_forward = stackable(t0)      # the actor's step stacked too (else per seed, autograd)
        self.rng = list(rng_states)
        self._shapes = None      # (actor, critic) parameter shapes, for the stacked views

    @classmethod
    def create(cls, make, settings: Sequence) -> "StackedSeeds":
        """Build one trainer per element of ``settings`` with ``make(settings)`` (e.g.
        ``lambda s: make_trainer(config, s, "cpu")``), recording each one's torch stream right after
        its construction (``MADDPGTrainer.__init__`` seeds the global generator with its seed)."""
        saved = torch.get_rng_state()
        trainers, states = [], []
        for st in settings:
            trainers.append(make(st))
            states.append(torch.get_rng_state())
        torch.set_rng_state(saved)
        return cls(trainers, states)

    def _check_lockstep(self) -> None:
        its = [t.iteration for t in self.trainers]
        if len(set(its)) != 1:
            raise LearnerError(f"StackedSeeds: seeds at iterations {its}; bring them to the same iteration first")

    # ------------------------------------------------------------------ per-seed random streams
    def _enter(self, s: int) -> None:
        torch.set_rng_state(self.rng[s])

    def _leave(self, s: int) -> None:
        self.rng[s] = torch.get_rng_state()

    def seed_state_dict(self, s: int) -> Dict:
        """Seed ``s``'s checkpoint, the single trainer's :meth:`~MADDPGTrainer.state_dict` (its torch stream)."""
        self._enter(s)
        return self.trainers[s].state_dict()

    def load_seed_state(self, s: int, state: Dict) -> None:
        """Resume seed ``s`` from a single trainer's checkpoint (its torch stream included)."""
        self.trainers[s].load_state_dict(state)
        self._leave(s)

    def run_for_seed(self, s: int, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` with seed ``s``'s torch stream in place (e.g. its greedy evaluation)."""
        self._enter(s)
        try:
            return fn(*args, **kwargs)
        finally:
            self._leave(s)

    # ------------------------------------------------------------------ training
    def fill_warmup(self, seed_base: int = 1000) -> None:
        """Play exploring episodes (stored, no gradient steps) into every seed's replay until it holds the
        warm-up (``min(warmup, buffer)`` joint steps): batch ``i`` of a seed is seeded ``seed_base + i``, each
        seed on its own torch stream.  The benchmarks' set-up before timing gradient steps alone."""
        for s, t in enumerate(self.trainers):
            while len(t.replay) < min(t.settings.warmup, t.settings.buffer):
                self.run_for_seed(s, t.play, t.settings.num_envs, seed_base + t.iteration, False, True)
                t.iteration += 1

    def iterate(self) -> List[Dict[str, float]]:
        """One iteration of every seed: its ``num_envs`` exploring episodes, then the gradient steps
        due (stacked over seeds when the variant allows)."""
        if not self.stacked:
            return [self.run_for_seed(s, t.iterate) for s, t in enumerate(self.trainers)]
        self._check_lockstep()
        S = len(self.trainers)
        returns, due = [], []
        for s, t in enumerate(self.trainers):
            wall0, cpu0 = time.perf_counter(), time.process_time()
            self._enter(s)
            returns.append(t.play(t.settings.num_envs, episode_seed(t.settings.seed, t.iteration), greedy=False,
                                  store=True))
            due.append(t.updates_due(t.settings.num_envs))
            self._leave(s)
            t.wall_seconds += time.perf_counter() - wall0
            t.cpu_seconds += time.process_time() - cpu0
        if len(set(due)) != 1:
            raise LearnerError(f"StackedSeeds: seeds owe different numbers of gradient steps {due}")
        wall0, cpu0 = time.perf_counter(), time.process_time()
        stats = torch.zeros(S, 3, dtype=torch.float64)
        for _ in range(due[0]):
            stats += self.update()
        stats = (stats / max(due[0], 1)).tolist()
        wall, cpu = (time.perf_counter() - wall0) / S, (time.process_time() - cpu0) / S
        out = []
        for s, t in enumerate(self.trainers):
            t.iteration += 1
            t.episodes += t.settings.num_envs
            t.env_steps += t.settings.num_envs * t.config.episode_length
            t.wall_seconds += wall
            t.cpu_seconds += cpu
            out.append({"critic_loss": stats[s][0], "actor_loss": stats[s][1], "q": stats[s][2],
                        "train_reward": float(returns[s].mean()), "episodes": t.episodes, "env_steps": t.env_steps,
                        "updates": due[0]})
        return out

    def _gather(self, M: int) -> Dict[str, torch.Tensor]:
        """Every seed's replay sample of M transitions -- the rows :meth:`TensorReplay.sample` draws from
        the seed's numpy generator -- copied straight into stacked tensors: each field (S, M, ...),
        except ``x`` and ``x2``, which come as the critic's ego rows (S, M n, n F) (:meth:`~.maddpg.
        MADDPGTrainer.ego_rows` of the sample).  One copy per field instead of sample, stack and ego
        rows' three; the values are the same."""
        ts = self.trainers
        S, n = len(ts), ts[0].config.agents
        order = ts[0].order_flat                       # (n n,): ego k's slot j holds agent order[k, j]
        F = ts[0].replay.data["x"].shape[-1]
        b = {k: torch.empty(((S, M * n, n * F) if k in ("x", "x2") else (S, M) + tuple(v.shape[1:])),
                            dtype=v.dtype, device=v.device) for k, v in ts[0].replay.data.items()}
        for s, t in enumerate(ts):
            if len(t.replay) == 0:
                raise ValueError("cannot sample from an empty replay buffer")
            idx = torch.from_numpy(t.rng.integers(0, len(t.replay), size=M))      # as TensorReplay.sample
            ego = (idx[:, None] * n + order[None, :]).reshape(-1)                  # rows of data.view(-1, F)
            for k, v in t.replay.data.items():
                if k in ("x", "x2"):
                    torch.index_select(v.view(-1, F), 0, ego, out=b[k][s].view(M * n * n, F))
                else:
                    torch.index_select(v, 0, idx, out=b[k][s])
        return b

    def _seed_batch(self, b: Dict[str, torch.Tensor], s: int, M: int, F: int) -> Dict[str, torch.Tensor]:
        """Seed ``s``'s sample as :meth:`TensorReplay.sample` returns it (x, x2 (M, n, F): views of the ego
        rows' own slot)."""
        n = self.trainers[0].config.agents
        out = {k: v[s] for k, v in b.items() if k not in ("x", "x2")}
        for k in ("x", "x2"):
            out[k] = b[k][s][:, :F].unflatten(0, (M, n))
        return out

    def update(self) -> torch.Tensor:
        """One gradient step of every seed (each :meth:`MADDPGTrainer.update`, batched over seeds);
        returns (S, 3) critic loss, actor loss, mean Q.  The critic's passes are always stacked; the
        actor's too for the feed-forward variants, while RMADDPG's and EE's actors step per seed
        with their own code (autograd), fed with the stacked critic's action gradient.

        Each seed's replay sample goes straight into stacked ego rows (:meth:`_gather`), its Gumbel
        noise straight into the stacked noise, and the Adam steps of all seeds are one fused call
        (:func:`~.flat.step_grads`): the same bits as sampling, stacking and stepping seed by seed."""
        ts = self.trainers
        t0, S = ts[0], len(ts)
        s_, n, c = t0.settings, t0.config.agents, t0.config.pieces
        M = max(1, s_.batch // n)
        B = M * n
        if self._shapes is None:
            self._shapes = (parameter_shapes(t0.actor) if self.feed_forward else None, parameter_shapes(t0.critic))
        actor_shapes, critic_shapes = self._shapes
        b = self._gather(M)                     # each seed's sample (its numpy generator), in update()'s order
        kinds = (NUM_MOVES, c, NUM_MOVES, c) if self.feed_forward else (NUM_MOVES, c)
        nz = [torch.empty(S, B, k) for k in kinds]                                     # (S, B, k)
        for s in range(S):                      # each seed's target (and actor) noise from its torch stream
            self._enter(s)
            with torch.no_grad():
                for buf in nz:
                    gumbel_noise_into(buf[s])
            self._leave(s)
        F = b["x"].shape[-1] // n
        xe, xe2 = b["x"], b["x2"]                                                      # (S, B, n F) ego rows
        x_own, x2_own = xe[..., :F], xe2[..., :F]      # (S, B, F): row m n + k is agent k's own features
        batches = None if self.feed_forward else [self._seed_batch(b, s, M, F) for s in range(S)]
        with torch.no_grad():
            critic_t = torch.stack([t.target_pairs[1][0] for t in ts])
            critic_w = torch.stack([t.critic_opt.flat.detach() for t in ts])
            # target: hard samples of the target actor, the target critic
            if self.feed_forward:
                actor_t = torch.stack([t.target_pairs[0][0] for t in ts])
                w1, b1, wc, bc, wm, bm, wp, bp = stacked_views(actor_t, actor_shapes)
                h = batched_linear(batched_linear(x2_own, w1, b1).relu_(), wc, bc).relu_()
                lm2, lp2 = batched_linear(h, wm, bm), batched_linear(h, wp, bp)
            else:
                out = [t.actor_target(*t.actor_inputs(x, True))[:2] for t, x in zip(ts, batches)]
                lm2, lp2 = torch.stack([o[0] for o in out]), torch.stack([o[1] for o in out])
            m2, p2 = (lm2 + nz[0]).argmax(-1), (lp2 + nz[1]).argmax(-1)
            a2 = t0.onehot_actions(m2.reshape(S * M, n), p2.reshape(S * M, n))        # (S M, n, A)
            A = a2.shape[-1]
            q2 = CriticStack(critic_shapes, critic_t, xe2, t0.ego_rows(a2).reshape(S, B, -1)).q
            y = b["r"].reshape(S, B) + s_.gamma * (1 - b["done"]).repeat_interleave(n, 1) * q2
            # critic step
            a = t0.onehot_actions(b["m"].reshape(S * M, n), b["p"].reshape(S * M, n))  # (S M, n, A)
            cp = CriticStack(critic_shapes, critic_w, xe, t0.ego_rows(a).reshape(S, B, -1))
            err = cp.q - y
            critic_loss, q_mean = err.pow(2).mean(1), cp.q.mean(1)
            g = cp.parameter_grad(err * (2.0 / B))
            step_grads([t.critic_opt for t in ts], list(g))
        # the actor's sampled actions (straight-through Gumbel-softmax): stacked, or each seed's own step
        if self.feed_forward:
            with torch.no_grad():
                actor_w = torch.stack([t.actor_opt.flat.detach() for t in ts])
                ap = ActorStack(actor_shapes, actor_w, x_own, (nz[2], nz[3]), t0.eye_moves, t0.eye_pieces)
                new_a = ap.new_a
        else:
            applies, new_a = [], []
            for s, (t, x) in enumerate(zip(ts, batches)):
                self._enter(s)
                na, apply = t.actor_step(x)
                self._leave(s)
                applies.append(apply)
                new_a.append(na.detach())
            new_a = torch.stack(new_a)
        with torch.no_grad():
            # the actor's gradient through the critic just stepped
            ae = a[:, t0.order].reshape(S, M, n, n, A)                                # (S, M, ego, n, A)
            ae = torch.cat([new_a.reshape(S, M, n, 1, A), ae[:, :, :, 1:]], 3).reshape(S, B, -1)
            critic_w = torch.stack([t.critic_opt.flat.detach() for t in ts])
            cp = CriticStack(critic_shapes, critic_w, xe, ae)
            q_new = cp.q
            d_new_a = cp.action_grad(torch.full_like(q_new, -1.0 / B), slice(0, A))
            if self.feed_forward:
                ga = ap.parameter_grad(d_new_a, s_.logit_reg)
                step_grads([t.actor_opt for t in ts], list(ga))
                reg = ap.regulariser(s_.logit_reg)
        if not self.feed_forward:
            reg = torch.stack([apply(d_new_a[s]).detach() for s, apply in enumerate(applies)])
        with torch.no_grad():
            targets = [p for t in ts for p, _ in t.target_pairs]
            onlines = [p for t in ts for _, p in t.target_pairs]
            torch._foreach_lerp_(targets, onlines, s_.tau)                           # target += tau (online - target)
            return torch.stack([critic_loss, -q_new.mean(1) + reg, q_mean], 1).double()
