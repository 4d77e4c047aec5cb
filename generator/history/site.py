"""A site's releases: which there are, which is current, which were live when (the catalogue,
catalogue.py), which are kept, staged or gone; the switch of `current`, the lock, rollback (the layout:
__init__.py)."""
from __future__ import annotations

import fcntl
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..contract.release_ids import STAMP
from ..errors import PublishError, ServeError
from ..system.files import link_atomic
from .catalogue import (
    CATALOGUE,
    PUBLISH,
    ROLLBACK,
    Catalogue,
    History,
    LivePeriod,
    built_at_ms,
    now_ms,
    read_history,
    switching,
)
from .catalogue.instants import switch_instant
from .catalogue.log_copy import LogCopy, newest_copy, read_copy, write_copy
from .layout import CURRENT, MANIFEST, RELEASES, current_release, manifest, release_order, releases
from .proof.leaves import manifest_tree
from .proof.note import Verifier

CHANGES = "changes.txt"  # what the release changed against the one current before it


@dataclass(frozen=True)
class Release:
    id: str
    path: Path
    files: int
    bytes: int
    pruned: tuple[str, ...] = ()  # the releases the retention removed after it was published
    held: tuple[str, ...] = ()  # of those, the ones whose folder stays while a running server uses it


def no_release(site: Path) -> ServeError:
    return ServeError(f"{site} has no current release; run `riskapi build` first")


def live_release(site: Path) -> str:
    """Return the id of a site's current release; a ServeError saying to build first when it has none."""
    release = current_release(site)
    if release is None:
        raise no_release(site)
    return release


def read_manifest(release_dir: Path) -> dict[str, dict]:
    return (manifest(release_dir) or {"files": {}})["files"]


def built_against(release_dir: Path) -> str | None:
    """Return the release that was current when this one was built (its changes are counted against it)."""
    return (manifest(release_dir) or {}).get("previous")


def _manifest_stamp(release_dir: Path) -> int:
    return (manifest(release_dir) or {}).get("stamp", 0)


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

    def __enter__(self) -> SiteLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.unlock()


def missing_files(release_dir: Path) -> int | None:
    """Return how many files of a release's manifest are absent or of another size; None without a manifest."""
    found = manifest(release_dir)
    if found is None:
        return None
    missing = 0
    for relative, entry in found["files"].items():
        try:
            if os.stat(release_dir / relative).st_size != entry["size"]:
                missing += 1
        except FileNotFoundError:
            missing += 1
    return missing


def _history(site: Path, history: History | None) -> History:
    return read_history(site) if history is None else history


def was_live(site: Path, history: History | None = None) -> list[str]:
    """Return the releases that were live, oldest first, as rollbacks left them (the last is current)."""
    return _history(site, history).stack


def live_periods(site: Path, history: History | None = None) -> list[LivePeriod]:
    """Return when each release was live, oldest first (the last is the current one, live until now)."""
    return _history(site, history).periods


def live_within(site: Path, days: float, history: History | None = None, switching: bool = False) -> set[str]:
    """Return the releases live at some instant in the last `days` days: before now, or before the last switch
    where that is later (switches a second apart are dated ahead of the clock: instants.switch_instant) —
    or, `switching`, before the switch about to be made, as it will be dated."""
    periods, now = live_periods(site, history), now_ms()
    latest = max([now, *(p.start for p in periods)])
    if switching:
        latest = switch_instant(now, latest)
    cutoff = latest - int(days * 86_400_000)
    return {p.release for p in periods if p.end is None or p.end >= cutoff}


def staged_releases(site: Path, history: History | None = None) -> list[str]:
    """Return the releases built with --stage and never made live since, complete, in build order: answered under
    their own id to preview keys only, until `riskapi promote` makes one live."""
    staged = _history(site, history).staged
    return [r for r in releases(site) if r in staged and (site / RELEASES / r / MANIFEST).is_file()]


def kept_releases(site: Path, history: History | None = None) -> list[str]:
    """Return the releases answered under /api/v1/releases/{id}/: complete (a manifest), live at some time and
    not pruned, in build order."""
    history = _history(site, history)
    return [r for r in releases(site) if r in history.ever_live and r not in history.removed
            and (site / RELEASES / r / MANIFEST).is_file()]


def gone_releases(site: Path, history: History | None = None) -> list[str]:
    """Return the releases that were live and are no longer kept (pruned): answered 410."""
    history = _history(site, history)
    on_disk = set(releases(site))
    return sorted(history.gone | (history.ever_live - on_disk), key=release_order)


def unknown_releases(site: Path, history: History | None = None) -> list[str]:
    """Return release folders the catalogue does not know: never served, never deleted, reported."""
    history = _history(site, history)
    return [r for r in releases(site) if r not in history.built and r != history.current]


def rollback(site: Path, clock_behind_ok: bool = False) -> str:
    """Make the release that was live before the current one current again; return its id.

    Follows the history of what was live (the catalogue), skipping a release that is no longer complete;
    refused where the clock reads far behind the last switch, unless `clock_behind_ok`."""
    with SiteLock(site):
        history = read_history(site)
        current = current_release(site)
        skipped = []
        for candidate in reversed(history.stack[:-1]):
            if candidate == current:
                continue
            missing = missing_files(site / RELEASES / candidate) if candidate not in history.removed else None
            if missing == 0:
                with switching(site, ROLLBACK, candidate, clock_behind_ok=clock_behind_ok):
                    switch_to(site, candidate)
                return candidate
            skipped.append(f"{candidate} ({'gone' if missing is None else f'{missing} files missing'})")
        raise PublishError(f"no release that was live before {current or 'the current one'} to roll back to"
                           + (f"; not complete: {', '.join(skipped)}" if skipped else ""))



