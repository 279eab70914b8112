"""The blueprint solver and agent: exploitability in a small abstract game, agreement of its game value with
the compiled-tree CFRSolver, bit-exact resume, parallel updates, the agent's strategies, bad input."""
import os
import subprocess
import sys

import numpy as np
import pytest

from cfrkit.cards import parse_cards
from cfrkit.cards.equity import board_strengths
from cfrkit.cards.hands import NUM_PAIRS, pair_index_of
from cfrkit.games.base import CHANCE, TERMINAL, Game, State
from cfrkit.solvers.blueprint.betting_tree import BlueprintError, build_betting_tree
from cfrkit.solvers.blueprint.boards import board_inputs
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy
from cfrkit.solvers.blueprint.trainer import BlueprintTrainer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL_GAME = "holdem(stacks=400;400)"
BOARD = "AsJd8h5c2d"
HANDS = ["AhAc", "KdKc", "QhJh", "7c6c", "4s3s"]


class HandListAbstraction:
    """Lossless on a fixed hand list: bucket = the hand's index; every other hand in one more bucket (they are
    never dealt, and must not share a bucket with a dealt hand: their counterfactual values would count)."""

    def __init__(self, hands):
        self.index = np.full(NUM_PAIRS, len(hands), dtype=np.int32)
        for i, h in enumerate(hands):
            self.index[pair_index_of(h)] = i
        self.n = len(hands) + 1

    def num_buckets(self, r):
        return self.n

    def buckets_for_board(self, r, board):
        out = self.index.copy()
        if board:
            from cfrkit.cards.hands import blocked_pairs

            out[blocked_pairs(list(board))] = -1
        return out


class FixedBoardGame(Game):
    """The abstract betting tree on a known board, each player dealt one of a few disjoint hands."""

    short_name = "blueprint_fixed_board"

    def __init__(self, tree, board, hands):
        super().__init__({"tree": tree.fingerprint(), "board": board, "hands": tuple(hands)})
        self.tree, self.hands = tree, list(hands)
        s = board_strengths(parse_cards(board))
        self.strength = [int(s[pair_index_of(h)]) for h in hands]

    def new_initial_state(self):
        return FixedBoardState(self)

    def num_distinct_actions(self):
        return int(self.tree.num_children.max())

    def max_utility(self):
        return float(self.tree.stacks[0])

    def min_utility(self):
        return -float(self.tree.stacks[0])


class FixedBoardState(State):
    def __init__(self, game):
        super().__init__(game)
        self.deal, self.node = [], 0

    def clone(self):
        new = FixedBoardState(self.game)
        new.deal, new.node, new._history = list(self.deal), self.node, list(self._history)
        return new

    def current_player(self):
        t = self.game.tree
        if len(self.deal) < 2:
            return CHANCE
        return TERMINAL if t.kind[self.node] != 0 else int(t.player[self.node])

    def chance_outcomes(self):
        rest = [i for i in range(len(self.game.hands)) if i not in self.deal]
        return [(i, 1.0 / len(rest)) for i in rest]

    def _legal_actions(self, player):
        return list(range(int(self.game.tree.num_children[self.node])))

    def _apply_action(self, action):
        if len(self.deal) < 2:
            self.deal.append(action)
        else:
            self.node = int(self.game.tree.child_start[self.node]) + action

    def returns(self):
        t, n = self.game.tree, self.node
        if len(self.deal) < 2 or t.kind[n] == 0:
            return [0.0, 0.0]
        if t.kind[n] == 1:
            f = int(t.player[n])
            out = [0.0, 0.0]
            out[f], out[1 - f] = -float(t.spent[n, f]), float(t.spent[n, f])
            return out
        s0, s1 = (self.game.strength[i] for i in self.deal)
        pot = float(min(t.spent[n]))
        w = np.sign(s0 - s1) * pot
        return [w, -w]

    def information_state_string(self, player=None):
        player = self.current_player() if player is None else player
        return f"{player}|{self.deal[player]}|{self.node}"


