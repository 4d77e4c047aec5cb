"""riskapi deploy cloudflare: what the project holds, what it never holds, and the platform's limits.
(The project itself is served by the real workerd in test_serving.py.)"""
from __future__ import annotations

import hashlib
import json

from click.testing import CliRunner

from generator.cli import main
from generator.deploy import cloudflare
from generator.publish import CURRENT
from generator.serve.keys import add_key

from .conftest import TINY


def _deploy(*args: str):
    return CliRunner().invoke(main, ["deploy", "cloudflare", *args])


def _site_and_keys(tmp_path):
    site, keys = tmp_path / "site", tmp_path / "keys.csv"
    assert CliRunner().invoke(main, ["build", "--data", str(TINY), "--site", str(site), "-q"]).exit_code == 0
    plain = [add_key(keys, "alice", ("acme_aml",)).key, add_key(keys, "bob").key]
    return site, keys, plain


def test_the_project_holds_the_documents_and_pages_and_no_key(tmp_path):
    site, keys, plain = _site_and_keys(tmp_path)
    out = tmp_path / "cloudflare"
    result = _deploy("--site", str(site), "--keys", str(keys), "--out", str(out))
    assert result.exit_code == 0, result.output
    public = sorted(p.relative_to(out / "public").as_posix() for p in (out / "public").rglob("*") if p.is_file())
    release = site / CURRENT
    assert public == sorted(p.relative_to(release).as_posix() for p in release.rglob("*") if p.is_file()
                            and p.suffix not in (".gz", ".br") and p.parts[-2:][0] != "nginx"
                            and p.relative_to(release).parts[0] in ("api", "docs"))
    assert not any(name.endswith((".gz", ".br", "manifest.json", "routing.json")) for name in public)
    config = json.loads((out / "wrangler.json").read_text())
    assert config["assets"] == {"directory": "./public", "binding": "ASSETS", "run_worker_first": True}
    assert config["compatibility_date"] == cloudflare.COMPATIBILITY_DATE
    # keys only as SHA-256 hashes: no file of the project holds a key, in any letter case
    for path in out.rglob("*"):
        if path.is_file():
            text = path.read_bytes().lower()
            assert not any(key.lower().encode() in text for key in plain), path
    hashed = json.loads((out / "keys.json").read_text())
    assert hashed["keys"] == {hashlib.sha256(plain[0].encode()).hexdigest(): "alice",
                              hashlib.sha256(plain[1].encode()).hexdigest(): "bob"}
    assert hashed["users"]["alice"] == {"models": ["acme_aml"], "audience": "acme_aml"}


def test_a_key_change_changes_the_keys_only(tmp_path):
    site, keys, _ = _site_and_keys(tmp_path)
    out = tmp_path / "cloudflare"
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(out)).exit_code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    add_key(keys, "carol")
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(out)).exit_code == 0
    changed = {p.name for p, body in before.items() if p.read_bytes() != body}
    assert changed == {"keys.json"}


def test_a_file_over_the_platform_limit_is_stored_in_parts(tmp_path, monkeypatch):
    site, keys, _ = _site_and_keys(tmp_path)
    # the tiny fixture's public JSON Lines export is 20,406 bytes; Cloudflare's limit is 25 MiB (the demo's: 62 MiB)
    monkeypatch.setattr(cloudflare, "MAX_FILE_BYTES", 3_000)
    out = tmp_path / "cloudflare"
    result = _deploy("--site", str(site), "--keys", str(keys), "--out", str(out))
    assert result.exit_code == 0 and "warning" not in result.output
    export = site / CURRENT / "api/v1/exports/scores.jsonl"
    whole = export.read_bytes()
    count = -(-len(whole) // 3_000)  # ceil: 20,406 bytes → 6 parts of 3,000 and one of 2,406
    parts = [out / f"public/api/v1/exports/scores.jsonl.part{i}" for i in range(count)]
    assert b"".join(p.read_bytes() for p in parts) == whole
    assert all(len(p.read_bytes()) <= 3_000 for p in parts)
    assert not (out / "public/api/v1/exports/scores.jsonl").exists()
    assert not (out / f"public/api/v1/exports/scores.jsonl.part{count}").exists()
    info = export.stat()
    assert json.loads((out / "release.json").read_text())["files"]["api/v1/exports/scores.jsonl"] == [
        int(info.st_mtime), info.st_size, count]


def test_over_the_file_count_limits_warns_and_strict_fails(tmp_path, monkeypatch):
    site, keys, _ = _site_and_keys(tmp_path)
    monkeypatch.setattr(cloudflare, "FREE_FILES", 10)  # the tiny release has ~110 files; Free allows 20,000
    result = _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "over"))
    assert result.exit_code == 0 and "over the Free plan's 10 per Worker version" in result.output
    strict = _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "strict"), "--strict")
    assert strict.exit_code == 1 and "exceeds the platform's limits" in strict.output


def test_a_site_without_a_release_is_one_line(tmp_path):
    result = _deploy("--site", str(tmp_path / "empty"), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1 and "has no current release; run `riskapi build` first" in result.output
