"""nginx.conf's part of the serving contract (generator/contract/serving.py), rendered between marker lines as
the routing is (serve/nginx/route_blocks.py): the media types, the maps of the headers that vary by status
or method, the add_header lines (constants where a header never varies), the early refusals and the
JSON error pages. scripts/nginx_conf.py writes them; a test checks they are current."""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass

from ...building.render.templates import nginx_string, template_environment
from ...contract import key_format, routes, serving
from .directives import (
    Directive,
    Map,
    answer,
    comment,
    error_page,
    header,
    if_block,
    rewrite,
)

PARTS = ("access_log", "types", "maps", "refusals", "headers", "error_pages", "errors")
BEGIN = "# {contract:%s — generated from generator/contract/serving.py by scripts/nginx_conf.py; do not edit"
END = "# contract:%s}"


def single_quoted(text: str) -> str:
    """Return a value as a single-quoted nginx string (variables in it are still read)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def double_quoted(text: str) -> str:
    """Return a value as a double-quoted nginx string (variables in it are still read), escaped as the templates
    escape one (nginx_string)."""
    return f'"{nginx_string(text)}"'


def quoted(text: str) -> str:
    """Return a constant as nginx reads it, in the quotes that need no escape where there is one."""
    return single_quoted(text) if '"' in text and "'" not in text else double_quoted(text)


def error_body(name: str, **slots: str) -> str:
    """Return the contract's error `name` as nginx returns it: a single-quoted JSON body, each {slot} given
    here (an nginx variable or a literal) in place."""
    body = json.dumps({"detail": serving.ERRORS[name]}, ensure_ascii=False, separators=(",", ":"))
    return single_quoted(re.sub(r"\{(\w+)\}", lambda m: slots.get(m[1], m[0]), body))


def _types() -> dict:
    return {"types": [(double_quoted(serving.media_type(ext)), ext) for ext in serving.MEDIA_TYPES],
            "default_type": double_quoted(serving.JSON)}


def _map(source: str, variable: str, entries: list[tuple[str, str]], comment: str = "") -> list[Map]:
    return [Map(source, variable, tuple(entries), comment)]


def _maps() -> list[Map]:
    allowed = [(method, '""') for method in serving.METHODS]
    lines = _map("$request_method", "$method_not_allowed",
                 [('""', '""'), *allowed, ("default", "1")], "\"\": a request line nginx could not read (its 400)")
    lines += _map("$request", "$method_in_request_line", [('"~^(?<method>[A-Z_]+) "', "$method"), ("default", '""')],
                  "error_page turns the method into GET; the line keeps it")
    # keyed on the user the key map found (no second look at the header), so a request with a good key
    # reads nothing else to pass
    lines += _map("$api_user", "$auth_failure", [('""', "$auth_refusal"), ("default", '""')])
    lines += _map("$http_authorization", "$auth_refusal",
                  [('""', error_body("not_provided")), ("default", "$key_refusal")],
                  "never say whether the user or the key was wrong; a mistyped key is named ($key_refusal)")
    lines += _map("$audience", "$audience_dir",
                  [(serving.PUBLIC_AUDIENCE, '""'), ("default", double_quoted(serving.folder("audience",
                                                                                            audience="$audience")))])
    lines += _map("$preview", "$preview_folder", [("yes", double_quoted(serving.FOLDERS["preview"])),
                                                  ("default", '""')], "the list of releases with the staged ones")
    # a page route's 2xx and 3xx answers ($page_route: set by the location answering; $answered)
    lines += _map("$page_route", "$content_security_policy",
                  [('""', double_quoted(serving.CSP["data"])), ("default", "$page_csp")])
    lines += _map("$answered", "$page_csp",
                  [("1", double_quoted(serving.CSP["page"])), ("default", double_quoted(serving.CSP["data"]))])
    # a bulk export's download name, on its 200: keyed on what the location set, so no other answer
    # reads its status for it
    lines += _map("$download_name", "$content_disposition", [('""', '""'), ("default", "$download_disposition")])
    lines += _map("$status", "$download_disposition",
                  [("200", single_quoted(serving.DOWNLOAD.replace("{name}", "$download_name"))), ("default", '""')])
    return lines


def _access_log() -> dict:
    """Return the access log's format (serving.ACCESS_LOG, which `riskapi usage` reads back) and the variables
    only it needs: the user or "-", the short id of the key it asked with or "-", and the path without its
    query."""
    maps = _map("$api_user", "$log_user", [('""', "-"), ("default", "$api_user")])
    maps += _map("$api_user", "$log_key", [('""', "-"), ("default", "$key_id")])
    maps += _map("$key_digest", "$key_id", [(f'"~^(?<id>.{{{key_format.KEY_ID_CHARACTERS}}})"', "$id")])
    maps += _map("$request_uri", "$request_path", [('"~^(?<path>[^?]*)"', "$path")])
    pieces = [""]  # the format's fields, a few to a line
    for field in serving.access_log_fields(routes.known_arguments()):
        if pieces[-1] and len(pieces[-1] + field) > 90:
            pieces.append("")
        pieces[-1] += field
    return {"maps": maps, "log_format": [single_quoted(piece) for piece in pieces]}


def _credential_maps() -> list[Map]:
    """Return a request-target nginx refuses before reading it, and the credential of the Authorization header
    (serving.AUTHORIZATION_FORMS, tried in order: nginx's map takes the first regular expression that
    matches)."""
    forbidden = "[" + "".join("\\" + c if c in "\\]" else c for c in serving.FORBIDDEN_IN_TARGET) + "]"
    maps = _map("$request_uri", "$target_invalid", [(single_quoted("~" + forbidden), "1"), ("default", '""')])
    # HTTP Basic is read by $basic_pair (runtime/http.conf): USER:KEY where njs decodes it
    forms = [(key, BASIC_PAIR if value.startswith(serving.BASIC_PREFIX) else value)
             for key, value in credential_forms()]
    return maps + _map("$http_authorization", "$credential", [("default", '""'), *forms])


BASIC_PAIR = "$basic_pair"


def credential_forms() -> list[tuple[str, str]]:
    """Return each Authorization form as a map entry over the header: its regular expression with the credential
    as the group `c`, and the credential it gives (HTTP Basic's: `basic:` and its Base64)."""
    forms = []
    for pattern, prefix, any_case in serving.AUTHORIZATION_FORMS:
        group = re.search(r"\((?!\?)", pattern)
        assert group is not None, pattern
        named = pattern[:group.start()] + "(?<c>" + pattern[group.end():]
        forms.append((f'"{"~*" if any_case else "~"}{named}"', f"{prefix}$c"))
    return forms


def _refusals() -> list[Directive]:
    return [if_block("$target_invalid", [answer(400, error_body('bad_target'))]),
            comment("CORS preflight and OPTIONS come without a key: answer them before any key check."),
            if_block("$request_method = OPTIONS", [rewrite(PREFLIGHT)]),
            if_block("$method_not_allowed", [rewrite(NOT_ALLOWED)])]


def status_headers(status: int, preflight: bool = False) -> dict[str, str]:
    """Return the headers only answers of `status` carry (serving.BY_STATUS) and, for a preflight, its own:
    constants, sent by the locations that answer that status alone."""
    return {**serving.BY_STATUS.get(status, {}), **(serving.PREFLIGHT if preflight else {})}


def _headers(status: int | None = None, preflight: bool = False) -> list[Directive]:
    """Return the add_header lines of every answer; with `status`, a location's that answers only that status:
    every answer's again (a location's add_header replaces the server's) and that status's own. Kept off
    the server's lines, a header of a few statuses costs the other answers nothing."""
    names = serving.HEADER_NAMES
    lines = [header(names['cache'], "$cache_control")]
    lines += [header(name, double_quoted(value)) for name, value in serving.EVERY_ANSWER.items()]
    if status is not None:
        lines += [header(name, quoted(value)) for name, value in status_headers(status, preflight).items()]
    lines += [header(names['csp'], "$content_security_policy"),
              header(names['release'], "$scope", comment="the release answering: a client cites it"),
              header(names['memento'], "$memento_header_datetime", comment="a release under its id: when live"),
              header(names['link'], "$memento_link"),
              header(names['download'], "$content_disposition", always=False),
              header(names['digest'], "$repr_digest", always=False,
                     comment="of the bytes sent (runtime/coded-digests.conf)"),
              header(names['unencoded'], "$unencoded_digest", always=False, comment="uncoded (runtime/digests.conf)")]
    return lines


def answer_headers(status: int) -> list[Directive]:
    """Return what a location answering only `status` says of its headers: nothing where it has none of its
    own (the server's apply), else every answer's and its own."""
    return _headers(status) if status_headers(status) else []


def error_location(status: int | str) -> str:
    return f"/_error/{status}"


def _error_pages() -> list[Directive]:
    pages = []
    for statuses, (sent, name) in serving.NGINX_ERRORS.items():
        change = f"={sent} " if statuses != (sent,) else ""
        pages.append(error_page(" ".join(map(str, statuses)), change, error_location(name)))
    return pages


@dataclass(frozen=True)
class ErrorLocation:
    """An internal location that answers one error (its status, and its body as nginx returns it)."""

    location: str
    status: int
    body: str = ""
    headers: tuple[Directive, ...] = ()  # its own, where its status has headers of its own

    @property
    def answer(self) -> Directive:
        return answer(self.status, self.body)


def _errors() -> dict:
    slots = {"method": {"method": "$method_in_request_line"}}
    pages = [ErrorLocation(error_location(name), sent, error_body(name, **slots.get(name, {})))
             for statuses, (sent, name) in serving.NGINX_ERRORS.items() if name != "range"]
    pages += [ErrorLocation(FORBIDDEN, 403, "$auth_failure"), ErrorLocation(CHALLENGE, 401, error_body('not_provided')),
              ErrorLocation(NOT_ALLOWED, 405, error_body('method', method='$request_method'))]
    plain = [page for page in pages if not status_headers(page.status)]
    # The answers with headers of their own: the early refusals' (OPTIONS, a method not allowed) too
    pages.append(ErrorLocation(PREFLIGHT, 204))
    own = [dataclasses.replace(page, headers=tuple(_headers(page.status, preflight=page.location == PREFLIGHT)))
           for page in pages if status_headers(page.status)]
    return {"plain": plain, "width": max(len(page.location) for page in plain), "own": own}


FORBIDDEN, CHALLENGE = error_location("forbidden"), error_location("challenge")  # a key refused: 403, or 401
NOT_ALLOWED = error_location("not_allowed")  # a method refused before any location: 405 naming it
PREFLIGHT = "/_preflight"  # OPTIONS: 204 with the preflight's headers


def render(part: str, indent: str = "") -> str:
    """Return one generated part of nginx.conf: "types" and "maps" (in http), the others (in server), each
    line after `indent`."""
    data = {"access_log": _access_log, "types": _types, "maps": lambda: _maps() + _credential_maps(),
            "refusals": _refusals, "headers": _headers, "error_pages": _error_pages, "errors": _errors}[part]()
    text = template_environment().get_template("nginx-contract.conf.j2").render(part=part, data=data)
    return "".join(f"{indent}{line}\n" for line in text.splitlines())
