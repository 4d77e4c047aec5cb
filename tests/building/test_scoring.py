"""The tiny fixture scored by hand (tests/fixtures/tiny); every number is worked out in a comment."""
import pytest

from generator.building.load.records import Bounds, Observation
from generator.building.scoring.bounds import color_points, goal_color, goal_trend, indicator_trend, trend_base

# sovereign: economy (0.6) = gdp_growth (max 100) + inflation (max 50);
#            institutions (0.4) = rule_of_law (max 100) + imf_programme (max 100, low/lower-middle income only).


def results(scores, code):
    return {(r.year, r.type): r for r in scores.countries[code].results}


@pytest.mark.parametrize("code, year, kind, score, points, points_max, share", [
    # AUT 2023: gdp 1.0 → 50, inflation 4.0 → 25: economy 75/150 = 50; rule of law 1.5 → 0: institutions 0/100.
    # IMF does not apply to a high-income country. Model 0.6 × 50 + 0.4 × 0 = 30.0; share 3/3.
    ("AUT", 2023, "history", 30.0, 75, 250, 1.0),
    # AUT 2024: gdp 2.5 → 0, inflation 4.0 → 25: economy 25/150 = 16.667; institutions 0. Model 0.6 × 16.667 = 10.0.
    ("AUT", 2024, "current", 10.0, 25, 250, 1.0),
    # AUT 2025: projected gdp 3.0 → 0; inflation and rule of law carried from 2024 (max_lag 1). Same as 2024.
    ("AUT", 2025, "projection", 10.0, 25, 250, 1.0),
    # CIV 2023: gdp −1 → 100, inflation 12 → 50: economy 150/150 = 100; rule of law missing, IMF true → 100:
    # institutions share 1/2 ≥ 0.3 → 100/100 = 100. Model 100; share 3/4 = 0.75.
    ("CIV", 2023, "history", 100.0, 250, 250, 0.75),
    # CIV 2024: gdp 0.5 → 50, inflation 8 → 25: 75/150 = 50; rule of law −0.5 → 100, IMF false → 0: 100/200 = 50.
    # Model 0.6 × 50 + 0.4 × 50 = 50.
    ("CIV", 2024, "current", 50.0, 175, 350, 1.0),
    # CIV 2025: projected gdp −0.5 → 100, inflation 8 (2024) → 25: 125/150 = 83.333…; institutions 50.
    # Model 0.6 × 83.333… + 0.4 × 50 = 50 + 20 = 70.0.
    ("CIV", 2025, "projection", 70.0, 225, 350, 1.0),
])
def test_sovereign_model_results(tiny_scores, code, year, kind, score, points, points_max, share):
    result = results(tiny_scores["sovereign"], code)[(year, kind)]
    assert (result.score, result.risk_points, result.risk_points_max, result.share) == (score, points, points_max,
                                                                                       share)


def test_country_below_cutoff_has_no_model_result(tiny_scores):
    # NGA has inflation 2024 only: 1 of 4 applicable indicators = 0.25 < 0.30 → no model result,
    # but its economy section (1 of 2 = 0.5) has one: 50/50 = 100.
    nga = tiny_scores["sovereign"].countries["NGA"]
    assert nga.results == ()
    assert [(s.year, s.type, s.score) for s in nga.sections["economy"]] == [(2024, "current", 100.0)]
    assert nga.sections["institutions"] == ()
    # 2025 would only carry actual 2024 values forward, so it is not a year for NGA at all.
    assert [r.year for r in nga.indicators["inflation"]] == [2024]


def test_section_weights_and_indicator_weights(tiny_scores):
    aut = tiny_scores["sovereign"].countries["AUT"]
    economy_2024 = aut.sections["economy"][1]
    # both sections have a result: 100 × 0.6 / 1.0 = 60, 100 × 0.4 / 1.0 = 40
    assert (economy_2024.year, economy_2024.score, economy_2024.weight) == (2024, 16.667, 60.0)
    assert aut.sections["institutions"][1].weight == 40.0
    # indicator weights: 100 × 100 / 150 = 66.667 and 100 × 50 / 150 = 33.333
    assert aut.indicators["gdp_growth"][1].weight == 66.667
    assert aut.indicators["inflation"][1].weight == 33.333
    # IMF does not apply to AUT: rule of law carries the whole institutions section
    assert aut.indicators["rule_of_law"][1].weight == 100.0
    assert aut.indicators["imf_programme"][1].score is None


