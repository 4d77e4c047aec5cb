"""README documents every CLI command, option and endpoint (a test fails when one is added silently)."""
import click

from generator.cli import main
from generator.routes import API, COUNTRY_ORDERINGS, ENDPOINTS, SCORE_ORDERINGS

from .conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DATA_README = (ROOT / "data" / "README.md").read_text(encoding="utf-8")


def _commands(group: click.Group, prefix: str = "riskapi"):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix} {name}")
        else:
            yield f"{prefix} {name}", command


def test_every_command_and_option_is_in_the_readme():
    found = list(_commands(main))
    assert len(found) >= 10
    for name, command in found:
        assert name in README, name
        for param in command.params:
            if isinstance(param, click.Option):
                assert any(opt in README for opt in param.opts), f"{name} {param.opts}"


def test_every_endpoint_and_ordering_is_in_the_readme():
    assert len(ENDPOINTS) == 9
    for endpoint in ENDPOINTS:
        assert f"GET {API}{endpoint.path}" in README, endpoint.path
        if endpoint.alias:
            assert "…/" + endpoint.alias.rstrip("/").rsplit("/", 1)[-1] + "/" in README, endpoint.alias
        for parameter in endpoint.query_parameters:
            assert f"{parameter.name}=" in README, (endpoint.path, parameter.name)
    assert f"GET {API}/openapi.json" in README
    for ordering in COUNTRY_ORDERINGS + SCORE_ORDERINGS:
        assert f"`{ordering}`" in README, ordering


def test_every_export_column_is_in_the_readme():
    from generator.render.exports import COLUMNS
    for name, meaning in COLUMNS:
        assert f"| `{name}` | {meaning} |" in README, name


def test_every_csv_column_is_in_the_data_readme():
    from generator.load import (BOUNDS_COLUMNS, COUNTRY_COLUMNS, INDICATOR_COLUMNS, MODEL_COLUMNS,
                                OBSERVATION_COLUMNS, SCORING_COLUMNS, SECTION_COLUMNS)
    for columns in (COUNTRY_COLUMNS, MODEL_COLUMNS, SECTION_COLUMNS, INDICATOR_COLUMNS, SCORING_COLUMNS,
                    BOUNDS_COLUMNS, OBSERVATION_COLUMNS):
        for column in columns:
            assert f"`{column.name}`" in DATA_README, column.name


def test_readme_names_the_two_setup_commands_and_ci_runs_the_test_one():
    assert "scripts/demo.sh" in README and "scripts/test.sh" in README
    assert "scripts/test.sh" in (ROOT / ".ci" / "run").read_text()


def test_readme_layout_names_every_module():
    layout = README[README.index("## Layout"):]
    package = ROOT / "generator"
    for module in sorted(package.rglob("*.py")):
        if module.name == "__init__.py" and module.stat().st_size < 100:
            continue  # an empty package marker
        assert module.name in layout, module.relative_to(ROOT)
    assert "../shared" not in README
