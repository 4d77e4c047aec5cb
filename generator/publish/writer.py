"""Write a release into a hidden folder (its files, their twins, links to the previous release's unchanged
files), then publish it: synced, moved into place, journalled, made current in one atomic step; prune."""
from __future__ import annotations

import datetime
import hashlib
import multiprocessing
import os
import shutil
import signal
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import orjson

from .. import history
from ..errors import PublishError
from ..files import sync_folder, sync_tree, write_file, write_joined
from ..processes import end_with_parent
from .site import (CURRENT, MANIFEST, RELEASES, Release, SiteLock, _manifest_stamp, current_release, ever_live,
                   live_since, read_manifest, release_order, releases, staged_releases, start_journal, switch_to,
                   was_live)
from .twins import COMPRESSED_FORMS, TWIN_SUFFIXES, twins_of_written, write_with_twins

KEEP_RELEASES = 5
# Writing and compressing run in a worker process: in a thread they would wait for the GIL that
# rendering holds (one switch interval per call), and the renderer would wait for them in turn.
WRITE_PROCESSES = 1
WRITE_BATCH_BYTES = 1 << 20  # documents go to the worker in batches of about this size
MAX_PENDING_BATCHES = 8  # batches held in memory while their writes are under way


def start_write_worker(lock_fd: int) -> None:
    """In the forked worker, first: let go of the site lock (so it dies with the build's own process,
    however that dies) and ask Linux to end this worker when its parent ends."""
    os.close(lock_fd)  # the lock is held while any copy of its file is open
    end_with_parent(signal.SIGKILL)


def _discard(pool: ProcessPoolExecutor) -> None:
    """End a pool whose work is thrown away: its worker killed and reaped through its own handle. (A
    bare waitpid left the pool's thread polling, forever, for a pid that was gone, and Python waits for
    that thread at exit: the build, or the test run, never ended.)"""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        process.kill()
    for process in processes:
        process.join()  # nothing writes into the release's folder after this
    pool.shutdown(wait=False, cancel_futures=True)


