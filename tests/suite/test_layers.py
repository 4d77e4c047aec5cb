"""generator/ is a few packages, each owning one part of a release's life, in a declared order (ORDER): a
module imports only its own unit or units before it, never in a circle, and never by a string.

Walks every import of every module (those inside functions too) and every call that imports a module by
name, so an arrow no reader can follow fails here like any other.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "generator"

# The units of generator/, first to last: a module belongs to the longest unit its dotted name starts with,
# and may import modules of its own unit and of units before it.
ORDER = (
    "errors",  # the errors every part raises
    "system",  # files, locks and child processes
    "contract",  # what the API is: routes, where documents live, what every server says
    "history.proof", "history",  # what was live when (the catalogue, the site's folders) and how to prove it
    "building", "building.load", "building.scoring", "building.output", "building.diff", "building.render", "building.validate",
    # what a switch writes beside the releases (the timeline: the list of releases, feeds, TimeMap, panel,
    # catalogues, log files), at every switch, serve and deploy: made with the renderer and validator,
    # and brought up to date by the writer's switch
    "switch",
    "building.writer", "building.model_jobs", "building.explain",  # one release from the CSVs
    "serve.keys", "serve.edge", "serve.nginx", "serve.deploy", "serve",  # releases in front of clients
    "publish",  # a release built, checked by the servers and switched live
    "cli",
)
TOP_LEVEL_MODULES = {"__init__.py", "errors.py"}
STRING_IMPORTS = {"import_module", "__import__", "spec_from_file_location"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p) for p in PACKAGE.rglob("*.py")}


def imports_of(path: Path, source: str | None = None) -> set[str]:
    """Return every generator module the file imports (or `source`, read as if it were that file), resolved to its
    dotted name (`from . import x` imports the module x when there is one, else a name of the package);
    an import by a string (importlib) counts too."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8") if source is None else source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("generator")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("generator"):
                modules = {f"{target}.{alias.name}" for alias in node.names} & MODULES
                found |= modules if len(modules) == len(node.names) else modules | {target}
        elif isinstance(node, ast.Call) and _called(node) in STRING_IMPORTS:
            found.add(next((a.value for a in node.args if isinstance(a, ast.Constant)), "generator.<a string>"))
    return found


def _called(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    assert set(files) == MODULES
    return {name: {target for target in imports_of(path) if target.startswith("generator") and target != name}
            for name, path in files.items()}


def unit(module: str) -> int:
    """Return the place in ORDER of the unit `module` belongs to (-1: the package itself)."""
    inside = module.removeprefix("generator.")
    if inside == "generator":
        return -1
    fits = [u for u in ORDER if inside == u or inside.startswith(u + ".")]
    if not fits:
        raise AssertionError(f"{module} is in no unit of ORDER")
    return ORDER.index(max(fits, key=len))


def against_the_order(edges: dict[str, set[str]]) -> list[str]:
    return sorted(f"{m} imports {t}, a later unit" for m, targets in edges.items() for t in targets
                  if t not in MODULES or unit(t) > unit(m))


def cycles_in(edges: dict[str, set[str]]) -> list[str]:
    cycles, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for target in sorted(edges.get(node, ())):
            if state.get(target) == "open":
                cycles.append(" → ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    return cycles


def test_every_module_is_in_a_unit_and_few_sit_at_the_top():
    assert all(unit(m) >= -1 for m in MODULES)
    assert {p.name for p in PACKAGE.glob("*.py")} <= TOP_LEVEL_MODULES


def test_no_module_imports_against_the_order():
    assert against_the_order(graph()) == []


def test_no_import_cycles():
    assert cycles_in(graph()) == []


def test_no_two_modules_share_a_name():
    """A file name says what the module is wherever it is met (cli/'s command groups, named for the
    commands they hold, aside)."""
    names: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name not in ("__init__.py", "__main__.py") and "cli" not in path.relative_to(PACKAGE).parts:
            names.setdefault(path.stem, []).append(str(path.relative_to(PACKAGE)))
    assert {name: paths for name, paths in names.items() if len(paths) > 1} == {}


UPWARD_INSIDE_A_FUNCTION = """
def late():
    from ...publish import build  # a build step that reaches up to the orchestration
    return build
"""
BY_A_STRING = """
import importlib
renderer = importlib.import_module("generator.serve.runtime")
"""


@pytest.mark.parametrize("source, caught", [(UPWARD_INSIDE_A_FUNCTION, "generator.publish"),
                                            (BY_A_STRING, "generator.serve.runtime")])
def test_the_walker_catches_an_upward_import_inside_a_function_or_by_a_string(source, caught):
    # A module's text read as if it were building/render/planted.py, by the same walker and judged by the same
    # order: each of these imports is against it.
    planted = PACKAGE / "building" / "render" / "planted.py"
    found = imports_of(planted, source)
    assert caught in found
    assert against_the_order({"generator.building.render.planted": found}) != []


def test_nothing_in_generator_imports_by_a_string():
    strings = {m: t for m, targets in graph().items() for t in targets if t == "generator.<a string>"}
    assert strings == {}
    assert not [p for p in PACKAGE.rglob("*.py") if "import_module(" in p.read_text(encoding="utf-8")]


def test_the_release_id_format_has_one_owner():
    """release_ids.py makes, reads and orders release ids; no other file of generator/ (Python, JavaScript,
    templates) writes their format: the grammar of every server takes release_ids.PATTERN."""
    import re
    format_written = re.compile(r"\[0-9\]\{8\}T|%Y%m%dT|\\d\{8\}T")
    found = [str(path.relative_to(PACKAGE)) for path in sorted(PACKAGE.rglob("*"))
             if path.is_file() and path.suffix in (".py", ".js", ".mjs", ".j2") and path.name != "release_ids.py"
             and format_written.search(path.read_text(encoding="utf-8", errors="replace"))]
    assert found == []
    assert format_written.search((PACKAGE / "contract" / "release_ids.py").read_text())  # the check can find it


MAX_LINES = 400


def test_no_module_is_over_400_lines():
    sizes = {str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
             for path in PACKAGE.rglob("*") if path.suffix in (".py", ".js", ".mjs")}
    over = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert over == {}


MAX_FUNCTION_LINES = 80
JS_FUNCTION = re.compile(r"^(?:export )?(?:async )?function (\w+)|^  (?:async )?(\w+)\(.*\) \{$")


def function_sizes() -> dict[str, int]:
    """Return every function of the package, by module and name, with its length in lines: Python's from its
    syntax tree; JavaScript's from a top-level `function` (or a method of the default export) to the
    closing brace at its indentation."""
    sizes = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                sizes[f"{path.relative_to(PACKAGE)}:{node.name}"] = node.end_lineno - node.lineno + 1
    for path in [*PACKAGE.rglob("*.js"), *PACKAGE.rglob("*.mjs")]:
        if "bundles" in path.parts:  # bundled (and minified), generated from the sources checked here
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            found = JS_FUNCTION.match(line)
            if found:
                indent = line[: len(line) - len(line.lstrip())]
                end = next(i for i in range(number + 1, len(lines)) if lines[i] in (indent + "}", indent + "},"))
                sizes[f"{path.relative_to(PACKAGE)}:{found[1] or found[2]}"] = end - number + 1
    return sizes


def test_no_function_is_over_80_lines():
    sizes = function_sizes()
    assert "publish/build_release.py:build" in sizes and "serve/edge/core.js:route" in sizes
    assert "serve/edge/worker.js:fetch" in sizes
    assert {name: lines for name, lines in sizes.items() if lines > MAX_FUNCTION_LINES} == {}
