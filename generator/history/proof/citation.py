"""A citation: what a client keeps to show, later and to anyone, which bytes the API answered and that
they were live when relied on — checked offline against the operator's verifier key alone.

It holds the document's URL and SHA-256, its leaf index and inclusion proof in its release's tree, the
log entries that tell the release's story (the entry that made it live first, with its tree; each
switch to it and every entry after it up to the next switch, or to the end of the log; its prune), each
with its inclusion proof in the log, and the signed checkpoint they are proved against — and, where the
client held a checkpoint before (`since`), the proof that the log extends it. Each entry's proof can be
written as a C2SP tlog-proof (`tlog_proof`). The entries are neighbours in the log, so their proofs share
most of their hashes: each hash is written once (`hashes`), each proof names its hashes by position.

Live periods are proved, not told: the entries from a switch to the next switch are consecutive in the
log (indexes without a gap), so no switch between them can be left out."""
from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass

import orjson

from .entries import PRUNE, RELEASE, SWITCH, Entry, read_entry
from .leaves import ReleaseTree, document_leaf
from .note import Checkpoint, NoteError, Verifier, cosigned_by, note_text, open_note, read_checkpoint
from .tree import consistency_proof, inclusion_proof, leaf_hash, root, verify_consistency, verify_inclusion

FORMAT = "riskapi-citation/1"
TLOG_PROOF = "c2sp.org/tlog-proof@v1"


class CitationError(ValueError):
    """What does not hold in a citation, in one line."""


def _b64(hashes: list[bytes]) -> list[str]:
    return [base64.b64encode(h).decode() for h in hashes]


def _hashes(values: object, what: str) -> list[bytes]:
    if not isinstance(values, list):
        raise CitationError(f"{what}: not a list of hashes")
    try:
        decoded = [base64.b64decode(v, validate=True) for v in values]
    except (binascii.Error, ValueError, TypeError):
        raise CitationError(f"{what}: a hash that is not base64") from None
    if any(len(h) != 32 for h in decoded):
        raise CitationError(f"{what}: a hash that is not 32 bytes")
    return decoded


# ---- making one (riskapi cite): from what the servers answered --------------------------------------------

def make_citation(url: str, path: str, document: bytes, release: str, tree_leaves: list[bytes],
                  entries: list[bytes], checkpoint_note: bytes, since_note: bytes | None = None) -> dict:
    """Return the citation of `document`, answered at `url` (its leaf's `path`: the route's path and query) by
    `release`, given the release's tree (its leaf hashes, from its tiles), the log's entries up to the
    checkpoint and the signed checkpoint (and a checkpoint held before, `since_note`). Everything is
    checked against the checkpoint before it is written: a CitationError names what does not agree."""
    checkpoint = read_checkpoint(note_text(checkpoint_note))
    log_leaves = [leaf_hash(entry) for entry in entries[:checkpoint.size]]
    if len(log_leaves) != checkpoint.size or root(log_leaves) != checkpoint.root:
        raise CitationError("the log's entries served do not make the checkpoint's tree")
    read = [read_entry(entry) for entry in entries[:checkpoint.size]]
    first = next((i for i, e in enumerate(read) if e.event == RELEASE and e.release == release), None)
    if first is None:
        raise CitationError(f"the log names no release {release}: it was never live")
    stated = read[first].tree
    if stated is None or stated.size != len(tree_leaves) or root(tree_leaves) != stated.root:
        raise CitationError(f"the tiles of {release}'s tree do not make the tree its log entry states")
    sha256 = hashlib.sha256(document).hexdigest()
    leaf = leaf_hash(document_leaf(path, sha256))
    if leaf not in tree_leaves:
        raise CitationError(f"{path} with these bytes is not a document of {release}")
    index = tree_leaves.index(leaf)
    cited = {first}
    switches = [i for i, e in enumerate(read) if e.event == SWITCH]
    for i in switches:
        if read[i].release == release:
            following = next((j for j in switches if j > i), len(read) - 1)
            cited.update(range(i, following + 1))
    cited.update(i for i, e in enumerate(read) if e.event == PRUNE and e.release == release)
    citation: dict = {
        "format": FORMAT, "url": url,
        "document": {"path": path, "sha256": sha256, "size": len(document)},
        "release": release,
        "tree": {**ReleaseTree(len(tree_leaves), stated.root).as_json(), "index": index,
                 "proof": _b64(inclusion_proof(tree_leaves, index))},
        "entries": [],
        "checkpoint": checkpoint_note.decode(),
        "hashes": [],
    }
    shared: dict[bytes, int] = {}
    citation["entries"] = [{"index": i, "entry": entries[i].decode(),
                            "proof": [shared.setdefault(h, len(shared)) for h in inclusion_proof(log_leaves, i)]}
                           for i in sorted(cited)]
    citation["hashes"] = _b64(list(shared))
    if since_note is not None:
        since = read_checkpoint(note_text(since_note))
        if not 0 < since.size <= checkpoint.size or root(log_leaves[:since.size]) != since.root:
            raise CitationError(f"the log does not extend the checkpoint held before (size {since.size})")
        citation["since"] = {"checkpoint": since_note.decode(),
                             "proof": _b64(consistency_proof(log_leaves, since.size))}
    return citation


