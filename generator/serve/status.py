"""What a running `riskapi serve` applied and what nginx rejected, for `riskapi status` to show.

Each serve keeps one small JSON file in the site folder (`.serving/<address>.json`, outside every
release, so never served): the release and keys it serves, the keys file's problem lines, and the
latest changes nginx rejected, with nginx's reason (never a key: serve/nginx/configuration.py: redact_keys)."""
from __future__ import annotations

import datetime
import os
import re
from pathlib import Path
from typing import Any

import orjson

from ..system.files import write_atomic
from ..system.processes import process_state
from .keys import summarised

SERVING = ".serving"
KEPT_REJECTIONS = 10


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class ServeStatus:
    """The status file of one serve (by its address), rewritten in one step on every change."""

    def __init__(self, site: Path, address: str, access_log: Path | None = None):
        self.path = site / SERVING / f"{re.sub(r'[^0-9A-Za-z.]+', '_', address).strip('_')}.json"
        self.state: dict[str, Any] = {"pid": os.getpid(), "address": address, "live": None, "rejected": [],
                      "accessLog": str(access_log) if access_log else None}  # what riskapi usage reads

    def applied(self, release: str, keys_digest: str | None, key_problems: list[str]) -> None:
        """Record what is live; the keys file's bad lines as shown (summarised) and how many there are."""
        live = {"release": release, "keys": (keys_digest or "")[:12], "keyProblems": summarised(key_problems),
                "keyProblemLines": len(key_problems)}
        if {k: v for k, v in (self.state["live"] or {}).items() if k != "since"} != live:
            self.state["live"] = {**live, "since": _now()}
        self._write()

    def rejected(self, what: str, name: str, reason: str) -> None:
        """Record a change not applied: `what` (release, keys file), which one (`name`), and why."""
        rejections = [r for r in self.state["rejected"] if (r["what"], r["name"]) != (what, name)]
        self.state["rejected"] = [{"what": what, "name": name, "at": _now(), "reason": reason},
                                  *rejections][:KEPT_REJECTIONS]
        self._write()

    def _write(self) -> None:
        try:
            self.path.parent.mkdir(exist_ok=True)
            write_atomic(self.path, orjson.dumps(self.state, option=orjson.OPT_INDENT_2))
        except OSError:
            pass  # a read-only site folder: serving goes on, `riskapi status` has nothing to show

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def read_statuses(site: Path) -> list[dict]:
    """Return the status of every serve of a site that is still running (a stale file is removed)."""
    found = []
    for path in sorted((site / SERVING).glob("*.json")):
        try:
            state = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if process_state(state.get("pid", 0)) is None:
            path.unlink(missing_ok=True)
            continue
        found.append(state)
    return found
