"""Bad data gets located, exact messages; every problem is collected before the build stops."""
import pytest

from generator.building.load import load_dataset
from generator.errors import DataError

from ..conftest import replace_in


def problems(data_dir) -> list[str]:
    with pytest.raises(DataError) as raised:
        load_dataset(data_dir)
    prefix = f"{data_dir}/"
    return [str(p).replace(prefix, "") for p in raised.value.problems]


CASES = [
    # (file, text to replace, replacement, the exact problem)
    ("countries.csv", "code,name,region", "code,name,regoin",
     "countries.csv:1: column regoin: unknown column (did you mean region?)"),
    ("countries.csv", "income,oecd_member,geo_type", "income,oecd_member,geo_kind",
     "countries.csv:1: column geo_kind: unknown column (did you mean geo_type?)"),
    ("indicators.csv", "0.6667,annual", "0,6667,annual",
     "indicators.csv:2: has 16 cells, the header has 15 (quote cells that contain commas)"),
    ("indicators.csv", "economy,Real GDP growth,GDP growth,Test fixture,https://country-risk-api.example/i/gdp_growth,"
     "Annual change of real GDP,0.6667", "economy,Real GDP growth,GDP growth,Test fixture,"
     "https://country-risk-api.example/i/gdp_growth,Annual change of real GDP,\"0,6667\"",
     "indicators.csv:2: column default_weight: '0,6667' is not a number (use '.' as decimal separator)"),
    ("observations/sovereign.csv", "gdp_growth,AUT,2024,2.5,actual", "gdp_growth,AUT,2024,nan,actual",
     "observations/sovereign.csv:3: column value: 'nan' is not a finite number "
     "(leave the observation out instead of writing NaN or infinity)"),
    ("observations/sovereign.csv", "gdp_growth,AUT,2024,2.5,actual", "gdp_growth,AUT,2024,2.5%,actual",
     "observations/sovereign.csv:3: column value: '2.5%' is not a number (write a plain decimal number such as 12.5)"),
    ("countries.csv", "NGA,Nigeria", "AUT,Nigeria",
     "countries.csv:4: column code: duplicate: code AUT is already on line 2 (keep one row per key)"),
    ("countries.csv", "NGA,Nigeria", "nga,Nigeria",
     "countries.csv:4: column code: 'nga' is not an upper-case code (write NGA)"),
    ("observations/sovereign.csv", "inflation,NGA,2024,20,actual", "inflation,NGR,2024,20,actual",
     "observations/sovereign.csv:17: column country: 'NGR' is not in countries.csv (add the country or fix the code)"),
    ("observations/sovereign.csv", "inflation,NGA,2024,20,actual", "inflaton,NGA,2024,20,actual",
     "observations/sovereign.csv:17: column indicator: 'inflaton' is not an indicator of sovereign "
     "(fix the reference or add the indicator to indicators.csv)"),
    ("observations/sovereign.csv", "inflation,NGA,2024,20,actual", "inflation,NGA,2024,20,actual\n"
     "inflation,NGA,2024,21,actual", "observations/sovereign.csv:18: column date: duplicate: inflation NGA "
     "2024-12-31 is already on line 17 (keep one row per date)"),
    ("observations/sovereign.csv", "inflation,NGA,2024,20,actual", "inflation,NGA,2024-02-30,20,actual",
     "observations/sovereign.csv:17: column date: '2024-02-30' is not a date "
     "(write dates as YYYY-MM-DD, for example 2024-12-31)"),
    ("observations/sovereign.csv", "inflation,NGA,2024,20,actual", "inflation,NGA,2024,20,forecast",
     "observations/sovereign.csv:17: column status: 'forecast' is not allowed (write one of: actual, projected)"),
    ("sections.csv", "sovereign,institutions", "sovereing,institutions",
     "sections.csv:3: column model: 'sovereing' is not in models.csv (add the model first)"),
    ("indicators.csv", "sovereign,rule_of_law,institutions", "sovereign,rule_of_law,institution",
     "indicators.csv:4: column section: 'institution' is not a section of sovereign in sections.csv "
     "(add the section first or fix the reference)"),
    ("sections.csv", "sovereign,institutions,Institutions,,0.4", "sovereign,institutions,Institutions,,0.3",
     "sections.csv: column default_weight: the section weights of sovereign sum to 0.9000, not 1 "
     "(adjust them to sum to 1)"),
    ("sections.csv", "sovereign,institutions,Institutions,,0.4", "sovereign,institutions,Institutions,,40",
     "sections.csv:3: column default_weight: '40' is not between 0 and 1 (write weights as shares, 0.25 rather than 25)"),
    ("scoring.csv", "sovereign,gdp_growth,0 <= x < 2,50", "sovereign,gdp_growth,0 <= x < 1.5,50",
     "scoring.csv:2: column threshold: the table of indicator sovereign/gdp_growth has a gap between 1.5 and 2 "
     "(every value must match exactly one row)"),
    ("scoring.csv", "sovereign,gdp_growth,0 <= x < 2,50", "sovereign,gdp_growth,-1 <= x < 2,50",
     "scoring.csv:2: column threshold: the table of indicator sovereign/gdp_growth has overlapping rows "
     "'x < 0' and '-1 <= x < 2' (every value must match exactly one row)"),
    ("scoring.csv", "sovereign,inflation,x >= 10,50", "sovereign,inflation,10 <= x < 50,50",
     "scoring.csv:5: column threshold: the table of indicator sovereign/inflation has no row for values of 50 "
     "and above (add 'x >= 50') (every value must match exactly one row)"),
    ("scoring.csv", "sovereign,inflation,x >= 10,50", "sovereign,inflation,x => 10,50",
     "scoring.csv:7: column threshold: 'x => 10' is not a threshold "
     "(write x < B, A <= x < B, x >= A, x == \"label\" or x == true/false)"),
    ("models.csv", "sdg,SDG performance", "country,SDG performance",
     "models.csv:3: column code: 'country' is reserved (/riskscores/country/ is the country endpoint; "
     "choose another code)"),
    ("observations/acme_aml.csv", "fatf_list,NGA,2024-10-25,grey,actual,", "fatf_list,NGA,2024-10-25,gray,actual,",
     "observations/acme_aml.csv:8: column value: 'gray' matches no scoring row of acme_aml/fatf_list "
     "(allowed: x == \"none\", x == \"grey\", x == \"black\")"),
    ("observations/sovereign.csv", "imf_programme,CIV,2024,false,actual", "imf_programme,CIV,2024,no,actual",
     "observations/sovereign.csv:16: column value: 'no' is not true or false "
     "(imf_programme is scored as a yes/no flag)"),
    ("bounds.csv", "sdg,electricity,100,98,80,20", "sdg,electricity,100,80,98,20",
     "bounds.csv:4: column optimum: lower 20, red 98, green 80, optimum 100 are not in order "
     "(lower ≤ red ≤ green ≤ optimum, or the reverse when lower values are better)"),
    ("models.csv", "performance,bounds", "risk,bounds",
     "models.csv:3: column direction: 'risk' does not fit scoring 'bounds' (points models measure risk (direction "
     "risk); bounds models score 100 at the optimum (direction performance))"),
    ("indicators.csv", "annual,%,,2025-03-31,1,\n", "annual,%,,2025-03-31,1,\nsovereign,spare,economy,Spare,Spare,"
     "Test fixture,https://x.example/s,,0,annual,,,2025-03-31,1,\n",
     "scoring.csv: indicator sovereign/spare has no scoring rows (add its threshold rows)"),
    ("observations/acme_aml.csv", "fatf_list,AUT,2024-10-25,none,actual,\n", "",
     "observations/acme_aml.csv:2: column component: component 'FATF call for action' of fatf_list AUT 2024-10-25 "
     "has no main row (add the row with a blank component that holds the scored value)"),
    ("observations/sovereign.csv", "inflation,NGA,2024,20,actual", 'inflation,NGA,2024,"20,actual',
     "observations/sovereign.csv:17: malformed CSV: unexpected end of data (check the quotes on this line)"),
    # a 1 MB cell, over the csv module's 131,072 characters: its record's line and column named
    ("countries.csv", "AUT,Austria,", "AUT," + "A" * 1_000_000 + ",",
     "countries.csv:2: column name: a cell of 1,000,000 characters, more than the 131,072 a cell may hold (check "
     "the quotes: a quote left open runs the cell on over the lines after)"),
]


