"""The Parquet exports: the rows and columns of the JSON Lines export, typed, described and naming
their release, sorted so a reader skips by model and country; served as bytes (never compressed again, no
charset) by nginx, the Worker and CloudFront's harness alike (tests/fixtures/tiny; alice holds acme_aml,
bob holds nothing)."""
from __future__ import annotations

import datetime
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from generator.building.render import parquet
from generator.building.render.exports import COLUMNS
from generator.contract import routes
from generator.history.catalogue import read_history
from generator.history.site import CURRENT, RELEASES
from generator.publish.build_release import build

from ..conftest import SERVERS, TINY, replace_in
from ..fault_checks import then_stage_promote_rollback
from ..live import RangeReader
from ..switch.test_panel import GDP_AUT_2024

API = routes.API
PARQUET = "application/vnd.apache.parquet"


SERVED_BY = SERVERS  # every test taking `live` runs on nginx, the Worker and CloudFront (conftest.py)


def as_exported(line: dict) -> dict:
    """Return a JSON Lines row as the Parquet export holds it: every column (None where the line leaves one out),
    the raw value as text (written as the CSV writes a number), the components' values as text too."""
    def text(value):
        return value if value is None or isinstance(value, str) else repr(value)
    row = {name: line.get(name) for name, _ in COLUMNS}
    row["raw_value"] = text(row["raw_value"])
    if row["raw_components"] is not None:
        row["raw_components"] = [(k, text(v)) for k, v in row["raw_components"].items()]
    return row


def read(body: bytes) -> pa.Table:
    return pq.read_table(pa.BufferReader(body))


@pytest.mark.parametrize("export", ["", "sovereign/", "acme_aml/"])
def test_a_parquet_export_holds_the_json_lines_rows_typed_described_and_naming_its_release(live, export):
    answer = live.get(f"{API}/exports/{export}scores.parquet", user="alice")
    assert answer.status == 200, answer.body
    assert answer.header("Content-Type") == PARQUET  # bytes: no charset
    release = answer.header("X-Release")
    model = export.rstrip("/")
    assert answer.header("Content-Disposition") == (
        f'attachment; filename="country-risk-scores-{model + "-" if model else ""}{release}.parquet"')
    table = read(answer.body)
    lines = live.get(f"{API}/exports/{export}scores.jsonl", user="alice").body.decode().splitlines()
    rows = table.to_pylist()
    assert len(rows) == len(lines) > 0
    # as docs/api.md says: an empty cell is a field left out, but for the key's `reference`, "" on a model row
    for line in map(json.loads, lines):
        assert "" not in [value for name, value in line.items() if name != "reference"]
        assert (line["reference"] == "") == (line["level"] == "model")
    for row, line in zip(rows, map(json.loads, lines)):
        row["date"] = row["date"].isoformat()  # a date, written as the JSON writes it
        assert row == as_exported(line)
    # the types a reader gets: the year's date, floats, small integers, categories as dictionaries
    types = {field.name: field.type for field in table.schema}
    assert types["date"] == pa.date32() and types["score"] == types["weight"] == pa.float64()
    assert types["risk_class_numeric"] == pa.int8() and types["country_rank"] == pa.int32()
    assert types["risk_class"] == types["level"] == pa.dictionary(pa.int32(), pa.string())
    assert types["model"] == types["country_code"] == pa.string()  # the sort keys: readers skip groups by them
    assert types["raw_components"] == pa.map_(pa.string(), pa.string())
    assert [(f.name, f.metadata[b"description"].decode()) for f in table.schema] == list(COLUMNS)
    metadata = table.schema.metadata
    assert metadata[b"release"] == release.encode()
    assert metadata[b"rows"] == (f"the model {model}" if model else "the public models").encode()
    # the public models' file holds theirs alone (alice's grant adds a file, not rows): sdg and sovereign
    assert {r["model"] for r in rows} == ({model} if model else {"sdg", "sovereign"})


def test_a_custom_models_parquet_export_is_not_found_without_the_grant(live):
    answer = live.get(f"{API}/exports/acme_aml/scores.parquet", user="bob")
    assert answer.status == 404 and json.loads(answer.body) == {"detail": "Not found."}
    assert answer.header("Content-Type") == "application/json; charset=utf-8"
    assert live.get(f"{API}/exports/scores.parquet", user=None).status == 403  # the key is checked first
    assert live.get(f"{API}/exports/sovereign/scores.parquet", user="bob").status == 200


