"""The ACPC client against a small dealer on 127.0.0.1 (run in a thread by the test)."""
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time

import pytest

from cfrkit.agents.acpc_client import ClientError, run_client
from cfrkit.agents.poker import AlwaysCallAgent, FixedRangeRaiser, RandomAgent, make_agent
from cfrkit.games import load
from cfrkit.games.holdem.matchstate import format_matchstate, parse_response

RESPONSE = re.compile(r"^(MATCHSTATE:\d+:\d+:[^:]*:[^:]*):(f|c|r\d*)$")


class MiniDealer(threading.Thread):
    """A tiny ACPC dealer: one remote client (seat rotating each hand), other seats always call.

    ``junk`` lines are sent before the first state of every hand listed in ``junk_hands``.
    """

    def __init__(self, game, hands, seed=0, junk=(), junk_hands=(), silent=False, opponent=None):
        super().__init__(daemon=True)
        self.opponent = opponent
        self.game, self.hands, self.rng = game, hands, random.Random(seed)
        self.junk, self.junk_hands, self.silent = list(junk), set(junk_hands), silent
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(1)
        self.port = self.server.getsockname()[1]
        self.client_chips = 0.0
        self.errors = []
        self.responses = 0
        self.version = None

    def _readline(self, conn, buf):
        while b"\n" not in buf[0]:
            chunk = conn.recv(4096)
            if not chunk:
                raise EOFError
            buf[0] += chunk
        line, buf[0] = buf[0].split(b"\n", 1)
        return line.decode().rstrip("\r")

    def run(self):
        conn, _ = self.server.accept()
        conn.settimeout(10)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = [b""]
        try:
            self.version = self._readline(conn, buf)
            if self.silent:
                time.sleep(3)
                return
            n = self.game.num_players
            for hand in range(self.hands):
                seat = hand % n
                state = self.game.new_initial_state()
                if hand in self.junk_hands:
                    for line in self.junk:
                        conn.sendall((line + "\r\n").encode())
                while True:
                    if state.is_chance_node():
                        outcomes = state.chance_outcomes()
                        state.apply_action(outcomes[self.rng.randrange(len(outcomes))][0])
                        continue
                    sent = format_matchstate(state, seat, hand)
                    conn.sendall((sent + "\r\n").encode())
                    if state.is_terminal():
                        self.client_chips += state.returns()[seat]
                        break
                    if state.current_player() == seat:
                        reply = self._readline(conn, buf)
                        m = RESPONSE.match(reply)
                        if not m or m.group(1) != sent:
                            self.errors.append(f"bad reply {reply!r} to {sent!r}")
                            return
                        self.responses += 1
                        state.apply_action(parse_response(state, m.group(2)))
                    else:
                        state.apply_action(self.opponent.act(state) if self.opponent else 1)
        except Exception as exc:  # recorded for the test to see
            self.errors.append(repr(exc))
        finally:
            conn.close()
            self.server.close()


@pytest.mark.parametrize("game_string,agent", [
    ("holdem", RandomAgent(1)),
    ("holdem", FixedRangeRaiser("55+,A8s+,KQ", 0.75)),
    ("holdem(definition=holdem.limit.2p.reverse_blinds)", RandomAgent(2)),
    ("holdem(definition=holdem.nolimit.3p)", RandomAgent(3)),
    ("holdem(definition=holdem.nolimit.6p)", FixedRangeRaiser("22+,A2s+", 2.0)),
])
def test_client_plays_full_match(game_string, agent):
    game = load(game_string)
    dealer = MiniDealer(game, hands=40, seed=5)
    dealer.start()
    summary = run_client("127.0.0.1", dealer.port, game, agent, timeout=10, report=lambda m: None)
    dealer.join(10)
    assert dealer.errors == []
    assert dealer.version == "VERSION:2.0.0"
    assert summary.hands == 40
    assert summary.actions_sent == dealer.responses > 0
    assert summary.chips == pytest.approx(dealer.client_chips)
    assert summary.malformed == []


def test_malformed_lines_are_reported_and_skipped():
    game = load("holdem")
    junk = ["MATCHSTATE:0:0:r100:AsKs|", "HELLO DEALER", "MATCHSTATE:0:1:zz:AsKs|/", "MATCHSTATE:0:2:c:XxKs|",
            "MATCHSTATE:0:3:r99999c/:AsKs|/2c3c4c", "# a comment", "; another comment"]
    dealer = MiniDealer(game, hands=12, seed=9, junk=junk, junk_hands={0, 5})
    dealer.start()
    reports = []
    summary = run_client("127.0.0.1", dealer.port, game, AlwaysCallAgent(), timeout=10, report=reports.append)
    dealer.join(10)
    assert dealer.errors == []
    assert summary.hands == 12
    assert len(summary.malformed) == 2 * 5  # the comments are not malformed
    assert len(reports) == 10 and all(r.startswith("malformed line from server") for r in reports)
    assert any("illegal" in r for r in reports)  # r99999 is more than the stack
    assert any("bad card" in r for r in reports)


def test_silent_dealer_times_out_instead_of_hanging():
    game = load("holdem")
    dealer = MiniDealer(game, hands=1, silent=True)
    dealer.start()
    start = time.time()
    with pytest.raises(ClientError, match="no message from the dealer"):
        run_client("127.0.0.1", dealer.port, game, AlwaysCallAgent(), timeout=0.5, report=lambda m: None)
    assert time.time() - start < 3


