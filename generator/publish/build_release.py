"""One build, flowing forward: load → per model (score → render → validate → write) → shared documents →
diff against the previous release → release extras (pages, nginx maps, changes.txt) → commit."""
from __future__ import annotations

import contextlib
import dataclasses
import gc
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import orjson

from ..building.diff import (
    DATA_COUNTS,
    ChangeGuard,
    ReleaseDiff,
    ReleaseSnapshot,
    diff_releases,
    format_diff,
    read_snapshot,
)
from ..building.load import Dataset, LoadedModels, load_dataset, load_models
from ..building.load.records import ModelData, ModelDefinition, ModelObservations, observation_counts
from ..building.model_jobs import (
    ModelJob,
    ModelWorkers,
    ObservationProblems,
    StageClock,
    ValidatedWriter,
    default_jobs,
)
from ..building.render import RENDERERS, render_shared_documents
from ..building.render.api_root import render_api_root, render_current_release
from ..building.render.changes import Sections, model_changes, render_release_changes
from ..building.render.data_package import release_package
from ..building.render.exports import ExportChunks
from ..building.render.openapi import build_openapi
from ..building.render.pages import CHANGES_PAGE, REFERENCE_PAGE, ReleaseChanges, example_routes, render_pages
from ..building.render.release_info import release_site_url
from ..building.scoring import CurrentScores, score_model
from ..building.validate import SCHEMA_DIR, DocumentValidator
from ..building.writer import ReleaseWriter
from ..contract import filters, locations, routes
from ..errors import ChangesRefused, DataError, Problem, PublishError, TooManyClassChanges, ValidationFailed
from ..history.catalogue import KEEP, KEEP_DAYS, SITE_URL, Catalogue, read_history
from ..history.catalogue.checkpoints import log_identity, origin_of
from ..history.catalogue.settings import LOG_ORIGIN
from ..history.layout import RELEASE_INFO
from ..history.retention import retention
from ..history.site import CHANGES, CURRENT, RELEASES
from ..serve.nginx.configuration import ReleaseCheck
from ..serve.nginx.maps import render_release_maps

STAGES = ("load", "score", "render", "validate", "publish")


@dataclass
class BuildReport:
    release: str | None = None
    changes: ReleaseDiff | None = None  # against the release that was current before
    documents: int = 0  # every audience's documents, the ones that name their release included
    audiences: int = 0  # the audiences a document may have a variant for (public, and each grant set's)
    bytes: int = 0
    linked: int = 0
    countries: int = 0
    models: int = 0
    warnings: tuple[Problem, ...] = ()
    stages: dict[str, float] = field(default_factory=dict)  # seconds of each stage, over every process
    wall: float = 0.0  # seconds the build took
    published: bool = False  # False: nothing changed against the current release, which stays
    site_url: str = ""  # the address the release links to
    site_url_before: str | None = None  # the site's address before this build, where it changed
    log_origin: str | None = None  # the log's name, where the site's address would not name it so
    pruned: tuple[str, ...] = ()  # the releases the retention removed
    held: tuple[str, ...] = ()  # of those, the ones whose folder stays while a running server uses it
    keep: int = 0  # the retention it was given (--keep, or the site's)

    def note_dataset(self, dataset: Dataset) -> None:
        """Note what the loaded data holds: its warnings and how many countries and models."""
        self.warnings, self.countries, self.models = dataset.warnings, len(dataset.countries), len(dataset.models)


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for one build.

    A build makes millions of small acyclic objects (freed by reference counting); the cyclic
    collector would scan all live ones again and again, which cost a third of the build time and
    made it grow faster than linearly with the data (benchmarks/scale.py).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_checked(data_dir: Path, strict: bool) -> tuple[Dataset, dict[str, ModelObservations]]:
    """Return the load stage, shared by `build` and `check`: with `strict`, warnings are errors."""
    dataset, observations = load_dataset(data_dir)
    refuse_warnings(data_dir, dataset.warnings, strict)
    return dataset, observations


def refuse_warnings(data_dir: Path, warnings: Sequence[Problem], strict: bool) -> None:
    if strict and warnings:
        raise DataError(list(warnings), heading=f"{data_dir} has warnings, and --strict makes them errors")


def load_for(data_dir: Path, strict: bool, jobs: int) -> tuple[Dataset, dict[str, ModelObservations] | None,
                                                               LoadedModels | None]:
    """Return the load stage of a build: everything here with one job; with more, all but the observations,
    which the process that builds a model reads (none holds them all, and they are read at once). A
    folder with a problem, or warnings under --strict, is read here whole, to say everything at once."""
    if jobs > 1:
        loaded = load_models(data_dir)
        if len(loaded.models) > 1 and not loaded.log.total and not (strict and loaded.log.warnings):
            return loaded.dataset(), None, loaded
    return *load_checked(data_dir, strict), None