def tlog_proof(citation: dict, position: int) -> str:
    """Return the proof of the citation's `position`th entry as a C2SP tlog-proof: its index, its inclusion
    proof and the checkpoint."""
    cited = citation["entries"][position]
    hashes = [citation["hashes"][n] for n in cited["proof"]]
    return "\n".join([TLOG_PROOF, f"index {cited['index']}", *hashes, ""]) + "\n" + citation["checkpoint"]


# ---- checking one (riskapi verify): offline ----------------------------------------------------------------

@dataclass(frozen=True)
class Verified:
    release: str
    path: str
    sha256: str
    origin: str
    size: int  # the log's size at the checkpoint
    periods: tuple[tuple[str, str | None], ...]  # (from, until; None: still live at the checkpoint)
    pruned: str | None
    signed_by: tuple[str, ...]
    cosigners: tuple[str, ...] = ()


def _field(value: dict, name: str, kind: type, what: str) -> object:
    found = value.get(name) if isinstance(value, dict) else None
    if not isinstance(found, kind):
        raise CitationError(f"{what}: no {name}")
    return found


def _open(note: str, trusted: list[Verifier], what: str) -> tuple[Checkpoint, tuple[str, ...]]:
    try:
        opened = open_note(note.encode(), trusted)
        checkpoint = read_checkpoint(opened.text)
    except NoteError as error:
        raise CitationError(f"{what}: {error}") from None
    names = {vkey.split("+", 1)[0] for vkey in opened.verified}
    if checkpoint.origin not in names:
        raise CitationError(f"{what}: its origin {checkpoint.origin!r} is not the name of a trusted key "
                            f"({', '.join(sorted(names))})")
    return checkpoint, opened.verified


