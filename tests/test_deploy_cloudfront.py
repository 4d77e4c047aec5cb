"""riskapi deploy cloudfront: the functions and KeyValueStore entries it writes, their limits, the
keys kept as hashes, the switch of releases in one entry, and the same function code in two engines:
Node (which also runs it behind HTTP for the contract tables, tests/clients/cloudfront_harness.mjs)
and njs 0.7.9, whose JavaScript is the family of CloudFront's runtime."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from generator.build import build
from generator.cli import main
from generator.deploy import cloudfront
from generator.deploy.edge import served_files
from generator.keys import add_key, revoke
from generator.publish import CURRENT, current_release

from .conftest import ROOT, TINY, make_nga_black
from .live import NODE_22

IMPORT = 'import cf from "cloudfront";\n'


def _deploy(*args: str):
    return CliRunner().invoke(main, ["deploy", "cloudfront", *args])


@pytest.fixture
def deployed(tmp_path):
    """The tiny fixture's release, two keys (alice granted acme_aml, bob none), and what the deploy wrote."""
    site, keys, out = tmp_path / "site", tmp_path / "keys.csv", tmp_path / "cloudfront"
    build(TINY, site)
    plain = {"alice": add_key(keys, "alice", ("acme_aml",)).key, "bob": add_key(keys, "bob").key}
    result = _deploy("--site", str(site), "--keys", str(keys), "--out", str(out))
    assert result.exit_code == 0, result.output
    return site, keys, out, plain


def keyed(out, key: str) -> str:
    """A key as the store holds it: HMAC-SHA256 under the deploy folder's secret (worked here by hand)."""
    secret = (out / ".keys-secret").read_text().strip()
    return hmac.new(secret.encode(), key.lower().encode(), hashlib.sha256).hexdigest()


def _store(out) -> dict[str, str]:
    return {entry["key"]: entry["value"] for entry in json.loads((out / "kvs.json").read_text())["data"]}


def test_the_store_holds_the_release_tables_and_keys_as_hashes_only(deployed):
    site, _, out, plain = deployed
    release = current_release(site)
    assert sorted(p.name for p in out.iterdir()) == [".keys-secret", "kvs-update", "kvs.json", "timegate-lambda",
                                                     "update-kvs.sh", "viewer-request.js", "viewer-response.js"]
    assert sorted(p.name for p in (out / "timegate-lambda").iterdir()) == ["core.mjs", "gate.json", "index.mjs"]
    for path in (p for p in out.rglob("*") if p.is_file()):  # no file holds a key, in any letter case
        assert not any(key.lower().encode() in path.read_bytes().lower() for key in plain.values()), path
    # the store holds HMACs under the secret, which only the function's code holds
    secret = (out / ".keys-secret").read_text().strip()
    assert f'"{secret}"' in (out / "viewer-request.js").read_text() and secret not in (out / "kvs.json").read_text()
    assert "__KEYS_SECRET__" not in (out / "viewer-request.js").read_text()
    entries = json.loads((out / "kvs.json").read_text())["data"]
    assert entries[-1]["key"] == "release"  # the switch comes last
    settings = json.loads(entries[-1]["value"])
    assert (settings["id"], settings["prefix"], settings["cache_control"]) == (release, "/api/v1", "private, no-cache")
    store = _store(out)
    assert store[f"k:{keyed(out, plain['alice'])}"] == "alice"
    assert json.loads(store[f"{release}:u:alice"]) == {"models": ["acme_aml"], "audience": "acme_aml"}
    assert json.loads(store[f"{release}:u:bob"]) == {"models": [], "audience": "public"}
    assert store[f"{release}:m:acme_aml"] == "custom" and store[f"{release}:m:sovereign"] == "public"
    assert store[f"{release}:c:aut"] == "AUT"
    release_dir = site / CURRENT
    files = {key.split(":", 2)[2]: value for key, value in store.items() if key.startswith(f"{release}:f:")}
    assert sorted(files) == sorted(f.removesuffix("index.json") for f in served_files(release_dir))
    assert files["api/v1/openapi.json"] == str((release_dir / "api/v1/openapi.json").stat().st_size)
    assert files["api/v1/riskscores/sovereign/AUT/"] == str((release_dir / "api/v1/riskscores/sovereign/AUT/index.json")
                                                            .stat().st_size)
    for key, value in store.items():
        assert len(key.encode()) <= cloudfront.MAX_KEY_BYTES and len(value.encode()) <= cloudfront.MAX_VALUE_BYTES


