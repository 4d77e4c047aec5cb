"""The API root, /releases/current/ and the bulk exports, served by the real nginx (tests/fixtures/tiny;
alice holds acme_aml, bob holds nothing)."""
from __future__ import annotations

import csv
import gzip
import io
import json
import re

import brotli
import pytest

from generator.building.render.exports import HEADER
from generator.contract import locations, routes
from generator.history.site import CURRENT
from generator.publish.build_release import build

from ..conftest import SERVERS, TINY

API = routes.API


SERVED_BY = SERVERS  # every test taking `live` runs on nginx, the Worker and CloudFront (conftest.py)


def _json(answer):
    assert answer.status == 200, answer.body
    return json.loads(answer.body)


def test_the_root_answers_without_a_key_and_names_the_release(live):
    answer = live.get(f"{API}/", user=None)
    root = _json(answer)
    assert answer.header("Content-Type") == "application/json; charset=utf-8"
    assert root["release"]["id"] == answer.header("X-Release") == (live.site / CURRENT).resolve().name
    # built at the time its id says: 20261123T121117Z → 2026-11-23T12:11:17Z
    release_id = root["release"]["id"]
    assert root["release"]["builtAt"] == (f"{release_id[:4]}-{release_id[4:6]}-{release_id[6:8]}T"
                                          f"{release_id[9:11]}:{release_id[11:13]}:{release_id[13:15]}Z")
    assert [e["url"] for e in root["endpoints"]] == [f"http://127.0.0.1:8080{API}{e.path}" for e in routes.ENDPOINTS]
    assert {e["operationId"]: e["keyRequired"] for e in root["endpoints"]}["getApiRoot"] is False
    assert root["links"] == {"openapi": f"http://127.0.0.1:8080{API}/openapi.json",
                             "docs": "http://127.0.0.1:8080/docs/", "changes": "http://127.0.0.1:8080/docs/changes/"}
    assert live.get(API, user=None).body == answer.body  # without the slash too
    assert live.get(f"{API}/", user="carol").status == 200  # a revoked key does not matter here


def test_the_current_release_needs_a_key_and_shows_only_granted_models(live):
    assert live.get(f"{API}/releases/current/", user=None).status == 403
    assert live.get(f"{API}/releases/current/", user="carol").status == 403
    alice = live.get(f"{API}/releases/current", user="alice")
    bob = live.get(f"{API}/releases/current/", user="bob")
    mine, public = _json(alice), _json(bob)
    assert mine["id"] == public["id"] == alice.header("X-Release") == bob.header("X-Release")
    assert [m["code"] for m in mine["models"]] == ["acme_aml", "sdg", "sovereign"]
    assert [m["code"] for m in public["models"]] == ["sdg", "sovereign"]
    assert bob.body == live.release_file(locations.current_release().file)  # byte for byte the public one
    # tests/fixtures/tiny: the latest actual sovereign data is of 2024, for AUT and CIV (NGA has no
    # current score: too few indicators), so the vintage is 2024-12-31 and 2 countries are scored
    sovereign = {m["code"]: m for m in public["models"]}["sovereign"]
    assert (sovereign["dataVintage"], sovereign["countriesScored"]) == ("2024-12-31", 2)
    # the exports of this release, under its id: still this release's rows once another is current
    scoped = f"http://127.0.0.1:8080{API}/releases/{public['id']}"
    assert public["exports"]["csv"] == f"{scoped}/exports/scores.csv"
    # each model a key may see lists its own exports: alice's acme_aml, never bob's
    assert {m["code"]: m["exports"]["jsonl"] for m in mine["models"]}["acme_aml"] == (
        f"{scoped}/exports/acme_aml/scores.jsonl")
    assert [m["exports"]["csv"] for m in public["models"]] == [
        f"{scoped}/exports/{code}/scores.csv" for code in ("sdg", "sovereign")]
    exported = live.get(public["exports"]["csv"].removeprefix("http://127.0.0.1:8080"), user="bob")
    assert exported.status == 200 and exported.body == live.release_file(locations.export("csv").file)
    # the first release: everything was added, and bob's count leaves out acme_aml's documents
    assert public["previous"] is None and public["documents"]["changed"] == 0
    assert mine["documents"]["added"] > public["documents"]["added"] > 0


