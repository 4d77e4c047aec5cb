"""The live site under real operations: a `riskapi serve` answering while builds, promotes and
rollbacks run back to back. A release a running server answers from is never taken from it (its lease:
generator/history/leases.py), and an instant is answered only within the server's record of what was live
(its horizon: generator/history/catalogue/fence.py), so every answer agrees with the catalogue and never changes.

Load is bounded in count and time; every request goes to the serve on 127.0.0.1."""
from __future__ import annotations

import contextlib
import http.client
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.history.catalogue import read_history, rfc3339
from generator.history.leases import pruned_on_disk
from generator.history.site import current_release, releases, rollback
from generator.publish.build_release import build

from ..conftest import TINY
from ..fault_checks import assert_history_true, then_stage_promote_rollback
from ..live import moved_on, refreshed, serve_process, serving_copy_of, start_server, wait_for

ROUTE = "/api/v1/riskscores/sovereign/"


class Asker:
    """A client of the serve on `port` with `key` (alice's), on a thread: the current route every `every`
    seconds until stopped, each answer's status kept; and `as_of` instants, each answer kept."""

    def __init__(self, port: int, key: str):
        self.port, self.key = port, key
        self.statuses: list[int] = []
        self.instants: dict[int, list[tuple[int, str]]] = {}  # ms → [(status, release or detail)]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def ask(self, path: str) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request("GET", path, headers={"Authorization": f"apikey alice:{self.key}"})
            answer = connection.getresponse()
            return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
        finally:
            connection.close()

    def ask_instant(self, millis: int) -> tuple[int, str]:
        """Return `as_of` at `millis`: (302, the release it redirects to), (410, the release gone), or (404, '')."""
        status, headers, body = self.ask(f"{ROUTE}?as_of={rfc3339(millis)}")
        if status == 302:
            return status, headers["location"].split("/releases/")[1].split("/")[0]
        if status == 410:
            return status, orjson.loads(body)["detail"].split()[1].rstrip(",")
        return status, ""

    def _run(self) -> None:
        asked = 0
        while not self._stop.is_set():
            self.statuses.append(self.ask(ROUTE)[0])
            asked += 1
            if asked % 2 == 0:  # an instant just before now (0.5 to 3 s), as a client asking about "just now"
                millis = int(time.time() * 1000) - (500, 1000, 2000, 3000)[asked // 2 % 4]
                self.instants.setdefault(millis, []).append(self.ask_instant(millis))
            self._stop.wait(0.05)

    def __enter__(self) -> Asker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)


def live_at(site: Path, millis: int) -> str | None:
    """Return the release the catalogue says was live at `millis`."""
    found = None
    for period in read_history(site).periods:
        if period.start <= millis:
            found = period.release
    return found


def check_instants(site: Path, asker: Asker) -> int:
    """Check that every instant answered agrees with the catalogue, and asked again answers the same (410 once its
    release was pruned); returns how many were answered."""
    history = read_history(site)
    answered = 0
    for millis, answers in sorted(asker.instants.items()):
        for status, release in answers:
            assert status in (302, 404, 410), (rfc3339(millis), status)
            if status == 404:  # past the server's record then: not answered
                continue
            answered += 1
            assert release == live_at(site, millis), (rfc3339(millis), release, live_at(site, millis))
            again = asker.ask_instant(millis)
            assert again == (status, release) or (again == (410, release) and release in history.removed), \
                (rfc3339(millis), (status, release), again)
    return answered


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_back_to_back_builds_never_take_the_release_serve_answers_from(place):
    """30 builds back to back (20 keeping 2, then 10 keeping 1) under a running serve: every answer of the
    current route is a 200, from a release nginx still has on disk."""
    site, keys = place / "site", place / "keys.csv"
    build(TINY, site)
    with serve_process(site, keys) as serve, Asker(serve.port, serve.key) as asker:
        for count in range(30):
            built = CliRunner().invoke(main, ["build", "--data", str(TINY), "--site", str(site), "--force", "-q",
                                              "--keep", "2" if count < 20 else "1"])
            assert built.exit_code == 0, built.output
        wait_for(lambda: len(asker.statuses) > 40, what="answers of the current route")
        assert asker.statuses and set(asker.statuses) == {200}, sorted(set(asker.statuses))
        assert check_instants(site, asker) > 0
    # the serve is gone: its lease holds nothing, and the next build prunes down to what is kept
    build(TINY, site, force=True, keep=1)
    assert len(releases(site)) == 2 and not list((site / "leases").glob("*.json"))
    then_stage_promote_rollback(site)


STORM = """
import sys, time
from click.testing import CliRunner
from generator.cli import main
site, data, role, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    if role == "build":
        CliRunner().invoke(main, ["build", "--data", data, "--site", site, "--force", "-q", "--keep", "2"])
    elif role == "stage":
        out = CliRunner().invoke(main, ["build", "--data", data, "--site", site, "--force", "--stage", "--keep", "2"])
        if out.exit_code == 0 and "staged release " in out.output:
            CliRunner().invoke(main, ["promote", out.output.split("staged release ")[1].split(":")[0],
                                      "--site", site, "--accept-changes"])
    else:  # a rollback, then the releases read back (what an operator does between two)
        CliRunner().invoke(main, ["rollback", "--site", site])
        CliRunner().invoke(main, ["releases", "--site", site])
"""


