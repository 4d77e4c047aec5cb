"""`riskapi serve` never outlives its supervisor and never leaves what a kill would: nginx ends with it,
signals reread or stop it, a killed serve's key map goes at the next start, a busy port or a bad
option is one clear line; nginx's own errors answer JSON, and slow clients lock no one out. Every
process here is started by the test and ended by its PID; waits are bounded."""
from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.history.site import CURRENT, RELEASES
from generator.system.processes import children

from ..conftest import TINY, riskapi
from ..live import free_port, wait_for

pytestmark = pytest.mark.faults

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


# ---- serve: signals and what a kill leaves ---------------------------------------------------------------

def start_private_serve(site: Path, keys: Path, port: int) -> subprocess.Popen:
    """Start `riskapi serve` with a private prefix of its own (no --prefix), as the README's command runs it."""
    serve = subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--port", str(port), "--site",
                              str(site), "--keys", str(keys)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    first = serve.stdout.readline()
    assert first.startswith("serving release"), first
    return serve


def private_prefix_of(first_line_pid: int) -> Path:
    import tempfile

    from generator.serve.loop import OWNER, PRIVATE_PREFIX
    return next(p for p in Path(tempfile.gettempdir()).glob(f"{PRIVATE_PREFIX}*")
                if (p / OWNER).is_file() and (p / OWNER).read_text() == str(first_line_pid))


@pytest.fixture
def site_and_keys(place) -> tuple[Path, Path]:
    """Return a built site and a keys file of one key in a folder nginx workers may enter."""
    site, keys = place / "site", place / "keys.csv"
    riskapi("build", "--data", TINY, "--site", site, "-q")
    riskapi("keys", "add", "alice", "--keys", keys)
    return site, keys


def test_sighup_rereads_serve_and_sigterm_removes_its_key_map(site_and_keys):
    site, keys = site_and_keys
    serve = start_private_serve(site, keys, free_port())
    prefix = private_prefix_of(serve.pid)
    assert (prefix / "conf" / "runtime" / "keys.conf").is_file()
    serve.send_signal(signal.SIGHUP)
    lines = iter(serve.stdout.readline, "")
    assert any(line.startswith("re-read on SIGHUP") for line in lines)  # and it goes on serving
    assert serve.poll() is None
    serve.send_signal(signal.SIGTERM)
    assert serve.wait(timeout=20) == 0
    assert not prefix.exists()  # the key map went with it


def test_the_key_map_a_killed_serve_left_is_removed_by_the_next_serve(site_and_keys):
    site, keys = site_and_keys
    killed = start_private_serve(site, keys, free_port())
    left = private_prefix_of(killed.pid)
    killed.kill()  # kill -9: no handler runs, its prefix (and keys.conf) stays behind
    killed.wait(timeout=10)
    assert (left / "conf" / "runtime" / "keys.conf").is_file()
    serve = start_private_serve(site, keys, free_port())
    try:
        assert not left.exists()
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=20)


def test_a_site_path_with_spaces_is_served_and_one_with_a_dollar_is_refused_clearly(place):
    import urllib.request
    site, keys = place / "my site", place / "keys.csv"
    riskapi("build", "--data", TINY, "--site", site, "-q")
    key = riskapi("keys", "add", "alice", "--keys", keys).output.strip()
    port = free_port()
    serve = start_private_serve(site, keys, port)
    try:
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/riskscores/sovereign/",
                                         headers={"Authorization": key})
        with urllib.request.urlopen(request, timeout=5) as answer:
            assert answer.status == 200
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=20)
    odd = place / "cost$site"
    shutil.copytree(site, odd, symlinks=True)
    refused = subprocess.run([sys.executable, "-m", "generator.cli", "serve", "--port", str(free_port()), "--site",
                              str(odd), "--keys", str(keys)], capture_output=True, text=True, timeout=30)
    assert refused.returncode == 1
    assert "nginx would read the '$' in this path as a variable" in refused.stderr
