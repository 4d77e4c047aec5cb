"""Releases over time on nginx: the list of kept releases and the TimeMap, the TimeGate
(Accept-Datetime, ?as_of=), staging and promote. The journal's instants are set by hand, so every
instant below is worked out from them:

    A live from 2026-03-01T00:00:00Z (Sun, 01 Mar 2026 00:00:00 GMT) until B went live,
    B live from 2026-06-01T00:00:00Z (Mon, 01 Jun 2026 00:00:00 GMT), live now.
"""
from __future__ import annotations

import json

import pytest

from generator.contract import locations
from generator.errors import ChangesRefused, PublishError
from generator.history.catalogue import CATALOGUE, JOURNAL, read_history
from generator.history.site import RELEASES, current_release, rollback
from generator.publish.build_release import build
from generator.publish.promote import promote
from generator.serve.keys import add_key
from tools.synthetic_data import main as synthetic_data

from ..conftest import TINY, make_nga_black
from ..live import moved_on, served_on, serving_copy_of
from ..serve.test_release_scoped import RECORDED, scoped

A_LIVE, B_LIVE = "2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z"


def set_journal(site, lines: list[tuple[str, str, str]]) -> None:
    """Set the site's history to these (action, release, instant) switches: written as the text journal of
    earlier versions, in place of the catalogue, and imported (as an upgraded site's is)."""
    for made in site.glob(f"{CATALOGUE}*"):
        made.unlink()
    (site / JOURNAL).write_text("".join(f"{a} {r} {t}\n" for a, r, t in lines))
    assert [(s.action, s.release) for s in read_history(site).switches] == [(a, r) for a, r, _ in lines]


def serve_a_and_b(request, tmp_path_factory, change=make_nga_black):
    """Yield release A with its answers recorded (on nginx), then B (`change` made to the data), live at the
    instants above; served by nginx, or deployed with both releases to the Cloudflare Worker (real
    workerd) or to S3 (real Ceph) and the CloudFront Functions (the harness)."""
    with serving_copy_of(TINY, tmp_path_factory.mktemp("history")) as server:
        first = current_release(server.site)
        recorded = {(path, user): server.get(path, user=user) for path, user in RECORDED}
        change(server.data)
        build(server.data, server.site)
        second = current_release(server.site)
        set_journal(server.site, [("publish", first, A_LIVE), ("publish", second, B_LIVE)])
        server.runtime.refresh()
        with served_on(request.param, server, request) as edge:
            edge.kind = request.param
            yield edge, first, second, recorded


@pytest.fixture(scope="module", params=["nginx", "workerd", "cloudfront"])
def nga_a_and_b(request, tmp_path_factory):
    """Serve A, then B with acme_aml's NGA black (serve_a_and_b), on each server."""
    yield from serve_a_and_b(request, tmp_path_factory)


def follow(server, answer, user):
    """Return the answer at a 302's Location (a path: nginx names no host in redirects)."""
    assert answer.status == 302, answer.body
    location = answer.header("location")
    assert location.startswith("/api/v1/releases/")
    return server.get(location, user=user)


def test_the_list_of_releases_says_when_each_was_live_newest_first(nga_a_and_b):
    server, first, second, _ = nga_a_and_b
    answer = server.get("/api/v1/releases/", user="bob")
    assert answer.status == 200 and answer.header("content-type") == "application/json; charset=utf-8"
    listed = json.loads(answer.body)
    assert listed["current"] == second and listed["timemap"].endswith("/api/v1/releases/timemap")
    assert [(r["id"], r["status"], r["liveFrom"], r["liveUntil"]) for r in listed["releases"]] == [
        (second, "live", B_LIVE, None), (first, "kept", A_LIVE, B_LIVE)]
    newest = listed["releases"][0]
    assert newest["previous"] == first and newest["url"].endswith(f"/api/v1/releases/{second}/")
    # the slash-less form too; no key: 403
    assert server.get("/api/v1/releases", user="bob").body == answer.body
    assert server.get("/api/v1/releases/", user=None).status == 403


