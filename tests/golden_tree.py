"""The golden tree: the tiny fixture's published documents, pretty-printed for review."""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

import orjson

from generator.contract import locations, routes
from generator.history.site import CURRENT
from generator.publish.build_release import build

from .conftest import TINY

RELEASE_ID = re.compile(rb'"(id|builtAt|version|created)":"[0-9T:Z-]+"')  # a Data Package's version and created
# a Data Package's hash of a Parquet export, which names its release in its metadata
PARQUET_HASH = re.compile(rb'("format":"parquet","mediatype":"[^"]+","bytes":[0-9]+,"hash":)"sha256:[0-9a-f]{64}"')
# a link to this release's own answers (under RELEASES_UNDER/{id}/)
SCOPED_URL = re.compile(f"{routes.RELEASES_UNDER}/{routes.RELEASE_ID}/".encode())


def pretty(path: str, raw: bytes) -> bytes:
    """Return the same document with indentation; key order is kept, so order changes show up too. Exports
    stay as they are."""
    if not path.endswith(".json"):
        return raw
    return orjson.dumps(orjson.loads(raw), option=orjson.OPT_INDENT_2) + b"\n"


def published_documents(site: Path) -> dict[str, bytes]:
    """Return every API document and export of the current release by relative path (.gz/.br twins left out);
    the release's id and build time masked, as they change with every build."""
    release = site / CURRENT
    documents = {str(p.relative_to(release)): p.read_bytes() for p in sorted((release / "api").rglob("*"))
                 if p.suffix in (".json", ".csv", ".jsonl")}
    masked = f"{routes.RELEASES_UNDER}/RELEASE/".encode()
    return {path: PARQUET_HASH.sub(rb'\1"RELEASE"', SCOPED_URL.sub(masked, RELEASE_ID.sub(rb'"\1":"RELEASE"', raw)))
            if locations.names_its_release(path) else raw for path, raw in documents.items()}


def build_tiny_documents() -> dict[str, bytes]:
    with tempfile.TemporaryDirectory() as site:
        build(TINY, Path(site))
        return published_documents(Path(site))
