"""The generated parts of nginx.conf as data: each directive a `Directive` (its kind, its arguments), each map a
`Map`, which the templates write (templates/directives.j2). So no Python here spells an nginx directive, and a
directive is written one way wherever it is made (route_blocks.py, contract_blocks.py)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Directive:
    """One directive: `kind` is the macro of directives.j2 that writes it, `args` its arguments (a `block`:
    a condition and the directives inside it), `comment` what follows it on its line."""

    kind: str
    args: tuple = ()
    comment: str = ""
    gap: str = "   "  # the spaces before the comment


def set_variable(variable: str, value: str) -> Directive:
    return Directive("set", (variable, value))


def answer(status: int | str, body: str = "") -> Directive:
    """Return nginx's `return`: a status and, for an error, its body."""
    return Directive("return", (status, body))


def rewrite(target: str) -> Directive:
    return Directive("rewrite", (target,))


def when(condition: str, then: Directive) -> Directive:
    """Return an `if` holding one directive, on one line."""
    return Directive("if", (condition, then))


def if_block(condition: str, directives: list[Directive]) -> Directive:
    """Return an `if` holding several directives, one a line."""
    return Directive("block", (condition, directives))


def root(path: str) -> Directive:
    return Directive("root", (path,))


def try_files(path: str, status: int = 404) -> Directive:
    return Directive("try_files", (path, status))


def header(name: str, value: str, always: bool = True, comment: str = "") -> Directive:
    return Directive("header", (name, value, always), comment)


def default_type(media_type: str) -> Directive:
    return Directive("default_type", (media_type,))


def no_types(comment: str = "") -> Directive:
    return Directive("no_types", (), comment)


def error_page(statuses: str, change: str, location: str) -> Directive:
    return Directive("error_page", (statuses, change, location))


INTERNAL = Directive("internal")


def comment(text: str) -> Directive:
    """Return a line of its own saying why."""
    return Directive("comment", (), text, gap="")


@dataclass(frozen=True)
class Map:
    """An nginx map: `entries` are (key, value) as nginx reads them, each quoted as it needs."""

    source: str
    variable: str
    entries: tuple[tuple[str, str], ...]
    comment: str = ""

    @property
    def width(self) -> int:
        return max(len(key) for key, _ in self.entries) + 2
