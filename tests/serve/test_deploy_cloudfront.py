"""riskapi deploy cloudfront: the functions, the origin Lambda@Edge and the KeyValueStore entries it
writes, their limits, the keys kept as hashes and by grant set, the switch of releases in one entry,
and the same function code in two engines: Node (which also runs it behind HTTP for the contract
tables, tests/clients/cloudfront_harness.mjs) and njs 0.7.9, whose JavaScript is the family of
CloudFront's runtime."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.contract import serving
from generator.history.catalogue import read_history
from generator.history.site import CURRENT, current_release
from generator.publish.build_release import build
from generator.serve.deploy import cloudfront
from generator.serve.keys import add_key, revoke

from ..conftest import ROOT, TINY, make_nga_black
from ..live import NODE_22

IMPORT = 'import cf from "cloudfront";\n'


def _deploy(*args: str):
    return CliRunner().invoke(main, ["deploy", "cloudfront", *args])


@pytest.fixture
def deployed(tmp_path):
    """Return the tiny fixture's release, two keys (alice granted acme_aml, bob none), and what the deploy wrote."""
    site, keys, out = tmp_path / "site", tmp_path / "keys.csv", tmp_path / "cloudfront"
    build(TINY, site)
    plain = {"alice": add_key(keys, "alice", ("acme_aml",)).key, "bob": add_key(keys, "bob").key}
    result = _deploy("--site", str(site), "--keys", str(keys), "--out", str(out))
    assert result.exit_code == 0, result.output
    return site, keys, out, plain


def keyed(out, key: str) -> str:
    """Return a key as the store holds it: the SHA-1 of the deploy folder's secret (the keys file's) and the key,
    worked here by hand (contract/key_format.py)."""
    secret = (out / ".keys-secret").read_text().strip()
    return hashlib.sha1((secret + key.lower()).encode()).hexdigest()


def _store(out) -> dict[str, str]:
    return {entry["key"]: entry["value"] for entry in json.loads((out / "kvs.json").read_text())["data"]}


def test_the_store_holds_keys_by_grant_set_and_nothing_per_file(deployed, tmp_path):
    site, keys, out, plain = deployed
    release = current_release(site)
    assert sorted(p.name for p in out.iterdir()) == [".keys-secret", "kvs-update", "kvs.json", "origin-lambda",
                                                     "update-kvs.sh", "viewer-request.js", "viewer-response.js"]
    assert sorted(p.name for p in (out / "origin-lambda").iterdir()) == [
        "contract.js", "core.js", "index.js", "instants.js", "keycheck.js", "manifests.js", "package.json",
        "release.json", "variants.js"]
    for path in (p for p in out.rglob("*") if p.is_file()):  # no file holds a key, in any letter case
        assert not any(key.lower().encode() in path.read_bytes().lower() for key in plain.values()), path
    # the store holds digests under the secret, which only the gate's code holds
    secret = (out / ".keys-secret").read_text().strip()
    assert f'"{secret}"' in (out / "viewer-request.js").read_text() and secret not in (out / "kvs.json").read_text()
    assert (out / "viewer-request.js").read_text().startswith(IMPORT + "const DEPLOYED = {")  # declared, not spliced
    entries = json.loads((out / "kvs.json").read_text())["data"]
    assert entries[-1]["key"] == "release"  # the switch comes last
    assert json.loads(entries[-1]["value"]) == {"id": release, "cache_control": "private, no-cache",
                                                "immutable": "private, max-age=31536000, immutable",
                                                "site_url": "http://127.0.0.1:8080"}
    store = _store(out)
    # one entry per active key: its user and grant set; one per release and grant set served a variant
    assert json.loads(store[f"k:{keyed(out, plain['alice'])}"]) == {"user": "alice", "set": "acme_aml"}
    assert json.loads(store[f"k:{keyed(out, plain['bob'])}"]) == {"user": "bob", "set": "public"}
    assert json.loads(store[f"a:{release}:acme_aml"]) == "acme_aml"
    assert json.loads(store[f"r:{release}"])[0] == "k"
    assert sorted(key.split(":")[0] for key in store) == ["a", "k", "k", "r", "release"]
    for key, value in store.items():
        assert len(key.encode()) <= cloudfront.MAX_KEY_BYTES and len(value.encode()) <= cloudfront.MAX_VALUE_BYTES
    # more kept releases add a state and an audience row each, never an entry per user
    data = tmp_path / "data"
    shutil.copytree(TINY, data)
    make_nga_black(data)
    build(data, site)
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(out)).exit_code == 0
    store = _store(out)
    assert sorted(key.split(":")[0] for key in store) == ["a", "a", "k", "k", "r", "r", "release"]
    # the Lambda's release.json holds both releases' states and the route table; their files and tables
    # are their manifests in the bucket, which it reads
    description = json.loads((out / "origin-lambda" / "release.json").read_text())
    assert set(description["tables"]) == {"timeline"} and set(description["states"]) == {release, current_release(site)}
    assert description["routes"]["scope"]["under"] == "/api/v1/releases"
    assert description["contract"] == serving.edge_contract()  # the serving contract comes with the routes


