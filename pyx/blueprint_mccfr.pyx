# cython: language_level=3
"""External-sampling MCCFR with regret-based pruning over the abstract heads-up no-limit betting tree.

The alternative traversal to ``blueprint_cfr.pyx`` (public chance sampling CFR+ with vectors over
hands), over the same compiled betting tree and the same regret / strategy-sum layout
(``slot[n] + bucket * num_children[n] + action``), so that one :class:`BlueprintStrategy` plays both.

One call runs the traversals of one sampled board: for each of its ``deals`` (two disjoint hole pairs,
seat 0's and seat 1's) it walks the tree once for traverser 0 and once for traverser 1.  At the
traverser's decisions every action is explored (external sampling), at the opponent's one action is
sampled from the current strategy (regret matching) and the opponent's strategy sum is incremented
by ``weight * sigma`` (linear averaging when ``weight`` is the iteration number).  Values are chips
at terminals (fold: the folder's spend; showdown: the smaller spend, by river strength).

Regret-based pruning (Brown & Sandholm 2015; Pluribus' form): in a traversal that prunes (drawn with
probability ``prune_probability``), an action of the traverser whose regret is below
``prune_threshold`` is skipped unless it leads to a terminal node or is on the river; the node value
is then the sum over explored actions only, and regrets of skipped actions do not change.  Regrets
are floored at ``regret_floor`` (negative; a skipped action can climb back), kept in float32.

The random numbers (splitmix64 / xoshiro256**) are a function of ``seed`` alone, so a run is a
function of its seeds.  Returns the number of tree nodes visited.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint64_t
from libc.stdlib cimport malloc, free

include "blueprint_tree.pxi"


cdef struct Ctx:
    Tree t
    int buckets[2][4]      # bucket of each seat's hand in each round
    int winner             # showdown: 0, 1, or -1 (tie)
    int traverser
    int prune
    double prune_threshold
    double regret_floor
    double weight
    float* regrets
    float* strategy_sum
    double* work           # per depth: sigma [A], values [A]
    int max_actions
    int max_depth
    uint64_t s[4]
    long long visited


include "xoshiro256.pxi"


include "blueprint_regret.pxi"
include "blueprint_sampling.pxi"


cdef double _walk(Ctx* c, int n, int depth) noexcept nogil:
    """The traverser's sampled value (chips) at node n; updates regrets and the opponent's strategy sums."""
    cdef int p = c.traverser
    cdef int k, a, A, child, r
    cdef long long idx
    cdef double v, u
    cdef double* sig
    cdef double* vals
    c.visited += 1
    k = c.t.kind[n]
    if k == 1 or k == 2:
        return _terminal_value(c, n, k)
    A = c.t.num_children[n]
    r = c.t.rnd[n]
    sig = c.work + <long long>depth * 2 * c.max_actions
    vals = sig + c.max_actions
    if c.t.player[n] == p:
        idx = c.t.slot[n] + <long long>c.buckets[p][r] * A
        _regret_matching(c.regrets + idx, A, sig)
        v = 0.0
        for a in range(A):
            child = c.t.child_start[n] + a
            if c.prune and r < 3 and c.t.kind[child] == 0 and c.regrets[idx + a] < c.prune_threshold:
                vals[a] = 0.0
                continue
            vals[a] = _walk(c, child, depth + 1)
            v += sig[a] * vals[a]
        for a in range(A):
            child = c.t.child_start[n] + a
            if c.prune and r < 3 and c.t.kind[child] == 0 and c.regrets[idx + a] < c.prune_threshold:
                continue
            u = c.regrets[idx + a] + (vals[a] - v)
            if u < c.regret_floor:
                u = c.regret_floor
            c.regrets[idx + a] = <float>u
        return v
    idx = c.t.slot[n] + <long long>c.buckets[1 - p][r] * A
    _regret_matching(c.regrets + idx, A, sig)
    if c.weight > 0:
        for a in range(A):
            c.strategy_sum[idx + a] += <float>(c.weight * sig[a])
    return _walk(c, c.t.child_start[n] + _sample_action(c, sig, A), depth + 1)


def iterate_board(const signed char[::1] kind, const signed char[::1] player, const signed char[::1] rnd,
                  const int[::1] child_start, const int[::1] num_children, const long long[:, ::1] spent,
                  const long long[::1] slot, int max_actions, int max_depth,
                  const int[:, ::1] bucket, const int[::1] strength, const int[:, ::1] deals,
                  float[::1] regrets, float[::1] strategy_sum, double weight, unsigned long long seed,
                  double prune_probability, double prune_threshold, double regret_floor,
                  double[::1] root_values=None):
    """Traversals of one board (see the module docstring).

    ``bucket[4, 1326]``: each hole pair's bucket per round on this board; ``strength[1326]``: river strength
    of each pair (higher wins); ``deals[K, 2]``: pair indices of seat 0 and seat 1 (disjoint, live).  For each
    deal, traverser 0 then traverser 1.  ``root_values`` (float64[2], optional) receives the sum over deals of
    each traverser's sampled root value (chips).  Returns the number of tree nodes visited.
    """
    cdef Ctx c
    cdef Py_ssize_t K = deals.shape[0]
    cdef double sums[2]
    if K == 0:
        return 0
    if regrets.shape[0] != strategy_sum.shape[0]:
        raise ValueError("regrets and strategy sums differ in length")
    _bind_tree_arrays(&c.t, kind, player, rnd, child_start, num_children, spent, slot)
    c.regrets = &regrets[0]
    c.strategy_sum = &strategy_sum[0]
    c.weight = weight
    c.prune_threshold = prune_threshold
    c.regret_floor = regret_floor
    c.max_actions = max_actions
    c.max_depth = max_depth + 1
    c.visited = 0
    sums[0] = 0.0
    sums[1] = 0.0
    _seed(&c, seed)
    c.work = <double*>malloc(sizeof(double) * 2 * max_actions * (c.max_depth + 1))
    if c.work == NULL:
        raise MemoryError("mccfr kernel workspace")
    with nogil:
        _play_given_deals(&c, bucket, strength, deals, prune_probability, sums)
    free(c.work)
    if root_values is not None:
        root_values[0] += sums[0]
        root_values[1] += sums[1]
    return c.visited
