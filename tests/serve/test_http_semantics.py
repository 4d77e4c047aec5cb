"""RFC 9110 under the contract, the same on every server (nginx, the Worker in workerd, the CloudFront
Functions in front of S3): content codings with q-values, conditional requests, the headers of every
error, HEAD of a file stored in parts, requests nginx refuses before reading them. nginx is the
reference: where the RFC leaves a choice, the edges answer as it does."""
import gzip
import json
import socket

import pytest

from ..conftest import FIXTURES, SERVERS
from ..live import assert_error_headers

API = "/api/v1"
DOCUMENT = f"{API}/riskscores/sdg/CIV/"  # 7,272 bytes: over the 1 KB under which no twin is made
FILE = "api/v1/riskscores/sdg/CIV/index.json"
EXPORT = f"{API}/exports/scores.jsonl"


SERVED_BY = SERVERS  # every test taking `live` runs on nginx, the Worker and CloudFront (conftest.py)


# ---- content codings: what nginx's gzip_static and brotli_static choose -------------------------------

# (Accept-Encoding, the coding answered): q=0 is "not acceptable"; names in any case; `*` and x-gzip name
# neither twin; a parameter but q leaves the coding out (as nginx reads it); brotli first whenever taken.
CODINGS = [("gzip;q=0", None), ("br;q=0, gzip", "gzip"), ("GZIP", "gzip"), ("*", None), ("gzip;q=0.001", "gzip"),
           ("br;q=0.5, gzip;q=1", "br"), ("x-gzip", None), ("gzip;level=1", None), ("br, gzip;q=0", "br"),
           ("identity", None), ("gzip, br;q=0.000", "gzip")]


# workerd encodes the body itself, in the coding the client prefers: gzip where its q is higher than br's
# (nginx has no such choice between its two twin modules). The Worker chooses as workerd will, so that its
# ETag names the body sent.
RUNTIME_PREFERS = {("workerd", "br;q=0.5, gzip;q=1"): "gzip"}


@pytest.mark.parametrize("accepted, coding", CODINGS, ids=[c[0] for c in CODINGS])
def test_the_coding_follows_the_q_values(live, kind, accepted, coding):
    import brotli
    coding = RUNTIME_PREFERS.get((kind, accepted), coding)
    answer = live.get(DOCUMENT, headers={"Accept-Encoding": accepted})
    assert (answer.status, answer.header("content-encoding")) == (200, coding)
    decode = {None: lambda body: body, "gzip": gzip.decompress, "br": brotli.decompress}[coding]
    assert decode(answer.body) == live.release_file(FILE)


def test_each_coding_is_its_own_representation_with_its_own_etag(live):
    tags = {coding: live.get(DOCUMENT, headers={"Accept-Encoding": coding}).header("etag")
            for coding in ("identity", "gzip", "br")}
    assert all(tags.values()) and len(set(tags.values())) == 3, tags
    # the identity ETag does not validate the brotli body, its own does
    other = live.get(DOCUMENT, headers={"Accept-Encoding": "br", "If-None-Match": tags["identity"]})
    assert (other.status, other.header("content-encoding")) == (200, "br")
    same = live.get(DOCUMENT, headers={"Accept-Encoding": "br", "If-None-Match": tags["br"]})
    assert (same.status, same.body) == (304, b"")


# ---- conditional requests ------------------------------------------------------------------------------

def test_if_none_match_compares_weakly_and_takes_lists_and_a_star(live, kind):
    tag = live.get(DOCUMENT).header("etag")
    assert tag.startswith('"')
    for sent in (tag, f"W/{tag}", f'"elsewhere", {tag}', "*"):
        # S3 (Ceph here) compares one tag: a list or `*` never matches there, and the whole answer comes (safe)
        expected = 200 if kind == "cloudfront" and ("," in sent or sent == "*") else 304
        assert live.get(DOCUMENT, headers={"If-None-Match": sent}).status == expected, sent
    assert live.get(DOCUMENT, headers={"If-None-Match": '"elsewhere"'}).status == 200


def test_a_304_carries_what_the_200_would(live):
    whole = live.get(DOCUMENT)
    again = live.get(DOCUMENT, headers={"If-None-Match": whole.header("etag")})
    assert (again.status, again.body) == (304, b"")
    for name in ("etag", "cache-control", "vary", "x-release", "access-control-allow-origin",
                 "access-control-expose-headers", "x-content-type-options"):
        assert again.all(name) == whole.all(name), name  # once each, the same value


def test_if_modified_since_means_not_modified_since_and_yields_to_if_none_match(live):
    import email.utils
    whole = live.get(DOCUMENT)
    stamp = email.utils.parsedate_to_datetime(whole.header("last-modified")).timestamp()
    later, earlier = (email.utils.formatdate(stamp + delta, usegmt=True) for delta in (3600, -3600))
    assert live.get(DOCUMENT, headers={"If-Modified-Since": whole.header("last-modified")}).status == 304
    assert live.get(DOCUMENT, headers={"If-Modified-Since": later}).status == 304  # not modified since then
    assert live.get(DOCUMENT, headers={"If-Modified-Since": earlier}).status == 200
    # an ETag that does not match decides, whatever the date says (RFC 9110 §13.2.2)
    assert live.get(DOCUMENT, headers={"If-None-Match": '"elsewhere"', "If-Modified-Since": later}).status == 200


@pytest.mark.parametrize("server", ["nginx", "workerd"])
def test_if_match_that_fails_is_a_json_412(request, server):
    live = request.getfixturevalue(FIXTURES[server])
    tag = live.get(DOCUMENT).header("etag")
    assert live.get(DOCUMENT, headers={"If-Match": tag}).status == 200
    failed = live.get(DOCUMENT, headers={"If-Match": '"elsewhere"'})
    assert (failed.status, json.loads(failed.body)) == (412, {"detail": "Precondition failed."})
    assert_error_headers(failed)


