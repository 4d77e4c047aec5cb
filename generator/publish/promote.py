"""Make a staged release live (`riskapi promote ID`): the data team built it with `riskapi build --stage`,
a reviewer read it under its own id with a preview key, and now it becomes current — under the same
guard as a build, and only on top of the release it was built against (its release document and change
counts compare it with that one)."""
from __future__ import annotations

from pathlib import Path

from ..building.diff import ChangeGuard, diff_releases, read_snapshot
from ..building.writer import switch_pruning
from ..errors import PublishError
from ..history.catalogue import PROMOTE, Catalogue, read_history
from ..history.leases import sweep
from ..history.retention import retention, to_prune
from ..history.site import (
    RELEASES,
    SiteLock,
    built_against,
    current_release,
    missing_files,
    staged_releases,
)
from ..serve.nginx.configuration import check_release
from .build_release import refuse_if_suspicious


def promote(site: Path, release_id: str, guard: ChangeGuard | None = ChangeGuard(),
            clock_behind_ok: bool = False) -> str | None:
    """Make the staged release `release_id` current, pruning as a build does (the site's --keep and
    --keep-days, in the switch's own transaction); return the id it replaced (None: the first).

    Refused (PublishError, or the build's ChangesRefused) when the release is not staged, not complete,
    was staged against another release than the current one, moves more than the guard allows, nginx
    rejects its configuration, or the clock reads far behind the last switch (unless `clock_behind_ok`);
    `current` stays as it was."""
    with SiteLock(site):
        if not clock_behind_ok:
            with Catalogue.open(site) as catalogue:
                catalogue.check_clock()
        staged = staged_releases(site)
        if release_id not in staged:
            raise PublishError(f"{release_id} is not a staged release of {site} "
                               f"(staged: {', '.join(staged) or 'none'}; see riskapi releases)")
        folder = site / RELEASES / release_id
        missing = missing_files(folder)
        if missing:
            raise PublishError(f"release {release_id} is not complete ({missing} files missing); build it again")
        current = current_release(site)
        base = built_against(folder)
        if base != current:
            raise PublishError(f"release {release_id} was staged against {base or 'no release'}, but the "
                               f"current release is {current}: its changes and release document compare it with "
                               f"the other; build it again with --stage")
        previous = read_snapshot(site / RELEASES / current) if current else None
        snapshot = read_snapshot(folder)
        refuse_if_suspicious(diff_releases(previous, snapshot), previous, snapshot, current, guard, None,
                             retry="promote with --accept-changes")
        rejected = check_release(folder)
        if rejected:
            raise PublishError(f"nginx rejects release {release_id}'s configuration, so it was not "
                               f"promoted:\n{rejected}")
        history = read_history(site)
        going = to_prune(site, history, *retention(history.settings), switching_to=release_id)
        # intent (with its prune), swap, confirmation: as a build's commit
        switch_pruning(site, PROMOTE, release_id, history, going, clock_behind_ok)
        sweep(site)
        return current
