"""The committed demo dataset: real ISO codes, realistic gaps, in sync with its generator, builds strictly."""
import csv

import pycountry
import pytest

from generator.build import build
from generator.demo import NO_DATA, SPARSE, DemoSpec, write_demo_data
from generator.load import load_dataset
from generator.publish import CURRENT

from .conftest import DEMO_DATA


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory):
    site = tmp_path_factory.mktemp("demo-site")
    report = build(DEMO_DATA, site, strict=True)
    return site, report


def test_committed_data_is_what_the_generator_writes(tmp_path):
    # data/README.md: `riskapi demo-data --out data --last-year 2026`
    write_demo_data(DemoSpec.make(last_year=2026), tmp_path)
    for path in sorted(tmp_path.rglob("*.csv")):
        relative = path.relative_to(tmp_path)
        assert path.read_bytes() == (DEMO_DATA / relative).read_bytes(), relative


def test_all_249_iso_countries_with_real_names():
    with (DEMO_DATA / "countries.csv").open(encoding="utf-8") as handle:
        rows = {r["code"]: r["name"] for r in csv.DictReader(handle)}
    assert len(rows) == 249
    assert set(rows) == {c.alpha_3 for c in pycountry.countries}
    assert rows["DEU"] == "Germany" and rows["BOL"] == "Bolivia" and rows["CIV"] == "Côte d'Ivoire"


def test_every_indicator_says_its_values_are_synthetic():
    with (DEMO_DATA / "indicators.csv").open(encoding="utf-8") as handle:
        assert all("Synthetic" in r["source"] for r in csv.DictReader(handle))


def test_demo_models_and_section_counts():
    dataset = load_dataset(DEMO_DATA)
    sections = {m.model.code: len(m.sections) for m in dataset.models}
    assert sections == {"acme_aml": 5, "aml": 5, "esg": 12, "sdg": 17, "sovereign": 7, "supplychainrisk": 6}
    assert dataset.custom_models == ("acme_aml",)


def test_build_publishes_every_document_with_realistic_gaps(demo_site):
    site, report = demo_site
    assert report.documents == 3773  # see the count in test_document_count
    release = site / CURRENT / "api/v1/riskscores"
    import orjson
    aml = orjson.loads((release / "aml/index.json").read_bytes())
    scored = {entry["entity"]["countryCode"] for entry in aml["data"]}
    assert NO_DATA not in scored  # Antarctica has no data at all
    assert len(set(SPARSE) & scored) <= 3  # sparse territories mostly fall below the coverage cut-off
    assert 200 <= len(scored) < 249
    nothing = orjson.loads((release / f"aml/{NO_DATA}/index.json").read_bytes())
    assert nothing["results"] == [] and all(i["results"] == [] for i in nothing["indicators"])
    years = [r["timestamp"][:4] for r in orjson.loads((release / "sovereign/SWE/index.json").read_bytes())["results"]]
    assert years[0] == "2010" and "2026" in years


def test_document_count():
    # per audience (2: public, acme_aml): 1 model list + 249 country documents          = 2 × 250 = 500
    # countries: 4 orderings + 249 filters + 1 empty                                      =         254
    # per model (6): 4 orderings + 249 filters + 1 empty + 249 country documents          = 6 × 503 = 3018
    # openapi.json                                                                         =           1
    from generator.render import count_documents
    assert count_documents(load_dataset(DEMO_DATA)) == 500 + 254 + 3018 + 1 == 3773
