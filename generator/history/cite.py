"""riskapi cite: a document fetched with a client's key, and what proves it (history/proof/citation.py),
fetched from the same server: the release's tree tiles (level 0: its leaf hashes), the log's signed
checkpoint and its entry bundles. Everything fetched is checked against the checkpoint before the
citation is written; nothing is taken on the server's word."""
from __future__ import annotations

import hashlib
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from ..contract import routes, serving
from ..contract.filters import query_value
from ..errors import CatalogueError
from .catalogue.log_copy import CHECKPOINT, Reader, read_log
from .proof.citation import CitationError, make_citation
from .proof.entries import RELEASE, read_entry
from .proof.leaves import document_leaf
from .proof.tiles import ENTRIES, level_tiles
from .proof.tree import leaf_hash

TIMEOUT = 30  # seconds, per request


@dataclass
class Client:
    """GETs under a site's address, with a key (USER:KEY) where one is given."""
    site: str
    key: str | None

    def get(self, path: str, keyed: bool = True) -> tuple[bytes, dict[str, str]]:
        request = urllib.request.Request(self.site + path, headers={"Accept-Encoding": "identity"})
        if keyed and self.key:
            request.add_header("Authorization", f"apikey {self.key}")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:  # noqa: S310 (http/https only)
                return answer.read(), {k.lower(): v for k, v in answer.headers.items()}
        except urllib.error.HTTPError as error:
            raise CitationError(f"{self.site + path}: {error.code} {error.read()[:200].decode('utf-8', 'replace')}") \
                from None
        except (urllib.error.URLError, OSError) as error:
            raise CitationError(f"{self.site + path}: {getattr(error, 'reason', error)}") from None


def log_reader(url: str) -> Reader:
    """Return the log of releases a server answers under /api/v1/log/ (public: no key), file by file as
    history/catalogue/log_copy.py reads a copy: what a repair recovers the history from when every other copy is
    lost. `url` is the site's address (anything after it, such as /api/v1/, is ignored)."""
    split = urllib.parse.urlsplit(url)
    if split.scheme not in ("http", "https") or not split.netloc:
        raise CitationError(f"{url}: not an http(s) URL")
    return _served_log(Client(f"{split.scheme}://{split.netloc}", None))


def _served_log(client: Client) -> Reader:
    def read(path: str) -> bytes | None:
        route = (routes.url_for("log-checkpoint") if path == CHECKPOINT
                 else routes.url_for("log-entries", bundle=path.removeprefix(f"tile/{ENTRIES}/")))
        try:
            return client.get(route, keyed=False)[0]
        except CitationError as error:
            raise OSError(str(error)) from None
    return read


def _leaves(data: bytes) -> list[bytes]:
    return [data[i:i + 32] for i in range(0, len(data), 32)]


def tree_leaves(client: Client, release: str, size: int) -> list[bytes]:
    """Return the leaf hashes of a release's tree of `size` leaves, from its level-0 tiles."""
    leaves: list[bytes] = []
    for tile in level_tiles(0, size):
        leaves += _leaves(client.get(routes.url_for("tree-tile", release, tile=tile))[0])
    return leaves


def leaf_candidates(path: str, query: str) -> list[str]:
    """Return the leaf URLs a fetched path and query may be (the release-scoped path as its route's; a final "/";
    a country code in upper case; an empty filter dropped), most likely first."""
    path = routes.route_path(path)
    if not path.endswith("/") and "." not in path.rsplit("/", 1)[-1]:
        path += "/"
    parts = path.split("/")
    upper = "/".join(p.upper() if len(p) == 3 and p.isalpha() and i == len(parts) - 2 else p
                     for i, p in enumerate(parts))
    codes = {f.parameter for rule in routes.RULES if rule.variants for f in rule.variants.of_kind("code")}
    pairs = [(k, v.upper() if k in codes else v)
             for k, v in urllib.parse.parse_qsl(query, keep_blank_values=True) if v]
    queries = ["&".join(f"{k}={query_value(v)}" for k, v in pairs)] + [""]  # as url_of writes a query
    return [p + ("?" + q if q else "") for p in dict.fromkeys([path, upper]) for q in dict.fromkeys(queries)]


def cite(url: str, key: str | None, since_note: bytes | None = None) -> dict:
    """Return the citation of the document at `url` as the key receives it now."""
    split = urllib.parse.urlsplit(url)
    if split.scheme not in ("http", "https") or not split.netloc:
        raise CitationError(f"{url}: not an http(s) URL")
    client = Client(f"{split.scheme}://{split.netloc}", key)
    document, headers = client.get(split.path + (f"?{split.query}" if split.query else ""))
    release = headers.get(serving.RELEASE_HEADER.lower())
    if not release:
        raise CitationError(f"{url}: the answer names no release ({serving.RELEASE_HEADER})")
    unencoded = serving.HEADER_NAMES["unencoded"]
    if headers.get(unencoded.lower(), "") not in ("", serving.digest_field(hashlib.sha256(document).hexdigest())):
        raise CitationError(f"{url}: the bytes received are not those its {unencoded} names (cut short or "
                            "changed on the way); ask again")
    for attempt in range(3):  # a server that switched (or reloaded) between two fetches is asked again
        try:
            return _proved(client, url, split, document, release, since_note)
        except CitationError:
            if attempt == 2:
                raise
            time.sleep(0.5 * (attempt + 1))
    raise AssertionError("unreachable")


def _proved(client: Client, url: str, split: urllib.parse.SplitResult, document: bytes, release: str,
            since_note: bytes | None) -> dict:
    """Return the citation of `document` from the log and tiles the server answers now."""
    try:  # the checkpoint and every entry it names, checked against each other (as a repair reads a copy)
        copy = read_log(_served_log(client), client.site)
    except CatalogueError as error:
        raise CitationError(str(error)) from None
    if copy is None:
        raise CitationError(f"{client.site} answers no checkpoint of its log of releases")
    entries, note = copy.entries, copy.note
    stated = next((e.tree for e in map(read_entry, entries) if e.event == RELEASE and e.release == release), None)
    if stated is None:
        raise CitationError(f"the log at {client.site} names no release {release} with its tree")
    leaves = tree_leaves(client, release, stated.size)
    sha256 = hashlib.sha256(document).hexdigest()
    found = next((c for c in leaf_candidates(split.path, split.query)
                  if leaf_hash(document_leaf(c, sha256)) in leaves), None)
    if found is None:
        raise CitationError(f"{url}: the answer is not a document of {release}'s tree under any URL it may have "
                            "(ask for a country by its code, not its name)")
    return make_citation(url, found, document, release, leaves, entries, note, since_note)
