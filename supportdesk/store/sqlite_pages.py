"""Which pages a SQLite commit writes: the WAL's frames, grouped by commit and named by b-tree.

A commit in WAL mode appends one frame per page it changed (header: the page number, and for the
commit's last frame the database size). Mapping those page numbers to their table or index
(`dbstat`) says which b-trees a write touches: a count that does not depend on the machine's
load, unlike a timing. `benchmarks/bench_store.py` prints it for an append; a test pins it.
"""

from __future__ import annotations

import collections
import sqlite3
import struct
from pathlib import Path

_WAL_HEADER = 32
_FRAME_HEADER = 24


def wal_commits(wal_path: str | Path) -> list[list[int]]:
    """The page numbers of each commit in the WAL file, oldest first (frames of the current WAL
    generation only: a reset WAL keeps older frames behind, under another salt)."""
    data = Path(wal_path).read_bytes() if Path(wal_path).exists() else b""
    if len(data) < _WAL_HEADER:
        return []
    page_size = struct.unpack(">I", data[8:12])[0]
    salt = data[16:24]
    commits: list[list[int]] = []
    pending: list[int] = []
    offset = _WAL_HEADER
    while offset + _FRAME_HEADER + page_size <= len(data):
        page, db_size = struct.unpack(">II", data[offset : offset + 8])
        if data[offset + 8 : offset + 16] != salt:
            break
        pending.append(page)
        if db_size:
            commits.append(pending)
            pending = []
        offset += _FRAME_HEADER + page_size
    return commits


def page_owners(db_path: str | Path) -> dict[int, str]:
    """Each page of the database (as its WAL has it now) and the table or index it belongs to."""
    conn = sqlite3.connect(f"{Path(db_path).resolve().as_uri()}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT pageno, name FROM dbstat"))
    finally:
        conn.close()


def pages_by_btree(db_path: str | Path, commits: list[list[int]]) -> dict[str, float]:
    """Pages written per commit, by b-tree (a page no b-tree holds now: '(free)'), largest first."""
    owners = page_owners(db_path)
    counts = collections.Counter(owners.get(page, "(free)") for pages in commits for page in pages)
    return {name: n / max(1, len(commits)) for name, n in counts.most_common()}
