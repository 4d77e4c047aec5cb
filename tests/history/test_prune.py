"""A prune that finishes (generator/history/retention.py, leases.py): a switch and the prune it implies are one
catalogue transaction, a running serve moves to both in one reload, and a pruned folder leaves the disk as soon
as the last lease holding it lets go — serve after its reload, a deploy when it ends — not at some later build.
An operator out of disk frees it with `riskapi releases --prune`, which builds nothing."""
from __future__ import annotations

import http.client
import json
import threading

import pytest

from generator.history.catalogue import read_history
from generator.history.leases import GONE, Holder, pruned_on_disk
from generator.history.site import RELEASES, current_release, releases
from generator.publish.build_release import build

from ..conftest import TINY, riskapi
from ..fault_checks import assert_history_true, then_stage_promote_rollback
from ..live import serve_process, wait_for
from ..serve.test_error_edge import AS_ROOT, fill, small_filesystem


def pruned_folders(site) -> set[str]:
    """Return the releases the catalogue says are pruned whose folders are still on disk."""
    return set(pruned_on_disk(site))


# ---- under a running serve ---------------------------------------------------------------------------------

class Poller(threading.Thread):
    """Every 20 ms, on one new connection a poll (so one nginx worker answers both): which release is current,
    then what a pruned release's URL answers. Bounded: it stops when told, or after `limit` polls."""

    def __init__(self, port: int, key: str, pruned: str, limit: int = 3000):
        super().__init__(daemon=True)
        self.port, self.key, self.pruned, self.limit = port, key, pruned, limit
        self.polls: list[tuple[str, int]] = []  # (the current release, the pruned URL's status), in order
        self.stop = threading.Event()

    def ask(self, connection: http.client.HTTPConnection, path: str) -> tuple[int, bytes]:
        connection.request("GET", path, headers={"Authorization": f"apikey alice:{self.key}"})
        answer = connection.getresponse()
        return answer.status, answer.read()

    def run(self) -> None:
        while not self.stop.is_set() and len(self.polls) < self.limit:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            # never opened again: an old worker closes its connection at a reload, and http.client would send
            # the second request on a new one, to a new worker — a pair of two configurations; dropped
            connection.auto_open = 0
            try:
                connection.connect()
                status, body = self.ask(connection, "/api/v1/releases/")
                assert status == 200, body
                current = json.loads(body)["current"]
                status, _ = self.ask(connection, f"/api/v1/releases/{self.pruned}/")
                self.polls.append((current, status))
            except (http.client.HTTPException, OSError):
                pass
            finally:
                connection.close()
            self.stop.wait(0.02)


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_a_pruned_release_answers_200_until_the_switch_then_410_only_and_its_folder_goes(place):
    site = place / "site"
    built = [build(TINY, site, force=True).release for _ in range(3)]
    oldest = built[0]
    with serve_process(site, place / "keys.csv") as serve:
        poller = Poller(serve.port, serve.key, oldest)
        poller.start()
        try:
            wait_for(lambda: len(poller.polls) >= 5, seconds=30, what="the first polls")
            assert riskapi("build", "--data", TINY, "--site", site, "--force", "--keep", "1", "-q").exit_code == 0
            new = current_release(site)
            assert oldest in read_history(site).removed
            # every pruned folder gone once serve has moved on: no later build needed
            wait_for(lambda: not pruned_folders(site), seconds=30, what="every pruned folder deleted")
            wait_for(lambda: [current for current, _ in poller.polls[-10:]] == [new] * 10, seconds=30,
                     what="ten polls in a row answered by the new release")
        finally:
            poller.stop.set()
            poller.join(30)
    polls = poller.polls
    # the release live before answers it 200, the new one 410: never 200 (served on) nor 404 (never
    # existed). For the moments of a reload nginx's old and new workers both accept (the new start before
    # the old stop), so an old worker may answer once more after a new one has: each answer is its own
    # configuration's, and after the old workers' last answer only the new release answers.
    assert polls[0] == (built[-1], 200) and all(poll in ((built[-1], 200), (new, 410)) for poll in polls), polls
    last_old = max(i for i, (current, _) in enumerate(polls) if current == built[-1])
    assert len(polls) - last_old - 1 >= 10 and all(poll == (new, 410) for poll in polls[last_old + 1:]), polls
    assert not (site / RELEASES / oldest).exists() and releases(site) == built[-1:] + [new]
    assert "pruned: answered 410" in riskapi("releases", "--site", site).output
    then_stage_promote_rollback(site)
    assert not pruned_folders(site)


