"""Write a deterministic, seeded synthetic dataset of any size (the scale benchmarks' and property tests' input).

    python3 -m tools.synthetic_data --out DIR [--countries N] [--models M] [--years Y] [--last-year YYYY] [--seed S]

Codes and English names are the real ISO 3166-1 list (pycountry, `pip install -e '.[synthetic]'`);
every value, region, income group and model parameter is synthetic and says so. The committed
data/ is real data, written by tools/prepare_demo_data.py.
"""
from __future__ import annotations

import argparse
import csv
import itertools
import random
from dataclasses import dataclass
from pathlib import Path

import pycountry

from generator.building.load.source_files import (
    BOUNDS,
    BOUNDS_COLUMNS,
    COUNTRIES,
    COUNTRY_COLUMNS,
    INDICATOR_COLUMNS,
    INDICATORS,
    MODEL_COLUMNS,
    MODELS,
    OBSERVATION_COLUMNS,
    SCORING,
    SCORING_COLUMNS,
    SECTION_COLUMNS,
    SECTIONS,
    header,
    observations_file,
)

SYNTHETIC = "Synthetic demo data (not real values)"
BASE_URL = "https://country-risk-api.example"
REGIONS = ("East Asia & Pacific", "Europe & Central Asia", "Latin America & Caribbean",
           "Middle East & North Africa", "North America", "South Asia", "Sub-Saharan Africa")
INCOMES = ("High income", "Upper middle income", "Lower middle income", "Low income")
# Small territories that get too little data for a score (below the coverage cut-offs).
SPARSE = ("ATF", "BVT", "CCK", "CXR", "HMD", "IOT", "NFK", "PCN", "SGS", "TKL", "UMI", "WLF", "SJM", "BLM",
          "MAF", "SPM", "NIU", "MSR", "FLK", "ALA")
NO_DATA = "ATA"  # one country with no data at all
FIRST_YEAR = 2010
# Fixed rather than today's year, so one command writes the same dataset in any year.
DEFAULT_LAST_YEAR = 2026
PROJECTION_YEARS = 2

