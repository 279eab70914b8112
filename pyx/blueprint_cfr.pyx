# cython: language_level=3
"""Public chance sampling CFR+ over an abstract heads-up no-limit betting tree (the blueprint kernel).

One call walks the whole betting tree once for one traverser on one sampled board, with a vector over
the hands that board leaves live (up to 1081 of the 1326 pairs).  The caller sorts those hands by
river strength, so showdown values are two O(L) card-removal sweeps; fold values use per-card masses.

Tree layout (see ``cfrkit/solvers/blueprint/betting_tree.py``): ``kind`` (0 decision, 1 fold, 2
showdown), ``player`` (acting seat; the folder at a fold), ``round``, ``child_start``,
``num_children``, ``spent[n, 2]`` (chips), ``slot`` (first entry of the node in the regret /
strategy-sum arrays: ``slot + bucket * num_children + action``).

Per hand ``k`` (strength order): ``cards[k, 2]``, ``bucket[round, k]``, ``groups`` (first hand
of each run of equal strength, plus a sentinel); per round the distinct buckets on the board
(``present[round, :num_present[round]]``, all below ``max_buckets``).  Regret matching runs once per
(node, bucket); regret and strategy-sum updates are summed per bucket in doubles before they touch
the float32 arrays.  Where the opponent's reach is zero for every hand, values are zero and regrets
do not change, so only the traverser's strategy sums are updated there (a cheaper walk without
terminal values).

Regret matching+ reads ``regrets_in``; updates go to ``regrets_out`` (the same array for an in-place
CFR+ update, floored at 0 after each node; a zeroed delta buffer for batched / parallel updates,
merged and floored by the caller) and ``strategy_out`` (``+= weight * own reach * sigma``).  Values
and reach are doubles, stored regrets and sums float32.  The count of visited nodes is returned.
"""
import numpy as np
cimport numpy as cnp
from libc.stdlib cimport malloc, free
from libc.string cimport memset

include "blueprint_tree.pxi"


cdef struct Ctx:
    Tree t
    const int* cards
    const int* bucket      # [rounds, L]
    const int* groups      # [G + 1]
    const int* present     # [rounds, L]: the distinct buckets of each round on this board
    const int* num_present # [rounds]
    int max_buckets
    int G
    int L
    int max_actions
    int traverser
    int floor_in_place
    double weight
    const float* regrets_in
    float* regrets_out
    float* strategy_out
    double* work           # per depth: sigma [B * A], bucket sums [B * (A + 2)], child values [A * L], reach [L]
    int depth_stride
    int max_depth
    long long visited


include "blueprint_regret.pxi"


cdef void _fold_values(Ctx* c, const double* opp, double payoff, double* out) noexcept nogil:
    cdef double card_mass[52]
    cdef double total = 0.0
    cdef int k, c0, c1
    memset(card_mass, 0, sizeof(card_mass))
    for k in range(c.L):
        total += opp[k]
        card_mass[c.cards[2 * k]] += opp[k]
        card_mass[c.cards[2 * k + 1]] += opp[k]
    for k in range(c.L):
        c0 = c.cards[2 * k]
        c1 = c.cards[2 * k + 1]
        out[k] = payoff * (total - card_mass[c0] - card_mass[c1] + opp[k])


cdef void _showdown_values(Ctx* c, const double* opp, double pot, double* out) noexcept nogil:
    # out[k] = pot * (compatible opponent mass below k - compatible mass above k)
    cdef double card_mass[52]
    cdef double total = 0.0
    cdef int g, k, lo, hi
    memset(card_mass, 0, sizeof(card_mass))
    for g in range(c.G):
        lo = c.groups[g]
        hi = c.groups[g + 1]
        for k in range(lo, hi):
            out[k] = total - card_mass[c.cards[2 * k]] - card_mass[c.cards[2 * k + 1]]
        for k in range(lo, hi):
            total += opp[k]
            card_mass[c.cards[2 * k]] += opp[k]
            card_mass[c.cards[2 * k + 1]] += opp[k]
    memset(card_mass, 0, sizeof(card_mass))
    total = 0.0
    for g in range(c.G - 1, -1, -1):
        lo = c.groups[g]
        hi = c.groups[g + 1]
        for k in range(lo, hi):
            out[k] = pot * (out[k] - (total - card_mass[c.cards[2 * k]] - card_mass[c.cards[2 * k + 1]]))
        for k in range(lo, hi):
            total += opp[k]
            card_mass[c.cards[2 * k]] += opp[k]
            card_mass[c.cards[2 * k + 1]] += opp[k]


