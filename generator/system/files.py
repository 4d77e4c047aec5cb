"""Writing files so that a reader never sees half of one, and a failure names the file."""
from __future__ import annotations

import ctypes
import hashlib
import io
import os
import re
import shutil
import tempfile
import threading
import zlib
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

BLOCK = 1 << 20  # what a large file is copied or compressed by


@contextmanager
def naming(path: Path) -> Iterator[None]:
    """Name `path` in an OSError inside that names no file, which write() and close() alone do not, nor Arrow's
    writers (a full disk shows up there); one that names its file already keeps it."""
    try:
        yield
    except OSError as error:
        if error.filename is not None:
            raise
        number = error.errno
        if number is None:  # Arrow's says its errno in its text: "Error writing bytes … [errno 28] …"
            found = re.search(r"\[errno (\d+)\]", str(error))
            number = int(found[1]) if found else None
        # the system's words for its errno (Arrow's strerror wraps them in its own), as every other writer says
        raise OSError(number, os.strerror(number) if number else error.strerror or str(error), str(path)) from None


def write_file(path: Path, data: bytes, stamp: int | None = None) -> None:
    """Write bytes (and set the mtime to `stamp`), naming the path on failure."""
    with naming(path), open_unbuffered(path) as out:
        write_all(out, data)
        if stamp is not None:
            os.utime(out.fileno(), (stamp, stamp))


def open_unbuffered(path: Path) -> io.FileIO:
    """Return a file opened for writing without a buffer: a buffered open() also asks whether the file is a
    terminal and for its block size, and a build writes thousands of small files (its mtime is then
    best set on the open file, not looked up by path again)."""
    return open(path, "wb", buffering=0)


def write_all(out: io.FileIO, data: bytes) -> None:
    """Write all of `data` to a file open_unbuffered opened (a raw write may take a part of it)."""
    view = memoryview(data)
    while view:
        view = view[out.write(view):]


def sync_folder(folder: Path) -> None:
    """Put a folder's entries (names made, renamed or removed in it) on disk."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def sync_tree(folder: Path) -> None:
    """Put every file and folder under `folder` on disk before something names it: syncfs(2) of its
    file system, one call however many files (an fsync a file costs a disk flush each); os.sync()
    where syncfs is not there."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if _syncfs(descriptor) != 0:
            os.sync()
    finally:
        os.close(descriptor)


class Writeback:
    """Puts a folder's file system's written pages on disk while a build goes on writing (sync_tree every
    `every` seconds, in a thread: the call waits for the disk, not for Python), so the sync that a release
    waits for before it is named finds little left. Started once the build's processes have forked."""

    def __init__(self, folder: Path, every: float = 0.5):
        self.folder, self.every = folder, every
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None and not self._stop.is_set():
            thread = threading.Thread(target=self._run, name="writeback", daemon=True)
            try:
                thread.start()
            except RuntimeError:  # no thread to be had (a memory limit): the final sync does it all
                self._stop.set()
                return
            self._thread = thread

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            with suppress(OSError):  # the folder renamed or removed under it: the final sync says what fails
                sync_tree(self.folder)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def _syncfs(descriptor: int) -> int:
    try:
        return ctypes.CDLL(None, use_errno=True).syncfs(descriptor)
    except (OSError, AttributeError):
        return -1


def write_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace a file in one step: write `path.new` with `mode`, sync it, then rename it over `path`
    and sync the folder, so a power cut leaves the old file or the new one, never an empty one.

    A reader (nginx, a reload) sees the old file or the new one, never a mix."""
    temporary = path.with_name(path.name + ".new")
    with naming(temporary):
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)  # O_CREAT's mode applies only to a new file
    os.replace(temporary, path)
    sync_folder(path.parent)


def link_or_copy(source: Path, target: Path) -> None:
    """Make `target` the same bytes as `source`: a hard link where both are on one file system (the source
    replaced later by a rename keeps the linked bytes), else a copy made a block at a time."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
        os.chmod(target, 0o644)


def file_identity(path: Path) -> bytes:
    """Return what tells a file's bytes changed without reading them: device, inode, size and modification time
    (a file replaced by a rename has another inode; one written in place another size or time)."""
    status = os.stat(path)
    return f"{status.st_dev}:{status.st_ino}:{status.st_size}:{status.st_mtime_ns}".encode()


def link_atomic(link: Path, target: Path | str) -> None:
    """Point a symlink at `target` in one step: a new link renamed over the old one (synced)."""
    temporary = link.with_name(f".{link.name}.tmp-{os.getpid()}")
    if temporary.is_symlink() or temporary.exists():
        temporary.unlink()
    os.symlink(target, temporary)
    os.replace(temporary, link)
    sync_folder(link.parent)


