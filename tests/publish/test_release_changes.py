"""What a release changed: /api/v1/releases/current/changes/ and a kept release's
/api/v1/releases/{id}/changes/, on nginx, the Cloudflare Worker (workerd) and CloudFront (the harness
over Ceph), against `riskapi diff`.

Release A is the tiny fixture; B plants three moves (`plant_moves`):
- acme_aml, NGA from FATF grey to black (tests/conftest.py): its one indicator, fatf_list, scores 50 of
  100 points grey and 100 of 100 black, so the fatf section and the model go from 50.0 to 100.0 — risk
  class Medium (3) to Very High (5), a downgrade; bob (no grant) must not learn of it.
- sovereign, AUT's inflation 2024 from 4.0 (25 points: 3 ≤ x < 10) to 2.0 (0 points: x < 3): its
  points go from 25 to 0 of 250 (growth 2.5: 0 of 100, rule of law 1.6: 0 of 100, inflation 0 of 50;
  IMF programme not applicable to a high-income country), the score from 10.0 to 0.0, the rating from
  round(10.0 × 21 / 100) = 2, AA+, to max(1, 0) = 1, AAA: an upgrade; the class stays Very Low.
- sovereign, NGA gains growth 2024 (1.0) and rule of law 2024 (0.5): with inflation 2024 that is 3 of
  its 4 applicable indicators (0.75 ≥ the 0.30 cut-off; it had 1 of 4), so NGA is scored: a country
  added."""
from __future__ import annotations

import hashlib
import json

import pytest
from click.testing import CliRunner

from generator.building.diff import diff_releases, read_snapshot
from generator.cli import main
from generator.contract import locations, routes
from generator.history.site import RELEASES

from ..conftest import make_nga_black, replace_in
from ..history.test_release_history import serve_a_and_b


def plant_moves(data):
    make_nga_black(data)
    observations = data / "observations" / "sovereign.csv"
    replace_in(observations, "inflation,AUT,2024,4.0,actual", "inflation,AUT,2024,2.0,actual")
    replace_in(observations, "inflation,NGA,2024,20,actual",
               "inflation,NGA,2024,20,actual\ngdp_growth,NGA,2024,1.0,actual\nrule_of_law,NGA,2024,0.5,actual")


@pytest.fixture(scope="module", params=["nginx", "workerd", "cloudfront"])
def moves_a_and_b(request, tmp_path_factory):
    """Serve A, then B with the three planted moves, on each server."""
    yield from serve_a_and_b(request, tmp_path_factory, plant_moves)

CHANGES = f"{routes.API}/releases/current/changes/"


def _json(answer):
    assert answer.status == 200, answer.body
    return json.loads(answer.body)


