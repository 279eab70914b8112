# cython: language_level=3
# distutils: extra_compile_args = -ffp-contract=off
"""AIVAT's street lookahead over a chance node's boards, walked in C (issue 27, match speed).

Python API: ``cfrkit.agents.blueprint_values`` (``BlueprintValueFunction._values_on_boards``).

The street lookahead of the blueprint value function plays the rest of a street's betting with both seats'
known strategies, on B boards at once: the betting tree is the same on every board, only the policies'
probabilities (bucket rows), the leaves' table entries and equities and the showdowns differ.  A
:class:`Plan` is one betting line of that tree, built by Python once per hand and line (what the line is
does not depend on the boards) and kept: what its street value is (a fold's chips, a showdown's chips per
river equity, a policy's rows per bucket or one row for every board, or a Python policy asked on the boards),
what its leaf value is when the street value is None (a table entry ``D + S * eq``, the check-down equity value
``eq * pot - c0``, or Python's), and its children, built on first use through the ``builder``'s methods
(``plan_child``, ``plan_policy``, ``plan_leaf``, ``plan_leaf_values``, ``plan_closing``, ``plan_showdown``,
``plan_not_on_boards``).

:func:`street_values` walks the plans as Python's ``_street_boards`` walks the states: per board the same
float64 operations in the same order (``total += q * v`` over the actions in order, a child's leaf where its
street value is None), so the same numbers bit for bit; ``-ffp-contract=off`` keeps ``q * v + total`` and
``d + s * eq`` two roundings each, as numpy does.
"""
import numpy as np
cimport numpy as cnp
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy

cnp.import_array()

# a BLAS ddot (numpy's own, found by ``blueprint_values._numpy_ddot``): the closing entries' second products
ctypedef double (*_ddot_t)(long long n, const double *x, long long incx, const double *y, long long incy) noexcept nogil

# a plan's street value (Python's ``_street_boards`` at that line)
cdef enum:
    _ST_NONE = 0       # None: the parent takes the leaf value
    _ST_FOLD = 1       # a fold terminal: ``value`` on every board
    _ST_SHOWDOWN = 2   # a heads-up river showdown: ``sd[0 / 1 / 2]`` for equity 0, 1/2, 1 (NaN until asked)
    _ST_RAISE = 3      # a terminal the boards cannot share: ``builder.plan_not_on_boards()`` raises
    _ST_TABLE = 4      # ``probs[bucket of seat player on the board, action]``
    _ST_CONST = 5      # ``probs[action]`` on every board
    _ST_PY = 6         # ``builder.plan_policy(plan, idx)``: None or (actions int64[A], probs float64[n, A] or
                       # float64[A], the same on every board)
    _ST_RULES = 7      # A^R's postflop rules (heads-up) on its hand's features on each board: ``rules`` the betting's
                       # thresholds, ``rule_acts`` its actions (-1: no raise legal, the rule skipped)

# a plan's leaf value (Python's ``_leaf_boards``), asked where its street value is None
cdef enum:
    _LF_UNSET = 0      # not built yet: ``builder.plan_leaf(plan)`` sets it
    _LF_ONBOARD = 1    # ``float(d[b0, b1]) + float(s[b0, b1]) * eq``
    _LF_EQUITY = 2     # ``eq * pot - c0``
    _LF_PY = 3         # ``builder.plan_leaf_values(plan, idx)``
    _LF_CLOSING = 4    # a round-closing call: ``closing[b0, b1, 0] + closing[b0, b1, 1] * eq`` (the transition-
                       # averaged tables; NaN until ``builder.plan_closing(plan, b0s, b1s)`` fills the entries
                       # ``(b0s[j], b1s[j])``, int64 arrays: every NaN entry this leaf reads, in one call; with
                       # ``rows`` and the walk's ``ddot`` and ``tr``, the walk computes them itself: ``rows[b0, k] .
                       # tr[b1]`` as :func:`fill_closing` does, the rows it finds NaN first asked of
                       # ``builder.plan_rows(plan, b0s)``)

ST_NONE, ST_FOLD, ST_SHOWDOWN, ST_RAISE, ST_TABLE, ST_CONST, ST_PY, ST_RULES = range(8)
# ``Plan.rules`` (float64[12]) of ``ST_RULES``: what A^R's ``PostflopContext`` and constants say
R_FREE, R_RIVER, R_VALUE, R_NUT, R_RAISE_STRENGTH, R_MADE, R_DRAW_OUTS, R_NEED, R_ODDS, R_MULT, R_FOLD, R_CBET = range(12)
# ``Plan.rule_acts`` (int64[6]): the rules' actions
A_NUT, A_WET, A_DRY, A_DRAW, A_CBET, A_RAISE = range(6)
LF_UNSET, LF_ONBOARD, LF_EQUITY, LF_PY, LF_CLOSING = range(5)


