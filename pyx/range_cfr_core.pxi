# Body of the range CFR kernels: included by range_cfr.pyx (rc_real = double) and range_cfr32.pyx (float).
import numpy as np
cimport numpy as cnp
cimport openmp
from cython.parallel cimport prange
from libc.stdlib cimport malloc, free
from libc.math cimport pow
from libc.string cimport memset, memcpy

include "range_cfr_helpers.pxi"


cdef enum:
    # levels with fewer nodes run on one thread: a barrier costs more than their work (and far more on a
    # loaded machine, where a descheduled thread holds the others at the barrier)
    MIN_PARALLEL_LEVEL = 32

cdef enum:
    DECISION = 0
    FOLD = 1
    SHOWDOWN = 2
    CHANCE = 3


cdef struct Tree:
    int N
    int H
    int G
    const int* node_type
    const int* node_player
    const int* child_start
    const int* num_children
    const int* node_slot
    const double* amount
    const int* reach_row       # (N, 2)
    const int* fold_child      # (N,) first fold child of a decision, or -1
    const int* showdown_child  # (N,) first showdown child of a decision, or -1
    const int* cards           # (H, 2), hands sorted by strength
    const int* group_start     # (G + 1,)
    rc_real* reach              # (rows, H)
    rc_real* values             # (non-terminal nodes, H): row value_row[n]
    const int* value_row        # (N,) row of a non-terminal node's values, -1 for terminals
    rc_real* term               # (max children, H): values of the terminal children of the node in work
    rc_real* strat              # (max children, H): strategy of the node in work, regret-matched on the fly
    const rc_real* locked       # (slots, H) or NULL: locked strategy of a hand where its first action's entry >= 0
    const int* node_locked      # (N,) 1 where some hand of the decision is locked
    int L                       # breadth-first levels: nodes [level_start[l], level_start[l + 1]) at depth l
    const int* level_start
    int threads                 # OpenMP threads over the nodes of a level
    Tree* workers               # (threads,) copies of this tree with their own scratch (tmp, term, strat)
    rc_real* tmp                # (6, H) scratch
    const int* node_board      # (N,) board of a showdown: 0 = the root order, b >= 1 = board_* data
    const int* node_mask       # (N,) mask row of a chance child, else -1
    const rc_real* masks        # (M, H)
    const int* board_perm      # hands (root order) of each board in its strength order, concatenated
    const int* board_cards     # (len(board_perm), 2)
    const int* board_hand_start   # (nb + 1,) board b's hands: [start[b], start[b + 1])
    const int* board_groups       # runs of equal strength per board (local indices + sentinel), concatenated
    const int* board_group_start  # (nb + 1,)


cdef inline rc_real* _reach(Tree* t, int n, int q) noexcept nogil:
    return t.reach + <Py_ssize_t>t.reach_row[2 * n + q] * t.H


cdef inline rc_real* _values(Tree* t, int n, int a) noexcept nogil:
    """Values of node ``n`` (child number ``a`` of its parent): its own row, or the terminal scratch row."""
    if t.value_row[n] >= 0:
        return t.values + <Py_ssize_t>t.value_row[n] * t.H
    return t.term + <Py_ssize_t>a * t.H


cdef const rc_real* _strategy(Tree* t, int n, const rc_real* src, int matched) noexcept nogil:
    """Rows ``(A, H)`` of decision ``n``'s strategy: ``src``'s rows, or (``matched``) regret matching of
    ``src``'s regret rows into ``t.strat`` -- the current strategy is never stored."""
    cdef int H = t.H, A = t.num_children[n], a
    cdef const rc_real* rows = src + <Py_ssize_t>t.node_slot[n] * H
    cdef rc_real* tot = t.tmp
    cdef rc_real* denom = t.tmp + H
    cdef rc_real* uniform = t.tmp + 2 * H
    if not matched:
        return rows
    memset(tot, 0, H * sizeof(rc_real))
    for a in range(A):
        rc_add_positive(tot, rows + <Py_ssize_t>a * H, H)
    rc_match_prepare(tot, denom, uniform, 1.0 / A, H)
    for a in range(A):
        rc_match(t.strat + <Py_ssize_t>a * H, rows + <Py_ssize_t>a * H, denom, uniform, H)
    if t.locked != NULL and t.node_locked[n]:
        _apply_lock(t, n, A)
    return t.strat