def check(data_dir: Path, strict: bool = False) -> tuple[BuildReport, int]:
    """Load and score everything, write nothing; return the report and the number of current model scores."""
    report = BuildReport()
    clock = StageClock(report.stages)
    with cyclic_gc_paused():
        dataset, observations = clock.run("load", load_checked, data_dir, strict)
        scored = 0
        for definition in dataset.models:
            scores = clock.run("score", score_model, dataset.countries,
                               ModelData(definition, observations.pop(definition.model.code)))
            scored += sum(1 for c in scores.countries.values() if c.current is not None)
    report.note_dataset(dataset)
    return report, scored


def link_model_pages(dataset: Dataset, site_url: str) -> Dataset:
    """Link a public model whose models.csv leaves `url` blank to its methodology page on the site
    (custom models have no public page: theirs stays out of the documents)."""
    def linked(definition: ModelDefinition) -> ModelDefinition:
        model = definition.model
        if model.url is not None or model.custom:
            return definition
        return dataclasses.replace(definition, model=dataclasses.replace(
            model, url=locations.model_page(site_url, model.code)))
    return dataclasses.replace(dataset, models=tuple(linked(d) for d in dataset.models))


def refuse_if_suspicious(changes: ReleaseDiff, previous: ReleaseSnapshot | None, snapshot: ReleaseSnapshot,
                         previous_id: str | None, guard: ChangeGuard | None, max_class_changes: int | None,
                         retry: str = "build with --accept-changes") -> None:
    """Guard against a broken data release: raise, saying why, instead of publishing (`retry`: how
    to publish it anyway)."""
    refusals = guard.refusals(previous, snapshot, changes) if guard else []
    if refusals:
        raise ChangesRefused(f"not published: against release {previous_id}, " + "; ".join(refusals)
                             + f". If the data release means it, {retry}; if not, check its "
                             "files (riskapi check)")
    if max_class_changes is not None and changes.class_changes > max_class_changes:
        raise TooManyClassChanges(
            f"not published: {changes.class_changes} countries would change risk class, more than "
            f"--max-class-changes {max_class_changes}\n" + format_diff(changes, previous_id, "this build"))


def refuse_if_nginx_rejects(check: ReleaseCheck, writer: ReleaseWriter) -> None:
    """Refuse what the reference server rejects: `nginx -t` on the release's configuration."""
    rejected = check.result()
    if rejected:
        raise PublishError(f"nginx rejects this release's configuration, so it was not published "
                           f"({writer.site / CURRENT} is as it was):\n{rejected}")


@dataclass(frozen=True)
class BuildOptions:
    """What a build is told beside its data and site: docs/operate.md describes each as `riskapi build`
    takes it. Nothing is published that is identical to the current release (unless `force`), that the
    change guards refuse (`guard`, `max_class_changes`), or that nginx rejects. The site remembers
    `site_url`, `keep` and `keep_days`: None takes the last build's. A clock far behind the last switch
    stops it before anything is written, unless `clock_behind_ok`."""

    strict: bool = False
    progress: Callable[[int, int], None] | None = None
    schema_dir: Path = SCHEMA_DIR
    max_class_changes: int | None = None
    cli_commands: Sequence[tuple[str, str]] = ()
    force: bool = False
    grant_sets: Iterable[frozenset[str]] = ()
    guard: ChangeGuard | None = field(default_factory=ChangeGuard)
    site_url: str | None = None
    keep: int | None = None
    keep_days: float | None = None
    stage: bool = False
    jobs: int | None = None
    clock_behind_ok: bool = False


