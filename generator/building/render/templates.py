"""The one Jinja environment: text artefacts from the pages' templates (building/render/templates/) and
nginx's (serve/nginx/templates/)."""
from __future__ import annotations

import functools
import json

import jinja2

from ...contract.routes import url_for
from ...contract.words import counted


def nginx_string(value: str) -> str:
    """Escape a value for a double-quoted nginx string."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def nginx_map_key(value: str) -> str:
    """Return a map entry's source value, quoted, as exactly that string: never a regular expression (`~…`),
    a keyword (`default`, `include`, `hostnames`, `volatile`) or an escape. nginx's map reads a leading
    backslash as "the rest, literally" (`\\~.*` is the text ~.*), and that backslash is written doubled
    inside quotes."""
    return f'"\\\\{nginx_string(value)}"'


def nginx_quoted(value: object) -> str:
    """Return a path as one quoted nginx argument (spaces and quotes in it are fine). A `$` would start a
    variable where nginx reads one (root, access_log), and no escape stops that: refused."""
    text = str(value)
    if "$" in text:
        raise ValueError(f"{text}: nginx would read the '$' in this path as a variable; use a path without one")
    return f'"{nginx_string(text)}"'


def nginx_value(value: str) -> str:
    """Return a map entry's value, quoted: text only (a `$` would start a variable; filters.query_value leaves none)."""
    if "$" in value:
        raise ValueError(f"{value}: nginx would read the '$' in this value as a variable")
    return f'"{nginx_string(value)}"'


def json_inner(value: str) -> str:
    """Return a text as it stands inside a JSON string, with no `$` (nginx would read a variable): \u0024."""
    return json.dumps(value, ensure_ascii=False)[1:-1].replace("$", "\\u0024")


def _unknown_directive(directive: object) -> str:
    raise ValueError(f"directives.j2 writes no such directive: {directive}")


@functools.cache
def template_environment() -> jinja2.Environment:
    environment = jinja2.Environment(loader=jinja2.ChoiceLoader([
        jinja2.PackageLoader("generator.building.render", "templates"),
        jinja2.PackageLoader("generator.serve.nginx", "templates")]), trim_blocks=True,
                                     lstrip_blocks=True, keep_trailing_newline=True,
                                     # HTML pages are escaped; nginx files are not HTML
                                     autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",),
                                                                         default_for_string=False),
                                     undefined=jinja2.StrictUndefined)
    environment.filters["nginx_string"] = nginx_string
    environment.filters["map_key"] = nginx_map_key
    environment.filters["nginx_quoted"] = nginx_quoted
    environment.filters["nginx_value"] = nginx_value
    environment.filters["json_inner"] = json_inner
    environment.filters["counted"] = counted
    environment.globals["url_for"] = url_for  # every link of a page from the route table
    environment.globals["unknown_directive"] = _unknown_directive
    return environment
