"""What a running serve watches of the release catalogue, cheaply (runtime.py polls it twice a second)."""
from __future__ import annotations

import hashlib
import time
from pathlib import Path

from ..errors import CatalogueError
from ..history.catalogue import CATALOGUE, catalogue_path, read_history
from ..history.site import RELEASES, current_release, releases
from ..system.files import file_identity


class CatalogueWatch:
    """The catalogue's view of a site's releases as a digest (an unreadable catalogue: its error), so a serve
    sees every change of it: a switch, a staging, a prune (its folders too), a repair. Read whole only when
    the files say something may have changed (their inode, size and mtime, the releases folder's, where
    `current` points), and at least every FULL_READ_SECONDS: a poll twice a second costs a few stat calls,
    not a read of every switch (BENCHMARKS.md, "Release catalogue")."""

    FULL_READ_SECONDS = 5.0

    def __init__(self, site: Path):
        self.site = site
        self._stamp: tuple | None = None
        self._digest = ""
        self._read_at = 0.0

    def _files(self) -> tuple:
        stamps: list[bytes | None] = []
        for path in (catalogue_path(self.site), catalogue_path(self.site).with_name(CATALOGUE + "-wal"),
                     self.site / RELEASES):
            try:
                stamps.append(file_identity(path))
            except FileNotFoundError:
                stamps.append(None)
        return (*stamps, current_release(self.site))

    def forget(self) -> None:
        """Read the catalogue whole at the next look, whatever its files say."""
        self._stamp = None

    def state(self) -> str:
        stamp = self._files()
        if stamp == self._stamp and time.monotonic() - self._read_at < self.FULL_READ_SECONDS:
            return self._digest
        try:
            history = read_history(self.site)
            # the folders on disk but the pruned ones: deleting those (leases.sweep) changes nothing served,
            # and is no reason for a reload; a checkpoint signed anew (riskapi log init, log sign) is served too
            on_disk = [r for r in releases(self.site) if r not in history.removed]
            facts = (history.periods, sorted(history.built.items()), sorted(history.removed), on_disk,
                     history.checkpoint)
            self._digest = hashlib.sha256(repr(facts).encode()).hexdigest()
        except CatalogueError as error:
            self._digest = f"unreadable: {error.format_message()}"
        self._stamp, self._read_at = stamp, time.monotonic()
        return self._digest
