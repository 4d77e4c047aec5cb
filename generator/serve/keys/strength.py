"""How strong a key is: a new one is 129 random bits in the API's key format, and one given with --key must be as
hard to guess."""
from __future__ import annotations

import math
import re

from ...contract import key_format
from ...errors import KeysError

KEY = re.compile(r"[a-z0-9._~-]{16,128}")
# A key given with --key must be as hard to guess as a generated one (128 bits): see key_weakness.
MIN_KEY_BITS = 128
MIN_DISTINCT_CHARACTERS = 8
KEY_ALPHABETS = ("0123456789", "0123456789abcdef", "abcdefghijklmnopqrstuvwxyz",
                 "0123456789abcdefghijklmnopqrstuvwxyz", "0123456789abcdefghijklmnopqrstuvwxyz._~-")


def normalise_key(key: str) -> str:
    folded = key.strip().lower()
    if not KEY.fullmatch(folded):
        raise KeysError("a key must be 16 to 128 characters of letters, digits and . _ ~ - "
                        "(it is stored in lower case, since nginx compares keys ignoring case)")
    problem = key_format.checksum_problem(folded)
    if problem:
        raise KeysError(f"that key is not a key of this API's format: {problem}")
    return folded


def key_bits(key: str) -> float:
    """Return the estimated strength of a key: its length × log2 of the smallest alphabet of generated keys
    that holds it (digits 3.3 bits a character, hex 4, letters 4.7, letters and digits 5.2, with
    . _ ~ - 5.3). A key of the format before this one (32 hex characters) is 128 bits."""
    alphabet = next(a for a in KEY_ALPHABETS if set(key) <= set(a))
    return len(key) * math.log2(len(alphabet))


def key_weakness(key: str) -> str | None:
    """Return why a (normalised) key is too easy to guess, or None: under 128 bits by key_bits, fewer than 8
    different characters, or a shorter text repeated (`passwordpassword…`, `0123…0123…`)."""
    bits = key_bits(key)
    if bits < MIN_KEY_BITS:
        return (f"it has about {bits:.0f} bits ({len(key)} characters of a {len(key) and 2 ** (bits / len(key)):.0f}-"
                f"character alphabet); {MIN_KEY_BITS} are needed, e.g. 32 random hex digits")
    if len(set(key)) < MIN_DISTINCT_CHARACTERS:
        return f"it uses only {len(set(key))} different characters"
    if re.fullmatch(r"(.+?)\1+", key):
        return "it repeats a shorter text"
    return None