cdef void _apply_lock(Tree* t, int n, int A) noexcept nogil:
    """Node locking: hands with a locked strategy at ``n`` play it whatever their regrets say."""
    cdef int H = t.H, a, h
    cdef const rc_real* lk = t.locked + <Py_ssize_t>t.node_slot[n] * H
    for h in range(H):
        if lk[h] >= 0:
            for a in range(A):
                t.strat[<Py_ssize_t>a * H + h] = lk[<Py_ssize_t>a * H + h]


cdef void _forward_node(Tree* t, int n, const rc_real* sigma, int q, int matched) noexcept nogil:
    """Reach of player ``q`` at the children of node ``n``."""
    cdef int H = t.H, a, c
    cdef const rc_real* strat
    if t.node_type[n] == CHANCE:
        for a in range(t.num_children[n]):
            c = t.child_start[n] + a
            if t.value_row[c] >= 0:  # terminal children keep no reach rows (computed when needed)
                rc_scale(_reach(t, c, q), _reach(t, n, q), t.masks + <Py_ssize_t>t.node_mask[c] * H, H)
        return
    if t.node_type[n] != DECISION or t.node_player[n] != q:
        return
    strat = _strategy(t, n, sigma, matched)
    for a in range(t.num_children[n]):
        c = t.child_start[n] + a
        if t.value_row[c] >= 0:
            rc_scale(_reach(t, c, q), _reach(t, n, q), strat + <Py_ssize_t>a * H, H)


cdef void _forward_player(Tree* t, const rc_real* ranges, const rc_real* sigma, int q, int matched) noexcept nogil:
    """Reach of player ``q`` at every node (rows that alias a parent's row need no work); ``sigma``: the
    strategy (``matched`` = 0) or the regrets it is matched from (1).  Level by level: the nodes of a
    level write disjoint rows, so they run on ``t.threads`` threads."""
    cdef int l, n, lo, hi
    memcpy(_reach(t, 0, q), ranges + <Py_ssize_t>q * t.H, t.H * sizeof(rc_real))
    for l in range(t.L):
        lo = t.level_start[l]
        hi = t.level_start[l + 1]
        if t.threads > 1 and hi - lo >= MIN_PARALLEL_LEVEL:
            for n in prange(lo, hi, num_threads=t.threads, schedule="dynamic"):
                _forward_node(&t.workers[openmp.omp_get_thread_num()], n, sigma, q, matched)
        else:
            for n in range(lo, hi):
                _forward_node(&t.workers[0], n, sigma, q, matched)


cdef inline void _showdown(Tree* t, int c, int p, const rc_real* opp, rc_real* out, double* full,
                           double* full_total) noexcept nogil:
    """Values ``out`` (for player ``p``, opponent reach ``opp``) of showdown ``c`` in the root hand order,
    swept in the order of its board."""
    cdef int H = t.H, b = t.node_board[c], h0, nh, g0
    cdef rc_real* lose = t.tmp + 3 * H
    cdef rc_real* gathered
    cdef rc_real* swept
    if b == 0:
        rc_showdown(opp, out, t.amount[2 * c + p], lose, t.group_start, t.G, t.cards, full,
                    full_total)
        return
    gathered = t.tmp + 4 * H
    swept = t.tmp + 5 * H
    h0 = t.board_hand_start[b]
    nh = t.board_hand_start[b + 1] - h0
    g0 = t.board_group_start[b]
    rc_gather(gathered, opp, t.board_perm + h0, nh)
    rc_showdown(gathered, swept, t.amount[2 * c + p], lose, t.board_groups + g0, t.board_group_start[b + 1] - g0 - 1,
                t.board_cards + 2 * h0, full, full_total)
    memset(out, 0, H * sizeof(rc_real))
    rc_scatter(out, swept, t.board_perm + h0, nh)


