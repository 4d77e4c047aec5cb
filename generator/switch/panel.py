"""The point-in-time panel: every value the API published and when it was published — each bulk export
row with `known_from` and `known_until`, the instants of the switches that made a release answering it
live and not live (null while it still answers). A value unchanged across a switch keeps its row, so the
panel grows with what changed, not with the releases kept; a pruned release's rows stay (they were
published then). Served as /api/v1/exports/history.parquet (the public models) and
/exports/{model}/history.parquet, the same for every key, with the list of releases (timeline.py).

Kept in `site/panel/` — a Parquet file a model (`models/`), the public models' joined (`public.parquet`)
and `state.json`, the live periods it holds — and brought up to the catalogue's live periods before a
release is pruned (its exports are read while on disk) and wherever a server's configuration is made:
each new period closes the open rows its release does not answer and opens the ones it adds, model by
model, comparing whole rows (a model whose export did not change is not read). Periods that no longer
agree with the catalogue (a repair that changed instants) make the panel again from the releases on disk."""
from __future__ import annotations

import contextlib
import fcntl
import filecmp
import functools
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..building.render import parquet
from ..building.render.exports import COLUMNS, HEADER
from ..contract import locations
from ..history.catalogue import LivePeriod, read_history
from ..history.layout import RELEASES, read_routing
from ..system.files import naming, write_atomic

PANEL = "panel"
FORMAT = 2  # of the files in site/panel/: 2 since they hold each value's vintage (first_release, revision)
STATE = "state.json"
PUBLIC = "public"  # the public models' panel, joined from theirs
MODELS = "models"  # each model's
KNOWN = (("known_from", "when the release that published this value went live (UTC)"),
         ("known_until", "when it stopped being live (UTC); null: it still answers"))
# A value's vintage, worked out from the rows whenever a model's panel is written (never stepped itself):
# ALFRED's first release and revision of an observation (a model, country, level, reference and date).
VINTAGE = (("first_release", "the release that first published this value (its id)"),
           ("revision", "0 for the observation's first published value, +1 for each later change"))
VINTAGE_TYPES = (pa.string(), pa.int32())
OBSERVATION = ("country_code", "level", "reference", "date")  # within a model's rows
INSTANT = pa.timestamp("ms", tz="UTC")
SORTED_BY = ("model", "country_code", "reference", "date", "known_from")  # Arrow sorts no dictionary column


def schema(rows_of: str) -> pa.Schema:
    """Return the export's schema, then `known_from`, `known_until` and the vintage; no release in its metadata (it
    holds many)."""
    stepped = _stepped_schema(rows_of)
    vintage = [pa.field(name, kind, nullable=False, metadata={"description": text})
               for (name, text), kind in zip(VINTAGE, VINTAGE_TYPES)]
    return pa.schema([*stepped, *vintage], metadata=stepped.metadata)


def _decoded(column: pa.ChunkedArray) -> pa.ChunkedArray:
    return pc.dictionary_decode(column) if pa.types.is_dictionary(column.type) else column


def _stepped_schema(rows_of: str) -> pa.Schema:
    """Return the columns a switch steps: the export's, `known_from` and `known_until`."""
    base = parquet.schema(COLUMNS, "", rows_of)
    fields = [*base, *(pa.field(name, INSTANT, metadata={"description": text}) for name, text in KNOWN)]
    return pa.schema(fields, metadata={b"rows": base.metadata[b"rows"], b"sorted_by": ",".join(SORTED_BY).encode()})


