"""A migrated schema as text, for the checked-in snapshots (``tests/schema.sql``, ``tests/schema_postgres.sql``).

`INSIKA_UPDATE_SCHEMA_SNAPSHOT=1` rewrites a snapshot instead of comparing (after adding a
migration: review the diff, commit it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import sqlite_utils

HERE = Path(__file__).parent
SQLITE_SNAPSHOT = HERE / "schema.sql"
POSTGRES_SNAPSHOT = HERE / "schema_postgres.sql"


def check_snapshot(actual: str, snapshot: Path) -> None:
    """`actual` is what `snapshot` holds (or, with the variable set, becomes it)."""
    if os.environ.get("INSIKA_UPDATE_SCHEMA_SNAPSHOT"):
        snapshot.write_text(actual, encoding="utf-8")
    assert actual == snapshot.read_text(encoding="utf-8"), \
        f"schema changed: set INSIKA_UPDATE_SCHEMA_SNAPSHOT=1 once and review {snapshot.name}"


def sqlite_schema(path: Path) -> str:
    """Every object's CREATE statement of the SQLite file at `path`, by type and name."""
    db = sqlite_utils.Database(path)
    rows = db.execute(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type, name"
    ).fetchall()
    db.close()
    return "\n".join(r[0] + ";" for r in rows) + "\n"


def postgres_schema(conn: Any, schema: str) -> str:
    """The tables (columns, types, collations, defaults, constraints), indexes, functions and
    triggers of `schema`, from pg_catalog, by name; the schema's own name reads ``<tenant>``.

    `conn` is a psycopg connection; its search_path is set to `schema` (so definitions name
    their objects unqualified).
    """
    from psycopg import sql

    conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
    out: list[str] = []
    tables = conn.execute(
        "SELECT c.oid, c.relname FROM pg_class c WHERE c.relnamespace = %s::regnamespace "
        "AND c.relkind = 'r' ORDER BY c.relname", (schema,)).fetchall()
    for oid, table in tables:
        columns = [_column(*row) for row in conn.execute(
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod), "
            "CASE WHEN a.attcollation <> t.typcollation THEN co.collname END, a.attnotnull, "
            "a.attidentity, a.attgenerated, pg_get_expr(d.adbin, d.adrelid) "
            "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
            "LEFT JOIN pg_collation co ON co.oid = a.attcollation "
            "LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
            "WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum", (oid,))]
        constraints = [f"    CONSTRAINT {name} {definition}" for name, definition in conn.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conrelid = %s AND contype <> 'n' ORDER BY conname", (oid,))]  # NOT NULL: on the column
        out.append(f"CREATE TABLE {table} (\n" + ",\n".join(columns + constraints) + "\n);")
    out += [row[0] + ";" for row in conn.execute(  # indexes of their own (not a constraint's)
        "SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE c.relnamespace = %s::regnamespace "
        "AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid) ORDER BY c.relname",
        (schema,))]
    out += [row[0].rstrip() + ";" for row in conn.execute(
        "SELECT pg_get_functiondef(p.oid) FROM pg_proc p WHERE p.pronamespace = %s::regnamespace "
        "ORDER BY p.proname, p.oid::regprocedure::text", (schema,))]
    out += [row[0] + ";" for row in conn.execute(
        "SELECT pg_get_triggerdef(g.oid) FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid "
        "WHERE c.relnamespace = %s::regnamespace AND NOT g.tgisinternal ORDER BY c.relname, g.tgname",
        (schema,))]
    text = "\n".join(out) + "\n"
    return text.replace(sql.Identifier(schema).as_string(conn), "<tenant>").replace(schema, "<tenant>")


def _column(name: str, kind: str, collation: str | None, not_null: bool, identity: str, generated: str,
            default: str | None) -> str:
    parts = [f"    {name} {kind}"]
    if collation is not None:
        parts.append(f'COLLATE "{collation}"')
    if not_null:
        parts.append("NOT NULL")
    if identity:
        parts.append("GENERATED " + ("ALWAYS" if identity == "a" else "BY DEFAULT") + " AS IDENTITY")
    elif generated:
        parts.append(f"GENERATED ALWAYS AS ({default}) STORED")
    elif default is not None:
        parts.append(f"DEFAULT {default}")
    return " ".join(parts)
