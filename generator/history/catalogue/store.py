"""The catalogue's file: opened (checked whole), made (a text journal imported), each state change one
transaction; `read_history` and `switching` are what the rest of riskapi uses."""
from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import orjson

from ...errors import CatalogueError
from ...system.files import sync_folder
from ..layout import current_release, releases
from ..proof.leaves import ReleaseTree
from . import checkpoints, instants, log
from .instants import built_at_ms
from .journal import REPAIR_HINT, import_journal
from .log_copy import CHECKPOINT, LOG_COPY, write_copy
from .migrations import VERSION as SCHEMA_VERSION
from .migrations import backfill_log, fill_trees, migrate
from .periods import History, Switch, settle_intents
from .schema import SCHEMA
from .settings import (
    LOG_KEY,
    LOG_ORIGIN,
    LOG_RETIRED,
    LOG_VKEY,
    SETTINGS_COPY,
    describe,
    read_settings_copy,
    retired_vkeys,
    write_settings_copy,
)
from .site_identity import SITE_ID, check_present, check_site, new_site_id

CATALOGUE = "catalogue.db"
JOURNAL = "history"  # the text journal of earlier versions, imported once


def catalogue_path(site: Path) -> Path:
    return site / CATALOGUE


def _connect(path: Path) -> sqlite3.Connection:
    """Connect in autocommit mode (transactions are explicit); the caller's synchronous FULL syncs each commit."""
    return sqlite3.connect(path, timeout=30, isolation_level=None)


ENVIRONMENT = ("readonly", "read-only", "unable to open", "full", "permission", "access")  # not the file's fault


def _damaged(path: Path, reason: str | sqlite3.Error) -> CatalogueError:
    """Return what is wrong with the catalogue, for the operator: a disk that cannot take a write (a full or
    read-only file system, no permission: nothing to repair), another process holding its lock for longer
    than the wait (a backup), or else damage (repair it)."""
    text = str(reason).lower()
    if isinstance(reason, sqlite3.OperationalError):
        if "locked" in text or "busy" in text:
            return CatalogueError(f"{path}: the release catalogue is locked by another process (a backup, or a "
                                  "riskapi command still running) for longer than 30 s; nothing was changed: run "
                                  "it again once that has finished")
        full = shutil.disk_usage(path.parent).free < (1 << 20)
        if full or any(word in text for word in ENVIRONMENT):
            return CatalogueError(f"{path}: {'No space left on device' if full else reason} (the release catalogue "
                                  "cannot be opened or written); nothing was changed")
    return CatalogueError(f"the release catalogue {path} cannot be read ({reason}); nothing was changed. "
                          f"{REPAIR_HINT}")


