"""Raw indicator series from the real sources: {series name: {ISO code: {year: value}}}.

One function per source turns its figures into the series the models score. Each series keeps
its observations' real years; derived figures (per person, per GDP, months of imports) combine
figures of the same year only."""
from __future__ import annotations

import re
from collections import defaultdict

from . import sources

Series = dict[str, dict[int, object]]  # ISO code → year → value

FACTBOOK_EDITION = 2025  # texts without a year (hazards, terrorist groups) describe this edition

# Factbook field → series: (path, how it is read). `yearly` keeps every year the field lists.
FACTBOOK_YEARLY = {
    "gdp_growth": ("Economy", "Real GDP growth rate"),
    "gdp_per_capita": ("Economy", "Real GDP per capita"),
    "inflation": ("Economy", "Inflation rate (consumer prices)"),
    "unemployment": ("Economy", "Unemployment rate"),
    "public_debt": ("Economy", "Public debt"),
    "taxes_revenue": ("Economy", "Taxes and other revenues"),
    "poverty": ("Economy", "Population below poverty line"),
    "gini": ("Economy", "Gini Index coefficient - distribution of family income"),
    "pm25": ("Environment", "Particulate matter emissions"),
    "forest_share": ("Environment", "Land use", "forest"),
    "fossil_capacity": ("Energy", "Electricity generation sources", "fossil fuels"),
    "life_expectancy": ("People and Society", "Life expectancy at birth", "total population"),
    "infant_mortality": ("People and Society", "Infant mortality rate", "total"),
    "maternal_mortality": ("People and Society", "Maternal mortality ratio"),
    "drinking_water": ("People and Society", "Drinking water source", "improved: total"),
    "sanitation": ("People and Society", "Sanitation facility access", "improved: total"),
    "education_expenditure": ("People and Society", "Education expenditure", "Education expenditure (% GDP)"),
    "electricity_access": ("Energy", "Electricity access", "electrification - total population"),
    "internet_users": ("Communications", "Internet users", "percent of population"),
    "military_expenditure": ("Military and Security", "Military expenditures"),
}


def factbook_series(entries: dict[str, dict]) -> dict[str, Series]:
    out: dict[str, Series] = {name: {} for name in FACTBOOK_YEARLY}
    for code, entry in entries.items():
        for name, path in FACTBOOK_YEARLY.items():
            values = sources.yearly(entry, *path)
            if values:
                out[name][code] = values
    out["current_account"] = _ratio_same_year(entries, ("Economy", "Current account balance"),
                                              ("Economy", "GDP (official exchange rate)"), 100)
    out["reserves_months"] = _ratio_same_year(entries, ("Economy", "Reserves of foreign exchange and gold"),
                                              ("Economy", "Imports"), 12)
    out["export_concentration"] = _top_partner_share(entries)
    out["trafficking_tier"] = _trafficking(entries)
    out["drug_majors"] = _drug_majors(entries)
    out["terrorist_groups"] = _count_listed(entries, ("Terrorism", "Terrorist group(s)"), none_is_zero=True)
    out["natural_hazards"] = _count_listed(entries, ("Geography", "Natural hazards"), none_is_zero=False)
    out["landlocked"] = _landlocked(entries)
    return out


def _ratio_same_year(entries, numerator, denominator, scale) -> Series:
    out: Series = {}
    for code, entry in entries.items():
        top, bottom = sources.yearly(entry, *numerator), sources.yearly(entry, *denominator)
        values = {year: round(scale * top[year] / bottom[year], 3) for year in top if bottom.get(year)}
        if values:
            out[code] = values
    return out


PARTNER_SHARE = re.compile(r"(\d+(?:\.\d+)?)%")


def _top_partner_share(entries) -> Series:
    """Turn 'USA 10%, France 8%, … (2023)' into the largest partner's share of exports, 10."""
    out: Series = {}
    for code, entry in entries.items():
        text = sources.text_of(entry, "Economy", "Exports - partners")
        year = re.search(r"\((\d{4})", text or "")
        shares = [float(s) for s in PARTNER_SHARE.findall(text or "")]
        if shares and year:
            out[code] = {int(year.group(1)): max(shares)}
    return out


