"""Building card abstractions: features per board, k-means per round, bucket tables.

Rounds are built from the last to the first (potential-aware buckets need the next round's).  Per
clustered round: (1) features of a seeded sample of boards (all hands of each board at once),
weighted by the raw boards each canonical board stands for; (2) k-means on the sample; (3) a
streaming pass over every board set assigns every hand of the round to its nearest centre and
writes the bucket under each of the board's orderings into a memory-mapped table -- in parallel
over processes (workers write into the table file) or over a Ray cluster (tasks return their
entries).  The manifest is updated after each round, so a killed build resumes at the first
unfinished round.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Dict, Iterable, Optional, Sequence

import numpy as np

from cfrkit.abstraction.card_abstraction import KIND, MANIFEST, CardAbstraction, load_abstraction, read_manifest, table_path
from cfrkit.abstraction.clustering import (L2Centres, PotentialSpace, assign_emd1d, assign_l2, assign_pa_emd, histogram_cdfs,
                                           kmeans_emd1d, kmeans_l2, kmeans_pa_emd, prepare_pa_centres)
from cfrkit.abstraction.enumerate import board_sets, hand_indices, round_hands
from cfrkit.abstraction.errors import AbstractionError
from cfrkit.abstraction.params import BOARD_CARDS, DEFAULT_FEATURES, ROUND_NAMES, AbstractionParams, check_params
from cfrkit.abstraction import features as F
from cfrkit._io import atomic_open
from cfrkit.abstraction.tables import create_table, finish_table, write_table


def _atomic_json(path: str, obj) -> None:
    with atomic_open(path, "w") as fh:
        json.dump(obj, fh, indent=1, sort_keys=True)


def _atomic_npy(path: str, arr) -> None:
    with atomic_open(path, "wb") as fh:
        np.save(fh, arr)


# ------------------------------------------------------------------------------ per-board features

class RoundFeatures:
    """The features of one round and the matching assignment (shared by builder and workers)."""

    def __init__(self, params: AbstractionParams, round_: int, directory: str):
        self.params = params
        self.round = round_
        self.feature = params.features[round_]
        self.directory = directory
        self.ctx = F.DeckContext(params)
        if os.path.exists(os.path.join(directory, "ochs_ranges.npy")):
            self.ctx.ochs_ranges = np.load(os.path.join(directory, "ochs_ranges.npy"))
        self.next = None
        self.space = None
        if self.feature == "pa-emd":
            self.next = CardAbstraction(directory, params, verify=False, rounds={round_ + 1})
            self.space = potential_space(params, round_, self.next.centres(round_ + 1))
        self.centres = None
        self._prepared = None

    def of_board(self, board: np.ndarray):
        """(live pairs int64[n], features of those pairs)."""
        live = np.flatnonzero(self.ctx.live(board))
        if self.feature == "ehs":
            X = F.expected_strength(self.ctx, board)[live, None].astype(np.float32)
        elif self.feature == "ochs":
            X = F.ochs(self.ctx, board)[live]
        elif self.feature == "hist-emd":
            X = histogram_cdfs(F.next_round_histogram(self.ctx, self.round, board)[live])
        elif self.feature == "pa-emd":
            X = F.next_round_buckets(self.ctx, self.round, board, self.next).T[live].astype(np.int32)
        else:  # pragma: no cover - checked by check_params
            raise AbstractionError(f"no features for {self.feature}")
        return live, X

    def cluster(self, X, weights, k, seed, progress=False):
        if self.feature in ("ehs", "ochs"):
            labels, C, stats = kmeans_l2(X, k, weights, seed)
        elif self.feature == "hist-emd":
            labels, C, stats = kmeans_emd1d(X, k, weights, seed)
        else:
            def report(st):
                print(f"{ROUND_NAMES[self.round]}: k-means iteration {st['iteration']}: {st['changed']:,} hands moved, "
                      f"{st['distances']:,.0f} EMDs ({1 - st['distances'] / st['naive_distances']:.1%} skipped), "
                      f"{st['cpu_seconds']:.0f} CPU s", flush=True)

            labels, C, stats = kmeans_pa_emd(X, self.space, k, weights, seed, on_iteration=report if progress else None)
        self.centres = C
        return labels, C, stats

    def assign(self, X):
        """(labels int32[n], distance computations)."""
        if self.feature in ("ehs", "ochs"):
            if self._prepared is None:
                self._prepared = L2Centres(self.centres)
            return assign_l2(X, self.centres, self._prepared, counts=True)
        if self.feature == "hist-emd":
            return assign_emd1d(X, self.centres)
        if self._prepared is None:
            self._prepared = prepare_pa_centres(self.space, self.centres)
        return assign_pa_emd(X, self.space, self.centres, self._prepared)


def potential_space(params: AbstractionParams, round_: int, next_centres: np.ndarray) -> PotentialSpace:
    """Ground space of potential-aware buckets: the next round's centres as points (cdfs / bins
    under L1 for histogram buckets, vectors under L2 otherwise)."""
    nf = params.features[round_ + 1]
    if nf == "hist-emd":
        return PotentialSpace(np.asarray(next_centres) / params.hist_bins, norm=1, max_candidates=params.pa_candidates)
    if nf in ("ehs", "ochs"):
        return PotentialSpace(next_centres, norm=2, max_candidates=params.pa_candidates)
    raise AbstractionError(f"potential-aware buckets need ehs, hist-emd or ochs buckets on the next round, "
                           f"not {nf}")


# -------------------------------------------------------------------------------- workers

_W: Dict[str, object] = {}


def _worker_init(params_json, round_, directory, tmp_path, entries, centres):
    params = AbstractionParams.from_dict(json.loads(params_json))
    rf = RoundFeatures(params, round_, directory)
    rf.centres = centres
    _W.update(rf=rf, table=np.memmap(tmp_path, dtype="<u2", mode="r+", offset=8 + 4096, shape=(entries,))
              if tmp_path else None,
              imap=np.load(os.path.join(directory, f"round{round_}_index.npy")) if not params.full_deck else None)


def assign_boards(rf: RoundFeatures, boards: np.ndarray, imap):
    """Entries (table positions, buckets) of every hand of every ordering of the boards.

    ``rf``: the round's features and centres; ``boards``: uint8[B, k] board card sets of the round;
    ``imap``: sorted isomorphism indices of the table (None for a full-deck table).  Returns (positions
    int64[E], buckets uint16[E], distances computed)."""
    pos_all, lab_all, computed = [], [], 0
    for board in boards:
        live, X = rf.of_board(board)
        labels, c = rf.assign(X)
        computed += c
        idx = hand_indices(rf.round, board, live)
        if imap is not None:
            idx = np.searchsorted(imap, idx)
        pos_all.append(idx.reshape(-1))
        lab_all.append(np.tile(labels, idx.shape[0]))
    return np.concatenate(pos_all), np.concatenate(lab_all).astype(np.uint16), computed


def _worker_chunk(boards):
    cpu = time.process_time()
    pos, lab, computed = assign_boards(_W["rf"], boards, _W["imap"])
    _W["table"][pos] = lab  # each hand class comes from one board: no two workers write one entry
    return len(boards), computed, time.process_time() - cpu


# ------------------------------------------------------------------------------------ builder

def build_abstraction(buckets: Sequence[int] = (169, 1000, 1000, 1000), out: str = "abstraction",
                      features: Optional[Sequence[str]] = None, seed: int = 0, workers: Optional[int] = None,
                      progress: bool = True, ray_address: Optional[str] = None, board_fraction: float = 1.0,
                      **kwargs) -> CardAbstraction:
    """Build (or resume) a card abstraction in directory ``out`` and return it loaded.

    buckets: per round (preflop, flop, turn, river; fewer for games with fewer rounds);
    features: per round, one of ``lossless, ehs, hist-emd, pa-emd, ochs`` (default: lossless preflop,
    potential-aware flop, histogram-EMD turn, OCHS river, cut to the number of rounds); other keyword
    arguments are :class:`AbstractionParams` fields (num_ranks, num_suits, hist_bins, ochs_clusters,
    sample, river_storage).  workers: processes (default: all cores); ray_address: run the
    assignment pass as Ray tasks ("local" starts a local Ray).  ``board_fraction`` < 1 assigns only
    that fraction of the boards (timing runs; the result is marked incomplete and cannot be loaded).

    A directory holding an abstraction with other parameters is refused (nothing overwritten);
    one with the same parameters resumes at its first unfinished round.
    """
    buckets = tuple(int(b) for b in buckets)
    if features is None:
        features = DEFAULT_FEATURES[:1] + DEFAULT_FEATURES[1:][-(len(buckets) - 1):] if len(buckets) > 1 else ("lossless",)
        if len(buckets) == 2:
            features = ("lossless", "ochs")
        if len(buckets) == 3:
            features = ("lossless", "hist-emd", "ochs")
    params = check_params(AbstractionParams(buckets=buckets, features=tuple(features), seed=int(seed), **kwargs))
    man_path = os.path.join(out, MANIFEST)
    if os.path.isdir(out) and os.listdir(out) and not os.path.exists(man_path):
        raise AbstractionError(f"{out} is not empty and holds no card abstraction ({MANIFEST} missing); "
                               f"choose a new or empty directory")
    os.makedirs(out, exist_ok=True)
    if os.path.exists(man_path):
        man = read_manifest(out)
        if AbstractionParams.from_dict(man["params"]) != params:
            raise AbstractionError(f"{out} holds an abstraction built with other parameters "
                                   f"({json.dumps(man['params'], sort_keys=True)}); choose another directory")
    else:
        man = {"kind": KIND, "version": 1, "params": params.to_dict(), "complete": False, "rounds_done": [],
               "rounds": {}}
        _atomic_json(man_path, man)
    if man.get("complete") and board_fraction >= 1.0:
        return load_abstraction(out, params)
    workers = workers or os.cpu_count() or 1
    ctx = F.DeckContext(params)
    if "ochs" in params.features and not os.path.exists(os.path.join(out, "ochs_ranges.npy")):
        _atomic_npy(os.path.join(out, "ochs_ranges.npy"),
                    F.preflop_opponent_clusters(ctx, params.ochs_clusters, params.seed))
    for r in reversed(range(params.num_rounds)):
        if r in man["rounds_done"]:
            continue
        t0 = time.time()
        stats = _build_round(params, r, out, workers, progress, ray_address, board_fraction)
        stats["seconds"] = time.time() - t0
        stats["peak_rss_mb"] = _peak_rss_mb()
        if board_fraction < 1.0:
            man["rounds"][str(r)] = stats
            _atomic_json(man_path, man)
            return stats  # timing run: stop after one round
        man["rounds_done"].append(r)
        man["rounds"][str(r)] = stats
        _atomic_json(man_path, man)
    man["complete"] = True
    _atomic_json(man_path, man)
    return load_abstraction(out, params)


def _peak_rss_mb() -> float:
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return float(max(own, kids))


def _bar(total, desc, progress):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="board", disable=not progress, smoothing=0.05)


def _build_round(params, r, out, workers, progress, ray_address, board_fraction) -> Dict[str, object]:
    name = ROUND_NAMES[r]
    header = {"round": r, "params": params.to_dict(), "num_buckets": params.buckets[r], "seed": params.seed}
    imap = None
    if not params.full_deck:
        _, idx, _ = round_hands(r, params.num_ranks, params.num_suits)
        imap = np.unique(idx)
        _atomic_npy(os.path.join(out, f"round{r}_index.npy"), imap)
    if params.features[r] == "lossless":
        from cfrkit.cards.isomorphism import holdem_indexer

        if imap is None:
            n = holdem_indexer().size(r)
            data = np.arange(n, dtype=np.uint16)
        else:
            n = imap.size
            data = np.arange(n, dtype=np.uint16)
        if n != params.buckets[r]:
            raise AbstractionError(f"lossless {name} buckets must number {n} on this deck, got {params.buckets[r]}")
        write_table(table_path(out, r), data, header)
        return {"entries": int(n), "feature": "lossless"}

    rf = RoundFeatures(params, r, out)
    sets, weights = board_sets(BOARD_CARDS[r], params.num_ranks, params.num_suits)
    rng = np.random.default_rng(params.seed + 1000 * (r + 1))
    # 1. features of a sample of boards
    per_board = max(1, int(rf.ctx.deck_mask.sum()))
    n_boards = min(len(sets), max(1, -(-params.sample // per_board)))
    pick = np.sort(rng.choice(len(sets), size=n_boards, replace=False))
    feats, wts = [], []
    t0 = time.time()
    c0 = time.process_time()
    bar = _bar(n_boards, f"{name}: sample features", progress)
    for b in pick:
        live, X = rf.of_board(sets[b])
        feats.append(X)
        wts.append(np.full(len(live), float(weights[b])))
        bar.update(1)
    bar.close()
    X = np.concatenate(feats)
    W = np.concatenate(wts)
    t_feat = time.time() - t0
    cpu_feat = time.process_time() - c0
    # 2. k-means
    t0 = time.time()
    c0 = time.process_time()
    if progress:
        print(f"{name}: k-means of {len(X):,} hands into {params.buckets[r]} buckets ({params.features[r]})", flush=True)
    _, C, kstats = rf.cluster(X, W, params.buckets[r], params.seed, progress)
    t_km = time.time() - t0
    cpu_km = time.process_time() - c0
    _atomic_npy(os.path.join(out, f"round{r}_centres.npy"), C)
    stats = {"feature": params.features[r], "sample_boards": int(n_boards), "sample_hands": int(len(X)),
             "sample_feature_seconds": t_feat, "kmeans_seconds": t_km,
             "sample_feature_cpu_seconds": cpu_feat, "kmeans_cpu_seconds": cpu_km,
             "kmeans": {k: float(v) for k, v in kstats.items()}, "buckets_used": int(len(C))}
    if len(C) < params.buckets[r]:
        raise AbstractionError(f"the {name} has only {len(C)} distinct feature vectors in the sample; "
                               f"ask for at most {len(C)} buckets")
    if params.storage(r) == "centres":
        return stats
    # 3. assign every hand of every board
    from cfrkit.cards.isomorphism import holdem_indexer

    entries = int(imap.size if imap is not None else holdem_indexer().size(r))
    order = np.arange(len(sets))
    if board_fraction < 1.0:
        order = np.sort(rng.choice(len(sets), size=max(1, int(board_fraction * len(sets))), replace=False))
    t0 = time.time()
    computed = 0
    cpu_assign = 0.0
    chunk = max(1, min(64, len(order) // (8 * workers) or 1))
    chunks = [sets[order[i:i + chunk]] for i in range(0, len(order), chunk)]
    bar = _bar(len(order), f"{name}: assign", progress)
    arr, tmp = create_table(table_path(out, r), entries)
    try:
        if ray_address:
            computed = _assign_ray(params, r, out, C, chunks, arr, imap, ray_address, bar)
        elif workers <= 1:
            rf.centres = C
            for ch in chunks:
                c0 = time.process_time()
                pos, lab, c = assign_boards(rf, ch, imap)
                arr[pos] = lab
                computed += c
                cpu_assign += time.process_time() - c0
                bar.update(len(ch))
        else:
            arr.flush()
            # an executor, not mp.Pool: a worker that dies (killed, out of memory) breaks the pool with an error
            # instead of leaving the build waiting forever for its chunk
            with ProcessPoolExecutor(workers, mp_context=mp.get_context("fork"), initializer=_worker_init,
                                     initargs=(params.to_json(), r, out, tmp, entries, C)) as pool:
                try:
                    for fut in as_completed([pool.submit(_worker_chunk, ch) for ch in chunks]):
                        nb, c, cpu = fut.result()
                        computed += c
                        cpu_assign += cpu
                        bar.update(nb)
                except BrokenProcessPool:
                    raise AbstractionError(f"the {name} assignment lost a worker process (killed or out of memory); "
                                           f"run the build again to resume") from None
            arr = np.memmap(tmp, dtype="<u2", mode="r+", offset=8 + 4096, shape=(entries,))
        bar.close()
        t_assign = time.time() - t0
        stats.update({"assign_seconds": t_assign, "assign_cpu_seconds": cpu_assign, "assigned_boards": int(len(order)), "boards": int(len(sets)),
                      "assign_distances": float(computed), "entries": entries})
        if board_fraction < 1.0:
            del arr
            os.remove(tmp)
            return stats
        missing = int(np.count_nonzero(np.asarray(arr) == 0xFFFF))
        if missing:
            raise AbstractionError(f"the {name} table has {missing} entries without a bucket (enumeration bug)")
        finish_table(arr, tmp, table_path(out, r), header)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return stats


def _assign_ray(params, r, out, C, chunks, arr, imap, address, bar) -> int:
    """Assignment pass as Ray tasks returning (positions, buckets); the driver writes the table.
    Workers on other machines need ``out`` on a shared filesystem (next-round tables, OCHS ranges)."""
    import ray

    if not ray.is_initialized():
        if address == "local":
            ray.init(num_cpus=max(1, os.cpu_count() or 1), include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address)

    @ray.remote
    def task(params_json, boards, centres):
        p = AbstractionParams.from_dict(json.loads(params_json))
        rf = RoundFeatures(p, r, out)
        rf.centres = centres
        im = np.load(os.path.join(out, f"round{r}_index.npy")) if not p.full_deck else None
        return assign_boards(rf, boards, im)

    cref = ray.put(C)
    pending = [task.remote(params.to_json(), ch, cref) for ch in chunks]
    sizes = {p.hex(): len(ch) for p, ch in zip(pending, chunks)}
    computed = 0
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        pos, lab, c = ray.get(done[0])
        arr[pos] = lab
        computed += c
        bar.update(sizes[done[0].hex()])
    return computed


def default_abstraction(progress: bool = True) -> CardAbstraction:
    """A small hold'em abstraction (169 / 50 / 50 / 50 buckets: lossless preflop, histogram-EMD flop
    and turn, OCHS river stored as centres), built on first use in a few minutes and cached under
    ``$CFRKIT_CACHE`` (default ``~/.cache/cfrkit``)/abstraction/default-v1."""
    cache = os.environ.get("CFRKIT_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "cfrkit"))
    out = os.path.join(cache, "abstraction", "default-v1")
    return build_abstraction((169, 50, 50, 50), out, features=("lossless", "hist-emd", "hist-emd", "ochs"),
                             seed=0, sample=50_000, river_storage="centres", progress=progress,
                             pa_candidates=32)  # unused by these features; the value the cache was built with