def test_the_functions_are_the_minified_sources_within_the_code_limit(deployed):
    _, _, out, _ = deployed
    request, response = (out / "viewer-request.js").read_text(), (out / "viewer-response.js").read_text()
    assert request.startswith(IMPORT) and "async function handler(" in request
    assert not response.startswith(IMPORT) and "async function handler(" in response
    for text in (request, response):
        assert len(text.encode()) <= cloudfront.MAX_CODE_BYTES
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "cloudfront_functions.py"), "--check"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr  # generator/edge/cloudfront/ is core.js + handlers as they are


def test_a_key_change_changes_key_entries_only(deployed):
    site, keys, out, _ = deployed
    before = _store(out)
    functions = {name: (out / name).read_bytes() for name in ("viewer-request.js", "viewer-response.js")}
    carol = add_key(keys, "carol").key
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(out)).exit_code == 0
    after = _store(out)
    release = current_release(site)
    assert {k for k in after if before.get(k) != after[k]} == {
        f"k:{keyed(out, carol)}", f"{release}:u:carol"}
    assert set(before) <= set(after)
    assert all((out / name).read_bytes() == body for name, body in functions.items())


def _origin_request(folder, request: dict) -> dict:
    """The TimeGate's Lambda@Edge (timegate-lambda/index.mjs, as deployed) run in Node on one request."""
    event = json.dumps({"Records": [{"cf": {"config": {"eventType": "origin-request"}, "request": request}}]})
    code = (f"import({json.dumps((folder / 'index.mjs').as_uri())}).then((m) => m.handler({event}))"
            ".then((r) => console.log(JSON.stringify(r)))")
    done = subprocess.run([str(NODE_22 / "node"), "--input-type=module", "-e", code], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_timegate_lambda_answers_from_the_live_periods_and_never_the_past_for_the_present(deployed):
    site, keys, out, _ = deployed
    lambda_folder = out / cloudfront.TIMEGATE_LAMBDA
    release = current_release(site)
    gate = json.loads((lambda_folder / "gate.json").read_text())
    assert gate["live"] == release and gate["table"].split(" ")[1] == release  # one period: this release, kept
    asked = {"method": "GET", "uri": "/api/v1/riskscores/sovereign/AUT/", "querystring": "",
             "headers": {"x-timegate": [{"key": "x-timegate", "value": json.dumps(
                 ["/api/v1/riskscores/sovereign/AUT/", "as_of=2099-01-01&ordering=x", "", release])}]}}
    answer = _origin_request(lambda_folder, asked)
    # the core's own 302: to the route under the release live then, the other arguments kept
    assert answer["status"] == "302"
    assert answer["headers"]["location"] == [{"key": "Location",
                                              "value": f"/api/v1/releases/{release}/riskscores/sovereign/AUT/?ordering=x"}]
    assert answer["headers"]["x-release"][0]["value"] == release
    # a request without x-timegate goes on to S3 untouched
    plain = {"method": "GET", "uri": f"/releases/{release}/api/v1/index.json", "querystring": "", "headers": {}}
    assert _origin_request(lambda_folder, plain) == plain
    # a Lambda not yet published again after a new release went live: 503, never the old one for now
    stale = json.loads(asked["headers"]["x-timegate"][0]["value"])
    stale[3] = "20991231T000000Z"
    asked["headers"]["x-timegate"][0]["value"] = json.dumps(stale)
    answer = _origin_request(lambda_folder, asked)
    assert answer["status"] == "503" and answer["headers"]["retry-after"][0]["value"] == "60"
    assert answer["headers"]["cache-control"][0]["value"] == "no-store"
    assert "ask again in a minute" in json.loads(answer["body"])["detail"]


def test_a_store_over_its_limit_warns_and_strict_fails(deployed, monkeypatch, tmp_path):
    site, keys, _, _ = deployed
    # the tiny release's own entries are ~5,000 bytes, the store's ~5,600 with the keys, the release's state
    # and the list of releases: 8,000 holds them, not with the next release's beside them; CloudFront's
    # store holds 5 MiB (the demo's release: 0.27 MB)
    monkeypatch.setattr(cloudfront, "MAX_STORE_BYTES", 8_000)
    result = _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "over"))
    assert result.exit_code == 0 and "with the next release's (written before these are removed) they do not fit" \
        in result.output
    strict = _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "strict"), "--strict")
    assert strict.exit_code == 1 and "exceeds the platform's limits" in strict.output


