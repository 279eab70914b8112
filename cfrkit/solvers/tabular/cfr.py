"""CFR, CFR+, linear CFR and discounted CFR on compiled game trees (Cython kernels).

>>> from cfrkit.solvers import CFRSolver
>>> solver = CFRSolver("leduc", algorithm="cfr+")
>>> solver.run(1000)                      # doctest: +SKIP
>>> policy = solver.average_policy()      # a TabularPolicy keyed by information-state strings

Algorithms (``algorithm=``):

* ``cfr`` -- vanilla CFR (regret matching; average weighted by reach).  ``alternating=False`` gives
  simultaneous updates.
* ``cfr+`` -- regret matching+, alternating updates, linear averaging: the variant OpenSpiel's
  ``CFRPlusSolver`` runs (iterates agree with it to rounding).
* ``lcfr`` -- linear CFR (discounted CFR with alpha = beta = gamma = 1).
* ``dcfr`` -- discounted CFR (Brown & Sandholm 2019) with ``alpha``, ``beta``, ``gamma``
  (defaults 1.5, 0, 2).

A solver saves its full state (regrets, strategy sums, iteration count) with :meth:`CFRSolver.save`
and continues exactly where it stopped after :meth:`CFRSolver.load`.
"""
from __future__ import annotations

import time
from typing import Callable, Dict, Optional, Sequence

import numpy as np

from cfrkit.games.base import Game, GameError
from cfrkit.policy import FILE_MAGIC as POLICY_MAGIC
from cfrkit.policy import PolicyFileError, TabularPolicy, check_array, load_npz_checked, sequential_game_string
from cfrkit.solvers.progress import SolverHistory, run_iterations
from cfrkit.solvers.tabular.best_response import exploitability
from cfrkit.solvers.tabular.compiled import CompiledGame, compile_game
# the policy <-> slot conversions live in slots.py (best response needs them too); re-exported here
from cfrkit.solvers.tabular.slots import (MIN_POLICY_COVERAGE, PolicyCoverageWarning, check_distribution,
                                          policy_to_slots, slots_to_policy)

__all__ = ["ALGORITHMS", "CFRSolver", "NonFiniteError", "MIN_POLICY_COVERAGE", "PolicyCoverageWarning",
           "check_distribution", "policy_to_slots", "slots_to_policy"]


class NonFiniteError(GameError):
    """A solver's numbers overflowed to NaN or infinity (payoffs too large for float64)."""


ALGORITHMS = {"cfr": 0, "cfr+": 1, "lcfr": 2, "dcfr": 2}


def _kernels():
    from cfrkit._kernels import tree_cfr

    return tree_cfr