def test_the_functions_are_the_minified_sources_within_their_limits(deployed):
    _, _, out, _ = deployed
    request, response = (out / "viewer-request.js").read_text(), (out / "viewer-response.js").read_text()
    assert request.startswith(IMPORT) and "async function handler(" in request
    assert not response.startswith(IMPORT) and "async function handler(" in response
    # the key gate, with the secret and the release-scoped paths written in: at most 6 KB of CloudFront's 10
    assert len(request.encode()) <= cloudfront.GATE_BYTES == 6144
    assert len(response.encode()) <= cloudfront.MAX_CODE_BYTES
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "edge_bundles.py"), "--check"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr  # generator/serve/edge/bundles/ is the core's modules + handlers as they are


def test_a_key_change_changes_key_entries_only(deployed):
    site, keys, out, _ = deployed
    before = _store(out)
    functions = {name: (out / name).read_bytes() for name in ("viewer-request.js", "viewer-response.js")}
    carol = add_key(keys, "carol").key
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(out)).exit_code == 0
    after = _store(out)
    assert {k for k in after if before.get(k) != after[k]} == {f"k:{keyed(out, carol)}"}
    assert set(before) <= set(after)
    assert all((out / name).read_bytes() == body for name, body in functions.items())


def _lambda(folder, events: list[dict], env: dict) -> list[dict]:
    """Return the Lambda@Edge (origin-lambda/index.js, as deployed) run in Node on each event, with `env` (the
    AWS_* credentials Lambda gives it: its role's)."""
    code = (f"const m = await import({json.dumps((folder / 'index.js').as_uri())});\n"
            f"for (const e of {json.dumps(events)}) console.log(JSON.stringify(await m.handler(e)));")
    done = subprocess.run([str(NODE_22 / "node"), "--input-type=module", "-e", code], capture_output=True, text=True,
                          timeout=30, env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def _handed_on(uri: str, query: str = "", live: str = "", auth: str = "ok", grants: str = "public",
               audience: str = "public", origin: dict | None = None, **more: str) -> dict:
    """Return the origin-request event of a request as the key gate hands it on (Lambda@Edge's form: headers name
    → [{key, value}]), for the S3-compatible `origin` (a custom origin)."""
    headers = {"x-release": live, "x-auth": auth, "x-grants": grants, "x-audience": audience,
               "x-user": "alice" if auth == "ok" else "", **more}
    request = {"method": "GET", "uri": uri, "querystring": query, "origin": origin,
               "headers": {name: [{"key": name, "value": value}] for name, value in headers.items()}}
    return {"Records": [{"cf": {"config": {"eventType": "origin-request"}, "request": request}}]}


def test_the_origin_lambda_routes_by_the_gate_s_headers_and_the_manifests_in_the_bucket(deployed, s3, tmp_path):
    site, _, out, _ = deployed
    release = current_release(site)
    bucket = "risk-lambda-" + hashlib.sha256(str(tmp_path).encode()).hexdigest()[:8]
    s3.client().create_bucket(Bucket=bucket)  # private: the Lambda reads the manifests signed
    uploaded = CliRunner().invoke(main, ["deploy", "s3", "--site", str(site), "--bucket", bucket, "--endpoint-url",
                                         s3.endpoint, "--prefix", "risk"], env=s3.env())
    assert uploaded.exit_code == 0, uploaded.output
    host, port = s3.endpoint.removeprefix("http://").split(":")
    origin = {"custom": {"domainName": host, "port": int(port), "protocol": "http", "path": f"/{bucket}/risk"}}
    listed = json.loads((site / CURRENT / "manifest.json").read_text())["files"]

    def body(relative: str, twin: str = "") -> str:  # the object of a file: its SHA-256 and extension (by hand)
        return f"/objects/{listed[relative]['sha256']}.{relative.rsplit('.', 1)[1]}{twin}"
    live_from = read_history(site).periods[-1].start_text  # within the record: the release's own instant
    asked = [
        _handed_on("/api/v1/riskscores/sovereign/aut", live=release),
        _handed_on("/api/v1/riskscores/sovereign/", "ordering=-country_name", live=release),
        _handed_on("/api/v1/riskscores/acme_aml/NGA/", live=release),  # a custom model the grant set lacks
        _handed_on("/api/v1/riskscores/acme_aml/NGA/", live=release, grants="acme_aml", audience="acme_aml"),
        _handed_on("/api/v1/riskscores/country/AUT/", live=release, grants="acme_aml", audience="acme_aml",
                   **{"accept-encoding": "gzip"}),
        _handed_on("/api/v1/riskscores/sovereign/", live=release, auth="missing", grants=""),
        _handed_on("/api/v1/riskscores/sovereign/", live=release, auth="invalid", grants=""),
        _handed_on("/api/v1/", live=release, auth="missing", grants=""),  # the root needs no key
        _handed_on("/api/v1/riskscores/sovereign/AUT/", f"as_of={live_from}&ordering=x", live=release),
        _handed_on("/api/v1/riskscores/sovereign/AUT/", live="20991231T000000Z"),  # published before that release
        _handed_on("/api/v1/riskscores/sovereign/AUT/", "as_of=2099-01-01", live=release),  # past the record
        _handed_on("/api/v1/exports/scores.csv", live=release),
        _handed_on("/api/v1/nothing-here/", live=release),
    ]
    for event in asked:
        event["Records"][0]["cf"]["request"]["origin"] = origin
    answers = _lambda(out / cloudfront.ORIGIN_LAMBDA, asked, s3.env())
    file, ordered, hidden, granted, audience, missing, invalid, root, gate, stale, future, export, nothing = answers
    assert file["uri"] == body("api/v1/riskscores/sovereign/AUT/index.json") and file["querystring"] == ""
    assert ordered["uri"] == body("api/v1/riskscores/sovereign/ordering=-country_name/index.json")
    assert hidden["status"] == "404" and json.loads(hidden["body"]) == {"detail": "Not found."}
    assert granted["uri"] == body("api/v1/riskscores/acme_aml/NGA/index.json")
    # the variant of the audience the gate found; its gzip encoding only over 1 KB
    variant = "api/v1/riskscores/country/AUT/audience=acme_aml/index.json"
    assert audience["uri"] == body(variant, ".gz" if listed[variant]["size"] > 1024 else "")
    assert missing["status"] == "403" and json.loads(missing["body"])["detail"] == "Authentication credentials were not provided."
    assert invalid["status"] == "403" and json.loads(invalid["body"])["detail"] == "Invalid API key."
    assert root["uri"] == body("api/v1/index.json")
    # the core's own 302: to the route under the release live then, the other arguments kept
    assert gate["status"] == "302"
    assert gate["headers"]["location"] == [{"key": "Location",
                                            "value": f"/api/v1/releases/{release}/riskscores/sovereign/AUT/?ordering=x"}]
    assert gate["headers"]["x-release"][0]["value"] == release
    # an instant after the record the deploy read (its fence: the bucket's record.json): not known there yet
    assert future["status"] == "404" and "retry-after" not in future["headers"]
    assert json.loads(future["body"])["detail"].startswith("No release is known here at 2099-01-01T00:00:00Z yet")
    # a Lambda not yet published again after a new release went live: 503, never the old one for now
    assert stale["status"] == "503" and stale["headers"]["retry-after"][0]["value"] == "60"
    assert stale["headers"]["cache-control"][0]["value"] == "no-store"
    assert "ask again in a minute" in json.loads(stale["body"])["detail"]
    assert nothing["status"] == "404"  # not in the manifest: the API's JSON 404
    # what one body serving many paths cannot carry goes on to the origin response: the download name
    # (the release's in it), an original's TimeGate and TimeMap (an export has past answers too) and the
    # file's digests (asked without a coding: both its manifest's SHA-256)
    carried = json.loads(export["headers"]["x-api-response"][0]["value"])
    site_url, csv = "http://127.0.0.1:8080", "/api/v1/exports/scores.csv"
    listed = json.loads((site / CURRENT / "manifest.json").read_bytes())["files"][csv.lstrip("/")]
    assert carried == {"Repr-Digest": serving.digest_field(listed["sha256"]),
                       "Unencoded-Digest": serving.digest_field(listed["sha256"]),
                       "Content-Disposition": f'attachment; filename="country-risk-scores-{release}.csv"',
                       "Link": f'<{site_url}/api/v1/timegate/{site_url}{csv}>; rel="timegate", '
                               f'<{site_url}/api/v1/timemap/{site_url}{csv}>; rel="timemap"; type="application/link-format"'}
    assert json.loads(ordered["headers"]["x-api-response"][0]["value"])["Link"].startswith(
        f"<{site_url}/api/v1/timegate/{site_url}/api/v1/riskscores/sovereign/?ordering=-country_name>")
    # … where the same Lambda adds them to the object's 200, the download name and digests to its 206, the
    # digests alone to its 304
    responses = [{"Records": [{"cf": {"config": {"eventType": "origin-response"}, "request": export,
                                      "response": {"status": status, "headers": {}}}}]}
                 for status in ("200", "206", "304")]
    ok, partial, not_modified = _lambda(out / cloudfront.ORIGIN_LAMBDA, responses, {})
    disposition = [{"key": "Content-Disposition", "value": carried["Content-Disposition"]}]
    assert ok["headers"]["content-disposition"] == disposition == partial["headers"]["content-disposition"]
    assert ok["headers"]["link"] == [{"key": "Link", "value": carried["Link"]}] and "link" not in partial["headers"]
    digests = {name.lower(): [{"key": name, "value": carried[name]}] for name in ("Repr-Digest", "Unencoded-Digest")}
    assert {name: ok["headers"][name] for name in digests} == {name: partial["headers"][name] for name in digests}
    assert {name: ok["headers"][name] for name in digests} == digests
    assert not_modified["headers"] == digests
    # a manifest the bucket lacks (a release pruned there first): 503, not another release's answer
    s3.client().delete_object(Bucket=bucket, Key=f"risk/manifests/{release}.json")
    [gone] = _lambda(out / cloudfront.ORIGIN_LAMBDA, [asked[0]], s3.env())
    assert gone["status"] == "503" and "ask again in a minute" in json.loads(gone["body"])["detail"]


def test_a_store_over_its_limit_warns_and_strict_fails(deployed, monkeypatch, tmp_path):
    site, keys, _, _ = deployed
    # the tiny release's store: two keys, one audience row, a state and `release`, ~600 bytes; CloudFront's
    # store holds 5 MiB (1,000 keys: ~0.1 MB, whatever the number of kept releases)
    monkeypatch.setattr(cloudfront, "MAX_STORE_BYTES", 300)
    result = _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "over"))
    assert result.exit_code == 0 and "MB, over CloudFront's 0 MiB" in result.output
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


