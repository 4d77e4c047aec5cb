"""The keys file (CSV: user, key, models, active), read line by line and rewritten whole.

A bad line is a located problem of its own and serves no key, while every other line goes on working,
so a typo never takes the API down and never blocks a revocation. A rewrite (add, revoke) keeps every
other line exactly as it was written, bad ones included.
"""
from __future__ import annotations

import contextlib
import csv
import fcntl
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ...build.load.problems import SHOWN_PER_KIND
from ...contract import routes
from ...contract.encodings import identity
from ...contract.key_format import new_key
from ...errors import KeysError
from ...system.files import write_atomic
from .strength import KEY, key_weakness, normalise_key

HEADER = ["user", "key", "models", "active"]
USER = re.compile(r"[A-Za-z0-9._@-]{1,64}")
USER_RULE = "may only use letters, digits and . _ @ - (at most 64)"
# A grant in the models column that is no model (a model code cannot start with @): the key may read
# staged releases under their own id (riskapi build --stage), which no other key sees.
PREVIEW_GRANT = "@preview"


@dataclass(frozen=True)
class ApiKey:
    user: str
    key: str
    models: tuple[str, ...]  # granted custom models, sorted
    active: bool
    preview: bool = False  # may read staged releases (PREVIEW_GRANT)
    line: int = field(default=0, compare=False)  # where it is in the keys file (0: not from a file)

    @property
    def masked(self) -> str:
        return f"{self.key[:4]}…{self.key[-4:]}"


@dataclass
class KeysFile:
    """A keys file as read: the keys of its good lines, a located problem for every other line, and
    its lines as written (without line ends), which a rewrite keeps."""
    path: Path
    keys: list[ApiKey]
    problems: list[str]
    lines: list[str]

    def rows(self) -> Iterator[tuple[int, list[str]]]:
        """(index in lines, cells) of every line after the header that is one CSV record, bad or not."""
        for index, line in enumerate(self.lines[1:], start=1):
            row = _cells(line)
            if row:
                yield index, [cell.strip() for cell in row]

    def users(self) -> dict[str, str]:
        """Each user's identity → its spelling in the file, from every line that names a user (a bad
        line's too: a new user must not alias it once it is fixed)."""
        named: dict[str, str] = {}
        for _, row in self.rows():
            if USER.fullmatch(row[0]):
                named.setdefault(identity(row[0]), row[0])
        return named

    def holds(self, key: str) -> bool:
        """Whether any line, bad or not, holds this (normalised) key."""
        return any(len(row) > 1 and row[1].lower() == key for _, row in self.rows())

    def warning(self) -> str | None:
        """One message for every problem (None without any), saying the lines serve no key."""
        return problems_warning(len(self.problems), summarised(self.problems)) if self.problems else None


def summarised(problems: list[str]) -> list[str]:
    """The keys file's problems as they are shown: the first few of each kind (the same message but for
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
    """What `keys`, `serve` and `deploy` say of a keys file's bad lines (`shown`: summarised)."""
    return f"{count:,} line(s) of the keys file serve no key until fixed:\n  " + "\n  ".join(shown)


def _cells(line: str) -> list[str] | None:
    """The cells of one line of the keys file, or None where it is not one CSV record (no valid
    cell holds a quote, comma or line break, so each record is one line)."""
    try:
        return next(csv.reader([line], strict=True), [])
    except csv.Error:
        return None


def read_keys(path: Path, missing_ok: bool = True) -> list[ApiKey]:
    """The keys of every good line (see load_keys; its problems are the caller's to show)."""
    return load_keys(path, missing_ok).keys


