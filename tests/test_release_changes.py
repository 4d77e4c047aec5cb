"""What a release changed (issue 22, item 1): /api/v1/releases/current/changes/ and a kept release's
/api/v1/releases/{id}/changes/, on nginx, the Cloudflare Worker (workerd) and CloudFront (the harness
over Ceph), against `riskapi diff`.

Release A is the tiny fixture; B moves acme_aml's NGA from FATF grey to black (tests/conftest.py):
its one indicator, fatf_list, scores 50 of 100 points grey and 100 of 100 black, so the fatf section
and the model go from 50.0 to 100.0 — risk class Medium (3) to Very High (5), a downgrade. Nothing
else moves; bob (no grant) must not learn of it."""
from __future__ import annotations

import json

from click.testing import CliRunner

from generator.cli import main
from generator.diff import diff_releases, read_snapshot
from generator.publish import RELEASES
from generator import routes

from .test_release_history import a_and_b  # noqa: F401  (the fixture: A and B on every server)

CHANGES = f"{routes.API}/releases/current/changes/"


def _json(answer):
    assert answer.status == 200, answer.body
    return json.loads(answer.body)


def test_the_change_document_says_what_riskapi_diff_says(a_and_b):  # noqa: F811
    server, first, second, _ = a_and_b
    mine = _json(server.get(CHANGES, user="alice"))
    assert (mine["id"], mine["previous"]) == (second, first)
    acme = {m["code"]: m for m in mine["models"]}["acme_aml"]
    assert acme["classChanges"] == [{"countryCode": "NGA", "from": "Medium", "to": "Very High", "direction": "downgrade",
                                     "scoreBefore": 50.0, "scoreAfter": 100.0, "move": 50.0,
                                     "sectionMovedMost": {"reference": "fatf", "scoreBefore": 50.0, "scoreAfter": 100.0}}]
    assert acme["largestMoves"] == [{"countryCode": "NGA", "scoreBefore": 50.0, "scoreAfter": 100.0, "move": 50.0}]
    assert (acme["ratingChanges"], acme["countriesAdded"], acme["countriesRemoved"]) == ([], [], [])
    # the same numbers as riskapi diff, which compares the two release folders
    diff = diff_releases(read_snapshot(server.site / RELEASES / first), read_snapshot(server.site / RELEASES / second))
    for model in diff.models:
        served = {m["code"]: m for m in mine["models"]}[model.model]
        assert [c["countryCode"] for c in served["classChanges"]] == [c.code for c in model.class_changes]
        assert [c["countryCode"] for c in served["ratingChanges"]] == [c.code for c in model.rating_changes]
        assert [(c["countryCode"], c["move"]) for c in served["largestMoves"]] == [
            (c.code, c.score_move) for c in model.largest_moves]
    printed = CliRunner().invoke(main, ["diff", "--site", str(server.site), first, second]).output
    assert "acme_aml: 1 class, 0 rating and 1 rank changes" in printed and "NGA: Medium → Very High" in printed
    # every document that changed, as a URL with the digest of its bytes now: re-fetch just those
    changed = {d["url"].removeprefix("http://127.0.0.1:8080"): d["sha256"] for d in mine["documents"]["changed"]}
    assert set(changed) == {routes.url_of(path) for path in diff.changed}
    assert "/api/v1/riskscores/acme_aml/NGA/" in changed and mine["documents"]["added"] == []


def test_a_client_without_the_grant_learns_nothing_of_the_custom_model(a_and_b):  # noqa: F811
    server, _, _, _ = a_and_b
    public = _json(server.get(CHANGES, user="bob"))
    assert [m["code"] for m in public["models"]] == ["sdg", "sovereign"]
    assert all(m["classChanges"] == [] and m["largestMoves"] == [] for m in public["models"])
    assert not any("acme_aml" in d["url"] for kind in public["documents"].values() for d in kind)
    assert server.get(CHANGES, user=None).status == 403


def test_a_kept_release_keeps_its_change_document_and_polling_is_cheap(a_and_b):  # noqa: F811
    server, first, second, _ = a_and_b
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


def test_the_feeds_have_an_entry_per_release_with_its_movers_for_that_key(a_and_b):  # noqa: F811
    import feedparser
    import jsonschema_rs
    from .live import auth_header
    from .test_release_history import A_LIVE, B_LIVE
    server, first, second, _ = a_and_b
    basic = {"Authorization": auth_header("alice", server.keys["alice"], "basic")}  # what feed readers send
    answer = server.get(f"{routes.API}/releases/feed.json", user=None, headers=basic)
    feed = _json(answer)
    assert jsonschema_rs.validator_for(JSON_FEED, validate_formats=True).is_valid(feed)
    assert [(i["id"], i["date_published"]) for i in feed["items"]] == [
        (f"urn:country-risk-api:release:{second}", B_LIVE), (f"urn:country-risk-api:release:{first}", A_LIVE)]
    assert feed["items"][0]["content_text"] == "acme_aml: 1 downgrade — NGA Medium → Very High"
    assert feed["items"][0]["external_url"].endswith(f"/api/v1/releases/{second}/changes/")
    assert feed["items"][1]["content_text"] == "the first release"
    bobs = _json(server.get(f"{routes.API}/releases/feed.json", user="bob"))
    assert bobs["items"][0]["content_text"] == "no risk class or rating changed"  # acme_aml is not his to know
    atom = server.get(f"{routes.API}/releases/feed.atom", user=None, headers=basic)
    assert atom.status == 200 and atom.header("content-type").startswith("application/atom+xml")
    parsed = feedparser.parse(atom.body)
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert [(e.id, e.updated, e.summary) for e in parsed.entries] == [
        (i["id"], i["date_published"], i["content_text"]) for i in feed["items"]]
    assert server.get(f"{routes.API}/releases/feed.atom", user=None).status == 403
    again = server.get(f"{routes.API}/releases/feed.atom", user=None,
                       headers={**basic, "If-None-Match": atom.header("etag")})
    assert again.status == 304  # polling is cheap