cdef void _terminal_children(Tree* t, int n, int p, const rc_real* strat) noexcept nogil:
    """Values (for player ``p``) of the terminal children of decision or chance node ``n``, into ``t.term``.

    Terminal children keep no reach rows: the opponent's reach there is its reach at ``n``, times the
    child's mask (chance) or the opponent's strategy (its own decision), formed in scratch row 0."""
    cdef int a, c, f = t.fold_child[n], s = t.showdown_child[n], fused, fa = 0, sa = 0
    cdef int H = t.H, q = 1 - p
    cdef double full[52]
    cdef double full_total
    cdef const rc_real* r
    cdef rc_real* scratch = t.tmp
    # when p acts at n, the opponent's reach is the same at every child: one sweep serves fold and call
    fused = t.node_type[n] == DECISION and t.node_player[n] == p and f >= 0 and s >= 0
    if fused:
        r = _reach(t, n, q)
        fa = f - t.child_start[n]
        sa = s - t.child_start[n]
        _showdown(t, s, p, r, t.term + <Py_ssize_t>sa * H, full, &full_total)
        rc_fold_values(r, full, full_total, t.cards, t.amount[2 * f + p], t.term + <Py_ssize_t>fa * H, H)
    for a in range(t.num_children[n]):
        c = t.child_start[n] + a
        if t.value_row[c] >= 0 or (fused and (c == f or c == s)):
            continue
        if t.node_type[n] == CHANCE:
            rc_scale(scratch, _reach(t, n, q), t.masks + <Py_ssize_t>t.node_mask[c] * H, H)
            r = scratch
        elif t.node_player[n] == q:
            rc_scale(scratch, _reach(t, n, q), strat + <Py_ssize_t>a * H, H)
            r = scratch
        else:
            r = _reach(t, n, q)
        if t.node_type[c] == FOLD:
            rc_card_sums(r, t.cards, H, full, &full_total)
            rc_fold_values(r, full, full_total, t.cards, t.amount[2 * c + p], t.term + <Py_ssize_t>a * H, H)
        elif t.node_type[c] == SHOWDOWN:
            _showdown(t, c, p, r, t.term + <Py_ssize_t>a * H, full, &full_total)


cdef void _backward_node(Tree* t, int n, int p, const rc_real* sigma, int matched, int best_response,
                         rc_real* regrets, rc_real* strategy_sum, double avg_weight, int dcfr, double pos_scale,
                         double neg_scale) noexcept nogil:
    """Values of player ``p`` at node ``n`` (its children's are done); the update of ``n`` if p acts there."""
    cdef int H = t.H, a, A, slot, cs
    cdef rc_real* out
    cdef const rc_real* strat = NULL
    cdef rc_real* tot = t.tmp
    if t.node_type[n] != DECISION and t.node_type[n] != CHANCE:
        return
    if t.node_type[n] == DECISION:
        strat = _strategy(t, n, sigma, matched)
    _terminal_children(t, n, p, strat)
    out = _values(t, n, 0)
    A = t.num_children[n]
    slot = t.node_slot[n]
    cs = t.child_start[n]
    if t.node_type[n] == CHANCE:
        memset(out, 0, H * sizeof(rc_real))
        for a in range(A):
            rc_add_product(out, t.masks + <Py_ssize_t>t.node_mask[cs + a] * H, _values(t, cs + a, a), H)
        rc_scale_const(out, t.amount[2 * n], H)
        return
    if t.node_player[n] != p or best_response:
        memcpy(out, _values(t, cs, 0), H * sizeof(rc_real))
        for a in range(1, A):
            if t.node_player[n] != p:
                rc_add(out, _values(t, cs + a, a), H)
            else:
                rc_max(out, _values(t, cs + a, a), H)
        return
    memset(out, 0, H * sizeof(rc_real))
    for a in range(A):
        rc_add_product(out, strat + <Py_ssize_t>a * H, _values(t, cs + a, a), H)
    if regrets == NULL:
        return
    memset(tot, 0, H * sizeof(rc_real))
    for a in range(A):
        rc_update_action(strategy_sum + <Py_ssize_t>(slot + a) * H, _reach(t, n, p),
                         strat + <Py_ssize_t>a * H, avg_weight, regrets + <Py_ssize_t>(slot + a) * H,
                         _values(t, cs + a, a), out, tot, dcfr, pos_scale, neg_scale, H)


