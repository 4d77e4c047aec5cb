"""Build openapi.json (OpenAPI 3.1) from the JSON Schemas in schemas/ and routes.ENDPOINTS, so the three
never disagree, in the forms client generators understand: a named component for every object and
enum (named by its definition, never by a sentence title), every other definition written in place,
an operationId per route, and real answers of the release as examples."""
from __future__ import annotations

from typing import Any

from ...contract import locations, release_ids, routes, serving
from ...contract.serving import MEDIA_TYPES
from .exports import COLUMNS
from .pages import abridge

# The endpoint schemas that are objects get a component of this name; arrays are written in place.
COMPONENT_NAMES = {"model-scores": "ModelScores", "country-model-scores": "CountryModelScores",
                   "country-scores": "CountryScores", "root": "ApiRoot", "release": "Release",
                   "releases": "Releases", "changes": "ReleaseChanges"}
ERRORS = {  # each error's example is the contract's text (serving.ERRORS)
    "400": ("Invalid parameter value; `detail` names the parameter and its allowed values.",
            serving.ERRORS["bad_ordering"].format(parameter="ordering", values=", ".join(routes.SCORE_ORDERINGS))),
    "403": ("Missing or invalid API key.", serving.ERRORS["invalid_key"]),
    "404": ("Unknown route, model or country, or a custom model the client is not granted.",
            serving.ERRORS["not_found"]),
    "405": (f"Method not allowed; the `Allow` header lists {serving.ALLOW}.",
            serving.ERRORS["method"].format(method="POST")),
    "429": ("Rate limit exceeded (only where the operator turned a limit on); see `Retry-After`.",
            serving.ERRORS["throttled"]),
    "500": ("Server error.", serving.ERRORS["server"]),
}
DROPPED_KEYWORDS = ("$schema", "$id", "title")  # titles are sentences; generators would name classes by them
SECURITY_SCHEMES = {
    "apiKey": {"type": "apiKey", "in": "header", "name": "Authorization",
               "description": "`apikey USER:KEY` (the scheme word in any letter case) or the bare `KEY`"},
    "basic": {"type": "http", "scheme": "basic",
              "description": "HTTP Basic with USER as user name and KEY as password"},
    "bearer": {"type": "http", "scheme": "bearer", "description": "`Bearer KEY` (or `Token KEY`)"},
}


TAGS = {"configuration": "The models and countries", "riskscores": "Risk scores",
        "release": "The API root and the release answers come from", "exports": "Every result of a release in one file",
        "releases": "Every kept release: the list, the TimeMap, and each route as a past release answered it",
        "catalogues": "The bulk files as a Data Package and the releases as a DCAT-AP catalogue, for data portals"}
RELEASE = {"name": "release", "in": "path", "required": True,
           "description": "A release id (its UTC build time, as in X-Release); GET /releases/ lists those kept",
           "schema": {"type": "string", "pattern": release_ids.SCHEMA_PATTERN}}
AS_OF = {"name": "as_of", "in": "query", "required": False,
         "description": "An instant, as an RFC 3339 date (its 00:00:00Z) or date-time: answered with a 302 to this "
                        "route under the release that was live then (the header Accept-Datetime, an HTTP-date, does "
                        "the same); empty means now. An instant after the server's record of what was live (the "
                        "future, or the moments after a switch it has not served yet) answers 404, with "
                        "Retry-After where it is past",
         "schema": {"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"},
                              {"type": "string", "maxLength": 0}]}}
RELEASES_LIST = routes.url_for("releases")
GONE = ("A release that is no longer kept (pruned).",
        serving.ERRORS["release_gone"].format(id="20260301T000000Z", list=RELEASES_LIST))
REDIRECT = {"description": "The release live at the instant asked for (as_of, Accept-Datetime): `Location` is this "
                           "route under that release.",
            "headers": {serving.HEADER_NAMES[name]: {"schema": {"type": "string"}} for name in ("location", "link")}}
EXPORT_SCHEMA = {"type": "string",
                 "description": "Columns: " + "; ".join(f"`{name}`: {text}" for name, text in COLUMNS)}


def is_component(schema: dict) -> bool:
    """Tell whether a schema gets a named component: objects and enums do (a class in a generated client); the rest is
    written in place."""
    return schema.get("type") == "object" or "allOf" in schema or "enum" in schema


