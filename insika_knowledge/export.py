"""Export an agent's concepts: one ``<name>.md`` per concept, one GraphML graph, or JSON.

The markdown files are the stored records byte for byte. The GraphML file has a node
per concept (name, type, description, confidence, provenance, quarantined) and an edge
per ``[[link]]`` that resolves to another exported concept; dangling links are dropped.
``knowledge.json`` is one JSON array and ``knowledge.jsonl`` one JSON object a line, each
object a concept's every record field with its ``status``, ``version`` and ``quarantined``
(and, for a concept held, why and since when; for one with claims held against it for a
person, those claims: `record`).

A concept held in quarantine (`insika_knowledge.trust`) is a claim nobody has vouched
for. A markdown file or a graph node looks like any other concept, and ``put`` of such a
file into a store serves it to a model, so markdown and GraphML exports leave held
concepts out unless asked (``include_held``); markdown then writes them apart, under
``quarantined/``. JSON carries every concept, each with its ``quarantined`` flag.
Every file is written atomically (temporary file, then rename), so re-running is safe.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, NamedTuple
from xml.sax.saxutils import escape, quoteattr

from insika_knowledge.concept import status_of
from insika_knowledge.errors import RunTimeFailure, StorageCorrupt, UserError
from insika_knowledge.memory import PossibleDuplicate, Store, StoredConcept
from insika_knowledge.trust import held_because

Format = Literal["md", "graphml", "json", "jsonl"]
#: Every export format, in the order the command line offers them.
FORMATS: Final[tuple[Format, ...]] = ("md", "graphml", "json", "jsonl")
#: The formats that leave concepts held in quarantine out unless asked (`export`'s ``include_held``).
HOLDING_BACK: Final[tuple[Format, ...]] = ("md", "graphml")
#: The subfolder of a markdown export where ``include_held`` writes the held concepts.
HELD_FOLDER: Final = "quarantined"


class Held(NamedTuple):
    """Why a concept is held in quarantine, as an export shows it."""

    reason: str  #: in one line (`insika_knowledge.trust.held_because`)
    since: str  #: ISO-8601 UTC


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: the files, and for GraphML the node and edge counts.

    Attributes:
        files: the files written.
        concepts: the concepts exported (held ones included when they were written).
        edges: GraphML's edges written.
        dropped_links: GraphML's links to no exported concept, left out.
        held: concepts held in quarantine that were written (markdown: under ``quarantined/``).
        left_out: concepts held in quarantine that were not written (markdown and
            GraphML without ``include_held``); a caller should say so.
        salvaged_from: where the records were read: ``concepts``, or ``concept_versions``
            when the current records' table of a damaged file could not be read.
        unreadable: names of concepts no version of which could be read (a damaged file):
            not written; the export is not whole (the CLI exits 1).
        stale: markdown: the files in the folder that are records of concepts the agent's
            history shows deleted or renamed away (an earlier export's), relative to the
            folder; removed when `pruned`. Empty when the file was damaged (what could not
            be read is not gone).
        pruned: the `stale` files were removed.
    """

    files: list[Path]
    concepts: int
    edges: int = 0
    dropped_links: int = 0
    held: int = 0
    left_out: int = 0
    salvaged_from: str = ""
    unreadable: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    pruned: bool = False

    def salvage_note(self) -> str | None:
        """The line to tell a person when the current records could not be read (a damaged
        file) and each concept's newest version was written instead, else None.
        """
        if not self.salvaged_from or self.salvaged_from == "concepts":
            return None
        lost = f"; unreadable: {', '.join(self.unreadable)}" if self.unreadable else ""
        return ("the file is damaged where the current records are kept: each concept was saved "
                f"from its newest version ({self.salvaged_from}{lost})")

    def stale_note(self) -> str | None:
        """The line to tell a person about records of concepts the store no longer has, else None."""
        if not self.stale:
            return None
        count = f"{len(self.stale)} record{'' if len(self.stale) == 1 else 's'}"
        shown = ", ".join(self.stale[:5]) + (", ..." if len(self.stale) > 5 else "")
        if self.pruned:
            return f"removed {count} of concepts deleted or renamed since: {shown}"
        return (f"{count} in the folder {'is' if len(self.stale) == 1 else 'are'} of concepts deleted or renamed "
                f"since: {shown}; --prune removes them")

    def left_out_note(self) -> str | None:
        """The line to tell a person when held concepts were left out, else None."""
        if not self.left_out:
            return None
        return (f"{self.left_out} concept{'' if self.left_out == 1 else 's'} held in quarantine not exported; "
                "--include-held to include them")


