"""Signed webhooks: each subscriber is POSTed one `release.published` event per release, signed as the
Standard Webhooks specification says (webhook-id, webhook-timestamp, webhook-signature: HMAC-SHA256
with the subscriber's whsec_ secret), with the movers its key may see — read off the change document
of its audience, so a custom model's movers reach only subscribers granted it.

Subscribers live in subscribers.csv beside the keys file (0600: it holds the secrets); every delivery
is a JSON line of deliveries.log beside it (status and attempts, never a secret). The events are a
durable outbox in the site's catalogue: one row per (release, subscriber) with its webhook-id, which
every retry and every later `notify` reuses, until it is delivered; never sent again after. An attempt
is retried on a 5xx, a 429, a timeout or a refused connection, with a bounded backoff; another 4xx and
a redirect (never followed) end the run's attempts. A URL is checked when added and again before each
attempt, and the address connected to is the one checked."""
from __future__ import annotations

import base64
import concurrent.futures
import contextlib
import csv
import hashlib
import hmac
import http.client
import io
import ipaddress
import os
import secrets
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import orjson

from ..building.render.release_info import release_site_url
from ..contract import locations, routes
from ..contract.encodings import identity
from ..contract.serving import HEADER_NAMES, MEDIA_TYPES
from ..errors import RiskApiError
from ..history.catalogue import Catalogue, outbox
from ..history.catalogue.outbox import Outgoing
from ..history.layout import read_release_info
from ..history.site import RELEASES, current_release
from ..system.files import write_atomic
from .keys import keys_lock, read_keys, served_audiences

SUBSCRIBERS, DELIVERIES = "subscribers.csv", "deliveries.log"
HEADER = ["user", "url", "secret", "network"]
PRIVATE, PUBLIC = "private", "public"  # where a subscriber's address may be: the operator allows private ones
PREFIX = "whsec_"
EVENT = "release.published"
RETRY_DELAYS = (1.0, 2.0, 4.0)  # seconds before the 2nd, 3rd and 4th attempt: at most 4 attempts
TIMEOUT = 10.0  # seconds an attempt may take in all: connect, send and read
RUN_DEADLINE = 120.0  # seconds a notify may take in all; what it did not reach waits for the next one
NOTIFY_OUTPUT = "notify.log"  # beside the keys file: what a notify run in the background said
PARALLEL = 8  # subscribers delivered to at once: a slow one never holds up the others


class WebhookError(RiskApiError):
    pass


@dataclass(frozen=True)
class Subscriber:
    user: str
    url: str
    secret: str
    network: str = PUBLIC

    def __repr__(self) -> str:  # never the secret, in a log or a traceback
        return f"Subscriber({self.user!r}, {self.url!r})"


@dataclass(frozen=True)
class Delivery:
    subscriber: Subscriber
    message: str  # the webhook-id: the event's for this subscriber, the same in every attempt and run
    status: int | None  # the last answer's status; None: none came
    attempts: int
    error: str = ""
    earlier: bool = False  # delivered by an earlier run: not sent again

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
    """Return the subscribers of subscribers.csv (a file written before the network column: every one public)."""
    path = subscribers_file(keys_file)
    if not path.is_file():
        return []
    rows = list(csv.reader(io.StringIO(path.read_text())))
    return [Subscriber(row[0], row[1], row[2], PRIVATE if row[3:] == [PRIVATE] else PUBLIC)
            for row in rows[1:] if len(row) in (3, 4)]


def _write(keys_file: Path, subscribers: list[Subscriber]) -> None:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows((s.user, s.url, s.secret, s.network) for s in subscribers)
    write_atomic(subscribers_file(keys_file), text.getvalue().encode(), mode=0o600)


