"""Write a release into a hidden folder (its files, their twins, links to the previous release's unchanged
files), then publish it: synced, known to the catalogue, moved into place, made current in one atomic step (its
switch recorded before and confirmed after); prune on the catalogue's word."""
from __future__ import annotations

import datetime
import os
import shutil
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Callable

import orjson

from ..contract.release_ids import new_release_id
from ..errors import PublishError
from ..history.catalogue import PUBLISH, Catalogue, History, switching
from ..history.layout import UNFINISHED
from ..history.leases import sweep
from ..history.proof.leaves import ReleaseTree, release_leaves, tree_files
from ..history.proof.tree import root
from ..history.retention import KEEP_RELEASES, keep_reserve, to_prune
from ..history.site import (
    CURRENT,
    MANIFEST,
    RELEASES,
    Release,
    SiteLock,
    _manifest_stamp,
    current_release,
    read_manifest,
    releases,
    switch_to,
)
from ..switch.panel import update_panel
from ..system.files import Writeback, sync_folder, sync_tree, write_file
from .output.pool import discard_pool, fork_pool
from .output.release_files import ReleaseFiles
from .output.twins import TWIN_SUFFIXES

# Writing and compressing run in a worker process: in a thread they would wait for the GIL that
# rendering holds (one switch interval per call), and the renderer would wait for them in turn.
WRITE_PROCESSES = 1
MAX_PENDING_BATCHES = 8  # batches held in memory while their writes are under way


