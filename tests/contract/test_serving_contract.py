"""The serving contract (generator/contract/serving.py) is the one place media types, header values, error texts,
variant folders and the edge key store's layout are written: nginx.conf's parts are rendered from it, the
edge core reads serve/edge/contract.js (generated from it), and no other file of the package or nginx.conf's
hand-written lines spells one of them."""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from generator.contract import routes, serving
from generator.serve.edge import CONTRACT_JS, EDGE_SOURCE
from generator.serve.nginx import contract_blocks, route_blocks

from ..conftest import ROOT

PACKAGE = ROOT / "generator"
# What may spell the contract: itself, what is generated from it, and the pages' prose for people
GENERATED = {PACKAGE / "contract" / "serving.py"}
PROSE = PACKAGE / "building" / "render" / "templates" / "docs"


def _pieces(template: str) -> list[str]:
    """Return the literal parts of a text with {slots}, long enough to be its own (not a word of another)."""
    return [piece for piece in re.split(r"\{\w+\}", template) if len(piece.strip()) >= 12]


def forbidden_literals() -> list[str]:
    values = [*serving.MEDIA_TYPES.values(), *serving.CSP.values(), serving.ERROR_CACHE_CONTROL,
              *(v for v in (*serving.EVERY_ANSWER.values(), *serving.PREFLIGHT.values()) if not v.isdigit() and len(v) > 1)]
    values += [piece for text in (*serving.ERRORS.values(), serving.REDIRECT, *serving.LINKS.values())
               for piece in _pieces(text)]
    values += [serving.DOWNLOAD.partition("{")[0]]
    values += [folder.partition("{")[0] for folder in serving.FOLDERS.values() if not folder.startswith("{")]
    values += list(serving.HANDOFF.values())  # CloudFront's hand-off headers: named once, read by every stage
    values += [serving.BASIC_PREFIX]  # the edges tell Basic's form by its prefix, not by spelling it
    values += [serving.CODE_SENT[:40]]  # a code filter's 3 characters as sent: the contract's pattern
    return values


STORE_PREFIX = re.compile(r"""["'`](?:%s)""" % "|".join(re.escape(p) for p in serving.STORE.values() if p.endswith(":")))


def _python_strings(path: Path) -> str:
    """Return a module's string literals but its docstrings (a string that is a statement of its own: prose)."""
    strings, before = [], tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)) and before not in STATEMENT_START:
            strings.append(token.string)
        if token.type not in (tokenize.COMMENT, tokenize.NL):
            before = token.type
    return "\n".join(strings)


STATEMENT_START = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)


def _without_comments(text: str, marker: str) -> str:
    """Return a JavaScript (`//`) or nginx/Jinja (`#`) file without its comment lines and trailing comments (a
    marker inside a string stays: only one after whitespace counts)."""
    return "\n".join(re.sub(rf"(^|\s){re.escape(marker)}.*$", "", line) for line in text.splitlines())


def _hand_written_nginx_conf() -> str:
    """Return nginx.conf without its generated parts (routes:… and contract:…)."""
    text = (ROOT / "nginx.conf").read_text()
    return re.sub(r"# \{(?:routes|contract):(\w+) .*?# (?:routes|contract):\1\}", "", text, flags=re.S)


def code_of_every_file() -> dict[str, str]:
    out = {}
    for path in sorted(PACKAGE.rglob("*")):
        if path in GENERATED or PROSE in path.parents or (EDGE_SOURCE / "bundles") in path.parents:
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
    assert "x-answering" in literals and "x-api-cache" in literals
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


# ---------------------------------------------------------------- the request: refused characters, the key, the log

def _credential(header: str) -> str:
    """Return the credential nginx's $credential map (and the edges' keycheck.js) takes from an Authorization
    header: the first of the contract's forms that matches, with its prefix."""
    for pattern, prefix, any_case in serving.AUTHORIZATION_FORMS:
        found = re.match(pattern, header, re.I if any_case else 0)
        if found:
            return prefix + found[1]
    return ""


def test_the_authorization_forms_are_the_contract_s_and_nowhere_else():
    # hand-worked: each documented form of docs/api.md, and what nothing may read as a key
    assert _credential("apikey alice:k3y") == "alice:k3y"
    assert _credential("  ApiKey   k3y ") == "k3y"
    assert _credential("Bearer k3y") == _credential("token k3y") == "k3y"
    assert _credential("Bearer alice:k3y") == ""  # a bearer token holds no user
    assert _credential("Basic YWxpY2U6azN5") == "basic:YWxpY2U6azN5"
    assert _credential("k3y") == "k3y"
    assert _credential("K3Y") == "K3Y" and _credential("alice:k3y") == ""  # the bare form: no user, case kept
    conf = (ROOT / "nginx.conf").read_text()
    for pattern, prefix, any_case in serving.AUTHORIZATION_FORMS:
        named = re.sub(r"\((?!\?)", "(?<c>", pattern, count=1)
        key = re.escape(("~*" if any_case else "~") + named)
        # HTTP Basic's credential is $basic_pair (runtime/http.conf): njs's USER:KEY
        value = r"\$basic_pair" if prefix == serving.BASIC_PREFIX else rf"{re.escape(prefix)}\$c"
        assert re.search(rf'"{key}"\s+{value};', conf)
    # the edges read the forms from the contract: keycheck.js spells none of them
    keycheck = (EDGE_SOURCE / "keycheck.js").read_text()
    assert not any(form[0] in keycheck for form in serving.AUTHORIZATION_FORMS)


