"""Monte Carlo CFR on the game protocol: external sampling and outcome sampling (Lanctot et al. 2009).

For games too big to compile into flat trees, these solvers walk the game through the protocol
(:mod:`cfrkit.games.base`), sampling part of the tree each iteration:

* :class:`ExternalSamplingMCCFR` -- per iteration and per player ("traverser"), chance and the other
  players are sampled (one action each, from their current strategies) while every action of the
  traverser is explored; regrets are updated at the traverser's information sets with sampled
  counterfactual values, and the average strategy at the other players' sets ("simple" averaging).
* :class:`OutcomeSamplingMCCFR` -- per iteration and per player, a single trajectory is sampled:
  the updating player explores with ``epsilon``-uniform mixing (default 0.6), the others follow
  their current strategies, chance its probabilities; importance-weighted regrets and
  stochastically-weighted average-strategy increments are applied along the trajectory.

Regrets and average-strategy sums are kept per information-state key (the same keys as
:class:`~cfrkit.policy.TabularPolicy`).  Visited nodes are cached (their player, information set,
legal actions, chance outcomes, returns and children), so the protocol's state objects are built
and the information-state strings computed only once per node; on a game like Leduc the whole tree
ends up cached and an iteration never touches a State.  ``max_cached_nodes`` bounds that cache for
big games (nodes beyond it are rebuilt every visit).

Everything is seeded (Python's Mersenne Twister); :meth:`MCCFRSolver.save` writes the full state
(regrets, sums, iteration count, random generator state) and :meth:`MCCFRSolver.load` resumes so that
the result equals an uninterrupted run with the same seed, bit for bit.

>>> solver = ExternalSamplingMCCFR("leduc", seed=1)
>>> solver.run(10_000, progress=False)        # doctest: +SKIP
>>> policy = solver.average_policy()          # TabularPolicy, metadata has algorithm/iterations/seed
"""
from __future__ import annotations

import math
import random
from bisect import bisect_right
import sys
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.games.base import CHANCE, TERMINAL, Game, GameError, State
from cfrkit.games.registry import load
from cfrkit.games.sequential import as_sequential
from cfrkit.policy import FILE_MAGIC as POLICY_MAGIC
from cfrkit.policy import (PolicyFileError, TabularPolicy, check_array, load_npz_checked, player_key,
                           save_npz_atomic)
from cfrkit.solvers.progress import SolverHistory, run_iterations
from cfrkit.solvers.tabular.best_response import exploitability
from cfrkit.solvers.tabular.cfr import NonFiniteError
from cfrkit.solvers.tabular.compiled import compile_game

_STATE_MAGIC = "cfrkit-mccfr-state"
_STATE_VERSION = 1
#: largest number of legal actions at one decision the tabular tables accept
_MAX_ACTIONS = 1_000_000


class _InfoSet:
    """Regrets and average-strategy sums of one information set (Python lists: fastest for few actions)."""

    __slots__ = ("key", "player", "actions", "regrets", "sums")

    def __init__(self, key: str, actions: Tuple[int, ...], player: int = -1):
        self.key = key
        self.player = player
        self.actions = actions
        self.regrets = [0.0] * len(actions)
        self.sums = [0.0] * len(actions)


class _Node:
    """A cached game-tree node: what the traversal needs without touching the State again."""

    __slots__ = ("player", "info", "regrets", "sums", "actions", "children", "state", "returns", "cum", "probs",
                 "pending")

    def __init__(self):
        self.children: List[Optional["_Node"]] = []


def _regret_matching(regrets: List[float]) -> List[float]:
    """Current strategy from cumulative regrets: positive regrets normalised, uniform when none is positive."""
    total = 0.0
    for r in regrets:
        if r > 0.0:
            total += r
    if total > 0.0:
        return [r / total if r > 0.0 else 0.0 for r in regrets]
    n = len(regrets)
    return [1.0 / n] * n


