"""`riskapi keys` and `riskapi serve` as a user runs them."""
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import urllib.request

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.serve.keys import read_keys

from ..conftest import riskapi
from ..live import digest_of, free_port


def test_add_prints_a_new_key_of_the_api_s_format_once(tmp_path, tiny_site):
    keys = tmp_path / "keys.csv"
    result = riskapi("keys", "add", "alice", "--models", "acme_aml", "--keys", keys, "--site", tiny_site)
    assert result.exit_code == 0, result.output
    key = result.output.strip()
    assert re.fullmatch(r"cra_live_[0-9a-z]{32}", key)  # contract/key_format.py: 129 random bits and a checksum
    assert read_keys(keys)[0].digest == digest_of(keys, key) and read_keys(keys)[0].models == ("acme_aml",)
    assert key not in keys.read_text() and key[9:] not in keys.read_text()  # only its digest is kept
    assert oct(keys.stat().st_mode & 0o777) == "0o600"
    assert oct((tmp_path / "keys.csv.secret").stat().st_mode & 0o777) == "0o600"


def test_list_names_each_key_by_its_short_id(tmp_path):
    keys = tmp_path / "keys.csv"
    key = riskapi("keys", "add", "alice", "--models", "acme_aml,other", "--keys", keys, "--force").output.strip()
    riskapi("keys", "add", "bob", "--keys", keys)
    riskapi("keys", "revoke", "bob", "--keys", keys)
    listing = riskapi("keys", "list", "--keys", keys).output.splitlines()
    assert listing[0] == f"alice\t{digest_of(keys, key)[:8]}\tacme_aml,other\tactive\t-"
    assert listing[1].startswith("bob\t") and listing[1].endswith("\t-\trevoked\t-")
    assert key[-4:] not in "\n".join(listing)


def test_add_refuses_a_model_that_is_not_a_custom_model_of_the_release(tmp_path, tiny_site):
    keys = tmp_path / "keys.csv"
    refused = riskapi("keys", "add", "carol", "--models", "nosuch", "--keys", keys, "--site", tiny_site)
    assert refused.exit_code == 1
    assert refused.output.strip() == ("Error: nosuch is not a custom model of the current release (its custom "
                                      "models: acme_aml); check the name, or add --force to grant a model a coming "
                                      "data release brings")
    assert not keys.exists()
    public = riskapi("keys", "add", "carol", "--models", "sovereign", "--keys", keys, "--site", tiny_site)
    assert public.exit_code == 1 and "sovereign is not a custom model" in public.output
    no_release = riskapi("keys", "add", "carol", "--models", "acme_aml", "--keys", keys, "--site", tmp_path / "empty")
    assert no_release.exit_code == 1 and "has no current release" in no_release.output
    forced = riskapi("keys", "add", "carol", "--models", "nosuch", "--keys", keys, "--site", tiny_site, "--force")
    assert forced.exit_code == 0 and read_keys(keys)[0].models == ("nosuch",)


def test_given_key_is_stored_in_lower_case(tmp_path):
    keys = tmp_path / "keys.csv"
    result = riskapi("keys", "add", "carol", "--key", "9F86D081884C7D659A2FEAA0C55AD015", "--keys", keys)
    assert result.output.strip() == "9f86d081884c7d659a2feaa0c55ad015"
    stored = [line.split(",") for line in keys.read_text().splitlines()[1:]]
    # kept as the digest of the lower-cased key, which nginx and the edges work out from either case
    assert [(row[0], row[1]) for row in stored] == [("carol", digest_of(keys, "9f86d081884c7d659a2feaa0c55ad015"))]
    assert "9f86d081884c7d659a2feaa0c55ad015" not in keys.read_text().lower()


def test_bad_keys_and_users_are_refused(tmp_path):
    keys = tmp_path / "keys.csv"
    assert riskapi("keys", "add", "alice", "--key", "short", "--keys", keys).exit_code == 1
    assert riskapi("keys", "add", "al:ice", "--keys", keys).exit_code == 1
    riskapi("keys", "add", "alice", "--key", "9f86d081884c7d659a2feaa0c55ad015", "--keys", keys)
    duplicate = riskapi("keys", "add", "bob", "--key", "9F86D081884C7D659A2FEAA0C55AD015", "--keys", keys)
    assert duplicate.exit_code == 1 and "already in the keys file" in duplicate.output
    assert riskapi("keys", "revoke", "nobody", "--keys", keys).exit_code == 1


