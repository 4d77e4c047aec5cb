"""The release catalogue: which releases a site has, which was live when, which are staged or pruned, the
site's own settings and the webhook outbox — one SQLite file, `site/catalogue.db`, outside the served tree.

Every switch of `current` is two transactions: its intent, committed before the `current` link is swapped,
and its confirmation after. A read reconciles the two with where `current` points: an unconfirmed intent
counts only when `current` names its release (the swap happened, its confirmation did not), else it never
happened, wherever it sits (`_settle`; a writer stores what it settled). Replayed, the switches are a stack: a
publish or promote pushes its release, a rollback pops back to its target, so the release under the top is
the one live before the current one — never one that was never live, never the one just rolled back from.

Instants are monotonic: a switch takes `max(clock, last instant + 1 ms)`, and the clock it read is kept,
so a clock stepped back is told (`History.clock_steps`), never a period that ends before it starts. Every
view of the history — the releases list, the TimeMap and TimeGate of each server, the feeds, the change
documents, the edges' tables — is derived from `History.periods`, the one ordered list of live periods.

A site written before the catalogue existed has a text journal (`site/history`); it is imported once,
line for line, and kept beside as `history.imported`.
"""
from __future__ import annotations

import contextlib
import datetime
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from .errors import CatalogueError

CATALOGUE = "catalogue.db"
JOURNAL = "history"  # the text journal of earlier versions, imported once
PUBLISH, ROLLBACK, PROMOTE, STAGE = "publish", "rollback", "promote", "stage"
SWITCHES = (PUBLISH, ROLLBACK, PROMOTE)
SCHEMA_VERSION = 1
SITE_URL, KEEP, KEEP_DAYS = "site_url", "keep", "keep_days"  # the site's settings a build remembers
REPAIR_HINT = "`riskapi releases --repair` rebuilds it from the release folders"

SCHEMA = """
CREATE TABLE release (
    id TEXT PRIMARY KEY,
    built_at INTEGER NOT NULL,          -- ms since 1970, UTC
    staged INTEGER NOT NULL DEFAULT 0,  -- built with --stage: answered to preview keys until promoted
    audiences TEXT NOT NULL DEFAULT '', -- the audiences it serves, comma-separated
    removed_at INTEGER                  -- when it was pruned (ms); NULL while on disk
) WITHOUT ROWID;
CREATE TABLE switch (
    seq INTEGER PRIMARY KEY,
    action TEXT NOT NULL CHECK (action IN ('publish', 'promote', 'rollback')),
    release TEXT NOT NULL REFERENCES release (id),
    at INTEGER NOT NULL,                -- ms, monotonic: max(clock, the last switch's + 1)
    clock INTEGER NOT NULL,             -- what the clock said (ms)
    state TEXT NOT NULL CHECK (state IN ('intent', 'done', 'void'))
);
CREATE TABLE setting (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE delivery (
    release TEXT NOT NULL,
    user TEXT NOT NULL,
    url TEXT NOT NULL,
    message TEXT NOT NULL UNIQUE,       -- the webhook-id of every attempt, in every run
    body BLOB NOT NULL,                 -- the event as first made: each attempt sends the same bytes
    attempts INTEGER NOT NULL DEFAULT 0,
    status INTEGER,                     -- the last answer's status; NULL: none came
    error TEXT NOT NULL DEFAULT '',
    delivered_at INTEGER,
    PRIMARY KEY (release, user, url)
);
"""


# ---------------------------------------------------------------------------------------------- instants

def now_ms() -> int:
    return time.time_ns() // 1_000_000


def rfc3339(ms: int) -> str:
    """An instant as RFC 3339 UTC: whole seconds as `2026-11-23T12:11:17Z`, else with milliseconds."""
    moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(milliseconds=ms)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}Z" if ms % 1000 == 0 else f"{text}.{ms % 1000:03d}Z"