# ---- errors: every header once, never stored, nothing of a file -----------------------------------------

def raw_request(live, lines: list[str]) -> tuple[int, bytes]:
    """Send a request exactly as written (what http.client cannot: a header twice, a broken escape)."""
    with socket.create_connection(("127.0.0.1", live.port), timeout=10) as connection:
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():
        chunks = b""
        while (size := int(body.split(b"\r\n", 1)[0], 16)) > 0:
            start = body.index(b"\r\n") + 2
            chunks += body[start:start + size]
            body = body[start + size + 2:]
        body = chunks
    return int(head.split(b" ")[1]), body


def test_every_error_the_api_answers_has_its_headers_once(live):
    size = len(live.get(EXPORT, user="bob").body)
    errors = {400: live.get(f"{API}/riskscores/sovereign/?ordering=zz"), 403: live.get(DOCUMENT, user=None),
              404: live.get(f"{API}/riskscores/zzz/"), 405: live.request("DELETE", DOCUMENT),
              416: live.get(EXPORT, user="bob", headers={"Range": f"bytes={size}-"})}
    for status, answer in errors.items():
        assert answer.status == status, (status, answer.status, answer.body[:200])
        assert_error_headers(answer)
    assert errors[416].header("content-range") == f"bytes */{size}"  # 20,406 bytes: the tiny JSON Lines export


def test_nginx_s_own_errors_have_their_headers_once(nginx_server):
    # what only nginx answers (the edges' platforms answer these before any code of ours runs)
    too_large = nginx_server.get(DOCUMENT, headers={"X-Big": "a" * 70_000})
    not_implemented = nginx_server.get(DOCUMENT, headers={"Transfer-Encoding": "zip"})
    for status, answer in ((400, too_large), (501, not_implemented)):
        assert answer.status == status
        assert_error_headers(answer)
    status, body = raw_request(nginx_server, ["GET / HTTP/2.0", "Host: 127.0.0.1"])
    assert (status, json.loads(body)) == (505, {"detail": "HTTP version not supported."})


@pytest.mark.parametrize("target", ["/api/v1/riskscores/sdg/%00/", "/api/v1/riskscores/sdg/%ZZ/", "/api/v1/%0"])
def test_a_broken_escape_in_the_path_is_a_400(live, target):
    status, body = raw_request(live, [f"GET {target} HTTP/1.1", f"Host: 127.0.0.1:{live.port}",
                                      f"Authorization: apikey alice:{live.keys['alice']}", "Connection: close"])
    assert (status, json.loads(body)) == (400, {"detail": "Bad request."})


def test_two_authorization_headers_are_a_400(live):
    status, body = raw_request(live, [f"GET {DOCUMENT} HTTP/1.1", f"Host: 127.0.0.1:{live.port}",
                                      f"Authorization: apikey alice:{live.keys['alice']}",
                                      f"Authorization: apikey bob:{live.keys['bob']}", "Connection: close"])
    assert (status, json.loads(body)) == (400, {"detail": "Bad request."})


def test_an_absolute_target_is_its_path(live):
    status, body = raw_request(live, [f"GET http://127.0.0.1:{live.port}{DOCUMENT} HTTP/1.1",
                                      f"Host: 127.0.0.1:{live.port}",
                                      f"Authorization: apikey alice:{live.keys['alice']}", "Connection: close"])
    assert (status, body) == (200, live.release_file(FILE))


# ---- HEAD -------------------------------------------------------------------------------------------------

def test_head_of_an_export_stored_in_parts_gives_its_length(live):
    # the Worker stores the tiny JSON Lines export (20,406 bytes) in 4 KB parts; HEAD answers from the sizes
    whole = live.get(EXPORT, user="bob")
    head = live.request("HEAD", EXPORT, user="bob")
    assert (head.status, head.body) == (200, b"")
    assert head.header("content-length") == str(len(whole.body)) == whole.header("content-length")
    assert head.header("etag") == whole.header("etag")
    assert head.header("content-disposition") == whole.header("content-disposition")


def test_no_header_of_the_storage_behind_reaches_the_client(live):
    for answer in (live.get(DOCUMENT), live.get(EXPORT, user="bob"), live.get(DOCUMENT, headers={"Range": "bytes=0-9"})):
        names = {name.lower() for name, _ in answer.raw_headers}
        assert not {n for n in names if n.startswith(("x-amz-", "x-rgw-")) or n == "keep-alive"}, names


def test_an_answer_with_nothing_to_validate_is_not_stored(live):
    # the TimeGate's 302 and a URI's TimeMap carry no ETag or Last-Modified: a cache could only ask again
    # (RFC 9111 §4.3), so neither is stored; the list of releases they are worked out from is revalidated
    releases = json.loads(live.get(f"{API}/releases/", user="bob").body)
    live_from = next(r["liveFrom"] for r in releases["releases"] if r["id"] == releases["current"])
    gate = live.get(f"{API}/riskscores/sovereign/?as_of={live_from}", user="bob")
    site = releases["timemap"].removesuffix(f"{API}/releases/timemap")
    timemap = live.get(f"{API}/timemap/{site}{API}/riskscores/sovereign/", user="bob")
    listed = live.get(f"{API}/releases/", user="bob")
    assert [(a.status, a.header("ETag") is None, a.header("Cache-Control")) for a in (gate, timemap, listed)] == [
        (302, True, "no-store"), (200, True, "no-store"), (200, False, "private, no-cache")]
