"""Parquet files joined byte for byte (render/parquet.join over render/thrift_compact): the public models'
export and panel are their models' row groups copied under a new footer. Read back by pyarrow, polars and
DuckDB as the rows of the parts in order, with the joined file's metadata, statistics and page indexes."""
from __future__ import annotations

import datetime
import hashlib

import duckdb
import orjson
import polars
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from generator.building.render import parquet, thrift_compact
from generator.building.render.exports import COLUMNS, HEADER


def test_a_struct_is_written_and_read_as_the_compact_protocol_says():
    # worked by hand: field 1 (i32 3): header 0x15 (delta 1, type 5), zigzag 3 = 6; field 2 (binary "ab"):
    # 0x18, length 2, the bytes; field 20 (i64 -1): delta 18 > 15, so type alone (0x06), then the id as a
    # zigzag varint (40 = 0x28), then zigzag -1 = 1; field 21 (bool true): 0x11 (delta 1, type TRUE);
    # field 22 (list of three i32 300, 0, -2): 0x19, then 0x35 (3 items, type 5), 300 → 600 = 0xd8 0x04,
    # 0 → 0, -2 → 3; the stop 0x00
    written = thrift_compact.Struct({
        1: (thrift_compact.I32, 3), 2: (thrift_compact.BINARY, b"ab"), 20: (thrift_compact.I64, -1),
        21: (thrift_compact.TRUE, True),
        22: (thrift_compact.LIST, thrift_compact.Sequence(thrift_compact.I32, [300, 0, -2]))})
    encoded = bytes([0x15, 0x06, 0x18, 0x02]) + b"ab" + bytes([0x06, 0x28, 0x01, 0x11, 0x19, 0x35, 0xD8, 0x04,
                                                               0x00, 0x03, 0x00])
    assert thrift_compact.encode(written) == encoded
    assert thrift_compact.decode(encoded) == written
    # fields a shape names kept as their value's bytes (after each field's header), skipped to their end;
    # a bool has none, and is read; written back byte for byte
    raw = thrift_compact.RAW
    kept = thrift_compact.decode(encoded, {2: raw, 20: raw, 21: raw, 22: raw})
    assert kept.fields == {1: (thrift_compact.I32, 3), 2: (thrift_compact.BINARY, thrift_compact.Raw(b"\x02ab")),
                           20: (thrift_compact.I64, thrift_compact.Raw(b"\x01")), 21: (thrift_compact.TRUE, True),
                           22: (thrift_compact.LIST, thrift_compact.Raw(bytes([0x35, 0xD8, 0x04, 0x00, 0x03])))}
    assert thrift_compact.encode(kept) == encoded


def rows(model: str, countries: list[str]) -> list[tuple]:
    """Export rows for a model: each country a model row and an indicator row (with components for one)."""
    made = []
    for rank, country in enumerate(countries, 1):
        values = {"model": model, "country_code": country, "level": "model", "reference": model,
                  "date": "2024-12-31", "type": "actual", "score": 50.0 + rank, "risk_class": "medium",
                  "risk_class_numeric": 2, "country_rank": rank, "country_universe": len(countries)}
        made.append(tuple(values.get(name) for name in HEADER))
        indicator = dict(values, level="indicator", reference="gdp_growth", raw_value=1.5 * rank,
                         raw_components={"real": "1.5"} if rank == 2 else None)
        made.append(tuple(indicator.get(name) for name in HEADER))
    return made


def lines(made: list[tuple]) -> bytes:
    """Return rows as the JSON Lines export writes them (what a row group's digest is of): no null fields."""
    return b"".join(orjson.dumps({k: v for k, v in zip(HEADER, row) if v is not None}) + b"\n" for row in made)


def write(path, model: str, groups: list[list[str]], release: str = "R1", earlier=None, changed=()):
    """Return a model's file as a build writes it, a group per list of countries (as ROW_GROUP_ROWS would close
    them); the countries in `changed` with other scores."""
    typed = parquet.ParquetRows(path, parquet.schema(COLUMNS, release, f"the model {model}"), earlier)
    for countries in groups:
        made = [row if row[1] not in changed else (*row[:6], row[6] + 0.5, *row[7:]) for row in rows(model, countries)]
        typed.add(made, lines(made))
        typed._flush()
    typed.close()
    return path


@pytest.fixture
def parts(tmp_path):
    """Return three models' files as a build writes them: two row groups in the first."""
    made = []
    for model, groups in (("aml", [["AUT", "CIV"], ["NGA"]]), ("esg", [["AUT", "NGA"]]), ("sdg", [["CIV"]])):
        made.append(write(tmp_path / f"{model}.parquet", model, groups))
    return made