def test_the_change_document_says_what_riskapi_diff_says(moves_a_and_b):
    server, first, second, _ = moves_a_and_b
    mine = _json(server.get(CHANGES, user="alice"))
    assert (mine["id"], mine["previous"]) == (second, first)
    acme = {m["code"]: m for m in mine["models"]}["acme_aml"]
    assert acme["classChanges"] == [{"countryCode": "NGA", "from": "Medium", "to": "Very High", "direction": "downgrade",
                                     "scoreBefore": 50.0, "scoreAfter": 100.0, "move": 50.0,
                                     "sectionMovedMost": {"reference": "fatf", "scoreBefore": 50.0, "scoreAfter": 100.0}}]
    assert acme["largestMoves"] == [{"countryCode": "NGA", "scoreBefore": 50.0, "scoreAfter": 100.0, "move": 50.0}]
    assert (acme["ratingChanges"], acme["countriesAdded"], acme["countriesRemoved"]) == ([], [], [])
    sovereign = {m["code"]: m for m in mine["models"]}["sovereign"]
    aut = {c["countryCode"]: c for c in sovereign["ratingChanges"]}["AUT"]
    assert {k: aut[k] for k in ("from", "to", "direction", "scoreBefore", "scoreAfter", "move")} == {
        "from": "AA+", "to": "AAA", "direction": "upgrade", "scoreBefore": 10.0, "scoreAfter": 0.0, "move": -10.0}
    assert aut["sectionMovedMost"]["reference"] == "economy"  # inflation is an economy indicator
    assert "AUT" not in {c["countryCode"] for c in sovereign["classChanges"]}  # Very Low before and after
    assert sovereign["countriesAdded"] == ["NGA"] and sovereign["countriesRemoved"] == []
    nga = {c["countryCode"]: c for c in sovereign["classChanges"]}["NGA"]
    scored = _json(server.get("/api/v1/riskscores/sovereign/NGA/", user="bob"))["results"]
    now = next(r for r in scored if r["type"] == "current")
    assert (nga["from"], nga["to"], nga["direction"], nga["scoreBefore"], nga["scoreAfter"]) == (
        None, now["riskClassificationCategorical"], "new", None, now["score"])
    # by hand: growth 1.0 → 50 points (0 ≤ x < 2), inflation 20 → 50 (x ≥ 10), rule of law 0.5 → 40
    # (0 ≤ x < 1): 140 of 250 (the IMF programme has no value: no maximum of its own) = 56.0, Medium
    assert (nga["to"], nga["scoreAfter"]) == ("Medium", 56.0)
    # the same numbers as riskapi diff, which compares the two release folders
    diff = diff_releases(read_snapshot(server.site / RELEASES / first), read_snapshot(server.site / RELEASES / second))
    for model in diff.models:
        served = {m["code"]: m for m in mine["models"]}[model.model]
        assert [c["countryCode"] for c in served["classChanges"]] == [c.code for c in model.class_changes]
        assert [c["countryCode"] for c in served["ratingChanges"]] == [c.code for c in model.rating_changes]
        # (a country scored in one release only has no move: riskapi diff counts it from 0)
        assert [(c["countryCode"], c.get("move")) for c in served["largestMoves"]] == [
            (c.code, c.score_move if c.old and c.new else None) for c in model.largest_moves]
    printed = CliRunner().invoke(main, ["diff", "--site", str(server.site), first, second]).output
    assert "acme_aml: 1 class, 0 rating and 1 rank changes" in printed and "NGA: Medium → Very High" in printed
    assert f"sovereign: {len(sovereign['classChanges'])} class, 2 rating" in printed  # AUT's, and NGA's first
    # every document that changed, as a URL with the digest of its bytes now: re-fetch just those
    changed = {d["url"].removeprefix("http://127.0.0.1:8080"): d["sha256"] for d in mine["documents"]["changed"]}
    assert set(changed) == {locations.url_of(path) for path in diff.changed}
    assert "/api/v1/riskscores/acme_aml/NGA/" in changed and mine["documents"]["added"] == []


def test_a_client_without_the_grant_learns_nothing_of_the_custom_model(moves_a_and_b):
    server, _, _, _ = moves_a_and_b
    public = _json(server.get(CHANGES, user="bob"))
    assert [m["code"] for m in public["models"]] == ["sdg", "sovereign"]
    assert {m["code"]: m for m in public["models"]}["sovereign"]["countriesAdded"] == ["NGA"]  # public: bob's too
    assert not any("acme_aml" in d["url"] for kind in public["documents"].values() for d in kind)
    assert server.get(CHANGES, user=None).status == 403


def test_a_kept_release_keeps_its_change_document_and_polling_is_cheap(moves_a_and_b):
    server, first, second, _ = moves_a_and_b
    scoped = server.get(f"{routes.API}/releases/{first}/changes/", user="alice")
    assert (_json(scoped)["id"], _json(scoped)["previous"]) == (first, None)  # the first release changed nothing:
    assert _json(scoped)["documents"] == {"added": [], "changed": [], "removed": []}  # nothing to re-fetch selectively
    assert "immutable" in scoped.header("cache-control")
    assert server.get(f"{routes.API}/releases/{second}/changes", user="alice").body == \
        server.get(CHANGES, user="alice").body  # without the slash too
    answer = server.get(CHANGES, user="alice")
    again = server.get(CHANGES, user="alice", headers={"If-None-Match": answer.header("etag")})
    assert again.status == 304 and again.body == b""