def test_missing_indicator_is_null(tiny_scores):
    civ_2023 = tiny_scores["sovereign"].countries["CIV"].indicators["rule_of_law"][0]
    assert (civ_2023.year, civ_2023.score, civ_2023.risk_points, civ_2023.weight, civ_2023.observation) == \
        (2023, None, None, None, None)


def rank_at(scores, level, reference, year, code):
    """(rank, universe) of a country's result at a level and year, as the documents publish it."""
    scored = scores.countries[code]
    results = scored.results if level == "model" else (scored.sections if level == "section" else
                                                       scored.indicators)[reference]
    result = next((r for r in results if r.year == year), None)
    return None if result is None else scores.rank(level, reference, result)


def test_ranks(tiny_scores):
    sovereign = tiny_scores["sovereign"]
    # 2024: AUT 10.0 < CIV 50.0; NGA has no model result, so the universe is 2.
    assert rank_at(sovereign, "model", "", 2024, "AUT") == (1, 2)
    assert rank_at(sovereign, "model", "", 2024, "CIV") == (2, 2)
    assert rank_at(sovereign, "model", "", 2024, "NGA") is None
    # economy 2024: AUT 16.667 < CIV 50; NGA's 100 rests on 1 of its 2 indicators: share 0.5 → data
    # quality 2 Poor, below Medium, so it takes no rank and the universe is 2 (docs/data.md §4).
    assert [rank_at(sovereign, "section", "economy", 2024, c) for c in ("AUT", "CIV", "NGA")] == \
        [(1, 2), (2, 2), None]
    # institutions 2023: CIV has IMF only (rule of law missing): 1 of 2 → Poor, unranked; AUT alone (1, 1).
    assert [rank_at(sovereign, "section", "institutions", 2023, c) for c in ("AUT", "CIV")] == [(1, 1), None]
    # the same results are still published, with their quality
    civ_2023 = sovereign.countries["CIV"].sections["institutions"][0]
    assert (civ_2023.year, civ_2023.score, civ_2023.quality) == (2023, 100.0, 2)
    # acme_aml: AUT none → 0, CIV and NGA grey → 50: ranks 1, 2, 2
    acme = tiny_scores["acme_aml"]
    assert [rank_at(acme, "model", "", 2024, c) for c in ("AUT", "CIV", "NGA")] == [(1, 3), (2, 3), (2, 3)]


def test_sdg_current_scores(tiny_scores):
    sdg = tiny_scores["sdg"]
    aut = sdg.countries["AUT"]
    # life 82: 100 × (82 − 50) / 35 = 91.4286; infant 3: 100 × (3 − 80) / −80 = 96.25;
    # SDG3 = (91.4286 + 96.25) / 2 = 93.839; electricity 100 → SDG7 = 100; model (93.8393 + 100) / 2 = 96.920.
    assert [(r.year, r.type, r.score) for r in aut.results] == [(2020, "history", 96.049), (2021, "history", 96.049),
                                                              (2024, "current", 96.92)]
    assert aut.sections["SDG3"][-1].score == 93.839
    assert aut.sections["SDG3"][-1].weight == 50.0
    # 2020 (and 2021, carried by max_lag 1): life 81 → 88.571, infant 3.5 → 100 × 76.5 / 80 = 95.625,
    # SDG3 (88.5714 + 95.625) / 2 = 92.0982; SDG7 100 → model (92.0982 + 100) / 2 = 96.049
    civ = sdg.countries["CIV"]
    # CIV 2024: life 58 → 22.857, infant 55 → 31.25: SDG3 27.054; electricity 70 → 100 × 50 / 80 = 62.5.
    # Model (27.0536 + 62.5) / 2 = 44.777. In 2020/2021 electricity is missing: share 2/3 < 0.8 → no result.
    assert [(r.year, r.type, r.score) for r in civ.results] == [(2024, "current", 44.777)]
    assert [s.year for s in civ.sections["SDG7"]] == [2024]
    # regional score: each region has one scored country in 2024
    assert sdg.regional[("Europe & Central Asia", 2024)] == 96.92
    assert sdg.regional[("Sub-Saharan Africa", 2024)] == 44.777
    assert sdg.countries["NGA"].results == ()