cdef class Plan:
    """One betting line of a street lookahead (see the module doc); Python fills the fields, the walk reads them.

    ``state``, ``key``, ``depth``: a state of the line (any board of the street), its betting actions and its depth
    below the lookahead's root; ``policy``: the Python policy asked (``ST_PY``); ``children``: one per action of
    ``acts`` (``ST_TABLE`` / ``ST_CONST``; None until built), ``by_action``: action -> child (``ST_PY``)."""
    cdef public int street, leaf, player, depth
    cdef public long long node  # the tree node of a round-closing leaf (``LF_CLOSING``)
    cdef public double value, pot, c0
    cdef public object sd, probs, acts, d, s, closing, state, key, policy, cache, rules, rule_acts
    cdef public object rows  # ``LF_CLOSING``: None, or float64[B, 2, L] the entries' rows (NaN until computed)
    cdef public list children
    cdef public dict by_action

    def __init__(self, state, key, int depth):
        self.state = state
        self.key = key
        self.depth = depth
        self.street = _ST_NONE
        self.leaf = _LF_UNSET
        self.player = -1
        self.by_action = {}


cdef enum:
    _LEVELS = 64       # scratch levels of a walk (one per line below the root; the builder cuts lines at depth 13)


cdef class _Walk:
    cdef object builder
    cdef list feats    # per seat: None or (hs, ehs, outs, wet) of its hand on every board (``builder.plan_features``)
    cdef list shares   # per seat: None or the c-bet share flags on every board (``builder.plan_shares``)
    cdef object b0_arr, b1_arr, eq_arr  # the arrays the pointers below read (kept alive by the walk)
    cdef const long long *b0
    cdef const long long *b1
    cdef const double *eq
    cdef Py_ssize_t B
    cdef long long bmax    # the largest bucket of either hand (checked against each table's rows)
    cdef long long rec     # a board whose lines' street values are recorded (-1: none)
    cdef size_t ddot       # numpy's BLAS ddot (0: none; the closing entries through ``builder.plan_closing``)
    cdef object tr_arr     # float64[B, L] C-contiguous: the transitions of the walk's round (with ``ddot``)
    cdef list recorded     # (plan, its street value on board ``rec``) of every decision line valued on it
    # per level: B entries each of the boards of a child (sub), their places (pos), values (val), probabilities
    # (qs) and A^R's choices (choice), one block per level allocated when first reached
    cdef void *scratch[_LEVELS]

    def __cinit__(self):
        cdef int i
        for i in range(_LEVELS):
            self.scratch[i] = NULL

    def __dealloc__(self):
        cdef int i
        for i in range(_LEVELS):
            free(self.scratch[i])

    cdef char *level(self, int lvl) except NULL:
        """The scratch block of level ``lvl`` (5 x B entries of 8 bytes)."""
        if lvl >= _LEVELS:
            raise ValueError(f"street lookahead deeper than {_LEVELS} lines")
        if self.scratch[lvl] == NULL:
            self.scratch[lvl] = malloc(5 * 8 * (self.B if self.B > 0 else 1))
            if self.scratch[lvl] == NULL:
                raise MemoryError("street lookahead scratch")
        return <char *>self.scratch[lvl]


cdef inline cnp.ndarray _array(object a, int typenum, int ndim, str what):
    """``a`` itself when it is a C-contiguous ndarray of ``typenum`` and ``ndim`` dimensions (what the plans hold),
    else a C-contiguous copy of that type (the caller keeps the reference while it reads the data)."""
    cdef cnp.ndarray arr
    if (cnp.PyArray_Check(a) and cnp.PyArray_TYPE(<cnp.ndarray>a) == typenum
            and cnp.PyArray_NDIM(<cnp.ndarray>a) == ndim and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a)):
        return <cnp.ndarray>a
    arr = np.ascontiguousarray(a, dtype=np.float32 if typenum == cnp.NPY_FLOAT32 else np.float64)
    if cnp.PyArray_NDIM(arr) != ndim:
        raise ValueError(f"plan {what} must have {ndim} dimensions, got {cnp.PyArray_NDIM(arr)}")
    return arr


