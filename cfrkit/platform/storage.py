"""SQLite storage of the platform: matches, players, every hand, running results.

WAL journal, ``synchronous=NORMAL``: a committed hand survives a crash (``kill -9``) of the
server.  Each finished hand is stored whole, in one transaction together with the match's hand
counter and the players' running totals (the server groups the hands finished in one loop step
into one transaction: :meth:`Store.record_hands`), so after a restart the match resumes exactly after its last
stored hand; a hand that was being played at the crash was never stored: it is void and is
replayed (same deal, from :func:`~cfrkit.games.holdem.deals.deal_for_hand`).

:class:`StoreObserver` stores an in-process match of the runner (:func:`cfrkit.poker.match.play_match`)
in the same tables, so ``cfrkit results`` reads it like a served match.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
import secrets
import urllib.parse
from typing import Any, Dict, List, Optional, Sequence

from cfrkit.games.base import GameError
from cfrkit.games.holdem.game import HoldemGame
from cfrkit.games.holdem.history import acpc_log_line
from cfrkit.poker.match import Hand, MatchInfo, MatchObserver

SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY, spec TEXT NOT NULL, status TEXT NOT NULL, created REAL NOT NULL,
    hands_done INTEGER NOT NULL DEFAULT 0, restarts INTEGER NOT NULL DEFAULT 0, finished REAL);
CREATE TABLE IF NOT EXISTS players (
    match_id TEXT NOT NULL, player INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
    token TEXT, port INTEGER, PRIMARY KEY (match_id, player));
CREATE TABLE IF NOT EXISTS hands (
    match_id TEXT NOT NULL, hand_index INTEGER NOT NULL, deal_index INTEGER NOT NULL,
    seats TEXT NOT NULL, acpc TEXT NOT NULL, phh TEXT, returns TEXT NOT NULL, faults TEXT NOT NULL,
    finished REAL NOT NULL, PRIMARY KEY (match_id, hand_index));
CREATE TABLE IF NOT EXISTS results (
    match_id TEXT NOT NULL, player INTEGER NOT NULL, name TEXT NOT NULL, hands INTEGER NOT NULL,
    chips REAL NOT NULL, PRIMARY KEY (match_id, player));
"""


class StoreError(ValueError):
    """A database file that is not a platform database (or cannot be read as one)."""