# --- the function code itself, outside HTTP -------------------------------------------------------

def _run(engine: str, code: str, store: dict[str, str], events: list[dict], tmp_path) -> list[dict]:
    """Run a function's handler on each event in Node or njs: the deployed code as it is, after a
    KeyValueStore over `store` in place of its `import cf from "cloudfront"` line."""
    script = tmp_path / f"run-{engine}.js"
    script.write_text(
        f"var STORE = {json.dumps(store)};\nvar EVENTS = {json.dumps(events)};\n"
        "var cf = { kvs: function () { return { get: function (key) {\n"
        "  return Object.prototype.hasOwnProperty.call(STORE, key) ? Promise.resolve(STORE[key])\n"
        "    : Promise.reject(new Error('Key not found')); } }; } };\n"
        + code.removeprefix(IMPORT) +
        "\nasync function main() { for (var i = 0; i < EVENTS.length; i++) "
        "{ var answer = await handler(EVENTS[i]); console.log(JSON.stringify(answer)); } }\nmain();\n")
    program = [str(NODE_22 / "node")] if engine == "node" else [shutil.which("njs") or "njs"]
    done = subprocess.run([*program, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip(), f"{engine}: {done.stdout}{done.stderr}"
    answers = [json.loads(line) for line in done.stdout.splitlines()]  # one a line: njs cuts long lines
    assert len(answers) == len(events), f"{engine}: {done.stdout}"
    return answers


def _viewer_request(method: str, uri: str, query: str = "", authorization: str | None = None,
                    accept_encoding: str | None = None) -> dict:
    querystring = {}
    for pair in query.split("&") if query else []:
        name, _, value = pair.partition("=")
        querystring[name] = {"value": value}
    headers = {name: {"value": value} for name, value in (("authorization", authorization),
                                                          ("accept-encoding", accept_encoding)) if value is not None}
    return {"version": "1.0", "context": {"eventType": "viewer-request"}, "viewer": {"ip": "127.0.0.1"},
            "request": {"method": method, "uri": uri, "querystring": querystring, "headers": headers, "cookies": {}}}


def test_the_functions_answer_alike_in_node_and_njs(deployed, tmp_path):
    site, _, out, plain = deployed
    release = current_release(site)
    alice, bob = f"apikey alice:{plain['alice']}", plain["bob"]
    basic = "Basic " + base64.b64encode(f"bob:{plain['bob']}".encode()).decode()
    events = [_viewer_request(*case) for case in [
        ("GET", "/api/v1/"), ("GET", "/api/v1"), ("GET", "/"), ("GET", "/docs/models/sovereign/"),
        ("GET", "/favicon.ico"), ("OPTIONS", "/api/v1/riskscores/sovereign/"), ("POST", "/api/v1/"),
        ("GET", "/api/v1/../../etc/passwd"), ("GET", "/api/v1/riskscores/sovereign/"),
        ("GET", "/api/v1/riskscores/sovereign/", "", "apikey alice:wrong"),
        ("GET", "/api/v1/riskscores/sovereign/", "ordering=-country_name", alice),
        ("GET", "/api/v1/riskscores/sovereign/", "ordering=zz", alice),
        ("GET", "/api/v1/riskscores/sovereign/", "country_code=aut", bob),
        ("GET", "/api/v1/riskscores/sovereign/", "country_code=toolong", bob),
        ("GET", "/api/v1/riskscores/sovereign/", "country_name=Austria&country_code=AUT", f"Bearer {plain['bob']}"),
        ("GET", "/api/v1/configuration/countries/", "model=name&name=%C3%96sterreich", basic),
        ("GET", "/api/v1/configuration/riskscoremodels", "", alice),
        ("GET", "/api/v1/riskscores/acme_aml/", "", alice), ("GET", "/api/v1/riskscores/acme_aml/", "", bob),
        ("GET", "/api/v1/riskscores/acme_aml/NGA/", "", alice), ("GET", "/api/v1/riskscores/sovereign/zzz/", "", bob),
        ("GET", "/api/v1/riskscores/country/aut", "", alice),
        ("HEAD", "/api/v1/riskscores/sovereign/CIV/", "", alice, "gzip, deflate, br"),
        ("GET", "/api/v1/riskscores/sovereign/CIV/", "", alice, "gzip"),
        ("GET", "/api/v1/exports/scores.csv", "", alice, "br"), ("GET", "/api/v1/releases/current/", "", bob),
        ("GET", "/api/v1/exports/acme_aml/scores.jsonl", "", alice, "gzip"),
        ("GET", "/api/v1/exports/acme_aml/scores.jsonl", "", bob),
        ("GET", "/api/v1/nginx/routing.json", "", alice), ("GET", "/api/v1/manifest.json", "", alice),
    ]]
    request_code = (out / "viewer-request.js").read_text()
    in_node = _run("node", request_code, _store(out), events, tmp_path)
    assert _run("njs", request_code, _store(out), events, tmp_path) == in_node
    statuses = sorted({a.get("statusCode", 0) for a in in_node})
    assert statuses == [0, 204, 400, 403, 404, 405]  # 0: a file, asked of the origin
    uris = [a["uri"] for a in in_node if "statusCode" not in a]
    base = f"/releases/{release}/"
    assert base + "api/v1/riskscores/sovereign/ordering=-country_name/index.json" in uris
    assert base + "api/v1/riskscores/sovereign/filter=AUT/index.json" in uris
    assert base + "api/v1/configuration/riskscoremodels/audience=acme_aml/index.json" in uris
    assert base + "api/v1/riskscores/acme_aml/index.json" in uris  # alice's grant
    assert base + "api/v1/riskscores/sovereign/CIV/index.json.br" in uris  # over 1 KB, brotli accepted
    assert base + "api/v1/riskscores/sovereign/CIV/index.json.gz" in uris
    assert base + "api/v1/exports/scores.csv.br" in uris  # the same file for every key
    assert base + "api/v1/exports/acme_aml/scores.jsonl.gz" in uris  # alice's grant; bob's is a 404
    assert base + "api/v1/releases/current/index.json" in uris
    made = [a for a in in_node if "statusCode" in a and a["statusCode"] != 204]
    assert all(json.loads(a["body"]["data"])["detail"] and a["headers"]["cache-control"]["value"] == "no-store"
               and a["headers"]["x-release"]["value"] == release for a in made)

    metadata = {"x-amz-meta-release": {"value": release}, "cache-control": {"value": "private, no-cache"}}
    responses = [
        {"request": {"method": "GET", "uri": f"{base}api/v1/exports/scores.csv"},
         "response": {"statusCode": 200, "headers": {**metadata, "content-type": {"value": "text/csv; charset=utf-8"},
                                                     "x-amz-request-id": {"value": "tx1"}, "server": {"value": "AmazonS3"}}}},
        {"request": {"method": "GET", "uri": f"{base}docs/index.html"},
         "response": {"statusCode": 200, "headers": {**metadata, "content-type": {"value": "text/html; charset=utf-8"}}}},
        {"request": {"method": "GET", "uri": f"{base}api/v1/index.json"},
         "response": {"statusCode": 304, "headers": {"etag": {"value": '"abc"'}}}},  # no metadata on a 304
        {"request": {"method": "GET", "uri": f"{base}api/v1/exports/acme_aml/scores.jsonl.gz"},
         "response": {"statusCode": 200, "headers": {**metadata,
                                                     "content-type": {"value": "application/x-ndjson; charset=utf-8"}}}},
    ]
    response_code = (out / "viewer-response.js").read_text()
    finished = _run("node", response_code, {}, responses, tmp_path)
    assert _run("njs", response_code, {}, responses, tmp_path) == finished
    export, page, not_modified, one_model = (answer["headers"] for answer in finished)
    assert export["content-disposition"]["value"] == f'attachment; filename="country-risk-scores-{release}.csv"'
    assert one_model["content-disposition"]["value"] == (
        f'attachment; filename="country-risk-scores-acme_aml-{release}.jsonl"')
    assert not any(name.startswith("x-amz-") or name == "server" for name in export)
    assert "script-src 'self'" in page["content-security-policy"]["value"]
    assert "script-src" not in export["content-security-policy"]["value"]
    assert not_modified["x-release"]["value"] == release and not_modified["vary"]["value"] == "Accept-Encoding, Authorization, Accept-Datetime"


def test_one_entry_switches_the_release(deployed, tmp_path):
    site, keys, out, plain = deployed
    old = current_release(site)
    data = tmp_path / "data"
    shutil.copytree(TINY, data)
    make_nga_black(data)
    build(data, site)
    new = current_release(site)
    assert new != old
    (tmp_path / "next").mkdir()  # the same deployment: its secret, kept from the first deploy
    shutil.copy(out / ".keys-secret", tmp_path / "next" / ".keys-secret")
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "next")).exit_code == 0
    # the new release's entries are put first, beside the old one's; `release` still names the old one
    store = {**_store(tmp_path / "next"), "release": _store(out)["release"]}
    store.update({k: v for k, v in _store(out).items() if k.startswith(f"{old}:")})
    ask = [_viewer_request("GET", "/api/v1/riskscores/acme_aml/NGA/", "", f"apikey alice:{plain['alice']}")]
    code = (out / "viewer-request.js").read_text()
    assert _run("node", code, store, ask, tmp_path)[0]["uri"] == f"/releases/{old}/api/v1/riskscores/acme_aml/NGA/index.json"
    store["release"] = _store(tmp_path / "next")["release"]  # the one write that switches
    assert _run("node", code, store, ask, tmp_path)[0]["uri"] == f"/releases/{new}/api/v1/riskscores/acme_aml/NGA/index.json"


