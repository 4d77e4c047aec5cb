"""Signed notes (C2SP signed-note, as Go's golang.org/x/mod/sumdb/note writes and reads them) with Ed25519
keys, and the checkpoint a log signs (C2SP tlog-checkpoint): its origin, size and root hash.

A note is its text (ending in a newline), a blank line, and a line per signature: an em dash, a space,
the key's name, a space, base64 of the key ID (4 bytes) and the signature. The key ID is the first 4
bytes of SHA-256(name, a newline, 0x01, the public key). A verifier key is `name+hex(ID)+base64(0x01 ||
public key)`; the private key, in Go's form, `PRIVATE+KEY+name+hex(ID)+base64(0x01 || seed)`."""
from __future__ import annotations

import base64
import binascii
import hashlib
import struct
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

ED25519 = 0x01  # the signature type of Ed25519 signatures
COSIGNATURE = 0x04  # of Ed25519 timestamped cosignatures (C2SP tlog-cosignature): a witness's
COSIGNED = b"cosignature/v1\ntime %d\n"  # what a cosignature signs, before the checkpoint's text
DASH = "\u2014 "  # a signature line's start: em dash, space
PRIVATE = "PRIVATE+KEY+"
MAX_SIGNATURES = 100  # a verifier must accept at least 16


class NoteError(ValueError):
    """A note, key or checkpoint that is malformed, or whose signature does not verify."""


def key_id(name: str, public: bytes, kind: int = ED25519) -> int:
    return struct.unpack(">I", hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + public).digest()[:4])[0]


def _check_name(name: str) -> None:
    if not name or any(c.isspace() or c == "+" for c in name):
        raise NoteError(f"a key name must be non-empty, without spaces or '+': {name!r}")


@dataclass(frozen=True)
class Verifier:
    name: str
    public: bytes  # 32 bytes
    kind: int = ED25519  # or COSIGNATURE: a witness's key

    @property
    def id(self) -> int:
        return key_id(self.name, self.public, self.kind)

    @property
    def vkey(self) -> str:
        """The verifier key, as clients are given it: `name+hex(ID)+base64(type || public key)`."""
        return f"{self.name}+{self.id:08x}+{base64.b64encode(bytes([self.kind]) + self.public).decode()}"

    def verifies(self, text: bytes, signature: bytes) -> bool:
        """Return whether `signature` signs `text`; a cosignature signs its timestamp (its first 8 bytes) and then
        the checkpoint's text."""
        if self.kind == COSIGNATURE:
            if len(signature) != 72:
                return False
            text, signature = COSIGNED % struct.unpack(">Q", signature[:8])[0] + text, signature[8:]
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(signature, text)
            return True
        except InvalidSignature:
            return False


@dataclass(frozen=True)
class Signer:
    name: str
    seed: bytes  # the 32-byte Ed25519 private key
    kind: int = ED25519  # or COSIGNATURE: a witness's key

    @classmethod
    def generate(cls, name: str, kind: int = ED25519) -> Signer:
        _check_name(name)
        key = Ed25519PrivateKey.generate()
        return cls(name, key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()), kind)

    @property
    def verifier(self) -> Verifier:
        key = Ed25519PrivateKey.from_private_bytes(self.seed)
        return Verifier(self.name, key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw), self.kind)

    @property
    def skey(self) -> str:
        """The private key in Go's form, which note.NewSigner reads."""
        key = base64.b64encode(bytes([self.kind]) + self.seed).decode()
        return f"{PRIVATE}{self.name}+{self.verifier.id:08x}+{key}"

    def signature_line(self, text: bytes, timestamp: int = 0) -> str:
        """Return the note signature line of `text`; a cosignature's (COSIGNATURE) dated `timestamp`."""
        stamp = struct.pack(">Q", timestamp) if self.kind == COSIGNATURE else b""
        signed = COSIGNED % timestamp + text if self.kind == COSIGNATURE else text
        signature = stamp + Ed25519PrivateKey.from_private_bytes(self.seed).sign(signed)
        payload = struct.pack(">I", self.verifier.id) + signature
        return f"{DASH}{self.name} {base64.b64encode(payload).decode()}\n"


def _key_parts(text: str, parts: int) -> list[str]:
    """Return a key's fields: up to the `parts - 1`th '+' (base64 holds '+' too)."""
    fields = text.strip().split("+", parts - 1)
    if len(fields) != parts:
        raise NoteError(f"not a key of the form name+id+base64: {text[:60]!r}")
    return fields


