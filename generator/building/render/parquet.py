"""The bulk exports as Apache Parquet: the rows and columns of the CSV export, typed — dates as dates,
scores and weights as floats, ranks and points as integers, categories dictionary-encoded (a reader's
categoricals; the model and country codes, by which rows are sorted, plain strings), empty cells as
nulls — each column described, and the release named in the file's metadata.

Written with pyarrow (the reference implementation of Arrow and Parquet, which pandas, polars and DuckDB
read the same way): a model's rows a row group at a time as its documents are rendered, so memory holds
one group, never the export. Rows come sorted by model and country (a model's documents are rendered
country by country, in code order), a group ends only between two countries, and every column chunk has
its statistics and page index: a reader asking for one model's or country's rows skips the others'
groups, and one asking for two columns fetches those columns' chunks alone (Range requests).

A raw value is a number for one indicator and a category for another, so `raw_value` is text, as the CSV
writes it (`-0.004`, `Tier 1 or 2`); `raw_components` maps each component's name to its value, as text."""
from __future__ import annotations

import contextlib
import gc
import hashlib
import io
from operator import itemgetter
from pathlib import Path
from typing import Any, BinaryIO, Iterator, Sequence

import pyarrow as pa
import pyarrow.compute  # noqa: F401 (casts load it: here, once, before a build's workers fork)
import pyarrow.parquet as pq

from ...system.files import naming
from . import thrift_compact


# Field ids of the Thrift structs a join reads, as apache/parquet-format's parquet.thrift numbers them.
class FileMetaData:
    SCHEMA, NUM_ROWS, ROW_GROUPS, KEY_VALUE_METADATA, COLUMN_ORDERS = 2, 3, 4, 5, 7


class RowGroup:
    COLUMNS, NUM_ROWS, SORTING_COLUMNS, FILE_OFFSET, ORDINAL = 1, 3, 4, 5, 7


class ColumnChunk:
    FILE_OFFSET, META_DATA = 2, 3
    OFFSET_INDEX_OFFSET, OFFSET_INDEX_LENGTH, COLUMN_INDEX_OFFSET, COLUMN_INDEX_LENGTH = 4, 5, 6, 7
    CRYPTO_METADATA, ENCRYPTED_COLUMN_METADATA = 8, 9


class ColumnMetaData:
    ENCODINGS, PATH_IN_SCHEMA, TOTAL_COMPRESSED_SIZE, KEY_VALUE_METADATA = 2, 3, 7, 8
    DATA_PAGE_OFFSET, INDEX_PAGE_OFFSET, DICTIONARY_PAGE_OFFSET = 9, 10, 11
    STATISTICS, ENCODING_STATS, BLOOM_FILTER_OFFSET, SIZE_STATISTICS, GEOSPATIAL_STATISTICS = 12, 13, 14, 16, 17


class OffsetIndex:
    PAGE_LOCATIONS = 1
    UNENCODED_BYTE_ARRAY_DATA_BYTES = 2


class PageLocation:
    OFFSET = 1


# One model's file is written by one process a group at a time: Arrow's thread pools (a thread per core,
# eight for I/O, each with its stack) would only take address space a build under a memory limit needs.
pa.set_cpu_count(1)
pa.set_io_thread_count(1)

ROW_GROUP_ROWS = 16_384  # a group is closed at the first country boundary past this many rows
COMPRESSION = "zstd"  # read by every current Parquet reader; smaller than snappy at about its speed

_CATEGORY = pa.dictionary(pa.int32(), pa.string())
# the type of each export column (building/render/exports.py's COLUMNS, in order). The sort keys are plain strings
# (Parquet stores them dictionary-encoded all the same): pyarrow skips row groups by the statistics of a
# string column, not of a dictionary one (it read 29 % of the demo's file for one model's two columns)
TYPES = {
    "model": pa.string(), "country_code": pa.string(), "level": _CATEGORY, "reference": pa.string(),
    "date": pa.date32(), "type": _CATEGORY, "score": pa.float64(), "risk_class": _CATEGORY,
    "risk_class_numeric": pa.int8(), "country_rank": pa.int32(), "country_universe": pa.int32(),
    "risk_points": pa.int32(), "risk_points_max": pa.int32(), "weight": pa.float64(), "rating_letter": _CATEGORY,
    "data_quality": _CATEGORY, "raw_value": pa.string(), "raw_components": pa.map_(pa.string(), pa.string()),
}
SORTED_BY = ("model", "country_code")