class KernelPolicy:
    """The kernel's average strategy keyed by the fixed-board game's information states."""

    def __init__(self, strategy, compiled):
        self.table = {}
        for key in compiled.infoset_keys:
            _, deal, node = (int(x) for x in str(key).split("|"))
            row = strategy.probabilities(node, [deal])[0]
            self.table[str(key)] = {a: float(q) for a, q in enumerate(row)}


@pytest.fixture(scope="module")
def small_tree():
    return build_betting_tree(SMALL_GAME, "0.5+1", 1)


def test_fixed_board_cfr_plus_is_near_equilibrium_and_matches_cfrsolver(small_tree):
    from cfrkit.evaluation import exploitability, expected_values
    from cfrkit.solvers import CFRSolver, compile_game

    ab = HandListAbstraction(HANDS)
    tr = BlueprintTrainer(SMALL_GAME, "0.5+1", 1, abstraction=ab, tree=small_tree)
    inputs = board_inputs(ab, parse_cards(BOARD))
    root = np.zeros(NUM_PAIRS)
    root[[pair_index_of(h) for h in HANDS]] = 1.0
    for t in range(1, 401):  # the same board every iteration: full CFR+ on this game
        for p in (0, 1):
            tr.worker.traverse(inputs, p, float(t), tr.regrets, tr.regrets, tr.strategy_sum, True, root_reach=root)
    game = FixedBoardGame(small_tree, BOARD, HANDS)
    compiled = compile_game(game, cache=False)
    policy = KernelPolicy(BlueprintStrategy(small_tree, tr.strategy_sum, ab), compiled)
    expl = exploitability(compiled, policy)
    assert expl < 0.4  # chips (400-chip stacks; about 0.25 is reached, uniform play is about 40)
    reference = CFRSolver(compiled, algorithm="cfr+").run(400)
    ref_value = expected_values(compiled, reference.average_strategy_array())[0]
    ours = expected_values(compiled, policy)[0]
    assert abs(ours - ref_value) < 0.3  # both near the game value (about -12.5 chips for seat 0)
    assert exploitability(compiled, reference.average_strategy_array()) < 0.5


def test_resume_is_bit_exact_and_parallel_updates_do_not_depend_on_workers(tmp_path, small_tree):
    a = BlueprintTrainer(SMALL_GAME, "0.5+1", 1, abstraction="ehs:169,6,6,6", seed=3, tree=small_tree)
    a.iterate(3)
    path = str(tmp_path / "bp.npz")
    a.save(path)
    b = BlueprintTrainer.load(path)
    a.iterate(2)
    b.iterate(2)
    assert b.iterations == 5
    assert np.array_equal(a.regrets, b.regrets) and np.array_equal(a.strategy_sum, b.strategy_sum)
    assert (a.regrets > 0).any()
    # batched updates: every board against the same current strategy, deltas summed in a fixed order, so
    # two threads repeat themselves exactly and agree with one thread up to float32 rounding of the sums
    runs = []
    for workers in (2, 2, 1):
        tr = BlueprintTrainer(SMALL_GAME, "0.5+1", 1, abstraction="ehs:169,6,6,6", seed=3, tree=small_tree,
                              boards_per_iteration=3, workers=workers)
        tr.iterate(2)
        tr.close()
        runs.append(tr)
    assert np.array_equal(runs[0].regrets, runs[1].regrets)
    assert np.array_equal(runs[0].strategy_sum, runs[1].strategy_sum)
    assert np.allclose(runs[0].regrets, runs[2].regrets, rtol=1e-5, atol=1e-3 * runs[2].regrets.max())
    assert np.allclose(runs[0].strategy_sum, runs[2].strategy_sum, rtol=1e-5)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, small_tree):
    tr = BlueprintTrainer(SMALL_GAME, "0.5+1", 1, abstraction="ehs:169,6,6,6", seed=1, tree=small_tree)
    tr.iterate(30)
    path = str(tmp_path_factory.mktemp("bp") / "bp.npz")
    tr.save(path)
    return path


def _states_along_hand(seed):
    """States of a hand of SMALL_GAME where someone is to act (random legal play, some raises)."""
    import random

    from cfrkit.games import load

    rng = random.Random(seed)
    game = load(SMALL_GAME)
    state = game.new_initial_state()
    out = []
    while not state.is_terminal():
        if state.is_chance_node():
            outs = state.chance_outcomes()
            state.apply_action(outs[rng.randrange(len(outs))][0])
            continue
        out.append(state.clone())
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))] if rng.random() < 0.5 else 1)
    return out