def test_the_list_shows_a_custom_model_only_to_keys_granted_it(nga_a_and_b):
    server, _, _, _ = nga_a_and_b
    def models(user):
        return [[m["code"] for m in r["models"]] for r in json.loads(server.get("/api/v1/releases/", user=user).body)["releases"]]
    assert models("bob") == [["sdg", "sovereign"]] * 2
    assert models("alice") == [["acme_aml", "sdg", "sovereign"]] * 2
    # alice's list counts acme_aml's class change in B (NGA grey → black: one country moved)
    alice = json.loads(server.get("/api/v1/releases/", user="alice").body)["releases"][0]
    assert {m["code"]: m["classChanges"] for m in alice["models"]}["acme_aml"] == 1


def test_the_timemap_lists_each_kept_release_as_a_memento(nga_a_and_b):
    server, first, second, _ = nga_a_and_b
    answer = server.get("/api/v1/releases/timemap", user="bob")
    assert answer.status == 200 and answer.header("content-type").startswith("application/link-format")
    links = answer.body.decode().split(",\n")
    assert links[0].endswith('/api/v1/releases/current/>; rel="original timegate"')
    assert links[1].endswith('/api/v1/releases/timemap>; rel="self"; type="application/link-format"; '
                             'from="Sun, 01 Mar 2026 00:00:00 GMT"; until="Mon, 01 Jun 2026 00:00:00 GMT"')
    assert links[2].endswith(f'/api/v1/releases/{first}/>; rel="first memento"; datetime="Sun, 01 Mar 2026 00:00:00 GMT"')
    assert links[3].rstrip().endswith(f'/api/v1/releases/{second}/>; rel="last memento"; '
                                      'datetime="Mon, 01 Jun 2026 00:00:00 GMT"')
    assert len(links) == 4


def test_a_past_instant_leads_to_what_was_answered_then_byte_for_byte(nga_a_and_b):
    server, first, _, recorded = nga_a_and_b
    for (path, user), before in recorded.items():
        asked = server.get(path, user=user, headers={"Accept-Datetime": "Sun, 15 Mar 2026 12:00:00 GMT"})
        assert asked.header("location") == scoped(first, path) and asked.header("vary") == \
            "Accept-Encoding, Authorization, Accept-Datetime"
        assert f'<http://127.0.0.1:8080{path}>; rel="original"' in asked.header("link")  # absolute (RFC 7089 clients)
        assert follow(server, asked, user).body == before.body, path
        by_query = server.get(path + ("&" if "?" in path else "?") + "as_of=2026-04-01", user=user)
        assert by_query.header("location") == scoped(first, path)  # as_of left out, the other arguments kept
        assert follow(server, by_query, user).body == before.body, path


@pytest.mark.parametrize(("as_of", "live"), [
    ("2026-05-31T23:59:59Z", "A"),            # the last second of A
    ("2026-06-01T00:00:00Z", "B"),            # B from its first second
    ("2026-06-01", "B"),                      # a date is its 00:00:00Z
    ("2026-05-31T23:30:00-01:00", "B"),       # = 2026-06-01T00:30:00Z
    ("2026-06-01T00:30:00%2B01:00", "A"),     # = 2026-05-31T23:30:00Z (+ escaped)
    ("2026-06-01T00:30:00+01:00", "A"),       # a raw + (a space to form decoders) is the offset's too
    ("2026-03-01T00:00:00.5Z", "A"),
])
def test_as_of_reads_dates_and_offsets(nga_a_and_b, as_of, live):
    server, first, second, _ = nga_a_and_b
    answer = server.get(f"/api/v1/riskscores/sovereign/NGA/?as_of={as_of}", user="bob")
    assert answer.header("location") == f"/api/v1/releases/{first if live == 'A' else second}/riskscores/sovereign/NGA/"


