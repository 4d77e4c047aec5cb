"""Every fenced example of docs/api.md, docs/operate.md and docs/data.md runs as written against the demo: a
folder laid out as `scripts/demo.sh` leaves the checkout (data/, site/ built from it, keys/keys.csv with the
demo key) and served by `riskapi serve`, so staging, promotes and key changes are picked up as the docs say.

Each `bash` block runs in bash with `set -euo pipefail`, in that folder, with the demo key in `KEY` and its
address in `BASE` (as the docs ask the reader to export them: the test serves on a free port, never
8080) and `riskapi` on the PATH, and curl fails on an HTTP error (`--fail-with-body`,
tried again while a just-published release is being picked up). A `python` block is the file the text names
(`receiver.py`). Any other block is output or a layout, and holds no command."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from generator.history.catalogue import Catalogue
from generator.publish.build_release import build
from generator.serve.keys import add_key

from ..conftest import DEMO_DATA, ROOT
from ..live import free_port, wait_for, worker_readable_folder

PAGES = ("docs/api.md", "docs/operate.md", "docs/data.md")
FENCE = re.compile(r"^```(?P<language>\w*)\n(?P<text>.*?)^```", re.M | re.S)
COMMANDS = re.compile(r"^\s*(?:curl|riskapi|python3?|npx|export)\b", re.M)
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.slow  # two builds of the demo data


def examples(page: str) -> list[tuple[str, str, int]]:
    text = (ROOT / page).read_text(encoding="utf-8")
    return [(m["language"], m["text"], text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


ALL = [(page, *example) for page in PAGES for example in examples(page)]


@pytest.fixture(scope="module")
def docs_demo():
    """Yield the demo's folder, built and served on a free port; stopped and removed afterwards."""
    base = worker_readable_folder("riskapi-docs-")
    port = free_port()
    shutil.copytree(DEMO_DATA, base / "data")
    with Catalogue.open(base / "site") as catalogue:  # as scripts/demo.sh: the log signed from the start
        catalogue.use_log_key(base / "keys" / "log-signing.key")
    build(base / "data", base / "site", site_url=f"http://127.0.0.1:{port}")
    key = add_key(base / "keys" / "keys.csv", "demo", ("acme_aml",)).key
    (base / "node_modules").symlink_to(ROOT / "tests" / "clients" / "node_modules")  # npx finds its tools
    serve = subprocess.Popen([str(BIN / "riskapi"), "serve", "--site", "site", "--keys", "keys/keys.csv", "--port",
                              str(port)], cwd=base, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert serve.stdout.readline().startswith("serving release"), "riskapi serve did not start"
        yield base, port, key
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=30)
        shutil.rmtree(base, ignore_errors=True)


def as_served(text: str, port: int, receiver_port: int) -> str:
    """Return the example with the receiver's address (port 8000) as served here. The API's address is never
    rewritten: the examples take it from BASE, as a reader's demo on another port would give it."""
    return (text.replace("127.0.0.1:8000", f"127.0.0.1:{receiver_port}")
            .replace('("127.0.0.1", 8000)', f'("127.0.0.1", {receiver_port})'))


def test_the_pages_have_examples_and_every_command_is_in_a_runnable_block():
    assert sum(language == "bash" for _, language, _, _ in ALL) >= 6
    for page, language, text, line in ALL:
        if language not in ("bash", "python"):
            assert not COMMANDS.search(text), f"{page}:{line}: a command in a block that is not `bash`"
        # the API's address is set once (`export BASE=…`); every example reads it from there
        spelled = [row for row in text.splitlines() if "127.0.0.1:8080" in row and not row.startswith("export BASE=")]
        assert spelled == [], f"{page}:{line}: the demo's address written out, not $BASE"


@pytest.mark.timeout(1800)  # two builds of the demo data, and each block bounded below
def test_every_example_runs_as_written_on_the_demo_in_the_order_of_the_pages(docs_demo):
    """One test, the blocks in order: a page's later examples use what its earlier ones made (the receiver
    file, the staged release)."""
    base, port, key = docs_demo
    receiver_port = free_port()
    environment = {**os.environ, "KEY": key, "BASE": f"http://127.0.0.1:{port}", "PATH": f"{BIN}:{os.environ['PATH']}"}
    ran = 0
    for page, language, text, line in ALL:
        if language == "python":
            compile(text, f"{page}:{line}", "exec")
            (base / "receiver.py").write_text(as_served(text, port, receiver_port))
            continue
        if language != "bash":
            continue
        script = ("set -euo pipefail\n"
                  "curl() { command curl --fail-with-body --max-time 30 --retry 10 --retry-delay 1 --retry-max-time 60 "
                  '--retry-all-errors "$@"; }\n' + as_served(text, port, receiver_port))
        try:
            done = subprocess.run(["bash", "-c", script], cwd=base, env=environment, capture_output=True,
                                  text=True, timeout=300)
        except subprocess.TimeoutExpired as late:
            raise AssertionError(f"{page}:{line} ran over 300 s\n{text}\n{late.stdout}\n{late.stderr}") from None
        assert done.returncode == 0, (f"{page}:{line}\n{text}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n"
                                      f"{done.stderr[-3000:]}")
        current = (base / "site" / "current").resolve().name
        if "receiver.py" in text:  # the receiver verified the signed event and printed its release
            assert current in done.stdout, done.stdout
        if "riskapi promote" in text:  # serve picks the promoted release up before the next example
            wait_for(lambda current=current: current in subprocess.run(["curl", "-s", f"http://127.0.0.1:{port}/api/v1/"],
                                                       capture_output=True, text=True).stdout,
                     seconds=60, what="serve answering the promoted release")
        ran += 1
    assert ran >= 6


STANDARD = set(sys.stdlib_module_names)  # what the examples may import of Python's own


def test_the_install_line_names_what_the_examples_import_and_the_client_extra():
    """docs/api.md's one install line lists every package its examples import (and aiohttp, which fsspec
    reads HTTP with), exactly the `client` extra of pyproject.toml, which the suite's environment has."""
    import tomllib
    text = (ROOT / "docs/api.md").read_text(encoding="utf-8")
    (line,) = re.findall(r"^python3 -m pip install (.+)$", text, re.M)
    listed = {word.strip('"') for word in line.split()}  # an extra's brackets quoted for the shell
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["client"]
    assert listed == {re.split(r"[<>=]", requirement)[0] for requirement in extra}
    imported = set()
    for page, _, block, _ in ALL:
        if page != "docs/api.md":
            continue
        for found in re.finditer(r"^\s*(?:import|from)\s+([\w.]+(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)", block, re.M):
            imported |= {part.split()[0].split(".")[0] for part in re.split(r"\s*,\s*", found[1])}
    assert {"duckdb", "polars", "pyarrow", "fsspec"} <= imported  # the reader that finds them all
    assert imported - STANDARD <= listed and "aiohttp" in listed