cdef inline int _slot(double e) noexcept:
    if e == 0.0:
        return 0
    if e == 0.5:
        return 1
    if e == 1.0:
        return 2
    return -1


cdef object _idx_array(const long long *idx, Py_ssize_t n):
    """int64[n] copy of the boards ``idx`` (for the builder's Python calls)."""
    arr = np.empty(n, dtype=np.int64)
    if n:
        memcpy(cnp.PyArray_DATA(<cnp.ndarray>arr), idx, n * sizeof(long long))
    return arr


cdef int _rows_fit(cnp.ndarray a, _Walk w, str what) except -1:
    """The buckets of the walk index rows (and columns) of ``a``: a clear error where they would not."""
    if w.bmax >= cnp.PyArray_DIM(a, 0) or (cnp.PyArray_NDIM(a) > 1 and what != "probs"
                                           and w.bmax >= cnp.PyArray_DIM(a, 1)):
        raise ValueError(f"plan {what} of shape {(<object>a).shape} is too small for bucket {w.bmax}")
    return 0


cdef int _leaf(Plan node, const long long *idx, Py_ssize_t n, double *out, _Walk w) except -1:
    cdef Py_ssize_t i, nb
    cdef long long k
    cdef const float *d
    cdef const float *s
    cdef double pot, c0
    cdef double *cl
    cdef long long x, y
    cdef Py_ssize_t nmiss
    cdef long long *miss
    cdef cnp.ndarray da, sa, ca, got, miss_arr
    if node.leaf == _LF_UNSET:
        w.builder.plan_leaf(node)
    if node.leaf == _LF_ONBOARD:
        da = _array(node.d, cnp.NPY_FLOAT32, 2, "d")
        sa = _array(node.s, cnp.NPY_FLOAT32, 2, "s")
        _rows_fit(da, w, "d")
        _rows_fit(sa, w, "s")
        d = <const float *>cnp.PyArray_DATA(da)
        s = <const float *>cnp.PyArray_DATA(sa)
        nb = cnp.PyArray_DIM(da, 1)
        for i in range(n):
            k = idx[i]
            out[i] = <double>d[w.b0[k] * nb + w.b1[k]] + <double>s[w.b0[k] * cnp.PyArray_DIM(sa, 1) + w.b1[k]] * w.eq[k]
    elif node.leaf == _LF_EQUITY:
        pot = node.pot
        c0 = node.c0
        for i in range(n):
            out[i] = w.eq[idx[i]] * pot - c0
    elif node.leaf == _LF_CLOSING:
        ca = node.closing
        if not (cnp.PyArray_TYPE(ca) == cnp.NPY_DOUBLE and cnp.PyArray_NDIM(ca) == 3
                and cnp.PyArray_IS_C_CONTIGUOUS(ca) and cnp.PyArray_ISWRITEABLE(ca) and cnp.PyArray_DIM(ca, 2) == 2):
            raise ValueError("plan closing must be a writeable C-contiguous float64[B, B, 2]")
        _rows_fit(ca, w, "closing")
        cl = <double *>cnp.PyArray_DATA(ca)
        nb = cnp.PyArray_DIM(ca, 1)
        nmiss = 0
        for i in range(n):
            k = idx[i]
            x = (w.b0[k] * nb + w.b1[k]) * 2
            if cl[x] != cl[x]:  # NaN: not read from the tables yet
                nmiss += 1
        if nmiss and w.ddot != 0 and node.rows is not None:  # computed here (fill_closing's products)
            _closing_here(node, idx, n, cl, nb, w)
        elif nmiss:  # the entries not read yet, filled in one call (a board's pair may repeat: filled once)
            miss_arr = np.empty((2, nmiss), dtype=np.int64)
            miss = <long long *>cnp.PyArray_DATA(miss_arr)
            nmiss = 0
            for i in range(n):
                k = idx[i]
                x = w.b0[k]
                y = w.b1[k]
                if cl[(x * nb + y) * 2] != cl[(x * nb + y) * 2]:
                    miss[nmiss] = x
                    miss[miss_arr.shape[1] + nmiss] = y
                    nmiss += 1
            w.builder.plan_closing(node, miss_arr[0], miss_arr[1])
        for i in range(n):
            k = idx[i]
            x = (w.b0[k] * nb + w.b1[k]) * 2
            out[i] = cl[x] + cl[x + 1] * w.eq[k]
    elif node.leaf == _LF_PY:
        got = np.ascontiguousarray(w.builder.plan_leaf_values(node, _idx_array(idx, n)), dtype=np.float64)
        if got.ndim != 1 or got.shape[0] != n:
            raise ValueError(f"plan_leaf_values gave {got.shape[0]} values for {n} boards")
        if n:
            memcpy(out, cnp.PyArray_DATA(got), n * sizeof(double))
    else:
        raise ValueError(f"plan leaf kind {node.leaf} unknown")
    return 0