def test_parquet_comes_as_it_is_whatever_the_client_accepts_and_in_ranges(live):
    whole = live.get(f"{API}/exports/scores.parquet", user="bob")
    assert whole.body[:4] == whole.body[-4:] == b"PAR1"  # Parquet's magic, first and last
    for accepted in ("gzip", "br", "br, gzip"):  # its pages are compressed already: never again on the wire
        answer = live.get(f"{API}/exports/scores.parquet", user="bob", headers={"Accept-Encoding": accepted})
        assert answer.header("Content-Encoding") is None and answer.body == whole.body, accepted
    # a reader's first two requests: the footer's length and magic, then the footer
    tail = live.get(f"{API}/exports/scores.parquet", user="bob", headers={"Range": "bytes=-8"})
    assert tail.status == 206 and tail.body == whole.body[-8:]
    footer = int.from_bytes(tail.body[:4], "little")
    size = len(whole.body)
    asked = f"bytes={size - 8 - footer}-{size - 9}"
    meta = live.get(f"{API}/exports/scores.parquet", user="bob", headers={"Range": asked})
    assert meta.status == 206 and meta.header("Content-Range") == f"bytes {size - 8 - footer}-{size - 9}/{size}"
    assert meta.body == whole.body[size - 8 - footer:size - 8]


def test_row_groups_end_between_countries_and_are_sorted_by_model_and_country(tmp_path, monkeypatch):
    # groups of at least 40 rows: the tiny fixture's models have 3 countries of 20 to 40 rows each, so a
    # model's rows make more than one group, and no country's rows are split between two
    monkeypatch.setattr(parquet, "ROW_GROUP_ROWS", 40)
    build(TINY, tmp_path / "site", jobs=1)
    source = pq.ParquetFile(tmp_path / "site" / CURRENT / "api/v1/exports/scores.parquet")
    meta = source.metadata
    keys = [(r["model"], r["country_code"]) for r in source.read(columns=["model", "country_code"]).to_pylist()]
    assert keys == sorted(keys)
    groups = [source.read_row_group(i, columns=["model", "country_code"]).to_pylist() for i in range(meta.num_row_groups)]
    assert meta.num_row_groups > 2  # two public models, each in more than one group
    seen: dict[tuple[str, str], int] = {}
    for index, group in enumerate(groups):
        for row in group:
            assert seen.setdefault((row["model"], row["country_code"]), index) == index  # one group per country
        statistics = meta.row_group(index).column(1).statistics  # a reader skips a group by these
        codes = [row["country_code"] for row in group]
        assert (statistics.min, statistics.max) == (min(codes), max(codes))
        assert [c.column_index for c in meta.row_group(index).sorting_columns] == [0, 1]  # model, country_code
    assert source.schema_arrow.metadata[b"sorted_by"] == b"model,country_code"


def exported(release_folder) -> dict[str, Path]:
    """Return a release's Parquet exports by their path in it."""
    return {str(p.relative_to(release_folder)): p for p in sorted(release_folder.rglob("*.parquet"))}


def groups_copied(path, earlier) -> list[bool]:
    """Tell, of each row group of an export, whether it is the earlier file's group of the same rows (by the
    digests both name); asserted by compression: the earlier one snappy, what is encoded again zstd."""
    before = pq.read_metadata(earlier).metadata[parquet.GROUP_DIGESTS.encode()].decode().split(",")
    meta = pq.read_metadata(path)
    copied = [digest in before for digest in meta.metadata[parquet.GROUP_DIGESTS.encode()].decode().split(",")]
    assert [meta.row_group(g).column(0).compression for g in range(meta.num_row_groups)] == [
        "SNAPPY" if c else "ZSTD" for c in copied]
    return copied


