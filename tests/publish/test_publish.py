"""Releases: fresh folder, manifest, .gz, hard links for unchanged files, atomic swap, rollback."""
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys

import orjson
import pytest

from generator.building.validate import SCHEMA_DIR
from generator.building.writer import ReleaseWriter
from generator.contract import locations
from generator.contract.serving import COMPRESSED_OVER, has_twins
from generator.errors import DataError, PublishError, ValidationFailed
from generator.history.site import CHANGES, CURRENT, RELEASES, current_release, read_manifest, releases, rollback
from generator.publish.build_release import build

from ..conftest import TINY, make_nga_black, replace_in


def snapshot(site) -> dict[str, tuple]:
    """Return every file under the site with its bytes' hash, inode and mtime, plus where `current` points."""
    state = {CURRENT: os.readlink(site / CURRENT) if (site / CURRENT).is_symlink() else None}
    for path in sorted(site.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.name != ".lock":
            info = path.stat()
            state[str(path.relative_to(site))] = (hashlib.sha256(path.read_bytes()).hexdigest(), info.st_ino,
                                                 info.st_mtime_ns)
    return state


def test_release_has_manifest_with_every_file(tiny_site):
    release = tiny_site / CURRENT
    manifest = orjson.loads((release / "manifest.json").read_bytes())
    # manifest.json describes the release; every other file (changes.txt too) is listed
    on_disk = {str(p.relative_to(release)) for p in release.rglob("*") if p.is_file()} - {"manifest.json"}
    assert set(manifest["files"]) == on_disk
    for relative, entry in manifest["files"].items():
        data = (release / relative).read_bytes()
        assert entry == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def test_gzip_and_brotli_beside_files_over_1kb(tiny_site):
    import brotli
    release = tiny_site / CURRENT
    for path in release.rglob("index.json"):
        gz, br = path.with_name("index.json.gz"), path.with_name("index.json.br")
        if has_twins(path.name, path.stat().st_size):
            assert gzip.decompress(gz.read_bytes()) == path.read_bytes()
            assert brotli.decompress(br.read_bytes()) == path.read_bytes()
        else:
            assert not gz.exists() and not br.exists()


def test_current_is_a_relative_symlink(tiny_site):
    target = os.readlink(tiny_site / CURRENT)
    assert target == f"{RELEASES}/{current_release(tiny_site)}"


def test_unchanged_files_are_hard_linked_and_keep_mtime(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    first = current_release(site)
    before = snapshot(site)
    report = build(TINY, site, force=True)
    second = current_release(site)
    assert second != first and releases(site) == [first, second]
    files = read_manifest(site / RELEASES / second)
    written = [f for f in files if not f.endswith((".gz", ".br"))]
    # everything but what names the new release: the changes page and the reference page, changes.txt, the API root, the release
    # and change documents (public and acme_aml), its Data Package, the Parquet exports (the public models'
    # and each of the 3 models') and the tile of the tree over every document
    named = {"docs/changes/index.html", "docs/index.html", CHANGES, "api/v1/index.json", "api/v1/releases/current/index.json",
             "api/v1/releases/current/datapackage.json",
             "api/v1/releases/current/audience=acme_aml/index.json", "api/v1/releases/current/changes/index.json",
             "api/v1/releases/current/changes/audience=acme_aml/index.json", "api/v1/tree/tile/0/000.p/164.tile",
             "api/v1/exports/scores.parquet", *(f"api/v1/exports/{model}/scores.parquet"
                                                for model in ("acme_aml", "sdg", "sovereign"))}
    assert report.linked == len(written) - len(named) and named <= set(written)
    checked = 0
    for relative, state in before.items():
        if relative.startswith(f"{RELEASES}/{first}/api/") and not locations.names_its_release(
                relative.removeprefix(f"{RELEASES}/{first}/").removesuffix(".gz").removesuffix(".br")):
            _digest, inode, mtime = state
            info = (site / relative.replace(first, second, 1)).stat()
            assert (info.st_ino, info.st_mtime_ns) == (inode, mtime), relative
            checked += 1
    assert checked > report.documents  # every document and its .gz and .br


def test_changed_file_gets_new_bytes_and_others_stay_linked(tmp_path, data_copy):
    site = tmp_path / "site"
    build(data_copy, site)
    first = current_release(site)
    make_nga_black(data_copy)
    report = build(data_copy, site)
    second = current_release(site)
    nga = "api/v1/riskscores/acme_aml/NGA/index.json"
    old, new = site / RELEASES / first / nga, site / RELEASES / second / nga
    assert old.read_bytes() != new.read_bytes()
    assert old.stat().st_ino != new.stat().st_ino
    assert json.loads(new.read_bytes())["results"][0]["score"] == 100.0  # black → 100 of 100 points
    unchanged = "api/v1/riskscores/sovereign/AUT/index.json"
    assert (site / RELEASES / first / unchanged).stat().st_ino == (site / RELEASES / second / unchanged).stat().st_ino
    files = [f for f in read_manifest(site / RELEASES / second) if not f.endswith((".gz", ".br"))]
    assert 0 < report.linked < len(files)  # documents, nginx maps and pages: most are unchanged


def test_data_error_leaves_current_release_untouched(tmp_path, data_copy):
    site = tmp_path / "site"
    build(data_copy, site)
    before = snapshot(site)
    (data_copy / "sections.csv").write_text("model,reference\n")
    with pytest.raises(DataError):
        build(data_copy, site)
    assert snapshot(site) == before


def test_validation_failure_after_writing_started_leaves_current_untouched(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    before = snapshot(site)
    # A real, stricter copy of the schemas: endpoint 3 may list no country. The build renders and
    # writes other documents before it meets one that fails.
    schemas = tmp_path / "schemas"
    shutil.copytree(SCHEMA_DIR, schemas)
    strict = json.loads((schemas / "model-scores.json").read_text())
    strict["properties"]["data"]["maxItems"] = 0
    (schemas / "model-scores.json").write_text(json.dumps(strict))
    with pytest.raises(ValidationFailed) as raised:
        build(TINY, site, schema_dir=schemas)
    assert "/api/v1/riskscores/sovereign/: at $.data: " in raised.value.format_message()
    assert snapshot(site) == before
    assert not list((site / RELEASES).glob(".tmp-*"))


def test_a_write_that_fails_in_the_worker_process_fails_the_release(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    before = snapshot(site)
    writer = ReleaseWriter(site)
    try:
        (writer.folder / "api/v1/x/index.json.gz").mkdir(parents=True)  # a folder where the gzip twin must go
        writer.write("api/v1/x/index.json", b"[" + b"0," * COMPRESSED_OVER + b"0]")
        with pytest.raises(IsADirectoryError):
            writer.finish()  # the worker's error comes back to the build
    finally:
        writer.abort()
    assert snapshot(site) == before
    assert not list((site / RELEASES).glob(".tmp-*"))
    build(TINY, site)  # and the site takes the next build (the lock was released)


def test_a_release_discarded_while_its_worker_is_busy_lets_the_process_end(tmp_path):
    """An abort in the middle of writing (an unchanged rebuild, a failed check) used to leave the pool's
    thread polling for a worker already reaped, and Python waits for that thread at exit: the build —
    and CI's test run — never ended. 6 × 3 MB of random bytes keep the worker compressing and the queue
    to it full when the release is thrown away."""
    script = ("import os, sys\nfrom pathlib import Path\nfrom generator.building.writer import ReleaseWriter\n"
              "writer = ReleaseWriter(Path(sys.argv[1]))\n"
              "for i in range(6):\n    writer.write(f'f{i}.json', os.urandom(3 << 20))\n"
              "writer.abort()\nprint('discarded')\n")
    site = tmp_path / "site"
    site.mkdir()
    try:
        done = subprocess.run([sys.executable, "-c", script, str(site)], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError("the process did not end after discarding its release") from None
    assert (done.returncode, done.stdout) == (0, "discarded\n"), done.stderr
    assert not list((site / RELEASES).glob(".tmp-*"))


def _writeback_threads() -> list:
    import threading
    return [thread for thread in threading.enumerate() if thread.name == "writeback"]


def test_the_release_s_pages_go_to_disk_while_it_is_written_and_that_ends_with_it(tmp_path):
    """The writeback thread (files.Writeback) runs once the writer's processes have forked, and ends with
    the release, published or discarded: none is left behind to sync a folder that is gone."""
    site = tmp_path / "site"
    build(TINY, site)
    assert _writeback_threads() == []  # the build's ended with it
    for publish in (True, False):
        writer = ReleaseWriter(site)
        try:
            assert _writeback_threads() == []  # not before the processes fork
            # new bytes each time (a file the previous release holds is linked, not handed over)
            writer.write("api/v1/x/index.json", b"[" + b"0," * COMPRESSED_OVER + (b"1]" if publish else b"2]"))
            writer.flush()  # handed to the write process: the pool forked
            assert [thread.is_alive() for thread in _writeback_threads()] == [True]
            if publish:
                writer.commit()
        finally:
            if not publish:
                writer.abort()
        assert _writeback_threads() == []


def test_a_file_written_in_parts_is_the_parts_joined_with_its_twins_and_linked_when_unchanged(tmp_path):
    # an export is written from its models' chunks, never joined in memory: on disk it is the chunks in
    # order, the manifest has the joined bytes' hash, and its twins (made by the worker from the file)
    # decompress to them
    import brotli
    site = tmp_path / "site"
    rows = tmp_path / "sdg.csv"  # a model's rows, as the build writes them to a file
    rows.write_bytes(b"sdg,CIV\n" * 300)
    parts = [b"model,country\n", b"aml,AUT\n" * 200, rows]  # 14 + 1,600 + 2,400 bytes
    joined = b"model,country\n" + b"aml,AUT\n" * 200 + b"sdg,CIV\n" * 300
    assert len(joined) == 4014
    for attempt in (1, 2):
        writer = ReleaseWriter(site)
        writer.write_parts("api/v1/exports/scores.csv", parts)
        release = writer.commit()
        path = release.path / "api/v1/exports/scores.csv"
        assert path.read_bytes() == joined
        entry = read_manifest(release.path)["api/v1/exports/scores.csv"]
        assert entry == {"size": 4014, "sha256": hashlib.sha256(joined).hexdigest()}
        assert gzip.decompress(path.with_name("scores.csv.gz").read_bytes()) == joined
        assert brotli.decompress(path.with_name("scores.csv.br").read_bytes()) == joined
        if attempt == 1:
            first = path.stat().st_ino
    assert path.stat().st_ino == first  # unchanged: hard-linked from the release before


def test_a_gzip_twin_joined_from_its_parts_is_one_gzip_stream_of_the_file(tmp_path):
    # each model's rows are compressed once as they are written (GzipPartFile), and an export's gzip twin
    # is joined from its parts' compressed bytes: one gzip member (not several, which some clients read
    # only the first of) that decodes to the whole file, with its CRC and size in the trailer
    import zlib

    from generator.building.output.twins import GzipPartFile, gzip_part
    site = tmp_path / "site"
    rows, deflated = tmp_path / "sdg.csv", tmp_path / "sdg.csv.deflate"
    with GzipPartFile(rows, deflated) as out:
        for _ in range(3):  # written a block at a time, as the rows of each country
            out.write(b"sdg,CIV\n" * 100)
    head, middle = b"model,country\n", b"aml,AUT\n" * 200
    joined = head + middle + b"sdg,CIV\n" * 300  # 14 + 1,600 + 2,400 bytes
    assert rows.read_bytes() == b"sdg,CIV\n" * 300 and len(joined) == 4014
    writer = ReleaseWriter(site)
    writer.write_parts("api/v1/exports/scores.csv", [head, middle, rows],
                       [gzip_part(head), gzip_part(middle), deflated])
    writer.write_parts("api/v1/exports/small.csv", [head], [gzip_part(head)])  # 14 bytes: no twins
    release = writer.commit()
    twin = release.path / "api/v1/exports/scores.csv.gz"
    stream = zlib.decompressobj(31)  # a gzip decoder that stops at the end of the first member
    assert stream.decompress(twin.read_bytes()) == joined
    assert stream.eof and stream.unused_data == b""
    assert twin.read_bytes()[-8:] == zlib.crc32(joined).to_bytes(4, "little") + (4014).to_bytes(4, "little")
    manifest = read_manifest(release.path)
    assert manifest["api/v1/exports/scores.csv.gz"] == {
        "size": twin.stat().st_size, "sha256": hashlib.sha256(twin.read_bytes()).hexdigest()}
    assert "api/v1/exports/scores.csv.br" in manifest  # brotli's twin made from the file, as before
    assert "api/v1/exports/small.csv" in manifest and "api/v1/exports/small.csv.gz" not in manifest


def test_a_rows_file_that_is_the_whole_export_is_moved_in_and_the_public_one_joins_it(tmp_path):
    # a model's CSV rows file begins with the header, so it is the model's export as it is: moved into the
    # release, not copied; the public export is joined from it past the header. Unchanged in the next
    # release, it is linked from the one before and the rows file is removed all the same.
    import zlib

    from generator.building.output.twins import GzipPartFile, gzip_part
    site, head = tmp_path / "site", b"model,country\n"
    for attempt in (1, 2):
        rows, deflated = tmp_path / f"sdg-{attempt}.csv", tmp_path / f"sdg-{attempt}.csv.deflate"
        with GzipPartFile(rows, deflated, head) as out:
            for _ in range(3):
                out.write(b"sdg,CIV\n" * 100)
        whole = out.whole
        content = head + b"sdg,CIV\n" * 300  # 14 + 2,400 bytes
        assert (whole.path, whole.size, whole.sha256, whole.crc) == (
            rows, 2414, hashlib.sha256(content).hexdigest(), zlib.crc32(content))
        writer = ReleaseWriter(site)
        writer.write_parts("api/v1/exports/sdg/scores.csv", [rows], [gzip_part(head), deflated], whole)
        model = writer.folder / "api/v1/exports/sdg/scores.csv"
        writer.write_parts("api/v1/exports/scores.csv", [head, (model, len(head))], [gzip_part(head), deflated])
        release = writer.commit()
        assert not rows.exists()  # moved (or, unchanged, dropped for the link)
        exports = release.path / "api/v1/exports"
        for path in (exports / "sdg/scores.csv", exports / "scores.csv"):
            assert path.read_bytes() == content
            assert gzip.decompress(path.with_name("scores.csv.gz").read_bytes()) == content
        manifest = read_manifest(release.path)
        assert manifest["api/v1/exports/sdg/scores.csv"] == {"size": 2414, "sha256": whole.sha256}
        if attempt == 1:
            first = (exports / "sdg/scores.csv").stat()
            assert first.st_mtime == writer.stamp  # moved in, then dated as every file of the release
    assert (exports / "sdg/scores.csv").stat().st_ino == first.st_ino  # unchanged: linked from the one before


def test_second_write_to_same_path_is_an_error(tmp_path):
    writer = ReleaseWriter(tmp_path / "site")
    try:
        writer.write("api/v1/x/index.json", b"[]")
        with pytest.raises(PublishError, match="two documents were written to api/v1/x/index.json"):
            writer.write("api/v1/x/index.json", b"[]")
    finally:
        writer.abort()
    assert current_release(tmp_path / "site") is None


def test_one_build_at_a_time(tmp_path):
    writer = ReleaseWriter(tmp_path / "site")
    try:
        with pytest.raises(PublishError, match="another build or rollback"):
            ReleaseWriter(tmp_path / "site")
    finally:
        writer.abort()


def test_rollback_goes_back_one_release_at_a_time(tmp_path):
    site = tmp_path / "site"
    ids = []
    for _ in range(3):
        build(TINY, site, force=True)
        ids.append(current_release(site))
    assert rollback(site) == ids[1] and current_release(site) == ids[1]
    assert rollback(site) == ids[0] and current_release(site) == ids[0]
    with pytest.raises(PublishError, match="no release that was live before"):
        rollback(site)
    assert current_release(site) == ids[0]


def test_old_releases_are_pruned_but_never_the_current_one(tmp_path):
    site = tmp_path / "site"
    for _ in range(7):
        build(TINY, site, force=True)
    kept = releases(site)
    assert len(kept) == 5 and current_release(site) == kept[-1]


def test_pruning_keeps_the_release_that_was_live_before_the_build(tmp_path):
    # Five releases, then four rollbacks: the oldest is live (the known-good one). The next build
    # prunes down to five releases, but must keep the one that was live before it.
    site = tmp_path / "site"
    for _ in range(5):
        build(TINY, site, force=True)
    first = releases(site)[0]
    for _ in range(4):
        rollback(site)
    assert current_release(site) == first
    build(TINY, site, force=True)
    kept = releases(site)
    assert first in kept and current_release(site) == kept[-1] and len(kept) == 6


def test_a_build_that_changes_nothing_publishes_nothing(tmp_path, data_copy):
    from click.testing import CliRunner

    from generator.cli import command_table, main
    site = tmp_path / "site"
    build(data_copy, site, cli_commands=command_table())  # as riskapi build does
    (live,) = releases(site)
    report = build(data_copy, site, cli_commands=command_table())
    assert (report.published, report.release, releases(site), current_release(site)) == (False, live, [live], live)
    said = CliRunner().invoke(main, ["build", "--data", str(data_copy), "--site", str(site)])
    assert said.exit_code == 0
    assert said.output == f"nothing changed since release {live}: nothing published (--force publishes anyway)\n"
    assert not [p for p in (site / RELEASES).iterdir() if p.name.startswith(".tmp-")]
    make_nga_black(data_copy)  # one changed observation is a change
    assert build(data_copy, site).published and len(releases(site)) == 2


def test_release_ids_sort_in_build_order(tmp_path):
    site = tmp_path / "site"
    ids = []
    for _ in range(3):  # three builds within a second or two still get increasing ids
        build(TINY, site, force=True)
        ids.append(current_release(site))
    assert ids == sorted(ids) and len(set(ids)) == 3


def test_new_files_are_stamped_later_than_the_previous_release(tmp_path, data_copy):
    # nginx's ETag is mtime-size: a changed file of equal size must still get a new ETag,
    # even when two builds run within the same second.
    site = tmp_path / "site"
    build(data_copy, site)
    first = current_release(site)
    replace_in(data_copy / "observations" / "acme_aml.csv", "fatf_list,AUT,2024-10-25,none",
               "fatf_list,AUT,2024-10-25,grey")
    build(data_copy, site)
    second = current_release(site)
    doc = "api/v1/riskscores/acme_aml/AUT/index.json"
    old, new = (site / RELEASES / first / doc).stat(), (site / RELEASES / second / doc).stat()
    assert int(new.st_mtime) > int(old.st_mtime)


def test_a_writeback_thread_that_cannot_start_leaves_the_sync_to_the_last_one(tmp_path, monkeypatch):
    """Under a memory limit no thread may be had (CI, ulimit -v): the early writeback is skipped and
    stopping it raises nothing (a join of a thread never started did: 'cannot join thread')."""
    import threading

    from generator.system.files import Writeback

    def refuse(self):
        raise RuntimeError("can't start new thread")
    monkeypatch.setattr(threading.Thread, "start", refuse)
    writeback = Writeback(tmp_path)
    writeback.start()
    writeback.start()  # asked again after the first submit: still nothing, no second attempt
    writeback.stop()
    assert _writeback_threads() == []
