"""Leases on releases: what a running process answers from or reads (a `riskapi serve`'s nginx, a deploy
uploading) and what an edge's live manifest names, which retention never deletes while it is held.

A lease is a file of site/leases/ naming its holder (a process: its pid and start time, so a pid used
again by another process holds nothing), what it is and the releases it holds. A lease of a process that
is gone holds nothing and is removed by the next one who reads it. An edge's lease (pid 0:
`hold_for_edge`) holds until the next deploy to that edge replaces it.

A holder grows its lease under the leases' lock before it starts to use a release (`extending`), and
shrinks it once it has moved on; a prune records what it removes in the catalogue first, and folders are
deleted by `sweep`, which reads the catalogue and the leases under the same lock: a release is either held
before the sweep looks, or known gone to whoever reads the catalogue after it. Every holder sweeps when it
lets go (a serve after its reload, a deploy when it ends, an edge's lease replaced), as a build does after
its switch, so a pruned folder leaves the disk as soon as the last holder has moved on."""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

import orjson

from ..errors import RiskApiError
from ..system.files import write_atomic
from ..system.processes import stat_fields
from .catalogue import read_history
from .layout import RELEASES, releases

LEASES = "leases"  # in the site folder: never served
EDGE = 0  # the pid of an edge's lease: held by no process, replaced by the next deploy to that edge


@dataclass(frozen=True)
class Lease:
    holder: str  # its file's name: what + pid
    what: str
    pid: int
    started: str  # the process's start time (/proc/PID/stat), so a pid used again is not taken for it
    releases: tuple[str, ...]


def process_started(pid: int) -> str | None:
    """Return when process `pid` started (clock ticks since boot), or None where it is gone or a zombie."""
    fields = stat_fields(pid)
    return None if fields is None or fields[0] == "Z" else fields[19]


@contextlib.contextmanager
def leases_locked(site: Path) -> Iterator[Path]:
    """Yield the leases' lock, held while a holder grows its lease or a prune reads them."""
    folder = site / LEASES
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield folder
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_leases(site: Path) -> list[Lease]:
    """Return the leases whose holder still runs; those of a process that is gone are removed."""
    found = []
    for path in sorted((site / LEASES).glob("*.json")):
        try:
            data = orjson.loads(path.read_bytes())
            lease = Lease(path.stem, str(data["what"]), int(data["pid"]), str(data["started"]),
                          tuple(str(r) for r in data["releases"]))
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            continue  # being written (write_atomic renames whole files), or not ours: holds nothing
        if lease.pid == EDGE or process_started(lease.pid) == lease.started:
            found.append(lease)
        else:
            path.unlink(missing_ok=True)
    return found


GONE = ".gone-"  # a pruned release's folder renamed out of sight, then deleted


def pruned_on_disk(site: Path, leases: list[Lease] | None = None,
                   removed: frozenset[str] | None = None) -> dict[str, list[Lease]]:
    """Return each release the catalogue says is pruned (`removed`, where the caller has read it) whose folder is
    still on disk, with the leases holding it (none: the next sweep deletes it). An unreadable catalogue
    tells of none."""
    if removed is None:
        try:
            removed = read_history(site).removed
        except RiskApiError:
            return {}
    leases = read_leases(site) if leases is None else leases
    return {release: [lease for lease in leases if release in lease.releases]
            for release in releases(site) if release in removed}


def sweep(site: Path) -> dict[str, list[Lease]]:
    """Delete the folder of every pruned release no lease holds: under the leases' lock, each is renamed out
    of sight (a kill leaves no half-deleted release on offer, and the next sweep finishes it), then deleted.
    Returns the pruned releases left on disk, each with the leases that hold it."""
    folder = site / RELEASES
    if not folder.is_dir():
        return {}
    with leases_locked(site):
        found = pruned_on_disk(site)
        for release, holders in found.items():
            if not holders:
                with contextlib.suppress(FileNotFoundError):  # another sweep took it meanwhile
                    os.rename(folder / release, folder / f"{GONE}{release}")
    for gone in folder.glob(f"{GONE}*"):
        shutil.rmtree(gone, ignore_errors=True)
    return {release: holders for release, holders in found.items() if holders}


class Holder:
    """This process's lease on a site's releases, as `what` (said by `riskapi status` and by a prune that
    keeps a release for it)."""

    def __init__(self, site: Path, what: str, name: str):
        self.site, self.what = site, what
        self.pid = os.getpid()
        self.path = site / LEASES / f"{name}-{self.pid}.json"
        self.releases: tuple[str, ...] = ()

    def _write(self, releases: Iterable[str]) -> None:
        self.releases = tuple(sorted(set(releases)))
        started = process_started(self.pid)
        write_atomic(self.path, orjson.dumps({"what": self.what, "pid": self.pid, "started": started,
                                              "releases": list(self.releases)}))

    @contextlib.contextmanager
    def extending(self) -> Iterator[Callable[[Iterable[str]], None]]:
        """Hold the leases' lock: read what to use (the catalogue's kept releases), then hold it with
        what is held already, before any prune can look again."""
        with leases_locked(self.site):
            yield lambda releases: self._write([*self.releases, *releases])

    def hold_only(self, releases: Iterable[str]) -> None:
        """Shrink the lease to `releases`, once nothing else is used (never grows one: `extending` does); the
        pruned folders it held and no other lease does are deleted."""
        kept = set(releases) & set(self.releases)
        if kept != set(self.releases):
            self._write(kept)
            let_go(self.site)

    def release(self) -> None:
        """Hold no release any more: remove the lease, and delete what it alone held of the pruned."""
        if self.path.exists():
            self.path.unlink(missing_ok=True)
            let_go(self.site)


def let_go(site: Path) -> None:
    """Sweep as a holder lets go: a folder that cannot be deleted now (no permission, busy) is left to
    the next sweep, and `riskapi status` names it; the holder goes on."""
    with contextlib.suppress(OSError):
        sweep(site)


def hold_for_edge(site: Path, edge: str, what: str, releases: Iterable[str]) -> None:
    """Take the lease of an edge (`edge`: a name for it, such as its bucket) on the releases its live manifest
    names, in place of its last one."""
    folder = site / LEASES
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    write_atomic(folder / f"edge-{edge}.json", orjson.dumps({"what": what, "pid": EDGE, "started": "",
                                                             "releases": sorted(set(releases))}))
    let_go(site)  # what only its last manifest named, and the site pruned, goes now
