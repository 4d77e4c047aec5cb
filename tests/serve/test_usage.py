"""`riskapi usage` against a real nginx's access log: known requests, counted exactly per user, route
and day, with the bytes nginx sent; rotated and gzipped logs too; never a key."""
import datetime
import gzip
import json
import shutil

import pytest
from click.testing import CliRunner

from generator.cli import main

from ..conftest import TINY
from ..live import digest_of, start_edge_server, start_live_server
from ..waiting import wait_for

DOCUMENT = "/api/v1/riskscores/sovereign/AUT/"
EXPORT = "/api/v1/exports/scores.jsonl"


@pytest.fixture(scope="module")
def asked_and_logged():
    """Yield a server of its own (other tests' requests would be in a shared one's log) and what was asked."""
    server = start_live_server(TINY)
    try:
        answers = {"alice": [server.get(DOCUMENT) for _ in range(3)] + [server.get("/api/v1/riskscores/nosuch/")],
                   "bob": [server.get(EXPORT, user="bob") for _ in range(2)],
                   "-": [server.get(DOCUMENT, user=None)]}
        log = server.runtime.prefix / "logs" / "access.log"
        # the log is written every second (buffer=64k flush=1s)
        wait_for(lambda: log.exists() and log.read_text().count("\n") >= 7, 10, "seven lines logged", every=0.1)
        yield server, answers, log
    finally:
        server.runtime.stop()
        shutil.rmtree(server.base, ignore_errors=True)


