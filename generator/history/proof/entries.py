"""The entries of the log of releases: one per event that changes what the API answers — a release made
live for the first time (its id, when it was built, its tree), every switch of the live release (publish,
promote, rollback, with its instant), every prune of a release that was live. Each is canonical JSON:
UTF-8, keys sorted, no space (schemas/log-entry.json), so the same event is the same bytes, and its hash
the same leaf, whoever writes it. A release that was never live (staged, never promoted) is never named."""
from __future__ import annotations

from dataclasses import dataclass

import orjson

from .leaves import ReleaseTree

RELEASE, SWITCH, PRUNE = "release", "switch", "prune"
MAX_BYTES = 0xFFFF  # an entry bundle's length prefix (C2SP tlog-tiles) is a uint16


def canonical(value: dict) -> bytes:
    data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    if len(data) > MAX_BYTES:
        raise ValueError(f"a log entry of {len(data)} bytes: an entry bundle holds {MAX_BYTES} at most")
    return data


def release_entry(release: str, built_at: str, tree: ReleaseTree | None) -> bytes:
    """Return a release made live for the first time; `tree` None for one pruned before riskapi made trees."""
    return canonical({"event": RELEASE, "release": release, "builtAt": built_at,
                      "tree": tree.as_json() if tree else None})


def switch_entry(action: str, release: str, at: str) -> bytes:
    """Return the live release switched to `release` at `at` (RFC 3339, whole seconds) by `action`."""
    return canonical({"event": SWITCH, "action": action, "release": release, "at": at})


def prune_entry(release: str, at: str) -> bytes:
    return canonical({"event": PRUNE, "release": release, "at": at})


@dataclass(frozen=True)
class Entry:
    """An entry as read back: its event, release, instant (`at`; a release entry's `builtAt`) and tree."""
    event: str
    release: str
    at: str
    action: str | None = None
    tree: ReleaseTree | None = None


def read_entry(data: bytes) -> Entry:
    """Return an entry's fields; a ValueError where the bytes are not a canonical entry."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise ValueError(f"a log entry that is not JSON: {error}") from None
    if not isinstance(value, dict) or value.get("event") not in (RELEASE, SWITCH, PRUNE):
        raise ValueError("a log entry without a known event")
    if canonical(value) != data:
        raise ValueError("a log entry not in canonical form (keys sorted, no space)")
    try:
        if value["event"] == RELEASE:
            tree = ReleaseTree.from_json(value["tree"]) if value["tree"] is not None else None
            return Entry(RELEASE, value["release"], value["builtAt"], tree=tree)
        return Entry(value["event"], value["release"], value["at"], action=value.get("action"))
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"a {value['event']} entry without a valid {error}") from None
