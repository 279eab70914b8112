# cython: language_level=3
"""CFR-family iterations, expected values and best response over compiled flat game trees.

Array layout: see ``cfrkit/solvers/tabular/compiled.py``.  Every function takes the tree arrays and
per-slot strategy arrays (one entry per information-set action) and works without the GIL.
Children of a node are contiguous and numbered after it, so a forward pass in id order and a
backward pass in reverse id order visit the tree in a valid order without recursion.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport pow

cnp.import_array()

DEF CHANCE = -1
DEF TERMINAL = -4

# algorithm codes shared with cfrkit/solvers/tabular/cfr.py
DEF ALG_CFR = 0
DEF ALG_CFR_PLUS = 1
DEF ALG_DCFR = 2


cdef void _regret_matching(const double[::1] regrets, const int[::1] infoset_offset, const int[::1] infoset_player,
                           int player, double[::1] sigma) noexcept nogil:
    """sigma = positive regrets normalised per information set (uniform when none is positive)."""
    cdef Py_ssize_t s, k, lo, hi
    cdef double total, r
    for s in range(infoset_player.shape[0]):
        if player >= 0 and infoset_player[s] != player:
            continue
        lo = infoset_offset[s]
        hi = infoset_offset[s + 1]
        total = 0.0
        for k in range(lo, hi):
            r = regrets[k]
            if r > 0:
                total += r
        if total > 0:
            for k in range(lo, hi):
                r = regrets[k]
                sigma[k] = r / total if r > 0 else 0.0
        else:
            for k in range(lo, hi):
                sigma[k] = 1.0 / (hi - lo)


def regret_matching(double[::1] regrets, int[::1] infoset_offset, int[::1] infoset_player, int player,
                    double[::1] sigma):
    """Current strategy from cumulative regrets for ``player``'s information sets (-1: all)."""
    with nogil:
        _regret_matching(regrets, infoset_offset, infoset_player, player, sigma)


cdef void _forward_reach(const int[::1] node_player, const int[::1] node_infoset, const int[::1] child_start,
                         const int[::1] num_children, const double[::1] chance_prob, const int[::1] infoset_offset,
                         const double[::1] sigma, double[:, ::1] reach) noexcept nogil:
    """reach[i, p] = product of player p's action probabilities to node i; reach[i, P] = chance's."""
    cdef Py_ssize_t n = node_player.shape[0], P = reach.shape[1] - 1
    cdef Py_ssize_t i, c, q, k, slot
    cdef int pl
    for q in range(P + 1):
        reach[0, q] = 1.0
    for i in range(n):
        pl = node_player[i]
        if pl == TERMINAL:
            continue
        for k in range(num_children[i]):
            c = child_start[i] + k
            for q in range(P + 1):
                reach[c, q] = reach[i, q]
            if pl == CHANCE:
                reach[c, P] *= chance_prob[c]
            else:
                slot = infoset_offset[node_infoset[i]] + k
                reach[c, pl] *= sigma[slot]


cdef void _backward_values(const int[::1] node_player, const int[::1] node_infoset, const int[::1] child_start,
                           const int[::1] num_children, const double[::1] chance_prob, const double[:, ::1] utilities,
                           const int[::1] infoset_offset, const double[::1] sigma,
                           double[:, ::1] values) noexcept nogil:
    """values[i, p] = expected return of player p below node i under sigma."""
    cdef Py_ssize_t n = node_player.shape[0], P = values.shape[1]
    cdef Py_ssize_t i, c, q, k, base
    cdef int pl
    cdef double w
    for i in range(n - 1, -1, -1):
        pl = node_player[i]
        if pl == TERMINAL:
            for q in range(P):
                values[i, q] = utilities[i, q]
            continue
        for q in range(P):
            values[i, q] = 0.0
        if pl == CHANCE:
            for k in range(num_children[i]):
                c = child_start[i] + k
                w = chance_prob[c]
                for q in range(P):
                    values[i, q] += w * values[c, q]
        else:
            base = infoset_offset[node_infoset[i]]
            for k in range(num_children[i]):
                c = child_start[i] + k
                w = sigma[base + k]
                if w == 0.0:
                    continue
                for q in range(P):
                    values[i, q] += w * values[c, q]


