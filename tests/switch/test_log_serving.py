"""The signed log of releases as every server answers it, under /api/v1/log/ without a key:
the checkpoint (C2SP tlog-checkpoint in a signed note, Ed25519), the tiles of the log's tree and its entry
bundles (C2SP tlog-tiles), the same bytes on nginx, the Worker and CloudFront's harness; and what Go's
reference (golang.org/x/mod/sumdb/note and tlog) makes of them."""
from __future__ import annotations

import json
import subprocess

from generator.contract import routes
from generator.history.catalogue import Catalogue
from generator.history.proof.note import open_note, read_checkpoint, read_verifier
from generator.history.proof.tiles import read_bundle
from generator.history.proof.tree import leaf_hash, root
from generator.history.site import CURRENT
from generator.switch.log_files import log_documents

from ..conftest import SERVERS
from ..history.test_interop_go import b64, go_tree, tlogcheck  # noqa: F401  (the fixture)

API = routes.API


SERVED_BY = SERVERS  # every test taking `live` runs on nginx, the Worker and CloudFront (conftest.py)


def site_log(site) -> tuple[list[bytes], bytes]:
    with Catalogue.open(site) as catalogue:
        return catalogue.log_entries(), catalogue.latest_checkpoint().note


def test_every_server_answers_the_signed_checkpoint_tiles_and_bundles_without_a_key(live):
    entries, note = site_log(live.site)
    # the tiny site: one release published, so two entries (the release, its switch): a partial tile and
    # bundle of width 2, nothing above
    assert len(entries) == 2
    answer = live.get(f"{API}/log/checkpoint", user=None)
    assert answer.status == 200 and answer.body == note
    assert answer.header("Content-Type") == "text/plain; charset=utf-8"
    opened = open_note(answer.body, [read_verifier(live.log_vkey)])
    checkpoint = read_checkpoint(opened.text)
    assert checkpoint.origin == "127.0.0.1:8080/api/v1/log" and checkpoint.size == 2
    assert checkpoint.root == root([leaf_hash(e) for e in entries])
    tile = live.get(f"{API}/log/tile/0/000.p/2", user=None, headers={"Accept-Encoding": "gzip, br"})
    assert tile.status == 200 and tile.header("Content-Type") == "application/octet-stream"
    assert tile.header("Content-Encoding") is None and tile.body == b"".join(leaf_hash(e) for e in entries)
    bundle = live.get(f"{API}/log/tile/entries/000.p/2", user=None)
    assert bundle.status == 200 and bundle.header("Content-Type") == "application/octet-stream"
    assert read_bundle(bundle.body) == entries
    assert [json.loads(e)["event"] for e in read_bundle(bundle.body)] == ["release", "switch"]
    # its own Cache-Control whatever the operator's (here "private, no-cache"): the checkpoint asked again each
    # time, a tile's or a bundle's bytes kept for good (the log only grows), an error never stored
    assert answer.header("Cache-Control") == "no-cache"
    assert tile.header("Cache-Control") == bundle.header("Cache-Control") == "public, max-age=31536000, immutable"
    assert live.get(f"{API}/log/tile/0/001", user=None).header("Cache-Control") == "no-store"
    assert live.get(f"{API}/", user=None).header("Cache-Control") == "private, no-cache"  # the operator's
    # a key sent is not needed, and a revoked one does not matter: the log is public
    assert live.get(f"{API}/log/checkpoint", user="carol").status == 200
    for missing in ("tile/0/001", "tile/0/000.p/3", "tile/1/000.p/1", "tile/entries/000", "tile/0/000.p/0",
                    "checkpoint.txt", "tile/0/000.p/2.tile"):
        refused = live.get(f"{API}/log/{missing}", user=None)
        assert refused.status == 404 and json.loads(refused.body) == {"detail": "Not found."}, missing
    release = (live.site / CURRENT).resolve().name
    scoped = live.get(f"{API}/releases/{release}/log/checkpoint", user="bob")  # the log is no release's
    assert scoped.status == 404 and json.loads(scoped.body) == {"detail": "Not found."}


def test_go_verifies_the_served_checkpoint_and_reads_the_logs_tiles(nginx_server, tlogcheck, tmp_path):  # noqa: F811
    served = nginx_server.get(f"{API}/log/checkpoint", user=None).body
    result = subprocess.run([str(tlogcheck), "note", nginx_server.log_vkey], input=served, capture_output=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    checkpoint = read_checkpoint(result.stdout)
    # the log's tiles as the servers have them, read by tlog against the checkpoint's root
    with Catalogue.open(nginx_server.site) as catalogue:
        files = log_documents(catalogue.log_entries(), catalogue.latest_checkpoint())
    for path, data in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    found = go_tree(tlogcheck, tmp_path / "log" / "tile", checkpoint.size, checkpoint.root)
    entries = read_bundle(files["log/tile/entries/000.p/2.bundle"])
    assert found["leaves"] == b64([leaf_hash(e) for e in entries])
    # another key, or a byte changed: refused
    other = "127.0.0.1:8080/api/v1/log+21e7adf4+AdInYiO3XsGO/li3WWcNSRIyRCIN49lGaTMgWYMdgGhk"
    refused = subprocess.run([str(tlogcheck), "note", other], input=served, capture_output=True, timeout=60)
    assert refused.returncode == 1 and b"no verifiable signatures" in refused.stderr
    tampered = served.replace(b"\n2\n", b"\n3\n", 1)
    assert subprocess.run([str(tlogcheck), "note", nginx_server.log_vkey], input=tampered, capture_output=True,
                          timeout=60).returncode == 1

