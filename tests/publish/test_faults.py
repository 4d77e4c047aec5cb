"""Faults an operator meets, one promise per test (issue: survive killed builds, broken keys files, …).

Every process here is started by the test and ended by its PID; waits are bounded.
"""
from __future__ import annotations

import datetime
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.building.load import load_dataset
from generator.cli import main
from generator.errors import DataError, KeysError, PublishError
from generator.history.site import CURRENT, RELEASES, current_release, releases, rollback
from generator.publish.build_release import build
from generator.serve.keys import read_keys
from generator.system.processes import children, process_state
from tools.synthetic_data import main as synthetic_data

from ..conftest import DEMO_DATA, TINY, make_nga_black, replace_in
from ..live import digest_of, free_port, wait_for

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


# ---- keys -------------------------------------------------------------------------------------

def test_a_broken_keys_line_is_skipped_by_line_and_never_shows_a_key(live):
    keys_file = live.keys_file
    good = keys_file.read_bytes()
    alice, bob = live.keys["alice"], live.keys["bob"]
    added = len(good.splitlines()) + 1  # the number of the line each case appends
    try:
        for broken, says, alice_status in [
            (good + b"dave,\xe9abcdef0123456789abcdef01,,yes\n", "is not UTF-8 text", 200),
            # alice's key twice: which user holds it is not known, so neither line serves it
            (good + good.splitlines(keepends=True)[1], "the key of line 2 again", 403),
        ]:
            keys_file.write_bytes(broken)
            live.runtime.refresh()
            problems = "\n".join(live.runtime.status.state["live"]["keyProblems"])
            assert f"{keys_file}:{added}: {says}" in problems
            assert alice not in problems and bob not in problems
            assert live.get("/api/v1/riskscores/acme_aml/", user="alice").status == alice_status
            assert live.get("/api/v1/riskscores/sovereign/", user="bob").status == 200  # every other line works
        keys_file.unlink()
        with pytest.raises(KeysError, match="the keys file is missing"):
            live.runtime.refresh()  # nothing to apply: the running configuration stays
        assert live.get("/api/v1/riskscores/sovereign/", user="bob").status == 200
    finally:
        keys_file.write_bytes(good)
        live.runtime.refresh()
    assert live.get("/api/v1/riskscores/acme_aml/", user="alice").status == 200


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_parallel_keys_edits_lose_nothing(tmp_path):
    keys = tmp_path / "keys.csv"
    assert subprocess.run([sys.executable, "-m", "generator.cli", "keys", "add", "carol", "--keys", str(keys)],
                          capture_output=True, timeout=60).returncode == 0
    commands = [["keys", "add", f"user{n:02d}", "--keys", str(keys)] for n in range(20)]
    commands.insert(10, ["keys", "revoke", "carol", "--keys", str(keys)])  # racing the adds
    processes = [subprocess.Popen([sys.executable, "-m", "generator.cli", *c], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) for c in commands]
    outputs = [p.communicate(timeout=120)[0] for p in processes]
    assert [p.returncode for p in processes] == [0] * 21, outputs
    saved = read_keys(keys)
    printed = {o.strip() for c, o in zip(commands, outputs) if c[1] == "add"}
    assert {k.digest for k in saved if k.user.startswith("user")} == {digest_of(keys, key) for key in printed}
    assert len(printed) == 20
    assert [k.active for k in saved if k.user == "carol"] == [False]  # the revoke is never undone


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


# ---- bad data that published with exit 0 ---------------------------------------------------------

def load_problems(data) -> list[str]:
    with pytest.raises(DataError) as caught:
        load_dataset(data)
    return [str(p).replace(f"{data}/", "") for p in caught.value.problems]


def test_actual_data_from_the_future_or_before_1900_is_a_located_error(data_copy):
    this_year = datetime.date.today().year
    replace_in(data_copy / "observations" / "sovereign.csv", "gdp_growth,AUT,2024,2.5,actual",
               "gdp_growth,AUT,9999,2.5,actual")
    replace_in(data_copy / "observations" / "sovereign.csv", "gdp_growth,AUT,2023,1.0,actual",
               "gdp_growth,AUT,0001,1.0,actual")
    assert load_problems(data_copy) == [
        "observations/sovereign.csv:2: column date: '0001' is before 1900 (check the year)",
        f"observations/sovereign.csv:3: column date: 9999-12-31 is after this year ({this_year}) but the "
        "observation is marked actual (mark it projected, or fix the date)",
    ]


def test_a_control_character_in_a_text_cell_is_a_located_error(data_copy):
    replace_in(data_copy / "countries.csv", "CIV,Côte d'Ivoire", 'CIV,"Côte\nd\'Ivoire"')
    replace_in(data_copy / "models.csv", "Test fixture", "Test\x00fixture")
    found = load_problems(data_copy)
    assert "countries.csv:3: column name: contains the control character U+000A (remove line breaks, tabs and " \
           "NUL bytes from cells)" in found
    assert any(p.startswith("models.csv:2: column source: contains the control character U+0000") for p in found)


