"""What riskapi publishes, checked by the reference implementation of transparency logs: Go's
golang.org/x/mod/sumdb/tlog (the Go checksum database's) reads a release's tiles as files and must find
the root riskapi states, and the same leaf hashes, inclusion proofs and consistency proofs as
history/proof/tree.py (tests/interop/tlogcheck.go, built from Debian's golang-go and golang-golang-x-mod-dev;
scripts/test.sh installs them)."""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess

import orjson
import pytest

from generator.history.proof.leaves import leaf_data, release_leaves, release_tree
from generator.history.proof.tiles import tiles
from generator.history.proof.tree import consistency_proof, inclusion_proof, leaf_hash, root
from generator.history.site import MANIFEST, RELEASES
from generator.publish.build_release import build

from ..conftest import ROOT, TINY

GOPATH = "/usr/share/gocode"  # Debian's Go packages' sources


@pytest.fixture(scope="session")
def tlogcheck(tmp_path_factory):
    """Build tests/interop/tlogcheck.go with Debian's Go, in GOPATH mode: nothing is fetched."""
    go = shutil.which("go")
    assert go, "Go is not installed (scripts/test.sh installs golang-go)"
    folder = tmp_path_factory.mktemp("go")
    env = {**os.environ, "GO111MODULE": "off", "GOPATH": GOPATH, "GOCACHE": str(folder / "cache"),
           "HOME": str(folder), "GOFLAGS": "", "GOPROXY": "off"}
    shutil.copy(ROOT / "tests" / "interop" / "tlogcheck.go", folder / "tlogcheck.go")
    built = subprocess.run([go, "build", "-o", "tlogcheck", "tlogcheck.go"], cwd=folder, env=env,
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    return folder / "tlogcheck"


def b64(hashes):
    return [base64.b64encode(h).decode() for h in hashes]


def go_tree(tlogcheck, folder, size, stated_root, *indexes) -> dict:
    """Return what tlog reads of the tiles under `folder`, each checked against the tree (size, root) stated."""
    result = run_go_tree(tlogcheck, folder, size, stated_root, *indexes)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def run_go_tree(tlogcheck, folder, size, stated_root, *indexes) -> subprocess.CompletedProcess:
    return subprocess.run([str(tlogcheck), "tree", str(folder), str(size), b64([stated_root])[0],
                           *map(str, indexes)], capture_output=True, text=True, timeout=300)


def write_tiles(folder, hashes) -> None:
    for path, data in tiles(hashes).items():
        (folder / f"{path}.tile").parent.mkdir(parents=True, exist_ok=True)
        (folder / f"{path}.tile").write_bytes(data)


def test_go_finds_our_leaf_hashes(tlogcheck):
    for data in (b"", b"hello", "/api/v1/riskscores/sovereign/AUT/\n" .encode() + b"ab" * 32 + b"\n"):
        result = subprocess.run([str(tlogcheck), "leaf"], input=data, capture_output=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout.decode().strip() == b64([leaf_hash(data)])[0]


def test_go_reads_a_releases_tiles_and_agrees_on_root_and_every_proof(tlogcheck, tmp_path):
    site = tmp_path / "site"
    release = build(TINY, site).release
    files = orjson.loads((site / RELEASES / release / MANIFEST).read_bytes())["files"]
    stated = release_tree(files)
    found = go_tree(tlogcheck, site / RELEASES / release / "api/v1/tree/tile", stated.size, stated.root)
    hashes = release_leaves(files)
    assert found["root"] == b64([stated.root])[0] == b64([root(hashes)])[0]
    assert found["leaves"] == b64(hashes) == b64([leaf_hash(d) for d in leaf_data(files)])
    assert found["inclusion"] == [b64(inclusion_proof(hashes, i)) for i in range(stated.size)]
    assert found["consistency"] == [b64(consistency_proof(hashes, n)) for n in range(1, stated.size)]


@pytest.mark.parametrize("size", [1, 255, 256, 257, 256 * 2 + 7, 256 * 256 + 3])
def test_go_agrees_on_trees_across_tile_boundaries(tlogcheck, tmp_path, size):
    hashes = [leaf_hash(b"entry %d" % i) for i in range(size)]
    write_tiles(tmp_path, hashes)
    # every leaf of the small trees; of the 65,539-leaf one (three levels of tiles), those at the edges of tiles
    indexes = range(size) if size < 1024 else sorted({0, 255, 256, 65535, 65536, size - 2, size - 1})
    found = go_tree(tlogcheck, tmp_path, size, root(hashes), *indexes)
    assert found["root"] == b64([root(hashes)])[0]
    assert found["leaves"] == b64([hashes[i] for i in indexes])
    assert found["inclusion"] == [b64(inclusion_proof(hashes, i)) for i in indexes]
    assert found["consistency"] == [b64(consistency_proof(hashes, i + 1)) for i in indexes if i + 1 < size]


def test_go_refuses_tiles_that_do_not_hold_the_stated_tree(tlogcheck, tmp_path):
    hashes = [leaf_hash(b"entry %d" % i) for i in range(300)]
    write_tiles(tmp_path, hashes)
    wrong_root = leaf_hash(b"another tree")
    assert "inconsistent" in run_go_tree(tlogcheck, tmp_path, 300, wrong_root, 0).stderr
    tile = tmp_path / "0/001.p/44.tile"  # a byte of the partial tile changed
    tile.write_bytes(tile.read_bytes()[:-1] + bytes([tile.read_bytes()[-1] ^ 1]))
    assert "inconsistent" in run_go_tree(tlogcheck, tmp_path, 300, root(hashes), 299).stderr