cdef int _closing_here(Plan node, const long long *idx, Py_ssize_t n, double *cl, Py_ssize_t nb, _Walk w) except -1:
    """The unread (NaN) closing entries of the boards ``idx`` at ``node``: ``cl[b0, b1, k] = 0.0 + ddot(rows[b0, k],
    tr[b1])`` (numpy's ``ndarray.dot``, as :func:`fill_closing`), the rows found NaN first computed by
    ``builder.plan_rows(node, b0s)`` (each ``b0`` once)."""
    cdef cnp.ndarray ra = node.rows, ta = w.tr_arr, need
    cdef Py_ssize_t L, i, nneed = 0
    cdef long long k, x, y, e
    cdef double *rows
    cdef const double *tr
    cdef _ddot_t f = <_ddot_t>w.ddot
    cdef double total
    cdef unsigned char *listed
    if not (cnp.PyArray_TYPE(ra) == cnp.NPY_DOUBLE and cnp.PyArray_NDIM(ra) == 3 and cnp.PyArray_IS_C_CONTIGUOUS(ra)
            and cnp.PyArray_ISWRITEABLE(ra) and cnp.PyArray_DIM(ra, 1) == 2 and ta is not None
            and cnp.PyArray_TYPE(ta) == cnp.NPY_DOUBLE and cnp.PyArray_NDIM(ta) == 2
            and cnp.PyArray_IS_C_CONTIGUOUS(ta) and cnp.PyArray_DIM(ta, 1) == cnp.PyArray_DIM(ra, 2)
            and cnp.PyArray_DIM(ra, 2) >= 2 and cnp.PyArray_DIM(ta, 0) >= nb
            and cnp.PyArray_DIM(ra, 0) > w.bmax and nb > w.bmax):
        raise ValueError("plan rows must be a writeable float64[B, 2, L] and the walk's tr a float64[B, L], L >= 2")
    L = cnp.PyArray_DIM(ra, 2)
    rows = <double *>cnp.PyArray_DATA(ra)
    tr = <const double *>cnp.PyArray_DATA(ta)
    listed = <unsigned char *>calloc(cnp.PyArray_DIM(ra, 0), 1)
    if listed == NULL:
        raise MemoryError("street lookahead: closing rows")
    try:
        for i in range(n):  # the rows not computed yet (NaN), each asked once
            k = idx[i]
            x = w.b0[k]
            e = (x * nb + w.b1[k]) * 2
            if cl[e] != cl[e] and rows[x * 2 * L] != rows[x * 2 * L] and not listed[x]:
                listed[x] = 1
                nneed += 1
        if nneed:
            need = np.empty(nneed, dtype=np.int64)
            nneed = 0
            for x in range(cnp.PyArray_DIM(ra, 0)):
                if listed[x]:
                    (<long long *>cnp.PyArray_DATA(need))[nneed] = x
                    nneed += 1
            w.builder.plan_rows(node, need)
    finally:
        free(listed)
    for i in range(n):
        k = idx[i]
        x = w.b0[k]
        y = w.b1[k]
        e = (x * nb + y) * 2
        if cl[e] == cl[e]:
            continue
        total = 0.0  # numpy's DOUBLE_dot: a double sum of the BLAS chunks (one chunk here)
        total += f(L, &rows[x * 2 * L], 1, &tr[y * L], 1)
        cl[e] = total
        total = 0.0
        total += f(L, &rows[x * 2 * L + L], 1, &tr[y * L], 1)
        cl[e + 1] = total
    return 0


cdef int _child(Plan node, Plan child, const long long *sub, Py_ssize_t m, double *val, _Walk w, int lvl) except -1:
    """A child's street value on the boards ``sub``, its leaf value where that is None."""
    if not _street(child, sub, m, val, w, lvl):
        _leaf(child, sub, m, val, w)
    return 0