def _csv_rows(body: bytes) -> list[dict]:
    reader = csv.DictReader(io.StringIO(body.decode()))
    assert tuple(reader.fieldnames) == HEADER
    return list(reader)


def _expected_rows(live, model: str, code: str) -> list[dict]:
    """Return the rows an export must hold for one model and country, read off endpoint 4 independently."""
    document = _json(live.get(f"{API}/riskscores/{model}/{code}/"))
    levels = [("model", "", document["results"])]
    levels += [("section", s["reference"], s["results"]) for s in document["sections"]]
    levels += [("indicator", i["reference"], i["results"]) for i in document["indicators"]]
    rows = []
    for level, reference, results in levels:
        for r in results:
            value = (r.get("data") or {}).get("value")
            rows.append({"model": model, "country_code": code, "level": level, "reference": reference,
                         "date": r["timestamp"], "type": r["type"], "score": r.get("score"),
                         "risk_class": r.get("riskClassificationCategorical"),
                         "country_rank": r.get("countryRank"), "risk_points": r.get("riskPoints"),
                         "weight": r.get("weight"), "raw_value": value[0] if value else None})
    return rows


def _number(cell: str):
    return None if cell == "" else float(cell)


def _assert_rows_are(rows: list[dict], expected: list[dict]) -> None:
    assert len(rows) == len(expected) > 0
    for row, want in zip(rows, expected):
        for column in ("model", "country_code", "level", "reference", "date", "type"):
            assert row[column] == want[column], (column, want)
        assert row["risk_class"] == (want["risk_class"] or "")
        for column in ("score", "country_rank", "risk_points", "weight"):
            assert _number(row[column]) == want[column], (column, want)
        raw = want["raw_value"]
        assert row["raw_value"] == ("" if raw is None else raw if isinstance(raw, str) else json.dumps(raw))


@pytest.mark.parametrize("user", ["alice", "bob"])
def test_the_csv_export_holds_the_public_models_number_for_number_the_same_for_every_key(live, user):
    answer = live.get(f"{API}/exports/scores.csv", user=user)
    assert answer.status == 200
    assert answer.header("Content-Type") == "text/csv; charset=utf-8"
    assert answer.header("Content-Disposition") == (
        f'attachment; filename="country-risk-scores-{answer.header("X-Release")}.csv"')
    # alice's grant of acme_aml does not change it: a custom model's rows are in its own export
    expected = [row for model in ("sdg", "sovereign") for code in ("AUT", "CIV", "NGA")
                for row in _expected_rows(live, model, code)]
    _assert_rows_are(_csv_rows(answer.body), expected)
    assert answer.body == live.release_file(locations.export("csv").file)


@pytest.mark.parametrize("model", ["acme_aml", "sovereign"])
def test_a_models_own_export_equals_its_json_documents_number_for_number(live, model):
    answer = live.get(f"{API}/exports/{model}/scores.csv", user="alice")
    assert answer.status == 200, answer.body
    assert answer.header("Content-Type") == "text/csv; charset=utf-8"
    assert answer.header("Content-Disposition") == (
        f'attachment; filename="country-risk-scores-{model}-{answer.header("X-Release")}.csv"')
    rows = _csv_rows(answer.body)
    _assert_rows_are(rows, [row for code in ("AUT", "CIV", "NGA") for row in _expected_rows(live, model, code)])
    lines = live.get(f"{API}/exports/{model}/scores.jsonl", user="alice")
    assert lines.status == 200
    assert [(line["model"], line["country_code"], line["level"], line.get("reference", ""), line["date"])
            for line in map(json.loads, lines.body.decode().splitlines())] == [
        (row["model"], row["country_code"], row["level"], row["reference"], row["date"]) for row in rows]


def test_a_custom_models_export_is_not_found_without_the_grant(live):
    for path in (f"{API}/exports/acme_aml/scores.csv", f"{API}/exports/acme_aml/scores.jsonl",
                 f"{API}/exports/nosuchmodel/scores.csv"):
        answer = live.get(path, user="bob")
        assert answer.status == 404, path
        assert answer.header("Content-Type") == "application/json; charset=utf-8"
        assert answer.header("Content-Disposition") is None
        assert json.loads(answer.body) == {"detail": "Not found."}
    assert live.get(f"{API}/exports/sovereign/scores.csv", user="bob").status == 200  # a public model's: every key's
    assert live.get(f"{API}/exports/acme_aml/scores.csv", user=None).status == 403  # the key is checked first


