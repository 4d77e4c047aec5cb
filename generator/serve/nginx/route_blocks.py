"""nginx.conf's routing, generated from the route table (routes.RULES): the maps of the release-scoped
paths, the TimeGate and the query variants, and one `location` per rule. nginx.conf keeps them between
marker lines, with the hand-written parts (headers, error pages, limits) around them;
scripts/nginx_conf.py writes them there and a test checks they are current."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ...building.render.templates import template_environment
from ...contract import routes, serving
from ...contract.routes import Rule
from . import contract_blocks
from .contract_blocks import CHALLENGE, FORBIDDEN, error_body, error_location
from .directives import (
    Directive,
    answer,
    default_type,
    if_block,
    no_types,
    rewrite,
    root,
    set_variable,
    try_files,
    when,
)

PARTS = ("maps", "locations")
BEGIN = "# {routes:%s — generated from generator/contract/routes.py by scripts/nginx_conf.py; do not edit"
END = "# routes:%s}"
# A group filter's value that is none of the release's: no value's query form (filters.query_value) has a "!"
INVALID_VALUE = '"!invalid"'
JSON_TYPES = ("json",)  # a file of another type takes its type for nginx's own `return`: errors go elsewhere
ERROR_LOCATIONS = {403: FORBIDDEN, 404: error_location("not_found")}
# Every 2xx and 3xx status (RFC 9110 and the registry): a hash map's keys, so no response runs a regex
ANSWERED = (200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 307, 308)


@dataclass
class Location:
    match: str
    directives: list[Directive] = field(default_factory=list)
    comment: str = ""
    nested: list[Location] = field(default_factory=list)  # tried before the location's own directives


def _variable(rule: Rule, name: str) -> str:
    """Return what a file template's {name} is in nginx: a segment's capture (a country's code as the release
    has it), the audience folder, the query variant folder or the list of releases with staged ones."""
    if name == "audience":
        return "${audience_dir}"
    if name == "variant":
        assert rule.variants is not None
        return f"${{{rule.variants.name}_variant}}"
    if name == "preview":
        return "$preview_folder"
    segment = rule.segment(name)
    return "$path_country" if segment.kind == "country" else f"${routes.NGINX_CAPTURE.get(segment.kind, name)}"


def _location(rule: Rule) -> Location:
    simple = not rule.segments and not rule.aliases and (not rule.path.endswith("/") or rule.path == "/"
                                                          and rule.under == "")
    location = Location(f"= {rule.under + rule.path}" if simple else f"~ {regex_argument(rule.nginx_regex())}")
    steps = location.directives
    if rule.status:
        steps += [*contract_blocks.answer_headers(rule.status), answer(rule.status)]
        return location
    # What the response's headers need of the route, said here once (the server block resets them)
    # rather than worked out again from $uri by regular expressions for every response.
    if rule.timegate:
        steps.append(set_variable("$timegate_route", "1"))
    if rule.page:
        steps.append(set_variable("$page_route", "1"))
    if rule.cache:
        steps.append(set_variable("$route_cache", f'"{serving.ROUTE_CACHE[rule.cache]}"'))
    if rule.download:
        model = "$model" if rule.segments[0].kind == "model" else ""
        steps.append(set_variable("$download_name", f'"{routes.download_name("$scope", "$format", model)}"'))
    if rule.answer:  # the key check, then the TimeGate or TimeMap of a URI (runtime/timegate.conf: njs)
        steps += [when("$auth_failure", answer(403, "$auth_failure")), rewrite(f"/_{rule.answer}_uri")]
        return location
    as_json = rule.file.rsplit(".", 1)[-1] in JSON_TYPES

    def refuse(status: int, condition: str, body: str = "") -> None:
        steps.append(when(condition, answer(status, body) if as_json else rewrite(ERROR_LOCATIONS[status])))
    if rule.key and rule.challenge:  # without credentials a 401 that asks for them, else the 403
        steps.append(when("$auth_failure", rewrite("$challenge_or_refusal")))
    elif rule.key:
        refuse(403, "$auth_failure", "$auth_failure")
    for segment in rule.segments:
        if segment.kind == "model":
            refuse(404, "$model_missing")
        elif segment.kind == "country":
            refuse(404, '$path_country = ""')
    if rule.variants is not None:
        bad = f"${rule.variants.name}_bad_request"
        steps.append(when(bad, answer(400, bad)))
    file = rule.file_with(lambda slot: _variable(rule, slot))
    if rule.root == "timeline":
        steps += [root("$timeline_root"), try_files(f"/{file}")]
    else:
        steps.append(try_files(f"/$scope/{file}"))
    return location


def regex_argument(regex: str) -> str:
    """Return a location's regular expression as one nginx argument: quoted where a brace or space would end it."""
    return f'"{regex}"' if "{" in regex or " " in regex else regex


