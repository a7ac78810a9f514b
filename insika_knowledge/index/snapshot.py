"""A `bm25.Postings` base as one byte string, so a process opens an agent's index instead of building it.

Layout: ``b"IKS1"``, a 4-byte little-endian header length, the CRC-32 (4 bytes, little-endian)
of everything after these 12 bytes, a JSON header (the format,
the analysis version, the change-feed cursor and generation the base is current at,
and each section's name, dtype and length), then the sections, each padded to 8 bytes.
Arrays are read back with `numpy.frombuffer` (no copy). Text columns (the vocabulary,
and per concept what a hit shows: name, description, type, provenance, updated_at,
links) are UTF-8 with an offsets array, decoded one value at a time when needed, so
opening a snapshot creates no string per concept.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from insika_knowledge.index.bm25 import Postings, readable

MAGIC: Final = b"IKS1"
_PREFIX: Final = 12  # magic, header length, CRC-32
#: Bump when the layout or the meaning of a section changes: older snapshots are rebuilt.
FORMAT: Final = 5
_ARRAYS: Final = ("inv_ptr", "inv_docs", "inv_codes", "fwd_ptr", "fwd_codes", "lengths", "ids", "versions",
                  "confidence", "conflict", "max_f", "min_length")
_COLUMNS: Final = ("vocab", "names", "descriptions", "types", "provenances", "updated", "links")
#: Separates the names in one concept's ``links`` value (no name holds it).
LINK_SEPARATOR: Final = "\x1f"


class Column(Sequence[str]):
    """Texts stored as one UTF-8 buffer and byte offsets; ``column[i]`` decodes one value."""

    def __init__(self, data: bytes, offsets: np.ndarray[Any, np.dtype[np.int64]]):
        self.data = data
        self.offsets = offsets
        self._at = readable(offsets, np.int64)  # read one value at a time

    @classmethod
    def of(cls, values: Sequence[str]) -> Column:
        """A column holding `values`."""
        encoded = [v.encode("utf-8") for v in values]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        return cls(b"".join(encoded), offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        at = self._at
        return self.data[at[index]:at[index + 1]].decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        data, offsets = self.data, self.offsets.tolist()
        return (data[a:b].decode("utf-8") for a, b in zip(offsets, offsets[1:], strict=False))


@dataclass(frozen=True)
class Snapshot:
    """A base plus, per slot, the concept it holds: id, version, tie-break, what a hit shows.

    Attributes:
        cursor: the change-feed position (``concept_versions`` id) the base includes.
        generation: the agent's generation number when the base was current.
        analysis: the analysis version its terms follow.
    """

    base: Postings
    ids: np.ndarray[Any, np.dtype[np.int64]]
    versions: np.ndarray[Any, np.dtype[np.int64]]
    confidence: np.ndarray[Any, np.dtype[np.float64]]
    conflict: np.ndarray[Any, np.dtype[np.uint8]]
    names: Sequence[str]
    descriptions: Sequence[str]
    types: Sequence[str]
    provenances: Sequence[str]
    updated: Sequence[str]
    links: Sequence[str]
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
        "conflict": snapshot.conflict, "max_f": base.max_f, "min_length": base.min_length,
    }
    for name in _COLUMNS:
        values = base.vocab if name == "vocab" else getattr(snapshot, name)
        column = values if isinstance(values, Column) else Column.of(values)
        arrays[f"{name}.offsets"] = column.offsets
        arrays[f"{name}.data"] = np.frombuffer(column.data, dtype=np.uint8)
    sections: list[bytes] = []
    layout: list[list[Any]] = []
    for name, array in arrays.items():
        raw = np.ascontiguousarray(array).tobytes()
        layout.append([name, array.dtype.str, len(raw)])
        sections.append(raw)
    header = json.dumps({
        "format": FORMAT, "analysis": snapshot.analysis, "cursor": snapshot.cursor,
        "generation": snapshot.generation, "sections": layout,
    }).encode("utf-8")
    out = [header, _pad(_PREFIX + len(header))]
    for raw in sections:
        out.append(raw)
        out.append(_pad(len(raw)))
    body = b"".join(out)
    return b"".join([MAGIC, struct.pack("<II", len(header), zlib.crc32(body)), body])


def _pad(length: int) -> bytes:
    return b"\0" * (-length % 8)


def loads(data: bytes | bytearray) -> Snapshot | None:
    """The snapshot in `data`, or None (then rebuild).

    None when `data` is not of this `FORMAT` or is damaged (truncated or altered: its
    CRC-32 or its layout does not match).
    """
    if len(data) < _PREFIX or bytes(data[:4]) != MAGIC:
        return None
    size, crc = struct.unpack("<II", data[4:_PREFIX])
    view = memoryview(data)
    if zlib.crc32(view[_PREFIX:]) != crc:
        return None
    try:
        return _parse(data, view, size)
    except (ValueError, TypeError, KeyError, IndexError):
        return None


def _parse(data: bytes | bytearray, view: memoryview, size: int) -> Snapshot | None:
    header = json.loads(bytes(data[_PREFIX:_PREFIX + size]).decode("utf-8"))  # JSONDecodeError: a ValueError
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return None
    at = _PREFIX + size
    at += -at % 8
    parts: dict[str, Any] = {}
    for name, dtype, length in header["sections"]:
        if at + length > len(data):
            return None
        parts[name] = np.frombuffer(view[at:at + length], dtype=dtype)
        at += length + (-length % 8)
    columns = {name: Column(parts[f"{name}.data"].tobytes(), parts[f"{name}.offsets"]) for name in _COLUMNS}
    base = Postings(list(columns["vocab"]), parts["inv_ptr"], parts["inv_docs"], parts["inv_codes"],
                    parts["fwd_ptr"], parts["fwd_codes"], parts["lengths"], parts["max_f"], parts["min_length"])
    return Snapshot(base, parts["ids"], parts["versions"], parts["confidence"], parts["conflict"],
                    columns["names"], columns["descriptions"], columns["types"], columns["provenances"],
                    columns["updated"], columns["links"], int(header["cursor"]), int(header["generation"]),
                    int(header["analysis"]))