def schema(columns: Sequence[tuple[str, str]], release: str, rows_of: str) -> pa.Schema:
    """Return the export's schema: each column typed and described; the release and whose rows in its metadata."""
    fields = [pa.field(name, TYPES[name], metadata={"description": description}) for name, description in columns]
    return pa.schema(fields, metadata={"release": release, "rows": rows_of,
                                       "sorted_by": ",".join(SORTED_BY)})


def rows_of(model: str | None) -> str:
    """Return whose rows a file holds, as its metadata says: one model's, or the public models' (None)."""
    return f"the model {model}" if model else "the public models"


def _text(value: Any) -> str | None:
    """Return a raw value as the CSV export writes it: text as it is, a number as Python writes it."""
    return value if value is None or isinstance(value, str) else repr(value)


def table(rows: Sequence[tuple], file_schema: pa.Schema) -> pa.Table:
    """Return rows (tuples in the columns' order; `raw_components` a dict or None) as a typed table."""
    arrays = []
    for index, field in enumerate(file_schema):
        # a column at a time by itemgetter: half the time of zip(*rows), which builds a tuple of every row
        column = list(map(itemgetter(index), rows))
        values: Sequence[Any] = column
        if field.name == "raw_value":  # inline: a call per row cost a tenth of the Parquet export
            values = [v if v is None or v.__class__ is str else repr(v) for v in column]
        elif field.name == "raw_components":
            values = [None if c is None else [(k, _text(v)) for k, v in c.items()] for c in column]
        if pa.types.is_dictionary(field.type):
            array = pa.array(values, field.type)  # built as a dictionary: 50× encoding a string array
        elif pa.types.is_date(field.type):
            array = pa.array(values, pa.string()).cast(field.type)
        else:
            array = pa.array(values, field.type)
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=file_schema)


def writer(path: Path | BinaryIO | pa.NativeFile, file_schema: pa.Schema) -> pq.ParquetWriter:
    return pq.ParquetWriter(path, file_schema, compression=COMPRESSION, write_page_index=True,
                            sorting_columns=[pq.SortingColumn(file_schema.get_field_index(c)) for c in SORTED_BY])


# The file's metadata key naming each row group's digest: SHA-256 of the group's rows as the JSON Lines
# export writes them, comma-separated in the groups' order. A later build carries a group whose rows hash
# the same over as its bytes (typing and encoding are most of a Parquet export's cost), and a reader can
# check a group against the JSON Lines rows it holds.
GROUP_DIGESTS = "row_groups_sha256"


