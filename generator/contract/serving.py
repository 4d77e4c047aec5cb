"""The serving contract: what every server says around the documents, as data — media types, the
headers of each kind of answer, the error bodies, the variant folders of a release and the edge key
store's layout. nginx.conf's `types`, header maps, `add_header` lines and error locations are rendered
from it (serve/nginx/contract_blocks.py); the edges receive it in their description (`edge_contract()`), which
serve/edge/contract.js holds for core.js, keycheck.js and the CloudFront functions; the S3 deploy types its objects by
it. docs/api.md states it for clients. A test finds none of these values written anywhere else."""
from __future__ import annotations

import base64

from . import key_format

# ---- media types, by file extension (every file a release serves has one of these) ------------------
CHARSET = "; charset=utf-8"  # in the type itself: no charset filter runs per response
MEDIA_TYPES = {
    "json": "application/json",
    "html": "text/html",
    "js": "text/javascript",
    "css": "text/css",
    "csv": "text/csv",
    "jsonl": "application/x-ndjson",
    "link": "application/link-format",
    "atom": "application/atom+xml",
    "jsonfeed": "application/feed+json",  # JSON Feed 1.1 (its own registration)
    "jsonld": "application/ld+json",
    "tile": "application/octet-stream",  # a Merkle tree's tile (C2SP tlog-tiles): hashes, no text
    "bundle": "application/octet-stream",  # a bundle of the log's entries (C2SP tlog-tiles)
    "txt": "text/plain",  # the log's checkpoint (C2SP tlog-checkpoint)
    "parquet": "application/vnd.apache.parquet",  # a bulk export as Apache Parquet (IANA, 2024)
}
DEFAULT_EXTENSION = "json"  # errors and anything untyped
PROOF_FILES = ("tile", "bundle")  # the Merkle trees' own files: not documents of a release's tree
# bytes, not text: no charset, and no compressed twins (hashes do not compress; Parquet compresses its pages)
BINARY = (*PROOF_FILES, "parquet")
COMPRESSED_OVER = 1024  # bytes: a smaller file grows when gzipped, so it has no compressed twins
# A file's compressed twins beside it: each suffix and the Content-Encoding it is answered with (served as
# that file to a client that accepts the coding, never under its own name)
TWINS = {".gz": "gzip", ".br": "br"}


def has_twins(path: str, size: int) -> bool:
    """Return whether a served file has compressed twins (.gz, .br) beside it: the one rule that the writer,
    the manifests, the bucket's sweep, the edges and nginx's gzip_static all follow."""
    return size > COMPRESSED_OVER and path.rpartition(".")[2] not in BINARY


def media_type(extension: str) -> str:
    """Return the Content-Type of a file with this extension (no dot), as every server sends it."""
    return MEDIA_TYPES[extension] + ("" if extension in BINARY else CHARSET)


JSON = media_type("json")
LINK_FORMAT = MEDIA_TYPES["link"]
PAGE_EXTENSIONS = ("html", "js", "css")  # the pages, their script and styles: the pages' Content-Security-Policy

