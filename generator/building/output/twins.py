"""The compressed twins of a release's files (.gz, .br beside every text file over 1 KB: serving.has_twins),
which nginx's gzip_static/brotli_static and the edges serve as they are."""
from __future__ import annotations

import functools
import hashlib
import os
import struct
import zlib
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import brotli

from ...contract.serving import TWINS, has_twins
from ...system.files import (
    NamedFile,
    Part,
    WholeFile,
    each_block,
    naming,
    open_unbuffered,
    read_blocks,
    write_all,
    write_file,
    write_joined,
)


class _BrotliStream:
    """brotli's streaming compressor under zlib's names (compress, flush)."""

    def __init__(self) -> None:
        self._compressor = brotli.Compressor(quality=4)

    def compress(self, block: bytes) -> bytes:
        return self._compressor.process(block)

    def flush(self) -> bytes:
        return self._compressor.finish()


GZIP = next(suffix for suffix, coding in TWINS.items() if coding == "gzip")
GZIP_LEVEL = 6
# Served as they are to clients that accept them (nginx gzip_static / brotli_static). Brotli at
# quality 4 compresses faster than gzip -6 here and still 14 % smaller; both are deterministic.
# Streaming compressors, fed a block at a time: an export of hundreds of MB is never whole in memory.
_COMPRESSORS: dict[str, Callable[[], Any]] = {
    "gzip": lambda: zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31),  # wbits 31: the gzip format (mtime 0)
    "br": _BrotliStream,
}
COMPRESSED_FORMS = tuple((suffix, _COMPRESSORS[coding]) for suffix, coding in TWINS.items())
TWIN_SUFFIXES = tuple(suffix for suffix, _ in COMPRESSED_FORMS)

# A gzip twin joined from parts compressed one by one, as pigz does: each part raw deflate that ends
# on a byte boundary (a sync flush, no last block), then an empty last block and the gzip trailer (the
# CRC-32 and size of the whole). One gzip stream, decoded by any client; each model's export rows are
# compressed once, for its own export and for the public one that joins them.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"  # no name, mtime 0, Unix: as zlib writes it
_LAST_BLOCK = b"\x03\x00"  # an empty last block (fixed Huffman codes)


def _part_stream() -> Any:
    return zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -15)  # wbits -15: raw deflate, no header


def gzip_part(data: bytes) -> bytes:
    """Return bytes compressed as one part of a joined gzip twin."""
    stream = _part_stream()
    return stream.compress(data) + stream.flush(zlib.Z_SYNC_FLUSH)


class GzipPartFile:
    """A file written a block at a time (`write`) after its `head`, and, beside it at `part`, the bytes
    written (not the head) compressed as one part of a joined gzip twin. The file's SHA-256, size and
    CRC-32 (`whole`) are worked out as it is written, so it can be moved into a release as it is."""

    def __init__(self, path: Path, part: Path, head: bytes = b""):
        self._file, self._part, self._stream = NamedFile(path), NamedFile(part), _part_stream()
        self._digest, self._size, self._crc = hashlib.sha256(), 0, 0
        self._add(head)

    def _add(self, data: bytes) -> None:
        self._file.write(data)
        self._digest.update(data)
        self._size += len(data)
        self._crc = zlib.crc32(data, self._crc)

    def write(self, data: bytes) -> None:
        self._add(data)
        self._part.write(self._stream.compress(data))

    @property
    def whole(self) -> WholeFile:
        """The file with its SHA-256, size and CRC-32, as write_joined returns them."""
        return WholeFile(self._file.path, self._digest.hexdigest(), self._size, self._crc)

    def __enter__(self) -> "GzipPartFile":
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:  # already failing: both closed without hiding that error
            self._file.__exit__(*exc)
            self._part.__exit__(*exc)
            return
        with self._file, self._part:  # both closed, even when the last of the part fails to be written
            self._part.write(self._stream.flush(zlib.Z_SYNC_FLUSH))


def write_joined_gzip(path: Path, parts: list[Part], crc: int, size: int, stamp: int) -> dict[str, dict]:
    """Write, over 1 KB, the gzip twin of the file at `path`, written from parts (`write_joined`: its CRC-32
    and size), joined from those parts' `gzip_part`s (bytes, or files a GzipPartFile wrote) in the same
    order; its manifest entry by suffix, as _write_twins gives them."""
    if not has_twins(path.name, size):
        return {}
    trailer = struct.pack("<II", crc, size & 0xFFFFFFFF)
    digest, length = write_joined(path.with_name(path.name + GZIP), [_GZIP_HEADER, *parts, _LAST_BLOCK, trailer],
                                  stamp)[:2]
    return {GZIP: {"size": length, "sha256": digest}}


def write_with_twins(folder: Path, batch: list[tuple[str, bytes]], stamp: int) -> list[tuple[str, dict[str, dict]]]:
    """Write, in the worker, each (relative path, data) under folder and, over 1 KB, its
    pre-compressed twins; return the twins' manifest entries by relative path."""
    written = []
    for relative, data in batch:
        path = folder / relative
        write_file(path, data, stamp)
        written.append((relative, _write_twins(path, functools.partial(tuple, (data,)), len(data), stamp)))
    return written


def twin_of_written(folder: Path, twin: tuple[str, str], stamp: int) -> list[tuple[str, dict[str, dict]]]:
    """Write, in the worker, one twin, (relative path, suffix), of a file the build wrote itself
    (ReleaseWriter.write_parts), read a block at a time: a large file's twins are made at once by
    two workers."""
    relative, suffix = twin
    path = folder / relative
    forms = [form for form in COMPRESSED_FORMS if form[0] == suffix]
    return [(relative, _write_twins(path, lambda: read_blocks(path), path.stat().st_size, stamp, forms))]


def twins_of(path: str, body: bytes) -> dict[str, bytes]:
    """Return the compressed twins of a document held in memory (none where it has no twins), by suffix."""
    if not has_twins(path, len(body)):
        return {}
    found = {}
    for suffix, compressor in COMPRESSED_FORMS:
        stream = compressor()
        found[suffix] = stream.compress(body) + stream.flush()
    return found


def _write_twins(path: Path, blocks: Callable[[], Iterable[bytes]], size: int, stamp: int,
                 forms: Sequence[tuple[str, Callable[[], Any]]] = COMPRESSED_FORMS) -> dict[str, dict]:
    """Return, over 1 KB, each compressed twin (of `forms`) of a file whose bytes `blocks()` gives; their manifest
    entries."""
    entries: dict[str, dict] = {}
    if not has_twins(path.name, size):
        return entries
    for suffix, compressor in forms:
        stream, digest, length = compressor(), hashlib.sha256(), 0
        twin = path.with_name(path.name + suffix)
        with naming(twin), open_unbuffered(twin) as out, each_block(blocks()) as source:
            for block in source:
                compressed = stream.compress(block)
                write_all(out, compressed)
                digest.update(compressed)
                length += len(compressed)
            compressed = stream.flush()
            write_all(out, compressed)
            digest.update(compressed)
            length += len(compressed)
            os.utime(out.fileno(), (stamp, stamp))
        entries[suffix] = {"size": length, "sha256": digest.hexdigest()}
    return entries

