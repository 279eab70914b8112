"""One-call solving of a hold'em postflop spot, with per-hand and per-class reports.

:func:`solve_spot` builds the spot as postflop-solver builds it
(:class:`~cfrkit.solvers.public.postflop_game.PostflopPublicGame`: board, starting pot, effective
stack, bet sizes per street and player written ``"33%, 75%, a"``), solves it with the compiled range
solver to a target exploitability in % of the pot, and returns a :class:`SpotResult`:

* ``exploitability`` (chips) and ``exploitability_pct`` (% of the starting pot);
* nodes by their action labels (``result.node("check", "bet 50")``), each with its player and
  labels (``check``, ``bet 50``, ``raise 150``, ``all-in 900``, ``call``, ``fold``; amounts in chips
  put in on the street);
* per hand: the strategy at any node (NaN for hands not in the player's range there), the expected
  value and the equity at the root;
* reports: action frequencies by hand class (``AKs``) and by made-hand category, weighted by the
  player's range at the node; ``to_rows`` / ``to_pandas`` / ``to_csv``;
* ``save(path)`` and :func:`load_spot` (the tree is rebuilt from the stored parameters, the strategy
  restored).

Player 0 is out of position (OOP, acts first on each street), player 1 in position (IP).
"""
from __future__ import annotations

import json
import math
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.cards.encoding import as_card_ids, cards_to_string
from cfrkit.cards.equity import ehs
from cfrkit.cards.evaluator import CATEGORY_NAMES, evaluate_batch, hand_category
from cfrkit.cards.hands import HOLE_PAIRS, NUM_PAIRS, PAIR_STRINGS
from cfrkit.cards.ranges import CLASS_LABELS, PAIR_CLASSES, range_vector
from cfrkit.games.base import GameError
from cfrkit.policy import PolicyFileError, load_npz_checked, save_npz_atomic
from cfrkit.solvers.public.postflop_game import PostflopPublicGame
from cfrkit.solvers.public.solver import SubgameSolver
from cfrkit.solvers.public.tree import CHANCE_NODE, DECISION, PublicNode, build_public_tree

SPOT_MAGIC = "cfrkit-spot"
# Peak bytes of solve_spot per (public node, live hand): about six float64 arrays of that shape (regrets,
# strategy sums, the exploitability and root-value passes); tracemalloc peaks of a 20-iteration solve: 48.5
# (river, 45 nodes) and 37.8 (turn, 6,333 nodes) bytes, so 50 errs high.
BYTES_PER_NODE_HAND = 50
PLAYER_NAMES = ("OOP", "IP")


class SpotNode:
    """A decision node of a solved spot: ``player`` (0 OOP, 1 IP), ``labels`` of its actions,
    ``path`` (labels from the root; board cards dealt on the way appear as card strings)."""

    def __init__(self, result: "SpotResult", node: PublicNode, path: Tuple[str, ...]):
        self._result = result
        self.index = node.index
        self.player = node.player
        self.board = tuple(node.board)
        self.path = path
        self.labels = tuple(result.game.action_label(node.state, a) for a in node.actions)

    def __repr__(self) -> str:
        where = " > ".join(self.path) or "root"
        return f"<SpotNode {where}: {PLAYER_NAMES[self.player]} to act, {', '.join(self.labels)}>"