def usage(*args) -> list[dict]:
    result = CliRunner().invoke(main, ["usage", "--format", "json", *map(str, args)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_each_user_s_requests_bytes_and_statuses(asked_and_logged):
    server, answers, log = asked_and_logged
    # alice: 3 documents (200) and an unknown model (404); bob: the export twice; no key: one 403
    expected = [{"user": user, "requests": len(got), "bytes": sum(len(a.body) for a in got),
                 "2xx": sum(a.status == 200 for a in got), "3xx": 0, "4xx": sum(a.status >= 400 for a in got),
                 "5xx": 0} for user, got in sorted(answers.items())]
    assert [a.status for a in answers["alice"]] == [200, 200, 200, 404] and answers["-"][0].status == 403
    assert usage("--log", log) == expected
    assert server.keys["alice"] not in log.read_text()  # the log names users, never keys


def test_by_route_and_by_day(asked_and_logged):
    _, answers, log = asked_and_logged
    routes = {row["route"]: row["requests"] for row in usage("--log", log, "--by", "route")}
    assert routes == {"/api/v1/riskscores/{model}/{country_code}/": 4, "/api/v1/riskscores/{model}/": 1,
                      "/api/v1/exports/scores.{format}": 2}
    server = asked_and_logged[0]  # by key: each user's key by its short id (the start of its digest), never the key
    ids = {user: digest_of(server.keys_file, key)[:8] for user, key in server.keys.items()}
    by_key = {row["key"]: row["requests"] for row in usage("--log", log, "--by", "key")}
    assert by_key == {f"alice {ids['alice']}": 4, f"bob {ids['bob']}": 2, "- -": 1}
    today = datetime.datetime.now(datetime.timezone.utc).date()
    assert usage("--log", log, "--by", "day") == [{"day": today.isoformat(), "requests": 7,
                                                   "bytes": sum(len(a.body) for got in answers.values() for a in got),
                                                   "2xx": 5, "3xx": 0, "4xx": 2, "5xx": 0}]
    tomorrow = (today + datetime.timedelta(days=1)).isoformat()
    assert usage("--log", log, "--since", tomorrow) == []


def test_the_running_serve_s_log_and_its_rotations_are_found(asked_and_logged, tmp_path):
    server, _, log = asked_and_logged
    once = {row["user"]: row["requests"] for row in usage("--site", server.site)}
    assert once == {"-": 1, "alice": 4, "bob": 2}
    rotated = log.with_name("access.log.1.gz")  # as logrotate leaves it: the same requests again
    rotated.write_bytes(gzip.compress(log.read_bytes()))
    try:
        twice = {row["user"]: row["requests"] for row in usage("--site", server.site)}
    finally:
        rotated.unlink()
    assert twice == {"-": 2, "alice": 8, "bob": 4}


def test_csv_and_table(asked_and_logged):
    _, _, log = asked_and_logged
    result = CliRunner().invoke(main, ["usage", "--log", str(log), "--format", "csv"])
    assert result.stdout.splitlines()[0] == "user,requests,bytes,2xx,3xx,4xx,5xx"
    assert result.stdout.splitlines()[1].startswith("-,1,")
    table = CliRunner().invoke(main, ["usage", "--log", str(log)]).stdout.splitlines()
    assert table[0].split() == ["user", "requests", "bytes", "2xx", "3xx", "4xx", "5xx"]
    assert table[2].split()[:2] == ["alice", "4"]


@pytest.mark.slow  # workerd
def test_the_worker_s_usage_lines_count_the_same(asked_and_logged, tmp_path):
    # the same requests of the same keys at the Worker (wrangler dev, its output as the log): its one
    # JSON line per request gives the same counts, statuses and bytes as nginx's access log
    server, answers, log = asked_and_logged
    edge = start_edge_server(server)
    try:
        got = {"alice": [edge.get(DOCUMENT) for _ in range(3)] + [edge.get("/api/v1/riskscores/nosuch/")],
               "bob": [edge.get(EXPORT, user="bob") for _ in range(2)], "-": [edge.get(DOCUMENT, user=None)]}
        worker_log = edge.runtime.log  # wrangler writes what the Worker logged as it comes: wait for all 7
        asked = wait_for(lambda: _all_counted(usage("--log", worker_log), 7), 10, "the Worker's usage lines", every=0.1)
    finally:
        edge.runtime.stop()
    assert [a.body for a in got["bob"]] == [a.body for a in answers["bob"]]
    asked["-"]["requests"] -= 1  # the fixture's own check that the Worker answers: GET /api/v1/ without a key
    asked["-"]["bytes"] -= len(server.release_file("api/v1/index.json"))
    asked["-"]["2xx"] -= 1
    assert asked == {row["user"]: row for row in usage("--log", log)}
    ids = {user: digest_of(server.keys_file, key)[:8] for user, key in server.keys.items()}
    by_key = {row["key"]: row["requests"] for row in usage("--log", worker_log, "--by", "key")}
    assert by_key == {f"alice {ids['alice']}": 4, f"bob {ids['bob']}": 2, "- -": 2}  # and the fixture's own check
    assert server.keys["alice"] not in worker_log.read_text() and server.keys["bob"] not in worker_log.read_text()


def test_a_logpush_record_is_read_as_the_worker_s_lines(tmp_path):
    line = json.dumps({"usage": 1, "at": "2026-11-24T10:00:00.000Z", "user": "alice", "method": "GET",
                       "path": "/api/v1/releases/20261124T090000Z/riskscores/sovereign/", "status": 200, "bytes": 512,
                       "release": "20261124T090000Z"})
    record = {"Outcome": "ok", "Logs": [{"Level": "log", "Message": [line]}, {"Level": "log", "Message": ["other"]}]}
    log = tmp_path / "logpush.jsonl"
    log.write_text(json.dumps(record) + "\nnot a record\n")
    assert usage("--log", log, "--by", "route") == [{"route": "/api/v1/releases/{id}/riskscores/{model}/",
                                                     "requests": 1, "bytes": 512, "2xx": 1, "3xx": 0, "4xx": 0,
                                                     "5xx": 0}]


def test_without_a_running_serve_or_a_log_it_says_what_to_do(tmp_path):
    result = CliRunner().invoke(main, ["usage", "--site", str(tmp_path)])
    assert result.exit_code == 1 and "--log" in result.output


def test_a_user_name_a_spreadsheet_would_run_is_written_as_text(tmp_path):
    # Worker usage lines of users named as formulas (a keys file accepts such names): the CSV cell starts
    # with ' so a spreadsheet shows the name instead of running it, as the exports' cells do
    lines = [json.dumps({"usage": 1, "at": "2026-11-24T10:00:00.000Z", "user": user, "method": "GET",
                         "path": "/api/v1/", "status": 200, "bytes": 10, "release": "20261124T090000Z"})
             for user in ("@cmd", "-2-3", "=1+1", "plain")]
    log = tmp_path / "worker.log"
    log.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(main, ["usage", "--log", str(log), "--format", "csv"])
    users = sorted(line.split(",")[0] for line in result.stdout.splitlines()[1:])
    assert users == ["'-2-3", "'=1+1", "'@cmd", "plain"]
    assert {row["user"] for row in usage("--log", log)} == {"@cmd", "-2-3", "=1+1", "plain"}  # JSON as they are


def _all_counted(rows: list[dict], requests: int) -> dict | None:
    """Return the rows by user once they count `requests` requests in all (the log may still be being written)."""
    return {row["user"]: row for row in rows} if sum(row["requests"] for row in rows) >= requests else None