class MCCFRSolver:
    """Shared machinery of the MCCFR variants: node cache, information sets, run loop, checkpoints."""

    algorithm = "mccfr"

    def __init__(self, game: "str | Game", seed: int = 0, max_cached_nodes: int = 2_000_000):
        self.game = as_sequential(load(game))
        self.num_players = self.game.num_players
        self.seed = int(seed)
        self.rng = random.Random(self.seed)
        self.iterations = 0
        self.seconds = 0.0
        #: (iteration, seconds, exploitability) of every evaluation and the end of every run
        self.history = SolverHistory()
        self.max_cached_nodes = int(max_cached_nodes)
        self.infosets: Dict[str, _InfoSet] = {}
        self._shared: set = set()  # information-state strings of more than one player
        self._cached_nodes = 0
        self._root = self._make_node(self.game.new_initial_state())

    # ----------------------------------------------------------------- node cache
    def _make_node(self, state: State) -> _Node:
        node = _Node()
        player = state.current_player()
        node.player = player
        node.info = None
        node.regrets = None
        node.sums = None
        node.state = None
        node.returns = None
        node.cum = None
        node.probs = None
        if player == TERMINAL:
            node.actions = ()
            node.returns = tuple(float(r) for r in state.returns())
            node.pending = 0
            return node
        if player == CHANCE:
            outcomes = state.chance_outcomes()
            node.actions = tuple(a for a, _ in outcomes)
            node.probs = tuple(float(p) for _, p in outcomes)
            cum, acc = [], 0.0
            for p in node.probs:
                acc += p
                cum.append(acc)
            cum[-1] = 1.0 + 1e-12  # guard against rounding: the last outcome takes what is left
            node.cum = cum
        else:
            legal = state.legal_actions()  # may be lazy (hold'em raise sizes): check before materialising
            if len(legal) > _MAX_ACTIONS:
                raise GameError(f"{self.game.game_string()}: {len(legal):,} legal actions at one decision; tabular "
                                f"MCCFR keeps regrets per action (at most {_MAX_ACTIONS:,}): abstract the actions "
                                f"(e.g. holdem_abstract)")
            node.actions = tuple(legal)
            key = self._policy_key(player, state.information_state_string(player))
            info = self.infosets.get(key)
            if info is None:
                info = self.infosets[key] = _InfoSet(key, node.actions, player)
            elif info.actions != node.actions:
                raise GameError(f"{self.game.game_string()}: information state {key!r} has legal actions "
                                f"{info.actions} and {node.actions}")
            node.info = info
            node.regrets = info.regrets  # shared lists: the node reads and updates its set's tables
            node.sums = info.sums
        node.children = [None] * len(node.actions)
        node.pending = len(node.actions)
        node.state = state
        return node

    def _policy_key(self, player: int, key: str) -> str:
        """The table key of ``player``'s information state ``key``: the string itself, or
        ``player_key(player, key)`` once two players are seen sharing it (the first owner's set is
        renamed then; nodes hold the set objects, so nothing else changes)."""
        if key in self._shared:
            return player_key(player, key)
        info = self.infosets.get(key)
        if info is None or info.player == player:
            return key
        if info.player < 0:  # loaded from a file without owners: the first visit claims it
            info.player = player
            return key
        self._shared.add(key)
        del self.infosets[key]
        info.key = player_key(info.player, key)
        self.infosets[info.key] = info
        return player_key(player, key)

    def _child(self, node: _Node, index: int) -> _Node:
        """Expand child ``index`` of ``node`` (cached while the cache has room)."""
        state = node.state.clone()
        state.apply_action(node.actions[index])
        child = self._make_node(state)
        if self._cached_nodes < self.max_cached_nodes:
            self._cached_nodes += 1
            node.children[index] = child
            node.pending -= 1
            if node.pending == 0:
                node.state = None  # every child exists: the state is no longer needed
        return child

    # ----------------------------------------------------------------- running
    def _iteration(self) -> None:
        raise NotImplementedError

    def iterate(self, count: int = 1) -> None:
        """Run ``count`` iterations (each updates every player once)."""
        start = time.perf_counter()
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20_000))
        try:
            for _ in range(count):
                self._iteration()
                self.iterations += 1
        finally:
            sys.setrecursionlimit(limit)
            self.seconds += time.perf_counter() - start

    def run(self, iterations: int, callback: Optional[Callable[["MCCFRSolver"], None]] = None,
            callback_every: int = 0, progress: Optional[bool] = None, eval_every: int = 0,
            target: Optional[float] = None, should_stop: Optional[Callable[[], bool]] = None,
            after_chunk: Optional[Callable[["MCCFRSolver"], None]] = None, align: Sequence[int] = ()) -> "MCCFRSolver":
        """Run until ``self.iterations == iterations`` (a resumed solver runs only what is left).

        ``callback(solver)`` is called every ``callback_every`` iterations (when > 0) and at the end;
        ``progress`` shows a tqdm bar (default: when stderr is a terminal).  ``eval_every > 0``
        computes the exact exploitability of the average policy (game units; the game must be small
        enough to compile) every that many iterations into :attr:`history`, stopping once it is at
        most ``target``.  ``should_stop`` and ``after_chunk`` are checked/called between whole
        iterations (see :func:`cfrkit.solvers.progress.run_iterations`).
        """
        run_iterations(self, iterations, callback, callback_every, progress,
                       desc=f"{self.algorithm} {self.game.game_string()}", should_stop=should_stop,
                       after_chunk=after_chunk, align=align, eval_every=eval_every, target=target,
                       evaluate=MCCFRSolver.exploitability)
        self.check_finite()
        return self

    def exploitability(self) -> float:
        """Exact exploitability of the average policy (game units), on the compiled game tree."""
        return exploitability(compile_game(self.game), self.average_policy())

    def check_finite(self) -> None:
        """Raise :class:`~cfrkit.solvers.tabular.cfr.NonFiniteError` if a regret or sum is NaN or infinite."""
        for info in self.infosets.values():
            if not all(math.isfinite(x) for x in info.regrets) or not all(math.isfinite(x) for x in info.sums):
                raise NonFiniteError(f"{self.algorithm} on {self.game.game_string()}: regrets or sums overflowed to "
                                     f"NaN/inf at information state {info.key!r} by iteration {self.iterations}; "
                                     f"rescale the payoffs")

    # ----------------------------------------------------------------- policies
    def _metadata(self) -> Dict[str, object]:
        return {"algorithm": self.algorithm, "iterations": self.iterations, "seed": self.seed,
                "game": self.game.game_string(), "seconds": self.seconds, **self._options()}

    def _options(self) -> Dict[str, object]:
        return {}

    def average_policy(self) -> TabularPolicy:
        """The normalised average strategy (what converges to equilibrium) per visited information set.

        Sets never visited, or with all-zero sums, are uniform over their legal actions.
        """
        self.check_finite()
        table = {}
        for key, info in self.infosets.items():
            total = sum(info.sums)
            n = len(info.actions)
            if total > 0.0:
                table[key] = {a: s / total for a, s in zip(info.actions, info.sums)}
            else:
                table[key] = {a: 1.0 / n for a in info.actions}
        return TabularPolicy(self.game, table, metadata=self._metadata())

    def current_policy(self) -> TabularPolicy:
        """The current (regret-matching) strategy per visited information set."""
        table = {key: dict(zip(info.actions, _regret_matching(info.regrets))) for key, info in self.infosets.items()}
        return TabularPolicy(self.game, table, metadata=self._metadata())

    # ----------------------------------------------------------------- checkpoints
    def save(self, path: str) -> None:
        """Write the full resumable state to ``path`` (``.npz``, atomic)."""
        self.check_finite()
        keys = list(self.infosets)
        sizes = [len(self.infosets[k].actions) for k in keys]
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        actions = np.fromiter((a for k in keys for a in self.infosets[k].actions), dtype=np.int64,
                              count=int(offsets[-1]))
        regrets = np.fromiter((r for k in keys for r in self.infosets[k].regrets), dtype=np.float64,
                              count=int(offsets[-1]))
        sums = np.fromiter((s for k in keys for s in self.infosets[k].sums), dtype=np.float64,
                           count=int(offsets[-1]))
        # the file is also a policy file (TabularPolicy.load, cfrkit exploitability): store the average
        probs = np.empty_like(sums)
        for i in range(len(keys)):
            lo, hi = offsets[i], offsets[i + 1]
            total = sums[lo:hi].sum()
            probs[lo:hi] = sums[lo:hi] / total if total > 0 else 1.0 / max(1, hi - lo)
        version, internal, gauss = self.rng.getstate()
        header = {"magic": POLICY_MAGIC, "version": _STATE_VERSION, **self._metadata(),
                  "metadata": self._metadata(), "mccfr_state": _STATE_MAGIC, "rng_version": version,
                  "rng_gauss": gauss, "history": self.history.to_json()}
        owners = np.fromiter((self.infosets[k].player for k in keys), dtype=np.int64, count=len(keys))
        save_npz_atomic(path, header=header, keys=np.array(keys, dtype=str), offsets=offsets, actions=actions,
                        probs=probs, regrets=regrets, strategy_sums=sums, players=owners,
                        rng_state=np.array(internal, dtype=np.int64))

    @classmethod
    def load(cls, path: str, game: "str | Game | None" = None, **kwargs) -> "MCCFRSolver":
        """Resume a solver saved by :meth:`save` (raises :class:`PolicyFileError` for a bad file)."""
        header, arrays = load_npz_checked(path, POLICY_MAGIC,
                                          ("keys", "offsets", "actions", "regrets", "strategy_sums", "rng_state"))
        if header.get("mccfr_state") != _STATE_MAGIC:
            raise PolicyFileError(f"{path}: holds no MCCFR solver state")
        if cls is MCCFRSolver:
            cls = _ALGORITHMS.get(header.get("algorithm"))
            if cls is None:
                raise PolicyFileError(f"{path}: unknown MCCFR algorithm {header.get('algorithm')!r}")
        elif header.get("algorithm") != cls.algorithm:
            raise PolicyFileError(f"{path}: holds a {header.get('algorithm')!r} state, not {cls.algorithm!r}")
        try:
            if game is not None and as_sequential(load(game)).game_string() == header["game"]:
                stored_game = as_sequential(load(game))  # also a game of the user's own, not registered
            else:
                stored_game = as_sequential(load(header["game"]))
            if game is not None and as_sequential(load(game)).game_string() != stored_game.game_string():
                raise PolicyFileError(f"{path}: state is for game {stored_game.game_string()!r}, "
                                      f"not {as_sequential(load(game)).game_string()!r}")
            options = {k: header[k] for k in cls._option_names() if k in header}
            options.update(kwargs)
            solver = cls(stored_game, seed=int(header["seed"]), **options)
            keys = check_array(path, arrays, "keys", "U", 1)
            offsets = check_array(path, arrays, "offsets", "iu", 1)
            actions = check_array(path, arrays, "actions", "iu", 1)
            regrets = check_array(path, arrays, "regrets", "f", 1, finite=True)
            sums = check_array(path, arrays, "strategy_sums", "f", 1, finite=True)
            check_array(path, arrays, "rng_state", "iu", 1)
            if int(header["iterations"]) < 0:
                raise PolicyFileError(f"{path}: corrupted header (iterations {header['iterations']})")
            if (len(offsets) != len(keys) + 1 or int(offsets[-1]) != len(actions) or len(regrets) != len(actions)
                    or len(sums) != len(actions) or int(offsets[0]) != 0 or np.any(np.diff(offsets) < 0)):
                raise PolicyFileError(f"{path}: inconsistent array sizes (corrupted MCCFR state file)")
            acts, regs, sms = actions.tolist(), regrets.tolist(), sums.tolist()
            solver.infosets = {}
            bounds = offsets.tolist()
            owners = arrays.get("players")
            if owners is None:
                owners = np.full(len(keys), -1)
            elif owners.dtype.kind not in "iu" or owners.shape != (len(keys),):
                raise PolicyFileError(f"{path}: inconsistent array sizes (corrupted MCCFR state file)")
            owners = owners.tolist()
            for i, key in enumerate(keys.tolist()):
                lo, hi = bounds[i], bounds[i + 1]
                if key.startswith("[player "):
                    solver._shared.add(key.split("] ", 1)[1])
                info = _InfoSet(key, tuple(acts[lo:hi]), int(owners[i]))
                info.regrets = regs[lo:hi]
                info.sums = sms[lo:hi]
                solver.infosets[key] = info
            # the root was built before the table was filled: rebuild so it points at the loaded sets
            solver._cached_nodes = 0
            solver._root = solver._make_node(solver.game.new_initial_state())
            solver.rng.setstate((int(header["rng_version"]), tuple(int(x) for x in arrays["rng_state"]),
                                 header["rng_gauss"]))
            solver.iterations = int(header["iterations"])
            solver.seconds = float(header.get("seconds", 0.0))
            solver.history = SolverHistory.from_json(header.get("history"))
        except PolicyFileError:
            raise
        except (KeyError, TypeError, ValueError, GameError, AttributeError, IndexError, OverflowError) as exc:
            raise PolicyFileError(f"{path}: unusable MCCFR state ({type(exc).__name__}: {exc})") from None
        return solver

    @classmethod
    def _option_names(cls) -> Tuple[str, ...]:
        return ()