def test_the_characters_a_url_may_not_hold_are_the_contract_s():
    conf = (ROOT / "nginx.conf").read_text()
    klass = "[" + "".join("\\" + c if c in "\\]" else c for c in serving.FORBIDDEN_IN_TARGET) + "]"
    assert contract_blocks.single_quoted("~" + klass) in conf
    assert all(f" {c} " in f" {serving.ERRORS['bad_target']} ".replace("(", " ").replace(")", " ")
               for c in serving.FORBIDDEN_IN_TARGET)
    assert set(serving.FORBIDDEN_IN_TARGET) == set('"<>\\^`{|}')  # RFC 3986's, as docs/api.md lists them


def test_the_access_log_is_written_and_read_by_one_format():
    conf = (ROOT / "nginx.conf").read_text()
    written = "".join(re.findall(r"'([^']*)'", conf.split("log_format riskapi", 1)[1].split(";", 1)[0]))
    assert written == "".join(serving.access_log_fields(routes.known_arguments()))
    assert "region=$arg_region income=$arg_income" in written  # every list's parameters, from the route table
    # a line as nginx writes it for alice asking a model's scores (hand-made from the format above)
    line = ('127.0.0.1 - alice [28/Nov/2026:22:15:03 +0000] "GET /api/v1/riskscores/aml/ HTTP/1.1" 200 5120 '
            '"code= name= model= country_code= country_name= ordering=-country_code" "curl/8.0" 0.001')
    found = re.match(serving.ACCESS_LOG_LINE, line)
    assert found is not None
    assert (found["user"], found["method"], found["path"], found["status"], found["bytes"]) == (
        "alice", "GET", "/api/v1/riskscores/aml/", "200", "5120")
    assert found["time"] == "28/Nov/2026:22:15:03 +0000"
    usage = (PACKAGE / "serve" / "usage.py").read_text()
    assert "serving.ACCESS_LOG_LINE" in usage and "(?P<user>" not in usage  # no parser of its own


def test_release_scoped_answers_are_immutable_by_one_rule():
    assert serving.immutable("private, no-cache") == "private, max-age=31536000, immutable"
    assert serving.immutable("public, max-age=60") == "public, max-age=31536000, immutable"
    assert serving.ROUTE_CACHE["forever"] == "public, max-age=31536000, immutable"
    spelled = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*")
               if path.suffix in (".py", ".js", ".j2") and path not in GENERATED and "cloudfront" not in path.parts
               and "31536000" in path.read_text(encoding="utf-8")]
    assert spelled == []
    assert serving.CHALLENGE in (ROOT / "nginx.conf").read_text()  # WWW-Authenticate, from the contract


def test_every_file_names_each_header_of_the_contract_by_its_name_there():
    # the edge's JavaScript reads a header the contract names through NAMES (contract.js), Python through
    # serving.HEADER_NAMES, never spelt; worker.js spelt three of them before (Content-Disposition,
    # Last-Modified, Content-Range), openapi.py two (Location, Link) and webhooks.py two
    names = list(serving.HEADER_NAMES.values())
    assert "Content-Disposition" in names and "Last-Modified" in names and "Content-Range" in names
    quotes = {".js": "\"'`", ".mjs": "\"'`", ".py": "\"'"}  # Python's backticks are prose: `Location` is …
    spelt = [(name, header) for name, code in code_of_every_file().items() if name.endswith(tuple(quotes))
             for header in names
             if re.search(rf"[{quotes[name[name.rindex('.'):]]}]{re.escape(header)}[{quotes[name[name.rindex('.'):]]}]",
                          code)]
    assert spelt == []


# an nginx directive as nginx.conf spells one: its name, then arguments (one of them a variable, a path, a
# pattern, a quoted string or a number) up to ";" or "{"; or a block's name and "{"; or a flag's name and ";"
NGINX_DIRECTIVE = re.compile(r"(?:^|[;{]\s*)(?:add_header|return|rewrite|try_files|location|map|set|if|error_page|"
                             r"default_type|log_format|include|root|types|internal|listen|js_\w+|limit_req\w*)"
                             r"""(?:\s*\{|\s*;|\s+(?:[^;{}\n]*\s)?[$^"'/=~@0-9(][^;{}\n]*[;{])""")


def _code_strings(path) -> list[str]:
    """Return every string a module's code holds (its docstrings left out: they may quote nginx), f-strings'
    literal parts joined with a placeholder for each value."""
    import ast
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            found.append("".join(v.value if isinstance(v, ast.Constant) else "X" for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.append(node.value)
    return found


def test_no_nginx_directive_is_spelt_in_python():
    # nginx.conf's generated parts and the runtime maps are templates over data (serve/nginx/directives.py)
    assert NGINX_DIRECTIVE.search("add_header X-Release $scope always;")  # what it finds
    assert NGINX_DIRECTIVE.search("if ($auth_failure) { return 403 $auth_failure; }")
    assert not NGINX_DIRECTIVE.search("return the file's digest; nothing else")  # prose with a ";"? no brace
    found = [(path.relative_to(ROOT).as_posix(), text) for path in sorted(PACKAGE.rglob("*.py"))
             for text in _code_strings(path) if NGINX_DIRECTIVE.search(text)]
    assert found == []