class _Components:
    """Rewrites schemas for openapi.json: refs to objects and enums point at components, others are inlined."""

    def __init__(self, definitions: dict[str, dict]):
        self.definitions = definitions

    def rewrite(self, node: Any, names: bool = False) -> Any:
        """Rewrite a node where `names` maps property names to schemas (a property may be called `title`)."""
        if isinstance(node, list):
            return [self.rewrite(item) for item in node]
        if not isinstance(node, dict):
            return node
        if names:
            return {name: self.rewrite(schema) for name, schema in node.items()}
        out = {}
        for key, value in node.items():
            if key in DROPPED_KEYWORDS:
                continue
            if key == "properties":
                out[key] = self.rewrite(value, names=True)
                continue
            if key == "$ref":
                name = value.rsplit("/", 1)[-1]
                if is_component(self.definitions[name]):
                    out["$ref"] = f"#/components/schemas/{name}"
                else:
                    out.update(self.rewrite(self.definitions[name]))
            else:
                out[key] = self.rewrite(value)
        return out

    def schemas(self) -> dict[str, dict]:
        return {name: self.rewrite(schema) for name, schema in self.definitions.items() if is_component(schema)}


def _parameter(parameter: routes.Parameter, values: dict[str, list[str]]) -> dict:
    schema = {"type": "string", **dict(parameter.constraints)}
    if parameter.examples:
        schema["examples"] = values[parameter.examples]
    if parameter.values:  # a closed vocabulary of the release's data; empty is no filter
        schema["enum"] = [*values[parameter.values], ""]
    return {"name": parameter.name, "in": parameter.where, "required": parameter.where == "path",
            "description": parameter.description, "schema": schema}


def _ok(schema: dict, media_type: str = MEDIA_TYPES["json"]) -> dict:
    """Return a 200 answer of this type and schema. A type that generic client generators do not read (JSON
    Lines, link-format, Atom, Parquet: openapi-python-client warns and leaves the answer out) is declared
    with a generic one beside it — text/plain, the same characters, which they hand over as a string;
    application/octet-stream, the same bytes, handed over as bytes."""
    content = {media_type: {"schema": schema}}
    generic = (MEDIA_TYPES["txt"] if media_type in TEXT_WITHOUT_READERS
               else OCTETS if media_type in BINARY_TYPES and media_type != OCTETS else None)
    if generic is None:
        return {"description": "OK", "content": content}
    content[generic] = {"schema": {"type": "string"} if generic == MEDIA_TYPES["txt"]
                        else {"type": "string", "format": "binary"}}
    return {"description": f"OK: {media_type} ({generic} for clients that read it as such)", "content": content}


TEXT_WITHOUT_READERS = tuple(MEDIA_TYPES[ext] for ext in ("jsonl", "link", "atom"))
BINARY_TYPES = tuple(MEDIA_TYPES[ext] for ext in serving.BINARY)
OCTETS = MEDIA_TYPES["tile"]  # application/octet-stream


def _error(text: str, detail: str) -> dict:
    """Return an error answer: when it comes (`text`) and an example of its JSON body."""
    return {"description": text, "content": {MEDIA_TYPES["json"]: {
        "schema": {"$ref": "#/components/schemas/Error"}, "example": {"detail": detail}}}}


def _responses(schema: dict, media_type: str, example: tuple[str, object] | None, keyed: bool) -> dict:
    responses = {"200": _ok(schema, media_type)}
    if example is not None:
        responses["200"]["content"][media_type]["examples"] = {"release": {"summary": example[0], "value": example[1]}}
    for status, (text, detail) in ERRORS.items():
        if keyed or status != "403":
            responses[status] = _error(text, detail)
    return responses


def _in_release(operation: dict, endpoint: routes.Endpoint) -> dict:
    """Return an operation as a past release answered it: under /releases/{release}/, immutable, 404 for a release
    never built (or staged, to a key that may not preview), 410 once pruned."""
    responses = {status: answer for status, answer in operation["responses"].items() if status != "302"}
    responses["404"] = _error(f"No release of that id (or a staged one, to a key that may not preview); "
                              f"{ERRORS['404'][0][0].lower()}{ERRORS['404'][0][1:]}",
                              serving.ERRORS["no_release"].format(id="20000101T000000Z", list=RELEASES_LIST))
    responses["410"] = _error(*GONE)
    operation_id, summary, text = endpoint.past or (f"{endpoint.operation}InRelease",
                                                    f"{endpoint.summary} (as a kept release answered it)",
                                                    operation["description"])
    return {**operation, "operationId": operation_id, "tags": ["releases"], "summary": summary, "description": text,
            "parameters": [RELEASE] + [p for p in operation["parameters"] if p is not AS_OF],
            "responses": dict(sorted(responses.items()))}


