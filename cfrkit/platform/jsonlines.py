"""JSON encoding of the platform's messages: orjson when it is installed, the standard library otherwise.

Both give the same messages to a reader: compact JSON objects (no spaces), one per line on the TCP
door.  The only byte-level difference is that orjson writes non-ASCII characters as UTF-8 where the
standard library writes ``\\uXXXX`` escapes (a JSON reader decodes both to the same string).

* :func:`dumps` -- ``bytes`` of one object (no newline);
* :func:`loads` -- the object of one message (``bytes`` or ``str``); raises ``ValueError`` (and
  ``UnicodeDecodeError``, a ``ValueError``) on bad input, as ``json.loads`` does.  What
  ``json.loads`` accepts and orjson does not (``NaN``, ``Infinity``) or reads differently (an
  integer beyond 64 bits, which orjson reads as a float; caught for the values of a message's
  top-level object, where the platform's integers are) is decoded by the standard library.
"""
from __future__ import annotations

import json
from typing import Any

try:  # pragma: no cover - which branch runs depends on the environment
    import orjson as _orjson
except ImportError:  # pragma: no cover
    _orjson = None

#: the backend in use: "orjson" or "json"
BACKEND = "orjson" if _orjson is not None else "json"

_json_dumps = json.JSONEncoder(separators=(",", ":")).encode
_json_loads = json.loads


def _std_dumps(obj: Any) -> bytes:
    return _json_dumps(obj).encode("utf-8")


def _std_loads(raw) -> Any:
    return _json_loads(raw.decode("utf-8") if isinstance(raw, (bytes, bytearray, memoryview)) else raw)


if _orjson is not None:
    _or_dumps, _or_loads, _OrError = _orjson.dumps, _orjson.loads, _orjson.JSONDecodeError

    def dumps(obj: Any) -> bytes:
        """Compact JSON ``bytes`` of ``obj`` (no trailing newline)."""
        try:
            return _or_dumps(obj)
        except TypeError:  # integers beyond 64 bits, non-string keys: the standard library's way
            return _std_dumps(obj)

    def loads(raw) -> Any:
        """The JSON value of one message (``bytes`` or ``str``); ``ValueError`` if it is not JSON."""
        try:
            obj = _or_loads(raw)
        except _OrError:
            return _std_loads(raw)  # NaN / Infinity are accepted by json.loads; real errors raise here
        if type(obj) is dict:
            for v in obj.values():
                # orjson reads integers beyond 64 bits as (integral, huge) floats: read those as json does
                if type(v) is float and (v >= 9.2e18 or v <= -9.2e18) and v.is_integer():
                    return _std_loads(raw)
        return obj
else:  # pragma: no cover
    dumps = _std_dumps
    loads = _std_loads
