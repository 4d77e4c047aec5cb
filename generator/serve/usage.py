"""Usage per key's user, route or day, from nginx's access log (nginx.conf's `riskapi` log format) or
the Worker's usage lines (one JSON object per request, as `wrangler dev`, Workers Logs and Logpush give
them): requests, bytes sent and status classes. Both name the user, never a key, and so does this.
Rotated logs (access.log.1) and gzipped ones (access.log.2.gz) are read as they come."""
from __future__ import annotations

import datetime
import gzip
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..contract import serving
from ..contract.routes import route_of
from ..errors import ServeError

LINE = re.compile(serving.ACCESS_LOG_LINE)  # a line of nginx's access log, as the contract writes it
TIME_LOCAL = serving.ACCESS_LOG_TIME
NO_USER = "-"  # a request without a valid key

@dataclass
class Request:
    user: str
    at: datetime.datetime
    route: str
    status: int
    bytes: int
    key: str = NO_USER  # the short id of the key it asked with (logs before key ids: "-")


@dataclass
class Tally:
    requests: int = 0
    bytes: int = 0
    statuses: dict[str, int] = field(default_factory=lambda: {"2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0})

    def add(self, request: Request) -> None:
        self.requests += 1
        self.bytes += request.bytes
        kind = f"{request.status // 100}xx"
        self.statuses[kind] = self.statuses.get(kind, 0) + 1


def _lines(path: Path) -> Iterator[str]:
    try:
        opened = gzip.open(path, "rt", encoding="utf-8", errors="replace") if path.suffix == ".gz" \
            else open(path, encoding="utf-8", errors="replace")
        with opened as lines:
            yield from lines
    except OSError as error:
        raise ServeError(f"{path}: cannot be read: {error.strerror or error}") from None


def _worker_lines(line: str) -> Iterator[dict]:
    """Yield the Worker's usage objects in one line: the line itself, or the messages of a Logpush record
    (Workers Trace Events: {"Logs": [{"Message": ["…"]}, …]})."""
    try:
        record = json.loads(line)
    except ValueError:
        return
    if isinstance(record, dict) and record.get("usage") == 1:
        yield record
    elif isinstance(record, dict) and isinstance(record.get("Logs"), list):
        for log in record["Logs"]:
            for message in (log.get("Message") or []) if isinstance(log, dict) else []:
                yield from _worker_lines(message) if isinstance(message, str) else ()


def read_log(path: Path) -> Iterator[Request]:
    """Yield the requests of one log, nginx's or the Worker's; lines of another kind are passed over."""
    for line in _lines(path):
        m = LINE.match(line)
        if m:
            yield Request(m["user"], datetime.datetime.strptime(m["time"], TIME_LOCAL), route_of(m["path"]),
                          int(m["status"]), int(m["bytes"]), m["key"])
        elif line.startswith("{"):
            for used in _worker_lines(line):
                at = datetime.datetime.fromisoformat(used["at"].replace("Z", "+00:00"))
                yield Request(str(used["user"]), at, route_of(str(used["path"])), int(used["status"]),
                              int(used["bytes"]), str(used.get("key", NO_USER)))


def rotated(log: Path) -> list[Path]:
    """Return a log and its rotations beside it (access.log.1, access.log.2.gz, …), oldest first."""
    def age(path: Path) -> int:
        number = path.name[len(log.name) + 1:].removesuffix(".gz")
        return int(number) if number.isdigit() else -1
    siblings = [p for p in log.parent.glob(f"{log.name}.*") if age(p) >= 0]
    return sorted(siblings, key=age, reverse=True) + ([log] if log.exists() else [])


def usage(requests: Iterable[Request], by: str, since: datetime.datetime | None = None) -> dict[str, Tally]:
    """Return requests tallied by user, key (its user and short id: whether a client has moved to a rotated key),
    route or day (UTC), those before `since` left out; sorted by key."""
    tallies: dict[str, Tally] = {}
    for request in requests:
        if since is not None and request.at < since:
            continue
        key = {"user": request.user, "key": f"{request.user} {request.key}", "route": request.route,
               "day": request.at.astimezone(datetime.timezone.utc).date().isoformat()}[by]
        tallies.setdefault(key, Tally()).add(request)
    return dict(sorted(tallies.items()))