cdef int _street(Plan node, const long long *idx, Py_ssize_t n, double *out, _Walk w, int lvl) except -1:
    """1 with the street values of the boards ``idx`` in ``out``, 0 where the street value is None.  ``lvl``: this
    line's scratch level (its children's walks use the next)."""
    cdef Py_ssize_t i, j, m, u, A, ncol
    cdef int kind = node.street, slot
    cdef double *sd
    cdef const double *rows
    cdef const double *cst
    cdef const long long *bk
    cdef char *blk
    cdef long long *sub
    cdef Py_ssize_t *pos
    cdef double *val
    cdef double *qs
    cdef double q
    cdef bint flat
    cdef Plan child
    cdef object acts, got
    cdef cnp.ndarray pa, sda
    if kind == _ST_NONE:
        return 0
    if kind == _ST_FOLD:
        for i in range(n):
            out[i] = node.value
        return 1
    if kind == _ST_SHOWDOWN:
        sda = node.sd
        if not (cnp.PyArray_TYPE(sda) == cnp.NPY_DOUBLE and cnp.PyArray_NDIM(sda) == 1
                and cnp.PyArray_IS_C_CONTIGUOUS(sda) and cnp.PyArray_ISWRITEABLE(sda) and sda.shape[0] >= 3):
            raise ValueError("plan sd must be a writeable float64[3]")
        sd = <double *>cnp.PyArray_DATA(sda)
        for i in range(n):
            slot = _slot(w.eq[idx[i]])
            if slot < 0:
                out[i] = w.builder.plan_showdown(node, idx[i])
                continue
            if sd[slot] != sd[slot]:  # NaN: this outcome not asked yet
                sd[slot] = w.builder.plan_showdown(node, idx[i])
            out[i] = sd[slot]
        return 1
    if kind == _ST_RAISE:
        w.builder.plan_not_on_boards()
        raise ValueError("plan_not_on_boards did not raise")
    if kind == _ST_RULES:
        _rules(node, idx, n, out, w, lvl)
        _record(node, idx, n, out, w)
        return 1
    blk = w.level(lvl)
    sub = <long long *>blk
    pos = <Py_ssize_t *>(blk + 8 * w.B)
    val = <double *>(blk + 16 * w.B)
    qs = <double *>(blk + 24 * w.B)
    for i in range(n):
        out[i] = 0.0
    if kind == _ST_TABLE or kind == _ST_CONST:
        A = len(node.children)
        pa = _array(node.probs, cnp.NPY_DOUBLE, 2 if kind == _ST_TABLE else 1, "probs")
        if kind == _ST_TABLE:
            _rows_fit(pa, w, "probs")
            if cnp.PyArray_DIM(pa, 1) < A:
                raise ValueError(f"plan probs of shape {(<object>pa).shape} for {A} actions")
            rows = <const double *>cnp.PyArray_DATA(pa)
            ncol = cnp.PyArray_DIM(pa, 1)
            bk = w.b0 if node.player == 0 else w.b1
        else:
            if cnp.PyArray_DIM(pa, 0) < A:
                raise ValueError(f"plan probs of shape {(<object>pa).shape} for {A} actions")
            cst = <const double *>cnp.PyArray_DATA(pa)
        for u in range(A):
            m = 0
            for i in range(n):
                q = rows[bk[idx[i]] * ncol + u] if kind == _ST_TABLE else cst[u]
                if q > 0:
                    sub[m] = idx[i]
                    pos[m] = i
                    qs[m] = q
                    m += 1
            if m == 0:
                continue
            child = node.children[u]
            if child is None:
                child = w.builder.plan_child(node, int(node.acts[u]))
                node.children[u] = child
            _child(node, child, sub, m, val, w, lvl + 1)
            for j in range(m):
                out[pos[j]] += qs[j] * val[j]
        _record(node, idx, n, out, w)
        return 1
    if kind != _ST_PY:
        raise ValueError(f"plan street kind {kind} unknown")
    got = w.builder.plan_policy(node, _idx_array(idx, n))
    if got is None:
        return 0
    acts = got[0]
    pa = np.ascontiguousarray(got[1], dtype=np.float64)
    A = len(acts)
    flat = pa.ndim == 1  # one row for every board
    if flat:
        if pa.shape[0] != A:
            raise ValueError(f"plan_policy gave {pa.shape[0]} probabilities for {A} actions")
    elif pa.ndim != 2 or pa.shape[0] != n or pa.shape[1] != A:
        raise ValueError(f"plan_policy gave probs of shape {(<object>pa).shape} for {n} boards and {A} actions")
    rows = <const double *>cnp.PyArray_DATA(pa)
    for u in range(A):
        m = 0
        for i in range(n):
            q = rows[u] if flat else rows[i * A + u]
            if q > 0:
                sub[m] = idx[i]
                pos[m] = i
                qs[m] = q
                m += 1
        if m == 0:
            continue
        a = int(acts[u])
        child = node.by_action.get(a)
        if child is None:
            child = w.builder.plan_child(node, a)
            node.by_action[a] = child
        _child(node, child, sub, m, val, w, lvl + 1)
        for j in range(m):
            out[pos[j]] += qs[j] * val[j]
    _record(node, idx, n, out, w)
    return 1


