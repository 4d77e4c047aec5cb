"""Property tests: any valid dataset builds, validates and keeps every bound of docs/api.md."""
import csv
import datetime
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.history.site import CURRENT
from generator.publish.build_release import build
from tools.synthetic_data import DemoSpec, write_demo_data

from ..conftest import TINY

COUNTRIES = ("AUT", "CIV", "NGA")
INDICATORS = {  # model -> indicator -> value strategy (tiny fixture definitions)
    "sovereign": {"gdp_growth": "number", "inflation": "number", "rule_of_law": "number", "imf_programme": "flag"},
    "sdg": {"life_expectancy": "number", "infant_mortality": "number", "electricity": "number"},
    "acme_aml": {"fatf_list": "label"},
}
VALUES = {
    "number": st.decimals(min_value=-50, max_value=150, places=2, allow_nan=False).map(str),
    "flag": st.sampled_from(["true", "false"]),
    "label": st.sampled_from(["none", "grey", "black"]),
}
SERIES = st.dictionaries(st.integers(2012, 2027), st.tuples(st.none(), st.booleans()), max_size=6)


@st.composite
def observations(draw):
    """Return random sparse series per model, indicator and country: years, values, actual/projected."""
    files = {}
    for model, indicators in INDICATORS.items():
        rows = []
        for indicator, kind in indicators.items():
            for country in COUNTRIES:
                for year, (_, projected) in sorted(draw(SERIES).items()):
                    value = draw(VALUES[kind])
                    # actual data cannot be dated after this year (the loader rejects it)
                    future = year > datetime.date.today().year
                    rows.append((indicator, country, year, value, "projected" if projected or future else "actual"))
        if not rows:  # a model's file holds one observation at least (the loader refuses a header alone)
            indicator, kind = next(iter(indicators.items()))
            rows.append((indicator, COUNTRIES[0], 2020, draw(VALUES[kind]), "actual"))
        files[model] = rows
    return files


def write_dataset(target: Path, files) -> None:
    shutil.copytree(TINY, target, ignore=shutil.ignore_patterns("observations"))
    (target / "observations").mkdir()
    for model, rows in files.items():
        with (target / "observations" / f"{model}.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["indicator", "country", "date", "value", "status"])
            writer.writerows(rows)


def documents(site: Path):
    release = site / CURRENT
    for path in release.rglob("index.json"):
        yield str(path.relative_to(release)), orjson.loads(path.read_bytes())


def check_bounds(site: Path) -> None:
    """Check that weights sum to 100, ranks lie in 1..universe and agree with the universe, types are ordered."""
    ranked = defaultdict(Counter)  # (model, level, year) -> number of countries ranked
    universes = {}
    for relative, doc in documents(site):
        parts = relative.split("/")
        if len(parts) != 6 or parts[2] != "riskscores" or parts[3] == "country" or len(parts[4]) != 3:
            continue
        model = parts[3]
        results = doc["results"]
        years = [r["timestamp"] for r in results]
        assert years == sorted(years)
        kinds = [r["type"] for r in results]
        assert kinds.count("current") <= 1
        if "current" in kinds:
            current = years[kinds.index("current")]
            assert all(y < current for y, k in zip(years, kinds) if k == "history")
        by_year = defaultdict(float)
        for section in doc["sections"]:
            for r in section["results"]:
                by_year[r["timestamp"]] += r["weight"]
                _rank(ranked, universes, (model, "section:" + section["reference"], r["timestamp"]), r)
        for r in results:
            # every year with a model result has sections whose weights sum to 100 (3-decimal rounding)
            assert abs(by_year[r["timestamp"]] - 100) < 0.01, (relative, r["timestamp"], by_year)
            assert 0 <= r["score"] <= 100 and 0.3 <= r["shareIndicatorsAvailable"] <= 1
            _rank(ranked, universes, (model, "model", r["timestamp"]), r)
        sections = {s["reference"] for s in doc["sections"]}
        weights = defaultdict(float)
        for indicator in doc["indicators"]:
            for r in indicator["results"]:
                if r["score"] is not None:
                    weights[(indicator["section"], r["timestamp"])] += r["weight"]
                    _rank(ranked, universes, (model, "indicator:" + indicator["reference"], r["timestamp"]), r)
                else:
                    assert "weight" not in r and "countryRank" not in r
        assert {section for section, _ in weights} <= sections
        assert all(abs(total - 100) < 0.01 for total in weights.values()), weights
    for key, counts in ranked.items():
        assert sum(counts.values()) == universes[key], key  # every ranked country counted in the universe


def _rank(ranked, universes, key, result):
    # docs/data.md §4: model and section results below Medium data quality take no rank
    if not key[1].startswith("indicator:") and result["dataQualityNumeric"] < 3:
        assert "countryRank" not in result and "countryUniverse" not in result
        return
    universe = result["countryUniverse"]
    assert 1 <= result["countryRank"] <= universe
    assert universes.setdefault(key, universe) == universe
    ranked[key][result["countryRank"]] += 1


@pytest.mark.slow  # 40 generated data sets, each built: ten seconds
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(files=observations())
def test_any_observations_build_valid_bounded_documents(tmp_path_factory, files):
    root = tmp_path_factory.mktemp("prop")
    write_dataset(root / "data", files)
    build(root / "data", root / "site")  # raises on any schema violation
    check_bounds(root / "site")


@pytest.mark.slow  # 8 generated demo data sets, each built strictly
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(countries=st.integers(1, 30), models=st.integers(1, 8), years=st.integers(1, 4),
       seed=st.integers(0, 10_000))
def test_any_generated_demo_dataset_builds_strictly(tmp_path_factory, countries, models, years, seed):
    root = tmp_path_factory.mktemp("demo")
    write_demo_data(DemoSpec.make(countries=countries, models=models, years=years, last_year=2024, seed=seed),
                    root / "data")
    build(root / "data", root / "site", strict=True)
    check_bounds(root / "site")
