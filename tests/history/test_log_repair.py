"""A lost catalogue recovered from a copy of its log of releases: `riskapi releases --repair`
restores every switch with its exact instant, every prune and the log itself byte for byte, so the next
checkpoint, signed with the log's key (taken back with `riskapi log init --key FILE`), extends the last one
signed. The copy is the site's own (site/log/), or, where that is lost too, the bucket's (riskapi deploy s3
keeps one, read from Ceph's RADOS Gateway here), a server's (the log nginx answers) or a folder: the
longest of those that agree. A copy that does not hold together, two that disagree, or one the --trust key
did not sign are refused and change nothing. Each case is checked again after the next build, promote and
rollback."""
from __future__ import annotations

import hashlib
import os
import shlex
import shutil

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.history.catalogue import CATALOGUE, Catalogue, read_history
from generator.history.catalogue.log_copy import LOG_COPY, copy_files
from generator.history.proof.note import (
    Checkpoint,
    Signer,
    note_text,
    open_note,
    read_checkpoint,
    read_verifier,
    sign,
)
from generator.history.proof.tiles import ENTRIES, tile_path
from generator.history.proof.tree import consistency_proof, leaf_hash, root, verify_consistency
from generator.history.site import current_release, releases, rollback
from generator.publish.build_release import build
from generator.publish.promote import promote

from ..cli.test_readme_commands import REPAIR_LINE
from ..conftest import LOOPBACK, TINY, riskapi
from ..fault_checks import then_stage_promote_rollback
from ..live import serve_process, worker_readable_folder


def state(site):
    with Catalogue.open(site) as catalogue:
        return ([(p.release, p.start, p.end) for p in read_history(site).periods], catalogue.log_entries(),
                catalogue.latest_checkpoint().note, sorted(read_history(site).removed))


def lived(tmp_path):
    """Return a site with a signed log and a history: published, staged and promoted, rolled back, pruned."""
    site = tmp_path / "site"
    build(TINY, site, keep=2)
    vkey = riskapi("log", "init", "--site-url", LOOPBACK, "--site", site,
               "--key", tmp_path / "log.key").output.strip().splitlines()[-1]
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
    repaired = riskapi("releases", "--site", site, "--repair")
    assert repaired.exit_code == 0, repaired.output
    assert "recovered from" in repaired.output and "restored the site's settings" in repaired.output
    assert f"log key {tmp_path / 'log.key'}" in repaired.output and "--keep 2" in repaired.output
    assert state(site) == (periods, entries, note, pruned)  # the exact instants, the log, the checkpoint
    # the log's key taken back by the repair (the site's copy of its settings): the next checkpoint is signed
    # with it and extends the last one signed; `log init` with the same file changes nothing
    build(TINY, site, force=True)
    again = riskapi("log", "init", "--site", site, "--key", tmp_path / "log.key")
    assert again.exit_code == 0 and again.output.strip().splitlines()[-1] == vkey
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
    refused = riskapi("releases", "--site", site, "--repair")
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
    repaired = riskapi("releases", "--site", site, "--repair")
    assert repaired.exit_code == 0 and f"{newest} went live after the log's last copy" in repaired.output
    recovered = [(p.release, p.start, p.end) for p in read_history(site).periods]
    assert recovered[:-2] == periods[:-1] and recovered[-1][0] == newest == current_release(site)
    assert newest in releases(site)
    then_stage_promote_rollback(site)


def test_a_key_made_before_the_first_release_signs_the_empty_log_and_then_every_release(tmp_path):
    site = tmp_path / "site"
    made = riskapi("log", "init", "--site-url", LOOPBACK, "--site", site,
               "--key", tmp_path / "log.key")  # as scripts/demo.sh does
    assert made.exit_code == 0, made.output
    vkey = made.output.strip().splitlines()[-1]
    with Catalogue.open(site) as catalogue:
        assert read_checkpoint(open_note(catalogue.latest_checkpoint().note, [read_verifier(vkey)]).text).size == 0
    build(TINY, site)
    with Catalogue.open(site) as catalogue:
        assert read_checkpoint(open_note(catalogue.latest_checkpoint().note, [read_verifier(vkey)]).text).size == 2
    then_stage_promote_rollback(site)


# ---- where the site's own copy is lost too: the bucket's, a server's, a folder's ------------------------

def lost(site) -> None:
    """Delete the catalogue and the site's copy of its log (the disk that held them)."""
    os.remove(site / CATALOGUE)
    shutil.rmtree(site / LOG_COPY)


