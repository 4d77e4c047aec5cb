"""Child processes that never outlive the riskapi process that started them (Linux prctl)."""
from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from pathlib import Path

PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent ends


def end_with_parent(signal_number: int = signal.SIGKILL) -> None:
    """In a child, first thing: ask Linux to send `signal_number` when the parent ends, however it ends.

    Kept across exec (nginx), so a killed `riskapi serve` or build never leaves its children running."""
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal_number)
    if os.getppid() != parent:  # the parent ended before the request took hold
        os.kill(os.getpid(), signal_number)


def stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the process's name (from the state letter on); None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()  # the name may hold spaces
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def process_state(pid: int) -> tuple[str, int] | None:
    """(state letter, parent pid) of a running process from /proc; None once it is gone."""
    fields = stat_fields(pid)
    return None if fields is None else (fields[0], int(fields[1]))


def children(pid: int) -> set[int]:
    """Live child processes of `pid` (nginx's workers), read from /proc."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            state = process_state(int(entry.name))
            if state is not None and state[1] == pid and state[0] != "Z":
                found.add(int(entry.name))
    return found