@pytest.mark.parametrize("file, old, new, expected", CASES, ids=[c[3].split(":")[0] + ":" + c[3][-30:] for c in CASES])
def test_problem_is_located_and_explained(data_copy, file, old, new, expected):
    replace_in(data_copy / file, old, new)
    assert expected in problems(data_copy)


def test_a_quote_left_open_over_the_cell_limit_names_its_line_and_column(data_copy):
    # the quote opened on line 16 runs its cell on over 140,000 blank lines to the file's end: the cell is
    # `false,actual`, the line breaks, and what follows (so more than 140,000 characters, over 131,072)
    replace_in(data_copy / "observations/sovereign.csv", "imf_programme,CIV,2024,false,actual",
               'imf_programme,CIV,2024,"false,actual' + "\n" * 140_000)
    [said] = problems(data_copy)
    assert said.startswith("observations/sovereign.csv:16: column value: a cell of 140,0"), said


def test_missing_column(data_copy):
    replace_in(data_copy / "countries.csv", "code,name,region,income,oecd_member,geo_type",
               "code,name,region,income,geo_type")
    replace_in(data_copy / "countries.csv", "High income,yes,", "High income,")
    replace_in(data_copy / "countries.csv", "Lower middle income,no,", "Lower middle income,")
    replace_in(data_copy / "countries.csv", "Lower middle income,no,", "Lower middle income,")
    assert problems(data_copy)[0] == ("countries.csv:1: column oecd_member: column is missing from the header "
                                      "(the header is code,name,region,income,oecd_member,geo_type)")