class ExternalSamplingMCCFR(MCCFRSolver):
    """External-sampling MCCFR (Lanctot et al. 2009) with simple averaging at the opponents' sets.

    Args:
        game: game string or :class:`~cfrkit.games.base.Game` (simultaneous games are played in turns).
        seed: seed of the sampling (results are reproducible for a seed).
        max_cached_nodes: bound on the node cache (memory); beyond it nodes are rebuilt on each visit.
    """

    algorithm = "es-mccfr"

    def _iteration(self) -> None:
        root = self._root
        for player in range(self.num_players):
            self._traverse(root, player)

    def _traverse(self, node: _Node, traverser: int) -> float:
        """Sampled counterfactual value of ``node`` for ``traverser`` (game units).

        Chance and the other players' nodes are walked in a loop (one sampled action each); only the
        traverser's nodes recurse, once per action.
        """
        rand = self.rng.random
        while True:
            player = node.player
            if player == traverser:
                break
            if player == TERMINAL:
                return node.returns[traverser]
            if player == CHANCE:
                # the first outcome whose cumulative probability exceeds a uniform draw
                index = bisect_right(node.cum, rand())
            else:
                # the other player's current strategy: add it to the average, sample one action
                regrets = node.regrets
                n = len(regrets)
                total = 0.0
                for r in regrets:
                    if r > 0.0:
                        total += r
                sums = node.sums
                r = rand()
                if total > 0.0:
                    # sigma = positive regrets / total; sample among the actions it gives weight to
                    threshold = r * total
                    acc = 0.0
                    index = last = -1
                    for k in range(n):
                        g = regrets[k]
                        if g > 0.0:
                            sums[k] += g / total
                            last = k
                            if index < 0:
                                acc += g
                                if threshold < acc:
                                    index = k
                    if index < 0:  # rounding left r * total at the very top
                        index = last
                else:
                    uniform = 1.0 / n
                    for k in range(n):
                        sums[k] += uniform
                    index = min(int(r * n), n - 1)
            child = node.children[index]
            if child is None:
                child = self._child(node, index)
            node = child
        # the traverser's node: explore every action
        regrets = node.regrets
        n = len(regrets)
        sigma = _regret_matching(regrets)
        children = node.children
        values = [0.0] * n
        value = 0.0
        for k in range(n):
            child = children[k]
            if child is None:
                child = self._child(node, k)
            if child.player == TERMINAL:
                v = child.returns[traverser]
            else:
                v = self._traverse(child, traverser)
            values[k] = v
            value += sigma[k] * v
        for k in range(n):
            regrets[k] += values[k] - value
        return value