cdef inline int _record(Plan node, const long long *idx, Py_ssize_t n, double *out, _Walk w) except -1:
    """Append ``(node, its value on board w.rec)`` to ``w.recorded`` where that board is among ``idx`` (the boards
    of a walk stay in increasing order down the tree: the recorded board, the last, is last when present)."""
    if w.rec >= 0 and n > 0 and idx[n - 1] == w.rec:
        w.recorded.append((node, out[n - 1]))
    return 0


cdef inline long long _choose(const double[::1] par, const long long[::1] acts, double hs, double ehs,
                              long long outs, bint wet, int share) noexcept:
    """A^R's pure choice on one board (``RuleBasedAgent._postflop_rules`` with one opponent: the first matching rule
    wins) from its hand's features there; ``share``: the c-bet share flag, or -1 when not known yet: then -2 is
    returned where the c-bet rule is reached (the caller asks the share and chooses again)."""
    cdef double st = hs if par[1] != 0.0 else ehs  # strength ** 1 (heads-up): hs on the river
    cdef bint value
    if par[0] != 0.0:  # free to act: check or bet
        value = st >= par[2]
        if acts[0] >= 0 and hs >= par[3] and value:
            return acts[0]
        if acts[1] >= 0 and value and wet:
            return acts[1]
        if acts[2] >= 0 and value and not wet:
            return acts[2]
        if acts[3] >= 0 and outs >= par[6]:
            return acts[3]
        if acts[4] >= 0 and par[11] != 0.0:
            if share < 0:
                return -2
            if share:
                return acts[4]
        return 1  # CALL
    if acts[5] >= 0 and st >= par[4] and (par[1] != 0.0 or hs >= par[5]):
        return acts[5]
    if st >= par[7]:
        return 1
    if outs >= par[6] and (<double>outs / 46.0) * par[9] >= par[8]:
        return 1
    return 0 if par[10] != 0.0 else 1  # fold where legal, else check


def rules_action(rules, rule_acts, double hs, double ehs, long long outs, bint wet, int share=-1):
    """A^R's action on one board by its postflop rules (heads-up), what :func:`street_values` plays at an
    ``ST_RULES`` line: ``rules`` float64[12] and ``rule_acts`` int64[6] as in ``Plan.rules`` / ``Plan.rule_acts``,
    the hand's features there (``hs``, ``ehs``, ``outs``, ``wet``) and the c-bet share flag (``share`` 0 / 1, or -1
    when not known: then -2 where the c-bet rule is reached and the share decides).  The one-board walk of the
    value function asks it instead of the agent's ``act`` (the same action, without the rules' numpy masks)."""
    cdef const double[::1] par = np.ascontiguousarray(rules, dtype=np.float64)
    cdef const long long[::1] acts = np.ascontiguousarray(rule_acts, dtype=np.int64)
    if par.shape[0] != 12 or acts.shape[0] != 6:
        raise ValueError(f"rules_action needs 12 rules and 6 actions, got {par.shape[0]} and {acts.shape[0]}")
    return _choose(par, acts, hs, ehs, outs, wet, share)


cdef int _rules(Plan node, const long long *idx, Py_ssize_t n, double *out, _Walk w, int lvl) except -1:
    """A^R's pure choice on each board by its postflop rules (:func:`_choose`), then the children's values
    (``0.0 + 1.0 * v``, as the Python walk sums them)."""
    cdef Py_ssize_t i, j, m, u
    cdef int p = node.player
    cdef const double[::1] hs, ehs, par
    cdef const long long[::1] outs, acts
    cdef const unsigned char[::1] wet
    cdef char *blk = w.level(lvl)
    cdef long long *sub = <long long *>blk
    cdef Py_ssize_t *pos = <Py_ssize_t *>(blk + 8 * w.B)
    cdef double *val = <double *>(blk + 16 * w.B)
    cdef long long *choice = <long long *>(blk + 32 * w.B)
    cdef long long a, k
    cdef list seen = []
    feats = w.feats[p]
    if feats is None:
        feats = w.feats[p] = w.builder.plan_features(node)
    hs, ehs, outs, wet = feats
    par = node.rules
    acts = node.rule_acts
    for i in range(n):
        k = idx[i]
        a = _choose(par, acts, hs[k], ehs[k], outs[k], wet[k] != 0, -1)
        if a == -2:  # the c-bet rule reached: the share on this board decides
            a = _choose(par, acts, hs[k], ehs[k], outs[k], wet[k] != 0, 1 if _share(node, w, p, k) else 0)
        choice[i] = a
        if a not in seen:
            seen.append(a)
    cdef Plan child
    for i in range(n):
        out[i] = 0.0
    for u in range(len(seen)):
        a = seen[u]
        m = 0
        for i in range(n):
            if choice[i] == a:
                sub[m] = idx[i]
                pos[m] = i
                m += 1
        child = node.by_action.get(a)
        if child is None:
            child = w.builder.plan_child(node, a)
            node.by_action[a] = child
        _child(node, child, sub, m, val, w, lvl + 1)
        for j in range(m):
            out[pos[j]] += 1.0 * val[j]
    return 1


