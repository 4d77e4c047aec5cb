"""Every kept release stays answerable under /api/v1/releases/{id}/…, byte for byte what it answered
as current, with every rule of the current routes. On nginx; the edges follow."""
from __future__ import annotations

import json

import pytest

from generator.history.site import current_release
from generator.publish.build_release import build

from ..conftest import TINY, make_nga_black
from ..live import assert_error_headers, moved_on, refreshed, serving_copy_of, start_server

# (path, user): endpoints 1-5 with filters and orderings, an export, a custom model, the release document
RECORDED = [
    ("/api/v1/configuration/riskscoremodels/", "alice"),
    ("/api/v1/configuration/countries/?name=Nigeria", "bob"),
    ("/api/v1/riskscores/sovereign/?ordering=-country_name", "bob"),
    ("/api/v1/riskscores/sovereign/NGA/", "bob"),
    ("/api/v1/riskscores/country/NGA/", "alice"),
    ("/api/v1/riskscores/acme_aml/NGA/", "alice"),
    ("/api/v1/exports/scores.csv", "bob"),
    ("/api/v1/releases/current/", "alice"),
]


@pytest.fixture(scope="module", params=["nginx", "workerd", "cloudfront"])
def two_releases(request, tmp_path_factory):
    """Yield release A of the tiny fixture with its answers recorded (on nginx), then release B (NGA's FATF
    status black: acme_aml moves), served by nginx or deployed with both to the Worker (real workerd) or to
    S3 and the CloudFront Functions."""
    with serving_copy_of(TINY, tmp_path_factory.mktemp("scoped")) as server:
        first = current_release(server.site)
        recorded = {(path, user): server.get(path, user=user) for path, user in RECORDED}
        make_nga_black(server.data)
        build(server.data, server.site)
        server.runtime.refresh()
        served = [start_server(request.param, server, request)]
        try:
            yield served, first, recorded
        finally:
            if served[0] is not server:
                served[0].runtime.stop()


def scoped(release: str, path: str) -> str:
    """Return a route's path under a release; the release document is the release itself."""
    if path == "/api/v1/releases/current/":
        return f"/api/v1/releases/{release}/"
    return path.replace("/api/v1/", f"/api/v1/releases/{release}/", 1)


def test_every_recorded_answer_comes_back_byte_for_byte_under_its_release(two_releases):
    (server,), first, recorded = two_releases
    assert current_release(server.site) != first
    assert server.get("/api/v1/riskscores/acme_aml/NGA/", user="alice").body != \
        recorded[("/api/v1/riskscores/acme_aml/NGA/", "alice")].body  # the current answer moved on
    for (path, user), before in recorded.items():
        again = server.get(scoped(first, path), user=user)
        assert (again.status, again.body) == (200, before.body), path
        assert again.header("x-release") == first
        assert again.header("content-type") == before.header("content-type")


def test_a_release_scoped_answer_is_immutable_and_says_when_and_what_it_is(two_releases):
    (server,), first, _ = two_releases
    answer = server.get(scoped(first, "/api/v1/riskscores/sovereign/?ordering=-country_name"), user="bob")
    assert answer.header("cache-control") == "private, max-age=31536000, immutable"
    # every URI absolute, from the release's site address: the original, its TimeGate, the TimeMap
    site, original = "http://127.0.0.1:8080", "/api/v1/riskscores/sovereign/?ordering=-country_name"
    assert answer.header("link") == (f'<{site}{original}>; rel="original", <{site}/api/v1/timegate/{site}{original}>; '
                                     f'rel="timegate", <{site}/api/v1/timemap/{site}{original}>; rel="timemap"; '
                                     'type="application/link-format"')
    assert answer.header("memento-datetime").endswith(" GMT")  # an HTTP-date: when the release went live
    current = server.get("/api/v1/riskscores/sovereign/", user="bob")  # an original: it names its TimeGate
    assert current.header("cache-control") == "private, no-cache"
    here = f"{site}/api/v1/riskscores/sovereign/"
    assert current.header("link") == (f'<{site}/api/v1/timegate/{here}>; rel="timegate", '
                                      f'<{site}/api/v1/timemap/{here}>; rel="timemap"; type="application/link-format"')
    assert server.get("/api/v1/releases/", user="bob").header("link") is None  # no route of the past: none
    assert current.header("memento-datetime") is None


def test_the_release_itself_answers_its_own_release_document(two_releases):
    (server,), first, recorded = two_releases
    for path in (f"/api/v1/releases/{first}/", f"/api/v1/releases/{first}"):
        answer = server.get(path, user="alice")
        assert answer.body == recorded[("/api/v1/releases/current/", "alice")].body
        assert json.loads(answer.body)["id"] == first


def test_every_rule_of_the_current_routes_holds_under_a_release(two_releases):
    (server,), first, _ = two_releases
    no_key = server.get(scoped(first, "/api/v1/riskscores/sovereign/"), user=None)
    assert (no_key.status, json.loads(no_key.body)) == (403, {"detail": "Authentication credentials were not provided."})
    revoked = server.get(scoped(first, "/api/v1/riskscores/sovereign/"), user="carol")
    assert revoked.status == 403
    # a custom model: only with the grant (bob has none), as the current routes answer
    assert server.get(scoped(first, "/api/v1/riskscores/acme_aml/NGA/"), user="bob").status == 404
    for form in ("apikey", "bare", "basic"):
        assert server.get(scoped(first, "/api/v1/riskscores/acme_aml/NGA/"), user="alice", form=form).status == 200
    slashless = server.get(scoped(first, "/api/v1/riskscores/sovereign/nga"), user="bob")
    assert slashless.status == 200 and json.loads(slashless.body)["entity"]["countryCode"] == "NGA"
    bad = server.get(scoped(first, "/api/v1/riskscores/sovereign/?ordering=best"), user="bob")
    assert (bad.status, bad.body) == (400, server.get("/api/v1/riskscores/sovereign/?ordering=best", user="bob").body)
    assert server.get(scoped(first, "/api/v1/riskscores/nosuch/"), user="bob").status == 404
    assert server.get(scoped(first, "/api/v1/releases/current/riskscores/sovereign/"), user="bob").status == 404


def test_an_unknown_release_is_404_and_a_pruned_one_410(two_releases):
    (server,), first, _ = two_releases
    never = server.get("/api/v1/releases/20000101T000000Z/riskscores/sovereign/", user="bob")
    assert never.status == 404
    assert json.loads(never.body) == {"detail": "No release 20000101T000000Z; GET /api/v1/releases/ lists the releases kept."}
    served, _, _ = two_releases
    for _ in range(2):  # keep 1: the newest and the one before it stay; A goes, once no server answers from it
        build(TINY, server.site, force=True, keep=1)
        moved_on(server)
    server = served[0] = refreshed(server)
    gone = server.get(scoped(first, "/api/v1/riskscores/sovereign/"), user="bob")
    assert gone.status == 410 and gone.header("x-release") == first
    assert json.loads(gone.body) == {"detail": f"Release {first} is no longer kept; GET /api/v1/releases/ lists the "
                                               "releases kept."}
    assert_error_headers(gone)
