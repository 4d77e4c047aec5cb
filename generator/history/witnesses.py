"""Witnesses of the log of releases (C2SP tlog-witness, tlog-cosignature): each new signed checkpoint is
sent to the site's witnesses with the proof that it extends the last one each cosigned; what they answer,
a timestamped Ed25519 cosignature each, is checked with the witness's key and published with the
checkpoint — so a client that trusts k of n witnesses knows the log it was shown is the one everybody
was shown. A witness that is down or refuses never stops a release; it is said, and the next run tries
again."""
from __future__ import annotations

import base64
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from ..errors import CatalogueError
from .catalogue import Catalogue, checkpoints
from .catalogue.log_copy import write_copy
from .proof.note import COSIGNATURE, DASH, NoteError, Verifier, cosigned_by, note_text, read_verifier
from .proof.tree import consistency_proof, leaf_hash

TIMEOUT = 10  # seconds, per witness


@dataclass(frozen=True)
class Cosigned:
    url: str
    size: int
    error: str = ""  # "" when it cosigned


def add_witness(site: Path, url: str, vkey: str) -> None:
    """Send each new checkpoint to the witness at `url` (its submission prefix), whose cosignatures verify
    with `vkey` (type 0x04)."""
    split = urllib.parse.urlsplit(url)
    if split.scheme not in ("http", "https") or not split.netloc:
        raise CatalogueError(f"{url}: a witness's address is an http(s) URL")
    try:
        read_verifier(vkey, (COSIGNATURE,))
    except NoteError as error:
        raise CatalogueError(f"{vkey[:60]}: not a witness's verifier key ({error})") from None
    with Catalogue.open(site) as catalogue:
        with catalogue.transaction() as db:
            checkpoints.add_witness(db, url.rstrip("/"), vkey)
        catalogue.keep_settings()


def witnesses(site: Path) -> list[tuple[str, str, int]]:
    with Catalogue.open(site) as catalogue:
        return checkpoints.witnesses(catalogue.db)


def _post(url: str, body: bytes) -> tuple[int, bytes]:
    request = urllib.request.Request(url + "/add-checkpoint", data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:  # noqa: S310 (http/https only)
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _ask(url: str, old: int, leaves: list[bytes], note: bytes) -> tuple[int, bytes]:
    """Return one add-checkpoint: the old size, the consistency proof from it, a blank line, the checkpoint; on a
    409 (the witness cosigned another size) once more from the size it says."""
    for _ in range(2):
        proof = consistency_proof(leaves, old) if 0 < old < len(leaves) else []
        body = f"old {old}\n".encode() + b"".join(base64.b64encode(h) + b"\n" for h in proof) + b"\n" + note
        status, answer = _post(url, body)
        if status != 409 or not answer.strip().isdigit() or int(answer) > len(leaves):
            return status, answer
        old = int(answer)
    return status, answer


def cosign(site: Path) -> list[Cosigned]:
    """Send the newest signed checkpoint to every witness that has not cosigned it, and publish the
    cosignatures that verify with it (the checkpoint's note with their lines)."""
    with Catalogue.open(site) as catalogue:
        latest = catalogue.latest_checkpoint()
        listed = checkpoints.witnesses(catalogue.db)
        entries = catalogue.log_entries(latest.size) if latest and latest.signer and listed else []
    if latest is None or not latest.signer or not listed:
        return []
    leaves = [leaf_hash(entry) for entry in entries]
    note, results = latest.note, []
    for url, vkey, size in listed:
        witness = read_verifier(vkey, (COSIGNATURE,))
        if size == latest.size and cosigned_by(note, [witness]):
            continue
        try:
            status, answer = _ask(url, size, leaves, latest.note)
        except (urllib.error.URLError, OSError) as error:
            results.append(Cosigned(url, size, f"not reached ({getattr(error, 'reason', error)})"))
            continue
        lines = answer.decode("utf-8", "replace")
        mine = "".join(line for line in lines.splitlines(keepends=True) if line.startswith(f"{DASH}{witness.name} "))
        try:
            if status != 200 or not cosigned_by(latest.note + mine.encode(), [witness]):
                raise NoteError(f"answered {status}: {lines.strip()[:120]}")
        except NoteError as error:
            results.append(Cosigned(url, size, str(error)))
            continue
        note = _without(note, witness) + mine.encode()
        results.append(Cosigned(url, latest.size))
        with Catalogue.open(site) as catalogue, catalogue.transaction() as db:
            checkpoints.cosigned(db, url, latest.size)
    if note != latest.note:
        with Catalogue.open(site) as catalogue:
            with catalogue.transaction() as db:
                checkpoints.add_cosignatures(db, note)
            write_copy(site, entries, latest.size, note)
    return results


def _without(note: bytes, witness: Verifier) -> bytes:
    """Return the note without the witness's earlier cosignature lines (a newer one replaces them)."""
    text = note_text(note)
    kept = [line for line in note[len(text) + 1:].decode().splitlines(keepends=True)
            if not line.startswith(f"{DASH}{witness.name} ")]
    return text + b"\n" + "".join(kept).encode()
