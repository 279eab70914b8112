"""solve_spot: one-call spot solving, per-hand reports, save/reload."""
import numpy as np
import pytest

from cfrkit.cards.hands import HOLE_PAIRS
from cfrkit.cards.ranges import PAIR_CLASSES, range_vector
from cfrkit.games.base import GameError
from cfrkit.policy import PolicyFileError
from cfrkit.solvers.public.flat_range_cfr import FlatRangeSolver
from cfrkit.solvers.public.postflop_game import PostflopPublicGame
from cfrkit.solvers.public.spot import load_spot, solve_spot
from cfrkit.solvers.public.tree import build_public_tree

BOARD = "AsJd8h5c2d"
OOP, IP = "22+,A2s+,KTs+,QTs+,JTs,ATo+,KJo+", "TT+,AQs+,AKo,98s,76s,KQs"


@pytest.fixture(scope="module")
def river():
    return solve_spot(BOARD, OOP, IP, pot=1000, stack=2000, bet_sizes="50%, 100%, a", target=0.2)


def _compatible(opp, hands=HOLE_PAIRS):
    per_card = np.zeros(52)
    np.add.at(per_card, hands[:, 0], opp)
    np.add.at(per_card, hands[:, 1], opp)
    return opp.sum() - per_card[hands[:, 0]] - per_card[hands[:, 1]] + opp


def test_solves_to_target_and_matches_the_direct_solver(river):
    assert river.exploitability_pct <= 0.2
    game = PostflopPublicGame(BOARD, 1000, 2000, "50%, 100%, a", add_allin_threshold=1.5,
                              force_allin_threshold=0.15, merging_threshold=0.1)
    ranges = np.stack([range_vector(OOP, game.board_cards), range_vector(IP, game.board_cards)])
    direct = FlatRangeSolver(build_public_tree(game), ranges=ranges)
    direct.run(river.iterations)
    root = river.root
    live = ~np.isnan(river.strategy(root)[0])
    assert np.allclose(river.strategy(root)[:, live], direct.average_strategy()[root.index][0][:, live])


def test_hands_outside_the_range_are_flagged_and_rows_sum_to_one(river):
    s = river.strategy()
    in_range = range_vector(OOP, "AsJd8h5c2d") > 0
    assert np.isnan(s[:, ~in_range]).all() and not np.isnan(s[:, in_range]).any()
    assert np.allclose(s[:, in_range].sum(0), 1.0)
    with pytest.raises(GameError, match="not in OOP's range"):
        river.hand_strategy("7h6h")
    assert sum(river.hand_strategy("AhAc").values()) == pytest.approx(1.0)


def test_evs_are_zero_sum_and_equities_match_a_brute_force(river):
    # weighted by range x compatible opponent mass, the two players' EVs share the pot exactly
    totals = []
    for p in range(2):
        weights = river.ranges[p] * _compatible(river.ranges[1 - p])
        ev = np.nan_to_num(river.expected_values(p))
        totals.append(float(weights @ ev / weights.sum()))
    assert totals[0] + totals[1] == pytest.approx(1000.0, abs=1e-6)
    # equity of one hand by enumeration against the opponent's range
    from cfrkit.cards import evaluate, parse_cards

    board = parse_cards(BOARD)
    i = [k for k, c in enumerate(PAIR_CLASSES) if c == "88"][0]
    mine = evaluate(list(HOLE_PAIRS[i]) + board)
    win = tie = total = 0.0
    for j in np.flatnonzero(river.ranges[1]):
        cards = set(HOLE_PAIRS[j])
        if cards & set(HOLE_PAIRS[i]) or cards & set(board):
            continue
        theirs = evaluate(list(HOLE_PAIRS[j]) + board)
        w = river.ranges[1][j]
        total += w
        win += w * (mine > theirs)
        tie += w * (mine == theirs)
    assert river.equities(0)[i] == pytest.approx((win + tie / 2) / total, abs=1e-9)


