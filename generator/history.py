"""Which releases were live, in order: the journal (site/history) that rollback and pruning follow.

Each switch of `current` appends one line, `publish <id> <instant>`, `rollback <id> <instant>` or
`promote <id> <instant>` (the instant in RFC 3339 UTC; lines written before instants were recorded have
none), written and synced
before the switch: a kill between the two leaves a last line whose switch never happened, which
`took_effect` leaves out (the lines up to the last one whose replay ends at `current`). Replayed, the
journal is a stack: a publish pushes its release, a rollback pops back to its target, so the release under the
top is always the one that was live before the current one — never a release that was never live,
and never the known-bad one an operator just rolled back from. A promote is a publish of a release built
before (staged).

A release built but not made live (`riskapi build --stage`) gets a `stage <id> <instant>` line: not a
switch, it only says the release is staged (kept, answered to preview keys) until it is promoted.
"""
from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from .files import sync_folder

HISTORY = "history"
PUBLISH, ROLLBACK, PROMOTE, STAGE = "publish", "rollback", "promote", "stage"
SWITCHES = (PUBLISH, ROLLBACK, PROMOTE)


class Switch(NamedTuple):
    """One line of the journal: what switched `current`, to which release, and when (None on lines
    written before instants were recorded)."""
    action: str
    release: str
    at: str | None = None


@dataclass(frozen=True)
class LivePeriod:
    """A stretch of time one release was live: from `start` until `end` (None: live now)."""
    release: str
    start: str | None
    end: str | None


def built_at(release_id: str) -> str:
    """A release id (UTC, `20261123T121117Z`; or a folder named after one, `.tmp-20261123T121117Z`) as an
    RFC 3339 time (`2026-11-23T12:11:17Z`)."""
    stamp = datetime.datetime.strptime(release_id.removeprefix(".tmp-")[:15], "%Y%m%dT%H%M%S")
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def now() -> str:
    """The present instant as the journal writes it: RFC 3339, UTC, whole seconds."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def record(site: Path, action: str, release_id: str, at: str | None = None) -> None:
    """Append one switch to the journal, at `at` (default: now); flushed to disk before the caller
    goes on."""
    new = not (site / HISTORY).exists()
    with open(site / HISTORY, "a", encoding="utf-8") as journal:
        journal.write(f"{action} {release_id} {at or now()}\n")
        journal.flush()
        os.fsync(journal.fileno())
    if new:
        sync_folder(site)  # the new file's name is on disk too


def lines(site: Path) -> list[Switch] | None:
    """Every line of the journal in order, switches and stagings; None for a site without one."""
    path = site / HISTORY
    if not path.is_file():
        return None
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        action, release_id, *at = line.split()
        if action in (*SWITCHES, STAGE) and release_id:
            found.append(Switch(action, release_id, at[0] if at else None))
    return found


def entries(site: Path) -> list[Switch] | None:
    """Every switch of the journal in order; None for a site without one."""
    found = lines(site)
    return None if found is None else [line for line in found if line.action in SWITCHES]


def live_periods(journal: list[Switch]) -> list[LivePeriod]:
    """When each release was live, oldest first, from switches that took effect (took_effect): each
    switch makes its release live from its instant until the next switch's. A release rolled back to
    is live again: it has a period for each time."""
    periods = [LivePeriod(switch.release, switch.at, None) for switch in journal]
    return [LivePeriod(p.release, p.start, following.start) for p, following in zip(periods, periods[1:])] \
        + periods[-1:]


def took_effect(journal: list[Switch], current: str | None) -> list[Switch]:
    """The journal's lines whose switch happened: all of them up to the last whose replay ends at
    `current` (every line, where none does or there is no current release)."""
    if current is None:
        return journal
    for end in range(len(journal), 0, -1):
        stack = live_stack(journal[:end])
        if stack and stack[-1] == current:
            return journal[:end]
    return journal


def live_stack(journal: list[Switch]) -> list[str]:
    """The releases that were live, oldest first, as rollbacks left them; the last one is current."""
    stack: list[str] = []
    for action, release_id, _ in journal:
        if action in (PUBLISH, PROMOTE):
            stack.append(release_id)
        elif release_id in stack:
            del stack[stack.index(release_id) + 1:]  # back to the target: what came after is undone
        else:
            stack = [release_id]
    return stack