# Catalogue: model -> (title, direction, scoring, rating, custom, sections)
# section: (reference, name, [(indicator reference, name, unit, good value, bad value), ...])
# Numeric indicators run from `good` (lowest risk) to `bad`; "label:…" and "flag" are categorical/boolean.
CATALOGUE = {
    "sovereign": ("Sovereign risk", "risk", "points", True, False, [
        ("growth", "Economic growth", [("gdp_growth", "Real GDP growth", "%", 5, -3),
                                       ("gdp_per_capita", "GDP per capita", "USD", 60000, 1000)]),
        ("monetary", "Monetary stability", [("inflation", "Consumer price inflation", "%", 2, 30),
                                            ("fx_volatility", "Exchange-rate volatility", "%", 2, 25)]),
        ("fiscal", "Fiscal position", [("public_debt", "General government debt", "% of GDP", 30, 150),
                                       ("budget_balance", "Budget balance", "% of GDP", 2, -10)]),
        ("external", "External position", [("current_account", "Current account balance", "% of GDP", 5, -12),
                                           ("reserves_months", "Reserves in months of imports", "months", 12, 1)]),
        ("institutions", "Institutions", [("rule_of_law", "Rule of law", "index", 2, -2),
                                          ("gov_effectiveness", "Government effectiveness", "index", 2, -2)]),
        ("political", "Political stability", [("political_stability", "Political stability", "index", 1.5, -2.5),
                                              ("imf_programme", "IMF programme", "", "flag", None)]),
        ("banking", "Banking sector", [("npl_ratio", "Non-performing loans", "% of loans", 1, 20),
                                       ("credit_gap", "Credit-to-GDP gap", "pp", 0, 25)]),
    ]),
    "esg": ("Environmental, social and governance risk", "risk", "points", True, False, [
        ("climate", "Climate", [("co2_per_capita", "CO2 emissions per capita", "t", 1, 20),
                                ("climate_exposure", "Exposure to climate hazards", "index", 10, 80)]),
        ("pollution", "Pollution", [("pm25", "PM2.5 concentration", "µg/m³", 5, 70)]),
        ("resources", "Natural resources", [("forest_loss", "Forest loss", "%", 0, 3),
                                            ("water_stress", "Water stress", "%", 10, 100)]),
        ("energy", "Energy", [("renewables", "Renewable electricity", "%", 80, 2)]),
        ("health", "Health", [("life_expectancy", "Life expectancy", "years", 83, 55),
                              ("infant_mortality", "Infant mortality", "per 1,000", 2, 70)]),
        ("education", "Education", [("schooling", "Mean years of schooling", "years", 13, 2)]),
        ("labour", "Labour", [("unemployment", "Unemployment rate", "%", 3, 25),
                              ("child_labour", "Child labour", "%", 0, 30)]),
        ("inequality", "Inequality", [("gini", "Gini index", "index", 25, 60)]),
        ("rule_of_law", "Rule of law", [("esg_rule_of_law", "Rule of law", "index", 2, -2)]),
        ("corruption", "Corruption", [("corruption_control", "Control of corruption", "index", 2, -2)]),
        ("voice", "Voice and accountability", [("voice_accountability", "Voice and accountability", "index", 1.5, -2)]),
        ("effectiveness", "Government effectiveness", [("esg_gov_effectiveness", "Government effectiveness",
                                                        "index", 2, -2),
                                                       ("oecd_due_diligence", "OECD due-diligence adherence", "%",
                                                        100, 0)]),
    ]),
    "aml": ("Anti-money-laundering risk", "risk", "points", False, False, [
        ("fatf", "FATF status", [("fatf_list", "FATF list status", "", "label:none|grey|black", None)]),
        ("corruption", "Corruption", [("aml_corruption", "Perceived corruption", "index", 90, 10)]),
        ("secrecy", "Financial secrecy", [("secrecy_score", "Financial secrecy score", "index", 30, 80),
                                          ("offshore_share", "Offshore financial services share", "%", 0, 10)]),
        ("rule_of_law", "Rule of law", [("aml_rule_of_law", "Rule of law", "index", 2, -2)]),
        ("crime", "Crime and terrorism", [("drug_major", "US major drug-transit or producing country", "", "flag", None),
                                          ("terrorism_deaths", "Terrorism deaths per million", "per million", 0, 50)]),
    ]),
    "supplychainrisk": ("Supply-chain risk", "risk", "points", False, False, [
        ("logistics", "Logistics", [("logistics_performance", "Logistics performance", "index", 4.2, 1.8),
                                    ("port_delays", "Median port dwell time", "days", 1, 15)]),
        ("infrastructure", "Infrastructure", [("electricity_access", "Access to electricity", "%", 100, 30),
                                              ("internet_use", "Internet users", "%", 95, 10)]),
        ("hazards", "Natural hazards", [("hazard_exposure", "Natural hazard exposure", "index", 5, 60)]),
        ("trade", "Trade concentration", [("top_partner_share", "Share of the largest export partner", "%", 10, 70)]),
        ("political", "Political and conflict", [("conflict_intensity", "Conflict intensity", "index", 0, 10),
                                                 ("scr_political_stability", "Political stability", "index",
                                                  1.5, -2.5)]),
        ("labour", "Labour and ESG", [("forced_labour", "Forced labour prevalence", "per 1,000", 0, 20)]),
    ]),
    "acme_aml": ("ACME bespoke anti-money-laundering risk", "risk", "points", False, True, [
        ("fatf", "FATF status", [("acme_fatf_list", "FATF list status", "", "label:none|grey|black", None)]),
        ("corruption", "Corruption", [("acme_corruption", "Perceived corruption", "index", 90, 10)]),
        ("secrecy", "Financial secrecy", [("acme_secrecy", "Financial secrecy score", "index", 30, 80)]),
        ("sanctions", "Sanctions exposure", [("acme_sanctions", "Sanctions exposure", "index", 0, 10)]),
        ("crime", "Crime", [("acme_crime", "Organised crime", "index", 1, 9)]),
    ]),
}
SECTION_WEIGHTS = {
    "sovereign": (0.2, 0.15, 0.2, 0.15, 0.1, 0.1, 0.1),
    "esg": (0.15, 0.1, 0.05, 0.05, 0.1, 0.05, 0.05, 0.05, 0.1, 0.1, 0.1, 0.1),
    "aml": (0.3, 0.2, 0.2, 0.15, 0.15),
    "supplychainrisk": (0.2, 0.15, 0.2, 0.15, 0.2, 0.1),
    "acme_aml": (0.4, 0.15, 0.15, 0.2, 0.1),
}
SDG_GOALS = ("No poverty", "Zero hunger", "Good health and well-being", "Quality education", "Gender equality",
             "Clean water and sanitation", "Affordable and clean energy", "Decent work and economic growth",
             "Industry, innovation and infrastructure", "Reduced inequalities", "Sustainable cities and communities",
             "Responsible consumption and production", "Climate action", "Life below water", "Life on land",
             "Peace, justice and strong institutions", "Partnerships for the goals")
