"""Every way a client writes a query value, as nginx sees it in `$arg_*` (raw, not URL-decoded).

As clients send them: requests/httpx and URLSearchParams send `United+States` and `d%27Ivoire`, curl and
encodeURIComponent send `%20` and a raw `'`; percent escapes come in upper or lower case; a browser
may send UTF-8 bytes raw. nginx's map keys already ignore ASCII letter case.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from itertools import product
from urllib.parse import quote

_ESCAPE = re.compile(r"%[0-9A-F]{2}")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

# Characters each kind of client leaves unescaped (besides letters and digits).
SAFE_SETS = (
    "-._~",  # RFC 3986: curl --data-urlencode, Python quote/quote_plus, httpx
    "-._~!*'()",  # encodeURIComponent
    "-._*",  # URLSearchParams / application/x-www-form-urlencoded in browsers
    "-._~!*'(),;:@/?$&=+",  # hand-written URLs: only spaces and non-ASCII escaped
)


@functools.lru_cache(maxsize=4096)
def client_encodings(value: str) -> tuple[str, ...]:
    """Return the raw query-string forms of `value` that real clients send, one per nginx map key (asked for
    each country name by the load's checks and again by the nginx maps: worked out once)."""
    forms: dict[str, str] = {}
    for text in dict.fromkeys((value, value.upper(), value.lower())):  # nginx folds ASCII letters only
        # (raw UTF-8 only where there is non-ASCII text, lower-case escapes only where there are escapes)
        raw_forms = (False,) if text.isascii() else (False, True)
        for safe in SAFE_SETS:
            quoted = quote(text, safe=safe + " ")
            if "&" in quoted or "#" in quoted:
                continue  # a raw & or # cannot be sent
            for space, upper_hex, raw_utf8 in product(("%20", "+"), (True, False), raw_forms):
                if "+" in text and space == "+":
                    continue  # + for space makes a literal + ambiguous
                encoded = quoted.replace(" ", space)
                if not upper_hex and "%" in encoded:
                    encoded = _lower_escapes(encoded)
                if raw_utf8:
                    encoded = _raw_non_ascii(text, encoded, upper_hex)
                forms.setdefault(ascii_folded(encoded), encoded)
    return tuple(sorted(forms.values()))


def _lower_escapes(text: str) -> str:
    return _ESCAPE.sub(lambda m: m[0].lower(), text)


def ascii_folded(text: str) -> str:
    """Return what nginx compares map keys on: ASCII letters lower-cased, other bytes as they are."""
    return text.translate(_ASCII_LOWER)


def _raw_non_ascii(text: str, encoded: str, upper_hex: bool) -> str:
    """Put non-ASCII characters back as raw UTF-8 (what a browser address bar may send)."""
    for ch in {c for c in text if ord(c) > 127}:
        escaped = quote(ch)
        encoded = encoded.replace(escaped if upper_hex else escaped.lower(), ch)
    return encoded


def identity(text: str) -> str:
    """Return what makes two names the same one everywhere (users, country names, …): Unicode compatibility
    forms folded (NFKC) and letter case folded. nginx and the edges compare names ignoring ASCII case,
    so two names with one identity would be one lookup key there: the data and the keys file refuse
    the second."""
    return unicodedata.normalize("NFKC", text).casefold()