@pytest.mark.slow
def test_a_storm_of_builds_promotes_and_rollbacks_answers_every_instant_as_the_catalogue_says(place):
    """Three shells building, staging and promoting, and rolling back for 40 s under a running serve that is
    slow to reload (each shell refused the site's lock now and then, as operators are): the current route
    always answers 200; every `as_of` instant answered names the release the catalogue says was live then,
    and again after the storm (or 410, once pruned); no pruned folder stays on disk."""
    site, keys = place / "site", place / "keys.csv"
    build(TINY, site)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    with serve_process(site, keys) as serve, Asker(serve.port, serve.key) as asker:
        shells = [subprocess.Popen([sys.executable, "-c", STORM, str(site), str(TINY), role, "40"], env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                  for role in ("build", "stage", "rollback")]
        try:
            # serve slow to reload, as on a loaded machine: its loop paused 2 s in every 3 (nginx answers on
            # from the configuration it has), so switches wait for it while instants after them are asked
            while any(shell.poll() is None for shell in shells):
                os.kill(serve.process.pid, signal.SIGSTOP)
                _while_the_shells_run(shells, 2)
                os.kill(serve.process.pid, signal.SIGCONT)
                _while_the_shells_run(shells, 1)
            for shell in shells:
                assert shell.wait(timeout=180) == 0, shell.stderr.read().decode()[-2000:] if shell.stderr else ""
        finally:
            os.kill(serve.process.pid, signal.SIGCONT)
            for shell in shells:
                if shell.poll() is None:
                    shell.kill()
                    shell.wait()
        switches = len(read_history(site).switches)
        assert switches > 10, switches  # the storm switched, often
        assert asker.statuses and set(asker.statuses) == {200}, sorted(set(asker.statuses))
        assert check_instants(site, asker) > 20
        # serve moved on from every release the storm pruned, and deleted each folder as it let go of it
        wait_for(lambda: not pruned_on_disk(site), seconds=60, what="every pruned folder deleted")
    assert_history_true(site)
    then_stage_promote_rollback(site)


def test_an_instant_past_the_record_is_not_answered_until_the_record_reaches_it(tmp_path):
    """After a switch, nginx's record ends where the catalogue was last read (a fence before it): an instant
    after that, though past, is a 404 with Retry-After until the record is moved on (serve does it each
    poll), then the new release; an instant in the future is a 404 without Retry-After."""
    with serving_copy_of(TINY, tmp_path) as server:
        first = current_release(server.site)
        moved_on(server)  # the record past the first release's instant
        second = build(server.data, server.site, force=True).release
        server.runtime.refresh()  # as serve's loop does: reloaded, its record read before the switch's instant
        switched = [p.start for p in read_history(server.site).periods if p.release == second][0]
        asked = max(switched + 1, int(time.time() * 1000))  # after the refresh's fence and the switch
        wait_for(lambda: time.time() * 1000 > asked, what="the instant asked passing")
        behind = server.get(f"{ROUTE}?as_of={rfc3339(asked)}", user="bob")
        assert (behind.status, behind.header("retry-after")) == (404, "1"), behind.body
        assert b"No release is known here at" in behind.body
        started = [p.start for p in read_history(server.site).periods if p.release == first][0]
        assert server.get(f"{ROUTE}?as_of={rfc3339(started)}", user="bob").header("location") == \
            f"/api/v1/releases/{first}{ROUTE.removeprefix('/api/v1')}"  # within the record: answered
        server.runtime.advance_horizon()  # the catalogue holds nothing nginx lacks: the record reaches now
        assert server.get(f"{ROUTE}?as_of={rfc3339(asked)}", user="bob").header("location") == \
            f"/api/v1/releases/{second}{ROUTE.removeprefix('/api/v1')}"
        future = server.get(f"{ROUTE}?as_of={rfc3339(int(time.time() * 1000) + 3_600_000)}", user="bob")
        assert future.status == 404 and future.header("retry-after") is None
        # a switch the record does not hold yet stops it: a rollback, not yet served, is not passed over
        rollback(server.site)
        server.runtime.advance_horizon()
        assert server.get(f"{ROUTE}?as_of={rfc3339(int(time.time() * 1000))}", user="bob").status == 404
        then_stage_promote_rollback(server.site)


@pytest.mark.parametrize("kind", ["workerd", "cloudfront"])
def test_an_edge_answers_up_to_its_last_deploy_s_record_and_a_redeploy_moves_it_on(tmp_path, kind, request):
    """An edge's table holds the live periods up to the newest switch; the bucket's record (record.json,
    each deploy s3's fence) moves its horizon on without new edge code: an instant after the switch is a
    404 until a deploy made after it, then the live release."""
    with serving_copy_of(TINY, tmp_path) as server:
        moved_on(server)
        started = read_history(server.site).periods[-1].start
        edge = start_server(kind, server, request)
        try:
            later = int(time.time() * 1000) + 500  # after the deploy's fence: past its record
            wait_for(lambda: time.time() * 1000 > later + 1000, what="an instant after the switch passing")
            assert edge.get(f"{ROUTE}?as_of={rfc3339(later)}", user="bob").status == 404  # deployed before it
            assert edge.get(f"{ROUTE}?as_of={rfc3339(started)}", user="bob").status == 302  # within the record
            edge = refreshed(edge)  # deployed again: nothing new but the record
            moved = edge.get(f"{ROUTE}?as_of={rfc3339(later)}", user="bob")
            assert moved.status == 302 and current_release(server.site) in moved.header("location")
        finally:
            edge.runtime.stop()


def _while_the_shells_run(shells: list[subprocess.Popen], seconds: float) -> None:
    """Wait `seconds`, or less if the shells have all ended."""
    with contextlib.suppress(AssertionError):
        wait_for(lambda: all(shell.poll() is not None for shell in shells), seconds, "shells ended", every=0.1)
