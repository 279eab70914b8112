"""Bucket table files: one uint16 array per round, memory-mapped, behind a checked header.

Layout: ``MAGIC`` (8 bytes), a JSON header padded with spaces to ``HEADER_BYTES``, then the data
(little-endian uint16, one entry per isomorphism index of the round, or per position of the
table's ``index_map`` on reduced decks).  The header holds the format version, the round, the
number of entries and buckets, the abstraction parameters, the seed, the CRC-32 of the data and
optional extra arrays' names.  Files are written under a temporary name and renamed (atomic).

A file that is truncated, foreign (wrong magic), damaged (CRC) or built with other parameters than
asked is refused with one :class:`AbstractionError`.
"""
from __future__ import annotations

import json
import os
import zlib
from typing import Dict, Optional, Tuple

import numpy as np

from cfrkit._io import temp_path
from cfrkit.abstraction.errors import AbstractionError

MAGIC = b"CFRKBKT1"
HEADER_BYTES = 4096
_CRC_CHUNK = 1 << 26


def crc32_of(array: np.ndarray) -> int:
    """CRC-32 of an array's bytes, chunked (works on multi-GB memmaps)."""
    flat = array.reshape(-1).view(np.uint8)
    crc = 0
    for start in range(0, flat.size, _CRC_CHUNK):
        crc = zlib.crc32(memoryview(np.ascontiguousarray(flat[start:start + _CRC_CHUNK])), crc)
    return crc & 0xFFFFFFFF


def create_table(path: str, entries: int, fill: int = 0xFFFF) -> Tuple[np.memmap, str]:
    """A writable uint16 memmap of ``entries`` under a temporary file next to ``path``; fill it, then
    call :func:`finish_table`.  Returns (array, temporary path)."""
    tmp = temp_path(path)
    with open(tmp, "wb") as fh:
        fh.write(MAGIC + b" " * HEADER_BYTES)
        fh.truncate(len(MAGIC) + HEADER_BYTES + 2 * int(entries))
    arr = np.memmap(tmp, dtype="<u2", mode="r+", offset=len(MAGIC) + HEADER_BYTES, shape=(int(entries),))
    if fill:
        for start in range(0, arr.size, _CRC_CHUNK):
            arr[start:start + _CRC_CHUNK] = fill
    return arr, tmp


def finish_table(arr: np.memmap, tmp: str, path: str, header: Dict[str, object]) -> None:
    """Write the header (with CRC and sizes) and atomically move the table to ``path``."""
    arr.flush()
    head = dict(header)
    head.update({"format": 1, "entries": int(arr.size), "dtype": "uint16", "crc32": crc32_of(arr)})
    text = json.dumps(head, sort_keys=True).encode()
    if len(text) > HEADER_BYTES:
        raise AbstractionError(f"bucket table header too long ({len(text)} bytes)")
    del arr
    with open(tmp, "r+b") as fh:
        fh.seek(len(MAGIC))
        fh.write(text + b" " * (HEADER_BYTES - len(text)))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_table(path: str, data: np.ndarray, header: Dict[str, object]) -> None:
    """Write a whole uint16 table at once (small tables)."""
    arr, tmp = create_table(path, data.size, fill=0)
    arr[:] = data
    finish_table(arr, tmp, path, header)


def read_header(path: str) -> Dict[str, object]:
    """The JSON header of a table file; AbstractionError if missing, foreign or truncated."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            magic = fh.read(len(MAGIC))
            raw = fh.read(HEADER_BYTES)
    except FileNotFoundError:
        raise AbstractionError(f"bucket table {path} does not exist") from None
    if magic != MAGIC:
        raise AbstractionError(f"{path} is not a cfrkit bucket table (wrong magic bytes)")
    if len(raw) < HEADER_BYTES:
        raise AbstractionError(f"bucket table {path} is truncated (header incomplete)")
    try:
        head = json.loads(raw.decode().strip())
    except (UnicodeDecodeError, ValueError):
        raise AbstractionError(f"bucket table {path} has a damaged header (unfinished build?)") from None
    need = len(MAGIC) + HEADER_BYTES + 2 * int(head.get("entries", -1))
    if head.get("format") != 1 or head.get("dtype") != "uint16":
        raise AbstractionError(f"bucket table {path} has format {head.get('format')!r}; this cfrkit reads format 1")
    if size != need:
        raise AbstractionError(f"bucket table {path} is truncated or padded: {size} bytes, expected {need}")
    return head


def open_table(path: str, expect_params: Optional[Dict[str, object]] = None, round_: Optional[int] = None,
               verify: bool = True) -> Tuple[np.memmap, Dict[str, object]]:
    """Memory-map a table read-only after checking its header (and CRC when ``verify``)."""
    head = read_header(path)
    if round_ is not None and head.get("round") != round_:
        raise AbstractionError(f"bucket table {path} is for round {head.get('round')}, expected {round_}")
    if expect_params is not None and head.get("params") != expect_params:
        diff = sorted(k for k in set(expect_params) | set(head.get("params", {}))
                      if expect_params.get(k) != head.get("params", {}).get(k))
        raise AbstractionError(f"bucket table {path} was built with other parameters (differs in: "
                               f"{', '.join(diff)}); build a new one or point to the right directory")
    arr = np.memmap(path, dtype="<u2", mode="r", offset=len(MAGIC) + HEADER_BYTES, shape=(int(head["entries"]),))
    if verify and crc32_of(arr) != head["crc32"]:
        raise AbstractionError(f"bucket table {path} is damaged (CRC-32 mismatch)")
    return arr, head