MAX_POINTS = (100, 200, 150, 50)
STANDARD_MODELS = ("sovereign", "esg", "aml", "supplychainrisk", "sdg", "acme_aml")


@dataclass(frozen=True)
class DemoSpec:
    countries: tuple[tuple[str, str], ...]  # (code, name)
    models: tuple[str, ...]
    first_year: int
    last_year: int  # last year of actual data
    seed: int

    @classmethod
    def make(cls, countries: int = 249, models: int = 6, years: int | None = None, last_year: int | None = None,
             seed: int = 2026) -> "DemoSpec":
        last_year = last_year or DEFAULT_LAST_YEAR
        first_year = last_year - years + 1 if years else FIRST_YEAR
        extra = [f"extra{n:02d}" for n in range(len(STANDARD_MODELS) + 1, models + 1)]
        return cls(tuple(country_list(countries)), (STANDARD_MODELS + tuple(extra))[:models], first_year,
                   last_year, seed)


def country_list(count: int) -> list[tuple[str, str]]:
    """Return the ISO 3166-1 countries (common English name where there is one), then made-up codes."""
    iso = sorted((c.alpha_3, getattr(c, "common_name", None) or c.name) for c in pycountry.countries)
    if count <= len(iso):
        return iso[:count]
    taken = {code for code, _ in iso}
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    made_up = (a + b + c for a, b, c in itertools.product(letters, repeat=3) if a + b + c not in taken)
    return sorted(iso + [(code, f"Synthetic country {code}") for code in itertools.islice(made_up, count - len(iso))])


def _rng(spec: DemoSpec, *parts) -> random.Random:
    # String seeds hash with SHA-512, so values do not depend on PYTHONHASHSEED or on other entities.
    return random.Random(":".join(str(p) for p in (spec.seed,) + parts))


def _nice(x: float) -> float:
    return float(f"{x:.3g}")


def _catalogue(code: str) -> tuple:
    if code == "sdg" or code in CATALOGUE:
        return CATALOGUE.get(code)
    title, direction, scoring, rating, custom, sections = CATALOGUE["sovereign"]
    renamed = [(ref, name, [(f"{code}_{i[0]}",) + i[1:] for i in indicators]) for ref, name, indicators in sections]
    return (f"Extra model {code} (synthetic)", direction, scoring, rating, custom, renamed)


def _sdg_sections() -> list:
    sections = []
    for number, goal in enumerate(SDG_GOALS, start=1):
        indicators = [(f"sdg{number:02d}_{k}", f"{goal}: indicator {k}", "index", 100, 0) for k in (1, 2, 3)]
        sections.append((f"SDG{number}", goal, indicators[: 2 + number % 2]))
    return sections


def _weights(values: list[float]) -> list[float]:
    """Return shares rounded to 4 decimals whose sum is exactly 1."""
    total = sum(values)
    shares = [round(v / total, 4) for v in values]
    shares[-1] = round(1 - sum(shares[:-1]), 4)
    return shares


def _write(path: Path, header: list[str], rows) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow(row)
            count += 1
    return count


