"""The history under real operations: a catalogue from another site or an older backup, a backup
tool holding the catalogue's lock, prunes under a running `riskapi serve`, Memento clients asking a TimeGate
back at the datetime a TimeMap gave them, request data echoed into headers, and the obsolete HTTP-date
forms. Each fault is checked right after it and again after the next build, promote and rollback."""
from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import threading
import time

import pytest

from generator.history.catalogue import CATALOGUE, Catalogue, catalogue_path, now_ms, read_history
from generator.history.leases import pruned_on_disk
from generator.history.site import current_release, releases, rollback
from generator.publish.build_release import build
from generator.publish.promote import promote

from ..conftest import TINY, riskapi
from ..fault_checks import assert_history_true, then_stage_promote_rollback, without_the_log_copy
from ..live import moved_on, serve_process, served_on, serving_copy_of, wait_for

# ---- a catalogue that is not the site's: refused by every command, nothing pruned on its word ------------

@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_a_catalogue_from_another_site_or_an_older_backup_is_refused_and_prunes_nothing(tmp_path):
    site = tmp_path / "a"
    ours = [build(TINY, site, force=True).release for _ in range(3)]
    backup = tmp_path / "backup.db"
    shutil.copy(catalogue_path(site), backup)  # the catalogue as it was at the third release
    ours.append(build(TINY, site, force=True).release)
    clone = tmp_path / "b"
    shutil.copytree(site, clone, symlinks=True)  # a copy of the whole site (the same id), which then goes its own way
    for _ in range(3):
        build(TINY, clone, force=True, keep=2)  # prunes, in its copy, the first releases of ours
    other = tmp_path / "c"
    build(TINY, other)  # another site altogether
    for source, said in ((catalogue_path(clone), "does not match this site"),
                         (backup, "does not match this site"),  # an older backup of our own
                         (catalogue_path(other), "is not this site's")):
        for suffix in ("-wal", "-shm"):
            (site / f"{CATALOGUE}{suffix}").unlink(missing_ok=True)
        shutil.copy(source, catalogue_path(site))
        for command in (["releases"], ["build", "--data", TINY], ["build", "--data", TINY, "--force"],
                        ["rollback"], ["status"]):
            result = riskapi(*command, "--site", site)
            assert said in result.output and "riskapi releases --repair" in result.output, (command, result.output)
            assert result.exit_code == (0 if command == ["status"] else 1), (command, result.output)
            assert "internal error" not in result.output
        assert releases(site) == ours and current_release(site) == ours[-1]  # nothing deleted, nothing switched
    without_the_log_copy(site)  # the folders alone (the log's copy, had it been there, holds every instant)
    repaired = riskapi("releases", "--repair", "--site", site)
    assert repaired.exit_code == 0 and f"4 live period(s) recovered ({', '.join(ours)})" in repaired.output
    assert [p.release for p in read_history(site).periods] == ours
    assert_history_true(site)
    then_stage_promote_rollback(site)
    assert set(ours) <= set(releases(site))


def test_a_site_and_catalogue_from_before_site_ids_are_given_one(tmp_path):
    site = tmp_path / "site"
    first = build(TINY, site).release
    (site / "site-id").unlink()
    with sqlite3.connect(catalogue_path(site)) as db:
        db.execute("DELETE FROM setting WHERE name = 'site-id'")
    assert riskapi("releases", "--site", site).exit_code == 0
    given = (site / "site-id").read_text().strip()
    with sqlite3.connect(catalogue_path(site)) as db:
        assert db.execute("SELECT value FROM setting WHERE name = 'site-id'").fetchone() == (given,)
    assert re.fullmatch(r"[0-9a-f]{32}", given)
    second = build(TINY, site, force=True).release
    assert [p.release for p in read_history(site).periods] == [first, second]
    then_stage_promote_rollback(site)


# ---- a wait for the catalogue's lock never back-dates a switch -------------------------------------------