def export(store: Store, agent: str, out: str | os.PathLike[str], fmt: Format = "md", *,
           include_held: bool = False, prune: bool = False) -> ExportResult:
    """Write `agent`'s concepts under the folder `out` (created if needed).

    Args:
        store: the tenant's store (its current records are read).
        agent: the agent id.
        out: the folder.
        fmt: ``md`` (``<name>.md`` each), ``graphml`` (``knowledge.graphml``), ``json``
            (``knowledge.json``, an array) or ``jsonl`` (``knowledge.jsonl``, a line each).
        include_held: also write the concepts held in quarantine in ``md`` (under
            ``quarantined/``) and ``graphml`` (their node's ``quarantined`` is true).
            JSON always carries every concept, with its ``quarantined`` flag.
        prune: ``md``: remove the folder's records of concepts the agent no longer has
            (`ExportResult.stale`: a file named as a concept the agent's history shows
            deleted or renamed away that is, byte for byte, one of its recorded versions;
            nothing else is touched: another agent's records, a person's drafts or edits,
            held concepts left out, links).

    Returns:
        The files written and the counts (``left_out``: the held concepts not written).

    Raises:
        UserError: `fmt` is not one of `FORMATS`; `out` exists and is not a folder, or
            cannot be written.
        RunTimeFailure: the device failed under a write (full, over quota, I/O error):
            the message says how many records were written (each is whole: a record is
            written to a temporary file and renamed into place).
    """
    if fmt not in FORMATS:
        raise UserError(f"unknown export format {fmt!r}: use {', '.join(FORMATS)}")
    folder = Path(out)
    _make_folder(folder, "--out ")
    concepts, source, lost = store.salvage(agent)
    if fmt == "md":
        kept, held = _split(concepts, include_held)
        files: list[Path] = []
        if held:
            _make_folder(folder / HELD_FOLDER)
        paths = [(folder / HELD_FOLDER if s.quarantined else folder) / f"{s.concept.name}.md" for s in kept]
        _writable(paths)
        for stored, path in zip(kept, paths, strict=True):
            try:
                _write_atomic(path, stored.markdown)
            except RunTimeFailure as exc:
                raise RunTimeFailure(f"the export is incomplete: {len(files)} of {len(kept)} records written "
                                     f"to {folder} ({exc})") from None
            files.append(path)
        # only a record of what this agent's history shows gone (deleted, or renamed away:
        # an alias now) is stale; another agent's record, a person's draft, a held concept
        # left out, and anything of a damaged file (what could not be read is not gone) are not
        whole = source == "concepts" and not lost
        stale = _stale_records(folder, set(files), _gone(store, agent)) if whole else []
        if prune:
            for path in stale:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        return ExportResult(files, len(kept), held=held, left_out=len(concepts) - len(kept), salvaged_from=source,
                            unreadable=lost, stale=tuple(str(p.relative_to(folder)) for p in stale), pruned=prune)
    text, result = render(store, agent, fmt, include_held=include_held, concepts=concepts)
    path = folder / f"knowledge.{fmt}"
    _writable([path])
    _write_atomic(path, text)
    return ExportResult([path], result.concepts, result.edges, result.dropped_links, result.held,
                        result.left_out, salvaged_from=source, unreadable=lost)


def render(store: Store, agent: str, fmt: Format, *, include_held: bool = False,
           concepts: list[StoredConcept] | None = None) -> tuple[str, ExportResult]:
    """The one file of a single-file format (``graphml``, ``json``, ``jsonl``) as text: what
    `export` writes, and what ``export --out -`` prints; held concepts as `export` treats them.

    Args:
        store: the tenant's store.
        agent: the agent id.
        fmt: ``graphml``, ``json`` or ``jsonl``.
        include_held: also write the concepts held in quarantine in GraphML (JSON always does).
        concepts: `agent`'s records when already read (None: read from `store`).

    Returns:
        ``(text, counts)``; the counts' ``files`` is empty.

    Raises:
        UserError: `fmt` is ``md`` (a file per concept) or unknown.
    """
    if fmt not in FORMATS or fmt == "md":
        raise _one_file_only(fmt)
    listed, source, lost = store.salvage(agent) if concepts is None else (concepts, "", ())
    kept, held = _split(listed, include_held or fmt not in HOLDING_BACK)
    holds: dict[str, Held] = {}
    for stored in kept:
        try:
            why = store.quarantine_of(agent, stored.concept.name) if stored.quarantined else None
        except StorageCorrupt:
            why = None  # a salvaged record, its reason unreadable: still written as held
        if why is not None:
            holds[stored.concept.name] = Held(held_because(why.supported_by, why.markers), why.since)
    try:
        challenged = frozenset(store.challenged_names(agent))
        exported = {stored.concept.name for stored in kept}
        claims = {name: store.possible_duplicates(agent, name) for name in sorted(challenged & exported)} \
            if fmt in ("json", "jsonl") else {}
    except StorageCorrupt:
        challenged, claims = frozenset(), {}  # a salvaged store: the records' own status
    text, edges, dropped = document(kept, fmt, holds, challenged, claims)
    return text, ExportResult([], len(kept), edges, dropped, held, len(listed) - len(kept), salvaged_from=source,
                              unreadable=lost)