def test_reports_navigation_and_errors(river):
    rows = river.report(by="class")
    assert sum(r["combos"] for r in rows) == pytest.approx(river.reach(river.root).sum())
    for r in rows:
        assert sum(r[l] for l in river.root.labels) == pytest.approx(1.0)
    cats = river.report(by="category")
    assert {r["group"] for r in cats} <= {"high card", "pair", "two pair", "three of a kind", "straight", "flush",
                                          "full house"}
    node = river.node("check", river.node("check").labels[-1])
    assert node.player == 0 and node.labels[0] == "fold"
    with pytest.raises(GameError, match="choices: check"):
        river.node("raise")
    with pytest.raises(GameError):
        solve_spot(BOARD, "AsAh", IP, pot=1000, stack=2000)          # no live hand: As is on the board
    with pytest.raises(GameError):
        solve_spot("AsJd", OOP, IP, pot=1000, stack=2000)            # not a postflop board


def test_save_reload_and_csv(river, tmp_path):
    path = str(tmp_path / "spot.npz")
    river.save(path)
    again = load_spot(path)
    assert again.exploitability == pytest.approx(river.exploitability, rel=1e-3)
    assert np.allclose(np.nan_to_num(again.strategy()), np.nan_to_num(river.strategy()), atol=1e-6)
    river.to_csv(str(tmp_path / "root.csv"))
    lines = open(tmp_path / "root.csv").read().splitlines()
    assert lines[0].startswith("hand,class,weight,check") and len(lines) == 1 + int((river.ranges[0] > 0).sum())
    (tmp_path / "bad.npz").write_bytes(b"garbage")
    with pytest.raises(PolicyFileError):
        load_spot(str(tmp_path / "bad.npz"))


def test_turn_spot_deals_cards_on_the_path():
    r = solve_spot("AsJd8h5c", "QQ+,AJs", "JJ+,KQs", pot=100, stack=100, bet_sizes="50%, a", target=1.0,
                   max_iterations=300)
    labels = r.root.labels
    node = r.node("check", "check", "Kd")
    from cfrkit.cards import parse_card

    assert node.board[-1] == parse_card("Kd") and node.player == 0
    reach = r.reach(node)
    blocked = (HOLE_PAIRS == node.board[-1]).any(axis=1)
    assert (reach[blocked] == 0).all() and reach.sum() > 0 and labels[0] == "check"


def test_locking_a_dominated_river_strategy_gives_the_best_response_value():
    """Lock OOP to check and call everywhere (never bet, raise or fold): IP's solved value must equal
    its best-response value against that fixed strategy, computed by the independent numpy solver."""
    from cfrkit.solvers.public.tree import RangeSolver

    game = PostflopPublicGame(BOARD, 1000, 2000, "50%, 100%, a")
    tree = build_public_tree(game)
    ranges = np.stack([range_vector(OOP, game.board_cards), range_vector(IP, game.board_cards)])
    solver = FlatRangeSolver(tree, ranges=ranges)
    for n in tree.decision_nodes:
        node = tree.nodes[n]
        if node.player != 0:
            continue
        labels = [game.action_label(node.state, a) for a in node.actions]
        passive = "call" if "call" in labels else "check"
        strategy = np.zeros((len(labels), 1326))
        strategy[labels.index(passive)] = 1.0
        solver.lock(n, strategy)
    solver.run(400)
    profile = solver.average_strategy()
    reference = RangeSolver(tree, ranges=ranges[None])
    numpy_profile = reference.from_numpy_strategy({n: s for n, s in profile.items()})
    z = reference.pair_mass(reference.root_ranges())[0]
    br_value = float((ranges[1] * reference.best_response_values(1, numpy_profile)[0]).sum() / z)
    got = float(reference.root_values(numpy_profile)[0, 1])
    assert got == pytest.approx(br_value, abs=0.002 * 1000)          # within 0.2% of the pot
    # and the lock mattered: IP earns far more than against OOP's equilibrium
    free = FlatRangeSolver(tree, ranges=ranges)
    free.solve(0.002, max_iterations=400)
    assert got > free.root_values()[1] + 10