def test_instants_nothing_kept_answers_and_malformed_ones(nga_a_and_b):
    server, first, _, _ = nga_a_and_b
    before = server.get("/api/v1/riskscores/sovereign/?as_of=2026-02-28T23:59:59Z", user="bob")
    assert (before.status, json.loads(before.body)) == (404, {"detail": (
        f"No kept release was live at 2026-02-28T23:59:59Z: the oldest kept, {first}, went live at "
        f"{A_LIVE}. GET /api/v1/releases/ lists the releases kept.")})
    # a year below 1000 is read as written (not as 1900 + it, as JavaScript's Date.UTC reads 0-99)
    for as_of, shown in (("0001-01-01", "0001-01-01T00:00:00Z"), ("0099-12-31T23:00:00Z", "0099-12-31T23:00:00Z"),
                         ("0999-06-01T00:00:00%2B01:00", "0999-05-31T23:00:00Z")):
        ancient = server.get(f"/api/v1/riskscores/sovereign/?as_of={as_of}", user="bob")
        assert (ancient.status, json.loads(ancient.body)["detail"]) == (404, (
            f"No kept release was live at {shown}: the oldest kept, {first}, went live at "
            f"{A_LIVE}. GET /api/v1/releases/ lists the releases kept.")), as_of
    for bad in ("2026-02-30", "2026-06-01T24:00:00Z", "yesterday", "2026-06-01T00:00:00", "20260601"):
        answer = server.get(f"/api/v1/riskscores/sovereign/?as_of={bad}", user="bob")
        assert answer.status == 400 and json.loads(answer.body)["detail"].startswith("Invalid value for as_of"), bad
    for bad in ("2026-06-01T00:00:00Z", "Mon, 01 Jun 2026 00:00:00 UTC", "Mon, 31 Jun 2026 00:00:00 GMT"):
        answer = server.get("/api/v1/", user="bob", headers={"Accept-Datetime": bad})
        assert answer.status == 400 and json.loads(answer.body)["detail"].startswith("Invalid Accept-Datetime"), bad
    # an empty as_of counts as absent, as every parameter's empty value: the answer of now
    assert server.get("/api/v1/riskscores/sovereign/?as_of=", user="bob").status == 200
    assert server.get("/api/v1/riskscores/sovereign/?as_of=&as_of=2026-04-01", user="bob").status == 200  # the first
    # the key first: no key is 403 whatever the instant
    assert server.get("/api/v1/riskscores/sovereign/?as_of=2026-04-01", user=None).status == 403
    # the list, the TimeMap and a release under its id are no TimeGates: answered as they are
    for path in ("/api/v1/releases/", "/api/v1/releases/timemap", f"/api/v1/releases/{first}/"):
        assert server.get(path, user="bob", headers={"Accept-Datetime": "Sun, 15 Mar 2026 12:00:00 GMT"}).status == 200


def test_the_release_document_and_root_lead_to_the_release_then(nga_a_and_b):
    server, first, _, _ = nga_a_and_b
    for path in ("/api/v1/releases/current/", "/api/v1/", "/api/v1"):
        answer = server.get(f"{path}?as_of=2026-04-01", user="bob")
        assert answer.header("location") == f"/api/v1/releases/{first}/", path


