"""Catalogues made by earlier versions of riskapi, brought to this one's schema when first opened: each
step is one transaction that also sets the new version, so a catalogue is at one version or the next,
never between, and two processes opening it at once migrate it once."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from ..layout import RELEASES, manifest
from ..proof.leaves import manifest_tree
from . import log

# version → the statements that bring a catalogue of that version to the next
STEPS: dict[int, tuple[str, ...]] = {
    1: ("ALTER TABLE release ADD COLUMN tree_size INTEGER",  # each release's Merkle tree (history/proof/)
        "ALTER TABLE release ADD COLUMN tree_root BLOB",
        *log.STATEMENTS),  # the log of releases
    2: ("ALTER TABLE release ADD COLUMN removed_by INTEGER",),  # a prune lands with the switch that implies it
}
VERSION = max(STEPS) + 1  # the schema this riskapi writes


def migrate(db: sqlite3.Connection, site: Path, version: int) -> None:
    """Bring the catalogue `db` from `version` to VERSION, then fill in what the new columns and tables
    hold: each release's tree, then the log of the history so far."""
    for step in range(version, VERSION):
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] == step:  # else another process took this step
                for statement in STEPS[step]:
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {step + 1}")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    fill_trees(db, site)
    backfill_log(db)


def backfill_log(db: sqlite3.Connection) -> None:
    """Write the log of a history kept before it (log.backfill), in one transaction."""
    db.execute("BEGIN IMMEDIATE")
    try:
        log.backfill(db)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def fill_trees(db: sqlite3.Connection, site: Path) -> None:
    """Give each release on disk whose tree the catalogue does not hold the one its manifest states (a
    catalogue migrated, imported from a text journal or repaired); one transaction."""
    missing = [row[0] for row in db.execute("SELECT id FROM release WHERE tree_size IS NULL AND removed_at IS NULL")]
    trees = {}
    for release in missing:
        found = manifest(site / RELEASES / release)
        if found is not None:
            trees[release] = manifest_tree(found)
    if not trees:
        return
    db.execute("BEGIN IMMEDIATE")
    db.executemany("UPDATE release SET tree_size = ?, tree_root = ? WHERE id = ? AND tree_size IS NULL",
                   [(tree.size, tree.root, release) for release, tree in trees.items()])
    db.execute("COMMIT")
