"""What every edge deploy shares: the edge core's route description and hashed keys of a release.

The description is the release's own routing (nginx/routing.json, the data nginx's maps are rendered
from), in the form the edge core (generator/edge/core.js) looks things up by. Keys are stored only as
SHA-256 hashes: no deploy bundle, upload or log holds a key."""
from __future__ import annotations

import hashlib
from pathlib import Path

import orjson

from ..render.nginx_maps import ROUTING
from ..publish import GZIP_MIN_BYTES
from ..serve.keys import read_keys, served_audiences
from ..serve.runtime import read_release_info

EDGE_SOURCE = Path(__file__).resolve().parent.parent / "edge"
CORE, WORKER = EDGE_SOURCE / "core.js", EDGE_SOURCE / "worker.js"
NOT_SERVED = ("nginx/", "manifest.json", "data.json", "changes.txt")  # in a release, never at the edge
TWINS = (".gz", ".br")


def ascii_lower(text: str) -> str:
    """nginx's map keys ignore ASCII letter case only: so does the edge."""
    return "".join(c.lower() if "A" <= c <= "Z" else c for c in text)


def route_description(release_dir: Path, release_id: str, cache_control: str, files: list[str],
                      parts: dict[str, int] | None = None) -> dict:
    """release.json of the edge core: the release's routing keyed as the core looks things up, and each
    of `files` (those the edge serves) with its mtime and size (Last-Modified, and which get compressed),
    and for a file stored in `parts` (over a platform's size per file) how many."""
    routing = orjson.loads((release_dir / ROUTING).read_bytes())
    stamps = {}
    for relative in files:
        info = (release_dir / relative).stat()
        stamps[relative] = (int(info.st_mtime), info.st_size)
        if parts and relative in parts:
            stamps[relative] += (parts[relative],)
    return {"id": release_id, "prefix": routing["prefix"], "cache_control": cache_control,
            "countries": {ascii_lower(code): code for code in routing["countries"]},
            "country_names": {ascii_lower(encoded): code for encoded, code in routing["country_names"]},
            "models": {code: "custom" if custom else "public" for code, custom in routing["models"]},
            "score_orderings": routing["score_orderings"], "country_orderings": routing["country_orderings"],
            "no_match": routing["no_match"], "compressed_over": GZIP_MIN_BYTES, "files": stamps}


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def hashed_keys(keys_file: Path, release_dir: Path) -> dict:
    """keys.json of the edge core: each active key's hash → its user; each user → the custom models it
    may use in this release and the audience variant it is served (as nginx's key map has them)."""
    keys = read_keys(keys_file, missing_ok=True)
    served = served_audiences(keys, *read_release_info(release_dir))
    # nginx's key map ignores ASCII letter case: the edge hashes the key as the core lower-cases it
    return {"keys": {sha256_hex(ascii_lower(k.key)): ascii_lower(k.user) for k in keys if k.active},
            "users": {ascii_lower(user): {"models": sorted(models), "audience": audience}
                      for user, (models, audience) in served.items()}}


def served_files(release_dir: Path) -> list[str]:
    """The files of a release the edge may serve: the API documents, exports and pages, no twin."""
    files = []
    for path in sorted(release_dir.rglob("*")):
        relative = path.relative_to(release_dir).as_posix()
        if path.is_file() and not relative.startswith(NOT_SERVED) and not relative.endswith(TWINS):
            files.append(relative)
    return files
