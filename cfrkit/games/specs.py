"""The table of registered games and the game-string syntax, below the game protocol.

A game string is ``name`` or ``name(key=value,key=value)``.  Values are parsed as int, float,
bool (``true``/``false``) or string; a list of numbers is written with ``;`` (``fractions=0.5;1``).
Each game module calls :func:`register` with the parameters it accepts and their defaults, so an
unknown name or parameter gives an error listing what is known.

This module knows no game class: a registered factory is any callable returning a game.  The
protocol (:mod:`cfrkit.games.base`) uses it for canonical game strings and for rebuilding a game from
a serialized state; :mod:`cfrkit.games.registry` (``load``) is the public front above both.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Tuple

from cfrkit.games.errors import GameError

# Modules whose import registers games.  A game added later appends its module here.
_GAME_MODULES = [
    "cfrkit.games.kuhn",
    "cfrkit.games.leduc",
    "cfrkit.games.leduc_nolimit",
    "cfrkit.games.matrix",
    "cfrkit.games.sequential",
    "cfrkit.interop.openspiel",
    "cfrkit.games.symmtom.game",
    "cfrkit.games.holdem",
    "cfrkit.games.hanabi.game",
]


@dataclass
class GameSpec:
    name: str
    factory: Callable[..., Any]
    defaults: Dict[str, Any]
    description: str


_REGISTRY: Dict[str, GameSpec] = {}
_loaded_modules = False


def register(name: str, factory: Callable[..., Any], defaults: Dict[str, Any], description: str) -> None:
    """Make ``factory(**params)`` loadable as ``name``; ``defaults`` lists every accepted parameter."""
    _REGISTRY[name] = GameSpec(name, factory, dict(defaults), description)


def unregister(name: str) -> None:
    """Forget the game registered as ``name`` (one a test or a plugin registered for a while); a name
    that is not registered is left alone."""
    _REGISTRY.pop(name, None)


def _ensure_loaded() -> None:
    global _loaded_modules
    if _loaded_modules:
        return
    _loaded_modules = True
    for module in _GAME_MODULES:
        try:
            importlib.import_module(module)
        except ImportError as exc:  # a game whose optional dependency is missing is just not listed
            if not getattr(exc, "name", "") or exc.name.startswith("cfrkit"):
                raise


def list_games() -> List[str]:
    """Names of all registered games, sorted."""
    _ensure_loaded()
    return sorted(_REGISTRY)


def game_specs() -> Dict[str, GameSpec]:
    """Every registered game's spec (factory, parameter defaults, description) by name."""
    _ensure_loaded()
    return dict(_REGISTRY)


def _parse_value(text: str) -> Any:
    text = text.strip()
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if "(" in text:  # a nested game string stays a string
        return text
    if ";" in text:
        return tuple(_parse_value(part) for part in text.split(";") if part.strip())
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def format_value(value: Any) -> str:
    """A parameter value as written in a game string (``true``, ``0.5;1``, ``1.0``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ";".join(format_value(v) for v in value) + (";" if len(value) == 1 else "")
    if isinstance(value, float) and value.is_integer():
        return repr(value)
    return str(value)


def parse_game_string(text: str) -> Tuple[str, Dict[str, Any]]:
    """Split ``"name(k=v,...)"`` into the name and a parameter dict (values typed)."""
    text = text.strip()
    match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_\-]*)\s*(?:\((.*)\))?", text, flags=re.S)
    if not match:
        raise GameError(f"malformed game string {text!r}; expected NAME or NAME(key=value,...)")
    name, body = match.group(1), match.group(2)
    params: Dict[str, Any] = {}
    if body and body.strip():
        for item in _split_top_level(body):
            if "=" not in item:
                raise GameError(f"malformed parameter {item.strip()!r} in {text!r}; expected key=value")
            key, value = item.split("=", 1)
            params[key.strip()] = _parse_value(value)
    return name, params


def _split_top_level(body: str) -> List[str]:
    """Split on commas outside parentheses, so a parameter may itself be a game string."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    items.append(body[start:])
    return items


def format_game_string(name: str, params: Dict[str, Any]) -> str:
    """Canonical game string: parameters sorted by key."""
    if not params:
        return name
    inner = ",".join(f"{k}={format_value(params[k])}" for k in sorted(params))
    return f"{name}({inner})"


def build_game(text: str, **overrides: Any) -> Any:
    """The game a game string names (``"kuhn(players=3)"``), built by its registered factory.

    ``overrides`` replace parameters of the string.  Raises :class:`GameError` naming the known games
    or parameters for an unknown one.  :func:`cfrkit.games.registry.load` is the public front.
    """
    if not isinstance(text, str):
        raise GameError(f"expected a game string, got {type(text).__name__}")
    _ensure_loaded()
    name, params = parse_game_string(text)
    params.update(overrides)
    if name not in _REGISTRY:
        raise GameError(f"unknown game {name!r}; known games: {', '.join(sorted(_REGISTRY))}")
    spec = _REGISTRY[name]
    unknown = sorted(set(params) - set(spec.defaults))
    if unknown:
        known = ", ".join(f"{k}={format_value(v)}" for k, v in spec.defaults.items()) or "none"
        raise GameError(f"unknown parameter(s) {', '.join(unknown)} for game {name!r}; known (defaults): {known}")
    full = dict(spec.defaults)
    full.update(params)
    for key, default in spec.defaults.items():
        full[key] = _coerce(name, key, full[key], default)
    return spec.factory(**full)


def _coerce(game: str, key: str, value: Any, default: Any) -> Any:
    """Give a parameter the type of its default (int for ints, tuple of floats for tuples...)."""
    try:
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise ValueError
            return value
        if isinstance(default, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError
            return value
        if isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError
            return float(value)
        if isinstance(default, tuple):
            if not isinstance(value, tuple):
                value = (value,)
            if default and isinstance(default[0], (int, float)):
                if any(isinstance(v, (bool, str)) for v in value):
                    raise ValueError
                kind = type(default[0])
                return tuple(kind(v) for v in value)
            return tuple(value)
        if isinstance(default, str):
            return str(value)
    except (ValueError, TypeError):
        raise GameError(
            f"parameter {key}={format_value(value)!s} of game {game!r} must be of the type of its default "
            f"{format_value(default)}"
        ) from None
    return value
