"""Hold docstrings to PEP 257's first line, "a command ('Do this', 'Return that')", as STYLE asks: ruff's
D401 (pyproject) fails a line that opens with "The", "A" or "Returns"; this test holds the share of lines
that open with a verb in the imperative, by pydocstyle's word list, at 90 % or more."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from pydocstyle.wordlists import IMPERATIVE_BLACKLIST, IMPERATIVE_VERBS, stem

from ..conftest import ROOT

FOLDERS = ("generator", "tests", "scripts", "benchmarks", "tools")
SHARE = 0.90
# Verbs the project's docstrings open with that pydocstyle's list (233 common ones) lacks.
MORE_VERBS = {
    "ask", "attach", "bring", "cite", "deactivate", "deploy", "discard", "escape", "fail", "finish", "guard",
    "hard-link", "kill", "know", "land", "let", "link", "lose", "mean", "measure", "name", "pause", "point",
    "rank", "re-render", "rebuild", "refuse", "remember", "rewrite", "say", "score", "shrink", "sign", "skip",
    "sort", "stage", "sweep", "tell", "warn",
}


def opens_with_a_command(line: str) -> bool:
    """Tell whether a docstring's first line opens with a verb in the imperative ("Return", not "Returns")."""
    word = re.sub(r"[^\w-]", "", line.split()[0]).lower() if line.split() else ""
    if word in IMPERATIVE_BLACKLIST:
        return False
    return word in IMPERATIVE_VERBS.get(stem(word), ()) or word in MORE_VERBS


def is_property(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Tell whether a function is read as an attribute: its docstring names a thing, as PEP 257 allows."""
    names = {getattr(decorator, "id", getattr(decorator, "attr", "")) for decorator in function.decorator_list}
    return bool(names & {"property", "cached_property", "setter"})


def function_docstrings(folders: tuple[str, ...] = FOLDERS) -> list[tuple[str, str]]:
    """Return (where, first line) of every docstring of a function or method, but a test's and a property's
    (pydocstyle's D401 leaves those out too: a test's name says what it proves)."""
    found = []
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "node_modules" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                docstring = ast.get_docstring(node)
                if docstring and not node.name.startswith("test") and not is_property(node):
                    where = f"{Path(path).relative_to(ROOT)}:{node.lineno} {node.name}"
                    found.append((where, docstring.strip().split("\n")[0]))
    return found


def test_the_judge_tells_a_command_from_a_noun_phrase_or_a_description():
    assert opens_with_a_command("Return the release's id.") and opens_with_a_command("Tell whether it is live.")
    assert opens_with_a_command("Re-render the maps.")
    assert not opens_with_a_command("The release's id.") and not opens_with_a_command("Returns the release's id.")
    assert not opens_with_a_command("Whether it is live.") and not opens_with_a_command("Every file, by path.")


def test_nine_in_ten_function_docstrings_open_with_a_command():
    docstrings = function_docstrings()
    # every folder with functions that have docstrings was read (scripts/' functions have none)
    assert {where.split("/")[0] for where, _ in docstrings} == {"generator", "tests", "benchmarks", "tools"}
    not_commands = [f"{where}: {line}" for where, line in docstrings if not opens_with_a_command(line)]
    share = 1 - len(not_commands) / len(docstrings)
    assert share >= SHARE, f"{share:.1%} open with a command; these do not:\n" + "\n".join(not_commands)
