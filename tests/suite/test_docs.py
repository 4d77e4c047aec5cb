"""The docs (README.md, the front page, and the pages of docs/ it links) document every CLI command,
option and endpoint (a test fails when one is added silently), and their links hold."""
import re

import click

from generator.cli import main
from generator.contract.routes import API, COUNTRY_ORDERINGS, ENDPOINTS, RULES, SCORE_ORDERINGS

from ..conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = sorted((ROOT / "docs").glob("*.md"))
DOCS = "\n".join([README] + [page.read_text(encoding="utf-8") for page in PAGES])  # what a reader can follow
DATA_README = (ROOT / "data" / "README.md").read_text(encoding="utf-8")
SHARED = "../" + "shared"  # the design folder beside a checkout: not in a clone, so never cited


def _commands(group: click.Group, prefix: str = "riskapi"):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix} {name}")
        else:
            yield f"{prefix} {name}", command


COMMAND_ROWS = [line for line in (ROOT / "docs" / "operate.md").read_text(encoding="utf-8").splitlines()
                if line.startswith("| `riskapi ")]
EVERY_COMMAND = {"--verbose", "--quiet"}  # -v and -q: said once above the table, for every command


def test_every_command_and_option_is_in_the_readme():
    # each option in its own command's row of docs/operate.md's table, not merely somewhere in the docs
    found = list(_commands(main))
    assert len(found) >= 10
    for name, command in found:
        rows = [row for row in COMMAND_ROWS if re.search(rf"`{re.escape(name)}(?=[ `])", row)]
        assert rows, f"{name} has no row in docs/operate.md's table"
        if any("same options as serve" in row for row in rows):
            rows += [row for row in COMMAND_ROWS if row.startswith("| `riskapi serve ")]
        for param in command.params:
            if isinstance(param, click.Option) and not EVERY_COMMAND & set(param.opts):
                assert any(re.search(rf"{re.escape(opt)}(?![\w-])", row) for opt in param.opts for row in rows), \
                    f"{name} {param.opts} is not in its row of docs/operate.md"


def test_every_endpoint_and_ordering_is_in_the_readme():
    # the five numbered, the root, the releases (4), release, changes, exports (6: CSV, JSON Lines and Parquet, of
    # the public models and of one), the point-in-time panels (2), the log's checkpoint, the catalogues (3: the
    # current Data Package, the release's own, the DCAT-AP catalogue)
    assert len(ENDPOINTS) == 24
    for endpoint in ENDPOINTS:
        assert f"GET {API}{endpoint.path}" in DOCS, endpoint.path
        if endpoint.alias:
            assert "…/" + endpoint.alias.rstrip("/").rsplit("/", 1)[-1] + "/" in DOCS, endpoint.alias
        for parameter in endpoint.query_parameters:
            assert f"{parameter.name}=" in DOCS, (endpoint.path, parameter.name)
    assert f"GET {API}/openapi.json" in DOCS
    for ordering in COUNTRY_ORDERINGS + SCORE_ORDERINGS:
        assert f"`{ordering}`" in DOCS, ordering


def test_the_endpoint_table_gives_each_list_its_parameters_and_orderings_as_the_route_table_declares():
    # docs/api.md's table: `GET PATH?filter=&…&order=` | …: `code` (default), `-code`, …
    rows = {match[1]: (match[2], match[3]) for match in re.finditer(
        r"^\| \d \| `GET ([^`?]+)\?([^`]*)` \| (.*) \|$", (ROOT / "docs" / "api.md").read_text(encoding="utf-8"), re.M)}
    lists = [rule for rule in RULES if rule.variants is not None]
    assert len(lists) == 2 and set(rows) == {rule.template for rule in lists}  # the countries and the scores
    for rule in lists:
        query, answer = rows[rule.template]
        declared = [f.parameter for f in rule.variants.filters] + [rule.variants.order]
        assert query == "&".join(f"{name}=" for name in declared), rule.name
        first, *others = rule.variants.orderings
        assert f"`{rule.variants.order}`" in answer and ", ".join(
            [f"`{first}` (default)"] + [f"`{ordering}`" for ordering in others]) in answer, rule.name


def test_every_export_column_is_in_the_readme():
    from generator.building.render.exports import COLUMNS
    for name, meaning in COLUMNS:
        assert f"| `{name}` | {meaning} |" in DOCS, name