def test_connection_refused_is_a_clear_error():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    with pytest.raises(ClientError, match="cannot connect"):
        run_client("127.0.0.1", port, load("holdem"), AlwaysCallAgent(), timeout=1)


def test_cli_acpc_client_end_to_end():
    game = load("holdem(definition=holdem.limit.2p.reverse_blinds)")
    dealer = MiniDealer(game, hands=10, seed=2, junk=["NOT A MATCHSTATE"], junk_hands={3})
    dealer.start()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "cfrkit", "acpc-client", "127.0.0.1", str(dealer.port),
                           "--agent", "fixed-range-raiser", "--range", "TT+,AK", "--timeout", "10",
                           "--game", "holdem(definition=holdem.limit.2p.reverse_blinds)"],
                          capture_output=True, text=True, timeout=60, env=env)
    dealer.join(10)
    assert proc.returncode == 0, proc.stderr
    assert "hands 10," in proc.stdout
    assert "malformed lines 1" in proc.stdout
    assert "malformed line from server" in proc.stderr and "NOT A MATCHSTATE" in proc.stderr
    assert dealer.errors == []


def test_cli_bad_agent_is_one_line_error():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "cfrkit", "acpc-client", "127.0.0.1", "9", "--agent", "nobody"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "unknown agent 'nobody'" in proc.stderr


def test_make_agent_names():
    assert make_agent("call").name == "always-call"
    assert make_agent("raiser", hand_range="AA").classes == {"AA"}
    with pytest.raises(ValueError, match="bad hand range token"):
        make_agent("raiser", hand_range="AX+")


TINY = ("GAMEDEF\nnolimit\nnumPlayers = 2\nnumRounds = 2\nstack = 1200 1200\nblind = 100 50\nfirstPlayer = 2 1\n"
        "numSuits = 2\nnumRanks = 3\nnumHoleCards = 1\nnumBoardCards = 0 1\nEND GAMEDEF\n")


class LargestSize:
    """Policy: the largest offered raise below all-in when there is one, else call."""

    def action_probabilities(self, state, player=None):
        targets = [a for a, _, _ in state.raise_targets() if a != state.game.allin_action]
        return {max(targets): 1.0} if targets else {1: 1.0}


def test_policy_agent_translates_and_rescales(tmp_path):
    from cfrkit.agents.poker import PolicyAgent
    from cfrkit.games.holdem import pseudo_harmonic_probability, raise_action

    path = tmp_path / "tiny.game"
    path.write_text(TINY)
    abstract = load(f"holdem_abstract(game=holdem(definition={path}),bets=0.5+1)")
    agent = PolicyAgent(LargestSize(), game=abstract, seed=3)
    real = abstract.inner.new_initial_state()
    real.apply_action(0)  # seat 0: 2c
    real.apply_action(5)  # seat 1: 3d
    real.apply_action(raise_action(250))  # small blind raises 0.75 pots: off the 0.5 / 1 pot tree
    small = 0
    for _ in range(4000):
        agent.new_hand()
        action = agent.act(real)
        translated = agent._choices[0]
        assert translated in (2, 3)
        small += translated == 2
        # the abstract state's largest non-all-in raise is 1 pot; played as 1 real pot
        expected = 250 + (250 + 100 + 150)  # max spent + (pot 350 + call 150)
        assert action == raise_action(min(1200, expected))
    assert small / 4000 == pytest.approx(pseudo_harmonic_probability(0.5, 1.0, 0.75), abs=0.025)


def test_policy_agent_plays_a_match_and_cli_loads_policy_file(tmp_path):
    from cfrkit.agents.poker import PolicyAgent
    from cfrkit.policy import TabularPolicy

    path = tmp_path / "tiny.game"
    path.write_text(TINY)
    game = load(f"holdem(definition={path})")
    abstract_string = f"holdem_abstract(game=holdem(definition={path}),bets=0.5+1:1)"
    dealer = MiniDealer(game, hands=60, seed=4, opponent=RandomAgent(6))
    dealer.start()
    agent = PolicyAgent(LargestSize(), game=abstract_string, seed=1)
    summary = run_client("127.0.0.1", dealer.port, game, agent, timeout=10, report=lambda m: None)
    dealer.join(10)
    assert dealer.errors == [] and summary.hands == 60 and summary.actions_sent > 0
    # the CLI with a stored (empty -> uniform) tabular policy of the abstract game
    policy_file = str(tmp_path / "uniform.npz")
    TabularPolicy(abstract_string).save(policy_file)
    dealer = MiniDealer(game, hands=20, seed=5, opponent=RandomAgent(7))
    dealer.start()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "cfrkit", "acpc-client", "127.0.0.1", str(dealer.port),
                           "--agent", "policy", "--policy", policy_file, "--game", f"holdem(definition={path})",
                           "--timeout", "10", "--seed", "2"], capture_output=True, text=True, timeout=60, env=env)
    dealer.join(10)
    assert proc.returncode == 0, proc.stderr
    assert "hands 20," in proc.stdout and dealer.errors == []
    # a policy for other rules is refused up front
    proc = subprocess.run([sys.executable, "-m", "cfrkit", "acpc-client", "127.0.0.1", "9", "--agent", "policy",
                           "--policy", policy_file], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2 and "whose rules differ" in proc.stderr