def repair_catalogue(site: Path, copies: Sequence[LogCopy] = (), trust: Verifier | None = None) -> list[str]:
    """Rebuild a site's catalogue (the damaged one is kept beside, renamed); return what could not be
    recovered. From a copy of its log of releases where there is one — the site's own (site/log/) or
    `copies` read elsewhere (the bucket's, a server's), the longest of those that agree, signed by `trust`
    where given: every instant, and the log unchanged (_repair_from_log); a copy that does not hold
    together, or two that disagree, change nothing. Else from its release folders.

    What a release folder tells: its manifest names the release that was current when it was built, which
    was live then. So the releases live before the current one are the chain of those, from `current` back;
    each is taken to have gone live when it was built (the real instants, rollbacks and promotes are not in
    the folders), and a release the chain names whose folder is gone was pruned (410). A release off the
    chain was staged, rolled back from or never live: one whose manifest says it was built staged is staged
    again, with its audiences, for review and promote; any other is left unknown (never served, never
    deleted)."""
    with SiteLock(site):
        own = read_copy(site)  # read (and checked) before anything is moved
        copy = newest_copy([*([own] if own else []), *copies], trust)
        stamp = time.strftime(STAMP, time.gmtime())
        for suffix in ("", "-wal", "-shm"):
            old = site / f"{CATALOGUE}{suffix}"
            if old.exists():
                os.replace(old, site / f"{CATALOGUE}.damaged-{stamp}{suffix}")
        if copy is not None:
            return _repair_from_log(site, copy)
        on_disk = releases(site)
        chain, notes = [], []
        release = current_release(site)
        while release is not None and release not in chain:
            chain.append(release)
            folder = site / RELEASES / release
            if not (folder / MANIFEST).is_file():
                if release in on_disk:
                    notes.append(f"{release} has no manifest: the releases live before it are not known")
                break
            release = built_against(folder)
        chain.reverse()
        off_chain = [r for r in on_disk if r not in chain]
        staged = [r for r in off_chain if (manifest(site / RELEASES / r) or {}).get("staged")]
        with Catalogue.make_empty(site) as catalogue:
            notes.append(catalogue.restore_settings())  # first: the switches below are signed with its key
            for release in chain:
                stated = manifest(site / RELEASES / release)
                catalogue.add_release(release, tree=manifest_tree(stated) if stated else None)
                seq = catalogue.intend(PUBLISH, release, recovered=built_at_ms(release))
                catalogue.confirm(seq)
                if release not in on_disk:
                    catalogue.mark_removed([release])
            for release in staged:
                audiences = (manifest(site / RELEASES / release) or {}).get("audiences", [])
                catalogue.add_release(release, staged=True, audiences=tuple(audiences))
            catalogue.fill_trees()  # the staged ones'
        if chain:
            notes.append(f"{len(chain)} live period(s) recovered ({', '.join(chain)}), each from its release's "
                         "build time: when each really went live, and any rollback or promote, is not recoverable")
        if staged:
            notes.append(f"staged again: {', '.join(staged)} (built with --stage, as its manifest says): preview "
                         "keys see it, and riskapi promote makes it live")
        off_chain = [r for r in off_chain if r not in staged]
        if off_chain:
            notes.append(f"not recovered: {', '.join(off_chain)} — rolled back from or never live; left "
                         "unknown (never served, never deleted): build again with --stage to review one, or "
                         "remove its folder by hand")
        return notes


def _repair_from_log(site: Path, copy: LogCopy) -> list[str]:
    """Return the catalogue made anew from a copy of its log: every switch with its exact instant, every prune,
    the log itself unchanged (and the site's own copy written again from it); the releases built with
    --stage that the log does not name staged again (their manifests say so). A switch to the current
    release after the copy's checkpoint (the site's copy is written after each) is recorded as of the
    repair."""
    entries = copy.entries
    write_copy(site, entries, len(entries), copy.note)
    with Catalogue.make_empty(site) as catalogue:
        named, live = catalogue.restore_log(entries, copy.note)
        restored = catalogue.restore_settings()  # before any switch below: signed with the key it names
        staged = []
        for release in releases(site):
            stated = manifest(site / RELEASES / release) or {}
            if release not in named and stated.get("staged"):
                catalogue.add_release(release, staged=True, audiences=tuple(stated.get("audiences", [])),
                                      tree=manifest_tree(stated))
                staged.append(release)
        catalogue.fill_trees()
        current = current_release(site)
        notes = [f"{len(entries)} entries of the log of releases recovered from {copy.where}: every switch "
                 "and prune with its instant; the log goes on as it was"]
        if current is not None and live != current:
            catalogue.add_release(current, tree=manifest_tree(manifest(site / RELEASES / current) or {"files": {}}))
            catalogue.confirm(catalogue.intend(PUBLISH, current))
            notes.append(f"{current} went live after the log's last copy: recorded as live from now")
        if staged:
            notes.append(f"staged again: {', '.join(staged)} (built with --stage, as its manifest says)")
        notes.append(restored)
    return notes