def _split(concepts: list[StoredConcept], include_held: bool) -> tuple[list[StoredConcept], int]:
    """The concepts to write, and how many of them are held in quarantine."""
    kept = concepts if include_held else [s for s in concepts if not s.quarantined]
    return kept, sum(s.quarantined for s in kept)


def document(concepts: list[StoredConcept], fmt: Format, holds: Mapping[str, Held] | None = None,
             challenged: Collection[str] = (),
             claims: Mapping[str, Sequence[PossibleDuplicate]] | None = None) -> tuple[str, int, int]:
    """The text of a single-file format (``graphml``, ``json``, ``jsonl``) for exactly `concepts`.

    Args:
        concepts: the records, in the order written.
        fmt: ``graphml``, ``json`` or ``jsonl``.
        holds: why each held concept is held (`record`), by name.
        challenged: the policies whose contradicting sightings await a person (`record`).
        claims: JSON: the open claims held against each concept, by name (`record`).

    Returns:
        ``(text, edges, dropped links)``; the counts are GraphML's (0 for JSON).

    Raises:
        UserError: `fmt` is ``md`` (a file per concept) or unknown.
    """
    if fmt == "graphml":
        return graphml(concepts, challenged)
    if fmt in ("json", "jsonl"):
        write = as_json if fmt == "json" else as_jsonl
        return write(concepts, holds, challenged, claims), 0, 0
    raise _one_file_only(fmt)


def _one_file_only(fmt: str) -> UserError:
    if fmt not in FORMATS:
        return UserError(f"unknown export format {fmt!r}: use {', '.join(FORMATS)}")
    return UserError(f"{fmt} writes one file per concept: give --out a folder (or use graphml, json or jsonl)")


def record(stored: StoredConcept, hold: Held | None = None, challenged: Collection[str] = (),
           claims: Sequence[PossibleDuplicate] = ()) -> dict[str, Any]:
    """One concept as a JSON-ready dict: every record field, ``status``, ``version`` and ``quarantined``.

    Keys: name, description, type, provenance, confidence (0..1), sources (session ids),
    occurrences, created_at and updated_at (ISO-8601 UTC), status (``ok`` or ``conflict``:
    contradicting reports in the body, or a policy among `challenged`), version (the current
    version number), quarantined (True while it is held in quarantine: never handed to a
    model until a person approves it), body (markdown). A held concept whose quarantine row
    is given (`hold`) also has quarantine_reason (why, in one line) and quarantined_since
    (ISO-8601 UTC). A concept with open claims held against it for a person (`claims`: a
    possible duplicate, or a policy's contradicting sighting) also has held_claims, one
    object each: name (proposed under), description, type, body, session_id, turn_id,
    seen_at, similarity (0..1), why; what ``conflicts`` shows, and ``learn-held`` /
    ``dismiss`` settle.
    """
    c = stored.concept
    out: dict[str, Any] = {
        "name": c.name, "description": c.description, "type": c.type,
        "provenance": c.provenance, "confidence": c.confidence,
        "sources": list(c.sources), "occurrences": c.occurrences,
        "created_at": c.created_at, "updated_at": c.updated_at,
        "status": status_of(c, challenged), "version": stored.version, "quarantined": stored.quarantined,
    }
    if stored.quarantined and hold is not None:
        out["quarantine_reason"] = hold.reason
        out["quarantined_since"] = hold.since
    if claims:
        out["held_claims"] = [{"name": h.name, "description": h.description, "type": h.type, "body": h.body,
                               "session_id": h.session_id, "turn_id": h.turn_id, "seen_at": h.seen_at,
                               "similarity": h.similarity, "why": h.why} for h in claims]
    out["body"] = c.body
    return out


def as_json(concepts: list[StoredConcept], holds: Mapping[str, Held] | None = None,
            challenged: Collection[str] = (), claims: Mapping[str, Sequence[PossibleDuplicate]] | None = None) -> str:
    """A JSON array of `record` per concept, in the given order (the store's: by name)."""
    found, held = holds or {}, claims or {}
    return json.dumps([record(c, found.get(c.concept.name), challenged, held.get(c.concept.name, ()))
                       for c in concepts], ensure_ascii=False, indent=2) + "\n"


def as_jsonl(concepts: list[StoredConcept], holds: Mapping[str, Held] | None = None,
             challenged: Collection[str] = (), claims: Mapping[str, Sequence[PossibleDuplicate]] | None = None) -> str:
    """One compact JSON object (`record`) a line per concept; empty text for none."""
    found, held = holds or {}, claims or {}
    return "".join(json.dumps(record(c, found.get(c.concept.name), challenged, held.get(c.concept.name, ())),
                              ensure_ascii=False) + "\n" for c in concepts)


