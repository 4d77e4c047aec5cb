"""A lost catalogue recovered from the site's copy of its log of releases (issue 46): `riskapi releases
--repair` restores every switch with its exact instant, every prune and the log itself byte for byte, so
the next checkpoint, signed with the log's key (taken back with `riskapi log init --key FILE`), extends the
last one signed; a copy that does not hold together is refused and changes nothing. Each case is checked
again after the next build, promote and rollback."""
from __future__ import annotations

import os

from click.testing import CliRunner

from generator.build import build
from generator.catalogue import CATALOGUE, Catalogue, read_history
from generator.catalogue.log_copy import LOG_COPY
from generator.cli import main
from generator.promote import promote
from generator.publish import current_release, releases, rollback
from generator.transparency.note import open_note, read_checkpoint, read_verifier
from generator.transparency.tiles import ENTRIES, tile_path
from generator.transparency.tree import consistency_proof, leaf_hash, verify_consistency

from .conftest import TINY
from .test_catalogue import then_stage_promote_rollback


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def state(site):
    with Catalogue.open(site) as catalogue:
        return ([(p.release, p.start, p.end) for p in read_history(site).periods], catalogue.log_entries(),
                catalogue.latest_checkpoint().note, sorted(read_history(site).removed))


def lived(tmp_path):
    """A site with a signed log and a history: published, staged and promoted, rolled back, pruned."""
    site = tmp_path / "site"
    build(TINY, site, keep=2)
    vkey = run("log", "init", "--site", site, "--key", tmp_path / "log.key").output.strip().splitlines()[-1]
    build(TINY, site, force=True, keep=2)
    staged = build(TINY, site, force=True, stage=True, keep=2).release
    promote(site, staged)
    rollback(site)
    build(TINY, site, force=True, keep=2)
    return site, vkey


def test_a_lost_catalogue_is_recovered_from_the_log_with_every_instant_and_the_log_goes_on(tmp_path):
    site, vkey = lived(tmp_path)
    periods, entries, note, pruned = state(site)
    assert pruned and len(periods) == 5  # something was pruned; five switches
    os.remove(site / CATALOGUE)
    repaired = run("releases", "--site", site, "--repair")
    assert repaired.exit_code == 0, repaired.output
    assert "recovered from" in repaired.output and "riskapi log init --key" in repaired.output
    assert state(site) == (periods, entries, note, pruned)  # the exact instants, the log, the checkpoint
    # the log's key taken back: the next checkpoint is signed with it and extends the last one signed
    again = run("log", "init", "--site", site, "--key", tmp_path / "log.key")
    assert again.exit_code == 0 and again.output.strip().splitlines()[-1] == vkey
    build(TINY, site, force=True, keep=2)
    with Catalogue.open(site) as catalogue:
        after = catalogue.log_entries()
        latest = catalogue.latest_checkpoint()
    new = read_checkpoint(open_note(latest.note, [read_verifier(vkey)]).text)
    old = read_checkpoint(open_note(note, [read_verifier(vkey)]).text)
    hashes = [leaf_hash(e) for e in after]
    assert after[:len(entries)] == entries and new.size > old.size
    assert verify_consistency(old.size, new.size, old.root, new.root, consistency_proof(hashes, old.size))
    then_stage_promote_rollback(site)


def test_a_copy_that_does_not_hold_together_is_refused_and_changes_nothing(tmp_path):
    site, _ = lived(tmp_path)
    size = read_checkpoint((site / LOG_COPY / "checkpoint").read_bytes().split(b"\n\n")[0] + b"\n").size
    bundle = site / LOG_COPY / "tile" / tile_path(ENTRIES, 0, size)  # the bundle of the copy's checkpoint
    bundle.write_bytes(bundle.read_bytes().replace(b"publish", b"promote", 1))
    before = (site / CATALOGUE).read_bytes()
    refused = run("releases", "--site", site, "--repair")
    assert refused.exit_code == 1 and "does not make its checkpoint's tree" in refused.output
    assert (site / CATALOGUE).read_bytes() == before  # nothing moved
    then_stage_promote_rollback(site)


def test_a_switch_after_the_copys_checkpoint_is_recorded_as_of_the_repair(tmp_path):
    site, _ = lived(tmp_path)
    periods, entries, _, _ = state(site)
    copy = {p: p.read_bytes() for p in (site / LOG_COPY).rglob("*") if p.is_file()}
    newest = build(TINY, site, force=True, keep=2).release
    for path in (site / LOG_COPY).rglob("*"):  # the copy as it was before that build (a crash between)
        if path.is_file() and path not in copy:
            path.unlink()
    for path, data in copy.items():
        path.write_bytes(data)
    os.remove(site / CATALOGUE)
    repaired = run("releases", "--site", site, "--repair")
    assert repaired.exit_code == 0 and f"{newest} went live after the log's last copy" in repaired.output
    recovered = [(p.release, p.start, p.end) for p in read_history(site).periods]
    assert recovered[:-2] == periods[:-1] and recovered[-1][0] == newest == current_release(site)
    assert newest in releases(site)
    then_stage_promote_rollback(site)


def test_a_key_made_before_the_first_release_signs_the_empty_log_and_then_every_release(tmp_path):
    site = tmp_path / "site"
    made = run("log", "init", "--site", site, "--key", tmp_path / "log.key")  # as scripts/demo.sh does
    assert made.exit_code == 0, made.output
    vkey = made.output.strip().splitlines()[-1]
    with Catalogue.open(site) as catalogue:
        assert read_checkpoint(open_note(catalogue.latest_checkpoint().note, [read_verifier(vkey)]).text).size == 0
    build(TINY, site)
    with Catalogue.open(site) as catalogue:
        assert read_checkpoint(open_note(catalogue.latest_checkpoint().note, [read_verifier(vkey)]).text).size == 2
    then_stage_promote_rollback(site)
