"""Each release's Merkle tree in the catalogue: recorded when the release is, the same as its
manifest states; a catalogue of the schema before (version 1) is migrated when first opened, each release
on disk given the tree of its manifest; a repair carries it; a catalogue of a newer riskapi is refused
whole. The fault cases check the state again after the next build, promote and rollback."""
from __future__ import annotations

import os
import sqlite3

import orjson
import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.errors import CatalogueError
from generator.history.catalogue import CATALOGUE, Catalogue, read_history
from generator.history.proof.leaves import ReleaseTree, release_tree
from generator.history.site import MANIFEST, RELEASES, current_release, releases
from generator.publish.build_release import build

from ..conftest import TINY
from ..fault_checks import then_stage_promote_rollback, without_the_log_copy


def manifest_of(site, release) -> dict:
    return orjson.loads((site / RELEASES / release / MANIFEST).read_bytes())


def recorded(site, release) -> ReleaseTree | None:
    with Catalogue.open(site) as catalogue:
        return catalogue.tree(release)


def stated(site, release) -> ReleaseTree:
    return ReleaseTree.from_json(manifest_of(site, release)["tree"])


def columns(path) -> dict[str, list[tuple]]:
    """Return every table's columns as SQLite reports them (name, type, not null, default, primary key)."""
    db = sqlite3.connect(path)
    try:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {table: [row[1:] for row in db.execute(f"PRAGMA table_info({table})")] for table in tables}
    finally:
        db.close()


# the release table of schema version 1, as riskapi 0.x made it (the other tables are unchanged since)
RELEASE_V1 = """CREATE TABLE release (
    id TEXT PRIMARY KEY,
    built_at INTEGER NOT NULL,
    staged INTEGER NOT NULL DEFAULT 0,
    audiences TEXT NOT NULL DEFAULT '',
    removed_at INTEGER
) WITHOUT ROWID"""


def make_version_1(path) -> None:
    """Write the catalogue as riskapi wrote it before trees and the log: its release table as version 1 had it, no
    log, version 1 (legacy_alter_table: the switch table's reference to `release` stays as it is while the
    table is swapped)."""
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(f"""PRAGMA legacy_alter_table = ON; BEGIN; DROP TABLE log; DROP TABLE checkpoint; DROP TABLE witness;
        ALTER TABLE release RENAME TO release_v2; {RELEASE_V1};
        INSERT INTO release SELECT id, built_at, staged, audiences, removed_at FROM release_v2; DROP TABLE release_v2;
        PRAGMA user_version = 1; COMMIT;""")
    db.close()


def switches(site) -> list[tuple]:
    return [(s.action, s.release, s.at) for s in read_history(site).switches]


def test_every_release_is_recorded_with_the_tree_its_manifest_states(tmp_path):
    site = tmp_path / "site"
    first = build(TINY, site).release
    staged = build(TINY, site, force=True, stage=True).release
    for release in (first, staged):
        tree = recorded(site, release)
        # the same as the tree worked out again from the manifest's files, and the one it states
        assert tree == release_tree(manifest_of(site, release)["files"]) == stated(site, release)
        assert tree.size == 164  # the tiny release's documents, worked out in test_merkle_tree.py


def test_a_version_1_catalogue_is_migrated_once_opened_keeping_its_history(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    build(TINY, site, force=True)
    fresh = columns(site / CATALOGUE)
    history_before = switches(site)
    make_version_1(site / CATALOGUE)
    assert "tree_size" not in [c[0] for c in columns(site / CATALOGUE)["release"]]
    # a release built before riskapi made trees: its manifest states none, so it is worked out from its files
    first, second = releases(site)
    old = manifest_of(site, first)
    del old["tree"]
    (site / RELEASES / first / MANIFEST).write_bytes(orjson.dumps(old))

    assert switches(site) == history_before  # read through the migration
    assert columns(site / CATALOGUE) == fresh  # the same schema as a catalogue made new
    with Catalogue.open(site) as catalogue:
        assert catalogue.db.execute("PRAGMA user_version").fetchone()[0] == 3
    assert recorded(site, first) == release_tree(old["files"]) and recorded(site, first).size == 164
    assert recorded(site, second) == stated(site, second)
    then_stage_promote_rollback(site)
    assert all(recorded(site, r) == stated(site, r) for r in releases(site) if r != first)


def test_a_release_without_a_manifest_is_migrated_without_a_tree_and_the_site_goes_on(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    build(TINY, site, force=True)
    first, second = releases(site)
    make_version_1(site / CATALOGUE)
    (site / RELEASES / first / MANIFEST).unlink()  # a damaged folder: no tree can be stated
    assert recorded(site, first) is None and recorded(site, second) == stated(site, second)
    build(TINY, site, force=True)
    then_stage_promote_rollback(site)
    assert recorded(site, current_release(site)) == stated(site, current_release(site))


def test_a_catalogue_of_a_newer_riskapi_is_refused_and_left_as_it_is(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    db = sqlite3.connect(site / CATALOGUE, isolation_level=None)
    db.execute("PRAGMA user_version = 4")
    db.close()
    before = (site / CATALOGUE).read_bytes()
    with pytest.raises(CatalogueError, match=r"written by a newer riskapi \(its schema is version 4; this one "
                                             r"reads up to 3\)"):
        Catalogue.open(site)
    result = CliRunner().invoke(main, ["build", "--data", str(TINY), "--site", str(site), "--force"])
    assert result.exit_code == 1 and "newer riskapi" in result.output
    assert (site / CATALOGUE).read_bytes() == before and len(releases(site)) == 1


def test_a_repair_records_each_release_with_its_manifest_tree(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    build(TINY, site, force=True, stage=True)
    first, staged = releases(site)
    os.remove(site / CATALOGUE)
    without_the_log_copy(site)  # from the manifests (test_log_repair.py: from the log, which states the trees too)
    result = CliRunner().invoke(main, ["releases", "--site", str(site), "--repair"])
    assert result.exit_code == 0, result.output
    assert recorded(site, first) == stated(site, first) and recorded(site, staged) == stated(site, staged)
    then_stage_promote_rollback(site)
