"""The keys file (CSV: user, key_digest, models, active, expires), read line by line and rewritten whole.

It holds each key's digest under the site's secret (secret.py), never the key: a key is shown once, when it
is added. A keys file of the format before (user, key, models, active: every key as typed) is converted in
place by the first command that reads it (serve, deploy, keys, nginx-config) or by `riskapi keys migrate`,
and each key keeps working.

A bad line is a located problem of its own and serves no key, while every other line goes on working,
so a typo never takes the API down and never blocks a revocation. A rewrite (add, revoke) keeps every
other line exactly as it was written, bad ones included.
"""
from __future__ import annotations

import contextlib
import csv
import fcntl
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ...building.load.problems import SHOWN_PER_KIND
from ...contract import routes
from ...contract.encodings import identity
from ...contract.key_format import DIGEST, KEY_ID_CHARACTERS, key_digest
from ...errors import KeysError
from ...history.catalogue.instants import parse_instant, rfc3339
from ...system.files import write_atomic
from .secret import secret_for
from .strength import KEY, normalise_key

HEADER = ["user", "key_digest", "models", "active", "expires"]
PLAIN_HEADER = ["user", "key", "models", "active"]  # the format before digests, converted when read
USER = re.compile(r"[A-Za-z0-9._@-]{1,64}")
USER_RULE = "may only use letters, digits and . _ @ - (at most 64)"
# A grant in the models column that is no model (a model code cannot start with @): the key may read
# staged releases under their own id (riskapi build --stage), which no other key sees.
PREVIEW_GRANT = "@preview"


@dataclass(frozen=True)
class ApiKey:
    """A line of the keys file: what the servers know of one key."""
    user: str
    digest: str  # key_format.key_digest of the key under the site's secret
    models: tuple[str, ...]  # granted custom models, sorted
    active: bool
    preview: bool = False  # may read staged releases (PREVIEW_GRANT)
    expires: int | None = None  # the instant (ms since 1970, UTC) from which it is refused; None: never
    line: int = field(default=0, compare=False)  # where it is in the keys file (0: not from a file)

    @property
    def key_id(self) -> str:
        """The key's short id, which names it in lists, status and logs: the start of its digest."""
        return self.digest[:KEY_ID_CHARACTERS]


@dataclass(frozen=True)
class IssuedKey:
    """A key as add_key issues it: the key itself, which is shown once and kept nowhere, and its line."""
    key: str
    entry: ApiKey


@dataclass
class KeysFile:
    """A keys file as read: the keys of its good lines, a located problem for every other line, and
    its lines as written (without line ends), which a rewrite keeps."""
    path: Path
    keys: list[ApiKey]
    problems: list[str]
    lines: list[str]

    def rows(self) -> Iterator[tuple[int, list[str]]]:
        """Yield (index in lines, cells) of every line after the header that is one CSV record, bad or not."""
        for index, line in enumerate(self.lines[1:], start=1):
            row = _cells(line)
            if row:
                yield index, [cell.strip() for cell in row]

    def users(self) -> dict[str, str]:
        """Return each user's identity → its spelling in the file, from every line that names a user (a bad
        line's too: a new user must not alias it once it is fixed)."""
        named: dict[str, str] = {}
        for _, row in self.rows():
            if USER.fullmatch(row[0]):
                named.setdefault(identity(row[0]), row[0])
        return named

    def holds(self, digest: str) -> bool:
        """Return whether any line, bad or not, holds this key's digest."""
        return any(len(row) > 1 and row[1].lower() == digest for _, row in self.rows())

    def holds_any(self) -> bool:
        """Return whether any line after the header holds something (then its digests need the file's secret)."""
        return any(line.strip() for line in self.lines[1:])

    def warning(self) -> str | None:
        """Return one message for every problem (None without any), saying the lines serve no key."""
        return problems_warning(len(self.problems), summarised(self.problems)) if self.problems else None


def summarised(problems: list[str]) -> list[str]:
    """Return the keys file's problems as they are shown: the first few of each kind (the same message but for
    its line, cells and numbers), then how many more like the last, as the data files' problems are. One
    bad column in a 100,000-line file is six lines, not 100,000."""
    kinds: dict[str, list[str]] = {}
    for problem in problems:
        what = re.sub(r"^.*?:\d+: ", "", problem, count=1)  # after "FILE:LINE: "
        kinds.setdefault(re.sub(r"'[^']*'|\"[^\"]*\"|\d+", "_", what), []).append(problem)
    shown = []
    for same in kinds.values():
        shown += same[:SHOWN_PER_KIND]
        if len(same) > SHOWN_PER_KIND:
            shown.append(f"… and {len(same) - SHOWN_PER_KIND:,} more like the last")
    return shown