def _scoped_location() -> Location:
    """Return every kept release, under RELEASES_UNDER/{id}/…: each route answered from that release's own files
    with today's rules and the key's grants now ($scope is that release). Pruned: 410."""
    listed = routes.rule_named('releases').template
    regex = f"^{routes.RELEASES_UNDER}/{routes.RELEASE_ID}(?<scoped_rest>/[A-Za-z0-9_./-]*)?$"
    return Location(f'~ "{regex}"', [
        no_types("its errors are JSON whatever the path asks for (…/scores.csv)"),
        default_type(f'"{serving.JSON}"'),
        when("$scoped_auth_failure", answer(403, "$scoped_auth_failure")),
        if_block("$scope_refusal = gone", [answer(410, error_body('release_gone', id='$scoped_id', list=listed))]),
        if_block("$scope_refusal = unknown", [answer(404, error_body('no_release', id='$scoped_id', list=listed))]),
        rewrite("$scoped_route")],
        "Every kept release under its id: each route as that release answered it (410 once pruned)")


def _literal_prefix(regex: str) -> tuple[str, str]:
    """Return what every path a location's regular expression matches starts with, and the rest of the
    expression after it (a literal followed by `?`, `*` or `{` is not certain, so it is left out)."""
    body = regex.strip('"').removeprefix("^")
    if body.startswith("(?:"):  # spellings of one route: what they all start with
        inner = body[3:body.index(")$")] if body.endswith(")$") else ""
        if inner and "(" not in inner:
            return os.path.commonprefix([_literal_prefix("^" + branch)[0] for branch in inner.split("|")]), body
        return "", body
    prefix, at = [], 0
    while at < len(body):
        if body[at] == "\\" and body[at + 1:at + 2] in ("." , "/", "-"):
            prefix.append(body[at + 1])
            at += 2
        elif body[at].isalnum() or body[at] in "/_-":
            prefix.append(body[at])
            at += 1
        else:
            break
    if body[at:at + 1] in ("?", "*", "{") and prefix:
        prefix.pop()
        at -= 1
    return "".join(prefix), body[at:]


def _block_of(prefix: str) -> str | None:
    """Return the prefix location a path with this literal beginning is grouped under: the API's first
    folder (/api/v1/riskscores/), or the first folder of any other path (/docs/)."""
    depth = routes.API.count("/") + 2 if prefix.startswith(routes.API + "/") else 2
    parts = prefix.split("/")
    return "/".join(parts[:depth]) + "/" if len(parts) > depth else None


def grouped(locations: list[Location]) -> list[Location]:
    """Return the regex locations under a common folder nested in one `location ^~ /folder/`, so a request
    tries the few regular expressions of its folder instead of every route's in turn (nginx tries a
    server's regex locations one by one, in order). The same location answers every path as before:
    one whose paths may fall under a folder and outside it (`^/api/v1/releases/?$`) is in both places."""
    regexes = {id(loc): _literal_prefix(loc.match[2:]) for loc in locations if loc.match.startswith("~ ")}
    members: dict[str, list[Location]] = {}
    for location in locations:
        if id(location) in regexes and (block := _block_of(regexes[id(location)][0])):
            members.setdefault(block, []).append(location)
    blocks = {block: found for block, found in members.items() if len(found) > 1}

    def also_under(location: Location, block: str) -> bool:  # may match a path under block, not only
        prefix, rest = regexes[id(location)]
        return block.startswith(prefix) and not prefix.startswith(block) and (rest != "/?$" or block == prefix + "/")
    inside = {id(loc) for found in blocks.values() for loc in found}
    result, placed = [], set()
    for location in locations:
        if id(location) not in inside:
            result.append(location)
            continue
        block = next(b for b, found in blocks.items() if location in found)
        if block in placed:
            continue
        placed.add(block)
        nested = [loc for loc in locations if loc in blocks[block] or id(loc) in regexes and id(loc) not in inside
                  and also_under(loc, block)]
        result.append(Location(f"^~ {block}", [answer(404)], f"Under {block}: its routes' regular expressions only",
                               nested))
    return result


