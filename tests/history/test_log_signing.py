"""Signing the log of releases: signed notes as C2SP signed-note and Go's sumdb/note have them
(the specification's own example, keys whose base64 holds '+', Go signing with our key file and verifying
ours), the operator's key (made 0600 outside the site, never twice by accident, rotated with old
checkpoints still verifying), a site without a key (unsigned, and saying so), a log whose history was
rewritten (never signed; the switch still happens), and the API root naming the verifier key. Fault
cases are checked again after the next build, promote and rollback."""
from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess

import pytest

from generator.errors import CatalogueError
from generator.history.catalogue import CATALOGUE, Catalogue, read_history
from generator.history.proof.note import (
    Checkpoint,
    NoteError,
    Signer,
    open_note,
    read_checkpoint,
    read_signer,
    read_verifier,
    sign,
)
from generator.history.proof.tiles import bundles, tiles
from generator.history.proof.tree import leaf_hash
from generator.history.site import CURRENT, current_release
from generator.publish.build_release import build

from ..conftest import LOOPBACK, TINY, riskapi
from ..fault_checks import then_stage_promote_rollback
from .test_interop_go import tlogcheck  # noqa: F401  (the fixture)

EXAMPLE_VKEY = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
EXAMPLE_NOTE = ("This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1"
                "ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n").encode()



# ---- notes and keys ----------------------------------------------------------------------------------------

def test_the_signed_note_specifications_example_verifies_and_nothing_else_does():
    opened = open_note(EXAMPLE_NOTE, [read_verifier(EXAMPLE_VKEY)])
    assert opened.text == b"This is an example message.\n" and opened.verified == (EXAMPLE_VKEY,)
    for broken in (EXAMPLE_NOTE.replace(b"example message", b"example massage"),  # the text
                   EXAMPLE_NOTE.replace(b"Uw2Q", b"Uw2R"),  # the signature
                   EXAMPLE_NOTE.replace(b"\n\n", b"\n"),  # no blank line
                   EXAMPLE_NOTE + b"\x01"):  # a control character
        with pytest.raises(NoteError):
            open_note(broken, [read_verifier(EXAMPLE_VKEY)])
    other = Signer.generate("example.com/foo").verifier  # same name, another key: an unknown signature
    with pytest.raises(NoteError, match="no signature of a trusted key"):
        open_note(EXAMPLE_NOTE, [other])
    with pytest.raises(NoteError):
        read_verifier(EXAMPLE_VKEY.replace("530d903a", "530d903b"))  # an ID that is not the key's


def test_keys_read_back_whatever_their_base64_holds():
    for _ in range(64):  # a '+' in base64 about every other key: the fields are split up to the second '+'
        signer = Signer.generate("127.0.0.1:8080/api/v1/log")
        assert read_signer(signer.skey) == signer and read_verifier(signer.verifier.vkey) == signer.verifier
        assert open_note(sign(b"a\nb\n", [signer]), [signer.verifier]).text == b"a\nb\n"