def with_vintage(table: pa.Table, releases: dict[int, str], file_schema: pa.Schema) -> pa.Table:
    """Return a model's stepped rows (in SORTED_BY's order) with each row's vintage: the release whose period
    (`releases`: start in ms → release) opened it, and how many values of its observation were published
    before it — its place among them by `known_from`."""
    count = table.num_rows
    observation = pc.binary_join_element_wise(
        *(pc.cast(_decoded(table.column(name)), pa.string()) for name in OBSERVATION), "\x1f",
        null_handling="replace", null_replacement="\x00")
    keyed = pa.table({"observation": observation, "known_from": table.column("known_from")})
    order = pc.sort_indices(keyed, [("observation", "ascending"), ("known_from", "ascending")])
    key = _whole(pc.take(observation, order))
    # in that order, a row's revision is its place less the place of its observation's first row
    place = pa.array(range(count), pa.int32())
    first_of_key = pa.concat_arrays([pa.array([True] * min(count, 1), pa.bool_()),
                                     pc.not_equal(key.slice(1), key.slice(0, max(count - 1, 0)))])
    ordered = pc.subtract(place, pc.cumulative_max(pc.if_else(first_of_key, place, 0)))
    revision = pc.take(ordered, pc.sort_indices(order))  # back in the table's order (order's inverse)
    starts = pa.array(sorted(releases), pa.int64())
    opened = pc.index_in(pc.cast(table.column("known_from"), pa.int64()), value_set=starts)
    if opened.null_count:
        raise ValueError("the panel holds a row opened at an instant no live period starts at")
    first = pc.take(pa.array([releases[start] for start in sorted(releases)], pa.string()), opened)
    stepped = table.cast(_stepped_schema(file_schema.metadata[b"rows"].decode()))
    return pa.Table.from_arrays([*stepped.columns, first, revision.cast(pa.int32())], schema=file_schema)


@dataclass(frozen=True)
class Period:
    release: str
    start: int  # ms

    def as_json(self) -> list:
        return [self.release, self.start]


def _export(site: Path, release: str, model: str) -> pa.Table | None:
    """Return a model's rows as `release` exported them (its Parquet export; a release built before there was one:
    its JSON Lines export, typed the same way); None where the release has no such model."""
    folder = site / RELEASES / release
    typed = folder / locations.export("parquet", model).file
    if typed.is_file():
        return pq.read_table(typed, memory_map=True, pre_buffer=False)
    lines = folder / locations.export("jsonl", model).file
    if not lines.is_file():
        return None
    rows = [tuple(row.get(column) for column in HEADER) for row in map(json.loads, lines.read_text().splitlines())]
    return parquet.table(rows, parquet.schema(COLUMNS, release, parquet.rows_of(model)))


def _same_export(site: Path, before: str | None, after: str, model: str) -> bool:
    """Return whether a model's export is the same in two releases: its JSON Lines file, one file hard-linked
    where a build found it unchanged, else compared byte for byte (no manifest read: a release of 100
    custom models lists 238,000 files); False where either release has none."""
    if before is None:
        return False
    first, second = (site / RELEASES / release / locations.export("jsonl", model).file
                     for release in (before, after))
    try:
        return first.samefile(second) or filecmp.cmp(first, second, shallow=False)
    except FileNotFoundError:
        return False


def _open_rows(path: Path) -> bool:
    """Return whether a model's panel holds a row still published (its `known_until` column alone read)."""
    return path.is_file() and pq.read_table(path, columns=["known_until"]).column(0).null_count > 0


def _models(site: Path, release: str) -> dict[str, bool]:
    """Return the models a release answers, each with whether it is custom (its routing)."""
    return dict(read_routing(site / RELEASES / release)["models"])


def _fingerprint(table: pa.Table) -> pa.Array:
    """Return each row's export columns as one string, a null apart from any text: rows compare whole."""
    parts = []
    for name in HEADER:
        column = table.column(name)
        if pa.types.is_map(column.type):  # no cast to text: written out (components are rare)
            text = pa.array([None if v is None else repr(v) for v in column.to_pylist()], pa.string())
        elif pa.types.is_dictionary(column.type):
            text = pc.cast(pc.dictionary_decode(column), pa.string())
        else:
            text = pc.cast(column, pa.string())
        parts.append(pc.fill_null(text, "\x00"))
    return pc.binary_join_element_wise(*parts, "\x1f")


