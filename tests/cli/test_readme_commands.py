"""Every command line of the docs' command table (docs/operate.md) works as written, each option in the
position written.

COMMAND_LINES holds one concrete line per use, with temporary paths; a test checks that every option
of every README row appears in a line of its command, so an option added to the README without being
run here fails.
"""
from __future__ import annotations

import os
import re
import shlex
import signal
import stat
import subprocess
import sys
import urllib.request

from click.testing import CliRunner

from generator.cli import main
from generator.history.site import releases
from generator.serve.keys import read_keys

from ..conftest import ROOT, TINY
from ..live import free_port

# The command table lives in docs/operate.md; README.md is the front page that links it.
README = (ROOT / "docs" / "operate.md").read_text(encoding="utf-8")
KEY = "9f86d081884c7d659a2feaa0c55ad015"

COMMAND_LINES = [
    "riskapi build --data {data} --site {site} --keys {keys} --strict --max-class-changes 100 --accept-clock-behind -v",
    "riskapi build --data {data} --site {site} -q --force --accept-changes --site-url https://risk.example.com/ "
    "--keep 5 --keep-days 30",
    "riskapi diff --site {site}",
    "riskapi diff {first} {second} --site {site}",
    "riskapi check --data {data} --strict",
    "riskapi explain sovereign AUT --date 2024-12-31 --site {site}",
    "riskapi releases --site {site}",
    "riskapi releases --site {site} --repair",
    "riskapi releases --site {site} --prune --keep 5 --keep-days 30",
    "riskapi rollback --site {site} --accept-clock-behind",
    "riskapi build --data {data} --site {site} -q --force --stage --jobs 2",
    "riskapi promote {staged} --site {site} --accept-changes --keys {keys} --accept-clock-behind",
    "riskapi keys add alice --models acme_aml --key {key} --replace --keys {keys} --site {site}",
    "riskapi keys add carol --models acme_next --keys {keys} --force",
    "riskapi keys add erin --preview --expires 2030-01-31 --keys {keys}",
    "riskapi keys rotate erin --grace 7d --keys {keys}",
    "riskapi keys expire erin --at 2029-12-31T12:00:00Z --key-id {key_id} --keys {keys}",
    "riskapi keys expire erin --never --keys {keys}",
    "riskapi keys add dave --key 0000000000000000 --allow-weak --keys {keys}",
    "riskapi keys revoke alice --keys {keys}",
    "riskapi keys list --keys {keys}",
    "riskapi keys migrate --keys {keys}",
    "riskapi subscribers add erin http://127.0.0.1:9/hook --secret whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3 --keys {keys} "
    "--allow-private-network",
    "riskapi subscribers list --keys {keys}",
    "riskapi log status --site {site}",
    "riskapi log init --key {prefix}/log-signing.key --site-url https://risk.example.com --site {site}",
    "riskapi log init --rotate --key {prefix}/log-signing-2.key --site {site}",
    "riskapi log init --rotate --key {prefix}/log-signing-2.key --site {site}",
    "riskapi log sign --site {site}",
    "riskapi log witness add http://127.0.0.1:9/witness "
    "witness.example/w+fffb0fe7+BFcq22mqvXSF32xW+GplumZlnXyTUv1QQtZ3ETh9gbjw --site {site}",
    "riskapi log witness list --site {site}",
    "riskapi subscribers remove erin http://127.0.0.1:9/hook --keys {keys}",
    "riskapi notify --release {first} --site {site} --keys {keys}",
    "riskapi deploy cloudflare --site {site} --keys {keys} --out {prefix}/cloudflare --name risk-test --kv-namespace 0f2ac74b "
    "--bucket risk-test-releases --prefix risk/ --cache-control 'private, no-cache' --keep 5 --keep-days 30 --strict --plan paid",
    "riskapi deploy cloudfront --site {site} --keys {keys} --out {prefix}/cloudfront --cache-control 'private, no-cache' "
    "--keep 5 --keep-days 30 --strict",
    "riskapi status --site {site} --keys {keys}",
    "riskapi usage --site {site} --log {log} --since 2026-01-01 --by route --format csv",
    "riskapi nginx-config --out {prefix} --host 127.0.0.1 --port {port} --site {site} --keys {keys} "
    "--cache-control 'public, max-age=60' --rate-limit 600/m",
]
# Run by tests/serve/test_deploy_s3.py against the real S3 server it starts ({endpoint}, {bucket}).
S3_LINE = ("riskapi deploy s3 --site {site} --bucket {bucket} --endpoint-url {endpoint} --prefix risk/ "
           "--keep 3 --keep-days 30")
