"""The Merkle tree of what a release answers: one leaf per API document — the URL a client asks (path and
query; an audience's variant is the same URL) and the SHA-256 of its bytes (its .gz and .br twins are the
same document, so no leaf of their own). Leaves are in the order of their data, so the tree is the same
whoever builds it from the release's manifest. Written into the manifest (`tree`), it is what a citation's
inclusion proof is checked against."""
from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Mapping, Sequence

from ...contract.locations import url_of
from ...contract.routes import API, rule_named
from ...contract.serving import MEDIA_TYPES, PROOF_FILES
from .tiles import tiles
from .tree import leaf_hash, root

LEAF = "{url}\n{sha256}\n"  # a document's leaf data, UTF-8


@dataclass(frozen=True)
class ReleaseTree:
    size: int
    root: bytes

    def as_json(self) -> dict:
        return {"size": self.size, "root": base64.b64encode(self.root).decode()}

    @classmethod
    def from_json(cls, data: Mapping) -> ReleaseTree:
        return cls(int(data["size"]), base64.b64decode(data["root"], validate=True))


def document_leaf(url: str, sha256: str) -> bytes:
    """Return the leaf data of the document answered at `url` (path and query) whose bytes have this SHA-256."""
    return LEAF.format(url=url, sha256=sha256).encode()


_API_FOLDER = API.strip("/") + "/"


def _is_document(path: str) -> bool:
    """Return an API document: a file under the API of a served type (no twin, and no tile of the tree itself).
    The extension read as pathlib's suffix reads it: a PurePosixPath per file was 40 % of the release's
    tree, which a build works out after its workers are done."""
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    extension = name[dot + 1:] if 0 < dot < len(name) - 1 else ""
    return path.startswith(_API_FOLDER) and extension in MEDIA_TYPES and extension not in PROOF_FILES


def leaf_data(files: Mapping[str, Mapping]) -> list[bytes]:
    """Return every API document of a release's manifest `files` (path → size, sha256) as leaf data, in order."""
    return sorted(document_leaf(url_of(path), entry["sha256"]) for path, entry in files.items() if _is_document(path))


def release_leaves(files: Mapping[str, Mapping]) -> list[bytes]:
    """Return the leaf hashes of the release's tree, in order."""
    return [leaf_hash(data) for data in leaf_data(files)]


def release_tree(files: Mapping[str, Mapping]) -> ReleaseTree:
    leaves = release_leaves(files)
    return ReleaseTree(len(leaves), root(leaves))


def tree_files(leaves: Sequence[bytes]) -> dict[str, bytes]:
    """Return the tiles of the release's tree as files of the release (relative path → bytes), where the route
    table's `tree-tile` rule finds them."""
    file = rule_named("tree-tile").file
    return {file.format(tile=path): data for path, data in tiles(leaves).items()}


def manifest_tree(manifest: Mapping) -> ReleaseTree:
    """Return a release's tree as its manifest states it, or, for a release built before riskapi made trees,
    worked out from the manifest's files."""
    return ReleaseTree.from_json(manifest["tree"]) if "tree" in manifest else release_tree(manifest["files"])
