"""Grid movement helpers shared by the SymmToM agents and the theory-of-mind tests: distances,
greedy steps and shortest paths around occupied cells on the ``width x width`` board."""
from __future__ import annotations

from typing import Iterable, Set, Tuple

from cfrkit.games.symmtom.core import DOWN, LEFT, MOVE_DELTAS, RIGHT, STAY, UP

Cell = Tuple[int, int]


def manhattan(a: Cell, b: Cell) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def steps_to_range(a: Cell, b: Cell, h: int) -> int:
    """Moves needed from ``a`` to reach a cell within Chebyshev distance ``h`` of ``b``."""
    return max(0, abs(a[0] - b[0]) - h) + max(0, abs(a[1] - b[1]) - h)


def step_toward(me: Cell, target: Cell, width: int, blocked: Iterable[Cell] = (), rows_first: bool = True) -> int:
    """A move that brings ``me`` one step closer (Manhattan) to ``target`` avoiding ``blocked``
    cells; rows first unless ``rows_first`` is False; STAY when no such move exists."""
    blocked_set: Set[Cell] = set(blocked)
    dr, dc = target[0] - me[0], target[1] - me[1]
    row_move = DOWN if dr > 0 else UP if dr < 0 else None
    col_move = RIGHT if dc > 0 else LEFT if dc < 0 else None
    order = [row_move, col_move] if rows_first else [col_move, row_move]
    for m in order:
        if m is None:
            continue
        r, c = me[0] + MOVE_DELTAS[m][0], me[1] + MOVE_DELTAS[m][1]
        if 0 <= r < width and 0 <= c < width and (r, c) not in blocked_set:
            return m
    return STAY


def path_step(me: Cell, target: Cell, width: int, blocked: Iterable[Cell] = ()) -> int:
    """First move of a shortest path from ``me`` to ``target`` around ``blocked`` cells (breadth-first
    search; among equally short paths, row moves first).  When ``blocked`` cells cut ``me`` off, the
    greedy move ignoring them (the occupant may move away or swap)."""
    if me == target:
        return STAY
    blocked_set: Set[Cell] = set(blocked)
    blocked_set.discard(target)
    blocked_set.discard(me)
    if not blocked_set or all(manhattan(b, me) + manhattan(b, target) > manhattan(me, target) + 2 for b in blocked_set):
        return step_toward(me, target, width)
    dist = {target: 0}
    frontier = [target]
    while frontier and me not in dist:
        nxt = []
        for cell in frontier:
            d = dist[cell] + 1
            for dr, dc in MOVE_DELTAS[1:]:
                q = (cell[0] + dr, cell[1] + dc)
                if 0 <= q[0] < width and 0 <= q[1] < width and q not in dist and q not in blocked_set:
                    dist[q] = d
                    nxt.append(q)
        frontier = nxt
    if me not in dist:
        return step_toward(me, target, width)
    first = step_toward(me, target, width)
    order = [first] + [m for m in (UP, DOWN, LEFT, RIGHT) if m != first]
    for m in order:
        q = (me[0] + MOVE_DELTAS[m][0], me[1] + MOVE_DELTAS[m][1])
        if dist.get(q, -1) == dist[me] - 1:
            return m
    return first


def center_cell(width: int) -> Cell:
    """The centre cell the heuristic walks to (the upper-left of the four central cells when w is even)."""
    return ((width - 1) // 2, (width - 1) // 2)