# Run by tests/history/test_cite_verify.py against a live server ({url}, {key}, {vkey}; files in a folder of its own).
CITE_LINE = "riskapi cite {url} --key {key} -o {out} --since {since}"
VERIFY_LINE = "riskapi verify {out} --trust {vkey} --document {document} --since {since}"
# Run by tests/history/test_log_repair.py with a site that lost its catalogue and its log's copy, from Ceph's bucket.
REPAIR_LINE = "riskapi releases --site {site} --repair --log-from s3://{bucket}/risk --endpoint-url {endpoint} --trust {vkey}"
# Run by tests/history/test_witnesses.py with two witnesses on loopback.
WITNESS_VERIFY_LINE = "riskapi verify {out} --trust {vkey} --witness {witness} --witness {other} --quorum 2"
COSIGN_LINE = "riskapi log cosign --site {site}"
SERVE_LINE = ("riskapi serve --host 127.0.0.1 --port {port} --site {site} --keys {keys} "
              "--cache-control 'private, no-cache' --rate-limit 10 --prefix {prefix}")


def readme_rows() -> dict[str, set[str]]:
    """Return each command of README's table with the options its row writes."""
    rows = {}
    for cell in re.findall(r"^\| `(riskapi [^`]+)` \|", README, flags=re.M):
        words = cell.split()
        name = " ".join(w for w in words[:3] if re.fullmatch(r"[a-z][a-z-]*", w))
        rows[name] = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", cell))
    return rows


def test_every_readme_option_is_run_here():
    lines = COMMAND_LINES + [SERVE_LINE, S3_LINE, CITE_LINE, VERIFY_LINE, WITNESS_VERIFY_LINE, COSIGN_LINE,
             REPAIR_LINE]
    rows = readme_rows()
    assert len(rows) >= 11 and "riskapi serve" in rows
    for name, options in rows.items():
        used = " ".join(line for line in lines if line.startswith(name + " "))
        assert used, f"no command line runs {name}"
        missing = {o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", used)}
        assert not missing, f"{name}: {sorted(missing)} are in README but not run here"


def test_every_readme_command_line_exits_0(place):
    values = dict(data=TINY, site=place / "site", keys=place / "keys.csv", key=KEY, prefix=place / "nginx",
                  port=free_port(), log=place / "access.log")
    values["log"].write_text('127.0.0.1 - alice [24/Nov/2026:10:00:00 +0000] "GET /api/v1/ HTTP/1.1" 200 812 '
                             '"code= name= model= country_code= country_name= ordering=" "curl/8" 0.000\n')
    for line in COMMAND_LINES:
        if "{first}" in line:
            values["first"], values["second"] = releases(values["site"])[:2]
        if "{staged}" in line:
            values["staged"] = releases(values["site"])[-1]
        if "{key_id}" in line:  # erin's newest key, as `keys list` names it
            values["key_id"] = [k.key_id for k in read_keys(values["keys"]) if k.user == "erin"][-1]
        args = shlex.split(line.format(**values))[1:]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, f"{line}\n{result.output}"


def test_riskapi_serve_as_written_serves_and_stops(place):
    site, keys, port = place / "site", place / "keys.csv", free_port()
    assert CliRunner().invoke(main, ["build", "--data", str(TINY), "--site", str(site), "-q"]).exit_code == 0
    assert CliRunner().invoke(main, ["keys", "add", "alice", "--keys", str(keys)]).exit_code == 0
    line = SERVE_LINE.format(port=port, site=site, keys=keys, prefix=place / "nginx")
    process = subprocess.Popen([sys.executable, "-m", "generator.cli", *shlex.split(line)[1:]],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=place)
    try:
        first = process.stdout.readline()  # serve says where it serves before anything else
        assert first.startswith(f"serving release {releases(site)[0]} on http://127.0.0.1:{port}/api/v1/"), first
        # built with the default --site-url, served on another port: serve says the links point elsewhere
        assert process.stdout.readline() == (f"note: the release links to http://127.0.0.1:8080 (riskapi build "
                                             f"--site-url); this server answers on http://127.0.0.1:{port}\n")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/openapi.json", timeout=5) as answer:
            assert answer.status == 200
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=20)
    assert process.returncode == 0, output