def problems_warning(count: int, shown: list[str]) -> str:
    """Return what `keys`, `serve` and `deploy` say of a keys file's bad lines (`shown`: summarised)."""
    return f"{count:,} line(s) of the keys file serve no key until fixed:\n  " + "\n  ".join(shown)


def _cells(line: str) -> list[str] | None:
    """Return the cells of one line of the keys file, or None where it is not one CSV record (no valid
    cell holds a quote, comma or line break, so each record is one line)."""
    try:
        return next(csv.reader([line], strict=True), [])
    except csv.Error:
        return None


def read_keys(path: Path, missing_ok: bool = True) -> list[ApiKey]:
    """Return the keys of every good line (see load_keys; its problems are the caller's to show)."""
    return load_keys(path, missing_ok).keys


def load_keys(path: Path, missing_ok: bool = True) -> KeysFile:
    """Return the keys file, line by line (a missing file has no keys, unless `missing_ok` is False); one of the
    format before digests is converted in place first (migrate).

    A line with a problem is skipped and named by file and line, never showing a key: a bad cell, a
    user that differs from an earlier line's only in letter case, a key that another line holds too
    (then no line of that key serves it: which user it belongs to is not known). Only a file that
    cannot be read at all, or a wrong header, is an error."""
    lines = _read_lines(path, missing_ok)
    if lines is not None and _header(lines) == PLAIN_HEADER:
        migrate(path)
        lines = _read_lines(path, missing_ok)
    if lines is None:
        return KeysFile(path, [], [], [HEADER_LINE])
    if _header(lines) != HEADER:
        raise KeysError(f"{path}:1: the header must be {HEADER_LINE}")
    return _parsed(path, lines)