def test_a_rebuild_copies_the_row_groups_whose_rows_did_not_change_and_publishes_what_a_fresh_build_does(
        data_copy, tmp_path, monkeypatch):
    monkeypatch.setattr(parquet, "ROW_GROUP_ROWS", 40)  # each model's rows in groups of a country or two
    monkeypatch.setattr(parquet, "COMPRESSION", "snappy")  # the first release's groups: snappy
    site = tmp_path / "site"
    first = site / RELEASES / build(data_copy, site, jobs=1).release
    monkeypatch.setattr(parquet, "COMPRESSION", "zstd")  # what is encoded from here on: zstd
    replace_in(data_copy / "observations" / "sovereign.csv", *GDP_AUT_2024)
    second = site / RELEASES / build(data_copy, site, jobs=2).release  # models built in worker processes
    fresh = tmp_path / "fresh"
    expected = exported(fresh / RELEASES / build(data_copy, fresh, jobs=1).release)
    published = exported(second)
    assert published.keys() == expected.keys() and len(published) == 4  # the public export and 3 models'
    for path, file in published.items():  # the same rows and metadata as a build from nothing
        assert pq.read_table(file).equals(pq.read_table(expected[path])), path
        ours, theirs = (pq.read_metadata(f).metadata for f in (file, expected[path]))
        assert ours.get(parquet.GROUP_DIGESTS.encode()) == theirs.get(parquet.GROUP_DIGESTS.encode()), path
        assert pq.read_schema(file).metadata == {**pq.read_schema(expected[path]).metadata,
                                                 b"release": second.name.encode()}, path
    own = {model: f"api/v1/exports/{model}/scores.parquet" for model in ("sovereign", "sdg", "acme_aml")}
    assert all(groups_copied(second / own[m], first / own[m]) for m in ("sdg", "acme_aml"))  # unchanged
    sovereign = groups_copied(second / own["sovereign"], first / own["sovereign"])
    assert True in sovereign and False in sovereign  # AUT's group encoded again, another copied
    # a fault: the live release's sovereign export edited on disk (a byte of its first page): the next build
    # copies nothing from a file whose bytes are not its manifest's, and publishes what a fresh build does
    damaged = second / own["sovereign"]
    data = bytearray(damaged.read_bytes())
    data[8] ^= 0xFF
    damaged.write_bytes(bytes(data))
    third = site / RELEASES / build(data_copy, site, force=True, jobs=2).release
    meta = pq.read_metadata(third / own["sovereign"])
    assert {meta.row_group(g).column(0).compression for g in range(meta.num_row_groups)} == {"ZSTD"}
    assert pq.read_table(third / own["sovereign"]).equals(pq.read_table(expected[own["sovereign"]]))
    assert all(groups_copied(third / own[m], first / own[m]) for m in ("sdg", "acme_aml"))  # still copied
    then_stage_promote_rollback(site, data_copy)


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_a_reader_of_one_models_two_columns_fetches_the_footer_and_their_chunks_alone(demo_server):
    # pyarrow reading over HTTP as fsspec does (a Range request a read): the file's end (the footer), then
    # for the row groups whose statistics say `sovereign`, the pages of the two columns asked and of
    # `model` (the filter's) — nothing of the other models' groups, nor of the 15 other columns
    path = f"{API}/exports/scores.parquet"
    whole = demo_server.get(path, user="bob").body
    reader = RangeReader(lambda p, headers: demo_server.get(p, user="bob", headers=headers), path, len(whole))
    table = pq.read_table(pa.PythonFile(reader, mode="r"), columns=["country_code", "score"],
                          filters=[("model", "=", "sovereign")], pre_buffer=False)
    expected = [row for row in read(whole).to_pylist() if row["model"] == "sovereign"]
    assert table.to_pylist() == [{"country_code": r["country_code"], "score": r["score"]} for r in expected]
    meta = pq.ParquetFile(pa.BufferReader(whole)).metadata
    footer_starts = len(whole) - 8 - int.from_bytes(whole[-8:-4], "little")

    def span(group: int, column: int) -> tuple[int, int]:
        chunk = meta.row_group(group).column(column)
        start = chunk.dictionary_page_offset or chunk.data_page_offset
        return start, start + chunk.total_compressed_size

    groups = [g for g in range(meta.num_row_groups) if meta.row_group(g).column(0).statistics.min == "sovereign"]
    allowed = [span(g, c) for g in groups for c in (1, 6, 0)]  # country_code, score and model of sovereign's
    for start, size in reader.fetched:
        assert start + size == len(whole) and start <= footer_starts or any(
            low <= start and start + size <= high for low, high in allowed), (start, size)  # the footer, or those
    assert all(any(low <= start < high for start, _ in reader.fetched) for low, high in allowed[:2 * len(groups)])
    fetched = sum(size for _, size in reader.fetched)
    assert fetched <= len(whole) // 4  # the measure: at most a quarter of the file
    # polars, given the file (its own HTTP reader sends no header: pola-rs/polars#17197), reads it through
    # pyarrow the same way: the same rows, a quarter of the file at most
    import polars
    reader = RangeReader(lambda p, headers: demo_server.get(p, user="bob", headers=headers), path, len(whole))
    frame = polars.read_parquet(reader, columns=["country_code", "score"], use_pyarrow=True,
                                pyarrow_options={"filters": [("model", "=", "sovereign")], "pre_buffer": False})
    assert frame.to_dicts() == table.to_pylist()
    assert sum(size for _, size in reader.fetched) <= len(whole) // 4


