"""A build, a worker, a swap or a prune killed at any step, or out of memory: the live release stays
whole, the history stays true, nothing half-made is ever offered, and the next build cleans up what
the kill left. Every process here is started by the test and ended by its PID; waits are bounded."""
from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.errors import PublishError
from generator.history.catalogue import PUBLISH, Catalogue, switching
from generator.history.site import CURRENT, RELEASES, current_release, releases, rollback, switch_to
from generator.publish.build_release import build
from generator.system.processes import children, process_state

from ..conftest import DEMO_DATA, TINY, make_nga_black, riskapi
from ..live import wait_for

pytestmark = pytest.mark.faults

def start_build(data: Path, site: Path, *options: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "generator.cli", "build", "--data", str(data), "--site",
                             str(site), *options], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def write_worker_of(build: subprocess.Popen, site: Path) -> int:
    """Return a forked process writing the release, once it writes (a .tmp- release folder with files): with one
    job the write worker, with more a worker building models (the write worker starts after them)."""
    def writing():
        temporary = [p for p in (site / RELEASES).glob(".tmp-*") if any(p.rglob("index.json"))]
        workers = children(build.pid)
        return next(iter(workers)) if temporary and workers else None
    return wait_for(writing, what="write worker")


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_a_build_killed_by_sigkill_leaves_no_lock_and_the_next_build_cleans_up(tmp_path):
    site = tmp_path / "site"
    build = start_build(DEMO_DATA, site)
    worker = write_worker_of(build, site)
    build.kill()  # what an OOM kill or a supervisor's SIGKILL does to the build's main process
    build.wait(timeout=30)
    def ended() -> bool:
        state = process_state(worker)
        return state is None or state[0] == "Z"
    wait_for(ended, seconds=10, what="end of the orphaned worker")
    # the lock died with its owner: the next build takes the site, publishes, and removes the leftover
    after = subprocess.run([sys.executable, "-m", "generator.cli", "build", "--data", str(TINY), "--site",
                            str(site)], capture_output=True, text=True, timeout=120)
    assert after.returncode == 0, after.stdout + after.stderr
    assert current_release(site) == releases(site)[0]
    assert not list((site / RELEASES).glob(".tmp-*"))


@pytest.mark.slow  # builds of the demo data, each killed mid-way: ten seconds and more
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_killed_worker_is_one_clear_error_and_publishes_nothing(tmp_path, jobs):
    site = tmp_path / "site"
    cli = CliRunner()
    assert cli.invoke(main, ["-q", "build", "--data", str(TINY), "--site", str(site)]).exit_code == 0
    live = current_release(site)
    build = start_build(DEMO_DATA, site, "--jobs", jobs)
    worker = write_worker_of(build, site)
    others = children(build.pid) - {worker}
    assert len(others) == int(jobs) - 1  # with two jobs, the other model worker (the pool forks them at once)
    os.kill(worker, signal.SIGKILL)
    output, _ = build.communicate(timeout=120)
    assert build.returncode == 1, output
    assert "Traceback" not in output
    assert output.strip() == (f"Error: a process writing the release stopped (killed, or out of memory); nothing "
                              f"was published and {site / CURRENT} is as it was")
    assert releases(site) == [live] and current_release(site) == live
    # the build's other workers ended with it (nothing writes into the discarded folder)
    assert all(process_state(p) is None or process_state(p)[0] == "Z" for p in others)
    # and after it: a build with as many jobs, a staged one promoted, a rollback
    assert cli.invoke(main, ["-q", "build", "--data", str(DEMO_DATA), "--site", str(site), "--jobs", jobs,
                             "--accept-changes"]).exit_code == 0
    built = current_release(site)
    assert built != live and not list((site / RELEASES).glob(".tmp-*"))
    staged = cli.invoke(main, ["-q", "build", "--data", str(TINY), "--site", str(site), "--jobs", jobs, "--stage",
                               "--accept-changes"])
    assert staged.exit_code == 0, staged.output
    newest = releases(site)[-1]
    assert current_release(site) == built and newest not in (live, built)
    promoted = cli.invoke(main, ["-q", "promote", newest, "--site", str(site), "--accept-changes"])
    assert promoted.exit_code == 0, promoted.output
    assert current_release(site) == newest
    assert cli.invoke(main, ["-q", "rollback", "--site", str(site)]).exit_code == 0
    assert current_release(site) == built


# ---- releases and rollback ----------------------------------------------------------------------