class ReleaseWriter:
    """Collect the files of one release in a hidden folder; `commit` publishes, `abort` discards."""

    def __init__(self, site: Path, keep: int = KEEP_RELEASES, keep_days: float | None = None):
        self.site = site
        self.keep = keep
        self.keep_days = keep_days
        current = site / CURRENT
        if current.exists() and not current.is_symlink():  # before the work, not after a whole release
            raise PublishError(f"{current} is a real folder, not the link to a release: move it away (serve "
                               f"releases from {site / RELEASES}), then build again")
        self._lock = SiteLock(site)
        (site / RELEASES).mkdir(exist_ok=True)
        self._remove_leftovers()
        self.previous = current_release(site)
        previous_dir = site / RELEASES / self.previous if self.previous else None
        self._previous_dir = previous_dir
        self._previous_files = read_manifest(previous_dir) if previous_dir else {}
        # Every new file gets one mtime, later than any file of the previous release, so nginx's
        # ETag (mtime-size) changes whenever bytes change, even for two builds in one second.
        previous_stamp = _manifest_stamp(previous_dir) if previous_dir else 0
        self.stamp = max(int(time.time()), previous_stamp + 1)
        self.id = self._new_id()
        self.folder = site / RELEASES / f".tmp-{self.id}"
        self.folder.mkdir()
        self._scratch = site / RELEASES / f".tmp-{self.id}.scratch"  # a leftover `.tmp-*` is removed
        self.files: dict[str, dict] = {}
        self.linked = 0
        self.bytes = 0
        self._made_dirs: set[Path] = set()
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(
            max_workers=WRITE_PROCESSES, mp_context=multiprocessing.get_context("fork"),
            initializer=start_write_worker, initargs=(self._lock.fileno(),))
        self._pending: deque[Future] = deque()
        self._batch: list[tuple[str, bytes]] = []
        self._batch_bytes = 0

    def _new_id(self) -> str:
        """A UTC timestamp; ids sort in build order even for two builds in one second."""
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        latest = max(releases(self.site), default="", key=release_order)
        if stamp > latest.partition("-")[0]:
            return stamp
        base, count = release_order(latest)
        return f"{base}-{max(count, 1) + 1:02d}"

    def _remove_leftovers(self) -> None:
        """What killed builds, swaps and prunes left: unfinished and half-deleted releases, temporary
        links, and releases that were complete but never made live."""
        for link in self.site.glob(f".{CURRENT}.tmp-*"):
            link.unlink(missing_ok=True)
        if history.entries(self.site) is not None:
            for never in set(releases(self.site)) - ever_live(self.site) - set(staged_releases(self.site)):
                os.rename(self.site / RELEASES / never, self.site / RELEASES / f".gone-{never}")
        for leftover in [*(self.site / RELEASES).glob(".tmp-*"), *(self.site / RELEASES).glob(".gone-*")]:
            shutil.rmtree(leftover, ignore_errors=True)

    def write(self, relative: str, data: bytes) -> None:
        """Add one file; a second write to the same path is a bug in the routes, so it raises."""
        if relative in self.files:
            raise PublishError(f"two documents were written to {relative}")
        digest = hashlib.sha256(data).hexdigest()
        self.files[relative] = {"size": len(data), "sha256": digest}
        self.bytes += len(data)
        target = self.folder / relative
        if target.parent not in self._made_dirs:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._made_dirs.add(target.parent)
        if self._link_unchanged(relative, digest, len(data), target):
            return
        self._batch.append((relative, data))
        self._batch_bytes += len(data)
        if self._batch_bytes >= WRITE_BATCH_BYTES:
            self._submit()

    def write_parts(self, relative: str, parts: list[bytes | Path]) -> None:
        """Add one large file given as consecutive parts, bytes or files (a bulk export: its models'
        rows): copied from here a block at a time, so the file is never whole in memory nor sent to
        the worker, which makes its twins from the file."""
        if relative in self.files:
            raise PublishError(f"two documents were written to {relative}")
        target = self.folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        digest, size = write_joined(target, parts, self.stamp)
        self.files[relative] = {"size": size, "sha256": digest}
        self.bytes += size
        before = self._previous_files.get(relative)
        if before and before["sha256"] == digest and before["size"] == size:
            target.unlink()  # the previous release's file, linked, keeps its mtime (nginx's ETag)
            if self._link_unchanged(relative, digest, size, target):
                return
            write_joined(target, parts, self.stamp)
        self._hand_over(twins_of_written, relative)

    def scratch(self) -> Path:
        """A folder for the build's own intermediate files, beside the release and never in it;
        removed when the release is finished or discarded (or, after a crash, by the next build)."""
        self._scratch.mkdir(exist_ok=True)
        return self._scratch

    def _submit(self) -> None:
        if not self._batch:
            return
        self._hand_over(write_with_twins, self._batch)
        self._batch, self._batch_bytes = [], 0

    def _hand_over(self, work, what) -> None:
        """Give the worker `work(folder, what, stamp)`, once fewer than MAX_PENDING_BATCHES wait."""
        while len(self._pending) >= MAX_PENDING_BATCHES:
            self._collect(self._pending.popleft())
        try:
            self._pending.append(self._pool.submit(work, self.folder, what, self.stamp))
        except BrokenProcessPool:
            raise self._worker_stopped() from None

    def _collect(self, pending: Future) -> None:
        try:
            while not wait([pending], timeout=1.0).done:
                if not self._pool_alive():
                    raise self._worker_stopped()
            written = pending.result()  # re-raises a failed write
        except BrokenProcessPool:
            raise self._worker_stopped() from None
        for relative, entries in written:
            for suffix, entry in entries.items():
                self.files[relative + suffix] = entry

    def _pool_alive(self) -> bool:
        """Whether the pool can still finish work: its thread that hands work over and its worker run.
        Under a memory limit that thread can die at its start (`can't start new thread`), and the work
        it holds would be waited for forever."""
        pool = self._pool
        manager = getattr(pool, "_executor_manager_thread", None)
        processes = getattr(pool, "_processes", None) or {}
        return (manager is None or manager.is_alive()) and all(p.is_alive() for p in processes.values())

    def _worker_stopped(self) -> PublishError:
        return PublishError("the process writing the release stopped (killed, or out of memory); nothing was "
                            f"published and {self.site / CURRENT} is as it was")

    def flush(self) -> None:
        """Wait until every file written so far is on disk (the release can still take more)."""
        self._submit()
        while self._pending:
            self._collect(self._pending.popleft())

    def _link_unchanged(self, relative: str, digest: str, size: int, target: Path) -> bool:
        """Hard-link a file whose bytes did not change, so its mtime (and nginx's ETag) stays."""
        before = self._previous_files.get(relative)
        if not before or before["sha256"] != digest or before["size"] != size:
            return False
        source = self._previous_dir / relative
        twins = [(suffix, self._previous_files.get(relative + suffix)) for suffix, _ in COMPRESSED_FORMS]
        try:
            if os.stat(source).st_size != size:  # changed since its manifest was written (edited by hand)
                return False
            os.link(source, target)
            for suffix, entry in twins:
                if entry:
                    os.link(source.with_name(source.name + suffix), target.with_name(target.name + suffix))
                    self.files[relative + suffix] = entry
        except OSError:
            for stale in [target] + [target.with_name(target.name + suffix) for suffix, _ in COMPRESSED_FORMS]:
                stale.unlink(missing_ok=True)
            return False
        self.linked += 1
        return True

    def same_as_previous(self, names_its_release) -> bool:
        """Whether this release holds exactly the previous one's files and bytes (twins aside), but for
        the files that name their own release (`names_its_release(path)`)."""
        def contents(files: dict[str, dict]) -> dict[str, str]:
            return {path: entry["sha256"] for path, entry in files.items()
                    if not names_its_release(path) and not path.endswith(TWIN_SUFFIXES)}
        return self.previous is not None and contents(self.files) == contents(self._previous_files)

    @property
    def previous_dir(self) -> Path | None:
        return self._previous_dir

    def finish(self) -> None:
        """Wait for every write and write the manifest; the release is complete but not yet live."""
        if self._pool is None:
            return
        self.flush()
        self._pool.shutdown()
        self._pool = None
        shutil.rmtree(self._scratch, ignore_errors=True)
        manifest = {"release": self.id, "previous": self.previous, "stamp": self.stamp,
                    "files": dict(sorted(self.files.items()))}
        write_file(self.folder / MANIFEST, orjson.dumps(manifest, option=orjson.OPT_INDENT_2))

    def commit(self, stage: bool = False) -> Release:
        """Finish, move the release into place and make it current (`stage`: leave it staged, not live:
        the journal says so, and `current` stays as it is).

        Every file is on disk (synced) before the release is moved into place, and the move before the
        journal line, and the journal line before `current` names the release: a power cut or a kill at
        any point leaves `current` on a whole release and a journal that replays to it (history.py)."""
        try:
            self.finish()
            sync_tree(self.folder)
            final = self.site / RELEASES / self.id
            os.rename(self.folder, final)
            sync_folder(final.parent)
            start_journal(self.site)
            if stage:
                history.record(self.site, history.STAGE, self.id)
            else:
                history.record(self.site, history.PUBLISH, self.id)
                switch_to(self.site, self.id)
            self._prune()
        finally:
            self._lock.unlock()
        return Release(self.id, final, len(self.files), self.bytes)

    def abort(self) -> None:
        """Discard the unfinished release; the current one stays exactly as it was.

        The write worker is killed, not waited for: what it writes is being thrown away, and a worker
        that died (a memory limit, an OOM kill) or cannot answer would make a wait hang."""
        try:
            if self._pool is not None:
                pool, self._pool = self._pool, None
                _discard(pool)
            self._pending.clear()
            self._batch = []
            shutil.rmtree(self.folder, ignore_errors=True)
            shutil.rmtree(self._scratch, ignore_errors=True)
        finally:
            self._lock.unlock()

    def _prune(self) -> None:
        """Keep the newest `keep` releases, every release live within the last `keep_days` days, and
        every release a rollback could go back to next (the one that was live before the current one,
        however old). A release to go is first renamed out of sight, so an interrupted prune never
        leaves a half-deleted release on offer."""
        ids = releases(self.site)
        current = current_release(self.site)
        kept = {current, self.previous, *was_live(self.site)[-2:]}
        kept |= {r for r in staged_releases(self.site) if current is None or release_order(r) > release_order(current)}
        if self.keep_days is not None:
            kept |= live_since(self.site, time.time() - self.keep_days * 86_400)
        for old in ids[:-self.keep] if self.keep else ids:
            if old not in kept:
                going = self.site / RELEASES / f".gone-{old}"
                os.rename(self.site / RELEASES / old, going)
                shutil.rmtree(going, ignore_errors=True)
