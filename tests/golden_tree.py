"""The golden tree: the tiny fixture's published documents, pretty-printed for review."""
from __future__ import annotations

import tempfile
from pathlib import Path

import orjson

from generator.build import build
from generator.publish import CURRENT

from .conftest import TINY


def pretty(raw: bytes) -> bytes:
    """The same document with indentation; key order is kept, so order changes show up too."""
    return orjson.dumps(orjson.loads(raw), option=orjson.OPT_INDENT_2) + b"\n"


def published_documents(site: Path) -> dict[str, bytes]:
    """Every API document of the current release by relative path (.gz files left out)."""
    release = site / CURRENT
    return {str(p.relative_to(release)): p.read_bytes()
            for p in sorted((release / "api").rglob("*.json"))}


def build_tiny_documents() -> dict[str, bytes]:
    with tempfile.TemporaryDirectory() as site:
        build(TINY, Path(site))
        return published_documents(Path(site))
