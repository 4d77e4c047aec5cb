"""Merkle trees as RFC 6962 defines them (RFC 9162 §2.1 for the proofs' verification): the tree of what a
release answers, its root, and the proofs that a document is in it (inclusion) and that a tree extends an
older one (consistency). The same hashes as Certificate Transparency, Go's sumdb/tlog and every C2SP
tlog, so their verifiers check ours.

A tree is given by its leaf hashes, in order. Hashes are 32 raw bytes."""
from __future__ import annotations

import hashlib
from typing import Sequence

EMPTY_ROOT = hashlib.sha256(b"").digest()  # the root of a tree of no leaves


def leaf_hash(data: bytes) -> bytes:
    """Return a leaf's hash: SHA-256(0x00 || data); the 0x00 keeps a leaf from passing for a node."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(size: int) -> int:
    """Return the largest power of two smaller than `size` (≥ 2): where RFC 6962 splits a tree."""
    return 1 << ((size - 1).bit_length() - 1)


def root(leaves: Sequence[bytes]) -> bytes:
    """Return the Merkle tree hash of the leaf hashes `leaves` (MTH, RFC 6962 §2.1), level by level: each level's
    pairs hashed, a last node without a partner carried up as it is (which is MTH's left-full split)."""
    if not leaves:
        return EMPTY_ROOT
    level = list(leaves)
    while len(level) > 1:
        paired = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        level = paired + [level[-1]] if len(level) % 2 else paired
    return level[0]


def inclusion_proof(leaves: Sequence[bytes], index: int) -> list[bytes]:
    """Return the audit path of leaf `index` in the tree of `leaves` (PATH, RFC 6962 §2.1.1), leaf end first."""
    if not 0 <= index < len(leaves):
        raise ValueError(f"leaf {index} is not in a tree of {len(leaves)}")
    if len(leaves) == 1:
        return []
    k = _split(len(leaves))
    if index < k:
        return inclusion_proof(leaves[:k], index) + [root(leaves[k:])]
    return inclusion_proof(leaves[k:], index - k) + [root(leaves[:k])]


def consistency_proof(leaves: Sequence[bytes], old_size: int) -> list[bytes]:
    """Return the proof that the tree of the first `old_size` leaves is a prefix of the tree of `leaves` (PROOF,
    RFC 6962 §2.1.2)."""
    if not 0 < old_size <= len(leaves):
        raise ValueError(f"no consistency proof from {old_size} to {len(leaves)} leaves")
    return _subproof(leaves, old_size, True)


def _subproof(leaves: Sequence[bytes], m: int, complete: bool) -> list[bytes]:
    n = len(leaves)
    if m == n:
        return [] if complete else [root(leaves)]
    k = _split(n)
    if m <= k:
        return _subproof(leaves[:k], m, complete) + [root(leaves[k:])]
    return _subproof(leaves[k:], m - k, False) + [root(leaves[:k])]


def _sides(fn: int, sn: int, path: Sequence[bytes]) -> tuple[list[bool] | None, int]:
    """Walk up a proof as RFC 9162 does, from node `fn` of a tree whose last node is `sn`: for each hash of
    `path`, whether it is the left sibling of the node so far; and `sn` at the end (0 when the walk
    reached the root). None where the path is longer than the tree is high."""
    sides = []
    for _ in path:
        if sn == 0:
            return None, sn
        left = bool(fn & 1) or fn == sn
        sides.append(left)
        if left and not fn & 1:  # the right edge of the tree: climb to where a left sibling is next
            while fn and not fn & 1:
                fn, sn = fn >> 1, sn >> 1
        fn, sn = fn >> 1, sn >> 1
    return sides, sn


def verify_inclusion(leaf: bytes, index: int, size: int, proof: Sequence[bytes], expected_root: bytes) -> bool:
    """Return whether `proof` shows the leaf hash `leaf` at `index` of the tree of `size` with root
    `expected_root` (RFC 9162 §2.1.3.2)."""
    if not 0 <= index < size:
        return False
    sides, sn = _sides(index, size - 1, proof)
    if sides is None:
        return False
    r = leaf
    for p, left in zip(proof, sides):
        r = node_hash(p, r) if left else node_hash(r, p)
    return sn == 0 and r == expected_root


def verify_consistency(old_size: int, new_size: int, old_root: bytes, new_root: bytes,
                       proof: Sequence[bytes]) -> bool:
    """Return whether `proof` shows the tree of `old_size` leaves with root `old_root` is the first part of the
    tree of `new_size` with root `new_root` (RFC 9162 §2.1.4.2)."""
    if not 0 < old_size <= new_size:
        return False
    if old_size == new_size:
        return not proof and old_root == new_root
    if not proof:
        return False
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # a power of two: the old root is the path's first node
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    sides, sn = _sides(fn, sn, path[1:])
    if sides is None:
        return False
    fr = sr = path[0]
    for c, left in zip(path[1:], sides):
        if left:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
        else:
            sr = node_hash(sr, c)
    return sn == 0 and fr == old_root and sr == new_root
