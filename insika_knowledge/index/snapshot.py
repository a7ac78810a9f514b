"""A `bm25.Postings` base as one byte string, so a process opens an agent's index instead of building it.

Layout: ``b"IKS1"``, a 4-byte little-endian header length, a JSON header (the analysis
version, the change-feed cursor and generation the base is current at, and each
section's dtype and length), then the sections, each padded to 8 bytes. Arrays are
read back with `numpy.frombuffer` (no copy, read-only); the vocabulary and the concept
names are NUL-separated UTF-8.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from insika_knowledge.index.bm25 import Postings

MAGIC: Final = b"IKS1"
#: Bump when the layout or the meaning of a section changes: older snapshots are rebuilt.
FORMAT: Final = 3
_ARRAYS: Final = ("inv_ptr", "inv_docs", "inv_codes", "fwd_ptr", "fwd_codes", "lengths", "ids", "versions",
                  "confidence", "max_f", "min_length")


@dataclass(frozen=True)
class Snapshot:
    """A base with what identifies and orders its concepts: slot -> id, version, name, tie-break.

    Attributes:
        cursor: the change-feed position (``concept_versions`` id) the base includes.
        generation: the agent's generation number when the base was current.
        analysis: the analysis version its terms follow.
    """

    base: Postings
    ids: np.ndarray[Any, np.dtype[np.int64]]
    versions: np.ndarray[Any, np.dtype[np.int64]]
    confidence: np.ndarray[Any, np.dtype[np.float64]]
    names: list[str]
    updated: list[str]
    cursor: int
    generation: int
    analysis: int


def dumps(snapshot: Snapshot) -> bytes:
    """`snapshot` as bytes (see the module doc)."""
    base = snapshot.base
    arrays: dict[str, np.ndarray[Any, Any]] = {
        "inv_ptr": base.inv_ptr, "inv_docs": base.inv_docs, "inv_codes": base.inv_codes,
        "fwd_ptr": base.fwd_ptr, "fwd_codes": base.fwd_codes, "lengths": base.lengths,
        "ids": snapshot.ids, "versions": snapshot.versions, "confidence": snapshot.confidence,
        "max_f": base.max_f, "min_length": base.min_length,
    }
    texts = {name: "\0".join(values).encode("utf-8") for name, values in
             (("vocab", base.vocab), ("names", snapshot.names), ("updated", snapshot.updated))}
    sections: list[bytes] = []
    layout: list[list[Any]] = []
    for name in _ARRAYS:
        raw = np.ascontiguousarray(arrays[name]).tobytes()
        layout.append([name, arrays[name].dtype.str, len(raw)])
        sections.append(raw)
    for name, raw in texts.items():
        layout.append([name, "text", len(raw)])
        sections.append(raw)
    header = json.dumps({
        "format": FORMAT, "analysis": snapshot.analysis, "cursor": snapshot.cursor,
        "generation": snapshot.generation, "sections": layout,
        "counts": [len(base.vocab), len(snapshot.names)],
    }).encode("utf-8")
    out = [MAGIC, struct.pack("<I", len(header)), header, _pad(8 + len(header))]
    for raw in sections:
        out.append(raw)
        out.append(_pad(len(raw)))
    return b"".join(out)


def _pad(length: int) -> bytes:
    return b"\0" * (-length % 8)


def loads(data: bytes | bytearray) -> Snapshot | None:
    """The snapshot in `data`, or None when it is not one of this `FORMAT` (then rebuild)."""
    if len(data) < 8 or bytes(data[:4]) != MAGIC:
        return None
    (size,) = struct.unpack("<I", data[4:8])
    try:
        header = json.loads(data[8:8 + size].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if header.get("format") != FORMAT:
        return None
    view = memoryview(data)
    at = 8 + size
    at += -at % 8
    parts: dict[str, Any] = {}
    for name, dtype, length in header["sections"]:
        chunk = view[at:at + length]
        parts[name] = bytes(chunk).decode("utf-8") if dtype == "text" else np.frombuffer(chunk, dtype=dtype)
        at += length + (-length % 8)
    vocab_count, name_count = header["counts"]
    vocab = parts["vocab"].split("\0") if vocab_count else []
    names = parts["names"].split("\0") if name_count else []
    updated = parts["updated"].split("\0") if name_count else []
    base = Postings(vocab, parts["inv_ptr"], parts["inv_docs"], parts["inv_codes"], parts["fwd_ptr"],
                    parts["fwd_codes"], parts["lengths"], parts["max_f"], parts["min_length"])
    return Snapshot(base, parts["ids"], parts["versions"], parts["confidence"], names, updated, int(header["cursor"]),
                    int(header["generation"]), int(header["analysis"]))
