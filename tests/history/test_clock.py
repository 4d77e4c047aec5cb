"""A clock that runs behind: a build, promote or rollback whose clock reads more than 60 s earlier than the
last switch's is refused before anything changes (history/catalogue/instants.py); a smaller step is dated after
the last switch, as ever. The clock is faked for the riskapi process alone by Debian's libfaketime."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from generator.errors import ClockBehind
from generator.history.catalogue import Catalogue, read_history
from generator.history.catalogue.instants import CLOCK_TOLERANCE_MS, refuse_clock_behind
from generator.history.site import RELEASES, current_release, releases
from generator.publish.build_release import build

from ..conftest import TINY
from ..fault_checks import assert_history_true, then_stage_promote_rollback


def riskapi_at(offset: str, *args) -> subprocess.CompletedProcess:
    """Run riskapi with its clock `offset` from the real one (faketime's relative form: -2h, -5s)."""
    return subprocess.run(["faketime", "-f", offset, sys.executable, "-m", "generator.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def state_of(site) -> tuple:
    """Return what a refused command must leave as it was: the folders, the current release, the catalogue's switches
    and its log."""
    with Catalogue.open(site) as catalogue:
        switches = catalogue.db.execute("SELECT * FROM switch ORDER BY seq").fetchall()
        log = catalogue.log_entries()
    return sorted(p.name for p in (site / RELEASES).iterdir()), current_release(site), switches, log


def test_the_tolerance_is_sixty_seconds_of_the_last_switch_s_reading():
    last = 1_800_000_000_000  # ms: the clock at the last switch
    refuse_clock_behind(last - 60_000, last)  # exactly 60 s behind: a step NTP may make, dated after it
    refuse_clock_behind(last + 5_000, last)
    refuse_clock_behind(last, None)  # no switch yet: nothing to be behind
    with pytest.raises(ClockBehind, match=r"reads 60 s earlier"):  # 60.001 s, said to the second
        refuse_clock_behind(last - 60_001, last)
    # two hours: 7,200,000 ms, said as 7200 s (2 h 0 min)
    with pytest.raises(ClockBehind, match=re.escape("reads 7200 s (2 h 0 min) earlier")):
        refuse_clock_behind(last - 7_200_000, last)
    assert CLOCK_TOLERANCE_MS == 60_000


def test_a_build_under_a_clock_two_hours_behind_is_refused_and_changes_nothing(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    build(TINY, site, force=True)
    before = state_of(site)
    refused = riskapi_at("-2h", "build", "--data", TINY, "--site", site, "--force")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    said = refused.stderr + refused.stdout
    behind = int(re.search(r"clock reads (\d+) s \(\d h \d+ min\) earlier than it did at the last switch", said)[1])
    # two hours less the seconds since the last switch (a slow machine's few): never a number of another scale
    assert 7000 < behind <= 7200, said
    assert "nothing was changed" in said and "--accept-clock-behind" in said and "Traceback" not in said
    assert state_of(site) == before
    # the same refusal for a promote and a rollback: what they would switch stays where it was
    staged = build(TINY, site, force=True, stage=True).release
    before = state_of(site)
    for command in (("promote", staged), ("rollback",)):
        refused = riskapi_at("-2h", *command, "--site", site)
        assert refused.returncode == 1 and "earlier than it did at the last switch" in refused.stderr, refused.stderr
        assert state_of(site) == before
    # after the fault: the next build, promote and rollback go on as ever
    build(TINY, site, force=True)
    then_stage_promote_rollback(site)


def test_a_clock_a_few_seconds_behind_publishes_dated_after_the_last_switch(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    published = riskapi_at("-5s", "build", "--data", TINY, "--site", site, "--force", "-q")
    assert published.returncode == 0, published.stderr
    history = read_history(site)
    assert current_release(site) == releases(site)[-1] == history.periods[-1].release
    assert history.periods[-1].start > history.periods[-2].start  # a second after the last, never before it
    assert_history_true(site)
    then_stage_promote_rollback(site)


def test_a_clock_behind_goes_on_when_told_and_the_step_is_noted(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    went_on = riskapi_at("-2h", "build", "--data", TINY, "--site", site, "--force", "--accept-clock-behind", "-q")
    assert went_on.returncode == 0, went_on.stderr
    history = read_history(site)
    assert [p.release for p in history.periods] == releases(site)
    notes = riskapi_at("+0s", "releases", "--site", site).stdout
    assert re.search(rf"note: the clock read \d+\.\d+ s earlier than at the previous switch when "
                     rf"{current_release(site)} went live", notes), notes
    assert_history_true(site)
    then_stage_promote_rollback(site)
