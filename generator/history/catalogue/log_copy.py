"""Copies of a site's log of releases, laid out as C2SP tlog-tiles serves them (`checkpoint`,
`tile/entries/N[.p/W]`): the site's own, `site/log/` (written after each checkpoint, never served), and
the one `riskapi deploy s3` keeps in the bucket beside the releases (`log/`). A repair recovers the history
from one when the catalogue is lost: every switch with its exact instant, every prune, and the log itself,
unchanged, so the next checkpoint extends the last one signed. A copy is read through a `Reader` (a
folder, a bucket, or a server answering /api/v1/log/: the log is public), and checked whole."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ...errors import CatalogueError
from ...system.files import write_atomic
from ..proof.note import NoteError, Verifier, note_text, open_note, read_checkpoint
from ..proof.tiles import ENTRIES, bundles, level_tiles, read_bundle
from ..proof.tree import leaf_hash, root

LOG_COPY = "log"
CHECKPOINT = "checkpoint"

# a copy's file by its path in the layout ("checkpoint", "tile/entries/000"): its bytes, or None where
# the copy has no such file; an OSError where it cannot be read
Reader = Callable[[str], bytes | None]


@dataclass(frozen=True)
class LogCopy:
    entries: list[bytes]
    note: bytes  # the checkpoint of all of them
    where: str  # what to call the copy in a message


def copy_files(entries: Sequence[bytes], size: int, note: bytes) -> dict[str, bytes]:
    """Return the files of a copy of the log's first `size` entries and the checkpoint of that size, in the
    order to write them: the checkpoint last, so that it never names entries not there yet."""
    files = {f"tile/{path}": data for path, data in bundles(entries[:size]).items()}
    files[CHECKPOINT] = note
    return files


def is_replaced(path: str) -> bool:
    """Return whether a copy's file is rewritten when the log grows (a partial bundle, the checkpoint) rather
    than written once (a full bundle: immutable)."""
    return path == CHECKPOINT or ".p/" in path


def write_copy(site: Path, entries: Sequence[bytes], size: int, note: bytes) -> None:
    """Write the site's own copy: full bundles written once, the partial one and the checkpoint replaced whole."""
    folder = site / LOG_COPY
    folder.mkdir(exist_ok=True)  # a log of no entry yet (its key made before the first release) has a checkpoint
    for path, data in copy_files(entries, size, note).items():
        target = folder / path
        if is_replaced(path) or not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, data)


def folder_reader(folder: Path) -> Reader:
    def read(path: str) -> bytes | None:
        target = folder / path
        return target.read_bytes() if target.is_file() else None
    return read


def read_log(read: Reader, where: str) -> LogCopy | None:
    """Return a copy's entries and checkpoint, checked against each other; None where it has no checkpoint; a
    CatalogueError naming `where` when it does not hold together (a bundle missing or changed)."""
    try:
        note = read(CHECKPOINT)
    except OSError as error:
        raise CatalogueError(f"{where}: the log's copy cannot be read ({error})") from None
    if note is None:
        return None
    try:
        checkpoint = read_checkpoint(note_text(note))
    except NoteError as error:
        raise CatalogueError(f"{where}/{CHECKPOINT}: {error}") from None
    entries: list[bytes] = []
    for bundle in level_tiles(ENTRIES, checkpoint.size):
        path = f"tile/{bundle}"
        try:
            data = read(path)
            if data is None:
                raise ValueError("missing")
            entries += read_bundle(data)
        except (OSError, ValueError) as error:
            raise CatalogueError(f"{where}/{path}: the log's copy cannot be read ({error})") from None
    if len(entries) != checkpoint.size or root([leaf_hash(e) for e in entries]) != checkpoint.root:
        raise CatalogueError(f"{where}: the log's copy does not make its checkpoint's tree (size "
                             f"{checkpoint.size}): it was changed")
    return LogCopy(entries, note, where)


def read_copy(site: Path) -> LogCopy | None:
    """Return the site's own copy (site/log/), read and checked; None where the site has none."""
    return read_log(folder_reader(site / LOG_COPY), str(site / LOG_COPY))


def newest_copy(copies: Sequence[LogCopy], trust: Verifier | None = None) -> LogCopy | None:
    """Return the longest of the copies, once each shorter one is found to be its beginning (an append-only log's
    copies differ only in how far they go), and its checkpoint signed by `trust` where one is given; a
    CatalogueError naming both where two disagree (one of them was rewritten)."""
    if not copies:
        return None
    newest = max(copies, key=lambda copy: len(copy.entries))
    for copy in copies:
        differs = next((n for n, entry in enumerate(copy.entries) if entry != newest.entries[n]), None)
        if differs is not None:
            raise CatalogueError(f"{copy.where} and {newest.where} disagree at entry {differs}: one of them was "
                                 "rewritten; repair from the one you trust alone")
    if trust is not None:
        try:
            open_note(newest.note, [trust])
        except NoteError as error:
            raise CatalogueError(f"{newest.where}/{CHECKPOINT}: {error}") from None
    return newest