def test_a_footer_and_a_page_index_are_read_and_written_back_byte_for_byte(parts):
    data = parts[0].read_bytes()
    size = int.from_bytes(data[-8:-4], "little")
    footer = data[-8 - size:-8]
    meta = thrift_compact.decode(footer)
    assert thrift_compact.encode(meta) == footer
    # read as a join reads it: the columns, statistics and the like kept as their bytes, written back the same
    shaped = thrift_compact.decode(footer, parquet.FOOTER_SHAPE)
    assert thrift_compact.encode(shaped) == footer
    assert isinstance(shaped.get(2), thrift_compact.Raw) and shaped.get(3) == meta.get(3)
    statistics = shaped.get(4).items[0].get(1).items[6].get(3).get(12)  # the first group's score statistics
    assert statistics == thrift_compact.Raw(thrift_compact.encode(meta.get(4).items[0].get(1).items[6].get(3).get(12)))
    assert meta.get(3) == 6 and len(meta.get(4).items) == 2  # FileMetaData: rows, row groups
    chunk = meta.get(4).items[1].get(1).items[0]  # the second group's first column chunk
    at, length = chunk.get(4), chunk.get(5)  # its offset index
    index = thrift_compact.decode(data[at:at + length])
    assert thrift_compact.encode(index) == data[at:at + length]
    # its first page location: the chunk's first data page (an offset index lists data pages, not the
    # dictionary page before them)
    assert index.get(1).items[0].get(1) == chunk.get(3).get(9) > (chunk.get(3).get(11) or 0)


def test_joined_files_hold_the_parts_rows_in_order_with_the_joined_files_metadata(parts, tmp_path):
    target = tmp_path / "public.parquet"
    file_schema = parquet.schema(COLUMNS, "R2", "the public models")
    parquet.join(target, parts, file_schema)
    read = pq.read_table(target)
    assert read.equals(pa.concat_tables([pq.read_table(part) for part in parts]))
    assert read.num_rows == 2 * 3 + 2 * 2 + 2 * 1
    assert read.schema.metadata[b"release"] == b"R2" and read.schema.metadata[b"rows"] == b"the public models"
    assert read.schema.field("score").metadata == file_schema.field("score").metadata
    assert read.column("raw_components").to_pylist()[3] == [("real", "1.5")]  # aml CIV's indicator row
    meta = pq.ParquetFile(target).metadata
    assert meta.num_row_groups == 4 and meta.row_group(3).num_rows == 2
    for group in range(4):  # each chunk's statistics and page index came along
        column = meta.row_group(group).column(1)
        assert column.statistics.has_min_max and column.has_offset_index and column.has_column_index
        assert meta.row_group(group).sorting_columns == meta.row_group(0).sorting_columns != ()
    footer = thrift_compact.decode(target.read_bytes()[-8 - meta.serialized_size:-8])
    for group in footer.get(4).items:  # each group's offset is its first chunk's first page, moved with it
        first = group.get(1).items[0].get(3)
        assert group.get(5) == (first.get(11) or first.get(9))
        assert group.get(7) in (None, footer.get(4).items.index(group))  # its ordinal, where written
    # a reader skipping by model and country finds the rows; pages are found by the moved offsets
    only = pq.read_table(target, filters=[("model", "=", "esg"), ("country_code", "=", "NGA")], columns=["score"])
    assert only.column("score").to_pylist() == [52.0, 52.0]  # NGA is esg's 2nd country: 50 + 2, both its rows
    assert polars.read_parquet(target).shape == (12, len(HEADER))
    assert duckdb.sql(f"select model, count(*) from '{target}' group by model order by model").fetchall() == [
        ("aml", 6), ("esg", 4), ("sdg", 2)]
    assert duckdb.sql(f"select min(date) from '{target}'").fetchall() == [(datetime.date(2024, 12, 31),)]


def test_no_parts_join_into_a_file_of_no_rows_and_other_columns_are_refused(parts, tmp_path):
    empty = tmp_path / "empty.parquet"
    parquet.join(empty, [], parquet.schema(COLUMNS, "R2", "the public models"))
    assert pq.read_table(empty).num_rows == 0 and pq.read_schema(empty).metadata[b"release"] == b"R2"
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"model": ["aml"]}), other)
    with pytest.raises(ValueError, match="other.parquet: not written with the columns"):
        parquet.join(tmp_path / "joined.parquet", [parts[0], other], parquet.schema(COLUMNS, "R2", "x"))
    # a bloom filter sits between the chunks and the footer, where a join does not look: refused, not lost
    filtered = tmp_path / "filtered.parquet"
    file_schema = parquet.schema(COLUMNS, "R1", "the model aml")
    with pq.ParquetWriter(filtered, file_schema, bloom_filter_options={"country_code": {"ndv": 10, "fpp": 0.05}}) as out:
        out.write_table(parquet.table(rows("aml", ["AUT"]), file_schema))
    with pytest.raises(ValueError, match="filtered.parquet: bloom filters and encryption are not joined"):
        parquet.join(tmp_path / "joined.parquet", [filtered], file_schema)