cdef void _backward(Tree* t, int p, const rc_real* sigma, int matched, int best_response, rc_real* regrets,
                    rc_real* strategy_sum, double avg_weight, int dcfr, double pos_scale,
                    double neg_scale) noexcept nogil:
    """Counterfactual values of player ``p`` at every node (``t.values``, root in row 0).

    Chance nodes add their children's values times the children's masks, times the card probability.
    With ``best_response`` p's decisions take the best child; with ``regrets == NULL`` (evaluation) they
    take the ``sigma``-weighted sum.  Otherwise (a CFR update) p's decisions
    add ``avg_weight * reach * sigma`` to ``strategy_sum``, update ``regrets`` (CFR+ or DCFR
    discounting).  ``sigma`` is the strategy (``matched`` = 0) or the regrets it is matched from (1, the
    solve: a node's strategy is matched before its regrets change, and its descendants' before it).
    Deepest level first; the nodes of a level write disjoint rows and run on ``t.threads`` threads, each
    node's arithmetic in the same order as on one thread (results do not depend on the thread count).
    """
    cdef int l, n, lo, hi
    for l in range(t.L - 1, -1, -1):
        lo = t.level_start[l]
        hi = t.level_start[l + 1]
        if t.threads > 1 and hi - lo >= MIN_PARALLEL_LEVEL:
            for n in prange(lo, hi, num_threads=t.threads, schedule="dynamic"):
                _backward_node(&t.workers[openmp.omp_get_thread_num()], n, p, sigma, matched, best_response,
                               regrets, strategy_sum, avg_weight, dcfr, pos_scale, neg_scale)
        else:
            for n in range(lo, hi):
                _backward_node(&t.workers[0], n, p, sigma, matched, best_response, regrets, strategy_sum,
                               avg_weight, dcfr, pos_scale, neg_scale)


cdef void _average(Tree* t, const rc_real* strategy_sum, rc_real* out) noexcept nogil:
    """Average strategy: strategy sums normalised per hand (row-wise), uniform where a hand's sum is 0."""
    cdef int H = t.H, n, a, A, slot
    cdef rc_real* tot = t.tmp
    cdef rc_real* denom = t.tmp + H
    cdef rc_real* uniform = t.tmp + 2 * H
    for n in range(t.N):
        if t.node_type[n] != DECISION:
            continue
        A = t.num_children[n]
        slot = t.node_slot[n]
        memcpy(tot, strategy_sum + <Py_ssize_t>slot * H, H * sizeof(rc_real))
        for a in range(1, A):
            rc_add(tot, strategy_sum + <Py_ssize_t>(slot + a) * H, H)
        rc_match_prepare(tot, denom, uniform, 1.0 / A, H)
        for a in range(A):
            rc_match(out + <Py_ssize_t>(slot + a) * H, strategy_sum + <Py_ssize_t>(slot + a) * H, denom, uniform, H)


cdef double _exploitability(Tree* t, const rc_real* ranges, rc_real* avg) noexcept nogil:
    """(BR_0 + BR_1) / 2 in chips against ``avg``; the ranges (card-compatible pairs) as the deal."""
    cdef int H = t.H, p, h
    cdef double total = 0.0, z = 0.0, full_total
    cdef double full[52]
    _forward_player(t, ranges, avg, 0, 0)
    _forward_player(t, ranges, avg, 1, 0)
    for p in range(2):
        _backward(t, p, avg, 0, 1, NULL, NULL, 0.0, 0, 0.0, 0.0)
        for h in range(H):
            total += ranges[p * H + h] * t.values[h]
    rc_card_sums(ranges + H, t.cards, H, full, &full_total)
    rc_fold_values(ranges + H, full, full_total, t.cards, 1.0, t.tmp, H)
    for h in range(H):
        z += ranges[h] * t.tmp[h]
    return total / 2.0 / z if z > 0 else 0.0