class SpotResult:
    """A solved spot (see the module docstring).  Chips throughout; EVs are what a hand expects to
    take from the pot (its share of the starting pot plus chips won, minus chips it puts in)."""

    def __init__(self, game: PostflopPublicGame, tree, solver: SubgameSolver, ranges: np.ndarray,
                 params: Dict, seconds: float):
        self.game, self.tree, self.solver = game, tree, solver
        self.ranges = ranges
        self.params = params
        self.seconds = float(seconds)
        self.iterations = solver.iterations
        self.pot = float(game.starting_pot)
        self._strategy = solver.average_strategy()
        self.exploitability = float(solver.exploitability())
        self.exploitability_pct = 100.0 * self.exploitability / self.pot
        self._values: Optional[np.ndarray] = None
        self.stopped = False  # True when solve_spot's stop hook ended the solve before the target

    # ------------------------------------------------------------------ navigation
    @property
    def root(self) -> SpotNode:
        """The first decision node (OOP to act)."""
        return self.node()

    def node(self, *labels: str) -> SpotNode:
        """The decision node reached by action labels from the root (``"check"``, ``"bet 50"``; a
        board card such as ``"Qs"`` after a street ends).  Raises GameError naming the choices."""
        node = self.tree.root
        path: List[str] = []
        for label in labels:
            node = self._child(node, str(label))
            path.append(str(label))
        node = self._skip_to_decision(node, path, labels)
        return SpotNode(self, node, tuple(path))

    def _child(self, node: PublicNode, label: str) -> PublicNode:
        if node.kind == DECISION:
            names = [self.game.action_label(node.state, a) for a in node.actions]
        elif node.kind == CHANCE_NODE:
            names = [cards_to_string([c], "") for c in node.actions]
        else:
            raise GameError(f"no action {label!r}: the hand is over at this node")
        if label not in names:
            raise GameError(f"no action {label!r} here; choices: {', '.join(names)}")
        return self.tree.nodes[node.children[names.index(label)]]

    def _skip_to_decision(self, node: PublicNode, path: List[str], labels) -> PublicNode:
        if node.kind == DECISION:
            return node
        if node.kind == CHANCE_NODE:
            raise GameError(f"after {' > '.join(labels)} a card is dealt: add one of "
                            f"{', '.join(cards_to_string([c], '') for c in node.actions[:8])} ...")
        raise GameError(f"after {' > '.join(labels) or 'the root'} the hand is over (no decision)")

    # ------------------------------------------------------------------ per hand
    def reach(self, node: SpotNode) -> np.ndarray:
        """float64[1326]: the acting player's range at ``node`` (root range times its own action
        probabilities on the path; hands blocked by cards dealt on the way removed)."""
        chain = []
        n = self.tree.nodes[node.index]
        while n.parent >= 0:
            parent = self.tree.nodes[n.parent]
            chain.append((parent, parent.children.index(n.index)))
            n = parent
        weights = self.ranges[node.player].copy()
        for parent, k in chain:
            if parent.kind == DECISION and parent.player == node.player:
                weights *= self._strategy[parent.index][0][k]
            elif parent.kind == CHANCE_NODE:
                card = parent.actions[k]
                weights[(HOLE_PAIRS == card).any(axis=1)] = 0.0
        return weights

    def strategy(self, node: Optional[SpotNode] = None) -> np.ndarray:
        """float64[A, 1326]: action probabilities per hand at ``node`` (default root); NaN for hands
        the acting player cannot hold there (outside its range, blocked, or never reaching it)."""
        node = node or self.root
        out = self._strategy[node.index][0].copy()
        out[:, self.reach(node) <= 0] = np.nan
        return out

    def hand_strategy(self, hand: str, node: Optional[SpotNode] = None) -> Dict[str, float]:
        """``{label: probability}`` of one hand (``"AhKh"``) at ``node``; GameError if it is not in range."""
        node = node or self.root
        try:
            i = PAIR_STRINGS.index(hand) if hand in PAIR_STRINGS else PAIR_STRINGS.index(hand[2:] + hand[:2])
        except ValueError:
            raise GameError(f"bad hand {hand!r}: write it like AhKh") from None
        column = self.strategy(node)[:, i]
        if np.isnan(column).any():
            raise GameError(f"{hand} is not in {PLAYER_NAMES[node.player]}'s range at this node")
        return dict(zip(node.labels, column.tolist()))

    def expected_values(self, player: int) -> np.ndarray:
        """float64[1326]: each hand's expected chips from the pot at the root under the solved
        strategies (NaN outside the player's range)."""
        if self._values is None:
            self._values = self._root_cfvs()
        out = self._values[player].copy()
        out[self.ranges[player] <= 0] = np.nan
        return out

    def _root_cfvs(self) -> np.ndarray:
        s = self.solver.engine   # the flat kernel's solver: ranges, hands and cards in its live-hand order
        cfv = self.solver.root_cfvs()[:, s.hands]  # (2, live hands), chips
        out = np.zeros((2, NUM_PAIRS))
        for p in range(2):
            opp = s.ranges[1 - p]
            per_card = np.zeros(52)
            np.add.at(per_card, s.hand_cards[:, 0], opp)
            np.add.at(per_card, s.hand_cards[:, 1], opp)
            compatible = opp.sum() - per_card[s.hand_cards[:, 0]] - per_card[s.hand_cards[:, 1]] + opp
            values = np.divide(cfv[p], compatible, out=np.zeros_like(compatible), where=compatible > 0)
            out[p, s.hands] = values + self.pot / 2.0  # net chips -> share taken from the pot
        return out

    def equities(self, player: int) -> np.ndarray:
        """float64[1326]: each hand's showdown equity against the other player's root range, averaged
        over the remaining board cards (E[HS]); NaN outside the player's range."""
        out = ehs(list(self.game.board_cards), self.ranges[1 - player])
        out = np.asarray(out, dtype=np.float64).copy()
        out[self.ranges[player] <= 0] = np.nan
        return out

    # ------------------------------------------------------------------ reports
    def report(self, node: Optional[SpotNode] = None, by: str = "class") -> List[Dict]:
        """Action frequencies at ``node`` by hand class (``by="class"``: AA, AKs, ...) or by made-hand
        category on the node's board (``by="category"``: pair, two pair, ...).  Each row: ``group``,
        ``combos`` (range weight reaching the node), and one frequency per action label."""
        node = node or self.root
        reach = self.reach(node)
        strat = np.nan_to_num(self.strategy(node))
        if by == "class":
            keys = np.asarray(PAIR_CLASSES)
            order = list(CLASS_LABELS)
        elif by == "category":
            keys, order = self._categories(node.board)
        else:
            raise GameError(f"report by 'class' or 'category', not {by!r}")
        rows = []
        for group in order:
            sel = (keys == group) & (reach > 0)
            w = reach[sel]
            if w.sum() <= 0:
                continue
            freqs = strat[:, sel] @ w / w.sum()
            rows.append({"group": group, "combos": float(w.sum()), **dict(zip(node.labels, freqs.tolist()))})
        return rows

    def _categories(self, board: Sequence[int]) -> Tuple[np.ndarray, List[str]]:
        board = np.asarray(board, dtype=np.int64)
        live = ~np.isin(HOLE_PAIRS, board).any(axis=1)
        cards = np.zeros((NUM_PAIRS, 2 + len(board)), dtype=np.uint8)
        cards[:, :2] = HOLE_PAIRS
        cards[:, 2:] = board
        categories = np.full(NUM_PAIRS, -1, dtype=np.int64)
        categories[live] = hand_category(evaluate_batch(cards[live]))
        names = np.asarray([CATEGORY_NAMES[c] if c >= 0 else "blocked" for c in categories.tolist()])
        order = [n for n in reversed(CATEGORY_NAMES) if n in set(names.tolist())]
        return names, order

    def to_rows(self, node: Optional[SpotNode] = None) -> List[Dict]:
        """One row per hand in the acting player's range at ``node``: hand, class, weight, the action
        probabilities, and (at the root) EV and equity."""
        node = node or self.root
        reach = self.reach(node)
        strat = self.strategy(node)
        at_root = node.index == self.root.index
        ev = self.expected_values(node.player) if at_root else None
        eq = self.equities(node.player) if at_root else None
        rows = []
        for i in np.flatnonzero(reach > 0):
            row = {"hand": PAIR_STRINGS[i], "class": PAIR_CLASSES[i], "weight": float(reach[i])}
            row.update(dict(zip(node.labels, strat[:, i].tolist())))
            if at_root:
                row["ev"] = float(ev[i])
                row["equity"] = float(eq[i])
            rows.append(row)
        return rows

    def to_pandas(self, node: Optional[SpotNode] = None):
        """:meth:`to_rows` as a pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_pandas needs pandas: pip install pandas") from None
        return pd.DataFrame(self.to_rows(node))

    def to_csv(self, path: str, node: Optional[SpotNode] = None) -> None:
        """:meth:`to_rows` written as CSV."""
        import csv

        rows = self.to_rows(node)
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["hand"])
            writer.writeheader()
            writer.writerows(rows)

    def table(self, node: Optional[SpotNode] = None, top: int = 169) -> str:
        """The strategy by hand class at ``node`` as text (what ``cfrkit spot`` prints)."""
        node = node or self.root
        rows = self.report(node, "class")[:top]
        head = f"{'class':6s} {'combos':>7s} " + " ".join(f"{label:>12s}" for label in node.labels)
        lines = [head]
        for r in rows:
            lines.append(f"{r['group']:6s} {r['combos']:7.2f} " + " ".join(f"{r[l]:12.3f}" for l in node.labels))
        return "\n".join(lines)

    # ------------------------------------------------------------------ persistence
    def save(self, path: str) -> None:
        """Write the spot (parameters, ranges, average strategy) to ``path`` (.npz), atomically."""
        header = {"magic": SPOT_MAGIC, "version": 1, "params": self.params, "iterations": self.iterations,
                  "seconds": self.seconds}
        nodes = sorted(self._strategy)
        arrays = {"ranges": self.ranges, "nodes": np.asarray(nodes, dtype=np.int64)}
        for n in nodes:
            arrays[f"s{n}"] = self._strategy[n][0].astype(np.float32)
        save_npz_atomic(path, header=header, **arrays)


def _game(params: Dict) -> PostflopPublicGame:
    return PostflopPublicGame(params["board"], params["pot"], params["stack"], _from_plain(params["bet_sizes"]),
                              add_allin_threshold=params["add_allin_threshold"],
                              force_allin_threshold=params["force_allin_threshold"],
                              merging_threshold=params["merging_threshold"])


def _build(params: Dict, progress: Optional[Callable[[int], None]] = None):
    game = _game(params)
    return game, build_public_tree(game, progress=progress)


def _count_nodes(game: PostflopPublicGame) -> int:
    """Nodes of the public tree without building it: every card of a chance node leads to the same
    betting tree (bet sizes depend on pot and stacks only), so one card is walked and multiplied."""
    def count(ps) -> int:
        kind = game.kind(ps)
        if kind == "terminal":
            return 1
        if kind == "chance":
            cards = game.chance_cards(ps)
            return 1 + len(cards) * count(game.chance_child(ps, cards[0]))
        return 1 + sum(count(game.child(ps, a)) for a in game.actions(ps))
    return count(game.root())


def _spot_params(board, pot, stack, bet_sizes, add_allin_threshold, force_allin_threshold, merging_threshold,
                 algorithm) -> Dict:
    for name, value in (("pot", pot), ("stack", stack)):  # chips are whole: 100.7 is refused, not truncated
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or value != int(value) or value <= 0:
            raise GameError(f"{name} must be a positive whole number of chips, got {value!r}")
    return {"board": cards_to_string(_board_ids(board), ""), "pot": int(pot), "stack": int(stack),
            "bet_sizes": _plain(bet_sizes), "add_allin_threshold": float(add_allin_threshold),
            "force_allin_threshold": float(force_allin_threshold), "merging_threshold": float(merging_threshold),
            "algorithm": algorithm}


def estimate_spot(board, pot: int, stack: int, bet_sizes="33%, 75%, a", add_allin_threshold: float = 1.5,
                  force_allin_threshold: float = 0.15, merging_threshold: float = 0.1) -> Dict[str, int]:
    """Size of :func:`solve_spot`'s problem before building it (same arguments): ``nodes`` of the public
    tree, live ``hands`` (pairs the board leaves) and ``bytes``, the estimated peak memory of the solve
    (``nodes * hands * BYTES_PER_NODE_HAND``; errs high).  Walks the betting tree once per street."""
    params = _spot_params(board, pot, stack, bet_sizes, add_allin_threshold, force_allin_threshold,
                          merging_threshold, "dcfr")
    game = _game(params)
    nodes = _count_nodes(game)
    hands = math.comb(52 - len(game.board_cards), 2)
    return {"nodes": nodes, "hands": hands, "bytes": nodes * hands * BYTES_PER_NODE_HAND}


def solve_spot(board, oop_range, ip_range, pot: int, stack: int, bet_sizes="33%, 75%, a",
               target: float = 0.5, max_iterations: int = 1000, algorithm: str = "dcfr",
               check_every: int = 10, add_allin_threshold: float = 1.5, force_allin_threshold: float = 0.15,
               merging_threshold: float = 0.1, on_build: Optional[Callable[[int], None]] = None,
               on_block: Optional[Callable[[int, float], None]] = None,
               stop: Optional[Callable[[], bool]] = None) -> SpotResult:
    """Solve a postflop spot to ``target`` % of the starting pot (exploitability) and report it.

    ``board``: ``"Ks7h2d"`` (flop), 4 or 5 cards (turn, river).  Ranges: range strings
    (``"QQ+,AKs,KQs:0.5"``), :class:`~cfrkit.cards.ranges.Range` or float[1326] weights; hands
    touching the board are removed.  ``pot``: chips in the pot; ``stack``: effective stack behind
    (chips).  ``bet_sizes``: postflop-solver notation, one string for every street and player,
    ``{"flop": ..., "turn": ..., "river": ...}``, a ``(bets, raises)`` pair or ``{"oop": ..., "ip": ...}``
    (see :mod:`cfrkit.solvers.public.bet_sizing`).  The all-in thresholds are postflop-solver's (its
    examples' values by default).  Stops after ``max_iterations`` if the target is not reached.

    Hooks (for a command line): ``on_build(nodes_built)`` every 4096 nodes while the tree is built;
    ``on_block(iterations, exploitability_pct)`` after each block of ``check_every`` iterations; ``stop()``
    is asked before each block and, when true, ends the solve there (the result then holds the
    iterations run so far, ``result.stopped`` is True).
    """
    if not target > 0:
        raise GameError(f"target must be a positive % of the pot, got {target}")
    params = _spot_params(board, pot, stack, bet_sizes, add_allin_threshold, force_allin_threshold,
                          merging_threshold, algorithm)
    game, tree = _build(params, on_build)
    ranges = np.stack([range_vector(oop_range, game.board_cards), range_vector(ip_range, game.board_cards)])
    for p in range(2):
        if ranges[p].sum() <= 0:
            raise GameError(f"{PLAYER_NAMES[p]}'s range holds no hand that the board leaves possible")
    start = time.perf_counter()
    solver = SubgameSolver(tree, ranges, backend="compiled", kernel="flat", algorithm=algorithm)
    stopped = False
    if on_block is None and stop is None:
        solver.solve(target, max_iterations=max_iterations, check_every=check_every)
    else:  # block by block, so that a hook sees each block and a stop lands between two
        while solver.iterations < max_iterations:
            if stop is not None and stop():
                stopped = True
                break
            solver.run(min(int(check_every), max_iterations - solver.iterations))
            pct = float(solver.exploitability_percent())
            if on_block is not None:
                on_block(solver.iterations, pct)
            if pct <= target:
                break
    result = SpotResult(game, tree, solver, ranges, params, time.perf_counter() - start)
    result.stopped = stopped
    return result


def load_spot(path: str) -> SpotResult:
    """A :class:`SpotResult` saved by :meth:`SpotResult.save` (PolicyFileError for a bad file)."""
    header, arrays = load_npz_checked(path, SPOT_MAGIC, ("ranges", "nodes"))
    try:
        params = dict(header["params"])
        game, tree = _build(params)
        solver = SubgameSolver(tree, np.asarray(arrays["ranges"], dtype=np.float64), backend="compiled",
                               kernel="flat", algorithm=params.get("algorithm", "dcfr"))
        avg = {}
        for n in arrays["nodes"].tolist():
            avg[n] = np.asarray(arrays[f"s{n}"], dtype=np.float64)[None]
        solver.set_average_strategy(avg)  # the average strategy is the normalised strategy sum
        solver.engine.iterations = int(header.get("iterations", 0))
    except (KeyError, TypeError, ValueError, GameError) as exc:
        raise PolicyFileError(f"{path}: not a usable spot file ({type(exc).__name__}: {exc})") from None
    return SpotResult(game, tree, solver, solver_ranges(arrays), params, float(header.get("seconds", 0.0)))


def solver_ranges(arrays) -> np.ndarray:
    return np.asarray(arrays["ranges"], dtype=np.float64)


def _board_ids(board) -> List[int]:
    ids = as_card_ids(board)
    if len(ids) not in (3, 4, 5):
        raise GameError(f"a spot's board has 3, 4 or 5 cards, got {len(ids)}")
    return ids


def _from_plain(bet_sizes):
    """Inverse of :func:`_plain`: lists back to the tuples the game takes."""
    if isinstance(bet_sizes, dict):
        return {k: _from_plain(v) for k, v in bet_sizes.items()}
    if isinstance(bet_sizes, list):
        return tuple(_from_plain(v) for v in bet_sizes)
    return bet_sizes


def _plain(bet_sizes):
    """Bet sizes as JSON-friendly data (strings, lists, dicts) for the spot file."""
    if isinstance(bet_sizes, (str, int, float)) or bet_sizes is None:
        return bet_sizes
    if isinstance(bet_sizes, dict):
        return {k: _plain(v) for k, v in bet_sizes.items()}
    if isinstance(bet_sizes, (list, tuple)):
        return [_plain(v) for v in bet_sizes]
    return str(bet_sizes)