def test_rollback_follows_what_was_live_not_the_build_order(tmp_path, data_copy):
    site = tmp_path / "site"
    good = build(data_copy, site).release
    make_nga_black(data_copy)
    bad = build(data_copy, site).release
    assert rollback(site) == good  # the operator rolls back from the bad release …
    fixed = build(TINY, site, force=True).release  # … and publishes a fixed one
    assert rollback(site) == good != bad  # by build order this went to the known-bad release
    assert current_release(site) == good and fixed in releases(site)


def test_an_incomplete_release_is_never_offered(tmp_path):
    site = tmp_path / "site"
    first = build(TINY, site).release
    second = build(TINY, site, force=True).release
    lost = sorted((site / RELEASES / first / "api").rglob("index.json"))[:2]  # as an interrupted prune leaves it
    for path in lost:
        path.unlink()
    with pytest.raises(PublishError, match=f"not complete: {first} \\(2 files missing\\)"):
        rollback(site)
    assert current_release(site) == second
    listing = [line for line in CliRunner().invoke(main, ["releases", "--site", str(site)]).output.splitlines()
               if not line.startswith("    live")]
    assert listing[0].endswith("(incomplete: 2 files missing; never offered)") and listing[1].startswith("* ")


def test_leftovers_of_killed_swaps_prunes_and_never_live_releases_go_at_the_next_build(tmp_path):
    from generator.history.catalogue import PUBLISH, Catalogue
    from generator.history.retention import RESERVE
    site = tmp_path / "site"
    first = build(TINY, site).release
    # what kills leave behind: a temporary link of a swap, a half-pruned release, and a complete release
    # the catalogue built and whose switch's intent was written but never happened (killed before the swap)
    (site / ".current.tmp-99999").symlink_to(f"{RELEASES}/{first}")
    shutil.copytree(site / RELEASES / first, site / RELEASES / f".gone-{first}")
    never = "20991231T000000Z"
    shutil.copytree(site / RELEASES / first, site / RELEASES / never)
    with Catalogue.open(site) as catalogue:
        catalogue.add_release(never)
        catalogue.intend(PUBLISH, never)
    # and a folder the catalogue does not know (copied in by hand): reported, never deleted
    unknown = "29991231T000000Z"
    shutil.copytree(site / RELEASES / first, site / RELEASES / unknown)
    second = build(TINY, site, force=True).release
    assert second == f"{unknown}-02"  # ids go on after every folder's, known or not
    assert releases(site) == [first, unknown, second]
    assert sorted(p.name for p in site.iterdir()) == [".lock", RESERVE, "catalogue.db", CURRENT, "leases", "log",
                                                     RELEASES, "site-id", "site-settings.json"]
    assert [p.name for p in (site / RELEASES).iterdir() if p.name.startswith(".")] == []
    assert "unknown to the catalogue: never served, never deleted" in \
        next(line for line in run_releases(site) if unknown in line)


def run_releases(site) -> list[str]:
    from click.testing import CliRunner

    from generator.cli import main
    return CliRunner().invoke(main, ["releases", "--site", str(site)]).output.splitlines()


# ---- atomic on disk ------------------------------------------------------------------------------------

@pytest.mark.slow  # 100 and more builds
def test_release_ids_sort_by_their_count_past_99_builds_in_a_second(tmp_path):
    from generator.history.site import release_order, releases
    site = tmp_path / "site"
    build(TINY, site)
    first = current_release(site)
    # 99 more releases of that second, as a fast loop of builds would leave them ("-02" … "-99")
    future = "29991231T235959Z"
    for count in range(2, 100):
        shutil.copytree(site / RELEASES / first, site / RELEASES / f"{future}-{count:02d}", symlinks=True)
        with Catalogue.open(site) as catalogue:
            catalogue.add_release(f"{future}-{count:02d}")
    with switching(site, PUBLISH, f"{future}-99"):
        switch_to(site, f"{future}-99")
    assert releases(site)[-1] == f"{future}-99"
    build(TINY, site, force=True)
    build(TINY, site, force=True)
    assert releases(site)[-2:] == [f"{future}-100", f"{future}-101"]  # as text, -100 would sort before -99
    assert current_release(site) == f"{future}-101"
    assert sorted(["X-100", "X-99", "X"], key=release_order) == ["X", "X-99", "X-100"]


