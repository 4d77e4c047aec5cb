"""Which site a catalogue belongs to, and whether it tells this site's present: a catalogue copied from
another site, or restored from a backup older than the site's `current`, is refused by every command
(never believed: a build would prune on its word), with the repair named.

A site's id is made with its catalogue and written twice: into the catalogue (setting `site_id`) and into
the site folder (`site/site-id`, never served). The two must agree; a site and a catalogue from before ids
are given one on first use."""
from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

from ...errors import CatalogueError
from ...system.files import write_atomic
from .journal import REPAIR_HINT
from .periods import Switch

SITE_ID = "site-id"  # the site folder's file, and the catalogue's setting of the same name


def site_id_path(site: Path) -> Path:
    return site / SITE_ID


def read_site_id(site: Path) -> str | None:
    try:
        return site_id_path(site).read_text(encoding="ascii").strip() or None
    except (FileNotFoundError, UnicodeDecodeError):
        return None


def new_site_id(site: Path) -> str:
    """Return the site's id (made where it has none), for a catalogue made for it."""
    own = read_site_id(site)
    if own is None:
        own = uuid.uuid4().hex
        write_atomic(site_id_path(site), f"{own}\n".encode())
    return own


def catalogue_site_id(db: sqlite3.Connection) -> str | None:
    row = db.execute("SELECT value FROM setting WHERE name = ?", (SITE_ID,)).fetchone()
    return row[0] if row else None


def check_site(site: Path, path: Path, db: sqlite3.Connection) -> CatalogueError | None:
    """Return None when the catalogue is the site's (the same id in both; a site and catalogue from before ids are
    given one, where the disk lets them), else the error every command refuses with."""
    own, theirs = read_site_id(site), catalogue_site_id(db)
    if own is not None and own == theirs:
        return None
    if own is None and theirs is None:
        try:
            made = uuid.uuid4().hex
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT OR IGNORE INTO setting (name, value) VALUES (?, ?)", (SITE_ID, made))
            db.execute("COMMIT")
            write_atomic(site_id_path(site), f"{catalogue_site_id(db)}\n".encode())
        except (OSError, sqlite3.Error):
            if db.in_transaction:
                db.execute("ROLLBACK")
        return None  # a read-only site is read as it is
    if own is None and theirs is not None:
        # the id made into the catalogue and not yet into the site (a kill between the two): finished here;
        # a catalogue that is not the site's present is still refused (check_present)
        try:
            write_atomic(site_id_path(site), f"{theirs}\n".encode())
        except OSError:
            pass
        return None
    made_for = theirs or "(none: a catalogue older than site ids)"
    return CatalogueError(
        f"the release catalogue {path} is not this site's: it was made for site {made_for}, and {site_id_path(site)} "
        f"names {own} (a catalogue copied from another site, or restored from another site's backup?); nothing was "
        f"changed, nothing is pruned on its word. {REPAIR_HINT}")


def check_present(path: Path, site: Path, current: str | None, switches: tuple[Switch, ...]) -> None:
    """Raise a CatalogueError when the catalogue's last switch is not the release `current` names: it does not
    tell this site's present (an older backup, another site's copy), and must not be acted on."""
    if current is None or not switches or switches[-1].release == current:
        return
    raise CatalogueError(
        f"the release catalogue {path} does not match this site: it says release {switches[-1].release} went live "
        f"last, but {site / 'current'} names {current} (a catalogue restored from an older backup, or copied from "
        f"another site?); nothing was changed, nothing is pruned on its word. {REPAIR_HINT}")
