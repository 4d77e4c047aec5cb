"""nginx.conf's part of the serving contract (generator/contract/serving.py), rendered between marker lines as
the routing is (serve/nginx/route_blocks.py): the media types, the maps of the headers that vary by status
or method, the add_header lines (constants where a header never varies), the early refusals and the
JSON error pages. scripts/nginx_conf.py writes them; a test checks they are current."""
from __future__ import annotations

import json
import re

from ...contract import serving

PARTS = ("access_log", "types", "maps", "refusals", "headers", "error_pages", "errors")
BEGIN = "# {contract:%s — generated from generator/contract/serving.py by scripts/nginx_conf.py; do not edit"
END = "# contract:%s}"


def single_quoted(text: str) -> str:
    """A value as a single-quoted nginx string (variables in it are still read)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def double_quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def error_body(name: str, **slots: str) -> str:
    """The contract's error `name` as nginx returns it: a single-quoted JSON body, each {slot} given
    here (an nginx variable or a literal) in place."""
    body = json.dumps({"detail": serving.ERRORS[name]}, ensure_ascii=False, separators=(",", ":"))
    return single_quoted(re.sub(r"\{(\w+)\}", lambda m: slots.get(m[1], m[0]), body))


def header_variable(prefix: str, header: str) -> str:
    return f"${prefix}_{header.lower().replace('-', '_')}"


def _types() -> list[str]:
    width = max(len(serving.media_type(ext)) for ext in serving.MEDIA_TYPES) + 3
    lines = ["types {"]
    lines += [f"    {double_quoted(serving.media_type(ext)):{width}}{ext};" for ext in serving.MEDIA_TYPES]
    return lines + ["}", f"default_type {double_quoted(serving.JSON)};"]


def _map(source: str, variable: str, entries: list[tuple[str, str]], comment: str = "") -> list[str]:
    width = max(len(key) for key, _ in entries) + 2
    head = f"map {source} {variable} {{" + (f"   # {comment}" if comment else "")
    return [head, *(f"    {key:{width}}{value};" for key, value in entries), "}"]


def _maps() -> list[str]:
    allowed = [(method, '""') for method in serving.METHODS]
    lines = _map("$request_method", "$method_not_allowed",
                 [('""', '""'), *allowed, ("default", "1")], "\"\": a request line nginx could not read (its 400)")
    lines += _map("$request", "$method_in_request_line", [('"~^(?<method>[A-Z_]+) "', "$method"), ("default", '""')],
                  "error_page turns the method into GET; the line keeps it")
    for header in sorted({h for headers in serving.BY_STATUS.values() for h in headers}):
        entries = [(str(status), double_quoted(headers[header])) for status, headers in serving.BY_STATUS.items()
                   if header in headers]
        lines += _map("$status", header_variable("status", header), [*entries, ("default", '""')])
    for header, value in serving.PREFLIGHT.items():
        lines += _map("$request_method", header_variable("preflight", header),
                      [("OPTIONS", double_quoted(value)), ("default", '""')])
    lines += _map('"$auth_header:$api_user"', "$auth_failure",
                  [('"~^missing:"', error_body("not_provided")), ('"present:"', error_body("invalid_key")),
                   ("default", '""')], "never say whether the user or the key was wrong")
    lines += _map("$audience", "$audience_dir",
                  [(serving.PUBLIC_AUDIENCE, '""'), ("default", double_quoted(serving.folder("audience",
                                                                                            audience="$audience")))])
    lines += _map("$preview", "$preview_folder", [("yes", double_quoted(serving.FOLDERS["preview"])),
                                                  ("default", '""')], "the list of releases with the staged ones")
    # a page route's 2xx and 3xx answers ($answered, $page_route: set by the location answering)
    lines += _map('"$answered:$page_route"', "$content_security_policy",
                  [('"1:1"', double_quoted(serving.CSP["page"])), ("default", double_quoted(serving.CSP["data"]))])
    lines += _map("$status", "$content_disposition", [("200", "$download_disposition"), ("default", '""')],
                  "a bulk export's download name")
    lines += _map("$download_name", "$download_disposition",
                  [('""', '""'), ("default", single_quoted(serving.DOWNLOAD.replace("{name}", "$download_name")))])
    return lines


def _access_log() -> list[str]:
    """The access log's format (serving.ACCESS_LOG, which `riskapi usage` reads back) and the variables
    only it needs: the user or "-", and the path without its query."""
    lines = _map("$api_user", "$log_user", [('""', "-"), ("default", "$api_user")])
    lines += _map("$request_uri", "$request_path", [('"~^(?<path>[^?]*)"', "$path")])
    pieces = [""]  # the format's fields, a few to a line
    for field, _ in serving.ACCESS_LOG:
        if pieces[-1] and len(pieces[-1] + field) > 90:
            pieces.append("")
        pieces[-1] += field
    quoted = [single_quoted(piece) for piece in pieces]
    return lines + [f"log_format riskapi {quoted[0]}", *(f"                   {q}" for q in quoted[1:-1]),
                    f"                   {quoted[-1]};"]


def _credential_maps() -> list[str]:
    """A request-target nginx refuses before reading it, and the credential of the Authorization header
    (serving.AUTHORIZATION_FORMS, tried in order: nginx's map takes the first regular expression that
    matches)."""
    forbidden = "[" + "".join("\\" + c if c in "\\]" else c for c in serving.FORBIDDEN_IN_TARGET) + "]"
    lines = _map("$request_uri", "$target_invalid", [(single_quoted("~" + forbidden), "1"), ("default", '""')])
    forms = []
    for pattern, prefix, any_case in serving.AUTHORIZATION_FORMS:
        group = re.search(r"\((?!\?)", pattern)
        assert group is not None, pattern
        named = pattern[:group.start()] + "(?<c>" + pattern[group.end():]
        forms.append((f'"{"~*" if any_case else "~"}{named}"', f"{prefix}$c"))
    return lines + _map("$http_authorization", "$credential", [("default", '""'), *forms])


def _refusals() -> list[str]:
    return ["if ($target_invalid) {", f"    return 400 {error_body('bad_target')};", "}",
            "# CORS preflight and OPTIONS come without a key: answer them before any key check.",
            "if ($request_method = OPTIONS) {", "    return 204;", "}",
            "if ($method_not_allowed) {", f"    return 405 {error_body('method', method='$request_method')};", "}"]


def _headers() -> list[str]:
    names = serving.HEADER_NAMES
    lines = [f"add_header {names['cache']} $cache_control always;"]
    lines += [f"add_header {name} {double_quoted(value)} always;" for name, value in serving.EVERY_ANSWER.items()]
    lines += [f"add_header {h} {header_variable('status', h)} always;"
              for h in sorted({h for headers in serving.BY_STATUS.values() for h in headers})]
    lines += [f"add_header {h} {header_variable('preflight', h)} always;" for h in serving.PREFLIGHT]
    lines += [f"add_header {names['csp']} $content_security_policy always;",
              f"add_header {names['release']} $scope always;   # the release answering: a client cites it",
              f"add_header {names['memento']} $memento_header_datetime always;   # a release under its id: when live",
              f"add_header {names['link']} $memento_link always;",
              f"add_header {names['challenge']} $www_authenticate always;",
              f"add_header {names['download']} $content_disposition;",
              f"add_header {names['digest']} $repr_digest;   # a file's: 200, 206, 304 (runtime/digests.conf)"]
    return lines


def error_location(status: int | str) -> str:
    return f"/_error/{status}"


def _error_pages() -> list[str]:
    lines = []
    for statuses, (sent, name) in serving.NGINX_ERRORS.items():
        change = f"={sent} " if statuses != (sent,) else ""
        lines.append(f"error_page {' '.join(map(str, statuses))} {change}{error_location(name)};")
    return lines


def _errors() -> list[str]:
    slots = {"method": {"method": "$method_in_request_line"}}
    pages = [(error_location(name), f"return {sent} {error_body(name, **slots.get(name, {}))};")
             for statuses, (sent, name) in serving.NGINX_ERRORS.items() if name != "range"]
    pages += [(FORBIDDEN, "return 403 $auth_failure;"), (CHALLENGE, f"return 401 {error_body('not_provided')};")]
    width = max(len(location) for location, _ in pages)
    return [f"location = {location:{width}} {{ internal; {answer} }}" for location, answer in pages]


FORBIDDEN, CHALLENGE = error_location("forbidden"), error_location("challenge")  # a key refused: 403, or 401


def render(part: str, indent: str = "") -> str:
    """One generated part of nginx.conf: "types" and "maps" (in http), the others (in server), each
    line after `indent`."""
    lines = {"access_log": _access_log, "types": _types, "maps": lambda: _maps() + _credential_maps(),
             "refusals": _refusals, "headers": _headers, "error_pages": _error_pages, "errors": _errors}[part]()
    return "".join(f"{indent}{line}\n" for line in lines)
