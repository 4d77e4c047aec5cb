"""The webhook outbox (the `delivery` table): one event per release and subscriber, made once with its
webhook-id and body, which every attempt and every later `riskapi notify` sends again until it is
delivered, and never after. Publishing only fills it; deliveries run beside (serve/webhooks.py)."""
from __future__ import annotations

from dataclasses import dataclass

from . import instants
from .store import Catalogue

FAILING_FOR_MS = 24 * 3600 * 1000  # a subscriber failing this long is named by `riskapi status`


@dataclass(frozen=True)
class Outgoing:
    """One webhook event of the outbox: its webhook-id and body, as first made, and how it went."""
    message: str
    body: bytes
    status: int | None
    delivered: bool


@dataclass(frozen=True)
class Failing:
    """A subscriber with events not delivered: since when (the first live instant of the oldest one's
    release, ms), how many, and the last error."""
    user: str
    url: str
    since: int
    events: int
    error: str


def queue(catalogue: Catalogue, release: str, events: list[tuple[str, str, str, bytes]]
          ) -> dict[tuple[str, str], Outgoing]:
    """Return the outbox rows of `release` for these (user, url, new webhook-id, body): a row made once keeps its
    id and body (an event already there is not made again); by (user, url)."""
    with catalogue.transaction() as db:
        db.executemany("INSERT OR IGNORE INTO delivery (release, user, url, message, body) VALUES (?, ?, ?, ?, ?)",
                       [(release, *event) for event in events])
    rows = catalogue.db.execute("SELECT user, url, message, body, status, delivered_at FROM delivery "
                                "WHERE release = ?", (release,)).fetchall()
    return {(user, url): Outgoing(message, body, status, delivered_at is not None)
            for user, url, message, body, status, delivered_at in rows}


def attempted(catalogue: Catalogue, release: str, user: str, url: str, attempts: int, status: int | None,
              error: str, delivered: bool) -> None:
    with catalogue.transaction() as db:
        db.execute("UPDATE delivery SET attempts = attempts + ?, status = ?, error = ?, "
                   "delivered_at = CASE WHEN ? THEN ? ELSE delivered_at END "
                   "WHERE release = ? AND user = ? AND url = ?",
                   (attempts, status, error, delivered, instants.now_ms(), release, user, url))


def pending(catalogue: Catalogue) -> list[str]:
    """Return the releases with an event not yet delivered, oldest first."""
    return [release for release, in catalogue.db.execute(
        "SELECT release FROM delivery WHERE delivered_at IS NULL GROUP BY release ORDER BY release")]


def failing(catalogue: Catalogue, now: int, for_ms: int = FAILING_FOR_MS) -> list[Failing]:
    """Return the subscribers whose oldest undelivered event was tried and is `for_ms` old or older (its
    release first went live then)."""
    rows = catalogue.db.execute(
        "SELECT d.user, d.url, min(s.at), count(DISTINCT d.release), "
        "(SELECT error FROM delivery e WHERE e.user = d.user AND e.url = d.url AND e.delivered_at IS NULL "
        " ORDER BY e.release DESC LIMIT 1) "
        "FROM delivery d JOIN switch s ON s.release = d.release AND s.state = 'done' "
        "WHERE d.delivered_at IS NULL AND d.attempts > 0 GROUP BY d.user, d.url ORDER BY d.user, d.url").fetchall()
    return [Failing(user, url, since, events, error) for user, url, since, events, error in rows
            if since <= now - for_ms]