def add_subscriber(keys_file: Path, user: str, url: str, secret: str | None = None,
                   allow_private: bool = False) -> Subscriber:
    """Subscribe a user of the keys file (its key's grants decide what it is told) at an http(s) URL that
    check_url accepts and whose host resolves to public addresses only (`allow_private`: loopback and
    private ones too, for receivers on the operator's own network)."""
    parsed = check_url(url)
    secret = secret or new_secret()
    _secret_bytes(secret)
    users = {identity(k.user): k.user for k in read_keys(keys_file)}
    if identity(user) not in users:
        raise WebhookError(f"no user {user!r} in {keys_file}: a subscriber is told what its key may see")
    addresses(parsed, allow_private)
    with keys_lock(subscribers_file(keys_file)):
        subscribers = [s for s in read_subscribers(keys_file)
                       if not (identity(s.user) == identity(user) and s.url == url)]
        added = Subscriber(users[identity(user)], url, secret, PRIVATE if allow_private else PUBLIC)
        _write(keys_file, subscribers + [added])
    return added


def check_url(url: str) -> urllib.parse.SplitResult:
    """Return a subscriber's URL as it may be: http or https, a host, a port in 1-65535 (or none), no user or
    password, only printable ASCII (anything else percent-encoded), no fragment; a WebhookError otherwise."""
    bad = next((c for c in url if not "!" <= c <= "~"), None)
    if bad is not None:
        raise WebhookError(f"{url!r}: a subscriber's URL holds {bad!r}; percent-encode spaces, control and "
                           "non-ASCII characters")
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise WebhookError(f"{url!r}: a subscriber's URL is http:// or https:// with a host")
    if parsed.username is not None or parsed.password is not None:
        raise WebhookError(f"{parsed.scheme}://{parsed.hostname}…: a subscriber's URL holds no user or password "
                           "(the signature proves who sends; the receiver checks it)")
    try:
        port = parsed.port
    except ValueError:
        port = 0
    if port == 0 or (port is None and parsed.netloc.rstrip("]").endswith(":")):
        raise WebhookError(f"{url!r}: a subscriber's port is a number from 1 to 65535")
    if parsed.fragment or "," in url:
        raise WebhookError(f"{url!r}: a subscriber's URL has no fragment (#) and no comma")
    return parsed


