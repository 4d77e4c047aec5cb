"""The CSV contract of data/: every file's name and columns, in header order.

The loader reads by it, and the tools that write datasets (tools/prepare_demo_data.py,
tools/synthetic_data.py) write their headers from it, so the two cannot drift apart.
"""
from __future__ import annotations

from . import table as t
from .records import ScoringMethod
from .table import Column

COUNTRIES, MODELS, SECTIONS, INDICATORS = "countries.csv", "models.csv", "sections.csv", "indicators.csv"
SCORING, BOUNDS = "scoring.csv", "bounds.csv"


OBSERVATIONS = "observations"


def observations_file(model: str) -> str:
    return f"{OBSERVATIONS}/{model}.csv"


COUNTRY_COLUMNS = [
    Column("code", t.country_code), Column("name", t.text), Column("region", t.text),
    Column("income", t.text), Column("oecd_member", t.yes_no), Column("geo_type", t.text),
]
MODEL_COLUMNS = [
    Column("code", t.model_code), Column("title", t.text), Column("description", t.text),
    Column("source", t.text), Column("version", t.text), Column("update_date", t.iso_date),
    Column("url", t.url, required=False), Column("direction", t.choice("risk", "performance")),
    Column("scoring", t.choice(*ScoringMethod)), Column("rating", t.yes_no), Column("custom", t.yes_no),
]
SECTION_COLUMNS = [
    Column("model", t.model_code), Column("reference", t.reference), Column("name", t.text),
    Column("description", t.text, required=False), Column("default_weight", t.weight),
    Column("sdg_number", t.integer, required=False, in_header=False),
]
INDICATOR_COLUMNS = [
    Column("model", t.model_code), Column("reference", t.reference), Column("section", t.reference),
    Column("name", t.text), Column("short_name", t.text), Column("source", t.text), Column("url", t.url),
    Column("description", t.text, required=False), Column("default_weight", t.weight),
    Column("frequency", t.text), Column("unit", t.text, required=False),
    Column("currency", t.text, required=False), Column("last_updated", t.iso_date),
    Column("max_lag", t.non_negative_integer), Column("applicability", t.text, required=False),
    # the SPDX id of the data's licence (several sources: "; "-separated in the order of `source`); the
    # release's Data Package and catalogues list them
    Column("licence", t.text, required=False, in_header=False),
]
SCORING_COLUMNS = [
    Column("model", t.model_code), Column("indicator", t.reference), Column("threshold", t.text),
    Column("risk_points", t.non_negative_integer),
]
BOUNDS_COLUMNS = [
    Column("model", t.model_code), Column("indicator", t.reference), Column("optimum", t.number),
    Column("green", t.number), Column("red", t.number), Column("lower", t.number),
]
OBSERVATION_COLUMNS = [
    Column("indicator", t.reference), Column("country", t.country_code), Column("date", t.year_or_date),
    Column("value", t.text), Column("status", t.choice("actual", "projected")),
    Column("component", t.text, required=False, in_header=False),
]


def header(columns: list[Column], optional: bool = True) -> list[str]:
    """Return the column names a writer puts in the header (`optional=False`: only the ones a file must have)."""
    return [c.name for c in columns if optional or c.in_header]