class ParquetRows:
    """One model's Parquet export as its rows come, a document (a country) at a time: a row group closed
    whenever ROW_GROUP_ROWS are held, at a country's end. `previous`, the model's export in an earlier
    release: a group whose rows it holds (by digest) is copied from it, not typed and encoded again."""

    def __init__(self, path: Path, file_schema: pa.Schema, previous: Path | None = None):
        self.path, self.schema = path, file_schema
        self._rows: list[tuple] = []
        self._lines = hashlib.sha256()
        self._digests: list[str] = []
        self._previous = previous
        self._reusable = _groups_by_digest(previous, file_schema) if previous else {}
        # with groups to reuse, the new ones go to a file of their own, joined with the reused at the end
        self._written = path.with_name(path.name + ".new") if self._reusable else path
        self._groups: list[tuple[Path, int]] = []  # the file's groups in order: (where from, its ordinal)
        self._new = 0
        with naming(self._written):
            # the file is this object's to close, whatever the writer's state: a writer that fails to close
            # (a full disk) would keep its descriptor, and the file's disk space, while its error is held
            self._sink = pa.OSFile(str(self._written), "wb")
            self._writer = writer(self._sink, file_schema)

    def add(self, rows: list[tuple], lines: bytes) -> None:
        """Add a document's rows, as values and as the JSON Lines export's `lines`."""
        self._rows.extend(rows)
        self._lines.update(lines)
        if len(self._rows) >= ROW_GROUP_ROWS:
            with naming(self._written):  # a full disk: Arrow's error names no file
                self._flush()

    def _flush(self) -> None:
        if not self._rows:
            return
        digest = self._lines.hexdigest()
        self._digests.append(digest)
        reused = self._reusable.get(digest)
        if reused is not None and self._previous is not None:
            self._groups.append((self._previous, reused))
        else:
            self._writer.write_table(table(self._rows, self.schema), row_group_size=len(self._rows))
            self._groups.append((self._written, self._new))
            self._new += 1
        self._rows, self._lines = [], hashlib.sha256()

    def close(self) -> None:
        try:
            with naming(self._written):
                self._close()
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """Close the file unfinished (a build that stopped): no descriptor of it, nor its disk space, is held
        while the error that stopped the build is."""
        with contextlib.suppress(Exception):  # closing writes a footer: a full disk refuses it, and that is all
            self._writer.close()
        self._sink.close()

    def _close(self) -> None:
        self._flush()
        digests = {GROUP_DIGESTS: ",".join(self._digests)}
        if all(source == self._written for source, _ in self._groups):  # nothing reused
            self._writer.add_key_value_metadata(digests)
            self._writer.close()
            self._sink.close()
            if self._written != self.path:
                self._written.replace(self.path)
            return
        self._writer.close()
        self._sink.close()
        parts: list[tuple[Path, list[int]]] = []
        for source, group in self._groups:  # consecutive groups of one file: one part
            if parts and parts[-1][0] == source:
                parts[-1][1].append(group)
            else:
                parts.append((source, [group]))
        join(self.path, parts, self.schema, digests)
        self._written.unlink()


def _groups_by_digest(previous: Path, file_schema: pa.Schema) -> dict[str, int]:
    """Return the row groups of an earlier export by the digest of their rows; none where it names no digests or
    a join would refuse it: its columns not this file's (another version of the export or of pyarrow)."""
    try:
        metadata = pq.read_metadata(previous)
        joinable = _footer_of(previous).get(_SCHEMA) == _template(file_schema).get(_SCHEMA)
    except (OSError, ValueError, pa.ArrowException):
        return {}
    named = (metadata.metadata or {}).get(GROUP_DIGESTS.encode(), b"").decode()
    if not named or not joinable:
        return {}
    digests = named.split(",")
    if len(digests) != metadata.num_row_groups:
        return {}
    return {digest: group for group, digest in enumerate(digests)}


def join(target: Path, parts: Sequence[Path | tuple[Path, Sequence[int]]], file_schema: pa.Schema,
         key_value: dict[str, str] | None = None) -> None:
    """Join into one Parquet file the row groups of `parts` (files written with `file_schema`'s columns, each
    whole or as (file, the ordinals of the groups taken from it), in order), their bytes copied as they
    are: each group's column chunks, then their column indexes, then their offset indexes (each page's
    offset moved by where its chunk now starts), then a footer — `file_schema`'s, as pyarrow writes it for
    no rows, with the groups, and `key_value` in its metadata. No value is decoded or encoded again, and
    memory holds one part and the page indexes."""
    with _collection_paused(), naming(target):  # a part that cannot be read names itself
        _join(target, parts, file_schema, key_value)


@contextlib.contextmanager
def _collection_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector: reading footers makes thousands of small objects, none in a
    cycle (freed as their count drops), and the collections they set off scan the whole heap — 40 ms, one
    join in three, in a process holding a build's data."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _template(file_schema: pa.Schema, key_value: dict[str, str] | None = None) -> thrift_compact.Struct:
    """Return the footer pyarrow writes for `file_schema` and no rows (with `key_value` in its metadata): a
    joined file's, and what a part's columns must be."""
    template = io.BytesIO()
    with writer(template, file_schema) as empty:
        empty.add_key_value_metadata(key_value or {})
    return _footer(template.getvalue())


