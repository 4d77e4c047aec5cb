"""The Merkle tree of a release's documents as C2SP tlog-tiles serves a tree: tile paths, the
tiles of a tree of any size, and the tiles each release holds, served by nginx, the Worker and
CloudFront's harness under /api/v1/releases/{id}/tree/tile/… to any active key, as bytes."""
from __future__ import annotations

import json

import orjson
import pytest

from generator.contract import routes
from generator.history.proof.leaves import release_leaves, release_tree
from generator.history.proof.tiles import bundles, index_path, read_bundle, tile_path, tiles
from generator.history.proof.tree import leaf_hash, node_hash, root
from generator.history.site import CURRENT, MANIFEST, RELEASES
from generator.publish.build_release import build

from ..conftest import SERVERS, TINY

API = routes.API


def leaves(n: int) -> list[bytes]:
    return [leaf_hash(str(i).encode()) for i in range(n)]


# ---- paths and tiles, as the specification's examples give them ---------------------------------------

def test_tile_paths_are_three_digit_parts_with_an_x_before_all_but_the_last():
    assert index_path(1234067) == "x001/x234/067"  # the specification's example
    assert index_path(0) == "000" and index_path(999) == "999" and index_path(1000) == "x001/000"
    assert tile_path(0, 5) == "0/005" and tile_path(2, 1000, 17) == "2/x001/000.p/17"
    assert tile_path("entries", 3, 255) == "entries/003.p/255"
    with pytest.raises(ValueError):
        tile_path(0, 0, 0)


def test_a_tree_of_70000_leaves_has_the_tiles_the_specification_lists():
    # "273 full level 0 tiles, one partial level 0 tile of width 112, one full level 1 tile, one partial
    # level 1 tile of width 17, and one partial level 2 tile of width 1" (70,000 = 273 × 256 + 112; 273 = 256 + 17)
    found = tiles(leaves(70_000))
    level0 = [p for p in found if p.startswith("0/")]
    assert len(level0) == 274 and "0/273.p/112" in found and "0/272" in found
    assert sorted(p for p in found if not p.startswith("0/")) == ["1/000", "1/001.p/17", "2/000.p/1"]
    assert {len(found[p]) for p in level0 if ".p/" not in p} == {256 * 32}


def test_tiles_hold_the_trees_hashes_level_by_level():
    hashes = leaves(256 + 3)
    found = tiles(hashes)
    assert sorted(found) == ["0/000", "0/001.p/3", "1/000.p/1"]  # a full tile of 256 and a partial one of 3
    assert found["0/001.p/3"] == b"".join(hashes[256:])
    assert found["1/000.p/1"] == root(hashes[:256])  # level 1: the root of each full tile of level 0
    # the tree's root from the tiles alone: the full tile's root, then the 3 leaves' subtree (2 + 1)
    assert root(hashes) == node_hash(found["1/000.p/1"], node_hash(node_hash(hashes[256], hashes[257]), hashes[258]))
    assert tiles(leaves(256)).keys() == {"0/000", "1/000.p/1"}  # the specification's other example


def test_entry_bundles_prefix_each_entry_with_its_length():
    entries = [b"a", b"", b"x" * 300]
    assert bundles(entries) == {"entries/000.p/3": b"\x00\x01a" + b"\x00\x00" + b"\x01\x2c" + b"x" * 300}
    assert read_bundle(bundles(entries)["entries/000.p/3"]) == entries
    assert list(bundles([b"e"] * 257)) == ["entries/000", "entries/001.p/1"]
    with pytest.raises(ValueError, match="cut short"):
        read_bundle(b"\x00\x05abc")


# ---- each release holds its tree's tiles -------------------------------------------------------------------

def test_a_release_holds_the_tiles_of_its_tree_which_are_no_documents_of_it(tmp_path):
    site = tmp_path / "site"
    release = build(TINY, site).release
    files = orjson.loads((site / RELEASES / release / MANIFEST).read_bytes())["files"]
    tile_files = sorted(p for p in files if p.startswith("api/v1/tree/"))
    # 164 documents (worked out by hand in test_merkle_tree.py): one partial tile of level 0, nothing above
    assert tile_files == ["api/v1/tree/tile/0/000.p/164.tile"]
    body = (site / RELEASES / release / tile_files[0]).read_bytes()
    assert body == b"".join(release_leaves(files)) and len(body) == 164 * 32
    assert release_tree(files).size == 164  # the tiles are not leaves of the tree they hold
    assert not (site / RELEASES / release / (tile_files[0] + ".gz")).exists()  # hashes do not compress


SERVED_BY = SERVERS  # every test taking `live` runs on nginx, the Worker and CloudFront (conftest.py)


def test_every_server_answers_a_releases_tiles_to_any_active_key_as_bytes(live):
    release = (live.site / CURRENT).resolve().name
    files = orjson.loads((live.site / RELEASES / release / MANIFEST).read_bytes())["files"]
    hashes = release_leaves(files)
    expected = tiles(hashes)
    path, body = next((p, b) for p, b in expected.items() if p.startswith("0/"))
    for url in (f"{API}/releases/{release}/tree/tile/{path}", f"{API}/tree/tile/{path}"):
        answer = live.get(url, user="bob", headers={"Accept-Encoding": "gzip, br"})  # bob: no grants
        assert answer.status == 200, (url, answer.body[:200])
        assert answer.header("Content-Type") == "application/octet-stream"
        assert answer.header("Content-Encoding") is None and answer.body == body
        assert answer.header("X-Release") == release
    # the tiny release's 164 documents are one partial tile: the whole tree from the served bytes alone, its
    # root the one the manifest states
    assert len(hashes) == 164 and path == "0/000.p/164"
    assert root([body[i:i + 32] for i in range(0, len(body), 32)]) == release_tree(files).root
    for user in (None, "carol"):  # no key, a revoked key
        refused = live.get(f"{API}/releases/{release}/tree/tile/{path}", user=user)
        assert refused.status == 403 and refused.header("Content-Type") == "application/json; charset=utf-8"
    for missing in ("0/999", "0/000.p/0", "0/1", "64/000", "0/000.p/256", "entries/000"):
        answer = live.get(f"{API}/releases/{release}/tree/tile/{missing}", user="bob")
        assert answer.status == 404 and json.loads(answer.body) == {"detail": "Not found."}, missing