def addresses(parsed: urllib.parse.SplitResult, allow_private: bool) -> list[tuple]:
    """Return where a subscriber's host resolves to, every address checked: loopback, private, link-local,
    multicast, reserved and unspecified ones are refused unless `allow_private` (the operator's word)."""
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        found = socket.getaddrinfo(parsed.hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise WebhookError(f"{parsed.hostname}: cannot resolve the subscriber's host ({error})") from None
    for *_, address in found:
        ip = ipaddress.ip_address(str(address[0]).split("%")[0])
        if not allow_private and not ip.is_global:
            raise WebhookError(f"{parsed.hostname} resolves to {ip}, a loopback, private, link-local or reserved "
                               "address: refused (subscribers add --allow-private-network, for a receiver on "
                               "your own network)")
    return found


def remove_subscriber(keys_file: Path, user: str, url: str | None = None) -> int:
    with keys_lock(subscribers_file(keys_file)):
        subscribers = read_subscribers(keys_file)
        kept = [s for s in subscribers if not (identity(s.user) == identity(user) and url in (None, s.url))]
        _write(keys_file, kept)
    return len(subscribers) - len(kept)


def signature(secret: str, message: str, timestamp: int, body: bytes) -> str:
    """Sign as Standard Webhooks does: v1, base64 of HMAC-SHA256 over `id.timestamp.body` with the secret's bytes."""
    signed = hmac.new(_secret_bytes(secret), f"{message}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(signed).decode()


def event(site: Path, release: str, audience: str) -> dict:
    """Return the release.published event a subscriber of this audience is sent: the release, its links, and
    the movers of the models its key may see (its audience's change document)."""
    folder = site / RELEASES / release
    changes = orjson.loads((folder / locations.release_changes(audience).file).read_bytes())
    site_url = release_site_url(folder) or routes.DEFAULT_SITE_URL
    movers = [{"code": m["code"], "classChanges": m["classChanges"], "ratingChanges": m["ratingChanges"]}
              for m in changes["models"] if m["classChanges"] or m["ratingChanges"]]
    return {"type": EVENT, "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "data": {"release": release, "previous": changes["previous"],
                     "links": {"release": site_url + routes.url_for("release", release),
                               "changes": site_url + routes.url_for("changes", release),
                               "page": site_url + routes.url_for("docs-page", page="changes")},
                     "movers": movers}}


class _CheckedConnection(http.client.HTTPConnection):
    """An HTTP connection to an address resolved and checked before (addresses): never the name looked
    up again between the check and the connection (no DNS rebinding)."""

    def __init__(self, parsed: urllib.parse.SplitResult, address: tuple, timeout: float):
        super().__init__(parsed.hostname or "", parsed.port or (443 if parsed.scheme == "https" else 80),
                         timeout=timeout)
        self._address, self._tls = address, parsed.scheme == "https"

    def connect(self) -> None:
        family, _, _, _, sockaddr = self._address
        raw = socket.socket(family, socket.SOCK_STREAM)
        raw.settimeout(self.timeout)
        try:
            raw.connect(sockaddr)
            self.sock = ssl.create_default_context().wrap_socket(raw, server_hostname=self.host) if self._tls else raw
        except BaseException:
            raw.close()
            raise


def _attempt(subscriber: Subscriber, message: str, body: bytes, timeout: float) -> tuple[int | None, str, bool]:
    """Send one POST, within `timeout` seconds in all (a receiver that trickles its answer is cut off then):
    (status, error, whether to try again). A redirect is not followed: a failed attempt, final."""
    try:
        parsed = check_url(subscriber.url)
        address = addresses(parsed, subscriber.network == PRIVATE)[0]
    except WebhookError as refused:
        return None, refused.format_message(), False
    stamp = int(time.time())
    connection = _CheckedConnection(parsed, address, timeout)
    late = threading.Event()

    def cut_off() -> None:  # the one deadline of the attempt: a blocked connect, send or read ends now
        late.set()
        sock = connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):  # closed by the attempt itself as the deadline came
                sock.shutdown(socket.SHUT_RDWR)
    cut = threading.Timer(timeout, cut_off)
    cut.start()
    try:
        path = (parsed.path or "/") + (f"?{parsed.query}" if parsed.query else "")
        connection.request("POST", path, body=body, headers={
            HEADER_NAMES["type"]: MEDIA_TYPES["json"], "User-Agent": "country-risk-api-webhooks",
            "webhook-id": message, "webhook-timestamp": str(stamp),
            "webhook-signature": signature(subscriber.secret, message, stamp, body)})
        answer = connection.getresponse()
        answer.read(64 * 1024)
        status = answer.status
    except (OSError, http.client.HTTPException) as failed:
        # the deadline, whichever came first: the attempt's cut-off or the socket's own timeout
        deadline = late.is_set() or isinstance(failed, TimeoutError)
        said = f"no answer within {timeout:g} s" if deadline else (str(failed) or type(failed).__name__)
        return None, said, True
    finally:
        cut.cancel()
        connection.close()
    if 300 <= status < 400:
        target = answer.getheader(HEADER_NAMES["location"])
        return status, f"HTTP {status}: a redirect to {target!r}, not followed", False
    if status >= 400:
        return status, f"HTTP {status}", status >= 500 or status == 429
    return status, "", False


def deliver(subscriber: Subscriber, message: str, body: bytes, delays: Sequence[float] = RETRY_DELAYS,
            timeout: float = TIMEOUT, deadline: float | None = None) -> Delivery:
    """POST one event, signed, retrying what may pass later (a 5xx, a 429, no answer): bounded by
    len(delays) + 1 attempts and by `deadline` (time.monotonic())."""
    status, error, attempt = None, "", 0
    for attempt in range(1, len(delays) + 2):
        status, error, again = _attempt(subscriber, message, body, timeout)
        if not again or attempt > len(delays):
            break
        if deadline is not None and time.monotonic() + delays[attempt - 1] + timeout > deadline:
            error += "; the run's time was up (riskapi notify tries again)"
            break
        time.sleep(delays[attempt - 1])
    return Delivery(subscriber, message, status, attempt, error)