def test_go_signs_with_our_key_file_and_we_verify_it_and_the_other_way(tlogcheck):  # noqa: F811
    signer = Signer.generate("example.org/log")
    text = Checkpoint("example.org/log", 5, leaf_hash(b"x")).text()
    result = subprocess.run([str(tlogcheck), "sign"], input=signer.skey.encode() + b"\n\n" + text,
                            capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == sign(text, [signer])  # Ed25519 is deterministic: the same bytes as ours
    assert read_checkpoint(open_note(result.stdout, [signer.verifier]).text).size == 5
    verified = subprocess.run([str(tlogcheck), "note", signer.verifier.vkey], input=sign(text, [signer]),
                              capture_output=True, timeout=60)
    assert verified.returncode == 0 and verified.stdout == text


def test_partial_tiles_and_bundles_of_earlier_checkpoints_are_kept_until_their_full_one():
    hashes = [leaf_hash(b"%d" % i) for i in range(300)]
    # checkpoints at 3, 200 (before the first full tile), 258 and 300 (after): the partial tiles of 258 and
    # 300 are served; those of 3 and 200 are not needed, their full tile 0/000 is there
    found = tiles(hashes, sizes=(3, 200, 258, 300))
    assert sorted(found) == ["0/000", "0/001.p/2", "0/001.p/44", "1/000.p/1"]
    assert found["0/001.p/2"] == b"".join(hashes[256:258])
    assert sorted(bundles([b"e"] * 300, sizes=(3, 258))) == ["entries/000", "entries/001.p/2", "entries/001.p/44"]


# ---- the operator's key ------------------------------------------------------------------------------------

def test_log_init_makes_a_key_only_its_owner_reads_outside_the_site_and_signs_with_it(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    assert "unsigned: `riskapi log init` makes its key" in riskapi("log", "status", "--site", site).output
    assert riskapi("log", "init", "--site-url", LOOPBACK, "--site", site,
               "--key", site / "log.key").exit_code == 1  # inside the site
    made = riskapi("log", "init", "--site-url", LOOPBACK, "--site", site, "--key", tmp_path / "keys" / "log.key")
    assert made.exit_code == 0, made.output
    vkey = made.output.strip().splitlines()[-1]
    key_file = tmp_path / "keys" / "log.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert read_signer(key_file.read_text().strip()).verifier.vkey == vkey
    again = riskapi("log", "init", "--site-url", LOOPBACK, "--site", site, "--key", tmp_path / "keys" / "other.key")
    assert again.exit_code == 1 and "--rotate" in again.output and not (tmp_path / "keys" / "other.key").exists()
    with Catalogue.open(site) as catalogue:
        note = catalogue.latest_checkpoint().note
    checkpoint = read_checkpoint(open_note(note, [read_verifier(vkey)]).text)
    assert checkpoint.origin == "127.0.0.1:8080/api/v1/log" and checkpoint.size == 2
    # the next release's API root names the key clients verify with
    build(TINY, site, force=True)
    root_document = json.loads((site / CURRENT / "api/v1/index.json").read_bytes())
    assert root_document["log"] == {"checkpoint": "http://127.0.0.1:8080/api/v1/log/checkpoint",
                                    "tiles": "http://127.0.0.1:8080/api/v1/log/tile/",
                                    "releaseTiles": "http://127.0.0.1:8080/api/v1/releases/{release}/tree/tile/",
                                    "origin": "127.0.0.1:8080/api/v1/log", "verifierKey": vkey}
    then_stage_promote_rollback(site)
    with Catalogue.open(site) as catalogue:
        latest = catalogue.latest_checkpoint()
    # entries: the first release (its entry, its switch), the forced build (2), the promote of the staged
    # one (2), the rollback (a switch): 7
    assert read_checkpoint(open_note(latest.note, [read_verifier(vkey)]).text).size == 2 + 2 + 2 + 1


def test_a_rotated_key_signs_from_then_on_and_old_checkpoints_still_verify(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    first = riskapi("log", "init", "--site-url", LOOPBACK, "--site", site,
                "--key", tmp_path / "one.key").output.strip().splitlines()[-1]
    with Catalogue.open(site) as catalogue:
        before = catalogue.latest_checkpoint().note
    second = riskapi("log", "init", "--rotate", "--site", site, "--key", tmp_path / "two.key")
    assert second.exit_code == 0, second.output
    second_vkey = second.output.strip().splitlines()[-1]
    assert second_vkey != first and second_vkey.split("+")[0] == first.split("+")[0]  # the same log, its origin
    build(TINY, site, force=True)
    with Catalogue.open(site) as catalogue:
        after = catalogue.latest_checkpoint().note
    assert open_note(before, [read_verifier(first)]) and open_note(after, [read_verifier(second_vkey)])
    with pytest.raises(NoteError):
        open_note(after, [read_verifier(first)])


def test_a_key_that_cannot_be_read_leaves_the_release_published_and_says_so(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    riskapi("log", "init", "--site-url", LOOPBACK, "--site", site, "--key", tmp_path / "log.key")
    os.rename(tmp_path / "log.key", tmp_path / "moved.key")
    result = riskapi("build", "--data", TINY, "--site", site, "--force")
    assert result.exit_code == 1 and "signing key cannot be read" in result.output
    with Catalogue.open(site) as catalogue:
        assert len(catalogue.log_entries()) == 4 and catalogue.latest_checkpoint().size == 2  # logged, not signed
    os.rename(tmp_path / "moved.key", tmp_path / "log.key")
    assert riskapi("log", "sign", "--site", site).exit_code == 0
    with Catalogue.open(site) as catalogue:
        assert catalogue.latest_checkpoint().size == 4
    then_stage_promote_rollback(site)


def test_a_rewritten_log_is_never_signed_and_the_site_goes_on(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    riskapi("log", "init", "--site-url", LOOPBACK, "--site", site, "--key", tmp_path / "log.key")
    with Catalogue.open(site) as catalogue:
        signed = catalogue.latest_checkpoint()
    db = sqlite3.connect(site / CATALOGUE, isolation_level=None)  # an entry rewritten (a bug, a bad restore)
    db.execute("UPDATE log SET entry = CAST(replace(entry, '\"publish\"', '\"promote\"') AS BLOB) WHERE seq = 1")
    db.close()
    before = current_release(site)
    result = riskapi("build", "--data", TINY, "--site", site, "--force")
    assert result.exit_code == 1 and "no longer extends its last checkpoint (size 2)" in result.output
    assert current_release(site) != before  # published all the same: the switch is not the log's to stop
    staged = riskapi("build", "--data", TINY, "--site", site, "--force", "--stage")
    assert "rewritten" in staged.output  # said by every command that would sign: the staging is made all the same
    staged_id = sorted(read_history(site).staged)[-1]
    for command in (["promote", staged_id], ["rollback"]):
        answer = riskapi(*command, "--site", site)
        assert answer.exit_code == 1 and "rewritten" in answer.output, answer.output
    with Catalogue.open(site) as catalogue:
        assert catalogue.latest_checkpoint() == signed  # the served checkpoint stays the last good one
        with pytest.raises(CatalogueError, match="rewritten"):
            catalogue.checkpoint()


def test_serve_answers_the_checkpoint_signed_once_the_key_is_made(tmp_path):
    import urllib.request

    from ..live import serve_process, wait_for, worker_readable_folder
    base = worker_readable_folder("riskapi-logkey-")
    try:
        site = base / "site"
        build(TINY, site)
        with serve_process(site, base / "keys" / "keys.csv") as serve:
            def served() -> bytes:
                with urllib.request.urlopen(f"http://127.0.0.1:{serve.port}/api/v1/log/checkpoint", timeout=10) as r:
                    return r.read()
            assert "\u2014" not in served().decode()  # unsigned: the checkpoint's text alone, no signature line
            vkey = riskapi("log", "init", "--site-url", LOOPBACK, "--site", site,
                       "--key", base / "log.key").output.strip().splitlines()[-1]
            signed = wait_for(lambda: (lambda note: note if b"\n\n" in note else None)(served()),
                              what="the signed checkpoint served")
            assert read_checkpoint(open_note(signed, [read_verifier(vkey)]).text).size == 2
    finally:
        import shutil
        shutil.rmtree(base, ignore_errors=True)