def parse_instant(text: str) -> int:
    """RFC 3339 UTC as written by rfc3339 (or the journal), in ms; a ValueError when it is not."""
    base, _, fraction = text.removesuffix("Z").partition(".")
    if not text.endswith("Z") or (fraction and not (fraction.isdigit() and len(fraction) <= 3)):
        raise ValueError(f"{text!r} is not an RFC 3339 UTC instant")
    moment = datetime.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return int(moment.timestamp()) * 1000 + int(fraction.ljust(3, "0") or 0)


def built_at(release_id: str) -> str:
    """A release id (UTC, `20261123T121117Z`; or a folder named after one, `.tmp-20261123T121117Z`) as an
    RFC 3339 time (`2026-11-23T12:11:17Z`)."""
    return rfc3339(built_at_ms(release_id))


def built_at_ms(release_id: str) -> int:
    stamp = datetime.datetime.strptime(release_id.removeprefix(".tmp-")[:15], "%Y%m%dT%H%M%S")
    return int(stamp.replace(tzinfo=datetime.timezone.utc).timestamp()) * 1000


# ---------------------------------------------------------------------------------------------- the view

@dataclass(frozen=True)
class LivePeriod:
    """A stretch of time one release was live, in ms: from `start` until `end` (None: live now)."""
    release: str
    start: int
    end: int | None

    @property
    def start_text(self) -> str:
        return rfc3339(self.start)

    @property
    def end_text(self) -> str | None:
        return None if self.end is None else rfc3339(self.end)


@dataclass(frozen=True)
class Switch:
    seq: int
    action: str
    release: str
    at: int
    clock: int
    state: str


@dataclass(frozen=True)
class History:
    """The catalogue as read, reconciled with `current`: what every view of the releases is made from."""
    current: str | None
    built: dict[str, bool]  # every release the catalogue knows → built with --stage
    removed: frozenset[str]  # pruned
    switches: tuple[Switch, ...]  # those that took effect, in order
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def periods(self) -> list[LivePeriod]:
        """When each release was live, oldest first: each switch makes its release live from its instant
        until the next one's. A release rolled back to has a period for each time."""
        return [LivePeriod(s.release, s.at, following.at if following else None)
                for s, following in zip(self.switches, [*self.switches[1:], None])]

    @property
    def stack(self) -> list[str]:
        """The releases that were live, oldest first, as rollbacks left them; the last one is current."""
        stack: list[str] = []
        for switch in self.switches:
            if switch.action in (PUBLISH, PROMOTE):
                stack.append(switch.release)
            elif switch.release in stack:
                del stack[stack.index(switch.release) + 1:]  # back to the target: what came after is undone
            else:
                stack = [switch.release]
        return stack

    @property
    def ever_live(self) -> set[str]:
        return {s.release for s in self.switches} | ({self.current} if self.current else set())

    @property
    def staged(self) -> set[str]:
        """Built with --stage, never live since, not pruned."""
        return {r for r, staged in self.built.items() if staged} - self.ever_live - self.removed

    @property
    def gone(self) -> set[str]:
        """Releases that were live and were pruned."""
        return self.ever_live & self.removed

    @property
    def rollback_target(self) -> str | None:
        before = [r for r in self.stack[:-1] if r != self.current and r not in self.removed]
        return before[-1] if before else None

    @property
    def clock_steps(self) -> list[tuple[Switch, int]]:
        """Switches whose clock read earlier than the instant they were given, with the step (ms)."""
        return [(s, s.at - s.clock) for s in self.switches if s.clock < s.at - 1]

    def clock_notes(self) -> list[str]:
        return [f"the clock read {step / 1000:.3f} s before the previous switch when {switch.release} went live "
                f"({switch.action}, clock {rfc3339(switch.clock)}): it is dated {rfc3339(switch.at)}, after it"
                for switch, step in self.clock_steps]


