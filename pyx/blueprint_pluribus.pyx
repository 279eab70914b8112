# cython: language_level=3, boundscheck=False, wraparound=False
"""External-sampling MCCFR at Pluribus' recipe over the abstract heads-up no-limit betting tree.

Same tree layout and regret layout (``slot[n] + bucket * num_children[n] + action``) as
``blueprint_mccfr.pyx``; what differs:

* **compact regrets**: regrets are int32 chips (rounded to the nearest chip, clamped to
  ``[regret_floor, regret_ceiling]``) when ``iregrets`` is given, float32 otherwise (the reference
  for tests);
* **partial averaging**: the opponent's strategy sum is kept only at nodes with ``avg_slot[n] >= 0``
  (Pluribus: the first betting round), in a separate compact array at ``avg_slot[n] + bucket * A``;
  other rounds are played from the current strategy (regret matching of the final regrets);
* **unit increments**: the strategy sum gets ``sigma`` (weight 1); linear weighting comes from the
  periodic discount of regrets and sums (:func:`discount_int32`, :func:`discount_float32`), as in
  Linear CFR / Pluribus' first phase;
* **no GIL**: several threads may call :func:`iterate_board` on the same arrays at once
  (Hogwild-style: a read-modify-write of one entry may lose a concurrent update; int32 / float32
  loads and stores are atomic on the platforms we build for, so values are never torn).

Pruning (Pluribus' form): in a traversal that prunes (probability ``prune_probability``), a traverser
action whose regret is below ``prune_threshold`` is skipped unless it is on the river or leads to a
terminal; skipped actions keep their regrets.

Random numbers are xoshiro256** seeded from ``seed`` (a run is a function of its seeds on one thread).
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint64_t
from libc.stdlib cimport malloc, free
from libc.math cimport floor

cdef struct Ctx:
    const signed char* kind
    const signed char* player
    const signed char* rnd
    const int* child_start
    const int* num_children
    const long long* spent
    const long long* slot
    const long long* avg_slot
    int buckets[2][4]
    int winner
    int traverser
    int prune
    double prune_threshold
    double regret_floor
    double regret_ceiling
    float* fregrets        # float32 regrets, or NULL
    int* iregrets          # int32 regrets, or NULL
    float* strategy_sum    # compact sums of the averaged nodes
    double* work
    int max_actions
    uint64_t s[4]
    long long visited


include "xoshiro256.pxi"


cdef inline double _get(Ctx* c, long long i) noexcept nogil:
    if c.iregrets != NULL:
        return <double>c.iregrets[i]
    return <double>c.fregrets[i]


cdef inline void _set(Ctx* c, long long i, double u) noexcept nogil:
    if u < c.regret_floor:
        u = c.regret_floor
    if u > c.regret_ceiling:
        u = c.regret_ceiling
    if c.iregrets != NULL:
        c.iregrets[i] = <int>floor(u + 0.5)
    else:
        c.fregrets[i] = <float>u


cdef inline void _match(Ctx* c, long long idx, int A, double* out) noexcept nogil:
    """out = regret matching of the regrets at idx (uniform when none is positive)."""
    cdef int a
    cdef double total = 0.0, x
    for a in range(A):
        x = _get(c, idx + a)
        out[a] = x if x > 0 else 0.0
        total += out[a]
    if total > 0:
        for a in range(A):
            out[a] /= total
    else:
        for a in range(A):
            out[a] = 1.0 / A


cdef double _walk(Ctx* c, int n, int depth) noexcept nogil:
    cdef int p = c.traverser
    cdef int k, a, A, child, r
    cdef long long idx, aidx
    cdef double v, u, acc
    cdef double* sig
    cdef double* vals
    c.visited += 1
    k = c.kind[n]
    if k == 1:
        if c.player[n] == p:
            return -<double>c.spent[2 * n + p]
        return <double>c.spent[2 * n + 1 - p]
    if k == 2:
        v = <double>c.spent[2 * n]
        if c.spent[2 * n + 1] < v:
            v = <double>c.spent[2 * n + 1]
        if c.winner < 0:
            return 0.0
        return v if c.winner == p else -v
    A = c.num_children[n]
    r = c.rnd[n]
    sig = c.work + <long long>depth * 2 * c.max_actions
    vals = sig + c.max_actions
    if c.player[n] == p:
        idx = c.slot[n] + <long long>c.buckets[p][r] * A
        _match(c, idx, A, sig)
        v = 0.0
        for a in range(A):
            child = c.child_start[n] + a
            if c.prune and r < 3 and c.kind[child] == 0 and _get(c, idx + a) < c.prune_threshold:
                vals[a] = 1e300  # marks a skipped action
                continue
            vals[a] = _walk(c, child, depth + 1)
            v += sig[a] * vals[a]
        for a in range(A):
            if vals[a] == 1e300:
                continue
            _set(c, idx + a, _get(c, idx + a) + (vals[a] - v))
        return v
    idx = c.slot[n] + <long long>c.buckets[1 - p][r] * A
    _match(c, idx, A, sig)
    if c.avg_slot[n] >= 0:
        aidx = c.avg_slot[n] + <long long>c.buckets[1 - p][r] * A
        for a in range(A):
            c.strategy_sum[aidx + a] += <float>sig[a]
    u = _uniform(c)
    acc = 0.0
    child = A - 1
    for a in range(A):
        acc += sig[a]
        if u < acc:
            child = a
            break
    return _walk(c, c.child_start[n] + child, depth + 1)


def iterate_board(const signed char[::1] kind, const signed char[::1] player, const signed char[::1] rnd,
                  const int[::1] child_start, const int[::1] num_children, const long long[:, ::1] spent,
                  const long long[::1] slot, const long long[::1] avg_slot, int max_actions, int max_depth,
                  const int[:, ::1] bucket, const int[::1] strength, const int[:, ::1] deals,
                  regrets, float[::1] strategy_sum, unsigned long long seed,
                  double prune_probability, double prune_threshold, double regret_floor, double regret_ceiling,
                  double[::1] root_values=None):
    """External-sampling traversals of one board (module docstring); releases the GIL while it walks.

    ``bucket[4, 1326]``: each pair's bucket per round; ``strength[1326]``: river strength (higher wins);
    ``deals[K, 2]``: pair indices of seat 0 and 1.  ``regrets``: int32 or float32 vector (chips), updated in
    place; ``strategy_sum``: float32, the averaged nodes' sums (``avg_slot``).  For each deal traverser 0
    then 1.  ``root_values`` (float64[2]) receives the sums of the sampled root values (chips).  Returns the
    number of tree nodes visited.
    """
    cdef Ctx c
    cdef Py_ssize_t K = deals.shape[0], i
    cdef int p, r, h0, h1
    cdef double v
    cdef double sums[2]
    cdef int[::1] ir
    cdef float[::1] fr
    if K == 0:
        return 0
    c.iregrets = NULL
    c.fregrets = NULL
    if isinstance(regrets, np.ndarray) and regrets.dtype == np.int32:
        ir = regrets
        c.iregrets = &ir[0]
    elif isinstance(regrets, np.ndarray) and regrets.dtype == np.float32:
        fr = regrets
        c.fregrets = &fr[0]
    else:
        raise TypeError("regrets must be an int32 or float32 numpy vector")
    if strategy_sum.shape[0] == 0:
        raise ValueError("strategy_sum must hold at least one entry (pass a 1-entry array when nothing is averaged)")
    c.kind = &kind[0]
    c.player = &player[0]
    c.rnd = &rnd[0]
    c.child_start = &child_start[0]
    c.num_children = &num_children[0]
    c.spent = &spent[0, 0]
    c.slot = &slot[0]
    c.avg_slot = &avg_slot[0]
    c.strategy_sum = &strategy_sum[0]
    c.prune_threshold = prune_threshold
    c.regret_floor = regret_floor
    c.regret_ceiling = regret_ceiling
    c.max_actions = max_actions
    c.visited = 0
    sums[0] = 0.0
    sums[1] = 0.0
    _seed(&c, seed)
    c.work = <double*>malloc(sizeof(double) * 2 * max_actions * (max_depth + 2))
    if c.work == NULL:
        raise MemoryError("pluribus kernel workspace")
    with nogil:
        for i in range(K):
            h0 = deals[i, 0]
            h1 = deals[i, 1]
            for r in range(4):
                c.buckets[0][r] = bucket[r, h0]
                c.buckets[1][r] = bucket[r, h1]
            if strength[h0] > strength[h1]:
                c.winner = 0
            elif strength[h1] > strength[h0]:
                c.winner = 1
            else:
                c.winner = -1
            for p in range(2):
                c.traverser = p
                c.prune = 1 if (prune_probability > 0 and _uniform(&c) < prune_probability) else 0
                v = _walk(&c, 0, 0)
                sums[p] += v
    free(c.work)
    if root_values is not None:
        root_values[0] += sums[0]
        root_values[1] += sums[1]
    return c.visited


def discount_int32(int[::1] values, double factor):
    """values[i] = round(values[i] * factor) in place (Linear CFR's discount of int32 regrets)."""
    cdef Py_ssize_t i, n = values.shape[0]
    with nogil:
        for i in range(n):
            values[i] = <int>floor(values[i] * factor + 0.5)


def discount_float32(float[::1] values, double factor):
    """values[i] *= factor in place (float32 regrets or strategy sums)."""
    cdef Py_ssize_t i, n = values.shape[0]
    cdef float f = <float>factor
    with nogil:
        for i in range(n):
            values[i] = values[i] * f


def current_strategy_into(regrets, const signed char[::1] kind, const int[::1] num_children,
                          const long long[::1] slot, const long long[::1] avg_slot, const signed char[::1] rnd,
                          const int[::1] num_buckets, float[::1] out, Py_ssize_t start, Py_ssize_t stop):
    """Write the regret-matching strategy into ``out`` for entries ``[start, stop)`` of the regret layout, at
    the decision nodes that are not averaged (``avg_slot < 0``); other entries of ``out`` are left alone.

    ``out`` has ``stop - start`` entries (a chunk of the full strategy array, so that a file can be written
    without a second full-size array).  Probabilities, float32.
    """
    cdef Ctx c
    cdef Py_ssize_t n, N = kind.shape[0]
    cdef long long s0, e0, lo, hi, base, j
    cdef int A, b, a, B
    cdef double sig[256]
    cdef int[::1] ir
    cdef float[::1] fr
    c.iregrets = NULL
    c.fregrets = NULL
    if regrets.dtype == np.int32:
        ir = regrets
        c.iregrets = &ir[0]
    else:
        fr = regrets
        c.fregrets = &fr[0]
    with nogil:
        for n in range(N):
            if kind[n] != 0 or avg_slot[n] >= 0:
                continue
            A = num_children[n]
            B = num_buckets[rnd[n]]
            s0 = slot[n]
            e0 = s0 + <long long>A * B
            if e0 <= start or s0 >= stop:
                continue
            for b in range(B):
                base = s0 + <long long>b * A
                if base + A <= start or base >= stop:
                    continue
                _match(&c, base, A, sig)
                for a in range(A):
                    j = base + a
                    if start <= j < stop:
                        out[j - start] = <float>sig[a]
