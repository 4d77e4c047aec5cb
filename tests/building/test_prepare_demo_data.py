"""The preparation tool's readers of Factbook text and its derived series (tools/realdata), on
hand-made entries shaped like the Factbook's JSON. The tool itself runs on a developer's machine
with the `realdata` extra; these parts need nothing but the standard library."""
import pytest

from tools.realdata import series
from tools.realdata.catalogue import MODELS
from tools.realdata.sources import parse_figure, yearly


@pytest.mark.parametrize("text, expected", [
    ("2.3% (2024 est.)", (2.3, 2024)),
    ("-0.2% (2024 est.)", (-0.2, 2024)),
    ("$62,800 (2024 est.)", (62800.0, 2024)),
    ("$4.66 trillion (2024 est.)", (4.66e12, 2024)),
    ("-$1.5 billion (2023 est.)", (-1.5e9, 2023)),
    ("600.192 million metric tonnes of CO2 (2023 est.)", (600.192e6, 2023)),
    ("total: 79.6% of population (2022 est.)", (79.6, 2022)),
    ("63.9% of GDP (2017 est.)", (63.9, 2017)),
    ("0.6% of GDP (2024)", (0.6, 2024)),
    ("65.6 deaths/1,000 live births (2025 est.)", (65.6, 2025)),
    ("<b>note:</b> 3.1 (2020 est.)", (3.1, 2020)),
    ("100%", (100.0, None)),
    ("NA", None),
])
def test_factbook_figures_become_number_and_year(text, expected):
    assert parse_figure(text) == expected


def test_multi_year_fields_keep_every_year_and_skip_notes():
    entry = {"Economy": {"Real GDP growth rate": {
        "Real GDP growth rate 2024": {"text": "-0.2% (2024 est.)"},
        "Real GDP growth rate 2023": {"text": "-0.3% (2023 est.)"},
        "note": "<b>note:</b> annual GDP % growth based on constant local currency"}}}
    assert yearly(entry, "Economy", "Real GDP growth rate") == {2024: -0.2, 2023: -0.3}
    assert yearly(entry, "Economy", "Public debt") == {}


def economy(extra: dict) -> dict:
    """Return a Factbook entry of an economy (it has GDP data) with some more fields."""
    entry = {"Economy": {"Real GDP growth rate": {"Real GDP growth rate 2024": {"text": "1% (2024 est.)"}}}}
    for path, value in extra.items():
        node = entry
        for step in path[:-1]:
            node = node.setdefault(step, {})
        node[path[-1]] = value
    return entry


def test_derived_series_combine_figures_of_the_same_year_only():
    entry = economy({
        ("Economy", "Current account balance"): {
            "Current account balance 2024": {"text": "$5 billion (2024 est.)"},
            "Current account balance 2023": {"text": "$4 billion (2023 est.)"}},
        ("Economy", "GDP (official exchange rate)"): {"text": "$200 billion (2024 est.)"},
        ("Economy", "Reserves of foreign exchange and gold"): {
            "Reserves of foreign exchange and gold 2024": {"text": "$30 billion (2024 est.)"}},
        ("Economy", "Imports"): {"Imports 2024": {"text": "$60 billion (2024 est.)"}},
    })
    found = series.factbook_series({"XYZ": entry})
    assert found["current_account"] == {"XYZ": {2024: 2.5}}  # 100 × 5 / 200; 2023 has no GDP figure
    assert found["reserves_months"] == {"XYZ": {2024: 6.0}}  # 12 × 30 / 60


def test_lists_and_labels_from_factbook_text():
    listed = economy({
        ("Economy", "Exports - partners"): {"text": "USA 10%, France 8%, Netherlands 7% (2023)"},
        ("Transnational Issues", "Trafficking in persons", "tier rating"): {"text": "Tier 2 Watch List — the country"},
        ("Transnational Issues", "Illicit drugs", "USG identification"): {
            "text": "major illicit drug-producing and/or drug-transit country, major precursor-chemical producer"},
        ("Terrorism", "Terrorist group(s)"): {"text": "Group A; Group B; Group C"},
        ("Geography", "Natural hazards"): {"text": "periodic droughts; flooding"},
        ("Geography", "Coastline"): {"text": "0 km (landlocked)"},
    })
    quiet = economy({("Geography", "Coastline"): {"text": "853 km"}})
    found = series.factbook_series({"AAA": listed, "BBB": quiet})
    assert found["export_concentration"] == {"AAA": {2023: 10.0}}
    assert found["trafficking_tier"] == {"AAA": {2025: "Tier 2 Watch List"}, "BBB": {2025: "Tier 1 or 2"}}
    assert found["drug_majors"] == {"AAA": {2025: "Producing or transit and precursor"},
                                    "BBB": {2025: "Not listed"}}
    assert found["terrorist_groups"] == {"AAA": {2025: 3}, "BBB": {2025: 0}}
    assert found["natural_hazards"] == {"AAA": {2025: 2}}  # BBB lists none: missing, not zero
    assert found["landlocked"] == {"AAA": {2025: "true"}, "BBB": {2025: "false"}}


def test_population_growth_per_year_from_five_year_steps():
    # 100 → 110 over 2020–2025: (1.1)^(1/5) − 1 = 1.924 % a year, for each of 2021…2025
    growth = series.population_growth({"XYZ": {2020: 100.0, 2025: 110.0}}, 2020, 2026)
    assert growth == {"XYZ": {year: 1.924 for year in range(2021, 2026)}}


def test_interpolation_between_five_year_steps():
    assert series.interpolated({2020: 100.0, 2025: 110.0}, 2023) == pytest.approx(106.0)
    assert series.interpolated({2020: 100.0, 2025: 110.0}, 2026) is None


def test_points_tables_cover_every_number_and_weights_follow_points():
    for model in MODELS:
        for indicator in model.indicators:
            if model.scoring == "points":
                rows = indicator.threshold_rows()
                assert rows and indicator.max_points > 0
                if indicator.edges:
                    assert len(indicator.points) == len(indicator.edges) + 1
                    assert list(indicator.edges) == sorted(indicator.edges)
            else:
                optimum, green, red, lower = indicator.bounds
                assert optimum >= green >= red >= lower or optimum <= green <= red <= lower, indicator.reference