def test_the_store_update_is_a_script_of_batches_chained_by_etag(deployed, tmp_path, monkeypatch):
    # What can be run here: the script itself, with a stand-in for the AWS CLI that records each call and
    # answers a new ETag (E0 from describe, E1, E2, … from each update). Not run: AWS's KeyValueStore.
    site, keys, out, plain = deployed
    before = _store(out)
    carol = add_key(keys, "carol").key  # a key added, one revoked …
    revoke(keys, "bob")
    build(TINY, site, force=True)  # … and a new release
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(out)).exit_code == 0
    after = _store(out)
    batches = [json.loads(p.read_text()) for p in sorted((out / "kvs-update").glob("*.json"))]
    puts = [item for b in batches for item in b.get("Puts", [])]
    deletes = [item["Key"] for b in batches for item in b.get("Deletes", [])]
    assert all(len(b.get("Puts", [])) + len(b.get("Deletes", [])) <= 50 for b in batches)
    assert {p["Key"]: p["Value"] for p in puts} == {k: v for k, v in after.items() if before.get(k) != v}
    assert f"k:{keyed(out, carol)}" in {p["Key"] for p in puts}
    assert deletes == [k for k in before if k not in after]  # nothing else goes
    assert f"k:{keyed(out, plain['bob'])}" in deletes  # the revoked key leaves the store
    switch = [i for i, b in enumerate(batches) if b.get("Puts") == [{"Key": "release", "Value": after["release"]}]]
    assert switch and all("Deletes" not in b for b in batches[:switch[0]])  # the switch after every put,
    assert all("Puts" not in b for b in batches[switch[0] + 1:])  # and before any deletion
    calls = tmp_path / "calls.txt"
    fake = tmp_path / "bin" / "aws"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nn=$(wc -l < {calls})\necho "E$((n - 1))"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    ran = subprocess.run([str(out / "update-kvs.sh")], env={**os.environ, "KVS_ARN": "arn:aws:cloudfront::1:key-value-store/x"},
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    recorded = calls.read_text().splitlines()
    assert recorded[0].startswith("cloudfront-keyvaluestore describe-key-value-store --kvs-arn arn:aws:cloudfront::1:")
    assert len(recorded) == 1 + len(batches)
    for number, line in enumerate(recorded[1:], start=1):  # each call names the ETag the one before returned
        assert f"--if-match E{number - 1} --cli-input-json file://kvs-update/{number:04d}.json" in line, line
    # without KVS_ARN it says what to set, and calls nothing
    unset = subprocess.run([str(out / "update-kvs.sh")], env={k: v for k, v in os.environ.items() if k != "KVS_ARN"},
                           capture_output=True, text=True, timeout=60)
    assert unset.returncode != 0 and "set KVS_ARN to the ARN of the KeyValueStore" in unset.stderr