cdef class _Workspace:
    """Owns the tree arrays, the derived layout (reach rows, terminal children, strength runs) and scratch."""
    cdef Tree t
    cdef const int[::1] node_type, node_player, child_start, num_children, node_slot
    cdef const int[:, ::1] hand_cards
    cdef const double[:, ::1] amount
    cdef int[::1] groups, fold_child, showdown_child, value_row
    cdef const int[::1] node_board, node_mask, board_perm, board_hand_start, board_groups, board_group_start
    cdef const int[:, ::1] board_cards
    cdef const rc_real[:, ::1] masks
    cdef int[:, ::1] reach_row
    cdef rc_real[:, ::1] values, reach, term, strat, worker_scratch
    cdef int[::1] level_start
    cdef Tree* workers

    def __dealloc__(self):
        if self.workers != NULL:
            free(self.workers)

    def set_threads(self, int threads):
        """Per-thread copies of the tree with their own scratch rows (tmp, term, strat)."""
        cdef int i, H = self.t.H, M = self.term.shape[0]
        threads = max(1, threads)
        if self.workers != NULL:
            free(self.workers)
        self.workers = <Tree*>malloc(threads * sizeof(Tree))
        if self.workers == NULL:
            raise MemoryError()
        self.worker_scratch = np.zeros((threads, (6 + 2 * M) * H), dtype=REAL)
        for i in range(threads):
            self.workers[i] = self.t
            self.workers[i].tmp = &self.worker_scratch[i, 0]
            self.workers[i].term = &self.worker_scratch[i, 6 * H]
            self.workers[i].strat = &self.worker_scratch[i, (6 + M) * H]
        self.t.threads = threads
        self.t.workers = self.workers
        for i in range(threads):
            self.workers[i].threads = threads
            self.workers[i].workers = self.workers
    cdef rc_real[::1] tmp

    def __init__(self, const int[::1] node_type, const int[::1] node_player, const int[::1] child_start,
                 const int[::1] num_children, const int[::1] node_slot, const double[:, ::1] amount,
                 const int[::1] strength, const int[:, ::1] hand_cards, tuple chance):
        cdef int N = node_type.shape[0], H = hand_cards.shape[0], n, a, c, q, rows, nb
        (self.node_board, self.node_mask, self.masks, self.board_perm, self.board_cards, self.board_hand_start,
         self.board_groups, self.board_group_start) = chance
        nb = self.board_hand_start.shape[0] - 1
        if (self.node_board.shape[0] != N or self.node_mask.shape[0] != N or self.masks.shape[1] != H
                or self.board_group_start.shape[0] != nb + 1 or self.board_cards.shape[0] < self.board_perm.shape[0]):
            raise ValueError("chance/board arrays do not match the tree")
        nbd = np.asarray(self.node_board)
        nm = np.asarray(self.node_mask)
        hs, gs = np.asarray(self.board_hand_start), np.asarray(self.board_group_start)
        # the last entries by explicit position: wraparound=False hands [-1] to numpy's sq_item unadjusted, which
        # numpy 2.5 rejects ("index -3 is out of bounds for axis 0 with size 2" on the GPU machine)
        if (nbd.min() < 0 or nbd.max() >= max(nb, 1) or nm.max() >= self.masks.shape[0]
                or np.any(np.diff(hs) < 0) or hs[len(hs) - 1] > self.board_perm.shape[0] or np.any(np.diff(gs) < 0)
                or gs[len(gs) - 1] > self.board_groups.shape[0]
                or (self.board_perm.shape[0] > 0 and (np.asarray(self.board_perm).min() < 0
                                                      or np.asarray(self.board_perm).max() >= H))):
            raise ValueError("board ids, mask rows or board hand orders out of range")
        if N == 0 or node_type[0] != DECISION:
            raise ValueError("the root of the flat tree must be a decision node")
        st = np.asarray(strength)
        if H == 0 or st.shape[0] != H or (H > 1 and np.any(np.diff(st) < 0)):
            raise ValueError("hands must be non-empty and sorted by non-decreasing strength")
        self.node_type, self.node_player, self.child_start = node_type, node_player, child_start
        self.num_children, self.node_slot, self.amount = num_children, node_slot, amount
        self.hand_cards = hand_cards
        starts = np.flatnonzero(np.r_[True, np.diff(st) != 0])
        self.groups = np.ascontiguousarray(np.r_[starts, H], dtype=np.intc)
        self.fold_child = np.full(N, -1, dtype=np.intc)
        self.showdown_child = np.full(N, -1, dtype=np.intc)
        self.reach_row = np.full((N, 2), -1, dtype=np.intc)
        self.reach_row[0, 0], self.reach_row[0, 1] = 0, 1
        rows = 2
        # terminals keep neither value nor reach rows (see _terminal_children)
        terminal = (np.asarray(node_type) == FOLD) | (np.asarray(node_type) == SHOWDOWN)
        vr = np.full(N, -1, dtype=np.intc)
        vr[~terminal] = np.arange(int((~terminal).sum()), dtype=np.intc)
        self.value_row = vr
        for n in range(N):
            if node_type[n] == CHANCE:
                for a in range(num_children[n]):
                    c = child_start[n] + a
                    if c <= n or self.node_mask[c] < 0:
                        raise ValueError("chance children must come after their parent and have a mask row")
                    if not terminal[c]:
                        self.reach_row[c, 0], self.reach_row[c, 1] = rows, rows + 1
                        rows += 2
                continue
            if node_type[n] != DECISION:
                continue
            q = node_player[n]
            for a in range(num_children[n]):
                c = child_start[n] + a
                if c <= n:
                    raise ValueError("children must come after their parent (breadth-first order)")
                if not terminal[c]:
                    self.reach_row[c, q] = rows
                    self.reach_row[c, 1 - q] = self.reach_row[n, 1 - q]
                    rows += 1
                if node_type[c] == FOLD and self.fold_child[n] < 0:
                    self.fold_child[n] = c
                elif node_type[c] == SHOWDOWN and self.showdown_child[n] < 0:
                    self.showdown_child[n] = c
        self.reach = np.zeros((rows, H), dtype=REAL)
        self.values = np.zeros((max(int((~terminal).sum()), 1), H), dtype=REAL)
        self.term = np.zeros((max(int(np.asarray(num_children).max()), 1), H), dtype=REAL)
        self.strat = np.zeros_like(self.term)
        self.tmp = np.zeros(6 * H, dtype=REAL)
        self.t.N = N
        self.t.H = H
        self.t.G = self.groups.shape[0] - 1
        self.t.node_type = &node_type[0]
        self.t.node_player = &node_player[0]
        self.t.child_start = &child_start[0]
        self.t.num_children = &num_children[0]
        self.t.node_slot = &node_slot[0]
        self.t.amount = &amount[0, 0]
        self.t.reach_row = &self.reach_row[0, 0]
        self.t.fold_child = &self.fold_child[0]
        self.t.showdown_child = &self.showdown_child[0]
        self.t.cards = &hand_cards[0, 0]
        self.t.group_start = &self.groups[0]
        self.t.reach = &self.reach[0, 0]
        self.t.values = &self.values[0, 0]
        self.t.value_row = &self.value_row[0]
        self.t.term = &self.term[0, 0]
        self.t.strat = &self.strat[0, 0]
        self.t.locked = NULL
        self.t.node_locked = NULL
        # breadth-first levels (nodes are in breadth-first order, so each level is a range)
        depth = np.zeros(N, dtype=np.intc)
        for n in range(N):
            if node_type[n] == DECISION or node_type[n] == CHANCE:
                depth[child_start[n]:child_start[n] + num_children[n]] = depth[n] + 1
        if np.any(np.diff(depth) < 0):
            raise ValueError("nodes must be in breadth-first order")
        self.level_start = np.ascontiguousarray(np.r_[np.searchsorted(depth, np.arange(depth[N - 1] + 1)), N],
                                                dtype=np.intc)
        self.t.L = self.level_start.shape[0] - 1
        self.t.level_start = &self.level_start[0]
        self.workers = NULL
        self.t.tmp = &self.tmp[0]
        self.t.node_board = &self.node_board[0]
        self.t.node_mask = &self.node_mask[0]
        self.t.masks = &self.masks[0, 0] if self.masks.shape[0] > 0 else NULL
        self.t.board_perm = &self.board_perm[0] if self.board_perm.shape[0] > 0 else NULL
        self.t.board_cards = &self.board_cards[0, 0] if self.board_cards.shape[0] > 0 else NULL
        self.t.board_hand_start = &self.board_hand_start[0]
        self.t.board_groups = &self.board_groups[0] if self.board_groups.shape[0] > 0 else NULL
        self.t.board_group_start = &self.board_group_start[0]
        self.set_threads(1)  # after every field of self.t is set: the workers are copies of it