@dataclass(frozen=True)
class Outgoing:
    """One webhook event of the outbox: its webhook-id and body, as first made, and how it went."""
    message: str
    body: bytes
    status: int | None
    delivered: bool


# ---------------------------------------------------------------------------------------------- the file

def catalogue_path(site: Path) -> Path:
    return site / CATALOGUE


def _connect(path: Path) -> sqlite3.Connection:
    """Autocommit (transactions are explicit); the caller sets synchronous FULL, so every commit is synced."""
    return sqlite3.connect(path, timeout=30, isolation_level=None)


def _damaged(path: Path, reason: str | sqlite3.Error) -> CatalogueError:
    """What is wrong with the catalogue, for the operator: damage (repair it), or a disk that cannot take a
    write (a full or read-only file system: nothing to repair)."""
    if isinstance(reason, sqlite3.OperationalError) and "malformed" not in str(reason):
        full = shutil.disk_usage(path.parent).free < (1 << 20)
        return CatalogueError(f"{path}: {'No space left on device' if full else reason} (the release catalogue "
                              "cannot be opened or written); nothing was changed")
    return CatalogueError(f"the release catalogue {path} cannot be read ({reason}); nothing was changed. "
                          f"{REPAIR_HINT}")


def _current(site: Path) -> str | None:
    link = site / "current"
    return Path(os.readlink(link)).name if link.is_symlink() else None


