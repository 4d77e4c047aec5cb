"""The log's checkpoints (C2SP tlog-checkpoint): after each change to the log, its size and root hash,
signed with the operator's Ed25519 key (the file the site's `log_key` setting names) into a signed note,
and kept in the catalogue, every one: the latest is what servers answer at /api/v1/log/checkpoint, the
earlier ones what citations made then hold. A site without a key keeps unsigned checkpoints (the text
alone) and says so.

A checkpoint is signed only when the log at its size extends the log of the last one (the last's root is
that of the log's first entries): the publisher never signs two histories."""
from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ...contract.routes import DEFAULT_SITE_URL, url_for
from ...errors import CatalogueError
from ...system.files import sync_folder
from ..proof.note import Checkpoint, NoteError, Signer, read_signer, sign
from ..proof.tree import leaf_hash, root
from . import log
from .settings import LOG_KEY, LOG_ORIGIN, LOG_VKEY, SITE_URL, retired_vkeys


def log_origin(settings: dict[str, str], site_url: str | None = None) -> str:
    """Return the log's origin: the one fixed with its key (LOG_ORIGIN), else its URL prefix without the scheme
    (tlog-tiles), as `127.0.0.1:8080/api/v1/log`, from the site's address (`site_url`, where the site has not
    remembered it yet)."""
    if settings.get(LOG_ORIGIN):
        return settings[LOG_ORIGIN]
    return origin_of(site_url or settings.get(SITE_URL) or DEFAULT_SITE_URL)


def origin_of(site_url: str) -> str:
    """Return the origin a log served at this site address is named by: its URL prefix without the scheme."""
    return site_url.split("://", 1)[-1].rstrip("/") + url_for("log-checkpoint").rsplit("/", 1)[0]


@dataclass(frozen=True)
class Latest:
    """The newest checkpoint: its size and note, who signed it ('' for none), and every size checkpointed."""
    size: int
    note: bytes
    signer: str
    sizes: tuple[int, ...]


def read_key(path: Path) -> Signer:
    """Return the signing key in its file (Go's note form: PRIVATE+KEY+name+id+base64); a CatalogueError saying
    what is wrong with it."""
    try:
        return read_signer(path.read_text(encoding="ascii").strip())
    except (OSError, UnicodeDecodeError, NoteError) as error:
        raise CatalogueError(f"{path}: the log's signing key cannot be read ({error}); the log's checkpoint was "
                             "not signed (the release is published): correct it, or make one with `riskapi log "
                             "init`") from None


def latest(db: sqlite3.Connection) -> Latest | None:
    """Return the newest checkpoint, read alone (every history read does this: not every note ever signed)."""
    row = db.execute("SELECT size, note, signer FROM checkpoint ORDER BY rowid DESC LIMIT 1").fetchone()
    if row is None:
        return None
    sizes = tuple(size for size, in db.execute("SELECT DISTINCT size FROM checkpoint ORDER BY size"))
    size, note, signer = row
    return Latest(size, note, signer, sizes)


def checkpoint(db: sqlite3.Connection) -> bool:
    """Return a checkpoint of the log as it is, where the newest one does not already state it as this site would
    sign it now (signed by its key, or unsigned without one); inside the caller's transaction. Refused
    (CatalogueError) where the log no longer extends the last checkpoint. Its origin is the site's
    (LOG_ORIGIN, set with the key), else made from the site's address (an unsigned log's may change)."""
    settings = dict(db.execute("SELECT name, value FROM setting").fetchall())
    origin = log_origin(settings)
    leaves = [leaf_hash(entry) for entry in log.entries(db)]
    signer = read_key(Path(settings[LOG_KEY])) if settings.get(LOG_KEY) else None
    signed_by = signer.verifier.vkey if signer else ""
    last = db.execute("SELECT size, root, signer, note FROM checkpoint ORDER BY rowid DESC LIMIT 1").fetchone()
    if last is not None:
        size, last_root, last_signer, last_note = last
        if size > len(leaves) or root(leaves[:size]) != last_root:
            raise CatalogueError(f"the log of releases no longer extends its last checkpoint (size {size}): "
                                 "its history was rewritten; nothing was signed. Restore the catalogue the "
                                 "checkpoint was made from")
        if size == len(leaves) and last_signer == signed_by and last_note.startswith(f"{origin}\n".encode()):
            return False
    tree_root = root(leaves)
    text = Checkpoint(origin, len(leaves), tree_root).text()
    note = sign(text, [signer]) if signer else text
    db.execute("INSERT INTO checkpoint (size, root, note, signer) VALUES (?, ?, ?, ?)",
               (len(leaves), tree_root, note, signed_by))
    return True


