"""The log of releases as the catalogue keeps it: one row per entry (history/proof/entries.py), appended in
the same transaction as the change it records — a switch's confirmation (or the settling of an intent
that took effect), a prune — so the catalogue and its log never disagree. A switch's instant in the log
is its live period's start as History.periods has it: whole seconds, each a second after the last."""
from __future__ import annotations

import sqlite3

from ..proof.entries import PRUNE, RELEASE, SWITCH, prune_entry, read_entry, release_entry, switch_entry
from ..proof.leaves import ReleaseTree
from ..proof.note import note_text, read_checkpoint
from .instants import SECOND, built_at, built_at_ms, parse_instant, rfc3339, whole_second
from .settings import LOG_ORIGIN

STATEMENTS = ("""CREATE TABLE log (
    seq INTEGER PRIMARY KEY,            -- the entry's index in the log, from 0
    event TEXT NOT NULL,                -- release, switch, prune (as the entry says)
    release TEXT NOT NULL,              -- the release it names (as the entry says)
    at INTEGER,                         -- a switch's or prune's instant in ms (as the entry says)
    entry BLOB NOT NULL                 -- canonical JSON: the leaf of the log's tree
)""", "CREATE INDEX log_release ON log (release, event)", """CREATE TABLE checkpoint (
    size INTEGER NOT NULL,              -- the log's size it states
    root BLOB NOT NULL,                 -- and the root hash of the log's tree at that size
    note BLOB NOT NULL,                 -- as served: a signed note (C2SP tlog-checkpoint); unsigned: its text
    signer TEXT NOT NULL DEFAULT ''     -- the verifier key that signed it; '': unsigned
)""", """CREATE TABLE witness (
    url TEXT PRIMARY KEY,               -- its submission prefix (C2SP tlog-witness: then /add-checkpoint)
    vkey TEXT NOT NULL,                 -- its cosignature verifier key (C2SP tlog-cosignature, type 0x04)
    size INTEGER NOT NULL DEFAULT 0     -- the log's size it last cosigned
) WITHOUT ROWID""")
SCHEMA = "".join(f"{statement};\n" for statement in STATEMENTS)


def _append(db: sqlite3.Connection, event: str, release: str, at: int | None, entry: bytes) -> None:
    size = db.execute("SELECT count(*) FROM log").fetchone()[0]
    db.execute("INSERT INTO log (seq, event, release, at, entry) VALUES (?, ?, ?, ?, ?)",
               (size, event, release, at, entry))


def _logged(db: sqlite3.Connection, release: str, event: str) -> bool:
    return db.execute("SELECT 1 FROM log WHERE release = ? AND event = ?", (release, event)).fetchone() is not None


def log_switch(db: sqlite3.Connection, seq: int) -> None:
    """Log the entries of switch `seq`, which took effect: its release's first, where the log has none (a
    release first made live), then the switch, dated the start of the live period it opens, then the prune
    made with it (dated as the switch: its releases answer 410 from the new release's first answer on)."""
    action, release, at = db.execute("SELECT action, release, at FROM switch WHERE seq = ?", (seq,)).fetchone()
    if not _logged(db, release, RELEASE):
        size, root = db.execute("SELECT tree_size, tree_root FROM release WHERE id = ?", (release,)).fetchone()
        tree = ReleaseTree(size, root) if size is not None else None
        _append(db, RELEASE, release, None, release_entry(release, built_at(release), tree))
    last = db.execute("SELECT max(at) FROM log WHERE event = ?", (SWITCH,)).fetchone()[0]
    start = whole_second(at) if last is None else max(whole_second(at), last + SECOND)
    _append(db, SWITCH, release, start, switch_entry(action, release, rfc3339(start)))
    for pruned, at in db.execute("SELECT id, removed_at FROM release WHERE removed_by = ? ORDER BY id",
                                 (seq,)).fetchall():
        log_prune(db, pruned, at)


