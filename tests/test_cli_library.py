"""CLI for research code: --import of a user's game module, cfrkit show."""
import textwrap

import pytest

from cfrkit.cli import main

GAME_MODULE = textwrap.dedent('''
    from cfrkit.games.base import CHANCE, TERMINAL, Game, State
    from cfrkit.games.registry import register

    class PickGame(Game):
        """Chance deals 0 (p) or 1; player 0 guesses it blind; payoff +1 / -1."""
        short_name = "user_pick_test"

        def __init__(self, p=0.75):
            super().__init__({"p": p})
            self.p = p

        def new_initial_state(self):
            return PickState(self)

        def num_distinct_actions(self):
            return 2

        def max_utility(self):
            return 1.0

        def min_utility(self):
            return -1.0

    class PickState(State):
        def __init__(self, game):
            super().__init__(game)
            self.card = None
            self.guess = None

        def current_player(self):
            return CHANCE if self.card is None else (0 if self.guess is None else TERMINAL)

        def chance_outcomes(self):
            return [(0, self.game.p), (1, 1 - self.game.p)]

        def _legal_actions(self, player):
            return [0, 1] if player == self.current_player() else []

        def _apply_action(self, a):
            if self.card is None:
                self.card = a
            else:
                self.guess = a

        def returns(self):
            r = 1.0 if self.guess == self.card else -1.0
            return [r, -r]

        def information_state_string(self, player=None):
            return "p0" if self.guess is None else "end"

    register("user_pick_test", PickGame, {"p": 0.75}, "test game")
''')


def test_import_user_game_solve_and_show(tmp_path, monkeypatch, capsys):
    (tmp_path / "user_pick_mod.py").write_text(GAME_MODULE)
    monkeypatch.chdir(tmp_path)
    assert main(["solve", "user_pick_test(p=0.75)", "-n", "300", "--no-progress", "-o", "pick.npz",
                 "--import", "user_pick_mod"]) == 0
    capsys.readouterr()
    assert main(["show", "pick.npz", "-s", "p0"]) == 0
    out = capsys.readouterr().out
    assert "user_pick_test" in out and "1 of 1 information states (100.0%)" in out
    # the blind guess of the likelier card: action 0 with probability 1 at equilibrium
    line = [l for l in out.splitlines() if l.strip().startswith("action      0")][0]
    assert float(line.split()[-1]) > 0.99


def test_show_errors_are_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["solve", "kuhn", "-n", "50", "--no-progress", "-o", "k.npz"]) == 0
    capsys.readouterr()
    assert main(["show", "k.npz", "-s", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not in the policy" in err
    assert main(["--import", "no_such_module_xyz", "games"]) == 2
    assert "No module named" in capsys.readouterr().err