def test_the_bucket_keeps_a_copy_of_the_log_a_repair_recovers_every_instant_from(tmp_path, s3):
    site, vkey = lived(tmp_path)
    before = state(site)
    client, bucket = s3.client(), "risk-" + hashlib.sha256(str(tmp_path).encode()).hexdigest()[:12]
    client.create_bucket(Bucket=bucket)
    deploy = ["deploy", "s3", "--site", site, "--bucket", bucket, "--prefix", "risk", "--endpoint-url", s3.endpoint]
    deployed = CliRunner().invoke(main, [str(a) for a in deploy], env=s3.env())
    assert deployed.exit_code == 0, deployed.output
    copied = [item["Key"] for item in client.list_objects_v2(Bucket=bucket, Prefix="risk/log/")["Contents"]]
    assert "risk/log/checkpoint" in copied and len(copied) == 2  # the checkpoint, the one (partial) bundle
    for key in copied:  # the bucket's copy: the site's, file for file
        assert client.get_object(Bucket=bucket, Key=key)["Body"].read() == \
            (site / LOG_COPY / key.removeprefix("risk/log/")).read_bytes(), key
    lost(site)
    line = REPAIR_LINE.format(site=site, bucket=bucket, endpoint=s3.endpoint, vkey=vkey)  # as docs/operate.md shows
    repaired = CliRunner().invoke(main, shlex.split(line)[1:], env=s3.env())
    assert repaired.exit_code == 0, repaired.output
    assert f"recovered from s3://{bucket}/risk" in repaired.output
    assert state(site) == before  # the exact instants, the log, the checkpoint
    assert (site / LOG_COPY / "checkpoint").read_bytes() == before[2]  # the site's own copy written again
    then_stage_promote_rollback(site)
    assert CliRunner().invoke(main, [str(a) for a in deploy], env=s3.env()).exit_code == 0
    with Catalogue.open(site) as catalogue:  # the next deploy's copy: the grown log, its newest checkpoint
        latest = catalogue.latest_checkpoint()
    assert client.get_object(Bucket=bucket, Key="risk/log/checkpoint")["Body"].read() == latest.note
    missing = CliRunner().invoke(main, ["releases", "--site", str(site), "--repair", "--log-from",
                                        f"s3://{bucket}/elsewhere", "--endpoint-url", s3.endpoint], env=s3.env())
    assert missing.exit_code == 1 and f"s3://{bucket}/elsewhere: no copy of the log" in missing.output


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_a_server_answering_the_log_is_a_copy_a_repair_recovers_every_instant_from():
    base = worker_readable_folder("riskapi-repair-")
    try:
        site, vkey = lived(base)
        before = state(site)
        mirror = base / "mirror"  # a server elsewhere that serves the same site (its own disk)
        shutil.copytree(site, mirror, symlinks=True)
        lost(site)
        with serve_process(mirror, base / "keys.csv") as serve:
            repaired = riskapi("releases", "--site", site, "--repair", "--log-from",
                           f"http://127.0.0.1:{serve.port}/api/v1/", "--trust", vkey)
        assert repaired.exit_code == 0, repaired.output
        assert state(site) == before
        then_stage_promote_rollback(site)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_the_longest_of_the_copies_that_agree_is_taken(tmp_path):
    site, vkey = lived(tmp_path)
    older = tmp_path / "older"
    shutil.copytree(site / LOG_COPY, older)  # a copy saved before the last build
    build(TINY, site, force=True, keep=2)
    before = state(site)
    newer = tmp_path / "newer"
    shutil.copytree(site / LOG_COPY, newer)
    for own, other in ((older, newer), (newer, older)):  # the site's own copy the shorter, then the longer
        shutil.rmtree(site / LOG_COPY)
        shutil.copytree(own, site / LOG_COPY)
        os.remove(site / CATALOGUE)
        repaired = riskapi("releases", "--site", site, "--repair", "--log-from", other)
        assert repaired.exit_code == 0, repaired.output
        assert state(site) == before
    then_stage_promote_rollback(site)


def rewritten(site, folder) -> None:
    """Rewrite the site's copy of its log to hold together but tell another history: its first switch's action
    changed, its checkpoint signed by another key (what an intruder with the bucket, but not the key, makes)."""
    with Catalogue.open(site) as catalogue:
        entries = catalogue.log_entries()
        origin = read_checkpoint(note_text(catalogue.latest_checkpoint().note)).origin
    forged = [entries[0], entries[1].replace(b'"publish"', b'"promote"', 1), *entries[2:]]
    assert forged[1] != entries[1]
    note = sign(Checkpoint(origin, len(forged), root([leaf_hash(e) for e in forged])).text(),
                [Signer.generate(origin)])
    for path, data in copy_files(forged, len(forged), note).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)


def test_copies_that_disagree_or_a_copy_the_trusted_key_did_not_sign_are_refused_and_change_nothing(tmp_path):
    site, vkey = lived(tmp_path)
    before = state(site)
    forged = tmp_path / "forged"
    rewritten(site, forged)
    catalogue = (site / CATALOGUE).read_bytes()
    disagree = riskapi("releases", "--site", site, "--repair", "--log-from", forged)
    assert disagree.exit_code == 1 and "disagree at entry 1" in disagree.output
    assert str(site / LOG_COPY) in disagree.output and str(forged) in disagree.output
    shutil.rmtree(site / LOG_COPY)  # the site's copy lost: the forged one alone, and the operator's key
    unsigned = riskapi("releases", "--site", site, "--repair", "--log-from", forged, "--trust", vkey)
    assert unsigned.exit_code == 1 and "no signature of a trusted key" in unsigned.output
    assert (site / CATALOGUE).read_bytes() == catalogue and state(site) == before  # nothing moved
    then_stage_promote_rollback(site)
