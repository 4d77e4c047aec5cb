"""The package's data flows one way: cli → build → {render, validate, publish} → scoring → load.

Walks every import of every module in generator/ (function-level ones too) and fails on a cycle or
on an import of a higher layer. routes, errors and small shared helpers sit below everything.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "generator"

# Layer of each top-level module or sub-package of generator/: a module may import only its own
# layer or lower ones, and never in a cycle.
LAYERS = {
    "errors": 0, "release_ids": 0, "serving": 0, "endpoints": 0, "transparency": 0, "routes": 0, "route_grammar": 0, "document_routes": 0, "encodings": 0, "words": 0, "layout": 0, "resources": 0, "files": 0, "processes": 0, "edge": 0,
    "load": 1,
    "scoring": 2,
    "render": 3, "validate": 3, "publish": 3, "diff": 3, "catalogue": 3, "keys": 3,
    "build": 4, "cite": 4, "witnesses": 4, "model_builds": 4, "explain": 4, "nginx_config": 4, "deploy": 4, "promote": 4,
    "serve": 5,  # runs what build checks (nginx_config): build and promote never import serve
    "cli": 6, "__main__": 6,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p) for p in PACKAGE.rglob("*.py")}


def imports_of(path: Path) -> set[str]:
    """Every generator module that the file imports, resolved to its dotted name (`from . import x`
    imports the module x when there is one, else a name of the package)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
    return found


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    assert set(files) == MODULES
    return {name: {target for target in imports_of(path) if target in files and target != name}
            for name, path in files.items()}


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return -1  # the package itself
    return LAYERS[parts[1]]


def test_every_module_has_a_layer():
    assert {m.split(".")[1] for m in graph() if "." in m} <= set(LAYERS)


def test_no_module_imports_a_higher_layer():
    upward = sorted(f"{m} (layer {layer(m)}) imports {t} (layer {layer(t)})"
                    for m, targets in graph().items() for t in targets if layer(t) > layer(m))
    assert upward == []


def test_no_import_cycles():
    edges = graph()
    cycles, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for target in sorted(edges[node]):
            if state.get(target) == "open":
                cycles.append(" → ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_the_walker_sees_relative_and_function_level_imports():
    # The walker itself: build.py's top-level relative imports, and cli/keys.py's imports two levels up
    # inside its command functions (`from ..keys import …` in `keys add`) are both found and resolved.
    assert {"generator.load", "generator.render"} <= imports_of(PACKAGE / "build.py")
    assert "generator.keys" in imports_of(PACKAGE / "cli" / "keys.py")
    assert not any(line.startswith("from ..serve") for line in (PACKAGE / "cli" / "keys.py").read_text().splitlines())


def test_the_release_id_format_has_one_owner():
    """release_ids.py makes, reads and orders release ids; no other file of generator/ (Python, JavaScript,
    templates) writes their format: the grammar of every server takes release_ids.PATTERN."""
    import re
    format_written = re.compile(r"\[0-9\]\{8\}T|%Y%m%dT|\\d\{8\}T")
    found = [str(path.relative_to(PACKAGE)) for path in sorted(PACKAGE.rglob("*"))
             if path.is_file() and path.suffix in (".py", ".js", ".mjs", ".j2") and path.name != "release_ids.py"
             and format_written.search(path.read_text(encoding="utf-8", errors="replace"))]
    assert found == []
    assert format_written.search((PACKAGE / "release_ids.py").read_text())  # the check can find it


MAX_LINES = 400


def test_no_module_is_over_400_lines():
    sizes = {str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
             for path in PACKAGE.rglob("*") if path.suffix in (".py", ".js", ".mjs") and "cloudfront" not in path.parts}
    over = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert over == {}


MAX_FUNCTION_LINES = 80
JS_FUNCTION = re.compile(r"^(?:export )?(?:async )?function (\w+)|^  (?:async )?(\w+)\(.*\) \{$")


def function_sizes() -> dict[str, int]:
    """Every function of the package, by module and name, with its length in lines: Python's from its
    syntax tree; JavaScript's from a top-level `function` (or a method of the default export) to the
    closing brace at its indentation."""
    sizes = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                sizes[f"{path.relative_to(PACKAGE)}:{node.name}"] = node.end_lineno - node.lineno + 1
    for path in [*PACKAGE.rglob("*.js"), *PACKAGE.rglob("*.mjs")]:
        if "cloudfront" in path.parts:  # minified, generated from the sources checked here
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
    assert "build.py:build" in sizes and "edge/core.js:route" in sizes and "edge/worker.js:fetch" in sizes
    assert {name: lines for name, lines in sizes.items() if lines > MAX_FUNCTION_LINES} == {}
