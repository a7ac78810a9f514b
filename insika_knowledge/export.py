"""Export an agent's concepts: one ``<name>.md`` per concept, one GraphML graph, or JSON.

The markdown files are the stored records byte for byte. The GraphML file has a node
per concept (name, type, description, confidence, provenance) and an edge per
``[[link]]`` that resolves to another exported concept; dangling links are dropped.
``knowledge.json`` is one JSON array and ``knowledge.jsonl`` one JSON object a line, each
object a concept's every record field with its ``status`` and ``version`` (`record`).
Every file is written atomically (temporary file, then rename), so re-running is safe.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal
from xml.sax.saxutils import escape, quoteattr

from insika_knowledge.errors import UserError
from insika_knowledge.memory import ConceptStore, StoredConcept

Format = Literal["md", "graphml", "json", "jsonl"]
#: Every export format, in the order the command line offers them.
FORMATS: Final[tuple[Format, ...]] = ("md", "graphml", "json", "jsonl")


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: the files, and for GraphML the node and edge counts."""

    files: list[Path]
    concepts: int
    edges: int = 0
    dropped_links: int = 0


def export(store: ConceptStore, agent: str, out: str | os.PathLike[str], fmt: Format = "md") -> ExportResult:
    """Write `agent`'s concepts under the folder `out` (created if needed).

    Args:
        store: the tenant's store (its current records are read).
        agent: the agent id.
        out: the folder.
        fmt: ``md`` (``<name>.md`` each), ``graphml`` (``knowledge.graphml``), ``json``
            (``knowledge.json``, an array) or ``jsonl`` (``knowledge.jsonl``, a line each).

    Returns:
        The files written and the counts.

    Raises:
        UserError: `fmt` is not one of `FORMATS`; `out` exists and is not a folder, or
            cannot be written.
    """
    if fmt not in FORMATS:
        raise UserError(f"unknown export format {fmt!r}: use {', '.join(FORMATS)}")
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"--out {folder} exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {folder}: {exc}") from None
    concepts = store.list_concepts(agent)
    if fmt == "md":
        files = []
        for stored in concepts:
            path = folder / f"{stored.concept.name}.md"
            _write_atomic(path, stored.markdown)
            files.append(path)
        return ExportResult(files, len(concepts))
    text, edges, dropped = document(concepts, fmt)
    path = folder / f"knowledge.{fmt}"
    _write_atomic(path, text)
    return ExportResult([path], len(concepts), edges, dropped)


def document(concepts: list[StoredConcept], fmt: Format) -> tuple[str, int, int]:
    """The one file of a single-file format (``graphml``, ``json``, ``jsonl``) as text: what
    `export` writes, and what ``export --out -`` prints.

    Returns:
        ``(text, edges, dropped links)``; the counts are GraphML's (0 for JSON).

    Raises:
        UserError: `fmt` is ``md`` (a file per concept) or unknown.
    """
    if fmt == "graphml":
        return graphml(concepts)
    if fmt in ("json", "jsonl"):
        return (as_json(concepts) if fmt == "json" else as_jsonl(concepts)), 0, 0
    raise UserError(f"{fmt} writes one file per concept: give --out a folder (or use graphml, json or jsonl)")


def record(stored: StoredConcept) -> dict[str, Any]:
    """One concept as a JSON-ready dict: every record field, ``status`` and ``version``.

    Keys: name, description, type, provenance, confidence (0..1), sources (session ids),
    occurrences, created_at and updated_at (ISO-8601 UTC), status (``ok`` or
    ``conflict``), version (the current version number), body (markdown).
    """
    c = stored.concept
    return {
        "name": c.name, "description": c.description, "type": c.type,
        "provenance": c.provenance, "confidence": c.confidence,
        "sources": list(c.sources), "occurrences": c.occurrences,
        "created_at": c.created_at, "updated_at": c.updated_at,
        "status": c.status, "version": stored.version, "body": c.body,
    }


def as_json(concepts: list[StoredConcept]) -> str:
    """A JSON array of `record` per concept, in the given order (the store's: by name)."""
    return json.dumps([record(c) for c in concepts], ensure_ascii=False, indent=2) + "\n"


def as_jsonl(concepts: list[StoredConcept]) -> str:
    """One compact JSON object (`record`) a line per concept; empty text for none."""
    return "".join(json.dumps(record(c), ensure_ascii=False) + "\n" for c in concepts)


def graphml(concepts: list[StoredConcept]) -> tuple[str, int, int]:
    """The GraphML document for `concepts`: (text, edges written, dangling links dropped)."""
    names = {s.concept.name for s in concepts}
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
        '  <key id="name" for="node" attr.name="name" attr.type="string"/>',
        '  <key id="type" for="node" attr.name="type" attr.type="string"/>',
        '  <key id="description" for="node" attr.name="description" attr.type="string"/>',
        '  <key id="confidence" for="node" attr.name="confidence" attr.type="double"/>',
        '  <key id="provenance" for="node" attr.name="provenance" attr.type="string"/>',
        '  <graph id="knowledge" edgedefault="directed">',
    ]
    edges = dropped = 0
    for stored in concepts:
        c = stored.concept
        out.append(f"    <node id={quoteattr(c.name)}>")
        for key, value in (
            ("name", c.name), ("type", c.type), ("description", c.description),
            ("confidence", f"{c.confidence:.2f}"), ("provenance", c.provenance),
        ):
            out.append(f'      <data key="{key}">{escape(value)}</data>')
        out.append("    </node>")
    for stored in concepts:
        for target in stored.concept.links:
            if target in names and target != stored.concept.name:
                edges += 1
                out.append(
                    f"    <edge id=\"e{edges}\" source={quoteattr(stored.concept.name)} "
                    f"target={quoteattr(target)}/>"
                )
            else:
                dropped += 1
    out += ["  </graph>", "</graphml>", ""]
    return "\n".join(out), edges, dropped


def _write_atomic(path: Path, text: str) -> None:
    # Not tempfile.mkstemp: its files are 0600, and an export should get the ordinary
    # permissions (0666 minus the umask) any file the user creates gets.
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(tmp, flags, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise UserError(f"cannot write {path}: {exc}") from None
