"""Signed webhooks: each subscriber is POSTed one `release.published` event per release, signed as the
Standard Webhooks specification says (webhook-id, webhook-timestamp, webhook-signature: HMAC-SHA256
with the subscriber's whsec_ secret), with the movers its key may see — read off the change document
of its audience, so a custom model's movers reach only subscribers granted it.

Subscribers live in subscribers.csv beside the keys file (0600: it holds the secrets); every delivery
is a JSON line of deliveries.log beside it (status and attempts, never a secret). A delivery is retried
on a 5xx, a 429, a timeout or a refused connection, with a bounded backoff; another 4xx is final."""
from __future__ import annotations

import base64
import csv
import hashlib
import hmac
import io
import os
import secrets
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path

import orjson

from .. import routes
from ..errors import RiskApiError
from ..files import write_atomic
from ..publish import RELEASES, current_release
from ..render.release_info import read_release_info, release_site_url
from ..encodings import identity
from .keys import keys_lock, read_keys, served_audiences

SUBSCRIBERS, DELIVERIES = "subscribers.csv", "deliveries.log"
HEADER = ["user", "url", "secret"]
PREFIX = "whsec_"
EVENT = "release.published"
RETRY_DELAYS = (1.0, 2.0, 4.0)  # seconds before the 2nd, 3rd and 4th attempt: at most 4 attempts
TIMEOUT = 10.0  # seconds an attempt may take


class WebhookError(RiskApiError):
    pass


@dataclass(frozen=True)
class Subscriber:
    user: str
    url: str
    secret: str

    def __repr__(self) -> str:  # never the secret, in a log or a traceback
        return f"Subscriber({self.user!r}, {self.url!r})"


@dataclass(frozen=True)
class Delivery:
    subscriber: Subscriber
    message: str
    status: int | None  # the last answer's status; None: none came
    attempts: int
    error: str = ""

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def subscribers_file(keys_file: Path) -> Path:
    return keys_file.with_name(SUBSCRIBERS)


def new_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def _secret_bytes(secret: str) -> bytes:
    if not secret.startswith(PREFIX):
        raise WebhookError(f"a webhook secret starts with {PREFIX} (then base64 of at least 24 random bytes)")
    try:
        key = base64.b64decode(secret[len(PREFIX):], validate=True)
    except ValueError:
        raise WebhookError(f"a webhook secret is {PREFIX} and base64; this one is not base64") from None
    if len(key) < 24:
        raise WebhookError(f"a webhook secret needs at least 24 random bytes; this one has {len(key)}")
    return key


def read_subscribers(keys_file: Path) -> list[Subscriber]:
    path = subscribers_file(keys_file)
    if not path.is_file():
        return []
    rows = list(csv.reader(io.StringIO(path.read_text())))
    return [Subscriber(*row) for row in rows[1:] if len(row) == len(HEADER)]


def _write(keys_file: Path, subscribers: list[Subscriber]) -> None:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows((s.user, s.url, s.secret) for s in subscribers)
    write_atomic(subscribers_file(keys_file), text.getvalue().encode(), mode=0o600)


def add_subscriber(keys_file: Path, user: str, url: str, secret: str | None = None) -> Subscriber:
    """Subscribe a user of the keys file (its key's grants decide what it is told) at an http(s) URL."""
    if not url.startswith(("https://", "http://")) or any(c in url for c in " \r\n,"):
        raise WebhookError(f"{url!r}: a subscriber's URL is http:// or https:// without spaces or commas")
    secret = secret or new_secret()
    _secret_bytes(secret)
    users = {identity(k.user): k.user for k in read_keys(keys_file)}
    if identity(user) not in users:
        raise WebhookError(f"no user {user!r} in {keys_file}: a subscriber is told what its key may see")
    with keys_lock(subscribers_file(keys_file)):
        subscribers = [s for s in read_subscribers(keys_file)
                       if not (identity(s.user) == identity(user) and s.url == url)]
        added = Subscriber(users[identity(user)], url, secret)
        _write(keys_file, subscribers + [added])
    return added


