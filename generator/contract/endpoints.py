"""What documents a rule of the route table (routes.py): its endpoints — each one's OpenAPI operation,
its line in the API root and its section of the reference page — and their parameters. They are written
in the table, inside the rule they document."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from . import serving


class Documented(Protocol):
    """What an endpoint reads of the rule it documents (routes.Rule; read-only)."""

    @property
    def path(self) -> str: ...
    @property
    def under(self) -> str: ...
    @property
    def key(self) -> bool: ...
    @property
    def timegate(self) -> bool: ...
    @property
    def download(self) -> bool: ...
    @property
    def aliases(self) -> tuple[str, ...]: ...
    @property
    def segments(self) -> tuple: ...


@dataclass(frozen=True)
class Parameter:
    name: str
    where: str  # "path" or "query"
    description: str  # for openapi.json
    constraints: tuple[tuple[str, object], ...] = ()  # JSON Schema keywords of the string value, in order
    examples: str | None = None  # "models" or "countries": openapi.json lists the release's own
    meaning: str = ""  # for the reference page (query parameters)
    allowed: str = ""
    values: str = ""  # a field of the country list: openapi.json's enum is the release's values of it


@dataclass(frozen=True)
class Endpoint:
    """A documented operation of a rule: its OpenAPI operation, its line in the API root and its section
    of the reference page. `choice` is the value of its rule's choice segment it documents, where the
    rule has one (an export's format)."""

    anchor: str  # the endpoint's short name (and the reference page's anchor)
    operation: str  # openapi.json's operationId: the method name generated clients get
    title: str
    summary: str  # openapi.json's summary
    text: str  # the reference page's sentence; {example} is an example URL
    schema: str  # the response schema in schemas/ ("" for a body that is no JSON document of ours)
    parameters: tuple[Parameter, ...] = ()
    alias_summary: str | None = None
    alias_operation: str | None = None
    media_type: str = serving.MEDIA_TYPES["json"]
    tag: str = ""  # openapi.json groups operations by it (generated clients by module)
    choice: str = ""
    number: int = 0  # docs/api.md's numbered endpoints (1–5): listed first, in that order
    past: tuple[str, str, str] | None = None  # its operation under a kept release: (operationId, summary, text)
    rule: Documented | None = None  # the rule it documents (routes.Rule): set from the table (ENDPOINTS)

    @property
    def bound(self) -> Documented:
        assert self.rule is not None, "an endpoint of ENDPOINTS"
        return self.rule

    @property
    def keyed(self) -> bool:
        return self.bound.key

    @property
    def heading(self) -> str:
        return f"{self.number}. {self.title}" if self.number else self.title

    @property
    def query_parameters(self) -> tuple[Parameter, ...]:
        return tuple(p for p in self.parameters if p.where == "query")

    @property
    def path(self) -> str:
        """Its URL template under API, as its rule has it (a choice segment given its value)."""
        chosen = {s.name: self.choice for s in self.bound.segments if s.kind == "choice" and self.choice}
        return re.sub(r"\{([a-z_]+)\}", lambda m: chosen.get(m[1], m[0]), self.bound.path)

    @property
    def template(self) -> str:
        """Its URL template, as clients read it (the API root's `url`)."""
        return self.bound.under + self.path

    @property
    def alias(self) -> str | None:
        """Another spelling of the path that answers the same."""
        return self.bound.aliases[0] if self.bound.aliases else None