def load_keys(path: Path, missing_ok: bool = True) -> KeysFile:
    """The keys file, line by line (a missing file has no keys, unless `missing_ok` is False).

    A line with a problem is skipped and named by file and line, never showing a key: a bad cell, a
    user that differs from an earlier line's only in letter case, a key that another line holds too
    (then no line of that key serves it: which user it belongs to is not known). Only a file that
    cannot be read at all, or a wrong header, is an error."""
    if not path.exists():
        if missing_ok:
            return KeysFile(path, [], [], [HEADER_LINE])
        raise KeysError(f"{path}: the keys file is missing; create it with `riskapi keys add USER`")
    if not path.is_file():
        raise KeysError(f"{path}: is not a file")
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise KeysError(f"{path}: cannot be read: {error.strerror}") from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # a byte order mark, as spreadsheets save UTF-8
    lines = [line.rstrip(b"\r") for line in raw.split(b"\n")]
    if lines and lines[-1] == b"":
        lines.pop()
    header = _cells(lines[0].decode("utf-8", "replace")) if lines else None
    if header is None or [cell.strip().lower() for cell in header] != HEADER:
        raise KeysError(f"{path}:1: the header must be {HEADER_LINE}")
    texts, keys, problems = [HEADER_LINE], [], []  # problems: (line, what)
    users: dict[str, tuple[str, int]] = {}
    holders: dict[str, list[int]] = {}  # key → the lines that hold it
    for number, data in enumerate(lines[1:], start=2):
        try:
            line = data.decode("utf-8")
        except UnicodeDecodeError as error:
            texts.append(data.decode("utf-8", "surrogateescape"))
            problems.append((number, f"is not UTF-8 text ({error.reason} at byte {error.start})"))
            continue
        texts.append(line)
        if not line.strip():
            continue
        try:
            key = _parse_line(line, number)
        except KeysError as error:
            problems.append((number, error.message))
            continue
        holders.setdefault(key.key, []).append(number)
        first = users.setdefault(identity(key.user), (key.user, number))
        if first[0] != key.user:
            problems.append((number, f"user {key.user!r} is {first[0]!r} of line {first[1]} in other letter case "
                                     f"(users are the same whatever their case: write it {first[0]!r})"))
            continue
        keys.append(key)
    shared = {key: numbers for key, numbers in holders.items() if len(numbers) > 1}
    for numbers in shared.values():
        problems.append((numbers[-1], f"the key of line {numbers[0]} again (each key must be unique; lines "
                                      f"{', '.join(map(str, numbers))} serve no key until one is left)"))
    keys = [k for k in keys if k.key not in shared]
    return KeysFile(path, keys, [f"{path}:{number}: {what}" for number, what in sorted(problems)], texts)


HEADER_LINE = ",".join(HEADER)