def test_every_csv_column_is_in_the_data_readme():
    from generator.building.load import (
        BOUNDS_COLUMNS,
        COUNTRY_COLUMNS,
        INDICATOR_COLUMNS,
        MODEL_COLUMNS,
        OBSERVATION_COLUMNS,
        SCORING_COLUMNS,
        SECTION_COLUMNS,
    )
    for columns in (COUNTRY_COLUMNS, MODEL_COLUMNS, SECTION_COLUMNS, INDICATOR_COLUMNS, SCORING_COLUMNS,
                    BOUNDS_COLUMNS, OBSERVATION_COLUMNS):
        for column in columns:
            assert f"`{column.name}`" in DATA_README, column.name


def test_readme_names_the_two_setup_commands_and_ci_runs_the_test_one():
    assert "scripts/demo.sh" in README and "scripts/test.sh" in README
    assert "scripts/test.sh" in (ROOT / ".ci" / "run").read_text()


def test_readme_layout_names_every_module():
    layout = DOCS[DOCS.index("## Layout"):]
    package = ROOT / "generator"
    for module in sorted(package.rglob("*.py")):
        if module.name == "__init__.py" and module.stat().st_size < 100:
            continue  # an empty package marker
        assert module.name in layout, module.relative_to(ROOT)
    assert SHARED not in DOCS


def test_readme_is_a_front_page_that_links_every_page():
    assert len(README.encode()) <= 10 * 1024, len(README.encode())
    for page in PAGES:
        assert f"](docs/{page.name})" in README, page.name


def test_every_link_between_the_pages_leads_somewhere():
    for page in [ROOT / "README.md", ROOT / "data" / "README.md", *PAGES]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://")):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            assert linked.is_file(), f"{page.relative_to(ROOT)}: {target}"
            if anchor:  # a heading of that page, as GitHub makes its anchor
                headings = re.findall(r"^#{1,6} (.+)$", linked.read_text(encoding="utf-8"), flags=re.M)
                anchors = {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}
                assert anchor in anchors, f"{page.relative_to(ROOT)}: {target}"


# A clone holds this repository only: no comment, doc or page may send its reader to a file elsewhere.
OWN_TEXT = [p for folder in ("generator", "tests", "docs", "scripts", "tools", "benchmarks", "data", "schemas")
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and p.suffix in (".py", ".j2", ".js", ".mjs", ".md", ".sh", ".conf", ".toml", ".json", ".html")
            and not {"golden", "node_modules", "clients", "__pycache__"} & set(p.parts)]
OWN_TEXT += [ROOT / "README.md", ROOT / "nginx.conf", ROOT / "pyproject.toml", ROOT / "BENCHMARKS.md", ROOT / ".ci" / "run"]
MARKDOWN_NAMED = re.compile(r"(?<![\w/.-])((?:\.\./|\./)*(?:[\w-]+/)*[\w.-]+\.md)\b")


def test_no_reference_leads_outside_the_repository():
    markdown = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.md")
                if not {"node_modules", ".git"} & set(p.relative_to(ROOT).parts)]
    names = {path.rpartition("/")[2] for path in markdown}
    outside = []
    for path in OWN_TEXT:
        text = path.read_text(encoding="utf-8", errors="replace")
        if SHARED in text:
            outside.append(f"{path.relative_to(ROOT)}: {SHARED}")
        for named in MARKDOWN_NAMED.findall(text):
            plain = named.removeprefix("./")
            if named.startswith("../") or ("/" in plain and not any(m.endswith(plain) for m in markdown)) \
                    or ("/" not in plain and plain not in names):
                outside.append(f"{path.relative_to(ROOT)}: {named}")
    assert outside == [], outside


def test_no_code_or_test_cites_an_issue_by_number():
    # the issues live outside the repository: a clone's reader cannot open one cited by its number, so the code and its
    # tests say what they hold instead (BENCHMARKS.md, a record of goals set over time, may name them)
    cited = [f"{path.relative_to(ROOT)}: {m[0]}" for path in OWN_TEXT if path.suffix in (".py", ".js", ".mjs", ".sh")
             for m in re.finditer(r"\bissues? \d+", path.read_text(encoding="utf-8", errors="replace"))]
    assert cited == [], cited