def test_serve_removes_the_private_prefix_it_made(place):
    site, port = place / "site", free_port()
    assert CliRunner().invoke(main, ["build", "--data", str(TINY), "--site", str(site), "-q"]).exit_code == 0
    assert CliRunner().invoke(main, ["keys", "add", "alice", "--keys", str(place / "keys.csv")]).exit_code == 0
    temporary = place / "tmp"
    temporary.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--port", str(port), "--site",
                                str(site), "--keys", str(place / "keys.csv")], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, cwd=place, env={**os.environ, "TMPDIR": str(temporary)})
    try:
        assert process.stdout.readline().startswith("serving release")
        assert [p.name[:14] for p in temporary.iterdir()] == ["riskapi-nginx-"]
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=20)
    assert process.returncode == 0, output
    assert list(temporary.iterdir()) == []


def test_demo_script_names_a_busy_port_before_touching_the_key():
    import socket
    keys = ROOT / "keys" / "keys.csv"
    before = keys.stat().st_mtime_ns if keys.exists() else None
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(["bash", str(ROOT / "scripts" / "demo.sh")], env={**os.environ, "PORT": str(port)},
                                capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip() == (f"port {port} on 127.0.0.1 is busy: stop what listens there, or choose "
                                     "another one: PORT=8081 scripts/demo.sh")
    assert (keys.stat().st_mtime_ns if keys.exists() else None) == before


def _checkout_copy(where, *scripts: str):
    """Return the scripts `scripts` and pyproject.toml copied into `where`, as a clone there would hold them."""
    (where / "scripts").mkdir(parents=True)
    for name in scripts:
        (where / "scripts" / name).write_bytes((ROOT / "scripts" / name).read_bytes())
    (where / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    return where


def test_demo_script_in_a_private_folder_names_the_chmod_before_installing_anything(tmp_path):
    # the suite runs as root (scripts/test.sh installs with apt): nginx's workers then run as www-data
    assert os.geteuid() == 0
    private = tmp_path / "private"
    clone = _checkout_copy(private / "clone", "demo.sh", "install.sh", "apt.sh")
    private.chmod(0o700)  # as mktemp -d makes it
    result = subprocess.run(["bash", str(clone / "scripts" / "demo.sh")], env={**os.environ, "PORT": str(free_port())},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    # every folder above the clone that others may not enter, the private one first (pytest's own are 0700)
    closed = " ".join(str(f) for f in [private, *private.parents] if not f.stat().st_mode & stat.S_IXOTH)
    assert closed.startswith(f"{private} ")
    assert result.stderr.splitlines()[:2] == [
        f"nginx's workers cannot enter {closed} (they run as an unprivileged user); allow it with:",
        f"  chmod o+x {closed}"]
    assert sorted(p.name for p in clone.iterdir()) == ["pyproject.toml", "scripts"]  # no .venv, keys or site


def test_install_runs_pip_only_when_pyproject_or_the_extras_changed(tmp_path):
    clone = _checkout_copy(tmp_path / "clone", "install.sh", "apt.sh")
    # .venv/bin/python: this environment's Python, but `-m pip` only noted (what install.sh asks of pip)
    (clone / ".venv" / "bin").mkdir(parents=True)
    asked = tmp_path / "pip.txt"
    python = clone / ".venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\nif [ "$1 $2" = "-m pip" ]; then echo "$*" >> {asked}; exit 0; fi\n'
                      f'exec {sys.executable} "$@"\n')
    python.chmod(0o755)

    def install(extras: str) -> str:
        done = subprocess.run(["bash", str(clone / "scripts" / "install.sh"), extras], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        return asked.read_text() if asked.exists() else ""

    assert install("client").endswith('.[client]\n')  # nothing installed yet
    assert install("client").count("\n") == 1  # the second run: pip not asked again
    assert install("dev").count("\n") == 2  # the test tools asked for: pip again
    assert install("client").count("\n") == 2  # dev holds client
    with open(clone / "pyproject.toml", "a") as pyproject:
        pyproject.write("# a change\n")
    assert install("client").count("\n") == 3