class Store:
    """The platform database (one file; ``":memory:"`` for tests)."""

    def __init__(self, path: str, readonly: bool = False):
        """Open (and create, unless ``readonly``) the database at ``path``.

        ``readonly``: open an existing database for reading only (``cfrkit results``): nothing is
        written or created; raises :class:`StoreError` when the file is not a platform database."""
        self.path = str(path)
        if readonly:
            # no write-ahead log: nobody is writing (the server is stopped), so the file is read as
            # immutable and SQLite creates no -wal / -shm file; with a log (a server is running) the
            # read-only connection shares the server's log index, as WAL readers must
            live = os.path.exists(self.path + "-wal")
            uri = f"file:{urllib.parse.quote(os.path.abspath(self.path))}?mode=ro" + ("" if live else "&immutable=1")
            self.db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=60.0)
            try:
                tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            except sqlite3.DatabaseError as exc:
                self.db.close()
                raise StoreError(f"{self.path} is not a platform database ({exc})") from None
            if not {"matches", "players", "hands", "results"} <= tables:
                self.db.close()
                raise StoreError(f"{self.path} is not a platform database (no matches / hands tables)")
            return
        # several server processes (``--workers``) write to one file: a writer waits for the lock
        # (transactions are short) rather than fail a hand
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=60.0)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    # ---------------------------------------------------------------- matches
    def create_match(self, match_id: str, spec: Dict[str, Any], players: Sequence[Dict[str, Any]]) -> None:
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute("INSERT INTO matches(id, spec, status, created) VALUES (?, ?, 'running', ?)",
                            (match_id, json.dumps(spec), time.time()))
            for j, pl in enumerate(players):
                self.db.execute("INSERT INTO players(match_id, player, name, kind, token, port) VALUES (?,?,?,?,?,?)",
                                (match_id, j, pl["name"], pl["kind"], pl.get("token"), pl.get("port")))
                self.db.execute("INSERT INTO results(match_id, player, name, hands, chips) VALUES (?,?,?,0,0)",
                                (match_id, j, pl["name"]))

    def set_port(self, match_id: str, player: int, port: int) -> None:
        self.db.execute("UPDATE players SET port=? WHERE match_id=? AND player=?", (port, match_id, player))

    def running_matches(self) -> List[Dict[str, Any]]:
        rows = self.db.execute("SELECT id, spec, hands_done FROM matches WHERE status='running' ORDER BY created").fetchall()
        return [{"id": r[0], "spec": json.loads(r[1]), "hands_done": r[2], "players": self.players(r[0])} for r in rows]

    def mark_restarted(self, match_id: str) -> None:
        self.db.execute("UPDATE matches SET restarts = restarts + 1 WHERE id=?", (match_id,))

    def players(self, match_id: str) -> List[Dict[str, Any]]:
        rows = self.db.execute("SELECT player, name, kind, token, port FROM players WHERE match_id=? ORDER BY player",
                               (match_id,)).fetchall()
        return [{"player": r[0], "name": r[1], "kind": r[2], "token": r[3], "port": r[4]} for r in rows]

    def match(self, match_id: str) -> Optional[Dict[str, Any]]:
        r = self.db.execute("SELECT id, spec, status, hands_done, restarts FROM matches WHERE id=?",
                            (match_id,)).fetchone()
        if r is None:
            return None
        return {"id": r[0], "spec": json.loads(r[1]), "status": r[2], "hands_done": r[3], "restarts": r[4]}

    def match_ids(self) -> List[str]:
        return [r[0] for r in self.db.execute("SELECT id FROM matches ORDER BY created")]

    def finish_match(self, match_id: str, status: str = "finished") -> None:
        self.db.execute("UPDATE matches SET status=?, finished=? WHERE id=?", (status, time.time(), match_id))

    # ---------------------------------------------------------------- hands
    def record_hand(self, match_id: str, hand_index: int, deal_index: int, seat_of_player: Sequence[int],
                    acpc_line: str, phh: Optional[str], player_returns: Sequence[float],
                    faults: Sequence[str]) -> None:
        """Store a finished hand, the match's counter and the running totals in one transaction.

        ``phh``: the hand's PHH text, or None to derive it from the ACPC line when read."""
        self._write([(match_id, hand_index, deal_index, seat_of_player, acpc_line, player_returns, faults)], [phh])

    def record_hands(self, records: Sequence[tuple]) -> None:
        """Store several finished hands in one transaction (all or none; the server's group commit).

        ``records``: ``(match_id, hand_index, deal_index, seat_of_player, acpc_line, player_returns,
        faults)``; a match's hands in order.  PHH texts are derived from the ACPC lines when read."""
        self._write(records, [None] * len(records))

    def _write(self, records: Sequence[tuple], phhs: Sequence[Optional[str]]) -> None:
        now = time.time()
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            for (match_id, hand_index, deal_index, seat_of_player, acpc_line, player_returns, faults), phh in \
                    zip(records, phhs):
                self.db.execute("INSERT INTO hands(match_id, hand_index, deal_index, seats, acpc, phh, returns, faults, "
                                "finished) VALUES (?,?,?,?,?,?,?,?,?)",
                                (match_id, hand_index, deal_index, json.dumps(list(seat_of_player)), acpc_line, phh,
                                 json.dumps([float(x) for x in player_returns]), json.dumps(list(faults)), now))
                cur = self.db.execute("UPDATE matches SET hands_done = ? WHERE id=? AND hands_done = ?",
                                      (hand_index + 1, match_id, hand_index))
                if cur.rowcount != 1:
                    raise sqlite3.IntegrityError(f"match {match_id}: hand {hand_index} is not the next hand")
                self.db.executemany("UPDATE results SET hands = hands + 1, chips = chips + ? WHERE match_id=? AND player=?",
                                    [(float(r), match_id, j) for j, r in enumerate(player_returns)])

    def hands(self, match_id: str) -> List[Dict[str, Any]]:
        """Every stored hand of a match, in order (``phh``: PHH text, None for games PHH cannot
        describe; derived from the ACPC line when it was not stored)."""
        rows = self.db.execute("SELECT hand_index, deal_index, seats, acpc, phh, returns, faults FROM hands "
                               "WHERE match_id=? ORDER BY hand_index", (match_id,)).fetchall()
        out = [{"hand": r[0], "deal": r[1], "seats": json.loads(r[2]), "acpc": r[3], "phh": r[4],
                "returns": json.loads(r[5]), "faults": json.loads(r[6])} for r in rows]
        missing = [h for h in out if h["phh"] is None]
        if missing:
            game = self._game(match_id)
            if game is not None:
                for h in missing:
                    h["phh"] = phh_of_acpc_line(game, h["acpc"])
        return out

    def _game(self, match_id: str):
        """The match's game if PHH can describe it, else None."""
        from cfrkit.games.holdem.history import phh_compatible
        from cfrkit.games.registry import load

        m = self.match(match_id)
        if m is None:
            return None
        game = load(m["spec"]["game"])
        return game if phh_compatible(game.definition) is None else None

    def totals(self, match_id: str) -> List[float]:
        return [r[0] for r in self.db.execute("SELECT chips FROM results WHERE match_id=? ORDER BY player", (match_id,))]