class OutcomeSamplingMCCFR(MCCFRSolver):
    """Outcome-sampling MCCFR (Lanctot et al. 2009): one sampled trajectory per player per iteration.

    Args:
        game: game string or :class:`~cfrkit.games.base.Game`.
        seed: seed of the sampling.
        epsilon: exploration of the updating player (its sampling policy is
            ``epsilon * uniform + (1 - epsilon) * current strategy``); must be in (0, 1].
        max_cached_nodes: bound on the node cache.
    """

    algorithm = "os-mccfr"

    def __init__(self, game: "str | Game", seed: int = 0, epsilon: float = 0.6, max_cached_nodes: int = 2_000_000):
        if not 0.0 < float(epsilon) <= 1.0:
            raise ValueError(f"epsilon must be in (0, 1], got {epsilon}")
        self.epsilon = float(epsilon)
        super().__init__(game, seed=seed, max_cached_nodes=max_cached_nodes)

    def _options(self) -> Dict[str, object]:
        return {"epsilon": self.epsilon}

    @classmethod
    def _option_names(cls) -> Tuple[str, ...]:
        return ("epsilon",)

    def _iteration(self) -> None:
        root = self._root
        for player in range(self.num_players):
            self._episode(root, player)

    def _episode(self, node: _Node, updater: int) -> float:
        """Sample one trajectory from ``node`` and update ``updater``'s sets along it.

        Forward: chance samples its outcomes, the other players their current strategies, the
        updater ``epsilon * uniform + (1 - epsilon) * sigma``.  Backward, at each of the updater's
        nodes ``h`` with sampled action ``a``: the tail value ``x = u(z) pi(ha->z) / q(ha->z)`` gives
        the sampled counterfactual value ``w = x / (q_i(h) s(a))`` of ``a`` (pi_{-i}(h) / q(h) =
        1 / q_i(h) because the others are sampled on-policy), so regrets get ``w (1[b=a] - sigma(a))``
        and the average ``pi_i(h) sigma(b) / q(h)`` (stochastically weighted).  Returns ``u(z) *
        pi(root->z) / q(root->z)``.
        """
        rand = self.rng.random
        eps = self.epsilon
        my_reach = my_sample = sample_reach = 1.0
        path = []
        while True:
            player = node.player
            if player == TERMINAL:
                break
            if player == CHANCE:
                # the first outcome whose cumulative probability exceeds a uniform draw
                index = bisect_right(node.cum, rand())
                sample_reach *= node.probs[index]
            elif player == updater:
                sigma = _regret_matching(node.regrets)
                n = len(sigma)
                # sample from epsilon * uniform + (1 - epsilon) * sigma (every action has weight > 0)
                explore = eps / n
                keep = 1.0 - eps
                r = rand()
                acc = 0.0
                index = n - 1
                for k in range(n - 1):
                    acc += explore + keep * sigma[k]
                    if r < acc:
                        index = k
                        break
                q_a = explore + keep * sigma[index]
                path.append((node, sigma, index, q_a, my_reach, my_sample, sample_reach))
                my_reach *= sigma[index]
                my_sample *= q_a
                sample_reach *= q_a
            else:
                # another player: sample its current strategy (never an action of probability 0)
                regrets = node.regrets
                total = 0.0
                for r in regrets:
                    if r > 0.0:
                        total += r
                r = rand()
                if total > 0.0:
                    threshold = r * total
                    acc = 0.0
                    index = last = -1
                    for k in range(len(regrets)):
                        g = regrets[k]
                        if g > 0.0:
                            acc += g
                            last = k
                            if threshold < acc:
                                index = k
                                break
                    if index < 0:  # rounding left r * total at the very top
                        index = last
                    sample_reach *= regrets[index] / total
                else:
                    n = len(regrets)
                    index = min(int(r * n), n - 1)
                    sample_reach /= n
            child = node.children[index]
            if child is None:
                child = self._child(node, index)
            node = child
        tail = node.returns[updater]
        for node, sigma, index, q_a, reach_h, sample_h, sample_reach_h in reversed(path):
            regrets = node.regrets
            n = len(regrets)
            w = tail / (sample_h * q_a)
            s_a = sigma[index]
            for k in range(n):
                regrets[k] -= s_a * w
            regrets[index] += w
            sums = node.sums
            weight = reach_h / sample_reach_h
            for k in range(n):
                sums[k] += weight * sigma[k]
            tail = s_a * tail / q_a
        return tail


_ALGORITHMS = {ExternalSamplingMCCFR.algorithm: ExternalSamplingMCCFR,
               OutcomeSamplingMCCFR.algorithm: OutcomeSamplingMCCFR}


def load_mccfr(path: str, game: "str | Game | None" = None) -> MCCFRSolver:
    """Resume whichever MCCFR solver (ES or OS) saved ``path``."""
    return MCCFRSolver.load(path, game)
