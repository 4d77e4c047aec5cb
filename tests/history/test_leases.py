"""Leases on releases (generator/history/leases.py): a release a running process answers from, or an edge's
live manifest names, is pruned in the catalogue (gone: 410) but its folder stays until the holder has moved
on, and goes then, with no build; a lease of a process that is gone, or of another process that took its
pid, holds nothing."""
from __future__ import annotations

import os
import subprocess
import sys

import orjson

from generator.history.catalogue import read_history
from generator.history.leases import LEASES, Holder, hold_for_edge, process_started, read_leases
from generator.history.site import RELEASES, current_release, releases
from generator.publish.build_release import build

from ..conftest import TINY
from ..fault_checks import assert_history_true, then_stage_promote_rollback


def three_releases(site):
    return [build(TINY, site, force=True, keep=5).release for _ in range(3)]


def test_a_held_release_is_pruned_in_the_catalogue_and_its_folder_stays_until_let_go(tmp_path):
    site = tmp_path / "site"
    first, second, third = three_releases(site)
    holder = Holder(site, "a test server", "test")
    with holder.extending() as hold:
        hold([first])
    built = build(TINY, site, force=True, keep=1)  # keep 1: first and second go (third is the rollback target)
    assert set(built.pruned) == {first, second} and built.held == (first,)
    assert read_history(site).removed == {first, second}  # gone (410) to every server's next configuration
    assert (site / RELEASES / first).is_dir() and not (site / RELEASES / second).exists()
    assert_history_true(site)
    holder.hold_only([])  # the server moved on: as the last holder, it deletes the folder, no build needed
    assert not (site / RELEASES / first).exists() and not list((site / RELEASES).glob(".gone-*"))
    assert releases(site) == [third, built.release]
    holder.release()
    then_stage_promote_rollback(site)


def test_a_lease_of_a_process_gone_or_of_a_pid_taken_again_holds_nothing(tmp_path):
    site = tmp_path / "site"
    first, _, _ = three_releases(site)
    # a process that leased `first` and ended (killed: it never let go)
    script = ("import sys; from pathlib import Path; from generator.history.leases import Holder\n"
              "h = Holder(Path(sys.argv[1]), 'a killed server', 'test')\n"
              "with h.extending() as hold: hold([sys.argv[2]])\n")
    subprocess.run([sys.executable, "-c", script, str(site), first], check=True)
    assert len(list((site / LEASES).glob("test-*.json"))) == 1
    assert read_leases(site) == [] and not list((site / LEASES).glob("test-*.json"))  # removed once read
    # a lease naming this very pid with another start time: a process that had the pid before
    (site / LEASES / "old-1.json").write_bytes(orjson.dumps({"what": "an old server", "pid": os.getpid(),
                                                             "started": "1", "releases": [first]}))
    assert process_started(os.getpid()) != "1" and read_leases(site) == []
    built = build(TINY, site, force=True, keep=1)
    assert first in built.pruned and not built.held and not (site / RELEASES / first).exists()
    then_stage_promote_rollback(site)


def test_an_edge_lease_holds_until_the_next_deploy_to_that_edge_replaces_it(tmp_path):
    site = tmp_path / "site"
    first, second, third = three_releases(site)
    hold_for_edge(site, "s3-test", "the bucket s3://test/", [first, second])
    assert [lease.releases for lease in read_leases(site)] == [(first, second)]
    build(TINY, site, force=True, keep=1)
    assert {first, second} <= set(releases(site)) and {first, second} <= read_history(site).removed
    hold_for_edge(site, "s3-test", "the bucket s3://test/", [third, current_release(site)])  # deployed again
    assert not {first, second} & set(releases(site))  # gone with the lease that held them, no build needed
    then_stage_promote_rollback(site)