def cfr_iteration(int[::1] node_player, int[::1] node_infoset, int[::1] child_start, int[::1] num_children,
                  double[::1] chance_prob, double[:, ::1] utilities, int[::1] infoset_offset,
                  int[::1] infoset_player, double[::1] regrets, double[::1] strategy_sum, double[::1] sigma,
                  double[:, ::1] reach, double[:, ::1] values, double[::1] inst_regret,
                  int update_player, int algorithm, double t, double alpha, double beta, double gamma,
                  bint linear_average):
    """One CFR-family update of ``update_player``'s regrets and average (-1: all players at once).

    ``sigma`` must hold the current strategy on entry; on exit it holds the new current strategy of
    the updated player(s).  ``t`` is the 1-based iteration number.  Algorithms: 0 vanilla CFR (average
    weighted by reach, or by ``t * reach`` with ``linear_average``), 1 CFR+ (regret matching+, average
    weight t as OpenSpiel's CFRPlusSolver), 2 discounted CFR (positive regrets scaled by
    t^alpha/(t^alpha+1), negative by t^beta/(t^beta+1), average weight t^gamma; linear CFR is 1,1,1).
    """
    cdef Py_ssize_t n = node_player.shape[0], P = values.shape[1], S = infoset_player.shape[0]
    cdef Py_ssize_t i, c, k, q, s, base, lo, hi
    cdef int pl
    cdef double cf_reach, own_reach, weight, pos_scale, neg_scale, r
    if algorithm == ALG_CFR_PLUS or (algorithm == ALG_CFR and linear_average):
        weight = t
    elif algorithm == ALG_DCFR:
        weight = pow(t, gamma)
    else:
        weight = 1.0
    with nogil:
        _forward_reach(node_player, node_infoset, child_start, num_children, chance_prob, infoset_offset, sigma,
                       reach)
        _backward_values(node_player, node_infoset, child_start, num_children, chance_prob, utilities,
                         infoset_offset, sigma, values)
        for s in range(S):
            if update_player < 0 or infoset_player[s] == update_player:
                for k in range(infoset_offset[s], infoset_offset[s + 1]):
                    inst_regret[k] = 0.0
        for i in range(n):
            pl = node_player[i]
            if pl < 0 or (update_player >= 0 and pl != update_player):
                continue
            cf_reach = reach[i, P]
            for q in range(P):
                if q != pl:
                    cf_reach *= reach[i, q]
            own_reach = reach[i, pl]
            if cf_reach == 0.0 and own_reach == 0.0:
                continue
            base = infoset_offset[node_infoset[i]]
            for k in range(num_children[i]):
                c = child_start[i] + k
                inst_regret[base + k] += cf_reach * (values[c, pl] - values[i, pl])
                strategy_sum[base + k] += weight * own_reach * sigma[base + k]
        if algorithm == ALG_DCFR:
            pos_scale = pow(t, alpha) / (pow(t, alpha) + 1.0)
            neg_scale = pow(t, beta) / (pow(t, beta) + 1.0)
        for s in range(S):
            if update_player >= 0 and infoset_player[s] != update_player:
                continue
            lo = infoset_offset[s]
            hi = infoset_offset[s + 1]
            for k in range(lo, hi):
                r = regrets[k] + inst_regret[k]
                if algorithm == ALG_CFR_PLUS:
                    if r < 0:
                        r = 0.0
                elif algorithm == ALG_DCFR:
                    r = r * pos_scale if r > 0 else r * neg_scale
                regrets[k] = r
        _regret_matching(regrets, infoset_offset, infoset_player, update_player, sigma)


def expected_values(int[::1] node_player, int[::1] node_infoset, int[::1] child_start, int[::1] num_children,
                    double[::1] chance_prob, double[:, ::1] utilities, int[::1] infoset_offset, double[::1] sigma):
    """Expected return of every player at the root under the profile ``sigma`` (game units)."""
    cdef Py_ssize_t n = node_player.shape[0], P = utilities.shape[1]
    values = np.empty((n, P), dtype=np.float64)
    cdef double[:, ::1] v = values
    with nogil:
        _backward_values(node_player, node_infoset, child_start, num_children, chance_prob, utilities,
                         infoset_offset, sigma, v)
    return values[0].copy()


cdef struct BRContext:
    const int* node_player
    const int* node_infoset
    const int* child_start
    const int* num_children
    const double* chance_prob
    const double* utilities
    const int* infoset_offset
    const int* infoset_node_offset
    const int* infoset_nodes
    const double* sigma
    const double* opp_reach
    double* node_value
    char* node_done
    int* best_slot
    double* slot_value
    int player
    int P