class CFRSolver:
    """A CFR-family solver over a compiled tree.

    Args:
        game: game string, :class:`~cfrkit.games.base.Game` or an already :class:`CompiledGame`.
        algorithm: one of ``cfr``, ``cfr+``, ``lcfr``, ``dcfr``.
        alternating: alternate the players' updates (default True; CFR+ and DCFR need it).
        alpha, beta, gamma: discounting of DCFR.
        linear_average: weight vanilla CFR's average by the iteration number.
    """

    def __init__(self, game: "str | Game | CompiledGame", algorithm: str = "cfr+", alternating: bool = True,
                 alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0, linear_average: bool = False):
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
        self.tree = (game if isinstance(game, CompiledGame) else compile_game(game)).validate()
        self.algorithm = algorithm
        self.alternating = bool(alternating)
        if algorithm == "lcfr":
            alpha, beta, gamma = 1.0, 1.0, 1.0
        self.alpha, self.beta, self.gamma = float(alpha), float(beta), float(gamma)
        self.linear_average = bool(linear_average)
        t = self.tree
        self.regrets = np.zeros(t.num_slots, dtype=np.float64)
        self.strategy_sum = np.zeros(t.num_slots, dtype=np.float64)
        self.sigma = np.empty(t.num_slots, dtype=np.float64)
        self._reach = np.empty((t.num_nodes, t.num_players + 1), dtype=np.float64)
        self._values = np.empty((t.num_nodes, t.num_players), dtype=np.float64)
        self._inst = np.empty(t.num_slots, dtype=np.float64)
        self.iterations = 0
        self.seconds = 0.0
        #: (iteration, seconds, exploitability) of every evaluation and the end of every run
        self.history = SolverHistory()
        # node locking: slots whose strategy is fixed, and the fixed probabilities
        self._locked_slots = np.zeros(0, dtype=np.int64)
        self._locked_probs = np.zeros(0, dtype=np.float64)
        _kernels().regret_matching(self.regrets, t.infoset_offset, t.infoset_player, -1, self.sigma)

    @property
    def game_string(self) -> str:
        return self.tree.game_string

    def iterate(self, count: int = 1) -> None:
        """Run ``count`` iterations."""
        k = _kernels()
        t = self.tree
        code = ALGORITHMS[self.algorithm]
        start = time.perf_counter()
        for _ in range(count):
            self.iterations += 1
            players = range(t.num_players) if self.alternating else (-1,)
            for p in players:
                k.cfr_iteration(t.node_player, t.node_infoset, t.child_start, t.num_children, t.node_chance_prob,
                                t.utilities, t.infoset_offset, t.infoset_player, self.regrets, self.strategy_sum,
                                self.sigma, self._reach, self._values, self._inst, p, code, float(self.iterations),
                                self.alpha, self.beta, self.gamma, self.linear_average)
                if self._locked_slots.size:
                    self.sigma[self._locked_slots] = self._locked_probs
        self.seconds += time.perf_counter() - start
        if not (np.isfinite(self.regrets).all() and np.isfinite(self.strategy_sum).all()):
            scale = float(np.abs(t.utilities).max())
            raise NonFiniteError(f"{self.algorithm} on {self.game_string}: regrets or strategy sums overflowed to "
                                 f"NaN/inf at iteration {self.iterations} (largest |payoff| {scale:.3g}); rescale "
                                 f"the payoffs (the state before this iteration is lost; do not save)")

    # ----------------------------------------------------------------- node locking
    def lock(self, strategies) -> int:
        """Fix the strategy at chosen information sets; the solver then solves the rest of the game.

        ``strategies``: a mapping information-state key -> {action: probability} (e.g. a
        :class:`TabularPolicy`'s ``table``, or part of one).  Probabilities must cover the legal
        actions of the set and sum to one.  Locks add to earlier ones; returns the number of locked
        information sets.  The locked sets play the fixed strategy in every iteration and in
        :meth:`average_policy`.
        """
        table = getattr(strategies, "table", strategies)
        index = self.tree.infoset_index()
        off, acts = self.tree.infoset_offset, self.tree.slot_action
        locked = dict(zip(self._locked_slots.tolist(), self._locked_probs.tolist()))
        for key, probs in table.items():
            s = index.get(key)
            if s is None:
                raise GameError(f"lock: {key!r} is not an information state of {self.game_string}")
            legal = acts[off[s]:off[s + 1]].tolist()
            given = {int(a): float(p) for a, p in probs.items()}
            if set(given) - set(legal):
                raise GameError(f"lock: actions {sorted(set(given) - set(legal))} are not legal at {key!r} "
                                f"(legal: {legal})")
            values = np.array([given.get(a, 0.0) for a in legal])
            if not np.isfinite(values).all() or (values < 0).any() or abs(values.sum() - 1.0) > 1e-6:
                raise GameError(f"lock: the probabilities at {key!r} must be finite, >= 0 and sum to 1")
            for j, v in enumerate(values / values.sum()):
                locked[int(off[s]) + j] = float(v)
        self._locked_slots = np.fromiter(locked.keys(), dtype=np.int64, count=len(locked))
        self._locked_probs = np.fromiter(locked.values(), dtype=np.float64, count=len(locked))
        self.sigma[self._locked_slots] = self._locked_probs
        return len({int(np.searchsorted(off, s, side="right")) - 1 for s in locked})

    def unlock(self) -> None:
        """Remove every lock (the locked sets' regrets restart from what they were)."""
        self._locked_slots = np.zeros(0, dtype=np.int64)
        self._locked_probs = np.zeros(0, dtype=np.float64)
        t = self.tree
        _kernels().regret_matching(self.regrets, t.infoset_offset, t.infoset_player, -1, self.sigma)

    def run(self, iterations: int, callback: Optional[Callable[["CFRSolver"], None]] = None,
            callback_every: int = 0, progress: Optional[bool] = None, eval_every: int = 0,
            target: Optional[float] = None, should_stop: Optional[Callable[[], bool]] = None,
            after_chunk: Optional[Callable[["CFRSolver"], None]] = None, align: Sequence[int] = ()) -> "CFRSolver":
        """Run until ``self.iterations == iterations`` (so a resumed solver runs only what is left).

        ``callback(solver)`` is called every ``callback_every`` iterations and at the end;
        ``progress`` shows a tqdm bar (default: when stderr is a terminal).  ``eval_every > 0``
        computes the exact exploitability of the average strategy (game units, e.g. chips) every
        that many iterations into :attr:`history`; the run stops once it is at most ``target``.
        ``should_stop`` and ``after_chunk`` are checked/called between whole iterations (see
        :func:`cfrkit.solvers.progress.run_iterations`).
        """
        return run_iterations(self, iterations, callback, callback_every, progress,
                              desc=f"{self.algorithm} {self.game_string}", should_stop=should_stop,
                              after_chunk=after_chunk, align=align, eval_every=eval_every, target=target,
                              evaluate=CFRSolver.exploitability)

    def exploitability(self) -> float:
        """Exact exploitability of the current average strategy (game units, e.g. chips)."""
        return exploitability(self.tree, self.average_strategy_array())

    # ----------------------------------------------------------------- policies
    def average_strategy_array(self) -> np.ndarray:
        """The average strategy as a per-slot array (the layout of the compiled tree)."""
        out = np.empty_like(self.strategy_sum)
        _kernels().average_strategy(self.strategy_sum, self.tree.infoset_offset, out)
        if self._locked_slots.size:
            out[self._locked_slots] = self._locked_probs
        return out

    def current_strategy_array(self) -> np.ndarray:
        return self.sigma.copy()

    def average_policy(self) -> TabularPolicy:
        """The average strategy as a :class:`TabularPolicy` (what converges to equilibrium)."""
        return slots_to_policy(self.tree, self.average_strategy_array(), self._metadata())

    def current_policy(self) -> TabularPolicy:
        return slots_to_policy(self.tree, self.current_strategy_array(), self._metadata())

    def _metadata(self) -> Dict[str, object]:
        return {"algorithm": self.algorithm, "iterations": self.iterations, "alternating": self.alternating,
                "alpha": self.alpha, "beta": self.beta, "gamma": self.gamma, "seconds": self.seconds}

    # ----------------------------------------------------------------- checkpoints
    def save(self, path: str) -> None:
        """Save the average policy together with the full solver state in one file.

        The file loads as a policy (:meth:`TabularPolicy.load`) and as a solver (:meth:`load`),
        which resumes exactly where this one stopped.
        """
        if not (np.isfinite(self.regrets).all() and np.isfinite(self.strategy_sum).all()):
            raise NonFiniteError(f"refusing to save NaN/inf regrets of {self.game_string} to {path}")
        solver = {**self._metadata(), "linear_average": self.linear_average, "history": self.history.to_json()}
        self.average_policy().save(path, extra_arrays={"solver_regrets": self.regrets,
                                                       "solver_strategy_sum": self.strategy_sum},
                                   extra_header={"solver": solver})

    @classmethod
    def load(cls, path: str, game: "str | Game | CompiledGame | None" = None) -> "CFRSolver":
        """Resume a solver saved by :meth:`save` (raises PolicyFileError for a damaged or foreign file)."""
        header, arrays = load_npz_checked(path, POLICY_MAGIC, ("solver_regrets", "solver_strategy_sum"))
        info = header.get("solver")
        if not isinstance(info, dict) or info.get("algorithm") not in ALGORITHMS:
            raise PolicyFileError(f"{path}: holds no compiled-tree CFR solver state")
        stored_game = header.get("game")
        if not isinstance(stored_game, str):
            raise PolicyFileError(f"{path}: corrupted header (no game string)")
        if isinstance(game, CompiledGame):
            tree = game
        elif game is not None:
            tree = compile_game(game)  # also a game object of the user's own (not registered)
        else:
            try:
                tree = compile_game(stored_game)
            except GameError as exc:
                raise PolicyFileError(f"{path}: corrupted header (game {stored_game!r}: {exc})") from None
        if tree.game_string != stored_game and tree.game_string != sequential_game_string(stored_game):
            raise PolicyFileError(f"{path}: checkpoint is for {stored_game!r}, not {tree.game_string!r}")
        regrets = check_array(path, arrays, "solver_regrets", "f", 1, finite=True)
        sums = check_array(path, arrays, "solver_strategy_sum", "f", 1, finite=True)
        try:
            solver = cls(tree, algorithm=info["algorithm"], alternating=bool(info["alternating"]),
                         alpha=float(info["alpha"]), beta=float(info["beta"]), gamma=float(info["gamma"]),
                         linear_average=bool(info.get("linear_average", False)))
            iterations = int(info["iterations"])
            seconds = float(info.get("seconds", 0.0))
            history = SolverHistory.from_json(info.get("history"))
        except (KeyError, TypeError, ValueError, OverflowError, IndexError) as exc:
            raise PolicyFileError(f"{path}: corrupted solver header ({type(exc).__name__}: {exc})") from None
        if iterations < 0 or not all(np.isfinite([solver.alpha, solver.beta, solver.gamma, seconds])):
            raise PolicyFileError(f"{path}: corrupted solver header (iterations {iterations})")
        if regrets.shape != solver.regrets.shape or sums.shape != solver.regrets.shape:
            raise PolicyFileError(f"{path}: checkpoint arrays do not match the game tree (corrupted file)")
        solver.regrets[:] = regrets
        solver.strategy_sum[:] = sums
        solver.iterations = iterations
        solver.seconds = seconds
        solver.history = history
        _kernels().regret_matching(solver.regrets, tree.infoset_offset, tree.infoset_player, -1, solver.sigma)
        return solver
