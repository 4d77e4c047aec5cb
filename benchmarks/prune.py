"""Prunes under serve: how soon after `riskapi build --keep 1` every pruned release's folder has left the disk,
against the time the same build's switch takes to reach clients (serve's reload: the first answer of the new
release), the floor, in the same run; and what a pruned release's URL answers, polled every 20 ms across it.

`riskapi serve` of the demo data in its own process; each run builds twice more (nothing pruned), then once
with --keep 1. Bounded: `--runs` runs, at most 5,000 polls a run, loopback only.

    python3 -m benchmarks.prune [--runs 3]
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .common import ROOT, fmt, record, summary

POLLS = 5000


def riskapi(*args: object) -> None:
    result = subprocess.run([sys.executable, "-m", "generator.cli", *map(str, args)], capture_output=True, text=True,
                            cwd=ROOT, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-2000:])


class Poller(threading.Thread):
    """On a new connection each 20 ms: the current release, then what `pruned`'s URL answers (one worker both)."""

    def __init__(self, port: int, key: str, pruned: str):
        super().__init__(daemon=True)
        self.port, self.key, self.pruned = port, key, pruned
        self.polls: list[tuple[float, str, int]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        headers = {"Authorization": f"apikey bench:{self.key}"}
        while not self.stop.is_set() and len(self.polls) < POLLS:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            connection.auto_open = 0  # both on one connection, or the poll is dropped (see tests/history/test_prune.py)
            try:
                connection.connect()
                connection.request("GET", "/api/v1/releases/", headers=headers)
                current = json.loads(connection.getresponse().read())["current"]
                connection.request("GET", f"/api/v1/releases/{self.pruned}/", headers=headers)
                answer = connection.getresponse()
                answer.read()
                self.polls.append((time.monotonic(), current, answer.status))
            except (http.client.HTTPException, OSError):
                pass
            finally:
                connection.close()
            self.stop.wait(0.02)


def one_run(site: Path, port: int, key: str) -> tuple[float, float, set, set]:
    """Return the seconds from the build's exit to the new release's first answer and to every pruned folder gone; the
    (current, status) pairs polled before that first answer and after it."""
    from generator.history.leases import pruned_on_disk
    from generator.history.site import current_release, releases
    data = ROOT / "data"
    for _ in range(2):  # --keep 5: the site remembers the last run's --keep 1, and these prune nothing
        riskapi("build", "--data", data, "--site", site, "--force", "--keep", "5", "-q")
    oldest, before = releases(site)[0], current_release(site)
    poller = Poller(port, key, oldest)
    poller.start()
    # the run starts once serve answers what the site holds (its reload onto the builds above is done)
    while sum(1 for _, current, _ in poller.polls if current == before) < 5:
        time.sleep(0.02)
    del poller.polls[:]
    riskapi("build", "--data", data, "--site", site, "--force", "--keep", "1", "-q")
    built, new = time.monotonic(), current_release(site)
    while pruned_on_disk(site):
        time.sleep(0.01)
    gone = time.monotonic()
    deadline = time.monotonic() + 30
    while not any(current == new for _, current, _ in poller.polls) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.5)
    poller.stop.set()
    poller.join(30)
    first = next(i for i, (_, current, _) in enumerate(poller.polls) if current == new)
    shown = {("old" if current == before else "new", status) for _, current, status in poller.polls[:first]}
    after = {("new" if current == new else "old", status) for _, current, status in poller.polls[first:]}
    return poller.polls[first][0] - built, gone - built, shown, after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from generator.serve.keys import add_key
    from tests.live import free_port
    base = Path(tempfile.mkdtemp(prefix="bench-prune-"))
    os.chmod(base, 0o755)
    site, keys, port = base / "site", base / "keys.csv", free_port()
    riskapi("build", "--data", ROOT / "data", "--site", site, "-q")
    key = add_key(keys, "bench").key
    serve = subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--port", str(port), "--site", str(site),
                              "--keys", str(keys)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    firsts, gones, before, after = [], [], set(), set()
    try:
        serve.stdout.readline()  # serving
        for _ in range(args.runs):
            first, gone, shown, later = one_run(site, port, key)
            firsts.append(first)
            gones.append(gone)
            before |= shown
            after |= later
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(30)
        shutil.rmtree(base, ignore_errors=True)
    ratios = summary([g / f for g, f in zip(gones, firsts)])
    lines = [
        f"- demo data under `riskapi serve`: two builds, then `build --keep 1` (every release but the new one and "
        f"the one before it pruned), {args.runs} runs",
        f"- the new release's first answer after the build exited (floor: serve's reload): {fmt(summary(firsts))}",
        f"- every pruned folder gone after the build exited: {fmt(summary(gones))}; against the floor "
        f"{ratios['median']:.2f}× (min {ratios['min']:.2f}, max {ratios['max']:.2f}) (goal: within 5 s)",
        f"- a pruned release's URL polled every 20 ms: before the new release's first answer "
        f"{sorted(before)}, from it on {sorted(after)} (goal: 200, then 410 only)",
    ]
    record("Prunes under serve", f"python3 -m benchmarks.prune --runs {args.runs}", lines)


if __name__ == "__main__":
    main()