def test_sdg_colours_and_trends(tiny_scores):
    sdg = tiny_scores["sdg"]
    aut, civ = sdg.countries["AUT"], sdg.countries["CIV"]
    # AUT 2024 life 82 ≥ green 80 → green; its score 91.43 ≥ the green score 85.71 → ↑.
    assert (aut.indicators["life_expectancy"][-1].sdg.color, aut.indicators["life_expectancy"][-1].sdg.trend) == \
        ("green", "↑")
    # AUT SDG3: colour points of both indicators are 3.4 (see test_colour_points), both green → green; trend ↑.
    assert (aut.sections["SDG3"][-1].sdg.color, aut.sections["SDG3"][-1].sdg.trend) == ("green", "↑")
    # CIV life 58: red (≤ 70). Trend 2020 → 2024: s0 14.286, s1 22.857, observed 2.143/yr,
    # required (85.714 − 14.286) / (2030 − 2020) = 7.143/yr; 2.143 < 3.571 (half) → → stagnating.
    life = civ.indicators["life_expectancy"][-1]
    assert (life.sdg.color, life.sdg.trend) == ("red", "→")
    # CIV infant 55: red (worse than 20); s0 25, s1 31.25, observed 1.5625 < half of 6.875 → →.
    assert civ.indicators["infant_mortality"][-1].sdg.trend == "→"
    # CIV electricity: only 2024 → no trend.
    assert civ.indicators["electricity"][-1].sdg.trend == "•"
    assert (civ.sections["SDG3"][-1].sdg.color, civ.sections["SDG3"][-1].sdg.trend) == ("red", "→")
    assert (civ.sections["SDG7"][-1].sdg.color, civ.sections["SDG7"][-1].sdg.trend) == ("red", "•")
    # a missing sdg indicator is gray with no trend
    assert civ.indicators["electricity"][0].sdg.color == "gray"


def test_colour_points():
    life = Bounds(optimum=85, green=80, red=70, lower=50)
    # t(82) = 32/35 = 0.9143; green at 30/35 = 0.8571, optimum 1: 3 + 0.0571/0.1429 = 3.4
    assert round(color_points(82, life), 6) == 3.4
    # t(58) = 8/35 = 0.2286 between lower (0 → 0) and red (20/35 = 0.5714 → 1): 0.4
    assert round(color_points(58, life), 6) == 0.4
    assert color_points(40, life) == 0.0 and color_points(90, life) == 4.0
    # midpoint of red and green (75) is 2 points
    assert round(color_points(75, life), 6) == 2.0


@pytest.mark.parametrize("points, color", [
    ([(3.4, "green"), (3.4, "green")], "green"),
    ([(4.0, "green"), (2.5, "yellow")], "yellow"),  # average 3.25 but one is not green
    ([(2.0, "yellow"), (1.2, "orange"), (4.0, "green")], "orange"),  # two worst: 1.2 and 2.0 → 1.6
    ([(0.4, "red"), (0.9, "red")], "red"),
    ([], "gray"),
])
def test_goal_colour(points, color):
    assert goal_color(points) == color


@pytest.mark.parametrize("arrows, trend", [
    (["↑", "↑"], "↑"),  # mean 4
    (["↑", "➚"], "↑"),  # mean 3.5 ≥ 3.5
    (["➚", "→"], "➚"),  # mean 2.5 ≥ 2.5
    (["→", "↓"], "→"),  # mean 1.5 ≥ 1.5
    (["↓", "↓"], "↓"),  # mean 1
    (["•"], "•"),  # no trend information at all
    (["→", "•"], "→"),  # • does not count
])
def test_goal_trend(arrows, trend):
    assert goal_trend(arrows) == trend


def test_indicator_trend_needs_two_years():
    bounds = Bounds(optimum=100, green=98, red=80, lower=20)
    series = (Observation(2023, "2023-12-31", 50.0, False), Observation(2024, "2024-12-31", 60.0, False))
    assert indicator_trend(trend_base(series), series[-1], bounds) == "•"  # 2024 − 2023 < 2
    older = (Observation(2014, "2014-12-31", 10.0, False),) + series
    assert indicator_trend(trend_base(older), older[-1], bounds) == "•"  # 2014 is before 2015, so the base is 2023


def test_indicator_trend_decreasing_and_on_track():
    bounds = Bounds(optimum=100, green=98, red=80, lower=20)
    down = (Observation(2016, "2016-12-31", 60.0, False), Observation(2020, "2020-12-31", 50.0, False))
    assert indicator_trend(trend_base(down), down[-1], bounds) == "↓"
    # s0 = 100 × 20/80 = 25, s1 = 100 × 60/80 = 75 over 4 years: 12.5/yr; required (97.5 − 25)/14 = 5.18 → ↑
    fast = (Observation(2016, "2016-12-31", 40.0, False), Observation(2020, "2020-12-31", 80.0, False))
    assert indicator_trend(trend_base(fast), fast[-1], bounds) == "↑"