def build(data_dir: Path, site_dir: Path, options: BuildOptions | None = None, **given: object) -> BuildReport:
    """Build every document from `data_dir` and publish them as a new release of `site_dir`, as `options`
    (and any of its fields `given` by name) say."""
    chosen = dataclasses.replace(options or BuildOptions(), **given)  # type: ignore[arg-type]
    started = time.perf_counter()
    jobs = default_jobs() if chosen.jobs is None else chosen.jobs
    report = BuildReport(stages=dict.fromkeys(STAGES, 0.0))
    clock = StageClock(report.stages)
    site_url, keep, keep_days = remembered_settings(site_dir, report, chosen.site_url, chosen.keep, chosen.keep_days)
    with cyclic_gc_paused():
        dataset, observations, loaded = clock.run("load", load_for, data_dir, chosen.strict, jobs)
        report.note_dataset(dataset)
        dataset = link_model_pages(dataset, site_url)
        run = BuildRun(report, clock, dataset, DocumentValidator(chosen.schema_dir), site_url,
                       locations.audiences(dataset.custom_models, chosen.grant_sets),
                       ReleaseWriter(site_dir, keep, keep_days, jobs, chosen.clock_behind_ok))
        nginx_check: ReleaseCheck | None = None
        try:
            # The release's nginx maps first, so nginx reads them (nginx -t) while the rest is built
            run.writer.write_now(render_release_maps(dataset, run.audiences, site_url))
            nginx_check = ReleaseCheck(run.writer.folder)
            out = ValidatedWriter(run.writer, run.validator, clock, {r.file for r in run.examples.values()},
                                  chosen.progress, run.total_documents())
            built = build_models(run, out, observations, loaded, data_dir, chosen.strict)
            render_shared(run, out, built)
            changes = compare_with_previous(run, built, chosen.guard, chosen.max_class_changes)
            render_release_identity(run, out, built, changes)
            write_extras(run, out, built, changes, chosen.cli_commands)
            if not chosen.force and run.writer.same_as_previous(
                    lambda path: path in (CHANGES_PAGE, REFERENCE_PAGE, CHANGES) or locations.names_its_release(path)):
                run.writer.abort()
                report.release = run.writer.previous
            else:
                clock.run("publish", refuse_if_nginx_rejects, nginx_check, run.writer)
                publish(run, chosen.stage, keep, keep_days)
        except BaseException:
            run.writer.abort()
            raise
        finally:
            if nginx_check is not None:
                nginx_check.stop()
    report.wall = time.perf_counter() - started
    return report


@dataclass
class BuildRun:
    """What every stage of one build shares."""

    report: BuildReport
    clock: StageClock
    dataset: Dataset
    validator: DocumentValidator
    site_url: str
    audiences: list[frozenset[str]]
    writer: ReleaseWriter
    examples: dict = field(init=False)  # the documents the reference shows, by kind

    def __post_init__(self) -> None:
        self.examples = example_routes(self.dataset)

    def total_documents(self) -> int:
        return locations.document_count(filters.country_groups(self.dataset.countries), len(self.dataset.models),
                                        len(self.audiences))


@dataclass
class ModelsBuilt:
    """What the models' stage hands on: each model's current scores, endpoint 3 document (for the diff),
    sections (for the change document) and observation counts (for the next build's guard)."""

    current: list[CurrentScores] = field(default_factory=list)
    score_lists: dict[str, dict] = field(default_factory=dict)
    sections: dict[str, Sections] = field(default_factory=dict)
    observed: dict = field(default_factory=dict)


def remembered_settings(site_dir: Path, report: BuildReport, site_url: str | None, keep: int | None,
                        keep_days: float | None) -> tuple[str, int, float | None]:
    """Return the site's address and retention: as given, else as the site remembers them (its catalogue), else
    the defaults. A damaged catalogue stops the build here."""
    history = read_history(site_dir)
    remembered = history.settings
    # The site's address: as last given; else the live release's own (a catalogue repaired or imported
    # from a journal remembers none, and the release says where its links point)
    live = site_dir / RELEASES / history.current if history.current else None
    before = remembered.get(SITE_URL) or (
        release_site_url(live) if live and (live / RELEASE_INFO).is_file() else None)
    site_url = site_url or before or routes.DEFAULT_SITE_URL
    report.site_url = site_url
    if before not in (None, site_url):
        report.site_url_before = before
    named = remembered.get(LOG_ORIGIN)
    if named and named != origin_of(site_url):  # a log's name never changes: the operator hears of it
        report.log_origin = named
    return site_url, *retention(remembered, keep, keep_days)


def build_models(run: BuildRun, out: ValidatedWriter, observations: dict | None, loaded: LoadedModels | None,
                 data_dir: Path, strict: bool) -> ModelsBuilt:
    """Score, render, validate and write each model (in the workers), with its exports."""
    built = ModelsBuilt(observed=observation_counts(observations) if observations is not None else {})
    observed_warnings: dict[str, Sequence[Problem]] = {}
    exports = ExportChunks(run.writer.scratch(), run.writer.id, run.writer.earlier, run.writer.folder)
    job = ModelJob(run.dataset.countries, run.dataset.models, observations, loaded, run.validator, out.example_files,
                   run.total_documents())
    try:
        with ModelWorkers(job, run.writer, exports) as workers:
            for model in workers.models(out):  # the public exports are written in there too
                for name, seconds in model.stages.items():
                    run.report.stages[name] = run.report.stages.get(name, 0.0) + seconds
                out.failures.extend(model.failures)
                out.examples.update(model.examples)
                out.documents += model.documents
                built.current.append(model.current)
                built.score_lists[model.code] = model.score_list
                built.sections[model.code] = model.sections
                if loaded is not None:  # the workers count what they read
                    built.observed[model.code], observed_warnings[model.code] = model.observed, model.warnings
    except ObservationProblems:
        load_checked(data_dir, strict)  # the folder read again, here: raises every problem at once
        raise
    if loaded is not None:  # the warnings of the observations, where one job would have said them
        run.report.warnings = loaded.warnings_with(observed_warnings)
        refuse_warnings(data_dir, run.report.warnings, strict)
    return built