def solve(const int[::1] node_type, const int[::1] node_player, const int[::1] child_start,
          const int[::1] num_children, const int[::1] node_slot, const double[:, ::1] amount,
          const int[::1] strength, const int[:, ::1] hand_cards, tuple chance, const rc_real[:, ::1] ranges,
          rc_real[:, ::1] regrets, rc_real[:, ::1] strategy_sum, const rc_real[:, ::1] locked, int start_iteration,
          int max_iterations, int dcfr, double alpha, double beta, double gamma, int check_every, double target, double[::1] expl_out,
          int threads=1):
    """Run up to ``max_iterations`` alternating updates from ``start_iteration`` (1-based), on ``threads``
    OpenMP threads (over the nodes of each tree level; results do not depend on the thread count).

    ``locked`` (``(slots, H)`` or ``(0, H)``): hands whose entry in a decision's first action row is
    >= 0 play the locked strategy there (node locking); the others adapt.
    Every ``check_every`` iterations (counted from ``start_iteration``; 0 = never) the exploitability
    (chips) of the average strategy is written to ``expl_out``; the solve stops after the first check
    at or below ``target`` chips (a negative target never stops).  Iteration ``t`` adds
    ``t^gamma`` (DCFR, ``dcfr=1``) or ``t`` (CFR+, ``dcfr=0``) times its strategy to the average;
    ``dcfr=2`` is postflop-solver's DCFR (see ``rc_update_action``; alpha/beta/gamma unused).  Returns
    ``(iterations_run, checks_written)``.
    """
    cdef _Workspace ws = _Workspace(node_type, node_player, child_start, num_children, node_slot, amount, strength,
                                    hand_cards, chance)
    ws.set_threads(threads)
    cdef Tree t = ws.t
    cdef int it, p, written = 0, done = 0, ps, p4, ta, i
    cdef Py_ssize_t slots = regrets.shape[0], H = regrets.shape[1]
    cdef double tt, w, e, pos_scale = 0.0, neg_scale = 0.0
    if (ranges.shape[0] != 2 or ranges.shape[1] != H or strategy_sum.shape[0] != slots or strategy_sum.shape[1] != H
            or H != ws.t.H):
        raise ValueError("ranges must be (2, H) and regrets/strategy_sum (slots, H)")
    if locked.shape[0] not in (0, slots) or (locked.shape[0] and locked.shape[1] != H):
        raise ValueError("locked must be (slots, H) (entries < 0: free) or empty")
    node_locked = np.zeros(ws.t.N, dtype=np.intc)
    cdef int[::1] node_locked_v = node_locked
    if locked.shape[0]:
        lk = np.asarray(locked)
        for n in range(ws.t.N):
            if ws.t.node_type[n] == DECISION and np.any(lk[ws.t.node_slot[n]] >= 0):
                node_locked[n] = 1
        t.locked = &locked[0, 0]
        t.node_locked = &node_locked_v[0]
        for i in range(t.threads):
            t.workers[i].locked = t.locked
            t.workers[i].node_locked = t.node_locked
    avg = np.zeros_like(np.asarray(regrets))
    cdef rc_real[:, ::1] avg_v = avg
    with nogil:
        _forward_player(&t, &ranges[0, 0], &regrets[0, 0], 0, 1)
        _forward_player(&t, &ranges[0, 0], &regrets[0, 0], 1, 1)
        for it in range(start_iteration, start_iteration + max_iterations):
            tt = it
            if dcfr == 2:
                # postflop-solver's DiscountParams, its iterations counted from 0
                ps = it - 1
                p4 = 0
                if ps > 0:
                    p4 = 1
                    while p4 * 4 <= ps:
                        p4 *= 4
                ta = ps - 1 if ps > 1 else 0
                pos_scale = pow(ta, 1.5) / (pow(ta, 1.5) + 1.0)
                neg_scale = 0.5
                w = pow((ps - p4) / (ps - p4 + 1.0), 3.0)
            elif dcfr:
                w = pow(tt, gamma)
                pos_scale = pow(tt, alpha) / (pow(tt, alpha) + 1.0)
                neg_scale = pow(tt, beta) / (pow(tt, beta) + 1.0)
            else:
                w = tt
            for p in range(2):
                _backward(&t, p, &regrets[0, 0], 1, 0, &regrets[0, 0], &strategy_sum[0, 0], w, dcfr, pos_scale,
                          neg_scale)
                # only p's strategy changed: refresh p's reach, the opponent's is still current
                _forward_player(&t, &ranges[0, 0], &regrets[0, 0], p, 1)
            done += 1
            if check_every > 0 and done % check_every == 0 and written < expl_out.shape[0]:
                _average(&t, &strategy_sum[0, 0], &avg_v[0, 0])
                e = _exploitability(&t, &ranges[0, 0], &avg_v[0, 0])
                expl_out[written] = e
                written += 1
                if target >= 0 and e <= target:
                    break
                _forward_player(&t, &ranges[0, 0], &regrets[0, 0], 0, 1)  # the evaluation overwrote the reaches
                _forward_player(&t, &ranges[0, 0], &regrets[0, 0], 1, 1)
    return done, written