def graphml(concepts: list[StoredConcept], challenged: Collection[str] = ()) -> tuple[str, int, int]:
    """The GraphML document for `concepts`: (text, edges written, dangling links dropped).

    A node's ``status`` is ``ok`` or ``conflict`` (as `record` says it: contradicting
    reports, or claims held against it among `challenged`); its ``quarantined`` is true for a
    concept held in quarantine, and the other nodes carry no value for it.
    """
    names = {s.concept.name for s in concepts}
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
        '  <key id="name" for="node" attr.name="name" attr.type="string"/>',
        '  <key id="type" for="node" attr.name="type" attr.type="string"/>',
        '  <key id="description" for="node" attr.name="description" attr.type="string"/>',
        '  <key id="confidence" for="node" attr.name="confidence" attr.type="double"/>',
        '  <key id="provenance" for="node" attr.name="provenance" attr.type="string"/>',
        '  <key id="status" for="node" attr.name="status" attr.type="string"/>',
        '  <key id="quarantined" for="node" attr.name="quarantined" attr.type="boolean"/>',
        '  <graph id="knowledge" edgedefault="directed">',
    ]
    edges = dropped = 0
    for stored in concepts:
        c = stored.concept
        out.append(f"    <node id={quoteattr(c.name)}>")
        for key, value in (
            ("name", c.name), ("type", c.type), ("description", c.description),
            ("confidence", f"{c.confidence:.2f}"), ("provenance", c.provenance),
            ("status", status_of(c, challenged)),
        ):
            out.append(f'      <data key="{key}">{escape(value)}</data>')
        if stored.quarantined:  # the others carry no value: not held
            out.append('      <data key="quarantined">true</data>')
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


def _gone(store: Store, agent: str) -> Callable[[str, bool], frozenset[str]]:
    """For a name `agent` had a concept under and no longer has (deleted, or renamed away:
    the old name is an alias now), the records its history holds under that name; for a
    record under ``quarantined/`` (`held` true), also those of a concept no longer held there
    (approved since: its record is now written beside the others), and for one beside the
    others, those of a concept held now (a deleted rule's name a held claim took: never
    written there); else none.
    """
    deleted = {v.name for v in store.deleted(agent)}

    def records(name: str, held: bool) -> frozenset[str]:
        now = store.alias_of(agent, name)  # renamed away: its history moved to the new name
        stored = store.get(agent, name)
        if stored is not None and held != stored.quarantined:  # a record where the concept is not written now
            return frozenset(v.markdown for v in store.versions(agent, name))
        if stored is not None or (name not in deleted and now is None):
            return frozenset()
        return frozenset(v.markdown for n in {name, now} if n is not None for v in store.versions(agent, n))
    return records


def _stale_records(folder: Path, written: set[Path], gone: Callable[[str, bool], frozenset[str]]) -> list[Path]:
    """The ``.md`` files of `folder` (and its ``quarantined/``, unless a link to elsewhere) that
    this export did not write and that are, byte for byte, a record the agent's history holds
    of a concept that is `gone` (or, under ``quarantined/``, no longer held): an earlier
    export's. Not a link, not a file edited since (a person's draft), not another agent's
    record of the same name. Sorted.
    """
    held = folder / HELD_FOLDER
    found = []
    for path in sorted([*folder.glob("*.md"), *([] if held.is_symlink() else held.glob("*.md"))]):
        if path in written or path.is_symlink() or not path.is_file():
            continue
        records = gone(path.stem, path.parent == held)
        if not records:
            continue
        try:
            if path.read_bytes().decode("utf-8") in records:
                found.append(path)
        except (OSError, UnicodeDecodeError):
            continue  # not readable: someone else's file
    return found


def _make_folder(folder: Path, named: str = "") -> None:
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{named}{folder} exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {folder}: {exc}") from None


def _writable(paths: list[Path]) -> None:
    """Refuse, before anything is written, a record's path that a folder (or anything but
    a file) takes: the export would stop there with the records before it written.

    Raises:
        UserError: names the first such path.
    """
    for path in paths:
        if path.exists() and not path.is_file():
            what = "a folder" if path.is_dir() else "no regular file"
            raise UserError(f"cannot write {path}: it is {what}: nothing was written (move it, or export "
                            "to another folder)")


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
        if exc.errno in _DEVICE_FAILURES:  # the disk, not the path the caller gave
            raise RunTimeFailure(f"cannot write {path}: {exc}") from None
        raise UserError(f"cannot write {path}: {exc}") from None


#: Write errors of the device (full, over quota, failing): a run-time failure, not a bad --out.
_DEVICE_FAILURES: Final = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO})
