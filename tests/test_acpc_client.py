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
from cfrkit.agents.poker import AlwaysCallAgent, FixedRangeRaiser, RandomAgent
from cfrkit.games import load
from cfrkit.games.holdem.matchstate import format_matchstate, parse_response
from cfrkit.poker import make_agent

RESPONSE = re.compile(r"^(MATCHSTATE:\d+:\d+:[^:]*:[^:]*):(f|c|r\d*)$")


class MiniDealer(threading.Thread):
    """A tiny ACPC dealer: one remote client (seat rotating each hand), other seats always call.

    ``junk`` lines are sent before the first state of every hand listed in ``junk_hands``.
    """

    def __init__(self, game, hands, seed=0, junk=(), junk_hands=(), silent=False, opponent=None,
                 hide_showdown=False, die_in_hand=None, opponent_delay=0.0):
        super().__init__(daemon=True)
        # hide_showdown: final showdown states omit the other players' cards (a broken dealer);
        # die_in_hand: close the connection after the first state of that hand (a killed dealer);
        # opponent_delay: seconds the other seats think before their first action of each hand
        self.hide_showdown, self.die_in_hand, self.opponent_delay = hide_showdown, die_in_hand, opponent_delay
        self.showdown_chips = 0.0
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
                    if self.hide_showdown and state.reached_showdown():
                        betting, cards = sent.rsplit(":", 1)
                        holes, board = cards.split("/", 1)
                        hidden = "|".join(h if i == seat else "" for i, h in enumerate(holes.split("|")))
                        sent = f"{betting}:{hidden}/{board}"
                    conn.sendall((sent + "\r\n").encode())
                    if hand == self.die_in_hand:
                        return
                    if state.is_terminal():
                        self.client_chips += state.returns()[seat]
                        if state.reached_showdown():
                            self.showdown_chips += state.returns()[seat]
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
                        if not any(state.actions):  # the first action of the hand
                            time.sleep(self.opponent_delay)
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


# ------------------------------------------------------------------ issue 17, item 9
def _cli(*args, timeout=60):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cfrkit", "acpc-client", *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


def test_showdown_without_opponent_cards_counts_no_invented_chips():
    game = load("holdem")
    dealer = MiniDealer(game, hands=30, seed=3, hide_showdown=True)
    dealer.start()
    reports = []
    summary = run_client("127.0.0.1", dealer.port, game, RandomAgent(5), timeout=10, report=reports.append)
    dealer.join(10)
    assert dealer.errors == []
    showdowns = len(summary.malformed)
    assert 0 < showdowns < 30 and summary.unsettled_hands == showdowns and all("not shown" in r for r in reports)
    assert summary.hands == 30 - showdowns
    # only the hands settled without a showdown are counted, exactly
    assert summary.chips == pytest.approx(dealer.client_chips - dealer.showdown_chips)


def test_dealer_killed_mid_hand_is_an_error_not_a_summary():
    game = load("holdem")
    dealer = MiniDealer(game, hands=10, seed=1, die_in_hand=4)
    dealer.start()
    with pytest.raises(ClientError, match="middle of hand 4"):
        run_client("127.0.0.1", dealer.port, game, AlwaysCallAgent(), timeout=10, report=lambda m: None)
    dealer.join(10)
    dealer = MiniDealer(game, hands=10, seed=1, die_in_hand=2)
    dealer.start()
    proc = _cli("127.0.0.1", str(dealer.port), "--agent", "always-call", "--timeout", "10")
    dealer.join(10)
    assert proc.returncode != 0
    assert "middle of hand 2" in proc.stderr and proc.stderr.strip().count("\n") == 0
    assert "acpc-client" not in proc.stdout  # no normal summary