def render(part: str) -> str:
    """Return one generated part of nginx.conf: "maps" (in http) or "locations" (in server)."""
    rules = routes.RULES
    # exact strings (a map tries no regex on an empty value): the rest with and without its final "/"
    scoped_routes = [(spelling, routes.API + route) for rest, route in routes.SCOPED_ALIASES
                     for spelling in dict.fromkeys((rest.rstrip("/"), rest))]
    keyless_scoped = [spelling for spelling, route in scoped_routes
                      if not getattr(routes.rule_of(route), "key", True)]  # every alias names a route
    scoped_routes += [(f"~{refused}", "/_no_route") for refused in routes.SCOPED_REFUSED]
    locations = []
    for rule in rules:
        if rule.name == "releases":  # the releases under their id come before the list's own routes
            locations.append(_scoped_location())
        locations.append(_location(rule))
    locations.append(Location("/", [answer(404)], "Any other path"))
    return template_environment().get_template("nginx-routes.conf.j2").render(
        part=part, under=routes.RELEASES_UNDER, release_id=routes.RELEASE_ID, prefix=routes.API,
        timemap=routes.rule_named("timemap").template, timegate=routes.timegate_prefix(),
        timemaps=routes.timegate_prefix("route-timemap"), aliases=routes.SCOPED_ALIASES, keyless_scoped=keyless_scoped,
        scoped_routes=scoped_routes, timegates=[rule.regex() for rule in rules if rule.timegate],
        variants=[rule.variants for rule in rules if rule.variants is not None], no_match=routes.NO_MATCH,
        answered=ANSWERED, locations=grouped(locations),
        filter_folder=serving.FOLDERS["filter"], order_folder=serving.FOLDERS["order"], error_body=error_body,
        group_folder=serving.FOLDERS["group"], invalid=INVALID_VALUE,
        challenge_location=CHALLENGE, forbidden_location=FORBIDDEN, code_sent=serving.CODE_SENT,
        country_code=routes.COUNTRY_CODE.pattern, **_links())


def _links() -> dict[str, str]:
    """Return the contract's Links with nginx's variables: an original's (the request as sent), a release-scoped
    answer's (the route it answers as, with the query as sent)."""
    prefixes = dict(site="$site_url", timegate=routes.timegate_prefix(),
                    timemaps=routes.timegate_prefix("route-timemap"))
    scoped = "$scoped_route$is_args$args"
    return {"original_link": serving.LINKS["original"].format(uri="$request_uri", **prefixes),
            "scoped_link": serving.LINKS["memento"].format(
                site="$site_url", uri=scoped, original=serving.LINKS["original"].format(uri=scoped, **prefixes))}


def write_into(conf: Path) -> str:
    """Return nginx.conf with its generated parts rendered anew (what scripts/nginx_conf.py writes): the
    routing's and the serving contract's (serve/nginx/contract_blocks.py)."""
    text = conf.read_text()
    parts = [(BEGIN, END, part, lambda part, indent: render(part)) for part in PARTS]  # indented by its template
    contract = contract_blocks
    parts += [(contract.BEGIN, contract.END, part, contract.render) for part in contract.PARTS]
    for begin, end, part, render_part in parts:
        begin, end = begin % part, end % part
        start, stop = text.index(begin), text.index(end)
        line_start = text.rindex("\n", 0, start) + 1
        indent = text[line_start:start]
        rendered = render_part(part, indent).strip("\n")
        text = text[:start] + begin + "\n" + rendered + "\n" + indent + text[stop:]
    return text