def test_status_names_the_lease_that_keeps_a_pruned_folder_and_it_goes_when_let_go(tmp_path):
    site = tmp_path / "site"
    first, _, _ = [build(TINY, site, force=True).release for _ in range(3)]
    holder = Holder(site, "a test server", "test")
    with holder.extending() as hold:
        hold([first])
    built = build(TINY, site, force=True, keep=1)
    assert built.held == (first,) and pruned_folders(site) == {first}
    status = riskapi("status", "--site", site).output
    assert (f"pruned: the folder of {first} stays while a test server (pid {holder.pid}) answers from it: deleted "
            "once it has moved on") in status.splitlines()
    assert "pruned: answered 410; its folder stays while a test server answers from it" in \
        riskapi("releases", "--site", site).output
    holder.hold_only([])
    assert not pruned_folders(site) and "pruned: the folder" not in riskapi("status", "--site", site).output
    holder.release()
    then_stage_promote_rollback(site)


def test_a_sweep_killed_mid_delete_is_finished_by_the_next_one(tmp_path):
    site = tmp_path / "site"
    first = [build(TINY, site, force=True).release for _ in range(3)][0]
    holder = Holder(site, "a test server", "test")
    with holder.extending() as hold:
        hold([first])
    build(TINY, site, force=True, keep=1)
    # what a sweep killed after its rename leaves: the folder out of sight, half deleted
    (site / RELEASES / first).rename(site / RELEASES / f"{GONE}{first}")
    (site / RELEASES / f"{GONE}{first}" / "manifest.json").unlink()
    assert first not in releases(site)  # never on offer
    holder.release()  # the next sweep
    assert not list((site / RELEASES).glob(f"{GONE}*"))
    build(TINY, site, force=True, keep=1)
    then_stage_promote_rollback(site)
    assert_history_true(site)


# ---- freeing disk without a build -----------------------------------------------------------------------------

def test_releases_prune_applies_the_retention_without_building(tmp_path):
    site = tmp_path / "site"
    built = [build(TINY, site, force=True).release for _ in range(4)]  # keep 5 (the default): none pruned
    (site / RELEASES / ".tmp-20200101T000000Z").mkdir()  # what a killed build left
    result = riskapi("releases", "--site", site, "--prune", "--keep", "1")
    assert result.exit_code == 0, result.output
    # keep 1: the current one and the one a rollback goes to stay; the two oldest go
    assert result.output.splitlines()[0].startswith(f"pruned {built[0]}, {built[1]} (kept the newest 1 and every "
                                                    "one the retention keeps); freed ")
    assert releases(site) == built[2:] and current_release(site) == built[-1]  # nothing built, nothing switched
    assert read_history(site).removed == set(built[:2]) and not pruned_folders(site)
    assert not list((site / RELEASES).glob(".tmp-*"))
    assert riskapi("releases", "--site", site, "--prune").output.startswith("nothing more to prune")
    assert riskapi("releases", "--site", site, "--keep", "1").exit_code == 2  # --keep goes with --prune
    then_stage_promote_rollback(site)


