"""Shared fixtures: paths, the tiny fixture dataset built once per session, and the servers tests ask
(`live`, one fixture for nginx, the Worker and CloudFront). The suite's options and hooks are plugin.py's."""
from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from generator.building.load import load_dataset
from generator.building.load.records import ModelData
from generator.building.scoring import score_model
from generator.cli import main
from generator.publish.build_release import build

from .plugin import (  # noqa: F401 (the plugin's hooks, registered as this conftest's)
    SERVERS,
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_terminal_summary,
    pytest_unconfigure,
)

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "tests" / "fixtures" / "tiny"
LOOPBACK = "http://127.0.0.1:8080"  # the address a log on this machine is named after, given as --site-url
GOLDEN = ROOT / "tests" / "golden" / "tiny"


def committed_demo_data() -> Path:
    """Return the demo data as committed. docs/data.md walks the data team through editing data/ and rebuilding;
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
    """Return the tiny fixture, loaded and scored: {model code: ModelScores}."""
    dataset, observations = load_dataset(TINY)
    return {d.model.code: score_model(dataset.countries, ModelData(d, observations[d.model.code]))
            for d in dataset.models}


@pytest.fixture(scope="session")
def tiny_site(tmp_path_factory) -> Path:
    """Return a site folder with one published release of the tiny fixture."""
    site = tmp_path_factory.mktemp("tiny-site")
    build(TINY, site)
    return site


def riskapi(*args) -> Result:
    """Run a riskapi command in this process, as click's CliRunner does (each argument as text)."""
    return CliRunner().invoke(main, [str(argument) for argument in args])


def replace_in(path: Path, old: str, new: str) -> None:
    """Change the first occurrence of `old` in a (copied) data file; the text must be there."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


NGA_GREY, NGA_BLACK = "fatf_list,NGA,2024-10-25,grey", "fatf_list,NGA,2024-10-25,black"


def make_nga_black(data: Path) -> None:
    """Make NGA's FATF status black in acme_aml (100 of 100 points; it is grey, 50 of 100)."""
    replace_in(data / "observations" / "acme_aml.csv", NGA_GREY, NGA_BLACK)


@pytest.fixture
def data_copy(tmp_path) -> Path:
    """Return a writable copy of the tiny fixture, for tests that break it."""
    target = tmp_path / "data"
    shutil.copytree(TINY, target)
    return target


def server_fixture(scope: str, kind: str = "nginx", data: Path = TINY, own: bool = True):
    """Make a fixture of `scope` that yields `data` served on `kind` (nginx, workerd, cloudfront), stopped
    by pid and removed afterwards: built from a copy of its own (`own`: `server.data`, for tests that change
    the site), or the session's nginx's release and keys deployed to that server."""
    @pytest.fixture(scope=scope)
    def fixture(request, tmp_path_factory):
        from .live import served_on, serving_copy_of
        if not own:  # the same release and keys as the session's nginx, in the bucket a test may read
            with served_on(kind, request.getfixturevalue("nginx_server"), request, "risk-cloudfront") as server:
                yield server
            return
        with serving_copy_of(data, tmp_path_factory.mktemp("served")) as nginx, \
                served_on(kind, nginx, request) as server:
            yield server
    return fixture


# The servers tests ask for: the session's (one release, on every server), or a copy of their own.
nginx_server = server_fixture("session")
edge = server_fixture("session", "workerd", own=False)  # the Workers project of `riskapi deploy cloudflare` in workerd
cloudfront = server_fixture("session", "cloudfront", own=False)  # CloudFront's functions in the Node harness, over S3
own_server = server_fixture("function")  # for a test that changes its site
module_server = server_fixture("module")  # shared by one module's tests
demo_server = server_fixture("module", data=DEMO_DATA)  # exports large enough that a reader's ranges matter


@pytest.fixture(scope="module")
def live(request):
    """Return the server under test, with the tiny fixture's release and keys: nginx, or in a module that sets
    SERVED_BY (pytest_generate_tests below), each of those servers in turn."""
    return request.getfixturevalue(FIXTURES[getattr(request, "param", "nginx")])


@pytest.fixture
def kind(request) -> str:
    """Return the name of the server `live` is in this test ("nginx", "workerd", "cloudfront")."""
    callspec = getattr(request.node, "callspec", None)
    return callspec.params.get("live", "nginx") if callspec is not None else "nginx"


def pytest_generate_tests(metafunc):
    """Run each test that takes `live` once per server its module's SERVED_BY names."""
    servers = getattr(metafunc.module, "SERVED_BY", None)
    if servers and "live" in metafunc.fixturenames:
        metafunc.parametrize("live", servers, indirect=True, scope="module")


@pytest.fixture(scope="session")
def s3():
    """Yield a real S3 server: Ceph's RADOS Gateway on 127.0.0.1 (tests/ceph.py); stopped by pid at the end."""
    from .ceph import start_ceph_s3
    from .live import free_port
    server = start_ceph_s3(free_port)
    yield server
    server.stop()


FIXTURES = {"nginx": "nginx_server", "workerd": "edge", "cloudfront": "cloudfront"}  # a server's fixture


@pytest.fixture
def place():
    """Yield a folder nginx workers may enter, removed afterwards: for tests that start nginx themselves."""
    from .live import worker_readable_folder
    base = worker_readable_folder("riskapi-test-")
    yield base
    shutil.rmtree(base, ignore_errors=True)