# JSON Feed 1.1 (https://jsonfeed.org/version/1.1) as a schema: what the specification requires, and
# the fields this API writes with their types
JSON_FEED = {
    "type": "object", "required": ["version", "title", "items"],
    "properties": {
        "version": {"const": "https://jsonfeed.org/version/1.1"}, "title": {"type": "string"},
        "home_page_url": {"type": "string", "format": "uri"}, "feed_url": {"type": "string", "format": "uri"},
        "description": {"type": "string"}, "language": {"type": "string"},
        "authors": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "items": {"type": "array", "items": {
            "type": "object", "required": ["id"], "anyOf": [{"required": ["content_text"]}, {"required": ["content_html"]}],
            "properties": {"id": {"type": "string"}, "url": {"type": "string", "format": "uri"},
                           "external_url": {"type": "string", "format": "uri"}, "title": {"type": "string"},
                           "content_text": {"type": "string"}, "date_published": {"type": "string", "format": "date-time"}}}}}}


def test_the_feeds_have_an_entry_per_release_with_its_movers_for_that_key(moves_a_and_b):
    import feedparser
    import jsonschema_rs

    from ..history.test_release_history import A_LIVE, B_LIVE
    from ..live import auth_header
    server, first, second, _ = moves_a_and_b
    basic = {"Authorization": auth_header("alice", server.keys["alice"], "basic")}  # what feed readers send
    answer = server.get(f"{routes.API}/releases/feed.json", user=None, headers=basic)
    assert answer.header("content-type") == "application/feed+json; charset=utf-8"  # JSON Feed 1.1's own type
    feed = json.loads(answer.body)
    assert jsonschema_rs.validator_for(JSON_FEED, validate_formats=True).is_valid(feed)
    assert [(i["id"], i["date_published"]) for i in feed["items"]] == [
        (f"urn:country-risk-api:release:{second}", B_LIVE), (f"urn:country-risk-api:release:{first}", A_LIVE)]
    assert feed["items"][0]["content_text"].startswith("acme_aml: 1 downgrade — NGA Medium → Very High; sovereign: ")
    assert "AUT AA+ → AAA" in feed["items"][0]["content_text"]
    assert feed["items"][0]["external_url"].endswith(f"/api/v1/releases/{second}/changes/")
    assert feed["items"][1]["content_text"] == "the first release"
    bobs = _json(server.get(f"{routes.API}/releases/feed.json", user="bob"))
    assert bobs["items"][0]["content_text"].startswith("sovereign: ")  # acme_aml is not his to know
    assert "acme_aml" not in bobs["items"][0]["content_text"]
    atom = server.get(f"{routes.API}/releases/feed.atom", user=None, headers=basic)
    assert atom.status == 200 and atom.header("content-type").startswith("application/atom+xml")
    parsed = feedparser.parse(atom.body)
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert [(e.id, e.updated, e.summary) for e in parsed.entries] == [
        (i["id"], i["date_published"], i["content_text"]) for i in feed["items"]]
    assert server.get(f"{routes.API}/releases/feed.atom", user=None).status == 401  # the challenge to send it
    again = server.get(f"{routes.API}/releases/feed.atom", user=None,
                       headers={**basic, "If-None-Match": atom.header("etag")})
    assert again.status == 304  # polling is cheap


def test_the_change_document_lists_each_url_once_with_the_bytes_that_key_gets(moves_a_and_b):
    server, first, second, _ = moves_a_and_b
    mine = _json(server.get(f"{routes.API}/releases/current/changes/", user="alice"))
    urls = [d["url"].removeprefix("http://127.0.0.1:8080") for kind in mine["documents"].values() for d in kind]
    assert len(urls) == len(set(urls))  # alice's endpoint 5 is her audience's variant, never also the public one
    for entry in mine["documents"]["changed"] + mine["documents"]["added"]:
        url = entry["url"].removeprefix("http://127.0.0.1:8080")
        answer = server.get(url, user="alice")
        assert answer.status == 200, url  # every URL listed answers (openapi.json without a final "/")
        assert hashlib.sha256(answer.body).hexdigest() == entry["sha256"], url  # the bytes alice receives
    # NGA went black in acme_aml: its own exports changed with it, and the change document says so
    assert {f"{routes.API}/exports/acme_aml/scores.csv", f"{routes.API}/exports/acme_aml/scores.jsonl"} <= set(urls)
    # rank moves, as riskapi diff counts them: NGA's acme_aml rank moved 2 → 3 (the tie at 50 broken)
    assert {m["code"]: m["rankChanges"] for m in mine["models"]}["acme_aml"] == 1
