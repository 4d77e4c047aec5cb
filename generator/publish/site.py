"""A site's releases: which there are, which is current, which were live when (the journal, history.py),
which are kept, staged or gone; the switch of `current`, the lock, rollback (the layout: __init__.py)."""
from __future__ import annotations

import datetime
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

import orjson

from .. import history
from ..errors import PublishError
from ..files import link_atomic

RELEASES = "releases"
CURRENT = "current"
MANIFEST = "manifest.json"
CHANGES = "changes.txt"  # what the release changed against the one current before it


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

