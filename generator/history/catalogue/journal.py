"""The text journal of riskapi before the catalogue (`site/history`: `publish|promote|rollback|stage ID
[INSTANT]` a line), imported once into a new catalogue, line for line."""
from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from ...errors import CatalogueError
from . import instants
from .instants import built_at_ms, parse_instant
from .periods import STAGE, SWITCHES, History, Switch

REPAIR_HINT = "`riskapi releases --repair` rebuilds it from the release folders"


class Recorder(Protocol):
    """What the import needs of a new catalogue (store.Catalogue)."""

    def add_release(self, release: str, staged: bool = False, audiences: tuple[str, ...] = ()) -> None: ...

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...


def import_journal(catalogue: Recorder, journal: Path, current: str | None, on_disk: set[str]) -> None:
    """Import every line of a text journal (written by riskapi before the catalogue), as it was: stagings as
    staged releases, switches as done — but for those after the last whose replay ends at `current`,
    which never took effect (void), with `current` the release the site's link names; a release it names
    that is not `on_disk` was pruned. A line that cannot be read stops the import, named."""
    lines = []
    for number, line in enumerate(journal.read_bytes().split(b"\n"), 1):
        words = line.decode("utf-8", "replace").split()
        if not words:
            continue
        if len(words) not in (2, 3) or words[0] not in (*SWITCHES, STAGE):
            raise CatalogueError(f"{journal}:{number}: cannot import the line {line[:80]!r}: expected "
                                 f"`publish|promote|rollback|stage ID [INSTANT]`; nothing was changed. "
                                 f"Correct or remove the line, or {REPAIR_HINT}")
        try:
            at = parse_instant(words[2]) if len(words) == 3 else built_at_ms(words[1])
            built_at_ms(words[1])
        except ValueError as error:
            raise CatalogueError(f"{journal}:{number}: {error}; nothing was changed. {REPAIR_HINT}") from None
        lines.append((words[0], words[1], at))
    switches = [(action, release, at) for action, release, at in lines if action in SWITCHES]
    taken = len(switches)
    for end in range(len(switches), 0, -1):  # what took effect: up to the last line replaying to current
        probe = History(current, {}, frozenset(), tuple(Switch(0, a, r, 0, 0, "done") for a, r, _ in switches[:end]))
        if probe.stack and probe.stack[-1] == current:
            taken = end
            break
    for action, release, _ in lines:
        catalogue.add_release(release, staged=action == STAGE)
    with catalogue.transaction() as db:
        for release in {r for _, r, _ in lines} - on_disk:
            db.execute("UPDATE release SET removed_at = ? WHERE id = ?", (instants.now_ms(), release))
        last = None
        for index, (action, release, at) in enumerate(switches):
            given = at if last is None else max(at, last + 1)
            db.execute("INSERT INTO switch (action, release, at, clock, state) VALUES (?, ?, ?, ?, ?)",
                       (action, release, given, at, "done" if index < taken else "void"))
            last = given
