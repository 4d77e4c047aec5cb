"""The site's own copy of its log of releases, `site/log/`: the entry bundles and the newest checkpoint, laid
out as C2SP tlog-tiles serves them (`checkpoint`, `tile/entries/N[.p/W]`), written after each checkpoint.
It is what a repair recovers the history from when the catalogue is lost: every switch with its exact
instant, every prune, and the log itself, unchanged, so the next checkpoint extends the last one signed.
Never served (the servers answer the log from the catalogue)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..errors import CatalogueError
from ..files import write_atomic
from ..transparency.note import NoteError, note_text, read_checkpoint
from ..transparency.tiles import ENTRIES, WIDTH, bundles, read_bundle, tile_path
from ..transparency.tree import leaf_hash, root

LOG_COPY = "log"
CHECKPOINT = "checkpoint"


def write_copy(site: Path, entries: Sequence[bytes], size: int, note: bytes) -> None:
    """The log's first `size` entries and the checkpoint of that size: full bundles written once, the
    partial one and the checkpoint replaced whole (the checkpoint last: it never names entries not there)."""
    folder = site / LOG_COPY
    folder.mkdir(exist_ok=True)  # a log of no entry yet (its key made before the first release) has a checkpoint
    for path, data in bundles(entries[:size]).items():
        target = folder / "tile" / path
        if ".p/" in path or not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, data)
    write_atomic(folder / CHECKPOINT, note)


def read_copy(site: Path) -> tuple[list[bytes], bytes] | None:
    """The copy's entries and checkpoint, checked against each other; None where the site has no copy; a
    CatalogueError where it does not hold together (a bundle missing or changed)."""
    folder = site / LOG_COPY
    if not (folder / CHECKPOINT).is_file():
        return None
    note = (folder / CHECKPOINT).read_bytes()
    try:
        checkpoint = read_checkpoint(note_text(note))
    except NoteError as error:
        raise CatalogueError(f"{folder / CHECKPOINT}: {error}") from None
    entries: list[bytes] = []
    for n in range(-(-checkpoint.size // WIDTH)):
        width = min(WIDTH, checkpoint.size - n * WIDTH)
        path = folder / "tile" / tile_path(ENTRIES, n, width)
        try:
            entries += read_bundle(path.read_bytes())
        except (OSError, ValueError) as error:
            raise CatalogueError(f"{path}: the log's copy cannot be read ({error})") from None
    if len(entries) != checkpoint.size or root([leaf_hash(e) for e in entries]) != checkpoint.root:
        raise CatalogueError(f"{folder}: the log's copy does not make its checkpoint's tree (size "
                             f"{checkpoint.size}): it was changed")
    return entries, note
