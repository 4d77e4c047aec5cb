"""Load `data/`: CSV files → checked, typed, immutable records (every problem reported at once)."""
from __future__ import annotations

from pathlib import Path

from .catalogue import (
    check_weights,
    finish_indicator,
    load_countries,
    load_indicators,
    load_models,
    load_scoring_tables,
    load_sections,
)
from .contract import (
    BOUNDS_COLUMNS,
    COUNTRY_COLUMNS,
    INDICATOR_COLUMNS,
    MODEL_COLUMNS,
    MODELS,
    OBSERVATION_COLUMNS,
    OBSERVATIONS,
    SCORING_COLUMNS,
    SECTION_COLUMNS,
    observations_file,
)
from .observations import load_observations
from .problems import ProblemLog
from .records import Dataset, ModelDefinition, ModelObservations

__all__ = ["load_dataset", "Dataset", "BOUNDS_COLUMNS", "COUNTRY_COLUMNS", "INDICATOR_COLUMNS", "MODEL_COLUMNS",
           "OBSERVATION_COLUMNS", "SCORING_COLUMNS", "SECTION_COLUMNS"]


def observation_files(data_dir: Path) -> list[str]:
    """The CSV files of observations/, as the data contract names them."""
    folder = data_dir / OBSERVATIONS
    return [f"{OBSERVATIONS}/{path.name}" for path in folder.glob("*.csv")] if folder.is_dir() else []


def load_dataset(data_dir: Path | str) -> tuple[Dataset, dict[str, ModelObservations]]:
    """Read and check every CSV of `data_dir`: the dataset, and each model's observations by model code
    (a dict the caller owns, so it can let go of each model's observations once scored).
    Raise DataError listing every problem found."""
    data_dir = Path(data_dir)
    log = ProblemLog(data_dir)
    countries = load_countries(log)
    models = load_models(log)
    sections = load_sections(log, models)
    raw_indicators = load_indicators(log, models, sections)
    load_scoring_tables(log, models, raw_indicators)
    definitions, observations = [], {}
    for code, model in sorted(models.items()):
        model_sections = tuple(s for s in sections.values() if s.model == code)
        finished = {raw["reference"]: finish_indicator(log, model, raw)
                    for raw in raw_indicators.values() if raw["model"] == code}
        model_indicators = tuple(i for i in finished.values() if i is not None)
        broken = {reference for reference, indicator in finished.items() if indicator is None}
        incomplete = {raw["section"] for raw in raw_indicators.values()
                      if raw["model"] == code and raw["reference"] in broken}
        check_weights(log, model, model_sections, model_indicators, incomplete)
        observations[code] = load_observations(log, model, model_indicators, countries, broken)
        definitions.append(ModelDefinition(model, model_sections, model_indicators))
    for unknown in sorted(set(observation_files(data_dir)) - {observations_file(code) for code in models}):
        if not log.is_unreadable(MODELS):
            log.problem(unknown, None, None, "is not the observations of a model of models.csv",
                        "name it <model code>.csv after its model, or move it out of observations/")
    log.raise_if_any()
    dataset = Dataset(tuple(sorted(countries.values(), key=lambda c: c.code)), tuple(definitions),
                      tuple(log.warnings))
    return dataset, observations
