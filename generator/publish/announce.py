"""What follows a switch, once the release is live (a build's publish, a promote; a rollback's without
webhooks): the log's new checkpoint sent to the witnesses, and the release's webhooks queued and delivered
in the background. Neither fails the switch: a witness that does not cosign is asked again by `riskapi log
cosign`, and an undelivered event is sent again by `riskapi notify`."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..history.witnesses import Cosigned, cosign
from ..serve.webhooks import notify_in_background, queue_events, read_subscribers


@dataclass(frozen=True)
class Announcement:
    """How the witnesses answered, and the release's webhook events left to deliver and who delivers them."""

    cosigned: list[Cosigned] = field(default_factory=list)
    release: str | None = None
    queued: int = 0
    sender: int | None = None  # the background process that delivers them


def announce(site_dir: Path, keys_file: Path | None, release: str | None) -> Announcement:
    """Tell the witnesses of the log's newest checkpoint and, with the keys file whose subscribers to tell,
    queue `release`'s webhooks (None: the current release) and start their delivery."""
    cosigned = cosign(site_dir)
    if keys_file is None or not read_subscribers(keys_file):
        return Announcement(cosigned, release)
    release, _, rows = queue_events(site_dir, keys_file, release)
    waiting = sum(not row.delivered for row in rows.values())
    if not waiting:
        return Announcement(cosigned, release)
    return Announcement(cosigned, release, waiting, notify_in_background(site_dir, keys_file, release))
