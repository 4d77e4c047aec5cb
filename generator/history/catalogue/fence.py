"""The instant up to which a reader knows every switch: a server answers `as_of` only up to it.

A switch is dated once its transaction holds the catalogue's write lock (Catalogue.intend): the first whole
second after the clock it reads then. So a reader that takes the write lock itself, reads the clock and
lets go has a fence: every switch committed before it is in the catalogue it reads next, and every switch
after it is dated later than the clock it read. What it then reads of the switches is whole up to that
instant (its horizon), however slow the reader or a writer is."""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from .instants import now_ms
from .store import catalogue_path

BUSY_MS = 5000  # a writer holding the lock longer: no fence (the caller knows only what it read)


@dataclass(frozen=True)
class Fence:
    at: int  # ms: every switch dated at or before it is committed
    switches: tuple[int, int, int]  # (the newest switch's seq, switches done, releases pruned): changes with any


def fence(site: Path, busy_ms: int = BUSY_MS) -> Fence | None:
    """Return the site's fence, or None where the catalogue is busy for `busy_ms`, missing or unreadable."""
    path = catalogue_path(site)
    if not path.is_file():
        return None
    try:
        connection = sqlite3.connect(path, timeout=busy_ms / 1000, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        connection.execute("BEGIN IMMEDIATE")
        try:
            at = now_ms()
            row = connection.execute(
                "SELECT (SELECT ifnull(max(seq), 0) FROM switch), (SELECT count(*) FROM switch WHERE state = 'done'), "
                "(SELECT count(*) FROM release WHERE removed_at IS NOT NULL)").fetchone()
        finally:
            connection.execute("ROLLBACK")
        return Fence(at, (int(row[0]), int(row[1]), int(row[2])))
    except sqlite3.Error:
        return None
    finally:
        connection.close()

