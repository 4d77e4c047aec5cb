"""The log of releases as the catalogue keeps it: an entry per release first made live, per switch
and per prune of a release that was live, appended in the transaction of the change it records; canonical
JSON valid against schemas/log-entry.json; a staged release named only once promoted; the switches'
instants those of the live periods every server answers by. A history kept before the log is logged when
its catalogue is migrated, entry for entry as if the log had been there."""
from __future__ import annotations

import json
import os

import pytest

from generator.building.validate import DocumentValidator
from generator.history.catalogue import CATALOGUE, Catalogue, read_history
from generator.history.proof.entries import canonical, read_entry
from generator.history.site import RELEASES, current_release, releases, repair_catalogue, rollback, switch_to
from generator.publish.build_release import build
from generator.publish.promote import promote

from ..conftest import TINY
from ..fault_checks import then_stage_promote_rollback, without_the_log_copy
from .test_catalogue_trees import make_version_1


def logged(site) -> list[dict]:
    with Catalogue.open(site) as catalogue:
        return [json.loads(entry) for entry in catalogue.log_entries()]


def raw_log(site) -> list[bytes]:
    with Catalogue.open(site) as catalogue:
        return catalogue.log_entries()


def tree_of(site, release) -> dict:
    with Catalogue.open(site) as catalogue:
        return catalogue.tree(release).as_json()


@pytest.fixture(scope="module")
def entry_schema():
    return DocumentValidator()


def assert_log_true(site, schema) -> None:
    """Assert every entry canonical and valid; the switches' instants the history's live periods, in order."""
    entries = raw_log(site)
    for entry in entries:
        assert canonical(json.loads(entry)) == entry and read_entry(entry)
        assert schema.schema_errors("log-entry", json.loads(entry)) == []
    switches = [json.loads(e) for e in entries if json.loads(e)["event"] == "switch"]
    periods = read_history(site).periods
    assert [(s["release"], s["at"]) for s in switches] == [(p.release, p.start_text) for p in periods]
    named = [json.loads(e)["release"] for e in entries]
    first_named = [json.loads(e)["release"] for e in entries if json.loads(e)["event"] == "release"]
    assert len(first_named) == len(set(first_named)) == len(set(named))  # each named first by its release entry
    for release in first_named:  # … and only before its first switch
        index = named.index(release)
        assert json.loads(entries[index])["event"] == "release"


def test_publish_stage_promote_rollback_each_append_what_changed_what_answers(tmp_path, entry_schema):
    site = tmp_path / "site"
    first = build(TINY, site).release
    assert logged(site) == [
        # built when its id says: 20261127T150140Z → 2026-11-27T15:01:40Z
        {"event": "release", "release": first,
         "builtAt": f"{first[:4]}-{first[4:6]}-{first[6:8]}T{first[9:11]}:{first[11:13]}:{first[13:15]}Z",
         "tree": tree_of(site, first)},
        {"event": "switch", "action": "publish", "release": first, "at": read_history(site).periods[0].start_text}]
    staged = build(TINY, site, force=True, stage=True).release
    assert len(logged(site)) == 2  # a staged release is named by nothing in the log
    promote(site, staged)
    assert [(e["event"], e.get("action"), e["release"]) for e in logged(site)[2:]] == [
        ("release", None, staged), ("switch", "promote", staged)]
    assert logged(site)[2]["tree"] == tree_of(site, staged) and tree_of(site, staged)["size"] == 164
    rollback(site)  # the first live again: a switch, not a second release entry
    assert [(e["event"], e.get("action"), e["release"]) for e in logged(site)[4:]] == [("switch", "rollback", first)]
    assert_log_true(site, entry_schema)


def test_a_prune_is_logged_for_a_release_that_was_live_and_for_no_other(tmp_path, entry_schema):
    site = tmp_path / "site"
    ids = [build(TINY, site, force=True, keep=2).release for _ in range(4)]
    prunes = [e for e in logged(site) if e["event"] == "prune"]
    assert [e["release"] for e in prunes] == ids[:2]  # the two oldest, each once
    assert all(e["at"] >= s["at"] for e in prunes for s in logged(site)[:2] if s["event"] == "switch")
    # a release the catalogue knew but that never went live (a build killed before its switch), removed
    with Catalogue.open(site) as catalogue:
        catalogue.add_release("20200101T000000Z")
        catalogue.mark_removed(["20200101T000000Z"])
    assert "20200101T000000Z" not in {e["release"] for e in logged(site)}
    assert_log_true(site, entry_schema)


def test_a_switch_whose_confirmation_was_lost_is_logged_once_when_settled(tmp_path, entry_schema):
    site = tmp_path / "site"
    first = build(TINY, site).release
    second = build(TINY, site, force=True, stage=True).release
    with Catalogue.open(site) as catalogue:
        seq = catalogue.intend("promote", second)
    switch_to(site, second)  # swapped, then killed before the confirmation
    assert len(logged(site)) == 2  # not yet: the intent is not settled
    with Catalogue.open(site) as catalogue:
        catalogue.settle()
        catalogue.confirm(seq)  # a confirmation arriving after all changes nothing
    assert [(e["event"], e["release"]) for e in logged(site)[2:]] == [("release", second), ("switch", second)]
    # and an intent whose swap never happened is never logged
    with Catalogue.open(site) as catalogue:
        catalogue.intend("rollback", first)
        catalogue.settle()
    assert len(logged(site)) == 4 and current_release(site) == second
    then_stage_promote_rollback(site)
    assert_log_true(site, entry_schema)


def test_a_history_kept_before_the_log_is_logged_entry_for_entry_when_migrated(tmp_path, entry_schema):
    site = tmp_path / "site"
    releases_built = [build(TINY, site, force=True, keep=2).release for _ in range(3)]
    staged = build(TINY, site, force=True, stage=True, keep=2).release
    promote(site, staged)
    rollback(site)
    recorded = raw_log(site)
    # keep 2: the third build prunes the first; the promote (a switch, pruning as a build does) the second
    pruned = [json.loads(e)["release"] for e in recorded if json.loads(e)["event"] == "prune"]
    assert pruned == releases_built[:2]
    make_version_1(site / CATALOGUE)  # no log, no trees
    # migrated: the same bytes, entry for entry, but that the releases pruned before there were trees in the
    # catalogue have none (their folders, and manifests, are gone)
    expected = [canonical({**json.loads(e), "tree": None}) if json.loads(e).get("release") in pruned
                and json.loads(e)["event"] == "release" else e for e in recorded]
    assert raw_log(site) == expected and expected != recorded
    recorded = expected
    then_stage_promote_rollback(site)
    assert raw_log(site)[:len(recorded)] == recorded  # appended to, never rewritten
    assert_log_true(site, entry_schema)


def test_a_repair_logs_the_history_it_recovers(tmp_path, entry_schema):
    site = tmp_path / "site"
    build(TINY, site)
    build(TINY, site, force=True)
    os.remove(site / CATALOGUE)
    without_the_log_copy(site)  # from the folders: the log is made anew (test_log_repair.py: kept, from its copy)
    repair_catalogue(site)
    assert [(e["event"], e["release"]) for e in logged(site)] == [
        (event, release) for release in releases(site) for event in ("release", "switch")]
    assert all(e["tree"] == tree_of(site, e["release"]) for e in logged(site) if e["event"] == "release")
    assert (site / RELEASES).is_dir()
    then_stage_promote_rollback(site)
    assert_log_true(site, entry_schema)