def log_prune(db: sqlite3.Connection, release: str, at: int) -> None:
    """Log a prune, where the release was ever live (the log names no other) and its prune is not logged yet;
    dated no earlier than the last switch (which is dated the whole second after its clock's reading),
    so the log's instants never run backwards."""
    if _logged(db, release, RELEASE) and not _logged(db, release, PRUNE):
        last = db.execute("SELECT max(at) FROM log WHERE event = ?", (SWITCH,)).fetchone()[0]
        at = max(at, last or at)
        _append(db, PRUNE, release, at, prune_entry(release, rfc3339(at)))


def backfill(db: sqlite3.Connection) -> None:
    """Write a log for a history kept before the log (a catalogue migrated or imported): every switch that took
    effect and every prune, in the order they happened; nothing where the log has entries already. Run
    inside the caller's transaction."""
    if db.execute("SELECT 1 FROM log LIMIT 1").fetchone():
        return
    switches = db.execute("SELECT seq, clock FROM switch WHERE state = 'done' ORDER BY seq").fetchall()
    prunes = db.execute("SELECT id, removed_at FROM release WHERE removed_at IS NOT NULL").fetchall()
    # in the order they happened, by the clock's readings (a switch's own instant is the second after its
    # reading): switches in their own order whatever the clock said (stepped back), each placed at the
    # latest reading so far; a prune among them by its reading
    placed, last = [], 0
    for seq, clock in switches:
        last = max(last, clock)
        placed.append((last, 0, seq))
    ordered = sorted(placed + [(at, 1, release) for release, at in prunes], key=lambda e: (e[0], e[1]))
    for _, kind, value in ordered:
        if kind == 0:
            log_switch(db, value)
        else:
            log_prune(db, value, db.execute("SELECT removed_at FROM release WHERE id = ?", (value,)).fetchone()[0])


def entries(db: sqlite3.Connection, size: int = -1) -> list[bytes]:
    """Return the log, in order, or its first `size` entries (an entry stored as text by a hand's edit is read as
    its UTF-8 bytes)."""
    return [row[0] if isinstance(row[0], bytes) else str(row[0]).encode()
            for row in db.execute("SELECT entry FROM log WHERE ? < 0 OR seq < ? ORDER BY seq", (size, size))]


def restore(db: sqlite3.Connection, entries: list[bytes], note: bytes) -> tuple[set[str], str | None]:
    """Return the rows the log tells of (a catalogue made anew from a copy of its log), inside the caller's
    transaction: the log verbatim; each release it names, with its tree; each switch, done, at its
    instant; each prune; the checkpoint (its signer unknown: the next one with the site's key signs again)
    and the log's origin. Returns the releases it names and the one its last switch made live."""
    named, live = set(), None
    for seq, data in enumerate(entries):
        entry = read_entry(data)
        named.add(entry.release)
        at = None if entry.event == RELEASE else parse_instant(entry.at)
        db.execute("INSERT INTO log (seq, event, release, at, entry) VALUES (?, ?, ?, ?, ?)",
                   (seq, entry.event, entry.release, at, data))
        if entry.event == RELEASE:
            tree = (entry.tree.size, entry.tree.root) if entry.tree else (None, None)
            db.execute("INSERT OR IGNORE INTO release (id, built_at, staged, audiences, tree_size, tree_root) "
                       "VALUES (?, ?, 0, '', ?, ?)", (entry.release, built_at_ms(entry.release), *tree))
        elif entry.event == SWITCH:
            db.execute("INSERT INTO switch (action, release, at, clock, state) VALUES (?, ?, ?, ?, 'done')",
                       (entry.action, entry.release, at, at))
            live = entry.release
        else:
            db.execute("UPDATE release SET removed_at = ? WHERE id = ?", (at, entry.release))
    checkpoint = read_checkpoint(note_text(note))
    db.execute("INSERT INTO checkpoint (size, root, note, signer) VALUES (?, ?, ?, '')",
               (checkpoint.size, checkpoint.root, note))
    db.execute("INSERT INTO setting (name, value) VALUES (?, ?) "
               "ON CONFLICT (name) DO UPDATE SET value = excluded.value", (LOG_ORIGIN, checkpoint.origin))
    return named, live