def test_a_switch_waiting_for_the_catalogue_s_lock_is_dated_after_the_wait(tmp_path, monkeypatch):
    site = tmp_path / "site"
    first = build(TINY, site).release
    second = build(TINY, site, force=True).release
    waiting = threading.Event()
    original = Catalogue.transaction

    def transaction(self):
        if threading.current_thread().name == "rollback":
            waiting.set()
        return original(self)
    monkeypatch.setattr(Catalogue, "transaction", transaction)
    holder = sqlite3.connect(catalogue_path(site), isolation_level=None)  # a backup tool, say
    holder.execute("BEGIN IMMEDIATE")
    done = []
    worker = threading.Thread(target=lambda: done.append(rollback(site)), name="rollback")
    worker.start()
    try:
        assert waiting.wait(60), "the rollback never reached the catalogue"
        time.sleep(1.5)  # the lock held a while: a clock read before it would be 1.5 s early
        released = now_ms()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    worker.join(60)
    assert done == [first] and current_release(site) == first
    switched = read_history(site).switches[-1]
    assert switched.release == first and switched.clock >= released and switched.at > released
    assert switched.at % 1000 == 0  # whole seconds, as HTTP-dates carry them
    assert [p.release for p in read_history(site).periods] == [first, second, first]
    assert_history_true(site)
    then_stage_promote_rollback(site)


# ---- prunes under a running serve ------------------------------------------------------------------------

@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_back_to_back_prunes_never_stop_a_running_serve(place):
    site = place / "site"
    build(TINY, site)
    with serve_process(site, place / "keys.csv") as serve:
        for _ in range(12):  # each prunes what serve may be rendering its configuration from
            assert riskapi("build", "--data", TINY, "--site", site, "--force", "--keep", "2", "-q").exit_code == 0
            assert serve.process.poll() is None, "serve stopped"
        # serve lets go of each pruned release once it has moved on, and deletes it then: none stays on disk
        wait_for(lambda: not pruned_on_disk(site), seconds=30, what="every pruned folder deleted")
        assert set(releases(site)) == set(read_history(site).ever_live) - read_history(site).removed
        then_stage_promote_rollback(site)
        live = current_release(site)
        # the list and a document of the current release, each from a fresh connection: around a reload a
        # new connection may still reach an old worker (nginx's graceful reload), so both are waited for
        wait_for(lambda: json.loads(serve.get("/api/v1/releases/")[1]).get("current") == live, seconds=30,
                 what="serve answering the current release")
        wait_for(lambda: serve.get("/api/v1/riskscores/sovereign/")[0] == 200, seconds=30,
                 what="serve answering the current release's documents")
        assert serve.process.poll() is None
    assert "Traceback" not in serve.said and "internal error" not in serve.said, serve.said


# ---- Memento: every memento of every TimeMap, asked back at its own datetime ------------------------------

@pytest.fixture(scope="module", params=["nginx", "workerd"])
def switched(request, tmp_path_factory):
    """Yield a site with five switches (publishes, a rollback, a staged release promoted), served by nginx or
    deployed to the Worker (workerd)."""
    with serving_copy_of(TINY, tmp_path_factory.mktemp("memento")) as server:
        build(server.data, server.site, force=True)
        build(server.data, server.site, force=True)
        rollback(server.site)
        staged = build(server.data, server.site, force=True, stage=True).release
        promote(server.site, staged)
        moved_on(server)
        with served_on(request.param, server, request) as edge:
            edge.kind = request.param
            yield edge


LINK = re.compile(r'<(?P<uri>[^>]*)>; rel="(?P<rel>[^"]*)"(?:; datetime="(?P<datetime>[^"]*)")?')


def mementos(body: str) -> list[tuple[str, str]]:
    """Return a TimeMap's mementos: (path, datetime) each."""
    found = []
    for link in LINK.finditer(body):
        if "memento" in link["rel"].split():
            found.append((re.sub(r"^https?://[^/]+", "", link["uri"]), link["datetime"]))
    return found