cdef bint _share(Plan node, _Walk w, int p, long long k) except -1:
    """Whether board ``k`` is in A^R's c-bet share for its hand (asked only where the c-bet rule applies)."""
    cdef const unsigned char[::1] share
    if node.rules[11] == 0.0:
        return False
    got = w.shares[p]
    if got is None:
        got = w.shares[p] = np.ascontiguousarray(w.builder.plan_shares(node), dtype=np.uint8)
    share = got
    return share[k] != 0


def street_values(Plan root, builder, b0, b1, eq, long long record=-1, list recorded=None, size_t ddot=0, tr=None):
    """float64[B]: the street lookahead's value (seat 0's chips) on each of B boards from ``root``, or None where
    its street value is None.  ``b0``, ``b1`` int64[B]: the two hands' buckets of the street's round on each board
    (read by ``ST_TABLE`` and ``LF_ONBOARD``); ``eq`` float64[B]: seat 0's showdown equity on each board.
    ``record`` (the last board, B - 1, or -1: none): every decision line (``ST_TABLE``, ``ST_CONST``, ``ST_PY``,
    ``ST_RULES``) whose street value is computed on that board is appended to ``recorded`` as ``(plan, value)``.
    ``ddot`` (the address of numpy's BLAS ddot, ``blueprint_values._numpy_ddot``) and ``tr`` (float64[B, L] C-contiguous,
    the transitions of the street's round): the closing entries of leaves with ``rows`` are computed in the walk."""
    cdef _Walk w = _Walk()
    cdef Py_ssize_t B, i
    cdef cnp.ndarray idx, out
    w.builder = builder
    w.rec = record
    w.recorded = recorded
    w.feats = [None, None]
    w.shares = [None, None]
    w.b0_arr = np.ascontiguousarray(b0, dtype=np.int64)
    w.b1_arr = np.ascontiguousarray(b1, dtype=np.int64)
    w.eq_arr = np.ascontiguousarray(eq, dtype=np.float64)
    if w.b0_arr.ndim != 1 or w.b1_arr.ndim != 1 or w.eq_arr.ndim != 1:
        raise ValueError("street_values: b0, b1 and eq must be one-dimensional")
    B = w.eq_arr.shape[0]
    if w.b0_arr.shape[0] != B or w.b1_arr.shape[0] != B:
        raise ValueError(f"street_values: {w.b0_arr.shape[0]} and {w.b1_arr.shape[0]} buckets for {B} equities")
    if record >= 0 and (record != B - 1 or recorded is None):
        raise ValueError(f"street_values: record must be the last board ({B - 1}) with a list to append to, got "
                         f"{record}")
    w.B = B
    w.ddot = ddot
    w.tr_arr = tr if ddot != 0 else None
    w.b0 = <const long long *>cnp.PyArray_DATA(<cnp.ndarray>w.b0_arr)
    w.b1 = <const long long *>cnp.PyArray_DATA(<cnp.ndarray>w.b1_arr)
    w.eq = <const double *>cnp.PyArray_DATA(<cnp.ndarray>w.eq_arr)
    w.bmax = 0
    for i in range(B):
        if w.b0[i] < 0 or w.b1[i] < 0:
            raise ValueError(f"street_values: negative bucket on board {i}")
        if w.b0[i] > w.bmax:
            w.bmax = w.b0[i]
        if w.b1[i] > w.bmax:
            w.bmax = w.b1[i]
    idx = np.arange(B, dtype=np.int64)
    out = np.empty(B, dtype=np.float64)
    if not _street(root, <const long long *>cnp.PyArray_DATA(idx), B, <double *>cnp.PyArray_DATA(out), w, 0):
        return None
    return out




