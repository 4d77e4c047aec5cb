"""Load `data/`: CSV files → checked, typed, immutable records (every problem reported at once)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ...errors import Problem
from .countries import (
    check_weights,
    finish_indicator,
    load_countries,
    load_indicators,
    load_scoring_tables,
    load_sections,
)
from .countries import load_models as load_models_file
from .observations import load_observations
from .problems import ProblemLog
from .records import Country, Dataset, ModelDefinition, ModelObservations
from .source_files import (
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

__all__ = ["load_dataset", "load_models", "LoadedModels", "Dataset",
           "BOUNDS_COLUMNS", "COUNTRY_COLUMNS", "INDICATOR_COLUMNS", "MODEL_COLUMNS",
           "OBSERVATION_COLUMNS", "SCORING_COLUMNS", "SECTION_COLUMNS"]


def observation_files(data_dir: Path) -> list[str]:
    """Return the CSV files of observations/, as the data contract names them."""
    folder = data_dir / OBSERVATIONS
    return [f"{OBSERVATIONS}/{path.name}" for path in folder.glob("*.csv")] if folder.is_dir() else []


@dataclass
class LoadedModels:
    """The data folder read but for the observations: its problems and warnings so far (`log`), the
    countries and every model's definition, with what each model's observations need to be read."""

    log: ProblemLog
    countries: dict[str, Country]
    models: tuple[ModelDefinition, ...]  # sorted by code
    broken: dict[str, set[str]]  # by model: its indicators whose rows could not be read (reported)
    warnings_of: dict[str, tuple[int, int]]  # by model: the range of log.warnings its own checks added

    def observations(self, definition: ModelDefinition, log: ProblemLog | None = None) -> ModelObservations:
        """Return one model's observations, their problems and warnings in `log` (this one's, or a copy of it in a
        build's worker process)."""
        code = definition.model.code
        return load_observations(log or self.log, definition.model, definition.indicators, self.countries,
                                 self.broken[code])

    def observations_bytes(self, definition: ModelDefinition) -> int:
        """Return the size of a model's observations file: how much work its model is, before it is read."""
        path = self.log.dir / observations_file(definition.model.code)
        return path.stat().st_size if path.is_file() else 0

    def warnings_with(self, observed: dict[str, Sequence[Problem]]) -> tuple[Problem, ...]:
        """Return every warning in the order load_dataset gives them: each model's observations' warnings
        (`observed`, by model) after its own checks' (kept in the log)."""
        warnings = self.log.warnings
        ranges = [self.warnings_of[d.model.code] for d in self.models]
        merged = list(warnings[:ranges[0][0]] if ranges else warnings)
        for definition, (start, end) in zip(self.models, ranges):
            merged += [*warnings[start:end], *observed.get(definition.model.code, ())]
        return tuple(merged + (warnings[ranges[-1][1]:] if ranges else []))

    def dataset(self) -> Dataset:
        return Dataset(tuple(sorted(self.countries.values(), key=lambda c: c.code)), self.models,
                       tuple(self.log.warnings))


def load_models(data_dir: Path | str,
                each: Callable[[LoadedModels, ModelDefinition], None] | None = None) -> LoadedModels:
    """Read and check every CSV of `data_dir` but the observations (`each(loaded, model)` runs after each
    model's own checks: load_dataset reads its observations there, so problems come file by file).
    Raises nothing: the problems are in `loaded.log`."""
    data_dir = Path(data_dir)
    log = ProblemLog(data_dir)
    countries = load_countries(log)
    models = load_models_file(log)
    sections = load_sections(log, models)
    raw_indicators = load_indicators(log, models, sections)
    load_scoring_tables(log, models, raw_indicators)
    loaded = LoadedModels(log, countries, (), {}, {})
    for code, model in sorted(models.items()):
        first_warning = len(log.warnings)
        model_sections = tuple(s for s in sections.values() if s.model == code)
        finished = {raw["reference"]: finish_indicator(log, model, raw)
                    for raw in raw_indicators.values() if raw["model"] == code}
        model_indicators = tuple(i for i in finished.values() if i is not None)
        broken = {reference for reference, indicator in finished.items() if indicator is None}
        incomplete = {raw["section"] for raw in raw_indicators.values()
                      if raw["model"] == code and raw["reference"] in broken}
        check_weights(log, model, model_sections, model_indicators, incomplete)
        definition = ModelDefinition(model, model_sections, model_indicators)
        loaded.models += (definition,)
        loaded.broken[code] = broken
        loaded.warnings_of[code] = (first_warning, len(log.warnings))
        if each is not None:
            each(loaded, definition)
    for unknown in sorted(set(observation_files(data_dir)) - {observations_file(code) for code in models}):
        if not log.is_unreadable(MODELS):
            log.problem(unknown, None, None, "is not the observations of a model of models.csv",
                        "name it <model code>.csv after its model, or move it out of observations/")
    return loaded


def load_dataset(data_dir: Path | str) -> tuple[Dataset, dict[str, ModelObservations]]:
    """Read and check every CSV of `data_dir`: the dataset, and each model's observations by model code
    (a dict the caller owns, so it can let go of each model's observations once scored).
    Raise DataError listing every problem found."""
    observations: dict[str, ModelObservations] = {}

    def read(loaded: LoadedModels, definition: ModelDefinition) -> None:
        observations[definition.model.code] = loaded.observations(definition)
    loaded = load_models(data_dir, read)
    loaded.log.raise_if_any()
    return loaded.dataset(), observations
