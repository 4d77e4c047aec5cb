"""Writing files so that a reader never sees half of one, and a failure names the file."""
from __future__ import annotations

import os
from pathlib import Path


def write_file(path: Path, data: bytes | list[bytes], stamp: int | None = None) -> None:
    """Write bytes, or consecutive parts of them (and set the mtime to `stamp`); an OSError names the
    path, which write() alone does not."""
    try:
        with open(path, "wb") as out:
            if isinstance(data, bytes):
                out.write(data)
            else:
                out.writelines(data)
        if stamp is not None:
            os.utime(path, (stamp, stamp))
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None


def write_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace a file in one step: write `path.new` with `mode`, then rename it over `path`.

    NGINX_NOTES.md: a reader (nginx, a reload) sees the old file or the new one, never a mix."""
    temporary = path.with_name(path.name + ".new")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, mode)  # O_CREAT's mode applies only to a new file
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(temporary)) from None
    os.replace(temporary, path)


def link_atomic(link: Path, target: Path | str) -> None:
    """Point a symlink at `target` in one step: a new link renamed over the old one."""
    temporary = link.with_name(f".{link.name}.tmp-{os.getpid()}")
    if temporary.is_symlink() or temporary.exists():
        temporary.unlink()
    os.symlink(target, temporary)
    os.replace(temporary, link)