cdef double _br_value(BRContext* ctx, Py_ssize_t i) noexcept nogil:
    """Value for ctx.player at node i when ctx.player best-responds (memoised per node and infoset)."""
    cdef int pl
    cdef Py_ssize_t k, c, s, j, h, lo, best
    cdef double v, best_v
    if ctx.node_done[i]:
        return ctx.node_value[i]
    pl = ctx.node_player[i]
    v = 0.0
    if pl == TERMINAL:
        v = ctx.utilities[i * ctx.P + ctx.player]
    elif pl == CHANCE:
        for k in range(ctx.num_children[i]):
            c = ctx.child_start[i] + k
            v += ctx.chance_prob[c] * _br_value(ctx, c)
    elif pl != ctx.player:
        lo = ctx.infoset_offset[ctx.node_infoset[i]]
        for k in range(ctx.num_children[i]):
            if ctx.sigma[lo + k] != 0.0:
                v += ctx.sigma[lo + k] * _br_value(ctx, ctx.child_start[i] + k)
    else:
        s = ctx.node_infoset[i]
        lo = ctx.infoset_offset[s]
        if ctx.best_slot[s] < 0:
            # choose the action maximising counterfactual value summed over the set's histories
            for k in range(ctx.infoset_offset[s + 1] - lo):
                ctx.slot_value[lo + k] = 0.0
            for j in range(ctx.infoset_node_offset[s], ctx.infoset_node_offset[s + 1]):
                h = ctx.infoset_nodes[j]
                for k in range(ctx.num_children[h]):
                    ctx.slot_value[lo + k] += ctx.opp_reach[h] * _br_value(ctx, ctx.child_start[h] + k)
            best = 0
            best_v = ctx.slot_value[lo]
            for k in range(1, ctx.infoset_offset[s + 1] - lo):
                if ctx.slot_value[lo + k] > best_v + 1e-12 * (1.0 + (best_v if best_v > 0 else -best_v)):
                    best_v = ctx.slot_value[lo + k]
                    best = k
            ctx.best_slot[s] = best
        v = _br_value(ctx, ctx.child_start[i] + ctx.best_slot[s])
    ctx.node_value[i] = v
    ctx.node_done[i] = 1
    return v


def best_response(int[::1] node_player, int[::1] node_infoset, int[::1] child_start, int[::1] num_children,
                  double[::1] chance_prob, double[:, ::1] utilities, int[::1] infoset_offset,
                  int[::1] infoset_node_offset, int[::1] infoset_nodes, double[::1] sigma, int player):
    """Best-response value of ``player`` against the others' strategies in ``sigma``.

    Returns ``(value, best_slot)`` where ``best_slot[s]`` is the index (within the information set)
    of the best action at each of ``player``'s information sets (-1 for other players' sets).
    """
    cdef Py_ssize_t n = node_player.shape[0], P = utilities.shape[1], S = infoset_offset.shape[0] - 1
    cdef Py_ssize_t i, k, c, q
    cdef int pl
    opp = np.empty(n, dtype=np.float64)
    node_value = np.zeros(n, dtype=np.float64)
    node_done = np.zeros(n, dtype=np.int8)
    best_slot = np.full(S, -1, dtype=np.int32)
    slot_value = np.zeros(max(1, infoset_offset[S]), dtype=np.float64)
    cdef double[::1] opp_v = opp
    cdef double[::1] nv = node_value
    cdef char[::1] nd = node_done.view(np.int8)
    cdef int[::1] bs = best_slot
    cdef double[::1] sv = slot_value
    cdef BRContext ctx
    cdef double value
    with nogil:
        # reach of chance and the other players
        opp_v[0] = 1.0
        for i in range(n):
            pl = node_player[i]
            if pl == TERMINAL:
                continue
            for k in range(num_children[i]):
                c = child_start[i] + k
                if pl == CHANCE:
                    opp_v[c] = opp_v[i] * chance_prob[c]
                elif pl == player:
                    opp_v[c] = opp_v[i]
                else:
                    opp_v[c] = opp_v[i] * sigma[infoset_offset[node_infoset[i]] + k]
        ctx.node_player = &node_player[0]
        ctx.node_infoset = &node_infoset[0]
        ctx.child_start = &child_start[0]
        ctx.num_children = &num_children[0]
        ctx.chance_prob = &chance_prob[0]
        ctx.utilities = &utilities[0, 0]
        ctx.infoset_offset = &infoset_offset[0]
        ctx.infoset_node_offset = &infoset_node_offset[0]
        ctx.infoset_nodes = &infoset_nodes[0] if infoset_nodes.shape[0] > 0 else NULL
        ctx.sigma = &sigma[0] if sigma.shape[0] > 0 else NULL
        ctx.opp_reach = &opp_v[0]
        ctx.node_value = &nv[0]
        ctx.node_done = &nd[0]
        ctx.best_slot = &bs[0] if S > 0 else NULL
        ctx.slot_value = &sv[0]
        ctx.player = player
        ctx.P = <int>P
        value = _br_value(&ctx, 0)
    return value, best_slot


def average_strategy(double[::1] strategy_sum, int[::1] infoset_offset, double[::1] out):
    """Normalise strategy sums per information set (uniform where the sum is zero)."""
    cdef Py_ssize_t s, k, lo, hi, S = infoset_offset.shape[0] - 1
    cdef double total
    with nogil:
        for s in range(S):
            lo = infoset_offset[s]
            hi = infoset_offset[s + 1]
            total = 0.0
            for k in range(lo, hi):
                total += strategy_sum[k]
            for k in range(lo, hi):
                out[k] = strategy_sum[k] / total if total > 0 else 1.0 / (hi - lo)