def _headers(answer: dict) -> dict[str, str]:
    return {name: field["value"] for name, field in answer["headers"].items()}


def test_the_functions_answer_alike_in_node_and_njs(deployed, tmp_path):
    site, _, out, plain = deployed
    release = current_release(site)
    alice, bob = f"apikey alice:{plain['alice']}", plain["bob"]
    basic = "Basic " + base64.b64encode(f"bob:{plain['bob']}".encode()).decode()
    events = [_viewer_request(*case) for case in [
        ("GET", "/api/v1/"), ("GET", "/api/v1/riskscores/sovereign/", "", alice),
        ("GET", "/api/v1/riskscores/sovereign/", "", "apikey alice:wrong"), ("GET", "/api/v1/riskscores/acme_aml/", "", bob),
        ("GET", "/api/v1/configuration/countries/", "model=name", basic), ("GET", "/api/v1/", "", f"Bearer {plain['bob']}"),
        ("GET", f"/api/v1/releases/{release}/riskscores/country/AUT/", "code=x", alice),
        ("GET", "/api/v1/../../etc/passwd", "", alice),
    ]]
    request_code = (out / "viewer-request.js").read_text()
    in_node = _run("node", request_code, _store(out), events, tmp_path)
    assert _run("njs", request_code, _store(out), events, tmp_path) == in_node
    handed = [_headers(a) for a in in_node]
    assert all("authorization" not in h and h["x-release"] == release for h in handed)  # no key goes further
    assert [(h["x-auth"], h["x-user"], h["x-grants"], h["x-audience"]) for h in handed] == [
        ("missing", "", "", "public"), ("ok", "alice", "acme_aml", "acme_aml"), ("invalid", "", "", "public"),
        ("ok", "bob", "public", "public"), ("ok", "bob", "public", "public"), ("ok", "bob", "public", "public"),
        ("ok", "alice", "acme_aml", "acme_aml"), ("ok", "alice", "acme_aml", "acme_aml")]
    # a release-scoped request: its release, immutable, when it went live, and the route it is a past answer of
    names = serving.HANDOFF
    scoped = handed[6]
    assert (scoped[names["answering"]], scoped[names["answering_cache"]]) == (release, "private, max-age=31536000, immutable")
    assert scoped[names["memento_datetime"]].endswith(" GMT")
    site, original = "http://127.0.0.1:8080", "/api/v1/riskscores/country/AUT/?code=x"
    assert scoped[names["memento_link"]] == (f'<{site}{original}>; rel="original", <{site}/api/v1/timegate/{site}{original}>; '
                         f'rel="timegate", <{site}/api/v1/timemap/{site}{original}>; rel="timemap"; '
                         'type="application/link-format"')
    # an original's own Links come with its object (the origin-response Lambda), not from the gate
    timegate_link = (f'<{site}/api/v1/timegate/{site}/api/v1/>; rel="timegate", <{site}/api/v1/timemap/{site}/api/v1/>; '
                     'rel="timemap"; type="application/link-format"')
    answer_parts = ("answering", "answering_cache", "memento_datetime", "memento_link")
    plain = {names[part]: handed[0][names[part]] for part in answer_parts}
    assert plain == {names["answering"]: release, names["answering_cache"]: "private, no-cache",
                     names["memento_datetime"]: "", names["memento_link"]: ""}
    metadata = {"x-amz-request-id": {"value": "tx0"}, "cache-control": {"value": "private, no-cache"}}
    answer = {name: {"value": value} for name, value in plain.items()}
    scoped_answer = {names[part]: {"value": scoped[names[part]]} for part in answer_parts}
    responses = [
        # an original's Link and an export's download name: added by the origin-response Lambda
        {"request": {"method": "GET", "uri": "/api/v1/exports/scores.csv", "headers": answer},
         "response": {"statusCode": 200, "headers": {**metadata, "content-type": {"value": "text/csv; charset=utf-8"},
                                                     "content-disposition": {"value": "attachment"},
                                                     "link": {"value": timegate_link},
                                                     "x-amz-request-id": {"value": "tx1"}, "server": {"value": "AmazonS3"}}}},
        {"request": {"method": "GET", "uri": "/docs/", "headers": answer},
         "response": {"statusCode": 200, "headers": {"x-amz-request-id": {"value": "tx2"},  # no original's
                                                     "content-type": {"value": "text/html; charset=utf-8"}}}},
        {"request": {"method": "GET", "uri": "/api/v1/exports/scores.csv", "headers": {
            **answer, "if-none-match": {"value": '"abc"'}}},
         "response": {"statusCode": 304, "headers": {"content-disposition": {"value": "attachment"}}}},  # Ceph: no ETag
        {"request": {"method": "GET", "uri": f"/api/v1/releases/{release}/", "headers": scoped_answer},
         "response": {"statusCode": 200, "headers": {**metadata, "content-type": {"value": "application/json"}}}},
    ]
    response_code = (out / "viewer-response.js").read_text()
    finished = _run("node", response_code, {}, responses, tmp_path)
    assert _run("njs", response_code, {}, responses, tmp_path) == finished
    export, page, not_modified, memento = (_headers(answer) for answer in finished)
    assert export["content-disposition"] == "attachment" and "content-disposition" not in not_modified
    assert export["link"] == timegate_link and "link" not in page and "link" not in not_modified
    assert not any(name.startswith("x-amz-") or name == "server" for name in export)
    assert "script-src 'self'" in page["content-security-policy"]
    assert "script-src" not in export["content-security-policy"]
    assert not_modified["x-release"] == release and not_modified["vary"] == "Accept-Encoding, Authorization, Accept-Datetime"
    assert not_modified["etag"] == '"abc"' and not_modified["cache-control"] == "private, no-cache"
    assert (memento["memento-datetime"], memento["link"]) == (scoped[names["memento_datetime"]],
                                                         scoped[names["memento_link"]])
    assert memento["cache-control"] == "private, max-age=31536000, immutable"


