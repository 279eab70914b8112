# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""One hand against a range over many boards (Cython). Python API: cfrkit.cards.range_equity.

Strength rows are int32[B, 1326] hand classes (1..7462, 0 = the pair touches that board), from
``cfrkit.cards.equity.board_strengths_batch``; ranges are float64[1326] in the pair order of
cfrkit.cards.hands.
"""
import numpy as np
cimport numpy as cnp

cnp.import_array()


def hand_vs_range_rows(const int[:, ::1] strengths, int hand, const double[::1] weights):
    """Per board: (win, tie, compatible) opponent weight of pair ``hand`` against ``weights``.

    Boards where ``hand`` is blocked (strength 0) give zeros.  Opponent pairs touching a board are
    skipped there (strength 0); the caller zeroes the weights of pairs sharing a card with ``hand``.
    Returns three float64[B] arrays.  O(B * 1326).
    """
    cdef Py_ssize_t nb = strengths.shape[0], b, j
    if strengths.shape[1] != 1326 or weights.shape[0] != 1326:
        raise ValueError("strengths must be (B, 1326) and weights (1326,)")
    if not 0 <= hand < 1326:
        raise ValueError(f"hand must be a pair index 0..1325, got {hand}")
    win = np.zeros(nb)
    tie = np.zeros(nb)
    compat = np.zeros(nb)
    cdef double[::1] w_ = win, t_ = tie, c_ = compat
    cdef int sh, sj
    cdef double x, cw, tw, ww
    with nogil:
        for b in range(nb):
            sh = strengths[b, hand]
            if sh == 0:
                continue
            cw = 0.0
            tw = 0.0
            ww = 0.0
            for j in range(1326):
                x = weights[j]
                if x == 0.0:
                    continue
                sj = strengths[b, j]
                if sj == 0:
                    continue
                cw += x
                if sh > sj:
                    ww += x
                elif sh == sj:
                    tw += x
            w_[b] = ww
            t_[b] = tw
            c_[b] = cw
    return win, tie, compat