def _join(target: Path, parts: Sequence[Path | tuple[Path, Sequence[int]]], file_schema: pa.Schema,
          key_value: dict[str, str] | None) -> None:
    footer = _template(file_schema, key_value)
    groups: list[thrift_compact.Struct] = []
    column_indexes: list[tuple[thrift_compact.Struct, bytes]] = []
    offset_indexes: list[tuple[thrift_compact.Struct, thrift_compact.Struct]] = []
    with open(target, "wb") as out:
        out.write(MAGIC)
        for part in parts:
            path, taken = part if isinstance(part, tuple) else (part, None)
            data = path.read_bytes()
            meta = _footer(data)
            if meta.get(_SCHEMA) != footer.get(_SCHEMA):
                raise ValueError(f"{path}: not written with the columns of the file it is joined into")
            all_groups = meta.get(FileMetaData.ROW_GROUPS).items
            chunks = [chunk for group in all_groups for chunk in group.get(RowGroup.COLUMNS).items]
            if any(ColumnChunk.CRYPTO_METADATA in c.fields or ColumnChunk.ENCRYPTED_COLUMN_METADATA in c.fields
                   or c.get(ColumnChunk.META_DATA).get(ColumnMetaData.BLOOM_FILTER_OFFSET) is not None for c in chunks):
                raise ValueError(f"{path}: bloom filters and encryption are not joined")
            for group in all_groups if taken is None else [all_groups[ordinal] for ordinal in taken]:
                start, end = _chunks_span(path, group)
                shift = out.tell() - start
                out.write(data[start:end])
                _move(group, RowGroup.FILE_OFFSET, shift)  # where its first page is
                groups.append(group)
                for chunk in group.get(RowGroup.COLUMNS).items:
                    _move_chunk(chunk, shift)
                    column_index = chunk.get(ColumnChunk.COLUMN_INDEX_OFFSET)
                    if column_index is not None:  # a column index has no offset: copied
                        column_length = chunk.get(ColumnChunk.COLUMN_INDEX_LENGTH)
                        column_indexes.append((chunk, data[column_index:column_index + column_length]))
                    offset_index = chunk.get(ColumnChunk.OFFSET_INDEX_OFFSET)
                    if offset_index is not None:
                        offset_length = chunk.get(ColumnChunk.OFFSET_INDEX_LENGTH)
                        index = thrift_compact.decode(data[offset_index:offset_index + offset_length],
                                                      OFFSET_INDEX_SHAPE)
                        for page in index.get(OffsetIndex.PAGE_LOCATIONS).items:
                            _move(page, PageLocation.OFFSET, shift)
                        offset_indexes.append((chunk, index))
        for chunk, copied in column_indexes:
            chunk.set(ColumnChunk.COLUMN_INDEX_OFFSET, out.tell())
            out.write(copied)
        for chunk, index in offset_indexes:
            encoded = thrift_compact.encode(index)
            chunk.set(ColumnChunk.OFFSET_INDEX_OFFSET, out.tell())
            chunk.set(ColumnChunk.OFFSET_INDEX_LENGTH, len(encoded))
            out.write(encoded)
        for ordinal, group in enumerate(groups):
            if RowGroup.ORDINAL in group.fields:
                group.set(RowGroup.ORDINAL, ordinal)
        footer.set(FileMetaData.NUM_ROWS, sum(group.get(RowGroup.NUM_ROWS) for group in groups))
        row_groups = thrift_compact.Sequence(thrift_compact.STRUCT, groups)
        footer.fields[FileMetaData.ROW_GROUPS] = (thrift_compact.LIST, row_groups)
        encoded = thrift_compact.encode(footer)
        out.write(encoded + len(encoded).to_bytes(4, "little") + MAGIC)


