"""Shared fixtures: paths, and the tiny fixture dataset built once per session."""
from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from generator.build.load import load_dataset
from generator.build.load.records import ModelData
from generator.build.scoring import score_model
from generator.publish.build_release import build

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "tests" / "fixtures" / "tiny"
LOOPBACK = "http://127.0.0.1:8080"  # the address a log on this machine is named after, given as --site-url
GOLDEN = ROOT / "tests" / "golden" / "tiny"


def committed_demo_data() -> Path:
    """The demo data as committed. docs/data.md walks the data team through editing data/ and rebuilding;
    the demo data's tests check the data as shipped, so where data/ has local edits they read a copy of
    the committed one (git archive), removed when the tests end."""
    try:
        edited = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "data"], capture_output=True,
                                text=True, check=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ROOT / "data"  # not a checkout (an unpacked source): data/ is as shipped
    if not edited:
        return ROOT / "data"
    copy = Path(tempfile.mkdtemp(prefix="riskapi-demo-data-"))
    atexit.register(shutil.rmtree, copy, ignore_errors=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD", "data"], capture_output=True, check=True,
                             timeout=120).stdout
    subprocess.run(["tar", "-x", "-C", str(copy)], input=archive, check=True, timeout=120)
    return copy / "data"


DEMO_DATA = committed_demo_data()


@pytest.fixture(scope="session")
def tiny_scores():
    """The tiny fixture, loaded and scored: {model code: ModelScores}."""
    dataset, observations = load_dataset(TINY)
    return {d.model.code: score_model(dataset.countries, ModelData(d, observations[d.model.code]))
            for d in dataset.models}


@pytest.fixture(scope="session")
def tiny_site(tmp_path_factory) -> Path:
    """A site folder with one published release of the tiny fixture."""
    site = tmp_path_factory.mktemp("tiny-site")
    build(TINY, site)
    return site


def replace_in(path: Path, old: str, new: str) -> None:
    """Change the first occurrence of `old` in a (copied) data file; the text must be there."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


NGA_GREY, NGA_BLACK = "fatf_list,NGA,2024-10-25,grey", "fatf_list,NGA,2024-10-25,black"


def make_nga_black(data: Path) -> None:
    """acme_aml: NGA's FATF status grey (50 of 100 points) becomes black (100 of 100)."""
    replace_in(data / "observations" / "acme_aml.csv", NGA_GREY, NGA_BLACK)


@pytest.fixture
def data_copy(tmp_path) -> Path:
    """A writable copy of the tiny fixture, for tests that break it."""
    target = tmp_path / "data"
    shutil.copytree(TINY, target)
    return target


@pytest.fixture(scope="session")
def nginx_server():
    """The tiny fixture served by a real nginx; stopped by pid at the end of the session."""
    from .live import start_live_server
    server = start_live_server(TINY)
    yield server
    server.runtime.stop()
    shutil.rmtree(server.base, ignore_errors=True)


@pytest.fixture(scope="session")
def live(nginx_server):
    """The live server of tests about nginx (test_serving.py runs its cases against every server)."""
    return nginx_server


@pytest.fixture(scope="session")
def edge(nginx_server):
    """The same release and keys at the edge: the Workers project of `riskapi deploy cloudflare`, run
    by the real workerd (`wrangler dev`, offline); stopped by its process group at the end."""
    from .live import start_edge_server
    server = start_edge_server(nginx_server)
    yield server
    server.runtime.stop()


@pytest.fixture(scope="session")
def s3():
    """A real S3 server: Ceph's RADOS Gateway on 127.0.0.1 (tests/ceph.py); stopped by pid at the end."""
    from .ceph import start_ceph_s3
    from .live import free_port
    server = start_ceph_s3(free_port)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def cloudfront(nginx_server, s3):
    """The same release and keys behind CloudFront's functions: the objects in the real S3 server, the
    generated viewer-request and viewer-response functions and KeyValueStore run by the Node harness
    (tests/clients/cloudfront_harness.mjs: there is no local CloudFront runtime)."""
    from .live import start_cloudfront_server
    server = start_cloudfront_server(nginx_server, s3)
    yield server
    server.runtime.stop()


SERVERS = ("nginx", "workerd", "cloudfront")
FIXTURES = {"nginx": "nginx_server", "workerd": "edge", "cloudfront": "cloudfront"}  # a server's fixture


