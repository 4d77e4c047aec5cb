"""Instants as the catalogue keeps them: milliseconds since 1970 (UTC), written as RFC 3339.

A switch of `current` is dated in whole seconds (`switch_instant`): HTTP-dates (Memento-Datetime, a
TimeMap's `datetime`, Accept-Datetime) carry whole seconds, so an instant the API writes can be asked back
as it is written and answer what it names."""
from __future__ import annotations

import datetime
import time

from ...contract.release_ids import built_at_ms
from ...errors import ClockBehind


def now_ms() -> int:
    return time.time_ns() // 1_000_000


SECOND = 1000
# How far the clock may read behind the last switch's reading: a small step (NTP's, a VM resumed) is dated
# after the last switch as ever; a larger one is a broken clock, and a switch is refused (ClockBehind).
CLOCK_TOLERANCE_MS = 60 * SECOND


def switch_instant(clock: int, last: int | None) -> int:
    """Return a switch's instant: the first whole second after both the clock's reading (taken under the
    catalogue's lock, so never before the switch can be served) and the last switch, so periods never
    overlap or run backwards, each at least a second long."""
    return (max(clock, last if last is not None else clock) // SECOND + 1) * SECOND


def whole_second(ms: int) -> int:
    """Return an instant rounded up to its whole second (instants recorded in milliseconds by earlier versions)."""
    return -(-ms // SECOND) * SECOND


def rfc3339(ms: int) -> str:
    """Return an instant as RFC 3339 UTC: whole seconds as `2026-11-23T12:11:17Z`, else with milliseconds."""
    moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(milliseconds=ms)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}Z" if ms % 1000 == 0 else f"{text}.{ms % 1000:03d}Z"


def parse_instant(text: str) -> int:
    """Return RFC 3339 UTC as written by rfc3339 (or the journal), in ms; a ValueError when it is not."""
    base, _, fraction = text.removesuffix("Z").partition(".")
    if not text.endswith("Z") or (fraction and not (fraction.isdigit() and len(fraction) <= 3)):
        raise ValueError(f"{text!r} is not an RFC 3339 UTC instant")
    moment = datetime.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return int(moment.timestamp()) * 1000 + int(fraction.ljust(3, "0") or 0)


def built_at(release_id: str) -> str:
    """Return a release id (UTC, `20261123T121117Z`; or a folder named after one, `.tmp-20261123T121117Z`) as an
    RFC 3339 time (`2026-11-23T12:11:17Z`)."""
    return rfc3339(built_at_ms(release_id))


def duration(ms: int) -> str:
    """Return a span of time as a person reads it: `7187 s (2 h 0 min)`, `75 s`."""
    seconds = ms / SECOND
    if seconds < 3600:
        return f"{seconds:.0f} s"
    return f"{seconds:.0f} s ({int(seconds // 3600)} h {int(seconds % 3600 // 60)} min)"


def refuse_clock_behind(reading: int, last_clock: int | None) -> None:
    """Raise a ClockBehind where the clock (`reading`) is behind the last switch's reading by more than the
    tolerance: nothing may be dated from it. Said before anything changes, with what to do."""
    if last_clock is None or last_clock - reading <= CLOCK_TOLERANCE_MS:
        return
    raise ClockBehind(
        f"this machine's clock reads {duration(last_clock - reading)} earlier than it did at the last switch "
        f"({rfc3339(last_clock)}), more than the {CLOCK_TOLERANCE_MS // SECOND} s a clock may step back; nothing "
        "was changed. A switch dated from it would be dated after the last one, not when it went live, so "
        "`as_of` would name the new release at instants it was not yet live. Set the clock right (NTP: "
        "`timedatectl set-ntp true`, or `date -s`), then run it again; or, to go on anyway, "
        "--accept-clock-behind (docs/operate.md says what it costs)")
