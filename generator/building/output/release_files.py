"""The files added to a release's folder: each written with its compressed twins (by the build's writing
process, in batches), or hard-linked from the previous release where its bytes did not change; their
manifest entries; and the previous release's copy of a file, where it is intact, for a build to carry over."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Callable

from ...errors import PublishError
from ...system.files import Part, WholeFile, naming, write_joined
from .twins import COMPRESSED_FORMS, GZIP, TWIN_SUFFIXES, twin_of_written, write_joined_gzip, write_with_twins

WRITE_BATCH_BYTES = 1 << 20  # documents go to the worker in batches of about this size


class ReleaseFiles:
    """Files added to a release's hidden folder: written with their twins, or hard-linked from the
    previous release where their bytes did not change; their manifest entries. Written in the process
    it runs in: a build's worker process writes its models' files with one (`ReleaseWriter.part`)."""

    def __init__(self, folder: Path, stamp: int, previous_dir: Path | None, previous_files: dict[str, dict]):
        self.folder, self.stamp = folder, stamp
        self._previous_dir, self._previous_files = previous_dir, previous_files
        self.files: dict[str, dict] = {}
        self.linked = 0
        self.bytes = 0
        self._made_dirs: set[Path] = set()
        self._batch: list[tuple[str, bytes]] = []
        self._batch_bytes = 0

    def write(self, relative: str, data: bytes) -> None:
        """Add one file; a second write to the same path is a bug in the routes, so it raises."""
        if relative in self.files:
            raise PublishError(f"two documents were written to {relative}")
        digest = hashlib.sha256(data).hexdigest()
        self.files[relative] = {"size": len(data), "sha256": digest}
        self.bytes += len(data)
        target = self.folder / relative
        if target.parent not in self._made_dirs:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._made_dirs.add(target.parent)
        if self._link_unchanged(relative, digest, len(data), target):
            return
        self._batch.append((relative, data))
        self._batch_bytes += len(data)
        if self._batch_bytes >= WRITE_BATCH_BYTES:
            self._submit()

    def write_parts(self, relative: str, parts: list[Part], gzip_parts: list[Part] | None = None,
                    whole: WholeFile | None = None) -> None:
        """Add one large file given as consecutive parts, bytes or files (a bulk export: its models'
        rows): copied from here a block at a time, so the file is never whole in memory nor sent to
        the worker, which makes its twins from the file. With `gzip_parts` (each part's `gzip_part`,
        in order) its gzip twin is joined from them here, not compressed again. With `whole`, a file
        that holds the whole file already (a model's export; `parts` is that file), it is moved into
        place, not copied."""
        if relative in self.files:
            raise PublishError(f"two documents were written to {relative}")
        target = self.folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if whole:
            digest, size, crc = whole.sha256, whole.size, whole.crc
        else:
            digest, size, crc = write_joined(target, parts, self.stamp)
        self.files[relative] = {"size": size, "sha256": digest}
        self.bytes += size
        before = self._previous_files.get(relative)
        unchanged = before is not None and before["sha256"] == digest and before["size"] == size
        if unchanged:
            target.unlink(missing_ok=True)  # the previous release's file, linked, keeps its mtime (nginx's ETag)
            if self._link_unchanged(relative, digest, size, target):
                if whole:
                    whole.path.unlink()
                return
        if whole:
            with naming(target):
                os.replace(whole.path, target)
                os.utime(target, (self.stamp, self.stamp))
        elif unchanged:  # not linked after all: written again
            write_joined(target, parts, self.stamp)
        suffixes = TWIN_SUFFIXES
        if gzip_parts is not None:
            self._adopt([(relative, write_joined_gzip(target, gzip_parts, crc, size, self.stamp))])
            suffixes = tuple(suffix for suffix in suffixes if suffix != GZIP)
        for suffix in suffixes:
            self._hand_over(twin_of_written, (relative, suffix))

    def _submit(self) -> None:
        if not self._batch:
            return
        self._hand_over(write_with_twins, self._batch)
        self._batch, self._batch_bytes = [], 0

    def _hand_over(self, work: Callable[..., Any], what: Any) -> None:
        """Run `work(folder, what, stamp)` (write files and their twins) and take its manifest entries."""
        self._adopt(work(self.folder, what, self.stamp))

    def _adopt(self, written: list[tuple[str, dict[str, dict]]]) -> None:
        for relative, entries in written:
            for suffix, entry in entries.items():
                self.files[relative + suffix] = entry

    def flush(self) -> None:
        """Write every file added so far."""
        self._submit()

    def earlier(self, relative: str) -> Path | None:
        """Return the previous release's file at `relative` where its bytes are those its manifest lists (a file
        edited by hand since is not one to copy from); None where there is none."""
        before = self._previous_files.get(relative)
        if not before or self._previous_dir is None:
            return None
        source = self._previous_dir / relative
        try:
            data = source.read_bytes()
        except OSError:
            return None
        if len(data) != before["size"] or hashlib.sha256(data).hexdigest() != before["sha256"]:
            return None
        return source

    def _link_unchanged(self, relative: str, digest: str, size: int, target: Path) -> bool:
        """Hard-link a file whose bytes did not change, so its mtime (and nginx's ETag) stays."""
        before = self._previous_files.get(relative)
        if not before or before["sha256"] != digest or before["size"] != size or self._previous_dir is None:
            return False
        source = self._previous_dir / relative
        twins = [(suffix, self._previous_files.get(relative + suffix)) for suffix, _ in COMPRESSED_FORMS]
        try:
            if os.stat(source).st_size != size:  # changed since its manifest was written (edited by hand)
                return False
            os.link(source, target)
            for suffix, entry in twins:
                if entry:
                    os.link(source.with_name(source.name + suffix), target.with_name(target.name + suffix))
                    self.files[relative + suffix] = entry
        except OSError:
            for stale in [target] + [target.with_name(target.name + suffix) for suffix, _ in COMPRESSED_FORMS]:
                stale.unlink(missing_ok=True)
            return False
        self.linked += 1
        return True