def test_missing_file(data_copy):
    (data_copy / "bounds.csv").unlink()
    assert "bounds.csv: file is missing" in problems(data_copy)


def test_every_problem_is_reported_at_once(data_copy):
    replace_in(data_copy / "countries.csv", "NGA,Nigeria", "nga,Nigeria")
    replace_in(data_copy / "sections.csv", ",0.4,", ",0.3,")
    replace_in(data_copy / "observations/sovereign.csv", "gdp_growth,AUT,2024,2.5", "gdp_growth,AUT,2024,x")
    replace_in(data_copy / "observations/sdg.csv", "electricity,CIV,2024,70", "electricity,CIV,2024,inf")
    found = problems(data_copy)
    assert len(found) >= 4
    assert any(p.startswith("countries.csv:4:") for p in found)
    assert any(p.startswith("sections.csv:") for p in found)
    assert any(p.startswith("observations/sovereign.csv:3:") for p in found)
    assert any(p.startswith("observations/sdg.csv:12:") for p in found)


def test_message_names_the_data_folder(data_copy):
    replace_in(data_copy / "sections.csv", ",0.4,", ",0.3,")
    with pytest.raises(DataError) as raised:
        load_dataset(data_copy)
    assert raised.value.format_message() == (
        f"{data_copy} has problems: 1 found\n  {data_copy}/sections.csv: column default_weight: the section weights "
        "of sovereign sum to 0.9000, not 1 (adjust them to sum to 1)")


def test_a_repeated_unknown_reference_is_one_problem(data_copy):
    # NGA appears on line 17 of sovereign, 8-10 of acme_aml; removing it from countries.csv
    # gives one problem per file, naming the other lines.
    replace_in(data_copy / "countries.csv", "NGA,Nigeria,Sub-Saharan Africa,Lower middle income,no,country\n", "")
    found = problems(data_copy)
    assert ("observations/acme_aml.csv:8: column country: 'NGA' is not in countries.csv "
            "(add the country or fix the code; also on lines 9, 10)") in found
    assert len([p for p in found if "'NGA'" in p]) == 2


def test_weight_that_points_do_not_imply_is_a_warning(data_copy):
    replace_in(data_copy / "indicators.csv", "0.6667,annual", "0.6,annual")
    replace_in(data_copy / "indicators.csv", "0.3333,annual", "0.4,annual")
    warnings = [str(w).replace(f"{data_copy}/", "") for w in load_dataset(data_copy)[0].warnings]
    assert warnings[0] == ("indicators.csv: column default_weight: sovereign/gdp_growth has default weight 0.6, "
                           "its points imply 0.6667 (section scores weigh indicators by their maximum points)")