def phh_of_acpc_line(game, line: str) -> str:
    """PHH text of a stored hand, replayed from its ``STATE:`` line with ``game``'s rules."""
    from cfrkit.games.holdem.history import HistoryError, replay_acpc_log, to_phh

    (res,) = replay_acpc_log(line, game)
    if res.state is None or not res.ok:
        raise HistoryError(f"stored hand does not replay: {res.message}")
    return to_phh(res.state, res.names, res.hand_number)


class StoreObserver(MatchObserver):
    """Store a runner match in the platform database: the match (kind ``local``), every hand (ACPC
    line, seats, chips per player) and the running totals, ``batch`` hands per transaction (the
    server's group commit); the match is marked ``finished``, or ``error`` when it stopped early.
    Hold'em games only (hands are stored as ACPC lines).  ``match_id``: default a random hex id."""

    def __init__(self, store: Store, match_id: Optional[str] = None, batch: int = 64):
        self.store = store
        self.match_id = match_id or secrets.token_hex(6)
        self.batch = max(1, int(batch))
        self._pending: List[tuple] = []
        self._started = False

    def match_start(self, match: MatchInfo) -> None:
        if not isinstance(match.game, HoldemGame):
            raise GameError(f"the platform stores hold'em matches, not {match.game.game_string()!r}")
        spec = {"game": match.game.game_string(), "hands": match.hands, "seed": match.seed,
                "duplicate": match.duplicate, "time_per_action": 0.0, "time_bank": 0.0,
                "players": [{"name": name, "kind": "local"} for name in match.agents]}
        self.store.create_match(self.match_id, spec, spec["players"])
        self._started = True

    def hand_end(self, hand: Hand) -> None:
        line = acpc_log_line(hand.state, hand.number, list(hand.seat_names))
        self._pending.append((self.match_id, hand.number, hand.deal, list(hand.seat_of_player), line,
                              list(hand.payoffs), []))
        if len(self._pending) >= self.batch:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self.store.record_hands(self._pending)
            self._pending = []

    def match_end(self, result) -> None:
        if not self._started:
            return
        self._flush()
        self.store.finish_match(self.match_id, "finished" if result is not None else "error")
