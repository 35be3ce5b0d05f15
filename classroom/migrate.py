"""Upgrades of a database made by an older version, in place, inside the transaction that opens it (store.py
`_open`). Versions 2 to 4 only added tables, which `metadata.create_all` makes; version 5 changes tables that hold
rows, and is done here. Each step looks at what the database has, so it is harmless where it was done already."""
from sqlalchemy import inspect, text

from .schema import ATTEMPT_TABLES, attempt_column, students


def to_v5(conn) -> None:
    """Attempts: the students get their current attempt and quiz attempt (1), and every record of their progress
    the attempt it belongs to (1: what they did before there were attempts), which joins the record's unique key."""
    found = inspect(conn)
    have = {c["name"] for c in found.get_columns(students.name)}
    for name in ("attempt", "quiz_attempt"):
        if name not in have:
            conn.execute(text(f"ALTER TABLE {students.name} ADD COLUMN {name} INTEGER NOT NULL DEFAULT 1"))
    for table in ATTEMPT_TABLES:
        columns = [c["name"] for c in found.get_columns(table.name)]
        attempt = attempt_column(table).name
        if attempt in columns:
            continue
        if conn.dialect.name == "postgresql":
            _in_place(conn, table, attempt)
        else:
            _rebuilt(conn, table, columns)


def _in_place(conn, table, attempt: str) -> None:
    """PostgreSQL: the column added (existing rows get 1), and the unique key made again with it."""
    unique = next(c for c in table.constraints if c.name == f"uq_{table.name}")
    key = ", ".join(c.name for c in unique.columns)
    conn.execute(text(f"ALTER TABLE {table.name} ADD COLUMN {attempt} INTEGER NOT NULL DEFAULT 1"))
    conn.execute(text(f"ALTER TABLE {table.name} DROP CONSTRAINT {unique.name}"))
    conn.execute(text(f"ALTER TABLE {table.name} ADD CONSTRAINT {unique.name} UNIQUE ({key})"))


def _rebuilt(conn, table, columns: list[str]) -> None:
    """SQLite, which cannot change a table's constraints: the table made anew as the schema states it, its rows
    copied over (the new column takes its default, 1), the old one dropped."""
    old = f"{table.name}_v4"
    conn.execute(text(f"ALTER TABLE {table.name} RENAME TO {old}"))
    table.create(conn)
    kept = ", ".join(c for c in columns if c in table.c)
    conn.execute(text(f"INSERT INTO {table.name} ({kept}) SELECT {kept} FROM {old}"))
    conn.execute(text(f"DROP TABLE {old}"))