def test_agent_strategy_sums_to_one_and_matches_its_sampled_actions(trained):
    from cfrkit.agents.blueprint import BlueprintAgent

    agent = BlueprintAgent(trained, seed=7)
    checked = 0
    for seed in range(4):
        agent.new_hand()
        for state in _states_along_hand(seed):
            hs = agent.hand_strategy(state)
            live = hs.probs.sum(axis=1) > 0
            assert np.allclose(hs.probs[live].sum(axis=1), 1.0)
            blocked = np.zeros(NUM_PAIRS, bool)
            if state.board:
                from cfrkit.cards.hands import blocked_pairs
                blocked = blocked_pairs(state.board)
            assert not (live & blocked).any() and live[~blocked].all()
            assert all(state.is_legal(int(a)) for a in hs.actions)
            p = state.current_player()
            row = hs.probs[pair_index_of(state.hole[p])]
            counts = {}
            n = 200
            for _ in range(n):
                a = agent.act(state)
                counts[a] = counts.get(a, 0) + 1
            for a, q in zip(hs.actions, row):
                assert abs(counts.get(int(a), 0) / n - q) < 4 * np.sqrt(q * (1 - q) / n) + 0.02
            assert set(counts) <= {int(a) for a, q in zip(hs.actions, row) if q > 0}
            checked += 1
    assert checked >= 4


def test_translation_pseudo_harmonic_and_bet_larger_than_stack(trained):
    from cfrkit.agents.blueprint import BlueprintAgent
    from cfrkit.games import load
    from cfrkit.games.holdem.abstraction import pseudo_harmonic_probability

    agent = BlueprintAgent(trained, seed=0)
    game = load(SMALL_GAME)
    state = game.new_initial_state()
    for c in parse_cards("AhAcKdKc"):
        state.apply_action(c)
    t = agent.tree
    # first decision: the small blind, pot 150, call 50 -> pot after call 200; half pot raises to 200, pot to 300
    choices = agent.translate_raise(0, state, 250)
    sizes = {int(t.raise_to[c]): q for c, q in choices}
    assert set(sizes) == {200, 300}
    assert sizes[200] == pytest.approx(pseudo_harmonic_probability(0.5, 1.0, 0.75))
    kids = np.arange(t.child_start[0], t.child_start[0] + t.num_children[0])
    assert agent.translate_raise(0, state, 400) == [(int(kids[t.is_allin[kids]][0]), 1.0)]
    with pytest.raises(BlueprintError, match="larger than player 1's stack of 400"):
        agent.translate_raise(0, state, 5000)


def test_bad_files_give_one_clear_error_and_nothing_is_overwritten(trained, tmp_path):
    from cfrkit.policy import TabularPolicy

    data = open(trained, "rb").read()
    bad = tmp_path / "corrupt.npz"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(BlueprintError, match="corrupt or truncated"):
        BlueprintTrainer.load(str(bad))
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF
    bad2 = tmp_path / "flipped.npz"
    bad2.write_bytes(bytes(flipped))
    with pytest.raises(BlueprintError):
        BlueprintStrategy.load(str(bad2))
    other = tmp_path / "policy.npz"
    TabularPolicy("kuhn", {}).save(str(other))
    with pytest.raises(BlueprintError, match="expected a cfrkit-blueprint file"):
        BlueprintTrainer.load(str(other))
    with pytest.raises(BlueprintError, match="trained with card abstraction"):
        BlueprintStrategy.load(trained, abstraction="ehs:169,6,6,7")
    # the CLI refuses to resume from a corrupt file and leaves it as it was
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    before = bad.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "cfrkit", "blueprint", "train", str(bad), "--iterations", "2",
                           "--no-progress"], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "corrupt or truncated" in proc.stderr
    assert bad.read_bytes() == before


