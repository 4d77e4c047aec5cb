"""Write a release into a fresh folder, then make it current with one atomic rename.

Layout of the site folder:
    site/releases/<id>/            one immutable release (api/v1/…, manifest.json)
    site/releases/.tmp-<id>/       a release being written; never served
    site/current -> releases/<id>  the live release (a symlink swapped with os.replace)
"""
from __future__ import annotations

import contextlib
import datetime
import fcntl
import hashlib
import multiprocessing
import os
import shutil
import signal
import time
import zlib
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import brotli
import orjson

from . import history
from .errors import PublishError
from .files import link_atomic, read_blocks, sync_folder, sync_tree, write_file, write_joined
from .processes import end_with_parent

RELEASES = "releases"
CURRENT = "current"
MANIFEST = "manifest.json"
CHANGES = "changes.txt"  # what the release changed against the one current before it
GZIP_MIN_BYTES = 1024  # NGINX_NOTES.md: smaller files grow when gzipped


class _BrotliStream:
    """brotli's streaming compressor under zlib's names (compress, flush)."""

    def __init__(self) -> None:
        self._compressor = brotli.Compressor(quality=4)

    def compress(self, block: bytes) -> bytes:
        return self._compressor.process(block)

    def flush(self) -> bytes:
        return self._compressor.finish()


# Served as they are to clients that accept them (nginx gzip_static / brotli_static). Brotli at
# quality 4 compresses faster than gzip -6 here and still 14 % smaller; both are deterministic.
# Streaming compressors, fed a block at a time: an export of hundreds of MB is never whole in memory.
COMPRESSED_FORMS = (
    (".gz", lambda: zlib.compressobj(6, zlib.DEFLATED, 31)),  # wbits 31: the gzip format (its mtime 0)
    (".br", _BrotliStream),
)
TWIN_SUFFIXES = tuple(suffix for suffix, _ in COMPRESSED_FORMS)
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


def write_with_twins(folder: Path, batch: list[tuple[str, bytes]], stamp: int) -> list[tuple[str, dict[str, dict]]]:
    """In the worker: write each (relative path, data) under folder and, over 1 KB, its
    pre-compressed twins; return the twins' manifest entries by relative path."""
    written = []
    for relative, data in batch:
        path = folder / relative
        write_file(path, data, stamp)
        written.append((relative, _write_twins(path, lambda data=data: (data,), len(data), stamp)))
    return written


def twins_of_written(folder: Path, relative: str, stamp: int) -> list[tuple[str, dict[str, dict]]]:
    """In the worker: the twins of a file the build wrote itself (ReleaseWriter.write_parts), read a
    block at a time."""
    path = folder / relative
    return [(relative, _write_twins(path, lambda: read_blocks(path), path.stat().st_size, stamp))]


def twins_of(body: bytes) -> dict[str, bytes]:
    """The compressed twins of a document held in memory (none at or under 1 KB), by suffix."""
    if len(body) <= GZIP_MIN_BYTES:
        return {}
    found = {}
    for suffix, compressor in COMPRESSED_FORMS:
        stream = compressor()
        found[suffix] = stream.compress(body) + stream.flush()
    return found


def _write_twins(path: Path, blocks: Callable[[], Iterable[bytes]], size: int, stamp: int) -> dict[str, dict]:
    """Over 1 KB, each compressed twin of a file whose bytes `blocks()` gives; their manifest entries."""
    entries = {}
    if size <= GZIP_MIN_BYTES:
        return entries
    for suffix, compressor in COMPRESSED_FORMS:
        stream, digest, length = compressor(), hashlib.sha256(), 0
        twin = path.with_name(path.name + suffix)
        with open(twin, "wb") as out:
            for block in blocks():
                compressed = stream.compress(block)
                out.write(compressed)
                digest.update(compressed)
                length += len(compressed)
            compressed = stream.flush()
            out.write(compressed)
            digest.update(compressed)
            length += len(compressed)
        os.utime(twin, (stamp, stamp))
        entries[suffix] = {"size": length, "sha256": digest.hexdigest()}
    return entries


@dataclass(frozen=True)
class Release:
    id: str
    path: Path
    files: int
    bytes: int


def release_order(release_id: str) -> tuple[str, int]:
    """The sort key of a release id: its UTC second, then its count within that second as a number
    (`…Z-100` comes after `…Z-99`, as text it would sort before it)."""
    base, _, count = release_id.partition("-")
    return base, int(count) if count.isdigit() else 0


