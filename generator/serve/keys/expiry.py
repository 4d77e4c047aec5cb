"""When keys end: the instants `keys add --expires`, `keys expire --at` and `keys rotate --grace` take,
and which keys end soon (`riskapi status`). A key's expiry is kept with its digest (keys_file.py); every
server compares it with its own clock at each request, so a key ends at its instant with no reload."""
from __future__ import annotations

import re

from ...errors import KeysError
from ...history.catalogue.instants import parse_instant, rfc3339, whole_second
from .keys_file import ApiKey

UNITS = {"s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
DURATION = re.compile(r"(\d+)\s*([smhdw])")
DATE = re.compile(r"\d{4}-\d\d-\d\d")
SOON_MS = 14 * UNITS["d"]  # `riskapi status` names keys that end within this


def duration_ms(text: str) -> int:
    """Return a span written as a number and a unit: `10s`, `90m`, `12h`, `7d`, `2w`."""
    found = DURATION.fullmatch(text.strip())
    if not found or int(found[1]) == 0:
        raise KeysError(f"{text!r} is not a duration: write a number and s, m, h, d or w (10s, 12h, 7d, 2w)")
    return int(found[1]) * UNITS[found[2]]


def instant_ms(text: str, now: int) -> int:
    """Return an instant as an operator writes one: RFC 3339 in UTC (2027-01-31T00:00:00Z), a date (midnight UTC),
    or a duration from `now` (30d, 12h, 5s); in whole seconds (rounded up), as every server writes it."""
    text = text.strip()
    if DATE.fullmatch(text):
        text += "T00:00:00Z"
    if DURATION.fullmatch(text):
        return whole_second(now + duration_ms(text))
    try:
        return whole_second(parse_instant(text.replace("+00:00", "Z")))
    except ValueError:
        raise KeysError(f"{text!r} is not an instant: write 2027-01-31T00:00:00Z (UTC), 2027-01-31, or a duration "
                        "from now (30d, 12h, 5s)") from None


def ending_soon(keys: list[ApiKey], now: int, within: int = SOON_MS) -> list[ApiKey]:
    """Return the active keys that end within `within` ms of `now` (not those that ended already), soonest first."""
    return sorted((k for k in keys if k.active and k.expires is not None and now < k.expires <= now + within),
                  key=lambda k: (k.expires, k.user))


def said(expires: int | None, now: int) -> str:
    """Return a key's expiry as `keys list` shows it."""
    if expires is None:
        return "-"
    return f"{'expired' if expires <= now else 'expires'} {rfc3339(expires)}"