def dot_rows(size_t ddot, const double[:, ::1] rows, const long long[::1] ri, const double[:, ::1] cols,
             const long long[::1] ci):
    """float64[m]: ``rows[ri[j]] . cols[ci[j]]`` for each ``j`` as numpy's ``ndarray.dot`` of two contiguous float64
    vectors computes it -- ``0.0 + ddot(L, x, 1, y, 1)`` with ``ddot`` the address of the BLAS ``cblas_ddot`` numpy
    calls (``BlueprintValueTable.closing_many``'s second products: the same doubles, without a numpy call per
    entry).  ``rows`` float64[k, L], ``cols`` float64[c, L] (``L`` >= 2: numpy multiplies one-element vectors as
    scalars), ``ri`` / ``ci`` int64[m] row indices."""
    cdef Py_ssize_t m = ri.shape[0], L = rows.shape[1], j
    cdef _ddot_t f = <_ddot_t>ddot
    cdef double total
    if ddot == 0:
        raise ValueError("dot_rows: no ddot address")
    if L < 2:  # numpy takes a one-element dot as a scalar product (-0.0 stays -0.0), not by ddot
        raise ValueError(f"dot_rows: rows of {L} entries; at least 2")
    if cols.shape[1] != L or ci.shape[0] != m:
        raise ValueError(f"dot_rows: rows of {L} and columns of {cols.shape[1]} entries, {m} and {ci.shape[0]} "
                         "indices")
    for j in range(m):
        if not (0 <= ri[j] < rows.shape[0] and 0 <= ci[j] < cols.shape[0]):
            raise ValueError(f"dot_rows: index pair ({ri[j]}, {ci[j]}) outside {rows.shape[0]} rows and "
                             f"{cols.shape[0]} columns")
    out_arr = np.empty(m, dtype=np.float64)
    cdef double[::1] out = out_arr
    with nogil:
        for j in range(m):
            total = 0.0  # numpy's DOUBLE_dot: a double sum of the BLAS chunks (one chunk here)
            total += f(L, &rows[ri[j], 0], 1, &cols[ci[j], 0], 1)
            out[j] = total
    return out_arr


def fill_closing(size_t ddot, double[:, :, ::1] closing, const double[:, :, ::1] rows, const double[:, ::1] tr,
                 const long long[::1] b0s, const long long[::1] b1s):
    """``closing[b0, b1, k] = rows[b0, k] . tr[b1]`` (k = 0, 1) for each pair ``(b0s[j], b1s[j])``, each product as
    :func:`dot_rows` computes it (numpy's ``ndarray.dot``: ``0.0 + ddot``): a street lookahead's round-closing entries
    ``(tr[b0] @ D) @ tr[b1]`` and ``(tr[b0] @ S) @ tr[b1]`` from their rows ``rows[b0]`` (float64[B, 2, L], computed by
    the caller for every ``b0`` asked), written into the walk's dense table ``closing`` (float64[B, B', 2])."""
    cdef Py_ssize_t m = b0s.shape[0], L = rows.shape[2], j
    cdef _ddot_t f = <_ddot_t>ddot
    cdef long long x, y
    cdef double total
    if ddot == 0:
        raise ValueError("fill_closing: no ddot address")
    if L < 2:
        raise ValueError(f"fill_closing: rows of {L} entries; at least 2")
    if tr.shape[1] != L or rows.shape[1] != 2 or closing.shape[2] != 2 or b1s.shape[0] != m:
        raise ValueError("fill_closing: rows float64[B, 2, L], tr float64[B', L], closing float64[B, B', 2] and as "
                         "many b1s as b0s")
    for j in range(m):
        if not (0 <= b0s[j] < rows.shape[0] and b0s[j] < closing.shape[0] and 0 <= b1s[j] < tr.shape[0]
                and b1s[j] < closing.shape[1]):
            raise ValueError(f"fill_closing: entry ({b0s[j]}, {b1s[j]}) outside the tables")
    with nogil:
        for j in range(m):
            x = b0s[j]
            y = b1s[j]
            total = 0.0
            total += f(L, &rows[x, 0, 0], 1, &tr[y, 0], 1)
            closing[x, y, 0] = total
            total = 0.0
            total += f(L, &rows[x, 1, 0], 1, &tr[y, 0], 1)
            closing[x, y, 1] = total
    return None