def render_shared(run: BuildRun, out: ValidatedWriter, built: ModelsBuilt) -> None:
    """Render the documents of every model together (endpoints 1, 2 and 5) and openapi.json."""
    countries = run.dataset.countries
    out.add(run.clock.run("render", render_shared_documents, countries, built.current, run.audiences))
    for rule in routes.RULES:  # a route with a renderer of its own (render.renders)
        if rule.name in RENDERERS:
            out.add(run.clock.run("render", RENDERERS[rule.name], run.dataset, built.current, run.audiences))
    public = [m.model.code for m in run.dataset.models if not m.model.custom]
    shown = {kind: (route, out.examples[route.file]) for kind, route in run.examples.items()}
    values = {"models": public, "countries": [c.code for c in countries[:3]],
              **filters.group_values(filters.country_groups(countries))}
    out.add_one(locations.openapi(), run.clock.run("render", build_openapi, run.validator.schemas, values, shown,
                                                   run.site_url))
    if out.failures:
        raise ValidationFailed(out.failures)


def compare_with_previous(run: BuildRun, built: ModelsBuilt, guard: ChangeGuard | None,
                          max_class_changes: int | None) -> ReleaseChanges:
    """Return what this release changes against the current one, refused by the guards when it looks broken."""
    writer = run.writer
    previous = run.clock.run("publish", read_snapshot, writer.previous_dir) if writer.previous_dir else None
    snapshot = ReleaseSnapshot.of(writer.files, built.score_lists, built.observed)
    run.report.changes = diff_releases(previous, snapshot)
    refuse_if_suspicious(run.report.changes, previous, snapshot, writer.previous, guard, max_class_changes)
    return ReleaseChanges(writer.previous, writer.id, run.report.changes)


def render_release_identity(run: BuildRun, out: ValidatedWriter, built: ModelsBuilt, changes: ReleaseChanges) -> None:
    """Render what names this release: the API root, and per audience the release and its change document."""
    log = log_identity(read_history(run.writer.site).settings, run.site_url)
    out.add_one(locations.api_root(), render_api_root(run.site_url, run.writer.id, log))
    out.add_one(locations.release_datapackage(),
                release_package(run.site_url, run.writer.id, run.writer.files, run.dataset.models))
    custom = set(run.dataset.custom_models)
    parts = model_changes(changes, built.sections, run.writer.previous_dir)
    for grants in run.audiences:
        visible = [c for c in built.current if not c.model.custom or c.model.code in grants]
        audience = locations.audience_name(grants)
        out.add_one(locations.current_release(audience),
                    render_current_release(run.site_url, changes, visible, grants, custom))
        out.add_one(locations.release_changes(audience),
                    render_release_changes(run.site_url, changes, run.writer.files, parts,
                                           [c.model.code for c in visible], grants, custom))
    if out.failures:
        raise ValidationFailed(out.failures)


def write_extras(run: BuildRun, out: ValidatedWriter, built: ModelsBuilt, changes: ReleaseChanges,
                 cli_commands: Sequence[tuple[str, str]]) -> None:
    """Write the HTML pages, changes.txt and what the next build's guard reads."""
    report, writer = run.report, run.writer
    shown = {kind: (route, out.examples[route.file]) for kind, route in run.examples.items()}
    extras = {**run.clock.run("render", render_pages, run.dataset, shown, list(cli_commands), run.site_url, changes),
              CHANGES: (format_diff(changes.diff, writer.previous, writer.id) + "\n").encode(),
              DATA_COUNTS: orjson.dumps({"observations": built.observed})}
    for path, body in extras.items():
        run.clock.run("publish", writer.write, path, body)
    report.documents, report.bytes, report.linked = out.documents, writer.bytes, writer.linked
    report.audiences = len(run.audiences)


def publish(run: BuildRun, stage: bool, keep: int, keep_days: float | None) -> None:
    """Make the release live (or stage it), apply the retention and remember the site's settings."""
    names = tuple(locations.audience_name(a) for a in run.audiences)
    committed = run.clock.run("publish", run.writer.commit, stage, names)
    run.report.release, run.report.pruned, run.report.keep = committed.id, committed.pruned, keep
    run.report.held = committed.held
    run.report.published = True
    with Catalogue.open(run.writer.site) as catalogue:
        catalogue.remember({SITE_URL: run.site_url, KEEP: str(keep),
                            **({KEEP_DAYS: str(keep_days)} if keep_days is not None else {})})
