# cython: language_level=3
"""Range-vectorised CFR+ / DCFR over a flat public tree (hold'em river subgames, and turn subgames with one board card
dealt by chance).

The whole solve (iterations, periodic exploitability, stopping at a target) runs in C without the GIL.
Layout:

* nodes in breadth-first order with contiguous children (children after their parent):
  ``node_type`` (0 decision, 1 fold, 2 showdown), ``node_player`` (acting player of a decision),
  ``child_start``/``num_children``, ``node_slot`` (first row of the node's actions in the per-action
  arrays), ``amount[n, p]`` (terminal payoff multiplier of player ``p``: a fold pays
  ``+-contribution``, a showdown ``contribution``);
* hands sorted by increasing showdown strength (the caller permutes its ranges): ``hand_cards[h, 2]``
  and ``strength[h]`` (non-decreasing), so every sweep reads and writes memory in order;
* per-action arrays ``regrets``, ``strategy_sum``, ``sigma``: ``(slots, H)``.

Chance nodes (``node_type`` 3, turn subgames): ``amount[n, 0]`` is the probability of each dealt card;
child ``c`` has a hand mask ``masks[node_mask[c]]`` (0 for hands holding the dealt card) that multiplies
both players' reach into the child and the child's values back into the chance node.  Every hand row
stays in the root's hand order; a showdown on another board (``node_board[c] >= 1``) gathers the
opponent's reach into that board's strength order (``board_perm``, ``board_cards``, runs
``board_groups``), sweeps and scatters the values back (blocked hands get 0).  Folds need no order.

Showdown and fold values use O(H) card-removal sweeps (per-card prefix masses).  A player's reach
only changes at that player's own decisions, so the reach buffer stores one row per (node, player)
only where it changes; other (node, player) pairs alias their parent's row (``reach_row``).
"""
import numpy as np

cdef extern from *:
    """typedef double rc_real;"""
    ctypedef double rc_real

REAL = np.float64

include "range_cfr_core.pxi"
