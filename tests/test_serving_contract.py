"""The serving contract (generator/contract/serving.py) is the one place media types, header values, error texts,
variant folders and the edge key store's layout are written: nginx.conf's parts are rendered from it, the
edge core reads serve/edge/contract.js (generated from it), and no other file of the package or nginx.conf's
hand-written lines spells one of them."""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from generator.contract import serving
from generator.serve.edge import CONTRACT_JS, EDGE_SOURCE
from generator.serve.nginx import contract_blocks, route_blocks

from .conftest import ROOT

PACKAGE = ROOT / "generator"
# What may spell the contract: itself, what is generated from it, and the pages' prose for people
GENERATED = {PACKAGE / "contract" / "serving.py"}
PROSE = PACKAGE / "build" / "render" / "templates" / "docs"


def _pieces(template: str) -> list[str]:
    """The literal parts of a text with {slots}, long enough to be its own (not a word of another)."""
    return [piece for piece in re.split(r"\{\w+\}", template) if len(piece.strip()) >= 12]


def forbidden_literals() -> list[str]:
    values = [*serving.MEDIA_TYPES.values(), *serving.CSP.values(), serving.ERROR_CACHE_CONTROL,
              *(v for v in (*serving.EVERY_ANSWER.values(), *serving.PREFLIGHT.values()) if not v.isdigit() and len(v) > 1)]
    values += [piece for text in (*serving.ERRORS.values(), serving.REDIRECT, *serving.LINKS.values())
               for piece in _pieces(text)]
    values += [serving.DOWNLOAD.partition("{")[0]]
    values += [folder.partition("{")[0] for folder in serving.FOLDERS.values() if not folder.startswith("{")]
    return values


STORE_PREFIX = re.compile(r"""["'`](?:%s)""" % "|".join(re.escape(p) for p in serving.STORE.values() if p.endswith(":")))


def _python_strings(path: Path) -> str:
    """A module's string literals but its docstrings (a string that is a statement of its own: prose)."""
    strings, before = [], tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)) and before not in STATEMENT_START:
            strings.append(token.string)
        if token.type not in (tokenize.COMMENT, tokenize.NL):
            before = token.type
    return "\n".join(strings)


STATEMENT_START = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)


def _without_comments(text: str, marker: str) -> str:
    """A JavaScript (`//`) or nginx/Jinja (`#`) file without its comment lines and trailing comments (a
    marker inside a string stays: only one after whitespace counts)."""
    return "\n".join(re.sub(rf"(^|\s){re.escape(marker)}.*$", "", line) for line in text.splitlines())


def _hand_written_nginx_conf() -> str:
    """nginx.conf without its generated parts (routes:… and contract:…)."""
    text = (ROOT / "nginx.conf").read_text()
    return re.sub(r"# \{(?:routes|contract):(\w+) .*?# (?:routes|contract):\1\}", "", text, flags=re.S)


def code_of_every_file() -> dict[str, str]:
    out = {}
    for path in sorted(PACKAGE.rglob("*")):
        if path in GENERATED or PROSE in path.parents or (EDGE_SOURCE / "cloudfront") in path.parents:
            continue
        if path.suffix == ".py":
            out[str(path.relative_to(ROOT))] = _python_strings(path)
        elif path.suffix in (".js", ".mjs"):
            out[str(path.relative_to(ROOT))] = _without_comments(path.read_text(), "//")
        elif path.suffix == ".j2":
            out[str(path.relative_to(ROOT))] = _without_comments(path.read_text(), "#")
    out["nginx.conf"] = _without_comments(_hand_written_nginx_conf(), "#")
    return out


def test_no_file_but_the_contract_spells_a_media_type_header_value_error_text_or_folder():
    literals = forbidden_literals()
    # the check can fail: each kind of literal is found where it was written by hand before
    assert "application/json" in literals and "Invalid API key." in literals and "filter=" in literals
    assert "nosniff" in literals and "no-store" in literals and " is no longer kept; GET " in literals
    found = [(name, literal) for name, code in code_of_every_file().items() for literal in literals if literal in code]
    found += [(name, "a key store prefix") for name, code in code_of_every_file().items() if STORE_PREFIX.search(code)]
    assert found == []


def test_the_check_sees_a_literal_written_by_hand(tmp_path):
    # the same reading of a file, on a module that spells two of them: both found
    module = tmp_path / "module.py"
    module.write_text('"""A docstring may say "application/json"."""\n# so may a comment: "no-store"\n'
                      'TYPE = "application/json"\nWHO = f"k:{x}"\n')
    strings = _python_strings(module)
    assert "application/json" in strings and STORE_PREFIX.search(strings)
    assert "docstring" not in strings and "no-store" not in strings


def test_the_edge_module_binds_every_part_of_the_contract_and_holds_none():
    # serve/edge/contract.js is set from the description (useContract): one binding per part, no value of its own
    text = CONTRACT_JS.read_text()
    bound = set(re.findall(r"^  (\w+) = contract\.\1;$", text, re.M))
    declared = {name.strip() for line in re.findall(r"^export let ([^;]+);$", text, re.M) for name in line.split(",")}
    assert bound == declared == set(serving.edge_contract())
    assert not re.search(r"[\"'`]", text.split("export let", 1)[1])  # no string in its code at all


def test_nginx_conf_s_contract_parts_are_rendered_from_the_contract():
    conf = (ROOT / "nginx.conf").read_text()
    assert conf == route_blocks.write_into(ROOT / "nginx.conf"), "run: python scripts/nginx_conf.py"
    for part in contract_blocks.PARTS:
        assert contract_blocks.BEGIN % part in conf
    # every media type, constant header and error page, as nginx reads them
    for extension in serving.MEDIA_TYPES:
        assert f'"{serving.media_type(extension)}"' in conf and re.search(rf"\s{extension};", conf)
    for name, value in serving.EVERY_ANSWER.items():
        assert f'add_header {name} "{value}" always;' in conf
    for statuses, (_, name) in serving.NGINX_ERRORS.items():
        assert f"error_page {' '.join(map(str, statuses))} " in conf
        if name != "range":  # runtime/timegate.conf's, where njs sets its headers
            assert f"location = {contract_blocks.error_location(name)} " in conf
