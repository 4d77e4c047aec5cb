"""The integrity fields of every answer of a file, on a 200, 206 and 304, for GET and HEAD, for each coding a
client takes — on nginx, the Worker and CloudFront's harness alike (tests/fixtures/tiny; alice holds
acme_aml, bob holds nothing):
- Repr-Digest (RFC 9530): the SHA-256 of the bytes as sent, before any decoding (a gzip answer's of its
  gzip bytes);
- Unencoded-Digest: the SHA-256 of the bytes without content coding, the same on every coding: the
  file's manifest SHA-256 and its leaf in the release's tree.
A Range on an encoded answer gets the whole encoded answer (200), a Range on a plain one a 206."""
from __future__ import annotations

import base64
import gzip
import hashlib

import brotli
import orjson
import pytest

from generator.contract import routes
from generator.contract.serving import digest_field
from generator.history.layout import MANIFEST

from ..conftest import SERVERS

API = routes.API
SERVED_BY = SERVERS  # every test taking `live` runs on nginx, the Worker and CloudFront (conftest.py)

# (path, user): a document of every kind — a list, its query variant, an audience's variant, a country's
# scores, the exports, the point-in-time panel, the list of releases and its feeds (the timeline's), a page
FILES = [(f"{API}/", "bob"), (f"{API}/configuration/countries/?model=-name", "bob"),
         (f"{API}/riskscores/sovereign/", "bob"), (f"{API}/configuration/riskscoremodels/", "alice"),
         (f"{API}/riskscores/acme_aml/", "alice"), (f"{API}/exports/scores.csv", "bob"),
         (f"{API}/exports/scores.jsonl", "bob"), (f"{API}/exports/scores.parquet", "bob"),
         (f"{API}/exports/acme_aml/scores.csv", "alice"), (f"{API}/exports/history.parquet", "bob"),
         (f"{API}/releases/", "alice"), (f"{API}/releases/feed.json", "alice"),
         (f"{API}/releases/feed.atom", "alice"), ("/docs/", None)]
CODINGS = ("identity", "gzip", "br")
DECODE = {None: lambda body: body, "gzip": gzip.decompress, "br": brotli.decompress}


def sent_digest(body: bytes) -> str:
    """Return RFC 9530's header value for these bytes, worked out here: sha-256, its 32 bytes in Base64 between
    colons."""
    return "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"


def test_the_digest_is_the_hex_sha256_in_base64_between_colons():
    # SHA-256 of b"abc" (FIPS 180-2's example): ba7816bf…f20015ad, whose Base64 is ungWv48B…FhQ0=
    hex_digest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert digest_field(hex_digest) == "sha-256=:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=:"
    assert digest_field(hex_digest) == sent_digest(b"abc")


@pytest.mark.parametrize(("path", "user"), FILES)
@pytest.mark.parametrize("coding", CODINGS)
def test_every_answer_of_a_file_carries_the_digests_of_the_bytes_sent_and_of_them_uncoded(live, kind, path, user,
                                                                                          coding):
    plain = live.get(path, user=user, headers={"Accept-Encoding": "identity"})
    assert plain.status == 200, plain.body
    unencoded = sent_digest(plain.body)
    asked = {"Accept-Encoding": coding}
    sent = live.get(path, user=user, headers=asked)
    assert sent.status == 200
    twin = coding != "identity" and len(plain.body) > 1024 and not path.endswith(".parquet")  # serving.has_twins
    # Cloudflare encodes a Worker's answer again, and compresses a plain one for a client that takes a coding
    # (wrangler dev's Miniflare sends 8,284 gzip bytes of the docs page where the twin the Worker sent has
    # 8,281): there, only an answer to a client that takes no coding carries a Repr-Digest (docs/deploy.md)
    vouched = kind != "workerd" or coding == "identity"
    if vouched:
        assert sent.header("Content-Encoding") == (coding if twin else None)  # small and binary files: no twins
    assert DECODE[sent.header("Content-Encoding")](sent.body) == plain.body
    # RFC 9530: of the bytes received before decoding; the uncoded bytes' in Unencoded-Digest
    both = (sent_digest(sent.body) if vouched else None, unencoded)
    assert (sent.header("Repr-Digest"), sent.header("Unencoded-Digest")) == both
    head = live.request("HEAD", path, user=user, headers=asked)
    assert (head.status, head.header("Repr-Digest"), head.header("Unencoded-Digest")) == (200, *both)
    unchanged = live.get(path, user=user, headers={**asked, "If-None-Match": sent.header("ETag")})
    assert (unchanged.status, unchanged.header("Repr-Digest"), unchanged.header("Unencoded-Digest")) == (304, *both)
    # a Range: on an answer the server encodes, the whole of it (nginx's gzip_static), else a 206 of the plain
    # bytes; either with the digests of the whole representation
    part = live.get(path, user=user, headers={**asked, "Range": "bytes=0-9"})
    received = DECODE[part.header("Content-Encoding")](part.body)
    if twin:
        assert (part.status, part.header("Content-Range"), received) == (200, None, plain.body)
    else:
        assert (part.status, part.header("Content-Range"), received) == (206, f"bytes 0-9/{len(plain.body)}",
                                                                          plain.body[:10])
    assert (part.header("Repr-Digest"), part.header("Unencoded-Digest")) == both


