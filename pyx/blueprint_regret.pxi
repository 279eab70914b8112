# Regret matching over one information set's float32 regrets, shared by the blueprint kernels
# (blueprint_cfr: CFR+ with public chance sampling; blueprint_mccfr: external-sampling MCCFR).

cdef inline void _regret_matching(const float* r, int A, double* out) noexcept nogil:
    """out[a] = max(r[a], 0) / sum of the positive regrets; uniform when none is positive."""
    cdef int a
    cdef double total = 0.0, x
    for a in range(A):
        x = r[a]
        if x > 0:
            total += x
    if total > 0:
        for a in range(A):
            x = r[a]
            out[a] = x / total if x > 0 else 0.0
    else:
        for a in range(A):
            out[a] = 1.0 / A