cdef int _average_only(Ctx* c, int n, int depth, const double* own) noexcept nogil:
    """Strategy-sum updates of the traverser below node n where the opponent's reach is zero."""
    cdef int L = c.L
    cdef int k, a, A, b, i, r, npres, p = c.traverser
    cdef double s = 0.0
    cdef long long base, idx
    cdef double* sig
    cdef double* acc
    cdef double* reach
    cdef const int* bk
    cdef const int* pres
    if c.t.kind[n] != 0 or c.weight <= 0:
        return 0
    if depth >= c.max_depth:
        return -1
    for k in range(L):
        s += own[k]
    if s <= 0:
        return 0
    c.visited += 1
    A = c.t.num_children[n]
    if c.t.player[n] != p:
        for a in range(A):
            if _average_only(c, c.t.child_start[n] + a, depth + 1, own) != 0:
                return -1
        return 0
    base = c.t.slot[n]
    r = c.t.rnd[n]
    sig = c.work + <long long>depth * c.depth_stride
    acc = sig + <long long>c.max_buckets * c.max_actions
    reach = acc + <long long>c.max_buckets * (c.max_actions + 2) + <long long>c.max_actions * L
    bk = c.bucket + <long long>r * L
    pres = c.present + <long long>r * L
    npres = c.num_present[r]
    for i in range(npres):
        b = pres[i]
        _regret_matching(c.regrets_in + base + <long long>b * A, A, sig + <long long>b * A)
        acc[b] = 0.0
    for k in range(L):
        acc[bk[k]] += own[k]
    for i in range(npres):
        b = pres[i]
        if acc[b] > 0:
            idx = base + <long long>b * A
            for a in range(A):
                c.strategy_out[idx + a] += <float>(c.weight * acc[b] * sig[<long long>b * A + a])
    for a in range(A):
        for k in range(L):
            reach[k] = own[k] * sig[<long long>bk[k] * A + a]
        if _average_only(c, c.t.child_start[n] + a, depth + 1, reach) != 0:
            return -1
    return 0


cdef int _walk(Ctx* c, int n, int depth, const double* own, const double* opp, double* out) noexcept nogil:
    """Values of the traverser's hands at node n (chips x opponent reach mass) into out[L]."""
    cdef int L = c.L
    cdef int k, a, A, b, i, r, npres, child, p = c.traverser
    cdef double s, payoff, x
    cdef long long base, idx
    cdef double* sig
    cdef double* vals
    cdef double* reach
    cdef double* acc
    cdef double* row
    cdef const int* bk
    cdef const int* pres
    c.visited += 1
    if c.t.kind[n] == 1:
        if c.t.player[n] == p:
            payoff = -<double>c.t.spent[2 * n + p]
        else:
            payoff = <double>c.t.spent[2 * n + 1 - p]
        _fold_values(c, opp, payoff, out)
        return 0
    if c.t.kind[n] == 2:
        s = <double>c.t.spent[2 * n]
        if c.t.spent[2 * n + 1] < s:
            s = <double>c.t.spent[2 * n + 1]
        _showdown_values(c, opp, s, out)
        return 0
    if depth >= c.max_depth:
        return -1
    s = 0.0
    for k in range(L):
        s += opp[k]
    if s <= 0:
        # the opponent never gets here: values are 0 and regrets do not change, but the traverser's
        # average strategy still accumulates its current strategy below (CFR+'s average uses own reach)
        for k in range(L):
            out[k] = 0.0
        return _average_only(c, n, depth, own)
    A = c.t.num_children[n]
    base = c.t.slot[n]
    r = c.t.rnd[n]
    sig = c.work + <long long>depth * c.depth_stride
    acc = sig + <long long>c.max_buckets * c.max_actions
    vals = acc + <long long>c.max_buckets * (c.max_actions + 2)
    reach = vals + <long long>c.max_actions * L
    bk = c.bucket + <long long>r * L
    pres = c.present + <long long>r * L
    npres = c.num_present[r]
    # regret matching+ once per bucket present on this board
    for i in range(npres):
        b = pres[i]
        _regret_matching(c.regrets_in + base + <long long>b * A, A, sig + <long long>b * A)
    for k in range(L):
        out[k] = 0.0
    if c.t.player[n] == p:
        for a in range(A):
            child = c.t.child_start[n] + a
            for k in range(L):
                reach[k] = own[k] * sig[<long long>bk[k] * A + a]
            if _walk(c, child, depth + 1, reach, opp, vals + <long long>a * L) != 0:
                return -1
            for k in range(L):
                out[k] += sig[<long long>bk[k] * A + a] * vals[<long long>a * L + k]
        # per-bucket sums: action values (0..A-1), node value (A), own reach (A + 1)
        for i in range(npres):
            row = acc + <long long>pres[i] * (A + 2)
            for a in range(A + 2):
                row[a] = 0.0
        for k in range(L):
            row = acc + <long long>bk[k] * (A + 2)
            for a in range(A):
                row[a] += vals[<long long>a * L + k]
            row[A] += out[k]
            row[A + 1] += own[k]
        for i in range(npres):
            b = pres[i]
            row = acc + <long long>b * (A + 2)
            idx = base + <long long>b * A
            for a in range(A):
                x = c.regrets_out[idx + a] + (row[a] - row[A])
                if c.floor_in_place and x < 0:
                    x = 0.0
                c.regrets_out[idx + a] = <float>x
                if c.weight > 0 and row[A + 1] > 0:
                    c.strategy_out[idx + a] += <float>(c.weight * row[A + 1] * sig[<long long>b * A + a])
    else:
        for a in range(A):
            child = c.t.child_start[n] + a
            for k in range(L):
                reach[k] = opp[k] * sig[<long long>bk[k] * A + a]
            if _walk(c, child, depth + 1, own, reach, vals) != 0:
                return -1
            for k in range(L):
                out[k] += vals[k]
    return 0