def chunk_bytes(path, group: int) -> list[bytes]:
    """Return the bytes of a row group's column chunks, each from its first page for its compressed size."""
    meta, data = pq.ParquetFile(path).metadata.row_group(group), path.read_bytes()
    spans = [(c.dictionary_page_offset or c.data_page_offset, c.total_compressed_size)
             for c in (meta.column(i) for i in range(meta.num_columns))]
    return [data[start:start + size] for start, size in spans]


def test_a_row_group_whose_rows_did_not_change_is_copied_from_the_earlier_file_not_encoded_again(tmp_path, monkeypatch):
    # the earlier file is snappy-compressed: a group copied from it keeps snappy, one encoded again is zstd
    monkeypatch.setattr(parquet, "COMPRESSION", "snappy")
    earlier = write(tmp_path / "R1.parquet", "aml", [["AUT", "CIV"], ["NGA"], ["ZAF"]])
    monkeypatch.setattr(parquet, "COMPRESSION", "zstd")
    later = write(tmp_path / "R2.parquet", "aml", [["AUT", "CIV"], ["NGA"], ["ZAF"]], "R2", earlier, {"NGA"})
    fresh = write(tmp_path / "fresh.parquet", "aml", [["AUT", "CIV"], ["NGA"], ["ZAF"]], "R2", None, {"NGA"})
    meta = pq.ParquetFile(later).metadata
    assert [meta.row_group(g).column(0).compression for g in range(3)] == ["SNAPPY", "ZSTD", "SNAPPY"]
    assert chunk_bytes(later, 0) == chunk_bytes(earlier, 0) and chunk_bytes(later, 2) == chunk_bytes(earlier, 2)
    assert chunk_bytes(later, 1) == chunk_bytes(fresh, 1) != chunk_bytes(earlier, 1)
    # the same rows, metadata, statistics and page indexes as the file written from scratch
    assert pq.read_table(later).equals(pq.read_table(fresh))
    assert pq.read_metadata(later).metadata == pq.read_metadata(fresh).metadata  # Arrow's schema included
    digests = pq.read_metadata(later).metadata[parquet.GROUP_DIGESTS.encode()].decode().split(",")
    changed = [(*row[:6], row[6] + 0.5, *row[7:]) for row in rows("aml", ["NGA"])]
    assert digests == [hashlib.sha256(lines(made)).hexdigest()
                       for made in (rows("aml", ["AUT", "CIV"]), changed, rows("aml", ["ZAF"]))]
    for group in range(3):
        column = meta.row_group(group).column(6)  # score
        assert column.statistics.has_min_max and column.has_offset_index and column.has_column_index
    only = pq.read_table(later, filters=[("country_code", "=", "NGA")], columns=["score"])
    assert only.column("score").to_pylist() == [51.5, 51.5]  # NGA, the 1st of its group: 50 + 1, changed by 0.5
    assert duckdb.sql(f"select count(*) from '{later}' where country_code = 'ZAF'").fetchall() == [(2,)]
    assert not later.with_name(later.name + ".new").exists()  # the new groups' own file: joined and gone


def test_nothing_is_copied_from_an_earlier_file_of_other_columns_or_without_digests(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet, "COMPRESSION", "snappy")
    plain = tmp_path / "plain.parquet"  # an export written before there were digests
    file_schema = parquet.schema(COLUMNS, "R1", "the model aml")
    pq.write_table(parquet.table(rows("aml", ["AUT"]), file_schema), plain, compression="snappy")
    other = write(tmp_path / "other.parquet", "aml", [["AUT"]])
    other_schema = pa.schema([f.with_type(pa.float32()) if f.name == "weight" else f for f in file_schema])
    pq.write_table(pq.read_table(other).cast(other_schema).replace_schema_metadata(
        pq.read_schema(other).metadata), tmp_path / "typed-otherwise.parquet", compression="snappy")
    monkeypatch.setattr(parquet, "COMPRESSION", "zstd")
    for earlier in (plain, tmp_path / "typed-otherwise.parquet", tmp_path / "missing.parquet"):
        later = write(tmp_path / "later.parquet", "aml", [["AUT"]], "R2", earlier)
        assert pq.ParquetFile(later).metadata.row_group(0).column(0).compression == "ZSTD", earlier
        assert pq.read_table(later).equals(pq.read_table(other))