cdef _Workspace _profile_workspace(const int[::1] node_type, const int[::1] node_player, const int[::1] child_start,
                                   const int[::1] num_children, const int[::1] node_slot, const double[:, ::1] amount,
                                   const int[::1] strength, const int[:, ::1] hand_cards, tuple chance,
                                   const rc_real[:, ::1] ranges, rc_real[:, ::1] strategy):
    """Workspace for evaluating one strategy profile, after checking the shapes of ``ranges`` and ``strategy``."""
    cdef _Workspace ws = _Workspace(node_type, node_player, child_start, num_children, node_slot, amount, strength,
                                    hand_cards, chance)
    if ranges.shape[0] != 2 or ranges.shape[1] != ws.t.H or strategy.shape[1] != ws.t.H:
        raise ValueError("ranges must be (2, H) and strategy (slots, H)")
    return ws


def exploitability(const int[::1] node_type, const int[::1] node_player, const int[::1] child_start,
                   const int[::1] num_children, const int[::1] node_slot, const double[:, ::1] amount,
                   const int[::1] strength, const int[:, ::1] hand_cards, tuple chance,
                   const rc_real[:, ::1] ranges, rc_real[:, ::1] strategy):
    """Exploitability (chips) of a per-slot ``strategy`` with ``ranges`` as the deal distribution."""
    cdef _Workspace ws = _profile_workspace(node_type, node_player, child_start, num_children, node_slot, amount,
                                            strength, hand_cards, chance, ranges, strategy)
    cdef Tree t = ws.t
    cdef double out
    with nogil:
        out = _exploitability(&t, &ranges[0, 0], &strategy[0, 0])
    return out


def root_values(const int[::1] node_type, const int[::1] node_player, const int[::1] child_start,
                const int[::1] num_children, const int[::1] node_slot, const double[:, ::1] amount,
                const int[::1] strength, const int[:, ::1] hand_cards, tuple chance,
                const rc_real[:, ::1] ranges, rc_real[:, ::1] strategy):
    """Root counterfactual values ``(2, H)`` (chips times opponent reach) of both players under ``strategy``."""
    cdef _Workspace ws = _profile_workspace(node_type, node_player, child_start, num_children, node_slot, amount,
                                            strength, hand_cards, chance, ranges, strategy)
    cdef Tree t = ws.t
    cdef int p
    out = np.zeros((2, t.H), dtype=REAL)
    cdef rc_real[:, ::1] out_v = out
    with nogil:
        _forward_player(&t, &ranges[0, 0], &strategy[0, 0], 0, 0)
        _forward_player(&t, &ranges[0, 0], &strategy[0, 0], 1, 0)
        for p in range(2):
            _backward(&t, p, &strategy[0, 0], 0, 0, NULL, NULL, 0.0, 0, 0.0, 0.0)
            memcpy(&out_v[p, 0], t.values, t.H * sizeof(rc_real))
    return out