@contextlib.contextmanager
def keys_lock(path: Path) -> Iterator[None]:
    """One keys edit at a time: read, change and replace the file under an exclusive lock beside it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the handle closes, or its process ends
        yield


def _shown(cell: str) -> str:
    """A cell as a problem quotes it; one that could be a key (columns swapped) only masked."""
    return f"'{cell[:4]}…{cell[-4:]}'" if KEY.fullmatch(cell.lower()) else repr(cell)


def _parse_line(line: str, number: int) -> ApiKey:
    row = _cells(line)
    if row is None:
        raise KeysError("malformed CSV (an unclosed quote?)")
    if len(row) != len(HEADER):
        raise KeysError(f"has {len(row)} cells, expected {len(HEADER)}: {HEADER_LINE}")
    user, key, models, active = (cell.strip() for cell in row)
    if not USER.fullmatch(user):
        raise KeysError(f"user {_shown(user)} {USER_RULE}")
    granted = {m.strip() for m in models.split(";") if m.strip()}
    preview = PREVIEW_GRANT in granted
    granted.discard(PREVIEW_GRANT)
    for model in granted:
        if not routes.MODEL_CODE.fullmatch(model):
            raise KeysError(f"model {_shown(model)} is not a model code (separate several with ';'; "
                            f"{PREVIEW_GRANT} lets a key read staged releases)")
    if active not in ("yes", "no"):
        raise KeysError(f"active {_shown(active)} must be yes or no")
    return ApiKey(user, normalise_key(key), tuple(sorted(granted)), active == "yes", preview, number)


def key_line(k: ApiKey) -> str:
    grants = list(k.models) + ([PREVIEW_GRANT] if k.preview else [])
    return ",".join([k.user, k.key, ";".join(grants), "yes" if k.active else "no"])


def write_lines(path: Path, lines: list[str]) -> None:
    """Replace the keys file in one step, readable by its owner only; a symlinked keys file is
    replaced where it points, so the link stays."""
    target = path.resolve() if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, "".join(f"{line}\n" for line in lines).encode("utf-8", "surrogateescape"), mode=0o600)


def write_keys(path: Path, keys: list[ApiKey]) -> None:
    """A keys file of exactly these keys."""
    write_lines(path, [HEADER_LINE] + [key_line(k) for k in keys])


def add_key(path: Path, user: str, models: tuple[str, ...] = (), key: str | None = None,
            replace_old: bool = False, custom_models: tuple[str, ...] | None = None,
            allow_weak: bool = False, before_saving: Callable[[ApiKey], None] | None = None,
            preview: bool = False) -> ApiKey:
    """Add a key for `user` (a new random one unless given); `replace_old` revokes the user's other keys.

    With `custom_models` (the current release's), a grant of any other model is refused. A user that
    differs from one in the file only in letter case is refused (it would be the same user on every
    server); so is a given key under 128 bits (key_weakness) unless `allow_weak`. `before_saving` is
    given the new key once every check passed and before the file is replaced, so the key is shown
    even when the process is killed right after it is saved (with --replace, the only key left).
    `preview`: the key may also read staged releases."""
    if not USER.fullmatch(user):
        raise KeysError(f"user {user!r} {USER_RULE}")
    for model in models:
        if not routes.MODEL_CODE.fullmatch(model):
            raise KeysError(f"model {model!r} is not a model code")
    unknown = [m for m in models if custom_models is not None and m not in custom_models]
    if unknown:
        raise KeysError(f"{', '.join(unknown)} is not a custom model of the current release (its custom models: "
                        f"{', '.join(custom_models or ()) or 'none'}); check the name, or add --force to grant a model "
                        "a coming data release brings")
    if key:
        key = normalise_key(key)
        weakness = key_weakness(key)
        if weakness and not allow_weak:
            raise KeysError(f"that key is too easy to guess: {weakness}; leave out --key for a new random one "
                            "(--allow-weak accepts it, for keys clients already hold)")
    added = ApiKey(user, key or new_key(), tuple(sorted(set(models))), True, preview)
    with keys_lock(path):
        keys_file = load_keys(path)
        spelled = keys_file.users().get(identity(user), user)
        if spelled != user:
            raise KeysError(f"user {user!r} is {spelled!r} of the keys file in other letter case (users are the "
                            f"same whatever their case): write {spelled!r}")
        if keys_file.holds(added.key):
            raise KeysError("that key is already in the keys file; keys must be unique")
        lines = _with_user_revoked(keys_file, user) if replace_old else list(keys_file.lines)
        if before_saving:
            before_saving(added)
        write_lines(path, lines + [key_line(added)])
    return added


def _with_user_revoked(keys_file: KeysFile, user: str) -> list[str]:
    """The file's lines with every line of `user` (any letter case) set inactive; other lines as written."""
    lines = list(keys_file.lines)
    for index, row in keys_file.rows():
        if len(row) == len(HEADER) and identity(row[0]) == identity(user):
            row[3] = "no"
            lines[index] = ",".join(row)
    return lines


def revoke(path: Path, user: str) -> tuple[int, KeysFile]:
    """Deactivate every key of `user` (any letter case), whatever else is wrong in the file; return how
    many served keys were active, and the file as it was read (its problems are the caller's to show)."""
    with keys_lock(path):
        keys_file = load_keys(path, missing_ok=False)
        if identity(user) not in keys_file.users():
            raise KeysError(f"no user {user!r} in {path}")
        active = [k for k in keys_file.keys if identity(k.user) == identity(user) and k.active]
        write_lines(path, _with_user_revoked(keys_file, user))
    return len(active), keys_file