STEPS = [  # (where the build is killed, patched function, before or after it runs)
    ("before the catalogue knows the release", "generator.history.catalogue.Catalogue.add_release", "before"),
    ("after the catalogue knows it, before it is moved into place", "os.rename", "before"),
    ("after the move, before the switch's intent", "generator.history.catalogue.Catalogue.intend", "before"),
    ("after the intent, before the switch", "generator.building.writer.switch_to", "before"),
    ("after the switch, before its confirmation", "generator.history.catalogue.Catalogue.confirm", "before"),
    ("after the confirmation, before the pruned folders go", "generator.building.writer.ReleaseWriter._delete_pruned",
     "before"),
]


def killed_build(site: Path, target: str, when: str) -> int:
    """Build in a forked child that dies (os._exit, as a SIGKILL would leave things) at `target`."""
    pid = os.fork()
    if pid == 0:  # the child: never returns
        try:
            import importlib
            module_name, _, name = target.rpartition(".")
            if module_name.rpartition(".")[2][:1].isupper():  # a class's method
                module_name, _, class_name = module_name.rpartition(".")
                owner = getattr(importlib.import_module(module_name), class_name)
            else:
                owner = importlib.import_module(module_name)
            real = getattr(owner, name)

            def dying(*args, **kwargs):
                if when == "after":
                    real(*args, **kwargs)
                if target != "os.rename" or ".tmp-" in str(args[0]):
                    os._exit(9)
                return real(*args, **kwargs)
            setattr(owner, name, dying)
            build(TINY, site, force=True)
        finally:
            os._exit(0)
    return os.waitpid(pid, 0)[1] >> 8


@pytest.mark.parametrize("step, target, when", STEPS, ids=[s[0] for s in STEPS])
def test_a_build_killed_at_any_step_leaves_current_whole_and_the_history_true(tmp_path, step, target, when):
    from generator.history.site import missing_files, releases, was_live
    site = tmp_path / "site"
    build(TINY, site)
    build(TINY, site, force=True)
    before, older = current_release(site), releases(site)[0]
    assert killed_build(site, target, when) == 9
    live = current_release(site)
    assert missing_files(site / RELEASES / live) == 0  # whole, wherever the kill came
    assert was_live(site)[-1] == live  # the journal replays to what is current
    switched = step.startswith(("after the switch", "after the confirmation"))
    assert (live != before) == switched
    listed = riskapi("releases", "--site", site).output
    assert "never live" not in listed.splitlines()[-1] or not switched
    # a rollback goes to the release live before the current one, never to one that never went live
    assert riskapi("rollback", "--site", site).exit_code == 0
    assert current_release(site) == (before if switched else older)
    assert riskapi("build", "--data", TINY, "--site", site, "--force", "-q").exit_code == 0


def test_a_release_rolled_back_from_is_listed_as_such_not_as_never_live(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    build(TINY, site, force=True)
    bad = current_release(site)
    assert riskapi("rollback", "--site", site).exit_code == 0
    line = next(row for row in riskapi("releases", "--site", site).output.splitlines() if bad in row)
    assert "rolled back from" in line and "never live" not in line


# ---- contained failures: the build's own processes ------------------------------------------------------

@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_a_build_under_any_memory_limit_ends_and_leaves_the_live_release(tmp_path):
    """ulimit -v from 100 to 600 MB, 50 MB apart: what fails first differs (a shared library that cannot
    be mapped, a thread's stack, orjson, the write worker, Arrow's allocator, a native allocation that
    aborts), but every build ends — one ran forever at 55–65 MB, waiting for work a dead thread held —
    with exit 0 or an error, and the live release untouched."""
    site = tmp_path / "site"
    build(TINY, site)
    live = current_release(site)
    outcomes = {}
    for megabytes in range(100, 601, 50):
        limit = megabytes * 2 ** 20
        try:
            done = subprocess.run([sys.executable, "-m", "generator.cli", "build", "--data", str(TINY), "--site",
                                   str(site), "--force"], capture_output=True, text=True, timeout=60,
                                  preexec_fn=lambda limit=limit: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the build hung under a limit of {megabytes} MB") from None
        outcomes[megabytes] = done.returncode
        if done.returncode == 1:
            assert "internal error" not in done.stderr, done.stderr  # said as what it is
        if done.returncode != 0:
            assert current_release(site) == live, (megabytes, done.stdout[-1000:], done.stderr[-2000:])
        live = current_release(site)
        assert "Traceback" not in done.stdout
    assert outcomes[600] == 0  # the tiny build needs 400–500 MB of address space (~150 MB of it pyarrow's libraries)