def test_replace_rotates_a_users_key(tmp_path):
    keys = tmp_path / "keys.csv"
    old = riskapi("keys", "add", "alice", "--keys", keys).output.strip()
    new = riskapi("keys", "add", "alice", "--replace", "--keys", keys).output.strip()
    state = {k.digest: k.active for k in read_keys(keys)}
    assert state == {digest_of(keys, old): False, digest_of(keys, new): True}


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_serve_runs_until_interrupted_and_picks_up_new_releases(tmp_path_factory):
    import tempfile

    from ..conftest import TINY
    base = tempfile.mkdtemp(prefix="riskapi-serve-")
    os.chmod(base, 0o755)
    site, keys = f"{base}/site", f"{base}/keys.csv"
    port = free_port()
    site_url = f"http://127.0.0.1:{port}"  # the release links to where it is served: serve has nothing to note
    assert riskapi("-q", "build", "--data", TINY, "--site", site, "--site-url", site_url).exit_code == 0
    key = riskapi("keys", "add", "alice", "--keys", keys).output.strip()
    process = subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--site", site, "--keys", keys,
                                "--port", str(port), "--prefix", f"{base}/nginx"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()

    def next_line() -> str:
        return lines.get(timeout=30)  # a bounded wait: a missing line fails the test, never hangs it

    try:
        first = next_line()
        assert re.match(rf"serving release \S+ on http://127.0.0.1:{port}/api/v1/ ", first), first
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/configuration/countries/",
                                         headers={"Authorization": key})
        assert urllib.request.urlopen(request, timeout=5).status == 200
        assert riskapi("-q", "build", "--data", TINY, "--site", site, "--force", "--site-url", site_url).exit_code == 0
        assert next_line().startswith("reloaded: release ")
        revoke = riskapi("keys", "revoke", "alice", "--keys", keys)
        assert revoke.exit_code == 0
        assert next_line().startswith("reloaded: ")
        try:
            urllib.request.urlopen(request, timeout=5)
            raise AssertionError("a revoked key was accepted")
        except urllib.error.HTTPError as error:
            assert error.code == 403
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
    assert process.returncode == 0
    assert next_line().strip() == "stopped"


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_a_hundred_thousand_bad_lines_are_told_in_ten(tmp_path, tiny_site):
    # 100,000 lines whose active column says "maybe" (one kind) and 3 with a bad user (another):
    # the first 5 of the first kind, "… and 99,995 more like the last", the 3 others, and the heading
    # — 10 lines wherever the keys file is read (keys list, deploy, serve's status), not 100,004.
    from generator.serve.status import ServeStatus
    keys = tmp_path / "keys.csv"
    lines = ["user,key,models,active"] + [f"user{i:06d},{i:032x},,maybe" for i in range(100_000)]
    lines += [f"bad user {i},{i + 200_000:032x},,yes" for i in range(3)]
    keys.write_text("\n".join(lines) + "\n")
    expected_tail = ["  … and 99,995 more like the last", *(f"  {keys}:{100_002 + i}: user 'bad user {i}'"
                                                              for i in range(3))]

    def told(stderr: str) -> list[str]:
        warning = stderr[stderr.index("warning: "):].splitlines()
        return warning[:10]

    listing = CliRunner().invoke(main, ["keys", "list", "--keys", str(keys)])
    assert listing.exit_code == 0 and listing.stdout == ""
    warning = told(listing.stderr)
    assert warning[0] == "warning: 100,003 line(s) of the keys file serve no key until fixed:"
    assert warning[1] == f"  {keys}:2: active 'maybe' must be yes or no" and len(warning) == 10
    assert warning[6] == expected_tail[0]
    assert all(line.startswith(start) for line, start in zip(warning[7:], expected_tail[1:]))
    assert len(listing.stderr.splitlines()) == 10

    deployed = CliRunner().invoke(main, ["deploy", "cloudflare", "--site", str(tiny_site), "--keys", str(keys),
                                         "--out", str(tmp_path / "cloudflare"), "-q"])
    assert deployed.exit_code == 0, deployed.output
    assert told(deployed.stderr) == warning

    status = ServeStatus(tmp_path, "127.0.0.1:1")
    from generator.serve.keys import load_keys
    status.applied("r", "digest", load_keys(keys).problems)
    assert status.state["live"]["keyProblemLines"] == 100_003
    assert ["  " + line for line in status.state["live"]["keyProblems"]] == warning[1:]
