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

    def __init__(self, game, hands, seed=0, junk=(), junk_hands=(), silent=False):
        super().__init__(daemon=True)
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
                        state.apply_action(1)
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