def test_the_digests_are_the_manifest_s_sha256s_and_a_kept_release_s_answer_keeps_them(live, kind):
    answer = live.get(f"{API}/riskscores/sovereign/", user="bob", headers={"Accept-Encoding": "identity"})
    release = answer.header("X-Release")
    manifest = orjson.loads(live.release_file(MANIFEST))
    assert manifest["release"] == release
    listed = manifest["files"]["api/v1/riskscores/sovereign/index.json"]["sha256"]
    assert answer.header("Unencoded-Digest") == answer.header("Repr-Digest") == digest_field(listed)
    twin = manifest["files"]["api/v1/riskscores/sovereign/index.json.gz"]["sha256"]
    sent = None if kind == "workerd" else digest_field(twin)  # the Worker vouches for plain answers only
    compressed = live.get(f"{API}/riskscores/sovereign/", user="bob", headers={"Accept-Encoding": "gzip"})
    assert (compressed.header("Content-Encoding"), compressed.header("Repr-Digest")) == ("gzip", sent)
    scoped = live.get(f"{API}/releases/{release}/riskscores/sovereign/", user="bob", headers={"Accept-Encoding": "gzip"})
    assert (scoped.status, scoped.header("Repr-Digest"), scoped.header("Unencoded-Digest")) == (
        200, sent, digest_field(listed))


@pytest.mark.parametrize(("path", "user", "status"), [
    (f"{API}/riskscores/sovereign/", "carol", 403),  # a revoked key
    (f"{API}/riskscores/nothing/", "bob", 404),
    (f"{API}/riskscores/sovereign/?ordering=up", "bob", 400),
    (f"{API}/exports/scores.csv", None, 403)])
def test_an_error_carries_no_digest(live, path, user, status):
    answer = live.get(path, user=user)
    assert answer.status == status
    assert (answer.header("Repr-Digest"), answer.header("Unencoded-Digest")) == (None, None)


@pytest.mark.parametrize(("path", "media_type"), [(f"{API}/releases/", "application/json"),
                                                  (f"{API}/releases/feed.json", "application/feed+json"),
                                                  (f"{API}/releases/feed.atom", "application/atom+xml")])
def test_the_list_of_releases_and_its_feeds_are_typed_and_compressed_as_documents_are(live, path, media_type):
    plain = live.get(path, user="alice", headers={"Accept-Encoding": "identity"})
    assert (plain.status, plain.header("Content-Type")) == (200, media_type + "; charset=utf-8")
    compressed = live.get(path, user="alice", headers={"Accept-Encoding": "gzip"})
    # over 1 KB (the list of releases here; the feeds of two releases are under), as every document has twins
    twin = "gzip" if len(plain.body) > 1024 else None
    assert (compressed.header("Content-Type"), compressed.header("Content-Encoding")) == (
        media_type + "; charset=utf-8", twin)
    assert DECODE[twin](compressed.body) == plain.body
