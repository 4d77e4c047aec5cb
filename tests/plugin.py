"""The suite's own pytest plugin: `--quick` (what it leaves out and says so), a heartbeat for tests that run
long, and a red end where a test leaves a thread running. conftest.py loads it; fixtures live there."""
from __future__ import annotations

import atexit
import os
import tempfile
import threading
import time
from pathlib import Path

import pytest

SERVERS = ("nginx", "workerd", "cloudfront")


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
    """Say what --quick left out, by file, and where the rest runs."""
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




def pytest_unconfigure(config):
    """Fail on a thread a test left running: it keeps the test process from ending (Python waits for every
    non-daemon thread at exit), and CI from finishing: name it with its stack and end the run red."""
    import faulthandler
    import sys
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
