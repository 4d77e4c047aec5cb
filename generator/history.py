"""Which releases were live, in order: the journal (site/history) that rollback and pruning follow.

Each switch of `current` appends one line, `publish <id>` or `rollback <id>`, written and synced
before the switch: a kill between the two leaves a last line whose switch never happened, which
`took_effect` leaves out (the lines up to the last one whose replay ends at `current`). Replayed, the
journal is a stack: a publish pushes its release, a rollback pops back to its target, so the release under the
top is always the one that was live before the current one — never a release that was never live,
and never the known-bad one an operator just rolled back from.
"""
from __future__ import annotations

import os
from pathlib import Path

from .files import sync_folder

HISTORY = "history"
PUBLISH, ROLLBACK = "publish", "rollback"


def record(site: Path, action: str, release_id: str) -> None:
    """Append one switch to the journal (flushed to disk before the caller goes on)."""
    new = not (site / HISTORY).exists()
    with open(site / HISTORY, "a", encoding="utf-8") as journal:
        journal.write(f"{action} {release_id}\n")
        journal.flush()
        os.fsync(journal.fileno())
    if new:
        sync_folder(site)  # the new file's name is on disk too


def entries(site: Path) -> list[tuple[str, str]] | None:
    """Every (action, release id) of the journal in order; None for a site without one."""
    path = site / HISTORY
    if not path.is_file():
        return None
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        action, _, release_id = line.partition(" ")
        if action in (PUBLISH, ROLLBACK) and release_id:
            found.append((action, release_id))
    return found


def took_effect(journal: list[tuple[str, str]], current: str | None) -> list[tuple[str, str]]:
    """The journal's lines whose switch happened: all of them up to the last whose replay ends at
    `current` (every line, where none does or there is no current release)."""
    if current is None:
        return journal
    for end in range(len(journal), 0, -1):
        stack = live_stack(journal[:end])
        if stack and stack[-1] == current:
            return journal[:end]
    return journal


def live_stack(journal: list[tuple[str, str]]) -> list[str]:
    """The releases that were live, oldest first, as rollbacks left them; the last one is current."""
    stack: list[str] = []
    for action, release_id in journal:
        if action == PUBLISH:
            stack.append(release_id)
        elif release_id in stack:
            del stack[stack.index(release_id) + 1:]  # back to the target: what came after is undone
        else:
            stack = [release_id]
    return stack