def test_the_point_in_time_panel_is_served_by_every_server_as_the_list_of_releases_is(live):
    # the tiny site has had one release live: the panel is its export's rows, each published since its switch
    answer = live.get(f"{API}/exports/history.parquet", user="bob")
    assert answer.status == 200 and answer.header("Content-Type") == PARQUET
    panel = read(answer.body)
    export = read(live.get(f"{API}/exports/scores.parquet", user="bob").body)
    (period,) = read_history(live.site).periods
    since = datetime.datetime.fromtimestamp(period.start / 1000, datetime.timezone.utc)
    def rows(table):  # in one order (the panel's is by model, country, reference, date)
        return sorted(table.to_pylist(), key=lambda row: json.dumps(row, default=str, sort_keys=True))
    assert rows(panel.drop_columns(["known_from", "known_until", "first_release", "revision"])) == rows(export)
    assert set(panel.column("known_from").to_pylist()) == {since} and set(panel.column("known_until").to_pylist()) == {None}
    assert set(panel.column("first_release").to_pylist()) == {period.release}  # each value's first publication
    assert set(panel.column("revision").to_pylist()) == {0}
    assert read(live.get(f"{API}/exports/acme_aml/history.parquet", user="alice").body).num_rows > 0
    refused = live.get(f"{API}/exports/acme_aml/history.parquet", user="bob")  # a custom model's: its grant
    assert refused.status == 404 and json.loads(refused.body) == {"detail": "Not found."}
    assert live.get(f"{API}/exports/history.parquet", user=None).status == 403
    scoped = live.get(f"{API}/releases/{period.release}/exports/history.parquet", user="bob")
    assert scoped.status == 404  # no release holds the panel


def test_pyarrow_reads_a_model_of_the_panel_and_the_export_over_http_with_fsspec_and_the_key_in_a_header(live):
    # fsspec's HTTP file system as a client sets it up: the key in a header, Range requests for its blocks
    import fsspec
    import polars
    fs = fsspec.filesystem("http", headers={"Authorization": f"apikey bob:{live.keys['bob']}"}, skip_instance_cache=True)
    for name in ("scores", "history"):
        url = f"http://127.0.0.1:{live.port}{API}/exports/{name}.parquet"
        with fs.open(url, block_size=4096, cache_type="readahead") as remote:
            table = pq.read_table(remote, columns=["country_code", "score"], filters=[("model", "=", "sovereign")])
        whole = read(live.get(f"{API}/exports/{name}.parquet", user="bob").body)
        expected = whole.filter(pc.equal(whole.column("model"), "sovereign")).select(["country_code", "score"])
        assert table.num_rows > 0 and table.to_pylist() == expected.to_pylist(), name
        with fs.open(url, block_size=4096, cache_type="readahead") as remote:  # polars, as docs/api.md shows
            frame = polars.read_parquet(remote, columns=["country_code", "score"], use_pyarrow=True,
                                        pyarrow_options={"filters": [("model", "=", "sovereign")]})
        assert frame.to_dicts() == expected.to_pylist(), name