# ---- headers ------------------------------------------------------------------------------------------
METHODS = ("GET", "HEAD", "OPTIONS")
ALLOW = ", ".join(METHODS)
# On every answer, errors included: constants, the same for every request.
EVERY_ANSWER = {
    "Vary": "Accept-Encoding, Authorization, Accept-Datetime",
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Expose-Headers": "ETag, Last-Modified, Retry-After, X-Release, Memento-Datetime, Link, "
                                     "Repr-Digest, Unencoded-Digest",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
# On the answer to a CORS preflight (OPTIONS, answered 204 before any key check).
PREFLIGHT = {
    "Access-Control-Allow-Methods": ALLOW,
    "Access-Control-Allow-Headers": "Authorization, Content-Type, If-None-Match, If-Modified-Since, Accept-Datetime",
    "Access-Control-Max-Age": "86400",
}
# On answers of one status.
CHALLENGE = 'Basic realm="country risk API", charset="UTF-8"'  # WWW-Authenticate of a challenging rule's 401
BY_STATUS = {
    204: {"Allow": ALLOW},
    401: {"WWW-Authenticate": CHALLENGE},  # only a challenging rule answers 401
    405: {"Allow": ALLOW},
    429: {"Retry-After": "1"},
}
# Content-Security-Policy: a page's 2xx/3xx answer may run its own script (the explorer's) and call an
# API anywhere; every other answer (JSON, exports, every error) runs nothing.
CSP = {
    "page": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src *; img-src data:; "
            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "data": "default-src 'none'; frame-ancestors 'none'",
}
ERROR_CACHE_CONTROL = "no-store"  # an error is never cached (any status ≥ 400)
# Nor is a redirect (the TimeGate's 302): it has no validator, so a cache could only ask again (RFC 9111 §4.3)
REDIRECTS = (301, 302, 303, 307, 308)
REDIRECT_CACHE_CONTROL = "no-store"
# Cache-Control of the routes that set their own, whatever the operator's (--cache-control): the log's
# checkpoint is asked again each time (tlog-tiles: no caching beyond seconds); its tiles and bundles never
# change (a path's bytes are the same for good: the log only grows)
FOREVER = "max-age=31536000, immutable"  # an answer that never changes: a release's under its id
# An answer worked out per request (a URI's TimeMap) has no validator: never stored (RFC 9111 §4.3)
ROUTE_CACHE = {"fresh": "no-cache", "forever": f"public, {FOREVER}", "computed": "no-store"}


def immutable(cache_control: str) -> str:
    """Return Cache-Control of a release-scoped answer, which never changes: a year, immutable; `public` only
    where the operator made the current answers public."""
    scope = "public" if "public" in cache_control.split(",")[0] else "private"
    return f"{scope}, {FOREVER}"


RELEASE_HEADER = "X-Release"  # the release that answered: a client cites it
DOWNLOAD = 'attachment; filename="{name}"'  # Content-Disposition of a bulk export's 200: which release it is
# The headers a server sets from what it answers (the edges by these names; nginx's add_header lines too)
HEADER_NAMES = {"type": "Content-Type", "cache": "Cache-Control", "csp": "Content-Security-Policy",
                "modified": "Last-Modified", "location": "Location", "link": "Link", "memento": "Memento-Datetime",
                "download": "Content-Disposition", "release": RELEASE_HEADER,
                "retry": "Retry-After", "range": "Content-Range", "digest": "Repr-Digest",
                "unencoded": "Unencoded-Digest"}
# A file's integrity fields, on its 200, 206 and 304 (HEAD too), never on an error:
# - Repr-Digest (RFC 9530 §3): the SHA-256 of the representation as sent, its content coding included: a
#   gzip answer's is of the gzip twin's bytes (whose SHA-256 its release's manifest holds beside the file's);
# - Unencoded-Digest (draft-ietf-httpbis-unencoded-digest): of the bytes without content coding, the same
#   on every coding and every server: the document's leaf in its release's tree, what `riskapi cite` proves.
# A Range on an answer with a content coding is not honoured: the whole encoded representation, 200 (RFC
# 9110 §14.2 lets a server ignore Range; nginx's gzip_static does). A 206 is a slice of the identity bytes.


def digest_field(sha256_hex: str) -> str:
    """Return the value of Repr-Digest or Unencoded-Digest (RFC 9530 §4: sha-256, its 32 bytes in Base64
    between colons) from a SHA-256 in hex, as manifests hold it (the edges' keycheck.js digestField
    writes the same)."""
    return f"sha-256=:{base64.b64encode(bytes.fromhex(sha256_hex)).decode()}:"

# ---- the request: what a server refuses before reading it, and how it reads the key ----------------------
# A request-target holding a character no URI may hold (RFC 3986) is a 400 (`bad_target`) before anything
# reads it: what passes is echoed in Link headers as sent, and cannot end a <URI> there or add a link.
FORBIDDEN_IN_TARGET = '"<>\\^`{|}'
# A code filter's value of exactly 3 characters as sent, not bytes: a UTF-8 character may arrive raw or as
# two to four escapes (nginx's PCRE and JavaScript's alike, letter case written out: neither takes a flag).
# One that is no country matches nothing (an empty list); any other length is a 400.
CODE_SENT = (r"(?:[^%\x80-\xFF]|%[0-7][0-9A-Fa-f]|%[C-Fc-f][0-9A-Fa-f](?:%[89ABab][0-9A-Fa-f]){1,3}"
             r"|[\xC0-\xFF][\x80-\xBF]{1,3}){3}")

# The forms of the Authorization header, tried in order (docs/api.md): each a regular expression (nginx's
# PCRE and JavaScript's alike) whose one group is the credential, the prefix it is given (Basic's Base64 is
# decoded by the server), and whether the scheme's letter case is free.
BASIC_PREFIX = "basic:"  # marks the form whose credential is Base64, which each server decodes (Basic)
AUTHORIZATION_FORMS = (
    (r"^\s*apikey\s+(\S+)\s*$", "", True),  # apikey USER:KEY (or apikey KEY)
    (r"^\s*(?:bearer|token)\s+([^\s:]+)\s*$", "", True),  # Bearer KEY, Token KEY
    (r"^\s*basic\s+([A-Za-z0-9+/]+=*)\s*$", BASIC_PREFIX, True),  # HTTP Basic: USER:KEY in Base64
    (r"^\s*([^\s:]+)\s*$", "", False),  # the bare KEY
)
# The access log every nginx writes and `riskapi usage` reads: each field as nginx's variables give it and
# the pattern usage reads it back with (named groups are what usage keeps). It names the user, never a key,
# and never a query value as the client sent it (a key pasted as ?apikey=… would land in the log): the
# path, then the API's known parameters (routes.known_arguments: the lists' filters and orderings).
ACCESS_LOG = (
    # the key's short id where RFC 1413's ident stood ("-" in logs before it): which of a user's keys asked
    ("$remote_addr", r"\S+"), (" $log_key ", r" (?P<key>\S+) "), ("$log_user", r"(?P<user>\S+)"),
    (" [$time_local] ", r" \[(?P<time>[^\]]+)\] "),
    ('"$request_method $request_path $server_protocol" ', r'"(?P<method>\S*) (?P<path>\S*)[^"]*" '),
    ("$status $body_bytes_sent ", r"(?P<status>\d{3}) (?P<bytes>\d+) "),
    ('"{arguments}" ', r'"[^"]*" '),
    ('"$http_user_agent" $request_time', r'"[^"]*" \S+'),
)
ACCESS_LOG_LINE = "^" + "".join(pattern for _, pattern in ACCESS_LOG)


def access_log_fields(arguments: tuple[str, ...]) -> list[str]:
    """Return the access log's fields as nginx writes them, naming these query parameters (each `name=$arg_name`)."""
    named = " ".join(f"{name}=$arg_{name}" for name in arguments)
    return [field.replace("{arguments}", named) for field, _ in ACCESS_LOG]
ACCESS_LOG_TIME = "%d/%b/%Y:%H:%M:%S %z"  # $time_local

# ---- error bodies: {"detail": TEXT}; {names} are filled by the server ---------------------------------
ERRORS = {
    "bad_request": "Bad request.",
    "bad_target": f"Bad request: the URL holds a character a URL may not ({' '.join(FORBIDDEN_IN_TARGET)}); "
                  "percent-encode it.",
    "not_provided": "Authentication credentials were not provided.",
    "invalid_key": "Invalid API key.",
    # a key of the API's format whose checksum does not match (contract/key_format.py): mistyped, not looked up
    "not_our_key": "Invalid API key: it is not a key of this API (its checksum does not match: mistyped or cut "
                   "short?).",
    # a key past its expiry (riskapi keys add --expires, keys expire): refused from that instant on
    "expired_key": "Invalid API key: it expired at {expired}.",
    "not_found": "Not found.",
    "method": "Method \"{method}\" not allowed.",
    "throttled": "Request was throttled.",
    "too_large": "Request too large.",
    "precondition": "Precondition failed.",
    "range": "Requested range not satisfiable.",
    "not_implemented": "Not implemented.",
    "version": "HTTP version not supported.",
    "server": "A server error occurred.",
    "release_gone": "Release {id} is no longer kept; GET {list} lists the releases kept.",
    "no_release": "No release {id}; GET {list} lists the releases kept.",
    "bad_ordering": "Invalid value for {parameter}: use one of {values}.",
    "bad_code": "Invalid value for {parameter}: a country code has exactly 3 characters.",
    "bad_value": "Invalid value for {parameter}: use one of this release's values: {values}.",
    # the TimeGate and TimeMaps
    "bad_accept_datetime": "Invalid Accept-Datetime: send an HTTP-date, such as Tue, 24 Nov 2026 09:00:00 GMT.",
    "bad_as_of": "Invalid value for as_of: use an RFC 3339 date (2026-11-24, its 00:00:00Z) or date-time "
                 "(2026-11-24T09:00:00Z, 2026-11-24T10:00:00+01:00).",
    "none_kept": "No release is kept. GET {list} lists the releases kept.",
    "none_live": "No kept release was live at {instant}: the oldest kept, {id}, went live at {since}. "
                 "GET {list} lists the releases kept.",
    "gone_at": "Release {id}, live at {instant}, is no longer kept. GET {list} lists the releases kept.",
    "beyond_record": "No release is known here at {instant} yet: this server's record of what was live runs to "
                     "{horizon}, and a release may go live after it. Ask again later.",
    "no_timegate": "No TimeGate here for {uri}: this API's are for its routes under {api}/.",
    "no_timemap": "No TimeMap here for {uri}: this API's are for its routes under {api}/.",
    "no_njs_timegate": "This server cannot look up an instant: its nginx lacks the njs module "
                       "(libnginx-mod-http-js). Ask for a release by its id: GET {list} lists them.",
    "no_njs_timemap": "This server cannot list past answers: its nginx lacks the njs module "
                      "(libnginx-mod-http-js). GET {list} lists the releases.",
    # the edges
    "stale": "The edge is being updated to the newest release; ask again in a minute.",
    "not_configured": "The API is not configured: its {what} is missing.",
}
REDIRECT = "Release {id} was live then: {location}"  # the TimeGate's 302 body, {"detail": …}
STALE_RETRY_AFTER = "60"  # an edge meeting a bucket mid-update: 503, ask again then
RECORD_RETRY_AFTER = "1"  # a past instant beyond a server's record of what was live (404): ask again then
# The statuses nginx itself may raise (unknown path, malformed or oversized request, failures), each
# answered as one of ERRORS with its status: status → (the status sent, the error).
NGINX_ERRORS = {
    (400,): (400, "bad_request"),
    (403,): (403, "invalid_key"),
    (404,): (404, "not_found"),
    (405,): (405, "method"),
    (429,): (429, "throttled"),
    (413, 414, 431, 494): (400, "too_large"),
    (412,): (412, "precondition"),
    (416,): (416, "range"),
    (501,): (501, "not_implemented"),
    (505,): (505, "version"),
    (500, 502, 503, 504, 507): (500, "server"),
}

# ---- a release's variant folders: what a query or a key's grants select under a route's folder ---------
FOLDERS = {
    "filter": "filter={code}/",  # a country filter's answer (`no_match`: a filter no country matches)
    "group": "{parameter}={value}/",  # a group filter's value (percent-encoded): its selection's countries
    "order": "{parameter}={value}/",  # an ordering other than the first (beneath a group's folders)
    "audience": "audience={audience}/",  # the variant of clients granted custom models
    "preview": "preview/",  # the list of releases with the staged ones, for keys that may preview
}
NO_MATCH = "none"  # filter=none/: a well-formed filter that matches no country
PUBLIC_AUDIENCE = "public"  # the audience of keys granted no custom model: no audience folder


def folder(kind: str, **values: str) -> str:
    """Return a variant folder (with its final "/") as the build writes it and every server asks for it."""
    return FOLDERS[kind].format(**values)


# ---- Links (RFC 8288; RFC 7089's Memento): one link, and what each kind of answer links to --------------
LINK = '<{uri}>; rel="{rel}"'  # a link; its parameters follow, each as LINK_PARAMETER
LINK_PARAMETER = '; {name}="{value}"'
# {site} is the API's public address; {timegate} and {timemaps} the prefixes of the TimeGate and the TimeMap
# of any original URI; {uri} the original's path and query as sent (encoded: serve/edge/keycheck.js's uriOf)
LINKS = {
    "original": '<{site}{timegate}{site}{uri}>; rel="timegate", <{site}{timemaps}{site}{uri}>; rel="timemap"; '
                'type="' + LINK_FORMAT + '"',  # an original's 200: its TimeGate and TimeMap
    "memento": '<{site}{uri}>; rel="original", {original}',  # a release-scoped answer: its original's too
    "redirect": '{memento}, <{site}{location}>; rel="memento"',  # the TimeGate's 302: and where it sends
}


def link(uri: str, rel: str, **parameters: str) -> str:
    """Return one link of a TimeMap (link-format), its parameters in order."""
    return LINK.format(uri=uri, rel=rel) + "".join(LINK_PARAMETER.format(name=name, value=value)
                                                   for name, value in parameters.items())


# ---- the edge key store (CloudFront's KeyValueStore): one key layout ----------------------------------
# CloudFront's hand-off: what its key gate (the viewer-request function) works out, handed on as request
# headers that the origin-request Lambda, the cache key and the viewer-response function read (the origin
# request policy forwards them: docs/deploy.md), one header a field.
HANDOFF = {
    "release": "x-release",  # the live release
    "auth": "x-auth",  # ok, missing, invalid, mistyped, expired:<ms>, twice
    "grants": "x-grants",  # the key's grant set
    "preview": "x-preview",  # "1" where the key may read staged releases
    "audience": "x-audience",  # the audience variant the answering release serves that set
    "user": "x-user",  # whom the answer is for (not in the cache key)
    # what the viewer response adds around the answer: the release answering (the live one, or a
    # release-scoped path's), its Cache-Control (which S3's 304 lacks), a release-scoped answer's
    # Memento-Datetime and Link
    "answering": "x-answering",
    "answering_cache": "x-answering-cache",
    "memento_datetime": "x-memento-datetime",
    "memento_link": "x-memento-link",
    "response": "x-api-response",  # what the origin request hands the origin response (its object's headers)
    "cache": "x-api-cache",  # a route's own Cache-Control, from the origin response to the viewer response
}

STORE = {
    "key": "k:",  # k:<digest> → the key's user, grant set, preview, expiry
    "audience": "a:",  # a:<release>:<grant set> → the audience variant that release serves the set
    "state": "r:",  # r:<release> → its state and when it first went live
    "live": "release",  # the live release's settings: written last, the switch
}


def edge_contract() -> dict[str, object]:
    """Return the contract as the edges receive it in their description (release.json; njs and the CloudFront
    functions as a constant): each name a binding serve/edge/contract.js sets (useContract)."""
    return {"TYPES": {ext: media_type(ext) for ext in MEDIA_TYPES}, "DEFAULT_TYPE": DEFAULT_EXTENSION,
            "BINARY": list(BINARY),
            "HEADERS": {"every": EVERY_ANSWER, "preflight": PREFLIGHT,
                        "by_status": {str(status): headers for status, headers in BY_STATUS.items()},
                        "csp": CSP, "error_cache_control": ERROR_CACHE_CONTROL, "download": DOWNLOAD,
                        "redirects": list(REDIRECTS), "redirect_cache_control": REDIRECT_CACHE_CONTROL,
                        "route_cache": ROUTE_CACHE},
            "LINK_TYPE": LINK_FORMAT, "PAGE_TYPES": [media_type(ext) for ext in PAGE_EXTENSIONS],
            "ERRORS": ERRORS, "REDIRECT": REDIRECT, "LINK": LINK, "LINK_PARAMETER": LINK_PARAMETER,
            "LINKS": LINKS, "STALE_RETRY_AFTER": STALE_RETRY_AFTER, "FOLDERS": FOLDERS,
            "RECORD_RETRY_AFTER": RECORD_RETRY_AFTER,
            "NO_MATCH": NO_MATCH, "PUBLIC_AUDIENCE": PUBLIC_AUDIENCE, "STORE": STORE,
            "NAMES": HEADER_NAMES, "AUTHORIZATION": [list(form) for form in AUTHORIZATION_FORMS],
            "KEY_FORMAT": key_format.edge_description(), "HANDOFF": HANDOFF, "CODE_SENT": CODE_SENT}