def _changed(before: pa.Table, after: pa.Table) -> pa.ChunkedArray:
    """Return where two exports of as many rows may differ, row by row: a superset (a row with components, or a
    NaN, counts as changed; rows found equal whole after all stay as they are), at a column compare's cost."""
    differs = []
    for name in HEADER:
        a, b = before.column(name), after.column(name)
        if pa.types.is_map(a.type):  # no compare of maps in Arrow; components are rare
            differs.append(pc.or_(pc.is_valid(a), pc.is_valid(b)))
            continue
        if pa.types.is_dictionary(a.type):  # two files' dictionaries differ: compare the values
            a, b = pc.dictionary_decode(a), pc.dictionary_decode(b)
        same = pc.or_(pc.fill_null(pc.equal(a, b), False), pc.and_(pc.is_null(a), pc.is_null(b)))
        differs.append(pc.invert(same))
    return functools.reduce(pc.or_, differs)


def _key(table: pa.Table) -> pa.Array:
    """Return a row's country and reference as one string: where a changed row's may be, before whole rows compare."""
    return pc.binary_join_element_wise(table.column("country_code"), table.column("reference"), "\x1f",
                                       null_handling="replace", null_replacement="\x00")


def _whole(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def _step_from(held: pa.Table, before: pa.Table, rows: pa.Table, at: int, file_schema: pa.Schema) -> pa.Table | None:
    """Return `_step` when the panel's open rows are `before`, the export of the release before (None where they
    are not, or its rows do not line up with `rows`): only the rows that differ between the two exports,
    row by row, are compared whole — an open row equal to a changed one of `before` and to none of `rows`
    closes, a changed row of `rows` equal to none of `before` opens. The same rows as `_step`'s (rows
    repeated whole within one export aside, which no export has: a row is a country's level, reference
    and date)."""
    is_open = pc.is_null(held.column("known_until"))
    if before.num_rows != rows.num_rows or pc.sum(is_open).as_py() != before.num_rows:
        return None
    differs = _changed(before, rows)
    old, new = before.filter(differs), rows.filter(differs)
    old_prints, new_prints = _fingerprint(old), _fingerprint(new)
    maybe = pc.and_(is_open, pc.is_in(_key(held), value_set=_key(old)))
    candidates = _fingerprint(held.filter(maybe))
    ends = pc.and_(pc.is_in(candidates, value_set=old_prints), pc.invert(pc.is_in(candidates, value_set=new_prints)))
    maybe, ends = _whole(maybe), _whole(ends)
    closing = pc.replace_with_mask(maybe, maybe, ends)  # a candidate closes if it ends; no other row does
    until = file_schema.get_field_index("known_until")
    held = held.set_column(until, file_schema.field("known_until"),
                           pc.if_else(closing, pa.scalar(at, INSTANT), held.column(until)))
    added = new.filter(pc.invert(pc.is_in(new_prints, value_set=old_prints)))
    return _sorted(pa.concat_tables([held.cast(file_schema), _opened(added, at, file_schema)]))


def _opened(rows: pa.Table, at: int, file_schema: pa.Schema) -> pa.Table:
    """Export rows as panel rows published from `at` on, still published."""
    columns = [rows.column(name).cast(file_schema.field(name).type) for name in HEADER]
    known = [_instants(at, rows.num_rows), pa.nulls(rows.num_rows, INSTANT)]
    return pa.Table.from_arrays([*columns, *known], schema=file_schema)


def _instants(at: int, count: int) -> pa.Array:
    """`count` times the instant `at` (ms), made in Arrow (no list of Python ints)."""
    return pa.repeat(pa.scalar(at, INSTANT), count)


def _step(held: pa.Table | None, rows: pa.Table | None, at: int, file_schema: pa.Schema) -> pa.Table:
    """Return one model's panel after a switch at `at` to a release answering `rows` (None: not the model): the
    open rows it does not answer closed at `at`, the rows it adds opened at `at`."""
    if held is None or held.num_rows == 0:  # nothing to close: the release's rows, in the export's order
        return file_schema.empty_table() if rows is None else _sorted(_opened(rows, at, file_schema))
    is_open = pc.is_null(held.column("known_until"))
    closed, still = held.filter(pc.invert(is_open)), held.filter(is_open)
    answered = _fingerprint(rows) if rows is not None else pa.array([], pa.string())
    held_prints = _fingerprint(still)
    stays = pc.is_in(held_prints, value_set=answered)
    ending = still.filter(pc.invert(stays))
    ending = ending.set_column(ending.schema.get_field_index("known_until"), file_schema.field("known_until"),
                               _instants(at, ending.num_rows))
    staying = still.filter(stays)
    parts = [closed, staying, ending]
    if rows is not None and rows.num_rows:
        parts.append(_opened(rows.filter(pc.invert(pc.is_in(answered, value_set=held_prints.filter(stays)))), at,
                             file_schema))
    return _sorted(pa.concat_tables([part.cast(file_schema) for part in parts]))


def _sorted(table: pa.Table) -> pa.Table:
    """Return a model's rows in SORTED_BY's order (a stable sort: rows equal in it keep the export's order),
    whatever made them; by the keys after `model`, which is the same in every row (a fifth of the time)."""
    return table.sort_by([(name, "ascending") for name in SORTED_BY[1:]])


def _write(path: Path, table: pa.Table) -> None:
    """Write a panel file, replaced whole: row groups of ROW_GROUP_ROWS in its order."""
    temporary = path.with_name(path.name + ".tmp")
    with naming(temporary), parquet.writer(temporary, table.schema) as out:
        out.write_table(table, row_group_size=parquet.ROW_GROUP_ROWS)
    _put_in_place(temporary, path)


def _put_in_place(temporary: Path, path: Path) -> None:
    """Rename a panel file written whole at `temporary` over `path`, readable by nginx's workers (it is
    served as it is: linked into a server's timeline)."""
    os.chmod(temporary, 0o644)
    temporary.replace(path)


def update_panel(site: Path, live: Sequence[LivePeriod] | None = None) -> bool:
    """Bring site/panel/ up to the catalogue's live periods (`live`, where the caller has them); whether
    anything changed. The releases of the new periods are read from disk: it is called before a prune and
    wherever a server's configuration is made.

    Safe to stop at any point: a model's file is replaced whole, the state names the periods applied to
    every model after each period (a period applied again to a model that has it changes nothing: its
    rows are those open), and the public models' file is joined again until the state says it was."""
    periods = [Period(p.release, p.start) for p in (read_history(site).periods if live is None else live)]
    folder = site / PANEL
    folder.mkdir(exist_ok=True)
    with open(folder / ".lock", "a+") as lock, _arrow_threads(UPDATE_THREADS):
        fcntl.flock(lock, fcntl.LOCK_EX)  # one writer (a build's prune, a promote, a server's render)
        state_file = folder / STATE
        state = json.loads(state_file.read_text()) if state_file.is_file() else {}
        held = [Period(*p) for p in state.get("periods", [])]
        models: dict[str, bool] = dict(state.get("models", {}))  # every model the panel holds → custom
        if held != periods[:len(held)]:  # the catalogue tells another history: make it again
            held, models = [], {}
            shutil.rmtree(folder / MODELS, ignore_errors=True)
        (folder / MODELS).mkdir(exist_ok=True)
        new = periods[len(held):]
        if not new and state.get("joined") and state.get("format") == FORMAT:
            return False

        def remember(applied: list[Period], joined: bool) -> None:
            write_atomic(state_file, json.dumps({"periods": [p.as_json() for p in applied], "models": models,
                                                 "joined": joined, "format": FORMAT}).encode())
        rewritten: set[str] = set()
        if state.get("format") != FORMAT and held:  # a panel of before the vintage: each model's gains it
            rewritten |= _add_vintage(site, models, {p.start: p.release for p in held})
            remember(held, joined=False)
        last = held[-1].release if held else None
        for period in new:
            if (site / RELEASES / period.release).is_dir():  # else pruned before the panel caught up: unread
                opened_by = {p.start: p.release for p in (*held, period)}
                rewritten |= _apply(site, period, last, models, opened_by)
            last = period.release
            held.append(period)
            remember(held, joined=False)
        public = [m for m, custom in sorted(models.items()) if not custom]
        if rewritten & set(public) or not state.get("joined") or not (folder / f"{PUBLIC}.parquet").is_file():
            joined = folder / f"{PUBLIC}.parquet.tmp"
            parquet.join(joined, [path for path in (_model_file(site, m) for m in public) if path.is_file()],
                         schema(parquet.rows_of(None)))
            _put_in_place(joined, folder / f"{PUBLIC}.parquet")
        remember(held, joined=True)
        return True


# The files are read a column per thread, and models stepped a thread each: the update runs after a
# build (a promote, a server's configuration), when the cores are free; a build's processes use one each
UPDATE_THREADS = min(2, os.cpu_count() or 1)


@contextlib.contextmanager
def _arrow_threads(count: int) -> Iterator[None]:
    """Set Arrow's thread pool to `count` threads for a while, then as it was."""
    before = pa.cpu_count()
    pa.set_cpu_count(count)
    try:
        yield
    finally:
        pa.set_cpu_count(before)


def _add_vintage(site: Path, models: dict[str, bool], opened_by: dict[int, str]) -> set[str]:
    """Write again, with its vintage, each model's panel written before there was one (`opened_by`: the start
    of every live period applied → its release). The models rewritten."""
    rewritten = set()
    for model in models:
        path = _model_file(site, model)
        if path.is_file():
            file_schema = schema(parquet.rows_of(model))
            _write(path, with_vintage(_read_stepped(path, file_schema), opened_by, file_schema))
            rewritten.add(model)
    return rewritten


def _read_stepped(path: Path, file_schema: pa.Schema) -> pa.Table:
    """Return a model's panel as a switch steps it: its vintage left out (worked out again once stepped)."""
    held = pq.read_table(path, memory_map=True, pre_buffer=False)
    return held.select([name for name in held.column_names if name not in dict(VINTAGE)])


def _apply(site: Path, period: Period, last: str | None, models: dict[str, bool], opened_by: dict[int, str]
           ) -> set[str]:
    """Add one new live period, model by model: a model whose export is the release before's is left as it
    is (every row stays open; its vintage too); `models` learns the period's. `opened_by`: the start of
    every live period so far → its release. The models whose panel was rewritten."""
    answered = _models(site, period.release)
    models.update(answered)

    def due(model: str) -> bool:
        path = _model_file(site, model)
        if model in answered:
            return not (path.is_file() and _same_export(site, last, period.release, model))
        return _open_rows(path)  # gone: only while something of it is left to close

    def step(model: str) -> None:
        path = _model_file(site, model)
        written_schema = schema(parquet.rows_of(model))
        held = _read_stepped(path, written_schema) if path.is_file() else None
        rows = _export(site, period.release, model) if model in answered else None
        file_schema = _stepped_schema(parquet.rows_of(model))
        before = _export(site, last, model) if last and held is not None and rows is not None else None
        stepped = _step_from(held, before, rows, period.start, file_schema) if before is not None else None
        if stepped is None:
            stepped = _step(held, rows, period.start, file_schema)
        _write(path, with_vintage(stepped, opened_by, written_schema))
    rewritten = [model for model in models if due(model)]
    # models a thread each: Arrow lets go of the GIL while it reads, compares, sorts and writes
    with ThreadPoolExecutor(UPDATE_THREADS) as pool:
        list(pool.map(step, rewritten))
    return set(rewritten)


def _model_file(site: Path, model: str) -> Path:
    return site / PANEL / MODELS / f"{model}.parquet"


def panel_files(site: Path) -> tuple[Path | None, dict[str, Path]]:
    """Return the public models' panel, and each model's by its code."""
    public = site / PANEL / f"{PUBLIC}.parquet"
    return (public if public.is_file() else None,
            {path.stem: path for path in sorted((site / PANEL / MODELS).glob("*.parquet"))})
