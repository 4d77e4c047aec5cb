"""A release's id: the UTC second it was built (`20261127T093312Z`), with `-NN` after it for the second and
later release built in one second (`…Z-02`, `…Z-100`). Made, read and ordered here alone; every server's
grammar takes PATTERN."""
from __future__ import annotations

import datetime
from typing import Iterable

PATTERN = r"[0-9]{8}T[0-9]{6}Z(?:-[0-9]+)?"  # routes, nginx, the edges (as a regular expression)
SCHEMA_PATTERN = f"^{PATTERN.replace('(?:', '(')}$"  # the same in OpenAPI's parameter (ECMA-262, anchored)
STAMP = "%Y%m%dT%H%M%SZ"


def release_order(release_id: str) -> tuple[str, int]:
    """Return the sort key of a release id: its UTC second, then its count within that second as a number
    (`…Z-100` comes after `…Z-99`, as text it would sort before it)."""
    base, _, count = release_id.partition("-")
    return base, int(count) if count.isdigit() else 0


def new_release_id(now: datetime.datetime, taken: Iterable[str]) -> str:
    """Return the id of a release built at `now`, after every id `taken` (even one of a later second, after a
    clock step): ids sort in build order."""
    stamp = now.astimezone(datetime.timezone.utc).strftime(STAMP)
    latest = max(taken, default="", key=release_order)
    if stamp > latest.partition("-")[0]:
        return stamp
    base, count = release_order(latest)
    return f"{base}-{max(count, 1) + 1:02d}"


def built_at_ms(release_id: str) -> int:
    """Return when a release was built (ms since 1970, UTC), from its id (or a folder named after one,
    `.tmp-20261123T121117Z`)."""
    stamp = datetime.datetime.strptime(release_id.removeprefix(".tmp-")[:16], STAMP)
    return int(stamp.replace(tzinfo=datetime.timezone.utc).timestamp()) * 1000
