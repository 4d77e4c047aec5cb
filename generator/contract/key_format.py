"""The format of the API's keys, as GitHub's tokens have one: a prefix naming the API and the key's kind,
then 128 random bits and a checksum. A secret scanner finds a leaked key by its pattern (docs/operate.md
gives rules for two), and a mistyped key can be told from a key of this API without looking it up.

    cra_live_<25 random characters><7 checksum characters>       41 characters, [0-9a-z] after the prefix

Lower case only: nginx's maps and the edges compare keys ignoring letter case. 25 base-36 characters hold
129 bits; the checksum is the CRC-32 of everything before it, in base 36 (7 characters hold 2^32). Keys
issued before this format (32 hex digits, or a key given with --key) stay valid: only a key that starts
with the prefix is held to the checksum.

No server keeps a key: each keeps its digest (key_digest), the SHA-1 of the site's secret and the key. The
secret is 64 hex characters, exactly SHA-1's first block, so the hash of a key starts from a state made of
256 secret bits: without the secret a digest gives no key back, however weak the key. SHA-1 because it is
nginx's own hash (set-misc's set_sha1), the one way within 1 µs a request (docs/operate.md, "Keys at rest");
a digest needs only preimage resistance, which no known attack on SHA-1 touches."""
from __future__ import annotations

import hashlib
import re
import secrets
import zlib

PREFIX = "cra_"  # country risk API
KIND = "live"  # a key that reads the API (a later kind gets its own word here)
ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
RANDOM_CHARACTERS = 25  # 25 × log2(36) = 129.2 bits
CHECKSUM_CHARACTERS = 7  # 36^7 = 7.8e10 > 2^32
LENGTH = len(f"{PREFIX}{KIND}_") + RANDOM_CHARACTERS + CHECKSUM_CHARACTERS
# What a scanner looks for (the rules in docs/operate.md are this expression)
PATTERN = rf"{PREFIX}{KIND}_[0-9a-z]{{{RANDOM_CHARACTERS + CHECKSUM_CHARACTERS}}}"
# A key's two parts: what the checksum covers, and the checksum (the edges get it as it is: edge_description)
_KEY = re.compile(rf"({PREFIX}{KIND}_[0-9a-z]{{{RANDOM_CHARACTERS}}})([0-9a-z]{{{CHECKSUM_CHARACTERS}}})")


SECRET = re.compile(r"[0-9a-f]{64}")  # a site's key secret
DIGEST = re.compile(r"[0-9a-f]{40}")  # a key's digest, as the keys file and every server hold it
KEY_ID_CHARACTERS = 8  # a key's short id: the start of its digest, which names it in lists and logs


def new_secret() -> str:
    """Return a new site secret: 256 random bits in hex."""
    return secrets.token_hex(32)


def key_digest(secret: str, key: str) -> str:
    """Return what every server holds of a (lower-cased) key: the SHA-1 of the site's secret and the key, in hex.
    nginx works it out with `set_sha1 $key_digest "$key_secret$folded_key"`, the edges with their SHA-1."""
    return hashlib.sha1((secret + key).encode("utf-8")).hexdigest()


def edge_description() -> dict[str, object]:
    """Return the format as the edges and njs check it (keycheck.js's mistyped): the prefix, and an expression
    whose two groups are what the checksum covers and the checksum; and how long a key's short id is."""
    return {"prefix": PREFIX, "pattern": f"^{_KEY.pattern}$", "checksum_characters": CHECKSUM_CHARACTERS,
            "id_characters": KEY_ID_CHARACTERS}


def checksum(body: str) -> str:
    """Return the checksum of a key's prefix and random part: their CRC-32, in base 36, zero-padded."""
    value, digits = zlib.crc32(body.encode("ascii")), []
    for _ in range(CHECKSUM_CHARACTERS):
        value, digit = divmod(value, len(ALPHABET))
        digits.append(ALPHABET[digit])
    return "".join(reversed(digits))


def new_key() -> str:
    """Return a new key: the prefix, 129 random bits and the checksum."""
    body = f"{PREFIX}{KIND}_" + "".join(secrets.choice(ALPHABET) for _ in range(RANDOM_CHARACTERS))
    return body + checksum(body)


def checksum_problem(key: str) -> str | None:
    """Return why a (lower-cased) key that claims this API's format is not one of its keys, or None: a key
    without the prefix is of the format before it, and is looked up as it is."""
    if not key.startswith(PREFIX):
        return None
    found = _KEY.fullmatch(key)
    if found is None:
        return (f"a key starting {PREFIX} has {LENGTH} characters: {PREFIX}{KIND}_ then "
                f"{RANDOM_CHARACTERS + CHECKSUM_CHARACTERS} of 0-9 and a-z")
    if checksum(found[1]) != found[2]:
        return "its checksum does not match: it is not a key of this API (mistyped or cut short?)"
    return None
