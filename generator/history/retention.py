"""Retention: which releases a switch prunes (`to_prune`), recorded in the same catalogue transaction as the
switch (catalogue.switching), and a prune without a switch for an operator out of disk (`prune_now`). The
folders themselves leave the disk by leases.sweep, as soon as no lease holds them."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from ..system.files import write_atomic
from .catalogue import KEEP, KEEP_DAYS, Catalogue, History
from .layout import RELEASES, UNFINISHED, releases
from .leases import GONE, Lease, sweep
from .site import SiteLock, live_within

KEEP_RELEASES = 5  # the retention of a site that was never given one
# A file of the site kept as room to record a prune in: on a full disk, `prune_now` removes it first, so the
# catalogue can take the transaction (its shared-memory file, its log, the log's copy), and writes it again once
# the pruned folders are gone.
RESERVE, RESERVE_BYTES = ".reserve", 1 << 20


def retention(settings: dict[str, str], keep: int | None = None,
              keep_days: float | None = None) -> tuple[int, float | None]:
    """Return the retention as given, else as the site remembers it (its catalogue's settings), else the default."""
    keep = keep if keep is not None else int(settings.get(KEEP, KEEP_RELEASES))
    if keep_days is None and KEEP_DAYS in settings:
        keep_days = float(settings[KEEP_DAYS])
    return keep, keep_days


def to_prune(site: Path, history: History, keep: int, keep_days: float | None,
             switching_to: str | None = None) -> list[str]:
    """Return of the releases older than the newest `keep` on disk, those the catalogue built that are not current,
    not staged, not where a rollback goes (the one live before the current one, however old) and not live
    within the last `keep_days` days — as they will be once `switching_to` is live, where a switch is about
    to make it so. A folder the catalogue does not know is never pruned."""
    stack = [*history.stack, switching_to] if switching_to else history.stack
    kept = {switching_to, history.current, *stack[-2:], *history.staged}
    if keep_days is not None:
        kept |= live_within(site, keep_days, history, switching=switching_to is not None)
    older = releases(site)[:-keep] if keep else releases(site)
    return [r for r in older if r in history.built and r not in kept and r not in history.removed]


@dataclass(frozen=True)
class Pruned:
    pruned: tuple[str, ...]  # the releases this prune recorded
    keep: int  # the retention it applied
    freed: int  # bytes the file system gained meanwhile (a file shared with a kept release by a hard link stays)
    held: dict[str, list[Lease]]  # pruned releases whose folder stays while these leases hold it


def prune_now(site: Path, keep: int | None = None, keep_days: float | None = None) -> Pruned:
    """Apply the retention (as given, else the site's: `retention`) without building, for an operator out of
    disk: the reserve and what a killed build left go first, then the prune in one transaction, then every
    pruned folder no lease holds."""
    with SiteLock(site):
        folder = site / RELEASES
        before = shutil.disk_usage(site).free
        (site / RESERVE).unlink(missing_ok=True)
        # a killed build's and a killed sweep's, before the catalogue needs room (the sweep deletes the latter too)
        for leftover in [*folder.glob(f"{UNFINISHED}*"), *folder.glob(f"{GONE}*")]:
            shutil.rmtree(leftover, ignore_errors=True)
        with Catalogue.open(site) as catalogue:
            catalogue.settle()
            history = catalogue.history()
            keep, keep_days = retention(history.settings, keep, keep_days)
            going = to_prune(site, history, keep, keep_days)
            if going:
                catalogue.mark_removed(going)
        held = sweep(site)
        keep_reserve(site)
        return Pruned(tuple(going), keep, max(0, shutil.disk_usage(site).free - before), held)


def keep_reserve(site: Path) -> None:
    """Write the site's reserve (RESERVE) where it is missing and the disk has room for it; else left for
    the next build or prune to write."""
    if (site / RESERVE).is_file():
        return
    try:
        write_atomic(site / RESERVE, bytes(RESERVE_BYTES), mode=0o600)
    except OSError:
        (site / f"{RESERVE}.new").unlink(missing_ok=True)