def _chunks_span(path: Path, group: thrift_compact.Struct) -> tuple[int, int]:
    """Return where a row group's column chunks start and end: one after the other, each from its first page (its
    dictionary's, else its first data page) for its compressed size, as pyarrow writes them."""
    start = end = None
    for chunk in group.get(RowGroup.COLUMNS).items:
        column = chunk.get(ColumnChunk.META_DATA)
        dictionary = column.get(ColumnMetaData.DICTIONARY_PAGE_OFFSET)
        first = dictionary if dictionary is not None else column.get(ColumnMetaData.DATA_PAGE_OFFSET)
        if end is not None and first != end:
            raise ValueError(f"{path}: a row group's column chunks are not one after the other")
        start = first if start is None else start
        end = first + column.get(ColumnMetaData.TOTAL_COMPRESSED_SIZE)
    if start is None or end is None:
        raise ValueError(f"{path}: a row group without columns")
    return start, end


def _move_chunk(chunk: thrift_compact.Struct, shift: int) -> None:
    """Move a column chunk's offsets by `shift`: its data, index and dictionary pages, and (deprecated,
    0 from pyarrow) where older writers put its metadata."""
    column = ColumnMetaData
    for number in (column.DATA_PAGE_OFFSET, column.INDEX_PAGE_OFFSET, column.DICTIONARY_PAGE_OFFSET):
        _move(chunk.get(ColumnChunk.META_DATA), number, shift)
    if chunk.get(ColumnChunk.FILE_OFFSET):
        _move(chunk, ColumnChunk.FILE_OFFSET, shift)


MAGIC = b"PAR1"
_SCHEMA = FileMetaData.SCHEMA  # the columns' names, types and order, compared as their bytes
# What a join reads of a footer: the fields named RAW are kept as their bytes (a fifth of the time to read
# and write back); the schema among them is compared whole.
_RAW = thrift_compact.RAW
_COLUMN_METADATA_KEPT = dict.fromkeys(
    (ColumnMetaData.ENCODINGS, ColumnMetaData.PATH_IN_SCHEMA, ColumnMetaData.KEY_VALUE_METADATA,
     ColumnMetaData.STATISTICS, ColumnMetaData.ENCODING_STATS, ColumnMetaData.SIZE_STATISTICS,
     ColumnMetaData.GEOSPATIAL_STATISTICS), _RAW)
FOOTER_SHAPE: thrift_compact.Shape = {
    FileMetaData.SCHEMA: _RAW, FileMetaData.KEY_VALUE_METADATA: _RAW, FileMetaData.COLUMN_ORDERS: _RAW,
    FileMetaData.ROW_GROUPS: {RowGroup.SORTING_COLUMNS: _RAW,
                     RowGroup.COLUMNS: {ColumnChunk.META_DATA: _COLUMN_METADATA_KEPT}}}
# the page locations read; the byte counts of byte-array data kept
OFFSET_INDEX_SHAPE: thrift_compact.Shape = {OffsetIndex.UNENCODED_BYTE_ARRAY_DATA_BYTES: _RAW}


def _footer(data: bytes | memoryview) -> thrift_compact.Struct:
    """Return a Parquet file's FileMetaData, read as FOOTER_SHAPE says."""
    if bytes(data[:4]) != MAGIC or bytes(data[-4:]) != MAGIC:
        raise ValueError("not a Parquet file")
    return thrift_compact.decode(data[_footer_start(data):len(data) - 8], FOOTER_SHAPE)


def _footer_of(path: Path) -> thrift_compact.Struct:
    """Return a Parquet file's FileMetaData, its end alone read."""
    with open(path, "rb") as source:
        source.seek(-8, io.SEEK_END)
        end = source.read(8)
        if end[4:] != MAGIC:
            raise ValueError(f"{path}: not a Parquet file")
        size = int.from_bytes(end[:4], "little")
        source.seek(-8 - size, io.SEEK_END)
        return thrift_compact.decode(source.read(size), FOOTER_SHAPE)


def _footer_start(data: bytes | memoryview) -> int:
    """Return where a Parquet file's footer starts: its length is in the 4 bytes before the closing magic."""
    return len(data) - 8 - int.from_bytes(data[-8:-4], "little")


def _move(fields: thrift_compact.Struct, number: int, shift: int) -> None:
    """Move an offset by `shift` bytes, where the struct has it."""
    if fields.get(number) is not None:
        fields.set(number, fields.get(number) + shift)
