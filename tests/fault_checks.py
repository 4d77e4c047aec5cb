"""What a fault test checks after its fault and again after the next build, promote and rollback: the
history true (periods in order, the current release's last, every kept release whole)."""
from __future__ import annotations

import shutil

from generator.history.catalogue import read_history
from generator.history.catalogue.log_copy import LOG_COPY
from generator.history.site import RELEASES, current_release, kept_releases, releases, rollback
from generator.publish.build_release import build
from generator.publish.promote import promote

from .conftest import TINY


def assert_history_true(site) -> None:
    """Assert what must hold whatever happened: periods in order and never ending before they start, the last
    one the current release's, every kept release whole on disk."""
    history = read_history(site)
    periods = history.periods
    assert all(p.end is None or p.start < p.end for p in periods)
    assert [p.start for p in periods] == sorted(p.start for p in periods)
    assert all(a.end == b.start for a, b in zip(periods, periods[1:]))
    assert periods[-1].release == current_release(site) and periods[-1].end is None
    for release in kept_releases(site):
        assert (site / RELEASES / release / "manifest.json").is_file()


def then_stage_promote_rollback(site, data=TINY, clock_behind_ok: bool = False) -> None:
    """Stage the next build, promote it and roll back: each leaves the history true, the rollback goes
    back to the release live before the promote, and nothing that was live or staged is deleted
    (`clock_behind_ok`: a history dated ahead of the clock, on purpose)."""
    before = current_release(site)
    staged = build(data, site, force=True, stage=True, clock_behind_ok=clock_behind_ok).release
    assert current_release(site) == before and staged in read_history(site).staged
    assert promote(site, staged, clock_behind_ok=clock_behind_ok) == before
    assert_history_true(site)
    assert rollback(site, clock_behind_ok) == before
    assert_history_true(site)
    assert {before, staged} <= set(releases(site)) and staged in read_history(site).ever_live


def without_the_log_copy(site) -> None:
    """Lose the site's copy of its log of releases with the catalogue: a repair has the folders alone
    (test_log_repair.py repairs from the copy)."""
    shutil.rmtree(site / LOG_COPY)