def test_game_mismatch_is_detected_from_the_first_message():
    dealer = MiniDealer(load("holdem(definition=holdem.nolimit.3p)"), hands=3, seed=1)
    dealer.start()
    start = time.time()
    with pytest.raises(ClientError, match="does not fit the game.*3 seats"):
        run_client("127.0.0.1", dealer.port, load("holdem"), AlwaysCallAgent(), timeout=30, report=lambda m: None)
    assert time.time() - start < 5  # not after the 30 s timeout
    dealer.join(10)
    limit = load("holdem(definition=holdem.limit.2p.reverse_blinds)")
    dealer = MiniDealer(load("holdem"), hands=3, seed=4, opponent=FixedRangeRaiser("22+,A2+,K2+", 1.0))
    dealer.start()
    with pytest.raises(ClientError, match="does not fit the game"):
        run_client("127.0.0.1", dealer.port, limit, AlwaysCallAgent(), timeout=30, report=lambda m: None)
    dealer.join(10)


def test_timeout_does_not_count_the_opponents_thinking_time():
    game = load("holdem")
    dealer = MiniDealer(game, hands=2, seed=2, opponent_delay=2.0)
    dealer.start()
    summary = run_client("127.0.0.1", dealer.port, game, AlwaysCallAgent(), timeout=1.0, report=lambda m: None)
    dealer.join(10)
    assert dealer.errors == [] and summary.hands == 2
    # a bound on the opponent's thinking time is a separate, explicit option
    dealer = MiniDealer(game, hands=2, seed=2, opponent_delay=2.0)
    dealer.start()
    with pytest.raises(ClientError, match="while another player was to act"):
        run_client("127.0.0.1", dealer.port, game, AlwaysCallAgent(), timeout=5, opponent_timeout=0.2,
                   report=lambda m: None)
    dealer.join(10)


@pytest.mark.parametrize("args,fragment", [
    (["127.0.0.1", "70000"], "port must be a number 1..65535"),
    (["127.0.0.1", "0"], "port must be a number 1..65535"),
    (["127.0.0.1", "-5"], "port must be a number 1..65535"),
    (["127.0.0.1", "9", "--timeout", "inf"], "--timeout must be a positive, finite"),
    (["127.0.0.1", "9", "--timeout", "nan"], "--timeout must be a positive, finite"),
    (["127.0.0.1", "9", "--timeout", "-1"], "--timeout must be a positive, finite"),
    (["127.0.0.1", "9", "--timeout", "soon"], "--timeout must be a number"),
    (["127.0.0.1", "9", "--opponent-timeout", "inf"], "--opponent-timeout must be a positive"),
    (["127.0.0.1", "9", "--hands", "0"], "--hands must be at least 1"),
    (["127.0.0.1", "9", "--agent", "fixed-range-raiser", "--fraction", "inf"], "raise fraction"),
])
def test_cli_bad_numbers_are_one_line_errors(args, fragment, capsys):
    from cfrkit.cli import main

    if "--agent" not in args:
        args = args + ["--agent", "always-call"]
    assert main(["acpc-client", *args]) == 2  # in-process: refused before any connection
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and fragment in err, err


def test_library_refuses_bad_port_and_timeout():
    with pytest.raises(ClientError, match="1..65535"):
        run_client("127.0.0.1", 70000, load("holdem"), AlwaysCallAgent())
    with pytest.raises(ClientError, match="finite"):
        run_client("127.0.0.1", 9, load("holdem"), AlwaysCallAgent(), timeout=float("inf"))


def test_summary_chips_are_exact():
    from cfrkit.agents.acpc_client import ClientSummary

    text = str(ClientSummary(hands=3, chips=-2292710.0))
    assert "chips won -2292710 " in text and "e+" not in text
    assert "chips won +12.5 " in str(ClientSummary(hands=1, chips=12.5))


def test_cli_counts_split_pots_as_the_dealer_does():
    from cfrkit.cli.acpc_cmd import client_game

    assert client_game("holdem(definition=holdem.nolimit.3p)").fractional_split is True
    assert client_game("holdem(definition=holdem.nolimit.3p,fractional_split=false)").fractional_split is False
    # a 3-way match against a dealer that splits into fractions: the client's total is the dealer's
    game = client_game("holdem(definition=holdem.nolimit.3p)")
    dealer = MiniDealer(game, hands=60, seed=11)
    dealer.start()
    summary = run_client("127.0.0.1", dealer.port, game, AlwaysCallAgent(), timeout=10, report=lambda m: None)
    dealer.join(10)
    assert summary.hands == 60 and summary.chips == dealer.client_chips