def test_every_memento_is_answered_at_its_own_datetime(switched):
    server = switched
    timemaps = ["/api/v1/releases/timemap"] + [
        f"/api/v1/timemap/http://127.0.0.1:8080{path}" for path in
        ("/api/v1/riskscores/sovereign/", "/api/v1/riskscores/sovereign/?ordering=-country_name", "/api/v1/riskscores/sovereign/NGA/")]
    asked = 0
    for timemap in timemaps:
        answer = server.get(timemap, user="bob")
        assert answer.status == 200, (timemap, answer.body)
        listed = mementos(answer.body.decode())
        assert len(listed) >= 3, (timemap, answer.body)
        # the list's TimeMap is of the release document, its own TimeGate (rel="original timegate")
        original = "/api/v1/releases/current/" if timemap.endswith("/releases/timemap") else timemap.split("8080", 1)[1]
        for memento, datetime in listed:
            gate = server.get(original, user="bob", headers={"Accept-Datetime": datetime})
            assert gate.status == 302 and gate.header("location") == memento, (original, datetime, gate.body)
            asked += 1
    assert asked >= 12
    # the instants the list of releases writes, asked back with ?as_of=
    for release in json.loads(server.get("/api/v1/releases/", user="bob").body)["releases"]:
        for period in release["livePeriods"]:
            gate = server.get(f"/api/v1/riskscores/sovereign/?as_of={period['from']}", user="bob")
            assert gate.header("location") == f"/api/v1/releases/{release['id']}/riskscores/sovereign/", period


@pytest.mark.parametrize("form", ["IMF-fixdate", "rfc850-date", "asctime-date"])
def test_accept_datetime_is_read_in_every_form_http_allows(switched, form):
    server = switched
    first = json.loads(server.get("/api/v1/releases/", user="bob").body)["releases"][-1]
    start = time.strptime(first["livePeriods"][0]["from"], "%Y-%m-%dT%H:%M:%SZ")
    written = {"IMF-fixdate": time.strftime("%a, %d %b %Y %H:%M:%S GMT", start),
               "rfc850-date": time.strftime("%A, %d-%b-%y %H:%M:%S GMT", start),
               "asctime-date": time.strftime("%a %b ", start) + f"{start.tm_mday:2d}" + time.strftime(" %H:%M:%S %Y", start)}
    gate = server.get("/api/v1/riskscores/sovereign/", user="bob", headers={"Accept-Datetime": written[form]})
    assert gate.status == 302, (written[form], gate.body)
    assert gate.header("location") == f"/api/v1/releases/{first['id']}/riskscores/sovereign/"


# ---- request data echoed into headers and link-format bodies ---------------------------------------------

INJECTION = '?x=>;rel="memento",<http://evil.example/>'


def test_a_query_cannot_add_a_link(switched):
    server = switched
    for path, headers in (("/api/v1/riskscores/sovereign/", {}),
                          ("/api/v1/riskscores/sovereign/", {"Accept-Datetime": "Sun, 01 Mar 2099 00:00:00 GMT"}),
                          ("/api/v1/timemap/http://127.0.0.1:8080/api/v1/riskscores/sovereign/", {})):
        answer = server.get(path + INJECTION, user="bob", headers=headers)
        assert "<http://evil.example/>" not in (answer.header("link") or "") + answer.body.decode("utf-8", "replace")
        assert "<http://evil.example/>" not in (answer.header("location") or "")
        if server.kind == "nginx":  # nginx refuses a request-target no URI may be: the JSON 400
            assert answer.status == 400 and json.loads(answer.body)["detail"].startswith("Bad request")
        for link in LINK.finditer(answer.header("link") or ""):
            assert link["uri"].startswith("http://127.0.0.1:8080/"), answer.header("link")


def test_the_encoder_of_echoed_request_data():
    # uriOf (serve/edge/keycheck.js), run in Node: what a URI may hold stays, escapes as sent stay, anything else
    # is percent-encoded as UTF-8 (">" %3E, '"' %22, "<" %3C, " " %20, "ü" %C3%BC, a stray "%" %25)
    script = ("import { uriOf } from './generator/serve/edge/keycheck.js';"
              "console.log(JSON.stringify([uriOf(process.argv[1], true), uriOf(process.argv[2], false)]));")
    printed = subprocess.run(["node", "--input-type=module", "-e", script, 'x=>;rel="m",<h>&a=%41%zz ü',
                              "/a b/100%?#"], capture_output=True, text=True, check=True).stdout
    assert json.loads(printed) == ["x=%3E;rel=%22m%22,%3Ch%3E&a=%41%25zz%20%C3%BC", "/a%20b/100%25%3F%23"]