def _release_folders(site: Path) -> list[str]:
    folder = site / "releases"
    return [p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")] if folder.is_dir() else []


class Catalogue:
    """One open catalogue; every change is one transaction (BEGIN IMMEDIATE: writers wait on each other)."""

    def __init__(self, site: Path, connection: sqlite3.Connection):
        self.site = site
        self.path = catalogue_path(site)
        self.db = connection

    # ---- opening

    @classmethod
    def open(cls, site: Path) -> Catalogue:
        """The site's catalogue. A site without one is given one when it has no releases yet or a text
        journal to import; one that has releases gets a CatalogueError saying to repair, as a damaged
        catalogue does (checked whole: a torn page anywhere is found before anything is read or written)."""
        path = catalogue_path(site)
        if not path.is_file():
            if (site / JOURNAL).is_file() or not _release_folders(site):
                return cls._make(site)
            raise CatalogueError(f"the release catalogue {path} is missing, though {site / 'releases'} holds "
                                 f"releases; nothing was changed. {REPAIR_HINT}")
        connection = _connect(path)
        failure = None
        try:
            connection.execute("PRAGMA synchronous = FULL")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            check = connection.execute("PRAGMA quick_check").fetchall() if version == SCHEMA_VERSION else []
            if version != SCHEMA_VERSION:
                failure = _damaged(path, f"its schema is version {version}; this riskapi reads {SCHEMA_VERSION}")
            elif check != [("ok",)]:
                failure = _damaged(path, "; ".join(row[0] for row in check[:3]))
        except sqlite3.DatabaseError as error:
            failure = _damaged(path, error)
        if failure is not None:
            # Closed out here, where the failed statement is gone with its traceback: a statement still
            # alive would keep the files open after close (a full disk could not be unmounted).
            connection.close()
            raise failure
        return cls(site, connection)

    @classmethod
    def _make_empty(cls, site: Path) -> Catalogue:
        """A new, empty catalogue in place of whatever was there (repair)."""
        catalogue_path(site).unlink(missing_ok=True)
        journal = site / JOURNAL
        if journal.is_file():
            os.replace(journal, site / f"{JOURNAL}.imported")
        return cls._make(site)

    @classmethod
    def _make(cls, site: Path) -> Catalogue:
        """A new catalogue, made in a temporary file and moved into place whole (with the text journal
        imported, where there is one)."""
        site.mkdir(parents=True, exist_ok=True)
        path = catalogue_path(site)
        temporary = path.with_name(f".{CATALOGUE}.tmp-{os.getpid()}")
        temporary.unlink(missing_ok=True)
        connection = _connect(temporary)
        connection.execute("PRAGMA journal_mode = WAL")  # kept in the file: readers never wait for a writer
        connection.execute("PRAGMA synchronous = FULL")
        connection.executescript(f"BEGIN; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
        made = cls(site, connection)
        if (site / JOURNAL).is_file():
            made._import_journal(site / JOURNAL)
        connection.close()
        os.replace(temporary, path)
        if (site / JOURNAL).is_file():
            os.replace(site / JOURNAL, site / f"{JOURNAL}.imported")
        return cls.open(site)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Catalogue:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One state change: committed whole (WAL, synced) or not at all."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as error:
            raise _damaged(self.path, error) from None
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        try:
            self.db.execute("COMMIT")
        except sqlite3.DatabaseError as error:
            raise _damaged(self.path, error) from None

    # ---- reading

    def history(self) -> History:
        """The catalogue reconciled with where `current` points (nothing written)."""
        try:
            releases = self.db.execute("SELECT id, staged, removed_at FROM release").fetchall()
            switches = [Switch(*row) for row in self.db.execute(
                "SELECT seq, action, release, at, clock, state FROM switch WHERE state != 'void' ORDER BY seq")]
            settings = dict(self.db.execute("SELECT name, value FROM setting").fetchall())
        except sqlite3.DatabaseError as error:
            raise _damaged(self.path, error) from None
        current = _current(self.site)
        settled = _settle(switches, current)
        return History(current, {r: bool(staged) for r, staged, _ in releases},
                       frozenset(r for r, _, removed in releases if removed is not None),
                       tuple(s for s in switches if settled.get(s.seq, s.state) == "done"), settings)

    # ---- writing

    def settle(self) -> None:
        """Store what a read would conclude of unconfirmed intents (a writer does so first, under the lock;
        nothing is written where there is none)."""
        if not self.db.execute("SELECT 1 FROM switch WHERE state = 'intent' LIMIT 1").fetchone():
            return
        with self.transaction() as db:
            rows = [Switch(*row) for row in db.execute(
                "SELECT seq, action, release, at, clock, state FROM switch WHERE state != 'void' ORDER BY seq")]
            for seq, state in _settle(rows, _current(self.site)).items():
                db.execute("UPDATE switch SET state = ? WHERE seq = ?", (state, seq))

    def add_release(self, release: str, staged: bool = False, audiences: tuple[str, ...] = ()) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR IGNORE INTO release (id, built_at, staged, audiences) VALUES (?, ?, ?, ?)",
                       (release, built_at_ms(release), int(staged), ",".join(audiences)))

    def intend(self, action: str, release: str, clock: int | None = None) -> int:
        """The intent of a switch, before `current` is swapped; its instant max(clock, last + 1 ms)."""
        clock = now_ms() if clock is None else clock
        with self.transaction() as db:
            last = db.execute("SELECT max(at) FROM switch").fetchone()[0]
            at = clock if last is None else max(clock, last + 1)
            return db.execute("INSERT INTO switch (action, release, at, clock, state) VALUES (?, ?, ?, ?, 'intent')",
                              (action, release, at, clock)).lastrowid

    def confirm(self, seq: int) -> None:
        with self.transaction() as db:
            db.execute("UPDATE switch SET state = 'done' WHERE seq = ? AND state = 'intent'", (seq,))

    def mark_removed(self, release: str) -> None:
        """Recorded before the folder goes: a release half deleted is never on offer."""
        with self.transaction() as db:
            db.execute("UPDATE release SET removed_at = ? WHERE id = ? AND removed_at IS NULL", (now_ms(), release))

    def remember(self, settings: dict[str, str]) -> None:
        """The site's own settings (SITE_URL, KEEP, KEEP_DAYS), as the last build that published was given them."""
        with self.transaction() as db:
            db.executemany("INSERT INTO setting (name, value) VALUES (?, ?) "
                           "ON CONFLICT (name) DO UPDATE SET value = excluded.value", settings.items())

    # ---- the webhook outbox

    def outbox(self, release: str, events: list[tuple[str, str, str, bytes]]) -> dict[tuple[str, str], Outgoing]:
        """The outbox rows of `release` for these (user, url, new webhook-id, body): a row made once keeps
        its id and body (an event already there is not made again); by (user, url)."""
        with self.transaction() as db:
            db.executemany("INSERT OR IGNORE INTO delivery (release, user, url, message, body) VALUES (?, ?, ?, ?, ?)",
                           [(release, *event) for event in events])
        rows = self.db.execute("SELECT user, url, message, body, status, delivered_at FROM delivery WHERE release = ?",
                               (release,)).fetchall()
        return {(user, url): Outgoing(message, body, status, delivered_at is not None)
                for user, url, message, body, status, delivered_at in rows}

    def attempted(self, release: str, user: str, url: str, attempts: int, status: int | None, error: str,
                  delivered: bool) -> None:
        with self.transaction() as db:
            db.execute("UPDATE delivery SET attempts = attempts + ?, status = ?, error = ?, "
                       "delivered_at = CASE WHEN ? THEN ? ELSE delivered_at END "
                       "WHERE release = ? AND user = ? AND url = ?",
                       (attempts, status, error, delivered, now_ms(), release, user, url))

    # ---- the text journal of earlier versions

    def _import_journal(self, journal: Path) -> None:
        """Every line of a text journal (written by riskapi before the catalogue), as it was: stagings as
        staged releases, switches as done — but for those after the last whose replay ends at `current`,
        which never took effect (void). A line that cannot be read stops the import, named."""
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
        current = _current(self.site)
        for end in range(len(switches), 0, -1):  # what took effect: up to the last line replaying to current
            probe = History(current, {}, frozenset(), tuple(Switch(0, a, r, 0, 0, "done") for a, r, _ in switches[:end]))
            if probe.stack and probe.stack[-1] == current:
                taken = end
                break
        on_disk = set(_release_folders(self.site))
        for action, release, _ in lines:
            self.add_release(release, staged=action == STAGE)
        with self.transaction() as db:
            for release in {r for _, r, _ in lines} - on_disk:
                db.execute("UPDATE release SET removed_at = ? WHERE id = ?", (now_ms(), release))
            last = None
            for index, (action, release, at) in enumerate(switches):
                given = at if last is None else max(at, last + 1)
                db.execute("INSERT INTO switch (action, release, at, clock, state) VALUES (?, ?, ?, ?, ?)",
                           (action, release, given, at, "done" if index < taken else "void"))
                last = given


def _settle(switches: list[Switch], current: str | None) -> dict[int, str]:
    """What each unconfirmed intent was: done when it is the last switch and `current` names its release
    (the swap happened), else void. Writers settle before each intent, so only the last can be open."""
    settled = {}
    for index, switch in enumerate(switches):
        if switch.state == "intent":
            last = index == len(switches) - 1
            settled[switch.seq] = "done" if last and current == switch.release else "void"
    return settled


def read_history(site: Path) -> History:
    """The site's history (a site with no releases and no catalogue: an empty one, nothing written)."""
    if not catalogue_path(site).is_file() and not (site / JOURNAL).is_file() and not _release_folders(site):
        return History(_current(site), {}, frozenset(), ())
    with Catalogue.open(site) as catalogue:
        return catalogue.history()


@contextlib.contextmanager
def switching(site: Path, action: str, release: str) -> Iterator[None]:
    """Record a switch of `current` around the swap the caller makes: intent, swap, confirmation."""
    with Catalogue.open(site) as catalogue:
        catalogue.settle()
        seq = catalogue.intend(action, release)
        yield
        catalogue.confirm(seq)
