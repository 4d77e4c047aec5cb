"""The CLI edge: every failure is one clear line and exit 1, a traceback only with -v; the live release stays.

Expected errors print their message, an OSError its path and reason, anything else "internal error"
(the policy of Sphinx's errors module). The file-system faults are real: a tiny tmpfs filled up, and a
read-only mount (as root, as CI runs; a user without root gets a read-only folder instead).
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from generator.history.site import RELEASES, current_release, releases

from ..conftest import TINY, riskapi
from ..fault_checks import then_stage_promote_rollback

AS_ROOT = os.geteuid() == 0



@contextlib.contextmanager
def small_filesystem(folder: Path, size: str):
    """Yield a real tmpfs of `size` mounted on folder (root only), unmounted afterwards."""
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def fill(folder: Path) -> None:
    """Write until the file system says it is full (unbuffered: a buffered file would write what its last,
    refused write left in its buffer again as it closes, and raise there)."""
    with open(folder / "filler", "wb", buffering=0) as handle:
        with contextlib.suppress(OSError):
            while True:
                handle.write(b"\0" * 65536)


@contextlib.contextmanager
def read_only(folder: Path):
    """Make folder read-only: a read-only remount as root (root ignores modes), a mode of 0555 otherwise."""
    if AS_ROOT:
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
    else:
        folder.chmod(0o555)
    try:
        yield
    finally:
        if AS_ROOT:
            subprocess.run(["mount", "-o", "remount,rw", str(folder)], check=True)
        else:
            folder.chmod(0o755)


def assert_one_clear_line(result, expected: str) -> None:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.output.strip() == f"Error: {expected}", result.output


def test_a_full_disk_names_the_file_and_the_live_release_stays(tmp_path):
    if not AS_ROOT:  # test_a_read_only_site_names_the_folder covers a folder that refuses writes
        pytest.skip("filling a disk needs root, to mount a small file system (CI runs as root)")
    with small_filesystem(tmp_path / "disk", "4m") as disk:
        site = disk / "site"
        assert riskapi("build", "--data", TINY, "--site", site).exit_code == 0
        live = current_release(site)
        fill(disk)
        result = riskapi("build", "--data", TINY, "--site", site, "--force")
        # the first file the build could not write, by its path: the release catalogue (opening it in WAL
        # mode writes its shared-memory file) or, where that fits, a file of the new release
        assert result.exit_code == 1, result.output
        message = result.output.strip()
        assert message.startswith(f"Error: {site / 'catalogue.db'}: No space left on device (") or (
            message.startswith(f"Error: {site / RELEASES}/.tmp-") and message.endswith(": No space left on device"))
        assert "Traceback" not in result.output
        assert (current_release(site), releases(site)) == (live, [live])
        assert not [p for p in (site / RELEASES).iterdir() if p.name.startswith(".tmp-")]


def test_a_read_only_site_names_the_folder(tmp_path):
    if AS_ROOT:
        with small_filesystem(tmp_path / "disk", "4m") as disk:
            (disk / "site" / RELEASES).mkdir(parents=True)
            with read_only(disk):
                result = riskapi("build", "--data", TINY, "--site", disk / "site")
            assert_one_clear_line(result, f"{disk / 'site' / '.lock'}: Read-only file system")
    else:
        (tmp_path / "site" / RELEASES).mkdir(parents=True)
        with read_only(tmp_path / "site"):
            result = riskapi("build", "--data", TINY, "--site", tmp_path / "site")
        assert_one_clear_line(result, f"{tmp_path / 'site' / '.lock'}: Permission denied")


def test_an_unexpected_error_is_called_internal_and_shows_its_traceback_with_v(tmp_path, monkeypatch):
    import generator.building.model_jobs

    def broken(*args):
        raise RuntimeError("boom")  # in a worker process (the build's default on a machine of 2 cores or more)
    monkeypatch.setattr(generator.building.model_jobs, "score_model", broken)
    assert_one_clear_line(riskapi("build", "--data", TINY, "--site", tmp_path),
                          "internal error: RuntimeError: boom; run with -v for the traceback")
    verbose = riskapi("-v", "build", "--data", TINY, "--site", tmp_path)
    assert verbose.exit_code == 1 and "Traceback" in verbose.output and "RuntimeError: boom" in verbose.output
    assert current_release(tmp_path) is None and releases(tmp_path) == []


def test_a_data_error_prints_its_message_and_a_traceback_only_with_v(tmp_path, data_copy):
    (data_copy / "models.csv").unlink()
    quiet = riskapi("build", "--data", data_copy, "--site", tmp_path)
    assert quiet.exit_code == 1 and "models.csv: file is missing" in quiet.output
    assert "Traceback" not in quiet.output
    verbose = riskapi("-v", "build", "--data", data_copy, "--site", tmp_path)
    assert verbose.exit_code == 1 and "Traceback" in verbose.output and "DataError" in verbose.output


def open_under(folder: Path) -> list[str]:
    """Return the files under `folder` this process holds open (a deleted one keeps its disk space while it is)."""
    found = []
    for descriptor in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{descriptor}")
            if target.startswith(f"{folder}/"):
                found.append(target)
    return found


@pytest.mark.parametrize("jobs", ["1", "2"])  # the exports written in this process, or in the workers
def test_out_of_space_anywhere_in_a_build_names_a_file_and_the_live_release_stays(tmp_path, jobs):
    if not AS_ROOT:
        pytest.skip("filling a disk needs root, to mount a small file system (CI runs as root)")
    data = tmp_path / "data"
    shutil.copytree(TINY, data)
    with small_filesystem(tmp_path / "disk", "16m") as disk:
        site = disk / "site"
        assert riskapi("build", "--data", data, "--site", site).exit_code == 0
        said = []
        # the room left, from none to more than a tiny release's new files take: each build runs out at another
        # of its writers (the documents, their twins, the exports, the Parquet join, the catalogue) or fits
        for n, room in enumerate((0, 4, 16, 48, 96, 160, 256, 384, 512, 768, 1024, 1536, 2048)):
            rows = (data / "countries.csv").read_text()  # other data each time: every export is written anew
            (data / "countries.csv").write_text(rows.replace("Austria", f"Austria {n}", 1).replace(
                f"Austria {n - 1}", f"Austria {n}", 1))
            live = current_release(site)
            fill(disk)
            os.truncate(disk / "filler", max(0, (disk / "filler").stat().st_size - room * 1024))
            result = riskapi("build", "--data", data, "--site", site, "--accept-changes", "--jobs", jobs)
            (disk / "filler").unlink()
            if result.exit_code == 0:
                continue  # it fitted
            message = result.output.strip()
            said.append(message)
            assert result.exit_code == 1 and "Traceback" not in message, message
            named = re.fullmatch(r"Error: (/\S+): No space left on device.*", message, re.S)
            assert named and Path(named[1]).is_relative_to(disk), message
            assert current_release(site) == live and live in releases(site)
            assert not [p for p in (site / RELEASES).iterdir() if p.name.startswith(".tmp-")]
            # nothing of the failed build held open while its error is (the CLI runner keeps it): no disk
            # space kept by a deleted file, and the disk can be unmounted
            assert open_under(disk) == [], message
        # rooms of 0, 4 and 16 KiB are under the 32 KiB the catalogue's shared-memory file takes to open (SQLite's
        # WAL index): at least those three run out, at the catalogue, whatever else fits
        assert len(said) >= 3, said
        then_stage_promote_rollback(site, data)