def test_cli_train_resume_info_play(tmp_path, capsys):
    from cfrkit.cli import main

    path = str(tmp_path / "bp.npz")
    common = ["--game", SMALL_GAME, "--raise-cap", "1", "--abstraction", "ehs:169,4,4,4", "--no-progress"]
    assert main(["blueprint", "train", path, "--iterations", "3"] + common) == 0
    assert main(["blueprint", "train", path, "--iterations", "5", "--eval-minutes", "0.0001", "--eval-deals", "3",
                 "--eval-opponents", "random", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "resuming" in out and "evaluation at" in out
    assert main(["blueprint", "info", path]) == 0
    assert "5 iterations" in capsys.readouterr().out
    mtime = os.path.getmtime(path)
    assert main(["blueprint", "train", path, "--iterations", "4", "--no-progress"]) == 0  # a total, reached
    assert "nothing to run" in capsys.readouterr().out and os.path.getmtime(path) == mtime
    assert main(["blueprint", "play", path, "--opponent", "always-call", "--deals", "3"]) == 0
    assert "blueprint vs always-call" in capsys.readouterr().out
    assert any(f.startswith("bp.it") for f in os.listdir(tmp_path))
    assert main(["blueprint", "train", path, "--minutes", "1", "--eval-opponents", "nobody"]) == 2
    assert "unknown opponent" in capsys.readouterr().err


def test_blueprint_agent_plays_through_the_acpc_client(trained):
    from test_acpc_client import MiniDealer

    from cfrkit.agents.acpc_client import run_client
    from cfrkit.agents.poker import RandomAgent
    from cfrkit.games import load
    from cfrkit.poker import make_agent

    game = load(SMALL_GAME)
    agent = make_agent(f"blueprint:{trained}", game=game, seed=3)
    dealer = MiniDealer(game, hands=20, seed=9, opponent=RandomAgent(4))
    dealer.start()
    summary = run_client("127.0.0.1", dealer.port, game, agent, timeout=20, report=lambda m: None)
    dealer.join(20)
    assert dealer.errors == []
    assert summary.hands == 20 and summary.actions_sent == dealer.responses > 0
    assert summary.chips == pytest.approx(dealer.client_chips)


def test_off_tree_all_in_line_checks_or_calls_and_other_lines_use_a_tree_node(trained):
    from cfrkit.agents.blueprint import BlueprintAgent
    from cfrkit.games import load
    from cfrkit.games.holdem.game import CALL, raise_action

    game = load(SMALL_GAME)
    strategy = BlueprintStrategy.load(trained)
    committed = followed = 0
    for seed in range(30):
        agent = BlueprintAgent(strategy, seed=seed)
        state = game.new_initial_state()
        for c in parse_cards("AhAcKdKc"):
            state.apply_action(c)
        state.apply_action(raise_action(350))  # 1.25 pots: pot-size raise or all-in in the abstraction
        state.apply_action(CALL)
        for c in parse_cards("2s7h9d"):
            state.apply_action(c)
        hs = agent.hand_strategy(state)
        assert np.allclose(hs.probs[hs.probs.sum(axis=1) > 0].sum(axis=1), 1.0)
        if agent.off_tree_hands:  # the raise became the abstract all-in, which the real hand outlived
            committed += 1
            assert hs.actions.tolist() == [CALL] and agent.act(state) == CALL
        else:
            followed += 1
            assert len(hs.actions) > 1
    assert committed > 0 and followed > 0


def test_sigterm_saves_a_checkpoint_that_resumes(tmp_path):
    import signal
    import time

    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    path = tmp_path / "bp.npz"
    proc = subprocess.Popen([sys.executable, "-m", "cfrkit", "blueprint", "train", str(path), "--game", SMALL_GAME,
                             "--raise-cap", "1", "--abstraction", "ehs:169,4,4,4", "--minutes", "10",
                             "--checkpoint-minutes", "0.0001", "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 120
    while not path.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)  # the first checkpoint: the training loop (and its signal handlers) is running
    assert path.exists()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err  # 128 + SIGTERM, as docs/robustness.md promises
    assert "interrupted" in out
    trainer = BlueprintTrainer.load(str(path))
    assert trainer.iterations >= 1
    trainer.iterate(1)