def test_an_instant_of_a_pruned_release_is_410(tmp_path):
    with serving_copy_of(TINY, tmp_path) as server:
        first = current_release(server.site)
        for _ in range(3):  # keep 1: the newest and the rollback target stay; the first two go
            build(server.data, server.site, force=True, keep=1)
            moved_on(server)  # as serve does: nginx moves on, its lease with it
        built = [first] + [s.release for s in read_history(server.site).switches[1:]]
        assert read_history(server.site).removed == set(built[:2])
        # each folder stayed while nginx answered from it, and went once it moved on (its lease let go)
        assert not (server.site / RELEASES / built[1]).exists() and not (server.site / RELEASES / first).exists()
        # the order they were live in (the journal's stack ends at the current one): a kept release
        # first, then the two pruned ones, then the current one
        set_journal(server.site, [("publish", built[2], "2026-01-01T00:00:00Z"), ("publish", first, "2026-02-01T00:00:00Z"),
                                  ("publish", built[1], "2026-03-01T00:00:00Z"), ("publish", built[3], "2026-04-01T00:00:00Z")])
        server.runtime.refresh()
        gone = server.get("/api/v1/riskscores/sovereign/?as_of=2026-02-15", user="bob")
        assert (gone.status, json.loads(gone.body)) == (410, {"detail": (
            f"Release {first}, live at 2026-02-15T00:00:00Z, is no longer kept. GET /api/v1/releases/ lists the "
            "releases kept.")})
        assert gone.header("cache-control") == "no-store"
        assert server.get("/api/v1/riskscores/sovereign/?as_of=2026-01-15", user="bob").header("location") == \
            f"/api/v1/releases/{built[2]}/riskscores/sovereign/"
        assert server.get("/api/v1/riskscores/sovereign/?as_of=2025-12-31", user="bob").status == 404


