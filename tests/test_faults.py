"""Faults an operator meets, one promise per test (issue: survive killed builds, broken keys files, …).

Every process here is started by the test and ended by its PID; waits are bounded.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from generator.publish import CURRENT, RELEASES, current_release, releases
from generator.serve.runtime import _children

from .conftest import DEMO_DATA, TINY


def start_build(data: Path, site: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "generator.cli", "build", "--data", str(data), "--site",
                             str(site)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_for(condition, seconds: float = 60.0, what: str = "condition"):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"no {what} within {seconds} s")


def write_worker_of(build: subprocess.Popen, site: Path) -> int:
    """The forked process writing the release, once it writes (a .tmp- release folder with files)."""
    def writing():
        temporary = [p for p in (site / RELEASES).glob(".tmp-*") if any(p.rglob("index.json"))]
        workers = _children(build.pid)
        return next(iter(workers)) if temporary and workers else None
    return wait_for(writing, what="write worker")


def test_a_build_killed_by_sigkill_leaves_no_lock_and_the_next_build_cleans_up(tmp_path):
    site = tmp_path / "site"
    build = start_build(DEMO_DATA, site)
    worker = write_worker_of(build, site)
    build.kill()  # what an OOM kill or a supervisor's SIGKILL does to the build's main process
    build.wait(timeout=30)
    wait_for(lambda: not Path(f"/proc/{worker}").exists() or "Z" in Path(f"/proc/{worker}/stat").read_text()
             .rsplit(")", 1)[1].split()[0], seconds=10, what="end of the orphaned worker")
    # the lock died with its owner: the next build takes the site, publishes, and removes the leftover
    after = subprocess.run([sys.executable, "-m", "generator.cli", "build", "--data", str(TINY), "--site",
                            str(site)], capture_output=True, text=True, timeout=120)
    assert after.returncode == 0, after.stdout + after.stderr
    assert current_release(site) == releases(site)[0]
    assert not list((site / RELEASES).glob(".tmp-*"))


def test_a_killed_write_worker_is_one_clear_error_and_publishes_nothing(tmp_path):
    site = tmp_path / "site"
    build = start_build(DEMO_DATA, site)
    worker = write_worker_of(build, site)
    os.kill(worker, signal.SIGKILL)
    output, _ = build.communicate(timeout=120)
    assert build.returncode == 1, output
    assert "Traceback" not in output
    assert output.strip() == (f"Error: the process writing the release stopped (killed, or out of memory); nothing "
                              f"was published and {site / CURRENT} is as it was")
    assert releases(site) == [] and current_release(site) is None
