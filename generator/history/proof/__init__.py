"""Citations anyone can verify (issue 46): the Merkle tree of what a release answers (tree.py); the
signed, append-only log of releases is built on it."""
