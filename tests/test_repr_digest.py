"""Repr-Digest (RFC 9530) on every answer of a file: the SHA-256 of its bytes without content coding (the
same as its release's manifest.json and its leaf in the release's tree), on a 200, 206 and 304, for GET and
HEAD, whatever coding the client takes — on nginx, the Worker and CloudFront's harness alike
(tests/fixtures/tiny; alice holds acme_aml, bob holds nothing)."""
from __future__ import annotations

import base64
import gzip
import hashlib

import orjson
import pytest

from generator.contract import routes
from generator.contract.serving import repr_digest
from generator.history.layout import MANIFEST

from .conftest import SERVERS

API = routes.API
SERVED_BY = SERVERS  # every test taking `live` runs on nginx, the Worker and CloudFront (conftest.py)

# (path, user): a document of every kind — a list, its query variant, an audience's variant, a country's
# scores, the exports, the point-in-time panel, the list of releases (the timeline's), a page
FILES = [(f"{API}/", "bob"), (f"{API}/configuration/countries/?model=-name", "bob"),
         (f"{API}/riskscores/sovereign/", "bob"), (f"{API}/configuration/riskscoremodels/", "alice"),
         (f"{API}/riskscores/acme_aml/", "alice"), (f"{API}/exports/scores.csv", "bob"),
         (f"{API}/exports/scores.jsonl", "bob"), (f"{API}/exports/scores.parquet", "bob"),
         (f"{API}/exports/acme_aml/scores.csv", "alice"), (f"{API}/exports/history.parquet", "bob"),
         (f"{API}/releases/", "alice"), ("/docs/", None)]


def sent_digest(body: bytes) -> str:
    """RFC 9530's header value for these bytes, worked out here: sha-256, its 32 bytes in Base64 between colons."""
    return "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"


def test_the_digest_is_the_hex_sha256_in_base64_between_colons():
    # SHA-256 of b"abc" (FIPS 180-2's example): ba7816bf…f20015ad, whose Base64 is ungWv48B…FhQ0=
    hex_digest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert repr_digest(hex_digest) == "sha-256=:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=:"
    assert repr_digest(hex_digest) == sent_digest(b"abc")


@pytest.mark.parametrize(("path", "user"), FILES)
def test_every_answer_of_a_file_carries_the_digest_of_its_identity_bytes(live, path, user):
    plain = live.get(path, user=user)
    assert plain.status == 200, plain.body
    digest = plain.header("Repr-Digest")
    assert digest == sent_digest(plain.body)
    compressed = live.get(path, user=user, headers={"Accept-Encoding": "gzip"})
    coding = compressed.header("Content-Encoding")
    assert (gzip.decompress(compressed.body) if coding == "gzip" else compressed.body) == plain.body
    assert compressed.header("Repr-Digest") == digest  # the coding changes the bytes sent, not the digest
    assert live.request("HEAD", path, user=user).header("Repr-Digest") == digest
    etag = plain.header("ETag")
    unchanged = live.get(path, user=user, headers={"If-None-Match": etag})
    assert (unchanged.status, unchanged.header("Repr-Digest")) == (304, digest)
    part = live.get(path, user=user, headers={"Range": "bytes=0-9"})
    assert (part.status, part.body, part.header("Repr-Digest")) == (206, plain.body[:10], digest)


def test_a_document_s_digest_is_its_manifest_sha256_and_a_kept_release_s_answer_keeps_it(live):
    answer = live.get(f"{API}/riskscores/sovereign/", user="bob")
    release = answer.header("X-Release")
    manifest = orjson.loads(live.release_file(MANIFEST))
    assert manifest["release"] == release
    listed = manifest["files"]["api/v1/riskscores/sovereign/index.json"]["sha256"]
    assert answer.header("Repr-Digest") == repr_digest(listed)
    scoped = live.get(f"{API}/releases/{release}/riskscores/sovereign/", user="bob")
    assert (scoped.status, scoped.header("Repr-Digest")) == (200, answer.header("Repr-Digest"))


@pytest.mark.parametrize(("path", "user", "status"), [
    (f"{API}/riskscores/sovereign/", "carol", 403),  # a revoked key
    (f"{API}/riskscores/nothing/", "bob", 404),
    (f"{API}/riskscores/sovereign/?ordering=up", "bob", 400),
    (f"{API}/exports/scores.csv", None, 403)])
def test_an_error_carries_no_digest(live, path, user, status):
    answer = live.get(path, user=user)
    assert answer.status == status
    assert answer.header("Repr-Digest") is None
