# cython: language_level=3
"""Range-vectorised CFR+ / DCFR over a flat public tree without chance nodes (hold'em river subgames).

The whole solve (iterations, periodic exploitability) runs in C without the GIL.  Layout:

* nodes in pre-order with contiguous children: ``node_type`` (0 decision, 1 fold, 2 showdown),
  ``node_player`` (acting player of a decision), ``child_start``/``num_children``, ``node_slot`` (first
  row of the node's actions in the per-action arrays), ``amount[n, p]`` (terminal payoff multiplier of
  player ``p``: a fold pays ``+-contribution``, a showdown ``contribution``);
* hands: ``hand_cards[h, 2]``, ``valid[h]`` (no card shared with the board), ``order`` (valid hands by
  increasing strength) and ``strength[h]``;
* per-action arrays ``regrets``, ``strategy_sum``, ``sigma``: ``(slots, H)``.

Showdown and fold values use O(H) card-removal sweeps (per-card prefix masses).
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport pow
from libc.string cimport memset

cdef enum:
    DECISION = 0
    FOLD = 1
    SHOWDOWN = 2


cdef void _showdown(const double* r, double* out, const int* order, int V, const int* group_start, int G,
                    const int* sorted_cards, int H) noexcept nogil:
    """out[h] = opponent mass that h beats minus mass that beats h, both without card conflicts.

    ``order`` lists the valid hands by strength, ``group_start`` the first position of each run of
    equal strength (G runs, plus a sentinel), ``sorted_cards[2k], [2k+1]`` the cards of ``order[k]``.
    """
    cdef double cw[52]
    cdef double total = 0.0
    cdef int g, k, h, c0, c1
    memset(cw, 0, sizeof(cw))
    for h in range(H):
        out[h] = 0.0
    for g in range(G):
        for k in range(group_start[g], group_start[g + 1]):
            out[order[k]] = total - cw[sorted_cards[2 * k]] - cw[sorted_cards[2 * k + 1]]
        for k in range(group_start[g], group_start[g + 1]):
            h = order[k]
            total += r[h]
            cw[sorted_cards[2 * k]] += r[h]
            cw[sorted_cards[2 * k + 1]] += r[h]
    memset(cw, 0, sizeof(cw))
    total = 0.0
    for g in range(G - 1, -1, -1):
        for k in range(group_start[g], group_start[g + 1]):
            out[order[k]] -= total - cw[sorted_cards[2 * k]] - cw[sorted_cards[2 * k + 1]]
        for k in range(group_start[g], group_start[g + 1]):
            h = order[k]
            total += r[h]
            cw[sorted_cards[2 * k]] += r[h]
            cw[sorted_cards[2 * k + 1]] += r[h]


cdef void _compatible(const double* r, double* out, const int* order, int V, const int* cards, int H) noexcept nogil:
    cdef double cw[52]
    cdef double total = 0.0
    cdef int k, h
    memset(cw, 0, sizeof(cw))
    for h in range(H):
        out[h] = 0.0
    for k in range(V):
        h = order[k]
        total += r[h]
        cw[cards[2 * h]] += r[h]
        cw[cards[2 * h + 1]] += r[h]
    for k in range(V):
        h = order[k]
        out[h] = total - cw[cards[2 * h]] - cw[cards[2 * h + 1]] + r[h]


cdef struct Tree:
    int N
    int H
    int V
    const int* node_type
    const int* node_player
    const int* child_start
    const int* num_children
    const int* node_slot
    const double* amount
    const int* order
    const int* strength
    const int* cards
    const int* group_start
    int G
    const int* sorted_cards
    double* reach      # (N, 2, H)
    double* values     # (N, H)
    double* tmp        # (H,)


cdef void _forward(Tree* t, const double* ranges, const double* sigma) noexcept nogil:
    cdef int H = t.H, n, a, c, q, h
    cdef const double* s
    for h in range(2 * H):
        t.reach[h] = ranges[h]
    for n in range(t.N):
        if t.node_type[n] != DECISION:
            continue
        q = t.node_player[n]
        for a in range(t.num_children[n]):
            c = t.child_start[n] + a
            s = sigma + <Py_ssize_t>(t.node_slot[n] + a) * H
            for h in range(H):
                t.reach[(c * 2 + q) * H + h] = t.reach[(n * 2 + q) * H + h] * s[h]
                t.reach[(c * 2 + 1 - q) * H + h] = t.reach[(n * 2 + 1 - q) * H + h]


cdef void _forward_player(Tree* t, const double* ranges, const double* sigma, int q) noexcept nogil:
    """Reach of player ``q`` only: after ``q``'s strategy changed, the other player's reach still holds."""
    cdef int H = t.H, n, a, c, h
    cdef const double* s
    cdef const double* src
    cdef double* dst
    for h in range(H):
        t.reach[q * H + h] = ranges[q * H + h]
    for n in range(t.N):
        if t.node_type[n] != DECISION:
            continue
        src = t.reach + <Py_ssize_t>(n * 2 + q) * H
        for a in range(t.num_children[n]):
            c = t.child_start[n] + a
            dst = t.reach + <Py_ssize_t>(c * 2 + q) * H
            if t.node_player[n] == q:
                s = sigma + <Py_ssize_t>(t.node_slot[n] + a) * H
                for h in range(H):
                    dst[h] = src[h] * s[h]
            else:
                for h in range(H):
                    dst[h] = src[h]


cdef void _backward(Tree* t, int p, const double* sigma, int best_response, double* regrets, double* strategy_sum,
                    double avg_weight, int update, int dcfr, double pos_scale, double neg_scale) noexcept nogil:
    cdef int H = t.H, n, a, c, h, A, slot
    cdef double amt, v, r
    cdef double* out
    cdef const double* opp
    cdef const double* own
    cdef const double* child
    cdef const double* srow
    cdef double* reg
    cdef double* ssum
    for n in range(t.N - 1, -1, -1):
        out = t.values + <Py_ssize_t>n * H
        if t.node_type[n] == FOLD or t.node_type[n] == SHOWDOWN:
            opp = t.reach + <Py_ssize_t>(n * 2 + 1 - p) * H
            amt = t.amount[2 * n + p]
            if t.node_type[n] == FOLD:
                _compatible(opp, out, t.order, t.V, t.cards, H)
            else:
                _showdown(opp, out, t.order, t.V, t.group_start, t.G, t.sorted_cards, H)
            for h in range(H):
                out[h] *= amt
            continue
        A = t.num_children[n]
        slot = t.node_slot[n]
        if t.node_player[n] != p:
            for h in range(H):
                out[h] = 0.0
            for a in range(A):
                c = t.child_start[n] + a
                for h in range(H):
                    out[h] += t.values[<Py_ssize_t>c * H + h]
            continue
        if best_response:
            for h in range(H):
                out[h] = t.values[<Py_ssize_t>t.child_start[n] * H + h]
            for a in range(1, A):
                c = t.child_start[n] + a
                for h in range(H):
                    if t.values[<Py_ssize_t>c * H + h] > out[h]:
                        out[h] = t.values[<Py_ssize_t>c * H + h]
            continue
        for h in range(H):
            out[h] = 0.0
        for a in range(A):
            c = t.child_start[n] + a
            for h in range(H):
                out[h] += sigma[<Py_ssize_t>(slot + a) * H + h] * t.values[<Py_ssize_t>c * H + h]
        if not update:
            continue
        own = t.reach + <Py_ssize_t>(n * 2 + p) * H
        for a in range(A):
            c = t.child_start[n] + a
            reg = regrets + <Py_ssize_t>(slot + a) * H
            child = t.values + <Py_ssize_t>c * H
            if avg_weight > 0:
                ssum = strategy_sum + <Py_ssize_t>(slot + a) * H
                srow = sigma + <Py_ssize_t>(slot + a) * H
                for h in range(H):
                    ssum[h] += avg_weight * own[h] * srow[h]
            if dcfr:
                for h in range(H):
                    r = reg[h] + child[h] - out[h]
                    reg[h] = r * pos_scale if r > 0 else r * neg_scale
            else:
                for h in range(H):
                    r = reg[h] + child[h] - out[h]
                    reg[h] = r if r > 0 else 0.0


cdef void _regret_matching(Tree* t, int p, const double* regrets, double* sigma) noexcept nogil:
    """Row-wise (contiguous) regret matching: positive regrets normalised per hand, uniform if none."""
    cdef int H = t.H, n, a, h, A, slot
    cdef double x
    cdef double* tot = t.tmp
    cdef const double* row
    cdef double* out
    for n in range(t.N):
        if t.node_type[n] != DECISION or (p >= 0 and t.node_player[n] != p):
            continue
        A = t.num_children[n]
        slot = t.node_slot[n]
        for h in range(H):
            tot[h] = 0.0
        for a in range(A):
            row = regrets + <Py_ssize_t>(slot + a) * H
            for h in range(H):
                x = row[h]
                tot[h] += x if x > 0 else 0.0
        for a in range(A):
            row = regrets + <Py_ssize_t>(slot + a) * H
            out = sigma + <Py_ssize_t>(slot + a) * H
            for h in range(H):
                x = row[h]
                if tot[h] > 0:
                    out[h] = x / tot[h] if x > 0 else 0.0
                else:
                    out[h] = 1.0 / A


cdef void _average(Tree* t, const double* strategy_sum, double* out) noexcept nogil:
    cdef int H = t.H, n, a, h, A, slot
    cdef double tot
    for n in range(t.N):
        if t.node_type[n] != DECISION:
            continue
        A = t.num_children[n]
        slot = t.node_slot[n]
        for h in range(H):
            tot = 0.0
            for a in range(A):
                tot += strategy_sum[<Py_ssize_t>(slot + a) * H + h]
            for a in range(A):
                out[<Py_ssize_t>(slot + a) * H + h] = strategy_sum[<Py_ssize_t>(slot + a) * H + h] / tot if tot > 0 else 1.0 / A


cdef double _exploitability(Tree* t, const double* ranges, const double* avg) noexcept nogil:
    cdef int H = t.H, p, h
    cdef double total = 0.0, z = 0.0
    _forward(t, ranges, avg)
    for p in range(2):
        _backward(t, p, avg, 1, NULL, NULL, 0.0, 0, 0, 0.0, 0.0)
        for h in range(H):
            total += ranges[p * H + h] * t.values[h]
    _compatible(ranges + H, t.tmp, t.order, t.V, t.cards, H)
    for h in range(H):
        z += ranges[h] * t.tmp[h]
    return total / 2.0 / z if z > 0 else 0.0


def _showdown_layout(order, strength, hand_cards):
    """Start of each run of equal strength along ``order`` (+ sentinel) and the cards in that order."""
    order = np.asarray(order, dtype=np.intc)
    ordered_strength = np.asarray(strength)[order]
    starts = np.flatnonzero(np.r_[True, ordered_strength[1:] != ordered_strength[:-1]]) if len(order) else np.zeros(0, int)
    groups = np.ascontiguousarray(np.r_[starts, len(order)], dtype=np.intc)
    sorted_cards = np.ascontiguousarray(np.asarray(hand_cards)[order].reshape(-1), dtype=np.intc)
    return groups, sorted_cards


cdef class _Workspace:
    """Owns the tree arrays, the showdown layout and the scratch buffers behind a ``Tree`` view."""
    cdef Tree t
    cdef int[::1] node_type, node_player, child_start, num_children, node_slot, order, strength
    cdef int[::1] groups, sorted_cards
    cdef int[:, ::1] hand_cards
    cdef double[:, ::1] amount, values
    cdef double[:, :, ::1] reach
    cdef double[::1] tmp

    def __init__(self, int[::1] node_type, int[::1] node_player, int[::1] child_start, int[::1] num_children,
                 int[::1] node_slot, double[:, ::1] amount, int[::1] order, int[::1] strength,
                 int[:, ::1] hand_cards):
        cdef int N = node_type.shape[0], H = hand_cards.shape[0]
        self.node_type, self.node_player, self.child_start = node_type, node_player, child_start
        self.num_children, self.node_slot, self.amount = num_children, node_slot, amount
        self.order, self.strength, self.hand_cards = order, strength, hand_cards
        groups, sorted_cards = _showdown_layout(order, strength, hand_cards)
        self.groups, self.sorted_cards = groups, sorted_cards
        self.reach = np.zeros((N, 2, H))
        self.values = np.zeros((N, H))
        self.tmp = np.zeros(H)
        self.t.N = N
        self.t.H = H
        self.t.V = order.shape[0]
        self.t.node_type = &node_type[0]
        self.t.node_player = &node_player[0]
        self.t.child_start = &child_start[0]
        self.t.num_children = &num_children[0]
        self.t.node_slot = &node_slot[0]
        self.t.amount = &amount[0, 0]
        self.t.order = &order[0]
        self.t.strength = &strength[0]
        self.t.cards = &hand_cards[0, 0]
        self.t.group_start = &self.groups[0]
        self.t.G = self.groups.shape[0] - 1
        self.t.sorted_cards = &self.sorted_cards[0] if self.sorted_cards.shape[0] > 0 else NULL
        self.t.reach = &self.reach[0, 0, 0]
        self.t.values = &self.values[0, 0]
        self.t.tmp = &self.tmp[0]


def solve(int[::1] node_type, int[::1] node_player, int[::1] child_start, int[::1] num_children, int[::1] node_slot,
          double[:, ::1] amount, int[::1] order, int[::1] strength, int[:, ::1] hand_cards, double[:, ::1] ranges,
          double[:, ::1] regrets, double[:, ::1] strategy_sum, double[:, ::1] sigma, int start_iteration,
          int iterations, int dcfr, double alpha, double beta, double gamma, int check_every,
          double[::1] expl_out):
    """Run ``iterations`` alternating updates from ``start_iteration`` (1-based next iteration number).

    ``expl_out[k]`` receives the exploitability (chips) of the average strategy after iteration
    ``start_iteration - 1 + (k + 1) * check_every``; returns the number of entries written.
    """
    cdef _Workspace ws = _Workspace(node_type, node_player, child_start, num_children, node_slot, amount, order,
                                    strength, hand_cards)
    cdef Tree t = ws.t
    cdef int it, p, written = 0
    cdef double tt, w, pos_scale = 0.0, neg_scale = 0.0
    avg = np.zeros_like(np.asarray(sigma))
    cdef double[:, ::1] avg_v = avg
    with nogil:
        _forward(&t, &ranges[0, 0], &sigma[0, 0])
        for it in range(start_iteration, start_iteration + iterations):
            tt = it
            if dcfr:
                w = pow(tt, gamma)
                pos_scale = pow(tt, alpha) / (pow(tt, alpha) + 1.0)
                neg_scale = pow(tt, beta) / (pow(tt, beta) + 1.0)
            else:
                w = tt
            for p in range(2):
                _backward(&t, p, &sigma[0, 0], 0, &regrets[0, 0], &strategy_sum[0, 0], w, 1, dcfr, pos_scale,
                          neg_scale)
                _regret_matching(&t, p, &regrets[0, 0], &sigma[0, 0])
                # only p's strategy changed: refresh p's reach, the opponent's is still current
                _forward_player(&t, &ranges[0, 0], &sigma[0, 0], p)
            if check_every > 0 and (it - start_iteration + 1) % check_every == 0 and written < expl_out.shape[0]:
                _average(&t, &strategy_sum[0, 0], &avg_v[0, 0])
                expl_out[written] = _exploitability(&t, &ranges[0, 0], &avg_v[0, 0])
                written += 1
                _forward(&t, &ranges[0, 0], &sigma[0, 0])  # the evaluation overwrote the reaches
    return written


def exploitability(int[::1] node_type, int[::1] node_player, int[::1] child_start, int[::1] num_children,
                   int[::1] node_slot, double[:, ::1] amount, int[::1] order, int[::1] strength,
                   int[:, ::1] hand_cards, double[:, ::1] ranges, double[:, ::1] strategy):
    """Exploitability (chips) of a per-slot ``strategy`` with ``ranges`` as the deal distribution."""
    cdef _Workspace ws = _Workspace(node_type, node_player, child_start, num_children, node_slot, amount, order,
                                    strength, hand_cards)
    cdef Tree t = ws.t
    cdef double out
    with nogil:
        out = _exploitability(&t, &ranges[0, 0], &strategy[0, 0])
    return out