def test_the_json_lines_export_holds_the_same_rows_typed(live):
    rows = _csv_rows(live.get(f"{API}/exports/scores.csv").body)
    answer = live.get(f"{API}/exports/scores.jsonl")
    assert answer.header("Content-Type") == "application/x-ndjson; charset=utf-8"
    lines = [json.loads(line) for line in answer.body.decode().splitlines()]
    assert len(lines) == len(rows)
    for line, row in zip(lines, rows):
        assert [c for c in HEADER if c in line] == list(line)  # in column order, empty ones left out
        for column in HEADER:
            value = line.get(column)
            assert value is not None or row[column] == "", column
            if column == "raw_components":
                assert row[column] == "; ".join(f"{k}={v}" for k, v in (value or {}).items())
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                assert float(row[column]) == value, column
            else:
                assert row[column] == ("" if value is None else value), column


def test_exports_need_a_key_and_come_compressed(live):
    assert live.get(f"{API}/exports/scores.csv", user=None).status == 403
    assert live.get(f"{API}/exports/scores.jsonl", user="carol").status == 403
    plain = live.get(f"{API}/exports/scores.jsonl").body
    zipped = live.get(f"{API}/exports/scores.jsonl", headers={"Accept-Encoding": "gzip"})
    assert zipped.header("Content-Encoding") == "gzip" and gzip.decompress(zipped.body) == plain
    squeezed = live.get(f"{API}/exports/scores.jsonl", headers={"Accept-Encoding": "br"})
    assert squeezed.header("Content-Encoding") == "br" and brotli.decompress(squeezed.body) == plain
    assert live.request("HEAD", f"{API}/exports/scores.csv").body == b""


SITE = "https://risk.example.com/country-risk"  # served under a path, as behind a reverse proxy
LINK = re.compile(r"https?://[^\s\"'<>\\),&]+")  # & ends a link in HTML text (&#34;)
# names, never fetched: the explorer's SVG namespace, schema.org's vocabulary (the page's Dataset), the Data
# Package profile (a package's $schema, and the spec the schema of one links to)
XML_NAMESPACES = {"http://www.w3.org/2000/svg", "https://schema.org/",
                  "https://datapackage.org/profiles/2.0/datapackage.json", "https://datapackage.org/"}


def test_the_site_url_reaches_every_link_of_a_release(tmp_path):
    report = build(TINY, tmp_path / "site", site_url=SITE)
    release = tmp_path / "site" / CURRENT
    # the only links not on the site: the indicators' sources, as tests/fixtures/tiny/indicators.csv gives them
    sources = set(LINK.findall((TINY / "indicators.csv").read_text()))
    links: dict[str, set[str]] = {}
    for path in release.rglob("*"):
        if path.suffix in (".json", ".html", ".js", ".csv", ".jsonl") and "nginx" not in path.parts:
            for link in set(LINK.findall(path.read_text())) - sources:
                links.setdefault(link, set()).add(str(path.relative_to(release)))
    elsewhere = {link: files for link, files in links.items()
                 if not link.startswith(SITE + "/") and link not in XML_NAMESPACES}
    assert elsewhere == {}
    found = set(links)
    assert f"{SITE}/docs/models/sovereign/" in found  # a public model's url: its methodology page
    assert f"{SITE}/api/v1/" in found and f"{SITE}/api/v1/releases/current/" in found
    assert f"{SITE}/api/v1/configuration/riskscoremodels/" in found  # the reference's curl lines
    openapi = json.loads((release / "api/v1/openapi.json").read_bytes())
    assert openapi["servers"] == [{"url": f"{SITE}/api/v1"}]
    acme = json.loads((release / locations.country_model_scores("acme_aml", "AUT").file).read_bytes())
    assert "url" not in acme["model"]  # a custom model has no public page to link to
    assert report.published