def signing_key(settings: dict[str, str], site: Path, key_file: Path, rotate: bool) -> tuple[Signer, Path]:
    """Return the key the log is to be signed with, and its file: a new one written to `key_file`, named by the log's
    origin (fixed from then on) — or, where the file exists, the key it holds, if it is this log's (the key
    kept when a repair lost the site's settings). A log that has a key keeps it unless `rotate`: then
    checkpoints are signed with a new one (those signed before still verify with the old), and the key in
    use, where `key_file` holds it, is kept beside it (retire_key). A file inside the site is refused:
    nothing there may be a secret."""
    key_file = key_file.resolve()
    if key_file.is_relative_to(site.resolve()):
        raise CatalogueError(f"{key_file}: the log's signing key must be kept outside the site folder {site} "
                             "(nothing in it may be a secret); nothing was changed")
    current = settings.get(LOG_KEY)
    if current and not rotate and Path(current) != key_file:
        raise CatalogueError(f"the log of {site} is signed with the key in {current} already; nothing was "
                             "changed (--rotate makes a new one)")
    origin = log_origin(settings)
    if key_file.exists():
        signer = read_key(key_file)
        if signer.name != origin:
            raise CatalogueError(f"{key_file} holds the key of another log ({signer.name}, not {origin}); nothing "
                                 "was changed: name a new file")
        if not (rotate and signer.verifier.vkey == settings.get(LOG_VKEY)):
            return signer, key_file
        signer = Signer.generate(origin)
        retire_key(key_file, signer)
        return signer, key_file
    signer = Signer.generate(origin)
    write_key(key_file, signer)
    return signer, key_file


def retired_key_file(key_file: Path, signer: Signer) -> Path:
    """Return where a rotation keeps a key it replaced: beside its file, named by its key ID."""
    return key_file.with_name(f"{key_file.name}.{signer.verifier.id:08x}.retired")


def retire_key(key_file: Path, new: Signer) -> None:
    """Put `new` in place of the key in `key_file`, whose file is kept beside (retired_key_file) first: a stop at
    any point leaves the old key in place or the new one, and the old one's file kept."""
    old = read_key(key_file)
    kept = retired_key_file(key_file, old)
    if not kept.exists():
        os.link(key_file, kept)
    fresh = key_file.with_name(key_file.name + ".new")
    fresh.unlink(missing_ok=True)
    write_key(fresh, new)
    os.replace(fresh, key_file)
    sync_folder(key_file.parent)


def write_key(path: Path, signer: Signer) -> None:
    """Write the signing key into a new file only its owner may read (mode 0600, made so: never readable by
    others for a moment); a file already there is not overwritten."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="ascii") as out:
        out.write(signer.skey + "\n")
        out.flush()
        os.fsync(out.fileno())


@dataclass(frozen=True)
class LogIdentity:
    """What the API root says of the log: its origin, the verifier key its checkpoints are signed with
    (None: unsigned) and those of its earlier keys, which checkpoints signed before a rotation verify with."""
    origin: str
    vkey: str | None
    retired: tuple[str, ...] = ()


def log_identity(settings: dict[str, str], site_url: str | None = None) -> LogIdentity:
    """Return the log's identity as a site's settings have it (`site_url`: the site's address now, where it has not
    remembered it yet)."""
    return LogIdentity(log_origin(settings, site_url), settings.get(LOG_VKEY), tuple(retired_vkeys(settings)))


# ---- the witnesses a checkpoint is sent to (witnesses.py sends it), and the cosignatures they answered

def add_witness(db: sqlite3.Connection, url: str, vkey: str) -> None:
    db.execute("INSERT INTO witness (url, vkey) VALUES (?, ?) ON CONFLICT (url) DO UPDATE SET vkey = excluded.vkey",
               (url, vkey))


def witnesses(db: sqlite3.Connection) -> list[tuple[str, str, int]]:
    """Return each witness: its address, its verifier key, the log's size it last cosigned."""
    return db.execute("SELECT url, vkey, size FROM witness ORDER BY url").fetchall()


def cosigned(db: sqlite3.Connection, url: str, size: int) -> None:
    db.execute("UPDATE witness SET size = ? WHERE url = ?", (size, url))


def add_cosignatures(db: sqlite3.Connection, note: bytes) -> None:
    """Store the newest checkpoint again, its note with the witnesses' cosignatures: what servers answer now."""
    db.execute("INSERT INTO checkpoint (size, root, note, signer) SELECT size, root, ?, signer FROM checkpoint "
               "WHERE rowid = (SELECT max(rowid) FROM checkpoint)", (note,))
