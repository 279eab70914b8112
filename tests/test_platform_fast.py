"""The platform's fast paths against their references: A^R's compiled row features, the orjson
message codec, the JSON door on asyncio.Protocol (messages split across segments, sweep timeouts)."""
from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from cfrkit.agents import rule_based as rb
from cfrkit.cards.hands import pair_index
from cfrkit.platform import jsonlines
from tests.platform_helpers import LineClient, free_port, start_server


def test_compiled_row_features_equal_the_numpy_reference_bit_for_bit():
    if rb._pair_row_features is None:
        pytest.skip("cfrkit._kernels.pair_masses is not built (python setup.py build_ext --inplace)")
    rng = np.random.default_rng(7)
    checked = 0
    for i in range(90):
        nb = 3 + i % 3
        cards = [int(c) for c in rng.choice(52, nb + 2, replace=False)]
        board = tuple(sorted(cards[:nb]))
        own = pair_index(cards[nb], cards[nb + 1])
        # the player's own pair, a random pair (maybe blocked by the board) and a pair holding a board card
        other = int(rng.integers(1326))
        with_board = pair_index(board[0], next(c for c in range(52) if c not in board))
        rows = np.array([own, other, with_board])
        fast = rb.BoardFeatures(board, rows)
        ref = rb.BoardFeatures(board, rows, compiled=False)
        full = rb.BoardFeatures(board, None, compiled=False)
        for name in ("hs", "ehs", "outs", "blocked"):
            a, b = getattr(fast, name), getattr(ref, name)
            assert a.dtype == b.dtype and np.array_equal(a, b), (name, board, rows, a, b)
            assert np.array_equal(a, getattr(full, name)[rows]), (name, board)
        assert (fast.wet, fast.paired) == (ref.wet, ref.paired)
        assert fast.blocked[2] and fast.hs[2] == 0.0 and fast.ehs[2] == 0.0
        checked += 1
    assert checked == 90
    with pytest.raises(ValueError):
        rb._pair_row_features(np.zeros(1326, np.int32), np.zeros((0, 1326), np.int32), np.zeros(0, np.int64), 0)
    with pytest.raises(ValueError):
        rb._pair_row_features(np.zeros(1326, np.int32), np.zeros((0, 1326), np.int32), np.arange(3, dtype=np.int64), 1326)


def test_jsonlines_reads_and_writes_what_json_does():
    msgs = [{"type": "action", "action": "raise", "amount": 300, "hand": 12},
            {"type": "state", "board": ["As", "Kd"], "spent": [100, 50], "to_act": True, "legal": None,
             "pot": 1.5, "names": ["é", "b\n"]},
            {"type": "stats", "x": -0.0, "y": 1e300, "z": [[], {}]}]
    for m in msgs:
        out = jsonlines.dumps(m)
        assert isinstance(out, bytes) and b"\n" not in out and b": " not in out
        assert json.loads(out) == m and jsonlines.loads(out) == m and jsonlines.loads(out.decode()) == m
    # what json.loads accepts and orjson does not (or reads differently) is read as json does
    big = b'{"type":"action","action":"raise","amount":100000000000000000000000000}'
    assert jsonlines.loads(big) == json.loads(big) and type(jsonlines.loads(big)["amount"]) is int
    nan = jsonlines.loads(b'{"type":"x","v":NaN}')
    assert math.isnan(nan["v"])
    assert json.loads(jsonlines.dumps({"type": "x", "v": 10 ** 30}))["v"] == 10 ** 30
    for bad in (b"{", b"\xff\xfe", b'{"type":}', b""):
        with pytest.raises(ValueError):
            jsonlines.loads(bad)


def test_json_door_reassembles_split_messages_and_times_out_by_sweep(tmp_path):
    port = free_port()
    proc = start_server(tmp_path / "p.db", port)
    try:
        c = LineClient(port)
        # one message sent a byte at a time, two in one segment, a blank line, CRLF endings
        for b in b'{"type": "ping"}\n':
            c.send_raw(bytes([b]))
            time.sleep(0.001)
        assert c.recv()["type"] == "pong"
        c.send_raw(b'{"type":"ping"}\r\n\n{"type":"ping"}\n')
        assert c.recv()["type"] == "pong" and c.recv()["type"] == "pong"
        # an over-long line split in two segments: one too_large error, then the door works again
        c.send_raw(b'{"type":"ping","pad":"' + b"x" * 3000)
        c.send_raw(b"y" * 3000 + b'"}\n{"type":"ping"}\n')
        err = c.recv()
        assert err["type"] == "error" and err["code"] == "too_large"
        assert c.recv()["type"] == "pong"
        # a seat that never answers is timed out by the server's sweep (limit >= 1 s): fold or check
        c.send({"type": "play", "opponent": "always-call", "hands": 2, "seed": 5, "time_per_action": 1.0,
                "time_bank": 0.0})
        state = c.recv_type("state")
        assert state["to_act"]
        t0 = time.monotonic()
        err = c.recv_type("error")
        waited = time.monotonic() - t0
        assert err["code"] == "timeout" and 0.9 <= waited <= 3.0, (err, waited)
        end = c.recv_type("hand_end")
        assert end["hand"] == state["hand"]
        c.close()
    finally:
        proc.kill()
        proc.wait()