def test_a_data_release_cut_short_is_refused_by_default(tmp_path):
    # A synthetic dataset of 60 countries; its sovereign observations cut after a fifth of the file, as a
    # failed export leaves them. The file is sorted by indicator, so the later indicators lose every
    # country and most countries fall below the coverage cut-off.
    data, site = tmp_path / "data", tmp_path / "site"
    synthetic_data(["--out", str(data), "--countries", "60", "--years", "3", "--models", "2"])
    assert CliRunner().invoke(main, ["build", "--data", str(data), "--site", str(site), "-q"]).exit_code == 0
    live = current_release(site)
    observations = data / "observations" / "sovereign.csv"
    lines = observations.read_text(encoding="utf-8").splitlines(keepends=True)
    observations.write_text("".join(lines[: len(lines) // 5]), encoding="utf-8")
    refused = CliRunner().invoke(main, ["build", "--data", str(data), "--site", str(site)])
    assert refused.exit_code == 1, refused.output
    assert refused.output.startswith(f"Error: not published: against release {live}, observations/sovereign.csv "
                                     "holds ")  # the file that shrank is named first …
    assert "sovereign would lose the score of " in refused.output  # … then what it does to the scores
    assert "If the data release means it, build with --accept-changes" in refused.output
    assert current_release(site) == live and releases(site) == [live]
    accepted = CliRunner().invoke(main, ["build", "--data", str(data), "--site", str(site), "--accept-changes"])
    assert accepted.exit_code == 0 and current_release(site) != live


# ---- serving never outlives its supervisor --------------------------------------------------------

def start_serve(place: Path, port: int) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--port", str(port), "--site",
                                str(place / "site"), "--keys", str(place / "keys.csv"), "--prefix",
                                str(place / "nginx")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = process.stdout.readline()
    if not first.startswith("serving release"):
        process.kill()  # before reading the rest: a serve that runs on would never end the output
        raise AssertionError(first + process.stdout.read())
    return process


def port_closed(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return False
    except OSError:
        return True


@pytest.fixture
def built_place(place):
    """Return `place` with a built release of the fixture and a keys file: what serve needs."""
    assert CliRunner().invoke(main, ["build", "--data", str(TINY), "--site", str(place / "site"), "-q"]).exit_code == 0
    assert CliRunner().invoke(main, ["keys", "add", "alice", "--keys", str(place / "keys.csv")]).exit_code == 0
    return place


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_nginx_ends_when_serve_is_killed(built_place):
    place, port = built_place, free_port()
    serve = start_serve(place, port)
    assert not port_closed(port)
    serve.kill()  # kill -9: no handler runs
    serve.wait(timeout=10)
    wait_for(lambda: port_closed(port), seconds=10, what="closed port")
    # and nothing of it stays: a new serve can take the port at once
    again = start_serve(place, port)
    again.send_signal(signal.SIGTERM)
    assert again.wait(timeout=20) == 0


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_when_the_nginx_master_is_killed_serve_stops_its_workers_and_says_so(built_place):
    place, port = built_place, free_port()
    serve = start_serve(place, port)
    # nginx listens before it writes its pid file (serve only waits for the port): wait for the number
    pid_file = place / "nginx" / "nginx.pid"
    master = int(wait_for(lambda: pid_file.exists() and pid_file.read_text().strip(), seconds=10,
                          what="nginx's pid in its pid file"))
    workers = wait_for(lambda: children(master), seconds=10, what="nginx workers")
    time.sleep(1.2)  # serve's loop has seen the workers (it looks every 0.5 s)
    os.kill(master, signal.SIGKILL)
    output, _ = serve.communicate(timeout=20)
    assert serve.returncode == 1
    assert f"nginx stopped (code -9); its {len(workers)} worker(s) were stopped with it" in output, output
    wait_for(lambda: port_closed(port), seconds=10, what="closed port")


def test_serve_on_a_busy_port_says_so_before_it_starts(built_place):
    place = built_place
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "generator.cli", "serve", "--port", str(port), "--site",
                                 str(place / "site"), "--keys", str(place / "keys.csv")],
                                capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and "serving" not in result.stdout
    assert f"127.0.0.1:{port} is already in use" in result.stderr + result.stdout


# ---- HTTP edges ------------------------------------------------------------------------------------

def raw_exchange(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes as they are (no client library would send these) and read the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


EDGES = [
    # (what a client sends, the status nginx itself raises, the detail)
    (b"GET /api/v1/openapi.json HTTP/1.1\r\nHost: x\r\nRange: bytes=abc\r\nConnection: close\r\n\r\n",
     416, "Requested range not satisfiable."),
    (b"GET /api/v1/openapi.json HTTP/2.0\r\nHost: x\r\nConnection: close\r\n\r\n", 505, "HTTP version not supported."),
    (b"POST /api/v1/openapi.json HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\nConnection: close\r\n\r\n",
     501, "Not implemented."),
]


def test_statuses_nginx_raises_itself_answer_json_with_that_status(live):
    for request, status, detail in EDGES:
        got, headers, body = raw_exchange(live.port, request)
        assert (got, json.loads(body)) == (status, {"detail": detail}), request
        assert headers["content-type"].startswith("application/json")


def test_the_access_log_never_holds_a_query_value(live):
    key = live.keys["alice"]
    live.get(f"/api/v1/riskscores/sovereign/?apikey={key}&ordering=-country_name", user="alice",
             headers={"User-Agent": "querycheck"})
    # a target refused for a character it may not hold is logged by its path alone too
    refused = live.get(f"/api/v1/riskscores/sovereign/%7B|?apikey={key}&x={{", user="alice",
                       headers={"User-Agent": "refusedcheck"})
    assert refused.status == 400
    log_file = live.runtime.prefix / "logs" / "access.log"

    def logged(agent: str) -> str | None:
        return next((x for x in log_file.read_text().splitlines() if agent in x), None)
    line = wait_for(lambda: logged("querycheck"), seconds=5, what="access log line")
    refused_line = wait_for(lambda: logged("refusedcheck"), seconds=5, what="the refused request's line")
    assert key not in log_file.read_text()
    assert '"GET /api/v1/riskscores/sovereign/ HTTP/1.1" 200' in line and "ordering=-country_name" in line
    assert '"GET /api/v1/riskscores/sovereign/%7B| HTTP/1.1" 400' in refused_line


def test_serve_listens_on_ipv6_loopback(built_place):
    place, port = built_place, free_port()
    process = subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--host", "::1", "--port",
                                str(port), "--site", str(place / "site"), "--keys", str(place / "keys.csv")],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = process.stdout.readline()
    assert first.startswith("serving release") and f"http://[::1]:{port}/" in first, first + process.stdout.read()
    with urllib.request.urlopen(f"http://[::1]:{port}/api/v1/openapi.json", timeout=5) as answer:
        assert answer.status == 200
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0


def test_an_option_value_nginx_would_read_as_a_variable_is_refused():
    result = CliRunner().invoke(main, ["nginx-config", "--out", "/nonexistent", "--cache-control", "max-age=$uri"])
    assert result.exit_code == 2 and "is not a Cache-Control value" in result.output


def test_current_as_a_real_folder_is_one_clear_error_before_any_work(tmp_path):
    site = tmp_path / "site"
    (site / CURRENT).mkdir(parents=True)
    result = CliRunner().invoke(main, ["build", "--data", str(TINY), "--site", str(site)])
    assert result.exit_code == 1
    assert result.output.strip() == (f"Error: {site / CURRENT} is a real folder, not the link to a release: move it "
                                     f"away (serve releases from {site / RELEASES}), then build again")
    assert not (site / RELEASES).exists() or not any((site / RELEASES).iterdir())  # nothing written


def test_serve_reloads_only_when_the_keys_content_changes(live):
    keys_file = live.keys_file
    live.runtime.refresh()
    text = keys_file.read_bytes()
    keys_file.write_bytes(text)  # rewritten, same content: new mtime
    assert live.runtime.refresh() is False
    os.utime(keys_file, (1, 1))  # touched
    assert live.runtime.refresh() is False


def test_ten_thousand_slow_connections_do_not_lock_out_a_new_client(live):
    # Bounded: 10,000 connections that send half a request line and wait, from 127.0.0.2 (loopback);
    # then one ordinary client must be answered at once. All closed afterwards.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 20000), hard))
    slow: list[socket.socket] = []
    try:
        for _ in range(10_000):  # each accepted (a connect that waits over 30 s fails the test)
            connection = socket.create_connection(("127.0.0.1", live.port), timeout=30, source_address=("127.0.0.2", 0))
            connection.sendall(b"GET /api/v1/openapi.json HTTP/1.1\r\nHost: slow\r\n")  # never finished
            slow.append(connection)
        # every slow connection still open (none timed out or was dropped), and a new client answered in full:
        # locked out, it would wait (its connect or read times out) instead of reading a 200
        assert all(connection.fileno() != -1 for connection in slow)
        answer = live.get("/api/v1/openapi.json", user=None)
        assert answer.status == 200
    finally:
        for connection in slow:
            connection.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_dangling_current_link_is_one_clear_line_for_serve(tmp_path):
    site = tmp_path / "site"
    (site / RELEASES).mkdir(parents=True)
    (site / CURRENT).symlink_to(f"{RELEASES}/20990101T000000Z")  # its release was deleted by hand
    (tmp_path / "keys.csv").write_text("user,key,models,active\n")
    result = subprocess.run([sys.executable, "-m", "generator.cli", "serve", "--port", str(free_port()), "--site",
                             str(site),
                             "--keys", str(tmp_path / "keys.csv")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().startswith("Error: ") and len(result.stderr.strip().splitlines()) == 1
    assert "20990101T000000Z" in result.stderr
