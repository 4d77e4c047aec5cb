"""REDbot (Mark Nottingham's HTTP linter: each answer checked against the HTTP RFCs, and probed again with
conditional, ranged and compressed requests of its own) over the API on a real nginx: no "bad" and no
"warning" note on any route of the set — the five endpoints, an error, the root, a release-scoped document,
the TimeGate and a TimeMap, an export, the list of releases and its feeds, the reference pages."""
from __future__ import annotations

import subprocess
import sys

import orjson

from generator.contract import routes

from ..conftest import ROOT
from ..live import auth_header

API = routes.API


def redbot_findings(requests: list[tuple[str, list[tuple[str, str]]]]) -> dict[str, list]:
    """Return REDbot's check of each (URL, request headers), in a process of its own (its event loop runs once a
    process and leaves its resolver's threads behind): URL → [status, its bad and warning notes]."""
    done = subprocess.run([sys.executable, "-m", "tests.redbot_check"], input=orjson.dumps(requests), cwd=ROOT,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    return orjson.loads(done.stdout)


def test_redbot_finds_nothing_bad_and_nothing_to_warn_of(live):
    keyed = [("Authorization", auth_header("alice", live.keys["alice"], "apikey"))]
    base = f"http://127.0.0.1:{live.port}"
    releases = orjson.loads(live.get(f"{API}/releases/").body)
    site_url = releases["timemap"].removesuffix(routes.url_for("timemap"))  # what a TimeMap's original names
    release = releases["current"]
    live_from = next(entry for entry in releases["releases"] if entry["id"] == release)["liveFrom"]
    paths = [
        (f"{API}/", keyed), (f"{API}/configuration/riskscoremodels/", keyed), (f"{API}/configuration/countries/", keyed),
        (f"{API}/riskscores/sovereign/", keyed), (f"{API}/riskscores/sovereign/AUT/", keyed),
        (f"{API}/riskscores/nothing/", keyed),  # an error: the JSON 404
        ("/", []), ("/docs/explorer/", []),  # the reference pages, no key
        (f"{API}/releases/{release}/riskscores/sovereign/AUT/", keyed),  # release-scoped: immutable
        (f"{API}/riskscores/sovereign/AUT/?as_of={live_from}", keyed),  # the TimeGate's 302
        (f"{API}/timemap/{site_url}{API}/riskscores/sovereign/AUT/", keyed), (f"{API}/releases/timemap", keyed),
        (f"{API}/exports/scores.csv", keyed), (f"{API}/exports/scores.parquet", keyed),
        (f"{API}/releases/", keyed), (f"{API}/releases/feed.json", keyed), (f"{API}/releases/feed.atom", keyed)]
    findings = redbot_findings([(base + path, headers) for path, headers in paths])
    statuses = {url: status for url, (status, _) in findings.items()}
    assert statuses == {base + path: 404 if "nothing" in path else 302 if "as_of" in path else 200
                        for path, _ in paths}  # each answered as meant, so its notes are about that answer
    assert {url: notes for url, (_, notes) in findings.items() if notes} == {}
    assert len(findings) == len(paths) == 17