def _read_lines(path: Path, missing_ok: bool) -> list[str] | None:
    """Return the keys file's lines as written (without line ends or a byte order mark); None: it is missing."""
    if not path.exists():
        if missing_ok:
            return None
        raise KeysError(f"{path}: the keys file is missing; create it with `riskapi keys add USER`")
    if not path.is_file():
        raise KeysError(f"{path}: is not a file")
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise KeysError(f"{path}: cannot be read: {error.strerror}") from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # a byte order mark, as spreadsheets save UTF-8
    lines = [line.rstrip(b"\r").decode("utf-8", "surrogateescape") for line in raw.split(b"\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _header(lines: list[str]) -> list[str] | None:
    header = _cells(lines[0]) if lines else None
    return None if header is None else [cell.strip().lower() for cell in header]


def _parsed(path: Path, lines: list[str]) -> KeysFile:
    texts, keys, problems = [HEADER_LINE], [], []  # problems: (line, what)
    users: dict[str, tuple[str, int]] = {}
    holders: dict[str, list[int]] = {}  # digest → the lines that hold it
    for number, line in enumerate(lines[1:], start=2):
        texts.append(line)
        try:
            line.encode("utf-8", "surrogateescape").decode("utf-8")
        except UnicodeDecodeError as error:
            problems.append((number, f"is not UTF-8 text ({error.reason} at byte {error.start})"))
            continue
        if not line.strip():
            continue
        try:
            key = _parse_line(line, number)
        except KeysError as error:
            problems.append((number, error.message))
            continue
        holders.setdefault(key.digest, []).append(number)
        first = users.setdefault(identity(key.user), (key.user, number))
        if first[0] != key.user:
            problems.append((number, f"user {key.user!r} is {first[0]!r} of line {first[1]} in other letter case "
                                     f"(users are the same whatever their case: write it {first[0]!r})"))
            continue
        keys.append(key)
    shared = {digest: numbers for digest, numbers in holders.items() if len(numbers) > 1}
    for numbers in shared.values():
        problems.append((numbers[-1], f"the key of line {numbers[0]} again (each key must be unique; lines "
                                      f"{', '.join(map(str, numbers))} serve no key until one is left)"))
    keys = [k for k in keys if k.digest not in shared]
    return KeysFile(path, keys, [f"{path}:{number}: {what}" for number, what in sorted(problems)], texts)


def migrate(path: Path) -> bool:
    """Convert a keys file of the format before digests in place: each key becomes its digest under the
    file's secret (made now), and every other cell and line stays as written; a bad line's key too, where
    it is one. Returns whether the file was converted (False: it holds digests already)."""
    with keys_lock(path):
        lines = _read_lines(path, missing_ok=True)
        if lines is None or _header(lines) != PLAIN_HEADER:
            return False
        secret = secret_for(path, digests_held=False)
        converted = [HEADER_LINE]
        for line in lines[1:]:
            cells = _cells(line)
            if cells is None or len(cells) < 2:
                converted.append(line)
                continue
            cells = [cell.strip() for cell in cells]
            with contextlib.suppress(KeysError):  # not a key: kept, and its line's problem says so
                cells[1] = key_digest(secret, normalise_key(cells[1]))
            converted.append(",".join(cells + ([""] if len(cells) == len(PLAIN_HEADER) else [])))
        try:
            write_lines(path, converted)
        except OSError as error:
            raise KeysError(f"{path}: holds keys as typed and cannot be converted to their digests in place "
                            f"({error.strerror}); run `riskapi keys migrate` as the file's owner") from None
    return True


HEADER_LINE = ",".join(HEADER)


_HELD = threading.local()  # the locks this thread holds: an edit that reads the file (and converts it) again


@contextlib.contextmanager
def keys_lock(path: Path) -> Iterator[None]:
    """Make one keys edit at a time: read, change and replace the file under an exclusive lock beside it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(f".{path.name}.lock")
    held = _HELD.__dict__.setdefault("locks", set())
    if lock in held:
        yield
        return
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the handle closes, or its process ends
        held.add(lock)
        try:
            yield
        finally:
            held.discard(lock)


def _shown(cell: str) -> str:
    """Return a cell as a problem quotes it; one that could be a key (columns swapped) only masked."""
    return f"'{cell[:4]}…{cell[-4:]}'" if KEY.fullmatch(cell.lower()) else repr(cell)


def _parse_line(line: str, number: int) -> ApiKey:
    row = _cells(line)
    if row is None:
        raise KeysError("malformed CSV (an unclosed quote?)")
    if len(row) != len(HEADER):
        raise KeysError(f"has {len(row)} cells, expected {len(HEADER)}: {HEADER_LINE}")
    user, digest, models, active, expires = (cell.strip() for cell in row)
    if not USER.fullmatch(user):
        raise KeysError(f"user {_shown(user)} {USER_RULE}")
    if not DIGEST.fullmatch(digest.lower()):
        raise KeysError("key_digest is not a key's digest (40 hex characters); a key is added with "
                        "`riskapi keys add USER --key KEY`, which keeps only its digest")
    granted = {m.strip() for m in models.split(";") if m.strip()}
    preview = PREVIEW_GRANT in granted
    granted.discard(PREVIEW_GRANT)
    for model in granted:
        if not routes.MODEL_CODE.fullmatch(model):
            raise KeysError(f"model {_shown(model)} is not a model code (separate several with ';'; "
                            f"{PREVIEW_GRANT} lets a key read staged releases)")
    if active not in ("yes", "no"):
        raise KeysError(f"active {_shown(active)} must be yes or no")
    return ApiKey(user, digest.lower(), tuple(sorted(granted)), active == "yes", preview, _instant(expires), number)


def _instant(cell: str) -> int | None:
    """Return an expires cell: empty (never), or an RFC 3339 instant in UTC (2027-01-31T00:00:00Z), in ms."""
    try:
        return parse_instant(cell) if cell else None
    except ValueError:
        raise KeysError(f"expires {_shown(cell)} must be empty or an instant in UTC, as 2027-01-31T00:00:00Z") from None


def key_line(k: ApiKey) -> str:
    grants = list(k.models) + ([PREVIEW_GRANT] if k.preview else [])
    return ",".join([k.user, k.digest, ";".join(grants), "yes" if k.active else "no",
                     "" if k.expires is None else rfc3339(k.expires)])


def write_lines(path: Path, lines: list[str]) -> None:
    """Replace the keys file in one step, readable by its owner only; a symlinked keys file is
    replaced where it points, so the link stays."""
    target = path.resolve() if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, "".join(f"{line}\n" for line in lines).encode("utf-8", "surrogateescape"), mode=0o600)


def write_keys(path: Path, keys: list[ApiKey]) -> None:
    """Write a keys file of exactly these keys."""
    write_lines(path, [HEADER_LINE] + [key_line(k) for k in keys])
