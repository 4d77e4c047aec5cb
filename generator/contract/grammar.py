"""The parts the route table (routes.py) is made of: typed path segments, a list's query variants, and
the rule of one URL family with its regular expressions (Python's and JavaScript's alike, and nginx's
with named groups)."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Callable

from . import release_ids, serving
from .endpoints import Endpoint, Parameter

API = "/api/v1"
RELEASE_ID = release_ids.PATTERN  # a release's UTC build time (release_ids.py makes and reads them)
NAME = r"[a-z][a-z0-9_]*"
# a tile of a Merkle tree (C2SP tlog-tiles, history/proof/tiles.py): level 0–63, the index in 3-digit parts, a
# partial tile's width 1–255; an entry bundle: the index and width alone
BUNDLE = r"(?:x[0-9]{3}/)*[0-9]{3}(?:\.p/(?:[1-9][0-9]?|1[0-9]{2}|2[0-4][0-9]|25[0-5]))?"
TILE = r"(?:[0-9]|[1-5][0-9]|6[0-3])/" + BUNDLE


@dataclass(frozen=True)
class Segment:
    """A typed part of a URL path. `model`: a model the key may see (else 404); `country`: a country code
    in any letter case, answered as the release's code (else 404); `choice`: one of `choices`; `name`: a
    lower-case name the file decides (a methodology page); `uri`: the rest of the path, slashes and all
    (an absolute URI, as Memento's TimeGates take it)."""

    name: str
    kind: str
    choices: tuple[str, ...] = ()

    @property
    def pattern(self) -> str:
        if self.kind == "choice":
            return "|".join(re.escape(choice) for choice in self.choices)
        return {"country": "[^/]+", "uri": ".+", "tile": TILE, "bundle": BUNDLE}.get(self.kind, NAME)


@dataclass(frozen=True)
class Filter:
    """A query parameter of a list that keeps the countries whose `field` (a column of the country list)
    equals its value, ignoring case. Its `kind` says how: "code" and "name" pick at most one country (a
    code of 3 characters that is no country, or a name that is none, picks none; another length of code
    is a 400); "group" keeps every country of a value of the release's own (a region, an income group):
    a closed vocabulary, so a value that is none of them is a 400 naming them. Filters combine with AND."""

    parameter: str
    field: str
    kind: str
    description: str  # for openapi.json
    meaning: str  # for the reference page
    allowed: str
    constraints: tuple[tuple[str, object], ...] = ()  # JSON Schema keywords of the value, in order

    def __post_init__(self) -> None:
        if self.kind not in FILTER_KINDS:
            raise ValueError(f"filter {self.parameter!r}: its kind is one of {', '.join(FILTER_KINDS)}")
        if self.kind == "group" and self.parameter != self.field:
            # a group's folder names its parameter, and every list shares the release's table of groups
            raise ValueError(f"group filter {self.parameter!r}: its parameter is its field's name")

    @property
    def table(self) -> str:
        """The release's table its value is looked up in (filters.lookup_tables makes them)."""
        return {"code": "countries", "name": "country_names"}.get(self.kind, group_table(self.field))

    def parameter_of(self) -> Parameter:
        return Parameter(self.parameter, "query", self.description, self.constraints, meaning=self.meaning,
                         allowed=self.allowed, values=self.field if self.kind == "group" else "")


FILTER_KINDS = ("code", "name", "group")
# The release's tables of the group filters (filters.lookup_tables): what each server looks a request up in
SELECTIONS, COUNTRY_GROUPS = "selections", "country_groups"


def group_table(field: str) -> str:
    """Return the table of a group field's values: each as a client may send it, in lower case → its query value."""
    return f"group:{field}"


def values_table(field: str) -> str:
    """Return the table of a group field's values as the 400 names them (under the key "")."""
    return f"values:{field}"


@dataclass(frozen=True)
class Variants:
    """The query parameters of a list (docs/api.md, filters and orderings), each answered by a variant
    folder (serving.folder): a code or name filter by its one country's answer (`filter=CODE/`, or
    `filter=none/`); the group filters by their folders in order (`region=VALUE/income=VALUE/`, the value
    percent-encoded), a selection no country is in by `filter=none/`; an ordering by `ORDER=VALUE/`
    beneath them (the first ordering is none). `name` names nginx's maps of it."""

    name: str
    filters: tuple[Filter, ...]
    order: str
    orderings: tuple[str, ...]
    order_description: str = ""  # for openapi.json
    order_meaning: str = ""  # for the reference page

    def __post_init__(self) -> None:
        for kind in ("code", "name"):  # nginx's maps combine one of each (at most one country matches)
            if sum(f.kind == kind for f in self.filters) > 1:
                raise ValueError(f"variants {self.name!r}: at most one {kind} filter")

    def of_kind(self, kind: str) -> tuple[Filter, ...]:
        return tuple(f for f in self.filters if f.kind == kind)

    @property
    def groups(self) -> tuple[Filter, ...]:
        return self.of_kind("group")

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        """Its query parameters as its endpoint documents them: the filters, then the ordering."""
        return (*(f.parameter_of() for f in self.filters), Parameter(
            self.order, "query", self.order_description, (("enum", [*self.orderings, ""]),
                                                           ("default", self.orderings[0])),
            meaning=self.order_meaning,
            allowed=", ".join(self.orderings) + f" (default {self.orderings[0]})"))


@dataclass(frozen=True)
class Rule:
    """One URL family of the API: its path under `under` (a template of literal parts and {segment}s; a
    final "/" may be left out by a client), who may ask, and the file that answers it. `file` is a
    template of the segments and the slots {audience} (the key's audience variant folder), {variant}
    (the query variant folder) and {preview} (the list with the staged releases, for keys that may
    preview); its `root` is the release answering ("release") or the list of releases and the
    TimeMap ("timeline"); `status` answers without a file."""

    name: str
    path: str
    file: str = ""
    segments: tuple[Segment, ...] = ()
    key: bool = True  # False: answered without a key (a key sent is not checked)
    challenge: bool = False  # without credentials: 401 with WWW-Authenticate (feed readers wait for it), not 403
    root: str = "release"
    variants: Variants | None = None
    download: bool = False  # an export: its download name says which release and model it is
    timegate: bool = False  # asked for an instant (Accept-Datetime, ?as_of=): the 302 to a past release's answer
    page: bool = False  # an HTML page or its script: the pages' Content-Security-Policy
    cache: str = ""  # its own Cache-Control (serving.ROUTE_CACHE), whatever the operator's
    status: int = 0
    answer: str = ""  # RFC 7089 for the absolute URI in its `uri` segment: "timegate" (a 302), "timemap"
    under: str = API
    aliases: tuple[str, ...] = ()  # other spellings of the path that answer the same
    # its documented operations (OpenAPI, the API root, the reference page); not part of what it routes
    endpoints: tuple[Endpoint, ...] = field(default=(), compare=False, hash=False)

    def regex(self) -> str:
        """Return the path as a regular expression (Python's and JavaScript's alike; nginx's PCRE takes it with
        named groups: nginx_regex)."""
        return "^" + _alternatives(self, lambda segment: f"({segment.pattern})") + "$"

    def nginx_regex(self) -> str:
        return "^" + _alternatives(self, lambda s: f"(?<{NGINX_CAPTURE.get(s.kind, s.name)}>{s.pattern})") + "$"

    @property
    def template(self) -> str:
        """The documented URL of the family, as `riskapi usage` names it."""
        return self.under + self.path

    def segment(self, name: str) -> Segment:
        return next(s for s in self.segments if s.name == name)

    def build(self, **segments: str) -> str:
        """Return the URL path of the rule with its segments filled in (what routes.url_for gives)."""
        return self.under + _SLOT.sub(lambda m: segments[m[1]], self.path)

    def matches(self, path: str) -> bool:
        """Return whether a normalised path answers by this rule."""
        return self._pattern.match(path) is not None

    @functools.cached_property
    def _pattern(self) -> re.Pattern[str]:
        """regex() compiled, once per rule (usage matches every line of a log)."""
        return re.compile(self.regex())

    def file_for(self, audience: str = serving.PUBLIC_AUDIENCE, variant: str = "", preview: bool = False, /,
                 **segments: str) -> str:
        """Return the file its document lives in, under its root: for an audience (its folder; none for the
        public), a list's query variant folder (serving.folder), the preview list, and the segments'
        values. Every file a release or a timeline writes for a route is named here."""
        public = audience == serving.PUBLIC_AUDIENCE
        slots = {"audience": "" if public else serving.folder("audience", audience=audience), "variant": variant,
                 "preview": serving.folder("preview") if preview else "", **segments}
        return self.file_with(slots.__getitem__)

    def file_with(self, value_of: Callable[[str], str]) -> str:
        """Return its file template with each {slot} given by `value_of(slot)` (nginx's variables, where nginx.conf
        names the file a location answers with)."""
        return _SLOT.sub(lambda m: value_of(m[1]), self.file)


_SLOT = re.compile(r"\{([a-z_]+)\}")


# what nginx.conf's maps read a segment as ($uri is nginx's own)
NGINX_CAPTURE = {"model": "model", "country": "path_code", "uri": "timegate_target"}


def _alternatives(rule: Rule, group: Callable[[Segment], str]) -> str:
    spellings = []
    for path in (rule.path, *rule.aliases):
        optional = path.endswith("/") and path != "/" or (path == "/" and rule.under != "")
        parts = re.split(r"(\{[a-z_]+\})", (rule.under + path).rstrip("/") if optional else rule.under + path)
        spellings.append("".join(group(rule.segment(part[1:-1])) if part.startswith("{") else re.escape(part)
                                 for part in parts) + ("/?" if optional else ""))
    return spellings[0] if len(spellings) == 1 else "(?:" + "|".join(spellings) + ")"


