"""Bad data is a located error and publishes nothing: dates from the future, control characters,
numbers Python would misread, header-only and unknown files, links out of the data folder, a data
release cut short; one bad weight is one problem, not a flood; text a spreadsheet would run is
neutralised in the CSV export."""
from __future__ import annotations

import datetime
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from generator.building.load import load_dataset
from generator.cli import main
from generator.errors import DataError
from generator.history.site import CURRENT, current_release, releases
from generator.publish.build_release import build
from tools.synthetic_data import main as synthetic_data

from ..conftest import replace_in, riskapi

pytestmark = pytest.mark.faults

# ---- bad data that published with exit 0 ---------------------------------------------------------

def load_problems(data) -> list[str]:
    with pytest.raises(DataError) as caught:
        load_dataset(data)
    return [str(p).replace(f"{data}/", "") for p in caught.value.problems]


def test_actual_data_from_the_future_or_before_1900_is_a_located_error(data_copy):
    this_year = datetime.date.today().year
    replace_in(data_copy / "observations" / "sovereign.csv", "gdp_growth,AUT,2024,2.5,actual",
               "gdp_growth,AUT,9999,2.5,actual")
    replace_in(data_copy / "observations" / "sovereign.csv", "gdp_growth,AUT,2023,1.0,actual",
               "gdp_growth,AUT,0001,1.0,actual")
    assert load_problems(data_copy) == [
        "observations/sovereign.csv:2: column date: '0001' is before 1900 (check the year)",
        f"observations/sovereign.csv:3: column date: 9999-12-31 is after this year ({this_year}) but the "
        "observation is marked actual (mark it projected, or fix the date)",
    ]


def test_a_control_character_in_a_text_cell_is_a_located_error(data_copy):
    replace_in(data_copy / "countries.csv", "CIV,Côte d'Ivoire", 'CIV,"Côte\nd\'Ivoire"')
    replace_in(data_copy / "models.csv", "Test fixture", "Test\x00fixture")
    found = load_problems(data_copy)
    assert "countries.csv:3: column name: contains the control character U+000A (remove line breaks, tabs and " \
           "NUL bytes from cells)" in found
    assert any(p.startswith("models.csv:2: column source: contains the control character U+0000") for p in found)


