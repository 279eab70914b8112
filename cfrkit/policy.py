"""Policies over the game protocol and the tabular policy file format.

A *policy* is anything with ``action_probabilities(state, player=None) -> {action: probability}``.
:class:`TabularPolicy` stores one distribution per information-state key and saves to a single
``.npz`` file with metadata (game string, algorithm, iterations, ...).  Loading checks the file's
magic and version and that every array is present, so a truncated or foreign file gives a clear
:class:`PolicyFileError` rather than a traceback from numpy.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, Mapping, Optional, Protocol

import numpy as np

from cfrkit._io import atomic_open
from cfrkit._io import remove_stale_temp_files  # noqa: F401  (old import path, still used)
from cfrkit.games.base import Game, GameError, State
from cfrkit.games.registry import load
from cfrkit.games.sequential import as_sequential

FILE_MAGIC = "cfrkit-tabular-policy"
FILE_VERSION = 1


def player_key(player: int, key: str) -> str:
    """Policy key of an information-state string that several players share (e.g. OpenSpiel's
    ``oshi_zumo`` played in turns): the player is part of the key, ``"[player 1] <string>"``.

    Tables hold the plain string for every information state of one player only; lookups try the
    plain string first, then this form.
    """
    return f"[player {player}] {key}"


def shared_strings(keys_by_player: Iterable) -> set:
    """Information-state strings that occur for more than one player, from ``(player, string)`` pairs."""
    owner: Dict[str, int] = {}
    shared = set()
    for player, key in keys_by_player:
        if owner.setdefault(key, player) != player:
            shared.add(key)
    return shared


class PolicyFileError(ValueError):
    """A policy file that is missing, truncated, corrupted or not a cfrkit policy."""


class Policy(Protocol):
    def action_probabilities(self, state: State, player: Optional[int] = None) -> Dict[int, float]:
        ...


class UniformRandomPolicy:
    """Every legal action with equal probability."""

    def action_probabilities(self, state: State, player: Optional[int] = None) -> Dict[int, float]:
        legal = state.legal_actions(player)
        return {a: 1.0 / len(legal) for a in legal}


class TabularPolicy:
    """A distribution over legal actions per information-state key.

    ``table[key]`` maps action id -> probability.  States whose key is missing fall back to
    uniform over the legal actions (``missing="uniform"``) or raise ``KeyError`` (``missing="raise"``).
    """

    def __init__(self, game: "str | Game", table: Optional[Mapping[str, Mapping[int, float]]] = None,
                 metadata: Optional[Dict[str, Any]] = None, missing: str = "uniform"):
        self.game = load(game)
        self.table: Dict[str, Dict[int, float]] = {k: {int(a): float(p) for a, p in v.items()}
                                                   for k, v in (table or {}).items()}
        self.metadata: Dict[str, Any] = dict(metadata or {})
        if missing not in ("uniform", "raise"):
            raise ValueError(f"missing must be 'uniform' or 'raise', got {missing!r}")
        self.missing = missing

    def __len__(self) -> int:
        return len(self.table)

    def __contains__(self, key: str) -> bool:
        return key in self.table

    def __getitem__(self, key: str) -> Dict[int, float]:
        return self.table[key]

    def __setitem__(self, key: str, probs: Mapping[int, float]) -> None:
        self.table[key] = {int(a): float(p) for a, p in probs.items()}

    def keys(self) -> Iterable[str]:
        return self.table.keys()

    def action_probabilities(self, state: State, player: Optional[int] = None) -> Dict[int, float]:
        if player is None:
            player = state.current_player()
        key = state.information_state_string(player)
        probs = self.table.get(key)
        if probs is None:
            probs = self.table.get(player_key(player, key))
        if probs is None:
            if self.missing == "raise":
                raise KeyError(f"policy has no entry for information state {key!r}")
            legal = state.legal_actions(player)
            return {a: 1.0 / len(legal) for a in legal}
        return dict(probs)

    # ----------------------------------------------------------------- file format
    def save(self, path: str, extra_arrays: Optional[Dict[str, np.ndarray]] = None,
             extra_header: Optional[Dict[str, Any]] = None) -> None:
        """Write the policy (and metadata) to ``path`` atomically (``.npz``).

        ``extra_arrays``/``extra_header`` let a solver embed its resumable state in the same file,
        so one file is both the policy and the checkpoint.
        """
        keys = sorted(self.table)
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        for i, k in enumerate(keys):
            offsets[i + 1] = offsets[i] + len(self.table[k])
        actions = np.empty(offsets[-1], dtype=np.int32)
        probs = np.empty(offsets[-1], dtype=np.float64)
        for i, k in enumerate(keys):
            items = sorted(self.table[k].items())
            actions[offsets[i]:offsets[i + 1]] = [a for a, _ in items]
            probs[offsets[i]:offsets[i + 1]] = [p for _, p in items]
        header = {"magic": FILE_MAGIC, "version": FILE_VERSION, "game": self.game.game_string(),
                  "metadata": self.metadata, **(extra_header or {})}
        save_npz_atomic(path, header=header, keys=np.array(keys, dtype=str),
                        offsets=offsets, actions=actions, probs=probs, **(extra_arrays or {}))

    @classmethod
    def load(cls, path: str, game: "str | Game | None" = None) -> "TabularPolicy":
        """Read a policy saved by :meth:`save`; checks that it belongs to ``game`` when given."""
        header, arrays = load_npz_checked(path, FILE_MAGIC, ("keys", "offsets", "actions", "probs"))
        stored_game = header.get("game")
        if not isinstance(stored_game, str):
            raise PolicyFileError(f"{path}: corrupted header (no game string)")
        if game is not None:
            # a game object of the user's own (unregistered) must match the stored string exactly
            wanted = as_sequential(load(game)).game_string()
            if wanted != stored_game and wanted != sequential_game_string(stored_game):
                raise PolicyFileError(f"{path}: policy is for game {stored_game!r}, not {load(game).game_string()!r}")
        else:
            try:
                as_sequential(stored_game)
            except GameError as exc:
                raise PolicyFileError(f"{path}: corrupted header (game {stored_game!r}: {exc})") from None
        keys = check_array(path, arrays, "keys", "U", 1)
        offsets = check_array(path, arrays, "offsets", "iu", 1)
        actions = check_array(path, arrays, "actions", "iu", 1)
        probs = check_array(path, arrays, "probs", "f", 1)
        if (len(offsets) != len(keys) + 1 or offsets[0] != 0 or offsets[-1] != len(actions)
                or len(actions) != len(probs) or np.any(np.diff(offsets) < 0)):
            raise PolicyFileError(f"{path}: inconsistent array sizes (corrupted policy file)")
        if not np.isfinite(probs).all() or np.any(probs < 0):
            raise PolicyFileError(f"{path}: probabilities that are NaN, infinite or negative (corrupted file)")
        if len(actions) and (actions.min() < 0 or actions.max() > np.iinfo(np.int32).max):
            raise PolicyFileError(f"{path}: action ids out of range (corrupted file)")
        metadata = header.get("metadata", {})
        table = {}
        bounds = offsets.tolist()
        for i, key in enumerate(keys.tolist()):
            lo, hi = bounds[i], bounds[i + 1]
            table[str(key)] = dict(zip(actions[lo:hi].tolist(), probs[lo:hi].tolist()))
        return cls(as_sequential(load(game)) if game is not None else stored_game, table,
                   metadata=metadata if isinstance(metadata, dict) else {})


def sequential_game_string(game_string: str) -> Optional[str]:
    """Game string of the turn-based form of a registered game string (None if it does not load).

    The policy and checkpoint loaders accept a stored game string when it equals the loading game's
    string or this turn-based form of it."""
    try:
        return as_sequential(load(game_string)).game_string()
    except GameError:
        return None


def save_npz_atomic(path: str, header: Dict[str, Any], **arrays: np.ndarray) -> None:
    """Save arrays plus a JSON header to ``path`` atomically (:func:`cfrkit._io.atomic_open`), so a crash
    never leaves half a file.

    The temporary file (``<path>.tmp-<pid>``) is removed when writing fails; temporary files of
    ``path`` left by processes that were killed mid-write are removed by :func:`remove_stale_temp_files`.
    """
    with atomic_open(path, "wb") as f:
        np.savez_compressed(f, __header__=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)


#: What reading a damaged ``.npz`` raises: zipfile, zlib, numpy's .npy header parser (tokenize, ast) and
#: json raise many unrelated types on damaged bytes, so every Exception of the reading step counts as
#: "unreadable file" (KeyboardInterrupt and SystemExit still pass).
_READ_ERRORS = (Exception,)


def load_npz_checked(path: str, magic: str, required: Iterable[str]):
    """Open an ``.npz`` written by :func:`save_npz_atomic`; return ``(header, arrays)``.

    Raises:
        FileNotFoundError: no file at ``path``.
        PolicyFileError: anything else: not a zip, bad CRC or deflate stream (bit flips), truncated,
            no or unparsable header, wrong magic, missing arrays, arrays of object dtype.
    """
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    if os.path.isdir(path):
        raise PolicyFileError(f"{path}: is a directory, not a cfrkit file")
    try:
        with open(path, "rb") as fh:
            start = fh.read(4)
    except OSError as exc:
        raise PolicyFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if start != b"PK\x03\x04":  # every .npz is a zip archive; numpy would guess a pickle and say so
        what = "an empty file" if not start else "not a zip archive"
        raise PolicyFileError(f"{path}: not a cfrkit file ({what}; cfrkit files are .npz archives)")
    try:
        with np.load(path, allow_pickle=False) as data:
            if not hasattr(data, "files") or "__header__" not in data.files:
                raise PolicyFileError(f"{path}: not a cfrkit file (no header)")
            header = json.loads(bytes(data["__header__"]).decode())
            if not isinstance(header, dict):
                raise PolicyFileError(f"{path}: not a cfrkit file (header is not a mapping)")
            missing = [k for k in required if k not in data.files]
            if header.get("magic") != magic:
                raise PolicyFileError(f"{path}: expected a {magic} file, found {header.get('magic')!r}")
            if missing:
                raise PolicyFileError(f"{path}: missing arrays {missing} (truncated or corrupted file)")
            arrays = {k: data[k] for k in data.files if k != "__header__"}
    except PolicyFileError:
        raise
    except _READ_ERRORS as exc:
        raise PolicyFileError(f"{path}: unreadable cfrkit file ({type(exc).__name__}: {exc})") from None
    version = header.get("version", 0)
    if not isinstance(version, int):
        raise PolicyFileError(f"{path}: corrupted header (version {version!r})")
    if version > FILE_VERSION:
        raise PolicyFileError(f"{path}: file version {version} is newer than this cfrkit")
    return header, arrays


def check_array(path: str, arrays: Dict[str, np.ndarray], name: str, kind: str, ndim: int,
                finite: bool = False) -> np.ndarray:
    """``arrays[name]`` if it has dtype kind ``kind`` (numpy ``dtype.kind`` letters, e.g. ``"iu"``) and
    ``ndim`` dimensions (and only finite numbers with ``finite``), else :class:`PolicyFileError`."""
    a = arrays.get(name)
    if a is None:
        raise PolicyFileError(f"{path}: missing array {name!r} (corrupted file)")
    if a.dtype.kind not in kind or a.ndim != ndim:
        raise PolicyFileError(f"{path}: array {name!r} has dtype {a.dtype} and {a.ndim} dimensions "
                              f"(corrupted file)")
    if finite and a.dtype.kind == "f" and not np.isfinite(a).all():
        raise PolicyFileError(f"{path}: array {name!r} holds NaN or infinite numbers (corrupted file)")
    return a


def tabulate(game: "str | Game", policy: Policy, players: Optional[Iterable[int]] = None) -> TabularPolicy:
    """Query ``policy`` at every information state of ``game`` (full traversal) into a TabularPolicy."""
    game = load(game)
    wanted = set(range(game.num_players) if players is None else players)
    table: Dict[tuple, Dict[int, float]] = {}

    def walk(state: State) -> None:
        if state.is_terminal():
            return
        if state.is_chance_node():
            for a, _ in state.chance_outcomes():
                walk(state.child(a))
            return
        p = state.current_player()
        if p in wanted:
            key = (p, state.information_state_string(p))
            if key not in table:
                table[key] = dict(policy.action_probabilities(state, p))
        for a in state.legal_actions():
            walk(state.child(a))

    walk(game.new_initial_state())
    shared = shared_strings(table)
    return TabularPolicy(game, {(player_key(p, k) if k in shared else k): v for (p, k), v in table.items()})