def test_one_entry_switches_the_release(deployed, tmp_path):
    site, keys, out, plain = deployed
    old = current_release(site)
    data = tmp_path / "data"
    shutil.copytree(TINY, data)
    make_nga_black(data)
    build(data, site)
    new = current_release(site)
    assert new != old
    (tmp_path / "next").mkdir()  # the same deployment, the same keys file's secret
    assert _deploy("--site", str(site), "--keys", str(keys), "--out", str(tmp_path / "next")).exit_code == 0
    # the new release's entries are put first, beside the old one's; `release` still names the old one
    store = {**_store(out), **_store(tmp_path / "next"), "release": _store(out)["release"]}
    ask = [_viewer_request("GET", "/api/v1/riskscores/acme_aml/NGA/", "", f"apikey alice:{plain['alice']}")]
    code = (out / "viewer-request.js").read_text()
    assert _headers(_run("node", code, store, ask, tmp_path)[0])["x-release"] == old
    store["release"] = _store(tmp_path / "next")["release"]  # the one write that switches
    assert _headers(_run("node", code, store, ask, tmp_path)[0])["x-release"] == new


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


@pytest.mark.slow
def test_the_local_s3_and_cloudfront_recipe_serves_the_site_and_stops_what_it_started(tmp_path):
    """docs/deploy.md's recipe, as written: python3 -m tests.local_cloudfront serves the site through the
    CloudFront parts over a local S3 until SIGTERM, then stops Ceph and the harness."""
    import signal
    import urllib.request

    from ..live import free_port
    site, keys = tmp_path / "site", tmp_path / "keys.csv"
    build(TINY, site)
    key = add_key(keys, "alice").key
    port = free_port()
    recipe = subprocess.Popen([sys.executable, "-m", "tests.local_cloudfront", "--site", str(site), "--keys", str(keys),
                               "--port", str(port)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        said = recipe.stdout.readline()
        assert said.startswith(f"serving the site through CloudFront's functions on http://127.0.0.1:{port}/"), said
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/riskscores/sovereign/",
                                         headers={"Authorization": f"apikey alice:{key}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.status == 200 and answer.headers["X-Release"] == current_release(site)
        ceph = said.split("on http://127.0.0.1:")[2].split(";")[0]
    finally:
        recipe.send_signal(signal.SIGTERM)
        assert recipe.wait(timeout=90) == 0
    for stopped in (port, int(ceph)):  # the harness and the S3 server are gone
        with pytest.raises(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{stopped}/", timeout=5)


def test_the_local_recipe_names_what_it_needs_when_the_machine_lacks_it(tmp_path):
    """Without Ceph on the PATH the recipe starts nothing and says what to install, in place of a raw
    FileNotFoundError from deep in the S3 server's start."""
    lacking = subprocess.run([sys.executable, "-m", "tests.local_cloudfront", "--site", str(tmp_path / "site")],
                             cwd=ROOT, env={**os.environ, "PATH": str(tmp_path)}, capture_output=True, text=True,
                             timeout=60)
    assert lacking.returncode == 1
    assert lacking.stderr.startswith("ceph, ceph-mon, ceph-osd, radosgw, radosgw-admin not found.")
    assert "apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw ceph-common" in lacking.stderr
    assert "Traceback" not in lacking.stderr and "starting a local S3" not in lacking.stderr
