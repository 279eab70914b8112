# cython: language_level=3
"""A^R's postflop features of one hole pair, compiled (Python API: cfrkit.agents.rule_based.BoardFeatures).

The rule-based agent needs, for its own pair only, the strength against a uniform opponent now and
after each sampled next card.  The Python reference (``rule_based._masses`` with ``rows``) builds
[B, 1225] arrays per pair; this loop counts the same integers and forms the same float64 quotients
in the same order, so the results are bit-for-bit equal (tests/test_platform_fast.py checks it).
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t

cnp.import_array()


cdef inline double _strength(const int32_t* row, const int64_t* opp, Py_ssize_t n_opp, int32_t own) noexcept nogil:
    """Win + tie/2 share of ``own`` against the opponent pairs ``opp`` of ``row`` (0 if none is live)."""
    cdef Py_ssize_t j
    cdef int32_t v
    cdef long w = 0, l = 0, c = 0
    for j in range(n_opp):
        v = row[opp[j]]
        if v > 0:
            c += 1
            if v < own:
                w += 1
            elif v > own:
                l += 1
    if c <= 0:
        return 0.0
    cdef double dw = <double>w, dl = <double>l, dc = <double>c
    return (dw + 0.5 * ((dc - dw) - dl)) / (dc if dc > 1e-12 else 1e-12)


def pair_row_features(const int32_t[::1] now, const int32_t[:, ::1] nxt, const int64_t[::1] opp, Py_ssize_t r):
    """Features of pair ``r`` on a board and on its sampled next boards.

    now: int32[1326] strengths on the board (0 = blocked); nxt: int32[S, 1326] strengths on the S
    next boards (S may be 0); opp: int64 indices of the pairs sharing no card with ``r``.
    Returns ``(hs, blocked, ehs_total, count, hits)``: the share won (+ half the ties) against a
    uniform opponent now (0 when blocked), whether ``r`` is blocked, the sum of that share over the
    next boards where ``r`` is live, their number, and how many of them lift it to >= 0.85.
    """
    if not 0 <= r < now.shape[0] or nxt.shape[0] > 0 and nxt.shape[1] != now.shape[0]:
        raise ValueError("pair_row_features: pair index or array shapes out of range")
    cdef Py_ssize_t n_opp = opp.shape[0], s, ns = nxt.shape[0], j
    if n_opp == 0:
        raise ValueError("pair_row_features: no opponent pairs")
    for j in range(n_opp):
        if not 0 <= opp[j] < now.shape[0]:
            raise ValueError("pair_row_features: opponent pair index out of range")
    cdef int32_t own = now[r]
    cdef double hs = 0.0, total = 0.0, x
    cdef long count = 0, hits = 0
    with nogil:
        if own > 0:
            hs = _strength(&now[0], &opp[0], n_opp, own)
        for s in range(ns):
            own = nxt[s, r]
            if own > 0:
                x = _strength(&nxt[s, 0], &opp[0], n_opp, own)
                total += x
                count += 1
                if x >= 0.85:
                    hits += 1
    return hs, bool(now[r] == 0), total, count, hits