def write_demo_data(spec: DemoSpec, out: Path) -> dict[str, int]:
    """Write every CSV of a dataset into `out`; return row counts."""
    latent = {code: _rng(spec, "latent", code).betavariate(2, 2) for code, _ in spec.countries}
    countries = []
    for code, name in spec.countries:
        rng = _rng(spec, "country", code)
        risk = latent[code]
        income = INCOMES[min(3, int(risk * 4))]
        oecd = income == "High income" and rng.random() < 0.6
        geo_type = "territory" if code in SPARSE or code == NO_DATA else "country"
        countries.append((code, name, rng.choice(REGIONS), income, "yes" if oecd else "no", geo_type))
    counts = {"countries": _write(out / COUNTRIES, header(COUNTRY_COLUMNS), countries)}
    model_rows, section_rows, indicator_rows, scoring_rows, bounds_rows = [], [], [], [], []
    observations: dict[str, list] = {}
    for model in spec.models:
        if model == "sdg":
            title, direction, scoring, rating, custom, sections = (
                "Sustainable Development Goals performance", "performance", "bounds", False, False, _sdg_sections())
            weights = _weights([1] * len(sections))
        else:
            title, direction, scoring, rating, custom, sections = _catalogue(model)
            weights = list(SECTION_WEIGHTS.get(model, SECTION_WEIGHTS["sovereign"]))
        model_rows.append((model, title, f"{title}: synthetic demo model scored from raw indicators.",
                           SYNTHETIC, "1.0.0", f"{spec.last_year}-06-30", "",  # url: the model's page
                           direction, scoring, "yes" if rating else "no", "yes" if custom else "no"))
        rows: list = []
        for (reference, name, indicators), weight in zip(sections, weights):
            sdg_number = reference[3:] if scoring == "bounds" else ""
            section_rows.append((model, reference, name, f"{name} ({title.lower()})", weight, sdg_number))
            maxima = [MAX_POINTS[(len(indicator_rows) + k) % len(MAX_POINTS)] for k in range(len(indicators))]
            shares = _weights(maxima) if scoring == "points" else _weights([1] * len(indicators))
            for (ref, ind_name, unit, good, bad), points_max, share in zip(indicators, maxima, shares):
                rng = _rng(spec, "indicator", model, ref)
                applicability = ""
                if ref == "imf_programme":
                    applicability = "income: Low income | Lower middle income"
                elif ref == "oecd_due_diligence":
                    applicability = "oecd_member: yes"
                indicator_rows.append((
                    model, ref, reference, ind_name, ind_name[:40], SYNTHETIC, f"{BASE_URL}/indicators/{ref}",
                    f"{ind_name}. Synthetic values for the demo; real public data replaces them.",
                    share, "annual", unit, "USD" if unit == "USD" else "", f"{spec.last_year}-06-30",
                    rng.choice((1, 2, 3)), applicability, ""))  # no licence: synthetic values
                if scoring == "bounds":
                    lower_is_better = rng.random() < 0.4
                    optimum, lower = (0.0, 100.0) if lower_is_better else (100.0, 0.0)
                    green = _nice(optimum + (lower - optimum) * 0.3)
                    red = _nice(optimum + (lower - optimum) * 0.6)
                    bounds_rows.append((model, ref, optimum, green, red, lower))
                    good, bad = optimum, lower
                else:
                    scoring_rows.extend(_thresholds(model, ref, good, bad, points_max))
                applies = _applies(applicability)
                rows.extend(_observations(spec, model, ref, good, bad, latent,
                                          [c for c in countries if applies(c)]))
        observations[model] = rows
    counts["models"] = _write(out / MODELS, header(MODEL_COLUMNS), model_rows)
    counts["sections"] = _write(out / SECTIONS, header(SECTION_COLUMNS), section_rows)
    counts["indicators"] = _write(out / INDICATORS, header(INDICATOR_COLUMNS), indicator_rows)
    counts["scoring rows"] = _write(out / SCORING, header(SCORING_COLUMNS), scoring_rows)
    counts["bounds rows"] = _write(out / BOUNDS, header(BOUNDS_COLUMNS), bounds_rows)
    stale = out / "observations"
    if stale.is_dir():
        for old in stale.glob("*.csv"):
            if old.stem not in observations:
                old.unlink()
    counts["observations"] = sum(
        _write(out / observations_file(model), header(OBSERVATION_COLUMNS), rows)
        for model, rows in observations.items())
    return counts


def _applies(applicability: str):
    if applicability.startswith("income:"):
        return lambda country: country[3] in ("Low income", "Lower middle income")
    if applicability.startswith("oecd_member:"):
        return lambda country: country[4] == "yes"
    return lambda country: True


