# Pieces shared by the two external-sampling kernels (blueprint_mccfr, blueprint_pluribus).  Included
# after each kernel's ``Ctx`` (fields ``t``, ``buckets``, ``winner``, ``traverser``, ``prune``), its
# ``_walk`` declaration and xoshiro256.pxi; the code is the kernels' own, unchanged, so runs stay bit-exact.


cdef inline double _terminal_value(Ctx* c, int n, int k) noexcept nogil:
    """The traverser's value (chips) at fold (``k == 1``) or showdown (``k == 2``) node ``n``."""
    cdef int p = c.traverser
    cdef double v
    if k == 1:
        if c.t.player[n] == p:
            return -<double>c.t.spent[2 * n + p]
        return <double>c.t.spent[2 * n + 1 - p]
    v = <double>c.t.spent[2 * n]
    if c.t.spent[2 * n + 1] < v:
        v = <double>c.t.spent[2 * n + 1]
    if c.winner < 0:
        return 0.0
    return v if c.winner == p else -v


cdef inline int _sample_action(Ctx* c, const double* sig, int A) noexcept nogil:
    """An action drawn from the probabilities ``sig[A]`` (the last one when rounding leaves ``u`` above)."""
    cdef double u = _uniform(c)
    cdef double acc = 0.0
    cdef int a
    for a in range(A):
        acc += sig[a]
        if u < acc:
            return a
    return A - 1


cdef inline void _play_deal(Ctx* c, int strength0, int strength1, double prune_probability,
                            double* sums) noexcept nogil:
    """Set the showdown winner from the two river strengths (higher wins) and walk the tree once for each
    traverser, seat 0 then 1, each traversal pruning with ``prune_probability``; adds the sampled root
    values (chips) to ``sums[2]``."""
    cdef int p
    if strength0 > strength1:
        c.winner = 0
    elif strength1 > strength0:
        c.winner = 1
    else:
        c.winner = -1
    for p in range(2):
        c.traverser = p
        c.prune = 1 if (prune_probability > 0 and _uniform(c) < prune_probability) else 0
        sums[p] += _walk(c, 0, 0)


cdef inline void _play_given_deals(Ctx* c, const int[:, ::1] bucket, const int[::1] strength,
                                   const int[:, ::1] deals, double prune_probability, double* sums) noexcept nogil:
    """:func:`_play_deal` for each deal ``deals[i] = (seat 0's pair, seat 1's pair)``, with the pairs' buckets
    ``bucket[4, 1326]`` and river strengths ``strength[1326]`` of the board."""
    cdef Py_ssize_t i
    cdef int r, h0, h1
    for i in range(deals.shape[0]):
        h0 = deals[i, 0]
        h1 = deals[i, 1]
        for r in range(4):
            c.buckets[0][r] = bucket[r, h0]
            c.buckets[1][r] = bucket[r, h1]
        _play_deal(c, strength[h0], strength[h1], prune_probability, sums)