def _decoded(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise NoteError(f"not base64: {text[:60]!r}") from None


def _material(name: str, key: str, kinds: tuple[int, ...] = (ED25519,)) -> tuple[int, bytes]:
    """Return an Ed25519 key's type and 32 bytes from base64(type || key)."""
    _check_name(name)
    raw = _decoded(key)
    if len(raw) != 33 or raw[0] not in kinds:
        raise NoteError("only Ed25519 keys (type " + " or ".join(f"0x{k:02x}" for k in kinds) + ", 32 bytes) are taken")
    return raw[0], raw[1:]


def read_verifier(vkey: str, kinds: tuple[int, ...] = (ED25519,)) -> Verifier:
    """Return a verifier key (`name+id+base64`) of one of `kinds` (a log's: Ed25519; a witness's: COSIGNATURE)."""
    name, hex_id, key = _key_parts(vkey, 3)
    kind, public = _material(name, key, kinds)
    verifier = Verifier(name, public, kind)
    if hex_id != f"{verifier.id:08x}":
        raise NoteError(f"the key ID {hex_id!r} is not that of the key {name!r}")
    return verifier


def read_signer(skey: str) -> Signer:
    if not skey.startswith(PRIVATE):
        raise NoteError("not a private key (PRIVATE+KEY+name+id+base64)")
    name, hex_id, key = _key_parts(skey.removeprefix(PRIVATE), 3)
    kind, seed = _material(name, key, (ED25519, COSIGNATURE))
    signer = Signer(name, seed, kind)
    if hex_id != f"{signer.verifier.id:08x}":
        raise NoteError(f"the key ID {hex_id!r} is not that of the key {name!r}")
    return signer


def sign(text: bytes, signers: list[Signer]) -> bytes:
    """Return the note of `text` (non-empty lines' text ending in a newline) signed by each of `signers`."""
    if not text.endswith(b"\n") or b"\n\n" in text or any(b < 0x20 and b != 0x0A for b in text):
        raise NoteError("a note's text ends in a newline, has no blank line and no control character")
    return text + b"\n" + "".join(signer.signature_line(text) for signer in signers).encode()


@dataclass(frozen=True)
class Note:
    text: bytes
    signatures: tuple[tuple[str, int, bytes], ...]  # (name, key ID, signature) of each line
    verified: tuple[str, ...] = ()  # the verifier keys whose signatures verified


def read_note(data: bytes) -> Note:
    """Return a note's text and signature lines, unchecked; a NoteError where it is malformed."""
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        raise NoteError("a note that is not UTF-8") from None
    if any(ord(c) < 0x20 and c != "\n" for c in decoded):
        raise NoteError("a note with a control character")
    split = decoded.rfind("\n\n")
    if split < 0 or not decoded.endswith("\n"):
        raise NoteError("a note without its blank line and signature lines")
    text, lines = decoded[:split + 1], decoded[split + 2:].splitlines()
    if not lines or len(lines) > MAX_SIGNATURES:
        raise NoteError(f"a note with {len(lines)} signature lines")
    signatures = []
    for line in lines:
        if not line.startswith(DASH) or line.count(" ") != 2:
            raise NoteError(f"a malformed signature line: {line[:60]!r}")
        name, encoded = line[len(DASH):].split(" ")
        payload = _decoded(encoded)
        if len(payload) < 5:
            raise NoteError("a signature too short to hold a key ID")
        signatures.append((name, struct.unpack(">I", payload[:4])[0], payload[4:]))
    return Note(text.encode(), tuple(signatures))


def open_note(data: bytes, verifiers: list[Verifier]) -> Note:
    """Return the note, once a signature of a known key verifies (signatures of unknown keys are ignored; one of
    a known key that does not verify rejects the whole note); a NoteError otherwise."""
    note = read_note(data)
    verified = _verified_by(note, verifiers, "signature")
    if not verified:
        raise NoteError("no signature of a trusted key: "
                        + (", ".join(sorted({n for n, _, _ in note.signatures})) or "none"))
    return Note(note.text, note.signatures, tuple(verified))


@dataclass(frozen=True)
class Checkpoint:
    """A log's checkpoint (C2SP tlog-checkpoint): its origin, size and root hash."""
    origin: str
    size: int
    root: bytes

    def text(self) -> bytes:
        return f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode()}\n".encode()


def note_text(note: bytes) -> bytes:
    """Return a note's text, unchecked: before its blank line and signatures (a checkpoint served unsigned is its
    text alone)."""
    split = note.rfind(b"\n\n")
    return note[:split + 1] if split >= 0 else note


def read_checkpoint(text: bytes) -> Checkpoint:
    lines = text.decode("utf-8", "replace").split("\n")
    if len(lines) < 4 or lines[-1] != "" or not all(lines[:-1]):
        raise NoteError("a checkpoint is three or more non-empty lines: origin, size, root hash")
    origin, size, root = lines[:3]
    if not size.isdigit() or (size != "0" and size.startswith("0")):
        raise NoteError(f"a checkpoint's size is a decimal without leading zeros, not {size!r}")
    raw = _decoded(root)
    if len(raw) != 32:
        raise NoteError("a checkpoint's root hash is 32 bytes")
    return Checkpoint(origin, int(size), raw)


def cosigned_by(data: bytes, witnesses: list[Verifier]) -> tuple[str, ...]:
    """Return the witnesses (of `witnesses`) whose cosignature of the note verifies; a NoteError where a witness's
    line does not (a note one of its signatures fails is no note)."""
    return tuple(dict.fromkeys(_verified_by(read_note(data), witnesses, "cosignature")))


def _verified_by(note: Note, verifiers: list[Verifier], what: str) -> list[str]:
    """Return the keys of `verifiers` whose lines of the note verify (lines of other keys are ignored; one of a
    known key that does not verify is a NoteError)."""
    known = {(v.name, v.id): v for v in verifiers}
    verified = []
    for name, id_, signature in note.signatures:
        verifier = known.get((name, id_))
        if verifier is None:
            continue
        if not verifier.verifies(note.text, signature):
            raise NoteError(f"the {what} of {name} does not verify")
        verified.append(verifier.vkey)
    return verified
