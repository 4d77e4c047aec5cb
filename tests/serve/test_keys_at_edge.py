"""Keys at the Cloudflare edge: in Workers KV, not in the Worker's script. 100,000 keys make 100,000 KV
entries and leave the script as it is with ten; the real workerd (`wrangler dev`) answers a key among
10,000 applied to its KV store with the project's update-keys.mjs (`npm run keys`), and a revocation
reaches the running Worker without a new version of it. (miniflare writes each local KV value as a
file: 100,000 took 5 to over 12 minutes here, which bounds the live part to 10,000.)"""
from __future__ import annotations

import contextlib
import gzip
import json
import os
import secrets
import shutil
import signal
import subprocess

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.serve.deploy import cloudflare
from generator.serve.keys import revoke

from ..conftest import TINY
from ..live import NODE_TOOLS, apply_keys, free_port, upload_to_local_r2, wait_for, wrangler_env

# the live test writes 10,000 keys into wrangler dev's local KV store (~45 s on a quiet machine)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

KEYS, LIVE_KEYS = 100_000, 10_000


def _keys_file(path, count: int) -> list[tuple[str, str]]:
    """`count` users with one key each (every tenth granted acme_aml), written as `riskapi keys add` would."""
    users = [(f"client{i:06d}", secrets.token_hex(16)) for i in range(count)]
    path.write_text("user,key,models,active\n" + "".join(
        f"{user},{key},{'acme_aml' if i % 10 == 0 else ''},yes\n" for i, (user, key) in enumerate(users)))
    os.chmod(path, 0o600)
    return users


def _deploy(site, keys, out):
    result = CliRunner().invoke(main, ["deploy", "cloudflare", "--site", str(site), "--keys", str(keys), "--out",
                                       str(out), "--strict"])
    assert result.exit_code == 0, result.output
    return result


@contextlib.contextmanager
def _wrangler_dev(project, state):
    port = free_port()
    env = wrangler_env()
    log = project.parent / "wrangler-dev.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([str(NODE_TOOLS / ".bin" / "wrangler"), "dev", "--ip", "127.0.0.1", "--port",
                                    str(port), "--persist-to", str(state)], cwd=project, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        yield port
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # the group we started, and nothing else
        process.wait(timeout=15)


def _status(port: int, user: str, key: str) -> int:
    import http.client
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/api/v1/riskscores/acme_aml/AUT/", headers={"Authorization": f"apikey {user}:{key}"})
        return connection.getresponse().status
    except OSError:
        return 0  # not answering yet
    finally:
        connection.close()


def test_a_hundred_thousand_keys_are_kv_entries_and_leave_the_script_as_it_is_with_ten(tmp_path):
    site = tmp_path / "site"
    assert CliRunner().invoke(main, ["build", "--data", str(TINY), "--site", str(site), "-q"]).exit_code == 0
    _keys_file(tmp_path / "ten.csv", 10)
    _deploy(site, tmp_path / "ten.csv", tmp_path / "ten")
    _keys_file(tmp_path / "many.csv", KEYS)
    result = _deploy(site, tmp_path / "many.csv", tmp_path / "many")
    assert f"{KEYS:,} keys for Workers KV" in result.output
    assert f"over the Free plan's {cloudflare.KV_FREE_WRITES:,} Workers KV writes a day" in result.output
    assert len(json.loads((tmp_path / "many" / "keys-kv.json").read_text())) == KEYS
    # the script (contract, core, Worker, route description) is the same bytes with 10 keys and 100,000 (the
    # same grant sets), a few KB for the tiny release, far under the Free plan's 3 MiB
    for name in cloudflare.SCRIPT_FILES:
        assert (tmp_path / "many" / name).read_bytes() == (tmp_path / "ten" / name).read_bytes(), name
    script = gzip.compress(b"".join((tmp_path / "many" / name).read_bytes() for name in cloudflare.SCRIPT_FILES))
    assert len(script) < 64 * 1024


def test_keys_live_in_workers_kv_and_a_revocation_reaches_the_running_worker(tmp_path):
    site, keys, project, state = tmp_path / "site", tmp_path / "keys.csv", tmp_path / "cf", tmp_path / "kv-state"
    assert CliRunner().invoke(main, ["build", "--data", str(TINY), "--site", str(site), "-q"]).exit_code == 0
    users = _keys_file(keys, LIVE_KEYS)
    _deploy(site, keys, project)
    assert f"{LIVE_KEYS} written, 0 deleted" in apply_keys(project, wrangler_env(), state)
    # entries read are kept 30 s per isolate in production; here not at all, to see the revocation land
    with open(project / ".dev.vars", "a") as variables:
        variables.write("KEYS_CACHE_MS=0\n")

    # what `wrangler deploy` sent to Cloudflare: a copy, run where the operator's project is rewritten
    deployed = tmp_path / "deployed"
    shutil.copytree(project, deployed)
    granted, plain = users[7_340], users[7_341]  # 7,340 is a multiple of ten: acme_aml
    with _wrangler_dev(deployed, state) as port:
        wait_for(lambda: _status(port, *granted) != 0, seconds=90, what="wrangler dev listening")
        upload_to_local_r2(site, deployed, port)  # the release into its local R2, as deploy s3 fills R2
        wait_for(lambda: _status(port, *granted) == 200, seconds=30, what="wrangler dev answering a key")
        assert _status(port, *plain) == 404  # a valid key without the custom model's grant
        assert _status(port, granted[0], secrets.token_hex(16)) == 403  # a key never issued

        # revoke: the project is written anew (same secret, script and assets: no new Worker version),
        # and only its keys are applied (`npm run keys`): one deletion, nothing rewritten
        assert revoke(keys, granted[0])[0] == 1
        _deploy(site, keys, project)
        for name in (*cloudflare.SCRIPT_FILES, "wrangler.json"):
            assert (project / name).read_bytes() == (deployed / name).read_bytes(), name
        assert "0 written, 1 deleted" in apply_keys(project, wrangler_env(), state)
        wait_for(lambda: _status(port, *granted) == 403, seconds=30, what="the revoked key refused")
        assert _status(port, *users[9_990]) == 200  # the others still answer