def test_an_operator_out_of_disk_frees_it_with_releases_prune(tmp_path):
    if not AS_ROOT:
        pytest.skip("filling a disk needs root, to mount a small file system (CI runs as root)")
    with small_filesystem(tmp_path / "disk", "8m") as disk:
        site = disk / "site"
        data = tmp_path / "data"
        import shutil
        shutil.copytree(TINY, data)
        built = []
        for n in range(3):  # each release's documents differ (its data does), so no two share their files
            rows = (data / "countries.csv").read_text()
            (data / "countries.csv").write_text(rows.replace("Austria", f"Austria{'!' * n}", 1))
            built.append(build(data, site, force=True, guard=None).release)
        fill(disk)
        assert riskapi("build", "--data", data, "--site", site, "--force").exit_code == 1  # no space to build
        result = riskapi("releases", "--site", site, "--prune", "--keep", "1")
        assert result.exit_code == 0, result.output
        freed = float(result.output.split("freed ")[1].split(" MB")[0])
        assert freed > 0 and releases(site) == built[1:]
        (disk / "filler").unlink()
        then_stage_promote_rollback(site)


def test_an_answer_in_flight_keeps_its_pruned_folder_until_it_ends_then_the_folder_goes(tmp_path):
    import hashlib
    import socket

    from ..live import serving_copy_of
    with serving_copy_of(TINY, tmp_path) as server:
        site = server.site
        first = current_release(site)
        for _ in range(2):
            build(server.data, site, force=True)
        server.runtime.refresh()
        path = "api/v1/exports/scores.csv"
        whole = (site / RELEASES / first / path).read_bytes()
        # a client that has sent half its request for the first release's export (a slow client): the worker
        # that took it is one of the configuration before the prune, and it stays until the request ends
        client = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        client.sendall(f"GET /api/v1/releases/{first}/exports/scores.csv HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       f"Authorization: apikey bob:{server.keys['bob']}\r\nConnection: close\r\n".encode())
        build(server.data, site, force=True, keep=1)
        assert first in read_history(site).removed
        # the reload's wait for the old worker ends (1 s here): nginx answers from the new configuration...
        assert server.runtime.reload(timeout=1.0)
        assert server.get(f"/api/v1/releases/{first}/", user="bob").status == 410
        # ...but the old worker still answers the slow client from the pruned folder: kept for it
        assert server.runtime.refresh() is False and first in pruned_folders(site)
        client.sendall(b"\r\n")
        answer = b""
        while chunk := client.recv(1 << 16):
            answer += chunk
        client.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and hashlib.sha256(body).digest() == hashlib.sha256(whole).digest()
        # the old worker gone, serve's next look lets go of the folder and deletes it, no build needed
        wait_for(lambda: server.runtime.refresh() is False and not pruned_folders(site), seconds=30,
                 what="the pruned folder deleted once the old worker ended")
        assert first not in releases(site) and not list((site / RELEASES).glob(f"{GONE}*"))
        then_stage_promote_rollback(site, server.data)


def test_a_history_that_fails_as_serve_reads_it_is_read_once_more_at_the_next_poll(tmp_path, monkeypatch):
    from ..live import serving_copy_of
    with serving_copy_of(TINY, tmp_path) as server:
        runtime, first = server.runtime, current_release(server.site)
        real, failures = runtime._render_releases, [1]

        def vanishing(release, keys):  # a release folder that went as it was read (a prune), `failures` times
            if failures[0]:
                failures[0] -= 1
                raise FileNotFoundError(2, "No such file or directory", str(server.site / RELEASES / "gone"))
            return real(release, keys)
        monkeypatch.setattr(runtime, "_render_releases", vanishing)
        second = build(server.data, server.site, force=True).release
        runtime.refresh()  # the configuration before goes on (with the keys as they are now)
        assert runtime.served_release == first
        assert runtime.refresh() and runtime.served_release == second  # the next poll reads it again: served
        failures[0] = 2  # a failure that stays
        third = build(server.data, server.site, force=True).release
        runtime.refresh()
        runtime.refresh()  # tried once more at the next poll: failed again
        assert runtime.served_release == second and failures == [0]
        assert runtime.refresh() is False and runtime.served_release == second  # not again and again
        fourth = build(server.data, server.site, force=True).release  # a change: read again, and served
        assert runtime.refresh() and runtime.served_release == fourth != third
        assert json.loads(server.get("/api/v1/releases/", user="bob").body)["current"] == fourth
        then_stage_promote_rollback(server.site, server.data)
