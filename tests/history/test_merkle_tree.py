"""The Merkle tree of generator/history/proof/tree.py against published test vectors: Certificate
Transparency's eight leaves (RFC 6962's reference tests: every root, the audit path of leaf 0 in eight, and
consistency proofs), and C2SP CCTV's (leaves "0" and "1"); then every proof of every tree up to 17 leaves
verified, and each one broken (a bit, an index, a size, a hash) rejected; and the tree a release's
manifest holds, recomputed from its files as served."""
from __future__ import annotations

import base64
import hashlib

import orjson
import pytest

from generator.contract import locations
from generator.history.proof.tree import (
    EMPTY_ROOT,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root,
    verify_consistency,
    verify_inclusion,
)
from generator.history.site import CURRENT
from generator.publish.build_release import build

from ..conftest import TINY

# Certificate Transparency's test leaves and the root of each prefix of them (certificate-transparency's
# merkle tree tests; transparency-dev/merkle's testonly package)
CT_LEAVES = [b"", b"\x00", b"\x10", b"\x20\x21", b"\x30\x31", b"\x40\x41\x42\x43", bytes(range(0x50, 0x58)),
             bytes(range(0x60, 0x70))]
CT_ROOTS = ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
            "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
            "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
            "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
            "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
            "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"]
CT_PATH_0_OF_8 = ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                  "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                  "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]
CT_CONSISTENCY = {(1, 8): CT_PATH_0_OF_8,
                  (6, 8): ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
                           "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                           "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"],
                  (2, 5): ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                           "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]}
CT = [leaf_hash(data) for data in CT_LEAVES]


def test_the_roots_of_certificate_transparency_s_test_tree():
    assert root([]) == EMPTY_ROOT == bytes.fromhex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    assert [root(CT[:size]).hex() for size in range(1, 9)] == CT_ROOTS
    # worked by hand for three leaves: the left subtree is the largest power of two below three
    assert root(CT[:3]) == node_hash(node_hash(CT[0], CT[1]), CT[2])


def test_the_audit_path_and_consistency_proofs_of_certificate_transparency():
    assert [h.hex() for h in inclusion_proof(CT, 0)] == CT_PATH_0_OF_8
    for (old, new), expected in CT_CONSISTENCY.items():
        proof = consistency_proof(CT[:new], old)
        assert [h.hex() for h in proof] == expected, (old, new)
        assert verify_consistency(old, new, root(CT[:old]), root(CT[:new]), proof)


def test_c2sp_cctv_s_two_leaves():
    # C2SP CCTV's Merkle vectors: leaves "0" and "1", and leaf 0's path in the tree of two
    b64 = lambda text: base64.b64decode(text)  # noqa: E731
    zero, one = leaf_hash(b"0"), leaf_hash(b"1")
    assert one == b64("IhXorE4rhxwqSBieeXOMlWwIHiOsLyQVv3faGZ39kgw=")
    assert zero == b64("2zQm6HgGjSjSabbIcXIyLOU3K2V1bQeJAB00g19gHAM=")
    assert root([zero, one]) == b64("ywCYnZSlacCmeK4EK2Pc1GJduWRAUX83put5duok7Us=")
    assert inclusion_proof([zero, one], 0) == [one]
    assert consistency_proof([zero, one], 1) == [one]


def read_manifest_document(release):
    return orjson.loads((release / "manifest.json").read_bytes())


LEAVES = [leaf_hash(str(i).encode()) for i in range(18)]  # trees of up to 17, and one leaf more


def flipped(proof: list[bytes], at: int) -> list[bytes]:
    changed = bytearray(proof[at])
    changed[0] ^= 1
    return proof[:at] + [bytes(changed)] + proof[at + 1:]


@pytest.mark.parametrize("size", range(1, 18))
def test_every_inclusion_proof_verifies_and_any_change_breaks_it(size):
    tree, top = LEAVES[:size], root(LEAVES[:size])
    for index in range(size):
        proof = inclusion_proof(tree, index)
        assert verify_inclusion(tree[index], index, size, proof, top)
        assert not verify_inclusion(tree[(index + 1) % size], index, size, proof, top) or size == 1
        bigger = root(LEAVES[:size + 1])  # the tree one leaf on, as a checkpoint would sign it
        assert not verify_inclusion(tree[index], index, size + 1, proof, bigger)
        assert not verify_inclusion(tree[index], size, size, proof, top)  # an index past the end
        assert not verify_inclusion(tree[index], index, size, proof + [top], top)  # one hash too many
        for at in range(len(proof)):
            assert not verify_inclusion(tree[index], index, size, flipped(proof, at), top)
            assert not verify_inclusion(tree[index], index, size, proof[:at] + proof[at + 1:], top)
        if index != size - 1 or index % 2:  # an index whose path differs: the proof does not fit it
            other = index ^ 1 if index ^ 1 < size else index - 1
            assert not verify_inclusion(tree[index], other, size, proof, top) or other == index


@pytest.mark.parametrize("old, new", [(m, n) for n in range(1, 18) for m in range(1, n + 1)])
def test_every_consistency_proof_verifies_and_any_change_breaks_it(old, new):
    proof = consistency_proof(LEAVES[:new], old)
    old_root, new_root = root(LEAVES[:old]), root(LEAVES[:new])
    assert verify_consistency(old, new, old_root, new_root, proof)
    if old == new:
        assert proof == [] and not verify_consistency(old, new, old_root, root(LEAVES[1:new + 1]), [])
        return
    other = root(LEAVES[1:old + 1])  # a history that was rewritten: another tree of the same size
    assert not verify_consistency(old, new, other, new_root, proof)
    assert not verify_consistency(old, new, old_root, root(LEAVES[1:new + 1]), proof)
    assert not verify_consistency(old, new + 1, old_root, root(LEAVES[:new + 1]), proof)
    assert not verify_consistency(old, new, old_root, new_root, [])
    for at in range(len(proof)):
        assert not verify_consistency(old, new, old_root, new_root, flipped(proof, at))


def test_proofs_of_what_is_not_in_the_tree_are_refused():
    with pytest.raises(ValueError):
        inclusion_proof(LEAVES[:3], 3)
    with pytest.raises(ValueError):
        consistency_proof(LEAVES[:3], 4)
    with pytest.raises(ValueError):
        consistency_proof(LEAVES[:3], 0)


def test_a_release_s_manifest_holds_the_tree_of_every_api_document_as_served(tmp_path):
    # the tree recomputed from the release's files on disk (not its manifest): each API document's URL and
    # the SHA-256 of its bytes, its .gz and .br twins no leaf of their own
    site = tmp_path / "site"
    build(TINY, site)
    release = site / CURRENT
    tree = read_manifest_document(release)["tree"]
    leaves, documents = [], {}
    for path in sorted(release.rglob("*")):
        relative = path.relative_to(release).as_posix()
        # (nor the tiles of the tree: files of the release, made from its documents, no documents of it)
        if path.is_file() and relative.startswith("api/") and path.suffix not in (".gz", ".br", ".tile"):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            url = locations.url_of(relative)
            leaves.append(f"{url}\n{digest}\n".encode())
            documents[relative] = (url, digest)
    leaves.sort()
    hashes = [leaf_hash(data) for data in leaves]
    assert tree == {"size": len(hashes), "root": base64.b64encode(root(hashes)).decode()}
    # the tiny release's documents (3 countries, 3 models, 2 audiences): a list has 4 orderings of all and of
    # each of 6 selections of its group filters (2 regions, 2 income groups, 2 pairs) = 28, 3 filters and
    # 1 filter matching none: 32; per model its list + 3 countries + 3 exports (CSV, JSON Lines, Parquet) =
    # 38, so 114; the two audiences' model lists and country documents 2 × (1 + 3) = 8, the countries' list
    # 32; the root, openapi.json, the release's Data Package, each audience's release and changes
    # documents (4) and the 3 exports = 10: 164 in all
    assert len(hashes) == len(documents) == 114 + 8 + 32 + 10
    # a document a client fetched, proved in the release's tree by its URL and its bytes alone
    url, digest = documents["api/v1/riskscores/sovereign/AUT/index.json"]
    assert url == "/api/v1/riskscores/sovereign/AUT/"
    index = leaves.index(f"{url}\n{digest}\n".encode())
    proof = inclusion_proof(hashes, index)
    assert verify_inclusion(leaf_hash(f"{url}\n{digest}\n".encode()), index, tree["size"], proof,
                            base64.b64decode(tree["root"]))
    changed = hashlib.sha256(b"a score changed").hexdigest()
    assert not verify_inclusion(leaf_hash(f"{url}\n{changed}\n".encode()), index, tree["size"], proof,
                                base64.b64decode(tree["root"]))