# --quick: the part of the suite that needs neither workerd, nor the CloudFront harness and its S3
# server, nor 100,000 keys: the tests of every other server, the build, the CLI and the faults.
EDGE_FIXTURES = {"edge", "s3", "cloudfront"}


def pytest_addoption(parser):
    parser.addoption("--quick", action="store_true",
                     help="leave out what needs workerd or the CloudFront harness, and the tests marked slow")


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--quick"):
        return
    def at_the_edge(item) -> bool:
        params = getattr(getattr(item, "callspec", None), "params", {})
        return (item.get_closest_marker("slow") is not None or bool(EDGE_FIXTURES & set(item.fixturenames))
                or any(isinstance(value, str) and value in SERVERS[1:] for value in params.values()))
    left_out = [item for item in items if at_the_edge(item)]
    record = os.environ.get(QUICK_RECORD)
    if record:  # for the summary, which under xdist runs in a process that collects nothing
        Path(record).write_text("\n".join(item.nodeid for item in left_out))
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not at_the_edge(item)]


QUICK_RECORD = "RISKAPI_QUICK_LEFT_OUT"  # where the collecting processes write what --quick leaves out


def pytest_terminal_summary(terminalreporter, config):
    """--quick says what it left out, by file, and where the rest runs."""
    record = os.environ.get(QUICK_RECORD)
    if not config.getoption("--quick") or not record or not Path(record).is_file():
        return
    left_out = [line for line in Path(record).read_text().splitlines() if line]
    by_file: dict[str, int] = {}
    for nodeid in left_out:
        name = nodeid.split("::")[0]
        by_file[name] = by_file.get(name, 0) + 1
    terminalreporter.write_line(f"--quick left out {len(left_out)} tests (workerd, the CloudFront harness and its S3 "
                                "server, and those marked slow; scripts/test.sh runs them): "
                                + ", ".join(f"{name} {count}" for name, count in sorted(by_file.items())))


class Heartbeat:
    """A line for each test still running after a minute, and each minute after: a long test (100,000 keys,
    workerd starting) never leaves the terminal silent. In the process that reports (under xdist, the
    controller: workers' starts and ends reach it as events)."""

    EVERY = 60.0

    def __init__(self, reporter):
        self.reporter, self.running, self.lock = reporter, {}, threading.Lock()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
        self.thread.start()

    def pytest_runtest_logstart(self, nodeid, location):
        with self.lock:
            self.running[nodeid] = time.monotonic()

    def pytest_runtest_logfinish(self, nodeid, location):
        with self.lock:
            self.running.pop(nodeid, None)

    def _beat(self) -> None:
        while not self.stopped.wait(self.EVERY):
            now = time.monotonic()
            with self.lock:
                long_running = [(nodeid, now - started) for nodeid, started in self.running.items()
                                if now - started >= self.EVERY]
            for nodeid, seconds in long_running:
                self.reporter.write_line(f"… still running after {seconds / 60:.0f} min: {nodeid}")


@pytest.hookimpl(trylast=True)  # after the terminal reporter is registered
def pytest_configure(config):
    if config.getoption("--quick") and not hasattr(config, "workerinput"):
        handle, record = tempfile.mkstemp(prefix="riskapi-quick-")
        os.close(handle)
        atexit.register(Path(record).unlink, missing_ok=True)
        os.environ[QUICK_RECORD] = record  # xdist's workers start with this process's environment
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Heartbeat(reporter), "riskapi-heartbeat")


@pytest.fixture
def place():
    """A folder nginx workers may enter, removed afterwards: for tests that start nginx themselves."""
    from .live import worker_readable_folder
    base = worker_readable_folder("riskapi-test-")
    yield base
    shutil.rmtree(base, ignore_errors=True)


def pytest_unconfigure(config):
    """A thread a test left running keeps the test process from ending (Python waits for every
    non-daemon thread at exit), and CI from finishing: name it with its stack and end the run red."""
    import faulthandler
    import os
    import sys
    import threading
    heartbeat = config.pluginmanager.get_plugin("riskapi-heartbeat")
    if heartbeat is not None:
        heartbeat.stopped.set()
    stuck = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    for thread in stuck:
        thread.join(timeout=10)
    stuck = [t.name for t in stuck if t.is_alive()]
    if stuck:
        sys.stderr.write(f"\nthreads left running after the tests: {', '.join(stuck)}\n")
        faulthandler.dump_traceback(all_threads=True)
        sys.stderr.flush()
        os._exit(3)