def verify_citation(data: bytes, trusted: list[Verifier], document: bytes | None = None,
                    since_note: bytes | None = None, witnesses: list[Verifier] | None = None,
                    quorum: int = 0) -> Verified:
    """Return every check of a citation, offline: the checkpoint signed by a trusted key; each entry in the log at
    it; the release's first entry stating the tree the document is proved in; the document's bytes (when
    given) those cited; the live periods from consecutive entries; and, with `since_note` (a checkpoint
    held before, signed by a trusted key), that the log extends it; and that `quorum` of `witnesses` cosigned
    the checkpoint (C2SP tlog-cosignature). A CitationError says what fails."""
    try:
        citation = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise CitationError(f"not a citation: {error}") from None
    if not isinstance(citation, dict) or citation.get("format") != FORMAT:
        raise CitationError(f"not a citation of the form {FORMAT}")
    checkpoint, signed_by = _open(str(_field(citation, "checkpoint", str, "the checkpoint")), trusted,
                                  "the checkpoint")
    try:
        cosigners = cosigned_by(str(citation["checkpoint"]).encode(), witnesses or [])
    except NoteError as error:
        raise CitationError(f"the checkpoint: {error}") from None
    if len(cosigners) < quorum:
        raise CitationError(f"the checkpoint is cosigned by {len(cosigners)} of the witnesses given; {quorum} needed")
    release = str(_field(citation, "release", str, "the citation"))
    cited = _field(citation, "entries", list, "the citation")
    assert isinstance(cited, list)
    hashes = _hashes(citation.get("hashes"), "the log's hashes")
    entries: dict[int, Entry] = {}
    for position, item in enumerate(cited):
        index = _field(item, "index", int, f"entry {position}")
        assert isinstance(index, int)
        raw = str(_field(item, "entry", str, f"entry {position}")).encode()
        named = _field(item, "proof", list, f"entry {index}")
        assert isinstance(named, list)
        if not all(isinstance(n, int) and 0 <= n < len(hashes) for n in named):
            raise CitationError(f"entry {index}'s proof names a hash the citation does not hold")
        proof = [hashes[n] for n in named]
        if not verify_inclusion(leaf_hash(raw), index, checkpoint.size, proof, checkpoint.root):
            raise CitationError(f"entry {index} is not in the log at the checkpoint (size {checkpoint.size})")
        try:
            entries[index] = read_entry(raw)
        except ValueError as error:
            raise CitationError(f"entry {index}: {error}") from None
    first = [i for i, e in entries.items() if e.event == RELEASE and e.release == release]
    if not first or entries[first[0]].tree is None:
        raise CitationError(f"no entry of the log making {release} live, with its tree")
    tree = entries[first[0]].tree
    assert tree is not None
    stated = _field(citation, "tree", dict, "the citation")
    assert isinstance(stated, dict)
    if stated.get("size") != tree.size or stated.get("root") != tree.as_json()["root"]:
        raise CitationError(f"the tree cited is not the one the log states for {release}")
    cited_document = _field(citation, "document", dict, "the citation")
    assert isinstance(cited_document, dict)
    path = str(_field(cited_document, "path", str, "the document"))
    sha256 = str(_field(cited_document, "sha256", str, "the document"))
    if document is not None and hashlib.sha256(document).hexdigest() != sha256:
        raise CitationError(f"the document given is not the one cited (its SHA-256 is not {sha256})")
    leaf_index = stated.get("index")
    if not isinstance(leaf_index, int) or not verify_inclusion(
            leaf_hash(document_leaf(path, sha256)), leaf_index, tree.size,
            _hashes(stated.get("proof"), "the document's proof"), tree.root):
        raise CitationError(f"{path} with SHA-256 {sha256} is not in the tree of {release}")
    periods = _periods(entries, release, checkpoint.size)
    pruned = next((e.at for e in entries.values() if e.event == PRUNE and e.release == release), None)
    if since_note is not None:
        _check_since(citation, since_note, trusted, checkpoint)
    return Verified(release, path, sha256, checkpoint.origin, checkpoint.size, periods, pruned, signed_by, cosigners)


def _periods(entries: dict[int, Entry], release: str, size: int) -> tuple[tuple[str, str | None], ...]:
    """Return each switch to the release, until the next switch: every entry between them must be cited (their
    indexes consecutive), or to the end of the log (then it is live at the checkpoint)."""
    periods = []
    for index in sorted(i for i, e in entries.items() if e.event == SWITCH and e.release == release):
        end, at = None, index + 1
        while at < size:
            if at not in entries:
                raise CitationError(f"entry {at} is missing: the period from entry {index} cannot be told")
            if entries[at].event == SWITCH:
                end = entries[at].at
                break
            at += 1
        periods.append((entries[index].at, end))
    if not periods:
        raise CitationError(f"no switch making {release} live is cited")
    return tuple(periods)


def _check_since(citation: dict, since_note: bytes, trusted: list[Verifier], checkpoint: Checkpoint) -> None:
    """Check that the log at the citation's checkpoint extends a checkpoint held before: the same checkpoint
    needs no proof; an earlier one needs the citation's consistency proof from it; one of the same size
    with another root is a fork, and a later one cannot be proved by this citation."""
    since, _ = _open(since_note.decode("utf-8", "replace"), trusted, "the checkpoint held before")
    if since.origin != checkpoint.origin:
        raise CitationError(f"the checkpoint held before is of another log ({since.origin})")
    if since.size > checkpoint.size:
        raise CitationError(f"the checkpoint held before (size {since.size}) is newer than the citation's "
                            f"(size {checkpoint.size}): cite again to prove it")
    if since.size == checkpoint.size:
        if since.root != checkpoint.root:
            raise CitationError(f"the log at the checkpoint (size {checkpoint.size}) is not the one held before "
                                "at the same size: its history was rewritten")
        return
    held = citation.get("since")
    if not isinstance(held, dict) or note_text(str(held.get("checkpoint", "")).encode()) != note_text(since_note):
        raise CitationError(f"the citation holds no proof from the checkpoint held before (size {since.size}): "
                            "cite again with --since")
    if not verify_consistency(since.size, checkpoint.size, since.root, checkpoint.root,
                              _hashes(held.get("proof"), "the consistency proof")):
        raise CitationError(f"the log at the checkpoint (size {checkpoint.size}) does not extend the one held "
                            f"before (size {since.size}): its history was rewritten")