def test_rollbacks_keep_live_from_and_until_true(tmp_path):
    with serving_copy_of(TINY, tmp_path) as server:
        a = current_release(server.site)
        b = build(server.data, server.site, force=True).release
        assert rollback(server.site) == a
        c = build(server.data, server.site, force=True).release
        assert rollback(server.site) == a
        # the journal's five switches, dated a month apart
        switches = read_history(server.site).switches
        assert [(s.action, s.release) for s in switches] == [("publish", a), ("publish", b), ("rollback", a),
                                                             ("publish", c), ("rollback", a)]
        set_journal(server.site, [(s.action, s.release, f"2026-0{n}-01T00:00:00Z") for n, s in enumerate(switches, 1)])
        server.runtime.refresh()
        listed = json.loads(server.get("/api/v1/releases/", user="bob").body)["releases"]
        # a: Jan, then Mar-Apr, then May-now; b: Feb; c: April
        assert {r["id"]: (r["status"], r["liveFrom"], r["liveUntil"], [(p["from"], p["until"]) for p in r["livePeriods"]])
                for r in listed} == {
            a: ("live", "2026-01-01T00:00:00Z", None, [("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"),
                                                       ("2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"),
                                                       ("2026-05-01T00:00:00Z", None)]),
            b: ("kept", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z", [("2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z")]),
            c: ("kept", "2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z", [("2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z")])}
        # and the TimeGate follows every period: March is a again, April c
        for as_of, live in (("2026-02-15", b), ("2026-03-15", a), ("2026-04-15", c), ("2026-05-15", a)):
            answer = server.get(f"/api/v1/riskscores/sovereign/?as_of={as_of}", user="bob")
            assert answer.header("location") == f"/api/v1/releases/{live}/riskscores/sovereign/", as_of


def test_a_staged_release_is_seen_by_preview_keys_only_until_promoted(tmp_path):
    with serving_copy_of(TINY, tmp_path) as server:
        live = current_release(server.site)
        reviewer = add_key(server.keys_file, "reviewer", preview=True).key
        server.keys["reviewer"] = reviewer
        make_nga_black(server.data)
        staged = build(server.data, server.site, stage=True).release
        server.runtime.refresh()
        assert current_release(server.site) == live
        path = f"/api/v1/releases/{staged}/riskscores/acme_aml/NGA/"
        assert server.get(path, user="alice").status == 404  # as a release never built
        assert server.get(f"/api/v1/releases/{staged}/", user="bob").status == 404
        answer = server.get(f"/api/v1/releases/{staged}/", user="reviewer")
        assert answer.status == 200 and json.loads(answer.body)["id"] == staged
        assert server.get("/api/v1/releases/current/", user="reviewer").header("x-release") == live
        statuses = {r["id"]: r["status"] for r in json.loads(server.get("/api/v1/releases/", user="reviewer").body)["releases"]}
        assert statuses == {staged: "staged", live: "live"}
        assert [r["id"] for r in json.loads(server.get("/api/v1/releases/", user="bob").body)["releases"]] == [live]

        assert promote(server.site, staged) == live
        server.runtime.refresh()
        assert server.get("/api/v1/releases/current/", user="bob").header("x-release") == staged
        assert server.get(path, user="alice").status == 200
        statuses = {r["id"]: r["status"] for r in json.loads(server.get("/api/v1/releases/", user="bob").body)["releases"]}
        assert statuses == {staged: "live", live: "kept"}
        last = read_history(server.site).switches[-1]
        assert (last.action, last.release) == ("promote", staged)


def test_promote_refuses_what_a_build_would(tmp_path):
    # A synthetic dataset of 60 countries whose sovereign observations are cut after a fifth of the file
    # (as test_bad_data_files' cut-short release): a build refuses it, and so does a promote of it staged.
    data, site = tmp_path / "data", tmp_path / "site"
    synthetic_data(["--out", str(data), "--countries", "60", "--years", "3", "--models", "2"])
    live = build(data, site).release
    with pytest.raises(PublishError, match=f"{live} is not a staged release"):
        promote(site, live)
    observations = data / "observations" / "sovereign.csv"
    whole = observations.read_text(encoding="utf-8")
    lines = whole.splitlines(keepends=True)
    observations.write_text("".join(lines[: len(lines) // 5]), encoding="utf-8")
    staged = build(data, site, stage=True, guard=None).release
    with pytest.raises(ChangesRefused, match="If the data release means it, promote with --accept-changes"):
        promote(site, staged)
    assert current_release(site) == live
    # staged against a release that is no longer current: its changes would compare with the wrong one
    observations.write_text(whole, encoding="utf-8")
    newer = build(data, site, force=True).release
    with pytest.raises(PublishError, match=f"was staged against {live}, but the current release is {newer}"):
        promote(site, staged, guard=None)
    assert current_release(site) == newer


SITE = "http://127.0.0.1:8080"  # the --site-url the releases link to


def local_session(server, user: str):
    """Return a requests session as a client sets one up (the key in its headers) that reaches the server under
    test at SITE (a transport adapter sends it there, as a DNS name would) and no other host: what it
    asks elsewhere is recorded, with the key it carried, and never sent."""
    import requests
    here = f"http://127.0.0.1:{server.port}"

    class ToTheServerUnderTest(requests.adapters.HTTPAdapter):
        def send(self, request, **kwargs):
            request.url = here + request.url.removeprefix(SITE)
            return super().send(request, **kwargs)
    elsewhere: list[tuple[str, str | None]] = []

    class NowhereElse(requests.adapters.HTTPAdapter):  # every other host: intercepted, never reached
        def send(self, request, **kwargs):
            elsewhere.append((request.url, request.headers.get("Authorization")))
            raise requests.exceptions.ConnectionError(f"intercepted: {request.url}")
    session = requests.Session()
    session.mount("http://", NowhereElse())
    session.mount("https://", NowhereElse())
    session.mount(SITE, ToTheServerUnderTest())  # the longest prefix wins
    session.mount(here, requests.adapters.HTTPAdapter())  # redirects followed from the server under test
    session.headers["Authorization"] = f"apikey {user}:{server.keys[user]}"
    return session, elsewhere


def test_a_memento_client_finds_the_memento_through_the_documented_timegate_prefix(nga_a_and_b):
    """memento-client (PyPI) as docs/api.md sets it up: our TimeGate prefix, then the original URI."""
    import datetime

    from memento_client import MementoClient

    server, first, second, _ = nga_a_and_b
    session, elsewhere = local_session(server, "alice")
    client = MementoClient(timegate_uri=f"{SITE}/api/v1/timegate/", session=session)
    original = f"{SITE}/api/v1/riskscores/sovereign/AUT/"
    info = client.get_memento_info(original, datetime.datetime(2026, 3, 15, 12, 0))  # while A was live
    closest = info["mementos"]["closest"]
    assert closest["uri"][0].endswith(f"/api/v1/releases/{first}/riskscores/sovereign/AUT/")
    assert closest["datetime"] == datetime.datetime(2026, 3, 1)  # A went live at 2026-03-01T00:00:00Z
    now = client.get_memento_info(original, datetime.datetime(2026, 7, 1))  # B is live since 1 June
    assert now["mementos"]["closest"]["uri"][0].endswith(f"/api/v1/releases/{second}/riskscores/sovereign/AUT/")
    assert elsewhere == []  # the documented set-up sends nothing, least of all the key, to another host


def test_a_client_following_the_originals_timegate_link_reaches_the_memento_and_no_other_host(nga_a_and_b):
    """RFC 7089's discovery: read the original's `Link`, ask the URI its rel names "timegate" with
    Accept-Datetime, follow the redirect: the memento of the release live then, nothing sent elsewhere."""
    import requests.utils

    server, first, second, _ = nga_a_and_b
    session, elsewhere = local_session(server, "bob")
    original = f"{SITE}/api/v1/riskscores/sovereign/CIV/"
    links = requests.utils.parse_header_links(session.get(original).headers["Link"])
    timegate = next(link["url"] for link in links if "timegate" in link["rel"].split())
    # A went live 2026-03-01T00:00:00Z, B 2026-06-01T00:00:00Z: asked within each, each release's memento
    for when, release, live in (("Sun, 15 Mar 2026 12:00:00 GMT", first, "Sun, 01 Mar 2026 00:00:00 GMT"),
                                ("Wed, 01 Jul 2026 00:00:00 GMT", second, "Mon, 01 Jun 2026 00:00:00 GMT")):
        answer = session.get(timegate, headers={"Accept-Datetime": when})
        assert answer.history and answer.history[0].status_code == 302
        assert answer.status_code == 200 and answer.url.endswith(f"/api/v1/releases/{release}/riskscores/sovereign/CIV/")
        assert answer.headers["Memento-Datetime"] == live
    assert elsewhere == []


def test_the_timegate_of_a_uri_answers_for_this_api_s_routes_only(nga_a_and_b):
    server, _, second, _ = nga_a_and_b
    site = "http://127.0.0.1:8080"
    latest = server.get(f"/api/v1/timegate/{site}/api/v1/riskscores/sovereign/?ordering=-country_name", user="bob")
    assert latest.status == 302  # no Accept-Datetime: the release live now
    assert latest.header("location") == f"/api/v1/releases/{second}/riskscores/sovereign/?ordering=-country_name"
    links = latest.header("link")
    assert f'<{site}/api/v1/riskscores/sovereign/?ordering=-country_name>; rel="original"' in links
    assert f'<{site}/api/v1/releases/{second}/riskscores/sovereign/?ordering=-country_name>; rel="memento"' in links
    assert all(uri.startswith("<http") for uri in links.split(", "))  # every URI absolute
    assert server.get(f"/api/v1/timegate/{site}/api/v1/riskscores/sovereign/", user=None).status == 403
    for other in ("http://example.org/api/v1/riskscores/sovereign/", f"{site}/api/v1/releases/", f"{site}/docs/"):
        refused = server.get(f"/api/v1/timegate/{other}", user="bob")
        assert refused.status == 404 and "No TimeGate here" in json.loads(refused.body)["detail"], other


def test_each_route_has_its_own_timemap_of_the_releases_that_answered_it(nga_a_and_b):
    server, first, second, _ = nga_a_and_b
    site, route = "http://127.0.0.1:8080", "/api/v1/riskscores/sovereign/AUT/"
    answer = server.get(f"/api/v1/timemap/{site}{route}", user="alice")
    assert answer.status == 200 and answer.header("content-type").startswith("application/link-format")
    links = [link.strip() for link in answer.body.decode().split(",\n")]
    # A went live 2026-03-01T00:00:00Z, B 2026-06-01T00:00:00Z (A_LIVE, B_LIVE), and both answered the route
    assert links == [
        f'<{site}{route}>; rel="original"', f'<{site}/api/v1/timegate/{site}{route}>; rel="timegate"',
        f'<{site}/api/v1/timemap/{site}{route}>; rel="self"; type="application/link-format"; '
        'from="Sun, 01 Mar 2026 00:00:00 GMT"; until="Mon, 01 Jun 2026 00:00:00 GMT"',
        f'<{site}{scoped(first, route)}>; rel="first memento"; datetime="Sun, 01 Mar 2026 00:00:00 GMT"',
        f'<{site}{scoped(second, route)}>; rel="last memento"; datetime="Mon, 01 Jun 2026 00:00:00 GMT"']
    # a custom model exists only for keys granted it: bob's TimeMap of acme_aml's scores lists no memento
    bobs = server.get(f"/api/v1/timemap/{site}/api/v1/riskscores/acme_aml/", user="bob")
    assert bobs.status == 200 and "memento" not in bobs.body.decode()
    assert "memento" in server.get(f"/api/v1/timemap/{site}/api/v1/riskscores/acme_aml/", user="alice").body.decode()
    # the original and each memento point at their own route's TimeMap
    own = f'<{site}/api/v1/timemap/{site}{route}>; rel="timemap"; type="application/link-format"'
    assert own in server.get(route, user="alice").header("link")
    assert own in server.get(scoped(first, route), user="alice").header("link")
    assert server.get(f"/api/v1/timemap/{site}{route}", user=None).status == 403
    assert server.get(f"/api/v1/timemap/{site}/api/v1/releases/", user="bob").status == 404


def test_the_timegate_answers_head_without_a_body_on_a_connection_kept_alive(nga_a_and_b):
    """Memento clients ask TimeGates with HEAD over one connection: a body after a HEAD's headers would
    be read as the next answer's status line."""
    import http.client
    server, first, _, _ = nga_a_and_b
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        for path in ("/api/v1/riskscores/sovereign/AUT/", "/api/v1/timegate/http://127.0.0.1:8080/api/v1/riskscores/sovereign/AUT/"):
            for _ in range(2):  # the second answer on the same connection reads clean
                connection.request("HEAD", path, headers={"Authorization": f"apikey bob:{server.keys['bob']}",
                                                          "Accept-Datetime": "Sun, 15 Mar 2026 12:00:00 GMT"})
                answer = connection.getresponse()
                assert answer.status == 302 and answer.read() == b"", path
                assert answer.getheader("Location") == f"/api/v1/releases/{first}/riskscores/sovereign/AUT/"
    finally:
        connection.close()


def test_a_document_a_release_did_not_change_keeps_its_etag(nga_a_and_b):
    """A client's If-None-Match still gets a 304 after a release that did not change the document."""
    from generator.history.site import read_manifest
    server, first, second, _ = nga_a_and_b
    before, after = (read_manifest(server.site / RELEASES / r) for r in (first, second))
    same = [p for p in sorted(after) if p.startswith("api/v1/riskscores/") and p.endswith("/index.json")
            and "audience=" not in p and before.get(p, {}).get("sha256") == after[p]["sha256"]]
    assert same  # B moved acme_aml's NGA and a few sovereign scores: most documents are the same bytes
    for file in same[:3]:
        path = locations.url_of(file)
        then = server.get(scoped(first, path), user="alice")
        assert then.status == 200 and then.header("etag"), path
        now = server.get(path, user="alice", headers={"If-None-Match": then.header("etag")})
        assert now.status == 304, (path, then.header("etag"), server.get(path, user="alice").header("etag"))
