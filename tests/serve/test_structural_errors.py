"""One structural error gives one clear message, not a flood of knock-on ones (each output exact).

The counts come from the tiny fixture (tests/fixtures/tiny): scoring.csv has 14 rows, bounds.csv 3,
the observation files 9 (acme_aml), 11 (sdg) and 16 (sovereign) rows.
"""
from __future__ import annotations

import csv
import io

import pytest

from generator.building.load import load_dataset
from generator.errors import DataError

from ..conftest import replace_in


def problems_of(data) -> list[str]:
    with pytest.raises(DataError) as caught:
        load_dataset(data)
    return [line.replace(f"{data}/", "") for line in caught.value.format_message().splitlines()]


def drop_column(path, column: str) -> None:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    index = rows[0].index(column)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([r[:index] + r[index + 1:] for r in rows])
    path.write_text(buffer.getvalue(), encoding="utf-8")


def test_a_missing_column_is_one_problem_and_what_it_stopped_is_counted(data_copy):
    drop_column(data_copy / "indicators.csv", "max_lag")
    assert problems_of(data_copy) == [
        f"{data_copy} has problems: 1 found",
        "  indicators.csv:1: column max_lag: column is missing from the header (the header is model,reference,"
        "section,name,short_name,source,url,description,default_weight,frequency,unit,currency,last_updated,"
        "max_lag,applicability)",
        # every row of the files that refer to indicators (14 + 3 + 9 + 11 + 16), counted once per file
        "  scoring.csv: 14 rows not checked against indicators.csv, which has problems above",
        "  bounds.csv: 3 rows not checked against indicators.csv, which has problems above",
        "  observations/acme_aml.csv: 9 rows not checked against indicators.csv, which has problems above",
        "  observations/sdg.csv: 11 rows not checked against indicators.csv, which has problems above",
        "  observations/sovereign.csv: 16 rows not checked against indicators.csv, which has problems above",
    ]


def test_a_decimal_comma_in_a_weight_skips_the_sum_it_would_break(data_copy):
    # gdp_growth's row (weight 0.6667) cannot be read: its 3 scoring rows and its 6 sovereign
    # observations are not checked against it, and economy's weight sum (0.3333 without it) is not taken.
    replace_in(data_copy / "indicators.csv", "0.6667,annual", "0,6667,annual")
    assert problems_of(data_copy) == [
        f"{data_copy} has problems: 1 found",
        "  indicators.csv:2: has 16 cells, the header has 15 (quote cells that contain commas)",
        "  scoring.csv: 3 rows not checked against indicators.csv, which has problems above",
        "  observations/sovereign.csv: 6 rows not checked against indicators.csv, which has problems above",
        "  indicators.csv: the indicator weights of section sovereign/economy were not checked, as a row they "
        "depend on could not be read",
    ]


def test_a_broken_country_row_does_not_fail_its_observations_again(data_copy):
    # NGA's row has a 7th cell; its observations (3 acme_aml, 1 sovereign) are not checked again
    replace_in(data_copy / "countries.csv", "NGA,Nigeria,Sub-Saharan Africa,Lower middle income,no,country",
               "NGA,Nigeria,Sub-Saharan Africa,Lower middle income,no,country,extra")
    assert problems_of(data_copy) == [
        f"{data_copy} has problems: 1 found",
        "  countries.csv:4: has 7 cells, the header has 6 (quote cells that contain commas)",
        "  observations/acme_aml.csv: 3 rows not checked against countries.csv, which has problems above",
        "  observations/sovereign.csv: 1 row not checked against countries.csv, which has problems above",
    ]


def test_millions_of_repeats_are_summarised_after_the_first_few(data_copy):
    observations = data_copy / "observations" / "sovereign.csv"
    text = observations.read_text(encoding="utf-8")
    first_row = text.splitlines()[1]
    observations.write_text(text + (first_row + "\n") * 200_000, encoding="utf-8")
    lines = problems_of(data_copy)
    assert lines[0] == f"{data_copy} has problems: 200,000 found"
    assert len(lines) == 7  # the heading, 5 problems of the kind, one summary
    assert lines[1].startswith("  observations/sovereign.csv:18: column date: duplicate: ")
    assert lines[-1] == "  … and 199,995 more like the last of observations/sovereign.csv column date"


def test_an_unclosed_quote_loses_the_rest_of_the_file_once(data_copy):
    # The quote opened on AUT's line (2) runs to the end of the file: no country can be read, and
    # every observation (9 + 11 + 16 rows) refers to one, so each file is counted once.
    replace_in(data_copy / "countries.csv", "AUT,Austria", 'AUT,"Austria')
    lines = problems_of(data_copy)
    assert lines[0] == f"{data_copy} has problems: 1 found"
    assert lines[1].startswith("  countries.csv:") and "malformed CSV" in lines[1]
    assert lines[2:] == [
        "  observations/acme_aml.csv: 9 rows not checked against countries.csv, which has problems above",
        "  observations/sdg.csv: 11 rows not checked against countries.csv, which has problems above",
        "  observations/sovereign.csv: 16 rows not checked against countries.csv, which has problems above",
    ]
