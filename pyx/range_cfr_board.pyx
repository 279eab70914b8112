# cython: language_level=3
"""Range-vectorised CFR+ / DCFR over a public tree with one hand space per board (river, turn and flop
subgames), depth first, float64 storage.

Layout (built by ``cfrkit.solvers.public.board_range_cfr.BoardLayout``):

* nodes with contiguous children: ``node_type`` (0 decision, 1 fold, 2 showdown, 3 chance), ``node_player``,
  ``child_start``/``num_children``, ``amount[n, p]`` (terminal payoff multiplier; a chance node's card
  probability in ``[n, 0]``);
* hand spaces: every node works on the hands of its space (``node_space``): the root's live hands, and
  after each dealt card only the hands that card does not block.  A 5-card board's space is sorted by
  showdown strength (runs of equal strength in ``space_groups``), so showdowns sweep it in place;
* a chance child's ``maps`` row sends each of its hands to the parent's hand: reach is gathered down
  through it and values are added back up (hands blocked by the card get nothing);
* suit isomorphism: a chance child with ``is_copy`` is not walked: the values of its canonical sibling
  (the card of the same rank with the swapped suit) are added through the copy's own suit-permuted map
  (``iso_next`` chains the copies of a canonical child);
* regrets and strategy sums: one ``(A, H)`` block per decision at ``node_offset``.

One depth-first pass per player and iteration (no reach or value rows are stored: scratch per depth),
threads over the children of chance nodes.
"""
import numpy as np

cdef extern from *:
    """typedef double rc_real;"""
    ctypedef double rc_real

REAL = np.float64

include "range_cfr_board_core.pxi"