def test_a_data_release_cut_short_is_refused_by_default(tmp_path):
    # A synthetic dataset of 60 countries; its sovereign observations cut after a fifth of the file, as a
    # failed export leaves them. The file is sorted by indicator, so the later indicators lose every
    # country and most countries fall below the coverage cut-off.
    data, site = tmp_path / "data", tmp_path / "site"
    synthetic_data(["--out", str(data), "--countries", "60", "--years", "3", "--models", "2"])
    assert CliRunner().invoke(main, ["build", "--data", str(data), "--site", str(site), "-q"]).exit_code == 0
    live = current_release(site)
    observations = data / "observations" / "sovereign.csv"
    lines = observations.read_text(encoding="utf-8").splitlines(keepends=True)
    observations.write_text("".join(lines[: len(lines) // 5]), encoding="utf-8")
    refused = CliRunner().invoke(main, ["build", "--data", str(data), "--site", str(site)])
    assert refused.exit_code == 1, refused.output
    assert refused.output.startswith(f"Error: not published: against release {live}, observations/sovereign.csv "
                                     "holds ")  # the file that shrank is named first …
    assert "sovereign would lose the score of " in refused.output  # … then what it does to the scores
    assert "If the data release means it, build with --accept-changes" in refused.output
    assert current_release(site) == live and releases(site) == [live]
    accepted = CliRunner().invoke(main, ["build", "--data", str(data), "--site", str(site), "--accept-changes"])
    assert accepted.exit_code == 0 and current_release(site) != live


# ---- contained failures: the data folder --------------------------------------------------------------

def problems_of(data: Path) -> str:
    with pytest.raises(DataError) as caught:
        build(data, data.parent / "site")
    assert not (data.parent / "site" / CURRENT).exists()
    return caught.value.format_message().replace(f"{data}/", "")


def test_a_data_file_linking_outside_the_folder_is_refused_unread(data_copy, tmp_path):
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key=abcdefSECRET\n")
    (data_copy / "models.csv").unlink()
    (data_copy / "models.csv").symlink_to(secret)
    message = problems_of(data_copy)
    assert "models.csv: is a link to a file outside the data folder; not read" in message
    assert "SECRET" not in message
    result = riskapi("check", "--data", data_copy)  # check says the same
    assert result.exit_code == 1 and "SECRET" not in result.output


def test_a_link_inside_the_data_folder_is_read(data_copy):
    (data_copy / "kept").mkdir()
    (data_copy / "models.csv").rename(data_copy / "kept" / "models.csv")
    (data_copy / "models.csv").symlink_to(data_copy / "kept" / "models.csv")
    build(data_copy, data_copy.parent / "site")
    assert current_release(data_copy.parent / "site")


def test_a_first_build_of_a_header_only_observations_file_is_refused(data_copy):
    path = data_copy / "observations" / "sovereign.csv"
    path.write_text(path.read_text().splitlines()[0] + "\n")
    assert "observations/sovereign.csv:1: has no observations" in problems_of(data_copy)


def test_a_header_only_countries_file_is_one_located_error(data_copy):
    path = data_copy / "countries.csv"
    path.write_text(path.read_text().splitlines()[0] + "\n")
    assert "countries.csv:1: has no countries" in problems_of(data_copy)


def test_an_unknown_file_in_observations_is_a_located_error(data_copy):
    shutil.copy(data_copy / "observations" / "sdg.csv", data_copy / "observations" / "sdgs.csv")
    assert "observations/sdgs.csv: is not the observations of a model of models.csv" in problems_of(data_copy)


@pytest.mark.parametrize("old, new, problem", [
    # risk_points of 10^20: past 2^53, where JSON numbers stop being exact (and orjson's 64 bits end)
    ("sovereign,gdp_growth,x < 0,100", "sovereign,gdp_growth,x < 0,100000000000000000000",
     "scoring.csv:2: column risk_points: '100000000000000000000' is too large (write at most 9007199254740991 "
     "(2^53 - 1))"),
    ("sovereign,gdp_growth,x < 0,100", "sovereign,gdp_growth,x < 0,1_00",  # Python's int() reads 100
     "scoring.csv:2: column risk_points: '1_00' is not a whole number"),
    ("sovereign,economy,Economy,Growth and prices,0.6,", "sovereign,economy,Economy,Growth and prices,0_6,",
     "sections.csv:2: column default_weight: '0_6' is not a number"),
])
def test_numbers_python_would_misread_are_located_errors(data_copy, old, new, problem):
    from ..conftest import replace_in
    replace_in(data_copy / ("scoring.csv" if "gdp_growth" in old else "sections.csv"), old, new)
    assert problem in problems_of(data_copy)
    result = riskapi("check", "--data", data_copy)
    assert result.exit_code == 1 and problem.split(": ", 1)[1] in result.output  # check agrees


def test_one_bad_section_weight_is_one_problem_not_a_flood_of_unknown_indicators(data_copy):
    from ..conftest import replace_in
    replace_in(data_copy / "sections.csv", "Growth and prices,0.6,", "Growth and prices,0.6x,")
    message = problems_of(data_copy)
    assert "has problems: 1 found" in message.splitlines()[0]
    assert "is not an indicator" not in message
    # sovereign's economy section holds gdp_growth and inflation: their 6 scoring rows and 11 observations
    assert "scoring.csv: 6 rows not checked against indicators.csv" in message
    assert "observations/sovereign.csv: 11 rows not checked against indicators.csv" in message


def test_text_that_a_spreadsheet_runs_is_neutralised_in_the_csv_export_only(data_copy):
    for name in ("scoring.csv", "observations/acme_aml.csv"):
        path = data_copy / name
        path.write_text(path.read_text().replace("grey", "=2+3"))
    site = data_copy.parent / "site"
    build(data_copy, site)
    release = site / CURRENT
    rows = [line for line in (release / "api/v1/exports/acme_aml/scores.csv").read_text().splitlines()
            if line.startswith("acme_aml,CIV,indicator,fatf_list,")]
    assert rows == ["acme_aml,CIV,indicator,fatf_list,2024-12-31,current,50.0,Medium,3,2,3,50,100,100.0,,,'=2+3,"
                    "FATF call for action=no; FATF increased monitoring=yes"]
    document = orjson.loads((release / "api/v1/riskscores/acme_aml/CIV/index.json").read_bytes())
    assert document["indicators"][0]["results"][0]["data"]["value"][0] == "=2+3"  # JSON keeps it exact
    import pyarrow.parquet as pq
    typed = [row for row in pq.read_table(release / "api/v1/exports/acme_aml/scores.parquet").to_pylist()
             if (row["country_code"], row["reference"]) == ("CIV", "fatf_list")]  # and Parquet, typed
    assert [(row["raw_value"], row["raw_components"]) for row in typed] == [
        ("=2+3", [("FATF call for action", "no"), ("FATF increased monitoring", "yes")])]
