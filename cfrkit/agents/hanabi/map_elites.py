"""MAP-Elites generator of diverse rule-based Hanabi agents (Canaan, Togelius, Nealen, Menzel 2019).

* Individual: a chromosome of ``chromosome_length`` (15) indices into the rule base
  (:data:`cfrkit.agents.hanabi.rules.RULE_BASE`, 135 rules; ``num_rules`` = 84 reproduces runs made
  with the earlier base, whose rules keep their indices); the agent plays the first rule that fires.
* Behaviour: communicativeness ``c`` = hints given / own turns with an information token available;
  risk aversion ``r`` = mean over own plays of P(the played card is playable) from the player's grounded
  view (hints and visible cards, no model of the partner); an agent that never plays gets ``r = 0``.
  Both in [0, 1], split into ``bins`` (20) intervals: niche ``(min(int(c * bins), bins - 1), same for r)``.
* Fitness: mean self-play score over ``games_per_eval`` (100) games of ``players`` (2) copies, lost games
  counting their played cards (``scoring="played_cards"``, the paper's framework).
* Search: ``initial_random`` (10^4) random chromosomes, then children of the elite of a uniformly random
  occupied niche: uniform crossover (probability ``crossover_rate`` = 0.5, each gene from either parent,
  the other parent the elite of another random niche), then mutation (each gene replaced by a random rule
  with probability ``mutation_rate`` = 0.1).  When a child lands in an occupied niche the elite is
  re-evaluated on fresh games and the better of the two keeps the niche (with its latest fitness).

Every random draw comes from ``(seed, batch)`` or ``(seed, individual)`` so a run is reproducible
whatever the number of worker processes, and a checkpoint taken between batches resumes exactly.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from cfrkit._kernels import hanabi_engine as _engine
from cfrkit.agents.hanabi.rules import NUM_RULES, rule_table

CHECKPOINT_MAGIC = "cfrkit-hanabi-map-elites"


@dataclass
class MapElitesConfig:
    """Parameters of a MAP-Elites run (defaults: the paper's)."""

    players: int = 2
    chromosome_length: int = 15
    bins: int = 20
    individuals: int = 1_000_000
    initial_random: int = 10_000
    games_per_eval: int = 100
    mutation_rate: float = 0.1
    crossover_rate: float = 0.5
    scoring: str = "played_cards"
    seed: int = 0
    batch_size: int = 256
    num_rules: int = NUM_RULES

    def validate(self) -> None:
        if not 2 <= self.players <= 5:
            raise ValueError(f"players must be in [2, 5], got {self.players}")
        for name in ("chromosome_length", "bins", "individuals", "games_per_eval", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.initial_random < 1:
            raise ValueError(f"initial_random must be >= 1, got {self.initial_random}")
        for name in ("mutation_rate", "crossover_rate"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.scoring not in ("played_cards", "zero_on_loss"):
            raise ValueError(f"scoring must be played_cards or zero_on_loss, got {self.scoring!r}")
        # runs made with the earlier 84-rule base resume with it: its rules keep their indices in this one
        if not 1 <= self.num_rules <= NUM_RULES:
            raise ValueError(f"run was made with a rule base of {self.num_rules} rules; this cfrkit has {NUM_RULES}")

    def engine_config(self):
        return _engine.EngineConfig(players=self.players, played_cards_scoring=self.scoring == "played_cards")


@dataclass
class Evaluation:
    fitness: float
    communicativeness: float
    risk_aversion: float


def evaluate(chromosome: np.ndarray, players: int, games: int, seed: int, scoring: str = "played_cards",
             engine_config=None) -> Evaluation:
    """Self-play fitness and behaviour descriptors of one chromosome over ``games`` games."""
    cfg = engine_config or _engine.EngineConfig(players=players, played_cards_scoring=scoring == "played_cards")
    rules = np.tile(np.asarray(chromosome, dtype=np.intc), (players, 1))
    scores, _, stats = _engine.play_games(cfg, rule_table(), rules, games, seed)
    turns, hint_turns, hints, plays, risk = stats.sum(axis=0)
    comm = hints / hint_turns if hint_turns > 0 else 0.0
    risk_aversion = risk / plays if plays > 0 else 0.0
    return Evaluation(float(scores.mean()), float(comm), float(risk_aversion))


def niche_of(communicativeness: float, risk_aversion: float, bins: int) -> Tuple[int, int]:
    """Niche (row = communicativeness bin, column = risk-aversion bin)."""
    return (min(int(communicativeness * bins), bins - 1), min(int(risk_aversion * bins), bins - 1))


def _seed(*parts: int) -> int:
    return int(np.random.SeedSequence([int(p) & 0xFFFFFFFF for p in parts]).generate_state(2, np.uint64)[0] >> 1)


@dataclass
class Archive:
    """The map: one elite per niche (``fitness`` is NaN where empty)."""

    bins: int
    chromosome_length: int
    fitness: np.ndarray = field(default=None)
    chromosomes: np.ndarray = field(default=None)
    features: np.ndarray = field(default=None)
    evaluations: np.ndarray = field(default=None)  # times each elite has been evaluated

    def __post_init__(self):
        b, L = self.bins, self.chromosome_length
        if self.fitness is None:
            self.fitness = np.full((b, b), np.nan)
        if self.chromosomes is None:
            self.chromosomes = np.zeros((b, b, L), dtype=np.int32)
        if self.features is None:
            self.features = np.zeros((b, b, 2))
        if self.evaluations is None:
            self.evaluations = np.zeros((b, b), dtype=np.int64)

    def occupied(self) -> List[Tuple[int, int]]:
        return [tuple(x) for x in np.argwhere(~np.isnan(self.fitness))]

    def coverage(self) -> int:
        """Niches whose elite scores above zero (the paper's coverage)."""
        return int(np.sum(np.nan_to_num(self.fitness, nan=0.0) > 0))

    def summary(self) -> Dict[str, object]:
        covered = np.nan_to_num(self.fitness, nan=0.0) > 0
        best = np.unravel_index(np.nanargmax(self.fitness), self.fitness.shape) if self.occupied() else None
        return {
            "occupied": len(self.occupied()),
            "coverage": int(covered.sum()),
            "mean_score_covered": float(self.fitness[covered].mean()) if covered.any() else 0.0,
            "mean_score_all_niches": float(np.nan_to_num(self.fitness, nan=0.0).mean()),
            "best_score": float(self.fitness[best]) if best is not None else 0.0,
            "best_niche": [round(float(best[0]) / self.bins, 4), round(float(best[1]) / self.bins, 4)] if best is not None else None,
            "best_chromosome": self.chromosomes[best].tolist() if best is not None else None,
        }


class MapElites:
    """A resumable MAP-Elites run; call :meth:`run` (it checkpoints to ``checkpoint`` when given)."""

    def __init__(self, config: MapElitesConfig, checkpoint: Optional[str] = None, workers: int = 1):
        config.validate()
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.config = config
        self.checkpoint = checkpoint
        self.workers = workers
        self.archive = Archive(config.bins, config.chromosome_length)
        self.generated = 0
        self.batches = 0
        self.elapsed = 0.0
        self.history: List[Tuple[int, int, float]] = []  # (generated, coverage, best)
        self._engine_config = config.engine_config()

    # ------------------------------------------------------------------ checkpoints
    def save(self, path: Optional[str] = None) -> None:
        from cfrkit.policy import save_npz_atomic

        path = path or self.checkpoint
        if not path:
            raise ValueError("no checkpoint path")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        header = {"magic": CHECKPOINT_MAGIC, "version": 1, "config": asdict(self.config), "generated": self.generated,
                  "batches": self.batches, "elapsed": self.elapsed}
        save_npz_atomic(path, header, fitness=self.archive.fitness, chromosomes=self.archive.chromosomes,
                        features=self.archive.features, evaluations=self.archive.evaluations,
                        history=np.asarray(self.history, dtype=np.float64).reshape(-1, 3))

    @classmethod
    def load(cls, path: str, workers: int = 1) -> "MapElites":
        """Resume a run saved by :meth:`save`; :class:`~cfrkit.policy.PolicyFileError` for a damaged file."""
        from cfrkit.policy import PolicyFileError, check_array, load_npz_checked

        header, arrays = load_npz_checked(path, CHECKPOINT_MAGIC, ["fitness", "chromosomes", "features", "evaluations"])
        try:
            config = MapElitesConfig(**header["config"])
            config.validate()
            b, L = config.bins, config.chromosome_length
            fitness = check_array(path, arrays, "fitness", "f", 2)
            chromosomes = check_array(path, arrays, "chromosomes", "iu", 3)
            features = check_array(path, arrays, "features", "f", 3, finite=True)
            evaluations = check_array(path, arrays, "evaluations", "iu", 2)
            history = arrays.get("history", np.zeros((0, 3)))
            if (fitness.shape != (b, b) or chromosomes.shape != (b, b, L) or features.shape != (b, b, 2)
                    or evaluations.shape != (b, b) or history.ndim != 2 or history.shape[1] != 3):
                raise PolicyFileError(f"{path}: arrays do not match the run's configuration (corrupted file)")
            if np.isinf(fitness).any() or chromosomes.min() < 0 or chromosomes.max() >= config.num_rules:
                raise PolicyFileError(f"{path}: fitness or rule ids out of range (corrupted file)")
            run = cls(config, checkpoint=path, workers=workers)
            run.archive = Archive(b, L, fitness, chromosomes.astype(np.int32), features, evaluations)
            run.generated = int(header["generated"])
            run.batches = int(header["batches"])
            run.elapsed = float(header.get("elapsed", 0.0))
            run.history = [tuple(x) for x in history.tolist()]
        except PolicyFileError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise PolicyFileError(f"{path}: unusable MAP-Elites checkpoint ({type(exc).__name__}: {exc})") from None
        if run.generated < 0 or run.batches < 0:
            raise PolicyFileError(f"{path}: corrupted header (negative counts)")
        return run

    # ------------------------------------------------------------------ search
    def _children(self, count: int) -> np.ndarray:
        cfg = self.config
        rng = np.random.default_rng(_seed(cfg.seed, 1, self.batches))
        out = np.empty((count, cfg.chromosome_length), dtype=np.int32)
        occupied = self.archive.occupied()
        for i in range(count):
            index = self.generated + i
            if index < cfg.initial_random or not occupied:
                out[i] = rng.integers(0, cfg.num_rules, cfg.chromosome_length)
                continue
            parent = self.archive.chromosomes[occupied[rng.integers(len(occupied))]].copy()
            if rng.random() < cfg.crossover_rate:
                other = self.archive.chromosomes[occupied[rng.integers(len(occupied))]]
                take = rng.random(cfg.chromosome_length) < 0.5
                parent[take] = other[take]
            mutate = rng.random(cfg.chromosome_length) < cfg.mutation_rate
            parent[mutate] = rng.integers(0, cfg.num_rules, int(mutate.sum()))
            out[i] = parent
        return out

    def _insert(self, chromosome: np.ndarray, ev: Evaluation, index: int,
                precomputed: Optional[Tuple[np.ndarray, Evaluation]] = None) -> None:
        cfg = self.config
        niche = niche_of(ev.communicativeness, ev.risk_aversion, cfg.bins)
        arch = self.archive
        if not np.isnan(arch.fitness[niche]):
            if precomputed is not None and np.array_equal(precomputed[0], arch.chromosomes[niche]):
                elite = precomputed[1]   # the same elite, seed and games: what the line below would compute
            else:
                elite = evaluate(arch.chromosomes[niche], cfg.players, cfg.games_per_eval, _seed(cfg.seed, 3, index),
                                 cfg.scoring, self._engine_config)
            arch.fitness[niche] = elite.fitness
            arch.evaluations[niche] += 1
            if ev.fitness <= elite.fitness:
                return
        arch.fitness[niche] = ev.fitness
        arch.chromosomes[niche] = chromosome
        arch.features[niche] = (ev.communicativeness, ev.risk_aversion)
        arch.evaluations[niche] = 1

    def run(self, individuals: Optional[int] = None, time_limit: Optional[float] = None,
            checkpoint_every: float = 60.0, progress: bool = False,
            callback: Optional[Callable[["MapElites"], None]] = None,
            stop: Optional[Callable[[], bool]] = None) -> Archive:
        """Generate individuals until ``individuals`` (default: the config's total) or ``time_limit`` seconds,
        or until ``stop()`` returns true (polled between batches: the CLI's SIGINT/SIGTERM request).

        Checkpoints every ``checkpoint_every`` seconds and at the end (when a checkpoint path was given),
        also when stopped, so a resumed run loses nothing.
        """
        cfg = self.config
        target = min(individuals or cfg.individuals, cfg.individuals)
        start = time.time()
        last_save = start
        self._clock = start
        pool = None
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=target, initial=self.generated, unit="ind", desc="MAP-Elites", dynamic_ncols=True)
        try:
            if self.workers > 1:
                from concurrent.futures import ProcessPoolExecutor

                pool = ProcessPoolExecutor(self.workers)
            while self.generated < target:
                if time_limit is not None and time.time() - start >= time_limit:
                    break
                if stop is not None and stop():
                    break
                count = min(cfg.batch_size, target - self.generated)
                children = self._children(count)
                seeds = [_seed(cfg.seed, 2, self.generated + i) for i in range(count)]
                if pool is not None:
                    chunks = np.array_split(np.arange(count), self.workers)
                    futures = [pool.submit(_evaluate_many, children[c], cfg.players, cfg.games_per_eval,
                                           [seeds[i] for i in c], cfg.scoring) for c in chunks if len(c)]
                    evals = [e for f in futures for e in f.result()]
                    precomputed = self._reevaluate_elites_parallel(pool, children, evals)
                else:
                    evals = _evaluate_many(children, cfg.players, cfg.games_per_eval, seeds, cfg.scoring)
                    precomputed = {}
                for i in range(count):
                    self._insert(children[i], evals[i], self.generated + i, precomputed.get(i))
                self.generated += count
                self.batches += 1
                best = float(np.nanmax(self.archive.fitness)) if self.archive.occupied() else 0.0
                self.history.append((self.generated, self.archive.coverage(), best))
                if bar is not None:
                    bar.update(count)
                    bar.set_postfix(coverage=self.archive.coverage(), best=f"{best:.2f}")
                if callback is not None:
                    callback(self)
                now = time.time()
                if self.checkpoint and now - last_save >= checkpoint_every:
                    self._save_timed(start)
                    last_save = now
        finally:
            if pool is not None:
                pool.shutdown()
            if bar is not None:
                bar.close()
        self._save_timed(start)
        return self.archive

    def _reevaluate_elites_parallel(self, pool, children, evals) -> Dict[int, Tuple[np.ndarray, Evaluation]]:
        """Re-evaluate, on the workers, the elite each child of the batch will challenge.

        Evaluated against the archive as it is before the batch, with the seed :meth:`_insert` uses;
        ``_insert`` takes the result only while that niche still holds the same elite (a child earlier
        in the batch may have replaced it), so the run is identical to the serial one.
        """
        cfg = self.config
        arch = self.archive
        jobs = []
        for i, ev in enumerate(evals):
            niche = niche_of(ev.communicativeness, ev.risk_aversion, cfg.bins)
            if not np.isnan(arch.fitness[niche]):
                jobs.append((i, arch.chromosomes[niche].copy()))
        if not jobs:
            return {}
        chromosomes = np.array([c for _, c in jobs])
        seeds = [_seed(cfg.seed, 3, self.generated + i) for i, _ in jobs]
        chunks = np.array_split(np.arange(len(jobs)), self.workers)
        futures = [pool.submit(_evaluate_many, chromosomes[c], cfg.players, cfg.games_per_eval,
                               [seeds[k] for k in c], cfg.scoring) for c in chunks if len(c)]
        results = [e for f in futures for e in f.result()]
        return {i: (c, r) for (i, c), r in zip(jobs, results)}

    def _save_timed(self, start: float) -> None:
        now = time.time()
        self.elapsed += now - self._clock
        self._clock = now
        if self.checkpoint:
            self.save()

    def reevaluate(self, games: int = 1000, seed: Optional[int] = None) -> np.ndarray:
        """Fitness of every elite over ``games`` fresh games (the paper's final 1000-game map)."""
        cfg = self.config
        seed = cfg.seed if seed is None else seed
        out = np.full_like(self.archive.fitness, np.nan)
        for niche in self.archive.occupied():
            out[niche] = evaluate(self.archive.chromosomes[niche], cfg.players, games,
                                  _seed(seed, 4, niche[0], niche[1]), cfg.scoring, self._engine_config).fitness
        return out


def _evaluate_many(chromosomes, players, games, seeds, scoring) -> List[Evaluation]:
    cfg = _engine.EngineConfig(players=players, played_cards_scoring=scoring == "played_cards")
    return [evaluate(c, players, games, s, scoring, cfg) for c, s in zip(chromosomes, seeds)]


def save_summary(path: str, run: MapElites, extra: Optional[Dict[str, object]] = None) -> Dict[str, object]:
    """Write the run's summary (coverage, mean, best...) as JSON and return it."""
    summary = dict(run.archive.summary())
    summary.update(individuals=run.generated, config=asdict(run.config), seconds=round(run.elapsed, 1))
    if extra:
        summary.update(extra)
    with open(path, "w") as f:
        json.dump(summary, f, indent=2)
    return summary