def queue_events(site: Path, keys_file: Path, release: str | None = None
                 ) -> tuple[str, list[Subscriber], dict[tuple[str, str], Outgoing]]:
    """Return the event of `release` (default: the current one) in the outbox for each subscriber its audiences
    serve (outbox.queue: made once); the release, those subscribers and their rows. No network: what
    build and promote do before they return."""
    release = release or current_release(site)
    if release is None or not (site / RELEASES / release).is_dir():
        raise WebhookError(f"no release {release!r} in {site}")
    keys = read_keys(keys_file)
    served = {identity(user): audience for user, (_, audience) in
              served_audiences(keys, *read_release_info(site / RELEASES / release)).items()}
    subscribers = [s for s in read_subscribers(keys_file) if identity(s.user) in served]  # revoked: told nothing
    # one event per audience (its change document read once), whatever the number of its subscribers
    bodies = {audience: orjson.dumps(event(site, release, audience))
              for audience in {served[identity(s.user)] for s in subscribers}}
    with Catalogue.open(site) as catalogue:
        rows = outbox.queue(catalogue, release, [(s.user, s.url, f"msg_{uuid.uuid4().hex}",
                                                  bodies[served[identity(s.user)]]) for s in subscribers])
    return release, subscribers, rows


def notify(site: Path, keys_file: Path, release: str | None = None, delays: Sequence[float] = RETRY_DELAYS,
           timeout: float = TIMEOUT, run_deadline: float = RUN_DEADLINE) -> list[Delivery]:
    """Send every subscriber the event of `release` (default: the current one) that it has not been
    delivered yet (queue_events), and log each delivery."""
    release, subscribers, rows = queue_events(site, keys_file, release)
    with Catalogue.open(site) as catalogue:
        deadline = time.monotonic() + run_deadline
        deliveries, pending = [], {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=PARALLEL) as pool:
            for subscriber in subscribers:
                row = rows[(subscriber.user, subscriber.url)]
                if row.delivered:
                    deliveries.append(Delivery(subscriber, row.message, row.status, 0, earlier=True))
                    continue
                pending[pool.submit(deliver, subscriber, row.message, row.body, delays, timeout, deadline)] = subscriber
            for future in concurrent.futures.as_completed(pending):
                done = future.result()
                outbox.attempted(catalogue, release, done.subscriber.user, done.subscriber.url, done.attempts,
                                 done.status, done.error, done.delivered)
                deliveries.append(done)
                _log(keys_file, release, done)
    order = {(s.user, s.url): n for n, s in enumerate(subscribers)}
    return sorted(deliveries, key=lambda d: order[(d.subscriber.user, d.subscriber.url)])


def notify_in_background(site: Path, keys_file: Path, release: str) -> int:
    """Start `riskapi notify --release RELEASE` on its own (its own session: a Ctrl-C of the build does not
    stop it), bounded by its retries and RUN_DEADLINE; its deliveries in the log beside the keys file, and
    anything it says in NOTIFY_OUTPUT there. Its process id."""
    output = keys_file.with_name(NOTIFY_OUTPUT)
    descriptor = os.open(output, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "generator.cli", "notify", "--release", release, "--site", str(site),
             "--keys", str(keys_file)], stdin=subprocess.DEVNULL, stdout=descriptor, stderr=descriptor,
            start_new_session=True)
    finally:
        os.close(descriptor)
    return process.pid


def _log(keys_file: Path, release: str, done: Delivery) -> None:
    line = orjson.dumps({"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "event": EVENT, "release": release,
                         "user": done.subscriber.user, "url": done.subscriber.url, "message": done.message,
                         "status": done.status, "attempts": done.attempts, "delivered": done.delivered,
                         "error": done.error})
    path = keys_file.with_name(DELIVERIES)
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(descriptor, "ab") as log:
        log.write(line + b"\n")