def _body(endpoint: routes.Endpoint, schemas: dict[str, dict], components: _Components) -> dict:
    """Return the schema of an endpoint's 200: its component or schema; an export's columns; else by its type."""
    if endpoint.schema in COMPONENT_NAMES:
        return {"$ref": f"#/components/schemas/{COMPONENT_NAMES[endpoint.schema]}"}
    if endpoint.schema:
        return components.rewrite(schemas[endpoint.schema])
    if endpoint.bound.download:  # a binary one (Parquet) as bytes, which generated clients hand over as such
        return EXPORT_SCHEMA if endpoint.media_type not in BINARY_TYPES else {**EXPORT_SCHEMA, "format": "binary"}
    # a JSON-LD document and a JSON Feed are JSON objects too
    json_media = (MEDIA_TYPES["json"], MEDIA_TYPES["jsonld"], MEDIA_TYPES["jsonfeed"])
    return {"type": "object"} if endpoint.media_type in json_media else {"type": "string"}


def build_openapi(schemas: dict[str, dict], values: dict[str, list[str]],
                  examples: dict[str, tuple[locations.Route, object]], site_url: str) -> dict:
    """Return the OpenAPI 3.1 description of every endpoint of routes.ENDPOINTS; `values` holds the release's
    own values a parameter lists (`models`, `countries` as examples; a group field's as its enum),
    `examples` a real answer of the release by endpoint anchor (shown abridged, like on the reference page)."""
    definitions = {**schemas["common"]["$defs"], **schemas["releases"]["$defs"]}
    for name, component in COMPONENT_NAMES.items():
        definitions[component] = schemas[name]
    components = _Components(definitions)
    model_codes = values["models"]
    paths = {}
    for endpoint in routes.ENDPOINTS:
        response = _body(endpoint, schemas, components)
        example = None
        if endpoint.anchor in examples:
            route, document = examples[endpoint.anchor]
            shown, abridged = abridge(endpoint.anchor, document)
            shortened = " (its first lines)" if isinstance(shown, str) else " (lists shortened)"
            example = (f"GET {route.url}" + (shortened if abridged else ""), shown)
        operation: dict[str, Any] = {
                     "operationId": endpoint.operation, "tags": [endpoint.tag or endpoint.path.split("/")[1]],
                     "summary": endpoint.summary,
                     "description": endpoint.text.format(example=f"`{routes.url_for('scores', model=model_codes[0])}`"),
                     "parameters": [_parameter(p, values) for p in endpoint.parameters],
                     "responses": _responses(response, endpoint.media_type, example, endpoint.keyed)}
        if not endpoint.keyed:
            operation["security"] = []
        paths[endpoint.path] = {"get": operation}
        if endpoint.alias:
            paths[endpoint.alias] = {"get": {**operation, "operationId": endpoint.alias_operation,
                                             "summary": endpoint.alias_summary, "deprecated": True}}
        if endpoint.keyed and endpoint.bound.timegate:  # asked for an instant; answered by each kept release
            operation["parameters"] = operation["parameters"] + [AS_OF]
            operation["responses"] = {"302": REDIRECT, **operation["responses"]}
            paths[routes.past_path(endpoint.path)] = {"get": _in_release(operation, endpoint)}
        elif endpoint.past:  # a keyless route a kept release answers under its id (its own Data Package)
            paths[routes.past_path(endpoint.path)] = {"get": _in_release(operation, endpoint)}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Country risk API", "version": "1.0.0",
                 "description": "Country risk scores per model and country, with the models and countries. "
                                "Every route needs an API key in the Authorization header: `apikey USER:KEY`, "
                                "the bare `KEY`, `Bearer KEY`, or HTTP Basic with USER and KEY.",
                 "contact": {"name": "API reference", "url": site_url + routes.url_for("docs")}},
        "servers": [{"url": site_url + routes.API}],
        "tags": [{"name": name, "description": text} for name, text in TAGS.items()],
        "security": [{name: []} for name in SECURITY_SCHEMES],
        "paths": paths,
        # riskapi notify: what each subscriber is POSTed, signed per Standard Webhooks
        "webhooks": {"release.published": {"post": {
            "operationId": "releasePublished", "summary": "A release was published",
            "description": "Sent to each subscriber (riskapi subscribers add) once per release, with the movers its "
                           "key may see; headers webhook-id, webhook-timestamp and webhook-signature (v1, "
                           "HMAC-SHA256 of `id.timestamp.body` with the subscriber's whsec_ secret). Answer 2xx; a "
                           "5xx, 429 or timeout is retried (4 attempts at most).",
            "security": [],
            "requestBody": {"required": True, "content": {MEDIA_TYPES["json"]: {
                "schema": {"$ref": "#/components/schemas/ReleasePublished"}}}},
            "responses": {"200": {"description": "Received"}}}}},
        "components": {"schemas": components.schemas(),  # common.json holds Error too
                       "securitySchemes": SECURITY_SCHEMES},
    }