def read_blocks(path: Path, offset: int = 0) -> Iterator[bytes]:
    """Yield a file's bytes from `offset` on, a block at a time."""
    with open(path, "rb") as source:
        source.seek(offset)
        while block := source.read(BLOCK):
            yield block


@contextmanager
def each_block(blocks: Iterable[bytes]) -> Iterator[Iterable[bytes]]:
    """Yield `blocks`, closed once the reader is done with them, or stops on an error: a generator of a file's
    blocks left suspended holds the file open (and a deleted file's disk space) as long as the error is."""
    try:
        yield blocks
    finally:
        close = getattr(blocks, "close", None)
        if close is not None:
            close()


def file_entry(path: Path) -> dict:
    """Return a file's size and SHA-256, as a release's manifest lists a file, read a block at a time (a panel
    file may be tens of MB)."""
    digest, size = hashlib.sha256(), 0
    for block in read_blocks(path):
        digest.update(block)
        size += len(block)
    return {"size": size, "sha256": digest.hexdigest()}


Part = bytes | Path | tuple[Path, int]  # bytes, a file, or a file from an offset on


@dataclass(frozen=True)
class WholeFile:
    """A file written whole (a model's export rows), with what write_joined would have returned of it."""

    path: Path
    sha256: str
    size: int
    crc: int


def write_joined(path: Path, parts: list[Part], stamp: int) -> tuple[str, int, int]:
    """Write parts one after another — bytes, or files (from an offset) copied a block at a time, so a
    large file is never whole in memory — and set the mtime; return the sha256, size and CRC-32 (a gzip
    trailer's) of what was written. An OSError names the path."""
    digest, size, crc = hashlib.sha256(), 0, 0
    with naming(path), open(path, "wb") as out:
        for part in parts:
            with each_block((part,) if isinstance(part, bytes) else read_blocks(*part) if isinstance(part, tuple)
                            else read_blocks(part)) as blocks:
                for block in blocks:
                    digest.update(block)
                    crc = zlib.crc32(block, crc)
                    size += len(block)
                    out.write(block)
    with naming(path):
        os.utime(path, (stamp, stamp))
    return digest.hexdigest(), size, crc


class NamedFile:
    """A file being written row by row whose errors name it, as write_file's do."""

    def __init__(self, path: Path, text: bool = False):
        self.path = path
        self._file: Any = open(path, "w", encoding="utf-8", newline="") if text else open(path, "wb")

    def write(self, data: bytes | str) -> None:
        try:  # once per row: a try costs nothing, a `with naming(...)` ~1 µs
            self._file.write(data)
        except OSError as error:
            raise OSError(error.errno, error.strerror, str(self.path)) from None

    def __enter__(self) -> "NamedFile":
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:  # already failing: close without hiding that error
            with suppress(OSError):
                self._file.close()
            return
        with naming(self.path):
            self._file.close()


RENAME_EXCHANGE = 2  # renameat2(2): swap two paths in one step


@contextmanager
def folder_replacing(target: Path, keep: tuple[str, ...] = ()) -> Iterator[Path]:
    """Yield a new folder beside `target` to fill; when the block ends without an error it replaces `target`
    in one step (replace_folder, which carries `keep` over), else it is removed and `target` stays as it
    was."""
    target.parent.mkdir(parents=True, exist_ok=True)
    new = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
    os.chmod(new, 0o755)
    try:
        yield new
        replace_folder(new, target, keep)
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise


def replace_folder(new: Path, target: Path, keep: tuple[str, ...] = ()) -> None:
    """Put a finished folder where `target` is, in one step: the two are swapped (renameat2 with
    RENAME_EXCHANGE), then the old one is removed, so a reader or a kill sees the old folder or the new
    one, whole. Where the file system cannot swap, the old folder is moved aside first (a kill between
    the two renames leaves it whole beside, as `.<name>.old-<pid>`). The entries named in `keep` that
    the old folder has and the new one does not (what its owner put there: `node_modules/`) are moved
    into the new one after the swap, before the old one is removed (a kill between leaves them in it)."""
    new, target = Path(new), Path(target)
    if not target.exists():
        os.rename(new, target)
        sync_folder(target.parent)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    swapped = False
    try:
        swapped = libc.renameat2(-100, bytes(new), -100, bytes(target), RENAME_EXCHANGE) == 0  # -100: AT_FDCWD
    except AttributeError:
        pass
    if swapped:
        old = new  # the names were swapped: the old folder is where the new one was
    else:
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.rename(target, old)
        os.rename(new, target)
    sync_folder(target.parent)
    for name in keep:
        if (old / name).exists() and not (target / name).exists():
            os.rename(old / name, target / name)
    shutil.rmtree(old, ignore_errors=True)
