"""Citations anyone can verify: the Merkle tree of what a release answers (tree.py); the
signed, append-only log of releases is built on it."""