def releases(site: Path) -> list[str]:
    """Release ids in the order they were built (oldest first)."""
    folder = site / RELEASES
    if not folder.is_dir():
        return []
    return sorted((p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")), key=release_order)


def current_release(site: Path) -> str | None:
    link = site / CURRENT
    if not link.is_symlink():
        return None
    return Path(os.readlink(link)).name


def read_manifest(release_dir: Path) -> dict[str, dict]:
    path = release_dir / MANIFEST
    if not path.is_file():
        return {}
    return orjson.loads(path.read_bytes())["files"]


def built_against(release_dir: Path) -> str | None:
    """The release that was current when this one was built (its changes are counted against it)."""
    path = release_dir / MANIFEST
    return orjson.loads(path.read_bytes()).get("previous") if path.is_file() else None


def _manifest_stamp(release_dir: Path) -> int:
    path = release_dir / MANIFEST
    return orjson.loads(path.read_bytes()).get("stamp", 0) if path.is_file() else 0


def switch_to(site: Path, release_id: str) -> None:
    """Point `current` at a release in one atomic step: a new symlink renamed over the old one."""
    link_atomic(site / CURRENT, f"{RELEASES}/{release_id}")


class SiteLock:
    """One build or rollback at a time per site folder."""

    def __init__(self, site: Path):
        site.mkdir(parents=True, exist_ok=True)
        self._handle = open(site / ".lock", "w")
        try:
            fcntl.flock(self._handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._handle.close()
            raise PublishError(f"another build or rollback is using {site}; try again when it has finished") from None

    def fileno(self) -> int:
        return self._handle.fileno()

    def unlock(self) -> None:
        if self._handle.closed:
            return
        # Unlock explicitly: a forked write worker shares the open file, and closing alone would
        # keep the lock until every copy is closed.
        fcntl.flock(self._handle, fcntl.LOCK_UN)
        self._handle.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.unlock()


def missing_files(release_dir: Path) -> int | None:
    """How many files of a release's manifest are absent or of another size; None without a manifest."""
    if not (release_dir / MANIFEST).is_file():
        return None
    missing = 0
    for relative, entry in read_manifest(release_dir).items():
        try:
            if os.stat(release_dir / relative).st_size != entry["size"]:
                missing += 1
        except FileNotFoundError:
            missing += 1
    return missing


def was_live(site: Path) -> list[str]:
    """The releases that were live, oldest first (the last is current): from the journal, or, on a site
    built before it existed, every release up to the current one in build order."""
    journal = history.entries(site)
    if journal is not None:
        return history.live_stack(history.took_effect(journal, current_release(site)))
    ids, current = releases(site), current_release(site)
    return ids[: ids.index(current) + 1] if current in ids else []


def ever_live(site: Path) -> set[str]:
    """Every release that was live at some time (rolled back from or not), and the current one."""
    journal = history.entries(site)
    current = current_release(site)
    if journal is None:
        return set(was_live(site))
    return {switch.release for switch in history.took_effect(journal, current)} | {current} - {None}


def live_periods(site: Path) -> list[history.LivePeriod]:
    """When each release was live, oldest first (the last is the current one, live until now)."""
    journal = history.entries(site)
    if journal is None:
        return []
    return history.live_periods(history.took_effect(journal, current_release(site)))


def live_since(site: Path, since: float) -> set[str]:
    """The releases live at some instant at or after `since` (a Unix time)."""
    cutoff = datetime.datetime.fromtimestamp(since, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {p.release for p in live_periods(site) if p.end is None or p.end >= cutoff}


def staged_releases(site: Path) -> list[str]:
    """The releases built with --stage and never made live since, complete, in build order: answered under
    their own id to preview keys only, until `riskapi promote` makes one live."""
    staged = {line.release for line in history.lines(site) or [] if line.action == history.STAGE}
    once = ever_live(site)
    return [r for r in releases(site) if r in staged and r not in once and (site / RELEASES / r / MANIFEST).is_file()]


def kept_releases(site: Path) -> list[str]:
    """The releases answered under /api/v1/releases/{id}/: complete (a manifest) and live at some
    time, in build order."""
    once = ever_live(site)
    return [r for r in releases(site) if r in once and (site / RELEASES / r / MANIFEST).is_file()]


def gone_releases(site: Path) -> list[str]:
    """The releases that were live and are no longer kept (pruned): answered 410."""
    journal = history.entries(site) or []
    on_disk = set(releases(site))
    return sorted({switch.release for switch in journal} - on_disk, key=release_order)


def start_journal(site: Path) -> None:
    """Give a site built before the journal existed one: what was live, as far as the ids tell."""
    if history.entries(site) is None:
        for earlier in was_live(site):  # when each went live is not known: when it was built, at best
            history.record(site, history.PUBLISH, earlier, at=history.built_at(earlier))


def rollback(site: Path) -> str:
    """Make the release that was live before the current one current again; return its id.

    Follows the history of what was live (history.py), skipping a release that is no longer complete."""
    with SiteLock(site):
        start_journal(site)
        current = current_release(site)
        skipped = []
        for candidate in reversed(was_live(site)[:-1]):
            if candidate == current:
                continue
            missing = missing_files(site / RELEASES / candidate)
            if missing == 0:
                history.record(site, history.ROLLBACK, candidate)  # before the switch, as commit does
                switch_to(site, candidate)
                return candidate
            skipped.append(f"{candidate} ({'gone' if missing is None else f'{missing} files missing'})")
        raise PublishError(f"no release that was live before {current or 'the current one'} to roll back to"
                           + (f"; not complete: {', '.join(skipped)}" if skipped else ""))


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

        The write worker is ended by its pid, not waited for: what it writes is being thrown away, and
        a worker that died (a memory limit, an OOM kill) or cannot answer would make a wait hang."""
        try:
            if self._pool is not None:
                pool, self._pool = self._pool, None
                workers = list(getattr(pool, "_processes", None) or {})
                for pid in workers:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                pool.shutdown(wait=False, cancel_futures=True)
                for pid in workers:  # reaped: nothing writes into the folder after this
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(pid, 0)
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