def remove_subscriber(keys_file: Path, user: str, url: str | None = None) -> int:
    with keys_lock(subscribers_file(keys_file)):
        subscribers = read_subscribers(keys_file)
        kept = [s for s in subscribers if not (identity(s.user) == identity(user) and url in (None, s.url))]
        _write(keys_file, kept)
    return len(subscribers) - len(kept)


def signature(secret: str, message: str, timestamp: int, body: bytes) -> str:
    """Standard Webhooks: v1, base64 of HMAC-SHA256 over `id.timestamp.body` with the secret's bytes."""
    signed = hmac.new(_secret_bytes(secret), f"{message}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(signed).decode()


def event(site: Path, release: str, audience: str) -> dict:
    """The release.published event a subscriber of this audience is sent: the release, its links, and
    the movers of the models its key may see (its audience's change document)."""
    folder = site / RELEASES / release
    changes = orjson.loads((folder / routes.release_changes(audience).file).read_bytes())
    site_url = release_site_url(folder) or routes.DEFAULT_SITE_URL
    scoped = f"{site_url}{routes.API}/releases/{release}/"
    movers = [{"code": m["code"], "classChanges": m["classChanges"], "ratingChanges": m["ratingChanges"]}
              for m in changes["models"] if m["classChanges"] or m["ratingChanges"]]
    return {"type": EVENT, "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "data": {"release": release, "previous": changes["previous"],
                     "links": {"release": scoped, "changes": scoped + "changes/", "page": f"{site_url}/docs/changes/"},
                     "movers": movers}}


def deliver(subscriber: Subscriber, body: bytes, delays=RETRY_DELAYS, timeout: float = TIMEOUT) -> Delivery:
    """POST one event, signed, retrying what may pass later (bounded: len(delays) + 1 attempts)."""
    message = f"msg_{uuid.uuid4().hex}"
    status, error, attempt = None, "", 0
    for attempt in range(1, len(delays) + 2):
        stamp = int(time.time())
        request = urllib.request.Request(subscriber.url, data=body, method="POST", headers={
            "Content-Type": "application/json", "User-Agent": "country-risk-api-webhooks",
            "webhook-id": message, "webhook-timestamp": str(stamp),
            "webhook-signature": signature(subscriber.secret, message, stamp, body)})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return Delivery(subscriber, message, answer.status, attempt)
        except urllib.error.HTTPError as refused:
            status, error = refused.code, f"HTTP {refused.code}"
            if refused.code < 500 and refused.code != 429:
                break  # the receiver said no: asking again would not change it
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as failed:
            status, error = None, str(getattr(failed, "reason", failed)) or type(failed).__name__
        if attempt <= len(delays):
            time.sleep(delays[attempt - 1])
    return Delivery(subscriber, message, status, attempt, error)


def notify(site: Path, keys_file: Path, release: str | None = None, delays=RETRY_DELAYS,
           timeout: float = TIMEOUT) -> list[Delivery]:
    """Send every subscriber the event of `release` (default: the current one) and log each delivery."""
    release = release or current_release(site)
    if release is None or not (site / RELEASES / release).is_dir():
        raise WebhookError(f"no release {release!r} in {site}")
    keys = read_keys(keys_file)
    served = {identity(user): audience for user, (_, audience) in
              served_audiences(keys, *read_release_info(site / RELEASES / release)).items()}
    deliveries = []
    for subscriber in read_subscribers(keys_file):
        if identity(subscriber.user) not in served:  # its keys were revoked: told nothing
            continue
        body = orjson.dumps(event(site, release, served[identity(subscriber.user)]))
        done = deliver(subscriber, body, delays, timeout)
        deliveries.append(done)
        _log(keys_file, release, done)
    return deliveries


def _log(keys_file: Path, release: str, done: Delivery) -> None:
    line = orjson.dumps({"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "event": EVENT, "release": release,
                         "user": done.subscriber.user, "url": done.subscriber.url, "message": done.message,
                         "status": done.status, "attempts": done.attempts, "delivered": done.delivered,
                         "error": done.error})
    path = keys_file.with_name(DELIVERIES)
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(descriptor, "ab") as log:
        log.write(line + b"\n")
