"""docs/data.md §5 test vectors and the shared rules of §1 and §4, exactly."""
import pytest

from generator.building.load.records import Bounds, Country
from generator.building.scoring import bounds
from generator.building.scoring.numbers import (
    DATA_QUALITY,
    RATING_LETTERS,
    RISK_CLASSES,
    classify_risk,
    data_quality,
    rating,
    round3,
)
from generator.building.scoring.points import rescale_weights
from generator.building.scoring.ranks import MODEL, rank_all
from generator.building.scoring.results import CountryScores, ModelResult, ModelScores


def published_ranks(scores: dict[str, float], higher_is_better: bool) -> dict[str, tuple[int, int]]:
    """(rank, universe) of each country's 2024 model score, through the ranking the documents use."""
    countries = {code: CountryScores(Country(code, code, "R", "I", False, "country"),
                                     (ModelResult(2024, "current", score, None, None, 1.0, 1, 5, None),), {}, {})
                 for code, score in scores.items()}
    ranked = ModelScores(None, countries, rank_all(countries, higher_is_better), {})
    return {code: ranked.rank(MODEL, "", scored.results[0]) for code, scored in countries.items()}


@pytest.mark.parametrize("points, points_max, score, risk_class", [
    (83, 1500, 5.533, 1),  # §5.1: 100 × 83 / 1500 = 5.5333… → 5.533, Very Low
])
def test_section_score(points, points_max, score, risk_class):
    assert round3(100 * points / points_max) == score
    assert classify_risk(score) == risk_class


def test_rescaled_section_weights():
    # §5.2: available default weights 0.15 + 0.10 + 0.675 = 0.925; 100 × 0.15 / 0.925 = 16.2162… → 16.216,
    # 100 × 0.10 / 0.925 = 10.8108… → 10.811.
    weights = rescale_weights({"a": 0.15, "b": 0.10, "c": 0.675})
    assert round3(weights["a"]) == 16.216
    assert round3(weights["b"]) == 10.811


def test_model_score_class_and_rating():
    # §5.3: 11.831 < 20 → 1 Very Low; 11.831 × 21 / 100 = 2.4845 → 2 → AA+.
    assert RISK_CLASSES[classify_risk(11.831) - 1] == "Very Low"
    assert rating(11.831) == 2
    assert RATING_LETTERS[rating(11.831) - 1] == "AA+"


@pytest.mark.parametrize("share, quality", [
    (0.888, 5),  # §5.4: ≥ 0.86 Very Good
    (round3(6 / 7), 4),  # 6/7 = 0.857142… → 0.857 < 0.86 → Good
    (0.72, 4), (0.719, 3), (0.58, 3), (0.44, 2), (0.30, 1),
    (0.29, None),  # below 0.30: no result
])
def test_data_quality(share, quality):
    assert data_quality(share) == quality


def test_six_sevenths_rounds_to_0_857():
    assert round3(6 / 7) == 0.857
    assert DATA_QUALITY[data_quality(0.888) - 1] == "Very Good"


@pytest.mark.parametrize("score, risk_class", [
    (20.000, 2), (19.999, 1), (80.000, 5),  # §5.5
    (0.0, 1), (39.999, 2), (40.0, 3), (60.0, 4), (100.0, 5),
])
def test_risk_class_boundaries(score, risk_class):
    assert classify_risk(score) == risk_class


def test_ranks_share_ties():
    # §5.6: rank = 1 + number strictly less risky; universe 4.
    assert published_ranks({"a": 3.1, "b": 5.0, "c": 5.0, "d": 7.2}, higher_is_better=False) == \
        {"a": (1, 4), "b": (2, 4), "c": (2, 4), "d": (4, 4)}
    # sdg: higher is better, so 85.61 is the least risky.
    assert published_ranks({"a": 85.61, "b": 80, "c": 80}, higher_is_better=True) == \
        {"a": (1, 3), "b": (2, 3), "c": (2, 3)}


@pytest.mark.parametrize("optimum, lower, x, score", [
    (0, 72.6, 10, 86.226),  # 100 × (10 − 72.6) / (0 − 72.6) = 86.2258… → 86.226
    (2.6, 130.1, 25, 82.431),  # 100 × (25 − 130.1) / (2.6 − 130.1) = 82.4313…
    (2.6, 130.1, 50, 62.824),  # 100 × (50 − 130.1) / −127.5 = 62.8235…
    (7, 0.2, 2.5, 33.824),  # 100 × (2.5 − 0.2) / 6.8 = 33.8235…
    (7, 0.2, 0.1, 0.0),  # below the lower bound: clamped
    (7, 0.2, 9, 100.0),  # beyond the optimum: clamped
])
def test_sdg_normalisation(optimum, lower, x, score):
    assert round3(bounds.normalise(x, Bounds(optimum, optimum, lower, lower))) == score


@pytest.mark.parametrize("x, color", [(20, "green"), (30, "yellow"), (45, "orange"), (60, "red"),
                                      (25, "green"), (50, "red"), (37.5, "yellow")])
def test_sdg_colour(x, color):
    # §5.8: green 25, red 50, lower is better (optimum 0, lower 100); midpoint 37.5.
    assert bounds.indicator_color(x, Bounds(optimum=0, green=25, red=50, lower=100)) == color


def test_sdg_score_class():
    # §5.9: 85.61 → r = 100 − 85.61 = 14.39 → 1 Very Low.
    assert round3(100 - 85.61) == 14.39
    assert classify_risk(round3(100 - 85.61)) == 1


@pytest.mark.parametrize("x, rounded", [(2.0005, 2.001), (2.0004999, 2.0), (-2.0005, -2.001), (1e-7, 0.0),
                                        (11.8305, 11.831), (100.0, 100.0), (0.1 + 0.2, 0.3)])
def test_round_half_up(x, rounded):
    assert round3(x) == rounded  # §5.10: on the shortest decimal form, half-up


def test_round_rejects_non_finite():
    with pytest.raises(ValueError):
        round3(float("nan"))


@pytest.mark.parametrize("score, position", [(0.0, 1), (2.38, 1), (2.381, 1), (50.0, 11), (100.0, 21),
                                             (97.62, 21), (95.0, 20)])
def test_rating_positions(score, position):
    # 2.381 × 0.21 = 0.50001 → 1 (clamped at 1 anyway); 50 × 0.21 = 10.5 → 11 half-up; 95 × 0.21 = 19.95 → 20.
    assert rating(score) == position


def test_ranks_follow_the_definition_on_random_scores():
    # docs/data.md §4 word for word: 1 + the number of countries with a strictly less risky score.
    import random
    rng = random.Random(5)
    for _ in range(200):
        scores = {f"C{i}": rng.choice([round3(rng.uniform(0, 100)), 50.0, 25.0]) for i in range(rng.randint(1, 40))}
        for higher_is_better in (False, True):
            def less_risky(a: float, b: float, higher_is_better: bool = higher_is_better) -> bool:
                return a > b if higher_is_better else a < b
            expected = {c: (1 + sum(less_risky(o, s) for o in scores.values()), len(scores))
                        for c, s in scores.items()}
            assert published_ranks(scores, higher_is_better) == expected