def tree_depth(const signed char[::1] kind, const int[::1] child_start, const int[::1] num_children):
    """Number of decision levels of the tree (the kernel's recursion depth)."""
    cdef Py_ssize_t n = kind.shape[0]
    cdef int[::1] depth = np.zeros(n, dtype=np.int32)
    cdef Py_ssize_t i, j
    cdef int best = 0
    for i in range(n):
        if kind[i] == 0:
            for j in range(child_start[i], child_start[i] + num_children[i]):
                depth[j] = depth[i] + 1
                if depth[j] > best:
                    best = depth[j]
    return best


def traverse(const signed char[::1] kind, const signed char[::1] player, const signed char[::1] rnd,
             const int[::1] child_start, const int[::1] num_children, const long long[:, ::1] spent,
             const long long[::1] slot, int max_actions, int max_depth,
             const int[:, ::1] cards, const int[:, ::1] bucket, const int[::1] groups,
             const int[:, ::1] present, const int[::1] num_present, int max_buckets, int traverser, double weight, const float[::1] regrets_in, float[::1] regrets_out,
             float[::1] strategy_out, bint floor_in_place, const double[::1] own_reach,
             const double[::1] opp_reach, double[::1] root_values):
    """One public-chance-sampled CFR+ traversal for ``traverser`` on one board (see the module docstring).

    Returns the number of tree nodes visited.  ``root_values[L]`` receives the traverser's root
    values (chips x opponent reach mass).
    """
    cdef Ctx c
    cdef int L = cards.shape[0]
    cdef int rc
    if L == 0:
        return 0
    _bind_tree_arrays(&c.t, kind, player, rnd, child_start, num_children, spent, slot)
    c.cards = &cards[0, 0]
    c.bucket = &bucket[0, 0]
    c.groups = &groups[0]
    c.present = &present[0, 0]
    c.num_present = &num_present[0]
    c.max_buckets = max_buckets
    c.G = groups.shape[0] - 1
    c.L = L
    c.max_actions = max_actions
    c.traverser = traverser
    c.floor_in_place = 1 if floor_in_place else 0
    c.weight = weight
    c.regrets_in = &regrets_in[0]
    c.regrets_out = &regrets_out[0]
    c.strategy_out = &strategy_out[0]
    c.max_depth = max_depth + 1
    c.depth_stride = max_buckets * (2 * max_actions + 2) + (max_actions + 1) * L
    c.visited = 0
    c.work = <double*>malloc(sizeof(double) * <long long>c.depth_stride * (c.max_depth + 1))
    if c.work == NULL:
        raise MemoryError("blueprint kernel workspace")
    with nogil:
        rc = _walk(&c, 0, 0, &own_reach[0], &opp_reach[0], &root_values[0])
    free(c.work)
    if rc != 0:
        raise RuntimeError("blueprint kernel: the tree is deeper than max_depth")
    return c.visited


def average_strategy_rows(const float[::1] strategy_sum, const long long[::1] slot, const int[::1] num_children,
                          const int[::1] nodes, const int[::1] buckets):
    """float64[len(nodes), max A]: normalised strategy sums of (nodes[i], buckets[i]) (uniform if zero)."""
    cdef Py_ssize_t m = nodes.shape[0], i
    cdef int A, a, maxa = 0
    for i in range(m):
        if num_children[nodes[i]] > maxa:
            maxa = num_children[nodes[i]]
    out = np.zeros((m, maxa), dtype=np.float64)
    cdef double[:, ::1] o = out
    cdef double total
    cdef long long base
    for i in range(m):
        A = num_children[nodes[i]]
        base = slot[nodes[i]] + <long long>buckets[i] * A
        total = 0.0
        for a in range(A):
            total += strategy_sum[base + a]
        for a in range(A):
            o[i, a] = strategy_sum[base + a] / total if total > 0 else 1.0 / A
    return out