class ReleaseWriter(ReleaseFiles):
    """Collect the files of one release in a hidden folder; `commit` publishes, `abort` discards."""

    def __init__(self, site: Path, keep: int = KEEP_RELEASES, keep_days: float | None = None,
                 workers: int = WRITE_PROCESSES, clock_behind_ok: bool = False):
        self.site = site
        self.clock_behind_ok = clock_behind_ok  # switch even where the clock reads far behind the last switch
        self.workers = workers  # processes that write, and build models (building/model_jobs.py) if more than one
        self.keep = keep
        self.keep_days = keep_days
        self.held: tuple[str, ...] = ()  # releases pruned whose folders stay while a server answers from them
        current = site / CURRENT
        if current.exists() and not current.is_symlink():  # before the work, not after a whole release
            raise PublishError(f"{current} is a real folder, not the link to a release: move it away (serve "
                               f"releases from {site / RELEASES}), then build again")
        self._lock = SiteLock(site)
        try:
            with Catalogue.open(site) as catalogue:  # a damaged catalogue stops the build here: nothing changed
                catalogue.settle()
                history = catalogue.history()
                if not clock_behind_ok:  # said now, not after the whole build: its switch would be refused
                    catalogue.check_clock()
        except BaseException:
            self._lock.unlock()
            raise
        (site / RELEASES).mkdir(exist_ok=True)
        self._remove_leftovers(history)
        self._known = set(history.built)  # a new id never takes a pruned release's, even after a clock step
        self.previous = current_release(site)
        previous_dir = site / RELEASES / self.previous if self.previous else None
        # Every new file gets one mtime, later than any file of the previous release, so nginx's
        # ETag (mtime-size) changes whenever bytes change, even for two builds in one second.
        previous_stamp = _manifest_stamp(previous_dir) if previous_dir else 0
        self.id = self._new_id()
        super().__init__(site / RELEASES / f"{UNFINISHED}{self.id}", max(int(time.time()), previous_stamp + 1),
                         previous_dir, read_manifest(previous_dir) if previous_dir else {})
        self.folder.mkdir()
        self._scratch = site / RELEASES / f"{UNFINISHED}{self.id}.scratch"  # a leftover is removed as one
        self._pool: ProcessPoolExecutor | None = self._worker_pool(workers)
        self._pending: deque[Future] = deque()
        self._writeback = Writeback(self.folder)
        self.tree: ReleaseTree | None = None  # the Merkle tree of its documents, once finished

    def _worker_pool(self, workers: int) -> ProcessPoolExecutor:
        """Return forked worker processes that hold no copy of the site lock and end with the build. All fork
        when the first work is submitted, from this process as it is then (the build's data included,
        before the pool starts its own thread)."""
        return fork_pool(workers, self._lock.fileno())

    def submit(self, work: Callable[..., Any], *args: Any) -> Future:
        """Run `work(*args)` in a worker process (a model's build: building/model_jobs.py)."""
        if self._pool is None:
            raise PublishError("the release was finished or discarded: no more files can be added")
        try:
            pending = self._pool.submit(work, *args)
        except BrokenProcessPool:
            raise self.worker_stopped() from None
        self._writeback.start()  # after the pool's first submit: its processes have forked (a thread never does)
        return pending

    def _new_id(self) -> str:
        """Return its UTC build second, after every release on disk or known to the catalogue (release_ids.py)."""
        return new_release_id(datetime.datetime.now(datetime.timezone.utc), [*releases(self.site), *self._known])

    def _remove_leftovers(self, history: History) -> None:
        """Remove what killed builds, swaps and prunes left: unfinished and half-deleted releases, temporary links,
        releases the catalogue built whose switch never happened, and releases it pruned whose folder a
        kill left. Only on the catalogue's word: a folder it does not know stays (riskapi releases)."""
        for link in self.site.glob(f".{CURRENT}.tmp-*"):
            link.unlink(missing_ok=True)
        never = {r for r, staged in history.built.items() if not staged} - history.ever_live - history.removed
        left = sorted(set(releases(self.site)) & never)
        if left:
            with Catalogue.open(self.site) as catalogue:
                catalogue.mark_removed(left)
        sweep(self.site)
        for leftover in (self.site / RELEASES).glob(f"{UNFINISHED}*"):
            shutil.rmtree(leftover, ignore_errors=True)

    def scratch(self) -> Path:
        """Return a folder for the build's own intermediate files, beside the release and never in it;
        removed when the release is finished or discarded (or, after a crash, by the next build)."""
        self._scratch.mkdir(exist_ok=True)
        return self._scratch

    def _hand_over(self, work: Callable[..., Any], what: Any) -> None:
        """Give the worker `work(folder, what, stamp)`, once fewer than MAX_PENDING_BATCHES wait."""
        while len(self._pending) >= MAX_PENDING_BATCHES:
            self._collect(self._pending.popleft())
        self._pending.append(self.submit(work, self.folder, what, self.stamp))

    def result(self, pending: Future) -> Any:
        """Return what work submitted to the worker processes gave (re-raising what it raised), or one clear
        error if a worker, or the pool's thread that hands work over, stopped."""
        try:
            while not wait([pending], timeout=1.0).done:
                if not self._pool_alive():
                    raise self.worker_stopped()
            return pending.result()
        except BrokenProcessPool:
            raise self.worker_stopped() from None

    def _collect(self, pending: Future) -> None:
        self._adopt(self.result(pending))

    def _pool_alive(self) -> bool:
        """Return whether the pool can still finish work: its thread that hands work over and its worker run.
        Under a memory limit that thread can die at its start (`can't start new thread`), and the work
        it holds would be waited for forever."""
        pool = self._pool
        manager = getattr(pool, "_executor_manager_thread", None)
        processes = getattr(pool, "_processes", None) or {}
        return (manager is None or manager.is_alive()) and all(p.is_alive() for p in processes.values())

    def worker_stopped(self) -> PublishError:
        return PublishError("a process writing the release stopped (killed, or out of memory); nothing was "
                            f"published and {self.site / CURRENT} is as it was")

    def flush(self) -> None:
        """Wait until every file added so far is on disk (the release can still take more)."""
        self._submit()
        while self._pending:
            self._collect(self._pending.popleft())

    def part(self) -> ReleaseFiles:
        """Return a writer of this release's files that writes in the process it runs in (`merge` takes what it
        wrote): a build's worker process, or this one for files wanted on disk at once."""
        return ReleaseFiles(self.folder, self.stamp, self._previous_dir, self._previous_files)

    def write_now(self, files: dict[str, bytes]) -> None:
        """Write files (with their twins) here and now, not through the worker processes: on disk when
        this returns (the release's nginx maps, which nginx reads while the rest is built)."""
        part = self.part()
        for relative, data in files.items():
            part.write(relative, data)
        part.flush()
        self.merge(part.files, part.linked, part.bytes)

    def merge(self, files: dict[str, dict], linked: int, size: int) -> None:
        """Take the manifest entries of files a worker wrote with a `part` (each path written once)."""
        twice = files.keys() & self.files.keys()
        if twice:
            raise PublishError(f"two documents were written to {min(twice)}")
        self.files.update(files)
        self.linked += linked
        self.bytes += size

    def same_as_previous(self, names_its_release: Callable[[str], bool]) -> bool:
        """Return whether this release holds exactly the previous one's files and bytes (twins aside), but for
        the files that name their own release (`names_its_release(path)`)."""
        def contents(files: dict[str, dict]) -> dict[str, str]:
            return {path: entry["sha256"] for path, entry in files.items()
                    if not names_its_release(path) and not path.endswith(TWIN_SUFFIXES)}
        return self.previous is not None and contents(self.files) == contents(self._previous_files)

    @property
    def previous_dir(self) -> Path | None:
        return self._previous_dir

    def finish(self, stage: bool = False, audiences: tuple[str, ...] = ()) -> None:
        """Wait for every write and write the manifest; the release is complete but not yet live. The
        manifest says what the catalogue is told of the release (staged, its audiences), so a repair can
        tell it again (site.repair_catalogue)."""
        if self._pool is None:
            return
        self.flush()
        leaves = release_leaves(self.files)
        self.tree = ReleaseTree(len(leaves), root(leaves))
        self.write_now(tree_files(leaves))  # its tiles: files of the release, not documents of its tree
        self._pool.shutdown()
        self._pool = None
        shutil.rmtree(self._scratch, ignore_errors=True)
        manifest = {"release": self.id, "previous": self.previous, "stamp": self.stamp, "staged": stage,
                    "audiences": list(audiences), "tree": self.tree.as_json(),
                    "files": dict(sorted(self.files.items()))}
        write_file(self.folder / MANIFEST, orjson.dumps(manifest, option=orjson.OPT_INDENT_2))

    def commit(self, stage: bool = False, audiences: tuple[str, ...] = ()) -> Release:
        """Finish, move the release into place and make it current (`stage`: leave it staged, not live:
        the catalogue says so, and `current` stays as it is). `audiences`: the audiences it serves.

        Every file is on disk (synced) before the catalogue knows the release, the catalogue before the
        release is moved into place, the move before the switch's intent (which records the prune it
        implies: one transaction), the intent before `current` names the release, and its confirmation
        after: a power cut or a kill at any point leaves `current` on a whole release and a catalogue that
        says what was live (catalogue.py). The pruned folders no lease holds go last."""
        try:
            self.finish(stage, audiences)
            self._writeback.stop()
            sync_tree(self.folder)
            final = self.site / RELEASES / self.id
            with Catalogue.open(self.site) as catalogue:
                catalogue.add_release(self.id, staged=stage, audiences=audiences, tree=self.tree)
                history = catalogue.history()
            os.rename(self.folder, final)
            sync_folder(final.parent)
            going = to_prune(self.site, history, self.keep, self.keep_days, None if stage else self.id)
            if not stage:
                switch_pruning(self.site, PUBLISH, self.id, history, going, self.clock_behind_ok)
            elif going:
                update_panel(self.site, history.periods)  # what they published, read while they are on disk
                with Catalogue.open(self.site) as catalogue:
                    catalogue.mark_removed(going)
            self._delete_pruned(going)
        finally:
            self._writeback.stop()
            self._lock.unlock()
        return Release(self.id, final, len(self.files), self.bytes, tuple(going), self.held)

    def _delete_pruned(self, going: list[str]) -> None:
        """Delete the pruned folders no lease holds (a kill before leaves them to the next sweep); those a
        running server still answers from are `held`, deleted by it once it has moved on."""
        self.held = tuple(sorted(set(going) & set(sweep(self.site))))
        keep_reserve(self.site)  # room for `riskapi releases --prune` to record a prune on a full disk

    def abort(self) -> None:
        """Discard the unfinished release; the current one stays exactly as it was.

        The write worker is killed, not waited for: what it writes is being thrown away, and a worker
        that died (a memory limit, an OOM kill) or cannot answer would make a wait hang."""
        try:
            self._writeback.stop()
            if self._pool is not None:
                pool, self._pool = self._pool, None
                discard_pool(pool)
            self._pending.clear()
            self._batch = []
            shutil.rmtree(self.folder, ignore_errors=True)
            shutil.rmtree(self._scratch, ignore_errors=True)
        finally:
            self._lock.unlock()


def switch_pruning(site: Path, action: str, release: str, history: History, going: list[str],
                   clock_behind_ok: bool) -> None:
    """Make `release` current (a build's publish, a promote) with the prune it implies, `going`, in the
    switch's own catalogue transaction. The point-in-time panel keeps what the pruned releases published:
    brought up to date before, while their folders are on disk, and with the period the switch opened
    after, as a server's next configuration would."""
    if going:
        update_panel(site, history.periods)
    with switching(site, action, release, prune=going, clock_behind_ok=clock_behind_ok):
        switch_to(site, release)
    if going:
        update_panel(site)