def _trafficking(entries) -> Series:
    """Return the US Trafficking in Persons report tier (2025 report). The Factbook lists Tier 2 Watch
    List, Tier 3 and special cases only; every other country is Tier 1 or Tier 2."""
    out: Series = {}
    for code, entry in entries.items():
        text = sources.text_of(entry, "Transnational Issues", "Trafficking in persons", "tier rating") or ""
        lowered = text.lower()
        label = ("Tier 3" if "tier 3" in lowered else "Tier 2 Watch List" if "watch list" in lowered
                 else "Special case" if "special case" in lowered else "Tier 1 or 2")
        if _has_macro_data(entry):
            out[code] = {FACTBOOK_EDITION: label}
    return out


def _drug_majors(entries) -> Series:
    """Return the US government's 'majors' list (2025): drug-producing/transit and precursor countries."""
    out: Series = {}
    for code, entry in entries.items():
        text = (sources.text_of(entry, "Transnational Issues", "Illicit drugs", "USG identification") or "").lower()
        producing = "drug-producing" in text or "drug-transit" in text
        precursor = "precursor" in text
        label = ("Producing or transit and precursor" if producing and precursor else
                 "Producing or transit" if producing else "Precursor chemicals" if precursor else "Not listed")
        if _has_macro_data(entry):
            out[code] = {FACTBOOK_EDITION: label}
    return out


def _count_listed(entries, path, none_is_zero: bool) -> Series:
    """Return the number of items of a '; '-separated Factbook list (hazards, designated terrorist groups)."""
    out: Series = {}
    for code, entry in entries.items():
        text = sources.text_of(entry, *path)
        if text:
            main = re.split(r"\bvolcanism\b:|\bnote\b", text)[0] if "hazards" in path[-1].lower() else text
            items = [item for item in re.split(r";", main) if item.strip()]
            out[code] = {FACTBOOK_EDITION: len(items)}
        elif none_is_zero and _has_macro_data(entry):
            out[code] = {FACTBOOK_EDITION: 0}
    return out


def _landlocked(entries) -> Series:
    out: Series = {}
    for code, entry in entries.items():
        text = sources.text_of(entry, "Geography", "Coastline")
        if text:
            out[code] = {FACTBOOK_EDITION: "true" if "landlocked" in text.lower() else "false"}
    return out


def _has_macro_data(entry: dict) -> bool:
    """Return economies the Factbook describes (not uninhabited islands or oceans)."""
    return bool(sources.yearly(entry, "Economy", "Real GDP growth rate") or
                sources.yearly(entry, "Economy", "Real GDP per capita"))


def population_growth(population: dict[str, dict[int, float]], first: int, last: int) -> Series:
    """Return yearly population growth (%): each year takes the average yearly growth of the WPP
    five-year step it falls in (2021–2025 → the 2020–2025 step)."""
    out: Series = {}
    for code, series in population.items():
        values = {}
        for year in range(first, last + 1):
            end = year + (-year) % 5
            before, after = series.get(end - 5), series.get(end)
            if before and after:
                values[year] = round(100 * ((after / before) ** (1 / 5) - 1), 3)
        if values:
            out[code] = values
    return out


def interpolated(series: dict[int, float], year: int) -> float | None:
    """Return a five-yearly series at any year, linear between its two neighbours."""
    if year in series:
        return series[year]
    before = max((y for y in series if y < year), default=None)
    after = min((y for y in series if y > year), default=None)
    if before is None or after is None:
        return None
    share = (year - before) / (after - before)
    return series[before] + share * (series[after] - series[before])


def co2_per_capita(entries, population: dict[str, dict[int, float]],
                   history: dict[str, dict[int, float]], first_history: int) -> Series:
    """Return tonnes of CO2 per person: Factbook total emissions ÷ WPP population of the same year;
    earlier years from Gapminder's per-person series (CDIAC)."""
    out: Series = defaultdict(dict)
    for code, values in history.items():
        for year, value in values.items():
            if year >= first_history:
                out[code][year] = round(value, 3)
    for code, entry in entries.items():
        for year, tonnes in sources.yearly(entry, "Environment", "Carbon dioxide emissions", "total emissions").items():
            people = interpolated(population.get(code, {}), year)
            if people:
                out[code][year] = round(tonnes / people, 3)
    return dict(out)


def merged(*parts: Series) -> Series:
    """Return series of one indicator from several sources; a later part wins a year both have."""
    out: Series = defaultdict(dict)
    for part in parts:
        for code, values in part.items():
            out[code].update(values)
    return dict(out)


def only_years(series: Series, first: int) -> Series:
    return {code: {y: v for y, v in values.items() if y >= first} for code, values in series.items()
            if any(y >= first for y in values)}