class Catalogue:
    """One open catalogue; every change is one transaction (BEGIN IMMEDIATE: writers wait on each other)."""

    def __init__(self, site: Path, connection: sqlite3.Connection):
        self.site = site
        self.path = catalogue_path(site)
        self.db = connection

    # ---- opening

    @classmethod
    def open(cls, site: Path) -> Catalogue:
        """Return the site's catalogue. A site without one is given one when it has no releases yet or a text
        journal to import; one that has releases gets a CatalogueError saying to repair, as a damaged
        catalogue does (checked whole: a torn page anywhere is found before anything is read or written)."""
        path = catalogue_path(site)
        if not path.is_file():
            if (site / JOURNAL).is_file() or not releases(site):
                return cls._make(site)
            raise CatalogueError(f"the release catalogue {path} is missing, though {site / 'releases'} holds "
                                 f"releases; nothing was changed. {REPAIR_HINT}")
        connection = _connect(path)
        failure = None
        try:
            connection.execute("PRAGMA synchronous = FULL")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            check = connection.execute("PRAGMA quick_check").fetchall() if 0 < version <= SCHEMA_VERSION else []
            if version > SCHEMA_VERSION:
                failure = CatalogueError(f"{path}: the release catalogue was written by a newer riskapi (its schema "
                                         f"is version {version}; this one reads up to {SCHEMA_VERSION}); nothing "
                                         "was changed: run that riskapi, or upgrade this one")
            elif version < 1:
                failure = _damaged(path, f"its schema is version {version}; this riskapi reads {SCHEMA_VERSION}")
            elif check != [("ok",)]:
                failure = _damaged(path, "; ".join(row[0] for row in check[:3]))
            else:
                failure = check_site(site, path, connection)
            if failure is None and version < SCHEMA_VERSION:
                migrate(connection, site, version)
        except sqlite3.DatabaseError as error:
            failure = _damaged(path, error)
        if failure is not None:
            # Closed out here, where the failed statement is gone with its traceback: a statement still
            # alive would keep the files open after close (a full disk could not be unmounted).
            connection.close()
            raise failure
        return cls(site, connection)

    @classmethod
    def make_empty(cls, site: Path) -> Catalogue:
        """Return a new, empty catalogue in place of whatever was there (repair)."""
        catalogue_path(site).unlink(missing_ok=True)
        journal = site / JOURNAL
        if journal.is_file():
            os.replace(journal, site / f"{JOURNAL}.imported")
        return cls._make(site)

    @classmethod
    def _make(cls, site: Path) -> Catalogue:
        """Return a new catalogue, made in a temporary file and moved into place whole (with the text journal
        imported, where there is one)."""
        site.mkdir(parents=True, exist_ok=True)
        path = catalogue_path(site)
        temporary = path.with_name(f".{CATALOGUE}.tmp-{os.getpid()}")
        temporary.unlink(missing_ok=True)
        connection = _connect(temporary)
        try:
            connection.execute("PRAGMA journal_mode = WAL")  # kept in the file: readers never wait for a writer
            connection.execute("PRAGMA synchronous = FULL")
            connection.executescript(f"BEGIN; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
            connection.execute("INSERT INTO setting (name, value) VALUES (?, ?)", (SITE_ID, new_site_id(site)))
            if (site / JOURNAL).is_file():
                import_journal(cls(site, connection), site / JOURNAL, current_release(site),
                               set(releases(site)))
                fill_trees(connection, site)
                backfill_log(connection)
        except BaseException as error:
            connection.close()
            temporary.unlink(missing_ok=True)
            if isinstance(error, sqlite3.DatabaseError):
                raise _damaged(path, error) from None
            raise
        connection.close()
        os.replace(temporary, path)
        sync_folder(site)  # the catalogue's name is on disk before anything relies on it
        if (site / JOURNAL).is_file():
            os.replace(site / JOURNAL, site / f"{JOURNAL}.imported")
        return cls.open(site)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Catalogue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Make one state change: committed whole (WAL, synced) or not at all."""
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
        """Return the catalogue reconciled with where `current` points (nothing written); a CatalogueError when it
        does not tell the site's present (identity.check_present). `current` is read before and after the
        catalogue, and the read made again if a switch moved it meanwhile: a catalogue and a link read at
        one moment always agree."""
        for _ in range(5):
            current = current_release(self.site)
            try:
                self.db.execute("BEGIN")  # one snapshot of every table
                try:
                    releases = self.db.execute("SELECT id, staged, removed_at, removed_by FROM release").fetchall()
                    switches = [Switch(*row) for row in self.db.execute(
                        "SELECT seq, action, release, at, clock, state FROM switch WHERE state != 'void' ORDER BY seq")]
                    settings = dict(self.db.execute("SELECT name, value FROM setting").fetchall())
                    latest = checkpoints.latest(self.db)
                finally:
                    self.db.execute("COMMIT")
            except sqlite3.DatabaseError as error:
                raise _damaged(self.path, error) from None
            if current_release(self.site) == current:
                break
        settled = settle_intents(switches, current)
        done = tuple(s for s in switches if settled.get(s.seq, s.state) == "done")
        check_present(self.path, self.site, current, done)
        took_effect = {s.seq for s in done}  # a prune made with a switch counts once that switch does
        removed = frozenset(r for r, _, at, by in releases if at is not None and (by is None or by in took_effect))
        return History(current, {r: bool(staged) for r, staged, _, _ in releases}, removed, done, settings, latest)

    # ---- writing

    def settle(self) -> None:
        """Store what a read would conclude of unconfirmed intents (a writer does so first, under the lock;
        nothing is written where there is none)."""
        if not self.db.execute("SELECT 1 FROM switch WHERE state = 'intent' LIMIT 1").fetchone():
            return
        with self.transaction() as db:
            rows = [Switch(*row) for row in db.execute(
                "SELECT seq, action, release, at, clock, state FROM switch WHERE state != 'void' ORDER BY seq")]
            for seq, state in sorted(settle_intents(rows, current_release(self.site)).items()):
                db.execute("UPDATE switch SET state = ? WHERE seq = ?", (state, seq))
                if state == "done":
                    log.log_switch(db, seq)
                else:  # the switch never happened: nor did the prune it implied
                    db.execute("UPDATE release SET removed_at = NULL, removed_by = NULL WHERE removed_by = ?", (seq,))
        self.checkpoint()

    def add_release(self, release: str, staged: bool = False, audiences: tuple[str, ...] = (),
                    tree: ReleaseTree | None = None) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR IGNORE INTO release (id, built_at, staged, audiences, tree_size, tree_root) "
                       "VALUES (?, ?, ?, ?, ?, ?)", (release, built_at_ms(release), int(staged), ",".join(audiences),
                                                     *((tree.size, tree.root) if tree else (None, None))))

    def fill_trees(self) -> None:
        """Record the tree of every release on disk that has none here, from its manifest (a repair)."""
        try:
            fill_trees(self.db, self.site)
        except sqlite3.DatabaseError as error:
            raise _damaged(self.path, error) from None

    def checkpoint(self) -> None:
        """Make the log's checkpoint as it now is, signed where the site has its key: its own transaction, after
        the change the log records is committed (a key that cannot be read leaves that change made and
        raises a CatalogueError saying so; the next change, or `riskapi log sign`, signs)."""
        with self.transaction() as db:
            made = checkpoints.checkpoint(db)
        latest = checkpoints.latest(self.db)
        if latest is not None and (made or not (self.site / LOG_COPY / CHECKPOINT).is_file()):
            write_copy(self.site, log.entries(self.db), latest.size, latest.note)

    def restore_log(self, entries: list[bytes], note: bytes) -> tuple[set[str], str | None]:
        """Return an empty catalogue given the history a copy of the log tells (log_copy.py): the log itself,
        verbatim, every release it names (with its tree), every switch with its instant, every prune, the
        checkpoint and the log's origin; one transaction. The releases it names, and the one live last."""
        with self.transaction() as db:
            return log.restore(db, entries, note)

    def use_log_key(self, key_file: Path, rotate: bool = False) -> str:
        """Return the log signed from now on with the key in `key_file` (made there, or one of this log's kept
        there: after a repair): checkpoints.signing_key; the checkpoint signed with it; its verifier key."""
        settings = self.settings()
        signer, path = checkpoints.signing_key(settings, self.site, key_file, rotate)
        vkey, before = signer.verifier.vkey, settings.get(LOG_VKEY)
        retired = [k for k in ([before] if before and before != vkey else []) + retired_vkeys(settings) if k != vkey]
        self.remember({LOG_KEY: str(path), LOG_ORIGIN: signer.name, LOG_VKEY: vkey,
                       LOG_RETIRED: orjson.dumps(retired).decode()})  # and signs (remember: checkpoint)
        return vkey

    def latest_checkpoint(self) -> checkpoints.Latest | None:
        return checkpoints.latest(self.db)

    def log_entries(self, size: int = -1) -> list[bytes]:
        """Return the log of releases, every entry in order (or its first `size`)."""
        return log.entries(self.db, size)

    def tree(self, release: str) -> ReleaseTree | None:
        """Return the release's Merkle tree as recorded; None where it is not known."""
        row = self.db.execute("SELECT tree_size, tree_root FROM release WHERE id = ?", (release,)).fetchone()
        return ReleaseTree(row[0], row[1]) if row and row[0] is not None else None

    def check_clock(self, reading: int | None = None) -> None:
        """Raise a ClockBehind where the clock (`reading`, else read now) is far behind its reading at the last switch
        not void (instants.refuse_clock_behind): asked by a build or promote before it changes anything."""
        last = self.db.execute("SELECT max(clock) FROM switch WHERE state != 'void'").fetchone()[0]
        if last is not None:
            instants.refuse_clock_behind(instants.now_ms() if reading is None else reading, last)

    def intend(self, action: str, release: str, recovered: int | None = None, prune: Sequence[str] = (),
               clock_behind_ok: bool = False) -> int:
        """Return the intent of a switch, before `current` is swapped, and the prune it implies: one transaction (a
        prune counts once its switch took effect; settle undoes it with a switch that never did). Its instant,
        read under the lock (a wait never back-dates it): the next whole second after the clock and the last
        switch (instants.switch_instant), a clock far behind refused unless `clock_behind_ok`. `recovered`:
        an instant known from elsewhere (a repair), kept unless the last switch is as late."""
        with self.transaction() as db:
            reading = instants.now_ms() if recovered is None else recovered
            last = db.execute("SELECT max(at) FROM switch").fetchone()[0]
            if recovered is None:
                if not clock_behind_ok:
                    self.check_clock(reading)
                at = instants.switch_instant(reading, last)
            else:
                at = max(instants.whole_second(recovered), instants.switch_instant(last, last) if last else 0)
            inserted = db.execute("INSERT INTO switch (action, release, at, clock, state) "
                                  "VALUES (?, ?, ?, ?, 'intent')", (action, release, at, reading))
            # pruned as of the switch's clock reading (as a prune on its own is): a log made anew from the
            # catalogue (log.backfill) places it right after its switch; the log dates it as the switch
            db.executemany("UPDATE release SET removed_at = ?, removed_by = ? WHERE id = ? AND removed_at IS NULL",
                           [(reading, inserted.lastrowid, going) for going in prune])
        assert inserted.lastrowid is not None  # an INSERT's row
        return inserted.lastrowid

    def confirm(self, seq: int) -> None:
        with self.transaction() as db:
            if db.execute("UPDATE switch SET state = 'done' WHERE seq = ? AND state = 'intent'", (seq,)).rowcount:
                log.log_switch(db, seq)
        self.checkpoint()

    def mark_removed(self, going: Iterable[str]) -> None:
        """Record a prune without a switch (a staged build's, `riskapi releases --prune`): one transaction, recorded
        before any folder goes, so a release half deleted is never on offer."""
        with self.transaction() as db:
            at = instants.now_ms()
            for release in going:
                if db.execute("UPDATE release SET removed_at = ? WHERE id = ? AND removed_at IS NULL",
                              (at, release)).rowcount:
                    log.log_prune(db, release, at)
        self.checkpoint()

    def remember(self, settings: dict[str, str]) -> None:
        """Remember the site's own settings (settings.py): the catalogue's, then the site's copy of them."""
        with self.transaction() as db:
            db.executemany("INSERT INTO setting (name, value) VALUES (?, ?) "
                           "ON CONFLICT (name) DO UPDATE SET value = excluded.value", settings.items())
        self.keep_settings()
        self.checkpoint()  # an unsigned log's origin follows the site's address

    def settings(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT name, value FROM setting").fetchall())

    def restore_settings(self) -> str:
        """Return the settings and witnesses of the site's copy (settings.SETTINGS_COPY) taken back by a new catalogue
        (a repair); the log's own origin, where its copy restored one, is kept. What was restored, said."""
        kept = read_settings_copy(self.site)
        if kept is None:
            return (f"the site kept no copy of its settings ({SETTINGS_COPY}): build with your --site-url, --keep "
                    "and --keep-days, and run `riskapi log init --key FILE` with the log's key file")
        settings, witnesses = kept
        named = self.settings().get(LOG_ORIGIN)
        if named:
            settings[LOG_ORIGIN] = named  # the log's checkpoints say what it is named
        with self.transaction() as db:
            for url, vkey in witnesses:
                checkpoints.add_witness(db, url, vkey)
        restored = f"restored the site's settings from {self.site / SETTINGS_COPY}: {describe(settings, witnesses)}"
        try:
            self.remember(settings)  # and signs with the key restored
        except CatalogueError as error:  # remembered; only its signature waits
            return f"{restored}; {error}"
        return restored

    def keep_settings(self) -> None:
        """Write the site's copy of its settings and witnesses (settings.SETTINGS_COPY) as they now are."""
        witnesses = [(url, vkey) for url, vkey, _ in checkpoints.witnesses(self.db)]
        write_settings_copy(self.site, self.settings(), witnesses)


def read_log(site: Path, size: int) -> list[bytes]:
    """Return the log's first `size` entries (a checkpoint's: the log only grows, so they are the same later)."""
    with Catalogue.open(site) as catalogue:
        return catalogue.log_entries(size)


def read_history(site: Path) -> History:
    """Return the site's history (a site with no releases and no catalogue: an empty one, nothing written)."""
    if not catalogue_path(site).is_file() and not (site / JOURNAL).is_file() and not releases(site):
        return History(current_release(site), {}, frozenset(), ())
    with Catalogue.open(site) as catalogue:
        return catalogue.history()


@contextlib.contextmanager
def switching(site: Path, action: str, release: str, prune: Sequence[str] = (),
              clock_behind_ok: bool = False) -> Iterator[None]:
    """Record a switch of `current` around the swap the caller makes: intent (with the prune it implies),
    swap, confirmation."""
    with Catalogue.open(site) as catalogue:
        catalogue.settle()
        seq = catalogue.intend(action, release, prune=prune, clock_behind_ok=clock_behind_ok)
        yield
        catalogue.confirm(seq)