def _thresholds(model: str, ref: str, good, bad, points_max: int) -> list[tuple]:
    points = [round(points_max * k / 4) for k in range(5)]
    if good == "flag":
        return [(model, ref, "x == false", 0), (model, ref, "x == true", points_max)]
    if isinstance(good, str):
        labels = good.removeprefix("label:").split("|")
        return [(model, ref, f'x == "{label}"', round(points_max * k / (len(labels) - 1)))
                for k, label in enumerate(labels)]
    cuts = [_nice(good + (bad - good) * k / 5) for k in (1, 2, 3, 4)]
    if good > bad:  # lower values are riskier: the top band scores 0
        cuts.reverse()
        points.reverse()
    rows = [(model, ref, f"x < {cuts[0]:g}", points[0])]
    rows += [(model, ref, f"{a:g} <= x < {b:g}", p) for a, b, p in zip(cuts, cuts[1:], points[1:])]
    rows.append((model, ref, f"x >= {cuts[-1]:g}", points[-1]))
    return rows


def _observations(spec: DemoSpec, model: str, ref: str, good, bad, latent: dict, countries: list) -> list[tuple]:
    rows = []
    indicator_rng = _rng(spec, "series", model, ref)
    projected = indicator_rng.random() < 0.35
    released_late = indicator_rng.random() < 0.25  # no value yet for the last year
    for code, *_rest in countries:
        rng = _rng(spec, "obs", model, ref, code)
        if code == NO_DATA or rng.random() < 0.07 or (code in SPARSE and rng.random() < 0.85):
            continue
        level = min(1.0, max(0.0, latent[code] + rng.gauss(0, 0.12)))
        drift = rng.gauss(0, 0.01)
        last = spec.last_year - (1 if released_late else 0)
        years = [(y, "actual") for y in range(spec.first_year, last + 1)]
        if projected:
            years += [(y, "projected") for y in range(spec.last_year + 1, spec.last_year + PROJECTION_YEARS + 1)]
        for year, status in years:
            level = min(1.0, max(0.0, level + drift + rng.gauss(0, 0.02)))
            value, components = _value(good, bad, level)
            rows.append((ref, code, year, value, status, ""))
            rows.extend((ref, code, year, v, status, name) for name, v in components)
    return rows


def _value(good, bad, level: float) -> tuple[str, list]:
    if good == "flag":
        return ("true" if level > 0.7 else "false"), []
    if isinstance(good, str):
        label = "black" if level > 0.9 else "grey" if level > 0.7 else "none"
        return label, [("FATF call for action", "yes" if label == "black" else "no"),
                       ("FATF increased monitoring", "yes" if label == "grey" else "no")]
    return f"{good + (bad - good) * level:.2f}", []


def add_model_copy(data: Path, source: str, code: str) -> None:
    """Add to a dataset a copy of model `source` under the code `code` (same sections, indicators,
    tables and observations): bespoke models in bulk for the audience tests and benchmark."""
    for name in (MODELS, SECTIONS, INDICATORS, SCORING, BOUNDS):
        path = data / name
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        copies = [code + line[len(source):] for line in lines[1:] if line.startswith(source + ",")]
        path.write_text("".join(lines + copies), encoding="utf-8")
    (data / observations_file(code)).write_bytes((data / observations_file(source)).read_bytes())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write the CSVs into")
    parser.add_argument("--countries", type=int, default=249, help="the 249 ISO ones first, then made-up codes")
    parser.add_argument("--models", type=int, default=6, help="the five standard ones and acme_aml first")
    parser.add_argument("--years", type=int, default=None, help=f"years of actual data [default: from {FIRST_YEAR}]")
    parser.add_argument("--last-year", type=int, default=DEFAULT_LAST_YEAR, help="last year of actual data")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    spec = DemoSpec.make(countries=args.countries, models=args.models, years=args.years, last_year=args.last_year,
                         seed=args.seed)
    counts = write_demo_data(spec, args.out)
    print(f"wrote {args.out}: " + ", ".join(f"{n} {what}" for what, n in counts.items()))


if __name__ == "__main__":
    main()
